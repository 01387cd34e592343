// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * From raw options to the complete layout, with the rules mkfs.xfs 6.1
 * applies, in its order, so the same device and the same explicit
 * options give the same geometry:
 *  1. block size (default 4 KiB; v5 needs at least 1 KiB), sector size
 *     (option, else the device's physical sector, 512 for files);
 *  2. features (v5 defaults: finobt, sparse inodes, rmapbt, reflink,
 *     inobtcount, bigtime, nrext64 on) and their dependencies;
 *  3. directory block size (max(block, 4 KiB)), inode size (512);
 *  4. data size from -d size or the device; stripe unit and width from
 *     the options (in 512-byte units or bytes) or the device topology;
 *  5. AG size and count: explicit, or 4 AGs for a single disk between
 *     128 MiB and 4 TiB, maximum-size AGs above, up to 32 for striped
 *     (multi-disk) devices; rounded to the stripe unit and nudged off a
 *     stripe-width multiple; a last AG under 16 MiB is dropped;
 *  6. imaxpct (25 % under 1 TiB, 5 % under 50 TiB, else 1 %);
 *  7. the log: size/2048 but at least 64 MiB (from 1 GiB up) and at least
 *     what the transaction reservations need, at most what fits an AG;
 *     placed after the fixed blocks of the middle AG, stripe aligned;
 *  8. the refusals of unsupported geometries unless --unsupported.
 * Every rejection prints one precise sentence and returns 1.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include <xfskit/rtbitmap.h>
#include <xfskit/init.h>
#include <xfskit/log_resv.h>

#include "mkfs.h"

#define MiB(n, log)	((uint64_t)(n) << (20 - (log)))
#define GiB(n, log)	((uint64_t)(n) << (30 - (log)))
#define TiB(n, log)	((uint64_t)(n) << (40 - (log)))
#define AG_MIN_BLOCKS(log)	((16ULL << 20) >> (log))
#define AG_MAX_BLOCKS(log)	(((1ULL << 40) - 1) >> (log))
#define MAX_LOG_BLOCKS		(1024 * 1024ULL)
#define MAX_LOG_BYTES		((2ULL << 30) - (10ULL << 20))
#define MIN_LOG_BLOCKS		512ULL
#define MIN_LOG_BYTES		(10ULL << 20)
#define MAX_AGNUMBER		0xfffffffeULL

static unsigned int
log2_of(uint64_t v)
{
	unsigned int l = 0;

	while ((1ULL << (l + 1)) <= v)
		l++;
	return l;
}

static unsigned int
log2_roundup(uint64_t v)
{
	unsigned int l = 0;

	while ((1ULL << l) < v)
		l++;
	return l;
}

static int
is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Convert a size option; range and power-of-two checks as mkfs.xfs. */
static int
size_opt(const struct mkfs_val *v, char opt, const char *name,
	 uint32_t bs, uint32_t ss, long long min, long long max, int pow2,
	 long long *out)
{
	long long n = mkfs_cvtnum(bs, ss, v->str);
	const char *why = NULL;

	if (n < 0)
		why = "Not a valid value or illegal suffix";
	else if (n < min)
		why = "Value is too small.";
	else if (n > max)
		why = "Value is too large.";
	else if (pow2 && !is_pow2((uint64_t)n))
		why = "Value must be a power of 2.";
	if (why) {
		fprintf(stderr, "Invalid value %s for -%c %s option. %s\n",
			v->str, opt, name, why);
		return 1;
	}
	*out = n;
	return 0;
}

static int
flag(const struct mkfs_val *v, int dflt)
{
	return v->set ? (int)v->num : dflt;
}

/*
 * The xfs:autofsck property, as mkfs.xfs 7.2 decides it: the value
 * given (0 is "none", 1 "repair"); a value that asks for checking turns
 * on reverse mapping and parent pointers unless they were set off, then
 * only warns; with neither given and both features on, "repair".
 */
static void
autofsck_choice(const struct mkfs_cli *cli, struct mkfs_cfg *cfg)
{
	const char *w = NULL;

	if (cli->autofsck.set) {
		w = cli->autofsck.str;
		if (cli->autofsck.num >= 0)
			w = cli->autofsck.num ? "repair" : "none";
	}
	if (w && strcmp(w, "none")) {
		if (!cfg->rmapbt && cli->rmapbt.set)
			printf("-m autofsck=%s is less effective without "
			       "reverse mapping\n", w);
		else
			cfg->rmapbt = 1;
		if (!cfg->parent && cli->parent.set)
			printf("-m autofsck=%s is less effective without "
			       "parent pointers\n", w);
		else
			cfg->parent = 1;
	}
	if (!w && cfg->rmapbt && cfg->parent)
		w = "repair";
	cfg->autofsck = w;
}

/*
 * -m uquota and the others, as mkfs.xfs 7.2 records them: accounting,
 * and enforcement unless "noenforce", in sb_qflags with the quota
 * version bit; they need (and turn on) the metadata directory tree.
 * Nothing else (no quota inode, nothing checked yet: the
 * kernel makes the quota files at the first quota mount).  A kernel
 * mounting without quotas resets the flags.
 */
static void
quota_flags(const struct mkfs_cli *cli, struct mkfs_cfg *cfg)
{
	cfg->qflags = 0;
	if (flag(&cli->uquota, 0))
		cfg->qflags |= XK_UQUOTA_ACCT | XK_UQUOTA_ENFD;
	if (flag(&cli->uqnoenforce, 0))
		cfg->qflags |= XK_UQUOTA_ACCT;
	if (flag(&cli->gquota, 0))
		cfg->qflags |= XK_GQUOTA_ACCT | XK_GQUOTA_ENFD;
	if (flag(&cli->gqnoenforce, 0))
		cfg->qflags |= XK_GQUOTA_ACCT;
	if (flag(&cli->pquota, 0))
		cfg->qflags |= XK_PQUOTA_ACCT | XK_PQUOTA_ENFD;
	if (flag(&cli->pqnoenforce, 0))
		cfg->qflags |= XK_PQUOTA_ACCT;
}

/* Step 1 to 3: sizes and features that need no device. */
static int
basic_sizes(const struct mkfs_cli *cli, struct mkfs_cfg *cfg,
	    const struct xk_topology *topo)
{
	long long n;

	cfg->blocksize = 4096;
	if (cli->bsize.set) {
		if (size_opt(&cli->bsize, 'b', "size", 0, 0, 512, 65536, 1, &n))
			return 1;
		cfg->blocksize = (uint32_t)n;
	}
	cfg->blocklog = log2_of(cfg->blocksize);
	cfg->crc = flag(&cli->crc, 1);
	if (!cfg->crc && flag(&cli->metadir, 0)) {
		fprintf(stderr, "metadata directory not supported without CRC "
			"support\n");
		return 1;
	}
	if (!cfg->crc) {
		fprintf(stderr, "V4 filesystems are deprecated and are not "
			"supported by xfskit-mkfs: crc=0 is refused.\n");
		return 1;
	}
	if (cfg->blocksize < 1024) {
		fprintf(stderr, "Minimum block size for CRC enabled "
			"filesystems is 1024 bytes.\n");
		return 1;
	}
	if (cli->sectsize.set) {
		if (size_opt(&cli->sectsize, 's', "size", 0, 0, 512, 32768, 1,
			     &n))
			return 1;
		cfg->sectsize = (uint32_t)n;
	} else {
		cfg->sectsize = topo->physical_sector ?
				topo->physical_sector : 512;
		if (cfg->sectsize > 32768)
			cfg->sectsize = topo->logical_sector;
		if (cfg->blocksize < cfg->sectsize &&
		    cfg->blocksize >= topo->logical_sector) {
			fprintf(stderr, "specified blocksize %u is less than "
				"device physical sector size %u\nswitching to "
				"logical sector size %u\n", cfg->blocksize,
				cfg->sectsize, topo->logical_sector);
			cfg->sectsize = topo->logical_sector;
		}
	}
	cfg->sectlog = log2_of(cfg->sectsize);
	/*
	 * The log's sectors: the data sector for an internal log; for an
	 * external one, -s size= sets both, else mkfs.xfs's 512 bytes.
	 */
	cfg->logsectsize = cfg->logdev && !cli->ssize_given ? XK_BBSIZE :
			   cfg->sectsize;
	if (cfg->blocksize < cfg->sectsize) {
		fprintf(stderr, "block size %u cannot be smaller than sector "
			"size %u\n", cfg->blocksize, cfg->sectsize);
		return 1;
	}
	if (topo->logical_sector && cfg->sectsize < topo->logical_sector) {
		fprintf(stderr, "illegal sector size %u; hw sector is %u\n",
			cfg->sectsize, topo->logical_sector);
		return 1;
	}
	if (cli->logversion.set && cli->logversion.num != 2) {
		fprintf(stderr, "V2 logs are required for CRC enabled "
			"filesystems.\n");
		return 1;
	}
	if (cli->loginternal.set && !cli->loginternal.num && !cfg->logdev) {
		fprintf(stderr, "no log subvolume or external log.\n");
		return 1;
	}
	if (cli->ftype.set && !cli->ftype.num) {
		fprintf(stderr, "Cannot disable ftype with crcs enabled.\n");
		return 1;
	}
	if (cli->ialign.set && !cli->ialign.num) {
		fprintf(stderr, "Inodes always aligned for CRC enabled "
			"filesystems.\n");
		return 1;
	}
	/* What mkfs.xfs says when a v5-forced legacy switch is turned off. */
	if (cli->iattr.set && cli->iattr.num != 2) {
		fprintf(stderr, "V2 attribute format always enabled on CRC "
			"enabled filesystems\n");
		return 1;
	}
	if (cli->projid32bit.set && !cli->projid32bit.num) {
		fprintf(stderr, "32 bit Project IDs always enabled on CRC "
			"enabled filesystems\n");
		return 1;
	}
	if (cli->lazycount.set && !cli->lazycount.num) {
		fprintf(stderr, "Lazy superblock counters always enabled for "
			"CRC enabled filesystems\n");
		return 1;
	}
	cfg->ialign = 1;
	/*
	 * The metadata directory tree (on with quota flags) needs
	 * exchange-range (on unless set off, as mkfs.xfs 7.2 refuses).
	 * With a realtime volume it also needs realtime groups, which are
	 * not made here.
	 */
	quota_flags(cli, cfg);
	cfg->metadir = flag(&cli->metadir, cfg->qflags != 0);
	if (cfg->qflags && !cfg->metadir) {
		fprintf(stderr, "persistent quota flags not supported without "
			"metadir support\n");
		return 1;
	}
	if (cfg->metadir && cli->exchange.set && !cli->exchange.num) {
		fprintf(stderr, "metadir not supported without exchange-range "
			"support\n");
		return 1;
	}
	if (cfg->metadir && cli->rtdev.set) {
		fprintf(stderr, "-m metadir=1 with a realtime volume needs "
			"realtime groups, which xfskit-mkfs does not make "
			"yet; nothing was written.\n");
		return 1;
	}
	cfg->finobt = flag(&cli->finobt, 1);
	/* Not with a classic realtime section (see rtdev_info). */
	cfg->rmapbt = flag(&cli->rmapbt, !cli->rtdev.set);
	cfg->reflink = flag(&cli->reflink, !cli->rtdev.set);
	if (cli->rtdev.set && (cfg->rmapbt || cfg->reflink)) {
		fprintf(stderr, "%s not supported with realtime devices\n",
			cfg->rmapbt ? "rmapbt" : "reflink");
		return 1;
	}
	cfg->inobtcount = flag(&cli->inobtcount, 1);
	cfg->bigtime = flag(&cli->bigtime, 1);
	cfg->sparse = flag(&cli->sparse, 1);
	cfg->nrext64 = flag(&cli->nrext64, 1);
	cfg->parent = flag(&cli->parent, 0);
	cfg->exchange = flag(&cli->exchange, 0);
	if (cfg->metadir)
		cfg->exchange = 1;
	autofsck_choice(cli, cfg);
	if (cli->cowextsize.set && cli->cowextsize.num && !cfg->reflink) {
		fprintf(stderr, "cowextsize not supported without reflink "
			"support\n");
		return 1;
	}
	if (cfg->inobtcount && !cfg->finobt) {
		if (cli->inobtcount.set) {
			fprintf(stderr, "inode btree counters not supported "
				"without finobt support\n");
			return 1;
		}
		cfg->inobtcount = 0;
	}
	/* Directory blocks. */
	if (cli->dirsize.set) {
		if (size_opt(&cli->dirsize, 'n', "size", cfg->blocksize,
			     cfg->sectsize, 4096, 65536, 1, &n))
			return 1;
		if ((uint64_t)n < cfg->blocksize) {
			fprintf(stderr, "illegal directory block size %lld\n",
				n);
			return 1;
		}
		cfg->dirblocksize = (uint32_t)n;
	} else {
		cfg->dirblocksize = cfg->blocksize < 4096 ? 4096 :
				    cfg->blocksize;
	}
	cfg->dirblocklog = log2_of(cfg->dirblocksize);
	if (cli->rtextsize.set) {
		if (size_opt(&cli->rtextsize, 'r', "extsize", cfg->blocksize,
			     cfg->sectsize, 4096, 1LL << 30, 0, &n))
			return 1;
		if (n % cfg->blocksize) {
			fprintf(stderr, "illegal rt extent size %lld, not a "
				"multiple of %u\n", n, cfg->blocksize);
			return 1;
		}
		cfg->rtextsize = (uint32_t)(n >> cfg->blocklog);
	}
	if (cfg->rtdev) {
		uint64_t bytes = cfg->rtdevsize;

		if (cli->rtsize.set) {
			if (size_opt(&cli->rtsize, 'r', "size", cfg->blocksize,
				     cfg->sectsize, 4096, INT64_MAX, 0, &n))
				return 1;
			if ((uint64_t)n > cfg->rtdevsize) {
				fprintf(stderr, "size %lld specified for rt "
					"subvolume is too large, maxi"
					"mum is %llu blocks\n", n,
					(unsigned long long)(cfg->rtdevsize >>
							     cfg->blocklog));
				return 1;
			}
			bytes = (uint64_t)n;
		}
		cfg->rblocks = bytes >> cfg->blocklog;
		if (!cfg->rblocks) {
			fprintf(stderr, "the realtime device %s holds no "
				"block\n", cfg->rtdev);
			return 1;
		}
	}
	/* Inodes. */
	cfg->inodesize = 512;
	if (cli->isize.set) {
		if (size_opt(&cli->isize, 'i', "size", cfg->blocksize,
			     cfg->sectsize, 256, 2048, 1, &n))
			return 1;
		cfg->inodesize = (uint32_t)n;
	} else if (cli->iperblock.set) {
		if (!is_pow2((uint64_t)cli->iperblock.num)) {
			fprintf(stderr, "Invalid value %lld for -i perblock "
				"option. Value must be a power of 2.\n",
				cli->iperblock.num);
			return 1;
		}
		cfg->inodesize = cfg->blocksize /
				 (uint32_t)cli->iperblock.num;
	}
	cfg->inodelog = log2_of(cfg->inodesize);
	if (cfg->inodesize < 512) {
		fprintf(stderr, "Minimum inode size for CRCs is 512 bytes\n");
		return 1;
	}
	if (cfg->inodesize > cfg->blocksize / 2) {
		uint32_t maxsz = cfg->blocksize / 2 < 2048 ?
				 cfg->blocksize / 2 : 2048;

		fprintf(stderr, "illegal inode size %u\n", cfg->inodesize);
		if (maxsz <= 512)
			fprintf(stderr, "allowable inode size with %u byte "
				"blocks is 512\n", cfg->blocksize);
		else
			fprintf(stderr, "allowable inode size with %u byte "
				"blocks is between 512 and %u\n",
				cfg->blocksize, maxsz);
		return 1;
	}
	return 0;
}

/* Step 4: stripe unit and width, in filesystem blocks. */
static int
stripes(const struct mkfs_cli *cli, struct mkfs_cfg *cfg,
	const struct xk_topology *topo)
{
	long long dsunit = 0, dswidth = 0, lsunit = 0, n;
	int use_dev = 0;

	if (cli->sunit.set != cli->swidth.set) {
		fprintf(stderr, "both data sunit and data swidth options must "
			"be specified\n");
		return 1;
	}
	if (cli->su.set != cli->sw.set) {
		fprintf(stderr, "both data su and data sw options must be "
			"specified\n");
		return 1;
	}
	if (cli->su.set) {
		if (size_opt(&cli->su, 'd', "su", cfg->blocksize,
			     cfg->sectsize, 0, UINT32_MAX, 0, &n))
			return 1;
		dsunit = n >> 9;
		dswidth = (n * cli->sw.num) >> 9;
		if (n * cli->sw.num > INT32_MAX) {
			fprintf(stderr, "data stripe width (%lld) is too large "
				"of a multiple of the data stripe unit "
				"(%lld)\n", n * cli->sw.num, n);
			return 1;
		}
		if (n % cfg->sectsize) {
			fprintf(stderr, "stripe unit (%lld) must be a multiple "
				"of the sector size (%u)\n", n, cfg->sectsize);
			return 1;
		}
	} else if (cli->sunit.set) {
		dsunit = cli->sunit.num;
		dswidth = cli->swidth.num;
	}
	if (dsunit > dswidth) {
		fprintf(stderr, "stripe unit (%lld) is larger than the stripe "
			"width (%lld)\n", dsunit << 9, dswidth << 9);
		return 1;
	}
	if ((dsunit && !dswidth) || (!dsunit && dswidth) ||
	    (dsunit && dswidth % dsunit)) {
		fprintf(stderr, "stripe width (%lld) must be a multiple of "
			"the stripe unit (%lld)\n", dswidth << 9, dsunit << 9);
		return 1;
	}
	/* -d noalign: no stripe alignment, whatever the device says. */
	if (!cli->su.set && !cli->sunit.set && !flag(&cli->noalign, 0) &&
	    topo->minimum_io &&
	    topo->optimal_io && topo->optimal_io > topo->minimum_io) {
		long long su = (long long)topo->minimum_io >> 9;
		long long sw = (long long)topo->optimal_io >> 9;

		/* Device topology applies from 1 GiB up, when sane. */
		if (sw % su == 0 && cfg->dblocks >= GiB(1, cfg->blocklog)) {
			dsunit = su;
			dswidth = sw;
			use_dev = 1;
		}
	}
	if (((dsunit << 9) % cfg->blocksize) ||
	    ((dswidth << 9) % cfg->blocksize)) {
		if (!use_dev) {
			fprintf(stderr, "Stripe unit(%lld) or stripe "
				"width(%lld) is not a multiple of the block "
				"size(%u)\n", dsunit << 9, dswidth << 9,
				cfg->blocksize);
			return 1;
		}
		dsunit = dswidth = 0;
	}
	cfg->dsunit = (uint32_t)((dsunit << 9) >> cfg->blocklog);
	cfg->dswidth = (uint32_t)((dswidth << 9) >> cfg->blocklog);
	if (cli->lsunit.set) {
		lsunit = cli->lsunit.num;
	} else if (cli->lsu.set) {
		if (size_opt(&cli->lsu, 'l', "su", cfg->blocksize,
			     cfg->sectsize, 512, 256 << 10, 0, &n))
			return 1;
		if (n % cfg->blocksize) {
			fprintf(stderr, "log stripe unit (%lld) must be a "
				"multiple of the block size (%u)\n", n,
				cfg->blocksize);
			return 1;
		}
		lsunit = n >> 9;
	} else if (cfg->logsectsize > XK_BBSIZE) {
		/* Big log sectors: the log stripe unit is one block. */
		lsunit = cfg->blocksize >> 9;
	}
	if ((lsunit << 9) % cfg->blocksize) {
		fprintf(stderr, "log stripe unit (%lld) must be a multiple of "
			"the block size (%u)\n", lsunit << 9, cfg->blocksize);
		return 1;
	}
	if (lsunit)
		cfg->lsunit = (uint32_t)((lsunit << 9) >> cfg->blocklog);
	else if (!cfg->logdev)
		cfg->lsunit = cfg->dsunit;	/* internal logs only */
	if ((uint64_t)cfg->lsunit * cfg->blocksize > 256 * 1024) {
		/*
		 * mkfs.xfs means to warn only about a stripe unit given
		 * with -l, but its test is always true, so it also warns
		 * about one inherited from the data stripe unit; so do we.
		 */
		fprintf(stderr, "log stripe unit (%llu bytes) is too large "
			"(maximum is 256KiB)\nlog stripe unit adjusted to "
			"32KiB\n", (unsigned long long)cfg->lsunit *
			cfg->blocksize);
		cfg->lsunit = (32 * 1024) / cfg->blocksize;
	}
	return 0;
}

/* Step 5: the default AG geometry for a size (libxfs's rules). */
static void
default_ag_geometry(unsigned int blog, uint64_t dblocks, int multidisk,
		    uint64_t *agsize, uint64_t *agcount)
{
	uint64_t blocks;
	int shift;

	if (dblocks >= TiB(32, blog)) {
		blocks = AG_MAX_BLOCKS(blog);
		goto done;
	}
	if (!multidisk) {
		if (dblocks >= TiB(4, blog)) {
			blocks = AG_MAX_BLOCKS(blog);
			goto done;
		}
		if (dblocks >= MiB(128, blog)) {
			shift = 2;
			goto calc;
		}
	}
	shift = 5;
	if (dblocks <= GiB(512, blog))
		shift--;
	if (dblocks <= GiB(8, blog))
		shift--;
	if (dblocks < MiB(128, blog))
		shift--;
	if (dblocks < MiB(64, blog))
		shift--;
	if (dblocks < MiB(32, blog))
		shift--;
calc:
	blocks = dblocks >> shift;
	if ((dblocks & ((1ULL << shift) - 1)) && blocks < AG_MAX_BLOCKS(blog))
		blocks++;
done:
	*agsize = blocks;
	*agcount = dblocks / blocks + (dblocks % blocks != 0);
}

/* -d/-l concurrency=N: 1 stands for the number of online CPUs. */
static long long
concurrency(const struct mkfs_val *v)
{
	long cpus;

	if (!v->set || v->num != 1)
		return v->set ? v->num : 0;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus < 0 ? 0 : cpus > INT_MAX ? INT_MAX : cpus;
}

/*
 * -d concurrency=N (mkfs.xfs 7.2): an AG count that is a multiple of N
 * threads, never fewer AGs than the default geometry nor AGs under
 * 4 GiB (then as many AGs of at least 4 GiB as fit, if that beats the
 * default); large filesystems add N AGs at a time until the AGs are
 * below both the maximum and the default AG size.
 */
static void
concurrency_ag_geometry(struct mkfs_cfg *cfg, long long threads)
{
	unsigned int blog = cfg->blocklog;
	uint64_t def_agsize, def_agcount, agsize;
	long long try;

	default_ag_geometry(blog, cfg->dblocks, cfg->dsunit != 0,
			    &def_agsize, &def_agcount);
	agsize = def_agsize;
	if (threads < (long long)def_agcount)
		goto out;
	try = threads;
	agsize = cfg->dblocks / (uint64_t)try;
	if (agsize < GiB(4, blog)) {
		do {
			if (--try <= (long long)def_agcount) {
				agsize = def_agsize;
				goto out;
			}
			agsize = cfg->dblocks / (uint64_t)try;
		} while (agsize < GiB(4, blog));
		goto out;
	}
	while (agsize > AG_MAX_BLOCKS(blog) && agsize > def_agsize) {
		try += threads;
		agsize = cfg->dblocks / (uint64_t)try;
	}
out:
	cfg->agsize = agsize;
	cfg->agcount = cfg->dblocks / agsize + (cfg->dblocks % agsize != 0);
}

static int
ag_geometry(const struct mkfs_cli *cli, struct mkfs_cfg *cfg)
{
	unsigned int blog = cfg->blocklog;
	uint64_t dsunit = cfg->dsunit, tmp;
	long long n, threads = concurrency(&cli->dconcurrency);

	if (threads > 0) {
		concurrency_ag_geometry(cfg, threads);
	} else if (cli->agsize.set) {
		if (size_opt(&cli->agsize, 'd', "agsize", cfg->blocksize,
			     cfg->sectsize, 16LL << 20, 1LL << 40, 0, &n))
			return 1;
		if (n % cfg->blocksize) {
			fprintf(stderr, "agsize (%s) not a multiple of fs blk "
				"size (%u)\n", cli->agsize.str,
				cfg->blocksize);
			return 1;
		}
		cfg->agsize = (uint64_t)n >> blog;
		cfg->agcount = cfg->dblocks / cfg->agsize +
			       (cfg->dblocks % cfg->agsize != 0);
	} else if (cli->agcount.set) {
		cfg->agcount = (uint64_t)cli->agcount.num;
		cfg->agsize = cfg->dblocks / cfg->agcount +
			      (cfg->dblocks % cfg->agcount != 0);
	} else {
		default_ag_geometry(blog, cfg->dblocks, dsunit != 0,
				    &cfg->agsize, &cfg->agcount);
	}
	/* Align to the stripe unit, and off a stripe-width multiple. */
	if (dsunit) {
		if (cfg->agsize % dsunit) {
			tmp = (cfg->agsize + dsunit - 1) / dsunit * dsunit;
			if (tmp > AG_MAX_BLOCKS(blog))
				tmp = cfg->agsize / dsunit * dsunit;
			cfg->agsize = tmp;
			if (!cli->agcount.set)
				cfg->agcount = cfg->dblocks / cfg->agsize +
					(cfg->dblocks % cfg->agsize != 0);
			if (cli->agsize.set)
				fprintf(stderr, "agsize rounded to %llu, "
					"sunit = %u\n",
					(unsigned long long)cfg->agsize,
					cfg->dsunit);
		}
		if (cfg->agsize % cfg->dswidth == 0 &&
		    cfg->dswidth != cfg->dsunit && cfg->agcount > 1) {
			if (cli->agcount.set || cli->agsize.set) {
				fprintf(stderr, "Warning: AG size is a "
					"multiple of stripe width.  This can "
					"cause performance\nproblems by "
					"aligning all AGs on the same disk.  "
					"To avoid this, run mkfs with\nan AG "
					"size that is one stripe unit smaller "
					"or larger, for example %llu.\n",
					(unsigned long long)(cfg->agsize -
							     dsunit));
			} else {
				tmp = cfg->agsize - dsunit;
				if (tmp < AG_MIN_BLOCKS(blog)) {
					tmp = cfg->agsize + dsunit;
					if (cfg->dblocks < cfg->agsize)
						tmp = cfg->agsize;
				}
				cfg->agsize = tmp;
				cfg->agcount = cfg->dblocks / cfg->agsize +
					(cfg->dblocks % cfg->agsize != 0);
			}
		}
	}
	/* A last AG too small to hold anything is dropped. */
	if (cfg->dblocks % cfg->agsize &&
	    cfg->dblocks % cfg->agsize < AG_MIN_BLOCKS(blog) &&
	    !cli->agcount.set) {
		cfg->dblocks = (cfg->agcount - 1) * cfg->agsize;
		cfg->agcount--;
	}
	if (cfg->agsize < AG_MIN_BLOCKS(blog)) {
		fprintf(stderr, "agsize (%llu blocks) too small, need at "
			"least %llu blocks\n",
			(unsigned long long)cfg->agsize,
			(unsigned long long)AG_MIN_BLOCKS(blog));
		return 1;
	}
	if (cfg->agsize > AG_MAX_BLOCKS(blog)) {
		fprintf(stderr, "agsize (%llu blocks) too big, maximum is "
			"%llu blocks\n", (unsigned long long)cfg->agsize,
			(unsigned long long)AG_MAX_BLOCKS(blog));
		return 1;
	}
	if (cfg->agsize > cfg->dblocks) {
		fprintf(stderr, "agsize (%llu blocks) too big, data area is "
			"%llu blocks\n", (unsigned long long)cfg->agsize,
			(unsigned long long)cfg->dblocks);
		return 1;
	}
	if (cfg->dblocks % cfg->agsize &&
	    cfg->dblocks % cfg->agsize < AG_MIN_BLOCKS(blog)) {
		fprintf(stderr, "last AG size %llu blocks too small, minimum "
			"size is %llu blocks\n",
			(unsigned long long)(cfg->dblocks % cfg->agsize),
			(unsigned long long)AG_MIN_BLOCKS(blog));
		return 1;
	}
	if (cfg->agcount > MAX_AGNUMBER + 1) {
		fprintf(stderr, "%llu allocation groups is too many, maximum "
			"is %llu\n", (unsigned long long)cfg->agcount,
			MAX_AGNUMBER + 1);
		return 1;
	}
	return 0;
}

/*
 * The root directory's inheritable hints (-d daxinherit, projinherit,
 * extszinherit, cowextsize): a zero extent size hint means none; a hint
 * is at most half an AG and fits a bmbt extent, as the kernel's inode
 * verifier requires.
 */
static int
root_hints(const struct mkfs_cli *cli, struct mkfs_cfg *cfg)
{
	uint64_t max = cfg->agsize / 2;

	if (max > XK_MAX_BMBT_EXTLEN)
		max = XK_MAX_BMBT_EXTLEN;
	cfg->daxinherit = flag(&cli->daxinherit, 0);
	cfg->projinherit = cli->projinherit.set != 0;
	cfg->projid = (uint32_t)cli->projinherit.num;
	cfg->extsize = (uint32_t)cli->extszinherit.num;
	cfg->cowextsize = (uint32_t)cli->cowextsize.num;
	if (cfg->extsize > max) {
		fprintf(stderr, "illegal extent size hint %u, must be less "
			"than %llu.\n", cfg->extsize, (unsigned long long)max);
		return 1;
	}
	if (cfg->cowextsize > max) {
		fprintf(stderr, "illegal CoW extent size hint %u, must be less "
			"than %llu.\n", cfg->cowextsize,
			(unsigned long long)max);
		return 1;
	}
	return 0;
}

/*
 * A metadata directory filesystem always has realtime groups; with no
 * realtime volume, none of them, but the size a group would have all
 * the same, as mkfs.xfs 7.2 records it: 1 TiB of blocks in whole
 * realtime extents, and the log2 of its blocks rounded up.
 */
static void
metadir_rtgroups(struct mkfs_cfg *cfg)
{
	struct xk_sb *sb = &cfg->sb;
	uint64_t blocks = (1ULL << 40) >> cfg->blocklog;

	sb->rgcount = 0;
	sb->rgextents = (uint32_t)(blocks / sb->rextsize);
	sb->rgblklog = (uint8_t)log2_roundup((uint64_t)sb->rgextents *
					     sb->rextsize);
}

/* The superblock fields that depend only on the layout so far. */
static void
sb_start(struct mkfs_cfg *cfg)
{
	struct xk_sb *sb = &cfg->sb;

	memset(sb, 0, sizeof(*sb));
	sb->magicnum = XK_SB_MAGIC;
	sb->blocksize = cfg->blocksize;
	sb->blocklog = (uint8_t)cfg->blocklog;
	sb->sectsize = (uint16_t)cfg->sectsize;
	sb->sectlog = (uint8_t)cfg->sectlog;
	sb->agblocks = (uint32_t)cfg->agsize;
	sb->agblklog = (uint8_t)log2_roundup(cfg->agsize);
	sb->agcount = (uint32_t)cfg->agcount;
	sb->dblocks = cfg->dblocks;
	sb->inodesize = (uint16_t)cfg->inodesize;
	sb->inodelog = (uint8_t)cfg->inodelog;
	sb->inopblock = (uint16_t)(cfg->blocksize / cfg->inodesize);
	sb->inopblog = (uint8_t)(cfg->blocklog - cfg->inodelog);
	sb->dirblklog = (uint8_t)(cfg->dirblocklog - cfg->blocklog);
	sb->versionnum = XK_SB_VERSION_5 | XK_SB_VERSION_NLINKBIT |
			 XK_SB_VERSION_EXTFLGBIT | XK_SB_VERSION_DIRV2BIT |
			 XK_SB_VERSION_ALIGNBIT | XK_SB_VERSION_LOGV2BIT |
			 XK_SB_VERSION_MOREBITSBIT;
	/* Inode clusters scale with the inode size on v5. */
	sb->inoalignmt = (8192 * (cfg->inodesize / 256)) >> cfg->blocklog;
	if (cfg->dsunit)
		sb->versionnum |= XK_SB_VERSION_DALIGNBIT;
	if (cfg->sectsize > XK_BBSIZE || cfg->logsectsize > XK_BBSIZE) {
		sb->versionnum |= XK_SB_VERSION_SECTORBIT;
		sb->logsectlog = (uint8_t)log2_of(cfg->logsectsize);
		sb->logsectsize = (uint16_t)cfg->logsectsize;
	}
	sb->features2 = XK_SB_VERSION2_LAZYSBCOUNTBIT |
			XK_SB_VERSION2_PROJID32BIT | XK_SB_VERSION2_CRCBIT |
			XK_SB_VERSION2_ATTR2BIT;
	sb->bad_features2 = sb->features2;
	sb->features_incompat = XK_SB_FEAT_INCOMPAT_FTYPE;
	if (cfg->finobt)
		sb->features_ro_compat |= XK_SB_FEAT_RO_COMPAT_FINOBT;
	if (cfg->rmapbt)
		sb->features_ro_compat |= XK_SB_FEAT_RO_COMPAT_RMAPBT;
	if (cfg->reflink)
		sb->features_ro_compat |= XK_SB_FEAT_RO_COMPAT_REFLINK;
	if (cfg->inobtcount)
		sb->features_ro_compat |= XK_SB_FEAT_RO_COMPAT_INOBTCNT;
	if (cfg->bigtime)
		sb->features_incompat |= XK_SB_FEAT_INCOMPAT_BIGTIME;
	if (cfg->sparse) {
		sb->spino_align = sb->inoalignmt;
		sb->inoalignmt = (XK_INODES_PER_CHUNK * cfg->inodesize) >>
				 cfg->blocklog;
		sb->features_incompat |= XK_SB_FEAT_INCOMPAT_SPINODES;
	}
	if (cfg->nrext64)
		sb->features_incompat |= XK_SB_FEAT_INCOMPAT_NREXT64;
	/*
	 * Parent pointers are attributes: ATTRBIT is set up front, as
	 * mkfs.xfs does, so the kernel need not set it on first use.
	 */
	if (cfg->parent) {
		sb->features_incompat |= XK_SB_FEAT_INCOMPAT_PARENT;
		sb->versionnum |= XK_SB_VERSION_ATTRBIT;
	}
	if (cfg->exchange)
		sb->features_incompat |= XK_SB_FEAT_INCOMPAT_EXCHRANGE;
	/* The root holds the autofsck property in an attribute. */
	if (cfg->autofsck)
		sb->versionnum |= XK_SB_VERSION_ATTRBIT;
	sb->logsunit = cfg->lsunit ? cfg->lsunit * cfg->blocksize : 1;
	/*
	 * No realtime section: the extent size given (-r extsize), else
	 * the 4 KiB minimum.
	 */
	sb->rextsize = cfg->rtextsize ? cfg->rtextsize :
		       cfg->blocksize < 4096 ? 4096u >> cfg->blocklog : 1u;
	/* A classic realtime section: all free (rtbitmap.h). */
	if (cfg->rblocks) {
		sb->rblocks = cfg->rblocks;
		sb->rextents = xk_rt_extents(cfg->rblocks, sb->rextsize);
		sb->rbmblocks = xk_rt_bitmap_blocks(sb->rextents,
						    cfg->blocksize);
		sb->rextslog = xk_rt_extslog(sb->rextents);
		sb->frextents = sb->rextents;
	}
	if (cfg->qflags) {
		sb->qflags = cfg->qflags;
		sb->versionnum |= XK_SB_VERSION_QUOTABIT;
	}
	if (cfg->metadir) {
		sb->features_incompat |= XK_SB_FEAT_INCOMPAT_METADIR;
		metadir_rtgroups(cfg);
	}
	sb->imax_pct = (uint8_t)cfg->imaxpct;
	sb->unit = cfg->dsunit;
	sb->width = cfg->dswidth;
	sb->rootino = sb->rbmino = sb->rsumino = XK_NULLFSINO;
	if (cfg->metadir)
		sb->metadirino = XK_NULLFSINO;	/* placed by the writer */
}

static uint64_t
prealloc_blocks(const struct mkfs_cfg *cfg)
{
	uint64_t b = ((3ULL * cfg->sectsize) >> cfg->blocklog) + 1 + 3;

	return b + (cfg->finobt != 0) + (cfg->rmapbt != 0) +
	       (cfg->reflink != 0);
}

/* Round the log size to the stripe unit (mkfs.xfs's align_log_size). */
static int
align_log_size(const struct mkfs_cli *cli, struct mkfs_cfg *cfg,
	       uint32_t sunit, uint64_t max_logblocks)
{
	uint64_t tmp;

	if (cfg->logblocks % sunit == 0)
		return 0;
	if (cli->logsize.set) {
		fprintf(stderr, "log size %llu is not a multiple of the log "
			"stripe unit %u\n",
			(unsigned long long)cfg->logblocks, sunit);
		return 1;
	}
	tmp = (cfg->logblocks + sunit - 1) / sunit * sunit;
	if (tmp > MAX_LOG_BLOCKS || (tmp << cfg->blocklog) > MAX_LOG_BYTES ||
	    tmp > max_logblocks)
		tmp = cfg->logblocks / sunit * sunit;
	cfg->logblocks = tmp;
	return 0;
}

static int
fsbext_in_ag(const struct mkfs_cfg *cfg, uint64_t fsb, uint64_t len)
{
	uint64_t agno = fsb >> cfg->sb.agblklog;
	uint64_t agbno = fsb & ((1ULL << cfg->sb.agblklog) - 1);
	uint64_t aglen = agno + 1 < cfg->agcount ? cfg->agsize :
			 cfg->dblocks - agno * cfg->agsize;

	return agno < cfg->agcount && agbno + len <= aglen && len > 0;
}

static int
log_min_max_check(struct mkfs_cfg *cfg, uint64_t min_logblocks)
{
	if (cfg->logblocks < min_logblocks) {
		fprintf(stderr, "log size %llu blocks too small, minimum size "
			"is %llu blocks\n", (unsigned long long)cfg->logblocks,
			(unsigned long long)min_logblocks);
		return 1;
	}
	if (cfg->logblocks > MAX_LOG_BLOCKS) {
		fprintf(stderr, "log size %llu blocks too large, maximum size "
			"is %llu blocks\n", (unsigned long long)cfg->logblocks,
			MAX_LOG_BLOCKS);
		return 1;
	}
	if ((cfg->logblocks << cfg->blocklog) > MAX_LOG_BYTES) {
		fprintf(stderr, "log size %llu bytes too large, maximum size "
			"is %llu bytes\n",
			(unsigned long long)(cfg->logblocks << cfg->blocklog),
			MAX_LOG_BYTES);
		return 1;
	}
	return 0;
}

/*
 * -l concurrency=N (mkfs.xfs 7.2), from 1 GiB up: room for N largest
 * transactions at once (all their rolls) and half as many again for the
 * background threads, within the largest log; never less than the
 * size-proportional log.
 */
static void
concurrency_logblocks(const struct mkfs_cli *cli, struct mkfs_cfg *cfg)
{
	long long threads = concurrency(&cli->lconcurrency);
	unsigned int logcount;
	uint64_t res, bytes, blocks;

	if (threads <= 0 || cfg->dblocks < GiB(1, cfg->blocklog))
		return;
	res = xk_trans_max_logres(&cfg->sb, &logcount);
	bytes = res * (logcount ? logcount : 1) * 3 * (uint64_t)threads / 2;
	blocks = bytes >> cfg->blocklog;
	if (blocks > (MAX_LOG_BYTES >> cfg->blocklog))
		blocks = MAX_LOG_BYTES >> cfg->blocklog;
	if (blocks > cfg->logblocks)
		cfg->logblocks = blocks;
}

/* -l size=, into cfg->logblocks; 0, or 1 with the message printed. */
static int
log_size_opt(const struct mkfs_cli *cli, struct mkfs_cfg *cfg)
{
	long long n;

	if (size_opt(&cli->logsize, 'l', "size", cfg->blocksize,
		     cfg->sectsize, 2LL << 20, (long long)MAX_LOG_BYTES, 0, &n))
		return 1;
	if (n % 512) {
		fprintf(stderr, "illegal log length %lld, not a multiple of "
			"512\n", n);
		return 1;
	}
	cfg->logblocks = (uint64_t)n >> cfg->blocklog;
	if ((uint64_t)n % cfg->blocksize)
		fprintf(stderr, "warning: log length %lld not a multiple of "
			"%u, truncated to %llu\n", n, cfg->blocksize,
			(unsigned long long)(cfg->logblocks << cfg->blocklog));
	return 0;
}

/*
 * Step 7 for a log on its own device, in mkfs.xfs's order: its size is
 * size= (within the device) or the whole device; logstart is 0.
 */
static int
external_log_geometry(const struct mkfs_cli *cli, struct mkfs_cfg *cfg,
		      uint64_t min_logblocks)
{
	uint64_t devblocks = cfg->logdevsize >> cfg->blocklog;

	if (cli->logsize.set) {
		if (log_size_opt(cli, cfg))
			return 1;
		if (cfg->logblocks > devblocks) {
			fprintf(stderr, "size %s specified for log subvolume "
				"is too large, maximum is %llu blocks\n",
				cli->logsize.str,
				(unsigned long long)devblocks);
			return 1;
		}
	} else {
		if (!devblocks) {
			fprintf(stderr, "unable to get size of the log "
				"subvolume.\n");
			return 1;
		}
		cfg->logblocks = devblocks;
	}
	if (min_logblocks > cfg->logblocks) {
		fprintf(stderr, "external log device size %llu blocks too "
			"small, must be at least %llu blocks\n",
			(unsigned long long)cfg->logblocks,
			(unsigned long long)min_logblocks);
		return 1;
	}
	cfg->logstart = 0;
	cfg->logagno = 0;
	if (cfg->lsunit &&
	    align_log_size(cli, cfg, cfg->lsunit, MAX_LOG_BLOCKS))
		return 1;
	return log_min_max_check(cfg, min_logblocks);
}

/* Step 7. */
static int
log_geometry(const struct mkfs_cli *cli, struct mkfs_cfg *cfg)
{
	uint64_t min_logblocks, max_logblocks, pre = prealloc_blocks(cfg);
	uint64_t hdr_blocks = ((4ULL * cfg->sectsize) + cfg->blocksize - 1) >>
			      cfg->blocklog;
	uint32_t sunit;

	min_logblocks = xk_log_min_blocks(&cfg->sb);
	if (min_logblocks < MIN_LOG_BLOCKS)
		min_logblocks = MIN_LOG_BLOCKS;
	if (!cli->logsize.set && cfg->dblocks >= GiB(1, cfg->blocklog) &&
	    min_logblocks < (MIN_LOG_BYTES >> cfg->blocklog))
		min_logblocks = MIN_LOG_BYTES >> cfg->blocklog;
	if (cfg->logdev)
		return external_log_geometry(cli, cfg, min_logblocks);
	/* One block short of the AG less its headers and roots. */
	max_logblocks = cfg->agsize - (hdr_blocks + 4 + 3 +
		(cfg->finobt != 0) + (cfg->rmapbt != 0) +
		(cfg->reflink != 0)) - 1;
	if (max_logblocks < min_logblocks) {
		fprintf(stderr, "max log size %llu smaller than min log size "
			"%llu, filesystem is too small\n",
			(unsigned long long)max_logblocks,
			(unsigned long long)min_logblocks);
		return 1;
	}
	if (cli->logsize.set) {
		if (log_size_opt(cli, cfg))
			return 1;
		if (cfg->logblocks > max_logblocks) {
			fprintf(stderr, "internal log size %llu too large, "
				"must be less than %llu\n",
				(unsigned long long)cfg->logblocks,
				(unsigned long long)max_logblocks);
			return 1;
		}
	} else {
		cfg->logblocks = ((cfg->dblocks << cfg->blocklog) / 2048) >>
				 cfg->blocklog;
		concurrency_logblocks(cli, cfg);
		if (cfg->logblocks < MiB(64, cfg->blocklog))
			cfg->logblocks = MiB(64, cfg->blocklog);
		if (cfg->dblocks < MiB(300, cfg->blocklog))
			cfg->logblocks = min_logblocks;
		if (cfg->logblocks < min_logblocks)
			cfg->logblocks = min_logblocks;
		if (cfg->logblocks > max_logblocks)
			cfg->logblocks = max_logblocks;
		if (cfg->logblocks > MAX_LOG_BLOCKS)
			cfg->logblocks = MAX_LOG_BLOCKS;
		if ((cfg->logblocks << cfg->blocklog) > MAX_LOG_BYTES)
			cfg->logblocks = MAX_LOG_BYTES >> cfg->blocklog;
		if (log_min_max_check(cfg, min_logblocks))
			return 1;
	}
	if (cfg->logblocks > cfg->agsize - pre) {
		fprintf(stderr, "internal log size %llu too large, must fit "
			"in allocation group\n",
			(unsigned long long)cfg->logblocks);
		return 1;
	}
	if (cli->logagno.set) {
		if ((uint64_t)cli->logagno.num >= cfg->agcount) {
			fprintf(stderr, "log ag number %lld too large, must be "
				"less than %llu\n", cli->logagno.num,
				(unsigned long long)cfg->agcount);
			return 1;
		}
		cfg->logagno = (uint32_t)cli->logagno.num;
	} else {
		cfg->logagno = (uint32_t)(cfg->agcount / 2);
	}
	if (cfg->logagno == 0) {
		/* Leave room in AG 0 for the root inode chunk. */
		uint64_t backoff = (4ULL * XK_INODES_PER_CHUNK *
				    cfg->inodesize) >> cfg->blocklog;

		if (backoff < 2ULL * cfg->dsunit)
			backoff = 2ULL * cfg->dsunit;
		max_logblocks -= backoff;
		if (cli->logsize.set && cfg->logblocks > max_logblocks) {
			fprintf(stderr, "internal log size %llu too large, "
				"must be less than %llu\n",
				(unsigned long long)cfg->logblocks,
				(unsigned long long)max_logblocks);
			return 1;
		}
		if (cfg->logblocks > max_logblocks)
			cfg->logblocks = max_logblocks;
	}
	cfg->logstart = ((uint64_t)cfg->logagno << cfg->sb.agblklog) + pre;
	sunit = cfg->lsunit ? cfg->lsunit : cfg->dsunit;
	if (sunit) {
		if (cfg->logstart % sunit)
			cfg->logstart = (cfg->logstart + sunit - 1) / sunit *
					sunit;
		if (!fsbext_in_ag(cfg, cfg->logstart, 1)) {
			fprintf(stderr, "Due to stripe alignment, the internal "
				"log start (%llu) cannot be aligned\nwithin an "
				"allocation group.\n",
				(unsigned long long)cfg->logstart);
			return 1;
		}
		if (align_log_size(cli, cfg, sunit, max_logblocks))
			return 1;
		if (!fsbext_in_ag(cfg, cfg->logstart, cfg->logblocks) &&
		    cfg->logblocks > sunit)
			cfg->logblocks -= sunit;
		if (!fsbext_in_ag(cfg, cfg->logstart, cfg->logblocks)) {
			fprintf(stderr, "Due to stripe alignment, the internal "
				"log size (%llu) is too large.\nMust fit "
				"within "
				"an allocation group.\n",
				(unsigned long long)cfg->logblocks);
			return 1;
		}
	}
	return log_min_max_check(cfg, min_logblocks);
}

/* Step 8. */
static int
supported(const struct mkfs_cli *cli, const struct mkfs_cfg *cfg)
{
	if (cli->unsupported)
		return 0;
	/*
	 * fstests' exemption, as in mkfs.xfs 6.1 and 7.2: with all three of
	 * its variables set, its small test filesystems are made silently.
	 */
	if (getenv("TEST_DIR") && getenv("TEST_DEV") && getenv("QA_CHECK_FS"))
		return 0;
	if (cfg->dblocks < MiB(300, cfg->blocklog)) {
		fprintf(stderr, "Filesystem must be larger than 300MB.\n");
		return 1;
	}
	if (cfg->logblocks < MiB(64, cfg->blocklog)) {
		fprintf(stderr, "Log size must be at least 64MB.\n");
		return 1;
	}
	if (cfg->agcount < 2) {
		fprintf(stderr, "Filesystem must have at least 2 superblocks "
			"for redundancy!\n");
		return 1;
	}
	return 0;
}

/* Device: size and topology, without writing anything. */
static int
device_info(const struct mkfs_cli *cli, struct mkfs_cfg *cfg,
	    struct xk_topology *topo)
{
	struct stat st;
	struct xk_dev *dev;
	int err;

	memset(topo, 0, sizeof(*topo));
	topo->logical_sector = 512;
	topo->physical_sector = 512;
	cfg->dev = cli->dev;
	if (stat(cli->dev, &st) < 0) {
		if (errno == ENOENT && cli->dsize.set) {
			cfg->is_file = 1;
			cfg->devsize = 0;
			return 0;
		}
		fprintf(stderr, "Error accessing specified device %s: %s\n",
			cli->dev, strerror(errno));
		return 1;
	}
	if (S_ISREG(st.st_mode)) {
		cfg->is_file = 1;
		cfg->devsize = (uint64_t)st.st_size;
		return 0;
	}
	if (!S_ISBLK(st.st_mode)) {
		fprintf(stderr, "%s is neither a regular file nor a block "
			"device\n", cli->dev);
		return 1;
	}
	if (cli->dfile) {
		fprintf(stderr, "-d file was given but %s is a block device\n",
			cli->dev);
		return 1;
	}
	err = xk_dev_open(cli->dev, XK_DEV_RDONLY, &dev);
	if (err) {
		fprintf(stderr, "cannot open %s: %s\n", cli->dev,
			xk_strerror(err));
		return 1;
	}
	cfg->devsize = dev->size;
	*topo = dev->topo;
	xk_dev_close(dev);
	return 0;
}

/*
 * The size of a device beside the data device (-l logdev=, -r rtdev=):
 * it must exist (mkfs.xfs does not create it) and not be the data
 * device.
 */
static int
side_dev_size(const struct mkfs_cfg *cfg, const char *path, const char *what,
	      char opt, const char *name, uint64_t *size)
{
	struct stat st, dst;
	struct xk_dev *dev;
	int err;

	if (!path || !*path) {
		fprintf(stderr, "-%c %s option requires a value\n", opt, name);
		return 1;
	}
	if (stat(path, &st) < 0) {
		fprintf(stderr, "Error accessing specified device %s: %s\n",
			path, strerror(errno));
		return 1;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		fprintf(stderr, "%s is neither a regular file nor a block "
			"device\n", path);
		return 1;
	}
	if (!stat(cfg->dev, &dst) &&
	    (S_ISBLK(st.st_mode) ? S_ISBLK(dst.st_mode) &&
	     st.st_rdev == dst.st_rdev :
	     st.st_dev == dst.st_dev && st.st_ino == dst.st_ino)) {
		fprintf(stderr, "the %s device %s is the data device\n",
			what, path);
		return 1;
	}
	if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		return 0;
	}
	err = xk_dev_open(path, XK_DEV_RDONLY, &dev);
	if (err) {
		fprintf(stderr, "cannot open %s: %s\n", path,
			xk_strerror(err));
		return 1;
	}
	*size = dev->size;
	xk_dev_close(dev);
	return 0;
}

/*
 * -l logdev=: the device must exist (mkfs.xfs does not create it), a
 * regular file or a block device, and not be the data device.
 */
static int
logdev_info(const struct mkfs_cli *cli, struct mkfs_cfg *cfg)
{
	if (!cli->logdev.set)
		return 0;
	if (cli->loginternal.set && cli->loginternal.num) {
		fprintf(stderr, "can't have both external and internal "
			"logs\n");
		return 1;
	}
	cfg->logdev = cli->logdev.str;
	return side_dev_size(cfg, cfg->logdev, "log", 'l', "logdev",
			     &cfg->logdevsize);
}

/*
 * -r rtdev=: as -l logdev=, the existing file or device, its size; the
 * realtime section needs no reverse mapping or reflink here (mkfs.xfs
 * turns them off without realtime groups, and refuses them asked for).
 */
static int
rtdev_info(const struct mkfs_cli *cli, struct mkfs_cfg *cfg)
{
	if (!cli->rtdev.set) {
		if (cli->rtsize.set) {
			fprintf(stderr, "size specified for non-existent rt "
				"subvolume\n");
			return 1;
		}
		return 0;
	}
	cfg->rtdev = cli->rtdev.str;
	return side_dev_size(cfg, cfg->rtdev, "realtime", 'r', "rtdev",
			     &cfg->rtdevsize);
}

int
mkfs_geometry(const struct mkfs_cli *cli, struct mkfs_cfg *cfg)
{
	struct xk_topology topo;
	long long n;

	memset(cfg, 0, sizeof(*cfg));
	if (device_info(cli, cfg, &topo) || logdev_info(cli, cfg) ||
	    rtdev_info(cli, cfg) ||
	    basic_sizes(cli, cfg, &topo))
		return 1;
	/* Step 4: data size. */
	if (cli->dsize.set) {
		if (size_opt(&cli->dsize, 'd', "size", cfg->blocksize,
			     cfg->sectsize, 16LL << 20, INT64_MAX, 0, &n))
			return 1;
		if (n % 512) {
			fprintf(stderr, "illegal data length %lld, not a "
				"multiple of 512\n", n);
			return 1;
		}
		cfg->dblocks = (uint64_t)n >> cfg->blocklog;
		if ((uint64_t)n % cfg->blocksize)
			fprintf(stderr, "warning: data length %lld not a "
				"multiple of %u, truncated to %llu\n", n,
				cfg->blocksize, (unsigned long long)
				(cfg->dblocks << cfg->blocklog));
		if (!cfg->is_file &&
		    cfg->dblocks > cfg->devsize >> cfg->blocklog) {
			fprintf(stderr, "size %s specified for data subvolume "
				"is too large, maximum is %llu blocks\n",
				cli->dsize.str, (unsigned long long)
				(cfg->devsize >> cfg->blocklog));
			return 1;
		}
	} else {
		cfg->dblocks = cfg->devsize >> cfg->blocklog;
	}
	if (cfg->dblocks < AG_MIN_BLOCKS(cfg->blocklog)) {
		fprintf(stderr, "size %llu of data subvolume is too small, "
			"minimum %llu blocks\n",
			(unsigned long long)cfg->dblocks,
			(unsigned long long)AG_MIN_BLOCKS(cfg->blocklog));
		return 1;
	}
	if (stripes(cli, cfg, &topo) || ag_geometry(cli, cfg) ||
	    root_hints(cli, cfg))
		return 1;
	/* Step 6. */
	if (cli->imaxpct.set)
		cfg->imaxpct = (uint32_t)cli->imaxpct.num;
	else if (cfg->dblocks < TiB(1, cfg->blocklog))
		cfg->imaxpct = 25;
	else if (cfg->dblocks < TiB(50, cfg->blocklog))
		cfg->imaxpct = 5;
	else
		cfg->imaxpct = 1;
	sb_start(cfg);
	if (log_geometry(cli, cfg))
		return 1;
	/* Finish the superblock. */
	if (cli->uuid.set) {
		if (uuid_parse(cli->uuid.str, cfg->uuid)) {
			fprintf(stderr, "Invalid value %s for -m uuid option. "
				"Not a valid UUID.\n", cli->uuid.str);
			return 1;
		}
	} else {
		uuid_generate(cfg->uuid);
	}
	if (cli->label)
		memcpy(cfg->label, cli->label, strlen(cli->label));
	memcpy(cfg->sb.fname, cfg->label, 12);
	memcpy(cfg->sb.uuid, cfg->uuid, 16);
	cfg->sb.dblocks = cfg->dblocks;
	cfg->sb.logstart = cfg->logstart;
	cfg->sb.logblocks = (uint32_t)cfg->logblocks;
	return supported(cli, cfg);
}
