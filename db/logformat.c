// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * logformat: write the log clean in a chosen cycle, as xfs_db's
 * logformat does (fstests formats it back a cycle to put metadata LSNs
 * ahead of it, xfs/137).  A dirty log is refused: its changes would be
 * lost.
 */
#include <getopt.h>
#include <stdint.h>

#include <xfskit/logv.h>

#include "db.h"

int
db_cmd_logformat(struct db_ctx *c, int argc, char **argv)
{
	struct xk_mount *mp = c->mp;
	const struct xk_log_state *st;
	struct xk_log *log = NULL;
	uint64_t cycle = 0, sunit = mp->sb.logsunit;
	char msg[256] = "";
	int opt, err, clean;

	optind = 0;		/* GNU getopt: start over for this command */
	while ((opt = getopt(argc, argv, "c:s:")) != -1) {
		switch (opt) {
		case 'c':
			if (db_parse_u64(optarg, &cycle) || !cycle ||
			    cycle > UINT32_MAX) {
				db_err(c, "invalid cycle");
				return 1;
			}
			break;
		case 's':
			/* The writer pads to the superblock's stripe unit. */
			if (db_parse_u64(optarg, &sunit) ||
			    sunit != mp->sb.logsunit) {
				db_err(c, "logformat: -s %s: only the "
				       "superblock's log stripe unit (%u "
				       "bytes) is supported", optarg,
				       mp->sb.logsunit);
				return 1;
			}
			break;
		default:
			db_err(c, "invalid option");
			return 1;
		}
	}
	if (optind != argc) {
		db_err(c, "bad argument %s to logformat", argv[optind]);
		return 1;
	}
	err = xk_log_open(mp, &log);
	if (err || !log) {
		db_err(c, "could not find log head/tail%s%s",
		       log ? ": " : "", log ? xk_log_errmsg(log) : "");
		xk_log_close(log);
		return 1;
	}
	st = xk_log_get_state(log);
	clean = st->clean || st->empty;
	/* Without -c, the cycle the log is in. */
	if (!cycle)
		cycle = st->head_cycle ? st->head_cycle : 1;
	xk_log_close(log);
	if (!clean) {
		db_err(c, "The log is dirty. Please mount to replay the log.");
		return 1;
	}
	db_out(c, "Formatting the log to cycle %u, stripe unit %u bytes.",
	       (unsigned int)cycle, (unsigned int)sunit);
	err = xk_log_format(mp, (uint32_t)cycle, msg, sizeof(msg));
	if (err) {
		db_err(c, "error formatting log: %s",
		       msg[0] ? msg : xk_strerror(err));
		return 1;
	}
	return 0;
}
