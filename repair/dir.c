// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Directories: short-form directories in the inode, and block, leaf and
 * node directories in their data fork.  Each block goes through its
 * libfs verifier (chosen by where it sits in the directory's address
 * space and by its magic); the entries are then recorded for the
 * link-count and connectivity phase, with "." and ".." checked here.
 */
#include <stdlib.h>
#include <string.h>

#include "repair.h"

#include <xfskit/format/da.h>
#include <xfskit/format/dir.h>

uint64_t
fork_map_lookup(const struct fork_map *map, uint64_t off, uint64_t *contig)
{
	for (size_t i = 0; i < map->n; i++) {
		const struct xk_bmbt_irec *r = &map->v[i];

		if (off >= r->startoff && off < r->startoff + r->blockcount) {
			*contig = r->startoff + r->blockcount - off;
			return r->startblock + (off - r->startoff);
		}
	}
	*contig = 0;
	return XK_NULLFSBLOCK;
}

void
note_edge(struct repair_ctx *rc, uint64_t parent, uint64_t child,
	  uint8_t ftype)
{
	if (rc->nedges == rc->capedges) {
		size_t ncap = rc->capedges ? rc->capedges * 2 : 1024;
		struct edge *nv = realloc(rc->edges, ncap * sizeof(*nv));

		if (!nv)
			return;
		rc->edges = nv;
		rc->capedges = ncap;
	}
	rc->edges[rc->nedges++] = (struct edge){ parent, child, ftype };
}

void
note_dotdot(struct repair_ctx *rc, uint64_t dir, uint64_t parent)
{
	/* The directory's own inode_info is the one most recently added. */
	if (rc->ninodes && rc->inodes[rc->ninodes - 1].ino == dir)
		rc->inodes[rc->ninodes - 1].parent = parent;
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
			note_edge(rc, ino, child,
				  xk_dir2_sf_get_ftype(e, ftype));
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

/* Entries of one data (or block) block: record them; check . and .. */
static void
scan_data_entries(struct repair_ctx *rc, uint64_t ino, struct xk_buf *bp,
		  uint32_t end, int first_block, uint64_t *nents)
{
	int ftype = rc->mp->g.has_ftype;
	uint32_t p = sizeof(struct xk_dir3_data_hdr);
	int idx = 0;

	while (p + 8 <= end) {
		const uint8_t *at = bp->data + p;
		const struct xk_dir2_data_entry *e = (const void *)at;
		uint64_t child;

		if (xk_dir2_data_is_unused(at)) {
			p += xk_get_be16(at + 2);
			continue;
		}
		child = xk_be64_get(e->inumber);
		(*nents)++;
		if (first_block && idx == 0) {
			if (e->namelen != 1 || e->name[0] != '.' ||
			    child != ino)
				report(rc, PR_DIR_BAD, "directory", -1, ino,
				       bp->daddr, "dot", "first entry is not "
				       "\".\" naming the directory itself");
		} else if (first_block && idx == 1) {
			if (e->namelen != 2 || memcmp(e->name, "..", 2))
				report(rc, PR_DIR_BAD, "directory", -1, ino,
				       bp->daddr, "dotdot", "second entry is "
				       "not \"..\"");
			else
				note_dotdot(rc, ino, child);
		} else {
			note_edge(rc, ino, child,
				  xk_dir3_data_get_ftype(e, ftype));
		}
		idx++;
		p += xk_dir3_data_entsize(e->namelen, ftype);
	}
}

static uint64_t
live_leaf_entries(const struct xk_dir2_leaf_entry *ents, uint32_t count)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < count; i++)
		if (xk_be32_get(ents[i].address) != XK_DIR2_NULL_DATAPTR)
			n++;
	return n;
}

/*
 * Block, leaf and node directories.  Each directory block must be mapped
 * whole and contiguously; data blocks live below the leaf offset, leaf
 * and dabtree blocks between it and the free offset, free-index blocks
 * above.  The live leaf entries must number the entries of the data
 * blocks.
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
	uint64_t data_ents = 0, leaf_ents = 0;
	int block_form = 0, have_leaf = 0;

	for (size_t i = 0; i < map->n; i++) {
		const struct xk_bmbt_irec *r = &map->v[i];
		uint64_t first = r->startoff & ~((1ULL << dblog) - 1);

		for (uint64_t off = first; off < r->startoff + r->blockcount;
		     off += 1ULL << dblog) {
			const struct xk_buf_ops *ops;
			struct xk_buf *bp;
			uint64_t contig, fsb;
			int err;

			if (off < r->startoff)
				continue;	/* started in the last extent */
			fsb = fork_map_lookup(map, off, &contig);
			if (fsb == XK_NULLFSBLOCK || contig < (1ULL << dblog)) {
				report(rc, PR_DIR_BAD, "directory", -1, ino,
				       XK_NO_DADDR, "mapping", "directory "
				       "block at file block %llu is not "
				       "mapped whole and contiguously",
				       (unsigned long long)off);
				continue;
			}
			err = xk_buf_read_ctx(mp, xk_fsb_to_daddr(mp, fsb),
					      dbsize, NULL, -1, ino,
					      XK_READ_NOVERIFY, &bp);
			if (err) {
				report(rc, PR_DIR_BAD, "directory", -1, ino,
				       XK_NO_DADDR, "read", "%s",
				       xk_strerror(err));
				continue;
			}
			if (off < leaf_fsb) {
				if (off == 0 && xk_get_be32(bp->data) ==
				    XK_DIR3_BLOCK_MAGIC) {
					ops = &xk_dir3_block_buf_ops;
					block_form = 1;
				} else {
					ops = &xk_dir3_data_buf_ops;
				}
			} else if (off < free_fsb) {
				uint16_t m = xk_get_be16(bp->data + 8);

				ops = m == XK_DIR3_LEAF1_MAGIC ?
				      &xk_dir3_leaf1_buf_ops :
				      m == XK_DA3_NODE_MAGIC ?
				      &xk_da3_node_buf_ops :
				      &xk_dir3_leafn_buf_ops;
			} else {
				ops = &xk_dir3_free_buf_ops;
			}
			xk_buf_release(bp);
			err = xk_buf_read_ctx(mp, xk_fsb_to_daddr(mp, fsb),
					      dbsize, ops, -1, ino,
					      XK_READ_SALVAGE, &bp);
			if (err && bp)
				fix_problem(rc, PR_DIR_BAD, &bp->fail);
			/* A bad CRC alone leaves the structure readable. */
			if (err && err != XK_EBADCRC) {
				xk_buf_release(bp);
				continue;
			}
			if (ops == &xk_dir3_block_buf_ops) {
				const struct xk_dir2_block_tail *t =
					xk_dir2_block_tail_p(bp->data, dbsize);
				const struct xk_dir2_leaf_entry *le =
					xk_dir2_block_leaf_p(t);

				scan_data_entries(rc, ino, bp,
					(uint32_t)((const uint8_t *)le -
						   bp->data), 1, &data_ents);
				leaf_ents += live_leaf_entries(le,
						xk_be32_get(t->count));
				have_leaf = 1;
			} else if (ops == &xk_dir3_data_buf_ops) {
				scan_data_entries(rc, ino, bp, dbsize,
						  off == 0, &data_ents);
			} else if (ops == &xk_dir3_leaf1_buf_ops ||
				   ops == &xk_dir3_leafn_buf_ops) {
				const struct xk_dir3_leaf_hdr *lh =
					(const void *)bp->data;

				leaf_ents += live_leaf_entries(
					xk_dir3_leaf_ents(lh),
					xk_be16_get(lh->count));
				have_leaf = 1;
			}
			xk_buf_release(bp);
		}
	}
	if (block_form && size != dbsize)
		report(rc, PR_DIR_BAD, "directory", -1, ino, XK_NO_DADDR,
		       "size", "block directory of size %llu, expected %u",
		       (unsigned long long)size, dbsize);
	if (have_leaf && leaf_ents != data_ents)
		report(rc, PR_DIR_BAD, "directory", -1, ino, XK_NO_DADDR,
		       "leaf", "%llu live leaf entries for %llu names",
		       (unsigned long long)leaf_ents,
		       (unsigned long long)data_ents);
	if (!have_leaf && map->n)
		report(rc, PR_DIR_BAD, "directory", -1, ino, XK_NO_DADDR,
		       "leaf", "no hash index (leaf or block tail) found");
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
