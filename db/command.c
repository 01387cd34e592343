// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The command table, the tokenizer and dispatch, and help.  Each entry
 * names its function, aliases, argument synopsis and help text; editing
 * commands are flagged so that one check here refuses them without -x
 * and always under -r.
 */
#include <stdlib.h>
#include <string.h>

#include "db.h"

static int cmd_help(struct db_ctx *c, int argc, char **argv);
static int cmd_quit(struct db_ctx *c, int argc, char **argv);

const struct db_cmd db_cmds[] = {
	{ "ablock", {NULL}, "filoff", db_cmd_ablock,
	  "set address to file offset (attr fork) of the current inode",
	  "Go to the attribute fork block at file offset filoff of the "
	  "current inode, typed attr3.", 0 },
	{ "addr", {"a"}, "field", db_cmd_addr,
	  "set current address to the value of a pointer field",
	  "Follow a pointer field (btree root, sibling, child pointer, "
	  "inode number) to the object it names, typed by the field.", 0 },
	{ "agf", {NULL}, "[agno]", db_cmd_agf,
	  "set address to agf header", NULL, 0 },
	{ "agfl", {NULL}, "[agno]", db_cmd_agfl,
	  "set address to agfl block", NULL, 0 },
	{ "agi", {NULL}, "[agno]", db_cmd_agi,
	  "set address to agi header", NULL, 0 },
	{ "back", {"b"}, "", db_cmd_back,
	  "move to the previous location in the history", NULL, 0 },
	{ "blocktrash", {NULL}, "[-n count] [-s seed] [-x min] [-y max] "
	  "[-t type]...", db_cmd_blocktrash,
	  "flip random bits in metadata blocks",
	  "Pick count random metadata blocks of the given types (default "
	  "all) reachable from the AG headers and flip a random run of "
	  "between min and max bits (default 1) in each.  -s makes the "
	  "choice repeatable.", 1 },
	{ "bmap", {NULL}, "[-a] [-d] [ino]", db_cmd_bmap,
	  "show the block map of an inode",
	  "List the extents of the data fork (or with -a the attribute "
	  "fork) of the current inode or of ino.", 0 },
	{ "check", {NULL}, "[-s|-v] [-n] [-p] [-t] [-b bno]... [-i ino]...",
	  db_cmd_check,
	  "verify every reachable metadata block with the libfs verifiers",
	  "Read every AG header, every btree block reachable from them, "
	  "every allocated inode and the directory, attribute and symlink "
	  "blocks of those inodes through the libfs verifiers, and print "
	  "each failure.  Fails when any block fails.  xfs_db's options: "
	  "-s prints the problems alone (no count); -v traces every block "
	  "(\"setting block AG/AGBNO to TYPE\") and inode; -b bno traces "
	  "filesystem block bno, -i ino inode ino and its extents; -n lists "
	  "the paths of the inodes the problems name; -p starts each "
	  "problem with the image's name; -t is accepted (there is no "
	  "check of unowned blocks to skip).", 0 },
	{ "convert", {NULL}, "type num [type num]... type", db_cmd_convert,
	  "convert between address units",
	  "Units: agno, agblock, agino, daddr, fsblock, ino, byte, "
	  "fsbyte.  For example: convert agno 1 agblock 5 fsblock.", 0 },
	{ "daddr", {NULL}, "[d]", db_cmd_daddr,
	  "set address to a 512-byte sector", NULL, 0 },
	{ "dblock", {NULL}, "filoff", db_cmd_dblock,
	  "set address to file offset (data fork) of the current inode",
	  "Go to the data fork block at file offset filoff of the current "
	  "inode, typed dir3 for directories, symlink for symlinks and "
	  "data otherwise.", 0 },
	{ "forward", {"f"}, "", db_cmd_forward,
	  "move to the next location in the history", NULL, 0 },
	{ "frag", {NULL}, "[-a] [-d] [-f] [-l] [-q] [-R] [-r] [-v]",
	  db_cmd_frag, "get file fragmentation data",
	  "Count the extents of the selected forks of every allocated inode "
	  "(actual) against the runs of adjacent file offsets they map "
	  "(ideal), as xfs_db does.  -a attribute forks, -d directories, -f "
	  "regular files, -l symbolic links, -q quota files, -R the realtime "
	  "bitmap and summary, -r realtime files; none of them selects all.  "
	  "-v prints each inode's counts.", 0 },
	{ "freesp", {NULL}, "[-bcdrs] [-A alignment] [-a agno]... [-e binsize] "
	  "[-h h1]... [-m binmult]", db_cmd_freesp,
	  "show a histogram of free space extent sizes",
	  "-r: of the realtime volume (from its bitmap, in filesystem "
	  "blocks; -a then names realtime groups).", 0 },
	{ "fsblock", {"fsb"}, "[fsb]", db_cmd_fsblock,
	  "set address to a filesystem block",
	  "Go to filesystem block fsb (absolute, not AG relative), typed "
	  "data; with no argument print the block the current location "
	  "starts in.", 0 },
	{ "fuzz", {NULL}, "[-c | -d] [-s seed] field action [n]", db_cmd_fuzz,
	  "fuzz a field of the current object",
	  "Actions: zeroes, ones, firstbit, middlebit, lastbit, add N, "
	  "sub N, random.  The CRC is recomputed unless -c is given; -d "
	  "writes even when the verifier rejects the result.  -s seeds "
	  "random.", 1 },
	{ "hash", {NULL}, "name", db_cmd_hash,
	  "print the directory/attribute hash of a name", NULL, 0 },
	{ "help", {"h", "?"}, "[command]", cmd_help,
	  "help for one or all commands", NULL, 0 },
	{ "inode", {NULL}, "[ino]", db_cmd_inode,
	  "set address to an inode", NULL, 0 },
	{ "label", {NULL}, "[NEWLABEL]", db_cmd_label,
	  "print the filesystem label, or set it (-x) in every superblock",
	  NULL, 0 },
	{ "locate", {NULL}, "field...", db_cmd_locate,
	  "print where a field's bits are on the device",
	  "For each field print its absolute byte offset on the device, the "
	  "bit offset inside that byte (most significant first) and its "
	  "width in bits; test scripts use it to check that an edit changed "
	  "exactly one field.", 0 },
	{ "logformat", {NULL}, "[-c cycle] [-s sunit]", db_cmd_logformat,
	  "reformat the log",
	  "Write the log clean (an unmount record, the rest stale blocks) "
	  "in cycle cycle, by default the cycle it is in, as xfs_db's "
	  "logformat.  A dirty log is refused.  -s takes only the "
	  "superblock's log stripe unit.", 1 },
	{ "logprint", {NULL}, "[-r]", db_cmd_logprint,
	  "print the log's transactions (as xfs_logprint -t)",
	  "Prints the log's head, tail and state (clean, dirty, empty), then\n"
	  "every committed transaction from tail to head with its items and\n"
	  "what each targets; -r also prints each record.  Every record's\n"
	  "checksum and every length is checked; damage is reported with its\n"
	  "record, op and item.", 0 },
	{ "ls", {NULL}, "[path]", db_cmd_ls,
	  "list a directory (the current inode by default)", NULL, 0 },
	{ "metadump", {NULL}, "[-o] [-a] [-g] [-v 1|2] file", db_cmd_metadump,
	  "copy all metadata to a file in the xfs_metadump format",
	  "Write every metadata block (AG headers, btrees, inodes, "
	  "directory, attribute, symlink and quota blocks, the log) to "
	  "file, or to standard output for -, in the format xfs_mdrestore "
	  "and xfskit-mdrestore read (-v 1, the default, or -v 2).  Names "
	  "and user xattrs are obfuscated unless -o; stale bytes are "
	  "zeroed unless -a; -g shows progress.", 0 },
	{ "ncheck", {NULL}, "[-i ino]...", db_cmd_ncheck,
	  "print the path names of inodes", NULL, 0 },
	{ "path", {NULL}, "path", db_cmd_path,
	  "go to the inode at an absolute path", NULL, 0 },
	{ "pop", {NULL}, "", db_cmd_pop,
	  "pop the location stack", NULL, 0 },
	{ "print", {"p"}, "[field]...", db_cmd_print,
	  "print the fields of the current object",
	  "With no argument print every field; otherwise the named ones, "
	  "for example core.mode, u3.bmx[0], recs[2].startblock.", 0 },
	{ "push", {NULL}, "[command [arg]...]", db_cmd_push,
	  "push the current location onto the stack", NULL, 0 },
	{ "quit", {"q"}, "", cmd_quit, "exit xfskit-db", NULL, 0 },
	{ "scan", {NULL}, "[-c] [-r] [-g] [-t type]... [-o owner] [-T threads] "
	  "[-m MiB]", db_cmd_scan,
	  "find metadata blocks by their self-description (device scan)",
	  "Read the whole data device (not the internal log) and list every "
	  "v5 metadata block found: type, daddr, length in bytes, owner (AG "
	  "or inode), level, the file offset the block states (- if none) "
	  "and the verdict.  A block is ours only when its UUID is the "
	  "filesystem's, its self address is where it was found (blocks of "
	  "images stored in files are rejected here), its CRC matches and "
	  "its verifier passes.  -r lists rejected candidates too; -c prints "
	  "the count of accepted and rejected blocks per type and reason "
	  "instead; -t type (sb, agf, agi, agfl, bnobt, cntbt, inobt, "
	  "finobt, rmapbt, refcntbt, inodes, bmbt, dir3-block, dir3-data, "
	  "dir3-leaf1, dir3-leafn, dir3-free, da3-node, attr3-leaf, "
	  "attr3-rmt, symlink, rtrmapbt, rtrefcntbt) and -o owner filter "
	  "the list; -g shows progress; -T sets the threads; -m MiB lets "
	  "the lists spill to temporary files ($TMPDIR) above that size.  "
	  "Unreadable ranges are reported and the command fails; it never "
	  "writes.", 0 },
	{ "sb", {NULL}, "[agno]", db_cmd_sb,
	  "set address to a superblock", NULL, 0 },
	{ "stack", {NULL}, "", db_cmd_stack,
	  "show the location stack", NULL, 0 },
	{ "type", {NULL}, "[type]", db_cmd_type,
	  "show or set the type of the current object", NULL, 0 },
	{ "uuid", {NULL}, "[UUID|generate|nil|restore]", db_cmd_uuid,
	  "print the filesystem UUID, or set it (-x) in every superblock",
	  "A new UUID keeps the metadata's UUID in sb_meta_uuid (the "
	  "META_UUID feature); restore goes back to it.  The log must be "
	  "clean; it is rewritten empty under the new UUID.", 0 },
	{ "version", {NULL}, "", db_cmd_version,
	  "print the feature flags of the filesystem", NULL, 0 },
	{ "write", {"w"}, "[-c | -d] [--] field value", db_cmd_write,
	  "write a value into a field of the current object",
	  "Plain write refuses a result the verifier rejects and recomputes "
	  "the CRC; -d writes it anyway (CRC still fixed); -c leaves the "
	  "CRC as it is, wrong on purpose.  A value starting with - follows "
	  "--.  On type data: write fill|sequence|lshift|rshift|lrot|rrot|"
	  "random [args] edits the bytes as xfs_db's data mode (write alone "
	  "lists the verbs).", 1 },
	{ NULL, {NULL}, NULL, NULL, NULL, NULL, 0 }
};

const struct db_cmd *
db_cmd_find(const char *name)
{
	for (const struct db_cmd *cmd = db_cmds; cmd->name; cmd++) {
		if (strcmp(cmd->name, name) == 0)
			return cmd;
		for (int i = 0; i < 3 && cmd->aliases[i]; i++)
			if (strcmp(cmd->aliases[i], name) == 0)
				return cmd;
	}
	return NULL;
}

static int
cmd_help(struct db_ctx *c, int argc, char **argv)
{
	const struct db_cmd *cmd;

	if (argc > 1) {
		cmd = db_cmd_find(argv[1]);
		if (!cmd) {
			db_err(c, "no such command %s", argv[1]);
			return 1;
		}
		db_out(c, "%s %s -- %s", cmd->name, cmd->args, cmd->help);
		if (cmd->long_help)
			db_out(c, "\n%s", cmd->long_help);
		if (cmd->writes)
			db_out(c, "\nNeeds -x; refused with -r.");
		return 0;
	}
	for (cmd = db_cmds; cmd->name; cmd++)
		db_out(c, "%s %s -- %s", cmd->name, cmd->args, cmd->help);
	return 0;
}

/* quit is handled by the loop; the entry exists for help. */
static int
cmd_quit(struct db_ctx *c, int argc, char **argv)
{
	(void)c;
	(void)argc;
	(void)argv;
	return 0;
}

#define MAX_ARGS	64

/* Split on blanks; double quotes group words. */
static int
tokenize(char *s, char **argv)
{
	int argc = 0;

	while (*s && argc < MAX_ARGS - 1) {
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s || *s == '#')
			break;
		if (*s == '"') {
			argv[argc++] = ++s;
			while (*s && *s != '"')
				s++;
		} else {
			argv[argc++] = s;
			while (*s && *s != ' ' && *s != '\t' && *s != '\n')
				s++;
		}
		if (*s)
			*s++ = '\0';
	}
	argv[argc] = NULL;
	return argc;
}

/*
 * The argument counts a command takes, read from its synopsis: a word
 * in brackets is optional, any other is required; a synopsis with
 * options or "..." leaves the count to the command.  Returns 0 when
 * argc fits, else says so as xfs_db does.
 */
static int
check_arg_count(struct db_ctx *c, const struct db_cmd *cmd, int argc)
{
	const char *p = cmd->args;
	int min = 0, max = 0, n = argc - 1;

	if (strstr(p, "...") || strchr(p, '-'))
		return 0;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (*p != '[')
			min++;
		max++;
		while (*p && *p != ' ')
			p++;
	}
	if (n >= min && n <= max)
		return 0;
	if (min == max)
		db_err(c, "bad argument count %d to %s, expected %d arguments",
		       n, cmd->name, min);
	else
		db_err(c, "bad argument count %d to %s, expected between %d "
		       "and %d arguments", n, cmd->name, min, max);
	return 1;
}

int
db_run_line(struct db_ctx *c, const char *line)
{
	char *copy = strdup(line), *argv[MAX_ARGS];
	const struct db_cmd *cmd;
	int argc, rc;

	if (!copy)
		return 1;
	db_json_begin(c);
	argc = tokenize(copy, argv);
	if (argc == 0) {
		free(copy);
		return 0;
	}
	cmd = db_cmd_find(argv[0]);
	if (!cmd) {
		db_err(c, "command %s not found", argv[0]);
		rc = 1;
	} else if (check_arg_count(c, cmd, argc)) {
		rc = 1;
	} else if (cmd->writes && c->readonly) {
		db_err(c, "%s: not allowed on a filesystem opened read-only "
		       "(-r)", cmd->name);
		rc = 1;
	} else if (cmd->writes && !c->expert) {
		db_err(c, "%s: only allowed in expert mode (-x)", cmd->name);
		rc = 1;
	} else {
		rc = cmd->fn(c, argc, argv) ? 1 : 0;
	}
	db_json_end(c, line, rc);
	free(copy);
	return rc;
}
