/*
 * settings.c
 *		Definition and checking of the bothy.* settings, and bothy.settings(),
 *		the one place a gateway reads the cluster's configuration from.
 *
 * Every duration is an integer in milliseconds (GUC_UNIT_MS), so operators
 * write '2s' or '1500ms' and every reader gets one unit.  The integer
 * settings are described by one table so that adding one is a line, not a
 * copy; bothy.settings() walks the same table.
 *
 * Some rules span two settings ("presence_ttl above twice
 * presence_flush_interval", and two of the terminal's).  A check hook sees
 * only one of them, and during a reload it sees the other's old value, so a
 * valid change of both at once would be refused depending on the order of
 * the lines in postgresql.conf.  The rules are therefore checked where the
 * values are used: at postmaster start (which then refuses to start), in
 * bothy.settings() (so a gateway refuses to start or keeps its last good
 * configuration), in the maintenance worker (which pauses), and in every
 * function that depends on the settings of a rule.
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
int			bothy_terminal_open_timeout_ms = 30000;
int			bothy_terminal_host_heartbeat_interval_ms = 15000;
int			bothy_terminal_host_heartbeat_miss_limit = 3;
int			bothy_terminal_host_duplicate_probe_timeout_ms = 5000;
int			bothy_terminal_idle_timeout_ms = 1800000;
int			bothy_terminal_idle_grace_ms = 30000;
int			bothy_terminal_fingerprint_max_attempts = 5;
int			bothy_terminal_log_poll_interval_ms = 1000;
int			bothy_terminal_log_retention_ms = 86400000;

int64		bothy_debug_uuidv7_frozen_ms = -1;
static char *debug_uuidv7_frozen_ms_text = NULL;

static const struct config_enum_entry cluster_mode_options[] = {
	{"single", BOTHY_MODE_SINGLE, false},
	{"multi", BOTHY_MODE_MULTI, false},
	{NULL, 0, false}
};

/*
 * One row per integer setting that a reload may change.  unit is
 * GUC_UNIT_MS for a duration and 0 for a count; gateway marks the settings
 * bothy.settings() returns (the gateways run on them), in table order.
 */
typedef struct IntSetting
{
	const char *name;			/* without the "bothy." prefix */
	int		   *value;
	int			boot;
	int			min;
	int			max;
	int			unit;
	bool		gateway;
	const char *short_desc;
	const char *long_desc;
} IntSetting;

#define MS GUC_UNIT_MS, true	/* a duration the gateways read */

static const IntSetting int_settings[] = {
	{"presence_flush_interval", &bothy_presence_flush_interval_ms, 2000, 100, 60000, MS,
		"How often each gateway writes its presence rows.",
		"Every interval a gateway sends the presence rows that changed since its last flush, "
		"in one transaction, and marks its rows fresh. Must be less than half of bothy.presence_ttl."},
	{"presence_ttl", &bothy_presence_ttl_ms, 10000, 1000, 600000, MS,
		"How long a node's presence rows count after its last flush.",
		"Readers ignore, and expiry deletes, the rows of a node that has not flushed for this long, "
		"so a crashed node's rows age out with no coordinator. Must be more than twice "
		"bothy.presence_flush_interval."},
	{"typing_ttl", &bothy_typing_ttl_ms, 8000, 1000, 60000, MS,
		"How long a typing indicator lasts.",
		"A gateway that rebuilds typing.started from a signal sets expires_at to now plus this."},
	{"agent_presence_timeout", &bothy_agent_presence_timeout_ms, 30000, 1000, 3600000, MS,
		"Silence after which an agent is offline.",
		"An agent whose newest stored heartbeat is older than this plus "
		"bothy.agent_heartbeat_persist_interval is set offline once for the cluster."},
	{"agent_heartbeat_persist_interval", &bothy_agent_heartbeat_persist_interval_ms, 10000, 1000, 600000, MS,
		"How often a gateway stores an agent's heartbeat.",
		"A heartbeat that takes an agent over on a node is stored at once; after that at most once "
		"per interval. The offline decision allows this much lag as grace."},
	{"listen_reconnect_backoff_cap", &bothy_listen_reconnect_backoff_cap_ms, 5000, 100, 300000, MS,
		"Delay between a gateway's attempts to listen again.",
		"After losing its listening connection a gateway retries at once, then once per this delay "
		"until LISTEN succeeds."},
	{"signing_key_cache_ttl", &bothy_signing_key_cache_ttl_ms, 30000, 1000, 3600000, MS,
		"How long a gateway caches the key store.",
		"A key rotated on one node signs and verifies on every other node within this time."},
	{"consumer_lease", &bothy_consumer_lease_ms, 30000, 3000, 3600000, MS,
		"How long an agent consumer connection's hold lasts without a save.",
		"Each guarded save of the held acknowledgement renews the lease of a connection's hold; "
		"a gateway saves at least every third of this. A lapsed hold can be released."},
	{"terminal_open_timeout", &bothy_terminal_open_timeout_ms, 30000, 1000, 600000, MS,
		"How long a terminal session's grant lasts, and a lone side waits for its counterpart.",
		"Each open or attach draws a grant valid this long; a device stream or host data "
		"connection with no counterpart this long after its identify closes with 4102, and an "
		"opening that never started ends with open_timeout. Must be more than twice "
		"bothy.terminal_host_duplicate_probe_timeout and twice bothy.terminal_log_poll_interval."},
	{"terminal_host_heartbeat_interval", &bothy_terminal_host_heartbeat_interval_ms, 15000, 1000, 600000, MS,
		"How often a host service heartbeats on its control connection.",
		"Sent to the host in ready as heartbeat_ms. A node closes a control connection silent "
		"for this times bothy.terminal_host_heartbeat_miss_limit with 4009, and counts another "
		"node's announcement of a host that long."},
	{"terminal_host_heartbeat_miss_limit", &bothy_terminal_host_heartbeat_miss_limit, 3, 1, 100, 0, true,
		"How many heartbeat intervals a control connection may stay silent.",
		"After bothy.terminal_host_heartbeat_interval times this without a heartbeat the node "
		"closes the control connection with 4009."},
	{"terminal_host_duplicate_probe_timeout", &bothy_terminal_host_duplicate_probe_timeout_ms, 5000, 100, 60000, MS,
		"How long a host has to answer a duplicate probe.",
		"The node of the older of two control connections of one host probes it; no answer "
		"within this closes it with 4009. No session.open is sent within twice this of a "
		"second connection's first announcement."},
	{"terminal_idle_timeout", &bothy_terminal_idle_timeout_ms, 1800000, 60000, 86400000, MS,
		"How long a terminal session may see no keystroke and no output shown before it ends as idle.",
		"A pairing with no byte from the device and no output the device acknowledged reading for this "
		"long ends with close detail idle; the maintenance worker ends a session detached for this plus "
		"bothy.terminal_idle_grace."},
	{"terminal_idle_grace", &bothy_terminal_idle_grace_ms, 30000, 1000, 600000, MS,
		"Slack added to the idle timeout by the edge and the maintenance worker.",
		"The edge's stream timeout is bothy.terminal_idle_timeout plus this, so the edge never "
		"cuts a session before the server ends it."},
	{"terminal_fingerprint_max_attempts", &bothy_terminal_fingerprint_max_attempts, 5, 1, 100, 0, true,
		"Wrong fingerprint confirmations before a host goes back to pairing.",
		"Each wrong confirmation of a confirming host is counted; at this many the host goes back "
		"to pairing, its key is forgotten and its control connections are closed."},
	{"terminal_log_poll_interval", &bothy_terminal_log_poll_interval_ms, 1000, 100, 60000, MS,
		"How often each gateway reads the terminal log without a wake-up.",
		"A terminal.log signal wakes the tail at once; this bounds the delay a lost wake-up "
		"causes. Must be less than half of bothy.terminal_open_timeout."},
	{"terminal_log_retention", &bothy_terminal_log_retention_ms, 86400000, 60000, 604800000, GUC_UNIT_MS, false,
		"How long the terminal log keeps a row.",
		"The maintenance worker deletes older rows. A node that was away longer than this finds "
		"the log cut and reconciles from the session and host states."},
};

#undef MS

/*
 * The rules across two settings: the first must be more than twice the
 * second.  scope says which functions refuse to work while one is broken.
 */
typedef struct SettingsRule
{
	BothySettingsScope scope;
	const char *more;			/* this setting ... */
	const int  *more_value;
	const char *than;			/* ... must be more than twice this one */
	const int  *than_value;
} SettingsRule;

static const SettingsRule rules[] = {
	/* a node's rows stay fresh across one missed flush (D-M7-17-6) */
	{BOTHY_SETTINGS_PRESENCE, "presence_ttl", &bothy_presence_ttl_ms,
	"presence_flush_interval", &bothy_presence_flush_interval_ms},
	/* the probation of a second connection ends before an opening's deadline (D-M2-47-7) */
	{BOTHY_SETTINGS_TERMINAL, "terminal_open_timeout", &bothy_terminal_open_timeout_ms,
	"terminal_host_duplicate_probe_timeout", &bothy_terminal_host_duplicate_probe_timeout_ms},
	/* a lost wake-up still lets the hash node learn of session.started in time (D-M2-47-22) */
	{BOTHY_SETTINGS_TERMINAL, "terminal_open_timeout", &bothy_terminal_open_timeout_ms,
	"terminal_log_poll_interval", &bothy_terminal_log_poll_interval_ms},
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

	for (size_t i = 0; i < lengthof(int_settings); i++)
	{
		const IntSetting *d = &int_settings[i];

		snprintf(name, sizeof(name), "bothy.%s", d->name);
		DefineCustomIntVariable(name, d->short_desc, d->long_desc,
								d->value, d->boot, d->min, d->max,
								PGC_SIGHUP, d->unit,
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

/* The first broken rule of the scopes given, or NULL. */
static const SettingsRule *
broken_rule(unsigned scopes)
{
	for (size_t i = 0; i < lengthof(rules); i++)
		if ((rules[i].scope & scopes) != 0 &&
			(int64) *rules[i].more_value <= 2 * (int64) *rules[i].than_value)
			return &rules[i];
	return NULL;
}

bool
bothy_settings_consistent_in(int elevel, unsigned scopes)
{
	const SettingsRule *r = broken_rule(scopes);

	if (r == NULL)
		return true;
	ereport(elevel,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("bothy.%s must be more than twice bothy.%s", r->more, r->than),
			 errdetail("bothy.%s is %d ms and bothy.%s is %d ms.",
					   r->more, *r->more_value, r->than, *r->than_value),
			 errhint("Raise bothy.%s or lower bothy.%s, then reload.", r->more, r->than)));
	return false;
}

bool
bothy_settings_consistent(int elevel)
{
	return bothy_settings_consistent_in(elevel, BOTHY_SETTINGS_ALL);
}

const char *
bothy_settings_broken(void)
{
	const SettingsRule *r = broken_rule(BOTHY_SETTINGS_ALL);

	if (r == NULL)
		return NULL;
	return psprintf("bothy.%s must be more than twice bothy.%s", r->more, r->than);
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
 * gateway needs, durations in milliseconds, counts without a unit.  It
 * refuses an inconsistent configuration so that no gateway starts on one.
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
	for (size_t i = 0; i < lengthof(int_settings); i++)
	{
		if (!int_settings[i].gateway)
			continue;
		snprintf(number, sizeof(number), "%d", *int_settings[i].value);
		put_setting(rsinfo, int_settings[i].name, number,
					int_settings[i].unit == GUC_UNIT_MS ? "ms" : NULL);
	}
	return (Datum) 0;
}

/* A duration setting as an interval, refusing while a rule of scope is broken. */
static Datum
interval_checked(int ms, unsigned scope)
{
	Interval   *result = palloc0(sizeof(Interval));

	bothy_settings_consistent_in(ERROR, scope);
	result->time = (int64) ms * 1000;
	PG_RETURN_INTERVAL_P(result);
}

PG_FUNCTION_INFO_V1(bothy_presence_ttl);

/*
 * bothy._presence_ttl() returns the TTL as an interval for the SQL
 * functions, refusing to hand out a TTL that breaks the rule.
 */
Datum
bothy_presence_ttl(PG_FUNCTION_ARGS)
{
	return interval_checked(bothy_presence_ttl_ms, BOTHY_SETTINGS_PRESENCE);
}

PG_FUNCTION_INFO_V1(bothy_terminal_open_timeout);

/*
 * bothy._terminal_open_timeout() returns the grant's lifetime as an
 * interval, refusing while a rule of the terminal is broken: no grant is
 * drawn on settings the gateways would refuse.
 */
Datum
bothy_terminal_open_timeout(PG_FUNCTION_ARGS)
{
	return interval_checked(bothy_terminal_open_timeout_ms, BOTHY_SETTINGS_TERMINAL);
}
