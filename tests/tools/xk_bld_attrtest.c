// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Build files with extended attributes of every format into an image
 * through the builder, for tests/scripts/build_attr.sh: a short-form
 * fork beside file data, trusted and security namespaces, a leaf, a
 * dabtree (two levels on 1 KiB blocks), 64 KiB remote values, and POSIX
 * ACLs converted from the Linux xattr form, on regular files and on a
 * directory.  The root directory lists them (through xk_bld_dir when the
 * directory builder is there, else a short-form directory written here).
 *
 * Prints what a kernel mount must show, one line per xattr:
 *   x <file> <name as listxattr shows it> <value in hex>
 * and per file the attr fork format the kernel would have built:
 *   f <file> <inode number> <sf|leaf|node> <node levels>
 *
 * usage: xk_bld_attrtest IMAGE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build.h>
#include <xfskit/build_acl.h>
#include <xfskit/libfs.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dinode.h>
#include <xfskit/format/dir.h>

#define MAXENT	16

struct ent {
	const char	*name;
	uint64_t	ino;
	uint8_t		ftype;
};

/* One file's attributes, with storage the xattrs point into. */
struct xset {
	struct xk_bld_xattr	xa[2100];
	size_t			n;
	uint8_t			*store;
	size_t			used;
};

static struct xset xs;

static const uint8_t *
keep(const void *p, size_t len)
{
	uint8_t *d = xs.store + xs.used;

	if (xs.used + len > (64u << 20)) {
		fprintf(stderr, "xk_bld_attrtest: out of scratch\n");
		exit(1);
	}
	memcpy(d, p, len);
	xs.used += len;
	return d;
}

static const char *
prefix(uint8_t flags)
{
	return flags & XK_ATTR_ROOT ? "trusted." :
	       flags & XK_ATTR_SECURE ? "security." : "user.";
}

static void
print_hex(const char *file, const char *pfx, const uint8_t *name,
	  size_t nlen, const uint8_t *v, size_t vlen)
{
	printf("x %s %s%.*s ", file, pfx, (int)nlen, (const char *)name);
	for (size_t i = 0; i < vlen; i++)
		printf("%02x", v[i]);
	printf("\n");
}

static void
add(uint8_t flags, const char *name, const void *value, size_t vlen)
{
	struct xk_bld_xattr *x = &xs.xa[xs.n++];

	x->flags = flags;
	x->namelen = (uint8_t)strlen(name);
	x->name = keep(name, x->namelen);
	x->valuelen = (uint32_t)vlen;
	x->value = vlen ? keep(value, vlen) : NULL;
}

/* A value of len bytes, a pattern seeded by seed. */
static void
add_pattern(uint8_t flags, const char *name, size_t len, unsigned int seed)
{
	uint8_t *v = malloc(len ? len : 1);

	for (size_t i = 0; i < len; i++)
		v[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
	add(flags, name, v, len);
	free(v);
}

/* A Linux ACL xattr value from (tag, perm, id) triples. */
static size_t
linux_acl(uint8_t *out, const uint32_t (*e)[3], size_t n)
{
	xk_put_le32(out, XK_POSIX_ACL_XATTR_VERSION);
	for (size_t i = 0; i < n; i++) {
		uint8_t *q = out + 4 + 8 * i;

		q[0] = (uint8_t)e[i][0];
		q[1] = 0;
		q[2] = (uint8_t)e[i][1];
		q[3] = 0;
		xk_put_le32(q + 4, e[i][2]);
	}
	return xk_acl_linux_size(n);
}

/*
 * Add an ACL as populate does, through the Linux-name mapping: stored in
 * the trusted namespace in XFS form.  A kernel lists it twice: under its
 * system. name (Linux form) and its trusted. name (XFS form).
 */
static int
add_acl(const char *file, const char *xname, const uint32_t (*e)[3],
	size_t n)
{
	uint8_t lin[256], dsk[256];
	size_t llen = linux_acl(lin, e, n);
	struct xk_bld_xattr x;
	int err;

	err = xk_xattr_linux_to_xfs(xname, strlen(xname), lin, llen, dsk,
				    sizeof(dsk), &x);
	if (err)
		return err;
	xs.xa[xs.n] = x;
	xs.xa[xs.n].name = keep(x.name, x.namelen);
	xs.xa[xs.n].value = keep(x.value, x.valuelen);
	xs.n++;
	print_hex(file, "", (const uint8_t *)xname, strlen(xname), lin, llen);
	return 0;
}

static void
print_set(const char *file)
{
	for (size_t i = 0; i < xs.n; i++)
		print_hex(file, prefix(xs.xa[i].flags), xs.xa[i].name,
			  xs.xa[i].namelen, xs.xa[i].value, xs.xa[i].valuelen);
}

struct pat {
	uint64_t	left;
	unsigned int	k;
};

static ssize_t
pat_read(void *ctx, void *buf, size_t n)
{
	struct pat *p = ctx;
	uint8_t *b = buf;

	if (n > p->left)
		n = p->left;
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(p->k++ * 13);
	p->left -= n;
	return (ssize_t)n;
}

/* A directory's entries, written by the directory builder. */
static int
dir_fill(struct xk_bld *b, struct xk_bld_inode *ip, uint64_t parent,
	 const struct ent *e, int n)
{
	struct xk_bld_dirent de[MAXENT];

	for (int i = 0; i < n; i++)
		de[i] = (struct xk_bld_dirent){
			.name = (const uint8_t *)e[i].name,
			.namelen = (uint8_t)strlen(e[i].name),
			.ftype = e[i].ftype, .ino = e[i].ino };
	return xk_bld_dir(b, ip, parent, de, (size_t)n);
}

static int
die(const char *what, int err)
{
	fprintf(stderr, "xk_bld_attrtest: %s: %s\n", what, xk_strerror(err));
	return 1;
}

#define U	XK_ACL_UNDEFINED_ID

static const uint32_t acl_file[][3] = {
	{ XK_ACL_USER_OBJ, 6, U }, { XK_ACL_USER, 4, 1000 },
	{ XK_ACL_GROUP_OBJ, 4, U }, { XK_ACL_GROUP, 7, 50 },
	{ XK_ACL_MASK, 5, U }, { XK_ACL_OTHER, 0, U },
};
static const uint32_t acl_dir_default[][3] = {
	{ XK_ACL_USER_OBJ, 7, U }, { XK_ACL_GROUP_OBJ, 5, U },
	{ XK_ACL_GROUP, 7, 50 }, { XK_ACL_MASK, 7, U },
	{ XK_ACL_OTHER, 5, U },
};

int
main(int argc, char **argv)
{
	struct xk_mount *mp;
	struct xk_fail f;
	struct xk_bld *b;
	struct xk_bld_inode in;
	struct ent e[MAXENT];
	char name[64];
	uint64_t root, ino;
	uint32_t bs;
	int n = 0, err;
	/* name, mode, expected format and node levels */
	static const struct {
		const char	*name;
		uint16_t	mode;
		const char	*fmt;
		int		levels;
	} files[] = {
		{ "small", XK_S_IFREG | 0644, "sf", 0 },
		{ "ns", XK_S_IFREG | 0600, "sf", 0 },
		{ "leaf", XK_S_IFREG | 0640, "leaf", 0 },
		{ "node", XK_S_IFREG | 0644, "node", 1 },
		{ "remote", XK_S_IFREG | 0644, "leaf", 0 },
		{ "acl", XK_S_IFREG | 0650, "sf", 0 },
		{ "dir", XK_S_IFDIR | 0650, "sf", 0 },
		{ "deep", XK_S_IFREG | 0644, "node", 2 },
	};

	if (argc != 2) {
		fprintf(stderr, "usage: xk_bld_attrtest IMAGE\n");
		return 2;
	}
	xs.store = malloc(64u << 20);
	if (!xs.store)
		return die("scratch", -ENOMEM);
	err = xk_mount_open(argv[1], 0, &mp, &f);
	if (err)
		return die("open", err);
	err = xk_bld_open(mp, &b);
	if (err)
		return die("xk_bld_open", err);
	xk_bld_set_time(b, 1700000000, 0);
	root = xk_bld_rootino(b);
	bs = mp->g.blocksize;

	for (size_t fi = 0; fi < sizeof(files) / sizeof(files[0]); fi++) {
		const char *fn = files[fi].name;
		int is_dir = (files[fi].mode & XK_S_IFMT) == XK_S_IFDIR;

		/* Two dabtree levels need small blocks to stay small. */
		if (!strcmp(fn, "deep") && bs != 1024)
			continue;
		xs.n = 0;
		xs.used = 0;
		err = xk_bld_ialloc(b, root, is_dir, &ino);
		if (err)
			return die("ialloc", err);
		xk_bld_inode_init(b, &in, ino, files[fi].mode);
		in.uid = 1000;
		in.gid = 100;
		if (!strcmp(fn, "small")) {
			add(0, "small", "hello", 5);
		} else if (!strcmp(fn, "ns")) {
			add(0, "u", "user value", 10);
			add(XK_ATTR_ROOT, "t", "trusted value", 13);
			add(XK_ATTR_SECURE, "s", "security value", 14);
			add(0, "empty", NULL, 0);
		} else if (!strcmp(fn, "leaf")) {
			for (int i = 0; i < 30; i++) {
				snprintf(name, sizeof(name), "lf%02d", i);
				add_pattern(0, name, 8, (unsigned int)i);
			}
			add_pattern(XK_ATTR_ROOT, "tl", 8, 100);
			add_pattern(XK_ATTR_SECURE, "sl", 8, 101);
		} else if (!strcmp(fn, "node")) {
			for (int i = 0; i < 2000; i++) {
				snprintf(name, sizeof(name), "nd%04d", i);
				add_pattern(0, name, 16, (unsigned int)i);
			}
		} else if (!strcmp(fn, "remote")) {
			add_pattern(0, "big", 65536, 7);
			add_pattern(XK_ATTR_SECURE, "mid", 5000, 8);
			add(0, "tiny", "x", 1);
		} else if (!strcmp(fn, "acl")) {
			err = add_acl(fn, XK_POSIX_ACL_XATTR_ACCESS, acl_file,
				      6);
			if (err)
				return die("acl", err);
			add(0, "a", "1", 1);
		} else if (!strcmp(fn, "dir")) {
			err = add_acl(fn, XK_POSIX_ACL_XATTR_ACCESS, acl_file,
				      6);
			if (!err)
				err = add_acl(fn, XK_POSIX_ACL_XATTR_DEFAULT,
					      acl_dir_default, 5);
			if (err)
				return die("acl", err);
			add(0, "d", "dir attr", 8);
		} else if (!strcmp(fn, "deep")) {
			for (int i = 0; i < 2000; i++) {
				snprintf(name, sizeof(name), "dp%04d", i);
				add_pattern(0, name, 200, (unsigned int)i);
			}
		}
		err = xk_bld_attrs(b, &in, xs.xa, xs.n);
		if (err)
			return die(fn, err);
		print_set(fn);
		if (is_dir) {
			in.nlink = 2;
			err = dir_fill(b, &in, root, NULL, 0);
		} else if (!strcmp(fn, "small")) {
			/* Data beside a short-form attr fork. */
			struct pat p = { .left = 20000 };

			err = xk_bld_file_write_reader(b, &in, 0, pat_read, &p,
						       20000);
		}
		if (!err)
			err = xk_bld_inode_write(b, &in);
		if (err)
			return die(fn, err);
		printf("f %s %llu %s %d\n", fn, (unsigned long long)ino,
		       files[fi].fmt, files[fi].levels);
		e[n++] = (struct ent){ fn, ino, is_dir ? XK_DIR3_FT_DIR :
						  XK_DIR3_FT_REG_FILE };
	}
	/* The root lists them all. */
	xk_bld_inode_init(b, &in, root, XK_S_IFDIR | 0755);
	in.nlink = 3;		/* ".", its own ".." and dir's ".." */
	err = dir_fill(b, &in, root, e, n);
	if (!err)
		err = xk_bld_inode_write(b, &in);
	if (err)
		return die("root", err);
	err = xk_bld_commit(b);
	if (err)
		return die("commit", err);
	xk_bld_free(b);
	err = xk_mount_close(mp);
	if (err)
		return die("close", err);
	free(xs.store);
	return 0;
}
