// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fork reader (fork.h): an inode fork's extent list or bmbt turned
 * into the list of its mappings, complete or refused, or salvaged and
 * marked partial when the caller asks for that.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/libfs.h>
#include <xfskit/fork.h>

struct fork_read {
	struct xk_mount		*mp;
	uint64_t		ino;
	int			whichfork;
	unsigned int		flags;
	struct xk_fork_map	*map;
	uint64_t		next_off;	/* lowest offset still free */
	uint64_t		nrecs;		/* records met, good or bad */
	unsigned int		nproblems;
	int			err;		/* operational error */
	/* The block just read is dirty and only its CRC failed. */
	int			fresh_crc;
	unsigned int		ignored;	/* problems forgiven for it */
};

/* Make room for one more element of size sz in *v (n used, *cap held). */
static int
grow(void **v, uint64_t *cap, uint64_t n, size_t sz)
{
	uint64_t ncap;
	void *nv;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	if (ncap > SIZE_MAX / sz)
		return -ENOMEM;
	nv = realloc(*v, ncap * sz);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

static const char *
fork_name(int whichfork)
{
	return whichfork == XK_DATA_FORK ? "data fork" : "attr fork";
}

/* Count a problem; keep the first, and all of them when salvaging. */
static void
fr_problem(struct fork_read *fr, const struct xk_fail *f)
{
	struct xk_fork_map *map = fr->map;

	if (!fr->nproblems++)
		map->first = *f;
	if (!(fr->flags & XK_FORK_SALVAGE))
		return;
	if (grow((void **)&map->prob, &map->prob_cap, map->nprob,
		 sizeof(*map->prob))) {
		if (!fr->err)
			fr->err = -ENOMEM;
		return;
	}
	map->prob[map->nprob].at = map->next;
	map->prob[map->nprob++].fail = *f;
}

static void __attribute__((format(printf, 3, 4)))
fr_problemf(struct fork_read *fr, const char *check, const char *fmt, ...)
{
	struct xk_fail f;
	va_list ap;

	memset(&f, 0, sizeof(f));
	f.structure = fork_name(fr->whichfork);
	f.agno = -1;
	f.ino = fr->ino;
	f.daddr = XK_NO_DADDR;
	f.check = check;
	va_start(ap, fmt);
	vsnprintf(f.detail, sizeof(f.detail), fmt, ap);
	va_end(ap);
	fr_problem(fr, &f);
}

/* Whether the read should stop: an operational error, or a problem
 * with no salvage asked for. */
static int
fr_stop(const struct fork_read *fr)
{
	return fr->err || (fr->nproblems && !(fr->flags & XK_FORK_SALVAGE));
}

/* One mapping, checked first when the caller asked (rules in fork.h). */
static void
fr_mapping(struct fork_read *fr, const struct xk_bmbt_irec *r)
{
	struct xk_fork_map *map = fr->map;

	fr->nrecs++;
	if (fr->flags & XK_FORK_CHECK) {
		if (r->blockcount == 0 ||
		    !xk_fsbext_valid(fr->mp, r->startblock, r->blockcount) ||
		    !xk_fileext_valid(fr->mp, r->startoff, r->blockcount)) {
			fr_problemf(fr, "extent", "extent %llu: offset %llu, "
				    "block %llu, length %llu is not valid",
				    (unsigned long long)(fr->nrecs - 1),
				    (unsigned long long)r->startoff,
				    (unsigned long long)r->startblock,
				    (unsigned long long)r->blockcount);
			return;
		}
		if (r->startoff < fr->next_off) {
			fr_problemf(fr, "extent order", "extent at offset "
				    "%llu overlaps or precedes the one before",
				    (unsigned long long)r->startoff);
			return;
		}
		fr->next_off = r->startoff + r->blockcount;
	}
	if (grow((void **)&map->ext, &map->ext_cap, map->next,
		 sizeof(*map->ext))) {
		fr->err = -ENOMEM;
		return;
	}
	map->ext[map->next++] = *r;
	map->nblocks += r->blockcount;
}

static int
fr_rec(void *ctx, const void *rec)
{
	struct fork_read *fr = ctx;
	struct xk_bmbt_irec r;

	xk_bmbt_rec_unpack(rec, &r);
	fr_mapping(fr, &r);
	return fr_stop(fr);
}

static int
fr_block(void *ctx, unsigned int level, uint64_t bno, struct xk_buf *bp)
{
	struct fork_read *fr = ctx;
	struct xk_fork_map *map = fr->map;

	fr->fresh_crc = (fr->flags & XK_FORK_DIRTY_CRC_OK) &&
			bp->error == XK_EBADCRC && (bp->flags & XK_BUF_DIRTY);
	if (!(fr->flags & XK_FORK_BLOCKS))
		return fr_stop(fr);
	if (grow((void **)&map->blk, &map->blk_cap, map->nblk,
		 sizeof(*map->blk))) {
		fr->err = -ENOMEM;
		return 1;
	}
	map->blk[map->nblk++] = (struct xk_fork_block){
		.fsb = bno, .level = (uint16_t)level,
		.numrecs = xk_btree_block_numrecs(bp->data),
		.error = fr->fresh_crc ? 0 : bp->error,
	};
	return fr_stop(fr);
}

static void
fr_fail(void *ctx, const struct xk_fail *f)
{
	struct fork_read *fr = ctx;

	if (fr->fresh_crc && f->crc_bad) {
		fr->fresh_crc = 0;
		fr->ignored++;
		return;
	}
	fr_problem(fr, f);
}

static void
read_extents(struct fork_read *fr, const uint8_t *p, unsigned int size,
	     const struct xk_dinode *dip)
{
	uint64_t nex = xk_dinode_fork_nextents(dip, fr->whichfork);
	uint64_t fit = size / sizeof(struct xk_bmbt_rec);

	if (nex > fit) {
		fr_problemf(fr, "nextents", "%llu extents do not fit %u bytes",
			    (unsigned long long)nex, size);
		nex = fit;
	}
	for (uint64_t i = 0; i < nex && !fr_stop(fr); i++) {
		struct xk_bmbt_irec r;

		xk_bmbt_rec_unpack((const struct xk_bmbt_rec *)
				   (p + i * sizeof(struct xk_bmbt_rec)), &r);
		fr_mapping(fr, &r);
	}
}

static void
read_btree(struct fork_read *fr, const uint8_t *p, unsigned int size)
{
	struct xk_btree_walk w = {
		.ops = &xk_bmbt_ops, .agno = -1, .owner = fr->ino,
		.iroot = p, .iroot_size = size,
		.ctx = fr, .rec_fn = fr_rec, .block_fn = fr_block,
		.fail_fn = fr_fail,
	};
	int err;

	if (size < sizeof(struct xk_bmdr_block)) {
		fr_problemf(fr, "root", "fork of %u bytes is too small for "
			    "a bmbt root", size);
		return;
	}
	fr->map->root_level = xk_get_be16(p);
	fr->map->root_numrecs = xk_get_be16(p + 2);
	/* The walker bounds the root's level and records by the fork. */
	w.levels = fr->map->root_level + 1u;
	err = xk_btree_walk(fr->mp, &w);
	if (fr->err)
		return;
	if (w.read_err) {
		fr->err = w.read_err;
		return;
	}
	if (err < 0 && err != XK_ECORRUPT) {
		fr->err = err;
		return;
	}
	if (err == XK_ECORRUPT && !fr->nproblems &&
	    w.nproblems > fr->ignored)
		fr_problemf(fr, "bmbt", "the bmbt cannot be walked");
}

static void
map_empty(struct xk_fork_map *map)
{
	map->next = map->nblocks = map->nblk = map->nprob = 0;
	map->root_level = map->root_numrecs = 0;
	map->partial = 0;
}

int
xk_fork_read(struct xk_mount *mp, uint64_t ino, const struct xk_dinode *dip,
	     int whichfork, unsigned int flags, struct xk_fork_map *map)
{
	struct fork_read fr = {
		.mp = mp, .ino = ino, .whichfork = whichfork, .flags = flags,
		.map = map,
	};
	unsigned int litino = xk_dinode_litino(mp->g.inodesize);
	const uint8_t *p;
	unsigned int size;

	map_empty(map);
	memset(&map->first, 0, sizeof(map->first));
	if (whichfork != XK_DATA_FORK && whichfork != XK_ATTR_FORK)
		return -EINVAL;
	if (whichfork == XK_ATTR_FORK && !dip->di_forkoff)
		return 0;
	/* The fork sizes below trust di_forkoff: bound it first. */
	if (xk_dinode_forkoff_bytes(dip) > litino) {
		fr_problemf(&fr, "forkoff", "attr fork offset %u is past the "
			    "%u bytes of the inode's literal area",
			    xk_dinode_forkoff_bytes(dip), litino);
		goto done;
	}
	p = xk_dfork_ptr(dip, whichfork);
	size = xk_dfork_size(dip, mp->g.inodesize, whichfork);
	switch (xk_dfork_format(dip, whichfork)) {
	case XK_DINODE_FMT_EXTENTS:
		read_extents(&fr, p, size, dip);
		break;
	case XK_DINODE_FMT_BTREE:
		read_btree(&fr, p, size);
		break;
	case XK_DINODE_FMT_LOCAL:
	case XK_DINODE_FMT_DEV:
		break;
	default:
		fr_problemf(&fr, "format", "fork format %d is unknown",
			    xk_dfork_format(dip, whichfork));
		break;
	}
done:
	if (fr.err) {
		map_empty(map);
		return fr.err;
	}
	if (!fr.nproblems)
		return 0;
	if (flags & XK_FORK_SALVAGE)
		map->partial = 1;
	else
		map_empty(map);
	return XK_ECORRUPT;
}

void
xk_fork_map_free(struct xk_fork_map *map)
{
	free(map->ext);
	free(map->blk);
	free(map->prob);
	memset(map, 0, sizeof(*map));
}

const struct xk_bmbt_irec *
xk_fork_map_lookup(const struct xk_fork_map *map, uint64_t off)
{
	uint64_t lo = 0, hi = map->next;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const struct xk_bmbt_irec *e = &map->ext[mid];

		if (off < e->startoff)
			hi = mid;
		else if (off >= e->startoff + e->blockcount)
			lo = mid + 1;
		else
			return e;
	}
	return NULL;
}
