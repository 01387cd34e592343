// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fault injector (fault.h).  Compiled in only with
 * --enable-fault-injection (XK_FAULT_INJECTION in config.h).
 *
 * Its state is process-wide, against libfs's rule that state hangs off a
 * handle, for three reasons that hold only in test builds: the events it
 * counts are process-wide resources (the heap, the device as every
 * handle of a run sees it, thread creation), so "the Nth" means the Nth
 * over every handle and worker of one run, which a per-handle counter
 * cannot give (the inode scan opens a handle per worker); the
 * allocation hook sits under code that has no handle at hand (vectors,
 * lists); and the state is set once from the environment and then only
 * counted atomically.  Release builds hold none of it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <xfskit/fault.h>

#ifdef XK_FAULT_INJECTION

static const char *const kind_names[XK_FAULT_NR] = {
	[XK_FAULT_ALLOC] = "alloc",
	[XK_FAULT_READ] = "read",
	[XK_FAULT_WRITE] = "write",
	[XK_FAULT_THREAD] = "thread",
	[XK_FAULT_PHASE] = "phase",
};

static struct {
	pthread_once_t	once;
	int		on;		/* XFSKIT_FAULT is set and parsed */
	int		bad;		/* XFSKIT_FAULT did not parse */
	unsigned long	at[XK_FAULT_NR];	/* 0: never */
	unsigned long	count[XK_FAULT_NR];	/* atomic */
} inj = { .once = PTHREAD_ONCE_INIT };

/* "kind:N[,kind:N...]"; 0, or -EINVAL. */
static int
parse(const char *s)
{
	while (*s) {
		size_t len = strcspn(s, ":");
		char *end;
		unsigned long n;
		int k;

		for (k = 0; k < XK_FAULT_NR; k++)
			if (strlen(kind_names[k]) == len &&
			    !strncmp(s, kind_names[k], len))
				break;
		if (k == XK_FAULT_NR || s[len] != ':')
			return -EINVAL;
		n = strtoul(s + len + 1, &end, 10);
		if (end == s + len + 1 || (*end && *end != ','))
			return -EINVAL;
		inj.at[k] = n;
		s = *end ? end + 1 : end;
	}
	return 0;
}

static void
init(void)
{
	const char *s = getenv("XFSKIT_FAULT");

	if (!s)
		return;
	if (parse(s)) {
		inj.bad = 1;
		memset(inj.at, 0, sizeof(inj.at));
		return;
	}
	inj.on = 1;
}

int
xk_fault(enum xk_fault_kind kind)
{
	unsigned long n;

	pthread_once(&inj.once, init);
	if (!inj.on)
		return 0;
	n = __atomic_add_fetch(&inj.count[kind], 1, __ATOMIC_RELAXED);
	return inj.at[kind] && n == inj.at[kind];
}

long
xk_fault_count(enum xk_fault_kind kind)
{
	pthread_once(&inj.once, init);
	if (!inj.on)
		return -1;
	return (long)__atomic_load_n(&inj.count[kind], __ATOMIC_RELAXED);
}

int
xk_fault_check_env(char *msg, size_t msglen)
{
	pthread_once(&inj.once, init);
	if (!inj.bad)
		return 0;
	snprintf(msg, msglen, "XFSKIT_FAULT='%s' is not a list of KIND:N "
		 "with KIND alloc, read, write, thread or phase",
		 getenv("XFSKIT_FAULT"));
	return -EINVAL;
}

#else

int
xk_fault(enum xk_fault_kind kind)
{
	(void)kind;
	return 0;
}

long
xk_fault_count(enum xk_fault_kind kind)
{
	(void)kind;
	return -1;
}

int
xk_fault_check_env(char *msg, size_t msglen)
{
	(void)msg;
	(void)msglen;
	return 0;
}

#endif

void *
xk_malloc(size_t size)
{
	return xk_fault(XK_FAULT_ALLOC) ? NULL : malloc(size);
}

void *
xk_calloc(size_t n, size_t size)
{
	return xk_fault(XK_FAULT_ALLOC) ? NULL : calloc(n, size);
}

void *
xk_realloc(void *p, size_t size)
{
	return xk_fault(XK_FAULT_ALLOC) ? NULL : realloc(p, size);
}
