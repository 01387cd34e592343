// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-metadump: copy the metadata of an XFS v5 filesystem into a
 * metadump file, with xfs_metadump's command line.
 *
 * Usage: xfskit-metadump [-a] [-g] [-o] [-w] [-v 1|2] image file|-
 *
 * The image is opened read-only and handed to the same engine as
 * xfskit-db's metadump command (metadump.c).  Like xfs_metadump,
 * warnings about damaged metadata are printed only with -w; a summary
 * count is printed otherwise.  The exit status is 0 on success, 1 when
 * the image could not be opened or the dump not written, 2 for a usage
 * error (xfs_metadump's codes).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metadump.h"

static void
usage(FILE *fp)
{
	fprintf(fp,
"Usage: xfskit-metadump [-a] [-g] [-o] [-w] [-l logdev] [-r rtdev]\n"
"                       [-v 1|2] image file|-\n"
"       xfskit-metadump -V\n"
"  -a          copy metadata blocks whole (do not zero stale bytes)\n"
"  -g          show progress on standard error\n"
"  -o          do not obfuscate names, attribute values and symlinks\n"
"  -w          print warnings about damaged metadata\n"
"  -l logdev   the external log's device: a v2 dump carries the log\n"
"  -r rtdev    the realtime device (a classic realtime volume holds no\n"
"              metadata: only checked to be this filesystem's)\n"
"  -v 1|2      the dump format version (default 1)\n"
"  -V          print the version and exit\n"
"  -h, --help  this help\n"
"Exit status: 0 dumped, 1 the image could not be opened or the dump\n"
"not written, 2 a usage error (as xfs_metadump).\n");
}

static void
warn_stderr(void *priv, const char *msg)
{
	if (*(int *)priv)
		fprintf(stderr, "xfskit-metadump: %s\n", msg);
}

int
main(int argc, char **argv)
{
	struct md_opts o = { .obfuscate = 1, .zero_stale = 1, .version = 1 };
	struct xk_mount *mp;
	struct md_stats st;
	struct xk_fail f;
	const char *logdev = NULL, *rtdev = NULL;
	int opt, err, show_warnings = 0;
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	FILE *fp;

	while ((opt = getopt_long(argc, argv, "aghl:or:v:wV", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'a':
			o.zero_stale = 0;
			break;
		case 'g':
			o.progress = 1;
			break;
		case 'o':
			o.obfuscate = 0;
			break;
		case 'w':
			show_warnings = 1;
			break;
		case 'l':
			logdev = optarg;
			break;
		case 'r':
			rtdev = optarg;
			break;
		case 'v':
			if (strcmp(optarg, "1") && strcmp(optarg, "2")) {
				fprintf(stderr, "xfskit-metadump: version "
					"must be 1 or 2\n");
				return 2;
			}
			o.version = optarg[0] - '0';
			break;
		case 'V':
			printf("xfskit-metadump version %s\n", xk_version());
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	{
		struct xk_mounted ms;
		char where[400];

		/* xfs_metadump warns too: the dump may be inconsistent. */
		if (!xk_mounted_state(argv[optind], &ms) && ms.mounted &&
		    !ms.readonly) {
			xk_mounted_describe(&ms, where, sizeof(where));
			fprintf(stderr, "xfskit-metadump: warning: %s is %s; "
				"the dump may be inconsistent\n",
				argv[optind], where);
		}
	}
	err = xk_mount_open(argv[optind], XK_MOUNT_RDONLY, &mp, &f);
	if (err) {
		char msg[400];

		xk_open_error_format(err, &f, msg, sizeof(msg));
		fprintf(stderr, "xfskit-metadump: %s: %s\n", argv[optind],
			msg);
		return 1;
	}
	/* A log that is not this filesystem's is refused (its UUID). */
	if ((logdev && (err = xk_mount_open_logdev(mp, logdev, &f))) ||
	    (rtdev && (err = xk_mount_open_rtdev(mp, rtdev, &f)))) {
		char msg[400];

		xk_open_error_format(err, &f, msg, sizeof(msg));
		fprintf(stderr, "xfskit-metadump: %s: %s\n", argv[optind],
			msg);
		xk_mount_discard(mp);
		return 1;
	}
	if (!strcmp(argv[optind + 1], "-")) {
		if (isatty(STDOUT_FILENO)) {
			fprintf(stderr, "xfskit-metadump: will not write a "
				"dump to a terminal\n");
			xk_mount_discard(mp);
			return 1;
		}
		fp = stdout;
	} else {
		fp = fopen(argv[optind + 1], "wb");
		if (!fp) {
			fprintf(stderr, "xfskit-metadump: cannot create %s: "
				"%s\n", argv[optind + 1], strerror(errno));
			xk_mount_discard(mp);
			return 1;
		}
	}
	if (xk_log_is_external(mp) && (!mp->logdev || o.version != 2))
		fprintf(stderr, "xfskit-metadump: %s has an external log, "
			"which this dump does not carry (%s): the dump holds "
			"the data device only, and restores without a log\n",
			argv[optind], mp->logdev ? "a v1 dump cannot: use -v 2" :
			"give its device with -l");
	err = md_dump(mp, fp, &o, warn_stderr, &show_warnings, &st);
	if (fp != stdout && fclose(fp) && !err)
		err = -EIO;
	xk_mount_discard(mp);	/* read-only: nothing to write */
	if (err) {
		fprintf(stderr, "xfskit-metadump: writing %s failed: %s\n",
			argv[optind + 1], xk_strerror(err));
		return 1;
	}
	if (md_log_warning(&o, &st))
		fprintf(stderr, "xfskit-metadump: %s\n", md_log_warning(&o, &st));
	if (st.warnings && !show_warnings)
		fprintf(stderr, "xfskit-metadump: %u warning%s about damaged "
			"metadata (-w shows them)\n", st.warnings,
			st.warnings == 1 ? "" : "s");
	return 0;
}
