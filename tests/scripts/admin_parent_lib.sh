# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers of the parent pointer upgrade tests (admin_parent.sh,
# admin_parent_meta.sh), sourced after lib.sh and admin_lib.sh: the tree
# as the kernel reads it, the parent pointers as the kernel walks them,
# a kernel workload, the verdicts of xfs_repair 7.2 -n and ours.

# walk IMG OUT: every path with its inode, type, mode, link count, size,
# mtime, content hash (a symlink's: its target's) and user xattrs, as the
# kernel reads them.
walk() {
	loop_mount "$1" || exit 99
	python3 - "$MNT" >"$2" <<'PY' || exit 99
import hashlib, os, stat, sys
m = sys.argv[1]
for d, dirs, files in os.walk(m):
    dirs.sort()
    for n in sorted(dirs + files):
        p = os.path.join(d, n)
        st = os.lstat(p)
        h = ''
        if stat.S_ISREG(st.st_mode):
            with open(p, 'rb') as f:
                h = hashlib.sha256(f.read()).hexdigest()
        elif stat.S_ISLNK(st.st_mode):
            h = hashlib.sha256(os.readlink(p).encode()).hexdigest()
        xa = []
        if not stat.S_ISLNK(st.st_mode):
            for a in sorted(os.listxattr(p)):
                xa.append(a + '=' + hashlib.sha256(os.getxattr(p, a)).hexdigest()[:16])
        print(os.path.relpath(p, m), st.st_ino, oct(st.st_mode), st.st_nlink,
              st.st_size, st.st_mtime_ns, h, ','.join(xa))
PY
	loop_umount || exit 99
}

# pointers_are_tree IMG NAME MIN: the paths the kernel builds from every
# inode's parent pointers (one open per inode) are the tree's paths.
# Symlinks and device files cannot be opened: xfs_repair -n checks theirs.
pointers_are_tree() {
	local args=() f n
	loop_mount "$1" || return 1
	(cd "$MNT" && find . -mindepth 1 ! -type l ! -type b ! -type c -printf '%P\n' | sort) >"$T/find.out"
	(cd "$MNT" && find . -mindepth 1 \( -type f -o -type d \) -printf '%i %P\n' |
		sort -un -k1,1 | cut -d' ' -f2-) >"$T/ino.out"
	while IFS= read -r f; do
		args+=(-c "open $MNT/$f" -c "parent -p" -c close)
	done <"$T/ino.out"
	xfs72 xfs_io -r "${args[@]}" >"$T/par.raw" 2>&1
	loop_umount || return 1
	sed -n "s|^$MNT/||p" "$T/par.raw" | sort >"$T/par.out"
	n=$(wc -l <"$T/find.out")
	if grep -v "^$MNT/" "$T/par.raw" | grep -q .; then
		fail "$2: xfs_io 7.2 parent -p: $(grep -v "^$MNT/" "$T/par.raw" | head -3)"
	elif [ "$n" -lt "$3" ] || ! diff "$T/find.out" "$T/par.out" >"$T/par.diff"; then
		fail "$2: the parent pointers' paths (>) are not the tree's $n (<): $(head -6 "$T/par.diff")"
	else
		pass "$2: the parent pointers of $(wc -l <"$T/ino.out") inodes, walked up by the kernel, give the tree's $n paths"
	fi
}

# pptr_workload IMG NAME FN: FN (a shell function) run by the kernel in
# the mounted IMG's root, set -e; no kernel error.
pptr_workload() {
	local since errs
	since=$(kmsg_mark)
	loop_mount "$1" || return 1
	(
	set -e
	cd "$MNT"
	"$3"
	) || fail "$2: the workload failed on the mounted result"
	loop_umount || { fail "$2: umount failed"; return 1; }
	errs=$(xfs_kernel_errors "$since")
	[ -z "$errs" ] && pass "$2: the kernel ran the workload (create, rename, link, unlink) without an error" ||
		fail "$2: kernel errors: $errs"
}

# clean72 IMG NAME: xfs_repair 7.2 -n and xfskit-repair -n find IMG clean
# (xfs_repair 6.1 does not know parent pointers).
clean72() {
	if ! xfs72 xfs_repair -n "$1" >"$T/r72.out" 2>&1; then
		fail "$2: xfs_repair 7.2 -n: $(grep -v '^Phase\|^  *-\|host filesystem\|sector size\|the image and' "$T/r72.out" | head -5)"
	elif ! "$REPAIR" -n "$1" >"$T/rk.out" 2>&1; then
		fail "$2: xfskit-repair -n: $(repair_own "$T/rk.out" | head -5)"
	else
		pass "$2: xfs_repair 7.2 -n and xfskit-repair -n clean"
	fi
}

# upgrade72 IMG COPY NAME: xfs_repair 7.2 on COPY, given the PARENT bit
# alone; its "adding missing" lines in $T/add72 (child parent gen name).
upgrade72() {
	local inc
	cp --sparse=always "$1" "$2" || exit 99
	inc=$(xfs72 xfs_db -r -c "sb 0" -c "print features_incompat" "$2" | sed 's/.* = //')
	xfs72 xfs_db -x -c "sb 0" -c "write features_incompat $((inc | 0x80))" "$2" >/dev/null || exit 99
	xfs72 xfs_repair "$2" >"$T/r72.out" 2>&1 ||
		{ fail "$3: xfs_repair 7.2 on the copy given the PARENT bit: $(tail -3 "$T/r72.out")"; return 1; }
	sed -n "s/^adding missing ino \([0-9]*\) parent pointer (ino \([0-9]*\) gen \(0x[0-9a-f]*\) name '\(.*\)')$/\1 \2 \3 \4/p" \
		"$T/r72.out" | sort >"$T/add72"
}

# same_forks OURS R72 NAME: every inode of the tree (the kernel's find on
# OURS) has its forks placed and shaped as in xfs_repair 7.2's upgrade
# R72: fork offset, data and attr fork formats, data extents.
same_forks() {
	local args=() i
	loop_mount "$1" || exit 99
	(cd "$MNT" && find . -printf '%i\n' | sort -un) >"$T/forks.inos"
	loop_umount || exit 99
	while read -r i; do
		args+=(-c "inode $i" -c "print v3.inumber core.forkoff core.format core.aformat core.nextents")
	done <"$T/forks.inos"
	xfs72 xfs_db -r "${args[@]}" "$1" 2>&1 | sed 's/^[^=]* = //' | paste -d' ' - - - - - >"$T/forks.ours"
	xfs72 xfs_db -r "${args[@]}" "$2" 2>&1 | sed 's/^[^=]* = //' | paste -d' ' - - - - - >"$T/forks.72"
	if [ "$(wc -l <"$T/forks.ours")" -lt "$(wc -l <"$T/forks.inos")" ] ||
	   ! diff "$T/forks.72" "$T/forks.ours" >"$T/forks.diff"; then
		fail "$3: inode forks (inode forkoff format aformat extents) differ from xfs_repair 7.2's (<): $(head -6 "$T/forks.diff")"
	else
		pass "$3: the forks of all $(wc -l <"$T/forks.ours") inodes are placed and shaped as in xfs_repair 7.2's upgrade (offset, formats, extents)"
	fi
}
