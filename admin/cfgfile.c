// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-admin -C: a mkfs configuration file that makes a filesystem
 * with this one's user-visible features (not its geometry), in the
 * layout xfs_admin 7.2 writes: every section of mkfs.xfs's configuration
 * format in its order, each feature as name=0|1, and the root
 * directory's xfs:autofsck property when it has one.
 */
#include <stdio.h>
#include <string.h>

#include <xfskit/build_attr.h>
#include <xfskit/format/attr.h>
#include <xfskit/meta.h>
#include <xfskit/mount.h>

#include "admin.h"

/* The root's xfs:autofsck value into out ("" for none). */
static int
root_autofsck(struct xk_mount *mp, char *out, size_t outlen,
	      const char **why)
{
	static const char name[] = "xfs:autofsck";
	struct xk_attr_list l = { 0 };
	struct xk_dinode *dip;
	struct xk_buf *bp;
	struct xk_fail f;
	uint64_t ino = mp->sb.rootino;
	int err = xk_inode_read(mp, ino, 0, &bp, &dip);

	out[0] = '\0';
	*why = "the root inode cannot be read";
	if (err)
		return err;
	err = xk_dinode_verify(mp, ino, dip, &f);
	if (!err)
		err = xk_attr_list_read(mp, ino, dip, &l, why);
	xk_buf_release(bp);
	for (size_t i = 0; !err && i < l.n; i++) {
		const struct xk_bld_xattr *xa = &l.xa[i];

		if (xa->flags != XK_ATTR_ROOT ||
		    xa->namelen != sizeof(name) - 1 ||
		    memcmp(xa->name, name, xa->namelen))
			continue;
		snprintf(out, outlen, "%.*s", (int)xa->valuelen,
			 (const char *)xa->value);
	}
	xk_attr_list_free(&l);
	return err;
}

int
admin_write_cfg(struct xk_mount *mp, const char *image, const char *path)
{
	static const char *const autofsck_values[] = {
		"none", "check", "optimize", "repair",
	};
	const struct xk_geom *g = &mp->g;
	const char *why = NULL;
	char autofsck[64];
	int known = 0, err;
	FILE *fp;

	err = root_autofsck(mp, autofsck, sizeof(autofsck), &why);
	if (err) {
		fprintf(stderr, "xfskit-admin: %s: -C: %s: %s\n", image,
			why ? why : "the root directory's attributes cannot "
			"be read", xk_strerror(err));
		return 1;
	}
	for (size_t i = 0; i < 4; i++)
		known |= !strcmp(autofsck, autofsck_values[i]);
	if (autofsck[0] && !known) {
		fprintf(stderr, "xfskit-admin: %s: -C: the xfs:autofsck "
			"property holds \"%s\", which mkfs.xfs does not take\n",
			image, autofsck);
		return 1;
	}
	fp = fopen(path, "w");
	if (!fp) {
		perror(path);
		return 1;
	}
	fprintf(fp, "[block]\n\n[metadata]\ncrc=1\nfinobt=%d\nrmapbt=%d\n"
		"reflink=%d\ninobtcount=%d\nbigtime=%d\nmetadir=0\n",
		!!g->has_finobt, !!g->has_rmapbt, !!g->has_reflink,
		!!g->has_inobtcnt, !!g->has_bigtime);
	if (autofsck[0])
		fprintf(fp, "autofsck=%s\n", autofsck);
	fprintf(fp, "\n[data]\n\n[inode]\nsparse=%d\nnrext64=%d\n"
		"exchange=%d\n\n[log]\n\n[naming]\nparent=%d\nftype=%d\n"
		"version=%s\n\n[realtime]\n", !!g->has_sparse,
		!!g->has_nrext64, !!g->has_exchrange, !!g->has_parent,
		!!g->has_ftype, (mp->sb.versionnum & XK_SB_VERSION_BORGBIT) ?
		"ci" : "2");
	if (fclose(fp)) {
		perror(path);
		return 1;
	}
	return 0;
}
