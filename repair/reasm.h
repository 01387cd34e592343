/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Lost directories rebuilt from the device scan's blocks: reasm.c finds
 * and plans them (a checker), reasm_build.c writes them (an applier),
 * reasm_state.c holds what both read.  Lost file block maps from the
 * scan's bmbt leaves: reasm_fork.c plans them, rebuild_fork.c writes
 * them.
 */
#ifndef XFSKIT_REPAIR_REASM_H
#define XFSKIT_REPAIR_REASM_H

#include <xfskit/build.h>
#include <xfskit/scan.h>
#include <xfskit/vec.h>

struct repair_ctx;

/* A directory to write from the scan's blocks. */
struct reasm_dir {
	uint64_t		ino;
	uint64_t		parent;		/* the directory naming it */
	struct xk_bld_dirent	*ents;		/* names malloc'd */
	/* While collecting: the LSN of each entry's block. */
	uint64_t		*lsns;
	size_t			n, cap;
	size_t			nblocks;	/* data blocks read */
	size_t			nfound;		/* every block found for it */
	size_t			dropped;	/* entries left out */
	/* Entries naming metadata inodes, left out (the metadata tree's). */
	size_t			meta;
	uint32_t		nsubdirs;
	/*
	 * The inode is in use but its block map is lost: dirfix.c rewrites
	 * it from ents (reasm_find) and what its map still reaches, keeping
	 * the inode's core.
	 */
	int			fork_lost;
	/* Of those, one whose own map its bmbt leaves give back. */
	int			from_leaves;
	/*
	 * No entry names it: its blocks alone say it was a directory.  It
	 * is written under the root and goes to /lost+found as an orphan,
	 * its children with it, named.
	 */
	int			unnamed;
};

/*
 * A fork to write from the bmbt leaves the scan found naming its inode
 * (reasm_fork.c): a regular file's or a directory's data fork, or an
 * attr fork, in place of clearing the inode or dropping the fork.
 */
struct reasm_fork {
	uint64_t		ino;
	uint8_t			attr;		/* the attr fork */
	uint8_t			dir;		/* a directory's */
	/* A directory's: it maps every directory block found for it. */
	uint8_t			whole;
	struct xk_bmbt_rec	*recs;		/* by file offset */
	uint64_t		*lsns;		/* each one's leaf's LSN */
	uint64_t		n;
	uint64_t		blocks;		/* data blocks they map */
	uint64_t		other;		/* attr fork blocks */
	uint64_t		*old;		/* its bmbt blocks found */
	uint64_t		nold;
	size_t			leaves;		/* leaves taken */
	size_t			dropped;	/* records left out */
	size_t			refused;	/* leaves of no one fork */
	size_t			adopted;	/* naming another owner */
	size_t			stale;		/* older copies left out */
	size_t			unreused;	/* old blocks a record maps */
	/* File ranges [start, end) of leaves not found (end: UINT64_MAX). */
	uint64_t		(*holes)[2];
	size_t			nholes;
};

/* One claim list's furthest ends so far, by position (reasm_index.c). */
struct reasm_ivl {
	XK_VEC_OF(uint32_t)	far;
};

enum { REASM_IVL_USED, REASM_IVL_FREE, REASM_IVL_RMAP, REASM_IVL_REFC,
       REASM_IVL_NR };

struct reasm_ag_index {
	struct reasm_ivl	ivl[REASM_IVL_NR];
};

/* The scan, kept for the run; the directories this pass plans. */
struct reasm_state {
	int			scanned;	/* res holds the scan */
	struct xk_scan		res;
	struct reasm_dir	*dirs;
	size_t			ndirs;
	/* The pass's candidates so far, each looked at once. */
	XK_VEC_OF(uint64_t)	tried;
	/* Rounds look for directories no entry names (find_unnamed). */
	int			unnamed;
	/* The forks whose map this pass plans from the scan. */
	struct reasm_fork	*forks;
	size_t			nforks;
	/*
	 * chunkfind.c: what the disk said of each inode the scan's blocks
	 * name (ino << 2 | state), as the first pass read it, before the
	 * repair wrote anything; sorted once that pass is done with it.
	 * Later passes judge by it, not by slots the repair itself wrote
	 * (a zeroed cluster's slots become valid free inodes).
	 */
	XK_VEC_OF(uint64_t)	judged;
	int			judged_sorted;
	/* The AGs' claim lists indexed for this pass (reasm_index.c). */
	struct reasm_ag_index	*agx;
	uint32_t		nagx;
	int			index_pass;
};

/*
 * In a check pass, before the connectivity phase: find the directories
 * whose inode is lost but which an entry names, scan the device when
 * there are any (once per run; -o scan=), and add each one the scan's
 * blocks can give back to the pass's lists; in repair, plan its rewrite
 * in place of the clear.  Under -n, say what would be rebuilt.
 * 0, or an operational error (recorded).
 */
XK_MUST_CHECK int reasm_dirs(struct repair_ctx *rc);
/* The directory planned from the scan for ino, or NULL. */
const struct reasm_dir *reasm_find(const struct repair_ctx *rc,
				   uint64_t ino);
/* Rewrites planned by this pass's reasm_dirs. */
int reasm_pending(const struct repair_ctx *rc);
/* In the AG rebuild session: write the planned directories. */
XK_MUST_CHECK int reasm_build(struct repair_ctx *rc, struct xk_bld *b);
void reasm_dir_free(struct reasm_dir *d);
void reasm_dirs_free(struct reasm_state *st);
/*
 * After reasm_dirs: regular files whose bmbt failed, without a usable
 * rmapbt: scan the device when there are any (once per run), and plan
 * each one's map from the bmbt leaves that name it, in place of the
 * clear.  Under -n, say what would be rebuilt.  0, or an operational
 * error (recorded).
 */
XK_MUST_CHECK int reasm_forks(struct repair_ctx *rc);
/* The map of one fork planned from the scan for ino, or NULL. */
const struct reasm_fork *reasm_fork_find(const struct repair_ctx *rc,
					 uint64_t ino, int whichfork);
/*
 * In reasm_dirs, once scanned: a directory in use whose bmbt is lost
 * gets its own map back from its bmbt leaves when they map every
 * directory block found for it (planned; *taken 1), else the caller
 * rewrites it from the blocks.  0 or an operational error.
 */
XK_MUST_CHECK int reasm_dir_fork(struct repair_ctx *rc, uint64_t ino,
				 int *taken);
void reasm_forks_free(struct reasm_state *st);
/* -n: what a fork from the scan would be (action_would). */
void reasm_fork_would(struct repair_ctx *rc, const struct reasm_fork *f);
/* -n: one thing the scan would rebuild (action_would), printf-style. */
void reasm_would(struct repair_ctx *rc, const char *what, uint64_t ino,
		 const char *path, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/*
 * "; a leaf not found: file blocks a-b, ...; n records left out; n leaf
 * blocks refused ...; n leaf blocks naming another owner taken back".
 */
void reasm_fork_losses(const struct reasm_fork *f, char *buf, size_t len);
/* Shared by reasm.c and reasm_fork.c. */
XK_MUST_CHECK int reasm_scan(struct repair_ctx *rc, const char *why);
/*
 * The device scan alone, once per run (rc->reasm made if need be), for
 * a phase before the pass's claims are complete (chunkfind.c); 0 or an
 * operational error (recorded).
 */
XK_MUST_CHECK int reasm_scan_device(struct repair_ctx *rc, const char *why);
/*
 * blocks from daddr, for owner as kind (0 or XK_RMAP_OFF_BMBT_BLOCK);
 * shared: file data that may be reflinked.
 */
int reasm_block_takeable(const struct repair_ctx *rc, uint64_t daddr,
			 uint64_t blocks, uint64_t owner, uint64_t kind,
			 int shared);
/*
 * Whether len blocks from fsb are shared data, as the refcountbt says,
 * with room for a and b (a == b: one file) beside the others mapping
 * them.
 */
int reasm_shared(const struct repair_ctx *rc, uint64_t fsb, uint64_t len,
		 uint64_t a, uint64_t b);
/*
 * A block's LSN as the scan's plans order stale copies by: 0 (unknown)
 * for none, one no log cycle can reach, or one past the log's head (a
 * damaged field must not make a stale copy the newest).
 */
uint64_t reasm_lsn(const struct repair_ctx *rc, uint64_t lsn);
/* Whether owner's own (damaged) map reached the block at daddr as kind. */
int reasm_block_own(const struct repair_ctx *rc, uint64_t daddr,
		    uint64_t owner, uint64_t kind);
void reasm_unplan(struct repair_ctx *rc, uint64_t ino, uint32_t what);
/*
 * The pass's claim lists (used, free, rmap, refcount) sorted by start
 * and indexed, once per pass, before reasm_block_takeable; 0 or -ENOMEM.
 */
XK_MUST_CHECK int reasm_index(struct repair_ctx *rc);
void reasm_index_free(struct reasm_state *st);
/*
 * The claims of c (list which of AG agno) that may overlap [start, end):
 * i from reasm_ivl_first(.., end) down, while reasm_ivl_reaches(.., i,
 * start).  Without an index for this pass: every claim.
 */
size_t reasm_ivl_first(const struct repair_ctx *rc, uint32_t agno, int which,
		       const struct claims *c, uint64_t end);
int reasm_ivl_reaches(const struct repair_ctx *rc, uint32_t agno, int which,
		      const struct claims *c, size_t i, uint64_t start);
/* Free the scan and the plans (end of the run). */
void reasm_free(struct repair_ctx *rc);

#endif /* XFSKIT_REPAIR_REASM_H */
