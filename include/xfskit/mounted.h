/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Is a device or an image file mounted, and where?  Every tool that
 * writes asks before it opens for writing: the kernel caches the
 * metadata of a mounted filesystem, so a write under it is either lost
 * or, worse, trusted.  xk_dev_open also refuses a writable open of a
 * mounted path (-EBUSY), so a tool that forgets to ask still cannot
 * write; asking first gives the message its mount point.
 */
#ifndef XFSKIT_MOUNTED_H
#define XFSKIT_MOUNTED_H

#include <stddef.h>

struct xk_mounted {
	int	mounted;
	int	readonly;	/* every mount of it is read-only */
	int	is_root;	/* one of its mounts is "/" */
	char	where[256];	/* one mount point ("/" first), for messages */
	char	via[64];	/* the loop device an image file is mounted
				   through ("/dev/loop3"), else "" */
};

/*
 * Fill *ms for path: a block device matches /proc/self/mountinfo by its
 * major:minor (a whole disk also through its partitions); a regular file
 * through every loop device it backs, matched by device and inode number
 * so another name, a rename or an unlink of the file still matches.
 * Returns 0, or a negative errno when path or the mount table cannot be
 * read.
 */
int xk_mounted_state(const char *path, struct xk_mounted *ms);
/* "mounted read-write on /mnt through /dev/loop3", for messages. */
void xk_mounted_describe(const struct xk_mounted *ms, char *buf, size_t len);

#endif /* XFSKIT_MOUNTED_H */
