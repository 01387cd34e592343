// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reconnecting orphans: inodes in use that no directory entry names are
 * given an entry in /lost+found named by their inode number ("N.1",
 * "N.2"... when the name is taken), as xfs_repair does; a reconnected
 * directory's ".." is pointed at
 * /lost+found.  /lost+found is found by name in the root directory (any
 * format) or created in a free inode slot the scan saw (not one any
 * entry still names, so no stale entry can come to name it).
 *
 * Two ways, chosen before anything is written:
 *  1. In place, when every entry fits in short form (a trial on a copy
 *     of the inode says so): /lost+found (and the root, for a new
 *     /lost+found) are short-form directories edited in their inodes,
 *     no block allocation.  The next check pass corrects link counts,
 *     and the AG rebuild the inode btrees' view of a new /lost+found.
 *  2. Any number of orphans otherwise: a plan (struct lf_plan) makes the
 *     directory rewrite of dirfix.c, inside the AG rebuild session of
 *     this same pass, rewrite /lost+found with the orphans' entries
 *     added (the builder picks block, leaf or node form), or, for a new
 *     /lost+found, rewrite the root with its entry added while
 *     lf_build() writes /lost+found itself.  The new inode is marked in
 *     use in the chunk the rebuild is fed.  Nothing is written here, so
 *     the pass counts no fix and the rebuild runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xfskit/build.h>
#include <xfskit/build_attr.h>
#include <xfskit/init.h>
#include <xfskit/format/dir.h>

#include "repair.h"

#define LOST_FOUND	"lost+found"

void
lf_extra(const struct repair_ctx *rc, uint64_t dir,
	 const struct xk_bld_dirent **ents, size_t *n)
{
	const struct lf_plan *p = rc->plan.lfplan;

	*n = 0;
	*ents = NULL;
	if (!p)
		return;
	if (p->create && dir == p->root) {
		*ents = &p->lfent;
		*n = 1;
	} else if (!p->create && dir == p->lf) {
		*ents = p->ents;
		*n = p->n;
	}
}

/*
 * A free inode slot for /lost+found: free as the scan saw it, named by
 * no entry, not touched by this pass's plans.
 */
static uint64_t
pick_free_inode(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;
	uint64_t *named = xk_malloc((rc->scan.nedges + rc->plan.ifix.n + 1) *
				 sizeof(*named));
	size_t nn = 0;
	uint64_t found = 0;

	if (!named) {
		repair_error(rc, -ENOMEM, "choosing an inode for /%s",
			     LOST_FOUND);
		return 0;
	}
	for (size_t i = 0; i < rc->scan.nedges; i++)
		named[nn++] = rc->scan.edges[i].child;
	for (size_t i = 0; i < rc->plan.ifix.n; i++)
		named[nn++] = rc->plan.ifix.v[i].ino;
	sort_v(named, nn, sizeof(*named), cmp_u64);
	for (uint32_t agno = 0; agno < mp->g.agcount && !found; agno++) {
		const struct ag_scan *as = &rc->scan.ags[agno];

		if (!as->seen_free)
			continue;
		for (size_t i = 0; i < as->chunks.n && !found; i++) {
			const struct xk_inobt_rec *r = &as->chunks.v[i];
			uint16_t holes = mp->g.has_sparse ?
				xk_be16_get(r->ir_u.sp.ir_holemask) : 0;

			for (int k = 0; k < XK_INODES_PER_CHUNK; k++) {
				uint64_t ino;

				if (!((as->seen_free[i] >> k) & 1) ||
				    ((holes >> (k / XK_INODES_PER_HOLEMASK_BIT))
				     & 1))
					continue;
				ino = xk_agino_to_ino(mp, agno,
					xk_be32_get(r->ir_startino) +
					(uint32_t)k);
				if (nn && bsearch(&ino, named, nn,
						  sizeof(*named), cmp_u64))
					continue;
				found = ino;
				break;
			}
		}
	}
	free(named);
	return found;
}

int
sf_add_entry(struct repair_ctx *rc, uint64_t dir, const char *name,
	     uint64_t ino, uint8_t ftype)
{
	struct xk_buf *bp;
	struct xk_dinode *dip;
	struct sf_add add = { (const uint8_t *)name, (uint8_t)strlen(name),
			      ftype, ino };
	int err = xk_inode_read(rc->mp, dir, 0, &bp, &dip);

	if (err)
		return err;
	err = XK_ECORRUPT;
	if (dip->di_format == XK_DINODE_FMT_LOCAL &&
	    (xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFDIR)
		err = sf_rewrite(rc, dip, 0, 0, &add);
	if (!err) {
		xk_inode_init_crc(rc->mp, dip);
		xk_buf_dirty(bp);
	}
	xk_buf_release(bp);
	return err;
}

/* The core of a new /lost+found (owner access only). */
static void
lf_inode_init(struct xk_inode_init *ii)
{
	*ii = (struct xk_inode_init){
		.mode = XK_S_IFDIR | 0700,
		.nlink = 2,
		.format = XK_DINODE_FMT_LOCAL,
		.now_sec = repair_now(),
	};
}

/*
 * A new, empty root directory in the root's slot (as xfs_repair makes
 * one): its former children are orphans, reconnected under
 * /lost+found by the next passes.
 */
void
root_inode_init(struct repair_ctx *rc, struct xk_dinode *dip, uint64_t ino)
{
	struct xk_inode_init ii;

	lf_inode_init(&ii);
	ii.mode = XK_S_IFDIR | 0755;
	xk_inode_init_core(rc->mp, dip, ino, &ii);
	xk_inode_init_sfdir(rc->mp, dip, ino);
	info(rc, "Made a new, empty root directory (inode %llu).\n",
	     (unsigned long long)ino);
}

/* A new, empty short-form /lost+found at ino, its entry in the root. */
static int
create_lost_found(struct repair_ctx *rc, uint64_t ino)
{
	struct xk_mount *mp = rc->mp;
	struct xk_inode_init ii;
	struct xk_buf *bp;
	struct xk_dinode *dip;
	int err;

	lf_inode_init(&ii);
	/* The root's entry first: if it does not fit, nothing is written. */
	err = sf_add_entry(rc, mp->sb.rootino, LOST_FOUND, ino,
			   XK_DIR3_FT_DIR);
	if (err)
		return err;
	err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip);
	if (err && !bp)
		return err;
	xk_inode_init_core(mp, dip, ino, &ii);
	xk_inode_init_sfdir(mp, dip, mp->sb.rootino);
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	action_report(rc, ACT_LOSTFOUND_CREATED, ino, -1, "", ", named in "
		      "the root directory");
	return 0;
}

/* Point a block-form directory's ".." (second entry of block 0) at dir. */
int
set_block_dotdot(struct repair_ctx *rc, uint64_t ino, uint64_t parent)
{
	struct xk_mount *mp = rc->mp;
	struct xk_buf *bp, *dbp;
	struct xk_dinode *dip;
	struct xk_bld_ext *ext = NULL, r = { 0 };
	uint64_t n = 0;
	const char *why;
	uint32_t at = sizeof(struct xk_dir3_data_hdr) +
		      xk_dir3_data_entsize(1, mp->g.has_ftype);
	const struct xk_buf_ops *ops;
	int err = xk_inode_read(mp, ino, 0, &bp, &dip);

	if (err)
		return err;
	/* Block 0 from the extent list or the bmbt. */
	err = xk_fork_mappings(mp, ino, dip, XK_DATA_FORK, &ext, &n, &why);
	if (!err && n)
		r = ext[0];
	free(ext);
	ops = xk_be64_get(dip->di_size) == mp->g.dirblksize ?
	      &xk_dir3_block_buf_ops : &xk_dir3_data_buf_ops;
	xk_buf_release(bp);
	if (err)
		return err;
	if (r.loff != 0 || !r.len ||
	    !xk_fsbext_valid(mp, r.fsbno, 1u << mp->g.dirblklog))
		return XK_ECORRUPT;
	err = xk_buf_read_ctx(mp, xk_fsb_to_daddr(mp, r.fsbno),
			      mp->g.dirblksize, ops, -1, ino, 0, &dbp);
	if (err)
		return err;
	if (dbp->data[at + 8] != 2 || memcmp(dbp->data + at + 9, "..", 2)) {
		xk_buf_release(dbp);
		return XK_ECORRUPT;
	}
	xk_put_be64(dbp->data + at, parent);
	xk_buf_dirty(dbp);
	xk_buf_release(dbp);
	return 0;
}

/*
 * Point a moved directory's ".." at /lost+found, in place.  A directory
 * where that cannot be done is found again by the next pass; memory or
 * I/O stops the run (the error is returned).
 */
int
dotdot_point(struct repair_ctx *rc, const struct orphan *o, uint64_t dir)
{
	struct xk_buf *bp;
	struct xk_dinode *dip;
	int err;

	if ((o->mode & XK_S_IFMT) != XK_S_IFDIR)
		return 0;
	if (!o->sfdir)
		return repair_oserr(rc, set_block_dotdot(rc, o->ino, dir),
				    "pointing \"..\" of directory %llu at "
				    "%llu", (unsigned long long)o->ino,
				    (unsigned long long)dir);
	err = xk_inode_read(rc->mp, o->ino, 0, &bp, &dip);
	if (err)
		return repair_oserr(rc, err, "reading directory %llu",
				    (unsigned long long)o->ino);
	err = sf_rewrite(rc, dip, 0, dir, NULL);
	if (!err) {
		xk_inode_init_crc(rc->mp, dip);
		xk_buf_dirty(bp);
	}
	xk_buf_release(bp);
	return repair_oserr(rc, err, "pointing \"..\" of directory %llu at "
			    "%llu", (unsigned long long)o->ino,
			    (unsigned long long)dir);
}

static int
dir_in_use(const struct repair_ctx *rc, uint64_t ino)
{
	const struct inode_info *ii = inode_info_find(rc, ino);

	return ii && (ii->mode & XK_S_IFMT) == XK_S_IFDIR;
}

/* An orphan's name in /lost+found: its inode number, ".N" if taken. */
static int
orphan_name(const struct orphan *o, char name[ORPHAN_NAME_MAX])
{
	if (o->suffix)
		return snprintf(name, ORPHAN_NAME_MAX, "%llu.%u",
				(unsigned long long)o->ino, o->suffix);
	return snprintf(name, ORPHAN_NAME_MAX, "%llu",
			(unsigned long long)o->ino);
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/*
 * Names already in /lost+found (a stale entry, a file someone put
 * there) are not reused: the orphan gets the first free "ino.N", as
 * xfs_repair names it.
 */
static int
name_orphans(struct repair_ctx *rc, uint64_t lf)
{
	char *taken = NULL, name[ORPHAN_NAME_MAX];
	size_t ntaken = 0;
	int err = lf ? dir_short_names(rc, lf, ORPHAN_NAME_MAX, &taken,
				       &ntaken) : 0;

	if (err)
		return err;
	for (size_t i = 0; i < rc->plan.orphans.n; i++) {
		struct orphan *o = &rc->plan.orphans.v[i];

		o->suffix = 0;
		while (orphan_name(o, name) < ORPHAN_NAME_MAX && ntaken &&
		       bsearch(name, taken, ntaken, ORPHAN_NAME_MAX,
			       cmp_name) && o->suffix < 1000000)
			o->suffix++;
	}
	free(taken);
	return 0;
}

/*
 * Whether every orphan's entry fits in the short-form directory dip
 * (a copy is edited, not dip): way 1 is taken only when all do.
 */
static int
all_fit_sf(struct repair_ctx *rc, const struct xk_dinode *dip, uint64_t lf)
{
	unsigned int isize = rc->mp->g.inodesize;
	struct xk_dinode *copy;
	int ok = dip->di_format == XK_DINODE_FMT_LOCAL, err;

	if (!ok)
		return 0;
	copy = xk_malloc(isize);
	if (!copy) {
		repair_error(rc, -ENOMEM, "fitting the orphans into /%s",
			     LOST_FOUND);
		return 0;
	}
	memcpy(copy, dip, isize);
	for (size_t i = 0; i < rc->plan.orphans.n && ok; i++) {
		const struct orphan *o = &rc->plan.orphans.v[i];
		char name[ORPHAN_NAME_MAX];
		struct sf_add add = { (const uint8_t *)name, 0,
				      xk_mode_to_ftype(o->mode), o->ino };

		if (o->ino == lf)
			continue;
		add.namelen = (uint8_t)orphan_name(o, name);
		err = sf_rewrite(rc, copy, 0, 0, &add);
		if (repair_oserr(rc, err, "fitting the orphans into /%s",
				 LOST_FOUND))
			break;
		ok = !err;
	}
	free(copy);
	return ok;
}

/* The same for a /lost+found still to be created at ino. */
static int
all_fit_new(struct repair_ctx *rc, uint64_t ino)
{
	struct xk_inode_init ii;
	uint8_t *dip = xk_calloc(1, rc->mp->g.inodesize);
	int ok;

	if (!dip) {
		repair_error(rc, -ENOMEM, "fitting the orphans into /%s",
			     LOST_FOUND);
		return 0;
	}
	lf_inode_init(&ii);
	xk_inode_init_core(rc->mp, dip, ino, &ii);
	xk_inode_init_sfdir(rc->mp, dip, rc->mp->sb.rootino);
	ok = all_fit_sf(rc, (const struct xk_dinode *)dip, ino);
	free(dip);
	return ok;
}

/*
 * Way 1: every orphan's entry into the short-form lf, in place.  The
 * trial said they fit: any failure is an error that stops the run.
 */
static int
add_in_place(struct repair_ctx *rc, uint64_t lf, unsigned long *applied)
{
	int err;

	for (size_t i = 0; i < rc->plan.orphans.n; i++) {
		const struct orphan *o = &rc->plan.orphans.v[i];
		char name[ORPHAN_NAME_MAX];

		if (o->ino == lf)
			continue;
		orphan_name(o, name);
		err = sf_add_entry(rc, lf, name, o->ino,
				   xk_mode_to_ftype(o->mode));
		if (err)
			return repair_error(rc, err, "adding inode %llu to "
					    "/%s", (unsigned long long)o->ino,
					    LOST_FOUND);
		action_report(rc, ACT_MOVED, o->ino, -1, NULL, " to /%s/%s",
			      LOST_FOUND, name);
		(*applied)++;
		err = dotdot_point(rc, o, lf);
		if (err)
			return err;
	}
	return 0;
}

/* Way 2: plan the rewrite; dirfix.c and lf_build() carry it out. */
static int
plan_rewrite(struct repair_ctx *rc, uint64_t lf, int create)
{
	struct lf_plan *p = xk_calloc(1, sizeof(*p));
	size_t cap = rc->plan.orphans.n ? rc->plan.orphans.n : 1;

	if (!p)
		return -ENOMEM;
	rc->plan.lfplan = p;
	p->ents = xk_calloc(cap, sizeof(*p->ents));
	p->names = xk_calloc(cap, sizeof(*p->names));
	p->dirs = xk_calloc(cap, sizeof(*p->dirs));
	if (!p->ents || !p->names || !p->dirs) {
		lf_plan_free(&rc->plan);
		return -ENOMEM;
	}
	p->lf = lf;
	p->root = rc->mp->sb.rootino;
	p->create = create;
	for (size_t i = 0; i < rc->plan.orphans.n; i++) {
		const struct orphan *o = &rc->plan.orphans.v[i];
		int len;

		if (o->ino == lf)
			continue;
		len = orphan_name(o, p->names[p->n]);
		p->ents[p->n] = (struct xk_bld_dirent){
			.name = (const uint8_t *)p->names[p->n],
			.namelen = (uint8_t)len,
			.ftype = xk_mode_to_ftype(o->mode),
			.ino = o->ino,
		};
		p->n++;
		if ((o->mode & XK_S_IFMT) == XK_S_IFDIR)
			p->dirs[p->ndirs++] = *o;
	}
	p->lfent = (struct xk_bld_dirent){
		.name = (const uint8_t *)LOST_FOUND,
		.namelen = (uint8_t)strlen(LOST_FOUND),
		.ftype = XK_DIR3_FT_DIR, .ino = lf,
	};
	if (create && lf)
		mark_in_use(rc, lf);
	plan_dir_rebuild(rc, create ? p->root : lf);
	info(rc, "Moving %zu orphan%s to /%s, which is rewritten with the "
	     "AG rebuild.\n", p->n, p->n == 1 ? "" : "s", LOST_FOUND);
	return 0;
}

/*
 * Write a new directory inode INO (MODE, owner root, every time NOW)
 * holding ENTS under PARENT, with NSUBDIRS subdirectories: a new
 * /lost+found, or a lost directory brought back by reasm_build.
 */
int
new_dir_write(struct xk_bld *b, uint64_t ino, uint16_t mode, uint64_t parent,
	      const struct xk_bld_dirent *ents, size_t n, uint32_t nsubdirs,
	      int64_t now)
{
	struct xk_bld_inode ip;
	int err;

	xk_bld_inode_init(b, &ip, ino, XK_S_IFDIR | mode);
	ip.atime_sec = ip.mtime_sec = ip.ctime_sec = ip.crtime_sec = now;
	ip.atime_nsec = ip.mtime_nsec = ip.ctime_nsec = ip.crtime_nsec = 0;
	ip.nlink = 2 + nsubdirs;
	err = xk_bld_dir(b, &ip, parent, ents, n);
	if (!err)
		err = xk_bld_inode_write(b, &ip);
	if (err) {
		free(ip.data.local);
		free(ip.data.ext);
	}
	return err;
}

int
lf_alloc(struct repair_ctx *rc, struct xk_bld *b)
{
	struct lf_plan *p = rc->plan.lfplan;
	int err;

	if (!p || !p->create || p->lf)
		return 0;
	err = xk_bld_ialloc(b, p->root, 1, &p->lf);
	if (err == -ENOSPC) {
		/* No room for a chunk: the orphans stay, said next pass. */
		lf_plan_free(&rc->plan);
		return 0;
	}
	if (err)
		return err;
	p->lfent.ino = p->lf;
	info(rc, "Every inode slot was in use: /%s is inode %llu, in a new "
	     "inode chunk.\n", LOST_FOUND, (unsigned long long)p->lf);
	return 0;
}

int
lf_build(struct repair_ctx *rc, struct xk_bld *b)
{
	struct lf_plan *p = rc->plan.lfplan;
	int err = 0;

	if (!p)
		return 0;
	/* The directory to gain the entries could not be rewritten. */
	if (!dir_being_rebuilt(rc, p->create ? p->root : p->lf))
		return 0;
	if (p->create) {
		err = new_dir_write(b, p->lf, 0700, p->root, p->ents, p->n,
				    (uint32_t)p->ndirs, repair_now());
		if (err)
			return err;
		action_report(rc, ACT_LOSTFOUND_CREATED, p->lf, -1, "",
			      ", named in the root directory");
		lf_report_moves(rc, p->lf);
	}
	for (size_t i = 0; i < p->ndirs; i++)
		if (dotdot_point(rc, &p->dirs[i], p->lf))
			return rc->found.error;
	return 0;
}

void
lf_report_moves(struct repair_ctx *rc, uint64_t dir)
{
	const struct lf_plan *p = rc->plan.lfplan;

	if (!p || dir != p->lf)
		return;
	for (size_t i = 0; i < p->n; i++)
		action_report(rc, ACT_MOVED, p->ents[i].ino, -1, NULL,
			      " to /%s/%s", LOST_FOUND, p->names[i]);
}

/* Union-find over the directory orphans (by index), for the cycles. */
static size_t
uf_find(size_t *up, size_t i)
{
	while (up[i] != i) {
		up[i] = up[up[i]];
		i = up[i];
	}
	return i;
}

static int
cmp_orphan(const void *a, const void *b)
{
	const struct orphan *x = a, *y = b;

	return (x->ino > y->ino) - (x->ino < y->ino);
}

static ssize_t
orphan_index(const struct repair_ctx *rc, uint64_t ino)
{
	struct orphan key = { .ino = ino };
	const struct orphan *o = rc->plan.orphans.n ?
		bsearch(&key, rc->plan.orphans.v, rc->plan.orphans.n,
			sizeof(key), cmp_orphan) : NULL;

	return o ? o - rc->plan.orphans.v : -1;
}

/*
 * A directory is planned whenever it is not reachable, since its "."
 * and its children's ".." count as references; only those no entry
 * names are orphans.  The others hang below an orphan and come back
 * with it — unless they hang in a cycle of directories that only name
 * each other: then nothing of that group is an orphan, so its lowest
 * directory is taken as one (as xfs_repair does; the entry inside the
 * cycle that still names it is dropped by the next pass, its ".."
 * being /lost+found by then).
 */
static void
drop_named_dirs(struct repair_ctx *rc)
{
	uint64_t *named;
	size_t *up = NULL, out = 0;
	uint8_t *keep = NULL, *group_kept = NULL;
	int dirs = 0;

	for (size_t i = 0; i < rc->plan.orphans.n; i++)
		if ((rc->plan.orphans.v[i].mode & XK_S_IFMT) == XK_S_IFDIR)
			dirs = 1;
	if (!dirs || !rc->scan.nedges)
		return;
	sort_v(rc->plan.orphans.v, rc->plan.orphans.n, sizeof(*rc->plan.orphans.v),
	       cmp_orphan);
	named = xk_malloc(rc->scan.nedges * sizeof(*named));
	up = xk_malloc(rc->plan.orphans.n * sizeof(*up));
	keep = xk_calloc(rc->plan.orphans.n, 1);
	group_kept = xk_calloc(rc->plan.orphans.n, 1);
	if (!named || !up || !keep || !group_kept) {
		repair_error(rc, -ENOMEM, "choosing the orphans for /%s",
			     LOST_FOUND);
		rc->plan.orphans.n = 0;
		goto out;
	}
	for (size_t i = 0; i < rc->scan.nedges; i++)
		named[i] = rc->scan.edges[i].child;
	sort_v(named, rc->scan.nedges, sizeof(*named), cmp_u64);
	for (size_t i = 0; i < rc->plan.orphans.n; i++)
		up[i] = i;
	/* Group the orphan directories the entries join. */
	for (size_t i = 0; i < rc->scan.nedges; i++) {
		ssize_t p = orphan_index(rc, rc->scan.edges[i].parent);
		ssize_t c = p < 0 ? -1 : orphan_index(rc, rc->scan.edges[i].child);

		if (c >= 0 &&
		    (rc->plan.orphans.v[c].mode & XK_S_IFMT) == XK_S_IFDIR)
			up[uf_find(up, (size_t)p)] = uf_find(up, (size_t)c);
	}
	for (size_t i = 0; i < rc->plan.orphans.n; i++) {
		const struct orphan *o = &rc->plan.orphans.v[i];

		keep[i] = (o->mode & XK_S_IFMT) != XK_S_IFDIR ||
			  !bsearch(&o->ino, named, rc->scan.nedges, sizeof(*named),
				   cmp_u64);
		if (keep[i])
			group_kept[uf_find(up, i)] = 1;
	}
	/* A group nothing brings back: its lowest directory (inode order). */
	for (size_t i = 0; i < rc->plan.orphans.n; i++) {
		size_t g = uf_find(up, i);

		if (!keep[i] && !group_kept[g])
			keep[i] = group_kept[g] = 1;
	}
	for (size_t i = 0; i < rc->plan.orphans.n; i++) {
		if (!keep[i]) {
			plan_none(rc);
			continue;
		}
		rc->plan.orphans.v[out++] = rc->plan.orphans.v[i];
	}
	rc->plan.orphans.n = out;
out:
	free(named);
	free(up);
	free(keep);
	free(group_kept);
}

int
reconnect_orphans(struct repair_ctx *rc, unsigned long *applied)
{
	struct xk_mount *mp = rc->mp;
	uint64_t root = mp->sb.rootino, lf;
	struct xk_buf *bp;
	struct xk_dinode *dip;
	int err, fits;

	lf_plan_free(&rc->plan);
	drop_named_dirs(rc);
	if (rc->found.error)
		return rc->found.error;
	if (!rc->plan.orphans.n)
		return 0;
	/* Edits of this pass's inode fixes must be read back as written. */
	err = xk_buf_flush(mp);
	if (err)
		return err;
	if (!dir_in_use(rc, root))
		return 0;	/* no usable root: the orphans stay */
	/* Those whose parent pointers name their place go back there. */
	err = orphans_home(rc, applied);
	if (err || !rc->plan.orphans.n)
		return err;
	/*
	 * From here a corrupt /lost+found or root leaves the orphans where
	 * they are (the next pass says so); memory or I/O stops the run.
	 */
	err = dir_lookup(rc, root, LOST_FOUND, &lf);
	if (repair_oserr(rc, err, "looking up /%s", LOST_FOUND))
		return rc->found.error;
	if (lf && !dir_in_use(rc, lf))
		return 0;	/* the name is taken by a file */
	if (!lf) {
		lf = pick_free_inode(rc);
		/*
		 * Every inode slot in use: the AG rebuild allocates a new
		 * chunk for /lost+found (lf_alloc), as xfs_repair would.
		 */
		if (!lf && !rc->found.error)
			return plan_rewrite(rc, 0, 1);
		if (!lf)
			return rc->found.error;
		err = name_orphans(rc, 0);
		if (err)
			return repair_error(rc, err, "naming the orphans");
		fits = all_fit_new(rc, lf);
		if (rc->found.error)
			return rc->found.error;
		if (fits) {
			err = create_lost_found(rc, lf);
			if (repair_oserr(rc, err, "creating /%s", LOST_FOUND))
				return rc->found.error;
		}
		if (fits && !err) {
			err = add_in_place(rc, lf, applied);
			(*applied)++;
			return err;
		}
		return plan_rewrite(rc, lf, 1);
	}
	err = name_orphans(rc, lf);
	if (repair_oserr(rc, err, "reading the names in /%s", LOST_FOUND))
		return rc->found.error;
	if (err)
		return 0;
	err = xk_inode_read(mp, lf, 0, &bp, &dip);
	if (repair_oserr(rc, err, "reading /%s", LOST_FOUND))
		return rc->found.error;
	if (err)
		return 0;
	fits = all_fit_sf(rc, dip, lf);
	xk_buf_release(bp);
	if (rc->found.error)
		return rc->found.error;
	if (fits)
		return add_in_place(rc, lf, applied);
	return plan_rewrite(rc, lf, 0);
}
