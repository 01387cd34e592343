// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A short-form directory that an attr fork cannot share its inode with
 * becomes a block directory first, as the kernel converts it before
 * adding an attr fork: beside an attr fork the data fork never takes
 * more than leaves the attr fork room for a bmbt root of two pointers.
 * The entries are laid out again by the directory writer (dir.c), told
 * there is an attr fork so that it does not choose the short form, and
 * the inode's data fork is rewritten in place; the blocks come from the
 * builder (their reverse mappings with them) and stay dirty in the
 * cache until its commit and flush.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/dir.h>
#include <xfskit/pptr.h>

#include "write_priv.h"

struct sfb_ctx {
	struct xk_bld_dirent	*v;
	uint64_t		n, cap;
};

static int
sfb_entry(void *ctx, const uint8_t *name, uint8_t namelen, uint64_t ino,
	  uint8_t ftype)
{
	struct sfb_ctx *c = ctx;
	int err = bld_grow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v));

	if (err)
		return err;
	/* The names stay in the inode's buffer, held by the caller. */
	c->v[c->n++] = (struct xk_bld_dirent){ .name = name,
					       .namelen = namelen,
					       .ftype = ftype, .ino = ino };
	return 0;
}

int
bld_dir_sf_to_block(struct xk_bld *b, uint64_t ino, struct xk_dinode *dip,
		    const char **why)
{
	struct xk_mount *mp = b->mp;
	const struct xk_dir2_sf_hdr *h = (const void *)xk_dfork_dptr(dip);
	uint32_t size = (uint32_t)xk_be64_get(dip->di_size);
	uint32_t lit = xk_dinode_litino(mp->g.inodesize);
	struct xk_bld_inode tmp = { .ino = ino,
				    .mode = xk_be16_get(dip->di_mode) };
	struct sfb_ctx c = { 0 };
	int err;

	if (size < sizeof(*h) || size > lit ||
	    xk_dir2_sf_hdr_size(h->i8count) > size) {
		*why = "its short-form directory header is damaged";
		return XK_ECORRUPT;
	}
	err = xk_dir_entries(mp, ino, dip, sfb_entry, &c);
	/* An attr fork to come: the writer keeps the short form out. */
	tmp.attr.format = XK_BLD_FMT_LOCAL;
	if (!err)
		err = xk_bld_dir(b, &tmp, xk_dir2_sf_get_parent(h), c.v, c.n);
	if (!err && tmp.data.format != XK_BLD_FMT_EXTENTS)
		err = -EFBIG;	/* still short form: not expected */
	if (err) {
		*why = "its short-form directory cannot be turned into a "
		       "block";
		goto out;
	}
	xk_be64_set(&dip->di_size, tmp.size);
	err = bld_local_to_blocks(b, &tmp, dip);
	if (err)
		*why = "the directory block's mapping does not fit";
out:
	free(tmp.data.local);
	free(tmp.data.ext);
	free(c.v);
	return err;
}

int
bld_local_to_blocks(struct xk_bld *b, struct xk_bld_inode *tmp,
		    struct xk_dinode *dip)
{
	uint32_t lit = xk_dinode_litino(b->mp->g.inodesize);
	uint64_t nb = 0;
	uint8_t fmt = 0;
	int err;

	memset(xk_dfork_dptr(dip), 0, lit);
	err = bld_write_fork(b, tmp, XK_DATA_FORK, xk_dfork_dptr(dip), lit,
			     &fmt, &nb);
	if (err)
		return err;
	dip->di_format = fmt;
	xk_be64_set(&dip->di_nblocks, xk_be64_get(dip->di_nblocks) + nb);
	xk_dinode_set_nextents(dip, tmp->data.next, xk_dinode_anextents(dip));
	return bld_bmbt_stamp(b, tmp->ino, dip, XK_DATA_FORK);
}
