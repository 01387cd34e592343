// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Directories: short-form directories in the inode, and block, leaf and
 * node directories in their data fork.  Each block goes through its
 * libfs verifier (chosen by where it sits in the directory's address
 * space and by its magic); the entries are then recorded for the
 * link-count and connectivity phase, with "." and ".." checked here.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "repair.h"
#include "da.h"
#include "readahead.h"

#include <xfskit/format/da.h>
#include <xfskit/format/dir.h>
#include <xfskit/sort.h>

void
note_edge(struct repair_ctx *rc, uint64_t parent, uint64_t child,
	  uint8_t ftype)
{
	const struct edge e = { parent, child, ftype };

	/* A lost entry would make false link-count findings: stop. */
	if (xk_vec_push(&rc->scan.edge_vec, &e, sizeof(e)))
		repair_error(rc, -ENOMEM, "listing the entries of directory "
			     "%llu", (unsigned long long)parent);
}

void
note_dotdot(struct repair_ctx *rc, uint64_t dir, uint64_t parent)
{
	/* The directory's own inode_info is the one most recently added. */
	if (rc->scan.ninodes && rc->scan.inodes[rc->scan.ninodes - 1].ino == dir)
		rc->scan.inodes[rc->scan.ninodes - 1].parent = parent;
}

static int
name_ok(const uint8_t *name, unsigned int len)
{
	if (len == 0)
		return 0;
	for (unsigned int i = 0; i < len; i++)
		if (name[i] == 0 || name[i] == '/')
			return 0;
	return 1;
}

/*
 * Short form.  Rules: the header and every entry lie inside di_size,
 * which lies inside the fork; count entries exactly; i8count is the
 * number of inode numbers that need 8 bytes; names are non-empty with no
 * '/' or NUL; offsets strictly increase; inode numbers are possible;
 * ".." (the parent field) is a possible inode.
 */
static void
check_shortform(struct repair_ctx *rc, uint64_t ino,
		const struct xk_dinode *dip)
{
	struct xk_mount *mp = rc->mp;
	const struct xk_dir2_sf_hdr *h = (const void *)xk_dfork_dptr(dip);
	uint64_t size = xk_be64_get(dip->di_size);
	unsigned int fsize = xk_dfork_dsize(dip, mp->g.inodesize);
	const uint8_t *end = (const uint8_t *)h + size;
	const struct xk_dir2_sf_entry *e;
	unsigned int i8 = 0, prev_off = 0;
	uint64_t parent;
	int ftype = mp->g.has_ftype;

	if (size > fsize || size < xk_dir2_sf_hdr_size(h->i8count)) {
		report(rc, PR_DIR_BAD, "directory", -1, ino, XK_NO_DADDR,
		       "size", "short-form size %llu does not fit the %u-byte "
		       "fork", (unsigned long long)size, fsize);
		return;
	}
	parent = xk_dir2_sf_get_parent(h);
	if (!xk_ino_valid(mp, parent))
		report(rc, PR_DIR_BAD, "directory", -1, ino, XK_NO_DADDR,
		       "parent", "\"..\" names impossible inode %llu",
		       (unsigned long long)parent);
	else
		note_dotdot(rc, ino, parent);
	if (parent > XK_DIR2_MAX_SHORT_INUM)
		i8++;
	e = xk_dir2_sf_firstentry(h);
	for (unsigned int n = 0; n < h->count; n++) {
		uint64_t child;
		unsigned int off;

		if ((const uint8_t *)e + sizeof(*e) > end ||
		    (const uint8_t *)e + xk_dir2_sf_entsize(h, e->namelen,
							    ftype) > end) {
			report(rc, PR_DIR_BAD, "directory", -1, ino,
			       XK_NO_DADDR, "count", "entry %u of %u runs "
			       "past the %llu-byte short form", n, h->count,
			       (unsigned long long)size);
			return;
		}
		if (!name_ok(e->name, e->namelen))
			report(rc, PR_DIR_BAD, "directory", -1, ino,
			       XK_NO_DADDR, "name", "entry %u has an invalid "
			       "name", n);
		off = xk_dir2_sf_get_offset(e);
		if (n && off <= prev_off)
			report(rc, PR_DIR_BAD, "directory", -1, ino,
			       XK_NO_DADDR, "offset", "entry %u's offset %u "
			       "is not above the previous %u", n, off,
			       prev_off);
		prev_off = off;
		child = xk_dir2_sf_get_ino(h, e, ftype);
		if (child > XK_DIR2_MAX_SHORT_INUM)
			i8++;
		if (!xk_ino_valid(mp, child))
			report(rc, PR_DIR_BAD, "directory", -1, ino,
			       XK_NO_DADDR, "inumber", "entry %u names "
			       "impossible inode %llu", n,
			       (unsigned long long)child);
		else
			note_edge(rc, ino, child, ftype ?
				  e->name[e->namelen] : EDGE_NO_FTYPE);
		e = xk_dir2_sf_nextentry(h, e, ftype);
	}
	if ((const uint8_t *)e != end)
		report(rc, PR_DIR_BAD, "directory", -1, ino, XK_NO_DADDR,
		       "size", "%u entries end at byte %td of %llu",
		       h->count, (const uint8_t *)e - (const uint8_t *)h,
		       (unsigned long long)size);
	if (i8 != h->i8count)
		report(rc, PR_DIR_BAD, "directory", -1, ino, XK_NO_DADDR,
		       "i8count", "header says %u wide inode numbers, found "
		       "%u", h->i8count, i8);
}

/* An entry as the hash index must see it: (address, hash of its name). */
struct dirent_ref {
	uint32_t	addr;
	uint32_t	hash;
};

/* A data block's largest free region not known (unread, bad). */
#define BEST_UNKNOWN	0x10000u

struct dir_state {
	struct repair_ctx	*rc;
	uint64_t		ino;
	struct dirent_ref	*data, *leaf;
	size_t			ndata, capdata, nleaf, capleaf;
	/* Per data block: its largest free length, a hole's NULL_DATAOFF. */
	uint32_t		*best;
	size_t			nbest;
};

/* Record data block db's largest free region (BEST_UNKNOWN: not read). */
static void
note_best(struct dir_state *ds, uint64_t db, uint32_t len)
{
	if (db >= ds->nbest) {
		size_t n = (size_t)db + 1;
		uint32_t *nv = xk_realloc(ds->best, n * sizeof(*nv));

		/* A block left out would make a false bests finding. */
		if (!nv) {
			repair_error(ds->rc, -ENOMEM, "recording the free "
				     "space of directory %llu",
				     (unsigned long long)ds->ino);
			return;
		}
		for (size_t i = ds->nbest; i < n; i++)
			nv[i] = XK_DIR2_NULL_DATAOFF;
		ds->best = nv;
		ds->nbest = n;
	}
	ds->best[db] = len;
}

/*
 * A "bests" array (a free-index block's, or a leaf block's tail) against
 * the data blocks: entry i, for data block firstdb + i, holds that
 * block's largest free length, or NULL_DATAOFF where there is no block.
 */
static void
check_bests(struct dir_state *ds, const xk_be16 *bests, uint32_t n,
	    uint32_t firstdb, uint64_t daddr)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t db = (uint64_t)firstdb + i;
		uint32_t want = db < ds->nbest ? ds->best[db] :
				XK_DIR2_NULL_DATAOFF;
		uint16_t got = xk_be16_get(bests[i]);

		if (want == BEST_UNKNOWN || got == want)
			continue;
		report(ds->rc, PR_DIR_BAD, "directory", -1, ds->ino, daddr,
		       "bests", "free index entry for data block %llu says "
		       "%u, the block's largest free region is %u",
		       (unsigned long long)db, got, want);
		return;
	}
}

/* A reference left out would make a false index finding: stop. */
static void
push_ref(struct dir_state *ds, struct dirent_ref **v, size_t *n, size_t *cap,
	 uint32_t addr, uint32_t hash)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct dirent_ref *nv = xk_realloc(*v, ncap * sizeof(**v));

		if (!nv) {
			repair_error(ds->rc, -ENOMEM, "checking the hash "
				     "index of directory %llu",
				     (unsigned long long)ds->ino);
			return;
		}
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = (struct dirent_ref){ addr, hash };
}

static int
cmp_ref(const void *a, const void *b)
{
	const struct dirent_ref *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->hash > y->hash) - (x->hash < y->hash);
}

/*
 * Entries of one data (or block) block: record them for the link phase
 * and the hash index check; "." and ".." open the first block.
 */
static void
scan_data_entries(struct dir_state *ds, struct xk_buf *bp, uint32_t end,
		  uint32_t db)
{
	struct repair_ctx *rc = ds->rc;
	uint64_t ino = ds->ino;
	int ftype = rc->mp->g.has_ftype;
	unsigned int dblog = rc->mp->g.blocklog + rc->mp->g.dirblklog;
	uint32_t p = sizeof(struct xk_dir3_data_hdr);
	int idx = 0;

	while (p + 8 <= end) {
		const uint8_t *at = bp->data + p;
		const struct xk_dir2_data_entry *e = (const void *)at;
		uint64_t child;
		uint8_t ft;

		if (xk_dir2_data_is_unused(at)) {
			p += xk_get_be16(at + 2);
			continue;
		}
		child = xk_be64_get(e->inumber);
		ft = ftype ? e->name[e->namelen] : 0;
		push_ref(ds, &ds->data, &ds->ndata, &ds->capdata,
			 xk_dir2_db_off_to_dataptr(db, p, dblog),
			 xk_da_hashname(e->name, e->namelen));
		if (db == 0 && idx == 0) {
			if (e->namelen != 1 || e->name[0] != '.' ||
			    child != ino)
				report(rc, PR_DIR_BAD, "directory", -1, ino,
				       bp->daddr, "dot", "first entry is not "
				       "\".\" naming the directory itself");
			else if (ftype && ft != XK_DIR3_FT_DIR)
				report(rc, PR_DIR_BAD, "directory", -1, ino,
				       bp->daddr, "ftype", "\".\" has file type "
				       "%u", ft);
		} else if (db == 0 && idx == 1) {
			if (e->namelen != 2 || memcmp(e->name, "..", 2))
				report(rc, PR_DIR_BAD, "directory", -1, ino,
				       bp->daddr, "dotdot", "second entry is "
				       "not \"..\"");
			else
				note_dotdot(rc, ino, child);
			if (ftype && ft != XK_DIR3_FT_DIR)
				report(rc, PR_DIR_BAD, "directory", -1, ino,
				       bp->daddr, "ftype", "\"..\" has file "
				       "type %u", ft);
		} else {
			note_edge(rc, ino, child, ftype ? ft : EDGE_NO_FTYPE);
		}
		idx++;
		p += xk_dir3_data_entsize(e->namelen, ftype);
	}
}

static void
collect_leaf_ents(struct dir_state *ds, const struct xk_dir2_leaf_entry *le,
		  uint32_t count)
{
	for (uint32_t i = 0; i < count; i++)
		if (xk_be32_get(le[i].address) != XK_DIR2_NULL_DATAPTR)
			push_ref(ds, &ds->leaf, &ds->nleaf, &ds->capleaf,
				 xk_be32_get(le[i].address),
				 xk_be32_get(le[i].hashval));
}

static int64_t
dir_leaf_fn(void *ctx, struct xk_buf *bp, uint64_t lblk)
{
	struct dir_state *ds = ctx;
	const struct xk_dir3_leaf_hdr *lh = (const void *)bp->data;
	uint32_t count = xk_be16_get(lh->count);

	(void)lblk;
	collect_leaf_ents(ds, xk_dir3_leaf_ents(lh), count);
	if (xk_be16_get(lh->info.hdr.magic) == XK_DIR3_LEAF1_MAGIC) {
		const struct xk_dir2_leaf_tail *t =
			xk_dir2_leaf_tail_p(bp->data, bp->len);
		uint32_t nb = xk_be32_get(t->bestcount);

		if ((uint64_t)nb * 2 + sizeof(*t) + sizeof(*lh) <= bp->len)
			check_bests(ds, xk_dir2_leaf_bests_p(t), nb, 0,
				    bp->daddr);
	}
	return count ? xk_be32_get(xk_dir3_leaf_ents(lh)[count - 1].hashval) :
		       0;
}

/*
 * Sort by (address, hash) in linear time: the data entries arrive in
 * address order already (blocks in file order, entries in block order),
 * and the index in hash order, which a stable counting sort on the
 * address keeps within equal addresses.  Only a damaged index repeats an
 * address, so the hash order of such runs is then made sure of with a
 * comparison sort.  This replaced two qsort calls that took a seventh of
 * the check's time on a tree of large directories.
 */
static void
sort_refs(struct dirent_ref *v, size_t n)
{
	xk_sort_by_u32(v, n, sizeof(*v), offsetof(struct dirent_ref, addr), 0,
		       cmp_ref);
}

/* Every entry indexed exactly once, under its own hash, and no more. */
static void
match_index(struct dir_state *ds)
{
	size_t i = 0, j = 0, reported = 0;

	sort_refs(ds->data, ds->ndata);
	sort_refs(ds->leaf, ds->nleaf);
	while ((i < ds->ndata || j < ds->nleaf) && reported < 10) {
		int c = i >= ds->ndata ? 1 : j >= ds->nleaf ? -1 :
			cmp_ref(&ds->data[i], &ds->leaf[j]);

		if (c == 0) {
			i++, j++;
			continue;
		}
		if (c < 0) {
			report(ds->rc, PR_DIR_BAD, "directory", -1, ds->ino,
			       XK_NO_DADDR, "leaf", "entry at address 0x%x "
			       "(hash 0x%x) is missing from the hash index",
			       ds->data[i].addr, ds->data[i].hash);
			i++;
		} else {
			report(ds->rc, PR_DIR_BAD, "directory", -1, ds->ino,
			       XK_NO_DADDR, "leaf", "hash index entry 0x%x -> "
			       "0x%x matches no directory entry",
			       ds->leaf[j].hash, ds->leaf[j].addr);
			j++;
		}
		reported++;
	}
}

/*
 * Hint every block of a directory before its walk: its blocks lie
 * between the inode chunks, where the inode scan's readahead does not
 * reach, and reading them one by one waited for the disk once per
 * block on a cold cache.  Neighbouring extents go as one request.
 */
static void
readahead_map(struct repair_ctx *rc, const struct fork_map *map)
{
	struct xk_mount *mp = rc->mp;
	uint64_t total = 0;
	struct ra_plan ra;

	if (rc->opt.no_prefetch)
		return;
	ra_init(&ra, mp->dev);
	/* A huge directory is hinted only at its start. */
	for (size_t i = 0; i < map->n && total < (16ULL << 20); i++) {
		const struct xk_bmbt_irec *r = &map->v[i];
		uint64_t len = r->blockcount << mp->g.blocklog;

		if (!xk_fsbext_valid(mp, r->startblock, r->blockcount))
			continue;
		if (len > (16ULL << 20))
			len = 16ULL << 20;
		ra_add(&ra, xk_fsb_to_daddr(mp, r->startblock) << XK_BBSHIFT,
		       len);
		total += len;
	}
	/* Hint everything: the walk reads all of it next. */
	if (ra.n)
		ra_step(&ra, ra.n - 1);
	ra_free(&ra);
}

static struct xk_buf *
read_dir_block(struct dir_state *ds, uint64_t fsb,
	       const struct xk_buf_ops *ops, int *errp)
{
	struct xk_mount *mp = ds->rc->mp;
	struct xk_buf *bp;

	*errp = xk_buf_read_ctx(mp, xk_fsb_to_daddr(mp, fsb), mp->g.dirblksize,
				ops, -1, ds->ino, XK_READ_SALVAGE, &bp);
	if (!bp && repair_oserr(ds->rc, *errp, "reading a block of directory "
				"%llu", (unsigned long long)ds->ino))
		return NULL;
	if (*errp && bp)
		fix_problem(ds->rc, PR_DIR_BAD, &bp->fail);
	else if (*errp)
		report(ds->rc, PR_DIR_BAD, "directory", -1, ds->ino,
		       XK_NO_DADDR, "read", "%s", xk_strerror(*errp));
	/* A bad CRC alone leaves the structure readable. */
	if (*errp && *errp != XK_EBADCRC) {
		xk_buf_release(bp);
		return NULL;
	}
	return bp;
}

/*
 * Block, leaf and node directories.  Each directory block must be mapped
 * whole and contiguously.  Data blocks live below the leaf offset and go
 * through the data (or, alone at 0, the block) verifier; the leaf space
 * is walked as a dabtree from its first block, every block of it must be
 * reached; free-index blocks above the free offset go through theirs.
 * Finally the hash index must hold exactly the entries, by address and
 * name hash.
 */
static void
check_blocks(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip,
	     const struct fork_map *map)
{
	struct xk_mount *mp = rc->mp;
	unsigned int dblog = mp->g.dirblklog;
	uint32_t dbsize = mp->g.dirblksize;
	uint64_t leaf_fsb = XK_DIR2_LEAF_OFFSET >> mp->g.blocklog;
	uint64_t free_fsb = XK_DIR2_FREE_OFFSET >> mp->g.blocklog;
	uint64_t size = xk_be64_get(dip->di_size);
	struct dir_state ds = { .rc = rc, .ino = ino };
	int block_form = 0, have_leaf_space = 0;
	uint64_t *leafblks = NULL;
	size_t nleafblks = 0;
	/*
	 * Block form, as the kernel decides it: one directory block of data
	 * space and nothing mapped beyond it.  A leaf directory whose names
	 * fit one data block has the same size but a leaf block too.
	 */
	uint64_t last_off = map->n ? map->v[map->n - 1].startoff +
				     map->v[map->n - 1].blockcount : 0;

	uint64_t data_end = 0;

	for (size_t i = 0; i < map->n; i++) {
		uint64_t e = xk_dir2_mapping_data_end(map->v[i].startoff,
						      map->v[i].blockcount,
						      mp->g.blocklog);

		if (e > data_end)
			data_end = e;
	}
	/*
	 * The kernel keeps a directory's size where its data blocks end
	 * (xfs_repair checks only that it is past the inode's fork).
	 */
	if (size != data_end && data_end) {
		report(rc, PR_DIR_BAD, "directory", -1, ino, XK_NO_DADDR,
		       "size", "size %llu, but its data blocks end at %llu",
		       (unsigned long long)size,
		       (unsigned long long)data_end);
		plan_inode(rc, ino, IFIX_DIR_SIZE, data_end);
		size = data_end;
	}
	readahead_map(rc, map);
	for (size_t i = 0; i < map->n; i++) {
		const struct xk_bmbt_irec *r = &map->v[i];
		uint64_t first = (r->startoff + (1ULL << dblog) - 1) &
				 ~((1ULL << dblog) - 1);

		for (uint64_t off = first; off < r->startoff + r->blockcount;
		     off += 1ULL << dblog) {
			const struct xk_buf_ops *ops;
			struct xk_buf *bp;
			uint64_t contig, fsb;
			int err;

			fsb = fork_map_lookup(map, off, &contig);
			if (fsb == XK_NULLFSBLOCK || contig < (1ULL << dblog)) {
				report(rc, PR_DIR_BAD, "directory", -1, ino,
				       XK_NO_DADDR, "mapping", "directory "
				       "block at file block %llu is not "
				       "mapped whole and contiguously",
				       (unsigned long long)off);
				continue;
			}
			if (off >= leaf_fsb && off < free_fsb) {
				uint64_t *nv = xk_realloc(leafblks,
					(nleafblks + 1) * sizeof(*nv));

				if (!nv) {
					repair_error(rc, -ENOMEM, "checking "
						     "directory %llu",
						     (unsigned long long)ino);
					goto out;
				}
				leafblks = nv;
				leafblks[nleafblks++] = off;
				have_leaf_space = 1;
				continue;
			}
			if (off >= free_fsb) {
				bp = read_dir_block(&ds, fsb,
						    &xk_dir3_free_buf_ops, &err);
				if (bp && !err &&
				    xk_be32_get(((const struct xk_dir3_free_hdr *)
						 bp->data)->nvalid) <=
				    (bp->len - sizeof(struct xk_dir3_free_hdr)) / 2) {
					const struct xk_dir3_free_hdr *fh =
						(const void *)bp->data;

					check_bests(&ds, xk_dir3_free_bests(fh),
						    xk_be32_get(fh->nvalid),
						    xk_be32_get(fh->firstdb),
						    bp->daddr);
				}
				xk_buf_release(bp);
				continue;
			}
			ops = &xk_dir3_data_buf_ops;
			if (off == 0 && size == dbsize && last_off ==
			    (1ULL << dblog)) {
				ops = &xk_dir3_block_buf_ops;
				block_form = 1;
			}
			bp = read_dir_block(&ds, fsb, ops, &err);
			if (rc->found.error)
				goto out;
			note_best(&ds, off >> dblog, bp && !err ?
				  xk_be16_get(((const struct xk_dir3_data_hdr *)
					       bp->data)->best_free[0].length) :
				  BEST_UNKNOWN);
			if (!bp)
				continue;
			if (block_form) {
				const struct xk_dir2_block_tail *t =
					xk_dir2_block_tail_p(bp->data, dbsize);
				const struct xk_dir2_leaf_entry *le =
					xk_dir2_block_leaf_p(t);

				scan_data_entries(&ds, bp,
					(uint32_t)((const uint8_t *)le -
						   bp->data), 0);
				collect_leaf_ents(&ds, le,
						  xk_be32_get(t->count));
			} else {
				scan_data_entries(&ds, bp, dbsize,
					(uint32_t)(off >> dblog));
			}
			xk_buf_release(bp);
		}
	}
	if (have_leaf_space) {
		struct da_walk dw = {
			.rc = rc, .ino = ino, .map = map, .blksize = dbsize,
			.fsb_per_blk = 1u << dblog, .pr = PR_DIR_BAD,
			.what = "directory",
			.leaf_magic = XK_DIR3_LEAFN_MAGIC,
			.leaf_ops = &xk_dir3_leafn_buf_ops,
			.root_leaf_magic = XK_DIR3_LEAF1_MAGIC,
			.root_leaf_ops = &xk_dir3_leaf1_buf_ops,
			.leaf_fn = dir_leaf_fn, .ctx = &ds,
		};

		if (da_walk(&dw, leaf_fsb)) {
			free(dw.reached);
			goto out;
		}
		for (size_t i = 0; i < nleafblks; i++) {
			size_t k;

			for (k = 0; k < dw.nreached; k++)
				if (dw.reached[k] == leafblks[i])
					break;
			if (k == dw.nreached)
				report(rc, PR_DIR_BAD, "directory", -1, ino,
				       XK_NO_DADDR, "leaf", "leaf space block "
				       "%llu is not reachable from the root",
				       (unsigned long long)leafblks[i]);
		}
		free(dw.reached);
	} else if (!block_form && map->n) {
		report(rc, PR_DIR_BAD, "directory", -1, ino, XK_NO_DADDR,
		       "leaf", "no hash index (leaf or block tail) found");
	}
	if ((block_form || have_leaf_space) && !rc->found.error)
		match_index(&ds);
out:
	free(leafblks);
	free(ds.data);
	free(ds.leaf);
	free(ds.best);
}

void
check_directory(struct repair_ctx *rc, uint64_t ino,
		const struct xk_dinode *dip, const struct fork_map *map)
{
	switch (dip->di_format) {
	case XK_DINODE_FMT_LOCAL:
		check_shortform(rc, ino, dip);
		break;
	case XK_DINODE_FMT_EXTENTS:
	case XK_DINODE_FMT_BTREE:
		check_blocks(rc, ino, dip, map);
		break;
	}
}
