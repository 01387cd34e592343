// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The shape of a file's bmbt as the kernel's in-place edits leave it.
 *
 * Finishing a logged exchange or mapping update changes a fork's
 * records.  Written back packed, the tree holds the same records in
 * fewer blocks than the kernel's own recovery leaves (it splits blocks
 * in half and borrows or joins one entry at a time), so the file's block
 * count and its AG's free space would differ from what a mount gives.
 * So each record insert and delete is replayed on a model of the tree
 * that keeps only how many entries every block holds, by the kernel's
 * btree rules:
 *
 *  1. Insert into a full block: move its last entry to the right
 *     sibling when that has room and the new entry does not go last;
 *     else its first entry to the left sibling when that has room and
 *     the new entry does not go first; else split it in half (an odd
 *     entry stays on the side the new one does not go to; the new one
 *     goes right only past the left half's end) and insert the new
 *     block's pointer after the old one's in the parent.
 *  2. The root lives in the inode: it grows while the fork has room,
 *     then its entries move into a new block below a one-entry root.
 *  3. Delete leaving a block under half full: take the right sibling's
 *     first entry when it stays at least half full, else the left
 *     sibling's last; else join the block into its left sibling, else
 *     the right sibling into it, when both fit one block, and delete
 *     the emptied block's pointer from the parent.
 *  4. A root left with one child node takes the child's entries when
 *     they fit the inode (never a leaf's: rule 5 deals with those).
 *  5. After each mapping or unmapping call the fork becomes a btree (one
 *     leaf) when its records outgrow the inode, and extents again when
 *     they fit and the root has a single leaf.
 *
 * Records are addressed by their index in the fork's sorted list.  A
 * key lookup for a new record descends, at each level, to the last
 * child whose first record comes before it: that is the last leaf
 * starting before the new record's index.  Siblings are the neighbours
 * on the same level, whatever their parents, as the kernel's sibling
 * pointers are.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "write_priv.h"

void
bld_bshape_init(struct bld_bshape *s, uint32_t lmax, uint32_t nmax,
		uint32_t fork_bytes)
{
	memset(s, 0, sizeof(*s));
	s->lmax = lmax;
	s->nmax = nmax;
	s->imax = fork_bytes > 4 ? (fork_bytes - 4) / 16 : 0;
	s->maxext = fork_bytes / 16;
	if (lmax < 4 || nmax < 4 || s->imax < 1 || s->imax >= nmax)
		s->lost = 1;
}

void
bld_bshape_free(struct bld_bshape *s)
{
	for (unsigned int l = 0; l < XK_BTREE_MAXLEVELS; l++)
		free(s->cnt[l]);
	memset(s->cnt, 0, sizeof(s->cnt));
	memset(s->n, 0, sizeof(s->n));
	memset(s->cap, 0, sizeof(s->cap));
	s->levels = 0;
}

/* Insert a block holding cnt entries at index at of level l. */
static int
bs_ins_block(struct bld_bshape *s, unsigned int l, uint64_t at, uint32_t cnt)
{
	if (s->n[l] == s->cap[l]) {
		uint64_t cap = s->cap[l] ? s->cap[l] * 2 : 8;
		uint32_t *p = realloc(s->cnt[l], cap * sizeof(*p));

		if (!p) {
			s->lost = 1;
			return -ENOMEM;
		}
		s->cnt[l] = p;
		s->cap[l] = cap;
	}
	memmove(&s->cnt[l][at + 1], &s->cnt[l][at],
		(s->n[l] - at) * sizeof(*s->cnt[l]));
	s->cnt[l][at] = cnt;
	s->n[l]++;
	return 0;
}

static void
bs_del_block(struct bld_bshape *s, unsigned int l, uint64_t at)
{
	memmove(&s->cnt[l][at], &s->cnt[l][at + 1],
		(s->n[l] - at - 1) * sizeof(*s->cnt[l]));
	s->n[l]--;
}

int
bld_bshape_add_block(struct bld_bshape *s, unsigned int level, uint32_t cnt)
{
	if (level >= XK_BTREE_MAXLEVELS) {
		s->lost = 1;
		return 0;
	}
	if (level + 1 > s->levels)
		s->levels = level + 1;
	return bs_ins_block(s, level, s->n[level], cnt) ? -ENOMEM : 0;
}

/*
 * After loading: the root (added last at the top level) and every level
 * must account for the level below, and the leaves for nrecs records.
 */
void
bld_bshape_check(struct bld_bshape *s, uint64_t nrecs)
{
	uint64_t sum;

	if (s->lost || s->levels < 2 || s->n[s->levels - 1] != 1 ||
	    s->cnt[s->levels - 1][0] > s->imax) {
		s->lost = 1;
		return;
	}
	for (unsigned int l = 0; l < s->levels; l++) {
		uint32_t max = l ? s->nmax : s->lmax;

		sum = 0;
		for (uint64_t j = 0; j < s->n[l]; j++) {
			if (s->cnt[l][j] == 0 || s->cnt[l][j] > max)
				s->lost = 1;
			sum += s->cnt[l][j];
		}
		if (sum != (l ? s->n[l - 1] : nrecs))
			s->lost = 1;
	}
}

/* The parent of block j of level l, and j's 1-based slot in it. */
static void
bs_parent(const struct bld_bshape *s, unsigned int l, uint64_t j,
	  uint64_t *pj, uint32_t *pptr)
{
	uint64_t first = 0;

	for (uint64_t k = 0; k < s->n[l + 1]; k++) {
		if (j < first + s->cnt[l + 1][k]) {
			*pj = k;
			*pptr = (uint32_t)(j - first + 1);
			return;
		}
		first += s->cnt[l + 1][k];
	}
	*pj = s->n[l + 1] - 1;		/* not reached on a checked shape */
	*pptr = s->cnt[l + 1][*pj] + 1;
}

/* The leaf holding record g, and g's 1-based slot in it. */
static int
bs_leaf_of(const struct bld_bshape *s, uint64_t g, uint64_t *b, uint32_t *p)
{
	uint64_t first = 0;

	for (uint64_t j = 0; j < s->n[0]; j++) {
		if (g < first + s->cnt[0][j]) {
			*b = j;
			*p = (uint32_t)(g - first + 1);
			return 0;
		}
		first += s->cnt[0][j];
	}
	return -1;
}

/* Where a lookup puts a record that will be number g: rule of the header. */
static void
bs_lookup(const struct bld_bshape *s, uint64_t g, uint64_t *b, uint32_t *p)
{
	uint64_t first = 0, at = 0, at_first = 0;

	for (uint64_t j = 0; j < s->n[0] && first < g; j++) {
		at = j;
		at_first = first;
		first += s->cnt[0][j];
	}
	*b = at;
	*p = (uint32_t)(g - at_first + 1);
}

/* A root node with one child takes the child's entries (rule 4). */
static void
bs_kill_iroot(struct bld_bshape *s)
{
	unsigned int top = s->levels - 1;
	uint32_t c;

	if (top <= 1 || s->cnt[top][0] != 1 || s->n[top - 1] != 1)
		return;
	c = s->cnt[top - 1][0];
	if (c > s->imax)
		return;
	free(s->cnt[top - 1]);
	s->cnt[top - 1] = s->cnt[top];
	s->n[top - 1] = 1;
	s->cap[top - 1] = s->cap[top];
	s->cnt[top - 1][0] = c;
	s->cnt[top] = NULL;
	s->n[top] = s->cap[top] = 0;
	s->levels--;
}

/* Add an entry at slot p of block j of level l (rules 1 and 2). */
static void
bs_insrec(struct bld_bshape *s, unsigned int l, uint64_t j, uint32_t p)
{
	while (!s->lost) {
		unsigned int top = s->levels - 1;
		uint32_t max = l ? s->nmax : s->lmax, n, rrecs, lrecs, pp;
		uint64_t pj;

		if (l == top) {
			if (s->cnt[l][0] < s->imax) {
				s->cnt[l][0]++;
				return;
			}
			/* The root moves into a block under a new root. */
			if (s->levels == XK_BTREE_MAXLEVELS ||
			    bs_ins_block(s, l + 1, 0, 1)) {
				s->lost = 1;
				return;
			}
			s->levels++;
			s->cnt[l][0]++;
			return;
		}
		n = s->cnt[l][j];
		if (n < max) {
			s->cnt[l][j]++;
			return;
		}
		if (j + 1 < s->n[l] && p < n && s->cnt[l][j + 1] < max) {
			s->cnt[l][j + 1]++;	/* its last entry moves right */
			return;
		}
		if (j > 0 && p > 1 && s->cnt[l][j - 1] < max) {
			s->cnt[l][j - 1]++;	/* its first entry moves left */
			return;
		}
		rrecs = n / 2;
		if ((n & 1) && p <= rrecs + 1)
			rrecs++;
		lrecs = n - rrecs;
		bs_parent(s, l, j, &pj, &pp);
		if (bs_ins_block(s, l, j + 1, rrecs))
			return;
		s->cnt[l][j] = lrecs;
		if (p > lrecs + 1)
			s->cnt[l][j + 1]++;
		else
			s->cnt[l][j]++;
		l++;
		j = pj;
		p = pp + 1;
	}
}

/* Remove an entry from block j of level l (rules 3 and 4). */
static void
bs_delrec(struct bld_bshape *s, unsigned int l, uint64_t j)
{
	while (!s->lost) {
		unsigned int top = s->levels - 1;
		uint32_t max = l ? s->nmax : s->lmax, min = max / 2;
		uint32_t lrecs = 0, rrecs = 0, pp;
		int rs, ls;
		uint64_t gone, pj;

		s->cnt[l][j]--;
		if (l == top) {
			bs_kill_iroot(s);
			return;
		}
		if (s->cnt[l][j] >= min)
			return;
		rs = j + 1 < s->n[l];
		ls = j > 0;
		if (!rs && !ls) {
			if (l + 2 == s->levels)
				bs_kill_iroot(s);
			return;
		}
		if (rs) {
			rrecs = s->cnt[l][j + 1];
			if (rrecs - 1 >= min) {
				s->cnt[l][j + 1]--;
				s->cnt[l][j]++;
				return;
			}
		}
		if (ls) {
			lrecs = s->cnt[l][j - 1];
			if (lrecs - 1 >= min) {
				s->cnt[l][j - 1]--;
				s->cnt[l][j]++;
				return;
			}
		}
		if (ls && lrecs + s->cnt[l][j] <= max) {
			s->cnt[l][j - 1] += s->cnt[l][j];
			gone = j;
		} else if (rs && rrecs + s->cnt[l][j] <= max) {
			s->cnt[l][j] += rrecs;
			gone = j + 1;
		} else {
			return;
		}
		bs_parent(s, l, gone, &pj, &pp);
		bs_del_block(s, l, gone);
		l++;
		j = pj;
	}
}

void
bld_bshape_insert(struct bld_bshape *s, uint64_t g, int after)
{
	uint64_t b;
	uint32_t p;

	if (!s->levels || s->lost)
		return;
	if (after && g > 0) {
		/* The cursor steps on from record g - 1. */
		if (bs_leaf_of(s, g - 1, &b, &p)) {
			s->lost = 1;
			return;
		}
		if (p >= s->cnt[0][b] && b + 1 < s->n[0]) {
			b++;
			p = 1;
		} else {
			p++;
		}
	} else {
		bs_lookup(s, g, &b, &p);
	}
	bs_insrec(s, 0, b, p);
}

void
bld_bshape_delete(struct bld_bshape *s, uint64_t g)
{
	uint64_t b;
	uint32_t p;

	if (!s->levels || s->lost)
		return;
	if (bs_leaf_of(s, g, &b, &p)) {
		s->lost = 1;
		return;
	}
	bs_delrec(s, 0, b);
}

void
bld_bshape_settle(struct bld_bshape *s, uint64_t nrecs)
{
	if (s->lost)
		return;
	if (!s->levels) {
		if (nrecs > s->maxext && nrecs <= s->lmax) {
			bs_ins_block(s, 0, 0, (uint32_t)nrecs);
			bs_ins_block(s, 1, 0, 1);
			s->levels = 2;
		}
		return;
	}
	if (nrecs <= s->maxext) {
		if (s->levels == 2 && s->n[0] == 1)
			bld_bshape_free(s);
		else
			s->lost = 1;
	}
}
