// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The geometry summary, in the exact layout mkfs.xfs and xfs_info print,
 * so scripts that parse one parse the other.
 */
#include "mkfs.h"

void
mkfs_report(FILE *f, const struct mkfs_cfg *cfg)
{
	const struct xk_sb *sb = &cfg->sb;
	uint32_t logsect = sb->logsectsize ? sb->logsectsize : XK_BBSIZE;

	fprintf(f,
"meta-data=%-22s isize=%-6u agcount=%u, agsize=%u blks\n"
"         =%-22s sectsz=%-5u attr=%u, projid32bit=%u\n"
"         =%-22s crc=%-8u finobt=%u, sparse=%u, rmapbt=%u\n"
"         =%-22s reflink=%-4u bigtime=%u inobtcount=%u nrext64=%u\n"
"%s%s"
"data     =%-22s bsize=%-6u blocks=%llu, imaxpct=%u\n"
"         =%-22s sunit=%-6u swidth=%u blks\n"
"naming   =version %-14u bsize=%-6u ascii-ci=%d, ftype=%d%s\n"
"log      =%-22s bsize=%-6u blocks=%u, version=%d\n"
"         =%-22s sectsz=%-5u sunit=%u blks, lazy-count=%d\n"
"realtime =%-22s extsz=%-6u blocks=%lld, rtextents=%lld\n",
		cfg->dev, sb->inodesize, sb->agcount, sb->agblocks,
		"", sb->sectsize, 2, 1,
		"", 1, cfg->finobt, cfg->sparse, cfg->rmapbt,
		"", cfg->reflink, cfg->bigtime, cfg->inobtcount, cfg->nrext64,
		/* mkfs.xfs 7.2's line; 6.1 has none: only shown when on */
		cfg->exchange ? "         =                       exchange=1   "
				"metadir=" : "",
		cfg->exchange ? (cfg->metadir ? "1\n" : "0\n") : "",
		"", sb->blocksize, (unsigned long long)sb->dblocks,
		sb->imax_pct,
		"", sb->unit, sb->width,
		2, cfg->dirblocksize, 0, 1,
		/* mkfs.xfs 6.1 has no parent pointers: only shown when on */
		cfg->parent ? ", parent=1" : "",
		cfg->logdev ? cfg->logdev : "internal log", sb->blocksize,
		sb->logblocks, 2,
		"", logsect, sb->logsunit / sb->blocksize, 1,
		cfg->rtdev ? cfg->rtdev : "none", sb->rextsize * sb->blocksize,
		(long long)sb->rblocks, (long long)sb->rextents);
	/* mkfs.xfs 7.2's realtime group lines; 6.1 has none. */
	if (cfg->metadir)
		fprintf(f,
"         =%-22s rgcount=%-4u rgsize=%u extents\n"
"         =%-22s zoned=%-6d start=0 reserved=0\n",
			"", sb->rgcount, sb->rgextents, "", 0);
}
