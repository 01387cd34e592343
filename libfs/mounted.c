// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Is a device or an image file mounted (see include/xfskit/mounted.h)?
 *
 * A block device matches the major:minor field of /proc/self/mountinfo,
 * directly or through one of its partitions (/sys/dev/block/M:m/NAMEpN).
 * An image file matches through the loop devices it backs.  The backing
 * file of a loop device is identified by the device and inode numbers
 * the loop driver reports (LOOP_GET_STATUS64), which stay right when the
 * file was renamed or unlinked; only when /dev/loopN cannot be opened is
 * the sysfs backing_file name used (stripped of " (deleted)").
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <xfskit/mounted.h>

/* Is a comma-separated option list's first option "ro"? */
static int
opts_ro(const char *opts)
{
	return opts && !strncmp(opts, "ro", 2) &&
	       (opts[2] == '\0' || opts[2] == ',' || opts[2] == '\n' ||
		opts[2] == ' ');
}

/*
 * Does this mountinfo line mount devnum?  Fields (proc(5)): mount id,
 * parent id, major:minor, root, mount point, mount options, optional
 * fields, "-", fs type, source, super options.  A mount is read-only
 * when its mount options or its superblock options say so.
 */
static void
match_line(char *line, dev_t devnum, struct xk_mounted *ms)
{
	char *field[6], *save = NULL, *sep, *super = NULL, *s2 = NULL;
	unsigned int maj, min;
	int i, ro;

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
			return;
	}
	if (sscanf(field[2], "%u:%u", &maj, &min) != 2 ||
	    makedev(maj, min) != devnum)
		return;
	ro = opts_ro(field[5]) || opts_ro(super);
	if (!ms->mounted)
		ms->readonly = 1;
	ms->mounted = 1;
	if (!ro)
		ms->readonly = 0;
	if (!strcmp(field[4], "/"))
		ms->is_root = 1;
	if (!ms->where[0] || !strcmp(field[4], "/"))
		snprintf(ms->where, sizeof(ms->where), "%s", field[4]);
}

static int
scan_mountinfo(dev_t devnum, struct xk_mounted *ms)
{
	char line[8192];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		match_line(line, devnum, ms);
	fclose(f);
	return 0;
}

static int
read_devnum(const char *path, dev_t *devnum)
{
	unsigned int maj, min;
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return 0;
	ok = fscanf(f, "%u:%u", &maj, &min) == 2;
	fclose(f);
	if (ok)
		*devnum = makedev(maj, min);
	return ok;
}

/* devnum and, for a whole disk, each of its partitions. */
static int
scan_disk(dev_t devnum, struct xk_mounted *ms)
{
	char dir[96], path[512];
	struct dirent *de;
	DIR *d;
	int err = scan_mountinfo(devnum, ms);

	if (err)
		return err;
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u", major(devnum),
		 minor(devnum));
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		dev_t part;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/partition", dir,
			 de->d_name);
		if (access(path, F_OK))
			continue;
		snprintf(path, sizeof(path), "%s/%s/dev", dir, de->d_name);
		if (read_devnum(path, &part))
			scan_mountinfo(part, ms);
	}
	closedir(d);
	return 0;
}

/* Does loop device NAME (a /sys/block entry) read from the file st? */
static int
loop_backs(const char *name, const struct stat *st)
{
	struct loop_info64 li;
	char path[512], backing[4096];
	struct stat bst;
	size_t n;
	FILE *f;
	char *cut;
	int fd;

	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		int got = ioctl(fd, LOOP_GET_STATUS64, &li) == 0;

		close(fd);
		if (got) {
			/* lo_device is the kernel's new_encode_dev(). */
			unsigned int maj = (unsigned int)
				((li.lo_device & 0xfff00) >> 8);
			unsigned int min = (unsigned int)
				((li.lo_device & 0xff) |
				 ((li.lo_device >> 12) & 0xfff00));

			return makedev(maj, min) == st->st_dev &&
			       li.lo_inode == st->st_ino;
		}
		if (errno == ENXIO)
			return 0;	/* not bound to a file */
	}
	snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", name);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(backing, 1, sizeof(backing) - 1, f);
	fclose(f);
	backing[n] = '\0';
	cut = strchr(backing, '\n');
	if (cut)
		*cut = '\0';
	cut = strstr(backing, " (deleted)");
	if (cut && cut[10] == '\0')
		*cut = '\0';
	return !stat(backing, &bst) && bst.st_dev == st->st_dev &&
	       bst.st_ino == st->st_ino;
}

/* Every loop device backed by the file st describes. */
static int
scan_loops(const struct stat *st, struct xk_mounted *ms)
{
	DIR *d = opendir("/sys/block");
	struct dirent *de;
	int err = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && !err) {
		struct xk_mounted one;
		char path[512];
		dev_t devnum;

		if (strncmp(de->d_name, "loop", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/dev", de->d_name);
		if (!read_devnum(path, &devnum))
			continue;
		/* Only a mounted loop device matters: look at that first. */
		memset(&one, 0, sizeof(one));
		err = scan_disk(devnum, &one);
		if (err || !one.mounted || !loop_backs(de->d_name, st))
			continue;
		if (!ms->mounted || !one.readonly)
			ms->readonly = one.readonly;
		ms->mounted = 1;
		ms->is_root |= one.is_root;
		if (!ms->where[0] || one.is_root) {
			snprintf(ms->where, sizeof(ms->where), "%s", one.where);
			snprintf(ms->via, sizeof(ms->via), "/dev/%.58s",
				 de->d_name);
		}
	}
	closedir(d);
	return err;
}

int
xk_mounted_state(const char *path, struct xk_mounted *ms)
{
	struct stat st;

	memset(ms, 0, sizeof(*ms));
	if (stat(path, &st))
		return -errno;
	if (S_ISBLK(st.st_mode))
		return scan_disk(st.st_rdev, ms);
	if (S_ISREG(st.st_mode))
		return scan_loops(&st, ms);
	return 0;
}

void
xk_mounted_describe(const struct xk_mounted *ms, char *buf, size_t len)
{
	snprintf(buf, len, "mounted %s on %s%s%s",
		 ms->readonly ? "read-only" : "read-write", ms->where,
		 ms->via[0] ? " through " : "", ms->via);
}
