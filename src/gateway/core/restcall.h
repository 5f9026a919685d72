/*
 * core/restcall.h
 *		The deferred REST call engine of both routes (clients/rest.c under
 *		/v1/, terminal/rest.c under /v1/terminal/): a call hung on its
 *		connection from its request until its answer is written, its
 *		database call cancelled if the client goes first.
 *
 * A route embeds gw_restcall as the first member of its own call struct
 * and keeps one gw_restcalls per route.  The answer is written in
 * HTTP_WRITEABLE (headers, then the body from core/http.c), never from a
 * database callback directly.  The refusals before a call exists (404,
 * 405, 503 while the node is not serving) have the bodies docs/protocol.md
 * lists for both routes.  Token checks stay in the routes: core does not
 * include keys/.
 */
#ifndef BOTHY_GATEWAY_RESTCALL_H
#define BOTHY_GATEWAY_RESTCALL_H

#include <stdbool.h>
#include <stddef.h>

#include <libwebsockets.h>

#include "core/conn.h"
#include "core/db.h"

typedef struct gw_restcall gw_restcall;

/* One per route, static. */
typedef struct gw_restcalls
{
	lws_dll2_owner_t calls;		/* every call from its request to its free */
	void		(*counted) (int endpoint, unsigned status);	/* the route's REST counter */
	void		(*ended) (gw_restcall *r);	/* at an answer and at a close, first;
											 * NULL: nothing to undo */
} gw_restcalls;

struct gw_restcall
{
	lws_dll2_t	in_calls;		/* set->calls */
	gw_restcalls *set;
	struct lws *wsi;
	gw_conn    *c;
	int			endpoint;		/* the route's enum, for its counter */
	gw_db_call *call;			/* the running database call, or NULL */
	bool		answered;		/* status and body are set */
	unsigned	status;
	char	   *body;			/* malloc'd, or NULL */
	size_t		len;
};

/* 404, 405 or 503 before a call exists: {"error":...}, written now. */
int			gw_restcall_refuse(struct lws *wsi, gw_conn *c, unsigned status);

/*
 * A call of size bytes (a route's struct, gw_restcall first) hung on c and
 * listed, with lws' timeout of the request at max_s: *out, and 0.  While
 * the node is not serving, 503 is written instead; *out is then NULL and
 * the result is the route callback's.
 */
int			gw_restcall_begin(gw_restcalls *set, struct lws *wsi, gw_conn *c, size_t size,
							  int endpoint, int max_s, void **out);

/*
 * Sets the answer (body is malloc'd and taken; NULL for none) and asks for
 * HTTP_WRITEABLE.  A call already answered keeps its first answer; the
 * second body is freed.
 */
void		gw_restcall_answer(gw_restcall *r, unsigned status, char *body, size_t len);

/* {"error":code} with status. */
void		gw_restcall_error(gw_restcall *r, unsigned status, const char *code);

/*
 * The call's query, done(r, ...) at its end; a query that cannot even be
 * sent (the queue full, no memory) is answered 503 at once.  False then.
 */
bool		gw_restcall_submit(gw_restcall *r, const char *sql, int nparams,
							   const char *const *params, gw_db_cb done);

/* A gw_http_route's writeable and closed for routes whose http_call is a gw_restcall. */
int			gw_restcall_writeable(struct lws *wsi, gw_conn *c);
void		gw_restcall_closed(gw_conn *c);

/* Calls of set whose answer has not gone out yet (the stop waits for them). */
int			gw_restcalls_pending(const gw_restcalls *set);

/* The loop ended: the calls' database calls are gone with the pool. */
void		gw_restcalls_forget(gw_restcalls *set);

#endif							/* BOTHY_GATEWAY_RESTCALL_H */
