// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Names and links: every directory entry must name an allocated inode of
 * the file type it records; every inode must be reachable from the root;
 * every directory has one parent, which its ".." names; and every
 * inode's link count equals the references to it: one per entry naming
 * it, and for a directory also its own "." and each subdirectory's "..".
 *
 * On a METADIR filesystem the metadata inodes (quota files, realtime
 * metadata) form a second tree from sb_metadirino, its inodes flagged
 * as metadata; the two trees never name each other's inodes.  The same
 * rules hold in it, with its own root.  Damage to that tree has the
 * tree made anew (metadir.c), or refused when it holds what a new one
 * would lose (plan.meta_refuse: nothing is written).  A wrong link
 * count of a metadata inode that is otherwise sound, and the metadata
 * root's "..", are set in place, as xfs_repair 7.2 sets them; a wrong
 * sb_metadirino is set to the metadata root mkfs made, when it is one.
 *
 * In: rc->scan.inodes and rc->scan.edges from the inode phase.  Out: findings,
 * and in repair the plans: entries naming inodes not in use dropped,
 * ".." and link counts set to what the entries say, unreferenced
 * unlinked inodes cleared.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "repair.h"

#include <xfskit/format/dir.h>

/* Edges only need grouping by parent for the walk from the root. */
static int
cmp_parent(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return (x->parent > y->parent) - (x->parent < y->parent);
}


static struct inode_info *
find(struct repair_ctx *rc, uint64_t ino)
{
	size_t hint = 0;

	return inode_info_find_from(rc, ino, &hint);
}

static int
is_dir(const struct inode_info *ii)
{
	return (ii->mode & XK_S_IFMT) == XK_S_IFDIR;
}

/* Metadata inodes that no directory names. */
static int
is_metadata_ino(const struct xk_sb *sb, uint64_t ino)
{
	/*
	 * A secondary superblock may carry null inode numbers; mkfs puts
	 * the realtime bitmap and summary right after the root.
	 */
	uint64_t rbm = sb->rbmino != XK_NULLFSINO ? sb->rbmino :
		       sb->rootino + 1;
	uint64_t rsum = sb->rsumino != XK_NULLFSINO ? sb->rsumino :
			sb->rootino + 2;

	return ino == rbm || ino == rsum ||
	       (ino && (ino == sb->uquotino || ino == sb->gquotino ||
			ino == sb->pquotino));
}

/*
 * Without a realtime volume, the realtime bitmap and summary inodes the
 * superblock names are empty regular files in use (xfs_repair remakes
 * them too).  With one they describe the realtime volume, which is not
 * checked here (unsupported.c says so).
 */
int
rt_inode_lost(struct repair_ctx *rc, uint64_t ino)
{
	const struct inode_info *ii;

	if (rc->mp->sb.rblocks || rc->mp->g.has_metadir ||
	    ino == XK_NULLFSINO || !xk_ino_valid(rc->mp, ino))
		return 0;
	ii = find(rc, ino);
	return !ii || (ii->mode & XK_S_IFMT) != XK_S_IFREG;
}

static void
check_rt_inode(struct repair_ctx *rc, uint64_t ino, const char *which)
{
	if (!rt_inode_lost(rc, ino))
		return;
	if (report(rc, PR_INODE_BAD, "realtime inode", -1, ino, XK_NO_DADDR,
		   which, "the realtime %s inode the superblock names is not "
		   "a regular file in use", which))
		plan_inode(rc, ino, IFIX_NEWRTINO, 0);
	/* Phase 6 began with "reinitializing realtime ... inode". */
	xr_covered(rc);
}

/* Drop an entry naming an inode not in use, in a directory we can edit. */
static void
plan_entry_drop(struct repair_ctx *rc, uint64_t dir, uint64_t child)
{
	struct inode_info *d = find(rc, dir);

	if (d && d->sfdir)
		plan_inode(rc, dir, IFIX_SF_DROP, child);
	else if (d)
		plan_dir_rebuild(rc, dir);
	else
		plan_none(rc);
}

/* Entries get their file types from their inodes when rewritten. */
static void
plan_ftype_fix(struct repair_ctx *rc, uint64_t dir)
{
	struct inode_info *d = find(rc, dir);

	if (d && d->sfdir)
		plan_inode(rc, dir, IFIX_SF_FTYPE, 0);
	else if (d && !dir_being_rebuilt(rc, dir))
		plan_dir_rebuild(rc, dir);
	else if (!d)
		plan_none(rc);
}

/* A finding in the metadata tree: the tree is made anew (metadir.c). */
static void
plan_meta_rebuild(struct repair_ctx *rc)
{
	rc->plan.meta_rebuild = 1;
}

/* A bad entry goes, unless the metadata tree holds it. */
static void
plan_bad_entry(struct repair_ctx *rc, int in_meta, const struct edge *e)
{
	if (in_meta)
		plan_meta_rebuild(rc);
	else
		plan_entry_drop(rc, e->parent, e->child);
}

/* The root of the metadata tree (metadir.c), or 0 without one. */
static uint64_t
metadir_root(const struct repair_ctx *rc)
{
	return rc->mp->g.has_metadir ? rc->mp->sb.rootino + 1 : 0;
}

/* The first entry of directory dir, in the list ordered by parent. */
static size_t
first_edge(struct repair_ctx *rc, uint64_t dir)
{
	struct edge key = { .parent = dir };
	size_t lo = 0, hi = rc->scan.nedges;

	search_poll(rc);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cmp_parent(&rc->scan.edges[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether directory dir has an entry naming child. */
static int
names(struct repair_ctx *rc, uint64_t dir, uint64_t child)
{
	for (size_t i = first_edge(rc, dir);
	     i < rc->scan.nedges && rc->scan.edges[i].parent == dir; i++)
		if (rc->scan.edges[i].child == child)
			return 1;
	return 0;
}

/*
 * Depth first from the root.  The stack holds directories still to walk,
 * at most every directory: a vector on the run's spill context, like
 * the lists it walks.  Out of memory, the walk cannot say what is
 * unreachable: every inode is marked reached (no false orphans) and
 * the run stops (an operational error).
 */
static int
reach_from_root(struct repair_ctx *rc, struct inode_info *root)
{
	struct xk_vec stack = { .spill = rc->spill };
	size_t visited = 0;
	int err;

	root->reached = 1;
	err = xk_vec_push(&stack, &root->ino, sizeof(root->ino));
	while (!err && stack.n) {
		uint64_t dir = ((const uint64_t *)stack.v)[--stack.n];
		size_t lo = first_edge(rc, dir);

		for (size_t hint = 0;
		     lo < rc->scan.nedges && rc->scan.edges[lo].parent == dir; lo++) {
			struct inode_info *c = inode_info_find_from(rc,
						rc->scan.edges[lo].child, &hint);

			lists_poll(rc, ++visited);
			/* An entry across the two trees is dropped, not walked. */
			if (!c || c->clearing || c->reached ||
			    c->meta != root->meta)
				continue;
			c->reached = 1;
			if (is_dir(c))
				err = xk_vec_push(&stack, &c->ino, sizeof(c->ino));
			if (err)
				break;
		}
	}
	xk_vec_free(&stack);
	if (err)
		for (size_t i = 0; i < rc->scan.ninodes; i++)
			rc->scan.inodes[i].reached = 1;
	return err;
}

/*
 * The root of the metadata tree: a metadata directory of metafile type
 * "dir" whose ".." names itself.  Then everything it reaches is marked.
 * Returns nonzero only when the walk ran out of memory.
 */
static int
check_metadir_root(struct repair_ctx *rc)
{
	uint64_t ino = metadir_root_find(rc);
	struct inode_info *mroot = ino ? find(rc, ino) : NULL;

	if (!mroot)
		return 0;
	/* A root's ".." names itself: set so, as any directory's is. */
	if (mroot->parent != ino &&
	    report(rc, PR_DIR_BAD, "metadata directory", -1, ino,
		   XK_NO_DADDR, "dotdot", "\"..\" of the metadata root names "
		   "%llu", (unsigned long long)mroot->parent))
		plan_inode(rc, ino, mroot->sfdir ? IFIX_SF_PARENT :
			   IFIX_DOTDOT, ino);
	return reach_from_root(rc, mroot);
}

int
phase_links(struct repair_ctx *rc)
{
	const struct xk_sb *sb = &rc->mp->sb;
	struct inode_info *root;
	uint64_t mtarget;

	/* Filled: from here on searched by binary search. */
	xk_vec_probe_random(&rc->scan.inode_vec);
	xk_vec_probe_random(&rc->scan.edge_vec);
	/* The inode scan goes in inode order: one run per worker. */
	inodes_order(rc);
	edges_order(rc);

	for (size_t i = 0; i < rc->scan.ninodes; i++) {
		struct inode_info *ii = &rc->scan.inodes[i];

		lists_poll(rc, i);
		meter_step(rc);
		if (!is_dir(ii))
			continue;
		ii->refs++;			/* its "." */
		if (ii->parent) {
			struct inode_info *p = find(rc, ii->parent);

			/* Across the two trees: set when it is reconnected. */
			if (p && is_dir(p) && p->meta == ii->meta)
				p->refs++;	/* its ".." */
			else if (p && is_dir(p))
				continue;
			else
				report(rc, PR_DIR_BAD, "directory", -1, ii->ino,
				       XK_NO_DADDR, "dotdot", "\"..\" names "
				       "%llu, which is not a directory in use",
				       (unsigned long long)ii->parent);
		}
	}
	for (size_t i = 0, hint = 0, phint = 0; i < rc->scan.nedges; i++) {
		const struct edge *e = &rc->scan.edges[i];
		struct inode_info *c = inode_info_find_from(rc, e->child,
							    &hint);
		/*
		 * Only a metadir filesystem has two trees to keep apart;
		 * edges come grouped by parent, so the hint makes it cheap.
		 */
		struct inode_info *p = rc->mp->g.has_metadir ?
			inode_info_find_from(rc, e->parent, &phint) : NULL;
		int in_meta = p && p->meta;

		lists_poll(rc, i);
		meter_step(rc);
		/*
		 * An inode the check clears (its content is bad) is named
		 * by no entry: the entry goes with it in the same repair,
		 * as xfs_repair junks it, rather than getting its file type.
		 */
		if (!c || c->clearing) {
			if (report(rc, PR_DIR_BAD, in_meta ? "metadata "
				   "directory" : "directory", -1,
				   e->parent, XK_NO_DADDR, "entry",
				   "an entry names inode %llu, which is "
				   "%s", (unsigned long long)e->child,
				   c ? "being cleared" : "not in use"))
				/*
				 * Even in the metadata tree: the entry of a
				 * cleared metadata file (a quota file the
				 * kernel makes anew) goes, the tree stays.
				 */
				plan_entry_drop(rc, e->parent, e->child);
			if (!rc->found.error)
				xr_entry_junked(rc, e->parent, e->child);
			continue;
		}
		if (p && c->meta != p->meta) {
			/*
			 * A user directory naming a metadata inode: the
			 * entry goes (the kernel refuses to open it).  A
			 * metadata directory naming a user inode: refused.
			 */
			if (report(rc, PR_DIR_BAD, in_meta ? "metadata "
				   "directory" : "directory", -1, e->parent,
				   XK_NO_DADDR, "entry", in_meta ? "an entry "
				   "names inode %llu, which is not a metadata "
				   "inode" : "an entry names metadata inode "
				   "%llu", (unsigned long long)e->child))
				plan_bad_entry(rc, in_meta, e);
			continue;
		}
		c->refs++;
		/* The rewrite takes every entry's file type from its inode. */
		if (e->ftype != EDGE_NO_FTYPE &&
		    e->ftype != xk_mode_to_ftype(c->mode)) {
			if (report(rc, PR_DIR_BAD, "directory", -1, e->parent,
				   XK_NO_DADDR, "ftype", "entry for inode %llu "
				   "records file type %u, the inode is type %u",
				   (unsigned long long)e->child, e->ftype,
				   xk_mode_to_ftype(c->mode)))
				plan_ftype_fix(rc, e->parent);
			if (!rc->found.error)
				xr_msg(rc, "%s ftype mismatch (%u/%u) in "
				       "directory/child inode %llu/%llu",
				       rc->opt.no_modify ? "would fix" :
				       "fixing", e->ftype,
				       xk_mode_to_ftype(c->mode),
				       (unsigned long long)e->parent,
				       (unsigned long long)e->child);
		}
		/* Parent 0: the block holding ".." was not read whole. */
		if (is_dir(c) && c->ino != sb->rootino &&
		    c->ino != metadir_root(rc) && c->parent != e->parent &&
		    report(rc, PR_DIR_BAD, "directory", -1, c->ino,
			   XK_NO_DADDR, "dotdot", c->parent ? "named in "
			   "directory %llu, but \"..\" says %llu" : "named "
			   "in directory %llu, but its \"..\" could not be "
			   "read", (unsigned long long)e->parent,
			   (unsigned long long)c->parent)) {
			/*
			 * A directory has one name: when ".." names a
			 * directory that names it, this entry is the extra
			 * one; else ".." follows the entry.
			 */
			if (names(rc, c->parent, c->ino))
				plan_entry_drop(rc, e->parent, e->child);
			else
				plan_inode(rc, c->ino, c->sfdir ?
					   IFIX_SF_PARENT : IFIX_DOTDOT,
					   e->parent);
		}
	}

	root = find(rc, sb->rootino);
	if (!root || !is_dir(root)) {
		/* Lost: a new one, and its children go to /lost+found. */
		if (report(rc, PR_DISCONNECTED, "root directory", -1,
			   sb->rootino, XK_NO_DADDR, "rootino", "the root "
			   "inode is not a directory in use")) {
			if (xk_ino_valid(rc->mp, sb->rootino))
				plan_inode(rc, sb->rootino, IFIX_NEWROOT, 0);
			else
				plan_none(rc);
		}
		/* Phase 6 began with "reinitializing root directory". */
		if (rc->xr.root_lost)
			xr_covered(rc);
		root = NULL;
	} else {
		if (root->parent != root->ino)
			report(rc, PR_DIR_BAD, "root directory", -1, root->ino,
			       XK_NO_DADDR, "dotdot", "\"..\" of the root names "
			       "%llu", (unsigned long long)root->parent);
		if (reach_from_root(rc, root))
			return repair_error(rc, -ENOMEM, "walking the "
					    "directory tree from the root");
	}

	if (rc->mp->g.has_metadir && check_metadir_root(rc))
		return repair_error(rc, -ENOMEM, "walking the metadata "
				    "directory tree");
	check_rt_inode(rc, sb->rbmino, "bitmap");
	check_rt_inode(rc, sb->rsumino, "summary");

	/*
	 * Every finding is reported and counted the same with and without
	 * -n (one count of problems): a disconnected inode is one finding,
	 * its link count checked once it is reconnected.  The metadata
	 * tree first: whether it is made anew decides the fate of the
	 * slot its root takes.
	 */
	for (size_t i = 0; rc->mp->g.has_metadir && i < rc->scan.ninodes;
	     i++) {
		struct inode_info *ii = &rc->scan.inodes[i];

		lists_poll(rc, i);
		if (!ii->meta)
			continue;
		if (!ii->reached) {
			if (report(rc, PR_DISCONNECTED, "metadata inode", -1,
				   ii->ino, XK_NO_DADDR, "reachable", "in use "
				   "but not reachable from the metadata "
				   "directory tree"))
				plan_meta_rebuild(rc);
			continue;
		}
		if (is_dir(ii) != (ii->metatype == XK_METAFILE_DIR)) {
			if (report(rc, PR_INODE_BAD, "metadata inode", -1,
				   ii->ino, XK_NO_DADDR, "metatype", "metafile "
				   "type %u does not fit mode 0%o",
				   ii->metatype, ii->mode))
				plan_meta_rebuild(rc);
			continue;
		}
		/*
		 * A link count alone is set from the references, as in the
		 * user tree: the inode is reached from the metadata root
		 * and of the right type, so nothing it indexes is at risk.
		 */
		if (ii->refs != ii->nlink &&
		    report(rc, PR_NLINK, "metadata inode", -1, ii->ino,
			   XK_NO_DADDR, "nlink", "link count %u, %u "
			   "references found", ii->nlink, ii->refs))
			plan_inode(rc, ii->ino, IFIX_NLINK, ii->refs);
	}
	metadir_rebuild_plan(rc);
	mtarget = metadir_rebuild_target(rc);

	for (size_t i = 0; i < rc->scan.ninodes; i++) {
		struct inode_info *ii = &rc->scan.inodes[i];

		lists_poll(rc, i);
		meter_step(rc);
		/* The new metadata root takes its slot, whatever it held. */
		if (is_metadata_ino(sb, ii->ino) || ii->meta ||
		    ii->ino == mtarget || ii->clearing)
			continue;
		if (root && !ii->reached) {
			if (!report(rc, PR_DISCONNECTED, "inode", -1, ii->ino,
				    XK_NO_DADDR, "reachable", "in use but not "
				    "reachable from the root directory"))
				continue;
			/*
			 * Unlinked and unreferenced: an open-but-deleted
			 * file whose last close never came; it goes.
			 * Others need a /lost+found entry.
			 */
			if (ii->refs == 0 && ii->nlink == 0)
				plan_inode(rc, ii->ino, IFIX_CLEAR, 0);
			else if (ii->refs == 0 || is_dir(ii))
				/*
				 * A directory's own "." and its children's
				 * ".." count too: lostfound.c keeps those
				 * no entry names.
				 */
				plan_orphan(rc, ii);
			else
				plan_none(rc);
			continue;
		}
		if (ii->refs == ii->nlink)
			continue;
		if (report(rc, PR_NLINK, "inode", -1, ii->ino, XK_NO_DADDR,
			   "nlink", "link count %u, %u references found",
			   ii->nlink, ii->refs))
			plan_inode(rc, ii->ino, IFIX_NLINK, ii->refs);
		if (!rc->found.error)
			xr_msg(rc, "%s inode %llu nlinks from %u to %u",
			       rc->opt.no_modify ? "would have reset" :
			       "resetting", (unsigned long long)ii->ino,
			       ii->nlink, ii->refs);
	}
	return rc->found.error;
}
