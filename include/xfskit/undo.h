/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Undo files: while one is attached to a device, every write first saves
 * the bytes it is about to overwrite (once per sector) to the undo file,
 * durable (written and fdatasync'ed) before the device is touched, and a
 * sector counts as saved only once that has succeeded.  Any error on the
 * undo file is sticky: every later write to the device fails with it, so
 * nothing is ever written that the file cannot take back.  When the
 * device closes (or the file is finished first), the file records, per
 * record, a checksum of the bytes as the run left them: applying checks
 * that the target still holds exactly that state before writing a byte.
 *
 * File layout (format 2; xfskit-undo also reads format 1, which has no
 * after-state and so is applied only when forced):
 *
 *   header, 4096 bytes:
 *     0   magic "XKUNDO02" ("XKUNDO01": format 1)
 *     8   be32 state: 0 running (or killed), 1 complete, 2 stopped by
 *         an error (the device was left as the last record shows)
 *     16  be64 device size when the file was started
 *     24  16 bytes: filesystem UUID when the file was started
 *     40  le32 CRC32c of the header with this field zeroed
 *     44  16 bytes: filesystem UUID when the run finished
 *     64  be64 end of the last complete record (state 1 and 2)
 *     72  be64 number of records (state 1 and 2)
 *     80  be32 flags: bit 0, after-states recorded
 *     84  le32 CRC32c of the device's first 512 bytes after the run
 *   then records, each a 32-byte header and the saved bytes:
 *     0   be32 magic "XKR2" ("XKUR", 24-byte header: format 1)
 *     4   le32 CRC32c of the saved bytes (the state before)
 *     8   be64 byte offset on the device
 *     16  be64 length
 *     24  le32 CRC32c of the same range as the run left it
 *     28  be32 flags: bit 0, the after CRC is recorded
 *   Bytes of a range past the device's end count as zeroes.
 */
#ifndef XFSKIT_UNDO_H
#define XFSKIT_UNDO_H

#include <xfskit/errors.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

struct xk_dev;
struct xk_undo;

/* Start an undo file at path (must not exist) and attach it to dev. */
XK_MUST_CHECK int xk_undo_create(struct xk_dev *dev, const char *path, struct xk_undo **up);
/*
 * Save the current bytes of [off, off+len) unless saved already.  After
 * a failure every later call fails with the same error (xk_undo_error).
 */
XK_MUST_CHECK int xk_undo_save(struct xk_undo *u, uint64_t off, size_t len);
/* The first error the undo file met (0 if none): the run must stop. */
int xk_undo_error(const struct xk_undo *u);
/*
 * The device is closing under the undo file (dev.c calls it): record the
 * after-state of every record while the device can still be read.
 */
void xk_undo_detach(struct xk_undo *u);
/*
 * Record the after-state (if the device is still attached, which from
 * then on refuses writes), mark the file complete, or stopped by an
 * error when one was met, and free it.
 */
XK_MUST_CHECK int xk_undo_finish(struct xk_undo *u);

struct xk_undo_result {
	uint64_t	records;
	uint64_t	bytes;
	int		complete;	/* the run that wrote it finished */
	int		stopped;	/* the run stopped on an error */
	int		verified;	/* target matched the after-state */
	int		format;		/* 1 or 2 */
	int		wrote;		/* writing to the device began */
	char		msg[256];	/* why apply refused, if it did */
};

/* The device is not in the state the undo file was made for. */
#define XK_UNDO_EMISMATCH	(-ESTALE)

#define XK_UNDO_FORCE	(1u << 0)	/* apply without the checks below */
#define XK_UNDO_DRYRUN	(1u << 1)	/* check the file, write nothing */

/* Called for each record to be restored (with DRYRUN: would be). */
typedef void (*xk_undo_record_fn)(void *ctx, uint64_t off, uint64_t len);

/*
 * Put back every sector saved in undo_path onto dev_path.  Every record
 * is checked (magic, bounds, CRC) before anything is written; a damaged
 * file changes nothing.  Unless forced, the target must carry the UUID
 * the file was made for and hold, in its first 512 bytes and in every
 * recorded range, exactly the bytes the run left (XK_UNDO_EMISMATCH
 * otherwise, the
 * message naming the first range that differs); a file without recorded
 * after-states (format 1, or a run that was killed) is refused.  each
 * may be NULL.
 */
XK_MUST_CHECK int xk_undo_apply(const char *undo_path, const char *dev_path,
		  unsigned int flags, xk_undo_record_fn each, void *ctx,
		  struct xk_undo_result *res);

#endif /* XFSKIT_UNDO_H */
