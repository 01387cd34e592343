// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * print: show the current buffer through its field table, in xfs_db's
 * format -- "name = value", nested names joined by dots, arrays as
 * "name[lo-hi] = 0:v 1:v", record arrays as "[a,b]" one per line --
 * and a raw hex dump for the "data" type.  Also the verifier's verdict
 * line shown after a read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <xfskit/crc32c.h>
#include <xfskit/format/dinode.h>
#include <xfskit/format/dquot.h>

#include "db.h"

void
db_print_verdict(struct db_ctx *c)
{
	const char *what;

	if (!c->verdict)
		return;
	what = c->verdict == XK_EBADCRC ? "CRC error" : "corruption";
	if (c->verdict == XK_EBADCRC || c->verdict == XK_ECORRUPT) {
		char line[400];

		xk_fail_format(&c->fail, line, sizeof(line));
		db_note(c, "Metadata %s detected at %s, daddr 0x%llx/0x%x: %s",
			what, c->fail.structure ? c->fail.structure :
			c->cur.type->name, (unsigned long long)c->cur.daddr,
			c->cur.len, line);
	} else {
		db_note(c, "Metadata verification of %s at daddr 0x%llx "
			"failed: %s", c->cur.type->name,
			(unsigned long long)c->cur.daddr,
			xk_strerror(c->verdict));
	}
}

static void
chars(const uint8_t *p, size_t n, char *out, size_t len)
{
	size_t o = 0;

	if (len < 8)
		return;
	out[o++] = '"';
	for (size_t i = 0; i < n && o + 6 < len; i++) {
		uint8_t ch = p[i];

		if (ch == '\\' || ch == '\'' || ch == '"' || ch == '?')
			o += (size_t)snprintf(out + o, len - o, "\\%c", ch);
		else if ((ch > ' ' && ch < 0x7f) || ch == ' ')
			out[o++] = (char)ch;
		else if (ch >= '\a' && ch <= '\r')
			o += (size_t)snprintf(out + o, len - o, "\\%c",
					      "abtnvfr"[ch - '\a']);
		else
			o += (size_t)snprintf(out + o, len - o, "\\%03o", ch);
	}
	out[o++] = '"';
	out[o] = '\0';
}

static const char *const fmt_names[] = {
	"dev", "local", "extents", "btree", "uuid", "meta_btree"
};

/* The metafile types (XK_METAFILE_*), as xfs_db names them. */
static const char *const metatype_names[XK_METAFILE_MAX] = {
	"unknown", "dir", "usrquota", "grpquota", "prjquota", "rtbitmap",
	"rtsummary", "rtrmap", "rtrefcount"
};

/* Is the CRC at this reference right?  Per record or whole buffer. */
static int
crc_ok(const struct db_ctx *c, const struct xk_fref *r)
{
	uint32_t unit = c->cur.type->crc_unit;

	if (unit) {
		size_t rec = r->byte - c->cur.type->crc_unit_off;

		if (r->byte < c->cur.type->crc_unit_off ||
		    rec + unit > c->buflen)
			return -1;
		return xk_cksum_ok(c->buf + rec, unit,
				   c->cur.type->crc_unit_off);
	}
	return c->crc_ok;
}

void
db_format_value(const struct db_ctx *c, const struct xk_fctx *fc,
		const struct xk_fref *r, char *out, size_t len)
{
	const struct xk_field *f = r->field;
	uint64_t v = 0, ones;
	struct xk_timespec ts;
	xk_timestamp raw;

	if (f->kind == XK_FK_CHARS) {
		chars(fc->buf + r->byte, r->bits / 8, out, len);
		return;
	}
	if (f->kind == XK_FK_UUID) {
		const uint8_t *u = fc->buf + r->byte;

		snprintf(out, len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-"
			 "%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
			 u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
			 u[12], u[13], u[14], u[15]);
		return;
	}
	if (f->kind == XK_FK_TIME || f->kind == XK_FK_NSEC) {
		struct tm tm;
		time_t t;

		memcpy(raw.b, fc->buf + r->byte, 8);
		ts = xk_timestamp_decode(raw, fc->bigtime);
		if (f->kind == XK_FK_NSEC) {
			snprintf(out, len, "%u", ts.tv_nsec);
			return;
		}
		t = (time_t)ts.tv_sec;
		if (!localtime_r(&t, &tm) ||
		    !strftime(out, len, "%a %b %e %H:%M:%S %Y", &tm))
			snprintf(out, len, "%lld", (long long)ts.tv_sec);
		return;
	}
	if (f->kind == XK_FK_DQTIME) {
		struct tm tm;
		time_t t;
		/* d_type is byte 3 of the record the timer is in. */
		int big = r->base + 3 < fc->len &&
			  (fc->buf[r->base + 3] & XK_DQTYPE_BIGTIME);

		v = xk_fval_get(fc, r);
		t = (time_t)xk_dquot_timer_decode((uint32_t)v, big);
		if (v == 0 || !localtime_r(&t, &tm) ||
		    !strftime(out, len, "%a %b %e %H:%M:%S %Y", &tm))
			snprintf(out, len, "%" PRIu64, v);
		return;
	}
	v = xk_fval_get(fc, r);
	ones = r->bits >= 64 ? UINT64_MAX : (1ULL << r->bits) - 1;
	if ((f->flags & XK_FF_SKIPZERO) && v == 0) {
		out[0] = '\0';
		return;
	}
	if ((f->flags & XK_FF_NULL) && v == ones) {
		snprintf(out, len, "null");
		return;
	}
	switch (f->kind) {
	case XK_FK_INT: {
		int64_t s = (int64_t)v;

		if (r->bits < 64 && (v >> (r->bits - 1)) & 1)
			s = (int64_t)(v | ~ones);
		snprintf(out, len, "%" PRId64, s);
		break;
	}
	case XK_FK_HEX:
		snprintf(out, len, v ? "%#" PRIx64 : "%" PRIu64, v);
		break;
	case XK_FK_OCT:
		snprintf(out, len, "%#" PRIo64, v);
		break;
	case XK_FK_CRC:
		snprintf(out, len, "%#" PRIx64 " (%s)", v,
			 crc_ok(c, r) < 0 ? "unchecked" :
			 crc_ok(c, r) ? "correct" : "bad");
		break;
	case XK_FK_FORMAT:
		snprintf(out, len, "%" PRIu64 " (%s)", v,
			 v < sizeof(fmt_names) / sizeof(fmt_names[0]) ?
			 fmt_names[v] : "unknown");
		break;
	case XK_FK_METATYPE:
		snprintf(out, len, "%" PRIu64 " (%s)", v,
			 v < XK_METAFILE_MAX ? metatype_names[v] : "unknown");
		break;
	default:
		snprintf(out, len, "%" PRIu64, v);
		break;
	}
}

static void
scalar_ref(const struct xk_fctx *fc, const struct xk_field *f, size_t base,
	   size_t at, struct xk_fref *r)
{
	memset(r, 0, sizeof(*r));
	r->field = f;
	r->byte = at;
	r->bitoff = f->bitoff;
	r->bits = xk_field_bits(fc, f, base);
	r->base = base;
	r->index = -1;
}

static int
is_null(const struct xk_fctx *fc, const struct xk_fref *r)
{
	uint64_t ones = r->bits >= 64 ? UINT64_MAX : (1ULL << r->bits) - 1;

	return r->bits <= 64 && xk_fval_get(fc, r) == ones;
}

static void print_struct(struct db_ctx *c, const struct xk_fctx *fc,
			 const char *prefix, const struct xk_field *fields,
			 size_t base);

/* Does this struct print anything at all? */
static int
has_content(const struct xk_fctx *fc, const struct xk_field *fields,
	    size_t base)
{
	for (const struct xk_field *f = fields; f->name; f++) {
		uint32_t n = xk_field_count(fc, f, base);

		if (n == 0 || (f->flags & XK_FF_NOPRINT))
			continue;
		if (f->kind != XK_FK_STRUCT || (f->flags & XK_FF_ARRAY) ||
		    (f->flags & XK_FF_OKEMPTY))
			return 1;
		if (has_content(fc, f->sub, xk_field_elem(fc, f, base, 0)))
			return 1;
	}
	return 0;
}

/* "[a,b] " header and "\n1:[x,y]" elements of a record array. */
static void
print_compact(struct db_ctx *c, const struct xk_fctx *fc, const char *name,
	      const struct xk_field *f, size_t base, uint32_t lo, uint32_t n,
	      uint32_t first)
{
	char val[8192], v[512];
	size_t o = 0;

	size_t at0 = xk_field_elem(fc, f, base, lo);
	int firsth = 1;

	val[0] = '\0';
	for (const struct xk_field *s = f->sub; s->name; s++) {
		if (!xk_field_present(fc, s, at0))
			continue;
		o += (size_t)snprintf(val + o, sizeof(val) - o, "%c%s",
				      firsth ? '[' : ',', s->name);
		firsth = 0;
	}
	o += (size_t)snprintf(val + o, sizeof(val) - o, "] ");
	for (uint32_t i = lo; i < lo + n && o < sizeof(val); i++) {
		size_t at = xk_field_elem(fc, f, base, i);
		int firstf = 1;

		o += (size_t)snprintf(val + o, sizeof(val) - o, "\n%u:",
				      i + first);
		for (const struct xk_field *s = f->sub; s->name; s++) {
			struct xk_fref r;

			if (o >= sizeof(val))
				break;
			if (!xk_field_present(fc, s, at))
				continue;
			scalar_ref(fc, s, at, at + s->offset, &r);
			db_format_value(c, fc, &r, v, sizeof(v));
			o += (size_t)snprintf(val + o, sizeof(val) - o, "%c%s",
					      firstf ? '[' : ',', v);
			firstf = 0;
		}
		if (o < sizeof(val))
			o += (size_t)snprintf(val + o, sizeof(val) - o, "]%s",
					      i + 1 < lo + n ? " " : "");
	}
	if (o >= sizeof(val))
		memcpy(val + sizeof(val) - 5, "...", 4);
	db_kv(c, name, val);
}

static void
range_name(char *out, size_t len, const char *name, uint32_t lo, uint32_t n)
{
	if (n == 1)
		snprintf(out, len, "%s[%u]", name, lo);
	else
		snprintf(out, len, "%s[%u-%u]", name, lo, lo + n - 1);
}

/* Print elements lo..lo+n-1 of field f (all when the field is whole). */
static void
print_field(struct db_ctx *c, const struct xk_fctx *fc, const char *name,
	    const struct xk_field *f, size_t base, uint32_t lo, uint32_t n,
	    int whole)
{
	uint32_t first = (f->flags & XK_FF_BASE1) ? 1 : 0;
	char full[512], v[4096];
	struct xk_fref r;

	if (n == 0)
		return;
	if (f->kind == XK_FK_STRUCT) {
		if ((f->flags & XK_FF_ARRAY) && (f->flags & XK_FF_COMPACT)) {
			if (whole)
				range_name(full, sizeof(full), name, lo + first,
					   n);
			else
				snprintf(full, sizeof(full), "%s", name);
			print_compact(c, fc, full, f, base, lo, n, first);
			return;
		}
		for (uint32_t i = lo; i < lo + n; i++) {
			size_t at = xk_field_elem(fc, f, base, i);

			if ((f->flags & XK_FF_ARRAY) && whole)
				snprintf(full, sizeof(full), "%s[%u].", name,
					 i + first);
			else
				snprintf(full, sizeof(full), "%s.", name);
			if ((f->flags & XK_FF_OKEMPTY) &&
			    !has_content(fc, f->sub, at)) {
				db_kv(c, name, "(empty)");
				continue;
			}
			print_struct(c, fc, full, f->sub, at);
		}
		return;
	}
	if (!(f->flags & XK_FF_ARRAY) || !whole) {
		scalar_ref(fc, f, base, xk_field_elem(fc, f, base, lo), &r);
		db_format_value(c, fc, &r, v, sizeof(v));
		db_kv(c, name, v);
		return;
	}
	{
		char val[16384];
		size_t o = 0;

		val[0] = '\0';
		for (uint32_t i = lo; i < lo + n && o < sizeof(val); i++) {
			scalar_ref(fc, f, base, xk_field_elem(fc, f, base, i),
				   &r);
			if ((f->flags & XK_FF_SKIPNULL) && is_null(fc, &r))
				continue;
			if ((f->flags & XK_FF_SKIPZERO) && r.bits <= 64 &&
			    xk_fval_get(fc, &r) == 0)
				continue;
			db_format_value(c, fc, &r, v, sizeof(v));
			if (n > 1)
				o += (size_t)snprintf(val + o, sizeof(val) - o,
						      "%u:", i + first);
			if (o < sizeof(val))
				o += (size_t)snprintf(val + o, sizeof(val) - o,
					"%s%s", v, i + 1 < lo + n ? " " : "");
		}
		range_name(full, sizeof(full), name, lo + first, n);
		db_kv(c, full, val);
	}
}

static void
print_struct(struct db_ctx *c, const struct xk_fctx *fc, const char *prefix,
	     const struct xk_field *fields, size_t base)
{
	char name[512];

	for (const struct xk_field *f = fields; f->name; f++) {
		uint32_t n;

		if (f->flags & XK_FF_NOPRINT)
			continue;
		n = xk_field_count(fc, f, base);
		if (n == 0)
			continue;
		snprintf(name, sizeof(name), "%s%s", prefix, f->name);
		print_field(c, fc, name, f, base, 0, n, 1);
	}
}

static void
hexdump(struct db_ctx *c)
{
	char line[128];

	for (size_t off = 0; off < c->buflen; off += 32) {
		size_t o = (size_t)snprintf(line, sizeof(line), "%03zx:", off);

		for (size_t i = 0; i < 32 && off + i < c->buflen; i++)
			o += (size_t)snprintf(line + o, sizeof(line) - o,
					      "%s%02x", i % 4 ? "" : " ",
					      c->buf[off + i]);
		db_out(c, "%s", line);
	}
}

void
db_print_all(struct db_ctx *c)
{
	struct xk_fctx fc;

	if (!c->cur.type->ftype) {
		hexdump(c);
		return;
	}
	db_fctx(c, &fc);
	print_struct(c, &fc, "", c->cur.type->ftype->fields, 0);
}

/* "name[lo-hi]" at the end of a path: a range of elements. */
static int
split_range(const char *path, char *base, size_t len, uint32_t *lo,
	    uint32_t *hi)
{
	const char *br = strrchr(path, '[');
	unsigned int a, b;
	char tail;

	if (!br || strchr(br, '.') ||
	    sscanf(br, "[%u-%u]%c", &a, &b, &tail) != 2 || b < a ||
	    (size_t)(br - path) >= len)
		return 0;
	memcpy(base, path, (size_t)(br - path));
	base[br - path] = '\0';
	*lo = a;
	*hi = b;
	return 1;
}

void
db_field_error(struct db_ctx *c, const char *path, const struct xk_fref *r)
{
	int len = (int)r->bad_len;
	const char *name = path + r->bad_off;

	switch (r->why) {
	case XK_FPATH_UNKNOWN:
		db_err(c, "field %.*s not found", len, name);
		break;
	case XK_FPATH_NOT_ARRAY:
		db_err(c, "field %.*s is not an array", len, name);
		break;
	case XK_FPATH_NO_SUBFIELDS:
		db_err(c, "field %.*s has no subfields", len, name);
		break;
	case XK_FPATH_RANGE:
		if (r->count == 0)
			db_err(c, "field %.*s has no elements", len, name);
		else
			db_err(c, "index %llu for field %.*s out of range "
			       "%u-%u", (unsigned long long)r->bad_index, len,
			       name, r->first, r->first + r->count - 1);
		break;
	case XK_FPATH_WANT_INDEX:
		db_err(c, "field %.*s is an array: name one element", len,
		       name);
		break;
	case XK_FPATH_SYNTAX:
	default:
		db_err(c, "bad syntax in field name %s", path);
		break;
	}
}

/*
 * "list.name" with no index on an array: every element's "name", as
 * xfs_db prints it ("list[0].name", "list[1].name", ...).
 */
static int
print_each_element(struct db_ctx *c, const char *path,
		   const struct xk_fref *failed)
{
	size_t cut = failed->bad_off + failed->bad_len;
	struct xk_fctx fc;
	struct xk_fref r;
	char prefix[256], sub[512];
	uint32_t first, n;
	int err = 0;

	if (cut >= sizeof(prefix)) {
		db_err(c, "bad syntax in field name %s", path);
		return -ENOENT;
	}
	memcpy(prefix, path, cut);
	prefix[cut] = '\0';
	db_fctx(c, &fc);
	if (xk_field_resolve(&fc, c->cur.type->ftype->fields, prefix, &r)) {
		db_field_error(c, prefix, &r);
		return -ENOENT;
	}
	first = (r.field->flags & XK_FF_BASE1) ? 1 : 0;
	n = xk_field_count(&fc, r.field, r.base);
	for (uint32_t i = 0; i < n && !err; i++) {
		if ((size_t)snprintf(sub, sizeof(sub), "%s[%u]%s", prefix,
				     i + first, path + cut) >= sizeof(sub)) {
			db_err(c, "bad syntax in field name %s", path);
			return -ENOENT;
		}
		err = db_print_path(c, sub);
	}
	return err;
}

int
db_print_path(struct db_ctx *c, const char *path)
{
	struct xk_fctx fc;
	struct xk_fref r;
	uint32_t first, n, lo, hi;
	char base[256];
	int err;

	if (!c->cur.type->ftype) {
		db_err(c, "type %s has no fields", c->cur.type->name);
		return -ENOENT;
	}
	db_fctx(c, &fc);
	if (split_range(path, base, sizeof(base), &lo, &hi)) {
		err = xk_field_resolve(&fc, c->cur.type->ftype->fields, base,
				       &r);
		if (err) {
			db_field_error(c, base, &r);
			return err;
		}
		if (!(r.field->flags & XK_FF_ARRAY) || r.index >= 0) {
			db_err(c, "field %s is not an array", base);
			return -ENOENT;
		}
		first = (r.field->flags & XK_FF_BASE1) ? 1 : 0;
		n = xk_field_count(&fc, r.field, r.base);
		if (lo < first || hi - first >= n) {
			const char *name = strrchr(base, '.');

			name = name ? name + 1 : base;
			if (n == 0)
				db_err(c, "field %s has no elements", name);
			else
				db_err(c, "indices %u-%u for field %s out of "
				       "range %u-%u", lo, hi, name, first,
				       first + n - 1);
			return -ERANGE;
		}
		print_field(c, &fc, base, r.field, r.base, lo - first,
			    hi - lo + 1, 1);
		return 0;
	}
	err = xk_field_resolve(&fc, c->cur.type->ftype->fields, path, &r);
	if (err && r.why == XK_FPATH_WANT_INDEX)
		return print_each_element(c, path, &r);
	if (err) {
		db_field_error(c, path, &r);
		return err;
	}
	first = (r.field->flags & XK_FF_BASE1) ? 1 : 0;
	n = xk_field_count(&fc, r.field, r.base);
	if (r.index >= 0)
		print_field(c, &fc, path, r.field, r.base,
			    (uint32_t)r.index - first, 1, 0);
	else
		print_field(c, &fc, path, r.field, r.base, 0, n, 1);
	return 0;
}

/* Where a field's bits are on disk: for scripts that corrupt by hand. */
int
db_cmd_locate(struct db_ctx *c, int argc, char **argv)
{
	struct xk_fctx fc;
	struct xk_fref r;
	int rc = 0;

	if (argc < 2 || !c->have_cur || !c->cur.type->ftype) {
		db_err(c, "usage: locate FIELD... (on a typed object)");
		return 1;
	}
	db_fctx(c, &fc);
	for (int i = 1; i < argc; i++) {
		uint64_t byte;

		if (xk_field_resolve(&fc, c->cur.type->ftype->fields, argv[i],
				     &r)) {
			db_field_error(c, argv[i], &r);
			rc = 1;
			continue;
		}
		if (r.bits == 0 && r.field->kind != XK_FK_CHARS) {
			db_err(c, "field %s is not a single value", argv[i]);
			rc = 1;
			continue;
		}
		byte = (c->cur.daddr << XK_BBSHIFT) + r.byte +
		       (c->cur.type->is_inode ? c->cur.ioff : 0);
		db_out(c, "%s: byte %llu bit %u bits %u", argv[i],
		       (unsigned long long)byte, r.bitoff, r.bits);
	}
	return rc;
}

int
db_cmd_print(struct db_ctx *c, int argc, char **argv)
{
	int rc = 0;

	if (!c->have_cur) {
		db_err(c, "no current type");
		return 1;
	}
	if (argc < 2) {
		db_print_all(c);
		return 0;
	}
	for (int i = 1; i < argc; i++)
		if (db_print_path(c, argv[i]))
			rc = 1;
	return rc;
}
