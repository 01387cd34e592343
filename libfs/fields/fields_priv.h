/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shorthands for writing field tables.  F() describes a whole member of
 * an on-disk struct (offset and width from offsetof/sizeof, so the table
 * cannot drift from the declaration); B() a bitfield inside a member;
 * S() a sub-structure.  Extra designated initializers follow as varargs.
 */
#ifndef XFSKIT_FIELDS_PRIV_H
#define XFSKIT_FIELDS_PRIV_H

#include <stddef.h>

#include <xfskit/endian.h>
#include <xfskit/fields.h>

#define XK_MSIZE(st, mb)	sizeof(((st *)0)->mb)

#define F(nm, st, mb, k, ...) \
	{ .name = (nm), .offset = offsetof(st, mb), \
	  .bits = 8 * XK_MSIZE(st, mb), .kind = (k), __VA_ARGS__ }
/* Bit field: bit position bo (MSB first) and width nb within member mb. */
#define B(nm, st, mb, bo, nb, k, ...) \
	{ .name = (nm), .offset = offsetof(st, mb), .bitoff = (bo), \
	  .bits = (nb), .kind = (k), __VA_ARGS__ }
/* Raw position. */
#define R(nm, off, bo, nb, k, ...) \
	{ .name = (nm), .offset = (off), .bitoff = (bo), .bits = (nb), \
	  .kind = (k), __VA_ARGS__ }
#define S(nm, off, subtab, ...) \
	{ .name = (nm), .offset = (off), .kind = XK_FK_STRUCT, \
	  .sub = (subtab), __VA_ARGS__ }
#define FEND	{ .name = NULL }

/* Bounds-checked reads of the buffer for computed layouts. */
static inline uint64_t
fp_get(const struct xk_fctx *c, size_t at, unsigned int width)
{
	if (at > c->len || width > c->len - at)
		return 0;
	return xk_get_benn(c->buf + at, width);
}

/* Shared pieces, defined in btree.c and dir3.c. */
extern const struct xk_field xk_bmbt_rec_fields[];
extern const struct xk_field xk_bmbt_key_fields[];
extern const struct xk_field xk_rtrmap_rec_fields[];
extern const struct xk_field xk_rtrmap_key_fields[];
extern const struct xk_field xk_rtrefc_rec_fields[];
extern const struct xk_field xk_rtrefc_key_fields[];
extern const struct xk_field xk_da3_blkinfo_fields[];
extern const struct xk_field xk_da3_node_fields[];
extern const struct xk_field xk_parent_rec_fields[];
int xk_fp_da_magic_is(const struct xk_fctx *c, uint16_t magic);

#endif /* XFSKIT_FIELDS_PRIV_H */
