// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Extended attributes: the short form in the inode, or leaf, node and
 * remote value blocks in the attr fork.  Blocks are recognised by their
 * magic, as xfs_db does, and go through their libfs verifiers.
 */
#include <stdlib.h>
#include <string.h>

#include "repair.h"
#include "da.h"

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
	const char *why;

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
		why = acl_problem(e->flags, e->nameval, e->namelen,
				  e->nameval + e->namelen, e->valuelen);
		if (why)
			report(rc, PR_ATTR_BAD, "attr fork", -1, ino,
			       XK_NO_DADDR, "acl", "entry %u (%.*s): %s", i,
			       e->namelen, e->nameval, why);
		e = (const struct xk_attr_sf_entry *)((const uint8_t *)e +
						      xk_attr_sf_entsize(e));
	}
	if ((const uint8_t *)e != end)
		report(rc, PR_ATTR_BAD, "attr fork", -1, ino, XK_NO_DADDR,
		       "totsize", "entries end at byte %td of %u",
		       (const uint8_t *)e - base, tot);
}

struct rmt_ref {
	uint32_t	blk;
	uint32_t	len;
	const char	*acl;	/* a POSIX ACL's name: its value is checked */
};

struct attr_state {
	struct repair_ctx	*rc;
	uint64_t		ino;
	struct rmt_ref		*rmt;
	size_t			nrmt, caprmt;
};

/* Local entry i of a leaf block: if a POSIX ACL, its value. */
static void
check_local_acl(struct attr_state *as, const struct xk_buf *bp, uint32_t i)
{
	const struct xk_attr3_leaf_hdr *h = (const void *)bp->data;
	uint32_t idx = xk_be16_get(xk_attr3_leaf_entryp(h)[i].nameidx);
	const struct xk_attr_leaf_name_local *n;
	const char *why;

	if (idx + sizeof(*n) > bp->len)
		return;
	n = (const void *)xk_attr3_leaf_name(h, i);
	if (idx + sizeof(*n) + n->namelen + xk_be16_get(n->valuelen) > bp->len)
		return;
	why = acl_problem(xk_attr3_leaf_entryp(h)[i].flags, n->nameval,
			  n->namelen, n->nameval + n->namelen,
			  xk_be16_get(n->valuelen));
	if (why)
		report(as->rc, PR_ATTR_BAD, "attr3 leaf block", -1, as->ino,
		       bp->daddr, "acl", "entry %u (%.*s): %s", i, n->namelen,
		       n->nameval, why);
}

/* Remember each remote value a leaf points at, for the remote pass. */
static int64_t
attr_leaf_fn(void *ctx, struct xk_buf *bp, uint64_t lblk)
{
	struct attr_state *as = ctx;
	const struct xk_attr3_leaf_hdr *h = (const void *)bp->data;
	const struct xk_attr_leaf_entry *ents = xk_attr3_leaf_entryp(h);
	uint32_t count = xk_be16_get(h->count);

	uint32_t firstused = xk_be16_get(h->firstused);
	uint32_t lowest = bp->len;

	for (uint32_t i = 0; i < count; i++)
		if (xk_be16_get(ents[i].nameidx) < lowest)
			lowest = xk_be16_get(ents[i].nameidx);
	/*
	 * firstused marks where the name records begin: the lowest one,
	 * or lower when the block has holes awaiting compaction.
	 */
	if (count && (firstused > lowest || (!h->holes && firstused != lowest)))
		report(as->rc, PR_ATTR_BAD, "attr3 leaf block", -1, as->ino,
		       bp->daddr, "firstused", "firstused is %u, the lowest "
		       "name record starts at %u", firstused, lowest);
	for (uint32_t i = 0; i < count; i++) {
		const struct xk_attr_leaf_name_remote *n;
		uint32_t idx = xk_be16_get(ents[i].nameidx);

		/*
		 * A set or remove that never finished: the kernel skips the
		 * entry and xfs_repair 6.1 calls the fork bad (and clears
		 * it; 7.2 lets it be).  The rewrite leaves the entry out
		 * (attrfix.c), losing nothing the kernel shows.
		 */
		if (ents[i].flags & XK_ATTR_INCOMPLETE) {
			report(as->rc, PR_ATTR_BAD, "attr3 leaf block", -1,
			       as->ino, bp->daddr, "incomplete", "attribute "
			       "entry #%u in attr block %llu, inode %llu is "
			       "INCOMPLETE", i, (unsigned long long)lblk,
			       (unsigned long long)as->ino);
			continue;
		}
		if (ents[i].flags & XK_ATTR_LOCAL) {
			check_local_acl(as, bp, i);
			continue;
		}
		if (idx + sizeof(*n) > bp->len)
			continue;
		n = (const void *)xk_attr3_leaf_name(h, i);
		if (as->nrmt == as->caprmt) {
			size_t ncap = as->caprmt ? as->caprmt * 2 : 8;
			struct rmt_ref *nv = xk_realloc(as->rmt,
						     ncap * sizeof(*nv));

			/* A value left out would be a false finding. */
			if (!nv) {
				repair_error(as->rc, -ENOMEM, "listing the "
					     "remote values of inode %llu",
					     (unsigned long long)as->ino);
				break;
			}
			as->rmt = nv;
			as->caprmt = ncap;
		}
		as->rmt[as->nrmt++] = (struct rmt_ref){
			xk_be32_get(n->valueblk), xk_be32_get(n->valuelen),
			idx + sizeof(*n) + n->namelen <= bp->len ?
			acl_named(ents[i].flags, n->name, n->namelen) : NULL };
	}
	return count ? xk_be32_get(ents[count - 1].hashval) : 0;
}

/* Copy a verified remote piece's bytes into value, where they fit. */
static void
rmt_piece(const struct xk_attr3_rmt_hdr *h, size_t blen, uint64_t at,
	  uint8_t *value, uint32_t len)
{
	uint32_t bytes = xk_be32_get(h->rm_bytes);

	if (!value || at >= len || bytes > blen - sizeof(*h))
		return;
	if (bytes > len - at)
		bytes = (uint32_t)(len - at);
	memcpy(value + at, (const uint8_t *)(h + 1), bytes);
}

/* A remote value: consecutive pieces that add up to its length. */
static void
check_remote_value(struct attr_state *as, const struct fork_map *map,
		   const struct rmt_ref *r, uint64_t **reached, size_t *n)
{
	struct xk_mount *mp = as->rc->mp;
	unsigned int nblk = xk_attr3_rmt_blocks(mp->g.blocksize, r->len);
	uint64_t got = 0;
	/* An ACL's value, gathered to be checked whole. */
	uint8_t *acl = NULL;

	if (r->acl && r->len <= XK_XATTR_SIZE_MAX) {
		acl = xk_malloc(r->len ? r->len : 1);
		if (!acl) {
			repair_error(as->rc, -ENOMEM, "checking the ACL of "
				     "inode %llu", (unsigned long long)as->ino);
			return;
		}
	}

	for (unsigned int b = 0; b < nblk; b++) {
		uint64_t contig, fsb = fork_map_lookup(map, r->blk + b,
						       &contig);
		struct xk_buf *bp;
		uint64_t *nv;
		int err;

		if (fsb == XK_NULLFSBLOCK) {
			report(as->rc, PR_ATTR_BAD, "attr fork", -1, as->ino,
			       XK_NO_DADDR, "valueblk", "remote value block "
			       "%u is not mapped", r->blk + b);
			goto out;
		}
		nv = xk_realloc(*reached, (*n + 1) * sizeof(*nv));
		if (!nv) {
			repair_error(as->rc, -ENOMEM, "checking the remote "
				     "values of inode %llu",
				     (unsigned long long)as->ino);
			goto out;
		}
		*reached = nv;
		(*reached)[(*n)++] = r->blk + b;
		err = xk_buf_read_ctx(mp, xk_fsb_to_daddr(mp, fsb),
				      mp->g.blocksize, &xk_attr3_rmt_buf_ops,
				      -1, as->ino, XK_READ_SALVAGE, &bp);
		if (!bp && repair_oserr(as->rc, err, "reading a remote value "
					"of inode %llu",
					(unsigned long long)as->ino))
			goto out;
		if (err && bp)
			fix_problem(as->rc, PR_ATTR_BAD, &bp->fail);
		if (!err) {
			const struct xk_attr3_rmt_hdr *h =
				(const void *)bp->data;

			if (xk_be32_get(h->rm_offset) != got)
				report(as->rc, PR_ATTR_BAD,
				       "attr3 remote block", -1, as->ino,
				       bp->daddr, "offset", "piece says "
				       "offset %u, expected %llu",
				       xk_be32_get(h->rm_offset),
				       (unsigned long long)got);
			rmt_piece(h, bp->len, got, acl, r->len);
			got += xk_be32_get(h->rm_bytes);
		} else if (acl) {
			/* Reported above; the value is not there to check. */
			free(acl);
			acl = NULL;
		}
		xk_buf_release(bp);
	}
	if (got != r->len)
		report(as->rc, PR_ATTR_BAD, "attr fork", -1, as->ino,
		       XK_NO_DADDR, "valuelen", "remote value at block %u "
		       "holds %llu bytes, its entry says %u", r->blk,
		       (unsigned long long)got, r->len);
	else if (acl) {
		const char *why = acl_problem(XK_ATTR_ROOT,
					      (const uint8_t *)r->acl,
					      strlen(r->acl), acl, r->len);

		if (why)
			report(as->rc, PR_ATTR_BAD, "attr fork", -1, as->ino,
			       XK_NO_DADDR, "acl", "%s (remote value at block "
			       "%u): %s", r->acl, r->blk, why);
	}
out:
	free(acl);
}

/*
 * Leaf and node attribute forks: the dabtree from block 0, then every
 * remote value its leaves point at; every mapped block must be one or
 * the other.
 */
static unsigned long
check_attr_blocks(struct repair_ctx *rc, uint64_t ino,
		  const struct fork_map *map)
{
	struct attr_state as = { .rc = rc, .ino = ino };
	struct da_walk dw = {
		.rc = rc, .ino = ino, .map = map,
		.blksize = rc->mp->g.blocksize, .fsb_per_blk = 1,
		.pr = PR_ATTR_BAD, .what = "attr fork",
		.leaf_magic = XK_ATTR3_LEAF_MAGIC,
		.leaf_ops = &xk_attr3_leaf_buf_ops,
		.root_leaf_magic = XK_ATTR3_LEAF_MAGIC,
		.root_leaf_ops = &xk_attr3_leaf_buf_ops,
		.leaf_fn = attr_leaf_fn, .ctx = &as,
	};
	size_t reported = 0;

	if (!map->n)
		return 0;
	if (da_walk(&dw, 0))
		goto out;
	for (size_t i = 0; i < as.nrmt && !rc->found.error; i++)
		check_remote_value(&as, map, &as.rmt[i], &dw.reached,
				   &dw.nreached);
	if (rc->found.error)
		goto out;
	for (size_t i = 0; i < map->n && reported < 5; i++) {
		const struct xk_bmbt_irec *r = &map->v[i];

		for (uint64_t b = r->startoff;
		     b < r->startoff + r->blockcount && reported < 5; b++) {
			size_t k;

			for (k = 0; k < dw.nreached; k++)
				if (dw.reached[k] == b)
					break;
			if (k == dw.nreached) {
				report(rc, PR_ATTR_BAD, "attr fork", -1, ino,
				       XK_NO_DADDR, "block", "block %llu is "
				       "neither in the attribute tree nor a "
				       "remote value", (unsigned long long)b);
				reported++;
			}
		}
	}
out:
	free(dw.reached);
	free(as.rmt);
	return dw.fixed;
}

/* Returns the findings already planned as fixes in place. */
unsigned long
check_attr_fork(struct repair_ctx *rc, uint64_t ino,
		const struct xk_dinode *dip, const struct fork_map *map)
{
	switch (dip->di_aformat) {
	case XK_DINODE_FMT_LOCAL:
		check_attr_shortform(rc, ino, dip);
		break;
	case XK_DINODE_FMT_EXTENTS:
	case XK_DINODE_FMT_BTREE:
		return check_attr_blocks(rc, ino, map);
	}
	return 0;
}
