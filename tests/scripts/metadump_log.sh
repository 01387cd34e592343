#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-metadump's log, clean and dirty, and damaged images:
#  (c) a clean log (the kernel's, after a workload and a clean unmount)
#      is emptied as xfs_metadump 6.1 and 7.2 empty it unless the dump
#      keeps everything (-o -a): for each of "", -o, -a, -o -a the
#      restored log equals theirs byte for byte (and holds no name);
#  (d) a log the kernel left dirty (xfs_io shutdown -f after a workload)
#      keeps its records from tail to head byte for byte; with -o -a the
#      whole log is carried (as xfs_metadump carries it always), else
#      the stale blocks outside the live range keep only their cycle
#      numbers: no name of the earlier checkpoints is left in them (the
#      original's hold some).  The dump says dirty (xfs_mdrestore -i),
#      xfs_repair -n gives the original's verdict, xfs_logprint finds the
#      same tail and head, an obfuscating dump warns that replay brings
#      names back, and the kernel replays the scrubbed log to the
#      original's tree; v1 through xfs_mdrestore and v2 through
#      xfskit-mdrestore restore the same image;
#  formats: on non-default geometries (no sparse inodes nor finobt;
#      1 KiB blocks with 16 KiB directory blocks; 64 KiB blocks; a log
#      stripe unit of 32 KiB and a log length not a multiple of 256 KiB)
#      a -o -a dump restores byte for byte as xfs_metadump's, so does a
#      -o dump's log, and an obfuscated one restores to an image
#      xfs_repair -n passes with no planted name left in the dump;
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
loop_umount
cp --sparse=always "$IMG" "$T/clean.img"
loop_mount "$IMG" || finish
touch "$MNT/d1/d2/one_more"
sync
# Changes after the sync live only in the log when the fs shuts down.
for i in $(seq 1 50); do mkdir "$MNT/d1/d2/after_sync_$i"; done
rm -f "$MNT"/d1/logged_file_1?
xfs_io -x -c 'shutdown -f' "$MNT" || fail "shutdown -f failed"
loop_umount

# log_byte IMG: the log's byte offset (logstart is AG-segmented).
log_byte() {
	xfs_db -r -c "convert fsb $(db_get "$1" 'sb 0' logstart) byte" "$1" |
		sed -n 's/.*(\([0-9]*\)).*/\1/p'
}
logoff=$(log_byte "$IMG")
loglen=$(( $(db_get "$IMG" 'sb 0' logblocks) * $(db_get "$IMG" 'sb 0' blocksize) ))
same_log() {
	cmp -s -i "$logoff:$logoff" -n "$loglen" "$1" "$2"
}

# (c) The clean log against xfs_metadump 6.1 and 7.2.
for flags in "" "-o" "-a" "-o -a"; do
	label="clean log, metadump ${flags:-(default)}"
	rm -f "$T"/c?.img
	"$MD" $flags "$T/clean.img" "$T/c1.md" 2>"$T/md.err" &&
		xfs_mdrestore "$T/c1.md" "$T/c1.img" ||
		{ fail "$label: $(cat "$T/md.err")"; continue; }
	xfs_metadump $flags "$T/clean.img" "$T/c2.md" && xfs_mdrestore "$T/c2.md" "$T/c2.img"
	# v2: ours through xfskit-mdrestore, 7.2's through its own.
	"$MD" $flags -v 2 "$T/clean.img" "$T/c4.md" && "$MR" "$T/c4.md" "$T/c4.img" >/dev/null
	if have_xfs72; then
		xfs72 xfs_db -i -c "metadump $flags -v 2 $T/c3.md" "$T/clean.img" >/dev/null 2>&1 &&
			xfs72 xfs_mdrestore "$T/c3.md" "$T/c3.img"
	else
		cp "$T/c2.img" "$T/c3.img"
	fi
	if same_log "$T/c1.img" "$T/c2.img" && same_log "$T/c4.img" "$T/c3.img"; then
		pass "$label: restored log = xfs_metadump 6.1's (v1) and 7.2's (v2)"
	else
		fail "$label: restored log differs from xfs_metadump's ($(same_log "$T/c1.img" "$T/c2.img" && echo "v2, 7.2's" || echo "v1, 6.1's"))"
	fi
	[ "$flags" = "-o -a" ] || ! grep -qa logged_file_ \
		< <(dd if="$T/c1.img" bs=1M iflag=skip_bytes,count_bytes skip="$logoff" count="$loglen" 2>/dev/null) ||
		fail "$label: the emptied log still holds names"
done
rm -f "$T"/c?.img "$T"/c?.md

verdict() {
	xfs_repair -n "$1" >"$T/rep.out" 2>&1
	echo "exit $?"
	grep -iE 'log|would|bad|corrupt|error' "$T/rep.out" |
		grep -v 'Cannot get host' | sort
}
orig_verdict=$(verdict "$IMG")
echo "$orig_verdict" | grep -qi 'log' ||
	fail "the workload did not leave a dirty log: $orig_verdict"
ends() {
	xfs_logprint -t "$1" 2>/dev/null | sed -n 's/.*log tail: \([0-9]*\) head: \([0-9]*\).*/\1 \2/p'
}
read -r tail head < <(ends "$IMG")
logbb=$((loglen / 512))
# log_split IMG OUT: the live blocks (tail to head) in OUT.live, the
# stale ones in OUT.stale, and their words past the cycle in OUT.rest.
log_split() {
	python3 - "$1" "$logoff" "$logbb" "$tail" "$head" "$2" <<'PY'
import sys
img, off, n, tail, head, out = sys.argv[1], *map(int, sys.argv[2:6]), sys.argv[6]
with open(img, 'rb') as f:
    f.seek(off)
    log = f.read(n * 512)
live, stale, rest = [], [], []
for b in range(n):
    blk = log[b * 512:(b + 1) * 512]
    inside = (tail <= b < head) if tail <= head else (b >= tail or b < head)
    (live if inside else stale).append(blk)
    if not inside:
        rest.append(blk[8:] if blk[:4] == bytes.fromhex('feedbabe') else blk[4:])
for name, parts in (('live', live), ('stale', stale), ('rest', rest)):
    open(out + '.' + name, 'wb').write(b''.join(parts))
PY
}
log_split "$IMG" "$T/orig"
stale_names=$(grep -ac 'logged_file_' "$T/orig.stale")
[ "$stale_names" -gt 0 ] || fail "the original's stale log blocks hold no names: the scrub test tests nothing"

for flags in "" "-o" "-o -a"; do
	label="dirty log, metadump ${flags:-(obfuscating)}"
	"$MD" $flags "$IMG" "$T/d.md" 2>"$T/md.err" ||
		fail "$label of the dirty image failed: $(cat "$T/md.err")"
	xfs_mdrestore -i "$T/d.md" | grep -q "dirty log" ||
		fail "$label: header does not say dirty: $(xfs_mdrestore -i "$T/d.md")"
	if [ -z "$flags" ] && ! grep -q "log is dirty.*replaying them" "$T/md.err"; then
		fail "$label: no warning that replay brings names back: $(cat "$T/md.err")"
	elif [ -n "$flags" ] && grep -q "log is dirty" "$T/md.err"; then
		fail "$label: warns about names though nothing is obfuscated"
	fi
	rm -f "$T/r.img"
	xfs_mdrestore "$T/d.md" "$T/r.img" || fail "xfs_mdrestore ($flags) failed"
	if [ "$flags" = "-o -a" ]; then
		same_log "$IMG" "$T/r.img" &&
			pass "$label: log carried byte for byte ($loglen bytes), as xfs_metadump does" ||
			fail "$label: log blocks differ after restore"
	else
		log_split "$T/r.img" "$T/rest"
		n=$(grep -ac 'logged_file_' "$T/rest.stale")
		if cmp -s "$T/orig.live" "$T/rest.live" &&
		   [ "$(tr -d '\0' <"$T/rest.rest" | wc -c)" -eq 0 ] && [ "$n" -eq 0 ]; then
			pass "$label: blocks $tail..$head carried byte for byte, the other $(($(stat -c %s "$T/rest.stale") / 512)) keep only their cycle ($stale_names name(s) there gone)"
		else
			fail "$label: live blocks $(cmp -s "$T/orig.live" "$T/rest.live" && echo same || echo DIFFER), $n name(s) left in stale blocks"
		fi
	fi
	[ "$(ends "$T/r.img")" = "$tail $head" ] ||
		fail "$label: xfs_logprint finds tail/head $(ends "$T/r.img"), not $tail $head"
	[ "$(verdict "$T/r.img")" = "$orig_verdict" ] &&
		pass "$label: xfs_repair -n verdict as the original's ($(echo "$orig_verdict" | head -1))" ||
		fail "$label: verdict differs: $(verdict "$T/r.img" | head -3)"
	[ "$flags" = -o ] && cp --sparse=always "$T/r.img" "$T/r_o.img"
done
mv "$T/r_o.img" "$T/r.img"

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
	pass "kernel replay of the restored log (-o, stale blocks scrubbed) gives the original's tree ($(wc -l <"$T/tree_orig") paths)"
else
	fail "replayed trees differ: $(diff "$T/tree_orig" "$T/tree_rest" | head -3)"
fi
grep -q after_sync_50 "$T/tree_rest" ||
	fail "the logged-only directories did not come back"
rm -f "$T"/*.md "$T/r.img" "$T/r2.img" "$T/orig_copy.img"

# A dirty log that went round: with a 256 KiB log stripe unit each fsync
# writes a 256 KiB record, and 300 of them wrap the 64 MiB log, so the
# stale blocks after the head are the previous cycle's (the ones the
# head search tells apart).  Scrubbed (-o), the kernel still replays it
# to the original's tree.
W="$T/wrap.img"
if mkfs_xfs_image "$W" 320m -l su=256k && loop_mount "$W"; then
	mkdir "$MNT/wd"
	touch "$MNT"/wd/wrapped_name_{1..100}
	args=()
	for i in $(seq 1 300); do args+=(-c "pwrite $((i * 4096)) 4096" -c fsync); done
	xfs_io -f "${args[@]}" "$MNT/wd/fsync_file" >/dev/null
	touch "$MNT"/wd/logonly_{1..20}
	xfs_io -x -c 'shutdown -f' "$MNT"
	loop_umount
	cycle=$("$DB" -r -c logprint "$W" 2>/dev/null | sed -n '1s/.* cycle: \([0-9]*\).*/\1/p')
	read -r tail head < <(ends "$W")
	logoff=$(log_byte "$W")
	log_split "$W" "$T/worig"
	"$MD" -o "$W" "$T/w.md" && xfs_mdrestore "$T/w.md" "$T/wr.img"
	log_split "$T/wr.img" "$T/wrest"
	if [ "${cycle:-0}" -ge 2 ] && cmp -s "$T/worig.live" "$T/wrest.live" &&
	   [ "$(tr -d '\0' <"$T/wrest.rest" | wc -c)" -eq 0 ] &&
	   [ "$(ends "$T/wr.img")" = "$tail $head" ]; then
		pass "wrapped dirty log (cycle $cycle, tail $tail, head $head): live blocks kept, the stale ones scrubbed, same tail and head"
	else
		fail "wrapped dirty log: cycle '$cycle', tail/head $tail $head vs $(ends "$T/wr.img"), live $(cmp -s "$T/worig.live" "$T/wrest.live" && echo same || echo DIFFER)"
	fi
	cp --sparse=always "$W" "$T/w_copy.img"
	tree "$T/w_copy.img" >"$T/tree_orig"
	tree "$T/wr.img" >"$T/tree_rest"
	if grep -q logonly_20 "$T/tree_orig" && same_image "$T/tree_orig" "$T/tree_rest"; then
		pass "wrapped dirty log: the kernel replays the scrubbed log to the original's tree"
	else
		fail "wrapped dirty log: replayed trees differ: $(diff "$T/tree_orig" "$T/tree_rest" | head -3)"
	fi
	rm -f "$W" "$T/wr.img" "$T/w_copy.img" "$T/w.md" "$T"/worig.* "$T"/wrest.*
else
	fail "wrapped log image: $(cat "$T/mkfs.out")"
fi

# Other geometries, with a small workload of every directory format.
for opts in "-i sparse=0 -m finobt=0 -l su=32k" \
    "-b size=1024 -n size=16384 -l size=65537b" "-b size=65536"; do
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
	# The emptied clean log of a -o dump, as xfs_metadump's.
	"$MD" -o "$F" "$T/f1.md" && xfs_metadump -o "$F" "$T/f2.md" ||
		fail "$opts: metadump -o failed"
	rm -f "$T/f1.img" "$T/f2.img"
	xfs_mdrestore "$T/f1.md" "$T/f1.img"
	xfs_mdrestore "$T/f2.md" "$T/f2.img"
	o=$(log_byte "$F")
	n=$(( $(db_get "$F" 'sb 0' logblocks) * $(db_get "$F" 'sb 0' blocksize) ))
	cmp -s -i "$o:$o" -n "$n" "$T/f1.img" "$T/f2.img" &&
		pass "$opts: -o: the emptied log ($((n / 512)) blocks, log stripe unit $(db_get "$F" 'sb 0' logsunit)) = xfs_metadump's" ||
		fail "$opts: -o: the emptied log differs from xfs_metadump's"
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
