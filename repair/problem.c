// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The problem table: each finding's plain-language prefix, and the one
 * gate (fix_problem) that reports, counts and decides.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "repair.h"

/*
 * The text says what is wrong for a person; the code names the kind for
 * scripts (--json "code", doc/xfskit-repair.schema.json) and never
 * changes once published.
 */
static const struct {
	const char	*what;
	const char	*code;
} problems[PR_NR] = {
	[PR_SB_PRIMARY_BAD]	  = { "primary superblock is bad",
				      "sb_primary_bad" },
	[PR_SB_SECONDARY_BAD]	  = { "secondary superblock is bad",
				      "sb_secondary_bad" },
	[PR_SB_SECONDARY_DIFFERS] = { "secondary superblock differs from "
				      "the primary", "sb_secondary_differs" },
	[PR_AGF_BAD]		  = { "AGF is bad", "agf_bad" },
	[PR_AGI_BAD]		  = { "AGI is bad", "agi_bad" },
	[PR_AGFL_BAD]		  = { "AGFL is bad", "agfl_bad" },
	[PR_BTREE_BAD]		  = { "btree is bad", "btree_bad" },
	[PR_AGF_COUNTER]	  = { "AGF counter is wrong", "agf_counter" },
	[PR_AGI_COUNTER]	  = { "AGI counter is wrong", "agi_counter" },
	[PR_CNTBT_MISMATCH]	  = { "free space btrees disagree",
				      "cntbt_mismatch" },
	[PR_FINOBT_MISMATCH]	  = { "finobt disagrees with inobt",
				      "finobt_mismatch" },
	[PR_INODE_BAD]		  = { "inode is bad", "inode_bad" },
	[PR_INODE_STATE]	  = { "inode allocation state is wrong",
				      "inode_state" },
	[PR_FORK_BAD]		  = { "inode fork is bad", "fork_bad" },
	[PR_DIR_BAD]		  = { "directory is bad", "dir_bad" },
	[PR_ATTR_BAD]		  = { "extended attributes are bad",
				      "attr_bad" },
	[PR_SYMLINK_BAD]	  = { "symlink is bad", "symlink_bad" },
	[PR_SPACE_CONFLICT]	  = { "block claimed twice", "space_conflict" },
	[PR_SPACE_LOST]		  = { "block is neither free nor used",
				      "space_lost" },
	[PR_RMAP_MISMATCH]	  = { "reverse mapping is wrong",
				      "rmap_mismatch" },
	[PR_REFCOUNT_MISMATCH]	  = { "reference count is wrong",
				      "refcount_mismatch" },
	[PR_NLINK]		  = { "link count is wrong", "nlink" },
	[PR_DISCONNECTED]	  = { "inode is disconnected", "disconnected" },
	[PR_SB_COUNTER]		  = { "superblock counter is wrong",
				      "sb_counter" },
	[PR_UNLINKED]		  = { "unlinked inode list is not empty",
				      "unlinked" },
	[PR_LOG_DIRTY]		  = { "the log is dirty", "log_dirty" },
	[PR_QUOTA_INODE]	  = { "quota inode is bad", "quota_inode" },
	[PR_QUOTA_DQUOT]	  = { "dquot is bad", "quota_dquot" },
	[PR_QUOTA_COUNT]	  = { "quota usage is wrong", "quota_count" },
	[PR_QUOTA_FLAGS]	  = { "quota flags are wrong", "quota_flags" },
	[PR_PPTR]		  = { "parent pointer is wrong",
				      "parent_pointer" },
	[PR_RT_INODE]		  = { "realtime bitmap or summary inode is "
				      "bad", "rt_inode" },
	[PR_RT_BITMAP]		  = { "realtime bitmap is wrong", "rt_bitmap" },
	[PR_RT_SUMMARY]		  = { "realtime summary is wrong",
				      "rt_summary" },
	[PR_SB_NEEDSREPAIR]	  = { "the filesystem is marked as needing "
				      "repair", "needsrepair" },
	[PR_RT_SB]		  = { "realtime superblock is bad",
				      "rt_superblock" },
	[PR_LOG_BEHIND]		  = { "metadata is ahead of the log",
				      "log_behind" },
	[PR_RT_BTREE]		  = { "realtime rmap or refcount btree is "
				      "wrong", "rt_btree" },
};

/*
 * The policy of each kind (PF_*, repair.h), which fsck.xfskit and
 * scripts act on through --json (doc/json.md): preen marks findings
 * whose fix only rewrites values derived from other metadata or from
 * redundant copies; destructive, those whose fix may lose data (an
 * inode cleared, a fork or entry dropped, a file moved to /lost+found);
 * unfixable, those repair only reports.  A kind missing here has none:
 * never fixed by a preen.
 */
static const unsigned int problem_policy[PR_NR] = {
	[PR_SB_SECONDARY_BAD]	  = PF_PREEN,
	[PR_SB_SECONDARY_DIFFERS] = PF_PREEN,
	[PR_AGF_COUNTER]	  = PF_PREEN,
	[PR_AGI_COUNTER]	  = PF_PREEN,
	[PR_SB_COUNTER]		  = PF_PREEN,
	[PR_PPTR]		  = PF_PREEN,
	[PR_RT_BITMAP]		  = PF_PREEN,
	[PR_RT_SUMMARY]		  = PF_PREEN,
	[PR_SB_NEEDSREPAIR]	  = PF_PREEN,
	[PR_LOG_BEHIND]		  = PF_PREEN,
	[PR_INODE_BAD]		  = PF_DESTRUCTIVE,
	[PR_FORK_BAD]		  = PF_DESTRUCTIVE,
	[PR_DIR_BAD]		  = PF_DESTRUCTIVE,
	[PR_ATTR_BAD]		  = PF_DESTRUCTIVE,
	[PR_SYMLINK_BAD]	  = PF_DESTRUCTIVE,
	[PR_SPACE_CONFLICT]	  = PF_DESTRUCTIVE,
	[PR_DISCONNECTED]	  = PF_DESTRUCTIVE,
	[PR_QUOTA_INODE]	  = PF_DESTRUCTIVE,
	[PR_QUOTA_DQUOT]	  = PF_DESTRUCTIVE,
};

unsigned int
problem_flags(enum problem pr)
{
	return problem_policy[pr];
}

void
json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void
json_problem(struct repair_ctx *rc, enum problem pr, const struct xk_fail *f)
{
	FILE *o = rc->out;
	char line[512];

	unsigned int fl = problem_flags(pr);

	xk_fail_format(f, line, sizeof(line));
	/*
	 * "problems" holds the findings the run starts from (the problem
	 * count); the passes after the first repairs, what follows from
	 * them and what is left, go to "later_problems".
	 */
	if (rc->pass > 1 && !rc->found.json_later) {
		fprintf(o, "%s],\n  \"later_problems\": [",
			rc->found.json_items ? "\n  " : "");
		rc->found.json_later = 1;
		rc->found.json_items = 0;
	}
	fprintf(o, "%s\n    {\"problem\": ", rc->found.json_items++ ? "," : "");
	json_string(o, problems[pr].what);
	fprintf(o, ", \"code\": ");
	json_string(o, problems[pr].code);
	fprintf(o, ", \"pass\": %d, \"safe_to_preen\": %s, "
		"\"destructive\": %s, \"fixable\": %s", rc->pass,
		fl & PF_PREEN ? "true" : "false",
		fl & PF_DESTRUCTIVE ? "true" : "false",
		fl & PF_UNFIXABLE ? "false" : "true");
	fprintf(o, ", \"structure\": ");
	json_string(o, f->structure ? f->structure : "");
	if (f->daddr != XK_NO_DADDR)
		fprintf(o, ", \"daddr\": %llu", (unsigned long long)f->daddr);
	if (f->agno >= 0)
		fprintf(o, ", \"agno\": %lld", (long long)f->agno);
	if (f->ino)
		fprintf(o, ", \"ino\": %llu", (unsigned long long)f->ino);
	fprintf(o, ", \"check\": ");
	json_string(o, f->check ? f->check : "");
	if (f->has_values)
		fprintf(o, ", \"expected\": %llu, \"found\": %llu",
			(unsigned long long)f->expected,
			(unsigned long long)f->found);
	if (f->detail[0]) {
		fprintf(o, ", \"detail\": ");
		json_string(o, f->detail);
	}
	fprintf(o, ", \"crc_bad\": %s, \"message\": ",
		f->crc_bad ? "true" : "false");
	json_string(o, line);
	fprintf(o, "}");
}

void
json_begin(struct repair_ctx *rc)
{
	/* doc/xfskit-repair.schema.json; bump only on incompatible changes. */
	fprintf(rc->out, "{\n  \"tool\": \"xfskit-repair\",\n"
		"  \"schema_version\": 1,\n  \"version\": ");
	json_string(rc->out, xk_version());
	fprintf(rc->out, ",\n  \"device\": ");
	json_string(rc->out, rc->opt.device);
	fprintf(rc->out, ",\n  \"mode\": \"%s\",\n  \"problems\": [",
		rc->opt.no_modify ? "check" : "repair");
}

void
json_end(struct repair_ctx *rc, int status)
{
	fprintf(rc->out, "%s]", rc->found.json_items ? "\n  " : "");
	if (!rc->found.json_later)
		fprintf(rc->out, ",\n  \"later_problems\": []");
	action_json(rc);
	guard_json(rc);
	fprintf(rc->out, ",\n  \"problem_count\": %lu,\n  \"exit_status\": "
		"%d\n}\n", rc->found.first_problems, status);
}

int64_t
repair_now(void)
{
	const char *e = getenv("SOURCE_DATE_EPOCH");
	char *end;
	long long v;

	if (e && *e) {
		errno = 0;
		v = strtoll(e, &end, 10);
		if (!*end && !errno && v >= 0)
			return v;
	}
	return (int64_t)time(NULL);
}

const char *
repair_error_cause(int err)
{
	switch (err) {
	case -ENOMEM:
		return "out of memory";
	case -EIO:
		return "an I/O error";
	case -EAGAIN:
		return "a thread could not be started";
	case -ENOSPC:
		return "no space left";
	case -ECANCELED:
		return "stopped on request";
	case -EINTR:
		return "interrupted";
	default:
		return xk_strerror(err);
	}
}

static void
error_vset(struct repair_ctx *rc, int err, const char *fmt, va_list ap)
{
	if (rc->found.error)
		return;
	rc->found.error = err;
	vsnprintf(rc->found.error_what, sizeof(rc->found.error_what), fmt, ap);
}

int
repair_error(struct repair_ctx *rc, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(rc, err ? err : -EIO, fmt, ap);
	va_end(ap);
	return rc->found.error;
}

int
repair_oserr(struct repair_ctx *rc, int err, const char *fmt, ...)
{
	va_list ap;

	if (!xk_err_operational(err))
		return 0;
	va_start(ap, fmt);
	error_vset(rc, err, fmt, ap);
	va_end(ap);
	return rc->found.error;
}

void
repair_assert_fail(const char *cond, const char *file, int line,
		   const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "xfskit-repair: %s:%d: engine invariant broken (%s): ",
		file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

int
fix_problem(struct repair_ctx *rc, enum problem pr, const struct xk_fail *f)
{
	char line[512];

	/* After an operational error nothing seen is a verdict. */
	if (rc->found.error)
		return 0;
	rc->found.counts[pr]++;
	rc->found.nproblems++;
	xk_fail_format(f, line, sizeof(line));
	/* A long detail is cut: the reason's start says enough. */
	if (snprintf(rc->found.last_finding, sizeof(rc->found.last_finding),
		     "%s: %s", problems[pr].what, line) < 0)
		rc->found.last_finding[0] = '\0';
	if (rc->opt.json) {
		json_problem(rc, pr, f);
		return !rc->opt.no_modify;
	}
	if (rc->opt.report) {
		live_clear(rc);
		fprintf(rc->out, "%s: %s\n", problems[pr].what, line);
	} else if (rc->pass <= 1) {
		char both[sizeof(rc->xr.pending)];

		snprintf(both, sizeof(both), "%s: %s", problems[pr].what, line);
		xr_finding(rc, both);
	}
	/* The caller plans its fix now; repair applies it after the pass. */
	return !rc->opt.no_modify;
}

void
info(struct repair_ctx *rc, const char *fmt, ...)
{
	va_list ap;

	if (!rc->opt.report && !rc->opt.json)
		return;
	live_clear(rc);
	va_start(ap, fmt);
	vfprintf(rc->opt.json ? stderr : rc->out, fmt, ap);
	va_end(ap);
}

void
notice(struct repair_ctx *rc, const char *fmt, ...)
{
	va_list ap;

	xr_flush(rc);
	live_clear(rc);
	va_start(ap, fmt);
	vfprintf(rc->opt.json ? stderr : rc->out, fmt, ap);
	va_end(ap);
}

int
report(struct repair_ctx *rc, enum problem pr, const char *structure,
       int64_t agno, uint64_t ino, uint64_t daddr, const char *check,
       const char *fmt, ...)
{
	struct xk_fail f;
	va_list ap;

	memset(&f, 0, sizeof(f));
	f.structure = structure;
	f.agno = agno;
	f.ino = ino;
	f.daddr = daddr;
	f.check = check;
	va_start(ap, fmt);
	vsnprintf(f.detail, sizeof(f.detail), fmt, ap);
	va_end(ap);
	return fix_problem(rc, pr, &f);
}
