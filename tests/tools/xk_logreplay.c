// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Test tool: replay the log of an image with xk_log_recover(), or zero
 * it.  Usage:
 *   xk_logreplay [-n] [-u] [-t N] IMAGE  replay (-n: check only, write
 *                                 nothing; -u: even if unlinked inodes
 *                                 or CoW staging extents remain; -t: on
 *                                 N threads, default one per CPU)
 *   xk_logreplay -L IMAGE      discard the log (like xfs_repair -L)
 * Prints what recovery found and did.  Exits 0 when the log is clean or
 * was replayed, 1 when recovery refused or found damage (the reason on
 * stderr), 2 on usage or open errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/libfs.h>
#include <xfskit/logv.h>

int
main(int argc, char **argv)
{
	struct xk_log_report rep;
	struct xk_mount *mp;
	struct xk_fail f;
	unsigned int flags = 0, threads = 0;
	int c, err, zero = 0;
	char msg[320];

	while ((c = getopt(argc, argv, "nuLt:")) != -1) {
		if (c == 't') {
			threads = (unsigned int)atoi(optarg);
		} else if (c == 'n') {
			flags |= XK_LOG_DRYRUN;
		} else if (c == 'u') {
			flags |= XK_LOG_SKIP_CLEANUP;
		} else if (c == 'L') {
			zero = 1;
		} else {
			fprintf(stderr, "usage: xk_logreplay [-n] [-u] [-t N] "
				"| -L IMAGE\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: xk_logreplay [-n] [-u] [-t N] | -L "
			"IMAGE\n");
		return 2;
	}
	memset(&f, 0, sizeof(f));
	err = xk_mount_open(argv[optind], (flags & XK_LOG_DRYRUN) ?
			    XK_MOUNT_RDONLY : 0, &mp, &f);
	if (err) {
		xk_open_error_format(err, &f, msg, sizeof(msg));
		fprintf(stderr, "xk_logreplay: %s\n", msg);
		return 2;
	}
	if (zero) {
		err = xk_log_zero(mp, msg, sizeof(msg));
		if (err)
			fprintf(stderr, "xk_logreplay: %s\n", msg);
		else
			printf("log zeroed\n");
		if (xk_mount_close(mp) && !err) {
			fprintf(stderr, "xk_logreplay: closing failed\n");
			err = 1;
		}
		return err ? 1 : 0;
	}
	err = xk_log_recover(mp, flags, threads, &rep);
	printf("log: tail %u head %u cycle %u %s%s\n", rep.state.tail_blk,
	       rep.state.head_blk, rep.state.head_cycle,
	       rep.state.clean ? "clean" : "dirty",
	       rep.state.torn_blk != XK_LOG_NOBLK ? " (torn write dropped)"
						  : "");
	printf("records %u transactions %u items %llu\n", rep.records,
	       rep.transactions, (unsigned long long)rep.items);
	printf("buffers replayed %llu skipped-lsn %llu cancelled %llu\n",
	       (unsigned long long)rep.bufs_replayed,
	       (unsigned long long)rep.bufs_skipped_lsn,
	       (unsigned long long)rep.bufs_cancelled);
	printf("inodes replayed %llu skipped-lsn %llu cancelled %llu "
	       "icreates %llu\n",
	       (unsigned long long)rep.inodes_replayed,
	       (unsigned long long)rep.inodes_skipped_lsn,
	       (unsigned long long)rep.inodes_cancelled,
	       (unsigned long long)rep.icreates_replayed);
	printf("blocks written %llu unlinked %u cow staging %llu "
	       "log_incompat cleared 0x%x\n",
	       (unsigned long long)rep.blocks_written, rep.unlinked_inodes,
	       (unsigned long long)rep.cow_staging, rep.log_incompat_cleared);
	printf("intents unfinished %llu finished %llu unlinked freed %llu "
	       "cow freed %llu\n",
	       (unsigned long long)rep.intents_unfinished,
	       (unsigned long long)rep.intents_finished,
	       (unsigned long long)rep.unlinked_freed,
	       (unsigned long long)rep.cow_freed);
	if (err)
		fprintf(stderr, "xk_logreplay: %s\n", rep.msg);
	else if (!rep.replayed)
		printf("%s\n", (flags & XK_LOG_DRYRUN) && !rep.state.clean ?
		       "would replay" : "log is clean: nothing to replay");
	err = xk_mount_close(mp) || err;
	return err ? 1 : 0;
}
