// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a superblock declares that xfskit does not handle (see
 * include/xfskit/unsupported.h): a realtime volume or an external log
 * whose device was not given, feature bits outside what libfs knows.
 * Each entry says which part of the filesystem is left unchecked, so the
 * tools never call it clean and never write under it.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/crc32c.h>
#include <xfskit/dev.h>
#include <xfskit/errors.h>
#include <xfskit/format/rtgroup.h>
#include <xfskit/format/sb.h>
#include <xfskit/mount.h>
#include <xfskit/unsupported.h>

static int
add(struct xk_unsupported *v, int n, int max, const char *code,
    int blocks_open, const char *what, const char *why)
{
	if (n >= max)
		return n;
	memset(&v[n], 0, sizeof(v[n]));
	v[n].code = code;
	v[n].blocks_open = blocks_open;
	snprintf(v[n].what, sizeof(v[n].what), "%s", what);
	snprintf(v[n].why, sizeof(v[n].why), "%s", why);
	return n + 1;
}

/*
 * Feature words whose unknown bits leave part of the filesystem unread,
 * in the order xk_unsupported_scan() lists the words.
 */
static const struct unknown_bits {
	uint32_t	known;
	const char	*code;
	int		blocks_open;
	const char	*what;		/* printf format of the bits */
	const char	*why;
} unknown_bits[] = {
	{ XK_SB_FEAT_INCOMPAT_KNOWN, "incompat", 1,
	  "the filesystem (incompatible feature bits 0x%x)",
	  "xfskit does not know these incompatible features, so it cannot "
	  "read the filesystem safely" },
	{ XK_SB_FEAT_RO_COMPAT_ALL, "ro_compat", 0,
	  "the metadata of read-only compatible feature bits 0x%x",
	  "xfskit does not know these features: the metadata they add was "
	  "not checked and must not be written" },
	{ XK_SB_FEAT_LOG_INCOMPAT_KNOWN, "log_incompat", 0,
	  "the log (log-incompatible feature bits 0x%x)",
	  "xfskit does not know these log features: a dirty log cannot be "
	  "replayed" },
};

/*
 * The realtime groups' btrees, with the feature that adds each: only
 * xfskit-repair reads them (XK_UNSUP_RTBTREES); no tool keeps them in
 * step with a change, so nothing is written under them.
 */
static const struct rtg_tree {
	uint32_t	feature;	/* ro_compat */
	const char	*code, *what, *why;
} rtg_trees[] = {
	{ XK_SB_FEAT_RO_COMPAT_RMAPBT, "rt_rmap",
	  "each realtime group's reverse-mapping btree (/rtgroups/N.rmap)",
	  "realtime reverse-mapping btree not maintained (xfskit-repair "
	  "checks it; no xfskit tool keeps it in step with a change), so "
	  "nothing may be written" },
	{ XK_SB_FEAT_RO_COMPAT_REFLINK, "rt_refcount",
	  "each realtime group's reference count btree "
	  "(/rtgroups/N.refcount)",
	  "realtime reference count btree not maintained (xfskit-repair "
	  "checks it; no xfskit tool keeps it in step with a change), so "
	  "nothing may be written" },
};

int
xk_unsupported_scan(const struct xk_sb *sb, unsigned int have,
		    struct xk_unsupported *v, int max)
{
	char what[128];
	int n = 0;

	if (sb->magicnum != XK_SB_MAGIC ||
	    xk_sb_version(sb) != XK_SB_VERSION_5)
		return 0;
	/* mkfs.xfs -l logdev=: logstart 0, the log on its own device. */
	if (sb->logstart == 0 && !(have & XK_UNSUP_LOGDEV))
		n = add(v, n, max, "external_log", 0,
			"the log (on an external device that was not given)",
			"give its device with -l LOGDEV: without it the log "
			"can be neither replayed nor checked, so nothing may "
			"be written");
	/* A classic realtime volume is checked with its device (-r). */
	if ((sb->rblocks || sb->rextents || sb->rbmblocks) &&
	    !(have & XK_UNSUP_RTDEV))
		n = add(v, n, max, "realtime", 0,
			"the realtime volume (on a device that was not given)",
			"give its device with -r RTDEV: without it the "
			"realtime bitmap, summary, free extent count and the "
			"realtime files' extents are not checked, so nothing "
			"may be written");
	/* Realtime groups: each group's btrees, unless the caller reads them. */
	for (size_t i = 0; i < sizeof(rtg_trees) / sizeof(rtg_trees[0]); i++)
		if (sb->rblocks && (have & XK_UNSUP_RTDEV) &&
		    !(have & XK_UNSUP_RTBTREES) &&
		    xk_sb_has_rtgroups(sb) &&
		    xk_sb_has_ro_compat(sb, rtg_trees[i].feature))
			n = add(v, n, max, rtg_trees[i].code, 0,
				rtg_trees[i].what, rtg_trees[i].why);
	const uint32_t words[] = { sb->features_incompat,
				   sb->features_ro_compat,
				   sb->features_log_incompat };

	_Static_assert(sizeof(words) / sizeof(words[0]) ==
		       sizeof(unknown_bits) / sizeof(unknown_bits[0]),
		       "one table row per feature word");
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		const struct unknown_bits *u = &unknown_bits[i];
		uint32_t bits = words[i] & ~u->known;

		if (!bits)
			continue;
		snprintf(what, sizeof(what), u->what, bits);
		n = add(v, n, max, u->code, u->blocks_open, what, u->why);
	}
	return n;
}

/* A part that is a device not given (the external log, the realtime
 * volume), rather than a feature. */
static int
is_device_part(const struct xk_unsupported *u)
{
	return !strcmp(u->code, "external_log") || !strcmp(u->code, "realtime");
}

int
xk_unsupported_probe(const char *path, unsigned int have,
		     struct xk_unsupported *v, int max)
{
	struct xk_dev *dev;
	struct xk_dsb dsb;
	struct xk_sb sb;
	uint8_t *sector = NULL;
	struct xk_fail f;
	int err, ok = 0, n;

	err = xk_dev_open(path, XK_DEV_RDONLY, &dev);
	if (err)
		return err;
	err = xk_dev_pread(dev, &dsb, sizeof(dsb), 0);
	if (!err) {
		xk_sb_decode(&sb, &dsb);
		/* The CRC covers the whole sector. */
		if (sb.magicnum == XK_SB_MAGIC &&
		    xk_sb_version(&sb) == XK_SB_VERSION_5 &&
		    sb.sectsize >= 512 && sb.sectsize <= 32768 &&
		    !(sb.sectsize & (sb.sectsize - 1)))
			sector = malloc(sb.sectsize);
		if (sector && !xk_dev_pread(dev, sector, sb.sectsize, 0))
			ok = xk_cksum_ok(sector, sb.sectsize,
					 offsetof(struct xk_dsb, sb_crc));
		free(sector);
	}
	xk_dev_close(dev);
	if (err)
		return err == XK_ETRUNC ? 0 : err;
	if (!ok)
		return 0;
	n = xk_unsupported_scan(&sb, have, v, max);
	/*
	 * A primary whose geometry fails the verifier (not one that only
	 * names unknown features) does not say where the log and the
	 * realtime volume are: the copy the open takes does, and
	 * xk_unsupported_devices() reads those parts from it.
	 */
	memset(&f, 0, sizeof(f));
	err = xk_sb_check(&sb, 0, &f);
	if (err && err != XK_EUNSUPP) {
		int k = 0;

		for (int i = 0; i < n; i++)
			if (!is_device_part(&v[i]))
				v[k++] = v[i];
		n = k;
	}
	return n;
}

int
xk_unsupported_devices(const struct xk_sb *sb, unsigned int have,
		       struct xk_unsupported *v, int max)
{
	int n = xk_unsupported_scan(sb, have, v, max), k = 0;

	for (int i = 0; i < n; i++)
		if (is_device_part(&v[i]))
			v[k++] = v[i];
	return k;
}
