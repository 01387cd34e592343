// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Quotas: when the superblock has the quota bit, each quota inode it
 * names (user, group, project) must be a regular file of size 0 whose
 * data fork holds dquot blocks, every record of which is sound.  When
 * the superblock also says a type's usage was checked (its CHKD flag),
 * every dquot's block and inode counts must equal what the inodes add
 * up to, and every id in use must have a dquot.  These are the rules
 * xfs_repair -n applies (its quota inode checks in the inode scan, and
 * its quotacheck after the link counts).
 *
 * Usage is summed in one small hash table per quota type, keyed by id:
 * memory grows with the number of distinct ids, not with inodes.
 */
#include <string.h>

#include "phase_quota.h"

#include <xfskit/btree.h>
#include <xfskit/format/dquot.h>

#define NQTYPES		3

/* One id's usage as the inodes add it up. */
struct qrec {
	uint32_t	id;
	uint8_t		used;
	uint8_t		ondisk;		/* seen in a dquot */
	uint64_t	bcount, rtbcount, icount;
};

/* Open addressing, at most half full; cap is a power of two. */
struct qtab {
	struct qrec	*v;
	size_t		n, cap;
};

/* The file blocks of a quota inode whose records could not be trusted. */
struct badblocks {
	uint64_t	*v;
	size_t		n, cap;
};

struct qtype {
	const char	*name;		/* "user quota" ... */
	uint8_t		dqtype;		/* XK_DQTYPE_* */
	uint16_t	chkd;		/* its sb_qflags CHKD bit */
	uint64_t	ino;
	int		usable;		/* inode and fork are sound */
	int		counting;	/* usage is compared */
	struct fork_map	map;
	struct badblocks bad;
	struct qtab	tab;
};

static size_t
qtab_slot(const struct qtab *t, uint32_t id)
{
	size_t mask = t->cap - 1;
	size_t i = (size_t)(id * 2654435761u) & mask;

	while (t->v[i].used && t->v[i].id != id)
		i = (i + 1) & mask;
	return i;
}

static int
qtab_grow(struct qtab *t)
{
	struct qtab nt = { .cap = t->cap ? t->cap * 2 : 64 };

	nt.v = calloc(nt.cap, sizeof(*nt.v));
	if (!nt.v)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->v[i].used) {
			nt.v[qtab_slot(&nt, t->v[i].id)] = t->v[i];
			nt.n++;
		}
	free(t->v);
	*t = nt;
	return 0;
}

/* The record for id, or NULL when absent (and !add) or out of memory. */
static struct qrec *
qtab_get(struct qtab *t, uint32_t id, int add)
{
	size_t i;

	if (add && (t->n + 1) * 2 > t->cap && qtab_grow(t))
		return NULL;
	if (!t->cap)
		return NULL;
	i = qtab_slot(t, id);
	if (!t->v[i].used) {
		if (!add)
			return NULL;
		t->v[i].used = 1;
		t->v[i].id = id;
		t->n++;
	}
	return &t->v[i];
}

static int
map_add(void *ctx, const struct xk_bmbt_irec *r)
{
	struct fork_map *m = ctx;

	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 16;
		struct xk_bmbt_irec *nv = realloc(m->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		m->v = nv;
		m->cap = ncap;
	}
	m->v[m->n++] = *r;
	return 0;
}

static int
bmbt_rec(void *ctx, const void *rec)
{
	struct xk_bmbt_irec r;

	xk_bmbt_rec_unpack(rec, &r);
	return map_add(ctx, &r);
}

/*
 * The data fork's extents, without claiming anything (the inode scan
 * did that and reported the fork's problems): 0, XK_ECORRUPT when the
 * fork cannot be mapped, or -ENOMEM.
 */
static int
data_extents(struct xk_mount *mp, uint64_t ino, const struct xk_dinode *dip,
	     struct fork_map *m)
{
	const uint8_t *p = xk_dfork_dptr(dip);
	unsigned int size = xk_dfork_dsize(dip, mp->g.inodesize);
	uint64_t nex = xk_dinode_nextents(dip);
	int err;

	m->n = 0;
	switch (dip->di_format) {
	case XK_DINODE_FMT_EXTENTS:
		if (nex > size / sizeof(struct xk_bmbt_rec))
			return XK_ECORRUPT;
		for (uint64_t i = 0; i < nex; i++) {
			struct xk_bmbt_irec r;

			xk_bmbt_rec_unpack((const struct xk_bmbt_rec *)
					   (p + i * 16), &r);
			err = map_add(m, &r);
			if (err)
				return err;
		}
		return 0;
	case XK_DINODE_FMT_BTREE: {
		struct xk_btree_walk w = {
			.ops = &xk_bmbt_ops,
			.agno = -1,
			.owner = ino,
			.iroot = p,
			.iroot_size = size,
			.ctx = m,
			.rec_fn = bmbt_rec,
		};

		if (size < 4)
			return XK_ECORRUPT;
		w.levels = xk_get_be16(p) + 1u;
		err = xk_btree_walk(mp, &w);
		if (err == -ENOMEM)
			return err;
		return err ? XK_ECORRUPT : 0;
	}
	default:
		return XK_ECORRUPT;
	}
}

static int
bad_add(struct badblocks *b, uint64_t fileblock)
{
	if (b->n == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 8;
		uint64_t *nv = realloc(b->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		b->v = nv;
		b->cap = ncap;
	}
	b->v[b->n++] = fileblock;
	return 0;
}

static int
bad_has(const struct badblocks *b, uint64_t fileblock)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i] == fileblock)
			return 1;
	return 0;
}

/*
 * Check one record; returns 1 if it is sound.  Rules, in the order
 * xfs_repair reports the first one broken:
 *  1. the record's CRC;
 *  2. its UUID is the filesystem's metadata UUID;
 *  3. magic "DQ" and version 1;
 *  4. no unknown d_type bits and exactly the quota type of its file;
 *  5. the bigtime flag only on bigtime filesystems, and never on id 0;
 *  6. d_id is the id its position in the file stands for;
 *  7. for ids other than 0, a count over its soft limit has a timer.
 */
static int
check_record(struct repair_ctx *rc, struct qtype *qt, uint64_t daddr,
	     const struct xk_dqblk *d, uint32_t id)
{
	const struct xk_disk_dquot *q = &d->dd_diskdq;
	const char *check = NULL;
	char why[96] = "";

	if (!xk_cksum_ok(d, sizeof(*d), XK_DQUOT_CRC_OFF)) {
		check = "crc";
		snprintf(why, sizeof(why), "bad CRC");
	} else if (memcmp(d->dd_uuid, rc->mp->meta_uuid, 16)) {
		check = "uuid";
		snprintf(why, sizeof(why), "UUID is not the filesystem's");
	} else if (xk_be16_get(q->d_magic) != XK_DQUOT_MAGIC) {
		check = "magic";
		snprintf(why, sizeof(why), "magic 0x%04x",
			 xk_be16_get(q->d_magic));
	} else if (q->d_version != XK_DQUOT_VERSION) {
		check = "version";
		snprintf(why, sizeof(why), "version %u", q->d_version);
	} else if ((q->d_type & ~XK_DQTYPE_ANY) ||
		   (q->d_type & XK_DQTYPE_REC_MASK) != qt->dqtype) {
		check = "type";
		snprintf(why, sizeof(why), "type 0x%x, expected 0x%x",
			 q->d_type, qt->dqtype);
	} else if ((q->d_type & XK_DQTYPE_BIGTIME) &&
		   (!rc->mp->g.has_bigtime || !id)) {
		check = "bigtime";
		snprintf(why, sizeof(why), "bigtime timers %s",
			 id ? "without the bigtime feature" :
			 "on the id 0 record");
	} else if (xk_be32_get(q->d_id) != id) {
		check = "id";
		snprintf(why, sizeof(why), "record holds id %u",
			 xk_be32_get(q->d_id));
	} else if (id &&
		   ((xk_be64_get(q->d_blk_softlimit) &&
		     !xk_be32_get(q->d_btimer) &&
		     xk_be64_get(q->d_bcount) >
		     xk_be64_get(q->d_blk_softlimit)) ||
		    (xk_be64_get(q->d_ino_softlimit) &&
		     !xk_be32_get(q->d_itimer) &&
		     xk_be64_get(q->d_icount) >
		     xk_be64_get(q->d_ino_softlimit)) ||
		    (xk_be64_get(q->d_rtb_softlimit) &&
		     !xk_be32_get(q->d_rtbtimer) &&
		     xk_be64_get(q->d_rtbcount) >
		     xk_be64_get(q->d_rtb_softlimit)))) {
		check = "timer";
		snprintf(why, sizeof(why), "over a soft limit with no timer");
	}
	if (!check)
		return 1;
	if (report(rc, PR_QUOTA_DQUOT, qt->name, -1, qt->ino, daddr, check,
		   "dquot for id %u: %s", id, why))
		plan_none(rc);
	return 0;
}

/*
 * Every block of a quota file: each record checked; a block with any
 * bad record is remembered so its counts are not compared (they cannot
 * be trusted, and xfs_repair's quotacheck cannot read such a block).
 */
static int
check_blocks(struct repair_ctx *rc, struct qtype *qt)
{
	struct xk_mount *mp = rc->mp;
	uint32_t per = xk_dqblk_per_block(mp->g.blocksize);

	for (size_t e = 0; e < qt->map.n; e++) {
		const struct xk_bmbt_irec *r = &qt->map.v[e];

		if (!xk_fsbext_valid(mp, r->startblock, r->blockcount) ||
		    r->startoff + r->blockcount > (uint64_t)UINT32_MAX / per +
						  1) {
			if (report(rc, PR_QUOTA_INODE, qt->name, -1, qt->ino,
				   XK_NO_DADDR, "extent", "extent at file "
				   "block %llu (block %llu, %llu blocks) is "
				   "not valid",
				   (unsigned long long)r->startoff,
				   (unsigned long long)r->startblock,
				   (unsigned long long)r->blockcount))
				plan_none(rc);
			qt->usable = 0;
			return 0;
		}
		for (uint64_t i = 0; i < r->blockcount; i++) {
			uint64_t fb = r->startoff + i;
			uint64_t daddr = xk_fsb_to_daddr(mp,
							 r->startblock + i);
			struct xk_buf *bp;
			int ok = 1, err;

			err = xk_buf_read(mp, daddr, mp->g.blocksize, NULL,
					  XK_READ_NOVERIFY, &bp);
			if (err) {
				if (report(rc, PR_QUOTA_DQUOT, qt->name, -1,
					   qt->ino, daddr, "read", "file "
					   "block %llu: %s",
					   (unsigned long long)fb,
					   xk_strerror(err)))
					plan_none(rc);
				ok = 0;
			} else {
				for (uint32_t j = 0; j < per; j++) {
					uint64_t id = fb * per + j;

					if (id > UINT32_MAX)
						break;
					ok &= check_record(rc, qt, daddr,
						(const struct xk_dqblk *)
						(bp->data + j *
						 sizeof(struct xk_dqblk)),
						(uint32_t)id);
				}
				xk_buf_release(bp);
			}
			if (!ok && bad_add(&qt->bad, fb))
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The quota inode itself.  Rules:
 *  1. it can be read and is in use;
 *  2. it is a regular file;
 *  3. its size is 0 (dquot files never set it);
 *  4. its data fork maps to extents.
 * A quota inode failing 1, 2 or 4 is lost for the usage comparison.
 */
static int
check_qinode(struct repair_ctx *rc, struct qtype *qt)
{
	struct xk_mount *mp = rc->mp;
	struct xk_buf *bp;
	struct xk_dinode *dip;
	uint16_t mode;
	int err;

	err = xk_inode_read(mp, qt->ino, XK_READ_SALVAGE, &bp, &dip);
	if (err && !bp) {
		if (report(rc, PR_QUOTA_INODE, qt->name, -1, qt->ino,
			   XK_NO_DADDR, "read", "quota inode cannot be "
			   "read: %s", xk_strerror(err)))
			plan_none(rc);
		return 0;
	}
	/* A core failing its verifier was reported by the inode scan. */
	mode = xk_be16_get(dip->di_mode);
	if (err || (mode & XK_S_IFMT) != XK_S_IFREG) {
		if (!err && report(rc, PR_QUOTA_INODE, qt->name, -1, qt->ino,
				   bp->daddr, "type", "quota inode is not a "
				   "regular file (mode 0%o)", mode))
			plan_none(rc);
		xk_buf_release(bp);
		return 0;
	}
	if (xk_be64_get(dip->di_size) &&
	    report(rc, PR_QUOTA_INODE, qt->name, -1, qt->ino, bp->daddr,
		   "size", "quota inode has size %llu, expected 0",
		   (unsigned long long)xk_be64_get(dip->di_size)))
		plan_none(rc);
	err = data_extents(mp, qt->ino, dip, &qt->map);
	xk_buf_release(bp);
	if (err == -ENOMEM)
		return err;
	if (err) {
		if (report(rc, PR_QUOTA_INODE, qt->name, -1, qt->ino,
			   XK_NO_DADDR, "fork", "quota inode's data fork "
			   "cannot be mapped"))
			plan_none(rc);
		return 0;
	}
	qt->usable = 1;
	return check_blocks(rc, qt);
}

/* Realtime blocks of an inode: its data fork's extents, all on rt. */
static int
rt_blocks(struct xk_mount *mp, uint64_t ino, const struct xk_dinode *dip,
	  struct fork_map *scratch, uint64_t *rt)
{
	int err = data_extents(mp, ino, dip, scratch);

	*rt = 0;
	if (err)
		return err;
	for (size_t i = 0; i < scratch->n; i++)
		*rt += scratch->v[i].blockcount;
	return 0;
}

/*
 * Add up usage over every inode in use but the quota inodes: each one
 * counts once for its user, group and project, with di_nblocks (data,
 * attr and bmbt blocks of both forks) less its realtime blocks.
 */
static int
count_usage(struct repair_ctx *rc, struct qtype *qt)
{
	struct xk_mount *mp = rc->mp;
	const struct xk_sb *sb = &mp->sb;
	struct fork_map scratch = { 0 };
	int ret = 0;

	for (size_t i = 0; i < rc->ninodes; i++) {
		uint64_t ino = rc->inodes[i].ino;
		struct xk_buf *bp;
		struct xk_dinode *dip;
		uint32_t ids[NQTYPES];
		uint64_t nblocks, rt = 0;
		int err;

		if (ino == sb->uquotino || ino == sb->gquotino ||
		    ino == sb->pquotino)
			continue;
		err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip);
		if (err && !bp)
			continue;	/* reported by the inode scan */
		ids[0] = xk_be32_get(dip->di_uid);
		ids[1] = xk_be32_get(dip->di_gid);
		ids[2] = xk_dinode_projid(dip);
		nblocks = xk_be64_get(dip->di_nblocks);
		if ((xk_be16_get(dip->di_flags) & XK_DIFLAG_REALTIME) &&
		    rt_blocks(mp, ino, dip, &scratch, &rt) == -ENOMEM) {
			xk_buf_release(bp);
			ret = -ENOMEM;
			break;
		}
		xk_buf_release(bp);
		if (rt > nblocks)
			rt = nblocks;
		for (int t = 0; t < NQTYPES; t++) {
			struct qrec *q;

			if (!qt[t].counting)
				continue;
			q = qtab_get(&qt[t].tab, ids[t], 1);
			if (!q) {
				ret = -ENOMEM;
				goto out;
			}
			q->bcount += nblocks - rt;
			q->rtbcount += rt;
			q->icount++;
		}
	}
out:
	free(scratch.v);
	return ret;
}

static void
count_mismatch(struct repair_ctx *rc, struct qtype *qt, uint64_t daddr,
	       uint32_t id, const char *what, uint64_t found,
	       uint64_t expected)
{
	if (found != expected &&
	    report(rc, PR_QUOTA_COUNT, qt->name, -1, qt->ino, daddr, what,
		   "id %u: dquot says %s %llu, the inodes add up to %llu",
		   id, what, (unsigned long long)found,
		   (unsigned long long)expected))
		plan_none(rc);
}

/*
 * Compare every dquot of the sound blocks with the usage counted, then
 * report the ids in use that no dquot accounts for (their blocks are
 * missing from the file; ids in a bad block were reported already).
 */
static int
compare_usage(struct repair_ctx *rc, struct qtype *qt)
{
	struct xk_mount *mp = rc->mp;
	uint32_t per = xk_dqblk_per_block(mp->g.blocksize);

	for (size_t e = 0; e < qt->map.n; e++) {
		const struct xk_bmbt_irec *r = &qt->map.v[e];

		for (uint64_t i = 0; i < r->blockcount; i++) {
			uint64_t fb = r->startoff + i;
			uint64_t daddr = xk_fsb_to_daddr(mp,
							 r->startblock + i);
			struct xk_buf *bp;

			if (bad_has(&qt->bad, fb))
				continue;
			if (xk_buf_read(mp, daddr, mp->g.blocksize, NULL,
					XK_READ_NOVERIFY, &bp))
				continue;
			for (uint32_t j = 0; j < per; j++) {
				const struct xk_dqblk *d = (const void *)
					(bp->data + j * sizeof(*d));
				const struct xk_disk_dquot *q = &d->dd_diskdq;
				uint64_t id = fb * per + j;
				struct qrec zero = { 0 }, *u;

				if (id > UINT32_MAX)
					break;
				u = qtab_get(&qt->tab, (uint32_t)id, 0);
				if (u)
					u->ondisk = 1;
				else
					u = &zero;
				count_mismatch(rc, qt, daddr, (uint32_t)id,
					       "bcount",
					       xk_be64_get(q->d_bcount),
					       u->bcount);
				count_mismatch(rc, qt, daddr, (uint32_t)id,
					       "rtbcount",
					       xk_be64_get(q->d_rtbcount),
					       u->rtbcount);
				count_mismatch(rc, qt, daddr, (uint32_t)id,
					       "icount",
					       xk_be64_get(q->d_icount),
					       u->icount);
			}
			xk_buf_release(bp);
		}
	}
	for (size_t i = 0; i < qt->tab.cap; i++) {
		const struct qrec *u = &qt->tab.v[i];

		if (!u->used || u->ondisk || bad_has(&qt->bad, u->id / per))
			continue;
		if (report(rc, PR_QUOTA_COUNT, qt->name, -1, qt->ino,
			   XK_NO_DADDR, "missing", "no dquot for id %u "
			   "(in use by %llu inodes, %llu blocks)", u->id,
			   (unsigned long long)u->icount,
			   (unsigned long long)u->bcount))
			plan_none(rc);
	}
	return 0;
}

static void
qtype_free(struct qtype *qt)
{
	free(qt->map.v);
	free(qt->bad.v);
	free(qt->tab.v);
}

int
phase_quota(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;
	const struct xk_sb *sb = &mp->sb;
	struct qtype qt[NQTYPES] = {
		{ .name = "user quota", .dqtype = XK_DQTYPE_USER,
		  .chkd = XK_UQUOTA_CHKD, .ino = sb->uquotino },
		{ .name = "group quota", .dqtype = XK_DQTYPE_GROUP,
		  .chkd = XK_GQUOTA_CHKD, .ino = sb->gquotino },
		{ .name = "project quota", .dqtype = XK_DQTYPE_PROJ,
		  .chkd = XK_PQUOTA_CHKD, .ino = sb->pquotino },
	};
	int any = 0, err = 0;

	if (!mp->g.has_quota)
		return 0;
	for (int t = 0; t < NQTYPES && !err; t++) {
		if (!qt[t].ino || qt[t].ino == XK_NULLFSINO)
			continue;
		if (!xk_ino_valid(mp, qt[t].ino)) {
			if (report(rc, PR_QUOTA_INODE, qt[t].name, -1,
				   qt[t].ino, XK_NO_DADDR, "inode number",
				   "the superblock's quota inode number is "
				   "not valid"))
				plan_none(rc);
			continue;
		}
		err = check_qinode(rc, &qt[t]);
		if (qt[t].usable && (sb->qflags & qt[t].chkd)) {
			qt[t].counting = 1;
			any = 1;
		}
	}
	if (!err && any)
		err = count_usage(rc, qt);
	for (int t = 0; t < NQTYPES && !err; t++)
		if (qt[t].counting)
			err = compare_usage(rc, &qt[t]);
	for (int t = 0; t < NQTYPES; t++)
		qtype_free(&qt[t]);
	return err;
}
