// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The type table: every name "type" accepts, the field table that shows
 * it and the libfs verifier that judges it.  Directory and attribute
 * blocks pick their verifier by magic number, as one xfs_db type covers
 * several block kinds.  This is the one place that maps types to
 * verifiers, so db never checks anything itself.
 */
#include <string.h>

#include <xfskit/format/attr.h>
#include <xfskit/format/dir.h>
#include <xfskit/format/dquot.h>

#include "db.h"

#define OPS_FN(fn, expr) \
static const struct xk_buf_ops * \
fn(const uint8_t *buf, size_t len) \
{ \
	(void)buf; \
	(void)len; \
	return (expr); \
}

OPS_FN(sb_ops, &xk_sb_buf_ops)
OPS_FN(agf_ops, &xk_agf_buf_ops)
OPS_FN(agi_ops, &xk_agi_buf_ops)
OPS_FN(agfl_ops, &xk_agfl_buf_ops)
OPS_FN(bno_ops, xk_bnobt_ops.buf_ops)
OPS_FN(cnt_ops, xk_cntbt_ops.buf_ops)
OPS_FN(ino_ops, xk_inobt_ops.buf_ops)
OPS_FN(fino_ops, xk_finobt_ops.buf_ops)
OPS_FN(rmap_ops, xk_rmapbt_ops.buf_ops)
OPS_FN(refc_ops, xk_refcountbt_ops.buf_ops)
OPS_FN(rtrmap_ops, xk_rtrmapbt_ops.buf_ops)
OPS_FN(rtrefc_ops, xk_rtrefcountbt_ops.buf_ops)
OPS_FN(bmbt_ops, xk_bmbt_ops.buf_ops)
OPS_FN(inode_ops, &xk_dinode_buf_ops)
OPS_FN(symlink_ops, &xk_symlink_buf_ops)
OPS_FN(dquot_ops, &xk_dquot_buf_ops)

OPS_FN(dir3_ops, xk_dir3_buf_ops_for(buf, len))
OPS_FN(attr3_ops, xk_attr3_buf_ops_for(buf, len))

const struct db_type db_types[] = {
	{ "sb", &xk_sb_ftype, sb_ops, 0, 0, 0 },
	{ "agf", &xk_agf_ftype, agf_ops, 0, 0, 0 },
	{ "agi", &xk_agi_ftype, agi_ops, 0, 0, 0 },
	{ "agfl", &xk_agfl_ftype, agfl_ops, 0, 0, 0 },
	{ "bnobt", &xk_bnobt_ftype, bno_ops, 0, 0, 0 },
	{ "cntbt", &xk_cntbt_ftype, cnt_ops, 0, 0, 0 },
	{ "inobt", &xk_inobt_ftype, ino_ops, 0, 0, 0 },
	{ "finobt", &xk_finobt_ftype, fino_ops, 0, 0, 0 },
	{ "rmapbt", &xk_rmapbt_ftype, rmap_ops, 0, 0, 0 },
	{ "refcntbt", &xk_refcntbt_ftype, refc_ops, 0, 0, 0 },
	{ "rtrmapbt", &xk_rtrmapbt_ftype, rtrmap_ops, 0, 0, 0 },
	{ "rtrefcntbt", &xk_rtrefcntbt_ftype, rtrefc_ops, 0, 0, 0 },
	{ "bmapbta", &xk_bmapbta_ftype, bmbt_ops, 0, 0, 0 },
	{ "bmapbtd", &xk_bmapbtd_ftype, bmbt_ops, 0, 0, 0 },
	{ "inode", &xk_inode_ftype, inode_ops, 1, 0, 0 },
	{ "dir3", &xk_dir3_ftype, dir3_ops, 0, 0, 0 },
	{ "attr3", &xk_attr3_ftype, attr3_ops, 0, 0, 0 },
	{ "symlink", &xk_symlink_ftype, symlink_ops, 0, 0, 0 },
	{ "dqblk", &xk_dqblk_ftype, dquot_ops, 0, sizeof(struct xk_dqblk),
	  XK_DQUOT_CRC_OFF },
	{ "data", NULL, NULL, 0, 0, 0 },
	{ NULL, NULL, NULL, 0, 0, 0 }
};

const struct db_type *
db_type_find(const char *name)
{
	if (strcmp(name, "refcountbt") == 0)
		name = "refcntbt";
	for (const struct db_type *t = db_types; t->name; t++)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}
