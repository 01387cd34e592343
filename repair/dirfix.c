// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Rewriting directories from their salvaged entries.  A directory whose
 * blocks fail their checks, or whose entries name inodes not in use, is
 * read block by block below the leaf offset, keeping every entry that
 * can still be parsed (bounds checked one by one: a broken entry ends
 * its block, not the directory), names an inode in use and is not a
 * duplicate name; the hash index and free index are not trusted, they
 * are rebuilt.  The directory is then written anew by the builder
 * (xk_bld_dir picks the format the kernel would use for that many
 * entries) inside the AG rebuild session, whose commit frees the old
 * blocks (they are not claimed) and indexes the new ones.  Entries whose
 * blocks are gone leave their inodes unnamed: the next pass reconnects
 * them under /lost+found.
 *
 * The same rewrite serves /lost+found and the root when orphans do not
 * fit in short form (lostfound.c): their entries, short form included,
 * are salvaged the same way and the entries lostfound.c adds are merged
 * in.  A rewritten directory's link count is 2 plus its subdirectories.
 *
 * A directory's attr fork is kept: a local fork byte for byte, an
 * extent or btree fork by its extents, which the rebuild feeds to the
 * builder as the inode's attr fork blocks (rebuild.c) and which become
 * the new inode's attr fork again; the builder chooses the fork offset
 * for the new data fork, and writes a new attr bmbt if the extents no
 * longer fit in the inode (the old bmbt blocks are not fed).
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/build.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dir.h>
#include <xfskit/fork.h>

#include "repair.h"
#include "reasm.h"

struct salvage {
	struct dir_list		l;
	size_t			nold;	/* read from the directory */
	uint64_t		dotdot;
	int			any;	/* keep entries naming free inodes */
};

/* Marks an added entry while sorting (no inode number has this bit). */
#define DIRFIX_ADDED	(1ULL << 63)

/* An empty list that spills with the run's lists (under -m). */
static void
salvage_init(struct repair_ctx *rc, struct salvage *s, int any)
{
	memset(s, 0, sizeof(*s));
	s->l.e.vec.spill = rc->spill;
	s->l.names.spill = rc->spill;
	s->l.e.vec.first = 64;		/* most directories are small */
	s->any = any;
}

/* Append an entry with a copy of its name; 0 or -ENOMEM. */
static int
salvage_push(struct repair_ctx *rc, struct salvage *s, const uint8_t *name,
	     unsigned int namelen, uint8_t ftype, uint64_t ino)
{
	struct xk_bld_dirent e = {
		.namelen = (uint8_t)namelen, .ftype = ftype, .ino = ino,
	};
	const void *copy;
	int err = xk_vec_pool_add(&s->l.names, name, namelen, &copy);

	if (err)
		return err;
	e.name = copy;
	lists_poll(rc, s->l.e.n);
	return xk_vec_push(&s->l.e.vec, &e, sizeof(e));
}

static int
cmp_dirent(const void *a, const void *b)
{
	const struct xk_bld_dirent *x = a, *y = b;
	int c = memcmp(x->name, y->name, x->namelen < y->namelen ?
		       x->namelen : y->namelen);

	return c ? c : (int)x->namelen - (int)y->namelen;
}

/* By name, then the entries read before the added ones. */
static int
cmp_dirent_rank(const void *a, const void *b)
{
	const struct xk_bld_dirent *x = a, *y = b;
	int c = cmp_dirent(a, b);

	if (c)
		return c;
	return (int)(x->ino >> 63) - (int)(y->ino >> 63);
}

static int
name_ok(const uint8_t *name, unsigned int len)
{
	for (unsigned int i = 0; i < len; i++)
		if (name[i] == 0 || name[i] == '/')
			return 0;
	return len > 0;
}

/*
 * Whether a plausible entry starts at p: a sane name length, inside the
 * block, and its tag (the last two bytes) holding its own offset, as
 * every entry and unused region of a data block does.
 */
static int
entry_at(const uint8_t *blk, uint32_t p, uint32_t end, int ftype,
	 uint32_t *len)
{
	const uint8_t *at = blk + p;

	if (xk_dir2_data_is_unused(at)) {
		*len = xk_get_be16(at + 2);
		if (*len < 8 || (*len & 7) || p + *len > end)
			return 0;
	} else {
		/* The name length is the entry's ninth byte. */
		if (p + 9 > end || !at[8])
			return 0;
		*len = xk_dir3_data_entsize(at[8], ftype);
		if (p + *len > end)
			return 0;
	}
	return xk_get_be16(at + *len - 2) == p;
}

/*
 * The entries of one data (or block-form) block.  An entry that does
 * not parse is skipped by looking for the next offset, in 8-byte steps,
 * where a plausible entry starts: one broken entry costs one name.
 * 0, or -ENOMEM: a list without every readable entry is never used.
 */
static int
salvage_block(struct repair_ctx *rc, uint64_t dir, const uint8_t *blk,
	      uint32_t size, uint32_t magic, int first, struct salvage *s)
{
	int ftype = rc->mp->g.has_ftype;
	uint32_t end = size;
	uint32_t p = sizeof(struct xk_dir3_data_hdr);
	int err;

	if (magic == XK_DIR3_BLOCK_MAGIC) {
		/* The tail: leaf count and stale count, then the leaves. */
		uint32_t count = xk_get_be32(blk + size - 8);

		if ((uint64_t)count * 8 + 8 + p > size)
			return 0;
		end = size - 8 - count * 8;
	} else if (magic != XK_DIR3_DATA_MAGIC) {
		return 0;
	}
	while (p + 8 <= end) {
		const uint8_t *at = blk + p;
		unsigned int namelen;
		uint32_t len;
		uint64_t ino;
		const struct inode_info *ii;

		if (!entry_at(blk, p, end, ftype, &len)) {
			p += 8;
			continue;
		}
		if (xk_dir2_data_is_unused(at)) {
			p += len;
			continue;
		}
		ino = xk_get_be64(at);
		namelen = at[8];
		ii = inode_info_find(rc, ino);
		/*
		 * The second entry of the first block is "..", whatever
		 * its name says: a directory there under another name is
		 * the parent, never a second link to it.
		 */
		if ((namelen == 2 && at[9] == '.' && at[10] == '.') ||
		    (first && p == sizeof(struct xk_dir3_data_hdr) +
		     xk_dir3_data_entsize(1, ftype) && ii &&
		     (ii->mode & XK_S_IFMT) == XK_S_IFDIR)) {
			p += len;
			s->dotdot = ino;
			continue;
		}
		p += len;
		if (namelen == 1 && at[9] == '.')
			continue;
		/* Only "." names the directory itself ("." renamed). */
		if (!name_ok(at + 9, namelen) || (!ii && !s->any) ||
		    ino == dir)
			continue;
		err = salvage_push(rc, s, at + 9, namelen,
				   ii ? xk_mode_to_ftype(ii->mode) : 0, ino);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The entries of a short-form directory, each bounds checked against
 * the fork and the size; the header's parent is its "..".  0 or -ENOMEM.
 */
static int
salvage_sf(struct repair_ctx *rc, const struct xk_dinode *dip,
	   struct salvage *s)
{
	const struct xk_dir2_sf_hdr *h = (const void *)xk_dfork_dptr(dip);
	unsigned int fsize = xk_dfork_dsize(dip, rc->mp->g.inodesize);
	uint64_t size = xk_be64_get(dip->di_size);
	const uint8_t *end = (const uint8_t *)h + (size < fsize ? size : fsize);
	const struct xk_dir2_sf_entry *e;
	int ftype = rc->mp->g.has_ftype;

	if ((const uint8_t *)h + xk_dir2_sf_hdr_size(h->i8count) > end)
		return 0;
	s->dotdot = xk_dir2_sf_get_parent(h);
	e = xk_dir2_sf_firstentry(h);
	for (unsigned int k = 0; k < h->count; k++) {
		const struct inode_info *ii;
		uint64_t ino;

		if ((const uint8_t *)e + sizeof(*e) > end ||
		    (const uint8_t *)e + xk_dir2_sf_entsize(h, e->namelen,
							    ftype) > end)
			break;
		ino = xk_dir2_sf_get_ino(h, e, ftype);
		ii = inode_info_find(rc, ino);
		if (name_ok(e->name, e->namelen) && (ii || s->any)) {
			int err = salvage_push(rc, s, e->name, e->namelen,
					       ii ? xk_mode_to_ftype(ii->mode) :
					       0, ino);

			if (err)
				return err;
		}
		e = xk_dir2_sf_nextentry(h, e, ftype);
	}
	return 0;
}

void
dir_list_free(struct dir_list *l)
{
	xk_vec_free(&l->e.vec);
	xk_vec_pool_free(&l->names);
}

/* The data fork's extents: the list in the inode, or the bmbt's. */
/*
 * The directory's mappings: all of an extent list, or the records of
 * the readable leaves of a damaged bmbt (the check reported the damage
 * already).  An extent list that does not fit its fork gives
 * XK_ECORRUPT, an operational error its errno.
 */
static int
dir_extents(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip,
	    struct xk_fork_map *map)
{
	int err;

	if (dip->di_format != XK_DINODE_FMT_EXTENTS &&
	    dip->di_format != XK_DINODE_FMT_BTREE)
		return XK_ECORRUPT;
	err = xk_fork_read(rc->mp, ino, dip, XK_DATA_FORK, XK_FORK_SALVAGE,
			   map);
	if (err == XK_ECORRUPT && dip->di_format == XK_DINODE_FMT_BTREE)
		return 0;
	return err;
}

/*
 * The magic a data block is read by: its own, or, where only the magic
 * is damaged (the header names this block and this directory), the one
 * the directory's form gives it (block form: a single block and no
 * leaf), as xfs_repair keeps such a block's entries.
 */
static uint32_t
block_magic(const struct xk_mount *mp, uint64_t ino,
	    const struct xk_dinode *dip, const struct xk_fork_map *map,
	    const struct xk_buf *bp)
{
	uint64_t leaf_fsb = XK_DIR2_LEAF_OFFSET >> mp->g.blocklog;
	uint32_t magic = xk_get_be32(bp->data);

	if (magic == XK_DIR3_BLOCK_MAGIC || magic == XK_DIR3_DATA_MAGIC ||
	    xk_get_be64(bp->data + 8) != bp->daddr ||
	    xk_get_be64(bp->data + 40) != ino)
		return magic;
	for (uint64_t i = 0; i < map->next; i++)
		if (map->ext[i].startoff + map->ext[i].blockcount > leaf_fsb)
			return XK_DIR3_DATA_MAGIC;
	return xk_be64_get(dip->di_size) == mp->g.dirblksize ?
	       XK_DIR3_BLOCK_MAGIC : XK_DIR3_DATA_MAGIC;
}

/* Read every data block of the directory. */
static int
salvage_blocks(struct repair_ctx *rc, uint64_t ino,
	       const struct xk_dinode *dip, struct salvage *s)
{
	struct xk_mount *mp = rc->mp;
	uint64_t leaf_fsb = XK_DIR2_LEAF_OFFSET >> mp->g.blocklog;
	uint32_t per = 1u << mp->g.dirblklog;
	struct xk_fork_map map = { 0 };
	int err = dir_extents(rc, ino, dip, &map);

	if (err) {
		xk_fork_map_free(&map);
		return err;
	}
	for (uint64_t i = 0; i < map.next; i++) {
		struct xk_bmbt_irec r = map.ext[i];

		if (!r.blockcount ||
		    !xk_fsbext_valid(mp, r.startblock, r.blockcount))
			continue;
		for (uint64_t off = 0; off + per <= r.blockcount; off += per) {
			struct xk_buf *bp;

			if (r.startoff + off >= leaf_fsb ||
			    ((r.startoff + off) & (per - 1)))
				continue;
			err = xk_buf_read(mp, xk_fsb_to_daddr(mp,
					r.startblock + off), mp->g.dirblksize,
					&xk_dir3_data_buf_ops,
					XK_READ_NOVERIFY, &bp);
			if (xk_err_operational(err))
				goto out;
			if (err)
				continue;
			err = salvage_block(rc, ino, bp->data,
					    mp->g.dirblksize,
					    block_magic(mp, ino, dip, &map, bp),
					    r.startoff + off == 0, s);
			xk_buf_release(bp);
			if (err)
				goto out;
		}
	}
	err = 0;
out:
	xk_fork_map_free(&map);
	return err;
}

/*
 * Every entry of the directory (short form or blocks), then the entries
 * lostfound.c adds to it; one entry per name (a name already there
 * keeps its inode).
 */
static int
salvage_dir(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip,
	    struct salvage *s)
{
	const struct reasm_dir *rd = reasm_find(rc, ino);
	const struct xk_bld_dirent *add;
	size_t nadd = 0, out = 0;
	int err = 0;
	struct dir_list *l = &s->l;

	/* A lost block map: the device scan's entries too (reasm.c). */
	for (size_t i = 0; rd && i < rd->n && !err; i++)
		err = salvage_push(rc, s, rd->ents[i].name,
				   rd->ents[i].namelen, rd->ents[i].ftype,
				   rd->ents[i].ino);
	if (err)
		return err;
	if (dip->di_format == XK_DINODE_FMT_LOCAL)
		err = salvage_sf(rc, dip, s);
	else
		err = salvage_blocks(rc, ino, dip, s);
	if (err)
		return err;
	s->nold = l->e.n;
	lf_extra(rc, ino, &add, &nadd);
	for (size_t i = 0; i < nadd && !err; i++)
		err = salvage_push(rc, s, add[i].name, add[i].namelen,
				   add[i].ftype, add[i].ino);
	if (err)
		return err;
	/* Mark the added ones (their ino's top bit) to rank them last. */
	for (size_t i = s->nold; i < l->e.n; i++)
		l->e.v[i].ino |= DIRFIX_ADDED;
	xk_vec_sort(&l->e.vec, sizeof(*l->e.v), cmp_dirent_rank);
	/* A name twice: the first kept (its bytes stay in the pool). */
	for (size_t i = 0; i < l->e.n; i++) {
		lists_poll(rc, i);
		l->e.v[i].ino &= ~DIRFIX_ADDED;
		if (out && !cmp_dirent(&l->e.v[out - 1], &l->e.v[i]))
			continue;
		l->e.v[out++] = l->e.v[i];
	}
	l->e.n = out;
	return 0;
}

/* Read the entries of a directory in use; 0 or a negative errno. */
static int
read_entries(struct repair_ctx *rc, uint64_t ino, struct salvage *s)
{
	struct xk_buf *bp;
	struct xk_dinode *dip;
	int err = xk_inode_read(rc->mp, ino, 0, &bp, &dip);

	if (err)
		return err;
	if (dip->di_format == XK_DINODE_FMT_LOCAL)
		err = salvage_sf(rc, dip, s);
	else
		err = salvage_blocks(rc, ino, dip, s);
	xk_buf_release(bp);
	return err;
}

int
dir_lookup(struct repair_ctx *rc, uint64_t dir, const char *name,
	   uint64_t *found)
{
	struct salvage s;
	size_t len = strlen(name);
	int err;

	salvage_init(rc, &s, 0);
	err = read_entries(rc, dir, &s);
	*found = 0;
	for (size_t i = 0; !err && i < s.l.e.n && !*found; i++)
		if (s.l.e.v[i].namelen == len &&
		    !memcmp(s.l.e.v[i].name, name, len))
			*found = s.l.e.v[i].ino;
	dir_list_free(&s.l);
	return err;
}

int
dir_entries(struct repair_ctx *rc, uint64_t dir, struct dir_list *l)
{
	struct salvage s;
	int err;

	salvage_init(rc, &s, 1);
	err = read_entries(rc, dir, &s);
	if (err) {
		dir_list_free(&s.l);
		return err;
	}
	*l = s.l;
	return 0;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

int
dir_short_names(struct repair_ctx *rc, uint64_t dir, size_t cap,
		char **bufp, size_t *np)
{
	struct salvage s;
	const struct xk_bld_dirent *v;
	char *buf;
	size_t n = 0;
	int err;

	salvage_init(rc, &s, 0);
	err = read_entries(rc, dir, &s);
	*bufp = NULL;
	*np = 0;
	if (err) {
		dir_list_free(&s.l);
		return err;
	}
	v = s.l.e.v;
	buf = xk_malloc((s.l.e.n ? s.l.e.n : 1) * cap);
	if (!buf) {
		dir_list_free(&s.l);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s.l.e.n; i++) {
		if (v[i].namelen >= cap)
			continue;
		memcpy(buf + n * cap, v[i].name, v[i].namelen);
		buf[n * cap + v[i].namelen] = 0;
		n++;
	}
	dir_list_free(&s.l);
	sort_v(buf, n, cap, cmp_name);
	*bufp = buf;
	*np = n;
	return 0;
}

static int
cmp_ext(const void *a, const void *b)
{
	const struct xk_bld_ext *x = a, *y = b;

	return (x->loff > y->loff) - (x->loff < y->loff);
}

/*
 * The attr fork extents the scan claimed for ino (not its bmbt blocks),
 * in file offset order, merged where contiguous.  Overlapping offsets
 * are corruption the check would have fixed first: refused.
 */
static int
attr_extents(struct repair_ctx *rc, uint64_t ino, struct xk_bld_fork *fk)
{
	struct xk_mount *mp = rc->mp;
	size_t n = 0, cap = 0, out = 0;
	struct xk_bld_ext *v = NULL;

	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		const struct claims *u = &rc->scan.ags[agno].used;

		for (size_t i = 0; i < u->n; i++) {
			const struct claim *c = &u->v[i];

			if (c->owner != ino ||
			    !(c->offset & XK_RMAP_OFF_ATTR_FORK) ||
			    (c->offset & XK_RMAP_OFF_BMBT_BLOCK))
				continue;
			if (n == cap) {
				struct xk_bld_ext *nv;

				cap = cap ? cap * 2 : 8;
				nv = xk_realloc(v, cap * sizeof(*v));
				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
			}
			v[n++] = (struct xk_bld_ext){
				.loff = c->offset & XK_RMAP_OFF_MASK,
				.fsbno = xk_agb_to_fsb(mp, agno, c->agbno),
				.len = c->len,
			};
		}
	}
	sort_v(v, n, sizeof(*v), cmp_ext);
	for (size_t i = 0; i < n; i++) {
		struct xk_bld_ext *e = out ? &v[out - 1] : NULL;

		if (e && v[i].loff < e->loff + e->len) {
			free(v);
			return XK_ECORRUPT;
		}
		if (e && e->loff + e->len == v[i].loff &&
		    e->fsbno + e->len == v[i].fsbno &&
		    (uint64_t)e->len + v[i].len <= XK_MAX_BMBT_EXTLEN) {
			e->len += v[i].len;
			continue;
		}
		v[out++] = v[i];
	}
	fk->ext = v;
	fk->next = out;
	fk->ext_alloc = cap;
	fk->nblocks = 0;
	for (size_t i = 0; i < out; i++)
		fk->nblocks += v[i].len;
	fk->format = out ? XK_BLD_FMT_EXTENTS : XK_BLD_FMT_NONE;
	if (!out) {
		free(v);
		fk->ext = NULL;
		fk->ext_alloc = 0;
	}
	return 0;
}

/*
 * The directory's attr fork for the new inode: a local fork as it is
 * (its header's size, bounded by the fork), an extent or btree fork by
 * its extents.  An empty extent fork is dropped: it holds nothing.
 */
static int
keep_attr_fork(struct repair_ctx *rc, uint64_t ino,
	       const struct xk_dinode *dip, struct xk_bld_inode *ip)
{
	unsigned int asize;
	const uint8_t *a;
	uint32_t tot;

	if (!dip->di_forkoff)
		return 0;
	switch (dip->di_aformat) {
	case XK_DINODE_FMT_LOCAL:
		asize = xk_dfork_asize(dip, rc->mp->g.inodesize);
		a = xk_dfork_aptr(dip);
		if (asize < sizeof(struct xk_attr_sf_hdr))
			return XK_ECORRUPT;
		tot = xk_get_be16(a);
		if (tot < sizeof(struct xk_attr_sf_hdr) || tot > asize)
			return XK_ECORRUPT;
		return xk_bld_fork_local(&ip->attr, a, tot);
	case XK_DINODE_FMT_EXTENTS:
	case XK_DINODE_FMT_BTREE:
		return attr_extents(rc, ino, &ip->attr);
	default:
		return XK_ECORRUPT;
	}
}

/* The directory that names dir, or the root. */
static uint64_t
parent_of(const struct repair_ctx *rc, uint64_t dir, uint64_t dotdot)
{
	const struct inode_info *p = inode_info_find(rc, dotdot);

	if (p && (p->mode & XK_S_IFMT) == XK_S_IFDIR)
		return dotdot;
	for (size_t i = 0; i < rc->scan.nedges; i++)
		if (rc->scan.edges[i].child == dir)
			return rc->scan.edges[i].parent;
	return rc->mp->sb.rootino;
}

/*
 * Keep only the directories that can be rewritten: sorted, unique,
 * in use, verifying, an extent list or bmbt data fork (or short form
 * when lostfound.c adds entries to it), an attr fork of a known format
 * if any.
 */
int
dirs_prepare(struct repair_ctx *rc)
{
	size_t out = 0;

	sort_v(rc->plan.dirfix.v, rc->plan.dirfix.n, sizeof(*rc->plan.dirfix.v),
	       cmp_u64);
	for (size_t i = 0; i < rc->plan.dirfix.n; i++) {
		uint64_t ino = rc->plan.dirfix.v[i];
		struct xk_buf *bp;
		struct xk_dinode *dip;
		const struct xk_bld_dirent *add;
		size_t nadd = 0;
		int ok;

		int err;

		if (out && rc->plan.dirfix.v[out - 1] == ino)
			continue;
		err = xk_inode_read(rc->mp, ino, XK_READ_SALVAGE, &bp, &dip);
		if (err && !bp && repair_oserr(rc, err, "reading directory "
					       "%llu", (unsigned long long)ino))
			break;
		if (err && !bp)
			continue;
		lf_extra(rc, ino, &add, &nadd);
		ok = inode_info_find(rc, ino) &&
		     (dip->di_format == XK_DINODE_FMT_EXTENTS ||
		      dip->di_format == XK_DINODE_FMT_BTREE ||
		      (dip->di_format == XK_DINODE_FMT_LOCAL && nadd)) &&
		     (!dip->di_forkoff ||
		      dip->di_aformat == XK_DINODE_FMT_LOCAL ||
		      dip->di_aformat == XK_DINODE_FMT_EXTENTS ||
		      dip->di_aformat == XK_DINODE_FMT_BTREE) &&
		     !xk_dinode_verify(rc->mp, ino, dip, &(struct xk_fail){0});
		xk_buf_release(bp);
		if (ok)
			rc->plan.dirfix.v[out++] = ino;
		else
			plan_none(rc);
	}
	rc->plan.dirfix.n = out;
	return (int)out;
}

/*
 * Entries the scan saw in a directory that its rewrite leaves out, with
 * their paths; spilled like the salvaged lists.
 */
struct dropped_ent {
	uint64_t	ino;
	const char	*path;		/* in dropped.paths, NUL-terminated */
};
struct dropped {
	XK_VEC_OF(struct dropped_ent) v;
	struct xk_vec_pool paths;
};

/*
 * The readable entries of the old directory (any inode named) that the
 * salvaged list s does not keep, each with its path, while the old
 * directory is still there; reported once the new one is written, in
 * name order.  Both lists sorted by name and walked side by side: in
 * order, a spilled list is read once, not probed at random.  0, or an
 * operational error: a report that misses a dropped entry is not made.
 */
static int
dropped_collect(struct repair_ctx *rc, uint64_t dir, struct salvage *s,
		struct dropped *d)
{
	struct dir_list ol;
	const struct xk_bld_dirent *old, *kept = s->l.e.v;
	char dpath[1024], path[1024 + 256];
	size_t j = 0;
	int err = dir_entries(rc, dir, &ol);

	/* An old directory that cannot be read has nothing to report. */
	if (err)
		return xk_err_operational(err) ? err : 0;
	d->v.vec.spill = rc->spill;
	d->paths.spill = rc->spill;
	xk_vec_sort(&ol.e.vec, sizeof(*ol.e.v), cmp_dirent);
	old = ol.e.v;
	action_path(rc, dir, dpath, sizeof(dpath));
	for (size_t e = 0; e < ol.e.n && !err; e++) {
		struct dropped_ent de = { .ino = old[e].ino };
		const void *at;
		int len;

		lists_poll(rc, e);
		/* s: sorted by name, one entry per name. */
		while (j < s->l.e.n && cmp_dirent(&kept[j], &old[e]) < 0)
			j++;
		if (j < s->l.e.n && !cmp_dirent(&kept[j], &old[e]) &&
		    kept[j].ino == old[e].ino)
			continue;
		len = snprintf(path, sizeof(path), "%s/%.*s",
			       strcmp(dpath, "/") ? dpath : "",
			       (int)old[e].namelen, (const char *)old[e].name);
		err = xk_vec_pool_add(&d->paths, path, (size_t)len + 1, &at);
		if (!err) {
			de.path = at;
			err = xk_vec_push(&d->v.vec, &de, sizeof(de));
		}
	}
	dir_list_free(&ol);
	return err;
}

static void
dropped_report(struct repair_ctx *rc, uint64_t dir, struct dropped *d)
{
	for (size_t k = 0; k < d->v.n; k++)
		action_report(rc, ACT_ENTRY_REMOVED, d->v.v[k].ino, -1,
			      d->v.v[k].path, ", in directory %llu: "
			      "rewritten without it", (unsigned long long)dir);
}

static void
dropped_free(struct dropped *d)
{
	xk_vec_free(&d->v.vec);
	xk_vec_pool_free(&d->paths);
}

int
rebuild_dirs(struct repair_ctx *rc, struct xk_bld *b)
{
	struct xk_mount *mp = rc->mp;
	struct salvage *sv = xk_calloc(rc->plan.dirfix.n ? rc->plan.dirfix.n : 1,
				    sizeof(*sv));
	struct xk_bld_inode *ipv = xk_calloc(rc->plan.dirfix.n ?
					     rc->plan.dirfix.n : 1,
					  sizeof(*ipv));
	struct dropped *dv = calloc(rc->plan.dirfix.n ? rc->plan.dirfix.n : 1,
				    sizeof(*dv));
	char path[1024];
	int err = 0;

	if (!sv || !ipv || !dv) {
		free(sv);
		free(ipv);
		free(dv);
		return -ENOMEM;
	}
	/* Read every old directory before the builder reuses its blocks. */
	for (size_t i = 0; i < rc->plan.dirfix.n && !err; i++) {
		uint64_t ino = rc->plan.dirfix.v[i];
		struct xk_buf *bp;
		struct xk_dinode *dip;
		struct xk_bld_inode *ip = &ipv[i];

		err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip);
		if (err && !bp)
			break;
		salvage_init(rc, &sv[i], 0);
		err = salvage_dir(rc, ino, dip, &sv[i]);
		if (!err) {
			spill_list_report(rc, "salvaged entry", ino,
					  &sv[i].l.e.vec, sizeof(*sv[i].l.e.v),
					  &sv[i].l.names);
			err = dropped_collect(rc, ino, &sv[i], &dv[i]);
		}
		xk_bld_inode_init(b, ip, ino, xk_be16_get(dip->di_mode));
		ip->uid = xk_be32_get(dip->di_uid);
		ip->gid = xk_be32_get(dip->di_gid);
		ip->projid = xk_dinode_projid(dip);
		ip->nlink = xk_be32_get(dip->di_nlink);
		ip->atime_sec = xk_dinode_time(dip, dip->di_atime).tv_sec;
		ip->atime_nsec = xk_dinode_time(dip, dip->di_atime).tv_nsec;
		ip->mtime_sec = xk_dinode_time(dip, dip->di_mtime).tv_sec;
		ip->mtime_nsec = xk_dinode_time(dip, dip->di_mtime).tv_nsec;
		ip->ctime_sec = xk_dinode_time(dip, dip->di_ctime).tv_sec;
		ip->ctime_nsec = xk_dinode_time(dip, dip->di_ctime).tv_nsec;
		ip->crtime_sec = xk_dinode_time(dip, dip->di_crtime).tv_sec;
		ip->crtime_nsec = xk_dinode_time(dip, dip->di_crtime).tv_nsec;
		ip->diflags = xk_be16_get(dip->di_flags);
		ip->diflags2 = xk_be64_get(dip->di_flags2) &
			       ~(XK_DIFLAG2_BIGTIME | XK_DIFLAG2_NREXT64);
		/*
		 * The old blocks are no longer fed: the directory must be
		 * written whatever happens, without its attrs if they are
		 * corrupt (their blocks, still claimed, are then freed next
		 * pass).  Memory or I/O stops the rewrite instead.
		 */
		if (!err) {
			int aerr = keep_attr_fork(rc, ino, dip, ip);

			if (xk_err_operational(aerr))
				err = aerr;
			else if (aerr) {
				action_report_why(rc, ACT_ATTR_DROPPED, ino, -1,
						  NULL, "its attr fork's map or "
						  "short form is not usable",
						  ": they could not be kept "
						  "beside the rewritten "
						  "directory");
				free(ip->attr.local);
				free(ip->attr.ext);
				memset(&ip->attr, 0, sizeof(ip->attr));
			}
		}
		xk_buf_release(bp);
		/* ".", "..", and each subdirectory's "..". */
		ip->nlink = 2;
		for (size_t k = 0; k < sv[i].l.e.n; k++)
			if (sv[i].l.e.v[k].ftype == XK_DIR3_FT_DIR)
				ip->nlink++;
	}
	/* /lost+found made anew, and ".." of the directories moved there. */
	if (!err)
		err = lf_build(rc, b);
	for (size_t i = 0; i < rc->plan.dirfix.n && !err; i++) {
		uint64_t ino = rc->plan.dirfix.v[i];

		err = xk_bld_dir(b, &ipv[i], parent_of(rc, ino, sv[i].dotdot),
				 sv[i].l.e.v, sv[i].l.e.n);
		if (!err)
			err = xk_bld_inode_write(b, &ipv[i]);
		if (err == -EFBIG && ipv[i].attr.format) {
			/*
			 * The forks do not fit side by side (nothing was
			 * written): the directory matters more than its
			 * attrs, whose blocks are freed next pass.
			 */
			action_report_why(rc, ACT_ATTR_DROPPED, ino, -1, NULL,
					  "the attr fork and the rewritten "
					  "directory's fork do not fit in the "
					  "inode together", ": they do not "
					  "fit beside the rewritten "
					  "directory");
			free(ipv[i].attr.local);
			free(ipv[i].attr.ext);
			memset(&ipv[i].attr, 0, sizeof(ipv[i].attr));
			err = xk_bld_inode_write(b, &ipv[i]);
		}
		if (err)
			break;
		action_path(rc, ino, path, sizeof(path));
		if (sv[i].l.e.n > sv[i].nold)
			action_report(rc, ACT_DIR_REWRITTEN, ino, -1, path,
				      " with %zu entries added",
				      sv[i].l.e.n - sv[i].nold);
		else
			action_report(rc, ACT_DIR_REWRITTEN, ino, -1, path,
				      " from %zu salvaged entries",
				      sv[i].l.e.n);
		dropped_report(rc, ino, &dv[i]);
		lf_report_moves(rc, ino);
	}
	for (size_t i = 0; i < rc->plan.dirfix.n; i++) {
		dropped_free(&dv[i]);
		dir_list_free(&sv[i].l);
		/* Fork memory of inodes not written (an error stopped us). */
		free(ipv[i].data.local);
		free(ipv[i].data.ext);
		free(ipv[i].attr.local);
		free(ipv[i].attr.ext);
	}
	free(sv);
	free(ipv);
	free(dv);
	return err;
}
