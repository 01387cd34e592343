/* SPDX-License-Identifier: GPL-2.0-or-later */
/* State shared by the phases of xfskit-repair. */
#ifndef XFSKIT_REPAIR_H
#define XFSKIT_REPAIR_H

#include <stdio.h>
#include <stdlib.h>

#include <xfskit/libfs.h>

/* Exit codes (documented in xfskit-repair(8)). */
#define REPAIR_EXIT_CLEAN	0
#define REPAIR_EXIT_CORRUPT	1
#define REPAIR_EXIT_LOG		2	/* dirty log that must be mounted */
#define REPAIR_EXIT_USAGE	3
#define REPAIR_EXIT_ERROR	4

/* Every kind of finding, one line each in problem.c's table. */
enum problem {
	PR_SB_PRIMARY_BAD,
	PR_SB_SECONDARY_BAD,
	PR_SB_SECONDARY_DIFFERS,
	PR_AGF_BAD,
	PR_AGI_BAD,
	PR_AGFL_BAD,
	PR_BTREE_BAD,
	PR_AGF_COUNTER,
	PR_AGI_COUNTER,
	PR_CNTBT_MISMATCH,
	PR_FINOBT_MISMATCH,
	PR_INODE_BAD,
	PR_INODE_STATE,
	PR_FORK_BAD,
	PR_DIR_BAD,
	PR_ATTR_BAD,
	PR_SYMLINK_BAD,
	PR_SPACE_CONFLICT,
	PR_SPACE_LOST,
	PR_RMAP_MISMATCH,
	PR_REFCOUNT_MISMATCH,
	PR_NLINK,
	PR_DISCONNECTED,
	PR_SB_COUNTER,
	PR_UNLINKED,
	PR_LOG_DIRTY,
	PR_NR
};

/*
 * A claim on AG space: what the scan saw using agbno..agbno+len-1.  The
 * owner uses the rmap encoding: an inode number, or an XK_RMAP_OWN_*
 * value; offset carries the file offset and the rmap fork/bmbt flags.
 */
struct claim {
	uint32_t	agbno;
	uint32_t	len;
	uint64_t	owner;
	uint64_t	offset;
};

struct claims {
	struct claim	*v;
	size_t		n, cap;
};

/* What the scan learned about one AG. */
struct ag_scan {
	struct claims	used;		/* observed ownership */
	struct claims	freesp;		/* bnobt records (owner unused) */
	struct claims	cntsp;		/* cntbt records */
	struct claims	rmaps;		/* rmapbt records */
	struct claims	refcs;		/* refcountbt: owner = refcount */
	struct xk_inobt_rec *chunks;	/* inobt records, in order */
	size_t		nchunks, capchunks;
	struct xk_inobt_rec *fchunks;	/* finobt records */
	size_t		nfchunks, capfchunks;
	int		agf_ok, agi_ok;	/* headers usable for cross-checks */
	uint32_t	agf_freeblks, agf_longest, agf_btreeblks;
	uint32_t	agf_rmap_blocks, agf_refc_blocks, agf_flcount;
	uint32_t	agi_count, agi_freecount, agi_iblocks, agi_fblocks;
	uint32_t	agfl_live;	/* live AGFL slots seen */
	uint64_t	tree_blocks[XK_BT_NR];
	int		trees_ok[XK_BT_NR];
};

/* Per-inode facts gathered for the link-count and connectivity pass. */
struct inode_info {
	uint64_t	ino;
	uint32_t	nlink;		/* as the inode says */
	uint32_t	refs;		/* directory entries naming it */
	uint64_t	parent;		/* a directory's ".." */
	uint16_t	mode;
	uint8_t		reached;
};

/* A directory entry (not "." or ".."): parent names child. */
struct edge {
	uint64_t	parent;
	uint64_t	child;
	uint8_t		ftype;		/* XK_DIR3_FT_*, or EDGE_NO_FTYPE */
};
#define EDGE_NO_FTYPE	0xff

struct repair_ctx {
	struct xk_mount	*mp;
	const char	*device;
	int		no_modify;
	int		verbose;
	int		json;		/* --json: one JSON document */
	int		progress;	/* show progress on stderr */
	int		from_secondary;	/* geometry came from a secondary */
	unsigned int	threads;	/* inode scan workers (-t) */
	int		zero_log;	/* -L */
	uint64_t	cache_bytes;	/* buffer cache budget per handle */
	FILE		*out;
	unsigned long	counts[PR_NR];
	unsigned long	nproblems;
	struct ag_scan	*ags;
	struct inode_info *inodes;	/* sorted by ino once collected */
	size_t		ninodes, capinodes;
	/* directory entries, for link counts and connectivity */
	struct edge	*edges;
	size_t		nedges, capedges;
};

/*
 * The one gate every finding passes: prints it, counts it, and says
 * whether the caller may fix it (never under -n).
 */
int fix_problem(struct repair_ctx *rc, enum problem pr,
		const struct xk_fail *f);
/* Progress on a terminal: "what n/total", overwritten in place. */
void progress(struct repair_ctx *rc, const char *what, uint64_t n,
	      uint64_t total);
/* JSON output: open and close the document. */
void json_begin(struct repair_ctx *rc);
void json_end(struct repair_ctx *rc, int status);
void json_string(FILE *out, const char *s);

/* An informational line: stdout, or stderr when stdout carries JSON. */
void info(struct repair_ctx *rc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Build a failure site and pass it to fix_problem. */
int report(struct repair_ctx *rc, enum problem pr, const char *structure,
	   int64_t agno, uint64_t ino, uint64_t daddr, const char *check,
	   const char *fmt, ...) __attribute__((format(printf, 8, 9)));

/* qsort that accepts an empty (NULL) array. */
static inline void
sort_v(void *base, size_t n, size_t size,
       int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* space.c */
int claims_add(struct claims *c, uint32_t agbno, uint32_t len,
	       uint64_t owner, uint64_t offset);
void claims_free(struct claims *c);
/* Claim fs blocks fsb..+len for an owner; reports out-of-range claims. */
void claim_fsb(struct repair_ctx *rc, uint64_t fsb, uint64_t len,
	       uint64_t owner, uint64_t offset);
void claim_agb(struct repair_ctx *rc, uint32_t agno, uint32_t agbno,
	       uint32_t len, uint64_t owner);

/* check.c: run every phase on rc->mp; findings go through fix_problem. */
int repair_check(struct repair_ctx *rc);

/* find_sb.c */
int find_secondary_sb(struct xk_dev *dev, const struct xk_sb *hint,
		      uint64_t limit, struct xk_sb *sb, uint32_t *agno);

int phase_log(struct repair_ctx *rc);
int phase_superblocks(struct repair_ctx *rc);
int phase_ag_headers(struct repair_ctx *rc);
int phase_inodes(struct repair_ctx *rc);
int phase_space(struct repair_ctx *rc);
int phase_links(struct repair_ctx *rc);
int phase_counters(struct repair_ctx *rc);

/* A fork's extents, in file offset order, as the inode scan found them. */
struct fork_map {
	struct xk_bmbt_irec	*v;
	size_t			n, cap;
};

/* dir.c: check a directory inode's contents and record its entries. */
void check_directory(struct repair_ctx *rc, uint64_t ino,
		     const struct xk_dinode *dip, const struct fork_map *map);
/* attr.c: check an inode's attr fork contents. */
void check_attr_fork(struct repair_ctx *rc, uint64_t ino,
		     const struct xk_dinode *dip, const struct fork_map *map);
/* Map a file block of a fork to a filesystem block; XK_NULLFSBLOCK if none. */
uint64_t fork_map_lookup(const struct fork_map *map, uint64_t fileoff,
			 uint64_t *contig);
/* Record a directory entry: parent names child. */
void note_edge(struct repair_ctx *rc, uint64_t parent, uint64_t child,
	       uint8_t ftype);
/* Record a directory's ".." entry. */
void note_dotdot(struct repair_ctx *rc, uint64_t dir, uint64_t parent);

/*
 * fork.c: map a fork to its extents (calls fn for each), checking the
 * extent list or bmbt; bmbt blocks are claimed.  Returns the number of
 * problems found, or a negative errno.
 */
struct fork_extent_fn {
	void	*ctx;
	int	(*fn)(void *ctx, const struct xk_bmbt_irec *irec);
};
int walk_fork(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip,
	      int fork, uint64_t *bmbt_blocks, const struct fork_extent_fn *cb);

#endif /* XFSKIT_REPAIR_H */
