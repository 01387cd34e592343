// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The field tables: every table is well formed (names, positions inside
 * the structure, duplicates only where presence functions choose between
 * them); values read through the tables equal what the format decoders
 * produce (superblock, bmbt records, inode forks, short-form directories
 * and attributes); writes through the tables change only the field's
 * bits; paths resolve or fail with the right error; and walking every
 * table over random bytes stays inside the buffer (the sanitizers watch).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/fields.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dinode.h>
#include <xfskit/format/dir.h>
#include <xfskit/libfs.h>

#include "unit.h"

static uint64_t rng = 88172645463325252ULL;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
fctx(struct xk_fctx *c, const uint8_t *buf, size_t len)
{
	memset(c, 0, sizeof(*c));
	c->buf = buf;
	c->len = len;
	c->blocksize = 4096;
	c->inodesize = 512;
	c->has_ftype = 1;
	c->has_sparse = 1;
}

static uint64_t
get(const struct xk_fctx *c, const struct xk_field *t, const char *path)
{
	struct xk_fref r;

	ck_assert_msg(xk_field_resolve(c, t, path, &r) == 0, "resolve %s",
		      path);
	return xk_fval_get(c, &r);
}

/* Every field of every table, recursively: sane and bounded. */
static unsigned int
walk(const struct xk_fctx *c, const struct xk_field *fields, size_t base,
     int depth)
{
	unsigned int seen = 0;

	ck_assert_int_lt(depth, 8);
	for (const struct xk_field *f = fields; f->name; f++) {
		uint32_t n = xk_field_count(c, f, base);

		ck_assert(f->name[0] != '\0');
		for (uint32_t i = 0; i < n; i++) {
			size_t at = xk_field_elem(c, f, base, i);

			ck_assert(at != XK_FOFF_NONE);
			ck_assert_uint_le(at, c->len);
			seen++;
			if (f->kind == XK_FK_STRUCT) {
				seen += walk(c, f->sub, at, depth + 1);
			} else {
				struct xk_fref r = {
					.field = f, .byte = at,
					.bitoff = f->bitoff,
					.bits = xk_field_bits(c, f, base),
				};

				ck_assert_uint_le(at + (r.bitoff + r.bits + 7)
						  / 8, c->len);
				if (r.bits <= 64)
					(void)xk_fval_get(c, &r);
			}
			if (i > 64)
				break;	/* a sample of long arrays */
		}
	}
	return seen;
}

START_TEST(test_tables_well_formed)
{
	uint8_t buf[4096];
	struct xk_fctx c;

	memset(buf, 0, sizeof(buf));
	fctx(&c, buf, sizeof(buf));
	for (int t = 0; xk_ftypes[t]; t++) {
		const struct xk_field *fl = xk_ftypes[t]->fields;

		ck_assert_ptr_eq(xk_ftype_find(xk_ftypes[t]->name),
				 xk_ftypes[t]);
		for (const struct xk_field *f = fl; f->name; f++) {
			for (const struct xk_field *g = f + 1; g->name; g++)
				if (!strcmp(f->name, g->name))
					ck_assert_msg(f->present && g->present,
						"%s: %s twice without presence",
						xk_ftypes[t]->name, f->name);
			if (f->kind == XK_FK_STRUCT)
				ck_assert_ptr_nonnull(f->sub);
			else if (!f->bits_fn)
				ck_assert_uint_gt(f->bits, 0);
		}
		walk(&c, fl, 0, 0);
	}
	ck_assert_ptr_null(xk_ftype_find("nosuchtype"));
}
END_TEST

/* Fixed fields of the headers lie inside their structs. */
START_TEST(test_header_bounds)
{
	static const struct { const struct xk_ftype *t; size_t size; } s[] = {
		{ &xk_sb_ftype, sizeof(struct xk_dsb) },
		{ &xk_agf_ftype, sizeof(struct xk_agf) },
		{ &xk_agi_ftype, sizeof(struct xk_agi) },
	};

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		for (const struct xk_field *f = s[i].t->fields; f->name; f++) {
			size_t end = f->offset + (f->bitoff + f->bits + 7) / 8;

			if (f->flags & XK_FF_ARRAY)
				end = f->offset + (size_t)f->count * f->stride;
			ck_assert_msg(end <= s[i].size, "%s.%s ends at %zu",
				      s[i].t->name, f->name, end);
		}
}
END_TEST

START_TEST(test_sb_values)
{
	struct xk_dsb d;
	struct xk_sb sb;
	struct xk_fctx c;
	struct xk_fref r;

	memset(&sb, 0, sizeof(sb));
	sb.magicnum = XK_SB_MAGIC;
	sb.blocksize = 4096;
	sb.dblocks = 123456789;
	sb.agcount = 7;
	sb.rootino = 128;
	sb.inodesize = 512;
	sb.features_incompat = 0xb;
	sb.lsn = 0x100000002ULL;
	memset(sb.uuid, 0xab, 16);
	memcpy(sb.fname, "label", 5);
	xk_sb_encode(&d, &sb);
	fctx(&c, (const uint8_t *)&d, sizeof(d));
	ck_assert_uint_eq(get(&c, xk_sb_ftype.fields, "magicnum"),
			  XK_SB_MAGIC);
	ck_assert_uint_eq(get(&c, xk_sb_ftype.fields, "dblocks"), 123456789);
	ck_assert_uint_eq(get(&c, xk_sb_ftype.fields, "agcount"), 7);
	ck_assert_uint_eq(get(&c, xk_sb_ftype.fields, "rootino"), 128);
	ck_assert_uint_eq(get(&c, xk_sb_ftype.fields, "inodesize"), 512);
	ck_assert_uint_eq(get(&c, xk_sb_ftype.fields, "features_incompat"),
			  0xb);
	ck_assert_uint_eq(get(&c, xk_sb_ftype.fields, "lsn"), 0x100000002ULL);
	ck_assert_int_eq(xk_field_resolve(&c, xk_sb_ftype.fields, "uuid", &r),
			 0);
	ck_assert_uint_eq(r.byte, offsetof(struct xk_dsb, sb_uuid));
	ck_assert_uint_eq(r.bits, 128);
	ck_assert_int_eq(xk_field_resolve(&c, xk_sb_ftype.fields, "fname", &r),
			 0);
	ck_assert_int_eq(memcmp(c.buf + r.byte, "label", 5), 0);
	ck_assert_int_eq(xk_field_resolve(&c, xk_sb_ftype.fields, "crc", &r),
			 0);
	ck_assert_uint_eq(r.byte, offsetof(struct xk_dsb, sb_crc));
	ck_assert_int_eq(xk_field_resolve(&c, xk_sb_ftype.fields, "nosuch",
					  &r), -ENOENT);
	ck_assert_int_eq(xk_field_resolve(&c, xk_sb_ftype.fields,
					  "magicnum[1]", &r), -ENOENT);
	ck_assert_int_eq(xk_field_resolve(&c, xk_sb_ftype.fields, "", &r),
			 -ENOENT);
}
END_TEST

/* bmbt extent fields through the table equal xk_bmbt_rec_unpack. */
START_TEST(test_bmbt_bitfields)
{
	struct xk_fctx c;
	uint8_t buf[4096];
	struct xk_btree_lblock *h = (void *)buf;

	memset(buf, 0, sizeof(buf));
	xk_be32_set(&h->bb_magic, XK_BMAP_CRC_MAGIC);
	xk_be16_set(&h->bb_numrecs, 200);
	fctx(&c, buf, sizeof(buf));
	for (int i = 0; i < 200; i++) {
		struct xk_bmbt_irec ir = {
			.startoff = rnd() & XK_BMBT_STARTOFF_MASK,
			.startblock = rnd() & XK_BMBT_STARTBLOCK_MASK,
			.blockcount = rnd() & XK_BMBT_BLOCKCOUNT_MASK,
			.unwritten = (int)(rnd() & 1),
		}, back;
		struct xk_bmbt_rec *rec = (void *)(buf + 72 + 16 * i);
		char path[64];
		struct xk_fref r;

		xk_bmbt_rec_pack(rec, &ir);
		snprintf(path, sizeof(path), "recs[%d].startoff", i + 1);
		ck_assert_uint_eq(get(&c, xk_bmapbtd_ftype.fields, path),
				  ir.startoff);
		snprintf(path, sizeof(path), "recs[%d].startblock", i + 1);
		ck_assert_uint_eq(get(&c, xk_bmapbtd_ftype.fields, path),
				  ir.startblock);
		snprintf(path, sizeof(path), "recs[%d].blockcount", i + 1);
		ck_assert_uint_eq(get(&c, xk_bmapbtd_ftype.fields, path),
				  ir.blockcount);
		snprintf(path, sizeof(path), "recs[%d].extentflag", i + 1);
		ck_assert_uint_eq(get(&c, xk_bmapbtd_ftype.fields, path),
				  (uint64_t)ir.unwritten);
		/* A write through the table changes that field only. */
		snprintf(path, sizeof(path), "recs[%d].startblock", i + 1);
		ck_assert_int_eq(xk_field_resolve(&c, xk_bmapbtd_ftype.fields,
						  path, &r), 0);
		xk_fval_set(buf, &r, 12345);
		xk_bmbt_rec_unpack(rec, &back);
		ck_assert_uint_eq(back.startblock, 12345);
		ck_assert_uint_eq(back.startoff, ir.startoff);
		ck_assert_uint_eq(back.blockcount, ir.blockcount);
		ck_assert_int_eq(back.unwritten, ir.unwritten);
	}
	{
		struct xk_fref r;

		ck_assert_int_eq(xk_field_resolve(&c, xk_bmapbtd_ftype.fields,
						  "recs[201]", &r), -ERANGE);
		ck_assert_int_eq(xk_field_resolve(&c, xk_bmapbtd_ftype.fields,
						  "recs[0]", &r), -ERANGE);
		ck_assert_int_eq(xk_field_resolve(&c, xk_bmapbtd_ftype.fields,
						  "ptrs[1]", &r), -ENOENT);
	}
}
END_TEST

/* Inode forks: extents, short-form directory, short-form attributes. */
START_TEST(test_inode_forks)
{
	uint8_t buf[512];
	struct xk_dinode *dip = (void *)buf;
	struct xk_dir2_sf_hdr *sf;
	struct xk_dir2_sf_entry *e;
	struct xk_attr_sf_hdr *ah;
	struct xk_attr_sf_entry *ae;
	struct xk_fctx c;
	struct xk_fref r;

	memset(buf, 0, sizeof(buf));
	xk_be16_set(&dip->di_magic, XK_DINODE_MAGIC);
	xk_be16_set(&dip->di_mode, XK_S_IFDIR | 0755);
	dip->di_version = 3;
	dip->di_format = XK_DINODE_FMT_LOCAL;
	dip->di_forkoff = 24;		/* attr fork at 176 + 192 */
	dip->di_aformat = XK_DINODE_FMT_LOCAL;
	sf = (void *)xk_dfork_dptr(dip);
	sf->count = 2;
	xk_dir2_sf_put_parent(sf, 128);
	e = xk_dir2_sf_firstentry(sf);
	e->namelen = 3;
	memcpy(e->name, "abc", 3);
	xk_dir2_sf_put_offset(e, 0x60);
	xk_dir2_sf_put_ftype(e, 1, XK_DIR3_FT_REG_FILE);
	xk_dir2_sf_put_ino(sf, e, 1, 131);
	e = xk_dir2_sf_nextentry(sf, e, 1);
	e->namelen = 1;
	e->name[0] = 'z';
	xk_dir2_sf_put_ftype(e, 1, XK_DIR3_FT_DIR);
	xk_dir2_sf_put_ino(sf, e, 1, 4242);
	ah = (void *)xk_dfork_aptr(dip);
	ah->count = 1;
	ae = xk_attr_sf_firstentry(ah);
	ae->namelen = 2;
	ae->valuelen = 3;
	ae->flags = XK_ATTR_ROOT;
	memcpy(ae->nameval, "nmval", 5);
	xk_be16_set(&ah->totsize, 4 + 3 + 5);
	fctx(&c, buf, sizeof(buf));
	ck_assert_uint_eq(get(&c, xk_inode_ftype.fields, "core.mode"),
			  XK_S_IFDIR | 0755);
	ck_assert_uint_eq(get(&c, xk_inode_ftype.fields,
			      "u3.sfdir3.hdr.parent.i4"), 128);
	ck_assert_uint_eq(get(&c, xk_inode_ftype.fields,
			      "u3.sfdir3.list[0].inumber.i4"), 131);
	ck_assert_uint_eq(get(&c, xk_inode_ftype.fields,
			      "u3.sfdir3.list[1].inumber.i4"), 4242);
	ck_assert_uint_eq(get(&c, xk_inode_ftype.fields,
			      "u3.sfdir3.list[1].filetype"), XK_DIR3_FT_DIR);
	ck_assert_int_eq(xk_field_resolve(&c, xk_inode_ftype.fields,
					  "u3.sfdir3.list[0].name", &r), 0);
	ck_assert_uint_eq(r.bits, 24);
	ck_assert_int_eq(memcmp(buf + r.byte, "abc", 3), 0);
	ck_assert_int_eq(xk_field_resolve(&c, xk_inode_ftype.fields,
					  "u3.sfdir3.list[2]", &r), -ERANGE);
	ck_assert_int_eq(xk_field_resolve(&c, xk_inode_ftype.fields,
					  "u3.bmx", &r), -ENOENT);
	/* Failures say which part of the path, as xfs_db's messages do. */
	ck_assert_int_eq(xk_field_resolve(&c, xk_inode_ftype.fields,
					  "u3.sfdir3.list[2]", &r), -ERANGE);
	ck_assert_int_eq(r.why, XK_FPATH_RANGE);
	ck_assert_uint_eq(r.bad_index, 2);
	ck_assert_uint_eq(r.count, 2);
	ck_assert_int_eq(xk_field_resolve(&c, xk_inode_ftype.fields,
					  "core.bogus.x", &r), -ENOENT);
	ck_assert_int_eq(r.why, XK_FPATH_UNKNOWN);
	ck_assert_uint_eq(r.bad_off, 5);
	ck_assert_uint_eq(r.bad_len, 5);
	ck_assert_int_eq(xk_field_resolve(&c, xk_inode_ftype.fields,
					  "core.mode[0]", &r), -ENOENT);
	ck_assert_int_eq(r.why, XK_FPATH_NOT_ARRAY);
	ck_assert_int_eq(xk_field_resolve(&c, xk_inode_ftype.fields,
					  "core.mode.x", &r), -ENOENT);
	ck_assert_int_eq(r.why, XK_FPATH_NO_SUBFIELDS);
	ck_assert_int_eq(xk_field_resolve(&c, xk_inode_ftype.fields,
					  "u3.sfdir3.list.name", &r), -ENOENT);
	ck_assert_int_eq(r.why, XK_FPATH_WANT_INDEX);
	ck_assert_int_eq(xk_field_resolve(&c, xk_inode_ftype.fields,
					  "core..mode", &r), -ENOENT);
	ck_assert_int_eq(r.why, XK_FPATH_SYNTAX);
	ck_assert_uint_eq(get(&c, xk_inode_ftype.fields,
			      "a.sfattr.list[0].root"), 1);
	ck_assert_uint_eq(get(&c, xk_inode_ftype.fields,
			      "a.sfattr.list[0].secure"), 0);
	ck_assert_int_eq(xk_field_resolve(&c, xk_inode_ftype.fields,
					  "a.sfattr.list[0].value", &r), 0);
	ck_assert_uint_eq(r.bits, 24);
	ck_assert_int_eq(memcmp(buf + r.byte, "val", 3), 0);
	/* The same inode as an extent-format file. */
	xk_be16_set(&dip->di_mode, XK_S_IFREG | 0644);
	dip->di_format = XK_DINODE_FMT_EXTENTS;
	dip->di_forkoff = 0;
	xk_dinode_set_nextents(dip, 100, 0);	/* more than fit: clipped */
	{
		struct xk_bmbt_irec ir = { 5, 1000, 7, 0 };

		xk_bmbt_rec_pack((void *)xk_dfork_dptr(dip), &ir);
	}
	ck_assert_uint_eq(get(&c, xk_inode_ftype.fields,
			      "u3.bmx[0].startblock"), 1000);
	ck_assert_int_eq(xk_field_resolve(&c, xk_inode_ftype.fields,
					  "u3.bmx[20]", &r), 0);
	ck_assert_int_eq(xk_field_resolve(&c, xk_inode_ftype.fields,
					  "u3.bmx[21]", &r), -ERANGE);
	ck_assert_int_eq(xk_field_resolve(&c, xk_inode_ftype.fields, "a",
					  &r), -ENOENT);
}
END_TEST

/* Random bytes through every table: no read outside the buffer. */
START_TEST(test_hostile_buffers)
{
	static const size_t sizes[] = { 0, 1, 7, 64, 176, 256, 512, 1000,
					4096 };
	uint8_t *buf = malloc(4096);

	ck_assert_ptr_nonnull(buf);
	for (int round = 0; round < 200; round++) {
		size_t len = sizes[round % 9];
		struct xk_fctx c;

		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rnd();
		/* Sometimes plant real magics so the deep parts are used. */
		if (len >= 16 && round % 3 == 0)
			xk_put_be32(buf, round % 2 ? XK_DIR3_DATA_MAGIC :
					 XK_DIR3_BLOCK_MAGIC);
		if (len >= 16 && round % 5 == 0)
			xk_put_be16(buf + 8, round % 2 ? XK_ATTR3_LEAF_MAGIC :
					     XK_DIR3_LEAF1_MAGIC);
		if (len >= 176 && round % 7 == 0) {
			buf[0] = 0x49;
			buf[1] = 0x4e;
			buf[5] = (uint8_t)(round % 4);
			buf[83] = (uint8_t)(round % 4);
		}
		/* Copy to an exact-size allocation so ASan sees the end. */
		{
			uint8_t *exact = malloc(len ? len : 1);

			ck_assert_ptr_nonnull(exact);
			memcpy(exact, buf, len);
			fctx(&c, exact, len);
			c.bigtime = round & 1;
			c.has_ftype = (round >> 1) & 1;
			for (int t = 0; xk_ftypes[t]; t++)
				walk(&c, xk_ftypes[t]->fields, 0, 0);
			free(exact);
		}
	}
	free(buf);
}
END_TEST

static Suite *
fields_suite(void)
{
	Suite *s = suite_create("fields");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_tables_well_formed);
	tcase_add_test(tc, test_header_bounds);
	tcase_add_test(tc, test_sb_values);
	tcase_add_test(tc, test_bmbt_bitfields);
	tcase_add_test(tc, test_inode_forks);
	tcase_add_test(tc, test_hostile_buffers);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(fields_suite());
}
