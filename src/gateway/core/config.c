/*
 * core/config.c
 *		Options of `bothy-gateway serve` and the cluster settings checks:
 *		the core's own, and every registered route's (core/route.h).
 *
 * Options follow ttyd's getopt_long table, but each number is parsed
 * strictly (no strtol leniency: "10x", " 10", "" are refused) and with a
 * range, and a bad option is a one-line reason, never a default silently
 * used.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/config.h"
#include "intparse.h"

#define USAGE_HEAD \
"usage: bothy-gateway serve --listen ADDR:PORT --database CONNINFO --keys DIR [options]\n" \
"\n"

typedef enum core_kind
{
	K_LISTEN,
	K_DATABASE,
	K_READ,						/* --database-read, repeatable */
	K_KEYS,
	K_WEB,
	K_INT,
	K_LOG_LEVEL,
	K_HELP
} core_kind;

/*
 * The core's options, in the order of --help; a route's come right after
 * the one its gw_route_option names (route.h).  log_rank is the place in
 * the "starting" record (docs/gateway.md), 0: not logged.
 */
typedef struct core_option
{
	const char *name;
	core_kind	kind;
	const char *help;
	long		min;
	long		max;
	long		def;
	size_t		offset;			/* K_INT: of its int in gw_options */
	int			log_rank;
	const char *log_key;
} core_option;

#define INT(n, lo, hi, d, field, rank, key, text) \
	{n, K_INT, text, lo, hi, d, offsetof(gw_options, field), rank, key}
static const core_option core_options[] = {
	{"listen", K_LISTEN,
		"  --listen ADDR:PORT         the numeric address to serve /gateway, /v1/, /healthz,\n"
		"                             /readyz, /metrics, /status.json and --web on\n"
		"                             (env BOTHY_LISTEN; IPv6 as [ADDR]:PORT; ADDR empty:\n"
		"                             every IPv4 address)\n", 0, 0, 0, 0, 1, "listen_port"},
	{"database", K_DATABASE,
		"  --database CONNINFO        libpq connection string (env BOTHY_DATABASE)\n",
		0, 0, 0, 0, 2, "database"},
	{"database-read", K_READ,
		"  --database-read CONNINFO   a hot standby for the reads of deliveries, repeatable\n"
		"                             up to 8 (env BOTHY_DATABASE_READ: one; default none)\n",
		0, 0, 0, 0, 13, "database_read"},
	INT("database-read-wait", 1, 10000, 20, read_wait_ms, 14, "database_read_wait_ms",
		"  --database-read-wait MS    a read's wait for a standby connection, then for its\n"
		"                             standby to replay its fence (each), then the\n"
		"                             primary, 1..10000 (default 20)\n"),
	INT("database-read-retry", 100, 600000, 5000, read_retry_ms, 15, "database_read_retry_ms",
		"  --database-read-retry MS   a standby out of rotation is tried again after,\n"
		"                             100..600000 (default 5000)\n"),
	INT("database-read-misses", 1, 1000, 3, read_misses, 16, "database_read_misses",
		"  --database-read-misses N   reads in a row whose fence a standby missed within\n"
		"                             the wait, then it leaves the rotation, 1..1000\n"
		"                             (default 3)\n"),
	{"keys", K_KEYS,
		"  --keys DIR                 the shared key store (env BOTHY_KEYS)\n", 0, 0, 0, 0, 3, "keys"},
	{"web", K_WEB,
		"  --web DIR                  serve the page from DIR: index.html at /, status.html\n"
		"                             at /status, other files by name (default: no page)\n",
		0, 0, 0, 0, 0, NULL},
	INT("db-pool", 1, 16, 2, db_pool, 4, "db_pool",
		"  --db-pool N                query connections, 1..16 (default 2)\n"),
	INT("db-timeout", 100, 600000, 5000, db_timeout_ms, 5, "db_timeout_ms",
		"  --db-timeout MS            one database call, 100..600000 (default 5000)\n"),
	INT("identify-timeout", 100, 600000, 10000, identify_timeout_ms, 6, "identify_timeout_ms",
		"  --identify-timeout MS      identify after connecting, 100..600000 (default 10000)\n"),
	INT("max-message", 1024, 1048576, 16384, max_message, 7, "max_message",
		"  --max-message BYTES        one client message, 1024..1048576 (default 16384)\n"),
	INT("send-queue", 1024, 16777216, 65536, send_queue, 8, "send_queue",
		"  --send-queue BYTES         queued to one client, 1024..16777216 (default 65536)\n"),
	INT("send-timeout", 100, 600000, 10000, send_timeout_ms, 9, "send_timeout_ms",
		"  --send-timeout MS          queued output not read, 100..600000 (default 10000)\n"),
	INT("start-timeout", 1000, 600000, 30000, start_timeout_ms, 10, "start_timeout_ms",
		"  --start-timeout MS         database at start, 1000..600000 (default 30000)\n"),
	INT("stop-timeout", 100, 600000, 5000, stop_timeout_ms, 11, "stop_timeout_ms",
		"  --stop-timeout MS          orderly stop, 100..600000 (default 5000)\n"),
	INT("max-connections", 1, 1000000, 100000, max_connections, 12, "max_connections",
		"  --max-connections N        WebSocket connections, 1..1000000 (default 100000)\n"),
	{"log-level", K_LOG_LEVEL,
		"  --log-level LEVEL          debug, info, warn or error (default info)\n",
		0, 0, 0, 0, 0, NULL},
	{"help", K_HELP, "  --help                     this text\n", 0, 0, 0, 0, 0, NULL},
};
#undef INT
#define N_CORE_OPTIONS ((int) (sizeof(core_options) / sizeof(core_options[0])))
#define N_LOG_RANKS 16


/* The options and settings route r registered; none when it has no config. */
static const gw_route_config *
config_at(int r)
{
	static const gw_route_config none;
	const gw_route_config *config = gw_route_at(r)->config;

	return config != NULL ? config : &none;
}

static int
route_options(const gw_route_option **out)
{
	int			n = 0;

	for (int r = 0; r < gw_route_count(); r++)
	{
		const gw_route_config *config = config_at(r);

		/* gw_route_register bounds the sum; n is checked all the same */
		for (int i = 0; i < config->noptions && n < GW_MAX_ROUTE_OPTIONS; i++)
			out[n++] = &config->options[i];
	}
	return n;
}

/* Appends to buf (len bytes, NUL-terminated), truncating. */
static void
put(char *buf, size_t len, const char *fmt,...) __attribute__((format(printf, 3, 4)));

static void
put(char *buf, size_t len, const char *fmt,...)
{
	size_t		used = strnlen(buf, len);
	va_list		ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

const char *
gw_serve_usage(void)
{
	static char text[8192];
	const gw_route_option *ro[GW_MAX_ROUTE_OPTIONS];
	int			nro = route_options(ro);

	text[0] = '\0';
	put(text, sizeof(text), "%s", USAGE_HEAD);
	for (int i = 0; i < N_CORE_OPTIONS; i++)
	{
		put(text, sizeof(text), "%s", core_options[i].help);
		for (int j = 0; j < nro; j++)
			if (ro[j]->after != NULL && strcmp(ro[j]->after, core_options[i].name) == 0)
				put(text, sizeof(text), "%s", ro[j]->help);
	}
	return text;
}

void
gw_options_describe(const gw_options *o, char *buf, size_t len)
{
	const gw_route_option *ro[GW_MAX_ROUTE_OPTIONS];
	int			nro = route_options(ro);

	buf[0] = '\0';
	for (int rank = 1; rank <= N_LOG_RANKS; rank++)
		for (int i = 0; i < N_CORE_OPTIONS; i++)
		{
			const core_option *co = &core_options[i];

			if (co->log_rank != rank)
				continue;
			put(buf, len, "%s%s=", rank == 1 ? "" : " ", co->log_key);
			if (co->kind == K_LISTEN)
				put(buf, len, "%d", o->listen_port);
			else if (co->kind == K_READ)
				put(buf, len, "%d", o->ndatabase_read);
			else if (co->kind == K_INT)
				put(buf, len, "%d", *(const int *) ((const char *) o + co->offset));
			else
				put(buf, len, "set");	/* a conninfo or a path: never logged */
			for (int j = 0; j < nro; j++)
				if (ro[j]->after != NULL && strcmp(ro[j]->after, co->name) == 0)
					put(buf, len, " %s=%d", ro[j]->log_key, *ro[j]->value);
		}
}

void
gw_options_defaults(gw_options *o)
{
	const gw_route_option *ro[GW_MAX_ROUTE_OPTIONS];
	int			nro = route_options(ro);

	memset(o, 0, sizeof(*o));
	o->listen_port = 0;
	for (int i = 0; i < N_CORE_OPTIONS; i++)
		if (core_options[i].kind == K_INT)
			*(int *) ((char *) o + core_options[i].offset) = (int) core_options[i].def;
	for (int j = 0; j < nro; j++)
		*ro[j]->value = (int) ro[j]->def;
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

/* getopt's value of an option: its index in the core's table, then the routes' */
#define OPT_BASE 256

/* getopt's table: the core's options, then every route's; NULL-terminated. */
static void
build_long_options(struct option *table, const gw_route_option *const *ro, int nro)
{
	int			n = 0;

	for (int i = 0; i < N_CORE_OPTIONS; i++, n++)
		table[n] = (struct option) {
			core_options[i].name,
			core_options[i].kind == K_HELP ? no_argument : required_argument,
			NULL, OPT_BASE + n
		};
	for (int j = 0; j < nro; j++, n++)
		table[n] = (struct option) {ro[j]->name, required_argument, NULL, OPT_BASE + n};
	table[n] = (struct option) {NULL, 0, NULL, 0};
}

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

/* One integer within its range, or the one-line reason naming --name. */
static bool
set_int(const char *name, const char *value, long min, long max, int *field,
		char *err, size_t errlen)
{
	long		v;

	if (!bothy_parse_int(value, min, max, &v))
	{
		snprintf(err, errlen, "--%s must be an integer from %ld to %ld", name, min, max);
		return false;
	}
	*field = (int) v;
	return true;
}

static bool
set_log_level(gw_options *o, const char *value, char *err, size_t errlen)
{
	if (strcmp(value, "debug") == 0)
		o->log_level = GW_LOG_DEBUG;
	else if (strcmp(value, "info") == 0)
		o->log_level = GW_LOG_INFO;
	else if (strcmp(value, "warn") == 0)
		o->log_level = GW_LOG_WARN;
	else if (strcmp(value, "error") == 0)
		o->log_level = GW_LOG_ERROR;
	else
	{
		snprintf(err, errlen, "--log-level must be one of debug, info, warn, error");
		return false;
	}
	return true;
}

int
gw_options_parse(gw_options *o, int argc, char **argv, char *err, size_t errlen, FILE *out)
{
	const char *listen = getenv("BOTHY_LISTEN");
	const char *env;
	const gw_route_option *ro[GW_MAX_ROUTE_OPTIONS];
	int			nro = route_options(ro);
	struct option serve_options[N_CORE_OPTIONS + GW_MAX_ROUTE_OPTIONS + 1];
	bool		read_given = false;
	int			c;

	err[0] = '\0';
	build_long_options(serve_options, ro, nro);
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
		int			k = c - OPT_BASE;
		const core_option *co;
		bool		ok = true;

		if (c == ':')
		{
			snprintf(err, errlen, "an option needs a value");
			return -1;
		}
		if (k < 0 || k >= N_CORE_OPTIONS + nro)
		{
			snprintf(err, errlen, "unknown option");
			return -1;
		}
		if (k >= N_CORE_OPTIONS)
		{
			const gw_route_option *r = ro[k - N_CORE_OPTIONS];

			if (!set_int(r->name, optarg, r->min, r->max, r->value, err, errlen))
				return -1;
			continue;
		}
		co = &core_options[k];
		switch (co->kind)
		{
			case K_LISTEN:
				listen = optarg;
				break;
			case K_DATABASE:
				o->database = optarg;
				break;
			case K_KEYS:
				o->keys = optarg;
				break;
			case K_WEB:
				ok = set_web(o, optarg, err, errlen);
				break;
			case K_READ:
				ok = add_read(o, optarg, &read_given, err, errlen);
				break;
			case K_INT:
				ok = set_int(co->name, optarg, co->min, co->max,
							 (int *) ((char *) o + co->offset), err, errlen);
				break;
			case K_LOG_LEVEL:
				ok = set_log_level(o, optarg, err, errlen);
				break;
			case K_HELP:
				fputs(gw_serve_usage(), out);
				return 1;
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

/* The core's settings beside cluster_mode, in the order of bothy.settings(). */
typedef struct cluster_field
{
	const char *name;
	long		min;
	long		max;
	size_t		offset;			/* of its int64_t in gw_cluster; milliseconds */
} cluster_field;

#define FIELD(n, lo, hi) {#n, lo, hi, offsetof(gw_cluster, n)}
static const cluster_field cluster_fields[] = {
	FIELD(listen_reconnect_backoff_cap, 100, 300000),
	FIELD(signing_key_cache_ttl, 1000, 3600000),
};
#undef FIELD
#define N_FIELDS (sizeof(cluster_fields) / sizeof(cluster_fields[0]))
#define SEEN_MODE (1u << N_FIELDS)

void
gw_cluster_init(gw_cluster *c)
{
	memset(c, 0, sizeof(*c));
}

/*
 * One value in its unit and range into *field; else the reason, naming
 * the setting.  A count has no unit; a duration is in milliseconds.
 */
static bool
apply_int(const char *name, long min, long max, bool count, const char *setting,
		  const char *unit, int64_t *field, char *err, size_t errlen)
{
	long		v;

	if ((count ? unit != NULL && *unit != '\0' : unit == NULL || strcmp(unit, "ms") != 0) ||
		!bothy_parse_int(setting, min, max, &v))
	{
		snprintf(err, errlen, "bothy.%s must be from %ld to %ld%s", name, min, max,
				 count ? "" : " ms");
		return false;
	}
	*field = v;
	return true;
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

		if (strcmp(name, f->name) != 0)
			continue;
		if (!apply_int(f->name, f->min, f->max, false, setting, unit,
					   (int64_t *) ((char *) c + f->offset), err, errlen))
			return false;
		c->seen |= 1u << i;
		return true;
	}
	for (int r = 0; r < gw_route_count(); r++)
	{
		const gw_route_config *config = config_at(r);

		for (int j = 0; j < config->nsettings; j++)
		{
			const gw_route_setting *rs = &config->settings[j];

			if (strcmp(name, rs->name) != 0)
				continue;
			if (!apply_int(rs->name, rs->min, rs->max, rs->count, setting, unit,
						   (int64_t *) (c->staged[r] + rs->offset), err, errlen))
				return false;
			c->route_seen[r] |= 1u << j;
			return true;
		}
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
	/* every setting of every route seen before any route's rules run on them */
	for (int r = 0; r < gw_route_count(); r++)
	{
		const gw_route_config *config = config_at(r);

		for (int j = 0; j < config->nsettings; j++)
			if (!(c->route_seen[r] & (1u << j)))
			{
				snprintf(err, errlen, "bothy.settings() returned no bothy.%s",
						 config->settings[j].name);
				return false;
			}
	}
	for (int r = 0; r < gw_route_count(); r++)
	{
		const gw_route_config *config = config_at(r);

		if (config->settings_check != NULL && !config->settings_check(c->staged[r], err, errlen))
			return false;
	}
	return true;
}

void
gw_cluster_use(const gw_cluster *c)
{
	for (int r = 0; r < gw_route_count(); r++)
	{
		const gw_route_config *config = config_at(r);

		if (config->settings_size > 0)
			memcpy(config->settings_struct, c->staged[r], config->settings_size);
	}
}

/* The routes' logged settings that follow the core's setting after. */
static void
describe_after(const gw_cluster *c, const char *after, char *buf, size_t len)
{
	for (int r = 0; r < gw_route_count(); r++)
	{
		const gw_route_config *config = config_at(r);

		for (int j = 0; j < config->nsettings; j++)
		{
			const gw_route_setting *rs = &config->settings[j];

			if (rs->log_after != NULL && strcmp(rs->log_after, after) == 0)
				put(buf, len, " %s%s=%lld", rs->name, rs->count ? "" : "_ms",
					(long long) *(const int64_t *) (c->staged[r] + rs->offset));
		}
	}
}

void
gw_cluster_describe(const gw_cluster *c, char *buf, size_t len)
{
	buf[0] = '\0';
	put(buf, len, "cluster_mode=%s", c->multi ? "multi" : "single");
	describe_after(c, "cluster_mode", buf, len);
	for (size_t i = 0; i < N_FIELDS; i++)
	{
		put(buf, len, " %s_ms=%lld", cluster_fields[i].name,
			(long long) *(const int64_t *) ((const char *) c + cluster_fields[i].offset));
		describe_after(c, cluster_fields[i].name, buf, len);
	}
}
