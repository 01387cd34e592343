// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-mkfs -p: the option, the choice of source, and the policy all
 * sources share.  After mkfs_write() has formatted the empty filesystem,
 * mkfs_populate() reopens it read-write, opens a builder, lets the source
 * build the tree from the root down, fixes the link counts of hard-linked
 * inodes, commits (every per-AG index and counter rebuilt) and closes.
 *
 * Times: atime and mtime are copied from the source with nanoseconds;
 * ctime is copied too (a protofile has none: build time); crtime, which
 * no source records, is the build time.  With SOURCE_DATE_EPOCH set the
 * build time is that epoch, ctime and crtime are that epoch for every
 * inode, and atime and mtime later than it are clamped to it: reading the
 * tree moves atimes and copying it moves ctimes, so only this makes two
 * runs over the same content byte-identical.
 *
 * A failure after formatting leaves the image unusable on purpose: the
 * primary superblock's magic number is zeroed, so neither blkid, the
 * kernel nor xfskit tools take a half-built image for a filesystem.
 */
#define _GNU_SOURCE	/* SEEK_DATA, SEEK_HOLE, O_NOATIME */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <xfskit/build_acl.h>
#include <xfskit/build_attr.h>
#include <xfskit/meta.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dinode.h>
#include <xfskit/format/dir.h>
#include <xfskit/format/symlink.h>
#include <xfskit/pptr.h>

#include "populate.h"

/* --- the option --- */

static int
parse_id(const char *what, const char *v, int64_t *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (!*v || *end || errno || n > UINT32_MAX - 1) {
		fprintf(stderr, "Invalid value %s for -p %s option. It must "
			"be a number from 0 to %u.\n", v, what,
			UINT32_MAX - 1);
		return 1;
	}
	*out = (int64_t)n;
	return 0;
}

/*
 * -p [file=]SOURCE[,uid=N][,gid=N]: a whole argument that names an
 * existing path is the source even when it holds commas.
 */
int
mkfs_parse_populate(struct mkfs_populate *p, char *arg)
{
	struct stat st;
	char *save = NULL;

	if (p->src) {
		fprintf(stderr, "-p option respecified\n");
		return 1;
	}
	p->uid = p->gid = -1;
	if (!strncmp(arg, "file=", 5) && stat(arg + 5, &st) == 0) {
		p->src = arg + 5;
		return 0;
	}
	if (stat(arg, &st) == 0) {
		p->src = arg;
		return 0;
	}
	for (char *tok = strtok_r(arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (eq)
			*eq++ = '\0';
		if (!eq || !strcmp(tok, "file")) {
			const char *v = eq ? eq : tok;

			if (p->src) {
				fprintf(stderr, "-p: more than one source "
					"given (%s and %s)\n", p->src, v);
				return 1;
			}
			if (!*v) {
				fprintf(stderr, "-p file option requires a "
					"value\n");
				return 1;
			}
			p->src = v;
		} else if (!strcmp(tok, "uid")) {
			if (parse_id("uid", eq, &p->uid))
				return 1;
		} else if (!strcmp(tok, "gid")) {
			if (parse_id("gid", eq, &p->gid))
				return 1;
		} else {
			fprintf(stderr, "unknown option -p %s=%s\n", tok, eq);
			return 1;
		}
	}
	if (!p->src) {
		fprintf(stderr, "-p needs a source: a directory, a protofile "
			"or a tar archive\n");
		return 1;
	}
	return 0;
}

/* Compressed or tar content, by its first bytes. */
static int
looks_like_archive(const char *path)
{
	uint8_t h[512];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = pread(fd, h, sizeof(h), 0);
	close(fd);
	if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b)
		return 1;		/* gzip */
	if (n >= 6 && !memcmp(h, "\xfd" "7zXZ\0", 6))
		return 1;		/* xz */
	if (n >= 4 && !memcmp(h, "\x28\xb5\x2f\xfd", 4))
		return 1;		/* zstd */
	if (n >= 3 && !memcmp(h, "BZh", 3))
		return 1;		/* bzip2 */
	if (n == 512 && !memcmp(h + 257, "ustar", 5))
		return 1;		/* tar: POSIX, GNU */
	return 0;
}

/*
 * Decide the source kind, and read a protofile now: mistakes in the
 * command line or the protofile are refused before the device is
 * touched.
 */
int
mkfs_populate_prepare(struct mkfs_populate *p)
{
	struct stat st;

	if (stat(p->src, &st)) {
		fprintf(stderr, "-p: cannot read %s: %s\n", p->src,
			strerror(errno));
		return 1;
	}
	if (S_ISDIR(st.st_mode)) {
		p->kind = POP_DIR;
		if (access(p->src, R_OK | X_OK)) {
			fprintf(stderr, "-p: cannot read directory %s: %s\n",
				p->src, strerror(errno));
			return 1;
		}
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "-p: %s is neither a directory, a protofile "
			"nor a tar archive\n", p->src);
		return 1;
	}
	if (access(p->src, R_OK)) {
		fprintf(stderr, "-p: cannot read %s: %s\n", p->src,
			strerror(errno));
		return 1;
	}
	if (looks_like_archive(p->src)) {
		p->kind = POP_TAR;
		return 0;
	}
	p->kind = POP_PROTO;
	p->ctx = calloc(1, sizeof(struct pop_ctx));
	if (!p->ctx)
		return 1;
	p->ctx->opt = p;
	return pop_proto_parse(p->ctx, p->src) ? 1 : 0;
}

/* --- shared policy --- */

int
pop_time_now(int64_t *sec, uint32_t *nsec, int *from_sde)
{
	const char *e = getenv("SOURCE_DATE_EPOCH");
	struct timespec ts;

	*from_sde = 0;
	if (e && *e) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(e, &end, 10);
		if (*end || errno || v < 0) {
			fprintf(stderr, "SOURCE_DATE_EPOCH=%s is not a number "
				"of seconds; ignored\n", e);
		} else {
			*sec = v;
			*nsec = 0;
			*from_sde = 1;
			return 0;
		}
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	*sec = ts.tv_sec;
	*nsec = (uint32_t)ts.tv_nsec;
	return 0;
}

void
pop_error(const char *path, int err, const char *what)
{
	if (err == -ENOSPC)
		fprintf(stderr, "xfskit-mkfs: %s: the source does not fit in "
			"the filesystem (no space left while %s)\n", path,
			what);
	else
		fprintf(stderr, "xfskit-mkfs: %s: %s: %s\n", path, what,
			xk_strerror(err));
}

uint8_t
pop_ftype(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:	return XK_DIR3_FT_REG_FILE;
	case S_IFDIR:	return XK_DIR3_FT_DIR;
	case S_IFCHR:	return XK_DIR3_FT_CHRDEV;
	case S_IFBLK:	return XK_DIR3_FT_BLKDEV;
	case S_IFIFO:	return XK_DIR3_FT_FIFO;
	case S_IFSOCK:	return XK_DIR3_FT_SOCK;
	case S_IFLNK:	return XK_DIR3_FT_SYMLINK;
	}
	return XK_DIR3_FT_UNKNOWN;
}

/* A directory entry name XFS can hold: 1..255 bytes, no '/' or NUL. */
int
pop_check_name(const char *path, const char *name, size_t len)
{
	if (len == 0 || len > 255 || memchr(name, '/', len) ||
	    memchr(name, '\0', len) ||
	    (len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.')) {
		fprintf(stderr, "xfskit-mkfs: %s: %s\n", path, len > 255 ?
			"the name is longer than 255 bytes" :
			"not a valid file name");
		return -ENAMETOOLONG;
	}
	return 0;
}

static void
clamp_time(const struct pop_ctx *c, int64_t *sec, uint32_t *nsec)
{
	if (c->sde && (*sec > c->now_sec ||
		       (*sec == c->now_sec && *nsec > c->now_nsec))) {
		*sec = c->now_sec;
		*nsec = c->now_nsec;
	}
}

int
pop_inode_begin(struct pop_ctx *c, struct xk_bld_inode *ip, uint64_t ino,
		const struct pop_meta *m)
{
	xk_bld_inode_init(c->b, ip, ino, (uint16_t)m->mode);
	ip->uid = c->opt->uid >= 0 ? (uint32_t)c->opt->uid : m->uid;
	ip->gid = c->opt->gid >= 0 ? (uint32_t)c->opt->gid : m->gid;
	ip->atime_sec = m->atime_sec;
	ip->atime_nsec = m->atime_nsec;
	ip->mtime_sec = m->mtime_sec;
	ip->mtime_nsec = m->mtime_nsec;
	clamp_time(c, &ip->atime_sec, &ip->atime_nsec);
	clamp_time(c, &ip->mtime_sec, &ip->mtime_nsec);
	if (c->sde) {
		ip->ctime_sec = c->now_sec;
		ip->ctime_nsec = c->now_nsec;
	} else {
		ip->ctime_sec = m->ctime_sec;
		ip->ctime_nsec = m->ctime_nsec;
	}
	ip->crtime_sec = c->now_sec;
	ip->crtime_nsec = c->now_nsec;
	/*
	 * With parent pointers every inode gets an attr fork from the
	 * start, as the kernel's do (empty until its pointers are added
	 * at the end): the data fork is laid out beside it, so adding
	 * them never has to move the data fork.
	 */
	if (c->mp->g.has_parent)
		ip->attr.format = XK_BLD_FMT_EXTENTS;
	return 0;
}

void
pop_xattrs_reset(struct pop_xattrs *xl)
{
	for (size_t i = 0; i < xl->n; i++) {
		free((void *)xl->v[i].name);
		free((void *)xl->v[i].value);
	}
	xk_vec_free(&xl->vec);
}

static int
xattr_push(struct pop_xattrs *xl, uint8_t flags, const char *name,
	   size_t namelen, const void *value, size_t len)
{
	struct xk_bld_xattr *x;
	uint8_t *n, *v;

	if (!xl->vec.first)
		xl->vec.first = 8;	/* most files have a few */
	if (xk_vec_reserve(&xl->vec, xl->n + 1, sizeof(*xl->v)))
		return -ENOMEM;
	n = malloc(namelen ? namelen : 1);
	v = malloc(len ? len : 1);
	if (!n || !v) {
		free(n);
		free(v);
		return -ENOMEM;
	}
	memcpy(n, name, namelen);
	if (len)
		memcpy(v, value, len);
	x = &xl->v[xl->n++];
	x->flags = flags;
	x->name = n;
	x->namelen = (uint8_t)namelen;
	x->value = v;
	x->valuelen = (uint32_t)len;
	return 0;
}

int
pop_xattr_add(struct pop_ctx *c, struct pop_xattrs *xl, const char *path,
	      const char *name, const void *value, size_t len)
{
	static const struct {
		const char	*prefix;
		uint8_t		flags;
	} ns[] = {
		{ "user.", 0 },
		{ "trusted.", XK_ATTR_ROOT },
		{ "security.", XK_ATTR_SECURE },
	};
	size_t nlen = strlen(name);
	enum xk_acl_type t = xk_acl_linux_name_type(name, nlen);

	(void)c;
	if (t != XK_ACL_TYPE_NONE) {
		size_t cnt = len >= XK_POSIX_ACL_XATTR_HDR ?
			     (len - XK_POSIX_ACL_XATTR_HDR) /
			     XK_POSIX_ACL_XATTR_ENT : 0;
		size_t outsz = xk_acl_xfs_size(cnt), outlen = 0;
		const char *xname = xk_acl_xfs_name(t);
		uint16_t perm;
		uint8_t *out;
		int err;

		/* An access ACL the mode says all of is not stored. */
		if (t == XK_ACL_TYPE_ACCESS) {
			err = xk_acl_linux_mode(value, len, &perm);
			if (err == 0)
				return 1;
		}
		out = malloc(outsz);
		if (!out)
			return -ENOMEM;
		err = xk_acl_linux_to_xfs(value, len, out, outsz, &outlen);
		if (err == -ENODATA) {
			free(out);
			return 1;
		}
		if (!err)
			err = xattr_push(xl, XK_ATTR_ROOT, xname,
					 strlen(xname), out, outlen);
		free(out);
		if (err && err != -ENOMEM)
			fprintf(stderr, "xfskit-mkfs: %s: the ACL %s cannot "
				"be stored: %s\n", path, name,
				xk_strerror(err));
		return err;
	}
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		size_t pl = strlen(ns[i].prefix);

		if (strncmp(name, ns[i].prefix, pl))
			continue;
		if (nlen - pl == 0 || nlen - pl > 255) {
			fprintf(stderr, "xfskit-mkfs: %s: the xattr name %s "
				"is not 1 to 255 bytes after its prefix\n",
				path, name);
			return -ENAMETOOLONG;
		}
		if (len > 65536) {
			fprintf(stderr, "xfskit-mkfs: %s: the value of xattr "
				"%s is larger than 64 KiB\n", path, name);
			return -E2BIG;
		}
		return xattr_push(xl, ns[i].flags, name + pl, nlen - pl,
				  value, len);
	}
	/* system.* others (NFSv4 ACLs, ...) have no XFS form. */
	fprintf(stderr, "xfskit-mkfs: %s: warning: xattr %s has no XFS "
		"form; skipped\n", path, name);
	return 1;
}

int
pop_attrs_write(struct pop_ctx *c, struct xk_bld_inode *ip,
		struct pop_xattrs *xl, const char *path)
{
	int err;

	if (!xl->n)
		return 0;
	if (ip->attr.format == XK_BLD_FMT_EXTENTS && !ip->attr.next)
		ip->attr.format = XK_BLD_FMT_NONE;	/* the empty fork */
	err = xk_bld_attrs(c->b, ip, xl->v, xl->n);
	if (err)
		pop_error(path, err, "writing its extended attributes");
	return err;
}

/*
 * Open an entry without following links, and without moving its atime
 * where we may (O_NOATIME needs ownership).
 */
int
pop_open_at(int dfd, const char *name, int flags)
{
	int fd = openat(dfd, name, flags | O_NOATIME | O_CLOEXEC |
			O_NOFOLLOW);

	if (fd < 0 && errno == EPERM)
		fd = openat(dfd, name, flags | O_CLOEXEC | O_NOFOLLOW);
	return fd;
}

/*
 * Data segments from SEEK_DATA/SEEK_HOLE, widened to whole blocks of the
 * new filesystem (a source block smaller than ours may start a segment
 * mid-block; reading the hole part gives zeros, as it should).
 */
int
pop_next_segment(int fd, uint64_t *pos, uint64_t size, uint64_t bs,
		 uint64_t *startp, uint64_t *endp)
{
	while (*pos < size) {
		off_t d = lseek(fd, (off_t)*pos, SEEK_DATA), h;
		uint64_t start, end;

		if (d < 0) {
			if (errno == ENXIO)
				return 1;	/* only a hole remains */
			if (errno != EINVAL)
				return -errno;
			d = (off_t)*pos;	/* no SEEK_DATA: all data */
			h = (off_t)size;
		} else {
			h = lseek(fd, d, SEEK_HOLE);
			if (h < 0)
				h = (off_t)size;
		}
		if ((uint64_t)h > size)
			h = (off_t)size;
		start = (uint64_t)d & ~(bs - 1);
		if (start < *pos)
			start = *pos;
		end = ((uint64_t)h + bs - 1) & ~(bs - 1);
		if (end > size)
			end = size;
		if (end <= start) {
			*pos = (uint64_t)h > *pos ? (uint64_t)h : *pos + 1;
			continue;
		}
		*startp = start;
		*endp = end;
		return 0;
	}
	return 1;
}

int
pop_file_fd(struct pop_ctx *c, struct xk_bld_inode *ip, int fd,
	    uint64_t size, const char *path)
{
	uint64_t bs = c->mp->g.blocksize, pos = 0;
	int err;

	while (pos < size) {
		uint64_t start, end;

		err = pop_next_segment(fd, &pos, size, bs, &start, &end);
		if (err < 0) {
			pop_error(path, err, "reading it");
			return err;
		}
		if (err)
			break;		/* only a hole remains */
		err = xk_bld_file_write_fd(c->b, ip, start, fd, start,
					   end - start);
		if (err) {
			pop_error(path, err, "copying its data");
			return err;
		}
		pop_progress(c, end - start);
		pos = end;
	}
	ip->size = size;
	return 0;
}

int
pop_special(struct pop_ctx *c, struct xk_bld_inode *ip,
	    const struct pop_meta *m, const char *target, const char *path)
{
	int err = 0;

	switch (m->mode & S_IFMT) {
	case S_IFLNK:
		if (strlen(target) > XK_SYMLINK_MAXLEN) {
			fprintf(stderr, "xfskit-mkfs: %s: the symlink target "
				"is longer than XFS allows (%u bytes)\n",
				path, XK_SYMLINK_MAXLEN);
			return -ENAMETOOLONG;
		}
		err = xk_bld_symlink(c->b, ip, target, strlen(target));
		break;
	case S_IFCHR:
	case S_IFBLK:
		err = xk_bld_dev(c->b, ip, m->rdev_major, m->rdev_minor);
		break;
	case S_IFIFO:
	case S_IFSOCK:
		err = xk_bld_dev(c->b, ip, 0, 0);
		break;
	}
	if (err)
		pop_error(path, err, "writing it");
	return err;
}

/*
 * Early write-back of the image.  Everything written stays dirty in the
 * page cache until the final fsync, which then waits for all of it
 * (a quarter of a second for 300,000 entries here).  After each
 * write-back of the buffer cache a helper thread asks the kernel to
 * start writing what is dirty (sync_file_range, which returns without
 * waiting for the I/O but may wait for the queue), so the disk works
 * while the build goes on and the final fsync finds little left.  It
 * never changes what is written, only when.
 */
struct pop_wb {
	pthread_t	tid;
	pthread_mutex_t	lock;
	pthread_cond_t	cv;
	int		fd;
	int		kicks, stop;
};

static void *
wb_main(void *arg)
{
	struct pop_wb *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->kicks && !w->stop)
			pthread_cond_wait(&w->cv, &w->lock);
		if (w->stop)
			break;
		w->kicks = 0;
		pthread_mutex_unlock(&w->lock);
		(void)sync_file_range(w->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Start the helper; without it (no memory, no thread) nothing changes. */
static void
wb_start(struct pop_ctx *c)
{
	struct pop_wb *w = calloc(1, sizeof(*w));

	if (!w)
		return;
	w->fd = c->mp->dev->fd;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (pthread_create(&w->tid, NULL, wb_main, w)) {
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cv);
		free(w);
		return;
	}
	pthread_setname_np(w->tid, "xk-writeback");
	c->wb = w;
}

static void
wb_kick(struct pop_ctx *c)
{
	struct pop_wb *w = c->wb;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->kicks = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->lock);
}

static void
wb_stop(struct pop_ctx *c)
{
	struct pop_wb *w = c->wb;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->tid, NULL);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cv);
	free(w);
	c->wb = NULL;
}

/*
 * Inodes written between two write-backs of the buffer cache.  Written
 * inode clusters, directory and xattr blocks stay dirty in the cache
 * until written back, and the cache can only reclaim clean buffers (it
 * rescans the dirty ones on every release once over its budget), so
 * writing back as we go keeps both memory and time linear.
 */
#define POP_WRITEBACK_EVERY	8192

int
pop_inode_write(struct pop_ctx *c, struct xk_bld_inode *ip, const char *path)
{
	int err = xk_bld_inode_write(c->b, ip);

	if (err)
		pop_error(path, err, "writing its inode");
	pop_progress(c, 0);
	if (!err && c->entries % POP_WRITEBACK_EVERY == 0) {
		err = xk_buf_flush(c->mp);
		if (err)
			pop_error(path, err, "writing metadata back");
		else
			wb_kick(c);
	}
	return err;
}

/* --- hard links --- */

static size_t
link_slot(const struct pop_ctx *c, uint64_t dev, uint64_t ino)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ull) ^
		     (ino * 0xc2b2ae3d27d4eb4full);

	h ^= h >> 31;
	return (size_t)h & (c->links_size - 1);
}

int
pop_link_find(struct pop_ctx *c, uint64_t dev, uint64_t ino, uint64_t *xino)
{
	if (!c->links_size)
		return 0;
	for (size_t i = link_slot(c, dev, ino);;
	     i = (i + 1) & (c->links_size - 1)) {
		struct pop_link *l = &c->links[i];

		if (!l->xino)
			return 0;
		if (l->dev == dev && l->ino == ino) {
			l->count++;
			*xino = l->xino;
			return 1;
		}
	}
}

static int
links_grow(struct pop_ctx *c)
{
	size_t nsize = c->links_size ? c->links_size * 2 : 1024;
	struct pop_link *old = c->links, *nl = calloc(nsize, sizeof(*nl));
	size_t osize = c->links_size;

	if (!nl)
		return -ENOMEM;
	c->links = nl;
	c->links_size = nsize;
	for (size_t i = 0; i < osize; i++) {
		size_t j;

		if (!old[i].xino)
			continue;
		for (j = link_slot(c, old[i].dev, old[i].ino); nl[j].xino;
		     j = (j + 1) & (nsize - 1))
			;
		nl[j] = old[i];
	}
	free(old);
	return 0;
}

int
pop_link_add(struct pop_ctx *c, uint64_t dev, uint64_t ino, uint64_t xino)
{
	size_t i;
	int err;

	if ((c->links_used + 1) * 2 > c->links_size) {
		err = links_grow(c);
		if (err)
			return err;
	}
	for (i = link_slot(c, dev, ino); c->links[i].xino;
	     i = (i + 1) & (c->links_size - 1))
		;
	c->links[i].dev = dev;
	c->links[i].ino = ino;
	c->links[i].xino = xino;
	c->links[i].count = 1;
	c->links_used++;
	return 0;
}

/* Inodes were written with one link; set the count found in the tree. */
int
pop_links_fix(struct pop_ctx *c)
{
	for (size_t i = 0; i < c->links_size; i++) {
		const struct pop_link *l = &c->links[i];
		int err;

		if (!l->xino || l->count == 1)
			continue;
		err = xk_bld_inode_set_nlink(c->b, l->xino, l->count);
		if (err) {
			fprintf(stderr, "xfskit-mkfs: setting the link count "
				"of inode %llu failed: %s\n",
				(unsigned long long)l->xino,
				xk_strerror(err));
			return err;
		}
	}
	return 0;
}

/* --- progress --- */

void
pop_progress(struct pop_ctx *c, uint64_t bytes)
{
	struct timespec ts;
	int64_t ms;

	c->bytes += bytes;
	if (!bytes)
		c->entries++;
	if (!c->tty || (c->entries & 1023))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	if (ms - c->last_ms < 500)
		return;
	c->last_ms = ms;
	c->progress_shown = 1;
	fprintf(stderr, "\rpopulating: %llu inodes, %llu MiB",
		(unsigned long long)c->entries,
		(unsigned long long)(c->bytes >> 20));
}

/* --- the driver --- */

/* Zero the primary superblock's magic: no tool takes it for XFS. */
static void
spoil_image(const char *dev)
{
	struct xk_dev *d;
	uint8_t sect[512];

	if (xk_dev_open(dev, 0, &d))
		return;
	if (!xk_dev_pread(d, sect, sizeof(sect), 0)) {
		memset(sect, 0, 4);
		if (xk_dev_pwrite(d, sect, sizeof(sect), 0) ||
		    xk_dev_sync(d)) {
			xk_dev_close(d);
			fprintf(stderr, "xfskit-mkfs: %s could not be marked "
				"as holding no filesystem; do not mount it.\n",
				dev);
			return;
		}
	}
	xk_dev_close(d);
	fprintf(stderr, "xfskit-mkfs: %s is left without a valid "
		"superblock; it does not hold a filesystem.\n", dev);
}

/*
 * The xfs:autofsck property goes back on the populated root, whose
 * attributes were rewritten from the source: set last, as mkfs.xfs 7.2
 * sets it after populating, replacing one the source may have had.
 */
static int
pop_set_autofsck(struct pop_ctx *c, const char *value)
{
	static const uint8_t name[] = "xfs:autofsck";
	uint64_t ino = xk_bld_rootino(c->b);
	struct xk_attr_list l = { 0 };
	struct xk_dinode *dip;
	struct xk_buf *bp;
	const char *why = NULL;
	int err;

	err = xk_inode_read(c->mp, ino, 0, &bp, &dip);
	if (err)
		return err;
	err = xk_attr_list_read(c->mp, ino, dip, &l, &why);
	xk_buf_release(bp);
	if (!err) {
		xk_attr_list_remove(&l, XK_ATTR_ROOT, name, sizeof(name) - 1,
				    NULL, 0);
		err = xk_attr_list_add(&l, XK_ATTR_ROOT, name,
				       sizeof(name) - 1,
				       (const uint8_t *)value,
				       (uint32_t)strlen(value));
	}
	if (!err)
		err = xk_bld_attr_rewrite(c->b, ino, &l, &why);
	if (err)
		fprintf(stderr, "xfskit-mkfs: setting the autofsck property "
			"on the root failed: %s%s%s\n", why ? why : "",
			why ? ": " : "", xk_strerror(err));
	xk_attr_list_free(&l);
	return err;
}

int
mkfs_populate(const struct mkfs_cfg *cfg, struct mkfs_populate *p, int quiet)
{
	struct pop_ctx local = { 0 }, *c = p->ctx ? p->ctx : &local;
	struct xk_fail f;
	int err;

	c->opt = p;
	c->quiet = quiet;
	c->tty = !quiet && isatty(STDERR_FILENO);
	pop_time_now(&c->now_sec, &c->now_nsec, &c->sde);
	err = xk_mount_open(cfg->dev, 0, &c->mp, &f);
	if (err) {
		char msg[400];

		xk_fail_format(&f, msg, sizeof(msg));
		fprintf(stderr, "xfskit-mkfs: reopening %s failed: %s\n",
			cfg->dev, msg);
		goto out;
	}
	/* Written back as we go (pop_inode_write): a small cache will do. */
	xk_mount_set_cache_limit(c->mp, 64ull << 20);
	err = xk_bld_open(c->mp, &c->b);
	if (err) {
		fprintf(stderr, "xfskit-mkfs: cannot start building on %s: "
			"%s\n", cfg->dev, xk_strerror(err));
		goto out;
	}
	xk_bld_set_time(c->b, c->now_sec, c->now_nsec);
	wb_start(c);
	{
		struct stat ist;

		if (stat(cfg->dev, &ist) == 0) {
			c->img_dev = ist.st_dev;
			c->img_ino = ist.st_ino;
		}
	}
	switch (p->kind) {
	case POP_DIR:
		err = pop_from_dir(c, p->src);
		break;
	case POP_PROTO:
		err = pop_from_proto(c);
		break;
	case POP_TAR:
		err = pop_from_tar(c, p->src);
		break;
	default:
		err = -EINVAL;
	}
	if (!err)
		err = pop_links_fix(c);
	if (!err && c->mp->g.has_parent) {
		uint64_t bad;
		const char *why;

		/*
		 * Every inode is written: now each link is known.  The
		 * metadata tree's files got theirs when it was made.
		 */
		err = xk_bld_pptr_tree(c->b, 0, &bad, NULL, &why);
		if (err)
			fprintf(stderr, "xfskit-mkfs: adding parent pointers "
				"failed at inode %llu: %s: %s\n",
				(unsigned long long)bad, why ? why : "",
				xk_strerror(err));
	}
	if (!err && cfg->autofsck)
		err = pop_set_autofsck(c, cfg->autofsck);
	if (!err) {
		err = xk_bld_commit(c->b);
		if (err)
			pop_error(cfg->dev, err, "committing the indexes");
	}
out:
	wb_stop(c);
	if (c->progress_shown)
		fputc('\n', stderr);
	xk_bld_free(c->b);
	c->b = NULL;
	if (c->mp) {
		int cerr = xk_mount_close(c->mp);

		if (cerr && !err) {
			fprintf(stderr, "xfskit-mkfs: writing %s failed: "
				"%s\n", cfg->dev, xk_strerror(cerr));
			err = cerr;
		}
	}
	free(c->links);
	if (c->proto_tree)
		pop_tree_free(c->proto_tree);
	if (p->ctx)
		free(p->ctx);
	p->ctx = NULL;
	if (err)
		spoil_image(cfg->dev);
	return err ? 1 : 0;
}

/* Free what mkfs_populate_prepare() kept when formatting does not run. */
void
mkfs_populate_release(struct mkfs_populate *p)
{
	if (p->ctx) {
		if (p->ctx->proto_tree)
			pop_tree_free(p->ctx->proto_tree);
		free(p->ctx);
		p->ctx = NULL;
	}
}
