// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The NEEDSREPAIR guard (needsrepair.h).  The first write waits on it
 * through the devices' write hook; the mark is the primary as it is on
 * disk with the bit set (or, when that copy does not verify, the
 * handle's superblock, from which the run will rewrite it anyway).
 * The guard's own writes go through the same hook: a recursive lock
 * lets them pass while every other thread's write waits for the mark.
 * The mark is the primary's alone: a secondary written through the
 * cache loses it, and the clear first takes it off the copies on disk.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/buf.h>
#include <xfskit/crc32c.h>
#include <xfskit/endian.h>
#include <xfskit/fault.h>
#include <xfskit/format/ag.h>
#include <xfskit/format/sb.h>
#include <xfskit/mount.h>
#include <xfskit/needsrepair.h>

#define SB_CRC_OFF	offsetof(struct xk_dsb, sb_crc)

struct xk_needsrepair {
	struct xk_mount	*mp;
	pthread_mutex_t	lock;		/* recursive: the mark's own write */
	int		started;	/* under lock: the mark was begun */
	int		done;		/* atomic: writes need not wait */
	int		err;		/* the mark's failure: every write's */
	int		marked;		/* the primary on disk has the bit */
	int		pin;		/* writes of the primary keep it */
};

static struct xk_dev *
guard_dev(const struct xk_mount *mp, int i)
{
	return i == 0 ? mp->dev : i == 1 ? mp->logdev : mp->rtdev;
}

/* Sector 0 into buf: 1 when it is a superblock whose CRC verifies. */
static int
read_primary(struct xk_mount *mp, uint8_t *buf)
{
	const struct xk_dsb *d = (const struct xk_dsb *)buf;
	int err = xk_dev_pread(mp->dev, buf, mp->g.sectsize, 0);

	if (err)
		return err;
	return xk_be32_get(d->sb_magicnum) == XK_SB_MAGIC &&
	       xk_cksum_ok(buf, mp->g.sectsize, SB_CRC_OFF);
}

static uint8_t *
sector_alloc(const struct xk_mount *mp)
{
	void *p;

	if (posix_memalign(&p, mp->g.sectsize, mp->g.sectsize))
		return NULL;
	return p;
}

/*
 * Write sector 0 with the bit set or cleared, and sync: the primary as
 * on disk, else (set only) the handle's superblock.
 */
static int
write_primary(struct xk_mount *mp, int set)
{
	uint8_t *buf = sector_alloc(mp);
	struct xk_dsb *d = (struct xk_dsb *)buf;
	uint32_t incompat;
	int ok, err;

	if (!buf)
		return -ENOMEM;
	ok = read_primary(mp, buf);
	if (ok < 0) {
		err = ok;
		goto out;
	}
	if (!ok) {
		/* Unreadable as a superblock: clearing has nothing to do. */
		err = 0;
		if (!set)
			goto out;
		memset(buf, 0, mp->g.sectsize);
		xk_sb_encode(d, &mp->sb);
	}
	incompat = xk_be32_get(d->sb_features_incompat);
	if (set)
		incompat |= XK_SB_FEAT_INCOMPAT_NEEDSREPAIR;
	else
		incompat &= ~XK_SB_FEAT_INCOMPAT_NEEDSREPAIR;
	xk_be32_set(&d->sb_features_incompat, incompat);
	xk_cksum_update(buf, mp->g.sectsize, SB_CRC_OFF);
	err = xk_dev_pwrite(mp->dev, buf, mp->g.sectsize, 0);
	if (!err)
		err = xk_dev_sync(mp->dev);
out:
	free(buf);
	return err;
}

/* Every device's write hook: the first write marks the primary. */
static int
before_write(void *arg)
{
	struct xk_needsrepair *g = arg;
	int err;

	if (__atomic_load_n(&g->done, __ATOMIC_ACQUIRE))
		return g->err;
	pthread_mutex_lock(&g->lock);
	if (!g->started) {
		g->started = 1;
		g->err = write_primary(g->mp, 1);
		g->marked = !g->err;
		__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	}
	/* The mark's own write passes here with err still 0. */
	err = g->err;
	pthread_mutex_unlock(&g->lock);
	return err;
}

static void
set_hooks(struct xk_mount *mp, struct xk_needsrepair *g)
{
	for (int i = 0; i < 3; i++) {
		struct xk_dev *dev = guard_dev(mp, i);

		if (!dev)
			continue;
		dev->write_hook = g ? before_write : NULL;
		dev->write_hook_arg = g;
	}
}

int
xk_needsrepair_arm(struct xk_mount *mp)
{
	struct xk_needsrepair *g;
	pthread_mutexattr_t attr;
	uint8_t *buf;
	int ok;

	if (mp->flags & XK_MOUNT_RDONLY)
		return XK_ERDONLY;
	if (mp->needsrepair)
		return 0;
	buf = sector_alloc(mp);
	if (!buf)
		return -ENOMEM;
	ok = read_primary(mp, buf);
	if (ok < 0) {
		free(buf);
		return ok;
	}
	g = xk_calloc(1, sizeof(*g));
	if (!g) {
		free(buf);
		return -ENOMEM;
	}
	g->mp = mp;
	g->pin = 1;
	/* Already marked: nothing to write before the first write. */
	if (ok && (xk_be32_get(((struct xk_dsb *)buf)->sb_features_incompat) &
		   XK_SB_FEAT_INCOMPAT_NEEDSREPAIR))
		g->marked = g->started = g->done = 1;
	free(buf);
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&g->lock, &attr);
	pthread_mutexattr_destroy(&attr);
	mp->needsrepair = g;
	set_hooks(mp, g);
	return 0;
}

int
xk_needsrepair_marked(const struct xk_mount *mp)
{
	const struct xk_needsrepair *g = mp->needsrepair;

	return g && g->marked;
}

/* The AG whose superblock is at daddr, or -1. */
static int64_t
sb_agno(const struct xk_mount *mp, uint64_t daddr)
{
	uint64_t agbb = (uint64_t)mp->g.agblocks << mp->g.blkbb_log;

	if (daddr % agbb || daddr / agbb >= mp->g.agcount)
		return -1;
	return (int64_t)(daddr / agbb);
}

void
xk_needsrepair_pin(struct xk_buf *bp)
{
	struct xk_needsrepair *g = bp->mp->needsrepair;
	struct xk_dsb *d = (struct xk_dsb *)bp->data;
	int64_t agno;
	uint32_t incompat, want;

	if (!g || bp->len < sizeof(*d) ||
	    xk_be32_get(d->sb_magicnum) != XK_SB_MAGIC)
		return;
	agno = sb_agno(bp->mp, bp->daddr);
	if (agno < 0 || (agno == 0 && !g->pin))
		return;
	/* The primary keeps the mark; a secondary never carries it. */
	incompat = xk_be32_get(d->sb_features_incompat);
	want = agno == 0 ? incompat | XK_SB_FEAT_INCOMPAT_NEEDSREPAIR :
	       incompat & ~XK_SB_FEAT_INCOMPAT_NEEDSREPAIR;
	if (want == incompat)
		return;
	xk_be32_set(&d->sb_features_incompat, want);
	xk_cksum_update(bp->data, bp->len, SB_CRC_OFF);
}

/*
 * The secondaries on disk that carry the mark (copied there by a tool
 * that wrote every superblock while the primary had it) lose it, as
 * xfs_repair clears it: quietly, a copy that verifies only.  Each write
 * goes through the hook, so the primary is marked first.
 */
static int
clear_secondaries(struct xk_mount *mp)
{
	uint8_t *buf = sector_alloc(mp);
	struct xk_dsb *d = (struct xk_dsb *)buf;
	unsigned int n = 0;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (uint32_t agno = 1; agno < mp->g.agcount && !err; agno++) {
		uint64_t off = xk_ag_hdr_daddr(mp, agno, XK_SB_SECTOR) <<
			       XK_BBSHIFT;
		uint32_t incompat;

		err = xk_dev_pread(mp->dev, buf, mp->g.sectsize, off);
		if (err)
			break;
		incompat = xk_be32_get(d->sb_features_incompat);
		if (xk_be32_get(d->sb_magicnum) != XK_SB_MAGIC ||
		    !xk_cksum_ok(buf, mp->g.sectsize, SB_CRC_OFF) ||
		    !(incompat & XK_SB_FEAT_INCOMPAT_NEEDSREPAIR))
			continue;
		xk_be32_set(&d->sb_features_incompat,
			    incompat & ~XK_SB_FEAT_INCOMPAT_NEEDSREPAIR);
		xk_cksum_update(buf, mp->g.sectsize, SB_CRC_OFF);
		err = xk_dev_pwrite(mp->dev, buf, mp->g.sectsize, off);
		if (!err) {
			/* A cached copy may say otherwise. */
			xk_buf_invalidate(mp, off >> XK_BBSHIFT,
					  mp->g.sectsize);
			n++;
		}
	}
	if (!err && n)
		err = xk_dev_sync(mp->dev);
	free(buf);
	return err;
}

int
xk_needsrepair_clear(struct xk_mount *mp)
{
	struct xk_needsrepair *g = mp->needsrepair;
	int err;

	if (!g)
		return 0;
	err = xk_buf_flush(mp);
	for (int i = 0; i < 3 && !err; i++)
		if (guard_dev(mp, i))
			err = xk_dev_sync(guard_dev(mp, i));
	if (!err)
		err = clear_secondaries(mp);
	if (err)
		return err;
	if (g->marked) {
		g->pin = 0;
		err = write_primary(mp, 0);
		if (err) {
			g->pin = 1;
			return err;
		}
		g->marked = 0;
		/* A cached copy may say otherwise: the disk is the truth. */
		xk_buf_invalidate(mp, 0, mp->g.sectsize);
	}
	mp->sb.features_incompat &= ~XK_SB_FEAT_INCOMPAT_NEEDSREPAIR;
	xk_needsrepair_disarm(mp);
	return 0;
}

void
xk_needsrepair_disarm(struct xk_mount *mp)
{
	struct xk_needsrepair *g = mp->needsrepair;

	if (!g)
		return;
	set_hooks(mp, NULL);
	pthread_mutex_destroy(&g->lock);
	free(g);
	mp->needsrepair = NULL;
}
