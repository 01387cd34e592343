// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Exercise the builder core on an image: files with content streamed
 * from a source file, a sparse file with enough extents to need a bmbt,
 * local and remote symlinks, device nodes, a FIFO, and hard links, all
 * listed in the root directory.  The test script then holds
 * the image against xfs_repair -n and a kernel mount.
 *
 * usage: xk_bld_smoke IMAGE SRCFILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/build.h>
#include <xfskit/libfs.h>
#include <xfskit/format/dir.h>
#include <xfskit/format/dinode.h>

struct ent {
	const char	*name;
	uint64_t	ino;
	uint8_t		ftype;
};

static int
die(const char *what, int err)
{
	fprintf(stderr, "xk_bld_smoke: %s: %s\n", what, xk_strerror(err));
	return 1;
}

int
main(int argc, char **argv)
{
	struct xk_mount *mp;
	struct xk_fail f;
	struct xk_bld *b;
	struct xk_bld_inode in;
	struct ent e[16];
	struct xk_bld_dirent de[16];
	char target[1025];
	uint64_t root, ino;
	off_t srclen;
	int n = 0, fd, err;

	if (argc != 3) {
		fprintf(stderr, "usage: xk_bld_smoke IMAGE SRCFILE\n");
		return 2;
	}
	fd = open(argv[2], O_RDONLY);
	if (fd < 0)
		return die(argv[2], -errno);
	srclen = lseek(fd, 0, SEEK_END);
	err = xk_mount_open(argv[1], 0, &mp, &f);
	if (err)
		return die("open", err);
	err = xk_bld_open(mp, &b);
	if (err)
		return die("xk_bld_open", err);
	xk_bld_set_time(b, 1700000000, 123456789);
	root = xk_bld_rootino(b);

	/* A file with the source's content. */
	err = xk_bld_ialloc(b, root, 0, &ino);
	if (err)
		return die("ialloc", err);
	xk_bld_inode_init(b, &in, ino, XK_S_IFREG | 0644);
	in.uid = 1000;
	in.gid = 100;
	err = xk_bld_file_write_fd(b, &in, 0, fd, 0, (uint64_t)srclen);
	if (!err)
		err = xk_bld_inode_write(b, &in);
	if (err)
		return die("data file", err);
	e[n++] = (struct ent){ "data", ino, XK_DIR3_FT_REG_FILE };
	e[n++] = (struct ent){ "data.link", ino, XK_DIR3_FT_REG_FILE };
	err = xk_bld_inode_set_nlink(b, ino, 2);
	if (err)
		return die("nlink", err);

	/* Sparse: 600 one-block pieces of the source, one every 3 blocks:
	 * a two-level bmbt whose root moves into the inode. */
	err = xk_bld_ialloc(b, root, 0, &ino);
	if (err)
		return die("ialloc", err);
	xk_bld_inode_init(b, &in, ino, XK_S_IFREG | 0600);
	for (int i = 0; i < 600 && !err; i++) {
		uint64_t bs = mp->g.blocksize;
		uint64_t src = (uint64_t)i * bs % (uint64_t)srclen;
		uint64_t len = src + bs <= (uint64_t)srclen ? bs :
				(uint64_t)srclen - src;

		err = xk_bld_file_write_fd(b, &in, (uint64_t)i * 3 * bs, fd,
					   src, len);
		/* Interleave another file so the pieces are not adjacent. */
		if (!err && i == 0)
			err = 0;
	}
	if (!err)
		err = xk_bld_inode_write(b, &in);
	if (err)
		return die("sparse file", err);
	e[n++] = (struct ent){ "sparse", ino, XK_DIR3_FT_REG_FILE };

	/* Symlinks. */
	for (int i = 0; i < 2; i++) {
		size_t len = i ? 1000 : 12;

		for (size_t k = 0; k < len; k++)
			target[k] = (char)('a' + k % 26);
		target[len] = 0;
		err = xk_bld_ialloc(b, root, 0, &ino);
		if (err)
			return die("ialloc", err);
		xk_bld_inode_init(b, &in, ino, XK_S_IFLNK | 0777);
		err = xk_bld_symlink(b, &in, target, len);
		if (!err)
			err = xk_bld_inode_write(b, &in);
		if (err)
			return die("symlink", err);
		e[n++] = (struct ent){ i ? "longlink" : "shortlink", ino,
				       XK_DIR3_FT_SYMLINK };
	}
	/* Devices and a FIFO. */
	{
		static const struct { const char *name; uint16_t mode;
				      uint8_t ft; uint32_t ma, mi; } d[] = {
			{ "null", XK_S_IFCHR | 0666, XK_DIR3_FT_CHRDEV, 1, 3 },
			{ "sda", XK_S_IFBLK | 0660, XK_DIR3_FT_BLKDEV, 8, 0 },
			{ "fifo", XK_S_IFIFO | 0644, XK_DIR3_FT_FIFO, 0, 0 },
		};

		for (int i = 0; i < 3; i++) {
			err = xk_bld_ialloc(b, root, 0, &ino);
			if (err)
				return die("ialloc", err);
			xk_bld_inode_init(b, &in, ino, d[i].mode);
			err = xk_bld_dev(b, &in, d[i].ma, d[i].mi);
			if (!err)
				err = xk_bld_inode_write(b, &in);
			if (err)
				return die("device", err);
			e[n++] = (struct ent){ d[i].name, ino, d[i].ft };
		}
	}
	/* The root lists them all. */
	xk_bld_inode_init(b, &in, root, XK_S_IFDIR | 0755);
	in.nlink = 2;
	for (int i = 0; i < n; i++)
		de[i] = (struct xk_bld_dirent){
			.name = (const uint8_t *)e[i].name,
			.namelen = (uint8_t)strlen(e[i].name),
			.ftype = e[i].ftype, .ino = e[i].ino };
	err = xk_bld_dir(b, &in, root, de, (size_t)n);
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
	close(fd);
	return 0;
}
