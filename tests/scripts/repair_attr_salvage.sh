#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Extended attributes salvaged entry by entry (repair/attrfix.c), held
# to xfs_repair.  A kernel-populated image (mkfs.xfs, loop mount,
# os.setxattr): /f with 300 xattrs in a node fork (every 25th value 5000
# bytes, remote), /sf with three short-form ones.  Each case damages one
# field with xfs_db -x (a leaf's header, one entry's name index, hash or
# local flag, a leaf's and the node's magic or count, a remote value
# block's header or its bytes, the short form's size or a name
# length); one copy is repaired by xfskit-repair --json, one by
# xfs_repair.  Checked:
#  - after ours, xfs_repair -n is clean (only then is the image mounted
#    and its xattrs, name and value, read with getfattr);
#  - the xattrs ours keeps include every one xfs_repair keeps (those of
#    an xfs_repair result that xfs_repair -n calls clean);
#  - every xattr ours loses is reported: an xattr_dropped action with a
#    reason for each (a whole unreadable block: one for the block).
# The table gives the xattrs kept (of 303) by each.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating the image needs root (loop mount)"
command -v getfattr >/dev/null || skip "getfattr (attr package) not installed"
command -v python3 >/dev/null || skip "python3 not installed"

img="$T/base.img"
truncate -s 300m "$img"
mkfs.xfs -q -f "$img" || { echo "mkfs.xfs failed" >&2; exit 99; }
loop_mount "$img" || exit 99
touch "$MNT/f" "$MNT/sf"
python3 - "$MNT" <<'EOF' || { echo "setting the xattrs failed" >&2; exit 99; }
import os, sys
f, sf = sys.argv[1] + "/f", sys.argv[1] + "/sf"
for i in range(1, 301):
    v = b"r" * 5000 + str(i).encode() if i % 25 == 0 else b"value_%d" % i
    os.setxattr(f, "user.attr_name_number_%d" % i, v)
for n, v in (("user.a", b"1"), ("user.b", b"2"), ("trusted.c", b"3")):
    os.setxattr(sf, n, v)
EOF
F=$(stat -c %i "$MNT/f") S=$(stat -c %i "$MNT/sf")
(cd "$MNT" && getfattr -h -d -m - -e hex f sf) | grep = | sort >"$T/xa.base"
loop_umount
total=$(wc -l <"$T/xa.base")
[ "$total" -eq 303 ] || { echo "the base image has $total xattrs, not 303" >&2; exit 99; }

# The attr blocks of /f: the first leaf past block 0 and the first
# remote value block, by their magic.
dbargs=(-c "inode $F")
for b in $(seq 0 40); do
	dbargs+=(-c "echo B$b" -c "ablock $b" -c "print hdr.info.hdr.magic" -c "print hdr.magic")
done
xfs_db -r "${dbargs[@]}" "$img" 2>&1 | awk '
	/^B[0-9]+ *$/ { b = substr($1, 2) }
	/^hdr.info.hdr.magic = 0x3bee/ && !leaf && b > 0 { leaf = b }
	/^hdr.magic = 0x5841524d/ && rmt == "" { rmt = b }
	END { print leaf, rmt }' >"$T/blocks"
read -r L R <"$T/blocks"
[ -n "$L" ] && [ -n "${R:-}" ] || { echo "no leaf or remote block found in /f's attr fork" >&2; exit 99; }
rdaddr=$(xfs_db -r -c "inode $F" -c "ablock $R" -c daddr "$img" |
	 sed -n 's/^current daddr is \([0-9]*\).*/\1/p')

# xattrs_kept IMG OUT CLEAN: the base xattrs IMG holds (name and value)
# into OUT when CLEAN (the exit status of xfs_repair -n on IMG) is 0;
# else OUT is empty.
xattrs_kept() {
	: >"$2"
	[ "$3" -eq 0 ] || return 1
	loop_mount "$1" || return 1
	(cd "$MNT" && getfattr -h -d -m - -e hex f sf 2>/dev/null) | grep = |
		sort | comm -12 "$T/xa.base" - >"$2"
	loop_umount
}

row() {
	printf '%-16s %-6s %-8s %-9s %-7s %s\n' "$@"
}
row case ours xfs_rep xr-n-ours dropped reason
# run_case NAME WHAT: WHAT is "db:CMDS" (xfs_db commands, ';' between)
# or "trash" (64 bytes of the remote block's value overwritten).
run_case() {
	local name=$1 what=$2 c args=() rc xr ours theirs reported why
	cp --sparse=always "$img" "$T/a.img"
	if [ "$what" = trash ]; then
		printf 'X%.0s' $(seq 64) | dd of="$T/a.img" bs=1 \
			seek=$((rdaddr * 512 + 200)) conv=notrunc status=none
	else
		IFS=';' read -ra cl <<<"${what#db:}"
		for c in "${cl[@]}"; do args+=(-c "$c"); done
		xfs_db -x "${args[@]}" "$T/a.img" >"$T/db.out" 2>&1
	fi
	if same_image "$img" "$T/a.img"; then
		fail "$name: the damage changed nothing: $(head -2 "$T/db.out")"
		return
	fi
	cp --sparse=always "$T/a.img" "$T/x.img"
	"$REPAIR" --json "$T/a.img" >"$T/ours.json" 2>"$T/ours.err"; rc=$?
	xfs_repair -n "$T/a.img" >"$T/xrn.out" 2>&1; xr=$?
	xattrs_kept "$T/a.img" "$T/ours.kept" $xr
	xfs_repair "$T/x.img" >"$T/xr.out" 2>&1
	xfs_repair -n "$T/x.img" >/dev/null 2>&1
	xattrs_kept "$T/x.img" "$T/theirs.kept" $?
	ours=$(wc -l <"$T/ours.kept") theirs=$(wc -l <"$T/theirs.kept")
	# The xattr_dropped actions: each with a reason; how many.
	read -r reported why < <(python3 -c '
import json, sys
acts = json.load(open(sys.argv[1])).get("actions", [])
d = [a for a in acts if a["action"] == "xattr_dropped"]
bad = [a for a in d if not a.get("reason")]
print(len(d), "MISSING" if bad else (d[0]["reason"] if d else "-"))' "$T/ours.json" 2>&1)
	row "$name" "$ours" "$theirs" "$xr" "$reported" "$why"
	[ $rc -eq 0 ] || fail "$name: xfskit-repair exit $rc: $(tail -3 "$T/ours.err")"
	[ $xr -eq 0 ] || fail "$name: xfs_repair -n after ours: $(grep -iE 'bad|would|corrupt' "$T/xrn.out" | head -3)"
	comm -13 "$T/ours.kept" "$T/theirs.kept" >"$T/missing"
	[ -s "$T/missing" ] && fail "$name: xfs_repair keeps $(wc -l <"$T/missing") xattrs ours loses: $(cut -d= -f1 "$T/missing" | head -3 | tr '\n' ' ')"
	[ "$why" = MISSING ] && fail "$name: an xattr_dropped action has no reason"
	[ "$ours" -lt "$total" ] && [ "${reported:-0}" -eq 0 ] &&
		fail "$name: ours lost $((total - ours)) xattrs and reported no xattr_dropped"
}

run_case leaf-count "db:inode $F;ablock $L;write -d hdr.count 0"
run_case leaf-firstused "db:inode $F;ablock $L;write -d hdr.firstused 100"
run_case leaf-freemap "db:inode $F;ablock $L;write -d hdr.freemap[0].size 4000"
run_case leaf-magic "db:inode $F;ablock $L;write -d hdr.info.hdr.magic 0"
run_case entry-nameidx "db:inode $F;ablock $L;write -d entries[3].nameidx 5000"
run_case entry-hash "db:inode $F;ablock $L;write -d entries[3].hashval 0"
run_case entry-local "db:inode $F;ablock $L;write -d entries[3].local 0"
run_case node-count "db:inode $F;ablock 0;write -d hdr.count 0"
run_case remote-bytes "db:inode $F;ablock $R;write -d hdr.bytes 5"
run_case remote-trashed trash
run_case sf-totsize "db:inode $S;write -d a.sfattr.hdr.totsize 200"
run_case sf-namelen "db:inode $S;write -d a.sfattr.list[1].namelen 0"
finish
