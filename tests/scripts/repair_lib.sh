# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the repair tests after lib.sh: recording a mounted tree,
# walking an image through the kernel, and counting what a repair kept.

# entries MNT: one line per entry: path, type, content (sha256 for files,
# target for symlinks), sorted.  A file of 64 MiB or more is recorded by
# its size: a repair may keep a damaged (sparse, huge) size, and hashing
# exabytes of holes would never end; no recorded tree has such a file.
entries() {
	(cd "$1" && {
		find . -xdev ! -type f -printf '%p\t%y\t%l\n'
		find . -xdev -type f -size +65535k -printf '%p\tf\tsize:%s\n'
		find . -xdev -type f -size -65536k -print0 |
			xargs -0 -r sha256sum 2>/dev/null |
			sed 's/^\([0-9a-f]*\)  \(.*\)$/\2\tf\t\1/'
	} | LC_ALL=C sort)
}

# walk IMG OUT: mount a copy of IMG, record its entries in OUT, unmount;
# prints the new XFS errors of the kernel log, if any.
walk() {
	local before
	cp --sparse=always "$1" "$T/walk.img"
	before=$(dmesg | wc -l)
	if ! loop_mount "$T/walk.img"; then
		: >"$2"
		echo "mount failed"
		return 1
	fi
	entries "$MNT" >"$2"
	loop_umount
	rm -f "$T/walk.img"
	xfs_kernel_errors "$before" | head -3
}

# preserved TREE: entries of TREE identical (path, type, content) to the
# recorded $T/tree.base.
preserved() {
	LC_ALL=C comm -12 "$T/tree.base" "$1" | wc -l
}

# contents TREE: the content hashes of the regular files of a tree
# recorded by entries, sorted (a multiset: one line per file).
contents() {
	awk -F '\t' '$2 == "f" { print $3 }' "$1" | LC_ALL=C sort
}

# files_kept BASE TREE: files of BASE whose content is found anywhere in
# TREE (under any name, /lost+found included), each found file counted
# once.
files_kept() {
	LC_ALL=C comm -12 <(contents "$1") <(contents "$2") | wc -l
}

# xfs_repair_kept IMG: repair IMG with xfs_repair as an administrator
# would (again while it still finds something; -L when it asks), then,
# when xfs_repair -n calls it clean, walk it into $T/tree.theirs and
# print the entries preserved; 0 when it is not clean.  Its output is
# in $T/xr.out.
xfs_repair_kept() {
	xfs_repair "$1" >"$T/xr.out" 2>&1 ||
		xfs_repair -L "$1" >>"$T/xr.out" 2>&1
	xfs_repair -n "$1" >/dev/null 2>&1 ||
		xfs_repair "$1" >>"$T/xr.out" 2>&1
	if xfs_repair -n "$1" >/dev/null 2>&1; then
		walk "$1" "$T/tree.theirs" >/dev/null
		preserved "$T/tree.theirs"
	else
		echo 0
	fi
}
