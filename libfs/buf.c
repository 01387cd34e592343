// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Buffer cache and verified I/O.
 *
 * A chained hash on the disk address finds buffers; a buffer is unique
 * by (daddr, len).  Unreferenced clean buffers live on an LRU list and
 * are freed oldest first once the cache holds more than its byte budget.
 * Dirty buffers are never reclaimed; xk_buf_flush() writes them back
 * sorted by address so image files and disks see sequential writes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/crc32c.h>
#include <xfskit/endian.h>
#include <xfskit/errors.h>
#include <xfskit/fault.h>
#include <xfskit/mount.h>
#include <xfskit/needsrepair.h>

#include "libfs_priv.h"

struct xk_bcache {
	struct xk_buf	**hash;
	size_t		nbuckets;
	size_t		nbufs;
	uint64_t	bytes;
	uint64_t	limit;
	struct xk_buf	lru;		/* sentinel: lnext is the oldest */
};

#define BCACHE_DEFAULT_LIMIT	(256ULL << 20)

int
xk_fail_set(struct xk_fail *f, const char *check, const char *fmt, ...)
{
	va_list ap;

	f->check = check;
	f->has_values = 0;
	f->detail[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
		va_end(ap);
	}
	return XK_ECORRUPT;
}

int
xk_fail_val(struct xk_fail *f, const char *check, uint64_t expected,
	    uint64_t found)
{
	f->check = check;
	f->has_values = 1;
	f->expected = expected;
	f->found = found;
	f->detail[0] = '\0';
	return XK_ECORRUPT;
}

void
xk_fail_format(const struct xk_fail *f, char *out, size_t len)
{
	int n;

	if (f->daddr == XK_NO_DADDR)
		n = snprintf(out, len, "%s", f->structure ? f->structure :
			     "filesystem");
	else
		n = snprintf(out, len, "%s at daddr %llu", f->structure ?
			     f->structure : "block",
			     (unsigned long long)f->daddr);
	if (n < 0 || (size_t)n >= len)
		return;
	if (f->agno >= 0)
		n += snprintf(out + n, len - (size_t)n, " (AG %lld)",
			      (long long)f->agno);
	if ((size_t)n >= len)
		return;
	if (f->ino)
		n += snprintf(out + n, len - (size_t)n, " (inode %llu)",
			      (unsigned long long)f->ino);
	if ((size_t)n >= len)
		return;
	n += snprintf(out + n, len - (size_t)n, ": %s",
		      f->check ? f->check : "failed verification");
	if ((size_t)n >= len)
		return;
	if (f->has_values)
		n += snprintf(out + n, len - (size_t)n,
			      ": expected %llu (0x%llx), found %llu (0x%llx)",
			      (unsigned long long)f->expected,
			      (unsigned long long)f->expected,
			      (unsigned long long)f->found,
			      (unsigned long long)f->found);
	if ((size_t)n >= len)
		return;
	if (f->detail[0])
		n += snprintf(out + n, len - (size_t)n, ": %s", f->detail);
	if ((size_t)n >= len)
		return;
	if (f->crc_bad && strcmp(f->check ? f->check : "", "crc") != 0)
		snprintf(out + n, len - (size_t)n, " (checksum also bad)");
}

int
xk_bcache_init(struct xk_mount *mp)
{
	struct xk_bcache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->nbuckets = 4096;
	c->hash = calloc(c->nbuckets, sizeof(*c->hash));
	if (!c->hash) {
		free(c);
		return -ENOMEM;
	}
	c->limit = BCACHE_DEFAULT_LIMIT;
	c->lru.lnext = c->lru.lprev = &c->lru;
	mp->cache = c;
	return 0;
}

static size_t
bucket_of(const struct xk_bcache *c, uint64_t daddr)
{
	return (size_t)((daddr * 0x9e3779b97f4a7c15ULL) >> 20) &
	       (c->nbuckets - 1);
}

static void
lru_del(struct xk_buf *bp)
{
	if (!bp->lnext)
		return;
	bp->lprev->lnext = bp->lnext;
	bp->lnext->lprev = bp->lprev;
	bp->lnext = bp->lprev = NULL;
}

static void
lru_add_tail(struct xk_bcache *c, struct xk_buf *bp)
{
	bp->lprev = c->lru.lprev;
	bp->lnext = &c->lru;
	c->lru.lprev->lnext = bp;
	c->lru.lprev = bp;
}

static void
hash_del(struct xk_bcache *c, struct xk_buf *bp)
{
	struct xk_buf **pp = &c->hash[bucket_of(c, bp->daddr)];

	while (*pp && *pp != bp)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = bp->hnext;
}

static void
buf_free(struct xk_bcache *c, struct xk_buf *bp)
{
	lru_del(bp);
	hash_del(c, bp);
	c->nbufs--;
	c->bytes -= bp->len;
	free(bp->data);
	free(bp);
}

static void
hash_grow(struct xk_bcache *c)
{
	size_t nb = c->nbuckets * 2;
	struct xk_buf **nh = calloc(nb, sizeof(*nh));
	size_t old = c->nbuckets;

	if (!nh)
		return;		/* keep the old table: slower, not wrong */
	c->nbuckets = nb;
	for (size_t i = 0; i < old; i++) {
		struct xk_buf *bp = c->hash[i], *next;

		for (; bp; bp = next) {
			size_t b = bucket_of(c, bp->daddr);

			next = bp->hnext;
			bp->hnext = nh[b];
			nh[b] = bp;
		}
	}
	free(c->hash);
	c->hash = nh;
}

/* Free clean unreferenced buffers, oldest first, until under budget. */
static void
bcache_reclaim(struct xk_bcache *c)
{
	struct xk_buf *bp = c->lru.lnext, *next;

	while (c->bytes > c->limit && bp != &c->lru) {
		next = bp->lnext;
		if (bp->refs == 0 && !(bp->flags & XK_BUF_DIRTY))
			buf_free(c, bp);
		bp = next;
	}
}

void
xk_bcache_destroy(struct xk_mount *mp)
{
	struct xk_bcache *c = mp->cache;

	if (!c)
		return;
	for (size_t i = 0; i < c->nbuckets; i++) {
		struct xk_buf *bp = c->hash[i], *next;

		for (; bp; bp = next) {
			next = bp->hnext;
			free(bp->data);
			free(bp);
		}
	}
	free(c->hash);
	free(c);
	mp->cache = NULL;
}

uint64_t
xk_mount_set_cache_limit(struct xk_mount *mp, uint64_t bytes)
{
	uint64_t old = mp->cache->limit;

	mp->cache->limit = bytes;
	bcache_reclaim(mp->cache);
	return old;
}

static struct xk_buf *
bcache_lookup(struct xk_bcache *c, uint64_t daddr, uint32_t len)
{
	struct xk_buf *bp = c->hash[bucket_of(c, daddr)];

	for (; bp; bp = bp->hnext)
		if (bp->daddr == daddr && bp->len == len)
			return bp;
	return NULL;
}

static struct xk_buf *
bcache_insert(struct xk_mount *mp, uint64_t daddr, uint32_t len)
{
	struct xk_bcache *c = mp->cache;
	struct xk_buf *bp;
	size_t b;

	bp = xk_calloc(1, sizeof(*bp));
	if (!bp)
		return NULL;
	/* Sector-aligned memory, so O_DIRECT can take the buffer as is. */
	{
		size_t align = mp->dev->topo.logical_sector > 512 ?
			       mp->dev->topo.logical_sector : 512;
		void *p;

		/* Not zeroed: a read fills it, xk_buf_get clears it. */
		if (posix_memalign(&p, align, len)) {
			free(bp);
			return NULL;
		}
		bp->data = p;
	}
	bp->mp = mp;
	bp->daddr = daddr;
	bp->len = len;
	bp->refs = 1;
	bp->agno = -1;
	if (c->nbufs >= c->nbuckets * 2)
		hash_grow(c);
	b = bucket_of(c, daddr);
	bp->hnext = c->hash[b];
	c->hash[b] = bp;
	c->nbufs++;
	c->bytes += len;
	lru_add_tail(c, bp);
	bcache_reclaim(c);
	return bp;
}

/* Stamp the verifier's identity on a failure site before it runs. */
static void
fail_init(struct xk_buf *bp)
{
	memset(&bp->fail, 0, sizeof(bp->fail));
	bp->fail.structure = bp->ops ? bp->ops->name : "block";
	bp->fail.daddr = bp->daddr;
	bp->fail.agno = bp->agno;
	bp->fail.ino = (bp->agno < 0) ? bp->owner : 0;
}

/*
 * Verify as after a read: the CRC, then the structure.  A structural
 * failure wins over a CRC failure because it says more; crc_bad records
 * that the checksum was bad too.
 */
int
xk_buf_verify(struct xk_buf *bp)
{
	const struct xk_buf_ops *ops = bp->ops;
	int crc_bad = 0, err = 0;

	fail_init(bp);
	bp->error = 0;
	bp->flags |= XK_BUF_VERIFIED;
	if (!ops)
		return 0;
	if (ops->crc_off != XK_NO_CRC) {
		if (ops->crc_off + 4 > bp->len)
			return bp->error = xk_fail_set(&bp->fail, "size",
				"buffer of %u bytes too small", bp->len);
		crc_bad = !xk_cksum_ok(bp->data, bp->len, ops->crc_off);
	} else if (ops->crc_ok) {
		crc_bad = !ops->crc_ok(bp);
	}
	if (ops->verify)
		err = ops->verify(bp, &bp->fail);
	if (err) {
		bp->fail.crc_bad = crc_bad;
		return bp->error = err;
	}
	/*
	 * An LSN past the log head is no damage to the block (the log is
	 * what is behind): noted for the caller to compare (repair).
	 */
	if (!crc_bad && ops->lsn_off && ops->lsn_off + 8 <= bp->len)
		xk_mount_note_lsn(bp->mp, xk_get_be64(bp->data + ops->lsn_off));
	if (crc_bad && ops->crc_off == XK_NO_CRC) {
		xk_fail_set(&bp->fail, "crc", "a record's checksum does not "
			    "match");
		bp->fail.crc_bad = 1;
		return bp->error = XK_EBADCRC;
	}
	if (crc_bad) {
		xk_fail_val(&bp->fail, "crc",
			    xk_cksum_calc(bp->data, bp->len, ops->crc_off),
			    xk_get_le32(bp->data + ops->crc_off));
		bp->fail.crc_bad = 1;
		return bp->error = XK_EBADCRC;
	}
	return 0;
}

int
xk_buf_verify_mem(struct xk_mount *mp, const struct xk_buf_ops *ops,
		  uint8_t *data, uint32_t len, const struct xk_buf_site *site,
		  struct xk_fail *f)
{
	struct xk_buf b;

	memset(f, 0, sizeof(*f));
	if (!ops->verify)
		return 0;
	/* Only what the verifiers read; no cache state, never linked. */
	memset(&b, 0, sizeof(b));
	b.mp = mp;
	b.daddr = site->daddr;
	b.agno = site->agno;
	b.owner = site->owner;
	b.len = len;
	b.data = data;
	b.ops = ops;
	return ops->verify(&b, f);
}

int
xk_buf_read_ctx(struct xk_mount *mp, uint64_t daddr, uint32_t len,
		const struct xk_buf_ops *ops, int64_t agno, uint64_t owner,
		unsigned int flags, struct xk_buf **bpp)
{
	struct xk_bcache *c = mp->cache;
	struct xk_buf *bp;
	int err;

	*bpp = NULL;
	if (len == 0 || (len & (XK_BBSIZE - 1)))
		return -EINVAL;
	bp = bcache_lookup(c, daddr, len);
	if (bp) {
		if (bp->refs++ == 0)
			lru_del(bp);
	} else {
		bp = bcache_insert(mp, daddr, len);
		if (!bp)
			return -ENOMEM;
		lru_del(bp);
		err = xk_dev_pread(mp->dev, bp->data, len, daddr << XK_BBSHIFT);
		if (err) {
			bp->refs = 0;
			buf_free(c, bp);
			return err;
		}
		bp->flags |= XK_BUF_UPTODATE;
	}
	if (flags & XK_READ_NOVERIFY) {
		*bpp = bp;
		return 0;
	}
	/* Verify once per (type, context); a cached verdict is reused. */
	if (!(bp->flags & XK_BUF_VERIFIED) || bp->ops != ops ||
	    bp->agno != agno || bp->owner != owner) {
		bp->ops = ops;
		bp->agno = agno;
		bp->owner = owner;
		xk_buf_verify(bp);
	}
	if (!bp->error) {
		*bpp = bp;
		return 0;
	}
	err = bp->error;
	if (flags & XK_READ_SALVAGE)
		*bpp = bp;
	else
		xk_buf_release(bp);
	return err;
}

int
xk_buf_read(struct xk_mount *mp, uint64_t daddr, uint32_t len,
	    const struct xk_buf_ops *ops, unsigned int flags,
	    struct xk_buf **bpp)
{
	return xk_buf_read_ctx(mp, daddr, len, ops, -1, 0, flags, bpp);
}

int
xk_buf_get(struct xk_mount *mp, uint64_t daddr, uint32_t len,
	   const struct xk_buf_ops *ops, struct xk_buf **bpp)
{
	struct xk_buf *bp;

	*bpp = NULL;
	if (len == 0 || (len & (XK_BBSIZE - 1)))
		return -EINVAL;
	bp = bcache_lookup(mp->cache, daddr, len);
	if (bp) {
		if (bp->refs++ == 0)
			lru_del(bp);
		memset(bp->data, 0, len);
	} else {
		bp = bcache_insert(mp, daddr, len);
		if (!bp)
			return -ENOMEM;
		lru_del(bp);
		memset(bp->data, 0, len);
	}
	bp->ops = ops;
	bp->error = 0;
	bp->flags |= XK_BUF_UPTODATE;
	bp->flags &= ~XK_BUF_VERIFIED;
	*bpp = bp;
	return 0;
}

void
xk_buf_readahead(struct xk_mount *mp, uint64_t daddr, uint32_t len)
{
	if (bcache_lookup(mp->cache, daddr, len))
		return;
	xk_dev_readahead(mp->dev, daddr << XK_BBSHIFT, len);
}

void
xk_buf_release(struct xk_buf *bp)
{
	struct xk_bcache *c;

	if (!bp)
		return;
	c = bp->mp->cache;
	if (--bp->refs > 0)
		return;
	bp->refs = 0;
	/*
	 * Only clean buffers can be reclaimed, so only they go on the
	 * LRU: a cache full of dirty buffers would otherwise be scanned
	 * whole at every release.  Writing a buffer puts it there.
	 */
	if (!(bp->flags & XK_BUF_DIRTY))
		lru_add_tail(c, bp);
	bcache_reclaim(c);
}

void
xk_buf_dirty(struct xk_buf *bp)
{
	bp->flags |= XK_BUF_DIRTY;
	bp->flags &= ~XK_BUF_VERIFIED;
}

/* Write-side verification: structure, then LSN and CRC. */
static int
buf_verify_write(struct xk_buf *bp)
{
	const struct xk_buf_ops *ops = bp->ops;
	int err;

	fail_init(bp);
	if (!ops)
		return 0;
	if (ops->verify) {
		err = ops->verify(bp, &bp->fail);
		if (err)
			return bp->error = err;
	}
	if (ops->lsn_off && bp->mp->write_lsn)
		xk_put_be64(bp->data + ops->lsn_off, bp->mp->write_lsn);
	if (ops->crc_off != XK_NO_CRC && ops->crc_off + 4 <= bp->len)
		xk_cksum_update(bp->data, bp->len, ops->crc_off);
	if (ops->crc_update)
		ops->crc_update(bp);
	bp->error = 0;
	return 0;
}

int
xk_buf_write(struct xk_buf *bp)
{
	int err = buf_verify_write(bp);

	if (err)
		return err;
	return xk_buf_write_raw(bp);
}

int
xk_buf_write_raw(struct xk_buf *bp)
{
	int err;

	if (bp->mp->flags & XK_MOUNT_RDONLY)
		return XK_ERDONLY;
	xk_needsrepair_pin(bp);
	err = xk_dev_pwrite(bp->mp->dev, bp->data, bp->len,
			    bp->daddr << XK_BBSHIFT);
	if (err)
		return err;
	/* The bytes may not be what the last verdict was about. */
	bp->flags &= ~(XK_BUF_DIRTY | XK_BUF_VERIFIED);
	if (bp->refs == 0 && !bp->lnext)
		lru_add_tail(bp->mp->cache, bp);
	return 0;
}

static int
cmp_daddr(const void *a, const void *b)
{
	const struct xk_buf *x = *(struct xk_buf *const *)a;
	const struct xk_buf *y = *(struct xk_buf *const *)b;

	return (x->daddr > y->daddr) - (x->daddr < y->daddr);
}

int
xk_buf_flush(struct xk_mount *mp)
{
	struct xk_bcache *c = mp->cache;
	struct xk_buf **list;
	size_t n = 0;
	int err = 0;

	for (size_t i = 0; i < c->nbuckets; i++)
		for (struct xk_buf *bp = c->hash[i]; bp; bp = bp->hnext)
			if (bp->flags & XK_BUF_DIRTY)
				n++;
	if (n == 0)
		return 0;
	if (mp->flags & XK_MOUNT_RDONLY)
		return XK_ERDONLY;
	list = malloc(n * sizeof(*list));
	if (!list)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < c->nbuckets; i++)
		for (struct xk_buf *bp = c->hash[i]; bp; bp = bp->hnext)
			if (bp->flags & XK_BUF_DIRTY)
				list[n++] = bp;
	qsort(list, n, sizeof(*list), cmp_daddr);
	for (size_t i = 0; i < n; i++) {
		int e = xk_buf_write(list[i]);

		if (e && !err)
			err = e;
	}
	free(list);
	bcache_reclaim(c);
	return err;
}

int
xk_buf_seal(struct xk_mount *mp)
{
	struct xk_bcache *c = mp->cache;
	int err = 0;

	for (size_t i = 0; i < c->nbuckets; i++)
		for (struct xk_buf *bp = c->hash[i]; bp; bp = bp->hnext) {
			int e;

			if (!(bp->flags & XK_BUF_DIRTY))
				continue;
			e = buf_verify_write(bp);
			if (e && !err)
				err = e;
			bp->flags &= ~XK_BUF_VERIFIED;
		}
	return err;
}

void
xk_buf_discard_dirty(struct xk_mount *mp)
{
	struct xk_bcache *c = mp->cache;

	for (size_t i = 0; i < c->nbuckets; i++) {
		struct xk_buf *bp = c->hash[i];

		while (bp) {
			struct xk_buf *next = bp->hnext;

			if ((bp->flags & XK_BUF_DIRTY) && bp->refs == 0) {
				bp->flags &= ~XK_BUF_DIRTY;
				buf_free(c, bp);
			}
			bp = next;
		}
	}
}

void
xk_buf_invalidate(struct xk_mount *mp, uint64_t daddr, uint32_t len)
{
	struct xk_buf *bp = bcache_lookup(mp->cache, daddr, len);

	if (bp && bp->refs == 0)
		buf_free(mp->cache, bp);
}
