// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-db: inspect and edit an XFS v5 filesystem image.
 *
 * Usage: xfskit-db [-r] [-x] [-f] [-F] [-i] [-j] [-p prompt] [-c cmd]...
 *        image
 * Opens the image (read-only with -r: the device itself then refuses
 * writes), runs each -c command in order, or else reads commands from
 * the terminal (readline) or from a pipe.  The exit status is 0 when
 * every command succeeded, 1 when one failed or for a usage error (as
 * xfs_db), 2 when the image could not be opened.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"

/* readline's completion callback has no user pointer; see input.c. */
struct db_ctx *db_completion_ctx;

/*
 * A mounted filesystem is shown read-only, with a warning, and never
 * opened for -x writes; parts xfskit does not support are named.
 * Returns 0 to go on.
 */
static int
open_checks(struct db_ctx *ctx)
{
	struct xk_unsupported un[XK_UNSUPPORTED_MAX];
	struct xk_mounted ms;
	char where[400];
	int n;

	if (!xk_mounted_state(ctx->image, &ms) && ms.mounted) {
		xk_mounted_describe(&ms, where, sizeof(where));
		if (ctx->expert) {
			fprintf(stderr, "xfskit-db: %s is %s; -x would write "
				"under it: unmount it first\n", ctx->image,
				where);
			return 2;
		}
		fprintf(stderr, "xfskit-db: warning: %s is %s; opening it "
			"read-only, and what is shown may lag behind the "
			"mount\n", ctx->image, where);
		ctx->readonly = 1;
	}
	n = xk_unsupported_probe(ctx->image,
				 (ctx->logdev ? XK_UNSUP_LOGDEV : 0) |
				 (ctx->rtdev ? XK_UNSUP_RTDEV : 0),
				 un, XK_UNSUPPORTED_MAX);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "xfskit-db: warning: %s: %s is not "
			"supported: %s\n", ctx->image, un[i].what, un[i].why);
	return 0;
}

/* Attach a device beside the data device (-l, -R); 0 or an error said. */
static int
attach_dev(struct db_ctx *ctx, const char *path,
	   int (*open_dev)(struct xk_mount *, const char *, struct xk_fail *))
{
	struct xk_fail f;
	char msg[400];
	int err = open_dev(ctx->mp, path, &f);

	if (!err)
		return 0;
	xk_open_error_format(err, &f, msg, sizeof(msg));
	fprintf(stderr, "xfskit-db: %s: %s\n", ctx->image, msg);
	return err;
}

static void
usage(FILE *fp)
{
	fprintf(fp,
"Usage: xfskit-db [-r] [-x] [-f] [-F] [-i] [-j] [-l logdev] [-R rtdev]\n"
"                 [-p prompt] [-c cmd]... image\n"
"       xfskit-db -V\n"
"  -c cmd     run cmd, then the next -c; exit after the last\n"
"  -r         open read-only: nothing can be written\n"
"  -x         expert mode: allow write, fuzz and blocktrash\n"
"  -f         the target is a file (accepted; images always work)\n"
"  -F         accepted for xfs_db (xfskit-db opens only v5 XFS)\n"
"  -i         accepted for xfs_db (a mounted filesystem is opened\n"
"             read-only with a warning in any case)\n"
"  -j         one JSON object per command instead of text\n"
"  -l logdev  the external log's device (mkfs.xfs -l logdev=); it must\n"
"             hold this filesystem's log (its records' UUID)\n"
"  -R rtdev   the realtime device (mkfs.xfs -r rtdev=); it must hold\n"
"             the superblock's rblocks blocks\n"
"  -p prompt  the interactive prompt\n"
"  -V         print the version and exit\n"
"  -h, --help  this help\n"
"Exit status: 0 every command succeeded, 1 a command failed or a usage\n"
"error, 2 the image could not be opened.\n");
}

int
main(int argc, char **argv)
{
	struct db_ctx ctx;
	struct xk_fail f;
	const char **cmds;
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ncmds = 0, opt, status = 0, err;
	unsigned int flags = 0;

	memset(&ctx, 0, sizeof(ctx));
	ctx.prompt = "xfskit-db";
	ctx.out = stdout;
	cmds = calloc((size_t)argc + 1, sizeof(*cmds));
	if (!cmds)
		return 2;
	while ((opt = getopt_long(argc, argv, "c:fFhijl:p:rR:Vx", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'c':
			cmds[ncmds++] = optarg;
			break;
		case 'f':
		case 'F':
		case 'i':
			break;		/* see usage() */
		case 'j':
			ctx.json = 1;
			break;
		case 'l':
			ctx.logdev = optarg;
			break;
		case 'R':
			ctx.rtdev = optarg;
			break;
		case 'p':
			ctx.prompt = optarg;
			break;
		case 'r':
			ctx.readonly = 1;
			break;
		case 'x':
			ctx.expert = 1;
			break;
		case 'V':
			printf("xfskit-db version %s\n", xk_version());
			free(cmds);
			return 0;
		case 'h':
			usage(stdout);
			free(cmds);
			return 0;
		default:
			usage(stderr);
			free(cmds);
			return 1;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		free(cmds);
		return 1;
	}
	ctx.image = argv[optind];
	if (!ctx.readonly) {
		char why[200];

		if (xk_write_crash_check_env(why, sizeof(why))) {
			fprintf(stderr, "xfskit-db: %s\n", why);
			free(cmds);
			return 2;
		}
	}
	if (open_checks(&ctx)) {
		free(cmds);
		return 2;
	}
	if (ctx.readonly)
		flags |= XK_MOUNT_RDONLY;
	err = xk_mount_open(ctx.image, flags, &ctx.mp, &f);
	if (err) {
		char msg[400];

		xk_open_error_format(err, &f, msg, sizeof(msg));
		fprintf(stderr, "xfskit-db: %s: %s\n", ctx.image, msg);
		free(cmds);
		return 2;
	}
	if ((ctx.logdev && attach_dev(&ctx, ctx.logdev,
				      xk_mount_open_logdev)) ||
	    (ctx.rtdev && attach_dev(&ctx, ctx.rtdev, xk_mount_open_rtdev))) {
		xk_mount_discard(ctx.mp);
		free(cmds);
		return 2;
	}
	if (ncmds) {
		for (int i = 0; i < ncmds; i++) {
			if (!strcmp(cmds[i], "quit") || !strcmp(cmds[i], "q"))
				break;
			if (db_run_line(&ctx, cmds[i]))
				status = 1;
		}
	} else {
		status = db_interactive(&ctx, isatty(STDIN_FILENO) &&
					      isatty(STDOUT_FILENO));
	}
	fflush(stdout);
	err = xk_mount_close(ctx.mp);
	if (err && !ctx.readonly) {
		fprintf(stderr, "xfskit-db: writing back failed: %s\n",
			xk_strerror(err));
		status = 1;
	}
	free(ctx.buf);
	free(ctx.jfields);
	free(ctx.jlines);
	free(cmds);
	return status;
}
