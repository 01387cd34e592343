// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check and blocktrash: both enumerate the metadata reachable from the
 * AG headers -- the headers themselves, every btree block (through the
 * libfs walker), every allocated inode, and the directory, attribute,
 * bmbt and remote symlink blocks of those inodes.  check hands each
 * block to its libfs verifier and prints every failure; it has no rules
 * of its own.  blocktrash flips random bits in a random choice of them
 * (headers, btree blocks, inodes, directory, attribute, bmbt and remote
 * symlink blocks).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xfskit/format/attr.h>
#include <xfskit/format/dir.h>

#include "db.h"

/* One metadata block found by the enumeration. */
struct mblock {
	uint64_t	daddr;
	uint32_t	len;
	const char	*type;
};

struct scan {
	struct db_ctx	*c;
	uint32_t	agno;
	int		collect;	/* blocktrash: remember blocks */
	struct mblock	*v;
	size_t		n, cap;
	uint64_t	nblocks;
	uint64_t	ninodes;
	unsigned int	nproblems;
	const char	*cur_type;
	int		err;	/* memory or I/O: the check is incomplete */
};

static void
problem(struct scan *s, const struct xk_fail *f)
{
	char line[400];

	xk_fail_format(f, line, sizeof(line));
	db_out(s->c, "%s", line);
	s->nproblems++;
}

static void
remember(struct scan *s, uint64_t daddr, uint32_t len, const char *type)
{
	s->nblocks++;
	if (!s->collect)
		return;
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 256;
		struct mblock *nv = realloc(s->v, ncap * sizeof(*nv));

		if (!nv)
			return;
		s->v = nv;
		s->cap = ncap;
	}
	s->v[s->n].daddr = daddr;
	s->v[s->n].len = len;
	s->v[s->n].type = type;
	s->n++;
}

/* Read one block through its verifier and report a failure. */
static int
check_block(struct scan *s, uint64_t daddr, uint32_t len,
	    const struct xk_buf_ops *ops, int64_t agno, uint64_t owner,
	    const char *type, struct xk_buf **bpp)
{
	struct xk_buf *bp;
	int err;

	err = xk_buf_read_ctx(s->c->mp, daddr, len, ops, agno, owner,
			      XK_READ_SALVAGE, &bp);
	remember(s, daddr, len, type);
	if (bp && bp->error)
		problem(s, &bp->fail);
	else if (err && !bp)
		db_out(s->c, "%s at daddr %llu cannot be read: %s", type,
		       (unsigned long long)daddr, xk_strerror(err));
	if (bpp)
		*bpp = bp;
	else
		xk_buf_release(bp);
	return err;
}

static void
walk_fail(void *ctx, const struct xk_fail *f)
{
	problem(ctx, f);
}

static int
walk_block(void *ctx, unsigned int level, uint64_t bno, struct xk_buf *bp)
{
	struct scan *s = ctx;

	(void)level;
	(void)bno;
	remember(s, bp->daddr, bp->len, s->cur_type);
	return 0;
}

static void
walk_tree(struct scan *s, const struct xk_btree_ops *ops, int64_t agno,
	  uint64_t owner, uint64_t root, unsigned int levels,
	  const void *iroot, unsigned int isize, int (*rec_fn)(void *,
	  const void *), void *rctx)
{
	struct xk_btree_walk w;
	int err;

	memset(&w, 0, sizeof(w));
	w.ops = ops;
	w.agno = agno;
	w.owner = owner;
	w.root = root;
	w.levels = levels;
	w.iroot = iroot;
	w.iroot_size = isize;
	w.flags = XK_READ_SALVAGE;
	w.ctx = rctx ? rctx : s;
	w.rec_fn = rec_fn;
	s->cur_type = ops->name;
	if (!rctx) {
		w.block_fn = walk_block;
		w.fail_fn = walk_fail;
	}
	/* Problems went to fail_fn; an operational error ends the check. */
	err = xk_btree_walk(s->c->mp, &w);
	if (xk_err_operational(err) && !s->err)
		s->err = err;
}

/* Blocks of one inode fork, each through the verifier its magic names. */
static void
check_fork_blocks(struct scan *s, uint64_t ino, int whichfork,
		  const char *tname)
{
	struct xk_mount *mp = s->c->mp;
	const struct db_type *t = db_type_find(tname);
	struct db_ext *e;
	size_t n;
	uint32_t bsize = whichfork == XK_DATA_FORK &&
			 !strcmp(tname, "dir3") ? mp->g.dirblksize :
			 mp->g.blocksize;
	uint32_t step = bsize >> mp->g.blocklog;

	db_inode_extents(s->c, ino, whichfork, &e, &n);
	for (size_t i = 0; i < n; i++) {
		for (uint64_t o = 0; o + step <= e[i].len; o += step) {
			struct xk_buf *bp;
			uint64_t fsb = e[i].fsb + o;

			if (!xk_fsbext_valid(mp, fsb, step))
				break;
			if (xk_buf_read(mp, xk_fsb_to_daddr(mp, fsb), bsize,
					NULL, XK_READ_NOVERIFY, &bp))
				continue;
			if (!strcmp(tname, "attr3") && e[i].off + o > 0 &&
			    xk_get_be32(bp->data) != XK_ATTR3_RMT_MAGIC &&
			    xk_get_be16(bp->data + 8) != XK_ATTR3_LEAF_MAGIC &&
			    xk_get_be16(bp->data + 8) != XK_DA3_NODE_MAGIC) {
				/* middle of a multi-block remote value */
				xk_buf_release(bp);
				continue;
			}
			{
				const struct xk_buf_ops *ops =
					t->ops(bp->data, bp->len);

				xk_buf_release(bp);
				check_block(s, xk_fsb_to_daddr(mp, fsb), bsize,
					    ops, -1, ino, tname, NULL);
			}
		}
	}
	free(e);
}

static void
check_inode(struct scan *s, uint64_t ino)
{
	struct xk_mount *mp = s->c->mp;
	struct xk_buf *bp;
	struct xk_dinode *dip;
	struct xk_fail f;
	uint16_t mode;
	int dfmt, afmt;

	s->ninodes++;
	if (!xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip) && !bp)
		return;
	if (!bp)
		return;
	/* The inode itself (blocktrash's "inode" type): its own bytes. */
	remember(s, bp->daddr + ((uint8_t *)dip - bp->data) / XK_BBSIZE,
		 mp->g.inodesize, "inode");
	memset(&f, 0, sizeof(f));
	f.structure = "inode";
	f.daddr = bp->daddr;
	f.agno = -1;
	f.ino = ino;
	if (xk_dinode_verify(mp, ino, dip, &f)) {
		problem(s, &f);
		xk_buf_release(bp);
		return;
	}
	mode = xk_be16_get(dip->di_mode) & XK_S_IFMT;
	dfmt = dip->di_format;
	afmt = dip->di_forkoff ? dip->di_aformat : -1;
	if (dfmt == XK_DINODE_FMT_BTREE)
		walk_tree(s, &xk_bmbt_ops, -1, ino, 0,
			  xk_get_be16(xk_dfork_dptr(dip)) + 1u,
			  xk_dfork_dptr(dip), xk_dfork_dsize(dip,
			  mp->g.inodesize), NULL, NULL);
	if (afmt == XK_DINODE_FMT_BTREE)
		walk_tree(s, &xk_bmbt_ops, -1, ino, 0,
			  xk_get_be16(xk_dfork_aptr(dip)) + 1u,
			  xk_dfork_aptr(dip), xk_dfork_asize(dip,
			  mp->g.inodesize), NULL, NULL);
	xk_buf_release(bp);
	if (mode == XK_S_IFDIR && (dfmt == XK_DINODE_FMT_EXTENTS ||
				   dfmt == XK_DINODE_FMT_BTREE))
		check_fork_blocks(s, ino, XK_DATA_FORK, "dir3");
	if (mode == XK_S_IFLNK && dfmt == XK_DINODE_FMT_EXTENTS)
		check_fork_blocks(s, ino, XK_DATA_FORK, "symlink");
	if (afmt == XK_DINODE_FMT_EXTENTS || afmt == XK_DINODE_FMT_BTREE)
		check_fork_blocks(s, ino, XK_ATTR_FORK, "attr3");
}

static int
inode_rec(void *ctx, const void *rec)
{
	const struct xk_inobt_rec *r = rec;
	struct scan *s = ctx;
	struct xk_mount *mp = s->c->mp;
	uint64_t freemask = xk_be64_get(r->ir_free);
	uint16_t holes = mp->g.has_sparse ?
			 xk_be16_get(r->ir_u.sp.ir_holemask) : 0;

	for (int i = 0; i < 64; i++) {
		if ((holes >> (i / 4)) & 1 || (freemask >> i) & 1)
			continue;
		check_inode(s, xk_agino_to_ino(mp, s->agno,
			    xk_be32_get(r->ir_startino) + (uint32_t)i));
	}
	return 0;
}

/* Everything reachable from AG agno. */
static void
scan_ag(struct scan *s, uint32_t agno, int inodes)
{
	struct xk_mount *mp = s->c->mp;
	uint32_t sect = mp->g.sectsize;
	struct xk_buf *agf = NULL, *agi = NULL;
	struct xk_btree_walk w;
	int err;

	s->agno = agno;
	check_block(s, xk_ag_hdr_daddr(mp, agno, XK_SB_SECTOR), sect,
		    &xk_sb_buf_ops, agno, 0, "sb", NULL);
	check_block(s, xk_ag_hdr_daddr(mp, agno, XK_AGF_SECTOR), sect,
		    &xk_agf_buf_ops, agno, 0, "agf", &agf);
	check_block(s, xk_ag_hdr_daddr(mp, agno, XK_AGI_SECTOR), sect,
		    &xk_agi_buf_ops, agno, 0, "agi", &agi);
	check_block(s, xk_ag_hdr_daddr(mp, agno, XK_AGFL_SECTOR), sect,
		    &xk_agfl_buf_ops, agno, 0, "agfl", NULL);
	if (agf && !agf->error) {
		const struct xk_agf *h = xk_buf_agf(agf);

		walk_tree(s, &xk_bnobt_ops, agno, 0,
			  xk_be32_get(h->agf_roots[XK_AGF_BNO]),
			  xk_be32_get(h->agf_levels[XK_AGF_BNO]), NULL, 0,
			  NULL, NULL);
		walk_tree(s, &xk_cntbt_ops, agno, 0,
			  xk_be32_get(h->agf_roots[XK_AGF_CNT]),
			  xk_be32_get(h->agf_levels[XK_AGF_CNT]), NULL, 0,
			  NULL, NULL);
		if (mp->g.has_rmapbt)
			walk_tree(s, &xk_rmapbt_ops, agno, 0,
				  xk_be32_get(h->agf_roots[XK_AGF_RMAP]),
				  xk_be32_get(h->agf_levels[XK_AGF_RMAP]),
				  NULL, 0, NULL, NULL);
		if (mp->g.has_reflink)
			walk_tree(s, &xk_refcountbt_ops, agno, 0,
				  xk_be32_get(h->agf_refcount_root),
				  xk_be32_get(h->agf_refcount_level), NULL, 0,
				  NULL, NULL);
	}
	if (agi && !agi->error) {
		const struct xk_agi *h = xk_buf_agi(agi);

		walk_tree(s, &xk_inobt_ops, agno, 0, xk_be32_get(h->agi_root),
			  xk_be32_get(h->agi_level), NULL, 0, NULL, NULL);
		if (mp->g.has_finobt)
			walk_tree(s, &xk_finobt_ops, agno, 0,
				  xk_be32_get(h->agi_free_root),
				  xk_be32_get(h->agi_free_level), NULL, 0,
				  NULL, NULL);
		if (inodes) {
			memset(&w, 0, sizeof(w));
			w.ops = &xk_inobt_ops;
			w.agno = agno;
			w.root = xk_be32_get(h->agi_root);
			w.levels = xk_be32_get(h->agi_level);
			w.ctx = s;
			w.rec_fn = inode_rec;
			err = xk_btree_walk(mp, &w);
			if (xk_err_operational(err) && !s->err)
				s->err = err;
		}
	}
	xk_buf_release(agf);
	xk_buf_release(agi);
}

int
db_cmd_check(struct db_ctx *c, int argc, char **argv)
{
	struct scan s;

	(void)argc;
	(void)argv;
	memset(&s, 0, sizeof(s));
	s.c = c;
	for (uint32_t ag = 0; ag < c->mp->g.agcount && !s.err; ag++)
		scan_ag(&s, ag, 1);
	if (s.err) {
		db_err(c, "check stopped: %s", xk_strerror(s.err));
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
	for (uint32_t ag = 0; ag < mp->g.agcount; ag++)
		scan_ag(&s, ag, 1);
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
		free(s.v);
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
	free(s.v);
	if (c->have_cur)
		db_reread(c);
	return rc;
}
