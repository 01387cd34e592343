/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device layer: an image file or a block device, read and written with
 * whole-length positioned I/O.  A read-only device refuses every write
 * with XK_ERDONLY, so -n and db -r cannot write by construction.
 */
#ifndef XFSKIT_DEV_H
#define XFSKIT_DEV_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>

#define XK_DEV_RDONLY	(1u << 0)	/* refuse every write */
#define XK_DEV_EXCL	(1u << 1)	/* O_EXCL on block devices */
#define XK_DEV_CREATE	(1u << 2)	/* create a missing image file */
/*
 * Bypass the page cache (O_DIRECT) for I/O aligned to the device's
 * logical sector, as the buffer cache's always is; anything else, or a
 * filesystem that refuses O_DIRECT, goes through the page cache.
 */
#define XK_DEV_DIRECT	(1u << 3)

struct xk_topology {
	unsigned int	logical_sector;		/* bytes */
	unsigned int	physical_sector;	/* bytes */
	unsigned long	minimum_io;		/* bytes, 0 if unknown */
	unsigned long	optimal_io;		/* bytes, 0 if unknown */
	unsigned long	alignment_offset;	/* bytes */
};

struct xk_undo;

struct xk_dev {
	int		fd;
	int		dfd;		/* O_DIRECT descriptor, or -1 */
	unsigned int	flags;
	int		is_bdev;
	uint64_t	size;		/* bytes */
	struct xk_topology topo;
	char		*path;
	/* When set, every write first saves the old bytes (undo.h). */
	struct xk_undo	*undo;
	/* Writes begun on the device (a failed one counts: it may have
	 * changed bytes), so a tool can say whether it wrote anything. */
	uint64_t	writes;
	/*
	 * When set, called before every write, which fails with its error
	 * (needsrepair.h marks the filesystem before its first write).
	 */
	int		(*write_hook)(void *arg);
	void		*write_hook_arg;
};

XK_MUST_CHECK int xk_dev_open(const char *path, unsigned int flags,
			      struct xk_dev **devp);
void xk_dev_close(struct xk_dev *dev);
/* Whether a and b are the same file or block device. */
int xk_dev_same(const struct xk_dev *a, const struct xk_dev *b);
XK_MUST_CHECK int xk_dev_pread(struct xk_dev *dev, void *buf, size_t len,
			       uint64_t off);
XK_MUST_CHECK int xk_dev_pwrite(struct xk_dev *dev, const void *buf, size_t len,
				uint64_t off);
XK_MUST_CHECK int xk_dev_sync(struct xk_dev *dev);
/* Grow or shrink an image file (not a block device). */
XK_MUST_CHECK int xk_dev_set_size(struct xk_dev *dev, uint64_t size);
/* Hint that a range will be read soon (page cache readahead). */
void xk_dev_readahead(struct xk_dev *dev, uint64_t off, uint64_t len);
/* Discard (TRIM) a range on a block device, punch a hole in a file. */
XK_MUST_CHECK int xk_dev_discard(struct xk_dev *dev, uint64_t off,
				 uint64_t len);

#endif /* XFSKIT_DEV_H */
