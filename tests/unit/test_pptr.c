// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Parent pointers and logged attribute intents, in memory: the parent
 * pointer hash against values worked out by hand from the dabtree hash
 * rule; the attribute layout's rules for the PARENT namespace (a name
 * may repeat with another value, never with the same one; values are
 * 12-byte records; names are entry names) and the hash it stores in
 * leaf entries; the attribute list edits replay uses; and the ATTRI
 * decoder over well-formed and damaged items.
 */
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build_attr.h>
#include <xfskit/errors.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/log.h>
#include <xfskit/log_attri.h>

#include "../../libfs/write/attr_fmt.h"

static void
rec_set(struct xk_parent_rec *r, uint64_t ino, uint32_t gen)
{
	xk_be64_set(&r->p_ino, ino);
	xk_be32_set(&r->p_gen, gen);
}

/*
 * The hash: the dabtree hash of the name (one byte "f": the byte itself;
 * four bytes "abcd": a<<21 ^ b<<14 ^ c<<7 ^ d) XORed with both halves of
 * the parent's inode number.
 */
START_TEST(test_hash)
{
	uint32_t abcd = ((uint32_t)'a' << 21) ^ ((uint32_t)'b' << 14) ^
			((uint32_t)'c' << 7) ^ 'd';

	ck_assert_uint_eq(xk_pptr_hashname((const uint8_t *)"f", 1, 131),
			  0x66u ^ 131u);
	ck_assert_uint_eq(xk_pptr_hashname((const uint8_t *)"abcd", 4,
					   0x123456789abcULL),
			  abcd ^ 0x1234u ^ 0x56789abcu);
	ck_assert(xk_pptr_name_ok((const uint8_t *)"a b", 3));
	ck_assert(!xk_pptr_name_ok((const uint8_t *)"a/b", 3));
	ck_assert(!xk_pptr_name_ok((const uint8_t *)"a\0b", 3));
	ck_assert(!xk_pptr_name_ok((const uint8_t *)"", 0));
}
END_TEST

/* Layout rules of the PARENT namespace. */
START_TEST(test_plan_rules)
{
	struct xk_parent_rec r1, r2;
	struct xk_bld_xattr xa[2] = {
		{ XK_ATTR_PARENT, (const uint8_t *)"name", 4,
		  (const uint8_t *)&r1, sizeof(r1) },
		{ XK_ATTR_PARENT, (const uint8_t *)"name", 4,
		  (const uint8_t *)&r2, sizeof(r2) },
	};
	struct attr_plan pl;

	rec_set(&r1, 128, 1);
	rec_set(&r2, 131, 7);
	/* One name from two directories: two pointers. */
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 200, xa, 2), 0);
	ck_assert_int_eq(pl.form, ATTR_FORM_SF);
	attr_plan_free(&pl);
	/* The same name and value twice: one pointer given twice. */
	rec_set(&r2, 128, 1);
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 200, xa, 2), -EEXIST);
	rec_set(&r2, 131, 7);
	xa[1].valuelen = 11;
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 200, xa, 2), -EINVAL);
	xa[1].valuelen = sizeof(r2);
	xa[1].name = (const uint8_t *)"na/e";
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 200, xa, 2), -EINVAL);
	xa[1].name = (const uint8_t *)"name";
	xa[1].flags = XK_ATTR_PARENT | XK_ATTR_ROOT;
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 200, xa, 2), -EINVAL);
}
END_TEST

/* A leaf of pointers: entries carry the pointer hash, in hash order. */
START_TEST(test_leaf_hash)
{
	enum { N = 80 };
	struct xk_parent_rec recs[N];
	struct xk_bld_xattr xa[N];
	char names[N][16];
	struct attr_plan pl;
	struct attr_blkid id = { .ino = 1234, .daddr = 64 };
	static const uint8_t uuid[16];
	uint8_t *blk = calloc(1, 4096);
	const struct xk_attr3_leaf_hdr *h = (const void *)blk;
	const struct xk_attr_leaf_entry *e = xk_attr3_leaf_entryp(h);
	uint32_t last = 0;

	ck_assert_ptr_nonnull(blk);
	id.uuid = uuid;
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "link%d", i % 10);
		rec_set(&recs[i], 1000 + (uint64_t)i, (uint32_t)i);
		xa[i] = (struct xk_bld_xattr){ XK_ATTR_PARENT,
			(const uint8_t *)names[i], (uint8_t)strlen(names[i]),
			(const uint8_t *)&recs[i], sizeof(recs[i]) };
	}
	ck_assert_int_eq(attr_plan_make(&pl, 4096, 0, xa, N), 0);
	ck_assert_int_eq(pl.form, ATTR_FORM_LEAF);
	attr_leaf_fill(&pl, 0, &id, blk);
	ck_assert_uint_eq(xk_be16_get(h->count), N);
	for (int i = 0; i < N; i++) {
		const struct xk_attr_leaf_name_local *n =
			(const void *)xk_attr3_leaf_name(h, (unsigned int)i);
		const struct xk_parent_rec *r =
			(const void *)(n->nameval + n->namelen);
		uint32_t hv = xk_be32_get(e[i].hashval);

		ck_assert_uint_eq(e[i].flags, XK_ATTR_PARENT | XK_ATTR_LOCAL);
		ck_assert_uint_eq(hv, xk_pptr_hashname(n->nameval, n->namelen,
						       xk_be64_get(r->p_ino)));
		ck_assert_uint_ge(hv, last);
		last = hv;
	}
	attr_plan_free(&pl);
	free(blk);
}
END_TEST

/* The list edits: a pointer goes by name and value, an xattr by name. */
START_TEST(test_list)
{
	struct xk_attr_list l = { 0 };
	struct xk_parent_rec a, b;

	rec_set(&a, 128, 1);
	rec_set(&b, 200, 2);
	ck_assert_int_eq(xk_attr_list_add(&l, XK_ATTR_PARENT,
			 (const uint8_t *)"x", 1, (const uint8_t *)&a, 12), 0);
	ck_assert_int_eq(xk_attr_list_add(&l, XK_ATTR_PARENT,
			 (const uint8_t *)"x", 1, (const uint8_t *)&b, 12), 0);
	ck_assert_int_eq(xk_attr_list_add(&l, 0, (const uint8_t *)"x", 1,
			 (const uint8_t *)"v", 1), 0);
	ck_assert_uint_eq(xk_attr_list_remove(&l, XK_ATTR_PARENT,
			  (const uint8_t *)"x", 1, (const uint8_t *)&b, 12), 1);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_uint_eq(xk_attr_list_remove(&l, XK_ATTR_PARENT,
			  (const uint8_t *)"x", 1, (const uint8_t *)&b, 12), 0);
	ck_assert_uint_eq(xk_attr_list_remove(&l, 0, (const uint8_t *)"x", 1,
					      NULL, 0), 1);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(l.xa[0].flags, XK_ATTR_PARENT);
	ck_assert_int_eq(memcmp(l.xa[0].value, &a, 12), 0);
	xk_attr_list_free(&l);
}
END_TEST

/* An ATTRI item laid out as the kernel logs it (host order). */
struct item {
	uint8_t			fmt[40];
	uint8_t			name[8], newname[8];
	struct xk_parent_rec	val, newval;
	struct xk_log_region	r[5];
	struct xk_log_item	it;
};

static void
item_make(struct item *t, uint32_t op, uint32_t nregs)
{
	struct xk_attri_log_format f = { 0 };

	memset(t, 0, sizeof(*t));
	f.alfi_type = XK_LI_ATTRI;
	f.alfi_size = (uint16_t)nregs;
	f.alfi_igen = 77;
	f.alfi_id = 0xabcdef;
	f.alfi_ino = 131;
	f.alfi_op_flags = op;
	if (op == XK_ATTRI_OP_FLAGS_PPTR_REPLACE) {
		f.alfi_old_name_len = 3;
		f.alfi_new_name_len = 5;
	} else {
		f.alfi_name_len = 3;
	}
	f.alfi_value_len = 12;
	f.alfi_attr_filter = XK_ATTR_PARENT;
	memcpy(t->fmt, &f, sizeof(f));
	memcpy(t->name, "abc", 3);
	memcpy(t->newname, "defgh", 5);
	rec_set(&t->val, 128, 5);
	rec_set(&t->newval, 140, 6);
	t->r[0] = (struct xk_log_region){ t->fmt, 40 };
	t->r[1] = (struct xk_log_region){ t->name, 4 };
	if (op == XK_ATTRI_OP_FLAGS_PPTR_REPLACE) {
		t->r[2] = (struct xk_log_region){ t->newname, 8 };
		t->r[3] = (struct xk_log_region){ (const uint8_t *)&t->val,
						  12 };
		t->r[4] = (struct xk_log_region){ (const uint8_t *)&t->newval,
						  12 };
	} else {
		t->r[2] = (struct xk_log_region){ (const uint8_t *)&t->val,
						  12 };
	}
	t->it = (struct xk_log_item){ XK_LI_ATTRI, (uint16_t)nregs, t->r };
}

START_TEST(test_decode)
{
	struct item t;
	struct xk_log_attri a;
	const char *why;

	item_make(&t, XK_ATTRI_OP_FLAGS_PPTR_REPLACE, 5);
	ck_assert_int_eq(xk_log_attri_decode(NULL, &t.it, &a, &why), 0);
	ck_assert_uint_eq(a.op, XK_ATTRI_OP_FLAGS_PPTR_REPLACE);
	ck_assert_uint_eq(a.ino, 131);
	ck_assert_uint_eq(a.igen, 77);
	ck_assert_uint_eq(a.namelen, 3);
	ck_assert_uint_eq(a.new_namelen, 5);
	ck_assert_int_eq(memcmp(a.new_name, "defgh", 5), 0);
	ck_assert_ptr_eq(a.new_value, (const uint8_t *)&t.newval);
	ck_assert_str_eq(xk_log_attri_op_name(a.op), "PPTR_REPLACE");

	item_make(&t, XK_ATTRI_OP_FLAGS_PPTR_SET, 3);
	ck_assert_int_eq(xk_log_attri_decode(NULL, &t.it, &a, &why), 0);
	ck_assert_ptr_null(a.new_name);
	/* A region count the operation does not have. */
	t.it.nregions = 2;
	ck_assert_int_eq(xk_log_attri_decode(NULL, &t.it, &a, &why),
			 XK_ECORRUPT);
	/* A name region not padded to 4 bytes. */
	item_make(&t, XK_ATTRI_OP_FLAGS_PPTR_SET, 3);
	t.r[1].len = 3;
	ck_assert_int_eq(xk_log_attri_decode(NULL, &t.it, &a, &why),
			 XK_ECORRUPT);
	/* '/' in a parent pointer name. */
	item_make(&t, XK_ATTRI_OP_FLAGS_PPTR_SET, 3);
	t.name[1] = '/';
	ck_assert_int_eq(xk_log_attri_decode(NULL, &t.it, &a, &why),
			 XK_ECORRUPT);
	/* Unknown operation, flags above the type, two namespaces. */
	item_make(&t, 7, 3);
	ck_assert_int_eq(xk_log_attri_decode(NULL, &t.it, &a, &why),
			 XK_ECORRUPT);
	item_make(&t, XK_ATTRI_OP_FLAGS_PPTR_SET | 0x100, 3);
	ck_assert_int_eq(xk_log_attri_decode(NULL, &t.it, &a, &why),
			 XK_ECORRUPT);
	item_make(&t, XK_ATTRI_OP_FLAGS_PPTR_SET, 3);
	t.fmt[36] = XK_ATTR_PARENT | XK_ATTR_ROOT;
	ck_assert_int_eq(xk_log_attri_decode(NULL, &t.it, &a, &why),
			 XK_ECORRUPT);
	/* A parent pointer value of another size. */
	item_make(&t, XK_ATTRI_OP_FLAGS_PPTR_SET, 3);
	t.fmt[32] = 13;
	ck_assert_int_eq(xk_log_attri_decode(NULL, &t.it, &a, &why),
			 XK_ECORRUPT);
	/* A format region of another size. */
	item_make(&t, XK_ATTRI_OP_FLAGS_PPTR_SET, 3);
	t.r[0].len = 36;
	ck_assert_int_eq(xk_log_attri_decode(NULL, &t.it, &a, &why),
			 XK_ECORRUPT);
	ck_assert_ptr_nonnull(why);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("pptr");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_hash);
	tcase_add_test(tc, test_plan_rules);
	tcase_add_test(tc, test_leaf_hash);
	tcase_add_test(tc, test_list);
	tcase_add_test(tc, test_decode);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(suite());
}
