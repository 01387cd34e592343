#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-metadump with a dirty log and with damaged images:
#  (d) a log the kernel left dirty (xfs_io shutdown -f after a workload)
#      is carried as it is: the dump says so (xfs_mdrestore -i), the log
#      blocks of the restored image equal the original's, xfs_repair -n
#      gives the same verdict, and the kernel replays both to the same
#      tree; v1 through xfs_mdrestore and v2 through xfskit-mdrestore
#      restore the same image;
#  formats: on non-default geometries (no sparse inodes nor finobt;
#      1 KiB blocks with 16 KiB directory blocks; 64 KiB blocks) a -o -a
#      dump restores byte for byte as xfs_metadump's, and an obfuscated
#      one restores to an image xfs_repair -n passes with no planted
#      name left in the dump;
#  hostile: images damaged by xfs_db blocktrash (fixed seeds) are dumped
#      without a crash or sanitizer report, the dump restores, and its
#      blocks equal the damaged image's where we did not rewrite them
#      (-o -a).
. "$(dirname "$0")/lib.sh"
need_xfsprogs
command -v xfs_mdrestore >/dev/null 2>&1 || skip "xfs_mdrestore is not installed"
command -v xfs_io >/dev/null 2>&1 || skip "xfs_io is not installed"
MD="$XK_BUILDDIR/db/xfskit-metadump"
MR="$XK_BUILDDIR/db/xfskit-mdrestore"

IMG="$T/dirty.img"
mkfs_xfs_image "$IMG" 320m -m rmapbt=1,reflink=1 ||
	{ fail "mkfs.xfs failed: $(cat "$T/mkfs.out")"; finish; }
loop_mount "$IMG" || finish
mkdir -p "$MNT/d1/d2"
for i in $(seq 1 200); do echo "$i" >"$MNT/d1/logged_file_$i"; done
ln -s /some/target "$MNT/d1/d2/link"
sync
# Changes after the sync live only in the log when the fs shuts down.
for i in $(seq 1 50); do mkdir "$MNT/d1/d2/after_sync_$i"; done
rm -f "$MNT"/d1/logged_file_1?
xfs_io -x -c 'shutdown -f' "$MNT" || fail "shutdown -f failed"
loop_umount

verdict() {
	xfs_repair -n "$1" >"$T/rep.out" 2>&1
	echo "exit $?"
	grep -iE 'log|would|bad|corrupt|error' "$T/rep.out" |
		grep -v 'Cannot get host' | sort
}
orig_verdict=$(verdict "$IMG")
echo "$orig_verdict" | grep -qi 'log' ||
	fail "the workload did not leave a dirty log: $orig_verdict"

logoff=$(( $(db_get "$IMG" 'sb 0' logstart) * $(db_get "$IMG" 'sb 0' blocksize) ))
loglen=$(( $(db_get "$IMG" 'sb 0' logblocks) * $(db_get "$IMG" 'sb 0' blocksize) ))
same_log() {
	cmp -s -i "$logoff:$logoff" -n "$loglen" "$IMG" "$1"
}

for flags in "" "-o"; do
	label="metadump ${flags:-(obfuscating)}"
	"$MD" $flags "$IMG" "$T/d.md" 2>"$T/md.err" ||
		fail "$label of the dirty image failed: $(cat "$T/md.err")"
	xfs_mdrestore -i "$T/d.md" | grep -q "dirty log" ||
		fail "$label: header does not say dirty: $(xfs_mdrestore -i "$T/d.md")"
	rm -f "$T/r.img"
	xfs_mdrestore "$T/d.md" "$T/r.img" || fail "xfs_mdrestore ($flags) failed"
	same_log "$T/r.img" &&
		pass "$label: log carried byte for byte ($loglen bytes)" ||
		fail "$label: log blocks differ after restore"
	[ "$(verdict "$T/r.img")" = "$orig_verdict" ] &&
		pass "$label: xfs_repair -n verdict as the original's ($(echo "$orig_verdict" | head -1))" ||
		fail "$label: verdict differs: $(verdict "$T/r.img" | head -3)"
done

# v2 of the same (-o: no random names) restores to the same image.
"$MD" -o -v 2 "$IMG" "$T/d2.md" || fail "metadump -o -v 2 failed"
"$MR" -i "$T/d2.md" | grep -q "not obfuscated, dirty log" ||
	fail "v2 header does not say dirty: $("$MR" -i "$T/d2.md")"
rm -f "$T/r2.img"
"$MR" "$T/d2.md" "$T/r2.img" || fail "xfskit-mdrestore of v2 failed"
same_image "$T/r.img" "$T/r2.img" &&
	pass "dirty log: v2 via xfskit-mdrestore = v1 via xfs_mdrestore" ||
	fail "dirty log: v2 restore differs from v1's"

# The kernel replays the restored log as it replays the original's.
cp --sparse=always "$IMG" "$T/orig_copy.img"
tree() {
	loop_mount "$1" || return 1
	(cd "$MNT" && find . | sort)
	loop_umount
}
tree "$T/orig_copy.img" >"$T/tree_orig"
tree "$T/r.img" >"$T/tree_rest"
if [ -s "$T/tree_orig" ] && same_image "$T/tree_orig" "$T/tree_rest"; then
	pass "kernel replay of the restored log gives the original's tree ($(wc -l <"$T/tree_orig") paths)"
else
	fail "replayed trees differ: $(diff "$T/tree_orig" "$T/tree_rest" | head -3)"
fi
grep -q after_sync_50 "$T/tree_rest" ||
	fail "the logged-only directories did not come back"
rm -f "$T"/*.md "$T/r.img" "$T/r2.img" "$T/orig_copy.img"

# Other geometries, with a small workload of every directory format.
for opts in "-i sparse=0 -m finobt=0" "-b size=1024 -n size=16384" \
    "-b size=65536"; do
	F="$T/f.img"
	mkfs_xfs_image "$F" 320m $opts ||
		{ fail "mkfs.xfs $opts failed: $(cat "$T/mkfs.out")"; continue; }
	loop_mount "$F" || continue
	mkdir -p "$MNT/big" "$MNT/sf"
	(cd "$MNT/big" && touch $(seq -f "hidden_entry_name_%g" 1 800))
	# directories in many inode records (two records share a 64 KiB
	# block)
	for i in $(seq 1 60); do
		mkdir "$MNT/hidden_dir_$i"
		touch "$MNT/hidden_dir_$i/hidden_file_a" \
			"$MNT/hidden_dir_$i/hidden_file_b"
	done
	touch "$MNT/sf/hidden_short_dir_entry"
	for i in $(seq 1 30); do
		setfattr -n "user.hidden_attr_$i" -v "hidden_value_$i" \
			"$MNT/sf/hidden_short_dir_entry" 2>/dev/null
	done
	ln -s "/hidden_link_target/$(head -c 700 /dev/zero | tr '\0' p)" \
		"$MNT/sf/lnk"
	loop_umount
	"$MD" -o -a "$F" "$T/f1.md" || fail "$opts: metadump -o -a failed"
	xfs_metadump -o -a "$F" "$T/f2.md" || fail "$opts: xfs_metadump failed"
	rm -f "$T/f1.img" "$T/f2.img"
	xfs_mdrestore "$T/f1.md" "$T/f1.img"
	xfs_mdrestore "$T/f2.md" "$T/f2.img"
	same_image "$T/f1.img" "$T/f2.img" &&
		pass "$opts: -o -a restore = xfs_metadump's" ||
		fail "$opts: -o -a restore differs from xfs_metadump's"
	"$MD" "$F" "$T/f3.md" || fail "$opts: obfuscating metadump failed"
	n=$(grep -c -a hidden_ "$T/f3.md")
	[ "$n" -eq 0 ] || fail "$opts: $n planted names left in the dump"
	rm -f "$T/f3.img"
	xfs_mdrestore "$T/f3.md" "$T/f3.img"
	xfs_repair -n "$T/f3.img" >"$T/rep.out" 2>&1 &&
		pass "$opts: obfuscated restore passes xfs_repair -n" ||
		fail "$opts: obfuscated restore: $(grep -v '^Phase\|^ *-' "$T/rep.out" | head -3)"
	rm -f "$F" "$T"/f?.img "$T"/f?.md
done

# Hostile images: blocktrash over every metadata type, fixed seeds.
xfs_repair -L "$IMG" >/dev/null 2>&1
for seed in 1 2 3; do
	cp --sparse=always "$IMG" "$T/bad.img"
	xfs_db -x -c blockget -c "blocktrash -n 40 -s $seed -x 1 -y 64" \
		"$T/bad.img" >/dev/null 2>&1
	"$MD" -w -o -a "$T/bad.img" "$T/bad.md" >"$T/bad.out" 2>&1
	rc=$?
	# Exit 1 is both "cannot open" and "dump not written" (as
	# xfs_metadump): only the first is a clean refusal here.
	if [ $rc -ne 0 ] && { [ $rc -ne 1 ] ||
	   ! grep -q "^xfskit-metadump: $T/bad.img: " "$T/bad.out"; }; then
		fail "seed $seed: metadump exit $rc: $(tail -3 "$T/bad.out")"
		continue
	fi
	[ $rc -eq 1 ] && { pass "seed $seed: superblock refused cleanly"; continue; }
	rm -f "$T/bad_r.img"
	"$MR" "$T/bad.md" "$T/bad_r.img" >/dev/null 2>&1 ||
		{ fail "seed $seed: the dump does not restore"; continue; }
	# With -o -a nothing is rewritten: every byte restored is the image's.
	if cmp -l "$T/bad_r.img" "$T/bad.img" | awk '$2 != 0 { bad = 1 } END { exit bad }'; then
		pass "seed $seed: dumped ($(grep -c . "$T/bad.out") warnings), restored bytes are the image's"
	else
		fail "seed $seed: restored bytes differ from the damaged image"
	fi
	"$MD" "$T/bad.img" "$T/bad_obf.md" >"$T/bad.out" 2>&1 ||
		fail "seed $seed: obfuscating dump failed: $(tail -2 "$T/bad.out")"
done
finish
