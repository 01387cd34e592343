// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Editing: write and fuzz.  Both change one field of a copy of the
 * current object and commit it in one of three modes, as xfs_db does:
 *  1. plain: the libfs verifier must accept the result, then the CRC is
 *     recomputed and the block written (a rejected edit writes nothing);
 *  2. -d: no verification, the CRC is still recomputed;
 *  3. -c: no verification and the CRC is left as it is (wrong on
 *     purpose, unless the edit did not change the bytes).
 * Inodes are written back inside their cluster buffer with the inode's
 * own CRC.  The cache entry is dropped afterwards, so the next read sees
 * the device.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xfskit/crc32c.h>

#include "db.h"

enum commit_mode { COMMIT_VERIFY, COMMIT_NOVERIFY, COMMIT_BADCRC };

static int
commit(struct db_ctx *c, const uint8_t *nbuf, enum commit_mode mode)
{
	struct xk_mount *mp = c->mp;
	const struct db_loc *l = &c->cur;
	const struct xk_buf_ops *ops;
	uint32_t rlen = l->type->is_inode ? l->ilen : l->len;
	uint32_t off = l->type->is_inode ? l->ioff : 0;
	struct xk_buf *bp;
	uint8_t *old;
	int err;

	ops = l->type->ops ? l->type->ops(nbuf, l->len) : NULL;
	err = xk_buf_read_ctx(mp, l->daddr, rlen, NULL, l->agno, 0,
			      XK_READ_NOVERIFY, &bp);
	if (err) {
		db_err(c, "cannot read the block back: %s", xk_strerror(err));
		return err;
	}
	old = malloc(rlen);
	if (!old) {
		xk_buf_release(bp);
		return -ENOMEM;
	}
	memcpy(old, bp->data, rlen);
	memcpy(bp->data + off, nbuf, l->len);
	/* Per-record CRCs (dquots): every record of the block, as xfs_db. */
	if (l->type->crc_unit && mode != COMMIT_BADCRC)
		for (uint32_t r = 0; (r + 1) * l->type->crc_unit <= l->len; r++)
			xk_cksum_update(bp->data + r * l->type->crc_unit,
					l->type->crc_unit,
					l->type->crc_unit_off);
	if (l->type->is_inode) {
		struct xk_dinode *dip = (struct xk_dinode *)(bp->data + off);
		struct xk_fail f;

		if (mode != COMMIT_BADCRC)
			xk_cksum_update(dip, l->len, XK_DINODE_CRC_OFF);
		memset(&f, 0, sizeof(f));
		f.structure = "inode";
		f.daddr = l->daddr;
		f.agno = -1;
		f.ino = l->ino;
		/*
		 * As xfs_db: a plain write is refused only where the kernel
		 * would refuse to write the inode buffer back; other damage
		 * is written, with the inode verifier's verdict as a warning.
		 */
		if (mode == COMMIT_VERIFY &&
		    (err = xk_dinode_write_check(mp, l->ino, dip, &f)) != 0) {
			char line[400];

			xk_fail_format(&f, line, sizeof(line));
			db_err(c, "write refused, the verifier rejects the "
			       "result: %s (use -d to write it anyway)", line);
			memcpy(bp->data, old, rlen);
			goto out;
		}
		if (mode == COMMIT_VERIFY &&
		    xk_dinode_verify(mp, l->ino, dip, &f) != 0) {
			char line[400];

			xk_fail_format(&f, line, sizeof(line));
			db_note(c, "xfskit-db: warning: the inode written fails "
				"verification: %s", line);
		}
		err = xk_buf_write_raw(bp);
	} else if (mode == COMMIT_VERIFY && ops) {
		bp->ops = ops;
		bp->agno = l->agno;
		bp->owner = l->ino;
		err = xk_buf_write(bp);
		if (err == XK_ECORRUPT || err == XK_EBADCRC) {
			char line[400];

			xk_fail_format(&bp->fail, line, sizeof(line));
			db_err(c, "write refused, the verifier rejects the "
			       "result: %s (use -d to write it anyway)", line);
			memcpy(bp->data, old, rlen);
			goto out;
		}
	} else {
		if (mode == COMMIT_NOVERIFY && ops &&
		    ops->crc_off != XK_NO_CRC && ops->crc_off + 4 <= l->len)
			xk_cksum_update(bp->data, l->len, ops->crc_off);
		err = xk_buf_write_raw(bp);
	}
	if (err) {
		db_err(c, "write failed: %s", xk_strerror(err));
		memcpy(bp->data, old, rlen);
	}
out:
	free(old);
	xk_buf_release(bp);
	xk_buf_invalidate(mp, l->daddr, rlen);
	if (l->type->is_inode || rlen != l->len)
		xk_buf_invalidate(mp, l->daddr, l->len);
	db_reread(c);
	return err;
}

/*
 * The notes xfs_db prints for the two unchecked modes, before it looks at
 * the arguments, on an object that has a verifier.
 */
static void
mode_note(struct db_ctx *c, enum commit_mode mode, const char *verb)
{
	if (!c->have_cur || !c->cur.type->ops)
		return;
	if (mode == COMMIT_NOVERIFY)
		db_out(c, "Allowing %s of corrupted data with good CRC", verb);
	else if (mode == COMMIT_BADCRC)
		db_out(c, "Allowing %s of corrupted data and bad CRC", verb);
}

/*
 * Options shared by write and fuzz, parsed as xfs_db's getopt does: an
 * option may come anywhere before "--" (so "write core.uid -5" is a bad
 * option, and "write core.size -- -1" a value).  The arguments left are
 * moved to the front, in order; returns their count, or -1 after the
 * message xfs_db prints.
 */
static int
edit_opts(struct db_ctx *c, int argc, char **argv, enum commit_mode *mode,
	  uint64_t *seed, int *have_seed)
{
	int i, n = 0, c_opt = 0, d_opt = 0;

	*mode = COMMIT_VERIFY;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			while (++i < argc)
				argv[n++] = argv[i];
			break;
		}
		if (a[0] != '-' || !a[1]) {
			argv[n++] = argv[i];
			continue;
		}
		if (!strcmp(a, "-c")) {
			c_opt = 1;
		} else if (!strcmp(a, "-d")) {
			d_opt = 1;
		} else if (!strcmp(a, "-s") && seed && i + 1 < argc) {
			if (db_parse_u64(argv[++i], seed)) {
				db_err(c, "bad seed %s", argv[i]);
				return -1;
			}
			*have_seed = 1;
		} else {
			db_err(c, "bad option for %s command",
			       seed ? "fuzz" : "write");
			return -1;
		}
	}
	if (c_opt && d_opt) {
		db_err(c, "Cannot specify both -c and -d options");
		return -1;
	}
	*mode = c_opt ? COMMIT_BADCRC : d_opt ? COMMIT_NOVERIFY :
		COMMIT_VERIFY;
	return n;
}

static int
resolve(struct db_ctx *c, const char *path, struct xk_fctx *fc,
	struct xk_fref *r)
{
	int err;

	if (!c->have_cur || !c->cur.type->ftype) {
		db_err(c, "no current object with fields");
		return -EINVAL;
	}
	db_fctx(c, fc);
	err = xk_field_resolve(fc, c->cur.type->ftype->fields, path, r);
	if (err) {
		db_field_error(c, path, r);
		db_err(c, "parsing error");
	} else if (r->bits == 0 && r->field->kind != XK_FK_CHARS) {
		db_err(c, "field %s is not a single value", path);
		err = -EINVAL;
	}
	return err;
}

static int
parse_uuid(const char *s, uint8_t *u)
{
	int n = 0;

	for (; *s && n < 16; s++) {
		unsigned int b;

		if (*s == '-')
			continue;
		if (sscanf(s, "%2x", &b) != 1 || !s[1])
			return -EINVAL;
		u[n++] = (uint8_t)b;
		s++;
	}
	return n == 16 && !*s ? 0 : -EINVAL;
}

/* xorshift64*: small, seedable, good enough to pick bits. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/*
 * Data mode (the current type is data): xfs_db's block edits.  Each verb
 * is recognized by a prefix of at least sig letters; its arguments are
 * at positions: shift (or fill value) 1, start and len after it;
 * sequence takes from, to, start, len, and reads from and to only when
 * all four are given, as xfs_db does.  Numbers are read as xfs_db reads
 * them (strtoul, garbage is 0).
 */
struct data_verb {
	const char	*name;
	int		sig, argmin, argmax;
	const char	*usage;
};

static const struct data_verb data_verbs[] = {
	{ "lshift", 2, 0, 3, "[shiftcount] [start] [len]" },
	{ "rshift", 2, 0, 3, "[shiftcount] [start] [len]" },
	{ "lrot", 2, 0, 3, "[shiftcount] [start] [len]" },
	{ "rrot", 2, 0, 3, "[shiftcount] [start] [len]" },
	{ "sequence", 3, 0, 4, "[from] [to] [start] [len]" },
	{ "random", 3, 0, 2, "[start] [len]" },
	{ "fill", 1, 1, 3, "num [start] [len]" },
};

#define NDATA_VERBS (sizeof(data_verbs) / sizeof(data_verbs[0]))

/* xfs_db's match: equal up to where either word ends, sig letters at least. */
static int
verb_matches(const char *word, const struct data_verb *v)
{
	const char *a = word, *b = v->name;
	int n = 0;

	for (; *a == *b; a++, b++, n++)
		if (!*a)
			return 1;
	return !(*a && *b) && n >= v->sig;
}

static void
data_usage(struct db_ctx *c)
{
	db_out(c, "usage: write (in data mode)");
	for (size_t i = 0; i < NDATA_VERBS; i++)
		db_out(c, "              %-9.9s %s", data_verbs[i].name,
		       data_verbs[i].usage);
	db_out(c, "%s", "");
}

static int
data_num(const char *s)
{
	return (int)strtoul(s, NULL, 0);
}

static int
write_data(struct db_ctx *c, int argc, char **argv, enum commit_mode mode)
{
	const struct data_verb *v = NULL;
	int len = -1, start = -1, arg = -1, from = -1, to = -1, err;
	int blen = (int)c->cur.len;
	uint8_t *nbuf, *base;

	if (mode == COMMIT_NOVERIFY) {
		db_err(c, "Cannot recalculate CRCs on this type of object");
		return 1;
	}
	if (argc < 2 || argc > 5) {
		data_usage(c);
		return 1;
	}
	for (size_t i = 0; i < NDATA_VERBS && !v; i++)
		if (verb_matches(argv[0], &data_verbs[i]))
			v = &data_verbs[i];
	if (!v) {
		db_err(c, "write: invalid subcommand");
		data_usage(c);
		return 1;
	}
	if (argc < v->argmin + 1 || argc > v->argmax + 1) {
		db_err(c, "write %s: invalid number of arguments", v->name);
		data_usage(c);
		return 1;
	}
	if (v->name[0] == 's') {		/* sequence */
		if (argc > 3)
			start = data_num(argv[3]);
		if (argc > 4) {
			len = data_num(argv[4]);
			from = data_num(argv[1]);
			to = data_num(argv[2]);
		}
	} else if (v->name[0] == 'r' && v->name[1] == 'a') {	/* random */
		if (argc > 1)
			start = data_num(argv[1]);
		if (argc > 2)
			len = data_num(argv[2]);
	} else {
		arg = data_num(argv[1]);
		if (argc > 2)
			start = data_num(argv[2]);
		if (argc > 3)
			len = data_num(argv[3]);
	}
	if (start == -1)
		start = 0;
	if (len == -1)
		len = blen - start;
	if (start < 0 || len < 0 || (long long)start + len > blen) {
		db_err(c, "length (%d) too large for data block size (%d)",
		       len, blen);
		return 1;
	}
	nbuf = malloc(c->buflen);
	if (!nbuf)
		return 1;
	memcpy(nbuf, c->buf, c->buflen);
	base = nbuf + start;
	if (v->name[0] == 'f') {
		memset(base, arg == -1 ? 0 : arg, (size_t)len);
	} else if (v->name[0] == 's') {
		int lo = from == -1 || from > 255 ? 0 : from;
		int hi = to == -1 || to > 255 ? 255 : to;
		int step = 1, t = 0;

		if (lo > hi) {		/* counts down from the smaller one */
			int x = lo;

			lo = hi;
			hi = x;
			step = -1;
		}
		for (int i = 0; i < len; i++) {
			base[i] = (uint8_t)(t + lo);
			t = (t + step) % (hi - lo + 1);
		}
	} else if (v->name[0] == 'r' && v->name[1] == 'a') {
		uint64_t seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL + 1;

		for (int i = 0; i < len; i++)
			base[i] = (uint8_t)(rnd(&seed) >> 56);
	} else {
		int sh = arg == -1 ? 1 : arg;

		if (sh < 0 || sh > len) {
			db_err(c, "write %s: shift count %d is larger than the "
			       "length %d", v->name, sh, len);
			free(nbuf);
			return 1;
		}
		if (!strcmp(v->name, "lshift") || !strcmp(v->name, "lrot")) {
			uint8_t *hold = malloc((size_t)sh + 1);

			if (!hold) {
				free(nbuf);
				return 1;
			}
			memcpy(hold, base, (size_t)sh);
			memmove(base, base + sh, (size_t)(len - sh));
			if (v->name[1] == 'r')
				memcpy(base + len - sh, hold, (size_t)sh);
			else
				memset(base + len - sh, 0, (size_t)sh);
			free(hold);
		} else {
			uint8_t *hold = malloc((size_t)sh + 1);

			if (!hold) {
				free(nbuf);
				return 1;
			}
			memcpy(hold, base + len - sh, (size_t)sh);
			memmove(base + sh, base, (size_t)(len - sh));
			if (v->name[1] == 'r')
				memcpy(base, hold, (size_t)sh);
			else
				memset(base, 0, (size_t)sh);
			free(hold);
		}
	}
	err = commit(c, nbuf, COMMIT_VERIFY);
	free(nbuf);
	return err ? 1 : 0;
}

/* A number for a field of bits bits, read as xfs_db reads it. */
static int
parse_field_value(const char *s, const struct xk_fref *r, uint64_t *v)
{
	char *end;

	if (!strcmp(s, "null")) {
		*v = r->bits >= 64 ? UINT64_MAX : (1ULL << r->bits) - 1;
		return 0;
	}
	errno = 0;
	*v = (uint64_t)strtoll(s, &end, 0);
	if (end == s || *end)
		return -EINVAL;
	/* 0x8000000000000000 and up: strtoll saturates, take them whole. */
	if (errno == ERANGE && s[0] != '-')
		*v = strtoull(s, &end, 0);
	if (r->bits < 64 && (*v >> r->bits))
		return -ERANGE;
	return 0;
}

int
db_cmd_write(struct db_ctx *c, int argc, char **argv)
{
	enum commit_mode mode;
	struct xk_fctx fc;
	struct xk_fref r;
	uint8_t *nbuf;
	int n, err;

	n = edit_opts(c, argc, argv, &mode, NULL, NULL);
	if (n < 0)
		return 1;
	if (c->have_cur && !strcmp(c->cur.type->name, "data"))
		return write_data(c, n, argv, mode);
	mode_note(c, mode, "write");
	if (n != 2) {
		db_err(c, "usage: write fieldname value");
		return 1;
	}
	if (resolve(c, argv[0], &fc, &r))
		return 1;
	nbuf = malloc(c->buflen);
	if (!nbuf)
		return 1;
	memcpy(nbuf, c->buf, c->buflen);
	if (r.field->kind == XK_FK_UUID) {
		if (parse_uuid(argv[1], nbuf + r.byte)) {
			db_err(c, "unable to convert value '%s'.", argv[1]);
			free(nbuf);
			return 1;
		}
	} else if (r.field->kind == XK_FK_CHARS) {
		size_t w = r.bits / 8, len = strlen(argv[1]);

		memset(nbuf + r.byte, 0, w);
		memcpy(nbuf + r.byte, argv[1], len < w ? len : w);
	} else if (r.bits > 64) {
		db_err(c, "field %s is too wide to write as a number",
		       argv[0]);
		free(nbuf);
		return 1;
	} else {
		uint64_t v;

		if (parse_field_value(argv[1], &r, &v)) {
			db_err(c, "unable to convert value '%s'.", argv[1]);
			free(nbuf);
			return 1;
		}
		xk_fval_set(nbuf, &r, v);
	}
	err = commit(c, nbuf, mode);
	free(nbuf);
	if (!err)
		db_print_path(c, argv[0]);
	return err ? 1 : 0;
}

static void
flip_bit(uint8_t *buf, const struct xk_fref *r, uint32_t b)
{
	uint32_t bit = r->bitoff + b;

	buf[r->byte + bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
}

int
db_cmd_fuzz(struct db_ctx *c, int argc, char **argv)
{
	enum commit_mode mode;
	struct xk_fctx fc;
	struct xk_fref r;
	uint64_t seed = 0, v, ones, arg;
	int i, err, have_seed = 0;
	const char *verb;
	uint8_t *nbuf;

	/* The arguments left are moved to argv[0..argc-1]. */
	argc = edit_opts(c, argc, argv, &mode, &seed, &have_seed);
	if (argc < 0)
		return 1;
	i = 0;
	mode_note(c, mode, "fuzz");
	if (argc == i) {
		/* What xfs_db prints here; fstests reads the verbs from it. */
		db_out(c, "Usage: fuzz fieldname fuzzcmd");
		db_out(c, "Fuzz commands: zeroes, ones, firstbit, middlebit, "
		       "lastbit, add, sub, random.");
		return 0;
	}
	if (argc - i < 2) {
		db_err(c, "usage: fuzz [-c] [-d] [-s seed] field action [N]");
		return 1;
	}
	if (resolve(c, argv[i], &fc, &r))
		return 1;
	verb = argv[i + 1];
	if (r.bits == 0) {
		db_err(c, "field %s is empty; nothing to fuzz", argv[i]);
		return 1;
	}
	/* Without N, add and sub move by xfs_db's primes: 2017, or 137. */
	arg = r.bits > 8 ? 2017 : 137;
	if ((!strcmp(verb, "add") || !strcmp(verb, "sub")) && argc - i > 2 &&
	    db_parse_u64(argv[i + 2], &arg)) {
		db_err(c, "fuzz %s: bad number %s", verb, argv[i + 2]);
		return 1;
	}
	if (!have_seed)
		seed = (uint64_t)time(NULL);
	seed = seed * 0x9e3779b97f4a7c15ULL + 1;
	nbuf = malloc(c->buflen);
	if (!nbuf)
		return 1;
	memcpy(nbuf, c->buf, c->buflen);
	ones = r.bits >= 64 ? UINT64_MAX : (1ULL << r.bits) - 1;
	if (!strcmp(verb, "firstbit")) {
		flip_bit(nbuf, &r, 0);
	} else if (!strcmp(verb, "middlebit")) {
		/* xfs_db 6.1 and 7.2 flip each of the three bits outright. */
		flip_bit(nbuf, &r, r.bits / 2);
	} else if (!strcmp(verb, "lastbit")) {
		flip_bit(nbuf, &r, r.bits - 1);
	} else if (!strcmp(verb, "zeroes") || !strcmp(verb, "ones") ||
		   !strcmp(verb, "random")) {
		for (uint32_t b = 0; b < r.bits; b++) {
			uint32_t bit = r.bitoff + b;
			uint8_t mask = (uint8_t)(0x80u >> (bit % 8));
			int on = verb[0] == 'o' ||
				 (verb[0] == 'r' && (rnd(&seed) >> 63));

			if (on)
				nbuf[r.byte + bit / 8] |= mask;
			else
				nbuf[r.byte + bit / 8] &= (uint8_t)~mask;
		}
	} else if ((!strcmp(verb, "add") || !strcmp(verb, "sub")) &&
		   r.bits <= 64) {
		v = xk_fval_get(&fc, &r);
		v = verb[0] == 'a' ? v + arg : v - arg;
		xk_fval_set(nbuf, &r, v & ones);
	} else {
		db_err(c, "unknown fuzz action %s (zeroes, ones, firstbit, "
		       "middlebit, lastbit, add N, sub N, random)", verb);
		free(nbuf);
		return 1;
	}
	err = commit(c, nbuf, mode);
	free(nbuf);
	if (!err)
		db_print_path(c, argv[i]);
	return err ? 1 : 0;
}
