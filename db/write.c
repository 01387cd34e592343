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
commit(struct db_ctx *c, const uint8_t *nbuf, enum commit_mode mode,
       const char *verb)
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
	/* The notes xfs_db prints for the two unchecked modes. */
	if (mode == COMMIT_NOVERIFY)
		db_out(c, "Allowing %s of corrupted data with good CRC", verb);
	else if (mode == COMMIT_BADCRC)
		db_out(c, "Allowing %s of corrupted data and bad CRC", verb);
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

/* Options shared by write and fuzz; returns the index of the first arg. */
static int
edit_opts(struct db_ctx *c, int argc, char **argv, enum commit_mode *mode,
	  uint64_t *seed, int *have_seed)
{
	int i;

	*mode = COMMIT_VERIFY;
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "-d")) {
			enum commit_mode m = argv[i][1] == 'c' ?
					     COMMIT_BADCRC : COMMIT_NOVERIFY;

			if (*mode != COMMIT_VERIFY && *mode != m) {
				db_err(c, "%s: -c and -d cannot be combined",
				       argv[0]);
				return -1;
			}
			*mode = m;
		} else if (!strcmp(argv[i], "-s") && seed && i + 1 < argc) {
			if (db_parse_u64(argv[++i], seed)) {
				db_err(c, "bad seed %s", argv[i]);
				return -1;
			}
			*have_seed = 1;
		} else {
			db_err(c, "%s: unknown option %s", argv[0], argv[i]);
			return -1;
		}
	}
	return i;
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
	if (err == -ERANGE)
		db_err(c, "field %s: index out of range", path);
	else if (err)
		db_err(c, "field %s not found", path);
	else if (r->bits == 0 && r->field->kind != XK_FK_CHARS) {
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

int
db_cmd_write(struct db_ctx *c, int argc, char **argv)
{
	enum commit_mode mode;
	struct xk_fctx fc;
	struct xk_fref r;
	uint8_t *nbuf;
	int i, err;

	i = edit_opts(c, argc, argv, &mode, NULL, NULL);
	if (i < 0)
		return 1;
	if (argc - i != 2) {
		db_err(c, "usage: write [-c] [-d] field value");
		return 1;
	}
	if (resolve(c, argv[i], &fc, &r))
		return 1;
	nbuf = malloc(c->buflen);
	if (!nbuf)
		return 1;
	memcpy(nbuf, c->buf, c->buflen);
	if (r.field->kind == XK_FK_UUID) {
		if (parse_uuid(argv[i + 1], nbuf + r.byte)) {
			db_err(c, "bad uuid %s", argv[i + 1]);
			free(nbuf);
			return 1;
		}
	} else if (r.field->kind == XK_FK_CHARS) {
		size_t n = r.bits / 8, len = strlen(argv[i + 1]);

		memset(nbuf + r.byte, 0, n);
		memcpy(nbuf + r.byte, argv[i + 1], len < n ? len : n);
	} else if (r.bits > 64) {
		db_err(c, "field %s is too wide to write as a number",
		       argv[i]);
		free(nbuf);
		return 1;
	} else {
		const char *s = argv[i + 1];
		uint64_t v, ones = r.bits >= 64 ? UINT64_MAX :
				   (1ULL << r.bits) - 1;
		char *end;

		errno = 0;
		if (!strcmp(s, "null"))
			v = ones;
		else if (s[0] == '-')
			v = (uint64_t)strtoll(s, &end, 0);
		else
			v = strtoull(s, &end, 0);
		if (strcmp(s, "null") && (errno || end == s || *end)) {
			db_err(c, "bad value %s", s);
			free(nbuf);
			return 1;
		}
		if (s[0] != '-' && v > ones) {
			db_err(c, "value %s does not fit the %u-bit field %s",
			       s, r.bits, argv[i]);
			free(nbuf);
			return 1;
		}
		xk_fval_set(nbuf, &r, v & ones);
	}
	err = commit(c, nbuf, mode, "write");
	free(nbuf);
	if (!err)
		db_print_path(c, argv[i]);
	return err ? 1 : 0;
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

	i = edit_opts(c, argc, argv, &mode, &seed, &have_seed);
	if (i < 0)
		return 1;
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
	err = commit(c, nbuf, mode, "fuzz");
	free(nbuf);
	if (!err)
		db_print_path(c, argv[i]);
	return err ? 1 : 0;
}
