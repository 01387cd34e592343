/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Builder internals shared by libfs/write/ files: the per-AG state the
 * builder allocates from and rebuilds the AG's btrees from on commit.
 */
#ifndef XFSKIT_WRITE_PRIV_H
#define XFSKIT_WRITE_PRIV_H

#include <stdint.h>

#include <xfskit/build.h>
#include <xfskit/libfs.h>
#include <xfskit/init.h>
#include <xfskit/meta.h>
#include <xfskit/fork.h>

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
	/*
	 * 0, or no block at or past it is handed out (allocations, commit's
	 * tree blocks and AGFL): a shrink keeps what it cuts off free.
	 */
	uint32_t	alloc_end;
	/* Free blocks allocations must leave (xk_bld_set_alloc_keep). */
	uint64_t	keep;
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
	int		late_forks;	/* xk_bld_set_late_attr_forks */
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
/* Free extent e as far as the AG hands it out (len 0: not at all). */
struct bld_ext bld_ext_usable(const struct bld_ag *ag, const struct bld_ext *e);
/* Allocate len blocks for an owner anywhere, starting with AG agno. */
int bld_alloc(struct xk_bld *b, uint32_t agno, uint32_t len, uint32_t minlen,
	      uint32_t align, uint64_t *fsbno, uint32_t *got);

int bld_grow(void **arr, uint64_t *alloc, uint64_t need, size_t elem);

/* edit.c */
int bld_settle_pending(struct xk_bld *b);

/*
 * edit_xmi.c: checksum the blocks of a bmbt just built (still dirty);
 * 0 or an operational error (memory, I/O).
 */
XK_MUST_CHECK int bld_bmbt_stamp(struct xk_bld *b, uint64_t ino,
				 const struct xk_dinode *dip, int whichfork);

/*
 * bmbt_shape.c: how many entries each block of a fork's bmbt holds, as
 * the kernel's in-place edits would leave them (see the file).  levels
 * is 0 while the fork is in extents format; cnt[levels - 1][0] is the
 * inode root's.  A shape that cannot be followed is marked lost, and the
 * tree is then written packed.
 */
struct bld_bshape {
	unsigned int	levels;
	uint32_t	lmax, nmax;	/* entries per leaf, per node block */
	uint32_t	imax;		/* entries the inode root holds */
	uint64_t	maxext;		/* records the fork holds as extents */
	int		lost;
	uint64_t	n[XK_BTREE_MAXLEVELS];	/* blocks per level */
	uint64_t	cap[XK_BTREE_MAXLEVELS];
	uint32_t	*cnt[XK_BTREE_MAXLEVELS];
};

void bld_bshape_init(struct bld_bshape *s, uint32_t lmax, uint32_t nmax,
		     uint32_t fork_bytes);
void bld_bshape_free(struct bld_bshape *s);
/* Loading: blocks of each level in key order, the inode root last. */
int bld_bshape_add_block(struct bld_bshape *s, unsigned int level,
			 uint32_t cnt);
void bld_bshape_check(struct bld_bshape *s, uint64_t nrecs);
/*
 * Record g (0-based, in the new list) was inserted: found by a lookup,
 * or (after) by stepping on from record g - 1 as a split extent's right
 * part is; or record g was deleted.  settle: the format conversions
 * after a mapping call left nrecs records.
 */
void bld_bshape_insert(struct bld_bshape *s, uint64_t g, int after);
void bld_bshape_delete(struct bld_bshape *s, uint64_t g);
void bld_bshape_settle(struct bld_bshape *s, uint64_t nrecs);

/*
 * edit.c: a fork read for editing through libfs's fork reader (fork.h, with
 * XK_FORK_* flags): its mappings as the builder keeps them, its bmbt
 * blocks and the bmbt's shape.  0 or the reader's error; on
 * XK_ECORRUPT, check names the first problem (a string constant).
 */
struct bld_fork_read {
	struct xk_bld_ext *ext;		/* loff order, BLD_EXT_UNWRITTEN */
	uint64_t	next, alloc;
	uint64_t	nblocks;	/* blocks mapped */
	uint64_t	*bmbt;		/* bmbt blocks (fsb) */
	uint64_t	nbmbt, bmbt_alloc;
	struct bld_bshape shape;	/* the bmbt as the kernel keeps it */
	const char	*check;
};
int bld_fork_read(struct xk_mount *mp, uint64_t ino,
		  const struct xk_dinode *dip, int whichfork,
		  unsigned int flags, struct bld_fork_read *fr)
	__attribute__((warn_unused_result));
void bld_fork_read_free(struct bld_fork_read *fr);
/* Why bld_fork_read refused a fork, in words for a message. */
const char *bld_fork_why(const char *check, int err);

/*
 * dir_sf_block.c: turn short-form directory ino (dip: its core in a
 * held buffer, which the caller dirties) into a block directory, as the
 * kernel does before adding an attr fork the directory leaves no room
 * for; on failure *why says why.
 */
int bld_dir_sf_to_block(struct xk_bld *b, uint64_t ino, struct xk_dinode *dip,
			const char **why);

/* file.c: the same for a local symlink, its target moved to blocks. */
int bld_symlink_to_remote(struct xk_bld *b, uint64_t ino,
			  struct xk_dinode *dip, const char **why);

/*
 * dir_sf_block.c: the data fork tmp was given (its blocks allocated and
 * written) put in place of dip's local data: its mapping written in the
 * literal area, the format and the block and extent counts updated.
 */
int bld_local_to_blocks(struct xk_bld *b, struct xk_bld_inode *tmp,
			struct xk_dinode *dip);

/*
 * edit.c: lay one fork of inode ino (dip: its core in a held buffer,
 * which the caller dirties) out again in space bytes of the inode: its
 * mappings stay, its bmbt blocks are given back and a new bmbt built as
 * the room needs (extents that no longer fit become a btree, a root too
 * large for the room gains a level).  For a data fork narrowed to make
 * room for an attr fork (its fork offset is set to space / 8); not in a
 * session opened empty.
 */
int bld_fork_relayout(struct xk_bld *b, uint64_t ino, struct xk_dinode *dip,
		      int whichfork, uint32_t space);

/* inode.c */
int bld_write_fork(struct xk_bld *b, struct xk_bld_inode *ip, int whichfork,
		   uint8_t *dst, uint32_t space, uint8_t *format,
		   uint64_t *nblocks);
/* The same, a btree laid out as shape says when it can be (else packed). */
int bld_write_fork_shaped(struct xk_bld *b, struct xk_bld_inode *ip,
			  int whichfork, uint8_t *dst, uint32_t space,
			  uint8_t *format, uint64_t *nblocks,
			  const struct bld_bshape *shape);
int bld_chunk_add(struct bld_ag *ag, const struct bld_chunk *c);

/* commit.c */
int bld_commit_ag(struct xk_bld *b, struct bld_ag *ag);

#endif
