# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for the scripted image tests.  Each test sources this,
# works in its own scratch directory, and exits 0 (pass), 1 (fail),
# 77 (skip, with the reason on stderr) or 99 (hard error).

set -u
export TZ=UTC LC_ALL=C
# Debian's tools first (scripts/deps installs them, python3-jsonschema
# included): a python3 shim earlier in PATH (pyenv) costs half a CPU
# second per call and may lack the modules the tests import.
export PATH="/usr/sbin:/usr/bin:/sbin:/bin:$PATH"
# A sanitizer report must fail the test, never pass for an expected code.
export ASAN_OPTIONS="exitcode=99:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:exitcode=99:print_stacktrace=1"

: "${XK_BUILDDIR:?run through make check}"
REPAIR="$XK_BUILDDIR/repair/xfskit-repair"
# The tests read our own report beside xfs_repair's lines (--report);
# a test of the default output alone unsets it for its run.
export XFSKIT_REPAIR_REPORT=1
MKFS="$XK_BUILDDIR/mkfs/xfskit-mkfs"
DB="$XK_BUILDDIR/db/xfskit-db"

T=$(mktemp -d "${TMPDIR:-/tmp}/xk-test.XXXXXX")
MNT=""
LOOP_MOUNTED=0
FAILS=0

cleanup() {
	# CPU seconds of this test and everything it waited for, so that
	# the suite's cost can be read from the logs whatever the load.
	# (times must run in this shell, not in a pipeline's subshell.)
	times >"$T/.times"
	awk 'function s(t) { split(t, a, "m"); return a[1] * 60 + a[2] }
		NR == 2 { printf "cpu: %.1f s (%.1f user, %.1f sys)\n", s($1) + s($2), s($1), s($2) }' "$T/.times" >&2
	if [ "$LOOP_MOUNTED" = 1 ] && [ -n "$MNT" ]; then
		umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 99' INT TERM

fail() {
	echo "FAIL: $*" >&2
	FAILS=$((FAILS + 1))
}

pass() {
	echo "ok: $*"
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

finish() {
	if [ "$FAILS" -ne 0 ]; then
		echo "$FAILS check(s) failed" >&2
		exit 1
	fi
	exit 0
}

# long_tests: true when XK_TEST_LONG=1.  Sweeps of many cases of one kind
# run a fixed sample by default (the suite must stay fast) and in full
# under it; comparisons whose outcome is already decided are skipped by
# default and made under it, for the full table.
long_tests() {
	[ "${XK_TEST_LONG:-0}" = 1 ]
}

# leak_check_sampled I: LeakSanitizer's check at exit costs 0.05 CPU s
# per process whatever the process did, more than many of our runs
# themselves; loops that run our tools once per case of a corpus call
# this with the case's number, and check leaks on one case in three
# (every case under long_tests).  Every other run is checked.
leak_check_sampled() {
	if long_tests || [ $(($1 % 3)) -eq 0 ]; then
		ASAN_OPTIONS="exitcode=99:detect_leaks=1"
	else
		ASAN_OPTIONS="exitcode=99:detect_leaks=0"
	fi
	export ASAN_OPTIONS
}

# compare_blocks ORIG FILE: "size-ok same zero other" (4 KiB blocks of FILE
# equal to ORIG's, zero where ORIG's are not, neither), or "missing".
compare_blocks() {
	python3 - "$1" "$2" <<'PY'
import os, sys
if not os.path.exists(sys.argv[2]):
    print("missing"); sys.exit(0)
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
same = zero = other = 0
z = bytes(4096)
for off in range(0, max(len(a), len(b)), 4096):
    x, y = a[off:off + 4096], b[off:off + 4096]
    if x == y:
        same += 1
    elif y == z[:len(y)] and len(x) == len(y):
        zero += 1
    else:
        other += 1
print("yes" if len(a) == len(b) else "no", same, zero, other)
PY
}

# leak_check_next: leak_check_sampled for loops without a case number of
# their own (each call is the next case).
LEAK_CASE=0
leak_check_next() {
	LEAK_CASE=$((LEAK_CASE + 1))
	leak_check_sampled "$LEAK_CASE"
}

need_xfsprogs() {
	for p in mkfs.xfs xfs_db xfs_repair; do
		command -v "$p" >/dev/null 2>&1 ||
			skip "$p is not installed (scripts/deps installs xfsprogs)"
	done
}

# repair_three NAME D: D/damaged.img copied to D/xr61.img, D/xr72.img
# and D/ours.img, repaired by xfs_repair 6.1, 7.2 (each run again if it
# fails once; with a tree) and xfskit-repair --json (D/ours.json); fails
# and returns 1 unless ours exits 0 and xfs_repair -n then finds ours
# clean.
repair_three() {
	local name=$1 D=$2 st who
	for who in xr61 xr72 ours; do
		cp --sparse=always "$D/damaged.img" "$D/$who.img" || return 1
	done
	xfs_repair "$D/xr61.img" >"$D/xr61.out" 2>&1 || xfs_repair "$D/xr61.img" >>"$D/xr61.out" 2>&1 ||
		echo "note: [$name] xfs_repair 6.1 failed twice: $(tail -3 "$D/xr61.out")"
	if have_xfs72; then
		xfs72 xfs_repair "$D/xr72.img" >"$D/xr72.out" 2>&1 || xfs72 xfs_repair "$D/xr72.img" >>"$D/xr72.out" 2>&1 ||
			echo "note: [$name] xfs_repair 7.2 failed twice: $(tail -3 "$D/xr72.out")"
	fi
	"$REPAIR" --json "$D/ours.img" >"$D/ours.json" 2>"$D/ours.err"
	st=$?
	[ $st = 0 ] || { fail "[$name] xfskit-repair: exit $st: $(tail -5 "$D/ours.err")"; return 1; }
	xfs_repair_clean "$D/ours.img" "$D/clean" || { fail "[$name] xfs_repair -n after ours: $(cat "$D/clean")"; return 1; }
}

# The second oracle: xfsprogs from Debian's unstable suite (7.2 today),
# run through scripts/xfsprogs-sid.  Tests that need it call need_xfs72,
# which skips with the reason where the tree could not be made.
XFS72="${XK_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/scripts/xfsprogs-sid"
need_xfs72() {
	"$XFS72" dir >/dev/null 2>&1 ||
		skip "no xfsprogs tree from Debian unstable (scripts/xfsprogs-sid setup, as root, makes it)"
	echo "oracle: $("$XFS72" xfs_repair -V) from Debian unstable"
}
xfs72() {
	"$XFS72" "$@"
}
# have_xfs72: whether 7.2 is there, for tests whose 6.1 comparisons also
# run against 7.2: where it is missing, only those extra checks are left
# out, with a note.  The first call prints which versions are used.
have_xfs72() {
	if [ -z "${XK_HAVE72:-}" ]; then
		if "$XFS72" dir >/dev/null 2>&1; then
			XK_HAVE72=1
			echo "oracles: $(xfs_repair -V 2>&1) (host) and $("$XFS72" xfs_repair -V 2>&1) (Debian unstable)"
		else
			XK_HAVE72=0
			echo "oracle: $(xfs_repair -V 2>&1) (host)"
			echo "note: no xfsprogs 7.2 tree (scripts/xfsprogs-sid setup, as root, makes it): its checks are skipped" >&2
		fi
	fi
	[ "$XK_HAVE72" = 1 ]
}
# xfs_repair_clean IMG OUT [OPTS]: xfs_repair -n OPTS of 6.1 and, where
# it is there, of 7.2 on IMG; 0 when every version finds IMG clean.
# OUT gets, for each version that does not, its name and the last lines
# of what it said.
xfs_repair_clean() {
	local img=$1 out=$2 rc=0
	shift 2
	: >"$out"
	# shellcheck disable=SC2086
	if ! xfs_repair -n "$@" "$img" >"$out.61" 2>&1; then
		{ echo "xfs_repair 6.1 -n:"; grep -v '^Phase\|^  *-' "$out.61" | tail -5; } >>"$out"
		rc=1
	fi
	if have_xfs72 >/dev/null 2>&1 &&
	   ! xfs72 xfs_repair -n "$@" "$img" >"$out.72" 2>&1; then
		{ echo "xfs_repair 7.2 -n:"; grep -v '^Phase\|^  *-' "$out.72" | tail -5; } >>"$out"
		rc=1
	fi
	rm -f "$out.61" "$out.72"
	return $rc
}
# xfs_repair_n72 IMG OUT: xfs_repair 7.2 -n on IMG, its output in OUT;
# exit status 0 (and nothing run) where 7.2 is missing.
xfs_repair_n72() {
	have_xfs72 >/dev/null 2>&1 || { : >"$2"; return 0; }
	"$XFS72" xfs_repair -n "$1" >"$2" 2>&1
}

# Mount an image read-write at $MNT; skip the test where loop mounting
# is not permitted.  Only images that should be valid come here.
loop_mount() {
	MNT="$T/mnt"
	mkdir -p "$MNT"
	if [ "$(id -u)" -ne 0 ]; then
		skip "loop mounting needs root"
	fi
	if ! mount -o loop "$1" "$MNT" 2>"$T/mount.err"; then
		if grep -qiE 'permission|not permitted|no such device|unknown filesystem' "$T/mount.err"; then
			skip "loop mount not permitted here: $(cat "$T/mount.err")"
		fi
		# LOOP_MOUNT_QUIET=1: the caller judges a refusal itself.
		[ "${LOOP_MOUNT_QUIET:-0}" = 1 ] ||
			fail "mount of $1 failed: $(cat "$T/mount.err")"
		return 1
	fi
	LOOP_MOUNTED=1
	# Which loop device: kernel log lines name it ("XFS (loop3): ...");
	# and which filesystem: its mount and unmount lines name its UUID.
	LOOP_DEV=$(findmnt -n -o SOURCE --target "$MNT")
	LOOP_DEV=${LOOP_DEV##*/}
	LOOP_UUID=$(blkid -p -o value -s UUID "$1" 2>/dev/null)
}

# kmsg_mark: the time stamp of the kernel log's last line, for
# kmsg_since.  (Not a line count: a full ring buffer keeps its count
# while its lines move on, which would hide every new message.)
kmsg_mark() {
	dmesg | tail -1 | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p'
}

# kmsg_since MARK: the kernel log's lines stamped after MARK.
kmsg_since() {
	dmesg | awk -v t="${1:-0}" '{ s = $0; sub(/^\[ */, "", s); if (s + 0 > t + 0) print }'
}

# xfs_kernel_errors MARK: XFS errors the kernel logged after kmsg_mark
# MARK about the last device loop_mount used, from its last mount of
# this filesystem to its unmount: tests run in parallel, loop devices
# are reused as soon as they are let go, and some tests shut their own
# filesystems down on purpose; what that device said before "Mounting
# V5 Filesystem UUID", or after "Unmounting Filesystem UUID", was
# another mount's (one seen under load: a shutdown of the next mount of
# the device, logged before the first test read the log).
xfs_kernel_errors() {
	kmsg_since "$1" | grep -F "XFS (${LOOP_DEV:-none})" |
		awk -v u="${LOOP_UUID:-}" '
		/Mounting V5 Filesystem/ {
			on = (u == "" || index($0, u) > 0)
			if (on)
				n = 0
		}
		on { l[n++] = $0 }
		/Unmounting Filesystem/ && u != "" && index($0, u) { on = 0 }
		END { for (i = 0; i < n; i++) print l[i] }' |
		grep -iE 'corrupt|error|fail|shut'
}

loop_umount() {
	umount "$MNT" && LOOP_MOUNTED=0
}

# refused_unwritten NAME RC PATTERN IMG CMD [ARGS...]: CMD ARGS exits RC
# with a message on stderr matching the extended regex PATTERN (with
# PATTERN empty, any message at all), and writes nothing: no write call to
# any file but stdout and stderr (strace), IMG's content unchanged (not
# compared with MOUNTED set: the kernel may write).  Its output is left
# in $T/k.out and $T/k.err.
refused_unwritten() {
	local name=$1 want=$2 pat=$3 img=$4 rc bad
	shift 4
	image_state "$img" >"$T/state.before"
	# LeakSanitizer cannot run under ptrace.
	ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
	strace -f -qq -e trace=pwrite64,pwritev,pwritev2,write \
		-o "$T/strace" "$@" >"$T/k.out" 2>"$T/k.err"
	rc=$?
	bad=$(grep -E 'pwrite|^[0-9]+ +write\(([3-9]|[0-9][0-9])' "$T/strace" | head -3)
	image_state "$img" >"$T/state.after"
	if [ "$rc" != "$want" ]; then
		fail "$name: exit $rc, expected $want: $(cat "$T/k.err")"
	elif [ -n "$bad" ]; then
		fail "$name: write calls: $bad"
	elif [ -z "${MOUNTED:-}" ] && ! cmp -s "$T/state.before" "$T/state.after"; then
		fail "$name: the image changed"
	elif [ -z "$pat" ] && [ ! -s "$T/k.err" ] && [ ! -s "$T/k.out" ]; then
		fail "$name: no message"
	elif [ -n "$pat" ] && ! grep -qE "$pat" "$T/k.err"; then
		fail "$name: the message does not say /$pat/: $(cat "$T/k.err")"
	else
		pass "$name: exit $rc, nothing written: $(cat "$T/k.err" "$T/k.out" | grep -m1 .)"
	fi
}

# crash_completed NAME N IMG CMD [ARGS...]: CMD ARGS, killed before its
# Nth write (LIBXFS_DEBUG_WRITE_CRASH=ddev=N, for CMD alone: xfs_repair
# obeys it too), must leave IMG's primary marked NEEDSREPAIR, which
# xfs_repair 7.2 then completes to a filesystem its -n calls clean.
crash_completed() {
	local name=$1 n=$2 img=$3 rc
	shift 3
	LIBXFS_DEBUG_WRITE_CRASH=ddev=$n "$@" >"$T/k.out" 2>&1
	rc=$?
	if [ "$rc" -ne 137 ]; then
		fail "$name: exit $rc, expected the kill (137): $(tail -2 "$T/k.out")"
	elif ! xfs_db -r -c version "$img" 2>/dev/null | grep -q NEEDSREPAIR; then
		fail "$name: the primary is not marked NEEDSREPAIR"
	elif ! xfs72 xfs_repair "$img" >"$T/r.out" 2>&1 ||
	     ! xfs72 xfs_repair -n "$img" >"$T/r.out" 2>&1; then
		fail "$name: xfs_repair 7.2 leaves it unclean: $(grep -v '^Phase\|^  *-' "$T/r.out" | head -3)"
	else
		pass "$name: NEEDSREPAIR set, xfs_repair 7.2 makes it clean"
	fi
}

# dig_holes IMG: turn IMG's zero-filled ranges into holes (the bytes read
# the same).  mkfs.xfs writes the whole log and the kernel writes zeroed
# blocks, so a populated 300 MiB image holds some 60 MiB of zeros, which
# every later copy and comparison of a corpus would read again.
dig_holes() {
	fallocate --dig-holes "$1" 2>/dev/null || true
}

# A fresh sparse image made by mkfs.xfs with the given options.
mkfs_xfs_image() {
	img=$1 size=$2
	shift 2
	rm -f "$img"
	truncate -s "$size" "$img" || return 1
	mkfs.xfs -q -f "$@" "$img" >"$T/mkfs.out" 2>&1
}

# same_image A B: true when files A and B hold the same bytes.  Only
# the regions where either has data are read (a hole reads as zeros):
# cmp reads every hole of a sparse image, seconds of system time for a
# 1 GiB image that holds 30 MiB.  Small files are left to cmp.
same_image() {
	local sa sb
	sa=$(stat -c %s "$1" 2>/dev/null) && sb=$(stat -c %s "$2" 2>/dev/null) || return 2
	[ "$sa" = "$sb" ] || return 1
	[ "$sa" -ge 16777216 ] || { cmp -s "$1" "$2"; return; }
	python3 - "$1" "$2" <<'PY'
import os, sys
def regions(fd, size):
    out, off = [], 0
    while off < size:
        try:
            data = os.lseek(fd, off, os.SEEK_DATA)
        except OSError:
            break
        hole = os.lseek(fd, data, os.SEEK_HOLE)
        out.append((data, hole))
        off = hole
    return out
fa, fb = (os.open(p, os.O_RDONLY) for p in sys.argv[1:3])
size = os.fstat(fa).st_size
if os.fstat(fb).st_size != size:
    sys.exit(1)
spans = sorted(regions(fa, size) + regions(fb, size))
merged = []
for s, e in spans:
    if merged and s <= merged[-1][1]:
        merged[-1][1] = max(merged[-1][1], e)
    else:
        merged.append([s, e])
for s, e in merged:
    while s < e:
        n = min(1 << 22, e - s)
        if os.pread(fa, n, s) != os.pread(fb, n, s):
            sys.exit(1)
        s += n
PY
}

# image_state FILE...: a fingerprint that changes when anything writes to
# the files: size, modification time (ns), and a SHA-256 of the content
# (each non-zero 64 KiB piece with its offset).  Only data regions are
# read: a sparse 1 GiB image costs what its data costs, not what reading
# 1 GiB of zeros costs.  Zero pieces are left out because what counts as
# data is not stable: ext4 reports a preallocated range that a reader
# brought into the page cache as data.  Use it to prove a tool wrote
# nothing.
image_state() {
	python3 - "$@" <<'PY'
import hashlib, os, sys
PIECE = 1 << 16
ZERO = bytes(PIECE)
for path in sys.argv[1:]:
    st = os.stat(path)
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        fd, off = f.fileno(), 0
        while off < st.st_size:
            try:
                data = os.lseek(fd, off, os.SEEK_DATA)
            except OSError:
                break
            hole = os.lseek(fd, data, os.SEEK_HOLE)
            pos = data - data % PIECE
            while pos < hole:
                piece = os.pread(fd, PIECE, pos)
                if not piece:
                    break
                if piece != ZERO[:len(piece)]:
                    h.update(pos.to_bytes(8, 'little') + piece)
                pos += len(piece)
            off = max(hole, pos)
    print(path, st.st_size, st.st_mtime_ns, h.hexdigest())
PY
}

# Read a field of an image with xfs_db; prints the value.
db_get() {
	img=$1 cmd=$2 field=$3
	xfs_db -r -c "$cmd" -c "print $field" "$img" 2>/dev/null |
		sed -n "s/^$field = //p"
}

# repair_own [FILE...]: xfskit-repair's output without the xfs_repair
# phase lines and messages every run prints (repair/report_xfs.c) and
# without the summary line that ends it (repair/summary.c), for tests
# that look at our own lines alone.
repair_own() {
	grep -v -e '^Phase [1-7] - ' -e '^        - ' -e '^done$' \
		-e '^No modify flag set, skipping ' \
		-e '^would have reset inode [0-9]* nlinks from ' \
		-e '^resetting inode [0-9]* nlinks from ' \
		-e '^would fix ftype mismatch (' -e '^fixing ftype mismatch (' \
		-e '^$' -e '^bad CRC for inode [0-9]*' \
		-e '^bad \(magic\|version\) number 0x[0-9a-f]* on inode ' \
		-e '^bad next_unlinked 0x' -e '^UUID mismatch on inode ' \
		-e '^inode identifier [0-9]* mismatch on inode ' \
		-e '^bad (negative) size ' -e '^bad inode format in inode ' \
		-e '^\(would have cleared\|cleared\) inode [0-9]*$' \
		-e '^\(would clear\|cleared\) \(root\|realtime [a-z]*\) inode ' \
		-e '^root inode \(would be \)\{0,1\}lost$' \
		-e '^\(would reinitialize\|reinitializing\) \(root\|realtime\) ' \
		-e '^entry ".*" in shortform directory [0-9]* references ' \
		-e '^\(would have junked\|junking\) entry ".*" in directory inode ' \
		-e '^bad primary superblock - ' -e '^attempting to find secondary' \
		-e 'found candidate secondary superblock\.\.\.$' \
		-e '^verified secondary superblock\.\.\.$' \
		-e '^\(would write\|writing\) modified primary superblock$' \
		-e '^sb [a-z ]* inode value [0-9]* ' \
		-e '^\(would reset\|resetting\) superblock [a-z ]* inode pointer' \
		-e '^Note - stripe unit (' -e '^Please reset with mount -o sunit' \
		-e '^Sorry, could not find valid secondary' -e '^Exiting now\.$' \
		-e '^sb_\(icount\|ifree\|fdblocks\) [0-9]*, counted [0-9]*$' \
		-e '^bad \(magic\|version\|sequence\) # ' -e '^bad length #\{0,1\} *-\{0,1\}[0-9]* for ag[fi] ' \
		-e '^fl\(first\|last\) -\{0,1\}[0-9]* in agf [0-9]* too large' \
		-e '^bad uuid [0-9a-f-]* for ag[fi] ' -e '^\(would \)\{0,1\}reset bad ag[fi] for ag ' \
		-e '^bad agbno [0-9]* \(for [a-z]* root\|in agfl\), agno ' \
		-e '^ag[fi] has bad CRC for ag ' -e '^root inode chunk not found$' \
		-e '^\(clean\|clean after [0-9]* changes\{0,1\}\|repaired\|corrupt\|not repaired\|not checked in full\)[:;] .*\(blocks used\|btrees are damaged)\)$' \
		"$@"
}
