/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An inode's extended attributes as a list in memory, read from its attr
 * fork in any format, edited, and written back whole by the builder
 * (libfs/write/attr_edit.c).  This is how logged attribute operations
 * left unfinished by a crash (ATTRI intents, parent pointers above all)
 * are finished offline: the fork's content ends up what the kernel's
 * recovery leaves, its layout (short form, leaf, node; block placement)
 * may differ.  Incomplete entries (an attribute the kernel was still
 * setting or removing) are not part of the content and are dropped.
 */
#ifndef XFSKIT_BUILD_ATTR_H
#define XFSKIT_BUILD_ATTR_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>

#include <xfskit/build.h>
#include <xfskit/format/dinode.h>
#include <xfskit/vec.h>

/*
 * Attributes in memory: xa[0..n-1] (a vector read as XK_VEC_OF reads
 * one, under the name xa), their names and values in bytes.  An
 * all-zero list is empty and stays on the heap; set vec.spill and
 * bytes.spill (one context) before the first add to let a large list
 * spill to temporary files (repair's salvage under -m).
 */
struct xk_attr_list {
	union {
		struct xk_vec	vec;
		struct {
			struct xk_bld_xattr *xa;
			size_t	n;
		};
	};
	struct xk_vec_pool bytes;
};

void xk_attr_list_free(struct xk_attr_list *l);
/* Append a copy of one attribute (flags: its namespace bits). */
XK_MUST_CHECK int xk_attr_list_add(struct xk_attr_list *l, uint8_t flags,
				   const uint8_t *name, uint8_t namelen,
				   const uint8_t *value, uint32_t valuelen);
/*
 * Remove every attribute of namespace flags named name; with value
 * non-NULL only those holding that value too (parent pointers).
 * Returns how many went.
 */
size_t xk_attr_list_remove(struct xk_attr_list *l, uint8_t flags,
			   const uint8_t *name, uint8_t namelen,
			   const uint8_t *value, uint32_t valuelen);

/*
 * Read every complete attribute of inode ino (dip: its verified core)
 * into l, in fork order.  Rules checked on the way: the fork mapping is
 * sane (in the filesystem, ordered, one AG per extent), every block
 * passes its verifier, leaf entries and name records lie inside their
 * block, remote values are mapped whole and their pieces add up, and
 * the dabtree is at most XK_DA_NODE_MAXDEPTH deep with no leaf reached
 * twice.  On failure *why says which rule broke.
 */
XK_MUST_CHECK int xk_attr_list_read(struct xk_mount *mp, uint64_t ino,
				    const struct xk_dinode *dip,
				    struct xk_attr_list *l, const char **why);

/*
 * One attribute the salvaging reader left out: in the short form
 * (lblk XK_ATTR_SALVAGE_SF) or in attr-fork block lblk, entry index;
 * its name when it could be read (else namelen 0), and why.  A block
 * of the fork that is no attr block at all has index
 * XK_ATTR_SALVAGE_BLOCK (what it held, if anything, is lost).
 */
#define XK_ATTR_SALVAGE_SF	UINT64_MAX
#define XK_ATTR_SALVAGE_BLOCK	UINT32_MAX
struct xk_attr_dropped {
	uint64_t	lblk;
	uint32_t	index;
	uint8_t		flags;		/* namespace bits */
	uint8_t		namelen;
	const uint8_t	*name;
	const char	*why;
};
typedef void (*xk_attr_drop_fn)(void *ctx, const struct xk_attr_dropped *d);

/*
 * Read into l every attribute of inode ino that is intact, one entry
 * at a time, for a fork xk_attr_list_read refuses (attr_salvage.c): a
 * short form is walked as far as its entries parse, bounded by its
 * size and count; every block of a leaf or node fork that is an attr
 * leaf (by its magic) gives the entries whose name record lies in the
 * block, whose hash is their name's, whose flags are known and whose
 * remote value reads whole and verifies.  The dabtree nodes and the
 * leaves' headers (count, used bytes, free map) are not trusted.  A
 * name found twice is kept once.  Each attribute left out is passed
 * to fn.  Fails (why says why) only when the fork's map cannot be
 * read, or on memory or I/O errors.
 */
XK_MUST_CHECK int xk_attr_list_salvage(struct xk_mount *mp, uint64_t ino,
				       const struct xk_dinode *dip,
				       struct xk_attr_list *l,
				       xk_attr_drop_fn fn, void *ctx,
				       const char **why);

/*
 * The mappings of one fork of inode ino (extents or btree format; any
 * other format has none), in file offset order, checked as the attr
 * reader checks them; *ext is malloc'd (free it).  Directories and
 * attribute forks have no unwritten extents, so one is an error.
 */
XK_MUST_CHECK int xk_fork_mappings(struct xk_mount *mp, uint64_t ino,
				   const struct xk_dinode *dip, int whichfork,
				   struct xk_bld_ext **ext, uint64_t *n,
				   const char **why);

/*
 * Replace inode ino's attr fork with one holding exactly l: the old
 * fork's blocks (and bmbt blocks) are freed, new ones allocated and
 * left dirty in the cache, the inode's fork offset, format, extent
 * count and block count updated.  The data fork keeps its place: an
 * inode keeps its fork offset, and one without an attr fork gets the
 * kernel's default offset (or what its data fork needs, up to room for
 * an attr bmbt root of 2 pointers; in a session set for late forks,
 * xk_bld_set_late_attr_forks, the offset the kernel gives a fork added
 * later), its data fork made to fit as the
 * kernel makes it: a btree root moves into the narrower fork, or the
 * mappings are laid out again (extents become a btree, a root gains a
 * level; XK_EUNSUPP in a session opened empty), a short-form directory
 * becomes a block, a local symlink target moves to remote blocks; a
 * realtime btree root (XK_EUNSUPP) is not resized.  On a
 * filesystem with parent pointers an emptied fork stays, empty, as
 * the kernel keeps it.  In a session opened empty (repair's,
 * xk_bld_open_empty) the caller leaves the old fork's blocks unclaimed,
 * so they are free already and not released again.  On failure *why
 * says what stopped it.
 */
XK_MUST_CHECK int xk_bld_attr_rewrite(struct xk_bld *b, uint64_t ino,
				      const struct xk_attr_list *l,
				      const char **why);

/*
 * How many blocks more than inode ino's attr fork has now the rewrite
 * of it to l would take (0 when no more): its leaves, nodes and remote
 * values, bmbt blocks not counted.  For the figure of a refusal when
 * xk_bld_attr_rewrite ran out of space; nothing is allocated.
 */
XK_MUST_CHECK int xk_attr_rewrite_growth(struct xk_bld *b, uint64_t ino,
					 const struct xk_attr_list *l,
					 uint64_t *grow, const char **why);

#endif /* XFSKIT_BUILD_ATTR_H */
