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
	struct log_xmi_file *f;
	size_t		n, cap;
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
 * Analyse a log image already in memory (nbb basic blocks; the handle
 * takes buf over).  For unit tests: mp needs only sb.uuid and geometry.
 */
int xk_log_open_mem(struct xk_mount *mp, uint8_t *buf, uint32_t nbb,
		    struct xk_log **logp);

/* Write a clean log: an unmount record at blk in cycle, stale blocks. */
int xk_log_write_clean(struct xk_log *log, uint32_t blk, uint32_t cycle,
		       int whole);

#endif /* XFSKIT_LOG_PRIV_H */
