// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Block maps brought back from the device scan.  When a fork's bmbt
 * fails its walk (its root in the inode or a node block damaged) and no
 * usable rmapbt can give the map back (phase_rmap_forks.c), the leaves
 * of the old bmbt are usually still on disk: each says, in its header,
 * which inode owns it, where it is, and carries a CRC.  Their records
 * are the fork's map.  The scan's index gives the leaves naming the
 * inode, and the map is rebuilt from their records (rebuild_fork.c's
 * builder, as from the rmapbt): a regular file's data fork in place of
 * clearing the inode as xfs_repair does; an attr fork in place of
 * dropping it; a directory's data fork (reasm_dir_fork, from reasm.c)
 * in place of rewriting the directory from its blocks, when the leaves
 * give its whole map back.
 *
 * What is trusted, and why:
 *  1. a leaf only when the scan accepted it (UUID, own address, CRC,
 *     structure), it verifies again when read here with the inode as
 *     its owner and level 0, no other inode claims its block (the
 *     fork's own damaged walk may: it is the same tree), and the bnobt,
 *     when read whole, does not list it as free: a leaf the kernel
 *     freed (a tree that shrank, a file deleted whose inode number was
 *     reused) verifies but lies in free space;
 *  2. a record only when its extent lies inside one AG, its file range
 *     can exist, and its blocks are neither claimed by another inode
 *     (or metadata, or the inode's other fork, unless that fork is
 *     damaged too and the claim an extent its salvaged walk read) nor
 *     free; on a reflink filesystem, data blocks another file maps too
 *     are taken where the refcountbt (read whole) says they are shared;
 *  3. conflicts among the records: two leaves whose file ranges
 *     overlap cannot both be the fork's: the stale copy (a freed leaf
 *     left on disk) is the one with the older LSN, or, LSNs equal or
 *     missing, the one linked both ways into fewer of the leaves taken,
 *     and it is left out whole (stale_copies); identical records (the
 *     same leaf seen twice) count once; records whose file ranges still
 *     overlap, or whose blocks overlap, are all left out, since which
 *     one is the file's cannot be told (the range reads as a hole; the
 *     blocks become free space); across the forks planned in a pass,
 *     the older leaf's record gives way (settle_forks);
 *  4. which fork a leaf belongs to, which its header does not say, by
 *     what its records map (leaf_fits): an attr fork maps only xattr and
 *     dabtree blocks naming the inode, written; a directory's data fork
 *     only its directory and dabtree blocks, written; a regular file's
 *     data fork none of those where written; a few blocks of lost
 *     metadata (zeroed, or a directory or xattr magic that failed its
 *     checks: a lost dabtree node) beside the fork's own do not make a
 *     leaf fit neither.  A leaf that fits both or neither is refused
 *     (counted), but for one the data fork's own damaged walk reached
 *     from the inode's root: a regular file's data leaf by the
 *     structure itself, whose records over the inode's own metadata
 *     are bad records, left out (drop_own_meta); node blocks are reused for the new tree only when the
 *     other fork is not a btree, and never where a record kept maps
 *     them (unreuse_mapped);
 *  5. a directory's map only whole: every leaf taken, no record left
 *     out, no leaf missing, and every directory block of it the scan
 *     found (and that is ours to take) mapped, at the offset it states
 *     (dir_map_whole); otherwise reasm.c rewrites it from its blocks;
 *  6. a leaf naming another inode as its owner is taken only when it is
 *     linked both ways into the fork's own chain of leaves, its records
 *     fit the gap there, and no other inode can take it (adopt_leaves).
 *
 * What is lost is said: each sibling pointer of a leaf taken that names
 * a leaf not found is a range of the file whose map is gone (it reads
 * as a hole after the repair), and the records left out are counted.
 * No record at all: the inode is cleared (its attr fork dropped), as
 * before.  The file's size, owner and times are the inode's, kept (a
 * directory's size is where its data blocks end).
 *
 * The new bmbt goes into the old tree's blocks the scan found (its
 * leaves and nodes): the records are at most what those leaves held, so
 * fully packed leaves fit.  The blocks not reused are neither free nor
 * in use in the next pass, whose AG rebuild frees them.
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/btree.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/da.h>
#include <xfskit/format/dir.h>
#include <xfskit/init.h>
#include <xfskit/meta.h>
#include <xfskit/scan.h>

#include "repair.h"
#include "reasm.h"

/* A record found, and the leaf it came from. */
struct found_rec {
	struct xk_bmbt_irec	r;
	uint64_t		lsn;	/* its leaf's */
	uint32_t		leaf;	/* index in fork_work.leaves */
	uint8_t			drop;
};

/* A leaf taken: where it is, its siblings, the file range it maps. */
struct found_leaf {
	uint64_t	daddr;
	uint64_t	left, right;	/* daddr, or UINT64_MAX for none */
	uint64_t	first, end;	/* file offsets; first > end: empty */
	uint64_t	lsn;		/* of its last write (0: none) */
	uint8_t		gone;		/* a stale copy (stale_copies) */
};

struct fork_work {
	XK_VEC_OF(struct found_rec)	recs;
	XK_VEC_OF(struct found_leaf)	leaves;
	XK_VEC_OF(uint64_t)		old;	/* fsblock numbers */
	/* The inode's directory and xattr blocks the scan found, by daddr. */
	XK_VEC_OF(const struct xk_scan_ent *) own;
	uint64_t			own_maxbb;	/* their longest */
	int				whichfork;
	int				isdir;
	size_t				refused;	/* leaves of no one fork */
};

static void
work_free(struct fork_work *w)
{
	xk_vec_free(&w->recs.vec);
	xk_vec_free(&w->leaves.vec);
	xk_vec_free(&w->old.vec);
	xk_vec_free(&w->own.vec);
}

/* A daddr of the data device as an fsblock number (AG, block). */
static uint64_t
daddr_to_fsb(const struct xk_mount *mp, uint64_t daddr)
{
	uint64_t lin = daddr >> mp->g.blkbb_log;

	return xk_agb_to_fsb(mp, (uint32_t)(lin / mp->g.agblocks),
			     (uint32_t)(lin % mp->g.agblocks));
}

static int
cmp_off(const void *a, const void *b)
{
	const struct found_rec *x = a, *y = b;

	if (x->r.startoff != y->r.startoff)
		return (x->r.startoff > y->r.startoff) -
		       (x->r.startoff < y->r.startoff);
	if (x->r.startblock != y->r.startblock)
		return (x->r.startblock > y->r.startblock) -
		       (x->r.startblock < y->r.startblock);
	if (x->r.blockcount != y->r.blockcount)
		return (x->r.blockcount > y->r.blockcount) -
		       (x->r.blockcount < y->r.blockcount);
	return x->r.unwritten - y->r.unwritten;
}

static int
cmp_block(const void *a, const void *b)
{
	const struct found_rec *const *x = a, *const *y = b;

	return ((*x)->r.startblock > (*y)->r.startblock) -
	       ((*x)->r.startblock < (*y)->r.startblock);
}

static int
cmp_leaf_first(const void *a, const void *b)
{
	const struct found_leaf *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/* A record's extent: in one AG, a possible file range, ours to take. */
static int
rec_ok(const struct repair_ctx *rc, uint64_t ino, int whichfork,
       const struct xk_bmbt_irec *r)
{
	const struct xk_mount *mp = rc->mp;
	int attr = whichfork == XK_ATTR_FORK;

	return r->blockcount &&
	       xk_fsbext_valid(mp, r->startblock, r->blockcount) &&
	       xk_fileext_valid(mp, r->startoff, r->blockcount) &&
	       reasm_block_takeable(rc, xk_fsb_to_daddr(mp, r->startblock),
				    r->blockcount, ino,
				    attr ? XK_RMAP_OFF_ATTR_FORK : 0, !attr);
}

static int
cmp_ent_daddr(const void *a, const void *b)
{
	const struct xk_scan_ent *const *x = a, *const *y = b;

	return ((*x)->daddr > (*y)->daddr) - ((*x)->daddr < (*y)->daddr);
}

/* The scan's types a fork maps besides file data. */
static const uint8_t dir_types[] = {
	XK_SCAN_DIR3_BLOCK, XK_SCAN_DIR3_DATA, XK_SCAN_DIR3_LEAF1,
	XK_SCAN_DIR3_LEAFN, XK_SCAN_DIR3_FREE,
};
static const uint8_t attr_types[] = { XK_SCAN_ATTR3_LEAF, XK_SCAN_ATTR3_RMT };

/* The directory, xattr and dabtree blocks naming ino, by daddr. */
static int
owned_blocks(const struct xk_scan *res, uint64_t ino, struct fork_work *w)
{
	uint8_t types[sizeof(dir_types) + sizeof(attr_types) + 1];
	size_t nt = 0;

	memcpy(types, dir_types, sizeof(dir_types));
	nt += sizeof(dir_types);
	memcpy(types + nt, attr_types, sizeof(attr_types));
	nt += sizeof(attr_types);
	types[nt++] = XK_SCAN_DA3_NODE;
	for (size_t t = 0; t < nt; t++) {
		size_t first, count;

		xk_scan_lookup(res, types[t], ino, &first, &count);
		for (size_t i = first; i < first + count; i++) {
			const struct xk_scan_ent *e = &res->ents.v[i];

			if (xk_vec_push(&w->own.vec, &e, sizeof(e)))
				return -ENOMEM;
			if (e->len >> 9 > w->own_maxbb)
				w->own_maxbb = e->len >> 9;
		}
	}
	sort_v(w->own.v, w->own.n, sizeof(*w->own.v), cmp_ent_daddr);
	return 0;
}

/* What a range of a leaf's records covers (512-byte units). */
struct cover {
	uint64_t	dir, attr, node;
};

/* How much of daddr..daddr+len-1 the inode's own blocks cover, by kind. */
static void
range_cover(const struct fork_work *w, uint64_t daddr, uint64_t len,
	    struct cover *c)
{
	size_t lo = 0, hi = w->own.n;
	uint64_t at = daddr;	/* counted up to here (stale ones overlap) */

	memset(c, 0, sizeof(*c));
	/* The first block that may reach daddr: none is longer than maxbb. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->own.v[mid]->daddr + w->own_maxbb <= daddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < w->own.n && w->own.v[i]->daddr < daddr + len;
	     i++) {
		const struct xk_scan_ent *e = w->own.v[i];
		uint64_t from = e->daddr > at ? e->daddr : at;
		uint64_t to = e->daddr + (e->len >> 9) < daddr + len ?
			      e->daddr + (e->len >> 9) : daddr + len;
		uint64_t *kind = &c->dir;

		if (to <= from)
			continue;
		at = to;
		if (e->type == XK_SCAN_DA3_NODE)
			kind = &c->node;
		else if (memchr(attr_types, e->type, sizeof(attr_types)))
			kind = &c->attr;
		*kind += to - from;
	}
}

#define FITS_DATA	1
#define FITS_ATTR	2

/*
 * Whether the block at fsb is a damaged block of the inode's metadata
 * rather than file data: all zeros (a lost block), or a directory, xattr
 * or dabtree magic where its type keeps it (one the scan did not accept:
 * a bad CRC, a torn write).  1, 0, or an operational error.
 */
static int
lost_meta_block(struct xk_mount *mp, uint64_t fsb)
{
	static const uint32_t m32[] = {
		XK_DIR3_BLOCK_MAGIC, XK_DIR3_DATA_MAGIC, XK_DIR3_FREE_MAGIC,
		XK_ATTR3_RMT_MAGIC,
	};
	static const uint16_t m16[] = {	/* in the dabtree block info */
		XK_DIR3_LEAF1_MAGIC, XK_DIR3_LEAFN_MAGIC, XK_DA3_NODE_MAGIC,
		XK_ATTR3_LEAF_MAGIC,
	};
	const uint8_t *b;
	struct xk_buf *bp;
	int err, yes = 1;

	err = xk_buf_read(mp, xk_fsb_to_daddr(mp, fsb), mp->g.blocksize, NULL,
			  XK_READ_NOVERIFY, &bp);
	if (err)
		return xk_err_operational(err) ? err : 0;
	b = bp->data;
	for (uint32_t i = 0; i < bp->len && yes; i++)
		yes = !b[i];
	for (size_t k = 0; k < sizeof(m32) / sizeof(m32[0]); k++)
		yes |= xk_get_be32(b) == m32[k];
	for (size_t k = 0; k < sizeof(m16) / sizeof(m16[0]); k++)
		yes |= xk_get_be16(b + 8) == m16[k];
	xk_buf_release(bp);
	return yes;
}

/* Blocks of lost metadata a leaf may map for its fork to be told. */
#define LOST_META_MAX	8

/*
 * Whether every block of the records in gaps[] that the inode's own
 * blocks of kind attr (else dir) do not cover is lost metadata
 * (lost_meta_block), LOST_META_MAX at most.  1, 0 or an error.
 */
static int
gaps_lost_meta(struct xk_mount *mp, const struct fork_work *w,
	       const struct xk_bmbt_irec *recs, const uint16_t *gaps,
	       uint16_t ngaps, int attr)
{
	uint64_t bb = 1u << mp->g.blkbb_log, seen = 0;

	for (uint16_t g = 0; g < ngaps; g++) {
		const struct xk_bmbt_irec *r = &recs[gaps[g]];

		for (uint64_t k = 0; k < r->blockcount; k++) {
			struct cover c;
			int yes;

			range_cover(w, xk_fsb_to_daddr(mp, r->startblock + k),
				    bb, &c);
			if ((attr ? c.attr : c.dir) + c.node == bb)
				continue;
			if (++seen > LOST_META_MAX)
				return 0;
			yes = lost_meta_block(mp, r->startblock + k);
			if (yes <= 0)
				return yes;
		}
	}
	return 1;
}

/*
 * Which fork a leaf's records can belong to (a bmbt block does not say):
 * an attr fork maps only xattr and dabtree blocks of the inode, never
 * unwritten; a directory's data fork only its directory and dabtree
 * blocks, never unwritten; a regular file's data fork no such block,
 * written or not (stale metadata of its own under an unwritten extent is
 * possible, but so is another fork's block: refused, never guessed).
 * A block of the fork's metadata that was lost (zeroed, or failing its
 * checks, as a lost dabtree node) is covered by nothing the scan found:
 * records that map only such blocks beside the fork's own still fit it
 * (gaps_lost_meta), a regular file's data never being either.  Both or
 * neither: the leaf is refused.  The FITS_ bits, or an operational
 * error.
 */
static int
leaf_fits(struct xk_mount *mp, const struct fork_work *w,
	  const struct xk_bmbt_irec *recs, uint16_t n)
{
	int all_attr = 1, all_dir = 1, any_meta = 0, err;
	/* Records partly covered, by one kind only. */
	uint16_t *agaps, *dgaps, na = 0, nd = 0;

	agaps = xk_malloc(2 * (n ? n : 1) * sizeof(*agaps));
	if (!agaps)
		return -ENOMEM;
	dgaps = agaps + (n ? n : 1);
	for (uint16_t i = 0; i < n; i++) {
		const struct xk_bmbt_irec *r = &recs[i];
		uint64_t daddr, len;
		struct cover c;

		if (!r->blockcount ||
		    !xk_fsbext_valid(mp, r->startblock, r->blockcount)) {
			all_attr = all_dir = 0;
			continue;
		}
		daddr = xk_fsb_to_daddr(mp, r->startblock);
		len = r->blockcount << mp->g.blkbb_log;
		range_cover(w, daddr, len, &c);
		any_meta |= c.dir + c.attr + c.node != 0;
		if (r->unwritten) {
			all_attr = all_dir = 0;
			continue;
		}
		if (c.attr + c.node != len && !c.dir)
			agaps[na++] = i;
		if (c.dir + c.node != len && !c.attr)
			dgaps[nd++] = i;
		all_attr &= !c.dir;
		all_dir &= !c.attr;
	}
	/* A leaf mapping none of the inode's metadata is data. */
	if (!any_meta)
		all_attr = all_dir = 0;
	err = 0;
	if (all_attr && na)
		err = all_attr = gaps_lost_meta(mp, w, recs, agaps, na, 1);
	if (err >= 0 && all_dir && nd)
		err = all_dir = gaps_lost_meta(mp, w, recs, dgaps, nd, 0);
	free(agaps);
	if (err < 0)
		return err;
	if (w->isdir)
		return (all_dir ? FITS_DATA : 0) | (all_attr ? FITS_ATTR : 0);
	return (any_meta ? 0 : FITS_DATA) | (all_attr ? FITS_ATTR : 0);
}

/*
 * A bmbt leaf at daddr read and verified (owner: the inode it must name,
 * 0 for any): its siblings as daddrs, its records (malloc'd) and the
 * owner it names.  1, 0 when it is not a leaf that verifies, or an
 * operational error.
 */
static int
read_leaf(struct repair_ctx *rc, uint64_t daddr, uint64_t owner,
	  struct found_leaf *leaf, struct xk_bmbt_irec **recsp, uint16_t *np,
	  uint64_t *named)
{
	struct xk_mount *mp = rc->mp;
	uint64_t nullp = xk_btree_nullptr(&xk_bmbt_ops), sib;
	struct xk_bmbt_irec *recs;
	struct xk_buf *bp;
	uint16_t nrecs;
	int err;

	err = xk_buf_read_ctx(mp, daddr, mp->g.blocksize, xk_bmbt_ops.buf_ops,
			      -1, owner, 0, &bp);
	if (xk_err_operational(err))
		return err;
	if (err)
		return 0;
	if (xk_btree_block_level(bp->data) != 0) {
		xk_buf_release(bp);
		return 0;
	}
	*leaf = (struct found_leaf){ .daddr = daddr, .first = UINT64_MAX };
	sib = xk_btree_block_sib(&xk_bmbt_ops, bp->data, 0);
	leaf->left = sib == nullp ? UINT64_MAX : xk_fsb_to_daddr(mp, sib);
	sib = xk_btree_block_sib(&xk_bmbt_ops, bp->data, 1);
	leaf->right = sib == nullp ? UINT64_MAX : xk_fsb_to_daddr(mp, sib);
	*named = xk_be64_get(((const struct xk_btree_lblock *)
			      bp->data)->bb_owner);
	leaf->lsn = reasm_lsn(rc, xk_be64_get(((const struct xk_btree_lblock *)
					       bp->data)->bb_lsn));
	nrecs = xk_btree_block_numrecs(bp->data);
	recs = xk_malloc((nrecs ? nrecs : 1) * sizeof(*recs));
	if (!recs) {
		xk_buf_release(bp);
		return -ENOMEM;
	}
	for (uint16_t i = 0; i < nrecs; i++)
		xk_bmbt_rec_unpack(xk_btree_rec(&xk_bmbt_ops, bp->data, i),
				   &recs[i]);
	xk_buf_release(bp);
	if (nrecs) {
		leaf->first = recs[0].startoff;
		leaf->end = recs[nrecs - 1].startoff +
			    recs[nrecs - 1].blockcount;
	}
	*recsp = recs;
	*np = nrecs;
	return 1;
}

/*
 * A leaf's records onto w (those rec_ok refuses counted in *dropped, or
 * with all set none taken unless every one is ok: then 0 is returned),
 * and the leaf itself.  1 taken, 0 not, or -ENOMEM.
 */
static int
keep_leaf(struct repair_ctx *rc, uint64_t ino, struct fork_work *w,
	  const struct found_leaf *leaf, const struct xk_bmbt_irec *recs,
	  uint16_t nrecs, size_t *dropped, int all)
{
	uint64_t fsb = daddr_to_fsb(rc->mp, leaf->daddr);
	size_t was = w->recs.n;

	for (uint16_t i = 0; i < nrecs; i++) {
		struct found_rec fr = {
			.r = recs[i], .lsn = leaf->lsn,
			.leaf = (uint32_t)w->leaves.n,
		};

		if (!rec_ok(rc, ino, w->whichfork, &fr.r)) {
			if (all) {
				w->recs.n = was;
				return 0;
			}
			(*dropped)++;
			continue;
		}
		if (xk_vec_push(&w->recs.vec, &fr, sizeof(fr)))
			return -ENOMEM;
	}
	if (xk_vec_push(&w->leaves.vec, leaf, sizeof(*leaf)) ||
	    xk_vec_push(&w->old.vec, &fsb, sizeof(fsb)))
		return -ENOMEM;
	return 1;
}

/*
 * The fork a leaf's records fit, as leaf_fits says, is w's alone: 1, 0,
 * or an operational error.
 */
static int
fits_this(struct xk_mount *mp, const struct fork_work *w,
	  const struct xk_bmbt_irec *recs, uint16_t n, int *refuse)
{
	int fits = leaf_fits(mp, w, recs, n);
	int mine = w->whichfork == XK_ATTR_FORK ? FITS_ATTR : FITS_DATA;

	*refuse = 0;
	if (fits < 0)
		return fits;
	/* The other fork's leaf is no refusal; no one fork's is. */
	*refuse = fits != mine && fits != (FITS_DATA | FITS_ATTR) - mine;
	return fits == mine;
}

/*
 * Whether the leaf at daddr is, by the structure itself, the data fork's
 * of a regular file: its own damaged walk reached it from the inode's
 * root (the leaf then maps the file's data but for bad records).
 */
static int
own_data_leaf(const struct repair_ctx *rc, uint64_t ino, uint64_t daddr,
	      const struct fork_work *w)
{
	return w->whichfork == XK_DATA_FORK && !w->isdir &&
	       reasm_block_own(rc, daddr, ino, XK_RMAP_OFF_BMBT_BLOCK);
}

/*
 * A regular file's data leaf, as own_data_leaf says, less its records
 * that map the inode's own directory, xattr or dabtree blocks (a data
 * fork never does: each is a bad record, left out and counted), so that
 * one bad record does not cost the leaf's whole range.  1 (the leaf is
 * taken), or 0 when no record is left.
 */
static int
drop_own_meta(const struct xk_mount *mp, const struct fork_work *w,
	      struct xk_bmbt_irec *recs, uint16_t *np, size_t *dropped)
{
	uint16_t out = 0;

	for (uint16_t i = 0; i < *np; i++) {
		struct cover c;

		if (recs[i].blockcount &&
		    xk_fsbext_valid(mp, recs[i].startblock,
				    recs[i].blockcount)) {
			range_cover(w, xk_fsb_to_daddr(mp, recs[i].startblock),
				    recs[i].blockcount << mp->g.blkbb_log, &c);
			if (c.dir + c.attr + c.node) {
				(*dropped)++;
				continue;
			}
		}
		recs[out++] = recs[i];
	}
	*np = out;
	return out != 0;
}

/* One leaf the scan found: read, checked, its records listed. */
static int
take_leaf(struct repair_ctx *rc, uint64_t ino, const struct xk_scan_ent *e,
	  struct fork_work *w, size_t *dropped)
{
	struct found_leaf leaf;
	struct xk_bmbt_irec *recs = NULL;
	uint64_t named;
	uint16_t nrecs;
	int err, refuse;

	err = read_leaf(rc, e->daddr, ino, &leaf, &recs, &nrecs, &named);
	if (err <= 0)
		return err;
	err = fits_this(rc->mp, w, recs, nrecs, &refuse);
	if (err == 0 && refuse && own_data_leaf(rc, ino, e->daddr, w))
		err = drop_own_meta(rc->mp, w, recs, &nrecs, dropped);
	if (err <= 0) {
		w->refused += refuse;
		free(recs);
		return err;
	}
	err = keep_leaf(rc, ino, w, &leaf, recs, nrecs, dropped, 0);
	free(recs);
	return err < 0 ? err : 0;
}

static int
cmp_leaf_daddr(const void *a, const void *b)
{
	const struct found_leaf *x = a, *y = b;

	return (x->daddr > y->daddr) - (x->daddr < y->daddr);
}

/* The leaf taken at daddr (leaves sorted by daddr), or NULL. */
static const struct found_leaf *
leaf_at(const struct found_leaf *v, size_t n, uint64_t daddr)
{
	struct found_leaf key = { .daddr = daddr };

	return n ? bsearch(&key, v, n, sizeof(*v), cmp_leaf_daddr) : NULL;
}

/*
 * A leaf that names another inode as its owner, yet sits in the file's
 * own chain: a leaf taken names it as its right sibling, it names that
 * leaf as its left one and, as its right one, the next leaf taken (which
 * names it back) or none when nothing taken lies beyond; its records lie
 * inside the gap between the two, in order, fit this fork, and every
 * one maps blocks that no one claims and that are not free (a leaf of
 * another inode maps blocks that inode claims); its own block is claimed
 * by no one.  Its CRC, UUID and self address verify.  A leaf of another
 * file cannot be linked both ways into this file's chain unless it was
 * this file's: it is taken, and said so (f->adopted).  Records of the
 * leaves taken so far are in w; adopted ones join them.
 */
/*
 * Whether inode x may take, as its own, a leaf naming it: it is in the
 * pass's list with a fork lost, or not in it but named by an entry (a
 * file cleared for its fork alone, reasm_forks' candidate).  An inode in
 * use whose maps walked whole does not take leaves its tree does not
 * reach.
 */
static int
owner_may_take(const struct repair_ctx *rc, uint64_t x)
{
	const struct inode_info *ii;

	if (!xk_ino_valid(rc->mp, x))
		return 0;
	ii = inode_info_find(rc, x);
	if (ii)
		return ii->fork_lost || ii->afork_lost;
	for (size_t i = 0; i < rc->scan.nedges; i++)
		if (rc->scan.edges[i].child == x)
			return 1;
	return 0;
}

static int
adopt_leaves(struct repair_ctx *rc, uint64_t ino, struct fork_work *w,
	     size_t *adopted)
{
	struct found_leaf *byaddr;
	uint64_t kind = XK_RMAP_OFF_BMBT_BLOCK |
			(w->whichfork == XK_ATTR_FORK ? XK_RMAP_OFF_ATTR_FORK :
							0);
	size_t n = w->leaves.n;
	int err = 0;

	if (!n)
		return 0;
	byaddr = xk_malloc(n * sizeof(*byaddr));
	if (!byaddr)
		return -ENOMEM;
	memcpy(byaddr, w->leaves.v, n * sizeof(*byaddr));
	sort_v(byaddr, n, sizeof(*byaddr), cmp_leaf_daddr);
	for (size_t i = 0; i < n && !err; i++) {
		const struct found_leaf *l = &byaddr[i], *next = NULL;
		struct found_leaf cand;
		struct xk_bmbt_irec *recs = NULL;
		uint64_t named, limit = UINT64_MAX;
		uint16_t nrecs;
		int ok, refuse;

		if (l->right == UINT64_MAX || leaf_at(byaddr, n, l->right) ||
		    !reasm_block_takeable(rc, l->right, 1, ino, kind, 0))
			continue;
		err = read_leaf(rc, l->right, 0, &cand, &recs, &nrecs, &named);
		if (err <= 0)
			continue;
		err = 0;
		if (cand.right != UINT64_MAX) {
			next = leaf_at(byaddr, n, cand.right);
			limit = next ? next->first : 0;
		} else {
			/* Nothing taken may lie beyond the file's last leaf. */
			for (size_t k = 0; k < n; k++)
				if (byaddr[k].first != UINT64_MAX &&
				    byaddr[k].first >= l->end)
					limit = 0;
		}
		/*
		 * Taken by one inode only: the one whose own damaged walk
		 * reached it, or, reached by none, when the inode it names
		 * cannot take it.
		 */
		ok = named != ino && nrecs && cand.left == l->daddr &&
		     (reasm_block_own(rc, cand.daddr, ino, kind) ||
		      !owner_may_take(rc, named)) &&
		     (cand.right == UINT64_MAX ||
		      (next && next->left == cand.daddr)) &&
		     l->end <= cand.first && cand.end <= limit;
		if (ok) {
			ok = fits_this(rc->mp, w, recs, nrecs, &refuse);
			err = ok < 0 ? ok : 0;
		}
		for (uint16_t k = 1; ok > 0 && k < nrecs; k++)
			ok = recs[k].startoff >= recs[k - 1].startoff +
						 recs[k - 1].blockcount;
		if (ok > 0) {
			size_t unused = 0;

			err = keep_leaf(rc, ino, w, &cand, recs, nrecs,
					&unused, 1);
			if (err > 0) {
				(*adopted)++;
				info(rc, "        - inode %llu: the bmbt leaf "
				     "at daddr %llu names inode %llu as its "
				     "owner but is linked both ways between "
				     "two of this file's leaves and maps "
				     "file blocks %llu-%llu that no one "
				     "claims: taken\n",
				     (unsigned long long)ino,
				     (unsigned long long)cand.daddr,
				     (unsigned long long)named,
				     (unsigned long long)cand.first,
				     (unsigned long long)cand.end - 1);
			}
			err = err < 0 ? err : 0;
		}
		free(recs);
	}
	free(byaddr);
	return err;
}

/* How many taken leaves x is linked with both ways (v sorted by daddr). */
static int
links_both_ways(const struct found_leaf *v, size_t n,
		const struct found_leaf *x)
{
	const struct found_leaf *l = x->left == UINT64_MAX ? NULL :
				     leaf_at(v, n, x->left);
	const struct found_leaf *r = x->right == UINT64_MAX ? NULL :
				     leaf_at(v, n, x->right);

	return (l && l->right == x->daddr) + (r && r->left == x->daddr);
}

/*
 * Of two leaves whose file ranges overlap, the stale copy (a leaf the
 * kernel freed, left on disk where the bnobt cannot say it is free):
 * the one written earlier, by the LSNs both carry; else the one linked
 * both ways to fewer of the leaves taken.  NULL: it cannot be told.
 */
static struct found_leaf *
stale_of(const struct found_leaf *byaddr, size_t n, struct found_leaf *a,
	 struct found_leaf *b)
{
	int la, lb;

	if (a->lsn && b->lsn && a->lsn != b->lsn)
		return a->lsn < b->lsn ? a : b;
	la = links_both_ways(byaddr, n, a);
	lb = links_both_ways(byaddr, n, b);
	if (la != lb)
		return la < lb ? a : b;
	return NULL;
}

static int
cmp_leafp_first(const void *a, const void *b)
{
	const struct found_leaf *const *x = a, *const *y = b;

	return ((*x)->first > (*y)->first) - ((*x)->first < (*y)->first);
}

/*
 * Rule 3's first step: two leaves whose file ranges overlap cannot both
 * be the fork's; where one is a stale copy (stale_of), it is left out
 * whole, its records and its block (not reused), and counted; where it
 * cannot be told, both stay and settle_records leaves their
 * overlapping records out.  0 or -ENOMEM.
 */
static int
stale_copies(struct repair_ctx *rc, struct fork_work *w, size_t *stale)
{
	size_t n = w->leaves.n, out = 0;
	struct found_leaf *byaddr, **order, *far = NULL;

	if (n < 2)
		return 0;
	byaddr = xk_malloc(n * sizeof(*byaddr));
	order = xk_malloc(n * sizeof(*order));
	if (!byaddr || !order) {
		free(byaddr);
		free(order);
		return -ENOMEM;
	}
	memcpy(byaddr, w->leaves.v, n * sizeof(*byaddr));
	sort_v(byaddr, n, sizeof(*byaddr), cmp_leaf_daddr);
	for (size_t i = 0; i < n; i++)
		order[i] = &w->leaves.v[i];
	sort_v(order, n, sizeof(*order), cmp_leafp_first);
	for (size_t i = 0; i < n; i++) {
		struct found_leaf *l = order[i], *old;

		if (l->first > l->end)
			continue;	/* no record */
		if (far && l->first < far->end) {
			old = stale_of(byaddr, n, far, l);
			if (old) {
				old->gone = 1;
				(*stale)++;
				if (old == l)
					continue;
				far = NULL;
			}
		}
		if (!far || l->end > far->end)
			far = l;
	}
	free(order);
	free(byaddr);
	if (!*stale)
		return 0;
	/* The stale leaves' records, blocks and places go. */
	for (size_t i = 0; i < w->recs.n; i++)
		if (!w->leaves.v[w->recs.v[i].leaf].gone)
			w->recs.v[out++] = w->recs.v[i];
	w->recs.n = out;
	for (size_t i = 0; i < n; i++) {
		uint64_t fsb = daddr_to_fsb(rc->mp, w->leaves.v[i].daddr);

		if (!w->leaves.v[i].gone)
			continue;
		out = 0;
		for (size_t k = 0; k < w->old.n; k++)
			if (w->old.v[k] != fsb)
				w->old.v[out++] = w->old.v[k];
		w->old.n = out;
	}
	out = 0;
	for (size_t i = 0; i < n; i++)
		if (!w->leaves.v[i].gone)
			w->leaves.v[out++] = w->leaves.v[i];
	w->leaves.n = out;
	return 0;
}

/*
 * Mark every record whose range (file offsets, or blocks) starts inside
 * the furthest-reaching one before it, and that one; v sorted by that
 * range's start.
 */
static void
overlaps(struct found_rec **v, size_t n, int blocks)
{
	struct found_rec *far = NULL;
	uint64_t far_end = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t start = blocks ? v[i]->r.startblock :
					  v[i]->r.startoff;

		if (far && start < far_end)
			far->drop = v[i]->drop = 1;
		if (!far || start + v[i]->r.blockcount > far_end) {
			far = v[i];
			far_end = start + v[i]->r.blockcount;
		}
	}
}

/*
 * Rule 3: identical records once; overlapping file ranges or blocks
 * leave every record involved out.  Returns how many were left out, or
 * -ENOMEM.
 */
static int64_t
settle_records(struct fork_work *w)
{
	struct found_rec **byblock;
	size_t n = 0, out = 0;
	int64_t dropped = 0;

	sort_v(w->recs.v, w->recs.n, sizeof(*w->recs.v), cmp_off);
	for (size_t i = 0; i < w->recs.n; i++)
		if (!n || cmp_off(&w->recs.v[n - 1], &w->recs.v[i]))
			w->recs.v[n++] = w->recs.v[i];
	w->recs.n = n;
	byblock = xk_malloc((n ? n : 1) * sizeof(*byblock));
	if (!byblock)
		return -ENOMEM;
	/* File ranges, in offset order: one starting inside another. */
	for (size_t i = 0; i < n; i++)
		byblock[i] = &w->recs.v[i];
	overlaps(byblock, n, 0);
	/* Then the blocks, in block order. */
	sort_v(byblock, n, sizeof(*byblock), cmp_block);
	overlaps(byblock, n, 1);
	free(byblock);
	for (size_t i = 0; i < n; i++) {
		if (w->recs.v[i].drop)
			dropped++;
		else
			w->recs.v[out++] = w->recs.v[i];
	}
	w->recs.n = out;
	return dropped;
}

/* Whether a leaf at daddr was taken (leaves sorted by daddr). */
static int
leaf_taken(const uint64_t *daddrs, size_t n, uint64_t daddr)
{
	return bsearch(&daddr, daddrs, n, sizeof(*daddrs), cmp_u64) != NULL;
}

/*
 * The ranges whose leaves were not found: after a leaf whose right
 * sibling was not taken, up to the next leaf taken (or the end of the
 * file); before the first leaf when its left sibling was not taken.
 */
static int
find_holes(struct fork_work *w, struct reasm_fork *f)
{
	struct found_leaf *lv = w->leaves.v;
	size_t n = w->leaves.n, nh = 0;
	uint64_t *daddrs;

	daddrs = xk_malloc((n ? n : 1) * sizeof(*daddrs));
	f->holes = xk_malloc((n + 1) * sizeof(*f->holes));
	if (!daddrs || !f->holes) {
		free(daddrs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		daddrs[i] = lv[i].daddr;
	sort_v(daddrs, n, sizeof(*daddrs), cmp_u64);
	sort_v(lv, n, sizeof(*lv), cmp_leaf_first);
	if (n && lv[0].left != UINT64_MAX &&
	    !leaf_taken(daddrs, n, lv[0].left)) {
		f->holes[nh][0] = 0;
		f->holes[nh++][1] = lv[0].first;
	}
	for (size_t i = 0; i < n; i++) {
		if (lv[i].right == UINT64_MAX ||
		    leaf_taken(daddrs, n, lv[i].right))
			continue;
		f->holes[nh][0] = lv[i].first > lv[i].end ? lv[i].first :
				  lv[i].end;
		f->holes[nh++][1] = i + 1 < n ? lv[i + 1].first : UINT64_MAX;
	}
	free(daddrs);
	f->nholes = nh;
	return 0;
}

/* The record of w (pointers by block) mapping fsb, or NULL. */
static const struct found_rec *
rec_at_block(struct found_rec *const *byblock, size_t n, uint64_t fsb)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (byblock[mid]->r.startblock <= fsb)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && fsb < byblock[lo - 1]->r.startblock +
		       byblock[lo - 1]->r.blockcount)
		return byblock[lo - 1];
	return NULL;
}

/*
 * Whether the records of a directory's data fork map every directory
 * block of it the scan found that is ours to take (not free, claimed by
 * no one else), each whole and at the file offset it states where it
 * states one: then the map is the directory's, whole, and the check
 * pass reads the same entries from it as the scan's blocks give.
 * 1, 0, or -ENOMEM.
 */
static int
dir_map_whole(struct repair_ctx *rc, uint64_t ino, const struct fork_work *w)
{
	const struct xk_mount *mp = rc->mp;
	struct found_rec **byblock;
	int whole = w->recs.n != 0;

	byblock = xk_malloc((w->recs.n ? w->recs.n : 1) * sizeof(*byblock));
	if (!byblock)
		return -ENOMEM;
	for (size_t i = 0; i < w->recs.n; i++)
		byblock[i] = &w->recs.v[i];
	sort_v(byblock, w->recs.n, sizeof(*byblock), cmp_block);
	for (size_t i = 0; i < w->own.n && whole; i++) {
		const struct xk_scan_ent *e = w->own.v[i];
		uint64_t fsb = daddr_to_fsb(mp, e->daddr);
		uint64_t nblocks = e->len >> mp->g.blocklog;
		const struct found_rec *r;

		if (!memchr(dir_types, e->type, sizeof(dir_types)) ||
		    !reasm_block_takeable(rc, e->daddr, nblocks, ino, 0, 0))
			continue;
		r = rec_at_block(byblock, w->recs.n, fsb);
		whole = r && fsb + nblocks <= r->r.startblock +
						r->r.blockcount &&
			(e->offset == XK_SCAN_NO_OFFSET ||
			 e->offset == r->r.startoff + (fsb - r->r.startblock));
	}
	free(byblock);
	return whole;
}

/*
 * One fork of ino's map (f->attr says which) from the scan's bmbt blocks
 * into f (f->n 0: none found).  other_btree: the other fork is a btree
 * too, so a node block cannot be told to be this fork's (its leaves
 * can, by what they map): nodes are then not reused.
 */
static int
collect_fork(struct repair_ctx *rc, struct reasm_fork *f, int other_btree)
{
	const struct xk_scan *res = &rc->reasm->res;
	struct fork_work w = {
		.whichfork = f->attr ? XK_ATTR_FORK : XK_DATA_FORK,
		.isdir = f->dir,
	};
	uint64_t kind = XK_RMAP_OFF_BMBT_BLOCK |
			(f->attr ? XK_RMAP_OFF_ATTR_FORK : 0);
	size_t first, count, dropped = 0;
	int64_t conflicts;
	int err;

	err = owned_blocks(res, f->ino, &w);
	xk_scan_lookup(res, XK_SCAN_BMBT, f->ino, &first, &count);
	for (size_t i = first; i < first + count && !err; i++) {
		const struct xk_scan_ent *e = &res->ents.v[i];
		uint64_t fsb = daddr_to_fsb(rc->mp, e->daddr);

		if (!reasm_block_takeable(rc, e->daddr, 1, f->ino, kind, 0))
			continue;
		/* A node: its block may hold the new tree. */
		if (e->level && !other_btree)
			err = xk_vec_push(&w.old.vec, &fsb, sizeof(fsb));
		else if (!e->level)
			err = take_leaf(rc, f->ino, e, &w, &dropped);
	}
	if (!err)
		err = adopt_leaves(rc, f->ino, &w, &f->adopted);
	if (!err)
		err = stale_copies(rc, &w, &f->stale);
	conflicts = err ? 0 : settle_records(&w);
	if (!err && conflicts < 0)
		err = (int)conflicts;
	if (!err)
		err = find_holes(&w, f);
	if (!err && w.recs.n) {
		f->recs = xk_malloc(w.recs.n * sizeof(*f->recs));
		f->lsns = xk_malloc(w.recs.n * sizeof(*f->lsns));
		if (!f->recs || !f->lsns)
			err = -ENOMEM;
	}
	if (err) {
		work_free(&w);
		return err;
	}
	for (size_t i = 0; i < w.recs.n; i++) {
		xk_bmbt_rec_pack(&f->recs[i], &w.recs.v[i].r);
		f->lsns[i] = w.recs.v[i].lsn;
		f->blocks += w.recs.v[i].r.blockcount;
	}
	if (f->dir && !f->attr) {
		err = dir_map_whole(rc, f->ino, &w);
		if (err < 0) {
			work_free(&w);
			return err;
		}
		f->whole = err == 1 && !w.refused && !dropped && !conflicts &&
			   !f->nholes;
		err = 0;
	}
	f->n = w.recs.n;
	f->leaves = w.leaves.n;
	f->dropped = dropped + (size_t)conflicts;
	f->refused = w.refused;
	f->other = fork_blocks_claimed(rc, f->ino, f->attr ? XK_DATA_FORK :
							     XK_ATTR_FORK);
	sort_v(w.old.v, w.old.n, sizeof(*w.old.v), cmp_u64);
	f->nold = 0;
	for (size_t i = 0; i < w.old.n; i++)
		if (!f->nold || w.old.v[f->nold - 1] != w.old.v[i])
			w.old.v[f->nold++] = w.old.v[i];
	/* The heap vector's array is the plan's (freed with it). */
	f->old = w.old.v;
	w.old.v = NULL;
	w.old.n = 0;
	work_free(&w);
	return 0;
}

/* A fork whose map to rebuild. */
struct cand {
	uint64_t	ino;
	uint32_t	nlink;
	uint16_t	mode;
	uint8_t		listed;		/* in the pass's inode list */
	uint8_t		attr;		/* the attr fork */
	uint8_t		other_btree;	/* the other fork is a btree too */
};

static int
cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->ino != y->ino)
		return (x->ino > y->ino) - (x->ino < y->ino);
	return x->attr - y->attr;
}

/*
 * Whether an inode that failed its verifier fails only by its data fork
 * (a bmbt root that does not fit, a level beyond reason): its CRC is
 * right, and with the data fork emptied the inode verifies.  Such an
 * inode was cleared whole (its core cannot be salvaged around a fork
 * it cannot read); its core is sound, its map is what was lost.
 */
static int
only_fork_bad(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip)
{
	struct xk_mount *mp = rc->mp;
	struct xk_dinode *copy;
	struct xk_fail f;
	int err;

	memset(&f, 0, sizeof(f));
	if (xk_dinode_verify(mp, ino, dip, &f) != XK_ECORRUPT)
		return 0;
	copy = xk_malloc(mp->g.inodesize);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, dip, mp->g.inodesize);
	memset(xk_dfork_dptr(copy), 0, xk_dfork_dsize(copy, mp->g.inodesize));
	copy->di_format = XK_DINODE_FMT_EXTENTS;
	xk_dinode_set_nextents(copy, 0, xk_dinode_anextents(copy));
	xk_inode_init_crc(mp, copy);
	memset(&f, 0, sizeof(f));
	err = xk_dinode_verify_copy(mp, ino, copy, &f);
	free(copy);
	return err == 0;
}

/*
 * Whether a fork of ino is one to rebuild: a data fork of a regular file
 * (not metadata) in btree form on the data device, either in the pass's
 * list with its fork found bad (listed) or cleared for a bad fork alone
 * (only_fork_bad); an attr fork in btree form, listed with its map found
 * bad.  (A directory's data fork: reasm_dir_fork.)  c gets its mode and
 * link count.  1, 0, or an operational error.
 */
static int
candidate(struct repair_ctx *rc, uint64_t ino, int listed, int attr,
	  struct cand *c)
{
	struct xk_buf *bp;
	struct xk_dinode *dip;
	int err, yes;

	err = xk_inode_read(rc->mp, ino, XK_READ_SALVAGE, &bp, &dip);
	if (!bp)
		return xk_err_operational(err) ? err : 0;
	if (attr)
		yes = listed && dip->di_forkoff &&
		      dip->di_aformat == XK_DINODE_FMT_BTREE &&
		      !xk_dinode_is_metafile(dip);
	else
		yes = dip->di_format == XK_DINODE_FMT_BTREE &&
		      (xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFREG &&
		      !fork_is_rt(rc->mp, dip, XK_DATA_FORK) &&
		      !xk_dinode_is_metafile(dip);
	if (yes && !listed)
		yes = only_fork_bad(rc, ino, dip);
	*c = (struct cand){
		.ino = ino, .nlink = xk_be32_get(dip->di_nlink),
		.mode = xk_be16_get(dip->di_mode), .listed = (uint8_t)listed,
		.attr = (uint8_t)attr,
		.other_btree = attr ? dip->di_format == XK_DINODE_FMT_BTREE :
			       dip->di_forkoff &&
			       dip->di_aformat == XK_DINODE_FMT_BTREE,
	};
	xk_buf_release(bp);
	return yes;
}

/* ino's fork onto the list when it is a candidate; 0 or an error. */
static int
consider(struct repair_ctx *rc, uint64_t ino, int listed, int attr,
	 struct xk_vec *v)
{
	struct cand c;
	int yes = candidate(rc, ino, listed, attr, &c);

	if (yes <= 0)
		return yes;
	return xk_vec_push(v, &c, sizeof(c));
}

/* The candidates: listed ones first, then those entries name. */
static int
find_candidates(struct repair_ctx *rc, struct cand **vp, size_t *np)
{
	XK_VEC_OF(struct cand) v = { .vec = { 0 } };
	size_t out = 0;
	int err = 0;

	inodes_order(rc);
	for (size_t i = 0; i < rc->scan.ninodes && !err; i++) {
		const struct inode_info *ii = &rc->scan.inodes[i];

		if (ii->meta)
			continue;
		if (ii->fork_lost && (ii->mode & XK_S_IFMT) == XK_S_IFREG)
			err = consider(rc, ii->ino, 1, 0, &v.vec);
		/* A directory's data fork was planned by reasm_dirs. */
		if (!err && ii->afork_lost &&
		    !((ii->mode & XK_S_IFMT) == XK_S_IFDIR && ii->fork_lost &&
		      !reasm_fork_find(rc, ii->ino, XK_DATA_FORK)))
			err = consider(rc, ii->ino, 1, 1, &v.vec);
	}
	for (size_t i = 0; i < rc->scan.nedges && !err; i++) {
		const struct edge *e = &rc->scan.edges[i];

		if ((e->ftype == XK_DIR3_FT_REG_FILE ||
		     e->ftype == EDGE_NO_FTYPE) &&
		    xk_ino_valid(rc->mp, e->child) &&
		    !inode_info_find(rc, e->child) &&
		    inode_info_find(rc, e->parent))
			err = consider(rc, e->child, 0, 0, &v.vec);
	}
	if (err) {
		xk_vec_free(&v.vec);
		return err;
	}
	/* One each (a file with several names is named several times). */
	sort_v(v.v, v.n, sizeof(*v.v), cmp_cand);
	for (size_t i = 0; i < v.n; i++)
		if (!out || cmp_cand(&v.v[out - 1], &v.v[i]))
			v.v[out++] = v.v[i];
	*vp = v.v;
	*np = out;
	return 0;
}

/*
 * A file cleared for its fork alone comes back: it joins the pass's
 * inode list (as the repair will leave it, with and without -n).
 */
static int
join_list(struct repair_ctx *rc, const struct cand *c)
{
	const struct inode_info ii = {
		.ino = c->ino, .nlink = c->nlink, .mode = c->mode,
	};

	if (c->listed)
		return 0;
	if (xk_vec_push(&rc->scan.inode_vec, &ii, sizeof(ii)))
		return -ENOMEM;
	if (!rc->opt.no_modify)
		mark_in_use(rc, c->ino);
	return 0;
}

/* f onto the pass's plans (its arrays are then the state's). */
static int
fork_keep(struct reasm_state *st, const struct reasm_fork *f)
{
	struct reasm_fork *nv = xk_realloc(st->forks, (st->nforks + 1) *
					   sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	st->forks = nv;
	st->forks[st->nforks++] = *f;
	return 0;
}

static void
fork_drop(struct reasm_fork *f)
{
	free(f->recs);
	free(f->lsns);
	free(f->holes);
	free(f->old);
	memset(f, 0, sizeof(*f));
}

/* What a planned fork is, for the messages. */
static const char *
fork_what(const struct reasm_fork *f)
{
	if (f->attr)
		return "the attr fork map of inode";
	return f->dir ? "the block map of directory" : "the block map of file";
}

int
reasm_dir_fork(struct repair_ctx *rc, uint64_t ino, int *taken)
{
	struct reasm_fork f = { .ino = ino, .dir = 1 };
	struct xk_buf *bp;
	struct xk_dinode *dip;
	int err, other_btree;

	*taken = 0;
	err = xk_inode_read(rc->mp, ino, XK_READ_SALVAGE, &bp, &dip);
	if (!bp)
		return xk_err_operational(err) ? err : 0;
	other_btree = dip->di_forkoff &&
		      dip->di_aformat == XK_DINODE_FMT_BTREE;
	if (dip->di_format != XK_DINODE_FMT_BTREE ||
	    (xk_be16_get(dip->di_mode) & XK_S_IFMT) != XK_S_IFDIR ||
	    xk_dinode_is_metafile(dip)) {
		xk_buf_release(bp);
		return 0;
	}
	xk_buf_release(bp);
	err = collect_fork(rc, &f, other_btree);
	if (err)
		return err;
	if (!f.whole) {
		fork_drop(&f);
		return 0;
	}
	err = fork_keep(rc->reasm, &f);
	if (err) {
		fork_drop(&f);
		return err;
	}
	*taken = 1;
	if (!rc->opt.no_modify) {
		/* Its own map back: the next pass checks it as it is. */
		reasm_unplan(rc, ino, IFIX_CLEAR | IFIX_TRIM | IFIX_NBLOCKS |
			     IFIX_RMAP_FORK);
		plan_inode(rc, ino, IFIX_SCAN_FORK, 0);
	}
	return 0;
}

void
reasm_fork_would(struct repair_ctx *rc, const struct reasm_fork *f)
{
	char path[1024], losses[512];

	action_path(rc, f->ino, path, sizeof(path));
	reasm_fork_losses(f, losses, sizeof(losses));
	reasm_would(rc, f->attr ? "attr_fork_map" : "block_map", f->ino, path,
		    "would rebuild %s %llu (%s) from %zu bmbt leaves found by "
		    "the device scan (%llu extents, %llu blocks%s)",
		    fork_what(f), (unsigned long long)f->ino, path, f->leaves,
		    (unsigned long long)f->n, (unsigned long long)f->blocks,
		    losses);
}

/* A record of a planned fork, by its blocks. */
struct planned_rec {
	uint64_t		start, end;	/* fsblocks */
	uint64_t		lsn;		/* its leaf's */
	size_t			k;		/* st->forks[k] */
	uint64_t		i;		/* its recs[i] */
	uint8_t			drop;
};

static int
cmp_planned(const void *a, const void *b)
{
	const struct planned_rec *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

static int
cmp_planned_at(const void *a, const void *b)
{
	const struct planned_rec *x = a, *y = b;

	if (x->k != y->k)
		return (x->k > y->k) - (x->k < y->k);
	return (x->i > y->i) - (x->i < y->i);
}

/* Whether two planned records may map the same blocks: reflinked data. */
static int
may_share(const struct repair_ctx *rc, const struct reasm_state *st,
	  const struct planned_rec *x, const struct planned_rec *y)
{
	const struct reasm_fork *fx = &st->forks[x->k], *fy = &st->forks[y->k];
	uint64_t from = x->start > y->start ? x->start : y->start;
	uint64_t to = x->end < y->end ? x->end : y->end;

	return fx->ino != fy->ino && !fx->attr && !fy->attr &&
	       reasm_shared(rc, from, to - from, fx->ino, fy->ino);
}

/*
 * Two planned records on the same blocks: the one whose leaf was
 * written earlier, by the LSNs both leaves carry, is a stale leaf's (a
 * block's new owner writes its map after the old one let it go);
 * without two LSNs that differ, both are left out.
 */
static void
older_drops(struct planned_rec *x, struct planned_rec *y)
{
	if (x->lsn && y->lsn && x->lsn != y->lsn)
		(x->lsn < y->lsn ? x : y)->drop = 1;
	else
		x->drop = y->drop = 1;
}

/* Whether a record of v (sorted by start) kept maps fsb. */
static int
mapped_by(const struct planned_rec *v, size_t n, uint64_t maxlen,
	  uint64_t fsb)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].start <= fsb)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0 && v[lo].start + maxlen > fsb)
		if (!v[lo].drop && fsb < v[lo].end)
			return 1;
	return 0;
}

/*
 * The old bmbt blocks a planned fork would write its new tree into
 * (its leaves and nodes the scan found) must not be blocks a record
 * kept maps, of this fork or another: a stale node or leaf copy naming
 * the inode may lie in blocks another owner has since been given (as
 * data its lost map, planned here too, maps again).  Such a block is
 * not reused (counted), the record keeps it.
 */
static void
unreuse_mapped(struct reasm_state *st, const struct planned_rec *v, size_t n)
{
	uint64_t maxlen = 0;

	for (size_t i = 0; i < n; i++)
		if (v[i].end - v[i].start > maxlen)
			maxlen = v[i].end - v[i].start;
	for (size_t k = 0; k < st->nforks; k++) {
		struct reasm_fork *f = &st->forks[k];
		uint64_t out = 0;

		for (uint64_t i = 0; i < f->nold; i++) {
			if (mapped_by(v, n, maxlen, f->old[i])) {
				f->unreused++;
				continue;
			}
			f->old[out++] = f->old[i];
		}
		f->nold = out;
	}
}

/*
 * The forks planned this pass (directories, files, attr forks) checked
 * against one another: each was checked against what the pass claims,
 * not against the others, so two may take the same blocks (the leaves of
 * two forks of one inode, a stale leaf).  Of two records whose blocks
 * overlap, but for reflinked data, the one from the leaf with the older
 * LSN is left out (older_drops), or both where that cannot be told;
 * counted.  Then no fork writes its new tree into a block a record
 * kept maps (unreuse_mapped).  0 or -ENOMEM.
 */
static int
settle_forks(struct repair_ctx *rc, struct reasm_state *st)
{
	XK_VEC_OF(struct planned_rec) v = { .vec = { 0 } };
	size_t live = 0, at = 0;

	for (size_t k = 0; k < st->nforks; k++)
		for (uint64_t i = 0; i < st->forks[k].n; i++) {
			struct xk_bmbt_irec r;
			struct planned_rec p = { .k = k, .i = i };

			xk_bmbt_rec_unpack(&st->forks[k].recs[i], &r);
			p.start = r.startblock;
			p.end = r.startblock + r.blockcount;
			p.lsn = st->forks[k].lsns[i];
			if (xk_vec_push(&v.vec, &p, sizeof(p))) {
				xk_vec_free(&v.vec);
				return -ENOMEM;
			}
		}
	sort_v(v.v, v.n, sizeof(*v.v), cmp_planned);
	for (size_t i = 0; i < v.n; i++) {
		/* Those before that end before this start are done with. */
		while (live < i && v.v[live].end <= v.v[i].start)
			live++;
		for (size_t j = live; j < i; j++)
			if (v.v[j].end > v.v[i].start &&
			    !may_share(rc, st, &v.v[j], &v.v[i]))
				older_drops(&v.v[j], &v.v[i]);
	}
	unreuse_mapped(st, v.v, v.n);
	/* Back in fork and record order: drop the marked ones. */
	sort_v(v.v, v.n, sizeof(*v.v), cmp_planned_at);
	for (size_t k = 0; k < st->nforks; k++) {
		struct reasm_fork *f = &st->forks[k];
		uint64_t out = 0;

		f->blocks = 0;
		for (uint64_t i = 0; i < f->n; i++, at++) {
			struct xk_bmbt_irec r;

			if (v.v[at].drop) {
				f->dropped++;
				continue;
			}
			xk_bmbt_rec_unpack(&f->recs[i], &r);
			f->blocks += r.blockcount;
			f->lsns[out] = f->lsns[i];
			f->recs[out++] = f->recs[i];
		}
		f->n = out;
	}
	xk_vec_free(&v.vec);
	return 0;
}

int
reasm_forks(struct repair_ctx *rc)
{
	struct reasm_state *st = rc->reasm;
	struct cand *cand = NULL;
	size_t ncand = 0, joined = 0, from = st ? st->nforks : 0;
	int err;

	if (rc->opt.scan == REPAIR_SCAN_NEVER || rmaps_usable(rc))
		return 0;
	err = find_candidates(rc, &cand, &ncand);
	if (!err && ncand && !st) {
		st = xk_calloc(1, sizeof(*st));
		if (!st)
			err = -ENOMEM;
		rc->reasm = st;
	}
	if (!err && ncand) {
		char why[96];

		snprintf(why, sizeof(why), "%zu fork%s whose block map is "
			 "lost", ncand, ncand == 1 ? "" : "s");
		err = reasm_scan(rc, why);
		if (err) {
			free(cand);
			return err;
		}
	}
	for (size_t i = 0; i < ncand && !err; i++) {
		struct reasm_fork f = {
			.ino = cand[i].ino, .attr = cand[i].attr,
			.dir = (cand[i].mode & XK_S_IFMT) == XK_S_IFDIR,
		};
		char path[1024];

		err = collect_fork(rc, &f, cand[i].other_btree);
		if (err)
			break;
		if (!f.n) {
			action_path(rc, f.ino, path, sizeof(path));
			info(rc, "        - %s %llu (%s): no bmbt leaf of it "
			     "found by the device scan\n",
			     f.attr ? "the attr fork of inode" : "file",
			     (unsigned long long)f.ino, path);
			fork_drop(&f);
			continue;
		}
		err = fork_keep(st, &f);
		if (err) {
			fork_drop(&f);
			break;
		}
		/* An attr fork alone leaves the inode where it is. */
		if (!f.attr) {
			err = join_list(rc, &cand[i]);
			joined += !cand[i].listed;
		}
		if (err || rc->opt.no_modify)
			continue;
		/* A salvaged core (IFIX_CORE) is still rewritten. */
		if (f.attr) {
			reasm_unplan(rc, f.ino, IFIX_NOATTR | IFIX_RMAP_AFORK |
				     IFIX_ATRIM);
			plan_inode(rc, f.ino, IFIX_SCAN_AFORK, 0);
		} else {
			reasm_unplan(rc, f.ino, IFIX_CLEAR | IFIX_RMAP_FORK);
			plan_inode(rc, f.ino, IFIX_SCAN_FORK, 0);
		}
	}
	if (joined)
		inodes_order(rc);
	if (!err && st && st->nforks)
		err = settle_forks(rc, st);
	for (size_t i = from; st && rc->opt.no_modify && i < st->nforks && !err;
	     i++)
		reasm_fork_would(rc, &st->forks[i]);
	free(cand);
	if (err)
		return rc->found.error ? rc->found.error :
		       repair_error(rc, err, "rebuilding block maps from the "
				    "device scan");
	if (rc->opt.no_modify && st)
		reasm_forks_free(st);
	return rc->found.error;
}
