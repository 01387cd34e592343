// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Undo files (see include/xfskit/undo.h for the layout).  The header
 * also records the filesystem UUID when the run finished, since a run
 * may change it; applying accepts a device carrying either.  Saved sectors
 * are tracked in an open-addressing set so each sector is saved once,
 * with its contents from before the first write.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xfskit/crc32c.h>
#include <xfskit/dev.h>
#include <xfskit/endian.h>
#include <xfskit/errors.h>
#include <xfskit/undo.h>

#define UNDO_MAGIC	"XKUNDO01"
#define UNDO_HDR_SIZE	4096
#define REC_MAGIC	0x584b5552	/* "XKUR" */
#define REC_HDR_SIZE	24
#define SECTOR		512u

/* Header fields, at these byte offsets. */
#define H_MAGIC		0	/* 8 bytes */
#define H_STATE		8	/* be32: 0 running, 1 complete */
#define H_DEVSIZE	16	/* be64 */
#define H_UUID		24	/* 16 bytes */
#define H_CRC		40	/* le32 over the header with this zeroed */
#define H_UUID_AFTER	44	/* 16 bytes: the UUID when the run finished */

struct xk_undo {
	struct xk_dev	*dev;
	int		fd;
	uint64_t	end;		/* append position */
	uint8_t		hdr[UNDO_HDR_SIZE];
	uint64_t	*set;		/* saved sector numbers + 1 */
	size_t		cap, n;
};

static int
write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t w = pwrite(fd, p, len, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

static int
read_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : XK_ETRUNC;
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static int
put_header(struct xk_undo *u, uint32_t state)
{
	xk_put_be32(u->hdr + H_STATE, state);
	memset(u->hdr + H_CRC, 0, 4);
	xk_put_le32(u->hdr + H_CRC, xk_crc32c(u->hdr, UNDO_HDR_SIZE));
	return write_all(u->fd, u->hdr, UNDO_HDR_SIZE, 0);
}

int
xk_undo_create(struct xk_dev *dev, const char *path, struct xk_undo **up)
{
	struct xk_undo *u;
	uint8_t sb[64];
	int err;

	*up = NULL;
	if (dev->undo)
		return -EBUSY;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (u->fd < 0) {
		err = -errno;
		free(u);
		return err;
	}
	memcpy(u->hdr + H_MAGIC, UNDO_MAGIC, 8);
	xk_put_be64(u->hdr + H_DEVSIZE, dev->size);
	if (xk_dev_pread(dev, sb, sizeof(sb), 0) == 0)
		memcpy(u->hdr + H_UUID, sb + 32, 16);
	err = put_header(u, 0);
	if (!err && fdatasync(u->fd) < 0)
		err = -errno;
	if (err) {
		close(u->fd);
		unlink(path);
		free(u);
		return err;
	}
	u->end = UNDO_HDR_SIZE;
	u->dev = dev;
	dev->undo = u;
	*up = u;
	return 0;
}

/* Add a sector to the saved set; 1 if it was there already. */
static int
set_add(struct xk_undo *u, uint64_t sector)
{
	uint64_t key = sector + 1;
	size_t i;

	if ((u->n + 1) * 2 > u->cap) {
		size_t ncap = u->cap ? u->cap * 2 : 1024;
		uint64_t *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (size_t j = 0; j < u->cap; j++) {
			if (!u->set[j])
				continue;
			i = (size_t)(u->set[j] * 0x9e3779b97f4a7c15ULL) &
			    (ncap - 1);
			while (ns[i])
				i = (i + 1) & (ncap - 1);
			ns[i] = u->set[j];
		}
		free(u->set);
		u->set = ns;
		u->cap = ncap;
	}
	i = (size_t)(key * 0x9e3779b97f4a7c15ULL) & (u->cap - 1);
	while (u->set[i]) {
		if (u->set[i] == key)
			return 1;
		i = (i + 1) & (u->cap - 1);
	}
	u->set[i] = key;
	u->n++;
	return 0;
}

/* Append one record of the current bytes [off, off+len). */
static int
save_run(struct xk_undo *u, uint64_t off, size_t len)
{
	uint8_t rh[REC_HDR_SIZE];
	uint8_t *data = calloc(1, len);
	int err;

	if (!data)
		return -ENOMEM;
	/* Bytes past the device's end read as zeroes (the file grows). */
	if (off < u->dev->size) {
		size_t have = (size_t)(u->dev->size - off < len ?
				       u->dev->size - off : len);

		err = xk_dev_pread(u->dev, data, have, off);
		if (err)
			goto out;
	}
	memset(rh, 0, sizeof(rh));
	xk_put_be32(rh, REC_MAGIC);
	xk_put_le32(rh + 4, xk_crc32c(data, len));
	xk_put_be64(rh + 8, off);
	xk_put_be64(rh + 16, len);
	err = write_all(u->fd, rh, sizeof(rh), u->end);
	if (!err)
		err = write_all(u->fd, data, len, u->end + sizeof(rh));
	if (!err)
		u->end += sizeof(rh) + len;
out:
	free(data);
	return err;
}

int
xk_undo_save(struct xk_undo *u, uint64_t off, size_t len)
{
	uint64_t first = off / SECTOR;
	uint64_t last = (off + len + SECTOR - 1) / SECTOR;
	uint64_t run = 0, runlen = 0;
	int err = 0, wrote = 0;

	for (uint64_t s = first; s < last && !err; s++) {
		int had = set_add(u, s);

		if (had < 0)
			return had;
		if (!had && runlen && run + runlen == s) {
			runlen++;
			continue;
		}
		if (runlen) {
			err = save_run(u, run * SECTOR, runlen * SECTOR);
			wrote = 1;
			runlen = 0;
		}
		if (!had) {
			run = s;
			runlen = 1;
		}
	}
	if (!err && runlen) {
		err = save_run(u, run * SECTOR, runlen * SECTOR);
		wrote = 1;
	}
	/* The old bytes are on stable storage before the device changes. */
	if (!err && wrote && fdatasync(u->fd) < 0)
		err = -errno;
	return err;
}

void
xk_undo_detach(struct xk_undo *u)
{
	u->dev = NULL;
}

int
xk_undo_finish(struct xk_undo *u)
{
	int err;

	if (!u)
		return 0;
	/* A run may change the UUID itself; accept either when applying. */
	memcpy(u->hdr + H_UUID_AFTER, u->hdr + H_UUID, 16);
	if (u->dev) {
		uint8_t sb[64];

		if (xk_dev_pread(u->dev, sb, sizeof(sb), 0) == 0)
			memcpy(u->hdr + H_UUID_AFTER, sb + 32, 16);
	}
	err = put_header(u, 1);
	if (!err && fsync(u->fd) < 0)
		err = -errno;
	close(u->fd);
	if (u->dev)
		u->dev->undo = NULL;
	free(u->set);
	free(u);
	return err;
}

static int
refuse(struct xk_undo_result *res, int err, const char *why)
{
	snprintf(res->msg, sizeof(res->msg), "%s", why);
	return err;
}

/* Walk the records; with dev NULL only validate them. */
static int
apply_records(int fd, uint64_t fsize, struct xk_dev *dev,
	      struct xk_undo_result *res)
{
	uint64_t pos = UNDO_HDR_SIZE;
	uint8_t rh[REC_HDR_SIZE];

	res->records = res->bytes = 0;
	while (pos < fsize) {
		uint64_t off, len;
		uint8_t *data;
		int err;

		if (fsize - pos < REC_HDR_SIZE ||
		    read_all(fd, rh, sizeof(rh), pos))
			return refuse(res, XK_ECORRUPT, "truncated record");
		off = xk_get_be64(rh + 8);
		len = xk_get_be64(rh + 16);
		if (xk_get_be32(rh) != REC_MAGIC || len == 0 ||
		    len > (64u << 20) || len > fsize - pos - REC_HDR_SIZE)
			return refuse(res, XK_ECORRUPT, "bad record header");
		data = malloc(len);
		if (!data)
			return -ENOMEM;
		err = read_all(fd, data, len, pos + REC_HDR_SIZE);
		if (!err && xk_crc32c(data, len) != xk_get_le32(rh + 4))
			err = refuse(res, XK_EBADCRC, "record checksum mismatch");
		if (!err && dev)
			err = xk_dev_pwrite(dev, data, len, off);
		free(data);
		if (err)
			return err;
		res->records++;
		res->bytes += len;
		pos += REC_HDR_SIZE + len;
	}
	return 0;
}

int
xk_undo_apply(const char *undo_path, const char *dev_path, unsigned int flags,
	      struct xk_undo_result *res)
{
	uint8_t hdr[UNDO_HDR_SIZE], sb[64];
	struct xk_dev *dev = NULL;
	struct stat st;
	uint32_t crc;
	int fd, err;

	memset(res, 0, sizeof(*res));
	fd = open(undo_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return refuse(res, -errno, "cannot open the undo file");
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < UNDO_HDR_SIZE ||
	    read_all(fd, hdr, sizeof(hdr), 0)) {
		close(fd);
		return refuse(res, XK_ECORRUPT, "undo file too short");
	}
	crc = xk_get_le32(hdr + H_CRC);
	memset(hdr + H_CRC, 0, 4);
	if (memcmp(hdr, UNDO_MAGIC, 8) || crc != xk_crc32c(hdr, sizeof(hdr))) {
		close(fd);
		return refuse(res, XK_ECORRUPT, "not an xfskit undo file "
			      "(bad magic or header checksum)");
	}
	res->complete = xk_get_be32(hdr + H_STATE) == 1;
	/* Check every record before writing any. */
	err = apply_records(fd, (uint64_t)st.st_size, NULL, res);
	if (err)
		goto out;
	err = xk_dev_open(dev_path, (flags & XK_UNDO_DRYRUN) ? XK_DEV_RDONLY :
			  0, &dev);
	if (err) {
		refuse(res, err, "cannot open the device");
		goto out;
	}
	/*
	 * The filesystem the undo file was made for, unless forced.  A
	 * null recorded UUID means the primary superblock was unreadable
	 * when the undo file was made (repair started from a secondary):
	 * nothing to compare with then.
	 */
	static const uint8_t null_uuid[16];

	if (!(flags & XK_UNDO_FORCE) && memcmp(hdr + H_UUID, null_uuid, 16) &&
	    (xk_dev_pread(dev, sb, sizeof(sb), 0) ||
	     (memcmp(sb + 32, hdr + H_UUID, 16) &&
	      (!res->complete || memcmp(sb + 32, hdr + H_UUID_AFTER, 16))))) {
		err = refuse(res, -EINVAL, "the device's filesystem UUID is "
			     "not the one this undo file was made for");
		goto out;
	}
	if (flags & XK_UNDO_DRYRUN)
		goto out;
	err = apply_records(fd, (uint64_t)st.st_size, dev, res);
	if (!err && !dev->is_bdev && dev->size > xk_get_be64(hdr + H_DEVSIZE))
		err = xk_dev_set_size(dev, xk_get_be64(hdr + H_DEVSIZE));
	if (!err)
		err = xk_dev_sync(dev);
out:
	xk_dev_close(dev);
	close(fd);
	return err;
}
