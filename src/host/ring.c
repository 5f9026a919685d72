/*
 * host/ring.c
 *		The output ring numbered by byte offset (see ring.h).
 */
#include <stdlib.h>
#include <string.h>

#include "host/ring.h"

bool
host_ring_init(host_ring *r, size_t cap)
{
	memset(r, 0, sizeof(*r));
	if (cap < HOST_RING_MIN || cap > HOST_RING_MAX)
		return false;
	r->buf = malloc(cap);
	if (r->buf == NULL)
		return false;
	r->cap = cap;
	return true;
}

void
host_ring_free(host_ring *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

void
host_ring_append(host_ring *r, const uint8_t *data, size_t len)
{
	size_t		at;
	size_t		first;

	if (len > r->cap)
	{
		/* what would be overwritten at once is never copied */
		r->end += len - r->cap;
		data += len - r->cap;
		len = r->cap;
	}
	at = (size_t) (r->end % r->cap);
	first = r->cap - at < len ? r->cap - at : len;
	memcpy(r->buf + at, data, first);
	memcpy(r->buf, data + first, len - first);
	r->end += len;
	if (r->end - r->start > r->cap)
		r->start = r->end - r->cap;
}

bool
host_ring_seek(const host_ring *r, uint64_t offset, uint64_t *from, uint64_t *skipped)
{
	if (offset > r->end)
		return false;
	if (offset >= r->start)
	{
		*from = offset;
		*skipped = 0;
	}
	else
	{
		*from = r->start;
		*skipped = r->start - offset;
	}
	return true;
}

size_t
host_ring_read(const host_ring *r, uint64_t offset, uint8_t *out, size_t max)
{
	size_t		len;
	size_t		at;
	size_t		first;

	if (offset < r->start || offset >= r->end)
		return 0;
	len = r->end - offset < max ? (size_t) (r->end - offset) : max;
	at = (size_t) (offset % r->cap);
	first = r->cap - at < len ? r->cap - at : len;
	memcpy(out, r->buf + at, first);
	memcpy(out + first, r->buf, len - first);
	return len;
}
