#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Tree records for the populate tests, and the trees they record.

  treerec.py record DIR [--no-times] [--no-xattrs] [--ctime]
      One line per path under DIR (DIR itself is "."), sorted: type,
      permission bits (with setuid/setgid/sticky), uid, gid, size (not
      for directories: their size is the on-disk format's, not content),
      sha256 of a regular file's content, nlink, mtime with nanoseconds,
      symlink target, rdev, and the xattrs sorted by name with the sha256
      of each value (POSIX ACLs appear as system.posix_acl_* as Linux
      shows them; XFS's trusted.SGI_ACL_* copies of them are left out).  atime is never recorded: reading a tree (this very
      record, or mkfs reading the source) moves it.  ctime only with
      --ctime: a tar archive does not always keep it and a protofile
      never does.
  treerec.py make-tree DIR [--big] [--whole-negative]
      Build the test tree in DIR (which should be a tmpfs: the host's
      ext4 keeps only ~4 KiB of xattrs per file).  --big adds the
      directory of 50,000 entries; --whole-negative gives times before
      1970 no fraction of a second (libarchive 3.6 misreads those).
  treerec.py protofile DIR [MAXLINK]
      Print a mkfs.xfs protofile describing DIR (regular files, dirs,
      symlinks, devices, FIFOs; no xattrs, hard links become copies),
      leaving out symlinks with targets longer than MAXLINK bytes.
"""
import hashlib
import os
import socket
import stat
import sys


def sha(data):
    return hashlib.sha256(data).hexdigest()[:32]


def file_sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
    return h.hexdigest()[:32]


def xattrs(path):
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return []
    out = []
    for n in sorted(names):
        # XFS keeps POSIX ACLs under these trusted names and shows them
        # to root besides system.posix_acl_*: the same ACL, twice.
        if n in ("trusted.SGI_ACL_FILE", "trusted.SGI_ACL_DEFAULT"):
            continue
        try:
            v = os.getxattr(path, n, follow_symlinks=False)
        except OSError as e:
            v = ("error %d" % e.errno).encode()
        out.append("%s=%s" % (n, sha(v)))
    return out


def record(root, times=True, xa=True, ctime=False):
    lines = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        names = ["."] if dirpath == root else []
        names += [os.path.join(os.path.relpath(dirpath, root), n)
                  for n in dirnames + filenames]
        for rel in names:
            rel = os.path.normpath(rel)
            p = os.path.join(root, rel)
            st = os.lstat(p)
            m = st.st_mode
            f = [rel, "type=%o" % stat.S_IFMT(m),
                 "mode=%04o" % stat.S_IMODE(m),
                 "uid=%d" % st.st_uid, "gid=%d" % st.st_gid,
                 "nlink=%d" % st.st_nlink]
            if not stat.S_ISDIR(m):
                f.append("size=%d" % st.st_size)
            if stat.S_ISREG(m):
                f.append("sha=" + file_sha(p))
            if stat.S_ISLNK(m):
                f.append("target=" + sha(os.readlink(p).encode()))
            if stat.S_ISCHR(m) or stat.S_ISBLK(m):
                f.append("rdev=%d:%d" % (os.major(st.st_rdev),
                                         os.minor(st.st_rdev)))
            if times:
                f.append("mtime=%d" % st.st_mtime_ns)
                if ctime:
                    f.append("ctime=%d" % st.st_ctime_ns)
            if xa:
                f += xattrs(p)
            lines.append(" ".join(f))
    lines.sort()
    return lines


def acl_value(entries):
    """Linux system.posix_acl_* value from (tag, perm, id) tuples."""
    b = (2).to_bytes(4, "little")
    for tag, perm, ident in sorted(entries):
        b += tag.to_bytes(2, "little") + perm.to_bytes(2, "little")
        b += (ident & 0xffffffff).to_bytes(4, "little")
    return b


def make_tree(d, big, whole_neg):
    def mk(path, data=b"", mode=0o644):
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, mode)

    j = os.path.join
    for n in ("empty", "d5", "d500", "attrs", "links", "special",
              "sparse", "modes"):
        os.mkdir(j(d, n))
    for i in range(5):
        mk(j(d, "d5", "f%d" % i), b"five %d\n" % i)
    for i in range(500):
        mk(j(d, "d500", "entry_with_a_longer_name_%04d" % i),
           b"x" * (i % 7))
    if big:
        os.mkdir(j(d, "d50000"))
        for i in range(50000):
            open(j(d, "d50000", "n%06d" % i), "wb").close()
    # Regular files: small, multi-block, holes, a bmbt's worth of extents.
    mk(j(d, "small"), b"hello, world\n")
    mk(j(d, "random"), os.urandom(300000))
    with open(j(d, "sparse", "holes"), "wb") as f:
        f.write(b"a" * 5000)
        f.seek(1 << 20)
        f.write(b"b" * 4096)
        f.truncate(3 << 20)     # ends in a hole
    with open(j(d, "sparse", "extents"), "wb") as f:
        for i in range(40):     # 40 data extents between holes
            f.seek(i * 2 * 65536)
            f.write(bytes([i + 1]) * 4096)
    with open(j(d, "sparse", "unaligned"), "wb") as f:
        f.write(b"c" * 100)
        f.seek(70000)
        f.write(b"d" * 10)
    # Hard links: within a directory, across directories, and one whose
    # inode has a link outside the tree (nlink must count the tree's).
    mk(j(d, "links", "h1"), b"linked\n")
    os.link(j(d, "links", "h1"), j(d, "links", "h2"))
    os.link(j(d, "links", "h1"), j(d, "d5", "h3"))
    mk(j(d, "links", "outside"), b"outside\n")
    os.link(j(d, "links", "outside"), j(d, "..", "outside_link"))
    # Symlinks: short (inline) and long (remote blocks).
    os.symlink("small", j(d, "links", "short"))
    os.symlink("t" * 1020, j(d, "links", "long1020"))
    os.symlink("/" + "dir/" * 200, j(d, "links", "long801"))
    # Devices, FIFOs, sockets.
    os.mknod(j(d, "special", "null"), 0o666 | stat.S_IFCHR,
             os.makedev(1, 3))
    os.mknod(j(d, "special", "loop"), 0o660 | stat.S_IFBLK,
             os.makedev(7, 0))
    os.mknod(j(d, "special", "bigdev"), 0o600 | stat.S_IFCHR,
             os.makedev(300, 70000))
    os.mkfifo(j(d, "special", "fifo"), 0o640)
    s = socket.socket(socket.AF_UNIX)
    s.bind(j(d, "special", "sock"))
    s.close()
    # xattrs of every format.
    a = j(d, "attrs")
    mk(j(a, "one"))
    os.setxattr(j(a, "one"), "user.small", b"1")
    mk(j(a, "thirty"))
    for i in range(30):
        os.setxattr(j(a, "thirty"), "user.attr_%d" % i, b"value_%d" % i)
    mk(j(a, "many"))
    for i in range(2000):
        os.setxattr(j(a, "many"), "user.attribute_number_%d" % i,
                    b"some_value_%d" % i)
    mk(j(a, "remote"))
    # Linux caps a value at 64 KiB (XATTR_SIZE_MAX).
    os.setxattr(j(a, "remote"), "user.big", os.urandom(65536))
    os.setxattr(j(a, "remote"), "user.mid", os.urandom(5000))
    mk(j(a, "ns"))
    os.setxattr(j(a, "ns"), "trusted.t", b"trusted value")
    os.setxattr(j(a, "ns"), "security.s", b"security value")
    os.setxattr(j(a, "ns"), "user.u", b"")
    os.symlink("one", j(a, "link_with_attr"))
    os.setxattr(j(a, "link_with_attr"), "trusted.sl", b"on a symlink",
                follow_symlinks=False)
    os.setxattr(a, "user.on_dir", b"directory attr")
    # POSIX ACLs: an access ACL with named entries and a mask, and a
    # default ACL on a directory.
    mk(j(a, "acl"), b"acl\n", 0o640)
    os.setxattr(j(a, "acl"), "system.posix_acl_access", acl_value(
        [(1, 6, -1), (2, 4, 1001), (4, 4, -1), (8, 6, 2002),
         (0x10, 6, -1), (0x20, 0, -1)]))
    os.mkdir(j(a, "acldir"))
    os.setxattr(j(a, "acldir"), "system.posix_acl_default", acl_value(
        [(1, 7, -1), (2, 5, 1001), (4, 5, -1), (0x10, 5, -1),
         (0x20, 5, -1)]))
    # Odd modes and owners.
    m = j(d, "modes")
    for mode in (0o7777, 0o4755, 0o2711, 0o1777, 0o0, 0o444):
        mk(j(m, "m%04o" % mode), b"", mode)
        os.chmod(j(m, "m%04o" % mode), mode)
    os.mkdir(j(m, "sticky"))
    os.chmod(j(m, "sticky"), 0o1777)
    os.mkdir(j(m, "setgid"))
    os.chmod(j(m, "setgid"), 0o2775)
    os.chown(j(m, "m0444"), 1234, 5678)
    os.chown(j(m, "sticky"), 100000, 65534)
    os.lchown(j(d, "links", "short"), 42, 43)
    os.chown(j(d, "special", "fifo"), 7, 8)
    # Timestamps with nanoseconds, before 1970 and after 2038 (bigtime).
    # libarchive 3.6 reads a negative pax time with a fraction wrongly
    # (the fraction's sign is lost): for archives, whole seconds there.
    times = [(1600000000, 123456789), (-100000, 0 if whole_neg else 5),
             (2 ** 33, 999999999), (1000000000, 1)]
    k = 0
    for dirpath, dirnames, filenames in os.walk(d, topdown=False):
        for n in sorted(filenames) + sorted(dirnames) + [None]:
            p = dirpath if n is None else j(dirpath, n)
            sec, ns = times[k % len(times)]
            k += 1
            t = sec * 10 ** 9 + ns
            m = t + (7 if sec >= 0 or not whole_neg else 0)
            os.utime(p, ns=(t, m), follow_symlinks=False)


def protofile(root, max_symlink):
    out = ["/dev/null", "0 0"]

    def spec(p):
        st = os.lstat(p)
        m = st.st_mode
        t = {stat.S_IFREG: "-", stat.S_IFDIR: "d", stat.S_IFCHR: "c",
             stat.S_IFBLK: "b", stat.S_IFIFO: "p",
             stat.S_IFLNK: "l"}.get(stat.S_IFMT(m))
        if t is None:
            return None
        s = "%s%s%s%03o %d %d" % (t, "u" if m & stat.S_ISUID else "-",
                                  "g" if m & stat.S_ISGID else "-",
                                  m & 0o777, st.st_uid, st.st_gid)
        if t == "-":
            s += " " + os.path.abspath(p)
        elif t in "bc":
            s += " %d %d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
        elif t == "l":
            if len(os.readlink(p)) > max_symlink:
                return None
            s += " " + os.readlink(p)
        return s

    def walk(p, depth):
        for n in sorted(os.listdir(p)):
            c = os.path.join(p, n)
            s = spec(c)
            if s is None:
                continue
            out.append("  " * depth + n + " " + s)
            if s.startswith("d"):
                walk(c, depth + 1)
                out.append("  " * (depth + 1) + "$")

    out.append(spec(root))
    walk(root, 1)
    out.append("$")
    print("\n".join(out))


def main():
    a = sys.argv[1:]
    if len(a) >= 2 and a[0] == "record":
        for line in record(a[1], "--no-times" not in a,
                           "--no-xattrs" not in a, "--ctime" in a):
            print(line)
    elif len(a) >= 2 and a[0] == "make-tree":
        make_tree(a[1], "--big" in a, "--whole-negative" in a)
    elif len(a) >= 2 and a[0] == "protofile":
        protofile(a[1], int(a[2]) if len(a) > 2 else 1024)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
