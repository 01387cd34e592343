/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The log, offline: find its head and tail, walk its records and the
 * transactions they carry, replay it into the filesystem the way the
 * kernel does at mount, and write a clean (empty) log.
 *
 * A struct xk_log holds the whole physical log in memory, read once.
 * Every function that finds damage returns XK_ECORRUPT or XK_EBADCRC and
 * leaves one sentence in xk_log_errmsg() saying where (record block and
 * LSN, op number, transaction id, item number) and what is wrong.
 * Nothing here prints; nothing is written except by xk_log_recover()
 * (unless XK_LOG_DRYRUN) and xk_log_zero().
 */
#ifndef XFSKIT_LOGV_H
#define XFSKIT_LOGV_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>

#include <xfskit/format/log.h>

struct xk_mount;
struct xk_log;

#define XK_LOG_NOBLK	((uint32_t)-1)

/* Where the log stands, as found by xk_log_open(). */
struct xk_log_state {
	uint32_t	size_bb;	/* log length in basic blocks */
	/* Next block the writer would use, and its cycle. */
	uint32_t	head_blk;
	uint32_t	head_cycle;
	uint32_t	tail_blk;	/* oldest block still needed */
	/* Header of the last record before the head, or NOBLK. */
	uint32_t	last_rec_blk;
	uint64_t	tail_lsn;	/* from that record's header */
	int		clean;		/* it is a lone unmount record */
	int		empty;		/* never written (zeroed) */
	/* First record dropped as a torn write, or NOBLK. */
	uint32_t	torn_blk;
	uint32_t	hdr_size;	/* h_size (iclog size) of it */
	uint32_t	version;	/* h_version of it */
};

/* One region of a log item, reassembled across records. */
struct xk_log_region {
	const uint8_t	*data;
	uint32_t	len;
};

/* One log item: the format region (regions[0]) and its data regions. */
struct xk_log_item {
	uint16_t	type;		/* XK_LI_* */
	uint16_t	nregions;
	struct xk_log_region *regions;
};

/* One committed transaction (a CIL checkpoint). */
struct xk_log_trans {
	uint32_t	tid;
	/* LSNs of the records holding its start and its commit. */
	uint64_t	lsn;
	uint64_t	commit_lsn;
	uint32_t	num_items_hdr;	/* th_num_items from its header */
	uint32_t	nitems;
	struct xk_log_item *items;
};

/* What a record callback sees: the header fields that matter. */
struct xk_log_rec {
	uint32_t	blk;		/* header block in the log */
	uint32_t	hblks;		/* header + extended headers */
	uint32_t	cycle;
	uint32_t	len;		/* h_len */
	uint32_t	num_logops;
	uint32_t	version;
	uint32_t	size;		/* h_size */
	uint64_t	lsn;
	uint64_t	tail_lsn;
	uint32_t	crc;
	int		unmount;	/* holds an unmount record */
};

/*
 * Callbacks for xk_log_walk(); each may be NULL.  A non-zero return
 * stops the walk and is returned.  rec runs for every record from tail
 * to head in log order; trans for every committed transaction in commit
 * order (its memory lives until the walk returns).
 */
struct xk_log_walk_ops {
	int	(*rec)(void *priv, const struct xk_log_rec *rec);
	int	(*trans)(void *priv, const struct xk_log_trans *tr);
};

/*
 * Read the log of mp into memory and find its head and tail like the
 * kernel: cycle search, hole scan over the last iclogs, partial record
 * at the head, CRC check of the last records (a bad one is a torn write
 * and moves the head back), unmount record.  On failure *logp is still
 * set (unless memory ran out) so xk_log_errmsg() can say why; close it.
 */
XK_MUST_CHECK int xk_log_open(struct xk_mount *mp, struct xk_log **logp);
void xk_log_close(struct xk_log *log);
const struct xk_log_state *xk_log_get_state(const struct xk_log *log);
/* The sentence describing the last failure of this handle. */
const char *xk_log_errmsg(const struct xk_log *log);

/*
 * Check every record from tail to head (header, CRC) and parse its ops
 * into transactions, calling ops.  Damage anywhere stops the walk with
 * XK_ECORRUPT / XK_EBADCRC and a message.
 */
XK_MUST_CHECK int xk_log_walk(struct xk_log *log,
			      const struct xk_log_walk_ops *ops, void *priv);

/* Names for printing. */
const char *xk_log_item_name(uint16_t type);
const char *xk_log_blft_name(unsigned int blft);

/* What an item changes, decoded for printers (fields 0 when n/a). */
struct xk_log_target {
	uint64_t	daddr;		/* buffer, inode cluster, dquot blk */
	uint32_t	len_bb;		/* its length in basic blocks */
	uint32_t	offset;		/* inode or dquot offset in it */
	uint64_t	ino;		/* inode items, ATTRI: the inode */
	uint64_t	id;		/* intent/done id, dquot id */
	uint32_t	flags;		/* blf_flags, ilf_fields, op flags */
	uint32_t	count;		/* extents / inodes in the item */
	uint32_t	agno, agbno;	/* icreate: the chunk */
	unsigned int	blft;		/* buffer type, XK_BLFT_* */
};

/* Decode an item the walk handed over (its lengths are checked). */
void xk_log_item_target(const struct xk_log_item *it,
			struct xk_log_target *t);

/* Recovery flags */
#define XK_LOG_DRYRUN	(1u << 0)	/* replay in memory, write none */
/*
 * Skip the kernel's cleanup after replay: leave inodes on the AGI
 * unlinked lists (unlinked while open) and CoW staging extents in place
 * instead of freeing them as a mount would.
 */
#define XK_LOG_SKIP_CLEANUP (1u << 1)
/*
 * With XK_LOG_DRYRUN: keep the replayed blocks (and the superblock with
 * its summed counters) in the handle's cache, dirty and unwritten, so a
 * read-only handle then sees the filesystem as replay would leave it.
 * Nothing is written (a read-only handle refuses to flush them).
 */
#define XK_LOG_DRYRUN_KEEP (1u << 2)

/* What recovery found and did. */
struct xk_log_report {
	struct xk_log_state state;	/* before recovery */
	uint32_t	records;
	uint32_t	transactions;
	uint64_t	items;
	uint64_t	bufs_replayed;	/* buffer items applied */
	uint64_t	bufs_skipped_lsn; /* on-disk block newer */
	uint64_t	bufs_cancelled;
	uint64_t	inodes_replayed;
	uint64_t	inodes_skipped_lsn;
	uint64_t	inodes_cancelled;
	uint64_t	icreates_replayed;
	uint64_t	dquots_replayed;
	uint64_t	dquots_skipped;	/* quotas off, or dquot LSN newer */
	uint64_t	intents_unfinished;	/* without their done item */
	uint64_t	intents_finished;	/* of those, finished */
	uint16_t	first_intent_type;	/* XK_LI_* of the first one */
	uint64_t	blocks_written;	/* metadata buffers written */
	uint32_t	unlinked_inodes; /* non-empty AGI unlinked buckets */
	uint64_t	cow_staging;	/* CoW staging extents left */
	uint64_t	cow_freed;	/* CoW staging extents freed */
	uint64_t	unlinked_freed;	/* unlinked inodes freed */
	uint32_t	log_incompat_cleared; /* bits cleared in the sb */
	int		replayed;	/* something was written */
	char		msg[320];	/* why it refused or failed */
};

/*
 * Replay a dirty log like the kernel: pass 1 collects cancelled buffers
 * and the intents left without their done item, pass 2 applies buffer,
 * inode and icreate items in commit order (v5 rule: only where the
 * block's LSN is older than the transaction's); then, as the kernel
 * does at mount, the unfinished intents are finished (EFI, RUI, CUI,
 * BUI, XMI, ATTRI), CoW staging extents and inodes on the AGI unlinked lists freed,
 * and the AG indexes rebuilt from the result (libfs/write); the log is
 * rewritten clean (unmount record at the head, in the head's cycle),
 * log_incompat bits are cleared and the superblock counters set.
 * Dquot items are applied after pass 2 when the (replayed) superblock
 * accounts quotas, as a mount with quotas on does.
 * Bmbt owner changes (from the kernel's swapext) are carried out; intents
 * it cannot finish are refused (XK_EUNSUPP, nothing written): realtime
 * ones, exchanges of attr forks, directories or symlinks.  A clean log
 * returns 0 with rep->replayed == 0.  XK_LOG_DRYRUN replays into the
 * cache only, fills rep, refuses as a real replay would, and drops it
 * (a read-only handle is fine); with XK_LOG_DRYRUN_KEEP the result,
 * intents finished, stays in the cache.
 * After a real replay the handle's superblock copy is refreshed.
 * threads: how many threads may read and verify the log records and
 * apply the items (0: one per CPU online); the filesystem it leaves is
 * byte for byte the same for any count.
 */
XK_MUST_CHECK int xk_log_recover(struct xk_mount *mp, unsigned int flags,
				 unsigned int threads,
				 struct xk_log_report *rep);

/*
 * Discard the log (xfs_repair -L): write a clean log holding only an
 * unmount record, in a cycle past every LSN the log held so metadata
 * LSNs stay behind the log.
 */
XK_MUST_CHECK int xk_log_zero(struct xk_mount *mp, char *msg, size_t msglen);
/*
 * The same clean log written in cycle: xfs_repair's reformat of a log
 * that metadata LSNs are ahead of, xfs_db's logformat.  0 picks the
 * cycle as xk_log_zero does.  The caller chooses: an earlier cycle than
 * the metadata's makes the kernel refuse it (what fstests means to do).
 */
XK_MUST_CHECK int xk_log_format(struct xk_mount *mp, uint32_t cycle,
				char *msg, size_t msglen);

#endif /* XFSKIT_LOGV_H */
