/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pieces shared by directories and extended attributes: the "dabtree"
 * (directory/attribute btree) block info header that links sibling blocks
 * and carries the v5 self-description, the interior node format, and the
 * name hash that orders both trees.  dir.h and attr.h include this file.
 *
 * Dabtree links (forw, back, before) are logical block numbers within the
 * owning inode's fork, not disk addresses.
 */
#ifndef XFSKIT_FORMAT_DA_H
#define XFSKIT_FORMAT_DA_H

#include <stddef.h>
#include <stdint.h>
#include <xfskit/endian.h>

#define XK_DA3_NODE_MAGIC	0x3ebe		/* interior node */
#define XK_DA_NODE_MAXDEPTH	5

/* Links and magic, common to v4 and v5 blocks: 12 bytes. */
struct xk_da_blkinfo {
	xk_be32	forw;			/* next block at this level */
	xk_be32	back;			/* previous block at this level */
	xk_be16	magic;
	xk_be16	pad;
};

/* The v5 form: the v4 header followed by CRC and identity. */
struct xk_da3_blkinfo {
	struct xk_da_blkinfo hdr;
	uint8_t	crc[4];			/* CRC32c, little-endian */
	xk_be64	blkno;			/* disk address (512-byte units) */
	xk_be64	lsn;
	uint8_t	uuid[16];		/* sb_meta_uuid */
	xk_be64	owner;			/* inode number */
};

_Static_assert(sizeof(struct xk_da_blkinfo) == 12, "xk_da_blkinfo: size");
_Static_assert(sizeof(struct xk_da3_blkinfo) == 56, "xk_da3_blkinfo: size");
_Static_assert(offsetof(struct xk_da3_blkinfo, crc) == 12,
	       "xk_da3_blkinfo: crc offset");
_Static_assert(offsetof(struct xk_da3_blkinfo, lsn) == 24,
	       "xk_da3_blkinfo: lsn offset");

/* Interior node: header, then count entries sorted by hashval. */
struct xk_da3_node_hdr {
	struct xk_da3_blkinfo info;
	xk_be16	count;
	xk_be16	level;			/* leaves are level 0 */
	xk_be32	pad32;
};

struct xk_da_node_entry {
	xk_be32	hashval;		/* highest hash in the subtree */
	xk_be32	before;			/* logical block of the subtree */
};

#define XK_DA3_NODE_CRC_OFF	offsetof(struct xk_da3_node_hdr, info.crc)

_Static_assert(sizeof(struct xk_da3_node_hdr) == 64, "xk_da3_node_hdr: size");
_Static_assert(offsetof(struct xk_da3_node_hdr, info.crc) == 12,
	       "xk_da3_node_hdr: crc offset");
_Static_assert(offsetof(struct xk_da3_node_hdr, info.lsn) == 24,
	       "xk_da3_node_hdr: lsn offset");
_Static_assert(sizeof(struct xk_da_node_entry) == 8, "xk_da_node_entry: size");

/* The i-th (0-based) entry of a node block. */
static inline struct xk_da_node_entry *
xk_da3_node_entry(const struct xk_da3_node_hdr *hdr, unsigned int i)
{
	return (struct xk_da_node_entry *)((uint8_t *)hdr +
					   sizeof(struct xk_da3_node_hdr)) + i;
}

/* Entries a node block of blksize bytes can hold. */
static inline unsigned int xk_da3_node_maxents(unsigned int blksize)
{
	return (blksize - sizeof(struct xk_da3_node_hdr)) /
	       sizeof(struct xk_da_node_entry);
}

/*
 * Name hash.  Bytes are folded in groups of four: each group contributes
 * its bytes shifted by 21, 14, 7 and 0 bits, XORed with the running hash
 * rotated left by 28.  A tail of n (1..3) bytes is folded the same way
 * with shifts 7*(n-1) ... 0 and a rotation of 7*n.
 */
static inline uint32_t xk_da_rol32(uint32_t x, unsigned int n)
{
	return (x << n) | (x >> (32 - n));
}

static inline uint32_t xk_da_hashname(const uint8_t *name, int len)
{
	uint32_t h = 0;
	int rem;

	while (len >= 4) {
		h = xk_da_rol32(h, 28) ^ ((uint32_t)name[0] << 21) ^
		    ((uint32_t)name[1] << 14) ^ ((uint32_t)name[2] << 7) ^
		    name[3];
		name += 4;
		len -= 4;
	}
	if (len <= 0)
		return h;
	h = xk_da_rol32(h, 7 * (unsigned int)len);
	for (rem = len - 1; rem >= 0; rem--, name++)
		h ^= (uint32_t)name[0] << (7 * rem);
	return h;
}

/* Known values: every directory's "." and ".." entries hash to these. */
#define XK_DA_HASH_DOT		0x0000002eu
#define XK_DA_HASH_DOTDOT	0x0000172eu

#endif /* XFSKIT_FORMAT_DA_H */
