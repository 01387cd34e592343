/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A scratch directory for the vector spill tests (test_vec, test_vec_move):
 * made under $TMPDIR (or /var/tmp), and counted, since spilled vectors
 * must leave no file behind.
 */
#ifndef XFSKIT_TESTS_SPILLDIR_H
#define XFSKIT_TESTS_SPILLDIR_H

#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char spill_dir[PATH_MAX];

/* Make spill_dir, named after the test (name: a mkdtemp prefix). */
static inline void
spill_dir_make(const char *name)
{
	const char *t = getenv("TMPDIR");

	snprintf(spill_dir, sizeof(spill_dir), "%s/%s.XXXXXX",
		 t && *t ? t : "/var/tmp", name);
	ck_assert_ptr_nonnull(mkdtemp(spill_dir));
}

/* Entries in spill_dir other than . and .. */
static inline int
spill_dir_entries(void)
{
	DIR *d = opendir(spill_dir);
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

#endif /* XFSKIT_TESTS_SPILLDIR_H */
