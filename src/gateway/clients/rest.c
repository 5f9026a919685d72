/*
 * clients/rest.c
 *		The REST calls under /v1/ (see rest.h): routing, and the checks
 *		every call starts with.
 *
 * A request lives in a gw_rest hung on its connection (c->http_call) from
 * the HTTP callback until its answer is written; the engine that holds it
 * and writes its answer is core/restcall.c, shared with the terminal's
 * REST calls.  Its wait (a poll) is cancelled with its database call if
 * the client goes first: gw_rest_calls.ended.  The calls themselves are
 * in rest_poll.c and rest_presence.c.
 */
#include <string.h>

#include "clients/rest_call.h"
#include "clients/stats.h"
#include "core/node.h"
#include "intparse.h"
#include "keys/bearer.h"

/* --- the engine's hooks and answers -------------------------------------- */

static void
count(int endpoint, unsigned status)
{
	gw_metrics_rest((gw_rest_endpoint) endpoint, status);
}

/* A poll's wait ends with its call: answered, or its client gone. */
static void
unwait(gw_restcall *rc)
{
	gw_rest_unwait((gw_rest *) rc);
}

gw_restcalls gw_rest_calls = {.counted = count, .ended = unwait};

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

int
gw_rest_pending(void)
{
	return gw_restcalls_pending(&gw_rest_calls);
}

void
gw_rest_forget_calls(void)
{
	gw_restcalls_forget(&gw_rest_calls);
}

/* --- the request: token and arguments ------------------------------------ */

/* The Bearer token of the request, verified for the kinds in accept. */
static bool
authenticate(gw_rest *r, unsigned accept)
{
	bothy_token t;

	if (!gw_bearer_verify(r->rc.wsi, accept, "REST call refused: no bearer token",
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
	for (i = 0; lws_hdr_fragment_length(r->rc.wsi, WSI_TOKEN_HTTP_URI_ARGS, i) > 0; i++)
	{
		const char *eq;
		const char *value;

		/* lws' total counts one separator between two arguments */
		read += lws_hdr_fragment_length(r->rc.wsi, WSI_TOKEN_HTTP_URI_ARGS, i) + (i > 0);
		if (lws_hdr_fragment_length(r->rc.wsi, WSI_TOKEN_HTTP_URI_ARGS, i) > ARG_MAX ||
			lws_hdr_copy_fragment(r->rc.wsi, arg, sizeof(arg), WSI_TOKEN_HTTP_URI_ARGS, i) < 0 ||
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
	if (read != lws_hdr_total_length(r->rc.wsi, WSI_TOKEN_HTTP_URI_ARGS))
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
	r->rc.endpoint = endpoint;
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
	int			status;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (strcmp(path, routes[i].path) == 0)
			break;
	if (i == sizeof(routes) / sizeof(routes[0]))
		return gw_restcall_refuse(wsi, c, HTTP_STATUS_NOT_FOUND);
	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0)
		return gw_restcall_refuse(wsi, c, HTTP_STATUS_METHOD_NOT_ALLOWED);
	/* endpoint 0 until gw_rest_admit names it: every handler admits first */
	status = gw_restcall_begin(&gw_rest_calls, wsi, c, sizeof(gw_rest), 0,
							   REST_CALL_MAX_S(gw.opt.db_timeout_ms), (void **) &r);
	if (r == NULL)
		return status;
	routes[i].handle(r);
	return 0;
}
