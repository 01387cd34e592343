// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pools of byte strings with stable addresses (vec.h): the names and
 * values that salvaged directory entries and attributes point at.  Each
 * chunk is a vector reserved once at its full size and filled in place,
 * so it never moves; a string that does not fit what the last chunk has
 * left starts a new one (the rest of the old one stays unused: at most
 * one string's worth per chunk, and a file's unused tail is sparse).
 */
#include <errno.h>
#include <string.h>

#include <xfskit/vec.h>

/* A new chunk for at least len bytes, twice the last one's size. */
static int
chunk_new(struct xk_vec_pool *p, size_t len)
{
	struct xk_vec c = { .spill = p->spill };
	size_t size = XK_VEC_POOL_FIRST;
	int err;

	if (p->chunks.n) {
		size = p->chunks.v[p->chunks.n - 1].cap * 2;
		if (size > XK_VEC_POOL_CHUNK)
			size = XK_VEC_POOL_CHUNK;
	}
	if (size < len)
		size = len;
	c.first = size;
	err = xk_vec_reserve(&c, size, 1);
	if (!err)
		err = xk_vec_push(&p->chunks.vec, &c, sizeof(c));
	if (err)
		xk_vec_free(&c);
	return err;
}

int
xk_vec_pool_add(struct xk_vec_pool *p, const void *src, size_t len,
		const void **out)
{
	struct xk_vec *last = p->chunks.n ? &p->chunks.v[p->chunks.n - 1] :
			      NULL;
	char *at;

	if (!last || last->cap - last->n < len) {
		int err = chunk_new(p, len ? len : 1);

		if (err)
			return err;
		last = &p->chunks.v[p->chunks.n - 1];
	}
	at = (char *)last->v + last->n;
	if (len)
		memcpy(at, src, len);
	last->n += len;
	*out = at;
	/* Filling a mapping in place: check the cap as appends do. */
	if (last->map) {
		p->polled += len;
		if (p->polled >= XK_VEC_POLL_BYTES) {
			p->polled = 0;
			xk_vec_spill_poll(p->spill);
		}
	}
	return 0;
}

uint64_t
xk_vec_pool_file_bytes(const struct xk_vec_pool *p)
{
	uint64_t bytes = 0;

	for (size_t i = 0; i < p->chunks.n; i++)
		if (p->chunks.v[i].map)
			bytes += p->chunks.v[i].n;
	return bytes;
}

void
xk_vec_pool_free(struct xk_vec_pool *p)
{
	struct xk_vec_spill *sp = p->spill;

	for (size_t i = 0; i < p->chunks.n; i++)
		xk_vec_free(&p->chunks.v[i]);
	xk_vec_free(&p->chunks.vec);
	memset(p, 0, sizeof(*p));
	p->spill = sp;
}
