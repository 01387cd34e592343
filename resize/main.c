// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-resize: grow the data section of an unmounted XFS v5 filesystem
 * to the size of its (extended) device or image, or to -D blocks: what
 * xfs_growfs -d / -D does, without a mount; or shrink it to -D blocks
 * where the part cut off holds no used block.  The work itself is
 * libfs/grow.c and libfs/shrink.c; this file parses, refuses what must
 * not be written (a mounted filesystem, a dirty log, a NEEDSREPAIR mark,
 * a size beyond the device) and reports.
 *
 * Exit status: 0 resized or nothing to do, 1 refused or failed, 2 usage
 * error, mounted filesystem or dirty log (as xfskit-admin), 3 a shrink
 * that used blocks (or the log, or the AG count) stop (nothing written).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/ag.h>
#include <xfskit/dev.h>
#include <xfskit/errors.h>
#include <xfskit/grow.h>
#include <xfskit/libfs.h>
#include <xfskit/mount.h>
#include <xfskit/open_check.h>
#include <xfskit/shrink.h>
#include <xfskit/undo.h>

#define RESIZE_EXIT_FAILED	1
#define RESIZE_EXIT_USAGE	2
#define RESIZE_EXIT_OFFLINE	2	/* mounted, or a dirty log */
#define RESIZE_EXIT_SHRINK	3

struct resize {
	const char	*image;
	const char	*undo_path;
	const char	*size_arg;	/* -D as given */
	int		dry_run;	/* -n */
	struct xk_mount	*mp;
	int		shrinking;	/* the plan is p_shrink's */
	struct xk_grow_plan p_grow;
	struct xk_shrink_plan p_shrink;
	/* Data moved out of the part cut off first (in the cache). */
	int		moving;
	struct xk_shrink_move move;
	/* What the part cut off holds, surveyed before any move. */
	int		surveyed;
	struct xk_shrink_moves survey;
};

static void
usage(FILE *fp)
{
	fprintf(fp,
"Usage: xfskit-resize [-n] [-D size] [-z undofile] device|image\n"
"Grow the data section of an unmounted XFS v5 filesystem, as xfs_growfs\n"
"does on a mounted one: the last AG up to the AG size, then new AGs.\n"
"Or shrink it: empty AGs at the end removed, the last AG cut back over\n"
"its free tail; with the rmapbt, regular files' data in the part cut off\n"
"is moved below the new end first (other used blocks there refuse it).\n"
"  -D size     the new size of the data section: in filesystem blocks (as\n"
"              xfs_growfs -D), or in bytes with a k, m, g or t suffix\n"
"              (rounded down to whole blocks); default: the whole device\n"
"  -n          print the new geometry (for a shrink, also the smallest\n"
"              size possible without moving data) and write nothing\n"
"  -z file     record every overwritten block in an undo file (see\n"
"              xfskit-undo)\n"
"  -V          print the version and exit\n"
"  -h, --help  print this help and exit\n"
"A tail too small for an AG (under 64 blocks) is left unused, as the\n"
"kernel leaves it.\n"
"Exit status: 0 resized (or already that size), 1 refused or failed,\n"
"2 usage error, a mounted filesystem or a dirty log, 3 a shrink that used\n"
"blocks stop (the message names them and the smallest size possible;\n"
"nothing written).\n");
}

/* -D: blocks, or bytes with a binary suffix.  0, or -EINVAL. */
static int
parse_size(const char *arg, uint32_t blocksize, uint64_t *blocks)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (arg[0] < '0' || arg[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg)
		return -EINVAL;
	switch (*end) {
	case '\0':
		*blocks = v;
		return 0;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case 't': case 'T':
		shift = 40;
		break;
	default:
		return -EINVAL;
	}
	if (end[1] || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*blocks = (v << shift) / blocksize;
	return 0;
}

static void
print_geometry(const struct resize *r, const struct xk_grow_plan *p)
{
	const struct xk_sb *sb = &r->mp->sb;

	printf("meta-data=%-22s isize=%-6u agcount=%u, agsize=%u blks\n",
	       r->image, sb->inodesize, p->new_agcount, sb->agblocks);
	printf("data     =%-22s bsize=%-6u blocks=%" PRIu64 ", imaxpct=%u\n",
	       "", sb->blocksize, p->new_dblocks, sb->imax_pct);
	if (p->last_new_len != p->last_old_len)
		printf("AG %u grows from %u to %u blocks\n",
		       p->old_agcount - 1, p->last_old_len, p->last_new_len);
	if (p->new_agcount > p->old_agcount) {
		uint32_t n = p->new_agcount - p->old_agcount;
		uint64_t tail = p->new_dblocks -
				(uint64_t)(p->new_agcount - 1) * sb->agblocks;

		if (n == 1) {
			printf("AG %u added (%" PRIu64 " blocks)\n",
			       p->old_agcount, tail);
		} else {
			printf("AGs %u-%u added (%u of %u blocks",
			       p->old_agcount, p->new_agcount - 1, n,
			       sb->agblocks);
			if (tail != sb->agblocks)
				printf(", the last %" PRIu64, tail);
			printf(")\n");
		}
	}
	printf("free space grows by %" PRIu64 " blocks\n", p->new_free);
	if (p->unused)
		printf("%" PRIu64 " blocks at the end are left unused (an AG "
		       "needs at least %u)\n", p->unused, XK_MIN_AG_BLOCKS);
}

/*
 * The shared refusals (open_check.h), -n too: resize takes no device but
 * the data device.  A clean log is checked before planning, as a replay
 * would undo or garble a grow and the log may hold superblock changes
 * (a growfs of its own) the plan would not see.
 */
static struct xk_open_check
open_check(const struct resize *r)
{
	struct xk_open_check c = {
		.tool = "xfskit-resize", .path = r->image,
		.mounted_hint = ", or grow it mounted with xfs_growfs",
		.writes = !r->dry_run, .out = stderr,
	};

	return c;
}

static int
open_exit(int err)
{
	return err == -EBUSY ? RESIZE_EXIT_OFFLINE : RESIZE_EXIT_FAILED;
}

/* The target size in blocks, checked against the device. */
static int
target_blocks(const struct resize *r, uint64_t *want)
{
	const struct xk_mount *mp = r->mp;
	uint64_t dev_blocks = mp->dev->size / mp->g.blocksize;

	if (!r->size_arg) {
		*want = dev_blocks;
		return 0;
	}
	if (parse_size(r->size_arg, mp->g.blocksize, want)) {
		fprintf(stderr, "xfskit-resize: -D %s: not a size (filesystem "
			"blocks, or bytes with a k, m, g or t suffix)\n",
			r->size_arg);
		return RESIZE_EXIT_USAGE;
	}
	if (*want > dev_blocks) {
		fprintf(stderr, "xfskit-resize: %s: -D %s is %" PRIu64 " "
			"blocks, beyond the end of the device (%" PRIu64 " "
			"blocks of %u bytes); nothing was changed\n", r->image,
			r->size_arg, *want, dev_blocks, mp->g.blocksize);
		return RESIZE_EXIT_FAILED;
	}
	return 0;
}

static int
parse_args(struct resize *r, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "D:hnVz:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			printf("xfskit-resize version %s\n", xk_version());
			return -1;
		case 'D':
			r->size_arg = optarg;
			break;
		case 'n':
			r->dry_run = 1;
			break;
		case 'z':
			r->undo_path = optarg;
			break;
		default:
			usage(stderr);
			return RESIZE_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "xfskit-resize: %s\n", argc - optind ?
			"too many operands" : "no device given");
		usage(stderr);
		return RESIZE_EXIT_USAGE;
	}
	if (r->dry_run && r->undo_path) {
		fprintf(stderr, "xfskit-resize: -z: nothing to undo, -n writes "
			"nothing\n");
		return RESIZE_EXIT_USAGE;
	}
	r->image = argv[optind];
	return 0;
}

static double
mib(const struct resize *r, uint64_t blocks)
{
	return (double)blocks * r->mp->g.blocksize / (1024.0 * 1024.0);
}

static void
print_shrink(const struct resize *r, const struct xk_shrink_plan *p)
{
	const struct xk_sb *sb = &r->mp->sb;
	uint32_t last = p->new_agcount - 1;

	printf("meta-data=%-22s isize=%-6u agcount=%u, agsize=%u blks\n",
	       r->image, sb->inodesize, p->new_agcount, sb->agblocks);
	printf("data     =%-22s bsize=%-6u blocks=%" PRIu64 ", imaxpct=%u\n",
	       "", sb->blocksize, p->new_dblocks, sb->imax_pct);
	if (p->new_agcount + 1 == p->old_agcount)
		printf("AG %u removed (it holds no data)\n", p->new_agcount);
	else if (p->new_agcount < p->old_agcount)
		printf("AGs %u-%u removed (they hold no data)\n",
		       p->new_agcount, p->old_agcount - 1);
	if (p->last_new_len != p->last_old_len)
		printf("AG %u shrinks from %u to %u blocks (its free tail)\n",
		       last, p->last_old_len, p->last_new_len);
	if (r->moving)
		printf("moved first: %" PRIu64 " blocks of regular files' data "
		       "(extents: %" PRIu64 ", files: %" PRIu64 ", new "
		       "pieces: %zu) to free space below the new end\n",
		       r->move.blocks, r->move.extents, r->move.nfiles,
		       r->move.npieces);
	printf("free space shrinks by %" PRIu64 " blocks\n", p->removed_free);
	if (p->unused)
		printf("%" PRIu64 " blocks more than asked are cut off (an AG "
		       "needs at least %u)\n", p->unused, XK_MIN_AG_BLOCKS);
	printf("smallest size possible without moving %sdata: %" PRIu64
	       " blocks (%.1f MiB)\n", r->moving ? "more " : "",
	       p->min_dblocks, mib(r, p->min_dblocks));
}

/* What the reverse-mapping btree says those used blocks are. */
static void
print_owners(const struct xk_shrink_block *b)
{
	const char *sep = " (";

	if (b->inode_blocks) {
		fprintf(stderr, "%s%" PRIu64 " of %" PRIu64 " file%s or "
			"director%s: inode%s", sep, b->inode_blocks,
			b->ninodes, b->ninodes == 1 ? "" : "s",
			b->ninodes == 1 ? "y" : "ies",
			b->ninodes == 1 ? "" : "s");
		for (uint64_t i = 0; i < b->ninodes &&
		     i < XK_SHRINK_NAMED_INODES; i++)
			fprintf(stderr, "%s%" PRIu64, i ? ", " : " ",
				b->inodes[i]);
		if (b->ninodes > XK_SHRINK_NAMED_INODES)
			fprintf(stderr, " and %" PRIu64 " more",
				b->ninodes - XK_SHRINK_NAMED_INODES);
		sep = "; ";
	}
	if (b->chunk_blocks) {
		fprintf(stderr, "%s%" PRIu64 " of inode chunks", sep,
			b->chunk_blocks);
		sep = "; ";
	}
	if (b->log_blocks) {
		fprintf(stderr, "%s%" PRIu64 " of the log", sep,
			b->log_blocks);
		sep = "; ";
	}
	if (b->meta_blocks) {
		fprintf(stderr, "%s%" PRIu64 " of AG metadata", sep,
			b->meta_blocks);
		sep = "; ";
	}
	if (sep[0] == ';')
		fputc(')', stderr);
}

/* One "N of WHAT" item of a list, when N is not 0. */
static void
print_count(const char **sep, uint64_t n, const char *what)
{
	if (!n)
		return;
	fprintf(stderr, "%s%" PRIu64 " of %s", *sep, n, what);
	*sep = ", ";
}

/*
 * With rmapbt, what all the used blocks of the part cut off are, and
 * which of them a data move could take: a second line after a refusal.
 */
static void
print_moves(const struct resize *r, const struct xk_shrink_plan *p)
{
	const struct xk_shrink_moves *m = &r->survey;
	const char *sep = "";

	if (p->block.too_few_ags || !p->block.used || !r->surveyed)
		return;
	fprintf(stderr, "xfskit-resize: %s: in the part cut off, %" PRIu64
		" block%s of regular files' data (%" PRIu64 " extent%s of %"
		PRIu64 " file%s) could be moved, %" PRIu64 " blocks being free "
		"below the new end", r->image, m->file_blocks,
		m->file_blocks == 1 ? "" : "s", m->file_extents,
		m->file_extents == 1 ? "" : "s", m->nfiles,
		m->nfiles == 1 ? "" : "s", m->free_below);
	if (m->agtree_blocks)
		fprintf(stderr, ", and %" PRIu64 " blocks of AG btrees "
			"rebuilt elsewhere", m->agtree_blocks);
	if (m->shared_blocks || m->bmbt_blocks || m->dir_blocks ||
	    m->attr_blocks || m->symlink_blocks || m->chunk_blocks ||
	    m->log_blocks || m->meta_blocks) {
		fprintf(stderr, "; but a move cannot take ");
		print_count(&sep, m->shared_blocks, "reflinked files' data");
		print_count(&sep, m->bmbt_blocks, "block-map btrees");
		print_count(&sep, m->dir_blocks, "directories");
		print_count(&sep, m->attr_blocks, "extended attributes");
		print_count(&sep, m->symlink_blocks, "symlinks");
		print_count(&sep, m->chunk_blocks, "inode chunks");
		print_count(&sep, m->log_blocks, "the log");
		print_count(&sep, m->meta_blocks, "other metadata");
	}
	fprintf(stderr, "\n");
}

/*
 * Why the shrink cannot be made, and what can be.  MOVED says the plan
 * is the one made with the files' data moved out of the part cut off,
 * so its figures are not "without moving data".
 */
static void
print_shrink_refusal(const struct resize *r, const struct xk_shrink_plan *p,
		     int moved)
{
	const struct xk_shrink_block *b = &p->block;
	const char *how = moved ? "even with the files' data moved out of "
				  "the part cut off" : "without moving data";

	fprintf(stderr, "xfskit-resize: %s: cannot shrink to %" PRIu64
		" blocks %s: ", r->image, p->new_dblocks, how);
	if (b->too_few_ags)
		fprintf(stderr, "it would leave %u AG%s, and a filesystem "
			"keeps at least 2", p->new_agcount,
			p->new_agcount == 1 ? "" : "s");
	else if (b->cut == 0)
		fprintf(stderr, "AG %u, which would be removed whole, holds "
			"%" PRIu64 " used block%s besides its headers%s",
			b->agno, b->used, b->used == 1 ? "" : "s",
			b->log ? " (the internal log among "
			"them, which cannot move)" : "");
	else if (b->used)
		fprintf(stderr, "AG %u holds %" PRIu64 " used block%s in its "
			"blocks %u-%u, which would be cut off%s", b->agno,
			b->used, b->used == 1 ? "" : "s", b->cut, b->length - 1, b->log ? " (the "
			"internal log among them, which cannot move)" : "");
	else if (b->chunk_end)
		fprintf(stderr, "an inode chunk of AG %u reaches its block "
			"%u, past the new end (block %u)", b->agno,
			b->chunk_end - 1, b->cut);
	else if (b->resv_need > b->resv_free)
		fprintf(stderr, "AG %u would keep %" PRIu64 " free blocks, "
			"fewer than the %" PRIu64 " its metadata btrees "
			"reserve (the kernel's shrink refuses that too)",
			b->agno, b->resv_free, b->resv_need);
	else
		fprintf(stderr, "AG %u would be shorter than %u blocks",
			b->agno, XK_MIN_AG_BLOCKS);
	if (!b->too_few_ags && b->owners_known)
		print_owners(b);
	fprintf(stderr, "; the smallest size possible %s is %" PRIu64
		" blocks (%.1f MiB); nothing was changed\n",
		moved ? "with that data moved" : "without moving data",
		p->min_dblocks, mib(r, p->min_dblocks));
	if (!moved)
		print_moves(r, p);
}

/*
 * With rmapbt, survey what the used blocks of the part cut off are,
 * before any move edits the cache; whether all of them are files' data
 * or AG btree blocks, which a move takes.
 */
static int
movable_only(struct resize *r, const struct xk_shrink_plan *p)
{
	const struct xk_shrink_moves *m = &r->survey;
	char msg[400];

	if (p->block.too_few_ags || !p->block.used || !r->mp->g.has_rmapbt)
		return 0;
	r->surveyed = !xk_shrink_moves_survey(r->mp, p, &r->survey, msg,
					      sizeof(msg));
	return r->surveyed && (m->file_blocks || m->agtree_blocks) &&
	       !m->shared_blocks && !m->bmbt_blocks && !m->dir_blocks &&
	       !m->attr_blocks && !m->symlink_blocks && !m->chunk_blocks &&
	       !m->log_blocks && !m->meta_blocks;
}

static int
plan_shrink(struct resize *r, uint64_t want, int *go)
{
	struct xk_shrink_plan *p = &r->p_shrink;
	char msg[400];
	int err = xk_shrink_plan(r->mp, want, p, msg, sizeof(msg));

	r->shrinking = 1;
	if (err == -ENOSPC && movable_only(r, p)) {
		struct xk_shrink_plan before = *p;

		/* Move the files' data out, in the cache, and plan again. */
		err = xk_shrink_move_prepare(r->mp, p, &r->move, msg,
					     sizeof(msg));
		if (!err) {
			err = xk_shrink_plan(r->mp, want, p, msg, sizeof(msg));
			if (err == -ENOSPC) {
				/* What is in the way, then why moving it
				 * is not enough. */
				struct xk_shrink_plan moved = *p;

				*p = before;
				print_shrink_refusal(r, p, 0);
				print_shrink_refusal(r, &moved, 1);
				return RESIZE_EXIT_SHRINK;
			}
		}
		if (!err) {
			r->moving = 1;
		} else {
			*p = before;
			print_shrink_refusal(r, p, 0);
			if (msg[0])
				fprintf(stderr, "xfskit-resize: %s: no data "
					"moved: %s\n", r->image, msg);
			return err == -ENOSPC || err == -EOPNOTSUPP ?
			       RESIZE_EXIT_SHRINK : RESIZE_EXIT_FAILED;
		}
	}
	if (err == -ENOSPC) {
		print_shrink_refusal(r, p, 0);
		return RESIZE_EXIT_SHRINK;
	}
	if (err) {
		fprintf(stderr, "xfskit-resize: %s: %s; nothing was changed\n",
			r->image, msg);
		return RESIZE_EXIT_FAILED;
	}
	/* -n: all but the writes, so a refusal shows now. */
	if (r->dry_run && xk_shrink_check(r->mp, p, msg, sizeof(msg))) {
		fprintf(stderr, "xfskit-resize: %s: %s; nothing was changed\n",
			r->image, msg);
		return RESIZE_EXIT_FAILED;
	}
	print_shrink(r, p);
	*go = 1;
	return 0;
}

/* Plan, refuse or report; 0 with *go set when there is work to do. */
static int
plan(struct resize *r, int *go)
{
	struct xk_grow_plan *p = &r->p_grow;
	uint64_t want;
	int rc = target_blocks(r, &want);

	*go = 0;
	if (rc)
		return rc;
	if (want < r->mp->g.dblocks)
		return plan_shrink(r, want, go);
	if (xk_grow_plan(r->mp, want, p)) {
		fprintf(stderr, "xfskit-resize: %s: no plan for %" PRIu64
			" blocks\n", r->image, want);
		return RESIZE_EXIT_FAILED;
	}
	if (p->new_dblocks == p->old_dblocks) {
		printf("data size unchanged (%" PRIu64 " blocks), skipping\n",
		       p->old_dblocks);
		if (p->unused)
			printf("%" PRIu64 " blocks past the end are too few "
			       "for an AG (at least %u)\n", p->unused,
			       XK_MIN_AG_BLOCKS);
		return 0;
	}
	print_geometry(r, p);
	*go = 1;
	return 0;
}

static int
resize(struct resize *r)
{
	struct xk_undo *undo = NULL;
	uint64_t from, to;
	char msg[400];
	int rc = 0, err;

	if (r->undo_path) {
		err = xk_undo_create(r->mp->dev, r->undo_path, &undo);
		if (err) {
			fprintf(stderr, "xfskit-resize: cannot start the undo "
				"file %s: %s\n", r->undo_path,
				xk_strerror(err));
			return RESIZE_EXIT_FAILED;
		}
	}
	from = r->shrinking ? r->p_shrink.old_dblocks : r->p_grow.old_dblocks;
	to = r->shrinking ? r->p_shrink.new_dblocks : r->p_grow.new_dblocks;
	err = r->moving ? xk_shrink_move_write(r->mp, &r->move, msg,
					       sizeof(msg)) : 0;
	if (!err)
		err = r->shrinking ?
		      xk_shrink_apply(r->mp, &r->p_shrink, msg, sizeof(msg)) :
		      xk_grow_apply(r->mp, &r->p_grow, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "xfskit-resize: %s: %s\n", r->image, msg);
		/* Edits may sit in the cache unwritten: never flush them. */
		xk_mount_discard(r->mp);
		err = 0;
		rc = RESIZE_EXIT_FAILED;
	} else {
		printf("data blocks changed from %" PRIu64 " to %" PRIu64 "\n",
		       from, to);
		if (r->shrinking)
			printf("the filesystem now ends at byte %" PRIu64
			       " (an image file can be truncated to it)\n",
			       to * r->mp->g.blocksize);
		err = xk_mount_close(r->mp);
	}
	r->mp = NULL;
	if (err) {
		fprintf(stderr, "xfskit-resize: %s: writing back failed: %s\n",
			r->image, xk_strerror(err));
		rc = RESIZE_EXIT_FAILED;
	}
	if (undo) {
		err = xk_undo_finish(undo);
		if (err) {
			fprintf(stderr, "xfskit-resize: the undo file %s could "
				"not be completed: %s\n", r->undo_path,
				xk_strerror(err));
			rc = RESIZE_EXIT_FAILED;
		}
	}
	return rc;
}

int
main(int argc, char **argv)
{
	struct resize r;
	struct xk_open_check oc;
	struct xk_fail f;
	int rc, err, go;

	memset(&r, 0, sizeof(r));
	rc = parse_args(&r, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	oc = open_check(&r);
	err = xk_open_check_before(&oc);
	if (err)
		return open_exit(err);
	err = xk_mount_open(r.image, r.dry_run ? XK_MOUNT_RDONLY : 0, &r.mp,
			    &f);
	if (err) {
		char msg[400];

		xk_open_error_format(err, &f, msg, sizeof(msg));
		fprintf(stderr, "xfskit-resize: %s: %s\n", r.image, msg);
		return RESIZE_EXIT_FAILED;
	}
	/* Before planning: a dirty log may hold a newer superblock. */
	err = xk_open_check_after(&oc, r.mp);
	rc = err ? open_exit(err) : 0;
	if (!rc)
		rc = plan(&r, &go);
	if (!rc && go && r.dry_run)
		printf("-n: nothing written\n");
	else if (!rc && go) {
		rc = resize(&r);
		xk_shrink_move_free(&r.move);
		return rc;
	}
	xk_mount_discard(r.mp);
	xk_shrink_move_free(&r.move);
	return rc;
}
