// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the log module on synthetic logs built in memory: a small
 * record writer here stamps cycles, saves the stamped-over words and
 * computes the record CRC the way the kernel's writer does (restated
 * from the format description, not taken from libfs), so the tests check
 * libfs' head and tail search, CRC and cycle checks, region reassembly
 * across records, wrap-around, torn writes and the rules on every
 * length against an independent writer.  Replay itself is tested against
 * the kernel by tests/scripts/log_replay.sh.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/libfs.h>
#include <xfskit/logv.h>
#include "../../libfs/log/log_priv.h"
#include "unit.h"

#define NBB	256		/* synthetic log: 128 KiB */
#define TID	0x1234u

static const uint8_t uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };

static struct xk_mount *
fake_mount(void)
{
	static struct xk_mount m;

	memset(&m, 0, sizeof(m));
	memcpy(m.sb.uuid, uuid, 16);
	m.g.blocksize = 4096;
	m.g.blocklog = 12;
	m.g.blkbb_log = 3;
	m.g.dblocks = 1 << 20;
	m.g.inodesize = 512;
	return &m;
}

/* A record payload under construction: op headers and regions. */
struct payload {
	uint8_t		b[XK_LOG_BIG_RECORD_BSIZE];
	uint32_t	len;
	uint32_t	nops;
};

static void
op(struct payload *p, uint32_t tid, uint8_t flags, uint8_t client,
   const void *data, uint32_t len)
{
	uint8_t *o = p->b + p->len;

	memset(o, 0, 12);
	xk_put_be32(o, tid);
	xk_put_be32(o + 4, len);
	o[8] = client;
	o[9] = flags;
	if (len)
		memcpy(o + 12, data, len);
	p->len += 12 + len;
	p->nops++;
}

static void
trans_header(struct payload *p, uint32_t nitems)
{
	uint8_t th[16];

	xk_put_ne32(th, XK_TRANS_HEADER_MAGIC);
	xk_put_ne32(th + 4, XK_TRANS_CHECKPOINT);
	xk_put_ne32(th + 8, TID);
	xk_put_ne32(th + 12, nitems);
	op(p, TID, 0, XK_TRANSACTION, th, 16);
}

/* A buffer item format: one dirty chunk (bit first_bit, nbits long). */
static uint32_t
buf_format(uint8_t *f, uint16_t nregs, uint32_t first_bit, uint32_t nbits)
{
	memset(f, 0, 24);
	xk_put_ne16(f, XK_LI_BUF);
	xk_put_ne16(f + 2, nregs);
	xk_put_ne16(f + 4, XK_BLFT_BTREE_BUF << XK_BLFT_SHIFT);
	xk_put_ne16(f + 6, 8);
	xk_put_ne64(f + 8, 1000);
	xk_put_ne32(f + 16, 1);
	xk_put_ne32(f + 20, ((1u << nbits) - 1) << first_bit);
	return 24;
}

/*
 * Write one record at blk in cycle: header, payload, stamps, CRC.  The
 * blocks past the physical end get the next cycle, as the writer does
 * when it splits a wrapping record.  Returns the block after it.
 */
static uint32_t
put_record(uint8_t *log, uint32_t blk, uint32_t cycle, uint64_t tail,
	   const struct payload *p)
{
	uint32_t dblks = (p->len + 511) / 512, len = dblks * 512, crc;
	uint8_t *rec = calloc(1 + dblks, 512);

	ck_assert_ptr_nonnull(rec);
	xk_put_be32(rec, XK_LOG_HEADER_MAGIC_NUM);
	xk_put_be32(rec + 4, cycle);
	xk_put_be32(rec + 8, XK_LOG_VERSION_2);
	xk_put_be32(rec + 12, len);
	xk_put_be64(rec + 16, xk_lsn_make(cycle, blk));
	xk_put_be64(rec + 24, tail);
	xk_put_be32(rec + 40, p->nops);
	xk_put_be32(rec + 300, XK_LOG_FMT_NATIVE);
	memcpy(rec + 304, uuid, 16);
	xk_put_be32(rec + 320, XK_LOG_BIG_RECORD_BSIZE);
	memcpy(rec + 512, p->b, p->len);
	for (uint32_t i = 0; i < dblks; i++) {
		uint8_t *w = rec + 512 * (1 + i);

		memcpy(rec + 44 + 4 * i, w, 4);
		xk_put_be32(w, blk + 1 + i >= NBB ? cycle + 1 : cycle);
	}
	crc = xk_crc32c_update(~0u, rec, 328);
	crc = ~xk_crc32c_update(crc, rec + 512, len);
	xk_put_le32(rec + 32, crc);
	for (uint32_t i = 0; i <= dblks; i++)
		memcpy(log + ((blk + i) % NBB) * 512, rec + 512 * i, 512);
	free(rec);
	return (blk + 1 + dblks) % NBB;
}

static uint32_t
put_unmount(uint8_t *log, uint32_t blk, uint32_t cycle)
{
	struct payload p = { .len = 0 };
	uint8_t u[8] = { 0 };

	xk_put_ne16(u, XK_LOG_UNMOUNT_TYPE);
	op(&p, 0x99, XK_LOG_UNMOUNT_TRANS, XK_LOG, u, 8);
	return put_record(log, blk, cycle, xk_lsn_make(cycle, blk), &p);
}

/* One transaction with one 128-byte buffer item, in one record. */
static uint32_t
put_trans(uint8_t *log, uint32_t blk, uint32_t cycle, uint64_t tail,
	  uint8_t fill)
{
	struct payload p = { .len = 0 };
	uint8_t f[24], d[128];

	memset(d, fill, sizeof(d));
	op(&p, TID, XK_LOG_START_TRANS, XK_TRANSACTION, NULL, 0);
	trans_header(&p, 2);
	op(&p, TID, 0, XK_TRANSACTION, f, buf_format(f, 2, 0, 1));
	op(&p, TID, 0, XK_TRANSACTION, d, sizeof(d));
	op(&p, TID, XK_LOG_COMMIT_TRANS, XK_TRANSACTION, NULL, 0);
	return put_record(log, blk, cycle, tail, &p);
}

struct seen {
	int		recs, trans, items;
	uint32_t	last_len;
	uint8_t		last_byte;
};

static int
see_rec(void *priv, const struct xk_log_rec *r)
{
	(void)r;
	((struct seen *)priv)->recs++;
	return 0;
}

static int
see_trans(void *priv, const struct xk_log_trans *tr)
{
	struct seen *s = priv;

	s->trans++;
	s->items += tr->nitems;
	if (tr->nitems) {
		const struct xk_log_item *it = &tr->items[tr->nitems - 1];

		s->last_len = it->regions[it->nregions - 1].len;
		s->last_byte = it->regions[it->nregions - 1].data[
			it->regions[it->nregions - 1].len - 1];
	}
	return 0;
}

static const struct xk_log_walk_ops see_ops = {
	.rec = see_rec, .trans = see_trans
};

static uint8_t *
new_log(void)
{
	uint8_t *l = calloc(NBB, 512);

	ck_assert_ptr_nonnull(l);
	return l;
}

static struct xk_log *
open_log(uint8_t *l, int expect)
{
	struct xk_log *log;
	int err = xk_log_open_mem(fake_mount(), l, NBB, &log);

	ck_assert_msg(err == expect, "open: %d (%s)", err, xk_log_errmsg(log));
	return log;
}

START_TEST(test_zeroed_log_is_empty)
{
	struct xk_log *log = open_log(new_log(), 0);

	ck_assert_int_eq(xk_log_get_state(log)->empty, 1);
	ck_assert_int_eq(xk_log_get_state(log)->clean, 1);
	xk_log_close(log);
}
END_TEST

START_TEST(test_mkfs_log_is_clean)
{
	uint8_t *l = new_log();
	uint32_t end = put_unmount(l, 0, 1);
	struct xk_log *log = open_log(l, 0);
	const struct xk_log_state *st = xk_log_get_state(log);

	ck_assert_int_eq(st->clean, 1);
	ck_assert_uint_eq(st->head_blk, end);
	ck_assert_uint_eq(st->tail_blk, end);
	ck_assert_uint_eq(st->head_cycle, 1);
	xk_log_close(log);
}
END_TEST

START_TEST(test_dirty_log_walk)
{
	uint8_t *l = new_log();
	uint32_t b = put_unmount(l, 0, 1), t = b;
	struct seen s = { 0 };
	struct xk_log *log;

	b = put_trans(l, b, 1, xk_lsn_make(1, t), 0xab);
	b = put_trans(l, b, 1, xk_lsn_make(1, t), 0xcd);
	log = open_log(l, 0);
	ck_assert_int_eq(xk_log_get_state(log)->clean, 0);
	ck_assert_uint_eq(xk_log_get_state(log)->head_blk, b);
	ck_assert_uint_eq(xk_log_get_state(log)->tail_blk, t);
	ck_assert_int_eq(xk_log_walk(log, &see_ops, &s), 0);
	ck_assert_int_eq(s.recs, 2);
	ck_assert_int_eq(s.trans, 2);
	ck_assert_int_eq(s.items, 2);
	ck_assert_uint_eq(s.last_len, 128);
	ck_assert_uint_eq(s.last_byte, 0xcd);
	xk_log_close(log);
}
END_TEST

/* A region split over two records is joined again. */
START_TEST(test_region_across_records)
{
	uint8_t *l = new_log(), f[24], d[1024];
	struct payload p = { .len = 0 };
	uint32_t b = put_unmount(l, 0, 1), t = b;
	struct seen s = { 0 };
	struct xk_log *log;

	for (unsigned int i = 0; i < sizeof(d); i++)
		d[i] = (uint8_t)i;
	op(&p, TID, XK_LOG_START_TRANS, XK_TRANSACTION, NULL, 0);
	trans_header(&p, 2);
	op(&p, TID, 0, XK_TRANSACTION, f, buf_format(f, 2, 0, 8));
	op(&p, TID, XK_LOG_CONTINUE_TRANS, XK_TRANSACTION, d, 300);
	b = put_record(l, b, 1, xk_lsn_make(1, t), &p);
	memset(&p, 0, sizeof(p));
	op(&p, TID, XK_LOG_WAS_CONT_TRANS | XK_LOG_END_TRANS, XK_TRANSACTION,
	   d + 300, sizeof(d) - 300);
	op(&p, TID, XK_LOG_COMMIT_TRANS, XK_TRANSACTION, NULL, 0);
	b = put_record(l, b, 1, xk_lsn_make(1, t), &p);
	log = open_log(l, 0);
	ck_assert_int_eq(xk_log_walk(log, &see_ops, &s), 0);
	ck_assert_int_eq(s.trans, 1);
	ck_assert_uint_eq(s.last_len, 1024);
	ck_assert_uint_eq(s.last_byte, 0xff);
	xk_log_close(log);
}
END_TEST

/*
 * A wrapped log: cycle 2 records from near the end of the log across
 * block 0, one record split over the physical end.
 */
START_TEST(test_wrapped_log)
{
	uint8_t *l = new_log();
	uint32_t b, t = NBB - 1;
	struct seen s = { 0 };
	struct xk_log *log;

	/* Cycle 2 everywhere, as the previous pass would leave it. */
	for (uint32_t i = 0; i < NBB; i++)
		xk_put_be32(l + i * 512, 2);
	b = put_trans(l, t, 2, xk_lsn_make(2, t), 0x11);
	ck_assert_uint_lt(b, t);		/* it wrapped */
	b = put_trans(l, b, 3, xk_lsn_make(2, t), 0x22);
	log = open_log(l, 0);
	ck_assert_uint_eq(xk_log_get_state(log)->head_blk, b);
	ck_assert_uint_eq(xk_log_get_state(log)->tail_blk, t);
	ck_assert_uint_eq(xk_log_get_state(log)->head_cycle, 3);
	ck_assert_int_eq(xk_log_walk(log, &see_ops, &s), 0);
	ck_assert_int_eq(s.trans, 2);
	ck_assert_uint_eq(s.last_byte, 0x22);
	xk_log_close(log);
}
END_TEST

/* A bad CRC in the newest record is a torn write: the head moves back. */
START_TEST(test_torn_write)
{
	uint8_t *l = new_log();
	uint32_t b = put_unmount(l, 0, 1), t = b, last;
	struct seen s = { 0 };
	struct xk_log *log;

	b = put_trans(l, b, 1, xk_lsn_make(1, t), 1);
	last = b;
	b = put_trans(l, b, 1, xk_lsn_make(1, t), 2);
	l[(last + 1) * 512 + 100] ^= 0x40;
	log = open_log(l, 0);
	ck_assert_uint_eq(xk_log_get_state(log)->torn_blk, last);
	ck_assert_uint_eq(xk_log_get_state(log)->head_blk, last);
	ck_assert_int_eq(xk_log_walk(log, &see_ops, &s), 0);
	ck_assert_int_eq(s.trans, 1);
	xk_log_close(log);
}
END_TEST

/* A record whose last block was never written: the head backs over it. */
START_TEST(test_partial_record_at_head)
{
	uint8_t *l = new_log(), d[1500];
	struct payload p = { .len = 0 };
	uint32_t b = put_unmount(l, 0, 1), t = b, part;
	struct xk_log *log;

	b = put_trans(l, b, 1, xk_lsn_make(1, t), 1);
	part = b;
	memset(d, 7, sizeof(d));
	op(&p, 0x77, XK_LOG_START_TRANS, XK_TRANSACTION, NULL, 0);
	op(&p, 0x77, 0, XK_TRANSACTION, d, sizeof(d));
	b = put_record(l, b, 1, xk_lsn_make(1, t), &p);
	memset(l + (b - 1) * 512, 0, 512);
	log = open_log(l, 0);
	ck_assert_uint_eq(xk_log_get_state(log)->head_blk, part);
	xk_log_close(log);
}
END_TEST

/* A bad CRC far from the head is damage, named by its block. */
START_TEST(test_bad_crc_is_damage)
{
	uint8_t *l = new_log();
	uint32_t b = put_unmount(l, 0, 1), t = b;
	struct xk_log *log;

	for (int i = 0; i < 12; i++)
		b = put_trans(l, b, 1, xk_lsn_make(1, t), (uint8_t)i);
	l[(t + 1) * 512 + 200] ^= 1;
	log = open_log(l, 0);
	ck_assert_uint_eq(xk_log_get_state(log)->torn_blk, XK_LOG_NOBLK);
	ck_assert_int_eq(xk_log_walk(log, NULL, NULL), XK_EBADCRC);
	ck_assert_ptr_nonnull(strstr(xk_log_errmsg(log), "CRC mismatch"));
	ck_assert_ptr_nonnull(strstr(xk_log_errmsg(log), "block 2 "));
	xk_log_close(log);
}
END_TEST

/*
 * Damaged items behind a valid CRC, each with the words the message must
 * contain.
 */
enum { BAD_MAP, BAD_REGION_LEN, BAD_TRANS_MAGIC, BAD_FLAGS, BAD_CLIENT,
       BAD_TYPE, BAD_REGION_COUNT, BAD_INODE_FMT, BAD_NR };

static const char *const bad_msg[BAD_NR] = {
	"bitmap of 9 words", "not a multiple of 128",
	"bad transaction header", "bad op flags", "bad client id",
	"unknown item type", "declares 5 regions",
	"format region of 40 bytes",
};

START_TEST(test_damaged_items)
{
	uint8_t *l = new_log(), f[64], d[256];
	struct payload p = { .len = 0 };
	uint32_t b = put_unmount(l, 0, 1), t = b, flen;
	struct xk_log *log;
	int err;

	memset(d, 0, sizeof(d));
	flen = buf_format(f, 2, 0, 1);
	op(&p, TID, XK_LOG_START_TRANS, XK_TRANSACTION, NULL, 0);
	if (_i == BAD_TRANS_MAGIC) {
		uint8_t th[16] = { 0 };

		op(&p, TID, 0, XK_TRANSACTION, th, 16);
	} else {
		trans_header(&p, 2);
	}
	switch (_i) {
	case BAD_MAP:
		xk_put_ne32(f + 16, 9);
		break;
	case BAD_TYPE:
		xk_put_ne16(f, 0x4321);
		break;
	case BAD_REGION_COUNT:
		xk_put_ne16(f + 2, 5);
		break;
	case BAD_INODE_FMT:
		xk_put_ne16(f, XK_LI_INODE);
		flen = 40;
		break;
	default:
		break;
	}
	op(&p, TID, 0, _i == BAD_CLIENT ? 0x55 : XK_TRANSACTION, f, flen);
	op(&p, TID, _i == BAD_FLAGS ? 0x40 : 0, XK_TRANSACTION, d,
	   _i == BAD_REGION_LEN ? 100 : 128);
	op(&p, TID, XK_LOG_COMMIT_TRANS, XK_TRANSACTION, NULL, 0);
	put_record(l, b, 1, xk_lsn_make(1, t), &p);
	log = open_log(l, 0);
	err = xk_log_walk(log, NULL, NULL);
	ck_assert_int_eq(err, XK_ECORRUPT);
	ck_assert_msg(strstr(xk_log_errmsg(log), bad_msg[_i]) != NULL,
		      "case %d: %s", _i, xk_log_errmsg(log));
	xk_log_close(log);
}
END_TEST

/* An op claiming more bytes than its record holds. */
START_TEST(test_op_past_record_end)
{
	uint8_t *l = new_log();
	uint32_t b = put_unmount(l, 0, 1), t = b;
	struct xk_log *log;

	put_trans(l, b, 1, xk_lsn_make(1, t), 3);
	/* Second op header's oh_len (first op is 12 bytes, no data). */
	xk_put_be32(l + (b + 1) * 512 + 12 + 4, 100000);
	{
		/* Re-checksum the record so only the length is wrong. */
		uint32_t len = xk_get_be32(l + b * 512 + 12), crc;

		memset(l + b * 512 + 32, 0, 4);
		crc = xk_crc32c_update(~0u, l + b * 512, 328);
		crc = ~xk_crc32c_update(crc, l + (b + 1) * 512, len);
		xk_put_le32(l + b * 512 + 32, crc);
	}
	log = open_log(l, 0);
	ck_assert_int_eq(xk_log_walk(log, NULL, NULL), XK_ECORRUPT);
	ck_assert_ptr_nonnull(strstr(xk_log_errmsg(log),
				     "op 1: length 100000 runs past"));
	xk_log_close(log);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");

	tcase_add_test(tc, test_zeroed_log_is_empty);
	tcase_add_test(tc, test_mkfs_log_is_clean);
	tcase_add_test(tc, test_dirty_log_walk);
	tcase_add_test(tc, test_region_across_records);
	tcase_add_test(tc, test_wrapped_log);
	tcase_add_test(tc, test_torn_write);
	tcase_add_test(tc, test_partial_record_at_head);
	tcase_add_test(tc, test_bad_crc_is_damage);
	tcase_add_loop_test(tc, test_damaged_items, 0, BAD_NR);
	tcase_add_test(tc, test_op_past_record_end);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
