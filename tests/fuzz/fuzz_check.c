// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: mutated filesystem metadata through open, verify and
 * the whole check that xfskit-repair -n runs.
 *
 * Whole images are far too large to mutate, so the input is the metadata
 * of a small base image (XK_FUZZ_BASE): the first 128 KiB of every AG,
 * concatenated, which holds the AG headers, the btree roots and, in
 * AG 0, the root inode chunk (at AG block 16 with 4 KiB blocks: 64 KiB
 * would stop just short of it).  Each run lays the input over those
 * regions of a sparse in-memory copy of the base and checks it; where
 * the input is shorter the base's own bytes stay.
 *
 * Mutations nearly always break a checksum, and a bad checksum stops the
 * deeper checks; so when the input's last byte is odd, the harness
 * recomputes the CRC of every block it recognises, letting mutated
 * fields reach the structural rules.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../repair/repair.h"
#include "../../repair/reasm.h"

#define SEG_BYTES	(128u << 10)
#define MAX_SEGS	64

struct base {
	uint32_t	blocksize, sectsize, inodesize;
	uint8_t		*seg[MAX_SEGS];
	uint64_t	seg_off[MAX_SEGS];
	unsigned int	nseg;
	uint64_t	size;
	FILE		*devnull;
};

static struct base *
load_base(void)
{
	static struct base b;	/* harness state, not libfs state */
	static int loaded;
	const char *path = getenv("XK_FUZZ_BASE");
	struct xk_dsb dsb;
	struct xk_sb sb;
	FILE *f;

	if (loaded)
		return b.nseg ? &b : NULL;
	loaded = 1;
	if (!path || !(f = fopen(path, "rb"))) {
		fprintf(stderr, "fuzz_check: set XK_FUZZ_BASE to a small "
			"XFS image\n");
		return NULL;
	}
	if (fread(&dsb, sizeof(dsb), 1, f) != 1)
		return NULL;
	xk_sb_decode(&sb, &dsb);
	fseek(f, 0, SEEK_END);
	b.size = (uint64_t)ftell(f);
	b.blocksize = sb.blocksize;
	b.sectsize = sb.sectsize;
	b.inodesize = sb.inodesize;
	if (!b.blocksize || b.blocksize > SEG_BYTES || !b.sectsize ||
	    !b.inodesize || b.inodesize > b.blocksize)
		return NULL;
	for (uint32_t ag = 0; ag < sb.agcount && b.nseg < MAX_SEGS; ag++) {
		uint64_t off = (uint64_t)ag * sb.agblocks * sb.blocksize;

		if (off + SEG_BYTES > b.size)
			break;
		b.seg[b.nseg] = malloc(SEG_BYTES);
		fseek(f, (long)off, SEEK_SET);
		if (fread(b.seg[b.nseg], SEG_BYTES, 1, f) != 1)
			break;
		b.seg_off[b.nseg++] = off;
	}
	fclose(f);
	b.devnull = fopen("/dev/null", "w");
	return &b;
}

/* Recompute the CRC of every block in a segment whose magic we know. */
static void
fix_crcs(const struct base *b, uint8_t *seg, int first_of_ag)
{
	if (first_of_ag) {
		/* sb, AGF, AGI, AGFL sectors */
		static const size_t crc[4] = { 224, 216, 312, 32 };

		for (int i = 0; i < 4; i++)
			xk_cksum_update(seg + i * b->sectsize, b->sectsize,
					crc[i]);
	}
	for (uint32_t o = 0; o + b->blocksize <= SEG_BYTES; o += b->blocksize) {
		uint8_t *blk = seg + o;
		uint32_t m32 = xk_get_be32(blk);
		uint16_t m16 = xk_get_be16(blk + 8);

		switch (m32) {
		case XK_ABTB_CRC_MAGIC: case XK_ABTC_CRC_MAGIC:
		case XK_IBT_CRC_MAGIC: case XK_FIBT_CRC_MAGIC:
		case XK_RMAP_CRC_MAGIC: case XK_REFC_CRC_MAGIC:
			xk_cksum_update(blk, b->blocksize, 52);
			continue;
		case XK_BMAP_CRC_MAGIC:
			xk_cksum_update(blk, b->blocksize, 64);
			continue;
		case 0x58444233: case 0x58444433: case 0x58444633:
			xk_cksum_update(blk, b->blocksize, 4);
			continue;
		}
		if (m16 == 0x3df1 || m16 == 0x3dff || m16 == 0x3ebe ||
		    m16 == 0x3bee) {
			xk_cksum_update(blk, b->blocksize, 12);
			continue;
		}
		for (uint32_t i = 0; i + b->inodesize <= b->blocksize;
		     i += b->inodesize)
			if (xk_get_be16(blk + i) == XK_DINODE_MAGIC)
				xk_cksum_update(blk + i, b->inodesize, 100);
	}
}

/* Print the base's segments as one seed input (for building a corpus). */
static void
dump_seed(struct base *b)
{
	for (unsigned int i = 0; i < b->nseg; i++)
		fwrite(b->seg[i], SEG_BYTES, 1, stdout);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct base *b = load_base();
	struct repair_ctx rc;
	struct xk_fail f;
	char path[64];
	size_t used = 0;
	int fd, err;

	if (!b)
		abort();
	fd = memfd_create("xk-fuzz", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)b->size) < 0)
		abort();
	for (unsigned int i = 0; i < b->nseg; i++) {
		uint8_t seg[SEG_BYTES];
		size_t n = size - used < SEG_BYTES ? size - used : SEG_BYTES;

		memcpy(seg, b->seg[i], SEG_BYTES);
		memcpy(seg, data + used, n);
		used += n;
		if (size && (data[size - 1] & 1))
			fix_crcs(b, seg, 1);
		if (pwrite(fd, seg, SEG_BYTES, (off_t)b->seg_off[i]) !=
		    SEG_BYTES)
			abort();
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&rc, 0, sizeof(rc));
	rc.out = b->devnull;
	rc.opt.device = path;
	rc.opt.no_modify = 1;
	err = xk_mount_open(path, XK_MOUNT_RDONLY, &rc.mp, &f);
	if (!err) {
		/*
		 * A check ends with 0 or an operational error (memory); any
		 * other result is a phase returning a verdict as an error,
		 * which would stop a run on a finding: a bug.
		 */
		err = repair_check(&rc);
		if (err && !xk_err_operational(err))
			abort();
		/* The device scan's index outlives a pass (as in main.c). */
		reasm_free(&rc);
		xk_mount_discard(rc.mp);
	}
	close(fd);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (getenv("XK_FUZZ_DUMP_SEED")) {
		struct base *b = load_base();

		if (b)
			dump_seed(b);
		exit(b ? 0 : 1);
	}
	return 0;
}
