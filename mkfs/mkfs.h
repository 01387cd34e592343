/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xfskit-mkfs internals.  The tool is a pipeline: the command line (and
 * the -c configuration file) fill struct mkfs_cli with raw values; the
 * geometry step validates them against the device and derives struct
 * mkfs_cfg, the complete layout, which is const from then on; the report
 * prints it; the writer lays the filesystem down through libfs.
 */
#ifndef XFSKIT_MKFS_H
#define XFSKIT_MKFS_H

#include <stdint.h>
#include <stdio.h>

#include <xfskit/libfs.h>

/* An option value: given at all, and from where (file values lose). */
struct mkfs_val {
	int		set;		/* 0 no, 1 config file, 2 CLI */
	long long	num;
	const char	*str;		/* raw text of a size */
};

/* -p: populate from a directory, a protofile or a tar archive. */
struct pop_ctx;
struct mkfs_populate {
	const char	*src;		/* NULL: no -p */
	int		kind;		/* enum pop_kind (populate.h) */
	int64_t		uid, gid;	/* -1: keep the source's */
	struct pop_ctx	*ctx;		/* parsed protofile */
};

/* Raw values straight from the command line and the config file. */
struct mkfs_cli {
	const char	*dev;		/* -d name= or the argument */
	int		dfile;		/* -d file: a regular file */
	struct mkfs_val	bsize;
	struct mkfs_val	agcount, agsize, dsize, su, sw, sunit, swidth, noalign;
	struct mkfs_val	isize, iperblock, imaxpct, ialign, sparse, nrext64;
	struct mkfs_val	exchange;
	/* Hints for the root directory, which it passes on (-d). */
	struct mkfs_val	daxinherit, projinherit, extszinherit, cowextsize;
	/* -d / -l concurrency: 1 means the number of online CPUs. */
	struct mkfs_val	dconcurrency, lconcurrency;
	struct mkfs_val	iattr, projid32bit;	/* forced on by v5 */
	struct mkfs_val	logsize, loginternal, lsunit, lsu, logversion;
	struct mkfs_val	logagno, lazycount;
	struct mkfs_val	logdev, lfile;	/* -l logdev=, -l file */
	struct mkfs_val	crc, finobt, rmapbt, reflink, bigtime;
	struct mkfs_val	inobtcount, metadir;
	/* -m uquota ... pqnoenforce: quota flags in the superblock. */
	struct mkfs_val	uquota, gquota, pquota;
	struct mkfs_val	uqnoenforce, gqnoenforce, pqnoenforce;
	struct mkfs_val	autofsck;	/* str: none/check/optimize/repair */
	struct mkfs_val	uuid;
	struct mkfs_val	dirsize, ftype, parent;
	struct mkfs_val	sectsize;
	struct mkfs_val	rtextsize;	/* -r extsize */
	struct mkfs_val	rtdev, rtsize;	/* -r rtdev=, size= */
	const char	*label;
	const char	*config;	/* -c options= */
	int		dry_run, quiet, force, nodiscard, unsupported;
	int		ssize_given;	/* -s size= (the log's too) */
	struct mkfs_populate pop;	/* -p */
};

/* The validated, derived layout: what gets written. */
struct mkfs_cfg {
	const char	*dev;
	int		is_file;	/* regular file, not a device */
	uint64_t	devsize;	/* bytes */
	const char	*logdev;	/* external log's device, or NULL */
	uint64_t	logdevsize;	/* its bytes */
	const char	*rtdev;		/* realtime device, or NULL */
	uint64_t	rtdevsize;	/* its bytes */
	uint64_t	rblocks;	/* realtime section blocks, or 0 */
	uint32_t	logsectsize;	/* the log's sector size */
	uint32_t	blocksize, blocklog;
	uint32_t	sectsize, sectlog;
	uint32_t	inodesize, inodelog;
	uint32_t	dirblocksize, dirblocklog;
	uint64_t	dblocks;
	uint64_t	agsize;
	uint64_t	agcount;
	uint32_t	dsunit, dswidth;	/* fs blocks */
	uint32_t	lsunit;			/* fs blocks */
	uint64_t	logblocks;
	uint64_t	logstart;		/* fsblock */
	uint32_t	logagno;
	uint32_t	imaxpct;
	uint32_t	rtextsize;		/* fs blocks; 0: default */
	int		crc, finobt, rmapbt, reflink, bigtime, inobtcount;
	int		sparse, nrext64, ialign;
	int		parent;		/* parent pointers (-n parent=1) */
	int		exchange;	/* exchange-range (-i exchange=1) */
	int		metadir;	/* metadata directory tree (-m metadir=1) */
	uint16_t	qflags;		/* sb_qflags (-m uquota ...) */
	/* The xfs:autofsck property stored on the root; NULL: none. */
	const char	*autofsck;
	/* The root directory's inheritable hints (-d ...inherit=). */
	int		daxinherit, projinherit;
	uint32_t	projid, extsize, cowextsize;
	uint8_t		uuid[16];
	char		label[12];
	struct xk_sb	sb;		/* final primary superblock */
};

#define MKFS_ERRMSG_LEN	512

/* options.c */
void mkfs_usage(FILE *f);
/* Parse argv into cli; 0, or 1 with the message already printed. */
int mkfs_parse_args(int argc, char **argv, struct mkfs_cli *cli);
/* Parse one "name=value" suboption of option letter opt (file or CLI). */
int mkfs_set_subopt(struct mkfs_cli *cli, char opt, const char *name,
		    const char *value, int from_file);
/* A size with an optional b/s/k/m/g/t/p/e suffix; -1 when invalid. */
long long mkfs_cvtnum(uint32_t blocksize, uint32_t sectsize, const char *s);

/* config.c */
int mkfs_config_load(struct mkfs_cli *cli, const char *path);

/* geometry.c: validate and derive; prints the precise reason, returns 1. */
int mkfs_geometry(const struct mkfs_cli *cli, struct mkfs_cfg *cfg);
/* report.c */
void mkfs_report(FILE *f, const struct mkfs_cfg *cfg);

/* write.c */
int mkfs_probe_existing(const struct mkfs_cfg *cfg, char *what, size_t len);
int mkfs_write(const struct mkfs_cfg *cfg, int discard);

/* write.c: a new inode chunk in ai (see there), its first `used` in use. */
struct xk_ag_init;
int mkfs_plan_chunk(const struct xk_mount *mp, struct xk_ag_init *ai,
		    uint32_t used);

/* metadir.c: the metadata directory tree (-m metadir=1). */
struct mkfs_metadir {
	uint64_t	rootino;	/* the tree's root: sb_metadirino */
	uint64_t	rtgroupsino;	/* /rtgroups */
	uint32_t	rtgroups_agno;	/* its AG */
	int		new_chunk;	/* in a chunk of its own there */
};
/* Plan the tree beside the root's chunk in ags[0]: 0 or -ENOSPC. */
int mkfs_metadir_plan(const struct xk_mount *mp, struct xk_ag_init *ags,
		      uint32_t agcount, uint64_t rootino,
		      struct mkfs_metadir *md);
/* Write its inodes (and /rtgroups' chunk when new): 0 or an errno. */
int mkfs_metadir_write(struct xk_mount *mp, const struct mkfs_cfg *cfg,
		       const struct xk_ag_init *ags, uint32_t agcount,
		       const struct mkfs_metadir *md, int64_t now_sec,
		       uint32_t now_nsec);

/* populate.c: -p */
int mkfs_parse_populate(struct mkfs_populate *p, char *arg);
int mkfs_populate_prepare(struct mkfs_populate *p);
int mkfs_populate(const struct mkfs_cfg *cfg, struct mkfs_populate *p,
		  int quiet);
void mkfs_populate_release(struct mkfs_populate *p);
/* Now, or SOURCE_DATE_EPOCH when set (reproducible images). */
int pop_time_now(int64_t *sec, uint32_t *nsec, int *from_sde);

#endif /* XFSKIT_MKFS_H */
