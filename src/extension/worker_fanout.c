/*
 * worker_fanout.c
 *		The fan-out worker: takes committed signals from the shared queue
 *		and notifies them on ephemeral, many per transaction of its own.
 *
 * Producers never NOTIFY (that would take the cluster-wide commit lock in
 * every producing transaction); this worker pays that lock once per batch.
 * Within a batch it coalesces what a newer signal makes redundant: of the
 * gateway.run signals of one run only the highest version is sent, of the
 * gateway.agent_event signals of one agent only the highest event (a
 * receiver reads every event up to it), of the terminal.log wake-ups only
 * the highest log number (a tail reads every row up to it), and an
 * identical payload is sent once.  Its transactions commit asynchronously:
 * signals are at most once anyway, and waiting for the disk would only slow
 * the batch down.
 *
 * Each batch's transaction notifies a wal.fence first: a WAL position at or
 * after the commit of every signal in the batch (stage.c), flushed, so a
 * node that reads a delivery's audience on a standby waits until that
 * standby has replayed it (docs/signals.md, "The fence").  It goes first so
 * that a node knows it before any signal of the batch, and by the
 * notifying process (the listener's be_pid), the node tells the worker's
 * signals from a producer's fallback NOTIFY, which carries no fence.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "commands/async.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "bothy_ext.h"
#include "channel.h"
#include "coalesce.h"
#include "settings.h"
#include "shmem.h"
#include "signal_queue.h"
#include "worker_common.h"
#include "worker_reach.h"

PGDLLEXPORT void bothy_fanout_main(Datum arg);

/* Wake at least this often, so a lost wake-up delays a batch, never loses it. */
#define FANOUT_IDLE_TIMEOUT_MS 1000

/* The batch's fence as a wal.fence payload (the codec's own encoding). */
static void
fence_payload(uint64 fence, char *out, size_t size)
{
	bothy_signal sig;

	memset(&sig, 0, sizeof(sig));
	sig.kind = BOTHY_KIND_WAL_FENCE;
	sig.lsn = (int64) Min(fence, (uint64) BOTHY_SIGNAL_LSN_MAX);
	if (bothy_signal_encode(&sig, out, size) < 0)
		elog(ERROR, "a WAL fence could not be encoded");
}

/* Take one batch from the queue and notify it; returns the entries taken. */
static int
send_one_batch(char *buf, uint32 bufsize, MemoryContext batch_context)
{
	uint32		bytes;
	uint64		fence = 0;
	char		fence_text[64];
	int			n = bothy_queue_take(buf, bufsize, bothy_fanout_batch_size, &bytes, &fence);
	BothyCoalesceEntry *entries;
	uint32		pos = 0;
	MemoryContext old;
	volatile bool sent = true;	/* set in PG_CATCH, read after it */

	if (n == 0)
		return 0;

	old = MemoryContextSwitchTo(batch_context);
	entries = palloc0(sizeof(BothyCoalesceEntry) * n);
	for (int i = 0; i < n; i++)
	{
		uint16		len;
		char	   *copy;

		memcpy(&len, buf + pos, sizeof(uint16));
		memcpy(&entries[i].tag, buf + pos + sizeof(uint16), sizeof(BothyQueueTag));
		copy = palloc(len + 1);
		memcpy(copy, buf + pos + sizeof(uint16) + sizeof(BothyQueueTag), len);
		copy[len] = '\0';
		pos += BOTHY_QUEUE_ENTRY_BYTES(len);
		entries[i].payload = copy;
		entries[i].len = len;
		entries[i].order = i;
	}
	bothy_coalesce(entries, n);
	bothy_fanout_reach(entries, n);

	PG_TRY();
	{
		StartTransactionCommand();

		/*
		 * A producer that committed asynchronously may not have flushed its
		 * commit record yet, and a standby receives only flushed WAL: flush
		 * up to the fence (nothing to do when a synchronous commit did).
		 */
		if (fence != 0)
		{
			XLogFlush((XLogRecPtr) fence);
			fence_payload(fence, fence_text, sizeof(fence_text));
			bothy_channel_notify(fence_text);
		}
		for (int i = 0; i < n; i++)
			if (!entries[i].drop)
				bothy_channel_notify(entries[i].payload);
		CommitTransactionCommand();
		bothy_count(BOTHY_FANOUT_BATCHES, 1);
	}
	PG_CATCH();
	{
		/* the batch is gone (at most once): count it, log it, go on */
		MemoryContextSwitchTo(batch_context);
		EmitErrorReport();
		FlushErrorState();
		AbortCurrentTransaction();
		bothy_count(BOTHY_ERRORS_FANOUT, 1);
		ereport(LOG, (errmsg("bothy fan-out lost a batch of %d signals", n)));
		sent = false;
	}
	PG_END_TRY();

	for (int i = 0; i < n; i++)
		bothy_count_signal(entries[i].drop ? BOTHY_SIGNALS_COALESCED :
						   sent ? BOTHY_SIGNALS_SENT : BOTHY_SIGNALS_LOST,
						   entries[i].tag.kind, 1);
	MemoryContextSwitchTo(old);
	MemoryContextReset(batch_context);
	return n;
}

/*
 * Wait out the rest of the linger since the last batch began, to the
 * microsecond (WaitLatch counts whole milliseconds, too coarse for a linger
 * of one), on the monotonic clock (a wall clock stepped back would stretch
 * the wait).  The wait ignores the latch, which producers set at every
 * commit; a signal (SIGTERM, SIGHUP) cuts it short and is handled before
 * the next batch is taken.
 */
static void
pace_batch(const instr_time *last_batch)
{
	instr_time	since;
	int64		wait_us;

	if (bothy_fanout_linger_ms <= 0 || INSTR_TIME_IS_ZERO(*last_batch))
		return;
	INSTR_TIME_SET_CURRENT(since);
	INSTR_TIME_SUBTRACT(since, *last_batch);
	wait_us = (int64) bothy_fanout_linger_ms * 1000 - (int64) INSTR_TIME_GET_MICROSEC(since);
	if (wait_us > 0)
	{
		pgstat_report_wait_start(PG_WAIT_EXTENSION);
		pg_usleep((long) wait_us);
		pgstat_report_wait_end();
	}
}

void
bothy_fanout_main(Datum arg)
{
	MemoryContext batch_context;
	uint32		bufsize;
	char	   *buf;
	instr_time	last_batch;

	bothy_worker_attach(BOTHY_WORKER_FANOUT, "bothy fan-out");
	INSTR_TIME_SET_ZERO(last_batch);

	/* at most once anyway: do not wait for the disk at every batch */
	SetConfigOption("synchronous_commit", "off", PGC_SUSET, PGC_S_OVERRIDE);

	bufsize = bothy_shared->queue_capacity;
	buf = MemoryContextAlloc(TopMemoryContext, bufsize);
	batch_context = AllocSetContextCreate(TopMemoryContext, "bothy fan-out batch",
										  ALLOCSET_DEFAULT_SIZES);
	ereport(LOG, (errmsg("bothy fan-out worker started")));

	for (;;)
	{
		/*
		 * Batches start at least bothy.fanout_linger apart.  A signal after
		 * a quiet spell goes at once; a steady stream would otherwise wake
		 * the worker at nearly every producer commit, each wake-up a
		 * transaction (an XID, a commit record, NOTIFY's lock) for one or
		 * two signals.  Paced, what commits within the linger shares one.
		 */
		for (;;)
		{
			instr_time	started;

			pace_batch(&last_batch);

			/*
			 * Before a batch is taken from the queue (a SIGTERM then leaves
			 * it there for the fallback or the next worker), and here, since
			 * a steady stream never lets the loop reach the idle wait.
			 */
			bothy_worker_handle_interrupts();
			INSTR_TIME_SET_CURRENT(started);
			if (send_one_batch(buf, bufsize, batch_context) == 0)
				break;			/* an empty look does not count as a batch */
			last_batch = started;
		}
		pgstat_report_activity(STATE_IDLE, NULL);

		(void) bothy_worker_wait(FANOUT_IDLE_TIMEOUT_MS);
	}
}
