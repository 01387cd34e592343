// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check and blocktrash: both are visitors of libfs's metadata walker
 * (walk.h), which reaches the AG headers, every btree block, every
 * allocated inode, and the directory, attribute, bmbt and remote
 * symlink blocks of those inodes, each through its libfs verifier.
 * check prints every failure; it has no rules of its own.  blocktrash flips random bits in a random choice of them
 * (headers, btree blocks, inodes, directory, attribute, bmbt and remote
 * symlink blocks).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xfskit/walk.h>

#include "db.h"

/* One metadata block found by the enumeration. */
struct mblock {
	uint64_t	daddr;
	uint32_t	len;
	const char	*type;
};

struct scan {
	struct db_ctx	*c;
	int		collect;	/* blocktrash: remember blocks */
	XK_VEC_OF(struct mblock);	/* the blocks remembered */
	int		collect_err;	/* a block could not be remembered */
	uint64_t	nblocks;
	uint64_t	ninodes;
	unsigned int	nproblems;
};

static void
problem(struct scan *s, const struct xk_fail *f)
{
	char line[400];

	xk_fail_format(f, line, sizeof(line));
	db_out(s->c, "%s", line);
	s->nproblems++;
}

static int
remember(struct scan *s, uint64_t daddr, uint32_t len, const char *type)
{
	s->nblocks++;
	if (!s->collect)
		return 0;
	return xk_vec_push(&s->vec, &(struct mblock){ daddr, len, type },
			   sizeof(*s->v));
}

static int
pieces_contiguous(const struct xk_walk_block *b, uint32_t bsize)
{
	for (unsigned int k = 1; k < b->npieces; k++)
		if (b->pieces[k] != b->daddr + (uint64_t)k * bsize / XK_BBSIZE)
			return 0;
	return 1;
}

/* The walker's visitor: count (and for blocktrash remember) each block. */
static int
scan_visit(void *ctx, const struct xk_walk_block *b)
{
	struct scan *s = ctx;

	/* An inode that cannot be read is counted, not a block. */
	if (b->kind == XK_WALK_INODE && !b->bp)
		return 0;
	if (!b->data)
		db_out(s->c, "%s at daddr %llu cannot be read: %s", b->type,
		       (unsigned long long)b->daddr, xk_strerror(b->err));
	/* A directory block in pieces: blocktrash hits one at a time. */
	if (!pieces_contiguous(b, s->c->mp->g.blocksize)) {
		int err = 0;

		for (unsigned int k = 0; k < b->npieces && !err; k++)
			err = remember(s, b->pieces[k], s->c->mp->g.blocksize,
				       b->type);
		return err;
	}
	return remember(s, b->daddr, b->len, b->type);
}

static void
scan_fail(void *ctx, const struct xk_fail *f)
{
	problem(ctx, f);
}

/* Every metadata block of the filesystem, through the libfs walker. */
static int
scan_all(struct scan *s)
{
	struct xk_walk w = {
		.ctx = s, .visit = scan_visit, .fail = scan_fail,
	};
	int err = xk_walk_metadata(s->c->mp, 0, s->c->mp->g.agcount - 1, &w);

	s->ninodes = w.ninodes;
	return err == XK_ECORRUPT ? 0 : err;
}

int
db_cmd_check(struct db_ctx *c, int argc, char **argv)
{
	struct scan s;
	int err;

	(void)argc;
	(void)argv;
	memset(&s, 0, sizeof(s));
	s.c = c;
	err = scan_all(&s);
	if (err) {
		db_err(c, "check: %s", xk_strerror(err));
		return 1;
	}
	db_out(c, "checked %llu metadata blocks and %llu inodes: %u "
	       "problem%s", (unsigned long long)s.nblocks,
	       (unsigned long long)s.ninodes, s.nproblems,
	       s.nproblems == 1 ? "" : "s");
	return s.nproblems ? 1 : 0;
}

static uint64_t
rnd(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545f4914f6cdd1dULL;
}

int
db_cmd_blocktrash(struct db_ctx *c, int argc, char **argv)
{
	struct xk_mount *mp = c->mp;
	uint64_t count = 1, seed = (uint64_t)time(NULL), minb = 1, maxb = 1;
	const char *types[32];
	int ntypes = 0, rc = 0;
	struct scan s;

	for (int i = 1; i < argc; i++) {
		uint64_t *dst = NULL;

		if (i + 1 >= argc) {
			db_err(c, "blocktrash: %s needs a value", argv[i]);
			return 1;
		}
		if (!strcmp(argv[i], "-n"))
			dst = &count;
		else if (!strcmp(argv[i], "-s"))
			dst = &seed;
		else if (!strcmp(argv[i], "-x"))
			dst = &minb;
		else if (!strcmp(argv[i], "-y"))
			dst = &maxb;
		else if (!strcmp(argv[i], "-t") && ntypes < 32) {
			/* db's type name for the tree the walker calls so */
			i++;
			types[ntypes++] = strcmp(argv[i], "refcntbt") ?
					  argv[i] : "refcountbt";
			continue;
		}
		if (!dst || db_parse_u64(argv[++i], dst)) {
			db_err(c, "usage: blocktrash [-n count] [-s seed] "
			       "[-x min] [-y max] [-t type]...");
			return 1;
		}
	}
	if (minb == 0 || maxb < minb) {
		db_err(c, "blocktrash: need 1 <= min <= max bits");
		return 1;
	}
	memset(&s, 0, sizeof(s));
	s.c = c;
	s.collect = 1;
	rc = scan_all(&s);
	/* Trashing some of the blocks asked for would be a different test. */
	if (rc) {
		db_err(c, "blocktrash: %s", xk_strerror(rc));
		xk_vec_free(&s.vec);
		return 1;
	}
	/* keep only the chosen types */
	if (ntypes) {
		size_t k = 0;

		for (size_t i = 0; i < s.n; i++)
			for (int t = 0; t < ntypes; t++)
				if (!strcmp(s.v[i].type, types[t]))
					s.v[k++] = s.v[i], t = ntypes;
		s.n = k;
	}
	if (s.n == 0) {
		db_err(c, "blocktrash: no metadata blocks of those types");
		xk_vec_free(&s.vec);
		return 1;
	}
	seed = seed * 0x9e3779b97f4a7c15ULL + 1;
	for (uint64_t k = 0; k < count; k++) {
		const struct mblock *b = &s.v[rnd(&seed) % s.n];
		uint64_t bits = minb + rnd(&seed) % (maxb - minb + 1);
		uint64_t start, total = (uint64_t)b->len * 8;
		struct xk_buf *bp;
		int err;

		if (bits > total)
			bits = total;
		start = rnd(&seed) % (total - bits + 1);
		err = xk_buf_read(mp, b->daddr, b->len, NULL,
				  XK_READ_NOVERIFY, &bp);
		if (err) {
			rc = 1;
			continue;
		}
		for (uint64_t i = start; i < start + bits; i++)
			bp->data[i / 8] ^= (uint8_t)(0x80u >> (i % 8));
		err = xk_buf_write_raw(bp);
		xk_buf_release(bp);
		xk_buf_invalidate(mp, b->daddr, b->len);
		if (err) {
			db_err(c, "blocktrash: write failed: %s",
			       xk_strerror(err));
			rc = 1;
			continue;
		}
		db_out(c, "blocktrash: %s block at daddr %llu: %llu bit%s "
		       "flipped starting at bit %llu", b->type,
		       (unsigned long long)b->daddr, (unsigned long long)bits,
		       bits == 1 ? "" : "s", (unsigned long long)start);
	}
	xk_vec_free(&s.vec);
	if (c->have_cur)
		db_reread(c);
	return rc;
}
