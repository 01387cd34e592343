// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Output.  In text mode lines go to stdout as they come ("name = value"
 * for fields), and so do the errors of commands, unprefixed, as xfs_db
 * prints them (scripts read them there); diagnostics that are not a
 * command's error (verifier verdicts) go to stderr.  With -j each
 * command produces one
 * JSON object on one line: the command, whether it succeeded, its
 * fields as an object and any other output lines and errors as arrays
 * (described by doc/xfskit-db.schema.json and doc/json.md).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

static void
jappend(char **buf, size_t *len, const char *s)
{
	size_t n = strlen(s);
	char *nb = realloc(*buf, *len + n + 1);

	if (!nb)
		return;
	memcpy(nb + *len, s, n + 1);
	*buf = nb;
	*len += n;
}

/* Append s as a JSON string literal. */
static void
jstring(char **buf, size_t *len, const char *s)
{
	char esc[8];

	jappend(buf, len, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			esc[0] = '\\';
			esc[1] = (char)ch;
			esc[2] = '\0';
		} else if (ch < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", ch);
		} else {
			esc[0] = (char)ch;
			esc[1] = '\0';
		}
		jappend(buf, len, esc);
	}
	jappend(buf, len, "\"");
}

static void
jline(struct db_ctx *c, const char *kind, const char *text)
{
	jappend(&c->jlines, &c->jllen, c->jllen ? "," : "");
	jappend(&c->jlines, &c->jllen, "{\"");
	jappend(&c->jlines, &c->jllen, kind);
	jappend(&c->jlines, &c->jllen, "\":");
	jstring(&c->jlines, &c->jllen, text);
	jappend(&c->jlines, &c->jllen, "}");
}

void
db_out(struct db_ctx *c, const char *fmt, ...)
{
	char line[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (c->json)
		jline(c, "line", line);
	else
		fprintf(c->out, "%s\n", line);
}

/*
 * A message on stdout (errors) or stderr (after flushing stdout so the
 * two stay in order), or, with -j, a JSON line of the given kind.
 */
static void
emit(struct db_ctx *c, const char *kind, FILE *to, const char *fmt,
     va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (c->json) {
		jline(c, kind, line);
		return;
	}
	fflush(c->out);
	fprintf(to, "%s\n", line);
}

void
db_err(struct db_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(c, "error", c->out, fmt, ap);
	va_end(ap);
}

/* A diagnostic that is not an error of the command: stderr, no prefix. */
void
db_note(struct db_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(c, "verdict", stderr, fmt, ap);
	va_end(ap);
}

void
db_kv(struct db_ctx *c, const char *name, const char *value)
{
	if (!c->json) {
		fprintf(c->out, "%s = %s\n", name, value);
		return;
	}
	jappend(&c->jfields, &c->jflen, c->jflen ? "," : "");
	jstring(&c->jfields, &c->jflen, name);
	jappend(&c->jfields, &c->jflen, ":");
	jstring(&c->jfields, &c->jflen, value);
}

void
db_json_begin(struct db_ctx *c)
{
	free(c->jfields);
	free(c->jlines);
	c->jfields = c->jlines = NULL;
	c->jflen = c->jllen = 0;
}

void
db_json_end(struct db_ctx *c, const char *line, int status)
{
	char *s = NULL;
	size_t n = 0;

	if (!c->json)
		return;
	/* doc/xfskit-db.schema.json; bump only on incompatible changes. */
	jappend(&s, &n, "{\"schema_version\":1,\"command\":");
	jstring(&s, &n, line);
	jappend(&s, &n, status ? ",\"ok\":false" : ",\"ok\":true");
	jappend(&s, &n, ",\"fields\":{");
	jappend(&s, &n, c->jfields ? c->jfields : "");
	jappend(&s, &n, "},\"output\":[");
	jappend(&s, &n, c->jlines ? c->jlines : "");
	jappend(&s, &n, "]}");
	if (s)
		fprintf(c->out, "%s\n", s);
	free(s);
	db_json_begin(c);
}
