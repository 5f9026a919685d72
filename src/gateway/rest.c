/*
 * rest.c
 *		The REST calls under /v1/ (see rest.h).
 *
 * A request lives in a gw_rest hung on its connection (c->rest) from the
 * HTTP callback until its answer is written; its database call and its
 * wait are cancelled if the client goes first.  The answer is written in
 * HTTP_WRITEABLE (the headers, then the body from http.c), never from a
 * database callback directly.
 *
 * The long poll: each call is a new holder of the agent's stream with a
 * window of wait_ms plus POLL_GRACE_MS (bothy.consumer_take, holder_kind
 * poll), which also reports `after` as done.  It reads the events after the
 * held acknowledgement; with none, it waits here until gateway.agent_event
 * of the agent (or a local consumer's takeover: 409) or until wait_ms.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent_events.h"
#include "agents.h"
#include "audience.h"
#include "uuidlist.h"
#include "db.h"
#include "events.h"
#include "fence.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "node.h"
#include "rest.h"
#include "token.h"

#define POLL_GRACE_MS 5000		/* the window outlives the wait by this */
#define POLL_WAIT_DEFAULT_MS 25000
#define POLL_WAIT_MAX_MS 60000
#define POLL_MAX_DEFAULT 100
/*
 * Agents or persons asked in one call.  lws 4.1 keeps every query argument
 * in one of a fixed number of header fragments (fewer than 90 with the
 * usual headers), so a longer list could not even be read.
 */
#define LIST_MAX 50
#define ARG_MAX 64				/* one query argument, name=value */

struct gw_rest
{
	lws_dll2_t	in_polls;		/* polls waiting for an event */
	struct lws *wsi;
	gw_conn    *c;
	gw_rest_endpoint endpoint;
	bothy_uuid	principal;		/* the token's agent or person */
	bothy_uuid	session;		/* poll: the window's holder session */
	bool		has_after;		/* poll: after given */
	int64_t		after;			/* poll: reported done; then the held acknowledgement */
	int			wait_ms;		/* poll */
	int			max;			/* poll */
	bool		waiting;		/* poll: in polls, deadline armed */
	bool		wake;			/* poll: an event came while a call ran */
	bool		recheck;		/* poll: a takeover was heard while a call ran */
	bothy_uuid	thread;			/* presence */
	bothy_uuid	ids[LIST_MAX];	/* presence: persons; agents presence: agents */
	size_t		nids;
	gw_db_call *call;
	lws_sorted_usec_list_t sul; /* poll: the wait's end */
	bool		answered;		/* status and body are set */
	unsigned	status;
	gw_text		body;
};

static lws_dll2_owner_t polls;

static void read_events(gw_rest *r);
static void keep_waiting(gw_rest *r);

/* --- answers ------------------------------------------------------------ */

static void
unwait(gw_rest *r)
{
	if (r->waiting)
	{
		lws_dll2_remove(&r->in_polls);
		lws_sul_cancel(&r->sul);
		r->waiting = false;
	}
}

/* Sets the answer and asks for HTTP_WRITEABLE; the body is taken. */
static void
answer(gw_rest *r, unsigned status, gw_text *body)
{
	unwait(r);
	if (r->call != NULL)
	{
		gw_db_cancel(r->call);
		r->call = NULL;
	}
	r->answered = true;
	r->status = status;
	r->body = *body;
	body->data = NULL;
	body->len = 0;
	gw_metrics_rest(r->endpoint, status);
	lws_callback_on_writable(r->wsi);
}

static void
answer_error(gw_rest *r, unsigned status, const char *code)
{
	gw_text		body;
	int			n;

	body.data = malloc(64);
	if (body.data == NULL)
	{
		body.len = 0;
		answer(r, status, &body);
		return;
	}
	n = snprintf(body.data, 64, "{\"error\":\"%s\"}", code);
	body.len = n > 0 ? (size_t) n : 0;
	answer(r, status, &body);
}

/* A database failure: the client may try again. */
static void
answer_db_failure(gw_rest *r, gw_db_result result, const PGresult *res)
{
	const char *state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (result == GW_DB_ERROR && state != NULL && strncmp(state, "22", 2) == 0)
		answer_error(r, 400, "bad_request");	/* the caller's argument, e.g. after > last event */
	else
		answer_error(r, 503, "unavailable");
}

int
gw_rest_writeable(struct lws *wsi, gw_conn *c)
{
	gw_rest    *r = c->rest;
	int			status;

	if (r == NULL || !r->answered)
		return 0;
	c->rest = NULL;
	/* headers now, the body at the next writeable (http.c) */
	status = gw_http_respond(wsi, c, r->status, "application/json",
							 r->body.data != NULL ? r->body.data : "", r->body.len);
	gw_text_free(&r->body);
	free(r);
	return status;
}

void
gw_rest_closed(gw_conn *c)
{
	gw_rest    *r = c->rest;

	if (r == NULL)
		return;
	c->rest = NULL;
	unwait(r);
	if (r->call != NULL)
		gw_db_cancel(r->call);
	gw_text_free(&r->body);
	free(r);
}

/* --- the request: token and arguments ------------------------------------ */

/* The Bearer token of the request, verified for the kinds in accept. */
static bool
authenticate(gw_rest *r, unsigned accept)
{
	char		header[BOTHY_TOKEN_MAX + 16];
	bothy_token t;
	int			n = lws_hdr_copy(r->wsi, header, sizeof(header), WSI_TOKEN_HTTP_AUTHORIZATION);
	bothy_token_result result;

	if (n <= 7 || strncmp(header, "Bearer ", 7) != 0)
	{
		gw_stats.tokens_refused++;
		gw_log(GW_LOG_INFO, "REST call refused: no bearer token");
		return false;
	}
	result = bothy_token_verify(gw_keys(), header + 7, (size_t) n - 7, gw_now_ms() / 1000,
								accept, &t);
	if (result != BOTHY_TOKEN_OK)
	{
		gw_stats.tokens_refused++;
		gw_logf(GW_LOG_INFO, "REST call refused: token", "reason=%s",
				bothy_token_result_name(result));
		return false;
	}
	r->principal = t.kind == BOTHY_TOKEN_AGENT ? t.agent : t.person;
	return true;
}

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

typedef struct arg_values
{
	bool		seen[4];
	long		ints[4];
	bothy_uuid	uuid[4];
} arg_values;

/*
 * Every query argument against specs (at most 4): an unknown name, a
 * repeated single argument, a bad value or a missing required one is false.
 * Repeated UUIDs go to r->ids.
 */
static bool
parse_args(gw_rest *r, const arg_spec *specs, int nspecs, arg_values *v)
{
	char		arg[ARG_MAX + 1];
	int			i,
				s;

	memset(v, 0, sizeof(*v));
	for (i = 0; lws_hdr_fragment_length(r->wsi, WSI_TOKEN_HTTP_URI_ARGS, i) > 0; i++)
	{
		const char *eq;
		const char *value;

		if (lws_hdr_fragment_length(r->wsi, WSI_TOKEN_HTTP_URI_ARGS, i) > ARG_MAX ||
			lws_hdr_copy_fragment(r->wsi, arg, sizeof(arg), WSI_TOKEN_HTTP_URI_ARGS, i) < 0 ||
			(eq = strchr(arg, '=')) == NULL)
			return false;
		value = eq + 1;
		for (s = 0; s < nspecs; s++)
			if (strlen(specs[s].name) == (size_t) (eq - arg) &&
				strncmp(arg, specs[s].name, (size_t) (eq - arg)) == 0)
				break;
		if (s == nspecs || (v->seen[s] && specs[s].kind != ARG_UUIDS))
			return false;
		v->seen[s] = true;
		switch (specs[s].kind)
		{
			case ARG_INT:
				if (!gw_parse_int(value, specs[s].min, specs[s].max, &v->ints[s]))
					return false;
				break;
			case ARG_UUID:
				if (!bothy_uuid_parse(value, strlen(value), &v->uuid[s]))
					return false;
				break;
			case ARG_UUIDS:
				if (r->nids == LIST_MAX ||
					!bothy_uuid_parse(value, strlen(value), &r->ids[r->nids]))
					return false;
				r->nids++;
				break;
		}
	}
	for (s = 0; s < nspecs; s++)
		if (specs[s].required && !v->seen[s])
			return false;
	return true;
}

/*
 * The checks every call starts with: its token (401) and its arguments
 * (400).  False when it was answered already.
 */
static bool
admit(gw_rest *r, gw_rest_endpoint endpoint, bothy_token_kind kind,
	  const arg_spec *specs, int nspecs, arg_values *v)
{
	r->endpoint = endpoint;
	if (!authenticate(r, BOTHY_TOKEN_ACCEPT(kind)))
	{
		answer_error(r, 401, "token_refused");
		return false;
	}
	if (!parse_args(r, specs, nspecs, v))
	{
		answer_error(r, 400, "bad_request");
		return false;
	}
	return true;
}

/* --- GET /v1/agent/events ------------------------------------------------ */

static const char sql_take[] =
"SELECT bothy.consumer_take($1::uuid, $2::uuid, $3::uuid, 'poll', "
"($4 || ' milliseconds')::interval, $5::bigint)";


/* The wait is over with nothing read: {"events":[],"acked":...}. */
static void
answer_empty(gw_rest *r)
{
	gw_poll_body *b = gw_poll_body_new();
	gw_text		body;

	if (b == NULL || !gw_poll_body_finish(&body, b, r->after, &r->session))
	{
		answer_error(r, 503, "unavailable");
		return;
	}
	answer(r, 200, &body);
}

static void
wait_deadline(lws_sorted_usec_list_t *sul)
{
	gw_rest    *r = lws_container_of(sul, gw_rest, sul);

	unwait(r);
	if (r->call == NULL)
		answer_empty(r);
	/* else the read in flight answers, as nothing waits any more */
}

static void
events_read(void *arg, gw_db_result result, const PGresult *res)
{
	gw_rest    *r = arg;
	gw_poll_body *b;
	gw_text		body;
	int			i;

	r->call = NULL;
	if (result != GW_DB_OK)
	{
		answer_db_failure(r, result, res);
		return;
	}
	if (PQntuples(res) == 0)
	{
		if (!r->waiting)
			answer_empty(r);	/* no wait asked, or it is over */
		else
			keep_waiting(r);
		return;
	}
	b = gw_poll_body_new();
	for (i = 0; b != NULL && i < PQntuples(res); i++)
	{
		gw_agent_event_row row;

		if (!gw_agent_event_row_get(res, i, r->after, &row) ||
			!gw_poll_body_add(b, row.id, row.type, row.data, row.created_at_ms))
			break;
	}
	if (b == NULL || i < PQntuples(res))
	{
		if (b != NULL && gw_poll_body_finish(&body, b, r->after, &r->session))
			gw_text_free(&body);
		answer_error(r, 503, "unavailable");
		return;
	}
	if (!gw_poll_body_finish(&body, b, r->after, &r->session))
	{
		answer_error(r, 503, "unavailable");
		return;
	}
	answer(r, 200, &body);
}

static const char sql_still_holds[] =
"SELECT h.holder_session IS NOT DISTINCT FROM $2::uuid FROM bothy.consumer_holder($1::uuid) AS h";

static void check_holder(gw_rest *r);

/* Nothing to answer yet: what was heard during the last call comes next. */
static void
keep_waiting(gw_rest *r)
{
	if (r->recheck)
		check_holder(r);
	else if (r->wake)
	{
		r->wake = false;
		read_events(r);
	}
}

static void
holder_checked(void *arg, gw_db_result result, const PGresult *res)
{
	gw_rest    *r = arg;

	r->call = NULL;
	if (result != GW_DB_OK || PQntuples(res) != 1)
	{
		answer_db_failure(r, result, res);
		return;
	}
	if (strcmp(PQgetvalue(res, 0, 0), "t") != 0)
	{
		answer_error(r, 409, "fenced");
		return;
	}
	/* an earlier takeover heard late: this window still holds */
	if (!r->waiting)
		answer_empty(r);
	else
		keep_waiting(r);
}

/*
 * A takeover of the agent by another holder was heard.  Whether it came
 * after this window's own take (fenced: 409) or before it, heard late
 * (nothing changes), only the hold row says.
 */
static void
check_holder(gw_rest *r)
{
	char		agent[BOTHY_UUID_STRLEN + 1],
				holder[BOTHY_UUID_STRLEN + 1];
	const char *params[2] = {agent, holder};

	if (r->call != NULL)
	{
		r->recheck = true;
		return;
	}
	r->recheck = false;
	bothy_uuid_format(&r->principal, agent);
	bothy_uuid_format(&r->session, holder);
	r->call = gw_db_submit(gw.db, sql_still_holds, 2, params, holder_checked, r);
	if (r->call == NULL)
		answer_error(r, 503, "unavailable");
}

static void
read_events(gw_rest *r)
{
	if (r->call != NULL)
	{
		r->wake = true;
		return;
	}
	r->call = gw_agent_events_read(&r->principal, &r->session, r->after, r->max, events_read, r);
	if (r->call == NULL)
		answer_error(r, 503, "unavailable");
}

static void
taken(void *arg, gw_db_result result, const PGresult *res)
{
	gw_rest    *r = arg;
	long		acked;

	r->call = NULL;
	if (result != GW_DB_OK || PQntuples(res) != 1 ||
		!gw_parse_int(PQgetvalue(res, 0, 0), 0, INT64_C(9007199254740991), &acked))
	{
		answer_db_failure(r, result, res);
		return;
	}
	r->after = acked;
	/* this node ignores its own gateway.consumer: fence here what it would */
	gw_fence_consumer(&r->principal, &r->session, NULL);
	if (r->wait_ms > 0)
	{
		r->waiting = true;
		lws_dll2_add_tail(&r->in_polls, &polls);
		lws_sul_schedule(gw.context, 0, &r->sul, wait_deadline,
						 (lws_usec_t) r->wait_ms * LWS_US_PER_MS);
	}
	read_events(r);
}

static void
agent_events(gw_rest *r)
{
	static const arg_spec specs[] = {
		{"after", ARG_INT, 0, 9007199254740991L, false},
		{"wait_ms", ARG_INT, 0, POLL_WAIT_MAX_MS, false},
		{"max", ARG_INT, 1, 1000, false},
	};
	arg_values	v;
	char		agent[BOTHY_UUID_STRLEN + 1],
				session[BOTHY_UUID_STRLEN + 1],
				window[16],
				after[24];
	const char *params[5] = {agent, gw.id_text, session, window, NULL};

	if (!admit(r, GW_REST_AGENT_EVENTS, BOTHY_TOKEN_AGENT, specs, 3, &v))
		return;
	r->has_after = v.seen[0];
	r->after = v.ints[0];
	r->wait_ms = v.seen[1] ? (int) v.ints[1] : POLL_WAIT_DEFAULT_MS;
	r->max = v.seen[2] ? (int) v.ints[2] : POLL_MAX_DEFAULT;
	/* a new holder: a session of its own for this window */
	gw_new_uuid(&r->session);
	bothy_uuid_format(&r->principal, agent);
	bothy_uuid_format(&r->session, session);
	snprintf(window, sizeof(window), "%d", r->wait_ms + POLL_GRACE_MS);
	if (r->has_after)
	{
		snprintf(after, sizeof(after), "%lld", (long long) r->after);
		params[4] = after;
	}
	r->call = gw_db_submit(gw.db, sql_take, 5, params, taken, r);
	if (r->call == NULL)
		answer_error(r, 503, "unavailable");
}

void
gw_rest_agent_event(const bothy_uuid *agent)
{
	lws_dll2_t *d,
			   *next;

	for (d = polls.head; d != NULL; d = next)
	{
		gw_rest    *r = lws_container_of(d, gw_rest, in_polls);

		next = d->next;
		if (bothy_uuid_compare(&r->principal, agent) == 0)
			read_events(r);
	}
}

void
gw_rest_fenced(const bothy_uuid *agent, const bothy_uuid *session)
{
	lws_dll2_t *d,
			   *next;

	for (d = polls.head; d != NULL; d = next)
	{
		gw_rest    *r = lws_container_of(d, gw_rest, in_polls);

		next = d->next;
		if (bothy_uuid_compare(&r->principal, agent) == 0 &&
			bothy_uuid_compare(&r->session, session) != 0)
			check_holder(r);
	}
}

void
gw_rest_reconcile(void)
{
	lws_dll2_t *d,
			   *next;

	for (d = polls.head; d != NULL; d = next)
	{
		next = d->next;
		read_events(lws_container_of(d, gw_rest, in_polls));
	}
}

void
gw_rest_stop(void)
{
	while (polls.head != NULL)
		wait_deadline(&lws_container_of(polls.head, gw_rest, in_polls)->sul);
}

/* --- GET /v1/agents/presence --------------------------------------------- */

static const char sql_agent_status[] =
"SELECT agent::text, state, (extract(epoch FROM heartbeat_at) * 1000)::bigint "
"FROM bothy.agent_status($1::uuid[])";

/* One agent's answer: the stored row, or this node's memory when newer. */
static json_t *
agent_presence(const bothy_uuid *agent, const char *stored_state, int64_t stored_ms)
{
	bothy_agent_state state;
	int64_t		seen_ms;
	char		id[BOTHY_UUID_STRLEN + 1],
				at[25];
	const char *code = stored_state != NULL ? stored_state : "offline";
	int64_t		at_ms = stored_ms;

	if (gw_agents_local(agent, &state, &seen_ms) && (stored_state == NULL || seen_ms > stored_ms))
	{
		code = bothy_agent_state_code(state);
		at_ms = seen_ms;
	}
	bothy_uuid_format(agent, id);
	if (code == stored_state || at_ms > 0)
	{
		gw_format_time_ms(at_ms, at);
		return json_pack("{s:s, s:s, s:s}", "agent", id, "state", code, "heartbeat_at", at);
	}
	return json_pack("{s:s, s:s, s:n}", "agent", id, "state", code, "heartbeat_at");
}

static void
status_read(void *arg, gw_db_result result, const PGresult *res)
{
	gw_rest    *r = arg;
	json_t	   *list = json_array();
	gw_text		body;
	size_t		i;

	r->call = NULL;
	if (result != GW_DB_OK)
	{
		json_decref(list);
		answer_db_failure(r, result, res);
		return;
	}
	for (i = 0; list != NULL && i < r->nids; i++)
	{
		const char *state = NULL;
		long		ms = 0;
		int			row;

		for (row = 0; row < PQntuples(res); row++)
		{
			bothy_uuid	a;
			const char *text = PQgetvalue(res, row, 0);

			if (bothy_uuid_parse(text, strlen(text), &a) && bothy_uuid_compare(&a, &r->ids[i]) == 0 &&
				gw_parse_int(PQgetvalue(res, row, 2), LONG_MIN / 2, LONG_MAX / 2, &ms))
				state = PQgetvalue(res, row, 1);
		}
		if (json_array_append_new(list, agent_presence(&r->ids[i], state, ms)) != 0)
		{
			json_decref(list);
			list = NULL;
		}
	}
	body.data = list != NULL ? json_dumps(json_pack("{s:o}", "agents", list),
										  JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (body.data == NULL)
	{
		answer_error(r, 503, "unavailable");
		return;
	}
	body.len = strlen(body.data);
	answer(r, 200, &body);
}

static void
agents_presence(gw_rest *r)
{
	static const arg_spec specs[] = {{"agent", ARG_UUIDS, 0, 0, true}};
	arg_values	v;
	char	   *list;
	const char *params[1];

	if (!admit(r, GW_REST_AGENTS_PRESENCE, BOTHY_TOKEN_PERSON_DEVICE, specs, 1, &v))
		return;
	list = gw_uuid_array_literal(r->ids, r->nids);
	params[0] = list;
	r->call = list != NULL ? gw_db_submit(gw.db, sql_agent_status, 1, params, status_read, r) : NULL;
	free(list);
	if (r->call == NULL)
		answer_error(r, 503, "unavailable");
}

/* --- GET /v1/presence ---------------------------------------------------- */

/*
 * Of the persons asked, those who may see the thread; answered only when
 * the caller may see it too.  The rows come as one JSON text built in SQL.
 */
static const char sql_presence[] =
"WITH a AS (SELECT p FROM bothy.thread_audience($1::uuid, $2::uuid[] || $3::uuid) AS p) "
"SELECT EXISTS (SELECT FROM a WHERE p = $3::uuid), "
"coalesce((SELECT json_agg(json_build_object('person', r.person, 'device', r.device, "
"'node', r.node, 'focus', r.focus, 'idle', r.idle, 'updated_at', "
"to_char(r.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')) "
"ORDER BY r.person, r.device) "
"FROM bothy.presence_read(ARRAY(SELECT p FROM a WHERE p = ANY ($2::uuid[]))) AS r), '[]')::text";

static void
presence_read(void *arg, gw_db_result result, const PGresult *res)
{
	gw_rest    *r = arg;
	json_t	   *rows;
	gw_text		body;

	r->call = NULL;
	if (result != GW_DB_OK || PQntuples(res) != 1)
	{
		answer_db_failure(r, result, res);
		return;
	}
	if (strcmp(PQgetvalue(res, 0, 0), "t") != 0)
	{
		answer_error(r, 403, "forbidden");
		return;
	}
	rows = json_loads(PQgetvalue(res, 0, 1), 0, NULL);
	body.data = rows != NULL ? json_dumps(json_pack("{s:o}", "presence", rows),
										  JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (body.data == NULL)
	{
		answer_error(r, 503, "unavailable");
		return;
	}
	body.len = strlen(body.data);
	answer(r, 200, &body);
}

static void
presence(gw_rest *r)
{
	static const arg_spec specs[] = {
		{"thread", ARG_UUID, 0, 0, true},
		{"person", ARG_UUIDS, 0, 0, true},
	};
	arg_values	v;
	char		thread[BOTHY_UUID_STRLEN + 1],
				caller[BOTHY_UUID_STRLEN + 1];
	char	   *list;
	const char *params[3] = {thread, NULL, caller};

	if (!admit(r, GW_REST_PRESENCE, BOTHY_TOKEN_PERSON_DEVICE, specs, 2, &v))
		return;
	bothy_uuid_format(&v.uuid[0], thread);
	bothy_uuid_format(&r->principal, caller);
	list = gw_uuid_array_literal(r->ids, r->nids);
	params[1] = list;
	r->call = list != NULL ? gw_db_submit(gw.db, sql_presence, 3, params, presence_read, r) : NULL;
	free(list);
	if (r->call == NULL)
		answer_error(r, 503, "unavailable");
}

/* --- routing ------------------------------------------------------------- */

int
gw_rest_request(struct lws *wsi, gw_conn *c, const char *path)
{
	static const struct
	{
		const char *path;
		void		(*handle) (gw_rest *r);
	}			routes[] = {
		{"/v1/agent/events", agent_events},
		{"/v1/agents/presence", agents_presence},
		{"/v1/presence", presence},
	};
	gw_rest    *r;
	size_t		i;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (strcmp(path, routes[i].path) == 0)
			break;
	if (i == sizeof(routes) / sizeof(routes[0]))
		return gw_http_respond(wsi, c, HTTP_STATUS_NOT_FOUND, "application/json",
							   "{\"error\":\"not_found\"}", 21);
	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0)
		return gw_http_respond(wsi, c, HTTP_STATUS_METHOD_NOT_ALLOWED, "application/json",
							   "{\"error\":\"method_not_allowed\"}", 30);
	if (!gw.started || gw.stopping)
		return gw_http_respond(wsi, c, HTTP_STATUS_SERVICE_UNAVAILABLE, "application/json",
							   "{\"error\":\"unavailable\"}", 23);
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return 1;
	r->wsi = wsi;
	r->c = c;
	c->rest = r;
	routes[i].handle(r);
	return 0;
}
