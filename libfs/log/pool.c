// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A parallel loop for log replay: run a job for every index of a range
 * on a few threads, the caller's among them, and return when all are
 * done.  The jobs take indices from a shared counter, so which thread
 * runs which job varies from run to run; callers keep their results
 * independent of that by having each job write only its own slot (and
 * its own buffers), and by reading the slots in index order afterwards.
 * With one thread (or one job) everything runs on the caller's thread.
 * Threads that cannot be started only mean fewer helpers: the caller
 * still runs every job left.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include <xfskit/fault.h>

#include "log_priv.h"

struct par {
	void		(*fn)(void *ctx, size_t i);
	void		*ctx;
	size_t		n;
	atomic_size_t	next;
};

static void *
par_main(void *arg)
{
	struct par *p = arg;
	size_t i;

	while ((i = atomic_fetch_add(&p->next, 1)) < p->n)
		p->fn(p->ctx, i);
	return NULL;
}

unsigned int
log_threads_default(unsigned int threads)
{
	long cpus;

	if (threads)
		return threads > LOG_MAX_THREADS ? LOG_MAX_THREADS : threads;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 1)
		return 1;
	return cpus > LOG_MAX_THREADS ? LOG_MAX_THREADS : (unsigned int)cpus;
}

void
log_par_for(unsigned int threads, size_t n, void (*fn)(void *ctx, size_t i),
	    void *ctx)
{
	pthread_t tid[LOG_MAX_THREADS];
	struct par p = { .fn = fn, .ctx = ctx, .n = n };
	unsigned int started = 0;

	atomic_init(&p.next, 0);
	if (threads > LOG_MAX_THREADS)
		threads = LOG_MAX_THREADS;
	if (threads > n)
		threads = (unsigned int)n;
	for (unsigned int t = 1; t < threads; t++) {
		/* Fewer threads do the same work: the caller helps. */
		if (xk_fault(XK_FAULT_THREAD) ||
		    pthread_create(&tid[started], NULL, par_main, &p))
			break;
		started++;
	}
	par_main(&p);
	for (unsigned int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
}
