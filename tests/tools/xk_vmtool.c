// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Run inside the quota test VM (tests/scripts/log_dquot.sh), where there
 * is only busybox: "shutdown MNT" shuts the filesystem down with the log
 * forced (what xfs_io -x -c 'shutdown -f' does), "proj FILE ID" sets a
 * file's project id.  Linked statically so it needs nothing there.
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* XFS_IOC_GOINGDOWN and its "flush the log first" flag. */
#define VM_IOC_GOINGDOWN	_IOR('X', 125, uint32_t)
#define VM_GOING_LOGFLUSH	0x1

int
main(int argc, char **argv)
{
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: xk_vmtool shutdown MNT | proj FILE ID\n");
		return 2;
	}
	fd = open(argv[2], O_RDONLY);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "shutdown")) {
		uint32_t how = VM_GOING_LOGFLUSH;

		if (ioctl(fd, VM_IOC_GOINGDOWN, &how)) {
			perror("shutdown");
			return 1;
		}
		return 0;
	}
	if (!strcmp(argv[1], "proj") && argc == 4) {
		struct fsxattr fa;

		if (ioctl(fd, FS_IOC_FSGETXATTR, &fa)) {
			perror("FS_IOC_FSGETXATTR");
			return 1;
		}
		fa.fsx_projid = (uint32_t)strtoul(argv[3], NULL, 10);
		if (ioctl(fd, FS_IOC_FSSETXATTR, &fa)) {
			perror("FS_IOC_FSSETXATTR");
			return 1;
		}
		return 0;
	}
	fprintf(stderr, "xk_vmtool: unknown command %s\n", argv[1]);
	return 2;
}
