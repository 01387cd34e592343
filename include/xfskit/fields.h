/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Field tables: presentation metadata for every on-disk structure.
 *
 * Each structure has a const, NULL-terminated array of struct xk_field:
 * the name xfs_db prints for it, where its bits are, how to show its
 * value, what it points at, and -- for packed and variable structures --
 * functions that compute presence, element count, element position and
 * width from the buffer itself.  xfskit-db's print, write, fuzz and addr
 * commands walk these tables, and tests enumerate them to build their
 * corruption matrices, so a structure's layout is described once.
 *
 * Positions are bytes from the start of the enclosing structure plus a
 * bit offset counted from the most significant bit of that byte (XFS
 * packs bitfields big-endian: the bmbt extent flag is bit 0).  Every
 * computed position is checked against the buffer length: an element
 * that does not fit is simply absent, so a hostile block cannot make a
 * reader run off its buffer.
 */
#ifndef XFSKIT_FIELDS_H
#define XFSKIT_FIELDS_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>

/* How a value is shown (and parsed back by db's write). */
enum xk_fkind {
	XK_FK_UINT,		/* unsigned decimal */
	XK_FK_INT,		/* signed decimal (two's complement) */
	XK_FK_HEX,		/* 0x..., plain 0 for zero */
	XK_FK_OCT,		/* 0..., as a file mode */
	XK_FK_UUID,		/* 16 bytes as xxxxxxxx-xxxx-... */
	XK_FK_CRC,		/* CRC32c, its bytes read big-endian */
	XK_FK_CHARS,		/* byte string, quoted with C escapes */
	XK_FK_TIME,		/* inode timestamp: date of seconds */
	XK_FK_NSEC,		/* inode timestamp: its nanoseconds */
	XK_FK_DQTIME,		/* quota timer: 32-bit, date when set */
	XK_FK_FORMAT,		/* fork format, number and name */
	XK_FK_METATYPE,		/* metafile type, number and name */
	XK_FK_STRUCT,		/* a sub-structure: see xk_field.sub */
};

/* What a value means: the unit of an address, for addr and convert. */
enum xk_funit {
	XK_FU_NONE,
	XK_FU_AGBLOCK,		/* block in the current AG */
	XK_FU_FSBLOCK,		/* filesystem block */
	XK_FU_AGINO,		/* inode in the current AG */
	XK_FU_INO,		/* inode number */
	XK_FU_DADDR,		/* 512-byte sector */
	XK_FU_LSN,		/* log sequence number */
	XK_FU_DABLOCK,		/* block of the owner's fork */
};

#define XK_FF_ARRAY	(1u << 0)	/* indexed: name[i] */
#define XK_FF_BASE1	(1u << 1)	/* indices count from 1 (btrees) */
#define XK_FF_NULL	(1u << 2)	/* all ones prints "null" */
#define XK_FF_SKIPNULL	(1u << 3)	/* leave out null entries */
#define XK_FF_COMPACT	(1u << 4)	/* records shown as [a,b] */
#define XK_FF_OKEMPTY	(1u << 5)	/* nothing in it: (empty) */
#define XK_FF_NOPRINT	(1u << 6)	/* by name only, not printed */
#define XK_FF_SKIPZERO	(1u << 7)	/* zero prints as nothing */

struct xk_mount;

/* What computed fields may look at. */
struct xk_fctx {
	const uint8_t	*buf;
	size_t		len;		/* bytes in buf */
	uint32_t	blocksize;	/* filesystem block (for tails) */
	uint32_t	inodesize;
	int		has_ftype;	/* dir entries carry a type byte */
	int		has_sparse;	/* inobt records have holemask */
	int		bigtime;	/* inode timestamps are 64-bit ns */
	int		has_metadir;	/* the metadata directory tree */
};

/* Element absent or out of bounds. */
#define XK_FOFF_NONE	((size_t)-1)

struct xk_field {
	const char	*name;
	uint32_t	offset;		/* from the parent's start */
	uint32_t	bitoff;		/* bits past offset, MSB 1st */
	uint32_t	bits;		/* value width; 0 for STRUCT */
	enum xk_fkind	kind;
	enum xk_funit	unit;
	unsigned int	flags;		/* XK_FF_* */
	uint32_t	count;		/* fixed array length */
	uint32_t	stride;		/* bytes between elements */
	const struct xk_field *sub;	/* STRUCT: the element's fields */
	const char	*next;		/* type pointed at, or NULL */
	/* Computed layout; NULL means "use the fixed values above". */
	int		(*present)(const struct xk_fctx *c, size_t base);
	uint32_t	(*count_fn)(const struct xk_fctx *c, size_t base);
	/* Absolute byte offset of element i (XK_FOFF_NONE: absent). */
	size_t		(*elem_fn)(const struct xk_fctx *c, size_t base,
				   uint32_t i);
	/* Width in bits of a variable field of the structure at base. */
	uint32_t	(*bits_fn)(const struct xk_fctx *c, size_t base);
};

/* A structure type as xfs_db names it ("sb", "bnobt", "inode", ...). */
struct xk_ftype {
	const char	*name;
	const struct xk_field *fields;	/* NULL-terminated by name */
};

/* Every type with a table, NULL-terminated. */
extern const struct xk_ftype *const xk_ftypes[];
const struct xk_ftype *xk_ftype_find(const char *name);

extern const struct xk_ftype xk_sb_ftype;
extern const struct xk_ftype xk_agf_ftype;
extern const struct xk_ftype xk_agi_ftype;
extern const struct xk_ftype xk_agfl_ftype;
extern const struct xk_ftype xk_bnobt_ftype;
extern const struct xk_ftype xk_cntbt_ftype;
extern const struct xk_ftype xk_inobt_ftype;
extern const struct xk_ftype xk_finobt_ftype;
extern const struct xk_ftype xk_rmapbt_ftype;
extern const struct xk_ftype xk_refcntbt_ftype;
extern const struct xk_ftype xk_rtrmapbt_ftype;
extern const struct xk_ftype xk_rtrefcntbt_ftype;
extern const struct xk_ftype xk_bmapbta_ftype;
extern const struct xk_ftype xk_bmapbtd_ftype;
extern const struct xk_ftype xk_inode_ftype;
extern const struct xk_ftype xk_dir3_ftype;
extern const struct xk_ftype xk_attr3_ftype;
extern const struct xk_ftype xk_symlink_ftype;
extern const struct xk_ftype xk_dqblk_ftype;

/* ---- walking a table ---- */

/* Whether field f of the structure at base is there at all. */
int xk_field_present(const struct xk_fctx *c, const struct xk_field *f,
		     size_t base);
/* Elements of f (1 for a scalar, 0 when absent), clipped to the buffer. */
uint32_t xk_field_count(const struct xk_fctx *c, const struct xk_field *f,
			size_t base);
/* Absolute byte offset of element i of f; XK_FOFF_NONE if out of range. */
size_t xk_field_elem(const struct xk_fctx *c, const struct xk_field *f,
		     size_t base, uint32_t i);
/* Width in bits of f in the structure at base. */
uint32_t xk_field_bits(const struct xk_fctx *c, const struct xk_field *f,
		       size_t base);

/* ---- values ---- */

/*
 * A resolved scalar: where its bits are in the buffer.  Values of up to
 * 64 bits go through xk_fval_get/set; wider ones (uuid, chars) are byte
 * ranges at byte with bits/8 bytes.
 */
struct xk_fref {
	const struct xk_field *field;
	size_t		byte;		/* absolute byte offset */
	uint32_t	bitoff;		/* bits after byte, MSB first */
	uint32_t	bits;
	size_t		base;		/* enclosing structure */
	int64_t		index;		/* -1: the whole field */
	/* When resolving fails: which component of the path, and why. */
	enum xk_fpath_why {
		XK_FPATH_OK = 0,
		XK_FPATH_SYNTAX,	/* empty component, bad [index] */
		XK_FPATH_UNKNOWN,	/* no such field here */
		XK_FPATH_NOT_ARRAY,	/* [index] on a scalar */
		XK_FPATH_NO_SUBFIELDS,	/* .name after a scalar */
		XK_FPATH_RANGE,		/* index past the field's count */
		XK_FPATH_WANT_INDEX,	/* .name after an array, no [index] */
	}		why;
	size_t		bad_off;	/* the component: path + bad_off */
	size_t		bad_len;
	uint64_t	bad_index;	/* XK_FPATH_RANGE: the index given */
	uint32_t	first, count;	/* XK_FPATH_RANGE: the valid ones */
};

/* Read bits MSB first, as xfs_db does for every field (CRCs too). */
uint64_t xk_fval_get(const struct xk_fctx *c, const struct xk_fref *r);
/* Store v into the field; buf is the writable copy of c->buf. */
void xk_fval_set(uint8_t *buf, const struct xk_fref *r, uint64_t v);

/*
 * Resolve a field path such as "core.mode", "u3.bmx[2].startblock",
 * "recs[3].blockcount", "bno[5]" or "keys[1]" in the structure at
 * offset 0.  A path naming a whole struct element resolves to it with
 * bits = 0 (for print).  Returns 0, -ENOENT for an unknown name or
 * bad syntax, or -ERANGE for an index past the field's count; r->why and
 * r->bad_off/bad_len then say which component and why (the messages
 * xfs_db prints are built from them).
 */
XK_MUST_CHECK int xk_field_resolve(const struct xk_fctx *c,
				   const struct xk_field *fields,
				   const char *path, struct xk_fref *r);

#endif /* XFSKIT_FIELDS_H */
