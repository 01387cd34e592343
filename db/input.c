// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading commands: readline with history and tab completion when the
 * input is a terminal, plain line reading from a pipe or file otherwise.
 * Completion offers command names for the first word, type names after
 * "type", and field names of the current object after print, write,
 * fuzz and addr.  This is the only file that talks to readline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "db.h"

/* Candidates for the word being completed, in a growable list. */
static void
cand_add(struct db_cands *cs, const char *s)
{
	if (cs->n == cs->cap) {
		size_t ncap = cs->cap ? cs->cap * 2 : 64;
		char **nv = realloc(cs->v, ncap * sizeof(*nv));

		if (!nv)
			return;
		cs->v = nv;
		cs->cap = ncap;
	}
	cs->v[cs->n] = strdup(s);
	if (cs->v[cs->n])
		cs->n++;
}

/* Every field path of a table, arrays as name[i] for their first index. */
static void
field_paths(const struct xk_fctx *fc, const struct xk_field *fields,
	    size_t base, const char *prefix, struct db_cands *cs, int depth)
{
	char name[256];

	if (depth > 4)
		return;
	for (const struct xk_field *f = fields; f->name; f++) {
		uint32_t n = xk_field_count(fc, f, base);

		if (n == 0)
			continue;
		snprintf(name, sizeof(name), "%s%s", prefix, f->name);
		cand_add(cs, name);
		if (f->kind != XK_FK_STRUCT)
			continue;
		if (f->flags & XK_FF_ARRAY) {
			uint32_t first = (f->flags & XK_FF_BASE1) ? 1 : 0;

			snprintf(name, sizeof(name), "%s%s[%u].", prefix,
				 f->name, first);
		} else {
			snprintf(name, sizeof(name), "%s%s.", prefix, f->name);
		}
		field_paths(fc, f->sub, xk_field_elem(fc, f, base, 0), name,
			    cs, depth + 1);
	}
}

/*
 * readline calls this with state 0 for a new word, then 1, 2... until it
 * returns NULL; the list lives in the context db_interactive set up.
 */
static char *
generator(const char *text, int state)
{
	struct db_ctx *c = db_completion_ctx;
	struct db_cands *cs;
	size_t len = strlen(text);

	if (!c)
		return NULL;
	cs = &c->comp;
	if (state == 0) {
		char *line = rl_line_buffer, first[32] = "";
		int start = rl_point - (int)len;

		for (size_t i = 0; i < cs->n; i++)
			free(cs->v[i]);
		cs->n = 0;
		cs->next = 0;
		sscanf(line, "%31s", first);
		if (start <= (int)strspn(line, " \t")) {
			for (const struct db_cmd *cmd = db_cmds; cmd->name;
			     cmd++)
				cand_add(cs, cmd->name);
		} else if (!strcmp(first, "type")) {
			for (const struct db_type *t = db_types; t->name; t++)
				cand_add(cs, t->name);
		} else if (!strcmp(first, "help") || !strcmp(first, "push")) {
			for (const struct db_cmd *cmd = db_cmds; cmd->name;
			     cmd++)
				cand_add(cs, cmd->name);
		} else if (c->have_cur && c->cur.type->ftype) {
			struct xk_fctx fc;

			db_fctx(c, &fc);
			field_paths(&fc, c->cur.type->ftype->fields, 0, "",
				    cs, 0);
		}
	}
	while (cs->next < cs->n) {
		const char *s = cs->v[cs->next++];

		if (strncmp(s, text, len) == 0)
			return strdup(s);
	}
	return NULL;
}

static char **
completion(const char *text, int start, int end)
{
	(void)start;
	(void)end;
	rl_attempted_completion_over = 1;
	rl_completion_append_character = ' ';
	return rl_completion_matches(text, generator);
}

static int
is_quit(const char *line)
{
	char w[16] = "";

	sscanf(line, "%15s", w);
	return !strcmp(w, "quit") || !strcmp(w, "q");
}

int
db_interactive(struct db_ctx *c, int use_readline)
{
	char prompt[128];
	int status = 0;

	snprintf(prompt, sizeof(prompt), "%s> ", c->prompt);
	if (use_readline) {
		db_completion_ctx = c;
		rl_readline_name = "xfskit-db";
		rl_attempted_completion_function = completion;
		rl_completer_word_break_characters = " \t";
		for (;;) {
			char *line = readline(prompt);

			if (!line)
				break;
			if (*line)
				add_history(line);
			if (is_quit(line)) {
				free(line);
				break;
			}
			if (db_run_line(c, line))
				status = 1;
			free(line);
		}
		clear_history();
		for (size_t i = 0; i < c->comp.n; i++)
			free(c->comp.v[i]);
		free(c->comp.v);
		memset(&c->comp, 0, sizeof(c->comp));
		db_completion_ctx = NULL;
		return status;
	}
	for (;;) {
		char *line = NULL;
		size_t cap = 0;
		ssize_t n = getline(&line, &cap, stdin);

		if (n < 0) {
			free(line);
			break;
		}
		if (n > 0 && line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (is_quit(line)) {
			free(line);
			break;
		}
		if (db_run_line(c, line))
			status = 1;
		fflush(c->out);
		free(line);
	}
	return status;
}
