/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one reader that turns an inode fork into its list of mappings:
 * the extent list held in the inode, or the leaves of the bmbt rooted in
 * the fork, walked with the btree engine.  Everything read from disk is
 * bounded before use (extent count against the fork size, the in-inode
 * root against the fork, every bmbt block through its verifier, a block
 * reached twice stops that branch), so a hostile fork can neither read
 * out of bounds nor loop.
 *
 * The answer is all or nothing: 0 with the complete list, or an error
 * with an empty list.  Only a caller that asks for salvage (repair and
 * db, which must look at damaged forks) gets what could be read of a
 * damaged fork, and then still gets XK_ECORRUPT back, the map marked
 * partial and every problem recorded where it was met.  The CoW fork
 * lives only in memory and has nothing on disk to read.
 */
#ifndef XFSKIT_FORK_H
#define XFSKIT_FORK_H

#include <stdint.h>

#include <xfskit/buf.h>
#include <xfskit/mount.h>
#include <xfskit/format/btree.h>
#include <xfskit/format/dinode.h>

enum xk_fork_flags {
	/*
	 * A damaged fork still yields what could be read: the call
	 * returns XK_ECORRUPT, map->partial is set and map->prob lists
	 * every problem.  Without it a damaged fork empties the map.
	 */
	XK_FORK_SALVAGE		= 1u << 0,
	/*
	 * Check each mapping against the geometry: 1. at least one block;
	 * 2. it ends at or below the largest file offset; 3. its blocks
	 * lie inside one AG; 4. it starts at or after the end of the
	 * previous one.  A mapping breaking them is a problem and is left
	 * out of the list.  (Whether a bmbt holds as many records as the
	 * inode's extent count says is the caller's question: the count
	 * of the list answers it.)
	 */
	XK_FORK_CHECK		= 1u << 1,
	/* Record the bmbt blocks (map->blk) in walk order. */
	XK_FORK_BLOCKS		= 1u << 2,
	/*
	 * A bmbt block still dirty in the cache (built earlier in this
	 * session, checksummed when written) may fail its CRC alone.
	 */
	XK_FORK_DIRTY_CRC_OK	= 1u << 3,
};

/* One bmbt block of the fork. */
struct xk_fork_block {
	uint64_t	fsb;
	uint16_t	level;
	uint16_t	numrecs;	/* as the header says */
	int		error;		/* the verifier's verdict, 0 if good */
};

/* A problem met while reading, and how many mappings came before it. */
struct xk_fork_problem {
	uint64_t	at;
	struct xk_fail	fail;
};

struct xk_fork_map {
	struct xk_bmbt_irec	*ext;	/* file offset order */
	uint64_t		next;
	uint64_t		nblocks;	/* blocks the mappings cover */
	struct xk_fork_block	*blk;	/* with XK_FORK_BLOCKS */
	uint64_t		nblk;
	struct xk_fork_problem	*prob;	/* with XK_FORK_SALVAGE */
	uint64_t		nprob;
	/* The in-inode bmbt root (btree format), as its header says. */
	uint16_t		root_level, root_numrecs;
	/* Set with XK_FORK_SALVAGE when the fork is damaged. */
	int			partial;
	/* The first problem met (valid when the call returned XK_ECORRUPT). */
	struct xk_fail		first;
	/* Capacities, private to the reader. */
	uint64_t		ext_cap, blk_cap, prob_cap;
};

/*
 * Read fork `whichfork` (XK_DATA_FORK or XK_ATTR_FORK) of inode ino,
 * whose raw inode is dip, into map (zeroed or reused from an earlier
 * call: its arrays are kept and refilled).  Local and device forks, and
 * an attr fork the inode does not have, map nothing.  Returns 0 with the
 * complete list; XK_ECORRUPT when the fork is damaged (map empty, or
 * partial with XK_FORK_SALVAGE); another negative errno (-ENOMEM, a
 * read's own error) with the map empty.
 */
int xk_fork_read(struct xk_mount *mp, uint64_t ino,
		 const struct xk_dinode *dip, int whichfork,
		 unsigned int flags, struct xk_fork_map *map)
	__attribute__((warn_unused_result));

void xk_fork_map_free(struct xk_fork_map *map);

/* The mapping holding file block off, or NULL (a hole). */
const struct xk_bmbt_irec *xk_fork_map_lookup(const struct xk_fork_map *map,
					      uint64_t off);

#endif /* XFSKIT_FORK_H */
