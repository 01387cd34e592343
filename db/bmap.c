// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Block maps: the extents of an inode fork, whether held in the inode
 * (extent list) or in a bmap btree walked with the libfs walker; the
 * lookup dblock/ablock use; and the bmap command.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

struct ext_list {
	struct db_ext	*v;
	size_t		n, cap;
};

static int
ext_add(struct ext_list *l, const struct xk_bmbt_rec *rec)
{
	struct xk_bmbt_irec ir;

	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		struct db_ext *nv = realloc(l->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = ncap;
	}
	xk_bmbt_rec_unpack(rec, &ir);
	l->v[l->n].off = ir.startoff;
	l->v[l->n].fsb = ir.startblock;
	l->v[l->n].len = ir.blockcount;
	l->v[l->n].unwritten = ir.unwritten;
	l->n++;
	return 0;
}

static int
walk_rec(void *ctx, const void *rec)
{
	return ext_add(ctx, rec);
}

int
db_inode_extents(struct db_ctx *c, uint64_t ino, int whichfork,
		 struct db_ext **exts, size_t *n)
{
	struct xk_mount *mp = c->mp;
	const struct xk_dinode *dip;
	struct ext_list l = { NULL, 0, 0 };
	struct xk_buf *bp;
	struct xk_dinode *d;
	unsigned int size;
	const uint8_t *fork;
	int err;

	*exts = NULL;
	*n = 0;
	err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &d);
	if (!bp)
		return err ? err : -EIO;
	dip = d;
	if (whichfork == XK_ATTR_FORK && !dip->di_forkoff) {
		xk_buf_release(bp);
		return 0;
	}
	size = xk_dfork_size(dip, mp->g.inodesize, whichfork);
	if (xk_dinode_forkoff_bytes(dip) > xk_dinode_litino(mp->g.inodesize))
		size = 0;
	fork = xk_dfork_ptr(dip, whichfork);
	err = 0;
	switch (xk_dfork_format(dip, whichfork)) {
	case XK_DINODE_FMT_EXTENTS: {
		uint64_t cnt = xk_dinode_fork_nextents(dip, whichfork);

		for (uint64_t i = 0; i < cnt && (i + 1) * 16 <= size && !err;
		     i++)
			err = ext_add(&l, (const struct xk_bmbt_rec *)
					  (fork + i * 16));
		break;
	}
	case XK_DINODE_FMT_BTREE: {
		struct xk_btree_walk w;

		if (size < 4) {
			err = XK_ECORRUPT;
			break;
		}
		memset(&w, 0, sizeof(w));
		w.ops = &xk_bmbt_ops;
		w.agno = -1;
		w.owner = ino;
		w.iroot = fork;
		w.iroot_size = size;
		w.levels = xk_get_be16(fork) + 1u;
		w.ctx = &l;
		w.rec_fn = walk_rec;
		err = xk_btree_walk(mp, &w);
		break;
	}
	default:
		break;
	}
	xk_buf_release(bp);
	*exts = l.v;
	*n = l.n;
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
