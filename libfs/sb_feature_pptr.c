// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Adding parent pointers to an existing filesystem (-O parent=1): every
 * inode reached from the root (and from the metadata directory tree's
 * root: the kernel gives metadata files parent pointers too) gets, for
 * each directory entry naming it, the pointer the kernel would have
 * added with that entry (an attribute of the PARENT namespace named by
 * the entry, holding the directory's inode number and generation).  The
 * pass is the one xfskit-mkfs -p runs after populating
 * (xk_bld_pptr_tree): each inode's attributes are read whole, the
 * pointers added, and its attr fork written anew by the builder, short
 * form, leaf or node as the list needs.  Everything
 * stays in the cache; the caller writes it once every check passed and
 * sets the feature bit last.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <xfskit/build.h>
#include <xfskit/mount.h>
#include <xfskit/pptr.h>
#include <xfskit/sb_feature.h>

#include "sb_feature_priv.h"

/*
 * Attribute blocks are taken where the kernel's per-AG reservations
 * leave room, so that no AG ends up short of them; only a filesystem
 * with too little free space anywhere is refused.  Read before the
 * builder opens: it drops the btree blocks it loaded from the cache
 * (its commit builds them anew).
 */
static int
reservations(struct xk_mount *mp, uint64_t *need)
{
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		uint64_t free;
		int err = sb_ag_resv(mp, agno, &free, &need[agno]);

		if (err)
			return err;
	}
	return 0;
}

int
sb_add_parent_pointers(struct xk_mount *mp, const struct xk_sb *want,
		       char *msg, size_t msglen)
{
	struct xk_sb old = mp->sb;
	uint64_t bad = 0, need = 0, *resv;
	const char *why = NULL;
	struct xk_bld *b;
	int err;

	resv = calloc(mp->g.agcount, sizeof(*resv));
	if (!resv) {
		snprintf(msg, msglen, "no memory for %u AGs", mp->g.agcount);
		return -ENOMEM;
	}
	err = reservations(mp, resv);
	if (!err)
		err = xk_bld_open(mp, &b);
	if (err) {
		snprintf(msg, msglen, "the AG headers or btrees cannot be "
			 "read: %s (run xfskit-repair first)",
			 xk_strerror(err));
		free(resv);
		return err;
	}
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++)
		xk_bld_set_alloc_keep(b, agno, resv[agno]);
	/* New attr forks go where xfs_repair 7.2's (the kernel's) go. */
	xk_bld_set_late_attr_forks(b, 1);
	free(resv);
	/* The attr forks are written as on a filesystem with the feature. */
	mp->sb.features_incompat = want->features_incompat;
	mp->sb.versionnum |= XK_SB_VERSION_ATTRBIT;
	xk_mount_rederive(mp);
	err = xk_bld_pptr_tree(b, 1, &bad, &need, &why);
	if (err == -ENOSPC)
		snprintf(msg, msglen, "not enough free space for the parent "
			 "pointers: from inode %llu on they need %llu more "
			 "blocks (attribute blocks, and symlink targets or "
			 "directories moved out of their inodes) than the "
			 "free space leaves beyond what the kernel reserves "
			 "in each AG; free that much space first; nothing "
			 "was changed",
			 (unsigned long long)bad, (unsigned long long)need);
	else if (err == XK_EUNSUPP)
		snprintf(msg, msglen, "inode %llu: %s: not supported; "
			 "nothing was changed", (unsigned long long)bad,
			 why ? why : "its parent pointers cannot be added");
	else if (err)
		snprintf(msg, msglen, "inode %llu: %s: %s (run xfskit-repair "
			 "first); nothing was changed",
			 (unsigned long long)bad, why ? why :
			 "its parent pointers cannot be added",
			 xk_strerror(err));
	if (!err) {
		err = xk_bld_commit(b);
		if (err)
			snprintf(msg, msglen, "indexing the attribute blocks "
				 "failed: %s; nothing was changed",
				 xk_strerror(err));
	}
	xk_bld_free(b);
	if (!err) {
		err = xk_buf_seal(mp);
		if (err)
			snprintf(msg, msglen, "a rewritten block fails its "
				 "verifier: %s; nothing was changed",
				 xk_strerror(err));
	}
	if (!err)
		err = sb_check_reservations(mp, msg, msglen);
	if (err) {
		xk_buf_discard_dirty(mp);
		mp->sb = old;
		xk_mount_rederive(mp);
	}
	return err;
}
