// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-undo: put back what a run with an undo file (xfskit-repair -z)
 * overwrote.  The whole file is checked, and the device verified to hold
 * exactly what the run left, before a byte is written.
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
"  -n   check the undo file against the device and list what would be\n"
"       restored; write nothing\n"
"  -f   apply even if the device is not in the state the run left it in\n"
"       (another filesystem UUID, or blocks changed since)\n"
"  -V   print the version and exit\n"
"  -h, --help\n"
"       this help\n"
"Exit status: 0 applied (or checked), 1 refused, 2 usage error.\n"
"The device must hold exactly what the run left (UUID, superblock and\n"
"every range to be restored, by checksum) unless -f is given.\n");
}

static void
list_record(void *ctx, uint64_t off, uint64_t len)
{
	(void)ctx;
	printf("would restore %llu bytes at offset %llu (sector %llu)\n",
	       (unsigned long long)len, (unsigned long long)off,
	       (unsigned long long)(off / 512));
}

/* Never under a mounted filesystem; -n may look with a warning. */
static int
mounted(const char *dev, int dry_run)
{
	struct xk_mounted ms;
	char where[400];

	if (xk_mounted_state(dev, &ms) || !ms.mounted)
		return 0;
	xk_mounted_describe(&ms, where, sizeof(where));
	if (dry_run) {
		fprintf(stderr, "xfskit-undo: %s: warning: %s\n", dev, where);
		return 0;
	}
	fprintf(stderr, "xfskit-undo: %s is %s; unmount it first; nothing "
		"written\n", dev, where);
	return 1;
}

int
main(int argc, char **argv)
{
	struct xk_undo_result r;
	unsigned int flags = 0;
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, err;

	while ((opt = getopt_long(argc, argv, "nfVh", longopts, NULL)) != -1) {
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
	if (mounted(argv[optind + 1], flags & XK_UNDO_DRYRUN))
		return 1;
	err = xk_undo_apply(argv[optind], argv[optind + 1], flags,
			    (flags & XK_UNDO_DRYRUN) ? list_record : NULL,
			    NULL, &r);
	if (err) {
		fprintf(stderr, "xfskit-undo: %s: %s%s%s%s; %s\n",
			argv[optind], r.msg[0] ? r.msg : "failed",
			err == XK_UNDO_EMISMATCH ? "" : " (",
			err == XK_UNDO_EMISMATCH ? "" : xk_strerror(err),
			err == XK_UNDO_EMISMATCH ? "" : ")",
			r.wrote ? "the device is only partly restored" :
			"nothing written");
		return 1;
	}
	if (r.stopped)
		fprintf(stderr, "xfskit-undo: note: the run that wrote %s "
			"stopped on an error with the undo file; every write "
			"it made is still undone\n", argv[optind]);
	else if (!r.complete)
		fprintf(stderr, "xfskit-undo: note: the run that wrote %s did "
			"not finish; every write it made is still undone\n",
			argv[optind]);
	if (flags & XK_UNDO_FORCE)
		fprintf(stderr, "xfskit-undo: note: -f: the device was not "
			"verified against the state the run left\n");
	printf("%s %llu records, %llu bytes%s.\n",
	       (flags & XK_UNDO_DRYRUN) ? "Would restore" : "Restored",
	       (unsigned long long)r.records, (unsigned long long)r.bytes,
	       (flags & XK_UNDO_DRYRUN) ? " (nothing written)" : "");
	return 0;
}
