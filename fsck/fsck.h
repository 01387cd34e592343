/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck.xfskit: the fsck(8) front end of xfskit-repair.  Shared between
 * main.c (modes, exit codes, running the checker) and json.c (reading the
 * checker's JSON report).
 */
#ifndef XFSKIT_FSCK_H
#define XFSKIT_FSCK_H

#include <pthread.h>
#include <stddef.h>

/* Exit codes fsck(8) defines; a run returns the OR of those that apply. */
#define FSCK_OK			0
#define FSCK_CORRECTED		1
#define FSCK_REBOOT		2
#define FSCK_UNCORRECTED	4
#define FSCK_ERROR		8
#define FSCK_USAGE		16
#define FSCK_CANCELLED		32

/* One finding of the checker, as far as fsck needs to classify it. */
struct fsck_finding {
	char	problem[128];	/* "problem": its class in words */
	char	code[64];	/* "code": stable identifier, when given */
	char	structure[64];
	char	message[512];
	/*
	 * The checker's policy for the finding (doc/json.md): FSCK_FLAG_*
	 * bits for the members that were true; a member absent is false,
	 * so a report without them is never preened.
	 */
	unsigned int	flags;
};
#define FSCK_FLAG_PREEN		(1u << 0)	/* "safe_to_preen" */
#define FSCK_FLAG_DESTRUCTIVE	(1u << 1)	/* "destructive" */
#define FSCK_FLAG_FIXABLE	(1u << 2)	/* "fixable" */

/* Findings past this many are counted but not kept. */
#define FSCK_MAX_FINDINGS	256

struct fsck_report {
	struct fsck_finding findings[FSCK_MAX_FINDINGS];
	size_t		nfindings;
	long long	problem_count;	/* -1 when absent */
	int		exit_status;
	int		has_error;
	char		error[256];
};

int fsck_parse_report(const char *text, size_t len, struct fsck_report *r);

/*
 * -C FD (progress.c): around each run of the checker, start() gives the
 * option to pass it (fsck_progress_arg, NULL for none), stop() ends the
 * bar of -C 0.  start() returns 0 or a negative errno.
 */
struct fsck_progress {
	int		fd;		/* -C's value; -1 without -C */
	const char	*device;
	int		pipe_r, pipe_w, running, drawn;
	pthread_t	thread;
	char		arg[32];
};
int fsck_progress_start(struct fsck_progress *p);
const char *fsck_progress_arg(const struct fsck_progress *p);
void fsck_progress_stop(struct fsck_progress *p);

/*
 * The external log and realtime devices of the filesystem on device, from
 * its fstab entry's logdev= and rtdev= (fstab.c); empty strings when not
 * named.  source says where they were found.  Returns 0, or -1 when the
 * table cannot be read (source then says why).
 */
struct fsck_devs {
	char	logdev[4096];
	char	rtdev[4096];
	char	source[4200];
};
int fsck_find_devices(const char *device, struct fsck_devs *d);

#endif /* XFSKIT_FSCK_H */
