// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Field tables of the AG headers: AGF, AGI and AGFL.  Root pointers lead
 * to their btree types, so db's addr can follow them; the AGFL's slot
 * array is as long as the sector it sits in allows.
 */
#include <xfskit/format/ag.h>

#include "fields_priv.h"

#define AGF(nm, mb, k, ...)	F(nm, struct xk_agf, mb, k, __VA_ARGS__)
#define AGI(nm, mb, k, ...)	F(nm, struct xk_agi, mb, k, __VA_ARGS__)
#define AGFL(nm, mb, k, ...)	F(nm, struct xk_agfl, mb, k, __VA_ARGS__)
#define ROOT(nm, i, nx) \
	R(nm, offsetof(struct xk_agf, agf_roots) + 4 * (i), 0, 32, \
	  XK_FK_UINT, .flags = XK_FF_NULL, .unit = XK_FU_AGBLOCK, .next = nx)
#define LEVEL(nm, i) \
	R(nm, offsetof(struct xk_agf, agf_levels) + 4 * (i), 0, 32, XK_FK_UINT)

static const struct xk_field agf_fields[] = {
	AGF("magicnum", agf_magicnum, XK_FK_HEX),
	AGF("versionnum", agf_versionnum, XK_FK_UINT),
	AGF("seqno", agf_seqno, XK_FK_UINT),
	AGF("length", agf_length, XK_FK_UINT),
	ROOT("bnoroot", XK_AGF_BNO, "bnobt"),
	ROOT("cntroot", XK_AGF_CNT, "cntbt"),
	/* 0 without rmapbt; xfs_db then shows no value. */
	R("rmaproot", offsetof(struct xk_agf, agf_roots) + 4 * XK_AGF_RMAP, 0,
	  32, XK_FK_UINT, .flags = XK_FF_NULL | XK_FF_SKIPZERO,
	  .unit = XK_FU_AGBLOCK, .next = "rmapbt"),
	AGF("refcntroot", agf_refcount_root, XK_FK_UINT, .flags = XK_FF_NULL,
	    .unit = XK_FU_AGBLOCK, .next = "refcntbt"),
	LEVEL("bnolevel", XK_AGF_BNO),
	LEVEL("cntlevel", XK_AGF_CNT),
	LEVEL("rmaplevel", XK_AGF_RMAP),
	AGF("refcntlevel", agf_refcount_level, XK_FK_UINT),
	AGF("rmapblocks", agf_rmap_blocks, XK_FK_UINT),
	AGF("refcntblocks", agf_refcount_blocks, XK_FK_UINT),
	AGF("flfirst", agf_flfirst, XK_FK_UINT),
	AGF("fllast", agf_fllast, XK_FK_UINT),
	AGF("flcount", agf_flcount, XK_FK_UINT),
	AGF("freeblks", agf_freeblks, XK_FK_UINT),
	AGF("longest", agf_longest, XK_FK_UINT),
	AGF("btreeblks", agf_btreeblks, XK_FK_UINT),
	AGF("uuid", agf_uuid, XK_FK_UUID),
	AGF("lsn", agf_lsn, XK_FK_HEX, .unit = XK_FU_LSN),
	AGF("crc", agf_crc, XK_FK_CRC),
	FEND
};

static const struct xk_field agi_fields[] = {
	AGI("magicnum", agi_magicnum, XK_FK_HEX),
	AGI("versionnum", agi_versionnum, XK_FK_UINT),
	AGI("seqno", agi_seqno, XK_FK_UINT),
	AGI("length", agi_length, XK_FK_UINT),
	AGI("count", agi_count, XK_FK_UINT),
	AGI("root", agi_root, XK_FK_UINT, .flags = XK_FF_NULL,
	    .unit = XK_FU_AGBLOCK, .next = "inobt"),
	AGI("level", agi_level, XK_FK_UINT),
	AGI("freecount", agi_freecount, XK_FK_UINT),
	AGI("newino", agi_newino, XK_FK_UINT, .flags = XK_FF_NULL,
	    .unit = XK_FU_AGINO, .next = "inode"),
	AGI("dirino", agi_dirino, XK_FK_UINT, .flags = XK_FF_NULL,
	    .unit = XK_FU_AGINO, .next = "inode"),
	R("unlinked", offsetof(struct xk_agi, agi_unlinked), 0, 32,
	  XK_FK_UINT, .flags = XK_FF_ARRAY | XK_FF_NULL | XK_FF_SKIPNULL,
	  .count = XK_AGI_UNLINKED_BUCKETS, .stride = 4,
	  .unit = XK_FU_AGINO, .next = "inode"),
	AGI("uuid", agi_uuid, XK_FK_UUID),
	AGI("crc", agi_crc, XK_FK_CRC),
	AGI("lsn", agi_lsn, XK_FK_HEX, .unit = XK_FU_LSN),
	AGI("free_root", agi_free_root, XK_FK_UINT, .flags = XK_FF_NULL,
	    .unit = XK_FU_AGBLOCK, .next = "finobt"),
	AGI("free_level", agi_free_level, XK_FK_UINT),
	AGI("ino_blocks", agi_iblocks, XK_FK_UINT),
	AGI("fino_blocks", agi_fblocks, XK_FK_UINT),
	FEND
};

/* Free-list slots: whatever of the sector follows the header. */
static uint32_t
agfl_count(const struct xk_fctx *c, size_t base)
{
	size_t hdr = sizeof(struct xk_agfl);

	if (c->len < base + hdr)
		return 0;
	return (uint32_t)((c->len - base - hdr) / 4);
}

static const struct xk_field agfl_fields[] = {
	AGFL("magicnum", agfl_magicnum, XK_FK_HEX),
	AGFL("seqno", agfl_seqno, XK_FK_UINT),
	AGFL("uuid", agfl_uuid, XK_FK_UUID),
	AGFL("lsn", agfl_lsn, XK_FK_HEX, .unit = XK_FU_LSN),
	AGFL("crc", agfl_crc, XK_FK_CRC),
	R("bno", sizeof(struct xk_agfl), 0, 32, XK_FK_UINT,
	  .flags = XK_FF_ARRAY | XK_FF_NULL, .count_fn = agfl_count,
	  .stride = 4, .unit = XK_FU_AGBLOCK),
	FEND
};

const struct xk_ftype xk_agf_ftype = { .name = "agf", .fields = agf_fields };
const struct xk_ftype xk_agi_ftype = { .name = "agi", .fields = agi_fields };
const struct xk_ftype xk_agfl_ftype = {
	.name = "agfl", .fields = agfl_fields
};
