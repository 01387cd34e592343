# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by tests: fill a mounted filesystem at $1 with every on-disk
# format: short-form, block, leaf and node directories; extent-list,
# btree-format, sparse and reflinked files; local and remote symlinks;
# hard links and device nodes; short-form, leaf, node and remote xattrs,
# and an attr fork in btree format.
populate_all_formats() {
	local m=$1
	mkdir -p "$m/sf" "$m/block" "$m/leaf" "$m/node" "$m/attrs" "$m/links" || return 1
	touch "$m/sf/a" "$m/sf/b"
	(cd "$m/block" && touch $(seq -f "file_%g" 1 40))
	(cd "$m/leaf" && touch $(seq -f "file_with_longer_name_%g" 1 400))
	(cd "$m/node" && touch $(seq -f "node_entry_with_a_long_name_%g" 1 3000))
	(cd "$m/node" && rm -f $(seq -f "node_entry_with_a_long_name_%g" 1 2 1500))
	head -c 3000 /dev/urandom >"$m/small"
	xfs_io -f -c "pwrite -b 64k 0 1m" "$m/extents" >/dev/null
	xfs_io -f -c "falloc 0 8m" "$m/bmbt" >/dev/null
	seq 0 2 2000 | awk '{ print "fpunch " $1 * 4096 " 4096" }' |
		xfs_io "$m/bmbt" >/dev/null
	xfs_io -f -c "pwrite 0 4k" -c "pwrite 10m 4k" "$m/sparse" >/dev/null
	cp --reflink=always "$m/extents" "$m/reflinked" 2>/dev/null || true
	ln -s short "$m/links/short"
	ln -s "$(head -c 600 /dev/zero | tr '\0' d)" "$m/links/long"
	ln "$m/small" "$m/links/hard1"
	ln "$m/small" "$m/links/hard2"
	mknod "$m/links/cdev" c 1 3
	mknod "$m/links/bdev" b 7 0
	mkfifo "$m/links/fifo"
	touch "$m/attrs/sf" "$m/attrs/leaf" "$m/attrs/node" "$m/attrs/remote"
	# One process sets every xattr (a setfattr per xattr cost the suite
	# a thousand processes an image).  The btree file gets 60 remote
	# values, each in its own range of the attr fork's offsets, then
	# every other one is removed: the holes left between the ranges
	# split the mapping into 30 extents whatever blocks the allocator
	# chose, too many for the inode, so the fork is a btree.  (Making
	# the blocks discontiguous instead, by interleaving another file's,
	# was at the mercy of the allocator on a loaded machine.)
	python3 - "$m" <<'PY' || return 1
import os, sys
m = sys.argv[1]
def put(f, n, v):
    os.setxattr(os.path.join(m, "attrs", f), n, v.encode())
put("sf", "user.a", "1")
put("sf", "trusted.t", "x")
put("sf", "security.s", "y")
for i in range(1, 31):
    put("leaf", "user.attr_%d" % i, "value_%d" % i)
for i in range(1, 801):
    put("node", "user.attribute_number_%d" % i, "some_value_%d" % i)
put("remote", "user.big", "v" * 20000)
bt = os.path.join(m, "attrs", "btree")
open(bt, "a").close()
for i in range(1, 61):
    put("btree", "user.v%d" % i, "a" * 5000)
for i in range(2, 61, 2):
    os.removexattr(bt, "user.v%d" % i)
PY
	sync
}
