// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The -c options= configuration file, in mkfs.xfs's ini format: sections
 * named after the option letters ([block], [data], [inode], [log],
 * [metadata], [naming], [sector]) holding name=value lines with the same
 * names as the suboptions.  Parsed with libinih.  Values given on the
 * command line win over the file; an unknown section or name, or a bad
 * value, is an error naming the file, section and line.
 */
#include <ini.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>

#include "mkfs.h"

struct cfg_ctx {
	struct mkfs_cli	*cli;
	const char	*path;
	/* inih hands out temporary strings; values must outlive parsing. */
	char		*keep[64];
	int		nkeep;
};

static const struct {
	const char	*section;
	char		opt;
} sections[] = {
	{ "block", 'b' }, { "data", 'd' }, { "inode", 'i' }, { "log", 'l' },
	{ "metadata", 'm' }, { "naming", 'n' }, { "realtime", 'r' },
	{ "sector", 's' },
};

static int
cfg_handler(void *user, const char *section, const char *name,
	    const char *value)
{
	struct cfg_ctx *ctx = user;
	char opt = 0;
	char *v;

	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (!strcasecmp(section, sections[i].section))
			opt = sections[i].opt;
	if (!opt || (opt == 'd' && (!strcmp(name, "name") ||
				    !strcmp(name, "file")))) {
		fprintf(stderr, "%s: invalid config file option: [%s]: "
			"%s=%s\n", ctx->path, section, name, value);
		return 0;
	}
	if (ctx->nkeep >= 64) {
		fprintf(stderr, "%s: too many options\n", ctx->path);
		return 0;
	}
	v = strdup(value);
	if (!v)
		return 0;
	ctx->keep[ctx->nkeep++] = v;
	if (mkfs_set_subopt(ctx->cli, opt, name, v, 1)) {
		fprintf(stderr, "%s: invalid config file option: [%s]: "
			"%s=%s\n", ctx->path, section, name, value);
		return 0;
	}
	return 1;
}

int
mkfs_config_load(struct mkfs_cli *cli, const char *path)
{
	static struct cfg_ctx ctx;	/* values live until exit */
	int ret;

	ctx.cli = cli;
	ctx.path = path;
	ret = ini_parse(path, cfg_handler, &ctx);
	if (ret < 0) {
		fprintf(stderr, "%s: could not open the configuration file\n",
			path);
		return 1;
	}
	if (ret > 0) {
		fprintf(stderr, "%s: error in the configuration file at line "
			"%d\n", path, ret);
		return 1;
	}
	return 0;
}
