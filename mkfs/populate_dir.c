// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -p DIR: copy a directory tree.  Each directory is handled in one go:
 * its entries are read and sorted by name (so the image does not depend
 * on the order the source filesystem returns them), an inode is
 * allocated for every child, then the directory itself is written
 * (xattrs, entries, inode), then each child in turn; subdirectories
 * recurse.  Memory is the entries of the directories on the current
 * path, never file contents.
 *
 * Everything is opened relative to its directory's descriptor (openat,
 * fstatat), so paths longer than PATH_MAX work and a rename in the source
 * cannot send the walk elsewhere; O_NOATIME keeps the walk from moving
 * the source's atimes where the kernel allows it.  Hard links are found
 * through (st_dev, st_ino) in a hash table.
 */
#define _GNU_SOURCE	/* SEEK_DATA, SEEK_HOLE, O_NOATIME */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "populate.h"

struct child {
	char		*name;
	size_t		namelen;
	struct stat	st;
	uint64_t	ino;
	int		owner;		/* first name of its inode: write it */
	int		skip;		/* the image itself: left out */
};

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

/*
 * All xattrs of one file: through fd when it is open, else by lpath
 * without following a final symlink.  Sorted by name so the attr fork
 * does not depend on the order the source lists them.
 */
static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
read_xattrs(struct pop_ctx *c, struct pop_xattrs *xl, int fd,
	    const char *lpath, const char *path)
{
	char *names = NULL, **v = NULL;
	uint8_t *val = NULL;
	ssize_t len;
	size_t n = 0;
	int err = 0;

	len = fd >= 0 ? flistxattr(fd, NULL, 0) : llistxattr(lpath, NULL, 0);
	if (len <= 0) {
		if (len < 0 && errno != ENOTSUP && errno != EPERM) {
			err = -errno;
			pop_error(path, err, "listing its xattrs");
		}
		return err;
	}
	names = malloc((size_t)len + 1);
	val = malloc(65536);
	if (!names || !val) {
		err = -ENOMEM;
		goto out;
	}
	len = fd >= 0 ? flistxattr(fd, names, (size_t)len) :
			llistxattr(lpath, names, (size_t)len);
	if (len < 0) {
		err = -errno;
		pop_error(path, err, "listing its xattrs");
		goto out;
	}
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(names + i) + 1)
		n++;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		err = -ENOMEM;
		goto out;
	}
	n = 0;
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(names + i) + 1)
		v[n++] = names + i;
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n && !err; i++) {
		ssize_t vl = fd >= 0 ? fgetxattr(fd, v[i], val, 65536) :
				       lgetxattr(lpath, v[i], val, 65536);

		if (vl < 0) {
			if (errno == ENODATA)
				continue;	/* removed meanwhile */
			err = -errno;
			fprintf(stderr, "xfskit-mkfs: %s: cannot read xattr "
				"%s: %s\n", path, v[i], strerror(errno));
			break;
		}
		err = pop_xattr_add(c, xl, path, v[i], val, (size_t)vl);
		if (err > 0)
			err = 0;
	}
out:
	if (err == -ENOMEM)
		pop_error(path, err, "reading its xattrs");
	free(v);
	free(val);
	free(names);
	return err;
}

static int
open_at(int dfd, const char *name, int flags)
{
	int fd = openat(dfd, name, flags | O_NOATIME | O_CLOEXEC |
			O_NOFOLLOW);

	if (fd < 0 && errno == EPERM)
		fd = openat(dfd, name, flags | O_CLOEXEC | O_NOFOLLOW);
	return fd;
}

static int
cmp_child(const void *a, const void *b)
{
	const struct child *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* Read and sort the entries of the open directory dfd. */
static int
read_entries(int dfd, const char *path, struct child **kidsp, size_t *np)
{
	struct child *kids = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int fd = dup(dfd), err = 0;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		pop_error(path, err, "reading the directory");
		return err;
	}
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			struct child *nk;

			cap = cap ? cap * 2 : 16;
			nk = realloc(kids, cap * sizeof(*nk));
			if (!nk) {
				err = -ENOMEM;
				break;
			}
			kids = nk;
		}
		memset(&kids[n], 0, sizeof(kids[n]));
		kids[n].name = strdup(de->d_name);
		kids[n].namelen = len;
		if (!kids[n].name) {
			err = -ENOMEM;
			break;
		}
		n++;
		errno = 0;
	}
	if (!err && errno)
		err = -errno;
	closedir(d);
	if (err) {
		pop_error(path, err, "reading the directory");
		for (size_t i = 0; i < n; i++)
			free(kids[i].name);
		free(kids);
		return err;
	}
	if (n)
		qsort(kids, n, sizeof(*kids), cmp_child);
	*kidsp = kids;
	*np = n;
	return 0;
}

static int walk_dir(struct pop_ctx *c, int dfd, struct pathbuf *pb,
		    uint64_t ino, uint64_t parent, const struct stat *st);

/* Write one non-directory child of dfd whose inode this name owns. */
static int
write_leaf(struct pop_ctx *c, int dfd, const struct child *k,
	   const char *path)
{
	struct xk_bld_inode ino;
	struct pop_xattrs xl = { 0 };
	struct pop_meta m;
	char lpath[64 + 256];
	char *target = NULL;
	int fd = -1, err;

	meta_from_stat(&m, &k->st);
	if (S_ISREG(k->st.st_mode)) {
		fd = open_at(dfd, k->name, O_RDONLY);
		if (fd < 0) {
			err = -errno;
			pop_error(path, err, "opening it");
			return err;
		}
		err = read_xattrs(c, &xl, fd, NULL, path);
	} else {
		snprintf(lpath, sizeof(lpath), "/proc/self/fd/%d/%s", dfd,
			 k->name);
		err = read_xattrs(c, &xl, -1, lpath, path);
	}
	if (!err && S_ISLNK(k->st.st_mode)) {
		size_t cap = (size_t)k->st.st_size + 2;
		ssize_t l;

		target = malloc(cap);
		if (!target) {
			err = -ENOMEM;
			goto out;
		}
		l = readlinkat(dfd, k->name, target, cap);
		if (l < 0 || (size_t)l >= cap) {
			err = l < 0 ? -errno : -EIO;
			pop_error(path, err, "reading the symlink");
			goto out;
		}
		target[l] = '\0';
	}
	if (err)
		goto out;
	pop_inode_begin(c, &ino, k->ino, &m);
	err = pop_attrs_write(c, &ino, &xl, path);
	if (!err) {
		if (fd >= 0)
			err = pop_file_fd(c, &ino, fd, (uint64_t)k->st.st_size,
					  path);
		else
			err = pop_special(c, &ino, &m, target, path);
	}
	if (!err)
		err = pop_inode_write(c, &ino, path);
out:
	pop_xattrs_reset(&xl);
	free(target);
	if (fd >= 0)
		close(fd);
	return err;
}

/*
 * Allocate an inode for every child: directories spread by the builder,
 * others near this directory; a second name of a hard-linked inode gets
 * the first one's inode.
 */
static int
alloc_children(struct pop_ctx *c, int dfd, struct pathbuf *pb,
	       struct child *kids, size_t n, uint64_t ino, uint32_t *nsubdirs)
{
	int err;

	*nsubdirs = 0;
	for (size_t i = 0; i < n; i++) {
		struct child *k = &kids[i];
		int isdir;
		size_t saved;

		if (path_push(pb, k->name, &saved))
			return -ENOMEM;
		err = pop_check_name(pb->s, k->name, k->namelen);
		if (!err && fstatat(dfd, k->name, &k->st,
				    AT_SYMLINK_NOFOLLOW)) {
			err = -errno;
			pop_error(pb->s, err, "reading its status");
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
write_dir(struct pop_ctx *c, int dfd, const char *path,
	  const struct child *kids, size_t n, uint32_t nsubdirs,
	  uint64_t ino, uint64_t parent, const struct stat *st)
{
	struct xk_bld_dirent *ents = NULL;
	struct pop_xattrs xl = { 0 };
	struct xk_bld_inode di;
	struct pop_meta m;
	size_t nents = 0;
	int err;

	if (n) {
		ents = calloc(n, sizeof(*ents));
		if (!ents)
			return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (kids[i].skip)
			continue;
		ents[nents].name = (const uint8_t *)kids[i].name;
		ents[nents].namelen = (uint8_t)kids[i].namelen;
		ents[nents].ftype = pop_ftype(kids[i].st.st_mode);
		ents[nents].ino = kids[i].ino;
		nents++;
	}
	meta_from_stat(&m, st);
	err = read_xattrs(c, &xl, dfd, NULL, path);
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

static int
walk_dir(struct pop_ctx *c, int dfd, struct pathbuf *pb, uint64_t ino,
	 uint64_t parent, const struct stat *st)
{
	struct child *kids = NULL;
	size_t n = 0;
	uint32_t nsub;
	int err;

	err = read_entries(dfd, pb->s, &kids, &n);
	if (err)
		return err;
	err = alloc_children(c, dfd, pb, kids, n, ino, &nsub);
	if (!err)
		err = write_dir(c, dfd, pb->s, kids, n, nsub, ino, parent, st);
	for (size_t i = 0; i < n && !err; i++) {
		struct child *k = &kids[i];
		size_t saved;

		if (!k->owner || k->skip)
			continue;
		if (path_push(pb, k->name, &saved)) {
			err = -ENOMEM;
			break;
		}
		if (S_ISDIR(k->st.st_mode)) {
			int cfd = open_at(dfd, k->name,
					  O_RDONLY | O_DIRECTORY);

			if (cfd < 0) {
				err = -errno;
				pop_error(pb->s, err, "opening the directory");
			} else {
				err = walk_dir(c, cfd, pb, k->ino, ino,
					       &k->st);
				close(cfd);
			}
		} else {
			err = write_leaf(c, dfd, k, pb->s);
		}
		path_pop(pb, saved);
	}
	for (size_t i = 0; i < n; i++)
		free(kids[i].name);
	free(kids);
	return err;
}

int
pop_from_dir(struct pop_ctx *c, const char *src)
{
	struct pathbuf pb = { 0 };
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
	err = walk_dir(c, fd, &pb, xk_bld_rootino(c->b),
		       xk_bld_rootino(c->b), &st);
	close(fd);
	free(pb.s);
	return err;
}
