// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The open-time refusals of the tools that change a filesystem in place
 * (include/xfskit/open_check.h).  Each says what refused and that
 * nothing was changed; the caller maps the error to its exit status.
 */
#include <errno.h>
#include <string.h>

#include <xfskit/ag.h>
#include <xfskit/format/sb.h>
#include <xfskit/mount.h>
#include <xfskit/mounted.h>
#include <xfskit/open_check.h>
#include <xfskit/unsupported.h>
#include <xfskit/write_crash.h>

/* The device option a part needs, as XK_UNSUP_*; 0 for none. */
static unsigned int
needs_device(const struct xk_unsupported *u)
{
	if (!strcmp(u->code, "external_log"))
		return XK_UNSUP_LOGDEV;
	if (!strcmp(u->code, "realtime"))
		return XK_UNSUP_RTDEV;
	return 0;
}

int
xk_open_check_before(const struct xk_open_check *c)
{
	struct xk_unsupported un[XK_UNSUPPORTED_MAX];
	struct xk_mounted ms;
	char where[400], why[200];
	int n;

	if (c->writes && xk_write_crash_check_env(why, sizeof(why))) {
		fprintf(c->out, "%s: %s\n", c->tool, why);
		return -EINVAL;
	}
	if (!xk_mounted_state(c->path, &ms) && ms.mounted) {
		xk_mounted_describe(&ms, where, sizeof(where));
		fprintf(c->out, "%s: %s: filesystem is mounted (%s); unmount "
			"it first%s\n", c->tool, c->path, where,
			c->mounted_hint ? c->mounted_hint : "");
		return -EBUSY;
	}
	/* Given no device, an external log's state is unknown: named. */
	n = xk_unsupported_probe(c->path, 0, un, XK_UNSUPPORTED_MAX);
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++) {
		unsigned int dev = needs_device(&un[i]);

		/* The library's reason names an option the tool may lack. */
		if (dev && !(c->takes & dev))
			fprintf(c->out, "%s: %s: %s is not supported: %s "
				"takes no device but the data device\n",
				c->tool, c->path, un[i].what, c->tool);
		else
			fprintf(c->out, "%s: %s: %s is not supported: %s\n",
				c->tool, c->path, un[i].what, un[i].why);
	}
	fprintf(c->out, "%s: %s: nothing was changed\n", c->tool, c->path);
	return XK_EUNSUPP;
}

int
xk_open_check_after(const struct xk_open_check *c, struct xk_mount *mp)
{
	char msg[300];
	int err = xk_log_require_clean(mp, msg, sizeof(msg));

	if (err) {
		fprintf(c->out, "%s: %s: %s; nothing was changed (mount and "
			"unmount it, or run xfskit-repair, which replays it "
			"offline)\n", c->tool, c->path, msg);
		return err;
	}
	/* The guard of this run would take the mark of a cut one away. */
	if (xk_sb_has_incompat(&mp->sb, XK_SB_FEAT_INCOMPAT_NEEDSREPAIR)) {
		fprintf(c->out, "%s: %s: the filesystem is marked as needing "
			"repair; nothing was changed (run xfs_repair or "
			"xfskit-repair first)\n", c->tool, c->path);
		return XK_ECORRUPT;
	}
	return 0;
}
