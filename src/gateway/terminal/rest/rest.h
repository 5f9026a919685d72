/*
 * terminal/rest/rest.h
 *		The terminal's REST calls (docs/protocol.md, "The terminal: REST
 *		calls"; docs/terminal.md, "The REST calls"), each with a
 *		person-device token in Authorization: Bearer:
 *
 *		POST   /v1/terminal/sessions              {"host":UUID}: open
 *		POST   /v1/terminal/sessions/<id>/attach  a fresh grant for a detached session
 *		DELETE /v1/terminal/sessions/<id>         end it
 *		GET    /v1/terminal/hosts                 the person's hosts, with connected
 *
 * Inside the calls (rest.c, sessions.c, hosts.c): one call's
 * state hung on its connection from the request until its answer is
 * written, its database calls cancelled if the client goes first; the
 * engine that holds it is core/restcall.c, shared with the clients route.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_REST_H
#define BOTHY_GATEWAY_TERMINAL_REST_H

#include <stdbool.h>
#include <stdint.h>

#include <libpq-fe.h>
#include <libwebsockets.h>

#include "core/conn.h"
#include "core/db.h"
#include "core/restcall.h"
#include "uuid.h"

struct gw_metrics_out;

/* The REST calls, as /metrics labels them. */
typedef enum gw_trest_endpoint
{
	GW_TREST_OPEN = 0,			/* POST /v1/terminal/sessions */
	GW_TREST_ATTACH,			/* POST /v1/terminal/sessions/<id>/attach */
	GW_TREST_DELETE,			/* DELETE /v1/terminal/sessions/<id> */
	GW_TREST_HOSTS,				/* GET /v1/terminal/hosts */
	GW_TREST_ENDPOINT_COUNT
} gw_trest_endpoint;

#define GW_TREST_STATUSES {200, 201, 204, 400, 401, 403, 409, 503}
#define GW_TREST_N_STATUSES 8	/* and one more: other */

/* The most bytes of a request body (POST /v1/terminal/sessions holds about 50). */
#define GW_TREST_BODY_MAX 1024

typedef struct gw_trest
{
	gw_restcall rc;				/* first: the engine's part (core/restcall.h) */
	bothy_uuid	person;			/* the token's */
	bothy_uuid	device;			/* the token's */
	bothy_uuid	host;			/* open: the body's; attach: the session's */
	bothy_uuid	session;		/* attach, delete: the path's; open: the new one */
	bothy_uuid	grant;			/* open, attach: the grant drawn */
	int64_t		expires_s;		/* open, attach: the grant's expiry, Unix seconds */
	char		expires_at[40];	/* ... as RFC 3339 text */
} gw_trest;

/* The route's HTTP prefix, /v1/terminal/. */
extern const struct gw_http_route gw_trest_route;

/* Sets the answer (body is malloc'd and taken; NULL for none) and asks for HTTP_WRITEABLE. */
static inline void
gw_trest_answer(gw_trest *r, unsigned status, char *body, size_t len)
{
	gw_restcall_answer(&r->rc, status, body, len);
}

/* {"error":code} with status. */
static inline void
gw_trest_error(gw_trest *r, unsigned status, const char *code)
{
	gw_restcall_error(&r->rc, status, code);
}

/* A database call that failed or answered what it should not: 503. */
static inline void
gw_trest_unavailable(gw_trest *r)
{
	gw_trest_error(r, 503, "unavailable");
}

/* The call's query; answered 503 at once (false) when it cannot be queued. */
static inline bool
gw_trest_submit(gw_trest *r, const char *sql, int nparams, const char *const *params,
				gw_db_cb done)
{
	return gw_restcall_submit(&r->rc, sql, nparams, params, done);
}

/* The calls (sessions.c, hosts.c): each answers through the above. */
void		gw_trest_open(gw_trest *r, const char *body, size_t len);
void		gw_trest_attach(gw_trest *r, const char *body, size_t len);
void		gw_trest_delete(gw_trest *r);
void		gw_trest_hosts(gw_trest *r);

/* The REST calls' family of /metrics: answers by endpoint and status. */
void		gw_trest_metrics(struct gw_metrics_out *out);

/* Calls whose answer has not gone out yet (the stop waits for them). */
int			gw_trest_pending(void);

/* The loop ended: the calls' database calls are gone with the pool. */
void		gw_trest_forget(void);

#endif							/* BOTHY_GATEWAY_TERMINAL_REST_H */
