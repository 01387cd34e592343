// SPDX-License-Identifier: GPL-2.0-or-later
/* Messages for libfs error codes: our named aliases first, then errno. */
#include <stdio.h>
#include <string.h>

#include <xfskit/buf.h>

#include <xfskit/errors.h>

const char *
xk_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case XK_ECORRUPT:
		return "metadata is corrupt";
	case XK_EBADCRC:
		return "metadata checksum mismatch";
	case XK_ENOTXFS:
		return "not an XFS filesystem or invalid argument";
	case XK_EUNSUPP:
		return "unsupported filesystem feature or version";
	case XK_ERDONLY:
		return "opened read-only; refusing to write";
	case XK_ETRUNC:
		return "read beyond the end of the device (truncated image?)";
	}
	return strerror(err < 0 ? -err : err);
}

void
xk_open_error_format(int err, const struct xk_fail *f, char *out, size_t len)
{
	if (err == XK_ENOTXFS && f && f->check && f->has_values &&
	    strcmp(f->check, "magic") == 0) {
		snprintf(out, len, "not an XFS filesystem: superblock magic "
			 "is 0x%08llx, expected 0x%08llx (\"XFSB\")",
			 (unsigned long long)f->found,
			 (unsigned long long)f->expected);
		return;
	}
	if (err == -ENODEV) {
		snprintf(out, len, "not a regular file or block device");
		return;
	}
	if (f && f->check) {
		xk_fail_format(f, out, len);
		return;
	}
	snprintf(out, len, "%s", xk_strerror(err));
}
