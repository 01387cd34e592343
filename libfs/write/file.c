// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * File content in the builder: regular file data streamed from a file
 * descriptor or a reader straight to the device (never through the
 * metadata cache, never held whole), device nodes, and symlink targets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/format/symlink.h>

#include "write_priv.h"

/* Pull up to n bytes from the source into buf; fewer only at its end. */
struct src {
	int		fd;
	uint64_t	off;
	xk_bld_reader	rd;
	void		*ctx;
};

static int
src_read(struct src *s, uint8_t *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = s->rd ? s->rd(s->ctx, buf + done, n - done) :
				    pread(s->fd, buf + done, n - done,
					  (off_t)s->off);

		if (r < 0)
			return s->rd ? (int)r : -errno;
		if (r == 0)
			return -EIO;	/* the source shrank under us */
		done += (size_t)r;
		s->off += (uint64_t)r;
	}
	return 0;
}

static int
file_write(struct xk_bld *b, struct xk_bld_inode *ip, uint64_t off,
	   struct src *s, uint64_t len)
{
	struct xk_mount *mp = b->mp;
	unsigned int bl = mp->g.blocklog;
	uint32_t bs = mp->g.blocksize;
	uint64_t first, last, next_unmapped, fsb;
	uint32_t align = 1;
	int err;

	if (len == 0) {
		if (off > ip->size)
			ip->size = off;
		return 0;
	}
	if (off + len < off || ((off + len - 1) >> bl) >= XK_MAX_FILEOFF)
		return -EFBIG;
	first = off >> bl;
	last = (off + len - 1) >> bl;
	next_unmapped = first;
	if (xk_bld_fork_map(&ip->data, first, &fsb) == 0)
		next_unmapped = first + 1;
	if (mp->sb.unit > 1 && last - first + 1 >= mp->sb.unit)
		align = mp->sb.unit;
	if (next_unmapped <= last) {
		err = xk_bld_fork_alloc(b, ip, XK_DATA_FORK, next_unmapped,
					last - next_unmapped + 1, align);
		if (err)
			return err;
	}
	/* Block by block runs of physically contiguous blocks. */
	while (len) {
		uint64_t fb = off >> bl, run = 0, pfsb, nfsb;
		uint32_t head = (uint32_t)(off & (bs - 1));
		size_t chunk, n;

		err = xk_bld_fork_map(&ip->data, fb, &pfsb);
		if (err)
			return -EIO;
		/* How many blocks follow contiguously, up to the buffer. */
		while ((run + 1) * bs <= b->iobuf_len &&
		       ((uint64_t)head + len) > run * bs &&
		       xk_bld_fork_map(&ip->data, fb + run, &nfsb) == 0 &&
		       nfsb == pfsb + run)
			run++;
		chunk = (size_t)run * bs;
		n = chunk - head;
		if (n > len)
			n = (size_t)len;
		memset(b->iobuf, 0, chunk);
		if (head) {
			/* The block's start belongs to an earlier segment. */
			err = xk_dev_pread(mp->dev, b->iobuf, bs,
					   xk_fsb_to_daddr(mp, pfsb) << 9);
			if (err)
				return err;
		}
		err = src_read(s, b->iobuf + head, n);
		if (!err)
			err = xk_dev_pwrite(mp->dev, b->iobuf,
					    ((head + n + bs - 1) >> bl) << bl,
					    xk_fsb_to_daddr(mp, pfsb) << 9);
		if (err)
			return err;
		off += n;
		len -= n;
	}
	if (off > ip->size)
		ip->size = off;
	return 0;
}

int
xk_bld_file_write_fd(struct xk_bld *b, struct xk_bld_inode *ip, uint64_t off,
		     int fd, uint64_t src_off, uint64_t len)
{
	struct src s = { .fd = fd, .off = src_off };

	return file_write(b, ip, off, &s, len);
}

int
xk_bld_file_write_reader(struct xk_bld *b, struct xk_bld_inode *ip,
			 uint64_t off, xk_bld_reader rd, void *ctx,
			 uint64_t len)
{
	struct src s = { .fd = -1, .rd = rd, .ctx = ctx };

	return file_write(b, ip, off, &s, len);
}

int
xk_bld_dev(struct xk_bld *b, struct xk_bld_inode *ip, uint32_t major,
	   uint32_t minor)
{
	uint8_t rdev[4];
	int err;

	(void)b;
	if (major >= (1u << (32 - XK_DEV_MINORBITS)) ||
	    minor > XK_DEV_MINORMASK)
		return -EOVERFLOW;
	xk_put_be32(rdev, xk_mkdev(major, minor));
	err = xk_bld_fork_local(&ip->data, rdev, sizeof(rdev));
	if (!err)
		ip->data.format = XK_BLD_FMT_DEV;
	return err;
}

/* The target in remote blocks, whatever room the inode has. */
static int
symlink_remote(struct xk_bld *b, struct xk_bld_inode *ip, const char *target,
	       size_t len)
{
	struct xk_mount *mp = b->mp;
	uint32_t bs = mp->g.blocksize, space = xk_symlink_buf_space(bs);
	uint64_t nblocks, done = 0;
	int err;

	ip->size = len;
	nblocks = (len + space - 1) / space;
	err = xk_bld_fork_alloc(b, ip, XK_DATA_FORK, 0, nblocks, 1);
	if (err)
		return err;
	/* One header per extent, as the kernel writes and reads them. */
	for (uint64_t i = 0; i < ip->data.next; i++) {
		const struct xk_bld_ext *e = &ip->data.ext[i];
		uint32_t blen = e->len * bs;
		uint32_t n = blen - (uint32_t)sizeof(struct xk_dsymlink_hdr);
		struct xk_dsymlink_hdr *h;
		struct xk_buf *bp;
		uint64_t daddr = xk_fsb_to_daddr(mp, e->fsbno);

		if (n > len - done)
			n = (uint32_t)(len - done);
		err = xk_buf_get(mp, daddr, blen, &xk_symlink_buf_ops, &bp);
		if (err)
			return err;
		bp->owner = ip->ino;
		memset(bp->data, 0, blen);
		h = (struct xk_dsymlink_hdr *)bp->data;
		xk_be32_set(&h->sl_magic, XK_SYMLINK_MAGIC);
		xk_be32_set(&h->sl_offset, (uint32_t)done);
		xk_be32_set(&h->sl_bytes, n);
		memcpy(h->sl_uuid, mp->meta_uuid, 16);
		xk_be64_set(&h->sl_owner, ip->ino);
		xk_be64_set(&h->sl_blkno, daddr);
		memcpy(bp->data + sizeof(*h), target + done, n);
		xk_buf_dirty(bp);
		xk_buf_release(bp);
		done += n;
	}
	return done == len ? 0 : -EIO;
}

int
xk_bld_symlink(struct xk_bld *b, struct xk_bld_inode *ip, const char *target,
	       size_t len)
{
	if (len == 0 || len > XK_SYMLINK_MAXLEN)
		return -ENAMETOOLONG;
	ip->size = len;
	if (len <= xk_bld_fork_space(b, ip, XK_DATA_FORK))
		return xk_bld_fork_local(&ip->data, target, (uint32_t)len);
	return symlink_remote(b, ip, target, len);
}

/*
 * A local symlink target an attr fork cannot share its inode with moves
 * out to remote blocks first, as the kernel moves it before adding the
 * attr fork; the target and the size stay.  The inode's data fork is
 * rewritten in place with the new mapping.
 */
int
bld_symlink_to_remote(struct xk_bld *b, uint64_t ino, struct xk_dinode *dip,
		      const char **why)
{
	struct xk_mount *mp = b->mp;
	uint64_t size = xk_be64_get(dip->di_size);
	uint32_t lit = xk_dinode_litino(mp->g.inodesize);
	struct xk_bld_inode tmp = { .ino = ino,
				    .mode = xk_be16_get(dip->di_mode) };
	int err;

	if (!size || size > lit || size > XK_SYMLINK_MAXLEN ||
	    memchr(xk_dfork_dptr(dip), 0, size)) {
		*why = "its local symlink target is damaged";
		return XK_ECORRUPT;
	}
	err = symlink_remote(b, &tmp, (const char *)xk_dfork_dptr(dip), size);
	if (!err && tmp.data.format != XK_BLD_FMT_EXTENTS)
		err = -EFBIG;	/* not mapped by extents: not expected */
	if (err) {
		*why = "its symlink target cannot be moved to a block";
		goto out;
	}
	err = bld_local_to_blocks(b, &tmp, dip);
	if (err)
		*why = "the symlink block's mapping does not fit";
out:
	free(tmp.data.local);
	free(tmp.data.ext);
	return err;
}
