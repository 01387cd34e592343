#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The kernel-written trees of the scan's fork tests, and their listings.

  scan_forks.py populate TOP DATA XATTRS LINKS
      /frag: a directory in node form (800 entries) whose blocks lie
      between another file's (its own bmbt: data blocks, leaf and free
      blocks at high offsets); /both: a file of DATA blocks, every other
      one written, and XATTRS remote values of which every other one is
      removed (holes between their blocks: data and attr forks both
      bmbts); LINKS hard links to /both and to one file of /frag from
      /links (none when 0).
  scan_forks.py tree TOP     one line per entry: path, kind, content
                             hash, xattrs hash
  scan_forks.py xattrs FILE  one line per xattr: name, value hash
"""
import hashlib, os, sys


def populate(top, data, xattrs, links):
    filler = os.open(os.path.join(top, "filler"), os.O_CREAT | os.O_WRONLY, 0o644)
    at = [0]

    def fill():
        """A block of another file between two allocations: a new extent."""
        os.pwrite(filler, os.urandom(4096), at[0])
        at[0] += 4096
        os.fsync(filler)

    d = os.path.join(top, "frag")
    os.mkdir(d)
    for r in range(20):
        for i in range(40):
            open(os.path.join(d, "r%02d_a_longish_directory_entry_name_%04d" % (r, i)), "w").close()
        fd = os.open(d, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        fill()
    f = os.path.join(top, "both")
    fd = os.open(f, os.O_CREAT | os.O_WRONLY, 0o644)
    for i in range(data):
        os.pwrite(fd, os.urandom(4096), 2 * i * 4096)
        if i % 4 == 0:
            os.fsync(fd)
            fill()
    if links:
        os.mkdir(os.path.join(top, "links"))
    for i in range(links):
        os.link(os.path.join(d, "r00_a_longish_directory_entry_name_0000"),
                os.path.join(top, "links", "l%02d" % i))
        os.link(f, os.path.join(top, "links", "both%02d" % i))
    os.fsync(fd)
    for i in range(xattrs):
        os.setxattr(f, "user.remote_value_%03d" % i, os.urandom(3000))
    for i in range(0, xattrs, 2):
        os.removexattr(f, "user.remote_value_%03d" % i)
    os.fsync(fd)
    os.close(fd)
    os.close(filler)


def xhash(p):
    x = hashlib.sha1()
    for a in sorted(os.listxattr(p, follow_symlinks=False)):
        x.update(a.encode() + b"=" + os.getxattr(p, a, follow_symlinks=False))
    return x.hexdigest()


def tree(top):
    for root, dirs, files in os.walk(top):
        for n in sorted(dirs + files):
            p = os.path.join(root, n)
            rel = os.path.relpath(p, top)
            if os.path.isdir(p):
                print(rel, "d", "-", xhash(p))
            else:
                with open(p, "rb") as f:
                    print(rel, "f", hashlib.sha1(f.read()).hexdigest(), xhash(p))


if sys.argv[1] == "populate":
    populate(sys.argv[2], *(int(a) for a in sys.argv[3:6]))
elif sys.argv[1] == "tree":
    tree(sys.argv[2])
else:
    for a in sorted(os.listxattr(sys.argv[2])):
        print(a, hashlib.sha1(os.getxattr(sys.argv[2], a)).hexdigest())
