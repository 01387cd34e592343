// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Field tables of every btree block: the short (per-AG) and long (bmbt)
 * v5 headers, then records in leaves or keys and pointers in nodes.  The
 * pointer array starts after room for the block's maximum number of
 * keys, which depends on the block size, so its position is computed.
 * Records and keys are shown compactly ([startblock,blockcount] per
 * line) as xfs_db does.
 */
#include <xfskit/format/btree.h>
#include <xfskit/format/dinode.h>

#include "fields_priv.h"

#define SBH(nm, mb, k, ...) \
	F(nm, struct xk_btree_sblock, mb, k, __VA_ARGS__)
#define LBH(nm, mb, k, ...) \
	F(nm, struct xk_btree_lblock, mb, k, __VA_ARGS__)

#define SHORT_HDR(next_type) \
	SBH("magic", bb_magic, XK_FK_HEX), \
	SBH("level", bb_level, XK_FK_UINT), \
	SBH("numrecs", bb_numrecs, XK_FK_UINT), \
	SBH("leftsib", bb_leftsib, XK_FK_UINT, .flags = XK_FF_NULL, \
	    .unit = XK_FU_AGBLOCK, .next = next_type), \
	SBH("rightsib", bb_rightsib, XK_FK_UINT, .flags = XK_FF_NULL, \
	    .unit = XK_FU_AGBLOCK, .next = next_type), \
	SBH("bno", bb_blkno, XK_FK_UINT, .flags = XK_FF_NULL, \
	    .unit = XK_FU_DADDR), \
	SBH("lsn", bb_lsn, XK_FK_HEX, .unit = XK_FU_LSN), \
	SBH("uuid", bb_uuid, XK_FK_UUID), \
	SBH("owner", bb_owner, XK_FK_UINT), \
	SBH("crc", bb_crc, XK_FK_CRC)

#define LONG_HDR(next_type) \
	LBH("magic", bb_magic, XK_FK_HEX), \
	LBH("level", bb_level, XK_FK_UINT), \
	LBH("numrecs", bb_numrecs, XK_FK_UINT), \
	LBH("leftsib", bb_leftsib, XK_FK_UINT, .flags = XK_FF_NULL, \
	    .unit = XK_FU_FSBLOCK, .next = next_type), \
	LBH("rightsib", bb_rightsib, XK_FK_UINT, .flags = XK_FF_NULL, \
	    .unit = XK_FU_FSBLOCK, .next = next_type), \
	LBH("bno", bb_blkno, XK_FK_UINT, .flags = XK_FF_NULL, \
	    .unit = XK_FU_DADDR), \
	LBH("lsn", bb_lsn, XK_FK_HEX, .unit = XK_FU_LSN), \
	LBH("uuid", bb_uuid, XK_FK_UUID), \
	LBH("owner", bb_owner, XK_FK_UINT, .unit = XK_FU_INO), \
	LBH("crc", bb_crc, XK_FK_CRC)

static int
is_leaf(const struct xk_fctx *c, size_t base)
{
	return fp_get(c, base + 4, 2) == 0;
}

static int
is_node(const struct xk_fctx *c, size_t base)
{
	return !is_leaf(c, base);
}

static uint32_t
numrecs(const struct xk_fctx *c, size_t base)
{
	return (uint32_t)fp_get(c, base + 6, 2);
}

/* Pointer i of a node block whose keys are klen and pointers plen bytes. */
static size_t
ptr_at(const struct xk_fctx *c, size_t base, uint32_t i, size_t hdr,
       size_t klen, size_t plen)
{
	size_t maxrecs;

	if (c->len < base + hdr)
		return XK_FOFF_NONE;
	maxrecs = (c->len - base - hdr) / (klen + plen);
	return base + hdr + maxrecs * klen + (size_t)i * plen;
}

#define PTR_FN(fn, hdr, klen, plen) \
static size_t \
fn(const struct xk_fctx *c, size_t base, uint32_t i) \
{ \
	return ptr_at(c, base, i, hdr, klen, plen); \
}

PTR_FN(alloc_ptr, 56, 8, 4)
PTR_FN(inobt_ptr, 56, 4, 4)
PTR_FN(rmap_ptr, 56, 40, 4)
PTR_FN(refc_ptr, 56, 4, 4)
PTR_FN(bmbt_ptr, 72, 8, 8)
PTR_FN(rtrmap_ptr, 72, 40, 8)
PTR_FN(rtrefc_ptr, 72, 4, 8)

#define RECS(subtab, size, hdr) \
	S("recs", hdr, subtab, .flags = XK_FF_ARRAY | XK_FF_BASE1 | \
	  XK_FF_COMPACT, .stride = (size), .present = is_leaf, \
	  .count_fn = numrecs)
#define KEYS(subtab, size, hdr) \
	S("keys", hdr, subtab, .flags = XK_FF_ARRAY | XK_FF_BASE1 | \
	  XK_FF_COMPACT, .stride = (size), .present = is_node, \
	  .count_fn = numrecs)
#define PTRS(fn, bits_, unit_, next_type) \
	R("ptrs", 0, 0, bits_, XK_FK_UINT, .flags = XK_FF_ARRAY | \
	  XK_FF_BASE1 | XK_FF_NULL, .present = is_node, .count_fn = numrecs, \
	  .elem_fn = fn, .unit = unit_, .next = next_type)

/* ---- free space ---- */

static const struct xk_field alloc_rec_fields[] = {
	F("startblock", struct xk_alloc_rec, ar_startblock, XK_FK_UINT,
	  .unit = XK_FU_AGBLOCK),
	F("blockcount", struct xk_alloc_rec, ar_blockcount, XK_FK_UINT),
	FEND
};

static const struct xk_field bnobt_fields[] = {
	SHORT_HDR("bnobt"),
	RECS(alloc_rec_fields, 8, 56),
	KEYS(alloc_rec_fields, 8, 56),
	PTRS(alloc_ptr, 32, XK_FU_AGBLOCK, "bnobt"),
	FEND
};

/* The by-size tree shows its keys length first, as it sorts on them. */
static const struct xk_field cnt_rec_fields[] = {
	F("blockcount", struct xk_alloc_rec, ar_blockcount, XK_FK_UINT),
	F("startblock", struct xk_alloc_rec, ar_startblock, XK_FK_UINT,
	  .unit = XK_FU_AGBLOCK),
	FEND
};

static const struct xk_field cntbt_fields[] = {
	SHORT_HDR("cntbt"),
	RECS(alloc_rec_fields, 8, 56),
	KEYS(cnt_rec_fields, 8, 56),
	PTRS(alloc_ptr, 32, XK_FU_AGBLOCK, "cntbt"),
	FEND
};

/* ---- inodes ---- */

static int
sparse(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return c->has_sparse;
}

static int
not_sparse(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return !c->has_sparse;
}

static const struct xk_field inobt_rec_fields[] = {
	R("startino", 0, 0, 32, XK_FK_UINT, .unit = XK_FU_AGINO),
	R("holemask", 4, 0, 16, XK_FK_UINT, .present = sparse),
	R("count", 6, 0, 8, XK_FK_UINT, .present = sparse),
	R("freecount", 7, 0, 8, XK_FK_UINT, .present = sparse),
	R("freecount", 4, 0, 32, XK_FK_UINT, .present = not_sparse),
	R("free", 8, 0, 64, XK_FK_HEX),
	FEND
};

static const struct xk_field inobt_key_fields[] = {
	R("startino", 0, 0, 32, XK_FK_UINT, .unit = XK_FU_AGINO),
	FEND
};

static const struct xk_field inobt_fields[] = {
	SHORT_HDR("inobt"),
	RECS(inobt_rec_fields, 16, 56),
	KEYS(inobt_key_fields, 4, 56),
	PTRS(inobt_ptr, 32, XK_FU_AGBLOCK, "inobt"),
	FEND
};

static const struct xk_field finobt_fields[] = {
	SHORT_HDR("finobt"),
	RECS(inobt_rec_fields, 16, 56),
	KEYS(inobt_key_fields, 4, 56),
	PTRS(inobt_ptr, 32, XK_FU_AGBLOCK, "finobt"),
	FEND
};

/* ---- reverse mappings ---- */

#define RMAP_OFF_FIELDS(sfx, at, with_unwritten) \
	R("offset" sfx, at, 10, 54, XK_FK_UINT), \
	R("extentflag" sfx, at, 2, 1, XK_FK_UINT, \
	  .present = with_unwritten), \
	R("attrfork" sfx, at, 0, 1, XK_FK_UINT), \
	R("bmbtblock" sfx, at, 1, 1, XK_FK_UINT)

static int
always(const struct xk_fctx *c, size_t base)
{
	(void)c;
	(void)base;
	return 1;
}

/* Realtime groups' records name group blocks: no unit db can follow. */
#define RMAP_REC(unit_) \
	R("startblock", 0, 0, 32, XK_FK_UINT, .unit = unit_), \
	R("blockcount", 4, 0, 32, XK_FK_UINT), \
	R("owner", 8, 0, 64, XK_FK_INT), \
	RMAP_OFF_FIELDS("", 16, always), \
	FEND

static const struct xk_field rmap_rec_fields[] = {
	RMAP_REC(XK_FU_AGBLOCK)
};

const struct xk_field xk_rtrmap_rec_fields[] = {
	RMAP_REC(XK_FU_NONE)
};

/*
 * Node keys are (low, high) pairs, each 20 bytes.  Newer kernels keep
 * the unwritten bit in keys too, and xfs_db 7.2 shows it.
 */
static const struct xk_field rmap_key_fields[] = {
	R("startblock", 0, 0, 32, XK_FK_UINT, .unit = XK_FU_AGBLOCK),
	R("owner", 4, 0, 64, XK_FK_INT),
	R("offset", 12, 10, 54, XK_FK_UINT),
	R("extentflag", 12, 2, 1, XK_FK_UINT),
	R("attrfork", 12, 0, 1, XK_FK_UINT),
	R("bmbtblock", 12, 1, 1, XK_FK_UINT),
	R("startblock_hi", 20, 0, 32, XK_FK_UINT, .unit = XK_FU_AGBLOCK),
	R("owner_hi", 24, 0, 64, XK_FK_INT),
	R("offset_hi", 32, 10, 54, XK_FK_UINT),
	R("extentflag_hi", 32, 2, 1, XK_FK_UINT),
	R("attrfork_hi", 32, 0, 1, XK_FK_UINT),
	R("bmbtblock_hi", 32, 1, 1, XK_FK_UINT),
	FEND
};

/* The realtime tree's keys: xfs_db 7.2 shows no unwritten bit there. */
#define RTRMAP_KEY_HALF(sfx, at) \
	R("startblock" sfx, at, 0, 32, XK_FK_UINT), \
	R("owner" sfx, at + 4, 0, 64, XK_FK_INT), \
	R("offset" sfx, at + 12, 10, 54, XK_FK_UINT), \
	R("attrfork" sfx, at + 12, 0, 1, XK_FK_UINT), \
	R("bmbtblock" sfx, at + 12, 1, 1, XK_FK_UINT)

const struct xk_field xk_rtrmap_key_fields[] = {
	RTRMAP_KEY_HALF("", 0),
	RTRMAP_KEY_HALF("_hi", 20),
	FEND
};

static const struct xk_field rmapbt_fields[] = {
	SHORT_HDR("rmapbt"),
	RECS(rmap_rec_fields, 24, 56),
	KEYS(rmap_key_fields, 40, 56),
	PTRS(rmap_ptr, 32, XK_FU_AGBLOCK, "rmapbt"),
	FEND
};

/* ---- reference counts ---- */

#define REFC_KEY(unit_) \
	R("startblock", 0, 1, 31, XK_FK_UINT, .unit = unit_), \
	R("cowflag", 0, 0, 1, XK_FK_UINT), \
	FEND
#define REFC_REC(unit_) \
	R("startblock", 0, 1, 31, XK_FK_UINT, .unit = unit_), \
	R("blockcount", 4, 0, 32, XK_FK_UINT), \
	R("refcount", 8, 0, 32, XK_FK_UINT), \
	R("cowflag", 0, 0, 1, XK_FK_UINT), \
	FEND

static const struct xk_field refc_rec_fields[] = {
	REFC_REC(XK_FU_AGBLOCK)
};

static const struct xk_field refc_key_fields[] = {
	REFC_KEY(XK_FU_AGBLOCK)
};

static const struct xk_field refcntbt_fields[] = {
	SHORT_HDR("refcntbt"),
	RECS(refc_rec_fields, 12, 56),
	KEYS(refc_key_fields, 4, 56),
	PTRS(refc_ptr, 32, XK_FU_AGBLOCK, "refcntbt"),
	FEND
};

const struct xk_field xk_rtrefc_rec_fields[] = {
	REFC_REC(XK_FU_NONE)
};

const struct xk_field xk_rtrefc_key_fields[] = {
	REFC_KEY(XK_FU_NONE)
};

/* ---- realtime groups' trees: long headers, rooted in an inode ---- */

static const struct xk_field rtrmapbt_fields[] = {
	LONG_HDR("rtrmapbt"),
	RECS(xk_rtrmap_rec_fields, 24, 72),
	KEYS(xk_rtrmap_key_fields, 40, 72),
	PTRS(rtrmap_ptr, 64, XK_FU_FSBLOCK, "rtrmapbt"),
	FEND
};

static const struct xk_field rtrefcntbt_fields[] = {
	LONG_HDR("rtrefcntbt"),
	RECS(xk_rtrefc_rec_fields, 12, 72),
	KEYS(xk_rtrefc_key_fields, 4, 72),
	PTRS(rtrefc_ptr, 64, XK_FU_FSBLOCK, "rtrefcntbt"),
	FEND
};

/* ---- block maps (also used by inode forks) ---- */

const struct xk_field xk_bmbt_rec_fields[] = {
	R("startoff", 0, 1, 54, XK_FK_UINT),
	R("startblock", 0, 55, 52, XK_FK_UINT, .unit = XK_FU_FSBLOCK),
	R("blockcount", 0, 107, 21, XK_FK_UINT),
	R("extentflag", 0, 0, 1, XK_FK_UINT),
	FEND
};

const struct xk_field xk_bmbt_key_fields[] = {
	R("startoff", 0, 0, 64, XK_FK_UINT),
	FEND
};

static const struct xk_field bmapbta_fields[] = {
	LONG_HDR("bmapbta"),
	RECS(xk_bmbt_rec_fields, 16, 72),
	KEYS(xk_bmbt_key_fields, 8, 72),
	PTRS(bmbt_ptr, 64, XK_FU_FSBLOCK, "bmapbta"),
	FEND
};

static const struct xk_field bmapbtd_fields[] = {
	LONG_HDR("bmapbtd"),
	RECS(xk_bmbt_rec_fields, 16, 72),
	KEYS(xk_bmbt_key_fields, 8, 72),
	PTRS(bmbt_ptr, 64, XK_FU_FSBLOCK, "bmapbtd"),
	FEND
};

const struct xk_ftype xk_bnobt_ftype = { "bnobt", bnobt_fields };
const struct xk_ftype xk_cntbt_ftype = { "cntbt", cntbt_fields };
const struct xk_ftype xk_inobt_ftype = { "inobt", inobt_fields };
const struct xk_ftype xk_finobt_ftype = { "finobt", finobt_fields };
const struct xk_ftype xk_rmapbt_ftype = { "rmapbt", rmapbt_fields };
const struct xk_ftype xk_refcntbt_ftype = { "refcntbt", refcntbt_fields };
const struct xk_ftype xk_rtrmapbt_ftype = { "rtrmapbt", rtrmapbt_fields };
const struct xk_ftype xk_rtrefcntbt_ftype = {
	"rtrefcntbt", rtrefcntbt_fields
};
const struct xk_ftype xk_bmapbta_ftype = { "bmapbta", bmapbta_fields };
const struct xk_ftype xk_bmapbtd_ftype = { "bmapbtd", bmapbtd_fields };
