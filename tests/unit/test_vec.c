// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The spilling vector (libfs/vec.c, include/xfskit/vec.h): heap vectors stay
 * on the heap; tied to a spill context they move to an unlinked file
 * past the threshold, keep every element through growth, sorting and
 * trimming (also while another thread appends and the trimmer unmaps
 * pages under it), leave no name in the spill directory, and give their
 * pages back to the kernel when trimmed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <limits.h>
#include <signal.h>

#include <xfskit/vec.h>

#include "spilldir.h"
#include "unit.h"

struct rec {
	uint32_t	a, b;
	uint64_t	c, d;
};

static struct rec
rec_of(uint64_t i)
{
	return (struct rec){ (uint32_t)i, (uint32_t)(i * 7), i * 31, ~i };
}

static void
fill(struct xk_vec *v, uint64_t n)
{
	/* No ck_assert in loops: each one costs a message to the parent. */
	for (uint64_t i = 0; i < n; i++) {
		struct rec r = rec_of(i);

		if (xk_vec_push(v, &r, sizeof(r)))
			ck_abort_msg("push %llu failed", (unsigned long long)i);
	}
}

static void
check_all(const struct xk_vec *v, uint64_t n)
{
	const struct rec *r = v->v;

	ck_assert_uint_eq(v->n, n);
	for (uint64_t i = 0; i < n; i++) {
		struct rec want = rec_of(i);

		if (memcmp(&r[i], &want, sizeof(want)))
			ck_abort_msg("element %llu differs",
				     (unsigned long long)i);
	}
}

static uint64_t
statm_field(int field)
{
	unsigned long long f[3];
	FILE *fp = fopen("/proc/self/statm", "r");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fscanf(fp, "%llu %llu %llu", &f[0], &f[1], &f[2]),
			 3);
	fclose(fp);
	return f[field] * (uint64_t)sysconf(_SC_PAGESIZE);
}

START_TEST(heap_only)
{
	struct xk_vec v = { 0 };

	fill(&v, 5000);
	ck_assert_ptr_null(v.map);
	check_all(&v, 5000);
	xk_vec_free(&v);
	ck_assert_ptr_null(v.v);
	ck_assert_uint_eq(v.n, 0);
}
END_TEST

START_TEST(spills_past_threshold)
{
	struct xk_vec_spill sp;
	struct xk_vec v = { 0 };
	int in_memory;
	char link[64], target[PATH_MAX];
	ssize_t len;

	spill_dir_make("xk-vec");
	ck_assert_int_eq(xk_vec_spill_start(&sp, spill_dir, 8192, 0,
					 &in_memory), 0);
	v.spill = &sp;
	fill(&v, 100);			/* 2400 bytes: on the heap */
	ck_assert_ptr_null(v.map);
	for (uint64_t i = 100; i < 200000; i++) {
		struct rec r = rec_of(i);

		if (xk_vec_push(&v, &r, sizeof(r)))
			ck_abort_msg("push %llu failed", (unsigned long long)i);
	}
	ck_assert_ptr_nonnull(v.map);
	ck_assert_uint_eq(sp.files, 1);
	ck_assert_uint_eq(sp.failed, 0);
	ck_assert_ptr_eq(sp.head, v.map);
	ck_assert_uint_ge(sp.mapped, 200000 * sizeof(struct rec));
	check_all(&v, 200000);
	/* The file has no name: gone from the directory, "(deleted)". */
	ck_assert_int_eq(spill_dir_entries(), 0);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", v.map->fd);
	len = readlink(link, target, sizeof(target) - 1);
	ck_assert_int_gt(len, 0);
	target[len] = 0;
	ck_assert_ptr_nonnull(strstr(target, "(deleted)"));
	xk_vec_free(&v);
	ck_assert_ptr_null(sp.head);
	ck_assert_uint_eq(sp.mapped, 0);
	ck_assert_ptr_eq(v.spill, &sp);
	ck_assert_int_eq(fcntl(atoi(link + 14), F_GETFD), -1);
	xk_vec_spill_stop(&sp);
	rmdir(spill_dir);
}
END_TEST

static int
cmp_rec_desc(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return (x->a < y->a) - (x->a > y->a);
}

START_TEST(sort_append_and_trim)
{
	struct xk_vec_spill sp;
	struct xk_vec v = { 0 }, w = { 0 };
	const struct rec *r;
	uint64_t n = 400000, before, after;
	int in_memory;

	spill_dir_make("xk-vec");
	ck_assert_int_eq(xk_vec_spill_start(&sp, spill_dir, 0, 0, &in_memory),
			 0);
	v.spill = w.spill = &sp;
	fill(&v, n);
	ck_assert_ptr_nonnull(v.map);
	/* Pages mapped and touched count as shared resident memory. */
	before = statm_field(2);
	xk_vec_spill_trim(&sp);
	after = statm_field(2);
	ck_assert_uint_eq(sp.trims, 1);
	ck_assert_msg(before - after >= n * sizeof(struct rec) / 2,
		      "trim released %llu of %llu bytes",
		      (unsigned long long)(before - after),
		      (unsigned long long)(n * sizeof(struct rec)));
	/* Nothing was lost by dropping the pages. */
	check_all(&v, n);
	xk_vec_sort(&v, sizeof(struct rec), cmp_rec_desc);
	r = v.v;
	for (uint64_t i = 0; i < n; i++)
		if (r[i].a != n - 1 - i)
			ck_abort_msg("not sorted at %llu", (unsigned long long)i);
	/* Append many; and force a small vector into a file. */
	ck_assert_int_eq(xk_vec_append(&w, v.v, v.n, sizeof(struct rec)), 0);
	ck_assert_uint_eq(w.n, n);
	ck_assert_int_eq(memcmp(w.v, v.v, n * sizeof(struct rec)), 0);
	xk_vec_free(&w);
	sp.threshold = SIZE_MAX;
	fill(&w, 10);
	ck_assert_ptr_null(w.map);
	ck_assert_int_eq(xk_vec_spill_now(&w, sizeof(struct rec)), 0);
	ck_assert_ptr_nonnull(w.map);
	check_all(&w, 10);
	xk_vec_free(&w);
	xk_vec_free(&v);
	ck_assert_ptr_null(sp.head);
	xk_vec_spill_stop(&sp);
	rmdir(spill_dir);
}
END_TEST

struct writer {
	struct xk_vec	v;
	uint64_t	n;
	int		err;
};

static void *
writer_main(void *arg)
{
	struct writer *w = arg;

	for (uint64_t i = 0; i < w->n && !w->err; i++) {
		struct rec r = rec_of(i);

		w->err = xk_vec_push(&w->v, &r, sizeof(r));
	}
	return NULL;
}

/* The trimmer unmaps pages while two threads append and grow. */
START_TEST(trimmer_under_load)
{
	struct xk_vec_spill sp;
	struct writer w[2];
	pthread_t t[2];
	int in_memory;

	spill_dir_make("xk-vec");
	ck_assert_int_eq(xk_vec_spill_start(&sp, spill_dir, 4096, 1,
					 &in_memory), 0);
	ck_assert_int_eq(sp.trimming, 1);
	for (int i = 0; i < 2; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].v.spill = &sp;
		w[i].n = 600000;	/* 14 MiB each, over the floor */
		ck_assert_int_eq(pthread_create(&t[i], NULL, writer_main,
						&w[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	/* Let the trimmer see the finished vectors at least once. */
	for (int i = 0; i < 100 && !sp.trims; i++)
		usleep(10000);
	pthread_mutex_lock(&sp.lock);
	ck_assert_uint_gt(sp.trims, 0);
	pthread_mutex_unlock(&sp.lock);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(w[i].err, 0);
		check_all(&w[i].v, w[i].n);
		xk_vec_free(&w[i].v);
	}
	xk_vec_spill_stop(&sp);
	ck_assert_int_eq(spill_dir_entries(), 0);
	rmdir(spill_dir);
}
END_TEST

/*
 * A file that cannot grow (here past RLIMIT_FSIZE, as on a full disk):
 * the vector goes back to the heap with every element.
 */
START_TEST(file_full_back_to_heap)
{
	struct rlimit old, rl;
	struct xk_vec_spill sp;
	struct xk_vec v = { 0 };
	int in_memory;

	spill_dir_make("xk-vec");
	ck_assert_int_eq(xk_vec_spill_start(&sp, spill_dir, 8192, 0,
					 &in_memory), 0);
	v.spill = &sp;
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	rl = old;
	rl.rlim_cur = 256 << 10;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	fill(&v, 5000);			/* 120 KB: in a file */
	ck_assert_ptr_nonnull(v.map);
	ck_assert_uint_eq(sp.failed, 0);
	for (uint64_t i = 5000; i < 50000; i++) {
		struct rec r = rec_of(i);

		if (xk_vec_push(&v, &r, sizeof(r)))
			ck_abort_msg("push %llu failed", (unsigned long long)i);
	}
	setrlimit(RLIMIT_FSIZE, &old);
	ck_assert_ptr_null(v.map);
	ck_assert_ptr_null(sp.head);
	ck_assert_uint_ge(sp.failed, 1);
	check_all(&v, 50000);
	xk_vec_free(&v);
	xk_vec_spill_stop(&sp);
	ck_assert_int_eq(spill_dir_entries(), 0);
	rmdir(spill_dir);
}
END_TEST

START_TEST(bad_dir)
{
	struct xk_vec_spill sp;
	int in_memory;

	ck_assert_int_lt(xk_vec_spill_start(&sp, "/nonexistent/xk-spill", 0, 0,
					 &in_memory), 0);
	xk_vec_spill_stop(&sp);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("vec");
	TCase *tc = tcase_create("vec");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, heap_only);
	tcase_add_test(tc, spills_past_threshold);
	tcase_add_test(tc, sort_append_and_trim);
	tcase_add_test(tc, trimmer_under_load);
	tcase_add_test(tc, file_full_back_to_heap);
	tcase_add_test(tc, bad_dir);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
