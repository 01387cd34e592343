// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Field table of the superblock, in on-disk order, with the names and
 * presentation xfs_db uses (hex for magic numbers and feature words,
 * "null" for unset inode and block numbers).
 */
#include <xfskit/format/sb.h>

#include "fields_priv.h"

#define SB(nm, mb, k, ...)	F(nm, struct xk_dsb, mb, k, __VA_ARGS__)

/* The fields after meta_uuid exist with the metadata tree only. */
static int
metadir_sb(const struct xk_fctx *c, size_t base)
{
	const struct xk_dsb *d = (const struct xk_dsb *)(c->buf + base);

	return c->len >= base + sizeof(*d) &&
	       (xk_be32_get(d->sb_features_incompat) &
		XK_SB_FEAT_INCOMPAT_METADIR);
}

static const struct xk_field sb_fields[] = {
	SB("magicnum", sb_magicnum, XK_FK_HEX),
	SB("blocksize", sb_blocksize, XK_FK_UINT),
	SB("dblocks", sb_dblocks, XK_FK_UINT, .flags = XK_FF_NULL),
	SB("rblocks", sb_rblocks, XK_FK_UINT, .flags = XK_FF_NULL),
	SB("rextents", sb_rextents, XK_FK_UINT, .flags = XK_FF_NULL),
	SB("uuid", sb_uuid, XK_FK_UUID),
	SB("logstart", sb_logstart, XK_FK_UINT, .flags = XK_FF_NULL,
	   .unit = XK_FU_FSBLOCK, .next = "log"),
	SB("rootino", sb_rootino, XK_FK_UINT, .flags = XK_FF_NULL,
	   .unit = XK_FU_INO, .next = "inode"),
	SB("rbmino", sb_rbmino, XK_FK_UINT, .flags = XK_FF_NULL,
	   .unit = XK_FU_INO, .next = "inode"),
	SB("rsumino", sb_rsumino, XK_FK_UINT, .flags = XK_FF_NULL,
	   .unit = XK_FU_INO, .next = "inode"),
	SB("rextsize", sb_rextsize, XK_FK_UINT, .flags = XK_FF_NULL),
	SB("agblocks", sb_agblocks, XK_FK_UINT, .flags = XK_FF_NULL),
	SB("agcount", sb_agcount, XK_FK_UINT, .flags = XK_FF_NULL),
	SB("rbmblocks", sb_rbmblocks, XK_FK_UINT),
	SB("logblocks", sb_logblocks, XK_FK_UINT),
	SB("versionnum", sb_versionnum, XK_FK_HEX),
	SB("sectsize", sb_sectsize, XK_FK_UINT),
	SB("inodesize", sb_inodesize, XK_FK_UINT),
	SB("inopblock", sb_inopblock, XK_FK_UINT),
	SB("fname", sb_fname, XK_FK_CHARS),
	SB("blocklog", sb_blocklog, XK_FK_UINT),
	SB("sectlog", sb_sectlog, XK_FK_UINT),
	SB("inodelog", sb_inodelog, XK_FK_UINT),
	SB("inopblog", sb_inopblog, XK_FK_UINT),
	SB("agblklog", sb_agblklog, XK_FK_UINT),
	SB("rextslog", sb_rextslog, XK_FK_UINT),
	SB("inprogress", sb_inprogress, XK_FK_UINT),
	SB("imax_pct", sb_imax_pct, XK_FK_UINT),
	SB("icount", sb_icount, XK_FK_UINT),
	SB("ifree", sb_ifree, XK_FK_UINT),
	SB("fdblocks", sb_fdblocks, XK_FK_UINT),
	SB("frextents", sb_frextents, XK_FK_UINT),
	SB("uquotino", sb_uquotino, XK_FK_UINT, .flags = XK_FF_NULL,
	   .unit = XK_FU_INO, .next = "inode"),
	SB("gquotino", sb_gquotino, XK_FK_UINT, .flags = XK_FF_NULL,
	   .unit = XK_FU_INO, .next = "inode"),
	SB("qflags", sb_qflags, XK_FK_HEX),
	SB("flags", sb_flags, XK_FK_HEX),
	SB("shared_vn", sb_shared_vn, XK_FK_UINT),
	SB("inoalignmt", sb_inoalignmt, XK_FK_UINT),
	SB("unit", sb_unit, XK_FK_UINT),
	SB("width", sb_width, XK_FK_UINT),
	SB("dirblklog", sb_dirblklog, XK_FK_UINT),
	SB("logsectlog", sb_logsectlog, XK_FK_UINT),
	SB("logsectsize", sb_logsectsize, XK_FK_UINT),
	SB("logsunit", sb_logsunit, XK_FK_UINT),
	SB("features2", sb_features2, XK_FK_HEX),
	SB("bad_features2", sb_bad_features2, XK_FK_HEX),
	SB("features_compat", sb_features_compat, XK_FK_HEX),
	SB("features_ro_compat", sb_features_ro_compat, XK_FK_HEX),
	SB("features_incompat", sb_features_incompat, XK_FK_HEX),
	SB("features_log_incompat", sb_features_log_incompat, XK_FK_HEX),
	SB("crc", sb_crc, XK_FK_CRC),
	SB("spino_align", sb_spino_align, XK_FK_UINT),
	SB("pquotino", sb_pquotino, XK_FK_UINT, .flags = XK_FF_NULL,
	   .unit = XK_FU_INO, .next = "inode"),
	SB("lsn", sb_lsn, XK_FK_HEX, .unit = XK_FU_LSN),
	SB("meta_uuid", sb_meta_uuid, XK_FK_UUID),
	SB("metadirino", sb_metadirino, XK_FK_UINT, .flags = XK_FF_NULL,
	   .unit = XK_FU_INO, .next = "inode", .present = metadir_sb),
	SB("rgcount", sb_rgcount, XK_FK_UINT, .present = metadir_sb),
	SB("rgextents", sb_rgextents, XK_FK_UINT, .present = metadir_sb),
	SB("rgblklog", sb_rgblklog, XK_FK_UINT, .present = metadir_sb),
	SB("pad", sb_pad, XK_FK_UINT, .present = metadir_sb),
	FEND
};

const struct xk_ftype xk_sb_ftype = { .name = "sb", .fields = sb_fields };
