// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Field table of attribute blocks (xfs_db's "attr3" type): leaf blocks
 * (header, hash-sorted entries, name/value records), dabtree nodes and
 * remote value blocks, told apart by magic number.  A name/value record
 * is local or remote according to the flags of the entry that points at
 * it, so its fields find that entry first.
 */
#include <xfskit/format/attr.h>

#include "fields_priv.h"

static int
is_leaf(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return xk_fp_da_magic_is(c, XK_ATTR3_LEAF_MAGIC);
}

static int
is_node(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return xk_fp_da_magic_is(c, XK_DA3_NODE_MAGIC);
}

static int
is_rmt(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return fp_get(c, 0, 4) == XK_ATTR3_RMT_MAGIC;
}

static uint32_t
hdr_count(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return (uint32_t)fp_get(c, 56, 2);
}

#define ENTRIES_OFF	sizeof(struct xk_attr3_leaf_hdr)

/* Entries that both the header claims and the buffer holds. */
static uint32_t
entries_in_buf(const struct xk_fctx *c)
{
	uint32_t n = hdr_count(c, 0);
	size_t room = c->len > ENTRIES_OFF ? (c->len - ENTRIES_OFF) / 8 : 0;

	return n < room ? n : (uint32_t)room;
}

/*
 * Name record i sits where entry i's nameidx says; an entry outside the
 * buffer or an index into the header ends the list.
 */
static size_t
nv_at(const struct xk_fctx *c, size_t base, uint32_t i)
{
	size_t at;

	(void)base;
	if (i >= entries_in_buf(c))
		return XK_FOFF_NONE;
	at = (size_t)fp_get(c, ENTRIES_OFF + (size_t)i * 8 + 4, 2);
	return at < ENTRIES_OFF ? XK_FOFF_NONE : at;
}

/* Flags of the entry whose record starts at base. */
static unsigned int
nv_flags(const struct xk_fctx *c, size_t base)
{
	uint32_t n = entries_in_buf(c);

	for (uint32_t i = 0; i < n; i++)
		if (nv_at(c, 0, i) == base)
			return (unsigned int)fp_get(c, ENTRIES_OFF +
						    (size_t)i * 8 + 6, 1);
	return 0;
}

static int
nv_local(const struct xk_fctx *c, size_t base)
{
	return (nv_flags(c, base) & XK_ATTR_LOCAL) != 0;
}

static int
nv_remote(const struct xk_fctx *c, size_t base)
{
	return !nv_local(c, base);
}

/* A parent pointer's value is a record naming the directory. */
static int
nv_parent(const struct xk_fctx *c, size_t base)
{
	return nv_local(c, base) && (nv_flags(c, base) & XK_ATTR_PARENT);
}

static int
nv_local_value(const struct xk_fctx *c, size_t base)
{
	return nv_local(c, base) && !nv_parent(c, base);
}

static uint32_t
local_name_bits(const struct xk_fctx *c, size_t base)
{
	return (uint32_t)fp_get(c, base + 2, 1) * 8;
}

static uint32_t
local_value_bits(const struct xk_fctx *c, size_t base)
{
	return (uint32_t)fp_get(c, base, 2) * 8;
}

static size_t
local_value_at(const struct xk_fctx *c, size_t base, uint32_t i)
{
	(void)i;
	return base + 3 + fp_get(c, base + 2, 1);
}

static uint32_t
remote_name_bits(const struct xk_fctx *c, size_t base)
{
	return (uint32_t)fp_get(c, base + 8, 1) * 8;
}

static const struct xk_field nv_fields[] = {
	R("valueblk", 0, 0, 32, XK_FK_HEX, .present = nv_remote,
	  .unit = XK_FU_DABLOCK),
	R("valuelen", 4, 0, 32, XK_FK_UINT, .present = nv_remote),
	R("namelen", 8, 0, 8, XK_FK_UINT, .present = nv_remote),
	R("name", 9, 0, 0, XK_FK_CHARS, .present = nv_remote,
	  .bits_fn = remote_name_bits),
	R("valuelen", 0, 0, 16, XK_FK_UINT, .present = nv_local),
	R("namelen", 2, 0, 8, XK_FK_UINT, .present = nv_local),
	R("name", 3, 0, 0, XK_FK_CHARS, .present = nv_local,
	  .bits_fn = local_name_bits),
	R("value", 0, 0, 0, XK_FK_CHARS, .present = nv_local_value,
	  .elem_fn = local_value_at, .bits_fn = local_value_bits),
	S("parent_dir", 0, xk_parent_rec_fields, .present = nv_parent,
	  .elem_fn = local_value_at, .stride = sizeof(struct xk_parent_rec)),
	FEND
};

/* A parent pointer's value, as xfs_db names its parts. */
const struct xk_field xk_parent_rec_fields[] = {
	F("inumber", struct xk_parent_rec, p_ino, XK_FK_UINT,
	  .unit = XK_FU_INO, .next = "inode"),
	F("gen", struct xk_parent_rec, p_gen, XK_FK_UINT),
	FEND
};

static const struct xk_field freemap_fields[] = {
	R("base", 0, 0, 16, XK_FK_UINT),
	R("size", 2, 0, 16, XK_FK_UINT),
	FEND
};

static const struct xk_field entry_fields[] = {
	R("hashval", 0, 0, 32, XK_FK_HEX),
	R("nameidx", 4, 0, 16, XK_FK_UINT),
	R("incomplete", 6, 0, 1, XK_FK_UINT),
	R("root", 6, 6, 1, XK_FK_UINT),
	R("secure", 6, 5, 1, XK_FK_UINT),
	R("local", 6, 7, 1, XK_FK_UINT),
	R("parent", 6, 4, 1, XK_FK_UINT),
	FEND
};

static const struct xk_field leaf_hdr_fields[] = {
	S("info", 0, xk_da3_blkinfo_fields),
	R("count", 56, 0, 16, XK_FK_UINT),
	R("usedbytes", 58, 0, 16, XK_FK_UINT),
	R("firstused", 60, 0, 16, XK_FK_UINT),
	R("holes", 62, 0, 8, XK_FK_UINT),
	S("freemap", 64, freemap_fields, .flags = XK_FF_ARRAY |
	  XK_FF_COMPACT, .count = XK_ATTR_LEAF_MAPSIZE, .stride = 4),
	FEND
};

static const struct xk_field node_hdr_fields[] = {
	S("info", 0, xk_da3_blkinfo_fields),
	R("count", 56, 0, 16, XK_FK_UINT),
	R("level", 58, 0, 16, XK_FK_UINT),
	FEND
};

static const struct xk_field rmt_hdr_fields[] = {
	F("magic", struct xk_attr3_rmt_hdr, rm_magic, XK_FK_HEX),
	F("offset", struct xk_attr3_rmt_hdr, rm_offset, XK_FK_UINT),
	F("bytes", struct xk_attr3_rmt_hdr, rm_bytes, XK_FK_UINT),
	F("crc", struct xk_attr3_rmt_hdr, rm_crc, XK_FK_CRC),
	F("uuid", struct xk_attr3_rmt_hdr, rm_uuid, XK_FK_UUID),
	F("owner", struct xk_attr3_rmt_hdr, rm_owner, XK_FK_UINT,
	  .unit = XK_FU_INO, .next = "inode"),
	F("bno", struct xk_attr3_rmt_hdr, rm_blkno, XK_FK_UINT,
	  .unit = XK_FU_DADDR),
	F("lsn", struct xk_attr3_rmt_hdr, rm_lsn, XK_FK_HEX,
	  .unit = XK_FU_LSN),
	FEND
};

static uint32_t
rmt_data_bits(const struct xk_fctx *c, size_t base)
{
	uint64_t n = fp_get(c, base + 8, 4);
	size_t room = c->len > 56 ? c->len - 56 : 0;

	return (uint32_t)(n < room ? n : room) * 8;
}

static const struct xk_field attr3_fields[] = {
	S("hdr", 0, leaf_hdr_fields, .present = is_leaf),
	S("entries", ENTRIES_OFF, entry_fields, .flags = XK_FF_ARRAY |
	  XK_FF_COMPACT, .stride = 8, .present = is_leaf,
	  .count_fn = hdr_count),
	S("nvlist", 0, nv_fields, .flags = XK_FF_ARRAY, .present = is_leaf,
	  .count_fn = hdr_count, .elem_fn = nv_at),
	S("hdr", 0, node_hdr_fields, .present = is_node),
	S("btree", 64, xk_da3_node_fields, .flags = XK_FF_ARRAY |
	  XK_FF_COMPACT, .stride = 8, .present = is_node,
	  .count_fn = hdr_count),
	S("hdr", 0, rmt_hdr_fields, .present = is_rmt),
	R("data", 56, 0, 0, XK_FK_CHARS, .present = is_rmt,
	  .bits_fn = rmt_data_bits),
	FEND
};

const struct xk_ftype xk_attr3_ftype = { "attr3", attr3_fields };
