// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-mdrestore: turn a metadump (v1 "XFSM" or v2 "XMD2", written by
 * xfskit-metadump or xfs_metadump) back into a filesystem image.
 *
 * Usage: xfskit-mdrestore [-g] [-i] file|- [image]
 *
 * Like xfs_mdrestore: the first record must be the primary superblock;
 * an image file is sized to dblocks * blocksize (a block device must be
 * at least that large), every dumped block is written at its address,
 * the superblock is written with sb_inprogress set while the restore
 * runs, and at the end the primary superblock sector is rewritten from
 * the dumped one -- its structure bytes kept (a quota inode of 0 made
 * NULLFSINO, as xfs_mdrestore's decode and encode do), the rest of the
 * sector zeroed, sb_inprogress cleared, the CRC recomputed -- so the result is
 * byte for byte what xfs_mdrestore writes.  -i prints what the dump
 * header says; -g shows progress.
 *
 * A dump is untrusted input: every count, length and address is checked
 * before use, and a block addressed beyond the filesystem is refused.
 * The exit status is 0 on success, 1 on any error.
 */
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xfskit/libfs.h>

#include "metadump.h"

#define IO_MAX		(1u << 20)

struct rst {
	FILE		*in;
	const char	*inpath;
	int		fd;
	int		is_file;
	uint64_t	fssize;		/* bytes */
	int		progress;
	uint64_t	bytes, last_mb;
	uint8_t		sb[32768];	/* the dumped primary sb sector */
	uint32_t	sectsize;
};

static void __attribute__((format(printf, 1, 2), noreturn))
die(const char *fmt, ...)
{
	va_list ap;

	fputs("xfskit-mdrestore: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void
rd_exact(struct rst *r, void *buf, size_t len)
{
	if (len && fread(buf, 1, len, r->in) != len)
		die("%s: the dump ends early or cannot be read", r->inpath);
}

static void
show_progress(struct rst *r, uint64_t n)
{
	r->bytes += n;
	if (r->progress && r->bytes >> 20 != r->last_mb) {
		r->last_mb = r->bytes >> 20;
		printf("\r%llu MB read", (unsigned long long)r->last_mb);
		fflush(stdout);
	}
}

static void
wr(struct rst *r, const void *buf, size_t len, uint64_t off)
{
	int err;

	if (off > r->fssize || len > r->fssize - off)
		die("block at byte %llu lies beyond the filesystem (%llu "
		    "bytes); the dump is damaged", (unsigned long long)off,
		    (unsigned long long)r->fssize);
	while (len) {
		ssize_t n = pwrite(r->fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			die("writing at byte %llu failed: %s",
			    (unsigned long long)off, strerror(err));
		}
		buf = (const uint8_t *)buf + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
}

/*
 * The dumped primary superblock: 1. magic XFSB; 2. sector size a power
 * of two from 512 to 32768 that fits what the dump carried; 3. block size
 * a power of two from 512 to 65536; 4. dblocks non-zero and the size in
 * bytes without overflow.  Then the target is sized.
 */
static void
take_sb(struct rst *r, const uint8_t *buf, size_t have, const char *target)
{
	const struct xk_dsb *d = (const struct xk_dsb *)buf;
	uint32_t bs, ss;
	uint64_t dblocks;
	struct stat st;

	if (have < sizeof(struct xk_dsb) ||
	    xk_be32_get(d->sb_magicnum) != XK_SB_MAGIC)
		die("bad magic number for the primary superblock");
	ss = xk_be16_get(d->sb_sectsize);
	bs = xk_be32_get(d->sb_blocksize);
	dblocks = xk_be64_get(d->sb_dblocks);
	if (ss < 512 || ss > 32768 || (ss & (ss - 1)) || ss > have)
		die("bad sector size %u in the metadump", ss);
	if (bs < 512 || bs > 65536 || (bs & (bs - 1)))
		die("bad block size %u in the metadump", bs);
	if (!dblocks || dblocks > (UINT64_MAX >> 17))
		die("bad block count %llu in the metadump",
		    (unsigned long long)dblocks);
	r->sectsize = ss;
	memset(r->sb, 0, sizeof(r->sb));
	memcpy(r->sb, buf, ss);
	r->fssize = dblocks * bs;

	{
		struct xk_mounted ms;
		char where[400];

		if (!xk_mounted_state(target, &ms) && ms.mounted) {
			xk_mounted_describe(&ms, where, sizeof(where));
			die("%s is %s; unmount it first", target, where);
		}
	}
	r->fd = open(target, O_RDWR | O_CREAT, 0644);
	if (r->fd < 0)
		die("cannot open %s: %s", target, strerror(errno));
	if (fstat(r->fd, &st))
		die("cannot stat %s: %s", target, strerror(errno));
	r->is_file = S_ISREG(st.st_mode);
	if (r->is_file) {
		if (ftruncate(r->fd, 0) || ftruncate(r->fd, (off_t)r->fssize))
			die("cannot set the image size: %s", strerror(errno));
	} else {
		off_t end = lseek(r->fd, 0, SEEK_END);

		if (end < 0 || (uint64_t)end < r->fssize)
			die("%s is smaller than the filesystem (%llu bytes)",
			    target, (unsigned long long)r->fssize);
	}
}

/* The superblock as written while restoring: sb_inprogress set. */
static void
write_sb_inprogress(struct rst *r, uint8_t *buf, uint32_t len)
{
	((struct xk_dsb *)buf)->sb_inprogress = 1;
	wr(r, buf, len, 0);
}

/* The final primary superblock (see the file comment). */
static void
fixup_sb(struct rst *r)
{
	uint8_t *buf = calloc(1, r->sectsize);
	struct xk_dsb *d = (struct xk_dsb *)buf;

	if (!buf)
		die("out of memory");
	memcpy(buf, r->sb, sizeof(struct xk_dsb));
	d->sb_inprogress = 0;
	if ((xk_be16_get(d->sb_versionnum) & XK_SB_VERSION_NUMBITS) ==
	    XK_SB_VERSION_5) {
		/* xfs_mdrestore re-encodes it: the images must match. */
		xk_dsb_null_quota_inodes(d);
		xk_cksum_update(buf, r->sectsize,
				offsetof(struct xk_dsb, sb_crc));
	}
	wr(r, buf, r->sectsize, 0);
	free(buf);
}

static void
restore_v1(struct rst *r, const uint8_t *magic, const char *target, int info)
{
	uint8_t hdr8[MD_V1_HDR_SIZE];
	unsigned int blocklog, bs, maxi, count;
	uint8_t *hdr, *data;

	memcpy(hdr8, magic, 4);
	rd_exact(r, hdr8 + 4, 4);
	blocklog = hdr8[6];
	if (blocklog < 9 || blocklog > 16)
		die("bad block size 2^%u in the metadump", blocklog);
	bs = 1u << blocklog;
	maxi = (bs - MD_V1_HDR_SIZE) / 8;
	if (info) {
		if (hdr8[7] & MD_V1_INFO_FLAGS)
			printf("%s: %sobfuscated, %s log, %s metadata "
			       "blocks\n", r->inpath,
			       hdr8[7] & MD_V1_OBFUSCATED ? "" : "not ",
			       hdr8[7] & MD_V1_DIRTYLOG ? "dirty" : "clean",
			       hdr8[7] & MD_V1_FULLBLOCKS ? "full" :
			       "zeroed");
		else
			printf("%s: no informational flags present\n",
			       r->inpath);
		if (!target)
			return;
	}
	hdr = malloc(bs);
	data = malloc((size_t)maxi * bs);
	if (!hdr || !data)
		die("out of memory");
	memcpy(hdr, hdr8, sizeof(hdr8));
	rd_exact(r, hdr + MD_V1_HDR_SIZE, bs - MD_V1_HDR_SIZE);
	count = xk_get_be16(hdr + 4);
	if (!count || count > maxi)
		die("bad block count %u in the first chunk", count);
	if (xk_get_be64(hdr + MD_V1_HDR_SIZE) != 0)
		die("the first block is not the primary superblock");
	rd_exact(r, data, (size_t)count * bs);
	memset(data + (size_t)count * bs, 0, (size_t)(maxi - count) * bs);
	take_sb(r, data, (size_t)maxi * bs, target);
	((struct xk_dsb *)data)->sb_inprogress = 1;
	for (;;) {
		for (unsigned int i = 0; i < count; i++) {
			uint64_t daddr = xk_get_be64(hdr + MD_V1_HDR_SIZE +
						     (size_t)i * 8);

			if (daddr > (UINT64_MAX >> XK_BBSHIFT))
				die("bad disk address in the metadump");
			wr(r, data + (size_t)i * bs, bs, daddr << XK_BBSHIFT);
		}
		show_progress(r, bs + (uint64_t)count * bs);
		if (count < maxi)
			break;
		rd_exact(r, hdr, bs);
		if (xk_get_be32(hdr) != MD_MAGIC_V1 || hdr[6] != blocklog)
			die("bad chunk header in the metadump");
		count = xk_get_be16(hdr + 4);
		if (!count)
			break;
		if (count > maxi)
			die("bad block count %u in the metadump", count);
		rd_exact(r, data, (size_t)count * bs);
	}
	free(hdr);
	free(data);
	fixup_sb(r);
}

static void
restore_v2(struct rst *r, const uint8_t *magic, const char *target, int info)
{
	uint8_t h[MD_V2_HDR_SIZE], eh[MD_V2_EXT_SIZE];
	uint32_t compat, incompat, len;
	uint8_t *buf;

	memcpy(h, magic, 4);
	rd_exact(r, h + 4, sizeof(h) - 4);
	compat = xk_get_be32(h + 8);
	incompat = xk_get_be32(h + 12);
	if (xk_get_be32(h + 4) != 2)
		die("unknown metadump version %u", xk_get_be32(h + 4));
	if (info) {
		printf("%s: %sobfuscated, %s log, external log contents are "
		       "%sdumped, rt device contents are %sdumped, %s "
		       "metadata blocks,\n", r->inpath,
		       compat & MD_V2_COMPAT_OBFUSCATED ? "" : "not ",
		       compat & MD_V2_COMPAT_DIRTYLOG ? "dirty" : "clean",
		       compat & MD_V2_COMPAT_EXTLOG ? "" : "not ",
		       incompat & MD_V2_INCOMPAT_RTDEV ? "" : "not ",
		       compat & MD_V2_COMPAT_FULLBLOCKS ? "full" : "zeroed");
		if (!target)
			return;
	}
	if (incompat & ~MD_V2_INCOMPAT_RTDEV)
		die("the metadump header has unknown incompat flags 0x%x",
		    incompat);
	if (incompat & MD_V2_INCOMPAT_RTDEV)
		die("the metadump carries a realtime device, which is not "
		    "supported");
	if (compat & MD_V2_COMPAT_EXTLOG)
		die("the metadump carries an external log, which is not "
		    "supported");
	if (xk_get_be64(h + 16))
		die("the metadump header's reserved field is not zero");
	buf = malloc(IO_MAX);
	if (!buf)
		die("out of memory");
	rd_exact(r, eh, sizeof(eh));
	len = xk_get_be32(eh + 8);
	if (xk_get_be64(eh) != 0)
		die("the first extent is not the primary superblock");
	if (len < 1 || len > 64)
		die("bad superblock extent length %u", len);
	rd_exact(r, buf, (size_t)len << XK_BBSHIFT);
	take_sb(r, buf, (size_t)len << XK_BBSHIFT, target);
	write_sb_inprogress(r, buf, len << XK_BBSHIFT);
	show_progress(r, (uint64_t)len << XK_BBSHIFT);
	for (;;) {
		size_t got = fread(eh, 1, sizeof(eh), r->in);
		uint64_t addr, off, left;

		if (got == 0 && feof(r->in))
			break;
		if (got != sizeof(eh))
			die("%s: the dump ends inside an extent header",
			    r->inpath);
		addr = xk_get_be64(eh);
		if ((addr & MD_V2_DEV_MASK) != 0)
			die("extent for a device other than the data device");
		off = (addr & MD_V2_DADDR_MASK) << XK_BBSHIFT;
		left = (uint64_t)xk_get_be32(eh + 8) << XK_BBSHIFT;
		while (left) {
			size_t n = left < IO_MAX ? (size_t)left : IO_MAX;

			rd_exact(r, buf, n);
			wr(r, buf, n, off);
			off += n;
			left -= n;
			show_progress(r, n);
		}
	}
	free(buf);
	fixup_sb(r);
}

static void
usage(FILE *fp)
{
	fprintf(fp,
"Usage: xfskit-mdrestore [-g] [-i] file|- image\n"
"       xfskit-mdrestore -i file|-\n"
"       xfskit-mdrestore -V\n"
"  -g          show progress\n"
"  -i          print what the dump header says (alone: restore nothing)\n"
"  -V          print the version and exit\n"
"  -h, --help  this help\n"
"Exit status: 0 restored, 1 any error, a usage error included (as\n"
"xfs_mdrestore).\n");
}

int
main(int argc, char **argv)
{
	struct rst *r;
	const char *target;
	uint8_t magic[4];
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, info = 0, progress = 0;

	while ((opt = getopt_long(argc, argv, "ghiV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'g':
			progress = 1;
			break;
		case 'i':
			info = 1;
			break;
		case 'V':
			printf("xfskit-mdrestore version %s\n", xk_version());
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (argc - optind != 2 && !(info && argc - optind == 1)) {
		usage(stderr);
		return 1;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return 1;
	r->fd = -1;
	r->progress = progress;
	r->inpath = argv[optind];
	target = argc - optind == 2 ? argv[optind + 1] : NULL;
	if (!strcmp(r->inpath, "-")) {
		if (isatty(STDIN_FILENO))
			die("will not read a dump from a terminal");
		r->in = stdin;
	} else {
		r->in = fopen(r->inpath, "rb");
		if (!r->in)
			die("cannot open %s: %s", r->inpath, strerror(errno));
	}
	rd_exact(r, magic, 4);
	if (xk_get_be32(magic) == MD_MAGIC_V1)
		restore_v1(r, magic, target, info);
	else if (xk_get_be32(magic) == MD_MAGIC_V2)
		restore_v2(r, magic, target, info);
	else
		die("%s is not a metadump (bad magic number)", r->inpath);
	if (r->progress && target)
		putchar('\n');
	if (r->fd >= 0 && fsync(r->fd) && errno != EINVAL)
		die("flushing the image failed: %s", strerror(errno));
	if (r->fd >= 0 && close(r->fd))
		die("closing the image failed: %s", strerror(errno));
	if (r->in != stdin)
		fclose(r->in);
	free(r);
	return 0;
}
