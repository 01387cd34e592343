// SPDX-License-Identifier: GPL-2.0-or-later
/* What reasm.c plans and reasm_build.c writes (reasm.h). */
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
	xk_vec_free(&st->tried.vec);
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
