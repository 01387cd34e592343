// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Field table of one inode (the buffer holds exactly one inode, core at
 * offset 0): the core, the v3 fields, and both forks in whatever format
 * the core says they have -- device number, extent list, in-inode bmbt
 * root, local symlink target, short-form directory or short-form
 * attributes.  Names follow xfs_db ("core.mode", "u3.bmx[0]",
 * "a.sfattr.list[1].name").  Every fork element is kept inside its fork
 * and inside the buffer, whatever the counts in the core claim.
 */
#include <xfskit/btree.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dinode.h>
#include <xfskit/format/dir.h>

#include "fields_priv.h"

#define DI(nm, mb, k, ...)	F(nm, struct xk_dinode, mb, k, __VA_ARGS__)
#define FLAG(nm, bit) \
	B(nm, struct xk_dinode, di_flags, 15 - (bit), 1, XK_FK_UINT)
#define FLAG2(nm, bit) \
	B(nm, struct xk_dinode, di_flags2, 63 - (bit), 1, XK_FK_UINT)

static const struct xk_dinode *
core(const struct xk_fctx *c)
{
	if (c->len < sizeof(struct xk_dinode))
		return NULL;
	return (const struct xk_dinode *)c->buf;
}

static int
nrext64(const struct xk_fctx *c, size_t base)
{
	const struct xk_dinode *d = core(c);

	(void)base;
	return d && xk_dinode_has_nrext64(d);
}

static int
small_ext(const struct xk_fctx *c, size_t base)
{
	return core(c) && !nrext64(c, base);
}

/* A metadata inode keeps its metafile type where onlink was. */
static int
metafile(const struct xk_fctx *c, size_t base)
{
	const struct xk_dinode *d = core(c);

	(void)base;
	return d && c->has_metadir && xk_dinode_is_metafile(d);
}

static int
not_metafile(const struct xk_fctx *c, size_t base)
{
	return core(c) && !metafile(c, base);
}

static const struct xk_field core_fields[] = {
	DI("magic", di_magic, XK_FK_HEX),
	DI("mode", di_mode, XK_FK_OCT),
	DI("version", di_version, XK_FK_UINT),
	DI("format", di_format, XK_FK_FORMAT),
	DI("onlink", di_onlink, XK_FK_UINT, .present = not_metafile),
	DI("metatype", di_onlink, XK_FK_METATYPE, .present = metafile),
	DI("uid", di_uid, XK_FK_UINT),
	DI("gid", di_gid, XK_FK_UINT),
	DI("nlinkv2", di_nlink, XK_FK_UINT),
	DI("projid_lo", di_projid_lo, XK_FK_UINT),
	DI("projid_hi", di_projid_hi, XK_FK_UINT),
	/* nrext64's 64-bit count sits where the pad and flush counter
	 * were: xfs_db prints fields in their on-disk order. */
	DI("nextents", di_big_nextents, XK_FK_UINT, .present = nrext64),
	DI("atime.sec", di_atime, XK_FK_TIME),
	DI("atime.nsec", di_atime, XK_FK_NSEC),
	DI("mtime.sec", di_mtime, XK_FK_TIME),
	DI("mtime.nsec", di_mtime, XK_FK_NSEC),
	DI("ctime.sec", di_ctime, XK_FK_TIME),
	DI("ctime.nsec", di_ctime, XK_FK_NSEC),
	DI("size", di_size, XK_FK_INT),	/* xfs_fsize_t: signed */
	DI("nblocks", di_nblocks, XK_FK_UINT),
	DI("extsize", di_extsize, XK_FK_UINT),
	DI("nextents", di_nextents, XK_FK_UINT, .present = small_ext),
	DI("naextents", di_anextents, XK_FK_UINT, .present = small_ext),
	DI("naextents", di_big_anextents, XK_FK_UINT, .present = nrext64),
	DI("forkoff", di_forkoff, XK_FK_UINT),
	DI("aformat", di_aformat, XK_FK_FORMAT),
	DI("dmevmask", di_dmevmask, XK_FK_UINT),
	DI("dmstate", di_dmstate, XK_FK_UINT),
	FLAG("newrtbm", 2),
	FLAG("prealloc", 1),
	FLAG("realtime", 0),
	FLAG("immutable", 3),
	FLAG("append", 4),
	FLAG("sync", 5),
	FLAG("noatime", 6),
	FLAG("nodump", 7),
	FLAG("rtinherit", 8),
	FLAG("projinherit", 9),
	FLAG("nosymlinks", 10),
	FLAG("extsz", 11),
	FLAG("extszinherit", 12),
	FLAG("nodefrag", 13),
	FLAG("filestream", 14),
	DI("gen", di_gen, XK_FK_UINT),
	FEND
};

static const struct xk_field v3_fields[] = {
	DI("crc", di_crc, XK_FK_CRC),
	DI("change_count", di_changecount, XK_FK_UINT),
	DI("lsn", di_lsn, XK_FK_HEX, .unit = XK_FU_LSN),
	DI("flags2", di_flags2, XK_FK_HEX),
	DI("cowextsize", di_cowextsize, XK_FK_UINT),
	DI("crtime.sec", di_crtime, XK_FK_TIME),
	DI("crtime.nsec", di_crtime, XK_FK_NSEC),
	DI("inumber", di_ino, XK_FK_UINT, .unit = XK_FU_INO),
	DI("uuid", di_uuid, XK_FK_UUID),
	FLAG2("reflink", 1),
	FLAG2("cowextsz", 2),
	FLAG2("dax", 0),
	FLAG2("bigtime", 3),
	FLAG2("nrext64", 4),
	B("metadata", struct xk_dinode, di_flags2, 63 - 5, 1, XK_FK_UINT),
	FEND
};

/* ---- fork geometry ---- */

#define DFORK_OFF	XK_DINODE_CORE_SIZE

/* Which fork starts at base, its format, size and extent count. */
static int
fork_of(size_t base)
{
	return base == DFORK_OFF ? XK_DATA_FORK : XK_ATTR_FORK;
}

static size_t
fork_size(const struct xk_fctx *c, size_t base)
{
	const struct xk_dinode *d = core(c);

	if (!d || base > c->len)
		return 0;
	if (fork_of(base) == XK_ATTR_FORK)
		return c->len - base;
	return d->di_forkoff ? xk_dinode_forkoff_bytes(d) :
			       c->len - DFORK_OFF;
}

static int
fork_format(const struct xk_fctx *c, size_t base)
{
	const struct xk_dinode *d = core(c);

	return d ? xk_dfork_format(d, fork_of(base)) : -1;
}

static int
is_extents(const struct xk_fctx *c, size_t base)
{
	return fork_format(c, base) == XK_DINODE_FMT_EXTENTS;
}

static int
is_btree(const struct xk_fctx *c, size_t base)
{
	return fork_format(c, base) == XK_DINODE_FMT_BTREE;
}

static int
is_dev(const struct xk_fctx *c, size_t base)
{
	return fork_format(c, base) == XK_DINODE_FMT_DEV;
}

static int
is_local_type(const struct xk_fctx *c, size_t base, uint32_t type)
{
	const struct xk_dinode *d = core(c);

	if (fork_format(c, base) != XK_DINODE_FMT_LOCAL)
		return 0;
	if (fork_of(base) == XK_ATTR_FORK)
		return type == 0;
	return (xk_be16_get(d->di_mode) & XK_S_IFMT) == type;
}

static int
is_symlink(const struct xk_fctx *c, size_t base)
{
	return is_local_type(c, base, XK_S_IFLNK);
}

static int
is_sfdir(const struct xk_fctx *c, size_t base)
{
	return is_local_type(c, base, XK_S_IFDIR);
}

static int
is_sfattr(const struct xk_fctx *c, size_t base)
{
	return is_local_type(c, base, 0);
}

static uint32_t
bmx_count(const struct xk_fctx *c, size_t base)
{
	const struct xk_dinode *d = core(c);
	uint64_t n, max = fork_size(c, base) / sizeof(struct xk_bmbt_rec);

	if (!d)
		return 0;
	n = xk_dinode_fork_nextents(d, fork_of(base));
	return (uint32_t)(n < max ? n : max);
}

static uint32_t
symlink_bits(const struct xk_fctx *c, size_t base)
{
	const struct xk_dinode *d = core(c);
	uint64_t n = d ? xk_be64_get(d->di_size) : 0;
	size_t max = fork_size(c, base);

	return (uint32_t)(n < max ? n : max) * 8;
}

/* ---- in-inode bmbt root ---- */

static uint32_t
bmroot_count(const struct xk_fctx *c, size_t base)
{
	return (uint32_t)fp_get(c, base + 2, 2);
}

static size_t
bmroot_ptr(const struct xk_fctx *c, size_t base, uint32_t i)
{
	size_t size = fork_size(c, base), maxrecs;

	if (size < sizeof(struct xk_bmdr_block))
		return XK_FOFF_NONE;
	maxrecs = xk_bmdr_maxrecs((unsigned int)size, 0);
	if (i >= maxrecs)
		return XK_FOFF_NONE;
	return base + 4 + maxrecs * 8 + (size_t)i * 8;
}

static const struct xk_field bmroot_d_fields[] = {
	R("level", 0, 0, 16, XK_FK_UINT),
	R("numrecs", 2, 0, 16, XK_FK_UINT),
	S("keys", 4, xk_bmbt_key_fields, .flags = XK_FF_ARRAY | XK_FF_BASE1 |
	  XK_FF_COMPACT, .stride = 8, .count_fn = bmroot_count),
	R("ptrs", 0, 0, 64, XK_FK_UINT, .flags = XK_FF_ARRAY | XK_FF_BASE1 |
	  XK_FF_NULL, .count_fn = bmroot_count, .elem_fn = bmroot_ptr,
	  .unit = XK_FU_FSBLOCK, .next = "bmapbtd"),
	FEND
};

static const struct xk_field bmroot_a_fields[] = {
	R("level", 0, 0, 16, XK_FK_UINT),
	R("numrecs", 2, 0, 16, XK_FK_UINT),
	S("keys", 4, xk_bmbt_key_fields, .flags = XK_FF_ARRAY | XK_FF_BASE1 |
	  XK_FF_COMPACT, .stride = 8, .count_fn = bmroot_count),
	R("ptrs", 0, 0, 64, XK_FK_UINT, .flags = XK_FF_ARRAY | XK_FF_BASE1 |
	  XK_FF_NULL, .count_fn = bmroot_count, .elem_fn = bmroot_ptr,
	  .unit = XK_FU_FSBLOCK, .next = "bmapbta"),
	FEND
};

/*
 * ---- realtime groups' btree roots (data fork, format meta_btree) ----
 * A 4-byte level/numrecs header, then records (a leaf root) or keys and
 * 64-bit pointers, the pointers after room for as many keys as the fork
 * holds.
 */

static int
is_meta_root(const struct xk_fctx *c, size_t base, uint16_t type)
{
	const struct xk_dinode *d = core(c);

	return fork_format(c, base) == XK_DINODE_FMT_META_BTREE &&
	       fork_of(base) == XK_DATA_FORK && xk_dinode_is_metafile(d) &&
	       xk_dinode_metatype(d) == type;
}

static int
is_rtrmap_root(const struct xk_fctx *c, size_t base)
{
	return is_meta_root(c, base, XK_METAFILE_RTRMAP);
}

static int
is_rtrefc_root(const struct xk_fctx *c, size_t base)
{
	return is_meta_root(c, base, XK_METAFILE_RTREFCOUNT);
}

static int
root_is_leaf(const struct xk_fctx *c, size_t base)
{
	return fp_get(c, base, 2) == 0;
}

static int
root_is_node(const struct xk_fctx *c, size_t base)
{
	return !root_is_leaf(c, base);
}

/* Where the root's pointers start follows the tree's own rule (btree.h). */
static size_t
meta_root_ptr(const struct xk_fctx *c, size_t base, uint32_t i,
	      const struct xk_btree_ops *ops)
{
	size_t size = fork_size(c, base), maxrecs;
	size_t slot = ops->key_len * (ops->overlapping ? 2 : 1);

	if (size < 4)
		return XK_FOFF_NONE;
	maxrecs = (size - 4) /
		  ((ops->iroot_two_keys ? 2 : 1) * slot + ops->ptr_len);
	if (i >= maxrecs)
		return XK_FOFF_NONE;
	return base + 4 + maxrecs * slot + (size_t)i * ops->ptr_len;
}

static size_t
rtrmap_root_ptr(const struct xk_fctx *c, size_t base, uint32_t i)
{
	return meta_root_ptr(c, base, i, &xk_rtrmapbt_ops);
}

static size_t
rtrefc_root_ptr(const struct xk_fctx *c, size_t base, uint32_t i)
{
	return meta_root_ptr(c, base, i, &xk_rtrefcountbt_ops);
}

#define META_ROOT(rec, rlen, key, klen, ptr_fn, next_type) \
	R("level", 0, 0, 16, XK_FK_UINT), \
	R("numrecs", 2, 0, 16, XK_FK_UINT), \
	S("recs", 4, rec, .flags = XK_FF_ARRAY | XK_FF_BASE1 | \
	  XK_FF_COMPACT, .stride = (rlen), .present = root_is_leaf, \
	  .count_fn = bmroot_count), \
	S("keys", 4, key, .flags = XK_FF_ARRAY | XK_FF_BASE1 | \
	  XK_FF_COMPACT, .stride = (klen), .present = root_is_node, \
	  .count_fn = bmroot_count), \
	R("ptrs", 0, 0, 64, XK_FK_UINT, .flags = XK_FF_ARRAY | XK_FF_BASE1 | \
	  XK_FF_NULL, .present = root_is_node, .count_fn = bmroot_count, \
	  .elem_fn = ptr_fn, .unit = XK_FU_FSBLOCK, .next = next_type), \
	FEND

static const struct xk_field rtrmap_root_fields[] = {
	META_ROOT(xk_rtrmap_rec_fields, 24, xk_rtrmap_key_fields, 40,
		  rtrmap_root_ptr, "rtrmapbt")
};

static const struct xk_field rtrefc_root_fields[] = {
	META_ROOT(xk_rtrefc_rec_fields, 12, xk_rtrefc_key_fields, 4,
		  rtrefc_root_ptr, "rtrefcntbt")
};

/* ---- short-form directory (data fork only) ---- */

static unsigned int
sf_i8(const struct xk_fctx *c)
{
	return (unsigned int)fp_get(c, DFORK_OFF + 1, 1);
}

static int
sf_ino4(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return sf_i8(c) == 0;
}

static int
sf_ino8(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return sf_i8(c) != 0;
}

static uint32_t
sfdir_count(const struct xk_fctx *c, size_t base)
{
	return (uint32_t)fp_get(c, base, 1);
}

static size_t
sfdir_entsize(const struct xk_fctx *c, size_t at)
{
	return 3 + fp_get(c, at, 1) + (c->has_ftype ? 1 : 0) +
	       (sf_i8(c) ? 8 : 4);
}

/* Entry i: walk from the first entry, staying inside the data fork. */
static size_t
sfdir_entry(const struct xk_fctx *c, size_t base, uint32_t i)
{
	size_t end = DFORK_OFF + fork_size(c, DFORK_OFF);
	size_t at = base + xk_dir2_sf_hdr_size(sf_i8(c));

	for (uint32_t n = 0; n <= i; n++) {
		if (at + 3 > end || at + sfdir_entsize(c, at) > end)
			return XK_FOFF_NONE;
		if (n == i)
			return at;
		at += sfdir_entsize(c, at);
	}
	return XK_FOFF_NONE;
}

static uint32_t
sf_name_bits(const struct xk_fctx *c, size_t base)
{
	return (uint32_t)fp_get(c, base, 1) * 8;
}

static size_t
sf_after_name(const struct xk_fctx *c, size_t base, uint32_t i)
{
	(void)i;
	return base + 3 + fp_get(c, base, 1);
}

static size_t
sf_inumber(const struct xk_fctx *c, size_t base, uint32_t i)
{
	return sf_after_name(c, base, i) + (c->has_ftype ? 1 : 0);
}

static int
has_ftype(const struct xk_fctx *c, size_t base)
{
	(void)base;
	return c->has_ftype;
}

static const struct xk_field sfdir_entry_fields[] = {
	R("namelen", 0, 0, 8, XK_FK_UINT),
	R("offset", 1, 0, 16, XK_FK_HEX),
	R("name", 3, 0, 0, XK_FK_CHARS, .bits_fn = sf_name_bits),
	R("inumber.i4", 0, 0, 32, XK_FK_UINT, .present = sf_ino4,
	  .elem_fn = sf_inumber, .unit = XK_FU_INO, .next = "inode"),
	R("inumber.i8", 0, 0, 64, XK_FK_UINT, .present = sf_ino8,
	  .elem_fn = sf_inumber, .unit = XK_FU_INO, .next = "inode"),
	R("filetype", 0, 0, 8, XK_FK_UINT, .present = has_ftype,
	  .elem_fn = sf_after_name),
	FEND
};

static const struct xk_field sfdir_fields[] = {
	R("hdr.count", 0, 0, 8, XK_FK_UINT),
	R("hdr.i8count", 1, 0, 8, XK_FK_UINT),
	R("hdr.parent.i4", 2, 0, 32, XK_FK_UINT, .present = sf_ino4,
	  .unit = XK_FU_INO, .next = "inode"),
	R("hdr.parent.i8", 2, 0, 64, XK_FK_UINT, .present = sf_ino8,
	  .unit = XK_FU_INO, .next = "inode"),
	S("list", 0, sfdir_entry_fields, .flags = XK_FF_ARRAY,
	  .count_fn = sfdir_count, .elem_fn = sfdir_entry),
	FEND
};

/* ---- short-form attributes (attr fork only) ---- */

static uint32_t
sfattr_count(const struct xk_fctx *c, size_t base)
{
	return (uint32_t)fp_get(c, base + 2, 1);
}

static size_t
sfattr_entry(const struct xk_fctx *c, size_t base, uint32_t i)
{
	size_t end = c->len;
	size_t at = base + sizeof(struct xk_attr_sf_hdr);

	for (uint32_t n = 0; n <= i; n++) {
		size_t sz;

		if (at + 3 > end)
			return XK_FOFF_NONE;
		sz = 3 + fp_get(c, at, 1) + fp_get(c, at + 1, 1);
		if (at + sz > end)
			return XK_FOFF_NONE;
		if (n == i)
			return at;
		at += sz;
	}
	return XK_FOFF_NONE;
}

static size_t
sfattr_value(const struct xk_fctx *c, size_t base, uint32_t i)
{
	(void)i;
	return base + 3 + fp_get(c, base, 1);
}

static uint32_t
sfattr_vlen_bits(const struct xk_fctx *c, size_t base)
{
	return (uint32_t)fp_get(c, base + 1, 1) * 8;
}

/* A parent pointer's value is a record naming the directory. */
static int
sfattr_parent(const struct xk_fctx *c, size_t base)
{
	return (fp_get(c, base + 2, 1) & XK_ATTR_PARENT) != 0;
}

static int
sfattr_not_parent(const struct xk_fctx *c, size_t base)
{
	return !sfattr_parent(c, base);
}

static const struct xk_field sfattr_entry_fields[] = {
	R("namelen", 0, 0, 8, XK_FK_UINT),
	R("valuelen", 1, 0, 8, XK_FK_UINT),
	R("root", 2, 6, 1, XK_FK_UINT),
	R("secure", 2, 5, 1, XK_FK_UINT),
	R("parent", 2, 4, 1, XK_FK_UINT),
	R("name", 3, 0, 0, XK_FK_CHARS, .bits_fn = sf_name_bits),
	R("value", 0, 0, 0, XK_FK_CHARS, .elem_fn = sfattr_value,
	  .bits_fn = sfattr_vlen_bits, .present = sfattr_not_parent),
	S("parent_dir", 0, xk_parent_rec_fields, .elem_fn = sfattr_value,
	  .stride = sizeof(struct xk_parent_rec), .present = sfattr_parent),
	FEND
};

static const struct xk_field sfattr_fields[] = {
	R("hdr.totsize", 0, 0, 16, XK_FK_UINT),
	R("hdr.count", 2, 0, 8, XK_FK_UINT),
	S("list", 0, sfattr_entry_fields, .flags = XK_FF_ARRAY,
	  .count_fn = sfattr_count, .elem_fn = sfattr_entry),
	FEND
};

/* ---- the forks ---- */

static const struct xk_field dfork_fields[] = {
	S("bmx", 0, xk_bmbt_rec_fields, .flags = XK_FF_ARRAY | XK_FF_COMPACT,
	  .stride = 16, .present = is_extents, .count_fn = bmx_count),
	S("bmbt", 0, bmroot_d_fields, .present = is_btree),
	S("rtrmapbt", 0, rtrmap_root_fields, .present = is_rtrmap_root),
	S("rtrefcbt", 0, rtrefc_root_fields, .present = is_rtrefc_root),
	R("symlink", 0, 0, 0, XK_FK_CHARS, .present = is_symlink,
	  .bits_fn = symlink_bits),
	S("sfdir3", 0, sfdir_fields, .present = is_sfdir),
	R("dev", 0, 0, 32, XK_FK_HEX, .present = is_dev),
	FEND
};

static const struct xk_field afork_fields[] = {
	S("bmx", 0, xk_bmbt_rec_fields, .flags = XK_FF_ARRAY | XK_FF_COMPACT,
	  .stride = 16, .present = is_extents, .count_fn = bmx_count),
	S("bmbt", 0, bmroot_a_fields, .present = is_btree),
	S("sfattr", 0, sfattr_fields, .present = is_sfattr),
	FEND
};

static int
has_afork(const struct xk_fctx *c, size_t base)
{
	const struct xk_dinode *d = core(c);

	(void)base;
	return d && d->di_forkoff != 0;
}

static size_t
afork_at(const struct xk_fctx *c, size_t base, uint32_t i)
{
	const struct xk_dinode *d = core(c);

	(void)i;
	if (!d)
		return XK_FOFF_NONE;
	return base + DFORK_OFF + xk_dinode_forkoff_bytes(d);
}

static const struct xk_field inode_fields[] = {
	S("core", 0, core_fields),
	DI("next_unlinked", di_next_unlinked, XK_FK_UINT,
	   .flags = XK_FF_NULL, .unit = XK_FU_AGINO, .next = "inode"),
	S("v3", 0, v3_fields),
	S("u3", DFORK_OFF, dfork_fields, .flags = XK_FF_OKEMPTY),
	S("a", 0, afork_fields, .flags = XK_FF_OKEMPTY, .present = has_afork,
	  .elem_fn = afork_at),
	FEND
};

const struct xk_ftype xk_inode_ftype = { "inode", inode_fields };
