/*
 * core/config.h
 *		The node's own options (command line and environment) and the
 *		cluster settings it reads from bothy.settings().
 *
 * Pure code without I/O beyond getenv, so that option parsing and the
 * settings checks are unit-tested (test/unit/gateway/test_config.c).  Every
 * number is parsed strictly with a range; docs/gateway.md lists them.
 * Only the core's own options and settings are here: a route declares its
 * own in its room (clients/settings.c, terminal/settings.c) and registers
 * them with its gw_route (core/route.h); these functions walk the routes
 * registered, so one --help, one "starting" record and one check remain.
 */
#ifndef BOTHY_GATEWAY_CONFIG_H
#define BOTHY_GATEWAY_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/route.h"
#include "logline.h"

#define GW_MAX_STANDBYS 8		/* --database-read given at most this often */

typedef struct gw_options
{
	char		listen_host[256];	/* the address to bind, "" for every one */
	int			listen_port;		/* 1 .. 65535 */
	const char *database;		/* libpq conninfo (may hold a password) */
	const char *database_read[GW_MAX_STANDBYS];	/* standbys for reads (docs/standbys.md) */
	int			ndatabase_read;
	int			read_wait_ms;		/* a read's wait for its standby's replay, then the primary */
	int			read_retry_ms;		/* a standby out of rotation is tried again after */
	int			read_misses;		/* fence waits missed in a row that take a standby out */
	const char *keys;			/* key store directory */
	const char *web;			/* --web: the page's directory, or NULL */
	int			db_pool;			/* query connections, 1 .. 16 */
	int			db_timeout_ms;		/* one database call, queue wait included */
	int			identify_timeout_ms;	/* from upgrade to identify (or resume) */
	int			max_message;		/* bytes of one reassembled message */
	int			send_queue;			/* bytes queued to one client before it is closed */
	int			send_timeout_ms;	/* queued output not taken by the client by then */
	int			start_timeout_ms;	/* database reachable and node registered by then */
	int			stop_timeout_ms;	/* clients closed and node stopped by then */
	int			max_connections;	/* WebSocket connections at once */
	gw_log_level log_level;
} gw_options;

/* Default values (docs/gateway.md), also of every route's options. */
void		gw_options_defaults(gw_options *o);

/*
 * Parses `serve` arguments (argv[0] == "serve") over the environment
 * (BOTHY_LISTEN, BOTHY_DATABASE, BOTHY_KEYS).  Returns 0 to run, 1 after
 * --help was printed to out, -1 with a one-line reason in err.
 */
int			gw_options_parse(gw_options *o, int argc, char **argv,
							 char *err, size_t errlen, FILE *out);

/* The usage text of `serve`: the core's options and the routes'. */
const char *gw_serve_usage(void);

/*
 * The fields of the "starting" record (docs/gateway.md): the options,
 * with no secret (not the conninfo, not an address).  Truncated to len.
 */
void		gw_options_describe(const gw_options *o, char *buf, size_t len);

/* "HOST:PORT", "[V6]:PORT" or ":PORT" (every address). */
bool		gw_parse_listen(const char *s, char *host, size_t hostlen, int *port);

/*
 * The cluster settings of bothy.settings(): durations in milliseconds.
 * The core's own fields, and each registered route's settings staged in a
 * copy of its struct until the whole read passed (gw_cluster_use).
 */
typedef struct gw_cluster
{
	bool		multi;			/* cluster_mode */
	int64_t		listen_reconnect_backoff_cap;
	int64_t		signing_key_cache_ttl;
	unsigned	seen;			/* one bit per core setting read */
	unsigned	route_seen[GW_MAX_ROUTES];	/* one bit per route setting read */
	/* a copy of each route's settings struct, by registration index */
	_Alignas(int64_t) unsigned char staged[GW_MAX_ROUTES][GW_ROUTE_SETTINGS_MAX];
} gw_cluster;

/* Zero it and mark nothing seen. */
void		gw_cluster_init(gw_cluster *c);

/*
 * One row of bothy.settings().  A name this version does not know is
 * skipped (true): the database may grow settings before the gateway does.
 * A known name with a bad value or unit is false, naming the setting in err.
 */
bool		gw_cluster_apply(gw_cluster *c, const char *name, const char *setting,
							 const char *unit, char *err, size_t errlen);

/*
 * Every setting seen and the rules across them hold, the core's and then
 * each route's in registration order; else err names them.
 */
bool		gw_cluster_check(const gw_cluster *c, char *err, size_t errlen);

/* A checked read: writes each route's staged settings into its struct. */
void		gw_cluster_use(const gw_cluster *c);

/*
 * The fields of the "cluster settings read" record (docs/gateway.md):
 * the core's, each route's logged one after the core setting it names.
 */
void		gw_cluster_describe(const gw_cluster *c, char *buf, size_t len);

#endif							/* BOTHY_GATEWAY_CONFIG_H */
