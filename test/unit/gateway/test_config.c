/*
 * test_config.c
 *		Unit tests of src/gateway/core/config.c: the listen address parser,
 *		the `serve` options over the environment, and the cluster settings of
 *		bothy.settings() with their cross-rules, with both routes' options
 *		and settings registered as main.c registers them (clients/settings.c,
 *		terminal/settings.c).  The strict integer under them is src/common's
 *		(test/unit/test_intparse.c).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clients/settings.h"
#include "core/config.h"
#include "core/route.h"
#include "terminal/settings.h"
#include "unit.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_ARGS 32

static char desc[512];

static const char *
described(const char *what, const char *name)
{
	snprintf(desc, sizeof(desc), "%s: %s", what, name);
	return desc;
}

/* --- gw_parse_listen ----------------------------------------------------- */

static bool
listen_is(const char *s, const char *host, int port)
{
	char		h[256];
	int			p = -1;

	memset(h, '#', sizeof(h));
	return gw_parse_listen(s, h, sizeof(h), &p) && strcmp(h, host) == 0 && p == port;
}

static bool
listen_refused(const char *s)
{
	char		h[256] = "untouched";
	int			p = 4242;

	return !gw_parse_listen(s, h, sizeof(h), &p) && p == 4242 && strcmp(h, "untouched") == 0;
}

static void
test_parse_listen(void)
{
	static const char *const bad[] = {
		"localhost", "localhost:", "localhost:0", "localhost:65536", "localhost:+80",
		"localhost:80 ", "localhost: 80", "local host:80", "::1:80", "[::1:80", "[::1]80",
		"[]:80", "[:80", "x[::1]:80", "", ":", "[::1]:", ":-1", ":http",
		"gw.example:1", "localhost:80", "[a]:80", "127.0.0.1.2:80", "256.0.0.1:80",
		"[127.0.0.1]:80", "[::1%lo]:80", " 127.0.0.1:80",
	};
	char		h[256];
	int			p = 0;
	size_t		i;
	bool		pass = true;

	UNIT_OK(listen_is("127.0.0.1:8080", "127.0.0.1", 8080), "listen: IPv4:port");
	UNIT_OK(listen_is("10.0.0.1:1", "10.0.0.1", 1), "listen: port 1");
	UNIT_OK(listen_is(":65535", "", 65535), "listen: \":PORT\" is every address, port 65535");
	UNIT_OK(listen_is("[::1]:443", "::1", 443), "listen: [v6]:port without the brackets");
	UNIT_OK(listen_is("[2001:db8::7]:9000", "2001:db8::7", 9000), "listen: a longer [v6]:port");
	UNIT_OK(listen_is("[::]:80", "::", 80), "listen: [::] is every IPv6 address");
	for (i = 0; i < N_ELEMS(bad); i++)
		pass = unit_case(listen_refused(bad[i]), bad[i]) && pass;
	UNIT_OK(pass, "listen: no port, bad ports, blanks, bare IPv6, broken brackets, host names "
			"and addresses that are not numeric refused, output untouched");
	UNIT_OK(listen_refused(NULL), "listen: NULL refused");

	/* The host buffer: the longest IPv6 text and its NUL must fit. */
	UNIT_OK(gw_parse_listen("[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:80", h, sizeof(h), &p) &&
			strlen(h) == 45 && p == 80, "listen: the longest IPv6 text fits");
	UNIT_OK(!gw_parse_listen("[::1]:80", h, 3, &p) && gw_parse_listen("[::1]:80", h, 4, &p),
			"listen: the brackets do not count against the host buffer");
}

/* --- gw_options_parse ---------------------------------------------------- */

/* One run of the option parser over a fresh copy of args. */
typedef struct run_result
{
	int			rc;
	gw_options	o;
	char		err[256];
	char	   *out;			/* what --help printed */
} run_result;

static char *argv_store[MAX_ARGS + 1];

static void
free_argv(void)
{
	size_t		i;

	for (i = 0; argv_store[i] != NULL; i++)
	{
		free(argv_store[i]);
		argv_store[i] = NULL;
	}
}

/*
 * Parses "serve" + args (NULL-terminated) from defaults.  o.database and
 * o.keys may point into argv_store, which stays valid until the next run.
 */
static run_result *
run(const char *const *args)
{
	static run_result r;
	size_t		size = 0;
	FILE	   *out;
	int			argc = 0;

	free_argv();
	free(r.out);
	memset(&r, 0, sizeof(r));
	argv_store[argc++] = strdup("serve");
	for (; *args != NULL && argc < MAX_ARGS; args++)
		argv_store[argc++] = strdup(*args);
	argv_store[argc] = NULL;
	gw_options_defaults(&r.o);
	out = open_memstream(&r.out, &size);
	if (out == NULL)
	{
		fprintf(stderr, "open_memstream failed\n");
		exit(2);
	}
	r.rc = gw_options_parse(&r.o, argc, argv_store, r.err, sizeof(r.err), out);
	fclose(out);
	return &r;
}

#define RUN(...) run((const char *const[]) {__VA_ARGS__, NULL})
#define REQ "--listen", ":8080", "--database", "dbname=x", "--keys", "/k"

/* The run refused with exactly msg. */
static bool
refused_with(const run_result *r, const char *msg)
{
	return r->rc == -1 && strcmp(r->err, msg) == 0;
}

#define NEED_LISTEN "--listen (or BOTHY_LISTEN) is required"
#define NEED_DATABASE "--database (or BOTHY_DATABASE) is required"
#define NEED_KEYS "--keys (or BOTHY_KEYS) is required"
#define BAD_LISTEN "--listen must be ADDR:PORT: a numeric address (IPv6 in brackets) and a port from 1 to 65535"

static void
clear_env(void)
{
	unsetenv("BOTHY_LISTEN");
	unsetenv("BOTHY_DATABASE");
	unsetenv("BOTHY_KEYS");
	unsetenv("BOTHY_DATABASE_READ");
}

static void
test_defaults(void)
{
	run_result *r = RUN(REQ);

	UNIT_OK(r->rc == 0 && r->err[0] == '\0' && r->out[0] == '\0',
			"options: the three required flags run, no error, nothing printed");
	UNIT_OK(strcmp(r->o.listen_host, "") == 0 && r->o.listen_port == 8080 &&
			strcmp(r->o.database, "dbname=x") == 0 && strcmp(r->o.keys, "/k") == 0,
			"options: listen, database and keys taken from the flags");
	UNIT_OK(r->o.db_pool == 2 && r->o.db_timeout_ms == 5000 && r->o.identify_timeout_ms == 10000 &&
			gw_copt.heartbeat_ms == 30000 && r->o.max_message == 16384 && r->o.send_queue == 65536 &&
			r->o.send_timeout_ms == 10000 && r->o.start_timeout_ms == 30000 &&
			r->o.stop_timeout_ms == 5000 && r->o.max_connections == 100000 &&
			gw_topt.stream_ping_ms == 30000 && gw_topt.stream_window == 524288 &&
			gw_copt.typing_interval_ms == 1000 && gw_copt.run_coalesce_ms == 50 &&
			gw_copt.agent_window == 100 && gw_copt.autocomplete_timeout_ms == 3000 &&
			r->o.log_level == GW_LOG_INFO &&
			r->o.ndatabase_read == 0 && r->o.read_wait_ms == 20 && r->o.read_retry_ms == 5000 &&
			r->o.read_misses == 3,
			"options: every default as the usage text states it");
	r = RUN("--database=dbname=y", "--keys=/k2", "--listen=[::]:1");
	UNIT_OK(r->rc == 0 && strcmp(r->o.listen_host, "::") == 0 && r->o.listen_port == 1 &&
			strcmp(r->o.database, "dbname=y") == 0 && strcmp(r->o.keys, "/k2") == 0,
			"options: --name=value form, any order");
}

typedef struct int_option
{
	const char *flag;
	long		min;
	long		max;
	size_t		offset;			/* a core option's int in gw_options */
	const int  *route_value;	/* else a route's */
} int_option;

#define OPT(f, lo, hi, field) {f, lo, hi, offsetof(gw_options, field), NULL}
#define COPT(f, lo, hi, field) {f, lo, hi, 0, &gw_copt.field}
#define TOPT(f, lo, hi, field) {f, lo, hi, 0, &gw_topt.field}

static int
option_value(const run_result *r, const int_option *opt)
{
	return opt->route_value != NULL ? *opt->route_value :
		*(const int *) ((const char *) &r->o + opt->offset);
}

static void
test_int_options(void)
{
	static const int_option opts[] = {
		OPT("--db-pool", 1, 16, db_pool),
		OPT("--db-timeout", 100, 600000, db_timeout_ms),
		OPT("--identify-timeout", 100, 600000, identify_timeout_ms),
		COPT("--heartbeat", 1000, 600000, heartbeat_ms),
		OPT("--max-message", 1024, 1048576, max_message),
		OPT("--send-queue", 1024, 16777216, send_queue),
		OPT("--send-timeout", 100, 600000, send_timeout_ms),
		OPT("--start-timeout", 1000, 600000, start_timeout_ms),
		OPT("--stop-timeout", 100, 600000, stop_timeout_ms),
		OPT("--max-connections", 1, 1000000, max_connections),
		COPT("--typing-interval", 0, 60000, typing_interval_ms),
		COPT("--run-coalesce", 0, 10000, run_coalesce_ms),
		COPT("--agent-window", 1, 1000, agent_window),
		COPT("--autocomplete-timeout", 100, 60000, autocomplete_timeout_ms),
		TOPT("--stream-ping-interval", 100, 600000, stream_ping_ms),
		TOPT("--stream-window", 1024, 16777216, stream_window),
		OPT("--database-read-wait", 1, 10000, read_wait_ms),
		OPT("--database-read-retry", 100, 600000, read_retry_ms),
		OPT("--database-read-misses", 1, 1000, read_misses),
	};
	size_t		i;

	for (i = 0; i < N_ELEMS(opts); i++)
	{
		const int_option *opt = &opts[i];
		char		lo[32],
					hi[32],
					below[32],
					above[32],
					want[128];
		run_result *r;
		int			got_lo,
					got_hi;
		bool		pass;

		snprintf(lo, sizeof(lo), "%ld", opt->min);
		snprintf(hi, sizeof(hi), "%ld", opt->max);
		snprintf(below, sizeof(below), "%ld", opt->min - 1);
		snprintf(above, sizeof(above), "%ld", opt->max + 1);
		snprintf(want, sizeof(want), "%s must be an integer from %ld to %ld",
				 opt->flag, opt->min, opt->max);

		r = RUN(REQ, opt->flag, lo);
		got_lo = option_value(r, opt);
		pass = unit_case(r->rc == 0 && got_lo == opt->min, "min accepted");
		r = RUN(REQ, opt->flag, hi);
		got_hi = option_value(r, opt);
		pass = unit_case(r->rc == 0 && got_hi == opt->max, "max accepted") && pass;
		r = RUN(REQ, opt->flag, below);
		pass = unit_case(refused_with(r, want), "min - 1 refused") && pass;
		r = RUN(REQ, opt->flag, above);
		pass = unit_case(refused_with(r, want), "max + 1 refused") && pass;
		UNIT_OK(pass, described("min and max accepted, one outside refused naming the range", opt->flag));
	}
	UNIT_OK(RUN(REQ, "--db-pool", "4x")->rc == -1 && RUN(REQ, "--db-pool", " 4")->rc == -1 &&
			RUN(REQ, "--db-pool", "")->rc == -1 && RUN(REQ, "--db-pool", "+4")->rc == -1,
			"options: numbers are strict (\"4x\", \" 4\", \"\", \"+4\" refused)");
	UNIT_OK(RUN(REQ, "--db-pool", "3", "--db-pool", "5")->o.db_pool == 5,
			"options: the last of a repeated flag wins");
	UNIT_OK(refused_with(RUN(REQ, "--db-pool"), "an option needs a value"),
			"options: a flag without its value says so");
	UNIT_OK(refused_with(RUN(REQ, "--db-poo", "3"), "unknown option") &&
			refused_with(RUN(REQ, "--max-conn=5"), "unknown option"),
			"options: an abbreviated name is refused, not taken for the option it starts");
	UNIT_OK(RUN(REQ, "--database", "--keys")->rc == 0,
			"options: a value that looks like an option is the value");
}

static void
test_log_levels(void)
{
	static const struct
	{
		const char *name;
		gw_log_level level;
	}			levels[] = {
		{"debug", GW_LOG_DEBUG}, {"info", GW_LOG_INFO}, {"warn", GW_LOG_WARN}, {"error", GW_LOG_ERROR},
	};
	static const char *const bad[] = {"INFO", "warning", "", "3", "debug "};
	size_t		i;
	bool		pass = true;

	for (i = 0; i < N_ELEMS(levels); i++)
	{
		run_result *r = RUN(REQ, "--log-level", levels[i].name);

		pass = unit_case(r->rc == 0 && r->o.log_level == levels[i].level, levels[i].name) && pass;
	}
	UNIT_OK(pass, "--log-level: debug, info, warn and error");
	pass = true;
	for (i = 0; i < N_ELEMS(bad); i++)
	{
		run_result *r = RUN(REQ, "--log-level", bad[i]);

		pass = unit_case(r->rc == -1 &&
						 strcmp(r->err, "--log-level must be one of debug, info, warn, error") == 0,
						 bad[i]) && pass;
	}
	UNIT_OK(pass, "--log-level: INFO, warning, empty, a number and a trailing blank refused");
}

/*
 * `serve --help` as core/config.c printed it whole before each route
 * declared its own options (issue 26): the routes' lines at their places.
 */
static const char usage_before[] =
"usage: bothy-gateway serve --listen ADDR:PORT --database CONNINFO --keys DIR [options]\n"
"\n"
"  --listen ADDR:PORT         the numeric address to serve /gateway, /v1/, /healthz,\n"
"                             /readyz, /metrics, /status.json and --web on\n"
"                             (env BOTHY_LISTEN; IPv6 as [ADDR]:PORT; ADDR empty:\n"
"                             every IPv4 address)\n"
"  --database CONNINFO        libpq connection string (env BOTHY_DATABASE)\n"
"  --database-read CONNINFO   a hot standby for the reads of deliveries, repeatable\n"
"                             up to 8 (env BOTHY_DATABASE_READ: one; default none)\n"
"  --database-read-wait MS    a read's wait for a standby connection, then for its\n"
"                             standby to replay its fence (each), then the\n"
"                             primary, 1..10000 (default 20)\n"
"  --database-read-retry MS   a standby out of rotation is tried again after,\n"
"                             100..600000 (default 5000)\n"
"  --database-read-misses N   reads in a row whose fence a standby missed within\n"
"                             the wait, then it leaves the rotation, 1..1000\n"
"                             (default 3)\n"
"  --keys DIR                 the shared key store (env BOTHY_KEYS)\n"
"  --web DIR                  serve the page from DIR: index.html at /, status.html\n"
"                             at /status, other files by name (default: no page)\n"
"  --db-pool N                query connections, 1..16 (default 2)\n"
"  --db-timeout MS            one database call, 100..600000 (default 5000)\n"
"  --identify-timeout MS      identify after connecting, 100..600000 (default 10000)\n"
"  --heartbeat MS             heartbeat_ms announced in ready; silence for twice\n"
"                             that closes the connection (4009), 1000..600000 (default 30000)\n"
"  --max-message BYTES        one client message, 1024..1048576 (default 16384)\n"
"  --send-queue BYTES         queued to one client, 1024..16777216 (default 65536)\n"
"  --send-timeout MS          queued output not read, 100..600000 (default 10000)\n"
"  --start-timeout MS         database at start, 1000..600000 (default 30000)\n"
"  --stop-timeout MS          orderly stop, 100..600000 (default 5000)\n"
"  --max-connections N        WebSocket connections, 1..1000000 (default 100000)\n"
"  --typing-interval MS       one typing op per thread per connection per this,\n"
"                             0..60000 (default 1000)\n"
"  --run-coalesce MS          at most one run.updated per run per this window,\n"
"                             0..10000 (default 50)\n"
"  --agent-window N           agent events sent beyond the acknowledged one,\n"
"                             1..1000 (default 100)\n"
"  --autocomplete-timeout MS  wait for a consumer's answer, 100..60000 (default 3000)\n"
"  --stream-ping-interval MS  a ping on each terminal stream side this often (the edge\n"
"                             sees no silence), 100..600000 (default 30000)\n"
"  --stream-window BYTES      a terminal device's output written and not yet\n"
"                             acknowledged, 1024..16777216 (default 524288)\n"
"  --log-level LEVEL          debug, info, warn or error (default info)\n"
"  --help                     this text\n";

static void
test_help_and_errors(void)
{
	run_result *r = RUN("--help");

	UNIT_OK(r->rc == 1 && strcmp(r->out, gw_serve_usage()) == 0 && r->err[0] == '\0',
			"--help returns 1 and prints the usage, even without the required flags");
	UNIT_OK(strcmp(gw_serve_usage(), usage_before) == 0,
			"the usage text, the core's options and both routes', byte for byte as before issue 26");
	r = RUN("--db-pool", "0", "--help");
	UNIT_OK(r->rc == -1 && r->out[0] == '\0', "a bad option before --help is an error, not help");

	UNIT_OK(refused_with(RUN(REQ, "--frobnicate", "1"), "unknown option"),
			"an unknown long option");
	UNIT_OK(refused_with(RUN(REQ, "-x"), "unknown option"), "a short option (there are none)");
	r = RUN("--help=yes");
	UNIT_OK(r->rc == -1 && r->out[0] == '\0', "--help takes no value");

	/* The message is not checked: see the report on the missing-value case. */
	r = RUN(REQ, "--db-pool");
	UNIT_OK(r->rc == -1, "an option without its value is refused");
	r = RUN("--listen");
	UNIT_OK(r->rc == -1, "--listen without its value is refused");

	UNIT_OK(refused_with(RUN(REQ, "extra"), "unexpected argument"), "a stray argument at the end");
	UNIT_OK(refused_with(RUN("--listen", ":1", "stray", "--database", "d", "--keys", "k"),
						 "unexpected argument"),
			"a stray argument in the middle stops parsing (no permutation)");
	r = RUN(REQ, "--", "--db-pool", "3");
	UNIT_OK(refused_with(r, "unexpected argument") && r->o.db_pool == 2,
			"options after \"--\" are arguments, and refused");

	UNIT_OK(refused_with(RUN("--database", "d", "--keys", "k"), NEED_LISTEN), "missing --listen");
	UNIT_OK(refused_with(RUN("--listen", ":1", "--keys", "k"), NEED_DATABASE),
			"missing --database");
	UNIT_OK(refused_with(RUN("--listen", ":1", "--database", "d"), NEED_KEYS), "missing --keys");
	UNIT_OK(refused_with(RUN("--listen", ":1", "--database", "", "--keys", "k"), NEED_DATABASE),
			"an empty --database is missing");
	UNIT_OK(refused_with(RUN("--listen", ":1", "--database", "d", "--keys", ""), NEED_KEYS),
			"an empty --keys is missing");
	UNIT_OK(refused_with(RUN("--listen", "", "--database", "d", "--keys", "k"), BAD_LISTEN),
			"an empty --listen is a bad address");
	UNIT_OK(refused_with(RUN("--listen", "host:0", "--database", "d", "--keys", "k"), BAD_LISTEN),
			"a bad --listen names the form");
	UNIT_OK(refused_with(RUN(NULL), NEED_LISTEN), "no arguments at all");
}

static void
test_environment(void)
{
	run_result *r;

	setenv("BOTHY_LISTEN", "10.0.0.1:7000", 1);
	setenv("BOTHY_DATABASE", "dbname=env", 1);
	setenv("BOTHY_KEYS", "/env/keys", 1);
	r = RUN(NULL);
	UNIT_OK(r->rc == 0 && strcmp(r->o.listen_host, "10.0.0.1") == 0 && r->o.listen_port == 7000 &&
			strcmp(r->o.database, "dbname=env") == 0 && strcmp(r->o.keys, "/env/keys") == 0,
			"env: BOTHY_LISTEN, BOTHY_DATABASE and BOTHY_KEYS stand for the flags");
	r = RUN("--listen", ":9", "--database", "dbname=flag", "--keys", "/flag");
	UNIT_OK(r->rc == 0 && strcmp(r->o.listen_host, "") == 0 && r->o.listen_port == 9 &&
			strcmp(r->o.database, "dbname=flag") == 0 && strcmp(r->o.keys, "/flag") == 0,
			"env: each flag overrides its variable");
	r = RUN("--keys", "/flag");
	UNIT_OK(r->rc == 0 && r->o.listen_port == 7000 && strcmp(r->o.database, "dbname=env") == 0 &&
			strcmp(r->o.keys, "/flag") == 0, "env: one flag overrides only its own variable");

	setenv("BOTHY_LISTEN", "not an address", 1);
	UNIT_OK(refused_with(RUN(NULL), BAD_LISTEN), "env: a bad BOTHY_LISTEN is refused");
	r = RUN("--listen", ":9");
	UNIT_OK(r->rc == 0 && r->o.listen_port == 9, "env: --listen replaces a bad BOTHY_LISTEN unparsed");

	setenv("BOTHY_LISTEN", "", 1);
	setenv("BOTHY_DATABASE", "", 1);
	setenv("BOTHY_KEYS", "", 1);
	UNIT_OK(refused_with(RUN(NULL), NEED_LISTEN), "env: an empty BOTHY_LISTEN is unset");
	UNIT_OK(refused_with(RUN("--listen", ":1"), NEED_DATABASE),
			"env: an empty BOTHY_DATABASE is unset");
	UNIT_OK(refused_with(RUN("--listen", ":1", "--database", "d"), NEED_KEYS),
			"env: an empty BOTHY_KEYS is unset");
	clear_env();
}

/* --database-read: repeatable up to 8, the command line's replace the variable's */
static void
test_database_read(void)
{
	run_result *r = RUN(REQ, "--database-read", "host=a", "--database-read", "host=b");

	UNIT_OK(r->rc == 0 && r->o.ndatabase_read == 2 && strcmp(r->o.database_read[0], "host=a") == 0 &&
			strcmp(r->o.database_read[1], "host=b") == 0,
			"--database-read: repeatable, in the order given");
	UNIT_OK(refused_with(RUN(REQ, "--database-read", ""), "--database-read must not be empty"),
			"--database-read: empty refused");
	UNIT_OK(refused_with(RUN(REQ, "--database-read", "1", "--database-read", "2",
							 "--database-read", "3", "--database-read", "4",
							 "--database-read", "5", "--database-read", "6",
							 "--database-read", "7", "--database-read", "8",
							 "--database-read", "9"),
						 "--database-read given more than 8 times"),
			"--database-read: a ninth refused");
	setenv("BOTHY_DATABASE_READ", "host=env", 1);
	r = RUN(REQ);
	UNIT_OK(r->rc == 0 && r->o.ndatabase_read == 1 && strcmp(r->o.database_read[0], "host=env") == 0,
			"BOTHY_DATABASE_READ: one standby");
	r = RUN(REQ, "--database-read", "host=flag");
	UNIT_OK(r->rc == 0 && r->o.ndatabase_read == 1 && strcmp(r->o.database_read[0], "host=flag") == 0,
			"BOTHY_DATABASE_READ: replaced by the flags");
	setenv("BOTHY_DATABASE_READ", "", 1);
	UNIT_OK(RUN(REQ)->o.ndatabase_read == 0, "BOTHY_DATABASE_READ: empty is unset");
	clear_env();
}

/* --- the cluster settings ------------------------------------------------- */

typedef struct setting
{
	const char *name;
	long		min;
	long		max;
	bool		count;			/* no unit; else ms */
	size_t		offset;			/* a core setting's int64_t in gw_cluster */
	const int64_t *live;		/* else a route's, written by gw_cluster_use */
} setting;

#define SET(n, lo, hi) {#n, lo, hi, false, offsetof(gw_cluster, n), NULL}
#define CSET(n, lo, hi) {#n, lo, hi, false, 0, &gw_csettings.n}
#define TSET(n, lo, hi) {#n, lo, hi, false, 0, &gw_tsettings.n}
#define TCOUNT(n, lo, hi) {#n, lo, hi, true, 0, &gw_tsettings.n}
/* The ranges of docs/configuration.md, written here independently of the tables. */
static const setting settings[] = {
	CSET(presence_flush_interval, 100, 60000),
	CSET(presence_ttl, 1000, 600000),
	CSET(typing_ttl, 1000, 60000),
	CSET(agent_presence_timeout, 1000, 3600000),
	CSET(agent_heartbeat_persist_interval, 1000, 600000),
	SET(listen_reconnect_backoff_cap, 100, 300000),
	SET(signing_key_cache_ttl, 1000, 3600000),
	CSET(consumer_lease, 3000, 3600000),
	TCOUNT(terminal_fingerprint_max_attempts, 1, 100),
	TSET(terminal_host_duplicate_probe_timeout, 100, 60000),
	TSET(terminal_host_heartbeat_interval, 1000, 600000),
	TCOUNT(terminal_host_heartbeat_miss_limit, 1, 100),
	TSET(terminal_idle_grace, 1000, 600000),
	TSET(terminal_idle_timeout, 60000, 86400000),
	TSET(terminal_log_poll_interval, 100, 60000),
	TSET(terminal_open_timeout, 1000, 600000),
};
#undef SET
#undef CSET
#undef TSET
#undef TCOUNT

/* The unit bothy.settings() gives a row: none for a count and the mode. */
static const char *
unit_of(const char *name)
{
	for (size_t i = 0; i < N_ELEMS(settings); i++)
		if (strcmp(settings[i].name, name) == 0)
			return settings[i].count ? NULL : "ms";
	return NULL;
}

/* A setting's value as read into c: a route's once c is used. */
static int64_t
field(const gw_cluster *c, const setting *s)
{
	if (s->live == NULL)
		return *(const int64_t *) ((const char *) c + s->offset);
	gw_cluster_use(c);
	return *s->live;
}

/* How many settings c has seen, the core's and the routes'. */
static int
nseen(const gw_cluster *c)
{
	int			n = __builtin_popcount(c->seen);

	for (int r = 0; r < GW_MAX_ROUTES; r++)
		n += __builtin_popcount(c->route_seen[r]);
	return n;
}

/* bothy.settings() with the defaults (docs/configuration.md); valid together. */
static const char *const default_rows[][2] = {
	{"cluster_mode", "single"},
	{"presence_flush_interval", "2000"},
	{"presence_ttl", "10000"},
	{"typing_ttl", "8000"},
	{"agent_presence_timeout", "30000"},
	{"agent_heartbeat_persist_interval", "10000"},
	{"listen_reconnect_backoff_cap", "5000"},
	{"signing_key_cache_ttl", "30000"},
	{"consumer_lease", "30000"},
	{"terminal_fingerprint_max_attempts", "5"},
	{"terminal_host_duplicate_probe_timeout", "5000"},
	{"terminal_host_heartbeat_interval", "15000"},
	{"terminal_host_heartbeat_miss_limit", "3"},
	{"terminal_idle_grace", "30000"},
	{"terminal_idle_timeout", "1800000"},
	{"terminal_log_poll_interval", "1000"},
	{"terminal_open_timeout", "30000"},
};

/* Applies every default row but skip (NULL: all); true when all applied. */
static bool
apply_defaults(gw_cluster *c, const char *skip)
{
	char		err[256];
	size_t		i;
	bool		ok = true;

	gw_cluster_init(c);
	for (i = 0; i < N_ELEMS(default_rows); i++)
	{
		const char *name = default_rows[i][0];

		if (skip != NULL && strcmp(name, skip) == 0)
			continue;
		ok = ok && gw_cluster_apply(c, name, default_rows[i][1], unit_of(name), err, sizeof(err));
	}
	return ok;
}

static void
test_cluster_settings(void)
{
	gw_cluster	c;
	char		err[256];
	size_t		i;
	bool		missing_named = true;

	for (i = 0; i < N_ELEMS(settings); i++)
	{
		const setting *s = &settings[i];
		const char *unit = s->count ? NULL : "ms";
		const char *other = s->count ? "ms" : NULL;
		char		lo[32],
					hi[32],
					below[32],
					above[32],
					want[160];
		bool		pass;

		snprintf(lo, sizeof(lo), "%ld", s->min);
		snprintf(hi, sizeof(hi), "%ld", s->max);
		snprintf(below, sizeof(below), "%ld", s->min - 1);
		snprintf(above, sizeof(above), "%ld", s->max + 1);
		snprintf(want, sizeof(want), "bothy.%s must be from %ld to %ld%s", s->name, s->min, s->max,
				 s->count ? "" : " ms");

		gw_cluster_init(&c);
		pass = unit_case(gw_cluster_apply(&c, s->name, lo, unit, err, sizeof(err)) &&
						 field(&c, s) == s->min && nseen(&c) == 1, "min taken, only its bit seen");
		pass = unit_case(gw_cluster_apply(&c, s->name, hi, unit, err, sizeof(err)) &&
						 field(&c, s) == s->max, "max taken") && pass;

		err[0] = '\0';
		pass = unit_case(!gw_cluster_apply(&c, s->name, below, unit, err, sizeof(err)) &&
						 strcmp(err, want) == 0 && field(&c, s) == s->max,
						 "min - 1 refused naming the setting, value kept") && pass;
		err[0] = '\0';
		pass = unit_case(!gw_cluster_apply(&c, s->name, above, unit, err, sizeof(err)) &&
						 strcmp(err, want) == 0 && field(&c, s) == s->max,
						 "max + 1 refused naming the setting, value kept") && pass;

		gw_cluster_init(&c);
		pass = unit_case(!gw_cluster_apply(&c, s->name, lo, "s", err, sizeof(err)) &&
						 !gw_cluster_apply(&c, s->name, lo, other, err, sizeof(err)) &&
						 (s->count || !gw_cluster_apply(&c, s->name, lo, "", err, sizeof(err))) &&
						 !gw_cluster_apply(&c, s->name, lo, "MS", err, sizeof(err)) &&
						 !gw_cluster_apply(&c, s->name, NULL, unit, err, sizeof(err)) &&
						 !gw_cluster_apply(&c, s->name, "1e3", unit, err, sizeof(err)) &&
						 strcmp(err, want) == 0 && nseen(&c) == 0 && field(&c, s) == 0,
						 "another unit, a missing one and a bad number refused, not seen") && pass;
		if (s->count)
			pass = unit_case(gw_cluster_apply(&c, s->name, lo, "", err, sizeof(err)) &&
							 field(&c, s) == s->min, "a count: an empty unit is none") && pass;
		UNIT_OK(pass, described("setting: min and max in its unit; outside, another unit or a bad number refused",
								s->name));
	}

	gw_cluster_init(&c);
	UNIT_OK(gw_cluster_apply(&c, "cluster_mode", "multi", NULL, err, sizeof(err)) && c.multi &&
			gw_cluster_apply(&c, "cluster_mode", "single", NULL, err, sizeof(err)) && !c.multi,
			"cluster_mode: multi and single");
	gw_cluster_init(&c);
	err[0] = '\0';
	UNIT_OK(!gw_cluster_apply(&c, "cluster_mode", "Multi", NULL, err, sizeof(err)) &&
			!gw_cluster_apply(&c, "cluster_mode", "", NULL, err, sizeof(err)) &&
			!gw_cluster_apply(&c, "cluster_mode", NULL, NULL, err, sizeof(err)) &&
			strcmp(err, "bothy.cluster_mode must be single or multi") == 0 && nseen(&c) == 0,
			"cluster_mode: another spelling, empty and NULL refused, not seen");

	gw_cluster_init(&c);
	strcpy(err, "untouched");
	UNIT_OK(gw_cluster_apply(&c, "future_setting", "abc", "furlongs", err, sizeof(err)) &&
			gw_cluster_apply(&c, "presence", "1", "ms", err, sizeof(err)) &&
			nseen(&c) == 0 && strcmp(err, "untouched") == 0,
			"an unknown name (even a prefix of a known one) is skipped, nothing seen");

	UNIT_OK(apply_defaults(&c, NULL) && gw_cluster_check(&c, err, sizeof(err)),
			"the shipped defaults apply and pass the check");
	gw_cluster_use(&c);
	UNIT_OK(gw_csettings.presence_flush_interval == 2000 && gw_csettings.presence_ttl == 10000 &&
			gw_csettings.typing_ttl == 8000 && gw_csettings.agent_presence_timeout == 30000 &&
			gw_csettings.agent_heartbeat_persist_interval == 10000 &&
			c.listen_reconnect_backoff_cap == 5000 && c.signing_key_cache_ttl == 30000 &&
			gw_csettings.consumer_lease == 30000 && !c.multi &&
			gw_tsettings.terminal_fingerprint_max_attempts == 5 &&
			gw_tsettings.terminal_host_duplicate_probe_timeout == 5000 &&
			gw_tsettings.terminal_host_heartbeat_interval == 15000 &&
			gw_tsettings.terminal_host_heartbeat_miss_limit == 3 &&
			gw_tsettings.terminal_idle_grace == 30000 && gw_tsettings.terminal_idle_timeout == 1800000 &&
			gw_tsettings.terminal_log_poll_interval == 1000 &&
			gw_tsettings.terminal_open_timeout == 30000,
			"each row lands in its own field, the routes' in their own structs once used");

	for (i = 0; i < N_ELEMS(default_rows); i++)
	{
		char		want[160];

		snprintf(want, sizeof(want), "bothy.settings() returned no bothy.%s", default_rows[i][0]);
		err[0] = '\0';
		missing_named = unit_case(apply_defaults(&c, default_rows[i][0]) &&
								  !gw_cluster_check(&c, err, sizeof(err)) && strcmp(err, want) == 0,
								  default_rows[i][0]) && missing_named;
	}
	UNIT_OK(missing_named, "check: without any one of the rows it fails naming that one");
	gw_cluster_init(&c);
	UNIT_OK(!gw_cluster_check(&c, err, sizeof(err)) &&
			strcmp(err, "bothy.settings() returned no bothy.cluster_mode") == 0,
			"check of nothing names cluster_mode first");
}

/* Defaults with flush and ttl replaced; the result of the check. */
static bool
check_flush_ttl(const char *flush, const char *ttl, char *err, size_t errlen)
{
	gw_cluster	c;

	if (!apply_defaults(&c, NULL) ||
		!gw_cluster_apply(&c, "presence_flush_interval", flush, "ms", err, errlen) ||
		!gw_cluster_apply(&c, "presence_ttl", ttl, "ms", err, errlen))
	{
		snprintf(err, errlen, "apply failed");
		return false;
	}
	return gw_cluster_check(&c, err, errlen);
}

static void
test_presence_rule(void)
{
	const char *rule = "bothy.presence_ttl must be more than twice bothy.presence_flush_interval";
	char		err[256];

	UNIT_OK(!check_flush_ttl("1000", "2000", err, sizeof(err)) && strcmp(err, rule) == 0,
			"presence_ttl exactly twice the flush is refused");
	UNIT_OK(check_flush_ttl("1000", "2001", err, sizeof(err)),
			"presence_ttl one ms over twice the flush passes");
	UNIT_OK(!check_flush_ttl("60000", "120000", err, sizeof(err)) && strcmp(err, rule) == 0 &&
			check_flush_ttl("60000", "120001", err, sizeof(err)),
			"the rule's edge at the largest flush interval");
	UNIT_OK(!check_flush_ttl("1000", "1000", err, sizeof(err)) && strcmp(err, rule) == 0,
			"presence_ttl below twice the flush is refused");
	UNIT_OK(check_flush_ttl("100", "1000", err, sizeof(err)),
			"the smallest ttl with the smallest flush passes");
	UNIT_OK(!check_flush_ttl("500", "1000", err, sizeof(err)) &&
			check_flush_ttl("499", "1000", err, sizeof(err)),
			"the rule's edge at the smallest ttl");
}

/* Defaults with the open timeout and one other terminal setting replaced. */
static bool
check_open_timeout(const char *open, const char *other, const char *value, char *err, size_t errlen)
{
	gw_cluster	c;

	if (!apply_defaults(&c, NULL) ||
		!gw_cluster_apply(&c, "terminal_open_timeout", open, "ms", err, errlen) ||
		!gw_cluster_apply(&c, other, value, "ms", err, errlen))
	{
		snprintf(err, errlen, "apply failed");
		return false;
	}
	return gw_cluster_check(&c, err, errlen);
}

static void
test_terminal_rules(void)
{
	const char *probe = "terminal_host_duplicate_probe_timeout";
	const char *poll = "terminal_log_poll_interval";
	char		err[256];

	UNIT_OK(!check_open_timeout("10000", probe, "5000", err, sizeof(err)) &&
			strcmp(err, "bothy.terminal_open_timeout must be more than twice "
				   "bothy.terminal_host_duplicate_probe_timeout") == 0 &&
			check_open_timeout("10001", probe, "5000", err, sizeof(err)),
			"open timeout against the probe timeout: twice refused, one ms more passes");
	UNIT_OK(!check_open_timeout("20000", poll, "10000", err, sizeof(err)) &&
			strcmp(err, "bothy.terminal_open_timeout must be more than twice "
				   "bothy.terminal_log_poll_interval") == 0 &&
			check_open_timeout("20001", poll, "10000", err, sizeof(err)),
			"open timeout against the log poll interval: twice refused, one ms more passes");
}

/*
 * The "starting" and "cluster settings read" records as server.c wrote
 * them from one format string before issue 26 (docs/gateway.md): the
 * routes' fields at the same places, byte for byte.
 */
static void
test_records(void)
{
	run_result *r = RUN(REQ, "--heartbeat", "1234", "--stream-window", "4096", "--agent-window", "7",
						"--database-read", "host=a", "--database-read-wait", "30");
	gw_cluster	c;
	char		got[1024],
				err[256];

	gw_options_describe(&r->o, got, sizeof(got));
	UNIT_OK(r->rc == 0 && strcmp(got,
								 "listen_port=8080 database=set keys=set db_pool=2 db_timeout_ms=5000 "
								 "identify_timeout_ms=10000 heartbeat_ms=1234 max_message=16384 "
								 "send_queue=65536 send_timeout_ms=10000 start_timeout_ms=30000 "
								 "stop_timeout_ms=5000 max_connections=100000 typing_interval_ms=1000 "
								 "run_coalesce_ms=50 agent_window=7 autocomplete_timeout_ms=3000 "
								 "stream_ping_ms=30000 stream_window=4096 database_read=1 "
								 "database_read_wait_ms=30 database_read_retry_ms=5000 "
								 "database_read_misses=3") == 0,
			"\"starting\": the core's and the routes' options in the order of before");
	UNIT_OK(apply_defaults(&c, NULL) &&
			gw_cluster_apply(&c, "cluster_mode", "multi", NULL, err, sizeof(err)) &&
			gw_cluster_apply(&c, "consumer_lease", "45000", "ms", err, sizeof(err)) &&
			gw_cluster_apply(&c, "presence_ttl", "12000", "ms", err, sizeof(err)), "records: applied");
	gw_cluster_describe(&c, got, sizeof(got));
	UNIT_OK(strcmp(got, "cluster_mode=multi presence_flush_interval_ms=2000 presence_ttl_ms=12000 "
				   "typing_ttl_ms=8000 agent_presence_timeout_ms=30000 "
				   "agent_heartbeat_persist_interval_ms=10000 listen_reconnect_backoff_cap_ms=5000 "
				   "signing_key_cache_ttl_ms=30000 consumer_lease_ms=45000") == 0,
			"\"cluster settings read\": the clients' settings among the core's, the terminal's not logged");
}

/* A read the check refuses leaves the routes' live settings as they were. */
static void
test_staged_until_used(void)
{
	gw_cluster	c;
	char		err[256];

	UNIT_OK(apply_defaults(&c, NULL) && gw_cluster_check(&c, err, sizeof(err)), "staged: defaults");
	gw_cluster_use(&c);
	UNIT_OK(apply_defaults(&c, NULL) &&
			gw_cluster_apply(&c, "presence_ttl", "4000", "ms", err, sizeof(err)) &&
			gw_cluster_apply(&c, "terminal_open_timeout", "9000", "ms", err, sizeof(err)) &&
			!gw_cluster_check(&c, err, sizeof(err)) &&
			gw_csettings.presence_ttl == 10000 && gw_tsettings.terminal_open_timeout == 30000,
			"staged: a refused read (presence_ttl under twice the flush) changes no route's settings");
	UNIT_OK(strcmp(err, "bothy.presence_ttl must be more than twice bothy.presence_flush_interval") == 0,
			"staged: the rules run in registration order, the gateway route's first");
}

/* What a route does not register does not exist: its options nor its settings. */
static void
test_unregistered(void)
{
	gw_cluster	c;
	char		err[256];

	gw_route_reset();
	UNIT_OK(refused_with(RUN(REQ, "--heartbeat", "2000"), "unknown option") &&
			strstr(gw_serve_usage(), "--heartbeat") == NULL &&
			strstr(gw_serve_usage(), "--max-connections") != NULL,
			"no route registered: --heartbeat is unknown and absent from --help");
	gw_cluster_init(&c);
	UNIT_OK(gw_cluster_apply(&c, "cluster_mode", "single", NULL, err, sizeof(err)) &&
			gw_cluster_apply(&c, "listen_reconnect_backoff_cap", "5000", "ms", err, sizeof(err)) &&
			gw_cluster_apply(&c, "signing_key_cache_ttl", "30000", "ms", err, sizeof(err)) &&
			gw_cluster_apply(&c, "presence_ttl", "1", "ms", err, sizeof(err)) &&
			gw_cluster_check(&c, err, sizeof(err)),
			"no route registered: the core's settings suffice, a route's row is an unknown name");
}

/* The routes as main.c registers them (the key store has no options). */
static void
register_routes(void)
{
	static const gw_route clients = {.name = "gateway", .config = &gw_clients_config};
	static const gw_route terminal = {.name = "terminal", .config = &gw_terminal_config};

	if (!gw_route_register(&clients) || !gw_route_register(&terminal))
	{
		fprintf(stderr, "the routes' options did not register\n");
		exit(2);
	}
}

int
main(void)
{
	clear_env();
	register_routes();
	unit_diag("gw_parse_listen");
	test_parse_listen();
	unit_diag("gw_options_parse");
	test_defaults();
	test_int_options();
	test_log_levels();
	test_help_and_errors();
	test_environment();
	test_database_read();
	free_argv();
	unit_diag("cluster settings");
	test_cluster_settings();
	test_presence_rule();
	test_terminal_rules();
	test_records();
	test_staged_until_used();
	test_unregistered();
	free_argv();
	return unit_done();
}
