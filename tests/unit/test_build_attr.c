// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Extended attribute layout (libfs/write/attr_fmt.c), in memory: the
 * format chosen for a set of attributes (short form, leaf, node, remote
 * values, at the kernel's thresholds), and every block it makes run
 * through the libfs verifiers, then decoded independently here (entries,
 * names, values, sibling links, node hashes) and compared with the
 * attributes it was built from.  Block sizes 1 KiB to 64 KiB.
 */
#include "scratch.h"
#include "unit.h"

#include <errno.h>

#include <xfskit/meta.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/da.h>

#include "../../libfs/write/attr_fmt.h"

#define INO	128

/* A set of attributes with storage for names and values. */
struct aset {
	struct xk_bld_xattr	*xa;
	size_t			n;
	uint8_t			*store;
	size_t			used, cap;
	int			*seen;
	uint32_t		*recoff;	/* name record offsets */
	uint32_t		*valblk;	/* remote value blocks */
	uint64_t		*byhash;	/* hash << 32 | index, sorted */
};

static uint8_t *
aset_bytes(struct aset *s, size_t len)
{
	uint8_t *p = s->store + s->used;

	ck_assert_uint_le(s->used + len, s->cap);
	s->used += len;
	return p;
}

/* n attributes "<prefix><i>" with vlen-byte values (pattern by i). */
static void
aset_make(struct aset *s, size_t n, const char *prefix, uint32_t vlen,
	  uint8_t flags)
{
	s->n = n;
	s->xa = calloc(n, sizeof(*s->xa));
	s->cap = n * (strlen(prefix) + 12 + vlen) + 1;
	s->store = malloc(s->cap);
	s->seen = calloc(n, sizeof(int));
	s->recoff = calloc(n, sizeof(uint32_t));
	s->valblk = calloc(n, sizeof(uint32_t));
	s->byhash = NULL;
	s->used = 0;
	ck_assert_ptr_nonnull(s->xa);
	ck_assert_ptr_nonnull(s->store);
	for (size_t i = 0; i < n; i++) {
		char name[300];
		int len = snprintf(name, sizeof(name), "%s%zu", prefix, i);
		uint8_t *np = aset_bytes(s, (size_t)len);
		uint8_t *vp = aset_bytes(s, vlen);

		memcpy(np, name, (size_t)len);
		for (uint32_t k = 0; k < vlen; k++)
			vp[k] = (uint8_t)(i * 7 + k * 13 + 1);
		s->xa[i] = (struct xk_bld_xattr){ .flags = flags, .name = np,
			.namelen = (uint8_t)len, .value = vp,
			.valuelen = vlen };
	}
}

static void
aset_free(struct aset *s)
{
	free(s->xa);
	free(s->store);
	free(s->seen);
	free(s->recoff);
	free(s->valblk);
	free(s->byhash);
	memset(s, 0, sizeof(*s));
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Index the set by name hash, for lookups in big sets. */
static void
aset_index(struct aset *s)
{
	free(s->byhash);
	s->byhash = malloc((s->n ? s->n : 1) * sizeof(uint64_t));
	ck_assert_ptr_nonnull(s->byhash);
	for (size_t i = 0; i < s->n; i++)
		s->byhash[i] = (uint64_t)xk_da_hashname(s->xa[i].name,
				s->xa[i].namelen) << 32 | i;
	qsort(s->byhash, s->n, sizeof(uint64_t), u64_cmp);
}

/* Index of the attribute with this namespace and name, or -1. */
static long
aset_find(const struct aset *s, uint8_t flags, const uint8_t *name,
	  unsigned int len)
{
	uint64_t key = (uint64_t)xk_da_hashname(name, (int)len) << 32;
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->byhash[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < s->n && (s->byhash[lo] >> 32) == (key >> 32); lo++) {
		size_t i = (uint32_t)s->byhash[lo];

		if (s->xa[i].flags == flags && s->xa[i].namelen == len &&
		    !memcmp(s->xa[i].name, name, len))
			return (long)i;
	}
	return -1;
}

static void
verify_ok(uint8_t *data, uint32_t len, uint64_t daddr,
	  const struct xk_buf_ops *ops)
{
	const struct xk_buf_site site = { .daddr = daddr, .agno = -1,
					  .owner = INO };
	struct xk_fail f;
	int err = xk_buf_verify_mem(mp, ops, data, len, &site, &f);

	if (err) {
		char line[256];

		xk_fail_format(&f, line, sizeof(line));
		fprintf(stderr, "verify: %s\n", line);
	}
	ck_assert_int_eq(err, 0);
}

/* Made blocks of a plan, by attr-fork block; daddr = 1000 + 8 * lblk. */
struct image {
	uint32_t	bs;
	uint32_t	nblocks;
	uint8_t		*blk;
};

static uint8_t *
img_blk(struct image *im, uint32_t lblk)
{
	ck_assert_uint_lt(lblk, im->nblocks);
	return im->blk + (size_t)lblk * im->bs;
}

static struct attr_blkid
blkid(uint32_t lblk)
{
	return (struct attr_blkid){ .ino = INO, .daddr = 1000 + 8ull * lblk,
				    .uuid = mp->meta_uuid };
}

/* Fill every block of the plan, checking each lands in its own place. */
static void
img_make(struct image *im, const struct attr_plan *pl)
{
	uint8_t *owner;

	im->bs = pl->blocksize;
	im->nblocks = pl->nblocks;
	im->blk = calloc(pl->nblocks, pl->blocksize);
	owner = calloc(pl->nblocks, 1);
	ck_assert_ptr_nonnull(im->blk);
	for (uint32_t l = 0; l < pl->nlevels; l++)
		for (uint32_t i = 0; i < pl->nlevel[l]; i++) {
			uint32_t lb = pl->level[l][i].lblk;
			struct attr_blkid id = blkid(lb);

			ck_assert_int_eq(owner[lb]++, 0);
			attr_node_fill(pl, l, i, &id, img_blk(im, lb));
			verify_ok(img_blk(im, lb), im->bs, id.daddr,
				  &xk_da3_node_buf_ops);
		}
	for (uint32_t i = 0; i < pl->nleaves; i++) {
		uint32_t lb = pl->leaves[i].lblk;
		struct attr_blkid id = blkid(lb);

		ck_assert_int_eq(owner[lb]++, 0);
		attr_leaf_fill(pl, i, &id, img_blk(im, lb));
		verify_ok(img_blk(im, lb), im->bs, id.daddr,
			  &xk_attr3_leaf_buf_ops);
	}
	for (size_t i = 0; i < pl->n; i++) {
		const struct attr_item *it = &pl->items[i];
		uint32_t got = 0;

		for (uint32_t k = 0; k < it->rmtblks; k++) {
			uint32_t lb = it->valueblk + k;
			struct attr_blkid id = blkid(lb);

			ck_assert_int_eq(owner[lb]++, 0);
			got += attr_rmt_fill(pl, it, k, &id, img_blk(im, lb));
			verify_ok(img_blk(im, lb), im->bs, id.daddr,
				  &xk_attr3_rmt_buf_ops);
		}
		ck_assert_uint_eq(got, it->local ? 0 : it->xa->valuelen);
	}
	/* Every block of the fork is used exactly once. */
	for (uint32_t lb = 0; lb < pl->nblocks; lb++)
		ck_assert_int_eq(owner[lb], 1);
	free(owner);
}

/* Reassemble a remote value from its blocks; compare with want. */
static void
check_remote(struct image *im, uint32_t blk, const struct xk_bld_xattr *x)
{
	uint32_t off = 0;

	/* xfs_repair: block 0 never holds a value. */
	ck_assert_uint_ne(blk, 0);
	while (off < x->valuelen) {
		const struct xk_attr3_rmt_hdr *h = (const void *)img_blk(im,
									 blk);
		uint32_t bytes = xk_be32_get(h->rm_bytes);

		ck_assert_uint_eq(xk_be32_get(h->rm_offset), off);
		ck_assert_uint_eq(xk_be64_get(h->rm_owner), INO);
		ck_assert_uint_eq(xk_be64_get(h->rm_blkno), 1000 + 8ull * blk);
		ck_assert_uint_gt(bytes, 0);
		ck_assert_int_eq(memcmp((const uint8_t *)h + sizeof(*h),
					x->value + off, bytes), 0);
		off += bytes;
		blk++;
	}
	ck_assert_uint_eq(off, x->valuelen);
}

/*
 * Decode leaf block lblk on its own terms: header fields against what
 * the entries say, every entry's name and value against the set; returns
 * the leaf's last hash.
 */
static uint32_t
check_leaf(struct image *im, uint32_t lblk, struct aset *s, size_t *found)
{
	const uint8_t *b = img_blk(im, lblk);
	const struct xk_attr3_leaf_hdr *h = (const void *)b;
	const struct xk_attr_leaf_entry *e = xk_attr3_leaf_entryp(h);
	uint32_t count = xk_be16_get(h->count), lowest = im->bs, used = 0;
	uint32_t localmax = xk_attr_leaf_entsize_local_max(im->bs);
	uint32_t lasthash = 0;

	ck_assert_uint_eq(xk_be16_get(h->info.hdr.magic), XK_ATTR3_LEAF_MAGIC);
	ck_assert_uint_gt(count, 0);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t idx = xk_be16_get(e[i].nameidx), size;
		uint8_t ns = e[i].flags & (XK_ATTR_ROOT | XK_ATTR_SECURE);
		long k;

		ck_assert_int_eq(e[i].flags & XK_ATTR_INCOMPLETE, 0);
		if (i)
			ck_assert_uint_ge(xk_be32_get(e[i].hashval),
					  xk_be32_get(e[i - 1].hashval));
		if (e[i].flags & XK_ATTR_LOCAL) {
			const struct xk_attr_leaf_name_local *nl =
				(const void *)(b + idx);
			uint32_t vl = xk_be16_get(nl->valuelen);

			k = aset_find(s, ns, nl->nameval, nl->namelen);
			ck_assert_int_ge(k, 0);
			ck_assert_uint_eq(vl, s->xa[k].valuelen);
			ck_assert_int_eq(memcmp(nl->nameval + nl->namelen,
						s->xa[k].value, vl), 0);
			size = xk_attr_leaf_entsize_local(nl->namelen, vl);
			/* Local exactly when under 3/4 of the block. */
			ck_assert_uint_lt(size, localmax);
		} else {
			const struct xk_attr_leaf_name_remote *nr =
				(const void *)(b + idx);

			k = aset_find(s, ns, nr->name, nr->namelen);
			ck_assert_int_ge(k, 0);
			ck_assert_uint_eq(xk_be32_get(nr->valuelen),
					  s->xa[k].valuelen);
			ck_assert_uint_ge(xk_attr_leaf_entsize_local(
					s->xa[k].namelen, s->xa[k].valuelen),
					localmax);
			check_remote(im, xk_be32_get(nr->valueblk), &s->xa[k]);
			s->valblk[k] = xk_be32_get(nr->valueblk);
			size = xk_attr_leaf_entsize_remote(nr->namelen);
		}
		ck_assert_uint_eq(xk_be32_get(e[i].hashval),
				  xk_da_hashname(s->xa[k].name,
						 s->xa[k].namelen));
		ck_assert_int_eq(s->seen[k]++, 0);
		s->recoff[k] = idx;
		(*found)++;
		used += size;
		if (idx < lowest)
			lowest = idx;
		lasthash = xk_be32_get(e[i].hashval);
	}
	/* Compacted: names packed at the end, one free region. */
	ck_assert_uint_eq(xk_be16_get(h->usedbytes), used);
	ck_assert_uint_eq(xk_be16_get(h->firstused), lowest);
	ck_assert_uint_eq(lowest + used, im->bs);
	ck_assert_uint_eq(xk_be16_get(h->freemap[0].base),
			  sizeof(*h) + count * sizeof(*e));
	ck_assert_uint_eq(xk_be16_get(h->freemap[0].base) +
			  xk_be16_get(h->freemap[0].size), lowest);
	ck_assert_uint_eq(xk_be16_get(h->freemap[1].size), 0);
	ck_assert_uint_eq(xk_be16_get(h->freemap[2].size), 0);
	ck_assert_int_eq(h->holes, 0);
	return lasthash;
}

/*
 * Walk a dabtree from block 0 down to the leaves: node levels, counts
 * and hashes against the blocks below, sibling links at every level;
 * returns the number of leaves reached.
 */
struct walk {
	struct image	*im;
	struct aset	*s;
	size_t		found;
	/* The last block seen at each level. */
	uint32_t	prev[XK_DA_NODE_MAXDEPTH + 1];
	uint32_t	lasthash;
	uint32_t	leaves;
};

static uint32_t
walk_blk(struct walk *w, uint32_t lblk, int expect_level)
{
	const uint8_t *b = img_blk(w->im, lblk);
	const struct xk_da_blkinfo *info = (const void *)b;
	uint32_t back = xk_be32_get(info->back), hash;

	/* back links to the previous block at this level (0 for none). */
	ck_assert_uint_eq(back, w->prev[expect_level]);
	if (w->prev[expect_level]) {
		const struct xk_da_blkinfo *pi = (const void *)img_blk(w->im,
						w->prev[expect_level]);

		ck_assert_uint_eq(xk_be32_get(pi->forw), lblk);
	}
	w->prev[expect_level] = lblk;
	if (expect_level == 0) {
		ck_assert_uint_eq(xk_be16_get(info->magic),
				  XK_ATTR3_LEAF_MAGIC);
		hash = check_leaf(w->im, lblk, w->s, &w->found);
		ck_assert_uint_ge(hash, w->lasthash);
		w->lasthash = hash;
		w->leaves++;
		return hash;
	}
	{
		const struct xk_da3_node_hdr *h = (const void *)b;
		uint32_t count = xk_be16_get(h->count);

		ck_assert_uint_eq(xk_be16_get(info->magic), XK_DA3_NODE_MAGIC);
		ck_assert_int_eq(xk_be16_get(h->level), expect_level);
		ck_assert_uint_gt(count, 0);
		ck_assert_uint_le(count, xk_da3_node_maxents(w->im->bs));
		for (uint32_t i = 0; i < count; i++) {
			const struct xk_da_node_entry *e =
				xk_da3_node_entry(h, i);
			uint32_t before = xk_be32_get(e->before);

			ck_assert_uint_ne(before, 0);
			hash = walk_blk(w, before, expect_level - 1);
			ck_assert_uint_eq(xk_be32_get(e->hashval), hash);
		}
		return xk_be32_get(xk_da3_node_entry(h, count - 1)->hashval);
	}
}

/* Build, verify and decode; returns the plan's form. */
static enum attr_form
roundtrip(struct aset *s, uint32_t bs, uint32_t sf_space, uint32_t *levels)
{
	struct attr_plan pl;
	struct image im;
	enum attr_form form;

	ck_assert_int_eq(attr_plan_make(&pl, bs, sf_space, s->xa, s->n), 0);
	form = pl.form;
	aset_index(s);
	memset(s->seen, 0, s->n * sizeof(int));
	if (form == ATTR_FORM_SF) {
		uint8_t *sf = calloc(1, pl.sf_size);
		const struct xk_attr_sf_hdr *h = (const void *)sf;
		const struct xk_attr_sf_entry *e = xk_attr_sf_firstentry(h);

		attr_sf_fill(s->xa, s->n, sf);
		ck_assert_uint_eq(xk_be16_get(h->totsize), pl.sf_size);
		ck_assert_uint_eq(h->count, s->n);
		for (size_t i = 0; i < s->n; i++) {
			/* Short form keeps the order attributes came in. */
			ck_assert_uint_eq(e->namelen, s->xa[i].namelen);
			ck_assert_uint_eq(e->valuelen, s->xa[i].valuelen);
			ck_assert_uint_eq(e->flags, s->xa[i].flags);
			ck_assert_int_eq(memcmp(e->nameval, s->xa[i].name,
						e->namelen), 0);
			ck_assert_int_eq(memcmp(e->nameval + e->namelen,
						s->xa[i].value, e->valuelen),
					 0);
			e = xk_attr_sf_nextentry(e);
		}
		ck_assert_uint_eq((const uint8_t *)e - sf, pl.sf_size);
		free(sf);
		attr_plan_free(&pl);
		return form;
	}
	img_make(&im, &pl);
	if (form == ATTR_FORM_LEAF) {
		size_t found = 0;
		const struct xk_da_blkinfo *info = (const void *)im.blk;

		ck_assert_uint_eq(xk_be32_get(info->forw), 0);
		ck_assert_uint_eq(xk_be32_get(info->back), 0);
		check_leaf(&im, 0, s, &found);
		ck_assert_uint_eq(found, s->n);
		*levels = 0;
		/*
		 * As the kernel adds them: each name record below the one
		 * before, each remote value after the one before.
		 */
		for (size_t i = 0; i < s->n; i++) {
			uint32_t end = i ? s->recoff[i - 1] : bs;
			uint32_t sz = xk_attr_leaf_entsize_local(
				s->xa[i].namelen, s->xa[i].valuelen);

			if (sz >= xk_attr_leaf_entsize_local_max(bs))
				sz = xk_attr_leaf_entsize_remote(
						s->xa[i].namelen);
			ck_assert_uint_eq(s->recoff[i] + sz, end);
		}
		for (size_t i = 0, last = 0; i < s->n; i++)
			if (s->valblk[i]) {
				ck_assert_uint_gt(s->valblk[i], last);
				last = s->valblk[i];
			}
	} else {
		struct walk w = { .im = &im, .s = s };
		const struct xk_da3_node_hdr *root = (const void *)im.blk;
		int top = xk_be16_get(root->level);

		ck_assert_uint_eq(xk_be16_get(root->info.hdr.magic),
				  XK_DA3_NODE_MAGIC);
		walk_blk(&w, 0, top);
		ck_assert_uint_eq(w.found, s->n);
		ck_assert_uint_eq(w.leaves, pl.nleaves);
		/* The last block of every level links forward to nothing. */
		for (int l = 0; l <= top; l++) {
			const struct xk_da_blkinfo *info = (const void *)
				img_blk(&im, w.prev[l]);

			ck_assert_uint_eq(xk_be32_get(info->forw), 0);
		}
		*levels = (uint32_t)top;
	}
	for (size_t i = 0; i < s->n; i++)
		ck_assert_int_eq(s->seen[i], 1);
	free(im.blk);
	attr_plan_free(&pl);
	return form;
}

START_TEST(test_shortform)
{
	struct aset s;
	uint32_t lv;
	static const uint8_t want[] = {
		0x00, 0x0f, 0x01, 0x00,		/* totsize 15, count 1 */
		0x05, 0x03, 0x00,		/* namelen, valuelen, user */
		'a', 'b', 'c', 'd', '0', 0x01, 0x0e, 0x1b,
	};
	uint8_t got[sizeof(want)];
	struct attr_plan pl;

	aset_make(&s, 1, "abcd", 3, 0);
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 100, s.xa, 1), 0);
	ck_assert_int_eq(pl.form, ATTR_FORM_SF);
	ck_assert_uint_eq(pl.sf_size, sizeof(want));
	ck_assert_uint_eq(pl.nblocks, 0);
	attr_sf_fill(s.xa, 1, got);
	ck_assert_int_eq(memcmp(got, want, sizeof(want)), 0);
	attr_plan_free(&pl);
	ck_assert_int_eq(roundtrip(&s, 4096, 100, &lv), ATTR_FORM_SF);
	/* The same attribute with no room in the inode: a leaf. */
	ck_assert_int_eq(roundtrip(&s, 4096, 14, &lv), ATTR_FORM_LEAF);
	ck_assert_int_eq(roundtrip(&s, 4096, 15, &lv), ATTR_FORM_SF);
	aset_free(&s);
}
END_TEST

/* Short form takes names and values under 255 bytes only. */
START_TEST(test_shortform_limits)
{
	struct aset s;
	uint32_t lv;

	aset_make(&s, 1, "v", 254, 0);
	ck_assert_int_eq(roundtrip(&s, 4096, 1000, &lv), ATTR_FORM_SF);
	aset_free(&s);
	aset_make(&s, 1, "v", 255, 0);
	ck_assert_int_eq(roundtrip(&s, 4096, 1000, &lv), ATTR_FORM_LEAF);
	aset_free(&s);
	{
		char name[256];

		memset(name, 'n', 253);
		name[253] = 0;
		aset_make(&s, 1, name, 0, 0);	/* 254-byte name */
		ck_assert_int_eq(roundtrip(&s, 4096, 1000, &lv), ATTR_FORM_SF);
		aset_free(&s);
		name[253] = 'n';
		name[254] = 0;
		aset_make(&s, 1, name, 0, 0);	/* 255 */
		ck_assert_int_eq(roundtrip(&s, 4096, 1000, &lv),
				 ATTR_FORM_LEAF);
		aset_free(&s);
	}
	/* 255 entries fit the one-byte count, 256 do not. */
	aset_make(&s, 255, "", 0, 0);
	ck_assert_int_eq(roundtrip(&s, 4096, 4000, &lv), ATTR_FORM_SF);
	aset_free(&s);
	aset_make(&s, 256, "", 0, 0);
	ck_assert_int_ne(roundtrip(&s, 4096, 4000, &lv), ATTR_FORM_SF);
	aset_free(&s);
}
END_TEST

START_TEST(test_leaf)
{
	static const uint32_t sizes[] = { 1024, 4096, 65536 };

	for (size_t i = 0; i < 3; i++) {
		struct aset s;
		uint32_t lv;

		aset_make(&s, 30, "user_attribute_", 16, 0);
		ck_assert_int_eq(roundtrip(&s, sizes[i], 300, &lv),
				 sizes[i] == 1024 ? ATTR_FORM_NODE :
						    ATTR_FORM_LEAF);
		aset_free(&s);
	}
}
END_TEST

/* Namespaces: one name in three namespaces is three attributes. */
START_TEST(test_namespaces)
{
	struct aset s;
	uint32_t lv;

	aset_make(&s, 30, "same", 40, 0);
	for (size_t i = 0; i < 30; i++) {
		s.xa[i].flags = i % 3 == 0 ? 0 : i % 3 == 1 ? XK_ATTR_ROOT :
			       XK_ATTR_SECURE;
		s.xa[i].namelen = 4;	/* all named "same" */
	}
	/* Ten of each namespace with one name: duplicates. */
	{
		struct attr_plan pl;

		ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, s.xa, 30),
				 -EEXIST);
		ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, s.xa, 3), 0);
		ck_assert_int_eq(pl.form, ATTR_FORM_LEAF);
		attr_plan_free(&pl);
	}
	s.n = 3;
	ck_assert_int_eq(roundtrip(&s, 4096, 0, &lv), ATTR_FORM_LEAF);
	ck_assert_int_eq(roundtrip(&s, 4096, 200, &lv), ATTR_FORM_SF);
	aset_free(&s);
}
END_TEST

/*
 * Local or remote: local while round_up(3 + namelen + valuelen, 4) is
 * under 3/4 of the block (3072 for 4 KiB).  With a 4-byte name, 3061
 * bytes make 3068 (local), 3062 make 3072 (remote).
 */
START_TEST(test_remote_threshold)
{
	struct aset s;
	struct attr_plan pl;
	uint32_t lv;

	aset_make(&s, 1, "abc", 3061, 0);	/* "abc0" */
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, s.xa, 1), 0);
	ck_assert_int_eq(pl.items[0].local, 1);
	ck_assert_uint_eq(pl.nblocks, 1);
	attr_plan_free(&pl);
	ck_assert_int_eq(roundtrip(&s, 4096, 0, &lv), ATTR_FORM_LEAF);
	aset_free(&s);

	aset_make(&s, 1, "abc", 3062, 0);
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, s.xa, 1), 0);
	ck_assert_int_eq(pl.items[0].local, 0);
	ck_assert_uint_eq(pl.items[0].valueblk, 1);
	ck_assert_uint_eq(pl.nblocks, 2);
	attr_plan_free(&pl);
	ck_assert_int_eq(roundtrip(&s, 4096, 0, &lv), ATTR_FORM_LEAF);
	aset_free(&s);
}
END_TEST

/* The largest value: 64 KiB over 4040-byte pieces is 17 blocks. */
START_TEST(test_remote_max)
{
	struct aset s;
	struct attr_plan pl;
	uint32_t lv;

	aset_make(&s, 3, "big", 65536, XK_ATTR_SECURE);
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 1000, s.xa, 3), 0);
	ck_assert_int_eq(pl.form, ATTR_FORM_LEAF);
	ck_assert_uint_eq(pl.nblocks, 1 + 3 * 17);
	attr_plan_free(&pl);
	ck_assert_int_eq(roundtrip(&s, 4096, 1000, &lv), ATTR_FORM_LEAF);
	ck_assert_int_eq(roundtrip(&s, 1024, 1000, &lv), ATTR_FORM_LEAF);
	ck_assert_int_eq(roundtrip(&s, 65536, 1000, &lv), ATTR_FORM_LEAF);
	aset_free(&s);
	/* One byte more is refused. */
	aset_make(&s, 1, "big", 65537, 0);
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, s.xa, 1), -E2BIG);
	aset_free(&s);
}
END_TEST

START_TEST(test_node)
{
	struct aset s;
	uint32_t lv = 0;

	aset_make(&s, 2000, "user.attribute.", 24, 0);
	ck_assert_int_eq(roundtrip(&s, 4096, 300, &lv), ATTR_FORM_NODE);
	ck_assert_uint_eq(lv, 1);
	aset_free(&s);
	/* Remote values under a node tree (24 bytes of leaf each). */
	aset_make(&s, 300, "r", 3500, XK_ATTR_ROOT);
	ck_assert_int_eq(roundtrip(&s, 4096, 300, &lv), ATTR_FORM_NODE);
	aset_free(&s);
}
END_TEST

/* 1 KiB blocks, four 200-byte values a leaf: 500 leaves, two levels. */
START_TEST(test_node_levels)
{
	struct aset s;
	uint32_t lv = 0;

	aset_make(&s, 2000, "deep", 200, 0);
	ck_assert_int_eq(roundtrip(&s, 1024, 300, &lv), ATTR_FORM_NODE);
	ck_assert_uint_eq(lv, 2);
	aset_free(&s);
	aset_make(&s, 60000, "d", 200, 0);
	ck_assert_int_eq(roundtrip(&s, 1024, 300, &lv), ATTR_FORM_NODE);
	ck_assert_uint_eq(lv, 3);
	aset_free(&s);
}
END_TEST

START_TEST(test_bad_input)
{
	struct aset s;
	struct attr_plan pl;
	static const uint8_t nul[] = { 'a', 0, 'b' };

	aset_make(&s, 2, "x", 4, 0);
	s.xa[1].flags = XK_ATTR_ROOT | XK_ATTR_SECURE;
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, s.xa, 2), -EINVAL);
	s.xa[1].flags = XK_ATTR_INCOMPLETE;
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, s.xa, 2), -EINVAL);
	s.xa[1].flags = 0;
	s.xa[1].namelen = 0;
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, s.xa, 2), -EINVAL);
	s.xa[1].name = nul;
	s.xa[1].namelen = sizeof(nul);
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, s.xa, 2), -EINVAL);
	s.xa[1].name = s.xa[0].name;
	s.xa[1].namelen = s.xa[0].namelen;
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, s.xa, 2), -EEXIST);
	s.xa[1].flags = XK_ATTR_SECURE;
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, s.xa, 2), 0);
	attr_plan_free(&pl);
	s.xa[1].value = NULL;
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, s.xa, 2), -EINVAL);
	/* No attributes: no fork. */
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, s.xa, 0), 0);
	ck_assert_int_eq(pl.form, ATTR_FORM_NONE);
	attr_plan_free(&pl);
	aset_free(&s);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("build_attr");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_shortform);
	tcase_add_test(tc, test_shortform_limits);
	tcase_add_test(tc, test_leaf);
	tcase_add_test(tc, test_namespaces);
	tcase_add_test(tc, test_remote_threshold);
	tcase_add_test(tc, test_remote_max);
	tcase_add_test(tc, test_node);
	tcase_add_test(tc, test_node_levels);
	tcase_add_test(tc, test_bad_input);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(suite());
}
