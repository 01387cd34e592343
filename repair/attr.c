// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Extended attributes: the short form in the inode, or leaf, node and
 * remote value blocks in the attr fork.  Blocks are recognised by their
 * magic, as xfs_db does, and go through their libfs verifiers.
 */
#include <string.h>

#include "repair.h"

#include <xfskit/format/attr.h>
#include <xfskit/format/da.h>

/*
 * Short form.  Rules: totsize covers the header and fits the fork; count
 * entries lie inside totsize and end exactly at it; names are non-empty;
 * only namespace flags are set.
 */
static void
check_attr_shortform(struct repair_ctx *rc, uint64_t ino,
		     const struct xk_dinode *dip)
{
	const uint8_t *base = xk_dfork_aptr(dip);
	const struct xk_attr_sf_hdr *h = (const void *)base;
	unsigned int asize = xk_dfork_asize(dip, rc->mp->g.inodesize);
	unsigned int tot = xk_be16_get(h->totsize);
	const struct xk_attr_sf_entry *e;
	const uint8_t *end;

	if (tot < sizeof(*h) || tot > asize) {
		report(rc, PR_ATTR_BAD, "attr fork", -1, ino, XK_NO_DADDR,
		       "totsize", "short form of %u bytes in a %u-byte fork",
		       tot, asize);
		return;
	}
	end = base + tot;
	e = (const struct xk_attr_sf_entry *)(base + sizeof(*h));
	for (unsigned int i = 0; i < h->count; i++) {
		if ((const uint8_t *)e + sizeof(*e) > end ||
		    (const uint8_t *)e + xk_attr_sf_entsize(e) > end) {
			report(rc, PR_ATTR_BAD, "attr fork", -1, ino,
			       XK_NO_DADDR, "count", "entry %u of %u runs "
			       "past totsize %u", i, h->count, tot);
			return;
		}
		if (e->namelen == 0)
			report(rc, PR_ATTR_BAD, "attr fork", -1, ino,
			       XK_NO_DADDR, "namelen", "entry %u has an "
			       "empty name", i);
		if (e->flags & ~(XK_ATTR_ROOT | XK_ATTR_SECURE |
				 XK_ATTR_PARENT))
			report(rc, PR_ATTR_BAD, "attr fork", -1, ino,
			       XK_NO_DADDR, "flags", "entry %u has flags "
			       "0x%x", i, e->flags);
		e = (const struct xk_attr_sf_entry *)((const uint8_t *)e +
						      xk_attr_sf_entsize(e));
	}
	if ((const uint8_t *)e != end)
		report(rc, PR_ATTR_BAD, "attr fork", -1, ino, XK_NO_DADDR,
		       "totsize", "entries end at byte %td of %u",
		       (const uint8_t *)e - base, tot);
}

static void
check_attr_blocks(struct repair_ctx *rc, uint64_t ino,
		  const struct fork_map *map)
{
	struct xk_mount *mp = rc->mp;

	for (size_t i = 0; i < map->n; i++) {
		const struct xk_bmbt_irec *r = &map->v[i];

		for (uint64_t b = 0; b < r->blockcount; b++) {
			uint64_t daddr = xk_fsb_to_daddr(mp,
							 r->startblock + b);
			const struct xk_buf_ops *ops;
			struct xk_buf *bp;
			int err;

			err = xk_buf_read_ctx(mp, daddr, mp->g.blocksize, NULL,
					      -1, ino, XK_READ_NOVERIFY, &bp);
			if (err) {
				report(rc, PR_ATTR_BAD, "attr fork", -1, ino,
				       daddr, "read", "%s", xk_strerror(err));
				continue;
			}
			if (xk_get_be32(bp->data) == XK_ATTR3_RMT_MAGIC)
				ops = &xk_attr3_rmt_buf_ops;
			else if (xk_get_be16(bp->data + 8) ==
				 XK_DA3_NODE_MAGIC)
				ops = &xk_da3_node_buf_ops;
			else
				ops = &xk_attr3_leaf_buf_ops;
			xk_buf_release(bp);
			err = xk_buf_read_ctx(mp, daddr, mp->g.blocksize, ops,
					      -1, ino, XK_READ_SALVAGE, &bp);
			if (err && bp)
				fix_problem(rc, PR_ATTR_BAD, &bp->fail);
			xk_buf_release(bp);
		}
	}
}

void
check_attr_fork(struct repair_ctx *rc, uint64_t ino,
		const struct xk_dinode *dip, const struct fork_map *map)
{
	switch (dip->di_aformat) {
	case XK_DINODE_FMT_LOCAL:
		check_attr_shortform(rc, ino, dip);
		break;
	case XK_DINODE_FMT_EXTENTS:
	case XK_DINODE_FMT_BTREE:
		check_attr_blocks(rc, ino, map);
		break;
	}
}
