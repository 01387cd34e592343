// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Test tool: exchange ranges of two files on a mounted XFS through the
 * kernel's XFS_IOC_EXCHANGE_RANGE ioctl, so that the kernel logs file
 * mapping exchange intents (XMI/XMD) for the log tests.  Usage:
 *   xk_exchange [-e] [-n] [-w] [-s FILE3] FILE1 FILE2 [OFF1 OFF2 LEN]
 * exchanges LEN bytes of FILE1 at OFF1 with FILE2 at OFF2 (default: the
 * whole of both files, -e).  -e: to the end of both files, then swap
 * the sizes (length ignored); -n: dry run (checks only); -w: only the
 * parts of FILE1 that were written; -s: while the exchange runs, a
 * child process sets FILE3's times and fsyncs it, over and over: each
 * fsync forces the log, so the log holds a checkpoint boundary between
 * many of the exchange's steps, each a place a test can cut the log at
 * (forcing the log writes no metadata in place, so every such cut is a
 * state a crash could leave).  syncfs would not do: it waits for the
 * exchanged files' writeback.  Exits 0 on success, 1 when the
 * ioctl fails (errno said on stderr), 2 on usage errors; exit 3 means
 * the kernel or filesystem does not support the ioctl (EOPNOTSUPP,
 * ENOTTY), so a test can skip.
 *
 * The structure and ioctl number are declared here from the kernel's
 * user API (xfs_fs.h): the installed xfsprogs 6.1 headers predate them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The ioctl's argument, 40 bytes; passed on the fd of file2. */
struct exch_range_arg {
	int32_t		file1_fd;
	uint32_t	pad;		/* must be zero */
	uint64_t	file1_offset;	/* bytes */
	uint64_t	file2_offset;	/* bytes */
	uint64_t	length;		/* bytes */
	uint64_t	flags;		/* EXCH_* below */
};

_Static_assert(sizeof(struct exch_range_arg) == 40,
	       "exchange-range argument size");

#define EXCH_TO_EOF		(1ULL << 0)
#define EXCH_DSYNC		(1ULL << 1)
#define EXCH_DRY_RUN		(1ULL << 2)
#define EXCH_FILE1_WRITTEN	(1ULL << 3)

/* _IOW('X', 129, 40-byte struct) */
#define EXCH_IOC	_IOW('X', 129, struct exch_range_arg)

static int
parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || !*s || *end ? -1 : 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: xk_exchange [-e] [-n] [-w] [-s FILE3] FILE1 "
		"FILE2 "
		"[OFF1 OFF2 LEN]\n");
}

/*
 * The child of -s: a logged change to path, then a log force, until
 * killed.  It says on ready (a pipe) when the first one is done, so the
 * exchange starts with the log forces already under way.
 */
static int
sync_loop(const char *path, int ready)
{
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	struct timespec ts[2] = { { 0, 0 }, { 0, 0 } };

	if (fd < 0) {
		fprintf(stderr, "xk_exchange: %s: %s\n", path,
			strerror(errno));
		return 2;
	}
	for (;;) {
		ts[0].tv_sec++;
		ts[1].tv_sec++;
		if (futimens(fd, ts) != 0 || fsync(fd) != 0) {
			fprintf(stderr, "xk_exchange: %s: %s\n", path,
				strerror(errno));
			return 2;
		}
		if (ready >= 0) {
			if (write(ready, "r", 1) != 1)
				return 2;
			close(ready);
			ready = -1;
		}
	}
}

int
main(int argc, char **argv)
{
	struct exch_range_arg a;
	int c, fd1, fd2, nargs, rc = 0, e = 0;
	const char *sync_path = NULL;
	pid_t syncer = -1;

	memset(&a, 0, sizeof(a));
	while ((c = getopt(argc, argv, "enws:")) != -1) {
		if (c == 'e')
			a.flags |= EXCH_TO_EOF;
		else if (c == 'n')
			a.flags |= EXCH_DRY_RUN;
		else if (c == 'w')
			a.flags |= EXCH_FILE1_WRITTEN;
		else if (c == 's')
			sync_path = optarg;
		else {
			usage();
			return 2;
		}
	}
	nargs = argc - optind;
	if (nargs != 2 && nargs != 5) {
		usage();
		return 2;
	}
	if (nargs == 2) {
		a.flags |= EXCH_TO_EOF;
	} else if (parse_u64(argv[optind + 2], &a.file1_offset) ||
		   parse_u64(argv[optind + 3], &a.file2_offset) ||
		   parse_u64(argv[optind + 4], &a.length)) {
		usage();
		return 2;
	}
	fd1 = open(argv[optind], O_RDWR);
	if (fd1 < 0) {
		fprintf(stderr, "xk_exchange: %s: %s\n", argv[optind],
			strerror(errno));
		return 2;
	}
	fd2 = open(argv[optind + 1], O_RDWR);
	if (fd2 < 0) {
		fprintf(stderr, "xk_exchange: %s: %s\n", argv[optind + 1],
			strerror(errno));
		close(fd1);
		return 2;
	}
	a.file1_fd = fd1;
	if (sync_path) {
		int pfd[2];
		char c;

		if (pipe(pfd) != 0 || (syncer = fork()) < 0) {
			fprintf(stderr, "xk_exchange: pipe or fork: %s\n",
				strerror(errno));
			close(fd1);
			close(fd2);
			return 2;
		}
		if (syncer == 0) {
			close(pfd[0]);
			_exit(sync_loop(sync_path, pfd[1]));
		}
		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1) {
			fprintf(stderr, "xk_exchange: the log forcing child "
				"failed\n");
			waitpid(syncer, NULL, 0);
			close(fd1);
			close(fd2);
			return 2;
		}
		close(pfd[0]);
	}
	if (ioctl(fd2, EXCH_IOC, &a) != 0) {
		e = errno;
		fprintf(stderr, "xk_exchange: exchange-range failed: %s\n",
			strerror(e));
		rc = e == EOPNOTSUPP || e == ENOTTY ? 3 : 1;
	}
	if (syncer > 0) {
		kill(syncer, SIGKILL);
		waitpid(syncer, NULL, 0);
	}
	close(fd1);
	close(fd2);
	return rc;
}
