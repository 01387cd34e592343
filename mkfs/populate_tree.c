// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An in-memory tree of names for the sources that do not arrive as a
 * directory hierarchy on disk: a protofile (parsed whole before the
 * device is touched) and a tar archive (whose entries come in any order,
 * with file contents that must be written as they stream past).  Nodes
 * hold metadata only.  A hash table on (parent, name) finds a child in
 * constant time, so an archive with 50,000 entries in one directory is
 * not quadratic.
 *
 * pop_tree_write() then writes the directories from the root down with
 * the same order and rules as the directory walk: entries sorted by
 * name, every child's inode allocated before its directory is written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "populate.h"

struct pop_tree {
	struct pnode	*root;
	struct pnode	**hash;
	size_t		hsize, hused;
};

static size_t
hash_of(const struct pnode *parent, const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)parent;

	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)name[i];
		h *= 1099511628211ull;
	}
	return (size_t)(h ^ (h >> 29));
}

struct pop_tree *
pop_tree_new(void)
{
	struct pop_tree *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->root = calloc(1, sizeof(*t->root));
	if (!t->root) {
		free(t);
		return NULL;
	}
	t->root->name = strdup("");
	if (!t->root->name) {
		free(t->root);
		free(t);
		return NULL;
	}
	t->root->meta.mode = S_IFDIR | 0755;
	return t;
}

static void
node_free(struct pnode *n)
{
	for (size_t i = 0; i < n->nkids; i++)
		node_free(n->kids[i]);
	free(n->kids);
	free(n->name);
	free(n->target);
	free(n->src);
	pop_xattrs_reset(&n->xattrs);
	free(n);
}

void
pop_tree_free(struct pop_tree *t)
{
	if (!t)
		return;
	node_free(t->root);
	free(t->hash);
	free(t);
}

struct pnode *
pop_tree_root(struct pop_tree *t)
{
	return t->root;
}

struct pnode *
pop_tree_lookup(struct pop_tree *t, struct pnode *parent, const char *name,
		size_t len)
{
	if (!t->hsize)
		return NULL;
	for (size_t i = hash_of(parent, name, len) & (t->hsize - 1);;
	     i = (i + 1) & (t->hsize - 1)) {
		struct pnode *n = t->hash[i];

		if (!n)
			return NULL;
		if (n->parent == parent && n->namelen == len &&
		    !memcmp(n->name, name, len))
			return n;
	}
}

static void
hash_insert(struct pop_tree *t, struct pnode *n)
{
	size_t i;

	for (i = hash_of(n->parent, n->name, n->namelen) & (t->hsize - 1);
	     t->hash[i]; i = (i + 1) & (t->hsize - 1))
		;
	t->hash[i] = n;
}

static int
hash_grow(struct pop_tree *t)
{
	size_t osize = t->hsize, nsize = osize ? osize * 2 : 1024;
	struct pnode **old = t->hash;

	t->hash = calloc(nsize, sizeof(*t->hash));
	if (!t->hash) {
		t->hash = old;
		return -ENOMEM;
	}
	t->hsize = nsize;
	for (size_t i = 0; i < osize; i++)
		if (old[i])
			hash_insert(t, old[i]);
	free(old);
	return 0;
}

struct pnode *
pop_tree_add(struct pop_tree *t, struct pnode *parent, const char *name,
	     size_t len)
{
	struct pnode *n;

	if ((t->hused + 1) * 2 > t->hsize && hash_grow(t))
		return NULL;
	if (parent->nkids == parent->kcap) {
		size_t cap = parent->kcap ? parent->kcap * 2 : 4;
		struct pnode **nk = realloc(parent->kids, cap * sizeof(*nk));

		if (!nk)
			return NULL;
		parent->kids = nk;
		parent->kcap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->name = malloc(len + 1);
	if (!n->name) {
		free(n);
		return NULL;
	}
	memcpy(n->name, name, len);
	n->name[len] = '\0';
	n->namelen = len;
	n->parent = parent;
	parent->kids[parent->nkids++] = n;
	hash_insert(t, n);
	t->hused++;
	return n;
}

const char *
pop_node_path(const struct pnode *n, char *buf, size_t len)
{
	size_t pos = len - 1;

	buf[pos] = '\0';
	if (!n->parent) {
		snprintf(buf, len, "/");
		return buf;
	}
	for (; n && n->parent; n = n->parent) {
		if (n->namelen + 1 > pos)
			return buf + pos;	/* truncated at the front */
		pos -= n->namelen;
		memcpy(buf + pos, n->name, n->namelen);
		buf[--pos] = '/';
	}
	return buf + pos;
}

static int
cmp_node(const void *a, const void *b)
{
	const struct pnode *x = *(struct pnode *const *)a;
	const struct pnode *y = *(struct pnode *const *)b;
	size_t l = x->namelen < y->namelen ? x->namelen : y->namelen;
	int r = memcmp(x->name, y->name, l);

	if (r)
		return r;
	return x->namelen < y->namelen ? -1 : x->namelen > y->namelen;
}

/* The node that owns the inode a name refers to. */
static struct pnode *
owner_of(struct pnode *n)
{
	while (n->link)
		n = n->link;
	return n;
}

static int
write_tree_dir(struct pop_ctx *c, struct pnode *d, uint64_t parent,
	       pop_leaf_fn leaf, char *pbuf, size_t plen)
{
	struct xk_bld_dirent *ents = NULL;
	struct xk_bld_inode di;
	uint32_t nsub = 0;
	const char *path;
	int err = 0;

	if (d->nkids) {
		qsort(d->kids, d->nkids, sizeof(*d->kids), cmp_node);
		ents = calloc(d->nkids, sizeof(*ents));
		if (!ents)
			return -ENOMEM;
	}
	for (size_t i = 0; i < d->nkids && !err; i++) {
		struct pnode *k = d->kids[i], *o = owner_of(k);
		int isdir = S_ISDIR(o->meta.mode);

		if (!o->ino) {
			err = xk_bld_ialloc(c->b, d->ino, isdir, &o->ino);
			if (err)
				pop_error(pop_node_path(k, pbuf, plen), err,
					  "allocating its inode");
		}
		nsub += isdir && !k->link;
		ents[i].name = (const uint8_t *)k->name;
		ents[i].namelen = (uint8_t)k->namelen;
		ents[i].ftype = pop_ftype(o->meta.mode);
		ents[i].ino = o->ino;
	}
	path = pop_node_path(d, pbuf, plen);
	if (!err) {
		pop_inode_begin(c, &di, d->ino, &d->meta);
		err = pop_attrs_write(c, &di, &d->xattrs, path);
	}
	if (!err) {
		err = xk_bld_dir(c->b, &di, parent, ents, d->nkids);
		if (err)
			pop_error(path, err, "writing the directory");
	}
	if (!err) {
		di.nlink = 2 + nsub;
		err = pop_inode_write(c, &di, path);
	}
	free(ents);
	pop_xattrs_reset(&d->xattrs);
	d->written = 1;
	for (size_t i = 0; i < d->nkids && !err; i++) {
		struct pnode *k = d->kids[i];

		if (k->link || k->written)
			continue;
		if (S_ISDIR(k->meta.mode))
			err = write_tree_dir(c, k, d->ino, leaf, pbuf, plen);
		else
			err = leaf(c, k, pop_node_path(k, pbuf, plen));
		k->written = 1;
	}
	return err;
}

int
pop_tree_write(struct pop_ctx *c, struct pop_tree *t, pop_leaf_fn leaf)
{
	char *pbuf = malloc(8192);
	int err;

	if (!pbuf)
		return -ENOMEM;
	t->root->ino = xk_bld_rootino(c->b);
	err = write_tree_dir(c, t->root, t->root->ino, leaf, pbuf, 8192);
	free(pbuf);
	return err;
}
