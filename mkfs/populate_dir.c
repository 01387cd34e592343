// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -p DIR: copy a directory tree.  Each directory is handled in one go:
 * its entries, read and sorted by name (so the image does not depend on
 * the order the source filesystem returns them), get an inode each,
 * then the directory itself is written (xattrs, entries, inode), then
 * each child in turn; subdirectories recurse.  The reading of the source
 * (entries, status, xattrs, symlinks, small files' contents) is done
 * ahead by the read-ahead pool (populate_pf.c) on worker threads; this
 * file is the builder's side and runs on one thread, in an order that
 * depends on the tree alone, so the image is the same for any number of
 * threads.  Memory is the entries of the directories on the current path
 * and the pool's bounded read-ahead, never whole large files: those are
 * streamed here.
 *
 * Everything is opened relative to its directory's descriptor (openat,
 * fstatat), so paths longer than PATH_MAX work and a rename in the source
 * cannot send the walk elsewhere; O_NOATIME keeps the walk from moving
 * the source's atimes where the kernel allows it.  Hard links are found
 * through (st_dev, st_ino) in a hash table.
 */
#define _GNU_SOURCE	/* O_NOATIME */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "populate.h"
#include "populate_pf.h"

/* The path being walked, for messages only. */
struct pathbuf {
	char		*s;
	size_t		len, cap;
};

static int
path_push(struct pathbuf *p, const char *name, size_t *saved)
{
	size_t n = strlen(name), need = p->len + n + 2;

	*saved = p->len;
	if (need > p->cap) {
		char *ns = realloc(p->s, need * 2);

		if (!ns)
			return -ENOMEM;
		p->s = ns;
		p->cap = need * 2;
	}
	if (p->len && p->s[p->len - 1] != '/')
		p->s[p->len++] = '/';
	memcpy(p->s + p->len, name, n + 1);
	p->len += n;
	return 0;
}

static void
path_pop(struct pathbuf *p, size_t saved)
{
	p->len = saved;
	p->s[saved] = '\0';
}

static void
meta_from_stat(struct pop_meta *m, const struct stat *st)
{
	memset(m, 0, sizeof(*m));
	m->mode = st->st_mode;
	m->uid = st->st_uid;
	m->gid = st->st_gid;
	m->atime_sec = st->st_atim.tv_sec;
	m->atime_nsec = (uint32_t)st->st_atim.tv_nsec;
	m->mtime_sec = st->st_mtim.tv_sec;
	m->mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
	m->ctime_sec = st->st_ctim.tv_sec;
	m->ctime_nsec = (uint32_t)st->st_ctim.tv_nsec;
	m->rdev_major = major(st->st_rdev);
	m->rdev_minor = minor(st->st_rdev);
}

/* A failure the read-ahead found, reported where the walk meets it. */
static void
report(const char *path, const struct pf_err *e)
{
	if (e->xname)
		fprintf(stderr, "xfskit-mkfs: %s: cannot read xattr %s: %s\n",
			path, e->xname, strerror(-e->err));
	else
		pop_error(path, e->err, e->what);
}

/* The xattrs read ahead, in the builder's form (ACLs converted). */
static int
convert_xattrs(struct pop_ctx *c, struct pop_xattrs *xl,
	       const struct pf_xattr *xa, size_t n, const char *path)
{
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		err = pop_xattr_add(c, xl, path, xa[i].name, xa[i].value,
				    xa[i].len);
		if (err > 0)
			err = 0;
	}
	if (err == -ENOMEM)
		pop_error(path, err, "reading its xattrs");
	return err;
}

/* Contents read ahead, handed to the builder as a stream. */
struct memsrc {
	const uint8_t	*p;
	uint64_t	left;
};

static ssize_t
mem_read(void *ctx, void *buf, size_t n)
{
	struct memsrc *m = ctx;

	if (n > m->left)
		n = (size_t)m->left;
	memcpy(buf, m->p, n);
	m->p += n;
	m->left -= n;
	return (ssize_t)n;
}

/* A regular file's data: from the read-ahead, else streamed from it. */
static int
write_file(struct pop_ctx *c, struct pf_pool *pool, int dfd,
	   struct pf_ent *k, struct xk_bld_inode *ip, const char *path)
{
	uint64_t size = (uint64_t)k->st.st_size;
	int fd, err = 0;

	if (k->have_data) {
		struct memsrc m = { .p = k->data, .left = k->datalen };

		for (size_t i = 0; i < k->nseg && !err; i++) {
			uint64_t len = k->seg[i].end - k->seg[i].start;

			err = xk_bld_file_write_reader(c->b, ip,
						       k->seg[i].start,
						       mem_read, &m, len);
			if (err)
				pop_error(path, err, "copying its data");
			else
				pop_progress(c, len);
		}
		ip->size = size;
		pf_data_done(pool, k);
		return err;
	}
	if (!size) {
		ip->size = 0;
		return 0;
	}
	fd = pop_open_at(dfd, k->name, O_RDONLY);
	if (fd < 0) {
		err = -errno;
		pop_error(path, err, "opening it");
		return err;
	}
	err = pop_file_fd(c, ip, fd, size, path);
	close(fd);
	return err;
}

/* Write one non-directory child of d whose inode this name owns. */
static int
write_leaf(struct pop_ctx *c, struct pf_pool *pool, struct pf_dir *d,
	   struct pf_ent *k, const char *path)
{
	struct xk_bld_inode ino;
	struct pop_xattrs xl = { 0 };
	struct pop_meta m;
	int err;

	meta_from_stat(&m, &k->st);
	err = convert_xattrs(c, &xl, k->xa, k->nxa, path);
	if (!err && k->err.err) {
		report(path, &k->err);
		err = k->err.err;
	}
	if (err)
		goto out;
	pop_inode_begin(c, &ino, k->ino, &m);
	err = pop_attrs_write(c, &ino, &xl, path);
	if (!err) {
		if (S_ISREG(k->st.st_mode))
			err = write_file(c, pool, d->fd, k, &ino, path);
		else
			err = pop_special(c, &ino, &m, k->target, path);
	}
	if (!err)
		err = pop_inode_write(c, &ino, path);
out:
	pop_xattrs_reset(&xl);
	return err;
}

/*
 * Allocate an inode for every child: directories spread by the builder,
 * others near this directory; a second name of a hard-linked inode gets
 * the first one's inode.
 */
static int
alloc_children(struct pop_ctx *c, struct pathbuf *pb, struct pf_ent *kids,
	       size_t n, uint64_t ino, uint32_t *nsubdirs)
{
	int err;

	*nsubdirs = 0;
	for (size_t i = 0; i < n; i++) {
		struct pf_ent *k = &kids[i];
		int isdir;
		size_t saved;

		if (path_push(pb, k->name, &saved))
			return -ENOMEM;
		err = pop_check_name(pb->s, k->name, k->namelen);
		if (!err && k->st_err.err) {
			err = k->st_err.err;
			report(pb->s, &k->st_err);
		}
		if (!err && !pop_ftype(k->st.st_mode)) {
			fprintf(stderr, "xfskit-mkfs: %s: unknown file "
				"type\n", pb->s);
			err = -EINVAL;
		}
		if (err) {
			path_pop(pb, saved);
			return err;
		}
		if (k->st.st_dev == c->img_dev && k->st.st_ino == c->img_ino &&
		    c->img_ino) {
			fprintf(stderr, "xfskit-mkfs: %s: warning: this is the "
				"image being built; left out\n", pb->s);
			k->skip = 1;
			path_pop(pb, saved);
			continue;
		}
		isdir = S_ISDIR(k->st.st_mode);
		*nsubdirs += isdir;
		k->owner = 1;
		if (!isdir && k->st.st_nlink > 1 &&
		    pop_link_find(c, k->st.st_dev, k->st.st_ino, &k->ino)) {
			k->owner = 0;
			path_pop(pb, saved);
			continue;
		}
		err = xk_bld_ialloc(c->b, ino, isdir, &k->ino);
		if (err)
			pop_error(pb->s, err, "allocating its inode");
		else if (!isdir && k->st.st_nlink > 1)
			err = pop_link_add(c, k->st.st_dev, k->st.st_ino,
					   k->ino);
		path_pop(pb, saved);
		if (err)
			return err;
	}
	return 0;
}

static int
write_dir(struct pop_ctx *c, struct pf_dir *d, const char *path,
	  uint32_t nsubdirs, uint64_t ino, uint64_t parent,
	  const struct stat *st)
{
	struct xk_bld_dirent *ents = NULL;
	struct pop_xattrs xl = { 0 };
	struct xk_bld_inode di;
	struct pop_meta m;
	size_t nents = 0;
	int err;

	if (d->n) {
		ents = calloc(d->n, sizeof(*ents));
		if (!ents)
			return -ENOMEM;
	}
	for (size_t i = 0; i < d->n; i++) {
		const struct pf_ent *k = &d->kids[i];

		if (k->skip)
			continue;
		ents[nents].name = (const uint8_t *)k->name;
		ents[nents].namelen = (uint8_t)k->namelen;
		ents[nents].ftype = pop_ftype(k->st.st_mode);
		ents[nents].ino = k->ino;
		nents++;
	}
	meta_from_stat(&m, st);
	err = convert_xattrs(c, &xl, d->xa, d->nxa, path);
	if (!err && d->xerr.err) {
		report(path, &d->xerr);
		err = d->xerr.err;
	}
	if (!err) {
		pop_inode_begin(c, &di, ino, &m);
		err = pop_attrs_write(c, &di, &xl, path);
	}
	if (!err) {
		err = xk_bld_dir(c->b, &di, parent, ents, nents);
		if (err)
			pop_error(path, err, "writing the directory");
	}
	if (!err) {
		di.nlink = 2 + nsubdirs;
		err = pop_inode_write(c, &di, path);
	}
	pop_xattrs_reset(&xl);
	free(ents);
	return err;
}

/*
 * Build directory d and everything under it.  On success d is released;
 * on failure everything is left to pf_stop(), since workers may still
 * be reading under it.
 */
static int
walk_dir(struct pop_ctx *c, struct pf_pool *pool, struct pf_dir *d,
	 struct pathbuf *pb, uint64_t ino, uint64_t parent,
	 const struct stat *st)
{
	uint32_t nsub;
	int err;

	pf_wait(pool, d);
	if (d->err.err) {
		report(pb->s, &d->err);
		return d->err.err;
	}
	err = alloc_children(c, pb, d->kids, d->n, ino, &nsub);
	if (!err)
		err = write_dir(c, d, pb->s, nsub, ino, parent, st);
	for (size_t i = 0; i < d->n && !err; i++) {
		struct pf_ent *k = &d->kids[i];
		size_t saved;

		if (!k->owner || k->skip)
			continue;
		if (path_push(pb, k->name, &saved))
			return -ENOMEM;
		if (S_ISDIR(k->st.st_mode))
			err = walk_dir(c, pool, k->job, pb, k->ino, ino,
				       &k->st);
		else
			err = write_leaf(c, pool, d, k, pb->s);
		path_pop(pb, saved);
	}
	if (!err)
		pf_release(pool, d);
	return err;
}

int
pop_from_dir(struct pop_ctx *c, const char *src)
{
	struct pathbuf pb = { 0 };
	struct pf_pool *pool;
	struct pf_dir *root;
	struct rlimit rl;
	struct stat st;
	size_t saved;
	int fd, err;

	/* One descriptor per level of the tree stays open. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		pop_error(src, err, "opening the directory");
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (path_push(&pb, src, &saved)) {
		close(fd);
		return -ENOMEM;
	}
	err = pf_start(pf_default_threads(), fd, c->mp->g.blocksize,
		       c->img_dev, c->img_ino, &pool, &root);
	if (err) {
		pop_error(src, err, "starting to read it");
		close(fd);
		free(pb.s);
		return err;
	}
	err = walk_dir(c, pool, root, &pb, xk_bld_rootino(c->b),
		       xk_bld_rootino(c->b), &st);
	pf_stop(pool);
	free(pb.s);
	return err;
}
