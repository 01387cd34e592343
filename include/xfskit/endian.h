/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Big-endian on-disk integer types.
 *
 * Every multi-byte on-disk field is one of these single-member structs.
 * The compiler refuses arithmetic on them, so a field can only be read or
 * written through xk_beNN_get()/xk_beNN_set(): an endian mix-up is a
 * compile error in a plain gcc build, not a sparse warning.
 *
 * The member is a byte array, so every on-disk struct has alignment 1.
 * That is deliberate: log records, short-form directories and hostile
 * images put structures at any offset, and reading them through an
 * aligned type would be undefined behaviour (UBSan reports it).  The
 * price is that padding the kernel gets implicitly must be spelled out;
 * the headers under include/xfskit/format pin every size with _Static_assert.
 */
#ifndef XFSKIT_ENDIAN_H
#define XFSKIT_ENDIAN_H

#include <stdint.h>
#include <string.h>

typedef struct { uint8_t b[2]; } xk_be16;
typedef struct { uint8_t b[4]; } xk_be32;
typedef struct { uint8_t b[8]; } xk_be64;

static inline uint16_t xk_be16_get(xk_be16 v)
{
	return (uint16_t)((v.b[0] << 8) | v.b[1]);
}

static inline uint32_t xk_be32_get(xk_be32 v)
{
	return ((uint32_t)v.b[0] << 24) | ((uint32_t)v.b[1] << 16) |
	       ((uint32_t)v.b[2] << 8) | v.b[3];
}

static inline uint64_t xk_be64_get(xk_be64 v)
{
	uint64_t r = 0;

	for (int i = 0; i < 8; i++)
		r = (r << 8) | v.b[i];
	return r;
}

static inline void xk_be16_set(xk_be16 *p, uint16_t x)
{
	p->b[0] = (uint8_t)(x >> 8);
	p->b[1] = (uint8_t)x;
}

static inline void xk_be32_set(xk_be32 *p, uint32_t x)
{
	p->b[0] = (uint8_t)(x >> 24);
	p->b[1] = (uint8_t)(x >> 16);
	p->b[2] = (uint8_t)(x >> 8);
	p->b[3] = (uint8_t)x;
}

static inline void xk_be64_set(xk_be64 *p, uint64_t x)
{
	for (int i = 7; i >= 0; i--) {
		p->b[i] = (uint8_t)x;
		x >>= 8;
	}
}

static inline xk_be16 xk_cpu_to_be16(uint16_t x)
{
	xk_be16 v;

	xk_be16_set(&v, x);
	return v;
}

static inline xk_be32 xk_cpu_to_be32(uint32_t x)
{
	xk_be32 v;

	xk_be32_set(&v, x);
	return v;
}

static inline xk_be64 xk_cpu_to_be64(uint64_t x)
{
	xk_be64 v;

	xk_be64_set(&v, x);
	return v;
}

/*
 * Raw big-endian access at a byte pointer, for packed areas addressed by
 * computed offsets (short-form entries, log regions, bmbt records).
 */
static inline uint16_t xk_get_be16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)((b[0] << 8) | b[1]);
}

static inline uint32_t xk_get_be32(const void *p)
{
	const uint8_t *b = p;

	return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) |
	       ((uint32_t)b[2] << 8) | b[3];
}

static inline uint64_t xk_get_be64(const void *p)
{
	return ((uint64_t)xk_get_be32(p) << 32) |
	       xk_get_be32((const uint8_t *)p + 4);
}

static inline void xk_put_be16(void *p, uint16_t x)
{
	xk_be16_set((xk_be16 *)p, x);
}

static inline void xk_put_be32(void *p, uint32_t x)
{
	xk_be32_set((xk_be32 *)p, x);
}

static inline void xk_put_be64(void *p, uint64_t x)
{
	xk_be64_set((xk_be64 *)p, x);
}

/* Little-endian 32-bit access, for the CRC32c field (stored LE). */
static inline uint32_t xk_get_le32(const void *p)
{
	const uint8_t *b = p;

	return ((uint32_t)b[3] << 24) | ((uint32_t)b[2] << 16) |
	       ((uint32_t)b[1] << 8) | b[0];
}

static inline void xk_put_le32(void *p, uint32_t x)
{
	uint8_t *b = p;

	b[0] = (uint8_t)x;
	b[1] = (uint8_t)(x >> 8);
	b[2] = (uint8_t)(x >> 16);
	b[3] = (uint8_t)(x >> 24);
}

/* Variable-width big-endian (1..8 bytes), for packed inode numbers. */
static inline uint64_t xk_get_benn(const void *p, unsigned int width)
{
	const uint8_t *b = p;
	uint64_t r = 0;

	for (unsigned int i = 0; i < width; i++)
		r = (r << 8) | b[i];
	return r;
}

static inline void xk_put_benn(void *p, unsigned int width, uint64_t x)
{
	uint8_t *b = p;

	for (int i = (int)width - 1; i >= 0; i--) {
		b[i] = (uint8_t)x;
		x >>= 8;
	}
}

#endif /* XFSKIT_ENDIAN_H */
