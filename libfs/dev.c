// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Device I/O.  Short reads and writes and EINTR are retried until the
 * whole length is done; a read past the end of the device is XK_ETRUNC,
 * so a truncated image reports itself instead of returning zeroes.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <blkid/blkid.h>

#include <xfskit/dev.h>
#include <xfskit/errors.h>
#include <xfskit/write_crash.h>
#include <xfskit/fault.h>
#include <xfskit/mounted.h>
#include <xfskit/undo.h>

static void
dev_probe_topology(struct xk_dev *dev)
{
	blkid_probe pr;
	blkid_topology tp;

	dev->topo.logical_sector = 512;
	dev->topo.physical_sector = 512;
	if (!dev->is_bdev)
		return;

	int ssz = 0;
	unsigned int pssz = 0;

	if (ioctl(dev->fd, BLKSSZGET, &ssz) == 0 && ssz > 0)
		dev->topo.logical_sector = (unsigned int)ssz;
	if (ioctl(dev->fd, BLKPBSZGET, &pssz) == 0 && pssz > 0)
		dev->topo.physical_sector = pssz;

	pr = blkid_new_probe_from_filename(dev->path);
	if (!pr)
		return;
	tp = blkid_probe_get_topology(pr);
	if (tp) {
		dev->topo.minimum_io = blkid_topology_get_minimum_io_size(tp);
		dev->topo.optimal_io = blkid_topology_get_optimal_io_size(tp);
		dev->topo.alignment_offset =
			blkid_topology_get_alignment_offset(tp);
	}
	blkid_free_probe(pr);
}

int
xk_dev_open(const char *path, unsigned int flags, struct xk_dev **devp)
{
	struct xk_dev *dev;
	struct stat st;
	int oflags = (flags & XK_DEV_RDONLY) ? O_RDONLY : O_RDWR;

	*devp = NULL;
	/* A malformed crash hook: never run unarmed when told to crash. */
	if (!(flags & XK_DEV_RDONLY) && xk_write_crash_check_env(NULL, 0))
		return -EINVAL;
	if (flags & XK_DEV_CREATE)
		oflags |= O_CREAT;
	/*
	 * Nothing writes under a mounted filesystem, through the device or
	 * through the image file behind a loop device (O_EXCL only guards
	 * the former, and refuses a read-only mount just the same).  The
	 * tools ask xk_mounted_state() first to name the
	 * mount point; this is the net under them.
	 */
	if (!(flags & XK_DEV_RDONLY)) {
		struct xk_mounted ms;

		if (xk_mounted_state(path, &ms) == 0 && ms.mounted)
			return -EBUSY;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->flags = flags;
	dev->dfd = -1;
	dev->path = strdup(path);
	if (!dev->path) {
		free(dev);
		return -ENOMEM;
	}

	dev->fd = open(path, oflags | O_CLOEXEC, 0644);
	if (dev->fd < 0) {
		int err = -errno;

		free(dev->path);
		free(dev);
		return err;
	}
	if (fstat(dev->fd, &st) < 0)
		goto fail_errno;

	if (S_ISBLK(st.st_mode)) {
		uint64_t size;

		dev->is_bdev = 1;
		if (flags & XK_DEV_EXCL) {
			/* Reopen exclusively: fails if mounted or in use. */
			int fd = open(path, oflags | O_EXCL | O_CLOEXEC);

			if (fd < 0)
				goto fail_errno;
			close(dev->fd);
			dev->fd = fd;
		}
		if (ioctl(dev->fd, BLKGETSIZE64, &size) < 0)
			goto fail_errno;
		dev->size = size;
	} else if (S_ISREG(st.st_mode)) {
		dev->size = (uint64_t)st.st_size;
	} else {
		close(dev->fd);
		free(dev->path);
		free(dev);
		return -ENODEV;
	}
	dev_probe_topology(dev);
	dev->dfd = -1;
	if (flags & XK_DEV_DIRECT) {
		/* tmpfs and some others refuse O_DIRECT: stay buffered. */
		dev->dfd = open(path, (oflags & ~O_CREAT) | O_DIRECT |
				O_CLOEXEC);
		if (dev->dfd < 0)
			dev->dfd = -1;
	}
	*devp = dev;
	return 0;

fail_errno:;
	int err = -errno;

	close(dev->fd);
	free(dev->path);
	free(dev);
	return err;
}

int
xk_dev_same(const struct xk_dev *a, const struct xk_dev *b)
{
	struct stat sa, sb;

	if (fstat(a->fd, &sa) || fstat(b->fd, &sb))
		return 0;
	if (S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode))
		return sa.st_rdev == sb.st_rdev;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void
xk_dev_close(struct xk_dev *dev)
{
	if (!dev)
		return;
	if (dev->undo)
		xk_undo_detach(dev->undo);
	if (dev->dfd >= 0)
		close(dev->dfd);
	close(dev->fd);
	free(dev->path);
	free(dev);
}

/* The descriptor for this request: direct when it is aligned. */
static int
io_fd(const struct xk_dev *dev, const void *buf, size_t len, uint64_t off)
{
	uint64_t a = dev->topo.logical_sector ? dev->topo.logical_sector : 512;

	if (dev->dfd >= 0 && ((uintptr_t)buf % a) == 0 && (off % a) == 0 &&
	    (len % a) == 0)
		return dev->dfd;
	return dev->fd;
}

int
xk_dev_pread(struct xk_dev *dev, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	int fd;

	if (off > dev->size || len > dev->size - off)
		return XK_ETRUNC;
	if (xk_fault(XK_FAULT_READ))
		return -EIO;
	while (len > 0) {
		ssize_t n;

		/* A short direct read leaves the rest unaligned: re-pick. */
		fd = io_fd(dev, p, len, off);
		n = pread(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return XK_ETRUNC;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int
xk_dev_pwrite(struct xk_dev *dev, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	if (dev->flags & XK_DEV_RDONLY)
		return XK_ERDONLY;
	if (dev->is_bdev && (off > dev->size || len > dev->size - off))
		return -ENOSPC;
	if (dev->write_hook) {
		int err = dev->write_hook(dev->write_hook_arg);

		if (err)
			return err;
	}
	xk_write_crash_tick();
	__atomic_add_fetch(&dev->writes, 1, __ATOMIC_RELAXED);
	if (xk_fault(XK_FAULT_WRITE))
		return -EIO;
	if (dev->undo) {
		int err = xk_undo_save(dev->undo, off, len);

		if (err)
			return err;
	}
	while (len > 0) {
		ssize_t n = pwrite(io_fd(dev, p, len, off), p, len,
				   (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	if (off > dev->size)
		dev->size = off;
	return 0;
}

int
xk_dev_sync(struct xk_dev *dev)
{
	if (dev->flags & XK_DEV_RDONLY)
		return 0;
	if (fsync(dev->fd) < 0)
		return -errno;
	return 0;
}

int
xk_dev_set_size(struct xk_dev *dev, uint64_t size)
{
	if (dev->flags & XK_DEV_RDONLY)
		return XK_ERDONLY;
	if (dev->is_bdev)
		return -EINVAL;
	/* Shrinking would lose bytes the undo file has not saved. */
	if (dev->undo && size < dev->size)
		return -EPERM;
	if (ftruncate(dev->fd, (off_t)size) < 0)
		return -errno;
	dev->size = size;
	return 0;
}

void
xk_dev_readahead(struct xk_dev *dev, uint64_t off, uint64_t len)
{
	if (off >= dev->size)
		return;
	if (len > dev->size - off)
		len = dev->size - off;
	/* Only a hint: failure changes nothing but speed. */
	(void)posix_fadvise(dev->fd, (off_t)off, (off_t)len,
			    POSIX_FADV_WILLNEED);
}

int
xk_dev_discard(struct xk_dev *dev, uint64_t off, uint64_t len)
{
	if (dev->flags & XK_DEV_RDONLY)
		return XK_ERDONLY;
	/* Discarding is an optimisation; with an undo file it is skipped. */
	if (dev->undo)
		return 0;
	if (dev->is_bdev) {
		uint64_t range[2] = { off, len };

		if (ioctl(dev->fd, BLKDISCARD, &range) < 0)
			return -errno;
		return 0;
	}
	if (fallocate(dev->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)off, (off_t)len) < 0)
		return -errno;
	return 0;
}
