/*
 * signal_sql.c
 *		bothy.signal_check() and the two forms of bothy.publish(): the SQL
 *		face of the common signal codec; and bothy._maintenance_wake(), the
 *		same commit-time hand-off for the maintenance worker.
 *
 * All go through the same strict decoder the gateways use, so a payload
 * the database accepts is exactly a payload every node accepts.  publish()
 * never sends what its caller wrote: it decodes the caller's signal and
 * sends the codec's own compact encoding.
 */
#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "signal.h"
#include "bothy_ext.h"

static void
report_malformed(const bothy_decode_error *err)
{
	char		reason[160];

	bothy_decode_error_describe(err, reason, sizeof(reason));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("malformed signal: %s", reason),
			 errhint("See docs/signals.md for the members and forms of each kind.")));
}

PG_FUNCTION_INFO_V1(bothy_signal_check);

/*
 * The kind of a valid payload, NULL for a payload of some other producer
 * (a kind outside gateway., terminal. and wal.), an ERROR naming the reason for a
 * malformed one.
 */
Datum
bothy_signal_check(PG_FUNCTION_ARGS)
{
	text	   *payload = PG_GETARG_TEXT_PP(0);
	bothy_signal sig;
	bothy_decode_error err;

	switch (bothy_signal_decode(VARDATA_ANY(payload), VARSIZE_ANY_EXHDR(payload), &sig, &err))
	{
		case BOTHY_DECODE_OK:
			PG_RETURN_TEXT_P(cstring_to_text(bothy_kind_name(sig.kind)));
		case BOTHY_DECODE_IGNORED:
			PG_RETURN_NULL();
		case BOTHY_DECODE_MALFORMED:
			break;
	}
	report_malformed(&err);
	PG_RETURN_NULL();			/* not reached */
}

/*
 * The payload {"kind":K, ...members} as text.  Members come through jsonb,
 * whose text form the decoder reads like any JSON; a "kind" among them
 * becomes a duplicate member, as it should.
 */
static StringInfo
payload_from_members(const char *kind, Jsonb *members)
{
	StringInfo	buf = makeStringInfo();
	StringInfoData inner;

	if (!JB_ROOT_IS_OBJECT(members) || JB_ROOT_IS_SCALAR(members))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("members must be a JSON object")));

	appendStringInfoString(buf, "{\"kind\":");
	escape_json(buf, kind);

	initStringInfo(&inner);
	JsonbToCString(&inner, &members->root, VARSIZE(members));
	/* inner is "{...}"; splice its members after kind */
	Assert(inner.len >= 2 && inner.data[0] == '{' && inner.data[inner.len - 1] == '}');
	if (JB_ROOT_COUNT(members) > 0)
	{
		appendStringInfoChar(buf, ',');
		appendBinaryStringInfo(buf, inner.data + 1, inner.len - 2);
	}
	appendStringInfoChar(buf, '}');
	pfree(inner.data);
	return buf;
}

/*
 * Decode payload[0..len), encode it compactly and stage it on ephemeral for
 * the commit of the caller's transaction.  kind names the kind in the
 * error for a foreign one, NULL when the caller gave the whole signal.
 */
static void
stage_payload(const char *payload, size_t len, const char *kind)
{
	bothy_signal sig;
	bothy_decode_error err;
	char		encoded[BOTHY_SIGNAL_MAX_BYTES + 1];

	switch (bothy_signal_decode(payload, len, &sig, &err))
	{
		case BOTHY_DECODE_OK:
			break;
		case BOTHY_DECODE_IGNORED:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 kind ? errmsg("kind \"%s\" is outside gateway., terminal. and wal.", kind) :
					 errmsg("the signal's kind is outside gateway., terminal. and wal."),
					 errdetail("bothy.publish sends only the signal kinds of docs/signals.md.")));
			break;
		case BOTHY_DECODE_MALFORMED:
			report_malformed(&err);
			break;
	}

	/*
	 * A fence is the fan-out worker's alone: a producer's fence could claim
	 * a WAL position below its own commit and let a standby answer a
	 * delivery's read before that commit is replayed (docs/signals.md,
	 * "The fence").
	 */
	if (sig.kind == BOTHY_KIND_WAL_FENCE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kind \"wal.fence\" is sent by the fan-out worker only")));

	/*
	 * A reach is the fan-out worker's alone, too (worker_reach.c): a
	 * producer's would keep nodes from asking the database at all.
	 */
	sig.optional &= ~BOTHY_OPT_REACH;
	sig.nreach = 0;
	if (bothy_signal_encode(&sig, encoded, sizeof(encoded)) < 0)
		elog(ERROR, "a decoded signal could not be encoded");
	bothy_stage_signal(encoded, &sig);
}

PG_FUNCTION_INFO_V1(bothy_publish);

/*
 * bothy.publish(kind, members): validate, encode compactly, and stage on
 * ephemeral for the commit of the caller's transaction.
 */
Datum
bothy_publish(PG_FUNCTION_ARGS)
{
	char	   *kind;
	StringInfo	payload;

	/* not STRICT: a NULL would otherwise stage nothing and say nothing */
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", PG_ARGISNULL(0) ? "kind" : "members")));
	kind = text_to_cstring(PG_GETARG_TEXT_PP(0));
	payload = payload_from_members(kind, PG_GETARG_JSONB_P(1));
	stage_payload(payload->data, payload->len, kind);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(bothy_publish_signal);

/*
 * bothy.publish(signal): the same for a whole signal, kind among its
 * members, as it goes on the channel: what a gateway has already encoded,
 * or what a producer would have given pg_notify.  No jsonb on the way, so
 * no second parse and no re-serialisation.
 */
Datum
bothy_publish_signal(PG_FUNCTION_ARGS)
{
	text	   *signal;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("signal must not be null")));
	signal = PG_GETARG_TEXT_PP(0);
	stage_payload(VARDATA_ANY(signal), VARSIZE_ANY_EXHDR(signal), NULL);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(bothy_maintenance_wake);

/*
 * bothy._maintenance_wake(): the caller's transaction made work for the
 * maintenance worker (a notification to decide); wake it at commit rather
 * than at its next interval.
 */
Datum
bothy_maintenance_wake(PG_FUNCTION_ARGS)
{
	bothy_stage_wake_maintenance();
	PG_RETURN_VOID();
}
