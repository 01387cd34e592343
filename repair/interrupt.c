// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SIGINT, SIGTERM and SIGHUP during a repair.  The first signal only
 * asks the run to stop: the phase under way finishes (a phase that
 * writes leaves every block it changed written, never half of them),
 * repair_phase_end() then stops the run as after an operational error,
 * and the exit status is 128 + the signal, as a shell reports a killed
 * command (fsck.xfskit turns it into fsck's "cancelled").  A second
 * signal quits at once: every block written so far is complete and the
 * undo file (-z) was durable before each of them, so even then
 * xfskit-undo restores the device (with -f: the run could not record the
 * state it left the device in, which xfskit-undo otherwise verifies).
 *
 * The handler writes its note straight to stderr.  Standard output is
 * line buffered (repair_interrupt_install), so what it holds unwritten
 * is never more than a line in the making, and a note never lands in
 * the middle of a written line, in a terminal or in a log file.
 *
 * The flag is the tool's, not libfs's: one process, one run.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "repair.h"

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t clear_line;

static void
say(const char *msg)
{
	/* write(2) only: a handler may not use stdio. */
	ssize_t r;

	if (clear_line)
		r = write(STDERR_FILENO, "\r\033[K", 4);
	r = write(STDERR_FILENO, msg, strlen(msg));
	(void)r;
}

static void
on_signal(int signo)
{
	if (stop_signal) {
		say("xfskit-repair: interrupted again: quitting now; every "
		    "block written is complete: run xfskit-repair again to "
		    "finish, or 'xfskit-undo -f' with the -z file to restore\n");
		_exit(128 + signo);
	}
	stop_signal = signo;
	say("xfskit-repair: interrupted: stopping after the current phase "
	    "(interrupt again to quit at once)\n");
}

int
repair_interrupt_install(int progress_line)
{
	struct sigaction sa;
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	clear_line = progress_line;
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* Restart reads and writes: the device layer retries EINTR too. */
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL))
			return -1;
	return 0;
}

int
repair_interrupted(void)
{
	return stop_signal;
}
