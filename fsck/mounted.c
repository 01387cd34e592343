// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Is a device (or an image file) mounted?  fsck must know before it
 * writes anything: the kernel caches metadata of a mounted filesystem
 * and would overwrite or trust stale copies of what we change.
 *
 * A block device matches the major:minor field of /proc/self/mountinfo.
 * An image file matches through the loop devices backed by it (the
 * backing_file of each /sys/block/loopN/loop, compared by device and
 * inode so another path to the same file still matches), each then
 * looked up by its major:minor.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fsck.h"

/*
 * Does this mountinfo line mount devnum?  Fields (proc(5)): mount id,
 * parent id, major:minor, root, mount point, mount options, optional
 * fields, "-", fs type, source, super options.
 */
static int
match_line(char *line, dev_t devnum, struct fsck_mount_state *ms)
{
	char *field[6], *save = NULL, *sep, *super = NULL, *s2 = NULL;
	unsigned int maj, min;
	int i, ro;

	/* The super options follow " - type source "; cut them off first. */
	sep = strstr(line, " - ");
	if (sep) {
		*sep = '\0';
		strtok_r(sep + 3, " \n", &s2);		/* type */
		strtok_r(NULL, " \n", &s2);		/* source */
		super = strtok_r(NULL, " \n", &s2);
	}
	for (i = 0; i < 6; i++) {
		field[i] = strtok_r(i ? NULL : line, " \n", &save);
		if (!field[i])
			return 0;
	}
	if (sscanf(field[2], "%u:%u", &maj, &min) != 2 ||
	    makedev(maj, min) != devnum)
		return 0;
	ro = !strncmp(field[5], "ro", 2) && (field[5][2] == '\0' ||
					     field[5][2] == ',');
	if (super && !strncmp(super, "ro", 2) &&
	    (super[2] == '\0' || super[2] == ','))
		ro = 1;
	if (!ms->mounted)
		ms->readonly = 1;
	ms->mounted = 1;
	if (!ro)
		ms->readonly = 0;
	if (!strcmp(field[4], "/"))
		ms->is_root = 1;
	if (!ms->where[0] || !strcmp(field[4], "/"))
		snprintf(ms->where, sizeof(ms->where), "%s", field[4]);
	return 1;
}

static int
scan_mountinfo(dev_t devnum, struct fsck_mount_state *ms)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		match_line(line, devnum, ms);
	fclose(f);
	return 0;
}

/* Every loop device backed by the file st describes. */
static void
scan_loops(const struct stat *st, struct fsck_mount_state *ms)
{
	DIR *d = opendir("/sys/block");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[512], backing[4096];
		unsigned int maj, min;
		struct stat bst;
		FILE *f;
		size_t n;
		char *nl;

		if (strncmp(de->d_name, "loop", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(backing, 1, sizeof(backing) - 1, f);
		fclose(f);
		backing[n] = '\0';
		nl = strchr(backing, '\n');
		if (nl)
			*nl = '\0';
		if (stat(backing, &bst) || bst.st_dev != st->st_dev ||
		    bst.st_ino != st->st_ino)
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/dev", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%u:%u", &maj, &min) == 2)
			scan_mountinfo(makedev(maj, min), ms);
		fclose(f);
	}
	closedir(d);
}

/*
 * Fill *ms for path.  Returns 0, or -1 when path cannot be examined
 * (the caller reports errno).
 */
int
fsck_mount_state(const char *path, struct fsck_mount_state *ms)
{
	struct stat st;

	memset(ms, 0, sizeof(*ms));
	if (stat(path, &st))
		return -1;
	if (S_ISBLK(st.st_mode))
		return scan_mountinfo(st.st_rdev, ms);
	if (S_ISREG(st.st_mode))
		scan_loops(&st, ms);
	return 0;
}
