// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Space in the builder: each AG's free extents as a sorted array, the
 * reverse mappings of everything allocated, and the allocator.
 *
 * Allocation is next-fit from a per-AG cursor, so a tree written in walk
 * order lands in ascending block order: files contiguous, directories
 * near their entries' inodes, few free extents left behind.  Every AG
 * keeps back what its commit will need (btree blocks and the AGFL), so a
 * full filesystem fails with ENOSPC at the allocation, never at commit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "write_priv.h"

int
bld_grow(void **arr, uint64_t *alloc, uint64_t need, size_t elem)
{
	uint64_t n;
	void *p;

	if (need <= *alloc)
		return 0;
	n = *alloc ? *alloc * 2 : 64;
	while (n < need)
		n *= 2;
	p = realloc(*arr, n * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*alloc = n;
	return 0;
}

/* Index of the first free extent whose start is > bno. */
static uint32_t
free_upper(const struct bld_ag *ag, uint32_t bno)
{
	uint32_t lo = 0, hi = ag->nfree;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ag->free[mid].start <= bno)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
bld_free_add(struct bld_ag *ag, uint32_t start, uint32_t len)
{
	uint32_t i;
	uint64_t alloc = ag->free_alloc;
	int err;

	if (len == 0)
		return 0;
	if ((uint64_t)start + len > ag->length)
		return -EINVAL;
	i = free_upper(ag, start);
	/* Refuse a range that overlaps free space already. */
	if (i > 0 && (uint64_t)ag->free[i - 1].start + ag->free[i - 1].len >
		     start)
		return -EEXIST;
	if (i < ag->nfree && ag->free[i].start < start + len)
		return -EEXIST;
	ag->freeblks += len;
	if (i > 0 && ag->free[i - 1].start + ag->free[i - 1].len == start) {
		ag->free[i - 1].len += len;
		if (i < ag->nfree && ag->free[i].start == start + len) {
			ag->free[i - 1].len += ag->free[i].len;
			memmove(&ag->free[i], &ag->free[i + 1],
				(ag->nfree - i - 1) * sizeof(*ag->free));
			ag->nfree--;
			if (ag->cursor > i)
				ag->cursor--;
		}
		return 0;
	}
	if (i < ag->nfree && ag->free[i].start == start + len) {
		ag->free[i].start = start;
		ag->free[i].len += len;
		return 0;
	}
	err = bld_grow((void **)&ag->free, &alloc, (uint64_t)ag->nfree + 1,
		   sizeof(*ag->free));
	if (err) {
		ag->freeblks -= len;
		return err;
	}
	ag->free_alloc = (uint32_t)alloc;
	memmove(&ag->free[i + 1], &ag->free[i],
		(ag->nfree - i) * sizeof(*ag->free));
	ag->free[i].start = start;
	ag->free[i].len = len;
	ag->nfree++;
	if (ag->cursor > i)
		ag->cursor++;
	return 0;
}

int
bld_free_take(struct bld_ag *ag, uint32_t start, uint32_t len)
{
	uint32_t i = free_upper(ag, start);
	struct bld_ext *e;
	uint32_t end = start + len;
	uint64_t alloc = ag->free_alloc;
	int err;

	if (i == 0)
		return -ENOSPC;
	e = &ag->free[i - 1];
	if ((uint64_t)e->start + e->len < end)
		return -ENOSPC;
	ag->freeblks -= len;
	if (e->start == start && e->len == len) {
		memmove(e, e + 1, (ag->nfree - i) * sizeof(*e));
		ag->nfree--;
		if (ag->cursor >= i && ag->cursor > 0)
			ag->cursor--;
		return 0;
	}
	if (e->start == start) {
		e->start += len;
		e->len -= len;
		return 0;
	}
	if (e->start + e->len == end) {
		e->len -= len;
		return 0;
	}
	/* Split in two. */
	err = bld_grow((void **)&ag->free, &alloc, (uint64_t)ag->nfree + 1,
		   sizeof(*ag->free));
	if (err) {
		ag->freeblks += len;
		return err;
	}
	ag->free_alloc = (uint32_t)alloc;
	e = &ag->free[i - 1];
	memmove(e + 2, e + 1, (ag->nfree - i) * sizeof(*e));
	e[1].start = end;
	e[1].len = e->start + e->len - end;
	e->len = start - e->start;
	ag->nfree++;
	if (ag->cursor >= i)
		ag->cursor++;
	return 0;
}

int
bld_rmap_add(struct bld_ag *ag, uint32_t start, uint32_t len, uint64_t owner,
	     uint64_t offset)
{
	struct bld_rmap *r;
	int err;

	/* Extend the last mapping when this one continues it. */
	if (ag->nrmap) {
		r = &ag->rmap[ag->nrmap - 1];
		if (r->owner == owner && r->start + r->len == start &&
		    (r->offset & XK_RMAP_OFF_FLAGS) ==
		    (offset & XK_RMAP_OFF_FLAGS) &&
		    (xk_rmap_owner_is_special(owner) ||
		     (offset & XK_RMAP_OFF_BMBT_BLOCK) ||
		     (r->offset & XK_RMAP_OFF_MASK) + r->len ==
		     (offset & XK_RMAP_OFF_MASK)) &&
		    (uint64_t)r->len + len <= UINT32_MAX) {
			r->len += len;
			return 0;
		}
	}
	err = bld_grow((void **)&ag->rmap, &ag->rmap_alloc, ag->nrmap + 1,
		   sizeof(*ag->rmap));
	if (err)
		return err;
	r = &ag->rmap[ag->nrmap++];
	r->start = start;
	r->len = len;
	r->owner = owner;
	r->offset = offset;
	ag->dirty = 1;
	return 0;
}

/* Blocks of a tree holding n records when built full. */
static uint64_t
tree_blocks(const struct xk_mount *mp, enum xk_btnum bt, uint64_t n)
{
	uint64_t lvl = n ? (n + mp->g.maxrecs[bt][0] - 1) / mp->g.maxrecs[bt][0]
			 : 1;
	uint64_t total = lvl;

	while (lvl > 1) {
		lvl = (lvl + mp->g.maxrecs[bt][1] - 1) / mp->g.maxrecs[bt][1];
		total += lvl;
	}
	return total;
}

uint64_t
bld_ag_reserve(const struct xk_bld *b, const struct bld_ag *ag)
{
	const struct xk_mount *mp = b->mp;
	uint64_t r = 8;

	/* Allocations may split extents: count a few more than today. */
	r += 2 * tree_blocks(mp, XK_BT_BNO, ag->nfree + 4);
	if (mp->g.has_rmapbt)
		r += tree_blocks(mp, XK_BT_RMAP, ag->nrmap + 16);
	r += tree_blocks(mp, XK_BT_INO, ag->nchunk + 1);
	if (mp->g.has_finobt)
		r += tree_blocks(mp, XK_BT_FINO, ag->nchunk + 1);
	if (mp->g.has_reflink)
		r += 1;
	r += xk_ag_min_freelist(mp, ag->length);
	return r;
}

static uint32_t
align_up(uint32_t v, uint32_t align)
{
	if (align <= 1)
		return v;
	return (uint32_t)(((uint64_t)v + align - 1) / align * align);
}

struct bld_ext
bld_ext_usable(const struct bld_ag *ag, const struct bld_ext *e)
{
	struct bld_ext u = *e;

	if (ag->alloc_end && u.start >= ag->alloc_end)
		u.len = 0;
	else if (ag->alloc_end && u.start + u.len > ag->alloc_end)
		u.len = ag->alloc_end - u.start;
	return u;
}

/* Find a run of len at an aligned start in free[i]; returns its start. */
static int
fits(const struct bld_ag *ag, const struct bld_ext *fe, uint32_t len,
     uint32_t align, uint32_t *start)
{
	struct bld_ext u = bld_ext_usable(ag, fe);
	const struct bld_ext *e = &u;
	uint32_t s = align_up(e->start, align);

	if (s < e->start || (uint64_t)s + len > (uint64_t)e->start + e->len)
		return 0;
	*start = s;
	return 1;
}

/* Take len blocks at start and move the next-fit cursor there. */
static int
take_at(struct bld_ag *ag, uint32_t start, uint32_t len, uint32_t *agbno,
	uint32_t *got)
{
	int err = bld_free_take(ag, start, len);

	if (err)
		return err;
	ag->cursor = free_upper(ag, start);
	if (ag->cursor)
		ag->cursor--;
	*agbno = start;
	*got = len;
	return 0;
}

int
bld_alloc_in_ag(struct xk_bld *b, struct bld_ag *ag, uint32_t len,
		uint32_t minlen, uint32_t align, uint32_t *agbno, uint32_t *got)
{
	uint64_t reserve = bld_ag_reserve(b, ag) + ag->keep;
	uint32_t best = UINT32_MAX, start;

	if (ag->freeblks < reserve + minlen)
		return -ENOSPC;
	if (ag->freeblks - reserve < len)
		len = (uint32_t)(ag->freeblks - reserve);
	if (ag->cursor >= ag->nfree)
		ag->cursor = 0;
	/* Next fit: the whole length, aligned, then unaligned. */
	for (int pass = 0; pass < 2; pass++) {
		uint32_t a = pass ? 1 : align;

		if (pass && align <= 1)
			break;
		for (uint32_t n = 0; n < ag->nfree; n++) {
			uint32_t i = (ag->cursor + n) % ag->nfree;

			if (fits(ag, &ag->free[i], len, a, &start))
				return take_at(ag, start, len, agbno, got);
		}
	}
	/* No run is long enough: the longest one, if at least minlen. */
	for (uint32_t i = 0; i < ag->nfree; i++)
		if (best == UINT32_MAX ||
		    bld_ext_usable(ag, &ag->free[i]).len >
		    bld_ext_usable(ag, &ag->free[best]).len)
			best = i;
	if (best == UINT32_MAX ||
	    bld_ext_usable(ag, &ag->free[best]).len < minlen ||
	    !bld_ext_usable(ag, &ag->free[best]).len)
		return -ENOSPC;
	if (bld_ext_usable(ag, &ag->free[best]).len < len)
		len = bld_ext_usable(ag, &ag->free[best]).len;
	return take_at(ag, ag->free[best].start, len, agbno, got);
}

int
bld_alloc(struct xk_bld *b, uint32_t agno, uint32_t len, uint32_t minlen,
	  uint32_t align, uint64_t *fsbno, uint32_t *got)
{
	for (uint32_t n = 0; n < b->agcount; n++) {
		struct bld_ag *ag = &b->ags[(agno + n) % b->agcount];
		uint32_t agbno;

		if (bld_alloc_in_ag(b, ag, len, minlen, align, &agbno,
				    got) == 0) {
			*fsbno = xk_agb_to_fsb(b->mp, ag->agno, agbno);
			ag->dirty = 1;
			return 0;
		}
	}
	return -ENOSPC;
}

void
xk_bld_set_alloc_end(struct xk_bld *b, uint32_t agno, uint32_t end)
{
	if (agno < b->agcount)
		b->ags[agno].alloc_end = end;
}

void
xk_bld_set_alloc_keep(struct xk_bld *b, uint32_t agno, uint64_t keep)
{
	if (agno < b->agcount)
		b->ags[agno].keep = keep;
}

void
xk_bld_set_late_attr_forks(struct xk_bld *b, int on)
{
	b->late_forks = on;
}

int
xk_bld_alloc_blocks(struct xk_bld *b, uint32_t agno, uint32_t len,
		    uint64_t *fsbno, uint32_t *got)
{
	return bld_alloc(b, agno, len, 1, 0, fsbno, got);
}
