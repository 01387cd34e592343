/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parts of a filesystem xfskit does not understand yet.  What is listed
 * here the check cannot call clean (xfskit-repair -n names each part it
 * did not check and exits 5) and no tool repairs (repair refuses to
 * write, naming the reason).  The one place the list is made: repair,
 * fsck (through repair) and db all ask here.
 */
#ifndef XFSKIT_UNSUPPORTED_H
#define XFSKIT_UNSUPPORTED_H

#include <stddef.h>

struct xk_sb;

struct xk_unsupported {
	const char	*code;		/* stable: "realtime", "external_log",
					   "ro_compat", "incompat",
					   "log_incompat", "rt_rmap",
					   "rt_refcount" */
	char		what[128];	/* "the realtime volume (rtdev)" */
	char		why[192];	/* the reason, in a sentence */
	int		blocks_open;	/* libfs cannot open the filesystem
					   at all (nothing was checked) */
};

#define XK_UNSUPPORTED_MAX	8

/* What the caller has beside the data device. */
#define XK_UNSUP_LOGDEV	(1u << 0)	/* the external log's device */
#define XK_UNSUP_RTDEV	(1u << 1)	/* the realtime device */
/* The caller checks the realtime groups' btrees and writes nothing that
 * would need them rebuilt (xfskit-repair: repair/rtbtree.c). */
#define XK_UNSUP_RTBTREES (1u << 2)

/*
 * The unsupported parts a superblock declares, given what the caller
 * has (XK_UNSUP_*: an external log without its device is such a part);
 * returns how many.
 */
int xk_unsupported_scan(const struct xk_sb *sb, unsigned int have,
			struct xk_unsupported *v, int max);

/*
 * The same from the primary superblock of path, read directly so that a
 * superblock libfs refuses to open is still named for what it is.  Only
 * a superblock with a good magic and CRC is trusted; anything else gives
 * 0 entries (the open then reports the damage).
 * Returns the count, or a negative errno when path cannot be read.
 */
int xk_unsupported_probe(const char *path, unsigned int have,
			 struct xk_unsupported *v, int max);

/*
 * The device parts alone (an external log or a realtime volume without
 * its device) that sb declares: xk_unsupported_probe leaves them out
 * when the primary's geometry fails the verifier, and the caller asks
 * again of the superblock it opened with.
 */
int xk_unsupported_devices(const struct xk_sb *sb, unsigned int have,
			   struct xk_unsupported *v, int max);

#endif /* XFSKIT_UNSUPPORTED_H */
