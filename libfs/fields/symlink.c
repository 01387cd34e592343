// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Field table of a remote symlink block: the v5 header, then this
 * block's piece of the target, as long as the header says (clipped to
 * the block).
 */
#include <xfskit/format/symlink.h>

#include "fields_priv.h"

#define SL(nm, mb, k, ...) F(nm, struct xk_dsymlink_hdr, mb, k, __VA_ARGS__)

static uint32_t
data_bits(const struct xk_fctx *c, size_t base)
{
	uint64_t n = fp_get(c, base + 8, 4);
	size_t hdr = sizeof(struct xk_dsymlink_hdr);
	size_t room = c->len > hdr ? c->len - hdr : 0;

	return (uint32_t)(n < room ? n : room) * 8;
}

static const struct xk_field symlink_fields[] = {
	SL("magic", sl_magic, XK_FK_HEX),
	SL("offset", sl_offset, XK_FK_UINT),
	SL("bytes", sl_bytes, XK_FK_UINT),
	SL("crc", sl_crc, XK_FK_CRC),
	SL("uuid", sl_uuid, XK_FK_UUID),
	SL("owner", sl_owner, XK_FK_UINT, .unit = XK_FU_INO, .next = "inode"),
	SL("bno", sl_blkno, XK_FK_UINT, .unit = XK_FU_DADDR),
	SL("lsn", sl_lsn, XK_FK_HEX, .unit = XK_FU_LSN),
	R("data", sizeof(struct xk_dsymlink_hdr), 0, 0, XK_FK_CHARS,
	  .bits_fn = data_bits),
	FEND
};

const struct xk_ftype xk_symlink_ftype = { "symlink", symlink_fields };
