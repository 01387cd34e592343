/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parent pointers across a filesystem (libfs/write/pptr.c): reading a
 * directory's entries with their names, and giving every inode of a
 * tree the parent pointers its directory entries call for.  The check
 * compares both sides with the first; xfskit-mkfs -p, which builds
 * inodes before it knows every link to them, adds them with the second.
 * The on-disk record and hash are in format/attr.h.
 */
#ifndef XFSKIT_PPTR_H
#define XFSKIT_PPTR_H

#include <xfskit/errors.h>

#include <stdint.h>

#include <xfskit/build.h>
#include <xfskit/meta.h>
#include <xfskit/format/dinode.h>

/* xk_dirent_fn (meta.h) is called per entry, never "." or "..". */

/*
 * The entries of directory ino (dip: its verified core): short form, or
 * the data blocks below the leaf offset, read raw (a directory block
 * split over extents is put back together).  Damage is skipped, not
 * reported: the directory check reports it.  Returns 0, a callback's
 * value, or a negative errno when the fork cannot be mapped.
 */
XK_MUST_CHECK int xk_dir_entries(struct xk_mount *mp, uint64_t ino,
				 const struct xk_dinode *dip, xk_dirent_fn fn,
				 void *ctx);

/*
 * Give every inode reached from the root (with with_metadir also from
 * the metadata directory tree's root: the kernel gives its files parent
 * pointers too) the parent pointer of each entry naming it (name,
 * directory, directory generation), keeping its other attributes; pointers already there are kept once.  For a tree
 * the builder has just written, or one on disk (xfskit-admin -O
 * parent=1): an inode whose link count is not the number of entries
 * naming it (a directory: one) is XK_ECORRUPT.  On failure *bad_ino and
 * *why say where.  With need non-NULL, running out of space (-ENOSPC,
 * *bad_ino the first inode without room) goes on sizing the rest:
 * *need is then the attr blocks those inodes' forks still lack.
 */
XK_MUST_CHECK int xk_bld_pptr_tree(struct xk_bld *b, int with_metadir,
				   uint64_t *bad_ino, uint64_t *need,
				   const char **why);

#endif /* XFSKIT_PPTR_H */
