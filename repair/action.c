// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The changes repair makes, reported.  Every place that writes a fix
 * calls action_report once per change: an inode cleared or corrected, a
 * fork rebuilt or dropped, a directory entry removed, a directory
 * rewritten, a file moved to /lost+found, a link count set, an AG's
 * btrees rebuilt, a superblock written, quota records rewritten, the
 * log replayed or zeroed.  Each change is one line of text (the kind's
 * verb, the inode and its path or the AG, what was done) and one
 * element of --json's "actions"; the summary counts the files removed,
 * moved and kept, and the changes made.
 *
 * Paths are those of the tree as the last check pass saw it: a file's
 * parent comes from the entry list (an index by child, built once per
 * pass when the first path is asked for), a directory's from an entry
 * naming it or else its "..", each name from the parent directory's
 * entries (the last directory read is kept, and the paths of the last
 * few parents), with "?" for what is not known.
 *
 * Text lists each change; only the kinds that can come by the thousand
 * and lose nothing (link counts, "..", corrected inode fields) are cut
 * after ACTION_TEXT_MAX lines per kind unless -v, with their count in
 * the summary.  --json keeps every change.
 */
#include <stdarg.h>
#include <string.h>

#include <xfskit/build.h>
#include <xfskit/format/dir.h>

#include "repair.h"

/* Lines of one groupable kind shown in text before the rest is counted. */
#define ACTION_TEXT_MAX		20
/* Directories whose paths are kept; levels followed up from an inode. */
#define ACTION_DIR_PATHS	8
#define ACTION_PATH_DEPTH	512
#define ACTION_PATH_MAX		4096

enum effect {
	EFFECT_NONE,
	EFFECT_REMOVED,		/* a file is gone */
	EFFECT_MOVED,		/* a file is in /lost+found */
};

/*
 * The code is the stable name for scripts (--json "action"); the verb
 * starts the line; plural, set for kinds that are cut in text, names
 * the rest in the summary.
 */
static const struct {
	const char	*code;
	const char	*verb;
	const char	*plural;
	enum effect	effect;
} kinds[ACT_NR] = {
	[ACT_LOG_REPLAYED]	= { "log_replayed", "Replayed the log" },
	[ACT_LOG_ZEROED]	= { "log_zeroed", "Log zeroed" },
	[ACT_SB_WRITTEN]	= { "sb_written", "Rewrote the superblock of" },
	[ACT_INODE_CLEARED]	= { "inode_cleared", "Cleared inode", NULL,
				    EFFECT_REMOVED },
	[ACT_INODE_FIXED]	= { "inode_fixed", "Corrected inode",
				    "inodes corrected" },
	[ACT_NLINK_SET]		= { "nlink_set", "Set the link count of inode",
				    "link counts set" },
	[ACT_FORK_REBUILT]	= { "fork_rebuilt", "Rebuilt a fork of inode" },
	[ACT_FORK_TRIMMED]	= { "fork_trimmed", "Dropped extents of inode" },
	[ACT_ATTR_DROPPED]	= { "attr_fork_dropped",
				    "Dropped the extended attributes of inode" },
	[ACT_ENTRY_REMOVED]	= { "entry_removed",
				    "Removed the directory entry of inode" },
	[ACT_DOTDOT_SET]	= { "dotdot_set", "Pointed \"..\" of directory",
				    "\"..\" entries set" },
	[ACT_DIR_REWRITTEN]	= { "dir_rewritten", "Rewrote directory" },
	[ACT_LOSTFOUND_CREATED]	= { "lost_found_created",
				    "Created /lost+found as inode" },
	[ACT_MOVED]		= { "moved_to_lost_found", "Moved inode", NULL,
				    EFFECT_MOVED },
	[ACT_AG_REBUILT]	= { "ag_rebuilt", "Rebuilt" },
	[ACT_QUOTA_FIXED]	= { "quota_fixed", "" },
	[ACT_PPTR_SET]		= { "parent_pointers_set",
				    "Set the parent pointers of inode",
				    "parent pointer sets rewritten" },
	[ACT_RT_REBUILT]	= { "rt_rebuilt", "Rebuilt" },
	[ACT_ATTR_REWRITTEN]	= { "attr_fork_rewritten",
				    "Rewrote the extended attributes of inode" },
	[ACT_XATTR_DROPPED]	= { "xattr_dropped",
				    "Dropped an extended attribute of inode" },
	[ACT_DIR_REASSEMBLED]	= { "dir_rebuilt_from_scan",
				    "Rebuilt directory" },
	[ACT_NEEDSREPAIR_CLEARED] = { "needsrepair_cleared", "Cleared the "
				      "NEEDSREPAIR flag of the primary "
				      "superblock" },
	[ACT_METADIR_REBUILT]	= { "metadir_rebuilt", "Rebuilt the "
				    "metadata directory tree at inode" },
	[ACT_LOG_FORMATTED]	= { "log_formatted", "Formatted the log" },
	[ACT_RETURNED]		= { "returned_by_parent_pointer",
				    "Returned inode" },
};

struct prepared {
	uint64_t	ino;
	char		*path;
};

/* The entry list indexed by child: who names an inode. */
struct named_by {
	uint64_t	child;
	uint64_t	parent;
};

struct action_log {
	unsigned long	count;			/* changes made */
	unsigned long	by_kind[ACT_NR];
	unsigned long	hidden[ACT_NR];		/* text lines not shown */
	unsigned long	kept;			/* inodes in use, last pass */
	int		err;			/* a change went unrecorded */
	struct xk_vec	json;			/* "actions" elements, as text */
	struct xk_vec	would;			/* -n: "would_rebuild" ones */
	/* Path resolution, for the scan it was built from. */
	struct xk_vec	index;			/* struct named_by, by child */
	int		indexed;
	uint64_t	dir;			/* entries of this directory */
	struct dir_list	ents;			/* sorted by inode */
	int		have_dir;
	struct {
		uint64_t	ino;
		char		*path;
	}		paths[ACTION_DIR_PATHS];
	unsigned int	next_path;
	/* Paths resolved before the plans were applied, by inode. */
	struct prepared	*pre;
	size_t		npre;
};

static struct action_log *
log_get(struct repair_ctx *rc)
{
	if (!rc->found.acts) {
		rc->found.acts = calloc(1, sizeof(*rc->found.acts));
		if (rc->found.acts) {
			rc->found.acts->json.spill = rc->spill;
			rc->found.acts->would.spill = rc->spill;
			rc->found.acts->index.spill = rc->spill;
		}
	}
	return rc->found.acts;
}

static int
cmp_named_by(const void *a, const void *b)
{
	const struct named_by *x = a, *y = b;

	return (x->child > y->child) - (x->child < y->child);
}

static int
cmp_prepared(const void *a, const void *b)
{
	const struct prepared *x = a, *y = b;

	return (x->ino > y->ino) - (x->ino < y->ino);
}

static int
cmp_dirent_ino(const void *a, const void *b)
{
	const struct xk_bld_dirent *x = a, *y = b;

	return (x->ino > y->ino) - (x->ino < y->ino);
}

/* The entry list by child, once per scan. */
static int
index_build(struct repair_ctx *rc, struct action_log *al)
{
	if (al->indexed)
		return al->index.n || !rc->scan.nedges ? 0 : -ENOMEM;
	al->indexed = 1;
	if (xk_vec_reserve(&al->index, rc->scan.nedges, sizeof(struct named_by)))
		return -ENOMEM;
	for (size_t i = 0; i < rc->scan.nedges; i++) {
		struct named_by nb = { rc->scan.edges[i].child,
				       rc->scan.edges[i].parent };

		lists_poll(rc, i);
		if (nb.child != nb.parent &&
		    xk_vec_push(&al->index, &nb, sizeof(nb)))
			return -ENOMEM;
	}
	xk_vec_sort(&al->index, sizeof(struct named_by), cmp_named_by);
	xk_vec_probe_random(&al->index);
	return 0;
}

/* A directory that names ino (any, if several), or 0. */
static uint64_t
named_in(struct repair_ctx *rc, struct action_log *al, uint64_t ino)
{
	struct named_by key = { .child = ino }, *nb;

	if (index_build(rc, al) || !al->index.n)
		return 0;
	search_poll(rc);
	nb = bsearch(&key, al->index.v, al->index.n, sizeof(key),
		     cmp_named_by);
	return nb ? nb->parent : 0;
}

/* The directory ino hangs from in the scanned tree, or 0. */
static uint64_t
parent_of(struct repair_ctx *rc, struct action_log *al, uint64_t ino)
{
	const struct inode_info *ii, *p;
	uint64_t dir = named_in(rc, al, ino);

	if (dir)
		return dir;
	ii = inode_info_find(rc, ino);
	if (!ii || (ii->mode & XK_S_IFMT) != XK_S_IFDIR ||
	    !ii->parent || ii->parent == ino)
		return 0;
	p = inode_info_find(rc, ii->parent);
	return p && (p->mode & XK_S_IFMT) == XK_S_IFDIR ? ii->parent : 0;
}

/* The name dir gives ino, into name ("?" when not found). */
static void
name_in(struct repair_ctx *rc, struct action_log *al, uint64_t dir,
	uint64_t ino, char *name, size_t len)
{
	struct xk_bld_dirent key = { .ino = ino }, *e;

	if (!al->have_dir || al->dir != dir) {
		dir_list_free(&al->ents);
		al->dir = dir;
		al->have_dir = 1;
		if (dir_entries(rc, dir, &al->ents))
			memset(&al->ents, 0, sizeof(al->ents));
		xk_vec_sort(&al->ents.e.vec, sizeof(*al->ents.e.v),
			    cmp_dirent_ino);
	}
	e = al->ents.e.n ? bsearch(&key, al->ents.e.v, al->ents.e.n,
				   sizeof(key), cmp_dirent_ino) : NULL;
	if (e)
		snprintf(name, len, "%.*s", (int)e->namelen,
			 (const char *)e->name);
	else
		snprintf(name, len, "?");
}

static const char *
cached_path(const struct action_log *al, uint64_t dir)
{
	for (unsigned int i = 0; i < ACTION_DIR_PATHS; i++)
		if (al->paths[i].path && al->paths[i].ino == dir)
			return al->paths[i].path;
	return NULL;
}

static void
cache_path(struct action_log *al, uint64_t dir, const char *path)
{
	unsigned int i = al->next_path++ % ACTION_DIR_PATHS;
	char *copy = strdup(path);

	if (!copy)
		return;
	free(al->paths[i].path);
	al->paths[i].ino = dir;
	al->paths[i].path = copy;
}

/*
 * Up from ino to the root or to a directory whose path is known,
 * prepending "/name" at each level into the tail of buf; "?" stands for
 * a directory reached from nowhere and for a name not found, and
 * "(metadir)" for the root of the metadata directory tree.
 */
void
action_path(struct repair_ctx *rc, uint64_t ino, char *out, size_t len)
{
	struct action_log *al = log_get(rc);
	uint64_t root = rc->mp->sb.rootino, cur = ino, seen[ACTION_PATH_DEPTH];
	char *buf, name[XK_NAME_MAX + 1];
	const char *top = "?";
	size_t pos, depth = 0;
	uint64_t first_parent = 0;

	/* The metadata tree's paths are its own: "(metadir)/quota/user". */
	uint64_t mroot = rc->mp->g.has_metadir ? rc->mp->sb.metadirino : 0;

	if (ino == root) {
		snprintf(out, len, "/");
		return;
	}
	if (mroot && ino == mroot) {
		snprintf(out, len, "(metadir)/");
		return;
	}
	buf = malloc(ACTION_PATH_MAX);
	if (!al || !buf || !rc->scan.ninodes) {
		free(buf);
		snprintf(out, len, "?");
		return;
	}
	pos = ACTION_PATH_MAX - 1;
	buf[pos] = '\0';
	while (depth < ACTION_PATH_DEPTH) {
		uint64_t dir = parent_of(rc, al, cur);
		const char *known;
		size_t nl;

		seen[depth++] = cur;
		if (!dir) {
			top = "?";
			break;
		}
		for (size_t i = 0; i < depth; i++)
			if (seen[i] == dir)
				dir = 0;	/* a loop: stop here */
		if (!dir)
			break;
		if (!first_parent)
			first_parent = dir;
		name_in(rc, al, dir, cur, name, sizeof(name));
		nl = strlen(name);
		if (nl + 2 > pos)
			break;
		pos -= nl;
		memcpy(buf + pos, name, nl);
		buf[--pos] = '/';
		if (dir == root) {
			top = "";
			break;
		}
		if (mroot && dir == mroot) {
			top = "(metadir)";
			break;
		}
		known = cached_path(al, dir);
		if (known) {
			top = known;
			break;
		}
		cur = dir;
	}
	snprintf(out, len, "%s%s", top, pos < ACTION_PATH_MAX - 1 ?
		 buf + pos : "");
	/* The parent's path, for its next child. */
	if (first_parent && first_parent != root &&
	    !cached_path(al, first_parent)) {
		char *slash = strrchr(out, '/');

		if (slash && slash != out) {
			*slash = '\0';
			cache_path(al, first_parent, out);
			*slash = '/';
		}
	}
	free(buf);
}

/*
 * Plans whose lines text always shows (their kinds are never cut) or
 * that drop an entry naming another inode (val).
 */
static int
plan_needs_path(const struct repair_ctx *rc, const struct ifix *f)
{
	if (rc->opt.json)
		return 1;
	return !(f->what & (IFIX_NLINK | IFIX_NBLOCKS | IFIX_FLAGS |
			    IFIX_FLAGS2 | IFIX_PAD | IFIX_NSEC | IFIX_DOTDOT |
			    IFIX_SF_PARENT | IFIX_DIR_SIZE));
}

static void
prepared_free(struct action_log *al)
{
	for (size_t i = 0; i < al->npre; i++)
		free(al->pre[i].path);
	free(al->pre);
	al->pre = NULL;
	al->npre = 0;
}

void
action_prepare(struct repair_ctx *rc)
{
	struct action_log *al = log_get(rc);
	const struct ifixes *p = &rc->plan.ifix;
	char path[ACTION_PATH_MAX];
	size_t n = 0, out = 0;

	if (!al || rc->opt.no_modify)
		return;
	prepared_free(al);
	for (size_t i = 0; i < p->n; i++)
		if (plan_needs_path(rc, &p->v[i]))
			n += p->v[i].what == IFIX_SF_DROP ? 2 : 1;
	if (!n)
		return;
	al->pre = calloc(n, sizeof(*al->pre));
	if (!al->pre)
		return;		/* resolved one by one, later */
	for (size_t i = 0; i < p->n; i++) {
		if (!plan_needs_path(rc, &p->v[i]))
			continue;
		al->pre[al->npre++].ino = p->v[i].ino;
		if (p->v[i].what == IFIX_SF_DROP)
			al->pre[al->npre++].ino = p->v[i].val;
	}
	sort_v(al->pre, al->npre, sizeof(*al->pre), cmp_prepared);
	for (size_t i = 0; i < al->npre; i++) {
		if (out && al->pre[out - 1].ino == al->pre[i].ino)
			continue;
		action_path(rc, al->pre[i].ino, path, sizeof(path));
		al->pre[out].ino = al->pre[i].ino;
		al->pre[out++].path = strdup(path);
	}
	al->npre = out;
}

static const char *
prepared_path(const struct action_log *al, uint64_t ino)
{
	struct prepared key = { .ino = ino }, *e;

	e = al->npre ? bsearch(&key, al->pre, al->npre, sizeof(key),
			       cmp_prepared) : NULL;
	return e ? e->path : NULL;
}

static void
json_append(struct action_log *al, const char *s, size_t n)
{
	if (!al->err && xk_vec_append(&al->json, s, n, 1))
		al->err = -ENOMEM;
}

/* One element of "actions", escaped as json_string escapes. */
static void
json_record(struct repair_ctx *rc, struct action_log *al, enum action act,
	    uint64_t ino, int64_t agno, const char *path, const char *msg,
	    const char *why)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);

	if (!f) {
		al->err = -ENOMEM;
		return;
	}
	fprintf(f, "%s\n    {\"action\": \"%s\", \"pass\": %d",
		al->json.n ? "," : "", kinds[act].code, rc->pass);
	if (ino) {
		fprintf(f, ", \"ino\": %llu, \"path\": ",
			(unsigned long long)ino);
		json_string(f, path);
	}
	if (agno >= 0)
		fprintf(f, ", \"agno\": %lld", (long long)agno);
	fprintf(f, ", \"message\": ");
	json_string(f, msg);
	if (why) {
		fprintf(f, ", \"reason\": ");
		json_string(f, why);
	}
	fprintf(f, "}");
	if (fclose(f)) {
		free(text);
		al->err = -ENOMEM;
		return;
	}
	json_append(al, text, n);
	free(text);
}

static void __attribute__((format(printf, 7, 0)))
action_vreport(struct repair_ctx *rc, enum action act, uint64_t ino,
	       int64_t agno, const char *path, const char *why,
	       const char *fmt, va_list ap)
{
	struct action_log *al;
	char where[ACTION_PATH_MAX], msg[ACTION_PATH_MAX + 1024];
	int shown;

	if (rc->opt.no_modify)
		return;
	al = log_get(rc);
	if (!al) {
		/* Nothing can be recorded: the run reports the error. */
		rc->found.actions_lost = 1;
		return;
	}
	al->count++;
	al->by_kind[act]++;
	shown = !kinds[act].plural || rc->opt.verbose ||
		al->by_kind[act] <= ACTION_TEXT_MAX;
	if (!shown)
		al->hidden[act]++;
	/* A path costs directory reads: only for a line that is shown. */
	if (!shown && !rc->opt.json)
		return;
	where[0] = '\0';
	if (ino && !path)
		path = prepared_path(al, ino);
	if (ino && !path) {
		action_path(rc, ino, where, sizeof(where));
		path = where;
	}
	{
		int n = snprintf(msg, sizeof(msg), "%s", kinds[act].verb);

		if (ino && path && *path)
			n += snprintf(msg + n, sizeof(msg) - (size_t)n,
				      " %llu (%s)", (unsigned long long)ino,
				      path);
		else if (ino)
			n += snprintf(msg + n, sizeof(msg) - (size_t)n,
				      " %llu", (unsigned long long)ino);
		else if (agno >= 0)
			n += snprintf(msg + n, sizeof(msg) - (size_t)n,
				      " AG %lld", (long long)agno);
		n += vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
		if (why && n >= 0 && (size_t)n < sizeof(msg))
			snprintf(msg + n, sizeof(msg) - (size_t)n,
				 "; reason: %s", why);
	}
	if (shown) {
		if (rc->opt.progress)
			fprintf(stderr, "\r\033[K");
		info(rc, "%s.\n", msg);
	}
	if (rc->opt.json)
		json_record(rc, al, act, ino, agno, path ? path : "", msg,
			    why);
}

void
action_report(struct repair_ctx *rc, enum action act, uint64_t ino,
	      int64_t agno, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	action_vreport(rc, act, ino, agno, path, NULL, fmt, ap);
	va_end(ap);
}

void
action_report_why(struct repair_ctx *rc, enum action act, uint64_t ino,
		  int64_t agno, const char *path, const char *why,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	action_vreport(rc, act, ino, agno, path, why, fmt, ap);
	va_end(ap);
}

void
action_note_scan(struct repair_ctx *rc)
{
	struct action_log *al = log_get(rc);
	const struct xk_sb *sb = &rc->mp->sb;
	unsigned long kept = 0;

	if (!al)
		return;
	for (size_t i = 0; i < rc->scan.ninodes; i++) {
		uint64_t ino = rc->scan.inodes[i].ino;

		lists_poll(rc, i);
		/* The filesystem's own inodes are not files. */
		if (ino == sb->rbmino || ino == sb->rsumino ||
		    ino == sb->uquotino || ino == sb->gquotino ||
		    ino == sb->pquotino)
			continue;
		kept++;
	}
	al->kept = kept;
}

void
action_scan_free(struct repair_ctx *rc)
{
	struct action_log *al = rc->found.acts;

	if (!al)
		return;
	xk_vec_free(&al->index);
	al->indexed = 0;
	prepared_free(al);
	dir_list_free(&al->ents);
	al->have_dir = 0;
	for (unsigned int i = 0; i < ACTION_DIR_PATHS; i++) {
		free(al->paths[i].path);
		al->paths[i].path = NULL;
	}
}

unsigned long
action_count(const struct repair_ctx *rc)
{
	return rc->found.acts ? rc->found.acts->count : 0;
}

void
action_summary(struct repair_ctx *rc)
{
	const struct action_log *al = rc->found.acts;
	unsigned long count = al ? al->count : 0;

	for (int k = 0; al && k < ACT_NR; k++)
		if (al->hidden[k])
			info(rc, "And %lu more %s (-v or --json lists each).\n",
			     al->hidden[k], kinds[k].plural);
	info(rc, "%lu problem%s found, %lu change%s made; files: %lu removed, "
	     "%lu moved to /lost+found, %lu kept.\n", rc->found.first_problems,
	     rc->found.first_problems == 1 ? "" : "s", count,
	     count == 1 ? "" : "s",
	     al ? al->by_kind[ACT_INODE_CLEARED] : 0,
	     al ? al->by_kind[ACT_MOVED] : 0, al ? al->kept : 0);
}

void
action_json(struct repair_ctx *rc)
{
	const struct action_log *al = rc->found.acts;
	FILE *o = rc->out;

	fprintf(o, ",\n  \"actions\": [");
	if (al && al->json.n) {
		fwrite(al->json.v, 1, al->json.n, o);
		fprintf(o, "\n  ");
	}
	fprintf(o, "],\n  \"summary\": {\"actions\": %lu, \"files_removed\": "
		"%lu, \"files_moved\": %lu, \"files_kept\": %lu",
		al ? al->count : 0, al ? al->by_kind[ACT_INODE_CLEARED] : 0,
		al ? al->by_kind[ACT_MOVED] : 0, al ? al->kept : 0);
	/* The summary line's figures, when the last pass counted them. */
	if (rc->tally.counted)
		fprintf(o, ", \"inodes\": %llu, \"blocks_used\": %llu, "
			"\"blocks\": %llu",
			(unsigned long long)rc->tally.inodes,
			(unsigned long long)rc->tally.used,
			(unsigned long long)rc->tally.blocks);
	fputc('}', o);
	/* -n: what the device scan would give back. */
	if (rc->opt.no_modify) {
		fprintf(o, ",\n  \"would_rebuild\": [");
		if (al && al->would.n) {
			fwrite(al->would.v, 1, al->would.n, o);
			fprintf(o, "\n  ");
		}
		fprintf(o, "]");
	}
}

void
action_would(struct repair_ctx *rc, const char *what, uint64_t ino,
	     const char *path, const char *msg)
{
	struct action_log *al = log_get(rc);
	char *text = NULL;
	size_t n = 0;
	FILE *f;

	info(rc, "        - %s\n", msg);
	if (!rc->opt.json)
		return;
	if (!al) {
		rc->found.actions_lost = 1;
		return;
	}
	f = open_memstream(&text, &n);
	if (!f) {
		al->err = -ENOMEM;
		return;
	}
	fprintf(f, "%s\n    {\"rebuild\": \"%s\", \"ino\": %llu, "
		"\"path\": ", al->would.n ? "," : "", what,
		(unsigned long long)ino);
	json_string(f, path);
	fprintf(f, ", \"message\": ");
	json_string(f, msg);
	fprintf(f, "}");
	if (fclose(f)) {
		free(text);
		al->err = -ENOMEM;
		return;
	}
	if (!al->err && xk_vec_append(&al->would, text, n, 1))
		al->err = -ENOMEM;
	free(text);
}

int
action_error(const struct repair_ctx *rc)
{
	if (rc->found.actions_lost)
		return -ENOMEM;
	return rc->found.acts ? rc->found.acts->err : 0;
}

void
action_free(struct repair_ctx *rc)
{
	if (!rc->found.acts)
		return;
	action_scan_free(rc);
	xk_vec_free(&rc->found.acts->json);
	xk_vec_free(&rc->found.acts->would);
	free(rc->found.acts);
	rc->found.acts = NULL;
}
