/*
 * worker_reach.c
 *		The reach of audience signals, set by the fan-out worker (see
 *		worker_reach.h).
 *
 * Why the worker and not the producer: the worker asks after the
 * producer's commit, in a snapshot of its own, so every binding committed
 * before the signal is seen (a person whose connection was ready before
 * the event committed is reached), and the producer's transaction pays
 * nothing.  One transaction per batch that holds audience signals, one
 * call of the seam per signal; a node the reach does not name skips the
 * signal without a database call (clients/deliver.c).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "metrics.h"
#include "signal.h"
#include "worker_reach.h"

#define REACH_LOG_EVERY_MS 10000

/*
 * The time one batch may spend asking the seam: a slow replaced seam must
 * not hold back every signal of the channel.  The signals after it go
 * without reach (every node asks), counted in BOTHY_ERRORS_REACH.
 */
#define REACH_BUDGET_MS 5

static bool
is_audience(const BothyCoalesceEntry *e)
{
	return !e->drop && (e->tag.kind == BOTHY_KIND_GATEWAY_TYPING ||
						e->tag.kind == BOTHY_KIND_GATEWAY_RUN);
}

/* The index of the first audience signal not dropped, or n. */
static int
first_audience(const BothyCoalesceEntry *entries, int n)
{
	int			i;

	for (i = 0; i < n && !is_audience(&entries[i]); i++)
		;
	return i;
}

/*
 * The nodes of an uuid[] into sig's reach; false when there are more than
 * BOTHY_REACH_MAX (the signal then goes without: every node asks).
 */
static bool
put_nodes(ArrayType *nodes, bothy_signal *sig)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n,
				i;

	deconstruct_array(nodes, UUIDOID, UUID_LEN, false, TYPALIGN_CHAR, &elems, &nulls, &n);
	sig->nreach = 0;
	for (i = 0; i < n; i++)
	{
		if (nulls[i])
			continue;
		if (sig->nreach == BOTHY_REACH_MAX)
			return false;
		memcpy(sig->reach[sig->nreach++].b, DatumGetUUIDP(elems[i])->data, UUID_LEN);
	}
	return true;
}

/*
 * Re-encodes e with the reach of its thread, the payload in out_context;
 * unchanged when the seam answers NULL.
 */
static void
set_reach(BothyCoalesceEntry *e, FmgrInfo *flinfo, MemoryContext out_context)
{
	LOCAL_FCINFO(fcinfo, 1);
	bothy_signal sig;
	bothy_decode_error err;
	char		encoded[BOTHY_SIGNAL_MAX_BYTES + 1];
	Datum		nodes;
	int			len;

	/* the producer's payload passed the same codec when it was staged */
	if (bothy_signal_decode(e->payload, e->len, &sig, &err) != BOTHY_DECODE_OK)
		return;
	InitFunctionCallInfoData(*fcinfo, flinfo, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = UUIDPGetDatum((pg_uuid_t *) sig.thread.b);
	fcinfo->args[0].isnull = false;
	nodes = FunctionCallInvoke(fcinfo);
	if (fcinfo->isnull)
		return;
	if (!put_nodes(DatumGetArrayTypeP(nodes), &sig))
		return;
	sig.optional |= BOTHY_OPT_REACH;
	len = bothy_signal_encode(&sig, encoded, sizeof(encoded));
	if (len < 0)
		return;					/* too long with it: every node delivers it */
	e->payload = MemoryContextStrdup(out_context, encoded);
	e->len = (uint16) len;
	bothy_count(BOTHY_FANOUT_REACHED, 1);
}

/* One transaction: the seam asked about every audience signal from first on. */
static void
ask_seam(BothyCoalesceEntry *entries, int n, int first, MemoryContext batch)
{
	Oid			argtypes[1] = {UUIDOID};
	Oid			fn;
	FmgrInfo	flinfo;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	/* missing before ALTER EXTENSION ... UPDATE: no reach, as before 0.3.0 */
	fn = LookupFuncName(list_make2(makeString("bothy"), makeString("thread_nodes")),
						1, argtypes, true);
	if (OidIsValid(fn))
	{
		instr_time	start,
					now;

		fmgr_info(fn, &flinfo);
		INSTR_TIME_SET_CURRENT(start);
		for (int i = first; i < n; i++)
		{
			if (!is_audience(&entries[i]))
				continue;
			INSTR_TIME_SET_CURRENT(now);
			INSTR_TIME_SUBTRACT(now, start);
			if (INSTR_TIME_GET_MILLISEC(now) > REACH_BUDGET_MS)
			{
				bothy_count(BOTHY_ERRORS_REACH, 1);
				break;
			}
			set_reach(&entries[i], &flinfo, batch);
		}
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
}

static void
try_seam(BothyCoalesceEntry *entries, int n, int first, MemoryContext batch)
{
	static TimestampTz last_log = 0;

	PG_TRY();
	{
		ask_seam(entries, n, first, batch);
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		TimestampTz now = GetCurrentTimestamp();

		MemoryContextSwitchTo(batch);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		bothy_count(BOTHY_ERRORS_REACH, 1);
		if (TimestampDifferenceExceeds(last_log, now, REACH_LOG_EVERY_MS))
		{
			last_log = now;
			ereport(LOG,
					(errmsg("bothy fan-out could not ask bothy.thread_nodes: every node delivers the batch"),
					 errdetail("%s", edata->message)));
		}
		FreeErrorData(edata);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(batch);
}

void
bothy_fanout_reach(BothyCoalesceEntry *entries, int n)
{
	int			first = first_audience(entries, n);

	if (first < n)
		try_seam(entries, n, first, CurrentMemoryContext);
}
