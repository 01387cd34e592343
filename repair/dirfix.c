// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Rewriting block, leaf and node directories from their salvaged
 * entries.  A directory whose blocks fail their checks, or whose entries
 * name inodes not in use, is read block by block below the leaf offset,
 * keeping every entry that can still be parsed (bounds checked one by
 * one: a broken entry ends its block, not the directory), names an
 * inode in use and is not a duplicate name; the hash index and free
 * index are not trusted, they are rebuilt.  The directory is then
 * written anew by the builder (xk_bld_dir picks the format the kernel
 * would use for that many entries) inside the AG rebuild session, whose
 * commit frees the old blocks (they are not claimed) and indexes the new
 * ones.  Entries whose blocks are gone leave their inodes unnamed: the
 * next pass reconnects them under /lost+found.
 *
 * Limits: a directory with extended attributes is left as it is (a
 * finding no fix covers).
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/build.h>
#include <xfskit/format/dir.h>

#include "repair.h"

void
plan_dir_rebuild(struct repair_ctx *rc, uint64_t ino)
{
	if (rc->no_modify)
		return;
	if (rc->ndirfix == rc->capdirfix) {
		size_t ncap = rc->capdirfix ? rc->capdirfix * 2 : 16;
		uint64_t *nv = realloc(rc->dirfix, ncap * sizeof(*nv));

		if (!nv)
			return;
		rc->dirfix = nv;
		rc->capdirfix = ncap;
	}
	rc->dirfix[rc->ndirfix++] = ino;
}

static int
cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

static int
cmp_info(const void *a, const void *b)
{
	const struct inode_info *x = a, *y = b;

	return (x->ino > y->ino) - (x->ino < y->ino);
}

static const struct inode_info *
find_info(const struct repair_ctx *rc, uint64_t ino)
{
	struct inode_info key = { .ino = ino };

	if (!rc->ninodes)
		return NULL;
	return bsearch(&key, rc->inodes, rc->ninodes, sizeof(key), cmp_info);
}

/* Few directories are ever planned: a linear look is enough. */
int
dir_being_rebuilt(const struct repair_ctx *rc, uint64_t owner)
{
	for (size_t i = 0; i < rc->ndirfix; i++)
		if (rc->dirfix[i] == owner)
			return 1;
	return 0;
}

struct salvage {
	struct xk_bld_dirent	*v;
	size_t			n, cap;
	uint64_t		dotdot;
};

static int
cmp_dirent(const void *a, const void *b)
{
	const struct xk_bld_dirent *x = a, *y = b;
	int c = memcmp(x->name, y->name, x->namelen < y->namelen ?
		       x->namelen : y->namelen);

	return c ? c : (int)x->namelen - (int)y->namelen;
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
		if (!at[8])
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
 */
static void
salvage_block(struct repair_ctx *rc, const uint8_t *blk, uint32_t size,
	      struct salvage *s)
{
	int ftype = rc->mp->g.has_ftype;
	uint32_t magic = xk_get_be32(blk);
	uint32_t end = size;
	uint32_t p = sizeof(struct xk_dir3_data_hdr);

	if (magic == XK_DIR3_BLOCK_MAGIC) {
		/* The tail: leaf count and stale count, then the leaves. */
		uint32_t count = xk_get_be32(blk + size - 8);

		if ((uint64_t)count * 8 + 8 + p > size)
			return;
		end = size - 8 - count * 8;
	} else if (magic != XK_DIR3_DATA_MAGIC) {
		return;
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
		p += len;
		if (namelen == 1 && at[9] == '.')
			continue;
		if (namelen == 2 && at[9] == '.' && at[10] == '.') {
			s->dotdot = ino;
			continue;
		}
		ii = find_info(rc, ino);
		if (!name_ok(at + 9, namelen) || !ii)
			continue;
		if (s->n == s->cap) {
			size_t ncap = s->cap ? s->cap * 2 : 64;
			struct xk_bld_dirent *nv = realloc(s->v,
						ncap * sizeof(*nv));

			if (!nv)
				return;
			s->v = nv;
			s->cap = ncap;
		}
		{
			uint8_t *name = malloc(namelen);

			if (!name)
				return;
			memcpy(name, at + 9, namelen);
			s->v[s->n++] = (struct xk_bld_dirent){
				.name = name, .namelen = (uint8_t)namelen,
				.ftype = xk_mode_to_ftype(ii->mode),
				.ino = ino,
			};
		}
	}
}

static void
salvage_free(struct salvage *s)
{
	for (size_t i = 0; i < s->n; i++)
		free((void *)s->v[i].name);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* The data fork's extents: the list in the inode, or the bmbt's. */
struct extlist {
	struct xk_bmbt_irec	*v;
	size_t			n, cap;
};

static int
ext_push(void *ctx, const void *rec)
{
	struct extlist *l = ctx;

	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 32;
		struct xk_bmbt_irec *nv = realloc(l->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = ncap;
	}
	xk_bmbt_rec_unpack(rec, &l->v[l->n++]);
	return 0;
}

static void
ext_fail(void *ctx, const struct xk_fail *f)
{
	(void)ctx;
	(void)f;	/* reported by the check already */
}

static int
dir_extents(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip,
	    struct extlist *l)
{
	struct xk_mount *mp = rc->mp;
	const uint8_t *fork = xk_dfork_dptr(dip);
	unsigned int size = xk_dfork_dsize(dip, mp->g.inodesize);

	if (dip->di_format == XK_DINODE_FMT_EXTENTS) {
		uint64_t nex = xk_dinode_nextents(dip);

		if (nex > size / sizeof(struct xk_bmbt_rec))
			return XK_ECORRUPT;
		for (uint64_t i = 0; i < nex; i++)
			if (ext_push(l, fork + i * sizeof(struct xk_bmbt_rec)))
				return -ENOMEM;
		return 0;
	}
	if (dip->di_format == XK_DINODE_FMT_BTREE) {
		/* Records of readable leaves; the walk goes around the rest. */
		struct xk_btree_walk w = {
			.ops = &xk_bmbt_ops, .agno = -1, .owner = ino,
			.iroot = fork, .iroot_size = size,
			.levels = xk_get_be16(fork) + 1u,
			.ctx = l, .rec_fn = ext_push, .fail_fn = ext_fail,
		};

		xk_btree_walk(mp, &w);
		return 0;
	}
	return XK_ECORRUPT;
}

/* Read every data block of the directory. */
static int
salvage_dir(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip,
	    struct salvage *s)
{
	struct xk_mount *mp = rc->mp;
	uint64_t leaf_fsb = XK_DIR2_LEAF_OFFSET >> mp->g.blocklog;
	uint32_t per = 1u << mp->g.dirblklog;
	struct extlist l = { 0 };
	int err = dir_extents(rc, ino, dip, &l);

	if (err) {
		free(l.v);
		return err;
	}
	for (size_t i = 0; i < l.n; i++) {
		struct xk_bmbt_irec r = l.v[i];

		if (!r.blockcount ||
		    !xk_fsbext_valid(mp, r.startblock, r.blockcount))
			continue;
		for (uint64_t off = 0; off + per <= r.blockcount; off += per) {
			struct xk_buf *bp;

			if (r.startoff + off >= leaf_fsb ||
			    ((r.startoff + off) & (per - 1)))
				continue;
			if (xk_buf_read(mp, xk_fsb_to_daddr(mp,
					r.startblock + off), mp->g.dirblksize,
					&xk_dir3_data_buf_ops,
					XK_READ_NOVERIFY, &bp))
				continue;
			salvage_block(rc, bp->data, mp->g.dirblksize, s);
			xk_buf_release(bp);
		}
	}
	free(l.v);
	/* One entry per name: the first kept. */
	sort_v(s->v, s->n, sizeof(*s->v), cmp_dirent);
	{
		size_t out = 0;

		for (size_t i = 0; i < s->n; i++) {
			if (out && !cmp_dirent(&s->v[out - 1], &s->v[i])) {
				free((void *)s->v[i].name);
				continue;
			}
			s->v[out++] = s->v[i];
		}
		s->n = out;
	}
	return 0;
}

/* The directory that names dir, or the root. */
static uint64_t
parent_of(const struct repair_ctx *rc, uint64_t dir, uint64_t dotdot)
{
	const struct inode_info *p = find_info(rc, dotdot);

	if (p && (p->mode & XK_S_IFMT) == XK_S_IFDIR)
		return dotdot;
	for (size_t i = 0; i < rc->nedges; i++)
		if (rc->edges[i].child == dir)
			return rc->edges[i].parent;
	return rc->mp->sb.rootino;
}

/*
 * Keep only the directories that can be rewritten: sorted, unique,
 * in use, an extent list or bmbt data fork, no attr fork or an empty
 * one (which the rewrite drops: it holds nothing).
 */
int
dirs_prepare(struct repair_ctx *rc)
{
	size_t out = 0;

	sort_v(rc->dirfix, rc->ndirfix, sizeof(*rc->dirfix), cmp_u64);
	for (size_t i = 0; i < rc->ndirfix; i++) {
		uint64_t ino = rc->dirfix[i];
		struct xk_buf *bp;
		struct xk_dinode *dip;
		int ok;

		if (out && rc->dirfix[out - 1] == ino)
			continue;
		if (xk_inode_read(rc->mp, ino, XK_READ_SALVAGE, &bp, &dip) &&
		    !bp)
			continue;
		ok = find_info(rc, ino) &&
		     (dip->di_format == XK_DINODE_FMT_EXTENTS ||
		      dip->di_format == XK_DINODE_FMT_BTREE) &&
		     (!dip->di_forkoff ||
		      (dip->di_aformat == XK_DINODE_FMT_EXTENTS &&
		       !xk_dinode_anextents(dip))) &&
		     !xk_dinode_verify(rc->mp, ino, dip, &(struct xk_fail){0});
		xk_buf_release(bp);
		if (ok)
			rc->dirfix[out++] = ino;
		else
			plan_none(rc);
	}
	rc->ndirfix = out;
	return (int)out;
}

int
rebuild_dirs(struct repair_ctx *rc, struct xk_bld *b)
{
	struct xk_mount *mp = rc->mp;
	struct salvage *sv = calloc(rc->ndirfix ? rc->ndirfix : 1,
				    sizeof(*sv));
	struct xk_bld_inode *ipv = calloc(rc->ndirfix ? rc->ndirfix : 1,
					  sizeof(*ipv));
	int err = 0;

	if (!sv || !ipv) {
		free(sv);
		free(ipv);
		return -ENOMEM;
	}
	/* Read every old directory before the builder reuses its blocks. */
	for (size_t i = 0; i < rc->ndirfix && !err; i++) {
		uint64_t ino = rc->dirfix[i];
		struct xk_buf *bp;
		struct xk_dinode *dip;
		struct xk_bld_inode *ip = &ipv[i];

		err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip);
		if (err && !bp)
			break;
		err = salvage_dir(rc, ino, dip, &sv[i]);
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
		xk_buf_release(bp);
	}
	for (size_t i = 0; i < rc->ndirfix && !err; i++) {
		uint64_t ino = rc->dirfix[i];

		err = xk_bld_dir(b, &ipv[i], parent_of(rc, ino, sv[i].dotdot),
				 sv[i].v, sv[i].n);
		if (!err)
			err = xk_bld_inode_write(b, &ipv[i]);
		if (!err)
			info(rc, "Rewrote directory %llu from %zu salvaged "
			     "entries.\n", (unsigned long long)ino, sv[i].n);
	}
	for (size_t i = 0; i < rc->ndirfix; i++)
		salvage_free(&sv[i]);
	free(sv);
	free(ipv);
	return err;
}
