/*
 * test_ring.c
 *		Unit tests of src/host/ring.c: offsets, the wrap, exact replay from
 *		any offset the ring still holds, and the count of what it no longer
 *		holds (the begin frame's "skipped").  Every byte written is a
 *		function of its offset, so any read is checked byte for byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/ring.h"
#include "unit.h"

/* The byte the "shell" wrote at offset o. */
static uint8_t
byte_at(uint64_t o)
{
	return (uint8_t) ((o * 2654435761u) >> 11);
}

static void
write_from(host_ring *r, uint64_t from, size_t len)
{
	uint8_t    *buf = malloc(len > 0 ? len : 1);
	size_t		i;

	for (i = 0; i < len; i++)
		buf[i] = byte_at(from + i);
	host_ring_append(r, buf, len);
	free(buf);
}

/* Reads everything from offset to the end, in pieces of at most piece. */
static bool
replays_exactly(const host_ring *r, uint64_t offset, size_t piece)
{
	uint8_t    *buf = malloc(piece);
	bool		ok = true;

	while (ok && offset < r->end)
	{
		size_t		n = host_ring_read(r, offset, buf, piece);
		size_t		i;

		if (n == 0 || n > piece)
			ok = false;
		for (i = 0; ok && i < n; i++)
			ok = buf[i] == byte_at(offset + i);
		offset += n;
	}
	ok = ok && offset == r->end && host_ring_read(r, offset, buf, piece) == 0;
	free(buf);
	return ok;
}

int
main(void)
{
	host_ring	r;
	uint64_t	from;
	uint64_t	skipped;
	uint64_t	total;
	uint8_t		buf[64];
	size_t		cap = HOST_RING_MIN;
	int			i;
	bool		ok;

	unit_diag("the output ring (src/host/ring.c)");

	UNIT_OK(!host_ring_init(&r, HOST_RING_MIN - 1), "a ring below the least size is refused");
	UNIT_OK(!host_ring_init(&r, (size_t) HOST_RING_MAX + 1), "a ring above the most is refused");
	UNIT_OK(host_ring_init(&r, cap), "a ring of the least size");
	UNIT_OK(r.start == 0 && r.end == 0, "a new ring holds offsets 0 to 0");
	UNIT_OK(host_ring_seek(&r, 0, &from, &skipped) && from == 0 && skipped == 0,
			"offset 0 of an empty ring: nothing to send, nothing skipped");
	UNIT_OK(!host_ring_seek(&r, 1, &from, &skipped), "an offset past the end is refused");

	write_from(&r, 0, 100);
	UNIT_OK(r.start == 0 && r.end == 100, "100 bytes: offsets 0 to 100");
	UNIT_OK(host_ring_read(&r, 40, buf, 10) == 10 && buf[0] == byte_at(40) &&
			buf[9] == byte_at(49), "a read at an offset gets the bytes written there");
	UNIT_OK(host_ring_read(&r, 95, buf, 64) == 5, "a read near the end gets what is left");
	UNIT_OK(host_ring_read(&r, 100, buf, 64) == 0, "a read at the end gets nothing");
	UNIT_OK(host_ring_seek(&r, 100, &from, &skipped) && from == 100 && skipped == 0,
			"a device that has seen everything goes on at the end");
	UNIT_OK(replays_exactly(&r, 0, 7), "replay from 0 in odd pieces is exact");

	/* fill past the capacity in pieces that cross the wrap at odd places */
	total = 100;
	while (total < 3 * cap + 12345)
	{
		size_t		len = (size_t) (total % 9973) + 1;

		write_from(&r, total, len);
		total += len;
	}
	UNIT_OK(r.end == total && r.end - r.start == cap,
			"past its capacity the ring holds exactly its capacity, the newest bytes");
	UNIT_OK(replays_exactly(&r, r.start, 4096), "replay from the oldest byte held is exact");
	ok = true;
	for (i = 0; i < 200 && ok; i++)
	{
		uint64_t	o = r.start + (uint64_t) (i * 7919) % cap;

		ok = host_ring_seek(&r, o, &from, &skipped) && from == o && skipped == 0 &&
			replays_exactly(&r, o, 16384);
	}
	UNIT_OK(ok, "replay from 200 offsets across the wrap is exact, nothing skipped");

	UNIT_OK(host_ring_seek(&r, r.start - 1, &from, &skipped) && from == r.start &&
			skipped == 1, "one byte older than the ring: 1 byte skipped");
	UNIT_OK(host_ring_seek(&r, 0, &from, &skipped) && from == r.start &&
			skipped == r.start, "offset 0 of a long stream: everything before the ring skipped");
	UNIT_OK(host_ring_seek(&r, 12345, &from, &skipped) && from == r.start &&
			skipped == r.start - 12345, "the count skipped is exactly the gap");
	UNIT_OK(from - skipped == 12345, "what follows the skipped bytes is where the device was");
	UNIT_OK(host_ring_read(&r, r.start - 1, buf, 64) == 0, "a read before the ring gets nothing");
	UNIT_OK(!host_ring_seek(&r, r.end + 1, &from, &skipped), "past the end stays refused");

	/* one append larger than the ring: only its last cap bytes stay */
	write_from(&r, total, 2 * cap + 3);
	total += 2 * cap + 3;
	UNIT_OK(r.end == total && r.start == total - cap,
			"an append larger than the ring keeps its newest capacity bytes");
	UNIT_OK(replays_exactly(&r, r.start, 1000), "and they replay exactly");
	host_ring_free(&r);
	UNIT_OK(r.buf == NULL && r.cap == 0, "free leaves nothing behind");

	/* the wrap at exactly the capacity */
	UNIT_OK(host_ring_init(&r, cap), "a second ring");
	write_from(&r, 0, cap);
	UNIT_OK(r.start == 0 && r.end == cap, "exactly full: nothing dropped yet");
	write_from(&r, cap, 1);
	UNIT_OK(r.start == 1 && r.end == cap + 1, "one byte more drops exactly one");
	UNIT_OK(replays_exactly(&r, 1, cap), "a read that ends at the wrap point is exact");
	host_ring_free(&r);
	return unit_done();
}
