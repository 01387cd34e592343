/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Populating a new filesystem (-p): the pieces shared by the three
 * sources (a directory tree, a protofile, a tar archive).  Each source
 * walks its input and drives the builder (include/xfskit/build.h) through
 * the helpers here, which own the policy every source must agree on:
 * ownership overrides, which times are copied and which are the build's,
 * how xattrs and POSIX ACLs are stored, how file data is streamed (holes
 * stay holes), hard-link bookkeeping, progress and error messages.
 */
#ifndef XFSKIT_MKFS_POPULATE_H
#define XFSKIT_MKFS_POPULATE_H

#include <stdint.h>
#include <sys/types.h>

#include <xfskit/build.h>
#include <xfskit/vec.h>

#include "mkfs.h"

/* Source kinds, decided by mkfs_populate_prepare(). */
enum pop_kind {
	POP_NONE = 0,
	POP_DIR,
	POP_PROTO,
	POP_TAR,
};

/* The metadata of one inode to build, whatever its source. */
struct pop_meta {
	uint32_t	mode;		/* type and permission bits */
	uint32_t	uid, gid;
	int64_t		atime_sec, mtime_sec, ctime_sec;
	uint32_t	atime_nsec, mtime_nsec, ctime_nsec;
	uint32_t	rdev_major, rdev_minor;
};

/* Extended attributes of one inode, in the builder's form. */
struct pop_xattrs {
	XK_VEC_OF(struct xk_bld_xattr);
};

/* One hard-linked inode: source identity -> inode built, links seen. */
struct pop_link {
	uint64_t	dev, ino;	/* key; dev == 0 && ino == 0: empty */
	uint64_t	xino;
	uint32_t	count;
};

struct pnode;
struct pop_wb;

struct pop_ctx {
	struct xk_mount	*mp;
	struct xk_bld	*b;
	const struct mkfs_populate *opt;
	int		quiet;
	/* Build time: now, or SOURCE_DATE_EPOCH. */
	int64_t		now_sec;
	uint32_t	now_nsec;
	int		sde;		/* SOURCE_DATE_EPOCH is set */
	/* Hard links: open addressing, power-of-two size. */
	struct pop_link	*links;
	size_t		links_used, links_size;
	/* Progress on a terminal. */
	int		tty;
	uint64_t	entries, bytes;
	int64_t		last_ms;
	int		progress_shown;
	/* The image itself, never copied into itself. */
	uint64_t	img_dev, img_ino;
	/* Protofile tree, parsed before formatting. */
	struct pnode	*proto_root;
	struct pop_tree	*proto_tree;
	/* Early write-back of the image (populate.c). */
	struct pop_wb	*wb;
};

/* populate.c */
void pop_error(const char *path, int err, const char *what);
int pop_inode_begin(struct pop_ctx *c, struct xk_bld_inode *ip, uint64_t ino,
		    const struct pop_meta *m);
/*
 * Add one xattr as Linux names it ("user.x", "trusted.x", "security.x",
 * "system.posix_acl_access" ...); the value is copied.  Returns 0, 1 when
 * the xattr has no XFS form and was skipped, or a negative errno with
 * the message printed.
 */
int pop_xattr_add(struct pop_ctx *c, struct pop_xattrs *xl, const char *path,
		  const char *name, const void *value, size_t len);
void pop_xattrs_reset(struct pop_xattrs *xl);
int pop_attrs_write(struct pop_ctx *c, struct xk_bld_inode *ip,
		    struct pop_xattrs *xl, const char *path);
/* Stream a regular file's data segments from fd. */
/* openat() of a source entry: no link followed, atime kept if we may. */
int pop_open_at(int dfd, const char *name, int flags);
/*
 * The next data segment of fd at or after *pos, widened to blocks of bs
 * bytes: 0 and [*start, *end), 1 when only a hole remains, or -errno.
 */
int pop_next_segment(int fd, uint64_t *pos, uint64_t size, uint64_t bs,
		     uint64_t *start, uint64_t *end);
int pop_file_fd(struct pop_ctx *c, struct xk_bld_inode *ip, int fd,
		uint64_t size, const char *path);
/* Write the type-specific part of a symlink, device, FIFO or socket. */
int pop_special(struct pop_ctx *c, struct xk_bld_inode *ip,
		const struct pop_meta *m, const char *target, const char *path);
int pop_inode_write(struct pop_ctx *c, struct xk_bld_inode *ip,
		    const char *path);
/* Look up (dev, ino); found: *xino set, count bumped, returns 1. */
int pop_link_find(struct pop_ctx *c, uint64_t dev, uint64_t ino,
		  uint64_t *xino);
int pop_link_add(struct pop_ctx *c, uint64_t dev, uint64_t ino,
		 uint64_t xino);
int pop_links_fix(struct pop_ctx *c);
void pop_progress(struct pop_ctx *c, uint64_t bytes);
uint8_t pop_ftype(uint32_t mode);
int pop_check_name(const char *path, const char *name, size_t len);

/* populate_dir.c */
int pop_from_dir(struct pop_ctx *c, const char *src);

/* proto.c */
int pop_proto_parse(struct pop_ctx *c, const char *path);
int pop_from_proto(struct pop_ctx *c);

/* tar.c */
int pop_from_tar(struct pop_ctx *c, const char *path);

/* populate_tree.c: an in-memory tree of names for protofiles and tars. */
struct pnode {
	char		*name;		/* NUL-terminated; "" for the root */
	size_t		namelen;
	struct pnode	*parent;
	struct pnode	**kids;
	size_t		nkids, kcap;
	struct pop_meta	meta;
	uint64_t	ino;		/* 0 until allocated */
	int		written;	/* inode written */
	struct pnode	*link;		/* hard link: the inode's node */
	char		*target;	/* symlink target */
	char		*src;		/* protofile: file to copy */
	struct pop_xattrs xattrs;	/* directories from tar */
};

struct pop_tree;
struct pop_tree *pop_tree_new(void);
void pop_tree_free(struct pop_tree *t);
struct pnode *pop_tree_root(struct pop_tree *t);
/* Child of parent by name; NULL when absent. */
struct pnode *pop_tree_lookup(struct pop_tree *t, struct pnode *parent,
			      const char *name, size_t len);
/* Add a child (name copied); NULL on ENOMEM. */
struct pnode *pop_tree_add(struct pop_tree *t, struct pnode *parent,
			   const char *name, size_t len);
/*
 * Write every directory of the tree (sorted entries), allocating the
 * inodes not yet allocated, and writing through leaf() the non-directory
 * inodes not yet written.
 */
typedef int (*pop_leaf_fn)(struct pop_ctx *c, struct pnode *n,
			   const char *path);
int pop_tree_write(struct pop_ctx *c, struct pop_tree *t, pop_leaf_fn leaf);
/* The path of a node, for messages (static buffer). */
const char *pop_node_path(const struct pnode *n, char *buf, size_t len);

#endif /* XFSKIT_MKFS_POPULATE_H */
