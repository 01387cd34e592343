// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Placeholder until this part of the builder lands.
 */
#include <errno.h>

#include <xfskit/build.h>

int
xk_bld_attrs(struct xk_bld *b, struct xk_bld_inode *ip,
	     const struct xk_bld_xattr *xa, size_t n)
{
	(void)b; (void)ip; (void)xa; (void)n;
	return -ENOSYS;
}
