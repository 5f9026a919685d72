/*
 * signal_queue.h
 *		The ring buffer of committed signals between producers and the
 *		fan-out worker.
 *
 * A producer reserves room at pre-commit (when it can still fall back to a
 * plain NOTIFY), writes into its reservation at commit (when nothing may
 * fail), or releases it if the transaction aborts after all.  Entries are a
 * uint16 length followed by the payload bytes, without a NUL.
 */
#ifndef BOTHY_SIGNAL_QUEUE_H
#define BOTHY_SIGNAL_QUEUE_H

#define BOTHY_QUEUE_ENTRY_BYTES(len) ((uint32) sizeof(uint16) + (uint32) (len))

extern bool bothy_queue_reserve(uint32 bytes);
extern void bothy_queue_release(uint32 bytes);
/* Write entries into a reservation of exactly the bytes they take. */
extern void bothy_queue_write_reserved(const char *const *payloads, const uint16 *lengths,
									   int count, uint32 bytes);
/*
 * Take whole entries from the queue into buf (at most bufsize bytes and
 * max_entries entries); returns the number of entries taken.
 */
extern int	bothy_queue_take(char *buf, uint32 bufsize, int max_entries, uint32 *bytes_taken);

#endif							/* BOTHY_SIGNAL_QUEUE_H */
