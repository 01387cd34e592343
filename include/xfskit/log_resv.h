/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Transaction log reservations (libfs/log/trans_resv.c) and the smallest
 * log the kernel accepts for a geometry (libfs/log/min_size.c), computed
 * from a v5 superblock exactly as the kernel's mount check and mkfs.xfs
 * compute them.  xfskit-mkfs sizes and checks its logs with them.
 */
#ifndef XFSKIT_LOG_RESV_H
#define XFSKIT_LOG_RESV_H

#include <stdint.h>

#include <xfskit/format/sb.h>

/* One reservation: bytes per roll and the number of rolls. */
#define XK_RESV_NR	26
struct xk_resv {
	uint64_t	logres;		/* bytes per roll */
	unsigned int	logcount;	/* rolls; 0 or 1 for one-shot */
};

/* The kernel's runtime table, in its order (as xfs_db's logres). */
void xk_trans_resv_table(const struct xk_sb *sb, struct xk_resv *r);
/* The largest reservation, in the sizing used for the minimum log. */
uint64_t xk_trans_max_logres(const struct xk_sb *sb, unsigned int *logcount);
/*
 * The minimum log size in blocks the kernel accepts for sb (before the
 * absolute floor of 512 blocks and mkfs's 10 MiB for large filesystems,
 * which the caller applies).
 */
uint32_t xk_log_min_blocks(const struct xk_sb *sb);

#endif /* XFSKIT_LOG_RESV_H */
