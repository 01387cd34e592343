/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The write path: building files, directories, symlinks and xattrs into
 * a filesystem, then making every per-AG index agree with what was built.
 *
 * The builder loads each AG's state once (free extents, reverse
 * mappings, inode chunk records) into memory, allocates from that state
 * while content is written, and on commit rebuilds every per-AG btree
 * (bnobt, cntbt, inobt, finobt, rmapbt, refcountbt) by bulk loading,
 * refills the AGFL and sets every AGF, AGI and superblock counter.
 * Building trees once from sorted records instead of inserting record by
 * record is what makes populating fast, and it is the same step repair
 * uses to rebuild an AG from what it observed.
 *
 * Memory is bounded by the metadata being built, never by file sizes:
 * file content is streamed to the device, and an inode's in-memory
 * description (struct xk_bld_inode) lives only until it is written.
 *
 * Error convention: 0 or a negative errno / XK_E* code, as everywhere in
 * libfs.
 */
#ifndef XFSKIT_BUILD_H
#define XFSKIT_BUILD_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <xfskit/mount.h>

struct xk_bld;

/* One mapping of a fork: nblocks at file block loff live at fsbno. */
struct xk_bld_ext {
	uint64_t	loff;		/* file block */
	uint64_t	fsbno;
	uint32_t	len;		/* blocks, <= XK_MAX_BMBT_EXTLEN */
};

/*
 * Fork formats in the builder.  LOCAL and EXTENTS have the values of
 * XK_DINODE_FMT_LOCAL/EXTENTS; NONE (0, what xk_bld_inode_init leaves)
 * is an absent attr fork or an empty data fork; DEV is the on-disk
 * FMT_DEV, which is 0 on disk and so needs its own value here.  An
 * EXTENTS fork becomes a bmbt on disk when it does not fit.
 */
#define XK_BLD_FMT_NONE		0
#define XK_BLD_FMT_LOCAL	1	/* == XK_DINODE_FMT_LOCAL */
#define XK_BLD_FMT_EXTENTS	2	/* == XK_DINODE_FMT_EXTENTS */
#define XK_BLD_FMT_DEV		8

/* A fork as it is being built. */
struct xk_bld_fork {
	uint8_t		format;		/* XK_BLD_FMT_* */
	/* XK_BLD_FMT_LOCAL (and FMT_DEV): the bytes of the fork. */
	uint8_t		*local;
	uint32_t	local_len;
	/* XK_BLD_FMT_EXTENTS: mappings in loff order (the builder
	 * turns them into a bmbt when they do not fit in the fork). */
	struct xk_bld_ext *ext;
	uint64_t	next, ext_alloc;
	uint64_t	nblocks;	/* blocks mapped (not counting bmbt) */
};

/*
 * An inode being built.  The caller fills the core fields, the forks are
 * filled by xk_bld_file_*, xk_bld_dir, xk_bld_symlink, xk_bld_attrs and
 * xk_bld_dev, then xk_bld_inode_write() lays it into its cluster and
 * frees the fork memory.
 */
struct xk_bld_inode {
	uint64_t	ino;
	uint16_t	mode;		/* type and permission bits */
	uint32_t	uid, gid, projid;
	uint32_t	nlink;
	int64_t		atime_sec, mtime_sec, ctime_sec, crtime_sec;
	uint32_t	atime_nsec, mtime_nsec, ctime_nsec, crtime_nsec;
	uint64_t	size;		/* di_size */
	uint16_t	diflags;	/* XK_DIFLAG_* */
	uint64_t	diflags2;	/* XK_DIFLAG2_* besides BIGTIME/NREXT64 */
	struct xk_bld_fork data;
	struct xk_bld_fork attr;
};

/*
 * Open a builder on a writable mount: loads every AG's free space,
 * reverse mappings and inode chunks from its btrees.  The builder keeps
 * no state outside *bp; the mount must outlive it.
 */
XK_MUST_CHECK int xk_bld_open(struct xk_mount *mp, struct xk_bld **bp);
/*
 * The same on a read-only mount: everything built stays dirty in the
 * cache and is never written (a dry run of log recovery).
 */
XK_MUST_CHECK int xk_bld_open_cached(struct xk_mount *mp, struct xk_bld **bp);
/*
 * Rebuild every per-AG btree, the AGFL, the AGF/AGI counters and the
 * superblock counters from the builder's state; buffers are dirtied in
 * the cache (xk_buf_flush or xk_mount_close writes them).
 */
XK_MUST_CHECK int xk_bld_commit(struct xk_bld *b);
void xk_bld_free(struct xk_bld *b);

/*
 * Repair's entry: start from observed state instead of the on-disk
 * btrees.  Every AG starts empty but for its fixed headers (the sector
 * headers) and the internal log; the caller then claims every extent it
 * found in use (inode forks with their owner and offset, bmbt blocks,
 * inode chunks through xk_bld_add_ichunk) and commits.  Claims of the
 * same block by several owners are shared extents: commit derives the
 * refcount btree from them.  Old per-AG btree blocks are simply not
 * claimed, so they become free.
 */
XK_MUST_CHECK int xk_bld_open_empty(struct xk_mount *mp, struct xk_bld **bp);
/* rmap flags for xk_bld_claim */
#define XK_BLD_ATTR_FORK	(1u << 0)
#define XK_BLD_BMBT		(1u << 1)
#define XK_BLD_UNWRITTEN	(1u << 2)
XK_MUST_CHECK int xk_bld_claim(struct xk_bld *b, uint32_t agno, uint32_t agbno,
			       uint32_t len, uint64_t owner, uint64_t offset,
			       unsigned int flags);
/*
 * An inode chunk record: startino (agino, chunk aligned), holemask (1 bit
 * per 4 inodes not present, sparse chunks), freemask (1 = free inode).
 * The chunk's blocks are claimed by this call (OWN_INODES).
 */
XK_MUST_CHECK int xk_bld_add_ichunk(struct xk_bld *b, uint32_t agno,
				    uint32_t startino, uint16_t holemask,
				    uint64_t freemask);

/* Deterministic timestamps: every inode created gets this time. */
void xk_bld_set_time(struct xk_bld *b, int64_t sec, uint32_t nsec);

/* --- inodes --- */

/*
 * Allocate an inode number: directories are spread across AGs as the
 * kernel does (rotor), other inodes go near their parent.  New chunks are
 * written as free inodes and recorded for the inode btrees.
 */
XK_MUST_CHECK int xk_bld_ialloc(struct xk_bld *b, uint64_t parent, int is_dir,
				uint64_t *inop);
/* Zero ip and set ino, the times from xk_bld_set_time and nlink 1. */
void xk_bld_inode_init(struct xk_bld *b, struct xk_bld_inode *ip,
		       uint64_t ino, uint16_t mode);
/*
 * Lay the inode into its cluster buffer: forks (an extent list that does
 * not fit becomes a bmbt, bulk loaded into blocks allocated near the
 * data), fork offset, counters, CRC.  Frees ip's fork memory.
 */
XK_MUST_CHECK int xk_bld_inode_write(struct xk_bld *b, struct xk_bld_inode *ip);
/* Change the link count of an inode already written (hard links). */
XK_MUST_CHECK int xk_bld_inode_set_nlink(struct xk_bld *b, uint64_t ino,
					 uint32_t nlink);
/* The inode number of the root directory. */
uint64_t xk_bld_rootino(const struct xk_bld *b);

/* --- forks --- */

/* Bytes of the inode's literal area (inodesize - core). */
uint32_t xk_bld_literal_size(const struct xk_bld *b);
/*
 * Bytes available to `whichfork` given what the other fork of ip already
 * needs (a local or extents fork, or the smallest bmbt root).
 */
uint32_t xk_bld_fork_space(const struct xk_bld *b,
			   const struct xk_bld_inode *ip, int whichfork);
/* Make the fork local with a copy of len bytes. */
XK_MUST_CHECK int xk_bld_fork_local(struct xk_bld_fork *fk, const void *bytes,
				    uint32_t len);
/*
 * Allocate count blocks for file blocks loff.. of ip's fork, contiguous
 * when possible (several extents otherwise), near the inode; appends the
 * mappings to the fork (format becomes EXTENTS) and records the reverse
 * mappings.  align (blocks, 0/1 none) aligns the start when space
 * allows.  The blocks' contents are the caller's to write.
 */
XK_MUST_CHECK int xk_bld_fork_alloc(struct xk_bld *b, struct xk_bld_inode *ip,
				    int whichfork, uint64_t loff,
				    uint64_t count, uint32_t align);
/* The fsblock holding file block loff of the fork, or -ENOENT. */
XK_MUST_CHECK int xk_bld_fork_map(const struct xk_bld_fork *fk, uint64_t loff,
				  uint64_t *fsbno);

/* --- regular files --- */

/*
 * Stream len bytes read from fd at src_off into file byte offset off
 * (block aligned) of ip: blocks are allocated (contiguously, stripe
 * aligned for large files) and written straight to the device.  Call
 * once per data segment; holes between segments stay holes.  Sets
 * ip->size to at least off + len.
 */
XK_MUST_CHECK int xk_bld_file_write_fd(struct xk_bld *b,
				       struct xk_bld_inode *ip, uint64_t off,
				       int fd, uint64_t src_off, uint64_t len);
/* The same from a reader (tar archives): read(ctx, buf, n) -> n, <0. */
typedef ssize_t (*xk_bld_reader)(void *ctx, void *buf, size_t n);
XK_MUST_CHECK int xk_bld_file_write_reader(struct xk_bld *b,
					   struct xk_bld_inode *ip,
					   uint64_t off, xk_bld_reader rd,
					   void *ctx, uint64_t len);

/* --- device nodes, symlinks --- */

/*
 * Character/block device: the rdev in the data fork (FMT_DEV).  FIFOs
 * and sockets are FMT_DEV with rdev 0, as the kernel makes them.
 */
XK_MUST_CHECK int xk_bld_dev(struct xk_bld *b, struct xk_bld_inode *ip,
			     uint32_t major, uint32_t minor);
/* Symlink target: local when it fits, else remote XSLM blocks. */
XK_MUST_CHECK int xk_bld_symlink(struct xk_bld *b, struct xk_bld_inode *ip,
				 const char *target, size_t len);

/* --- directories (libfs/write/dir.c) --- */

struct xk_bld_dirent {
	const uint8_t	*name;
	uint8_t		namelen;
	uint8_t		ftype;		/* XK_DIR3_FT_* */
	uint64_t	ino;
};

/*
 * Write directory ip with parent and the entries given (any order, no
 * "." or ".."), in the format the kernel would have for that many
 * entries: short form in the inode, block, leaf, or node with a free
 * index.  Sets ip->size and the data fork.  Call after xk_bld_attrs
 * (the short-form limit depends on the attr fork).
 */
XK_MUST_CHECK int xk_bld_dir(struct xk_bld *b, struct xk_bld_inode *ip,
			     uint64_t parent, const struct xk_bld_dirent *ents,
			     size_t n);

/* --- extended attributes (libfs/write/attr.c) --- */

struct xk_bld_xattr {
	uint8_t		flags;		/* XK_ATTR_ROOT / XK_ATTR_SECURE / 0 */
	const uint8_t	*name;
	uint8_t		namelen;
	const uint8_t	*value;
	uint32_t	valuelen;
};

/*
 * Write ip's attr fork holding the attributes given (any order; names
 * unique per namespace): short form when it fits beside the data fork,
 * else leaf, else node blocks; values over the local limit go to remote
 * blocks.  Call before filling the data fork of a directory.
 */
XK_MUST_CHECK int xk_bld_attrs(struct xk_bld *b, struct xk_bld_inode *ip,
			       const struct xk_bld_xattr *xa, size_t n);

/* --- edits, for finishing log intents (libfs/write/edit.c) --- */

/*
 * Free an extent as EFI recovery does: the blocks become free space and
 * any reverse mapping still covering them is removed.
 */
XK_MUST_CHECK int xk_bld_free_extent(struct xk_bld *b, uint64_t fsbno,
				     uint32_t len);
/*
 * A reverse-mapping update (RUI): type is XK_RMAP_EXTENT_MAP .. FREE
 * (format/log.h); flags the XK_BLD_* fork/bmbt/unwritten flags.
 */
XK_MUST_CHECK int xk_bld_rmap_update(struct xk_bld *b, unsigned int type,
				     uint64_t owner, uint64_t fsbno,
				     uint64_t offset, uint32_t len,
				     unsigned int flags);
/*
 * A refcount update (CUI), XK_REFCOUNT_INCREASE .. FREE_COW.  With the
 * rmapbt, refcounts are derived from the reverse mappings on commit and
 * this only frees what a decrease leaves unowned; without it the loaded
 * refcount records are adjusted (blocks dropping to 0 freed).
 */
XK_MUST_CHECK int xk_bld_refcount_update(struct xk_bld *b, unsigned int type,
					 uint64_t fsbno, uint32_t len);
/*
 * A file mapping update (BUI): map or unmap len blocks at file block
 * loff of the inode's fork (XK_BMAP_MAP / XK_BMAP_UNMAP), with the
 * reverse mapping and refcount effects the kernel's deferred work has.
 */
/* With XK_BMAP_UNMAP: a BUI's unmap, which keeps the blocks allocated. */
#define XK_BLD_BMAP_REMAP	0x100
XK_MUST_CHECK int xk_bld_bmap_update(struct xk_bld *b, unsigned int type,
				     uint64_t ino, int whichfork, uint64_t loff,
				     uint64_t fsbno, uint32_t len,
				     int unwritten);
/*
 * Free every CoW staging extent (blocks, reverse mappings, refcount
 * records), as the kernel does at mount.  *count: extents freed.
 */
XK_MUST_CHECK int xk_bld_cow_cleanup(struct xk_bld *b, uint64_t *count);
/*
 * Inactivate and free the inodes on every AGI unlinked list (unlinked
 * while open): their forks' blocks are freed, the inodes marked free,
 * chunks left empty freed, and the lists emptied.  *count: inodes freed.
 */
XK_MUST_CHECK int xk_bld_free_unlinked(struct xk_bld *b, uint64_t *count);

/*
 * A file mapping exchange left unfinished (XMI, libfs/write/edit_xmi.c):
 * blockcount blocks of ino1's data fork from startoff1 exchanged with
 * ino2's from startoff2; flags are the logged XK_EXCHMAPS_* bits.
 */
struct xk_bld_exchange {
	uint64_t	ino1, ino2;
	uint32_t	gen1, gen2;
	uint64_t	startoff1, startoff2, blockcount;
	uint64_t	flags;
	uint64_t	isize1, isize2;	/* SET_SIZES: as logged (checked only) */
};
struct xk_bld_exchange_result {
	uint64_t	steps;		/* pairs of mappings exchanged */
	uint64_t	size1, size2;	/* the files' sizes before it */
	uint64_t	bad_ino;	/* the inode at fault, or 0 */
	const char	*why;		/* the rule broken, or NULL */
};
/*
 * Finish it as the kernel's log recovery does: exchange the mappings
 * that differ one pair at a time (reverse mappings moved with the
 * rmapbt), adjust block counts, set the sizes with SET_SIZES (each file
 * to the other one's size now, as recovery recomputes them; not the
 * logged sizes) and the reflink flags.  On failure res says which inode
 * and rule.
 */
XK_MUST_CHECK int xk_bld_exchange_mappings(struct xk_bld *b,
					   const struct xk_bld_exchange *x,
					   struct xk_bld_exchange_result *res);
/*
 * What the mount does to a file its recovery took, once recovery lets
 * go of it: free the blocks mapped past size (the file's size when it
 * was first taken), unless the file is empty, preallocated or
 * append-only.  On failure *why says what failed.
 */
XK_MUST_CHECK int xk_bld_trim_eof(struct xk_bld *b, uint64_t ino, uint64_t size,
				  const char **why);

/*
 * Hand out no block of AG agno at or past `end` (0: the whole AG again),
 * neither to allocations nor to commit's btree and AGFL blocks: what a
 * shrink will cut off stays free.
 */
void xk_bld_set_alloc_end(struct xk_bld *b, uint32_t agno, uint32_t end);
/*
 * Allocations (not commit's tree blocks) leave at least keep free blocks
 * in AG agno: what the kernel reserves there at mount for its btrees.
 */
void xk_bld_set_alloc_keep(struct xk_bld *b, uint32_t agno, uint64_t keep);
/*
 * An attr fork given by xk_bld_attr_rewrite to an inode without one is
 * placed as the kernel places one added to an existing inode (as far up
 * as its short-form attributes leave room for), not where an inode made
 * with one has it: for xfskit-admin -O parent=1, as xfs_repair 7.2
 * (metadata files excepted: 7.2 makes them anew, with their fork).
 */
void xk_bld_set_late_attr_forks(struct xk_bld *b, int on);
/*
 * Take up to len free blocks, AG agno first, then the next ones; no
 * owner is recorded (the caller maps them).  *got may be less than len.
 */
XK_MUST_CHECK int xk_bld_alloc_blocks(struct xk_bld *b, uint32_t agno,
				      uint32_t len, uint64_t *fsbno,
				      uint32_t *got);

/* --- internals shared by libfs/write/ files --- */

/* The mount the builder writes to. */
struct xk_mount *xk_bld_mount(const struct xk_bld *b);
/* daddr of a fork block. */
static inline uint64_t xk_bld_fsb_daddr(const struct xk_bld *b,
					uint64_t fsbno)
{
	return xk_fsb_to_daddr(xk_bld_mount(b), fsbno);
}

#endif /* XFSKIT_BUILD_H */
