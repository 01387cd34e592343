// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -p PROTOFILE: the prototype file of mkfs.xfs(8), with its semantics.
 * The file is a stream of tokens separated by blanks and newlines; a
 * token starting with ':' begins a comment that runs to the end of the
 * line.  In order:
 *
 *   1. a string, formerly the boot image: ignored;
 *   2. two numbers, formerly the block and inode counts: ignored;
 *   3. the root directory: mode uid gid, then its entries;
 *   4. each entry: name mode uid gid, then by type
 *        '-'  the path of the file whose contents and size are copied,
 *        'b' 'c'  the major and minor numbers,
 *        'l'  the symlink's target,
 *        'p'  nothing (a FIFO),
 *        'd'  its own entries, ended by the token '$'.
 *
 * The mode is six characters: the type (- b c d p l), 'u' or '-' for
 * setuid, 'g' or '-' for setgid, then three octal digits.  Like
 * mkfs.xfs, every inode gets the build time (now, or SOURCE_DATE_EPOCH)
 * for its times, and no xattrs.
 *
 * The whole file is parsed (and each source file checked readable)
 * before the device is touched, so a mistake costs nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "populate.h"

struct lexer {
	const char	*file;
	char		*buf;
	size_t		len, pos;
	unsigned int	line;		/* of the last token */
	unsigned int	pending;	/* a newline ended the last token */
};

/* The next token (NUL-terminated in place), or NULL at the end. */
static char *
next_token(struct lexer *lx)
{
	char *tok;

	lx->line += lx->pending;
	lx->pending = 0;
	for (;;) {
		while (lx->pos < lx->len &&
		       isspace((unsigned char)lx->buf[lx->pos])) {
			if (lx->buf[lx->pos] == '\n')
				lx->line++;
			lx->pos++;
		}
		if (lx->pos >= lx->len)
			return NULL;
		if (lx->buf[lx->pos] != ':')
			break;
		/* A comment, up to (not past) the newline. */
		while (lx->pos < lx->len && lx->buf[lx->pos] != '\n')
			lx->pos++;
	}
	tok = lx->buf + lx->pos;
	while (lx->pos < lx->len && !isspace((unsigned char)lx->buf[lx->pos]))
		lx->pos++;
	if (lx->pos < lx->len) {
		/* The token is on this line; the next one is not. */
		lx->pending = lx->buf[lx->pos] == '\n';
		lx->buf[lx->pos++] = '\0';
	}
	return tok;
}

static int
perr(const struct lexer *lx, const char *fmt, const char *arg)
{
	fprintf(stderr, "xfskit-mkfs: %s: line %u: ", lx->file, lx->line);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return -EINVAL;
}

static char *
need_token(struct lexer *lx, const char *what)
{
	char *t = next_token(lx);

	if (!t)
		perr(lx, "the protofile ends where %s was expected", what);
	return t;
}

static int
get_num(struct lexer *lx, const char *what, uint32_t max, uint32_t *out)
{
	char *t = need_token(lx, what), *end;
	unsigned long long v;

	if (!t)
		return -EINVAL;
	errno = 0;
	v = strtoull(t, &end, 10);
	if (!isdigit((unsigned char)*t) || *end || errno || v > max)
		return perr(lx, "bad number \"%s\"", t);
	*out = (uint32_t)v;
	return 0;
}

/* "tug777": type, setuid, setgid, permissions. */
static int
parse_mode(struct lexer *lx, const char *s, uint32_t *mode)
{
	uint32_t m;

	if (strlen(s) != 6)
		return perr(lx, "bad mode \"%s\" (six characters: type, u or "
			    "-, g or -, three octal digits)", s);
	switch (s[0]) {
	case '-':	m = S_IFREG; break;
	case 'b':	m = S_IFBLK; break;
	case 'c':	m = S_IFCHR; break;
	case 'd':	m = S_IFDIR; break;
	case 'p':	m = S_IFIFO; break;
	case 'l':	m = S_IFLNK; break;
	default:
		return perr(lx, "bad file type in mode \"%s\" (one of - b c "
			    "d p l)", s);
	}
	if (s[1] == 'u')
		m |= S_ISUID;
	else if (s[1] != '-')
		return perr(lx, "bad setuid flag in mode \"%s\"", s);
	if (s[2] == 'g')
		m |= S_ISGID;
	else if (s[2] != '-')
		return perr(lx, "bad setgid flag in mode \"%s\"", s);
	for (int i = 3; i < 6; i++) {
		if (s[i] < '0' || s[i] > '7')
			return perr(lx, "bad permissions in mode \"%s\"", s);
		m |= (uint32_t)(s[i] - '0') << (3 * (5 - i));
	}
	*mode = m;
	return 0;
}

static int parse_dir(struct pop_ctx *c, struct lexer *lx,
		     struct pop_tree *t, struct pnode *d, unsigned int depth);

/* mode uid gid and the type's fields, into n. */
static int
parse_spec(struct pop_ctx *c, struct lexer *lx, struct pop_tree *t,
	   struct pnode *n, unsigned int depth)
{
	char *tok = need_token(lx, "a mode");
	struct stat st;
	int err;

	if (!tok)
		return -EINVAL;
	err = parse_mode(lx, tok, &n->meta.mode);
	if (!err)
		err = get_num(lx, "a user id", UINT32_MAX - 1, &n->meta.uid);
	if (!err)
		err = get_num(lx, "a group id", UINT32_MAX - 1, &n->meta.gid);
	if (err)
		return err;
	n->meta.atime_sec = n->meta.mtime_sec = n->meta.ctime_sec =
		c->now_sec;
	n->meta.atime_nsec = n->meta.mtime_nsec = n->meta.ctime_nsec =
		c->now_nsec;
	switch (n->meta.mode & S_IFMT) {
	case S_IFREG:
		tok = need_token(lx, "the file to copy");
		if (!tok)
			return -EINVAL;
		if (stat(tok, &st) || access(tok, R_OK))
			return perr(lx, "cannot read \"%s\"", tok);
		if (!S_ISREG(st.st_mode))
			return perr(lx, "\"%s\" is not a regular file", tok);
		n->src = strdup(tok);
		return n->src ? 0 : -ENOMEM;
	case S_IFBLK:
	case S_IFCHR:
		err = get_num(lx, "a major number", 4095, &n->meta.rdev_major);
		if (!err)
			err = get_num(lx, "a minor number", (1u << 20) - 1,
				      &n->meta.rdev_minor);
		return err;
	case S_IFLNK:
		tok = need_token(lx, "the symlink target");
		if (!tok)
			return -EINVAL;
		if (strlen(tok) > 1024)
			return perr(lx, "the symlink target is longer than "
				    "1024 bytes%s", "");
		n->target = strdup(tok);
		return n->target ? 0 : -ENOMEM;
	case S_IFDIR:
		return parse_dir(c, lx, t, n, depth + 1);
	}
	return 0;
}

static int
parse_dir(struct pop_ctx *c, struct lexer *lx, struct pop_tree *t,
	  struct pnode *d, unsigned int depth)
{
	char *tok;
	int err;

	if (depth > 4096)
		return perr(lx, "directories nested too deeply%s", "");
	while ((tok = need_token(lx, "a name or $")) != NULL) {
		size_t len = strlen(tok);
		struct pnode *n;

		if (!strcmp(tok, "$"))
			return 0;
		if (len > 255)
			return perr(lx, "the name \"%s\" is longer than 255 "
				    "bytes", tok);
		if (strchr(tok, '/') || !strcmp(tok, ".") ||
		    !strcmp(tok, ".."))
			return perr(lx, "\"%s\" is not a valid file name", tok);
		if (pop_tree_lookup(t, d, tok, len))
			return perr(lx, "\"%s\" appears twice in one "
				    "directory", tok);
		n = pop_tree_add(t, d, tok, len);
		if (!n)
			return -ENOMEM;
		err = parse_spec(c, lx, t, n, depth);
		if (err)
			return err;
	}
	return -EINVAL;
}

/* Parse path into c->proto_tree; 0 or a negative errno (printed). */
int
pop_proto_parse(struct pop_ctx *c, const char *path)
{
	struct lexer lx = { .file = path, .line = 1 };
	struct pop_tree *t;
	uint32_t dummy;
	struct stat st;
	int fd, err;

	pop_time_now(&c->now_sec, &c->now_nsec, &c->sde);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "xfskit-mkfs: cannot read %s: %s\n", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	lx.len = (size_t)st.st_size;
	lx.buf = malloc(lx.len + 1);
	if (!lx.buf) {
		close(fd);
		return -ENOMEM;
	}
	for (size_t got = 0; got < lx.len;) {
		ssize_t r = read(fd, lx.buf + got, lx.len - got);

		if (r <= 0) {
			fprintf(stderr, "xfskit-mkfs: cannot read %s: %s\n",
				path, r < 0 ? strerror(errno) : "short read");
			close(fd);
			free(lx.buf);
			return -EIO;
		}
		got += (size_t)r;
	}
	close(fd);
	lx.buf[lx.len] = '\0';
	if (memchr(lx.buf, '\0', lx.len)) {
		fprintf(stderr, "xfskit-mkfs: %s is not a protofile (it "
			"holds NUL bytes)\n", path);
		free(lx.buf);
		return -EINVAL;
	}
	t = pop_tree_new();
	if (!t) {
		free(lx.buf);
		return -ENOMEM;
	}
	err = need_token(&lx, "the boot image name") ? 0 : -EINVAL;
	if (!err)
		err = get_num(&lx, "the block count", UINT32_MAX, &dummy);
	if (!err)
		err = get_num(&lx, "the inode count", UINT32_MAX, &dummy);
	if (!err) {
		struct pnode *r = pop_tree_root(t);

		err = parse_spec(c, &lx, t, r, 0);
		if (!err && !S_ISDIR(r->meta.mode))
			err = perr(&lx, "the root must be a directory%s", "");
	}
	free(lx.buf);
	if (err) {
		pop_tree_free(t);
		return err;
	}
	c->proto_tree = t;
	return 0;
}

static int
proto_leaf(struct pop_ctx *c, struct pnode *n, const char *path)
{
	struct xk_bld_inode ip;
	struct stat st;
	int err, fd = -1;

	pop_inode_begin(c, &ip, n->ino, &n->meta);
	if (S_ISREG(n->meta.mode)) {
		fd = open(n->src, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			err = -errno;
			pop_error(n->src, err, "opening it");
			if (fd >= 0)
				close(fd);
			return err;
		}
		err = pop_file_fd(c, &ip, fd, (uint64_t)st.st_size, n->src);
		close(fd);
	} else {
		err = pop_special(c, &ip, &n->meta, n->target, path);
	}
	if (!err)
		err = pop_inode_write(c, &ip, path);
	return err;
}

int
pop_from_proto(struct pop_ctx *c)
{
	return pop_tree_write(c, c->proto_tree, proto_leaf);
}
