// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * metadump: copy every metadata block of a filesystem into a file that
 * xfs_mdrestore (v1) or xfskit-mdrestore (v1 and v2) turns back into a
 * sparse image with the same metadata -- superblocks and AG headers of
 * every AG, every btree block, every inode cluster, the bmbt, directory,
 * attribute and remote symlink blocks of every inode, quota and realtime
 * metadata inodes' blocks, and the log as it is (a dirty log stays
 * dirty).  File data is never copied.
 *
 * The walk trusts nothing: each btree goes through the libfs walker
 * (which refuses loops and bad levels), every extent is range-checked,
 * an inode is followed only when its verifier passes, and anything that
 * cannot be read is skipped with a warning while the rest is dumped.
 * Each object is rewritten in memory by metadump_obf.c before it is
 * written out, and each disk address is dumped once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xfskit/format/dir.h>
#include <xfskit/fork.h>
#include <xfskit/logv.h>

#include "metadump.h"

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
	uint32_t	log_rec_blk;	/* clean log: its unmount record */
	/* the AGFL's live range, from this AG's AGF */
	uint32_t	flfirst, fllast, flcount;
};

struct md_ext {
	uint64_t	off, fsb, len;
};

struct md_extlist {
	struct md_ext	*v;
	size_t		n, cap;
};

/* What a walker callback needs. */
struct md_walk {
	struct md_ctx	*c;
	const struct xk_btree_ops *ops;
	uint32_t	agno;		/* inobt: the AG */
	unsigned int	problems;
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

		xk_put_be64(eh, daddr & MD_V2_DADDR_MASK);
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

/* Rewrite a copy of bytes already in memory and dump it. */
static void
dump_mem(struct md_ctx *c, uint64_t daddr, const uint8_t *data, uint32_t len,
	 enum md_kind kind, const struct xk_btree_ops *ops)
{
	uint8_t *buf;

	if (seen(c, daddr))
		return;
	buf = malloc(len);
	if (!buf) {
		c->err = -ENOMEM;
		return;
	}
	memcpy(buf, data, len);
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

/* ---- btrees ---- */

static int
walk_block(void *ctx, unsigned int level, uint64_t bno, struct xk_buf *bp)
{
	struct md_walk *w = ctx;

	(void)level;
	(void)bno;
	if (bp && bp->data)
		dump_mem(w->c, bp->daddr, bp->data, bp->len, MK_BTREE, w->ops);
	return w->c->err;
}

static void
walk_fail(void *ctx, const struct xk_fail *f)
{
	struct md_walk *w = ctx;

	(void)f;
	w->problems++;
}

static void
walk_tree(struct md_ctx *c, const struct xk_btree_ops *ops, int64_t agno,
	  uint64_t owner, uint64_t root, unsigned int levels,
	  const void *iroot, unsigned int isize,
	  int (*rec_fn)(void *, const void *), struct md_walk *mw)
{
	struct xk_btree_walk w;
	int err;

	memset(&w, 0, sizeof(w));
	mw->c = c;
	mw->ops = ops;
	mw->problems = 0;
	w.ops = ops;
	w.agno = agno;
	w.owner = owner;
	w.root = root;
	w.levels = levels;
	w.iroot = iroot;
	w.iroot_size = isize;
	w.flags = XK_READ_SALVAGE;
	w.ctx = mw;
	w.rec_fn = rec_fn;
	w.block_fn = walk_block;
	w.fail_fn = walk_fail;
	err = xk_btree_walk(c->mp, &w);
	if (mw->problems || (err && err != XK_ECORRUPT && !c->err)) {
		if (agno >= 0)
			md_warnf(c, "the %s of AG %lld is damaged; dumped "
				 "the %llu blocks that could be reached",
				 ops->name, (long long)agno,
				 (unsigned long long)w.nblocks);
		else
			md_warnf(c, "the %s of inode %llu is damaged; dumped "
				 "the %llu blocks that could be reached",
				 ops->name, (unsigned long long)owner,
				 (unsigned long long)w.nblocks);
	}
}

/* ---- inode forks ---- */

static int
ext_cmp(const void *a, const void *b)
{
	const struct md_ext *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Drop extents outside the filesystem, then sort by file offset. */
static void
clean_extents(struct md_ctx *c, uint64_t ino, struct md_extlist *l)
{
	size_t k = 0;

	for (size_t i = 0; i < l->n; i++) {
		if (!l->v[i].len ||
		    !xk_fsbext_valid(c->mp, l->v[i].fsb, l->v[i].len)) {
			md_warnf(c, "inode %llu: extent at file block %llu "
				 "is out of range; skipped",
				 (unsigned long long)ino,
				 (unsigned long long)l->v[i].off);
			continue;
		}
		l->v[k++] = l->v[i];
	}
	l->n = k;
	qsort(l->v, l->n, sizeof(*l->v), ext_cmp);
}

/* Every filesystem block of the extents, one object each. */
static void
dump_fork_blocks(struct md_ctx *c, const struct md_extlist *l,
		 enum md_kind kind)
{
	struct xk_mount *mp = c->mp;

	for (size_t i = 0; i < l->n && !c->err; i++)
		for (uint64_t b = 0; b < l->v[i].len && !c->err; b++)
			dump_disk(c, xk_fsb_to_daddr(mp, l->v[i].fsb + b),
				  mp->g.blocksize, kind);
}

static int
map_off(const struct md_extlist *l, uint64_t off, uint64_t *fsb)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct md_ext *e = &l->v[mid];

		if (off < e->off)
			hi = mid;
		else if (off >= e->off + e->len)
			lo = mid + 1;
		else {
			*fsb = e->fsb + (off - e->off);
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * Directory blocks are dirblksize long and may span extents: gather the
 * pieces of each one, rewrite the whole block, then dump every piece at
 * its own address.  A block with a hole in it is dumped raw.
 */
static void
dump_dir_blocks(struct md_ctx *c, const struct md_extlist *l)
{
	struct xk_mount *mp = c->mp;
	uint32_t dbf = mp->g.dirblksize >> mp->g.blocklog, bs = mp->g.blocksize;
	uint64_t fsbs[64];
	uint8_t *buf;

	if (!dbf || dbf > 64)
		return;
	buf = malloc(mp->g.dirblksize);
	if (!buf) {
		c->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < l->n && !c->err; i++) {
		const struct md_ext *e = &l->v[i];

		for (uint64_t off = e->off; off < e->off + e->len; off++) {
			uint64_t start = off - off % dbf;
			uint32_t k;
			int whole = 1;

			if (start != off && start >= e->off)
				continue;	/* inside a block done */
			if (start < e->off && i > 0 &&
			    !map_off(l, start, &fsbs[0]))
				continue;	/* done with its first part */
			for (k = 0; k < dbf; k++)
				if (map_off(l, start + k, &fsbs[k]))
					whole = 0;
			if (!whole || seen(c, xk_fsb_to_daddr(mp, fsbs[0]))) {
				for (k = 0; k < dbf && !whole; k++)
					if (!map_off(l, start + k, &fsbs[k]))
						dump_disk(c, xk_fsb_to_daddr(mp,
							  fsbs[k]), bs, MK_RAW);
				continue;
			}
			for (k = 0; k < dbf; k++)
				if (rd(c, xk_fsb_to_daddr(mp, fsbs[k]), bs,
				       buf + (size_t)k * bs))
					break;
			if (k < dbf)
				continue;
			fix(c, MK_DIR, NULL, buf, mp->g.dirblksize);
			for (k = 0; k < dbf; k++) {
				uint64_t d = xk_fsb_to_daddr(mp, fsbs[k]);

				if (k && seen(c, d))
					continue;
				emit(c, d, buf + (size_t)k * bs, bs);
			}
		}
	}
	free(buf);
}

static int
is_meta_inode(const struct xk_mount *mp, uint64_t ino)
{
	const struct xk_sb *sb = &mp->sb;

	return ino == sb->uquotino || ino == sb->gquotino ||
	       ino == sb->pquotino || ino == sb->rbmino ||
	       ino == sb->rsumino;
}

/*
 * A fork's bmbt blocks, as the fork reader met them, each read again
 * (from the cache) and dumped.
 */
static void
dump_bmbt_blocks(struct md_ctx *c, uint64_t ino,
		 const struct xk_fork_map *map)
{
	struct xk_mount *mp = c->mp;

	for (uint64_t i = 0; i < map->nblk && !c->err; i++) {
		struct xk_buf *bp;
		int err = xk_buf_read_ctx(mp, xk_fsb_to_daddr(mp,
					  map->blk[i].fsb), mp->g.blocksize,
					  xk_bmbt_ops.buf_ops, -1, ino,
					  XK_READ_SALVAGE, &bp);

		/* Memory or I/O: the dump would be incomplete, it stops. */
		if (!bp) {
			if (xk_err_operational(err))
				c->err = err;
			continue;
		}
		if (bp->data)
			dump_mem(c, bp->daddr, bp->data, bp->len, MK_BTREE,
				 &xk_bmbt_ops);
		xk_buf_release(bp);
	}
}

/* One fork: its bmbt blocks, then the blocks it maps, by kind. */
static void
dump_fork(struct md_ctx *c, uint64_t ino, const struct xk_dinode *dip,
	  int whichfork, int kind)
{
	unsigned int fsize = xk_dfork_size(dip, c->mp->g.inodesize, whichfork);
	int fmt = xk_dfork_format(dip, whichfork);
	struct xk_fork_map map = { 0 };
	struct md_extlist l = { NULL, 0, 0 };
	int err;

	if (fmt != XK_DINODE_FMT_BTREE &&
	    (fmt != XK_DINODE_FMT_EXTENTS || kind < 0))
		return;
	if (fmt == XK_DINODE_FMT_BTREE &&
	    fsize < sizeof(struct xk_bmdr_block)) {
		md_warnf(c, "inode %llu: bmbt root does not fit its fork; "
			 "skipped", (unsigned long long)ino);
		return;
	}
	/* What can be read of a damaged fork is dumped all the same. */
	err = xk_fork_read(c->mp, ino, dip, whichfork, XK_FORK_SALVAGE |
			   XK_FORK_BLOCKS, &map);
	if (err && err != XK_ECORRUPT) {
		if (!c->err)
			c->err = err;
		goto out;
	}
	dump_bmbt_blocks(c, ino, &map);
	if (map.partial && fmt == XK_DINODE_FMT_BTREE)
		md_warnf(c, "the %s of inode %llu is damaged; dumped the %llu "
			 "blocks that could be reached", xk_bmbt_ops.name,
			 (unsigned long long)ino,
			 (unsigned long long)map.nblk);
	if (kind < 0 || !map.next || c->err)
		goto out;
	l.v = malloc(map.next * sizeof(*l.v));
	if (!l.v) {
		c->err = -ENOMEM;
		goto out;
	}
	for (uint64_t i = 0; i < map.next; i++)
		l.v[l.n++] = (struct md_ext){ map.ext[i].startoff,
					      map.ext[i].startblock,
					      map.ext[i].blockcount };
	clean_extents(c, ino, &l);
	md_nameset_reset(&c->ob.names);
	if (kind == MK_DIR)
		dump_dir_blocks(c, &l);
	else
		dump_fork_blocks(c, &l, (enum md_kind)kind);
out:
	free(l.v);
	xk_fork_map_free(&map);
}

/*
 * An inode's forks are followed when its verifier passes, or when only
 * its CRC is wrong: a copy with a fresh CRC must then pass the
 * structure checks, so the fork walk never meets impossible sizes.
 */
static int
inode_followable(struct md_ctx *c, uint64_t ino, const struct xk_dinode *dip)
{
	uint32_t isz = c->mp->g.inodesize;
	struct xk_fail f;
	uint8_t *copy;
	int err;

	memset(&f, 0, sizeof(f));
	f.structure = "inode";
	f.daddr = XK_NO_DADDR;
	f.agno = -1;
	f.ino = ino;
	err = xk_dinode_verify(c->mp, ino, dip, &f);
	if (err == XK_EBADCRC) {
		copy = malloc(isz);
		if (!copy)
			return 0;
		memcpy(copy, dip, isz);
		xk_cksum_update(copy, isz, XK_DINODE_CRC_OFF);
		err = xk_dinode_verify(c->mp, ino,
				       (const struct xk_dinode *)copy, &f);
		free(copy);
		if (!err)
			md_warnf(c, "inode %llu has a bad CRC; its blocks "
				 "are dumped all the same",
				 (unsigned long long)ino);
	}
	if (err) {
		char line[400];

		xk_fail_format(&f, line, sizeof(line));
		md_warnf(c, "inode %llu fails its checks (%s); its blocks "
			 "are not followed", (unsigned long long)ino, line);
		return 0;
	}
	return 1;
}

static void
dump_inode_forks(struct md_ctx *c, uint64_t ino, const struct xk_dinode *dip)
{
	uint16_t mode;
	int kind = -1;

	c->st->inodes++;
	if (!inode_followable(c, ino, dip))
		return;
	mode = xk_be16_get(dip->di_mode) & XK_S_IFMT;
	if (mode == XK_S_IFDIR)
		kind = MK_DIR;
	else if (mode == XK_S_IFLNK)
		kind = MK_SYMLINK;
	else if (is_meta_inode(c->mp, ino))
		kind = MK_RAW;
	dump_fork(c, ino, dip, XK_DATA_FORK, kind);
	if (dip->di_forkoff)
		dump_fork(c, ino, dip, XK_ATTR_FORK, MK_ATTR);
}

/* ---- inode chunks ---- */

/*
 * One inobt record: the clusters holding its 64 inodes (sparse holes
 * skipped), each rewritten and dumped once, then the forks of every
 * inode the record says is in use, read from an unmodified copy.  With
 * more than 64 inodes per block (64 KiB blocks) two records share a
 * block: off0 is where this record's inodes start in it.
 */
static void
dump_chunk(struct md_ctx *c, uint32_t agno, uint32_t startino,
	   uint64_t freemask, uint16_t holes)
{
	struct xk_mount *mp = c->mp;
	uint32_t isz = mp->g.inodesize, ipb = mp->g.inopblock;
	uint32_t nblk, cs, first, off0, align;
	uint8_t *mod, *orig;

	nblk = 64u >> mp->g.inopblog;
	if (!nblk)
		nblk = 1;
	cs = mp->g.cluster_blks < nblk ? mp->g.cluster_blks : nblk;
	if (!cs)
		cs = 1;
	first = xk_agino_to_agbno(mp, startino);
	off0 = startino % ipb;
	align = ipb < 64 ? ipb : 64;
	if (startino % align || !xk_agbext_valid(mp, agno, first, nblk)) {
		md_warnf(c, "AG %u: inode chunk at agino %u is out of range; "
			 "skipped", agno, startino);
		return;
	}
	mod = malloc((size_t)cs << mp->g.blocklog);
	orig = malloc((size_t)cs << mp->g.blocklog);
	if (!mod || !orig) {
		c->err = -ENOMEM;
		goto out;
	}
	for (uint32_t b = 0; b < nblk && !c->err; b += cs) {
		/* record indexes [lo, hi) live in this cluster */
		uint32_t lo = b * ipb >= off0 ? b * ipb - off0 : 0;
		uint32_t hi = (b + cs) * ipb - off0, n = cs * ipb, k;
		uint64_t daddr = xk_agb_to_daddr(mp, agno, first + b);
		int any = 0;

		if (hi > 64)
			hi = 64;
		for (k = lo; k < hi; k++)
			if (!((holes >> (k / 4)) & 1))
				any = 1;
		if (!any)
			continue;
		if (rd(c, daddr, cs << mp->g.blocklog, orig))
			continue;
		if (!seen(c, daddr)) {
			memcpy(mod, orig, (size_t)cs << mp->g.blocklog);
			for (k = 0; k < n; k++)
				md_fix_inode(&c->ob, mod + (size_t)k * isz,
					     isz);
			emit(c, daddr, mod, cs << mp->g.blocklog);
		}
		for (k = lo; k < hi && !c->err; k++) {
			const uint8_t *ip = orig +
				(size_t)(k + off0 - b * ipb) * isz;

			if (((holes >> (k / 4)) & 1) || ((freemask >> k) & 1))
				continue;
			dump_inode_forks(c, xk_agino_to_ino(mp, agno,
					 startino + k),
					 (const struct xk_dinode *)ip);
		}
	}
out:
	free(mod);
	free(orig);
}

static int
inobt_rec(void *ctx, const void *rec)
{
	struct md_walk *w = ctx;
	const struct xk_inobt_rec *r = rec;
	struct xk_mount *mp = w->c->mp;

	dump_chunk(w->c, w->agno, xk_be32_get(r->ir_startino),
		   xk_be64_get(r->ir_free), mp->g.has_sparse ?
		   xk_be16_get(r->ir_u.sp.ir_holemask) : 0);
	return w->c->err;
}

/* ---- per AG ---- */

static void
dump_ag(struct md_ctx *c, uint32_t agno)
{
	struct xk_mount *mp = c->mp;
	uint32_t sect = mp->g.sectsize;
	struct xk_buf *agf = NULL, *agi = NULL;
	struct md_walk w = { .c = c, .agno = agno };

	dump_disk(c, xk_ag_hdr_daddr(mp, agno, XK_SB_SECTOR), sect, MK_SB);
	dump_disk(c, xk_ag_hdr_daddr(mp, agno, XK_AGF_SECTOR), sect, MK_AGF);
	dump_disk(c, xk_ag_hdr_daddr(mp, agno, XK_AGI_SECTOR), sect, MK_AGI);
	if (xk_agf_read(mp, agno, 0, &agf)) {
		md_warnf(c, "AG %u: the AGF fails its checks; its free space "
			 "and reverse-mapping btrees are not dumped", agno);
		dump_disk(c, xk_ag_hdr_daddr(mp, agno, XK_AGFL_SECTOR), sect,
			  MK_RAW);
	} else {
		const struct xk_agf *h = xk_buf_agf(agf);

		c->flfirst = xk_be32_get(h->agf_flfirst);
		c->fllast = xk_be32_get(h->agf_fllast);
		c->flcount = xk_be32_get(h->agf_flcount);
		dump_disk(c, xk_ag_hdr_daddr(mp, agno, XK_AGFL_SECTOR), sect,
			  MK_AGFL);

		walk_tree(c, &xk_bnobt_ops, agno, 0,
			  xk_be32_get(h->agf_roots[XK_AGF_BNO]),
			  xk_be32_get(h->agf_levels[XK_AGF_BNO]), NULL, 0,
			  NULL, &w);
		walk_tree(c, &xk_cntbt_ops, agno, 0,
			  xk_be32_get(h->agf_roots[XK_AGF_CNT]),
			  xk_be32_get(h->agf_levels[XK_AGF_CNT]), NULL, 0,
			  NULL, &w);
		if (mp->g.has_rmapbt)
			walk_tree(c, &xk_rmapbt_ops, agno, 0,
				  xk_be32_get(h->agf_roots[XK_AGF_RMAP]),
				  xk_be32_get(h->agf_levels[XK_AGF_RMAP]),
				  NULL, 0, NULL, &w);
		if (mp->g.has_reflink)
			walk_tree(c, &xk_refcountbt_ops, agno, 0,
				  xk_be32_get(h->agf_refcount_root),
				  xk_be32_get(h->agf_refcount_level), NULL, 0,
				  NULL, &w);
	}
	if (xk_agi_read(mp, agno, 0, &agi)) {
		md_warnf(c, "AG %u: the AGI fails its checks; its inode "
			 "btrees and inodes are not dumped", agno);
	} else {
		const struct xk_agi *h = xk_buf_agi(agi);

		if (mp->g.has_finobt)
			walk_tree(c, &xk_finobt_ops, agno, 0,
				  xk_be32_get(h->agi_free_root),
				  xk_be32_get(h->agi_free_level), NULL, 0,
				  NULL, &w);
		w.agno = agno;
		walk_tree(c, &xk_inobt_ops, agno, 0, xk_be32_get(h->agi_root),
			  xk_be32_get(h->agi_level), NULL, 0, inobt_rec, &w);
	}
	xk_buf_release(agf);
	xk_buf_release(agi);
}

/*
 * The internal log in pieces of at most 1 MiB: as it is, except that a
 * clean log is replaced by an empty one when obfuscating (its last
 * checkpoints hold names; see metadump_log.c).
 */
static void
dump_log(struct md_ctx *c)
{
	struct xk_mount *mp = c->mp;
	uint64_t start, bb;
	uint8_t *buf = NULL;

	if (!mp->sb.logstart) {
		md_warnf(c, "the log is external; it is not dumped");
		return;
	}
	if (!xk_fsbext_valid(mp, mp->sb.logstart, mp->sb.logblocks)) {
		md_warnf(c, "the log lies outside the filesystem; it is not "
			 "dumped");
		return;
	}
	start = xk_fsb_to_daddr(mp, mp->sb.logstart);
	bb = (uint64_t)mp->sb.logblocks << mp->g.blkbb_log;
	if (c->o->obfuscate && !c->st->dirty_log &&
	    c->log_rec_blk != XK_LOG_NOBLK && bb <= UINT32_MAX) {
		buf = malloc(bb << XK_BBSHIFT);
		if (!buf || rd(c, start, (uint32_t)(bb << XK_BBSHIFT), buf) ||
		    md_log_scrub(buf, (uint32_t)bb, c->log_rec_blk)) {
			md_warnf(c, "the clean log could not be emptied; it "
				 "is carried as it is, names included");
			free(buf);
			buf = NULL;
		}
	}
	for (uint64_t o = 0; o < bb && !c->err; o += 2048) {
		uint32_t n = (uint32_t)((bb - o < 2048 ? bb - o : 2048) <<
					XK_BBSHIFT);

		if (!buf)
			dump_disk(c, start + o, n, MK_RAW);
		else if (!seen(c, start + o))
			emit(c, start + o, buf + (o << XK_BBSHIFT), n);
	}
	free(buf);
}

static int
log_is_dirty(struct md_ctx *c)
{
	struct xk_log *log = NULL;
	int err, dirty = 1;

	if (!c->mp->sb.logstart)
		return 0;
	err = xk_log_open(c->mp, &log);
	if (!err) {
		const struct xk_log_state *s = xk_log_get_state(log);

		dirty = !(s->clean || s->empty);
		if (s->clean && !s->empty)
			c->log_rec_blk = s->last_rec_blk;
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

int
md_dump(struct xk_mount *mp, FILE *out, const struct md_opts *o,
	md_warn_fn warn, void *priv, struct md_stats *st)
{
	struct md_ctx *c;
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
	c->log_rec_blk = XK_LOG_NOBLK;
	st->dirty_log = log_is_dirty(c);
	if (st->dirty_log && o->obfuscate)
		md_warnf(c, "the log is dirty: the dump carries it as it is, "
			 "with names in it not obfuscated");
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
		xk_put_be32(h, MD_MAGIC_V2);
		xk_put_be32(h + 4, 2);
		xk_put_be32(h + 8, compat);
		out_write(c, h, sizeof(h));
	}
	/* The primary superblock comes first: restore sizes the image by it. */
	for (uint32_t ag = 0; ag < mp->g.agcount && !c->err; ag++) {
		progress(c, ag);
		dump_ag(c, ag);
	}
	progress(c, mp->g.agcount);
	if (o->progress)
		fputc('\n', stderr);
	if (!c->err)
		dump_log(c);
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
