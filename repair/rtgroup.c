// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the realtime groups' check (rtgroup_check.c) and rewrite
 * (rtgroup_fix.c) share: each group's bitmap and summary inode, found by
 * name under /rtgroups in the metadata tree, and the bitmaps the
 * realtime files' mappings give.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/rtgroup.h>
#include <xfskit/pptr.h>

#include "rt.h"

static int
find_name(void *ctx, const uint8_t *name, uint8_t namelen, uint64_t ino,
	  uint8_t ftype)
{
	struct rtg_names *n = ctx;

	(void)ftype;
	if (namelen == 8 && !memcmp(name, "rtgroups", 8))
		n->dir = ino;
	return 0;
}

/* "N.bitmap" and "N.summary"; other names are not ours to judge. */
static int
group_name(void *ctx, const uint8_t *name, uint8_t namelen, uint64_t ino,
	   uint8_t ftype)
{
	struct rtg_names *n = ctx;
	char s[256], *end;
	unsigned long long g;

	(void)ftype;
	memcpy(s, name, namelen);
	s[namelen] = 0;
	if (s[0] < '0' || s[0] > '9')
		return 0;
	g = strtoull(s, &end, 10);
	if (g >= n->rgcount)
		return 0;
	if (!strcmp(end, ".bitmap"))
		n->bitmap[g] = ino;
	else if (!strcmp(end, ".summary"))
		n->summary[g] = ino;
	else if (!strcmp(end, ".rmap") && n->rmap)
		n->rmap[g] = ino;
	else if (!strcmp(end, ".refcount") && n->refcount)
		n->refcount[g] = ino;
	return 0;
}

/* List directory ino's entries; 0, or an operational error. */
static int
list_dir(struct repair_ctx *rc, uint64_t ino, xk_dirent_fn fn, void *ctx)
{
	struct xk_dinode *dip;
	struct xk_buf *bp;
	int err = xk_inode_read(rc->mp, ino, 0, &bp, &dip);

	if (err)
		return xk_err_operational(err) ? err : 0;
	err = xk_dir_entries(rc->mp, ino, dip, fn, ctx);
	xk_buf_release(bp);
	return xk_err_operational(err) ? err : 0;
}

int
rtg_find_inodes(struct repair_ctx *rc, struct rtg_names *n)
{
	int err = list_dir(rc, rc->mp->sb.metadirino, find_name, n);

	if (!err && n->dir)
		err = list_dir(rc, n->dir, group_name, n);
	return err;
}

int
rtg_bitmaps_alloc(struct rtg_want *w)
{
	w->group_bytes = (uint64_t)w->sb->rbmblocks *
			 xk_rtg_block_payload(w->sb->blocksize);
	w->bm = xk_malloc(w->group_bytes * w->sb->rgcount + 1);
	return w->bm ? 0 : -ENOMEM;
}

void
rtg_bitmaps_init(struct rtg_want *w)
{
	for (uint32_t g = 0; g < w->sb->rgcount; g++)
		xk_rtbitmap_init_free(w->bm + g * w->group_bytes,
				      w->group_bytes, xk_rtg_extents(w->sb, g));
	/* The realtime superblock's extent. */
	xk_rtbitmap_mark_used(w->bm, 0, 1);
}

void
rtg_mark(void *ctx, uint64_t x, uint64_t n)
{
	struct rtg_want *w = ctx;
	uint64_t g = x / w->sb->rgextents;

	/* A claim never crosses a group: the fork check saw to that. */
	xk_rtbitmap_mark_used(w->bm + g * w->group_bytes,
			      x - g * w->sb->rgextents, n);
}

uint64_t
rtg_linear(const struct xk_sb *sb, uint64_t rtb)
{
	return xk_rtb_to_linear(sb, rtb);
}
