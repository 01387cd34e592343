/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A growable array of fixed-size elements that can leave the heap.
 *
 * Small vectors live in malloc'd memory.  A vector tied to a spill
 * context moves, once it outgrows the context's threshold, into an
 * unlinked temporary file mapped MAP_SHARED: its pages are then page
 * cache, which the kernel can write back and drop when memory is short,
 * where heap pages could only go to swap (and many hosts have none).
 * The elements stay addressable as a plain array (v[i]), so sorting and
 * scanning code does not know where they live.
 *
 * The spill context can also hold the resident set under a cap: a
 * thread watches the process's RSS and, when it is over, unmaps the
 * file-backed pages (MADV_DONTNEED on a shared file mapping keeps their
 * contents in the page cache and the file; the next touch maps them
 * again).  See doc/memory.md.
 */
#ifndef XFSKIT_VEC_H
#define XFSKIT_VEC_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <xfskit/errors.h>

/*
 * A file-backed vector's mapping, on its spill context's list.  Kept
 * apart from the vector so that a vector may be copied or moved (the
 * list does not point into callers' structures).
 */
struct xk_vec_map {
	void		*addr;
	size_t		bytes;		/* mapping and file length */
	int		fd;		/* the unlinked temporary file */
	struct xk_vec_map	*prev, *next;
};

/* Where and when vectors spill; shared by the vectors of one run. */
struct xk_vec_spill {
	char		*dir;		/* directory of the temporary files */
	size_t		threshold;	/* bytes a vector may hold on the heap */
	uint64_t	rss_cap;	/* trim mapped pages above it; 0 never */
	pthread_mutex_t	lock;		/* guards what follows, and mappings */
	pthread_cond_t	wake;		/* stops the trimmer */
	pthread_t	trimmer;
	int		trimming, stop;
	int		statm;		/* /proc/self/statm, or -1 */
	uint64_t	file0;		/* file-backed RSS before spilling */
	struct xk_vec_map	*head;		/* every file-backed vector's map */
	uint64_t	mapped;		/* bytes mapped now */
	uint64_t	peak_mapped;
	unsigned long	files;		/* vectors that moved to a file */
	unsigned long	failed;		/* moves that failed: left on heap */
	unsigned long	trims;		/* times the mapped pages were dropped */
};

/*
 * The vector.  An all-zero vec is empty, heap-backed and never spills;
 * set spill before the first append to let it.  v and n are the
 * elements and their count; callers may read v[0..n-1], write them in
 * place and lower n, never move v.  Only one copy of a vector may be
 * used and freed.
 */
struct xk_vec {
	void		*v;
	size_t		n;
	size_t		cap;		/* elements room is allocated for */
	struct xk_vec_spill *spill;	/* NULL: stays on the heap */
	struct xk_vec_map	*map;		/* set when v is a file mapping */
	size_t		first;		/* elements of the first allocation;
					 * 0: 256 (small per-object lists
					 * set less) */
};

/*
 * A vector of T read as a typed array: x.v[0..x.n-1], with the same
 * rules as above; the functions take &x.vec and sizeof(*x.v).  An
 * all-zero one is empty.
 */
#define XK_VEC_OF(T)							\
	union {								\
		struct xk_vec	vec;					\
		struct {						\
			T	*v;					\
			size_t	n;					\
		};							\
	}

/*
 * Room for at least want elements of size bytes; the caller may then
 * fill v[n..want-1] in place and raise n up to want.
 */
XK_MUST_CHECK int xk_vec_reserve(struct xk_vec *vec, size_t want,
			       size_t size);
/* Append one element, or m elements from src. */
XK_MUST_CHECK int xk_vec_push(struct xk_vec *vec, const void *elem,
			    size_t size);
XK_MUST_CHECK int xk_vec_append(struct xk_vec *vec, const void *src, size_t m,
			      size_t size);
/*
 * The vector is filled and about to be probed at random (binary
 * searches): under a cap, let a fault map only the page touched and its
 * near neighbours.  The page cache holds a file in large folios and a
 * fault otherwise maps the whole folio around the page (a MiB or more),
 * so after a trim the twenty probes of one search would map twenty MiB
 * and the resident set would pass the cap between two checks.  Not
 * while filling: random advice also stops readahead, and every page of
 * a growing file would then be a separate synchronous fault.
 */
void xk_vec_probe_random(struct xk_vec *vec);
/*
 * Hand src's elements over to dst, which is emptied first: nothing is
 * copied, a mapping stays where it is.  src is left empty and keeps its
 * spill; dst keeps its own (the two should share one context).
 */
void xk_vec_move(struct xk_vec *dst, struct xk_vec *src);
/* Move the elements to a file now, whatever their size (tests). */
XK_MUST_CHECK int xk_vec_spill_now(struct xk_vec *vec, size_t size);
/* Sort in place (qsort: works the same on a mapping). */
void xk_vec_sort(struct xk_vec *vec, size_t size,
	      int (*cmp)(const void *, const void *));
/* Release the elements; the vector is empty (and keeps spill and first). */
void xk_vec_free(struct xk_vec *vec);

static inline void *
xk_vec_at(const struct xk_vec *vec, size_t i, size_t size)
{
	return (char *)vec->v + i * size;
}

/*
 * Set up a spill context: dir must take temporary files (checked now);
 * rss_cap 0 starts no trimmer.  *in_memory is set when dir is a memory
 * filesystem (tmpfs, ramfs), where spilling saves nothing.  Raises the
 * soft open-file limit to the hard one, as every spilled vector holds
 * a descriptor.
 */
XK_MUST_CHECK int xk_vec_spill_start(struct xk_vec_spill *sp, const char *dir,
				    size_t threshold, uint64_t rss_cap,
				    int *in_memory);
/* Stop the trimmer and free the context; its vectors must be freed. */
void xk_vec_spill_stop(struct xk_vec_spill *sp);
/* Unmap every file-backed vector's pages now (their data stays). */
void xk_vec_spill_trim(struct xk_vec_spill *sp);
/*
 * Check the cap now, trimming if over it (sp may be NULL: nothing).  A
 * pass over spilled vectors touches them faster than the trimmer's
 * period (a sequential pass maps several MiB per millisecond): such a
 * pass calls this every XK_VEC_POLL_BYTES it touches.  A statm read under
 * the cap; nothing without a trimmer.
 */
#define XK_VEC_POLL_BYTES	(1U << 20)
void xk_vec_spill_poll(struct xk_vec_spill *sp);

/*
 * Byte strings (names, values) that other vectors point at: appended
 * into chunks that are vectors of the pool's spill context, each sized
 * once and never grown, so a pointer a pool hands out stays valid until
 * the pool is freed (a vector's elements move when it grows; a pool's
 * never do).  Chunks double from XK_VEC_POOL_FIRST bytes up to
 * XK_VEC_POOL_CHUNK; past the spill threshold each is a temporary file,
 * like any large vector.  An all-zero pool is empty and stays on the
 * heap; set spill before the first add to let it spill.
 */
#define XK_VEC_POOL_FIRST	256
#define XK_VEC_POOL_CHUNK	(16U << 20)
struct xk_vec_pool {
	XK_VEC_OF(struct xk_vec) chunks;	/* on the heap: headers */
	struct xk_vec_spill *spill;
	size_t		polled;		/* bytes added since the cap check */
};

/* Copy len bytes of src into the pool; *out is where they now live. */
XK_MUST_CHECK int xk_vec_pool_add(struct xk_vec_pool *p, const void *src,
				  size_t len, const void **out);
/* Bytes the pool holds in files (a chunk past the threshold). */
uint64_t xk_vec_pool_file_bytes(const struct xk_vec_pool *p);
/* Release every chunk; the pool is empty (and keeps spill). */
void xk_vec_pool_free(struct xk_vec_pool *p);

#endif /* XFSKIT_VEC_H */
