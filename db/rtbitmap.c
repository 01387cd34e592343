// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A realtime bitmap read into memory for xfskit-db: the classic volume's
 * one bitmap (sb_rbmino, words in host order, as the kernel keeps them)
 * or realtime group N's (/rtgroups/N.bitmap in the metadata tree, each
 * block behind a header, words big-endian).  Either way the caller gets
 * the words only, in host order (include/xfskit/rtbitmap.h).  Both files
 * live on the data device: no realtime device is needed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/rtgroup.h>
#include <xfskit/rtbitmap.h>

#include "db.h"

/* Entry name's inode in directory dino; 0 when absent. */
static uint64_t
dir_entry(struct db_ctx *c, uint64_t dino, const char *name)
{
	struct db_dirent *ents;
	uint64_t ino = 0;
	size_t n;

	if (db_dir_list(c, dino, &ents, &n) == -ENOMEM)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(ents[i].name, name))
			ino = ents[i].ino;
	free(ents);
	return ino;
}

/* The bitmap inode of group rgno, or of the classic volume. */
static int
bitmap_ino(struct db_ctx *c, uint32_t rgno, uint64_t *ino)
{
	const struct xk_sb *sb = &c->mp->sb;
	uint64_t dir;
	char name[32];

	if (!xk_sb_has_rtgroups(sb)) {
		*ino = sb->rbmino;
		return 0;
	}
	dir = dir_entry(c, sb->metadirino, "rtgroups");
	snprintf(name, sizeof(name), "%u.bitmap", rgno);
	*ino = dir ? dir_entry(c, dir, name) : 0;
	if (!*ino) {
		db_err(c, "realtime group %u: the metadata tree has no "
		       "/rtgroups/%s", rgno, name);
		return XK_ECORRUPT;
	}
	return 0;
}

/* Words of bitmap block b (at bp) into out, in host order. */
static int
block_words(struct db_ctx *c, uint32_t rgno, uint64_t ino, uint32_t b,
	    const struct xk_buf *bp, uint8_t *out, uint32_t bytes)
{
	const struct xk_rtbuf_hdr *h = (const void *)bp->data;

	if (!xk_sb_has_rtgroups(&c->mp->sb)) {
		memcpy(out, bp->data, bytes);
		return 0;
	}
	if (xk_be32_get(h->rt_magic) != XK_RTBITMAP_MAGIC ||
	    xk_be64_get(h->rt_owner) != ino) {
		db_err(c, "realtime group %u: bitmap block %u (daddr %llu) "
		       "has a bad header (magic 0x%x, owner %llu)", rgno, b,
		       (unsigned long long)bp->daddr,
		       xk_be32_get(h->rt_magic),
		       (unsigned long long)xk_be64_get(h->rt_owner));
		return XK_ECORRUPT;
	}
	for (uint32_t i = 0; i < bytes / 4; i++)
		xk_rtword_set(out, i, xk_get_be32(bp->data + sizeof(*h) +
						  i * 4));
	return 0;
}

int
db_rt_bitmap_load(struct db_ctx *c, uint32_t rgno, uint8_t **bm,
		  uint64_t *nbits)
{
	struct xk_mount *mp = c->mp;
	const struct xk_sb *sb = &mp->sb;
	struct xk_rtbm_geo geo;
	struct xk_dinode *dip;
	struct xk_buf *bp;
	struct xk_fail f;
	uint64_t ino, *fsb = NULL;
	uint8_t *words = NULL;
	int err;

	*bm = NULL;
	*nbits = 0;
	if (xk_sb_has_rtgroups(sb))
		xk_rtbm_geo_group(sb, rgno, &geo);
	else
		xk_rtbm_geo_classic(sb, &geo);
	if (geo.extents > (uint64_t)geo.blocks * geo.block_bytes * 8) {
		db_err(c, "realtime group %u: %llu extents do not fit in %u "
		       "bitmap blocks", rgno, (unsigned long long)geo.extents,
		       geo.blocks);
		return XK_ECORRUPT;
	}
	err = bitmap_ino(c, rgno, &ino);
	if (err)
		return err;
	err = xk_inode_read(mp, ino, 0, &bp, &dip);
	if (err) {
		db_err(c, "realtime bitmap inode %llu cannot be read: %s",
		       (unsigned long long)ino, xk_strerror(err));
		return err;
	}
	fsb = calloc(geo.blocks ? geo.blocks : 1, sizeof(*fsb));
	words = malloc((size_t)geo.blocks * geo.block_bytes + 4);
	err = fsb && words ? xk_rt_file_map(mp, ino, dip, geo.blocks, fsb, &f) :
			     -ENOMEM;
	xk_buf_release(bp);
	if (err == -ENOMEM) {
		db_err(c, "realtime bitmap: out of memory");
	} else if (err) {
		char line[400];

		xk_fail_format(&f, line, sizeof(line));
		db_err(c, "realtime bitmap inode %llu: %s",
		       (unsigned long long)ino, line);
	}
	for (uint32_t b = 0; b < geo.blocks && !err; b++) {
		err = xk_buf_read(mp, xk_fsb_to_daddr(mp, fsb[b]),
				  mp->g.blocksize, NULL, XK_READ_NOVERIFY, &bp);
		if (err) {
			db_err(c, "realtime bitmap block %u cannot be read: "
			       "%s", b, xk_strerror(err));
			break;
		}
		err = block_words(c, rgno, ino, b, bp,
				  words + (size_t)b * geo.block_bytes,
				  geo.block_bytes);
		xk_buf_release(bp);
	}
	free(fsb);
	if (err) {
		free(words);
		return err;
	}
	*bm = words;
	*nbits = geo.extents;
	return 0;
}
