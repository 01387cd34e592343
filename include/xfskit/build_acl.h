/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * POSIX ACLs between the two forms they take: the value Linux hands out
 * for the system.posix_acl_access and system.posix_acl_default xattrs
 * (a little-endian version-2 header and 8-byte {tag, perm, id} entries),
 * and the value XFS keeps on disk in the trusted namespace under the
 * names SGI_ACL_FILE and SGI_ACL_DEFAULT (a big-endian entry count, then
 * 12-byte {tag, id, perm, pad} entries).  Tags and permission bits are the
 * same numbers in both; entries that name no user or group carry the id
 * 0xffffffff on disk, as the kernel writes them.
 *
 * Populating a filesystem from a directory tree reads the Linux form with
 * getxattr and stores the XFS form with xk_bld_attrs (flags XK_ATTR_ROOT).
 * Both directions validate everything first: a value from a hostile
 * source is refused, never half converted.
 */
#ifndef XFSKIT_BUILD_ACL_H
#define XFSKIT_BUILD_ACL_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>

#include <xfskit/build.h>

/* Tags (both forms). */
#define XK_ACL_USER_OBJ		0x01
#define XK_ACL_USER		0x02
#define XK_ACL_GROUP_OBJ	0x04
#define XK_ACL_GROUP		0x08
#define XK_ACL_MASK		0x10
#define XK_ACL_OTHER		0x20
/* Permission bits. */
#define XK_ACL_READ		0x04
#define XK_ACL_WRITE		0x02
#define XK_ACL_EXECUTE		0x01
/* The id of entries that name nobody. */
#define XK_ACL_UNDEFINED_ID	0xffffffffu

/* Linux xattr form. */
#define XK_POSIX_ACL_XATTR_ACCESS	"system.posix_acl_access"
#define XK_POSIX_ACL_XATTR_DEFAULT	"system.posix_acl_default"
#define XK_POSIX_ACL_XATTR_VERSION	0x0002
#define XK_POSIX_ACL_XATTR_HDR		4
#define XK_POSIX_ACL_XATTR_ENT		8

/* XFS form: trusted-namespace names and sizes. */
#define XK_ACL_XFS_NAME_ACCESS		"SGI_ACL_FILE"
#define XK_ACL_XFS_NAME_DEFAULT		"SGI_ACL_DEFAULT"
#define XK_ACL_XFS_HDR			4
#define XK_ACL_XFS_ENT			12
/* v5 filesystems: as many entries as a 64 KiB value holds. */
#define XK_ACL_XFS_MAX_ENTRIES		((65536 - XK_ACL_XFS_HDR) / \
					 XK_ACL_XFS_ENT)

static inline size_t xk_acl_xfs_size(size_t count)
{
	return XK_ACL_XFS_HDR + count * XK_ACL_XFS_ENT;
}

static inline size_t xk_acl_linux_size(size_t count)
{
	return XK_POSIX_ACL_XATTR_HDR + count * XK_POSIX_ACL_XATTR_ENT;
}

/* Which ACL an xattr name is. */
enum xk_acl_type {
	XK_ACL_TYPE_NONE = 0,		/* not an ACL xattr */
	XK_ACL_TYPE_ACCESS,
	XK_ACL_TYPE_DEFAULT,
};

/*
 * The ACL type of a Linux xattr name ("system.posix_acl_access" ...);
 * namelen bytes, no NUL needed.
 */
enum xk_acl_type xk_acl_linux_name_type(const char *name, size_t namelen);
/* The trusted-namespace name XFS stores that type under. */
const char *xk_acl_xfs_name(enum xk_acl_type type);

/*
 * Convert a Linux ACL xattr value to the XFS on-disk value.  out must
 * hold xk_acl_xfs_size(count) bytes where count = entries in the input
 * ((len - 4) / 8); *outlen gets the bytes written.  An input of just the
 * header (no entries) means "no ACL" to Linux: returns -ENODATA and
 * writes nothing.  Errors: -EINVAL (malformed or not a valid ACL),
 * -EOPNOTSUPP (header version not 2), -E2BIG (more entries than XFS
 * stores), -ENOSPC (out too small), -ENODATA.
 */
XK_MUST_CHECK int xk_acl_linux_to_xfs(const void *val, size_t len, void *out,
				      size_t outsz, size_t *outlen);

/* The reverse: an on-disk XFS ACL value to the Linux xattr form. */
XK_MUST_CHECK int xk_acl_xfs_to_linux(const void *val, size_t len, void *out,
				      size_t outsz, size_t *outlen);

/*
 * Whether an XFS on-disk ACL value is one the kernel and xfs_repair
 * accept: 0 or -EINVAL.  Rules as in xk_acl_linux_to_xfs.
 */
int xk_acl_xfs_check(const void *val, size_t len);

/*
 * The permission bits (0777 part of the mode) a Linux ACL value implies:
 * the owner's from USER_OBJ, the group's from MASK when present else
 * GROUP_OBJ, the others' from OTHER.  Returns 1 when the ACL says more
 * than the mode can (named entries or a mask), 0 when the mode says it
 * all (the kernel then stores no access ACL at all), or a negative errno
 * for an invalid value.
 */
int xk_acl_linux_mode(const void *val, size_t len, uint16_t *perm);

/*
 * One xattr as Linux names it (listxattr/getxattr on the source tree) as
 * the attribute XFS stores: the "user.", "trusted." and "security."
 * prefixes become namespace flags; the two POSIX ACL names become
 * trusted SGI_ACL_FILE / SGI_ACL_DEFAULT with the value converted into
 * buf (bufsz >= xk_acl_xfs_size(entries); 65536 always suffices).  *out
 * then points into name, val or buf.  Errors: -ENODATA (an ACL with no
 * entries: store nothing), -EOPNOTSUPP (another namespace, e.g. other
 * system.* names), -EINVAL (nothing after the prefix, a NUL in the name,
 * an invalid ACL), -ENAMETOOLONG (over 255 bytes after the prefix),
 * -E2BIG (value over 64 KiB), -ENOSPC (buf too small).
 */
XK_MUST_CHECK int xk_xattr_linux_to_xfs(const char *name, size_t namelen,
					const void *val, size_t len, void *buf,
					size_t bufsz, struct xk_bld_xattr *out);

#endif /* XFSKIT_BUILD_ACL_H */
