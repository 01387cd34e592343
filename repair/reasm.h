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
	size_t			n, cap;
	size_t			nblocks;	/* data blocks read */
	size_t			nfound;		/* every block found for it */
	size_t			dropped;	/* entries left out */
	uint32_t		nsubdirs;
	/*
	 * The inode is in use but its block map is lost: dirfix.c rewrites
	 * it from ents (reasm_find) and what its map still reaches, keeping
	 * the inode's core.
	 */
	int			fork_lost;
	/*
	 * No entry names it: its blocks alone say it was a directory.  It
	 * is written under the root and goes to /lost+found as an orphan,
	 * its children with it, named.
	 */
	int			unnamed;
};

/*
 * A regular file's data fork to write from the bmbt leaves the scan
 * found naming it (reasm_fork.c), in place of clearing the inode.
 */
struct reasm_fork {
	uint64_t		ino;
	struct xk_bmbt_rec	*recs;		/* by file offset */
	uint64_t		n;
	uint64_t		blocks;		/* data blocks they map */
	uint64_t		other;		/* attr fork blocks */
	uint64_t		*old;		/* its bmbt blocks found */
	uint64_t		nold;
	size_t			leaves;		/* leaves taken */
	size_t			dropped;	/* records left out */
	/* File ranges [start, end) of leaves not found (end: UINT64_MAX). */
	uint64_t		(*holes)[2];
	size_t			nholes;
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
	/* The files whose block map this pass plans from the scan. */
	struct reasm_fork	*forks;
	size_t			nforks;
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
/* The map planned from the scan for ino, or NULL. */
const struct reasm_fork *reasm_fork_find(const struct repair_ctx *rc,
					 uint64_t ino);
void reasm_forks_free(struct reasm_state *st);
/* "; a leaf not found: file blocks a-b, ...; n records left out". */
void reasm_fork_losses(const struct reasm_fork *f, char *buf, size_t len);
/* Shared by reasm.c and reasm_fork.c. */
XK_MUST_CHECK int reasm_scan(struct repair_ctx *rc, const char *why);
/*
 * blocks from daddr, for owner as kind (0 or XK_RMAP_OFF_BMBT_BLOCK);
 * shared: file data that may be reflinked.
 */
int reasm_block_takeable(const struct repair_ctx *rc, uint64_t daddr,
			 uint64_t blocks, uint64_t owner, uint64_t kind,
			 int shared);
void reasm_unplan(struct repair_ctx *rc, uint64_t ino, uint32_t what);
/* Free the scan and the plans (end of the run). */
void reasm_free(struct repair_ctx *rc);

#endif /* XFSKIT_REPAIR_REASM_H */
