/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The NEEDSREPAIR guard of a run that writes many blocks in an order a
 * crash could cut (repair): the kernel refuses to mount a filesystem
 * whose primary superblock carries the NEEDSREPAIR incompat bit, so a
 * run stopped half-way is never mounted as it is.
 *
 * Armed, the guard writes nothing until the first write of the run to
 * any device of the handle (data, log, realtime): that write waits
 * while the primary, marked, is written and synced (through the undo
 * file when there is one).  Every later write of the primary keeps the
 * mark, whatever it was made from (the handle's superblock, a copy
 * replayed from the log); a secondary superblock written never carries
 * it.  Clearing it is the run's last write, after everything else is
 * written and synced, and after the secondaries on disk that carry it
 * lost it (as xfs_repair clears them, quietly).  A run that writes
 * nothing, on a filesystem with no marked secondary, leaves the primary
 * as it was.
 */
#ifndef XFSKIT_NEEDSREPAIR_H
#define XFSKIT_NEEDSREPAIR_H

#include <xfskit/errors.h>

struct xk_buf;
struct xk_mount;

/*
 * Arm the guard on a writable handle (nothing is written).  A primary
 * that already carries the mark counts as marked.  0 or a negative
 * errno (memory, reading the primary).
 */
XK_MUST_CHECK int xk_needsrepair_arm(struct xk_mount *mp);
/* Whether the primary on disk carries the mark (armed handles only). */
int xk_needsrepair_marked(const struct xk_mount *mp);
/*
 * The end of a complete run: flush every dirty buffer, sync every
 * device, clear the mark of every secondary that verifies and carries
 * it (their writes mark the primary first), then clear the primary's
 * (when it carries it) and sync;
 * the guard is disarmed.  On error the mark stays.  0 or a negative
 * errno.
 */
XK_MUST_CHECK int xk_needsrepair_clear(struct xk_mount *mp);
/* Drop the guard, the disk left as it is (xk_mount_close and discard). */
void xk_needsrepair_disarm(struct xk_mount *mp);
/*
 * The buffer cache's write of bp: the primary keeps the mark, a
 * secondary superblock loses it (buf.c).
 */
void xk_needsrepair_pin(struct xk_buf *bp);

#endif /* XFSKIT_NEEDSREPAIR_H */
