// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-repair: check (and, in time, repair) an XFS v5 filesystem.
 * main() parses options, opens the image and runs the phases; the phases
 * live in their own files and report through fix_problem().
 */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "repair.h"
#include "reasm.h"

static void
usage(FILE *to)
{
	fprintf(to,
"Usage: xfskit-repair [-nLePvfd] [-z UNDO_FILE] [-t SECONDS] [-m MB]\n"
"                     [-o SUBOPT[=VALUE]] [-l LOGDEV] [-r RTDEV] [-c SUBOPT=V]\n"
"                     [--spill-dir DIR] [--direct] [--json] [--report]\n"
"                     [--no-progress]\n"
"                     DEVICE\n"
"       xfskit-repair -V\n"
"  -n      no modify: check only, open the device read-only, write nothing\n"
"  -L      zero the log (its changes are lost) instead of replaying it\n"
"  -e      exit with status 4 when corruption was found and repaired\n"
"  -z F    record every block overwritten in undo file F (see xfskit-undo)\n"
"  -v      verbose: --report, and each phase and each btree walked\n"
"  -f      DEVICE is an image file (accepted as xfs_repair does; files\n"
"          and block devices are told apart by themselves)\n"
"  -P      no readahead (xfs_repair: disable prefetching)\n"
"  -t S    print a progress line every S seconds (xfs_repair's\n"
"          reporting interval), on any output\n"
"  -o threads=N  scan inodes and replay the log with N threads\n"
"          (default: one per CPU); xfs_repair's ag_stride=N,\n"
"          phase2_threads=N, bhash=N, ihash=N and force_geometry are\n"
"          accepted and have no effect here\n"
"  -o scan=auto|always|never  when to read the whole device for the\n"
"          blocks of lost directories and the bmbt leaves of lost\n"
"          block maps (each block names its owner): auto (default)\n"
"          only when a directory or a block map is lost, always, or\n"
"          never (its children then go to /lost+found)\n"
"  -l D    the external log's device (mkfs.xfs -l logdev=D); it must\n"
"          hold this filesystem's log (its records' UUID), else nothing\n"
"          is read or written. Without it, -n checks the rest and the\n"
"          log is not checked; repairs are refused\n"
"  -r D    the realtime device (mkfs.xfs -r rtdev=D) of a classic\n"
"          realtime volume: its bitmap, summary and realtime files are\n"
"          checked and repaired; with realtime groups (metadir) the\n"
"          rt superblock, bitmaps and summaries are checked and the\n"
"          bitmaps and summaries repaired (the groups' rmap/refcount\n"
"          btrees are not read: they refuse repairs). Without it,\n"
"          -n checks the rest and the realtime volume is not\n"
"          checked; repairs are refused\n"
"  -c S=V  change a filesystem feature (xfs_repair -c): not supported\n"
"          yet, refused\n"
"  -d      xfs_repair's repair of a read-only mounted root: refused, as\n"
"          nothing writes under a mounted filesystem\n"
"  -m MB   use at most MB MiB of memory, moving the extent records and\n"
"          the inode and directory entry lists to temporary files if\n"
"          need be; refuse at once, naming the figure needed, when the\n"
"          filesystem cannot be checked in it\n"
"  --spill-dir DIR  where -m keeps those files (default $TMPDIR, else\n"
"          /var/tmp; it should be on a disk, not tmpfs)\n"
"  --direct  read and write the device with O_DIRECT (no page cache)\n"
"  --json  print one JSON document: problems, actions (every change\n"
"          made) and a summary (doc/json.md)\n"
"  --report  our own report beside xfs_repair's lines: each finding in\n"
"          our words, each change made, the checking passes, a summary\n"
"          (also XFSKIT_REPAIR_REPORT=1 in the environment)\n"
"  --no-progress  no progress line on a terminal\n"
"  --progress-fd=N  write e2fsck -C progress lines (phase done total\n"
"          device) to file descriptor N, as fsck.xfskit -C does\n"
"  -V      print the version and exit\n"
"  -h, --help  this help\n"
"Without -n, a dirty log is replayed, the filesystem checked, what is\n"
"found repaired (each change reported, with the inode's path), and the\n"
"check run again to confirm; from the first write to the last the primary\n"
"superblock is marked NEEDSREPAIR (the kernel refuses to mount a run cut\n"
"short until a repair completes).  The output is xfs_repair's, on the\n"
"same streams: its phase lines and its words for each finding where it\n"
"has them (ours where it has none) on standard error, \"No modify flag\n"
"set, skipping phase 5\" on standard output; --report adds ours.\n"
"Exit status: 0 clean or repaired (4 with -e if anything was repaired),\n"
"1 corruption found (-n) or left unrepaired, a usage error, or an\n"
"operational error (memory, I/O, a mounted filesystem: the run stopped,\n"
"see the message), 2 dirty log that must be mounted, 5 parts of the\n"
"filesystem xfskit does not support were not checked (-n, nothing else\n"
"found) or, without -n, nothing was written because of them, 128 +\n"
"signal when interrupted (stopped after the phase under way; a second\n"
"run finishes the repair, xfskit-undo reverts it).\n");
}

/*
 * Report an error that stops the check.  The exit status is 1, or 128 +
 * the signal when an interrupt stopped it.
 */
static int
operational_error(struct repair_ctx *rc, const char *msg)
{
	int status = rc->found.error == -EINTR && repair_interrupted() ?
		     128 + repair_interrupted() : REPAIR_EXIT_ERROR;

	xr_flush(rc);	/* a finding held for xfs_repair's words: said */
	fprintf(stderr, "xfskit-repair: %s: %s\n", rc->opt.device, msg);
	if (rc->opt.json) {
		/* What was changed before the error, listed all the same. */
		fprintf(rc->out, "%s]", rc->found.json_items ? "\n  " : "");
		action_json(rc);
		fprintf(rc->out, ",\n  \"error\": ");
		json_string(rc->out, msg);
		fprintf(rc->out, ",\n  \"exit_status\": %d\n}\n", status);
	}
	action_free(rc);
	return status;
}

/*
 * An operational error stopped the run: discard what is not written yet,
 * and say why, where, and what was written.  Returns the exit status.
 */
static int
run_stopped(struct repair_ctx *rc, const char *undo_path,
	    uint64_t writes_before)
{
	char msg[1300], done[700], cause[300];
	uint64_t writes;

	/*
	 * Blocks changed in the cache and not written stay unwritten after
	 * an error; after an interrupt the phase that changed them ended,
	 * so they are written (all of its work, not what the cache evicted).
	 */
	if (rc->found.error != -EINTR || xk_buf_flush(rc->mp))
		xk_buf_discard_dirty(rc->mp);
	writes = xk_mount_writes(rc->mp) - writes_before;
	if (!writes)
		snprintf(done, sizeof(done), "stopping before any change was "
			 "written");
	else if (xk_needsrepair_marked(rc->mp) && undo_path)
		snprintf(done, sizeof(done), "stopping; %llu writes were made "
			 "before it and the filesystem is marked NEEDSREPAIR "
			 "(the kernel will not mount it): run xfskit-repair "
			 "again to finish, or 'xfskit-undo %s %s' to restore "
			 "the device as it was before this run",
			 (unsigned long long)writes, undo_path, rc->opt.device);
	else if (xk_needsrepair_marked(rc->mp))
		snprintf(done, sizeof(done), "stopping; %llu writes were made "
			 "before it, each complete, and the filesystem is "
			 "marked NEEDSREPAIR (the kernel will not mount it): "
			 "run xfskit-repair again to finish",
			 (unsigned long long)writes);
	else if (undo_path)
		snprintf(done, sizeof(done), "stopping; %llu writes were made "
			 "before it: 'xfskit-undo %s %s' restores the device "
			 "as it was before this run",
			 (unsigned long long)writes, undo_path, rc->opt.device);
	else
		snprintf(done, sizeof(done), "stopping; %llu writes were made "
			 "before it, each complete: run xfskit-repair again "
			 "to finish (with -z next time to be able to undo)",
			 (unsigned long long)writes);
	snprintf(msg, sizeof(msg), "%s while %s: %s",
		 spill_error_cause(rc, rc->found.error, cause, sizeof(cause)),
		 rc->found.error_what, done);
	return operational_error(rc, msg);
}

/*
 * Close after a run that stopped: nothing more is written to the device
 * (dirty blocks were discarded), the undo file is completed so that it
 * restores what was written.  Returns status.
 */
static int
finish_stopped(struct repair_ctx *rc, struct xk_undo *undo, int status)
{
	int err;

	xr_flush(rc);
	/* Blocks changed in the cache and not written stay unwritten. */
	xk_mount_discard(rc->mp);
	rc->mp = NULL;
	err = xk_undo_finish(undo);
	if (err) {
		fprintf(stderr, "xfskit-repair: %s: the undo file could not "
			"be completed: %s\n", rc->opt.device, xk_strerror(err));
		status = REPAIR_EXIT_ERROR;
	}
	return status;
}

/*
 * Stop the run after the undo file failed, naming it: blocks not yet
 * written are dropped and the undo file is completed, so that it still
 * restores what was written.
 */
static int
stop_run(struct repair_ctx *rc, struct xk_undo *undo, const char *undo_path,
	 uint64_t writes0, int err)
{
	char msg[700];
	int uerr = xk_undo_error(undo);

	/*
	 * Reading the old contents or writing them: the undo file's step,
	 * whatever the step that then failed on it recorded.
	 */
	if (uerr)
		rc->found.error = 0;
	repair_error(rc, uerr ? uerr : err, "saving the old contents of the "
		     "device to the undo file %s", undo_path);
	if (rc->mp)
		return finish_stopped(rc, undo,
				      run_stopped(rc, undo_path, writes0));
	/* The handle is gone (its last flush failed): no count to give. */
	snprintf(msg, sizeof(msg), "%s while %s: stopping; 'xfskit-undo %s "
		 "%s' restores the device as it was before this run",
		 repair_error_cause(rc->found.error), rc->found.error_what, undo_path,
		 rc->opt.device);
	return finish_stopped(rc, undo, operational_error(rc, msg));
}

/*
 * The primary is unusable: say why, find a secondary, and check with its
 * geometry.  The bad primary is reported as a finding.  Returns 1 when
 * the run stops there (-n with xfs_repair's lines alone: xr_sb_found).
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
	err = xk_dev_open(rc->opt.device, rc->opt.no_modify ? XK_DEV_RDONLY :
			  XK_DEV_EXCL, &dev);
	if (err) {
		snprintf(errmsg, errlen, "%s", xk_strerror(err));
		return err;
	}
	/* The hint may stay zeroed: the search then goes by the device. */
	memset(&dsb, 0, sizeof(dsb));
	err = xk_dev_pread(dev, &dsb, sizeof(dsb), 0);
	if (xk_err_operational(err)) {
		snprintf(errmsg, errlen, "%s: %s", line, xk_strerror(err));
		xk_dev_close(dev);
		return err;
	}
	xk_sb_decode(&hint, &dsb);
	info(rc, "Primary superblock is bad (%s); looking for a "
	     "secondary...\n", line);
	xr_sb_search(rc, why, f);
	/* xfs_repair scans the whole device; 1 TiB bounds the search. */
	err = find_secondary_sb(dev, &hint, 1ULL << 40, &sb, &agno);
	if (err) {
		xr_msg(rc, "Sorry, could not find valid secondary superblock");
		xr_msg(rc, "Exiting now.");
		snprintf(errmsg, errlen, "%s; no good secondary superblock "
			 "found either", line);
		xk_dev_close(dev);
		return err;
	}
	info(rc, "Using the secondary superblock of AG %u.\n", agno);
	err = xk_mount_from_sb(dev, &sb, rc->opt.no_modify ? XK_MOUNT_RDONLY : 0,
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
	return xr_sb_found(rc, &sb);
}

/*
 * The repair's last write: a complete run clears the NEEDSREPAIR mark
 * once everything else is written and synced.  A run that left problems
 * keeps it (the repair did not complete).  Returns status; an error is
 * recorded (rc->found.error), the mark then stays.
 */
static int
needsrepair_end(struct repair_ctx *rc, int status)
{
	int err;

	if (status != REPAIR_EXIT_CLEAN && status != REPAIR_EXIT_FIXED) {
		if (xk_needsrepair_marked(rc->mp))
			notice(rc, "The primary superblock stays marked "
			     "NEEDSREPAIR: the kernel will not mount the "
			     "filesystem until a repair completes.\n");
		return status;
	}
	err = xk_needsrepair_clear(rc->mp);
	if (err) {
		repair_error(rc, err, "writing the repairs and clearing the "
			     "primary superblock's NEEDSREPAIR flag");
		return status;
	}
	if (rc->needsrepair_found)
		action_report(rc, ACT_NEEDSREPAIR_CLEARED, 0, -1, NULL, "%s",
			      "");
	return status;
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
	unsigned long first = 0, last = 0, pre = rc->found.nproblems;
	/* Parent pointers wait for a pass of their own (pptr.c). */
	int max_passes = REPAIR_MAX_PASSES + !!rc->mp->g.has_parent;
	int err = 0;

	for (rc->pass = 1; rc->pass <= max_passes; rc->pass++) {
		unsigned long before = rc->found.nproblems, applied = 0;
		int kept;

		memset(rc->found.counts, 0, sizeof(rc->found.counts));
		if (rc->pass > 1)
			info(rc, "Pass %d - checking again after the "
			     "repairs...\n", rc->pass);
		kept = rc->scan.keep != NULL;
		err = repair_scan(rc);
		if (!err)
			action_note_scan(rc);	/* the summary's files kept */
		last = rc->found.nproblems - before;
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
		/* A primary fixed at open still needs writing. */
		if (err || (last == 0 && !rc->from_secondary &&
			    !rc->plan.sb_primary_fix)) {
			repair_scan_free(rc);
			break;
		}
		if (rc->plan.meta_refuse && rc->plan.rtb_refuse) {
			info(rc, "The realtime groups' rmap and refcount "
			     "btrees would have to be rebuilt, which "
			     "xfskit-repair cannot do: nothing was "
			     "written.\n");
			repair_scan_free(rc);
			break;
		}
		if (rc->plan.meta_refuse) {
			info(rc, "The metadata directory tree is damaged, "
			     "which xfskit-repair cannot repair: nothing was "
			     "written.\n");
			repair_scan_free(rc);
			break;
		}
		rc->phase_what = "repairing";
		err = repair_phase_end(rc, apply_fixes(rc, &applied));
		if (!err && !applied &&
		    (need_rebuild(rc) || rc->plan.dirfix.n ||
		     rc->plan.attrfix.n || reasm_pending(rc) ||
		     rt_rebuild_pending(rc))) {
			/*
			 * The confirming pass may reuse this inode scan.
			 * Optional: without the copy (no memory for it) that
			 * pass scans the inodes again, with the same result.
			 */
			if (keep_allowed(rc) && keep_take(rc))
				keep_free(rc);
			rc->phase_what = "rebuilding the AG btrees";
			err = repair_phase_end(rc, rebuild_ags(rc, &applied));
			if (err || !applied)
				keep_free(rc);
		}
		repair_scan_free(rc);
		if (err || !applied)
			break;
	}
	keep_free(rc);
	*found = first;
	/* The first operational error is the one to report. */
	if (err && !rc->found.error)
		repair_error(rc, err, "repairing");
	if (err)
		return err;
	rc->tally.left = last;
	if (last) {
		notice(rc, "%lu problem%s could not be repaired.\n", last,
		     last == 1 ? "" : "s");
		return REPAIR_EXIT_CORRUPT;
	}
	if (first)
		info(rc, "All %lu problem%s found were repaired.\n", first,
		     first == 1 ? "" : "s");
	return first && rc->opt.exit_fixed ? REPAIR_EXIT_FIXED : REPAIR_EXIT_CLEAN;
}

/*
 * -o: xfskit's threads=N, and xfs_repair's sub-options, which tune its
 * own caches and threads and have no counterpart here.  Returns nonzero
 * (after the message) on a bad one.
 */
static int
parse_subopts(struct repair_ctx *rc, char *arg)
{
	static const char *const names[] = {
		"threads", "ag_stride", "phase2_threads", "bhash", "ihash",
		"force_geometry", "scan", NULL,
	};
	char *const *tokens = (char *const *)names;
	char *val;

	while (*arg) {
		char *at = arg;
		int i = getsubopt(&arg, tokens, &val);
		char *end;
		unsigned long n;

		if (i < 0) {
			fprintf(stderr, "xfskit-repair: -o: unknown "
				"sub-option '%s'\n", at);
			return 1;
		}
		if (i == 5) {		/* force_geometry: no value */
			if (val) {
				fprintf(stderr, "xfskit-repair: -o "
					"force_geometry takes no value\n");
				return 1;
			}
			continue;
		}
		if (i == 6) {		/* scan=auto|always|never */
			static const char *const modes[] = {
				[REPAIR_SCAN_AUTO] = "auto",
				[REPAIR_SCAN_ALWAYS] = "always",
				[REPAIR_SCAN_NEVER] = "never",
			};
			int m = 0;

			while (m < 3 && (!val || strcmp(val, modes[m])))
				m++;
			if (m == 3) {
				fprintf(stderr, "xfskit-repair: -o scan takes "
					"auto, always or never, not '%s'\n",
					val ? val : "");
				return 1;
			}
			rc->opt.scan = m;
			continue;
		}
		n = val ? strtoul(val, &end, 10) : 0;
		if (!val || !*val || *end || (i == 0 && (n < 1 || n > 256))) {
			fprintf(stderr, "xfskit-repair: -o %s takes %s, not "
				"'%s'\n", names[i], i == 0 ?
				"a thread count from 1 to 256" : "a number",
				val ? val : "");
			return 1;
		}
		if (i == 0)
			rc->opt.threads = (unsigned int)n;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct repair_ctx rc = { .out = stdout, .opt.progress_fd = -1 };
	struct xk_fail f;
	int opt, err;

	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "direct", no_argument, NULL, 'D' },
		{ "spill-dir", required_argument, NULL, 'S' },
		{ "no-progress", no_argument, NULL, 'N' },
		{ "report", no_argument, NULL, 'R' },
		{ "progress-fd", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int no_progress = 0, dangerous = 0, status;
	unsigned long found;
	const char *undo_path = NULL;
	struct xk_undo *undo = NULL;
	uint64_t writes0;
	char fault_msg[256];

	while ((opt = getopt_long(argc, argv, "nvVhPt:Lez:m:fo:l:r:c:d",
				  longopts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			rc.opt.exit_fixed = 1;
			break;
		case 'J':
			rc.opt.json = 1;
			break;
		case 'D':
			rc.opt.direct = 1;
			break;
		case 'S':
			rc.opt.spill_dir = optarg;
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
			rc.opt.mem_cap_mb = m;
			break;
		}
		case 'N':
			no_progress = 1;
			break;
		case 'F': {
			char *end;
			long fd = strtol(optarg, &end, 10);

			if (!*optarg || *end || fd < 1 || fd > 65535 ||
			    fcntl((int)fd, F_GETFD) < 0) {
				fprintf(stderr, "xfskit-repair: --progress-fd "
					"takes an open file descriptor above "
					"0, not '%s'\n", optarg);
				return REPAIR_EXIT_USAGE;
			}
			rc.opt.progress_fd = (int)fd;
			break;
		}
		case 'P':
			rc.opt.no_prefetch = 1;
			break;
		case 'f':
			break;
		case 'o':
			if (parse_subopts(&rc, optarg))
				return REPAIR_EXIT_USAGE;
			break;
		case 'l':
			rc.opt.logdev = optarg;
			break;
		case 'r':
			rc.opt.rtdev = optarg;
			break;
		case 'c':
			fprintf(stderr, "xfskit-repair: -c %s: changing "
				"filesystem features is not supported yet: "
				"nothing was read or written\n", optarg);
			return REPAIR_EXIT_USAGE;
		case 'd':
			dangerous = 1;
			break;
		case 'L':
			rc.opt.zero_log = 1;
			break;
		case 'z':
			undo_path = optarg;
			break;
		case 't': {
			char *end;
			unsigned long t = strtoul(optarg, &end, 10);

			if (*end || !*optarg || t < 1 || t > 86400) {
				fprintf(stderr, "xfskit-repair: -t takes a "
					"reporting interval in seconds (1 to "
					"86400), not '%s'; the thread count is "
					"-o threads=N\n", optarg);
				return REPAIR_EXIT_USAGE;
			}
			rc.opt.report_secs = (unsigned int)t;
			break;
		}
		case 'n':
			rc.opt.no_modify = 1;
			break;
		case 'v':
			rc.opt.verbose++;
			rc.opt.report = 1;
			break;
		case 'R':
			rc.opt.report = 1;
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
	rc.opt.device = argv[optind];
	xr_fail_after_read(&rc);
	{
		const char *r = getenv("XFSKIT_REPAIR_REPORT");

		/*
		 * A person at a terminal gets our report too (which files a
		 * repair removed or moved, by path); a script or a log reading
		 * stderr gets xfs_repair's lines alone, as fstests diffs them.
		 * XFSKIT_REPAIR_REPORT=0 or 1 decides either way; --report
		 * and -v always add it.
		 */
		if (r && *r)
			rc.opt.report |= strcmp(r, "0") != 0;
		else if (isatty(STDERR_FILENO))
			rc.opt.report = 1;
	}
	if (dangerous)
		fprintf(stderr, "xfskit-repair: -d: a mounted filesystem is "
			"still refused (nothing writes under one); "
			"unmount it, or check it with -n\n");
	if (xk_fault_check_env(fault_msg, sizeof(fault_msg))) {
		fprintf(stderr, "xfskit-repair: %s\n", fault_msg);
		return REPAIR_EXIT_USAGE;
	}
	if (!rc.opt.threads) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		rc.opt.threads = cpus > 0 ? (unsigned int)cpus : 1;
	}
	/* -v's lines show the way: no live line among them. */
	rc.opt.progress = !no_progress && !rc.opt.json && !rc.opt.verbose &&
			  isatty(STDERR_FILENO);
	/* A progress reader that quits must not kill the check. */
	if (rc.opt.progress_fd >= 0)
		signal(SIGPIPE, SIG_IGN);
	if (repair_interrupt_install(rc.opt.progress)) {
		perror("xfskit-repair: sigaction");
		return REPAIR_EXIT_ERROR;
	}
	if (rc.opt.json)
		rc.opt.verbose = 0;
	/*
	 * The report goes where xfs_repair prints its findings, on stderr:
	 * scripts (fstests among them) keep stdout for the few lines
	 * xfs_repair prints there.  --json is the one document on stdout.
	 */
	if (!rc.opt.json)
		rc.out = stderr;
	if (rc.opt.no_modify && (undo_path || rc.opt.exit_fixed)) {
		fprintf(stderr, "xfskit-repair: -n writes nothing, so %s does "
			"not go with it\n", undo_path ? "-z" : "-e");
		return REPAIR_EXIT_USAGE;
	}
	if (undo_path && rc.opt.logdev) {
		fprintf(stderr, "xfskit-repair: -z records the data device "
			"only, so the writes to the log device given with -l "
			"could not be undone: run without -z\n");
		return REPAIR_EXIT_USAGE;
	}
	/* As xfs_repair: -L with -n zeroes nothing, the log is checked. */
	if (rc.opt.no_modify && rc.opt.zero_log) {
		fprintf(stderr, "xfskit-repair: -L has no effect with -n: "
			"the log is checked, not zeroed\n");
		rc.opt.zero_log = 0;
	}

	if (rc.opt.json)
		json_begin(&rc);
	{
		char msg[600];

		if (guard_mounted(&rc, msg, sizeof(msg)))
			return operational_error(&rc, msg);
	}
	status = guard_unsupported(&rc);
	if (status)
		return status;
	xr_phase(&rc, 1);
	err = xk_mount_open(rc.opt.device, (rc.opt.no_modify ? XK_MOUNT_RDONLY : 0) |
			    (rc.opt.direct ? XK_MOUNT_DIRECT : 0), &rc.mp, &f);
	/*
	 * A version the primary alone claims is damage to the primary when
	 * a secondary is a good v5 one (a real older filesystem has none);
	 * so are unknown incompatible features the guard found to be damage
	 * (it refused any other).
	 */
	if (err == XK_ECORRUPT || err == XK_ENOTXFS ||
	    (err == XK_EUNSUPP && f.check && (!strcmp(f.check, "version") ||
	     !strcmp(f.check, "features_incompat")))) {
		char msg[640];

		err = open_from_secondary(&rc, err, &f, msg, sizeof(msg));
		if (err > 0) {
			/* As xfs_repair -n: nothing more read, exit 1. */
			xk_mount_discard(rc.mp);
			action_free(&rc);
			return REPAIR_EXIT_CORRUPT;
		}
		if (err)
			return operational_error(&rc, msg);
	} else if (err) {
		char line[512];

		xk_open_error_format(err, &f, line, sizeof(line));
		return operational_error(&rc, line);
	}

	/*
	 * Before anything reads the log: -l must be this fs's log; and the
	 * realtime volume must be there in full (-r).
	 */
	if ((rc.opt.logdev && (err = xk_mount_open_logdev(rc.mp, rc.opt.logdev,
							  &f))) ||
	    (rc.opt.rtdev && (err = xk_mount_open_rtdev(rc.mp, rc.opt.rtdev,
							&f)))) {
		char line[512];

		xk_open_error_format(err, &f, line, sizeof(line));
		xk_mount_discard(rc.mp);
		rc.mp = NULL;
		return operational_error(&rc, line);
	}
	{
		unsigned long before = rc.found.counts[PR_SB_PRIMARY_BAD];

		err = vote_primary_features(&rc);
		if (err)
			return operational_error(&rc, xk_strerror(err));
		/* Outvoted: xfs_repair's words, and -n's stop with them. */
		if (!rc.from_secondary &&
		    rc.found.counts[PR_SB_PRIMARY_BAD] > before &&
		    xr_sb_voted(&rc)) {
			xk_mount_discard(rc.mp);
			action_free(&rc);
			return REPAIR_EXIT_CORRUPT;
		}
	}
	status = guard_unsupported_voted(&rc);
	if (status)
		return finish_stopped(&rc, NULL, status);
	check_needsrepair(&rc);
	if (undo_path) {
		err = xk_undo_create(rc.mp->dev, undo_path, &undo);
		if (err) {
			char msg[600];

			snprintf(msg, sizeof(msg), "cannot start the undo file "
				 "%s: %s", undo_path, xk_strerror(err));
			return finish_stopped(&rc, NULL,
					      operational_error(&rc, msg));
		}
		info(&rc, "Recording overwritten blocks in %s.\n", undo_path);
	}
	/*
	 * From the first write of the run (the log's included) until the
	 * last, the primary is marked NEEDSREPAIR (needsrepair.h).
	 */
	if (!rc.opt.no_modify && (err = xk_needsrepair_arm(rc.mp))) {
		char msg[300];

		snprintf(msg, sizeof(msg), "%s while reading the primary "
			 "superblock: nothing was written",
			 repair_error_cause(err));
		return finish_stopped(&rc, undo, operational_error(&rc, msg));
	}
	/* Every write of this run from here, the log replay's included. */
	writes0 = xk_mount_writes(rc.mp);
	rc.phase_what = "replaying the log";
	xr_phase(&rc, 2);
	xr_step(&rc, "zero log...");
	err = phase_log(&rc);
	/*
	 * The replay decodes the primary again, a mark included: the
	 * copies written from the handle's superblock never carry it.
	 */
	rc.mp->sb.features_incompat &= ~XK_SB_FEAT_INCOMPAT_NEEDSREPAIR;
	/* Not the log's fault when the undo file failed under it. */
	if (xk_undo_error(undo))
		return stop_run(&rc, undo, undo_path, writes0, err);
	if (!err && repair_phase_end(&rc, 0))
		err = REPAIR_EXIT_ERROR;
	if (rc.found.error) {
		status = run_stopped(&rc, undo_path, writes0);
		return finish_stopped(&rc, undo, status);
	}
	if (err) {
		if (rc.opt.json) {
			fprintf(rc.out, "%s]", rc.found.json_items ? "\n  " : "");
			action_json(&rc);
			fprintf(rc.out, ",\n  \"error\": \"dirty log\",\n  "
				"\"exit_status\": %d\n}\n", err);
		}
		action_free(&rc);
		return finish_stopped(&rc, undo, err);
	}
	if (repair_memory_check(&rc)) {
		if (rc.opt.json) {
			fprintf(rc.out, "%s]", rc.found.json_items ? "\n  " : "");
			action_json(&rc);
			fprintf(rc.out, ",\n  \"error\": \"memory cap\",\n  "
				"\"exit_status\": %d\n}\n", REPAIR_EXIT_ERROR);
		}
		action_free(&rc);
		return finish_stopped(&rc, undo, REPAIR_EXIT_ERROR);
	}
	rc.pass = 1;
	if (rc.opt.no_modify) {
		err = repair_check(&rc);
		status = rc.found.nproblems ? REPAIR_EXIT_CORRUPT :
			 REPAIR_EXIT_CLEAN;
		found = rc.found.nproblems;
	} else {
		status = repair_run(&rc, &found);
		err = status < 0 ? status : 0;
	}
	/* As xfs_repair's end: a log behind the metadata's LSNs. */
	if (!err && !rc.found.error) {
		int formatted;

		err = xr_log_behind(&rc, &formatted);
		if (!err && rc.opt.no_modify && rc.found.nproblems > found) {
			found = rc.found.nproblems;
			status = REPAIR_EXIT_CORRUPT;
		} else if (!err && formatted) {
			found++;
			if (status == REPAIR_EXIT_CLEAN && rc.opt.exit_fixed)
				status = REPAIR_EXIT_FIXED;
		}
	}
	rc.found.first_problems = found;
	if (!err && action_error(&rc))
		err = action_error(&rc);
	reasm_free(&rc);
	repair_memory_done(&rc);
	status = guard_unchecked(&rc, status);
	if (xk_undo_error(undo))
		return stop_run(&rc, undo, undo_path, writes0, err);
	if (err || rc.found.error) {
		if (!rc.found.error)
			repair_error(&rc, err, "checking");
		status = run_stopped(&rc, undo_path, writes0);
		return finish_stopped(&rc, undo, status);
	}
	if (!rc.opt.no_modify) {
		status = needsrepair_end(&rc, status);
		if (rc.found.error)
			return finish_stopped(&rc, undo,
					      run_stopped(&rc, undo_path,
							  writes0));
	}
	xr_end(&rc);
	err = xk_mount_close(rc.mp);
	rc.mp = NULL;
	if (xk_undo_error(undo))
		return stop_run(&rc, undo, undo_path, writes0, err);
	if (!err)
		err = xk_undo_finish(undo);
	if (err) {
		char msg[300];

		snprintf(msg, sizeof(msg), "%s while writing the last "
			 "changes%s", repair_error_cause(err), undo_path ?
			 " and the undo file" : "");
		return operational_error(&rc, msg);
	}
	if (rc.opt.progress)
		fprintf(stderr, "\r\033[K");
	/* Test builds under XFSKIT_FAULT: the range a fault sweep covers. */
	if (xk_fault_count(XK_FAULT_ALLOC) >= 0)
		fprintf(stderr, "xfskit-repair: XFSKIT_FAULT counted alloc:%ld "
			"read:%ld write:%ld thread:%ld phase:%ld\n",
			xk_fault_count(XK_FAULT_ALLOC),
			xk_fault_count(XK_FAULT_READ),
			xk_fault_count(XK_FAULT_WRITE),
			xk_fault_count(XK_FAULT_THREAD),
			xk_fault_count(XK_FAULT_PHASE));
	xr_flush(&rc);
	if (rc.opt.json) {
		json_end(&rc, status);
	} else if (!rc.opt.report) {
		/* xfs_repair's lines alone. */
	} else if (!rc.opt.no_modify && found) {
		action_summary(&rc);
	} else if (rc.opt.no_modify && found) {
		fprintf(rc.out, "%lu problem%s found.\n", found,
			found == 1 ? "" : "s");
	} else if (!found && rc.opt.verbose && !rc.found.nunsup) {
		fprintf(rc.out, "No problems found.\n");
	}
	xr_done(&rc);
	/*
	 * Our report ends every run that completes with its verdict;
	 * xfs_repair's lines alone end with its last line, as scripts
	 * that diff them expect.
	 */
	if (rc.opt.report && !rc.opt.json)
		summary_line(&rc, status);
	action_free(&rc);
	return status;
}
