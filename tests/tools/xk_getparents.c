// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xk_getparents MOUNTPOINT: the parent pointers of every file under a
 * mounted XFS filesystem, as the kernel reports them (the GETPARENTS
 * ioctl, through a file handle so symlinks and special files are asked
 * the same way as regular files; the kernel gives no handle to device
 * nodes, FIFOs and sockets, which are listed as "special").  One line
 * per file, in path order:
 *
 *     PATH ino=N: PARENT_INO:PARENT_GEN:NAME PARENT_INO:PARENT_GEN:NAME ...
 *
 * with the parent pointers sorted, "root" for the root directory.  Two
 * mounts whose trees and parent pointers agree print the same text; the
 * tests compare the kernel's replay with ours this way.  The ioctl
 * layouts are declared here (the host may lack the newest xfs headers).
 * Exit status: 0, or 1 when a file's parent pointers cannot be read.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

struct gp_fid {
	uint16_t	fid_len;
	uint16_t	fid_pad;
	uint32_t	fid_gen;
	uint64_t	fid_ino;
};

struct gp_handle {
	union {
		int64_t		align;
		uint32_t	fsid[2];
	} u;
	struct gp_fid	fid;
};

struct gp_rec {
	struct gp_handle parent;
	uint32_t	reclen;
	uint32_t	reserved;
	char		name[];
};

struct gp_req {
	uint32_t	cursor[4];
	uint16_t	iflags;
	uint16_t	oflags;
	uint32_t	bufsize;
	uint64_t	reserved;
	uint64_t	buffer;
};

struct gp_by_handle {
	struct gp_handle handle;
	struct gp_req	req;
};

struct gp_handlereq {
	uint32_t	fd;
	void		*path;
	uint32_t	oflags;
	void		*ihandle;
	uint32_t	ihandlen;
	void		*ohandle;
	uint32_t	*ohandlen;
};

#define GP_OFLAG_ROOT	(1u << 0)
#define GP_OFLAG_DONE	(1u << 1)
#define GP_IOC_BY_HANDLE _IOWR('X', 63, struct gp_by_handle)
#define GP_IOC_PATH_TO_HANDLE _IOWR('X', 105, struct gp_handlereq)

struct strv {
	char	**v;
	size_t	n, cap;
};

static int
strv_add(struct strv *s, char *str)
{
	if (!str)
		return -1;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = str;
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Every path under dir (relative to the mount), depth first. */
static int
walk(const char *top, const char *rel, struct strv *paths)
{
	char *full;
	DIR *d;
	struct dirent *de;
	int err = 0;

	if (asprintf(&full, "%s/%s", top, rel) < 0)
		return -1;
	d = opendir(full);
	free(full);
	if (!d)
		return -1;
	while (!err && (de = readdir(d))) {
		char *p;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (asprintf(&p, "%s/%s", rel, de->d_name) < 0) {
			err = -1;
			break;
		}
		if (strv_add(paths, strdup(p))) {
			free(p);
			err = -1;
			break;
		}
		if (asprintf(&full, "%s/%s", top, p) < 0) {
			free(p);
			err = -1;
			break;
		}
		if (!lstat(full, &st) && S_ISDIR(st.st_mode))
			err = walk(top, p, paths);
		free(full);
		free(p);
	}
	closedir(d);
	return err;
}

static int
one_file(int mfd, const char *top, const char *rel, char *buf, size_t bufsz)
{
	struct gp_by_handle gh;
	struct gp_handlereq hr;
	struct strv recs = { 0 };
	uint32_t hlen = sizeof(gh.handle);
	struct stat st;
	char *full;
	int root = 0, err = 0;

	if (asprintf(&full, "%s/%s", top, rel) < 0)
		return -1;
	memset(&gh, 0, sizeof(gh));
	memset(&hr, 0, sizeof(hr));
	hr.path = full;
	hr.ohandle = &gh.handle;
	hr.ohandlen = &hlen;
	if (!lstat(full, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) &&
	    !S_ISLNK(st.st_mode)) {
		/* The kernel gives handles to files, dirs and symlinks only. */
		printf("%s ino=%llu: special\n", rel,
		       (unsigned long long)st.st_ino);
		free(full);
		return 0;
	}
	if (lstat(full, &st) || ioctl(mfd, GP_IOC_PATH_TO_HANDLE, &hr)) {
		fprintf(stderr, "xk_getparents: %s: %s\n", full,
			strerror(errno));
		free(full);
		return -1;
	}
	free(full);
	do {
		gh.req.bufsize = (uint32_t)bufsz;
		gh.req.buffer = (uintptr_t)buf;
		if (ioctl(mfd, GP_IOC_BY_HANDLE, &gh)) {
			fprintf(stderr, "xk_getparents: %s: GETPARENTS: %s\n",
				rel, strerror(errno));
			strv_free(&recs);
			return -1;
		}
		if (gh.req.oflags & GP_OFLAG_ROOT)
			root = 1;
		for (size_t off = 0; off < bufsz;) {
			struct gp_rec *r = (struct gp_rec *)(buf + off);
			char *s;

			if (r->reclen == 0 ||
			    off + r->reclen > bufsz)
				break;
			if (asprintf(&s, "%llu:%u:%s",
				     (unsigned long long)r->parent.fid.fid_ino,
				     r->parent.fid.fid_gen, r->name) < 0 ||
			    strv_add(&recs, s)) {
				strv_free(&recs);
				return -1;
			}
			off += r->reclen;
		}
		memset(buf, 0, bufsz);
	} while (!(gh.req.oflags & GP_OFLAG_DONE));
	if (recs.n)
		qsort(recs.v, recs.n, sizeof(*recs.v), cmp_str);
	printf("%s ino=%llu:", rel, (unsigned long long)st.st_ino);
	if (root)
		printf(" root");
	for (size_t i = 0; i < recs.n; i++)
		printf(" %s", recs.v[i]);
	printf("\n");
	strv_free(&recs);
	return err;
}

int
main(int argc, char **argv)
{
	struct strv paths = { 0 };
	size_t bufsz = 65536;
	char *buf;
	int mfd, rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: xk_getparents MOUNTPOINT\n");
		return 2;
	}
	mfd = open(argv[1], O_RDONLY | O_DIRECTORY);
	buf = calloc(1, bufsz);
	if (mfd < 0 || !buf || strv_add(&paths, strdup(".")) ||
	    walk(argv[1], ".", &paths)) {
		fprintf(stderr, "xk_getparents: %s: cannot walk the tree\n",
			argv[1]);
		return 1;
	}
	qsort(paths.v + 1, paths.n - 1, sizeof(*paths.v), cmp_str);
	for (size_t i = 0; i < paths.n; i++)
		if (one_file(mfd, argv[1], paths.v[i], buf, bufsz))
			rc = 1;
	strv_free(&paths);
	free(buf);
	close(mfd);
	return rc;
}
