// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * freesp: a histogram of free extent sizes, from each AG's free list and
 * by-block (or, with -c, by-size) btree, with xfs_db's options: -a AG
 * (repeatable), -A alignment (only extents starting on a multiple of it,
 * as filesystem block numbers), -b (power-of-two buckets, the default),
 * -e size (equal buckets), -m mult (buckets at powers of mult), -h low
 * (repeatable: the buckets' lower ends), -d (every extent), -s (totals).
 * The table has the cumulative columns xfs_db 7.2 added.
 *
 * -r reports the realtime volume instead, from its bitmap (neither
 * xfs_db 6.1 nor 7.2 can; xfs_spaceman's freesp -r asks the kernel for
 * the same on a mounted filesystem): each maximal run of free realtime
 * extents is one free extent, counted in filesystem blocks; -a then
 * names realtime groups (a volume without groups is group 0), -d prints
 * each extent's group, block in the group and length, and -A applies to
 * the extent's block number on the realtime device.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/ag.h>
#include <xfskit/btree.h>
#include <xfskit/format/rtgroup.h>
#include <xfskit/rtbitmap.h>

#include "db.h"

struct bucket {
	uint64_t	low, high;
	uint64_t	count, blocks;
};

struct freesp {
	struct db_ctx	*c;
	struct bucket	*b;
	size_t		nb;
	uint32_t	*ags;		/* -a list; none: every AG or group */
	size_t		nags;
	uint64_t	align;
	int		dump;
	int		rt;		/* -r: the realtime volume */
	uint32_t	agno;		/* AG or realtime group being added */
	uint64_t	rt_base;	/* its first realtime block */
	uint64_t	totexts, totblocks;
};

static int
usage(struct db_ctx *c)
{
	db_out(c, "freesp arguments: [-bcds] [-a agno] [-e binsize] "
	       "[-h h1]... [-m binmult]");
	return 1;
}

static int
parse_num(struct db_ctx *c, int opt, const char *s, uint64_t min,
	  uint64_t *v)
{
	if (db_parse_u64(s, v) || *v < min) {
		db_err(c, "freesp: -%c wants a number of at least %llu, "
		       "not \"%s\"", opt, (unsigned long long)min, s);
		return 1;
	}
	return 0;
}

static int
add_low(struct freesp *fs, uint64_t low)
{
	struct bucket *nb = realloc(fs->b, (fs->nb + 1) * sizeof(*nb));

	if (!nb)
		return 1;
	fs->b = nb;
	memset(&nb[fs->nb], 0, sizeof(*nb));
	nb[fs->nb++].low = low ? low : 1;
	return 0;
}

static int
cmp_low(const void *a, const void *b)
{
	const struct bucket *x = a, *y = b;

	return x->low < y->low ? -1 : x->low > y->low;
}

/* Buckets up to maxlen: equal steps, powers of mult, or the -h lows. */
static int
make_buckets(struct freesp *fs, uint64_t equal, uint64_t mult,
	     uint64_t maxlen)
{
	int have1 = 0;

	if (equal) {
		for (uint64_t i = 1; i < maxlen; i += equal)
			if (add_low(fs, i))
				return 1;
	} else if (mult) {
		for (uint64_t i = 1; i < maxlen; i *= mult)
			if (add_low(fs, i))
				return 1;
	} else {
		for (size_t i = 0; i < fs->nb; i++)
			have1 |= fs->b[i].low == 1;
		if (!have1 && add_low(fs, 1))
			return 1;
		qsort(fs->b, fs->nb, sizeof(*fs->b), cmp_low);
	}
	if (fs->nb == 0 && add_low(fs, 1))
		return 1;
	for (size_t i = 0; i < fs->nb; i++)
		fs->b[i].high = i + 1 < fs->nb ? fs->b[i + 1].low - 1 : maxlen;
	return 0;
}

/* An extent at block bno of the AG or group; addr is what -A tests. */
static void
add_extent(struct freesp *fs, uint64_t bno, uint64_t len, uint64_t addr)
{
	if (fs->align && addr % fs->align)
		return;
	if (fs->dump)
		db_out(fs->c, "%8u %8llu %8llu", fs->agno,
		       (unsigned long long)bno, (unsigned long long)len);
	fs->totexts++;
	fs->totblocks += len;
	for (size_t i = 0; i < fs->nb; i++)
		if (fs->b[i].high >= len) {
			fs->b[i].count++;
			fs->b[i].blocks += len;
			break;
		}
}

static void
add_ag_extent(struct freesp *fs, uint32_t agbno, uint64_t len)
{
	uint64_t fsb = ((uint64_t)fs->agno << fs->c->mp->g.agblklog) | agbno;

	add_extent(fs, agbno, len, fsb);
}

static int
alloc_rec(void *ctx, const void *rec)
{
	const struct xk_alloc_rec *r = rec;

	add_ag_extent(ctx, xk_be32_get(r->ar_startblock),
		      xk_be32_get(r->ar_blockcount));
	return 0;
}

/* The free list's live slots, flfirst onwards, count as single blocks. */
static int
scan_agfl(struct freesp *fs, const struct xk_agf *agf)
{
	struct xk_mount *mp = fs->c->mp;
	uint32_t first = xk_be32_get(agf->agf_flfirst);
	uint32_t count = xk_be32_get(agf->agf_flcount);
	uint32_t size = mp->g.agfl_size;
	struct xk_buf *bp;

	if (count == 0)
		return 0;
	if (first >= size || xk_be32_get(agf->agf_fllast) >= size ||
	    count > size) {
		db_err(fs->c, "agf %u freelist blocks bad, skipping freelist "
		       "scan", fs->agno);
		return 1;
	}
	if (xk_agfl_read(mp, fs->agno, 0, &bp)) {
		db_err(fs->c, "AGFL %u cannot be read; skipping its free "
		       "list", fs->agno);
		return 1;
	}
	for (uint32_t i = 0; i < count; i++)
		add_ag_extent(fs, xk_be32_get(*xk_agfl_bno(bp->data,
						(first + i) % size)), 1);
	xk_buf_release(bp);
	return 0;
}

static int
scan_ag(struct freesp *fs, int by_size)
{
	struct xk_mount *mp = fs->c->mp;
	int tree = by_size ? XK_AGF_CNT : XK_AGF_BNO;
	struct xk_btree_walk w;
	struct xk_buf *bp;
	int rc;

	if (xk_agf_read(mp, fs->agno, 0, &bp)) {
		db_err(fs->c, "AGF %u cannot be read; skipping its AG",
		       fs->agno);
		return 1;
	}
	rc = scan_agfl(fs, xk_buf_agf(bp));
	memset(&w, 0, sizeof(w));
	w.ops = by_size ? &xk_cntbt_ops : &xk_bnobt_ops;
	w.agno = fs->agno;
	w.root = xk_be32_get(xk_buf_agf(bp)->agf_roots[tree]);
	w.levels = xk_be32_get(xk_buf_agf(bp)->agf_levels[tree]);
	w.ctx = fs;
	w.rec_fn = alloc_rec;
	xk_buf_release(bp);
	if (xk_btree_walk(mp, &w)) {
		db_err(fs->c, "%s of AG %u is damaged", by_size ? "cntbt" :
		       "bnobt", fs->agno);
		rc = 1;
	}
	return rc;
}

/* A run of free realtime extents of the group at hand, in blocks. */
static void
rt_run(void *ctx, uint64_t start, uint64_t len)
{
	struct freesp *fs = ctx;
	uint32_t rextsize = fs->c->mp->sb.rextsize;

	add_extent(fs, start * rextsize, len * rextsize,
		   fs->rt_base + start * rextsize);
}

static int
scan_rt_group(struct freesp *fs)
{
	const struct xk_sb *sb = &fs->c->mp->sb;
	uint8_t *bm;
	uint64_t nbits;
	int err = db_rt_bitmap_load(fs->c, fs->agno, &bm, &nbits);

	if (err) {
		db_err(fs->c, "skipping realtime group %u", fs->agno);
		return 1;
	}
	fs->rt_base = xk_sb_has_rtgroups(sb) ?
		      (uint64_t)fs->agno * xk_rtg_blocks(sb) : 0;
	xk_rtbitmap_runs(bm, nbits, rt_run, fs);
	free(bm);
	return 0;
}

static int
wanted(const struct freesp *fs, uint32_t agno)
{
	if (fs->nags == 0)
		return 1;
	for (size_t i = 0; i < fs->nags; i++)
		if (fs->ags[i] == agno)
			return 1;
	return 0;
}

static void
print_table(struct freesp *fs)
{
	uint64_t ext_above = fs->totexts, blk_above = fs->totblocks;

	db_out(fs->c, "%7s %7s %7s %6s %6s %6s %6s", "from", "to", "extents",
	       "blocks", "pct", "blkcdf", "extcdf");
	for (size_t i = 0; i < fs->nb; i++) {
		const struct bucket *b = &fs->b[i];

		if (!b->count)
			continue;
		db_out(fs->c, "%7llu %7llu %7llu %6llu %6.2f %6.2f %6.2f",
		       (unsigned long long)b->low,
		       (unsigned long long)b->high,
		       (unsigned long long)b->count,
		       (unsigned long long)b->blocks,
		       b->blocks * 100.0 / fs->totblocks,
		       blk_above * 100.0 / fs->totblocks,
		       ext_above * 100.0 / fs->totexts);
		ext_above -= b->count;
		blk_above -= b->blocks;
	}
}

int
db_cmd_freesp(struct db_ctx *c, int argc, char **argv)
{
	struct freesp fs = { .c = c };
	uint64_t equal = 0, mult = 0, v, maxlen = c->mp->g.agblocks;
	uint32_t ngroups = c->mp->g.agcount;
	int by_size = 0, summary = 0, speced = 0, opt, rc = 0;

	optind = 0;		/* GNU getopt: start over for this command */
	while ((opt = getopt(argc, argv, "A:a:bcde:h:m:rs")) != -1) {
		switch (opt) {
		case 'A':
			if (parse_num(c, opt, optarg, 1, &fs.align))
				goto bad;
			break;
		case 'a': {
			uint32_t *n;

			if (parse_num(c, opt, optarg, 0, &v))
				goto bad;
			if (v > UINT32_MAX)
				v = UINT32_MAX;
			n = realloc(fs.ags, (fs.nags + 1) * sizeof(*n));
			if (!n)
				goto nomem;
			fs.ags = n;
			fs.ags[fs.nags++] = (uint32_t)v;
			break;
		}
		case 'b':
		case 'e':
		case 'm':
			if (speced)
				goto usage;
			speced = 1;
			if (opt == 'b')
				mult = 2;
			else if (parse_num(c, opt, optarg, opt == 'm' ? 2 : 1,
					   opt == 'm' ? &mult : &equal))
				goto bad;
			break;
		case 'h':
			if (speced && fs.nb == 0)
				goto usage;
			speced = 1;
			if (parse_num(c, opt, optarg, 0, &v))
				goto bad;
			if (add_low(&fs, v))
				goto nomem;
			break;
		case 'c':
			by_size = 1;
			break;
		case 'd':
			fs.dump = 1;
			break;
		case 'r':
			fs.rt = 1;
			break;
		case 's':
			summary = 1;
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc)
		goto usage;
	if (!speced)
		mult = 2;
	if (fs.rt && !c->mp->sb.rextents) {
		db_err(c, "freesp: the filesystem has no realtime volume");
		goto bad;
	}
	if (fs.rt && xk_sb_has_rtgroups(&c->mp->sb)) {
		ngroups = c->mp->sb.rgcount;
		maxlen = xk_rtg_blocks(&c->mp->sb);
	} else if (fs.rt) {
		ngroups = 1;
		maxlen = c->mp->sb.rextents * c->mp->sb.rextsize;
	}
	for (size_t i = 0; i < fs.nags; i++) {
		if (fs.ags[i] < ngroups)
			continue;
		db_err(c, "freesp: %s %u does not exist (the filesystem has "
		       "%u)", fs.rt ? "realtime group" : "AG", fs.ags[i],
		       ngroups);
		goto bad;
	}
	if (make_buckets(&fs, equal, mult, maxlen))
		goto nomem;
	if (fs.dump)
		db_out(c, "%8s %8s %8s", fs.rt ? "rgno" : "agno",
		       fs.rt ? "rgbno" : "agbno", "len");
	for (fs.agno = 0; fs.agno < ngroups; fs.agno++)
		if (wanted(&fs, fs.agno))
			rc |= fs.rt ? scan_rt_group(&fs) : scan_ag(&fs, by_size);
	print_table(&fs);
	if (summary) {
		db_out(c, "total free extents %llu",
		       (unsigned long long)fs.totexts);
		db_out(c, "total free blocks %llu",
		       (unsigned long long)fs.totblocks);
		db_out(c, "average free extent size %g", fs.totexts ?
		       (double)fs.totblocks / (double)fs.totexts : 0.0);
	}
	free(fs.b);
	free(fs.ags);
	return rc;
nomem:
	db_err(c, "freesp: out of memory");
	goto bad;
usage:
	usage(c);
bad:
	free(fs.b);
	free(fs.ags);
	return 1;
}
