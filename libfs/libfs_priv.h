/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Internals shared between libfs modules; never included by the tools. */
#ifndef XFSKIT_LIBFS_PRIV_H
#define XFSKIT_LIBFS_PRIV_H

#include <xfskit/mount.h>

int xk_bcache_init(struct xk_mount *mp);
void xk_bcache_destroy(struct xk_mount *mp);

#endif /* XFSKIT_LIBFS_PRIV_H */
