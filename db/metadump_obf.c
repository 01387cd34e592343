// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Rewriting metadata for a metadump: zeroing stale bytes (the parts of a
 * block no structure describes, which may hold old file names or data)
 * and obfuscating what identifies users -- directory entry names, user
 * xattr names and values, symlink targets -- while keeping every block
 * valid: a new name has the length and the directory/attribute hash of
 * the old one, so leaf and node hash entries still index it, and a block
 * whose CRC was valid gets a fresh CRC.
 *
 * The name solver.  xk_da_hashname is linear over GF(2): each byte is
 * shifted and rotated into the hash and the results are XORed, so the
 * hash of a name is the XOR of the contributions of its individual bits.
 * We fill all but the last k bytes with random letters and digits, then
 * treat the low 7 (or 8) bits of the last k bytes as unknowns: the
 * contribution of each unknown bit is one 32-bit column, the required
 * sum is the old hash XORed with the hash of the random prefix, and
 * Gaussian elimination gives one solution plus a basis of the null space.
 * Random null-space combinations then give many candidate tails; we keep
 * the first whose bytes are printable, not '/', and which differs from
 * the old name and from every name already given out in the directory.
 *
 * Every count and offset read from the block is checked against its
 * length before use; a structure that does not add up is left alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/attr.h>
#include <xfskit/format/da.h>
#include <xfskit/format/dinode.h>
#include <xfskit/format/dir.h>
#include <xfskit/format/symlink.h>

#include "metadump.h"

#define INODE_MAGIC	0x494e		/* "IN" */
#define OBF_TAIL	6		/* bytes solved for */
#define OBF_PREFIXES	64		/* random prefixes tried */
#define OBF_TAILS	64		/* null-space picks per prefix */

uint64_t
md_rand(struct md_rng *r)
{
	/* xorshift64*: plenty for picking names, not for secrets */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

/* ---- names given out in one directory ---- */

static uint64_t
name_key(const uint8_t *name, unsigned int len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (unsigned int i = 0; i < len; i++) {
		h ^= name[i];
		h *= 0x100000001b3ULL;
	}
	h ^= len;
	return h ? h : 1;
}

void
md_nameset_reset(struct md_nameset *ns)
{
	if (ns->h && ns->n)
		memset(ns->h, 0, ns->cap * sizeof(*ns->h));
	ns->n = 0;
}

void
md_nameset_free(struct md_nameset *ns)
{
	free(ns->h);
	memset(ns, 0, sizeof(*ns));
}

static int
nameset_has(const struct md_nameset *ns, uint64_t k)
{
	if (!ns->cap)
		return 0;
	for (size_t i = k & (ns->cap - 1); ns->h[i];
	     i = (i + 1) & (ns->cap - 1))
		if (ns->h[i] == k)
			return 1;
	return 0;
}

/* Add a key; on memory shortage the set just stops growing. */
static void
nameset_add(struct md_nameset *ns, uint64_t k)
{
	if ((ns->n + 1) * 2 > ns->cap) {
		size_t ncap = ns->cap ? ns->cap * 2 : 64;
		uint64_t *nh = calloc(ncap, sizeof(*nh));

		if (!nh)
			return;
		for (size_t i = 0; i < ns->cap; i++) {
			size_t j;

			if (!ns->h[i])
				continue;
			for (j = ns->h[i] & (ncap - 1); nh[j];
			     j = (j + 1) & (ncap - 1))
				;
			nh[j] = ns->h[i];
		}
		free(ns->h);
		ns->h = nh;
		ns->cap = ncap;
	}
	for (size_t i = k & (ns->cap - 1);; i = (i + 1) & (ns->cap - 1)) {
		if (ns->h[i] == k)
			return;
		if (!ns->h[i]) {
			ns->h[i] = k;
			ns->n++;
			return;
		}
	}
}

/* ---- the solver ---- */

struct gf2 {
	uint32_t	piv[32];	/* reduced column with top bit b */
	uint64_t	pivmix[32];	/* which unknowns XOR to it */
	uint64_t	null[64];	/* null-space basis */
	unsigned int	nnull;
};

static void
gf2_build(struct gf2 *g, const uint32_t *cols, unsigned int n)
{
	memset(g, 0, sizeof(*g));
	for (unsigned int i = 0; i < n; i++) {
		uint32_t c = cols[i];
		uint64_t m = 1ULL << i;

		for (int b = 31; b >= 0 && c; b--) {
			if (!((c >> b) & 1))
				continue;
			if (!g->piv[b]) {
				g->piv[b] = c;
				g->pivmix[b] = m;
				c = 0;
				m = 0;
				break;
			}
			c ^= g->piv[b];
			m ^= g->pivmix[b];
		}
		if (m)
			g->null[g->nnull++] = m;
	}
}

/* One x with sum of columns in x == rhs; -1 when rhs is out of reach. */
static int
gf2_solve(const struct gf2 *g, uint32_t rhs, uint64_t *x)
{
	*x = 0;
	for (int b = 31; b >= 0; b--) {
		if (!((rhs >> b) & 1))
			continue;
		if (!g->piv[b])
			return -1;
		rhs ^= g->piv[b];
		*x ^= g->pivmix[b];
	}
	return 0;
}

static int
byte_ok(uint8_t c, int wide)
{
	if (c == '/')
		return 0;
	if (c >= 0x21 && c <= 0x7e)
		return 1;
	return wide && c >= 0x80 && c != 0xff;
}

static const char alnum[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

static int
try_width(struct md_obf *ob, uint8_t *name, unsigned int len, int wide)
{
	unsigned int bits = wide ? 8 : 7;
	unsigned int k = len < OBF_TAIL ? len : OBF_TAIL;
	unsigned int nun = k * bits, pre = len - k;
	uint32_t target = xk_da_hashname(name, (int)len);
	uint32_t cols[64];
	uint8_t cand[256];
	struct gf2 g;

	for (unsigned int i = 0; i < nun; i++) {
		memset(cand, 0, len);
		cand[pre + i / bits] = (uint8_t)(1u << (i % bits));
		cols[i] = xk_da_hashname(cand, (int)len);
	}
	gf2_build(&g, cols, nun);
	for (int p = 0; p < OBF_PREFIXES; p++) {
		uint64_t x0;

		for (unsigned int i = 0; i < pre; i++)
			cand[i] = (uint8_t)alnum[md_rand(&ob->rng) %
						 (sizeof(alnum) - 1)];
		memset(cand + pre, 0, k);
		if (gf2_solve(&g, target ^ xk_da_hashname(cand, (int)len),
			      &x0))
			continue;
		for (int t = 0; t < OBF_TAILS; t++) {
			uint64_t x = x0, r = md_rand(&ob->rng);
			unsigned int i;

			for (i = 0; i < g.nnull; i++)
				if ((r >> (i % 64)) & 1)
					x ^= g.null[i];
			for (i = 0; i < k; i++) {
				cand[pre + i] = (uint8_t)((x >> (i * bits)) &
						((1u << bits) - 1));
				if (!byte_ok(cand[pre + i], wide))
					break;
			}
			if (i < k || !memcmp(cand, name, len) ||
			    xk_da_hashname(cand, (int)len) != target ||
			    nameset_has(&ob->names, name_key(cand, len)))
				continue;
			memcpy(name, cand, len);
			nameset_add(&ob->names, name_key(name, len));
			return 0;
		}
		if (!pre)
			break;		/* no random part: nothing new to try */
	}
	return -ENOENT;
}

int
md_obf_name(struct md_obf *ob, uint8_t *name, unsigned int len)
{
	if (len < 5 || len > 255 ||
	    (len == 10 && !memcmp(name, "lost+found", 10))) {
		nameset_add(&ob->names, name_key(name, len));
		ob->nkept++;
		return -ENOENT;
	}
	if (!try_width(ob, name, len, 0) || !try_width(ob, name, len, 1)) {
		ob->nobf++;
		return 0;
	}
	nameset_add(&ob->names, name_key(name, len));
	ob->nkept++;
	return -ENOENT;
}

/* ---- helpers ---- */

/* Zero buf[from, to) and note whether anything changed. */
static void
zero_range(uint8_t *buf, size_t from, size_t to, int *changed)
{
	for (size_t i = from; i < to; i++) {
		if (buf[i]) {
			memset(buf + from, 0, to - from);
			*changed = 1;
			return;
		}
	}
}

static int
crc_valid(const uint8_t *buf, uint32_t len, size_t crc_off)
{
	return crc_off != XK_NO_CRC && crc_off + 4 <= len &&
	       xk_cksum_ok(buf, len, crc_off);
}

static int
finish(uint8_t *buf, uint32_t len, size_t crc_off, int was_ok, int changed)
{
	if (changed && was_ok)
		xk_cksum_update(buf, len, crc_off);
	return changed;
}

static void
obf_name(struct md_obf *ob, uint8_t *name, unsigned int len, int *changed)
{
	if (!ob->obfuscate)
		return;
	if ((len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return;
	if (!md_obf_name(ob, name, len))
		*changed = 1;
}

/* A symlink target: every byte but '/' becomes a random letter. */
static void
obf_path(struct md_obf *ob, uint8_t *p, size_t len, int *changed)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] == '/')
			continue;
		p[i] = (uint8_t)alnum[md_rand(&ob->rng) % 26];
		*changed = 1;
	}
}

static void
zero_value(uint8_t *v, size_t len, int *changed)
{
	zero_range(v, 0, len, changed);
}

/* Only user-namespace attributes are obfuscated (see md_fix_attr). */
static int
attr_is_user(uint8_t flags)
{
	return !(flags & (XK_ATTR_ROOT | XK_ATTR_SECURE | XK_ATTR_PARENT));
}

/* ---- per-structure rewriting ---- */

int
md_fix_header(struct md_obf *ob, uint8_t *buf, uint32_t len, size_t used,
	      size_t crc_off)
{
	int ok = crc_valid(buf, len, crc_off), changed = 0;

	if (!ob->zero_stale || used >= len)
		return 0;
	zero_range(buf, used, len, &changed);
	return finish(buf, len, crc_off, ok, changed);
}

/*
 * AGFL: the slots outside the circular range flfirst..fllast (the AGF
 * says which) hold stale block numbers; they become NULLAGBLOCK, as a
 * fresh AGFL has them.  Ranges that do not fit leave the sector alone.
 */
int
md_fix_agfl(struct md_obf *ob, uint8_t *buf, uint32_t len, uint32_t first,
	    uint32_t last, uint32_t count)
{
	size_t crc_off = offsetof(struct xk_agfl, agfl_crc);
	uint32_t n = (len - (uint32_t)sizeof(struct xk_agfl)) / 4;
	int ok, changed = 0;

	if (!ob->zero_stale || len < sizeof(struct xk_agfl) || first >= n ||
	    last >= n || count > n ||
	    (count && (last + n - first) % n + 1 != count))
		return 0;
	ok = crc_valid(buf, len, crc_off);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *slot = buf + sizeof(struct xk_agfl) + (size_t)i * 4;
		int live = count && (i + n - first) % n < count;

		if (!live && xk_get_be32(slot) != 0xffffffffu) {
			xk_put_be32(slot, 0xffffffffu);
			changed = 1;
		}
	}
	return finish(buf, len, crc_off, ok, changed);
}

/*
 * Btree block: 1. a leaf keeps its header and numrecs records; 2. a node
 * keeps its numrecs keys and numrecs pointers (the pointer array starts
 * after room for maxrecs keys); everything else is zeroed.  A numrecs
 * beyond what fits leaves the block alone.
 */
int
md_fix_btree(struct md_obf *ob, const struct xk_btree_ops *ops, uint8_t *buf,
	     uint32_t len)
{
	size_t crc_off = ops->buf_ops->crc_off, hdr = xk_btree_hdr_len(ops);
	int ok, changed = 0;
	uint32_t n, maxr;

	if (!ob->zero_stale || len <= hdr)
		return 0;
	ok = crc_valid(buf, len, crc_off);
	n = xk_btree_block_numrecs(buf);
	if (xk_btree_block_level(buf) == 0) {
		maxr = xk_btree_maxrecs(ops, len, 1);
		if (n > maxr)
			return 0;
		zero_range(buf, hdr + n * ops->rec_len, len, &changed);
	} else {
		size_t kend, p0, pn;

		maxr = xk_btree_maxrecs(ops, len, 0);
		if (n > maxr)
			return 0;
		kend = (size_t)((uint8_t *)xk_btree_key(ops, buf, n) - buf);
		p0 = (size_t)((uint8_t *)xk_btree_ptr(ops, buf, maxr, 0) -
			      buf);
		pn = (size_t)((uint8_t *)xk_btree_ptr(ops, buf, maxr, n) -
			      buf);
		zero_range(buf, kend, p0, &changed);
		zero_range(buf, pn, len, &changed);
	}
	return finish(buf, len, crc_off, ok, changed);
}

/* Short-form directory in an inode fork of size bytes. */
static void
fix_sf_dir(struct md_obf *ob, uint8_t *d, size_t size, int *changed)
{
	const struct xk_dir2_sf_hdr *h = (const struct xk_dir2_sf_hdr *)d;
	int ftype = ob->mp->g.has_ftype;
	size_t p, hsz;

	if (size < 6)
		return;
	hsz = xk_dir2_sf_hdr_size(h->i8count);
	p = hsz;
	for (unsigned int i = 0; i < h->count; i++) {
		size_t nl, es;

		if (p + 3 > size)
			return;
		nl = d[p];
		es = 3 + nl + (ftype ? 1 : 0) +
		     (h->i8count ? XK_INO64_SIZE : XK_INO32_SIZE);
		if (!nl || p + es > size)
			return;
		obf_name(ob, d + p + 3, (unsigned int)nl, changed);
		p += es;
	}
}

/* Short-form attribute fork of size bytes. */
static void
fix_sf_attr(struct md_obf *ob, uint8_t *a, size_t size, size_t *used,
	    int *changed)
{
	size_t tot, p = sizeof(struct xk_attr_sf_hdr);
	unsigned int count;

	*used = size;
	if (size < 4)
		return;
	tot = xk_get_be16(a);
	count = a[2];
	if (tot < 4 || tot > size)
		return;
	*used = tot;
	for (unsigned int i = 0; i < count; i++) {
		size_t nl, vl;

		if (p + 3 > tot)
			return;
		nl = a[p];
		vl = a[p + 1];
		if (p + 3 + nl + vl > tot)
			return;
		if (ob->obfuscate && attr_is_user(a[p + 2])) {
			obf_name(ob, a + p + 3, (unsigned int)nl, changed);
			zero_value(a + p + 3 + nl, vl, changed);
		}
		p += 3 + nl + vl;
	}
}

/*
 * One inode (isize bytes): 1. only v3 inodes with the right magic are
 * touched; 2. a free inode (mode 0) keeps its core and loses its literal
 * area; 3. the data fork keeps di_size bytes (local), its extent records
 * (extents) or the device number, the attr fork its short-form length or
 * extent records; 4. the rest of each fork is zeroed; 5. short-form
 * directory names, local symlink targets and short-form user xattrs are
 * obfuscated.  A btree root and an inconsistent fork are left alone.
 */
int
md_fix_inode(struct md_obf *ob, uint8_t *buf, uint32_t isize)
{
	struct xk_dinode *dip = (struct xk_dinode *)buf;
	size_t core = XK_DINODE_CORE_SIZE, lit, fo, dsize, used;
	int ok, changed = 0;
	uint16_t mode;

	if (isize <= core || xk_be16_get(dip->di_magic) != INODE_MAGIC ||
	    dip->di_version < 3)
		return 0;
	ok = crc_valid(buf, isize, XK_DINODE_CRC_OFF);
	lit = isize - core;
	fo = (size_t)dip->di_forkoff << 3;
	mode = xk_be16_get(dip->di_mode);
	md_nameset_reset(&ob->names);
	if (mode == 0) {
		if (ob->zero_stale)
			zero_range(buf, core, isize, &changed);
		return finish(buf, isize, XK_DINODE_CRC_OFF, ok, changed);
	}
	if (fo >= lit)
		return 0;
	dsize = fo ? fo : lit;
	used = dsize;
	switch (dip->di_format) {
	case XK_DINODE_FMT_LOCAL: {
		uint64_t size = xk_be64_get(dip->di_size);

		if (size > dsize)
			break;
		used = (size_t)size;
		if ((mode & XK_S_IFMT) == XK_S_IFDIR)
			fix_sf_dir(ob, buf + core, used, &changed);
		else if ((mode & XK_S_IFMT) == XK_S_IFLNK && ob->obfuscate)
			obf_path(ob, buf + core, used, &changed);
		break;
	}
	case XK_DINODE_FMT_EXTENTS: {
		uint64_t n = xk_dinode_nextents(dip);

		if (n <= dsize / sizeof(struct xk_bmbt_rec))
			used = (size_t)n * sizeof(struct xk_bmbt_rec);
		break;
	}
	case XK_DINODE_FMT_DEV:
		used = 4;
		break;
	default:
		break;
	}
	if (ob->zero_stale)
		zero_range(buf, core + used, core + dsize, &changed);
	if (fo) {
		uint8_t *a = buf + core + fo;
		size_t asize = lit - fo;

		used = asize;
		if (dip->di_aformat == XK_DINODE_FMT_LOCAL) {
			fix_sf_attr(ob, a, asize, &used, &changed);
		} else if (dip->di_aformat == XK_DINODE_FMT_EXTENTS) {
			uint64_t n = xk_dinode_anextents(dip);

			if (n <= asize / sizeof(struct xk_bmbt_rec))
				used = (size_t)n * sizeof(struct xk_bmbt_rec);
		}
		if (ob->zero_stale)
			zero_range(a, used, asize, &changed);
	}
	return finish(buf, isize, XK_DINODE_CRC_OFF, ok, changed);
}

/* Interior da node (directories and attributes): entries past count. */
static int
fix_da_node(struct md_obf *ob, uint8_t *buf, uint32_t len)
{
	size_t hdr = sizeof(struct xk_da3_node_hdr), end;
	int ok = crc_valid(buf, len, XK_DA3_NODE_CRC_OFF), changed = 0;

	end = hdr + (size_t)xk_get_be16(buf + 56) *
		    sizeof(struct xk_da_node_entry);
	if (!ob->zero_stale || end > len)
		return 0;
	zero_range(buf, end, len, &changed);
	return finish(buf, len, XK_DA3_NODE_CRC_OFF, ok, changed);
}

/*
 * Data or block-format directory block: 1. walk the entries from the
 * header to the leaf array (block format) or the end; 2. a free region
 * keeps its tag, length and trailing offset, the rest is zeroed; 3. an
 * entry's name is obfuscated and its padding zeroed; 4. the walk stops
 * at the first region that does not fit.
 */
static int
fix_dir_data(struct md_obf *ob, uint8_t *buf, uint32_t len, int block)
{
	int ok = crc_valid(buf, len, XK_DIR3_DATA_CRC_OFF), changed = 0;
	int ftype = ob->mp->g.has_ftype;
	size_t p = sizeof(struct xk_dir3_data_hdr), end = len;

	if (block) {
		uint64_t count = xk_get_be32(buf + len - 8);

		if (count > (len - p - 8) / 8)
			return 0;
		end = len - 8 - count * 8;
	}
	while (p + 8 <= end) {
		if (xk_get_be16(buf + p) == XK_DIR2_DATA_FREE_TAG) {
			size_t l = xk_get_be16(buf + p + 2);

			if (l < 8 || l % 8 || p + l > end)
				break;
			if (ob->zero_stale)
				zero_range(buf, p + 4, p + l - 2, &changed);
			p += l;
		} else {
			size_t nl, es;

			if (p + sizeof(struct xk_dir2_data_entry) > end)
				break;
			nl = buf[p + 8];
			es = xk_dir3_data_entsize((unsigned int)nl, ftype);
			if (!nl || p + es > end)
				break;
			obf_name(ob, buf + p + 9, (unsigned int)nl, &changed);
			if (ob->zero_stale)
				zero_range(buf, p + 9 + nl + (ftype ? 1 : 0),
					   p + es - 2, &changed);
			p += es;
		}
	}
	return finish(buf, len, XK_DIR3_DATA_CRC_OFF, ok, changed);
}

int
md_fix_dir(struct md_obf *ob, uint8_t *buf, uint32_t len)
{
	size_t hdr = sizeof(struct xk_dir3_leaf_hdr), from, to;
	int ok, changed = 0;
	uint32_t magic32;
	uint16_t magic16;

	if (len < 64)
		return 0;
	magic32 = xk_get_be32(buf);
	magic16 = xk_get_be16(buf + 8);
	if (magic32 == XK_DIR3_BLOCK_MAGIC)
		return fix_dir_data(ob, buf, len, 1);
	if (magic32 == XK_DIR3_DATA_MAGIC)
		return fix_dir_data(ob, buf, len, 0);
	if (magic16 == XK_DA3_NODE_MAGIC)
		return fix_da_node(ob, buf, len);
	if (!ob->zero_stale)
		return 0;
	if (magic32 == XK_DIR3_FREE_MAGIC) {
		ok = crc_valid(buf, len, XK_DIR3_FREE_CRC_OFF);
		from = sizeof(struct xk_dir3_free_hdr) +
		       (size_t)xk_get_be32(buf + 52) * 2;
		if (from > len)
			return 0;
		zero_range(buf, from, len, &changed);
		return finish(buf, len, XK_DIR3_FREE_CRC_OFF, ok, changed);
	}
	if (magic16 != XK_DIR3_LEAF1_MAGIC && magic16 != XK_DIR3_LEAFN_MAGIC)
		return 0;
	ok = crc_valid(buf, len, XK_DIR3_LEAF_CRC_OFF);
	from = hdr + (size_t)xk_get_be16(buf + 56) * 8;
	to = len;
	if (magic16 == XK_DIR3_LEAF1_MAGIC) {
		uint64_t bests = xk_get_be32(buf + len - 4);

		if (bests * 2 + 4 > len)
			return 0;
		to = len - 4 - bests * 2;
	}
	if (from > to)
		return 0;
	zero_range(buf, from, to, &changed);
	return finish(buf, len, XK_DIR3_LEAF_CRC_OFF, ok, changed);
}

/*
 * Attribute leaf: 1. each entry's name record must lie after the entry
 * array and inside the block; 2. user-namespace names are obfuscated
 * (the hash is kept) and local values zeroed -- trusted and security
 * attributes (ACLs, labels) keep both, since checkers parse them;
 * 3. the gap between the entry array and firstused is zeroed.
 */
static int
fix_attr_leaf(struct md_obf *ob, uint8_t *buf, uint32_t len)
{
	int ok = crc_valid(buf, len, XK_ATTR3_LEAF_CRC_OFF), changed = 0;
	size_t hdr = sizeof(struct xk_attr3_leaf_hdr), ents, fu;
	unsigned int count = xk_get_be16(buf + 56);

	ents = hdr + (size_t)count * sizeof(struct xk_attr_leaf_entry);
	if (ents > len)
		return 0;
	for (unsigned int i = 0; ob->obfuscate && i < count; i++) {
		const uint8_t *e = buf + hdr + (size_t)i * 8;
		size_t ni = xk_get_be16(e + 4), nl, vl;
		uint8_t flags = e[6];

		if (ni < ents || ni >= len || !attr_is_user(flags))
			continue;
		if (flags & XK_ATTR_LOCAL) {
			if (ni + 3 > len)
				continue;
			vl = xk_get_be16(buf + ni);
			nl = buf[ni + 2];
			if (ni + 3 + nl + vl > len)
				continue;
			obf_name(ob, buf + ni + 3, (unsigned int)nl, &changed);
			zero_value(buf + ni + 3 + nl, vl, &changed);
		} else {
			if (ni + 9 > len)
				continue;
			nl = buf[ni + 8];
			if (ni + 9 + nl > len)
				continue;
			obf_name(ob, buf + ni + 9, (unsigned int)nl, &changed);
		}
	}
	fu = xk_get_be16(buf + 60);
	if (fu == 0 && len == 65536)
		fu = len;
	if (ob->zero_stale && fu >= ents && fu <= len)
		zero_range(buf, ents, fu, &changed);
	return finish(buf, len, XK_ATTR3_LEAF_CRC_OFF, ok, changed);
}

/*
 * Remote value block: every value is zeroed when obfuscating (the block
 * does not say which attribute it belongs to, so names in the trusted
 * and security namespaces lose their remote values too), and the bytes
 * after the value are stale.
 */
static int
fix_attr_rmt(struct md_obf *ob, uint8_t *buf, uint32_t len)
{
	int ok = crc_valid(buf, len, XK_ATTR3_RMT_CRC_OFF), changed = 0;
	size_t hdr = sizeof(struct xk_attr3_rmt_hdr);
	uint64_t bytes = xk_get_be32(buf + 8);

	if (bytes > len - hdr)
		return 0;
	if (ob->obfuscate)
		zero_range(buf, hdr, hdr + bytes, &changed);
	if (ob->zero_stale)
		zero_range(buf, hdr + bytes, len, &changed);
	return finish(buf, len, XK_ATTR3_RMT_CRC_OFF, ok, changed);
}

int
md_fix_attr(struct md_obf *ob, uint8_t *buf, uint32_t len)
{
	if (len < 80)
		return 0;
	if (xk_get_be32(buf) == XK_ATTR3_RMT_MAGIC)
		return fix_attr_rmt(ob, buf, len);
	if (xk_get_be16(buf + 8) == XK_ATTR3_LEAF_MAGIC)
		return fix_attr_leaf(ob, buf, len);
	if (xk_get_be16(buf + 8) == XK_DA3_NODE_MAGIC)
		return fix_da_node(ob, buf, len);
	return 0;
}

int
md_fix_symlink(struct md_obf *ob, uint8_t *buf, uint32_t len)
{
	size_t hdr = sizeof(struct xk_dsymlink_hdr);
	int ok, changed = 0;
	uint64_t bytes;

	if (len <= hdr || xk_get_be32(buf) != XK_SYMLINK_MAGIC)
		return 0;
	ok = crc_valid(buf, len, XK_SYMLINK_CRC_OFF);
	bytes = xk_get_be32(buf + 8);
	if (bytes > len - hdr)
		return 0;
	if (ob->obfuscate)
		obf_path(ob, buf + hdr, (size_t)bytes, &changed);
	if (ob->zero_stale)
		zero_range(buf, hdr + bytes, len, &changed);
	return finish(buf, len, XK_SYMLINK_CRC_OFF, ok, changed);
}
