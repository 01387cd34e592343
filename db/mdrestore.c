// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfskit-mdrestore: turn a metadump (v1 "XFSM" or v2 "XMD2", written by
 * xfskit-metadump or xfs_metadump) back into a filesystem image.
 *
 * Usage: xfskit-mdrestore [-g] [-i] [-l logdev] [-r rtdev] file|- [image]
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
 * header says; -g shows progress.  A v2 dump's external log (device 1)
 * and realtime device extents (device 2) are written to the files -l and
 * -r name, sized to the log and realtime volume as the superblock gives
 * them; a dump that carries one needs its option, as xfs_mdrestore does.
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
	/* -l and -r: the external log's and realtime device's targets */
	const char	*logpath, *rtpath;
	int		logfd, rtfd;
	uint64_t	logsize, rtsize;	/* bytes */
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

/* len bytes at off of the device fd of size bytes (what: its name). */
static void
wr_dev(int fd, uint64_t size, const char *what, const void *buf, size_t len,
       uint64_t off)
{
	int err;

	if (off > size || len > size - off)
		die("block at byte %llu lies beyond the %s (%llu bytes); the "
		    "dump is damaged", (unsigned long long)off, what,
		    (unsigned long long)size);
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);

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

static void
wr(struct rst *r, const void *buf, size_t len, uint64_t off)
{
	wr_dev(r->fd, r->fssize, "filesystem", buf, len, off);
}

/*
 * Open path to take size bytes: an image file grows to it (never
 * shrinks), a device must hold it.  Refused when it is the data target.
 */
static int
open_target(struct rst *r, const char *path, uint64_t size)
{
	struct stat st, data;
	int fd = open(path, O_RDWR | O_CREAT, 0644);

	if (fd < 0)
		die("cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) || fstat(r->fd, &data))
		die("cannot stat %s: %s", path, strerror(errno));
	if ((S_ISBLK(st.st_mode) && st.st_rdev == data.st_rdev) ||
	    (st.st_dev == data.st_dev && st.st_ino == data.st_ino))
		die("%s is the data device's target too", path);
	if (S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size < size && ftruncate(fd, (off_t)size))
			die("cannot size %s: %s", path, strerror(errno));
	} else {
		off_t end = lseek(fd, 0, SEEK_END);

		if (end < 0 || (uint64_t)end < size)
			die("%s is smaller than %llu bytes", path,
			    (unsigned long long)size);
	}
	return fd;
}

/* After take_sb: the -l and -r targets, sized from the superblock. */
static void
open_extra(struct rst *r, uint32_t compat, uint32_t incompat)
{
	const struct xk_dsb *d = (const struct xk_dsb *)r->sb;
	uint64_t bs = xk_be32_get(d->sb_blocksize);

	if ((compat & MD_V2_COMPAT_EXTLOG) && !r->logpath)
		die("the metadump carries an external log: give its target "
		    "with -l logdev");
	if ((incompat & MD_V2_INCOMPAT_RTDEV) && !r->rtpath)
		die("the metadump carries realtime device metadata: give its "
		    "target with -r rtdev");
	if (r->logpath && !(compat & MD_V2_COMPAT_EXTLOG))
		die("-l: the metadump carries no external log");
	if (r->logpath) {
		r->logsize = (uint64_t)xk_be32_get(d->sb_logblocks) * bs;
		if (xk_be64_get(d->sb_logstart) || !r->logsize)
			die("-l: the dumped superblock has no external log");
		r->logfd = open_target(r, r->logpath, r->logsize);
	}
	if (r->rtpath) {
		r->rtsize = xk_be64_get(d->sb_rblocks) * bs;
		if (!r->rtsize)
			die("-r: the dumped superblock has no realtime volume");
		if (r->rtsize / bs != xk_be64_get(d->sb_rblocks))
			die("-r: bad realtime block count in the metadump");
		r->rtfd = open_target(r, r->rtpath, r->rtsize);
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
	open_extra(r, compat, incompat);
	write_sb_inprogress(r, buf, len << XK_BBSHIFT);
	show_progress(r, (uint64_t)len << XK_BBSHIFT);
	for (;;) {
		size_t got = fread(eh, 1, sizeof(eh), r->in);
		uint64_t addr, off, left;
		unsigned int dev;

		if (got == 0 && feof(r->in))
			break;
		if (got != sizeof(eh))
			die("%s: the dump ends inside an extent header",
			    r->inpath);
		addr = xk_get_be64(eh);
		dev = (addr & MD_V2_DEV_MASK) >> MD_V2_DEV_SHIFT;
		if ((dev == MD_V2_DEV_LOG && r->logfd < 0) ||
		    (dev == MD_V2_DEV_RT && r->rtfd < 0) ||
		    dev > MD_V2_DEV_RT)
			die("an extent for device %u, which the header does "
			    "not announce", dev);
		off = (addr & MD_V2_DADDR_MASK) << XK_BBSHIFT;
		left = (uint64_t)xk_get_be32(eh + 8) << XK_BBSHIFT;
		while (left) {
			size_t n = left < IO_MAX ? (size_t)left : IO_MAX;

			rd_exact(r, buf, n);
			if (dev == MD_V2_DEV_LOG)
				wr_dev(r->logfd, r->logsize, "external log",
				       buf, n, off);
			else if (dev == MD_V2_DEV_RT)
				wr_dev(r->rtfd, r->rtsize, "realtime device",
				       buf, n, off);
			else
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
"Usage: xfskit-mdrestore [-g] [-i] [-l logdev] [-r rtdev] file|- image\n"
"       xfskit-mdrestore -i file|-\n"
"       xfskit-mdrestore -V\n"
"  -g          show progress\n"
"  -i          print what the dump header says (alone: restore nothing)\n"
"  -l logdev   where a v2 dump's external log is restored\n"
"  -r rtdev    where a v2 dump's realtime device metadata is restored\n"
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
	const char *logpath = NULL, *rtpath = NULL;
	int opt, info = 0, progress = 0;

	while ((opt = getopt_long(argc, argv, "ghil:r:V", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'l':
			logpath = optarg;
			break;
		case 'r':
			rtpath = optarg;
			break;
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
	r->fd = r->logfd = r->rtfd = -1;
	r->logpath = logpath;
	r->rtpath = rtpath;
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
	for (int i = 0; i < 2; i++) {
		int fd = i ? r->rtfd : r->logfd;

		if (fd >= 0 && ((fsync(fd) && errno != EINVAL) || close(fd)))
			die("closing %s failed: %s", i ? r->rtpath :
			    r->logpath, strerror(errno));
	}
	if (r->in != stdin)
		fclose(r->in);
	free(r);
	return 0;
}
