/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internals shared by the log modules: the in-memory copy of the log,
 * record reading with wrap-around, and the error sentence helper.
 */
#ifndef XFSKIT_LOG_PRIV_H
#define XFSKIT_LOG_PRIV_H

#include <stdint.h>

#include <xfskit/libfs.h>
#include <xfskit/logv.h>
#include <xfskit/vec.h>

struct log_kept;

struct xk_log {
	struct xk_mount	*mp;
	/*
	 * The whole log as on disk.  Opened from a device it is a
	 * reservation filled chunk by chunk on first touch (loaded != NULL),
	 * so finding the head of a 2 GiB log reads a few MiB, not all of it.
	 */
	uint8_t		*buf;
	uint8_t		*loaded;	/* bitmap of chunks read, or NULL */
	size_t		map_len;	/* bytes mapped, 0: buf is malloc'd */
	int		io_err;		/* first read error of a chunk */
	uint32_t	nbb;		/* log size in basic blocks */
	uint64_t	daddr;		/* first block of the log */
	struct xk_log_state st;
	char		err[320];
	/* scratch for one record (headers + data), unpacked */
	uint8_t		*rec;
	size_t		recsize;
	/* Threads the walk and replay may use (1: the caller's only). */
	unsigned int	threads;
	/* A walk from tail to head passed: every record's CRC is good. */
	int		walked;
	/* Transactions kept after their callback (trans.c). */
	int		keep;
	struct log_kept	*kept;
	uint64_t	kept_bytes;
};

/* A record header read from the log and checked for sanity. */
struct log_rhdr {
	uint32_t	blk;
	uint32_t	hblks;
	uint32_t	dblks;		/* data blocks: BTOBB(h_len) */
	uint32_t	cycle;
	uint32_t	len;
	uint32_t	version;
	uint32_t	size;
	uint32_t	num_logops;
	uint64_t	lsn;
	uint64_t	tail_lsn;
};

/* Inode item format region, 56- or 52-byte layout, as the 64-bit one. */
void xk_log_ilf_decode(const struct xk_log_region *r,
		       struct xk_inode_log_format *f);

/* An intent left without its done item: a copy of its format region. */
struct log_intent {
	uint16_t	type;
	uint64_t	id;
	uint8_t		*data;
	uint32_t	len;
};

/* finish.c: whether an intent type can be finished offline. */
int log_intent_supported(uint16_t type);
/*
 * Finish the intents (in log order), free CoW staging and unlinked
 * inodes unless XK_LOG_SKIP_CLEANUP, and rebuild the AG indexes.  With
 * XK_LOG_DRYRUN it all stays in the cache.  Fills rep's *_finished and
 * *_freed counts; log->err says what failed.
 */
int log_finish(struct xk_log *log, const struct log_intent *in, size_t n,
	       unsigned int flags, struct xk_log_report *rep);

/*
 * finish_xmi.c: check an XMI's format region (rules at the definition;
 * log->err set on failure), finish one after replay (*steps: pairs of
 * mappings exchanged; the files are added to tk).
 */
struct xk_bld;
struct log_xmi_file {
	uint64_t	ino;
	uint64_t	size;		/* when recovery first took it */
};
struct log_xmi_taken {
	XK_VEC_OF(struct log_xmi_file);
};
int log_xmi_check(struct xk_log *log, const struct log_intent *in);
int log_finish_xmi(struct xk_log *log, struct xk_bld *b,
		   const struct log_intent *in, struct log_xmi_taken *tk,
		   uint64_t *steps);
/* After every intent: trim the files taken past their old size; frees tk. */
int log_xmi_release(struct xk_log *log, struct xk_bld *b,
		    struct log_xmi_taken *tk);

/*
 * finish_attri.c: finish one ATTRI after replay (its name and value
 * regions are found again in the log); log->err set on failure.
 */
int log_finish_attri(struct xk_log *log, struct xk_bld *b,
		     const struct log_intent *in);

/*
 * recover_dquot.c: after pass 2, apply the dquot items in log order
 * (counted in rep; with XK_LOG_DRYRUN and no _KEEP, only counted).
 */
int log_replay_dquots(struct xk_log *log, unsigned int flags,
		      struct xk_log_report *rep);

/* Fill log->err and return err. */
int xk_log_fail(struct xk_log *log, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Basic blocks per lazily read chunk of the log (1 MiB). */
#define LOG_CHUNK_BB	2048u

/* head.c: read chunk c of the log into log->buf. */
void xk_log_load_chunk(struct xk_log *log, uint32_t c);

/* A basic block of the log, with the block index taken modulo size. */
static inline uint8_t *
log_blk(const struct xk_log *log, uint64_t blk)
{
	uint32_t b = (uint32_t)(blk % log->nbb);
	uint32_t c = b / LOG_CHUNK_BB;

	/* Filling the cache behind a const handle: logically const. */
	if (log->loaded && !(log->loaded[c / 8] & (1u << (c % 8))))
		xk_log_load_chunk((struct xk_log *)log, c);
	return log->buf + (size_t)b * XK_BBSIZE;
}

static inline uint32_t
log_cycle(const struct xk_log *log, uint64_t blk)
{
	return xk_log_block_cycle(log_blk(log, blk));
}

static inline int
log_is_header(const struct xk_log *log, uint64_t blk)
{
	return xk_get_be32(log_blk(log, blk)) == XK_LOG_HEADER_MAGIC_NUM;
}

/* Blocks from a to b going forward around the log. */
static inline uint32_t
log_dist(const struct xk_log *log, uint32_t a, uint32_t b)
{
	return b >= a ? b - a : log->nbb - a + b;
}

/*
 * Check the header at blk (rules listed at the definition); fill *rh.
 * Returns 0 or XK_ECORRUPT with log->err set.
 */
int xk_log_rhdr_check(struct xk_log *log, uint32_t blk, struct log_rhdr *rh);
/*
 * Copy the record at rh into log->rec, check its CRC and restore the
 * cycle words.  On return log->rec holds headers then data.
 */
int xk_log_rec_load(struct xk_log *log, const struct log_rhdr *rh,
		    uint32_t *crcp);
/* Whether the record (already loaded) is a lone unmount record. */
int xk_log_rec_is_unmount(const struct xk_log *log, const struct log_rhdr *rh);
/*
 * xk_log_rec_load() into dst (room for the whole record), the failure
 * sentence into msg: thread-safe once the record's chunks are loaded.
 */
int log_rec_unpack(const struct xk_log *log, const struct log_rhdr *rh,
		   uint8_t *dst, uint32_t *crcp, char *msg, size_t msglen);
/* xk_log_rec_is_unmount() of a record unpacked at rec. */
int log_rec_is_unmount(const uint8_t *rec, const struct log_rhdr *rh);
/* Load the chunks holding n blocks from blk, on up to threads threads. */
void log_load_range(struct xk_log *log, uint32_t blk, uint32_t n,
		    unsigned int threads);

/*
 * apply.c: an item of pass 2 applied to its buffer.  recover.c fills the
 * first part (the buffer referenced for the op), apply.c the results.
 */
enum { LOG_OP_BUF, LOG_OP_INODE, LOG_OP_ICREATE };
enum { LOG_OP_PENDING, LOG_OP_APPLIED, LOG_OP_SKIPPED_LSN, LOG_OP_FAILED };

struct log_op {
	const struct xk_log_item *it;	/* kept by the walk (log->keep) */
	struct xk_buf	*bp;
	uint64_t	lsn;		/* the transaction's */
	uint32_t	tid;
	uint32_t	item;		/* index in the transaction */
	uint32_t	agino;		/* icreate: the cluster's first inode */
	uint32_t	group;		/* ops on one buffer share a group */
	uint8_t		kind;		/* LOG_OP_* */
	uint8_t		last;		/* icreate: the item's last cluster */
	uint8_t		zeroed;		/* icreate: the buffer came zeroed */
	/* Results. */
	int		status;		/* LOG_OP_PENDING ... */
	int		err;
	char		*msg;		/* malloc'd sentence when FAILED */
	size_t		crc_off;	/* what the write stamps, if APPLIED */
	size_t		lsn_off;
};

/*
 * Apply ops[0..n) to their buffers on up to threads threads, each
 * group's ops (groups 0..ngroups-1, one per buffer) in index (log)
 * order.  Returns 0 or -ENOMEM (nothing applied); a failing op has
 * status LOG_OP_FAILED and its sentence.
 */
int log_ops_apply(const struct xk_mount *mp, struct log_op *ops, uint32_t n,
		  uint32_t ngroups, unsigned int threads);

/*
 * trans.c: with log->keep set, the walk keeps every committed
 * transaction's regions and items alive after its callback (counting
 * their bytes in log->kept_bytes) until log_kept_free().
 */
void log_kept_free(struct xk_log *log);

/* pool.c: the most threads replay uses, whatever is asked. */
#define LOG_MAX_THREADS	64u
/* The thread count for a request (0: the CPUs online), capped. */
unsigned int log_threads_default(unsigned int threads);
/* Run fn(ctx, i) for every i < n on up to threads threads; wait. */
void log_par_for(unsigned int threads, size_t n,
		 void (*fn)(void *ctx, size_t i), void *ctx);

/*
 * Analyse a log image already in memory (nbb basic blocks; the handle
 * takes buf over).  For unit tests: mp needs only sb.uuid and geometry.
 */
int xk_log_open_mem(struct xk_mount *mp, uint8_t *buf, uint32_t nbb,
		    struct xk_log **logp);

/* Write a clean log: an unmount record at blk in cycle, stale blocks. */
int xk_log_write_clean(struct xk_log *log, uint32_t blk, uint32_t cycle,
		       int whole);

#endif /* XFSKIT_LOG_PRIV_H */
