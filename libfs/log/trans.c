// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Walking the log: every record from the tail to the head is checked
 * (header rules, CRC, the cycle stamped in each block), its op headers
 * are cut into regions, and the regions are gathered per transaction id
 * until the commit op, joining a region the writer split across records
 * (WAS_CONT pieces are appended to the region before them).  A committed
 * transaction is then cut into log items: each item's first region gives
 * its type and how many regions it spans, and every length an item
 * declares is checked against what the log holds before anyone reads it.
 *
 * Ops of transactions that started before the tail carry no start op and
 * are skipped, as the kernel does; transactions without a commit op at
 * the head were never committed and are dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/log_attri.h>

#include "log_priv.h"

/* The kernel's bound on regions per item: half a 64 KiB buffer's chunks. */
#define LOG_MAX_REGIONS_IN_ITEM	((65536 / XK_BLF_CHUNK) / 2 + 1)

struct wregion {
	uint8_t		*data;
	uint32_t	len;
};

struct wtrans {
	struct wtrans	*next;
	uint32_t	tid;
	uint64_t	lsn;
	uint8_t		hdr[sizeof(struct xk_trans_header)];
	uint32_t	hdrlen;
	int		have_hdr;	/* a header region was started */
	struct wregion	*r;
	uint32_t	nr, cap;
};

struct walk {
	struct xk_log	*log;
	const struct xk_log_walk_ops *ops;
	void		*priv;
	struct wtrans	*open;
	const struct log_rhdr *rh;
	uint32_t	opno;
};

static void
wtrans_free(struct wtrans *t)
{
	for (uint32_t i = 0; i < t->nr; i++)
		free(t->r[i].data);
	free(t->r);
	free(t);
}

/* A committed transaction kept alive for a later batch (log->keep). */
struct log_kept {
	struct log_kept	*next;
	struct wregion	*r;
	uint32_t	nr;
	struct xk_log_region *regs;
	struct xk_log_item *items;
};

void
log_kept_free(struct xk_log *log)
{
	while (log->kept) {
		struct log_kept *k = log->kept;

		log->kept = k->next;
		for (uint32_t i = 0; i < k->nr; i++)
			free(k->r[i].data);
		free(k->r);
		free(k->regs);
		free(k->items);
		free(k);
	}
	log->kept_bytes = 0;
}

/* Move t's regions and the item arrays to log->kept; 0 or -ENOMEM. */
static int
keep_trans(struct xk_log *log, struct wtrans *t, struct xk_log_region *regs,
	   struct xk_log_item *items)
{
	struct log_kept *k = malloc(sizeof(*k));

	if (!k)
		return -ENOMEM;
	*k = (struct log_kept){ log->kept, t->r, t->nr, regs, items };
	log->kept = k;
	for (uint32_t i = 0; i < t->nr; i++)
		log->kept_bytes += t->r[i].len;
	log->kept_bytes += t->nr * (sizeof(*regs) + sizeof(*items) +
				    sizeof(*t->r));
	t->r = NULL;
	t->nr = 0;
	t->cap = 0;
	return 0;
}

static void
unlink_trans(struct walk *w, struct wtrans *t)
{
	for (struct wtrans **pp = &w->open; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	wtrans_free(t);
}

const char *
xk_log_item_name(uint16_t type)
{
	switch (type) {
	case XK_LI_EFI: return "EFI";
	case XK_LI_EFD: return "EFD";
	case XK_LI_INODE: return "INODE";
	case XK_LI_BUF: return "BUF";
	case XK_LI_DQUOT: return "DQUOT";
	case XK_LI_QUOTAOFF: return "QUOTAOFF";
	case XK_LI_ICREATE: return "ICREATE";
	case XK_LI_RUI: return "RUI";
	case XK_LI_RUD: return "RUD";
	case XK_LI_CUI: return "CUI";
	case XK_LI_CUD: return "CUD";
	case XK_LI_BUI: return "BUI";
	case XK_LI_BUD: return "BUD";
	case XK_LI_ATTRI: return "ATTRI";
	case XK_LI_ATTRD: return "ATTRD";
	case XK_LI_XMI: return "XMI";
	case XK_LI_XMD: return "XMD";
	case XK_LI_EFI_RT: return "EFI_RT";
	case XK_LI_EFD_RT: return "EFD_RT";
	case XK_LI_RUI_RT: return "RUI_RT";
	case XK_LI_RUD_RT: return "RUD_RT";
	case XK_LI_CUI_RT: return "CUI_RT";
	case XK_LI_CUD_RT: return "CUD_RT";
	default: return NULL;
	}
}

const char *
xk_log_blft_name(unsigned int blft)
{
	static const char *const names[] = {
		"unknown", "user dquot", "project dquot", "group dquot",
		"btree", "AGF", "AGFL", "AGI", "inode cluster", "symlink",
		"dir block", "dir data", "dir free", "dir leaf1", "dir leafn",
		"da node", "attr leaf", "attr remote", "superblock",
		"rt bitmap", "rt summary",
	};

	return blft < sizeof(names) / sizeof(names[0]) ? names[blft] :
	       "bad type";
}

void
xk_log_item_target(const struct xk_log_item *it, struct xk_log_target *t)
{
	const uint8_t *f = it->regions[0].data;
	uint32_t len = it->regions[0].len;

	memset(t, 0, sizeof(*t));
	switch (it->type) {
	case XK_LI_BUF:
		t->flags = xk_get_ne16(f + 4);
		t->len_bb = xk_get_ne16(f + 6);
		t->daddr = xk_get_ne64(f + 8);
		t->blft = xk_blft_from_flags((uint16_t)t->flags);
		break;
	case XK_LI_INODE: {
		/* The 52-byte layout lacks the hole before ilf_ino. */
		size_t d = len == sizeof(struct xk_inode_log_format) ? 0 : 4;

		t->flags = xk_get_ne32(f + 4);
		t->ino = xk_get_ne64(f + 16 - d);
		t->daddr = xk_get_ne64(f + 40 - d);
		t->len_bb = xk_get_ne32(f + 48 - d);
		t->offset = xk_get_ne32(f + 52 - d);
		break;
	}
	case XK_LI_ICREATE:
		t->agno = xk_get_be32(f + 4);
		t->agbno = xk_get_be32(f + 8);
		t->count = xk_get_be32(f + 12);
		t->len_bb = xk_get_be32(f + 20);	/* fs blocks here */
		t->id = xk_get_be32(f + 24);		/* generation */
		break;
	case XK_LI_DQUOT:
		t->id = xk_get_ne32(f + 4);
		t->daddr = xk_get_ne64(f + 8);
		t->len_bb = xk_get_ne32(f + 16);
		t->offset = xk_get_ne32(f + 20);
		break;
	case XK_LI_QUOTAOFF:
		t->flags = len >= 8 ? xk_get_ne32(f + 4) : 0;
		break;
	case XK_LI_ATTRI:
		t->id = xk_get_ne64(f + 8);
		if (len >= 28) {
			t->ino = xk_get_ne64(f + 16);
			t->flags = xk_get_ne32(f + 24);
		}
		break;
	default:
		/* Intents and done items: count at 4, id at 8. */
		t->count = xk_get_ne32(f + 4);
		t->id = xk_get_ne64(f + 8);
		break;
	}
}

static int
item_fail(struct walk *w, const struct wtrans *t, uint32_t i, uint16_t type,
	  const char *what)
{
	const char *n = xk_log_item_name(type);

	return xk_log_fail(w->log, XK_ECORRUPT,
		"log transaction 0x%x (LSN %u/%u), item %u (%s): %s", t->tid,
		xk_lsn_cycle(t->lsn), xk_lsn_block(t->lsn), i, n ? n : "?",
		what);
}

/*
 * Buffer item rules: 1. the format region holds the bitmap words it
 * declares, at most XK_BLF_DATAMAP_SIZE; 2. blf_size equals the regions
 * present; 3. the buffer has a length and lies inside the filesystem;
 * 4. walking the dirty bitmap as recovery does (a run of set bits may be
 * split over several regions), every data region is a non-zero multiple
 * of 128 bytes inside the buffer and exactly all regions are used.
 */
static int
check_buf(struct walk *w, const struct wtrans *t, uint32_t i,
	  const struct xk_log_item *it)
{
	const struct xk_log_region *r = it->regions;
	const struct xk_buf_log_format *blf = (const void *)r[0].data;
	struct xk_mount *mp = w->log->mp;
	uint32_t map_size, nbits, bytes, ri = 1, bit = 0;
	uint16_t blen;
	int64_t blkno;
	char m[160];

	if (r[0].len < offsetof(struct xk_buf_log_format, blf_data_map))
		return item_fail(w, t, i, it->type, "format region too short");
	map_size = xk_get_ne32(&blf->blf_map_size);
	blen = xk_get_ne16(&blf->blf_len);
	blkno = (int64_t)xk_get_ne64(&blf->blf_blkno);
	if (map_size > XK_BLF_DATAMAP_SIZE ||
	    xk_buf_log_format_size(map_size) > r[0].len) {
		snprintf(m, sizeof(m), "bitmap of %u words does not fit its "
			 "%u-byte format region", map_size, r[0].len);
		return item_fail(w, t, i, it->type, m);
	}
	if (xk_get_ne16(&blf->blf_size) != it->nregions) {
		snprintf(m, sizeof(m), "blf_size %u but %u regions",
			 xk_get_ne16(&blf->blf_size), it->nregions);
		return item_fail(w, t, i, it->type, m);
	}
	if (blen == 0 || blkno < 0 ||
	    (uint64_t)blkno + blen > (mp->g.dblocks << mp->g.blkbb_log)) {
		snprintf(m, sizeof(m), "buffer daddr %lld length %u is "
			 "outside the filesystem", (long long)blkno, blen);
		return item_fail(w, t, i, it->type, m);
	}
	if (xk_get_ne16(&blf->blf_flags) & XK_BLF_CANCEL)
		return 0;
	bytes = (uint32_t)blen << XK_BBSHIFT;
	while (xk_blf_next_run(blf, map_size, &bit, &nbits)) {
		if (ri >= it->nregions) {
			snprintf(m, sizeof(m), "dirty bitmap needs more than "
				 "its %u regions", it->nregions);
			return item_fail(w, t, i, it->type, m);
		}
		if (r[ri].len == 0 || r[ri].len % XK_BLF_CHUNK) {
			snprintf(m, sizeof(m), "data region %u has length %u, "
				 "not a multiple of %u", ri, r[ri].len,
				 XK_BLF_CHUNK);
			return item_fail(w, t, i, it->type, m);
		}
		if (r[ri].len < nbits << XK_BLF_SHIFT)
			nbits = r[ri].len >> XK_BLF_SHIFT;
		if ((uint64_t)(bit + nbits) << XK_BLF_SHIFT > bytes ||
		    r[ri].len != nbits << XK_BLF_SHIFT) {
			snprintf(m, sizeof(m), "data region %u (%u bytes at "
				 "offset %u) does not fit the %u-byte buffer "
				 "or its bitmap run", ri, r[ri].len,
				 bit << XK_BLF_SHIFT, bytes);
			return item_fail(w, t, i, it->type, m);
		}
		ri++;
		bit += nbits;
	}
	if (ri != it->nregions) {
		snprintf(m, sizeof(m), "dirty bitmap covers %u regions, item "
			 "has %u", ri - 1, it->nregions - 1);
		return item_fail(w, t, i, it->type, m);
	}
	return 0;
}

/*
 * Inode item rules: 1. format region of 56 bytes (or 52, the i386
 * layout); 2. ilf_size equals the regions present, 2 to 4; 3. only
 * on-disk field bits; 4. a fork region for every fork bit and no more,
 * of the logged size rounded up to 4 bytes; 5. the inode core region is
 * at least the v1/v2 core; 6. the cluster buffer lies inside the
 * filesystem and holds the inode at ilf_boffset.
 */
static int
check_inode(struct walk *w, const struct wtrans *t, uint32_t i,
	    const struct xk_log_item *it)
{
	const struct xk_log_region *r = it->regions;
	struct xk_mount *mp = w->log->mp;
	struct xk_inode_log_format f;
	uint32_t want;
	char m[160];

	if (r[0].len == sizeof(struct xk_inode_log_format) ||
	    r[0].len == sizeof(struct xk_inode_log_format_32)) {
		xk_log_ilf_decode(&r[0], &f);
	} else {
		snprintf(m, sizeof(m), "format region of %u bytes (56 or 52 "
			 "expected)", r[0].len);
		return item_fail(w, t, i, it->type, m);
	}
	want = 2 + !!(f.ilf_fields & XK_ILOG_DFORK) +
	       !!(f.ilf_fields & XK_ILOG_AFORK);
	if (f.ilf_size != it->nregions || it->nregions < 2 ||
	    it->nregions > 4 || (f.ilf_fields & ~XK_ILOG_ONDISK_MASK) ||
	    it->nregions < want) {
		snprintf(m, sizeof(m), "ilf_size %u, %u regions and fields "
			 "0x%x disagree", f.ilf_size, it->nregions,
			 f.ilf_fields);
		return item_fail(w, t, i, it->type, m);
	}
	if (r[1].len < XK_LOG_DINODE_V2_SIZE ||
	    r[1].len > sizeof(struct xk_log_dinode)) {
		snprintf(m, sizeof(m), "inode core region of %u bytes",
			 r[1].len);
		return item_fail(w, t, i, it->type, m);
	}
	if ((f.ilf_fields & XK_ILOG_DFORK) &&
	    r[2].len != ((f.ilf_dsize + 3u) & ~3u)) {
		snprintf(m, sizeof(m), "data fork region of %u bytes, %u "
			 "logged", r[2].len, f.ilf_dsize);
		return item_fail(w, t, i, it->type, m);
	}
	if ((f.ilf_fields & XK_ILOG_AFORK) &&
	    r[want - 1].len != ((f.ilf_asize + 3u) & ~3u)) {
		snprintf(m, sizeof(m), "attr fork region of %u bytes, %u "
			 "logged", r[want - 1].len, f.ilf_asize);
		return item_fail(w, t, i, it->type, m);
	}
	if (f.ilf_len <= 0 || f.ilf_blkno < 0 || f.ilf_boffset < 0 ||
	    (uint64_t)f.ilf_blkno + (uint64_t)f.ilf_len >
	    (mp->g.dblocks << mp->g.blkbb_log) ||
	    (uint64_t)f.ilf_boffset + mp->g.inodesize >
	    ((uint64_t)f.ilf_len << XK_BBSHIFT) ||
	    !xk_ino_valid(mp, f.ilf_ino)) {
		snprintf(m, sizeof(m), "inode %llu at daddr %lld length %d "
			 "offset %d is outside the filesystem",
			 (unsigned long long)f.ilf_ino,
			 (long long)f.ilf_blkno, f.ilf_len, f.ilf_boffset);
		return item_fail(w, t, i, it->type, m);
	}
	return 0;
}

/* Intent and done items: one region, at least the 16-byte header. */
static int
check_one_region(struct walk *w, const struct wtrans *t, uint32_t i,
		 const struct xk_log_item *it, uint32_t minlen)
{
	char m[96];

	if (it->nregions < 1 || it->regions[0].len < minlen) {
		snprintf(m, sizeof(m), "region of %u bytes, at least %u "
			 "expected", it->regions[0].len, minlen);
		return item_fail(w, t, i, it->type, m);
	}
	return 0;
}

/*
 * Mapping exchange items have one fixed size; the kernel refuses to
 * recover a log holding one of another size, even a finished one.
 */
static int
check_exact_region(struct walk *w, const struct wtrans *t, uint32_t i,
		   const struct xk_log_item *it, uint32_t len)
{
	char m[96];

	if (it->nregions != 1 || it->regions[0].len != len) {
		snprintf(m, sizeof(m), "%u region(s), the first of %u bytes "
			 "(one of %u expected)", it->nregions,
			 it->regions[0].len, len);
		return item_fail(w, t, i, it->type, m);
	}
	return 0;
}

/*
 * Attribute intents: the kernel checks every one it reads (log_attri.h
 * lists the rules), so a bad one stops recovery even when finished.
 */
static int
check_attri(struct walk *w, const struct wtrans *t, uint32_t i,
	    const struct xk_log_item *it)
{
	struct xk_log_attri a;
	const char *why;

	if (xk_log_attri_decode(w->log->mp, it, &a, &why))
		return item_fail(w, t, i, it->type, why);
	return 0;
}

static int
check_item(struct walk *w, const struct wtrans *t, uint32_t i,
	   const struct xk_log_item *it)
{
	switch (it->type) {
	case XK_LI_ATTRI:
		return check_attri(w, t, i, it);
	case XK_LI_BUF:
		return check_buf(w, t, i, it);
	case XK_LI_INODE:
		return check_inode(w, t, i, it);
	case XK_LI_ICREATE:
		return check_one_region(w, t, i, it,
					sizeof(struct xk_icreate_log));
	case XK_LI_DQUOT:
		return check_one_region(w, t, i, it,
					sizeof(struct xk_dq_logformat));
	case XK_LI_XMI:
	case XK_LI_XMD:
		return check_exact_region(w, t, i, it,
				it->type == XK_LI_XMI ?
				sizeof(struct xk_xmi_log_format) :
				sizeof(struct xk_xmd_log_format));
	default:
		return check_one_region(w, t, i, it, 16);
	}
}

/*
 * A commit op: cut the regions into items, check them, hand the
 * transaction to the caller.  Rules: 1. a transaction header of 16
 * bytes with the TRAN magic; 2. every item's first region holds its
 * type and region count, a known type and a count from 1 to the kernel's
 * maximum; 3. the count does not run past the transaction's regions;
 * 4. the per-type rules above.
 */
static int
commit_trans(struct walk *w, struct wtrans *t, uint64_t commit_lsn)
{
	struct xk_log_trans tr;
	struct xk_log_region *regs = NULL;
	struct xk_log_item *items = NULL;
	uint32_t n = 0, idx = 0;
	char m[160];
	int err = 0;

	if (t->hdrlen != sizeof(struct xk_trans_header) ||
	    xk_get_ne32(t->hdr) != XK_TRANS_HEADER_MAGIC)
		return xk_log_fail(w->log, XK_ECORRUPT,
			"log transaction 0x%x (LSN %u/%u): bad transaction "
			"header (%u bytes, magic 0x%x)", t->tid,
			xk_lsn_cycle(t->lsn), xk_lsn_block(t->lsn), t->hdrlen,
			t->hdrlen >= 4 ? xk_get_ne32(t->hdr) : 0);
	regs = calloc(t->nr ? t->nr : 1, sizeof(*regs));
	items = calloc(t->nr ? t->nr : 1, sizeof(*items));
	if (!regs || !items) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t k = 0; k < t->nr; k++) {
		regs[k].data = t->r[k].data;
		regs[k].len = t->r[k].len;
	}
	while (idx < t->nr) {
		struct xk_log_item *it = &items[n];

		if (regs[idx].len < 4) {
			snprintf(m, sizeof(m), "format region of %u bytes",
				 regs[idx].len);
			err = item_fail(w, t, n, 0, m);
			goto out;
		}
		it->type = xk_log_item_type(regs[idx].data);
		it->nregions = xk_log_item_size(regs[idx].data);
		if (!xk_log_item_name(it->type) ||
		    it->type == XK_LI_IUNLINK) {
			snprintf(m, sizeof(m), "unknown item type 0x%x",
				 it->type);
			err = item_fail(w, t, n, it->type, m);
			goto out;
		}
		if (it->nregions == 0 ||
		    it->nregions > LOG_MAX_REGIONS_IN_ITEM ||
		    it->nregions > t->nr - idx) {
			snprintf(m, sizeof(m), "declares %u regions, %u "
				 "remain in the transaction", it->nregions,
				 t->nr - idx);
			err = item_fail(w, t, n, it->type, m);
			goto out;
		}
		it->regions = &regs[idx];
		err = check_item(w, t, n, it);
		if (err)
			goto out;
		idx += it->nregions;
		n++;
	}
	memset(&tr, 0, sizeof(tr));
	tr.tid = t->tid;
	tr.lsn = t->lsn;
	tr.commit_lsn = commit_lsn;
	tr.num_items_hdr = xk_get_ne32(t->hdr + 12);
	tr.nitems = n;
	tr.items = items;
	/* Kept first, so that the callback may free what was kept. */
	if (w->log->keep) {
		err = keep_trans(w->log, t, regs, items);
		if (err)
			goto out;
		regs = NULL;
		items = NULL;
	}
	if (w->ops && w->ops->trans)
		err = w->ops->trans(w->priv, &tr);
out:
	free(regs);
	free(items);
	return err;
}

static int
op_fail(struct walk *w, const char *what, uint32_t v)
{
	return xk_log_fail(w->log, XK_ECORRUPT,
		"log record at block %u (LSN %u/%u), op %u: %s 0x%x",
		w->rh->blk, w->rh->cycle, w->rh->blk, w->opno, what, v);
}

/* Append len bytes to the last region (or the header) of t. */
static int
add_cont(struct wtrans *t, const uint8_t *dp, uint32_t len)
{
	struct wregion *r;
	uint8_t *p;

	if (t->nr == 0) {
		if (t->hdrlen + len > sizeof(t->hdr))
			return XK_ECORRUPT;
		memcpy(t->hdr + t->hdrlen, dp, len);
		t->hdrlen += len;
		return 0;
	}
	r = &t->r[t->nr - 1];
	if ((uint64_t)r->len + len > (1u << 24))
		return XK_ECORRUPT;
	p = realloc(r->data, (size_t)r->len + len);
	if (!p)
		return -ENOMEM;
	memcpy(p + r->len, dp, len);
	r->data = p;
	r->len += len;
	return 0;
}

static int
add_region(struct wtrans *t, const uint8_t *dp, uint32_t len)
{
	if (!t->have_hdr) {
		t->have_hdr = 1;
		if (len > sizeof(t->hdr))
			return XK_ECORRUPT;
		memcpy(t->hdr, dp, len);
		t->hdrlen = len;
		return 0;
	}
	if (t->nr == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		struct wregion *r = realloc(t->r, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		t->r = r;
		t->cap = cap;
	}
	t->r[t->nr].data = malloc(len ? len : 1);
	if (!t->r[t->nr].data)
		return -ENOMEM;
	memcpy(t->r[t->nr].data, dp, len);
	t->r[t->nr].len = len;
	t->nr++;
	return 0;
}

/* One op header and its region, as xlog_recover_process_ophdr. */
static int
do_op(struct walk *w, const struct xk_log_op_header *oh, const uint8_t *dp,
      uint32_t len)
{
	uint32_t tid = xk_be32_get(oh->oh_tid);
	uint8_t flags = oh->oh_flags;
	struct wtrans *t;
	int err;

	for (t = w->open; t; t = t->next)
		if (t->tid == tid)
			break;
	if (!t) {
		/* Not ours: slack, or a transaction from before the tail. */
		if (!(flags & XK_LOG_START_TRANS))
			return 0;
		t = calloc(1, sizeof(*t));
		if (!t)
			return -ENOMEM;
		t->tid = tid;
		t->lsn = w->rh->lsn;
		t->next = w->open;
		w->open = t;
		return 0;
	}
	flags &= (uint8_t)~XK_LOG_END_TRANS;
	if (flags & XK_LOG_WAS_CONT_TRANS)
		flags &= (uint8_t)~XK_LOG_CONTINUE_TRANS;
	switch (flags) {
	case 0:
	case XK_LOG_CONTINUE_TRANS:
		if (len == 0)
			return 0;
		err = add_region(t, dp, len);
		if (err == XK_ECORRUPT)
			return op_fail(w, "transaction header region too "
				       "long, bytes", len);
		return err;
	case XK_LOG_WAS_CONT_TRANS:
		if (len == 0)
			return 0;
		err = add_cont(t, dp, len);
		if (err == XK_ECORRUPT)
			return op_fail(w, "continued region grows too long, "
				       "bytes", len);
		return err;
	case XK_LOG_COMMIT_TRANS:
		err = commit_trans(w, t, w->rh->lsn);
		unlink_trans(w, t);
		return err;
	case XK_LOG_UNMOUNT_TRANS:
		unlink_trans(w, t);
		return 0;
	default:
		return op_fail(w, "bad op flags", oh->oh_flags);
	}
}

/* Cut the data of one record, unpacked at rec, into ops. */
static int
do_record(struct walk *w, const struct log_rhdr *rh, const uint8_t *rec)
{
	struct xk_log *log = w->log;
	const uint8_t *dp = rec + (size_t)rh->hblks * XK_BBSIZE;
	const uint8_t *end = dp + rh->len;
	uint32_t left = rh->num_logops;
	int err;

	w->rh = rh;
	w->opno = 0;
	while (dp < end && left) {
		const struct xk_log_op_header *oh = (const void *)dp;
		uint32_t len;

		if ((size_t)(end - dp) < sizeof(*oh))
			return op_fail(w, "op header runs past the record "
				       "end, bytes left", (uint32_t)(end - dp));
		dp += sizeof(*oh);
		len = xk_be32_get(oh->oh_len);
		if (oh->oh_clientid != XK_TRANSACTION &&
		    oh->oh_clientid != XK_LOG)
			return op_fail(w, "bad client id", oh->oh_clientid);
		if (len > (size_t)(end - dp))
			return xk_log_fail(log, XK_ECORRUPT,
				"log record at block %u (LSN %u/%u), op %u: "
				"length %u runs past the record end (%u bytes "
				"left)", rh->blk, rh->cycle, rh->blk, w->opno,
				len, (uint32_t)(end - dp));
		err = do_op(w, oh, dp, len);
		if (err)
			return err;
		dp += len;
		left--;
		w->opno++;
	}
	return 0;
}

/*
 * The walk takes the records a window at a time: their headers are
 * checked in order on this thread (each says where the next one starts),
 * then the records are copied out and their cycle stamps and CRCs checked
 * on the worker threads, each into its own slot, and finally parsed in
 * order here.  A failure is reported at the record where the plain
 * record-by-record walk would stop, after the records before it were
 * handed over, so the outcome does not depend on the threads.
 */
#define LOG_WIN_BYTES	(4u << 20)
#define LOG_WIN_RECS	512u

struct wslot {
	struct log_rhdr	rh;
	size_t		off;		/* of its copy in the window */
	uint32_t	crc;
	int		err;
	char		msg[200];
};

struct window {
	const struct xk_log *log;
	struct wslot	*s;
	uint8_t		*buf;
	size_t		cap;
};

static void
unpack_one(void *ctx, size_t i)
{
	struct window *win = ctx;
	struct wslot *sl = &win->s[i];

	sl->err = log_rec_unpack(win->log, &sl->rh, win->buf + sl->off,
				 &sl->crc, sl->msg, sizeof(sl->msg));
}

/*
 * Check the headers of the records from blk on, as many as fit the
 * window; *np records, *nextp where the next one starts, *spanp their
 * blocks.  A header that breaks a rule ends the window with its error
 * (log->err set); the records before it are still good.
 */
static int
scan_window(struct xk_log *log, struct window *win, uint32_t blk,
	    uint32_t *np, uint32_t *nextp, uint32_t *spanp)
{
	const struct xk_log_state *st = &log->st;
	size_t off = 0;
	uint32_t n = 0, span = 0;
	int err = 0;

	while (blk != st->head_blk && n < LOG_WIN_RECS) {
		struct log_rhdr rh;
		size_t sz;

		if (!log_is_header(log, blk)) {
			err = xk_log_fail(log, XK_ECORRUPT,
				"expected a log record header at block %u "
				"(between tail %u and head %u)", blk,
				st->tail_blk, st->head_blk);
			break;
		}
		err = xk_log_rhdr_check(log, blk, &rh);
		if (err)
			break;
		if (rh.hblks + rh.dblks > log_dist(log, blk, st->head_blk)) {
			err = xk_log_fail(log, XK_ECORRUPT,
				"log record at block %u (LSN %u/%u) runs past "
				"the head at block %u", blk, rh.cycle, blk,
				st->head_blk);
			break;
		}
		sz = (size_t)(rh.hblks + rh.dblks) * XK_BBSIZE;
		if (n && off + sz > win->cap)
			break;
		if (sz > win->cap) {
			uint8_t *p = realloc(win->buf, sz);

			if (!p) {
				err = -ENOMEM;
				break;
			}
			win->buf = p;
			win->cap = sz;
		}
		win->s[n].rh = rh;
		win->s[n].off = off;
		off += sz;
		span += rh.hblks + rh.dblks;
		n++;
		blk = (uint32_t)(((uint64_t)blk + rh.hblks + rh.dblks) %
				 log->nbb);
	}
	*np = n;
	*nextp = blk;
	*spanp = span;
	return err;
}

/* Hand one unpacked record to the callback, then parse its ops. */
static int
walk_record(struct walk *w, const struct wslot *sl, const uint8_t *rec)
{
	const struct log_rhdr *rh = &sl->rh;
	struct xk_log_rec r;
	int err;

	memset(&r, 0, sizeof(r));
	r.crc = sl->crc;
	r.blk = rh->blk;
	r.hblks = rh->hblks;
	r.cycle = rh->cycle;
	r.len = rh->len;
	r.num_logops = rh->num_logops;
	r.version = rh->version;
	r.size = rh->size;
	r.lsn = rh->lsn;
	r.tail_lsn = rh->tail_lsn;
	r.unmount = log_rec_is_unmount(rec, rh);
	if (w->ops && w->ops->rec) {
		err = w->ops->rec(w->priv, &r);
		if (err)
			return err;
	}
	return do_record(w, rh, rec);
}

int
xk_log_walk(struct xk_log *log, const struct xk_log_walk_ops *ops,
	    void *priv)
{
	struct walk w = { .log = log, .ops = ops, .priv = priv };
	const struct xk_log_state *st = &log->st;
	struct window win = { .log = log };
	unsigned int threads = log->threads ? log->threads : 1;
	uint32_t blk = st->tail_blk;
	char scan_msg[sizeof(log->err)];
	int err = 0;

	if (st->empty)
		return 0;
	/* The window lives in the handle's record scratch, kept between
	 * walks so its pages are touched once. */
	if (log->recsize < LOG_WIN_BYTES) {
		uint8_t *p = realloc(log->rec, LOG_WIN_BYTES);

		if (!p)
			return -ENOMEM;
		log->rec = p;
		log->recsize = LOG_WIN_BYTES;
	}
	win.buf = log->rec;
	win.cap = log->recsize;
	win.s = calloc(LOG_WIN_RECS, sizeof(*win.s));
	if (!win.s)
		return -ENOMEM;
	while (blk != st->head_blk && !err) {
		uint32_t n, next, span, ahead;
		int scan_err;

		/* Read ahead what the window will hold, on the threads. */
		ahead = log_dist(log, blk, st->head_blk);
		if (ahead > LOG_WIN_BYTES / XK_BBSIZE)
			ahead = LOG_WIN_BYTES / XK_BBSIZE;
		log_load_range(log, blk, ahead, threads);
		scan_err = scan_window(log, &win, blk, &n, &next, &span);
		if (scan_err)
			memcpy(scan_msg, log->err, sizeof(scan_msg));
		log_load_range(log, blk, span, threads);
		log_par_for(threads, n, unpack_one, &win);
		for (uint32_t i = 0; i < n && !err; i++) {
			const struct wslot *sl = &win.s[i];

			if (sl->err) {
				err = xk_log_fail(log, sl->err, "%s", sl->msg);
				break;
			}
			err = walk_record(&w, sl, win.buf + sl->off);
		}
		if (!err && scan_err) {
			memcpy(log->err, scan_msg, sizeof(log->err));
			err = scan_err;
		}
		blk = next;
	}
	while (w.open) {
		struct wtrans *t = w.open;

		w.open = t->next;
		wtrans_free(t);
	}
	/* The log in memory does not change: its CRCs stay good. */
	if (!err)
		log->walked = 1;
	free(win.s);
	log->rec = win.buf;
	log->recsize = win.cap;
	return err;
}

/*
 * An inode item's format region in the 64-bit layout, whichever layout
 * the writer used (the region is 56 or 52 bytes; callers checked which).
 */
void
xk_log_ilf_decode(const struct xk_log_region *r, struct xk_inode_log_format *f)
{
	struct xk_inode_log_format_32 f32;

	if (r->len == sizeof(*f)) {
		memcpy(f, r->data, sizeof(*f));
		return;
	}
	memcpy(&f32, r->data, sizeof(f32));
	memset(f, 0, sizeof(*f));
	f->ilf_type = f32.ilf_type;
	f->ilf_size = f32.ilf_size;
	f->ilf_fields = f32.ilf_fields;
	f->ilf_asize = f32.ilf_asize;
	f->ilf_dsize = f32.ilf_dsize;
	f->ilf_ino = f32.ilf_ino;
	memcpy(&f->ilf_u, &f32.ilf_u, sizeof(f->ilf_u));
	f->ilf_blkno = f32.ilf_blkno;
	f->ilf_len = f32.ilf_len;
	f->ilf_boffset = f32.ilf_boffset;
}
