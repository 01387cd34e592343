// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -p ARCHIVE: populate straight from a tar archive (plain, gzip, xz,
 * zstd or bzip2 compressed) through libarchive, in one pass.
 *
 * Entries arrive in archive order, their contents streaming past once,
 * so every non-directory inode is written as its entry is read: inode
 * allocated near its parent directory, xattrs, then the data (sparse
 * entries keep their holes: only the segments of the archive's sparse
 * map are written), then the inode.  Directories must wait until all
 * their entries are known; the tree of names (populate_tree.c) keeps
 * them, with their metadata, and pop_tree_write() writes them at the
 * end.  A directory the archive never lists is made with mode 0755,
 * owner 0:0 and the build time.
 *
 * Fidelity is the archive's: owner, mode, times with nanoseconds (pax),
 * symlinks, device nodes, FIFOs, hard links (link entries name an earlier
 * path), xattrs (SCHILY.xattr / LIBARCHIVE.xattr) and POSIX ACLs
 * (SCHILY.acl.*), converted to XFS's trusted.SGI_ACL_* values.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>

#include <xfskit/build_acl.h>

#include "populate.h"

/* Hard links from an archive are keyed by inode number in this "dev". */
#define TAR_LINK_DEV	1

struct tar_ctx {
	struct pop_ctx	*c;
	struct pop_tree	*t;
	struct archive	*a;
	const char	*archive;
	char		*pbuf;		/* path of the current entry */
	size_t		pbuf_len;
};

/* Data of the current entry as a byte stream: holes read as zeros. */
struct tar_reader {
	struct archive	*a;
	const void	*blk;
	size_t		blk_len;
	int64_t		blk_off;
	uint64_t	pos;
	int		eof;
};

static ssize_t
tar_read(void *vctx, void *buf, size_t n)
{
	struct tar_reader *r = vctx;
	uint8_t *out = buf;
	size_t done = 0;

	while (done < n) {
		uint64_t bstart = (uint64_t)r->blk_off;
		uint64_t bend = bstart + r->blk_len;
		size_t k;

		if (r->pos >= bend) {
			int rc;

			if (r->eof) {
				memset(out + done, 0, n - done);
				r->pos += n - done;
				return (ssize_t)n;
			}
			rc = archive_read_data_block(r->a, &r->blk,
						     &r->blk_len, &r->blk_off);
			if (rc == ARCHIVE_EOF) {
				r->eof = 1;
				r->blk_len = 0;
				r->blk_off = 0;
			} else if (rc < ARCHIVE_WARN || r->blk_off < 0) {
				return -EIO;
			}
			continue;
		}
		if (r->pos < bstart) {
			k = bstart - r->pos < n - done ?
			    (size_t)(bstart - r->pos) : n - done;
			memset(out + done, 0, k);
		} else {
			k = bend - r->pos < n - done ?
			    (size_t)(bend - r->pos) : n - done;
			memcpy(out + done, (const uint8_t *)r->blk +
			       (r->pos - bstart), k);
		}
		done += k;
		r->pos += k;
	}
	return (ssize_t)done;
}

struct seg {
	uint64_t	off, len;
};

static int
cmp_seg(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * Write the entry's data: the sparse map's segments (or the whole size),
 * widened to blocks of the new filesystem and merged where they then
 * touch, each run streamed through tar_read.
 */
static int
write_data(struct tar_ctx *tc, struct archive_entry *e,
	   struct xk_bld_inode *ip, const char *path)
{
	struct pop_ctx *c = tc->c;
	uint64_t size = (uint64_t)archive_entry_size(e);
	uint64_t bs = c->mp->g.blocksize;
	struct tar_reader r = { .a = tc->a };
	struct seg *segs = NULL;
	size_t nseg = 0;
	int cnt = archive_entry_sparse_reset(e), err = 0;

	if (cnt > 0) {
		la_int64_t off, len;

		segs = calloc((size_t)cnt, sizeof(*segs));
		if (!segs)
			return -ENOMEM;
		while (archive_entry_sparse_next(e, &off, &len) ==
		       ARCHIVE_OK && nseg < (size_t)cnt) {
			if (off < 0 || len <= 0 || (uint64_t)off >= size)
				continue;
			segs[nseg].off = (uint64_t)off;
			segs[nseg].len = (uint64_t)len;
			if (segs[nseg].off + segs[nseg].len > size)
				segs[nseg].len = size - segs[nseg].off;
			nseg++;
		}
		qsort(segs, nseg, sizeof(*segs), cmp_seg);
	} else if (size) {
		segs = calloc(1, sizeof(*segs));
		if (!segs)
			return -ENOMEM;
		segs[0].len = size;
		nseg = 1;
	}
	for (size_t i = 0; i < nseg && !err;) {
		uint64_t start = segs[i].off & ~(bs - 1);
		uint64_t end = (segs[i].off + segs[i].len + bs - 1) &
			       ~(bs - 1);

		if (start < r.pos)
			start = r.pos;
		for (i++; i < nseg && (segs[i].off & ~(bs - 1)) <= end; i++) {
			uint64_t e2 = (segs[i].off + segs[i].len + bs - 1) &
				      ~(bs - 1);

			if (e2 > end)
				end = e2;
		}
		if (end > size)
			end = size;
		if (end <= start)
			continue;
		r.pos = start;
		err = xk_bld_file_write_reader(c->b, ip, start, tar_read, &r,
					       end - start);
		if (err == -EIO && archive_errno(tc->a))
			fprintf(stderr, "xfskit-mkfs: %s: %s: %s\n",
				tc->archive, path,
				archive_error_string(tc->a));
		else if (err)
			pop_error(path, err, "copying its data");
		pop_progress(c, end - start);
	}
	free(segs);
	ip->size = size;
	return err;
}

static int
cmp_acl_ent(const void *a, const void *b)
{
	const uint8_t *x = a, *y = b;
	uint32_t tx = (uint32_t)x[0] | (uint32_t)x[1] << 8;
	uint32_t ty = (uint32_t)y[0] | (uint32_t)y[1] << 8;
	uint32_t ix, iy;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	ix = (uint32_t)x[4] | (uint32_t)x[5] << 8 | (uint32_t)x[6] << 16 |
	     (uint32_t)x[7] << 24;
	iy = (uint32_t)y[4] | (uint32_t)y[5] << 8 | (uint32_t)y[6] << 16 |
	     (uint32_t)y[7] << 24;
	return ix < iy ? -1 : ix > iy;
}

static void
put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void
put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * One POSIX ACL of the entry in the Linux xattr form, then through the
 * common xattr path.  For the access ACL the permission bits of the mode
 * follow the ACL (with a mask, the group bits are the mask's).
 */
static int
add_acl(struct tar_ctx *tc, struct archive_entry *e, int type,
	struct pop_xattrs *xl, uint32_t *mode, const char *path)
{
	int cnt = archive_entry_acl_reset(e, type), atype, perm, tag, id;
	const char *name, *xname;
	uint8_t *v;
	size_t n = 0;
	int err;

	if (cnt <= 0)
		return 0;
	v = calloc(1, xk_acl_linux_size((size_t)cnt));
	if (!v)
		return -ENOMEM;
	put_le32(v, XK_POSIX_ACL_XATTR_VERSION);
	while (archive_entry_acl_next(e, type, &atype, &perm, &tag, &id,
				      &name) == ARCHIVE_OK &&
	       n < (size_t)cnt) {
		uint8_t *p = v + xk_acl_linux_size(n);
		uint16_t t;

		switch (tag) {
		case ARCHIVE_ENTRY_ACL_USER_OBJ:  t = XK_ACL_USER_OBJ; break;
		case ARCHIVE_ENTRY_ACL_USER:      t = XK_ACL_USER; break;
		case ARCHIVE_ENTRY_ACL_GROUP_OBJ: t = XK_ACL_GROUP_OBJ; break;
		case ARCHIVE_ENTRY_ACL_GROUP:     t = XK_ACL_GROUP; break;
		case ARCHIVE_ENTRY_ACL_MASK:      t = XK_ACL_MASK; break;
		case ARCHIVE_ENTRY_ACL_OTHER:     t = XK_ACL_OTHER; break;
		default:
			continue;	/* NFSv4 entries: no POSIX form */
		}
		put_le16(p, t);
		put_le16(p + 2, (uint16_t)(perm & 7));
		put_le32(p + 4, (t == XK_ACL_USER || t == XK_ACL_GROUP) ?
			 (uint32_t)id : XK_ACL_UNDEFINED_ID);
		n++;
	}
	qsort(v + XK_POSIX_ACL_XATTR_HDR, n, XK_POSIX_ACL_XATTR_ENT,
	      cmp_acl_ent);
	xname = type == ARCHIVE_ENTRY_ACL_TYPE_ACCESS ?
		XK_POSIX_ACL_XATTR_ACCESS : XK_POSIX_ACL_XATTR_DEFAULT;
	if (type == ARCHIVE_ENTRY_ACL_TYPE_ACCESS) {
		uint16_t pbits;

		if (xk_acl_linux_mode(v, xk_acl_linux_size(n), &pbits) >= 0)
			*mode = (*mode & ~0777u) | (pbits & 0777u);
	}
	err = pop_xattr_add(tc->c, xl, path, xname, v, xk_acl_linux_size(n));
	free(v);
	return err > 0 ? 0 : err;
}

static int
entry_meta(struct tar_ctx *tc, struct archive_entry *e, struct pop_meta *m,
	   struct pop_xattrs *xl, const char *path)
{
	const char *name;
	const void *val;
	size_t len;
	int err = 0, have_access = 0, have_default = 0;

	memset(m, 0, sizeof(*m));
	m->mode = (uint32_t)archive_entry_filetype(e) |
		  ((uint32_t)archive_entry_perm(e) & 07777);
	m->uid = (uint32_t)archive_entry_uid(e);
	m->gid = (uint32_t)archive_entry_gid(e);
	m->mtime_sec = archive_entry_mtime(e);
	m->mtime_nsec = (uint32_t)archive_entry_mtime_nsec(e);
	m->atime_sec = m->mtime_sec;
	m->atime_nsec = m->mtime_nsec;
	if (archive_entry_atime_is_set(e)) {
		m->atime_sec = archive_entry_atime(e);
		m->atime_nsec = (uint32_t)archive_entry_atime_nsec(e);
	}
	m->ctime_sec = m->mtime_sec;
	m->ctime_nsec = m->mtime_nsec;
	if (archive_entry_ctime_is_set(e)) {
		m->ctime_sec = archive_entry_ctime(e);
		m->ctime_nsec = (uint32_t)archive_entry_ctime_nsec(e);
	}
	m->rdev_major = (uint32_t)archive_entry_rdevmajor(e);
	m->rdev_minor = (uint32_t)archive_entry_rdevminor(e);
	if (!pop_ftype(m->mode)) {
		fprintf(stderr, "xfskit-mkfs: %s: %s: unknown file type\n",
			tc->archive, path);
		return -EINVAL;
	}
	archive_entry_xattr_reset(e);
	while (!err &&
	       archive_entry_xattr_next(e, &name, &val, &len) == ARCHIVE_OK) {
		enum xk_acl_type t = xk_acl_linux_name_type(name,
							    strlen(name));

		/* GNU tar may keep an ACL both as an xattr and as text. */
		have_access |= t == XK_ACL_TYPE_ACCESS;
		have_default |= t == XK_ACL_TYPE_DEFAULT;
		/*
		 * libarchive folds the ACL's group entry into the mode; the
		 * mode's group bits are the mask's when there is one.
		 */
		if (t == XK_ACL_TYPE_ACCESS) {
			uint16_t pbits;

			if (xk_acl_linux_mode(val, len, &pbits) >= 0)
				m->mode = (m->mode & ~0777u) | (pbits & 0777u);
		}
		err = pop_xattr_add(tc->c, xl, path, name, val, len);
		if (err > 0)
			err = 0;
	}
	if (!err && !have_access)
		err = add_acl(tc, e, ARCHIVE_ENTRY_ACL_TYPE_ACCESS, xl,
			      &m->mode, path);
	if (!err && !have_default && S_ISDIR(m->mode))
		err = add_acl(tc, e, ARCHIVE_ENTRY_ACL_TYPE_DEFAULT, xl,
			      &m->mode, path);
	return err;
}

/*
 * Walk (creating missing directories when create is set) to the parent
 * of the entry's last component; *last and *lastlen get that component
 * (length 0 for the root itself).
 */
static int
resolve(struct tar_ctx *tc, const char *p, int create, struct pnode **dirp,
	const char **last, size_t *lastlen)
{
	struct pnode *d = pop_tree_root(tc->t);
	const char *s = p;

	*last = "";
	*lastlen = 0;
	for (;;) {
		const char *end;
		size_t len;
		struct pnode *n;

		while (*s == '/')
			s++;
		end = strchr(s, '/');
		len = end ? (size_t)(end - s) : strlen(s);
		if (len == 1 && s[0] == '.') {
			s += len;
			if (!*s)
				break;
			continue;
		}
		if (len == 0)
			break;
		if (pop_check_name(p, s, len))
			return -EINVAL;
		{
			const char *t = s + len;

			while (*t == '/' || (t[0] == '.' &&
					     (t[1] == '/' || !t[1])))
				t++;
			if (!*t) {
				*last = s;
				*lastlen = len;
				break;
			}
		}
		n = pop_tree_lookup(tc->t, d, s, len);
		if (!n) {
			int err;

			if (!create) {
				fprintf(stderr, "xfskit-mkfs: %s: %s: a "
					"directory on the path is not in the "
					"archive\n", tc->archive, p);
				return -ENOENT;
			}
			n = pop_tree_add(tc->t, d, s, len);
			if (!n)
				return -ENOMEM;
			n->meta.mode = S_IFDIR | 0755;
			n->meta.atime_sec = n->meta.mtime_sec =
				n->meta.ctime_sec = tc->c->now_sec;
			n->meta.atime_nsec = n->meta.mtime_nsec =
				n->meta.ctime_nsec = tc->c->now_nsec;
			err = xk_bld_ialloc(tc->c->b, d->ino, 1, &n->ino);
			if (err) {
				pop_error(p, err, "allocating an inode");
				return err;
			}
		}
		if (!S_ISDIR(n->meta.mode) || n->link) {
			fprintf(stderr, "xfskit-mkfs: %s: %s: a component of "
				"the path is not a directory\n", tc->archive,
				p);
			return -ENOTDIR;
		}
		d = n;
		s += len;
	}
	*dirp = d;
	return 0;
}

static int
hard_link(struct tar_ctx *tc, struct pnode *d, const char *name, size_t len,
	  const char *target, const char *path)
{
	const char *tl;
	struct pnode *td, *tn, *n;
	size_t tlen;
	int err = resolve(tc, target, 0, &td, &tl, &tlen);

	if (err)
		return err;
	tn = tlen ? pop_tree_lookup(tc->t, td, tl, tlen) : NULL;
	while (tn && tn->link)
		tn = tn->link;
	if (!tn || S_ISDIR(tn->meta.mode)) {
		fprintf(stderr, "xfskit-mkfs: %s: %s: the hard link's target "
			"%s is not an earlier non-directory entry\n",
			tc->archive, path, target);
		return -EINVAL;
	}
	n = pop_tree_add(tc->t, d, name, len);
	if (!n)
		return -ENOMEM;
	n->link = tn;
	n->written = 1;
	if (!pop_link_find(tc->c, TAR_LINK_DEV, tn->ino, &n->ino)) {
		err = pop_link_add(tc->c, TAR_LINK_DEV, tn->ino, tn->ino);
		if (!err)
			pop_link_find(tc->c, TAR_LINK_DEV, tn->ino, &n->ino);
	}
	return err;
}

static int
one_entry(struct tar_ctx *tc, struct archive_entry *e)
{
	struct pop_ctx *c = tc->c;
	const char *path = archive_entry_pathname(e), *name, *hl;
	struct pop_xattrs xl = { 0 };
	struct xk_bld_inode ip;
	struct pnode *d, *n;
	struct pop_meta m;
	size_t len;
	int err;

	if (!path) {
		fprintf(stderr, "xfskit-mkfs: %s: an entry has no usable "
			"name\n", tc->archive);
		return -EINVAL;
	}
	if (strstr(path, "/../") || !strncmp(path, "../", 3) ||
	    !strcmp(path, "..") ||
	    (strlen(path) >= 3 && !strcmp(path + strlen(path) - 3, "/.."))) {
		fprintf(stderr, "xfskit-mkfs: %s: %s: names with \"..\" "
			"are refused\n", tc->archive, path);
		return -EINVAL;
	}
	err = resolve(tc, path, 1, &d, &name, &len);
	if (err)
		return err;
	hl = archive_entry_hardlink(e);
	if (hl && len)
		return hard_link(tc, d, name, len, hl, path);
	err = entry_meta(tc, e, &m, &xl, path);
	if (err)
		goto out;
	n = len ? pop_tree_lookup(tc->t, d, name, len) : d;
	if (S_ISDIR(m.mode)) {
		if (n && !S_ISDIR(n->meta.mode)) {
			fprintf(stderr, "xfskit-mkfs: %s: %s: listed as a "
				"file and as a directory\n", tc->archive,
				path);
			err = -EINVAL;
			goto out;
		}
		if (!n) {
			n = pop_tree_add(tc->t, d, name, len);
			if (!n) {
				err = -ENOMEM;
				goto out;
			}
			err = xk_bld_ialloc(c->b, d->ino, 1, &n->ino);
			if (err) {
				pop_error(path, err, "allocating its inode");
				goto out;
			}
		}
		/* Directories are written at the end: keep it all. */
		n->meta = m;
		pop_xattrs_reset(&n->xattrs);
		n->xattrs = xl;
		memset(&xl, 0, sizeof(xl));
		goto out;
	}
	if (n) {
		fprintf(stderr, "xfskit-mkfs: %s: %s: the name appears twice "
			"in the archive\n", tc->archive, path);
		err = -EEXIST;
		goto out;
	}
	n = pop_tree_add(tc->t, d, name, len);
	if (!n) {
		err = -ENOMEM;
		goto out;
	}
	n->meta = m;
	n->written = 1;
	err = xk_bld_ialloc(c->b, d->ino, 0, &n->ino);
	if (err) {
		pop_error(path, err, "allocating its inode");
		goto out;
	}
	pop_inode_begin(c, &ip, n->ino, &m);
	err = pop_attrs_write(c, &ip, &xl, path);
	if (!err && S_ISREG(m.mode))
		err = write_data(tc, e, &ip, path);
	else if (!err)
		err = pop_special(c, &ip, &m, archive_entry_symlink(e) ?
				  archive_entry_symlink(e) : "", path);
	if (!err)
		err = pop_inode_write(c, &ip, path);
out:
	pop_xattrs_reset(&xl);
	return err;
}

static int
tar_leaf(struct pop_ctx *c, struct pnode *n, const char *path)
{
	(void)c;
	(void)n;
	fprintf(stderr, "xfskit-mkfs: %s: internal error: not written\n",
		path);
	return -EIO;
}

int
pop_from_tar(struct pop_ctx *c, const char *path)
{
	struct tar_ctx tc = { .c = c, .archive = path };
	struct archive_entry *e;
	struct pnode *root;
	int err = 0, r;

	tc.t = pop_tree_new();
	tc.a = archive_read_new();
	if (!tc.t || !tc.a) {
		err = -ENOMEM;
		goto out;
	}
	root = pop_tree_root(tc.t);
	root->ino = xk_bld_rootino(c->b);
	root->meta.atime_sec = root->meta.mtime_sec = root->meta.ctime_sec =
		c->now_sec;
	root->meta.atime_nsec = root->meta.mtime_nsec =
		root->meta.ctime_nsec = c->now_nsec;
	archive_read_support_filter_all(tc.a);
	archive_read_support_format_tar(tc.a);
	archive_read_support_format_gnutar(tc.a);
	if (archive_read_open_filename(tc.a, path, 1 << 16) != ARCHIVE_OK) {
		fprintf(stderr, "xfskit-mkfs: %s: %s\n", path,
			archive_error_string(tc.a));
		err = -EINVAL;
		goto out;
	}
	while ((r = archive_read_next_header(tc.a, &e)) == ARCHIVE_OK ||
	       r == ARCHIVE_WARN) {
		err = one_entry(&tc, e);
		if (err)
			goto out;
	}
	if (r != ARCHIVE_EOF) {
		fprintf(stderr, "xfskit-mkfs: %s: %s\n", path,
			archive_error_string(tc.a));
		err = -EINVAL;
		goto out;
	}
	err = pop_tree_write(c, tc.t, tar_leaf);
out:
	if (tc.a)
		archive_read_free(tc.a);
	pop_tree_free(tc.t);
	return err;
}
