/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared runner for the Check unit tests. */
#ifndef XFSKIT_TESTS_UNIT_H
#define XFSKIT_TESTS_UNIT_H

#include <check.h>

/* Run every test of the suite; the exit status for main(). */
static inline int
unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif /* XFSKIT_TESTS_UNIT_H */
