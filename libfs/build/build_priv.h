/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Builder internals shared by libfs/build/ files: the per-AG state the
 * builder allocates from and rebuilds the AG's btrees from on commit.
 */
#ifndef XFSKIT_BUILD_PRIV_H
#define XFSKIT_BUILD_PRIV_H

#include <stdint.h>

#include <xfskit/build.h>
#include <xfskit/libfs.h>
#include <xfskit/init.h>
#include <xfskit/meta.h>

/*
 * An unwritten mapping read back from an inode carries this bit in its
 * fsbno (the builder itself only writes written extents).
 */
#define BLD_EXT_UNWRITTEN	(1ULL << 63)

/* A free extent of one AG. */
struct bld_ext {
	uint32_t	start;
	uint32_t	len;
};

/* A reverse mapping in host order; offset carries XK_RMAP_OFF_* flags. */
struct bld_rmap {
	uint32_t	start;
	uint32_t	len;
	uint64_t	owner;
	uint64_t	offset;
};

/* An inode chunk record in host order. */
struct bld_chunk {
	uint32_t	startino;	/* agino */
	uint16_t	holemask;
	uint8_t		count;		/* inodes present */
	uint64_t	freemask;	/* 1 = free */
};

/* A refcount record (start has no CoW bit; cow says which domain). */
struct bld_refc {
	uint32_t	start;
	uint32_t	len;
	uint32_t	count;
	int		cow;
};

/* A range some intent asked to be released when nobody owns it. */
struct bld_range {
	uint64_t	fsbno;
	uint32_t	len;
};

struct bld_ag {
	uint32_t	agno;
	uint32_t	length;
	/* Free space, sorted by start, never adjacent. */
	struct bld_ext	*free;
	uint32_t	nfree, free_alloc;
	uint32_t	cursor;		/* next-fit position in free[] */
	uint64_t	freeblks;
	/* Reverse mappings, appended; sorted and merged on commit. */
	struct bld_rmap	*rmap;
	uint64_t	nrmap, rmap_alloc;
	/* Inode chunks, sorted by startino. */
	struct bld_chunk *chunk;
	uint32_t	nchunk, chunk_alloc;
	uint32_t	ichunk_cursor;	/* first chunk that may have a free inode */
	uint64_t	icount, ifree;
	uint64_t	fdblocks;	/* free + AGFL + btree blocks, at commit */
	/* Refcount records kept as loaded (filesystems without rmapbt). */
	struct bld_refc	*refc;
	uint64_t	nrefc, refc_alloc;
	int		clear_unlinked;	/* write empty AGI unlinked lists */
	int		dirty;
};

struct xk_bld {
	struct xk_mount	*mp;
	struct bld_ag	*ags;
	uint32_t	agcount;
	uint32_t	dir_rotor;
	int64_t		now_sec;
	uint32_t	now_nsec;
	uint64_t	rootino;
	int		from_claims;	/* opened empty: every owner claimed */
	/* Decreased refcounts to settle before commit (rmapbt). */
	struct bld_range *pending;
	uint64_t	npending, pending_alloc;
	/* Scratch for streaming file data. */
	uint8_t		*iobuf;
	size_t		iobuf_len;
};

/* space.c */
int bld_free_add(struct bld_ag *ag, uint32_t start, uint32_t len);
int bld_free_take(struct bld_ag *ag, uint32_t start, uint32_t len);
int bld_rmap_add(struct bld_ag *ag, uint32_t start, uint32_t len,
		 uint64_t owner, uint64_t offset);
/* Blocks commit will need in this AG for its btrees and AGFL. */
uint64_t bld_ag_reserve(const struct xk_bld *b, const struct bld_ag *ag);
/*
 * Allocate up to len blocks in AG ag (aligned start when possible),
 * next-fit from the AG's cursor; *got may be less than len when the AG
 * has no run that long (at least minlen).  Records nothing in rmap.
 */
int bld_alloc_in_ag(struct xk_bld *b, struct bld_ag *ag, uint32_t len,
		    uint32_t minlen, uint32_t align, uint32_t *agbno,
		    uint32_t *got);
/* Allocate len blocks for an owner anywhere, starting with AG agno. */
int bld_alloc(struct xk_bld *b, uint32_t agno, uint32_t len, uint32_t minlen,
	      uint32_t align, uint64_t *fsbno, uint32_t *got);

int bld_grow(void **arr, uint64_t *alloc, uint64_t need, size_t elem);

/* edit.c */
int bld_settle_pending(struct xk_bld *b);

/* edit_xmi.c: checksum the blocks of a bmbt just built (still dirty). */
void bld_bmbt_stamp(struct xk_bld *b, uint64_t ino,
		    const struct xk_dinode *dip, int whichfork);

/* inode.c */
int bld_write_fork(struct xk_bld *b, struct xk_bld_inode *ip, int whichfork,
		   uint8_t *dst, uint32_t space, uint8_t *format,
		   uint64_t *nblocks);
int bld_chunk_add(struct bld_ag *ag, const struct bld_chunk *c);

/* commit.c */
int bld_commit_ag(struct xk_bld *b, struct bld_ag *ag);

#endif
