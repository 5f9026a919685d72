/*
 * settings.c
 *		Definition and checking of the bothy.* settings, and bothy.settings(),
 *		the one place a gateway reads the cluster's configuration from.
 *
 * Every duration is an integer in milliseconds (GUC_UNIT_MS), so operators
 * write '2s' or '1500ms' and every reader gets one unit.  The durations are
 * described by one table so that adding one is a line, not a copy.
 *
 * The rule "presence_ttl above twice presence_flush_interval" spans two
 * settings.  A check hook sees only one of them, and during a reload it sees
 * the other's old value, so a valid change of both at once would be refused
 * depending on the order of the lines in postgresql.conf.  The rule is
 * therefore checked where the values are used: at postmaster start (which
 * then refuses to start), in bothy.settings() (so a gateway refuses to start
 * or keeps its last good configuration), and in every function that depends
 * on the TTL.
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "settings.h"

char	   *bothy_database = NULL;
int			bothy_cluster_mode = BOTHY_MODE_SINGLE;
int			bothy_presence_flush_interval_ms = 2000;
int			bothy_presence_ttl_ms = 10000;
int			bothy_typing_ttl_ms = 8000;
int			bothy_agent_presence_timeout_ms = 30000;
int			bothy_agent_heartbeat_persist_interval_ms = 10000;
int			bothy_listen_reconnect_backoff_cap_ms = 5000;
int			bothy_signing_key_cache_ttl_ms = 30000;
int			bothy_consumer_lease_ms = 30000;
int			bothy_signal_queue_size_kb = 1024;
int			bothy_fanout_batch_size = 1000;
int			bothy_fanout_linger_ms = 1;

int64		bothy_debug_uuidv7_frozen_ms = -1;
static char *debug_uuidv7_frozen_ms_text = NULL;

static const struct config_enum_entry cluster_mode_options[] = {
	{"single", BOTHY_MODE_SINGLE, false},
	{"multi", BOTHY_MODE_MULTI, false},
	{NULL, 0, false}
};

/* One row per duration setting; bothy.settings() walks the same table. */
typedef struct DurationSetting
{
	const char *name;			/* without the "bothy." prefix */
	int		   *value;
	int			boot_ms;
	int			min_ms;
	int			max_ms;
	const char *short_desc;
	const char *long_desc;
} DurationSetting;

static const DurationSetting duration_settings[] = {
	{"presence_flush_interval", &bothy_presence_flush_interval_ms, 2000, 100, 60000,
		"How often each gateway writes its presence rows.",
		"Every interval a gateway sends the presence rows that changed since its last flush, "
		"in one transaction, and marks its rows fresh. Must be less than half of bothy.presence_ttl."},
	{"presence_ttl", &bothy_presence_ttl_ms, 10000, 1000, 600000,
		"How long a node's presence rows count after its last flush.",
		"Readers ignore, and expiry deletes, the rows of a node that has not flushed for this long, "
		"so a crashed node's rows age out with no coordinator. Must be more than twice "
		"bothy.presence_flush_interval."},
	{"typing_ttl", &bothy_typing_ttl_ms, 8000, 1000, 60000,
		"How long a typing indicator lasts.",
		"A gateway that rebuilds typing.started from a signal sets expires_at to now plus this."},
	{"agent_presence_timeout", &bothy_agent_presence_timeout_ms, 30000, 1000, 3600000,
		"Silence after which an agent is offline.",
		"An agent whose newest stored heartbeat is older than this plus "
		"bothy.agent_heartbeat_persist_interval is set offline once for the cluster."},
	{"agent_heartbeat_persist_interval", &bothy_agent_heartbeat_persist_interval_ms, 10000, 1000, 600000,
		"How often a gateway stores an agent's heartbeat.",
		"A heartbeat that takes an agent over on a node is stored at once; after that at most once "
		"per interval. The offline decision allows this much lag as grace."},
	{"listen_reconnect_backoff_cap", &bothy_listen_reconnect_backoff_cap_ms, 5000, 100, 300000,
		"Delay between a gateway's attempts to listen again.",
		"After losing its listening connection a gateway retries at once, then once per this delay "
		"until LISTEN succeeds."},
	{"signing_key_cache_ttl", &bothy_signing_key_cache_ttl_ms, 30000, 1000, 3600000,
		"How long a gateway caches the key store.",
		"A key rotated on one node signs and verifies on every other node within this time."},
	{"consumer_lease", &bothy_consumer_lease_ms, 30000, 3000, 3600000,
		"How long an agent consumer connection's hold lasts without a save.",
		"Each guarded save of the held acknowledgement renews the lease of a connection's hold; "
		"a gateway saves at least every third of this. A lapsed hold can be released."},
};

static bool
check_database(char **newval, void **extra, GucSource source)
{
	size_t		len = *newval ? strlen(*newval) : 0;

	if (len == 0 || len >= NAMEDATALEN)
	{
		GUC_check_errmsg("bothy.database must be a database name of 1 to %d bytes",
						 NAMEDATALEN - 1);
		return false;
	}
	return true;
}

/* "" turns the frozen clock off; otherwise unix milliseconds, digits only. */
static bool
check_frozen_ms(char **newval, void **extra, GucSource source)
{
	const char *s = *newval ? *newval : "";
	int64		ms = -1;
	int64	   *result;

	if (*s != '\0')
	{
		size_t		len = strlen(s);

		if (len > 15 || strspn(s, "0123456789") != len)
		{
			GUC_check_errmsg("bothy.debug_uuidv7_frozen_ms must be empty or unix milliseconds");
			return false;
		}
		ms = strtoll(s, NULL, 10);
		if (ms >= ((int64) 1 << 48))
		{
			GUC_check_errmsg("bothy.debug_uuidv7_frozen_ms does not fit in 48 bits");
			return false;
		}
	}
	result = malloc(sizeof(int64));	/* GUC extras are malloc'd (guc.c frees them) */
	if (result == NULL)
		return false;
	*result = ms;
	*extra = result;
	return true;
}

static void
assign_frozen_ms(const char *newval, void *extra)
{
	bothy_debug_uuidv7_frozen_ms = *(int64 *) extra;
}

void
bothy_settings_define(void)
{
	char		name[NAMEDATALEN];

	DefineCustomStringVariable("bothy.database",
							   "The database the bothy background workers serve.",
							   "The extension is created in this database; the workers connect to it "
							   "and wait until the extension exists there.",
							   &bothy_database, "postgres",
							   PGC_POSTMASTER, 0,
							   check_database, NULL, NULL);

	DefineCustomEnumVariable("bothy.cluster_mode",
							 "single for one gateway node, multi for several.",
							 "With multi every event that starts in a gateway is also a signal on "
							 "ephemeral; with single it is delivered locally only. Signals produced "
							 "in the database are sent in both modes.",
							 &bothy_cluster_mode, BOTHY_MODE_SINGLE, cluster_mode_options,
							 PGC_SIGHUP, 0,
							 NULL, NULL, NULL);

	for (size_t i = 0; i < lengthof(duration_settings); i++)
	{
		const DurationSetting *d = &duration_settings[i];

		snprintf(name, sizeof(name), "bothy.%s", d->name);
		DefineCustomIntVariable(name, d->short_desc, d->long_desc,
								d->value, d->boot_ms, d->min_ms, d->max_ms,
								PGC_SIGHUP, GUC_UNIT_MS,
								NULL, NULL, NULL);
	}

	DefineCustomIntVariable("bothy.signal_queue_size",
							"Shared memory for signals between their commit and the fan-out worker.",
							"A committing transaction whose signals do not fit falls back to a plain "
							"NOTIFY of its own, counted as fallback; nothing is lost silently.",
							&bothy_signal_queue_size_kb, 1024, 64, 1024 * 1024,
							PGC_POSTMASTER, GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("bothy.fanout_batch_size",
							"Signals the fan-out worker sends in one transaction of its own.",
							"Larger batches pay NOTIFY's commit lock less often and coalesce more; "
							"smaller ones deliver the first signal of a burst sooner.",
							&bothy_fanout_batch_size, 1000, 1, 100000,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("bothy.fanout_linger",
							"The least time between the starts of two fan-out batches.",
							"A signal after a quiet spell is sent at once; under a steady stream "
							"the worker sends what committed within the linger in one transaction "
							"instead of one per producer commit. 0 sends every batch at once.",
							&bothy_fanout_linger_ms, 1, 0, 100,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomStringVariable("bothy.debug_uuidv7_frozen_ms",
							   "For race tests only: freeze the UUIDv7 clock at these unix milliseconds.",
							   "Empty (the default) uses the real clock. Lets a test make two sessions "
							   "generate bind IDs in one millisecond; never set it in production.",
							   &debug_uuidv7_frozen_ms_text, "",
							   PGC_SUSET, GUC_NOT_IN_SAMPLE,
							   check_frozen_ms, assign_frozen_ms, NULL);

	MarkGUCPrefixReserved("bothy");
}

bool
bothy_settings_consistent(int elevel)
{
	if ((int64) bothy_presence_ttl_ms > 2 * (int64) bothy_presence_flush_interval_ms)
		return true;

	ereport(elevel,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("bothy.presence_ttl must be more than twice bothy.presence_flush_interval"),
			 errdetail("bothy.presence_ttl is %d ms and bothy.presence_flush_interval is %d ms.",
					   bothy_presence_ttl_ms, bothy_presence_flush_interval_ms),
			 errhint("Raise bothy.presence_ttl or lower bothy.presence_flush_interval, then reload.")));
	return false;
}

static void
put_setting(ReturnSetInfo *rsinfo, const char *name, const char *setting, const char *unit)
{
	Datum		values[3];
	bool		nulls[3] = {false, false, unit == NULL};

	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(setting);
	values[2] = unit ? CStringGetTextDatum(unit) : (Datum) 0;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

PG_FUNCTION_INFO_V1(bothy_settings);

/*
 * bothy.settings() returns (name, setting, unit): every cluster setting the
 * gateway needs, durations in milliseconds.  It refuses an inconsistent
 * configuration so that no gateway starts on one.
 */
Datum
bothy_settings(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char		number[16];

	bothy_settings_consistent(ERROR);
	InitMaterializedSRF(fcinfo, 0);

	put_setting(rsinfo, "cluster_mode",
				bothy_cluster_mode == BOTHY_MODE_MULTI ? "multi" : "single", NULL);
	for (size_t i = 0; i < lengthof(duration_settings); i++)
	{
		snprintf(number, sizeof(number), "%d", *duration_settings[i].value);
		put_setting(rsinfo, duration_settings[i].name, number, "ms");
	}
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(bothy_presence_ttl);

/*
 * bothy._presence_ttl() returns the TTL as an interval for the SQL
 * functions, refusing to hand out a TTL that breaks the rule.
 */
Datum
bothy_presence_ttl(PG_FUNCTION_ARGS)
{
	Interval   *result = palloc0(sizeof(Interval));

	bothy_settings_consistent(ERROR);
	result->time = (int64) bothy_presence_ttl_ms * 1000;
	PG_RETURN_INTERVAL_P(result);
}
