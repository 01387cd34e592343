// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Finishing logged attribute intents (ATTRI) after replay, as the
 * kernel's recovery does.  On a filesystem with parent pointers every
 * directory change logs one per child touched: PPTR_SET when an entry
 * is added, PPTR_REMOVE when one goes, PPTR_REPLACE for a rename; with
 * logged xattrs also SET, REPLACE and REMOVE.  The kernel finishes one
 * from scratch, whatever part of it reached the disk before the crash:
 *   - a set (SET, REPLACE, PPTR_SET) first removes the attribute if
 *     present (the same name in the namespace; for a parent pointer the
 *     same name and value) and then adds it, so it ends up there once;
 *   - a removal removes it if present (absent is fine);
 *   - a parent pointer replace removes the old one if present and adds
 *     the new one (unless already there).
 * The inode is the logged one; parent pointer operations also name its
 * generation and fail when the inode was freed or reused.  The work
 * here reads the inode's whole attr fork, applies the operation to the
 * list and writes the fork anew (libfs/write/attr_edit.c): the same
 * attributes as the kernel's, possibly in another layout.
 *
 * Replay keeps only the format region of an unfinished intent; the
 * name and value regions are found again by walking the log for the
 * ATTRI with the same format bytes (the last one: ids are addresses the
 * kernel reuses, but never while an intent is still open).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build_attr.h>
#include <xfskit/format/attr.h>
#include <xfskit/log_attri.h>
#include <xfskit/meta.h>

#include "log_priv.h"

/* The decoded intent, with its own copy of the names and values. */
struct found_attri {
	const struct log_intent *in;
	struct xk_log_attri a;
	uint8_t		*bytes;
	int		found;
};

static int
find_trans(void *priv, const struct xk_log_trans *tr)
{
	struct found_attri *fa = priv;

	for (uint32_t i = 0; i < tr->nitems; i++) {
		const struct xk_log_item *it = &tr->items[i];
		struct xk_log_attri a;
		const char *why;
		uint8_t *buf, *p;
		size_t sz;

		if (it->type != XK_LI_ATTRI ||
		    it->regions[0].len != fa->in->len ||
		    memcmp(it->regions[0].data, fa->in->data, fa->in->len))
			continue;
		if (xk_log_attri_decode(NULL, it, &a, &why))
			return XK_ECORRUPT;	/* the walk checked it */
		sz = (size_t)a.namelen + a.new_namelen + a.valuelen +
		     a.new_valuelen + 1;
		buf = malloc(sz);
		if (!buf)
			return -ENOMEM;
		p = buf;
#define KEEP(f, l) do { if (a.f) { memcpy(p, a.f, a.l); a.f = p; \
				   p += a.l; } } while (0)
		KEEP(name, namelen);
		KEEP(new_name, new_namelen);
		KEEP(value, valuelen);
		KEEP(new_value, new_valuelen);
#undef KEEP
		free(fa->bytes);
		fa->bytes = buf;
		fa->a = a;
		fa->found = 1;
	}
	return 0;
}

/* Apply the operation to the list; *changed: something to write. */
static int
apply(const struct xk_log_attri *a, struct xk_attr_list *l, int *changed)
{
	uint8_t ns = (uint8_t)(a->filter & XK_ATTR_NSP_ONDISK_MASK);
	int pptr = ns == XK_ATTR_PARENT;
	const uint8_t *match = pptr ? a->value : NULL;
	size_t gone;

	gone = xk_attr_list_remove(l, ns, a->name, (uint8_t)a->namelen,
				   match, a->valuelen);
	*changed = gone != 0;
	switch (a->op) {
	case XK_ATTRI_OP_FLAGS_REMOVE:
	case XK_ATTRI_OP_FLAGS_PPTR_REMOVE:
		return 0;
	case XK_ATTRI_OP_FLAGS_PPTR_REPLACE:
		gone = xk_attr_list_remove(l, ns, a->new_name,
					   (uint8_t)a->new_namelen,
					   a->new_value, a->new_valuelen);
		*changed = 1;
		return xk_attr_list_add(l, ns, a->new_name,
					(uint8_t)a->new_namelen, a->new_value,
					a->new_valuelen);
	default:
		*changed = 1;
		return xk_attr_list_add(l, ns, a->name, (uint8_t)a->namelen,
					a->value, a->valuelen);
	}
}

/*
 * The inode recovery takes.  Rules: 1. it passes the inode verifier;
 * 2. it is in use; 3. for parent pointer operations its generation is
 * the logged one (recovery looks it up by handle).
 */
static int
load_inode(struct xk_log *log, const struct xk_log_attri *a,
	   struct xk_attr_list *l)
{
	struct xk_mount *mp = log->mp;
	unsigned long long id = (unsigned long long)a->id;
	unsigned long long ino = (unsigned long long)a->ino;
	struct xk_dinode *dip;
	struct xk_buf *bp;
	struct xk_fail f;
	const char *why = NULL;
	int err, pptr = a->op >= XK_ATTRI_OP_FLAGS_PPTR_SET;

	err = xk_inode_read(mp, a->ino, 0, &bp, &dip);
	if (err)
		return xk_log_fail(log, err, "ATTRI intent id 0x%llx: inode "
				   "%llu cannot be read: %s", id, ino,
				   xk_strerror(err));
	err = xk_dinode_verify(mp, a->ino, dip, &f);
	if (err)
		why = "it fails the inode verifier";
	else if (xk_be16_get(dip->di_mode) == 0)
		why = "it is free";
	else if (pptr && xk_be32_get(dip->di_gen) != a->igen)
		why = "its generation is not the logged one (the file was "
		      "deleted and the inode reused)";
	if (why) {
		xk_buf_release(bp);
		return xk_log_fail(log, XK_ECORRUPT, "ATTRI intent id 0x%llx: "
				   "inode %llu: %s", id, ino, why);
	}
	err = xk_attr_list_read(mp, a->ino, dip, l, &why);
	xk_buf_release(bp);
	if (err)
		return xk_log_fail(log, err, "ATTRI intent id 0x%llx: the "
				   "attributes of inode %llu cannot be read: "
				   "%s: %s", id, ino, why ? why : "",
				   xk_strerror(err));
	return 0;
}

int
log_finish_attri(struct xk_log *log, struct xk_bld *b,
		 const struct log_intent *in)
{
	struct xk_log_walk_ops ops = { .trans = find_trans };
	struct found_attri fa = { .in = in };
	struct xk_attr_list l = { 0 };
	unsigned long long id = (unsigned long long)in->id;
	const char *why = NULL;
	int changed = 0, err;

	err = xk_log_walk(log, &ops, &fa);
	if (!err && !fa.found)
		err = xk_log_fail(log, XK_ECORRUPT, "ATTRI intent id 0x%llx: "
				  "its item is no longer found in the log",
				  id);
	if (err)
		goto out;
	err = load_inode(log, &fa.a, &l);
	if (err)
		goto out;
	err = apply(&fa.a, &l, &changed);
	if (!err && changed)
		err = xk_bld_attr_rewrite(b, fa.a.ino, &l, &why);
	if (err)
		xk_log_fail(log, err, "finishing ATTRI intent id 0x%llx (%s "
			    "on inode %llu) failed: %s: %s", id,
			    xk_log_attri_op_name(fa.a.op),
			    (unsigned long long)fa.a.ino, why ? why : "",
			    xk_strerror(err));
out:
	xk_attr_list_free(&l);
	free(fa.bytes);
	return err;
}
