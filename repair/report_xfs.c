// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfs_repair's phase lines, on stderr as xfs_repair prints them, for the
 * people and scripts that read them (fstests keeps the lines that start
 * in column one and compares them between runs).  Our own work maps onto
 * them by topic, in xfs_repair's order:
 *
 *   1  opening the device: the primary superblock read and verified
 *   2  the log (replayed when dirty, zeroed with -L), then every
 *      superblock copy, AG header and btree
 *   3  every inode, and the search for lost inode chunks
 *   4  space ownership, free space, rmap and refcount, realtime
 *   5  the superblock counters ("No modify flag set, skipping phase 5"
 *      on stdout under -n, as xfs_repair)
 *   6  directory connectivity
 *   7  link counts, quotas, parent pointers; then, without -n, the
 *      repairs and the passes that check them
 *
 * Only the first pass prints them: the later passes confirm the repairs
 * and report as our own lines do.  The last line is "done", or under -n
 * "No modify flag set, skipping filesystem flush and exiting."; our
 * report adds the summary line after it (summary.c).  Under -n, a
 * primary superblock that a secondary must replace, or whose geometry
 * the secondaries outvote, ends the run where xfs_repair -n ends it,
 * unless our report is on (xr_sb_found, xr_sb_voted).
 *
 * Findings: without --report (the default) the output is xfs_repair's.
 * fix_problem holds each first-pass finding (xr_finding); an xr_msg
 * right after it says it in xfs_repair's words instead, and a finding
 * nothing said so is printed in ours at the next line of any kind
 * (xr_flush).  The words come from the sites that know the raw fields:
 * the primary superblock's search (xr_sb_*), inode headers, inodes
 * cleared for a check it words otherwise (after ours), lost root and
 * realtime inodes, AG headers, junked short-form entries, link counts
 * and entry file types.  With --report our lines are printed as found
 * and xfs_repair's beside them.
 *
 * At the end, metadata LSNs ahead of the log get xfs_repair's "Maximum
 * metadata LSN (C:B) is ahead of log (C:B)." and "[Would] Format log to
 * cycle N." (xr_log_behind).
 *
 * XFS_REPAIR_FAIL_AFTER_PHASE=N, xfs_repair's test hook, kills the
 * program (SIGKILL, exit status 137) at the end of phase N, once what
 * it changed is written, as xfs_repair does.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/crc32c.h>
#include <xfskit/logv.h>

#include "repair.h"

/* Lines for people and logs; --json keeps its one document. */
static int
shown(const struct repair_ctx *rc)
{
	return !rc->opt.json;
}

void
xr_fail_after_read(struct repair_ctx *rc)
{
	const char *s = getenv("XFS_REPAIR_FAIL_AFTER_PHASE");
	long n = s ? strtol(s, NULL, 10) : 0;

	/* As xfs_repair: a leading number, anything else is no phase. */
	rc->xr.fail_after = n >= 1 && n <= 7 ? (int)n : 0;
}

/* The end of the phase under way: the test hook's point. */
static void
phase_done(struct repair_ctx *rc)
{
	if (!rc->xr.phase || rc->xr.phase != rc->xr.fail_after)
		return;
	/*
	 * What the phase changed is written first, as xfs_repair does; a
	 * failed write is the simulated crash's too.
	 */
	if (rc->mp && !rc->opt.no_modify && xk_buf_flush(rc->mp))
		fprintf(stderr, "xfskit-repair: a write failed before "
			"XFS_REPAIR_FAIL_AFTER_PHASE's stop\n");
	fflush(stdout);
	fflush(stderr);
	kill(getpid(), SIGKILL);
	_exit(128 + SIGKILL);
}

void
xr_finding(struct repair_ctx *rc, const char *line)
{
	xr_flush(rc);
	snprintf(rc->xr.pending, sizeof(rc->xr.pending), "%s", line);
}

void
xr_flush(struct repair_ctx *rc)
{
	if (!rc->xr.pending[0])
		return;
	live_clear(rc);
	fprintf(rc->out, "%s\n", rc->xr.pending);
	rc->xr.pending[0] = '\0';
}

void
xr_phase(struct repair_ctx *rc, int phase)
{
	if (rc->pass > 1 || phase <= rc->xr.phase)
		return;
	xr_flush(rc);
	phase_done(rc);
	rc->xr.phase = phase;
	if (!shown(rc))
		return;
	live_clear(rc);
	switch (phase) {
	case 1:
		fprintf(stderr, "Phase 1 - find and verify superblock...\n");
		break;
	case 2:
		if (rc->opt.logdev)
			fprintf(stderr, "Phase 2 - using external log on %s\n",
				rc->opt.logdev);
		else
			fprintf(stderr, "Phase 2 - using internal log\n");
		break;
	case 3:
		fprintf(stderr, "Phase 3 - for each AG...\n");
		break;
	case 4:
		fprintf(stderr, "Phase 4 - check for duplicate blocks...\n");
		break;
	case 5:
		if (rc->opt.no_modify)
			printf("No modify flag set, skipping phase 5\n");
		else
			fprintf(stderr, "Phase 5 - rebuild AG headers and "
				"trees...\n");
		break;
	case 6:
		fprintf(stderr, "Phase 6 - check inode connectivity...\n");
		break;
	case 7:
		fprintf(stderr, "Phase 7 - verify %slink counts...\n",
			rc->opt.no_modify ? "" : "and correct ");
		break;
	}
}

/* A line of the first pass, on stderr, after PREFIX. */
static void
vline(struct repair_ctx *rc, const char *prefix, const char *fmt, va_list ap)
{
	if (rc->pass > 1 || !shown(rc))
		return;
	live_clear(rc);
	/* A scan worker's lines go to its AG's buffer, in order. */
	fputs(prefix, rc->out);
	vfprintf(rc->out, fmt, ap);
	fputc('\n', rc->out);
}

void
xr_step(struct repair_ctx *rc, const char *fmt, ...)
{
	va_list ap;

	xr_flush(rc);
	va_start(ap, fmt);
	vline(rc, "        - ", fmt, ap);
	va_end(ap);
}

void
xr_msg(struct repair_ctx *rc, const char *fmt, ...)
{
	va_list ap;

	/* Said in xfs_repair's words: our line is --report's alone. */
	rc->xr.pending[0] = '\0';
	va_start(ap, fmt);
	vline(rc, "", fmt, ap);
	va_end(ap);
}

/* xfs_repair's words for why a superblock is unusable, by our check. */
static const char *
sb_why(int err, const struct xk_fail *f)
{
	static const struct {
		const char	*check;
		const char	*why;
	} words[] = {
		{ "magic", "bad magic number" },
		{ "version", "bad or unsupported version" },
		{ "crc", "bad CRC in superblock" },
		{ "blocksize", "bad blocksize field" },
		{ "blocklog", "bad blocksize log field" },
		{ "sectsize", "bad sector size" },
		{ "sectlog", "bad sector size" },
		{ "inodesize", "bad inode size or inconsistent with number "
		  "of inodes/block" },
		{ "inopblock", "bad inode size or inconsistent with number "
		  "of inodes/block" },
		{ "imax_pct", "maximum indicated percentage of inodes > 100%" },
		{ "inoalignmt", "inconsistent inode alignment value" },
		{ "unit", "bad stripe unit in superblock" },
		{ "width", "bad stripe width in superblock" },
	};

	if (err == XK_ENOTXFS)
		return words[0].why;
	for (size_t i = 0; f->check && i < sizeof(words) / sizeof(*words);
	     i++)
		if (!strcmp(f->check, words[i].check))
			return words[i].why;
	return "inconsistent filesystem geometry information";
}

void
xr_sb_search(struct repair_ctx *rc, int err, const struct xk_fail *f)
{
	xr_msg(rc, "bad primary superblock - %s !!!", sb_why(err, f));
	xr_msg(rc, "%s", "");
	xr_msg(rc, "attempting to find secondary superblock...");
}

/* One of the inodes the superblock names at a fixed place. */
static void
sb_ino(struct repair_ctx *rc, const char *tag, uint64_t was, uint64_t now)
{
	if (was == now)
		return;
	xr_msg(rc, "sb %s inode value %llu %sinconsistent with calculated "
	       "value %llu", tag, (unsigned long long)was,
	       was == XK_NULLFSINO ? "(NULLFSINO) " : "",
	       (unsigned long long)now);
	xr_msg(rc, "%s superblock %s inode pointer to %llu",
	       rc->opt.no_modify ? "would reset" : "resetting", tag,
	       (unsigned long long)now);
}

/*
 * xfs_repair -n once it knows the primary would be rewritten: it ends
 * here, exit 1, the rest unread, and its lines alone do the same.  Our
 * report (a person reading, or --report, -v, --json) goes on (with
 * HOW), writing nothing, so that -n tells what else a repair would find
 * before one is run.  Returns 1 to stop.
 */
static int
nomodify_primary(struct repair_ctx *rc, const char *how)
{
	xr_msg(rc, "Primary superblock would have been modified.");
	if (!rc->opt.report && !rc->opt.json) {
		xr_msg(rc, "Cannot proceed further in no_modify mode.");
		xr_msg(rc, "Exiting now.");
		return 1;
	}
	info(rc, "xfs_repair -n stops here; the check goes on %s.\n", how);
	return 0;
}

int
xr_sb_voted(struct repair_ctx *rc)
{
	xr_msg(rc, "%s modified primary superblock", rc->opt.no_modify ?
	       "would write" : "writing");
	/* -n leaves the primary as it is (phase_sb.c). */
	return rc->opt.no_modify &&
	       nomodify_primary(rc, "with the primary's geometry as it is");
}

int
xr_sb_found(struct repair_ctx *rc, const struct xk_sb *was)
{
	const struct xk_sb *sb = &rc->mp->sb;

	rc->xr.sb_copied = 1;
	rc->xr.sb_unit = sb->unit;
	rc->xr.sb_width = sb->width;
	/* One read of AG 1's superblock: one of xfs_repair's dots. */
	xr_msg(rc, ".found candidate secondary superblock...");
	xr_msg(rc, "verified secondary superblock...");
	xr_msg(rc, "%s modified primary superblock", rc->opt.no_modify ?
	       "would write" : "writing");
	if (rc->opt.no_modify &&
	    nomodify_primary(rc, "with the secondary superblock's geometry"))
		return 1;
	sb_ino(rc, "root", was->rootino, sb->rootino);
	sb_ino(rc, "realtime bitmap", was->rbmino, sb->rbmino);
	sb_ino(rc, "realtime summary", was->rsumino, sb->rsumino);
	return 0;
}

void
xr_covered(struct repair_ctx *rc)
{
	rc->xr.pending[0] = '\0';
}

/* xfs_repair's name for a fixed-place inode, or NULL. */
static const char *
special_inode(const struct xk_sb *sb, uint64_t ino)
{
	if (ino == sb->rootino)
		return "root inode";
	if (ino == sb->rbmino)
		return "realtime bitmap inode";
	if (ino == sb->rsumino)
		return "realtime summary inode";
	return NULL;
}

/* "cleared inode N", or "would have cleared ..." under -n. */
static void
cleared_line(struct repair_ctx *rc, uint64_t ino)
{
	const char *what = special_inode(&rc->mp->sb, ino);
	int nm = rc->opt.no_modify;

	if (what)
		xr_msg(rc, "%s %s %llu", nm ? "would clear" : "cleared", what,
		       (unsigned long long)ino);
	else
		xr_msg(rc, "%s inode %llu", nm ? "would have cleared" :
		       "cleared", (unsigned long long)ino);
}

/*
 * An inode core whose header fails: xfs_repair checks it twice, first
 * to judge ("bad magic number 0x0 on inode N"), then to fix (the same
 * with ", resetting magic number"); an inode whose number or UUID is not
 * its own ends both and is cleared.  FREED: we clear it too (or keep it
 * free); else the "cleared" line is not ours to print.  Returns whether
 * it was printed.
 */
int
xr_inode_header(struct repair_ctx *rc, uint64_t ino,
		const struct xk_dinode *dip, int freed)
{
	struct xk_mount *mp = rc->mp;
	uint32_t next = xk_be32_get(dip->di_next_unlinked);
	int nm = rc->opt.no_modify;
	int crc = !xk_cksum_ok(dip, mp->g.inodesize, XK_DINODE_CRC_OFF);
	int magic = xk_be16_get(dip->di_magic) != XK_DINODE_MAGIC;
	int version = dip->di_version != 3;
	int unlinked = next != XK_NULLAGINO &&
		       !xk_agino_in_range(mp, xk_ino_to_agno(mp, ino), next);
	int wrong_ino = xk_be64_get(dip->di_ino) != ino;
	int uuid = memcmp(dip->di_uuid, mp->meta_uuid, 16) != 0;
	int negative = (int64_t)xk_be64_get(dip->di_size) < 0;
	int stop = wrong_ino || uuid || negative;

	if (!crc && !magic && !version && !unlinked && !stop)
		return 0;
	for (int fixing = 0; fixing < 2; fixing++) {
		if (crc)
			xr_msg(rc, "bad CRC for inode %llu%s",
			       (unsigned long long)ino, !fixing ? "" :
			       nm ? ", would rewrite" : ", will rewrite");
		if (magic)
			xr_msg(rc, "bad magic number 0x%x on inode %llu%s",
			       xk_be16_get(dip->di_magic),
			       (unsigned long long)ino, !fixing ? "" : nm ?
			       ", would reset magic number" :
			       ", resetting magic number");
		if (version)
			xr_msg(rc, "bad version number 0x%x on inode %llu%s",
			       (unsigned int)(int)(int8_t)dip->di_version,
			       (unsigned long long)ino, !fixing ? "" : nm ?
			       ", would reset version number" :
			       ", resetting version number");
		if (unlinked)
			xr_msg(rc, "bad next_unlinked 0x%x on inode %llu%s",
			       next, (unsigned long long)ino, !fixing ? "" :
			       nm ? ", would reset next_unlinked" :
			       ", resetting next_unlinked");
		if (wrong_ino)
			xr_msg(rc, "inode identifier %llu mismatch on inode "
			       "%llu", (unsigned long long)
			       xk_be64_get(dip->di_ino),
			       (unsigned long long)ino);
		else if (uuid)
			xr_msg(rc, "UUID mismatch on inode %llu",
			       (unsigned long long)ino);
		else if (negative)
			xr_msg(rc, "bad (negative) size %lld on inode %llu",
			       (long long)xk_be64_get(dip->di_size),
			       (unsigned long long)ino);
	}
	if (!stop || !freed)
		return 0;
	cleared_line(rc, ino);
	return 1;
}

int
xr_inode_cleared(struct repair_ctx *rc, uint64_t ino,
		 const struct xk_fail *f)
{
	/* The data fork's format does not fit the file type. */
	if (!f->check || strcmp(f->check, "format"))
		return 0;
	xr_msg(rc, "bad inode format in inode %llu", (unsigned long long)ino);
	cleared_line(rc, ino);
	return 1;
}

void
xr_inode_clearing(struct repair_ctx *rc, uint64_t ino)
{
	/* xfs_repair's reasons differ check by check: ours stay. */
	xr_flush(rc);
	cleared_line(rc, ino);
}

void
xr_entry_junked(struct repair_ctx *rc, uint64_t dir, uint64_t child)
{
	struct inode_info *d;
	struct dir_list l = { 0 };
	char name[256] = "";	/* a name is at most 255 bytes */

	/* Only short-form directories: xfs_repair words others otherwise. */
	if (rc->pass > 1 || rc->opt.json)
		return;
	d = inode_info_find(rc, dir);
	if (!d || !d->sfdir || dir_entries(rc, dir, &l))
		return;
	for (size_t i = 0; i < l.e.n; i++)
		if (l.e.v[i].ino == child) {
			snprintf(name, sizeof(name), "%.*s",
				 (int)l.e.v[i].namelen,
				 (const char *)l.e.v[i].name);
			break;
		}
	dir_list_free(&l);
	if (!name[0])
		return;
	xr_msg(rc, "entry \"%s\" in shortform directory %llu references %s "
	       "inode %llu", name, (unsigned long long)dir,
	       xk_ino_valid(rc->mp, child) ? "free" : "non-existent",
	       (unsigned long long)child);
	xr_msg(rc, "%s entry \"%s\" in directory inode %llu",
	       rc->opt.no_modify ? "would have junked" : "junking", name,
	       (unsigned long long)dir);
}

/* Where a btree root may be: past the AG headers, inside the AG. */
static int
root_ok(const struct xk_mount *mp, uint32_t agno, uint32_t bno)
{
	uint32_t agfl_block = (XK_AGFL_SECTOR * mp->g.sectsize) >>
			      mp->g.blocklog;

	return bno > agfl_block && bno < xk_ag_blocks(mp, agno);
}

/* The fields every AG header has, named as xfs_repair names them. */
static int
ag_header_common(struct repair_ctx *rc, uint32_t agno, const char *hdr,
		 uint32_t magic, uint32_t want_magic, uint32_t version,
		 uint32_t seqno, uint32_t length, const char *length_word)
{
	int bad = 0;

	if (magic != want_magic) {
		xr_msg(rc, "bad magic # 0x%x for %s %u", magic, hdr, agno);
		bad = 1;
	}
	if (version != 1) {
		xr_msg(rc, "bad version # %d for %s %u", (int)version, hdr,
		       agno);
		bad = 1;
	}
	if (seqno != agno) {
		xr_msg(rc, "bad sequence # %d for %s %u", (int)seqno, hdr,
		       agno);
		bad = 1;
	}
	if (length != xk_ag_blocks(rc->mp, agno)) {
		xr_msg(rc, "bad length %s%d for %s %u, should be %u",
		       length_word, (int)length, hdr, agno,
		       xk_ag_blocks(rc->mp, agno));
		bad = 1;
	}
	return bad;
}

/* "bad uuid U for agf N", the UUID as uuid_unparse writes it. */
static void
bad_uuid(struct repair_ctx *rc, const char *hdr, uint32_t agno,
	 const uint8_t *u)
{
	char text[37];
	size_t n = 0;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			text[n++] = '-';
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%02x", u[i]);
	}
	xr_msg(rc, "bad uuid %s for %s %u", text, hdr, agno);
}

/*
 * The header's UUID, then, when anything was wrong, "reset bad agf for
 * ag N".  Returns whether xfs_repair goes on to the AG's trees: under -n
 * it skips the AG ("bad uncorrected agheader N, skipping ag...", its
 * inobt unread).
 */
static int
ag_header_end(struct repair_ctx *rc, uint32_t agno, const char *hdr,
	      const uint8_t *uuid, int bad)
{
	struct ag_scan *as = &rc->scan.ags[agno];

	if (memcmp(uuid, rc->mp->meta_uuid, 16)) {
		bad_uuid(rc, hdr, agno, uuid);
		bad = 1;
	}
	if (!bad)
		return 0;
	xr_msg(rc, "%s bad %s for ag %u", rc->opt.no_modify ?
	       "would reset" : "reset", hdr, agno);
	if (rc->opt.no_modify && !as->xr_reset) {
		xr_msg(rc, "bad uncorrected agheader %u, skipping ag...", agno);
		as->xr_agi_lost = 1;
	}
	as->xr_reset = 1;
	return !rc->opt.no_modify;
}

/* A btree root the header names outside the AG's usable blocks. */
static void
root_line(struct repair_ctx *rc, uint32_t agno, xk_be32 bno, const char *bt)
{
	if (!root_ok(rc->mp, agno, xk_be32_get(bno)))
		xr_msg(rc, "bad agbno %u for %s root, agno %u",
		       xk_be32_get(bno), bt, agno);
}

void
xr_agi_header(struct repair_ctx *rc, uint32_t agno, const struct xk_agi *h)
{
	int bad = ag_header_common(rc, agno, "agi",
				   xk_be32_get(h->agi_magicnum), XK_AGI_MAGIC,
				   xk_be32_get(h->agi_versionnum),
				   xk_be32_get(h->agi_seqno),
				   xk_be32_get(h->agi_length), "# ");

	if (ag_header_end(rc, agno, "agi", h->agi_uuid, bad))
		root_line(rc, agno, h->agi_root, "inobt");
}

void
xr_agf_header(struct repair_ctx *rc, uint32_t agno, const struct xk_agf *h)
{
	uint32_t size = rc->mp->g.agfl_size;
	uint32_t first = xk_be32_get(h->agf_flfirst);
	uint32_t last = xk_be32_get(h->agf_fllast);
	int bad = ag_header_common(rc, agno, "agf",
				   xk_be32_get(h->agf_magicnum), XK_AGF_MAGIC,
				   xk_be32_get(h->agf_versionnum),
				   xk_be32_get(h->agf_seqno),
				   xk_be32_get(h->agf_length), "");

	if (first >= size) {
		xr_msg(rc, "flfirst %d in agf %u too large (max = %u)",
		       (int)first, agno, size - 1);
		bad = 1;
	}
	if (last >= size) {
		xr_msg(rc, "fllast %d in agf %u too large (max = %u)",
		       (int)last, agno, size - 1);
		bad = 1;
	}
	if (!ag_header_end(rc, agno, "agf", h->agf_uuid, bad))
		return;
	/*
	 * xfs_repair then walks the free list from flfirst to fllast (an
	 * index too large reset to 0) and compares the count with flcount.
	 */
	if (!rc->opt.no_modify && xk_be32_get(h->agf_flcount)) {
		uint32_t f = first < size ? first : 0;
		uint32_t l = last < size ? last : 0;
		uint32_t n = (l + size - f) % size + 1;

		if (n != xk_be32_get(h->agf_flcount))
			xr_msg(rc, "freeblk count %d != flcount %d in ag %u",
			       (int)n, (int)xk_be32_get(h->agf_flcount), agno);
	}
	root_line(rc, agno, h->agf_roots[XK_AGF_BNO], "btbno");
	root_line(rc, agno, h->agf_roots[XK_AGF_CNT], "btbcnt");
}

void
xr_lost_space(struct repair_ctx *rc, uint32_t agno)
{
	if (rc->scan.ags[agno].xr_reset)
		xr_covered(rc);
}

void
xr_agfl_slots(struct repair_ctx *rc, uint32_t agno, const struct xk_agf *agf,
	      void *agfl)
{
	uint32_t size = rc->mp->g.agfl_size;
	uint32_t first = xk_be32_get(agf->agf_flfirst);
	uint32_t count = xk_be32_get(agf->agf_flcount);

	if (first >= size)
		return;
	for (uint32_t i = 0; i < count && i < size; i++) {
		uint32_t b = xk_be32_get(*xk_agfl_bno(agfl,
						      (first + i) % size));

		if (!root_ok(rc->mp, agno, b)) {
			xr_msg(rc, "bad agbno %u in agfl, agno %u", b, agno);
			rc->scan.ags[agno].xr_reset = 1;
		}
	}
}

/* Phase 4's look at the root: in use and a directory, or lost. */
void
xr_root_check(struct repair_ctx *rc)
{
	const struct inode_info *ii;

	inodes_order(rc);
	ii = inode_info_find(rc, rc->mp->sb.rootino);
	rc->xr.root_lost = !ii || (ii->mode & XK_S_IFMT) != XK_S_IFDIR;
	if (rc->xr.root_lost)
		xr_msg(rc, rc->opt.no_modify ? "root inode would be lost" :
		       "root inode lost");
}

/*
 * Phase 6's first lines: what is lost is made anew (phase_links finds
 * and plans the same; xr_covered there).
 */
void
xr_phase6_remade(struct repair_ctx *rc)
{
	const char *nm = rc->opt.no_modify ? "would reinitialize" :
			 "reinitializing";

	if (rc->xr.root_lost)
		xr_msg(rc, "%s root directory", nm);
	inodes_order(rc);
	if (rt_inode_lost(rc, rc->mp->sb.rbmino))
		xr_msg(rc, "%s realtime bitmap inode", nm);
	if (rt_inode_lost(rc, rc->mp->sb.rsumino))
		xr_msg(rc, "%s realtime summary inode", nm);
}

void
xr_end(struct repair_ctx *rc)
{
	phase_done(rc);
	rc->xr.phase = 8;
}

void
xr_done(struct repair_ctx *rc)
{
	xr_flush(rc);
	if (!shown(rc))
		return;
	live_clear(rc);
	if (rc->opt.no_modify) {
		fprintf(stderr, "No modify flag set, skipping filesystem "
			"flush and exiting.\n");
		return;
	}
	/* A repaired primary took the stripe geometry of a secondary. */
	if (rc->xr.sb_copied)
		fprintf(stderr, "Note - stripe unit (%u) and width (%u) were "
			"copied from a backup superblock.\nPlease reset with "
			"mount -o sunit=<value>,swidth=<value> if necessary\n",
			rc->xr.sb_unit, rc->xr.sb_width);
	fprintf(stderr, "done\n");
}

/*
 * As xfs_repair ends a run: the newest LSN of the metadata that verified
 * (the primary's included) against the log head.  Metadata stamped at
 * the head or later would be refused by the kernel ("Metadata has LSN
 * ahead of current LSN"), though nothing in it is damaged: the log is
 * formatted in a cycle three past it, as xfs_repair does (-n: says it
 * would be).  Printed whatever the pass (this is the run's end).
 */
int
xr_log_behind(struct repair_ctx *rc, int *formatted)
{
	uint64_t max = __atomic_load_n(&rc->mp->seen_lsn, __ATOMIC_RELAXED);
	uint64_t head = rc->log_head_lsn;
	unsigned int mc = (unsigned int)(max >> 32), mb = (unsigned int)max;
	unsigned int hc = (unsigned int)(head >> 32), hb = (unsigned int)head;
	char msg[256] = "";
	uint32_t cycle;
	int err;

	*formatted = 0;
	/* A zeroed log's head is 0:0: any metadata is ahead of it. */
	if ((!head && !rc->log_zeroed) || (head && max < head))
		return 0;
	/* Only verified metadata counts, so a cycle this high is real. */
	cycle = mc < UINT32_MAX - 3 ? mc + 3 : UINT32_MAX;
	xr_flush(rc);
	if (shown(rc)) {
		live_clear(rc);
		fprintf(stderr, "Maximum metadata LSN (%u:%u) is ahead of log "
			"(%u:%u).\n", mc, mb, hc, hb);
		fprintf(stderr, "%s log to cycle %u.\n", rc->opt.no_modify ?
			"Would format" : "Format", cycle);
	}
	report(rc, PR_LOG_BEHIND, "log", -1, 0, rc->mp->g.log_daddr, "lsn",
	       "the newest metadata LSN %u:%u is not behind the log head "
	       "%u:%u (the kernel would refuse the metadata); the log %s in "
	       "cycle %u", mc, mb, hc, hb, rc->opt.no_modify ?
	       "would be formatted" : "is formatted", cycle);
	if (rc->opt.no_modify)
		return 0;
	/* The log was read at the start: any failure stops the run. */
	err = xk_log_format(rc->mp, cycle, msg, sizeof(msg));
	if (err) {
		repair_error(rc, err, "formatting the log in cycle %u%s%s",
			     cycle, msg[0] ? ": " : "", msg);
		return err;
	}
	action_report(rc, ACT_LOG_FORMATTED, 0, -1, NULL, " in cycle %u, past "
		      "the newest metadata LSN %u:%u", cycle, mc, mb);
	*formatted = 1;
	return 0;
}
