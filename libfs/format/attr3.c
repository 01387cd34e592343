// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Attribute blocks (v3): leaf blocks holding names and small values, and
 * remote value blocks.  dabtree nodes of attribute trees share the
 * directory node verifier (dir3.c).
 */
#include <string.h>

#include <xfskit/libfs.h>
#include <xfskit/meta.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/da.h>

#include "../libfs_priv.h"

#define ATTR_FLAGS_KNOWN	(XK_ATTR_LOCAL | XK_ATTR_ROOT | \
				 XK_ATTR_SECURE | XK_ATTR_PARENT | \
				 XK_ATTR_INCOMPLETE)

/*
 * Rules: 1. header (magic, address, UUID, owner); 2. the entry array
 * ends at or before firstused, and firstused is inside the block;
 * 3. the free map inside the block, its bases and sizes multiples of 4
 * (names and values are 4-byte aligned: the kernel's verifier), a
 * non-empty region past the entry table (the kernel of xfsprogs 7.2;
 * 6.1 does not check it); 4. for each entry: hashes never
 * decrease and are the hash of the entry's name, only known flags, a
 * non-empty name record that starts at or after firstused and ends
 * inside the block; 5. usedbytes is the sum of the name records (judged
 * last, so that its failure always carries the right sum: repair sets
 * it, fix.c).
 */
static int
attr3_leaf_verify(struct xk_buf *bp, struct xk_fail *f)
{
	const struct xk_attr3_leaf_hdr *h = (const void *)bp->data;
	const struct xk_attr_leaf_entry *ents;
	uint32_t count, firstused, usedbytes, len = bp->len, used = 0;
	int err;

	if (len < sizeof(*h))
		return xk_fail_set(f, "size", "block too small");
	if (xk_be16_get(h->info.hdr.magic) != XK_ATTR3_LEAF_MAGIC)
		return xk_fail_val(f, "magic", XK_ATTR3_LEAF_MAGIC,
				   xk_be16_get(h->info.hdr.magic));
	err = xk_owned_block_check(bp, xk_be64_get(h->info.blkno), h->info.uuid,
			  xk_be64_get(h->info.owner), f);
	if (err)
		return err;
	count = xk_be16_get(h->count);
	usedbytes = xk_be16_get(h->usedbytes);
	firstused = xk_be16_get(h->firstused);
	if (firstused == XK_ATTR3_LEAF_NULLOFF)
		firstused = len;	/* 64 KiB blocks store "empty" as 0 */
	if (firstused > len)
		return xk_fail_val(f, "firstused", len, firstused);
	if (sizeof(*h) + (uint64_t)count * sizeof(*ents) > firstused)
		return xk_fail_set(f, "count", "%u entries overlap the names "
				   "at %u", count, firstused);
	for (int i = 0; i < XK_ATTR_LEAF_MAPSIZE; i++) {
		uint32_t base = xk_be16_get(h->freemap[i].base);
		uint32_t size = xk_be16_get(h->freemap[i].size);

		if (base + size > len)
			return xk_fail_set(f, "freemap", "free map %d (%u+%u) "
					   "runs past the block", i, base,
					   size);
		if ((base | size) & 3)
			return xk_fail_set(f, "freemap", "free map %d (%u+%u) "
					   "is not 4-byte aligned", i, base,
					   size);
		if (size && base < sizeof(*h) + count * sizeof(*ents))
			return xk_fail_set(f, "freemap", "free map %d (%u+%u) "
					   "starts inside the entry table, "
					   "which ends at %zu", i, base, size,
					   sizeof(*h) + count * sizeof(*ents));
	}
	ents = xk_attr3_leaf_entryp(h);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t idx = xk_be16_get(ents[i].nameidx);
		uint8_t flags = ents[i].flags;
		uint32_t need;

		if (i && xk_be32_get(ents[i].hashval) <
			 xk_be32_get(ents[i - 1].hashval))
			return xk_fail_set(f, "hashval", "entry %u is out of "
					   "hash order", i);
		if (flags & ~ATTR_FLAGS_KNOWN)
			return xk_fail_set(f, "flags", "entry %u has unknown "
					   "flags 0x%x", i, flags);
		if (idx < firstused || idx + 4 > len)
			return xk_fail_set(f, "nameidx", "entry %u's name at %u "
					   "lies outside %u..%u", i, idx,
					   firstused, len);
		if (flags & XK_ATTR_LOCAL) {
			const struct xk_attr_leaf_name_local *n =
				(const void *)(bp->data + idx);

			need = xk_attr_leaf_entsize_local(n->namelen,
					xk_be16_get(n->valuelen));
			if (n->namelen == 0)
				return xk_fail_set(f, "namelen", "entry %u has "
						   "an empty name", i);
		} else {
			const struct xk_attr_leaf_name_remote *n =
				(const void *)(bp->data + idx);

			if (idx + sizeof(*n) > len)
				return xk_fail_set(f, "nameidx", "entry %u's "
						   "remote name runs past the "
						   "block", i);
			need = xk_attr_leaf_entsize_remote(n->namelen);
			if (n->namelen == 0)
				return xk_fail_set(f, "namelen", "entry %u has "
						   "an empty name", i);
		}
		if (idx + need > len)
			return xk_fail_set(f, "nameidx", "entry %u's name "
					   "record runs past the block", i);
		used += need;
		/* Parent pointers hash differently; every other name by
		 * the dabtree name hash. */
		if (!(flags & XK_ATTR_PARENT)) {
			const uint8_t *name;
			unsigned int nlen;

			if (flags & XK_ATTR_LOCAL) {
				const struct xk_attr_leaf_name_local *n =
					(const void *)(bp->data + idx);

				name = n->nameval;
				nlen = n->namelen;
			} else {
				const struct xk_attr_leaf_name_remote *n =
					(const void *)(bp->data + idx);

				name = n->name;
				nlen = n->namelen;
			}
			if (xk_da_hashname(name, (int)nlen) !=
			    xk_be32_get(ents[i].hashval))
				return xk_fail_set(f, "hashval", "entry %u's "
						   "hash 0x%x is not its "
						   "name's", i,
						   xk_be32_get(ents[i].hashval));
		}
	}
	if (used != usedbytes)
		return xk_fail_val(f, "usedbytes", used, usedbytes);
	return 0;
}

/*
 * Remote value block.  Rules: magic; the piece's bytes fit the block and
 * the piece fits a value of at most 64 KiB; address, UUID and owner.
 */
static int
attr3_rmt_verify(struct xk_buf *bp, struct xk_fail *f)
{
	const struct xk_attr3_rmt_hdr *h = (const void *)bp->data;
	uint32_t off, bytes;

	if (bp->len < sizeof(*h))
		return xk_fail_set(f, "size", "block too small");
	if (xk_be32_get(h->rm_magic) != XK_ATTR3_RMT_MAGIC)
		return xk_fail_val(f, "magic", XK_ATTR3_RMT_MAGIC,
				   xk_be32_get(h->rm_magic));
	off = xk_be32_get(h->rm_offset);
	bytes = xk_be32_get(h->rm_bytes);
	if (bytes > xk_attr3_rmt_buf_space(bp->len))
		return xk_fail_val(f, "bytes", xk_attr3_rmt_buf_space(bp->len),
				   bytes);
	if ((uint64_t)off + bytes > XK_XATTR_SIZE_MAX)
		return xk_fail_set(f, "offset", "piece %u+%u is beyond the "
				   "largest value", off, bytes);
	return xk_owned_block_check(bp, xk_be64_get(h->rm_blkno), h->rm_uuid,
			   xk_be64_get(h->rm_owner), f);
}

const struct xk_buf_ops xk_attr3_leaf_buf_ops = {
	.name = "attr3 leaf block",
	.crc_off = XK_ATTR3_LEAF_CRC_OFF,
	.lsn_off = offsetof(struct xk_da3_blkinfo, lsn),
	.verify = attr3_leaf_verify,
};

const struct xk_buf_ops xk_attr3_rmt_buf_ops = {
	.name = "attr3 remote block",
	.crc_off = XK_ATTR3_RMT_CRC_OFF,
	.lsn_off = offsetof(struct xk_attr3_rmt_hdr, rm_lsn),
	.verify = attr3_rmt_verify,
};

const struct xk_buf_ops *
xk_attr3_buf_ops_for(const void *buf, size_t len)
{
	const uint8_t *b = buf;

	if (len < 16)
		return NULL;
	if (xk_get_be32(b) == XK_ATTR3_RMT_MAGIC)
		return &xk_attr3_rmt_buf_ops;
	if (xk_get_be16(b + 8) == XK_DA3_NODE_MAGIC)
		return &xk_da3_node_buf_ops;
	return &xk_attr3_leaf_buf_ops;
}
