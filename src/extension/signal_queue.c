/*
 * signal_queue.c
 *		The shared ring buffer of committed signals (see signal_queue.h).
 *
 * Positions are byte counters that only grow; the offset into the buffer
 * is the position modulo the capacity, so head - tail is what is queued and
 * no entry is ever split by a wrap flag.
 */
#include "postgres.h"

#include "shmem.h"
#include "signal_queue.h"

void
bothy_queue_tag_of(const bothy_signal *sig, BothyQueueTag *tag)
{
	memset(tag, 0, sizeof(*tag));	/* the padding too: the bytes are copied */
	tag->kind = (uint8) sig->kind;
	if (sig->kind == BOTHY_KIND_GATEWAY_RUN)
	{
		tag->has_subject = true;
		tag->subject = sig->run;
		tag->rank = sig->version;
	}
	else if (sig->kind == BOTHY_KIND_GATEWAY_AGENT_EVENT)
	{
		tag->has_subject = true;
		tag->subject = sig->agent;
		tag->rank = sig->event;
	}
	else if (sig->kind == BOTHY_KIND_TERMINAL_LOG)
	{
		/* one log for the cluster: the subject stays zero, the newest number wins */
		tag->has_subject = true;
		tag->rank = sig->seq;
	}
}

static void
ring_copy_in(uint64 pos, const void *src, uint32 len)
{
	uint32		cap = bothy_shared->queue_capacity;
	uint32		off = (uint32) (pos % cap);
	uint32		first = Min(len, cap - off);

	memcpy(bothy_shared->queue_data + off, src, first);
	if (first < len)
		memcpy(bothy_shared->queue_data, (const char *) src + first, len - first);
}

static void
ring_copy_out(uint64 pos, void *dst, uint32 len)
{
	uint32		cap = bothy_shared->queue_capacity;
	uint32		off = (uint32) (pos % cap);
	uint32		first = Min(len, cap - off);

	memcpy(dst, bothy_shared->queue_data + off, first);
	if (first < len)
		memcpy((char *) dst + first, bothy_shared->queue_data, len - first);
}

bool
bothy_queue_reserve(uint32 bytes)
{
	bool		ok;

	LWLockAcquire(bothy_shared->queue_lock, LW_EXCLUSIVE);
	ok = bothy_shared->queue_head - bothy_shared->queue_tail + bothy_shared->queue_reserved + bytes
		<= bothy_shared->queue_capacity;
	if (ok)
		bothy_shared->queue_reserved += bytes;
	LWLockRelease(bothy_shared->queue_lock);
	return ok;
}

void
bothy_queue_release(uint32 bytes)
{
	LWLockAcquire(bothy_shared->queue_lock, LW_EXCLUSIVE);
	Assert(bothy_shared->queue_reserved >= bytes);
	bothy_shared->queue_reserved -= bytes;
	LWLockRelease(bothy_shared->queue_lock);
}

void
bothy_queue_write_reserved(const char *const *payloads, const uint16 *lengths,
						   const BothyQueueTag *tags, int count, uint32 bytes, uint64 fence)
{
	uint64		pos;

	LWLockAcquire(bothy_shared->queue_lock, LW_EXCLUSIVE);
	Assert(bothy_shared->queue_reserved >= bytes);
	pos = bothy_shared->queue_head;
	for (int i = 0; i < count; i++)
	{
		BothyQueueTag tag = tags[i];

		tag.fence = fence;
		ring_copy_in(pos, &lengths[i], sizeof(uint16));
		ring_copy_in(pos + sizeof(uint16), &tag, sizeof(BothyQueueTag));
		ring_copy_in(pos + sizeof(uint16) + sizeof(BothyQueueTag), payloads[i], lengths[i]);
		pos += BOTHY_QUEUE_ENTRY_BYTES(lengths[i]);
	}
	Assert(pos - bothy_shared->queue_head == bytes);
	bothy_shared->queue_head = pos;
	bothy_shared->queue_reserved -= bytes;
	LWLockRelease(bothy_shared->queue_lock);
}

int
bothy_queue_take(char *buf, uint32 bufsize, int max_entries, uint32 *bytes_taken,
				 uint64 *fence)
{
	uint64		pos;
	uint64		head;
	int			taken = 0;

	*fence = 0;
	LWLockAcquire(bothy_shared->queue_lock, LW_EXCLUSIVE);
	pos = bothy_shared->queue_tail;
	head = bothy_shared->queue_head;
	while (pos < head && taken < max_entries)
	{
		uint16		len;
		uint32		entry;
		BothyQueueTag tag;

		ring_copy_out(pos, &len, sizeof(uint16));
		entry = BOTHY_QUEUE_ENTRY_BYTES(len);
		if ((pos - bothy_shared->queue_tail) + entry > bufsize)
			break;
		ring_copy_out(pos, buf + (pos - bothy_shared->queue_tail), entry);
		memcpy(&tag, buf + (pos - bothy_shared->queue_tail) + sizeof(uint16), sizeof(tag));
		if (tag.fence > *fence)
			*fence = tag.fence;
		pos += entry;
		taken++;
	}
	*bytes_taken = (uint32) (pos - bothy_shared->queue_tail);
	bothy_shared->queue_tail = pos;
	LWLockRelease(bothy_shared->queue_lock);
	return taken;
}
