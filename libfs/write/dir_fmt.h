/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Laying out a directory without touching a device: which format the
 * kernel would hold a set of entries in (short form, block, leaf, node),
 * where every entry lands, and the bytes of every block.  dir.c turns a
 * plan into allocations and buffers; the unit tests drive the same
 * functions in memory and run the libfs verifiers over what they make.
 *
 * The plan follows the kernel's conversions when entries are added one
 * by one in the caller's order and never removed:
 *  - short form while the whole short form fits the data fork space
 *    (and would fit one directory block);
 *  - block while entries, leaf array and tail fit one directory block;
 *  - leaf while the one leaf block holds every hash entry and the bests
 *    of every data block;
 *  - node (LEAFN leaves under a dabtree when more than one, and free
 *    index blocks) beyond that.
 * Entries land where the kernel puts them when they are added in the
 * caller's order: the first data block with room in leaf form, the last
 * one with room in node form, a new one when none has room.  Each entry
 * goes to the start of the block's unused region, so every data block
 * is packed with at most one unused region, at its end (block 0 starts
 * with "." and "..").
 *
 * Directory block numbers ("db") count directory blocks from the start
 * of the fork; dabtree links and node pointers are fork offsets in
 * filesystem blocks ("da"), db << (dblog - fsblog).
 */
#ifndef XFSKIT_BUILD_DIR_FMT_H
#define XFSKIT_BUILD_DIR_FMT_H

#include <stddef.h>
#include <stdint.h>

#include <xfskit/build.h>
#include <xfskit/format/dir.h>

struct dir_geo {
	uint32_t	blksize;	/* directory block bytes */
	unsigned int	dblog;		/* log2(blksize) */
	unsigned int	fsblog;		/* log2(filesystem block) */
	int		has_ftype;
};

enum dir_form {
	DIR_FORM_SF = 1,
	DIR_FORM_BLOCK,
	DIR_FORM_LEAF,
	DIR_FORM_NODE,
};

/* Pseudo entry indexes for the two entries every block directory has. */
#define DIR_IDX_DOT	UINT32_MAX
#define DIR_IDX_DOTDOT	(UINT32_MAX - 1)

/* One entry of the hash index. */
struct dir_ref {
	uint32_t	hash;
	uint32_t	addr;		/* dataptr */
	uint32_t	idx;		/* caller's index or DIR_IDX_* */
};

/* A leaf or node block: children [first, first + count) one level down. */
struct dir_blk {
	uint32_t	db;		/* its directory block number */
	uint32_t	first;
	uint32_t	count;
	uint32_t	hash;		/* highest hash below it */
};

struct dir_plan {
	struct dir_geo	g;
	enum dir_form	form;
	const struct xk_bld_dirent *ents;
	size_t		n;
	uint64_t	self, parent;
	/* Short form. */
	uint32_t	sf_size;
	uint8_t		sf_i8count;
	/*
	 * Data blocks: block i holds entries border[bstart[i]] ..
	 * border[bstart[i+1]-1] of ents, in address order (block 0 after
	 * "." and ".."); dfree[i] is the length of the unused region at
	 * its end (0: none), its bestfree[0] and bests[i].  In block form
	 * there is one "data block", the data area.
	 */
	uint32_t	ndata;
	uint32_t	*bstart;
	uint32_t	*border;
	uint16_t	*dfree;
	/* The hash index: n + 2 entries in hash order. */
	struct dir_ref	*refs;
	uint32_t	nrefs;
	/*
	 * Node form: the leaves in hash order (children are refs), then the
	 * node levels, level[0] over the leaves, level[nlevels - 1] the root
	 * (one block).  Leaf form: leaves[0] is the LEAF1 block.
	 */
	struct dir_blk	*leaves;
	uint32_t	nleaves;
	struct dir_blk	*level[XK_DA_NODE_MAXDEPTH];
	uint32_t	nlevel[XK_DA_NODE_MAXDEPTH];
	uint32_t	nlevels;
	uint32_t	nleafblks;	/* directory blocks in the leaf space */
	uint32_t	nfree;		/* free index blocks */
	uint64_t	size;		/* di_size */
};

/*
 * Check the entries and lay them out.  sf_space: bytes the data fork
 * has in the inode.  Errors: -EINVAL (empty name, '/' or NUL in it,
 * "." or "..", bad file type), -EEXIST (a name twice), -EFBIG (more
 * than a directory can address), -ENOMEM.
 */
int dir_plan_make(struct dir_plan *pl, const struct dir_geo *g,
		  uint64_t self, uint64_t parent,
		  const struct xk_bld_dirent *ents, size_t n,
		  uint32_t sf_space);
void dir_plan_free(struct dir_plan *pl);

/* Short-form bytes (pl->sf_size of them) into out, in the given order. */
void dir_sf_fill(const struct dir_plan *pl, uint8_t *out);

/* Identity every v5 directory block carries. */
struct dir_blkid {
	uint64_t	ino;
	uint64_t	daddr;		/* the block's own address */
	const uint8_t	*uuid;		/* 16 bytes: sb meta UUID */
};

/*
 * Block fillers; out is pl->g.blksize bytes, zeroed by the caller.  The
 * CRC is left zero (the buffer cache stamps it on write).
 */
void dir_block_fill(const struct dir_plan *pl, const struct dir_blkid *id,
		    uint8_t *out);
void dir_data_fill(const struct dir_plan *pl, uint32_t db,
		   const struct dir_blkid *id, uint8_t *out);
void dir_leaf1_fill(const struct dir_plan *pl, const struct dir_blkid *id,
		    uint8_t *out);
void dir_leafn_fill(const struct dir_plan *pl, uint32_t i,
		    const struct dir_blkid *id, uint8_t *out);
/* Node block i of level lvl (0 = just above the leaves). */
void dir_node_fill(const struct dir_plan *pl, uint32_t lvl, uint32_t i,
		   const struct dir_blkid *id, uint8_t *out);
/* Free index block i (covering data blocks from i * max bests). */
void dir_free_fill(const struct dir_plan *pl, uint32_t i,
		   const struct dir_blkid *id, uint8_t *out);

/* Fork offset in filesystem blocks of directory block db. */
static inline uint64_t
dir_db_to_da(const struct dir_geo *g, uint32_t db)
{
	return (uint64_t)db << (g->dblog - g->fsblog);
}

#endif /* XFSKIT_BUILD_DIR_FMT_H */
