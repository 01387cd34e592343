// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Growable vectors that spill to unlinked temporary files (vec.h).
 *
 * On the heap a vector grows by doubling through realloc.  Tied to a
 * spill context, it moves once its room would pass the threshold: a
 * temporary file is opened (O_TMPFILE, or a named file unlinked at once
 * where the filesystem has no O_TMPFILE), sized with ftruncate (after a
 * check that the disk has room, see reserve_space), mapped MAP_SHARED
 * and the elements copied in.  Later growth extends the file the same
 * way and moves the mapping with mremap, so nothing is copied again.
 *
 * The trimmer is the one thread a spill context owns.  It wakes every
 * TRIM_MS, reads the resident set from /proc/self/statm and, when it is
 * over the cap, drops every file-backed page from the address space;
 * a vector's growth, when the resident set jumps, does the same check.
 * That is safe while other threads use the vectors: on a shared file
 * mapping the kernel carries each page's dirty state over to the page
 * cache when it unmaps it, and the next access maps the cached page (or
 * reads it back from the file if the kernel has since reclaimed it).
 * Mapping addresses change only under the context's lock, which the
 * trimmer holds while it works.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/vfs.h>

#include <xfskit/fault.h>
#include <xfskit/vec.h>

#define FIRST_CAP	256		/* elements, as the heap vectors had */
#define TRIM_MS		2		/* trimmer period */
#define TRIM_FLOOR	(1U << 20)	/* mapped bytes not worth trimming */
#define SPACE_SLACK	(64ULL << 20)	/* free space left to others */
#define TMPFS_MAGIC_	0x01021994	/* statfs f_type of tmpfs */
#define RAMFS_MAGIC_	0x858458f6	/* and of ramfs */

static size_t
page_round(size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (bytes + page - 1) / page * page;
}

/* An anonymous file in dir, open read-write; negative errno on failure. */
static int
tmp_open(const char *dir)
{
	size_t len;
	char *path;
	int fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	/* No O_TMPFILE on this filesystem: name a file and unlink it. */
	len = strlen(dir) + 32;
	path = malloc(len);
	if (!path)
		return -ENOMEM;
	snprintf(path, len, "%s/.xfskit-spill.XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	else
		unlink(path);
	free(path);
	return fd;
}

/*
 * Extend the file by len bytes to from + len.  The extension is sparse:
 * blocks are allocated only if the kernel writes the pages back, so a
 * run whose spilled pages stay in the page cache never touches the disk
 * (and frees no blocks at the end, which costs synchronous discards on
 * filesystems mounted with -o discard).  A page written with the disk
 * full would fault (SIGBUS), so the free space is checked first: that
 * leaves only a race with another process filling the disk.
 */
static int
reserve_space(int fd, size_t from, size_t len)
{
	struct statfs sfs;

	if (!fstatfs(fd, &sfs) &&
	    (uint64_t)sfs.f_bavail * (uint64_t)sfs.f_bsize < len + SPACE_SLACK)
		return -ENOSPC;
	return ftruncate(fd, (off_t)(from + len)) ? -errno : 0;
}

/* Move a heap vector into a new file of at least bytes. */
static int
to_file(struct xk_vec *vec, size_t bytes, size_t size)
{
	struct xk_vec_spill *sp = vec->spill;
	struct xk_vec_map *map = malloc(sizeof(*map));
	void *p;
	int fd, err;

	bytes = page_round(bytes);
	fd = map ? tmp_open(sp->dir) : -ENOMEM;
	if (fd < 0) {
		err = fd;
		goto failed;
	}
	err = reserve_space(fd, 0, bytes);
	if (err)
		goto close_fd;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto close_fd;
	}
	if (vec->n)
		memcpy(p, vec->v, vec->n * size);
	free(vec->v);
	*map = (struct xk_vec_map){ .addr = p, .bytes = bytes, .fd = fd };
	pthread_mutex_lock(&sp->lock);
	map->next = sp->head;
	if (sp->head)
		sp->head->prev = map;
	sp->head = map;
	sp->mapped += bytes;
	if (sp->mapped > sp->peak_mapped)
		sp->peak_mapped = sp->mapped;
	sp->files++;
	pthread_mutex_unlock(&sp->lock);
	vec->v = p;
	vec->cap = bytes / size;
	vec->map = map;
	return 0;
close_fd:
	close(fd);
failed:
	free(map);
	pthread_mutex_lock(&sp->lock);
	sp->failed++;
	pthread_mutex_unlock(&sp->lock);
	return err;
}

/* Extend a file-backed vector's file and mapping to bytes. */
static int
file_grow(struct xk_vec *vec, size_t bytes, size_t size)
{
	struct xk_vec_spill *sp = vec->spill;
	struct xk_vec_map *map = vec->map;
	void *p;
	int err;

	bytes = page_round(bytes);
	err = reserve_space(map->fd, map->bytes, bytes - map->bytes);
	if (err)
		return err;
	pthread_mutex_lock(&sp->lock);
	p = mremap(map->addr, map->bytes, bytes, MREMAP_MAYMOVE);
	if (p == MAP_FAILED) {
		err = -errno;
	} else {
		sp->mapped += bytes - map->bytes;
		if (sp->mapped > sp->peak_mapped)
			sp->peak_mapped = sp->mapped;
		map->addr = p;
		map->bytes = bytes;
		vec->v = p;
		vec->cap = bytes / size;
	}
	pthread_mutex_unlock(&sp->lock);
	return err;
}

static void check_cap(struct xk_vec_spill *sp);

/* Take a mapping off the list, unmap it and close its file. */
static void
map_drop(struct xk_vec_spill *sp, struct xk_vec_map *map)
{
	pthread_mutex_lock(&sp->lock);
	if (map->prev)
		map->prev->next = map->next;
	else
		sp->head = map->next;
	if (map->next)
		map->next->prev = map->prev;
	sp->mapped -= map->bytes;
	munmap(map->addr, map->bytes);
	pthread_mutex_unlock(&sp->lock);
	close(map->fd);
	free(map);
}

/* Move a file-backed vector back to the heap, with room for ncap. */
static int
to_heap(struct xk_vec *vec, size_t ncap, size_t size)
{
	struct xk_vec_spill *sp = vec->spill;
	void *nv = xk_malloc(ncap * size);

	if (!nv)
		return -ENOMEM;
	if (vec->n)
		memcpy(nv, vec->v, vec->n * size);
	map_drop(sp, vec->map);
	vec->map = NULL;
	vec->v = nv;
	vec->cap = ncap;
	pthread_mutex_lock(&sp->lock);
	sp->failed++;
	pthread_mutex_unlock(&sp->lock);
	return 0;
}

int
xk_vec_reserve(struct xk_vec *vec, size_t want, size_t size)
{
	size_t ncap = vec->cap ? vec->cap : vec->first ? vec->first : FIRST_CAP;
	void *nv;

	if (want <= vec->cap)
		return 0;
	while (ncap < want) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / size)
		return -ENOMEM;
	if (vec->map) {
		if (!file_grow(vec, ncap * size, size)) {
			check_cap(vec->spill);
			return 0;
		}
		/* The disk is full: better over the cap than wrong. */
		return to_heap(vec, ncap, size);
	}
	/* Past the threshold: to a file, or on the heap if that fails. */
	if (vec->spill && ncap * size > vec->spill->threshold &&
	    !to_file(vec, ncap * size, size)) {
		check_cap(vec->spill);
		return 0;
	}
	nv = xk_realloc(vec->v, ncap * size);
	if (!nv)
		return -ENOMEM;
	vec->v = nv;
	vec->cap = ncap;
	return 0;
}

int
xk_vec_push(struct xk_vec *vec, const void *elem, size_t size)
{
	if (vec->n == vec->cap) {
		int err = xk_vec_reserve(vec, vec->n + 1, size);

		if (err)
			return err;
	}
	memcpy((char *)vec->v + vec->n * size, elem, size);
	vec->n++;
	return 0;
}

int
xk_vec_append(struct xk_vec *vec, const void *src, size_t m, size_t size)
{
	size_t step = XK_VEC_POLL_BYTES / size + 1;
	int err;

	if (!m)
		return 0;
	if (vec->n + m < vec->n)
		return -ENOMEM;
	err = xk_vec_reserve(vec, vec->n + m, size);
	if (err)
		return err;
	if (!vec->map) {
		memcpy((char *)vec->v + vec->n * size, src, m * size);
		vec->n += m;
		return 0;
	}
	/* Into a mapping: a piece at a time, the cap checked between. */
	while (m) {
		size_t k = m < step ? m : step;

		memcpy((char *)vec->v + vec->n * size, src, k * size);
		vec->n += k;
		src = (const char *)src + k * size;
		m -= k;
		check_cap(vec->spill);
	}
	return 0;
}

void
xk_vec_probe_random(struct xk_vec *vec)
{
	struct xk_vec_spill *sp = vec->spill;

	if (!vec->map || !sp->rss_cap)
		return;
	pthread_mutex_lock(&sp->lock);
	madvise(vec->map->addr, vec->map->bytes, MADV_RANDOM);
	pthread_mutex_unlock(&sp->lock);
}

void
xk_vec_move(struct xk_vec *dst, struct xk_vec *src)
{
	struct xk_vec_spill *dsp = dst->spill, *ssp = src->spill;
	size_t first = src->first;

	xk_vec_free(dst);
	*dst = *src;
	/* A mapping is on its own context's list: it keeps that one. */
	if (!dst->map)
		dst->spill = dsp;
	memset(src, 0, sizeof(*src));
	src->spill = ssp;
	src->first = first;
}

int
xk_vec_spill_now(struct xk_vec *vec, size_t size)
{
	size_t cap = vec->cap > FIRST_CAP ? vec->cap : FIRST_CAP;

	if (vec->map)
		return 0;
	if (!vec->spill)
		return -EINVAL;
	return to_file(vec, cap * size, size);
}

void
xk_vec_sort(struct xk_vec *vec, size_t size, int (*cmp)(const void *, const void *))
{
	if (vec->n > 1)
		qsort(vec->v, vec->n, size, cmp);
}

void
xk_vec_free(struct xk_vec *vec)
{
	struct xk_vec_spill *sp = vec->spill;
	struct xk_vec_map *map = vec->map;
	size_t first = vec->first;

	if (map)
		map_drop(sp, map);
	else
		free(vec->v);
	memset(vec, 0, sizeof(*vec));
	vec->spill = sp;
	vec->first = first;
}

/*
 * Resident set of this process in bytes, and the file-backed part of it
 * (program text and libraries besides our mappings), from statm; 0 if
 * it cannot be read.
 */
static uint64_t
resident_bytes(int fd, uint64_t *file)
{
	char buf[128];
	unsigned long long size, rss, shared;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	ssize_t got = pread(fd, buf, sizeof(buf) - 1, 0);

	*file = 0;
	if (got <= 0)
		return 0;
	buf[got] = 0;
	if (sscanf(buf, "%llu %llu %llu", &size, &rss, &shared) != 3)
		return 0;
	*file = shared * page;
	return rss * page;
}

static void
trim_locked(struct xk_vec_spill *sp)
{
	for (struct xk_vec_map *m = sp->head; m; m = m->next)
		madvise(m->addr, m->bytes, MADV_DONTNEED);
	sp->trims++;
}

void
xk_vec_spill_trim(struct xk_vec_spill *sp)
{
	pthread_mutex_lock(&sp->lock);
	trim_locked(sp);
	pthread_mutex_unlock(&sp->lock);
}

/*
 * Over the cap, and enough of it ours to drop?  When the heap alone is
 * over, trimming a few pages again and again would only cost faults.
 */
static int
over_cap(struct xk_vec_spill *sp)
{
	uint64_t file, rss;

	if (sp->statm < 0 || !sp->head)
		return 0;
	rss = resident_bytes(sp->statm, &file);
	return rss > sp->rss_cap && file > sp->file0 + TRIM_FLOOR;
}

/*
 * Growing a vector is when the resident set jumps (a copy, a new
 * mapping being filled): check the cap there too, not only when the
 * trimmer next wakes.
 */
static void
check_cap(struct xk_vec_spill *sp)
{
	if (!sp->rss_cap)
		return;
	pthread_mutex_lock(&sp->lock);
	if (over_cap(sp))
		trim_locked(sp);
	pthread_mutex_unlock(&sp->lock);
}

void
xk_vec_spill_poll(struct xk_vec_spill *sp)
{
	if (sp)
		check_cap(sp);
}

static void *
trimmer_main(void *arg)
{
	struct xk_vec_spill *sp = arg;

	pthread_mutex_lock(&sp->lock);
	while (!sp->stop) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += TRIM_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&sp->wake, &sp->lock, &ts);
		if (!sp->stop && over_cap(sp))
			trim_locked(sp);
	}
	pthread_mutex_unlock(&sp->lock);
	return NULL;
}

int
xk_vec_spill_start(struct xk_vec_spill *sp, const char *dir, size_t threshold,
		uint64_t rss_cap, int *in_memory)
{
	pthread_condattr_t ca;
	struct statfs sfs;
	struct rlimit rl;
	int fd;

	memset(sp, 0, sizeof(*sp));
	*in_memory = 0;
	fd = tmp_open(dir);
	if (fd < 0)
		return fd;
	if (!fstatfs(fd, &sfs) && ((unsigned long)sfs.f_type == TMPFS_MAGIC_ ||
				   (unsigned long)sfs.f_type == RAMFS_MAGIC_))
		*in_memory = 1;
	close(fd);
	sp->dir = strdup(dir);
	if (!sp->dir)
		return -ENOMEM;
	sp->threshold = threshold;
	sp->rss_cap = rss_cap;
	sp->statm = rss_cap ? open("/proc/self/statm", O_RDONLY | O_CLOEXEC) :
		    -1;
	if (sp->statm >= 0)
		resident_bytes(sp->statm, &sp->file0);
	pthread_mutex_init(&sp->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sp->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* One descriptor per spilled vector: allow as many as we may. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (sp->statm >= 0 && !xk_fault(XK_FAULT_THREAD) &&
	    !pthread_create(&sp->trimmer, NULL, trimmer_main, sp))
		sp->trimming = 1;
	return 0;
}

void
xk_vec_spill_stop(struct xk_vec_spill *sp)
{
	if (!sp->dir)
		return;
	if (sp->trimming) {
		pthread_mutex_lock(&sp->lock);
		sp->stop = 1;
		pthread_cond_signal(&sp->wake);
		pthread_mutex_unlock(&sp->lock);
		pthread_join(sp->trimmer, NULL);
		sp->trimming = 0;
	}
	if (sp->statm >= 0)
		close(sp->statm);
	pthread_cond_destroy(&sp->wake);
	pthread_mutex_destroy(&sp->lock);
	free(sp->dir);
	sp->dir = NULL;
}
