// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Build directories of every format into an image with xk_bld_dir: empty,
 * a few short names (short form), a few long names (block), hundreds of
 * short names (leaf), thousands and tens of thousands of names of 1 to
 * 255 bytes, bytes >= 0x80 included (node, with one or more free index
 * blocks), and pairs of directories of fixed-length names on either side
 * of each conversion (short form/block, block/leaf, leaf/node, one
 * leaf/several leaves) computed here from the geometry, and a pair on
 * either side of the short-form limit beside a small attr fork.  Every entry is
 * an empty regular file; the root is rewritten to list the directories.
 *
 * For the test script it writes OUTDIR/dirs (one line per directory:
 * name, entry count, the format expected, in creation order) and
 * OUTDIR/NAME.names (the entries' names in hex, one a line, in the order
 * they were added) so a kernel mount can be compared with them and the
 * kernel can rebuild the same directory by adding the same names.
 *
 * usage: xk_bld_dirtest IMAGE OUTDIR [SCALE]   (SCALE 0: skip 50,000)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build.h>
#include <xfskit/libfs.h>
#include <xfskit/format/dir.h>
#include <xfskit/format/dinode.h>

struct names {
	uint8_t		*buf;		/* n * 255 bytes */
	uint8_t		*len;
	size_t		n;
	/* open-addressing set of name indexes + 1, for uniqueness */
	uint32_t	*set;
	size_t		setsize;
};

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static uint64_t
name_hash(const uint8_t *p, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/* Add name i if no earlier one has the same bytes; 0 when added. */
static int
names_insert(struct names *s, size_t i)
{
	const uint8_t *p = s->buf + i * 255;
	size_t k = name_hash(p, s->len[i]) & (s->setsize - 1);

	while (s->set[k]) {
		size_t j = s->set[k] - 1;

		if (s->len[j] == s->len[i] &&
		    memcmp(s->buf + j * 255, p, s->len[i]) == 0)
			return -1;
		k = (k + 1) & (s->setsize - 1);
	}
	s->set[k] = (uint32_t)i + 1;
	return 0;
}

static int
names_alloc(struct names *s, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	s->buf = malloc(n * 255 + 1);
	s->len = malloc(n + 1);
	for (s->setsize = 16; s->setsize < n * 2; s->setsize <<= 1)
		;
	s->set = calloc(s->setsize, sizeof(*s->set));
	return s->buf && s->len && s->set ? 0 : -ENOMEM;
}

/* Random names of minlen..maxlen bytes, any byte but NUL and '/'. */
static int
names_random(struct names *s, size_t n, unsigned int minlen,
	     unsigned int maxlen)
{
	if (names_alloc(s, n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = s->buf + i * 255;

		do {
			s->len[i] = (uint8_t)(minlen +
					      rnd() % (maxlen - minlen + 1));
			for (unsigned int k = 0; k < s->len[i]; k++) {
				do
					p[k] = (uint8_t)(1 + rnd() % 255);
				while (p[k] == '/');
			}
			/* "." and ".." belong to the directory itself. */
			if (p[0] == '.' && (s->len[i] == 1 ||
					    (s->len[i] == 2 && p[1] == '.')))
				continue;
		} while (names_insert(s, i));
	}
	return 0;
}

/* n names of exactly 12 bytes: a two-byte UTF-8 letter, ten digits. */
static int
names_fixed(struct names *s, size_t n)
{
	if (names_alloc(s, n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char digits[16];

		snprintf(digits, sizeof(digits), "%010zu", i);
		s->buf[i * 255] = 0xc3;
		s->buf[i * 255 + 1] = 0xa9;
		memcpy(s->buf + i * 255 + 2, digits, 10);
		s->len[i] = 12;
	}
	return 0;
}

static void
names_free(struct names *s)
{
	free(s->buf);
	free(s->len);
	free(s->set);
}

/* --- the thresholds, computed from the format rules for 12-byte names --- */

#define FIXLEN		12

static uint32_t
entsize(unsigned int namelen)
{
	return (8 + 1 + namelen + 1 + 2 + 7) & ~7u;
}

/* Data blocks n equal entries take, packed. */
static uint32_t
ndata_for(uint32_t n, uint32_t bs)
{
	uint32_t es = entsize(FIXLEN);
	uint32_t c0 = (bs - 96) / es, c = (bs - 64) / es;

	if (n <= c0)
		return 1;
	return 1 + (n - c0 + c - 1) / c;
}

struct thresholds {
	uint32_t	sf, block, leaf, oneleaf;	/* largest n of each */
};

static void
thresholds(uint32_t lit, uint32_t bs, struct thresholds *t)
{
	uint32_t es = entsize(FIXLEN), n;

	/* short form: 6-byte header, entries of 3 + name + ftype + 4 */
	t->sf = (lit - 6) / (3 + FIXLEN + 1 + 4);
	/* block: header, "." and "..", entries, n + 2 leaf entries, tail */
	t->block = (bs - 64 - 32 - 8 - 16) / (es + 8);
	/* leaf: header, n + 2 leaf entries, a best per data block, tail */
	for (n = t->block + 1;
	     64 + 8 * (n + 3) + 2 * ndata_for(n + 1, bs) + 4 <= bs; n++)
		;
	t->leaf = n;
	/* node with one leaf: n + 2 entries fill the leaf */
	t->oneleaf = (bs - 64) / 8 - 2;
}

static int
die(const char *what, int err)
{
	fprintf(stderr, "xk_bld_dirtest: %s: %s\n", what, xk_strerror(err));
	return 1;
}

struct ctx {
	struct xk_bld	*b;
	uint64_t	root;
	FILE		*list;
	const char	*outdir;
	struct xk_bld_dirent *rootents;
	size_t		nroot;
	char		(*rootnames)[32];
};

/* Directory `name` under the root holding the names of s. */
static int
make_dir(struct ctx *c, const char *name, const struct names *s,
	 const char *expect, int with_xattr)
{
	struct xk_bld_dirent *ents = calloc(s->n + 1, sizeof(*ents));
	struct xk_bld_inode in;
	char path[4096];
	uint64_t dino;
	FILE *f;
	int err;

	if (!ents)
		return -ENOMEM;
	err = xk_bld_ialloc(c->b, c->root, 1, &dino);
	if (err)
		goto out;
	snprintf(path, sizeof(path), "%s/%s.names", c->outdir, name);
	f = fopen(path, "w");
	if (!f) {
		err = -errno;
		goto out;
	}
	for (size_t i = 0; i < s->n && !err; i++) {
		uint64_t ino;

		err = xk_bld_ialloc(c->b, dino, 0, &ino);
		if (err)
			break;
		xk_bld_inode_init(c->b, &in, ino, XK_S_IFREG | 0644);
		err = xk_bld_inode_write(c->b, &in);
		ents[i] = (struct xk_bld_dirent){ s->buf + i * 255, s->len[i],
						  XK_DIR3_FT_REG_FILE, ino };
		for (unsigned int k = 0; k < s->len[i]; k++)
			fprintf(f, "%02x", s->buf[i * 255 + k]);
		fputc('\n', f);
	}
	fclose(f);
	if (err)
		goto out;
	xk_bld_inode_init(c->b, &in, dino, XK_S_IFDIR | 0755);
	in.nlink = 2;
	if (with_xattr) {
		/* One small attribute first: the short form then has less. */
		struct xk_bld_xattr xa = { 0, (const uint8_t *)"a", 1,
					   (const uint8_t *)"b", 1 };

		err = xk_bld_attrs(c->b, &in, &xa, 1);
		if (err)
			goto out;
	}
	err = xk_bld_dir(c->b, &in, c->root, ents, s->n);
	if (!err)
		err = xk_bld_inode_write(c->b, &in);
	if (err)
		goto out;
	snprintf(c->rootnames[c->nroot], 32, "%s", name);
	c->rootents[c->nroot] = (struct xk_bld_dirent){
		(const uint8_t *)c->rootnames[c->nroot],
		(uint8_t)strlen(name), XK_DIR3_FT_DIR, dino };
	c->nroot++;
	fprintf(c->list, "%s %zu %s\n", name, s->n, expect);
out:
	free(ents);
	return err;
}

int
main(int argc, char **argv)
{
	struct xk_mount *mp;
	struct xk_fail f;
	struct xk_bld_inode in;
	struct thresholds t;
	struct names s;
	struct ctx c;
	char path[4096], rootnames[32][32];
	struct xk_bld_dirent rootents[32];
	int scale = 1, err;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: xk_bld_dirtest IMAGE OUTDIR [SCALE]\n");
		return 2;
	}
	if (argc == 4)
		scale = atoi(argv[3]);
	err = xk_mount_open(argv[1], 0, &mp, &f);
	if (err)
		return die("open", err);
	memset(&c, 0, sizeof(c));
	err = xk_bld_open(mp, &c.b);
	if (err)
		return die("xk_bld_open", err);
	xk_bld_set_time(c.b, 1700000000, 0);
	c.root = xk_bld_rootino(c.b);
	c.outdir = argv[2];
	c.rootents = rootents;
	c.rootnames = rootnames;
	snprintf(path, sizeof(path), "%s/dirs", argv[2]);
	c.list = fopen(path, "w");
	if (!c.list)
		return die(path, -errno);
	thresholds(xk_bld_literal_size(c.b), mp->g.dirblksize, &t);

#define DIR_RANDOM(nm, n, lo, hi, fmt)					\
	do {								\
		if (names_random(&s, (n), (lo), (hi)))			\
			return die("names", -ENOMEM);			\
		err = make_dir(&c, (nm), &s, (fmt), 0);			\
		names_free(&s);						\
		if (err)						\
			return die(nm, err);				\
	} while (0)
#define DIR_FIXED(nm, n, fmt)						\
	do {								\
		if (names_fixed(&s, (n)))				\
			return die("names", -ENOMEM);			\
		err = make_dir(&c, (nm), &s, (fmt), 0);			\
		names_free(&s);						\
		if (err)						\
			return die(nm, err);				\
	} while (0)

	DIR_RANDOM("e0", 0, 1, 1, "local");
	DIR_RANDOM("s5", 5, 1, 20, "local");
	DIR_RANDOM("b5", 5, 200, 255, "block");
	DIR_RANDOM("l500", 500, 1, 30, "leaf");
	DIR_RANDOM("n5000", 5000, 1, 255, "node2");
	if (scale)
		DIR_RANDOM("n50000", 50000, 128, 255, "node2");
	DIR_FIXED("t_sf", t.sf, "local");
	DIR_FIXED("t_sf1", t.sf + 1, "block");
	DIR_FIXED("t_block", t.block, "block");
	DIR_FIXED("t_block1", t.block + 1, "leaf");
	DIR_FIXED("t_leaf", t.leaf, "leaf");
	DIR_FIXED("t_leaf1", t.leaf + 1, "node");
	DIR_FIXED("t_node", t.oneleaf, "node");
	DIR_FIXED("t_node1", t.oneleaf + 1, "node2");
	/*
	 * Beside a small attr fork the short form stops where the attr
	 * fork would keep room for a two-pointer bmbt root.
	 */
	{
		uint32_t lit = xk_bld_literal_size(c.b);
		uint32_t nsf = (((lit - 36) & ~7u) - 6) / (3 + FIXLEN + 1 + 4);

		for (int k = 0; k < 2; k++) {
			if (names_fixed(&s, nsf + (uint32_t)k))
				return die("names", -ENOMEM);
			err = make_dir(&c, k ? "a_sf1" : "a_sf", &s,
				       k ? "block" : "local", 1);
			names_free(&s);
			if (err)
				return die("a_sf", err);
		}
	}
	fclose(c.list);

	/* The root lists the directories. */
	xk_bld_inode_init(c.b, &in, c.root, XK_S_IFDIR | 0755);
	in.nlink = 2 + (uint32_t)c.nroot;
	err = xk_bld_dir(c.b, &in, c.root, c.rootents, c.nroot);
	if (!err)
		err = xk_bld_inode_write(c.b, &in);
	if (err)
		return die("root", err);
	err = xk_bld_commit(c.b);
	if (err)
		return die("commit", err);
	xk_bld_free(c.b);
	err = xk_mount_close(mp);
	if (err)
		return die("close", err);
	return 0;
}
