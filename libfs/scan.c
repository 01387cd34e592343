// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The device scan (scan.h): AGs are handed out to worker threads, each
 * reads its AG in large aligned reads and looks at every block start (and
 * each of an AG's first four sectors, where the sector-sized headers
 * live).  A v5 magic makes the block a candidate; a table says where each
 * type keeps its UUID, self address and owner, and the verifier the rest
 * of libfs reads the type with judges its structure.  Inode clusters are
 * judged whole, every inode in them by its own number.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/libfs.h>
#include <xfskit/scan.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dinode.h>
#include <xfskit/format/dir.h>
#include <xfskit/format/symlink.h>

#define SCAN_READ_SIZE		(4u << 20)
#define SCAN_MAX_THREADS	64
#define SCAN_BUF_ALIGN		4096

enum kind_len { LEN_SECTOR, LEN_BLOCK, LEN_DIRBLK, LEN_DA_NODE };

/*
 * Where one type describes itself.  magic_len 4: a 32-bit magic at byte
 * 0; 2: a 16-bit magic at byte 8 (dabtree block info, whose pad after
 * it must be zero).  blkno_off 0: the type has no address field (AG
 * headers: their AG number and sector say where they belong instead).
 */
struct kind {
	uint8_t		type;
	uint8_t		magic_len;
	uint32_t	magic;
	uint16_t	uuid_off;
	uint16_t	blkno_off;
	uint16_t	owner_off;	/* AG headers: the seqno */
	uint8_t		owner_len;	/* 4 or 8; 0: no owner field */
	uint8_t		len;		/* enum kind_len */
	int8_t		btnum;		/* per-AG btree, or -1 */
	int8_t		sector;		/* AG header sector, or -1 */
	const struct xk_buf_ops *ops;	/* NULL: the btree's */
};

#define DA3(f)	offsetof(struct xk_da3_blkinfo, f)
#define DIR3(f)	offsetof(struct xk_dir3_blk_hdr, f)
#define RMT(f)	offsetof(struct xk_attr3_rmt_hdr, f)
#define SYM(f)	offsetof(struct xk_dsymlink_hdr, f)
#define SBLK(f)	offsetof(struct xk_btree_sblock, f)
#define LBLK(f)	offsetof(struct xk_btree_lblock, f)
#define SHORT_BT(t, m, bt) \
	{ t, 4, m, SBLK(bb_uuid), SBLK(bb_blkno), SBLK(bb_owner), 4, \
	  LEN_BLOCK, bt, -1, NULL }

static const struct kind kinds[] = {
	{ XK_SCAN_SB, 4, XK_SB_MAGIC, offsetof(struct xk_dsb, sb_uuid), 0, 0,
	  0, LEN_SECTOR, -1, XK_SB_SECTOR, &xk_sb_buf_ops },
	{ XK_SCAN_AGF, 4, XK_AGF_MAGIC, offsetof(struct xk_agf, agf_uuid), 0,
	  offsetof(struct xk_agf, agf_seqno), 4, LEN_SECTOR, -1,
	  XK_AGF_SECTOR, &xk_agf_buf_ops },
	{ XK_SCAN_AGI, 4, XK_AGI_MAGIC, offsetof(struct xk_agi, agi_uuid), 0,
	  offsetof(struct xk_agi, agi_seqno), 4, LEN_SECTOR, -1,
	  XK_AGI_SECTOR, &xk_agi_buf_ops },
	{ XK_SCAN_AGFL, 4, XK_AGFL_MAGIC, offsetof(struct xk_agfl, agfl_uuid),
	  0, offsetof(struct xk_agfl, agfl_seqno), 4, LEN_SECTOR, -1,
	  XK_AGFL_SECTOR, &xk_agfl_buf_ops },
	SHORT_BT(XK_SCAN_BNOBT, XK_ABTB_CRC_MAGIC, XK_BT_BNO),
	SHORT_BT(XK_SCAN_CNTBT, XK_ABTC_CRC_MAGIC, XK_BT_CNT),
	SHORT_BT(XK_SCAN_INOBT, XK_IBT_CRC_MAGIC, XK_BT_INO),
	SHORT_BT(XK_SCAN_FINOBT, XK_FIBT_CRC_MAGIC, XK_BT_FINO),
	SHORT_BT(XK_SCAN_RMAPBT, XK_RMAP_CRC_MAGIC, XK_BT_RMAP),
	SHORT_BT(XK_SCAN_REFCBT, XK_REFC_CRC_MAGIC, XK_BT_REFC),
#define LONG_BT(t, m, bt) \
	{ t, 4, m, LBLK(bb_uuid), LBLK(bb_blkno), LBLK(bb_owner), 8, \
	  LEN_BLOCK, bt, -1, NULL }
	LONG_BT(XK_SCAN_BMBT, XK_BMAP_CRC_MAGIC, XK_BT_BMAP),
	LONG_BT(XK_SCAN_RTRMAPBT, XK_RTRMAP_CRC_MAGIC, XK_BT_RTRMAP),
	LONG_BT(XK_SCAN_RTREFCBT, XK_RTREFC_CRC_MAGIC, XK_BT_RTREFC),
	{ XK_SCAN_DIR3_BLOCK, 4, XK_DIR3_BLOCK_MAGIC, DIR3(uuid), DIR3(blkno),
	  DIR3(owner), 8, LEN_DIRBLK, -1, -1, &xk_dir3_block_buf_ops },
	{ XK_SCAN_DIR3_DATA, 4, XK_DIR3_DATA_MAGIC, DIR3(uuid), DIR3(blkno),
	  DIR3(owner), 8, LEN_DIRBLK, -1, -1, &xk_dir3_data_buf_ops },
	{ XK_SCAN_DIR3_LEAF1, 2, XK_DIR3_LEAF1_MAGIC, DA3(uuid), DA3(blkno),
	  DA3(owner), 8, LEN_DIRBLK, -1, -1, &xk_dir3_leaf1_buf_ops },
	{ XK_SCAN_DIR3_LEAFN, 2, XK_DIR3_LEAFN_MAGIC, DA3(uuid), DA3(blkno),
	  DA3(owner), 8, LEN_DIRBLK, -1, -1, &xk_dir3_leafn_buf_ops },
	{ XK_SCAN_DIR3_FREE, 4, XK_DIR3_FREE_MAGIC, DIR3(uuid), DIR3(blkno),
	  DIR3(owner), 8, LEN_DIRBLK, -1, -1, &xk_dir3_free_buf_ops },
	{ XK_SCAN_DA3_NODE, 2, XK_DA3_NODE_MAGIC, DA3(uuid), DA3(blkno),
	  DA3(owner), 8, LEN_DA_NODE, -1, -1, &xk_da3_node_buf_ops },
	{ XK_SCAN_ATTR3_LEAF, 2, XK_ATTR3_LEAF_MAGIC, DA3(uuid), DA3(blkno),
	  DA3(owner), 8, LEN_BLOCK, -1, -1, &xk_attr3_leaf_buf_ops },
	{ XK_SCAN_ATTR3_RMT, 4, XK_ATTR3_RMT_MAGIC, RMT(rm_uuid), RMT(rm_blkno),
	  RMT(rm_owner), 8, LEN_BLOCK, -1, -1, &xk_attr3_rmt_buf_ops },
	{ XK_SCAN_SYMLINK, 4, XK_SYMLINK_MAGIC, SYM(sl_uuid), SYM(sl_blkno),
	  SYM(sl_owner), 8, LEN_BLOCK, -1, -1, &xk_symlink_buf_ops },
};

static const char *const type_names[XK_SCAN_TYPE_NR] = {
	[XK_SCAN_SB] = "sb",
	[XK_SCAN_AGF] = "agf",
	[XK_SCAN_AGI] = "agi",
	[XK_SCAN_AGFL] = "agfl",
	[XK_SCAN_BNOBT] = "bnobt",
	[XK_SCAN_CNTBT] = "cntbt",
	[XK_SCAN_INOBT] = "inobt",
	[XK_SCAN_FINOBT] = "finobt",
	[XK_SCAN_RMAPBT] = "rmapbt",
	[XK_SCAN_REFCBT] = "refcntbt",
	[XK_SCAN_INODES] = "inodes",
	[XK_SCAN_BMBT] = "bmbt",
	[XK_SCAN_DIR3_BLOCK] = "dir3-block",
	[XK_SCAN_DIR3_DATA] = "dir3-data",
	[XK_SCAN_DIR3_LEAF1] = "dir3-leaf1",
	[XK_SCAN_DIR3_LEAFN] = "dir3-leafn",
	[XK_SCAN_DIR3_FREE] = "dir3-free",
	[XK_SCAN_DA3_NODE] = "da3-node",
	[XK_SCAN_ATTR3_LEAF] = "attr3-leaf",
	[XK_SCAN_ATTR3_RMT] = "attr3-rmt",
	[XK_SCAN_SYMLINK] = "symlink",
	[XK_SCAN_RTRMAPBT] = "rtrmapbt",
	[XK_SCAN_RTREFCBT] = "rtrefcntbt",
};

static const char *const verdict_names[XK_SCAN_VERDICT_NR] = {
	[XK_SCAN_OK] = "ok",
	[XK_SCAN_BAD_UUID] = "wrong-uuid",
	[XK_SCAN_BAD_ADDR] = "wrong-address",
	[XK_SCAN_BAD_CRC] = "bad-crc",
	[XK_SCAN_BAD_STRUCT] = "bad-structure",
};

const char *
xk_scan_type_name(enum xk_scan_type type)
{
	return (unsigned int)type < XK_SCAN_TYPE_NR ? type_names[type] : "?";
}

const char *
xk_scan_verdict_name(enum xk_scan_verdict verdict)
{
	return (unsigned int)verdict < XK_SCAN_VERDICT_NR ?
	       verdict_names[verdict] : "?";
}

int
xk_scan_type_parse(const char *name)
{
	for (int t = 0; t < XK_SCAN_TYPE_NR; t++)
		if (!strcmp(name, type_names[t]))
			return t;
	return -EINVAL;
}

int
xk_scan_type_ag_owned(enum xk_scan_type type)
{
	return type <= XK_SCAN_REFCBT;
}

/* State shared by the workers of one scan. */
struct scan {
	struct xk_mount	*mp;
	const struct xk_scan_opts *opts;
	uint32_t	read_blocks;	/* blocks per read */
	uint32_t	tail;		/* bytes read past a chunk (dir blocks) */
	atomic_uint	next_ag;
	atomic_int	stop;
	pthread_mutex_t	lock;		/* progress */
	uint64_t	done, total;
};

/* One worker's findings, merged when all are done. */
struct worker {
	struct scan	*s;
	pthread_t	tid;
	uint8_t		*buf;
	uint8_t		*ok;		/* per block of a chunk: read */
	uint8_t		*spare;		/* a directory block cut by a chunk */
	int		err;
	XK_VEC_OF(struct xk_scan_ent) ents;
	XK_VEC_OF(struct xk_scan_ent) rejected;
	XK_VEC_OF(struct xk_scan_unread) unread;
	uint64_t	counts[XK_SCAN_TYPE_NR][XK_SCAN_VERDICT_NR];
	uint64_t	bytes_read, read_errors, unread_bytes;
};

static const struct kind *
kind_of(const uint8_t *b)
{
	uint32_t m32 = xk_get_be32(b);
	uint16_t m16 = xk_get_be16(b + 8);
	int pad0 = xk_get_be16(b + 10) == 0;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const struct kind *k = &kinds[i];

		if (k->magic_len == 4 ? m32 == k->magic :
		    pad0 && m16 == k->magic)
			return k;
	}
	return NULL;
}

static const struct xk_buf_ops *
kind_ops(const struct kind *k)
{
	return k->ops ? k->ops :
	       xk_btree_ops_get((enum xk_btnum)k->btnum)->buf_ops;
}

static int
record(struct worker *w, const struct xk_scan_ent *e)
{
	int err = 0;

	w->counts[e->type][e->verdict]++;
	if (e->verdict == XK_SCAN_OK)
		err = xk_vec_push(&w->ents.vec, e, sizeof(*e));
	else if (w->s->opts->flags & XK_SCAN_KEEP_REJECTED)
		err = xk_vec_push(&w->rejected.vec, e, sizeof(*e));
	if (err && !w->err)
		w->err = err;
	return err;
}

/* Note blocks that could not be read, joining a range it continues. */
static int
note_unread(struct worker *w, uint64_t daddr, uint64_t len, int err)
{
	struct xk_scan_unread u = { daddr, len, err };

	w->unread_bytes += len << XK_BBSHIFT;
	if (w->unread.n) {
		struct xk_scan_unread *last = &w->unread.v[w->unread.n - 1];

		if (last->daddr + last->len == daddr && last->err == err) {
			last->len += len;
			return 0;
		}
	}
	err = xk_vec_push(&w->unread.vec, &u, sizeof(u));
	if (err && !w->err)
		w->err = err;
	return err;
}

/* Run a type's structure verifier on bytes in memory. */
static int
structure_ok(struct xk_mount *mp, const struct xk_buf_ops *ops,
	     uint64_t daddr, uint8_t *data, uint32_t len, int64_t agno)
{
	const struct xk_buf_site site = { .daddr = daddr, .agno = agno };
	struct xk_fail f;

	return xk_buf_verify_mem(mp, ops, data, len, &site, &f) == 0;
}

/* The file offset a block states (scan.h), or XK_SCAN_NO_OFFSET. */
static uint64_t
stated_offset(const struct xk_mount *mp, const struct kind *k,
	      const uint8_t *b)
{
	unsigned int dblog = mp->g.blocklog + mp->g.dirblklog;

	switch (k->type) {
	case XK_SCAN_BMBT:
		if (!xk_btree_block_numrecs(b))
			return XK_SCAN_NO_OFFSET;
		if (xk_btree_block_level(b) == 0) {
			struct xk_bmbt_irec r;

			xk_bmbt_rec_unpack((const void *)(b + 72), &r);
			return r.startoff;
		}
		return xk_get_be64(b + 72);
	case XK_SCAN_DIR3_BLOCK:
		return 0;
	case XK_SCAN_DIR3_LEAF1:
		return (uint64_t)xk_dir2_leaf_firstdb(dblog) <<
		       mp->g.dirblklog;
	case XK_SCAN_DIR3_FREE: {
		uint32_t firstdb = xk_get_be32(b +
			offsetof(struct xk_dir3_free_hdr, firstdb));

		return (uint64_t)(xk_dir2_free_firstdb(dblog) + firstdb /
			xk_dir3_free_max_bests(mp->g.dirblksize)) <<
		       mp->g.dirblklog;
	}
	case XK_SCAN_ATTR3_RMT:
		return xk_get_be32(b + RMT(rm_offset));
	case XK_SCAN_SYMLINK:
		return xk_get_be32(b + SYM(sl_offset));
	}
	return XK_SCAN_NO_OFFSET;
}

static uint16_t
stated_level(const struct kind *k, const uint8_t *b)
{
	if (k->btnum >= 0)
		return xk_btree_block_level(b);
	if (k->type == XK_SCAN_DA3_NODE)
		return xk_get_be16(b + offsetof(struct xk_da3_node_hdr,
						level));
	return 0;
}

/*
 * Judge one candidate of kind k at daddr, with avail bytes of the
 * device from there in memory.  Rules, in order: 1. UUID; 2. self
 * address (AG headers: an AG's header sector of their own AG number;
 * superblocks: an AG's first sector); 3. CRC; 4. the verifier.
 */
static int
judge(struct worker *w, const struct kind *k, uint64_t daddr, uint8_t *b,
      size_t avail)
{
	struct xk_mount *mp = w->s->mp;
	const struct xk_buf_ops *ops = kind_ops(k);
	uint64_t ag_bb = (uint64_t)mp->g.agblocks << mp->g.blkbb_log;
	struct xk_scan_ent e = {
		.daddr = daddr,
		.type = k->type,
		.offset = XK_SCAN_NO_OFFSET,
	};
	const uint8_t *uuid = mp->meta_uuid;
	int64_t agno = -1;

	/*
	 * A directory block that a chunk's end (after a failed read) cuts:
	 * read it whole on its own.  Past the AG it cannot be one.
	 */
	if (k->len >= LEN_DIRBLK && avail < mp->g.dirblksize &&
	    daddr + (mp->g.dirblksize >> XK_BBSHIFT) <=
	    (daddr / ag_bb + 1) * ag_bb &&
	    daddr + (mp->g.dirblksize >> XK_BBSHIFT) <=
	    mp->dev->size >> XK_BBSHIFT) {
		int err = xk_dev_pread(mp->dev, w->spare, mp->g.dirblksize,
				       daddr << XK_BBSHIFT);

		if (err) {
			w->read_errors++;
			return note_unread(w, daddr,
					   mp->g.dirblksize >> XK_BBSHIFT, err);
		}
		b = w->spare;
		avail = mp->g.dirblksize;
	}
	switch (k->len) {
	case LEN_SECTOR:
		e.len = mp->g.sectsize;
		break;
	case LEN_DIRBLK:
		e.len = mp->g.dirblksize;
		break;
	case LEN_DA_NODE:
		/* A directory's node is a directory block, an attr's not. */
		e.len = mp->g.dirblksize;
		if (e.len != mp->g.blocksize &&
		    (avail < e.len || !xk_cksum_ok(b, e.len, ops->crc_off)))
			e.len = mp->g.blocksize;
		break;
	default:
		e.len = mp->g.blocksize;
	}
	if (avail < e.len) {
		e.verdict = XK_SCAN_BAD_STRUCT;
		return record(w, &e);
	}
	if (k->type == XK_SCAN_SB)
		uuid = mp->sb.uuid;
	if (k->sector >= 0) {
		agno = (int64_t)(daddr / ag_bb);
		e.owner = k->owner_len ? xk_get_be32(b + k->owner_off) :
			  (uint64_t)agno;
	} else if (k->btnum >= 0 &&
		   !xk_btree_ops_get((enum xk_btnum)k->btnum)->long_ptrs) {
		agno = (int64_t)(daddr / ag_bb);
		e.owner = (uint64_t)agno;
	} else {
		e.owner = k->owner_len == 8 ? xk_get_be64(b + k->owner_off) :
			  xk_get_be32(b + k->owner_off);
	}
	if (memcmp(b + k->uuid_off, uuid, 16)) {
		e.verdict = XK_SCAN_BAD_UUID;
		return record(w, &e);
	}
	if (k->sector >= 0 ?
	    (e.owner >= mp->g.agcount ||
	     daddr != xk_ag_hdr_daddr(mp, (uint32_t)e.owner,
				      (unsigned int)k->sector)) :
	    xk_get_be64(b + k->blkno_off) != daddr) {
		e.verdict = XK_SCAN_BAD_ADDR;
		return record(w, &e);
	}
	if (ops->crc_off != XK_NO_CRC && !xk_cksum_ok(b, e.len, ops->crc_off)) {
		e.verdict = XK_SCAN_BAD_CRC;
		return record(w, &e);
	}
	if (!structure_ok(mp, ops, daddr, b, e.len, agno)) {
		e.verdict = XK_SCAN_BAD_STRUCT;
		return record(w, &e);
	}
	e.level = stated_level(k, b);
	e.offset = stated_offset(mp, k, b);
	return record(w, &e);
}

static int
is_v3_inode(const uint8_t *b)
{
	const struct xk_dinode *dip = (const void *)b;

	return xk_be16_get(dip->di_magic) == XK_DINODE_MAGIC &&
	       dip->di_version == 3;
}

/*
 * Judge the inode cluster at agno/agbno: every inode in it by the rules
 * of judge() (its address is its inode number), then the cluster's own
 * verifier.  The worst inode's first failed rule is the verdict,
 * which is returned (or a negative errno).
 */
static int
judge_cluster(struct worker *w, uint32_t agno, uint32_t agbno, uint8_t *b)
{
	struct xk_mount *mp = w->s->mp;
	const struct xk_geom *g = &mp->g;
	uint64_t ino0 = xk_agino_to_ino(mp, agno, agbno << g->inopblog);
	struct xk_scan_ent e = {
		.daddr = xk_agb_to_daddr(mp, agno, agbno),
		.owner = ino0,
		.offset = XK_SCAN_NO_OFFSET,
		.len = g->cluster_blks << g->blocklog,
		.type = XK_SCAN_INODES,
		.verdict = XK_SCAN_VERDICT_NR,
	};

	for (uint32_t i = 0; i < g->cluster_inos; i++) {
		const struct xk_dinode *dip =
			(const void *)(b + ((size_t)i << g->inodelog));
		struct xk_fail f;
		uint8_t v = XK_SCAN_OK;

		memset(&f, 0, sizeof(f));
		if (memcmp(dip->di_uuid, mp->meta_uuid, 16))
			v = XK_SCAN_BAD_UUID;
		else if (xk_be64_get(dip->di_ino) != ino0 + i)
			v = XK_SCAN_BAD_ADDR;
		else if (!xk_cksum_ok(dip, g->inodesize, XK_DINODE_CRC_OFF))
			v = XK_SCAN_BAD_CRC;
		else if (xk_dinode_verify(mp, ino0 + i, dip, &f))
			v = XK_SCAN_BAD_STRUCT;
		if (v != XK_SCAN_OK && v < e.verdict)
			e.verdict = v;
	}
	if (e.verdict == XK_SCAN_VERDICT_NR)
		e.verdict = structure_ok(mp, &xk_inode_cluster_buf_ops,
					 e.daddr, b, e.len, agno) ?
			    XK_SCAN_OK : XK_SCAN_BAD_STRUCT;
	if (record(w, &e))
		return w->err;
	return e.verdict;
}

/*
 * Read blocks agbno..end-1 of an AG (and up to s->tail bytes after, for
 * directory blocks that start near the end) into w->buf.  A failed read
 * is retried block by block; w->ok says which blocks came in.  Returns
 * the bytes in memory past the chunk's start, or a negative errno for
 * an operational error.
 */
static int64_t
read_chunk(struct worker *w, uint32_t agno, uint32_t agbno, uint32_t end)
{
	struct xk_mount *mp = w->s->mp;
	uint32_t bs = mp->g.blocksize, n = end - agbno;
	uint64_t off = xk_agb_to_daddr(mp, agno, agbno) << XK_BBSHIFT;
	uint64_t room = (uint64_t)(xk_ag_blocks(mp, agno) - end) * bs;
	size_t len = (size_t)n * bs + (room < w->s->tail ? room : w->s->tail);
	int err;

	err = xk_dev_pread(mp->dev, w->buf, len, off);
	if (!err) {
		memset(w->ok, 1, n);
		w->bytes_read += (uint64_t)n * bs;
		return (int64_t)len;
	}
	w->read_errors++;
	for (uint32_t i = 0; i < n; i++) {
		err = xk_dev_pread(mp->dev, w->buf + (size_t)i * bs, bs,
				   off + (uint64_t)i * bs);
		w->ok[i] = !err;
		if (!err) {
			w->bytes_read += bs;
			continue;
		}
		w->read_errors++;
		if (note_unread(w, (off >> XK_BBSHIFT) +
				((uint64_t)i << mp->g.blkbb_log),
				1ULL << mp->g.blkbb_log, err))
			return -ENOMEM;
	}
	return (int64_t)n * bs;
}

/* Whether blocks i..i+cnt-1 of the chunk are all in memory. */
static int
blocks_read(const struct worker *w, uint32_t i, uint32_t cnt, uint32_t n)
{
	for (uint32_t j = i; j < i + cnt && j < n; j++)
		if (!w->ok[j])
			return 0;
	return 1;
}

/* Look at every candidate of blocks agbno..end-1 of an AG. */
static int
scan_chunk(struct worker *w, uint32_t agno, uint32_t agbno, uint32_t end)
{
	struct xk_mount *mp = w->s->mp;
	const struct xk_geom *g = &mp->g;
	uint32_t n = end - agbno, bs = g->blocksize;
	int64_t have = read_chunk(w, agno, agbno, end);

	if (have < 0)
		return (int)have;
	for (uint32_t i = 0; i < n && !w->err; i++) {
		uint8_t *b = w->buf + (size_t)i * bs;
		size_t avail = (size_t)have - (size_t)i * bs;
		uint64_t daddr = xk_agb_to_daddr(mp, agno, agbno + i);
		const struct kind *k;

		if (!w->ok[i])
			continue;
		if ((agbno + i) % g->cluster_blks == 0 &&
		    avail >= ((size_t)g->cluster_blks << g->blocklog) &&
		    blocks_read(w, i, g->cluster_blks, n)) {
			int any = 0;

			for (uint32_t j = 0; j < g->cluster_blks; j++)
				any |= is_v3_inode(b + (size_t)j * bs);
			/*
			 * A rejected cluster's blocks are looked at one by
			 * one: a freed chunk's blocks may hold other
			 * metadata now.
			 */
			if (any) {
				int v = judge_cluster(w, agno, agbno + i, b);

				if (v < 0)
					return v;
				if (v == XK_SCAN_OK) {
					i += g->cluster_blks - 1;
					continue;
				}
			}
		}
		/* The sector-sized headers inside an AG's first blocks. */
		for (uint32_t s = 0; s < bs; s += g->sectsize) {
			if (s && (uint64_t)(agbno + i) * bs + s >=
				 4ULL * g->sectsize)
				break;
			k = kind_of(b + s);
			if (!k)
				continue;
			if (k->len != LEN_SECTOR && s)
				continue;
			if (k->len != LEN_SECTOR && k->len != LEN_BLOCK &&
			    !blocks_read(w, i, g->dirblksize / bs, n))
				continue;
			if (judge(w, k, daddr + (s >> XK_BBSHIFT), b + s,
				  avail - s))
				return w->err;
		}
	}
	return w->err;
}

/* Add bytes to the shared progress; non-zero when the scan must stop. */
static int
progress(struct scan *s, uint64_t bytes)
{
	int stop = 0;

	if (!s->opts->progress)
		return atomic_load(&s->stop);
	pthread_mutex_lock(&s->lock);
	s->done += bytes;
	if (!atomic_load(&s->stop))
		stop = s->opts->progress(s->opts->progress_ctx, s->done,
					 s->total);
	pthread_mutex_unlock(&s->lock);
	if (stop)
		atomic_store(&s->stop, 1);
	return atomic_load(&s->stop);
}

/* The internal log's blocks in AG agno: [*lo, *hi), empty if none. */
static void
log_range(const struct xk_mount *mp, uint32_t agno, uint32_t *lo,
	  uint32_t *hi)
{
	*lo = *hi = 0;
	if (!mp->g.logstart || xk_fsb_to_agno(mp, mp->g.logstart) != agno)
		return;
	*lo = xk_fsb_to_agbno(mp, mp->g.logstart);
	*hi = *lo + mp->g.logblocks;
}

static int
scan_ag(struct worker *w, uint32_t agno)
{
	struct scan *s = w->s;
	uint32_t ag_end = xk_ag_blocks(s->mp, agno), lo, hi;

	log_range(s->mp, agno, &lo, &hi);
	for (uint32_t b = 0; b < ag_end; ) {
		uint32_t end;
		int err;

		if (b >= lo && b < hi) {
			b = hi;
			continue;
		}
		/* Chunks on read_blocks boundaries keep clusters whole. */
		end = (b / s->read_blocks + 1) * s->read_blocks;
		if (end > ag_end)
			end = ag_end;
		if (b < lo && end > lo)
			end = lo;
		err = scan_chunk(w, agno, b, end);
		if (err)
			return err;
		if (progress(s, (uint64_t)(end - b) << s->mp->g.blocklog))
			return -ECANCELED;
		b = end;
	}
	return 0;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct scan *s = w->s;
	unsigned int ag;

	while (!w->err && !atomic_load(&s->stop) &&
	       (ag = atomic_fetch_add(&s->next_ag, 1)) < s->mp->g.agcount) {
		int err = scan_ag(w, ag);

		if (err && !w->err)
			w->err = err;
	}
	/* An operational error stops the others too. */
	if (w->err)
		atomic_store(&s->stop, 1);
	return NULL;
}

static int
ent_cmp(const void *a, const void *b)
{
	const struct xk_scan_ent *x = a, *y = b;

	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if (x->daddr != y->daddr)
		return x->daddr < y->daddr ? -1 : 1;
	return 0;
}

static int
ent_daddr_cmp(const void *a, const void *b)
{
	const struct xk_scan_ent *x = a, *y = b;

	if (x->daddr != y->daddr)
		return x->daddr < y->daddr ? -1 : 1;
	return x->type < y->type ? -1 : x->type > y->type;
}

static int
unread_cmp(const void *a, const void *b)
{
	const struct xk_scan_unread *x = a, *y = b;

	return x->daddr < y->daddr ? -1 : x->daddr > y->daddr;
}

static int
worker_init(struct worker *w, struct scan *s)
{
	struct xk_vec_spill *sp = s->opts->spill;

	w->s = s;
	w->ents.vec.spill = sp;
	w->rejected.vec.spill = sp;
	if (posix_memalign((void **)&w->buf, SCAN_BUF_ALIGN,
			   (size_t)s->read_blocks * s->mp->g.blocksize +
			   s->tail))
		return -ENOMEM;
	w->ok = xk_malloc(s->read_blocks);
	if (posix_memalign((void **)&w->spare, SCAN_BUF_ALIGN,
			   s->mp->g.dirblksize))
		w->spare = NULL;
	return w->ok && w->spare ? 0 : -ENOMEM;
}

static void
worker_free(struct worker *w)
{
	free(w->buf);
	free(w->ok);
	free(w->spare);
	xk_vec_free(&w->ents.vec);
	xk_vec_free(&w->rejected.vec);
	xk_vec_free(&w->unread.vec);
}

/* Hand one worker's findings over to the result. */
static int
merge(struct xk_scan *res, struct worker *w)
{
	int err;

	err = xk_vec_append(&res->ents.vec, w->ents.v, w->ents.n,
			    sizeof(*w->ents.v));
	if (!err)
		err = xk_vec_append(&res->rejected.vec, w->rejected.v,
				    w->rejected.n, sizeof(*w->rejected.v));
	if (!err)
		err = xk_vec_append(&res->unread.vec, w->unread.v,
				    w->unread.n, sizeof(*w->unread.v));
	for (int t = 0; t < XK_SCAN_TYPE_NR; t++)
		for (int v = 0; v < XK_SCAN_VERDICT_NR; v++)
			res->counts[t][v] += w->counts[t][v];
	res->bytes_read += w->bytes_read;
	res->read_errors += w->read_errors;
	res->unread_bytes += w->unread_bytes;
	return err;
}

static unsigned int
thread_count(const struct xk_mount *mp, unsigned int want)
{
	if (!want) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		want = cpus < 1 ? 1 : (unsigned int)cpus;
	}
	if (want > SCAN_MAX_THREADS)
		want = SCAN_MAX_THREADS;
	if (want > mp->g.agcount)
		want = mp->g.agcount;
	return want;
}

int
xk_scan_device(struct xk_mount *mp, const struct xk_scan_opts *opts,
	       struct xk_scan *res)
{
	const struct xk_geom *g = &mp->g;
	struct scan s;
	struct worker *w;
	unsigned int nthreads = thread_count(mp, opts->threads);
	unsigned int started = 0;
	uint32_t unit = g->cluster_blks > 1 ? g->cluster_blks : 1;
	uint32_t read_size = opts->read_size ? opts->read_size :
			     SCAN_READ_SIZE;
	int err = 0;

	memset(&s, 0, sizeof(s));
	s.mp = mp;
	s.opts = opts;
	s.read_blocks = read_size >> g->blocklog;
	s.read_blocks -= s.read_blocks % unit;
	if (s.read_blocks < unit)
		s.read_blocks = unit;
	s.tail = g->dirblksize - g->blocksize;
	atomic_init(&s.next_ag, 0);
	atomic_init(&s.stop, 0);
	for (uint32_t ag = 0; ag < g->agcount; ag++) {
		uint32_t lo, hi;

		log_range(mp, ag, &lo, &hi);
		s.total += (uint64_t)(xk_ag_blocks(mp, ag) - (hi - lo)) <<
			   g->blocklog;
	}
	res->bytes_total = s.total;
	res->ents.vec.spill = opts->spill;
	res->rejected.vec.spill = opts->spill;
	if (pthread_mutex_init(&s.lock, NULL))
		return -ENOMEM;
	w = xk_calloc(nthreads, sizeof(*w));
	if (!w) {
		pthread_mutex_destroy(&s.lock);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < nthreads && !err; i++)
		err = worker_init(&w[i], &s);
	if (!err) {
		/* Fewer threads do the same work: the caller is worker 0. */
		for (started = 1; started < nthreads; started++)
			if (xk_fault(XK_FAULT_THREAD) ||
			    pthread_create(&w[started].tid, NULL, worker_main,
					   &w[started]))
				break;
		worker_main(&w[0]);
		for (unsigned int i = 1; i < started; i++)
			pthread_join(w[i].tid, NULL);
	}
	/*
	 * The cause, not the stop it made the other workers see: a
	 * worker's -ECANCELED only says that another one stopped the scan.
	 */
	for (unsigned int i = 0; i < started && !err; i++)
		if (w[i].err != -ECANCELED)
			err = w[i].err;
	if (!err && atomic_load(&s.stop))
		err = -ECANCELED;
	for (unsigned int i = 0; i < started && !err; i++)
		err = merge(res, &w[i]);
	for (unsigned int i = 0; i < nthreads; i++)
		worker_free(&w[i]);
	free(w);
	pthread_mutex_destroy(&s.lock);
	if (err)
		return err;
	xk_vec_sort(&res->ents.vec, sizeof(*res->ents.v), ent_cmp);
	xk_vec_sort(&res->rejected.vec, sizeof(*res->rejected.v),
		    ent_daddr_cmp);
	xk_vec_sort(&res->unread.vec, sizeof(*res->unread.v), unread_cmp);
	return 0;
}

void
xk_scan_free(struct xk_scan *res)
{
	xk_vec_free(&res->ents.vec);
	xk_vec_free(&res->rejected.vec);
	xk_vec_free(&res->unread.vec);
}

void
xk_scan_lookup(const struct xk_scan *res, enum xk_scan_type type,
	       uint64_t owner, size_t *first, size_t *count)
{
	size_t lo = 0, hi = res->ents.n, start;

	/* The first entry not below (type, owner). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct xk_scan_ent *e = &res->ents.v[mid];

		if (e->type < type || (e->type == type && e->owner < owner))
			lo = mid + 1;
		else
			hi = mid;
	}
	start = lo;
	while (lo < res->ents.n && res->ents.v[lo].type == type &&
	       res->ents.v[lo].owner == owner)
		lo++;
	*first = start;
	*count = lo - start;
}
