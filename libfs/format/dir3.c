// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Directory blocks (v3): single-block directories (XDB3), data blocks
 * (XDD3), leaf blocks (LEAF1 for leaf format, LEAFN for node format),
 * free-index blocks (XDF3), and the dabtree node blocks shared with the
 * attribute trees.  Each verifier checks the self-describing header and
 * then the block's own structure, so a damaged entry is caught where it
 * lies rather than when a lookup trips over it.
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/libfs.h>
#include <xfskit/meta.h>
#include <xfskit/format/da.h>
#include <xfskit/format/dir.h>

#include "../libfs_priv.h"

static int
blk_hdr_check(struct xk_buf *bp, uint32_t magic, struct xk_fail *f)
{
	const struct xk_dir3_blk_hdr *h = (const void *)bp->data;

	if (bp->len < sizeof(struct xk_dir3_data_hdr))
		return xk_fail_set(f, "size", "block too small");
	if (xk_be32_get(h->magic) != magic)
		return xk_fail_val(f, "magic", magic, xk_be32_get(h->magic));
	return xk_owned_block_check(bp, xk_be64_get(h->blkno), h->uuid,
			  xk_be64_get(h->owner), f);
}

static int
da_hdr_check(struct xk_buf *bp, uint16_t magic, size_t hdrlen,
	     struct xk_fail *f)
{
	const struct xk_da3_blkinfo *h = (const void *)bp->data;

	if (bp->len < hdrlen)
		return xk_fail_set(f, "size", "block too small");
	if (xk_be16_get(h->hdr.magic) != magic)
		return xk_fail_val(f, "magic", magic,
				   xk_be16_get(h->hdr.magic));
	return xk_owned_block_check(bp, xk_be64_get(h->blkno), h->uuid,
			  xk_be64_get(h->owner), f);
}

struct ent_pos {
	uint32_t	off;
	uint32_t	hash;
};

static int
cmp_ent_pos(const void *a, const void *b)
{
	const struct ent_pos *x = a, *y = b;

	return (x->off > y->off) - (x->off < y->off);
}

/*
 * The data area of a block or data block, from the header to `end`.
 * Rules: 1. every region is an entry or an unused region, inside the
 * area, ending on an 8-byte boundary, its tag naming its own offset;
 * 2. no two unused regions in a row; 3. entries have a name, a possible
 * inode number and a known file type; 4. best_free lists the largest
 * unused regions, largest first, each one real, and no unlisted region
 * is larger than the smallest listed.  Entry offsets and hashes go to
 * *ents (for the block form's leaf check) when ents is not NULL.
 */
static int
data_area_check(struct xk_buf *bp, uint32_t end, struct ent_pos *ents,
		uint32_t *nents, struct xk_fail *f)
{
	struct xk_mount *mp = bp->mp;
	const struct xk_dir3_data_hdr *h = (const void *)bp->data;
	int ftype = mp->g.has_ftype;
	uint32_t bf_off[3], bf_len[3], matched = 0, n = 0;
	uint32_t p = sizeof(struct xk_dir3_data_hdr);
	int lastfree = 0;

	for (int i = 0; i < 3; i++) {
		bf_off[i] = xk_be16_get(h->best_free[i].offset);
		bf_len[i] = xk_be16_get(h->best_free[i].length);
		if (i && bf_len[i] > bf_len[i - 1])
			return xk_fail_set(f, "bestfree", "best_free[%d] is "
					   "longer than best_free[%d]", i,
					   i - 1);
		if ((bf_off[i] == 0) != (bf_len[i] == 0))
			return xk_fail_set(f, "bestfree", "best_free[%d] has "
					   "offset %u and length %u", i,
					   bf_off[i], bf_len[i]);
	}
	while (p < end) {
		const uint8_t *at = bp->data + p;

		if (end - p < 8)
			return xk_fail_set(f, "entry", "%u trailing bytes at "
					   "offset %u", end - p, p);
		if (xk_dir2_data_is_unused(at)) {
			const struct xk_dir2_data_unused *u = (const void *)at;
			uint32_t len = xk_be16_get(u->length);
			int listed = 0;

			if (lastfree)
				return xk_fail_set(f, "unused", "two free "
						   "regions in a row at %u", p);
			if (len < 8 || (len & 7) || len > end - p)
				return xk_fail_set(f, "unused", "free region "
						   "at %u has length %u", p,
						   len);
			if (xk_get_be16(at + len - 2) != p)
				return xk_fail_set(f, "tag", "free region at "
						   "%u is tagged %u", p,
						   xk_get_be16(at + len - 2));
			for (int i = 0; i < 3; i++)
				if (bf_off[i] == p && bf_len[i] == len)
					listed = 1, matched++;
			if (!listed && bf_len[2] && len > bf_len[2])
				return xk_fail_set(f, "bestfree", "free region "
					"at %u (%u bytes) is larger than the "
					"smallest best_free", p, len);
			lastfree = 1;
			p += len;
			continue;
		}
		{
			const struct xk_dir2_data_entry *e = (const void *)at;
			uint32_t len;
			uint64_t ino;

			if (e->namelen == 0)
				return xk_fail_set(f, "namelen", "entry at %u "
						   "has an empty name", p);
			len = xk_dir3_data_entsize(e->namelen, ftype);
			if (len > end - p)
				return xk_fail_set(f, "namelen", "entry at %u "
						   "runs past the data area",
						   p);
			if (xk_get_be16(at + len - 2) != p)
				return xk_fail_set(f, "tag", "entry at %u is "
						   "tagged %u", p,
						   xk_get_be16(at + len - 2));
			ino = xk_be64_get(e->inumber);
			if (!xk_ino_valid(mp, ino))
				return xk_fail_set(f, "inumber", "entry at %u "
						   "names impossible inode "
						   "%llu", p,
						   (unsigned long long)ino);
			if (ftype && e->name[e->namelen] >= XK_DIR3_FT_MAX)
				return xk_fail_set(f, "ftype", "entry at %u has "
						   "file type %u", p,
						   e->name[e->namelen]);
			if (ents) {
				ents[n].off = p;
				ents[n].hash = xk_da_hashname(e->name,
							      e->namelen);
			}
			n++;
			lastfree = 0;
			p += len;
		}
	}
	for (int i = 0; i < 3; i++)
		if (bf_len[i] == 0)
			matched++;
	if (matched < 3)
		return xk_fail_set(f, "bestfree", "a best_free entry names no "
				   "free region");
	*nents = n;
	return 0;
}

static int
dir3_data_verify(struct xk_buf *bp, struct xk_fail *f)
{
	uint32_t n;
	int err = blk_hdr_check(bp, XK_DIR3_DATA_MAGIC, f);

	if (err)
		return err;
	return data_area_check(bp, bp->len, NULL, &n, f);
}

/*
 * Single-block directory: the data area, then the leaf array and tail.
 * Rules beyond the data area's: the leaf array fits between the data and
 * the tail; stale entries are counted right; hashes never decrease; every
 * live leaf entry points at an entry whose name has that hash; and there
 * are exactly as many live leaf entries as entries.
 */
static int
dir3_block_verify(struct xk_buf *bp, struct xk_fail *f)
{
	const struct xk_dir2_block_tail *t;
	const struct xk_dir2_leaf_entry *lep;
	struct ent_pos *ents;
	uint32_t count, stale, nents = 0, nstale = 0, live = 0, end;
	int err = blk_hdr_check(bp, XK_DIR3_BLOCK_MAGIC, f);

	if (err)
		return err;
	t = xk_dir2_block_tail_p(bp->data, bp->len);
	count = xk_be32_get(t->count);
	stale = xk_be32_get(t->stale);
	if ((uint64_t)count * sizeof(*lep) + sizeof(*t) >
	    bp->len - sizeof(struct xk_dir3_data_hdr))
		return xk_fail_set(f, "count", "leaf count %u does not fit "
				   "the block", count);
	if (stale > count)
		return xk_fail_val(f, "stale", count, stale);
	lep = xk_dir2_block_leaf_p(t);
	end = (uint32_t)((const uint8_t *)lep - bp->data);
	ents = malloc(sizeof(*ents) * (bp->len / 8 + 1));
	if (!ents)
		return -ENOMEM;
	err = data_area_check(bp, end, ents, &nents, f);
	for (uint32_t i = 0; !err && i < count; i++) {
		uint32_t hash = xk_be32_get(lep[i].hashval);
		uint32_t addr = xk_be32_get(lep[i].address);
		struct ent_pos key, *hit;

		if (i && hash < xk_be32_get(lep[i - 1].hashval)) {
			err = xk_fail_set(f, "hashval", "leaf entry %u is out "
					  "of hash order", i);
			break;
		}
		if (addr == XK_DIR2_NULL_DATAPTR) {
			nstale++;
			continue;
		}
		live++;
		key.off = xk_dir2_dataptr_to_off(addr, bp->mp->g.blocklog +
						 bp->mp->g.dirblklog);
		hit = bsearch(&key, ents, nents, sizeof(*ents), cmp_ent_pos);
		if (xk_dir2_dataptr_to_db(addr, bp->mp->g.blocklog +
					  bp->mp->g.dirblklog) != 0 || !hit)
			err = xk_fail_set(f, "address", "leaf entry %u points "
					  "at no entry (0x%x)", i, addr);
		else if (hit->hash != hash)
			err = xk_fail_set(f, "hashval", "leaf entry %u has hash "
					  "0x%x, its name hashes to 0x%x", i,
					  hash, hit->hash);
	}
	if (!err && nstale != stale)
		err = xk_fail_val(f, "stale", nstale, stale);
	if (!err && live != nents)
		err = xk_fail_set(f, "count", "%u live leaf entries for %u "
				  "names", live, nents);
	free(ents);
	return err;
}

/*
 * Leaf blocks.  Rules: header; count entries fit (in LEAF1, together
 * with the bests array and tail); stale not above count and equal to the
 * null addresses; hashes never decrease; in LEAF1, every live entry's
 * data block has a slot in the bests array (the kernel's verifier).
 */
static int
dir3_leaf_check(struct xk_buf *bp, uint16_t magic, struct xk_fail *f)
{
	const struct xk_dir3_leaf_hdr *h = (const void *)bp->data;
	const struct xk_dir2_leaf_entry *ents = xk_dir3_leaf_ents(h);
	uint32_t count, stale, nstale = 0, db;
	uint64_t room = bp->len - sizeof(*h), bests = 0;
	int err = da_hdr_check(bp, magic, sizeof(*h), f);

	if (err)
		return err;
	count = xk_be16_get(h->count);
	stale = xk_be16_get(h->stale);
	if (magic == XK_DIR3_LEAF1_MAGIC) {
		const struct xk_dir2_leaf_tail *t =
			xk_dir2_leaf_tail_p(bp->data, bp->len);
		bests = xk_be32_get(t->bestcount);
		if (bests * 2 + sizeof(*t) > room)
			return xk_fail_set(f, "bestcount", "%llu bests do not "
					   "fit the block",
					   (unsigned long long)bests);
		room -= bests * 2 + sizeof(*t);
	}
	if ((uint64_t)count * sizeof(*ents) > room)
		return xk_fail_set(f, "count", "%u entries do not fit the "
				   "block", count);
	if (stale > count)
		return xk_fail_val(f, "stale", count, stale);
	for (uint32_t i = 0; i < count; i++) {
		if (i && xk_be32_get(ents[i].hashval) <
			 xk_be32_get(ents[i - 1].hashval))
			return xk_fail_set(f, "hashval", "entry %u is out of "
					   "hash order", i);
		if (xk_be32_get(ents[i].address) == XK_DIR2_NULL_DATAPTR) {
			nstale++;
			continue;
		}
		db = xk_dir2_dataptr_to_db(xk_be32_get(ents[i].address),
					   bp->mp->g.blocklog +
					   bp->mp->g.dirblklog);
		if (magic == XK_DIR3_LEAF1_MAGIC && db >= bests)
			return xk_fail_set(f, "bestcount", "entry %u is in "
					   "data block %u, past the %llu "
					   "bests", i, db,
					   (unsigned long long)bests);
	}
	if (nstale != stale)
		return xk_fail_val(f, "stale", nstale, stale);
	return 0;
}

static int
dir3_leaf1_verify(struct xk_buf *bp, struct xk_fail *f)
{
	return dir3_leaf_check(bp, XK_DIR3_LEAF1_MAGIC, f);
}

static int
dir3_leafn_verify(struct xk_buf *bp, struct xk_fail *f)
{
	return dir3_leaf_check(bp, XK_DIR3_LEAFN_MAGIC, f);
}

/*
 * Free index.  Rules: header; firstdb is the first data block this free
 * block covers (a multiple of its capacity); nvalid within capacity;
 * nused not above nvalid and equal to the non-null bests.
 */
static int
dir3_free_verify(struct xk_buf *bp, struct xk_fail *f)
{
	const struct xk_dir3_free_hdr *h = (const void *)bp->data;
	uint32_t max = xk_dir3_free_max_bests(bp->len);
	uint32_t firstdb, nvalid, nused, used = 0;
	const xk_be16 *bests;
	int err = blk_hdr_check(bp, XK_DIR3_FREE_MAGIC, f);

	if (err)
		return err;
	firstdb = xk_be32_get(h->firstdb);
	nvalid = xk_be32_get(h->nvalid);
	nused = xk_be32_get(h->nused);
	if (firstdb % max)
		return xk_fail_set(f, "firstdb", "%u is not a multiple of %u",
				   firstdb, max);
	if (nvalid > max)
		return xk_fail_val(f, "nvalid", max, nvalid);
	if (nused > nvalid)
		return xk_fail_val(f, "nused", nvalid, nused);
	bests = xk_dir3_free_bests(h);
	for (uint32_t i = 0; i < nvalid; i++)
		if (xk_be16_get(bests[i]) != XK_DIR2_NULL_DATAOFF)
			used++;
	if (used != nused)
		return xk_fail_val(f, "nused", used, nused);
	return 0;
}

/*
 * dabtree node (directories and attributes).  Rules: header; level 1 to
 * the deepest a dabtree may be; at least one entry and no more than fit;
 * hashes never decrease.
 */
static int
da3_node_verify(struct xk_buf *bp, struct xk_fail *f)
{
	const struct xk_da3_node_hdr *h = (const void *)bp->data;
	uint32_t count, level;
	int err = da_hdr_check(bp, XK_DA3_NODE_MAGIC, sizeof(*h), f);

	if (err)
		return err;
	count = xk_be16_get(h->count);
	level = xk_be16_get(h->level);
	if (level < 1 || level > XK_DA_NODE_MAXDEPTH)
		return xk_fail_val(f, "level", XK_DA_NODE_MAXDEPTH, level);
	if (count == 0 || count > xk_da3_node_maxents(bp->len))
		return xk_fail_val(f, "count", xk_da3_node_maxents(bp->len),
				   count);
	for (uint32_t i = 1; i < count; i++)
		if (xk_be32_get(xk_da3_node_entry(h, i)->hashval) <
		    xk_be32_get(xk_da3_node_entry(h, i - 1)->hashval))
			return xk_fail_set(f, "hashval", "entry %u is out of "
					   "hash order", i);
	return 0;
}

const struct xk_buf_ops xk_dir3_block_buf_ops = {
	.name = "dir3 block",
	.crc_off = XK_DIR3_DATA_CRC_OFF,
	.lsn_off = offsetof(struct xk_dir3_blk_hdr, lsn),
	.verify = dir3_block_verify,
};

const struct xk_buf_ops xk_dir3_data_buf_ops = {
	.name = "dir3 data block",
	.crc_off = XK_DIR3_DATA_CRC_OFF,
	.lsn_off = offsetof(struct xk_dir3_blk_hdr, lsn),
	.verify = dir3_data_verify,
};

const struct xk_buf_ops xk_dir3_leaf1_buf_ops = {
	.name = "dir3 leaf1 block",
	.crc_off = XK_DIR3_LEAF_CRC_OFF,
	.lsn_off = offsetof(struct xk_da3_blkinfo, lsn),
	.verify = dir3_leaf1_verify,
};

const struct xk_buf_ops xk_dir3_leafn_buf_ops = {
	.name = "dir3 leafn block",
	.crc_off = XK_DIR3_LEAF_CRC_OFF,
	.lsn_off = offsetof(struct xk_da3_blkinfo, lsn),
	.verify = dir3_leafn_verify,
};

const struct xk_buf_ops xk_dir3_free_buf_ops = {
	.name = "dir3 free block",
	.crc_off = XK_DIR3_FREE_CRC_OFF,
	.lsn_off = offsetof(struct xk_dir3_blk_hdr, lsn),
	.verify = dir3_free_verify,
};

const struct xk_buf_ops xk_da3_node_buf_ops = {
	.name = "da3 node block",
	.crc_off = XK_DA3_NODE_CRC_OFF,
	.lsn_off = offsetof(struct xk_da3_blkinfo, lsn),
	.verify = da3_node_verify,
};

int
xk_dir3_data_block_entries(const uint8_t *b, size_t len, int has_ftype,
			   xk_dirent_fn fn, void *ctx)
{
	uint32_t magic = xk_get_be32(b);
	size_t end = len, at = XK_DIR3_DATA_ENTRY_OFFSET;
	int err;

	if (len < at + 8)
		return XK_ECORRUPT;
	if (magic == XK_DIR3_BLOCK_MAGIC) {
		uint32_t count = xk_get_be32(b + len - 8);

		if (count > (len - 8 - at) / 8)
			return XK_ECORRUPT;
		end = len - 8 - (size_t)count * 8;
	} else if (magic != XK_DIR3_DATA_MAGIC) {
		return XK_ECORRUPT;
	}
	while (at + 8 <= end) {
		size_t sz;

		if (xk_dir2_data_is_unused(b + at)) {
			sz = xk_get_be16(b + at + 2);
		} else {
			const struct xk_dir2_data_entry *d =
				(const void *)(b + at);

			sz = xk_dir3_data_entsize(d->namelen, has_ftype);
			if (at + sz > end)
				return XK_ECORRUPT;
			err = fn(ctx, d->name, d->namelen,
				 xk_be64_get(d->inumber),
				 xk_dir3_data_get_ftype(d, has_ftype));
			if (err)
				return err;
		}
		if (sz < 8 || sz % 8 || at + sz > end)
			return XK_ECORRUPT;
		at += sz;
	}
	return 0;
}

const struct xk_buf_ops *
xk_dir3_buf_ops_for(const void *buf, size_t len)
{
	const uint8_t *b = buf;

	if (len < 16)
		return NULL;
	switch (xk_get_be32(b)) {
	case XK_DIR3_BLOCK_MAGIC:
		return &xk_dir3_block_buf_ops;
	case XK_DIR3_DATA_MAGIC:
		return &xk_dir3_data_buf_ops;
	case XK_DIR3_FREE_MAGIC:
		return &xk_dir3_free_buf_ops;
	}
	switch (xk_get_be16(b + 8)) {
	case XK_DIR3_LEAF1_MAGIC:
		return &xk_dir3_leaf1_buf_ops;
	case XK_DIR3_LEAFN_MAGIC:
		return &xk_dir3_leafn_buf_ops;
	case XK_DA3_NODE_MAGIC:
		return &xk_da3_node_buf_ops;
	}
	return &xk_dir3_data_buf_ops;
}
