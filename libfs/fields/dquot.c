// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Field table of a quota record (xfs_db's "dqblk" type): the disk quota
 * followed by its CRC, LSN and UUID, for the first of the 136-byte
 * records a quota block holds.  The padding words are reachable by name
 * but not printed, as xfs_db does not show them.
 */
#include <xfskit/format/dquot.h>

#include "fields_priv.h"

#define DQ(nm, mb, k, ...) F(nm, struct xk_disk_dquot, mb, k, __VA_ARGS__)
#define DB(nm, mb, k, ...) F(nm, struct xk_dqblk, mb, k, __VA_ARGS__)

static const struct xk_field diskdq_fields[] = {
	DQ("magic", d_magic, XK_FK_HEX),
	DQ("version", d_version, XK_FK_HEX),
	DQ("type", d_type, XK_FK_HEX),
	DQ("id", d_id, XK_FK_UINT),
	DQ("blk_hardlimit", d_blk_hardlimit, XK_FK_UINT),
	DQ("blk_softlimit", d_blk_softlimit, XK_FK_UINT),
	DQ("ino_hardlimit", d_ino_hardlimit, XK_FK_UINT),
	DQ("ino_softlimit", d_ino_softlimit, XK_FK_UINT),
	DQ("bcount", d_bcount, XK_FK_UINT),
	DQ("icount", d_icount, XK_FK_UINT),
	DQ("itimer", d_itimer, XK_FK_DQTIME),
	DQ("btimer", d_btimer, XK_FK_DQTIME),
	DQ("iwarns", d_iwarns, XK_FK_UINT),
	DQ("bwarns", d_bwarns, XK_FK_UINT),
	DQ("pad0", d_pad0, XK_FK_UINT, .flags = XK_FF_NOPRINT),
	DQ("rtb_hardlimit", d_rtb_hardlimit, XK_FK_UINT),
	DQ("rtb_softlimit", d_rtb_softlimit, XK_FK_UINT),
	DQ("rtbcount", d_rtbcount, XK_FK_UINT),
	DQ("rtbtimer", d_rtbtimer, XK_FK_DQTIME),
	DQ("rtbwarns", d_rtbwarns, XK_FK_UINT),
	DQ("pad", d_pad, XK_FK_UINT, .flags = XK_FF_NOPRINT),
	FEND
};

static const struct xk_field dqblk_fields[] = {
	S("diskdq", 0, diskdq_fields),
	DB("crc", dd_crc, XK_FK_CRC),
	DB("lsn", dd_lsn, XK_FK_HEX, .unit = XK_FU_LSN),
	DB("uuid", dd_uuid, XK_FK_UUID),
	FEND
};

const struct xk_ftype xk_dqblk_ftype = { "dqblk", dqblk_fields };
