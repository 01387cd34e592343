/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Allocation group headers: AGF (free space), AGI (inodes) and AGFL (the
 * free list that feeds btree splits).  Each sits in its own sector right
 * after the AG's superblock copy: sector 1, 2 and 3 of the AG.
 */
#ifndef XFSKIT_FORMAT_AG_H
#define XFSKIT_FORMAT_AG_H

#include <stddef.h>
#include <stdint.h>
#include <xfskit/endian.h>

#define XK_AGF_MAGIC		0x58414746	/* "XAGF" */
#define XK_AGI_MAGIC		0x58414749	/* "XAGI" */
#define XK_AGFL_MAGIC		0x5841464c	/* "XAFL" */
#define XK_AGF_VERSION		1
#define XK_AGI_VERSION		1

/* Sector index of each header inside its AG. */
#define XK_SB_SECTOR		0
#define XK_AGF_SECTOR		1
#define XK_AGI_SECTOR		2
#define XK_AGFL_SECTOR		3

/* Indices into agf_roots/agf_levels. */
#define XK_AGF_BNO		0
#define XK_AGF_CNT		1
#define XK_AGF_RMAP		2
#define XK_AGF_NROOTS		3

#define XK_AGI_UNLINKED_BUCKETS	64

/* agf_flags: none defined for v5 at format 1 */

struct xk_agf {
	xk_be32	agf_magicnum;
	xk_be32	agf_versionnum;
	xk_be32	agf_seqno;
	xk_be32	agf_length;
	xk_be32	agf_roots[XK_AGF_NROOTS];
	xk_be32	agf_levels[XK_AGF_NROOTS];
	xk_be32	agf_flfirst;
	xk_be32	agf_fllast;
	xk_be32	agf_flcount;
	xk_be32	agf_freeblks;
	xk_be32	agf_longest;
	xk_be32	agf_btreeblks;
	uint8_t	agf_uuid[16];
	xk_be32	agf_rmap_blocks;
	xk_be32	agf_refcount_blocks;
	xk_be32	agf_refcount_root;
	xk_be32	agf_refcount_level;
	xk_be64	agf_spare64[14];
	xk_be64	agf_lsn;
	uint8_t	agf_crc[4];		/* CRC32c, little-endian */
	xk_be32	agf_spare2;
};

_Static_assert(sizeof(struct xk_agf) == 224, "xk_agf: on-disk size");
_Static_assert(offsetof(struct xk_agf, agf_crc) == 216, "xk_agf: crc offset");
_Static_assert(offsetof(struct xk_agf, agf_lsn) == 208, "xk_agf: lsn offset");

struct xk_agi {
	xk_be32	agi_magicnum;
	xk_be32	agi_versionnum;
	xk_be32	agi_seqno;
	xk_be32	agi_length;
	xk_be32	agi_count;
	xk_be32	agi_root;
	xk_be32	agi_level;
	xk_be32	agi_freecount;
	xk_be32	agi_newino;
	xk_be32	agi_dirino;
	xk_be32	agi_unlinked[XK_AGI_UNLINKED_BUCKETS];
	uint8_t	agi_uuid[16];
	uint8_t	agi_crc[4];		/* CRC32c, little-endian */
	xk_be32	agi_pad32;
	xk_be64	agi_lsn;
	xk_be32	agi_free_root;
	xk_be32	agi_free_level;
	xk_be32	agi_iblocks;
	xk_be32	agi_fblocks;
};

_Static_assert(sizeof(struct xk_agi) == 344, "xk_agi: on-disk size");
_Static_assert(offsetof(struct xk_agi, agi_crc) == 312, "xk_agi: crc offset");
_Static_assert(offsetof(struct xk_agi, agi_lsn) == 320, "xk_agi: lsn offset");

/* The AGFL sector: this header, then an array of be32 AG block numbers. */
struct xk_agfl {
	xk_be32	agfl_magicnum;
	xk_be32	agfl_seqno;
	uint8_t	agfl_uuid[16];
	xk_be64	agfl_lsn;
	uint8_t	agfl_crc[4];		/* CRC32c, little-endian */
};

_Static_assert(sizeof(struct xk_agfl) == 36, "xk_agfl: on-disk size");
_Static_assert(offsetof(struct xk_agfl, agfl_crc) == 32, "xk_agfl: crc");
_Static_assert(offsetof(struct xk_agfl, agfl_lsn) == 24, "xk_agfl: lsn");

/* Number of free-list slots in an AGFL sector of the given size. */
static inline uint32_t xk_agfl_size(uint32_t sectsize)
{
	return (sectsize - (uint32_t)sizeof(struct xk_agfl)) / 4;
}

/* The i-th free-list slot of an AGFL sector. */
static inline xk_be32 *xk_agfl_bno(void *agfl_sector, uint32_t i)
{
	return (xk_be32 *)((uint8_t *)agfl_sector + sizeof(struct xk_agfl)) +
	       i;
}

#endif /* XFSKIT_FORMAT_AG_H */
