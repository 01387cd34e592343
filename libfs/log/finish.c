// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * After replay: what the kernel does at mount once the log is applied.
 * Intents left without their done item are finished (EFI frees extents,
 * RUI updates reverse mappings, CUI refcounts, BUI file mappings, XMI
 * exchanges file mappings: finish_xmi.c), then
 * CoW staging extents are freed and the inodes left on the AGI unlinked
 * lists (unlinked while open) are inactivated and freed.
 *
 * All of it goes through the builder (libfs/write/): the effects are
 * applied to its in-memory state of each AG and commit rebuilds the AG
 * indexes, so the result is consistent by construction even though the
 * btrees' shapes differ from what the kernel's record-by-record updates
 * would have left.
 *
 * Intent payloads are in the writer's byte order (host order for x86
 * writers): read with the xk_get_ne* accessors, each count checked
 * against the region's length first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build.h>

#include "log_priv.h"

/* EFI extents come in a 12-byte (packed 32-bit) or 16-byte layout. */
static int
finish_efi(struct xk_bld *b, const struct log_intent *in)
{
	uint32_t n;
	size_t esz;

	if (in->len < 16)
		return XK_ECORRUPT;
	n = xk_get_ne32(in->data + 4);
	if (in->len == xk_efi_log_format32_sizeof(n))
		esz = sizeof(struct xk_extent_32);
	else if (in->len == xk_efi_log_format64_sizeof(n))
		esz = sizeof(struct xk_extent_64);
	else
		return XK_ECORRUPT;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = in->data + 16 + (size_t)i * esz;
		int err = xk_bld_free_extent(b, xk_get_ne64(e),
					     xk_get_ne32(e + 8));

		if (err)
			return err;
	}
	return 0;
}

static unsigned int
rmap_bld_flags(uint32_t f)
{
	return ((f & XK_RMAP_EXTENT_ATTR_FORK) ? XK_BLD_ATTR_FORK : 0) |
	       ((f & XK_RMAP_EXTENT_BMBT_BLOCK) ? XK_BLD_BMBT : 0) |
	       ((f & XK_RMAP_EXTENT_UNWRITTEN) ? XK_BLD_UNWRITTEN : 0);
}

/* RUI and BUI share the 32-byte mapping extent. */
static int
map_extents(const struct log_intent *in, uint32_t *n)
{
	if (in->len < 16)
		return XK_ECORRUPT;
	*n = xk_get_ne32(in->data + 4);
	if (in->len != 16 + (size_t)*n * sizeof(struct xk_map_extent))
		return XK_ECORRUPT;
	return 0;
}

static int
finish_rui(struct xk_bld *b, const struct log_intent *in)
{
	uint32_t n;
	int err = map_extents(in, &n);

	for (uint32_t i = 0; i < n && !err; i++) {
		const uint8_t *e = in->data + 16 + (size_t)i * 32;
		uint32_t f = xk_get_ne32(e + 28);

		if (f & ~XK_RMAP_EXTENT_FLAGS)
			return XK_ECORRUPT;
		err = xk_bld_rmap_update(b, f & XK_RMAP_EXTENT_TYPE_MASK,
					 xk_get_ne64(e), xk_get_ne64(e + 8),
					 xk_get_ne64(e + 16),
					 xk_get_ne32(e + 24),
					 rmap_bld_flags(f));
	}
	return err;
}

static int
finish_cui(struct xk_bld *b, const struct log_intent *in)
{
	uint32_t n;

	if (in->len < 16)
		return XK_ECORRUPT;
	n = xk_get_ne32(in->data + 4);
	if (in->len != 16 + (size_t)n * sizeof(struct xk_phys_extent))
		return XK_ECORRUPT;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = in->data + 16 + (size_t)i * 16;
		uint32_t f = xk_get_ne32(e + 12);
		int err;

		if (f & ~XK_REFCOUNT_EXTENT_FLAGS)
			return XK_ECORRUPT;
		err = xk_bld_refcount_update(b, f, xk_get_ne64(e),
					     xk_get_ne32(e + 8));
		if (err)
			return err;
	}
	return 0;
}

static int
finish_bui(struct xk_bld *b, const struct log_intent *in)
{
	uint32_t n, f;
	const uint8_t *e;
	int err = map_extents(in, &n);

	if (err)
		return err;
	if (n != 1)
		return XK_ECORRUPT;	/* a BUI carries one mapping */
	e = in->data + 16;
	f = xk_get_ne32(e + 28);
	if (f & ~XK_BMAP_EXTENT_FLAGS || (f & XK_BMAP_EXTENT_REALTIME))
		return XK_ECORRUPT;
	/* The kernel's BUI unmap is a remap: it frees nothing. */
	return xk_bld_bmap_update(b, (f & XK_BMAP_EXTENT_TYPE_MASK) |
				  ((f & XK_BMAP_EXTENT_TYPE_MASK) ==
				   XK_BMAP_UNMAP ? XK_BLD_BMAP_REMAP : 0),
				  xk_get_ne64(e),
				  (f & XK_BMAP_EXTENT_ATTR_FORK) ?
				  XK_ATTR_FORK : XK_DATA_FORK,
				  xk_get_ne64(e + 16), xk_get_ne64(e + 8),
				  xk_get_ne32(e + 24),
				  !!(f & XK_BMAP_EXTENT_UNWRITTEN));
}

int
log_intent_supported(uint16_t type)
{
	return type == XK_LI_EFI || type == XK_LI_RUI || type == XK_LI_CUI ||
	       type == XK_LI_BUI || type == XK_LI_XMI || type == XK_LI_ATTRI;
}

int
log_finish(struct xk_log *log, const struct log_intent *in, size_t n,
	   unsigned int flags, struct xk_log_report *rep)
{
	struct xk_mount *mp = log->mp;
	struct log_xmi_taken taken = { .vec = { .first = 8 } };
	struct xk_bld *b;
	uint64_t count;
	int err;

	err = (flags & XK_LOG_DRYRUN) ? xk_bld_open_cached(mp, &b) :
					xk_bld_open(mp, &b);
	if (err)
		return xk_log_fail(log, err, "loading the filesystem to finish "
				   "what replay left failed: %s",
				   xk_strerror(err));
	/*
	 * The kernel's recovery takes one unit of work from each intent in
	 * log order and finishes the rest (an exchange's later steps) after
	 * all of them: a mapping update logged after an XMI lands before
	 * the exchange goes on.  Each file's bmbt is edited in that order
	 * (see libfs/write/bmbt_shape.c), so exchanges come last here; the
	 * others never touch the range an XMI has left.
	 */
	for (size_t k = 0; k < 2 * n; k++) {
		size_t i = k % n;

		if ((in[i].type == XK_LI_XMI) != (k >= n))
			continue;
		switch (in[i].type) {
		case XK_LI_EFI:
			err = finish_efi(b, &in[i]);
			break;
		case XK_LI_RUI:
			err = finish_rui(b, &in[i]);
			break;
		case XK_LI_CUI:
			err = finish_cui(b, &in[i]);
			break;
		case XK_LI_BUI:
			err = finish_bui(b, &in[i]);
			break;
		case XK_LI_XMI: {
			uint64_t steps;

			/* It says itself what went wrong. */
			err = log_finish_xmi(log, b, &in[i], &taken, &steps);
			if (err) {
				xk_vec_free(&taken.vec);
				xk_bld_free(b);
				return err;
			}
			break;
		}
		case XK_LI_ATTRI:
			/* It says itself what went wrong. */
			err = log_finish_attri(log, b, &in[i]);
			if (err) {
				xk_vec_free(&taken.vec);
				xk_bld_free(b);
				return err;
			}
			break;
		default:
			err = XK_EUNSUPP;
			break;
		}
		if (err) {
			xk_vec_free(&taken.vec);
			xk_bld_free(b);
			return xk_log_fail(log, err, "finishing intent %zu "
					   "of %zu (%s id 0x%llx) failed: %s",
					   i + 1, n,
					   xk_log_item_name(in[i].type),
					   (unsigned long long)in[i].id,
					   xk_strerror(err));
		}
		rep->intents_finished++;
	}
	/* Files an exchange took are let go: past-EOF blocks freed. */
	err = log_xmi_release(log, b, &taken);
	if (err) {
		xk_bld_free(b);
		return err;
	}
	if (!(flags & XK_LOG_SKIP_CLEANUP)) {
		err = xk_bld_cow_cleanup(b, &count);
		if (!err) {
			rep->cow_freed = count;
			err = xk_bld_free_unlinked(b, &count);
			rep->unlinked_freed = count;
		}
		if (err) {
			xk_bld_free(b);
			return xk_log_fail(log, err, "the cleanup after replay "
					   "(CoW staging, unlinked inodes) "
					   "failed: %s", xk_strerror(err));
		}
	}
	err = xk_bld_commit(b);
	xk_bld_free(b);
	if (!err && (flags & XK_LOG_DRYRUN))
		err = xk_buf_seal(mp);
	if (err)
		return xk_log_fail(log, err, "rebuilding the AG indexes after "
				   "finishing intents failed: %s",
				   xk_strerror(err));
	return 0;
}
