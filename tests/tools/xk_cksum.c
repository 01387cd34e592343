// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Test helper: compute the XFS checksum of a block in a file and compare
 * it with the stored one.  Usage: xk_cksum FILE BYTE_OFFSET LENGTH CRC_OFF
 * Prints "stored 0x... computed 0x..." and exits 0 if they match, 1 if
 * not, 2 on a usage or I/O error.
 */
#include <stdio.h>
#include <stdlib.h>

#include <xfskit/libfs.h>

int
main(int argc, char **argv)
{
	struct xk_dev *dev;
	unsigned long long off, len, crc_off;
	uint8_t *buf;
	uint32_t stored, computed;

	if (argc != 5) {
		fprintf(stderr, "usage: xk_cksum FILE OFFSET LENGTH CRC_OFF\n");
		return 2;
	}
	off = strtoull(argv[2], NULL, 0);
	len = strtoull(argv[3], NULL, 0);
	crc_off = strtoull(argv[4], NULL, 0);
	if (len == 0 || len > (1u << 20) || crc_off + 4 > len) {
		fprintf(stderr, "xk_cksum: bad length or CRC offset\n");
		return 2;
	}
	if (xk_dev_open(argv[1], XK_DEV_RDONLY, &dev)) {
		perror(argv[1]);
		return 2;
	}
	buf = malloc(len);
	if (!buf || xk_dev_pread(dev, buf, len, off)) {
		fprintf(stderr, "xk_cksum: cannot read %llu bytes at %llu\n",
			len, off);
		return 2;
	}
	stored = xk_get_le32(buf + crc_off);
	computed = xk_cksum_calc(buf, len, crc_off);
	printf("stored 0x%08x computed 0x%08x\n", stored, computed);
	free(buf);
	xk_dev_close(dev);
	return stored == computed ? 0 : 1;
}
