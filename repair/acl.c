// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * POSIX ACL values as repair judges them: the trusted-namespace xattrs
 * SGI_ACL_FILE and SGI_ACL_DEFAULT, in XFS's on-disk form (a big-endian
 * entry count, then 12-byte {tag, id, perm, pad} entries).
 *
 * The rules are xfs_repair's (6.1 and 7.2), which are looser than the
 * ones the builder applies to what it writes (libfs/write/attr_acl.c:
 * entry order, sorted ids): an ACL xfs_repair keeps is kept here too.
 * One rule is added, the kernel's: the value is exactly as long as its
 * count says (xfs_acl_from_disk refuses any other length, so the file
 * could not be opened); xfs_repair reads past such a value instead.
 *
 * Not a rule: a default ACL on a file that is not a directory.  Neither
 * xfs_repair nor the kernel's reader refuses one (the kernel only ever
 * consults a directory's), so it is kept.
 */
#include <string.h>

#include "repair.h"

#include <xfskit/build_acl.h>
#include <xfskit/endian.h>
#include <xfskit/format/attr.h>

const char *
acl_named(uint8_t flags, const uint8_t *name, size_t namelen)
{
	static const char *const names[] = { XK_ACL_XFS_NAME_ACCESS,
					     XK_ACL_XFS_NAME_DEFAULT };

	if ((flags & XK_ATTR_NSP_ONDISK_MASK) != XK_ATTR_ROOT)
		return NULL;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (namelen == strlen(names[i]) &&
		    !memcmp(name, names[i], namelen))
			return names[i];
	return NULL;
}

/* The tags that appear at most once, and a bit for each. */
static unsigned int
single_tag_bit(uint32_t tag)
{
	switch (tag) {
	case XK_ACL_USER_OBJ:
	case XK_ACL_GROUP_OBJ:
	case XK_ACL_MASK:
	case XK_ACL_OTHER:
		return tag;
	}
	return 0;
}

/* Whether entry i's {tag, id} appears again after it. */
static int
named_twice(const uint8_t *v, uint32_t n, uint32_t i)
{
	const uint8_t *e = v + xk_acl_xfs_size(i);

	for (uint32_t j = i + 1; j < n; j++) {
		const uint8_t *f = v + xk_acl_xfs_size(j);

		if (!memcmp(e, f, 8))
			return 1;
	}
	return 0;
}

const char *
acl_problem(uint8_t flags, const uint8_t *name, size_t namelen,
	    const uint8_t *value, size_t valuelen)
{
	unsigned int seen = 0;
	int named = 0;
	uint32_t n;

	if (!acl_named(flags, name, namelen))
		return NULL;
	if (valuelen < XK_ACL_XFS_HDR)
		return "its ACL value is shorter than an ACL header";
	n = xk_get_be32(value);
	if (n > XK_ACL_XFS_MAX_ENTRIES)
		return "its ACL has more entries than an ACL may";
	if (valuelen != xk_acl_xfs_size(n))
		return "its ACL value's length is not its entry count's";
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = value + xk_acl_xfs_size(i);
		uint32_t tag = xk_get_be32(e);
		unsigned int bit = single_tag_bit(tag);

		if (xk_get_be16(e + 8) & ~(XK_ACL_READ | XK_ACL_WRITE |
					   XK_ACL_EXECUTE))
			return "its ACL has an entry with unknown permission "
			       "bits";
		if (tag == XK_ACL_USER || tag == XK_ACL_GROUP) {
			if (named_twice(value, n, i))
				return "its ACL names a user or group twice";
			named = 1;
			continue;
		}
		if (!bit)
			return "its ACL has an entry of unknown tag";
		if (seen & bit)
			return "its ACL repeats an owner, group, mask or "
			       "other entry";
		seen |= bit;
	}
	if ((seen & (XK_ACL_USER_OBJ | XK_ACL_GROUP_OBJ | XK_ACL_OTHER)) !=
	    (XK_ACL_USER_OBJ | XK_ACL_GROUP_OBJ | XK_ACL_OTHER))
		return "its ACL lacks an owner, group or other entry";
	if (named && !(seen & XK_ACL_MASK))
		return "its ACL names users or groups but has no mask";
	return NULL;
}
