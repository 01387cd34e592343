/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logged attribute operations (ATTRI intents) decoded from their log
 * item, for the log walk's checks, logprint and recovery.  An ATTRI is
 * a 40-byte format region followed by the attribute name, the new name
 * (parent pointer replace), the value and the new value (parent pointer
 * replace), each its own region padded to 4 bytes.  The kernel logs
 * them for every directory change on a filesystem with parent pointers
 * (PPTR_SET on the child for a new entry, PPTR_REMOVE for a removed
 * one, PPTR_REPLACE for a rename), and for xattr changes when logged
 * xattrs are enabled (SET, REMOVE, REPLACE).
 */
#ifndef XFSKIT_LOG_ATTRI_H
#define XFSKIT_LOG_ATTRI_H

#include <xfskit/errors.h>

#include <stdint.h>

#include <xfskit/logv.h>
#include <xfskit/mount.h>

struct xk_log_attri {
	uint64_t	id;
	uint64_t	ino;		/* the inode whose attribute changes */
	uint32_t	igen;		/* its generation (pptr ops) */
	uint32_t	op;		/* XK_ATTRI_OP_FLAGS_* */
	uint32_t	filter;		/* XK_ATTR_* namespace bits */
	/* Pointers into the item's regions (NULL and 0 when absent). */
	const uint8_t	*name, *new_name, *value, *new_value;
	uint32_t	namelen, new_namelen, valuelen, new_valuelen;
};

/* The operation's name ("PPTR_SET" ...), NULL when unknown. */
const char *xk_log_attri_op_name(uint32_t op);

/*
 * Decode and check an ATTRI item as the kernel's recovery checks it
 * (even a finished one stops a mount when it fails).  Rules: 1. a
 * 40-byte format region; 2. no op flags beyond the type, no filter bits
 * beyond ROOT/SECURE/PARENT/INCOMPLETE, at most one namespace; 3. a
 * known operation with its length rules: parent pointer operations need
 * the parent pointer feature, the PARENT namespace, a 12-byte value and
 * names of 1..255 bytes, REMOVE has no value, SET/REPLACE values up to
 * 64 KiB; 4. the inode number is one of the filesystem's; 5. the region
 * count the operation needs (format, name, new name, value, new value as
 * present); 6. each name or value region exactly its length rounded up
 * to 4 bytes; 7. names without NUL bytes (parent pointer names also
 * without '/'); 8. parent records naming a valid inode.  mp may be NULL
 * (rules needing it are skipped).  On failure returns XK_ECORRUPT with
 * *why saying which rule broke.
 */
XK_MUST_CHECK int xk_log_attri_decode(const struct xk_mount *mp,
				      const struct xk_log_item *it,
				      struct xk_log_attri *a, const char **why);

#endif /* XFSKIT_LOG_ATTRI_H */
