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
 * memory grows with the number of distinct ids, not with inodes.  In
 * repair the findings become plans (QFIX_* in plan.h) that
 * quotafix.c applies with the usage counted here.
 */
#include <stdarg.h>
#include <string.h>

#include "phase_quota.h"

#include <xfskit/btree.h>
#include <xfskit/fork.h>

/*
 * The data fork's extents, without claiming anything (the inode scan
 * did that and reported the fork's problems): 0, XK_ECORRUPT when the
 * fork cannot be mapped, or an operational error (-ENOMEM, -EIO).
 */
static int
data_extents(struct xk_mount *mp, uint64_t ino, const struct xk_dinode *dip,
	     struct fork_map *m)
{
	struct xk_fork_map fm = { 0 };
	int err;

	m->n = 0;
	if (dip->di_format != XK_DINODE_FMT_EXTENTS &&
	    dip->di_format != XK_DINODE_FMT_BTREE)
		return XK_ECORRUPT;
	err = xk_fork_read(mp, ino, dip, XK_DATA_FORK, 0, &fm);
	if (!err) {
		/* Hand the reader's array over rather than copy it. */
		xk_vec_free(&m->vec);
		m->vec.v = fm.ext;	/* a heap vector may take a malloc'd array */
		m->vec.n = fm.next;
		m->vec.cap = fm.ext_cap;
		fm.ext = NULL;
	}
	xk_fork_map_free(&fm);
	return err;
}

static int
bad_add(struct badblocks *b, uint64_t fileblock)
{
	b->vec.first = 8;	/* seldom more than a few */
	return xk_vec_push(&b->vec, &fileblock, sizeof(fileblock));
}

static int
bad_has(const struct badblocks *b, uint64_t fileblock)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i] == fileblock)
			return 1;
	return 0;
}

/* Check one record; returns 1 if it is sound.  Repair rewrites it. */
static int
check_record(struct repair_ctx *rc, struct qtype *qt, uint64_t daddr,
	     const struct xk_dqblk *d, uint32_t id)
{
	char why[96] = "";
	const char *check = quota_record_problem(rc->mp, qt, d, id, why,
						 sizeof(why));

	if (xk_be16_get(d->dd_diskdq.d_magic) == XK_DQUOT_MAGIC &&
	    (d->dd_diskdq.d_type & XK_DQTYPE_REC_MASK) == qt->dqtype)
		qt->dq_like++;
	if (!check)
		return 1;
	if (report(rc, PR_QUOTA_DQUOT, qt->name, -1, qt->ino, daddr, check,
		   "dquot for id %u: %s", id, why))
		plan_quota(rc, qt->type, QFIX_RECORDS);
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
			if (xk_err_operational(err))
				return err;
			if (err) {
				if (report(rc, PR_QUOTA_DQUOT, qt->name, -1,
					   qt->ino, daddr, "read", "file "
					   "block %llu: %s",
					   (unsigned long long)fb,
					   xk_strerror(err))) {
					/* Its usage cannot be trusted. */
					plan_quota(rc, qt->type, QFIX_UNCHECK);
					plan_none(rc);
				}
				ok = 0;
			} else {
				/*
				 * Every slot: past id 2^32-1 the kernel
				 * numbers the last block's records on from
				 * 0 again, and verifies them all.
				 */
				for (uint32_t j = 0; j < per; j++)
					ok &= check_record(rc, qt, daddr,
						(const struct xk_dqblk *)
						(bp->data + j *
						 sizeof(struct xk_dqblk)),
						(uint32_t)(fb * per + j));
				xk_buf_release(bp);
			}
			if (!ok && bad_add(&qt->bad, fb))
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Report that the quota type's inode is lost (check names the rule,
 * fmt says why) and, when the verdict allows, plan the superblock to
 * forget it, keeping the reason for the repair's action line.
 */
static void __attribute__((format(printf, 5, 6)))
report_lost(struct repair_ctx *rc, struct qtype *qt, uint64_t daddr,
	    const char *check, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(qt->lost_why, sizeof(qt->lost_why), fmt, ap);
	va_end(ap);
	if (report(rc, PR_QUOTA_INODE, qt->name, -1, qt->ino, daddr, check,
		   "%s", qt->lost_why))
		plan_quota(rc, qt->type, QFIX_LOST);
}

/*
 * The core the inode scan keeps of an inode failing its verifier: a
 * salvaged copy in *copy (the caller frees it), NULL when salvage_core
 * gives up (the scan then frees the inode).  0 or -ENOMEM.
 */
static int
salvaged_copy(struct repair_ctx *rc, uint64_t ino,
	      const struct xk_dinode *dip, struct xk_dinode **copy)
{
	*copy = xk_malloc(rc->mp->g.inodesize);
	if (!*copy)
		return -ENOMEM;
	memcpy(*copy, dip, rc->mp->g.inodesize);
	if (salvage_core(rc, ino, *copy)) {
		free(*copy);
		*copy = NULL;
	}
	return 0;
}

/*
 * The quota type (XK_DQTYPE_*) the records of inode ino hold: that of
 * the first record with the dquot magic in its first block, or 0 when
 * none can be read.  0 or an operational error.
 */
static int
records_type(struct repair_ctx *rc, uint64_t ino, uint8_t *type)
{
	struct xk_mount *mp = rc->mp;
	uint32_t per = xk_dqblk_per_block(mp->g.blocksize);
	struct fork_map m = { 0 };
	struct xk_dinode *dip;
	struct xk_buf *bp;
	int err;

	*type = 0;
	err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip);
	if (err && !bp)
		return xk_err_operational(err) ? err : 0;
	err = data_extents(mp, ino, dip, &m);
	xk_buf_release(bp);
	if (err || !m.n ||
	    !xk_fsbext_valid(mp, m.v[0].startblock, 1)) {
		xk_vec_free(&m.vec);
		return xk_err_operational(err) ? err : 0;
	}
	err = xk_buf_read(mp, xk_fsb_to_daddr(mp, m.v[0].startblock),
			  mp->g.blocksize, NULL, XK_READ_NOVERIFY, &bp);
	xk_vec_free(&m.vec);
	if (err)
		return xk_err_operational(err) ? err : 0;
	for (uint32_t j = 0; j < per && !*type; j++) {
		const struct xk_disk_dquot *q = (const void *)
			(bp->data + j * sizeof(struct xk_dqblk));

		if (xk_be16_get(q->d_magic) == XK_DQUOT_MAGIC)
			*type = q->d_type & XK_DQTYPE_REC_MASK;
	}
	xk_buf_release(bp);
	return 0;
}

/*
 * A quota inode number that names another inode of the superblock's:
 *  1. the root directory, or the realtime bitmap or summary inode: the
 *     quota pointer is what is wrong (that inode is never a quota file);
 *  2. the inode of another quota type: it belongs to the type whose
 *     records it holds, the others forget it (neither can be repaired
 *     into the other's file: each pass would rewrite the records).
 * Returns 1 when type t's inode was planned as lost, 0 when it is its
 * own, or an operational error.
 */
static int
check_qinode_shared(struct repair_ctx *rc, struct qtype *qt, int t)
{
	const struct xk_sb *sb = &rc->mp->sb;
	uint64_t ino = qt[t].ino;
	const char *use = ino == sb->rootino ? "the root directory" :
			  ino == sb->rbmino ? "the realtime bitmap inode" :
			  ino == sb->rsumino ? "the realtime summary inode" :
			  NULL;
	uint8_t owner;
	int u, err;

	if (use) {
		report_lost(rc, &qt[t], XK_NO_DADDR, "inode number", "the "
			    "superblock names %s as the %s inode", use,
			    qt[t].name);
		return 1;
	}
	for (u = 0; u < NQTYPES; u++)
		if (u != t && qt[u].ino == ino)
			break;
	if (u == NQTYPES)
		return 0;
	err = records_type(rc, ino, &owner);
	if (err)
		return err;
	if (owner == qt[t].dqtype)
		return 0;
	report_lost(rc, &qt[t], XK_NO_DADDR, "inode number", "the "
		    "superblock names it as the %s inode too, and its records "
		    "are %s", qt[u].name, owner == qt[u].dqtype ?
		    "of that type" : "of neither type");
	return 1;
}

/* Whether a directory entry names ino (rc->scan.inodes is sorted by ino). */
static int
named(const struct repair_ctx *rc, uint64_t ino)
{
	const struct inode_info *ii = inode_info_find(rc, ino);

	return ii && ii->refs != 0;
}

/*
 * The quota inode itself.  Rules:
 *  1. it can be read and is in use;
 *  2. it is a regular file;
 *  3. its size is 0 (dquot files never set it);
 *  4. its data fork maps to extents;
 *  5. it is not plainly a user's file: one that a directory names or
 *     that has permission bits (quota inodes have neither), none of
 *     whose records looks like a dquot of its type.  Not in a metadir
 *     filesystem, where /quota names it by rule and the metadata tree's
 *     checks judge its flags: one without records is an empty quota
 *     file, which the usage comparison then fills.
 * A quota inode failing 1, 2, 4 or 5 is lost for the usage comparison;
 * repair then forgets it, as xfs_repair does for 1, 2 and 4 (the inode
 * scan clears such an inode).  A user's file (5) is left as it is: the
 * superblock pointed at it by mistake.
 */
static int
check_qinode(struct repair_ctx *rc, struct qtype *qt)
{
	struct xk_mount *mp = rc->mp;
	struct xk_buf *bp;
	struct xk_dinode *dip, *copy = NULL;
	uint16_t mode;
	int err;

	err = xk_inode_read(mp, qt->ino, XK_READ_SALVAGE, &bp, &dip);
	if (err && !bp && xk_err_operational(err))
		return err;
	if (err && !bp) {
		report_lost(rc, qt, XK_NO_DADDR, "read", "quota inode cannot "
			    "be read: %s", xk_strerror(err));
		return 0;
	}
	/*
	 * A core failing its verifier was reported by the inode scan,
	 * which keeps what salvage_core keeps: judge that, so that the
	 * superblock forgets an inode the scan frees in the same pass.
	 */
	if (err) {
		err = salvaged_copy(rc, qt->ino, dip, &copy);
		if (err) {
			xk_buf_release(bp);
			return err;
		}
		if (!copy) {
			report_lost(rc, qt, bp->daddr, "core", "quota inode's "
				    "core cannot be salvaged (the inode is "
				    "freed)");
			xk_buf_release(bp);
			return 0;
		}
		dip = copy;
	}
	mode = xk_be16_get(dip->di_mode);
	if ((mode & XK_S_IFMT) != XK_S_IFREG) {
		report_lost(rc, qt, bp->daddr, "type", "quota inode is not a "
			    "regular file (mode 0%o)", mode);
		xk_buf_release(bp);
		free(copy);
		return 0;
	}
	if (xk_be64_get(dip->di_size) &&
	    report(rc, PR_QUOTA_INODE, qt->name, -1, qt->ino, bp->daddr,
		   "size", "quota inode has size %llu, expected 0",
		   (unsigned long long)xk_be64_get(dip->di_size)))
		plan_quota(rc, qt->type, QFIX_SIZE);
	err = data_extents(mp, qt->ino, dip, &qt->map);
	xk_buf_release(bp);
	free(copy);
	if (xk_err_operational(err))
		return err;
	if (err) {
		report_lost(rc, qt, XK_NO_DADDR, "fork", "quota inode's data "
			    "fork cannot be mapped");
		return 0;
	}
	qt->usable = 1;
	err = check_blocks(rc, qt);
	if (!err && qt->usable && !qt->dq_like && !mp->g.has_metadir &&
	    (named(rc, qt->ino) || (qt->map.n && (mode & 07777)))) {
		report_lost(rc, qt, XK_NO_DADDR, "contents", "quota inode "
			    "holds no %s record and is a user's file",
			    qt->name);
		/* not ours to change */
		plan_quota_unplan(rc, qt->type, QFIX_SIZE);
		qt->usable = 0;
	}
	return err;
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

	for (size_t i = 0; i < rc->scan.ninodes; i++) {
		uint64_t ino = rc->scan.inodes[i].ino;
		struct xk_buf *bp;
		struct xk_dinode *dip;
		uint32_t ids[NQTYPES];
		uint64_t nblocks, rt = 0;
		int err;

		/* Metadata inodes are never charged (metadir). */
		if (ino == sb->uquotino || ino == sb->gquotino ||
		    ino == sb->pquotino || rc->scan.inodes[i].meta)
			continue;
		err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip);
		if (err && !bp && xk_err_operational(err)) {
			ret = err;
			break;
		}
		if (err && !bp)
			continue;	/* reported by the inode scan */
		ids[0] = xk_be32_get(dip->di_uid);
		ids[1] = xk_be32_get(dip->di_gid);
		ids[2] = xk_dinode_projid(dip);
		nblocks = xk_be64_get(dip->di_nblocks);
		if (xk_be16_get(dip->di_flags) & XK_DIFLAG_REALTIME) {
			err = rt_blocks(mp, ino, dip, &scratch, &rt);
			if (xk_err_operational(err)) {
				xk_buf_release(bp);
				ret = err;
				break;
			}
		}
		xk_buf_release(bp);
		if (rt > nblocks)
			rt = nblocks;
		for (int t = 0; t < NQTYPES; t++) {
			struct qrec *q;

			if (!qt[t].counting)
				continue;
			q = quota_tab_get(&qt[t].tab, ids[t], 1);
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
	xk_vec_free(&scratch.vec);
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
		plan_quota(rc, qt->type, QFIX_RECORDS);
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

			int err;

			if (bad_has(&qt->bad, fb))
				continue;
			err = xk_buf_read(mp, daddr, mp->g.blocksize, NULL,
					  XK_READ_NOVERIFY, &bp);
			if (xk_err_operational(err))
				return err;
			if (err)
				continue;
			for (uint32_t j = 0; j < per; j++) {
				const struct xk_dqblk *d = (const void *)
					(bp->data + j * sizeof(*d));
				const struct xk_disk_dquot *q = &d->dd_diskdq;
				uint64_t id = fb * per + j;
				struct qrec zero = { 0 }, *u;

				if (id > UINT32_MAX)
					break;
				u = quota_tab_get(&qt->tab, (uint32_t)id, 0);
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
			plan_quota(rc, qt->type, QFIX_MISSING);
	}
	return 0;
}

/*
 * On a METADIR filesystem the superblock's quota words are 0: each quota
 * file is the metadata tree's file of its metafile type (/quota/user,
 * group, project), if the tree reaches one.
 */
static uint64_t
metadir_quota_ino(struct repair_ctx *rc, uint8_t metatype)
{
	for (size_t i = 0; i < rc->scan.ninodes; i++) {
		const struct inode_info *ii = &rc->scan.inodes[i];

		if (ii->meta && ii->reached && ii->metatype == metatype)
			return ii->ino;
	}
	return XK_NULLFSINO;
}

/*
 * In: rc->scan.inodes (every inode in use).  Out: findings; in repair, the
 * state in rc->scan.quota when anything is planned (quota_apply uses it).
 */
int
phase_quota(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;
	const struct xk_sb *sb = &mp->sb;
	static const struct {
		const char	*name;
		uint8_t		dqtype;
		uint16_t	chkd;
	} types[NQTYPES] = {
		{ "user quota", XK_DQTYPE_USER, XK_UQUOTA_CHKD },
		{ "group quota", XK_DQTYPE_GROUP, XK_GQUOTA_CHKD },
		{ "project quota", XK_DQTYPE_PROJ, XK_PQUOTA_CHKD },
	};
	uint64_t inos[NQTYPES] = {
		sb->uquotino, sb->gquotino, sb->pquotino
	};
	struct quota_state *qs;
	struct qtype *qt;
	int any = 0, planned = 0, err = 0;

	quota_free(rc);
	if (!mp->g.has_quota)
		return 0;
	if (mp->g.has_metadir) {
		inos[0] = metadir_quota_ino(rc, XK_METAFILE_USRQUOTA);
		inos[1] = metadir_quota_ino(rc, XK_METAFILE_GRPQUOTA);
		inos[2] = metadir_quota_ino(rc, XK_METAFILE_PRJQUOTA);
	}
	qs = xk_calloc(1, sizeof(*qs));
	if (!qs)
		return -ENOMEM;
	qt = qs->qt;
	for (int t = 0; t < NQTYPES; t++) {
		qt[t].name = types[t].name;
		qt[t].dqtype = types[t].dqtype;
		qt[t].chkd = types[t].chkd;
		qt[t].ino = inos[t];
		qt[t].type = (unsigned int)t;
	}
	/*
	 * Unknown bits: the kernel refuses a v5 superblock with the old
	 * OQUOTA bits, and xfs_repair clears every bit it does not know.
	 */
	if ((sb->qflags & ~QFLAGS_KNOWN) &&
	    report(rc, PR_QUOTA_FLAGS, "superblock", 0, 0, XK_NO_DADDR,
		   "qflags", "quota flags 0x%x are not valid in a v5 "
		   "superblock", sb->qflags & ~QFLAGS_KNOWN))
		plan_quota_flags(rc, sb->qflags & ~QFLAGS_KNOWN);
	for (int t = 0; t < NQTYPES && !err; t++) {
		if (!qt[t].ino || qt[t].ino == XK_NULLFSINO) {
			/*
			 * The kernel makes a new, empty quota file at the
			 * next quota mount and trusts it as counted when
			 * the CHKD flag is set: its usage would be lost.
			 */
			if ((sb->qflags & qt[t].chkd) &&
			    report(rc, PR_QUOTA_FLAGS, "superblock", 0, 0,
				   XK_NO_DADDR, "qflags", "%s usage is "
				   "marked as counted, but there is no %s "
				   "inode", qt[t].name, qt[t].name))
				plan_quota(rc, (unsigned int)t, QFIX_UNCHECK);
			continue;
		}
		if (!xk_ino_valid(mp, qt[t].ino)) {
			report_lost(rc, &qt[t], XK_NO_DADDR, "inode number",
				    "the superblock's quota inode number is "
				    "not valid");
			continue;
		}
		err = check_qinode_shared(rc, qt, t);
		if (err > 0) {
			err = 0;
			continue;
		}
		if (!err)
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
	planned = rc->plan.quota_flags_clear != 0;
	for (int t = 0; t < NQTYPES; t++)
		planned |= rc->plan.quota_fix[t] != 0;
	rc->scan.quota = qs;
	if (err || rc->opt.no_modify || !planned)
		quota_free(rc);
	return err;
}
