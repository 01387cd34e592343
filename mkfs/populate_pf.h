/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading a source directory tree ahead of the builder (-p DIR).  Worker
 * threads take whole directories as jobs: read and sort the entries,
 * stat each one, read every xattr, symlink target and the contents of
 * small regular files, and hand back one result per directory.  The
 * builder (populate_dir.c) stays single-threaded and consumes the
 * results in its own depth-first order, so the image never depends on
 * which thread read what, or when.
 *
 * Jobs are ordered by their path of entry indices from the root
 * (lexicographic order of those index vectors is the builder's
 * depth-first order), and workers always take the earliest: what the
 * builder needs next is read first; a job nobody has started when the
 * builder needs it is run by the builder itself.  Memory is bounded:
 * workers stop taking jobs once the results not yet consumed exceed a
 * budget, and file contents are read ahead only under a separate byte
 * budget and up to a size; anything else is streamed by the builder.
 */
#ifndef XFSKIT_MKFS_POPULATE_PF_H
#define XFSKIT_MKFS_POPULATE_PF_H

#include <stdint.h>
#include <sys/stat.h>

/* One xattr as the source names it ("user.x", "system.posix_acl_...") */
struct pf_xattr {
	char		*name;
	uint8_t		*value;
	uint32_t	len;
};

/* A failure found ahead, reported by the builder when it gets there. */
struct pf_err {
	int		err;		/* negative errno; 0: none */
	const char	*what;		/* for pop_error() */
	char		*xname;		/* the xattr that failed */
};

/* A data segment of a file read ahead: [start, end) of the file. */
struct pf_seg {
	uint64_t	start, end;
};

struct pf_dir;

/* One entry of a directory. */
struct pf_ent {
	char		*name;		/* in the directory's names */
	size_t		namelen, nameoff;
	struct stat	st;
	struct pf_err	st_err;		/* fstatat failed */
	struct pf_err	err;		/* xattrs, symlink, contents */
	struct pf_xattr	*xa;
	size_t		nxa;
	char		*target;	/* symlink target */
	/* A regular file read ahead (have_data): segments and bytes. */
	int		have_data;
	struct pf_seg	*seg;
	size_t		nseg;
	uint8_t		*data;
	uint64_t	datalen;
	struct pf_dir	*job;		/* a subdirectory: its job */
	/* The builder's own. */
	uint64_t	ino;
	int		owner;		/* first name of its inode */
	int		skip;		/* the image itself */
};

/* One directory: a job, then its result. */
struct pf_dir {
	struct pf_dir	*parent;
	const char	*name;		/* its entry's, in the parent */
	uint32_t	*key;		/* entry indices from the root */
	uint32_t	depth;
	int		fd;		/* open once the job has run */
	int		state;		/* PF_PENDING .. PF_DONE */
	struct pf_err	err;		/* opening or reading it */
	struct pf_err	xerr;		/* its own xattrs */
	struct pf_xattr	*xa;
	size_t		nxa;
	struct pf_ent	*kids;
	char		*names;		/* every entry's name */
	size_t		n;
	uint64_t	cost;		/* bytes held, for the budget */
	struct pf_dir	*lprev, *lnext;	/* every live job */
};

struct pf_pool;

/*
 * Start nthreads workers (0: the builder reads everything itself, in the
 * same order) on the tree whose root directory is open as rootfd (the
 * pool owns it from then on).  blocksize: the new filesystem's, to
 * which data segments are widened.  img_dev/img_ino: the image, never
 * read ahead.
 */
int pf_start(unsigned int nthreads, int rootfd, uint32_t blocksize,
	     uint64_t img_dev, uint64_t img_ino, struct pf_pool **pp,
	     struct pf_dir **rootp);
/* Wait for a job's result (running it here if nobody has started it). */
void pf_wait(struct pf_pool *p, struct pf_dir *d);
/* The builder is done with a file's contents read ahead. */
void pf_data_done(struct pf_pool *p, struct pf_ent *e);
/* The builder is done with a directory: free it and close it. */
void pf_release(struct pf_pool *p, struct pf_dir *d);
/* Stop the workers and free every job left. */
void pf_stop(struct pf_pool *p);
/* Threads to use: XK_POPULATE_THREADS, else the CPUs online (max 8). */
unsigned int pf_default_threads(void);

#endif /* XFSKIT_MKFS_POPULATE_PF_H */
