// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cursor: which buffer db looks at, as what type, and how it got
 * there.  Moving reads the bytes raw (so a damaged block can still be
 * shown), then asks the type's libfs verifier for its verdict, which is
 * printed the way xfs_db prints it.  Also the navigation commands: sb,
 * agf, agi, agfl, inode, fsblock, daddr, addr, type, push, pop, stack,
 * back, forward, dblock and ablock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/crc32c.h>
#include <xfskit/format/dir.h>

#include "db.h"

int
db_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

void
db_fctx(const struct db_ctx *c, struct xk_fctx *fc)
{
	memset(fc, 0, sizeof(*fc));
	fc->buf = c->buf;
	fc->len = c->buflen;
	fc->blocksize = c->mp->g.blocksize;
	fc->inodesize = c->mp->g.inodesize;
	fc->has_ftype = c->mp->g.has_ftype;
	fc->has_sparse = c->mp->g.has_sparse;
	fc->has_metadir = c->mp->g.has_metadir;
	if (c->have_cur && c->cur.type->is_inode && c->buflen >= 176)
		fc->bigtime = xk_dinode_has_bigtime(
			(const struct xk_dinode *)c->buf);
}

uint32_t
db_type_len(const struct db_ctx *c, const struct db_type *t)
{
	const struct xk_geom *g = &c->mp->g;

	if (!strcmp(t->name, "sb") || !strcmp(t->name, "agf") ||
	    !strcmp(t->name, "agi") || !strcmp(t->name, "agfl"))
		return g->sectsize;
	if (!strcmp(t->name, "dir3"))
		return g->dirblksize;
	if (t->is_inode)
		return g->inodesize;
	return g->blocksize;
}

static void
record(struct db_ctx *c)
{
	if (c->hpos < c->hcount - 1)
		c->hcount = c->hpos + 1;	/* drop the forward part */
	if (c->hcount == DB_HIST_MAX) {
		memmove(c->hist, c->hist + 1,
			(DB_HIST_MAX - 1) * sizeof(c->hist[0]));
		c->hcount--;
	}
	c->hist[c->hcount++] = c->cur;
	c->hpos = c->hcount - 1;
}

/* Read the bytes of loc raw, then judge them with the type's verifier. */
static int
load(struct db_ctx *c, const struct db_loc *loc)
{
	struct xk_mount *mp = c->mp;
	const struct xk_buf_ops *ops;
	struct xk_buf *bp;
	uint32_t rlen = loc->type->is_inode ? loc->ilen : loc->len;
	uint8_t *nbuf;
	int err;

	if (loc->daddr + (rlen >> XK_BBSHIFT) > mp->dev->size >> XK_BBSHIFT) {
		db_err(c, "daddr %llu is beyond the end of the filesystem",
		       (unsigned long long)loc->daddr);
		return -ERANGE;
	}
	err = xk_buf_read_ctx(mp, loc->daddr, rlen, NULL, loc->agno, 0,
			      XK_READ_NOVERIFY, &bp);
	if (err) {
		db_err(c, "cannot read daddr %llu: %s",
		       (unsigned long long)loc->daddr, xk_strerror(err));
		return err;
	}
	nbuf = malloc(loc->len);
	if (!nbuf) {
		xk_buf_release(bp);
		return -ENOMEM;
	}
	memcpy(nbuf, bp->data + (loc->type->is_inode ? loc->ioff : 0),
	       loc->len);
	xk_buf_release(bp);
	free(c->buf);
	c->buf = nbuf;
	c->buflen = loc->len;
	c->cur = *loc;
	c->have_cur = 1;
	c->verdict = 0;
	c->crc_ok = -1;
	memset(&c->fail, 0, sizeof(c->fail));
	ops = loc->type->ops ? loc->type->ops(c->buf, c->buflen) : NULL;
	if (!ops)
		return 0;
	if (ops->crc_off != XK_NO_CRC && ops->crc_off + 4 <= c->buflen)
		c->crc_ok = xk_cksum_ok(c->buf, c->buflen, ops->crc_off);
	if (loc->type->is_inode) {
		c->fail.structure = "inode";
		c->fail.daddr = loc->daddr;
		c->fail.agno = -1;
		c->fail.ino = loc->ino;
		c->verdict = xk_dinode_verify(mp, loc->ino,
				(const struct xk_dinode *)c->buf, &c->fail);
		return 0;
	}
	err = xk_buf_read_ctx(mp, loc->daddr, loc->len, ops, loc->agno,
			      loc->ino, XK_READ_SALVAGE, &bp);
	if (bp) {
		c->verdict = bp->error;
		c->fail = bp->fail;
		xk_buf_release(bp);
	} else if (err) {
		c->verdict = err;
	}
	return 0;
}

int
db_reread(struct db_ctx *c)
{
	struct db_loc loc = c->cur;

	return c->have_cur ? load(c, &loc) : 0;
}

int
db_set_cur(struct db_ctx *c, const struct db_loc *loc, int rec)
{
	int err = load(c, loc);

	if (err)
		return err;
	if (rec)
		record(c);
	db_print_verdict(c);
	return 0;
}

int
db_set_inode(struct db_ctx *c, uint64_t ino, int rec)
{
	struct db_loc loc;
	struct xk_imap im;

	if (xk_imap(c->mp, ino, &im)) {
		db_err(c, "bad inode number %llu", (unsigned long long)ino);
		return -EINVAL;
	}
	memset(&loc, 0, sizeof(loc));
	loc.type = db_type_find("inode");
	loc.daddr = im.daddr;
	loc.ilen = im.len;
	loc.ioff = im.offset;
	loc.len = c->mp->g.inodesize;
	loc.agno = xk_ino_to_agno(c->mp, ino);
	loc.ino = ino;
	return db_set_cur(c, &loc, rec);
}

/* Parse an optional AG number argument. */
static int
ag_arg(struct db_ctx *c, int argc, char **argv, uint32_t *agno)
{
	uint64_t v;

	if (argc < 2) {
		*agno = c->have_cur && c->cur.agno >= 0 ?
			(uint32_t)c->cur.agno : 0;
		return 0;
	}
	if (db_parse_u64(argv[1], &v) || v >= c->mp->g.agcount) {
		db_err(c, "bad allocation group number %s", argv[1]);
		return -EINVAL;
	}
	*agno = (uint32_t)v;
	return 0;
}

static int
ag_header(struct db_ctx *c, int argc, char **argv, const char *type,
	  unsigned int sector)
{
	struct db_loc loc;
	uint32_t agno;

	if (ag_arg(c, argc, argv, &agno))
		return 1;
	memset(&loc, 0, sizeof(loc));
	loc.type = db_type_find(type);
	loc.daddr = xk_ag_hdr_daddr(c->mp, agno, sector);
	loc.len = c->mp->g.sectsize;
	loc.agno = agno;
	return db_set_cur(c, &loc, 1) ? 1 : 0;
}

int
db_cmd_sb(struct db_ctx *c, int argc, char **argv)
{
	return ag_header(c, argc, argv, "sb", XK_SB_SECTOR);
}

int
db_cmd_agf(struct db_ctx *c, int argc, char **argv)
{
	return ag_header(c, argc, argv, "agf", XK_AGF_SECTOR);
}

int
db_cmd_agi(struct db_ctx *c, int argc, char **argv)
{
	return ag_header(c, argc, argv, "agi", XK_AGI_SECTOR);
}

int
db_cmd_agfl(struct db_ctx *c, int argc, char **argv)
{
	return ag_header(c, argc, argv, "agfl", XK_AGFL_SECTOR);
}

int
db_cmd_inode(struct db_ctx *c, int argc, char **argv)
{
	uint64_t ino;

	if (argc < 2) {
		if (c->have_cur && c->cur.type->is_inode)
			db_out(c, "current inode number is %llu",
			       (unsigned long long)c->cur.ino);
		else
			db_out(c, "no current inode");
		return 0;
	}
	if (db_parse_u64(argv[1], &ino)) {
		db_err(c, "bad inode number %s", argv[1]);
		return 1;
	}
	return db_set_inode(c, ino, 1) ? 1 : 0;
}

/* Show a block as raw data, keeping the AG it is in. */
static int
goto_daddr(struct db_ctx *c, uint64_t daddr, uint32_t len,
	   const struct db_type *t)
{
	struct db_loc loc;
	uint64_t agbytes = (uint64_t)c->mp->g.agblocks << c->mp->g.blocklog;

	memset(&loc, 0, sizeof(loc));
	loc.type = t ? t : db_type_find("data");
	loc.daddr = daddr;
	loc.len = len;
	loc.agno = (int64_t)((daddr << XK_BBSHIFT) / agbytes);
	return db_set_cur(c, &loc, 1) ? 1 : 0;
}

int
db_cmd_fsblock(struct db_ctx *c, int argc, char **argv)
{
	uint64_t fsb;

	/* As xfs_db: the block the current location starts in. */
	if (argc < 2) {
		if (c->have_cur) {
			uint64_t b = c->cur.daddr >> c->mp->g.blkbb_log;

			db_out(c, "current fsblock is %llu", (unsigned long long)
			       xk_agb_to_fsb(c->mp,
					     (uint32_t)(b / c->mp->g.agblocks),
					     (uint32_t)(b % c->mp->g.agblocks)));
		} else {
			/* xfs_db 7.2's words (6.1 says block 0). */
			db_out(c, "cursor does not point to data device");
		}
		return 0;
	}
	if (db_parse_u64(argv[1], &fsb) ||
	    xk_fsb_to_agno(c->mp, fsb) >= c->mp->g.agcount ||
	    !xk_fsbext_valid(c->mp, fsb, 1)) {
		db_err(c, "bad fsblock %s", argv[1]);
		return 1;
	}
	return goto_daddr(c, xk_fsb_to_daddr(c->mp, fsb), c->mp->g.blocksize,
			  NULL);
}

int
db_cmd_daddr(struct db_ctx *c, int argc, char **argv)
{
	uint64_t d;

	if (argc < 2) {
		if (c->have_cur)
			db_out(c, "current daddr is %llu",
			       (unsigned long long)c->cur.daddr);
		return 0;
	}
	if (db_parse_u64(argv[1], &d) ||
	    d >= (c->mp->dev->size >> XK_BBSHIFT)) {
		db_err(c, "bad daddr %s", argv[1]);
		return 1;
	}
	return goto_daddr(c, d, XK_BBSIZE, NULL);
}

int
db_cmd_type(struct db_ctx *c, int argc, char **argv)
{
	const struct db_type *t;
	struct db_loc loc;

	if (argc < 2) {
		if (c->have_cur)
			db_out(c, "current type is \"%s\"", c->cur.type->name);
		else
			db_out(c, "no current type");
		{
			char list[512];
			size_t o = 0;

			list[0] = '\0';
			for (t = db_types; t->name && o < sizeof(list); t++)
				o += (size_t)snprintf(list + o,
						      sizeof(list) - o, "%s%s",
						      o ? ", " : "", t->name);
			db_out(c, "supported types are: %s", list);
		}
		return 0;
	}
	t = db_type_find(argv[1]);
	if (!t) {
		db_err(c, "no such type %s", argv[1]);
		return 1;
	}
	if (!c->have_cur) {
		db_err(c, "no current object to retype");
		return 1;
	}
	loc = c->cur;
	if (t->is_inode) {
		struct xk_mount *mp = c->mp;
		uint64_t agbno = ((loc.daddr >> mp->g.blkbb_log) -
				  (uint64_t)loc.agno * mp->g.agblocks);

		return db_set_inode(c, xk_agino_to_ino(mp, (uint32_t)loc.agno,
				    (uint32_t)(agbno << mp->g.inopblog)), 1) ?
		       1 : 0;
	}
	/*
	 * As in xfs_db 7.2, raw data after a retype covers what the object
	 * covered (an inode: that inode alone); other types take their own
	 * length, and the type the object already has leaves it as it is.
	 */
	if (t != loc.type && strcmp(t->name, "data") != 0)
		loc.len = db_type_len(c, t);
	if (loc.type->is_inode) {
		loc.daddr += loc.ioff >> XK_BBSHIFT;
		loc.ino = 0;
		if (t != loc.type && strcmp(t->name, "data") == 0)
			loc.len = c->mp->g.inodesize;
	}
	loc.type = t;
	return db_set_cur(c, &loc, 1) ? 1 : 0;
}

int
db_cmd_addr(struct db_ctx *c, int argc, char **argv)
{
	struct xk_mount *mp = c->mp;
	struct xk_fctx fc;
	struct xk_fref r;
	const struct db_type *t;
	struct db_loc loc;
	uint64_t v;
	int err;

	if (argc < 2 || !c->have_cur || !c->cur.type->ftype) {
		db_err(c, "usage: addr FIELD (on a typed object)");
		return 1;
	}
	db_fctx(c, &fc);
	err = xk_field_resolve(&fc, c->cur.type->ftype->fields, argv[1], &r);
	if (err) {
		db_field_error(c, argv[1], &r);
		return 1;
	}
	if (r.bits == 0 || r.bits > 64) {
		db_err(c, "field %s is not a single value", argv[1]);
		return 1;
	}
	v = xk_fval_get(&fc, &r);
	if (r.field->unit == XK_FU_INO ||
	    (r.field->unit == XK_FU_AGINO && c->cur.agno >= 0)) {
		if (r.field->unit == XK_FU_AGINO)
			v = xk_agino_to_ino(mp, (uint32_t)c->cur.agno,
					    (uint32_t)v);
		return db_set_inode(c, v, 1) ? 1 : 0;
	}
	if (r.field->unit == XK_FU_DABLOCK && c->cur.ino &&
	    (!strcmp(c->cur.type->name, "dir3") ||
	     !strcmp(c->cur.type->name, "attr3"))) {
		/* A logical block of the owner's fork: go through its map. */
		int fork = strcmp(c->cur.type->name, "attr3") ? XK_DATA_FORK :
							       XK_ATTR_FORK;

		if (db_set_inode(c, c->cur.ino, 0))
			return 1;
		return db_fork_block(c, fork, v, 1) ? 1 : 0;
	}
	t = r.field->next ? db_type_find(r.field->next) : NULL;
	/* No log type yet: the log's first block is shown as data. */
	if (!t && r.field->next && !strcmp(r.field->next, "log"))
		t = db_type_find("data");
	if (!t) {
		db_err(c, "field %s is not a pointer db can follow", argv[1]);
		return 1;
	}
	memset(&loc, 0, sizeof(loc));
	loc.type = t;
	loc.len = db_type_len(c, t);
	/* Blocks of an inode's tree keep naming it (their owner). */
	loc.ino = (!strcmp(t->name, "bmapbta") || !strcmp(t->name, "bmapbtd") ||
		   !strcmp(t->name, "rtrmapbt") ||
		   !strcmp(t->name, "rtrefcntbt")) ? c->cur.ino : 0;
	switch (r.field->unit) {
	case XK_FU_AGBLOCK:
		if (c->cur.agno < 0 ||
		    !xk_agbext_valid(mp, (uint32_t)c->cur.agno, (uint32_t)v,
				     1) ||
		    v == 0) {
			db_err(c, "%s = %llu is not a block of AG %lld",
			       argv[1], (unsigned long long)v,
			       (long long)c->cur.agno);
			return 1;
		}
		loc.agno = c->cur.agno;
		loc.daddr = xk_agb_to_daddr(mp, (uint32_t)loc.agno,
					    (uint32_t)v);
		break;
	case XK_FU_FSBLOCK:
		if (xk_fsb_to_agno(mp, v) >= mp->g.agcount ||
		    !xk_fsbext_valid(mp, v, 1)) {
			db_err(c, "%s = %llu is not a filesystem block",
			       argv[1], (unsigned long long)v);
			return 1;
		}
		loc.agno = xk_fsb_to_agno(mp, v);
		loc.daddr = xk_fsb_to_daddr(mp, v);
		break;
	default:
		db_err(c, "field %s is not a pointer db can follow", argv[1]);
		return 1;
	}
	return db_set_cur(c, &loc, 1) ? 1 : 0;
}

int
db_cmd_push(struct db_ctx *c, int argc, char **argv)
{
	if (c->depth == DB_STACK_MAX) {
		db_err(c, "the location stack is full");
		return 1;
	}
	if (!c->have_cur) {
		db_err(c, "no current location to push");
		return 1;
	}
	c->stack[c->depth++] = c->cur;
	if (argc > 1) {
		char line[1024] = "";

		for (int i = 1; i < argc; i++) {
			strncat(line, argv[i], sizeof(line) - strlen(line) - 2);
			strcat(line, " ");
		}
		return db_run_line(c, line);
	}
	return 0;
}

int
db_cmd_pop(struct db_ctx *c, int argc, char **argv)
{
	struct db_loc loc;

	(void)argc;
	(void)argv;
	if (c->depth == 0) {
		db_err(c, "the location stack is empty");
		return 1;
	}
	loc = c->stack[--c->depth];
	return db_set_cur(c, &loc, 1) ? 1 : 0;
}

static void
show_loc(struct db_ctx *c, int i, const struct db_loc *l)
{
	if (l->type->is_inode)
		db_out(c, "%d:\n\tbyte offset %llu, length %u\n\tinode %llu",
		       i, (unsigned long long)(l->daddr << XK_BBSHIFT) +
		       l->ioff, l->len, (unsigned long long)l->ino);
	else
		db_out(c, "%d:\n\tbyte offset %llu, length %u\n\ttype %s",
		       i, (unsigned long long)(l->daddr << XK_BBSHIFT),
		       l->len, l->type->name);
}

int
db_cmd_stack(struct db_ctx *c, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (c->have_cur)
		show_loc(c, c->depth + 1, &c->cur);
	for (int i = c->depth - 1; i >= 0; i--)
		show_loc(c, i + 1, &c->stack[i]);
	return 0;
}

static int
hist_move(struct db_ctx *c, int delta)
{
	struct db_loc loc;
	int to = c->hpos + delta;

	if (to < 0 || to >= c->hcount) {
		db_err(c, "no %s location in the history",
		       delta < 0 ? "previous" : "next");
		return 1;
	}
	c->hpos = to;
	loc = c->hist[to];
	return db_set_cur(c, &loc, 0) ? 1 : 0;
}

int
db_cmd_back(struct db_ctx *c, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return hist_move(c, -1);
}

int
db_cmd_forward(struct db_ctx *c, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return hist_move(c, 1);
}

/*
 * Block at file offset off of the current inode's fork, typed by what it
 * holds: directory blocks, attribute blocks, remote symlink blocks or
 * plain data.
 */
int
db_fork_block(struct db_ctx *c, int whichfork, uint64_t off, int rec)
{
	struct xk_mount *mp = c->mp;
	const struct xk_dinode *dip;
	const struct db_type *t;
	struct db_loc loc;
	uint64_t ino, fsb, len;
	uint16_t mode;

	if (!c->have_cur || !c->cur.type->is_inode) {
		db_err(c, "no current inode");
		return -EINVAL;
	}
	ino = c->cur.ino;
	dip = (const struct xk_dinode *)c->buf;
	mode = xk_be16_get(dip->di_mode) & XK_S_IFMT;
	if (whichfork == XK_ATTR_FORK && !dip->di_forkoff) {
		db_err(c, "no attribute data for file");	/* xfs_db's */
		return -ENOENT;
	}
	if (db_bmap_lookup(c, ino, whichfork, off, &fsb, &len)) {
		/* xfs_db's words: fstests' populate checks read them. */
		db_err(c, "file %s block is unmapped",
		       whichfork == XK_ATTR_FORK ? "attr" : "data");
		return -ENOENT;
	}
	memset(&loc, 0, sizeof(loc));
	if (whichfork == XK_ATTR_FORK)
		t = db_type_find("attr3");
	else if (ino == mp->sb.uquotino || ino == mp->sb.gquotino ||
		 ino == mp->sb.pquotino)
		t = db_type_find("dqblk");
	else if (mode == XK_S_IFDIR)
		t = db_type_find("dir3");
	else if (mode == XK_S_IFLNK)
		t = db_type_find("symlink");
	else
		t = db_type_find("data");
	loc.type = t;
	loc.len = db_type_len(c, t);
	if (loc.len > len << mp->g.blocklog && !strcmp(t->name, "dir3"))
		loc.len = (uint32_t)(len << mp->g.blocklog);
	loc.daddr = xk_fsb_to_daddr(mp, fsb);
	loc.agno = xk_fsb_to_agno(mp, fsb);
	loc.ino = ino;
	return db_set_cur(c, &loc, rec);
}

static int
fork_cmd(struct db_ctx *c, int argc, char **argv, int whichfork)
{
	uint64_t off;

	if (argc < 2 || db_parse_u64(argv[1], &off)) {
		db_err(c, "usage: %s FILEOFFSET", argv[0]);
		return 1;
	}
	return db_fork_block(c, whichfork, off, 1) ? 1 : 0;
}

int
db_cmd_dblock(struct db_ctx *c, int argc, char **argv)
{
	return fork_cmd(c, argc, argv, XK_DATA_FORK);
}

int
db_cmd_ablock(struct db_ctx *c, int argc, char **argv)
{
	return fork_cmd(c, argc, argv, XK_ATTR_FORK);
}
