/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Everything a tool needs from libfs, in one include. */
#ifndef XFSKIT_LIBFS_H
#define XFSKIT_LIBFS_H

#include <xfskit/endian.h>
#include <xfskit/errors.h>
#include <xfskit/fault.h>
#include <xfskit/write_crash.h>
#include <xfskit/crc32c.h>
#include <xfskit/dev.h>
#include <xfskit/mounted.h>
#include <xfskit/undo.h>
#include <xfskit/unsupported.h>
#include <xfskit/buf.h>
#include <xfskit/mount.h>
#include <xfskit/needsrepair.h>
#include <xfskit/ag.h>
#include <xfskit/btree.h>
#include <xfskit/meta.h>
#include <xfskit/format/sb.h>
#include <xfskit/format/ag.h>
#include <xfskit/format/btree.h>

const char *xk_version(void);

#endif /* XFSKIT_LIBFS_H */
