// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Orphans back home by their parent pointers (the PARENT feature): an
 * inode in use that no entry names, but whose parent pointer still
 * names the directory and name it had, gets that entry back instead of
 * one in /lost+found (xfs_repair 7.2 moves it to /lost+found).
 *
 * A pointer is taken only when everything about it still holds: the
 * directory is in use, reached from the root, a user directory that
 * this pass neither clears nor rewrites, with the pointer's generation;
 * it has no entry of that name; and the name is a valid entry name.
 * The entry is added in place, to a short-form directory with room for
 * it (a trial on a copy first); any other directory leaves the orphan
 * to /lost+found, as before.  A directory takes its one pointer and
 * gets ".." pointed home; a file gets every pointer that holds (each
 * of its hard links), and the next pass sets its link count.  The
 * pointers need no change: they already say what the entries now say.
 *
 * In: rc->plan.orphans.  Out: the orphans sent home are taken off it.
 */
#include <string.h>

#include <xfskit/build_attr.h>
#include <xfskit/init.h>
#include <xfskit/pptr.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dir.h>

#include "repair.h"

/* Whether dir can take entry name in place, with generation gen. */
static int
home_fits(struct repair_ctx *rc, uint64_t dir, uint32_t gen,
	  const struct sf_add *add)
{
	const struct inode_info *ii = inode_info_find(rc, dir);
	struct xk_dinode *dip, *copy;
	struct xk_buf *bp;
	uint64_t found = 0;
	int err, ok;

	if (!ii || (ii->mode & XK_S_IFMT) != XK_S_IFDIR || !ii->reached ||
	    ii->meta || ii->clearing || !ii->sfdir ||
	    dir_being_rebuilt(rc, dir))
		return 0;
	err = dir_lookup(rc, dir, (const char *)add->name, &found);
	if (repair_oserr(rc, err, "looking up an orphan's name in directory "
			 "%llu", (unsigned long long)dir) || err || found)
		return 0;
	err = xk_inode_read(rc->mp, dir, 0, &bp, &dip);
	if (repair_oserr(rc, err, "reading directory %llu",
			 (unsigned long long)dir) || err)
		return 0;
	ok = xk_be32_get(dip->di_gen) == gen &&
	     dip->di_format == XK_DINODE_FMT_LOCAL;
	copy = ok ? xk_malloc(rc->mp->g.inodesize) : NULL;
	if (ok && !copy) {
		repair_error(rc, -ENOMEM, "fitting an orphan into directory "
			     "%llu", (unsigned long long)dir);
		ok = 0;
	}
	if (ok) {
		memcpy(copy, dip, rc->mp->g.inodesize);
		err = sf_rewrite(rc, copy, 0, 0, add);
		ok = !repair_oserr(rc, err, "fitting an orphan into "
				   "directory %llu",
				   (unsigned long long)dir) && !err;
	}
	free(copy);
	xk_buf_release(bp);
	return ok;
}

/*
 * Send orphan o home by every pointer of its that holds (a directory:
 * the first); *home set when one did.  Its pointers unreadable: it
 * stays an orphan.
 */
static int
send_home(struct repair_ctx *rc, const struct orphan *o, int *home,
	  unsigned long *applied)
{
	struct xk_attr_list l = { 0 };
	struct xk_dinode *dip;
	struct xk_buf *bp;
	const char *why;
	int isdir = (o->mode & XK_S_IFMT) == XK_S_IFDIR, err;

	*home = 0;
	err = xk_inode_read(rc->mp, o->ino, 0, &bp, &dip);
	if (repair_oserr(rc, err, "reading inode %llu",
			 (unsigned long long)o->ino) || err)
		return rc->found.error;
	err = xk_attr_list_read(rc->mp, o->ino, dip, &l, &why);
	xk_buf_release(bp);
	if (err) {
		xk_attr_list_free(&l);
		return repair_oserr(rc, err, "reading the parent pointers of "
				    "inode %llu", (unsigned long long)o->ino);
	}
	for (size_t i = 0; i < l.n && !(isdir && *home); i++) {
		const struct xk_bld_xattr *x = &l.xa[i];
		const struct xk_parent_rec *r = (const void *)x->value;
		char name[XK_NAME_MAX + 1], path[512];
		struct sf_add add;
		uint64_t dir;

		if (x->flags != XK_ATTR_PARENT || x->valuelen != sizeof(*r) ||
		    !xk_pptr_name_ok(x->name, x->namelen))
			continue;
		dir = xk_be64_get(r->p_ino);
		if (dir == o->ino)
			continue;
		memcpy(name, x->name, x->namelen);
		name[x->namelen] = '\0';
		add = (struct sf_add){ (const uint8_t *)name, x->namelen,
				       xk_mode_to_ftype(o->mode), o->ino };
		if (!home_fits(rc, dir, xk_be32_get(r->p_gen), &add)) {
			if (rc->found.error)
				break;
			continue;
		}
		err = sf_add_entry(rc, dir, name, o->ino, add.ftype);
		if (err) {
			repair_error(rc, err, "adding inode %llu to directory "
				     "%llu", (unsigned long long)o->ino,
				     (unsigned long long)dir);
			break;
		}
		if (isdir && dotdot_point(rc, o, dir))
			break;
		action_path(rc, dir, path, sizeof(path));
		action_report(rc, ACT_RETURNED, o->ino, -1, NULL, " to %s%s%s "
			      "by its parent pointer", path,
			      strcmp(path, "/") ? "/" : "", name);
		(*applied)++;
		*home = 1;
	}
	xk_attr_list_free(&l);
	return rc->found.error;
}

int
orphans_home(struct repair_ctx *rc, unsigned long *applied)
{
	size_t out = 0;

	if (!rc->mp->g.has_parent)
		return 0;
	for (size_t i = 0; i < rc->plan.orphans.n; i++) {
		const struct orphan *o = &rc->plan.orphans.v[i];
		const struct inode_info *ii = inode_info_find(rc, o->ino);
		int home = 0;

		if (ii && !ii->meta && send_home(rc, o, &home, applied))
			return rc->found.error;
		if (!home)
			rc->plan.orphans.v[out++] = *o;
	}
	rc->plan.orphans.n = out;
	return 0;
}
