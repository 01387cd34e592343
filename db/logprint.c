// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * logprint: the log as xfs_logprint -t shows it: head, tail and state,
 * then each committed transaction with its items and what they target
 * (with -r, each record too).  The walk is libfs's: every record's CRC
 * and every length is checked, and damage is reported where it lies.
 */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include <xfskit/format/attr.h>
#include <xfskit/log_attri.h>
#include <xfskit/logv.h>

#include "db.h"

struct lp_ctx {
	struct db_ctx	*c;
	int		records;
	unsigned long	ntrans;
};

static int
lp_rec(void *priv, const struct xk_log_rec *r)
{
	struct lp_ctx *p = priv;

	if (p->records)
		fprintf(p->c->out, "LOG REC AT LSN cycle %u block %u len %u "
			"ops %u%s\n", r->cycle, r->blk, r->len, r->num_logops,
			r->unmount ? " UNMOUNT" : "");
	return 0;
}

/*
 * A mapping exchange intent: both files (inode and generation), where
 * each range starts, how many blocks remain and the flags, plus the new
 * sizes when it sets them.  The walk checked its size (88 bytes).
 */
static void
lp_xmi(FILE *o, const struct xk_log_item *it)
{
	const uint8_t *p = it->regions[0].data;
	uint64_t flags;

#define XMI_FIELD(bits, f) xk_get_ne##bits(p + \
		offsetof(struct xk_xmi_log_format, f))
	flags = XMI_FIELD(64, xmi_flags);
	fprintf(o, "  XMI: #regs:%u id:0x%" PRIx64 " ino1:0x%" PRIx64
		" gen1:0x%x off1:%" PRIu64 " ino2:0x%" PRIx64 " gen2:0x%x"
		" off2:%" PRIu64 " blocks:%" PRIu64 " flags:0x%" PRIx64
		"%s%s%s%s%s", it->nregions, XMI_FIELD(64, xmi_id),
		XMI_FIELD(64, xmi_inode1), XMI_FIELD(32, xmi_igen1),
		XMI_FIELD(64, xmi_startoff1), XMI_FIELD(64, xmi_inode2),
		XMI_FIELD(32, xmi_igen2), XMI_FIELD(64, xmi_startoff2),
		XMI_FIELD(64, xmi_blockcount), flags,
		(flags & XK_EXCHMAPS_ATTR_FORK) ? " ATTR_FORK" : "",
		(flags & XK_EXCHMAPS_SET_SIZES) ? " SET_SIZES" : "",
		(flags & XK_EXCHMAPS_INO1_WRITTEN) ? " INO1_WRITTEN" : "",
		(flags & XK_EXCHMAPS_CLEAR_INO1_REFLINK) ?
		" CLEAR_INO1_REFLINK" : "",
		(flags & XK_EXCHMAPS_CLEAR_INO2_REFLINK) ?
		" CLEAR_INO2_REFLINK" : "");
	if (flags & XK_EXCHMAPS_SET_SIZES)
		fprintf(o, " isize1:%" PRIu64 " isize2:%" PRIu64,
			XMI_FIELD(64, xmi_isize1), XMI_FIELD(64, xmi_isize2));
	fputc('\n', o);
#undef XMI_FIELD
}

/* Attribute names and small values: printable bytes, others escaped. */
static void
lp_bytes(FILE *o, const uint8_t *p, uint32_t len)
{
	fputc('"', o);
	for (uint32_t i = 0; i < len; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' &&
		    p[i] != '\\')
			fputc(p[i], o);
		else
			fprintf(o, "\\x%02x", p[i]);
	}
	fputc('"', o);
}

/* One name and value of an ATTRI; a parent record names a directory. */
static void
lp_attri_pair(FILE *o, const char *tag, const struct xk_log_attri *a,
	      const uint8_t *name, uint32_t namelen, const uint8_t *value,
	      uint32_t valuelen)
{
	fprintf(o, "    %s: ", tag);
	lp_bytes(o, name, namelen);
	if (a->filter & XK_ATTR_PARENT && value) {
		const struct xk_parent_rec *r = (const void *)value;

		fprintf(o, " parent ino:0x%" PRIx64 " gen:0x%x",
			xk_be64_get(r->p_ino), xk_be32_get(r->p_gen));
	} else if (value) {
		fprintf(o, " value len:%u ", valuelen);
		lp_bytes(o, value, valuelen < 32 ? valuelen : 32);
		if (valuelen > 32)
			fputs("...", o);
	}
	fputc('\n', o);
}

/*
 * A logged attribute operation: the inode (and its generation for
 * parent pointers), the operation, the namespace, then the name and
 * value and, for a parent pointer replace, the new ones.  The walk
 * checked the item, so it decodes.
 */
static void
lp_attri(FILE *o, const struct xk_log_item *it)
{
	struct xk_log_attri a;
	const char *why, *op;

	if (xk_log_attri_decode(NULL, it, &a, &why)) {
		fprintf(o, "  ATTRI: #regs:%u bad item: %s\n", it->nregions,
			why);
		return;
	}
	op = xk_log_attri_op_name(a.op);
	fprintf(o, "  ATTRI: #regs:%u id:0x%" PRIx64 " ino:0x%" PRIx64
		" igen:0x%x op:%s filter:0x%x%s%s%s\n", it->nregions, a.id,
		a.ino, a.igen, op ? op : "?", a.filter,
		(a.filter & XK_ATTR_ROOT) ? " ROOT" : "",
		(a.filter & XK_ATTR_SECURE) ? " SECURE" : "",
		(a.filter & XK_ATTR_PARENT) ? " PARENT" : "");
	lp_attri_pair(o, a.new_name ? "old" : "name", &a, a.name, a.namelen,
		      a.value, a.valuelen);
	if (a.new_name)
		lp_attri_pair(o, "new", &a, a.new_name, a.new_namelen,
			      a.new_value, a.new_valuelen);
}

static void
lp_item(FILE *o, const struct xk_log_item *it)
{
	struct xk_log_target t;

	xk_log_item_target(it, &t);
	switch (it->type) {
	case XK_LI_BUF:
		fprintf(o, "  BUF: #regs:%u start blkno:0x%" PRIx64 " len:%u "
			"flags:0x%x type:%s%s\n", it->nregions, t.daddr,
			t.len_bb, t.flags, xk_log_blft_name(t.blft),
			(t.flags & XK_BLF_CANCEL) ? " CANCEL" : "");
		break;
	case XK_LI_INODE:
		fprintf(o, "  INODE: #regs:%u ino:0x%" PRIx64 " flags:0x%x "
			"blkno:0x%" PRIx64 " len:%u boffset:%u\n",
			it->nregions, t.ino, t.flags, t.daddr, t.len_bb,
			t.offset);
		break;
	case XK_LI_ICREATE:
		fprintf(o, "  ICR: ag:%u agbno:0x%x len:%u cnt:%u\n", t.agno,
			t.agbno, t.len_bb, t.count);
		break;
	case XK_LI_XMI:
		lp_xmi(o, it);
		break;
	case XK_LI_XMD:
		fprintf(o, "  XMD: #regs:%u xmi id:0x%" PRIx64 "\n",
			it->nregions, t.id);
		break;
	case XK_LI_ATTRI:
		lp_attri(o, it);
		break;
	case XK_LI_ATTRD:
		fprintf(o, "  ATTRD: #regs:%u attri id:0x%" PRIx64 "\n",
			it->nregions, t.id);
		break;
	default:
		fprintf(o, "  %s: #regs:%u id:0x%" PRIx64 " count:%u\n",
			xk_log_item_name(it->type), it->nregions, t.id,
			t.count);
		break;
	}
}

static int
lp_trans(void *priv, const struct xk_log_trans *tr)
{
	struct lp_ctx *p = priv;
	uint64_t regions = 0;

	/* xfs_logprint's #items counts regions (as th_num_items does). */
	for (uint32_t i = 0; i < tr->nitems; i++)
		regions += tr->items[i].nregions;
	p->ntrans++;
	fprintf(p->c->out, "TRANS: tid:0x%x #items:%llu log items:%u "
		"lsn:%u/%u commit:%u/%u\n", tr->tid,
		(unsigned long long)regions, tr->nitems,
		xk_lsn_cycle(tr->lsn), xk_lsn_block(tr->lsn),
		xk_lsn_cycle(tr->commit_lsn), xk_lsn_block(tr->commit_lsn));
	for (uint32_t i = 0; i < tr->nitems; i++)
		lp_item(p->c->out, &tr->items[i]);
	return 0;
}

int
db_cmd_logprint(struct db_ctx *c, int argc, char **argv)
{
	struct xk_log_walk_ops ops = { .rec = lp_rec, .trans = lp_trans };
	struct lp_ctx p = { .c = c };
	const struct xk_log_state *st;
	struct xk_log *log;
	int err;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-r") == 0) {
			p.records = 1;
		} else {
			db_err(c, "logprint: unknown option '%s' (usage: "
			       "logprint [-r])", argv[i]);
			return 1;
		}
	}
	err = xk_log_open(c->mp, &log);
	if (err) {
		db_err(c, "logprint: %s", log ? xk_log_errmsg(log) :
		       xk_strerror(err));
		xk_log_close(log);
		return 1;
	}
	st = xk_log_get_state(log);
	fprintf(c->out, "log tail: %u head: %u cycle: %u state: %s\n",
		st->tail_blk, st->head_blk, st->head_cycle,
		st->empty ? "<EMPTY>" : st->clean ? "<CLEAN>" : "<DIRTY>");
	if (st->torn_blk != XK_LOG_NOBLK)
		fprintf(c->out, "torn record at block %u dropped\n",
			st->torn_blk);
	err = xk_log_walk(log, &ops, &p);
	if (err)
		db_err(c, "logprint: %s", xk_log_errmsg(log));
	else
		fprintf(c->out, "%lu transactions\n", p.ntrans);
	xk_log_close(log);
	return err ? 1 : 0;
}
