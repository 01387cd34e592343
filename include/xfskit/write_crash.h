/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xfsprogs' crash hook, which fstests uses to stop a tool between two
 * writes: LIBXFS_DEBUG_WRITE_CRASH=ddev=N[,logdev=N][,rtdev=N] makes the
 * process kill itself (SIGKILL) instead of making its (N+1)th write to
 * the data device, so exactly N writes reach it.  An internal log's
 * writes are the data device's, as in xfsprogs; logdev and rtdev are
 * accepted and, with no external devices, never reached.  N = 0 (or the
 * variable unset) disarms it.  In every build, as in xfsprogs' releases.
 */
#ifndef XFSKIT_WRITE_CRASH_H
#define XFSKIT_WRITE_CRASH_H

#include <stddef.h>

#include <xfskit/errors.h>

/*
 * 0 when the variable is unset or parses; -EINVAL, with what is wrong in
 * msg, when it does not (every device open then fails with -EINVAL, so a
 * tool told to crash never runs unarmed).
 */
XK_MUST_CHECK int xk_write_crash_check_env(char *msg, size_t msglen);

/* Count one data device write; kills the process when it is one too many. */
void xk_write_crash_tick(void);

#endif /* XFSKIT_WRITE_CRASH_H */
