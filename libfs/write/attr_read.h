/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading an attr fork (libfs-internal): its block map, its blocks and
 * its remote values, shared by the strict reader (attr_edit.c) and the
 * salvaging one (attr_salvage.c).
 */
#ifndef XFSKIT_WRITE_ATTR_READ_H
#define XFSKIT_WRITE_ATTR_READ_H

#include <stdint.h>

#include <xfskit/build_attr.h>

#include "write_priv.h"

/* The attr fork's mappings and bmbt blocks; err/why: the first fault. */
struct afork {
	struct xk_mount	*mp;
	uint64_t	ino;
	struct xk_bld_ext *ext;		/* loff order */
	uint64_t	next, ext_alloc;
	uint64_t	*bmbt;		/* bmbt blocks (fsb) */
	uint64_t	nbmbt, bmbt_alloc;
	uint64_t	nblocks;	/* blocks mapped */
	int		err;
	const char	*why;
};

/* One read of a fork's attributes into a list. */
struct aread {
	struct xk_mount		*mp;
	uint64_t		ino;
	const struct afork	*af;
	struct xk_attr_list	*l;
	uint32_t		bs;
	const char		*why;
};

void af_free(struct afork *af);
/* Load ino's attr fork map (extents or btree) into af, checked. */
int af_load(struct xk_mount *mp, uint64_t ino, const struct xk_dinode *dip,
	    struct afork *af);
/* The filesystem block of attr block lblk, or XK_NULLFSBLOCK. */
uint64_t af_map(const struct afork *af, uint64_t lblk);
/* Record why (the first reason only) and return err. */
int ar_bad(struct aread *ar, int err, const char *why);
/* Read attr block lblk through ops (NULL: raw, to learn its magic). */
int ar_read(struct aread *ar, uint64_t lblk, const struct xk_buf_ops *ops,
	    struct xk_buf **bpp);
/* A remote value of valuelen bytes from block valueblk into out. */
int read_rmt(struct aread *ar, uint32_t valueblk, uint32_t valuelen,
	     uint8_t *out);

#endif /* XFSKIT_WRITE_ATTR_READ_H */
