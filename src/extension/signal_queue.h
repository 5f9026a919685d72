/*
 * signal_queue.h
 *		The ring buffer of committed signals between producers and the
 *		fan-out worker.
 *
 * A producer reserves room at pre-commit (when it can still fall back to a
 * plain NOTIFY), writes into its reservation at commit (when nothing may
 * fail), or releases it if the transaction aborts after all.  Entries are a
 * uint16 length, the entry's tag, then the payload bytes, without a NUL.
 */
#ifndef BOTHY_SIGNAL_QUEUE_H
#define BOTHY_SIGNAL_QUEUE_H

#include "signal.h"
#include "uuid.h"

/*
 * What the fan-out worker needs of a queued signal besides its bytes: its
 * kind (for the counters) and, for the kinds a newer signal of the same
 * subject makes redundant, that subject and the signal's rank.  The
 * producer has decoded the signal anyway; carrying this spares the worker
 * decoding every payload again, which was half of its CPU.
 */
typedef struct BothyQueueTag
{
	uint8		kind;			/* bothy_kind */
	bool		has_subject;	/* coalesced with its subject's newer signals */
	bothy_uuid	subject;		/* a run, or an agent; zero when none */
	int64		rank;			/* the run's version, the agent's event, the log number */
	uint64		fence;			/* its producer's WAL fence (set by the queue) */
} BothyQueueTag;

#define BOTHY_QUEUE_ENTRY_BYTES(len) \
	((uint32) sizeof(uint16) + (uint32) sizeof(BothyQueueTag) + (uint32) (len))

/*
 * The tag of a decoded signal: a run's updates are ranked by version, an
 * agent's appended events by event number, the terminal log's wake-ups by
 * log number (one subject, the zero UUID); other kinds have no subject.
 */
extern void bothy_queue_tag_of(const bothy_signal *sig, BothyQueueTag *tag);

extern bool bothy_queue_reserve(uint32 bytes);
extern void bothy_queue_release(uint32 bytes);
/*
 * Write entries into a reservation of exactly the bytes they take; fence is
 * a WAL position at or after the producer's commit record and after every
 * commit visible when it committed (stage.c).
 */
extern void bothy_queue_write_reserved(const char *const *payloads, const uint16 *lengths,
									   const BothyQueueTag *tags, int count, uint32 bytes,
									   uint64 fence);
/*
 * Take whole entries from the queue into buf (at most bufsize bytes and
 * max_entries entries); returns the number of entries taken.  *fence: the
 * highest fence of the entries taken (0 when none), not of those left in
 * the queue: a backlog must not raise a batch's fence (docs/signals.md).
 */
extern int	bothy_queue_take(char *buf, uint32 bufsize, int max_entries, uint32 *bytes_taken,
							 uint64 *fence);

#endif							/* BOTHY_SIGNAL_QUEUE_H */
