/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The buffer cache.  Buffers are keyed by disk address (512-byte units)
 * and length, reference counted, and tracked dirty.  Every read and write
 * passes the buffer's verifier ops: on read the CRC, then the structure;
 * on write the structure, then a fresh CRC (and LSN if asked).  A failed
 * check fills a failure site (struct xk_fail) so the caller can say which
 * check failed where, with expected and found values.
 *
 * Clean unreferenced buffers sit on an LRU list and are reclaimed when
 * the cache exceeds its byte budget; dirty buffers are written back in
 * address order by xk_buf_flush().
 */
#ifndef XFSKIT_BUF_H
#define XFSKIT_BUF_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>

struct xk_mount;
struct xk_buf;

/* daddr of a finding that is not about one block. */
#define XK_NO_DADDR	((uint64_t)-1)

/* Why a verifier rejected a block. */
struct xk_fail {
	const char	*structure;	/* "AGF", "bnobt block", ... */
	uint64_t	daddr;		/* where, in 512-byte units */
	int64_t		agno;		/* -1 when not per-AG */
	uint64_t	ino;		/* owning inode, 0 when none */
	const char	*check;		/* which rule: "magic", "crc", ... */
	int		has_values;
	uint64_t	expected;
	uint64_t	found;
	int		crc_bad;	/* CRC also failed (structural error) */
	char		detail[160];	/* free text, may be empty */
};

/* Fill a failure site; returns XK_ECORRUPT for tail calls. */
int xk_fail_set(struct xk_fail *f, const char *check, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int xk_fail_val(struct xk_fail *f, const char *check, uint64_t expected,
		uint64_t found);
/* One line: "AGF at daddr 1 (AG 0): bad magic: expected 0x..., found ..." */
void xk_fail_format(const struct xk_fail *f, char *out, size_t len);

#define XK_NO_CRC	((size_t)-1)

struct xk_buf_ops {
	const char	*name;
	size_t		crc_off;	/* XK_NO_CRC if the block has none */
	size_t		lsn_off;	/* 0 if the block has no LSN */
	/* Structure checks after the CRC passed (or failed). */
	int		(*verify)(struct xk_buf *bp, struct xk_fail *f);
	/*
	 * Checksums that are not one per block (dquot records carry one
	 * each, crc_off is XK_NO_CRC): whether they all match, checked on
	 * read like a block CRC, and their recomputation on write.
	 */
	int		(*crc_ok)(const struct xk_buf *bp);
	void		(*crc_update)(struct xk_buf *bp);
};

#define XK_BUF_DIRTY	(1u << 0)
#define XK_BUF_UPTODATE	(1u << 1)
#define XK_BUF_VERIFIED	(1u << 2)	/* error/fail hold a current verdict */

struct xk_buf {
	struct xk_mount	*mp;
	uint64_t	daddr;
	uint32_t	len;		/* bytes */
	uint8_t		*data;
	unsigned int	flags;
	int		refs;
	const struct xk_buf_ops *ops;
	int		error;		/* result of the last verification */
	struct xk_fail	fail;
	/* AG and inode context a verifier may check ownership against. */
	int64_t		agno;
	uint64_t	owner;
	/* cache links */
	struct xk_buf	*hnext;
	struct xk_buf	*lprev, *lnext;
};

/* Read flags */
#define XK_READ_SALVAGE	(1u << 0)	/* hand back a buffer that failed */
#define XK_READ_NOVERIFY (1u << 1)	/* raw read, no verifier at all */

/*
 * Read and verify a buffer.  On verification failure returns XK_EBADCRC
 * or XK_ECORRUPT; with XK_READ_SALVAGE *bpp is still set (release it),
 * otherwise *bpp is NULL.  bp->fail says what failed.
 */
XK_MUST_CHECK int xk_buf_read(struct xk_mount *mp, uint64_t daddr, uint32_t len,
			      const struct xk_buf_ops *ops, unsigned int flags,
			      struct xk_buf **bpp);
/*
 * The same, with the context the verifier checks ownership against: the
 * AG the block belongs to (-1 for none) and the owning inode (0 for none).
 */
XK_MUST_CHECK int xk_buf_read_ctx(struct xk_mount *mp, uint64_t daddr,
				  uint32_t len, const struct xk_buf_ops *ops,
				  int64_t agno, uint64_t owner,
				  unsigned int flags, struct xk_buf **bpp);
/* A buffer for a block about to be written whole: zeroed, not read. */
XK_MUST_CHECK int xk_buf_get(struct xk_mount *mp, uint64_t daddr, uint32_t len,
			     const struct xk_buf_ops *ops, struct xk_buf **bpp);
void xk_buf_release(struct xk_buf *bp);
/* Start reading a range that is not cached yet; never blocks for it. */
void xk_buf_readahead(struct xk_mount *mp, uint64_t daddr, uint32_t len);
void xk_buf_dirty(struct xk_buf *bp);
/* Run the verifier on an in-memory buffer (after edits, or a re-type). */
int xk_buf_verify(struct xk_buf *bp);
/* Where bytes outside the cache claim to be, for xk_buf_verify_mem(). */
struct xk_buf_site {
	uint64_t	daddr;		/* 512-byte units */
	int64_t		agno;		/* -1 when not per-AG */
	uint64_t	owner;		/* owning inode, 0 when none */
};
/*
 * Run ops' structure verifier on len bytes at data (not the CRC) as the
 * cache would on a buffer at site: for blocks built or read outside the
 * cache.  0 when accepted (or ops has no verifier), else the verifier's
 * negative errno with f filled.
 */
int xk_buf_verify_mem(struct xk_mount *mp, const struct xk_buf_ops *ops,
		      uint8_t *data, uint32_t len,
		      const struct xk_buf_site *site, struct xk_fail *f);
/* Write one buffer now: structure check, CRC, then I/O. */
XK_MUST_CHECK int xk_buf_write(struct xk_buf *bp);
/* Write one buffer now with no verifier and no CRC update (db write -c). */
XK_MUST_CHECK int xk_buf_write_raw(struct xk_buf *bp);
/* Write back every dirty buffer, in disk address order. */
XK_MUST_CHECK int xk_buf_flush(struct xk_mount *mp);
/*
 * Run the write-side verifier on every dirty buffer (checks, LSN, CRC)
 * and keep it dirty: a read-only dry run then reads back what a real
 * run would have written.
 */
XK_MUST_CHECK int xk_buf_seal(struct xk_mount *mp);
/* Drop every dirty, unreferenced buffer unwritten (an abandoned update). */
void xk_buf_discard_dirty(struct xk_mount *mp);
/* Drop a buffer from the cache (after the device was written behind it). */
void xk_buf_invalidate(struct xk_mount *mp, uint64_t daddr, uint32_t len);

#endif /* XFSKIT_BUF_H */
