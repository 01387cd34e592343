// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The external log device (mkfs.xfs -l logdev=): a superblock with
 * logstart 0 keeps its log from byte 0 of a device of its own.  Before
 * the log code reads or writes through such a device, it must be shown
 * to be this filesystem's log: a wrong device given by mistake would
 * otherwise be "replayed" into the filesystem or zeroed.
 *
 * The evidence: every log record header (the block starts with the
 * header magic, which no data block can, since the log stamps the cycle
 * number there) carries h_fs_uuid, the superblock's UUID, from mkfs, the
 * kernel and xfs_repair alike.  Records are at most 256 KiB, and block
 * 0 is written first in every log's life (mkfs.xfs puts its unmount
 * record there), so the first MiB of any log that was ever written
 * holds headers.  A device showing none (zeroed, or never a log) gives
 * no evidence and is refused: the kernel would take a zeroed log as
 * clean, but nothing shows it is this filesystem's.
 */
#include <stdlib.h>
#include <string.h>

#include <uuid/uuid.h>

#include <xfskit/libfs.h>
#include <xfskit/format/log.h>

#include "libfs_priv.h"

#define IDENT_WINDOW	(1u << 20)	/* bytes of log looked at */

void
xk_mount_set_logdev(struct xk_mount *mp, struct xk_dev *logdev)
{
	mp->logdev = logdev;
}

/*
 * Count the record headers in buf carrying the filesystem's UUID; the
 * first carrying another (not nil: the kernel accepts a nil one) sets
 * *foreign and is copied to foreign_uuid.
 */
static uint32_t
count_own_headers(const struct xk_mount *mp, const uint8_t *buf, size_t len,
		  int *foreign, uint8_t *foreign_uuid)
{
	static const uint8_t nil[16];
	uint32_t own = 0;

	*foreign = 0;
	for (size_t off = 0; off + XK_BBSIZE <= len; off += XK_BBSIZE) {
		const struct xk_log_rec_header *h =
			(const struct xk_log_rec_header *)(buf + off);

		if (xk_be32_get(h->h_magicno) != XK_LOG_HEADER_MAGIC_NUM)
			continue;
		if (!memcmp(h->h_fs_uuid, mp->sb.uuid, 16)) {
			own++;
		} else if (memcmp(h->h_fs_uuid, nil, 16) && !*foreign) {
			*foreign = 1;
			memcpy(foreign_uuid, h->h_fs_uuid, 16);
		}
	}
	return own;
}

int
xk_mount_open_logdev(struct xk_mount *mp, const char *path, struct xk_fail *f)
{
	uint64_t bytes = (uint64_t)mp->sb.logblocks << mp->g.blocklog;
	size_t win = bytes < IDENT_WINDOW ? (size_t)bytes : IDENT_WINDOW;
	char want[40], found[40];
	uint8_t foreign_uuid[16];
	struct xk_dev *dev;
	uint8_t *buf;
	int foreign;
	uint32_t own;
	int err;

	memset(f, 0, sizeof(*f));
	f->agno = -1;
	f->daddr = XK_NO_DADDR;
	f->structure = "log device";
	if (!xk_log_is_external(mp)) {
		xk_fail_set(f, "logstart", "the filesystem's log is internal "
			    "(at block %llu): it has no log device",
			    (unsigned long long)mp->sb.logstart);
		return -EINVAL;
	}
	err = xk_mount_open_side_dev(mp, mp->logdev, "logdev", path, f, &dev);
	if (err)
		return err;
	if (xk_dev_same(dev, mp->dev)) {
		xk_dev_close(dev);
		xk_fail_set(f, "logdev", "%s is the data device itself, not "
			    "a separate log device", path);
		return -EINVAL;
	}
	if (dev->size < bytes) {
		xk_fail_set(f, "size", "%s holds %llu bytes, less than the "
			    "log's %u blocks (%llu bytes)", path,
			    (unsigned long long)dev->size, mp->sb.logblocks,
			    (unsigned long long)bytes);
		xk_dev_close(dev);
		return XK_ETRUNC;
	}
	buf = xk_malloc(win);
	if (!buf) {
		xk_dev_close(dev);
		return -ENOMEM;
	}
	err = xk_dev_pread(dev, buf, win, 0);
	if (err) {
		free(buf);
		xk_dev_close(dev);
		xk_fail_set(f, "logdev", "cannot read %s: %s", path,
			    xk_strerror(err));
		return err;
	}
	own = count_own_headers(mp, buf, win, &foreign, foreign_uuid);
	free(buf);
	uuid_unparse(mp->sb.uuid, want);
	/* The path names the device from here on (it outlives *f). */
	f->structure = path;
	if (foreign) {
		uuid_unparse(foreign_uuid, found);
		xk_fail_set(f, "log uuid", "not this filesystem's log: its "
			    "records belong to filesystem %s, this one is %s",
			    found, want);
		xk_dev_close(dev);
		return -EXDEV;
	}
	if (!own) {
		xk_fail_set(f, "log uuid", "no log record in its first %zu "
			    "KiB, so nothing shows it is this filesystem's "
			    "log (zeroed, or not a log)", win >> 10);
		xk_dev_close(dev);
		return -EXDEV;
	}
	mp->logdev = dev;
	return 0;
}
