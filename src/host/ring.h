/*
 * host/ring.h
 *		The output ring of one session: the last bytes the shell wrote,
 *		numbered by their offset in the session's output since the shell
 *		started (docs/host.md, "The stream's frames").
 *
 * A device that attaches again names the offset it has shown; the ring
 * tells where the bytes after it begin, or how many of them it no longer
 * holds.  It never grows: appending past its capacity drops the oldest
 * bytes, and the offsets of what is left do not change.
 */
#ifndef BOTHY_HOST_RING_H
#define BOTHY_HOST_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * --ring-size: bytes, the range docs/host.md documents.  The least holds
 * the one chunk in flight and what a PTY's kernel buffer (64 KiB on
 * Linux) still holds when the shell's end is read out at once.
 */
#define HOST_RING_MIN (256 * 1024)
#define HOST_RING_DEFAULT (1024 * 1024)
#define HOST_RING_MAX (256 * 1024 * 1024)

typedef struct host_ring
{
	uint8_t    *buf;			/* cap bytes; offset o lives at buf[o % cap] */
	size_t		cap;			/* capacity in bytes */
	uint64_t	start;			/* offset of the oldest byte held */
	uint64_t	end;			/* offset after the newest byte */
} host_ring;

/* False when out of memory or cap is outside HOST_RING_MIN .. HOST_RING_MAX. */
bool		host_ring_init(host_ring *r, size_t cap);
void		host_ring_free(host_ring *r);

/* Appends data; only its last cap bytes are kept when len > cap. */
void		host_ring_append(host_ring *r, const uint8_t *data, size_t len);

/*
 * Where a reader that has shown everything before offset goes on:
 * offset itself while the ring holds it (skipped 0), or the oldest offset
 * held with *skipped the bytes in between it no longer holds.  False when
 * offset is past the end: this ring never produced it.
 */
bool		host_ring_seek(const host_ring *r, uint64_t offset, uint64_t *from,
						   uint64_t *skipped);

/*
 * Copies up to max bytes from offset on into out; returns how many (0 at
 * the end).  offset must be within start .. end.
 */
size_t		host_ring_read(const host_ring *r, uint64_t offset, uint8_t *out, size_t max);

#endif							/* BOTHY_HOST_RING_H */
