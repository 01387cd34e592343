// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Editing the attributes of an inode already on disk (build_attr.h):
 * the whole attr fork is read into a list, the caller changes the list,
 * and the fork is written anew through the same layout code that builds
 * attributes for new files (attr.c, attr_fmt.c).  Rewriting whole forks
 * instead of editing leaf entries in place keeps one writer of attr
 * blocks; the price is that the layout may differ from what the
 * kernel's in-place edit would leave, never the content.
 *
 * The old fork's blocks go back to the builder's free space (with their
 * reverse mappings) before the new ones are allocated; everything stays
 * in the builder and the buffer cache until its commit and flush, so an
 * edit that fails leaves the device untouched.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build_attr.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/log.h>
#include <xfskit/format/symlink.h>

#include "attr_fmt.h"
#include "attr_read.h"
#include "write_priv.h"

/* ---- the list ---- */

void
xk_attr_list_free(struct xk_attr_list *l)
{
	xk_vec_free(&l->vec);
	xk_vec_pool_free(&l->bytes);
}

int
xk_attr_list_add(struct xk_attr_list *l, uint8_t flags, const uint8_t *name,
		 uint8_t namelen, const uint8_t *value, uint32_t valuelen)
{
	struct xk_bld_xattr x = {
		.flags = flags, .namelen = namelen, .valuelen = valuelen,
	};
	const void *at;
	int err;

	/* Most lists hold a few attributes: start small. */
	if (!l->vec.first)
		l->vec.first = 16;
	err = xk_vec_reserve(&l->vec, l->n + 1, sizeof(x));

	/* Name and value side by side: one string of the pool. */
	if (!err)
		err = xk_vec_pool_add(&l->bytes, name, namelen, &at);
	if (err)
		return err;
	x.name = at;
	if (valuelen) {
		err = xk_vec_pool_add(&l->bytes, value, valuelen, &at);
		if (err)
			return err;
		x.value = at;
	}
	l->xa[l->n++] = x;
	return 0;
}

size_t
xk_attr_list_remove(struct xk_attr_list *l, uint8_t flags, const uint8_t *name,
		    uint8_t namelen, const uint8_t *value, uint32_t valuelen)
{
	size_t out = 0, gone = 0;

	/* The bytes of those removed stay in the pool until it is freed. */
	for (size_t i = 0; i < l->n; i++) {
		struct xk_bld_xattr *x = &l->xa[i];
		int match = x->flags == flags && x->namelen == namelen &&
			    !memcmp(x->name, name, namelen) &&
			    (!value || (x->valuelen == valuelen &&
					(!valuelen ||
					 !memcmp(x->value, value, valuelen))));

		if (match) {
			gone++;
			continue;
		}
		l->xa[out++] = *x;
	}
	l->n = out;
	return gone;
}

/* ---- the attr fork's block map ---- */

static void
af_bad(struct afork *af, int err, const char *why)
{
	if (!af->err) {
		af->err = err;
		af->why = why;
	}
}

void
af_free(struct afork *af)
{
	free(af->ext);
	free(af->bmbt);
	af->ext = NULL;
	af->bmbt = NULL;
}

/*
 * Load a fork's mappings (extents or btree format; others: none) and its
 * bmbt blocks.  Rules: the fork reader's checks of each mapping (fork.h),
 * and 5. every mapping is written (attr forks have no unwritten extents).
 */
static int
fork_load(struct xk_mount *mp, uint64_t ino, const struct xk_dinode *dip,
	  int whichfork, struct afork *af)
{
	struct bld_fork_read fr;
	int err;

	memset(af, 0, sizeof(*af));
	af->mp = mp;
	af->ino = ino;
	err = bld_fork_read(mp, ino, dip, whichfork, XK_FORK_CHECK, &fr);
	if (err) {
		af_bad(af, err, bld_fork_why(fr.check, err));
		bld_fork_read_free(&fr);
		return af->err;
	}
	for (uint64_t i = 0; i < fr.next; i++) {
		if (fr.ext[i].fsbno & BLD_EXT_UNWRITTEN) {
			af_bad(af, XK_ECORRUPT, "a mapping of its fork is "
			       "unwritten");
			bld_fork_read_free(&fr);
			return af->err;
		}
	}
	af->ext = fr.ext;
	af->next = fr.next;
	af->ext_alloc = fr.alloc;
	af->nblocks = fr.nblocks;
	af->bmbt = fr.bmbt;
	af->nbmbt = fr.nbmbt;
	af->bmbt_alloc = fr.bmbt_alloc;
	fr.ext = NULL;
	fr.bmbt = NULL;
	bld_fork_read_free(&fr);
	return 0;
}

int
af_load(struct xk_mount *mp, uint64_t ino, const struct xk_dinode *dip,
	struct afork *af)
{
	return fork_load(mp, ino, dip, XK_ATTR_FORK, af);
}

int
xk_fork_mappings(struct xk_mount *mp, uint64_t ino,
		 const struct xk_dinode *dip, int whichfork,
		 struct xk_bld_ext **ext, uint64_t *n, const char **why)
{
	struct afork af;
	int err = fork_load(mp, ino, dip, whichfork, &af);

	*why = af.why;
	free(af.bmbt);
	if (err) {
		free(af.ext);
		*ext = NULL;
		*n = 0;
		return err;
	}
	*ext = af.ext;
	*n = af.next;
	return 0;
}

/* The filesystem block of attr block lblk, or XK_NULLFSBLOCK. */
uint64_t
af_map(const struct afork *af, uint64_t lblk)
{
	size_t lo = 0, hi = af->next;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct xk_bld_ext *e = &af->ext[mid];

		if (lblk < e->loff)
			hi = mid;
		else if (lblk >= e->loff + e->len)
			lo = mid + 1;
		else
			return e->fsbno + (lblk - e->loff);
	}
	return XK_NULLFSBLOCK;
}

/* ---- reading ---- */

int
ar_bad(struct aread *ar, int err, const char *why)
{
	if (!ar->why)
		ar->why = why;
	return err;
}

/* Read attr block lblk through ops (NULL: raw, to learn its magic). */
int
ar_read(struct aread *ar, uint64_t lblk, const struct xk_buf_ops *ops,
	struct xk_buf **bpp)
{
	uint64_t fsb = af_map(ar->af, lblk);
	int err;

	if (fsb == XK_NULLFSBLOCK)
		return ar_bad(ar, XK_ECORRUPT, "a block its attributes need "
			      "is not mapped");
	err = xk_buf_read_ctx(ar->mp, xk_fsb_to_daddr(ar->mp, fsb), ar->bs,
			      ops, -1, ar->ino, ops ? 0 : XK_READ_NOVERIFY,
			      bpp);
	if (err)
		return ar_bad(ar, err, "an attribute block cannot be read "
			      "or fails its verifier");
	return 0;
}

/* The short form in the inode (rules as the short-form verifier's). */
static int
read_sf(struct aread *ar, const struct xk_dinode *dip)
{
	const uint8_t *base = xk_dfork_aptr(dip);
	unsigned int asize = xk_dfork_asize(dip, ar->mp->g.inodesize);
	const struct xk_attr_sf_hdr *h = (const void *)base;
	unsigned int tot, off = sizeof(*h);

	if (asize < sizeof(*h))
		return ar_bad(ar, XK_ECORRUPT, "its short-form attr fork "
			      "has no room for its header");
	tot = xk_be16_get(h->totsize);
	if (tot < sizeof(*h) || tot > asize)
		return ar_bad(ar, XK_ECORRUPT, "its short-form attr fork "
			      "has a bad size");
	for (unsigned int i = 0; i < h->count; i++) {
		const struct xk_attr_sf_entry *e = (const void *)(base + off);
		int err;

		if (off + sizeof(*e) > tot ||
		    off + xk_attr_sf_entsize(e) > tot || e->namelen == 0)
			return ar_bad(ar, XK_ECORRUPT, "a short-form "
				      "attribute runs past the fork");
		err = xk_attr_list_add(ar->l,
				       e->flags & XK_ATTR_NSP_ONDISK_MASK,
				       e->nameval, e->namelen,
				       e->nameval + e->namelen, e->valuelen);
		if (err)
			return ar_bad(ar, err, "no memory");
		off += xk_attr_sf_entsize(e);
	}
	return 0;
}

/*
 * A remote value: rmtblks blocks from valueblk, each carrying its piece
 * after a header.  Rules: every block mapped; the headers' offsets run
 * in order and their byte counts add up to valuelen.
 */
int
read_rmt(struct aread *ar, uint32_t valueblk, uint32_t valuelen,
	 uint8_t *out)
{
	uint32_t nblk = xk_attr3_rmt_blocks(ar->bs, valuelen), done = 0;
	uint32_t space = xk_attr3_rmt_buf_space(ar->bs);

	for (uint32_t k = 0; k < nblk; k++) {
		const struct xk_attr3_rmt_hdr *h;
		struct xk_buf *bp;
		uint32_t off, bytes;
		int err = ar_read(ar, (uint64_t)valueblk + k,
				  &xk_attr3_rmt_buf_ops, &bp);

		if (err)
			return err;
		h = (const void *)bp->data;
		off = xk_be32_get(h->rm_offset);
		bytes = xk_be32_get(h->rm_bytes);
		if (off != done || bytes > space || bytes > valuelen - done ||
		    (bytes == 0 && done < valuelen)) {
			xk_buf_release(bp);
			return ar_bad(ar, XK_ECORRUPT, "a remote attribute "
				      "value's pieces do not add up");
		}
		memcpy(out + done, bp->data + sizeof(*h), bytes);
		done += bytes;
		xk_buf_release(bp);
	}
	if (done != valuelen)
		return ar_bad(ar, XK_ECORRUPT, "a remote attribute value is "
			      "shorter than its length");
	return 0;
}

/* One leaf's complete entries, in entry order. */
static int
read_leaf(struct aread *ar, struct xk_buf *bp)
{
	const struct xk_attr3_leaf_hdr *h = (const void *)bp->data;
	const struct xk_attr_leaf_entry *ents = xk_attr3_leaf_entryp(h);
	uint32_t count = xk_be16_get(h->count);
	uint8_t *val = NULL;
	int err = 0;

	if (sizeof(*h) + (uint64_t)count * sizeof(*ents) > ar->bs)
		return ar_bad(ar, XK_ECORRUPT, "an attr leaf's entries run "
			      "past its block");
	for (uint32_t i = 0; i < count && !err; i++) {
		uint32_t idx = xk_be16_get(ents[i].nameidx);
		uint8_t fl = ents[i].flags;
		const uint8_t *rec = bp->data + idx;

		if (fl & XK_ATTR_INCOMPLETE)
			continue;	/* not (or no longer) an attribute */
		if (fl & XK_ATTR_LOCAL) {
			const struct xk_attr_leaf_name_local *n =
				(const void *)rec;
			uint32_t vl;

			if (idx + 3u > ar->bs) {
				err = ar_bad(ar, XK_ECORRUPT, "an attr name "
					     "record runs past its block");
				break;
			}
			vl = xk_be16_get(n->valuelen);
			if (n->namelen == 0 ||
			    idx + 3u + n->namelen + vl > ar->bs) {
				err = ar_bad(ar, XK_ECORRUPT, "an attr name "
					     "record runs past its block");
				break;
			}
			err = xk_attr_list_add(ar->l,
					       fl & XK_ATTR_NSP_ONDISK_MASK,
					       n->nameval, n->namelen,
					       n->nameval + n->namelen, vl);
			if (err)
				ar_bad(ar, err, "no memory");
		} else {
			const struct xk_attr_leaf_name_remote *n =
				(const void *)rec;
			uint32_t vl, vb;

			if (idx + 9u > ar->bs ||
			    idx + 9u + n->namelen > ar->bs ||
			    n->namelen == 0) {
				err = ar_bad(ar, XK_ECORRUPT, "an attr name "
					     "record runs past its block");
				break;
			}
			vl = xk_be32_get(n->valuelen);
			vb = xk_be32_get(n->valueblk);
			if (vl > XK_XATTR_SIZE_MAX) {
				err = ar_bad(ar, XK_ECORRUPT, "a remote "
					     "attribute value is too large");
				break;
			}
			val = malloc(vl ? vl : 1);
			if (!val) {
				err = ar_bad(ar, -ENOMEM, "no memory");
				break;
			}
			err = read_rmt(ar, vb, vl, val);
			if (!err) {
				err = xk_attr_list_add(ar->l,
					fl & XK_ATTR_NSP_ONDISK_MASK,
					n->name, n->namelen, val, vl);
				if (err)
					ar_bad(ar, err, "no memory");
			}
			free(val);
			val = NULL;
		}
	}
	return err;
}

/*
 * Leaf or node form: block 0 is the only leaf or the dabtree root.
 * Down the leftmost path to the first leaf, then along the leaves'
 * forward links; a loop is caught by counting leaves against the
 * blocks the fork maps.
 */
static int
read_tree(struct aread *ar)
{
	uint64_t lblk = 0, nleaves = 0;
	struct xk_buf *bp;
	int depth = 0, err;

	for (;;) {
		uint16_t magic;
		const struct xk_da3_node_hdr *nh;

		err = ar_read(ar, lblk, NULL, &bp);
		if (err)
			return err;
		magic = xk_get_be16(bp->data + 8);
		xk_buf_release(bp);
		if (magic == XK_ATTR3_LEAF_MAGIC)
			break;
		if (magic != XK_DA3_NODE_MAGIC ||
		    ++depth >= XK_DA_NODE_MAXDEPTH)
			return ar_bad(ar, XK_ECORRUPT, "its attr fork holds "
				      "no leaf where one belongs, or is too "
				      "deep");
		err = ar_read(ar, lblk, &xk_da3_node_buf_ops, &bp);
		if (err)
			return err;
		nh = (const void *)bp->data;
		if (xk_be16_get(nh->count) == 0) {
			xk_buf_release(bp);
			return ar_bad(ar, XK_ECORRUPT, "an attr node block "
				      "is empty");
		}
		lblk = xk_be32_get(xk_da3_node_entry(nh, 0)->before);
		xk_buf_release(bp);
	}
	for (;;) {
		const struct xk_da3_blkinfo *info;

		if (++nleaves > ar->af->nblocks)
			return ar_bad(ar, XK_ECORRUPT, "the attr leaves' "
				      "links loop");
		err = ar_read(ar, lblk, &xk_attr3_leaf_buf_ops, &bp);
		if (err)
			return err;
		err = read_leaf(ar, bp);
		info = (const void *)bp->data;
		lblk = xk_be32_get(info->hdr.forw);
		xk_buf_release(bp);
		if (err || lblk == 0)
			return err;
	}
}

int
xk_attr_list_read(struct xk_mount *mp, uint64_t ino,
		  const struct xk_dinode *dip, struct xk_attr_list *l,
		  const char **why)
{
	struct afork af;
	struct aread ar = { .mp = mp, .ino = ino, .af = &af, .l = l,
			    .bs = mp->g.blocksize };
	int err;

	*why = NULL;
	if (!dip->di_forkoff)
		return 0;		/* no attr fork: no attributes */
	switch (dip->di_aformat) {
	case XK_DINODE_FMT_LOCAL:
		err = read_sf(&ar, dip);
		break;
	case XK_DINODE_FMT_EXTENTS:
	case XK_DINODE_FMT_BTREE:
		err = af_load(mp, ino, dip, &af);
		if (err) {
			ar.why = af.why;
		} else if (af.next) {
			err = read_tree(&ar);
		}
		af_free(&af);
		break;
	default:
		err = ar_bad(&ar, XK_ECORRUPT, "its attr fork has an unknown "
			     "format");
		break;
	}
	*why = ar.why;
	return err;
}

/* ---- rewriting ---- */

/* Give the old fork's blocks back, reverse mappings first. */
static int
release_fork(struct xk_bld *b, const struct afork *af)
{
	struct xk_mount *mp = b->mp;

	for (uint64_t i = 0; i < af->next + af->nbmbt; i++) {
		int bmbt = i >= af->next;
		uint64_t fsb = bmbt ? af->bmbt[i - af->next] :
				      af->ext[i].fsbno;
		uint32_t len = bmbt ? 1 : af->ext[i].len;
		uint32_t agno = xk_fsb_to_agno(mp, fsb);
		int err;

		if (agno >= b->agcount || !xk_fsbext_valid(mp, fsb, len))
			return XK_ECORRUPT;
		if (mp->g.has_rmapbt) {
			err = xk_bld_rmap_update(b, XK_RMAP_EXTENT_UNMAP,
						 af->ino, fsb,
						 bmbt ? 0 : af->ext[i].loff,
						 len, XK_BLD_ATTR_FORK |
						 (bmbt ? XK_BLD_BMBT : 0));
			if (err)
				return err;
		}
		err = bld_free_add(&b->ags[agno], xk_fsb_to_agbno(mp, fsb),
				   len);
		if (err)
			return err == -EEXIST ? XK_ECORRUPT : err;
		b->ags[agno].dirty = 1;
	}
	return 0;
}

static uint32_t
round8(uint32_t v)
{
	return (v + 7) & ~7u;
}

/*
 * What the kernel counts as the data fork's need when it adds an attr
 * fork: its bytes in the inode, extents past the default offset only a
 * bmbt root (they become a btree), never less than a root of 3 pointers.
 */
static uint64_t
late_dsize(const struct xk_mount *mp, const struct xk_dinode *dip)
{
	uint64_t dsize;

	switch (dip->di_format) {
	case XK_DINODE_FMT_LOCAL:
		dsize = xk_be64_get(dip->di_size);
		break;
	case XK_DINODE_FMT_EXTENTS:
		dsize = xk_dinode_nextents(dip) * sizeof(struct xk_bmbt_rec);
		if (dsize > xk_dinode_default_forkoff(mp->g.inodesize) * 8u)
			dsize = 0;
		break;
	case XK_DINODE_FMT_BTREE:
		dsize = xk_bmdr_space_calc(xk_be16_get(((const struct
				xk_bmdr_block *)xk_dfork_dptr(dip))->bb_numrecs));
		break;
	default:
		return UINT64_MAX;
	}
	return dsize < xk_bmdr_space_calc(3) ? xk_bmdr_space_calc(3) : dsize;
}

/*
 * Where the kernel puts an attr fork it adds to an inode without one
 * (xfs_repair 7.2 adding parent pointers does the same), for short-form
 * attributes of sfbytes and a data fork needing dsize (late_dsize): as
 * far up as leaves them their room, never past room for an attr bmbt
 * root of 2 pointers, never below what the data fork needs.  Past that
 * bound, local data moves out of the inode (local_moves_out).  0 when
 * the attributes find no room: the default placement then.
 */
static uint32_t
late_forkoff(const struct xk_mount *mp, uint64_t dsize, uint32_t sfbytes)
{
	uint32_t lit = xk_dinode_litino(mp->g.inodesize);
	uint32_t maxfo = (lit - xk_bmdr_space_calc(2)) / 8, minfo, off;

	if (!sfbytes || sfbytes > lit || dsize == UINT64_MAX)
		return 0;
	minfo = dsize > lit ? lit / 8 + 1 : round8((uint32_t)dsize) / 8;
	off = (lit - sfbytes) / 8;
	if (off >= maxfo)
		return maxfo;
	return off >= minfo ? off : 0;
}

/*
 * The offset the kernel gives a fork it adds to an inode without one,
 * for the first attribute of l, before local data that no longer fits
 * moves out: late_forkoff, else its default.  0 outside a late
 * placement (late 0) or for an empty list.
 */
static uint32_t
late_first(const struct xk_mount *mp, const struct xk_dinode *dip,
	   int late, const struct xk_attr_list *l)
{
	uint32_t fo;

	if (!late || dip->di_forkoff || !l->n)
		return 0;
	fo = late_forkoff(mp, late_dsize(mp, dip), attr_sf_bytes(l->xa, 1));
	return fo ? fo : xk_dinode_default_forkoff(mp->g.inodesize);
}

/*
 * Where that fork ends up once the data fork is settled (format dfmt,
 * its need now dsize) and the attributes of l are added one by one, as
 * the kernel adds them: each short-form addition that does not fit
 * moves the fork as far as late_forkoff allows; where none does, the
 * attributes go to a leaf, and the fork moves back down to the default
 * offset if it was above it (unless the data fork is a btree root).
 */
static uint32_t
late_final(const struct xk_mount *mp, uint64_t dsize, uint8_t dfmt,
	   const struct xk_attr_list *l, uint32_t first)
{
	uint32_t lit = xk_dinode_litino(mp->g.inodesize), fo = first, f;
	uint32_t hdr = (uint32_t)sizeof(struct xk_attr_sf_hdr), bytes = hdr;
	uint32_t dflt = xk_dinode_default_forkoff(mp->g.inodesize);

	for (size_t i = 0; i < l->n; i++) {
		uint32_t e = i < UINT8_MAX ? attr_sf_bytes(&l->xa[i], 1) : 0;

		f = 0;
		if (e) {
			bytes += e - hdr;
			f = bytes <= lit - fo * 8 ? fo :
			    late_forkoff(mp, dsize, bytes);
		}
		if (!f)		/* to a leaf */
			return dfmt != XK_DINODE_FMT_BTREE && fo < dflt ?
			       dflt : fo;
		fo = f;
	}
	return fo;
}

/*
 * Where the attr fork starts (in 8-byte units).  An inode with an attr
 * fork keeps its offset, so its data fork stays as it is.  Without one,
 * the kernel's default: right after the 8-byte device number, else room
 * for a bmbt root of 12 pointers (2 in 256-byte inodes), moved up when
 * the data fork needs more (a btree root: its records), but never past
 * the room of an attr btree root of 2 pointers.  Mappings needing more
 * than that keep the default and set *relayout: the caller lays them
 * out again in that room (extents become a btree, a root gains a
 * level), as the kernel does.  Local data needing more (a short-form
 * directory or a symlink target is moved out to blocks before this) is
 * XK_EUNSUPP.  With first (late_first, taken before local data moved
 * out) the fork of l goes where the kernel adds one to an existing
 * inode (late_final).
 */
static int
choose_forkoff(const struct xk_mount *mp, const struct xk_dinode *dip,
	       const struct xk_attr_list *l, uint32_t first, uint32_t *fo,
	       int *relayout, const char **why)
{
	uint32_t lit = xk_dinode_litino(mp->g.inodesize), dneed;

	if (dip->di_forkoff) {
		*fo = dip->di_forkoff;
		return 0;
	}
	switch (dip->di_format) {
	case XK_DINODE_FMT_DEV:
		*fo = 1;
		return 0;
	case XK_DINODE_FMT_LOCAL:
		dneed = round8((uint32_t)xk_be64_get(dip->di_size));
		break;
	case XK_DINODE_FMT_EXTENTS:
		dneed = round8((uint32_t)(xk_dinode_nextents(dip) *
					  sizeof(struct xk_bmbt_rec)));
		break;
	case XK_DINODE_FMT_BTREE: {
		const struct xk_bmdr_block *bb = (const void *)
						 xk_dfork_dptr(dip);
		uint32_t nrecs = xk_be16_get(bb->bb_numrecs);

		/* The root moves into less room: it keeps its records. */
		if (!nrecs || nrecs > xk_bmdr_maxrecs(lit, 0)) {
			*why = "its data fork's btree root has a bad record "
			       "count";
			return XK_ECORRUPT;
		}
		dneed = round8(xk_bmdr_space_calc(nrecs));
		break;
	}
	case XK_DINODE_FMT_META_BTREE:
		/* Realtime groups' btree roots: not resized here. */
		*why = "its data fork is a realtime btree root";
		return XK_EUNSUPP;
	default:
		*why = "its data fork has an unknown format";
		return XK_ECORRUPT;
	}
	if (first) {
		/* Mappings not fitting are laid out again in that room. */
		*fo = late_final(mp, late_dsize(mp, dip), dip->di_format, l,
				 first);
		*relayout = dneed > *fo * 8 &&
			    dip->di_format != XK_DINODE_FMT_LOCAL;
		if (dneed <= *fo * 8 || *relayout)
			return 0;
	}
	*fo = xk_dinode_default_forkoff(mp->g.inodesize);
	if (dneed > *fo * 8)
		*fo = dneed / 8;
	/* The kernel's bound: room for an attr btree root of 2 pointers. */
	if ((*fo > (lit - xk_bmdr_space_calc(2)) / 8 || dneed > lit) &&
	    dip->di_format != XK_DINODE_FMT_LOCAL) {
		/* Mappings: laid out again in the default room. */
		*fo = xk_dinode_default_forkoff(mp->g.inodesize);
		*relayout = 1;
		return 0;
	}
	if (*fo > (lit - xk_bmdr_space_calc(2)) / 8 || dneed > lit) {
		/*
		 * Not a lack of free blocks: the inode itself is full (the
		 * kernel would move the data fork out of it first).
		 */
		*why = "its data fork leaves no room for an attr fork";
		return XK_EUNSUPP;
	}
	return 0;
}

/*
 * A btree root that had the whole literal area, now given forksize
 * bytes: its keys stay, its pointers move down to where a root of that
 * size keeps them (after as many key slots as it holds), and the slots
 * it does not use are zeroed.
 */
static void
shrink_data_root(struct xk_dinode *dip, uint32_t lit, uint32_t forksize)
{
	struct xk_bmdr_block *bb = (void *)xk_dfork_dptr(dip);
	uint32_t n = xk_be16_get(bb->bb_numrecs);
	uint8_t *keys_end = (uint8_t *)xk_bmdr_key(bb, n);
	uint8_t *ptrs = (uint8_t *)xk_bmdr_ptr(bb, forksize, 0);

	memmove(ptrs, xk_bmdr_ptr(bb, lit, 0), n * sizeof(xk_bmbt_ptr));
	memset(keys_end, 0, (size_t)(ptrs - keys_end));
	memset(ptrs + n * sizeof(xk_bmbt_ptr), 0,
	       forksize - (size_t)(ptrs - (uint8_t *)bb) -
	       n * sizeof(xk_bmbt_ptr));
}

/*
 * Local data in an inode without an attr fork that takes more than an
 * attr fork would leave it (at first, late_first, when placed late;
 * else room for an attr bmbt root of 2 pointers): the kernel moves it
 * out first, a short-form directory into a block (XK_S_IFDIR), a
 * symlink target into remote blocks (XK_S_IFLNK).  0 when it stays.
 */
static unsigned int
local_moves_out(const struct xk_mount *mp, const struct xk_dinode *dip,
		uint32_t first)
{
	uint32_t lit = xk_dinode_litino(mp->g.inodesize);
	uint32_t room = first ? first : (lit - xk_bmdr_space_calc(2)) / 8;
	unsigned int type = xk_be16_get(dip->di_mode) & XK_S_IFMT;

	if (dip->di_forkoff || dip->di_format != XK_DINODE_FMT_LOCAL ||
	    (type != XK_S_IFDIR && type != XK_S_IFLNK))
		return 0;
	return xk_be64_get(dip->di_size) > room * 8u ? type : 0;
}

/*
 * Whether a new attr fork is placed late (else where an inode made with
 * one has it).  Not for metadata files: xfs_repair 7.2 makes the
 * metadata tree anew, its inodes made with their fork.
 */
static int
late_mode(const struct xk_bld *b, const struct xk_dinode *dip)
{
	return b->late_forks && !xk_dinode_is_metafile(dip);
}

/* The attr fork there is (its blocks) and where the new one starts. */
static int
old_fork(struct xk_mount *mp, uint64_t ino, const struct xk_dinode *dip,
	 const struct xk_attr_list *l, uint32_t first, struct afork *af,
	 uint32_t *fo, int *relayout, const char **why)
{
	int err = 0;

	if (dip->di_forkoff && (dip->di_aformat == XK_DINODE_FMT_EXTENTS ||
				dip->di_aformat == XK_DINODE_FMT_BTREE)) {
		err = af_load(mp, ino, dip, af);
		if (err)
			*why = af->why;
	}
	*relayout = 0;
	if (!err)
		err = choose_forkoff(mp, dip, l, first, fo, relayout, why);
	return err;
}

int
xk_bld_attr_rewrite(struct xk_bld *b, uint64_t ino,
		    const struct xk_attr_list *l, const char **why)
{
	struct xk_mount *mp = b->mp;
	uint32_t lit = xk_dinode_litino(mp->g.inodesize), fo, first;
	struct xk_bld_inode tmp = { .ino = ino };
	struct afork af = { 0 };
	struct xk_dinode *dip;
	struct xk_buf *bp;
	uint64_t nblocks, oldblocks, anb = 0;
	uint32_t anext = 0;
	uint8_t afmt = XK_DINODE_FMT_EXTENTS, *ap;
	int keep_empty, relayout = 0, err;

	*why = NULL;
	err = xk_inode_read(mp, ino, 0, &bp, &dip);
	if (err) {
		*why = "its inode cannot be read";
		return err;
	}
	tmp.mode = xk_be16_get(dip->di_mode);
	first = late_first(mp, dip, late_mode(b, dip), l);
	switch (local_moves_out(mp, dip, first)) {
	case XK_S_IFDIR:
		err = bld_dir_sf_to_block(b, ino, dip, why);
		break;
	case XK_S_IFLNK:
		err = bld_symlink_to_remote(b, ino, dip, why);
		break;
	}
	if (!err)
		err = old_fork(mp, ino, dip, l, first, &af, &fo, &relayout,
			       why);
	oldblocks = af.nblocks + af.nbmbt;
	if (!err && oldblocks > xk_be64_get(dip->di_nblocks)) {
		*why = "its block count is below what its attr fork maps";
		err = XK_ECORRUPT;
	}
	/* A session opened empty was never fed them: nothing to free. */
	if (!err && !b->from_claims) {
		err = release_fork(b, &af);
		if (err)
			*why = "the old attr fork's blocks cannot be freed";
	}
	if (!err && relayout && b->from_claims) {
		*why = "its data fork would have to be laid out again to "
		       "make room for an attr fork";
		err = XK_EUNSUPP;
	} else if (!err && relayout) {
		err = bld_fork_relayout(b, ino, dip, XK_DATA_FORK, fo * 8);
		if (err)
			*why = "its data fork cannot be laid out again in "
			       "less room";
	}
	if (!err) {
		err = bld_attrs_space(b, &tmp, l->xa, l->n, lit - fo * 8, 1);
		if (err)
			*why = "the new attr fork cannot be laid out or "
			       "allocated";
	}
	if (err)
		goto out;
	/*
	 * An emptied fork: kept (empty short form) with parent pointers,
	 * and where the data fork is a btree root sized to this offset;
	 * otherwise removed, as the kernel removes an empty fork.
	 */
	keep_empty = mp->g.has_parent ||
		     dip->di_format == XK_DINODE_FMT_BTREE;
	if (!dip->di_forkoff && dip->di_format == XK_DINODE_FMT_BTREE &&
	    !relayout)
		shrink_data_root(dip, lit, fo * 8);
	ap = xk_dfork_dptr(dip) + fo * 8;
	memset(ap, 0, lit - fo * 8);
	switch (tmp.attr.format) {
	case XK_BLD_FMT_NONE:
		if (keep_empty) {
			struct xk_attr_sf_hdr *h = (void *)ap;

			xk_be16_set(&h->totsize, sizeof(*h));
			afmt = XK_DINODE_FMT_LOCAL;
		} else {
			memset(xk_dfork_dptr(dip) + fo * 8, 0, lit - fo * 8);
			fo = 0;
		}
		break;
	case XK_BLD_FMT_LOCAL:
		memcpy(ap, tmp.attr.local, tmp.attr.local_len);
		afmt = XK_DINODE_FMT_LOCAL;
		break;
	default:
		err = bld_write_fork(b, &tmp, XK_ATTR_FORK, ap, lit - fo * 8,
				     &afmt, &anb);
		anext = (uint32_t)tmp.attr.next;
		if (err)
			*why = "the new attr fork's mappings do not fit";
		break;
	}
	if (err)
		goto out;
	nblocks = xk_be64_get(dip->di_nblocks) - oldblocks + anb;
	dip->di_forkoff = (uint8_t)fo;
	dip->di_aformat = afmt;
	xk_be64_set(&dip->di_nblocks, nblocks);
	xk_dinode_set_nextents(dip, xk_dinode_nextents(dip), anext);
	xk_inode_init_crc(mp, dip);
	xk_buf_dirty(bp);
	err = bld_bmbt_stamp(b, ino, dip, XK_ATTR_FORK);
out:
	xk_buf_release(bp);
	free(tmp.attr.local);
	free(tmp.attr.ext);
	af_free(&af);
	return err;
}

int
xk_attr_rewrite_growth(struct xk_bld *b, uint64_t ino,
		       const struct xk_attr_list *l, uint64_t *grow,
		       const char **why)
{
	struct xk_mount *mp = b->mp;
	uint32_t lit = xk_dinode_litino(mp->g.inodesize), fo = 0, first;
	struct attr_plan pl;
	struct afork af = { 0 };
	struct xk_dinode *dip;
	struct xk_buf *bp;
	uint64_t newblocks = 0;
	int relayout = 0, err;

	*grow = 0;
	*why = NULL;
	err = xk_inode_read(mp, ino, 0, &bp, &dip);
	if (err) {
		*why = "its inode cannot be read";
		return err;
	}
	first = late_first(mp, dip, late_mode(b, dip), l);
	if (local_moves_out(mp, dip, first)) {
		uint64_t size = xk_be64_get(dip->di_size);

		/* One directory block, or the target's remote blocks. */
		if (local_moves_out(mp, dip, first) == XK_S_IFDIR)
			*grow = mp->g.dirblksize >> mp->g.blocklog;
		else
			*grow = xk_symlink_blocks(mp->g.blocksize,
					size < XK_SYMLINK_MAXLEN ?
					(unsigned int)size : XK_SYMLINK_MAXLEN);
		/* Mapped by an extent then (choose_forkoff's rule). */
		fo = first ? late_final(mp, xk_bmdr_space_calc(3),
					XK_DINODE_FMT_EXTENTS, l, first) :
		     xk_dinode_default_forkoff(mp->g.inodesize);
	} else {
		err = old_fork(mp, ino, dip, l, first, &af, &fo, &relayout,
			       why);
		/* Extents becoming a btree, a root gaining a level. */
		*grow = relayout ? 1 : 0;
	}
	xk_buf_release(bp);
	if (!err) {
		err = attr_plan_make(&pl, mp->g.blocksize, lit - fo * 8,
				     l->xa, l->n);
		if (err)
			*why = "the new attr fork cannot be laid out";
	}
	if (!err) {
		if (pl.form == ATTR_FORM_LEAF || pl.form == ATTR_FORM_NODE)
			newblocks = pl.nblocks;
		attr_plan_free(&pl);
		if (newblocks > af.nblocks + af.nbmbt)
			*grow += newblocks - af.nblocks - af.nbmbt;
	}
	af_free(&af);
	return err;
}
