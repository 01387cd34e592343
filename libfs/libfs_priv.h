/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Internals shared between libfs modules; never included by the tools. */
#ifndef XFSKIT_LIBFS_PRIV_H
#define XFSKIT_LIBFS_PRIV_H

#include <xfskit/mount.h>

/*
 * Open a device beside the data device (what: "logdev", "rtdev") as the
 * handle is opened (read-only, O_DIRECT); have is the one attached, if
 * any (an error).  *f says what failed.  rtdev.c.
 */
int xk_mount_open_side_dev(const struct xk_mount *mp, const struct xk_dev *have,
			   const char *what, const char *path,
			   struct xk_fail *f, struct xk_dev **devp);
int xk_bcache_init(struct xk_mount *mp);
void xk_bcache_destroy(struct xk_mount *mp);

/* Address, UUID and owner of a block that belongs to an inode (owned.c). */
int xk_owned_block_check(struct xk_buf *bp, uint64_t blkno,
			 const uint8_t *uuid, uint64_t owner,
			 struct xk_fail *f);

#endif /* XFSKIT_LIBFS_PRIV_H */
