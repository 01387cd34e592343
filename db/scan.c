// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The scan command of xfskit-db: runs the libfs device scan (scan.h) and
 * lists the metadata blocks it found by their self-description, for a
 * person reassembling a filesystem by hand.  Read-only: the scan reads
 * the device and writes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/scan.h>

#include "db.h"

struct scan_args {
	uint32_t	types;		/* bit per enum xk_scan_type; 0: all */
	int		have_owner;
	uint64_t	owner;
	int		rejected;	/* -r: rejected candidates too */
	int		counts;		/* -c: the count table, no listing */
	int		progress;	/* -g */
	unsigned int	threads;	/* -T */
	uint64_t	mem_mb;		/* -m: spill above it */
};

static int
scan_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	fprintf(stderr, "\rScanned %llu of %llu MiB",
		(unsigned long long)(done >> 20),
		(unsigned long long)(total >> 20));
	fflush(stderr);
	return 0;
}

static int
parse_args(struct db_ctx *c, int argc, char **argv, struct scan_args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t v;
		int t;

		if (!strcmp(arg, "-r")) {
			a->rejected = 1;
		} else if (!strcmp(arg, "-c")) {
			a->counts = 1;
		} else if (!strcmp(arg, "-g")) {
			a->progress = 1;
		} else if (!strcmp(arg, "-t") && val) {
			t = xk_scan_type_parse(val);
			if (t < 0) {
				db_err(c, "scan: unknown block type %s (see "
				       "help scan)", val);
				return -EINVAL;
			}
			a->types |= 1u << t;
			i++;
		} else if (!strcmp(arg, "-o") && val) {
			if (db_parse_u64(val, &a->owner)) {
				db_err(c, "scan: bad owner %s", val);
				return -EINVAL;
			}
			a->have_owner = 1;
			i++;
		} else if ((!strcmp(arg, "-T") || !strcmp(arg, "-m")) && val) {
			if (db_parse_u64(val, &v) || !v || v > UINT32_MAX) {
				db_err(c, "scan: bad number %s for %s", val,
				       arg);
				return -EINVAL;
			}
			if (arg[1] == 'T')
				a->threads = (unsigned int)v;
			else
				a->mem_mb = v;
			i++;
		} else {
			db_err(c, "scan: unknown or incomplete option %s",
			       arg);
			return -EINVAL;
		}
	}
	return 0;
}

static int
wanted(const struct scan_args *a, const struct xk_scan_ent *e)
{
	if (a->types && !(a->types & (1u << e->type)))
		return 0;
	return !a->have_owner || e->owner == a->owner;
}

static void
print_ent(struct db_ctx *c, const struct xk_scan_ent *e)
{
	char off[24] = "-";

	if (e->offset != XK_SCAN_NO_OFFSET)
		snprintf(off, sizeof(off), "%llu",
			 (unsigned long long)e->offset);
	db_out(c, "%-10s %12llu %6u %s %-12llu %5u %12s %s",
	       xk_scan_type_name(e->type), (unsigned long long)e->daddr,
	       e->len, xk_scan_type_ag_owned(e->type) ? "ag   " : "inode",
	       (unsigned long long)e->owner, e->level, off,
	       xk_scan_verdict_name(e->verdict));
}

static void
print_counts(struct db_ctx *c, const struct xk_scan *r)
{
	uint64_t tot[XK_SCAN_VERDICT_NR] = { 0 };

	db_out(c, "%-10s %10s %10s %13s %10s %13s", "type", "ok",
	       "wrong-uuid", "wrong-address", "bad-crc", "bad-structure");
	for (int t = 0; t < XK_SCAN_TYPE_NR; t++) {
		uint64_t any = 0;

		for (int v = 0; v < XK_SCAN_VERDICT_NR; v++) {
			any += r->counts[t][v];
			tot[v] += r->counts[t][v];
		}
		if (!any)
			continue;
		db_out(c, "%-10s %10llu %10llu %13llu %10llu %13llu",
		       xk_scan_type_name(t),
		       (unsigned long long)r->counts[t][XK_SCAN_OK],
		       (unsigned long long)r->counts[t][XK_SCAN_BAD_UUID],
		       (unsigned long long)r->counts[t][XK_SCAN_BAD_ADDR],
		       (unsigned long long)r->counts[t][XK_SCAN_BAD_CRC],
		       (unsigned long long)r->counts[t][XK_SCAN_BAD_STRUCT]);
	}
	db_out(c, "%-10s %10llu %10llu %13llu %10llu %13llu", "total",
	       (unsigned long long)tot[XK_SCAN_OK],
	       (unsigned long long)tot[XK_SCAN_BAD_UUID],
	       (unsigned long long)tot[XK_SCAN_BAD_ADDR],
	       (unsigned long long)tot[XK_SCAN_BAD_CRC],
	       (unsigned long long)tot[XK_SCAN_BAD_STRUCT]);
	db_out(c, "read %llu of %llu bytes, %llu failed reads, %llu bytes "
	       "unreadable", (unsigned long long)r->bytes_read,
	       (unsigned long long)r->bytes_total,
	       (unsigned long long)r->read_errors,
	       (unsigned long long)r->unread_bytes);
}

/* Set up spilling under -m: lists past the cap go to temporary files. */
static int
spill_start(struct db_ctx *c, struct xk_vec_spill *sp, uint64_t mem_mb)
{
	const char *dir = getenv("TMPDIR");
	int in_memory, err;

	if (!dir || !*dir)
		dir = "/tmp";
	err = xk_vec_spill_start(sp, dir, (size_t)(mem_mb << 20) / 4,
				 mem_mb << 20, &in_memory);
	if (err)
		db_err(c, "scan: cannot keep temporary files in %s (%s), "
		       "which -m needs; set TMPDIR to another directory",
		       dir, strerror(-err));
	return err;
}

int
db_cmd_scan(struct db_ctx *c, int argc, char **argv)
{
	struct scan_args a;
	struct xk_scan_opts o;
	struct xk_scan r;
	struct xk_vec_spill sp;
	int err, rc = 0;

	memset(&a, 0, sizeof(a));
	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	memset(&sp, 0, sizeof(sp));
	if (parse_args(c, argc, argv, &a))
		return -EINVAL;
	if (a.mem_mb) {
		if (spill_start(c, &sp, a.mem_mb))
			return -EIO;
		o.spill = &sp;
	}
	o.threads = a.threads;
	o.flags = a.rejected ? XK_SCAN_KEEP_REJECTED : 0;
	if (a.progress)
		o.progress = scan_progress;
	err = xk_scan_device(c->mp, &o, &r);
	if (a.progress)
		fprintf(stderr, "\n");
	if (err) {
		db_err(c, "scan: the scan stopped: %s", xk_strerror(err));
		rc = err;
		goto out;
	}
	if (a.counts) {
		print_counts(c, &r);
	} else {
		db_out(c, "%-10s %12s %6s %-18s %5s %12s %s", "type", "daddr",
		       "len", "owner", "level", "offset", "verdict");
		/* The index's order (type, owner, level, offset), then the
		 * rejected candidates by address. */
		size_t first = 0, count = r.ents.n;

		/* One type and owner: straight from the index. */
		if (a.have_owner && a.types && !(a.types & (a.types - 1)))
			xk_scan_lookup(&r, (enum xk_scan_type)
				       __builtin_ctz(a.types), a.owner,
				       &first, &count);
		for (size_t i = first; i < first + count; i++)
			if (wanted(&a, &r.ents.v[i]))
				print_ent(c, &r.ents.v[i]);
		for (size_t i = 0; i < r.rejected.n; i++)
			if (wanted(&a, &r.rejected.v[i]))
				print_ent(c, &r.rejected.v[i]);
	}
	for (size_t k = 0; k < r.unread.n; k++)
		db_err(c, "scan: daddr %llu to %llu could not be read: %s",
		       (unsigned long long)r.unread.v[k].daddr,
		       (unsigned long long)(r.unread.v[k].daddr +
					    r.unread.v[k].len - 1),
		       xk_strerror(r.unread.v[k].err));
	if (r.unread.n) {
		db_err(c, "scan: incomplete: %llu bytes could not be read",
		       (unsigned long long)r.unread_bytes);
		rc = -EIO;
	}
out:
	xk_scan_free(&r);
	if (a.mem_mb)
		xk_vec_spill_stop(&sp);
	return rc;
}
