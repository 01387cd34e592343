/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one error convention of libfs: every function returns int, 0 on
 * success or a negative errno.  Filesystem-level failures are named
 * aliases of errnos the kernel uses for the same meaning, so a caller can
 * compare against either spelling and strerror() still says something
 * sensible.  libfs never prints and never exits; tools map these to
 * messages with xk_strerror() and to exit codes in main().
 */
#ifndef XFSKIT_ERRORS_H
#define XFSKIT_ERRORS_H

#include <errno.h>

#define XK_ECORRUPT	(-EUCLEAN)	/* structure is inconsistent */
#define XK_EBADCRC	(-EBADMSG)	/* checksum does not match */
#define XK_ENOTXFS	(-EINVAL)	/* not an XFS filesystem (no magic) */
#define XK_EUNSUPP	(-EOPNOTSUPP)	/* valid XFS we do not handle (v4) */
#define XK_ERDONLY	(-EROFS)	/* write attempted on read-only handle */
#define XK_ETRUNC	(-ENXIO)	/* read beyond the end of the device */

#include <stddef.h>

/*
 * On a function whose int result is an error that must not be dropped:
 * the build treats an ignored result as an error (-Werror=unused-result).
 */
#define XK_MUST_CHECK	__attribute__((warn_unused_result))

/*
 * Whether err says the tool could not do its work (memory, I/O, a full
 * disk, a thread that could not start, a signal) rather than anything
 * about the filesystem.  Such an error is never a finding: the run stops.
 * Corruption (XK_ECORRUPT, XK_EBADCRC), a block past the device's end
 * (XK_ETRUNC) and the rest describe the filesystem.
 */
static inline int
xk_err_operational(int err)
{
	switch (err) {
	case -ENOMEM:
	case -EIO:
	case -EAGAIN:
	case -ENOSPC:
	case -EDQUOT:
	case -EMFILE:
	case -ENFILE:
	case -EINTR:
	case -EBADF:
	case -EROFS:
	case -ECANCELED:
		return 1;
	default:
		return 0;
	}
}

struct xk_fail;

const char *xk_strerror(int err);
/*
 * One line on why an image could not be opened, from the error and the
 * failure site xk_mount_open filled (f may be NULL).
 */
void xk_open_error_format(int err, const struct xk_fail *f, char *out,
			  size_t len);

#endif /* XFSKIT_ERRORS_H */
