// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The quota check's state that its repair reads too (phase_quota.h): the
 * usage tables, the rules a dquot record must follow, and freeing it all.
 * Kept apart from the check (phase_quota.c) and the fix (quotafix.c) so
 * that neither calls into the other.
 */
#include <string.h>

#include "phase_quota.h"

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

	nt.v = xk_calloc(nt.cap, sizeof(*nt.v));
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

struct qrec *
quota_tab_get(struct qtab *t, uint32_t id, int add)
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

/*
 * The first rule a record breaks, in the order xfs_repair reports them:
 *  1. the record's CRC;
 *  2. its UUID is the filesystem's metadata UUID;
 *  3. magic "DQ" and version 1;
 *  4. no unknown d_type bits and exactly the quota type of its file;
 *  5. the bigtime flag only on bigtime filesystems, and never on id 0;
 *  6. d_id is the id its position in the file stands for;
 *  7. for ids other than 0, a count over its soft limit has a timer.
 */
const char *
quota_record_problem(struct xk_mount *mp, const struct qtype *qt,
		     const struct xk_dqblk *d, uint32_t id, char *why,
		     size_t whylen)
{
	const struct xk_disk_dquot *q = &d->dd_diskdq;

	if (!xk_cksum_ok(d, sizeof(*d), XK_DQUOT_CRC_OFF)) {
		snprintf(why, whylen, "bad CRC");
		return "crc";
	}
	if (memcmp(d->dd_uuid, mp->meta_uuid, 16)) {
		snprintf(why, whylen, "UUID is not the filesystem's");
		return "uuid";
	}
	if (xk_be16_get(q->d_magic) != XK_DQUOT_MAGIC) {
		snprintf(why, whylen, "magic 0x%04x",
			 xk_be16_get(q->d_magic));
		return "magic";
	}
	if (q->d_version != XK_DQUOT_VERSION) {
		snprintf(why, whylen, "version %u", q->d_version);
		return "version";
	}
	if ((q->d_type & ~XK_DQTYPE_ANY) ||
	    (q->d_type & XK_DQTYPE_REC_MASK) != qt->dqtype) {
		snprintf(why, whylen, "type 0x%x, expected 0x%x",
			 q->d_type, qt->dqtype);
		return "type";
	}
	if ((q->d_type & XK_DQTYPE_BIGTIME) &&
	    (!mp->g.has_bigtime || !id)) {
		snprintf(why, whylen, "bigtime timers %s",
			 id ? "without the bigtime feature" :
			 "on the id 0 record");
		return "bigtime";
	}
	if (xk_be32_get(q->d_id) != id) {
		snprintf(why, whylen, "record holds id %u",
			 xk_be32_get(q->d_id));
		return "id";
	}
	if (id &&
	    ((xk_be64_get(q->d_blk_softlimit) &&
	      !xk_be32_get(q->d_btimer) &&
	      xk_be64_get(q->d_bcount) > xk_be64_get(q->d_blk_softlimit)) ||
	     (xk_be64_get(q->d_ino_softlimit) &&
	      !xk_be32_get(q->d_itimer) &&
	      xk_be64_get(q->d_icount) > xk_be64_get(q->d_ino_softlimit)) ||
	     (xk_be64_get(q->d_rtb_softlimit) &&
	      !xk_be32_get(q->d_rtbtimer) &&
	      xk_be64_get(q->d_rtbcount) >
	      xk_be64_get(q->d_rtb_softlimit)))) {
		snprintf(why, whylen, "over a soft limit with no timer");
		return "timer";
	}
	return NULL;
}

static void
qtype_free(struct qtype *qt)
{
	xk_vec_free(&qt->map.vec);
	xk_vec_free(&qt->bad.vec);
	free(qt->tab.v);
}

void
quota_free(struct repair_ctx *rc)
{
	if (!rc->scan.quota)
		return;
	for (int t = 0; t < NQTYPES; t++)
		qtype_free(&rc->scan.quota->qt[t]);
	free(rc->scan.quota);
	rc->scan.quota = NULL;
}
