// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The realtime device (mkfs.xfs -r rtdev=): a classic realtime volume
 * holds only file data, with no superblock of its own, so the only thing
 * to check before using it is that it is a device of its own and large
 * enough for the sb_rblocks blocks the superblock gives it.  The tools
 * never write it: the bitmap and summary are on the data device.
 */
#include <string.h>

#include <xfskit/libfs.h>

#include "libfs_priv.h"

int
xk_mount_open_side_dev(const struct xk_mount *mp, const struct xk_dev *have,
		       const char *what, const char *path, struct xk_fail *f,
		       struct xk_dev **devp)
{
	int err;

	if (have) {
		xk_fail_set(f, what, "a %s device is already attached", what);
		return -EINVAL;
	}
	err = xk_dev_open(path, ((mp->flags & XK_MOUNT_RDONLY) ?
				 XK_DEV_RDONLY : XK_DEV_EXCL) |
			  ((mp->flags & XK_MOUNT_DIRECT) ? XK_DEV_DIRECT : 0),
			  devp);
	if (err)
		xk_fail_set(f, what, "cannot open %s: %s", path,
			    xk_strerror(err));
	return err;
}

int
xk_mount_open_rtdev(struct xk_mount *mp, const char *path, struct xk_fail *f)
{
	uint64_t bytes = mp->sb.rblocks << mp->g.blocklog;
	struct xk_dev *dev;
	int err;

	memset(f, 0, sizeof(*f));
	f->agno = -1;
	f->daddr = XK_NO_DADDR;
	f->structure = "realtime device";
	if (!mp->sb.rblocks) {
		xk_fail_set(f, "rblocks", "the filesystem has no realtime "
			    "section (rblocks 0): it has no realtime device");
		return -EINVAL;
	}
	err = xk_mount_open_side_dev(mp, mp->rtdev, "rtdev", path, f, &dev);
	if (err)
		return err;
	if (xk_dev_same(dev, mp->dev) ||
	    (mp->logdev && xk_dev_same(dev, mp->logdev))) {
		xk_fail_set(f, "rtdev", "%s is the filesystem's %s device "
			    "itself, not a separate realtime device", path,
			    xk_dev_same(dev, mp->dev) ? "data" : "log");
		xk_dev_close(dev);
		return -EINVAL;
	}
	if (dev->size < bytes) {
		xk_fail_set(f, "size", "%s holds %llu bytes, less than the "
			    "realtime section's %llu blocks (%llu bytes)",
			    path, (unsigned long long)dev->size,
			    (unsigned long long)mp->sb.rblocks,
			    (unsigned long long)bytes);
		xk_dev_close(dev);
		return XK_ETRUNC;
	}
	mp->rtdev = dev;
	return 0;
}
