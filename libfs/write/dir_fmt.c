// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Directory layout in memory (see dir_fmt.h): the plan that picks the
 * format and places every entry, and the fillers that write the bytes of
 * the short form and of every block kind (XDB3, XDD3, LEAF1, LEAFN, DA3
 * node, XDF3).  Nothing here touches a device or a mount, so the unit
 * tests can build and verify any directory in memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/endian.h>
#include <xfskit/format/da.h>
#include <xfskit/format/dir.h>

#include "dir_fmt.h"

static int
cmp_ref(const void *a, const void *b)
{
	const struct dir_ref *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

/*
 * Rules for a caller's entry: 1. a name of 1..255 bytes without '/' or
 * NUL; 2. not "." or ".." (the builder writes those); 3. a known file
 * type.
 */
static int
ent_check(const struct xk_bld_dirent *e)
{
	if (e->namelen == 0 || !e->name)
		return -EINVAL;
	if (memchr(e->name, '/', e->namelen) || memchr(e->name, 0, e->namelen))
		return -EINVAL;
	if (e->name[0] == '.' && (e->namelen == 1 ||
				  (e->namelen == 2 && e->name[1] == '.')))
		return -EINVAL;
	if (e->ftype >= XK_DIR3_FT_MAX)
		return -EINVAL;
	return 0;
}

static const uint8_t *
ref_name(const struct dir_plan *pl, const struct dir_ref *r, uint8_t *len)
{
	if (r->idx == DIR_IDX_DOT) {
		*len = 1;
		return (const uint8_t *)".";
	}
	if (r->idx == DIR_IDX_DOTDOT) {
		*len = 2;
		return (const uint8_t *)"..";
	}
	*len = pl->ents[r->idx].namelen;
	return pl->ents[r->idx].name;
}

/* After sorting: two entries of equal hash must differ by name. */
static int
dup_check(const struct dir_plan *pl)
{
	for (uint32_t i = 0; i < pl->nrefs; i++) {
		for (uint32_t j = i + 1; j < pl->nrefs &&
		     pl->refs[j].hash == pl->refs[i].hash; j++) {
			const uint8_t *a, *b;
			uint8_t la, lb;

			a = ref_name(pl, &pl->refs[i], &la);
			b = ref_name(pl, &pl->refs[j], &lb);
			if (la == lb && memcmp(a, b, la) == 0)
				return -EEXIST;
		}
	}
	return 0;
}

/* Short-form size and i8count; returns 0 when it cannot be short form. */
static uint32_t
sf_size(const struct dir_plan *pl, uint8_t *i8countp)
{
	uint64_t i8 = pl->parent > XK_DIR2_MAX_SHORT_INUM, names = 0;
	uint64_t size, inosize;

	for (size_t i = 0; i < pl->n; i++) {
		i8 += pl->ents[i].ino > XK_DIR2_MAX_SHORT_INUM;
		names += pl->ents[i].namelen;
	}
	if (pl->n > UINT8_MAX || i8 > UINT8_MAX)
		return 0;
	inosize = i8 ? XK_INO64_SIZE : XK_INO32_SIZE;
	size = xk_dir2_sf_hdr_size((unsigned int)i8) + names +
	       pl->n * (sizeof(struct xk_dir2_sf_entry) +
			(pl->g.has_ftype ? 1 : 0) + inosize);
	*i8countp = (uint8_t)i8;
	return size > UINT32_MAX ? 0 : (uint32_t)size;
}

/*
 * Rightmost data block with at least len bytes free at its end, from a
 * max-tree over the blocks' free space; -1 if none.
 */
static int64_t
tree_rightmost(const uint16_t *t, size_t leaves, uint32_t len)
{
	size_t i = 1;

	if (t[1] < len)
		return -1;
	while (i < leaves)
		i = t[2 * i + 1] >= len ? 2 * i + 1 : 2 * i;
	return (int64_t)(i - leaves);
}

static void
tree_set(uint16_t *t, size_t leaves, uint32_t db, uint16_t v)
{
	size_t i = leaves + db;

	t[i] = v;
	for (i /= 2; i; i /= 2)
		t[i] = t[2 * i] > t[2 * i + 1] ? t[2 * i] : t[2 * i + 1];
}

/*
 * Place every entry where the kernel puts it when the names are added
 * one at a time, and find the format that leaves.  Entries always go to
 * the start of the one unused region at the end of a block, so each
 * block stays packed:
 *  - block form: after the entries already there, while the entry and
 *    one more leaf entry fit before the leaf array;
 *  - leaf form: the first data block with room (the bests scan), or a
 *    new block, while the leaf keeps room for one more hash entry (and
 *    one more best with a new block);
 *  - node form: the last data block with room (the free index is
 *    scanned from its end), or a new block.
 * Sets pl->form (BLOCK, LEAF or NODE), ndata, dfree, the entries'
 * addresses in refs[2..] and bstart/border (entries by block).
 */
static int
place(struct dir_plan *pl)
{
	uint32_t bs = pl->g.blksize, maxblk = (uint32_t)pl->n + 1;
	size_t leaves = 1;
	uint64_t used = XK_DIR3_DATA_FIRST_OFFSET, count = 2;
	uint32_t *bcount;
	uint16_t *t;

	while (leaves < maxblk)
		leaves <<= 1;
	t = calloc(2 * leaves, sizeof(*t));
	pl->dfree = calloc(maxblk, sizeof(*pl->dfree));
	if (!t || !pl->dfree) {
		free(t);
		return -ENOMEM;
	}
	pl->form = DIR_FORM_BLOCK;
	pl->ndata = 1;
	for (size_t i = 0; i < pl->n; i++) {
		uint32_t es = xk_dir3_data_entsize(pl->ents[i].namelen,
						   pl->g.has_ftype);
		int64_t db = -1;

		if (pl->form == DIR_FORM_BLOCK) {
			if (bs - used - count * 8 - 8 >= es + 8) {
				pl->refs[i + 2].addr =
					xk_dir2_db_off_to_dataptr(0,
						(uint32_t)used, pl->g.dblog);
				used += es;
				count++;
				continue;
			}
			/* Block 0 becomes a data block: free to its end. */
			pl->form = DIR_FORM_LEAF;
			pl->dfree[0] = (uint16_t)(bs - used);
			tree_set(t, leaves, 0, pl->dfree[0]);
		}
		if (pl->form == DIR_FORM_LEAF) {
			uint64_t room = bs - sizeof(struct xk_dir3_leaf_hdr) -
				count * 8 - (uint64_t)pl->ndata * 2 -
				sizeof(struct xk_dir2_leaf_tail);

			for (uint32_t k = 0; k < pl->ndata && db < 0; k++)
				if (pl->dfree[k] >= es)
					db = k;
			if (room < 8u + (db < 0 ? 2 : 0)) {
				pl->form = DIR_FORM_NODE;
				db = -1;
			}
		}
		if (pl->form == DIR_FORM_NODE)
			db = tree_rightmost(t, leaves, es);
		if (db < 0) {
			db = pl->ndata++;
			pl->dfree[db] = (uint16_t)(bs -
					sizeof(struct xk_dir3_data_hdr));
		}
		pl->refs[i + 2].addr = xk_dir2_db_off_to_dataptr((uint32_t)db,
				bs - pl->dfree[db], pl->g.dblog);
		pl->dfree[db] -= (uint16_t)es;
		tree_set(t, leaves, (uint32_t)db, pl->dfree[db]);
		count++;
	}
	free(t);
	if (pl->form == DIR_FORM_BLOCK)
		pl->dfree[0] = (uint16_t)(bs - used - count * 8 - 8);

	/* Entries by block, in address order (the order they came in). */
	pl->bstart = calloc((size_t)pl->ndata + 1, sizeof(*pl->bstart));
	pl->border = malloc(sizeof(*pl->border) * (pl->n + 1));
	bcount = calloc((size_t)pl->ndata + 1, sizeof(*bcount));
	if (!pl->bstart || !pl->border || !bcount) {
		free(bcount);
		return -ENOMEM;
	}
	for (size_t i = 0; i < pl->n; i++)
		bcount[xk_dir2_dataptr_to_db(pl->refs[i + 2].addr,
					     pl->g.dblog)]++;
	for (uint32_t db = 0; db < pl->ndata; db++)
		pl->bstart[db + 1] = pl->bstart[db] + bcount[db];
	memcpy(bcount, pl->bstart, sizeof(*bcount) * pl->ndata);
	for (size_t i = 0; i < pl->n; i++)
		pl->border[bcount[xk_dir2_dataptr_to_db(pl->refs[i + 2].addr,
				pl->g.dblog)]++] = (uint32_t)i;
	free(bcount);
	if (((uint64_t)pl->ndata << pl->g.dblog) > XK_DIR2_LEAF_OFFSET)
		return -EFBIG;
	return 0;
}

/* Spread count children evenly over k blocks at level l (or leaves). */
static int
spread(struct dir_blk **out, uint32_t k, uint32_t count)
{
	struct dir_blk *v = calloc(k, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < k; i++) {
		uint32_t a = (uint32_t)((uint64_t)i * count / k);
		uint32_t z = (uint32_t)((uint64_t)(i + 1) * count / k);

		v[i].first = a;
		v[i].count = z - a;
	}
	*out = v;
	return 0;
}

static int
plan_node(struct dir_plan *pl)
{
	uint32_t bs = pl->g.blksize, leafdb = xk_dir2_leaf_firstdb(pl->g.dblog);
	uint32_t lmax = xk_dir3_leaf_max_ents(bs);
	uint32_t nmax = xk_da3_node_maxents(bs);
	uint32_t nb, below, next;
	int err;

	pl->nleaves = (pl->nrefs + lmax - 1) / lmax;
	err = spread(&pl->leaves, pl->nleaves, pl->nrefs);
	if (err)
		return err;
	for (uint32_t i = 0; i < pl->nleaves; i++)
		pl->leaves[i].hash = pl->refs[pl->leaves[i].first +
					      pl->leaves[i].count - 1].hash;
	pl->nleafblks = pl->nleaves;
	if (pl->nleaves == 1) {
		pl->leaves[0].db = leafdb;
	} else {
		/* Levels of nodes until one block is left: the root. */
		below = pl->nleaves;
		while (below > 1) {
			struct dir_blk *kids = pl->nlevels ?
				pl->level[pl->nlevels - 1] : pl->leaves;

			if (pl->nlevels == XK_DA_NODE_MAXDEPTH - 1)
				return -EFBIG;
			nb = (below + nmax - 1) / nmax;
			err = spread(&pl->level[pl->nlevels], nb, below);
			if (err)
				return err;
			for (uint32_t i = 0; i < nb; i++) {
				struct dir_blk *b = &pl->level[pl->nlevels][i];

				b->hash = kids[b->first + b->count - 1].hash;
			}
			pl->nlevel[pl->nlevels++] = nb;
			pl->nleafblks += nb;
			below = nb;
		}
		/*
		 * The root stays at the first leaf-space block, where the
		 * kernel keeps it; leaves follow, then the lower nodes.
		 */
		pl->level[pl->nlevels - 1][0].db = leafdb;
		next = leafdb + 1;
		for (uint32_t i = 0; i < pl->nleaves; i++)
			pl->leaves[i].db = next++;
		for (uint32_t l = 0; l + 1 < pl->nlevels; l++)
			for (uint32_t i = 0; i < pl->nlevel[l]; i++)
				pl->level[l][i].db = next++;
	}
	if (((uint64_t)pl->nleafblks << pl->g.dblog) > XK_DIR2_SPACE_SIZE)
		return -EFBIG;
	pl->nfree = (pl->ndata + xk_dir3_free_max_bests(bs) - 1) /
		    xk_dir3_free_max_bests(bs);
	return 0;
}

int
dir_plan_make(struct dir_plan *pl, const struct dir_geo *g, uint64_t self,
	      uint64_t parent, const struct xk_bld_dirent *ents, size_t n,
	      uint32_t sf_space)
{
	uint64_t data = XK_DIR3_DATA_FIRST_OFFSET;
	uint32_t bs = g->blksize;
	int err;

	memset(pl, 0, sizeof(*pl));
	pl->g = *g;
	pl->ents = ents;
	pl->n = n;
	pl->self = self;
	pl->parent = parent;
	if (n > UINT32_MAX - 2)
		return -EFBIG;
	for (size_t i = 0; i < n; i++) {
		err = ent_check(&ents[i]);
		if (err)
			return err;
		data += xk_dir3_data_entsize(ents[i].namelen, g->has_ftype);
	}
	/* More names than the data space holds (this also bounds n). */
	if (data > XK_DIR2_LEAF_OFFSET)
		return -EFBIG;
	pl->nrefs = (uint32_t)n + 2;
	pl->refs = malloc(sizeof(*pl->refs) * pl->nrefs);
	if (!pl->refs)
		return -ENOMEM;
	pl->refs[0] = (struct dir_ref){
		xk_da_hashname((const uint8_t *)".", 1),
		xk_dir2_db_off_to_dataptr(0, XK_DIR3_DATA_DOT_OFFSET, g->dblog),
		DIR_IDX_DOT };
	pl->refs[1] = (struct dir_ref){
		xk_da_hashname((const uint8_t *)"..", 2),
		xk_dir2_db_off_to_dataptr(0, XK_DIR3_DATA_DOTDOT_OFFSET,
					  g->dblog), DIR_IDX_DOTDOT };
	for (size_t i = 0; i < n; i++) {
		pl->refs[i + 2].hash = xk_da_hashname(ents[i].name,
						      ents[i].namelen);
		pl->refs[i + 2].idx = (uint32_t)i;
	}

	/*
	 * Short form: while all of it fits the fork, and (the kernel checks
	 * this before every short-form add) it would fit a block too.
	 */
	pl->sf_size = sf_size(pl, &pl->sf_i8count);
	if (pl->sf_size && pl->sf_size <= sf_space &&
	    data + (uint64_t)pl->nrefs * sizeof(struct xk_dir2_leaf_entry) +
	    sizeof(struct xk_dir2_block_tail) <= bs) {
		pl->form = DIR_FORM_SF;
		pl->size = pl->sf_size;
		/* Only the duplicate check needs the hash order. */
		qsort(pl->refs, pl->nrefs, sizeof(*pl->refs), cmp_ref);
		return dup_check(pl);
	}
	err = place(pl);
	if (err)
		return err;
	qsort(pl->refs, pl->nrefs, sizeof(*pl->refs), cmp_ref);
	err = dup_check(pl);
	if (err)
		return err;
	if (pl->form == DIR_FORM_BLOCK) {
		pl->size = bs;
		return 0;
	}
	pl->size = (uint64_t)pl->ndata << g->dblog;
	if (pl->form == DIR_FORM_LEAF) {
		pl->nleaves = 1;
		pl->nleafblks = 1;
		pl->leaves = calloc(1, sizeof(*pl->leaves));
		if (!pl->leaves)
			return -ENOMEM;
		pl->leaves[0] = (struct dir_blk){
			xk_dir2_leaf_firstdb(g->dblog), 0, pl->nrefs,
			pl->refs[pl->nrefs - 1].hash };
		return 0;
	}
	return plan_node(pl);
}

void
dir_plan_free(struct dir_plan *pl)
{
	free(pl->bstart);
	free(pl->border);
	free(pl->dfree);
	free(pl->refs);
	free(pl->leaves);
	for (uint32_t l = 0; l < XK_DA_NODE_MAXDEPTH; l++)
		free(pl->level[l]);
	memset(pl, 0, sizeof(*pl));
}

void
dir_sf_fill(const struct dir_plan *pl, uint8_t *out)
{
	struct xk_dir2_sf_hdr *h = (struct xk_dir2_sf_hdr *)out;
	struct xk_dir2_sf_entry *e;
	uint32_t off = XK_DIR3_DATA_FIRST_OFFSET;
	int ft = pl->g.has_ftype;

	h->count = (uint8_t)pl->n;
	h->i8count = pl->sf_i8count;
	xk_dir2_sf_put_parent(h, pl->parent);
	e = xk_dir2_sf_firstentry(h);
	for (size_t i = 0; i < pl->n; i++) {
		const struct xk_bld_dirent *d = &pl->ents[i];

		e->namelen = d->namelen;
		/* Where the entry would sit in a block: readdir cookies. */
		xk_dir2_sf_put_offset(e, (uint16_t)off);
		memcpy(e->name, d->name, d->namelen);
		xk_dir2_sf_put_ftype(e, ft, d->ftype);
		xk_dir2_sf_put_ino(h, e, ft, d->ino);
		off += xk_dir3_data_entsize(d->namelen, ft);
		e = xk_dir2_sf_nextentry(h, e, ft);
	}
}

static void
blk_hdr_fill(uint32_t magic, const struct dir_blkid *id, uint8_t *out)
{
	struct xk_dir3_blk_hdr *h = (struct xk_dir3_blk_hdr *)out;

	xk_be32_set(&h->magic, magic);
	xk_be64_set(&h->blkno, id->daddr);
	memcpy(h->uuid, id->uuid, 16);
	xk_be64_set(&h->owner, id->ino);
}

static void
da_hdr_fill(uint16_t magic, uint64_t forw, uint64_t back,
	    const struct dir_blkid *id, uint8_t *out)
{
	struct xk_da3_blkinfo *h = (struct xk_da3_blkinfo *)out;

	xk_be32_set(&h->hdr.forw, (uint32_t)forw);
	xk_be32_set(&h->hdr.back, (uint32_t)back);
	xk_be16_set(&h->hdr.magic, magic);
	xk_be64_set(&h->blkno, id->daddr);
	memcpy(h->uuid, id->uuid, 16);
	xk_be64_set(&h->owner, id->ino);
}

static uint32_t
put_entry(uint8_t *out, uint32_t p, uint64_t ino, const uint8_t *name,
	  uint8_t namelen, uint8_t ftype, int has_ftype)
{
	struct xk_dir2_data_entry *e = (struct xk_dir2_data_entry *)(out + p);

	xk_be64_set(&e->inumber, ino);
	e->namelen = namelen;
	memcpy(e->name, name, namelen);
	xk_dir3_data_put_ftype(e, has_ftype, ftype);
	xk_be16_set(xk_dir3_data_entry_tag(e, has_ftype), (uint16_t)p);
	return p + xk_dir3_data_entsize(namelen, has_ftype);
}

/*
 * The data area of block db, entries from the header to end: "." and
 * ".." first in block 0, the block's entries packed, then one unused
 * region up to end (when any room is left), which is bestfree[0].
 */
static void
data_area_fill(const struct dir_plan *pl, uint32_t db, uint32_t end,
	       uint8_t *out)
{
	struct xk_dir3_data_hdr *h = (struct xk_dir3_data_hdr *)out;
	int ft = pl->g.has_ftype;
	uint32_t p = sizeof(*h);

	if (db == 0) {
		p = put_entry(out, p, pl->self, (const uint8_t *)".", 1,
			      XK_DIR3_FT_DIR, ft);
		p = put_entry(out, p, pl->parent, (const uint8_t *)"..", 2,
			      XK_DIR3_FT_DIR, ft);
	}
	for (uint32_t i = pl->bstart[db]; i < pl->bstart[db + 1]; i++) {
		const struct xk_bld_dirent *d = &pl->ents[pl->border[i]];

		p = put_entry(out, p, d->ino, d->name, d->namelen, d->ftype,
			      ft);
	}
	if (p < end) {
		struct xk_dir2_data_unused *u =
			(struct xk_dir2_data_unused *)(out + p);

		xk_be16_set(&u->freetag, XK_DIR2_DATA_FREE_TAG);
		xk_be16_set(&u->length, (uint16_t)(end - p));
		xk_be16_set(xk_dir2_data_unused_tag(u), (uint16_t)p);
		xk_be16_set(&h->best_free[0].offset, (uint16_t)p);
		xk_be16_set(&h->best_free[0].length, (uint16_t)(end - p));
	}
}

static void
put_refs(const struct dir_plan *pl, uint32_t first, uint32_t count,
	 struct xk_dir2_leaf_entry *le)
{
	for (uint32_t i = 0; i < count; i++) {
		xk_be32_set(&le[i].hashval, pl->refs[first + i].hash);
		xk_be32_set(&le[i].address, pl->refs[first + i].addr);
	}
}

void
dir_block_fill(const struct dir_plan *pl, const struct dir_blkid *id,
	       uint8_t *out)
{
	struct xk_dir2_block_tail *t = xk_dir2_block_tail_p(out,
							    pl->g.blksize);

	blk_hdr_fill(XK_DIR3_BLOCK_MAGIC, id, out);
	xk_be32_set(&t->count, pl->nrefs);
	xk_be32_set(&t->stale, 0);
	put_refs(pl, 0, pl->nrefs, xk_dir2_block_leaf_p(t));
	data_area_fill(pl, 0, (uint32_t)((uint8_t *)xk_dir2_block_leaf_p(t) -
					 out), out);
}

void
dir_data_fill(const struct dir_plan *pl, uint32_t db,
	      const struct dir_blkid *id, uint8_t *out)
{
	blk_hdr_fill(XK_DIR3_DATA_MAGIC, id, out);
	data_area_fill(pl, db, pl->g.blksize, out);
}

void
dir_leaf1_fill(const struct dir_plan *pl, const struct dir_blkid *id,
	       uint8_t *out)
{
	struct xk_dir3_leaf_hdr *h = (struct xk_dir3_leaf_hdr *)out;
	struct xk_dir2_leaf_tail *t = xk_dir2_leaf_tail_p(out, pl->g.blksize);
	xk_be16 *bests;

	da_hdr_fill(XK_DIR3_LEAF1_MAGIC, 0, 0, id, out);
	xk_be16_set(&h->count, (uint16_t)pl->nrefs);
	put_refs(pl, 0, pl->nrefs, xk_dir3_leaf_ents(h));
	xk_be32_set(&t->bestcount, pl->ndata);
	bests = xk_dir2_leaf_bests_p(t);
	for (uint32_t i = 0; i < pl->ndata; i++)
		xk_be16_set(&bests[i], pl->dfree[i]);
}

void
dir_leafn_fill(const struct dir_plan *pl, uint32_t i,
	       const struct dir_blkid *id, uint8_t *out)
{
	struct xk_dir3_leaf_hdr *h = (struct xk_dir3_leaf_hdr *)out;
	const struct dir_blk *lb = &pl->leaves[i];
	uint64_t forw = 0, back = 0;

	if (i + 1 < pl->nleaves)
		forw = dir_db_to_da(&pl->g, pl->leaves[i + 1].db);
	if (i > 0)
		back = dir_db_to_da(&pl->g, pl->leaves[i - 1].db);
	da_hdr_fill(XK_DIR3_LEAFN_MAGIC, forw, back, id, out);
	xk_be16_set(&h->count, (uint16_t)lb->count);
	put_refs(pl, lb->first, lb->count, xk_dir3_leaf_ents(h));
}

void
dir_node_fill(const struct dir_plan *pl, uint32_t lvl, uint32_t i,
	      const struct dir_blkid *id, uint8_t *out)
{
	struct xk_da3_node_hdr *h = (struct xk_da3_node_hdr *)out;
	const struct dir_blk *nb = &pl->level[lvl][i];
	const struct dir_blk *kids = lvl ? pl->level[lvl - 1] : pl->leaves;
	uint64_t forw = 0, back = 0;

	if (i + 1 < pl->nlevel[lvl])
		forw = dir_db_to_da(&pl->g, pl->level[lvl][i + 1].db);
	if (i > 0)
		back = dir_db_to_da(&pl->g, pl->level[lvl][i - 1].db);
	da_hdr_fill(XK_DA3_NODE_MAGIC, forw, back, id, out);
	xk_be16_set(&h->count, (uint16_t)nb->count);
	xk_be16_set(&h->level, (uint16_t)(lvl + 1));
	for (uint32_t k = 0; k < nb->count; k++) {
		struct xk_da_node_entry *e = xk_da3_node_entry(h, k);
		const struct dir_blk *kid = &kids[nb->first + k];

		xk_be32_set(&e->hashval, kid->hash);
		xk_be32_set(&e->before,
			    (uint32_t)dir_db_to_da(&pl->g, kid->db));
	}
}

void
dir_free_fill(const struct dir_plan *pl, uint32_t i,
	      const struct dir_blkid *id, uint8_t *out)
{
	struct xk_dir3_free_hdr *h = (struct xk_dir3_free_hdr *)out;
	uint32_t max = xk_dir3_free_max_bests(pl->g.blksize);
	uint32_t first = i * max;
	uint32_t nvalid = pl->ndata - first < max ? pl->ndata - first : max;
	xk_be16 *bests = xk_dir3_free_bests(h);

	blk_hdr_fill(XK_DIR3_FREE_MAGIC, id, out);
	xk_be32_set(&h->firstdb, first);
	xk_be32_set(&h->nvalid, nvalid);
	/* Every data block exists, so every slot is in use. */
	xk_be32_set(&h->nused, nvalid);
	for (uint32_t k = 0; k < nvalid; k++)
		xk_be16_set(&bests[k], pl->dfree[first + k]);
}
