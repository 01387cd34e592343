// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-admin: change the parameters of an unmounted XFS v5 filesystem
 * with xfs_admin's command line: print or set the label and the UUID
 * (as xfs_db's label and uuid commands, which xfs_admin runs), the v4
 * switches answered as xfs_admin answers them on v5, -C (a mkfs
 * configuration file of the filesystem's features), and -O feature
 * upgrades (as xfs_repair -c, which xfs_admin runs; finobt, reflink and
 * rmapbt, which it cannot add, build their per-AG btrees; parent, which
 * it cannot add either, writes every directory entry's parent pointer).
 *
 * Every option is checked before the filesystem is opened, so a bad one
 * writes nothing.  The label and UUID changes then run in command-line
 * order, the upgrades after them (xfs_admin's order).  Exit status: 0
 * done, 1 a change was refused or failed, 2 usage error, mounted
 * filesystem or dirty log (xfs_admin's 2 for the first two, xfs_repair's
 * for the third).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include <xfskit/ag.h>
#include <xfskit/dev.h>
#include <xfskit/errors.h>
#include <xfskit/libfs.h>
#include <xfskit/mount.h>
#include <xfskit/needsrepair.h>
#include <xfskit/open_check.h>
#include <xfskit/sb_feature.h>
#include <xfskit/undo.h>

#include "admin.h"

#define ADMIN_EXIT_FAILED	1
#define ADMIN_EXIT_USAGE	2
#define ADMIN_EXIT_OFFLINE	2	/* mounted, or a dirty log */

/* One label/UUID action of the command line, in its order. */
struct action {
	char		opt;		/* 'l', 'u', 'L', 'U', 'C', 'e', 'j', 'p' */
	const char	*arg;
};

/*
 * -O's features, in the order xfs_repair adds and reports them; finobt,
 * reflink and rmapbt, which it cannot add, first.
 */
struct feature {
	const char	*name;
	uint32_t	ro_compat, incompat;
	const char	*adding, *already;
};

static const struct feature features[] = {
	{ "finobt", XK_SB_FEAT_RO_COMPAT_FINOBT, 0,
	  "Adding free inode btree to filesystem.",
	  "Filesystem already has a free inode btree." },
	{ "reflink", XK_SB_FEAT_RO_COMPAT_REFLINK, 0,
	  "Adding reflink support to filesystem.",
	  "Filesystem already supports reflink." },
	{ "rmapbt", XK_SB_FEAT_RO_COMPAT_RMAPBT, 0,
	  "Adding reverse mapping btree to filesystem.",
	  "Filesystem already has a reverse mapping btree." },
	{ "inobtcount", XK_SB_FEAT_RO_COMPAT_INOBTCNT, 0,
	  "Adding inode btree counts to filesystem.",
	  "Filesystem already has inode btree counts." },
	{ "bigtime", 0, XK_SB_FEAT_INCOMPAT_BIGTIME,
	  "Adding large timestamp support to filesystem.",
	  "Filesystem already supports large timestamps." },
	{ "nrext64", 0, XK_SB_FEAT_INCOMPAT_NREXT64,
	  "Adding nrext64 to filesystem.",
	  "Filesystem already supports nrext64." },
	{ "exchange", 0, XK_SB_FEAT_INCOMPAT_EXCHRANGE,
	  "Adding file exchange-range support to filesystem.",
	  "Filesystem already supports exchange-range." },
	{ "parent", 0, XK_SB_FEAT_INCOMPAT_PARENT,
	  "Adding parent pointers to filesystem.",
	  "Filesystem already has parent pointers." },
};
#define NFEATURES	(sizeof(features) / sizeof(features[0]))

struct admin {
	const char	*image;
	const char	*undo_path;
	struct action	*acts;
	int		nacts;
	int		lazy;		/* -c: -1 absent, else 0 or 1 */
	int		want[NFEATURES];	/* -O name=1 */
	int		writes;		/* any action that writes */
	struct xk_mount	*mp;
};

static void
usage(FILE *fp)
{
	fprintf(fp,
"Usage: xfskit-admin [-efjlpuV] [-C cfgfile] [-c 0|1] [-L label]\n"
"                    [-O feature=1,...] [-U uuid] [-z undofile] device\n"
"  -l          print the filesystem label\n"
"  -u          print the filesystem UUID\n"
"  -L label    set the label (at most 12 bytes; -- clears it)\n"
"  -U uuid     set the UUID: a UUID, generate, nil, or restore (back to\n"
"              the UUID the metadata carries)\n"
"  -O list     add v5 features: finobt=1, reflink=1, rmapbt=1,\n"
"              inobtcount=1, bigtime=1, nrext64=1, exchange=1,\n"
"              parent=1 (comma-separated); finobt, reflink and rmapbt\n"
"              build a btree in every AG (rmapbt from every block's\n"
"              owner), parent a pointer for every directory entry\n"
"  -c 0|1      lazy counters: always on in v5 (1 is a no-op, 0 refused)\n"
"  -e          unwritten extents: always on in v5 (a no-op)\n"
"  -j          version 2 logs: always on in v5 (a no-op)\n"
"  -p          32-bit project ids: cannot be changed on v5 (a no-op)\n"
"  -f          the device is an image file (accepted; files always work)\n"
"  -z file     record every overwritten block in an undo file (see\n"
"              xfskit-undo)\n"
"  -C cfgfile  write a mkfs configuration file of the filesystem's\n"
"              features (as xfs_admin 7.2)\n"
"  -r rtdev    realtime device: not supported\n"
"  -V          print the version and exit\n"
"  -h, --help  print this help and exit\n"
"Exit status: 0 done, 1 a change refused or failed, 2 usage error, a\n"
"mounted filesystem or a dirty log.\n");
}

static int
usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "xfskit-admin: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	usage(stderr);
	return ADMIN_EXIT_USAGE;
}

/* -O a=1,b=1: each name known, each value 1 (xfs_repair's messages). */
static int
parse_features(struct admin *a, const char *list)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int rc = 0;

	if (!copy) {
		fprintf(stderr, "xfskit-admin: out of memory\n");
		return ADMIN_EXIT_FAILED;
	}
	for (tok = strtok_r(copy, ",", &save); tok && !rc;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		size_t i;

		if (eq)
			*eq = '\0';
		for (i = 0; i < NFEATURES; i++)
			if (!strcmp(tok, features[i].name))
				break;
		if (i == NFEATURES) {
			fprintf(stderr, "xfskit-admin: -O %s: unknown feature; "
				"finobt, reflink, rmapbt, inobtcount, bigtime, "
				"nrext64, exchange and parent can be added\n",
				tok);
			rc = ADMIN_EXIT_FAILED;
		} else if (!eq || !eq[1]) {
			fprintf(stderr, "xfskit-admin: -O %s requires a "
				"parameter (%s=1)\n", tok, tok);
			rc = ADMIN_EXIT_FAILED;
		} else if (strcmp(eq + 1, "1")) {
			fprintf(stderr, "xfskit-admin: -O %s only supports "
				"upgrades (%s=1), not %s\n", tok, tok, eq + 1);
			rc = ADMIN_EXIT_FAILED;
		} else {
			a->want[i] = 1;
		}
	}
	free(copy);
	return rc;
}

/* The arguments of -L and -U are checked before anything opens. */
static int
check_action(const struct action *act)
{
	uuid_t u;

	if (act->opt == 'L' && strcmp(act->arg, "--") &&
	    strlen(act->arg) > 12) {
		fprintf(stderr, "xfskit-admin: -L %s: the label is %zu bytes; "
			"an XFS label holds at most 12\n", act->arg,
			strlen(act->arg));
		return ADMIN_EXIT_FAILED;
	}
	if (act->opt == 'U' && strcmp(act->arg, "generate") &&
	    strcmp(act->arg, "nil") && strcmp(act->arg, "restore") &&
	    uuid_parse(act->arg, u)) {
		fprintf(stderr, "xfskit-admin: -U %s: invalid UUID (expected "
			"a UUID such as c1b9d5a2-f162-11cf-9ece-0020afc76f16, "
			"or generate, nil, restore)\n", act->arg);
		return ADMIN_EXIT_FAILED;
	}
	return 0;
}

static void
print_label(const struct xk_sb *sb)
{
	char label[13];

	memcpy(label, sb->fname, 12);
	label[12] = '\0';
	printf("label = \"%s\"\n", label);
}

static void
print_uuid(const uint8_t *uuid, const char *prefix)
{
	char text[37];

	uuid_unparse_lower(uuid, text);
	printf("%sUUID = %s\n", prefix, text);
}

/*
 * The label and UUID rewrite every superblock (the UUID the log too)
 * under the handle's NEEDSREPAIR guard, as the upgrades do: a crash
 * half-way leaves the primary marked, and the guard's clear is the last
 * write.  After a failure, what the message adds.
 */
static const char *
marked(const struct admin *a)
{
	return xk_needsrepair_marked(a->mp) ? " (the filesystem is marked as "
	       "needing repair)" : "";
}

static int
set_label(struct admin *a, const char *arg)
{
	const char *label = strcmp(arg, "--") ? arg : "";
	int err;

	printf("writing all SBs\n");
	err = xk_needsrepair_arm(a->mp);
	if (!err)
		err = xk_sb_set_label(a->mp, label);
	if (!err)
		err = xk_needsrepair_clear(a->mp);
	if (err) {
		fprintf(stderr, "xfskit-admin: %s: setting the label failed: "
			"%s%s\n", a->image, xk_strerror(err), marked(a));
		return ADMIN_EXIT_FAILED;
	}
	printf("new label = \"%s\"\n", label);
	return 0;
}

static int
set_uuid(struct admin *a, const char *arg)
{
	struct xk_mount *mp = a->mp;
	uint8_t want[16];
	char msg[300];
	int err;

	if (!strcmp(arg, "generate")) {
		uuid_generate(want);
	} else if (!strcmp(arg, "nil")) {
		memset(want, 0, sizeof(want));
	} else if (!strcmp(arg, "restore")) {
		/* Nothing to restore without a metadata UUID (as xfs_db). */
		if (!xk_sb_has_incompat(&mp->sb,
					XK_SB_FEAT_INCOMPAT_META_UUID))
			return 0;
		memcpy(want, mp->sb.meta_uuid, 16);
	} else if (uuid_parse(arg, want)) {
		return ADMIN_EXIT_FAILED;	/* checked before: unreachable */
	}
	msg[0] = 0;
	err = xk_needsrepair_arm(mp);
	if (!err)
		err = xk_sb_set_uuid(mp, want, msg, sizeof(msg));
	if (!err)
		err = xk_needsrepair_clear(mp);
	if (err) {
		fprintf(stderr, "xfskit-admin: %s: setting the UUID failed: "
			"%s%s\n", a->image, msg[0] ? msg : xk_strerror(err),
			marked(a));
		return ADMIN_EXIT_FAILED;
	}
	printf("Clearing log and setting UUID\n");
	printf("writing all SBs\n");
	print_uuid(want, "new ");
	return 0;
}

static int
run_action(struct admin *a, const struct action *act)
{
	switch (act->opt) {
	case 'l':
		print_label(&a->mp->sb);
		return 0;
	case 'u':
		print_uuid(a->mp->sb.uuid, "");
		return 0;
	case 'L':
		return set_label(a, act->arg);
	case 'U':
		return set_uuid(a, act->arg);
	case 'C':
		return admin_write_cfg(a->mp, a->image, act->arg);
	case 'e':
		printf("unwritten extents always enabled for v5 "
		       "superblocks.\n");
		return 0;
	case 'j':
		printf("Version 2 logs always enabled for v5 superblocks.\n");
		return 0;
	case 'p':
		printf("xfskit-admin: Cannot change projid32bit on v5 "
		       "superblocks.\n");
		return 0;
	}
	return ADMIN_EXIT_FAILED;
}

/* -c and -O, after the label and UUID actions (xfs_admin's order). */
static int
run_upgrades(struct admin *a)
{
	struct xk_mount *mp = a->mp;
	struct xk_sb_upgrade up;
	uint32_t ro = 0, inc = 0;
	int any = 0, err;
	char msg[300];

	if (a->lazy == 0) {
		fprintf(stderr, "Cannot disable lazy-counters on V5 fs\n");
		return ADMIN_EXIT_FAILED;
	}
	if (a->lazy == 1)
		printf("Lazy-counters are already enabled\n");
	for (size_t i = 0; i < NFEATURES; i++) {
		if (!a->want[i])
			continue;
		if ((mp->sb.features_ro_compat & features[i].ro_compat) ||
		    (mp->sb.features_incompat & features[i].incompat)) {
			printf("%s\n", features[i].already);
			continue;
		}
		ro |= features[i].ro_compat;
		inc |= features[i].incompat;
		any = 1;
	}
	if (!any)
		return 0;
	/* Announced before the checks, as xfs_repair announces them. */
	for (size_t i = 0; i < NFEATURES; i++)
		if ((ro & features[i].ro_compat) ||
		    (inc & features[i].incompat))
			printf("%s\n", features[i].adding);
	fflush(stdout);
	err = xk_sb_add_features(mp, ro, inc, &up, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "xfskit-admin: %s: %s\n", a->image,
			msg[0] ? msg : xk_strerror(err));
		return err == -EBUSY ? ADMIN_EXIT_OFFLINE : ADMIN_EXIT_FAILED;
	}
	if (up.resv_after)
		printf("Per-AG btree reservations at mount: %llu blocks "
		       "(%llu before)\n", (unsigned long long)up.resv_after,
		       (unsigned long long)up.resv_before);
	printf("done\n");
	return 0;
}

/* The shared refusals (open_check.h): admin takes no -l or -r device. */
static struct xk_open_check
open_check(const struct admin *a)
{
	struct xk_open_check c = {
		.tool = "xfskit-admin", .path = a->image, .writes = a->writes,
		.out = stderr,
	};

	return c;
}

static int
parse_args(struct admin *a, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	a->lazy = -1;
	a->acts = calloc((size_t)argc, sizeof(*a->acts));
	if (!a->acts) {
		fprintf(stderr, "xfskit-admin: out of memory\n");
		return ADMIN_EXIT_FAILED;
	}
	while ((c = getopt_long(argc, argv, "C:c:efhjlL:O:pr:uU:Vz:",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			printf("xfskit-admin version %s\n", xk_version());
			return -1;
		case 'f':
			break;
		case 'l': case 'u': case 'e': case 'j': case 'p':
		case 'L': case 'U': case 'C':
			a->acts[a->nacts].opt = (char)c;
			a->acts[a->nacts].arg = optarg;
			if (check_action(&a->acts[a->nacts]))
				return ADMIN_EXIT_FAILED;
			if (c == 'L' || c == 'U')
				a->writes = 1;
			a->nacts++;
			break;
		case 'c':
			if (strcmp(optarg, "0") && strcmp(optarg, "1")) {
				fprintf(stderr, "xfskit-admin: -c %s: lazy "
					"counters are 0 or 1\n", optarg);
				return ADMIN_EXIT_FAILED;
			}
			a->lazy = optarg[0] - '0';
			break;
		case 'O':
			if (parse_features(a, optarg))
				return ADMIN_EXIT_FAILED;
			a->writes = 1;
			break;
		case 'z':
			a->undo_path = optarg;
			break;
		case 'r':
			fprintf(stderr, "xfskit-admin: -r %s: realtime devices "
				"are not supported\n", optarg);
			return ADMIN_EXIT_FAILED;
		default:
			usage(stderr);
			return ADMIN_EXIT_USAGE;
		}
	}
	if (argc - optind == 2) {
		fprintf(stderr, "xfskit-admin: %s: external log devices are "
			"not supported\n", argv[optind + 1]);
		return ADMIN_EXIT_FAILED;
	}
	if (argc - optind != 1)
		return usage_error("%s", argc - optind ? "too many operands" :
				   "no device given");
	a->image = argv[optind];
	return 0;
}

int
main(int argc, char **argv)
{
	struct admin a;
	struct xk_undo *undo = NULL;
	struct xk_open_check oc;
	struct xk_fail f;
	int rc, err;

	memset(&a, 0, sizeof(a));
	rc = parse_args(&a, argc, argv);
	if (rc) {
		free(a.acts);
		return rc < 0 ? 0 : rc;
	}
	if (a.undo_path && !a.writes) {
		fprintf(stderr, "xfskit-admin: -z: nothing to undo, no option "
			"given writes\n");
		free(a.acts);
		return ADMIN_EXIT_FAILED;
	}
	/* Nothing to do, as xfs_admin with no option. */
	if (!a.nacts && !a.writes && a.lazy < 0) {
		free(a.acts);
		return 0;
	}
	oc = open_check(&a);
	err = a.writes ? xk_open_check_before(&oc) : 0;
	if (err) {
		free(a.acts);
		return err == -EBUSY ? ADMIN_EXIT_OFFLINE : ADMIN_EXIT_FAILED;
	}
	err = xk_mount_open(a.image, a.writes ? 0 : XK_MOUNT_RDONLY, &a.mp, &f);
	if (err) {
		char msg[400];

		xk_open_error_format(err, &f, msg, sizeof(msg));
		fprintf(stderr, "xfskit-admin: %s: %s\n", a.image, msg);
		free(a.acts);
		return ADMIN_EXIT_FAILED;
	}
	err = a.writes ? xk_open_check_after(&oc, a.mp) : 0;
	if (err)
		rc = err == -EBUSY ? ADMIN_EXIT_OFFLINE : ADMIN_EXIT_FAILED;
	if (!rc && a.undo_path) {
		err = xk_undo_create(a.mp->dev, a.undo_path, &undo);
		if (err) {
			fprintf(stderr, "xfskit-admin: cannot start the undo "
				"file %s: %s\n", a.undo_path,
				xk_strerror(err));
			rc = ADMIN_EXIT_FAILED;
		}
	}
	for (int i = 0; i < a.nacts && !rc; i++)
		rc = run_action(&a, &a.acts[i]);
	if (!rc)
		rc = run_upgrades(&a);
	fflush(stdout);
	err = xk_mount_close(a.mp);
	if (err && a.writes) {
		fprintf(stderr, "xfskit-admin: %s: writing back failed: %s\n",
			a.image, xk_strerror(err));
		rc = ADMIN_EXIT_FAILED;
	}
	if (undo) {
		err = xk_undo_finish(undo);
		if (err) {
			fprintf(stderr, "xfskit-admin: the undo file %s could "
				"not be completed: %s\n", a.undo_path,
				xk_strerror(err));
			rc = ADMIN_EXIT_FAILED;
		}
	}
	free(a.acts);
	return rc;
}
