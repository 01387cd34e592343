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
	if command -v setfattr >/dev/null; then
		setfattr -n user.a -v 1 "$m/attrs/sf"
		setfattr -n trusted.t -v x "$m/attrs/sf"
		setfattr -n security.s -v y "$m/attrs/sf"
		for i in $(seq 1 30); do
			setfattr -n "user.attr_$i" -v "value_$i" "$m/attrs/leaf"
		done
		for i in $(seq 1 800); do
			setfattr -n "user.attribute_number_$i" -v "some_value_$i" "$m/attrs/node"
		done
		setfattr -n user.big -v "$(head -c 20000 /dev/zero | tr '\0' v)" "$m/attrs/remote"
		# Remote values interleaved with another file's blocks, so
		# the attr fork has too many extents for the inode: btree.
		touch "$m/attrs/btree"
		for i in $(seq 1 60); do
			setfattr -n "user.v$i" -v "$(head -c 5000 /dev/zero | tr '\0' a)" "$m/attrs/btree"
			xfs_io -f -c "pwrite $((i * 4096)) 4096" -c fsync "$m/attrs/spacer" >/dev/null
		done
	fi
	sync
}
