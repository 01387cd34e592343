// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pull every on-disk format header into one translation unit, so that
 * all their _Static_assert size and offset pins are checked on every
 * build even before a module uses the structure.
 */
#include <xfskit/libfs.h>
#include <xfskit/format/sb.h>
#include <xfskit/format/ag.h>
#include <xfskit/format/btree.h>
#include <xfskit/format/dinode.h>
#include <xfskit/format/da.h>
#include <xfskit/format/dir.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/symlink.h>
#include <xfskit/format/dquot.h>
#include <xfskit/format/log.h>
