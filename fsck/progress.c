// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsck.xfskit -C FD: fsck(8)'s progress, from xfskit-repair's
 * --progress-fd lines ("phase done total device", e2fsck's protocol).
 * FD above 0: the checker writes its lines there itself (the descriptor
 * is inherited).  FD 0: as e2fsck -C 0, a completion bar on standard
 * output, drawn by a thread that reads the checker's lines from a pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsck.h"

#define BAR_WIDTH	40

static void *
bar_main(void *arg)
{
	struct fsck_progress *p = arg;
	FILE *in = fdopen(p->pipe_r, "r");
	char line[4200];
	int last = -1, lastphase = 0;

	if (!in) {
		close(p->pipe_r);
		return NULL;
	}
	while (fgets(line, sizeof(line), in)) {
		unsigned long long done, total;
		int phase, permille, fill;
		char bar[BAR_WIDTH + 1];

		if (sscanf(line, "%d %llu %llu", &phase, &done, &total) != 3 ||
		    !total || done > total)
			continue;
		permille = (int)(done * 1000 / total);
		if (phase == lastphase && permille == last)
			continue;
		fill = permille * BAR_WIDTH / 1000;
		memset(bar, '=', (size_t)fill);
		memset(bar + fill, ' ', (size_t)(BAR_WIDTH - fill));
		bar[BAR_WIDTH] = '\0';
		printf("\r%s: phase %d |%s| %5.1f%%", p->device, phase, bar,
		       permille / 10.0);
		fflush(stdout);
		p->drawn = 1;
		last = permille;
		lastphase = phase;
	}
	fclose(in);
	return NULL;
}

int
fsck_progress_start(struct fsck_progress *p)
{
	int fds[2];

	p->arg[0] = '\0';
	if (p->fd < 0)
		return 0;
	if (p->fd > 0) {
		if (fcntl(p->fd, F_GETFD) < 0)
			return -errno;
		snprintf(p->arg, sizeof(p->arg), "--progress-fd=%d", p->fd);
		return 0;
	}
	/* The read end stays ours; the write end is the checker's. */
	if (pipe(fds))
		return -errno;
	p->pipe_r = fds[0];
	p->pipe_w = fds[1];
	if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) < 0 ||
	    pthread_create(&p->thread, NULL, bar_main, p)) {
		close(fds[0]);
		close(fds[1]);
		return -EAGAIN;
	}
	p->running = 1;
	snprintf(p->arg, sizeof(p->arg), "--progress-fd=%d", fds[1]);
	return 0;
}

const char *
fsck_progress_arg(const struct fsck_progress *p)
{
	return p->arg[0] ? p->arg : NULL;
}

void
fsck_progress_stop(struct fsck_progress *p)
{
	if (!p->running)
		return;
	/* The checker has exited: with our end closed the reader ends. */
	close(p->pipe_w);
	pthread_join(p->thread, NULL);
	p->running = 0;
	p->arg[0] = '\0';
	if (p->drawn)
		printf("\n");
	p->drawn = 0;
}
