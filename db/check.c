// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check and blocktrash: both are visitors of libfs's metadata walker
 * (walk.h), which reaches the AG headers, every btree block, every
 * allocated inode, and the directory, attribute, bmbt and remote
 * symlink blocks of those inodes, each through its libfs verifier.
 * check prints every failure; it has no rules of its own.  blocktrash flips random bits in a random choice of them
 * (headers, btree blocks, inodes, directory, attribute, bmbt and remote
 * symlink blocks).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xfskit/fork.h>
#include <xfskit/walk.h>

#include "db.h"

/* One metadata block found by the enumeration. */
struct mblock {
	uint64_t	daddr;
	uint32_t	len;
	const char	*type;
};

/* check's options, as xfs_db's check (blockget) takes them. */
struct check_opts {
	int		verbose;	/* -v: every block and inode */
	int		severe;		/* -s: the problems alone */
	int		paths;		/* -n: paths of the inodes named */
	int		prefix;		/* -p: lines start with the image */
	uint64_t	*blocks;	/* -b: fsblocks to trace */
	int		*seen;		/* per -b block: reached */
	size_t		nblocks;
	uint64_t	*inodes;	/* -i: inodes to trace */
	size_t		ninodes;
	uint64_t	*named;		/* -n: inodes problems named */
	size_t		nnamed;
	uint64_t	last_fsb;	/* -v: the last block traced */
};

struct scan {
	struct db_ctx	*c;
	int		collect;	/* blocktrash: remember blocks */
	XK_VEC_OF(struct mblock);	/* the blocks remembered */
	int		collect_err;	/* a block could not be remembered */
	uint64_t	nblocks;
	uint64_t	ninodes;
	unsigned int	nproblems;
	struct check_opts *o;		/* check only */
};

static void
problem(struct scan *s, const struct xk_fail *f)
{
	char line[400];

	xk_fail_format(f, line, sizeof(line));
	if (s->o && s->o->prefix)
		db_out(s->c, "%s: %s", s->c->image, line);
	else
		db_out(s->c, "%s", line);
	s->nproblems++;
	/* -n: the inode a problem names, once (a short list). */
	if (s->o && s->o->paths && f->ino) {
		struct check_opts *o = s->o;
		uint64_t *v;

		for (size_t i = 0; i < o->nnamed; i++)
			if (o->named[i] == f->ino)
				return;
		v = realloc(o->named, (o->nnamed + 1) * sizeof(*v));
		if (!v)
			return;
		o->named = v;
		o->named[o->nnamed++] = f->ino;
	}
}

/* xfs_db's names for the kinds of block its check traces. */
static const char *
xfs_db_type(const char *type)
{
	static const char *const map[][2] = {
		{ "bnobt", "btbno" }, { "cntbt", "btcnt" },
		{ "inobt", "btino" }, { "finobt", "btfino" },
		{ "rmapbt", "btrmap" }, { "refcountbt", "btrefcnt" },
		{ "dir3", "dir" }, { "attr3", "attr" }, { "dqblk", "quota" },
		{ "rtsummary", "rtsum" }, { "icluster", "inode" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(type, map[i][0]))
			return map[i][1];
	return type;
}

/*
 * -v and -b: "setting block AG/AGBNO to TYPE" for each filesystem block
 * of a metadata block the walk reaches (once for blocks that hold more
 * than one, such as the AG headers), as xfs_db's check says it.
 */
static void
trace_block(struct scan *s, const struct xk_walk_block *b)
{
	struct check_opts *o = s->o;
	struct xk_mount *mp = s->c->mp;
	uint64_t first = b->daddr >> mp->g.blkbb_log;
	uint64_t last = (b->daddr + (b->len ? b->len - 1 : 0) / XK_BBSIZE) >>
			mp->g.blkbb_log;

	if (b->kind == XK_WALK_LOG)
		return;
	for (uint64_t blk = first; blk <= last; blk++) {
		uint32_t agno = (uint32_t)(blk / mp->g.agblocks);
		uint32_t agbno = (uint32_t)(blk % mp->g.agblocks);
		uint64_t fsb = xk_agb_to_fsb(mp, agno, agbno);
		int want = o->verbose && blk != o->last_fsb;

		for (size_t i = 0; i < o->nblocks; i++)
			if (o->blocks[i] == fsb && !o->seen[i]) {
				o->seen[i] = 1;
				want = 1;
			}
		if (want)
			db_out(s->c, "setting block %u/%u to %s", agno, agbno,
			       xfs_db_type(b->type));
		o->last_fsb = blk;
	}
}

/* xfs_db's names of the fork formats. */
static const char *
fmt_name(int fmt)
{
	static const char *const names[] = {
		"dev", "local", "extents", "btree", "uuid", "meta_btree",
	};

	return fmt >= 0 && fmt < (int)(sizeof(names) / sizeof(names[0])) ?
	       names[fmt] : "unknown";
}

/*
 * -i and -v: an inode's core in xfs_db's words; with -i its extents too
 * ("inode N extent [offset,fsblock,count,unwritten]").
 */
static void
trace_inode(struct scan *s, const struct xk_walk_block *b)
{
	const struct xk_dinode *dip = (const struct xk_dinode *)b->data;
	struct check_opts *o = s->o;
	int listed = 0;

	for (size_t i = 0; i < o->ninodes; i++)
		listed |= o->inodes[i] == b->owner;
	if (!listed && !o->verbose)
		return;
	db_out(s->c, "inode %llu mode %#o fmt %s afmt %s nex %llu anex %u "
	       "nblk %llu sz %llu", (unsigned long long)b->owner,
	       xk_be16_get(dip->di_mode),
	       fmt_name(xk_dfork_format(dip, XK_DATA_FORK)),
	       fmt_name(dip->di_aformat),
	       (unsigned long long)xk_dinode_nextents(dip),
	       xk_dinode_anextents(dip),
	       (unsigned long long)xk_be64_get(dip->di_nblocks),
	       (unsigned long long)xk_be64_get(dip->di_size));
	if (!listed)
		return;
	for (int fork = XK_DATA_FORK; fork <= XK_ATTR_FORK; fork++) {
		struct xk_fork_map map = { 0 };

		if (xk_fork_read(s->c->mp, b->owner, dip, fork,
				 XK_FORK_SALVAGE, &map) &&
		    !map.next) {
			xk_fork_map_free(&map);
			continue;
		}
		for (uint64_t k = 0; k < map.next; k++)
			db_out(s->c, "inode %llu extent [%llu,%llu,%llu,%d]",
			       (unsigned long long)b->owner,
			       (unsigned long long)map.ext[k].startoff,
			       (unsigned long long)map.ext[k].startblock,
			       (unsigned long long)map.ext[k].blockcount,
			       map.ext[k].unwritten);
		xk_fork_map_free(&map);
	}
}

static int
remember(struct scan *s, uint64_t daddr, uint32_t len, const char *type)
{
	s->nblocks++;
	if (!s->collect)
		return 0;
	return xk_vec_push(&s->vec, &(struct mblock){ daddr, len, type },
			   sizeof(*s->v));
}

static int
pieces_contiguous(const struct xk_walk_block *b, uint32_t bsize)
{
	for (unsigned int k = 1; k < b->npieces; k++)
		if (b->pieces[k] != b->daddr + (uint64_t)k * bsize / XK_BBSIZE)
			return 0;
	return 1;
}

/* The walker's visitor: count (and for blocktrash remember) each block. */
static int
scan_visit(void *ctx, const struct xk_walk_block *b)
{
	struct scan *s = ctx;

	/* An inode that cannot be read is counted, not a block. */
	if (b->kind == XK_WALK_INODE && !b->bp)
		return 0;
	if (!b->data)
		db_out(s->c, "%s at daddr %llu cannot be read: %s", b->type,
		       (unsigned long long)b->daddr, xk_strerror(b->err));
	if (s->o && (s->o->verbose || s->o->nblocks))
		trace_block(s, b);
	if (s->o && b->data && b->kind == XK_WALK_INODE &&
	    (s->o->verbose || s->o->ninodes))
		trace_inode(s, b);
	/* A directory block in pieces: blocktrash hits one at a time. */
	if (!pieces_contiguous(b, s->c->mp->g.blocksize)) {
		int err = 0;

		for (unsigned int k = 0; k < b->npieces && !err; k++)
			err = remember(s, b->pieces[k], s->c->mp->g.blocksize,
				       b->type);
		return err;
	}
	return remember(s, b->daddr, b->len, b->type);
}

static void
scan_fail(void *ctx, const struct xk_fail *f)
{
	problem(ctx, f);
}

/* Every metadata block of the filesystem, through the libfs walker. */
static int
scan_all(struct scan *s)
{
	struct xk_walk w = {
		.ctx = s, .visit = scan_visit, .fail = scan_fail,
	};
	int err = xk_walk_metadata(s->c->mp, 0, s->c->mp->g.agcount - 1, &w);

	s->ninodes = w.ninodes;
	return err == XK_ECORRUPT ? 0 : err;
}

/* -b and -i: a number added to a list. */
static int
add_num(struct db_ctx *c, const char *arg, uint64_t **list, size_t *n)
{
	uint64_t v, *nl;

	if (db_parse_u64(arg, &v)) {
		db_err(c, "bad number %s for check", arg);
		return 1;
	}
	nl = realloc(*list, (*n + 1) * sizeof(*nl));
	if (!nl) {
		db_err(c, "check: out of memory");
		return 1;
	}
	*list = nl;
	nl[(*n)++] = v;
	return 0;
}

/* -n: the paths of the inodes the problems named, as ncheck -i. */
static int
named_paths(struct db_ctx *c, const struct check_opts *o)
{
	char **argv = calloc(2 * o->nnamed + 2, sizeof(*argv));
	char *nums = calloc(o->nnamed + 1, 24);
	int rc, argc = 0;

	if (!argv || !nums) {
		free(argv);
		free(nums);
		db_err(c, "check: out of memory");
		return 1;
	}
	argv[argc++] = "ncheck";
	for (size_t i = 0; i < o->nnamed; i++) {
		snprintf(nums + 24 * i, 24, "%llu",
			 (unsigned long long)o->named[i]);
		argv[argc++] = "-i";
		argv[argc++] = nums + 24 * i;
	}
	rc = db_cmd_ncheck(c, argc, argv);
	free(argv);
	free(nums);
	return rc;
}

int
db_cmd_check(struct db_ctx *c, int argc, char **argv)
{
	struct check_opts o;
	struct scan s;
	int err, opt, rc = 1;

	memset(&o, 0, sizeof(o));
	optind = 0;		/* GNU getopt: start over for this command */
	while ((opt = getopt(argc, argv, "b:i:npstv")) != -1) {
		switch (opt) {
		case 'b':
			if (add_num(c, optarg, &o.blocks, &o.nblocks))
				goto out;
			break;
		case 'i':
			if (add_num(c, optarg, &o.inodes, &o.ninodes))
				goto out;
			break;
		case 'n':
			o.paths = 1;
			break;
		case 'p':
			o.prefix = 1;
			break;
		case 's':
			o.severe = 1;
			break;
		case 't':
			/* No check of unowned blocks here: nothing to skip. */
			break;
		case 'v':
			o.verbose = 1;
			break;
		default:
			db_err(c, "bad option for check command");
			goto out;
		}
	}
	if (optind != argc) {
		db_err(c, "bad argument %s to check", argv[optind]);
		goto out;
	}
	o.seen = calloc(o.nblocks + 1, sizeof(*o.seen));
	if (!o.seen) {
		db_err(c, "check: out of memory");
		goto out;
	}
	o.last_fsb = UINT64_MAX;
	memset(&s, 0, sizeof(s));
	s.c = c;
	s.o = &o;
	err = scan_all(&s);
	if (err) {
		db_err(c, "check: %s", xk_strerror(err));
		goto out;
	}
	/* A block asked for that is no metadata the walk reaches: said. */
	for (size_t i = 0; i < o.nblocks; i++)
		if (!o.seen[i])
			db_out(c, "block %u/%u is not a metadata block the "
			       "check reaches",
			       xk_fsb_to_agno(c->mp, o.blocks[i]),
			       xk_fsb_to_agbno(c->mp, o.blocks[i]));
	if (o.nnamed && named_paths(c, &o))
		goto out;
	if (!o.severe)
		db_out(c, "checked %llu metadata blocks and %llu inodes: %u "
		       "problem%s", (unsigned long long)s.nblocks,
		       (unsigned long long)s.ninodes, s.nproblems,
		       s.nproblems == 1 ? "" : "s");
	rc = s.nproblems ? 1 : 0;
out:
	free(o.blocks);
	free(o.seen);
	free(o.inodes);
	free(o.named);
	return rc;
}

static uint64_t
rnd(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545f4914f6cdd1dULL;
}

int
db_cmd_blocktrash(struct db_ctx *c, int argc, char **argv)
{
	struct xk_mount *mp = c->mp;
	uint64_t count = 1, seed = (uint64_t)time(NULL), minb = 1, maxb = 1;
	const char *types[32];
	int ntypes = 0, rc = 0;
	struct scan s;

	for (int i = 1; i < argc; i++) {
		uint64_t *dst = NULL;

		if (i + 1 >= argc) {
			db_err(c, "blocktrash: %s needs a value", argv[i]);
			return 1;
		}
		if (!strcmp(argv[i], "-n"))
			dst = &count;
		else if (!strcmp(argv[i], "-s"))
			dst = &seed;
		else if (!strcmp(argv[i], "-x"))
			dst = &minb;
		else if (!strcmp(argv[i], "-y"))
			dst = &maxb;
		else if (!strcmp(argv[i], "-t") && ntypes < 32) {
			/* db's type name for the tree the walker calls so */
			i++;
			types[ntypes++] = strcmp(argv[i], "refcntbt") ?
					  argv[i] : "refcountbt";
			continue;
		}
		if (!dst || db_parse_u64(argv[++i], dst)) {
			db_err(c, "usage: blocktrash [-n count] [-s seed] "
			       "[-x min] [-y max] [-t type]...");
			return 1;
		}
	}
	if (minb == 0 || maxb < minb) {
		db_err(c, "blocktrash: need 1 <= min <= max bits");
		return 1;
	}
	memset(&s, 0, sizeof(s));
	s.c = c;
	s.collect = 1;
	rc = scan_all(&s);
	/* Trashing some of the blocks asked for would be a different test. */
	if (rc) {
		db_err(c, "blocktrash: %s", xk_strerror(rc));
		xk_vec_free(&s.vec);
		return 1;
	}
	/* keep only the chosen types */
	if (ntypes) {
		size_t k = 0;

		for (size_t i = 0; i < s.n; i++)
			for (int t = 0; t < ntypes; t++)
				if (!strcmp(s.v[i].type, types[t]))
					s.v[k++] = s.v[i], t = ntypes;
		s.n = k;
	}
	if (s.n == 0) {
		db_err(c, "blocktrash: no metadata blocks of those types");
		xk_vec_free(&s.vec);
		return 1;
	}
	seed = seed * 0x9e3779b97f4a7c15ULL + 1;
	for (uint64_t k = 0; k < count; k++) {
		const struct mblock *b = &s.v[rnd(&seed) % s.n];
		uint64_t bits = minb + rnd(&seed) % (maxb - minb + 1);
		uint64_t start, total = (uint64_t)b->len * 8;
		struct xk_buf *bp;
		int err;

		if (bits > total)
			bits = total;
		start = rnd(&seed) % (total - bits + 1);
		err = xk_buf_read(mp, b->daddr, b->len, NULL,
				  XK_READ_NOVERIFY, &bp);
		if (err) {
			rc = 1;
			continue;
		}
		for (uint64_t i = start; i < start + bits; i++)
			bp->data[i / 8] ^= (uint8_t)(0x80u >> (i % 8));
		err = xk_buf_write_raw(bp);
		xk_buf_release(bp);
		xk_buf_invalidate(mp, b->daddr, b->len);
		if (err) {
			db_err(c, "blocktrash: write failed: %s",
			       xk_strerror(err));
			rc = 1;
			continue;
		}
		db_out(c, "blocktrash: %s block at daddr %llu: %llu bit%s "
		       "flipped starting at bit %llu", b->type,
		       (unsigned long long)b->daddr, (unsigned long long)bits,
		       bits == 1 ? "" : "s", (unsigned long long)start);
	}
	xk_vec_free(&s.vec);
	if (c->have_cur)
		db_reread(c);
	return rc;
}
