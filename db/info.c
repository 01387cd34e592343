// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Filesystem-level information: label, uuid, version (feature names),
 * hash (directory/attribute name hash), convert (address units) and frag
 * (extents per fork, from every allocated inode found through the inobt,
 * counted as xfs_db counts them).
 * freesp has a file of its own.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include <xfskit/ag.h>
#include <xfskit/fork.h>
#include <xfskit/format/da.h>
#include <xfskit/meta.h>

#include "db.h"

/* label and uuid write only with an argument: the -x/-r rule then. */
static int
may_write(struct db_ctx *c, const char *cmd)
{
	if (c->readonly) {
		db_err(c, "%s: not allowed on a filesystem opened read-only "
		       "(-r)", cmd);
		return 0;
	}
	if (!c->expert) {
		db_err(c, "%s: only allowed in expert mode (-x)", cmd);
		return 0;
	}
	return 1;
}

int
db_cmd_label(struct db_ctx *c, int argc, char **argv)
{
	char label[13];
	int err;

	if (argc > 2) {
		db_err(c, "usage: label [NEWLABEL]");
		return 1;
	}
	if (argc == 2) {
		if (!may_write(c, "label"))
			return 1;
		db_out(c, "writing all SBs");
		/* As xfs_db: a longer label is cut to the 12 bytes there are. */
		if (strlen(argv[1]) > 12)
			db_note(c, "xfskit-db: truncating label length from "
				"%zu to 12", strlen(argv[1]));
		snprintf(label, sizeof(label), "%s", argv[1]);
		err = xk_sb_set_label(c->mp, label);
		if (err) {
			db_err(c, "label: %s", xk_strerror(err));
			return 1;
		}
		db_reread(c);
		db_out(c, "new label = \"%s\"", label);
		return 0;
	}
	memcpy(label, c->mp->sb.fname, 12);
	label[12] = '\0';
	db_out(c, "label = \"%s\"", label);
	return 0;
}

static void
uuid_text(const uint8_t *u, char out[37])
{
	uuid_unparse_lower(u, out);
}

int
db_cmd_uuid(struct db_ctx *c, int argc, char **argv)
{
	uint8_t want[16];
	char text[37], msg[300];
	int err;

	if (argc > 2) {
		db_err(c, "usage: uuid [UUID|generate|nil|restore]");
		return 1;
	}
	if (argc == 2) {
		if (!may_write(c, "uuid"))
			return 1;
		if (!strcmp(argv[1], "generate")) {
			uuid_generate(want);
		} else if (!strcmp(argv[1], "nil")) {
			memset(want, 0, sizeof(want));
		} else if (!strcmp(argv[1], "restore")) {
			/* Back to the metadata's UUID; nothing without one. */
			if (!xk_sb_has_incompat(&c->mp->sb,
					XK_SB_FEAT_INCOMPAT_META_UUID))
				return 0;
			memcpy(want, c->mp->sb.meta_uuid, 16);
		} else if (uuid_parse(argv[1], want)) {
			db_err(c, "uuid: invalid UUID %s", argv[1]);
			return 1;
		}
		err = xk_sb_set_uuid(c->mp, want, msg, sizeof(msg));
		if (err) {
			db_err(c, "uuid: %s", msg[0] ? msg : xk_strerror(err));
			return 1;
		}
		db_out(c, "Clearing log and setting UUID");
		db_out(c, "writing all SBs");
		db_reread(c);
		uuid_text(want, text);
		db_out(c, "new UUID = %s", text);
		return 0;
	}
	uuid_text(c->mp->sb.uuid, text);
	db_out(c, "UUID = %s", text);
	return 0;
}

struct feat {
	/* 0 versionnum, 1 features2, 2 ro_compat, 3 incompat */
	int		word;
	uint32_t	bit;
	const char	*name;
};

static const struct feat feats[] = {
	{ 0, XK_SB_VERSION_NLINKBIT, "NLINK" },
	{ 0, XK_SB_VERSION_DIRV2BIT, "DIRV2" },
	{ 0, XK_SB_VERSION_ATTRBIT, "ATTR" },
	{ 0, XK_SB_VERSION_QUOTABIT, "QUOTA" },
	{ 0, XK_SB_VERSION_ALIGNBIT, "ALIGN" },
	{ 0, XK_SB_VERSION_DALIGNBIT, "DALIGN" },
	{ 0, XK_SB_VERSION_LOGV2BIT, "LOGV2" },
	{ 0, XK_SB_VERSION_SECTORBIT, "SECTOR" },
	{ 0, XK_SB_VERSION_EXTFLGBIT, "EXTFLG" },
	{ 0, XK_SB_VERSION_MOREBITSBIT, "MOREBITS" },
	{ 1, XK_SB_VERSION2_ATTR2BIT, "ATTR2" },
	{ 1, XK_SB_VERSION2_LAZYSBCOUNTBIT, "LAZYSBCOUNT" },
	{ 1, XK_SB_VERSION2_PROJID32BIT, "PROJID32BIT" },
	{ 1, XK_SB_VERSION2_CRCBIT, "CRC" },
	{ 3, XK_SB_FEAT_INCOMPAT_FTYPE, "FTYPE" },
	{ 2, XK_SB_FEAT_RO_COMPAT_FINOBT, "FINOBT" },
	{ 3, XK_SB_FEAT_INCOMPAT_SPINODES, "SPARSE_INODES" },
	{ 3, XK_SB_FEAT_INCOMPAT_META_UUID, "META_UUID" },
	{ 2, XK_SB_FEAT_RO_COMPAT_RMAPBT, "RMAPBT" },
	{ 2, XK_SB_FEAT_RO_COMPAT_REFLINK, "REFLINK" },
	{ 2, XK_SB_FEAT_RO_COMPAT_INOBTCNT, "INOBTCNT" },
	{ 3, XK_SB_FEAT_INCOMPAT_BIGTIME, "BIGTIME" },
	{ 3, XK_SB_FEAT_INCOMPAT_NEEDSREPAIR, "NEEDSREPAIR" },
	{ 3, XK_SB_FEAT_INCOMPAT_NREXT64, "NREXT64" },
	/* Unknown to xfs_db 6.1; 7.2's names. */
	{ 3, XK_SB_FEAT_INCOMPAT_EXCHRANGE, "EXCHANGE" },
	{ 3, XK_SB_FEAT_INCOMPAT_PARENT, "PARENT" },
	{ 3, XK_SB_FEAT_INCOMPAT_METADIR, "METADIR" },
};

int
db_cmd_version(struct db_ctx *c, int argc, char **argv)
{
	const struct xk_sb *sb = &c->mp->sb;
	uint32_t words[4] = { sb->versionnum, sb->features2,
			      sb->features_ro_compat, sb->features_incompat };
	char out[512];
	size_t o;

	(void)argc;
	(void)argv;
	o = (size_t)snprintf(out, sizeof(out), "versionnum [0x%x+0x%x] = V%d",
			     sb->versionnum, sb->features2, xk_sb_version(sb));
	for (size_t i = 0; i < sizeof(feats) / sizeof(feats[0]); i++)
		if ((words[feats[i].word] & feats[i].bit) && o < sizeof(out))
			o += (size_t)snprintf(out + o, sizeof(out) - o, ",%s",
					      feats[i].name);
	db_out(c, "%s", out);
	return 0;
}

int
db_cmd_hash(struct db_ctx *c, int argc, char **argv)
{
	if (argc != 2) {
		db_err(c, "usage: hash NAME");
		return 1;
	}
	db_out(c, "0x%x", xk_da_hashname((const uint8_t *)argv[1],
					 (int)strlen(argv[1])));
	return 0;
}

/* convert: everything goes through a byte address. */
static int
to_bytes(struct db_ctx *c, const char *unit, uint64_t v, uint64_t agno,
	 int have_ag, uint64_t *bytes)
{
	struct xk_mount *mp = c->mp;
	uint64_t agbytes = (uint64_t)mp->g.agblocks << mp->g.blocklog;

	if (!strcmp(unit, "byte")) {
		*bytes = v;
	} else if (!strcmp(unit, "daddr") || !strcmp(unit, "bb")) {
		*bytes = v << XK_BBSHIFT;
	} else if (!strcmp(unit, "fsblock") || !strcmp(unit, "fsb")) {
		if (xk_fsb_to_agno(mp, v) >= mp->g.agcount)
			return -ERANGE;
		*bytes = xk_fsb_to_daddr(mp, v) << XK_BBSHIFT;
	} else if (!strcmp(unit, "agblock") || !strcmp(unit, "agbno")) {
		if (v >= mp->g.agblocks)
			return -ERANGE;
		*bytes = (have_ag ? agno * agbytes : 0) +
			 (v << mp->g.blocklog);
	} else if (!strcmp(unit, "ino") || !strcmp(unit, "inode")) {
		if (!xk_ino_valid(mp, v))
			return -ERANGE;
		*bytes = (uint64_t)xk_ino_to_agno(mp, v) * agbytes +
			 ((uint64_t)xk_ino_to_agino(mp, v) << mp->g.inodelog);
	} else if (!strcmp(unit, "agino")) {
		*bytes = (have_ag ? agno * agbytes : 0) +
			 (v << mp->g.inodelog);
	} else {
		return -EINVAL;
	}
	return 0;
}

static int
from_bytes(struct db_ctx *c, const char *unit, uint64_t b, uint64_t *v)
{
	struct xk_mount *mp = c->mp;
	uint64_t agbytes = (uint64_t)mp->g.agblocks << mp->g.blocklog;
	uint64_t agno = b / agbytes, agoff = b % agbytes;

	if (!strcmp(unit, "byte"))
		*v = b;
	else if (!strcmp(unit, "daddr") || !strcmp(unit, "bb"))
		*v = b >> XK_BBSHIFT;
	else if (!strcmp(unit, "agno") || !strcmp(unit, "agnumber"))
		*v = agno;
	else if (!strcmp(unit, "agblock") || !strcmp(unit, "agbno"))
		*v = agoff >> mp->g.blocklog;
	else if (!strcmp(unit, "fsblock") || !strcmp(unit, "fsb"))
		*v = xk_agb_to_fsb(mp, (uint32_t)agno,
				   (uint32_t)(agoff >> mp->g.blocklog));
	else if (!strcmp(unit, "agino"))
		*v = agoff >> mp->g.inodelog;
	else if (!strcmp(unit, "ino") || !strcmp(unit, "inode"))
		*v = xk_agino_to_ino(mp, (uint32_t)agno,
				     (uint32_t)(agoff >> mp->g.inodelog));
	else
		return -EINVAL;
	return 0;
}

int
db_cmd_convert(struct db_ctx *c, int argc, char **argv)
{
	uint64_t agno = 0, v, bytes = 0, out;
	int have_ag = 0, have_val = 0, i;

	if (argc < 4 || argc % 2) {
		db_err(c, "usage: convert unit value [unit value]... unit");
		return 1;
	}
	for (i = 1; i + 1 < argc; i += 2) {
		if (db_parse_u64(argv[i + 1], &v)) {
			db_err(c, "bad value %s", argv[i + 1]);
			return 1;
		}
		if (!strcmp(argv[i], "agno") || !strcmp(argv[i], "agnumber")) {
			if (v >= c->mp->g.agcount) {
				db_err(c, "AG %s out of range", argv[i + 1]);
				return 1;
			}
			agno = v;
			have_ag = 1;
			continue;
		}
		if (to_bytes(c, argv[i], v, agno, have_ag, &bytes)) {
			db_err(c, "bad unit or value: %s %s", argv[i],
			       argv[i + 1]);
			return 1;
		}
		have_val = 1;
	}
	if (!have_val && have_ag)
		bytes = agno * ((uint64_t)c->mp->g.agblocks <<
				c->mp->g.blocklog);
	if (from_bytes(c, argv[argc - 1], bytes, &out)) {
		db_err(c, "unknown unit %s", argv[argc - 1]);
		return 1;
	}
	db_out(c, "0x%llx (%llu)", (unsigned long long)out,
	       (unsigned long long)out);
	return 0;
}

/* ---- frag ---- */

/* frag's selection, as xfs_db's flags name it. */
enum {
	FRAG_ATTR	= 1 << 0,	/* -a: attribute forks */
	FRAG_DIR	= 1 << 1,	/* -d: directories */
	FRAG_FILE	= 1 << 2,	/* -f: regular files */
	FRAG_LINK	= 1 << 3,	/* -l: symbolic links */
	FRAG_QUOTA	= 1 << 4,	/* -q: quota files */
	FRAG_RTMETA	= 1 << 5,	/* -R: realtime bitmap and summary */
	FRAG_RTFILE	= 1 << 6,	/* -r: realtime files */
};

struct frag {
	struct db_ctx	*c;
	uint32_t	agno;
	unsigned int	sel;
	int		verbose;
	uint64_t	actual, ideal;
	struct xk_fork_map map;
	int		err;
};

/*
 * One fork: every mapping counts as an extent; ideally each run of
 * adjacent file offsets would be one (as xfs_db counts: by file offset).
 */
static void
frag_fork(struct frag *fr, uint64_t ino, const struct xk_dinode *dip,
	  int whichfork)
{
	int fmt = xk_dfork_format(dip, whichfork);
	int err;

	if (!xk_dinode_fork_nextents(dip, whichfork) ||
	    (fmt != XK_DINODE_FMT_EXTENTS && fmt != XK_DINODE_FMT_BTREE))
		return;
	err = xk_fork_read(fr->c->mp, ino, dip, whichfork, XK_FORK_SALVAGE,
			   &fr->map);
	if (err)
		fr->err = 1;
	for (uint64_t k = 0; k < fr->map.next; k++) {
		const struct xk_bmbt_irec *e = &fr->map.ext[k];

		fr->actual++;
		if (k == 0 || e->startoff != e[-1].startoff + e[-1].blockcount)
			fr->ideal++;
	}
}

/* Whether the data fork of this inode is among the ones selected. */
static int
frag_wants_data(const struct frag *fr, uint64_t ino,
		const struct xk_dinode *dip)
{
	const struct xk_sb *sb = &fr->c->mp->sb;

	switch (xk_be16_get(dip->di_mode) & XK_S_IFMT) {
	case XK_S_IFDIR:
		return fr->sel & FRAG_DIR;
	case XK_S_IFLNK:
		return fr->sel & FRAG_LINK;
	case XK_S_IFREG:
		break;
	default:
		return 0;
	}
	/* A special file must be selected by its kind and as a file. */
	if ((xk_be16_get(dip->di_flags) & XK_DIFLAG_REALTIME) &&
	    !(fr->sel & FRAG_RTFILE))
		return 0;
	if ((ino == sb->rbmino || ino == sb->rsumino) &&
	    !(fr->sel & FRAG_RTMETA))
		return 0;
	if ((ino == sb->uquotino || ino == sb->gquotino ||
	     ino == sb->pquotino) && !(fr->sel & FRAG_QUOTA))
		return 0;
	return fr->sel & FRAG_FILE;
}

static int
frag_rec(void *ctx, const void *rec)
{
	const struct xk_inobt_rec *r = rec;
	struct frag *fr = ctx;
	struct xk_mount *mp = fr->c->mp;
	uint64_t freemask = xk_be64_get(r->ir_free);
	uint16_t holes = fr->c->mp->g.has_sparse ?
			 xk_be16_get(r->ir_u.sp.ir_holemask) : 0;

	for (int i = 0; i < 64; i++) {
		uint64_t ino, actual = fr->actual, ideal = fr->ideal;
		struct xk_dinode *dip;
		struct xk_buf *bp;
		int data, attr;

		if ((holes >> (i / 4)) & 1 || (freemask >> i) & 1)
			continue;
		ino = xk_agino_to_ino(mp, fr->agno,
				xk_be32_get(r->ir_startino) + (uint32_t)i);
		if (xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip) && !bp) {
			fr->err = 1;
			continue;
		}
		data = frag_wants_data(fr, ino, dip);
		attr = (fr->sel & FRAG_ATTR) && dip->di_forkoff;
		if (data)
			frag_fork(fr, ino, dip, XK_DATA_FORK);
		if (attr)
			frag_fork(fr, ino, dip, XK_ATTR_FORK);
		xk_buf_release(bp);
		if (fr->verbose && (data || attr))
			db_out(fr->c, "inode %llu actual %llu ideal %llu",
			       (unsigned long long)ino,
			       (unsigned long long)(fr->actual - actual),
			       (unsigned long long)(fr->ideal - ideal));
	}
	return 0;
}

int
db_cmd_frag(struct db_ctx *c, int argc, char **argv)
{
	static const char flags[] = "adflqRr";
	struct xk_mount *mp = c->mp;
	struct frag fr;
	char avg[32];
	int opt;

	memset(&fr, 0, sizeof(fr));
	fr.c = c;
	optind = 0;		/* GNU getopt: start over for this command */
	while ((opt = getopt(argc, argv, "adflqRrv")) != -1) {
		if (opt == 'v') {
			fr.verbose = 1;
		} else if (opt != '?' && strchr(flags, opt)) {
			fr.sel |= 1u << (strchr(flags, opt) - flags);
		} else {
			db_err(c, "bad option for frag command");
			return 1;
		}
	}
	if (optind != argc) {
		db_err(c, "bad argument %s to frag: it takes only the options "
		       "[-a] [-d] [-f] [-l] [-q] [-R] [-r] [-v]", argv[optind]);
		return 1;
	}
	/* No selection is every one. */
	if (!fr.sel)
		fr.sel = (1u << (sizeof(flags) - 1)) - 1;
	for (uint32_t ag = 0; ag < mp->g.agcount; ag++) {
		struct xk_btree_walk w;
		struct xk_buf *bp;

		if (xk_agi_read(mp, ag, 0, &bp)) {
			fr.err = 1;
			continue;
		}
		memset(&w, 0, sizeof(w));
		w.ops = &xk_inobt_ops;
		w.agno = ag;
		w.root = xk_be32_get(xk_buf_agi(bp)->agi_root);
		w.levels = xk_be32_get(xk_buf_agi(bp)->agi_level);
		xk_buf_release(bp);
		w.ctx = &fr;
		w.rec_fn = frag_rec;
		fr.agno = ag;
		if (xk_btree_walk(mp, &w))
			fr.err = 1;
	}
	xk_fork_map_free(&fr.map);
	db_out(c, "actual %llu, ideal %llu, fragmentation factor %.2f%%",
	       (unsigned long long)fr.actual, (unsigned long long)fr.ideal,
	       fr.actual ? (double)(fr.actual - fr.ideal) * 100.0 /
	       (double)fr.actual : 0.0);
	db_out(c, "Note, this number is largely meaningless.");
	/* xfs_db divides by zero here when nothing was counted: "-nan". */
	if (fr.ideal)
		snprintf(avg, sizeof(avg), "%.2f",
			 (double)fr.actual / (double)fr.ideal);
	else
		snprintf(avg, sizeof(avg), "-nan");
	db_out(c, "Files on this filesystem average %s extents per file", avg);
	if (fr.err)
		db_err(c, "some inodes or inode btrees could not be read");
	return fr.err;
}
