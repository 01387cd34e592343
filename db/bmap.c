// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Block maps: the extents of an inode fork through libfs's fork reader
 * (salvaging, so a damaged fork shows what can be read); the lookup
 * dblock/ablock use; and the bmap command.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/fork.h>

#include "db.h"

/*
 * The mappings of a fork as far as they can be read: a damaged fork
 * gives what the salvaging reader got and its error.
 */
int
db_inode_extents(struct db_ctx *c, uint64_t ino, int whichfork,
		 struct db_ext **exts, size_t *n)
{
	struct xk_fork_map map = { 0 };
	struct xk_buf *bp;
	struct xk_dinode *dip;
	struct db_ext *v = NULL;
	int err, fmt;

	*exts = NULL;
	*n = 0;
	err = xk_inode_read(c->mp, ino, XK_READ_SALVAGE, &bp, &dip);
	if (!bp)
		return err ? err : -EIO;
	fmt = xk_dfork_format(dip, whichfork);
	if (fmt != XK_DINODE_FMT_EXTENTS && fmt != XK_DINODE_FMT_BTREE) {
		xk_buf_release(bp);
		return 0;
	}
	err = xk_fork_read(c->mp, ino, dip, whichfork, XK_FORK_SALVAGE, &map);
	xk_buf_release(bp);
	if (map.next) {
		v = malloc(map.next * sizeof(*v));
		if (!v) {
			xk_fork_map_free(&map);
			return -ENOMEM;
		}
	}
	for (uint64_t i = 0; i < map.next; i++)
		v[i] = (struct db_ext){
			.off = map.ext[i].startoff,
			.fsb = map.ext[i].startblock,
			.len = map.ext[i].blockcount,
			.unwritten = map.ext[i].unwritten,
		};
	*exts = v;
	*n = map.next;
	xk_fork_map_free(&map);
	return err;
}

int
db_bmap_lookup(struct db_ctx *c, uint64_t ino, int whichfork, uint64_t off,
	       uint64_t *fsb, uint64_t *len)
{
	struct db_ext *e;
	size_t n;
	int err = db_inode_extents(c, ino, whichfork, &e, &n);

	for (size_t i = 0; i < n; i++) {
		if (off >= e[i].off && off < e[i].off + e[i].len) {
			*fsb = e[i].fsb + (off - e[i].off);
			*len = e[i].len - (off - e[i].off);
			free(e);
			return 0;
		}
	}
	free(e);
	return err ? err : -ENOENT;
}

int
db_cmd_bmap(struct db_ctx *c, int argc, char **argv)
{
	int forks[2] = { 1, 0 }, any = 0, rc = 0;
	uint64_t ino = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-a")) {
			forks[1] = 1;
			any |= 2;
		} else if (!strcmp(argv[i], "-d")) {
			any |= 1;
		} else if (db_parse_u64(argv[i], &ino) ||
			   !xk_ino_valid(c->mp, ino)) {
			db_err(c, "bad inode number %s", argv[i]);
			return 1;
		}
	}
	if (any)
		forks[0] = any & 1;
	if (!ino) {
		if (!c->have_cur || !c->cur.type->is_inode) {
			db_err(c, "no current inode");
			return 1;
		}
		ino = c->cur.ino;
	}
	for (int w = 0; w < 2; w++) {
		struct db_ext *e;
		size_t n;
		int err;

		if (!forks[w])
			continue;
		err = db_inode_extents(c, ino, w, &e, &n);
		for (size_t i = 0; i < n; i++)
			db_out(c, "%s offset %llu startblock %llu (%u/%u) "
			       "count %llu flag %d", w ? "attr" : "data",
			       (unsigned long long)e[i].off,
			       (unsigned long long)e[i].fsb,
			       xk_fsb_to_agno(c->mp, e[i].fsb),
			       xk_fsb_to_agbno(c->mp, e[i].fsb),
			       (unsigned long long)e[i].len, e[i].unwritten);
		free(e);
		if (err) {
			db_err(c, "block map of inode %llu: %s",
			       (unsigned long long)ino, xk_strerror(err));
			rc = 1;
		}
	}
	return rc;
}
