// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Turn quotas on in an image the kernel populated: count every in-use
 * inode's blocks and the inodes themselves per user, group and project
 * id (what a quotacheck does), then create the three quota inodes with
 * dquot blocks holding those counts, and set the superblock's quota
 * inode numbers, quota flags and the quota version bit.  The kernel on
 * a test machine may lack quota support, so this is how the tests get
 * images with quotas; xfs_repair -n accepting the result is the proof
 * that the counting rules and the dquot format are understood.
 *
 * usage: xk_quota_make IMAGE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build.h>
#include <xfskit/btree.h>
#include <xfskit/libfs.h>
#include <xfskit/meta.h>
#include <xfskit/format/dinode.h>
#include <xfskit/format/dquot.h>
#include <xfskit/format/sb.h>

#define NTYPES	3

/* One id's usage; the table is open addressing on the id. */
struct usage {
	uint32_t	id;
	uint8_t		used;
	uint64_t	bcount, icount;
};

struct table {
	struct usage	*v;
	size_t		n, cap;		/* cap is a power of two */
};

static const uint8_t dqtype[NTYPES] = {
	XK_DQTYPE_USER, XK_DQTYPE_GROUP, XK_DQTYPE_PROJ
};

static struct usage *
table_find(struct table *t, uint32_t id, int add)
{
	size_t mask, i;

	if (add && (t->n + 1) * 2 > t->cap) {
		struct table nt = { 0 };

		nt.cap = t->cap ? t->cap * 2 : 64;
		nt.v = calloc(nt.cap, sizeof(*nt.v));
		if (!nt.v)
			return NULL;
		for (size_t j = 0; j < t->cap; j++) {
			struct usage *u;

			if (!t->v[j].used)
				continue;
			u = table_find(&nt, t->v[j].id, 0);
			*u = t->v[j];
			nt.n++;
		}
		free(t->v);
		*t = nt;
	}
	if (!t->cap)
		return NULL;
	mask = t->cap - 1;
	for (i = (id * 2654435761u) & mask; t->v[i].used; i = (i + 1) & mask)
		if (t->v[i].id == id)
			return &t->v[i];
	if (!add)
		return &t->v[i];	/* the empty slot (rehash uses it) */
	t->v[i].used = 1;
	t->v[i].id = id;
	t->n++;
	return &t->v[i];
}

struct scan {
	struct xk_mount	*mp;
	uint32_t	agno;
	struct table	t[NTYPES];
	int		err;
};

/* Every in-use inode of a chunk counts: nblocks and one inode. */
static int
chunk_rec(void *ctx, const void *rec)
{
	struct scan *s = ctx;
	const struct xk_inobt_rec *r = rec;
	uint32_t start = xk_be32_get(r->ir_startino);
	uint64_t freemask = xk_be64_get(r->ir_free);
	uint16_t holes = s->mp->g.has_sparse ?
			 xk_be16_get(r->ir_u.sp.ir_holemask) : 0;

	for (int i = 0; i < XK_INODES_PER_CHUNK; i++) {
		uint64_t ino = xk_agino_to_ino(s->mp, s->agno,
					       start + (uint32_t)i);
		struct xk_buf *bp;
		struct xk_dinode *dip;
		uint32_t ids[NTYPES];
		uint64_t nblocks;
		int err;

		if (((freemask >> i) & 1) ||
		    ((holes >> (i / XK_INODES_PER_HOLEMASK_BIT)) & 1))
			continue;
		err = xk_inode_read(s->mp, ino, 0, &bp, &dip);
		if (err) {
			fprintf(stderr, "xk_quota_make: inode %llu: %s\n",
				(unsigned long long)ino, xk_strerror(err));
			return err;
		}
		if (!xk_be16_get(dip->di_mode)) {
			xk_buf_release(bp);
			continue;
		}
		ids[0] = xk_be32_get(dip->di_uid);
		ids[1] = xk_be32_get(dip->di_gid);
		ids[2] = xk_dinode_projid(dip);
		nblocks = xk_be64_get(dip->di_nblocks);
		xk_buf_release(bp);
		for (int t = 0; t < NTYPES; t++) {
			struct usage *u = table_find(&s->t[t], ids[t], 1);

			if (!u)
				return -ENOMEM;
			u->bcount += nblocks;
			u->icount++;
		}
	}
	return 0;
}

static int
scan_inodes(struct xk_mount *mp, struct scan *s)
{
	s->mp = mp;
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		struct xk_btree_walk w = { 0 };
		struct xk_buf *agi;
		int err = xk_agi_read(mp, agno, 0, &agi);

		if (err)
			return err;
		w.ops = &xk_inobt_ops;
		w.agno = agno;
		w.root = xk_be32_get(((struct xk_agi *)agi->data)->agi_root);
		w.levels = xk_be32_get(((struct xk_agi *)agi->data)->agi_level);
		xk_buf_release(agi);
		w.ctx = s;
		w.rec_fn = chunk_rec;
		s->agno = agno;
		err = xk_btree_walk(mp, &w);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Write one dquot block: every record initialized (magic, version, type,
 * id, UUID), the ids in use carrying their counts.  The bigtime flag
 * goes on every record but id 0's on bigtime filesystems, as the kernel
 * writes them (id 0 holds the grace periods, which are not expiries).
 * CRCs are set when the buffer is written.
 */
static int
write_dquot_block(struct xk_bld *b, uint64_t fsbno, uint64_t fileblock,
		  int t, struct table *tab)
{
	struct xk_mount *mp = xk_bld_mount(b);
	uint32_t per = xk_dqblk_per_block(mp->g.blocksize);
	struct xk_buf *bp;
	int err;

	err = xk_buf_get(mp, xk_bld_fsb_daddr(b, fsbno), mp->g.blocksize,
			 &xk_dquot_buf_ops, &bp);
	if (err)
		return err;
	for (uint32_t i = 0; i < per; i++) {
		struct xk_dqblk *d = (void *)(bp->data + i * sizeof(*d));
		struct xk_disk_dquot *q = &d->dd_diskdq;
		uint64_t id = fileblock * per + i;
		/* Past 2^32-1 the kernel numbers the slots from 0 again. */
		uint32_t slot_id = (uint32_t)id;
		struct usage *u;

		xk_be16_set(&q->d_magic, XK_DQUOT_MAGIC);
		q->d_version = XK_DQUOT_VERSION;
		q->d_type = dqtype[t];
		if (slot_id && mp->g.has_bigtime)
			q->d_type |= XK_DQTYPE_BIGTIME;
		xk_be32_set(&q->d_id, slot_id);
		memcpy(d->dd_uuid, mp->meta_uuid, 16);
		u = tab->cap && id <= UINT32_MAX ?
		    table_find(tab, slot_id, 0) : NULL;
		if (u && u->used) {
			xk_be64_set(&q->d_bcount, u->bcount);
			xk_be64_set(&q->d_icount, u->icount);
		}
	}
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A quota inode whose data fork covers the blocks of every id in use. */
static int
make_quota_inode(struct xk_bld *b, int t, struct table *tab, uint64_t *inop)
{
	struct xk_mount *mp = xk_bld_mount(b);
	uint32_t per = xk_dqblk_per_block(mp->g.blocksize);
	struct xk_bld_inode in;
	uint64_t *blocks, fsbno;
	size_t n = 0;
	int err;

	blocks = malloc((tab->n + 1) * sizeof(*blocks));
	if (!blocks)
		return -ENOMEM;
	blocks[n++] = 0;		/* id 0 always has a record */
	for (size_t i = 0; i < tab->cap; i++)
		if (tab->v[i].used)
			blocks[n++] = tab->v[i].id / per;
	qsort(blocks, n, sizeof(*blocks), cmp_u64);

	err = xk_bld_ialloc(b, xk_bld_rootino(b), 0, inop);
	if (err)
		goto out;
	/* As the kernel creates them: a regular file, no permission bits,
	 * owned by root, one link, size 0 whatever its blocks. */
	xk_bld_inode_init(b, &in, *inop, XK_S_IFREG);
	for (size_t i = 0; i < n && !err; i++) {
		if (i && blocks[i] == blocks[i - 1])
			continue;
		err = xk_bld_fork_alloc(b, &in, XK_DATA_FORK, blocks[i], 1, 0);
		if (!err)
			err = xk_bld_fork_map(&in.data, blocks[i], &fsbno);
		if (!err)
			err = write_dquot_block(b, fsbno, blocks[i], t, tab);
	}
	in.size = 0;
	if (!err)
		err = xk_bld_inode_write(b, &in);
out:
	free(blocks);
	return err;
}

/* Quota inode numbers, flags and the version bit, in the primary. */
static int
set_sb(struct xk_mount *mp, const uint64_t *qino)
{
	struct xk_buf *bp;
	struct xk_sb sb;
	/* Commit left the primary dirty, its CRC due at flush: salvage. */
	int err = xk_sb_read(mp, 0, XK_READ_SALVAGE, &bp);

	if (err && err != XK_EBADCRC) {
		if (bp)
			xk_buf_release(bp);
		return err;
	}
	xk_sb_decode(&sb, (const struct xk_dsb *)bp->data);
	sb.uquotino = qino[0];
	sb.gquotino = qino[1];
	sb.pquotino = qino[2];
	sb.qflags = XK_UQUOTA_ACCT | XK_UQUOTA_ENFD | XK_UQUOTA_CHKD |
		    XK_GQUOTA_ACCT | XK_GQUOTA_ENFD | XK_GQUOTA_CHKD |
		    XK_PQUOTA_ACCT | XK_PQUOTA_ENFD | XK_PQUOTA_CHKD;
	sb.versionnum |= XK_SB_VERSION_QUOTABIT;
	xk_sb_encode((struct xk_dsb *)bp->data, &sb);
	mp->sb.uquotino = sb.uquotino;
	mp->sb.gquotino = sb.gquotino;
	mp->sb.pquotino = sb.pquotino;
	mp->sb.qflags = sb.qflags;
	mp->sb.versionnum = sb.versionnum;
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	return 0;
}

static int
die(const char *what, int err)
{
	fprintf(stderr, "xk_quota_make: %s: %s\n", what, xk_strerror(err));
	return 1;
}

int
main(int argc, char **argv)
{
	struct xk_mount *mp;
	struct xk_fail f;
	struct xk_bld *b;
	struct scan s;
	uint64_t qino[NTYPES];
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: xk_quota_make IMAGE\n");
		return 2;
	}
	memset(&s, 0, sizeof(s));
	err = xk_mount_open(argv[1], 0, &mp, &f);
	if (err)
		return die("open", err);
	if (mp->sb.qflags || (mp->sb.uquotino && mp->sb.uquotino !=
			      XK_NULLFSINO)) {
		fprintf(stderr, "xk_quota_make: quotas are already on\n");
		return 1;
	}
	err = scan_inodes(mp, &s);
	if (err)
		return die("inode scan", err);
	err = xk_bld_open(mp, &b);
	if (err)
		return die("xk_bld_open", err);
	for (int t = 0; t < NTYPES && !err; t++)
		err = make_quota_inode(b, t, &s.t[t], &qino[t]);
	if (err)
		return die("quota inode", err);
	err = xk_bld_commit(b);
	if (err)
		return die("commit", err);
	xk_bld_free(b);
	err = set_sb(mp, qino);
	if (err)
		return die("superblock", err);
	for (int t = 0; t < NTYPES; t++) {
		printf("%s: %zu ids, inode %llu\n",
		       t == 0 ? "user" : t == 1 ? "group" : "project",
		       s.t[t].n, (unsigned long long)qino[t]);
		free(s.t[t].v);
	}
	err = xk_mount_close(mp);
	if (err)
		return die("close", err);
	return 0;
}
