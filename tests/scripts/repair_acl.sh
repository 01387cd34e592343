#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# POSIX ACLs checked as xfs_repair checks them (issue 20), and a bad one
# removed with the file and its other xattrs kept.  A kernel-populated
# image (mkfs.xfs, loop mount, setfacl): /sf an access ACL in a short-form
# attr fork, /d a directory with access and default ACLs, /leaf an ACL
# among 40 user xattrs in a leaf block, /rmt an ACL of 404 entries in a
# remote value, /plain a user xattr named SGI_ACL_FILE holding no ACL
# (not an ACL: only the trusted namespace's names are).  Each case
# rewrites one ACL value with xfs_db -x (permission bits, tags, ids, the
# entry count, the required entries).  Checked:
#  - xfs_repair -n (6.1, and 7.2 where present) and ours -n both find it,
#    and ours -n writes nothing;
#  - after xfskit-repair, xfs_repair -n (6.1 and 7.2) is clean, the bad
#    ACL is reported dropped (--json xattr_dropped, with its reason), and
#    every file, its content and every other xattr is kept;
#  - an ACL xfs_repair accepts in an unusual order is called clean by ours.
# The table gives the xattrs kept by ours and by xfs_repair (of all the
# image's) where xfs_repair was run (every case with XK_TEST_LONG=1).
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating the image needs root (loop mount)"
command -v setfacl >/dev/null || skip "setfacl (acl package) not installed"
command -v getfattr >/dev/null || skip "getfattr (attr package) not installed"
have_xfs72 || true

img="$T/base.img"
truncate -s 300m "$img"
mkfs.xfs -q -f "$img" || { echo "mkfs.xfs failed" >&2; exit 99; }
loop_mount "$img" || exit 99
(
	set -e
	cd "$MNT"
	for f in sf leaf rmt plain; do echo "content of $f" >"$f"; done
	setfacl -m u:1000:rw,g:1001:r sf
	mkdir d
	echo "in d" >d/f
	setfacl -m u:1002:r d
	setfacl -d -m u:1000:rwx d
	python3 -c '
import os
for i in range(40):
    os.setxattr("leaf", "user.attr_%d" % i, b"v" * 40)
os.setxattr("plain", "user.SGI_ACL_FILE", b"no ACL at all")'
	setfacl -m u:1000:rw leaf
	setfacl -m "$(seq -s, -f 'u:%g:r' 2000 2399)" rmt
) || { echo "populating failed" >&2; exit 99; }
SF=$(stat -c %i "$MNT/sf") D=$(stat -c %i "$MNT/d") LF=$(stat -c %i "$MNT/leaf") RM=$(stat -c %i "$MNT/rmt")
# acl_hex FILE NAME: the on-disk value of trusted.NAME, in hex.
acl_hex() {
	getfattr -h -n "trusted.$2" -e hex "$MNT/$1" 2>/dev/null | sed -n 's/^trusted[^=]*=0x//p'
}
sf_acl=$(acl_hex sf SGI_ACL_FILE) d_def=$(acl_hex d SGI_ACL_DEFAULT)
leaf_acl=$(acl_hex leaf SGI_ACL_FILE)
[ ${#sf_acl} -eq 152 ] && [ ${#d_def} -eq 128 ] && [ ${#leaf_acl} -eq 128 ] ||
	{ echo "unexpected ACL sizes: sf ${#sf_acl}, d ${#d_def}, leaf ${#leaf_acl} hex digits" >&2; exit 99; }
loop_umount
xfs_repair_clean "$img" "$T/base.xr" || { echo "base image not clean: $(cat "$T/base.xr")" >&2; exit 99; }
"$REPAIR" -n "$img" >"$T/base.ours" 2>&1 ||
	fail "ours -n on the healthy image (with a user xattr named SGI_ACL_FILE): $(grep -v '^Phase' "$T/base.ours" | head -3)"

# kept IMG OUT: every entry (path, type, content) and every xattr (name,
# value) of IMG, one a line, into OUT.  Only for images xfs_repair -n
# calls clean; IMG is mounted (its bytes change).
kept() {
	: >"$2"
	if loop_mount "$1"; then
		entries_xattrs "$MNT" >"$2"
		loop_umount
	fi
}
cp --sparse=always "$img" "$T/k.img"
kept "$T/k.img" "$T/base.kept"
total=$(grep -c '^xattr ' "$T/base.kept")

# patch HEX ENTRY TAG ID PERM: HEX (an on-disk ACL) with entry ENTRY's
# fields replaced by those given (- keeps one); COUNT=N replaces the count.
patch() {
	python3 - "$@" <<'EOF'
import sys
v = bytearray.fromhex(sys.argv[1])
if sys.argv[2].startswith("COUNT="):
    v[0:4] = int(sys.argv[2][6:], 0).to_bytes(4, "big")
else:
    o = 4 + 12 * int(sys.argv[2])
    for val, off, n in ((sys.argv[3], 0, 4), (sys.argv[4], 4, 4), (sys.argv[5], 8, 2)):
        if val != "-":
            v[o + off:o + off + n] = int(val, 0).to_bytes(n, "big")
print(v.hex())
EOF
}
# sf_index INO NAME: the short-form list index of NAME in inode INO.
sf_index() {
	xfs_db -r -c "inode $1" -c "print a.sfattr" "$img" |
		sed -n "s/^a\.sfattr\.list\[\([0-9]*\)\]\.name = \"$2\"$/\1/p"
}
leaf_index() {
	xfs_db -r -c "inode $1" -c "ablock 0" -c print "$img" |
		sed -n "s/^nvlist\[\([0-9]*\)\]\.name = \"$2\"$/\1/p"
}
SFI=$(sf_index "$SF" SGI_ACL_FILE) DDI=$(sf_index "$D" SGI_ACL_DEFAULT) LFI=$(leaf_index "$LF" SGI_ACL_FILE)
[ -n "$SFI" ] && [ -n "$DDI" ] && [ -n "$LFI" ] ||
	{ echo "ACL xattrs not where expected: sf '$SFI' d '$DDI' leaf '$LFI'" >&2; exit 99; }
[ "$(xfs_db -r -c "inode $RM" -c "ablock 1" -c "print hdr.magic" "$img")" = "hdr.magic = 0x5841524d" ] ||
	{ echo "/rmt's ACL is not in a remote value at attr block 1" >&2; exit 99; }

printf '%-14s %-6s %-6s %-7s %-7s %s\n' case xr-n ours-n ours xfs_rep reason >"$T/table"
# run_case NAME FILE ACLNAME XFS_DB-COMMANDS...
run_case() {
	local name=$1 file=$2 acl=$3 rc xn x7 on theirs=- ours why theirs_too sys
	shift 3
	local args=()
	for c in "$@"; do args+=(-c "$c"); done
	cp --sparse=always "$img" "$T/a.img"
	# (A write that did nothing shows below: xfs_repair -n finds nothing.)
	xfs_db -x "${args[@]}" "$T/a.img" >"$T/db.out" 2>&1
	xfs_repair -n "$T/a.img" >"$T/xn.out" 2>&1; xn=$?
	x7=0
	xfs_repair_n72 "$T/a.img" "$T/x7.out" || x7=$?
	# That -n writes nothing: once for each place an ACL can be (the
	# short form, a leaf block, a remote value).
	case $name in sf-perm|leaf-*|rmt-*) image_state "$T/a.img" >"$T/before" ;; *) rm -f "$T/before" ;; esac
	"$REPAIR" -n "$T/a.img" >"$T/on.out" 2>&1; on=$?
	[ -e "$T/before" ] && ! image_state "$T/a.img" | cmp -s - "$T/before" &&
		fail "$name: ours -n wrote to the image"
	[ $xn -ne 0 ] || fail "$name: xfs_repair 6.1 -n does not see the damage (the case is wrong)"
	[ $x7 -ne 0 ] || ! have_xfs72 || fail "$name: xfs_repair 7.2 -n does not see the damage (the case is wrong)"
	[ $on -ne 0 ] || fail "$name: ours -n finds nothing where xfs_repair -n says: $(grep -i acl "$T/xn.out" | head -2 | tr '\n' ' ')"
	grep -q "acl" "$T/on.out" || fail "$name: ours -n names no ACL finding: $(grep -v '^Phase' "$T/on.out" | head -3)"
	# xfs_repair's result: where the case's target is in a block (it
	# drops the whole fork there), and every case in the long run.
	theirs_too=0
	if long_tests || [ "$file" = leaf ] || [ "$file" = rmt ]; then
		theirs_too=1
		cp --sparse=always "$T/a.img" "$T/x.img"
	fi
	"$REPAIR" --json "$T/a.img" >"$T/ours.json" 2>"$T/ours.err"; rc=$?
	[ $rc -eq 0 ] || fail "$name: xfskit-repair exit $rc: $(tail -3 "$T/ours.err")"
	if ! xfs_repair_clean "$T/a.img" "$T/xr.out"; then
		fail "$name: not clean after ours: $(cat "$T/xr.out")"
		printf '%-14s %-6s %-6s %-7s %-7s %s\n' "$name" "$xn" "$on" UNCLEAN - - >>"$T/table"
		return
	fi
	kept "$T/a.img" "$T/ours.kept"
	# Exactly the bad ACL goes: both the trusted name and the system
	# name the kernel shows it under.
	case $acl in
	SGI_ACL_FILE) sys=system.posix_acl_access ;;
	*) sys=system.posix_acl_default ;;
	esac
	grep -v -e "^xattr $file trusted.$acl=" -e "^xattr $file $sys=" "$T/base.kept" >"$T/want"
	comm -23 "$T/want" "$T/ours.kept" >"$T/lost"
	[ -s "$T/lost" ] && fail "$name: ours lost more than the bad ACL: $(head -3 "$T/lost" | cut -c1-100 | tr '\n' ' ')"
	grep -q "^xattr $file trusted.$acl=" "$T/ours.kept" && fail "$name: the bad ACL is still there"
	why=$(python3 -c '
import json, sys
acts = json.load(open(sys.argv[1])).get("actions", [])
d = [a for a in acts if a["action"] == "xattr_dropped" and sys.argv[2] in a.get("message", "")]
print(d[0].get("reason") or "NO-REASON" if d else "NOT-REPORTED")' "$T/ours.json" "$acl" 2>&1)
	case $why in
	NOT-REPORTED|NO-REASON|*Error*) fail "$name: the dropped ACL is not reported with a reason ($why)" ;;
	esac
	ours=$(grep -c '^xattr ' "$T/ours.kept")
	if [ $theirs_too = 1 ]; then
		xfs_repair "$T/x.img" >/dev/null 2>&1
		if xfs_repair -n "$T/x.img" >/dev/null 2>&1; then
			kept "$T/x.img" "$T/theirs.kept"
			theirs=$(grep -c '^xattr ' "$T/theirs.kept")
			comm -13 "$T/ours.kept" "$T/theirs.kept" >"$T/missing"
			[ -s "$T/missing" ] && fail "$name: xfs_repair keeps what ours loses: $(head -3 "$T/missing" | cut -c1-100 | tr '\n' ' ')"
		fi
	fi
	printf '%-14s %-6s %-6s %-7s %-7s %s\n' "$name" "$xn" "$on" "$ours" "$theirs" "$why" >>"$T/table"
}

sfv="a.sfattr.list[$SFI].value"
run_case sf-perm sf SGI_ACL_FILE "inode $SF" "write -d $sfv #$(patch "$sf_acl" 1 - - 0x16)"
run_case sf-tag sf SGI_ACL_FILE "inode $SF" "write -d $sfv #$(patch "$sf_acl" 3 0x40 - -)"
run_case sf-two-owners sf SGI_ACL_FILE "inode $SF" "write -d $sfv #$(patch "$sf_acl" 1 0x01 - -)"
run_case sf-user-twice sf SGI_ACL_FILE "inode $SF" "write -d $sfv #$(patch "$sf_acl" 3 0x02 1000 -)"
run_case sf-no-mask sf SGI_ACL_FILE "inode $SF" "write -d $sfv #$(patch "$sf_acl" 4 0x08 5000 -)"
run_case sf-count sf SGI_ACL_FILE "inode $SF" "write -d $sfv #$(patch "$sf_acl" COUNT=0x10000)"
run_case dir-default d SGI_ACL_DEFAULT "inode $D" "write -d a.sfattr.list[$DDI].value #$(patch "$d_def" 4 0x02 7 -)"
run_case leaf-perm leaf SGI_ACL_FILE "inode $LF" "ablock 0" "write -d nvlist[$LFI].value #$(patch "$leaf_acl" 0 - - 0x100)"
# The remote value's first two entries rewritten, the rest zeroed.
run_case rmt-tag rmt SGI_ACL_FILE "inode $RM" "ablock 1" "write -d data #0000019400000001ffffffff0006000000000040"

# An order xfs_repair accepts (the other entry first) is no finding.
cp --sparse=always "$img" "$T/a.img"
reordered=$(python3 -c '
import sys
v = bytes.fromhex(sys.argv[1]); e = [v[4 + 12 * i:16 + 12 * i] for i in range(6)]
print((v[:4] + e[5] + b"".join(e[:5])).hex())' "$sf_acl")
xfs_db -x -c "inode $SF" -c "write -d $sfv #$reordered" "$T/a.img" >/dev/null 2>&1
if xfs_repair -n "$T/a.img" >"$T/xn.out" 2>&1; then
	"$REPAIR" -n "$T/a.img" >"$T/on.out" 2>&1 ||
		fail "reordered: an ACL xfs_repair accepts (other entry first) is a finding for ours: $(grep -i acl "$T/on.out" | head -2)"
else
	fail "reordered: xfs_repair -n finds the reordered ACL bad (the case is wrong): $(grep -i acl "$T/xn.out" | head -2)"
fi

cat "$T/table"
echo "xattrs in the healthy image: $total"
finish
