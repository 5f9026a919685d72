/*
 * core/server.c
 *		`bothy-gateway serve`: the context, the start and the stop, with
 *		the hooks of the registered routes (route.h) at each step.
 *
 * Start: the routes' init (the key store refuses a loose directory), draw
 * the node ID, bind the port, then on the loop read bothy.settings()
 * (refuse an invalid configuration, naming the settings), register with
 * bothy.node_start, start the listener and the routes; the routes' paths
 * accept upgrades only from then on.  A database that is not reachable
 * yet is retried until --start-timeout.
 *
 * Stop (SIGTERM or SIGINT), in order: refuse new connections, close every
 * client with 1001, wait for the routes to drain, bothy.node_stop (the
 * node's presence rows go), stop the listener, exit 0.  SIGHUP reads
 * bothy.settings() again and keeps the last good configuration when the
 * new one is invalid.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/conn.h"
#include "core/db.h"
#include "core/dbread.h"
#include "core/http.h"
#include "core/loop.h"
#include "core/node.h"
#include "core/pgconn.h"
#include "core/route.h"
#include "core/server.h"
#include "intparse.h"
#include "logline.h"

/* Before bothy.settings() is read: the reconnect delay of the pool. */
#define INITIAL_BACKOFF_MS 1000
/* A start step that could not reach the database is tried again after this. */
#define START_RETRY_MS 200
/* How often the stop checks whether every client has gone. */
#define STOP_POLL_MS 20
/*
 * How long the stop waits for HTTP answers still being written, as long as
 * a WebSocket client has to take its close frame: a client that reads a
 * big answer slowly holds the stop no longer than that.
 */
#define STOP_BODY_GRACE_MS 2000

/*
 * The receive buffer of each WebSocket connection, allocated by lws for
 * the connection's life: small, because an idle connection should cost
 * little (the 50,000-connection budget).  A longer message arrives in
 * pieces and is reassembled (conn.c).
 */
#define RX_BUFFER_SIZE 512

/*
 * The receive buffer of a connection whose client named its endpoint's
 * subprotocol (route.h): a path whose messages are passed on in bulk (the
 * terminal's bytes) is read in pieces of this size.  lws reads a
 * connection at most one buffer per turn of the loop, so 512 bytes cap a
 * relayed stream at about half of what nginx passes (bench/terminal_relay);
 * 4 KiB match it, for 3.5 KiB more per connection of such a path only.
 */
#define RX_BULK_BUFFER_SIZE 4096

/* Bytes of one request's headers, the query string included. */
#define GW_HTTP_HEADER_MAX 16384

/*
 * First: HTTP and every route's WebSocket path (an upgrade that names no
 * subprotocol is bound to the first protocol; conn.c picks the route by
 * path).  Its per-session size is the largest a route registered, set in
 * gw_serve.  After the database's: one protocol per endpoint subprotocol,
 * the same callback with the bulk receive buffer, added in gw_serve.
 */
static struct lws_protocols protocols[2 + GW_MAX_WS_ENDPOINTS + 1] = {
	{"bothy-gateway", gw_conn_callback, 0, RX_BUFFER_SIZE, 0, NULL, GW_HTTP_PIECE},
	{GW_PG_PROTOCOL, gw_pgconn_callback, 0, 0, 0, NULL, 0},
};

/* The endpoints' subprotocols after the first two protocols. */
static void
add_subprotocols(void)
{
	int			i,
				n = 2;

	for (i = 0; i < gw_route_ws_count(); i++)
		if (gw_route_ws_at(i)->subprotocol != NULL)
			protocols[n++] = (struct lws_protocols) {
				gw_route_ws_at(i)->subprotocol, gw_conn_callback, gw_route_conn_size(),
				RX_BULK_BUFFER_SIZE, 0, NULL, GW_HTTP_PIECE
			};
}

/* The routes whose init succeeded: their fini is owed at exit. */
static int	routes_inited;

static bool
routes_init(void)
{
	for (routes_inited = 0; routes_inited < gw_route_count(); routes_inited++)
		if (gw_route_at(routes_inited)->init != NULL && !gw_route_at(routes_inited)->init())
			return false;
	return true;
}

static void
routes_fini(void)
{
	while (routes_inited > 0)
	{
		const gw_route *r = gw_route_at(--routes_inited);

		if (r->fini != NULL)
			r->fini();
	}
}

/* Each route's hook of one step, in registration order. */
#define EACH_ROUTE(hook) \
	do \
	{ \
		int			i_; \
		\
		for (i_ = 0; i_ < gw_route_count(); i_++) \
			if (gw_route_at(i_)->hook != NULL) \
				gw_route_at(i_)->hook(); \
	} while (0)

/* Every route has nothing in flight (polled once no WebSocket connection is left). */
static bool
routes_drained(void)
{
	int			i;

	for (i = 0; i < gw_route_count(); i++)
		if (gw_route_at(i)->drained != NULL && !gw_route_at(i)->drained())
			return false;
	return true;
}

static void start_settings(lws_sorted_usec_list_t *sul);
static void start_node(lws_sorted_usec_list_t *sul);

static void
refuse(const char *what, const char *detail)
{
	gw_log(GW_LOG_ERROR, what);
	if (detail != NULL)
		fprintf(stderr, "bothy-gateway: %s: %s\n", what, detail);
	else
		fprintf(stderr, "bothy-gateway: %s\n", what);
	gw.exit_code = 1;
	gw.exit_loop = true;
	lws_cancel_service(gw.context);
}

static void
retry_step(sul_cb_t step)
{
	lws_sul_schedule(gw.context, 0, &gw.sul_phase, step,
					 (lws_usec_t) START_RETRY_MS * LWS_US_PER_MS);
}

/* The database's own message: a constant text of the extension's. */
static const char *
db_message(const PGresult *res)
{
	const char *m = res != NULL ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	return m != NULL ? m : "no message";
}

/*
 * The rows of bothy.settings() into *c, checked; false with the reason in
 * err, naming the settings.
 */
static bool
read_settings(const PGresult *res, gw_cluster *c, char *err, size_t errlen)
{
	int			i;

	gw_cluster_init(c);
	for (i = 0; i < PQntuples(res); i++)
		if (!gw_cluster_apply(c, PQgetvalue(res, i, 0), PQgetvalue(res, i, 1),
							  PQgetisnull(res, i, 2) ? NULL : PQgetvalue(res, i, 2),
							  err, errlen))
			return false;
	return gw_cluster_check(c, err, errlen);
}

static void
use_settings(const gw_cluster *c, const char *msg)
{
	char		fields[1024];

	gw.cluster = *c;
	gw_cluster_use(c);
	gw.backoff_ms = (int) c->listen_reconnect_backoff_cap;
	gw_cluster_describe(c, fields, sizeof(fields));
	gw_logf(GW_LOG_INFO, msg, "%s", fields);
}

/*
 * Why bothy.settings() failed, for an operator: the SQLSTATE tells a
 * missing extension or grant from a configuration the database refuses.
 */
static const char *
settings_failure(const PGresult *res)
{
	const char *state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (state != NULL && (strcmp(state, "42883") == 0 || strcmp(state, "3F000") == 0))
		return "bothy.settings() does not exist: is the extension created in this database?";
	if (state != NULL && strcmp(state, "42501") == 0)
		return "the database role may not call bothy.settings(): grant it bothy_gateway";
	return db_message(res);
}

static void
settings_done(void *arg, gw_db_result result, const PGresult *res)
{
	gw_cluster	c;
	char		err[256];

	(void) arg;
	if (result == GW_DB_TIMEOUT || (result == GW_DB_ERROR && res == NULL))
	{
		retry_step(start_settings);
		return;
	}
	if (result == GW_DB_ERROR)
	{
		refuse("invalid cluster configuration", settings_failure(res));
		return;
	}
	if (!read_settings(res, &c, err, sizeof(err)))
	{
		refuse("invalid cluster configuration", err);
		return;
	}
	use_settings(&c, "cluster settings read");
	start_node(NULL);
}

/* SIGHUP: the settings again; an invalid configuration keeps the last good one. */
static void
reloaded(void *arg, gw_db_result result, const PGresult *res)
{
	gw_cluster	c;
	char		err[256];

	(void) arg;
	if (result != GW_DB_OK)
	{
		gw_log(GW_LOG_ERROR, "cluster settings not reloaded, keeping the last ones");
		return;
	}
	if (!read_settings(res, &c, err, sizeof(err)))
	{
		gw_logf(GW_LOG_ERROR, "invalid cluster configuration on reload, keeping the last one",
				"reason=\"%s\"", err);
		return;
	}
	use_settings(&c, "cluster settings reloaded");
}

static void
reload(void)
{
	gw.reload_requested = 0;
	gw_log(GW_LOG_INFO, "reloading the cluster settings");
	if (gw_db_submit(gw.db, "SELECT name, setting, unit FROM bothy.settings()", 0, NULL,
					 reloaded, NULL) == NULL)
		reloaded(NULL, GW_DB_ERROR, NULL);
}

static void
start_settings(lws_sorted_usec_list_t *sul)
{
	(void) sul;
	if (gw_db_submit(gw.db, "SELECT name, setting, unit FROM bothy.settings()", 0, NULL,
				   settings_done, NULL) == NULL)
		retry_step(start_settings);
}

static void
node_started(void *arg, gw_db_result result, const PGresult *res)
{
	(void) arg;
	if (result == GW_DB_TIMEOUT || (result == GW_DB_ERROR && res == NULL))
	{
		retry_step(start_node);
		return;
	}
	if (result == GW_DB_ERROR)
	{
		refuse("node could not register", db_message(res));
		return;
	}
	lws_sul_cancel(&gw.sul_deadline);
	gw.started = true;
	gw_listener_start(gw.listener);
	EACH_ROUTE(start);
	gw_log(GW_LOG_INFO, "node started, accepting connections");
}

static void
start_node(lws_sorted_usec_list_t *sul)
{
	const char *params[1] = {gw.id_text};

	(void) sul;
	if (gw_db_submit(gw.db, "SELECT bothy.node_start($1::uuid)", 1, params,
				   node_started, NULL) == NULL)
		retry_step(start_node);
}

static void
start_deadline(lws_sorted_usec_list_t *sul)
{
	(void) sul;
	if (!gw.started)
		refuse("database not reachable at start", NULL);
}

/* --- stop -------------------------------------------------------------- */

static void
finish_stop(int code)
{
	lws_sul_cancel(&gw.sul_deadline);
	lws_sul_cancel(&gw.sul_phase);
	gw_listener_destroy(gw.listener);
	gw.listener = NULL;
	gw_log(GW_LOG_INFO, "listener stopped");
	gw.exit_code = code;
	gw.exit_loop = true;
	lws_cancel_service(gw.context);
}

static void
node_stopped(void *arg, gw_db_result result, const PGresult *res)
{
	(void) arg;
	if (result == GW_DB_OK)
	{
		long		rows = 0;

		if (PQntuples(res) == 1)
			(void) bothy_parse_int(PQgetvalue(res, 0, 0), 0, LONG_MAX, &rows);
		gw_logf(GW_LOG_INFO, "node stopped, presence rows deleted", "rows=%ld", rows);
		finish_stop(0);
		return;
	}
	gw_log(GW_LOG_ERROR, "node could not unregister; its presence rows age out");
	finish_stop(1);
}

static void
stop_wait_clients(lws_sorted_usec_list_t *sul)
{
	const char *params[1] = {gw.id_text};

	(void) sul;
	/*
	 * node_stop deletes the rows: no route may write them again after it
	 * (the gateway route's presence flush).  An answered call still owes
	 * its body until written: leaving earlier would cut it (its client
	 * reads a short response).
	 */
	if (gw_conn_total() > 0 || !routes_drained() ||
		(gw_http_bodies_owed() > 0 && gw_mono_ms() < gw.stop_began_ms + STOP_BODY_GRACE_MS))
	{
		lws_sul_schedule(gw.context, 0, &gw.sul_phase, stop_wait_clients,
						 (lws_usec_t) STOP_POLL_MS * LWS_US_PER_MS);
		return;
	}
	gw_log(GW_LOG_INFO, "clients closed");
	if (gw_db_submit(gw.db, "SELECT bothy.node_stop($1::uuid)", 1, params,
				   node_stopped, NULL) == NULL)
		node_stopped(NULL, GW_DB_ERROR, NULL);
}

static void
stop_deadline(lws_sorted_usec_list_t *sul)
{
	(void) sul;
	gw_log(GW_LOG_ERROR, "stop did not finish within --stop-timeout");
	finish_stop(1);
}

static void
close_going_away(gw_conn *c, void *arg)
{
	(void) arg;
	gw_conn_close(c, GW_CLOSE_GOING_AWAY, "node stopping");
}

static void
begin_stop(void)
{
	gw.stopping = true;
	gw.stop_began_ms = gw_mono_ms();
	gw_log(GW_LOG_INFO, "stopping: refusing new connections, closing clients");
	lws_sul_cancel(&gw.sul_phase);
	lws_sul_cancel(&gw.sul_deadline);
	if (!gw.started)
	{
		finish_stop(0);
		return;
	}
	lws_sul_schedule(gw.context, 0, &gw.sul_deadline, stop_deadline,
					 (lws_usec_t) gw.opt.stop_timeout_ms * LWS_US_PER_MS);
	gw_conn_each(NULL, close_going_away, NULL);
	EACH_ROUTE(stopping);
	stop_wait_clients(NULL);
}

void
gw_server_wakeup(void)
{
	if (gw.stop_requested && !gw.stopping)
		begin_stop();
	if (gw.reload_requested && gw.started && !gw.stopping)
		reload();
}

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		gw.reload_requested = 1;
	else
		gw.stop_requested = 1;
	/* writes one byte to the loop's pipe, as ttyd's handler does */
	if (gw.context != NULL)
		lws_cancel_service(gw.context);
}

/* --- serve ------------------------------------------------------------- */

int
gw_serve(int argc, char **argv)
{
	struct lws_context_creation_info info;
	struct sigaction sa;
	char		err[256];
	char		fields[1024];
	int			r;

	memset(&gw, 0, sizeof(gw));
	gw_options_defaults(&gw.opt);
	r = gw_options_parse(&gw.opt, argc, argv, err, sizeof(err), stdout);
	if (r == 1)
		return 0;
	if (r < 0)
	{
		fprintf(stderr, "bothy-gateway serve: %s\n%s", err, gw_serve_usage());
		return 2;
	}
	gw_log_set_level(gw.opt.log_level);
	gw_log_hook_lws();
	/* a standby's conninfo libpq cannot parse refuses the start (docs/standbys.md) */
	for (r = 0; r < gw.opt.ndatabase_read; r++)
		if (!gw_dbread_check(gw.opt.database_read[r], err, sizeof(err)))
		{
			fprintf(stderr, "bothy-gateway serve: %s\n", err);
			gw_logf(GW_LOG_ERROR, "refusing to start", "reason=database_read_invalid standby=%d",
					r + 1);
			return 2;
		}

	if (!routes_init())
	{
		routes_fini();
		return 1;
	}
	/* until bothy.settings() is read: the shortest cache, never stale keys */
	gw.cluster.signing_key_cache_ttl = 1000;
	gw.backoff_ms = INITIAL_BACKOFF_MS;
	gw_new_uuid(&gw.id);
	bothy_uuid_format(&gw.id, gw.id_text);

	/* the configuration, with no secret: not the conninfo, not an address */
	gw_options_describe(&gw.opt, fields, sizeof(fields));
	gw_logf(GW_LOG_INFO, "starting", "%s", fields);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	memset(&info, 0, sizeof(info));
	info.port = gw.opt.listen_port;
	info.iface = gw.opt.listen_host[0] != '\0' ? gw.opt.listen_host : NULL;
	protocols[0].per_session_data_size = gw_route_conn_size();
	add_subprotocols();
	info.protocols = protocols;
	info.gid = -1;
	info.uid = -1;
	/* invalid UTF-8 in a text frame is refused by lws itself (1007) */
	info.options = LWS_SERVER_OPTION_VALIDATE_UTF8;
	/*
	 * lws 4.1 binds an IPv4 address given as iface on an IPv6 socket, that
	 * is on every address: a node meant for loopback only would listen on
	 * all of them.  Without IPv6 it binds exactly the address asked for.
	 */
	if (strchr(gw.opt.listen_host, ':') == NULL)
		info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
	info.timeout_secs = 10;
	/*
	 * A REST query may name 50 UUIDs (the gateway route's, about 2.2 kB)
	 * beside an Authorization header of up to 1024 bytes (a token): lws'
	 * default of 4096 bytes of headers would leave little room for the
	 * rest.  The buffer belongs to a pool lent to requests while their
	 * headers are read, not to each idle connection.
	 */
	info.max_http_header_data = GW_HTTP_HEADER_MAX;
	if (!gw_loop_prepare(&info))
	{
		gw_log(GW_LOG_ERROR, "out of memory at start");
		routes_fini();
		return 1;
	}
	gw.context = lws_create_context(&info);
	if (gw.context == NULL)
	{
		gw_log(GW_LOG_ERROR, "could not listen");
		fprintf(stderr, "bothy-gateway: could not listen on --listen (or libwebsockets' "
				"libev plugin, package libwebsockets-evlib-ev, is missing)\n");
		gw_loop_finish();
		routes_fini();
		return 1;
	}
	gw.vhost = lws_get_vhost_by_name(gw.context, "default");
	gw.db = gw_db_create(gw.context, gw.vhost, gw.opt.database, gw.opt.db_pool,
						 gw.opt.db_timeout_ms, &gw.backoff_ms);
	gw.listener = gw_listener_create(gw.context, gw.vhost, gw.opt.database, &gw.backoff_ms,
									 gw.opt.db_timeout_ms);
	if (gw.db != NULL && gw.opt.ndatabase_read > 0 &&
		gw_dbread_create(gw.db, gw.context, gw.vhost, gw.opt.database_read,
						 gw.opt.ndatabase_read, gw.opt.db_pool, gw.opt.read_wait_ms,
						 gw.opt.read_retry_ms, gw.opt.read_misses, gw.opt.db_timeout_ms,
						 &gw.backoff_ms) == NULL)
	{
		gw_db_destroy(gw.db);
		gw.db = NULL;
	}
	if (gw.vhost == NULL || gw.db == NULL || gw.listener == NULL)
	{
		gw_log(GW_LOG_ERROR, "out of memory at start");
		gw.exit_code = 1;
		gw.exit_loop = true;
	}
	else
	{
		lws_sul_schedule(gw.context, 0, &gw.sul_deadline, start_deadline,
						 (lws_usec_t) gw.opt.start_timeout_ms * LWS_US_PER_MS);
		gw_conn_sweep_start();
		start_settings(NULL);
	}

	while (!gw.exit_loop)
	{
		gw_server_wakeup();
		gw_loop_run_once();
	}

	gw_conn_sweep_stop();
	/* the routes' timers, and their calls: the pool goes with every call in it */
	EACH_ROUTE(forget);
	/* the pool and listener first: their sockets are wsis of the context */
	gw_listener_destroy(gw.listener);
	gw.listener = NULL;
	gw_dbread_destroy(gw_dbread_current);
	gw_db_destroy(gw.db);
	gw.db = NULL;
	lws_context_destroy(gw.context);
	gw.context = NULL;
	gw_loop_finish();
	routes_fini();
	gw_logf(GW_LOG_INFO, "exit", "status=%d", gw.exit_code);
	return gw.exit_code;
}
