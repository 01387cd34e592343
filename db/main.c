// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-db: not built yet.  This skeleton answers -V and -h so that the
 * tree installs and the man page has something to describe; the real
 * tool is tracked in its own issue.
 */
#include <stdio.h>
#include <string.h>

#include <xfskit/libfs.h>

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "-V") == 0) {
		printf("xfskit-db version %s\n", xk_version());
		return 0;
	}
	fprintf(argc == 2 && strcmp(argv[1], "-h") == 0 ? stdout : stderr,
		"xfskit-db: not implemented yet (only -V and -h work)\n");
	return argc == 2 && strcmp(argv[1], "-h") == 0 ? 0 : 1;
}
