/* SPDX-License-Identifier: GPL-2.0-or-later */
/* xfskit-admin's parts outside main.c. */
#ifndef XFSKIT_ADMIN_H
#define XFSKIT_ADMIN_H

struct xk_mount;

/*
 * -C: write the mkfs configuration file xfs_admin 7.2 (xfs_db's makecfg)
 * writes for the filesystem.  Returns 0, or 1 after printing why not.
 */
int admin_write_cfg(struct xk_mount *mp, const char *image, const char *path);

#endif /* XFSKIT_ADMIN_H */
