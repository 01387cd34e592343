/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fault injection for tests, and the allocation entry points it can fail.
 *
 * In a build configured with --enable-fault-injection (scripts/test's),
 * XFSKIT_FAULT=KIND:N[,KIND:N...] makes the Nth event of each KIND fail
 * once, counted from 1 over the whole process:
 *   alloc:N   the Nth xk_malloc/xk_calloc/xk_realloc returns NULL
 *   read:N    the Nth device read (xk_dev_pread) fails with -EIO
 *   write:N   the Nth device write (xk_dev_pwrite) fails with -EIO
 *   thread:N  the Nth worker thread start fails (callers see -EAGAIN)
 *   phase:N   the tool stops after its Nth phase (xk_fault(XK_FAULT_PHASE)
 *             at each phase's end says when)
 * N = 0 fails nothing: the events are only counted (xk_fault_count), so
 * that a test knows the range to sweep.
 * Other builds compile the injector out: xk_fault() is always 0 and the
 * environment is never read.
 */
#ifndef XFSKIT_FAULT_H
#define XFSKIT_FAULT_H

#include <stddef.h>

#include <xfskit/errors.h>

enum xk_fault_kind {
	XK_FAULT_ALLOC,
	XK_FAULT_READ,
	XK_FAULT_WRITE,
	XK_FAULT_THREAD,
	XK_FAULT_PHASE,
	XK_FAULT_NR
};

/*
 * Count one event of this kind; nonzero when it is the one to fail.
 * Thread-safe.  Always 0 without --enable-fault-injection.
 */
XK_MUST_CHECK int xk_fault(enum xk_fault_kind kind);

/*
 * The events of a kind counted so far, or -1 when XFSKIT_FAULT is unset
 * or the build has no fault injection.
 */
long xk_fault_count(enum xk_fault_kind kind);

/*
 * Whether XFSKIT_FAULT names a fault this build can inject; -EINVAL (with
 * the bad text in msg) when it cannot be parsed.  0 when unset, or in a
 * build without fault injection (where it is ignored).
 */
XK_MUST_CHECK int xk_fault_check_env(char *msg, size_t msglen);

/*
 * Allocation entry points for lists that hold scan and plan data: plain
 * malloc, calloc and realloc, which the injector can fail.
 */
void *xk_malloc(size_t size);
void *xk_calloc(size_t n, size_t size);
void *xk_realloc(void *p, size_t size);

#endif /* XFSKIT_FAULT_H */
