#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The parent pointers a mounted tree implies, and those the kernel reports.

  pptr_expect.py tree MNT    from the directory entries under MNT
  pptr_expect.py gp FILE     from xk_getparents' output (tests/tools)

One line per inode, "ino=N: PARENT:NAME ...", sorted, generations left
out, special files skipped: the two agree when every file's parent
pointers are exactly the entries naming it.
"""
import os, sys
# Names are bytes: any that are not UTF-8 pass through both sides alike.
sys.stdout.reconfigure(errors="surrogateescape")
mode, arg = sys.argv[1], sys.argv[2]
pp = {}
if mode == "tree":
    for d, dirs, files in os.walk(arg):
        dino = os.lstat(d).st_ino
        for n in dirs + files:
            st = os.lstat(os.path.join(d, n))
            if not (st.st_mode & 0o170000) in (0o100000, 0o040000, 0o120000):
                continue
            pp.setdefault(st.st_ino, set()).add("%d:%s" % (dino, n))
else:
    for line in open(arg, encoding="utf-8", errors="surrogateescape"):
        path, rest = line.split(" ino=", 1)
        ino, recs = rest.split(":", 1)
        recs = recs.split()
        if recs == ["special"] or recs == ["root"]:
            continue
        for r in recs:
            p, g, n = r.split(":", 2)
            pp.setdefault(int(ino), set()).add("%s:%s" % (p, n))
for ino in sorted(pp):
    print("ino=%d: %s" % (ino, " ".join(sorted(pp[ino]))))
