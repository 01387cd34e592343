#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Compare the index of `xfskit-db scan -r` with what xfs_db says of the
same filesystem: its btrees block by block (btdump), its inode chunks
(inobt records) and its reverse map (rmapbt records, which name the owner,
fork and file offset of every metadata block).

Usage: scan_check.py DIR, where DIR holds
  geom       "agblocks agcount blocksize inodesize dirblklog agblklog
             inopblog"
  scan.txt   the scan's listing (with -r)
  bt.*       xfs_db btdump output of every per-AG btree of every AG
  inodes     "ino kind" lines: kind d (directory), l (symlink), inner-self
             or inner-other (an image file stored in the filesystem)
  bigdir     "ino" of a large directory, and bigdir.bmap its xfs_db bmap
Prints "ok: ..." lines, "FAIL: ..." lines for what differs; exits 1 on
any failure.
"""
import collections
import os
import re
import sys

D = sys.argv[1]
fails = 0


def fail(msg):
    global fails
    fails += 1
    print("FAIL: " + msg)


def ok(msg):
    print("ok: " + msg)


agblocks, agcount, bs, isize, dirblklog, agblklog, inopblog = map(
    int, open(os.path.join(D, "geom")).read().split())
bb = bs // 512
dirfsb = 1 << dirblklog


def lin(daddr):
    return daddr // bb


def ag_agbno(daddr):
    return divmod(lin(daddr), agblocks)


# ---- the scan's listing ----
Ent = collections.namedtuple("Ent", "type daddr len owner level offset verdict")
acc, rej = [], []
for line in open(os.path.join(D, "scan.txt")):
    f = line.split()
    if len(f) != 8 or f[0] == "type":
        continue
    e = Ent(f[0], int(f[1]), int(f[2]), int(f[4]), int(f[5]),
            None if f[6] == "-" else int(f[6]), f[7])
    (acc if e.verdict == "ok" else rej).append(e)
if not acc:
    fail("the scan listed no accepted block")
    sys.exit(1)


def blocks_of(e):
    """The filesystem blocks (linear numbers) an entry covers."""
    first = lin(e.daddr)
    return range(first, first + max(1, e.len // bs))


# ---- xfs_db: btdump of every AG btree, and the rmap records ----
BTNAME = {"bnobt": "bnobt", "cntbt": "cntbt", "inobt": "inobt",
          "finobt": "finobt", "rmapbt": "rmapbt", "refcntbt": "refcntbt"}
live = collections.defaultdict(set)      # scan type -> daddrs
rmap = {}                                # linear block -> (owner, off, attr, bmbt)
chunks = []                              # (startino, holemask)
hdr_re = re.compile(r"^(\w+) level (\d+) block (\d+) daddr (\d+)")
rec_re = re.compile(r"^\d+:\[([-\w,]+)\]")
for name in sorted(os.listdir(D)):
    if not name.startswith("bt."):
        continue
    kind, ag = name.split(".")[1], int(name.split(".")[2])
    level = None
    for line in open(os.path.join(D, name)):
        m = hdr_re.match(line)
        if m:
            level = int(m.group(2))
            live[kind].add(int(m.group(4)))
            continue
        m = rec_re.match(line.strip())
        if not m or level != 0:
            continue
        v = m.group(1).split(",")
        if kind == "rmapbt":
            start, cnt, owner, off, _, attr, bmbt = (int(x, 0) for x in v)
            for i in range(cnt):
                rmap[ag * agblocks + start + i] = (owner, off + i, attr, bmbt)
        elif kind == "inobt":
            chunks.append(((ag << (agblklog + inopblog)) + int(v[0]),
                           int(v[1], 0)))
if not rmap:
    fail("no rmapbt records from xfs_db (is rmapbt on?)")
    sys.exit(1)


def free(b):
    return b not in rmap


def agfl_or_free(b):
    return b not in rmap or rmap[b][0] == -5  # OWN_AG: btree or AGFL


# ---- 1. AG headers: one of each per AG, at its place ----
for t in ("sb", "agf", "agi", "agfl"):
    owners = sorted(e.owner for e in acc if e.type == t)
    if owners != list(range(agcount)):
        fail("%s accepted for AGs %s, expected 0..%d" % (t, owners, agcount - 1))
ok("AG headers: one superblock, AGF, AGI and AGFL per AG")

# ---- 2. AG btree blocks: every live block found; extras only in free space ----
for t in BTNAME:
    got = {e.daddr for e in acc if e.type == t}
    missing = live[t] - got
    if missing:
        fail("%s blocks xfs_db walks but the scan did not accept: %s" %
             (t, sorted(missing)[:10]))
    stale = [d for d in got - live[t] if not agfl_or_free(lin(d))]
    if stale:
        fail("%s blocks accepted that are neither in the tree nor free: %s" %
             (t, stale[:10]))
    ok("%s: %d live blocks all found, %d stale copies in free space" %
       (t, len(live[t]), len(got - live[t])))

# ---- 3. inode chunks: covered inodes == allocated inodes (inobt) ----
alloc = set()
for start, holemask in chunks:
    for i in range(64):
        if not holemask >> (i // 4) & 1:
            alloc.add(start + i)
covered = set()
for e in acc:
    if e.type == "inodes":
        covered.update(range(e.owner, e.owner + e.len // isize))
if alloc - covered:
    fail("%d inodes of inobt chunks are in no accepted cluster (first %s)" %
         (len(alloc - covered), sorted(alloc - covered)[:5]))
if covered - alloc:
    fail("%d inodes in accepted clusters are in no inobt chunk (first %s)" %
         (len(covered - alloc), sorted(covered - alloc)[:5]))
ok("inode clusters: %d inodes, the same as the inobt's" % len(covered))

# ---- 4. inode-owned blocks agree with the rmap (owner, fork, bmbt flag) ----
DIRT = {"dir3-block", "dir3-data", "dir3-leaf1", "dir3-leafn", "dir3-free"}
ATTRT = {"attr3-leaf", "attr3-rmt"}
owned = [e for e in acc if e.type in DIRT | ATTRT |
         {"da3-node", "symlink", "bmbt"}]
by_daddr = collections.defaultdict(list)
for e in owned:
    by_daddr[e.daddr].append(e)
    bl = list(blocks_of(e))
    if all(free(b) for b in bl):
        continue
    want_attr = {True: 1, False: 0}.get(e.type in ATTRT)
    for b in bl:
        r = rmap.get(b)
        if (r is None or r[0] != e.owner or r[3] != (e.type == "bmbt") or
                (e.type in DIRT | ATTRT | {"symlink"} and
                 r[2] != (e.type in ATTRT))):
            fail("%s at daddr %d (owner %d) is not where the rmap puts a "
                 "block of that owner and kind: %s" % (e.type, e.daddr,
                                                       e.owner, r))
            break
    else:
        if e.type in ("dir3-block", "dir3-leaf1", "dir3-free") and \
                e.offset != rmap[bl[0]][1]:
            fail("%s at daddr %d states file block %s, the rmap says %d" %
                 (e.type, e.daddr, e.offset, rmap[bl[0]][1]))
ok("%d inode-owned blocks agree with the rmap's owner, fork and offset"
   % len(owned))

# ---- 5. every metadata block the rmap names was found ----
kinds = {}
for line in open(os.path.join(D, "inodes")):
    ino, kind = line.split()
    kinds[int(ino)] = kind
missing = []
nchecked = 0
for b, (owner, off, attr, bmbt) in sorted(rmap.items()):
    if owner < 0:
        continue
    daddr = b * bb
    if bmbt:
        want = {"bmbt"}
    elif attr:
        want = ATTRT | {"da3-node"}
    elif kinds.get(owner) == "d":
        if off % dirfsb:
            continue
        want = DIRT | {"da3-node"}
    elif kinds.get(owner) == "l":
        want = {"symlink"}
    else:
        continue
    nchecked += 1
    if not any(e.type in want and e.owner == owner for e in by_daddr[daddr]):
        missing.append((daddr, owner, sorted(want)[0]))
if missing:
    fail("%d metadata blocks of the rmap not accepted (first %s)" %
         (len(missing), missing[:5]))
ok("all %d directory, attribute, symlink and bmbt blocks of the rmap found"
   % nchecked)

# ---- 6. the big directory: its blocks are exactly its bmap's ----
bigino = int(open(os.path.join(D, "bigdir")).read())
want = set()
bm_re = re.compile(r"data offset (\d+) startblock (\d+) \((\d+)/(\d+)\) count (\d+)")
for line in open(os.path.join(D, "bigdir.bmap")):
    m = bm_re.search(line)
    if not m:
        continue
    off, ag, agbno, cnt = (int(m.group(i)) for i in (1, 3, 4, 5))
    for i in range(cnt):
        if (off + i) % dirfsb == 0:
            want.add((ag * agblocks + agbno + i) * bb)
got = {e.daddr for e in owned if e.owner == bigino and e.type != "bmbt"}
if not want:
    fail("xfs_db gave no bmap for the big directory %d" % bigino)
elif got != want:
    fail("big directory %d: scan has %d blocks, bmap %d; only in scan %s, "
         "only in bmap %s" % (bigino, len(got), len(want),
                              sorted(got - want)[:5], sorted(want - got)[:5]))
else:
    ok("big directory %d: the scan's %d blocks are its bmap's" %
       (bigino, len(got)))

# ---- 7. images stored as files: nothing taken, much rejected ----
for kind, reason in (("inner-self", "wrong-address"),
                     ("inner-other", "wrong-uuid")):
    inos = {i for i, k in kinds.items() if k == kind}
    blocks = {b for b, r in rmap.items() if r[0] in inos and not r[3]}
    if not blocks:
        fail("%s: no data blocks in the rmap" % kind)
        continue
    taken = [e for e in acc if any(b in blocks for b in blocks_of(e))]
    if taken:
        fail("%s: %d blocks accepted inside the image file (first %s)" %
             (kind, len(taken), taken[:3]))
    inside = [e for e in rej if lin(e.daddr) in blocks]
    # Blocks of an image file pass every rule but the one that tells
    # them apart: each is rejected for that rule, first.
    other = [e for e in inside if e.verdict != reason]
    if not inside:
        fail("%s: no candidate found inside the image file" % kind)
    elif other:
        fail("%s: %d of %d candidates inside the image file rejected for "
             "another reason than %s (first %s)" %
             (kind, len(other), len(inside), reason, other[:3]))
    else:
        ok("%s: no block taken from %d file blocks; all %d candidates "
           "there rejected for %s" % (kind, len(blocks), len(inside), reason))
sys.exit(1 if fails else 0)
