// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The LIBXFS_DEBUG_WRITE_CRASH hook (write_crash.h).  Its state is
 * process-wide, against libfs's rule that state hangs off a handle, for
 * the reasons the fault injector gives (fault.c): "the Nth write" counts
 * the writes of every handle of the run to the one device, and the state
 * is set once from the environment and then only counted atomically.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/write_crash.h>

static struct {
	pthread_once_t	once;
	int		bad;		/* the variable did not parse */
	char		why[128];
	unsigned long	limit;		/* data device writes allowed; 0 off */
	unsigned long	count;		/* atomic */
} wc = { .once = PTHREAD_ONCE_INIT };

/* "name=N[,name=N...]" with names ddev, logdev, rtdev; 0 or -EINVAL. */
static int
parse(const char *s)
{
	while (*s) {
		size_t len = strcspn(s, "=,");
		char *end;
		unsigned long n;

		if (!((len == 4 && !strncmp(s, "ddev", 4)) ||
		      (len == 6 && !strncmp(s, "logdev", 6)) ||
		      (len == 5 && !strncmp(s, "rtdev", 5)))) {
			snprintf(wc.why, sizeof(wc.why), "unknown device "
				 "\"%.*s\" (ddev, logdev or rtdev)",
				 (int)len, s);
			return -EINVAL;
		}
		if (s[len] != '=') {
			snprintf(wc.why, sizeof(wc.why), "%.*s write fail "
				 "requires a parameter", (int)len, s);
			return -EINVAL;
		}
		n = strtoul(s + len + 1, &end, 0);
		if (end == s + len + 1 || (*end && *end != ',')) {
			snprintf(wc.why, sizeof(wc.why), "%.*s: \"%s\" is not "
				 "a number of writes", (int)len, s,
				 s + len + 1);
			return -EINVAL;
		}
		if (len == 4)
			wc.limit = n;
		s = *end ? end + 1 : end;
	}
	return 0;
}

static void
init(void)
{
	const char *s = getenv("LIBXFS_DEBUG_WRITE_CRASH");

	if (s && parse(s)) {
		wc.bad = 1;
		wc.limit = 0;
	}
}

int
xk_write_crash_check_env(char *msg, size_t msglen)
{
	pthread_once(&wc.once, init);
	if (!wc.bad)
		return 0;
	if (msg && msglen)
		snprintf(msg, msglen, "LIBXFS_DEBUG_WRITE_CRASH: %s", wc.why);
	return -EINVAL;
}

void
xk_write_crash_tick(void)
{
	pthread_once(&wc.once, init);
	if (!wc.limit)
		return;
	if (__atomic_add_fetch(&wc.count, 1, __ATOMIC_RELAXED) > wc.limit)
		kill(getpid(), SIGKILL);
}
