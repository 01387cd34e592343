// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Parent pointers over a whole tree (pptr.h): directory listings with
 * names, and the pass that gives every inode the parent pointers of the
 * entries naming it.  xfskit-mkfs -p writes each inode when it reaches
 * it, before every hard link to it is known, so the pointers are added
 * afterwards in one pass: the tree is walked from the root, the entries
 * are gathered and sorted by the inode they name, and each inode's
 * attr fork is rewritten once with its pointers added (attr_edit.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build_attr.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dir.h>
#include <xfskit/meta.h>
#include <xfskit/pptr.h>

#include "write_priv.h"

/* ---- listing a directory ---- */

static int
list_sf(struct xk_mount *mp, const struct xk_dinode *dip, xk_dirent_fn fn,
	void *ctx)
{
	int ft = mp->g.has_ftype;
	unsigned int size = xk_dfork_dsize(dip, mp->g.inodesize);
	const uint8_t *p = xk_dfork_dptr(dip), *end = p + size;
	const struct xk_dir2_sf_hdr *h = (const void *)p;
	const struct xk_dir2_sf_entry *e;
	int err;

	if (size < 6 || xk_dir2_sf_hdr_size(h->i8count) > size)
		return 0;
	e = xk_dir2_sf_firstentry(h);
	for (unsigned int i = 0; i < h->count; i++) {
		if ((const uint8_t *)e + 3 > end ||
		    (const uint8_t *)e + xk_dir2_sf_entsize(h, e->namelen, ft) >
		    end)
			return 0;
		err = fn(ctx, e->name, e->namelen,
			 xk_dir2_sf_get_ino(h, e, ft),
			 xk_dir2_sf_get_ftype(e, ft));
		if (err)
			return err;
		e = xk_dir2_sf_nextentry(h, e, ft);
	}
	return 0;
}

/* The caller's callback, "." and ".." left out. */
struct no_dots {
	xk_dirent_fn	fn;
	void		*ctx;
};

static int
no_dots_fn(void *p, const uint8_t *name, uint8_t namelen, uint64_t ino,
	   uint8_t ftype)
{
	const struct no_dots *nd = p;

	if ((namelen == 1 && name[0] == '.') ||
	    (namelen == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	return nd->fn(nd->ctx, name, namelen, ino, ftype);
}

/* One data (or single-block) directory block: damage ends it quietly. */
static int
list_block(struct xk_mount *mp, const uint8_t *b, size_t len,
	   xk_dirent_fn fn, void *ctx)
{
	struct no_dots nd = { fn, ctx };
	int err = xk_dir3_data_block_entries(b, len, mp->g.has_ftype,
					     no_dots_fn, &nd);

	return err == XK_ECORRUPT ? 0 : err;
}

int
xk_dir_entries(struct xk_mount *mp, uint64_t ino, const struct xk_dinode *dip,
	       xk_dirent_fn fn, void *ctx)
{
	uint32_t bs = mp->g.blocksize, dbs = mp->g.dirblksize;
	uint32_t per = dbs / bs;
	uint64_t leaf_fsb = XK_DIR2_LEAF_OFFSET >> mp->g.blocklog, n, next = 0;
	struct xk_bld_ext *ext;
	const char *why;
	uint8_t *buf;
	int err;

	if (dip->di_format == XK_DINODE_FMT_LOCAL)
		return list_sf(mp, dip, fn, ctx);
	err = xk_fork_mappings(mp, ino, dip, XK_DATA_FORK, &ext, &n, &why);
	if (err)
		return err;
	buf = malloc(dbs);
	if (!buf) {
		free(ext);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < n && !err; i++) {
		for (uint64_t o = 0; o < ext[i].len && !err; o++) {
			uint64_t off = ext[i].loff + o;
			struct xk_buf *bp;

			if (off >= leaf_fsb)
				break;
			/* A block whose first pieces are missing is skipped. */
			if (off % per && off != next)
				continue;
			if (xk_buf_read(mp, xk_fsb_to_daddr(mp,
					ext[i].fsbno + o), bs, NULL,
					XK_READ_NOVERIFY, &bp))
				continue;
			memcpy(buf + (off % per) * bs, bp->data, bs);
			xk_buf_release(bp);
			next = off + 1;
			if (next % per == 0)
				err = list_block(mp, buf, dbs, fn, ctx);
		}
	}
	free(buf);
	free(ext);
	return err;
}

/* ---- adding the tree's parent pointers ---- */

/* One entry; its name lives in the context's pool (a record per entry
 * of a large tree stays small). */
struct tp_rec {
	uint64_t	child;
	uint64_t	parent;
	const uint8_t	*name;
	uint32_t	gen;
	uint8_t		namelen;
};

struct tp_ctx {
	struct xk_mount	*mp;
	struct tp_rec	*v;
	size_t		n, cap;
	struct xk_vec_pool names;
	uint64_t	*queue;		/* directories to list */
	size_t		qn, qcap;
	uint64_t	dir;
	uint32_t	gen;
};

static int
tp_entry(void *ctx, const uint8_t *name, uint8_t namelen, uint64_t ino,
	 uint8_t ftype)
{
	struct tp_ctx *t = ctx;
	const void *at;
	int err;

	err = bld_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v));
	if (!err)
		err = xk_vec_pool_add(&t->names, name, namelen, &at);
	if (err)
		return err;
	t->v[t->n++] = (struct tp_rec){ .child = ino, .parent = t->dir,
					.name = at, .gen = t->gen,
					.namelen = namelen };
	if (ftype != XK_DIR3_FT_DIR)
		return 0;
	err = bld_grow((void **)&t->queue, &t->qcap, t->qn + 1,
		       sizeof(*t->queue));
	if (!err)
		t->queue[t->qn++] = ino;
	return err;
}

static int
tp_cmp(const void *pa, const void *pb)
{
	const struct tp_rec *a = pa, *b = pb;

	if (a->child != b->child)
		return a->child < b->child ? -1 : 1;
	return (a->parent > b->parent) - (a->parent < b->parent);
}

/*
 * Add the pointers v[0..n) (all naming one inode) to its attributes;
 * with grow non-NULL only add to *grow the blocks that would take.
 */
static int
tp_apply(struct xk_bld *b, const struct tp_rec *v, size_t n,
	 uint64_t *grow, const char **why)
{
	struct xk_mount *mp = b->mp;
	struct xk_attr_list l = { 0 };
	struct xk_dinode *dip;
	struct xk_buf *bp;
	int err;

	err = xk_inode_read(mp, v[0].child, 0, &bp, &dip);
	if (err) {
		*why = "its inode cannot be read";
		return err;
	}
	/*
	 * Every link is one pointer (a directory has one): a count that
	 * differs means an entry the listing skipped, or one naming a
	 * free inode, and the pointers would not match the tree.
	 */
	if ((xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFDIR ? n != 1 :
	    n != xk_be32_get(dip->di_nlink)) {
		xk_buf_release(bp);
		*why = "its link count is not the number of directory "
		       "entries naming it";
		return XK_ECORRUPT;
	}
	err = xk_attr_list_read(mp, v[0].child, dip, &l, why);
	xk_buf_release(bp);
	for (size_t i = 0; i < n && !err; i++) {
		struct xk_parent_rec rec;

		xk_be64_set(&rec.p_ino, v[i].parent);
		xk_be32_set(&rec.p_gen, v[i].gen);
		xk_attr_list_remove(&l, XK_ATTR_PARENT, v[i].name,
				    v[i].namelen, (const uint8_t *)&rec,
				    sizeof(rec));
		err = xk_attr_list_add(&l, XK_ATTR_PARENT, v[i].name,
				       v[i].namelen, (const uint8_t *)&rec,
				       sizeof(rec));
	}
	if (!err && grow) {
		uint64_t more;

		err = xk_attr_rewrite_growth(b, v[0].child, &l, &more, why);
		*grow += more;
	} else if (!err) {
		err = xk_bld_attr_rewrite(b, v[0].child, &l, why);
	}
	xk_attr_list_free(&l);
	return err;
}

int
xk_bld_pptr_tree(struct xk_bld *b, int with_metadir, uint64_t *bad_ino,
		 uint64_t *need, const char **why)
{
	struct xk_mount *mp = b->mp;
	struct tp_ctx t = { .mp = mp };
	uint64_t grow = 0, *sizing = NULL;
	int err;

	*bad_ino = 0;
	if (need)
		*need = 0;
	*why = NULL;
	err = bld_grow((void **)&t.queue, &t.qcap, 2, sizeof(*t.queue));
	if (err)
		return err;
	t.queue[t.qn++] = b->rootino;
	/* The metadata tree's root, like the root, has no entry naming it. */
	if (with_metadir && mp->g.has_metadir)
		t.queue[t.qn++] = mp->sb.metadirino;
	/* A built tree has no loops; the bound only guards a damaged one. */
	for (size_t q = 0; q < t.qn && !err; q++) {
		struct xk_dinode *dip;
		struct xk_buf *bp;

		if (q > (mp->g.dblocks << mp->g.inopblog)) {
			*why = "its directories form a loop";
			err = XK_ECORRUPT;
			break;
		}
		t.dir = t.queue[q];
		err = xk_inode_read(mp, t.dir, 0, &bp, &dip);
		if (err) {
			*bad_ino = t.dir;
			*why = "a directory's inode cannot be read";
			break;
		}
		t.gen = xk_be32_get(dip->di_gen);
		err = xk_dir_entries(mp, t.dir, dip, tp_entry, &t);
		xk_buf_release(bp);
		if (err) {
			*bad_ino = t.dir;
			*why = "a directory cannot be listed";
		}
	}
	if (!err && t.n)
		qsort(t.v, t.n, sizeof(*t.v), tp_cmp);
	for (size_t i = 0, j; i < t.n && !err; i = j) {
		for (j = i + 1; j < t.n && t.v[j].child == t.v[i].child; j++)
			;
		err = tp_apply(b, &t.v[i], j - i, sizing, why);
		/* Out of space: the rest is only sized, for the figure. */
		if (err == -ENOSPC && need && !sizing) {
			*bad_ino = t.v[i].child;
			sizing = &grow;
			err = tp_apply(b, &t.v[i], j - i, sizing, why);
		}
		if (err)
			*bad_ino = t.v[i].child;
	}
	free(t.v);
	free(t.queue);
	xk_vec_pool_free(&t.names);
	if (!err && sizing) {
		*need = grow;
		err = -ENOSPC;
	}
	return err;
}
