/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The device scan: one sequential pass over the data device that finds
 * every v5 metadata block by its self-description, for reassembling a
 * filesystem whose structure no longer leads to its blocks.
 *
 * A block whose magic is a v5 metadata magic is taken as ours only when,
 * in this order: its UUID is the metadata UUID; its self address (blkno,
 * or for an inode its number, for an AG header its AG and sector) is
 * where it was found, which is what rejects the blocks of an image file
 * stored in the filesystem even when that image is a copy of this very
 * filesystem; its CRC matches; and its structure passes the verifier the
 * rest of libfs reads it with.  The first rule that fails is the
 * rejection's reason, counted per type.
 *
 * The scan reads the device itself in large reads (the buffer cache is
 * not used, so it sees what is on disk, not dirty buffers), AGs in
 * parallel, through the handle's device (O_DIRECT when the handle has
 * it, fault injection).  The internal log is not read: its blocks are
 * never metadata in place.  A read that fails is retried block by block;
 * what still cannot be read is reported as unread ranges, and the scan
 * goes on.
 */
#ifndef XFSKIT_SCAN_H
#define XFSKIT_SCAN_H

#include <stdint.h>

#include <xfskit/errors.h>
#include <xfskit/vec.h>

struct xk_mount;

enum xk_scan_type {
	XK_SCAN_SB,
	XK_SCAN_AGF,
	XK_SCAN_AGI,
	XK_SCAN_AGFL,
	XK_SCAN_BNOBT,
	XK_SCAN_CNTBT,
	XK_SCAN_INOBT,
	XK_SCAN_FINOBT,
	XK_SCAN_RMAPBT,
	XK_SCAN_REFCBT,
	XK_SCAN_INODES,		/* one inode cluster buffer */
	XK_SCAN_BMBT,
	XK_SCAN_DIR3_BLOCK,
	XK_SCAN_DIR3_DATA,
	XK_SCAN_DIR3_LEAF1,
	XK_SCAN_DIR3_LEAFN,
	XK_SCAN_DIR3_FREE,
	XK_SCAN_DA3_NODE,	/* directory or attribute fork */
	XK_SCAN_ATTR3_LEAF,
	XK_SCAN_ATTR3_RMT,
	XK_SCAN_SYMLINK,
	XK_SCAN_RTRMAPBT,	/* a realtime group's btrees, rooted in */
	XK_SCAN_RTREFCBT,	/* their metadata inodes */
	XK_SCAN_TYPE_NR
};

enum xk_scan_verdict {
	XK_SCAN_OK,
	XK_SCAN_BAD_UUID,	/* another filesystem's block */
	XK_SCAN_BAD_ADDR,	/* ours, but not where it says it is */
	XK_SCAN_BAD_CRC,
	XK_SCAN_BAD_STRUCT,	/* the verifier rejected it */
	XK_SCAN_VERDICT_NR
};

/* No file offset is known for this block. */
#define XK_SCAN_NO_OFFSET	UINT64_MAX

/*
 * One block found.  owner is the AG number for AG headers and AG btree
 * blocks, the first inode's number for an inode cluster, and the owning
 * inode for the rest.  offset, where the block says it:
 *   bmbt                 file block of its first record or key;
 *   dir3 block, leaf1    their fixed file block (0, the leaf offset);
 *   dir3 free            file block from its first data block index;
 *   symlink, attr3 rmt   byte offset of the piece in the target or value;
 *   others               XK_SCAN_NO_OFFSET.
 * level is the btree or dabtree level (0 for leaves and the rest).
 */
struct xk_scan_ent {
	uint64_t	daddr;
	uint64_t	owner;
	uint64_t	offset;
	uint32_t	len;		/* bytes */
	uint16_t	level;
	uint8_t		type;		/* enum xk_scan_type */
	uint8_t		verdict;	/* enum xk_scan_verdict */
};

/* A range that could not be read, in 512-byte units. */
struct xk_scan_unread {
	uint64_t	daddr;
	uint64_t	len;
	int		err;
};

#define XK_SCAN_KEEP_REJECTED	(1u << 0)	/* list rejected blocks too */

struct xk_scan_opts {
	unsigned int	threads;	/* 0: one per CPU, at most agcount */
	unsigned int	flags;		/* XK_SCAN_* */
	uint32_t	read_size;	/* bytes per read, 0: 4 MiB */
	/* Where the lists may spill (NULL: they stay on the heap). */
	struct xk_vec_spill *spill;
	/*
	 * Called after each read with the bytes done and the total to do,
	 * from one thread at a time; a non-zero return stops the scan
	 * (-ECANCELED).  May be NULL.
	 */
	int		(*progress)(void *ctx, uint64_t done, uint64_t total);
	void		*progress_ctx;
};

struct xk_scan {
	/* Accepted blocks, sorted by type, owner, level, offset, daddr. */
	XK_VEC_OF(struct xk_scan_ent) ents;
	/* Rejected candidates (XK_SCAN_KEEP_REJECTED), sorted by daddr. */
	XK_VEC_OF(struct xk_scan_ent) rejected;
	/* Ranges that could not be read, sorted. */
	XK_VEC_OF(struct xk_scan_unread) unread;
	uint64_t	counts[XK_SCAN_TYPE_NR][XK_SCAN_VERDICT_NR];
	uint64_t	bytes_total;	/* to read (the device minus the log) */
	uint64_t	bytes_read;
	uint64_t	read_errors;	/* reads that failed, retries included */
	uint64_t	unread_bytes;
};

/*
 * Scan the data device into *res (zero it first; free it with
 * xk_scan_free whatever the result).  Returns 0 (the scan may still have
 * unread ranges: see res->unread), -ECANCELED when progress stopped it,
 * or an operational error (-ENOMEM, ...).
 */
XK_MUST_CHECK int xk_scan_device(struct xk_mount *mp,
				 const struct xk_scan_opts *opts,
				 struct xk_scan *res);
void xk_scan_free(struct xk_scan *res);

/*
 * The accepted entries of one type and owner: res->ents.v[*first ..
 * *first + *count - 1], ordered by level, offset and address.
 */
void xk_scan_lookup(const struct xk_scan *res, enum xk_scan_type type,
		    uint64_t owner, size_t *first, size_t *count);

/* Short names ("bnobt", "inodes", "dir3-data", ...) and their parser. */
const char *xk_scan_type_name(enum xk_scan_type type);
const char *xk_scan_verdict_name(enum xk_scan_verdict verdict);
/* The type of a name, or -EINVAL. */
int xk_scan_type_parse(const char *name);
/* Whether the type's owner is an AG (else an inode). */
int xk_scan_type_ag_owned(enum xk_scan_type type);

#endif /* XFSKIT_SCAN_H */
