/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xfskit-db internals: the session context every command receives, the
 * command and type tables, and the helpers the command files share.
 * There is no mutable global state outside main.c: everything a command
 * may change hangs off struct db_ctx.
 */
#ifndef XFSKIT_DB_H
#define XFSKIT_DB_H

#include <stdint.h>
#include <stdio.h>

#include <xfskit/fields.h>
#include <xfskit/libfs.h>
#include <xfskit/vec.h>

struct db_ctx;

/* A type db can show a buffer as: fields plus the verifier that reads it. */
struct db_type {
	const char	*name;
	const struct xk_ftype *ftype;	/* NULL: raw hex dump ("data") */
	/* The verifier for these bytes (by magic); NULL: none. */
	const struct xk_buf_ops *(*ops)(const uint8_t *buf, size_t len);
	int		is_inode;	/* one inode in a cluster */
	uint32_t	crc_unit;	/* bytes per CRC'd record, 0: whole */
	uint32_t	crc_unit_off;	/* CRC offset inside each record */
};

const struct db_type *db_type_find(const char *name);
/* Names of every type, NULL-terminated (for help and completion). */
extern const struct db_type db_types[];

/* Where the cursor is: one buffer, typed. */
struct db_loc {
	const struct db_type *type;
	uint64_t	daddr;
	uint32_t	len;		/* bytes */
	int64_t		agno;		/* AG of the block, or -1 */
	uint64_t	ino;		/* inode shown, or block owner */
	uint32_t	ioff;		/* inode: offset in its cluster */
	uint32_t	ilen;		/* inode: cluster buffer length */
};

#define DB_STACK_MAX	64
#define DB_HIST_MAX	64

struct db_ctx {
	struct xk_mount	*mp;
	const char	*image;
	const char	*logdev;	/* -l: the external log's device */
	const char	*rtdev;		/* -R: the realtime device */
	int		readonly;	/* -r */
	int		expert;		/* -x */
	int		json;		/* -j */
	const char	*prompt;
	FILE		*out;
	/* the cursor and its bytes */
	int		have_cur;
	struct db_loc	cur;
	uint8_t		*buf;
	size_t		buflen;
	int		verdict;	/* 0, XK_EBADCRC, XK_ECORRUPT */
	struct xk_fail	fail;
	int		crc_ok;		/* -1: no CRC in this type */
	/* push/pop stack and back/forward history */
	struct db_loc	stack[DB_STACK_MAX];
	int		depth;
	struct db_loc	hist[DB_HIST_MAX];
	int		hcount, hpos;
	/* completion candidates, kept across readline's callbacks */
	struct db_cands {
		char	**v;
		size_t	n, cap, next;
	} comp;
	/* JSON collection for the command being run */
	char		*jfields, *jlines;
	size_t		jflen, jllen;
};

/* A command: returns 0 on success, non-zero when it failed. */
struct db_cmd {
	const char	*name;
	const char	*aliases[3];
	const char	*args;
	int		(*fn)(struct db_ctx *c, int argc, char **argv);
	const char	*help;		/* one line */
	const char	*long_help;	/* may be NULL */
	int		writes;		/* needs -x, never with -r */
};

extern const struct db_cmd db_cmds[];
const struct db_cmd *db_cmd_find(const char *name);
/* Tokenize and run one command line; returns its status. */
int db_run_line(struct db_ctx *c, const char *line);

/* Set while readline runs (its callbacks take no user pointer). */
extern struct db_ctx *db_completion_ctx;

/* input.c: the read-eval loop; returns the overall exit status. */
int db_interactive(struct db_ctx *c, int use_readline);

/* out.c: output that honours -j. */
void db_out(struct db_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void db_kv(struct db_ctx *c, const char *name, const char *value);
void db_err(struct db_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void db_note(struct db_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void db_json_begin(struct db_ctx *c);
void db_json_end(struct db_ctx *c, const char *line, int status);

/* cursor.c */
int db_set_cur(struct db_ctx *c, const struct db_loc *loc, int record);
int db_set_inode(struct db_ctx *c, uint64_t ino, int record);
int db_reread(struct db_ctx *c);
void db_fctx(const struct db_ctx *c, struct xk_fctx *fc);
int db_parse_u64(const char *s, uint64_t *v);
/* Block length (bytes) for a type at an fsblock. */
uint32_t db_type_len(const struct db_ctx *c, const struct db_type *t);
/* Read n bytes of the fork block at file offset off into a new cursor. */
int db_fork_block(struct db_ctx *c, int whichfork, uint64_t off, int record);
/* Map a file block of an inode fork; -ENOENT when a hole. */
int db_bmap_lookup(struct db_ctx *c, uint64_t ino, int whichfork,
		   uint64_t off, uint64_t *fsb, uint64_t *len);

/* print.c */
void db_print_all(struct db_ctx *c);
int db_print_path(struct db_ctx *c, const char *path);
/* Say why path did not resolve, in xfs_db's words (r from the failure). */
void db_field_error(struct db_ctx *c, const char *path,
		    const struct xk_fref *r);
void db_print_verdict(struct db_ctx *c);
void db_format_value(const struct db_ctx *c, const struct xk_fctx *fc,
		     const struct xk_fref *r, char *out, size_t len);

/* bmap.c: a file's extents, whichever fork format. */
struct db_ext {
	uint64_t	off, fsb, len;
	int		unwritten;
};
int db_inode_extents(struct db_ctx *c, uint64_t ino, int whichfork,
		     struct db_ext **exts, size_t *n);

/* dir.c: directory entries of an inode. */
struct db_dirent {
	char		name[256];
	uint64_t	ino;
	int		ftype;
};
int db_dir_list(struct db_ctx *c, uint64_t dino, struct db_dirent **ents,
		size_t *n);
int db_path_lookup(struct db_ctx *c, const char *path, uint64_t *ino);

/*
 * rtbitmap.c: realtime group rgno's bitmap (the classic volume's when the
 * filesystem has no groups) as its words in host order, *nbits the
 * group's extents; errors are printed.  Free *bm.
 */
int db_rt_bitmap_load(struct db_ctx *c, uint32_t rgno, uint8_t **bm,
		      uint64_t *nbits);

/* Command functions, by file. */
int db_cmd_sb(struct db_ctx *c, int argc, char **argv);
int db_cmd_agf(struct db_ctx *c, int argc, char **argv);
int db_cmd_agi(struct db_ctx *c, int argc, char **argv);
int db_cmd_agfl(struct db_ctx *c, int argc, char **argv);
int db_cmd_inode(struct db_ctx *c, int argc, char **argv);
int db_cmd_fsblock(struct db_ctx *c, int argc, char **argv);
int db_cmd_daddr(struct db_ctx *c, int argc, char **argv);
int db_cmd_addr(struct db_ctx *c, int argc, char **argv);
int db_cmd_type(struct db_ctx *c, int argc, char **argv);
int db_cmd_push(struct db_ctx *c, int argc, char **argv);
int db_cmd_pop(struct db_ctx *c, int argc, char **argv);
int db_cmd_stack(struct db_ctx *c, int argc, char **argv);
int db_cmd_back(struct db_ctx *c, int argc, char **argv);
int db_cmd_forward(struct db_ctx *c, int argc, char **argv);
int db_cmd_dblock(struct db_ctx *c, int argc, char **argv);
int db_cmd_ablock(struct db_ctx *c, int argc, char **argv);
int db_cmd_print(struct db_ctx *c, int argc, char **argv);
int db_cmd_locate(struct db_ctx *c, int argc, char **argv);
int db_cmd_write(struct db_ctx *c, int argc, char **argv);
int db_cmd_fuzz(struct db_ctx *c, int argc, char **argv);
int db_cmd_blocktrash(struct db_ctx *c, int argc, char **argv);
int db_cmd_label(struct db_ctx *c, int argc, char **argv);
int db_cmd_uuid(struct db_ctx *c, int argc, char **argv);
int db_cmd_version(struct db_ctx *c, int argc, char **argv);
int db_cmd_hash(struct db_ctx *c, int argc, char **argv);
int db_cmd_logprint(struct db_ctx *c, int argc, char **argv);
int db_cmd_logformat(struct db_ctx *c, int argc, char **argv);
int db_cmd_convert(struct db_ctx *c, int argc, char **argv);
int db_cmd_freesp(struct db_ctx *c, int argc, char **argv);
int db_cmd_frag(struct db_ctx *c, int argc, char **argv);
int db_cmd_bmap(struct db_ctx *c, int argc, char **argv);
int db_cmd_check(struct db_ctx *c, int argc, char **argv);
int db_cmd_ls(struct db_ctx *c, int argc, char **argv);
int db_cmd_path(struct db_ctx *c, int argc, char **argv);
int db_cmd_ncheck(struct db_ctx *c, int argc, char **argv);
int db_cmd_scan(struct db_ctx *c, int argc, char **argv);
/* metadump_cmd.c */
int db_cmd_metadump(struct db_ctx *c, int argc, char **argv);

#endif /* XFSKIT_DB_H */
