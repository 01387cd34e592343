/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CRC32c and the XFS checksum rule.  A v5 metadata block's checksum is the
 * standard CRC32c of the whole block with its 4-byte CRC field taken as
 * zero, stored little-endian in that field.
 */
#ifndef XFSKIT_CRC32C_H
#define XFSKIT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Raw CRC32c update: no pre- or post-inversion. */
uint32_t xk_crc32c_update(uint32_t crc, const void *buf, size_t len);
/* Raw update forced onto the portable path (for tests and benchmarks). */
uint32_t xk_crc32c_update_sw(uint32_t crc, const void *buf, size_t len);
/* Whether the SSE4.2 instruction path is used on this CPU. */
int xk_crc32c_has_hw(void);

/* Standard CRC32c of a buffer (as in RFC 3720 test vectors). */
static inline uint32_t xk_crc32c(const void *buf, size_t len)
{
	return ~xk_crc32c_update(~0u, buf, len);
}

/* The XFS checksum of a block whose CRC field sits at crc_off. */
uint32_t xk_cksum_calc(const void *buf, size_t len, size_t crc_off);
/* Whether the stored CRC matches; 1 if it does. */
int xk_cksum_ok(const void *buf, size_t len, size_t crc_off);
/* Compute and store the CRC. */
void xk_cksum_update(void *buf, size_t len, size_t crc_off);

#endif /* XFSKIT_CRC32C_H */
