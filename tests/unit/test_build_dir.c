// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Directory layout (libfs/write/dir_fmt.c), in memory.  The format
 * chosen for every prefix of a name list, and the address of every
 * entry, are compared with a separate, simple model of the kernel adding
 * the names one by one (short form until it outgrows the fork or a
 * block, block until an entry and its leaf entry no longer fit, leaf
 * until the leaf has no room for a hash entry and a best, then node;
 * first data block with room in leaf form, last in node form).  Every
 * block of a plan goes through its libfs verifier and is decoded here
 * independently: each entry where the model put it, "." and "..", tags
 * and bestfree, the hash index against the names, bests
 * and free index against the data blocks, node hashes and sibling
 * links, di_size.  Short forms are decoded too, with 8-byte inode
 * numbers.  Directory blocks of 1 KiB-block filesystems, 4 KiB, 16 KiB
 * and 64 KiB.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/libfs.h>
#include <xfskit/meta.h>
#include <xfskit/format/da.h>
#include <xfskit/format/dir.h>

#include "unit.h"
#include "../../libfs/write/dir_fmt.h"

/*
 * Check records every passing ck_assert (a write per call); the loops
 * here make millions of checks, so they only call Check on a failure.
 */
#define EXPECT(c)							\
	do {								\
		if (!(c))						\
			ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c); \
	} while (0)
#define EXPECT_EQ(a, b)							\
	do {								\
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);	\
		if (a_ != b_)						\
			ck_abort_msg("%s:%d: %s == %llu, %s == %llu",	\
				     __FILE__, __LINE__, #a,		\
				     (unsigned long long)a_, #b,	\
				     (unsigned long long)b_);		\
	} while (0)

#define EXPECT_LT(a, b)	EXPECT((a) < (b))
#define EXPECT_GE(a, b)	EXPECT((a) >= (b))
#define EXPECT_NN(p)	EXPECT((p) != NULL)

#define SELF	128
#define PARENT	129

static char img_path[64];
static struct xk_mount *mp;
static struct xk_dev *dev;

/* A handle on a blank sparse file: fs block bs, directory blocks << dl. */
static void
mount_geo(uint32_t bs, unsigned int dirblklog)
{
	struct xk_sb sb;
	struct xk_fail f;
	unsigned int blog = bs == 1024 ? 10 : 12;
	int fd;

	strcpy(img_path, "/tmp/xk-test-dir-XXXXXX");
	fd = mkstemp(img_path);
	ck_assert_int_ge(fd, 0);
	memset(&sb, 0, sizeof(sb));
	sb.magicnum = XK_SB_MAGIC;
	sb.blocksize = bs;
	sb.blocklog = (uint8_t)blog;
	sb.agblocks = 32768;
	sb.agblklog = 15;
	sb.agcount = 4;
	sb.dblocks = 131072;
	ck_assert_int_eq(ftruncate(fd, (off_t)sb.dblocks * bs), 0);
	close(fd);
	sb.logstart = 65542;
	sb.logblocks = bs == 1024 ? 16384 : 16384;
	sb.rootino = 128;
	sb.rextsize = bs == 1024 ? 4 : 1;
	sb.versionnum = 0xb4a5;
	sb.sectsize = 512;
	sb.sectlog = 9;
	sb.inodesize = 512;
	sb.inodelog = 9;
	sb.inopblock = (uint16_t)(bs / 512);
	sb.inopblog = (uint8_t)(blog - 9);
	sb.inoalignmt = 32768 >> blog;
	sb.features_ro_compat = 0xf;
	sb.features_incompat = 0xb;
	sb.spino_align = (uint32_t)(8192 >> blog);
	sb.dirblklog = (uint8_t)dirblklog;
	memset(sb.uuid, 0x42, 16);
	ck_assert_int_eq(xk_dev_open(img_path, 0, &dev), 0);
	if (xk_mount_from_sb(dev, &sb, 0, &mp, &f)) {
		char msg[256];

		xk_fail_format(&f, msg, sizeof(msg));
		ck_abort_msg("mount: %s", msg);
	}
}

static void
unmount(void)
{
	ck_assert_int_eq(xk_mount_close(mp), 0);
	xk_dev_close(dev);
	unlink(img_path);
}

static struct dir_geo
geo(void)
{
	struct dir_geo g = {
		.blksize = mp->g.dirblksize,
		.dblog = mp->g.blocklog + mp->g.dirblklog,
		.fsblog = mp->g.blocklog,
		.has_ftype = 1,
	};

	return g;
}

/* --- name lists --- */

struct nlist {
	uint8_t			*buf;
	struct xk_bld_dirent	*ents;
	size_t			n;
};

static uint64_t seed;

static uint32_t
rnd(void)
{
	seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(seed >> 33);
}

/*
 * n unique names of lo..hi bytes (a 4-byte index then random bytes other
 * than NUL and '/'), inode numbers from 1000, assorted file types.
 */
static void
nlist_make(struct nlist *l, size_t n, unsigned int lo, unsigned int hi)
{
	l->n = n;
	l->buf = malloc(n * 255 + 1);
	l->ents = calloc(n + 1, sizeof(*l->ents));
	EXPECT_NN(l->buf);
	EXPECT_NN(l->ents);
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = l->buf + i * 255;
		unsigned int len = lo + rnd() % (hi - lo + 1);
		uint64_t ino;

		for (unsigned int k = 0; k < len; k++) {
			do
				p[k] = (uint8_t)(1 + rnd() % 255);
			while (p[k] == '/' || p[k] == '.');
		}
		/*
		 * Uniqueness: the index in base 250 at the front, as long
		 * as it needs to be (digits avoid '/' and '.').
		 */
		while (len < 4 && i >= (len == 1 ? 250u : len == 2 ?
					62500u : 15625000u))
			len++;
		for (unsigned int k = 0, v = (unsigned int)i; k < 4 && k < len;
		     k++, v /= 250) {
			p[k] = (uint8_t)(v % 250 + 1);
			if (p[k] == '/')
				p[k] = 251;
			else if (p[k] == '.')
				p[k] = 252;
		}
		ino = 1000 + i;
		/* Inode numbers in the first block of an AG are not. */
		if ((ino & ((1ULL << mp->g.agino_log) - 1)) < 512)
			ino += 512;
		l->ents[i] = (struct xk_bld_dirent){ p, (uint8_t)len,
			(uint8_t)(1 + i % 7), ino };
	}
}

static void
nlist_free(struct nlist *l)
{
	free(l->buf);
	free(l->ents);
}

/* --- a separate model of the kernel's conversions --- */

enum { SIM_SF = 1, SIM_BLOCK, SIM_LEAF, SIM_NODE };

static unsigned int
entsize(unsigned int namelen)
{
	return (8 + 1 + namelen + 1 + 2 + 7) & ~7u;
}

/*
 * The format after adding ents[0..n) one at a time, *leaves for node,
 * and where each entry lands (addr[i], a dataptr).  Placement: after
 * the last entry in block form; the first data block with room in leaf
 * form; the last data block with room in node form; else a new block.
 */
static int
simulate(const struct xk_bld_dirent *e, size_t n, uint32_t bs,
	 uint32_t sfspace, uint32_t *leaves, uint32_t *addr)
{
	int form = SIM_SF;
	uint64_t sfsize = 6, data = 96, count = 2, ndata = 1;
	unsigned int dblog = 0;
	uint32_t *endoff = calloc(n + 2, sizeof(*endoff));

	while ((1u << dblog) < bs)
		dblog++;
	EXPECT_NN(endoff);
	/* Short form holds them all, or none. */
	for (size_t i = 0; i < n; i++) {
		sfsize += 3 + e[i].namelen + 1 + 4;
		data += entsize(e[i].namelen);
	}
	*leaves = 0;
	if (sfsize <= sfspace && data + 8 * (n + 2) + 8 <= bs) {
		free(endoff);
		return SIM_SF;
	}
	form = SIM_BLOCK;
	endoff[0] = 96;
	for (size_t i = 0; i < n; i++) {
		unsigned int es = entsize(e[i].namelen);
		int64_t db = -1;

		if (form == SIM_BLOCK) {
			/* Room at the end for the entry and a leaf entry? */
			if (bs - endoff[0] - 8 * count - 8 >= es + 8) {
				addr[i] = endoff[0] >> 3;
				endoff[0] += es;
				count++;
				continue;
			}
			form = SIM_LEAF;
		}
		if (form == SIM_LEAF) {
			uint64_t room = bs - 64 - 8 * count - 2 * ndata - 4;

			for (uint64_t k = 0; k < ndata && db < 0; k++)
				if (bs - endoff[k] >= es)
					db = (int64_t)k;
			if (room < 8u + (db < 0 ? 2 : 0)) {
				form = SIM_NODE;
				db = -1;
			}
		}
		if (form == SIM_NODE)
			for (int64_t k = (int64_t)ndata - 1; k >= 0 && db < 0;
			     k--)
				if (bs - endoff[k] >= es)
					db = k;
		if (db < 0) {
			db = (int64_t)ndata++;
			endoff[db] = 64;
		}
		addr[i] = (uint32_t)((((uint64_t)db << dblog) + endoff[db]) >>
				     3);
		endoff[db] += es;
		count++;
	}
	free(endoff);
	if (form == SIM_NODE) {
		uint32_t lmax = (bs - 64) / 8;

		*leaves = (uint32_t)((count + lmax - 1) / lmax);
	}
	return form;
}

/* --- decoding a plan's blocks --- */

struct seen {
	uint32_t	addr;
	uint32_t	hash;
	int		refs;
	const uint8_t	*name;		/* in the block */
	unsigned int	namelen, ftype;
	uint64_t	ino;
};

struct image {
	const struct dir_plan	*pl;
	uint8_t			**data;		/* ndata blocks */
	uint8_t			**leaf;		/* nleafblks, by db - leafdb */
	uint8_t			**free;		/* nfree */
	struct seen		*seen;		/* every data entry */
	size_t			nseen;
};

static uint64_t
fake_daddr(uint32_t db)
{
	return 4096 + (uint64_t)db * 8;
}

static uint8_t *
fill_verify(const struct dir_plan *pl, uint32_t db,
	    const struct xk_buf_ops *ops, int kind, uint32_t lvl, uint32_t i)
{
	uint8_t *out = calloc(1, pl->g.blksize);
	struct dir_blkid id = { SELF, fake_daddr(db), mp->meta_uuid };
	struct xk_buf bp;
	struct xk_fail f;
	int err;

	EXPECT_NN(out);
	switch (kind) {
	case 0: dir_block_fill(pl, &id, out); break;
	case 1: dir_data_fill(pl, i, &id, out); break;
	case 2: dir_leaf1_fill(pl, &id, out); break;
	case 3: dir_leafn_fill(pl, i, &id, out); break;
	case 4: dir_node_fill(pl, lvl, i, &id, out); break;
	default: dir_free_fill(pl, i, &id, out); break;
	}
	memset(&bp, 0, sizeof(bp));
	memset(&f, 0, sizeof(f));
	bp.mp = mp;
	bp.daddr = id.daddr;
	bp.len = pl->g.blksize;
	bp.data = out;
	bp.agno = -1;
	bp.owner = SELF;
	err = ops->verify(&bp, &f);
	if (err) {
		char msg[300];

		f.structure = ops->name;
		xk_fail_format(&f, msg, sizeof(msg));
		ck_abort_msg("db %u: %s", db, msg);
	}
	return out;
}

/*
 * Walk a data area: "." and ".." first in block 0, every tag right, one
 * unused region at most, at the end, and it is bestfree[0].  Entries go
 * to im->seen; *k counts the caller's entries seen so far.
 */
static void
decode_data(struct image *im, uint32_t db, const uint8_t *blk, uint32_t end,
	    size_t *k)
{
	const struct dir_plan *pl = im->pl;
	const struct xk_dir3_data_hdr *h = (const void *)blk;
	uint32_t p = 64, idx = 0, freelen = 0, freeoff = 0;

	while (p < end) {
		const struct xk_dir2_data_entry *e = (const void *)(blk + p);
		const uint8_t *name;
		uint64_t ino;
		unsigned int len, ft;

		if (xk_get_be16(blk + p) == 0xffff) {
			EXPECT_EQ(freelen, 0);
			freeoff = p;
			freelen = xk_get_be16(blk + p + 2);
			EXPECT_EQ(p + freelen, end);
			EXPECT_EQ(xk_get_be16(blk + end - 2), p);
			p = end;
			break;
		}
		ino = xk_be64_get(e->inumber);
		len = e->namelen;
		name = e->name;
		ft = e->name[len];
		EXPECT_EQ(xk_get_be16(blk + p + entsize(len) - 2), p);
		if (db == 0 && idx == 0) {
			EXPECT(len == 1 && name[0] == '.' && ino == SELF &&
				  ft == XK_DIR3_FT_DIR);
		} else if (db == 0 && idx == 1) {
			EXPECT(len == 2 && !memcmp(name, "..", 2) &&
				  ino == pl->parent && ft == XK_DIR3_FT_DIR);
		} else {
			(*k)++;
		}
		im->seen[im->nseen++] = (struct seen){
			(uint32_t)(((uint64_t)db << pl->g.dblog | p) >> 3),
			xk_da_hashname(name, (int)len), 0, name, len, ft, ino };
		idx++;
		p += entsize(len);
	}
	EXPECT_EQ(p, end);
	EXPECT_EQ(xk_be16_get(h->best_free[0].offset), freeoff);
	EXPECT_EQ(xk_be16_get(h->best_free[0].length), freelen);
	EXPECT_EQ(xk_be16_get(h->best_free[1].length), 0);
	EXPECT_EQ(pl->dfree[db], freelen);
}

static int
cmp_seen(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* Leaf entries: hash order across blocks, each names one entry. */
static void
decode_leafents(struct image *im, const struct xk_dir2_leaf_entry *le,
		uint32_t count, uint32_t *lasthash)
{
	for (uint32_t i = 0; i < count; i++) {
		struct seen key = { xk_be32_get(le[i].address), 0, 0 }, *hit;
		uint32_t hash = xk_be32_get(le[i].hashval);

		EXPECT_GE(hash, *lasthash);
		*lasthash = hash;
		hit = bsearch(&key, im->seen, im->nseen, sizeof(key), cmp_seen);
		EXPECT_NN(hit);
		EXPECT_EQ(hit->hash, hash);
		hit->refs++;
	}
}

/* Node tree from db: returns the highest hash below. */
static uint32_t
walk_node(struct image *im, uint32_t db, int level, uint32_t *leafno,
	  uint32_t *lasthash)
{
	const struct dir_plan *pl = im->pl;
	uint32_t leafdb = xk_dir2_leaf_firstdb(pl->g.dblog);
	const uint8_t *blk = im->leaf[db - leafdb];
	unsigned int shift = pl->g.dblog - pl->g.fsblog;

	if (level == 0) {
		const struct xk_dir3_leaf_hdr *h = (const void *)blk;
		uint32_t count = xk_be16_get(h->count);
		uint32_t n = (*leafno)++;

		EXPECT_EQ(xk_be16_get(h->info.hdr.magic),
				  XK_DIR3_LEAFN_MAGIC);
		EXPECT_EQ(db, pl->leaves[n].db);
		EXPECT_EQ(xk_be32_get(h->info.hdr.back), n ?
			(uint64_t)pl->leaves[n - 1].db << shift : 0);
		EXPECT_EQ(xk_be32_get(h->info.hdr.forw),
			n + 1 < pl->nleaves ?
			(uint64_t)pl->leaves[n + 1].db << shift : 0);
		decode_leafents(im, xk_dir3_leaf_ents(h), count, lasthash);
		return xk_be32_get(xk_dir3_leaf_ents(h)[count - 1].hashval);
	} else {
		const struct xk_da3_node_hdr *h = (const void *)blk;
		uint32_t count = xk_be16_get(h->count), hash = 0;

		EXPECT_EQ(xk_be16_get(h->info.hdr.magic),
				  XK_DA3_NODE_MAGIC);
		EXPECT_EQ(xk_be16_get(h->level), level);
		for (uint32_t i = 0; i < count; i++) {
			const struct xk_da_node_entry *e =
				xk_da3_node_entry(h, i);
			uint32_t before = xk_be32_get(e->before);

			EXPECT_EQ(before & ((1u << shift) - 1), 0);
			hash = walk_node(im, before >> shift, level - 1, leafno,
					 lasthash);
			EXPECT_EQ(xk_be32_get(e->hashval), hash);
		}
		return hash;
	}
}

/* Fill, verify and decode every block of a plan. */
static void
check_blocks(const struct dir_plan *pl, const uint32_t *want_addr)
{
	struct image im = { .pl = pl };
	uint32_t bs = pl->g.blksize, lasthash = 0;
	uint32_t leafdb = xk_dir2_leaf_firstdb(pl->g.dblog);
	uint32_t freedb = xk_dir2_free_firstdb(pl->g.dblog);
	size_t k = 0;

	im.data = calloc(pl->ndata, sizeof(*im.data));
	im.leaf = calloc(pl->nleafblks + 1, sizeof(*im.leaf));
	im.free = calloc(pl->nfree + 1, sizeof(*im.free));
	im.seen = calloc(pl->n + 2, sizeof(*im.seen));
	if (pl->form == DIR_FORM_BLOCK) {
		const struct xk_dir2_block_tail *t;
		const struct xk_dir2_leaf_entry *le;

		EXPECT_EQ(pl->size, bs);
		im.data[0] = fill_verify(pl, 0, &xk_dir3_block_buf_ops, 0, 0,
					 0);
		t = xk_dir2_block_tail_p(im.data[0], bs);
		le = xk_dir2_block_leaf_p(t);
		EXPECT_EQ(xk_be32_get(t->count), pl->n + 2);
		EXPECT_EQ(xk_be32_get(t->stale), 0);
		decode_data(&im, 0, im.data[0],
			    (uint32_t)((const uint8_t *)le - im.data[0]), &k);
		qsort(im.seen, im.nseen, sizeof(*im.seen), cmp_seen);
		decode_leafents(&im, le, pl->n + 2, &lasthash);
		goto done;
	}
	EXPECT_EQ(pl->size, (uint64_t)pl->ndata * bs);
	for (uint32_t db = 0; db < pl->ndata; db++) {
		im.data[db] = fill_verify(pl, db, &xk_dir3_data_buf_ops, 1, 0,
					  db);
		decode_data(&im, db, im.data[db], bs, &k);
	}
	qsort(im.seen, im.nseen, sizeof(*im.seen), cmp_seen);
	if (pl->form == DIR_FORM_LEAF) {
		const struct xk_dir3_leaf_hdr *h;
		const struct xk_dir2_leaf_tail *t;
		const xk_be16 *bests;

		im.leaf[0] = fill_verify(pl, leafdb, &xk_dir3_leaf1_buf_ops, 2,
					 0, 0);
		h = (const void *)im.leaf[0];
		t = xk_dir2_leaf_tail_p(im.leaf[0], bs);
		EXPECT_EQ(xk_be16_get(h->count), pl->n + 2);
		EXPECT_EQ(xk_be32_get(h->info.hdr.forw), 0);
		EXPECT_EQ(xk_be32_get(t->bestcount), pl->ndata);
		bests = xk_dir2_leaf_bests_p(t);
		for (uint32_t db = 0; db < pl->ndata; db++)
			EXPECT_EQ(xk_be16_get(bests[db]), xk_be16_get(
			  ((const struct xk_dir3_data_hdr *)im.data[db])->
			  best_free[0].length));
		decode_leafents(&im, xk_dir3_leaf_ents(h), pl->n + 2,
				&lasthash);
		goto done;
	}
	/* Node form. */
	{
		uint32_t leafno = 0;

		for (uint32_t i = 0; i < pl->nleaves; i++)
			im.leaf[pl->leaves[i].db - leafdb] = fill_verify(pl,
				pl->leaves[i].db, &xk_dir3_leafn_buf_ops, 3, 0,
				i);
		for (uint32_t l = 0; l < pl->nlevels; l++)
			for (uint32_t i = 0; i < pl->nlevel[l]; i++)
				im.leaf[pl->level[l][i].db - leafdb] =
					fill_verify(pl, pl->level[l][i].db,
						&xk_da3_node_buf_ops, 4, l, i);
		for (uint32_t i = 0; i < pl->nleafblks; i++)
			EXPECT_NN(im.leaf[i]);
		walk_node(&im, leafdb, (int)pl->nlevels, &leafno, &lasthash);
		EXPECT_EQ(leafno, pl->nleaves);
		EXPECT_EQ(pl->nfree, (pl->ndata +
			xk_dir3_free_max_bests(bs) - 1) /
			xk_dir3_free_max_bests(bs));
		for (uint32_t i = 0; i < pl->nfree; i++) {
			const struct xk_dir3_free_hdr *h;
			uint32_t first = i * xk_dir3_free_max_bests(bs);

			im.free[i] = fill_verify(pl, freedb + i,
				&xk_dir3_free_buf_ops, 5, 0, i);
			h = (const void *)im.free[i];
			EXPECT_EQ(xk_be32_get(h->firstdb), first);
			for (uint32_t j = 0; j < xk_be32_get(h->nvalid); j++)
				EXPECT_EQ(
				  xk_be16_get(xk_dir3_free_bests(h)[j]),
				  pl->dfree[first + j]);
			EXPECT_EQ(first + xk_be32_get(h->nvalid),
				i + 1 < pl->nfree ? first +
				xk_dir3_free_max_bests(bs) : pl->ndata);
		}
	}
done:
	EXPECT_EQ(k, pl->n);
	/* Each entry where the model put it, with its name, inode, type. */
	for (size_t i = 0; i < pl->n; i++) {
		struct seen key = { want_addr[i], 0, 0, NULL, 0, 0, 0 }, *hit;
		const struct xk_bld_dirent *d = &pl->ents[i];

		hit = bsearch(&key, im.seen, im.nseen, sizeof(key), cmp_seen);
		if (!hit)
			ck_abort_msg("entry %zu is not at 0x%x", i,
				     want_addr[i]);
		EXPECT_EQ(hit->namelen, d->namelen);
		EXPECT(memcmp(hit->name, d->name, d->namelen) == 0);
		EXPECT_EQ(hit->ino, d->ino);
		EXPECT_EQ(hit->ftype, d->ftype);
	}
	EXPECT_EQ(im.nseen, pl->n + 2);
	for (size_t i = 0; i < im.nseen; i++)
		EXPECT_EQ(im.seen[i].refs, 1);
	for (uint32_t i = 0; i < pl->ndata; i++)
		free(im.data[i]);
	for (uint32_t i = 0; i < pl->nleafblks; i++)
		free(im.leaf[i]);
	for (uint32_t i = 0; i < pl->nfree; i++)
		free(im.free[i]);
	free(im.data);
	free(im.leaf);
	free(im.free);
	free(im.seen);
}

/* Decode a short form against the plan's entries. */
static void
check_sf(const struct dir_plan *pl)
{
	uint8_t *buf = calloc(1, pl->sf_size + 16);
	const struct xk_dir2_sf_hdr *h = (const void *)buf;
	unsigned int inosz, p, off = 96, i8 = 0;

	dir_sf_fill(pl, buf);
	EXPECT_EQ(h->count, pl->n);
	i8 = pl->parent > 0xffffffffULL;
	for (size_t i = 0; i < pl->n; i++)
		i8 += pl->ents[i].ino > 0xffffffffULL;
	EXPECT_EQ(h->i8count, i8);
	inosz = i8 ? 8 : 4;
	EXPECT_EQ(xk_get_benn(buf + 2, inosz), pl->parent);
	p = 2 + inosz;
	for (size_t i = 0; i < pl->n; i++) {
		const struct xk_bld_dirent *d = &pl->ents[i];

		EXPECT_EQ(buf[p], d->namelen);
		EXPECT_EQ(xk_get_be16(buf + p + 1), off);
		EXPECT(memcmp(buf + p + 3, d->name, d->namelen) == 0);
		EXPECT_EQ(buf[p + 3 + d->namelen], d->ftype);
		EXPECT_EQ(xk_get_benn(buf + p + 4 + d->namelen, inosz),
				  d->ino);
		p += 3 + d->namelen + 1 + inosz;
		off += entsize(d->namelen);
	}
	EXPECT_EQ(p, pl->sf_size);
	EXPECT_EQ(pl->size, pl->sf_size);
	free(buf);
}

static int
plan_and_check(const struct xk_bld_dirent *e, size_t n, uint32_t sfspace,
	       uint32_t *nleaves, const uint32_t *addr)
{
	struct dir_geo g = geo();
	struct dir_plan pl;
	int form;

	EXPECT_EQ(dir_plan_make(&pl, &g, SELF, PARENT, e, n, sfspace),
			 0);
	if (pl.form == DIR_FORM_SF)
		check_sf(&pl);
	else
		check_blocks(&pl, addr);
	form = pl.form;
	*nleaves = pl.form == DIR_FORM_NODE ? pl.nleaves : 0;
	dir_plan_free(&pl);
	return form;
}

/* Every prefix of a name list: the model's format and a valid layout. */
static void
prefixes(unsigned int lo, unsigned int hi, size_t maxn, size_t step,
	 size_t fine_lo)
{
	uint32_t bs = mp->g.dirblksize, sfspace = 336;
	int seen[SIM_NODE + 2] = { 0 };
	struct nlist l;
	uint32_t *addr;
	size_t n;

	nlist_make(&l, maxn, lo, hi);
	addr = calloc(maxn + 1, sizeof(*addr));
	EXPECT_NN(addr);
	/* Every count below 40 and from fine_lo on, where formats change. */
	for (n = 0; n <= maxn; n = (n < 40 || n + 1 >= fine_lo) ? n + 1 :
	     n + step < fine_lo ? n + step : fine_lo) {
		uint32_t sl, pl_leaves;
		int sim = simulate(l.ents, n, bs, sfspace, &sl, addr);
		int form = plan_and_check(l.ents, n, sfspace, &pl_leaves,
					  addr);

		if (sim != form)
			ck_abort_msg("%zu entries of %u..%u bytes, %u-byte "
				     "blocks: model says %d, plan %d", n, lo,
				     hi, bs, sim, form);
		EXPECT_EQ(sl, pl_leaves);
		seen[form + (pl_leaves > 1)]++;
	}
	nlist_free(&l);
	free(addr);
	/* The list was long enough to pass every conversion. */
	for (int f = SIM_SF; f <= SIM_NODE + 1; f++)
		ck_assert_msg(seen[f], "format %d never reached", f);
}

START_TEST(formats_4k)
{
	mount_geo(4096, 0);
	seed = 1;
	prefixes(12, 12, 620, 1, 0);
	prefixes(1, 255, 620, 7, 400);
	prefixes(1, 8, 700, 1, 0);
	unmount();
}
END_TEST

START_TEST(formats_1k_fs_4k_dirs)
{
	mount_geo(1024, 2);
	seed = 2;
	prefixes(1, 40, 800, 3, 440);
	unmount();
}
END_TEST

START_TEST(formats_16k)
{
	mount_geo(4096, 2);
	seed = 3;
	prefixes(5, 60, 2300, 11, 1980);
	unmount();
}
END_TEST

START_TEST(formats_64k)
{
	mount_geo(4096, 4);
	seed = 4;
	prefixes(200, 255, 8300, 397, 8120);
	unmount();
}
END_TEST

/* Enough names for several free index blocks and a two-level tree. */
START_TEST(big_node)
{
	struct nlist l;
	struct dir_geo g;
	struct dir_plan pl;
	uint32_t leaves, *addr;

	mount_geo(4096, 0);
	seed = 5;
	nlist_make(&l, 300000, 180, 255);
	g = geo();
	ck_assert_int_eq(dir_plan_make(&pl, &g, SELF, PARENT, l.ents, l.n,
				       336), 0);
	ck_assert_int_eq(pl.form, DIR_FORM_NODE);
	ck_assert_uint_ge(pl.nfree, 2);
	ck_assert_uint_ge(pl.nlevels, 2);
	dir_plan_free(&pl);
	addr = calloc(l.n, sizeof(*addr));
	ck_assert_int_eq(simulate(l.ents, l.n, 4096, 336, &leaves, addr),
			 SIM_NODE);
	ck_assert_int_eq(plan_and_check(l.ents, l.n, 336, &leaves, addr),
			 DIR_FORM_NODE);
	free(addr);
	nlist_free(&l);
	unmount();
}
END_TEST

START_TEST(shortform_wide_inodes)
{
	struct xk_bld_dirent e[3] = {
		{ (const uint8_t *)"a", 1, XK_DIR3_FT_REG_FILE, 200 },
		{ (const uint8_t *)"\xff\xfe", 2, XK_DIR3_FT_DIR, 1ULL << 40 },
		{ (const uint8_t *)"ccc", 3, XK_DIR3_FT_SYMLINK, 300 },
	};
	struct dir_geo g;
	struct dir_plan pl;

	mount_geo(4096, 0);
	g = geo();
	/* One wide entry. */
	ck_assert_int_eq(dir_plan_make(&pl, &g, SELF, PARENT, e, 3, 336), 0);
	ck_assert_int_eq(pl.form, DIR_FORM_SF);
	ck_assert_uint_eq(pl.sf_i8count, 1);
	ck_assert_uint_eq(pl.sf_size, 10 + 3 * 3 + 6 + 3 * 1 + 3 * 8);
	check_sf(&pl);
	dir_plan_free(&pl);
	/* A wide parent counts too. */
	ck_assert_int_eq(dir_plan_make(&pl, &g, SELF, 1ULL << 36, e, 1, 336),
			 0);
	ck_assert_uint_eq(pl.sf_i8count, 1);
	check_sf(&pl);
	dir_plan_free(&pl);
	/* Narrow: 4-byte numbers; empty directory is the header alone. */
	ck_assert_int_eq(dir_plan_make(&pl, &g, SELF, PARENT, e, 0, 336), 0);
	ck_assert_uint_eq(pl.sf_size, 6);
	check_sf(&pl);
	dir_plan_free(&pl);
	/* No room in the fork: block even when empty. */
	ck_assert_int_eq(dir_plan_make(&pl, &g, SELF, PARENT, e, 0, 0), 0);
	ck_assert_int_eq(pl.form, DIR_FORM_BLOCK);
	dir_plan_free(&pl);
	unmount();
}
END_TEST

START_TEST(bad_entries)
{
	struct xk_bld_dirent e[2] = {
		{ (const uint8_t *)"same", 4, XK_DIR3_FT_REG_FILE, 200 },
		{ (const uint8_t *)"same", 4, XK_DIR3_FT_REG_FILE, 201 },
	};
	static const struct { const char *name; uint8_t len, ft; } bad[] = {
		{ ".", 1, 1 }, { "..", 2, 1 }, { "a/b", 3, 1 },
		{ "a\0b", 3, 1 }, { "", 0, 1 }, { "ok", 2, XK_DIR3_FT_MAX },
	};
	struct dir_geo g;
	struct dir_plan pl;

	mount_geo(4096, 0);
	g = geo();
	ck_assert_int_eq(dir_plan_make(&pl, &g, SELF, PARENT, e, 2, 336),
			 -EEXIST);
	dir_plan_free(&pl);
	/* The same in block form. */
	ck_assert_int_eq(dir_plan_make(&pl, &g, SELF, PARENT, e, 2, 0),
			 -EEXIST);
	dir_plan_free(&pl);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e[1] = (struct xk_bld_dirent){ (const uint8_t *)bad[i].name,
					       bad[i].len, bad[i].ft, 201 };
		ck_assert_int_eq(dir_plan_make(&pl, &g, SELF, PARENT, e, 2,
					       336), -EINVAL);
		dir_plan_free(&pl);
	}
	/* ".x" and "..." are ordinary names. */
	e[1].name = (const uint8_t *)"...";
	e[1].namelen = 3;
	e[1].ftype = XK_DIR3_FT_REG_FILE;
	ck_assert_int_eq(dir_plan_make(&pl, &g, SELF, PARENT, e, 2, 336), 0);
	dir_plan_free(&pl);
	unmount();
}
END_TEST

static Suite *
suite(void)
{
	const struct { const char *name; const TTest *t; } tests[] = {
		{ "formats_4k", formats_4k },
		{ "formats_1k_fs_4k_dirs", formats_1k_fs_4k_dirs },
		{ "formats_16k", formats_16k },
		{ "formats_64k", formats_64k },
		{ "big_node", big_node },
		{ "shortform_wide_inodes", shortform_wide_inodes },
		{ "bad_entries", bad_entries },
	};
	Suite *s = suite_create("build_dir");

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		TCase *tc = tcase_create(tests[i].name);

		tcase_set_timeout(tc, 120);
		tcase_add_test(tc, tests[i].t);
		suite_add_tcase(s, tc);
	}
	return s;
}

int
main(void)
{
	return unit_run(suite());
}
