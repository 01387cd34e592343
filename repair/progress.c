// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Progress.  On a terminal, one live line per metered phase (2: AGs,
 * 3: inode chunks, 4: AGs, 6: inodes and entries) redrawn in place:
 * what, the share done, the rate and the time left ("Phase 3 - inode
 * chunks: 45% (5760/12800 chunks), 23040 inodes/s, 0:12 left"); any
 * other line clears it first (live_clear).  With -t N, a plain line
 * every N seconds in xfs_repair's shape, for logs.  With
 * --progress-fd N, e2fsck's -C lines ("phase done total device") on N,
 * for fsck.xfskit -C and front ends: each phase's start, and the
 * metered phases as they go.
 *
 * A meter counts work done from any thread (the inode scan's workers
 * add to their parent's); only the thread that started it draws.  The
 * time left is the time spent so far scaled by what remains: with the
 * work spread evenly it converges as the phase goes on.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "repair.h"

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The redraw interval on a terminal. */
#define METER_DRAW_MS	200

void
meter_start(struct repair_ctx *rc, struct repair_meter *m, const char *what,
	    const char *unit, unsigned int per_unit, uint64_t total)
{
	m->what = what;
	m->unit = unit;
	m->per_unit = per_unit ? per_unit : 1;
	m->total = total;
	atomic_store(&m->done, 0);
	m->start_ms = now_ms();
	m->drawn_ms = 0;
	m->printed_ms = m->start_ms;
	m->owner = pthread_self();
	m->shown = 0;
	/* "Phase 3 - ...": the phase number for --progress-fd. */
	m->phase = strncmp(what, "Phase ", 6) ? 0 : atoi(what + 6);
	rc->meter = m;
	meter_show(rc, 1);
}

void
meter_add(struct repair_ctx *rc, uint64_t n)
{
	if (rc->meter)
		atomic_fetch_add(&rc->meter->done, n);
}

/* "0:42", "1:02:03". */
static void
fmt_secs(char *buf, size_t len, int64_t s)
{
	if (s >= 3600)
		snprintf(buf, len, "%lld:%02lld:%02lld", (long long)(s / 3600),
			 (long long)(s / 60 % 60), (long long)(s % 60));
	else
		snprintf(buf, len, "%lld:%02lld", (long long)(s / 60),
			 (long long)(s % 60));
}

void
meter_show(struct repair_ctx *rc, int force)
{
	struct repair_meter *m = rc->meter;
	uint64_t done, total;
	int64_t now, spent;
	char left[32] = "";
	unsigned int pct;
	double rate;

	if (!m || !pthread_equal(m->owner, pthread_self()) ||
	    (!rc->opt.progress && !rc->opt.report_secs &&
	     rc->opt.progress_fd < 0))
		return;
	now = now_ms();
	if (!force && now - m->drawn_ms < METER_DRAW_MS)
		return;
	m->drawn_ms = now;
	done = atomic_load(&m->done);
	total = m->total;
	if (done > total)
		total = done;
	pct = total ? (unsigned int)(done * 100 / total) : 0;
	spent = now - m->start_ms;
	rate = spent > 0 ? (double)done * m->per_unit * 1000.0 / spent : 0;
	if (done && done < total && spent >= 1000) {
		char t[24];

		fmt_secs(t, sizeof(t), spent * (int64_t)(total - done) /
			 (int64_t)done / 1000);
		snprintf(left, sizeof(left), ", %s left", t);
	}
	if (m->phase)
		progress_fd_line(rc, m->phase, done, total);
	if (rc->opt.progress) {
		char speed[48] = "";

		/*
		 * A slow unit (an AG) gets a decimal: never "0 AGs/s"; and no
		 * rate at all before a tenth of a second has passed (a phase
		 * done at once would show "0.0 AGs/s").
		 */
		if (spent >= 100)
			snprintf(speed, sizeof(speed), ", %.*f %s/s",
				 rate < 10 ? 1 : 0, rate, m->unit);
		fprintf(stderr, "\r\033[K%s: %u%% (%llu/%llu)%s%s",
			m->what, pct, (unsigned long long)done,
			(unsigned long long)total, speed, left);
		fflush(stderr);
		m->shown = 1;
	}
	/*
	 * -t: periodic lines for logs, in the shape of xfs_repair's ("-
	 * 12:34:56: ... - N of M ... done"), which fstests filters out.
	 */
	if (rc->opt.report_secs && done < total &&
	    now - m->printed_ms >= (int64_t)rc->opt.report_secs * 1000) {
		time_t t = time(NULL);
		struct tm tm;

		localtime_r(&t, &tm);
		fprintf(rc->opt.progress || rc->opt.json ? stderr : rc->out,
			"%s        - %02d:%02d:%02d: %s - %llu of %llu %s done "
			"(%u%%%s)\n", rc->opt.progress ? "\r\033[K" : "",
			tm.tm_hour, tm.tm_min, tm.tm_sec, m->what,
			(unsigned long long)done * m->per_unit,
			(unsigned long long)total * m->per_unit, m->unit, pct,
			left);
		m->printed_ms = now;
	}
}

void
meter_step(struct repair_ctx *rc)
{
	struct repair_meter *m = rc->meter;

	/* The clock is read once in 4096 steps. */
	if (m && !(atomic_fetch_add(&m->done, 1) & 4095))
		meter_show(rc, 0);
}

void
live_clear(struct repair_ctx *rc)
{
	struct repair_meter *m = rc->meter;

	/* Only the thread that draws the line prints beside it. */
	if (rc->opt.progress && m && m->shown &&
	    pthread_equal(m->owner, pthread_self())) {
		fputs("\r\033[K", stderr);
		m->shown = 0;
	}
}

void
meter_end(struct repair_ctx *rc)
{
	if (!rc->meter)
		return;
	/* The last state drawn is the phase's end: 100% when it finished. */
	meter_show(rc, 1);
	if (rc->opt.progress && pthread_equal(rc->meter->owner,
					      pthread_self())) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}
	rc->meter = NULL;
}

void
workers_done_add(struct workers_done *d)
{
	pthread_mutex_lock(&d->lock);
	d->n++;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

/*
 * Wait until N workers have finished, drawing the meter they count into
 * every 50 ms meanwhile.
 */
void
workers_done_wait(struct workers_done *d, unsigned int n,
		  struct repair_ctx *rc)
{
	struct timespec until;

	pthread_mutex_lock(&d->lock);
	while (d->n < n) {
		pthread_mutex_unlock(&d->lock);
		meter_show(rc, 0);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 50 * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&d->lock);
		if (d->n < n)
			pthread_cond_timedwait(&d->cond, &d->lock, &until);
	}
	pthread_mutex_unlock(&d->lock);
}

void
progress_fd_line(struct repair_ctx *rc, int phase, uint64_t done,
		 uint64_t total)
{
	char line[PATH_MAX + 64];
	int n;

	if (rc->opt.progress_fd < 0 || phase <= 0)
		return;
	n = snprintf(line, sizeof(line), "%d %llu %llu %s\n", phase,
		     (unsigned long long)done, (unsigned long long)total,
		     rc->opt.device);
	/* A reader that went away is not the check's failure. */
	if (n > 0 && (size_t)n < sizeof(line) &&
	    write(rc->opt.progress_fd, line, (size_t)n) < 0)
		rc->opt.progress_fd = -1;
}
