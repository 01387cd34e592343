// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xk_walk_count IMAGE: walk every metadata block with libfs's walker
 * (quota blocks and the log included) and print, one per line, how many
 * blocks of each type it visited ("TYPE COUNT", types in walk order of
 * first meeting), then "inodes N", "logbytes N" and "problems N".  The
 * walker test compares these with counts xfs_db reads from the AG
 * headers and inodes.  Exit status: 0, 1 when the walk fails.
 */
#include <stdio.h>
#include <string.h>

#include <xfskit/libfs.h>
#include <xfskit/walk.h>

struct counts {
	const char	*type[64];
	unsigned long long n[64];
	int		ntypes;
	unsigned long long logbytes;
};

static int
count_visit(void *ctx, const struct xk_walk_block *b)
{
	struct counts *c = ctx;
	int i;

	if (b->kind == XK_WALK_LOG)
		c->logbytes += b->len;
	if (b->kind == XK_WALK_INODE && !b->bp)
		return 0;
	for (i = 0; i < c->ntypes; i++)
		if (!strcmp(c->type[i], b->type))
			break;
	if (i == c->ntypes) {
		if (c->ntypes == 64)
			return 1;
		c->type[c->ntypes++] = b->type;
	}
	c->n[i]++;
	return 0;
}

int
main(int argc, char **argv)
{
	struct counts c;
	struct xk_walk w = {
		.flags = XK_WALK_QUOTA | XK_WALK_LOG_EXTENT,
		.ctx = &c, .visit = count_visit,
	};
	struct xk_mount *mp;
	struct xk_fail f;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: xk_walk_count IMAGE\n");
		return 1;
	}
	memset(&c, 0, sizeof(c));
	err = xk_mount_open(argv[1], XK_MOUNT_RDONLY, &mp, &f);
	if (err) {
		fprintf(stderr, "xk_walk_count: %s: %s\n", argv[1],
			xk_strerror(err));
		return 1;
	}
	err = xk_walk_metadata(mp, 0, mp->g.agcount - 1, &w);
	if (err && err != XK_ECORRUPT) {
		fprintf(stderr, "xk_walk_count: walk: %s\n", xk_strerror(err));
		xk_mount_discard(mp);
		return 1;
	}
	for (int i = 0; i < c.ntypes; i++)
		printf("%s %llu\n", c.type[i], c.n[i]);
	printf("inodes %llu\n", (unsigned long long)w.ninodes);
	printf("logbytes %llu\n", c.logbytes);
	printf("problems %u\n", w.nproblems);
	return xk_mount_close(mp) ? 1 : 0;
}
