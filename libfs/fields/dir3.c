// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Field table of directory blocks (xfs_db's "dir3" type).  One table
 * serves every v3 directory block; each part is present only for the
 * magic number that names it: single-block (XDB3: bhdr, bu[], bleaf[],
 * btail), data (XDD3: dhdr, du[]), leaf (0x3df1: lhdr, lbests[], lents[],
 * ltail), node-format leaf (0x3dff), dabtree node (0x3ebe: nhdr,
 * nbtree[]) and free index (XDF3: fhdr, fbests[]).  Data entries are
 * variable: each element is found by walking from the first, and the
 * walk stops at the first entry whose length is impossible.
 */
#include <xfskit/format/dir.h>

#include "fields_priv.h"

static uint32_t
magic32(const struct xk_fctx *c)
{
	return (uint32_t)fp_get(c, 0, 4);
}

int
xk_fp_da_magic_is(const struct xk_fctx *c, uint16_t magic)
{
	return fp_get(c, 8, 2) == magic;
}

static int
is_block(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return magic32(c) == XK_DIR3_BLOCK_MAGIC;
}

static int
is_data(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return magic32(c) == XK_DIR3_DATA_MAGIC;
}

static int
is_free(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return magic32(c) == XK_DIR3_FREE_MAGIC;
}

static int
is_leaf1(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return xk_fp_da_magic_is(c, XK_DIR3_LEAF1_MAGIC);
}

static int
is_leafx(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return xk_fp_da_magic_is(c, XK_DIR3_LEAF1_MAGIC) ||
	       xk_fp_da_magic_is(c, XK_DIR3_LEAFN_MAGIC);
}

static int
is_node(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return xk_fp_da_magic_is(c, XK_DA3_NODE_MAGIC);
}

/* ---- shared dabtree pieces (also used by attr3.c) ---- */

const struct xk_field xk_da3_blkinfo_fields[] = {
	R("hdr.forw", 0, 0, 32, XK_FK_UINT, .unit = XK_FU_DABLOCK),
	R("hdr.back", 4, 0, 32, XK_FK_UINT, .unit = XK_FU_DABLOCK),
	R("hdr.magic", 8, 0, 16, XK_FK_HEX),
	R("crc", 12, 0, 32, XK_FK_CRC),
	R("bno", 16, 0, 64, XK_FK_UINT, .flags = XK_FF_NULL,
	  .unit = XK_FU_DADDR),
	R("lsn", 24, 0, 64, XK_FK_HEX, .unit = XK_FU_LSN),
	R("uuid", 32, 0, 128, XK_FK_UUID),
	R("owner", 48, 0, 64, XK_FK_UINT, .unit = XK_FU_INO, .next = "inode"),
	FEND
};

const struct xk_field xk_da3_node_fields[] = {
	R("hashval", 0, 0, 32, XK_FK_HEX),
	R("before", 4, 0, 32, XK_FK_UINT, .unit = XK_FU_DABLOCK),
	FEND
};

static uint32_t
hdr_count16(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return (uint32_t)fp_get(c, 56, 2);
}

/* ---- data and single-block headers ---- */

static const struct xk_field data_free_fields[] = {
	R("offset", 0, 0, 16, XK_FK_HEX),
	R("length", 2, 0, 16, XK_FK_HEX),
	FEND
};

static const struct xk_field data_hdr_fields[] = {
	R("hdr.magic", 0, 0, 32, XK_FK_HEX),
	R("hdr.crc", 4, 0, 32, XK_FK_CRC),
	R("hdr.bno", 8, 0, 64, XK_FK_UINT, .flags = XK_FF_NULL,
	  .unit = XK_FU_DADDR),
	R("hdr.lsn", 16, 0, 64, XK_FK_HEX, .unit = XK_FU_LSN),
	R("hdr.uuid", 24, 0, 128, XK_FK_UUID),
	R("hdr.owner", 40, 0, 64, XK_FK_UINT, .unit = XK_FU_INO,
	  .next = "inode"),
	S("bestfree", 48, data_free_fields, .flags = XK_FF_ARRAY,
	  .count = XK_DIR2_DATA_FD_COUNT, .stride = 4),
	FEND
};

/* ---- data entries ---- */

/* Where the entry area ends: the leaf array (block) or the block end. */
static size_t
entries_end(const struct xk_fctx *c)
{
	if (magic32(c) == XK_DIR3_BLOCK_MAGIC) {
		uint64_t count;

		if (c->len < 8)
			return 0;
		count = fp_get(c, c->len - 8, 4);
		if (count > (c->len - 8) / 8)
			return 0;
		return c->len - 8 - (size_t)count * 8;
	}
	return c->len;
}

static int
unused_at(const struct xk_fctx *c, size_t at)
{
	return fp_get(c, at, 2) == XK_DIR2_DATA_FREE_TAG;
}

/* Length of the entry or free region at at; 0 when impossible. */
static size_t
dent_size(const struct xk_fctx *c, size_t at)
{
	size_t sz;

	if (unused_at(c, at))
		sz = (size_t)fp_get(c, at + 2, 2);
	else
		sz = xk_dir3_data_entsize((unsigned int)fp_get(c, at + 8, 1),
					  c->has_ftype);
	if (sz < 8 || sz % 8)
		return 0;
	return sz;
}

static size_t
dent_at(const struct xk_fctx *c, size_t base, uint32_t i)
{
	size_t end = entries_end(c);
	size_t at = base + XK_DIR3_DATA_ENTRY_OFFSET;

	for (uint32_t n = 0; ; n++) {
		size_t sz;

		if (at + 8 > end)
			return XK_FOFF_NONE;
		sz = dent_size(c, at);
		if (sz == 0 || at + sz > end)
			return XK_FOFF_NONE;
		if (n == i)
			return at;
		at += sz;
	}
}

static uint32_t
dent_count(const struct xk_fctx *c, size_t base)
{
	uint32_t n = 0;

	while (dent_at(c, base, n) != XK_FOFF_NONE)
		n++;
	return n;
}

static int
dent_active(const struct xk_fctx *c, size_t base)
{
	return !unused_at(c, base);
}

static int
dent_unused(const struct xk_fctx *c, size_t base)
{
	return unused_at(c, base);
}

/*
 * xfs_db shows a file type for free regions too: the first byte of the
 * region's tag.  We show the same byte so the two print alike.
 */
static int
dent_ftype(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return c->has_ftype;
}

static uint32_t
dent_name_bits(const struct xk_fctx *c, size_t base)
{
	return (uint32_t)fp_get(c, base + 8, 1) * 8;
}

static size_t
dent_ftype_at(const struct xk_fctx *c, size_t base, uint32_t i)
{
	size_t sz;

	(void)i;
	if (!unused_at(c, base))
		return base + 9 + fp_get(c, base + 8, 1);
	sz = dent_size(c, base);
	return sz ? base + sz - 2 : XK_FOFF_NONE;
}

static size_t
dent_tag_at(const struct xk_fctx *c, size_t base, uint32_t i)
{
	size_t sz = dent_size(c, base);

	(void)i;
	return sz ? base + sz - 2 : XK_FOFF_NONE;
}

static const struct xk_field dent_fields[] = {
	R("freetag", 0, 0, 16, XK_FK_HEX, .present = dent_unused),
	R("inumber", 0, 0, 64, XK_FK_UINT, .present = dent_active,
	  .unit = XK_FU_INO, .next = "inode"),
	R("length", 2, 0, 16, XK_FK_HEX, .present = dent_unused),
	R("namelen", 8, 0, 8, XK_FK_UINT, .present = dent_active),
	R("name", 9, 0, 0, XK_FK_CHARS, .present = dent_active,
	  .bits_fn = dent_name_bits),
	R("filetype", 0, 0, 8, XK_FK_UINT, .present = dent_ftype,
	  .elem_fn = dent_ftype_at),
	R("tag", 0, 0, 16, XK_FK_HEX, .elem_fn = dent_tag_at),
	FEND
};

/* ---- leaf entries ---- */

static const struct xk_field leaf_ent_fields[] = {
	R("hashval", 0, 0, 32, XK_FK_HEX),
	R("address", 4, 0, 32, XK_FK_HEX),
	FEND
};

static uint32_t
btail_count(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return c->len < 8 ? 0 : (uint32_t)fp_get(c, c->len - 8, 4);
}

static size_t
bleaf_at(const struct xk_fctx *c, size_t base, uint32_t i)
{
	size_t count = btail_count(c, base);

	if (count > (c->len - 8) / 8)
		return XK_FOFF_NONE;
	return c->len - 8 - count * 8 + (size_t)i * 8;
}

static size_t
tail_at(const struct xk_fctx *c, size_t base, uint32_t i)
{
	(void)base;
	(void)i;
	return c->len < 8 ? XK_FOFF_NONE : c->len - 8;
}

static size_t
ltail_at(const struct xk_fctx *c, size_t base, uint32_t i)
{
	(void)base;
	(void)i;
	return c->len < 4 ? XK_FOFF_NONE : c->len - 4;
}

static const struct xk_field btail_fields[] = {
	R("count", 0, 0, 32, XK_FK_UINT),
	R("stale", 4, 0, 32, XK_FK_UINT),
	FEND
};

static uint32_t
lbests_count(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return c->len < 4 ? 0 : (uint32_t)fp_get(c, c->len - 4, 4);
}

static size_t
lbests_at(const struct xk_fctx *c, size_t base, uint32_t i)
{
	size_t n = lbests_count(c, base);

	if (c->len < 4 || n > (c->len - 4) / 2)
		return XK_FOFF_NONE;
	return c->len - 4 - n * 2 + (size_t)i * 2;
}

static const struct xk_field leaf_hdr_fields[] = {
	S("info", 0, xk_da3_blkinfo_fields),
	R("count", 56, 0, 16, XK_FK_UINT),
	R("stale", 58, 0, 16, XK_FK_UINT),
	FEND
};

static const struct xk_field node_hdr_fields[] = {
	S("info", 0, xk_da3_blkinfo_fields),
	R("count", 56, 0, 16, XK_FK_UINT),
	R("level", 58, 0, 16, XK_FK_UINT),
	FEND
};

static const struct xk_field ltail_fields[] = {
	R("bestcount", 0, 0, 32, XK_FK_UINT),
	FEND
};

/* ---- free index ---- */

static const struct xk_field free_hdr_fields[] = {
	R("hdr.magic", 0, 0, 32, XK_FK_HEX),
	R("hdr.crc", 4, 0, 32, XK_FK_CRC),
	R("hdr.bno", 8, 0, 64, XK_FK_UINT, .flags = XK_FF_NULL,
	  .unit = XK_FU_DADDR),
	R("hdr.lsn", 16, 0, 64, XK_FK_HEX, .unit = XK_FU_LSN),
	R("hdr.uuid", 24, 0, 128, XK_FK_UUID),
	R("hdr.owner", 40, 0, 64, XK_FK_UINT, .unit = XK_FU_INO,
	  .next = "inode"),
	R("firstdb", 48, 0, 32, XK_FK_UINT),
	R("nvalid", 52, 0, 32, XK_FK_UINT),
	R("nused", 56, 0, 32, XK_FK_UINT),
	FEND
};

static uint32_t
fbests_count(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return (uint32_t)fp_get(c, 52, 4);
}

static const struct xk_field dir3_fields[] = {
	S("bhdr", 0, data_hdr_fields, .present = is_block),
	S("dhdr", 0, data_hdr_fields, .present = is_data),
	S("bu", 0, dent_fields, .flags = XK_FF_ARRAY, .present = is_block,
	  .count_fn = dent_count, .elem_fn = dent_at),
	S("du", 0, dent_fields, .flags = XK_FF_ARRAY, .present = is_data,
	  .count_fn = dent_count, .elem_fn = dent_at),
	S("bleaf", 0, leaf_ent_fields, .flags = XK_FF_ARRAY,
	  .present = is_block, .count_fn = btail_count, .elem_fn = bleaf_at),
	S("btail", 0, btail_fields, .present = is_block, .elem_fn = tail_at),
	S("lhdr", 0, leaf_hdr_fields, .present = is_leafx),
	R("lbests", 0, 0, 16, XK_FK_HEX, .flags = XK_FF_ARRAY,
	  .present = is_leaf1, .count_fn = lbests_count,
	  .elem_fn = lbests_at),
	S("lents", 64, leaf_ent_fields, .flags = XK_FF_ARRAY, .stride = 8,
	  .present = is_leafx, .count_fn = hdr_count16),
	S("ltail", 0, ltail_fields, .present = is_leaf1, .elem_fn = ltail_at),
	S("nhdr", 0, node_hdr_fields, .present = is_node),
	S("nbtree", 64, xk_da3_node_fields, .flags = XK_FF_ARRAY |
	  XK_FF_COMPACT, .stride = 8, .present = is_node,
	  .count_fn = hdr_count16),
	S("fhdr", 0, free_hdr_fields, .present = is_free),
	R("fbests", 64, 0, 16, XK_FK_HEX, .flags = XK_FF_ARRAY |
	  XK_FF_SKIPZERO, .stride = 2,
	  .present = is_free, .count_fn = fbests_count),
	FEND
};

const struct xk_ftype xk_dir3_ftype = { "dir3", dir3_fields };
