// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -m MB: the memory the check will need, estimated before it starts
 * from the model in doc/memory.md and the counters the superblock and
 * AG headers hold, and the layout that fits the cap:
 *
 * 1. Everything in memory fits: as without -m, the buffer cache taking
 *    what the cap leaves (never more than its usual budget).
 * 2. Only the part that cannot spill fits (one AG's working copies in
 *    the space phase, the inode chunk lists, the cache): the per-AG
 *    claim vectors, the inode and directory entry lists (vec.h) and
 *    the lists a rewrite salvages (dirfix.c, attrfix.c) move to
 *    unlinked files in the spill directory once they pass
 *    SPILL_THRESHOLD, and a trimmer thread unmaps their pages whenever
 *    the resident set passes the cap.
 * 3. Not even that: refuse at once, saying how much is needed (as
 *    xfs_repair -m does), instead of failing half way.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "repair.h"

/*
 * Bytes the model charges, by doc/memory.md.  Each inode in use is
 * counted with one directory entry naming it (hard links make more).
 */
#define PER_INODE	(sizeof(struct inode_info) + sizeof(struct edge))
/* Per chunk of 64 inodes: inobt and finobt records, the scan's mask. */
#define PER_CHUNK	(2 * sizeof(struct xk_inobt_rec) + sizeof(uint64_t))
#define PER_EXTENT	24		/* one claim */
#define PER_FREE_EXT	48		/* bnobt + cntbt claims */
#define FIXED_BYTES	(8ULL << 20)	/* program, tables, stacks */
#define MIN_CACHE	(4ULL << 20)	/* per scan thread */
#define FULL_CACHE	(32ULL << 20)	/* the usual cache per thread */
/*
 * Spilling: a vector stays on the heap up to this size, so the many
 * small ones cost no file.
 */
#define SPILL_THRESHOLD	(32U << 10)
#define SPILL_DIR	"/var/tmp"

struct mem_model {
	uint64_t	inodes, chunks, extents, freeext, refcs;
	uint64_t	ag_max;		/* largest AG's claim bytes */
};

/* Claim bytes of extents, free extents and refcount records. */
static uint64_t
claim_bytes(const struct xk_mount *mp, uint64_t x, uint64_t f, uint64_t c)
{
	return PER_EXTENT * x * (mp->g.has_rmapbt ? 2 : 1) +
	       PER_FREE_EXT * f + PER_EXTENT * c;
}

/*
 * Count what the model charges for: inodes in use from the superblock;
 * per AG, extents from the rmapbt's blocks (or one per inode in use by
 * the AGI without the rmapbt), free extents from the free space trees'
 * blocks, refcount records from the refcountbt's.  Trees are at least
 * half full, so a full leaf per block is up to twice the truth.
 */
static void
model_count(struct repair_ctx *rc, struct mem_model *mm)
{
	struct xk_mount *mp = rc->mp;
	uint32_t rmap_leaf = mp->g.maxrecs[XK_BT_RMAP][0];
	uint32_t bno_leaf = mp->g.maxrecs[XK_BT_BNO][0];
	uint32_t refc_leaf = mp->g.maxrecs[XK_BT_REFC][0];

	memset(mm, 0, sizeof(*mm));
	mm->inodes = mp->sb.icount > mp->sb.ifree ?
		     mp->sb.icount - mp->sb.ifree : 0;
	mm->chunks = mp->sb.icount / XK_INODES_PER_CHUNK + 1;
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		uint64_t x = 0, f = 0, c = 0, btree, rmapb = 0;
		struct xk_buf *bp;

		if (!mp->g.has_rmapbt &&
		    !(xk_agi_read(mp, agno, XK_READ_SALVAGE, &bp) && !bp)) {
			const struct xk_agi *agi = xk_buf_agi(bp);
			uint32_t cnt = xk_be32_get(agi->agi_count);
			uint32_t fr = xk_be32_get(agi->agi_freecount);

			x = cnt > fr ? cnt - fr : 0;
			xk_buf_release(bp);
		}
		if (!(xk_agf_read(mp, agno, XK_READ_SALVAGE, &bp) && !bp)) {
			const struct xk_agf *agf = xk_buf_agf(bp);

			btree = xk_be32_get(agf->agf_btreeblks);
			if (mp->g.has_rmapbt) {
				rmapb = xk_be32_get(agf->agf_rmap_blocks);
				x = rmapb * rmap_leaf;
			}
			/* btreeblks counts the rmapbt's blocks too. */
			btree = btree > rmapb ? btree - rmapb : 0;
			f = (btree + 2) * bno_leaf / 2;
			if (mp->g.has_reflink)
				c = (uint64_t)xk_be32_get(
					agf->agf_refcount_blocks) * refc_leaf;
			xk_buf_release(bp);
		}
		mm->extents += x;
		mm->freeext += f;
		mm->refcs += c;
		if (claim_bytes(mp, x, f, c) > mm->ag_max)
			mm->ag_max = claim_bytes(mp, x, f, c);
	}
	if (!mp->g.has_rmapbt && mm->extents < mm->inodes)
		mm->extents = mm->inodes;
}

/*
 * The estimate with everything in memory, and without the cache; and
 * in *stays (if not NULL) the part that cannot spill, without cache.
 */
static uint64_t
estimate(struct repair_ctx *rc, uint64_t *without_cache, uint64_t *stays)
{
	struct xk_mount *mp = rc->mp;
	struct mem_model mm;
	uint64_t claims, lists, chunks, bytes, heap, spillable;

	model_count(rc, &mm);
	claims = claim_bytes(mp, mm.extents, mm.freeext, mm.refcs);
	lists = PER_INODE * mm.inodes;
	chunks = PER_CHUNK * mm.chunks;
	/* Vectors grow by doubling: half as much again at the peak. */
	bytes = (lists + claims + chunks) * 3 / 2 + FIXED_BYTES;
	*without_cache = bytes;
	if (stays) {
		/*
		 * Vectors under the threshold: five per AG, one per AG and
		 * worker; two lists per worker and two for the run, and the
		 * connectivity walk's stack.
		 */
		heap = (uint64_t)SPILL_THRESHOLD *
		       ((uint64_t)mp->g.agcount * (5 + rc->opt.threads) +
			2 * ((uint64_t)rc->opt.threads + 1) + 1);
		spillable = claims + lists;
		/*
		 * The space phase's heap copies of one AG's claims, and
		 * qsort's buffer, come to about that AG's claim bytes; the
		 * chunk lists stay on the heap.
		 */
		*stays = (mm.ag_max + chunks) * 3 / 2 + FIXED_BYTES +
			 (heap < spillable ? heap : spillable);
	}
	return bytes + (uint64_t)rc->opt.threads * (rc->cache_bytes ?
						rc->cache_bytes : FULL_CACHE);
}

uint64_t
repair_memory_estimate(struct repair_ctx *rc, uint64_t *without_cache)
{
	return estimate(rc, without_cache, NULL);
}

static unsigned long long
mib_up(uint64_t bytes)
{
	return (unsigned long long)((bytes + (1ULL << 20) - 1) >> 20);
}

/*
 * A spilled page the kernel could not write back (the spill directory's
 * filesystem filled up after the free space check: vec.c) faults with
 * SIGBUS.  The run cannot go on without those records: it stops there,
 * before any further write, naming the spill directory, not the device.
 * The message is made when spilling starts: a handler may only write.
 */
static char sigbus_msg[512];
static size_t sigbus_len;

static void
spill_sigbus(int sig)
{
	ssize_t n = write(STDERR_FILENO, sigbus_msg, sigbus_len);

	(void)sig;
	(void)n;
	_exit(REPAIR_EXIT_ERROR);
}

static void
spill_catch_sigbus(const char *dir)
{
	struct sigaction sa;
	int n = snprintf(sigbus_msg, sizeof(sigbus_msg), "xfskit-repair: no "
			 "space left in the spill directory %s (a page of a "
			 "temporary file there could not be written): "
			 "stopping at once; run xfskit-repair again with "
			 "more room in --spill-dir or a higher -m\n", dir);

	sigbus_len = n < 0 ? 0 : (size_t)n < sizeof(sigbus_msg) ?
		     (size_t)n : sizeof(sigbus_msg) - 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = spill_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

const char *
spill_error_cause(const struct repair_ctx *rc, int err, char *buf,
		  size_t len)
{
	unsigned long failed = rc->spill ? rc->spill->failed :
			       rc->spill_failed;

	if (err != -ENOMEM || !failed)
		return repair_error_cause(err);
	snprintf(buf, len, "out of memory (%lu moves of records to files in "
		 "the spill directory %s failed for want of space there, so "
		 "those stayed in memory)", failed, rc->spill_dir_used);
	return buf;
}

/* Set up spilling under the cap; -1 if the spill directory is unusable. */
static int
spill_start(struct repair_ctx *rc, const char *dir, uint64_t cap)
{
	int in_memory, err;

	rc->spill = calloc(1, sizeof(*rc->spill));
	if (!rc->spill) {
		fprintf(stderr, "xfskit-repair: out of memory\n");
		return -1;
	}
	err = xk_vec_spill_start(rc->spill, dir, SPILL_THRESHOLD, cap,
			      &in_memory);
	if (err) {
		fprintf(stderr, "xfskit-repair: cannot keep temporary files "
			"in %s (%s), which -m %llu needs; choose another "
			"directory with --spill-dir\n", dir, strerror(-err),
			(unsigned long long)rc->opt.mem_cap_mb);
		free(rc->spill);
		rc->spill = NULL;
		return -1;
	}
	spill_catch_sigbus(dir);
	rc->spill_dir_used = dir;
	if (in_memory)
		fprintf(stderr, "xfskit-repair: warning: %s is in memory "
			"(tmpfs): spilling there saves nothing; choose a "
			"disk with --spill-dir\n", dir);
	return 0;
}

int
repair_memory_check(struct repair_ctx *rc)
{
	uint64_t base, need, cap = rc->opt.mem_cap_mb << 20, per, stay, room;
	const char *dir = rc->opt.spill_dir;

	if (!rc->opt.mem_cap_mb)
		return 0;
	if (!dir)
		dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = SPILL_DIR;
	need = estimate(rc, &base, &stay);
	if (base + rc->opt.threads * MIN_CACHE <= cap) {
		room = cap - base;
	} else if (stay + rc->opt.threads * MIN_CACHE <= cap) {
		if (spill_start(rc, dir, cap))
			return -1;
		/* Half the room to the cache, half to mapped claim pages. */
		room = (cap - stay) / 2;
		if (room < rc->opt.threads * MIN_CACHE)
			room = rc->opt.threads * MIN_CACHE;
	} else {
		fprintf(stderr, "xfskit-repair: checking %s needs at least "
			"%llu MiB with its extent records spilled to %s "
			"along with its inode and directory entry lists "
			"(%llu MiB all in memory, about %llu MiB with the "
			"usual cache; see doc/memory.md): -m %llu is not "
			"enough\n", rc->opt.device,
			mib_up(stay + rc->opt.threads * MIN_CACHE), dir,
			mib_up(base + rc->opt.threads * MIN_CACHE), mib_up(need),
			(unsigned long long)rc->opt.mem_cap_mb);
		return -1;
	}
	per = room / rc->opt.threads;
	if (!rc->cache_bytes || per < rc->cache_bytes)
		rc->cache_bytes = per > FULL_CACHE ? FULL_CACHE : per;
	if (rc->spill)
		info(rc, "Memory: about %llu MiB of the %llu allowed, the "
		     "extent records and the inode and entry lists (about "
		     "%llu MiB) spilled to %s (cache %llu MiB per "
		     "thread).\n", mib_up(stay +
		     rc->opt.threads * rc->cache_bytes),
		     (unsigned long long)rc->opt.mem_cap_mb, mib_up(base - stay),
		     dir, (unsigned long long)(rc->cache_bytes >> 20));
	else
		info(rc, "Memory: about %llu MiB of the %llu allowed (cache "
		     "%llu MiB per thread).\n", mib_up(base +
		     rc->opt.threads * rc->cache_bytes),
		     (unsigned long long)rc->opt.mem_cap_mb,
		     (unsigned long long)(rc->cache_bytes >> 20));
	return 0;
}

void
ags_attach_spill(struct repair_ctx *rc)
{
	if (!rc->spill || !rc->scan.ags)
		return;
	for (uint32_t agno = 0; agno < rc->mp->g.agcount; agno++) {
		struct ag_scan *as = &rc->scan.ags[agno];

		as->used.vec.spill = rc->spill;
		as->freesp.vec.spill = rc->spill;
		as->cntsp.vec.spill = rc->spill;
		as->rmaps.vec.spill = rc->spill;
		as->refcs.vec.spill = rc->spill;
	}
	rc->scan.inode_vec.spill = rc->spill;
	rc->scan.edge_vec.spill = rc->spill;
}

static void
list_line(struct repair_ctx *rc, const char *what, const struct xk_vec *v,
	  size_t size)
{
	info(rc, "Spilled: the %s list, %zu entries (%llu MiB), is %s.\n",
	     what, v->n, mib_up((uint64_t)v->n * size),
	     v->map ? "in a file" : "in memory");
}

void
spill_list_report(struct repair_ctx *rc, const char *what, uint64_t ino,
		  const struct xk_vec *v, size_t size,
		  const struct xk_vec_pool *names)
{
	uint64_t in_files = xk_vec_pool_file_bytes(names);
	uint64_t bytes = 0;

	if (!rc->spill || !rc->opt.verbose)
		return;
	for (size_t i = 0; i < names->chunks.n; i++)
		bytes += names->chunks.v[i].n;
	info(rc, "Spilled: the %s list of inode %llu, %zu entries (%llu "
	     "MiB), is %s; their names (%llu KiB) %s.\n", what,
	     (unsigned long long)ino, v->n, mib_up((uint64_t)v->n * size),
	     v->map ? "in a file" : "in memory",
	     (unsigned long long)((bytes + 1023) >> 10),
	     !in_files ? "in memory" : in_files == bytes ? "in files" :
	     "partly in files");
}

void
lists_report(struct repair_ctx *rc)
{
	if (!rc->spill || !rc->opt.verbose)
		return;
	list_line(rc, "inode", &rc->scan.inode_vec, sizeof(*rc->scan.inodes));
	list_line(rc, "directory entry", &rc->scan.edge_vec, sizeof(*rc->scan.edges));
}

void
repair_memory_done(struct repair_ctx *rc)
{
	struct xk_vec_spill *sp = rc->spill;

	if (!sp)
		return;
	/* The action log's directory list may be one of its vectors. */
	action_scan_free(rc);
	rc->spill_failed = sp->failed;
	if (sp->failed)
		fprintf(stderr, "xfskit-repair: warning: %lu moves of "
			"records to files in %s failed; those stayed in "
			"memory\n", sp->failed, sp->dir);
	xk_vec_spill_stop(sp);
	if (rc->opt.verbose)
		info(rc, "Spilled: %lu vectors to files, at most %llu MiB "
		     "mapped; pages unmapped %lu times to stay under the "
		     "cap.\n", sp->files, mib_up(sp->peak_mapped), sp->trims);
	free(sp);
	rc->spill = NULL;
}
