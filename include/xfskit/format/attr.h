/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Extended attribute formats (v3, the v5 CRC-enabled attributes).
 *
 * An attribute fork is one of:
 *  - shortform: a 4-byte header and packed (namelen, valuelen, flags,
 *    name, value) entries inside the inode's attr fork;
 *  - leaf: one leaf block (logical block 0 of the fork);
 *  - node: a dabtree (DA3 node blocks, see da.h) over leaf blocks.
 * A leaf block holds a header, an array of entries sorted by name hash
 * growing down from the header, and the name/value records they point at
 * packed up from the end of the block.  A value too large for the leaf is
 * "remote": stored in its own blocks of the attr fork, each block starting
 * with a struct xk_attr3_rmt_hdr.
 *
 * The dabtree block info and node structures live in da.h, which this
 * file includes (as does dir.h).
 */
#ifndef XFSKIT_FORMAT_ATTR_H
#define XFSKIT_FORMAT_ATTR_H

#include <stddef.h>
#include <stdint.h>
#include <xfskit/endian.h>
#include <xfskit/format/da.h>

#define XK_ATTR3_LEAF_MAGIC	0x3bee
#define XK_ATTR3_RMT_MAGIC	0x5841524d	/* "XARM" */

/* Entry flags: storage and namespace. */
#define XK_ATTR_LOCAL		(1u << 0)	/* value is in this leaf */
#define XK_ATTR_ROOT		(1u << 1)	/* "trusted." namespace */
#define XK_ATTR_SECURE		(1u << 2)	/* "security." namespace */
#define XK_ATTR_PARENT		(1u << 3)	/* parent pointer (newer) */
#define XK_ATTR_INCOMPLETE	(1u << 7)	/* being set or removed */
/* No namespace bit means "user.". */
#define XK_ATTR_NSP_ONDISK_MASK	(XK_ATTR_ROOT | XK_ATTR_SECURE | \
				 XK_ATTR_PARENT)

#define XK_ATTR_NAME_MAX	255
#define XK_XATTR_SIZE_MAX	(1 << 16)	/* largest value */

/* ---- shortform (in the inode) ---- */

struct xk_attr_sf_hdr {
	xk_be16	totsize;		/* bytes including this header */
	uint8_t	count;
	uint8_t	padding;
};

struct xk_attr_sf_entry {
	uint8_t	namelen;
	uint8_t	valuelen;
	uint8_t	flags;			/* namespace bits only */
	uint8_t	nameval[];		/* name then value, no NULs */
};

_Static_assert(sizeof(struct xk_attr_sf_hdr) == 4, "xk_attr_sf_hdr: size");
_Static_assert(offsetof(struct xk_attr_sf_hdr, count) == 2,
	       "xk_attr_sf_hdr: count offset");
_Static_assert(sizeof(struct xk_attr_sf_entry) == 3,
	       "xk_attr_sf_entry: size");
_Static_assert(offsetof(struct xk_attr_sf_entry, nameval) == 3,
	       "xk_attr_sf_entry: nameval offset");

/* Most name + value bytes a shortform entry can describe. */
#define XK_ATTR_SF_ENTSIZE_MAX	255

static inline unsigned int xk_attr_sf_entsize_byname(unsigned int namelen,
						     unsigned int valuelen)
{
	return sizeof(struct xk_attr_sf_entry) + namelen + valuelen;
}

static inline unsigned int xk_attr_sf_entsize(const struct xk_attr_sf_entry *e)
{
	return xk_attr_sf_entsize_byname(e->namelen, e->valuelen);
}

static inline struct xk_attr_sf_entry *
xk_attr_sf_firstentry(const struct xk_attr_sf_hdr *hdr)
{
	return (struct xk_attr_sf_entry *)((uint8_t *)hdr +
					   sizeof(struct xk_attr_sf_hdr));
}

static inline struct xk_attr_sf_entry *
xk_attr_sf_nextentry(const struct xk_attr_sf_entry *e)
{
	return (struct xk_attr_sf_entry *)((uint8_t *)e +
					   xk_attr_sf_entsize(e));
}

/* ---- leaf blocks ---- */

#define XK_ATTR_LEAF_MAPSIZE	3	/* free-region slots in the header */

struct xk_attr_leaf_map {
	xk_be16	base;			/* start of a free region */
	xk_be16	size;
};

struct xk_attr3_leaf_hdr {
	struct xk_da3_blkinfo info;
	xk_be16	count;			/* entries */
	xk_be16	usedbytes;		/* bytes of name/value records */
	xk_be16	firstused;		/* lowest name/value offset */
	uint8_t	holes;			/* non-zero: needs compaction */
	uint8_t	pad1;
	struct xk_attr_leaf_map freemap[XK_ATTR_LEAF_MAPSIZE];
	xk_be32	pad2;
};

#define XK_ATTR3_LEAF_CRC_OFF	offsetof(struct xk_attr3_leaf_hdr, info.crc)
/*
 * firstused is 16 bits; a 64 KiB block's "nothing used yet" value (the
 * block size) does not fit, so it is stored as this instead.
 */
#define XK_ATTR3_LEAF_NULLOFF	0

struct xk_attr_leaf_entry {
	xk_be32	hashval;		/* xk_da_hashname of the name */
	xk_be16	nameidx;		/* block offset of the name record */
	uint8_t	flags;			/* XK_ATTR_* */
	uint8_t	pad2;
};

_Static_assert(sizeof(struct xk_attr_leaf_map) == 4,
	       "xk_attr_leaf_map: size");
_Static_assert(sizeof(struct xk_attr3_leaf_hdr) == 80,
	       "xk_attr3_leaf_hdr: size");
_Static_assert(offsetof(struct xk_attr3_leaf_hdr, info.crc) == 12,
	       "xk_attr3_leaf_hdr: crc offset");
_Static_assert(offsetof(struct xk_attr3_leaf_hdr, info.lsn) == 24,
	       "xk_attr3_leaf_hdr: lsn offset");
_Static_assert(offsetof(struct xk_attr3_leaf_hdr, freemap) == 64,
	       "xk_attr3_leaf_hdr: freemap offset");
_Static_assert(sizeof(struct xk_attr_leaf_entry) == 8,
	       "xk_attr_leaf_entry: size");

/*
 * Name/value records, 4-byte aligned.  sizeof covers the fixed part only:
 * the kernel's sizes (4 and 12) include tail padding that the name
 * overlaps, so use the entsize helpers, never sizeof, for space.
 */
struct xk_attr_leaf_name_local {
	xk_be16	valuelen;
	uint8_t	namelen;
	uint8_t	nameval[];		/* name then value */
};

struct xk_attr_leaf_name_remote {
	xk_be32	valueblk;		/* first logical block of the value */
	xk_be32	valuelen;
	uint8_t	namelen;
	uint8_t	name[];
};

_Static_assert(sizeof(struct xk_attr_leaf_name_local) == 3,
	       "xk_attr_leaf_name_local: fixed part");
_Static_assert(offsetof(struct xk_attr_leaf_name_local, namelen) == 2,
	       "xk_attr_leaf_name_local: namelen offset");
_Static_assert(offsetof(struct xk_attr_leaf_name_local, nameval) == 3,
	       "xk_attr_leaf_name_local: nameval offset");
_Static_assert(sizeof(struct xk_attr_leaf_name_remote) == 9,
	       "xk_attr_leaf_name_remote: fixed part");
_Static_assert(offsetof(struct xk_attr_leaf_name_remote, valuelen) == 4,
	       "xk_attr_leaf_name_remote: valuelen offset");
_Static_assert(offsetof(struct xk_attr_leaf_name_remote, name) == 9,
	       "xk_attr_leaf_name_remote: name offset");

#define XK_ATTR_LEAF_NAME_ALIGN	4

static inline unsigned int xk_attr_round4(unsigned int n)
{
	return (n + XK_ATTR_LEAF_NAME_ALIGN - 1) &
	       ~(XK_ATTR_LEAF_NAME_ALIGN - 1u);
}

/* Bytes a local record uses: round_up(3 + namelen + valuelen, 4). */
static inline unsigned int xk_attr_leaf_entsize_local(unsigned int namelen,
						      unsigned int valuelen)
{
	return xk_attr_round4(3 + namelen + valuelen);
}

/*
 * Bytes a remote record uses: round_up(11 + namelen, 4).  The 11 is the
 * 9-byte fixed part plus two bytes the historic struct padding added;
 * it is part of the format.
 */
static inline unsigned int xk_attr_leaf_entsize_remote(unsigned int namelen)
{
	return xk_attr_round4(11 + namelen);
}

/* Largest local record a leaf of blksize bytes accepts (3/4 of it). */
static inline unsigned int xk_attr_leaf_entsize_local_max(unsigned int blksz)
{
	return (blksz >> 1) + (blksz >> 2);
}

static inline struct xk_attr_leaf_entry *
xk_attr3_leaf_entryp(const struct xk_attr3_leaf_hdr *hdr)
{
	return (struct xk_attr_leaf_entry *)((uint8_t *)hdr +
					     sizeof(struct xk_attr3_leaf_hdr));
}

/* Start of entry i's name record (local or remote per its flags). */
static inline uint8_t *xk_attr3_leaf_name(const struct xk_attr3_leaf_hdr *hdr,
					  unsigned int i)
{
	return (uint8_t *)hdr +
	       xk_be16_get(xk_attr3_leaf_entryp(hdr)[i].nameidx);
}

/* ---- remote value blocks ---- */

struct xk_attr3_rmt_hdr {
	xk_be32	rm_magic;
	xk_be32	rm_offset;		/* byte offset of this piece */
	xk_be32	rm_bytes;		/* value bytes in this block */
	uint8_t	rm_crc[4];		/* CRC32c, little-endian */
	uint8_t	rm_uuid[16];		/* sb_meta_uuid */
	xk_be64	rm_owner;		/* inode number */
	xk_be64	rm_blkno;		/* disk address (512-byte units) */
	xk_be64	rm_lsn;
};

#define XK_ATTR3_RMT_CRC_OFF	offsetof(struct xk_attr3_rmt_hdr, rm_crc)

_Static_assert(sizeof(struct xk_attr3_rmt_hdr) == 56,
	       "xk_attr3_rmt_hdr: size");
_Static_assert(offsetof(struct xk_attr3_rmt_hdr, rm_crc) == 12,
	       "xk_attr3_rmt_hdr: crc offset");
_Static_assert(offsetof(struct xk_attr3_rmt_hdr, rm_lsn) == 48,
	       "xk_attr3_rmt_hdr: lsn offset");

/* Value bytes one remote block of bufsize bytes carries (v5). */
static inline unsigned int xk_attr3_rmt_buf_space(unsigned int bufsize)
{
	return bufsize - sizeof(struct xk_attr3_rmt_hdr);
}

/* Filesystem blocks a remote value of valuelen bytes occupies. */
static inline unsigned int xk_attr3_rmt_blocks(unsigned int blocksize,
					       unsigned int valuelen)
{
	unsigned int space = xk_attr3_rmt_buf_space(blocksize);

	return (valuelen + space - 1) / space;
}

/* ---- parent pointers (the PARENT incompat feature) ---- */

/*
 * On a filesystem with parent pointers every directory entry has a
 * matching attribute on the inode it names: namespace XK_ATTR_PARENT,
 * the attribute name is the entry's name (1..255 bytes, no '/' or NUL),
 * the value this 12-byte record naming the directory.  One inode has as
 * many as it has links; two may share a name (hard links of the same
 * name in two directories), so a parent pointer is identified by name
 * and value together.  Its hash (the leaf entries' order) mixes the
 * directory's inode number into the entry name's hash so those do not
 * collide.  The root directory has none.
 */
struct xk_parent_rec {
	xk_be64	p_ino;			/* the directory */
	xk_be32	p_gen;			/* its generation */
} __attribute__((packed));

_Static_assert(sizeof(struct xk_parent_rec) == 12, "xk_parent_rec: size");

/* Hash of a parent pointer named name from directory parent_ino. */
static inline uint32_t xk_pptr_hashname(const uint8_t *name, int len,
					uint64_t parent_ino)
{
	return xk_da_hashname(name, len) ^ (uint32_t)(parent_ino >> 32) ^
	       (uint32_t)parent_ino;
}

/* Whether name can be a parent pointer's (a directory entry's) name. */
static inline int xk_pptr_name_ok(const uint8_t *name, unsigned int len)
{
	if (len == 0 || len > XK_ATTR_NAME_MAX)
		return 0;
	for (unsigned int i = 0; i < len; i++)
		if (name[i] == 0 || name[i] == '/')
			return 0;
	return 1;
}

#endif /* XFSKIT_FORMAT_ATTR_H */
