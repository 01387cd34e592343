// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * File mapping exchange intents (XMI) in the log: their checks and their
 * finishing after replay.  A kernel exchanging ranges of two files
 * (the exchange-range ioctl, or online repair) logs an XMI naming both
 * inodes by number and generation, the two start offsets and the blocks
 * left to exchange; each step logs the done item (XMD) and a new XMI for
 * what remains.  An XMI left without its XMD is finished as the kernel's
 * recovery does (libfs/write/edit_xmi.c does the work).  When every
 * intent is finished the mount lets go of the files it took, and that
 * frees what they map past the size they had then: log_xmi_release.
 *
 * The item is checked while the log is read, before anything is
 * replayed, so a damaged one stops recovery with nothing written.  Its
 * fields are in the writer's byte order (host order on x86).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build.h>

#include "log_priv.h"

/* Decode the 88-byte format region (its length is checked first). */
static void
xmi_decode(const struct log_intent *in, struct xk_bld_exchange *x,
	   uint16_t *size, uint32_t *pad)
{
	const uint8_t *p = in->data;

	*size = xk_get_ne16(p + offsetof(struct xk_xmi_log_format, xmi_size));
	*pad = xk_get_ne32(p + offsetof(struct xk_xmi_log_format, xmi_pad));
	x->ino1 = xk_get_ne64(p + offsetof(struct xk_xmi_log_format,
					   xmi_inode1));
	x->ino2 = xk_get_ne64(p + offsetof(struct xk_xmi_log_format,
					   xmi_inode2));
	x->gen1 = xk_get_ne32(p + offsetof(struct xk_xmi_log_format,
					   xmi_igen1));
	x->gen2 = xk_get_ne32(p + offsetof(struct xk_xmi_log_format,
					   xmi_igen2));
	x->startoff1 = xk_get_ne64(p + offsetof(struct xk_xmi_log_format,
						xmi_startoff1));
	x->startoff2 = xk_get_ne64(p + offsetof(struct xk_xmi_log_format,
						xmi_startoff2));
	x->blockcount = xk_get_ne64(p + offsetof(struct xk_xmi_log_format,
						 xmi_blockcount));
	x->flags = xk_get_ne64(p + offsetof(struct xk_xmi_log_format,
					    xmi_flags));
	x->isize1 = xk_get_ne64(p + offsetof(struct xk_xmi_log_format,
					     xmi_isize1));
	x->isize2 = xk_get_ne64(p + offsetof(struct xk_xmi_log_format,
					     xmi_isize2));
}

/* Whether off..off+len-1 are file blocks an extent may map (len >= 1). */
static int
fileext_ok(uint64_t off, uint64_t len)
{
	return len > 0 && off + len > off && off + len <= XK_MAX_FILEOFF;
}

int
log_xmi_check(struct xk_log *log, const struct log_intent *in)
{
	struct xk_mount *mp = log->mp;
	struct xk_bld_exchange x;
	unsigned long long id = (unsigned long long)in->id;
	uint16_t size;
	uint32_t pad;

	if (in->len != sizeof(struct xk_xmi_log_format))
		return xk_log_fail(log, XK_ECORRUPT, "XMI intent id 0x%llx: "
				   "format region of %u bytes, %zu expected",
				   id, in->len,
				   sizeof(struct xk_xmi_log_format));
	xmi_decode(in, &x, &size, &pad);
	if (size != 1 || pad != 0)
		return xk_log_fail(log, XK_ECORRUPT, "XMI intent id 0x%llx: "
				   "size %u and padding 0x%x (1 and 0 "
				   "expected)", id, size, pad);
	if (x.flags & ~XK_EXCHMAPS_LOGGED_FLAGS)
		return xk_log_fail(log, XK_ECORRUPT, "XMI intent id 0x%llx: "
				   "unknown flags 0x%llx", id,
				   (unsigned long long)(x.flags &
					~XK_EXCHMAPS_LOGGED_FLAGS));
	if (!mp->g.has_exchrange)
		return xk_log_fail(log, XK_ECORRUPT, "XMI intent id 0x%llx: "
				   "the filesystem does not have the "
				   "exchange-range feature", id);
	if (!xk_ino_valid(mp, x.ino1) || !xk_ino_valid(mp, x.ino2))
		return xk_log_fail(log, XK_ECORRUPT, "XMI intent id 0x%llx: "
				   "inode %llu or %llu is not an inode number "
				   "of this filesystem", id,
				   (unsigned long long)x.ino1,
				   (unsigned long long)x.ino2);
	if (!fileext_ok(x.startoff1, x.blockcount) ||
	    !fileext_ok(x.startoff2, x.blockcount))
		return xk_log_fail(log, XK_ECORRUPT, "XMI intent id 0x%llx: "
				   "%llu blocks from file blocks %llu and "
				   "%llu run outside a file", id,
				   (unsigned long long)x.blockcount,
				   (unsigned long long)x.startoff1,
				   (unsigned long long)x.startoff2);
	/*
	 * The logged sizes are not used (recovery recomputes them), and the
	 * kernel does not check them; one with the top bit set is no file
	 * size, so the intent is not trusted.
	 */
	if ((x.flags & XK_EXCHMAPS_SET_SIZES) &&
	    ((x.isize1 | x.isize2) >> 63))
		return xk_log_fail(log, XK_ECORRUPT, "XMI intent id 0x%llx: "
				   "new sizes %lld and %lld: not file sizes",
				   id, (long long)x.isize1,
				   (long long)x.isize2);
	return 0;
}

/* Remember a file recovery took, with its size then (first time only). */
static int
taken_add(struct log_xmi_taken *tk, uint64_t ino, uint64_t size)
{
	for (size_t i = 0; i < tk->n; i++)
		if (tk->v[i].ino == ino)
			return 0;
	return xk_vec_push(&tk->vec, &(struct log_xmi_file){ ino, size },
			   sizeof(*tk->v));
}

int
log_finish_xmi(struct xk_log *log, struct xk_bld *b,
	       const struct log_intent *in, struct log_xmi_taken *tk,
	       uint64_t *steps)
{
	struct xk_bld_exchange x;
	struct xk_bld_exchange_result res;
	uint16_t size;
	uint32_t pad;
	int err = log_xmi_check(log, in);

	if (err)
		return err;
	xmi_decode(in, &x, &size, &pad);
	err = xk_bld_exchange_mappings(b, &x, &res);
	*steps = res.steps;
	if (!err)
		err = taken_add(tk, x.ino1, res.size1);
	if (!err)
		err = taken_add(tk, x.ino2, res.size2);
	if (!err)
		return 0;
	if (res.bad_ino)
		return xk_log_fail(log, err, "finishing XMI intent id 0x%llx "
				   "(inodes %llu and %llu) failed: inode "
				   "%llu: %s: %s",
				   (unsigned long long)in->id,
				   (unsigned long long)x.ino1,
				   (unsigned long long)x.ino2,
				   (unsigned long long)res.bad_ino,
				   res.why ? res.why : "", xk_strerror(err));
	return xk_log_fail(log, err, "finishing XMI intent id 0x%llx (inodes "
			   "%llu and %llu) failed: %s: %s",
			   (unsigned long long)in->id,
			   (unsigned long long)x.ino1,
			   (unsigned long long)x.ino2,
			   res.why ? res.why : "", xk_strerror(err));
}

int
log_xmi_release(struct xk_log *log, struct xk_bld *b,
		struct log_xmi_taken *tk)
{
	int err = 0;

	for (size_t i = 0; i < tk->n && !err; i++) {
		const char *why;

		err = xk_bld_trim_eof(b, tk->v[i].ino, tk->v[i].size, &why);
		if (err)
			xk_log_fail(log, err, "inode %llu, after its exchange "
				    "was finished: %s: %s",
				    (unsigned long long)tk->v[i].ino,
				    why ? why : "", xk_strerror(err));
	}
	xk_vec_free(&tk->vec);
	return err;
}
