// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The command line, mkfs.xfs style: option letters taking comma-separated
 * name=value suboptions.  One table lists every suboption with its kind,
 * range and conflicts, so the command line and the configuration file
 * (which uses the same names in [data], [inode], ... sections) share one
 * parser.  Sizes are kept as text here and converted once the block and
 * sector sizes are known, because "b" and "s" suffixes depend on them.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mkfs.h"

enum kind {
	K_NUM,		/* plain number, no suffix */
	K_SIZE,		/* number with a unit suffix, converted later */
	K_BOOL,		/* 0 or 1, bare name means 1 */
	K_STR,		/* text */
	K_FLAG,		/* bare name only (-d file) */
};

struct subopt {
	char		opt;
	const char	*name;
	size_t		off;		/* of its mkfs_val in cli */
	enum kind	kind;
	long long	min, max;
	int		pow2;
	const char	*conflicts[4];	/* same option letter */
};

#define V(f)	offsetof(struct mkfs_cli, f)

static const struct subopt subopts[] = {
	{ 'b', "size", V(bsize), K_SIZE, 512, 65536, 1, { NULL } },
	{ 'd', "agcount", V(agcount), K_NUM, 1, UINT_MAX - 1, 0,
	  { "agsize", "concurrency" } },
	{ 'd', "agsize", V(agsize), K_SIZE, 16LL << 20, 1LL << 40, 0,
	  { "agcount", "concurrency" } },
	{ 'd', "concurrency", V(dconcurrency), K_NUM, 0, INT_MAX, 0,
	  { "agcount", "agsize" } },
	{ 'd', "daxinherit", V(daxinherit), K_BOOL, 0, 1, 0, { NULL } },
	{ 'd', "projinherit", V(projinherit), K_NUM, 0, UINT_MAX, 0,
	  { NULL } },
	{ 'd', "extszinherit", V(extszinherit), K_NUM, 0, UINT_MAX, 0,
	  { NULL } },
	{ 'd', "cowextsize", V(cowextsize), K_NUM, 0, UINT_MAX, 0,
	  { NULL } },
	{ 'd', "size", V(dsize), K_SIZE, 16LL << 20, LLONG_MAX, 0, { NULL } },
	{ 'd', "su", V(su), K_SIZE, 0, UINT_MAX, 0,
	  { "sunit", "swidth", "noalign" } },
	{ 'd', "sw", V(sw), K_NUM, 0, UINT_MAX, 0,
	  { "sunit", "swidth", "noalign" } },
	{ 'd', "sunit", V(sunit), K_NUM, 0, UINT_MAX, 0,
	  { "su", "sw", "noalign" } },
	{ 'd', "swidth", V(swidth), K_NUM, 0, UINT_MAX, 0,
	  { "su", "sw", "noalign" } },
	{ 'd', "noalign", V(noalign), K_BOOL, 0, 1, 0,
	  { "su", "sw", "sunit", "swidth" } },
	{ 'd', "sectsize", V(sectsize), K_SIZE, 512, 32768, 1, { NULL } },
	{ 'i', "size", V(isize), K_SIZE, 256, 2048, 1, { "perblock" } },
	{ 'i', "perblock", V(iperblock), K_NUM, 1, 256, 1, { "size" } },
	/* Legacy switches v5 forces on: accepted with that value only. */
	{ 'i', "attr", V(iattr), K_NUM, 0, 2, 0, { NULL } },
	{ 'i', "projid32bit", V(projid32bit), K_BOOL, 0, 1, 0, { NULL } },
	{ 'i', "maxpct", V(imaxpct), K_NUM, 0, 100, 0, { NULL } },
	{ 'i', "align", V(ialign), K_BOOL, 0, 1, 0, { NULL } },
	{ 'i', "sparse", V(sparse), K_BOOL, 0, 1, 0, { NULL } },
	{ 'i', "nrext64", V(nrext64), K_BOOL, 0, 1, 0, { NULL } },
	{ 'i', "exchange", V(exchange), K_BOOL, 0, 1, 0, { NULL } },
	{ 'l', "size", V(logsize), K_SIZE, 2LL << 20,
	  (2LL << 30) - (10LL << 20), 0, { "concurrency" } },
	{ 'l', "concurrency", V(lconcurrency), K_NUM, 0, INT_MAX, 0,
	  { "size" } },
	{ 'l', "internal", V(loginternal), K_BOOL, 0, 1, 0, { "logdev" } },
	/* The external log's device: an existing file or block device. */
	{ 'l', "logdev", V(logdev), K_STR, 0, 0, 0, { "internal", "agnum" } },
	/* mkfs.xfs's "the log device is a file": told apart by itself. */
	{ 'l', "file", V(lfile), K_BOOL, 0, 1, 0, { NULL } },
	{ 'l', "sunit", V(lsunit), K_NUM, 1, 512, 0, { "su" } },
	{ 'l', "su", V(lsu), K_SIZE, 512, 256 << 10, 0, { "sunit" } },
	{ 'l', "version", V(logversion), K_NUM, 1, 2, 0, { NULL } },
	{ 'l', "agnum", V(logagno), K_NUM, 0, UINT_MAX, 0, { "logdev" } },
	{ 'l', "lazy-count", V(lazycount), K_BOOL, 0, 1, 0, { NULL } },
	{ 'm', "crc", V(crc), K_BOOL, 0, 1, 0, { NULL } },
	{ 'm', "finobt", V(finobt), K_BOOL, 0, 1, 0, { NULL } },
	{ 'm', "rmapbt", V(rmapbt), K_BOOL, 0, 1, 0, { NULL } },
	{ 'm', "reflink", V(reflink), K_BOOL, 0, 1, 0, { NULL } },
	{ 'm', "bigtime", V(bigtime), K_BOOL, 0, 1, 0, { NULL } },
	{ 'm', "inobtcount", V(inobtcount), K_BOOL, 0, 1, 0, { NULL } },
	{ 'm', "metadir", V(metadir), K_BOOL, 0, 1, 0, { NULL } },
	/* Quota accounting (and enforcement) recorded at format time. */
	{ 'm', "uquota", V(uquota), K_BOOL, 0, 1, 0, { "uqnoenforce" } },
	{ 'm', "gquota", V(gquota), K_BOOL, 0, 1, 0, { "gqnoenforce" } },
	{ 'm', "pquota", V(pquota), K_BOOL, 0, 1, 0, { "pqnoenforce" } },
	{ 'm', "uqnoenforce", V(uqnoenforce), K_BOOL, 0, 1, 0, { "uquota" } },
	{ 'm', "gqnoenforce", V(gqnoenforce), K_BOOL, 0, 1, 0, { "gquota" } },
	{ 'm', "pqnoenforce", V(pqnoenforce), K_BOOL, 0, 1, 0, { "pquota" } },
	/* 0 or 1 (none or repair), or a word: checked in autofsck_word. */
	{ 'm', "autofsck", V(autofsck), K_STR, 0, 1, 0, { NULL } },
	{ 'm', "uuid", V(uuid), K_STR, 0, 0, 0, { NULL } },
	{ 'n', "size", V(dirsize), K_SIZE, 4096, 65536, 1, { NULL } },
	{ 'n', "ftype", V(ftype), K_BOOL, 0, 1, 0, { NULL } },
	{ 'n', "parent", V(parent), K_BOOL, 0, 1, 0, { NULL } },
	/* A classic realtime section (no realtime groups). */
	{ 'r', "extsize", V(rtextsize), K_SIZE, 4096, 1LL << 30, 0,
	  { NULL } },
	{ 'r', "rtdev", V(rtdev), K_STR, 0, 0, 0, { NULL } },
	{ 'r', "size", V(rtsize), K_SIZE, 4096, INT64_MAX, 0, { NULL } },
	{ 's', "size", V(sectsize), K_SIZE, 512, 32768, 1, { "sectsize" } },
	{ 's', "sectsize", V(sectsize), K_SIZE, 512, 32768, 1, { "size" } },
};

#define NSUBOPTS (sizeof(subopts) / sizeof(subopts[0]))

void
mkfs_usage(FILE *f)
{
	fprintf(f,
"Usage: xfskit-mkfs [options] device\n"
"Options:\n"
"  -b size=num                 filesystem block size (1024..65536)\n"
"  -d agcount=n,agsize=n,size=num,su=num,sw=n,sunit=n,swidth=n,\n"
"     noalign,file,name=path,concurrency=n|nr_cpus\n"
"                              data section and the target\n"
"  -d daxinherit=0|1,projinherit=n,extszinherit=n,cowextsize=n\n"
"                              hints the root directory passes on\n"
"  -i size=num|perblock=n,maxpct=n,align=1,sparse=0|1,nrext64=0|1,\n"
"     exchange=0|1,attr=2,projid32bit=1\n"
"                              inode size, allocation, exchange-range\n"
"  -l size=num|concurrency=n|nr_cpus,internal,sunit=n,su=num,\n"
"     version=2,agnum=n,lazy-count=1,logdev=path,file\n"
"                              the log: internal, or on the existing\n"
"                              file or device logdev= (its whole size\n"
"                              unless size= is given)\n"
"  -m crc=1,finobt=0|1,rmapbt=0|1,reflink=0|1,bigtime=0|1,\n"
"     inobtcount=0|1,metadir=0|1,uuid=UUID,\n"
"     autofsck=0|1|none|check|optimize|repair,\n"
"     uquota,gquota,pquota,uqnoenforce,gqnoenforce,pqnoenforce\n"
"                              metadata features\n"
"  -n size=num,version=2,ftype=1,parent=0|1\n"
"                              directory block size, parent pointers\n"
"  -r rtdev=path,size=num,extsize=num\n"
"                              a classic realtime section on the existing\n"
"                              file or device rtdev= (its whole size\n"
"                              unless size= is given); extsize= alone is\n"
"                              only recorded\n"
"  -s size=num                 sector size\n"
"  -L label                    filesystem label (up to 12 bytes)\n"
"  -p [file=]source[,uid=n][,gid=n]\n"
"                              populate from a directory, a protofile or a\n"
"                              tar archive (.tar, .tar.gz, .tar.xz,\n"
"                              .tar.zst); uid/gid override every owner\n"
"  -c options=file             read options from a configuration file\n"
"  -N                          print the geometry, write nothing\n"
"  -q                          quiet: no geometry summary\n"
"  -f                          overwrite an existing filesystem\n"
"  -K                          do not discard blocks\n"
"  -V                          print the version and exit\n"
"  -h, --help                  this help\n"
"  --unsupported               allow filesystems under 300 MB, with fewer\n"
"                              than 2 AGs or a log under 64 MB (also with\n"
"                              TEST_DIR, TEST_DEV and QA_CHECK_FS set)\n"
"Sizes take a suffix: b (filesystem blocks), s (sectors), k, m, g, t, p,\n"
"e; plain numbers are bytes.\n");
}

long long
mkfs_cvtnum(uint32_t blocksize, uint32_t sectsize, const char *s)
{
	char *end;
	long long v;
	int c;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (end == s || errno || v < 0)
		return -1;
	if (*end == '\0')
		return v;
	if (end[1] != '\0')
		return -1;
	c = tolower((unsigned char)*end);
	switch (c) {
	case 'b':
		return blocksize ? v * blocksize : -1;
	case 's':
		return sectsize ? v * sectsize : -1;
	case 'k':
		return v << 10;
	case 'm':
		return v << 20;
	case 'g':
		return v << 30;
	case 't':
		return v << 40;
	case 'p':
		return v << 50;
	case 'e':
		return v << 60;
	}
	return -1;
}

static const struct subopt *
find_subopt(char opt, const char *name)
{
	for (size_t i = 0; i < NSUBOPTS; i++)
		if (subopts[i].opt == opt && !strcmp(subopts[i].name, name))
			return &subopts[i];
	return NULL;
}

static struct mkfs_val *
val_of(struct mkfs_cli *cli, const struct subopt *so)
{
	return (struct mkfs_val *)((char *)cli + so->off);
}

static int
bad_value(char opt, const char *name, const char *value, const char *why)
{
	fprintf(stderr, "Invalid value %s for -%c %s option. %s\n", value,
		opt, name, why);
	return 1;
}

/* A number without suffix, range-checked. */
static int
parse_plain(const struct subopt *so, const char *value, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(value, &end, 0);
	if (end == value || errno)
		return bad_value(so->opt, so->name, value,
				 "Value not recognized as number.");
	if (*end)
		return bad_value(so->opt, so->name, value,
				 "Unit suffixes are not allowed.");
	if (*out < so->min)
		return bad_value(so->opt, so->name, value,
				 "Value is too small.");
	if (*out > so->max)
		return bad_value(so->opt, so->name, value,
				 "Value is too large.");
	return 0;
}

/*
 * -m autofsck: a number (0 stores "none", 1 "repair", as mkfs.xfs maps
 * them) or one of the property's words, kept as that word.
 */
static int
autofsck_word(const struct subopt *so, const char *value, struct mkfs_val *v)
{
	static const char *const words[] = {
		"none", "check", "optimize", "repair",
	};
	long long n;

	if (isdigit((unsigned char)value[0])) {
		if (parse_plain(so, value, &n))
			return 1;
		v->num = n;
		return 0;
	}
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(value, words[i])) {
			v->num = -1;
			return 0;
		}
	fprintf(stderr, "Invalid value %s for -m autofsck option\n", value);
	return 1;
}

int
mkfs_set_subopt(struct mkfs_cli *cli, char opt, const char *name,
		const char *value, int from_file)
{
	const struct subopt *so = find_subopt(opt, name);
	struct mkfs_val *v;
	int level = from_file ? 1 : 2;

	if (opt == 'd' && !strcmp(name, "file")) {
		if (value && *value && strcmp(value, "1") && strcmp(value, "0"))
			return bad_value(opt, name, value,
					 "Value must be 0 or 1.");
		cli->dfile = !value || !*value || !strcmp(value, "1");
		return 0;
	}
	if (opt == 'd' && !strcmp(name, "name")) {
		if (!value || !*value) {
			fprintf(stderr, "-d name option requires a value\n");
			return 1;
		}
		if (cli->dev && !from_file) {
			fprintf(stderr, "-d name option respecified\n");
			return 1;
		}
		if (!cli->dev)
			cli->dev = value;
		return 0;
	}
	if (opt == 'n' && !strcmp(name, "version")) {
		/* Only version 2 directories exist on v5 filesystems. */
		if (!value || strcmp(value, "2"))
			return bad_value(opt, name, value ? value : "",
					 "Only version 2 is supported.");
		return 0;
	}
	if (!so) {
		fprintf(stderr, "unknown option -%c %s%s%s\n", opt, name,
			value ? "=" : "", value ? value : "");
		return 1;
	}
	v = val_of(cli, so);
	if (v->set == level) {
		fprintf(stderr, "-%c %s option respecified\n", opt, name);
		return 1;
	}
	if (v->set > level)
		return 0;	/* the command line wins over the file */
	for (int i = 0; i < 4 && so->conflicts[i]; i++) {
		const struct subopt *c = find_subopt(opt, so->conflicts[i]);

		if (c && val_of(cli, c)->set == level) {
			fprintf(stderr, "Cannot specify both -%c %s and "
				"-%c %s\n", opt, so->conflicts[i], opt, name);
			return 1;
		}
	}
	/* A bare concurrency, or nr_cpus, asks for the CPU count (1). */
	if (!strcmp(name, "concurrency") &&
	    (!value || !*value || !strcmp(value, "nr_cpus")))
		value = "1";
	if (so->off == V(autofsck) && (!value || !*value))
		value = "1";
	if (!value || !*value) {
		if (so->kind != K_BOOL) {
			fprintf(stderr, "-%c %s option requires a value\n",
				opt, name);
			return 1;
		}
		value = "1";
	}
	switch (so->kind) {
	case K_NUM:
	case K_BOOL:
		if (parse_plain(so, value, &v->num))
			return 1;
		break;
	case K_SIZE:
		/* Suffix-free values can be checked now; others later. */
		if (mkfs_cvtnum(512, 512, value) < 0)
			return bad_value(opt, name, value,
					 "Not a valid value or illegal suffix");
		v->str = value;
		break;
	case K_STR:
	case K_FLAG:
		if (so->off == V(autofsck) && autofsck_word(so, value, v))
			return 1;
		v->str = value;
		break;
	}
	v->set = level;
	if (opt == 's')
		cli->ssize_given = 1;
	return 0;
}

static int
parse_subopts(struct mkfs_cli *cli, char opt, char *arg)
{
	char *save = NULL;

	for (char *tok = strtok_r(arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (eq)
			*eq++ = '\0';
		if (opt == 'c') {
			if (strcmp(tok, "options")) {
				fprintf(stderr, "unknown option -c %s\n", tok);
				return 1;
			}
			if (!eq || !*eq) {
				fprintf(stderr,
					"-c options option requires a value\n");
				return 1;
			}
			if (cli->config) {
				fprintf(stderr,
					"-c options option respecified\n");
				return 1;
			}
			cli->config = eq;
			continue;
		}
		if (mkfs_set_subopt(cli, opt, tok, eq, 0))
			return 1;
	}
	return 0;
}

int
mkfs_parse_args(int argc, char **argv, struct mkfs_cli *cli)
{
	static const struct option longopts[] = {
		{ "unsupported", no_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "b:c:d:i:l:L:m:n:p:r:s:NqfKVh",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'b': case 'c': case 'd': case 'i': case 'l': case 'm':
		case 'n': case 'r': case 's':
			if (parse_subopts(cli, (char)c, optarg))
				return 1;
			break;
		case 'L':
			if (strlen(optarg) > 12) {
				fprintf(stderr, "label %s is longer than 12 "
					"bytes\n", optarg);
				return 1;
			}
			cli->label = optarg;
			break;
		case 'p':
			if (mkfs_parse_populate(&cli->pop, optarg))
				return 1;
			break;
		case 'N':
			cli->dry_run = 1;
			break;
		case 'q':
			cli->quiet = 1;
			break;
		case 'f':
			cli->force = 1;
			break;
		case 'K':
			cli->nodiscard = 1;
			break;
		case 'U':
			cli->unsupported = 1;
			break;
		case 'V':
			printf("xfskit-mkfs version %s\n", xk_version());
			exit(0);
		case 'h':
			mkfs_usage(stdout);
			exit(0);
		default:
			if (optopt && strchr("bcdilLmnprs", optopt))
				fprintf(stderr, "option -%c requires an "
					"argument\n", optopt);
			else if (optopt)
				fprintf(stderr, "unknown option -%c\n", optopt);
			else
				fprintf(stderr, "unknown option %s\n",
					argv[optind - 1]);
			mkfs_usage(stderr);
			return 1;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "extra arguments\n");
		mkfs_usage(stderr);
		return 1;
	}
	if (argc - optind == 1) {
		if (cli->dev) {
			fprintf(stderr, "cannot specify both -d name=%s and "
				"%s\n", cli->dev, argv[optind]);
			return 1;
		}
		cli->dev = argv[optind];
	}
	if (cli->config && mkfs_config_load(cli, cli->config))
		return 1;
	if (!cli->dev) {
		fprintf(stderr, "no device name given in argument list\n");
		mkfs_usage(stderr);
		return 1;
	}
	return 0;
}
