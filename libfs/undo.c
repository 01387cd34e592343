// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Undo files (see include/xfskit/undo.h for the layout and the rules).
 * Saved sectors are tracked in an open-addressing set so each sector is
 * saved once, with its contents from before the first write; a sector
 * enters the set only after its record is durable.  The first error on
 * the undo file is kept and returned by every later save, so the device
 * refuses every write after it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
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

#define UNDO_MAGIC	"XKUNDO02"
#define UNDO_MAGIC_V1	"XKUNDO01"
#define UNDO_HDR_SIZE	4096
#define REC_MAGIC	0x584b5232	/* "XKR2" */
#define REC_MAGIC_V1	0x584b5552	/* "XKUR" */
#define REC_HDR_SIZE	32
#define REC_HDR_SIZE_V1	24
#define REC_MAX_LEN	(64u << 20)
#define SECTOR		512u
#define SB_CHECK_LEN	512u

/* Header fields, at these byte offsets. */
#define H_MAGIC		0	/* 8 bytes */
#define H_STATE		8	/* be32 */
#define H_DEVSIZE	16	/* be64 */
#define H_UUID		24	/* 16 bytes */
#define H_CRC		40	/* le32 over the header with this zeroed */
#define H_UUID_AFTER	44	/* 16 bytes: the UUID when the run finished */
#define H_END		64	/* be64: end of the last complete record */
#define H_NRECS		72	/* be64 */
#define H_FLAGS		80	/* be32 */
#define H_SB_AFTER	84	/* le32: CRC32c of the first 512 bytes after */

#define STATE_RUNNING	0
#define STATE_COMPLETE	1
#define STATE_STOPPED	2
#define HF_AFTER	1u	/* after-states recorded */

/* Record header fields. */
#define R_MAGIC		0
#define R_CRC		4	/* le32: the saved bytes */
#define R_OFF		8
#define R_LEN		16
#define R_CRC_AFTER	24	/* le32 */
#define R_FLAGS		28	/* be32: HF_AFTER */

struct xk_undo {
	struct xk_dev	*dev;
	int		fd;
	int		err;		/* first error: every save fails */
	int		sealed;		/* after-states recorded */
	uint64_t	end;		/* end of the last durable record */
	uint64_t	nrecs;
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

/* [off, off+len) of dev into buf; bytes past its end read as zeroes. */
static int
dev_read_zero(struct xk_dev *dev, void *buf, size_t len, uint64_t off)
{
	memset(buf, 0, len);
	if (off >= dev->size)
		return 0;
	if (dev->size - off < len)
		len = (size_t)(dev->size - off);
	return xk_dev_pread(dev, buf, len, off);
}

static int
put_header(struct xk_undo *u, uint32_t state)
{
	xk_put_be32(u->hdr + H_STATE, state);
	xk_put_be64(u->hdr + H_END, state == STATE_RUNNING ? 0 : u->end);
	xk_put_be64(u->hdr + H_NRECS, state == STATE_RUNNING ? 0 : u->nrecs);
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
	memcpy(u->hdr + H_UUID_AFTER, u->hdr + H_UUID, 16);
	err = put_header(u, STATE_RUNNING);
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

static size_t
slot(uint64_t key, size_t cap)
{
	return (size_t)(key * 0x9e3779b97f4a7c15ULL) & (cap - 1);
}

static int
set_has(const struct xk_undo *u, uint64_t sector)
{
	uint64_t key = sector + 1;

	if (!u->cap)
		return 0;
	for (size_t i = slot(key, u->cap); u->set[i];
	     i = (i + 1) & (u->cap - 1))
		if (u->set[i] == key)
			return 1;
	return 0;
}

/* Add a sector known not to be in the set. */
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
			for (i = slot(u->set[j], ncap); ns[i];
			     i = (i + 1) & (ncap - 1))
				;
			ns[i] = u->set[j];
		}
		free(u->set);
		u->set = ns;
		u->cap = ncap;
	}
	for (i = slot(key, u->cap); u->set[i]; i = (i + 1) & (u->cap - 1))
		;
	u->set[i] = key;
	u->n++;
	return 0;
}

/* Append one record of the current bytes [off, off+len). */
static int
save_run(struct xk_undo *u, uint64_t off, size_t len)
{
	uint8_t rh[REC_HDR_SIZE];
	uint8_t *data = malloc(len);
	int err;

	if (!data)
		return -ENOMEM;
	err = dev_read_zero(u->dev, data, len, off);
	if (err)
		goto out;
	memset(rh, 0, sizeof(rh));
	xk_put_be32(rh + R_MAGIC, REC_MAGIC);
	xk_put_le32(rh + R_CRC, xk_crc32c(data, len));
	xk_put_be64(rh + R_OFF, off);
	xk_put_be64(rh + R_LEN, len);
	err = write_all(u->fd, rh, sizeof(rh), u->end);
	if (!err)
		err = write_all(u->fd, data, len, u->end + sizeof(rh));
	if (!err) {
		u->end += sizeof(rh) + len;
		u->nrecs++;
	}
out:
	free(data);
	return err;
}

int
xk_undo_error(const struct xk_undo *u)
{
	return u ? u->err : 0;
}

int
xk_undo_save(struct xk_undo *u, uint64_t off, size_t len)
{
	uint64_t first = off / SECTOR;
	uint64_t last = (off + len + SECTOR - 1) / SECTOR;
	uint64_t start = u->end, start_recs = u->nrecs, run = 0, runlen = 0;
	int err = 0, wrote = 0;

	if (u->err)
		return u->err;
	if (!u->dev || u->sealed)
		return -EBADF;		/* the after-state is recorded */
	for (uint64_t s = first; s <= last && !err; s++) {
		int had = s < last ? set_has(u, s) : 1;

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
	/* The old bytes are on stable storage before the device changes. */
	if (!err && wrote && fdatasync(u->fd) < 0)
		err = -errno;
	/* Only now are the sectors saved. */
	for (uint64_t s = first; s < last && !err; s++)
		if (!set_has(u, s))
			err = set_add(u, s);
	if (err) {
		/* Cut off what this call appended: the file ends clean. */
		u->end = start;
		u->nrecs = start_recs;
		(void)!ftruncate(u->fd, (off_t)start);
		u->err = err;
	}
	return err;
}

/*
 * Record, for each record, the CRC of its range as the device now holds
 * it, and the CRC of the device's first bytes.  The headers are
 * rewritten in place, so this needs no new space in the undo file.
 */
static int
seal(struct xk_undo *u)
{
	uint8_t rh[REC_HDR_SIZE], sb[SB_CHECK_LEN], *data = NULL;
	uint64_t pos;
	int err = 0;

	if (u->sealed || !u->dev)
		return 0;
	for (pos = UNDO_HDR_SIZE; pos < u->end && !err;) {
		uint64_t len;
		uint8_t *nd;

		err = read_all(u->fd, rh, sizeof(rh), pos);
		if (err)
			break;
		len = xk_get_be64(rh + R_LEN);
		nd = realloc(data, len ? len : 1);
		if (!nd) {
			err = -ENOMEM;
			break;
		}
		data = nd;
		err = dev_read_zero(u->dev, data, len, xk_get_be64(rh + R_OFF));
		if (err)
			break;
		xk_put_le32(rh + R_CRC_AFTER, xk_crc32c(data, len));
		xk_put_be32(rh + R_FLAGS, HF_AFTER);
		err = write_all(u->fd, rh, sizeof(rh), pos);
		pos += sizeof(rh) + len;
	}
	free(data);
	if (!err)
		err = dev_read_zero(u->dev, sb, sizeof(sb), 0);
	if (!err) {
		memcpy(u->hdr + H_UUID_AFTER, sb + 32, 16);
		xk_put_le32(u->hdr + H_SB_AFTER, xk_crc32c(sb, sizeof(sb)));
		xk_put_be32(u->hdr + H_FLAGS, HF_AFTER);
		if (fdatasync(u->fd) < 0)
			err = -errno;
	}
	if (err)
		xk_put_be32(u->hdr + H_FLAGS, 0);
	u->sealed = 1;
	return err;
}

void
xk_undo_detach(struct xk_undo *u)
{
	/* A failure leaves the after-state unrecorded: apply needs -f. */
	(void)seal(u);
	u->dev = NULL;
}

int
xk_undo_finish(struct xk_undo *u)
{
	int err, serr;

	if (!u)
		return 0;
	serr = seal(u);
	if (u->dev) {
		/* No write may follow that the file does not record. */
		u->dev->undo = NULL;
		u->dev->flags |= XK_DEV_RDONLY;
		u->dev = NULL;
	}
	err = put_header(u, u->err ? STATE_STOPPED : STATE_COMPLETE);
	if (!err && fsync(u->fd) < 0)
		err = -errno;
	close(u->fd);
	free(u->set);
	free(u);
	return err ? err : serr;
}

static int
refuse(struct xk_undo_result *res, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
refuse(struct xk_undo_result *res, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->msg, sizeof(res->msg), fmt, ap);
	va_end(ap);
	return err;
}

/* What the record walk does with each record. */
enum walk_mode { WALK_VALIDATE, WALK_VERIFY, WALK_LIST, WALK_APPLY };

struct undo_file {
	int		fd;
	int		format;		/* 1 or 2 */
	uint64_t	limit;		/* records end here */
	int		tolerant;	/* a killed run: stop at a bad tail */
};

/* Does the device hold, in this record's range, what the run left? */
static int
verify_record(const uint8_t *rh, struct xk_dev *dev, uint8_t *buf,
	      uint64_t pos, struct xk_undo_result *res)
{
	uint64_t off = xk_get_be64(rh + R_OFF), len = xk_get_be64(rh + R_LEN);
	int err;

	if (!(xk_get_be32(rh + R_FLAGS) & HF_AFTER))
		return refuse(res, XK_UNDO_EMISMATCH, "the record at byte "
			      "%llu has no after-state",
			      (unsigned long long)pos);
	err = dev_read_zero(dev, buf, len, off);
	if (err)
		return refuse(res, err, "cannot read the device");
	if (xk_crc32c(buf, len) != xk_get_le32(rh + R_CRC_AFTER))
		return refuse(res, XK_UNDO_EMISMATCH, "the %llu bytes at "
			      "device offset %llu (sector %llu) are not what "
			      "the run left there", (unsigned long long)len,
			      (unsigned long long)off,
			      (unsigned long long)(off / SECTOR));
	return 0;
}

/*
 * Walk the records.  VALIDATE checks each (magic, bounds, CRC) and
 * counts them, shortening uf->limit to the last good record of a killed
 * run; VERIFY compares each range on dev with its after-state; LIST
 * calls each; APPLY writes the saved bytes back.
 */
static int
walk_records(struct undo_file *uf, enum walk_mode mode, struct xk_dev *dev,
	     xk_undo_record_fn each, void *ctx, struct xk_undo_result *res)
{
	size_t hsize = uf->format == 1 ? REC_HDR_SIZE_V1 : REC_HDR_SIZE;
	uint32_t magic = uf->format == 1 ? REC_MAGIC_V1 : REC_MAGIC;
	uint64_t pos = UNDO_HDR_SIZE;
	uint8_t rh[REC_HDR_SIZE];
	uint8_t *data = NULL, *cur = NULL;
	int err = 0;

	res->records = res->bytes = 0;
	while (pos < uf->limit && !err) {
		uint64_t off, len;
		uint8_t *nd;

		if (uf->limit - pos < hsize ||
		    read_all(uf->fd, rh, hsize, pos)) {
			err = refuse(res, XK_ECORRUPT, "truncated record at "
				     "byte %llu", (unsigned long long)pos);
			break;
		}
		off = xk_get_be64(rh + R_OFF);
		len = xk_get_be64(rh + R_LEN);
		if (xk_get_be32(rh + R_MAGIC) != magic || len == 0 ||
		    len > REC_MAX_LEN || len > uf->limit - pos - hsize ||
		    off + len < off) {
			err = refuse(res, XK_ECORRUPT, "bad record header at "
				     "byte %llu", (unsigned long long)pos);
			break;
		}
		nd = realloc(data, len);
		if (nd)
			data = nd;
		if (nd && mode == WALK_VERIFY) {
			nd = realloc(cur, len);
			if (nd)
				cur = nd;
		}
		if (!nd) {
			err = -ENOMEM;
			break;
		}
		err = read_all(uf->fd, data, len, pos + hsize);
		if (!err && xk_crc32c(data, len) != xk_get_le32(rh + R_CRC))
			err = refuse(res, XK_EBADCRC, "record checksum "
				     "mismatch at byte %llu",
				     (unsigned long long)pos);
		if (err)
			break;
		if (mode == WALK_VERIFY) {
			err = verify_record(rh, dev, cur, pos, res);
			if (err)
				break;
		} else if (mode == WALK_LIST && each) {
			each(ctx, off, len);
		} else if (mode == WALK_APPLY) {
			if (each)
				each(ctx, off, len);
			res->wrote = 1;
			err = xk_dev_pwrite(dev, data, len, off);
			if (err) {
				refuse(res, err, "writing %llu bytes at device "
				       "offset %llu failed after %llu records "
				       "were restored",
				       (unsigned long long)len,
				       (unsigned long long)off,
				       (unsigned long long)res->records);
				break;
			}
		}
		res->records++;
		res->bytes += len;
		pos += hsize + len;
	}
	if (err && mode == WALK_VALIDATE && uf->tolerant &&
	    (err == XK_ECORRUPT || err == XK_EBADCRC)) {
		/*
		 * A killed run: its last record may be torn.  Records are
		 * durable before the device is written, so nothing after
		 * the last good one reached the device.
		 */
		uf->limit = pos;
		res->msg[0] = '\0';
		err = 0;
	}
	free(data);
	free(cur);
	return err;
}

/* Read and check the header; fills uf and res. */
static int
open_undo_file(const char *path, uint8_t *hdr, struct undo_file *uf,
	       struct xk_undo_result *res)
{
	struct stat st;
	uint32_t crc, state;

	uf->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (uf->fd < 0)
		return refuse(res, -errno, "cannot open the undo file");
	if (fstat(uf->fd, &st) < 0 || (uint64_t)st.st_size < UNDO_HDR_SIZE ||
	    read_all(uf->fd, hdr, UNDO_HDR_SIZE, 0))
		return refuse(res, XK_ECORRUPT, "undo file too short");
	crc = xk_get_le32(hdr + H_CRC);
	memset(hdr + H_CRC, 0, 4);
	if (!memcmp(hdr, UNDO_MAGIC, 8))
		uf->format = 2;
	else if (!memcmp(hdr, UNDO_MAGIC_V1, 8))
		uf->format = 1;
	if (!uf->format || crc != xk_crc32c(hdr, UNDO_HDR_SIZE))
		return refuse(res, XK_ECORRUPT, "not an xfskit undo file "
			      "(bad magic or header checksum)");
	res->format = uf->format;
	state = xk_get_be32(hdr + H_STATE);
	res->complete = state == STATE_COMPLETE;
	res->stopped = state == STATE_STOPPED;
	uf->limit = (uint64_t)st.st_size;
	if (uf->format == 2 && state != STATE_RUNNING) {
		if (xk_get_be64(hdr + H_END) > uf->limit ||
		    xk_get_be64(hdr + H_END) < UNDO_HDR_SIZE)
			return refuse(res, XK_ECORRUPT, "undo file shorter "
				      "than its header says (truncated?)");
		uf->limit = xk_get_be64(hdr + H_END);
	}
	uf->tolerant = state == STATE_RUNNING;
	return 0;
}

/*
 * Is dev the device the run left?  The UUID, then (format 2) the first
 * 512 bytes and every recorded range against their after-state.
 */
static int
verify_target(const uint8_t *hdr, struct undo_file *uf, struct xk_dev *dev,
	      struct xk_undo_result *res)
{
	static const uint8_t null_uuid[16];
	uint8_t sb[SB_CHECK_LEN];
	int err;

	err = dev_read_zero(dev, sb, sizeof(sb), 0);
	if (err)
		return refuse(res, err, "cannot read the device");
	/*
	 * A null recorded UUID means the primary superblock was unreadable
	 * when the undo file was made (repair started from a secondary).
	 */
	if (memcmp(hdr + H_UUID, null_uuid, 16) &&
	    memcmp(sb + 32, hdr + H_UUID, 16) &&
	    memcmp(sb + 32, hdr + H_UUID_AFTER, 16))
		return refuse(res, XK_UNDO_EMISMATCH, "the device's "
			      "filesystem UUID is not the one this undo file "
			      "was made for");
	if (uf->format == 1)
		return refuse(res, XK_UNDO_EMISMATCH, "this undo file "
			      "(format 1) does not record the state the run "
			      "left the device in, so the device cannot be "
			      "verified; -f applies it anyway");
	if (!(xk_get_be32(hdr + H_FLAGS) & HF_AFTER))
		return refuse(res, XK_UNDO_EMISMATCH, "the run that wrote "
			      "this undo file did not record the state it left "
			      "the device in (it was killed?), so the device "
			      "cannot be verified; -f applies it anyway");
	if (xk_crc32c(sb, sizeof(sb)) != xk_get_le32(hdr + H_SB_AFTER))
		return refuse(res, XK_UNDO_EMISMATCH, "the superblock (the "
			      "first 512 bytes) is not the one the run left");
	err = walk_records(uf, WALK_VERIFY, dev, NULL, NULL, res);
	res->verified = !err;
	return err;
}

int
xk_undo_apply(const char *undo_path, const char *dev_path, unsigned int flags,
	      xk_undo_record_fn each, void *ctx, struct xk_undo_result *res)
{
	uint8_t hdr[UNDO_HDR_SIZE];
	struct undo_file uf = { .fd = -1 };
	struct xk_dev *dev = NULL;
	uint64_t devsize;
	int err;

	memset(res, 0, sizeof(*res));
	err = open_undo_file(undo_path, hdr, &uf, res);
	/* Check every record before writing any. */
	if (!err)
		err = walk_records(&uf, WALK_VALIDATE, NULL, NULL, NULL, res);
	if (err)
		goto out;
	err = xk_dev_open(dev_path, (flags & XK_UNDO_DRYRUN) ? XK_DEV_RDONLY :
			  0, &dev);
	if (err) {
		refuse(res, err, "cannot open the device%s", err == -EBUSY ?
		       " (it is mounted)" : "");
		goto out;
	}
	if (!(flags & XK_UNDO_FORCE)) {
		err = verify_target(hdr, &uf, dev, res);
		if (err)
			goto out;
	}
	if (flags & XK_UNDO_DRYRUN) {
		err = walk_records(&uf, WALK_LIST, dev, each, ctx, res);
		goto out;
	}
	err = walk_records(&uf, WALK_APPLY, dev, each, ctx, res);
	devsize = xk_get_be64(hdr + H_DEVSIZE);
	if (!err && !dev->is_bdev && dev->size > devsize)
		err = xk_dev_set_size(dev, devsize);
	if (!err)
		err = xk_dev_sync(dev);
out:
	xk_dev_close(dev);
	if (uf.fd >= 0)
		close(uf.fd);
	return err;
}
