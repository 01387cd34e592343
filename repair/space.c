// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Space accounting.  Every scan records what it saw using AG space as a
 * claim (AG block range, owner in rmap encoding).  Claims are compact
 * extents, not per-block maps, so memory follows the amount of metadata
 * and the number of file extents, not the size of the device.
 *
 * phase_space then, per AG: sorts the claims; reports blocks claimed by
 * two owners unless both are file data on a reflink filesystem; checks
 * that the bnobt is exactly the complement of the claims and that the
 * cntbt holds the same extents; checks the AGF free-space counters;
 * compares the rmapbt with the claims, and the refcountbt with the
 * sharing the claims show.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/sort.h>

#include "repair.h"

int
claims_add(struct claims *c, uint32_t agbno, uint32_t len, uint64_t owner,
	   uint64_t offset)
{
	struct claim one = { agbno, len, owner, offset };

	return xk_vec_push(&c->vec, &one, sizeof(one));
}

/* Frees the claims; the vector stays tied to its spill context. */
void
claims_free(struct claims *c)
{
	xk_vec_free(&c->vec);
}

void
claim_agb(struct repair_ctx *rc, uint32_t agno, uint32_t agbno, uint32_t len,
	  uint64_t owner)
{
	if (agno >= rc->mp->g.agcount)
		return;
	if (claims_add(&rc->scan.ags[agno].used, agbno, len, owner, 0))
		repair_error(rc, -ENOMEM, "recording the use of AG %u's "
			     "space", agno);
}

void
claim_fsb(struct repair_ctx *rc, uint64_t fsb, uint64_t len, uint64_t owner,
	  uint64_t offset)
{
	struct xk_mount *mp = rc->mp;
	uint32_t agno = xk_fsb_to_agno(mp, fsb);

	/* Callers validated the extent; split none: extents never span AGs. */
	if (!xk_fsbext_valid(mp, fsb, len))
		return;
	if (claims_add(&rc->scan.ags[agno].used, xk_fsb_to_agbno(mp, fsb),
		       (uint32_t)len, owner, offset))
		repair_error(rc, -ENOMEM, "recording the use of AG %u's "
			     "space", agno);
}

static int
cmp_claim(const void *a, const void *b)
{
	const struct claim *x = a, *y = b;

	if (x->agbno != y->agbno)
		return x->agbno < y->agbno ? -1 : 1;
	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	if ((x->offset & ~XK_RMAP_OFF_UNWRITTEN) !=
	    (y->offset & ~XK_RMAP_OFF_UNWRITTEN))
		return (x->offset & ~XK_RMAP_OFF_UNWRITTEN) <
		       (y->offset & ~XK_RMAP_OFF_UNWRITTEN) ? -1 : 1;
	return (x->len > y->len) - (x->len < y->len);
}

static int
cmp_extent(const void *a, const void *b)
{
	const struct claim *x = a, *y = b;

	if (x->agbno != y->agbno)
		return x->agbno < y->agbno ? -1 : 1;
	return (x->len > y->len) - (x->len < y->len);
}

/*
 * Sort claims by agbno, ties by cmp (which orders by agbno first), in
 * linear time; no copy of more than 256 MiB (qsort then).
 */
static void
sort_claims(struct claim *v, size_t n, int (*cmp)(const void *, const void *))
{
	xk_sort_by_u32(v, n, sizeof(*v), offsetof(struct claim, agbno),
		       256U << 20, cmp);
}

static const char *
owner_name(uint64_t owner, char *buf, size_t len)
{
	static const char *const special[] = {
		"null", "unknown", "fs headers", "log", "AG btrees",
		"inode btrees", "inode chunks", "refcount btree", "CoW staging",
	};

	if (xk_rmap_owner_is_special(owner))
		return special[(uint64_t)-1 - owner];
	snprintf(buf, len, "inode %llu", (unsigned long long)owner);
	return buf;
}

/* File data (not a bmbt block, not metadata): may be shared by reflink. */
static int
is_file_data(const struct claim *c)
{
	return !xk_rmap_owner_is_special(c->owner) &&
	       !(c->offset & (XK_RMAP_OFF_BMBT_BLOCK |
			      XK_RMAP_OFF_ATTR_FORK));
}

struct event {
	uint32_t	at;
	int		delta;
};

static int
cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->delta - y->delta;	/* ends before starts */
}

/*
 * The runs of file data that two or more claims share, in block order,
 * to *shared as (agbno, len, count).  0, or an operational error.
 */
static int
find_shared(const struct claims *used, struct claims *shared)
{
	const struct claim *v = used->v;
	size_t n = used->n, nev = 0;
	struct event *ev = xk_malloc(sizeof(*ev) * 2 * (n + 1));
	int depth = 0, err = 0;
	uint32_t last = 0;

	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!is_file_data(&v[i]))
			continue;
		ev[nev++] = (struct event){ v[i].agbno, 1 };
		ev[nev++] = (struct event){ v[i].agbno + v[i].len, -1 };
	}
	sort_v(ev, nev, sizeof(*ev), cmp_event);
	for (size_t i = 0; i < nev && !err; i++) {
		if (ev[i].at != last && depth >= 2) {
			struct claim *t = shared->n ?
				&shared->v[shared->n - 1] : NULL;

			if (t && t->agbno + t->len == last &&
			    t->owner == (uint64_t)depth)
				t->len += ev[i].at - last;
			else
				err = claims_add(shared, last, ev[i].at - last,
						 depth, 0);
		}
		depth += ev[i].delta;
		last = ev[i].at;
	}
	free(ev);
	return err;
}

/*
 * Overlaps.  Metadata overlapping anything is a conflict.  File data
 * overlapping file data is sharing, allowed with reflink; the sharing
 * counts go to *shared as (agbno, len, count) for the refcount check.
 */
static void
check_overlaps(struct repair_ctx *rc, uint32_t agno, struct claims *used,
	       struct claims *shared)
{
	struct claim *v = used->v;
	size_t n = used->n, reported = 0;
	uint64_t maxend = 0;
	size_t maxidx = 0;
	char b1[32], b2[32];

	for (size_t i = 0; i < n; i++) {
		uint64_t end = (uint64_t)v[i].agbno + v[i].len;

		if (i && v[i].agbno < maxend) {
			const struct claim *p = &v[maxidx];
			int ok = rc->mp->g.has_reflink && is_file_data(p) &&
				 is_file_data(&v[i]);

			if (!ok && reported++ < 20)
				report(rc, PR_SPACE_CONFLICT, "space map",
				       agno, 0, xk_agb_to_daddr(rc->mp, agno,
							       v[i].agbno),
				       "owner",
				       "AG blocks %u+%u claimed by %s and by "
				       "%s", v[i].agbno, v[i].len,
				       owner_name(p->owner, b1, sizeof(b1)),
				       owner_name(v[i].owner, b2, sizeof(b2)));
		}
		if (end > maxend) {
			maxend = end;
			maxidx = i;
		}
	}
	if (rc->mp->g.has_reflink && find_shared(used, shared))
		repair_error(rc, -ENOMEM, "finding the shared blocks of AG %u",
			     agno);
}

/*
 * The claims (owner 1) and the free extents (owner 0) in one list in
 * cmp_claim order.  Both come sorted (used by cmp_claim, freesp by
 * cmp_extent), so they are merged, free first at one agbno; only runs
 * of claims at one agbno (sharing, or damage) still need ordering by
 * length.
 */
static int
merge_used_free(const struct ag_scan *as, struct claims *all)
{
	size_t i = 0, j = 0;
	int err = 0;

	while (!err && (i < as->used.n || j < as->freesp.n)) {
		if (j < as->freesp.n && (i == as->used.n ||
		    as->freesp.v[j].agbno <= as->used.v[i].agbno)) {
			err = claims_add(all, as->freesp.v[j].agbno,
					 as->freesp.v[j].len, 0, 0);
			j++;
		} else {
			err = claims_add(all, as->used.v[i].agbno,
					 as->used.v[i].len, 1, 0);
			i++;
		}
	}
	if (err)
		return err;
	for (i = 0; i + 1 < all->n; i++) {
		j = i + 1;
		while (j < all->n && all->v[j].agbno == all->v[i].agbno)
			j++;
		if (j - i > 1)
			sort_v(&all->v[i], j - i, sizeof(*all->v), cmp_claim);
		i = j - 1;
	}
	return 0;
}

/*
 * Free space against use: the union of claims and the bnobt extents must
 * tile the AG exactly once.
 */
static void
check_free_vs_used(struct repair_ctx *rc, uint32_t agno, struct ag_scan *as)
{
	struct xk_mount *mp = rc->mp;
	uint32_t agblocks = xk_ag_blocks(mp, agno);
	struct claims all = { 0 };
	uint64_t covered = 0, cov_owner = 1;
	size_t reported = 0;

	if (merge_used_free(as, &all)) {
		claims_free(&all);
		repair_error(rc, -ENOMEM, "comparing the free and used space "
			     "of AG %u", agno);
		return;
	}
	for (size_t i = 0; i < all.n; i++) {
		const struct claim *c = &all.v[i];
		uint64_t end = (uint64_t)c->agbno + c->len;

		if (c->agbno > covered && reported++ < 20) {
			report(rc, PR_SPACE_LOST, "space map", agno, 0,
			       xk_agb_to_daddr(mp, agno, (uint32_t)covered),
			       "free space", "AG blocks %llu+%llu are neither "
			       "free nor in use",
			       (unsigned long long)covered,
			       (unsigned long long)(c->agbno - covered));
			xr_lost_space(rc, agno);
		} else if (c->agbno < covered && (c->owner == 0 ||
			 cov_owner == 0) && reported++ < 20)
			report(rc, PR_SPACE_CONFLICT, "space map", agno, 0,
			       xk_agb_to_daddr(mp, agno, c->agbno),
			       "free space", "AG blocks %u+%u are both free "
			       "and in use", c->agbno, c->len);
		if (end > covered) {
			covered = end;
			cov_owner = c->owner;
		}
	}
	if (covered < agblocks && reported++ < 20) {
		report(rc, PR_SPACE_LOST, "space map", agno, 0,
		       xk_agb_to_daddr(mp, agno, (uint32_t)covered),
		       "free space", "AG blocks %llu+%llu at the end of the "
		       "AG are neither free nor in use",
		       (unsigned long long)covered,
		       (unsigned long long)(agblocks - covered));
		xr_lost_space(rc, agno);
	}
	claims_free(&all);
}

/* bnobt and cntbt hold the same extents; the AGF sums them right. */
static void
check_free_trees(struct repair_ctx *rc, uint32_t agno, struct ag_scan *as)
{
	uint64_t total = 0;
	uint32_t longest = 0;

	if (as->trees_ok[XK_BT_BNO] && as->trees_ok[XK_BT_CNT]) {
		int same = as->freesp.n == as->cntsp.n;

		sort_claims(as->cntsp.v, as->cntsp.n, cmp_extent);
		for (size_t i = 0; same && i < as->freesp.n; i++)
			same = as->freesp.v[i].agbno == as->cntsp.v[i].agbno &&
			       as->freesp.v[i].len == as->cntsp.v[i].len;
		if (!same)
			report(rc, PR_CNTBT_MISMATCH, "cntbt", agno, 0,
			       XK_NO_DADDR, "records", "the cntbt's %zu "
			       "extents differ from the bnobt's %zu",
			       as->cntsp.n, as->freesp.n);
	}
	if (!as->agf_ok || !as->trees_ok[XK_BT_BNO])
		return;
	for (size_t i = 0; i < as->freesp.n; i++) {
		total += as->freesp.v[i].len;
		if (as->freesp.v[i].len > longest)
			longest = as->freesp.v[i].len;
	}
	if (total != as->agf_freeblks)
		report(rc, PR_AGF_COUNTER, "AGF", agno, 0,
		       xk_ag_hdr_daddr(rc->mp, agno, XK_AGF_SECTOR),
		       "freeblks", "AGF says %u free blocks, the bnobt holds "
		       "%llu", as->agf_freeblks, (unsigned long long)total);
	if (longest != as->agf_longest)
		report(rc, PR_AGF_COUNTER, "AGF", agno, 0,
		       xk_ag_hdr_daddr(rc->mp, agno, XK_AGF_SECTOR),
		       "longest", "AGF says the longest free extent is %u, "
		       "the bnobt's is %u", as->agf_longest, longest);
}

/* Two records describe one mapping if the second continues the first. */
static int
mergeable(const struct claim *a, const struct claim *b)
{
	if (a->owner != b->owner || a->agbno + a->len != b->agbno)
		return 0;
	if (xk_rmap_owner_is_special(a->owner))
		return 1;
	if ((a->offset & XK_RMAP_OFF_FLAGS) != (b->offset & XK_RMAP_OFF_FLAGS))
		return 0;
	if (a->offset & XK_RMAP_OFF_BMBT_BLOCK)
		return 1;
	return (a->offset & XK_RMAP_OFF_MASK) + a->len ==
	       (b->offset & XK_RMAP_OFF_MASK);
}

static void
merge_claims(struct claims *c)
{
	size_t out = 0;

	sort_claims(c->v, c->n, cmp_claim);
	for (size_t i = 0; i < c->n; i++) {
		if (out && mergeable(&c->v[out - 1], &c->v[i]))
			c->v[out - 1].len += c->v[i].len;
		else
			c->v[out++] = c->v[i];
	}
	c->n = out;
}

static void
check_rmaps(struct repair_ctx *rc, uint32_t agno, struct ag_scan *as)
{
	struct claims want = { 0 };
	size_t i = 0, j = 0, reported = 0;
	char b1[32];

	for (size_t k = 0; k < as->used.n; k++)
		if (claims_add(&want, as->used.v[k].agbno, as->used.v[k].len,
			       as->used.v[k].owner, as->used.v[k].offset)) {
			claims_free(&want);
			repair_error(rc, -ENOMEM, "comparing the rmapbt of AG "
				     "%u with the space in use", agno);
			return;
		}
	merge_claims(&want);
	merge_claims(&as->rmaps);
	while ((i < want.n || j < as->rmaps.n) && reported < 20) {
		int c = i >= want.n ? 1 : j >= as->rmaps.n ? -1 :
			cmp_claim(&want.v[i], &as->rmaps.v[j]);

		if (c == 0 && want.v[i].offset == as->rmaps.v[j].offset) {
			i++, j++;
			continue;
		}
		if (c <= 0 && i < want.n) {
			const struct claim *w = &want.v[i];

			report(rc, PR_RMAP_MISMATCH, "rmapbt", agno,
			       xk_rmap_owner_is_special(w->owner) ? 0 :
			       w->owner, xk_agb_to_daddr(rc->mp, agno,
							 w->agbno),
			       "missing", "no record for AG blocks %u+%u "
			       "owned by %s (offset 0x%llx)", w->agbno, w->len,
			       owner_name(w->owner, b1, sizeof(b1)),
			       (unsigned long long)w->offset);
			i++;
		} else {
			const struct claim *r = &as->rmaps.v[j];

			report(rc, PR_RMAP_MISMATCH, "rmapbt", agno,
			       xk_rmap_owner_is_special(r->owner) ? 0 :
			       r->owner, xk_agb_to_daddr(rc->mp, agno,
							 r->agbno),
			       "extra", "record for AG blocks %u+%u owned by "
			       "%s (offset 0x%llx) matches nothing in use",
			       r->agbno, r->len,
			       owner_name(r->owner, b1, sizeof(b1)),
			       (unsigned long long)r->offset);
			/* An old tree of a header xfs_repair said it reset. */
			if (xk_rmap_owner_is_special(r->owner))
				xr_lost_space(rc, agno);
			j++;
		}
		reported++;
	}
	claims_free(&want);
}

static void
check_refcounts(struct repair_ctx *rc, uint32_t agno, struct ag_scan *as,
		struct claims *shared)
{
	struct claims have = { 0 };
	size_t i = 0, j = 0, reported = 0;

	for (size_t k = 0; k < as->refcs.n; k++)
		if (!(as->refcs.v[k].agbno & XK_REFC_COWFLAG) &&
		    claims_add(&have, as->refcs.v[k].agbno,
			       as->refcs.v[k].len, as->refcs.v[k].owner, 0)) {
			claims_free(&have);
			repair_error(rc, -ENOMEM, "comparing the refcountbt "
				     "of AG %u with the sharing seen", agno);
			return;
		}
	while ((i < shared->n || j < have.n) && reported < 20) {
		const struct claim *s = i < shared->n ? &shared->v[i] : NULL;
		const struct claim *h = j < have.n ? &have.v[j] : NULL;

		if (s && h && s->agbno == h->agbno && s->len == h->len &&
		    s->owner == h->owner) {
			i++, j++;
			continue;
		}
		if (s && (!h || s->agbno <= h->agbno)) {
			report(rc, PR_REFCOUNT_MISMATCH, "refcountbt", agno, 0,
			       xk_agb_to_daddr(rc->mp, agno, s->agbno),
			       "refcount", "AG blocks %u+%u are shared %llu "
			       "times; the refcountbt %s", s->agbno, s->len,
			       (unsigned long long)s->owner,
			       h && h->agbno == s->agbno ? "disagrees" :
			       "has no record");
			i++;
			if (h && h->agbno == s->agbno)
				j++;
		} else {
			report(rc, PR_REFCOUNT_MISMATCH, "refcountbt", agno, 0,
			       xk_agb_to_daddr(rc->mp, agno, h->agbno),
			       "refcount", "record for AG blocks %u+%u (count "
			       "%llu) matches no sharing", h->agbno, h->len,
			       (unsigned long long)h->owner);
			j++;
		}
		reported++;
	}
	claims_free(&have);
}

/* One AG's cross-checks; findings go to rc->out. */
static void
space_ag(struct repair_ctx *rc, uint32_t agno)
{
	struct ag_scan *as = &rc->scan.ags[agno];
	struct claims shared = { 0 };

	sort_claims(as->used.v, as->used.n, cmp_claim);
	sort_claims(as->freesp.v, as->freesp.n, cmp_extent);
	check_overlaps(rc, agno, &as->used, &shared);
	if (as->trees_ok[XK_BT_BNO] && !rc->found.error)
		check_free_vs_used(rc, agno, as);
	check_free_trees(rc, agno, as);
	if (rc->mp->g.has_rmapbt && as->trees_ok[XK_BT_RMAP] && !rc->found.error)
		check_rmaps(rc, agno, as);
	if (rc->mp->g.has_reflink && as->trees_ok[XK_BT_REFC] && !rc->found.error)
		check_refcounts(rc, agno, as, &shared);
	claims_free(&shared);
}

/*
 * The AGs' cross-checks in parallel.  Each worker takes the next AG not
 * yet taken and reports into that AG's own buffer, through a copy of the
 * context with its own counts; the buffers are printed in AG order
 * afterwards, so the output is the same for any number of threads.  The
 * checks of one AG touch only that AG's lists.
 */
struct space_pool {
	struct repair_ctx	*rc;
	uint32_t		next;	/* next AG to take (atomic) */
	char			**bufs;	/* per AG */
	size_t			*lens;
	uint8_t			*done;	/* per AG: bufs[] holds it */
	int			*errs;	/* per AG: its operational error */
	char			(*whats)[160];	/* and what it was doing */
	unsigned long		(*counts)[PR_NR];	/* by AG */
	struct workers_done	*exited;	/* workers that returned */
};

static void *
space_worker(void *arg)
{
	struct space_pool *pool = arg;
	uint32_t agcount = pool->rc->mp->g.agcount;
	uint32_t agno;

	while ((agno = __atomic_fetch_add(&pool->next, 1,
					  __ATOMIC_RELAXED)) < agcount) {
		const struct repair_ctx *rc = pool->rc;
		/*
		 * The run's handle, options and scan (read only here); its
		 * own findings.  The space checks plan nothing.
		 */
		struct repair_ctx ctx = {
			.mp = rc->mp, .opt = rc->opt, .pass = rc->pass,
			.from_secondary = rc->from_secondary,
			.phase_what = rc->phase_what,
			.cache_bytes = rc->cache_bytes, .spill = rc->spill,
			.scan = rc->scan,
		};

		/* Its findings go to a buffer: no live line to clear. */
		ctx.opt.progress = 0;
		/* Without a buffer, the AG is left to the serial pass. */
		ctx.out = open_memstream(&pool->bufs[agno], &pool->lens[agno]);
		if (!ctx.out)
			continue;
		space_ag(&ctx, agno);
		xr_flush(&ctx);		/* a finding held for xfs_repair's words */
		fclose(ctx.out);
		memcpy(pool->counts[agno], ctx.found.counts,
		       sizeof(ctx.found.counts));
		pool->errs[agno] = ctx.found.error;
		memcpy(pool->whats[agno], ctx.found.error_what,
		       sizeof(ctx.found.error_what));
		pool->done[agno] = 1;
		meter_add(pool->rc, 1);
	}
	/* (Also counted when none could start and the parent ran it.) */
	if (pool->exited)
		workers_done_add(pool->exited);
	return NULL;
}

static int
space_parallel(struct repair_ctx *rc, unsigned int n)
{
	uint32_t agcount = rc->mp->g.agcount;
	struct space_pool pool = { .rc = rc };
	struct workers_done done = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	pthread_t *tids = xk_calloc(n, sizeof(*tids));
	unsigned int started = 0;
	int err = 0;

	pool.bufs = xk_calloc(agcount, sizeof(*pool.bufs));
	pool.lens = xk_calloc(agcount, sizeof(*pool.lens));
	pool.counts = xk_calloc(agcount, sizeof(*pool.counts));
	pool.done = xk_calloc(agcount, 1);
	pool.errs = xk_calloc(agcount, sizeof(*pool.errs));
	pool.whats = xk_calloc(agcount, sizeof(*pool.whats));
	if (!tids || !pool.bufs || !pool.lens || !pool.counts || !pool.done ||
	    !pool.errs || !pool.whats) {
		err = -ENOMEM;
		goto out;
	}
	pool.exited = &done;
	for (unsigned int i = 0; i < n; i++)
		if (!xk_fault(XK_FAULT_THREAD) &&
		    !pthread_create(&tids[i], NULL, space_worker, &pool))
			started++;
	/* Threads that could not start leave their AGs to the others. */
	if (!started)
		space_worker(&pool);
	/* The workers count into rc's meter; this thread draws it. */
	workers_done_wait(&done, started, rc);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	for (uint32_t agno = 0; agno < agcount && !rc->found.error; agno++) {
		if (!pool.done[agno]) {
			space_ag(rc, agno);
			meter_add(rc, 1);
			continue;
		}
		if (pool.errs[agno]) {
			repair_error(rc, pool.errs[agno], "%s",
				     pool.whats[agno]);
			break;
		}
		if (pool.lens[agno]) {
			live_clear(rc);
			fwrite(pool.bufs[agno], 1, pool.lens[agno], rc->out);
		}
		for (int k = 0; k < PR_NR; k++) {
			rc->found.counts[k] += pool.counts[agno][k];
			rc->found.nproblems += pool.counts[agno][k];
		}
	}
out:
	for (uint32_t agno = 0; pool.bufs && agno < agcount; agno++)
		free(pool.bufs[agno]);
	free(pool.bufs);
	free(pool.lens);
	free(pool.counts);
	free(pool.done);
	free(pool.errs);
	free(pool.whats);
	free(tids);
	return err;
}

/*
 * The owners (inode numbers) of the file data claims of agno that lie in
 * a shared run, onto *inos.  The claims are in block order (space_ag
 * sorted them), as are the runs.
 */
static int
shared_owners(struct repair_ctx *rc, uint32_t agno, struct xk_vec *inos)
{
	const struct claims *used = &rc->scan.ags[agno].used;
	struct claims shared = { 0 };
	int err = find_shared(used, &shared);
	size_t r = 0;

	for (size_t i = 0; i < used->n && !err; i++) {
		const struct claim *c = &used->v[i];

		if (!is_file_data(c))
			continue;
		while (r < shared.n &&
		       shared.v[r].agbno + shared.v[r].len <= c->agbno)
			r++;
		if (r < shared.n && shared.v[r].agbno < c->agbno + c->len)
			err = xk_vec_push(inos, &c->owner, sizeof(c->owner));
	}
	claims_free(&shared);
	return err;
}

/*
 * Every regular file with data in a shared run carries the reflink flag:
 * the kernel shares only such files' blocks, and unshares on write only
 * where it is set.  xfs_repair sets a missing one ("setting reflink flag
 * on inode N"); an exchange-range of written parts (the kernel moves
 * the flags though only some blocks move) leaves one missing.  Serial,
 * after the AGs' checks: it plans fixes.
 */
static int
check_reflink_flags(struct repair_ctx *rc)
{
	XK_VEC_OF(uint64_t) inos = { 0 };
	int err = 0;

	for (uint32_t agno = 0; agno < rc->mp->g.agcount && !err; agno++)
		if (rc->scan.ags[agno].trees_ok[XK_BT_REFC])
			err = shared_owners(rc, agno, &inos.vec);
	sort_v(inos.v, inos.n, sizeof(*inos.v), cmp_u64);
	for (size_t k = 0; k < inos.n && !err; k++) {
		struct xk_dinode *dip;
		struct xk_buf *bp;
		uint64_t flags2;

		if (k && inos.v[k] == inos.v[k - 1])
			continue;
		err = xk_inode_read(rc->mp, inos.v[k], 0, &bp, &dip);
		if (err) {
			/* The inode phase judged an unreadable inode. */
			err = xk_err_operational(err) ? err : 0;
			continue;
		}
		flags2 = xk_be64_get(dip->di_flags2);
		if ((xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFREG &&
		    !(flags2 & XK_DIFLAG2_REFLINK) &&
		    report(rc, PR_INODE_BAD, "inode", -1, inos.v[k], bp->daddr,
			   "flags2", "shares blocks with another file but "
			   "lacks the reflink flag (setting reflink flag on "
			   "inode %llu)", (unsigned long long)inos.v[k]))
			plan_inode(rc, inos.v[k], IFIX_FLAGS2,
				   flags2 | XK_DIFLAG2_REFLINK);
		xk_buf_release(bp);
	}
	xk_vec_free(&inos.vec);
	return err ? repair_error(rc, err, "checking the reflink flags of "
				  "files with shared blocks") : 0;
}

int
phase_space(struct repair_ctx *rc)
{
	unsigned int n = rc->opt.threads;

	if (n > rc->mp->g.agcount)
		n = rc->mp->g.agcount;
	/*
	 * JSON keeps one stream of objects: one thread writes it.  Without
	 * memory for the pool, the AGs are checked here one by one.
	 */
	if (n <= 1 || rc->opt.json || space_parallel(rc, n)) {
		for (uint32_t agno = 0;
		     agno < rc->mp->g.agcount && !rc->found.error; agno++) {
			space_ag(rc, agno);
			meter_add(rc, 1);
			meter_show(rc, 0);
		}
	}
	if (!rc->found.error && rc->mp->g.has_reflink)
		check_reflink_flags(rc);
	return rc->found.error;
}
