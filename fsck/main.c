// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsck.xfskit: check and repair an XFS v5 filesystem with fsck(8)'s
 * command line and exit codes, for boot scripts, systemd-fsck and the
 * initramfs.  The checking itself is xfskit-repair's: this program runs
 * it and maps what it finds onto fsck(8)'s conventions.
 *
 * A run, in order:
 *   1. parse the options (fsck(8)'s, e2fsck's common ones); find the
 *      external log and realtime devices in fstab (fstab.c);
 *   2. refuse a mounted filesystem unless the mode allows it
 *      (see man/fsck.xfskit.8, "MOUNTED FILESYSTEMS");
 *   3. replay a dirty log (modes that may write) through libfs;
 *   4. check with `xfskit-repair -n --json` and classify each finding;
 *   5. when the mode allows the fix (-y: any; -p: only findings the
 *      checker marks safe to preen), run `xfskit-repair`, then check
 *      again: clean means corrected, anything left means uncorrected.
 * The decision is taken on the re-check, never on the exit code of the
 * repair run, so it holds whatever that program fixes or does not yet.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xfskit/errors.h>
#include <xfskit/libfs.h>
#include <xfskit/logv.h>
#include <xfskit/mount.h>

#include "fsck.h"

/* XK_REPAIR_NAME (as installed, renamed like us), XK_SBINDIR */
#include "fsck-names.h"

enum fsck_mode {
	MODE_CHECK,	/* -n, or no mode option: write nothing */
	MODE_PREEN,	/* -p, -a: replay the log, fix safe findings only */
	MODE_YES,	/* -y: replay the log, fix everything */
};

struct fsck_ctx {
	enum fsck_mode	mode;
	int		verbose;
	const char	*device;
	/* External log and realtime devices: options, else fstab.c's. */
	struct fsck_devs devs;
	int		devs_given;
	char		repair[PATH_MAX];
	struct fsck_progress progress;	/* -C */
};

static volatile sig_atomic_t cancelled;

static void
on_signal(int sig)
{
	(void)sig;
	cancelled = 1;
}

static void
usage(FILE *to)
{
	fprintf(to,
"Usage: fsck.xfskit [-p|-a|-n|-y] [-f] [-v] [-C FD] [-t TYPE] [-T] [-M]\n"
"                   [--logdev=LOGDEV] [--rtdev=RTDEV] DEVICE\n"
"       fsck.xfskit -V\n"
"  -p, -a  preen: replay a dirty log, fix only safe findings (counters,\n"
"          secondary superblocks); anything else is left (exit 4)\n"
"  -n      check only; open the device read-only and write nothing\n"
"  -y      replay a dirty log and repair everything xfskit-repair can\n"
"  -f      force a check (xfskit always checks; accepted for fsck(8))\n"
"  -v      verbose: show the checker's commands\n"
"  -C FD   progress lines (phase done total device) to FD, as e2fsck;\n"
"          -C 0: a completion bar on standard output\n"
"  -t, -T, -M, -l, -s, -r  options of fsck(8) itself; ignored\n"
"  --logdev=LOGDEV, --rtdev=RTDEV  the external log and realtime devices;\n"
"          without either, the logdev= and rtdev= options of DEVICE's\n"
"          entry in /etc/fstab ($LIBMOUNT_FSTAB) or of rootflags=\n"
"  -V      print the version and exit\n"
"  -h, --help  this help\n"
"Exit status (fsck(8)): 0 clean, 1 errors corrected,\n"
"4 errors left uncorrected, 8 operational error, 16 usage error,\n"
"32 cancelled.\n");
}

/* The xfskit-repair to run: $XK_REPAIR, beside us, or in sbindir. */
static int
find_repair(struct fsck_ctx *fc)
{
	const char *env = getenv("XK_REPAIR");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(fc->repair, sizeof(fc->repair), "%s", env);
		return access(fc->repair, X_OK);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(fc->repair, sizeof(fc->repair),
					     "%s/%s", self, XK_REPAIR_NAME) <
			    sizeof(fc->repair) &&
			    !access(fc->repair, X_OK))
				return 0;
		}
	}
	snprintf(fc->repair, sizeof(fc->repair), "%s/%s", XK_SBINDIR,
		 XK_REPAIR_NAME);
	return access(fc->repair, X_OK);
}

/*
 * Run the checker with argv; with out != NULL its standard output is
 * collected there (malloc'ed, NUL-terminated).  Returns its exit status,
 * 128 + signal when it was killed, or -1 when it could not be run.
 */
static int
run(struct fsck_ctx *fc, const char *const *args, char **out, size_t *outlen)
{
	int pipefd[2] = { -1, -1 }, status;
	size_t len = 0, cap = 0, n = 0;
	const char *argv[16];
	char *buf = NULL;
	pid_t pid;

	/* The checker, -C's option, then the arguments given. */
	if (fsck_progress_start(&fc->progress))
		return -1;
	argv[n++] = args[0];
	if (fsck_progress_arg(&fc->progress))
		argv[n++] = fsck_progress_arg(&fc->progress);
	for (size_t i = 1; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;

	if (fc->verbose) {
		const char *const *a;

		fprintf(stderr, "fsck.xfskit: running");
		for (a = argv; *a; a++)
			fprintf(stderr, " %s", *a);
		fprintf(stderr, "\n");
	}
	if (out && pipe(pipefd)) {
		fsck_progress_stop(&fc->progress);
		return -1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		if (out) {
			close(pipefd[0]);
			close(pipefd[1]);
		}
		fsck_progress_stop(&fc->progress);
		return -1;
	}
	if (pid == 0) {
		if (out) {
			dup2(pipefd[1], STDOUT_FILENO);
			close(pipefd[0]);
			close(pipefd[1]);
		}
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "fsck.xfskit: cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	if (out) {
		close(pipefd[1]);
		for (;;) {
			ssize_t n;

			if (len + 4096 + 1 > cap) {
				char *nb = realloc(buf, cap + 65536);

				if (!nb)
					break;
				buf = nb;
				cap += 65536;
			}
			n = read(pipefd[0], buf + len, cap - len - 1);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			len += (size_t)n;
		}
		close(pipefd[0]);
		if (buf)
			buf[len] = '\0';
		*out = buf;
		*outlen = len;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fsck_progress_stop(&fc->progress);
			return -1;
		}
	}
	fsck_progress_stop(&fc->progress);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/*
 * The safe class (man page, "PREEN") is the checker's to define: its
 * problem table marks each kind of finding (doc/json.md), and a finding
 * is preened only when the report says it is safe to preen, fixable and
 * not destructive.  A report without the flags is never preened.
 */
static int
finding_is_safe(const struct fsck_finding *fd)
{
	return (fd->flags & FSCK_FLAG_PREEN) &&
	       (fd->flags & FSCK_FLAG_FIXABLE) &&
	       !(fd->flags & FSCK_FLAG_DESTRUCTIVE);
}

static int
finding_is_log(const struct fsck_finding *fd)
{
	return fd->code[0] ? !strcmp(fd->code, "log_dirty") :
	       !strcmp(fd->structure, "log");
}

/*
 * argv[] from its first free slot on: -l LOGDEV, -r RTDEV when known, the
 * device and the terminating NULL (7 slots at most).
 */
static void
devs_args(const struct fsck_ctx *fc, const char **argv)
{
	size_t n = 0;

	if (fc->devs.logdev[0]) {
		argv[n++] = "-l";
		argv[n++] = fc->devs.logdev;
	}
	if (fc->devs.rtdev[0]) {
		argv[n++] = "-r";
		argv[n++] = fc->devs.rtdev;
	}
	argv[n++] = fc->device;
	argv[n] = NULL;
}

struct check_result {
	int	status;		/* fsck code, or -1: the check ran */
	size_t	nfindings;	/* without a replayable dirty log */
	int	all_safe;
	int	log_dirty;
};

/*
 * Step 4: `xfskit-repair -n --json`, parsed; each finding is printed.
 * A dirty log that replay can handle is not counted when
 * log_replayable: a mount (or -p) replays it, as the kernel would.
 */
static void
check(struct fsck_ctx *fc, int log_replayable, struct check_result *cr)
{
	const char *argv[12] = { fc->repair, "-n", "--no-progress", "--json" };
	struct fsck_report *r;
	char *out = NULL;
	size_t len = 0, i;
	int st;

	memset(cr, 0, sizeof(*cr));
	cr->status = -1;
	cr->all_safe = 1;
	devs_args(fc, argv + 4);
	st = run(fc, argv, &out, &len);
	if (cancelled || st == 128 + SIGINT || st == 128 + SIGTERM ||
	    st == 128 + SIGHUP) {
		cr->status = FSCK_CANCELLED;
		goto out;
	}
	r = calloc(1, sizeof(*r));
	if (!r || st < 0 || !out ||
	    fsck_parse_report(out, len, r)) {
		fprintf(stderr, "fsck.xfskit: %s: the checker %s (status "
			"%d)\n", fc->device, st < 0 || st >= 126 ?
			"could not run" : "gave no report we understand", st);
		cr->status = FSCK_ERROR;
		free(r);
		goto out;
	}
	if (r->has_error) {
		/* The checker stopped: it could not open or read the fs. */
		fprintf(stderr, "fsck.xfskit: %s: %s\n", fc->device,
			r->error);
		cr->status = FSCK_ERROR;
		if (!strcmp(r->error, "dirty log"))
			cr->status = FSCK_UNCORRECTED;
		free(r);
		goto out;
	}
	for (i = 0; i < r->nfindings && i < FSCK_MAX_FINDINGS; i++) {
		const struct fsck_finding *fd = &r->findings[i];

		if (finding_is_log(fd)) {
			cr->log_dirty = 1;
			if (log_replayable)
				continue;
		}
		cr->nfindings++;
		if (!finding_is_safe(fd))
			cr->all_safe = 0;
		printf("%s: %s: %s\n", fc->device, fd->problem, fd->message);
	}
	if (r->nfindings > FSCK_MAX_FINDINGS) {
		cr->nfindings += r->nfindings - FSCK_MAX_FINDINGS;
		cr->all_safe = 0;
		printf("%s: %zu more findings not shown\n", fc->device,
		       r->nfindings - FSCK_MAX_FINDINGS);
	}
	/* A report whose count disagrees with its list is not trusted. */
	if (r->problem_count >= 0 &&
	    (size_t)r->problem_count != r->nfindings) {
		fprintf(stderr, "fsck.xfskit: %s: the checker's report is "
			"inconsistent\n", fc->device);
		cr->status = FSCK_ERROR;
	}
	free(r);
out:
	free(out);
}

/*
 * Step 3.  Returns 0 (clean, replayed, or nothing we can do here: the
 * check will say), 1 when the log is dirty and cannot be replayed
 * offline, or -1 with a message on an I/O error.  With dry_run nothing
 * is written: it only finds out whether replay is possible.
 */
static int
replay_log(struct fsck_ctx *fc, int dry_run)
{
	struct xk_log_report rep;
	struct xk_mount *mp;
	struct xk_fail f;
	int err, cerr;

	err = xk_mount_open(fc->device, dry_run ? XK_MOUNT_RDONLY : 0, &mp,
			    &f);
	if (err)
		return 0;	/* a bad superblock: the check reports it */
	/* A device that is not this filesystem's is refused, unwritten. */
	if ((fc->devs.logdev[0] &&
	     (err = xk_mount_open_logdev(mp, fc->devs.logdev, &f))) ||
	    (fc->devs.rtdev[0] &&
	     (err = xk_mount_open_rtdev(mp, fc->devs.rtdev, &f)))) {
		char line[512];

		xk_open_error_format(err, &f, line, sizeof(line));
		xk_mount_discard(mp);
		fprintf(stderr, "fsck.xfskit: %s: %s\n", fc->device, line);
		if (!fc->devs_given)
			fprintf(stderr, "fsck.xfskit: %s: the devices were "
				"named in %s\n", fc->device, fc->devs.source);
		fprintf(stderr, "fsck.xfskit: %s: nothing was checked or "
			"written\n", fc->device);
		return -1;
	}
	memset(&rep, 0, sizeof(rep));
	err = xk_log_recover(mp, dry_run ? XK_LOG_DRYRUN : 0, 0, &rep);
	cerr = xk_mount_close(mp);
	if (err == XK_EUNSUPP || (err && !rep.state.clean && rep.msg[0])) {
		printf("%s: the log is dirty and cannot be replayed offline: "
		       "%s\n", fc->device, rep.msg[0] ? rep.msg :
		       xk_strerror(err));
		return 1;
	}
	if (err || cerr) {
		fprintf(stderr, "fsck.xfskit: %s: log replay failed: %s\n",
			fc->device, xk_strerror(err ? err : cerr));
		return -1;
	}
	if (!dry_run && rep.replayed)
		printf("%s: replayed the log: %u transactions, %llu blocks "
		       "written\n", fc->device, rep.transactions,
		       (unsigned long long)rep.blocks_written);
	return 0;
}

static int
parse_args(struct fsck_ctx *fc, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "logdev", required_argument, NULL, 'L' },
		{ "rtdev", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, preen = 0, yes = 0, no = 0;

	/* '+': options stop at the device, as fsck(8) passes them. */
	while ((opt = getopt_long(argc, argv, "+apnyfvVC:t:TMlsrh", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'a':
		case 'p':
			preen = 1;
			break;
		case 'n':
			no = 1;
			break;
		case 'y':
			yes = 1;
			break;
		case 'C': {
			char *end;
			long fd = strtol(optarg, &end, 10);

			if (!*optarg || *end || fd < 0 || fd > 65535) {
				fprintf(stderr, "fsck.xfskit: -C takes a file "
					"descriptor (0 for a bar), not '%s'\n",
					optarg);
				return -1;
			}
			fc->progress.fd = (int)fd;
			break;
		}
		case 'f':
		case 't':
		case 'T':
		case 'M':
		case 'l':
		case 's':
		case 'r':
			break;
		case 'v':
			fc->verbose = 1;
			break;
		case 'L':
		case 'R':
			snprintf(opt == 'L' ? fc->devs.logdev : fc->devs.rtdev,
				 sizeof(fc->devs.logdev), "%s", optarg);
			fc->devs_given = 1;
			break;
		case 'V':
			printf("fsck.xfskit version %s\n", xk_version());
			exit(FSCK_OK);
		case 'h':
			usage(stdout);
			exit(FSCK_OK);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (preen + yes + no > 1) {
		fprintf(stderr, "fsck.xfskit: only one of -p/-a, -n and -y "
			"may be given\n");
		return -1;
	}
	fc->mode = preen ? MODE_PREEN : yes ? MODE_YES : MODE_CHECK;
	if (optind != argc - 1) {
		fprintf(stderr, "fsck.xfskit: %s\n", optind >= argc ?
			"no device given" : "more than one device given");
		usage(stderr);
		return -1;
	}
	fc->device = argv[optind];
	return 0;
}

/* Step 2: may this mode run on the device as it is mounted? */
static int
mounted_check(struct fsck_ctx *fc)
{
	struct xk_mounted ms;

	if (xk_mounted_state(fc->device, &ms)) {
		fprintf(stderr, "fsck.xfskit: %s: warning: cannot read "
			"/proc/self/mountinfo; assuming it is not mounted\n",
			fc->device);
		return 0;
	}
	if (!ms.mounted)
		return 0;
	if (!ms.readonly) {
		fprintf(stderr, "fsck.xfskit: %s is mounted read-write on %s; "
			"cannot check it\n", fc->device, ms.where);
		return -1;
	}
	if (fc->mode == MODE_CHECK) {
		fprintf(stderr, "fsck.xfskit: %s: warning: mounted read-only "
			"on %s; checking the blocks on disk\n", fc->device,
			ms.where);
		return 0;
	}
	if (ms.is_root) {
		/*
		 * The boot case: / is still read-only.  Nothing writes under
		 * a mounted filesystem (the device layer refuses it), so it
		 * is checked only; a repair is for the initramfs or a rescue
		 * system, before the mount.
		 */
		fprintf(stderr, "fsck.xfskit: %s: mounted read-only on %s; "
			"checking only, nothing will be written (repair it "
			"before it is mounted)\n", fc->device, ms.where);
		fc->mode = MODE_CHECK;
		return 0;
	}
	fprintf(stderr, "fsck.xfskit: %s is mounted on %s; unmount it to "
		"repair it (or use -n)\n", fc->device, ms.where);
	return -1;
}

/*
 * Parts xfskit does not support are neither checked nor written (no log
 * replay either): the filesystem is not called clean, in any mode.
 */
static int
unsupported_check(struct fsck_ctx *fc)
{
	struct xk_unsupported un[XK_UNSUPPORTED_MAX];
	unsigned int have = (fc->devs.logdev[0] ? XK_UNSUP_LOGDEV : 0) |
			    (fc->devs.rtdev[0] ? XK_UNSUP_RTDEV : 0);
	int n = xk_unsupported_probe(fc->device, have, un, XK_UNSUPPORTED_MAX);
	int opens = 0;

	for (int i = 0; i < n; i++) {
		printf("%s: %s was not checked: %s\n", fc->device,
		       un[i].what, un[i].why);
		opens |= un[i].blocks_open;
	}
	if (n > 0)
		printf("%s: nothing was checked or written%s\n", fc->device,
		       opens ? "" : " (xfskit-repair -n checks the rest)");
	for (int i = 0; i < n; i++)
		if (!strcmp(un[i].code, "external_log") ||
		    !strcmp(un[i].code, "realtime")) {
			printf("%s: name the device with --logdev=/--rtdev= "
			       "or in the fstab entry's logdev=/rtdev= "
			       "options\n", fc->device);
			break;
		}
	return n > 0;
}

int
main(int argc, char **argv)
{
	struct fsck_ctx fc = { .mode = MODE_CHECK, .progress.fd = -1 };
	struct check_result cr;
	struct sigaction sa;
	struct stat st;
	int log_state, code;

	if (parse_args(&fc, argc, argv))
		return FSCK_USAGE;
	fc.progress.device = fc.device;
	if (fc.progress.fd > 0 && fcntl(fc.progress.fd, F_GETFD) < 0) {
		fprintf(stderr, "fsck.xfskit: -C %d: not an open file "
			"descriptor\n", fc.progress.fd);
		return FSCK_USAGE;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (stat(fc.device, &st)) {
		fprintf(stderr, "fsck.xfskit: %s: %s\n", fc.device,
			strerror(errno));
		return FSCK_ERROR;
	}
	if (!fc.devs_given && fsck_find_devices(fc.device, &fc.devs))
		fprintf(stderr, "fsck.xfskit: %s: warning: cannot read %s; "
			"no external log or realtime device known\n",
			fc.device, fc.devs.source);
	if (fc.verbose && (fc.devs.logdev[0] || fc.devs.rtdev[0]))
		printf("%s: external log %s, realtime device %s (%s)\n",
		       fc.device, fc.devs.logdev[0] ? fc.devs.logdev : "none",
		       fc.devs.rtdev[0] ? fc.devs.rtdev : "none",
		       fc.devs_given ? "given" : fc.devs.source);
	if (find_repair(&fc)) {
		fprintf(stderr, "fsck.xfskit: cannot find %s (looked for %s; "
			"set XK_REPAIR to its path)\n", XK_REPAIR_NAME,
			fc.repair);
		return FSCK_ERROR;
	}
	if (mounted_check(&fc))
		return FSCK_ERROR;
	if (unsupported_check(&fc))
		return FSCK_UNCORRECTED;

	/* Step 3: the log, as a mount would replay it. */
	log_state = replay_log(&fc, fc.mode == MODE_CHECK);
	if (log_state < 0)
		return FSCK_ERROR;
	if (cancelled)
		return FSCK_CANCELLED;

	/* Step 4. */
	check(&fc, log_state == 0, &cr);
	if (cr.status >= 0)
		return cr.status;
	if (!cr.nfindings) {
		if (cr.log_dirty && fc.mode == MODE_CHECK)
			printf("%s: the log is dirty; a mount or fsck -p will "
			       "replay it, and the filesystem is otherwise "
			       "clean\n", fc.device);
		else if (fc.verbose)
			printf("%s: clean\n", fc.device);
		return FSCK_OK;
	}
	if (fc.mode == MODE_CHECK || log_state == 1) {
		if (fc.mode != MODE_CHECK)
			printf("%s: mount and unmount the filesystem to replay "
			       "its log, then run fsck again\n", fc.device);
		return FSCK_UNCORRECTED;
	}
	if (fc.mode == MODE_PREEN && !cr.all_safe) {
		printf("%s: UNEXPECTED INCONSISTENCY; run fsck.xfskit -y "
		       "(or xfskit-repair) manually\n", fc.device);
		return FSCK_UNCORRECTED;
	}

	/*
	 * Step 5: fix, then believe only the re-check.  A device the repair
	 * cannot open for writing is an operational error (8), not findings
	 * left uncorrected (4): nothing was tried.
	 */
	{
		int fd = open(fc.device, O_RDWR |
			      (S_ISBLK(st.st_mode) ? O_EXCL : 0));

		if (fd < 0) {
			fprintf(stderr, "fsck.xfskit: %s: cannot open it for "
				"writing: %s; nothing was repaired\n",
				fc.device, strerror(errno));
			return FSCK_ERROR;
		}
		close(fd);
	}
	{
		/* What it changes, in its own report. */
		const char *rargv[10] = { fc.repair, "--no-progress",
					  "--report" };
		int st2;

		devs_args(&fc, rargv + 3);
		st2 = run(&fc, rargv, NULL, NULL);

		if (cancelled || st2 == 128 + SIGINT ||
		    st2 == 128 + SIGTERM || st2 == 128 + SIGHUP)
			return FSCK_CANCELLED;
		if (st2 < 0 || st2 >= 126) {
			fprintf(stderr, "fsck.xfskit: %s: the repair run "
				"failed (status %d)\n", fc.device, st2);
			return FSCK_ERROR;
		}
	}
	printf("%s: checking again after repair\n", fc.device);
	check(&fc, 0, &cr);
	if (cr.status >= 0)
		code = cr.status;
	else
		code = cr.nfindings ? FSCK_UNCORRECTED : FSCK_CORRECTED;
	return code;
}
