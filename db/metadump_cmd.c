// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metadump command of xfskit-db: parses the xfs_metadump-style
 * options, opens the output file and hands the open filesystem to the
 * engine in metadump.c; warnings go to the error stream.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "metadump.h"

static void
db_md_warn(void *priv, const char *msg)
{
	db_err(priv, "metadump: %s", msg);
}

int
db_cmd_metadump(struct db_ctx *c, int argc, char **argv)
{
	struct md_opts o = { .obfuscate = 1, .zero_stale = 1, .version = 1 };
	struct md_stats st;
	const char *path = NULL;
	FILE *fp;
	int err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o"))
			o.obfuscate = 0;
		else if (!strcmp(argv[i], "-a"))
			o.zero_stale = 0;
		else if (!strcmp(argv[i], "-g"))
			o.progress = 1;
		else if (!strcmp(argv[i], "-v") && i + 1 < argc &&
			 (!strcmp(argv[i + 1], "1") ||
			  !strcmp(argv[i + 1], "2")))
			o.version = argv[++i][0] - '0';
		else if (argv[i][0] != '-' || !strcmp(argv[i], "-")) {
			if (path)
				goto usage;
			path = argv[i];
		} else {
			goto usage;
		}
	}
	if (!path)
		goto usage;
	if (!strcmp(path, "-")) {
		if (c->out == stdout && isatty(STDOUT_FILENO)) {
			db_err(c, "metadump: will not write a dump to a "
			       "terminal");
			return 1;
		}
		fp = stdout;
	} else {
		fp = fopen(path, "wb");
		if (!fp) {
			db_err(c, "metadump: cannot create %s: %s", path,
			       strerror(errno));
			return 1;
		}
	}
	err = md_dump(c->mp, fp, &o, db_md_warn, c, &st);
	if (fp != stdout && fclose(fp) && !err)
		err = -EIO;
	if (err) {
		db_err(c, "metadump: writing %s failed: %s", path,
		       xk_strerror(err));
		return 1;
	}
	if (md_log_warning(&o, &st))
		db_err(c, "metadump: %s", md_log_warning(&o, &st));
	if (fp != stdout)
		db_note(c, "metadump: %llu bytes of metadata copied (%llu "
			"inodes), %llu names obfuscated; %s",
			(unsigned long long)st.bytes,
			(unsigned long long)st.inodes,
			(unsigned long long)st.names,
			st.log_action == MD_LOG_CLEARED ? "clean log emptied" :
			st.log_action == MD_LOG_SCRUBBED ?
			"dirty log, its stale blocks scrubbed" :
			st.dirty_log ? "dirty log carried as it is" :
			"log carried as it is");
	return 0;
usage:
	db_err(c, "usage: metadump [-o] [-a] [-g] [-v 1|2] file");
	return 1;
}
