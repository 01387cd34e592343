// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Directories as db reads them: the entries of a short-form directory or
 * of every data block of a block, leaf or node directory (the hash
 * index is not needed to list names), path lookup from the root, and the
 * ls, path and ncheck commands.  Every length read from the image is
 * checked against its block before use.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/dir.h>

#include "db.h"

struct ent_list {
	XK_VEC_OF(struct db_dirent);
};

static int
ent_add(struct ent_list *l, const uint8_t *name, size_t len, uint64_t ino,
	int ftype)
{
	int err = xk_vec_reserve(&l->vec, l->n + 1, sizeof(*l->v));

	if (err)
		return err;
	if (len > 255)
		len = 255;
	memcpy(l->v[l->n].name, name, len);
	l->v[l->n].name[len] = '\0';
	l->v[l->n].ino = ino;
	l->v[l->n].ftype = ftype;
	l->n++;
	return 0;
}

static int
list_sf(struct db_ctx *c, uint64_t dino, const struct xk_dinode *dip,
	struct ent_list *l)
{
	int ft = c->mp->g.has_ftype;
	unsigned int size = xk_dfork_dsize(dip, c->mp->g.inodesize);
	const uint8_t *p = xk_dfork_dptr(dip), *end = p + size;
	const struct xk_dir2_sf_hdr *h = (const void *)p;
	const struct xk_dir2_sf_entry *e;

	if (size < 6 || xk_dir2_sf_hdr_size(h->i8count) > size)
		return XK_ECORRUPT;
	ent_add(l, (const uint8_t *)".", 1, dino, XK_DIR3_FT_DIR);
	ent_add(l, (const uint8_t *)"..", 2, xk_dir2_sf_get_parent(h),
		XK_DIR3_FT_DIR);
	e = xk_dir2_sf_firstentry(h);
	for (unsigned int i = 0; i < h->count; i++) {
		if ((const uint8_t *)e + 3 > end ||
		    (const uint8_t *)e + xk_dir2_sf_entsize(h, e->namelen, ft) >
		    end)
			return XK_ECORRUPT;
		ent_add(l, e->name, e->namelen, xk_dir2_sf_get_ino(h, e, ft),
			xk_dir2_sf_get_ftype(e, ft));
		e = xk_dir2_sf_nextentry(h, e, ft);
	}
	return 0;
}

static int
list_ent(void *l, const uint8_t *name, uint8_t namelen, uint64_t ino,
	 uint8_t ftype)
{
	return ent_add(l, name, namelen, ino, ftype);
}

static int
list_block(struct db_ctx *c, const uint8_t *b, size_t len,
	   struct ent_list *l)
{
	return xk_dir3_data_block_entries(b, len, c->mp->g.has_ftype,
					  list_ent, l);
}

int
db_dir_list(struct db_ctx *c, uint64_t dino, struct db_dirent **ents,
	    size_t *n)
{
	struct xk_mount *mp = c->mp;
	struct ent_list l = { .vec = { .first = 32 } };
	struct xk_buf *bp;
	struct xk_dinode *dip;
	struct db_ext *e = NULL;
	size_t ne = 0;
	uint64_t leaf_fsb = XK_DIR2_LEAF_OFFSET >> mp->g.blocklog;
	uint32_t dblks = mp->g.dirblksize >> mp->g.blocklog;
	int err, fmt;

	*ents = NULL;
	*n = 0;
	err = xk_inode_read(mp, dino, XK_READ_SALVAGE, &bp, &dip);
	if (!bp)
		return err ? err : -EIO;
	if ((xk_be16_get(dip->di_mode) & XK_S_IFMT) != XK_S_IFDIR) {
		xk_buf_release(bp);
		return -ENOTDIR;
	}
	fmt = dip->di_format;
	if (fmt == XK_DINODE_FMT_LOCAL) {
		err = list_sf(c, dino, dip, &l);
		xk_buf_release(bp);
		goto out;
	}
	xk_buf_release(bp);
	err = db_inode_extents(c, dino, XK_DATA_FORK, &e, &ne);
	for (size_t i = 0; i < ne && !err; i++) {
		for (uint64_t o = 0; o + dblks <= e[i].len; o += dblks) {
			struct xk_buf *db;

			if (e[i].off + o >= leaf_fsb ||
			    !xk_fsbext_valid(mp, e[i].fsb + o, dblks))
				break;
			err = xk_buf_read(mp, xk_fsb_to_daddr(mp, e[i].fsb + o),
					  mp->g.dirblksize, NULL,
					  XK_READ_NOVERIFY, &db);
			if (err)
				break;
			err = list_block(c, db->data, db->len, &l);
			xk_buf_release(db);
			if (err)
				break;
		}
	}
	free(e);
out:
	*ents = l.v;
	*n = l.n;
	return err;
}

int
db_path_lookup(struct db_ctx *c, const char *path, uint64_t *ino)
{
	char *copy = strdup(path), *save = NULL, *comp;
	uint64_t cur = c->mp->sb.rootino;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	if (path[0] != '/' && c->have_cur && c->cur.type->is_inode)
		cur = c->cur.ino;
	for (comp = strtok_r(copy, "/", &save); comp;
	     comp = strtok_r(NULL, "/", &save)) {
		struct db_dirent *ents;
		size_t n, i;

		err = db_dir_list(c, cur, &ents, &n);
		for (i = 0; i < n; i++)
			if (!strcmp(ents[i].name, comp))
				break;
		if (i < n) {
			cur = ents[i].ino;
			err = 0;
		} else if (!err) {
			err = -ENOENT;
		}
		free(ents);
		if (err)
			break;
	}
	free(copy);
	*ino = cur;
	return err;
}

int
db_cmd_path(struct db_ctx *c, int argc, char **argv)
{
	uint64_t ino;
	int err;

	if (argc != 2) {
		db_err(c, "usage: path PATH");
		return 1;
	}
	err = db_path_lookup(c, argv[1], &ino);
	if (err) {
		db_err(c, "%s: %s", argv[1], err == -ENOENT ?
		       "no such file or directory" : xk_strerror(err));
		return 1;
	}
	return db_set_inode(c, ino, 1) ? 1 : 0;
}

static const char *const ftype_names[] = {
	"unknown", "regular", "directory", "chardev", "blockdev", "fifo",
	"socket", "symlink", "whiteout"
};

int
db_cmd_ls(struct db_ctx *c, int argc, char **argv)
{
	struct db_dirent *ents;
	uint64_t ino;
	size_t n;
	int err;

	if (argc > 1) {
		err = db_path_lookup(c, argv[1], &ino);
		if (err) {
			db_err(c, "%s: %s", argv[1], xk_strerror(err));
			return 1;
		}
	} else if (c->have_cur && c->cur.type->is_inode) {
		ino = c->cur.ino;
	} else {
		ino = c->mp->sb.rootino;
	}
	err = db_dir_list(c, ino, &ents, &n);
	for (size_t i = 0; i < n; i++)
		db_out(c, "%-12llu %-10s %s", (unsigned long long)ents[i].ino,
		       ftype_names[ents[i].ftype < 9 ? ents[i].ftype : 0],
		       ents[i].name);
	free(ents);
	if (err) {
		db_err(c, "directory inode %llu: %s",
		       (unsigned long long)ino, err == -ENOTDIR ?
		       "not a directory" : xk_strerror(err));
		return 1;
	}
	return 0;
}

/*
 * Directories already walked: a damaged image may link a directory from
 * several places or into a cycle, and each must be listed only once.
 */
struct seen {
	uint64_t	*v;		/* open addressing, 0 = empty */
	size_t		cap, n;
};

/* Returns 1 if ino was new (and is now recorded), 0 if seen, -1 on ENOMEM. */
static int
seen_add(struct seen *s, uint64_t ino)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		struct seen g = { NULL, s->cap ? s->cap * 2 : 1024, 0 };

		g.v = calloc(g.cap, sizeof(*g.v));
		if (!g.v)
			return -1;
		for (i = 0; i < s->cap; i++)
			if (s->v[i])
				seen_add(&g, s->v[i]);
		free(s->v);
		*s = g;
	}
	for (i = (ino * 0x9e3779b97f4a7c15ULL) & (s->cap - 1); s->v[i];
	     i = (i + 1) & (s->cap - 1))
		if (s->v[i] == ino)
			return 0;
	s->v[i] = ino;
	s->n++;
	return 1;
}

/* Depth-first walk from the root printing "ino path" lines. */
static int
ncheck_dir(struct db_ctx *c, uint64_t dino, const char *prefix,
	   const uint64_t *want, int nwant, struct seen *seen, int depth)
{
	struct db_dirent *ents;
	size_t n;
	int err, rc = 0;

	/* Real trees are far shallower; this bounds the stack. */
	if (depth > 256 || seen_add(seen, dino) <= 0)
		return 0;
	err = db_dir_list(c, dino, &ents, &n);
	if (err)
		rc = 1;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		int show = nwant == 0;

		if (!strcmp(ents[i].name, ".") || !strcmp(ents[i].name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s%s", prefix, ents[i].name);
		for (int k = 0; k < nwant; k++)
			if (want[k] == ents[i].ino)
				show = 1;
		if (show)
			db_out(c, "%11llu %s", (unsigned long long)ents[i].ino,
			       path);
		if (ents[i].ftype == XK_DIR3_FT_DIR) {
			strncat(path, "/", sizeof(path) - strlen(path) - 1);
			rc |= ncheck_dir(c, ents[i].ino, path, want, nwant,
					 seen, depth + 1);
		}
	}
	free(ents);
	return rc;
}

int
db_cmd_ncheck(struct db_ctx *c, int argc, char **argv)
{
	uint64_t want[32];
	int nwant = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-i") && i + 1 < argc && nwant < 32) {
			if (db_parse_u64(argv[++i], &want[nwant]) ||
			    !xk_ino_valid(c->mp, want[nwant])) {
				db_err(c, "bad inode number %s", argv[i]);
				return 1;
			}
			nwant++;
		} else {
			db_err(c, "usage: ncheck [-i ino]...");
			return 1;
		}
	}
	{
		struct seen seen = { NULL, 0, 0 };
		int rc = ncheck_dir(c, c->mp->sb.rootino, "", want, nwant,
				    &seen, 0);

		free(seen.v);
		return rc;
	}
}
