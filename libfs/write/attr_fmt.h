/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Laying out an inode's extended attributes, without touching a device:
 * which format the kernel would hold them in (short form, one leaf, or a
 * dabtree of leaves), which attr-fork block every leaf, node and remote
 * value lands in, and the bytes of each of those blocks.  attr.c turns
 * the plan into allocations and buffers; the unit tests drive the same
 * functions in memory and run the block verifiers over what they make.
 *
 * Attr-fork block layout of a plan:
 *   leaf form: block 0 the leaf, then the remote values;
 *   node form: block 0 the root node, then the other node blocks (level
 *   by level from the top, left to right), then the leaves in hash
 *   order, then the remote values.
 * Remote values and a leaf's name records follow the caller's order of
 * the attributes, as the kernel's would after adding them in that order:
 * it allocates each new name record below the previous one and each
 * remote value after the fork's last block.
 */
#ifndef XFSKIT_BUILD_ATTR_FMT_H
#define XFSKIT_BUILD_ATTR_FMT_H

#include <stddef.h>
#include <stdint.h>

#include <xfskit/build.h>
#include <xfskit/format/attr.h>

enum attr_form {
	ATTR_FORM_NONE = 0,	/* no attributes: no attr fork */
	ATTR_FORM_SF,		/* short form in the inode */
	ATTR_FORM_LEAF,		/* one leaf block */
	ATTR_FORM_NODE,		/* dabtree: nodes over several leaves */
};

/* One attribute, in hash order in the plan. */
struct attr_item {
	const struct xk_bld_xattr *xa;
	uint32_t	hash;
	uint32_t	entsize;	/* bytes of its leaf name record */
	uint32_t	valueblk;	/* first remote block; 0 when local */
	uint32_t	rmtblks;	/* remote blocks; 0 when local */
	uint32_t	idx;		/* position in the caller's array */
	uint32_t	nameidx;	/* its name record's leaf offset */
	int		local;
};

/* A run of children (items for a leaf, blocks for a node). */
struct attr_blk {
	uint32_t	lblk;		/* its attr-fork block */
	uint32_t	first;		/* first child index */
	uint32_t	count;		/* children */
	uint32_t	hash;		/* highest hash below it */
};

struct attr_plan {
	uint32_t	blocksize;
	enum attr_form	form;
	size_t		n;
	struct attr_item *items;	/* hash order */
	uint32_t	sf_size;	/* short-form bytes, when it fits */
	/* Leaves, in hash order (one for the leaf form). */
	struct attr_blk	*leaves;
	uint32_t	nleaves;
	/*
	 * Node levels: level[0] sits on the leaves, level[nlevels - 1] is
	 * the root (one block).  A level's children are the blocks of the
	 * level below (or the leaves for level[0]).
	 */
	struct attr_blk	*level[XK_DA_NODE_MAXDEPTH];
	uint32_t	nlevel[XK_DA_NODE_MAXDEPTH];
	uint32_t	nlevels;
	uint32_t	rmt_first;	/* first remote value block */
	uint32_t	nblocks;	/* every attr-fork block */
};

/*
 * Check the attributes and lay them out.  sf_space is the number of bytes
 * the attr fork may have in the inode (0: short form not possible).
 * Errors: -EINVAL (bad name, flags), -E2BIG (value over 64 KiB),
 * -EEXIST (a name twice in one namespace), -EFBIG (deeper than a dabtree
 * may be), -ENOMEM.
 */
int attr_plan_make(struct attr_plan *pl, uint32_t blocksize,
		   uint32_t sf_space, const struct xk_bld_xattr *xa,
		   size_t n);
void attr_plan_free(struct attr_plan *pl);
/*
 * Whether one attribute can be laid out (attr_fmt.c lists the rules):
 * 0, or -EINVAL / -E2BIG.
 */
int attr_xattr_check(const struct xk_bld_xattr *x);
/* Whether two attributes clash: one name in one namespace (and for
 * parent pointers one value). */
int attr_same_name(const struct xk_bld_xattr *a,
		   const struct xk_bld_xattr *b);

/* Short-form bytes of the list, or 0 when some attribute cannot be. */
uint32_t attr_sf_bytes(const struct xk_bld_xattr *xa, size_t n);
/* The short-form bytes (pl->sf_size of them) into out, in input order. */
void attr_sf_fill(const struct xk_bld_xattr *xa, size_t n, uint8_t *out);

/* Identity every v5 attr block carries. */
struct attr_blkid {
	uint64_t	ino;
	uint64_t	daddr;		/* the block's own address */
	const uint8_t	*uuid;		/* 16 bytes: sb meta UUID */
};

/* Leaf i of the plan (pl->blocksize bytes, zeroed by the caller). */
void attr_leaf_fill(const struct attr_plan *pl, uint32_t i,
		    const struct attr_blkid *id, uint8_t *out);
/* Node block i of level lvl (0 = just above the leaves). */
void attr_node_fill(const struct attr_plan *pl, uint32_t lvl, uint32_t i,
		    const struct attr_blkid *id, uint8_t *out);
/*
 * Piece k (0-based) of item it's remote value: one filesystem block with
 * its header; returns the value bytes it carries.
 */
uint32_t attr_rmt_fill(const struct attr_plan *pl, const struct attr_item *it,
		       uint32_t k, const struct attr_blkid *id, uint8_t *out);

/*
 * attr.c: xk_bld_attrs with the room the short form may take given by
 * the caller (an existing inode keeps its fork offset); ip->attr must
 * be empty.  An empty list leaves it empty.  With keep the blocks stay
 * dirty in the cache instead of being written at once.
 */
int bld_attrs_space(struct xk_bld *b, struct xk_bld_inode *ip,
		    const struct xk_bld_xattr *xa, size_t n,
		    uint32_t sf_space, int keep);

#endif /* XFSKIT_BUILD_ATTR_FMT_H */
