// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * POSIX ACL conversion between the Linux xattr form and the XFS on-disk
 * form, and the mapping of Linux xattr names to XFS namespaces (see
 * include/xfskit/build_acl.h).  Every input is parsed into a small array
 * of host-order entries and validated in full before a byte of output is
 * written, so a hostile value is refused whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build_acl.h>
#include <xfskit/endian.h>
#include <xfskit/format/attr.h>

struct acl_ent {
	uint32_t	tag;
	uint32_t	id;
	uint32_t	perm;
};

static uint16_t
get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static void
put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/*
 * The rules Linux (posix_acl_valid) and xfs_repair (xfs_acl_valid) apply
 * together:
 *  1. at least one entry, at most XK_ACL_XFS_MAX_ENTRIES;
 *  2. permissions only read, write and execute;
 *  3. order USER_OBJ, USER..., GROUP_OBJ, GROUP..., [MASK], OTHER, one
 *     each of USER_OBJ, GROUP_OBJ and OTHER, at most one MASK;
 *  4. a MASK whenever there is a USER or GROUP entry;
 *  5. USER and GROUP ids strictly increasing within their tag (so none
 *     twice) and never the undefined id 0xffffffff;
 *  6. no unknown tag.
 */
static int
acl_valid(const struct acl_ent *e, size_t n)
{
	uint32_t state = XK_ACL_USER_OBJ;
	int needs_mask = 0, have_prev = 0;
	uint32_t prev = 0;

	if (n == 0 || n > XK_ACL_XFS_MAX_ENTRIES)
		return n ? -E2BIG : -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (e[i].perm & ~(uint32_t)(XK_ACL_READ | XK_ACL_WRITE |
					    XK_ACL_EXECUTE))
			return -EINVAL;
		switch (e[i].tag) {
		case XK_ACL_USER_OBJ:
			if (state != XK_ACL_USER_OBJ)
				return -EINVAL;
			state = XK_ACL_USER;
			have_prev = 0;
			break;
		case XK_ACL_GROUP_OBJ:
			if (state != XK_ACL_USER)
				return -EINVAL;
			state = XK_ACL_GROUP;
			have_prev = 0;
			break;
		case XK_ACL_USER:
		case XK_ACL_GROUP:
			if (state != (e[i].tag == XK_ACL_USER ? XK_ACL_USER :
				      XK_ACL_GROUP))
				return -EINVAL;
			if (e[i].id == XK_ACL_UNDEFINED_ID ||
			    (have_prev && e[i].id <= prev))
				return -EINVAL;
			prev = e[i].id;
			have_prev = 1;
			needs_mask = 1;
			break;
		case XK_ACL_MASK:
			if (state != XK_ACL_GROUP)
				return -EINVAL;
			state = XK_ACL_OTHER;
			break;
		case XK_ACL_OTHER:
			if (state != XK_ACL_OTHER &&
			    !(state == XK_ACL_GROUP && !needs_mask))
				return -EINVAL;
			state = 0;
			break;
		default:
			return -EINVAL;
		}
		if (state == 0 && i + 1 != n)
			return -EINVAL;		/* entries after OTHER */
	}
	return state == 0 ? 0 : -EINVAL;
}

/* Parse the Linux form into *ep (malloc'd); *np entries. */
static int
parse_linux(const void *val, size_t len, struct acl_ent **ep, size_t *np)
{
	const uint8_t *p = val;
	struct acl_ent *e;
	size_t n;
	int err;

	*ep = NULL;
	*np = 0;
	if (!val || len < XK_POSIX_ACL_XATTR_HDR ||
	    (len - XK_POSIX_ACL_XATTR_HDR) % XK_POSIX_ACL_XATTR_ENT)
		return -EINVAL;
	if (xk_get_le32(p) != XK_POSIX_ACL_XATTR_VERSION)
		return -EOPNOTSUPP;
	n = (len - XK_POSIX_ACL_XATTR_HDR) / XK_POSIX_ACL_XATTR_ENT;
	if (n == 0)
		return -ENODATA;
	if (n > XK_ACL_XFS_MAX_ENTRIES)
		return -E2BIG;
	e = calloc(n, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *q = p + XK_POSIX_ACL_XATTR_HDR +
				   i * XK_POSIX_ACL_XATTR_ENT;

		e[i].tag = get_le16(q);
		e[i].perm = get_le16(q + 2);
		e[i].id = xk_get_le32(q + 4);
	}
	err = acl_valid(e, n);
	if (err) {
		free(e);
		return err;
	}
	*ep = e;
	*np = n;
	return 0;
}

/* Parse the XFS form the same way. */
static int
parse_xfs(const void *val, size_t len, struct acl_ent **ep, size_t *np)
{
	const uint8_t *p = val;
	struct acl_ent *e;
	uint32_t n;
	int err;

	*ep = NULL;
	*np = 0;
	if (!val || len < XK_ACL_XFS_HDR)
		return -EINVAL;
	n = xk_get_be32(p);
	if (n > XK_ACL_XFS_MAX_ENTRIES)
		return -E2BIG;
	if (n == 0 || len != xk_acl_xfs_size(n))
		return -EINVAL;
	e = calloc(n, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *q = p + xk_acl_xfs_size(i);

		e[i].tag = xk_get_be32(q);
		e[i].id = xk_get_be32(q + 4);
		e[i].perm = xk_get_be16(q + 8);
	}
	err = acl_valid(e, n);
	if (err) {
		free(e);
		return err;
	}
	*ep = e;
	*np = n;
	return 0;
}

static int
names_someone(uint32_t tag)
{
	return tag == XK_ACL_USER || tag == XK_ACL_GROUP;
}

int
xk_acl_linux_to_xfs(const void *val, size_t len, void *out, size_t outsz,
		    size_t *outlen)
{
	struct acl_ent *e;
	uint8_t *o = out;
	size_t n;
	int err = parse_linux(val, len, &e, &n);

	*outlen = 0;
	if (err)
		return err;
	if (outsz < xk_acl_xfs_size(n)) {
		free(e);
		return -ENOSPC;
	}
	xk_put_be32(o, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		uint8_t *q = o + xk_acl_xfs_size(i);

		xk_put_be32(q, e[i].tag);
		xk_put_be32(q + 4, names_someone(e[i].tag) ? e[i].id :
				   XK_ACL_UNDEFINED_ID);
		xk_put_be16(q + 8, (uint16_t)e[i].perm);
		xk_put_be16(q + 10, 0);
	}
	*outlen = xk_acl_xfs_size(n);
	free(e);
	return 0;
}

int
xk_acl_xfs_to_linux(const void *val, size_t len, void *out, size_t outsz,
		    size_t *outlen)
{
	struct acl_ent *e;
	uint8_t *o = out;
	size_t n;
	int err = parse_xfs(val, len, &e, &n);

	*outlen = 0;
	if (err)
		return err;
	if (outsz < xk_acl_linux_size(n)) {
		free(e);
		return -ENOSPC;
	}
	xk_put_le32(o, XK_POSIX_ACL_XATTR_VERSION);
	for (size_t i = 0; i < n; i++) {
		uint8_t *q = o + xk_acl_linux_size(i);

		put_le16(q, (uint16_t)e[i].tag);
		put_le16(q + 2, (uint16_t)e[i].perm);
		xk_put_le32(q + 4, names_someone(e[i].tag) ? e[i].id :
				   XK_ACL_UNDEFINED_ID);
	}
	*outlen = xk_acl_linux_size(n);
	free(e);
	return 0;
}

int
xk_acl_xfs_check(const void *val, size_t len)
{
	struct acl_ent *e;
	size_t n;
	int err = parse_xfs(val, len, &e, &n);

	free(e);
	return err;
}

int
xk_acl_linux_mode(const void *val, size_t len, uint16_t *perm)
{
	struct acl_ent *e;
	size_t n;
	uint16_t mode = 0;
	int more = 0, err = parse_linux(val, len, &e, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		uint16_t p = (uint16_t)(e[i].perm & 7);

		switch (e[i].tag) {
		case XK_ACL_USER_OBJ:
			mode |= (uint16_t)(p << 6);
			break;
		case XK_ACL_GROUP_OBJ:
			mode |= (uint16_t)(p << 3);
			break;
		case XK_ACL_MASK:
			/* The group bits show the mask, not GROUP_OBJ. */
			mode = (uint16_t)((mode & ~0070u) | (p << 3));
			more = 1;
			break;
		case XK_ACL_OTHER:
			mode |= p;
			break;
		default:
			more = 1;
			break;
		}
	}
	free(e);
	*perm = mode;
	return more;
}

enum xk_acl_type
xk_acl_linux_name_type(const char *name, size_t namelen)
{
	static const struct {
		const char		*name;
		enum xk_acl_type	type;
	} names[] = {
		{ XK_POSIX_ACL_XATTR_ACCESS, XK_ACL_TYPE_ACCESS },
		{ XK_POSIX_ACL_XATTR_DEFAULT, XK_ACL_TYPE_DEFAULT },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (namelen == strlen(names[i].name) &&
		    !memcmp(name, names[i].name, namelen))
			return names[i].type;
	return XK_ACL_TYPE_NONE;
}

const char *
xk_acl_xfs_name(enum xk_acl_type type)
{
	switch (type) {
	case XK_ACL_TYPE_ACCESS:
		return XK_ACL_XFS_NAME_ACCESS;
	case XK_ACL_TYPE_DEFAULT:
		return XK_ACL_XFS_NAME_DEFAULT;
	default:
		return NULL;
	}
}

int
xk_xattr_linux_to_xfs(const char *name, size_t namelen, const void *val,
		      size_t len, void *buf, size_t bufsz,
		      struct xk_bld_xattr *out)
{
	static const struct {
		const char	*prefix;
		uint8_t		flags;
	} ns[] = {
		{ "user.", 0 },
		{ "trusted.", XK_ATTR_ROOT },
		{ "security.", XK_ATTR_SECURE },
	};
	enum xk_acl_type t = xk_acl_linux_name_type(name, namelen);

	memset(out, 0, sizeof(*out));
	if (t != XK_ACL_TYPE_NONE) {
		const char *xname = xk_acl_xfs_name(t);
		size_t olen;
		int err = xk_acl_linux_to_xfs(val, len, buf, bufsz, &olen);

		if (err)
			return err;
		out->flags = XK_ATTR_ROOT;
		out->name = (const uint8_t *)xname;
		out->namelen = (uint8_t)strlen(xname);
		out->value = buf;
		out->valuelen = (uint32_t)olen;
		return 0;
	}
	if (len > XK_XATTR_SIZE_MAX)
		return -E2BIG;
	if (len && !val)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		size_t pl = strlen(ns[i].prefix);

		if (namelen < pl || memcmp(name, ns[i].prefix, pl))
			continue;
		if (namelen == pl || memchr(name + pl, 0, namelen - pl))
			return -EINVAL;
		if (namelen - pl > XK_ATTR_NAME_MAX)
			return -ENAMETOOLONG;
		out->flags = ns[i].flags;
		out->name = (const uint8_t *)name + pl;
		out->namelen = (uint8_t)(namelen - pl);
		out->value = val;
		out->valuelen = (uint32_t)len;
		return 0;
	}
	return -EOPNOTSUPP;
}
