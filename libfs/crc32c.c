// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CRC32c: the SSE4.2 crc32 instruction where the CPU has it (checked on
 * every call through the compiler's cached cpuid, so there is no global
 * state of ours to initialise), slicing-by-8 tables everywhere else.
 */
#include <xfskit/crc32c.h>
#include <xfskit/endian.h>

#include "crc32c_table.h"

uint32_t
xk_crc32c_update_sw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len >= 8) {
		uint32_t lo = crc ^ xk_get_le32(p);
		uint32_t hi = xk_get_le32(p + 4);

		crc = xk_crc32c_tab[7][lo & 0xff] ^
		      xk_crc32c_tab[6][(lo >> 8) & 0xff] ^
		      xk_crc32c_tab[5][(lo >> 16) & 0xff] ^
		      xk_crc32c_tab[4][lo >> 24] ^
		      xk_crc32c_tab[3][hi & 0xff] ^
		      xk_crc32c_tab[2][(hi >> 8) & 0xff] ^
		      xk_crc32c_tab[1][(hi >> 16) & 0xff] ^
		      xk_crc32c_tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ xk_crc32c_tab[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>

__attribute__((target("sse4.2"))) static uint32_t
crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t c = crc;

	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);	/* x86 is little-endian */
		c = _mm_crc32_u64(c, w);
		p += 8;
		len -= 8;
	}
	crc = (uint32_t)c;
	while (len--)
		crc = _mm_crc32_u8(crc, *p++);
	return crc;
}

int
xk_crc32c_has_hw(void)
{
	return __builtin_cpu_supports("sse4.2");
}

uint32_t
xk_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	if (__builtin_cpu_supports("sse4.2"))
		return crc32c_hw(crc, buf, len);
	return xk_crc32c_update_sw(crc, buf, len);
}
#else
int
xk_crc32c_has_hw(void)
{
	return 0;
}

uint32_t
xk_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	return xk_crc32c_update_sw(crc, buf, len);
}
#endif

uint32_t
xk_cksum_calc(const void *buf, size_t len, size_t crc_off)
{
	static const uint8_t zero[4];
	const uint8_t *p = buf;
	uint32_t crc;

	crc = xk_crc32c_update(~0u, p, crc_off);
	crc = xk_crc32c_update(crc, zero, 4);
	crc = xk_crc32c_update(crc, p + crc_off + 4, len - crc_off - 4);
	return ~crc;
}

int
xk_cksum_ok(const void *buf, size_t len, size_t crc_off)
{
	return xk_get_le32((const uint8_t *)buf + crc_off) ==
	       xk_cksum_calc(buf, len, crc_off);
}

void
xk_cksum_update(void *buf, size_t len, size_t crc_off)
{
	xk_put_le32((uint8_t *)buf + crc_off, xk_cksum_calc(buf, len, crc_off));
}
