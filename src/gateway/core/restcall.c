/*
 * core/restcall.c
 *		The deferred REST call engine (see restcall.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/http.h"
#include "core/node.h"
#include "core/restcall.h"

int
gw_restcall_refuse(struct lws *wsi, gw_conn *c, unsigned status)
{
	switch (status)
	{
		case HTTP_STATUS_NOT_FOUND:
			return gw_http_respond(wsi, c, HTTP_STATUS_NOT_FOUND, "application/json",
								   "{\"error\":\"not_found\"}", 21);
		case HTTP_STATUS_METHOD_NOT_ALLOWED:
			return gw_http_respond(wsi, c, HTTP_STATUS_METHOD_NOT_ALLOWED, "application/json",
								   "{\"error\":\"method_not_allowed\"}", 30);
		default:
			return gw_http_respond(wsi, c, HTTP_STATUS_SERVICE_UNAVAILABLE, "application/json",
								   "{\"error\":\"unavailable\"}", 23);
	}
}

int
gw_restcall_begin(gw_restcalls *set, struct lws *wsi, gw_conn *c, size_t size,
				  int endpoint, int max_s, void **out)
{
	gw_restcall *r;

	*out = NULL;
	if (!gw.started || gw.stopping)
		return gw_restcall_refuse(wsi, c, HTTP_STATUS_SERVICE_UNAVAILABLE);
	r = calloc(1, size);
	if (r == NULL)
		return 1;
	r->set = set;
	r->wsi = wsi;
	r->c = c;
	r->endpoint = endpoint;
	lws_dll2_add_tail(&r->in_calls, &set->calls);
	lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, max_s);
	c->http_call = r;
	*out = r;
	return 0;
}

void
gw_restcall_answer(gw_restcall *r, unsigned status, char *body, size_t len)
{
	/*
	 * One answer per call: a second would leak the first body and count
	 * the call twice, so it is dropped (not logged: every record of the
	 * log has its row in docs/gateway.md, and this is a route's bug, not
	 * an operator's event).  The engine has no unit test: it needs lws,
	 * the pool and core/http.c.
	 */
	if (r->answered)
	{
		free(body);
		return;
	}
	if (r->set->ended != NULL)
		r->set->ended(r);
	if (r->call != NULL)
	{
		gw_db_cancel(r->call);
		r->call = NULL;
	}
	r->answered = true;
	r->status = status;
	r->body = body;
	r->len = body != NULL ? len : 0;
	r->set->counted(r->endpoint, status);
	lws_callback_on_writable(r->wsi);
}

void
gw_restcall_error(gw_restcall *r, unsigned status, const char *code)
{
	char	   *body = malloc(64);
	int			n = body != NULL ? snprintf(body, 64, "{\"error\":\"%s\"}", code) : 0;

	gw_restcall_answer(r, status, body, n > 0 ? (size_t) n : 0);
}

bool
gw_restcall_submit(gw_restcall *r, const char *sql, int nparams, const char *const *params,
				   gw_db_cb done)
{
	r->call = gw_db_submit(gw.db, sql, nparams, params, done, r);
	if (r->call == NULL)
		gw_restcall_error(r, 503, "unavailable");
	return r->call != NULL;
}

/* A call's end: out of the list, its answer's body and itself freed. */
static void
release(gw_restcall *r)
{
	lws_dll2_remove(&r->in_calls);
	free(r->body);
	free(r);
}

int
gw_restcall_writeable(struct lws *wsi, gw_conn *c)
{
	gw_restcall *r = c->http_call;
	int			status;

	if (r == NULL || !r->answered)
		return 0;
	c->http_call = NULL;
	/* headers now, the body at the next writeable (core/http.c) */
	status = gw_http_respond(wsi, c, r->status, "application/json",
							 r->body != NULL ? r->body : "", r->len);
	release(r);
	return status;
}

void
gw_restcall_closed(gw_conn *c)
{
	gw_restcall *r = c->http_call;

	if (r == NULL)
		return;
	c->http_call = NULL;
	if (r->set->ended != NULL)
		r->set->ended(r);
	if (r->call != NULL)
		gw_db_cancel(r->call);
	release(r);
}

int
gw_restcalls_pending(const gw_restcalls *set)
{
	return (int) set->calls.count;	/* a call leaves the list as its headers go */
}

void
gw_restcalls_forget(gw_restcalls *set)
{
	lws_dll2_t *d;

	for (d = set->calls.head; d != NULL; d = d->next)
		lws_container_of(d, gw_restcall, in_calls)->call = NULL;
}
