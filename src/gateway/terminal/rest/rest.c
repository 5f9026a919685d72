/*
 * terminal/rest/rest.c
 *		The terminal's REST calls under /v1/terminal/ (see rest.h):
 *		routing by path and method, and the token every call starts with.
 *
 * The call and its answer are core/restcall.c's, the engine the clients
 * route's REST calls use too: written in HTTP_WRITEABLE, never from a
 * database callback directly.  A POST reaches here only with its whole
 * body read (core/route.h, body_max).
 */
#include <stdio.h>
#include <string.h>

#include "core/http.h"
#include "core/metrics.h"
#include "core/node.h"
#include "keys/bearer.h"
#include "terminal/rest/rest.h"

#define PREFIX "/v1/terminal/"
#define SESSIONS PREFIX "sessions"
#define ATTACH "/attach"

/*
 * The longest a call may take: three database calls (a read, the
 * transition, the recheck), each at most --db-timeout.  lws would end the
 * request at its own default (10 s) otherwise.
 */
#define CALL_MAX_S(db_timeout_ms) ((3 * (db_timeout_ms)) / 1000 + 5)

static const unsigned rest_statuses[GW_TREST_N_STATUSES] = GW_TREST_STATUSES;

/* Calls answered, by endpoint and status (the last: any other status). */
static uint64_t answered[GW_TREST_ENDPOINT_COUNT][GW_TREST_N_STATUSES + 1];

/* One REST call answered (the engine's counted hook). */
static void
count(int endpoint, unsigned status)
{
	int			i;

	for (i = 0; i < GW_TREST_N_STATUSES; i++)
		if (rest_statuses[i] == status)
			break;
	answered[endpoint][i]++;
}

void
gw_trest_metrics(gw_metrics_out *out)
{
	static const char *const endpoints[GW_TREST_ENDPOINT_COUNT] = {
		"POST /v1/terminal/sessions", "POST /v1/terminal/sessions/{id}/attach",
		"DELETE /v1/terminal/sessions/{id}", "GET /v1/terminal/hosts"
	};
	int			e,
				i;

	gw_metrics_header(out, "bothy_terminal_rest_requests_total", "counter",
					  "Terminal REST calls answered, by endpoint and status.");
	for (e = 0; e < GW_TREST_ENDPOINT_COUNT; e++)
		for (i = 0; i <= GW_TREST_N_STATUSES; i++)
		{
			char		status[8];

			if (i < GW_TREST_N_STATUSES)
				snprintf(status, sizeof(status), "%u", rest_statuses[i]);
			else
				snprintf(status, sizeof(status), "other");
			gw_metrics_put(out, "bothy_terminal_rest_requests_total{endpoint=\"%s\",status=\"%s\"} %llu\n",
						   endpoints[e], status, (unsigned long long) answered[e][i]);
		}
}

static gw_restcalls calls = {.counted = count, .ended = NULL};

int
gw_trest_pending(void)
{
	return gw_restcalls_pending(&calls);
}

void
gw_trest_forget(void)
{
	gw_restcalls_forget(&calls);
}

/* --- the request --------------------------------------------------------- */

/* The Bearer person-device token: person and device, or false (logged). */
static bool
authenticate(gw_trest *r)
{
	bothy_token t;

	if (!gw_bearer_verify(r->rc.wsi, BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_PERSON_DEVICE),
						  "terminal REST call refused: no bearer token",
						  "terminal REST call refused: token", &t))
		return false;
	r->person = t.person;
	r->device = t.device;
	return true;
}

/* The method of the request, by the header lws filled. */
typedef enum method
{
	M_OTHER = 0,
	M_GET,
	M_POST,
	M_DELETE
} method;

static method
method_of(struct lws *wsi)
{
	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0)
		return M_GET;
	if (lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0)
		return M_POST;
	if (lws_hdr_total_length(wsi, WSI_TOKEN_DELETE_URI) > 0)
		return M_DELETE;
	return M_OTHER;
}

/*
 * The endpoint of path and its session, or -1 for a path that is none
 * (404).  /v1/terminal/sessions/<id> and .../<id>/attach name a canonical
 * session ID.
 */
static int
route_of(const char *path, bothy_uuid *session)
{
	size_t		n = strlen(SESSIONS);

	if (strcmp(path, PREFIX "hosts") == 0)
		return GW_TREST_HOSTS;
	if (strcmp(path, SESSIONS) == 0)
		return GW_TREST_OPEN;
	if (strncmp(path, SESSIONS "/", n + 1) != 0 ||
		!bothy_uuid_parse(path + n + 1, strnlen(path + n + 1, BOTHY_UUID_STRLEN), session))
		return -1;
	path += n + 1 + BOTHY_UUID_STRLEN;
	if (path[0] == '\0')
		return GW_TREST_DELETE;
	if (strcmp(path, ATTACH) == 0)
		return GW_TREST_ATTACH;
	return -1;
}

static int
request(struct lws *wsi, gw_conn *c, const char *path)
{
	static const method methods[GW_TREST_ENDPOINT_COUNT] = {
		[GW_TREST_OPEN] = M_POST, [GW_TREST_ATTACH] = M_POST,
		[GW_TREST_DELETE] = M_DELETE, [GW_TREST_HOSTS] = M_GET,
	};
	bothy_uuid	session;
	int			endpoint = route_of(path, &session);
	const char *body;
	size_t		len;
	gw_trest   *r;
	int			status;

	if (endpoint < 0)
		return gw_restcall_refuse(wsi, c, HTTP_STATUS_NOT_FOUND);
	if (method_of(wsi) != methods[endpoint])
		return gw_restcall_refuse(wsi, c, HTTP_STATUS_METHOD_NOT_ALLOWED);
	status = gw_restcall_begin(&calls, wsi, c, sizeof(gw_trest), endpoint,
							   CALL_MAX_S(gw.opt.db_timeout_ms), (void **) &r);
	if (r == NULL)
		return status;
	r->session = session;
	/* the token after the call exists: a refusal is counted like any answer */
	if (!authenticate(r))
	{
		gw_trest_error(r, 401, "token_refused");
		return 0;
	}
	body = gw_http_body(&len);
	switch ((gw_trest_endpoint) r->rc.endpoint)
	{
		case GW_TREST_OPEN:
			gw_trest_open(r, body, len);
			break;
		case GW_TREST_ATTACH:
			gw_trest_attach(r, body, len);
			break;
		case GW_TREST_DELETE:
			gw_trest_delete(r);
			break;
		case GW_TREST_HOSTS:
			gw_trest_hosts(r);
			break;
		case GW_TREST_ENDPOINT_COUNT:
			break;
	}
	return 0;
}

const gw_http_route gw_trest_route = {
	.prefix = PREFIX,
	.body_max = GW_TREST_BODY_MAX,
	.request = request,
	.writeable = gw_restcall_writeable,
	.closed = gw_restcall_closed,
};
