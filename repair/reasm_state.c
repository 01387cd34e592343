// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What reasm.c and reasm_fork.c plan and reasm_build.c and
 * rebuild_fork.c write (reasm.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repair.h"
#include "reasm.h"

void
reasm_dir_free(struct reasm_dir *d)
{
	for (size_t i = 0; i < d->n; i++)
		free((void *)d->ents[i].name);
	free(d->ents);
	free(d->lsns);
	memset(d, 0, sizeof(*d));
}

void
reasm_dirs_free(struct reasm_state *st)
{
	for (size_t i = 0; i < st->ndirs; i++)
		reasm_dir_free(&st->dirs[i]);
	free(st->dirs);
	st->dirs = NULL;
	st->ndirs = 0;
}

void
reasm_free(struct repair_ctx *rc)
{
	struct reasm_state *st = rc->reasm;

	if (!st)
		return;
	reasm_dirs_free(st);
	reasm_forks_free(st);
	reasm_index_free(st);
	xk_vec_free(&st->tried.vec);
	xk_vec_free(&st->judged.vec);
	xk_scan_free(&st->res);
	free(st);
	rc->reasm = NULL;
}

const struct reasm_dir *
reasm_find(const struct repair_ctx *rc, uint64_t ino)
{
	const struct reasm_state *st = rc->reasm;

	for (size_t i = 0; st && i < st->ndirs; i++)
		if (st->dirs[i].ino == ino)
			return &st->dirs[i];
	return NULL;
}

int
reasm_pending(const struct repair_ctx *rc)
{
	return rc->reasm && rc->reasm->ndirs;
}

void
reasm_forks_free(struct reasm_state *st)
{
	for (size_t i = 0; i < st->nforks; i++) {
		free(st->forks[i].recs);
		free(st->forks[i].lsns);
		free(st->forks[i].old);
		free(st->forks[i].holes);
	}
	free(st->forks);
	st->forks = NULL;
	st->nforks = 0;
}

const struct reasm_fork *
reasm_fork_find(const struct repair_ctx *rc, uint64_t ino, int whichfork)
{
	const struct reasm_state *st = rc->reasm;

	for (size_t i = 0; st && i < st->nforks; i++)
		if (st->forks[i].ino == ino &&
		    st->forks[i].attr == (whichfork == XK_ATTR_FORK))
			return &st->forks[i];
	return NULL;
}

void
reasm_would(struct repair_ctx *rc, const char *what, uint64_t ino,
	    const char *path, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	action_would(rc, what, ino, path, msg);
}

void
reasm_fork_losses(const struct reasm_fork *f, char *buf, size_t len)
{
	const struct {
		size_t		n;
		const char	*one, *many;
	} counts[] = {
		{ f->dropped, "record left out (conflicting or not ours)",
		  "records left out (conflicting or not ours)" },
		{ f->refused, "leaf block refused (which fork it maps cannot "
		  "be told)", "leaf blocks refused (which fork it maps "
		  "cannot be told)" },
		{ f->adopted, "leaf block naming another owner taken back "
		  "(linked into its chain)", "leaf blocks naming another "
		  "owner taken back (linked into its chain)" },
		{ f->stale, "stale leaf copy left out (an older LSN, or not "
		  "linked into the chain)", "stale leaf copies left out (an "
		  "older LSN, or not linked into the chain)" },
		{ f->unreused, "old bmbt block not reused (a record maps it)",
		  "old bmbt blocks not reused (a record maps them)" },
	};
	size_t at = 0;

	buf[0] = 0;
	for (size_t i = 0; i < f->nholes && i < 4 && at < len; i++) {
		if (f->holes[i][1] == UINT64_MAX)
			at += (size_t)snprintf(buf + at, len - at, "%s%llu-end",
					       i ? ", " : "; a leaf not found: "
					       "file blocks ",
					       (unsigned long long)
					       f->holes[i][0]);
		else
			at += (size_t)snprintf(buf + at, len - at,
					       "%s%llu-%llu", i ? ", " :
					       "; a leaf not found: file blocks ",
					       (unsigned long long)
					       f->holes[i][0],
					       (unsigned long long)
					       f->holes[i][1] - 1);
	}
	if (f->nholes > 4 && at < len)
		at += (size_t)snprintf(buf + at, len - at, " and %zu more",
				       f->nholes - 4);
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (counts[i].n && at < len)
			at += (size_t)snprintf(buf + at, len - at, "; %zu %s",
					       counts[i].n, counts[i].n == 1 ?
					       counts[i].one : counts[i].many);
}
