/*
 * clients/rest.c
 *		The REST calls under /v1/ (see rest.h): routing, the checks every
 *		call starts with, and writing the answer.
 *
 * A request lives in a gw_rest hung on its connection (c->http_call) from
 * the HTTP callback until its answer is written; its database call and its
 * wait are cancelled if the client goes first.  The answer is written in
 * HTTP_WRITEABLE (the headers, then the body from core/http.c), never from
 * a database callback directly.  The calls themselves are in rest_poll.c
 * and rest_presence.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clients/rest_call.h"
#include "clients/stats.h"
#include "core/http.h"
#include "core/node.h"
#include "intparse.h"
#include "keys/bearer.h"

/* --- answers ------------------------------------------------------------ */

void
gw_rest_answer(gw_rest *r, unsigned status, gw_text *body)
{
	gw_rest_unwait(r);
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

void
gw_rest_answer_error(gw_rest *r, unsigned status, const char *code)
{
	gw_text		body;
	int			n;

	body.data = malloc(64);
	if (body.data == NULL)
	{
		body.len = 0;
		gw_rest_answer(r, status, &body);
		return;
	}
	n = snprintf(body.data, 64, "{\"error\":\"%s\"}", code);
	body.len = n > 0 ? (size_t) n : 0;
	gw_rest_answer(r, status, &body);
}

/* A database failure: the client may try again. */
void
gw_rest_answer_db_failure(gw_rest *r, gw_db_result result, const PGresult *res)
{
	const char *state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (result == GW_DB_ERROR && state != NULL && strncmp(state, "22", 2) == 0)
		gw_rest_answer_error(r, 400, "bad_request");	/* the caller's argument, e.g. after > last event */
	else
		gw_rest_answer_error(r, 503, "unavailable");
}

bool
gw_rest_submit(gw_rest *r, const char *sql, int nparams, const char *const *params, gw_db_cb done)
{
	r->call = gw_db_submit(gw.db, sql, nparams, params, done, r);
	if (r->call == NULL)
		gw_rest_answer_error(r, 503, "unavailable");
	return r->call != NULL;
}

lws_dll2_owner_t gw_rest_calls;

/* A call's end: out of the list, its answer's body and itself freed. */
static void
release(gw_rest *r)
{
	lws_dll2_remove(&r->in_calls);
	gw_text_free(&r->body);
	free(r);
}

int
gw_rest_writeable(struct lws *wsi, gw_conn *c)
{
	gw_rest    *r = c->http_call;
	int			status;

	if (r == NULL || !r->answered)
		return 0;
	c->http_call = NULL;
	/* headers now, the body at the next writeable (core/http.c) */
	status = gw_http_respond(wsi, c, r->status, "application/json",
							 r->body.data != NULL ? r->body.data : "", r->body.len);
	release(r);
	return status;
}

void
gw_rest_closed(gw_conn *c)
{
	gw_rest    *r = c->http_call;

	if (r == NULL)
		return;
	c->http_call = NULL;
	gw_rest_unwait(r);
	if (r->call != NULL)
		gw_db_cancel(r->call);
	release(r);
}

int
gw_rest_pending(void)
{
	return (int) gw_rest_calls.count;	/* a call leaves the list as its headers go */
}

void
gw_rest_forget_calls(void)
{
	lws_dll2_t *d;

	for (d = gw_rest_calls.head; d != NULL; d = d->next)
		lws_container_of(d, gw_rest, in_calls)->call = NULL;
}

/* --- the request: token and arguments ------------------------------------ */

/* The Bearer token of the request, verified for the kinds in accept. */
static bool
authenticate(gw_rest *r, unsigned accept)
{
	bothy_token t;

	if (!gw_bearer_verify(r->wsi, accept, "REST call refused: no bearer token",
						  "REST call refused: token", &t))
	{
		gw_clients_stats.tokens_refused++;
		return false;
	}
	r->principal = t.kind == BOTHY_TOKEN_AGENT ? t.agent : t.person;
	return true;
}

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
				s,
				read = 0;

	memset(v, 0, sizeof(*v));
	/*
	 * lws reads "a&&b" (or "a&") with an empty argument, where this loop
	 * stops: the total below tells that more was there.
	 */
	for (i = 0; lws_hdr_fragment_length(r->wsi, WSI_TOKEN_HTTP_URI_ARGS, i) > 0; i++)
	{
		const char *eq;
		const char *value;

		/* lws' total counts one separator between two arguments */
		read += lws_hdr_fragment_length(r->wsi, WSI_TOKEN_HTTP_URI_ARGS, i) + (i > 0);
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
				if (!bothy_parse_int(value, specs[s].min, specs[s].max, &v->ints[s]))
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
	/* an empty argument stopped the loop: refused, never skipped */
	if (read != lws_hdr_total_length(r->wsi, WSI_TOKEN_HTTP_URI_ARGS))
		return false;
	for (s = 0; s < nspecs; s++)
		if (specs[s].required && !v->seen[s])
			return false;
	return true;
}

bool
gw_rest_admit(gw_rest *r, gw_rest_endpoint endpoint, bothy_token_kind kind,
	  const arg_spec *specs, int nspecs, arg_values *v)
{
	r->endpoint = endpoint;
	if (!authenticate(r, BOTHY_TOKEN_ACCEPT(kind)))
	{
		gw_rest_answer_error(r, 401, "token_refused");
		return false;
	}
	if (!parse_args(r, specs, nspecs, v))
	{
		gw_rest_answer_error(r, 400, "bad_request");
		return false;
	}
	return true;
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
		{"/v1/agent/events", gw_rest_agent_events},
		{"/v1/agents/presence", gw_rest_agents_presence},
		{"/v1/presence", gw_rest_presence},
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
	lws_dll2_add_tail(&r->in_calls, &gw_rest_calls);
	lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, REST_CALL_MAX_S(gw.opt.db_timeout_ms));
	r->c = c;
	c->http_call = r;
	routes[i].handle(r);
	return 0;
}
