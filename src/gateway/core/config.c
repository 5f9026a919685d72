/*
 * core/config.c
 *		Options of `bothy-gateway serve` and the cluster settings checks.
 *
 * Options follow ttyd's getopt_long table, but each number is parsed
 * strictly (no strtol leniency: "10x", " 10", "" are refused) and with a
 * range, and a bad option is a one-line reason, never a default silently
 * used.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/config.h"
#include "intparse.h"

const char	gw_serve_usage[] =
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

void
gw_options_defaults(gw_options *o)
{
	memset(o, 0, sizeof(*o));
	o->listen_port = 0;
	o->db_pool = 2;
	o->db_timeout_ms = 5000;
	o->identify_timeout_ms = 10000;
	o->heartbeat_ms = 30000;
	o->max_message = 16384;
	o->send_queue = 65536;
	o->send_timeout_ms = 10000;
	o->start_timeout_ms = 30000;
	o->stop_timeout_ms = 5000;
	o->max_connections = 100000;
	o->typing_interval_ms = 1000;
	o->run_coalesce_ms = 50;
	o->agent_window = 100;
	o->stream_ping_ms = 30000;
	o->stream_window = 524288;
	o->autocomplete_timeout_ms = 3000;
	o->read_wait_ms = 20;
	o->read_retry_ms = 5000;
	o->log_level = GW_LOG_INFO;
}

/*
 * A numeric address only: lws 4.1 takes a host name it cannot bind as a
 * reason to log an error and serve nothing, so a name is refused here,
 * where the operator sees why.
 */
bool
gw_parse_listen(const char *s, char *host, size_t hostlen, int *port)
{
	const char *colon;
	const char *h = s;
	size_t		hlen;
	long		p;
	char		addr[INET6_ADDRSTRLEN + 1];
	unsigned char bin[sizeof(struct in6_addr)];
	bool		v6 = false;

	if (s == NULL)
		return false;
	colon = strrchr(s, ':');
	if (colon == NULL)
		return false;
	hlen = (size_t) (colon - s);
	if (hlen > 0 && s[0] == '[')
	{
		/* [v6]:port: the brackets are not part of the address */
		if (hlen < 3 || s[hlen - 1] != ']')
			return false;
		h = s + 1;
		hlen -= 2;
		v6 = true;
	}
	if (hlen + 1 > hostlen || hlen > INET6_ADDRSTRLEN)
		return false;
	memcpy(addr, h, hlen);
	addr[hlen] = '\0';
	/* a bare IPv6 address needs brackets: inet_pton(AF_INET) refuses it */
	if (hlen > 0 && inet_pton(v6 ? AF_INET6 : AF_INET, addr, bin) != 1)
		return false;
	if (!bothy_parse_int(colon + 1, 1, 65535, &p))
		return false;
	memcpy(host, addr, hlen + 1);
	*port = (int) p;
	return true;
}

static bool
set_int(const char *name, const char *value, long min, long max, int *field,
		char *err, size_t errlen)
{
	long		v;

	if (!bothy_parse_int(value, min, max, &v))
	{
		snprintf(err, errlen, "%s must be an integer from %ld to %ld", name, min, max);
		return false;
	}
	*field = (int) v;
	return true;
}

/*
 * The one option checked against the file system while parsing: a wrong
 * --web must stop the start, not turn the page into 404s later.
 */
static bool
set_web(gw_options *o, const char *value, char *err, size_t errlen)
{
	struct stat st;

	if (*value == '\0' || stat(value, &st) != 0 || !S_ISDIR(st.st_mode))
	{
		snprintf(err, errlen, "--web must name a directory");
		return false;
	}
	o->web = value;
	return true;
}

enum
{
	OPT_LISTEN = 256,
	OPT_DATABASE,
	OPT_DATABASE_READ,
	OPT_DATABASE_READ_WAIT,
	OPT_DATABASE_READ_RETRY,
	OPT_KEYS,
	OPT_WEB,
	OPT_DB_POOL,
	OPT_DB_TIMEOUT,
	OPT_IDENTIFY_TIMEOUT,
	OPT_HEARTBEAT,
	OPT_MAX_MESSAGE,
	OPT_SEND_QUEUE,
	OPT_SEND_TIMEOUT,
	OPT_START_TIMEOUT,
	OPT_STOP_TIMEOUT,
	OPT_MAX_CONNECTIONS,
	OPT_TYPING_INTERVAL,
	OPT_RUN_COALESCE,
	OPT_AGENT_WINDOW,
	OPT_AUTOCOMPLETE_TIMEOUT,
	OPT_STREAM_PING_INTERVAL,
	OPT_STREAM_WINDOW,
	OPT_LOG_LEVEL,
	OPT_HELP
};

static const struct option serve_options[] = {
	{"listen", required_argument, NULL, OPT_LISTEN},
	{"database", required_argument, NULL, OPT_DATABASE},
	{"database-read", required_argument, NULL, OPT_DATABASE_READ},
	{"database-read-wait", required_argument, NULL, OPT_DATABASE_READ_WAIT},
	{"database-read-retry", required_argument, NULL, OPT_DATABASE_READ_RETRY},
	{"keys", required_argument, NULL, OPT_KEYS},
	{"web", required_argument, NULL, OPT_WEB},
	{"db-pool", required_argument, NULL, OPT_DB_POOL},
	{"db-timeout", required_argument, NULL, OPT_DB_TIMEOUT},
	{"identify-timeout", required_argument, NULL, OPT_IDENTIFY_TIMEOUT},
	{"heartbeat", required_argument, NULL, OPT_HEARTBEAT},
	{"max-message", required_argument, NULL, OPT_MAX_MESSAGE},
	{"send-queue", required_argument, NULL, OPT_SEND_QUEUE},
	{"send-timeout", required_argument, NULL, OPT_SEND_TIMEOUT},
	{"start-timeout", required_argument, NULL, OPT_START_TIMEOUT},
	{"stop-timeout", required_argument, NULL, OPT_STOP_TIMEOUT},
	{"max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS},
	{"typing-interval", required_argument, NULL, OPT_TYPING_INTERVAL},
	{"run-coalesce", required_argument, NULL, OPT_RUN_COALESCE},
	{"agent-window", required_argument, NULL, OPT_AGENT_WINDOW},
	{"autocomplete-timeout", required_argument, NULL, OPT_AUTOCOMPLETE_TIMEOUT},
	{"stream-ping-interval", required_argument, NULL, OPT_STREAM_PING_INTERVAL},
	{"stream-window", required_argument, NULL, OPT_STREAM_WINDOW},
	{"log-level", required_argument, NULL, OPT_LOG_LEVEL},
	{"help", no_argument, NULL, OPT_HELP},
	{NULL, 0, NULL, 0}
};

/*
 * getopt_long takes any unambiguous prefix of a long name ("--data"); an
 * operator's typo must not silently become another option, so every
 * option word must spell its name in full.
 */
static bool
exact_names(int argc, char **argv, const struct option *options, char *err, size_t errlen)
{
	int			i;

	for (i = 1; i < argc; i++)
	{
		const char *word = argv[i];
		size_t		len;
		const struct option *o;

		if (strcmp(word, "--") == 0 || strncmp(word, "--", 2) != 0)
			return true;		/* the options end here */
		word += 2;
		len = strcspn(word, "=");
		for (o = options; o->name != NULL; o++)
			if (strlen(o->name) == len && strncmp(o->name, word, len) == 0)
				break;
		if (o->name == NULL)
		{
			snprintf(err, errlen, "unknown option");
			return false;
		}
		if (o->has_arg == required_argument && word[len] != '=')
			i++;				/* its value, whatever it looks like */
	}
	return true;
}

/*
 * One --database-read: the command line's replace BOTHY_DATABASE_READ's
 * (the first one given drops it), an empty one is refused, as is a ninth.
 */
static bool
add_read(gw_options *o, const char *value, bool *given, char *err, size_t errlen)
{
	if (!*given)
		o->ndatabase_read = 0;
	*given = true;
	if (*value == '\0')
	{
		snprintf(err, errlen, "--database-read must not be empty");
		return false;
	}
	if (o->ndatabase_read >= GW_MAX_STANDBYS)
	{
		snprintf(err, errlen, "--database-read given more than %d times", GW_MAX_STANDBYS);
		return false;
	}
	o->database_read[o->ndatabase_read++] = value;
	return true;
}

int
gw_options_parse(gw_options *o, int argc, char **argv, char *err, size_t errlen, FILE *out)
{
	const char *listen = getenv("BOTHY_LISTEN");
	const char *env;
	bool		read_given = false;
	int			c;

	err[0] = '\0';
	if ((env = getenv("BOTHY_DATABASE")) != NULL && *env != '\0')
		o->database = env;
	if ((env = getenv("BOTHY_KEYS")) != NULL && *env != '\0')
		o->keys = env;
	if ((env = getenv("BOTHY_DATABASE_READ")) != NULL && *env != '\0')
	{
		o->database_read[0] = env;
		o->ndatabase_read = 1;
	}
	if (listen != NULL && *listen == '\0')
		listen = NULL;

	if (!exact_names(argc, argv, serve_options, err, errlen))
		return -1;
	/*
	 * "+": stop at the first non-option, which is then refused below; ":":
	 * a missing value is ':', not '?'.  optind 0 resets glibc's parser
	 * completely (1 would keep the state of an earlier parse).
	 */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:", serve_options, NULL)) != -1)
	{
		bool		ok = true;

		switch (c)
		{
			case OPT_LISTEN:
				listen = optarg;
				break;
			case OPT_DATABASE:
				o->database = optarg;
				break;
			case OPT_KEYS:
				o->keys = optarg;
				break;
			case OPT_WEB:
				ok = set_web(o, optarg, err, errlen);
				break;
			case OPT_DATABASE_READ:
				ok = add_read(o, optarg, &read_given, err, errlen);
				break;
			case OPT_DATABASE_READ_WAIT:
				ok = set_int("--database-read-wait", optarg, 1, 10000, &o->read_wait_ms,
							 err, errlen);
				break;
			case OPT_DATABASE_READ_RETRY:
				ok = set_int("--database-read-retry", optarg, 100, 600000, &o->read_retry_ms,
							 err, errlen);
				break;
			case OPT_DB_POOL:
				ok = set_int("--db-pool", optarg, 1, 16, &o->db_pool, err, errlen);
				break;
			case OPT_DB_TIMEOUT:
				ok = set_int("--db-timeout", optarg, 100, 600000, &o->db_timeout_ms, err, errlen);
				break;
			case OPT_IDENTIFY_TIMEOUT:
				ok = set_int("--identify-timeout", optarg, 100, 600000,
							 &o->identify_timeout_ms, err, errlen);
				break;
			case OPT_HEARTBEAT:
				ok = set_int("--heartbeat", optarg, 1000, 600000, &o->heartbeat_ms, err, errlen);
				break;
			case OPT_MAX_MESSAGE:
				ok = set_int("--max-message", optarg, 1024, 1048576, &o->max_message, err, errlen);
				break;
			case OPT_SEND_QUEUE:
				ok = set_int("--send-queue", optarg, 1024, 16777216, &o->send_queue, err, errlen);
				break;
			case OPT_SEND_TIMEOUT:
				ok = set_int("--send-timeout", optarg, 100, 600000, &o->send_timeout_ms, err, errlen);
				break;
			case OPT_START_TIMEOUT:
				ok = set_int("--start-timeout", optarg, 1000, 600000,
							 &o->start_timeout_ms, err, errlen);
				break;
			case OPT_STOP_TIMEOUT:
				ok = set_int("--stop-timeout", optarg, 100, 600000,
							 &o->stop_timeout_ms, err, errlen);
				break;
			case OPT_MAX_CONNECTIONS:
				ok = set_int("--max-connections", optarg, 1, 1000000,
							 &o->max_connections, err, errlen);
				break;
			case OPT_TYPING_INTERVAL:
				ok = set_int("--typing-interval", optarg, 0, 60000,
							 &o->typing_interval_ms, err, errlen);
				break;
			case OPT_RUN_COALESCE:
				ok = set_int("--run-coalesce", optarg, 0, 10000, &o->run_coalesce_ms, err, errlen);
				break;
			case OPT_AGENT_WINDOW:
				ok = set_int("--agent-window", optarg, 1, 1000, &o->agent_window, err, errlen);
				break;
			case OPT_AUTOCOMPLETE_TIMEOUT:
				ok = set_int("--autocomplete-timeout", optarg, 100, 60000,
							 &o->autocomplete_timeout_ms, err, errlen);
				break;
			case OPT_STREAM_PING_INTERVAL:
				ok = set_int("--stream-ping-interval", optarg, 100, 600000,
							 &o->stream_ping_ms, err, errlen);
				break;
			case OPT_STREAM_WINDOW:
				/* --send-queue's range: the window was one queue until issue 27 */
				ok = set_int("--stream-window", optarg, 1024, 16777216,
							 &o->stream_window, err, errlen);
				break;
			case OPT_LOG_LEVEL:
				if (strcmp(optarg, "debug") == 0)
					o->log_level = GW_LOG_DEBUG;
				else if (strcmp(optarg, "info") == 0)
					o->log_level = GW_LOG_INFO;
				else if (strcmp(optarg, "warn") == 0)
					o->log_level = GW_LOG_WARN;
				else if (strcmp(optarg, "error") == 0)
					o->log_level = GW_LOG_ERROR;
				else
				{
					snprintf(err, errlen, "--log-level must be one of debug, info, warn, error");
					ok = false;
				}
				break;
			case OPT_HELP:
				fputs(gw_serve_usage, out);
				return 1;
			case ':':
				snprintf(err, errlen, "an option needs a value");
				return -1;
			default:
				snprintf(err, errlen, "unknown option");
				return -1;
		}
		if (!ok)
			return -1;
	}
	if (optind < argc)
	{
		snprintf(err, errlen, "unexpected argument");
		return -1;
	}
	if (listen == NULL)
	{
		snprintf(err, errlen, "--listen (or BOTHY_LISTEN) is required");
		return -1;
	}
	if (!gw_parse_listen(listen, o->listen_host, sizeof(o->listen_host), &o->listen_port))
	{
		snprintf(err, errlen, "--listen must be ADDR:PORT: a numeric address (IPv6 in brackets) and a port from 1 to 65535");
		return -1;
	}
	if (o->database == NULL || *o->database == '\0')
	{
		snprintf(err, errlen, "--database (or BOTHY_DATABASE) is required");
		return -1;
	}
	if (o->keys == NULL || *o->keys == '\0')
	{
		snprintf(err, errlen, "--keys (or BOTHY_KEYS) is required");
		return -1;
	}
	return 0;
}

/* The settings this version reads, in the order of bothy.settings(). */
typedef struct cluster_field
{
	const char *name;
	long		min;
	long		max;
	bool		count;			/* no unit; else milliseconds */
	size_t		offset;
} cluster_field;

#define FIELD(n, lo, hi) {#n, lo, hi, false, offsetof(gw_cluster, n)}
#define COUNT(n, lo, hi) {#n, lo, hi, true, offsetof(gw_cluster, n)}
static const cluster_field cluster_fields[] = {
	FIELD(presence_flush_interval, 100, 60000),
	FIELD(presence_ttl, 1000, 600000),
	FIELD(typing_ttl, 1000, 60000),
	FIELD(agent_presence_timeout, 1000, 3600000),
	FIELD(agent_heartbeat_persist_interval, 1000, 600000),
	FIELD(listen_reconnect_backoff_cap, 100, 300000),
	FIELD(signing_key_cache_ttl, 1000, 3600000),
	FIELD(consumer_lease, 3000, 3600000),
	COUNT(terminal_fingerprint_max_attempts, 1, 100),
	FIELD(terminal_host_duplicate_probe_timeout, 100, 60000),
	FIELD(terminal_host_heartbeat_interval, 1000, 600000),
	COUNT(terminal_host_heartbeat_miss_limit, 1, 100),
	FIELD(terminal_idle_grace, 1000, 600000),
	FIELD(terminal_idle_timeout, 60000, 86400000),
	FIELD(terminal_log_poll_interval, 100, 60000),
	FIELD(terminal_open_timeout, 1000, 600000),
};
#undef FIELD
#undef COUNT
#define N_FIELDS (sizeof(cluster_fields) / sizeof(cluster_fields[0]))
#define SEEN_MODE (1u << N_FIELDS)

void
gw_cluster_init(gw_cluster *c)
{
	memset(c, 0, sizeof(*c));
}

bool
gw_cluster_apply(gw_cluster *c, const char *name, const char *setting,
				 const char *unit, char *err, size_t errlen)
{
	size_t		i;

	if (strcmp(name, "cluster_mode") == 0)
	{
		if (setting != NULL && strcmp(setting, "multi") == 0)
			c->multi = true;
		else if (setting != NULL && strcmp(setting, "single") == 0)
			c->multi = false;
		else
		{
			snprintf(err, errlen, "bothy.cluster_mode must be single or multi");
			return false;
		}
		c->seen |= SEEN_MODE;
		return true;
	}
	for (i = 0; i < N_FIELDS; i++)
	{
		const cluster_field *f = &cluster_fields[i];
		long		v;

		if (strcmp(name, f->name) != 0)
			continue;
		if ((f->count ? unit != NULL && *unit != '\0' : unit == NULL || strcmp(unit, "ms") != 0) ||
			!bothy_parse_int(setting, f->min, f->max, &v))
		{
			snprintf(err, errlen, "bothy.%s must be from %ld to %ld%s", f->name, f->min, f->max,
					 f->count ? "" : " ms");
			return false;
		}
		*(int64_t *) ((char *) c + f->offset) = v;
		c->seen |= 1u << i;
		return true;
	}
	return true;
}

bool
gw_cluster_check(const gw_cluster *c, char *err, size_t errlen)
{
	size_t		i;

	if (!(c->seen & SEEN_MODE))
	{
		snprintf(err, errlen, "bothy.settings() returned no bothy.cluster_mode");
		return false;
	}
	for (i = 0; i < N_FIELDS; i++)
		if (!(c->seen & (1u << i)))
		{
			snprintf(err, errlen, "bothy.settings() returned no bothy.%s", cluster_fields[i].name);
			return false;
		}
	if (c->presence_ttl <= 2 * c->presence_flush_interval)
	{
		snprintf(err, errlen,
				 "bothy.presence_ttl must be more than twice bothy.presence_flush_interval");
		return false;
	}
	/* the database's rules across the terminal's settings (settings.c there) */
	if (c->terminal_open_timeout <= 2 * c->terminal_host_duplicate_probe_timeout)
	{
		snprintf(err, errlen, "bothy.terminal_open_timeout must be more than twice "
				 "bothy.terminal_host_duplicate_probe_timeout");
		return false;
	}
	if (c->terminal_open_timeout <= 2 * c->terminal_log_poll_interval)
	{
		snprintf(err, errlen, "bothy.terminal_open_timeout must be more than twice "
				 "bothy.terminal_log_poll_interval");
		return false;
	}
	return true;
}
