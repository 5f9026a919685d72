/*
 * stage.c
 *		Staging of signals: kept in backend memory until the transaction
 *		ends, moved to the shared queue at commit, dropped on rollback.
 *
 * Why not NOTIFY here: NOTIFY takes one cluster-wide lock from pre-commit
 * until the commit is on disk, so every notifying transaction would wait
 * for every other.  A staged signal costs the producer one short LWLock at
 * pre-commit (to reserve room) and one at commit (to write); the fan-out
 * worker notifies many signals in one transaction of its own.
 *
 * Delivery stays only-after-commit: room is reserved at pre-commit, when an
 * error can still abort the transaction, and the entries are written at
 * commit, when the commit record is on disk and nothing may fail.  A
 * rollback of the transaction, or of the subtransaction that staged a
 * signal, drops it.  When the queue has no room, or no fan-out worker runs
 * to empty it, the transaction falls back to a plain NOTIFY of its signals,
 * counted as fallback: never silent loss, never a wait for a worker.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "commands/async.h"
#include "nodes/pg_list.h"
#include "utils/memutils.h"

#include "bothy_ext.h"
#include "channel.h"
#include "coalesce.h"
#include "shmem.h"
#include "signal_queue.h"

typedef struct StagedSignal
{
	int			nest_level;		/* subtransaction level that staged it */
	BothyQueueTag tag;			/* its kind, and what the worker coalesces by */
	uint16		len;
	char		payload[FLEXIBLE_ARRAY_MEMBER];	/* NUL-terminated */
} StagedSignal;

/*
 * The entries the commit writes, laid out at pre-commit (in
 * TopTransactionContext, which outlives the commit callbacks): the commit
 * itself allocates nothing, since nothing may fail there.
 */
typedef struct CommitEntries
{
	int			count;
	const char **payloads;
	uint16	   *lengths;
	BothyQueueTag *tags;
} CommitEntries;

static List *staged = NIL;		/* in TopTransactionContext */
static uint32 reserved_bytes = 0;	/* room reserved at pre-commit */
static CommitEntries to_write;	/* what the commit writes into that room */
static bool wake_maintenance = false;	/* new work for the maintenance worker */
static bool callbacks_registered = false;

static void
reset_transaction_state(void)
{
	staged = NIL;				/* memory goes with TopTransactionContext */
	reserved_bytes = 0;
	memset(&to_write, 0, sizeof(to_write));
	wake_maintenance = false;
}

/*
 * No room, or no worker: send everything with the producer's own NOTIFY,
 * coalesced as the worker would have (a transaction that ends a host's
 * sessions appends several log rows, and its receivers need the last).
 */
static void
fall_back_to_notify(void)
{
	int			n = list_length(staged);
	BothyCoalesceEntry *entries = palloc0(sizeof(BothyCoalesceEntry) * n);
	int			i = 0;
	ListCell   *lc;

	foreach(lc, staged)
	{
		StagedSignal *s = lfirst(lc);

		entries[i].payload = s->payload;
		entries[i].len = s->len;
		memcpy(&entries[i].tag, &s->tag, sizeof(BothyQueueTag));
		entries[i].order = i;
		i++;
	}
	bothy_coalesce(entries, n);
	for (i = 0; i < n; i++)
	{
		if (!entries[i].drop)
			bothy_channel_notify(entries[i].payload);
		bothy_count_signal(BOTHY_SIGNALS_STAGED, entries[i].tag.kind, 1);
		bothy_count_signal(entries[i].drop ? BOTHY_SIGNALS_COALESCED : BOTHY_SIGNALS_FALLBACK,
						   entries[i].tag.kind, 1);
	}
	pfree(entries);
	staged = NIL;
}

/*
 * At pre-commit, before the room is reserved: an error here still aborts.
 * Returns the bytes the entries take in the queue.
 */
static uint32
lay_out_entries(void)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	int			n = list_length(staged);
	int			i = 0;
	uint32		bytes = 0;
	ListCell   *lc;

	to_write.payloads = palloc(sizeof(char *) * n);
	to_write.lengths = palloc(sizeof(uint16) * n);
	to_write.tags = palloc(sizeof(BothyQueueTag) * n);
	foreach(lc, staged)
	{
		StagedSignal *s = lfirst(lc);

		to_write.payloads[i] = s->payload;
		to_write.lengths[i] = s->len;
		/* byte for byte: the zeroed padding too, as it goes to shared memory */
		memcpy(&to_write.tags[i], &s->tag, sizeof(BothyQueueTag));
		bytes += BOTHY_QUEUE_ENTRY_BYTES(s->len);
		i++;
	}
	to_write.count = n;
	MemoryContextSwitchTo(old);
	return bytes;
}

/*
 * At commit: no allocation, nothing that can fail.
 *
 * The fence (docs/signals.md, "The fence"): the WAL insert position read
 * here, after this transaction's commit record was inserted and after it
 * became visible, so at or after that record and after the commit record
 * of every transaction visible to a snapshot taken now (each inserted its
 * record before it became visible).  A standby that replayed up to it
 * shows at least what the primary showed when this signal committed.
 * The end of the last record inserted, not where the next one starts:
 * at a page boundary the latter lies past the page header, past the end
 * of all WAL written, and XLogFlush() of it raises an error that would
 * lose the worker's whole batch (docs/signals.md, "The fence").
 */
static void
write_reserved(void)
{
	uint64		fence = (uint64) Max(GetXLogInsertEndRecPtr(), XactLastCommitEnd);

	for (int i = 0; i < to_write.count; i++)
		bothy_count_signal(BOTHY_SIGNALS_STAGED, to_write.tags[i].kind, 1);
	bothy_queue_write_reserved(to_write.payloads, to_write.lengths, to_write.tags,
							   to_write.count, reserved_bytes, fence);
	reserved_bytes = 0;
	bothy_wake_worker(BOTHY_WORKER_FANOUT);
}

/*
 * At pre-commit: room in the queue for the staged signals, or their
 * producer's own NOTIFY.
 */
static void
queue_or_notify(void)
{
	uint32		bytes;

	/*
	 * No fan-out worker runs: the server has just started (the worker cannot
	 * connect before bothy.database exists, and the postmaster tries again
	 * only bgw_restart_time later), or the worker died and waits out that
	 * second.  A queued signal would wait as long; NOTIFY sends it at commit.
	 */
	if (!bothy_worker_running(BOTHY_WORKER_FANOUT))
	{
		fall_back_to_notify();
		return;
	}
	bytes = lay_out_entries();
	if (bothy_queue_reserve(bytes))
		reserved_bytes = bytes;
	else
		fall_back_to_notify();
}

static void
stage_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			if (staged != NIL)
				queue_or_notify();
			break;
		case XACT_EVENT_COMMIT:
			if (reserved_bytes > 0)
				write_reserved();
			if (wake_maintenance)
				bothy_wake_worker(BOTHY_WORKER_MAINTENANCE);
			reset_transaction_state();
			break;
		case XACT_EVENT_ABORT:
			if (reserved_bytes > 0)
				bothy_queue_release(reserved_bytes);
			reset_transaction_state();
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (staged != NIL)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that staged bothy signals")));
			break;
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			break;
	}
}

static void
stage_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	ListCell   *lc;

	switch (event)
	{
		case SUBXACT_EVENT_ABORT_SUB:
			foreach(lc, staged)
			{
				if (((StagedSignal *) lfirst(lc))->nest_level >= level)
					staged = foreach_delete_current(staged, lc);
			}
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
			foreach(lc, staged)
			{
				StagedSignal *s = lfirst(lc);

				if (s->nest_level >= level)
					s->nest_level = level - 1;
			}
			break;
		case SUBXACT_EVENT_START_SUB:
		case SUBXACT_EVENT_PRE_COMMIT_SUB:
			break;
	}
}

void
bothy_stage_register_callbacks(void)
{
	if (callbacks_registered)
		return;
	RegisterXactCallback(stage_xact_callback, NULL);
	RegisterSubXactCallback(stage_subxact_callback, NULL);
	callbacks_registered = true;
}

void
bothy_stage_signal(const char *payload, const bothy_signal *sig)
{
	size_t		len = strlen(payload);
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	StagedSignal *s;

	Assert(len <= BOTHY_SIGNAL_MAX_BYTES);
	s = palloc(offsetof(StagedSignal, payload) + len + 1);
	s->nest_level = GetCurrentTransactionNestLevel();
	bothy_queue_tag_of(sig, &s->tag);
	s->len = (uint16) len;
	memcpy(s->payload, payload, len + 1);
	staged = lappend(staged, s);
	MemoryContextSwitchTo(old);
}

/*
 * Wake the maintenance worker when the current transaction commits: it made
 * work for it (a notification to decide).  A rolled-back subtransaction
 * keeps the flag; the worker then finds nothing, which costs one query.
 */
void
bothy_stage_wake_maintenance(void)
{
	wake_maintenance = true;
}
