#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every change xfskit-repair makes is reported, and the problem count is
# one.  On damaged copies of a kernel-populated image (recipes from the
# repair corpus, and some that change many files at once):
#  - the changes are found by comparing the image before and after the
#    repair, byte for byte: every inode whose bytes changed (its CRC and
#    LSN aside) must be named by an action (its "ino", or "directory N"
#    for an entry dropped from it); every AG whose AGF or AGI changed
#    needs an "ag_rebuilt" action, every superblock that changed an
#    "sb_written" one.  An unreported change fails the test.
#  - by the tree, mounted once xfs_repair -n calls the result clean: a
#    file gone needs "inode_cleared" with its inode and its path (as
#    recorded before the damage; "?" may stand for a name not known), or
#    "entry_removed" when the damage itself freed it; a file now in
#    /lost+found needs "moved_to_lost_found" naming it there; a name
#    gone from a directory still there must be the path of an action;
#  - a change that loses something (inode_cleared, attr_fork_dropped)
#    names the finding that decided it: a "reason" the text line ends
#    with ("; reason: ...");
#  - text and JSON list the same changes (kinds cut in text after 20
#    lines say how many more), the problem count of -n and of repair
#    (text and JSON) is the same, and the JSON matches the schema.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/populate.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating and mounting images needs root (loop mount)"
DOC="$XK_SRCDIR/doc"
have_schema=1
python3 -c 'import jsonschema' 2>/dev/null || have_schema=0

# tree MNT: one line per path: inode, type, size, sha256 (files), path.
tree() {
	python3 - "$1" <<'PY'
import hashlib, os, stat, sys
sys.stdout.reconfigure(errors="surrogateescape")
top = sys.argv[1]
print("%d\t%o\t0\t-\t/" % (os.lstat(top).st_ino, stat.S_IFDIR))
for d, dirs, files in os.walk(top):
    for n in dirs + files:
        p = os.path.join(d, n)
        st = os.lstat(p)
        h = "-"
        if stat.S_ISREG(st.st_mode) and st.st_size < (64 << 20):
            h = hashlib.sha256(open(p, "rb").read()).hexdigest()
        # One line per path: a damaged name may hold a tab or newline.
        rel = os.path.relpath(p, top).replace("\\", "\\\\")
        rel = rel.replace("\t", "\\t").replace("\n", "\\n")
        print("%d\t%o\t%d\t%s\t/%s" % (st.st_ino, stat.S_IFMT(st.st_mode),
              st.st_size, h, rel))
PY
}

img=$T/base.img
truncate -s 300m "$img"
mkfs.xfs -q -f -m rmapbt=1 "$img" || fail "mkfs.xfs failed"
loop_mount "$img" || { fail "cannot mount the fresh image"; finish; }
populate_all_formats "$MNT" || fail "populate"
# Many changes of one kind: 30 files with a second name in links2 (a
# link count each when links2 goes), 25 files only orphans can keep.
mkdir "$MNT/many" "$MNT/links2" "$MNT/orph"
for i in $(seq 30); do
	echo "many $i" >"$MNT/many/f$i"
	ln "$MNT/many/f$i" "$MNT/links2/l$i"
done
for i in $(seq 25); do echo "orphan $i" >"$MNT/orph/o$i"; done
declare -A INO
for p in sf block small extents links2 orph block/file_7; do
	INO[$p]=$(stat -c %i "$MNT/$p")
done
tree "$MNT" >"$T/tree.base"
loop_umount
xfs_repair -n "$img" >/dev/null 2>&1 || fail "the base image is not clean"
geo=""
for f in blocksize agblocks agcount sectsize inodesize agblklog inopblog; do
	geo="$geo $(db_get "$img" "sb 0" $f)"
done

CASES=(
	"naextents-ones|inode ${INO[block/file_7]};fuzz -c core.naextents ones"
	"inode-nlink|inode ${INO[small]};write -d core.nlinkv2 7"
	"sfdir-free|inode ${INO[sf]};write -d core.mode 0"
	"blockdir-inumber|inode ${INO[block]};dblock 0;write -d bu[5].inumber 4000000"
	"links2-free|inode ${INO[links2]};write -d core.mode 0"
	"orph-free|inode ${INO[orph]};write -d core.mode 0"
	"extent-range|inode ${INO[extents]};write -d u3.bmx[0].startblock 9999999"
	"agf-freeblks|agf 0;write -d freeblks 5"
	"sb2-agcount|sb 2;write -d agcount 9"
	"blocktrash-304|blockget;blocktrash -s 304 -n 16 -x 1 -y 64 -3"
)

# check NAME: the reports of the runs on $T/c.img's copies against the
# image diff and each other.
check() {
	python3 - "$1" "$T" "$geo" <<'PY'
import json, os, re, sys
name, t, geo = sys.argv[1], sys.argv[2], sys.argv[3].split()
bsize, agblocks, agcount, ssize, isize, agblklog, inopblog = map(int, geo)
bad = []

def load(p):
    with open(p) as f:
        return json.load(f)

def tree(p):
    m = {}
    if not os.path.exists(p):
        return m
    # Names are bytes: one a damaged block gave may not be UTF-8.
    for line in open(p, errors="surrogateescape"):
        ino, typ, size, h, path = line.rstrip("\n").split("\t", 4)
        m.setdefault(int(ino), []).append((path, typ, size, h))
    return m

nj, rj = load(t + "/n.json"), load(t + "/j.json")
ntext = open(t + "/n.txt", errors="surrogateescape").read()
rtext = open(t + "/t.txt", errors="surrogateescape").read()
acts = rj.get("actions", [])
by_ino = {}
for a in acts:
    if "ino" in a:
        by_ino.setdefault(a["ino"], []).append(a)
dirs_named = set(int(x) for a in acts
                 for x in re.findall(r"in directory (\d+)", a["message"]))

# One problem count.
m = re.search(r"^(\d+) problems? found\.$", ntext, re.M)
ncount = int(m.group(1)) if m else 0
m = re.search(r"^(\d+) problems? found, \d+ changes? made", rtext, re.M)
rcount = int(m.group(1)) if m else 0
counts = {"-n text": ncount, "-n json": nj["problem_count"],
          "repair text": rcount, "repair json": rj["problem_count"]}
if len(set(counts.values())) != 1:
    bad.append("problem counts differ: %s" % counts)
if nj["problem_count"] != len(nj["problems"]):
    bad.append("-n: problem_count %d, %d problems listed"
               % (nj["problem_count"], len(nj["problems"])))
s = rj["summary"]
if s["actions"] != len(acts):
    bad.append("summary says %d actions, %d listed" % (s["actions"], len(acts)))
for k, kind in (("files_removed", "inode_cleared"),
                ("files_moved", "moved_to_lost_found")):
    if s[k] != sum(a["action"] == kind for a in acts):
        bad.append("summary %s %d, actions say otherwise" % (k, s[k]))

# A loss names its reason, in JSON and at the end of its text line.
for a in acts:
    if a["action"] in ("inode_cleared", "attr_fork_dropped") and (
            not a.get("reason") or
            not a["message"].endswith("; reason: " + a["reason"])):
        bad.append("no reason given: %s" % a["message"])

# Text and JSON: the same changes (kinds cut after 20 lines say so).
lines = set(rtext.splitlines())
cut = {"nlink_set": "link counts set", "dotdot_set": "\"..\" entries set",
       "inode_fixed": "inodes corrected"}
per = {}
for a in acts:
    per[a["action"]] = per.get(a["action"], 0) + 1
    if a["action"] in cut and per[a["action"]] > 20:
        continue
    if a["message"] + "." not in lines:
        bad.append("in JSON, not in text: %s" % a["message"])
for kind, words in cut.items():
    more = per.get(kind, 0) - 20
    if more > 0 and ("And %d more %s (-v or --json lists each)." % (more, words)) not in lines:
        bad.append("text does not say %d more %s" % (more, words))

# The image diff: inodes, AG headers, superblocks.
def ino_off(ino):
    agno = ino >> (agblklog + inopblog)
    agino = ino & ((1 << (agblklog + inopblog)) - 1)
    return (agno * agblocks + (agino >> inopblog)) * bsize + \
        (agino & ((1 << inopblog) - 1)) * isize

def masked(b):
    b = bytearray(b)
    b[100:104] = bytes(4)       # di_crc
    b[112:120] = bytes(8)       # di_lsn
    return bytes(b)

before, after = open(t + "/c.img", "rb"), open(t + "/j.img", "rb")
def read(f, off, n):
    f.seek(off)
    return f.read(n)

base = tree(t + "/tree.base")
now = tree(t + "/tree.after")
lf = [i for i, ps in now.items() for p in ps if p[0] == "/lost+found"]
created = any(a["action"] == "lost_found_created" for a in acts)
moved_any = any(a["action"] == "moved_to_lost_found" for a in acts)
changed = 0
for ino in sorted(set(base) | set(lf)):
    if read(before, ino_off(ino), isize) == read(after, ino_off(ino), isize):
        continue
    if masked(read(before, ino_off(ino), isize)) == \
       masked(read(after, ino_off(ino), isize)):
        continue
    changed += 1
    if ino in by_ino or ino in dirs_named:
        continue
    if ino in lf and (created or moved_any):
        continue
    if (base.get(ino) and base[ino][0][0] == "/" and
            any(a["action"] == "lost_found_created" for a in acts)):
        continue                # the root names the new /lost+found
    bad.append("inode %d (%s) changed, no action names it"
               % (ino, base.get(ino, [["new"]])[0][0]))
for agno in range(agcount):
    start = agno * agblocks * bsize
    for what, sect in (("AGF", 1), ("AGI", 2)):
        o = start + sect * ssize
        if read(before, o, ssize) != read(after, o, ssize) and not any(
                a["action"] == "ag_rebuilt" and a.get("agno") == agno
                for a in acts):
            bad.append("the %s of AG %d changed, no ag_rebuilt" % (what, agno))
    if read(before, start, ssize) != read(after, start, ssize) and not any(
            a["action"] == "sb_written" and a.get("agno") == agno
            for a in acts):
        bad.append("the superblock of AG %d changed, no sb_written" % agno)

# The tree: files gone and files moved, by path.
def same_path(got, want):
    g, w = got.split("/"), want.split("/")
    return len(g) == len(w) and all(x in ("?", y) for x, y in zip(g, w))

if now:
    for ino, paths in base.items():
        if ino in now:
            np = [p[0] for p in now[ino]]
            gone = [p[0] for p in paths if p[0] not in np]
            if any(p.startswith("/lost+found/") for p in np) and not any(
                    p.startswith("/lost+found/") for p, *_ in paths):
                # Named as reported, unless a later pass rewrote
                # /lost+found (the names are then its own).
                ok = [a for a in by_ino.get(ino, [])
                      if a["action"] == "moved_to_lost_found" and
                      (any(a["message"].endswith(" to " + p) for p in np)
                       or any(b["action"] == "dir_rewritten" and
                              b.get("path") == "/lost+found" and
                              b["pass"] > a["pass"] for b in acts))]
                if not ok:
                    bad.append("%s (inode %d) is now in %s, no move reported"
                               % (paths[0][0], ino, np))
            continue
        # Cleared by the repair, or freed by the damage itself and its
        # entries removed.
        ok = [a for a in by_ino.get(ino, [])
              if a["action"] in ("inode_cleared", "entry_removed")]
        if not ok:
            bad.append("%s (inode %d) is gone, no inode_cleared or "
                       "entry_removed" % (paths[0][0], ino))
        elif not any(same_path(a["path"], p[0]) for a in ok for p in paths):
            bad.append("%s (inode %d) cleared under the path %s"
                       % (paths[0][0], ino, ok[0]["path"]))
    # Every name gone (below a directory still there) is in an action.
    had = set(p[0] for ps in base.values() for p in ps)
    has = set(p[0] for ps in now.values() for p in ps)
    ino_of = {q[0]: i for i, ps in base.items() for q in ps}
    for p in sorted(had - has):
        if os.path.dirname(p) in had - has:
            continue
        # The damage itself changed the name's bytes (blocktrash in a
        # directory block, its length byte too): the same inode in the
        # same directory under another name.  Repair keeps the entry as
        # found, as xfs_repair does; it renames nothing in place.
        d = os.path.dirname(p)
        if any(os.path.dirname(q[0]) == d
               for q in now.get(ino_of.get(p), [])):
            continue
        # Now in /lost+found: the move's own rule above holds it (its
        # name may have been in the damaged block, known to no pass).
        if any(q[0].startswith("/lost+found/")
               for q in now.get(ino_of.get(p), [])):
            continue
        if not any(same_path(a.get("path", ""), p) for a in acts):
            bad.append("the name %s is gone, no action names it" % p)
print("%s: %d problems, %d actions, %d inodes changed%s" %
      (name, rj["problem_count"], len(acts), changed,
       "" if now else " (tree not compared)"))
for b in bad[:20]:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
}

for c in "${CASES[@]}"; do
	name=${c%%|*} cmds=${c#*|} args=()
	IFS=';' read -ra cl <<<"$cmds"
	for x in "${cl[@]}"; do args+=(-c "$x"); done
	cp --sparse=always "$img" "$T/c.img"
	xfs_db -x "${args[@]}" "$T/c.img" >/dev/null 2>&1
	same_image "$img" "$T/c.img" && { fail "$name: xfs_db changed nothing"; continue; }
	for x in n j t; do cp --sparse=always "$T/c.img" "$T/$x.img"; done
	"$REPAIR" -n "$T/n.img" >"$T/n.txt" 2>&1
	"$REPAIR" -n --json "$T/n.img" >"$T/n.json" 2>/dev/null
	"$REPAIR" --json "$T/j.img" >"$T/j.json" 2>"$T/j.err"
	"$REPAIR" "$T/t.img" >"$T/t.txt" 2>&1
	if [ "$have_schema" = 1 ]; then
		for x in n j; do
			python3 - "$DOC/xfskit-repair.schema.json" "$T/$x.json" <<'PY' ||
import json, sys, jsonschema
jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(
    json.load(open(sys.argv[2])))
PY
				fail "$name: $x.json does not match the schema"
		done
	fi
	rm -f "$T/tree.after"
	# A mount writes: the tree is read from a copy.
	cp --sparse=always "$T/j.img" "$T/w.img"
	if xfs_repair -n "$T/j.img" >/dev/null 2>&1 &&
	   loop_mount "$T/w.img"; then
		tree "$MNT" >"$T/tree.after"
		loop_umount
	else
		echo "$name: the repaired image is not clean for xfs_repair -n; its tree is not compared"
	fi
	if check "$name" >"$T/check.out"; then
		pass "$(head -1 "$T/check.out")"
	else
		fail "$(cat "$T/check.out")"
	fi
	same_image "$T/n.img" "$T/c.img" || fail "$name: -n wrote to the image"
done
finish
