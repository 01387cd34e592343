// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Placeholder until this part of the builder lands.
 */
#include <errno.h>

#include <xfskit/build.h>

int
xk_bld_dir(struct xk_bld *b, struct xk_bld_inode *ip, uint64_t parent,
	   const struct xk_bld_dirent *ents, size_t n)
{
	(void)b; (void)ip; (void)parent; (void)ents; (void)n;
	return -ENOSYS;
}
