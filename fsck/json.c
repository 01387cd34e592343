// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A small strict JSON reader for the one document fsck.xfskit consumes:
 * the report of `xfskit-repair -n --json` (doc/xfskit-repair.schema.json).
 * It parses the whole grammar (so a truncated or garbled report is an
 * error, never half-read), keeps the top-level members fsck needs and,
 * for each element of "problems", the string members that classify it.
 * Unknown members are skipped, as doc/json.md promises consumers may do.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "fsck.h"

struct jp {
	const char	*s;
	const char	*end;
	int		depth;
};

/* Deep nesting in a report means it is not ours: refuse it. */
#define JSON_MAX_DEPTH	32

static void
skip_ws(struct jp *p)
{
	while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' ||
				 *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

static int
expect(struct jp *p, char c)
{
	skip_ws(p);
	if (p->s >= p->end || *p->s != c)
		return -1;
	p->s++;
	return 0;
}

/*
 * A string literal into out (NUL-terminated, cut to outlen - 1 bytes;
 * out may be NULL to skip).  \uXXXX escapes above 0x7f become '?': the
 * values fsck compares are ASCII.
 */
static int
parse_string(struct jp *p, char *out, size_t outlen)
{
	size_t n = 0;

	skip_ws(p);
	if (p->s >= p->end || *p->s != '"')
		return -1;
	p->s++;
	while (p->s < p->end && *p->s != '"') {
		char c = *p->s++;

		if ((unsigned char)c < 0x20)
			return -1;
		if (c == '\\') {
			if (p->s >= p->end)
				return -1;
			c = *p->s++;
			switch (c) {
			case '"': case '\\': case '/':
				break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u': {
				unsigned int v = 0;
				int i;

				if (p->end - p->s < 4)
					return -1;
				for (i = 0; i < 4; i++) {
					if (!isxdigit((unsigned char)p->s[i]))
						return -1;
					v = v * 16 + (unsigned int)(isdigit(
						(unsigned char)p->s[i]) ?
						p->s[i] - '0' :
						(tolower((unsigned char)p->s[i])
						 - 'a' + 10));
				}
				p->s += 4;
				c = v < 0x80 ? (char)v : '?';
				break;
			}
			default:
				return -1;
			}
		}
		if (out && n + 1 < outlen)
			out[n++] = c;
	}
	if (p->s >= p->end)
		return -1;
	p->s++;
	if (out && outlen)
		out[n] = '\0';
	return 0;
}

static int
parse_number(struct jp *p, long long *out)
{
	const char *start;
	char buf[64];
	size_t len;

	skip_ws(p);
	start = p->s;
	if (p->s < p->end && *p->s == '-')
		p->s++;
	if (p->s >= p->end || !isdigit((unsigned char)*p->s))
		return -1;
	while (p->s < p->end && (isdigit((unsigned char)*p->s) ||
				 *p->s == '.' || *p->s == 'e' ||
				 *p->s == 'E' || *p->s == '+' ||
				 *p->s == '-'))
		p->s++;
	len = (size_t)(p->s - start);
	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, start, len);
	buf[len] = '\0';
	if (out)
		*out = strtoll(buf, NULL, 10);
	return 0;
}

static int parse_value(struct jp *p);

static int
parse_literal(struct jp *p, const char *word)
{
	size_t n = strlen(word);

	skip_ws(p);
	if ((size_t)(p->end - p->s) < n || memcmp(p->s, word, n))
		return -1;
	p->s += n;
	return 0;
}

/* Any object; members are skipped. */
static int
skip_object(struct jp *p)
{
	if (expect(p, '{'))
		return -1;
	skip_ws(p);
	if (p->s < p->end && *p->s == '}') {
		p->s++;
		return 0;
	}
	for (;;) {
		if (parse_string(p, NULL, 0) || expect(p, ':') ||
		    parse_value(p))
			return -1;
		skip_ws(p);
		if (p->s < p->end && *p->s == ',') {
			p->s++;
			continue;
		}
		return expect(p, '}');
	}
}

static int
skip_array(struct jp *p)
{
	if (expect(p, '['))
		return -1;
	skip_ws(p);
	if (p->s < p->end && *p->s == ']') {
		p->s++;
		return 0;
	}
	for (;;) {
		if (parse_value(p))
			return -1;
		skip_ws(p);
		if (p->s < p->end && *p->s == ',') {
			p->s++;
			continue;
		}
		return expect(p, ']');
	}
}

static int
parse_value(struct jp *p)
{
	int err;

	skip_ws(p);
	if (p->s >= p->end || ++p->depth > JSON_MAX_DEPTH)
		return -1;
	switch (*p->s) {
	case '{':
		err = skip_object(p);
		break;
	case '[':
		err = skip_array(p);
		break;
	case '"':
		err = parse_string(p, NULL, 0);
		break;
	case 't':
		err = parse_literal(p, "true");
		break;
	case 'f':
		err = parse_literal(p, "false");
		break;
	case 'n':
		err = parse_literal(p, "null");
		break;
	default:
		err = parse_number(p, NULL);
		break;
	}
	p->depth--;
	return err;
}

/* One element of "problems": keep its classifying strings. */
static int
parse_problem(struct jp *p, struct fsck_finding *fd)
{
	char key[64];

	memset(fd, 0, sizeof(*fd));
	if (expect(p, '{'))
		return -1;
	skip_ws(p);
	if (p->s < p->end && *p->s == '}') {
		p->s++;
		return 0;
	}
	for (;;) {
		char *dst = NULL;
		size_t len = 0;
		unsigned int flag = 0;

		if (parse_string(p, key, sizeof(key)) || expect(p, ':'))
			return -1;
		if (!strcmp(key, "safe_to_preen"))
			flag = FSCK_FLAG_PREEN;
		else if (!strcmp(key, "destructive"))
			flag = FSCK_FLAG_DESTRUCTIVE;
		else if (!strcmp(key, "fixable"))
			flag = FSCK_FLAG_FIXABLE;
		if (flag) {
			skip_ws(p);
			if (!parse_literal(p, "true"))
				fd->flags |= flag;
			else if (parse_literal(p, "false"))
				return -1;	/* a flag is a boolean */
			goto next;
		}
		if (!strcmp(key, "problem")) {
			dst = fd->problem;
			len = sizeof(fd->problem);
		} else if (!strcmp(key, "code")) {
			dst = fd->code;
			len = sizeof(fd->code);
		} else if (!strcmp(key, "structure")) {
			dst = fd->structure;
			len = sizeof(fd->structure);
		} else if (!strcmp(key, "message")) {
			dst = fd->message;
			len = sizeof(fd->message);
		}
		skip_ws(p);
		if (dst && p->s < p->end && *p->s == '"') {
			if (parse_string(p, dst, len))
				return -1;
		} else if (parse_value(p)) {
			return -1;
		}
next:
		skip_ws(p);
		if (p->s < p->end && *p->s == ',') {
			p->s++;
			continue;
		}
		return expect(p, '}');
	}
}

static int
parse_problems(struct jp *p, struct fsck_report *r)
{
	if (expect(p, '['))
		return -1;
	skip_ws(p);
	if (p->s < p->end && *p->s == ']') {
		p->s++;
		return 0;
	}
	for (;;) {
		struct fsck_finding fd;

		if (parse_problem(p, &fd))
			return -1;
		if (r->nfindings < FSCK_MAX_FINDINGS)
			r->findings[r->nfindings] = fd;
		r->nfindings++;
		skip_ws(p);
		if (p->s < p->end && *p->s == ',') {
			p->s++;
			continue;
		}
		return expect(p, ']');
	}
}

/*
 * Parse a whole report.  Rules: (1) the document is one object followed
 * only by white space; (2) "problems" is an array of objects; (3) the
 * required members "tool", "problems" and "exit_status" are present.
 * Returns 0 or -1 (not a report we understand).
 */
int
fsck_parse_report(const char *text, size_t len, struct fsck_report *r)
{
	struct jp p = { .s = text, .end = text + len };
	int have_tool = 0, have_problems = 0, have_status = 0;
	char key[64];

	memset(r, 0, sizeof(*r));
	r->problem_count = -1;
	if (expect(&p, '{'))
		return -1;
	skip_ws(&p);
	if (p.s < p.end && *p.s == '}')
		return -1;
	for (;;) {
		long long v;

		if (parse_string(&p, key, sizeof(key)) || expect(&p, ':'))
			return -1;
		skip_ws(&p);
		if (!strcmp(key, "problems")) {
			if (parse_problems(&p, r))
				return -1;
			have_problems = 1;
		} else if (!strcmp(key, "tool")) {
			if (parse_string(&p, key, sizeof(key)))
				return -1;
			have_tool = !strcmp(key, "xfskit-repair");
		} else if (!strcmp(key, "exit_status")) {
			if (parse_number(&p, &v))
				return -1;
			r->exit_status = (int)v;
			have_status = 1;
		} else if (!strcmp(key, "problem_count")) {
			if (parse_number(&p, &v))
				return -1;
			r->problem_count = v;
		} else if (!strcmp(key, "error")) {
			if (parse_string(&p, r->error, sizeof(r->error)))
				return -1;
			r->has_error = 1;
		} else if (parse_value(&p)) {
			return -1;
		}
		skip_ws(&p);
		if (p.s < p.end && *p.s == ',') {
			p.s++;
			continue;
		}
		if (expect(&p, '}'))
			return -1;
		break;
	}
	skip_ws(&p);
	if (p.s != p.end)
		return -1;
	return have_tool && have_problems && have_status ? 0 : -1;
}
