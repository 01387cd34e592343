// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Extended attribute layout and block images (see attr_fmt.h): the
 * choice of format the kernel would make for a set of attributes, and
 * the bytes of short-form forks, attr3 leaves, dabtree nodes and remote
 * value blocks.  Nothing here does I/O, so the unit tests can check every
 * block against the verifiers without a filesystem.
 *
 * The kernel's rules this follows:
 *  - an attribute goes in short form only while every name and value is
 *    under 255 bytes and the whole list fits the attr fork beside the
 *    data fork; the first one that does not fit turns the fork into a
 *    leaf, and a leaf never goes back while attributes are only added;
 *  - in a leaf, a value is stored with its name ("local") when the local
 *    record would be smaller than 3/4 of the block, else in remote value
 *    blocks of the attr fork, each a filesystem block with its own header;
 *  - a leaf holds its entries sorted by name hash (equal hashes in the
 *    order they were added) and the name records packed down from the
 *    end of the block in the order they were added, with the one free
 *    region between the two: a leaf the kernel filled by adding the same
 *    attributes in the same order has the same bytes;
 *  - when one leaf cannot hold everything, leaves hang under dabtree nodes
 *    whose root is block 0 of the fork.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/endian.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/da.h>

#include "attr_fmt.h"

#define LEAF_HDR	sizeof(struct xk_attr3_leaf_hdr)
#define LEAF_ENT	sizeof(struct xk_attr_leaf_entry)
#define NODE_HDR	sizeof(struct xk_da3_node_hdr)
/* A dabtree path holds the leaf too, so nodes take one level less. */
#define MAX_NODE_LEVELS	(XK_DA_NODE_MAXDEPTH - 1)

static int
item_cmp(const void *a, const void *b)
{
	const struct attr_item *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Input rules: 1. a name of 1..255 bytes with no NUL byte (xfs_repair
 * rejects those); 2. a value of at most 64 KiB, present when non-empty;
 * 3. at most one namespace flag (user, trusted, security or parent);
 * 4. a parent pointer has a directory entry's name (no '/') and a
 * 12-byte parent record as its value.
 */
int
attr_xattr_check(const struct xk_bld_xattr *x)
{
	unsigned int ns = x->flags;

	if (!x->name || x->namelen == 0 || memchr(x->name, 0, x->namelen))
		return -EINVAL;
	if (x->valuelen > XK_XATTR_SIZE_MAX)
		return -E2BIG;
	if (x->valuelen && !x->value)
		return -EINVAL;
	if (ns & ~XK_ATTR_NSP_ONDISK_MASK || (ns & (ns - 1)))
		return -EINVAL;
	if (ns == XK_ATTR_PARENT &&
	    (x->valuelen != sizeof(struct xk_parent_rec) ||
	     !xk_pptr_name_ok(x->name, x->namelen)))
		return -EINVAL;
	return 0;
}

/*
 * Two attributes the fork cannot hold together: the same name in the
 * same namespace, and for parent pointers the same value too (a file
 * may have one name in two directories).
 */
int
attr_same_name(const struct xk_bld_xattr *a, const struct xk_bld_xattr *b)
{
	if (a->flags != b->flags || a->namelen != b->namelen ||
	    memcmp(a->name, b->name, a->namelen))
		return 0;
	if (a->flags != XK_ATTR_PARENT)
		return 1;
	return a->valuelen == b->valuelen &&
	       !memcmp(a->value, b->value, a->valuelen);
}

/* The leaf hash: the name's, with the parent mixed in for pptrs. */
static uint32_t
xattr_hash(const struct xk_bld_xattr *x)
{
	const struct xk_parent_rec *rec = (const void *)x->value;

	if (x->flags == XK_ATTR_PARENT)
		return xk_pptr_hashname(x->name, x->namelen,
					xk_be64_get(rec->p_ino));
	return xk_da_hashname(x->name, x->namelen);
}

uint32_t
attr_sf_bytes(const struct xk_bld_xattr *xa, size_t n)
{
	uint64_t sz = sizeof(struct xk_attr_sf_hdr);

	if (n > UINT8_MAX)		/* the header's count is one byte */
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (xa[i].namelen >= XK_ATTR_SF_ENTSIZE_MAX ||
		    xa[i].valuelen >= XK_ATTR_SF_ENTSIZE_MAX)
			return 0;
		sz += xk_attr_sf_entsize_byname(xa[i].namelen,
						xa[i].valuelen);
	}
	return sz > UINT16_MAX ? 0 : (uint32_t)sz;
}

/* Split m children into ceil(m / max) runs of nearly equal size. */
static struct attr_blk *
split_even(uint32_t m, uint32_t max, uint32_t *nout)
{
	uint32_t k = (m + max - 1) / max;
	struct attr_blk *v = calloc(k, sizeof(*v));

	if (!v)
		return NULL;
	for (uint32_t j = 0; j < k; j++) {
		uint32_t lo = (uint32_t)((uint64_t)m * j / k);
		uint32_t hi = (uint32_t)((uint64_t)m * (j + 1) / k);

		v[j].first = lo;
		v[j].count = hi - lo;
	}
	*nout = k;
	return v;
}

/* Pack items into leaves in hash order, each as full as it goes. */
static int
pack_leaves(struct attr_plan *pl)
{
	uint32_t space = pl->blocksize - LEAF_HDR, used = 0, cap = 16;

	pl->leaves = calloc(cap, sizeof(*pl->leaves));
	if (!pl->leaves)
		return -ENOMEM;
	pl->nleaves = 1;
	for (size_t i = 0; i < pl->n; i++) {
		uint32_t need = LEAF_ENT + pl->items[i].entsize;
		struct attr_blk *lf = &pl->leaves[pl->nleaves - 1];

		if (used + need > space) {
			if (pl->nleaves == cap) {
				struct attr_blk *nv;

				cap *= 2;
				nv = realloc(pl->leaves, cap * sizeof(*nv));
				if (!nv)
					return -ENOMEM;
				pl->leaves = nv;
			}
			lf = &pl->leaves[pl->nleaves++];
			lf->first = (uint32_t)i;
			lf->count = 0;
			used = 0;
		}
		lf->count++;
		lf->hash = pl->items[i].hash;
		used += need;
	}
	return 0;
}

/* Node levels over the leaves, and every block's place in the fork. */
static int
build_nodes(struct attr_plan *pl)
{
	uint32_t maxents = xk_da3_node_maxents(pl->blocksize);
	uint32_t m = pl->nleaves, lblk;
	const struct attr_blk *below = pl->leaves;

	while (m > 1) {
		struct attr_blk *lv;
		uint32_t k;

		if (pl->nlevels == MAX_NODE_LEVELS)
			return -EFBIG;
		lv = split_even(m, maxents, &k);
		if (!lv)
			return -ENOMEM;
		for (uint32_t j = 0; j < k; j++)
			lv[j].hash = below[lv[j].first + lv[j].count - 1].hash;
		pl->level[pl->nlevels] = lv;
		pl->nlevel[pl->nlevels] = k;
		pl->nlevels++;
		below = lv;
		m = k;
	}
	/* Root first, then the levels below it, then the leaves. */
	lblk = 0;
	for (uint32_t l = pl->nlevels; l-- > 0;)
		for (uint32_t j = 0; j < pl->nlevel[l]; j++)
			pl->level[l][j].lblk = lblk++;
	for (uint32_t j = 0; j < pl->nleaves; j++)
		pl->leaves[j].lblk = lblk++;
	pl->rmt_first = lblk;
	return 0;
}

/*
 * Name records and remote values in the caller's order: walking the
 * attributes in input order, each takes the next name slot down from
 * the end of its leaf and, when remote, the next fork blocks.  *endp
 * gets the block after the last remote value.
 */
static int
place_records(struct attr_plan *pl, uint64_t *endp)
{
	uint32_t *pos = malloc(pl->n * sizeof(*pos));
	uint32_t *leafof = malloc(pl->n * sizeof(*leafof));
	uint32_t *low = malloc(pl->nleaves * sizeof(*low));
	uint64_t rmt = pl->rmt_first;

	if (!pos || !leafof || !low) {
		free(pos);
		free(leafof);
		free(low);
		return -ENOMEM;
	}
	for (uint32_t l = 0; l < pl->nleaves; l++) {
		low[l] = pl->blocksize;
		for (uint32_t k = 0; k < pl->leaves[l].count; k++)
			leafof[pl->leaves[l].first + k] = l;
	}
	for (size_t i = 0; i < pl->n; i++)
		pos[pl->items[i].idx] = (uint32_t)i;
	for (size_t j = 0; j < pl->n; j++) {
		uint32_t i = pos[j];
		struct attr_item *it = &pl->items[i];

		low[leafof[i]] -= it->entsize;
		it->nameidx = low[leafof[i]];
		if (it->local)
			continue;
		it->valueblk = (uint32_t)rmt;
		it->rmtblks = xk_attr3_rmt_blocks(pl->blocksize,
						  it->xa->valuelen);
		rmt += it->rmtblks;
	}
	free(pos);
	free(leafof);
	free(low);
	*endp = rmt;
	return 0;
}

void
attr_plan_free(struct attr_plan *pl)
{
	free(pl->items);
	free(pl->leaves);
	for (uint32_t l = 0; l < XK_DA_NODE_MAXDEPTH; l++)
		free(pl->level[l]);
	memset(pl, 0, sizeof(*pl));
}

int
attr_plan_make(struct attr_plan *pl, uint32_t blocksize, uint32_t sf_space,
	       const struct xk_bld_xattr *xa, size_t n)
{
	uint32_t localmax = xk_attr_leaf_entsize_local_max(blocksize);
	uint64_t rmt;
	int err;

	memset(pl, 0, sizeof(*pl));
	pl->blocksize = blocksize;
	pl->n = n;
	if (blocksize < 512 || blocksize > 65536 ||
	    (blocksize & (blocksize - 1)))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		err = attr_xattr_check(&xa[i]);
		if (err)
			return err;
	}
	if (n == 0)
		return 0;
	pl->items = calloc(n, sizeof(*pl->items));
	if (!pl->items)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct attr_item *it = &pl->items[i];
		uint32_t loc = xk_attr_leaf_entsize_local(xa[i].namelen,
							  xa[i].valuelen);

		it->xa = &xa[i];
		it->idx = (uint32_t)i;
		it->hash = xattr_hash(&xa[i]);
		it->local = loc < localmax;
		it->entsize = it->local ? loc :
			      xk_attr_leaf_entsize_remote(xa[i].namelen);
	}
	qsort(pl->items, n, sizeof(*pl->items), item_cmp);
	/* Names are unique per namespace: compare within equal hashes
	 * (a parent pointer's hash covers its value too). */
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n &&
		     pl->items[j].hash == pl->items[i].hash; j++)
			if (attr_same_name(pl->items[i].xa, pl->items[j].xa)) {
				attr_plan_free(pl);
				return -EEXIST;
			}

	pl->sf_size = attr_sf_bytes(xa, n);
	if (pl->sf_size && pl->sf_size <= sf_space) {
		pl->form = ATTR_FORM_SF;
		return 0;
	}
	pl->sf_size = 0;
	err = pack_leaves(pl);
	if (!err && pl->nleaves > 1) {
		pl->form = ATTR_FORM_NODE;
		err = build_nodes(pl);
	} else if (!err) {
		pl->form = ATTR_FORM_LEAF;
		pl->rmt_first = 1;
	}
	if (err) {
		attr_plan_free(pl);
		return err;
	}
	err = place_records(pl, &rmt);
	if (!err && rmt > UINT32_MAX)
		err = -EFBIG;
	if (err) {
		attr_plan_free(pl);
		return err;
	}
	pl->nblocks = (uint32_t)rmt;
	return 0;
}

void
attr_sf_fill(const struct xk_bld_xattr *xa, size_t n, uint8_t *out)
{
	struct xk_attr_sf_hdr *h = (struct xk_attr_sf_hdr *)out;
	uint8_t *p = out + sizeof(*h);

	for (size_t i = 0; i < n; i++) {
		struct xk_attr_sf_entry *e = (struct xk_attr_sf_entry *)p;

		e->namelen = xa[i].namelen;
		e->valuelen = (uint8_t)xa[i].valuelen;
		e->flags = xa[i].flags;
		memcpy(e->nameval, xa[i].name, xa[i].namelen);
		if (xa[i].valuelen)
			memcpy(e->nameval + xa[i].namelen, xa[i].value,
			       xa[i].valuelen);
		p += xk_attr_sf_entsize(e);
	}
	xk_be16_set(&h->totsize, (uint16_t)(p - out));
	h->count = (uint8_t)n;
	h->padding = 0;
}

static void
blkinfo_fill(struct xk_da3_blkinfo *info, uint16_t magic, uint32_t forw,
	     uint32_t back, const struct attr_blkid *id)
{
	xk_be32_set(&info->hdr.forw, forw);
	xk_be32_set(&info->hdr.back, back);
	xk_be16_set(&info->hdr.magic, magic);
	xk_be64_set(&info->blkno, id->daddr);
	memcpy(info->uuid, id->uuid, 16);
	xk_be64_set(&info->owner, id->ino);
}

void
attr_leaf_fill(const struct attr_plan *pl, uint32_t i,
	       const struct attr_blkid *id, uint8_t *out)
{
	const struct attr_blk *lf = &pl->leaves[i];
	struct xk_attr3_leaf_hdr *h = (struct xk_attr3_leaf_hdr *)out;
	struct xk_attr_leaf_entry *ents = xk_attr3_leaf_entryp(h);
	uint32_t firstused = pl->blocksize, used = 0, base;

	blkinfo_fill(&h->info, XK_ATTR3_LEAF_MAGIC,
		     i + 1 < pl->nleaves ? pl->leaves[i + 1].lblk : 0,
		     i > 0 ? pl->leaves[i - 1].lblk : 0, id);
	for (uint32_t k = 0; k < lf->count; k++) {
		const struct attr_item *it = &pl->items[lf->first + k];
		const struct xk_bld_xattr *x = it->xa;
		uint8_t *rec;

		if (it->nameidx < firstused)
			firstused = it->nameidx;
		used += it->entsize;
		rec = out + it->nameidx;
		xk_be32_set(&ents[k].hashval, it->hash);
		xk_be16_set(&ents[k].nameidx, (uint16_t)it->nameidx);
		ents[k].flags = x->flags;
		if (it->local) {
			struct xk_attr_leaf_name_local *nl = (void *)rec;

			ents[k].flags |= XK_ATTR_LOCAL;
			xk_be16_set(&nl->valuelen, (uint16_t)x->valuelen);
			nl->namelen = x->namelen;
			memcpy(nl->nameval, x->name, x->namelen);
			if (x->valuelen)
				memcpy(nl->nameval + x->namelen, x->value,
				       x->valuelen);
		} else {
			struct xk_attr_leaf_name_remote *nr = (void *)rec;

			xk_be32_set(&nr->valueblk, it->valueblk);
			xk_be32_set(&nr->valuelen, x->valuelen);
			nr->namelen = x->namelen;
			memcpy(nr->name, x->name, x->namelen);
		}
	}
	base = (uint32_t)(LEAF_HDR + lf->count * LEAF_ENT);
	xk_be16_set(&h->count, (uint16_t)lf->count);
	xk_be16_set(&h->usedbytes, (uint16_t)used);
	xk_be16_set(&h->firstused, (uint16_t)firstused);
	xk_be16_set(&h->freemap[0].base, (uint16_t)base);
	xk_be16_set(&h->freemap[0].size, (uint16_t)(firstused - base));
}

void
attr_node_fill(const struct attr_plan *pl, uint32_t lvl, uint32_t i,
	       const struct attr_blkid *id, uint8_t *out)
{
	const struct attr_blk *nb = &pl->level[lvl][i];
	const struct attr_blk *kids = lvl ? pl->level[lvl - 1] : pl->leaves;
	struct xk_da3_node_hdr *h = (struct xk_da3_node_hdr *)out;
	uint32_t n = pl->nlevel[lvl];

	blkinfo_fill(&h->info, XK_DA3_NODE_MAGIC,
		     i + 1 < n ? pl->level[lvl][i + 1].lblk : 0,
		     i > 0 ? pl->level[lvl][i - 1].lblk : 0, id);
	xk_be16_set(&h->count, (uint16_t)nb->count);
	xk_be16_set(&h->level, (uint16_t)(lvl + 1));
	for (uint32_t k = 0; k < nb->count; k++) {
		struct xk_da_node_entry *e = xk_da3_node_entry(h, k);
		const struct attr_blk *kid = &kids[nb->first + k];

		xk_be32_set(&e->hashval, kid->hash);
		xk_be32_set(&e->before, kid->lblk);
	}
}

uint32_t
attr_rmt_fill(const struct attr_plan *pl, const struct attr_item *it,
	      uint32_t k, const struct attr_blkid *id, uint8_t *out)
{
	struct xk_attr3_rmt_hdr *h = (struct xk_attr3_rmt_hdr *)out;
	uint32_t space = xk_attr3_rmt_buf_space(pl->blocksize);
	uint32_t off = k * space, bytes = it->xa->valuelen - off;

	if (bytes > space)
		bytes = space;
	xk_be32_set(&h->rm_magic, XK_ATTR3_RMT_MAGIC);
	xk_be32_set(&h->rm_offset, off);
	xk_be32_set(&h->rm_bytes, bytes);
	memcpy(h->rm_uuid, id->uuid, 16);
	xk_be64_set(&h->rm_owner, id->ino);
	xk_be64_set(&h->rm_blkno, id->daddr);
	memcpy(out + sizeof(*h), it->xa->value + off, bytes);
	return bytes;
}
