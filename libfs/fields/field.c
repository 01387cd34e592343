// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The generic half of the field tables: presence, counts and element
 * positions (fixed or computed, always clipped to the buffer), big-endian
 * bit access, path resolution ("core.mode", "recs[2].startblock"), and
 * the registry of every structure type.  The per-structure tables live in
 * the other files of this directory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/endian.h>
#include <xfskit/fields.h>

const struct xk_ftype *const xk_ftypes[] = {
	&xk_sb_ftype, &xk_agf_ftype, &xk_agi_ftype, &xk_agfl_ftype,
	&xk_bnobt_ftype, &xk_cntbt_ftype, &xk_inobt_ftype, &xk_finobt_ftype,
	&xk_rmapbt_ftype, &xk_refcntbt_ftype, &xk_rtrmapbt_ftype,
	&xk_rtrefcntbt_ftype, &xk_bmapbta_ftype,
	&xk_bmapbtd_ftype, &xk_inode_ftype, &xk_dir3_ftype, &xk_attr3_ftype,
	&xk_symlink_ftype, &xk_dqblk_ftype, NULL
};

const struct xk_ftype *
xk_ftype_find(const char *name)
{
	for (int i = 0; xk_ftypes[i]; i++)
		if (strcmp(xk_ftypes[i]->name, name) == 0)
			return xk_ftypes[i];
	return NULL;
}

int
xk_field_present(const struct xk_fctx *c, const struct xk_field *f,
		 size_t base)
{
	if (base > c->len)
		return 0;
	return f->present ? f->present(c, base) : 1;
}

uint32_t
xk_field_bits(const struct xk_fctx *c, const struct xk_field *f, size_t base)
{
	return f->bits_fn ? f->bits_fn(c, base) : f->bits;
}

/* Bytes element i occupies, for the bounds check. */
static size_t
elem_bytes(const struct xk_fctx *c, const struct xk_field *f, size_t base)
{
	if (f->kind == XK_FK_STRUCT)
		return f->stride ? f->stride : 1;
	return (f->bitoff + xk_field_bits(c, f, base) + 7) / 8;
}

static size_t
elem_raw(const struct xk_fctx *c, const struct xk_field *f, size_t base,
	 uint32_t i)
{
	if (f->elem_fn)
		return f->elem_fn(c, base, i);
	return base + f->offset + (size_t)i * f->stride;
}

size_t
xk_field_elem(const struct xk_fctx *c, const struct xk_field *f, size_t base,
	      uint32_t i)
{
	size_t at = elem_raw(c, f, base, i);

	if (at == XK_FOFF_NONE || at > c->len ||
	    elem_bytes(c, f, base) > c->len - at)
		return XK_FOFF_NONE;
	return at;
}

uint32_t
xk_field_count(const struct xk_fctx *c, const struct xk_field *f, size_t base)
{
	uint32_t n, i;

	if (!xk_field_present(c, f, base))
		return 0;
	if (!(f->flags & XK_FF_ARRAY))
		n = 1;
	else
		n = f->count_fn ? f->count_fn(c, base) : f->count;
	/* Clip at the first element that does not fit the buffer. */
	for (i = 0; i < n; i++)
		if (xk_field_elem(c, f, base, i) == XK_FOFF_NONE)
			break;
	return i;
}

uint64_t
xk_fval_get(const struct xk_fctx *c, const struct xk_fref *r)
{
	const uint8_t *p = c->buf + r->byte;
	uint64_t v = 0;

	if (r->bitoff == 0 && r->bits % 8 == 0 && r->bits <= 64)
		return xk_get_benn(p, r->bits / 8);
	for (uint32_t b = 0; b < r->bits && b < 64; b++) {
		uint32_t bit = r->bitoff + b;

		v = (v << 1) | ((p[bit / 8] >> (7 - bit % 8)) & 1);
	}
	return v;
}

void
xk_fval_set(uint8_t *buf, const struct xk_fref *r, uint64_t v)
{
	uint8_t *p = buf + r->byte;

	if (r->bitoff == 0 && r->bits % 8 == 0 && r->bits <= 64) {
		xk_put_benn(p, r->bits / 8, v);
		return;
	}
	for (uint32_t b = 0; b < r->bits && b < 64; b++) {
		uint32_t bit = r->bitoff + r->bits - 1 - b;
		uint8_t mask = (uint8_t)(1u << (7 - bit % 8));

		if ((v >> b) & 1)
			p[bit / 8] |= mask;
		else
			p[bit / 8] &= (uint8_t)~mask;
	}
}

/* Does path start with name as a whole component? */
static size_t
name_match(const char *path, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(path, name, n) != 0)
		return 0;
	if (path[n] != '\0' && path[n] != '.' && path[n] != '[')
		return 0;
	return n;
}

/* The path component at p: up to the next '.', '[' or the end. */
static size_t
component_len(const char *p)
{
	return strcspn(p, ".[");
}

static int
path_fail(struct xk_fref *r, const char *whole, const char *at, size_t len,
	  enum xk_fpath_why why)
{
	/* A matched name may hold dots ("hdr.count"): name its last part. */
	for (size_t i = len; i > 0 && why != XK_FPATH_SYNTAX; i--) {
		if (at[i - 1] == '.') {
			at += i;
			len -= i;
			break;
		}
	}
	r->why = why;
	r->bad_off = (size_t)(at - whole);
	r->bad_len = len;
	return why == XK_FPATH_RANGE ? -ERANGE : -ENOENT;
}

static int
resolve_in(const struct xk_fctx *c, const struct xk_field *fields,
	   size_t base, const char *whole, const char *path,
	   struct xk_fref *r)
{
	const struct xk_field *f = NULL;
	const char *p = NULL;
	uint32_t count, first;
	int64_t idx = -1;
	size_t at, n = 0;

	if (component_len(path) == 0)
		return path_fail(r, whole, whole, strlen(whole),
				 XK_FPATH_SYNTAX);
	/* Longest match first, so "hdr.count" beats a field named "hdr". */
	for (const struct xk_field *g = fields; g->name; g++) {
		size_t m = name_match(path, g->name);

		if (m > n && xk_field_present(c, g, base)) {
			n = m;
			f = g;
		}
	}
	if (n == 0) {
		/* "hdr.bogus" when names are "hdr.count"...: name "bogus". */
		size_t skip = 0;

		for (const struct xk_field *g = fields; g->name; g++) {
			for (size_t i = 0; g->name[i] && g->name[i] == path[i];
			     i++)
				if (g->name[i] == '.' && i + 1 > skip)
					skip = i + 1;
		}
		return path_fail(r, whole, path + skip,
				 component_len(path + skip), XK_FPATH_UNKNOWN);
	}
	p = path + n;
	count = xk_field_count(c, f, base);
	first = (f->flags & XK_FF_BASE1) ? 1 : 0;
	if (*p == '[') {
		char *end;
		unsigned long long v;

		if (p[1] < '0' || p[1] > '9')
			return path_fail(r, whole, whole, strlen(whole),
					 XK_FPATH_SYNTAX);
		errno = 0;
		v = strtoull(p + 1, &end, 0);
		if (errno || *end != ']')
			return path_fail(r, whole, whole, strlen(whole),
					 XK_FPATH_SYNTAX);
		if (end[1] && end[1] != '.' && end[1] != '[')
			return path_fail(r, whole, end + 1,
					 component_len(end + 1),
					 XK_FPATH_UNKNOWN);
		if (!(f->flags & XK_FF_ARRAY))
			return path_fail(r, whole, path, n,
					 XK_FPATH_NOT_ARRAY);
		if (v < first || v - first >= count) {
			r->bad_index = v;
			r->first = first;
			r->count = count;
			return path_fail(r, whole, path, n, XK_FPATH_RANGE);
		}
		idx = (int64_t)v;
		p = end + 1;
	} else if ((f->flags & XK_FF_ARRAY) && *p == '.') {
		return path_fail(r, whole, path, n, XK_FPATH_WANT_INDEX);
	}
	if (count == 0) {
		r->bad_index = 0;
		r->first = first;
		r->count = 0;
		return path_fail(r, whole, path, n, XK_FPATH_RANGE);
	}
	at = xk_field_elem(c, f, base, idx >= 0 ? (uint32_t)(idx - first) : 0);
	if (*p == '.' && p[1] == '\0')
		return path_fail(r, whole, whole, strlen(whole),
				 XK_FPATH_SYNTAX);
	if (f->kind == XK_FK_STRUCT && *p == '.')
		return resolve_in(c, f->sub, at, whole, p + 1, r);
	if (*p == '.')
		return path_fail(r, whole, path, n, XK_FPATH_NO_SUBFIELDS);
	if (*p != '\0')
		return path_fail(r, whole, whole, strlen(whole),
				 XK_FPATH_SYNTAX);
	r->field = f;
	r->base = base;
	r->index = idx;
	r->byte = at;
	if (f->kind == XK_FK_STRUCT ||
	    ((f->flags & XK_FF_ARRAY) && idx < 0)) {
		r->bitoff = 0;
		r->bits = 0;
		return 0;
	}
	r->bitoff = f->bitoff;
	r->bits = xk_field_bits(c, f, base);
	return 0;
}

int
xk_field_resolve(const struct xk_fctx *c, const struct xk_field *fields,
		 const char *path, struct xk_fref *r)
{
	memset(r, 0, sizeof(*r));
	r->index = -1;
	if (!path || !*path)
		return path_fail(r, "", "", 0, XK_FPATH_SYNTAX);
	return resolve_in(c, fields, 0, path, path, r);
}
