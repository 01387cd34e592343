// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-repair: check (and, in time, repair) an XFS v5 filesystem.
 * main() parses options, opens the image and runs the phases; the phases
 * live in their own files and report through fix_problem().
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "repair.h"

static void
usage(FILE *to)
{
	fprintf(to,
"Usage: xfskit-repair [-n] [-L] [-e] [-z UNDO_FILE] [-v] [-P] [-t N] [-m MB]\n"
"                     [--spill-dir DIR] [--direct] [--json] DEVICE\n"
"       xfskit-repair -V\n"
"  -n      no modify: check only, open the device read-only, write nothing\n"
"  -L      zero the log (its changes are lost) instead of replaying it\n"
"  -e      exit with status 4 when corruption was found and repaired\n"
"  -z F    record every block overwritten in undo file F (see xfskit-undo)\n"
"  -v      verbose: report each phase and each btree walked\n"
"  -P      no progress display on a terminal\n"
"  -t N    scan inodes and replay the log with N threads (default:\n"
"          one per CPU)\n"
"  -m MB   use at most MB MiB of memory, moving the extent records and\n"
"          the inode and directory entry lists to temporary files if\n"
"          need be; refuse at once, naming the figure needed, when the\n"
"          filesystem cannot be checked in it\n"
"  --spill-dir DIR  where -m keeps those files (default $TMPDIR, else\n"
"          /var/tmp; it should be on a disk, not tmpfs)\n"
"  --direct  read and write the device with O_DIRECT (no page cache)\n"
"  --json  print one JSON document (problems with their fields)\n"
"  -V      print the version and exit\n"
"Without -n, a dirty log is replayed, the filesystem checked, what is\n"
"found repaired, and the check run again to confirm.\n"
"Exit status: 0 clean or repaired (4 with -e if anything was repaired),\n"
"1 corruption found (-n) or left unrepaired, 2 dirty log that must be\n"
"mounted, 3 usage error, 4 operational error (a mounted filesystem\n"
"included), 5 parts of the filesystem xfskit does not support were not\n"
"checked (-n, nothing else found) or, without -n, nothing was written\n"
"because of them.\n");
}

/* Report an error that stops the check. */
static int
operational_error(struct repair_ctx *rc, const char *msg)
{
	fprintf(stderr, "xfskit-repair: %s: %s\n", rc->device, msg);
	if (rc->json) {
		fprintf(rc->out, "],\n  \"error\": ");
		json_string(rc->out, msg);
		fprintf(rc->out, ",\n  \"exit_status\": %d\n}\n",
			REPAIR_EXIT_ERROR);
	}
	return REPAIR_EXIT_ERROR;
}

/*
 * Stop the run after an error, naming the undo file when it was the
 * cause.  The undo file is finished first: from then on the device
 * refuses writes, so closing the handle writes nothing more.
 */
static int
stop_run(struct repair_ctx *rc, struct xk_undo *undo, const char *undo_path,
	 int err)
{
	char msg[600];
	const char *why = guard_error_text(undo, undo_path, err, msg,
					   sizeof(msg));

	xk_undo_finish(undo);
	xk_mount_close(rc->mp);
	return operational_error(rc, why);
}

/*
 * The primary is unusable: say why, find a secondary, and check with its
 * geometry.  The bad primary is reported as a finding.
 */
static int
open_from_secondary(struct repair_ctx *rc, int why, struct xk_fail *f,
		    char *errmsg, size_t errlen)
{
	char line[512];
	struct xk_dev *dev;
	struct xk_dsb dsb;
	struct xk_sb hint, sb;
	uint32_t agno;
	int err;

	xk_open_error_format(why, f, line, sizeof(line));
	err = xk_dev_open(rc->device, rc->no_modify ? XK_DEV_RDONLY :
			  XK_DEV_EXCL, &dev);
	if (err) {
		snprintf(errmsg, errlen, "%s", xk_strerror(err));
		return err;
	}
	memset(&dsb, 0, sizeof(dsb));
	xk_dev_pread(dev, &dsb, sizeof(dsb), 0);
	xk_sb_decode(&hint, &dsb);
	info(rc, "Primary superblock is bad (%s); looking for a "
	     "secondary...\n", line);
	/* xfs_repair scans the whole device; 1 TiB bounds the search. */
	err = find_secondary_sb(dev, &hint, 1ULL << 40, &sb, &agno);
	if (err) {
		snprintf(errmsg, errlen, "%s; no good secondary superblock "
			 "found either", line);
		xk_dev_close(dev);
		return err;
	}
	info(rc, "Using the secondary superblock of AG %u.\n", agno);
	err = xk_mount_from_sb(dev, &sb, rc->no_modify ? XK_MOUNT_RDONLY : 0,
			       &rc->mp, f);
	if (err) {
		xk_open_error_format(err, f, errmsg, errlen);
		xk_dev_close(dev);
		return err;
	}
	rc->mp->owns_dev = 1;
	rc->from_secondary = 1;
	secondary_sb_fixup(rc->mp);
	report(rc, PR_SB_PRIMARY_BAD, "superblock", 0, 0, 0, "primary",
	       "%s", line);
	return 0;
}

/* Check passes before giving up on reaching a clean filesystem. */
#define REPAIR_MAX_PASSES	8

/*
 * The repair: check, apply what the check planned, and check again,
 * until a pass finds nothing, or finds only what no fix covers, or the
 * pass budget is spent.  Inode-level fixes go first; the AG rebuild runs
 * in a pass that planned no inode fix, so that what it is fed is the
 * final state of every inode.  Everything written goes through the
 * buffer cache and the undo file; a failed write stops the run with the
 * blocks written so far each complete and consistent on its own.
 *
 * Returns the exit status; *found gets the findings of the first pass.
 */
static int
repair_run(struct repair_ctx *rc, unsigned long *found)
{
	/* A bad primary was reported when the handle was opened. */
	unsigned long first = 0, last = 0, pre = rc->nproblems;
	int err = 0;

	for (rc->pass = 1; rc->pass <= REPAIR_MAX_PASSES; rc->pass++) {
		unsigned long before = rc->nproblems, applied = 0;
		int kept;

		memset(rc->counts, 0, sizeof(rc->counts));
		if (rc->pass > 1)
			info(rc, "Pass %d - checking again after the "
			     "repairs...\n", rc->pass);
		kept = rc->keep != NULL;
		err = repair_scan(rc);
		last = rc->nproblems - before;
		if (rc->pass == 1)
			first = last + pre;
		if (kept) {
			keep_free(rc);
			/* Plan only from a full scan: go round again. */
			if (!err && last) {
				repair_scan_free(rc);
				continue;
			}
		}
		if (err || (last == 0 && !rc->from_secondary)) {
			repair_scan_free(rc);
			break;
		}
		err = apply_fixes(rc, &applied);
		if (!err && !applied && (need_rebuild(rc) || rc->ndirfix)) {
			/* The confirming pass may reuse this inode scan. */
			if (keep_allowed(rc))
				(void)keep_take(rc);	/* optional */
			err = rebuild_ags(rc, &applied);
			if (err || !applied)
				keep_free(rc);
		}
		repair_scan_free(rc);
		if (err || !applied)
			break;
	}
	keep_free(rc);
	*found = first;
	if (err)
		return err;
	if (last) {
		info(rc, "%lu problem%s could not be repaired.\n", last,
		     last == 1 ? "" : "s");
		return REPAIR_EXIT_CORRUPT;
	}
	if (first)
		info(rc, "All %lu problem%s found were repaired.\n", first,
		     first == 1 ? "" : "s");
	return first && rc->exit_fixed ? REPAIR_EXIT_FIXED : REPAIR_EXIT_CLEAN;
}

int
main(int argc, char **argv)
{
	struct repair_ctx rc = { .out = stdout };
	struct xk_fail f;
	int opt, err;

	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "direct", no_argument, NULL, 'D' },
		{ "spill-dir", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int no_progress = 0, status;
	unsigned long found;
	const char *undo_path = NULL;
	struct xk_undo *undo = NULL;

	while ((opt = getopt_long(argc, argv, "nvVhPt:Lez:m:", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'e':
			rc.exit_fixed = 1;
			break;
		case 'J':
			rc.json = 1;
			break;
		case 'D':
			rc.direct = 1;
			break;
		case 'S':
			rc.spill_dir = optarg;
			break;
		case 'm': {
			char *end;
			unsigned long long m = strtoull(optarg, &end, 10);

			if (*end || m < 1 || m > (1ULL << 40)) {
				fprintf(stderr, "xfskit-repair: -m takes a "
					"size in MiB, not "
					"'%s'\n", optarg);
				return REPAIR_EXIT_USAGE;
			}
			rc.mem_cap_mb = m;
			break;
		}
		case 'P':
			no_progress = 1;
			break;
		case 'L':
			rc.zero_log = 1;
			break;
		case 'z':
			undo_path = optarg;
			break;
		case 't': {
			char *end;
			unsigned long t = strtoul(optarg, &end, 10);

			if (*end || t < 1 || t > 256) {
				fprintf(stderr, "xfskit-repair: -t takes a "
					"thread count from 1 to 256, not "
					"'%s'\n", optarg);
				return REPAIR_EXIT_USAGE;
			}
			rc.threads = (unsigned int)t;
			break;
		}
		case 'n':
			rc.no_modify = 1;
			break;
		case 'v':
			rc.verbose++;
			break;
		case 'V':
			printf("xfskit-repair version %s\n", xk_version());
			return REPAIR_EXIT_CLEAN;
		case 'h':
			usage(stdout);
			return REPAIR_EXIT_CLEAN;
		default:
			usage(stderr);
			return REPAIR_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "xfskit-repair: %s\n", optind >= argc ?
			"no device given" : "more than one device given");
		usage(stderr);
		return REPAIR_EXIT_USAGE;
	}
	rc.device = argv[optind];
	if (!rc.threads) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		rc.threads = cpus > 0 ? (unsigned int)cpus : 1;
	}
	rc.progress = !no_progress && !rc.json && isatty(STDERR_FILENO);
	if (rc.json)
		rc.verbose = 0;
	if (rc.no_modify && (rc.zero_log || undo_path)) {
		fprintf(stderr, "xfskit-repair: -n writes nothing, so -L and "
			"-z do not go with it\n");
		return REPAIR_EXIT_USAGE;
	}

	if (rc.json)
		json_begin(&rc);
	{
		char msg[600];

		if (guard_mounted(&rc, msg, sizeof(msg)))
			return operational_error(&rc, msg);
	}
	status = guard_unsupported(&rc);
	if (status)
		return status;
	err = xk_mount_open(rc.device, (rc.no_modify ? XK_MOUNT_RDONLY : 0) |
			    (rc.direct ? XK_MOUNT_DIRECT : 0), &rc.mp, &f);
	if (err == XK_ECORRUPT || err == XK_ENOTXFS) {
		char msg[640];

		err = open_from_secondary(&rc, err, &f, msg, sizeof(msg));
		if (err)
			return operational_error(&rc, msg);
	} else if (err) {
		char line[512];

		xk_open_error_format(err, &f, line, sizeof(line));
		return operational_error(&rc, line);
	}

	if (undo_path) {
		err = xk_undo_create(rc.mp->dev, undo_path, &undo);
		if (err) {
			char msg[600];

			snprintf(msg, sizeof(msg), "cannot start the undo file "
				 "%s: %s", undo_path, xk_strerror(err));
			xk_mount_close(rc.mp);
			return operational_error(&rc, msg);
		}
		info(&rc, "Recording overwritten blocks in %s.\n", undo_path);
	}
	err = phase_log(&rc);
	/* Not the log's fault when the undo file failed under it. */
	if (err && xk_undo_error(undo))
		return stop_run(&rc, undo, undo_path, err);
	if (err) {
		xk_undo_finish(undo);
		xk_mount_close(rc.mp);
		if (rc.json)
			fprintf(rc.out, "],\n  \"error\": \"dirty log\",\n  "
				"\"exit_status\": %d\n}\n", err);
		return err;
	}
	if (repair_memory_check(&rc)) {
		xk_undo_finish(undo);
		xk_mount_close(rc.mp);
		if (rc.json)
			fprintf(rc.out, "],\n  \"error\": \"memory cap\",\n  "
				"\"exit_status\": %d\n}\n", REPAIR_EXIT_ERROR);
		return REPAIR_EXIT_ERROR;
	}
	if (rc.no_modify) {
		err = repair_check(&rc);
		status = rc.nproblems ? REPAIR_EXIT_CORRUPT :
			 REPAIR_EXIT_CLEAN;
		found = rc.nproblems;
	} else if (rc.mp->g.has_parent) {
		/*
		 * Every repair that rewrites a directory or moves a file
		 * would have to rewrite parent pointers too, which is not
		 * done: with parent pointers, check only and change nothing.
		 */
		rc.no_modify = 1;
		err = repair_check(&rc);
		found = rc.nproblems;
		status = found ? REPAIR_EXIT_CORRUPT : REPAIR_EXIT_CLEAN;
		if (!err && found)
			info(&rc, "This filesystem has parent pointers, which "
			     "xfskit-repair cannot keep in step with its "
			     "repairs: nothing was repaired.\n");
	} else {
		status = repair_run(&rc, &found);
		err = status < 0 ? status : 0;
	}
	repair_memory_done(&rc);
	status = guard_unchecked(&rc, status);
	if (err)
		return stop_run(&rc, undo, undo_path, err);
	err = xk_mount_close(rc.mp);
	rc.mp = NULL;
	if (err)
		return stop_run(&rc, undo, undo_path, err);
	err = xk_undo_finish(undo);
	if (err)
		return operational_error(&rc, xk_strerror(err));
	if (rc.progress)
		fprintf(stderr, "\r\033[K");
	if (rc.json) {
		json_end(&rc, status);
	} else if (rc.no_modify && found) {
		fprintf(rc.out, "%lu problem%s found.\n", found,
			found == 1 ? "" : "s");
	} else if (!found && rc.verbose && !rc.nunsup) {
		fprintf(rc.out, "No problems found.\n");
	}
	return status;
}
