// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Entry checks of xfskit-repair, before the filesystem is opened:
 *
 *  1. Mounted?  A read-write mount is refused with and without -n (the
 *     blocks on disk lag behind the kernel's cache, and a write would be
 *     lost or trusted); a read-only mount may be checked with -n, with a
 *     warning, and is never written.
 *  2. Understood?  What libfs does not handle (unsupported.h) is never
 *     written: without -n the run refuses, naming the reason.  With -n
 *     the rest is checked and each part left out is named at the end;
 *     the exit status is then REPAIR_EXIT_UNCHECKED unless corruption
 *     was found in what was checked.
 */
#include <string.h>

#include <xfskit/logv.h>

#include "repair.h"

int
guard_mounted(struct repair_ctx *rc, char *msg, size_t len)
{
	struct xk_mounted ms;
	char where[400];
	int err = xk_mounted_state(rc->opt.device, &ms);

	if (err) {
		fprintf(stderr, "xfskit-repair: %s: warning: cannot tell "
			"whether it is mounted (%s)\n", rc->opt.device,
			xk_strerror(err));
		return 0;
	}
	if (!ms.mounted)
		return 0;
	xk_mounted_describe(&ms, where, sizeof(where));
	if (!ms.readonly) {
		snprintf(msg, len, "contains a mounted and writable "
			 "filesystem (%s); unmount it first", where);
		return -EBUSY;
	}
	if (!rc->opt.no_modify) {
		snprintf(msg, len, "contains a mounted filesystem (%s); "
			 "unmount it to repair it, or check it with -n",
			 where);
		return -EBUSY;
	}
	fprintf(stderr, "xfskit-repair: %s: warning: %s; checking the blocks "
		"on disk, which may lag behind the mount\n", rc->opt.device,
		where);
	return 0;
}

static void
json_unchecked(struct repair_ctx *rc)
{
	fprintf(rc->out, ",\n  \"not_checked\": [");
	for (int i = 0; i < rc->found.nunsup; i++) {
		fprintf(rc->out, "%s\n    {\"code\": \"%s\", \"what\": ",
			i ? "," : "", rc->found.unsup[i].code);
		json_string(rc->out, rc->found.unsup[i].what);
		fprintf(rc->out, ", \"reason\": ");
		json_string(rc->out, rc->found.unsup[i].why);
		fprintf(rc->out, "}");
	}
	fprintf(rc->out, "\n  ]");
}

/* The JSON document's last fields, for json_end(). */
void
guard_json(struct repair_ctx *rc)
{
	if (rc->found.nunsup)
		json_unchecked(rc);
}

static void
say_unchecked(struct repair_ctx *rc)
{
	for (int i = 0; i < rc->found.nunsup; i++)
		notice(rc, "%s was not checked: %s.\n", rc->found.unsup[i].what,
		     rc->found.unsup[i].why);
}

/* The parts found so far decide: refuse to write, or check the rest. */
static int
guard_decide(struct repair_ctx *rc)
{
	int opens = 0;

	if (!rc->found.nunsup)
		return 0;
	for (int i = 0; i < rc->found.nunsup; i++)
		opens |= rc->found.unsup[i].blocks_open;
	if (!rc->opt.no_modify) {
		for (int i = 0; i < rc->found.nunsup; i++)
			fprintf(stderr, "xfskit-repair: %s: refusing to change "
				"anything: %s cannot be handled: %s.\n",
				rc->opt.device, rc->found.unsup[i].what,
				rc->found.unsup[i].why);
		fprintf(stderr, "xfskit-repair: %s: nothing was written%s.\n",
			rc->opt.device, opens ? "" : "; -n checks the rest");
	} else if (!opens) {
		return 0;	/* check the rest: guard_unchecked() */
	} else {
		say_unchecked(rc);
	}
	if (rc->opt.json)
		json_end(rc, REPAIR_EXIT_UNCHECKED);
	return REPAIR_EXIT_UNCHECKED;
}

/* The devices given beside the data device (XK_UNSUP_*). */
static unsigned int
unsup_have(const struct repair_ctx *rc)
{
	return (rc->opt.logdev ? XK_UNSUP_LOGDEV : 0) |
	       (rc->opt.rtdev ? XK_UNSUP_RTDEV : 0) |
	       XK_UNSUP_RTBTREES;
}

/*
 * Whether the primary's unknown incompatible feature bits are damage: the
 * primary fails the verifier even with them left out (xfs_repair 6.1 and
 * 7.2 then take a secondary, as they do for any primary that fails it).
 * A primary that passes without them may carry a feature newer than
 * xfskit, as the kernel and xfs_repair assume: refused.  So is one marked
 * NEEDSREPAIR, which an upgrade stopped half-way leaves (its new feature
 * in the primary alone, the metadata half converted).
 */
static int
incompat_is_damage(struct repair_ctx *rc)
{
	struct xk_dev *dev;
	struct xk_dsb dsb;
	struct xk_sb sb;
	struct xk_fail f;
	char line[300];
	int err;

	if (xk_dev_open(rc->opt.device, XK_DEV_RDONLY, &dev))
		return 0;
	err = xk_dev_pread(dev, &dsb, sizeof(dsb), 0);
	xk_dev_close(dev);
	if (err)
		return 0;
	xk_sb_decode(&sb, &dsb);
	if (xk_sb_has_incompat(&sb, XK_SB_FEAT_INCOMPAT_NEEDSREPAIR))
		return 0;
	sb.features_incompat &= XK_SB_FEAT_INCOMPAT_KNOWN;
	memset(&f, 0, sizeof(f));
	err = xk_sb_check(&sb, 0, &f);
	if (!err || err == XK_EUNSUPP || xk_err_operational(err))
		return 0;
	xk_fail_format(&f, line, sizeof(line));
	info(rc, "The primary superblock's unknown incompatible feature bits "
	     "are damage: without them it still fails the verifier (%s).\n",
	     line);
	return 1;
}

/*
 * Before the open, from the primary as it is on disk.  Unknown
 * read-only-compatible bits wait for guard_unsupported_voted(): the
 * secondaries may show them to be damage to the primary, which the
 * repair corrects (the open and the vote need nothing they name).  So do
 * unknown log-incompatible bits: they name what the log may hold, so
 * they matter only when the log is dirty.  Unknown incompatible bits of
 * a primary damaged anyway are left to the open, which then takes a
 * secondary (main.c).
 */
int
guard_unsupported(struct repair_ctx *rc)
{
	struct xk_unsupported found[XK_UNSUPPORTED_MAX];
	int n = xk_unsupported_probe(rc->opt.device, unsup_have(rc), found,
				     XK_UNSUPPORTED_MAX);

	if (n <= 0)
		return 0;	/* unreadable: the open reports it */
	for (int i = 0; i < n; i++) {
		if (!strcmp(found[i].code, "ro_compat") ||
		    !strcmp(found[i].code, "log_incompat"))
			continue;
		if (!strcmp(found[i].code, "incompat") &&
		    incompat_is_damage(rc))
			continue;
		rc->found.unsup[rc->found.nunsup++] = found[i];
	}
	return guard_decide(rc);
}

static int
guard_has(const struct repair_ctx *rc, const char *code)
{
	for (int i = 0; i < rc->found.nunsup; i++)
		if (!strcmp(rc->found.unsup[i].code, code))
			return 1;
	return 0;
}

/*
 * Whether the log is known to hold nothing to replay: then no record
 * needs the log features it names, and the check judges unknown ones
 * (phase_sb.c); so with -L.  A log that cannot be read counts as dirty.
 */
static int
log_known_clean(struct repair_ctx *rc)
{
	struct xk_log *log;
	int clean = 0;

	if (!xk_mount_log_dev(rc->mp))
		return 0;
	if (rc->opt.zero_log)
		return 1;	/* -L: whatever it holds is dropped */
	if (!xk_log_open(rc->mp, &log))
		clean = xk_log_get_state(log)->clean;
	xk_log_close(log);
	return clean;
}

/*
 * After the superblock vote: the read-only-compatible bits that remain,
 * and the devices of the superblock opened (when the primary was too
 * damaged for the probe to name them).
 */
int
guard_unsupported_voted(struct repair_ctx *rc)
{
	struct xk_unsupported found[XK_UNSUPPORTED_MAX];
	int n = xk_unsupported_scan(&rc->mp->sb, unsup_have(rc), found,
				    XK_UNSUPPORTED_MAX);

	for (int i = 0; i < n && rc->found.nunsup < XK_UNSUPPORTED_MAX; i++)
		if (!strcmp(found[i].code, "ro_compat") ||
		    (!strcmp(found[i].code, "log_incompat") &&
		     !log_known_clean(rc)))
			rc->found.unsup[rc->found.nunsup++] = found[i];
	/* What the probe could not take from a damaged primary. */
	n = xk_unsupported_devices(&rc->mp->sb, unsup_have(rc), found,
				   XK_UNSUPPORTED_MAX);
	for (int i = 0; i < n && rc->found.nunsup < XK_UNSUPPORTED_MAX; i++)
		if (!guard_has(rc, found[i].code))
			rc->found.unsup[rc->found.nunsup++] = found[i];
	return guard_decide(rc);
}

int
guard_unchecked(struct repair_ctx *rc, int status)
{
	if (!rc->found.nunsup)
		return status;
	say_unchecked(rc);
	return status == REPAIR_EXIT_CLEAN ? REPAIR_EXIT_UNCHECKED : status;
}
