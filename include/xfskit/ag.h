/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading the per-AG headers through their verifiers.  Each returns the
 * buffer in *bpp (release it), or an error; flags are XK_READ_* (with
 * XK_READ_SALVAGE a failing header is still handed back).
 */
#ifndef XFSKIT_AG_H
#define XFSKIT_AG_H

#include <xfskit/errors.h>

#include <xfskit/buf.h>
#include <xfskit/format/ag.h>

struct xk_mount;

extern const struct xk_buf_ops xk_sb_buf_ops;
extern const struct xk_buf_ops xk_agf_buf_ops;
extern const struct xk_buf_ops xk_agi_buf_ops;
extern const struct xk_buf_ops xk_agfl_buf_ops;

XK_MUST_CHECK int xk_sb_read(struct xk_mount *mp, uint32_t agno,
			     unsigned int flags, struct xk_buf **bpp);
/*
 * Set the label (at most 12 bytes) or the UUID in every superblock copy,
 * as xfs_admin -L / -U do.  A UUID change keeps the metadata's UUID in
 * sb_meta_uuid (META_UUID feature) and rewrites the log, which must be
 * clean: -EBUSY and a sentence in msg otherwise.
 */
XK_MUST_CHECK int xk_sb_set_label(struct xk_mount *mp, const char *label);
XK_MUST_CHECK int xk_sb_set_uuid(struct xk_mount *mp, const uint8_t uuid[16],
				 char *msg, size_t msglen);
/*
 * 0 when the log is clean or empty; -EBUSY and a sentence in msg when it
 * holds transactions (a rewrite of the superblocks or of the log would
 * lose them), another error when it cannot be read.
 */
XK_MUST_CHECK int xk_log_require_clean(struct xk_mount *mp, char *msg,
				       size_t msglen);
XK_MUST_CHECK int xk_agf_read(struct xk_mount *mp, uint32_t agno,
			      unsigned int flags, struct xk_buf **bpp);
XK_MUST_CHECK int xk_agi_read(struct xk_mount *mp, uint32_t agno,
			      unsigned int flags, struct xk_buf **bpp);
XK_MUST_CHECK int xk_agfl_read(struct xk_mount *mp, uint32_t agno,
			       unsigned int flags, struct xk_buf **bpp);

static inline struct xk_agf *xk_buf_agf(struct xk_buf *bp)
{
	return (struct xk_agf *)bp->data;
}

static inline struct xk_agi *xk_buf_agi(struct xk_buf *bp)
{
	return (struct xk_agi *)bp->data;
}

static inline struct xk_agfl *xk_buf_agfl(struct xk_buf *bp)
{
	return (struct xk_agfl *)bp->data;
}

#endif /* XFSKIT_AG_H */
