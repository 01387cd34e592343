/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Undo files: while one is attached to a device, every write first saves
 * the bytes it is about to overwrite (once per sector) to the undo file,
 * flushed before the device is touched.  Applying the file puts every
 * saved sector back, so a repair or a log replay can be taken back byte
 * for byte.
 *
 * File layout: a 4096-byte header (magic "XKUNDO01", state, the device's
 * size when the file was started, the filesystem UUID at that time),
 * then records: a 24-byte record header (magic "XKUR", CRC32c of the
 * data, byte offset, length) and the saved bytes.
 */
#ifndef XFSKIT_UNDO_H
#define XFSKIT_UNDO_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>

struct xk_dev;
struct xk_undo;

/* Start an undo file at path (must not exist) and attach it to dev. */
XK_MUST_CHECK int xk_undo_create(struct xk_dev *dev, const char *path,
				 struct xk_undo **up);
/* Save the current bytes of [off, off+len) unless saved already. */
XK_MUST_CHECK int xk_undo_save(struct xk_undo *u, uint64_t off, size_t len);
/* The device is closing under the undo file: forget it (dev.c calls it). */
void xk_undo_detach(struct xk_undo *u);
/* Mark the file complete, detach it and free it. */
XK_MUST_CHECK int xk_undo_finish(struct xk_undo *u);

struct xk_undo_result {
	uint64_t	records;
	uint64_t	bytes;
	int		complete;	/* the run that wrote it finished */
	char		msg[256];	/* why apply refused, if it did */
};

#define XK_UNDO_FORCE	(1u << 0)	/* apply despite a UUID mismatch */
#define XK_UNDO_DRYRUN	(1u << 1)	/* check the file, write nothing */

/*
 * Put back every sector saved in undo_path onto dev_path.  Every record
 * is checked (magic, bounds, CRC) before anything is written; a damaged
 * file changes nothing.
 */
XK_MUST_CHECK int xk_undo_apply(const char *undo_path, const char *dev_path,
				unsigned int flags, struct xk_undo_result *res);

#endif /* XFSKIT_UNDO_H */
