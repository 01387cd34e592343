// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Transaction log reservations, and from them the smallest log the
 * kernel accepts for a geometry.
 *
 * Every kind of transaction reserves, up front, the log space its worst
 * case could write: each metadata buffer it may dirty (plus a fixed
 * per-buffer format overhead), each inode (in its logged, in-memory
 * shape), the free space, inode, reverse-mapping and refcount btree
 * splits its allocations may cause, and the quota records.  A
 * "permanent" reservation is renewed across a chain of rolled
 * transactions and is counted as many times as the chain is long.
 *
 * The mount code refuses a log that cannot hold, three times over, the
 * largest of these reservations wrapped in its log overheads (record
 * and operation headers, padding to the log stripe unit).  mkfs.xfs
 * computes the same number to choose and to check the log size, so the
 * calculation has to match the kernel's exactly, including a few
 * historical choices that are kept on purpose so that new filesystems
 * still mount on older kernels:
 *   - the minimum uses the reflink-era numbers: refcount btree splits
 *     folded into the write and truncate reservations, eight rolls for
 *     write/truncate/quota allocation on reflink filesystems (two when
 *     only the reverse-mapping btree is on), and a reverse-mapping btree
 *     height of 9 whenever both rmapbt and reflink are enabled;
 *   - the attribute-set reservation is sized for the largest local
 *     attribute value and compared against the others' totals;
 *   - the first reservation with the largest total wins a tie, in the
 *     kernel's table order.
 * Filesystems with parent pointers drop the historical choices: their
 * minimum uses the runtime reservations.
 * Only v5 filesystems without a realtime section or quotas enabled at
 * mkfs time are handled (the reservations still include the quota
 * records: the kernel counts them whether or not quotas are on).
 *
 * Nothing here reads from a device: the input is the superblock mkfs
 * is about to write.
 */
#include <string.h>

#include <xfskit/libfs.h>
#include <xfskit/log_resv.h>

/*
 * Sizes of the log items and headers the reservations count, as the
 * kernel lays them out in the log (C structure sizes on Linux).
 */
#define OP_HDR_BYTES		12	/* log operation header */
#define BUF_FMT_BYTES		88	/* buffer log format item */
#define INODE_FMT_BYTES		56	/* inode log format item */
#define DQ_FMT_BYTES		24	/* dquot log format item */
#define DQ_DISK_BYTES		104	/* on-disk dquot record */
#define LBLOCK_CRC_LEN		72	/* long-pointer btree block header */
#define SBLOCK_CRC_LEN		56	/* short-pointer btree block header */

/* Counts the reservation formulas use. */
#define DA_NODE_MAXDEPTH	5	/* directory/attribute btree depth */
#define SYMLINK_MAXLEN		1024
#define MAXNAMELEN		256
#define OLD_REFLINK_RMAP_LEVELS	9

/* Largest extent counts of a fork, small and large (nrext64) counters. */
#define DATA_EXTCNT_SMALL	((1ULL << 31) - 1)
#define DATA_EXTCNT_LARGE	((1ULL << 48) - 1)
#define ATTR_EXTCNT_SMALL	((1ULL << 15) - 1)
#define ATTR_EXTCNT_LARGE	((1ULL << 32) - 1)

/* Roll counts of the permanent reservations. */
#define LOGCOUNT_WRITE		2
#define LOGCOUNT_ITRUNCATE	2
#define LOGCOUNT_REFLINK_OLD	8

/* The geometry the formulas read, derived once from the superblock. */
struct resv_geo {
	uint64_t	bsize, sectsize, inodesize, dirbsize;
	int		finobt, rmapbt, reflink;
	int		parent;			/* parent pointers */
	unsigned int	alloc_levels;		/* bnobt/cntbt height */
	unsigned int	bm_levels[2];		/* bmbt, data and attr fork */
	unsigned int	inobt_levels;
	unsigned int	rmap_levels;
	unsigned int	refc_levels;
	unsigned int	ialloc_blks;		/* blocks per inode chunk */
	uint64_t	cluster_bytes;		/* inode cluster buffer */
	uint64_t	alloc_contig;		/* free extents a leaf adds */
	uint64_t	dir_fsbcount;		/* fs blocks per dir block */
	uint32_t	logsunit;		/* bytes; 1 when unset */
};

/*
 * The reservations in the kernel's table order, which decides ties.
 * Entries the kernel keeps but never fills (none today) would still
 * belong here in their place.
 */
enum {
	R_WRITE, R_ITRUNCATE, R_RENAME, R_LINK, R_REMOVE, R_SYMLINK,
	R_CREATE, R_CREATE_TMPFILE, R_MKDIR, R_IFREE, R_ICHANGE,
	R_GROWDATA, R_ADDAFORK, R_WRITEID, R_ATTRINVAL, R_ATTRSETM,
	R_ATTRSETRT, R_ATTRRM, R_CLEARAGI, R_GROWRTALLOC, R_GROWRTZERO,
	R_GROWRTFREE, R_QM_SETQLIM, R_QM_DQALLOC, R_SB, R_FSYNCTS,
	R_NR
};
_Static_assert(R_NR == XK_RESV_NR, "reservation table size");

static uint64_t
div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static uint64_t
max2(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Height of a btree holding records, from its minimum fill. */
static unsigned int
tree_height(uint64_t leaf_min, uint64_t node_min, uint64_t records)
{
	uint64_t blocks = div_up(records, leaf_min);
	unsigned int height = 1;

	while (blocks > 1) {
		blocks = div_up(blocks, node_min);
		height++;
	}
	return height;
}

/*
 * Height of a btree that may use up to leaf_blocks blocks (a reflink
 * filesystem's reverse-mapping btree, whose record count is bounded
 * only by the AG's space).
 */
static unsigned int
tree_height_in_space(uint64_t node_min, uint64_t leaf_blocks)
{
	uint64_t nodes = node_min, left = leaf_blocks - 1;
	unsigned int height = 1;

	if (leaf_blocks < 1)
		return 0;
	while (nodes < left) {
		left -= nodes;
		nodes *= node_min;
		height++;
	}
	return height;
}

/*
 * Height of a file's block map btree: the leaf level holds the fork's
 * maximum extent count, and the root sits in the inode, whose fork is
 * assumed at its smallest (3 pointers for data, 2 for attributes).
 */
static unsigned int
bmap_height(uint64_t bsize, uint64_t max_extents, unsigned int root_ptrs)
{
	uint64_t min_recs = (bsize - LBLOCK_CRC_LEN) / 16 / 2;
	uint64_t root_recs = root_ptrs;	/* 16-byte key + pointer each */
	uint64_t blocks = div_up(max_extents, min_recs);
	unsigned int level;

	for (level = 1; blocks > 1; level++) {
		if (blocks <= root_recs)
			blocks = 1;
		else
			blocks = div_up(blocks, min_recs);
	}
	return level;
}

static void
geo_init(const struct xk_sb *sb, int old_rmap_height, struct resv_geo *g)
{
	uint64_t bs = sb->blocksize, body = bs - SBLOCK_CRC_LEN;
	int nrext64 = !!(sb->features_incompat & XK_SB_FEAT_INCOMPAT_NREXT64);
	uint64_t inodes, cluster;

	memset(g, 0, sizeof(*g));
	g->bsize = bs;
	g->sectsize = sb->sectsize;
	g->inodesize = sb->inodesize;
	g->dir_fsbcount = 1ULL << sb->dirblklog;
	g->dirbsize = bs << sb->dirblklog;
	g->finobt = !!(sb->features_ro_compat & XK_SB_FEAT_RO_COMPAT_FINOBT);
	g->rmapbt = !!(sb->features_ro_compat & XK_SB_FEAT_RO_COMPAT_RMAPBT);
	g->reflink = !!(sb->features_ro_compat &
			XK_SB_FEAT_RO_COMPAT_REFLINK);
	g->logsunit = sb->logsunit;
	g->parent = !!(sb->features_incompat & XK_SB_FEAT_INCOMPAT_PARENT);

	/* Free space btrees: 8-byte records, 8-byte keys, 4-byte ptrs. */
	g->alloc_levels = tree_height(body / 8 / 2, body / 12 / 2,
				      ((uint64_t)sb->agblocks + 1) / 2);
	g->alloc_contig = body / 8 - body / 8 / 2;

	g->bm_levels[0] = bmap_height(bs, nrext64 ? DATA_EXTCNT_LARGE :
				      DATA_EXTCNT_SMALL, 3);
	g->bm_levels[1] = bmap_height(bs, nrext64 ? ATTR_EXTCNT_LARGE :
				      ATTR_EXTCNT_SMALL, 2);

	/* Inode btrees: one 16-byte record per 64 inodes of the AG. */
	inodes = (1ULL << (sb->agblklog + sb->inopblog)) >> 6;
	g->inobt_levels = tree_height(body / 16 / 2, body / 8 / 2, inodes);
	g->ialloc_blks = (unsigned int)((sb->inopblock > 64 ?
					 sb->inopblock : 64) >> sb->inopblog);

	/* Inode clusters: 8 KiB scaled by the inode size (v5). */
	cluster = 8192 * (sb->inodesize / 256);
	if (sb->inoalignmt < (cluster >> sb->blocklog))
		cluster = 8192;
	g->cluster_bytes = cluster > bs ? (cluster >> sb->blocklog) * bs : bs;

	/* Reverse mappings: 24-byte records, 2 x 20-byte keys + ptr. */
	if (g->rmapbt) {
		if (g->reflink && old_rmap_height)
			g->rmap_levels = OLD_REFLINK_RMAP_LEVELS;
		else if (g->reflink)
			g->rmap_levels = tree_height_in_space(body / 44 / 2,
							      sb->agblocks);
		else
			g->rmap_levels = tree_height(body / 24 / 2,
						     body / 44 / 2,
						     sb->agblocks);
	}
	/* Refcount btree: 12-byte records, 4-byte keys and ptrs. */
	if (g->reflink)
		g->refc_levels = tree_height(body / 12 / 2, body / 8 / 2,
					     sb->agblocks);
}

/* n buffers of size bytes, each with its log format overhead. */
static uint64_t
buf_res(uint64_t n, uint64_t size)
{
	/* The op header plus format item, rounded up to 128 bytes. */
	uint64_t overhead = div_up(OP_HDR_BYTES + BUF_FMT_BYTES, 128) * 128;

	return n * (size + overhead);
}

/* The quota records a directory operation may touch: 6 dquots. */
static uint64_t
dquot_res(void)
{
	return (DQ_FMT_BYTES + DQ_DISK_BYTES) * 6;
}

/*
 * Btree blocks touched allocating or freeing ops extents: both free
 * space btrees split to the root and back, and the reverse-mapping
 * btree likewise.
 */
static uint64_t
allocfree_blocks(const struct resv_geo *g, uint64_t ops)
{
	uint64_t blocks = ops * 2 * (2 * g->alloc_levels - 1);

	if (g->rmapbt)
		blocks += ops * (2 * g->rmap_levels - 1);
	return blocks;
}

static uint64_t
refcount_blocks(const struct resv_geo *g, uint64_t ops)
{
	return ops * (2 * g->refc_levels - 1);
}

/*
 * An inode as logged: four op headers, its format item, the inode and
 * the block headers of two in-memory btree fork roots.
 */
static uint64_t
inode_res(const struct resv_geo *g, uint64_t n)
{
	return n * (4 * OP_HDR_BYTES + INODE_FMT_BYTES + g->inodesize +
		    2 * LBLOCK_CRC_LEN);
}

/* Inode btree record change: its full height plus one allocation. */
static uint64_t
inobt_res(const struct resv_geo *g)
{
	return buf_res(g->inobt_levels, g->bsize) +
	       buf_res(allocfree_blocks(g, 1), g->bsize);
}

static uint64_t
finobt_res(const struct resv_geo *g)
{
	return g->finobt ? inobt_res(g) : 0;
}

/*
 * Allocating an inode chunk logs only the allocation (v5 initializes
 * the chunk with ordered buffers); freeing one also logs its buffers'
 * headers.
 */
static uint64_t
ichunk_res(const struct resv_geo *g, int alloc)
{
	uint64_t res = buf_res(allocfree_blocks(g, 1), g->bsize);

	if (alloc)
		return res;
	return res + buf_res(g->ialloc_blks, 0);
}

static uint64_t
refcountbt_res(const struct resv_geo *g, uint64_t ops)
{
	if (!g->reflink)
		return 0;
	return buf_res(ops, g->sectsize) +
	       buf_res(refcount_blocks(g, ops), g->bsize);
}

/* Extents the bmap btree may gain when b blocks are mapped. */
static uint64_t
nextentadd(const struct resv_geo *g, uint64_t b, int fork)
{
	return div_up(b, g->alloc_contig) * (g->bm_levels[fork] - 1);
}

/* Directory operation: the dir btree path plus its bmap updates. */
static uint64_t
dirop_count(const struct resv_geo *g)
{
	uint64_t blocks = g->dir_fsbcount * (DA_NODE_MAXDEPTH + 2);
	uint64_t bmaps = (DA_NODE_MAXDEPTH + 2) *
			 nextentadd(g, g->dir_fsbcount, 0);

	return blocks + bmaps + 1;
}

/*
 * Writing to a file (t1: the inode, its bmap btree, 3 headers and two
 * allocations) or the deferred freeing of bmap blocks (t3); refcount
 * updates run apart (t4), except in the old sizing used for the
 * minimum, which folds two refcount btree splits into t1 and t3.
 */
static uint64_t
write_res(const struct resv_geo *g, int minlog)
{
	uint64_t t1, t3;

	t1 = inode_res(g, 1) + buf_res(g->bm_levels[0], g->bsize) +
	     buf_res(3, g->sectsize) +
	     buf_res(allocfree_blocks(g, 2), g->bsize);
	t3 = buf_res(5, g->sectsize) +
	     buf_res(allocfree_blocks(g, 2), g->bsize);
	if (minlog) {
		uint64_t adj = 0;

		if (g->reflink)
			adj = buf_res(refcount_blocks(g, 2), g->bsize);
		return dquot_res() + max2(t1 + adj, t3 + adj);
	}
	return dquot_res() + max2(refcountbt_res(g, 1), max2(t1, t3));
}

/*
 * Truncating: the inode and its bmap btree (t1), or freeing up to four
 * extents with their headers (t2); refcount as for writes.
 */
static uint64_t
itruncate_res(const struct resv_geo *g, int minlog)
{
	uint64_t t1, t2;

	t1 = inode_res(g, 1) + buf_res(g->bm_levels[0] + 1, g->bsize);
	t2 = buf_res(9, g->sectsize) +
	     buf_res(allocfree_blocks(g, 4), g->bsize);
	if (minlog) {
		if (g->reflink)
			t2 += buf_res(refcount_blocks(g, 4), g->bsize);
		return dquot_res() + max2(t1, t2);
	}
	return dquot_res() + max2(refcountbt_res(g, 2), max2(t1, t2));
}

/* The inode-unlinked-list updates: the AGI and one or two clusters. */
static uint64_t
iunlink_remove_res(const struct resv_geo *g)
{
	return buf_res(1, g->sectsize) + 2 * g->cluster_bytes;
}

static uint64_t
iunlink_add_res(const struct resv_geo *g)
{
	return buf_res(1, g->sectsize) + g->cluster_bytes;
}

/* Creating from a free inode of an existing chunk. */
static uint64_t
create_modify_res(const struct resv_geo *g)
{
	return inode_res(g, 2) + buf_res(1, g->sectsize) + g->bsize +
	       buf_res(dirop_count(g), g->bsize) + finobt_res(g);
}

/* Creating with a new inode chunk. */
static uint64_t
create_alloc_res(const struct resv_geo *g)
{
	return buf_res(2, g->sectsize) + g->sectsize + ichunk_res(g, 1) +
	       inobt_res(g) + finobt_res(g);
}

static uint64_t
icreate_res(const struct resv_geo *g)
{
	return dquot_res() + max2(create_alloc_res(g),
				  create_modify_res(g));
}

/*
 * Log bytes of the attribute intents a namespace change logs with parent
 * pointers: the 40-byte ATTRI format, then each name (up to 255 bytes)
 * and parent record (12 bytes) as its own region padded to 4 bytes;
 * a replace carries the old and the new pair.
 */
#define ATTRI_FMT_BYTES		40
#define PPTR_REC_BYTES		12
#define PPTR_NAME_BYTES		256	/* 255 rounded up to 4 */
#define PPTR_ONE_BYTES		(ATTRI_FMT_BYTES + PPTR_REC_BYTES + \
				 PPTR_NAME_BYTES)
#define PPTR_REPLACE_BYTES	(PPTR_ONE_BYTES + PPTR_REC_BYTES + \
				 PPTR_NAME_BYTES)

/*
 * With parent pointers each namespace transaction also sets or removes
 * a parent pointer attribute: its reservation covers the attribute
 * change as a third alternative (beside the directory change and the
 * block freeing), carries the intents it may relog (rename: a replace,
 * a removal and an addition, or two replaces for an exchange), and
 * rolls as often more as the attribute change needs.  The attribute
 * reservations are filled first, as the kernel's table does.
 */
static void
pptr_resv(const struct resv_geo *g, struct xk_resv *r)
{
	uint64_t bs = g->bsize, ss = g->sectsize;
	uint64_t set = r[R_ATTRSETM].logres, rm = r[R_ATTRRM].logres;
	unsigned int setc = r[R_ATTRSETM].logcount;
	unsigned int rmc = r[R_ATTRRM].logcount;
	uint64_t t1, t2, rename_ov, exch_ov;

	t1 = inode_res(g, 5) + buf_res(2 * dirop_count(g), bs);
	t2 = buf_res(7, ss) + buf_res(allocfree_blocks(g, 3), bs);
	rename_ov = PPTR_REPLACE_BYTES + 2 * PPTR_ONE_BYTES;
	exch_ov = 2 * PPTR_REPLACE_BYTES;
	r[R_RENAME].logres = dquot_res() + max2(rename_ov, exch_ov) +
			     max2(max2(t1, t2), max2(set, rm));
	r[R_RENAME].logcount = 2 + (setc > rmc ? setc : rmc);

	t1 = inode_res(g, 2) + buf_res(dirop_count(g), bs);
	t2 = buf_res(3, ss) + buf_res(allocfree_blocks(g, 1), bs);
	r[R_LINK].logres = dquot_res() + iunlink_remove_res(g) +
			   PPTR_ONE_BYTES + max2(max2(t1, t2), set);
	r[R_LINK].logcount = 2 + setc;

	t2 = buf_res(4, ss) + buf_res(allocfree_blocks(g, 2), bs);
	r[R_REMOVE].logres = dquot_res() + iunlink_add_res(g) +
			     PPTR_ONE_BYTES + max2(max2(t1, t2), rm);
	r[R_REMOVE].logcount = 2 + rmc;

	t1 = dquot_res() + PPTR_ONE_BYTES +
	     max2(max2(create_alloc_res(g), create_modify_res(g)), set);
	r[R_CREATE].logres = t1;
	r[R_CREATE].logcount = 2 + setc;
	r[R_MKDIR].logres = t1;
	r[R_MKDIR].logcount = 3 + setc;
	r[R_SYMLINK].logres = t1 + buf_res(1, SYMLINK_MAXLEN);
	r[R_SYMLINK].logcount = 3 + setc;
}

/* Fill the table; minlog selects the sizing used for the minimum. */
static void
resv_calc(const struct resv_geo *g, int minlog, struct xk_resv *r)
{
	uint64_t bs = g->bsize, ss = g->sectsize;
	unsigned int adj = 0;

	memset(r, 0, sizeof(*r) * R_NR);
	r[R_WRITE] = (struct xk_resv){ write_res(g, minlog), LOGCOUNT_WRITE };
	r[R_ITRUNCATE] = (struct xk_resv){ itruncate_res(g, minlog),
					LOGCOUNT_ITRUNCATE };
	r[R_RENAME] = (struct xk_resv){ dquot_res() +
		max2(inode_res(g, 5) + buf_res(2 * dirop_count(g), bs),
		     buf_res(7, ss) + buf_res(allocfree_blocks(g, 3), bs)),
		2 };
	r[R_LINK] = (struct xk_resv){ dquot_res() + iunlink_remove_res(g) +
		max2(inode_res(g, 2) + buf_res(dirop_count(g), bs),
		     buf_res(3, ss) + buf_res(allocfree_blocks(g, 1), bs)),
		2 };
	r[R_REMOVE] = (struct xk_resv){ dquot_res() + iunlink_add_res(g) +
		max2(inode_res(g, 2) + buf_res(dirop_count(g), bs),
		     buf_res(4, ss) + buf_res(allocfree_blocks(g, 2), bs)),
		2 };
	r[R_SYMLINK] = (struct xk_resv){ icreate_res(g) +
				      buf_res(1, SYMLINK_MAXLEN), 3 };
	r[R_CREATE] = (struct xk_resv){ icreate_res(g), 2 };
	r[R_CREATE_TMPFILE] = (struct xk_resv){ dquot_res() +
		create_alloc_res(g) + iunlink_add_res(g), 2 };
	r[R_MKDIR] = (struct xk_resv){ icreate_res(g), 3 };
	r[R_IFREE] = (struct xk_resv){ dquot_res() + inode_res(g, 1) +
		buf_res(3, ss) + iunlink_remove_res(g) + ichunk_res(g, 0) +
		inobt_res(g) + finobt_res(g), 2 };
	r[R_ICHANGE] = (struct xk_resv){ dquot_res() + inode_res(g, 1) +
				      buf_res(1, ss), 0 };
	r[R_GROWDATA] = (struct xk_resv){ buf_res(3, ss) +
		buf_res(allocfree_blocks(g, 1), bs), 2 };
	r[R_ADDAFORK] = (struct xk_resv){ dquot_res() + inode_res(g, 1) +
		buf_res(2, ss) + buf_res(1, g->dirbsize) +
		buf_res(nextentadd(g, g->dir_fsbcount, 0) + 1, bs) +
		buf_res(allocfree_blocks(g, 1), bs), 2 };
	r[R_WRITEID] = (struct xk_resv){ inode_res(g, 1), 0 };
	r[R_ATTRINVAL] = (struct xk_resv){
		max2(inode_res(g, 1) + buf_res(g->bm_levels[1], bs),
		     buf_res(9, ss) + buf_res(allocfree_blocks(g, 4), bs)),
		1 };
	r[R_ATTRSETM] = (struct xk_resv){ dquot_res() + inode_res(g, 1) +
		buf_res(1, ss) + buf_res(DA_NODE_MAXDEPTH, bs), 3 };
	r[R_ATTRSETRT] = (struct xk_resv){ buf_res(1, ss) +
		buf_res(g->bm_levels[1], bs), 0 };
	r[R_ATTRRM] = (struct xk_resv){ dquot_res() +
		max2(inode_res(g, 1) + buf_res(DA_NODE_MAXDEPTH, bs) +
		     bs * g->bm_levels[1] + buf_res(g->bm_levels[0], 0),
		     buf_res(5, ss) + buf_res(allocfree_blocks(g, 2), bs)),
		3 };
	r[R_CLEARAGI] = (struct xk_resv){ buf_res(1, ss), 0 };
	r[R_GROWRTALLOC] = (struct xk_resv){ buf_res(2, ss) +
		buf_res(g->bm_levels[0], bs) + inode_res(g, 1) +
		buf_res(allocfree_blocks(g, 1), bs), 2 };
	r[R_GROWRTZERO] = (struct xk_resv){ buf_res(1, bs), 0 };
	/* No realtime section: the summary file is empty. */
	r[R_GROWRTFREE] = (struct xk_resv){ buf_res(1, ss) + inode_res(g, 2) +
		buf_res(1, bs) + buf_res(1, 0), 0 };
	r[R_QM_SETQLIM] = (struct xk_resv){ buf_res(1, DQ_DISK_BYTES), 1 };
	r[R_QM_DQALLOC] = (struct xk_resv){ write_res(g, minlog) +
		buf_res(1, bs - 1), LOGCOUNT_WRITE };
	r[R_SB] = (struct xk_resv){ buf_res(1, ss), 1 };
	r[R_FSYNCTS] = (struct xk_resv){ inode_res(g, 1), 0 };

	if (g->parent)
		pptr_resv(g, r);
	/* Rolls for the intent items rmapbt and reflink add. */
	if (g->reflink || g->rmapbt)
		adj++;
	if (g->reflink)
		adj++;
	if (g->rmapbt)
		adj++;
	r[R_ITRUNCATE].logcount += adj;
	r[R_WRITE].logcount += adj;
	r[R_QM_DQALLOC].logcount += adj;
	if (!minlog)
		return;
	/* The early reflink and rmapbt roll counts. */
	if (g->reflink) {
		r[R_WRITE].logcount = LOGCOUNT_REFLINK_OLD;
		r[R_ITRUNCATE].logcount = LOGCOUNT_REFLINK_OLD;
		r[R_QM_DQALLOC].logcount = LOGCOUNT_REFLINK_OLD;
	} else if (g->rmapbt) {
		r[R_WRITE].logcount = LOGCOUNT_WRITE;
		r[R_ITRUNCATE].logcount = LOGCOUNT_ITRUNCATE;
		r[R_QM_DQALLOC].logcount = LOGCOUNT_WRITE;
	}
}

void
xk_trans_resv_table(const struct xk_sb *sb, struct xk_resv *r)
{
	struct resv_geo g;

	geo_init(sb, 0, &g);
	resv_calc(&g, 0, r);
}

/*
 * The reservation the minimum log size is computed from: the one with
 * the largest total over its rolls, in the historical sizing described
 * at the top; *logcount gets its roll count.
 */
uint64_t
xk_trans_max_logres(const struct xk_sb *sb, unsigned int *logcount)
{
	struct resv_geo g;
	struct xk_resv r[R_NR], best = { 0, 0 };
	uint64_t space = 0, attr, nblks, size;
	/*
	 * From parent pointers on (a feature no kernel without the fixes
	 * mounts), the minimum uses the runtime reservations and counts the
	 * attribute value in blocks, not bytes.
	 */
	int fixed = !!(sb->features_incompat & XK_SB_FEAT_INCOMPAT_PARENT);
	int i;

	geo_init(sb, !fixed, &g);
	resv_calc(&g, !fixed, r);

	/*
	 * The attribute set sized for the largest local value: the attr
	 * btree path and its bmap updates, the value's blocks, and the
	 * bmap records for them, where the kernel passes the value's size
	 * in bytes as a block count (kept: it is what the kernel checks).
	 * The kernel takes the two attribute reservations from its runtime
	 * table; they do not depend on the historical sizing, so the
	 * values here are the same.  (With the fixes the size is rounded
	 * up to blocks first.)
	 */
	size = (g.bsize >> 1) + (g.bsize >> 2) - MAXNAMELEN - 1;
	nblks = DA_NODE_MAXDEPTH +
		DA_NODE_MAXDEPTH * nextentadd(&g, 1, 1);
	nblks += div_up(size, g.bsize);
	if (fixed)
		size = div_up(size, g.bsize);
	nblks += nextentadd(&g, size, 1);
	attr = r[R_ATTRSETM].logres + r[R_ATTRSETRT].logres * nblks;

	for (i = 0; i < R_NR; i++) {
		uint64_t total = r[i].logcount > 1 ?
				 r[i].logres * r[i].logcount : r[i].logres;

		if (space < total) {
			space = total;
			best = r[i];
		}
	}
	if (attr > space) {
		best = r[R_ATTRSETM];
		best.logres = attr;
	}
	*logcount = best.logcount;
	return best.logres;
}
