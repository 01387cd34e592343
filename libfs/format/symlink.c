// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Remote symlink blocks: a target too long for the inode is stored in
 * blocks that each start with a header saying which bytes they hold.
 */
#include <string.h>

#include <xfskit/libfs.h>
#include <xfskit/meta.h>
#include <xfskit/format/symlink.h>

#include "../libfs_priv.h"

/*
 * Rules: magic; the piece lies inside the 1024-byte target and fits the
 * block; address, UUID and owner.
 */
static int
symlink_verify(struct xk_buf *bp, struct xk_fail *f)
{
	const struct xk_dsymlink_hdr *h = (const void *)bp->data;
	uint32_t off, bytes;

	if (bp->len < sizeof(*h))
		return xk_fail_set(f, "size", "block too small");
	if (xk_be32_get(h->sl_magic) != XK_SYMLINK_MAGIC)
		return xk_fail_val(f, "magic", XK_SYMLINK_MAGIC,
				   xk_be32_get(h->sl_magic));
	off = xk_be32_get(h->sl_offset);
	bytes = xk_be32_get(h->sl_bytes);
	if (off >= XK_SYMLINK_MAXLEN || bytes == 0 ||
	    bytes > xk_symlink_buf_space(bp->len) ||
	    (uint64_t)off + bytes > XK_SYMLINK_MAXLEN)
		return xk_fail_set(f, "bytes", "piece %u+%u is not inside a "
				   "%d-byte target", off, bytes,
				   XK_SYMLINK_MAXLEN);
	return xk_owned_block_check(bp, xk_be64_get(h->sl_blkno), h->sl_uuid,
				    xk_be64_get(h->sl_owner), f);
}

const struct xk_buf_ops xk_symlink_buf_ops = {
	.name = "symlink block",
	.crc_off = XK_SYMLINK_CRC_OFF,
	.lsn_off = offsetof(struct xk_dsymlink_hdr, sl_lsn),
	.verify = symlink_verify,
};
