/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The superblock as stored on disk (v5 only), its feature bits, and the
 * decoded in-core form.  The primary lives in sector 0 of AG 0; every AG
 * starts with a secondary copy.  Field names follow the XFS format
 * document so the two can be read side by side.
 */
#ifndef XFSKIT_FORMAT_SB_H
#define XFSKIT_FORMAT_SB_H

#include <stddef.h>
#include <stdint.h>
#include <xfskit/endian.h>

#define XK_SB_MAGIC		0x58465342	/* "XFSB" */
#define XK_BBSHIFT		9		/* basic block: 512 bytes */
#define XK_BBSIZE		(1 << XK_BBSHIFT)

/* sb_versionnum */
#define XK_SB_VERSION_NUMBITS	0x000f
#define XK_SB_VERSION_5		5
#define XK_SB_VERSION_ATTRBIT	0x0010
#define XK_SB_VERSION_NLINKBIT	0x0020
#define XK_SB_VERSION_QUOTABIT	0x0040
#define XK_SB_VERSION_ALIGNBIT	0x0080
#define XK_SB_VERSION_DALIGNBIT	0x0100
#define XK_SB_VERSION_SHAREDBIT	0x0200
#define XK_SB_VERSION_LOGV2BIT	0x0400
#define XK_SB_VERSION_SECTORBIT	0x0800
#define XK_SB_VERSION_EXTFLGBIT	0x1000
#define XK_SB_VERSION_DIRV2BIT	0x2000
#define XK_SB_VERSION_BORGBIT	0x4000
#define XK_SB_VERSION_MOREBITSBIT 0x8000

/* sb_features2 */
#define XK_SB_VERSION2_LAZYSBCOUNTBIT	0x00000002
#define XK_SB_VERSION2_ATTR2BIT		0x00000008
#define XK_SB_VERSION2_PARENTBIT	0x00000010
#define XK_SB_VERSION2_PROJID32BIT	0x00000080
#define XK_SB_VERSION2_CRCBIT		0x00000100
#define XK_SB_VERSION2_FTYPE		0x00000200

/* sb_features_ro_compat */
#define XK_SB_FEAT_RO_COMPAT_FINOBT	(1u << 0)
#define XK_SB_FEAT_RO_COMPAT_RMAPBT	(1u << 1)
#define XK_SB_FEAT_RO_COMPAT_REFLINK	(1u << 2)
#define XK_SB_FEAT_RO_COMPAT_INOBTCNT	(1u << 3)
#define XK_SB_FEAT_RO_COMPAT_ALL	0x0000000fu

/* sb_features_incompat */
#define XK_SB_FEAT_INCOMPAT_FTYPE	(1u << 0)
#define XK_SB_FEAT_INCOMPAT_SPINODES	(1u << 1)
#define XK_SB_FEAT_INCOMPAT_META_UUID	(1u << 2)
#define XK_SB_FEAT_INCOMPAT_BIGTIME	(1u << 3)
#define XK_SB_FEAT_INCOMPAT_NEEDSREPAIR	(1u << 4)
#define XK_SB_FEAT_INCOMPAT_NREXT64	(1u << 5)
#define XK_SB_FEAT_INCOMPAT_EXCHRANGE	(1u << 6)
#define XK_SB_FEAT_INCOMPAT_PARENT	(1u << 7)
#define XK_SB_FEAT_INCOMPAT_METADIR	(1u << 8)
/* What libfs understands; anything else refuses the filesystem. */
#define XK_SB_FEAT_INCOMPAT_KNOWN	0x000001ffu

/* sb_features_log_incompat */
#define XK_SB_FEAT_LOG_INCOMPAT_XATTRS	(1u << 0)
/* Mapping-exchange intents (kernels after 6.1; log/recover.c replays them). */
#define XK_SB_FEAT_LOG_INCOMPAT_EXCHMAPS (1u << 1)
#define XK_SB_FEAT_LOG_INCOMPAT_KNOWN	0x00000001u

/* sb_qflags */
#define XK_UQUOTA_ACCT		0x0001
#define XK_UQUOTA_ENFD		0x0002
#define XK_UQUOTA_CHKD		0x0004
#define XK_PQUOTA_ACCT		0x0008
#define XK_OQUOTA_ENFD		0x0010
#define XK_OQUOTA_CHKD		0x0020
#define XK_GQUOTA_ACCT		0x0040
#define XK_GQUOTA_ENFD		0x0080
#define XK_GQUOTA_CHKD		0x0100
#define XK_PQUOTA_ENFD		0x0200
#define XK_PQUOTA_CHKD		0x0400

#define XK_NULLFSINO		((uint64_t)-1)
#define XK_NULLFSBLOCK		((uint64_t)-1)
#define XK_NULLAGBLOCK		((uint32_t)-1)
#define XK_NULLAGINO		((uint32_t)-1)

/* Limits the format and the kernel place on geometry. */
#define XK_MIN_BLOCKSIZE_LOG	9
#define XK_MAX_BLOCKSIZE_LOG	16
#define XK_MIN_SECTORSIZE_LOG	9
#define XK_MAX_SECTORSIZE_LOG	15
#define XK_DINODE_MIN_LOG	8
#define XK_DINODE_MAX_LOG	11
#define XK_MIN_AG_BLOCKS	64
#define XK_MAX_AG_BYTES		(1ULL << 40)	/* 1 TiB */
#define XK_MAX_DBLOCKS_LOG	54
#define XK_MAX_AGNUMBER		((uint32_t)-1 - 1)

/* The superblock as it is on disk: 264 bytes. */
struct xk_dsb {
	xk_be32	sb_magicnum;
	xk_be32	sb_blocksize;
	xk_be64	sb_dblocks;
	xk_be64	sb_rblocks;
	xk_be64	sb_rextents;
	uint8_t	sb_uuid[16];
	xk_be64	sb_logstart;
	xk_be64	sb_rootino;
	xk_be64	sb_rbmino;
	xk_be64	sb_rsumino;
	xk_be32	sb_rextsize;
	xk_be32	sb_agblocks;
	xk_be32	sb_agcount;
	xk_be32	sb_rbmblocks;
	xk_be32	sb_logblocks;
	xk_be16	sb_versionnum;
	xk_be16	sb_sectsize;
	xk_be16	sb_inodesize;
	xk_be16	sb_inopblock;
	char	sb_fname[12];
	uint8_t	sb_blocklog;
	uint8_t	sb_sectlog;
	uint8_t	sb_inodelog;
	uint8_t	sb_inopblog;
	uint8_t	sb_agblklog;
	uint8_t	sb_rextslog;
	uint8_t	sb_inprogress;
	uint8_t	sb_imax_pct;
	xk_be64	sb_icount;
	xk_be64	sb_ifree;
	xk_be64	sb_fdblocks;
	xk_be64	sb_frextents;
	xk_be64	sb_uquotino;
	xk_be64	sb_gquotino;
	xk_be16	sb_qflags;
	uint8_t	sb_flags;
	uint8_t	sb_shared_vn;
	xk_be32	sb_inoalignmt;
	xk_be32	sb_unit;
	xk_be32	sb_width;
	uint8_t	sb_dirblklog;
	uint8_t	sb_logsectlog;
	xk_be16	sb_logsectsize;
	xk_be32	sb_logsunit;
	xk_be32	sb_features2;
	xk_be32	sb_bad_features2;
	xk_be32	sb_features_compat;
	xk_be32	sb_features_ro_compat;
	xk_be32	sb_features_incompat;
	xk_be32	sb_features_log_incompat;
	uint8_t	sb_crc[4];		/* CRC32c, little-endian */
	xk_be32	sb_spino_align;
	xk_be64	sb_pquotino;
	xk_be64	sb_lsn;
	uint8_t	sb_meta_uuid[16];
	/* METADIR filesystems; zero without the feature. */
	xk_be64	sb_metadirino;		/* root of the metadata tree */
	xk_be32	sb_rgcount;		/* realtime groups */
	xk_be32	sb_rgextents;		/* rt extents per realtime group */
	uint8_t	sb_rgblklog;		/* log2 of rgextents * rextsize */
	uint8_t	sb_pad[7];
};

_Static_assert(sizeof(struct xk_dsb) == 288, "xk_dsb: on-disk size");
_Static_assert(offsetof(struct xk_dsb, sb_metadirino) == 264,
	       "xk_dsb: metadirino offset");
_Static_assert(offsetof(struct xk_dsb, sb_crc) == 224, "xk_dsb: crc offset");
_Static_assert(offsetof(struct xk_dsb, sb_lsn) == 240, "xk_dsb: lsn offset");
_Static_assert(offsetof(struct xk_dsb, sb_features2) == 200,
	       "xk_dsb: features2 offset");

/* The superblock decoded to host order: what every tool works with. */
struct xk_sb {
	uint32_t magicnum;
	uint32_t blocksize;
	uint64_t dblocks;
	uint64_t rblocks;
	uint64_t rextents;
	uint8_t	uuid[16];
	uint64_t logstart;
	uint64_t rootino;
	uint64_t rbmino;
	uint64_t rsumino;
	uint32_t rextsize;
	uint32_t agblocks;
	uint32_t agcount;
	uint32_t rbmblocks;
	uint32_t logblocks;
	uint16_t versionnum;
	uint16_t sectsize;
	uint16_t inodesize;
	uint16_t inopblock;
	char	fname[12];
	uint8_t	blocklog;
	uint8_t	sectlog;
	uint8_t	inodelog;
	uint8_t	inopblog;
	uint8_t	agblklog;
	uint8_t	rextslog;
	uint8_t	inprogress;
	uint8_t	imax_pct;
	uint64_t icount;
	uint64_t ifree;
	uint64_t fdblocks;
	uint64_t frextents;
	uint64_t uquotino;
	uint64_t gquotino;
	uint16_t qflags;
	uint8_t	flags;
	uint8_t	shared_vn;
	uint32_t inoalignmt;
	uint32_t unit;
	uint32_t width;
	uint8_t	dirblklog;
	uint8_t	logsectlog;
	uint16_t logsectsize;
	uint32_t logsunit;
	uint32_t features2;
	uint32_t bad_features2;
	uint32_t features_compat;
	uint32_t features_ro_compat;
	uint32_t features_incompat;
	uint32_t features_log_incompat;
	uint32_t crc;
	uint32_t spino_align;
	uint64_t pquotino;
	uint64_t lsn;
	uint8_t	meta_uuid[16];
	uint64_t metadirino;
	uint32_t rgcount;
	uint32_t rgextents;
	uint8_t	rgblklog;
	uint8_t	pad[7];
};

void xk_sb_decode(struct xk_sb *to, const struct xk_dsb *from);
void xk_sb_encode(struct xk_dsb *to, const struct xk_sb *from);
/* Unset (0) quota inodes as NULLFSINO, as re-encoders write them. */
void xk_dsb_null_quota_inodes(struct xk_dsb *d);

static inline int xk_sb_version(const struct xk_sb *sb)
{
	return sb->versionnum & XK_SB_VERSION_NUMBITS;
}

static inline int xk_sb_has_ro_compat(const struct xk_sb *sb, uint32_t f)
{
	return (sb->features_ro_compat & f) != 0;
}

static inline int xk_sb_has_incompat(const struct xk_sb *sb, uint32_t f)
{
	return (sb->features_incompat & f) != 0;
}

#endif /* XFSKIT_FORMAT_SB_H */
