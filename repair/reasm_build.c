// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Writing the directories reasm.c planned from the device scan's blocks,
 * inside the AG rebuild session (as dirfix.c writes its rewrites): the
 * lost inode's slot becomes a directory again, with the entries its
 * blocks gave, its parent the directory whose entry names it.  Its
 * owner, mode and times were in the lost inode: root, 0755 and now,
 * which the report says.
 */
#include <stdlib.h>

#include <xfskit/build.h>

#include "repair.h"
#include "reasm.h"

int
reasm_build(struct repair_ctx *rc, struct xk_bld *b)
{
	struct reasm_state *st = rc->reasm;
	int64_t now = repair_now();
	int err = 0;

	if (!st)
		return 0;
	for (size_t i = 0; i < st->ndirs && !err; i++) {
		struct reasm_dir *d = &st->dirs[i];

		/* dirfix.c rewrites these, their cores kept. */
		if (d->fork_lost)
			continue;
		err = new_dir_write(b, d->ino, 0755, d->parent, d->ents, d->n,
				    d->nsubdirs, now);
		if (err)
			return err;
	}
	/*
	 * Paths now: names read while a lost inode made its cluster fail
	 * its verifier were not found, and are forgotten.
	 */
	action_scan_free(rc);
	for (size_t i = 0; i < st->ndirs; i++) {
		const struct reasm_dir *d = &st->dirs[i];
		char path[1024];

		if (d->fork_lost && !dir_being_rebuilt(rc, d->ino))
			continue;
		action_path(rc, d->ino, path, sizeof(path));
		if (d->fork_lost)
			action_report(rc, ACT_DIR_REASSEMBLED, d->ino, -1,
				      path, " from %zu blocks found by the "
				      "device scan (%zu entries; its block "
				      "map was lost)", d->nblocks, d->n);
		else
			action_report(rc, ACT_DIR_REASSEMBLED, d->ino, -1,
				      d->unnamed ? "" : path, " from %zu blocks "
				      "found by the device scan (%zu entries%s; "
				      "mode 0755, owner root: the inode was "
				      "lost%s)", d->nblocks, d->n, d->dropped ?
				      ", some left out" : "", d->unnamed ?
				      "; no entry named it: it goes to "
				      "/lost+found" : "");
	}
	return 0;
}
