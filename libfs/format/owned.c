// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The self-description every v5 block that belongs to an inode carries
 * (directory, attribute and remote symlink blocks): its own address, the
 * filesystem's metadata UUID and the owning inode.
 */
#include <string.h>

#include <xfskit/libfs.h>

#include "../libfs_priv.h"

/*
 * Rules: 1. blkno is where the block was read from; 2. the UUID is the
 * metadata UUID; 3. the owner is the inode the caller read it for (when
 * known); 4. the owner is a possible inode number.
 */
int
xk_owned_block_check(struct xk_buf *bp, uint64_t blkno, const uint8_t *uuid,
		     uint64_t owner, struct xk_fail *f)
{
	if (blkno != bp->daddr)
		return xk_fail_val(f, "blkno", bp->daddr, blkno);
	if (memcmp(uuid, bp->mp->meta_uuid, 16))
		return xk_fail_set(f, "uuid", "does not match the superblock");
	if (bp->owner && owner != bp->owner)
		return xk_fail_val(f, "owner", bp->owner, owner);
	if (!xk_ino_valid(bp->mp, owner))
		return xk_fail_set(f, "owner", "%llu is not a possible inode",
				   (unsigned long long)owner);
	return 0;
}
