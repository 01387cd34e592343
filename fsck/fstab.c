// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The external log and realtime devices of the filesystem fsck.xfskit
 * checks.  fsck(8) passes only the data device, but a filesystem made
 * with mkfs -l logdev= or -r rtdev= cannot be checked without the
 * others, and its fstab entry names them as the mount needs them
 * (options logdev= and rtdev=).  So they are taken from there:
 *  - the table is $LIBMOUNT_FSTAB when set (what fsck(8) itself reads,
 *    through libmount), else /etc/fstab;
 *  - an entry is this filesystem's when its first field is a path to
 *    the same device (block devices by device number, image files by
 *    inode), UUID= or LABEL= of its primary superblock, or a
 *    PARTUUID=/PARTLABEL= whose /dev/disk/by-* link is the device;
 *  - for the root filesystem (no entry found), the kernel command line's
 *    rootflags= when its root= names the device in the same ways.
 * Only the first matching entry counts, as the mount would take it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <xfskit/dev.h>
#include <xfskit/endian.h>
#include <xfskit/format/sb.h>

#include "fsck.h"

/* What identifies the filesystem given. */
struct fs_id {
	struct stat	st;
	int		have_sb;
	uint8_t		uuid[16];
	char		label[13];
};

static void
read_id(const char *device, struct fs_id *id)
{
	struct xk_dev *dev;
	struct xk_dsb dsb;

	memset(id, 0, sizeof(*id));
	if (stat(device, &id->st))
		return;
	if (xk_dev_open(device, XK_DEV_RDONLY, &dev))
		return;
	if (!xk_dev_pread(dev, &dsb, sizeof(dsb), 0) &&
	    xk_be32_get(dsb.sb_magicnum) == XK_SB_MAGIC) {
		id->have_sb = 1;
		memcpy(id->uuid, dsb.sb_uuid, sizeof(id->uuid));
		memcpy(id->label, dsb.sb_fname, sizeof(dsb.sb_fname));
	}
	xk_dev_close(dev);
}

/* The same device or image file as id's. */
static int
same_file(const char *path, const struct fs_id *id)
{
	struct stat st;

	if (stat(path, &st))
		return 0;
	if (S_ISBLK(st.st_mode) || S_ISBLK(id->st.st_mode))
		return S_ISBLK(st.st_mode) && S_ISBLK(id->st.st_mode) &&
		       st.st_rdev == id->st.st_rdev;
	return st.st_dev == id->st.st_dev && st.st_ino == id->st.st_ino;
}

/* "01234567-89ab-..." equal to uuid (either case, dashes anywhere). */
static int
uuid_matches(const char *text, const uint8_t *uuid)
{
	int n = 0;

	for (const char *p = text; *p; p++) {
		unsigned int hi, lo;

		if (*p == '-')
			continue;
		if (n == 16 || sscanf(p, "%1x%1x", &hi, &lo) != 2)
			return 0;
		if (uuid[n++] != (hi << 4 | lo))
			return 0;
		p++;
	}
	return n == 16;
}

/* Does an fstab first field (or root=) name the filesystem id? */
static int
spec_matches(const char *spec, const struct fs_id *id)
{
	static const struct { const char *tag, *dir; } links[] = {
		{ "PARTUUID=", "/dev/disk/by-partuuid/" },
		{ "PARTLABEL=", "/dev/disk/by-partlabel/" },
		{ "ID=", "/dev/disk/by-id/" },
	};
	char path[4096];

	if (!strncmp(spec, "UUID=", 5))
		return id->have_sb && uuid_matches(spec + 5, id->uuid);
	if (!strncmp(spec, "LABEL=", 6))
		return id->have_sb && id->label[0] &&
		       !strcmp(spec + 6, id->label);
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		size_t n = strlen(links[i].tag);

		if (strncmp(spec, links[i].tag, n))
			continue;
		snprintf(path, sizeof(path), "%s%s", links[i].dir, spec + n);
		return same_file(path, id);
	}
	return spec[0] == '/' && same_file(spec, id);
}

/* fstab's octal escapes (\040 for a space), in place. */
static void
unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
					(s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* logdev= and rtdev= of a comma-separated option list into d. */
static void
take_options(const char *opts, struct fsck_devs *d)
{
	char *copy = strdup(opts), *save = NULL;

	if (!copy)
		return;
	for (char *o = strtok_r(copy, ",", &save); o;
	     o = strtok_r(NULL, ",", &save)) {
		if (!strncmp(o, "logdev=", 7))
			snprintf(d->logdev, sizeof(d->logdev), "%s", o + 7);
		else if (!strncmp(o, "rtdev=", 6))
			snprintf(d->rtdev, sizeof(d->rtdev), "%s", o + 6);
	}
	free(copy);
}

/* 1: found in the table at path (d filled), 0: not there, -1: unreadable. */
static int
from_fstab(const char *path, const struct fs_id *id, struct fsck_devs *d)
{
	FILE *f = fopen(path, "r");
	char line[8192];
	int found = 0;

	if (!f)
		return errno == ENOENT ? 0 : -1;
	while (!found && fgets(line, sizeof(line), f)) {
		char *save = NULL;
		char *spec = strtok_r(line, " \t\n", &save);
		char *dir = spec ? strtok_r(NULL, " \t\n", &save) : NULL;
		char *type = dir ? strtok_r(NULL, " \t\n", &save) : NULL;
		char *opts = type ? strtok_r(NULL, " \t\n", &save) : NULL;

		if (!spec || spec[0] == '#' || !opts)
			continue;
		unescape(spec);
		unescape(opts);
		if (!spec_matches(spec, id))
			continue;
		found = 1;
		snprintf(d->source, sizeof(d->source), "%s", path);
		take_options(opts, d);
	}
	fclose(f);
	return found;
}

/* The root filesystem's rootflags= from /proc/cmdline. */
static void
from_cmdline(const struct fs_id *id, struct fsck_devs *d)
{
	FILE *f = fopen("/proc/cmdline", "r");
	char line[8192], *save = NULL, *root = NULL, *flags = NULL;

	if (!f)
		return;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return;
	}
	fclose(f);
	for (char *w = strtok_r(line, " \t\n", &save); w;
	     w = strtok_r(NULL, " \t\n", &save)) {
		if (!strncmp(w, "root=", 5))
			root = w + 5;
		else if (!strncmp(w, "rootflags=", 10))
			flags = w + 10;
	}
	if (root && flags && spec_matches(root, id)) {
		snprintf(d->source, sizeof(d->source), "/proc/cmdline");
		take_options(flags, d);
	}
}

int
fsck_find_devices(const char *device, struct fsck_devs *d)
{
	const char *table = getenv("LIBMOUNT_FSTAB");
	struct fs_id id;
	int found;

	memset(d, 0, sizeof(*d));
	if (!table || !*table)
		table = "/etc/fstab";
	read_id(device, &id);
	found = from_fstab(table, &id, d);
	if (found < 0) {
		snprintf(d->source, sizeof(d->source), "%s: %s", table,
			 strerror(errno));
		return -1;
	}
	if (!found)
		from_cmdline(&id, d);
	return 0;
}
