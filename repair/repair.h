/* SPDX-License-Identifier: GPL-2.0-or-later */
/* State shared by the phases of xfskit-repair. */
#ifndef XFSKIT_REPAIR_H
#define XFSKIT_REPAIR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <xfskit/libfs.h>

#include <xfskit/vec.h>

#include "plan.h"

/* Exit codes (xfskit-repair(8)), xfs_repair's where it has one. */
#define REPAIR_EXIT_CLEAN	0
#define REPAIR_EXIT_CORRUPT	1
#define REPAIR_EXIT_LOG		2	/* dirty log that must be mounted */
#define REPAIR_EXIT_USAGE	1	/* xfs_repair's: as a runtime error */
/*
 * An operational error (memory, I/O, a thread that could not start): the
 * run stopped.  xfs_repair's runtime error status, which -n shares with
 * "corruption found"; the message (and --json's "error") tells them apart.
 */
#define REPAIR_EXIT_ERROR	1
/* -n: nothing found, but parts were not checked (unsupported.h). */
#define REPAIR_EXIT_UNCHECKED	5
/*
 * xfs_repair's -e status: corruption was found and every finding was
 * repaired.  Only with -e; without it a full repair exits 0.
 */
#define REPAIR_EXIT_FIXED	4

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
	PR_QUOTA_INODE,
	PR_QUOTA_DQUOT,
	PR_QUOTA_COUNT,
	PR_QUOTA_FLAGS,
	PR_PPTR,
	PR_RT_INODE,
	PR_RT_BITMAP,
	PR_RT_SUMMARY,
	PR_SB_NEEDSREPAIR,
	PR_RT_SB,
	PR_LOG_BEHIND,
	PR_RT_BTREE,
	PR_NR
};

/*
 * Policy flags of a finding kind (problem.c's table; --json emits them
 * per finding and fsck.xfskit decides from them; doc/json.md).
 */
#define PF_PREEN	(1u << 0)	/* safe to fix when preening (fsck -p) */
#define PF_DESTRUCTIVE	(1u << 1)	/* the fix may lose data */
#define PF_UNFIXABLE	(1u << 2)	/* reported only, never fixed */
unsigned int problem_flags(enum problem pr);

/*
 * Every kind of change repair makes, one line each in action.c's table:
 * each change is reported through action_report, as a line of text and
 * an element of --json's "actions".
 */
enum action {
	ACT_LOG_REPLAYED,
	ACT_LOG_ZEROED,
	ACT_SB_WRITTEN,
	ACT_INODE_CLEARED,
	ACT_INODE_FIXED,
	ACT_NLINK_SET,
	ACT_FORK_REBUILT,
	ACT_FORK_TRIMMED,
	ACT_ATTR_DROPPED,
	ACT_ENTRY_REMOVED,
	ACT_DOTDOT_SET,
	ACT_DIR_REWRITTEN,
	ACT_LOSTFOUND_CREATED,
	ACT_MOVED,
	ACT_AG_REBUILT,
	ACT_QUOTA_FIXED,
	ACT_PPTR_SET,
	ACT_RT_REBUILT,
	ACT_ATTR_REWRITTEN,
	ACT_XATTR_DROPPED,
	ACT_DIR_REASSEMBLED,	/* a lost directory, from the device scan */
	ACT_NEEDSREPAIR_CLEARED,
	ACT_METADIR_REBUILT,	/* a new metadata tree root */
	ACT_LOG_FORMATTED,	/* in a cycle past the metadata's LSNs */
	ACT_RETURNED,		/* an orphan back by its parent pointer */
	ACT_NR
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

/*
 * A vector of claims (vec.h): v[0..n-1] are the claims, read and sorted
 * in place as an array; claims_add appends.  The big per-AG vectors are
 * tied to the run's spill context and may live in a temporary file.
 */
struct claims {
	union {
		struct xk_vec	vec;
		struct {
			struct claim	*v;
			size_t		n;
		};
	};
};
_Static_assert(offsetof(struct claims, v) == offsetof(struct xk_vec, v) &&
	       offsetof(struct claims, n) == offsetof(struct xk_vec, n),
	       "struct claims views a struct xk_vec");

/* What the scan learned about one AG. */
struct ag_scan {
	struct claims	used;		/* observed ownership */
	struct claims	freesp;		/* bnobt records (owner unused) */
	struct claims	cntsp;		/* cntbt records */
	struct claims	rmaps;		/* rmapbt records */
	struct claims	refcs;		/* refcountbt: owner = refcount */
	XK_VEC_OF(struct xk_inobt_rec) chunks;	/* inobt records, in order */
	XK_VEC_OF(struct xk_inobt_rec) fchunks;	/* finobt records */
	int		agf_ok, agi_ok;	/* headers usable for cross-checks */
	uint32_t	agf_freeblks, agf_longest, agf_btreeblks;
	uint32_t	agf_rmap_blocks, agf_refc_blocks, agf_flcount;
	uint32_t	agi_count, agi_freecount, agi_iblocks, agi_fblocks;
	uint32_t	agfl_live;	/* live AGFL slots seen */
	/*
	 * xfs_repair's words said "reset bad agf/agi" for this AG (its
	 * trees' blocks are then lost without a word of xfs_repair's), and
	 * whether xfs_repair reads no inobt here (the AGI past reading, or
	 * the AG skipped under -n): no root chunk found in it.
	 */
	uint8_t		xr_reset, xr_agi_lost;
	uint64_t	tree_blocks[XK_BT_NR];
	int		trees_ok[XK_BT_NR];
	/*
	 * For repair: per chunk, the inodes the scan found free (bit set)
	 * or in use, whatever the inobt says; chunks_synth when the chunk
	 * list came from the rmapbt because the inobt could not be read;
	 * chunks_lost when neither could give it (no rebuild then).
	 */
	uint64_t	*seen_free;
	int		chunks_synth, chunks_lost;
};

/* Per-inode facts gathered for the link-count and connectivity pass. */
struct inode_info {
	uint64_t	ino;
	uint32_t	nlink;		/* as the inode says */
	uint32_t	refs;		/* directory entries naming it */
	uint64_t	parent;		/* a directory's ".." */
	uint16_t	mode;
	uint8_t		reached;
	uint8_t		sfdir;		/* a short-form directory */
	uint8_t		meta;		/* in the metadata tree (metadir) */
	uint8_t		metatype;	/* XK_METAFILE_*, if meta */
	uint8_t		fork_lost:1;	/* its data fork is damaged */
	uint8_t		afork_lost:1;	/* its attr fork's map is damaged */
	/* Its content decided a clear: entries naming it name no inode. */
	uint8_t		clearing:1;
};

/* A realtime file's mapping: realtime blocks start..start+len-1. */
struct rt_claim {
	uint64_t	start;
	uint64_t	len;
	uint64_t	ino;
	uint64_t	off;		/* file offset, XK_RMAP_OFF_UNWRITTEN */
};

/* A directory entry (not "." or ".."): parent names child. */
struct edge {
	uint64_t	parent;
	uint64_t	child;
	uint8_t		ftype;		/* XK_DIR3_FT_*, or EDGE_NO_FTYPE */
};
#define EDGE_NO_FTYPE	0xff

/*
 * The run's options, as main() parsed them; the phases only read them.
 * A scan worker sets just the few it needs (phase_inodes.c).
 */
struct repair_opts {
	const char	*device;
	const char	*logdev;	/* -l: the external log's device */
	const char	*rtdev;		/* -r: the realtime device */
	int		no_modify;
	int		verbose;
	/*
	 * --report, -v or XFSKIT_REPAIR_REPORT: our own lines (findings in
	 * our words, changes, later passes, the summary) beside xfs_repair's;
	 * without it a run prints xfs_repair's lines alone where it has them.
	 */
	int		report;
	int		json;		/* --json: one JSON document */
	int		progress;	/* show progress on stderr */
	int		progress_fd;	/* --progress-fd: e2fsck -C lines, or -1 */
	unsigned int	threads;	/* inode scan workers (-o threads=) */
	unsigned int	report_secs;	/* -t: a progress line every N s */
	int		no_prefetch;	/* -P: no readahead */
	int		zero_log;	/* -L */
	int		exit_fixed;	/* -e: exit 4 after repairs */
	uint64_t	mem_cap_mb;	/* -m, 0: no cap */
	const char	*spill_dir;	/* --spill-dir, else $TMPDIR, /var/tmp */
	int		direct;		/* --direct: O_DIRECT I/O */
	int		scan;		/* -o scan=: REPAIR_SCAN_* */
};

/* -o scan=: when the device scan (reasm.c) runs. */
#define REPAIR_SCAN_AUTO	0	/* when a lost directory calls for it */
#define REPAIR_SCAN_ALWAYS	1
#define REPAIR_SCAN_NEVER	2

/* What a check pass learned; dropped and made again by every pass. */
struct repair_scan {
	struct ag_scan	*ags;
	/*
	 * The inode list (sorted by ino once collected) and the directory
	 * entry list, for link counts and connectivity: one element per
	 * inode in use and per entry, so at a billion inodes most of the
	 * check's memory.  Vectors (vec.h) read as arrays through inodes,
	 * ninodes, edges and nedges; appended to only by xk_vec_push and
	 * friends, which may move them (realloc, mremap), so no pointer
	 * into them is kept across an append.  Under -m they are tied to
	 * the spill context and live in temporary files.
	 */
	union {
		struct xk_vec	inode_vec;
		struct {
			struct inode_info *inodes;
			size_t		ninodes;
		};
	};
	union {
		struct xk_vec	edge_vec;
		struct {
			struct edge	*edges;
			size_t		nedges;
		};
	};
	/* Realtime files' mappings (rt_check.c), in no order. */
	union {
		struct xk_vec	rt_vec;
		struct {
			struct rt_claim	*rt_claims;
			size_t		nrt_claims;
		};
	};
	unsigned long	list_searches;	/* binary searches (lists_poll) */
	/* An inode scan kept across an AG rebuild (confirm.c), or NULL. */
	struct scan_keep *keep;
	/* The quota check's state (phase_quota.h), repair only. */
	struct quota_state *quota;
};

#define SCAN_VIEWS(vf, field, member) \
	(offsetof(struct repair_scan, field) == \
	 offsetof(struct repair_scan, vf) + offsetof(struct xk_vec, member))
_Static_assert(SCAN_VIEWS(inode_vec, inodes, v) &&
	       SCAN_VIEWS(inode_vec, ninodes, n) &&
	       SCAN_VIEWS(edge_vec, edges, v) &&
	       SCAN_VIEWS(edge_vec, nedges, n),
	       "the inode and entry lists view struct vecs");
#undef SCAN_VIEWS

/* What the run found and reports, and the error that stops it. */
struct repair_findings {
	/*
	 * The first operational error (repair_error): memory, I/O, a
	 * thread that could not start.  Once set, findings are no longer
	 * reported or planned, every phase returns at its next look at it,
	 * and the run stops before its next write.  error_what says what
	 * was being done.
	 */
	int		error;
	char		error_what[160];
	unsigned long	counts[PR_NR];
	unsigned long	nproblems;
	/* The last finding's line: the reason a plan made on it names. */
	char		last_finding[PLAN_WHY_MAX];
	/*
	 * The problem count: the findings the run starts from (before
	 * and in the first check pass), the same with and without -n.
	 */
	unsigned long	first_problems;
	int		json_later;	/* "later_problems" is open */
	size_t		json_items;	/* elements in the open array */
	/* The changes made, for the report and summary (action.c). */
	struct action_log *acts;
	int		actions_lost;	/* acts could not be allocated */
	/* Parts not understood, so not checked and never written. */
	struct xk_unsupported unsup[XK_UNSUPPORTED_MAX];
	int		nunsup;
};

/* Progress of a phase (progress.c): done counts units of per_unit items. */
struct repair_meter {
	const char	*what;		/* "Phase 3 - inode chunks" */
	const char	*unit;		/* what the rate counts: "inodes" */
	unsigned int	per_unit;	/* unit items per step counted */
	uint64_t	total;
	_Atomic uint64_t done;
	int64_t		start_ms, drawn_ms, printed_ms;
	pthread_t	owner;		/* the thread that draws */
	int		phase;		/* N of "Phase N - ...", or 0 */
	int		shown;		/* its live line is on the terminal */
};

/*
 * One run: the handle, its options, the current pass's scan, what was
 * found and the plan (plan.h).  The phases take it whole; a parallel
 * scan worker has its own, with its own handle, scan, findings and plan,
 * merged into the parent's after the scan.
 */
struct repair_ctx {
	struct xk_mount	*mp;
	FILE		*out;
	struct repair_opts opt;
	int		pass;		/* check pass, from 1 */
	int		from_secondary;	/* geometry came from a secondary */
	int		needsrepair_found; /* the primary was marked at open */
	const char	*phase_what;	/* what the current phase does */
	struct repair_meter *meter;	/* the phase's progress, or NULL */
	uint64_t	cache_bytes;	/* buffer cache budget per handle */
	struct xk_vec_spill *spill;	/* set when -m calls for spilling */
	/*
	 * Where it spilled (a string of the run's lifetime) and how many
	 * moves to files failed there, kept once it stops: the message
	 * of a run that then stops names that directory.
	 */
	const char	*spill_dir_used;
	unsigned long	spill_failed;
	struct repair_scan scan;
	struct repair_findings found;
	/* What the repair will do (plan.h); appliers read it. */
	struct repair_plan plan;
	/* The device scan and its plans, kept across passes (reasm.c). */
	struct reasm_state *reasm;
	/* xfs_repair's phase lines (report_xfs.c). */
	struct {
		int	phase;		/* the last phase line printed */
		int	fail_after;	/* XFS_REPAIR_FAIL_AFTER_PHASE, or 0 */
		/*
		 * Without --report: the last finding, held until we know
		 * whether xfs_repair's words for it follow (xr_msg).
		 */
		char	pending[600];
		/* The primary made from a secondary: its stripe geometry. */
		int		sb_copied;
		uint32_t	sb_unit, sb_width;
		int		root_lost;	/* phase 4 found no root */
	} xr;
	/* The log head's LSN once the log is read (0: none known). */
	uint64_t	log_head_lsn;
	/* The log was read and is empty (zeroed): its head is 0:0. */
	int		log_zeroed;
	/* The last check pass's count, for the summary line (summary.c). */
	struct {
		int		counted;	/* every AG's trees were read */
		uint64_t	inodes;		/* in use, by the inobt */
		uint64_t	used, blocks;	/* data blocks not free, all */
		unsigned long	left;		/* problems a repair left */
	} tally;
};

/*
 * Invariants of the engine, checked in test builds (configure
 * --enable-fault-injection defines XK_FAULT_INJECTION) and compiled out
 * of others, where cond is type-checked but not evaluated.  A broken
 * one is a bug of the engine, not a state of the filesystem: it says
 * what and where on stderr and aborts, before the next write.
 */
#ifdef XK_FAULT_INJECTION
#define REPAIR_DEBUG	1
#define REPAIR_ASSERT(cond, ...)					\
	((cond) ? (void)0 :						\
	 repair_assert_fail(#cond, __FILE__, __LINE__, __VA_ARGS__))
#else
#define REPAIR_DEBUG	0
#define REPAIR_ASSERT(cond, ...)	((void)sizeof(!(cond)))
#endif
__attribute__((noreturn, format(printf, 4, 5)))
void repair_assert_fail(const char *cond, const char *file, int line,
			const char *fmt, ...);

/*
 * The one gate every finding passes: prints it, counts it, and says
 * whether the caller may fix it (never under -n).
 */
int fix_problem(struct repair_ctx *rc, enum problem pr,
		const struct xk_fail *f);
/*
 * Record an operational error err (a negative errno) with what was being
 * done (printf-style); the first one is kept.
 * Returns rc->found.error, so that callers can `return repair_error(...)`;
 * the record is what matters, the result may be dropped.
 */
int repair_error(struct repair_ctx *rc, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * For a libfs error that may describe the filesystem or the run: an
 * operational one is recorded (repair_error) and returned; any other
 * gives 0 and is the caller's finding to report.
 */
XK_MUST_CHECK int repair_oserr(struct repair_ctx *rc, int err,
			       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * The time stamped on what the repair creates (/lost+found, quota timers):
 * now, or SOURCE_DATE_EPOCH when set, so that a repair is reproducible.
 */
int64_t repair_now(void);
/* "out of memory", "an I/O error", ...: the cause of an operational error. */
const char *repair_error_cause(int err);
/*
 * interrupt.c: SIGINT/SIGTERM/SIGHUP ask the run to stop after the phase
 * under way; a second one quits at once.  repair_interrupted() gives the
 * signal received, or 0.
 */
int repair_interrupt_install(int progress_line);
int repair_interrupted(void);
/*
 * progress.c: a phase's meter.  meter_start() makes it rc's (the thread
 * that calls it draws), meter_add() counts work from any thread sharing
 * it, meter_show() redraws (at most every 200 ms unless forced) on a
 * terminal and prints -t's periodic lines, meter_end() clears the line.
 */
void meter_start(struct repair_ctx *rc, struct repair_meter *m,
		 const char *what, const char *unit, unsigned int per_unit,
		 uint64_t total);
void meter_add(struct repair_ctx *rc, uint64_t n);
void meter_show(struct repair_ctx *rc, int force);
void meter_end(struct repair_ctx *rc);
/* Clear the live progress line before a line is printed. */
void live_clear(struct repair_ctx *rc);
/* One step of the meter's work: counted, and drawn now and then. */
void meter_step(struct repair_ctx *rc);
/*
 * Parallel phases: how many workers have finished, signalled so that
 * the parent, which draws the meter they count into, wakes at once.
 */
struct workers_done {
	pthread_mutex_t		lock;
	pthread_cond_t		cond;
	unsigned int		n;
};

void workers_done_add(struct workers_done *d);
void workers_done_wait(struct workers_done *d, unsigned int n,
		       struct repair_ctx *rc);
/*
 * report_xfs.c: xfs_repair's phase lines (stderr), printed by the first
 * pass only: xr_phase(N) ends the phase under way (the point of
 * XFS_REPAIR_FAIL_AFTER_PHASE) and heads phase N, xr_step() a step of it;
 * xr_end() ends the last phase, xr_done() prints the closing line.
 */
void xr_fail_after_read(struct repair_ctx *rc);
void xr_phase(struct repair_ctx *rc, int phase);
void xr_step(struct repair_ctx *rc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * One of xfs_repair's messages, in its words, for the finding just
 * reported: without --report it stands in for our line.
 */
void xr_msg(struct repair_ctx *rc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Without --report: a first-pass finding (fix_problem) that no xr_msg
 * followed is printed in our words at the next line of any kind, or
 * here (before a worker's buffer closes, before the run's last lines).
 */
void xr_finding(struct repair_ctx *rc, const char *line);
/*
 * The primary superblock unusable (err, f: why): xfs_repair's lines
 * before its search for a secondary, and once one is in use (WAS: the
 * secondary as read, before the inodes it names were set).  xr_sb_found
 * returns 1 when the run stops there, as xfs_repair -n does.
 */
void xr_sb_search(struct repair_ctx *rc, int err, const struct xk_fail *f);
int xr_sb_found(struct repair_ctx *rc, const struct xk_sb *was);
/*
 * The secondaries outvoted the primary's geometry (vote_primary_features
 * reported it): "[would write|writing] modified primary superblock";
 * returns 1 when the run stops there, as xfs_repair -n does.
 */
int xr_sb_voted(struct repair_ctx *rc);
/* The finding just reported was said in xfs_repair's words before. */
void xr_covered(struct repair_ctx *rc);
/*
 * An inode core that failed its verifier: xfs_repair's lines when its
 * header is what fails; returns 1 when they end with the inode cleared
 * (freed: the check clears it or keeps it free).
 */
int xr_inode_header(struct repair_ctx *rc, uint64_t ino,
		    const struct xk_dinode *dip, int freed);
/*
 * An inode cleared for a finding xfs_repair has words for ("bad inode
 * format in inode N", "cleared inode N"); returns 1 when they were said.
 */
int xr_inode_cleared(struct repair_ctx *rc, uint64_t ino,
		     const struct xk_fail *f);
/*
 * An inode in use that the check clears (a symlink's target, a core
 * xfs_repair words otherwise): our findings said why, then xfs_repair's
 * "would have cleared inode N" ("cleared inode N") says what.
 */
void xr_inode_clearing(struct repair_ctx *rc, uint64_t ino);
/*
 * An entry of short-form directory dir naming child, not in use: "entry
 * "NAME" in shortform directory ... references free inode ..." and
 * "would have junked entry ..." ("junking entry ...").
 */
void xr_entry_junked(struct repair_ctx *rc, uint64_t dir, uint64_t child);
/*
 * An AGI or AGF that failed its verifier: xfs_repair's lines for its
 * fields ("bad magic # 0x0 for agi 0", ..., "reset bad agi for ag 0",
 * "bad agbno N for inobt root, agno 0").
 */
void xr_agi_header(struct repair_ctx *rc, uint32_t agno,
		   const struct xk_agi *h);
void xr_agf_header(struct repair_ctx *rc, uint32_t agno,
		   const struct xk_agf *h);
/*
 * Blocks neither free nor used, or AG metadata rmap records matching
 * nothing, in an AG whose AGF, AGI or AGFL xfs_repair's words reset: the
 * old trees' blocks, which xfs_repair frees silently.
 */
void xr_lost_space(struct repair_ctx *rc, uint32_t agno);
/* An AGFL that failed its verifier: "bad agbno N in agfl, agno A". */
void xr_agfl_slots(struct repair_ctx *rc, uint32_t agno,
		   const struct xk_agf *agf, void *agfl);
/*
 * Phase 4: "root inode lost"; phase 6: "reinitializing root directory"
 * and the realtime inodes' lines.
 */
void xr_root_check(struct repair_ctx *rc);
void xr_phase6_remade(struct repair_ctx *rc);
/*
 * phase_links.c: a realtime bitmap or summary inode (ino) of a
 * filesystem without a realtime volume is not a regular file in use,
 * once the inode list is ordered.
 */
int rt_inode_lost(struct repair_ctx *rc, uint64_t ino);
void xr_flush(struct repair_ctx *rc);
void xr_end(struct repair_ctx *rc);
void xr_done(struct repair_ctx *rc);
/*
 * The run's end: metadata LSNs not behind the log head are a finding,
 * in xfs_repair's words too; without -n the log is formatted past them
 * (*formatted set).  0, or a negative errno (recorded).
 */
int xr_log_behind(struct repair_ctx *rc, int *formatted);
/* --progress-fd: "phase done total device", e2fsck's -C protocol. */
void progress_fd_line(struct repair_ctx *rc, int phase, uint64_t done,
		      uint64_t total);
/* JSON output: open and close the document. */
void json_begin(struct repair_ctx *rc);
void json_end(struct repair_ctx *rc, int status);
/* guard.c: entry checks (mounted, unsupported parts). */
int guard_mounted(struct repair_ctx *rc, char *msg, size_t len);
int guard_unsupported(struct repair_ctx *rc);
int guard_unsupported_voted(struct repair_ctx *rc);
int guard_unchecked(struct repair_ctx *rc, int status);
void guard_json(struct repair_ctx *rc);
void json_string(FILE *out, const char *s);

/*
 * An informational line, on stderr (rc->out, or stderr under --json):
 * info() one of our report's (--report), notice() one every run prints
 * (what was not checked, what was lost or left undone).
 */
void info(struct repair_ctx *rc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void notice(struct repair_ctx *rc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * action.c: report a change just made (or, for a rewrite that follows
 * at once, about to be made).  ino (0: none) is the inode changed, with
 * its path: path, or when NULL resolved from the scan's lists and the
 * directories ("?" for what is unknown; "" for none shown); agno (-1:
 * none) the AG.  The line reads: the kind's verb, " N (PATH)" or
 * " AG", then fmt.  Under -n nothing is ever reported.
 */
void action_report(struct repair_ctx *rc, enum action act, uint64_t ino,
		   int64_t agno, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/*
 * The same for a change made because of a finding (why, NULL: none
 * recorded): the text says it, --json gives it as "reason".
 */
void action_report_why(struct repair_ctx *rc, enum action act, uint64_t ino,
		       int64_t agno, const char *path, const char *why,
		       const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
/* ino's path as the last check pass saw the tree, into buf. */
void action_path(struct repair_ctx *rc, uint64_t ino, char *buf,
		 size_t len);
/*
 * Before applying rc->ifix: resolve the paths of the inodes its plans
 * change (and of the entries they drop), as the scan saw the tree, so
 * that a fix applied first (an entry dropped) does not hide them.
 */
void action_prepare(struct repair_ctx *rc);
/* The inodes in use the scan just made counted as kept (summary). */
void action_note_scan(struct repair_ctx *rc);
/* Forget what refers to the scan's lists (they are about to go). */
void action_scan_free(struct repair_ctx *rc);
/* The summary lines (text), or the JSON members; then free. */
void action_summary(struct repair_ctx *rc);
/* The changes made so far. */
unsigned long action_count(const struct repair_ctx *rc);
/* The run's last line with our report on (summary.c): its verdict. */
void summary_line(struct repair_ctx *rc, int status);
void action_json(struct repair_ctx *rc);
/*
 * -n: what a repair would rebuild from the device scan (what:
 * "directory", "block_map", "attr_fork_map"): msg as an info line, and
 * with --json an element of "would_rebuild".
 */
void action_would(struct repair_ctx *rc, const char *what, uint64_t ino,
		  const char *path, const char *msg);
/* Nonzero when an action could not be recorded (out of memory). */
int action_error(const struct repair_ctx *rc);
void action_free(struct repair_ctx *rc);

/* Build a failure site and pass it to fix_problem. */
int report(struct repair_ctx *rc, enum problem pr, const char *structure,
	   int64_t agno, uint64_t ino, uint64_t daddr, const char *check,
	   const char *fmt, ...) __attribute__((format(printf, 8, 9)));

/* memcap.c: the model's estimate, and the -m gate (-1: refused). */
uint64_t repair_memory_estimate(struct repair_ctx *rc,
				uint64_t *without_cache);
int repair_memory_check(struct repair_ctx *rc);
/*
 * Tie rc->scan.ags' claim vectors and rc's inode and entry lists to rc->spill
 * (if any); after allocating rc->scan.ags.
 */
void ags_attach_spill(struct repair_ctx *rc);
/* -v under -m: where the inode and entry lists are (memory or files). */
void lists_report(struct repair_ctx *rc);
/*
 * The same for one object's list, v of elements of size bytes and the
 * names they point at (a directory's salvaged entries, an inode's
 * salvaged xattrs).
 */
void spill_list_report(struct repair_ctx *rc, const char *what, uint64_t ino,
		       const struct xk_vec *v, size_t size,
		       const struct xk_vec_pool *names);
/*
 * The cause of the error err as the stop message gives it: for running
 * out of memory after records could not move to the spill directory,
 * that directory's lack of space (in buf); else repair_error_cause.
 */
const char *spill_error_cause(const struct repair_ctx *rc, int err,
			      char *buf, size_t len);

/*
 * In a pass over the inode or entry list, call with the index: every
 * 32 Ki elements (at most 1 MiB) the cap is checked, when the lists may
 * be spilled (xk_vec_spill_poll says why the trimmer alone is too slow).
 */
#define LISTS_POLL_MASK	0xfffU
static inline void
lists_poll(const struct repair_ctx *rc, size_t i)
{
	if (rc->spill && !(i & LISTS_POLL_MASK))
		xk_vec_spill_poll(rc->spill);
}

/*
 * The same for a binary search of a list: after a trim its probes fault
 * in a few hundred KiB each (a fault maps 64 KiB or more around the
 * page), so the cap is checked every 8 searches.
 */
#define SEARCH_POLL_MASK	0x7U
static inline void
search_poll(struct repair_ctx *rc)
{
	if (rc->spill && !(++rc->scan.list_searches & SEARCH_POLL_MASK))
		xk_vec_spill_poll(rc->spill);
}
/* Stop spilling (after the run; its vectors freed); -v prints the figures. */
void repair_memory_done(struct repair_ctx *rc);

/* Orders uint64_t values (inode numbers) for sort_v. */
static inline int
cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

/* qsort that accepts an empty (NULL) array. */
static inline void
sort_v(void *base, size_t n, size_t size,
       int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* space.c */
XK_MUST_CHECK int claims_add(struct claims *c, uint32_t agbno, uint32_t len,
			     uint64_t owner, uint64_t offset);
void claims_free(struct claims *c);
/* Claim fs blocks fsb..+len for an owner; reports out-of-range claims. */
void claim_fsb(struct repair_ctx *rc, uint64_t fsb, uint64_t len,
	       uint64_t owner, uint64_t offset);
void claim_agb(struct repair_ctx *rc, uint32_t agno, uint32_t agbno,
	       uint32_t len, uint64_t owner);

/* phase_ag.c: inobt records by first inode (qsort/bsearch order). */
int cmp_chunk_start(const void *a, const void *b);
/* phase_ag.c: append an inode chunk record to the AG's list. */
XK_MUST_CHECK int ag_push_chunk(struct ag_scan *as,
			       const struct xk_inobt_rec *rec);
/* phase_inodes.c: scan the AG's chunks from index from on (serially). */
XK_MUST_CHECK int scan_chunks_from(struct repair_ctx *rc, uint32_t agno,
				  size_t from);
/* inode_policy.c: xfs_repair's own inode core rules (flags, padding). */
void check_core_policy(struct repair_ctx *rc, uint64_t ino,
		       const struct xk_dinode *dip, uint64_t daddr);
/* chunkfind.c: chunks of AGs whose inode btree and rmapbt are lost. */
XK_MUST_CHECK int phase_find_chunks(struct repair_ctx *rc);
/*
 * confirm.c: may the pass after the AG rebuild reuse this pass's inode
 * scan; keep it; free it; the pass's phase 3 from what was kept.
 */
int keep_allowed(const struct repair_ctx *rc);
XK_MUST_CHECK int keep_take(struct repair_ctx *rc);
void keep_free(struct repair_ctx *rc);
XK_MUST_CHECK int phase_inodes_kept(struct repair_ctx *rc);

/*
 * check.c: after a phase or a repair step that returned err: nonzero
 * (rc->found.error, recorded) when the run must stop — err, an operational
 * error it recorded, or the stop XFSKIT_FAULT=phase:N asks for in test
 * builds.  rc->phase_what names the step.
 */
XK_MUST_CHECK int repair_phase_end(struct repair_ctx *rc, int err);
/*
 * rtbtree.c, after every phase: on a filesystem with realtime groups'
 * btrees, a finding other than those their in-place rewrite answers
 * refuses the repair (plan.rtb_refuse): nothing keeps the trees in step
 * with another change.
 */
void rtb_guard(struct repair_ctx *rc);
/* check.c: run every phase on rc->mp; findings go through fix_problem. */
XK_MUST_CHECK int repair_check(struct repair_ctx *rc);
/* The same, keeping rc->scan.ags and the inode lists for the repair. */
XK_MUST_CHECK int repair_scan(struct repair_ctx *rc);
void repair_scan_free(struct repair_ctx *rc);

/*
 * salvage.c: make a failing inode core verify by resetting the fields
 * that can be derived; returns 0 when the copy at dip now verifies.
 */
XK_MUST_CHECK int salvage_core(struct repair_ctx *rc, uint64_t ino,
			      struct xk_dinode *dip);
/* Bit i set: timestamp i (a, m, c, crtime) has nanoseconds >= 10^9. */
unsigned int bad_nsec_mask(const struct xk_dinode *dip);

/*
 * lookup.c: the scan's lists and maps, read by checks and repairs.
 * inodes_order, edges_order: order rc->scan.inodes by inode number and
 * rc->scan.edges by parent, in place (they are made of ordered runs: no copy,
 * unlike qsort's, is needed).
 */
void inodes_order(struct repair_ctx *rc);
void edges_order(struct repair_ctx *rc);
/* The facts on ino once rc->scan.inodes is sorted, or NULL. */
struct inode_info *inode_info_find(const struct repair_ctx *rc, uint64_t ino);
/* The same, trying first *hint's next slot; *hint is where it was found. */
struct inode_info *inode_info_find_from(struct repair_ctx *rc, uint64_t ino,
					size_t *hint);
/* The rmapbt of every AG was read whole: its records can be trusted. */
int rmaps_usable(const struct repair_ctx *rc);
/* Does an inode chunk the scan read (its AG's chunk list) hold ino? */
int scan_saw_inode(const struct repair_ctx *rc, uint64_t ino);
/* Mark ino in use in the chunk the AG rebuild is fed (seen_free). */
void mark_in_use(struct repair_ctx *rc, uint64_t ino);
/* The blocks of ino's attr fork (extents and bmbt) the pass claimed. */
uint64_t attr_blocks_claimed(const struct repair_ctx *rc, uint64_t ino);
/* The same for either fork (XK_DATA_FORK, XK_ATTR_FORK). */
uint64_t fork_blocks_claimed(const struct repair_ctx *rc, uint64_t ino,
			     int whichfork);

/* phase_rmap_forks.c: plan data forks the rmapbt can restore (repair). */
void check_rmap_forks(struct repair_ctx *rc);

/*
 * The appliers: they read rc->plan and write.
 * fix.c: superblock and inode plans.
 */
/* An entry to append to a short-form directory. */
struct sf_add {
	const uint8_t	*name;
	uint8_t		namelen;
	uint8_t		ftype;
	uint64_t	ino;
};
XK_MUST_CHECK int sf_rewrite(struct repair_ctx *rc, struct xk_dinode *dip,
			    uint64_t drop, uint64_t parent,
			    const struct sf_add *add);
/* Apply superblock and inode plans; *applied counts what was written. */
XK_MUST_CHECK int apply_fixes(struct repair_ctx *rc, unsigned long *applied);
/* lostfound.c */
struct xk_bld;
struct xk_bld_dirent;
/*
 * orphan_home.c: orphans whose parent pointers still name their place
 * given their entries back, taken off the orphan list.
 */
XK_MUST_CHECK int orphans_home(struct repair_ctx *rc, unsigned long *applied);
/* Add an entry to the short-form directory dir; XK_ECORRUPT if full. */
XK_MUST_CHECK int sf_add_entry(struct repair_ctx *rc, uint64_t dir,
			       const char *name, uint64_t ino, uint8_t ftype);
/* Point a reconnected directory's ".." at dir (any format). */
XK_MUST_CHECK int dotdot_point(struct repair_ctx *rc, const struct orphan *o,
			       uint64_t dir);
XK_MUST_CHECK int reconnect_orphans(struct repair_ctx *rc,
				   unsigned long *applied);
/* Entries the directory rewrite adds to dir (the orphans, lost+found). */
void lf_extra(const struct repair_ctx *rc, uint64_t dir,
	      const struct xk_bld_dirent **ents, size_t *n);
/* Report the orphans' moves once dir, the /lost+found, is written. */
void lf_report_moves(struct repair_ctx *rc, uint64_t dir);
/* A new directory inode holding ents under parent (owner root, times now). */
XK_MUST_CHECK int new_dir_write(struct xk_bld *b, uint64_t ino, uint16_t mode,
				uint64_t parent,
				const struct xk_bld_dirent *ents, size_t n,
				uint32_t nsubdirs, int64_t now);
/* In the rebuild session: a new /lost+found, moved directories' "..". */
/* A new /lost+found's inode when no free slot was seen: a new chunk. */
XK_MUST_CHECK int lf_alloc(struct repair_ctx *rc, struct xk_bld *b);
XK_MUST_CHECK int lf_build(struct repair_ctx *rc, struct xk_bld *b);
/* Point a block-form directory's ".." at parent, in place. */
XK_MUST_CHECK int set_block_dotdot(struct repair_ctx *rc, uint64_t ino,
				  uint64_t parent);
/* dirfix.c: directories rewritten by the builder. */
int dirs_prepare(struct repair_ctx *rc);
XK_MUST_CHECK int rebuild_dirs(struct repair_ctx *rc, struct xk_bld *b);
/* *found: the inode an entry of directory dir names, or 0. */
XK_MUST_CHECK int dir_lookup(struct repair_ctx *rc, uint64_t dir,
			     const char *name, uint64_t *found);
/*
 * A directory's entries as read or salvaged: e.v[0..e.n-1] point at
 * their names in names.  Under -m both spill like the scan's lists (a
 * directory of a million entries is salvaged into files, not memory).
 * An all-zero list is empty; free with dir_list_free.
 */
struct dir_list {
	XK_VEC_OF(struct xk_bld_dirent) e;
	struct xk_vec_pool names;
};
void dir_list_free(struct dir_list *l);
/*
 * Every readable entry of dir into l (empty), naming an inode in use
 * or not (ftype 0 for those).
 */
XK_MUST_CHECK int dir_entries(struct repair_ctx *rc, uint64_t dir,
			      struct dir_list *l);
/*
 * The names of dir's entries shorter than cap bytes, each in a cap-byte
 * NUL-terminated slot of *buf (malloc'd), sorted by strcmp.
 */
XK_MUST_CHECK int dir_short_names(struct repair_ctx *rc, uint64_t dir,
				 size_t cap, char **buf, size_t *n);
/*
 * acl.c: whether an xattr is a POSIX ACL (trusted SGI_ACL_FILE or
 * SGI_ACL_DEFAULT: returns that name, else NULL), and what is wrong with
 * its value as xfs_repair and the kernel judge it (NULL: nothing, or not
 * an ACL).
 */
const char *acl_named(uint8_t flags, const uint8_t *name, size_t namelen);
const char *acl_problem(uint8_t flags, const uint8_t *name, size_t namelen,
			const uint8_t *value, size_t valuelen);
/* attrfix.c: attr forks rewritten from their salvaged entries. */
int attrs_prepare(struct repair_ctx *rc);
struct attr_rewrites;
XK_MUST_CHECK int attrs_salvage(struct repair_ctx *rc,
			       struct attr_rewrites **out);
XK_MUST_CHECK int attrs_rewrite(struct repair_ctx *rc, struct xk_bld *b,
			       struct attr_rewrites *w);
void attrs_free(struct attr_rewrites *w);
/* fix.c: an attr fork that cannot be kept, emptied in place. */
void drop_attr_fork(struct repair_ctx *rc, struct xk_dinode *dip);
/* pptrfix.c: inodes given the parent pointers planned for them. */
XK_MUST_CHECK int pptr_apply(struct repair_ctx *rc, unsigned long *applied);
/* rebuild_fork.c: forks rebuilt from the reverse mappings. */
XK_MUST_CHECK int rmap_fork_rebuild(struct repair_ctx *rc, uint64_t ino,
				    struct xk_dinode *dip);
XK_MUST_CHECK int rmap_afork_rebuild(struct repair_ctx *rc, uint64_t ino,
				     struct xk_dinode *dip);
/* ... and from the bmbt leaves the device scan found (reasm_fork.c). */
XK_MUST_CHECK int scan_fork_rebuild(struct repair_ctx *rc, uint64_t ino,
				    struct xk_dinode *dip);
XK_MUST_CHECK int scan_afork_rebuild(struct repair_ctx *rc, uint64_t ino,
				     struct xk_dinode *dip);
/* rebuild.c: rebuild every AG's btrees, AGFL and counters. */
XK_MUST_CHECK int rebuild_ags(struct repair_ctx *rc, unsigned long *applied);
/* Whether the findings of the last pass call for an AG rebuild. */
int need_rebuild(const struct repair_ctx *rc);

/* find_sb.c */
XK_MUST_CHECK int find_secondary_sb(struct xk_dev *dev,
				   const struct xk_sb *hint, uint64_t limit,
				   struct xk_sb *sb, uint32_t *agno);
/* Restore the primary-only fields of a secondary's copy in mp->sb. */
void secondary_sb_fixup(struct xk_mount *mp);

XK_MUST_CHECK int phase_log(struct repair_ctx *rc);
XK_MUST_CHECK int phase_superblocks(struct repair_ctx *rc);
XK_MUST_CHECK int vote_primary_features(struct repair_ctx *rc);
/*
 * A primary marked NEEDSREPAIR at open: a finding, and the mark is taken
 * off the handle's superblock (the copies written from it never carry
 * it; the primary keeps it until the repair's last write).
 */
void check_needsrepair(struct repair_ctx *rc);
void root_inode_init(struct repair_ctx *rc, struct xk_dinode *dip,
		     uint64_t ino);
XK_MUST_CHECK int phase_ag_headers(struct repair_ctx *rc);
XK_MUST_CHECK int phase_inodes(struct repair_ctx *rc);
XK_MUST_CHECK int phase_space(struct repair_ctx *rc);
XK_MUST_CHECK int phase_links(struct repair_ctx *rc);
XK_MUST_CHECK int phase_counters(struct repair_ctx *rc);
/*
 * metadir.c: the metadata directory tree.  Whether ii can be its root;
 * the root to walk from (0: none, a rebuild planned in repair); once
 * the tree is walked, the rebuild's plans (or a refusal) and the inode
 * its new root takes (0: none).  metadirfix.c: the new root, written
 * into dip.
 */
int metadir_root_fits(const struct inode_info *ii);
uint64_t metadir_root_find(struct repair_ctx *rc);
void metadir_rebuild_plan(struct repair_ctx *rc);
uint64_t metadir_rebuild_target(struct repair_ctx *rc);
void metadir_root_init(struct repair_ctx *rc, struct xk_dinode *dip,
		       uint64_t ino);
/* pptr.c: parent pointers against directory entries (PARENT feature). */
XK_MUST_CHECK int phase_pptr(struct repair_ctx *rc);

/*
 * A fork's extents, in file offset order, as the inode scan found them:
 * a vector (xk_vec) read as v[0..n-1].  Most forks have few extents.
 */
struct fork_map {
	XK_VEC_OF(struct xk_bmbt_irec);
};
#define FORK_MAP_FIRST	16	/* elements of a fork map's first allocation */

/* dir.c: check a directory inode's contents and record its entries. */
void check_directory(struct repair_ctx *rc, uint64_t ino,
		     const struct xk_dinode *dip, const struct fork_map *map);
/* attr.c: check an inode's attr fork contents. */
unsigned long check_attr_fork(struct repair_ctx *rc, uint64_t ino,
		     const struct xk_dinode *dip, const struct fork_map *map);
/* lookup.c: a fork's file block to a filesystem block, or XK_NULLFSBLOCK. */
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
/* Does this fork map realtime blocks (a realtime file's data)? */
static inline int
fork_is_rt(const struct xk_mount *mp, const struct xk_dinode *dip, int fork)
{
	return fork == XK_DATA_FORK && mp->sb.rblocks &&
	       (xk_be16_get(dip->di_flags) & XK_DIFLAG_REALTIME);
}
XK_MUST_CHECK int walk_fork(struct repair_ctx *rc, uint64_t ino,
			   const struct xk_dinode *dip, int fork,
			   uint64_t *bmbt_blocks,
			   const struct fork_extent_fn *cb);

/*
 * rt_check.c: record a realtime file's mapping (inode scan); check the
 * classic realtime bitmap, summary and their inodes against them.
 */
void rt_claim(struct repair_ctx *rc, uint64_t ino,
	      const struct xk_bmbt_irec *r);
XK_MUST_CHECK int phase_rt(struct repair_ctx *rc);
/* rt_fix.c: rewrite what phase_rt planned (rc->plan.rt_fix). */
XK_MUST_CHECK int rt_apply(struct repair_ctx *rc, int inodes_changed,
			  unsigned long *applied);
/*
 * rt_fix.c, inside the AG rebuild: a bitmap or summary inode with no
 * usable blocks is written anew on blocks the builder allocates.
 * rt_rebuild_pending: one is planned; rt_being_rebuilt: owner is one
 * (its old claims are not fed); rt_build_prepare before the feed,
 * rt_build after it.
 */
int rt_rebuild_pending(const struct repair_ctx *rc);
int rt_being_rebuilt(const struct repair_ctx *rc, uint64_t owner);
void rt_build_prepare(struct repair_ctx *rc);
XK_MUST_CHECK int rt_build(struct repair_ctx *rc, struct xk_bld *b);

#endif /* XFSKIT_REPAIR_H */
