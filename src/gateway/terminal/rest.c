/*
 * terminal/rest.c
 *		The terminal's REST calls under /v1/terminal/ (see rest.h):
 *		routing by path and method, the token every call starts with, and
 *		writing the answer.
 *
 * An answer is written in HTTP_WRITEABLE (headers, then the body from
 * core/http.c), never from a database callback directly.  A POST reaches
 * here only with its whole body read (core/route.h, body_max).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/http.h"
#include "core/node.h"
#include "keys/bearer.h"
#include "terminal/rest.h"

#define PREFIX "/v1/terminal/"
#define SESSIONS PREFIX "sessions"
#define ATTACH "/attach"

/*
 * The longest a call may take: three database calls (a read, the
 * transition, the recheck), each at most --db-timeout.  lws would end the
 * request at its own default (10 s) otherwise.
 */
#define CALL_MAX_S(db_timeout_ms) ((3 * (db_timeout_ms)) / 1000 + 5)

static lws_dll2_owner_t calls;

/* --- answers ------------------------------------------------------------ */

void
gw_trest_answer(gw_trest *r, unsigned status, char *body, size_t len)
{
	if (r->call != NULL)
	{
		gw_db_cancel(r->call);
		r->call = NULL;
	}
	r->answered = true;
	r->status = status;
	r->body = body;
	r->len = body != NULL ? len : 0;
	gw_tstats_rest(r->endpoint, status);
	lws_callback_on_writable(r->wsi);
}

void
gw_trest_error(gw_trest *r, unsigned status, const char *code)
{
	char	   *body = malloc(64);
	int			n = body != NULL ? snprintf(body, 64, "{\"error\":\"%s\"}", code) : 0;

	gw_trest_answer(r, status, body, n > 0 ? (size_t) n : 0);
}

void
gw_trest_unavailable(gw_trest *r)
{
	gw_trest_error(r, 503, "unavailable");
}

bool
gw_trest_submit(gw_trest *r, const char *sql, int nparams, const char *const *params,
				gw_db_cb done)
{
	r->call = gw_db_submit(gw.db, sql, nparams, params, done, r);
	if (r->call == NULL)
		gw_trest_unavailable(r);
	return r->call != NULL;
}

static void
release(gw_trest *r)
{
	lws_dll2_remove(&r->in_calls);
	free(r->body);
	free(r);
}

static int
writeable(struct lws *wsi, gw_conn *c)
{
	gw_trest   *r = c->http_call;
	int			status;

	if (r == NULL || !r->answered)
		return 0;
	c->http_call = NULL;
	status = gw_http_respond(wsi, c, r->status, "application/json",
							 r->body != NULL ? r->body : "", r->len);
	release(r);
	return status;
}

static void
closed(gw_conn *c)
{
	gw_trest   *r = c->http_call;

	if (r == NULL)
		return;
	c->http_call = NULL;
	if (r->call != NULL)
		gw_db_cancel(r->call);
	release(r);
}

int
gw_trest_pending(void)
{
	return (int) calls.count;
}

void
gw_trest_forget(void)
{
	lws_dll2_t *d;

	for (d = calls.head; d != NULL; d = d->next)
		lws_container_of(d, gw_trest, in_calls)->call = NULL;
}

/* --- the request --------------------------------------------------------- */

/* The Bearer person-device token: person and device, or false (logged). */
static bool
authenticate(gw_trest *r)
{
	bothy_token t;

	if (!gw_bearer_verify(r->wsi, BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_PERSON_DEVICE),
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

	if (endpoint < 0)
		return gw_http_respond(wsi, c, HTTP_STATUS_NOT_FOUND, "application/json",
							   "{\"error\":\"not_found\"}", 21);
	if (method_of(wsi) != methods[endpoint])
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
	r->endpoint = (gw_trest_endpoint) endpoint;
	r->session = session;
	lws_dll2_add_tail(&r->in_calls, &calls);
	lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, CALL_MAX_S(gw.opt.db_timeout_ms));
	c->http_call = r;
	if (!authenticate(r))
	{
		gw_trest_error(r, 401, "token_refused");
		return 0;
	}
	body = gw_http_body(&len);
	switch (r->endpoint)
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
	.writeable = writeable,
	.closed = closed,
};
