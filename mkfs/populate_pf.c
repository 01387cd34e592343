// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The read-ahead pool of -p DIR (see populate_pf.h): worker threads
 * turn directory jobs into results the builder consumes in order.
 *
 * Most of populating a tree is the kernel's work on the source: one
 * lookup per entry to stat it, one to list its xattrs, an open, read and
 * close per file with data.  Done on worker threads this overlaps with
 * the builder's own work and the image's writes.  Listing the xattrs of
 * an entry by name (listxattrat, Linux 6.13) instead of through an open
 * descriptor saves the open and close of every empty file; older kernels
 * get the open-and-list of before.
 *
 * Nothing here prints: every failure is stored in the result and
 * reported by the builder when it reaches that entry, so messages come
 * in the same order, and the build stops at the same first error,
 * whatever the threads did.  Only libc is used on the workers; the
 * builder's state is never touched here.
 */
#define _GNU_SOURCE	/* SEEK_DATA, SEEK_HOLE, O_NOATIME */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "populate.h"
#include "populate_pf.h"

#define PF_PENDING	0
#define PF_RUNNING	1
#define PF_DONE		2

/*
 * Results held ahead of the builder: entries and names, then contents
 * (twice that).  XK_POPULATE_READAHEAD (bytes) changes it, for tests.
 */
#define PF_META_BUDGET	(8ull << 20)
/* Directories open ahead of the builder (one descriptor each). */
#define PF_MAX_OPEN	256
/* Larger files are streamed by the builder, never held. */
#define PF_FILE_MAX	(256u << 10)
/* The largest xattr value Linux has. */
#define PF_XATTR_MAX	65536
#define PF_MAX_THREADS	8

/*
 * listxattrat/getxattrat (Linux 6.13): one number on every arch.
 * -DPF_NO_XATTRAT builds the fallback only (to test it).
 */
#if !defined(PF_NO_XATTRAT) && \
    (defined(__x86_64__) || defined(__aarch64__) || defined(__riscv))
#define PF_NR_GETXATTRAT	464
#define PF_NR_LISTXATTRAT	465
#endif

struct pf_xattr_args {
	uint64_t	value;
	uint32_t	size;
	uint32_t	flags;
};

struct pf_pool {
	pthread_mutex_t	lock;
	pthread_cond_t	work;		/* workers: a job, or room */
	pthread_cond_t	done;		/* builder: a job finished */
	pthread_t	*tids;
	unsigned int	nthreads;
	int		stop;
	uint32_t	bs;
	uint64_t	img_dev, img_ino;
	int		at_ok;		/* listxattrat works */
	/* Pending jobs: a heap, earliest (in builder order) on top. */
	struct pf_dir	**heap;
	size_t		nheap, heapcap;
	uint64_t	meta_used;	/* cost of results not yet released */
	uint64_t	data_used;	/* contents held, not yet used */
	uint64_t	meta_budget, data_budget;
	unsigned int	nopen;		/* jobs holding an fd */
	struct pf_dir	live;		/* every job not freed */
};

/* --- the job heap, ordered by key (entry indices from the root) --- */

static int
key_cmp(const struct pf_dir *a, const struct pf_dir *b)
{
	uint32_t n = a->depth < b->depth ? a->depth : b->depth;

	for (uint32_t i = 0; i < n; i++)
		if (a->key[i] != b->key[i])
			return a->key[i] < b->key[i] ? -1 : 1;
	/* A prefix (an ancestor) comes first. */
	return (a->depth > b->depth) - (a->depth < b->depth);
}

static void
heap_swap(struct pf_pool *p, size_t i, size_t j)
{
	struct pf_dir *t = p->heap[i];

	p->heap[i] = p->heap[j];
	p->heap[j] = t;
}

static void
heap_up(struct pf_pool *p, size_t i)
{
	while (i && key_cmp(p->heap[i], p->heap[(i - 1) / 2]) < 0) {
		heap_swap(p, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void
heap_down(struct pf_pool *p, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < p->nheap && key_cmp(p->heap[l], p->heap[m]) < 0)
			m = l;
		if (r < p->nheap && key_cmp(p->heap[r], p->heap[m]) < 0)
			m = r;
		if (m == i)
			return;
		heap_swap(p, i, m);
		i = m;
	}
}

static int
heap_push(struct pf_pool *p, struct pf_dir *d)
{
	if (p->nheap == p->heapcap) {
		size_t cap = p->heapcap ? p->heapcap * 2 : 64;
		struct pf_dir **nh = realloc(p->heap, cap * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		p->heap = nh;
		p->heapcap = cap;
	}
	p->heap[p->nheap++] = d;
	heap_up(p, p->nheap - 1);
	return 0;
}

/* Remove d (pending, so in the heap). */
static void
heap_remove(struct pf_pool *p, struct pf_dir *d)
{
	for (size_t i = 0; i < p->nheap; i++) {
		if (p->heap[i] != d)
			continue;
		p->heap[i] = p->heap[--p->nheap];
		if (i < p->nheap) {
			heap_down(p, i);
			heap_up(p, i);
		}
		return;
	}
}

/* --- reading one entry --- */

static void
set_err(struct pf_err *e, int err, const char *what)
{
	if (e->err)
		return;	/* the first failure is the one reported */
	e->err = err;
	e->what = what;
}

/*
 * The ways to reach an entry's xattrs: through an open descriptor, by
 * name under its directory (listxattrat), or through /proc/self/fd for
 * kernels without it.
 */
struct xsrc {
	int		fd;		/* >= 0: through it */
	int		dfd;
	const char	*name;
	int		at;		/* by name with the *at calls */
	char		lpath[64 + 256];
};

static ssize_t
xs_list(struct xsrc *s, char *buf, size_t len)
{
	if (s->fd >= 0)
		return flistxattr(s->fd, buf, len);
#ifdef PF_NR_LISTXATTRAT
	if (s->at)
		return syscall(PF_NR_LISTXATTRAT, s->dfd, s->name,
			       AT_SYMLINK_NOFOLLOW, buf, len);
#endif
	return llistxattr(s->lpath, buf, len);
}

static ssize_t
xs_get(struct xsrc *s, const char *name, void *buf, size_t len)
{
	if (s->fd >= 0)
		return fgetxattr(s->fd, name, buf, len);
#ifdef PF_NR_GETXATTRAT
	if (s->at) {
		struct pf_xattr_args a = {
			.value = (uint64_t)(uintptr_t)buf,
			.size = (uint32_t)len,
		};

		return syscall(PF_NR_GETXATTRAT, s->dfd, s->name,
			       AT_SYMLINK_NOFOLLOW, name, &a, sizeof(a));
	}
#endif
	return lgetxattr(s->lpath, name, buf, len);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Every xattr of one entry, sorted by name (the attr fork must not
 * depend on the order the source lists them).  Returns the cost in
 * bytes; failures go to *pe.
 */
static uint64_t
read_xattrs(struct xsrc *s, struct pf_xattr **xap, size_t *np,
	    struct pf_err *pe)
{
	char *names = NULL, **v = NULL;
	struct pf_xattr *xa = NULL;
	uint8_t *val = NULL;
	uint64_t cost = 0;
	ssize_t len;
	size_t n = 0, got = 0;

	len = xs_list(s, NULL, 0);
	if (len <= 0) {
		if (len < 0 && errno != ENOTSUP && errno != EPERM)
			set_err(pe, -errno, "listing its xattrs");
		return 0;
	}
	names = malloc((size_t)len + 1);
	val = malloc(PF_XATTR_MAX);
	if (!names || !val) {
		set_err(pe, -ENOMEM, "reading its xattrs");
		goto out;
	}
	len = xs_list(s, names, (size_t)len);
	if (len < 0) {
		set_err(pe, -errno, "listing its xattrs");
		goto out;
	}
	names[len] = '\0';
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(names + i) + 1)
		n++;
	v = calloc(n ? n : 1, sizeof(*v));
	xa = calloc(n ? n : 1, sizeof(*xa));
	if (!v || !xa) {
		set_err(pe, -ENOMEM, "reading its xattrs");
		goto out;
	}
	n = 0;
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(names + i) + 1)
		v[n++] = names + i;
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++) {
		ssize_t vl = xs_get(s, v[i], val, PF_XATTR_MAX);
		struct pf_xattr *x = &xa[got];

		if (vl < 0) {
			if (errno == ENODATA)
				continue;	/* removed meanwhile */
			set_err(pe, -errno, NULL);
			pe->xname = strdup(v[i]);
			break;
		}
		x->name = strdup(v[i]);
		x->value = malloc(vl ? (size_t)vl : 1);
		if (!x->name || !x->value) {
			free(x->name);
			free(x->value);
			set_err(pe, -ENOMEM, "reading its xattrs");
			break;
		}
		memcpy(x->value, val, (size_t)vl);
		x->len = (uint32_t)vl;
		cost += strlen(v[i]) + (size_t)vl + sizeof(*x);
		got++;
	}
out:
	free(v);
	free(val);
	free(names);
	if (got) {
		*xap = xa;
		*np = got;
	} else {
		free(xa);
	}
	return cost;
}

/* Take n bytes of the read-ahead budget for contents, if it has them. */
static int
data_reserve(struct pf_pool *p, uint64_t n)
{
	uint64_t cur = __atomic_load_n(&p->data_used, __ATOMIC_RELAXED);

	do {
		if (cur + n > p->data_budget)
			return 0;
	} while (!__atomic_compare_exchange_n(&p->data_used, &cur, cur + n,
					      1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return 1;
}

static void
data_unreserve(struct pf_pool *p, uint64_t n)
{
	__atomic_sub_fetch(&p->data_used, n, __ATOMIC_RELAXED);
}

/*
 * The data segments of an open file, as pop_file_fd() finds them:
 * SEEK_DATA/SEEK_HOLE, widened to whole blocks of the new filesystem;
 * their bytes go to e->data (e->datalen bytes were reserved).
 */
static int
read_segments(struct pf_pool *p, int fd, struct pf_ent *e)
{
	uint64_t bs = p->bs, pos = 0, size = (uint64_t)e->st.st_size;
	uint64_t used = 0;
	size_t cap = 0;

	while (pos < size) {
		uint64_t start, end;
		int rc = pop_next_segment(fd, &pos, size, bs, &start, &end);

		if (rc < 0) {
			set_err(&e->err, rc, "reading it");
			return -1;
		}
		if (rc)
			break;		/* only a hole remains */
		if (e->nseg == cap) {
			size_t nc = cap ? cap * 2 : 2;
			struct pf_seg *ns = realloc(e->seg, nc * sizeof(*ns));

			if (!ns) {
				set_err(&e->err, -ENOMEM, "reading it");
				return -1;
			}
			e->seg = ns;
			cap = nc;
		}
		e->seg[e->nseg].start = start;
		e->seg[e->nseg].end = end;
		e->nseg++;
		for (uint64_t o = start; o < end;) {
			ssize_t r = pread(fd, e->data + used, end - o,
					  (off_t)o);

			if (r <= 0) {
				set_err(&e->err, r < 0 ? -errno : -EIO,
					"copying its data");
				return -1;
			}
			o += (uint64_t)r;
			used += (uint64_t)r;
		}
		pos = end;
	}
	return 0;
}

/* Xattrs and contents of a small regular file, through one open. */
static uint64_t
read_file(struct pf_pool *p, int dfd, struct pf_ent *e)
{
	struct xsrc xs = { .fd = -1 };
	uint64_t cost;

	xs.fd = pop_open_at(dfd, e->name, O_RDONLY);
	if (xs.fd < 0) {
		set_err(&e->err, -errno, "opening it");
		return 0;
	}
	cost = read_xattrs(&xs, &e->xa, &e->nxa, &e->err);
	if (!e->err.err && e->datalen) {
		e->data = malloc(e->datalen);
		if (!e->data)
			set_err(&e->err, -ENOMEM, "reading it");
		else if (read_segments(p, xs.fd, e) == 0)
			e->have_data = 1;
	}
	close(xs.fd);
	return cost;
}

/* Everything about one non-directory entry the builder will need. */
static uint64_t
read_entry(struct pf_pool *p, int dfd, struct pf_ent *e)
{
	struct xsrc xs = { .fd = -1, .dfd = dfd, .name = e->name };
	uint64_t size = (uint64_t)e->st.st_size, cost = 0;

	if (S_ISREG(e->st.st_mode)) {
		if (size && size <= PF_FILE_MAX && e->st.st_nlink == 1 &&
		    data_reserve(p, size)) {
			e->datalen = size;
			return read_file(p, dfd, e);
		}
		if (!p->at_ok) {
			/* Open it as before, to list its xattrs. */
			xs.fd = pop_open_at(dfd, e->name, O_RDONLY);
			if (xs.fd < 0) {
				set_err(&e->err, -errno, "opening it");
				return 0;
			}
		}
	}
	xs.at = p->at_ok;
	if (!xs.at && xs.fd < 0)
		snprintf(xs.lpath, sizeof(xs.lpath), "/proc/self/fd/%d/%s",
			 dfd, e->name);
	cost += read_xattrs(&xs, &e->xa, &e->nxa, &e->err);
	if (xs.fd >= 0)
		close(xs.fd);
	if (!e->err.err && S_ISLNK(e->st.st_mode)) {
		size_t cap = size + 2;
		ssize_t l;

		e->target = malloc(cap);
		if (!e->target) {
			set_err(&e->err, -ENOMEM, "reading the symlink");
			return cost;
		}
		l = readlinkat(dfd, e->name, e->target, cap);
		if (l < 0 || (size_t)l >= cap) {
			set_err(&e->err, l < 0 ? -errno : -EIO,
				"reading the symlink");
			return cost;
		}
		e->target[l] = '\0';
		cost += cap;
	}
	return cost;
}

/* --- one job: a whole directory --- */

static int
cmp_ent(const void *a, const void *b)
{
	const struct pf_ent *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/*
 * Read and sort the entries of the open directory d->fd.  The names go
 * into one buffer per directory: one allocation instead of one per entry,
 * which matters since the builder's thread frees what a worker's
 * allocated, and glibc then takes the worker's arena lock each time.
 */
static int
read_entries(struct pf_dir *d)
{
	struct pf_ent *kids = NULL;
	size_t n = 0, cap = 0, used = 0, ncap = 0;
	char *names = NULL;
	struct dirent *de;
	int fd = dup(d->fd), err = 0;
	DIR *dir;

	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		err = -errno;
		close(fd);
		return err;
	}
	errno = 0;
	while ((de = readdir(dir)) != NULL) {
		size_t len = strlen(de->d_name);

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			struct pf_ent *nk;

			cap = cap ? cap * 2 : 16;
			nk = realloc(kids, cap * sizeof(*nk));
			if (!nk) {
				err = -ENOMEM;
				break;
			}
			kids = nk;
		}
		if (used + len + 1 > ncap) {
			size_t nc = ncap ? ncap * 2 : 4096;
			char *nn;

			while (nc < used + len + 1)
				nc *= 2;
			nn = realloc(names, nc);
			if (!nn) {
				err = -ENOMEM;
				break;
			}
			names = nn;
			ncap = nc;
		}
		memset(&kids[n], 0, sizeof(kids[n]));
		kids[n].namelen = len;
		kids[n].nameoff = used;
		memcpy(names + used, de->d_name, len + 1);
		used += len + 1;
		n++;
		errno = 0;
	}
	if (!err && errno)
		err = -errno;
	closedir(dir);
	/* The buffer has stopped moving: point into it, then sort. */
	for (size_t i = 0; i < n; i++)
		kids[i].name = names + kids[i].nameoff;
	if (n)
		qsort(kids, n, sizeof(*kids), cmp_ent);
	d->kids = kids;
	d->names = names;
	d->n = n;
	return err;
}

static struct pf_dir *
job_new(struct pf_dir *parent, const char *name, uint32_t idx)
{
	struct pf_dir *d = calloc(1, sizeof(*d));
	size_t depth = parent ? (size_t)parent->depth + 1 : 0;

	if (!d)
		return NULL;
	d->key = malloc((depth + 1) * sizeof(*d->key));
	if (!d->key) {
		free(d);
		return NULL;
	}
	if (depth) {
		memcpy(d->key, parent->key, (depth - 1) * sizeof(*d->key));
		d->key[depth - 1] = idx;
	}
	d->depth = (uint32_t)depth;
	d->parent = parent;
	d->name = name;
	d->fd = -1;
	return d;
}

static void
live_add(struct pf_pool *p, struct pf_dir *d)
{
	d->lnext = p->live.lnext;
	d->lprev = &p->live;
	p->live.lnext->lprev = d;
	p->live.lnext = d;
}

/*
 * Run job d (its state is RUNNING; the lock is not held).  Its
 * subdirectories become jobs, pushed in one go at the end.
 */
static void
job_run(struct pf_pool *p, struct pf_dir *d)
{
	struct xsrc xs = { .fd = -1 };
	uint64_t cost = sizeof(*d) + 4096;
	struct pf_dir **sub = NULL;
	size_t nsub = 0;
	int err;

	if (d->parent) {
		d->fd = pop_open_at(d->parent->fd, d->name,
				O_RDONLY | O_DIRECTORY);
		if (d->fd < 0) {
			set_err(&d->err, -errno, "opening the directory");
			goto done;
		}
	}
	xs.fd = d->fd;
	cost += read_xattrs(&xs, &d->xa, &d->nxa, &d->xerr);
	err = read_entries(d);
	if (err) {
		set_err(&d->err, err, "reading the directory");
		goto done;
	}
	sub = calloc(d->n ? d->n : 1, sizeof(*sub));
	if (!sub) {
		set_err(&d->err, -ENOMEM, "reading the directory");
		goto done;
	}
	for (size_t i = 0; i < d->n; i++) {
		struct pf_ent *e = &d->kids[i];

		cost += sizeof(*e) + e->namelen + 1;
		if (fstatat(d->fd, e->name, &e->st, AT_SYMLINK_NOFOLLOW)) {
			set_err(&e->st_err, -errno, "reading its status");
			continue;
		}
		if (S_ISDIR(e->st.st_mode)) {
			e->job = job_new(d, e->name, (uint32_t)i);
			if (!e->job) {
				set_err(&e->st_err, -ENOMEM,
					"reading its status");
				continue;
			}
			sub[nsub++] = e->job;
			continue;
		}
		if (p->img_ino && (uint64_t)e->st.st_dev == p->img_dev &&
		    (uint64_t)e->st.st_ino == p->img_ino)
			continue;	/* the image: the builder leaves it */
		cost += read_entry(p, d->fd, e);
	}
done:
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < nsub; i++) {
		live_add(p, sub[i]);
		if (heap_push(p, sub[i])) {
			/* The builder finds out when it gets there. */
			set_err(&sub[i]->err, -ENOMEM,
				"opening the directory");
			sub[i]->state = PF_DONE;
			p->nopen++;	/* as if started: released alike */
		}
	}
	d->cost = cost;
	p->meta_used += cost;
	d->state = PF_DONE;
	pthread_cond_broadcast(&p->done);
	if (nsub)
		pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	free(sub);
}

/*
 * May a worker start the top job now?  Called with the lock held.  Over
 * the budget, only the builder runs jobs, the one it needs next.
 */
static int
may_start(const struct pf_pool *p)
{
	return p->nheap && p->meta_used < p->meta_budget &&
	       p->nopen < PF_MAX_OPEN;
}

static void *
worker_main(void *arg)
{
	struct pf_pool *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct pf_dir *d;

		if (!may_start(p)) {
			pthread_cond_wait(&p->work, &p->lock);
			continue;
		}
		d = p->heap[0];
		heap_remove(p, d);
		d->state = PF_RUNNING;
		p->nopen++;
		pthread_mutex_unlock(&p->lock);
		job_run(p, d);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* --- the builder's side --- */

void
pf_wait(struct pf_pool *p, struct pf_dir *d)
{
	pthread_mutex_lock(&p->lock);
	while (d->state != PF_DONE) {
		if (d->state == PF_PENDING) {
			/* Nobody has started it: no need to wait for one. */
			heap_remove(p, d);
			d->state = PF_RUNNING;
			p->nopen++;
			pthread_mutex_unlock(&p->lock);
			job_run(p, d);
			pthread_mutex_lock(&p->lock);
			continue;
		}
		pthread_cond_wait(&p->done, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
}

static void
xattrs_free(struct pf_xattr *xa, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(xa[i].name);
		free(xa[i].value);
	}
	free(xa);
}

void
pf_data_done(struct pf_pool *p, struct pf_ent *e)
{
	free(e->data);
	free(e->seg);
	e->data = NULL;
	e->seg = NULL;
	e->nseg = 0;
	e->have_data = 0;
	if (e->datalen)
		data_unreserve(p, e->datalen);
	e->datalen = 0;
}

/* Free a job (not in the heap, not running) and everything it holds. */
static void
job_free(struct pf_pool *p, struct pf_dir *d)
{
	for (size_t i = 0; i < d->n; i++) {
		struct pf_ent *e = &d->kids[i];

		pf_data_done(p, e);
		xattrs_free(e->xa, e->nxa);
		free(e->target);
		free(e->err.xname);
		free(e->st_err.xname);
	}
	free(d->kids);
	free(d->names);
	xattrs_free(d->xa, d->nxa);
	free(d->err.xname);
	free(d->xerr.xname);
	free(d->key);
	free(d);
}

void
pf_release(struct pf_pool *p, struct pf_dir *d)
{
	pthread_mutex_lock(&p->lock);
	d->lprev->lnext = d->lnext;
	d->lnext->lprev = d->lprev;
	p->meta_used -= d->cost;
	p->nopen--;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	if (d->fd >= 0)
		close(d->fd);
	job_free(p, d);
}

void
pf_stop(struct pf_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned int i = 0; i < p->nthreads; i++)
		pthread_join(p->tids[i], NULL);
	while (p->live.lnext != &p->live) {
		struct pf_dir *d = p->live.lnext;

		d->lprev->lnext = d->lnext;
		d->lnext->lprev = d->lprev;
		if (d->fd >= 0)
			close(d->fd);
		job_free(p, d);
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	free(p->tids);
	free(p->heap);
	free(p);
}

/*
 * Whether listxattrat answers (Linux 6.13 and later), and agrees with
 * flistxattr on the root: a kernel without it says ENOSYS, but a
 * sandbox may refuse unknown calls with EPERM, which would otherwise
 * read as "no xattrs here" on every entry.
 */
static int
probe_at(int rootfd)
{
#ifdef PF_NR_LISTXATTRAT
	char c;
	long r = syscall(PF_NR_LISTXATTRAT, rootfd, ".", AT_SYMLINK_NOFOLLOW,
			 &c, 0);
	ssize_t f;

	if (r < 0)
		return errno == ENOTSUP;
	f = flistxattr(rootfd, NULL, 0);
	return f == r;
#else
	(void)rootfd;
	return 0;
#endif
}

unsigned int
pf_default_threads(void)
{
	const char *e = getenv("XK_POPULATE_THREADS");
	long n;

	if (e && *e) {
		char *end;

		n = strtol(e, &end, 10);
		if (!*end && n >= 0)
			return n > 64 ? 64 : (unsigned int)n;
	}
	n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > PF_MAX_THREADS ? PF_MAX_THREADS : (unsigned int)n;
}

int
pf_start(unsigned int nthreads, int rootfd, uint32_t blocksize,
	 uint64_t img_dev, uint64_t img_ino, struct pf_pool **pp,
	 struct pf_dir **rootp)
{
	struct pf_pool *p = calloc(1, sizeof(*p));
	struct pf_dir *root;

	*pp = NULL;
	*rootp = NULL;
	if (!p)
		return -ENOMEM;
	root = job_new(NULL, "", 0);
	p->tids = calloc(nthreads ? nthreads : 1, sizeof(*p->tids));
	if (!root || !p->tids) {
		free(root);
		free(p->tids);
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	p->bs = blocksize;
	p->img_dev = img_dev;
	p->img_ino = img_ino;
	p->at_ok = probe_at(rootfd);
	p->meta_budget = PF_META_BUDGET;
	{
		const char *e = getenv("XK_POPULATE_READAHEAD");
		char *end;
		unsigned long long v;

		if (e && *e) {
			v = strtoull(e, &end, 10);
			if (!*end)
				p->meta_budget = v;
		}
	}
	p->data_budget = 2 * p->meta_budget;
	p->live.lnext = p->live.lprev = &p->live;
	root->fd = rootfd;
	live_add(p, root);
	if (heap_push(p, root)) {
		root->fd = -1;		/* still the caller's */
		pf_stop(p);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < nthreads; i++) {
		if (pthread_create(&p->tids[i], NULL, worker_main, p))
			break;		/* fewer threads: still correct */
		pthread_setname_np(p->tids[i], "xk-read");
		p->nthreads++;
	}
	*pp = p;
	*rootp = root;
	return 0;
}
