/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The refusals of an offline tool that changes a filesystem in place
 * (xfskit-admin, xfskit-resize), one way for every such tool: before
 * the open, a mounted filesystem (the kernel caches its metadata) and
 * parts libfs does not understand (unsupported.h); after it, a dirty log
 * (its replay would undo or garble the change) and a primary marked as
 * needing repair (an earlier run was cut: the guard of this one would
 * clear the mark, needsrepair.h).  Each refusal is printed on out, one
 * line each, as "TOOL: PATH: reason".
 */
#ifndef XFSKIT_OPEN_CHECK_H
#define XFSKIT_OPEN_CHECK_H

#include <stdio.h>

struct xk_mount;

struct xk_open_check {
	const char	*tool;		/* "xfskit-admin", every line's prefix */
	const char	*path;		/* the data device or image */
	unsigned int	takes;		/* XK_UNSUP_LOGDEV, _RTDEV: the devices
					   the tool has an option for */
	const char	*mounted_hint;	/* after "unmount it first", or NULL */
	int		writes;	/* the run writes (else the write-crash
					   hook is not checked) */
	FILE		*out;		/* where the refusals go (stderr) */
};

/*
 * Before the open: for a run that writes, the write-crash test hook set
 * correctly (write_crash.h: -EINVAL); the filesystem not mounted
 * (-EBUSY), nothing unsupported declared by the primary
 * (XK_EUNSUPP; a part whose device the tool takes no option for says
 * so, not which option to give).  0 when nothing refuses.
 */
int xk_open_check_before(const struct xk_open_check *c);
/*
 * After the open: the log clean (-EBUSY dirty, else its read error) and
 * the primary not marked NEEDSREPAIR (XK_ECORRUPT).  0 when neither.
 */
int xk_open_check_after(const struct xk_open_check *c, struct xk_mount *mp);

#endif /* XFSKIT_OPEN_CHECK_H */
