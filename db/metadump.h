/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The metadump engine shared by xfskit-db's metadump command and the
 * xfskit-metadump program: the two dump formats xfs_mdrestore reads, the
 * options, and the per-block rewriting (zeroing stale bytes, obfuscating
 * names, symlink targets and attribute values while keeping every
 * directory and attribute hash, and refreshing CRCs that were valid).
 *
 * Format notes (from xfsprogs' xfs_metadump.h and xfs_mdrestore(8)):
 *
 *  v1: a sequence of chunks.  Each chunk is one 512-byte header --
 *      be32 magic "XFSM", be16 count, u8 blocklog (9: 512-byte blocks),
 *      u8 info flags, then up to 63 be64 disk addresses -- followed by
 *      count 512-byte blocks, one per address.  The first address of the
 *      dump is 0 (the primary superblock); a chunk with fewer than 63
 *      blocks (possibly none) ends the dump.
 *
 *  v2: a 24-byte header -- be32 magic "XMD2", be32 version 2, be32
 *      compat flags, be32 incompat flags, be64 reserved (0) -- then
 *      extents until the end of the file, each a 12-byte header (be64
 *      address: low 54 bits the 512-byte disk address, the next 2 bits
 *      the device, 0 for data, 1 for the external log, 2 for the
 *      realtime device; be32 length in 512-byte units) followed by its
 *      bytes.  The first extent is the primary superblock sector.  An
 *      external log is dumped whole from the start of its device, with
 *      compat flag EXTLOG; a classic realtime volume holds no metadata
 *      (its bitmap and summary are on the data device): xfs_metadump
 *      7.2 dumps nothing of it either.
 */
#ifndef XFSKIT_DB_METADUMP_H
#define XFSKIT_DB_METADUMP_H

#include <stdint.h>
#include <stdio.h>

#include <xfskit/libfs.h>

#define MD_MAGIC_V1		0x5846534du	/* "XFSM" */
#define MD_MAGIC_V2		0x584d4432u	/* "XMD2" */
#define MD_V1_BLOCKLOG		9
#define MD_V1_BLOCKSIZE		(1u << MD_V1_BLOCKLOG)
#define MD_V1_HDR_SIZE		8
#define MD_V1_MAX_INDICES	((MD_V1_BLOCKSIZE - MD_V1_HDR_SIZE) / 8)

/* v1 mb_info bits */
#define MD_V1_INFO_FLAGS	(1u << 0)	/* the bits below are valid */
#define MD_V1_OBFUSCATED	(1u << 1)
#define MD_V1_FULLBLOCKS	(1u << 2)
#define MD_V1_DIRTYLOG		(1u << 3)

/* v2 header and its compat flags */
#define MD_V2_HDR_SIZE		24
#define MD_V2_EXT_SIZE		12
#define MD_V2_COMPAT_OBFUSCATED	(1u << 0)
#define MD_V2_COMPAT_FULLBLOCKS	(1u << 1)
#define MD_V2_COMPAT_DIRTYLOG	(1u << 2)
#define MD_V2_COMPAT_EXTLOG	(1u << 3)
#define MD_V2_INCOMPAT_RTDEV	(1u << 0)
#define MD_V2_DEV_SHIFT		54
#define MD_V2_DADDR_MASK	((1ULL << MD_V2_DEV_SHIFT) - 1)
#define MD_V2_DEV_MASK		(3ULL << MD_V2_DEV_SHIFT)
#define MD_V2_DEV_DATA		0	/* the device numbers of an extent */
#define MD_V2_DEV_LOG		1
#define MD_V2_DEV_RT		2

struct md_opts {
	int		obfuscate;	/* not -o */
	int		zero_stale;	/* not -a */
	int		version;	/* 1 or 2 */
	int		progress;	/* -g */
	uint64_t	seed;		/* 0: from the clock */
};

/* Where messages go: the caller prints them (db_err or stderr). */
typedef void (*md_warn_fn)(void *priv, const char *msg);

struct md_stats {
	uint64_t	blocks;		/* distinct metadata objects */
	uint64_t	bytes;		/* of metadata written */
	uint64_t	inodes;
	uint64_t	names;		/* names obfuscated */
	uint64_t	names_kept;	/* too short or no solution */
	unsigned int	warnings;
	int		dirty_log;
	/* What became of the log: LOG_* below, and the blocks scrubbed. */
	int		log_action;
	uint64_t	log_stale;
};

#define MD_LOG_KEPT	0	/* carried as it is */
#define MD_LOG_CLEARED	1	/* clean: replaced by an empty log */
#define MD_LOG_SCRUBBED	2	/* dirty: stale blocks scrubbed */

/*
 * Dump the metadata of mp into out.  Returns 0, or a negative errno when
 * the output could not be written; damage in the image only produces
 * warnings (the structure is skipped, what can be read is dumped).
 */
int md_dump(struct xk_mount *mp, FILE *out, const struct md_opts *o,
	    md_warn_fn warn, void *priv, struct md_stats *st);

/* ---- metadump_obf.c: rewriting one object in memory ---- */

struct md_rng {
	uint64_t	s;
};

uint64_t md_rand(struct md_rng *r);

/* Names already given out in the directory (or attr fork) at hand. */
struct md_nameset {
	uint64_t	*h;		/* FNV hashes of names given out */
	size_t		n, cap;
};

void md_nameset_reset(struct md_nameset *ns);
void md_nameset_free(struct md_nameset *ns);

/* What the rewriting functions need; one per dump. */
struct md_obf {
	struct xk_mount	*mp;
	int		obfuscate;
	int		zero_stale;
	struct md_rng	rng;
	struct md_nameset names;
	uint64_t	nobf, nkept;
};

/*
 * Replace name[0..len) by a different name of the same length and the
 * same xk_da_hashname, made of printable bytes other than '/' when
 * possible.  Returns 0, or -ENOENT when no other name was found (names
 * shorter than 5 bytes have none in practice); the name is then kept.
 */
int md_obf_name(struct md_obf *ob, uint8_t *name, unsigned int len);

/*
 * Rewrite one object in place; each returns whether it changed bytes.
 * A block whose CRC was valid gets a fresh one; a block whose CRC was
 * already bad keeps it bad.
 */
int md_fix_header(struct md_obf *ob, uint8_t *buf, uint32_t len,
		  size_t used, size_t crc_off);
int md_fix_agfl(struct md_obf *ob, uint8_t *buf, uint32_t len,
		uint32_t first, uint32_t last, uint32_t count);
int md_fix_btree(struct md_obf *ob, const struct xk_btree_ops *ops,
		 uint8_t *buf, uint32_t len);
int md_fix_inode(struct md_obf *ob, uint8_t *buf, uint32_t isize);
int md_fix_dir(struct md_obf *ob, uint8_t *buf, uint32_t len);
int md_fix_attr(struct md_obf *ob, uint8_t *buf, uint32_t len);
int md_fix_symlink(struct md_obf *ob, uint8_t *buf, uint32_t len);

/*
 * metadump_log.c: the log of a dump that does not keep everything.
 *
 * md_log_clear: the nbb-block log in buf made an empty, clean log one
 * cycle past head_cycle, as xfs_metadump makes it (uuid: the
 * filesystem's, logsunit: sb_logsunit in bytes).  Returns 0, or -EINVAL
 * (buf unchanged) when the geometry does not allow it.
 *
 * md_log_scrub_stale: in a dirty log, every block from head up to tail
 * (circularly: the blocks no replay reads) keeps only its cycle number
 * (its first word; a record header its magic and h_cycle).  Returns the
 * blocks scrubbed.
 */
int md_log_clear(uint8_t *buf, uint32_t nbb, const uint8_t *uuid,
		 uint32_t logsunit, uint32_t head_cycle);
uint64_t md_log_scrub_stale(uint8_t *buf, uint32_t nbb, uint32_t head,
			    uint32_t tail);

/*
 * What xfskit-metadump and xfskit-db's metadump print about the log of
 * an obfuscated dump whose log keeps names (xfs_metadump warns
 * likewise), or NULL.
 */
const char *md_log_warning(const struct md_opts *o,
			   const struct md_stats *st);

#endif /* XFSKIT_DB_METADUMP_H */
