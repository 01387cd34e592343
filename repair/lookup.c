// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Lookups in what the scan recorded, for the checks and the repairs
 * alike: the inode and entry lists (ordered in place, searched by inode
 * number), a fork's extent map, whether the rmapbt can be trusted.
 * Kept out of the phases so that no repair step calls into a check.
 */
#include <stddef.h>
#include <stdlib.h>

#include "repair.h"

/*
 * Ordering the lists in place.  The scan hands over each worker's list
 * whole, and each is in inode order, so a list is a few ordered runs:
 * worker 0's AGs, then worker 1's.  Merging the runs in place (by
 * rotations, as a stable merge without a buffer does) costs a few passes
 * over the list and no memory, where a qsort took a tenth of the check's
 * time and a second copy of the list.  Both lists are ordered by their
 * leading 64-bit field (an inode's number, an entry's parent); elements
 * are moved as 64-bit words.
 */
_Static_assert(offsetof(struct inode_info, ino) == 0 &&
	       offsetof(struct edge, parent) == 0 &&
	       sizeof(struct inode_info) % 8 == 0 &&
	       sizeof(struct edge) % 8 == 0,
	       "the lists are ordered by a leading 64-bit key");

struct seq {
	uint64_t	*w;		/* the list as words */
	size_t		words;		/* words per element */
	struct xk_vec_spill *sp;		/* the list's, to poll (or NULL) */
};

/* Every so many elements moved or read: see lists_poll. */
static void
seq_poll(const struct seq *s, size_t count)
{
	if (s->sp && !(count & LISTS_POLL_MASK))
		xk_vec_spill_poll(s->sp);
}

static uint64_t
key(const struct seq *s, size_t i)
{
	return s->w[i * s->words];
}

static void
reverse(const struct seq *s, size_t lo, size_t hi)
{
	size_t k = s->words, count = 0;

	while (hi > lo + 1) {
		uint64_t *a = &s->w[lo++ * k], *b = &s->w[--hi * k];

		seq_poll(s, ++count);
		for (size_t j = 0; j < k; j++) {
			uint64_t t = a[j];

			a[j] = b[j];
			b[j] = t;
		}
	}
}

/* [lo, mid) [mid, hi) -> [mid, hi) [lo, mid); returns the new middle. */
static size_t
rotate(const struct seq *s, size_t lo, size_t mid, size_t hi)
{
	if (lo == mid || mid == hi)
		return lo == mid ? hi : lo;
	reverse(s, lo, mid);
	reverse(s, mid, hi);
	reverse(s, lo, hi);
	return lo + (hi - mid);
}

/* First index in [lo, hi) whose key is >= k (> k if upper). */
static size_t
bound(const struct seq *s, size_t lo, size_t hi, uint64_t k, int upper)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t m = key(s, mid);

		if (m < k || (upper && m == k))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Stable merge of the ordered [lo, mid) and [mid, hi), in place. */
static void
merge_in_place(const struct seq *s, size_t lo, size_t mid, size_t hi)
{
	size_t cut1, cut2, nmid;

	/* Already in order: the usual case at a run's end. */
	if (lo == mid || mid == hi || key(s, mid - 1) <= key(s, mid))
		return;
	if (hi - lo == 2) {
		reverse(s, lo, hi);
		return;
	}
	if (mid - lo > hi - mid) {
		cut1 = lo + (mid - lo) / 2;
		cut2 = bound(s, mid, hi, key(s, cut1), 0);
	} else {
		cut2 = mid + (hi - mid) / 2;
		cut1 = bound(s, lo, mid, key(s, cut2), 1);
	}
	nmid = rotate(s, cut1, mid, cut2);
	merge_in_place(s, lo, cut1, nmid);
	merge_in_place(s, nmid, cut2, hi);
}

/* End of the ordered run that starts at lo. */
static size_t
run_end(const struct seq *s, size_t lo, size_t n)
{
	size_t i = lo + 1;

	while (i < n && key(s, i - 1) <= key(s, i))
		seq_poll(s, ++i);
	return i;
}

/*
 * Sort a list made of ordered runs by its leading key: merge pairs of
 * neighbouring runs until one is left.  Stable, so the entries of one
 * directory keep their order whatever the thread count.
 */
static void
order_runs(void *base, size_t n, size_t size, struct xk_vec_spill *sp)
{
	struct seq s = { base, size / 8, sp };

	if (n < 2 || run_end(&s, 0, n) == n)
		return;
	for (;;) {
		size_t lo = 0, runs = 0;

		while (lo < n) {
			size_t mid = run_end(&s, lo, n), hi;

			runs++;
			if (mid == n)
				break;
			hi = run_end(&s, mid, n);
			merge_in_place(&s, lo, mid, hi);
			lo = hi;
		}
		if (runs == 1)
			break;
	}
}

void
inodes_order(struct repair_ctx *rc)
{
	order_runs(rc->scan.inodes, rc->scan.ninodes, sizeof(*rc->scan.inodes),
		   rc->scan.inode_vec.map ? rc->spill : NULL);
}

/*
 * The inode of a number, starting from where the last lookup ended: a
 * directory's entries mostly name consecutive inodes, so the next one is
 * usually the very next slot.  Else a plain binary search (no comparison
 * callback: this runs once per directory entry).
 */
struct inode_info *
inode_info_find_from(struct repair_ctx *rc, uint64_t ino, size_t *hint)
{
	size_t h = *hint, lo = 0, hi = rc->scan.ninodes;

	if (h + 1 < rc->scan.ninodes && rc->scan.inodes[h + 1].ino == ino) {
		*hint = h + 1;
		return &rc->scan.inodes[h + 1];
	}
	if (h < rc->scan.ninodes && rc->scan.inodes[h].ino == ino)
		return &rc->scan.inodes[h];
	search_poll(rc);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rc->scan.inodes[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < rc->scan.ninodes && rc->scan.inodes[lo].ino == ino) {
		*hint = lo;
		return &rc->scan.inodes[lo];
	}
	return NULL;
}

struct inode_info *
inode_info_find(const struct repair_ctx *rc, uint64_t ino)
{
	size_t hint = 0;

	return inode_info_find_from((struct repair_ctx *)rc, ino, &hint);
}

void
edges_order(struct repair_ctx *rc)
{
	order_runs(rc->scan.edges, rc->scan.nedges, sizeof(*rc->scan.edges),
		   rc->scan.edge_vec.map ? rc->spill : NULL);
}


uint64_t
fork_map_lookup(const struct fork_map *map, uint64_t off, uint64_t *contig)
{
	for (size_t i = 0; i < map->n; i++) {
		const struct xk_bmbt_irec *r = &map->v[i];

		if (off >= r->startoff && off < r->startoff + r->blockcount) {
			*contig = r->startoff + r->blockcount - off;
			return r->startblock + (off - r->startoff);
		}
	}
	*contig = 0;
	return XK_NULLFSBLOCK;
}

/* The rmapbt of every AG was read whole: its records can be trusted. */
int
rmaps_usable(const struct repair_ctx *rc)
{
	if (!rc->mp->g.has_rmapbt)
		return 0;
	for (uint32_t agno = 0; agno < rc->mp->g.agcount; agno++)
		if (!rc->scan.ags[agno].trees_ok[XK_BT_RMAP])
			return 0;
	return 1;
}

static int
cmp_agino_chunk(const void *key, const void *elem)
{
	uint32_t agino = *(const uint32_t *)key;
	uint32_t start = xk_be32_get(
		((const struct xk_inobt_rec *)elem)->ir_startino);

	if (agino < start)
		return -1;
	return agino >= start + XK_INODES_PER_CHUNK;
}

int
scan_saw_inode(const struct repair_ctx *rc, uint64_t ino)
{
	const struct xk_mount *mp = rc->mp;
	uint32_t agno = xk_ino_to_agno(mp, ino), agino;
	const struct ag_scan *as;

	if (!xk_ino_valid(mp, ino) || !rc->scan.ags || agno >= mp->g.agcount)
		return 0;
	as = &rc->scan.ags[agno];
	agino = xk_ino_to_agino(mp, ino);
	return as->chunks.n && bsearch(&agino, as->chunks.v, as->chunks.n,
				       sizeof(*as->chunks.v), cmp_agino_chunk);
}

/* The scan saw ino free: the AG rebuild is fed it in use. */
void
mark_in_use(struct repair_ctx *rc, uint64_t ino)
{
	struct xk_mount *mp = rc->mp;
	struct ag_scan *as = &rc->scan.ags[xk_ino_to_agno(mp, ino)];
	uint32_t agino = xk_ino_to_agino(mp, ino);

	if (!as->seen_free)
		return;
	for (size_t i = 0; i < as->chunks.n; i++) {
		uint32_t start = xk_be32_get(as->chunks.v[i].ir_startino);

		if (agino >= start && agino < start + XK_INODES_PER_CHUNK)
			as->seen_free[i] &= ~(1ULL << (agino - start));
	}
}

/* The blocks of one fork of ino (extents and bmbt) the scan claimed. */
uint64_t
fork_blocks_claimed(const struct repair_ctx *rc, uint64_t ino, int whichfork)
{
	uint64_t n = 0;

	for (uint32_t agno = 0; agno < rc->mp->g.agcount; agno++) {
		const struct claims *u = &rc->scan.ags[agno].used;

		for (size_t i = 0; i < u->n; i++)
			if (u->v[i].owner == ino &&
			    !(u->v[i].offset & XK_RMAP_OFF_ATTR_FORK) ==
			    (whichfork == XK_DATA_FORK))
				n += u->v[i].len;
	}
	return n;
}

uint64_t
attr_blocks_claimed(const struct repair_ctx *rc, uint64_t ino)
{
	return fork_blocks_claimed(rc, ino, XK_ATTR_FORK);
}
