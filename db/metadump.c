// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * metadump: copy every metadata block of a filesystem into a file that
 * xfs_mdrestore (v1) or xfskit-mdrestore (v1 and v2) turns back into a
 * sparse image with the same metadata -- superblocks and AG headers of
 * every AG, every btree block, every inode cluster, the bmbt, directory,
 * attribute and remote symlink blocks of every inode, quota and realtime
 * metadata inodes' blocks, and the log (emptied when clean, its stale
 * blocks scrubbed when dirty, unless -o -a: metadump_log.c).  File data
 * is never copied.
 *
 * The blocks come from libfs's metadata walker (walk.h), depth first:
 * each block is written as the walk meets it, an inode cluster before
 * the forks of the inodes in it.  The walker trusts nothing (btrees
 * through the btree engine, forks through the fork reader, every extent
 * range-checked, an inode followed only when its checks pass or its CRC
 * alone is wrong); what it reports damaged is a warning here, and what
 * cannot be read is skipped while the rest is dumped.  Each object is
 * rewritten in memory by metadump_obf.c before it is written out, and
 * each disk address is dumped once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xfskit/logv.h>
#include <xfskit/walk.h>

#include "metadump.h"

/* The buffer cache while dumping: the walk's path and a cluster or two. */
#define MD_CACHE_BYTES	(8ULL << 20)

enum md_kind {
	MK_RAW,
	MK_SB,
	MK_AGF,
	MK_AGI,
	MK_AGFL,
	MK_BTREE,
	MK_DIR,
	MK_ATTR,
	MK_SYMLINK,
};

struct md_ctx {
	struct xk_mount	*mp;
	FILE		*out;
	const struct md_opts *o;
	md_warn_fn	warn;
	void		*priv;
	struct md_stats	*st;
	struct md_obf	ob;
	int		err;		/* first output error */
	/* the v1 chunk being filled */
	uint8_t		hdr[MD_V1_BLOCKSIZE];
	uint8_t		*data;
	unsigned int	nidx;
	uint8_t		info;
	/* disk addresses already dumped */
	uint64_t	*seen;
	size_t		nseen, seencap;
	uint64_t	devbb;		/* device size in 512-byte units */
	/* the log as found: whether it was read, its head and tail */
	int		log_known;
	struct xk_log_state log;
	uint64_t	dev_bits;	/* v2 device of what emit() writes */
	/* the AGFL's live range, from this AG's AGF when it passed */
	int		agf_ok;
	uint32_t	flfirst, fllast, flcount;
	/* the fork whose blocks come now: names are unique within one */
	uint64_t	fork_owner;
	enum xk_walk_kind fork_kind;
};

static void
md_warnf(struct md_ctx *c, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->st->warnings++;
	if (c->warn)
		c->warn(c->priv, msg);
}

/* ---- output ---- */

static void
out_write(struct md_ctx *c, const void *p, size_t n)
{
	if (c->err || !n)
		return;
	if (fwrite(p, 1, n, c->out) != n)
		c->err = -EIO;
}

static void
v1_flush(struct md_ctx *c)
{
	xk_put_be32(c->hdr, MD_MAGIC_V1);
	xk_put_be16(c->hdr + 4, (uint16_t)c->nidx);
	c->hdr[6] = MD_V1_BLOCKLOG;
	c->hdr[7] = c->info;
	out_write(c, c->hdr, sizeof(c->hdr));
	out_write(c, c->data, (size_t)c->nidx * MD_V1_BLOCKSIZE);
	memset(c->hdr, 0, sizeof(c->hdr));
	c->nidx = 0;
}

static void
emit(struct md_ctx *c, uint64_t daddr, const uint8_t *buf, uint32_t len)
{
	c->st->blocks++;
	c->st->bytes += len;
	if (c->o->version == 2) {
		uint8_t eh[MD_V2_EXT_SIZE];

		xk_put_be64(eh, (daddr & MD_V2_DADDR_MASK) | c->dev_bits);
		xk_put_be32(eh + 8, len >> XK_BBSHIFT);
		out_write(c, eh, sizeof(eh));
		out_write(c, buf, len);
		return;
	}
	for (uint32_t off = 0; off < len; off += MD_V1_BLOCKSIZE) {
		xk_put_be64(c->hdr + MD_V1_HDR_SIZE + c->nidx * 8,
			    daddr + off / MD_V1_BLOCKSIZE);
		memcpy(c->data + (size_t)c->nidx * MD_V1_BLOCKSIZE, buf + off,
		       MD_V1_BLOCKSIZE);
		if (++c->nidx == MD_V1_MAX_INDICES)
			v1_flush(c);
	}
}

/* Whether daddr was dumped already; remembers it if not. */
static int
seen(struct md_ctx *c, uint64_t daddr)
{
	uint64_t k = daddr + 1;

	if ((c->nseen + 1) * 2 > c->seencap) {
		size_t ncap = c->seencap ? c->seencap * 2 : 4096;
		uint64_t *nv = calloc(ncap, sizeof(*nv));

		if (!nv)
			return 0;	/* dump it again rather than fail */
		for (size_t i = 0; i < c->seencap; i++) {
			size_t j;

			if (!c->seen[i])
				continue;
			for (j = (c->seen[i] * 0x9e3779b97f4a7c15ULL) &
				 (ncap - 1); nv[j]; j = (j + 1) & (ncap - 1))
				;
			nv[j] = c->seen[i];
		}
		free(c->seen);
		c->seen = nv;
		c->seencap = ncap;
	}
	for (size_t i = (k * 0x9e3779b97f4a7c15ULL) & (c->seencap - 1);;
	     i = (i + 1) & (c->seencap - 1)) {
		if (c->seen[i] == k)
			return 1;
		if (!c->seen[i]) {
			c->seen[i] = k;
			c->nseen++;
			return 0;
		}
	}
}

/* ---- reading and rewriting one object ---- */

static int
rd(struct md_ctx *c, uint64_t daddr, uint32_t len, uint8_t *buf)
{
	int err;

	if (len % XK_BBSIZE || daddr >= c->devbb ||
	    (uint64_t)len / XK_BBSIZE > c->devbb - daddr) {
		md_warnf(c, "block at daddr %llu (%u bytes) lies beyond the "
			 "end of the device; skipped",
			 (unsigned long long)daddr, len);
		return -EINVAL;
	}
	err = xk_dev_pread(c->mp->dev, buf, len, daddr << XK_BBSHIFT);
	if (err)
		md_warnf(c, "cannot read daddr %llu: %s; skipped",
			 (unsigned long long)daddr, xk_strerror(err));
	return err;
}

static void
fix(struct md_ctx *c, enum md_kind kind, const struct xk_btree_ops *ops,
    uint8_t *buf, uint32_t len)
{
	switch (kind) {
	case MK_SB:
		md_fix_header(&c->ob, buf, len, sizeof(struct xk_dsb),
			      offsetof(struct xk_dsb, sb_crc));
		break;
	case MK_AGF:
		md_fix_header(&c->ob, buf, len, sizeof(struct xk_agf),
			      offsetof(struct xk_agf, agf_crc));
		break;
	case MK_AGI:
		md_fix_header(&c->ob, buf, len, sizeof(struct xk_agi),
			      offsetof(struct xk_agi, agi_crc));
		break;
	case MK_AGFL:
		md_fix_agfl(&c->ob, buf, len, c->flfirst, c->fllast,
			    c->flcount);
		break;
	case MK_BTREE:
		md_fix_btree(&c->ob, ops, buf, len);
		break;
	case MK_DIR:
		md_fix_dir(&c->ob, buf, len);
		break;
	case MK_ATTR:
		md_fix_attr(&c->ob, buf, len);
		break;
	case MK_SYMLINK:
		md_fix_symlink(&c->ob, buf, len);
		break;
	case MK_RAW:
		break;
	}
}

/* A copy of bytes to rewrite; NULL (c->err set) on no memory. */
static uint8_t *
copy_block(struct md_ctx *c, const uint8_t *data, uint32_t len)
{
	uint8_t *buf = malloc(len);

	if (!buf)
		c->err = -ENOMEM;
	else
		memcpy(buf, data, len);
	return buf;
}

/* Rewrite a copy of bytes already in memory and dump it. */
static void
dump_mem(struct md_ctx *c, uint64_t daddr, const uint8_t *data, uint32_t len,
	 enum md_kind kind, const struct xk_btree_ops *ops)
{
	uint8_t *buf;

	if (seen(c, daddr) || !(buf = copy_block(c, data, len)))
		return;
	fix(c, kind, ops, buf, len);
	emit(c, daddr, buf, len);
	free(buf);
}

static void
dump_disk(struct md_ctx *c, uint64_t daddr, uint32_t len, enum md_kind kind)
{
	uint8_t *buf;

	if (seen(c, daddr))
		return;
	buf = malloc(len);
	if (!buf) {
		c->err = -ENOMEM;
		return;
	}
	if (!rd(c, daddr, len, buf)) {
		fix(c, kind, NULL, buf, len);
		emit(c, daddr, buf, len);
	}
	free(buf);
}

/* n bytes of the external log at daddr of its device, dumped raw. */
static void
dump_extlog_piece(struct md_ctx *c, struct xk_dev *dev, uint64_t daddr,
		  uint32_t n)
{
	uint8_t *buf = malloc(n);
	int err;

	if (!buf) {
		c->err = -ENOMEM;
		return;
	}
	err = xk_dev_pread(dev, buf, n, daddr << XK_BBSHIFT);
	if (err)
		md_warnf(c, "cannot read daddr %llu of the external log: %s; "
			 "skipped", (unsigned long long)daddr,
			 xk_strerror(err));
	else
		emit(c, daddr, buf, n);
	free(buf);
}

/*
 * The log rewritten in memory (metadump_log.c), unless the dump keeps
 * everything (-o -a), the log could not be read, or its head was found
 * behind a torn write (where the kernel may place it otherwise): a clean
 * log emptied as xfs_metadump empties it, a dirty one's stale blocks
 * scrubbed.  NULL: carry it as it is (a message says why, when it is
 * not what the options ask for).
 */
static uint8_t *
log_rewrite(struct md_ctx *c, struct xk_dev *dev, uint64_t start,
	    uint64_t bb)
{
	const struct xk_log_state *s = &c->log;
	uint8_t *buf;
	int err;

	if ((!c->o->obfuscate && !c->o->zero_stale) || !c->log_known ||
	    s->empty || bb != s->size_bb)
		return NULL;
	if (s->torn_blk != XK_LOG_NOBLK) {
		md_warnf(c, "the log's head follows a torn write; the log is "
			 "carried as it is");
		return NULL;
	}
	buf = malloc(bb << XK_BBSHIFT);
	if (!buf) {
		c->err = -ENOMEM;
		return NULL;
	}
	if (!c->st->dirty_log) {
		err = md_log_clear(buf, (uint32_t)bb, c->mp->sb.uuid,
				   c->mp->sb.logsunit, s->head_cycle);
		if (!err) {
			c->st->log_action = MD_LOG_CLEARED;
			return buf;
		}
		md_warnf(c, "the clean log cannot be emptied (cycle %u, "
			 "stripe unit %u); it is carried as it is",
			 s->head_cycle, c->mp->sb.logsunit);
		free(buf);
		return NULL;
	}
	err = dev == c->mp->dev ? rd(c, start, (uint32_t)(bb << XK_BBSHIFT),
				     buf) :
	      xk_dev_pread(dev, buf, bb << XK_BBSHIFT, start << XK_BBSHIFT);
	if (err) {
		free(buf);
		return NULL;
	}
	c->st->log_stale = md_log_scrub_stale(buf, (uint32_t)bb, s->head_blk,
					      s->tail_blk);
	c->st->log_action = MD_LOG_SCRUBBED;
	return buf;
}

/*
 * The log in pieces of at most 1 MiB: bb basic blocks from start on
 * dev, rewritten by log_rewrite() or as they are.  The internal log
 * goes through rd() and seen(); an external one (v2 only) is read from
 * its own device.
 */
static void
dump_log_region(struct md_ctx *c, struct xk_dev *dev, uint64_t start,
		uint64_t bb)
{
	int internal = dev == c->mp->dev;
	uint8_t *buf = log_rewrite(c, dev, start, bb);

	for (uint64_t o = 0; o < bb && !c->err; o += 2048) {
		uint32_t n = (uint32_t)((bb - o < 2048 ? bb - o : 2048) <<
					XK_BBSHIFT);

		if (buf) {
			if (!internal || !seen(c, start + o))
				emit(c, start + o, buf + (o << XK_BBSHIFT), n);
		} else if (internal) {
			dump_disk(c, start + o, n, MK_RAW);
		} else {
			dump_extlog_piece(c, dev, start + o, n);
		}
	}
	free(buf);
}

static void
dump_log(struct md_ctx *c)
{
	struct xk_mount *mp = c->mp;

	if (!xk_fsbext_valid(mp, mp->sb.logstart, mp->sb.logblocks)) {
		md_warnf(c, "the log lies outside the filesystem; it is not "
			 "dumped");
		return;
	}
	dump_log_region(c, mp->dev, xk_fsb_to_daddr(mp, mp->sb.logstart),
			(uint64_t)mp->sb.logblocks << mp->g.blkbb_log);
}

/*
 * The external log, from the start of its device, as device 1 of a v2
 * dump (as xfs_metadump -l does, with the EXTLOG compat flag).
 */
static void
dump_extlog(struct md_ctx *c)
{
	struct xk_mount *mp = c->mp;
	uint64_t bb = (uint64_t)mp->sb.logblocks << mp->g.blkbb_log;

	if (bb > mp->logdev->size >> XK_BBSHIFT) {
		md_warnf(c, "the external log is larger than its device; it "
			 "is not dumped");
		return;
	}
	c->dev_bits = (uint64_t)MD_V2_DEV_LOG << MD_V2_DEV_SHIFT;
	dump_log_region(c, mp->logdev, 0, bb);
	c->dev_bits = 0;
}

static int
log_is_dirty(struct md_ctx *c)
{
	struct xk_log *log = NULL;
	int err, dirty = 1;

	if (!c->mp->sb.logstart && !c->mp->logdev)
		return 0;
	err = xk_log_open(c->mp, &log);
	if (!err) {
		c->log = *xk_log_get_state(log);
		c->log_known = 1;
		dirty = !(c->log.clean || c->log.empty);
	} else {
		md_warnf(c, "the log cannot be read (%s); it is marked dirty",
			 log ? xk_log_errmsg(log) : xk_strerror(err));
	}
	xk_log_close(log);
	return dirty;
}

static void
progress(struct md_ctx *c, uint32_t agno)
{
	if (!c->o->progress)
		return;
	fprintf(stderr, "\rCopied %u of %u allocation groups", agno,
		c->mp->g.agcount);
	fflush(stderr);
}

/*
 * A directory block, rewritten whole, then dumped one filesystem block
 * at a time at the address of each piece (its pieces may lie in
 * different extents).  A block whose first piece was dumped already
 * (cross-linked) is left alone.
 */
static void
dump_dir(struct md_ctx *c, const struct xk_walk_block *b)
{
	uint32_t bs = c->mp->g.blocksize;
	uint8_t *buf;

	if (seen(c, b->pieces[0]) || !(buf = copy_block(c, b->data, b->len)))
		return;
	fix(c, MK_DIR, NULL, buf, b->len);
	for (unsigned int k = 0; k < b->npieces; k++)
		if (!k || !seen(c, b->pieces[k]))
			emit(c, b->pieces[k], buf + (size_t)k * bs, bs);
	free(buf);
}

/* An inode cluster: every inode in it rewritten, free ones included. */
static void
dump_cluster(struct md_ctx *c, const struct xk_walk_block *b)
{
	uint32_t isz = c->mp->g.inodesize;
	uint8_t *buf;

	if (seen(c, b->daddr) || !(buf = copy_block(c, b->data, b->len)))
		return;
	for (uint32_t off = 0; off + isz <= b->len; off += isz)
		md_fix_inode(&c->ob, buf + off, isz);
	emit(c, b->daddr, buf, b->len);
	free(buf);
}

/* What the header a block depends on says about it. */
static void
note_header(struct md_ctx *c, const struct xk_walk_block *b)
{
	int ok = b->bp && !b->bp->error;

	if (b->kind == XK_WALK_AGF) {
		c->agf_ok = ok;
		if (ok) {
			const struct xk_agf *h = xk_buf_agf(b->bp);

			c->flfirst = xk_be32_get(h->agf_flfirst);
			c->fllast = xk_be32_get(h->agf_fllast);
			c->flcount = xk_be32_get(h->agf_flcount);
		} else {
			md_warnf(c, "AG %lld: the AGF fails its checks; its "
				 "free space and reverse-mapping btrees are "
				 "not dumped", (long long)b->agno);
		}
	} else if (b->kind == XK_WALK_AGI && !ok) {
		md_warnf(c, "AG %lld: the AGI fails its checks; its inode "
			 "btrees and inodes are not dumped",
			 (long long)b->agno);
	}
}

/* The walker's visitor: each block rewritten and dumped as it comes. */
static int
md_visit(void *ctx, const struct xk_walk_block *b)
{
	struct md_ctx *c = ctx;

	if (b->kind == XK_WALK_SB)
		progress(c, (uint32_t)b->agno);
	if (b->kind == XK_WALK_AGF || b->kind == XK_WALK_AGI)
		note_header(c, b);
	if (b->kind == XK_WALK_LOG) {
		dump_log(c);
		return c->err;
	}
	if (b->kind == XK_WALK_INODE) {
		if (b->bp)
			c->st->inodes++;
		return 0;
	}
	if (!b->data) {
		/* Memory: the dump would be incomplete, it stops. */
		if (b->err == -ENOMEM)
			c->err = b->err;
		else
			md_warnf(c, "%s at daddr %llu cannot be read: %s; "
				 "skipped", b->type,
				 (unsigned long long)b->daddr,
				 xk_strerror(b->err));
		return c->err;
	}
	/* Names are kept distinct within one fork. */
	if (b->kind >= XK_WALK_DIR && b->kind <= XK_WALK_RTMETA &&
	    (b->owner != c->fork_owner || b->kind != c->fork_kind)) {
		md_nameset_reset(&c->ob.names);
		c->fork_owner = b->owner;
		c->fork_kind = b->kind;
	}
	switch (b->kind) {
	case XK_WALK_SB:
		dump_mem(c, b->daddr, b->data, b->len, MK_SB, NULL);
		break;
	case XK_WALK_AGF:
		dump_mem(c, b->daddr, b->data, b->len, MK_AGF, NULL);
		break;
	case XK_WALK_AGI:
		dump_mem(c, b->daddr, b->data, b->len, MK_AGI, NULL);
		break;
	case XK_WALK_AGFL:
		dump_mem(c, b->daddr, b->data, b->len,
			 c->agf_ok ? MK_AGFL : MK_RAW, NULL);
		break;
	case XK_WALK_BTREE:
		dump_mem(c, b->daddr, b->data, b->len, MK_BTREE, b->ops);
		break;
	case XK_WALK_ICLUSTER:
		dump_cluster(c, b);
		break;
	case XK_WALK_DIR:
		if (b->err)	/* a piece of a block with a hole: raw */
			dump_mem(c, b->daddr, b->data, b->len, MK_RAW, NULL);
		else
			dump_dir(c, b);
		break;
	case XK_WALK_ATTR:
		dump_mem(c, b->daddr, b->data, b->len, MK_ATTR, NULL);
		break;
	case XK_WALK_SYMLINK:
		dump_mem(c, b->daddr, b->data, b->len, MK_SYMLINK, NULL);
		break;
	default:
		dump_mem(c, b->daddr, b->data, b->len, MK_RAW, NULL);
		break;
	}
	return c->err;
}

/* Damage the walker met: what could be reached of it is dumped. */
static void
md_fail(void *ctx, const struct xk_fail *f)
{
	char line[400];

	xk_fail_format(f, line, sizeof(line));
	md_warnf(ctx, "%s; what can be read is dumped", line);
}

int
md_dump(struct xk_mount *mp, FILE *out, const struct md_opts *o,
	md_warn_fn warn, void *priv, struct md_stats *st)
{
	struct xk_walk w = {
		.flags = XK_WALK_DEPTH_FIRST | XK_WALK_CLUSTERS |
			 XK_WALK_QUOTA | XK_WALK_RT | XK_WALK_LOG_EXTENT,
		.visit = md_visit, .fail = md_fail,
	};
	struct md_ctx *c;
	uint64_t cache;
	int err;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	memset(st, 0, sizeof(*st));
	c->mp = mp;
	c->out = out;
	c->o = o;
	c->warn = warn;
	c->priv = priv;
	c->st = st;
	c->devbb = mp->dev->size >> XK_BBSHIFT;
	if (c->devbb > (mp->g.dblocks << mp->g.blkbb_log))
		c->devbb = mp->g.dblocks << mp->g.blkbb_log;
	c->ob.mp = mp;
	c->ob.obfuscate = o->obfuscate;
	c->ob.zero_stale = o->zero_stale;
	c->ob.rng.s = o->seed ? o->seed :
		      ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
	c->ob.rng.s = c->ob.rng.s * 0x9e3779b97f4a7c15ULL + 1;
	c->data = malloc((size_t)MD_V1_MAX_INDICES * MD_V1_BLOCKSIZE);
	if (!c->data) {
		free(c);
		return -ENOMEM;
	}
	c->fork_owner = XK_NO_DADDR;
	w.ctx = c;
	st->dirty_log = log_is_dirty(c);
	c->info = MD_V1_INFO_FLAGS;
	if (o->obfuscate)
		c->info |= MD_V1_OBFUSCATED;
	if (!o->zero_stale)
		c->info |= MD_V1_FULLBLOCKS;
	if (st->dirty_log)
		c->info |= MD_V1_DIRTYLOG;
	if (o->version == 2) {
		uint8_t h[MD_V2_HDR_SIZE] = { 0 };
		uint32_t compat = 0;

		if (o->obfuscate)
			compat |= MD_V2_COMPAT_OBFUSCATED;
		if (!o->zero_stale)
			compat |= MD_V2_COMPAT_FULLBLOCKS;
		if (st->dirty_log)
			compat |= MD_V2_COMPAT_DIRTYLOG;
		if (!mp->sb.logstart && mp->logdev)
			compat |= MD_V2_COMPAT_EXTLOG;
		xk_put_be32(h, MD_MAGIC_V2);
		xk_put_be32(h + 4, 2);
		xk_put_be32(h + 8, compat);
		out_write(c, h, sizeof(h));
	}
	/* The primary superblock comes first: restore sizes the image by it. */
	/*
	 * Every block is read once and written out: a small cache saves
	 * the memory (and its page faults) of keeping them.  Damage
	 * (XK_ECORRUPT) was reported through md_fail: a warning.
	 */
	cache = xk_mount_set_cache_limit(mp, MD_CACHE_BYTES);
	err = xk_walk_metadata(mp, 0, mp->g.agcount - 1, &w);
	xk_mount_set_cache_limit(mp, cache);
	if (err && err != XK_ECORRUPT && !c->err)
		c->err = err;
	progress(c, mp->g.agcount);
	if (o->progress)
		fputc('\n', stderr);
	if (!c->err && !mp->sb.logstart && mp->logdev && o->version == 2)
		dump_extlog(c);
	else if (!c->err && !mp->sb.logstart)
		md_warnf(c, "the log is external; it is not dumped (%s)",
			 mp->logdev ? "a v1 dump cannot carry it: use -v 2" :
			 "its device was not given: use -l");
	if (o->version != 2)
		v1_flush(c);	/* a short (maybe empty) chunk ends v1 */
	if (!c->err && fflush(out))
		c->err = -EIO;
	st->names = c->ob.nobf;
	st->names_kept = c->ob.nkept;
	err = c->err;
	md_nameset_free(&c->ob.names);
	free(c->seen);
	free(c->data);
	free(c);
	return err;
}
