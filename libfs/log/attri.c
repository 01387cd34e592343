// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Logged attribute intents (ATTRI): decoding an item into its operation,
 * inode, names and values, with the checks the kernel's recovery makes
 * before it accepts one (log_attri.h lists them).  The log walk runs
 * them over every ATTRI, finished or not, because the kernel refuses a
 * log holding a bad one either way; logprint and the finishing after
 * replay (finish_attri.c) read the decoded form.
 *
 * The format region is in the writer's byte order (host order for x86
 * writers); names are bytes, a parent record is big-endian.
 */
#include <stddef.h>
#include <string.h>

#include <xfskit/format/attr.h>
#include <xfskit/log_attri.h>

#include "log_priv.h"

#define ATTRI_FMT_LEN	sizeof(struct xk_attri_log_format)

_Static_assert(sizeof(struct xk_attri_log_format) == 40,
	       "xk_attri_log_format: on-disk size");

const char *
xk_log_attri_op_name(uint32_t op)
{
	switch (op) {
	case XK_ATTRI_OP_FLAGS_SET: return "SET";
	case XK_ATTRI_OP_FLAGS_REMOVE: return "REMOVE";
	case XK_ATTRI_OP_FLAGS_REPLACE: return "REPLACE";
	case XK_ATTRI_OP_FLAGS_PPTR_SET: return "PPTR_SET";
	case XK_ATTRI_OP_FLAGS_PPTR_REMOVE: return "PPTR_REMOVE";
	case XK_ATTRI_OP_FLAGS_PPTR_REPLACE: return "PPTR_REPLACE";
	default: return NULL;
	}
}

static int
namelen_ok(uint32_t len)
{
	return len > 0 && len <= XK_ATTR_NAME_MAX;
}

static uint32_t
round4(uint32_t v)
{
	return (v + 3) & ~3u;
}

/* Rule 7: an attribute name of its namespace. */
static int
name_ok(uint32_t filter, const uint8_t *name, uint32_t len)
{
	if (filter & XK_ATTR_PARENT)
		return !(filter & XK_ATTR_INCOMPLETE) &&
		       xk_pptr_name_ok(name, len);
	return namelen_ok(len) && !memchr(name, 0, len);
}

/* Rule 3, per operation; *nregs is the region count it needs. */
static const char *
op_rules(const struct xk_mount *mp, const struct xk_log_attri *a,
	 uint32_t *nregs)
{
	int pptr = !!(a->filter & XK_ATTR_PARENT);

	switch (a->op) {
	case XK_ATTRI_OP_FLAGS_PPTR_SET:
	case XK_ATTRI_OP_FLAGS_PPTR_REMOVE:
	case XK_ATTRI_OP_FLAGS_PPTR_REPLACE:
		if (mp && !mp->g.has_parent)
			return "a parent pointer operation on a filesystem "
			       "without parent pointers";
		if (!pptr)
			return "a parent pointer operation outside the "
			       "parent namespace";
		if (a->valuelen != sizeof(struct xk_parent_rec))
			return "a parent pointer value that is not 12 bytes";
		if (!namelen_ok(a->namelen) ||
		    (a->op == XK_ATTRI_OP_FLAGS_PPTR_REPLACE &&
		     !namelen_ok(a->new_namelen)))
			return "a name length outside 1..255";
		*nregs = a->op == XK_ATTRI_OP_FLAGS_PPTR_REPLACE ? 5 : 3;
		return NULL;
	case XK_ATTRI_OP_FLAGS_SET:
	case XK_ATTRI_OP_FLAGS_REPLACE:
		if (a->valuelen > XK_XATTR_SIZE_MAX)
			return "a value over 64 KiB";
		if (!namelen_ok(a->namelen))
			return "a name length outside 1..255";
		*nregs = 3;
		return NULL;
	case XK_ATTRI_OP_FLAGS_REMOVE:
		if (a->valuelen)
			return "a removal carrying a value";
		if (!namelen_ok(a->namelen))
			return "a name length outside 1..255";
		*nregs = 2;
		return NULL;
	default:
		return "an unknown operation";
	}
}

/* Rule 6 (and 7, 8): take region *ri as a name or a value. */
static const char *
take(const struct xk_mount *mp, const struct xk_log_item *it, uint32_t *ri,
     int is_name, uint32_t filter, uint32_t len, const uint8_t **out)
{
	const struct xk_log_region *r;

	if (*ri >= it->nregions)
		return "fewer regions than its operation needs";
	r = &it->regions[(*ri)++];
	if (r->len != round4(len))
		return is_name ? "a name region of the wrong length" :
				 "a value region of the wrong length";
	if (is_name && !name_ok(filter, r->data, len))
		return "a name with a NUL byte (or '/' in a parent pointer)";
	if (!is_name && (filter & XK_ATTR_PARENT)) {
		const struct xk_parent_rec *rec = (const void *)r->data;

		if (mp && !xk_ino_valid(mp, xk_be64_get(rec->p_ino)))
			return "a parent record naming no valid inode";
	}
	*out = r->data;
	return NULL;
}

int
xk_log_attri_decode(const struct xk_mount *mp, const struct xk_log_item *it,
		    struct xk_log_attri *a, const char **why)
{
	const uint8_t *p = it->regions[0].data, *nl;
	uint32_t opf, ns, nregs = 0, ri = 1;

	memset(a, 0, sizeof(*a));
	*why = NULL;
	if (it->nregions < 1 || it->regions[0].len != ATTRI_FMT_LEN) {
		*why = "its format region is not 40 bytes";
		return XK_ECORRUPT;
	}
#define F(bits, f) xk_get_ne##bits(p + offsetof(struct xk_attri_log_format, f))
	a->id = F(64, alfi_id);
	a->ino = F(64, alfi_ino);
	a->igen = F(32, alfi_igen);
	opf = F(32, alfi_op_flags);
	a->op = opf & XK_ATTRI_OP_FLAGS_TYPE_MASK;
	a->filter = F(32, alfi_attr_filter);
	a->valuelen = F(32, alfi_value_len);
	/* The name length word sits just before the value length. */
	nl = p + offsetof(struct xk_attri_log_format, alfi_value_len) - 4;
	if (a->op == XK_ATTRI_OP_FLAGS_PPTR_REPLACE) {
		/* Two u16 lengths share it: the old name's, the new one's. */
		a->namelen = xk_get_ne16(nl);
		a->new_namelen = xk_get_ne16(nl + 2);
		a->new_valuelen = a->valuelen;
	} else {
		a->namelen = xk_get_ne32(nl);
	}
#undef F
	ns = a->filter & XK_ATTR_NSP_ONDISK_MASK;
	if (opf & ~XK_ATTRI_OP_FLAGS_TYPE_MASK ||
	    a->filter & ~XK_ATTRI_FILTER_MASK || (ns & (ns - 1))) {
		*why = "unknown operation flags or attribute namespace bits";
		return XK_ECORRUPT;
	}
	*why = op_rules(mp, a, &nregs);
	if (!*why && mp && !xk_ino_valid(mp, a->ino))
		*why = "its inode number is not one of the filesystem's";
	if (!*why && it->nregions != nregs)
		*why = "a region count its operation does not have";
	if (*why)
		return XK_ECORRUPT;
	*why = take(mp, it, &ri, 1, a->filter, a->namelen, &a->name);
	if (!*why && a->new_namelen)
		*why = take(mp, it, &ri, 1, a->filter, a->new_namelen,
			    &a->new_name);
	if (!*why && a->valuelen)
		*why = take(mp, it, &ri, 0, a->filter, a->valuelen,
			    &a->value);
	if (!*why && a->new_valuelen)
		*why = take(mp, it, &ri, 0, a->filter, a->new_valuelen,
			    &a->new_value);
	if (!*why && ri != it->nregions)
		*why = "a region count its operation does not have";
	return *why ? XK_ECORRUPT : 0;
}
