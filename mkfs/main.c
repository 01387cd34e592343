// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-mkfs: format a v5 XFS filesystem on an image file or a block
 * device, with mkfs.xfs's command line and geometry.  main() only runs
 * the pipeline: parse, derive the geometry, refuse an existing
 * filesystem unless forced, report, write, then populate (-p).  Exit
 * status: 0 on success, 1 for bad options, a refused device, a failed
 * write or a failed population.
 */
#include <string.h>

#include "mkfs.h"

/* Never under a mounted filesystem, -f or not. */
static int
mkfs_refuse_mounted(const char *dev)
{
	struct xk_mounted ms;
	char where[400];

	if (!dev || xk_mounted_state(dev, &ms) || !ms.mounted)
		return 0;
	xk_mounted_describe(&ms, where, sizeof(where));
	fprintf(stderr, "xfskit-mkfs: %s contains a mounted filesystem (%s); "
		"refusing to overwrite it, with or without -f\n", dev, where);
	return 1;
}

int
main(int argc, char **argv)
{
	struct mkfs_cli cli;
	static struct mkfs_cfg cfg;
	char what[128];

	memset(&cli, 0, sizeof(cli));
	if (mkfs_parse_args(argc, argv, &cli))
		return 1;
	if (!cli.dry_run) {
		char why[200];

		if (xk_write_crash_check_env(why, sizeof(why))) {
			fprintf(stderr, "xfskit-mkfs: %s\n", why);
			return 1;
		}
	}
	if (cli.pop.src && mkfs_populate_prepare(&cli.pop)) {
		mkfs_populate_release(&cli.pop);	/* a bad protofile */
		return 1;
	}
	if (!cli.dry_run && mkfs_refuse_mounted(cli.dev)) {
		mkfs_populate_release(&cli.pop);
		return 1;
	}
	if (cli.pop.src && (cli.daxinherit.num || cli.projinherit.set ||
			    cli.extszinherit.num || cli.cowextsize.num)) {
		/* The populated tree would not inherit them: refused. */
		fprintf(stderr, "xfskit-mkfs: -d daxinherit, projinherit, "
			"extszinherit and cowextsize cannot be combined with "
			"-p yet (the populated files would not inherit "
			"them)\n");
		mkfs_populate_release(&cli.pop);
		return 1;
	}
	if (mkfs_geometry(&cli, &cfg)) {
		mkfs_populate_release(&cli.pop);
		return 1;
	}
	if (!cli.force && !cli.dry_run &&
	    mkfs_probe_existing(&cfg, what, sizeof(what))) {
		fprintf(stderr, "xfskit-mkfs: %s appears to contain %s.\n"
			"xfskit-mkfs: Use the -f option to force overwrite.\n",
			cfg.dev, what);
		mkfs_populate_release(&cli.pop);
		return 1;
	}
	if (cli.unsupported)
		printf("Filesystems formatted with --unsupported are not "
		       "supported!!\n");
	if (!cli.quiet || cli.dry_run)
		mkfs_report(stdout, &cfg);
	if (cli.dry_run) {
		mkfs_populate_release(&cli.pop);
		return 0;
	}
	fflush(stdout);
	if (mkfs_write(&cfg, !cli.nodiscard)) {
		mkfs_populate_release(&cli.pop);
		return 1;
	}
	if (cli.pop.src)
		return mkfs_populate(&cfg, &cli.pop, cli.quiet);
	return 0;
}
