/*
 * core/route.h
 *		What a route registers with the core: its WebSocket endpoints, its
 *		HTTP paths, its part of the shared listener, its close codes and
 *		metrics, its members of /status.json, its options and cluster
 *		settings, and its start and stop hooks.
 *
 * The core knows no route: the transport (conn.c), HTTP (http.c), the
 * listener, /metrics, /status.json and the start and stop (server.c) reach
 * a route only through the gw_route it registered.  main.c, at the top of
 * src/gateway/, is the one place that registers them, before gw_serve.
 * A part that serves nothing itself (the key store) registers the same
 * way with only its hooks.  docs/development.md, "Rooms", says how a new
 * route fills one in.
 *
 * Every member may be NULL or zero but an endpoint's message and an HTTP
 * route's request; the tables are read-only once the context is created.
 */
#ifndef BOTHY_GATEWAY_ROUTE_H
#define BOTHY_GATEWAY_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <libwebsockets.h>

#include "signal.h"

struct gw_conn;
struct gw_metrics_out;

#define GW_MAX_ROUTES 4			/* routes and hook-only parts */
#define GW_MAX_WS_ENDPOINTS 8	/* WebSocket paths of every route */
#define GW_MAX_HTTP_ROUTES 8	/* HTTP path prefixes of every route */
#define GW_MAX_ROUTE_OPTIONS 32	/* `serve` options of every route */

/*
 * One WebSocket path.  lws allocates one per-session struct for every
 * connection of the vhost, of the largest conn_size registered: a route's
 * struct starts with the core's gw_conn (conn.h) and adds its own state.
 * The core writes (bounded queue, WRITEABLE only), reassembles fragments,
 * enforces --max-message, closes a stalled reader (4008) and, on a path
 * that takes no binary messages, a binary frame (4002); the route is told
 * of each complete message.
 */
typedef struct gw_ws_endpoint
{
	const char *path;			/* "/gateway", or a prefix ("/terminal/stream/") */
	bool		prefix;			/* path is a prefix of the request's path */
	bool		binary;			/* binary messages are delivered, not refused */
	size_t		conn_size;		/* the route's per-connection struct, gw_conn first */
	/* a prefix path's rest (after path): false answers the upgrade 404; NULL: any */
	bool		(*accepts) (const char *rest);
	/* exactly its path: an upgrade with a query string is answered 404 */
	bool		no_query;
	/*
	 * A WebSocket subprotocol a client of this path may name to be read in
	 * larger pieces (messages passed on in bulk); NULL: none.  Only this
	 * path takes it.
	 */
	const char *subprotocol;
	/* upgraded: the struct is zero but for its gw_conn */
	void		(*established) (struct gw_conn *c);
	/* one complete message (not NUL-terminated) */
	void		(*message) (struct gw_conn *c, const char *msg, size_t len, bool binary);
	/*
	 * a wake-up asked for with gw_conn_wake_at has come (now in
	 * gw_mono_ms()), unless the close is decided: check the deadlines and
	 * ask again for the next one
	 */
	void		(*tick) (struct gw_conn *c, int64_t now);
	/*
	 * a queued message of len payload bytes was handed to lws (binary: a
	 * binary message, not text nor a ping): the queue shrank
	 * (gw_conn_queued)
	 */
	void		(*sent) (struct gw_conn *c, size_t len, bool binary);
	/*
	 * true: the front message (never a ping) waits, unwritten, until the
	 * route calls gw_conn_progress (the client acknowledged what it read);
	 * NULL: never held
	 */
	bool		(*held) (struct gw_conn *c);
	/* a pong with a payload came (lws 4.1 reports no empty one); NULL: ignored */
	void		(*pong) (struct gw_conn *c, const char *payload, size_t len);
	/* the connection is gone: cancel what it waits for (its queue is freed after) */
	void		(*closed) (struct gw_conn *c);
} gw_ws_endpoint;

/*
 * One HTTP path prefix ("/v1/"): the longest registered prefix of a
 * request's path answers it, after the core's own paths (/healthz,
 * /readyz, /metrics, the page's files and /status.json).
 */
typedef struct gw_http_route
{
	const char *prefix;
	/*
	 * The most bytes of a POST body the route reads; 0: it reads none.
	 * A POST to a route that reads bodies reaches request only once its
	 * whole body is in (LWS_CALLBACK_HTTP_BODY_COMPLETION), and request
	 * finds it with gw_http_body (http.h).  The core refuses a POST
	 * without Content-Length (or with Transfer-Encoding) with 411 and a
	 * longer one with 413, and closes the connection after the answer.
	 */
	size_t		body_max;
	/*
	 * LWS_CALLBACK_HTTP: answer now with gw_http_respond, or set
	 * c->http_call and answer later from writeable.  Nonzero closes.
	 */
	int			(*request) (struct lws *wsi, struct gw_conn *c, const char *path);
	/* LWS_CALLBACK_HTTP_WRITEABLE while c->http_call is set */
	int			(*writeable) (struct lws *wsi, struct gw_conn *c);
	/* LWS_CALLBACK_CLOSED_HTTP: cancel what c->http_call waits for */
	void		(*closed) (struct gw_conn *c);
} gw_http_route;

/*
 * One integer option of `serve` a route owns (--heartbeat).  The core
 * builds getopt's table, `serve --help` and the "starting" record from the
 * core's own options and every route's, so each stays one text
 * (docs/gateway.md, "`serve` options"): a route's option comes right after the
 * core option named by after, in registration order, in both (an after
 * naming no core option leaves it out of both: test_config compares them
 * byte for byte).  Parsed strictly within min..max ("--NAME must be an
 * integer from MIN to MAX").
 */
typedef struct gw_route_option
{
	const char *name;			/* "heartbeat": --heartbeat */
	const char *help;			/* its lines of --help, each ending in a newline */
	long		min;
	long		max;
	long		def;			/* set before the command line is read */
	int		   *value;			/* in the route's options struct */
	const char *log_key;		/* "heartbeat_ms=" in "starting" */
	const char *after;			/* a core option's name: "identify-timeout" */
} gw_route_option;

/*
 * One integer row of bothy.settings() a route reads (docs/configuration.md),
 * an int64_t at offset in the route's settings struct.  The core stages a
 * read in a copy of that struct, checks every route's rules on the copies,
 * and only then writes them: an invalid reload keeps the last good ones.
 */
typedef struct gw_route_setting
{
	const char *name;			/* "presence_ttl": bothy.presence_ttl */
	long		min;
	long		max;
	bool		count;			/* no unit; else milliseconds */
	size_t		offset;			/* of its int64_t in the settings struct */
	/* logged in "cluster settings read" after this core setting; NULL: not */
	const char *log_after;
} gw_route_setting;

#define GW_ROUTE_SETTINGS_MAX 256	/* bytes of one route's settings struct */
#define GW_ROUTE_SETTINGS_COUNT 32	/* rows of one route's settings */

/*
 * A route's options and settings, declared in its own room (its
 * settings.c: pure, so its unit test links it beside core/config.c).
 */
typedef struct gw_route_config
{
	const gw_route_option *options;
	int			noptions;
	const gw_route_setting *settings;
	int			nsettings;
	void	   *settings_struct;	/* written after each good read */
	size_t		settings_size;
	/* the rules across its own settings, on a staged copy: false names them in err */
	bool		(*settings_check) (const void *staged, char *err, size_t errlen);
} gw_route_config;

typedef struct gw_route
{
	const char *name;			/* constant, for logs */

	const gw_ws_endpoint *const *ws;	/* NULL-terminated, or NULL */
	const gw_http_route *const *http;	/* NULL-terminated, or NULL */

	/*
	 * The shared listener hands every decoded signal to every route, in
	 * NOTIFY's order; a route acts on its own kinds and ignores the rest.
	 * True: this node's own signal, ignored (counted as own, not received).
	 */
	bool		(*signal) (const bothy_signal *sig);
	/* LISTEN succeeded again after a loss: signals may have been missed */
	void		(*reconcile) (void);

	/* close codes counted by name in bothy_gateway_closes_total */
	const int  *close_codes;
	int			nclose_codes;
	/* appends the route's families to /metrics (metrics.h's writers) */
	void		(*metrics) (struct gw_metrics_out *out);
	/* sets the route's members of /status.json; false when out of memory */
	bool		(*status) (json_t *status);

	/* its integer options of `serve` and its rows of bothy.settings() */
	const gw_route_config *config;

	/* options parsed, nothing bound yet: false refuses the start (it said why) */
	bool		(*init) (void);
	/* registered with the database: the node accepts connections from now */
	void		(*start) (void);
	/* the stop began and every WebSocket client was told 1001 */
	void		(*stopping) (void);
	/*
	 * Polled by the stop once no WebSocket connection is left, before the
	 * node's rows are deleted: true when nothing of the route is in flight.
	 */
	bool		(*drained) (void);
	/*
	 * The loop has ended: cancel timers and forget database calls (the
	 * pool is destroyed next, with every call in it).
	 */
	void		(*forget) (void);
	/* last, also after a start that failed after init */
	void		(*fini) (void);
} gw_route;

/*
 * Before gw_serve; false when a table is full, a path is taken twice or
 * the options or settings do not fit GW_MAX_ROUTE_OPTIONS,
 * GW_ROUTE_SETTINGS_MAX and GW_ROUTE_SETTINGS_COUNT.
 */
bool		gw_route_register(const gw_route *route);

/* The routes, in registration order. */
int			gw_route_count(void);
const gw_route *gw_route_at(int i);

/*
 * The WebSocket endpoint of a request's path, with its index, or NULL:
 * an exact path, else the longest prefix.
 */
const gw_ws_endpoint *gw_route_ws_find(const char *path, int *index);
const gw_ws_endpoint *gw_route_ws_at(int index);
int			gw_route_ws_count(void);

/* The HTTP route of the longest registered prefix of path, or NULL. */
const gw_http_route *gw_route_http_find(const char *path);

/*
 * The close codes /metrics counts by name: the core's (GW_CLOSE_CODES) and
 * every route's, ascending and each once; returns how many.
 */
int			gw_route_close_codes(const int **codes);

/* The per-session size lws allocates: gw_conn's, or the largest conn_size. */
size_t		gw_route_conn_size(void);

/* Forgets every registration (the unit tests). */
void		gw_route_reset(void);

#endif							/* BOTHY_GATEWAY_ROUTE_H */
