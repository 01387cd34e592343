// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-undo: put back what a run with an undo file (xfskit-repair -z)
 * overwrote.  The whole file is checked before a byte is written.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <xfskit/libfs.h>

static void
usage(FILE *to)
{
	fprintf(to,
"Usage: xfskit-undo [-n] [-f] UNDO_FILE DEVICE\n"
"  -n   check the undo file against the device, write nothing\n"
"  -f   apply even if the device's filesystem UUID does not match\n"
"  -V   print the version and exit\n"
"Exit status: 0 applied (or checked), 1 refused, 2 usage error.\n");
}

int
main(int argc, char **argv)
{
	struct xk_undo_result r;
	unsigned int flags = 0;
	int opt, err;

	while ((opt = getopt(argc, argv, "nfVh")) != -1) {
		switch (opt) {
		case 'n':
			flags |= XK_UNDO_DRYRUN;
			break;
		case 'f':
			flags |= XK_UNDO_FORCE;
			break;
		case 'V':
			printf("xfskit-undo version %s\n", xk_version());
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
	err = xk_undo_apply(argv[optind], argv[optind + 1], flags, &r);
	if (err) {
		fprintf(stderr, "xfskit-undo: %s: %s (%s); nothing written\n",
			argv[optind], r.msg[0] ? r.msg : "failed",
			xk_strerror(err));
		return 1;
	}
	if (!r.complete)
		fprintf(stderr, "xfskit-undo: note: the run that wrote %s did "
			"not finish; every write it made is still undone\n",
			argv[optind]);
	printf("%s %llu records, %llu bytes%s.\n",
	       (flags & XK_UNDO_DRYRUN) ? "Checked" : "Restored",
	       (unsigned long long)r.records, (unsigned long long)r.bytes,
	       (flags & XK_UNDO_DRYRUN) ? " (nothing written)" : "");
	return 0;
}
