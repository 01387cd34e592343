// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Directories brought back from the device scan (libfs/scan.c).  A
 * directory whose inode is lost (zeroed, or cleared as unreadable) still
 * has its data blocks on disk, and each says in its header which inode
 * owns it.  When an entry of a live directory names such an inode as a
 * directory, the scan's index gives the blocks that name it as owner,
 * and the directory is written anew in the same inode slot, with the
 * entries of those blocks: its children keep their names and places
 * instead of going to /lost+found as numbers.  The same for a directory
 * in use whose block map is lost (a bmbt block gone) when the rmapbt
 * cannot give it back: the inode stays, dirfix.c rewrites it with the
 * scan's entries (reasm_find) besides those its broken map reaches.
 *
 * What is trusted, and why:
 *  - a block only when the scan accepted it (UUID, own address, CRC,
 *    structure) and it verifies again when read here, owner included:
 *    blocks of image files stored in the filesystem fail the address
 *    check even when they carry our UUID;
 *  - a block no live inode claims (but the directory itself, as data)
 *    and that the free space btree does
 *    not list as free (a directory that shrank leaves stale blocks
 *    behind, which verify but are free), and, with a usable rmapbt,
 *    one that the rmapbt gives to this inode;
 *  - an entry only when it names an inode in use: a subdirectory only
 *    when its ".." names this directory, another inode only while it
 *    has fewer names than its link count; one entry per name: where
 *    two blocks give one name to two inodes, the block written last
 *    (by their LSNs) holds the entry, the other being a stale copy a
 *    shrunk directory left where the bnobt cannot say it is free.
 *
 * The rebuilt directory joins the check pass's lists (an inode and its
 * entries; for one in use, its entries replace those of its broken map)
 * before the connectivity phase, so that the pass sees the tree as the
 * repair will leave it, with and without -n.  The repair takes back the
 * clear (or trim) of the inode and writes the directory in the AG
 * rebuild session (reasm_build.c, or dirfix.c for one in use); the old
 * blocks, claimed by nothing, become free space there.
 *
 * The scan reads the whole device: it runs only when a directory is
 * lost or blocks are neither free nor in use (-o scan=auto, the
 * default), on every run with -o scan=always, never with -o
 * scan=never.  Its index is kept for the run's later passes.  The
 * root, which no entry names, is a candidate when its inode is lost;
 * so is, once the device is scanned, any directory whose blocks name
 * an inode not in use that no entry names (find_unnamed): it is
 * written under the root and goes to /lost+found as an orphan.  On a
 * parent-pointer filesystem the children's pointers follow the entries
 * written (pptr.c); on a metadir one, no directory of the metadata tree
 * is rebuilt here, nor given a metadata inode.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dir.h>
#include <xfskit/meta.h>
#include <xfskit/scan.h>

#include "repair.h"
#include "reasm.h"

_Static_assert(offsetof(struct reasm_dir, ino) == 0,
	       "directories are sorted by their leading inode number");

/* How many entries of the pass name ino (children sorted). */
static size_t
named_count(const uint64_t *children, size_t n, uint64_t ino)
{
	size_t lo = 0, hi = n, first;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (children[mid] < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (lo < n && children[lo] == ino)
		lo++;
	return lo - first;
}

/*
 * How many files share all of agbno..agbno+len-1, as the refcountbt,
 * read whole, says: the least refcount over the range when every block
 * is in a record of a refcount of 2 or more, else 0.
 */
static uint64_t
refc_count(const struct repair_ctx *rc, uint32_t agno, uint64_t agbno,
	   uint64_t len)
{
	const struct ag_scan *as = &rc->scan.ags[agno];
	uint64_t at = agbno, end = agbno + len, least = UINT64_MAX;
	int moved = 1;

	if (!as->trees_ok[XK_BT_REFC])
		return 0;
	/* Go round while a record takes at further. */
	while (at < end && moved) {
		moved = 0;
		for (size_t i = reasm_ivl_first(rc, agno, REASM_IVL_REFC,
						&as->refcs, at + 1);
		     i-- > 0 && reasm_ivl_reaches(rc, agno, REASM_IVL_REFC,
						  &as->refcs, i, at);) {
			const struct claim *r = &as->refcs.v[i];

			if (r->owner >= 2 && r->agbno <= at &&
			    at < (uint64_t)r->agbno + r->len) {
				at = (uint64_t)r->agbno + r->len;
				if (r->owner < least)
					least = r->owner;
				moved = 1;
			}
		}
	}
	return at >= end ? least : 0;
}

/* The most sharers data_sharers tells apart; more is "too many". */
#define SHARERS_MAX	16

/*
 * How many inodes but a and b map (as file data) blocks of agbno..end-1
 * in the pass's claims; SHARERS_MAX + 1 for more than it tells apart.
 */
static unsigned int
data_sharers(const struct repair_ctx *rc, uint32_t agno, uint64_t agbno,
	     uint64_t end, uint64_t a, uint64_t b)
{
	const struct ag_scan *as = &rc->scan.ags[agno];
	uint64_t seen[SHARERS_MAX];
	unsigned int n = 0, k;

	for (size_t i = reasm_ivl_first(rc, agno, REASM_IVL_USED, &as->used,
					end);
	     i-- > 0 && reasm_ivl_reaches(rc, agno, REASM_IVL_USED,
					  &as->used, i, agbno);) {
		const struct claim *c = &as->used.v[i];

		if (c->agbno >= end || agbno >= c->agbno + c->len ||
		    c->owner == a || c->owner == b ||
		    xk_rmap_owner_is_special(c->owner) ||
		    (c->offset & (XK_RMAP_OFF_ATTR_FORK |
				  XK_RMAP_OFF_BMBT_BLOCK)))
			continue;
		for (k = 0; k < n && seen[k] != c->owner; k++)
			;
		if (k < n)
			continue;
		if (n == SHARERS_MAX)
			return SHARERS_MAX + 1;
		seen[n++] = c->owner;
	}
	return n;
}

/*
 * Whether len blocks from fsb are shared data with room for the files
 * a and b (a == b: one) beside every other inode the pass found mapping
 * them: the refcountbt's count is what they may be shared by, and a
 * stale leaf's record over reflinked blocks must not make a third.
 */
int
reasm_shared(const struct repair_ctx *rc, uint64_t fsb, uint64_t len,
	     uint64_t a, uint64_t b)
{
	uint32_t agno = xk_fsb_to_agno(rc->mp, fsb);
	uint32_t agbno = xk_fsb_to_agbno(rc->mp, fsb);
	uint64_t count;

	if (agno >= rc->mp->g.agcount || !rc->mp->g.has_reflink)
		return 0;
	count = refc_count(rc, agno, agbno, len);
	return count && data_sharers(rc, agno, agbno, agbno + len, a, b) +
			1 + (a != b) <= count;
}

/*
 * Whether claim c, owner's, is an extent that the salvaged walk of
 * owner's other fork than kind's found in a leaf, that fork being
 * damaged: a record read beyond the damage is not that fork's map yet
 * (it may be wrong: the scan may refuse its leaf), and that fork's map
 * comes from the scan too (where settle_forks sets the two forks'
 * records against each other) or goes.  Without this, a data leaf's
 * bad record over an attr value block kept the attr fork from taking
 * its own block.  The bmbt blocks the walk reached through pointers
 * stay that fork's.
 */
static int
other_fork_lost(const struct repair_ctx *rc, uint64_t owner,
		const struct claim *c, uint64_t kind)
{
	int attr = (c->offset & XK_RMAP_OFF_ATTR_FORK) != 0;
	const struct inode_info *ii;

	if ((c->offset & XK_RMAP_OFF_BMBT_BLOCK) ||
	    attr == ((kind & XK_RMAP_OFF_ATTR_FORK) != 0))
		return 0;
	ii = inode_info_find(rc, owner);
	return ii && (attr ? ii->afork_lost : ii->fork_lost);
}

/*
 * Whether blocks the scan found may be taken for owner: claimed by no
 * inode the pass read (but by owner itself, as the kind of block kind
 * says: 0 for file data, XK_RMAP_OFF_BMBT_BLOCK for its data fork's
 * bmbt, with XK_RMAP_OFF_ATTR_FORK for its attr fork, or by its other
 * fork's salvaged walk when that fork is lost too; and with shared
 * set, as file data by another inode where the refcountbt says the
 * blocks are shared), not free space in a bnobt that was read whole,
 * and with a usable rmapbt, mapped to owner there.  The claims that
 * overlap are found through the pass's index (reasm_index.c).
 */
int
reasm_block_takeable(const struct repair_ctx *rc, uint64_t daddr,
		     uint64_t blocks, uint64_t owner, uint64_t kind,
		     int shared)
{
	const struct xk_mount *mp = rc->mp;
	uint64_t fsb = daddr >> mp->g.blkbb_log;
	uint32_t agno = (uint32_t)(fsb / mp->g.agblocks);
	uint32_t agbno = (uint32_t)(fsb % mp->g.agblocks);
	uint64_t end = (uint64_t)agbno + blocks;
	const struct ag_scan *as;
	int mapped = 0;

	if (agno >= mp->g.agcount)
		return 0;
	as = &rc->scan.ags[agno];
	for (size_t i = reasm_ivl_first(rc, agno, REASM_IVL_USED, &as->used,
					end);
	     i-- > 0 && reasm_ivl_reaches(rc, agno, REASM_IVL_USED,
					  &as->used, i, agbno);) {
		const struct claim *c = &as->used.v[i];

		/* What the owner's own damaged map still reached. */
		if (c->owner == owner &&
		    (c->offset & (XK_RMAP_OFF_ATTR_FORK |
				  XK_RMAP_OFF_BMBT_BLOCK)) == kind)
			continue;
		if (c->agbno >= end || agbno >= c->agbno + c->len)
			continue;
		if (c->owner == owner && other_fork_lost(rc, owner, c, kind))
			continue;
		/* Reflinked data: the overlap is shared, by the refcountbt. */
		if (shared && mp->g.has_reflink && c->owner != owner &&
		    !xk_rmap_owner_is_special(c->owner) &&
		    !(c->offset & (XK_RMAP_OFF_ATTR_FORK |
				   XK_RMAP_OFF_BMBT_BLOCK))) {
			uint64_t from = c->agbno > agbno ? c->agbno : agbno;
			uint64_t to = (uint64_t)c->agbno + c->len < end ?
				      (uint64_t)c->agbno + c->len : end;

			if (reasm_shared(rc, xk_agb_to_fsb(mp, agno,
							   (uint32_t)from),
					 to - from, owner, owner))
				continue;
		}
		return 0;
	}
	if (as->trees_ok[XK_BT_BNO])
		for (size_t i = reasm_ivl_first(rc, agno, REASM_IVL_FREE,
						&as->freesp, end);
		     i-- > 0 && reasm_ivl_reaches(rc, agno, REASM_IVL_FREE,
						  &as->freesp, i, agbno);) {
			const struct claim *c = &as->freesp.v[i];

			if (c->agbno < end && agbno < c->agbno + c->len)
				return 0;
		}
	if (!rmaps_usable(rc))
		return 1;
	for (size_t i = reasm_ivl_first(rc, agno, REASM_IVL_RMAP, &as->rmaps,
					end);
	     !mapped && i-- > 0 && reasm_ivl_reaches(rc, agno, REASM_IVL_RMAP,
						     &as->rmaps, i, agbno);) {
		const struct claim *c = &as->rmaps.v[i];

		mapped = c->owner == owner && c->agbno <= agbno &&
			 end <= (uint64_t)c->agbno + c->len;
	}
	return mapped;
}

uint64_t
reasm_lsn(const struct repair_ctx *rc, uint64_t lsn)
{
	if (!xk_lsn_plausible(lsn) ||
	    (rc->log_head_lsn && lsn > rc->log_head_lsn))
		return 0;
	return lsn;
}

int
reasm_block_own(const struct repair_ctx *rc, uint64_t daddr, uint64_t owner,
		uint64_t kind)
{
	const struct xk_mount *mp = rc->mp;
	uint64_t fsb = daddr >> mp->g.blkbb_log;
	uint32_t agno = (uint32_t)(fsb / mp->g.agblocks);
	uint32_t agbno = (uint32_t)(fsb % mp->g.agblocks);
	const struct ag_scan *as;

	if (agno >= mp->g.agcount)
		return 0;
	as = &rc->scan.ags[agno];
	for (size_t i = reasm_ivl_first(rc, agno, REASM_IVL_USED, &as->used,
					(uint64_t)agbno + 1);
	     i-- > 0 && reasm_ivl_reaches(rc, agno, REASM_IVL_USED,
					  &as->used, i, agbno);) {
		const struct claim *c = &as->used.v[i];

		if (c->owner == owner && c->agbno <= agbno &&
		    agbno < (uint64_t)c->agbno + c->len &&
		    (c->offset & (XK_RMAP_OFF_ATTR_FORK |
				  XK_RMAP_OFF_BMBT_BLOCK)) == kind)
			return 1;
	}
	return 0;
}

struct collect {
	struct repair_ctx	*rc;
	struct reasm_dir	*d;
	const uint64_t		*children;
	size_t			nchildren;
	uint64_t		lsn;	/* of the block being read */
};

static int
push_entry(struct reasm_dir *d, const uint8_t *name, uint8_t namelen,
	   uint8_t ftype, uint64_t ino, uint64_t lsn)
{
	uint8_t *copy;

	if (d->n == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 64;
		struct xk_bld_dirent *nv = xk_realloc(d->ents,
						      ncap * sizeof(*nv));
		uint64_t *nl;

		if (!nv)
			return -ENOMEM;
		d->ents = nv;
		nl = xk_realloc(d->lsns, ncap * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		d->lsns = nl;
		d->cap = ncap;
	}
	copy = xk_malloc(namelen);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, name, namelen);
	d->lsns[d->n] = lsn;
	d->ents[d->n++] = (struct xk_bld_dirent){
		.name = copy, .namelen = namelen, .ftype = ftype, .ino = ino,
	};
	return 0;
}

static int
collect_entry(void *ctx, const uint8_t *name, uint8_t namelen, uint64_t ino,
	      uint8_t ftype)
{
	struct collect *c = ctx;
	struct reasm_dir *d = c->d;
	const struct inode_info *ii;

	if ((namelen == 1 && name[0] == '.') ||
	    (namelen == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	ii = inode_info_find(c->rc, ino);
	/* The metadata tree's own: never a user directory's entry. */
	if (ii && ii->meta) {
		d->meta++;
		d->dropped++;
		return 0;
	}
	/*
	 * A subdirectory lost too is kept for now: a later round may
	 * rebuild it (reasm_settle drops it if none does).
	 */
	if (!ii && ftype == XK_DIR3_FT_DIR && xk_ino_valid(c->rc->mp, ino) &&
	    ino != d->ino && xk_pptr_name_ok(name, namelen))
		return push_entry(d, name, namelen, XK_DIR3_FT_DIR, ino,
				  c->lsn);
	if (!xk_pptr_name_ok(name, namelen) || !ii || ino == d->ino ||
	    ((ii->mode & XK_S_IFMT) == XK_S_IFDIR ?
	     ii->parent != d->ino ||
	     named_count(c->children, c->nchildren, ino) :
	     named_count(c->children, c->nchildren, ino) >= ii->nlink)) {
		d->dropped++;
		return 0;
	}
	return push_entry(d, name, namelen, xk_mode_to_ftype(ii->mode), ino,
			  c->lsn);
}


/* An entry and the LSN of its block, for dedupe. */
struct ent_lsn {
	struct xk_bld_dirent	e;
	uint64_t		lsn;
};

/* Entries grouped by name (length first), then by inode. */
static int
cmp_name_ino(const void *a, const void *b)
{
	const struct ent_lsn *x = a, *y = b;
	int c;

	if (x->e.namelen != y->e.namelen)
		return (int)x->e.namelen - (int)y->e.namelen;
	c = memcmp(x->e.name, y->e.name, x->e.namelen);
	if (c)
		return c;
	return (x->e.ino > y->e.ino) - (x->e.ino < y->e.ino);
}

/*
 * Of the entries v[i..j] of one name, the one to keep, or -1: they name
 * one inode; or those from the blocks written last (by their LSNs, all
 * known) name one inode, the rest coming from older blocks: a stale
 * copy of a directory block (one the kernel freed, left where the bnobt
 * cannot say it is free) names what the name named before.
 */
static ptrdiff_t
name_keep(const struct ent_lsn *v, size_t i, size_t j)
{
	uint64_t newest = 0;
	ptrdiff_t keep = -1;

	if (v[i].e.ino == v[j].e.ino)
		return (ptrdiff_t)i;
	for (size_t k = i; k <= j; k++) {
		if (!v[k].lsn)
			return -1;
		if (v[k].lsn > newest)
			newest = v[k].lsn;
	}
	for (size_t k = i; k <= j; k++) {
		if (v[k].lsn != newest)
			continue;
		if (keep >= 0 && v[keep].e.ino != v[k].e.ino)
			return -1;
		keep = (ptrdiff_t)k;
	}
	return keep;
}

/*
 * One entry per name: the same name twice for one inode is one entry;
 * for two inodes, the newest block's (name_keep), else none (each
 * counted as left out).  The LSNs are done with.  0 or -ENOMEM.
 */
static int
dedupe(struct reasm_dir *d)
{
	struct ent_lsn *v = xk_malloc((d->n ? d->n : 1) * sizeof(*v));
	size_t out = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < d->n; i++)
		v[i] = (struct ent_lsn){ .e = d->ents[i], .lsn = d->lsns[i] };
	sort_v(v, d->n, sizeof(*v), cmp_name_ino);
	for (size_t i = 0; i < d->n; i++) {
		size_t j = i;
		ptrdiff_t keep;

		while (j + 1 < d->n && v[j + 1].e.namelen == v[i].e.namelen &&
		       !memcmp(v[j + 1].e.name, v[i].e.name, v[i].e.namelen))
			j++;
		keep = name_keep(v, i, j);
		for (size_t k = i; k <= j; k++) {
			/* A copy of the entry kept is no entry left out. */
			if (keep < 0 || v[k].e.ino != v[keep].e.ino)
				d->dropped++;
			if ((ptrdiff_t)k == keep)
				d->ents[out++] = v[k].e;
			else
				free((void *)v[k].e.name);
		}
		i = j;
	}
	free(v);
	free(d->lsns);
	d->lsns = NULL;
	d->n = out;
	d->nsubdirs = 0;
	for (size_t i = 0; i < d->n; i++)
		d->nsubdirs += d->ents[i].ftype == XK_DIR3_FT_DIR;
	return 0;
}

/* Read the data blocks the scan found for d->ino into d. */
static int
collect_dir(struct repair_ctx *rc, struct reasm_dir *d,
	    const uint64_t *children, size_t nchildren)
{
	static const enum xk_scan_type types[] = {
		XK_SCAN_DIR3_BLOCK, XK_SCAN_DIR3_DATA,
	};
	const struct xk_scan *res = &rc->reasm->res;
	struct collect c = { rc, d, children, nchildren };

	for (enum xk_scan_type t = XK_SCAN_DIR3_BLOCK; t <= XK_SCAN_DA3_NODE;
	     t++) {
		size_t first, count;

		xk_scan_lookup(res, t, d->ino, &first, &count);
		d->nfound += count;
	}
	for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
		size_t first, count;

		xk_scan_lookup(res, types[k], d->ino, &first, &count);
		for (size_t i = first; i < first + count; i++) {
			const struct xk_scan_ent *e = &res->ents.v[i];
			struct xk_buf *bp;
			int err;

			if (!reasm_block_takeable(rc, e->daddr, e->len >>
						  rc->mp->g.blocklog, d->ino,
						  0, 0))
				continue;
			err = xk_buf_read_ctx(rc->mp, e->daddr, e->len,
					      types[k] == XK_SCAN_DIR3_BLOCK ?
					      &xk_dir3_block_buf_ops :
					      &xk_dir3_data_buf_ops, -1,
					      d->ino, 0, &bp);
			if (xk_err_operational(err))
				return err;
			if (err)
				continue;
			c.lsn = reasm_lsn(rc, xk_be64_get(((const struct
						xk_dir3_blk_hdr *)bp->data)->lsn));
			err = xk_dir3_data_block_entries(bp->data, bp->len,
							 rc->mp->g.has_ftype,
							 collect_entry, &c);
			xk_buf_release(bp);
			if (err == -ENOMEM)
				return err;
			d->nblocks++;
		}
	}
	return dedupe(d);
}

/* The scan's progress on the meter of the phase. */
static int
scan_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct repair_ctx *rc = ctx;

	(void)total;
	if (rc->meter)
		atomic_store(&rc->meter->done, done >> 20);
	meter_show(rc, 0);
	return repair_interrupted() ? 1 : 0;
}

int
reasm_scan_device(struct repair_ctx *rc, const char *why)
{
	struct reasm_state *st = rc->reasm;
	struct xk_scan_opts o = {
		.threads = rc->opt.threads, .spill = rc->spill,
		.progress = scan_progress, .progress_ctx = rc,
	};
	struct repair_meter m;
	uint64_t found = 0;
	int err;

	if (!st) {
		st = xk_calloc(1, sizeof(*st));
		if (!st)
			return repair_error(rc, -ENOMEM, "scanning the device");
		rc->reasm = st;
	}
	if (st->scanned)
		return 0;
	info(rc, "        - %s: scanning the device%s...\n", why,
	     rc->opt.scan == REPAIR_SCAN_ALWAYS ? " (-o scan=always)" : "");
	meter_start(rc, &m, "Scanning the device", "MiB", 1,
		    (rc->mp->g.dblocks << rc->mp->g.blocklog) >> 20);
	err = xk_scan_device(rc->mp, &o, &st->res);
	meter_end(rc);
	if (err == -ECANCELED)
		err = -EINTR;
	if (err)
		return repair_error(rc, err, "scanning the device");
	st->scanned = 1;
	for (int t = 0; t < XK_SCAN_TYPE_NR; t++)
		found += st->res.counts[t][XK_SCAN_OK];
	info(rc, "        - the device scan accepted %llu metadata blocks\n",
	     (unsigned long long)found);
	if (st->res.unread.n)
		info(rc, "        - %llu bytes could not be read by the "
		     "scan\n", (unsigned long long)st->res.unread_bytes);
	return 0;
}

int
reasm_scan(struct repair_ctx *rc, const char *why)
{
	/* The pass's claims, for reasm_block_takeable. */
	int err = reasm_index(rc);

	if (err)
		return repair_error(rc, err, "indexing the claimed blocks");
	return reasm_scan_device(rc, why);
}

/* Take back the plans (IFIX_* in what) the pass made for ino. */
void
reasm_unplan(struct repair_ctx *rc, uint64_t ino, uint32_t what)
{
	size_t out = 0;

	for (size_t i = 0; i < rc->plan.ifix.n; i++)
		if (rc->plan.ifix.v[i].ino != ino ||
		    !(rc->plan.ifix.v[i].what & what))
			rc->plan.ifix.v[out++] = rc->plan.ifix.v[i];
	rc->plan.ifix.n = out;
	out = 0;
	for (size_t i = 0; i < rc->plan.whys.n; i++)
		if (rc->plan.whys.v[i].ino != ino ||
		    !(rc->plan.whys.v[i].what & what))
			rc->plan.whys.v[out++] = rc->plan.whys.v[i];
	rc->plan.whys.n = out;
}

/*
 * The directory's inode and entries join the pass's lists; for one in
 * use, its entries replace those its damaged map gave.
 */
static int
join_lists(struct repair_ctx *rc, const struct reasm_dir *d)
{
	const struct inode_info ii = {
		.ino = d->ino, .nlink = 2 + d->nsubdirs, .parent = d->parent,
		.mode = XK_S_IFDIR | 0755,
	};

	if (d->fork_lost) {
		struct inode_info *old = inode_info_find(rc, d->ino);
		size_t out = 0;

		old->nlink = ii.nlink;
		old->parent = d->parent;
		for (size_t i = 0; i < rc->scan.nedges; i++)
			if (rc->scan.edges[i].parent != d->ino)
				rc->scan.edges[out++] = rc->scan.edges[i];
		rc->scan.edge_vec.n = out;
	} else if (xk_vec_push(&rc->scan.inode_vec, &ii, sizeof(ii))) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < d->n && !rc->found.error; i++)
		note_edge(rc, d->ino, d->ents[i].ino, d->ents[i].ftype);
	return rc->found.error;
}

static int
cand_push(struct reasm_dir **v, size_t *n, size_t *cap, uint64_t ino,
	  uint64_t parent, int fork_lost)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct reasm_dir *nv = xk_realloc(*v, ncap * sizeof(*nv));

		if (!nv) {
			free(*v);
			*v = NULL;
			return -ENOMEM;
		}
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = (struct reasm_dir){
		.ino = ino, .parent = parent, .fork_lost = fork_lost,
	};
	return 0;
}

/* A directory whose entry names ino, or the root. */
static uint64_t
named_by(const struct repair_ctx *rc, uint64_t ino)
{
	for (size_t i = 0; i < rc->scan.nedges; i++)
		if (rc->scan.edges[i].child == ino &&
		    rc->scan.edges[i].parent != ino)
			return rc->scan.edges[i].parent;
	return rc->mp->sb.rootino;
}

/*
 * Once the device was scanned: directories whose blocks the scan found
 * but that no entry names and whose inode is not in use (a directory
 * lost with its entry).  Only where the AG's bnobt was read whole, so
 * that reasm_block_takeable tells the blocks of a directory removed long ago
 * (free space) from those of one lost now.
 */
static int
find_unnamed(struct repair_ctx *rc, struct reasm_dir **v, size_t *n,
	     size_t *cap)
{
	const struct xk_scan *res = &rc->reasm->res;
	const struct xk_mount *mp = rc->mp;
	uint64_t *children, prev = 0;
	size_t nchildren = 0;
	int err = 0;

	children = xk_malloc((rc->scan.nedges + 1) * sizeof(*children));
	if (!children)
		return -ENOMEM;
	for (size_t i = 0; i < rc->scan.nedges; i++)
		children[nchildren++] = rc->scan.edges[i].child;
	sort_v(children, nchildren, sizeof(*children), cmp_u64);
	for (size_t i = 0; i < res->ents.n && !err; i++) {
		const struct xk_scan_ent *e = &res->ents.v[i];
		uint64_t fsb = e->daddr >> mp->g.blkbb_log;
		uint32_t agno = (uint32_t)(fsb / mp->g.agblocks);

		if ((e->type != XK_SCAN_DIR3_BLOCK &&
		     e->type != XK_SCAN_DIR3_DATA) || e->owner == prev)
			continue;
		prev = e->owner;
		if (!xk_ino_valid(mp, e->owner) ||
		    e->owner == mp->sb.rootino || agno >= mp->g.agcount ||
		    !rc->scan.ags[agno].trees_ok[XK_BT_BNO] ||
		    inode_info_find(rc, e->owner) ||
		    named_count(children, nchildren, e->owner))
			continue;
		err = cand_push(v, n, cap, e->owner, mp->sb.rootino, 0);
		if (!err)
			(*v)[*n - 1].unnamed = 1;
	}
	free(children);
	return err;
}

/*
 * The lost directories: inodes not in use that an entry names as a
 * directory, each with the first directory naming it.  Sorted, unique.
 */
static int
find_lost(struct repair_ctx *rc, struct reasm_dir **out, size_t *nout)
{
	struct reasm_dir *v = NULL;
	size_t n = 0, cap = 0, k = 0;

	for (size_t i = 0; i < rc->scan.nedges; i++) {
		const struct edge *e = &rc->scan.edges[i];

		const struct inode_info *p;

		if (e->ftype != XK_DIR3_FT_DIR ||
		    !xk_ino_valid(rc->mp, e->child) ||
		    e->child == rc->mp->sb.rootino ||
		    inode_info_find(rc, e->child))
			continue;
		/* The metadata tree is metadir.c's to make anew. */
		p = inode_info_find(rc, e->parent);
		if (!p || p->meta)
			continue;
		if (cand_push(&v, &n, &cap, e->child, e->parent, 0))
			return -ENOMEM;
	}
	/*
	 * The root, lost: no entry names it, but its blocks name it as
	 * their owner (found, it is its own parent; not found, the check
	 * makes a new empty root and the orphans go to /lost+found).  A
	 * usable rmapbt comes first: the inode's core is salvaged and its
	 * map rebuilt from it (phase_rmap_forks.c).
	 */
	if (!rmaps_usable(rc) && xk_ino_valid(rc->mp, rc->mp->sb.rootino) &&
	    !inode_info_find(rc, rc->mp->sb.rootino) &&
	    cand_push(&v, &n, &cap, rc->mp->sb.rootino, rc->mp->sb.rootino, 0))
		return -ENOMEM;
	/*
	 * Directories in use whose block map is lost, when the rmapbt
	 * cannot give it back (phase_rmap_forks.c does when it can).
	 */
	for (size_t i = 0; !rmaps_usable(rc) && i < rc->scan.ninodes; i++) {
		const struct inode_info *ii = &rc->scan.inodes[i];

		if (!ii->fork_lost || ii->sfdir || ii->meta ||
		    (ii->mode & XK_S_IFMT) != XK_S_IFDIR)
			continue;
		if (cand_push(&v, &n, &cap, ii->ino, named_by(rc, ii->ino), 1))
			return -ENOMEM;
	}
	if (rc->reasm && rc->reasm->scanned && rc->reasm->unnamed) {
		int err = find_unnamed(rc, &v, &n, &cap);

		if (err) {
			free(v);
			return err;
		}
	}
	/* By inode, one each: any entry naming it gives its parent. */
	sort_v(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!k || v[k - 1].ino != v[i].ino)
			v[k++] = v[i];
	*out = v;
	*nout = k;
	return 0;
}

/* Whether ino was a candidate earlier in this pass. */
static int
tried(const struct reasm_state *st, uint64_t ino)
{
	for (size_t i = 0; st && i < st->tried.n; i++)
		if (st->tried.v[i] == ino)
			return 1;
	return 0;
}

/*
 * One round: the lost directories the lists show now, rebuilt into
 * them.  A rebuilt directory may name another lost one: the next round
 * takes it.  *added: how many were.  0 or an operational error.
 */
static int
reasm_round(struct repair_ctx *rc, int first, size_t *added)
{
	struct reasm_state *st = rc->reasm;
	struct reasm_dir *cand = NULL, *nv;
	uint64_t *children = NULL;
	size_t ncand = 0, kept = 0, nchildren = 0;
	/*
	 * Blocks neither free nor in use may be a directory lost with its
	 * entry: reason enough to scan (-o scan=auto), once, in a pass's
	 * first round.
	 */
	int lost_space = first && rc->opt.scan == REPAIR_SCAN_AUTO &&
			 rc->found.counts[PR_SPACE_LOST] &&
			 !(st && st->scanned);
	int err;

	*added = 0;
	inodes_order(rc);
	edges_order(rc);
	err = find_lost(rc, &cand, &ncand);
	if (err)
		return err;
	for (size_t i = 0; i < ncand; i++)
		if (!tried(st, cand[i].ino))
			cand[kept++] = cand[i];
	ncand = kept;
	kept = 0;
	if (!ncand && !lost_space &&
	    !(first && rc->opt.scan == REPAIR_SCAN_ALWAYS)) {
		free(cand);
		return 0;
	}
	if (!st) {
		st = xk_calloc(1, sizeof(*st));
		if (!st) {
			free(cand);
			return -ENOMEM;
		}
		rc->reasm = st;
	}
	err = 0;
	for (size_t i = 0; i < ncand && !err; i++)
		err = xk_vec_push(&st->tried.vec, &cand[i].ino,
				  sizeof(cand[i].ino));
	if (!err) {
		char why[96];

		if (ncand)
			snprintf(why, sizeof(why), "%zu director%s lost "
				 "(inode or block map)", ncand,
				 ncand == 1 ? "y" : "ies");
		else
			snprintf(why, sizeof(why), "%s", lost_space ?
				 "blocks neither free nor in use" :
				 "no directory lost");
		err = reasm_scan(rc, why);
	}
	if (!err && ncand) {
		children = xk_malloc((rc->scan.nedges ? rc->scan.nedges : 1) *
				     sizeof(*children));
		if (!children)
			err = -ENOMEM;
	}
	if (err || !ncand) {
		free(cand);
		return err;
	}
	/* The names given elsewhere (not by a map about to be replaced). */
	for (size_t i = 0; i < rc->scan.nedges; i++) {
		uint64_t parent = rc->scan.edges[i].parent;
		const struct reasm_dir *c = bsearch(&parent, cand, ncand,
						    sizeof(*cand), cmp_u64);

		if (!c || !c->fork_lost)
			children[nchildren++] = rc->scan.edges[i].child;
	}
	sort_v(children, nchildren, sizeof(*children), cmp_u64);
	for (size_t i = 0; i < ncand && !err; i++) {
		err = collect_dir(rc, &cand[i], children, nchildren);
		if (err)
			break;
		if (!cand[i].nblocks) {
			if (!cand[i].unnamed)
				info(rc, "        - directory %llu: no block "
				     "of it found by the device scan\n",
				     (unsigned long long)cand[i].ino);
			reasm_dir_free(&cand[i]);
			continue;
		}
		/*
		 * Blocks naming metadata inodes alone: a directory of the
		 * metadata tree (whose repair makes it anew), never rebuilt
		 * as a user directory.  A user directory never names one:
		 * such an entry is left out (collect_entry), said here.
		 */
		if (cand[i].meta && !cand[i].n) {
			info(rc, "        - directory %llu: its blocks found "
			     "by the device scan name %zu metadata inode%s: "
			     "not rebuilt from them\n",
			     (unsigned long long)cand[i].ino, cand[i].meta,
			     cand[i].meta == 1 ? "" : "s");
			reasm_dir_free(&cand[i]);
			continue;
		}
		if (cand[i].meta)
			info(rc, "        - directory %llu: %zu entr%s naming "
			     "metadata inodes left out\n",
			     (unsigned long long)cand[i].ino, cand[i].meta,
			     cand[i].meta == 1 ? "y" : "ies");
		/* Blocks alone, naming nothing alive: nothing to bring back. */
		if (cand[i].unnamed && !cand[i].n) {
			reasm_dir_free(&cand[i]);
			continue;
		}
		err = join_lists(rc, &cand[i]);
		if (!err && cand[i].fork_lost)
			err = reasm_dir_fork(rc, cand[i].ino,
					     &cand[i].from_leaves);
		if (err)
			break;
		if (rc->opt.no_modify || cand[i].from_leaves) {
			/* -n: reasm_dirs says it; reasm_dir_fork planned. */
		} else if (cand[i].fork_lost) {
			/* dirfix.c rewrites it, its core kept. */
			reasm_unplan(rc, cand[i].ino, IFIX_CLEAR | IFIX_TRIM |
				     IFIX_NBLOCKS | IFIX_NLINK | IFIX_DOTDOT);
			plan_dir_rebuild(rc, cand[i].ino);
		} else {
			reasm_unplan(rc, cand[i].ino, ~0u);
			mark_in_use(rc, cand[i].ino);
		}
		if (kept != i) {
			cand[kept] = cand[i];
			memset(&cand[i], 0, sizeof(cand[i]));
		}
		kept++;
	}
	free(children);
	nv = err ? NULL : xk_realloc(st->dirs, (st->ndirs + kept + 1) *
				     sizeof(*nv));
	if (!nv) {
		for (size_t i = 0; i < ncand; i++)
			reasm_dir_free(&cand[i]);
		free(cand);
		return err ? err : -ENOMEM;
	}
	memcpy(nv + st->ndirs, cand, kept * sizeof(*nv));
	st->dirs = nv;
	st->ndirs += kept;
	*added = kept;
	free(cand);
	return 0;
}

/*
 * After the rounds: a lost subdirectory that no round rebuilt is not
 * an entry after all (its entry and edge go); link counts follow.
 */
static void
reasm_settle(struct repair_ctx *rc)
{
	struct reasm_state *st = rc->reasm;

	inodes_order(rc);
	for (size_t i = 0; i < st->ndirs; i++) {
		struct reasm_dir *d = &st->dirs[i];
		struct inode_info *ii;
		size_t out = 0, gone = 0;

		for (size_t k = 0; k < d->n; k++) {
			if (inode_info_find(rc, d->ents[k].ino)) {
				d->ents[out++] = d->ents[k];
				continue;
			}
			/* Its edge: the one of d naming it. */
			for (size_t e = 0; e < rc->scan.nedges; e++)
				if (rc->scan.edges[e].parent == d->ino &&
				    rc->scan.edges[e].child ==
				    d->ents[k].ino) {
					rc->scan.edges[e] =
						rc->scan.edges[--rc->scan.edge_vec.n];
					break;
				}
			free((void *)d->ents[k].name);
			gone++;
		}
		d->n = out;
		d->dropped += gone;
		d->nsubdirs = 0;
		for (size_t k = 0; k < d->n; k++)
			d->nsubdirs += d->ents[k].ftype == XK_DIR3_FT_DIR;
		ii = inode_info_find(rc, d->ino);
		if (ii)
			ii->nlink = 2 + d->nsubdirs;
	}
}

/* Rounds at most: directories lost inside lost directories. */
#define REASM_ROUNDS	16

int
reasm_dirs(struct repair_ctx *rc)
{
	struct reasm_state *st;
	size_t added = 0, total = 0;
	int err = 0;

	/*
	 * Parent pointers: a directory rebuilt here keeps its inode and
	 * the names its blocks hold; the pass's parent pointer check
	 * (pptr.c) then sets its children's pointers to its entries, as
	 * after any directory rewrite.  Metadata directories are left to
	 * metadir.c (find_lost, collect_entry).
	 */
	/* The forks of the last pass (reasm_forks plans the rest). */
	if (rc->reasm)
		reasm_forks_free(rc->reasm);
	if (rc->opt.scan == REPAIR_SCAN_NEVER)
		return 0;
	if (rc->reasm) {
		reasm_dirs_free(rc->reasm);
		rc->reasm->tried.n = 0;
		rc->reasm->unnamed = 0;
	}
	for (int round = 0; round < REASM_ROUNDS && !err; round++) {
		err = reasm_round(rc, !round, &added);
		total += added;
		if (added)
			continue;
		/*
		 * The directories entries name are all back (they may name
		 * lost ones in turn): now those no entry names, and then
		 * what they name.
		 */
		if (rc->reasm && rc->reasm->scanned && !rc->reasm->unnamed) {
			rc->reasm->unnamed = 1;
			continue;
		}
		break;
	}
	if (err)
		return rc->found.error ? rc->found.error :
		       repair_error(rc, err, "rebuilding lost directories "
				    "from the device scan");
	if (!total)
		return 0;
	reasm_settle(rc);
	/* The lists as the pass goes on with them, paths from them. */
	inodes_order(rc);
	edges_order(rc);
	action_scan_free(rc);
	st = rc->reasm;
	for (size_t i = 0; rc->opt.no_modify && i < st->ndirs; i++) {
		const struct reasm_dir *d = &st->dirs[i];
		char path[1024];

		if (d->from_leaves) {
			reasm_fork_would(rc, reasm_fork_find(rc, d->ino,
							     XK_DATA_FORK));
			continue;
		}
		action_path(rc, d->ino, path, sizeof(path));
		reasm_would(rc, "directory", d->ino, d->unnamed ? "" : path,
			    "would rebuild directory %llu (%s) from %zu blocks "
			    "found by the device scan (%zu entries, %zu left "
			    "out%s)", (unsigned long long)d->ino,
			    d->unnamed ? "named by no entry" : path,
			    d->nblocks, d->n, d->dropped,
			    d->fork_lost ? "; its block map is lost" : "");
	}
	if (rc->opt.no_modify)
		reasm_dirs_free(st);
	return 0;
}
