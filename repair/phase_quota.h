/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The quota phase: quota inodes, dquot blocks, and every dquot's usage
 * counters against the usage the inodes add up to.
 */
#ifndef XFSKIT_REPAIR_PHASE_QUOTA_H
#define XFSKIT_REPAIR_PHASE_QUOTA_H

#include "repair.h"

/*
 * Run after phase_inodes (it needs rc->inodes: every inode in use).
 * Findings go through fix_problem; returns 0, or a negative errno when
 * the phase could not run at all.
 */
int phase_quota(struct repair_ctx *rc);

#endif /* XFSKIT_REPAIR_PHASE_QUOTA_H */
