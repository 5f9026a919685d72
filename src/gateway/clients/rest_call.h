/*
 * clients/rest_call.h
 *		Inside the REST calls (rest.c, rest_poll.c, rest_presence.c): one
 *		call's state, its answers and the checks every call starts with.
 *		Not for other modules: they use rest.h.
 */
#ifndef BOTHY_GATEWAY_REST_CALL_H
#define BOTHY_GATEWAY_REST_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include <libpq-fe.h>
#include <libwebsockets.h>

#include "clients/events.h"
#include "clients/rest.h"
#include "clients/stats.h"
#include "core/conn.h"
#include "core/db.h"
#include "core/restcall.h"
#include "keys/token.h"

/*
 * Agents or persons asked in one call.  lws 4.1 keeps every query argument
 * in one of a fixed number of header fragments (fewer than 90 with the
 * usual headers), so a longer list could not even be read.
 */
#define LIST_MAX 50
#define ARG_MAX 64				/* one query argument, name=value */
#define POLL_WAIT_MAX_MS 60000	/* the longest wait_ms of a long poll */

/*
 * The longest a call may take: the longest wait and three database calls
 * (the take, a check of the hold, the read), each at most --db-timeout.
 * lws would otherwise end the request at its own default (10 s).
 */
#define REST_CALL_MAX_S(db_timeout_ms) ((POLL_WAIT_MAX_MS + 3 * (db_timeout_ms)) / 1000 + 5)

struct gw_rest
{
	gw_restcall rc;				/* first: the engine's part (core/restcall.h) */
	lws_dll2_t	in_polls;		/* polls waiting for an event */
	bothy_uuid	principal;		/* the token's agent or person */
	bothy_uuid	session;		/* poll: the window's holder session */
	bool		has_after;		/* poll: after given */
	int64_t		after;			/* poll: reported done; then the held acknowledgement */
	int			wait_ms;		/* poll */
	int			max;			/* poll */
	bool		waiting;		/* poll: in polls, deadline armed */
	bool		taking;			/* poll: its consumer_take runs */
	bool		wake;			/* poll: an event came while a call ran */
	bool		recheck;		/* poll: a takeover was heard while a call ran */
	bothy_uuid	thread;			/* presence */
	bothy_uuid	ids[LIST_MAX];	/* presence: persons; agents presence: agents */
	size_t		nids;
	lws_sorted_usec_list_t sul; /* poll: the wait's end */
};

typedef enum arg_kind
{
	ARG_INT,					/* one integer in [min, max] */
	ARG_UUID,					/* one UUID */
	ARG_UUIDS					/* one or more UUIDs (repeated), at most LIST_MAX */
} arg_kind;

typedef struct arg_spec
{
	const char *name;
	arg_kind	kind;
	long		min;
	long		max;
	bool		required;
} arg_spec;

/* The values of at most 4 specs, by their position; repeated UUIDs go to r->ids. */
typedef struct arg_values
{
	bool		seen[4];
	long		ints[4];
	bothy_uuid	uuid[4];
} arg_values;

/*
 * The checks every call starts with: its token of kind (401) and its query
 * arguments against specs (400).  False when it was answered already.
 */
bool		gw_rest_admit(gw_rest *r, gw_rest_endpoint endpoint, bothy_token_kind kind,
						  const arg_spec *specs, int nspecs, arg_values *v);

/* Sets the answer (the body is taken) and asks for HTTP_WRITEABLE. */
static inline void
gw_rest_answer(gw_rest *r, unsigned status, gw_text *body)
{
	gw_restcall_answer(&r->rc, status, body->data, body->len);
	body->data = NULL;
	body->len = 0;
}

/* {"error":code} with status. */
static inline void
gw_rest_answer_error(gw_rest *r, unsigned status, const char *code)
{
	gw_restcall_error(&r->rc, status, code);
}

/* A database call failed: 400 for the caller's bad argument, else 503. */
void		gw_rest_answer_db_failure(gw_rest *r, gw_db_result result, const PGresult *res);

/*
 * The call's query, done(r, ...) at its end; a query that cannot even be
 * sent (the queue full, no memory) is answered 503 at once.  False then.
 */
static inline bool
gw_rest_submit(gw_rest *r, const char *sql, int nparams, const char *const *params,
			   gw_db_cb done)
{
	return gw_restcall_submit(&r->rc, sql, nparams, params, done);
}

/* Every call from its request until it is freed (rest.c). */
extern gw_restcalls gw_rest_calls;

/* Out of the waiting polls, its deadline cancelled (rest_poll.c). */
void		gw_rest_unwait(gw_rest *r);

/* The handlers: each admits, then calls the database. */
void		gw_rest_agent_events(gw_rest *r);	/* rest_poll.c */
void		gw_rest_agents_presence(gw_rest *r);	/* rest_presence.c */
void		gw_rest_presence(gw_rest *r);	/* rest_presence.c */

#endif							/* BOTHY_GATEWAY_REST_CALL_H */
