/*
 * terminal/rest/sessions.c
 *		Opening, attaching and ending a terminal session over REST (see
 *		rest.h).
 *
 * "Host connected" (D-M2-47-6): a control connection here, or another
 * node's counting announcement (presence.h).  An open of a host that is
 * not connected opens nothing: the answer is 409, or 403 when the host
 * is not the person's (so host IDs cannot be probed for their
 * connections).  An open or attach commits, then the node rechecks in a
 * transaction of its own with its view of the host's connection
 * (D-M2-47-27): only a passing recheck returns the token, and a failed
 * one ends the session (recheck_failed), whose end reaches the host
 * through the log tail as session.close.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/node.h"
#include "intparse.h"
#include "keys/node_keys.h"
#include "keys/token.h"
#include "logline.h"
#include "terminal/control/presence.h"
#include "terminal/rest/rest.h"
#include "terminal/send.h"

/* The grant's expiry: Unix seconds for the token, RFC 3339 for the body. */
#define EXPIRY(col) \
	"floor(extract(epoch FROM " col "))::bigint, " \
	"to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

static const char sql_owner[] =
"SELECT owner FROM bothy.terminal_host_states(ARRAY[$1::uuid])";

static const char sql_open[] =
"SELECT o.outcome, o.session, o.grant_id, " EXPIRY("o.grant_expires_at")
" FROM bothy.terminal_session_open($1::uuid, $2::uuid, $3::uuid) o";

static const char sql_attach_host[] =
"SELECT host, person FROM bothy.terminal_relay_expectation($1::uuid)";

static const char sql_attach[] =
"SELECT a.outcome, a.host, a.grant_id, " EXPIRY("a.grant_expires_at")
" FROM bothy.terminal_session_attach($1::uuid, $2::uuid, $3::uuid) a";

static const char sql_recheck[] =
"SELECT bothy.terminal_session_recheck($1::uuid, $2::uuid, $3::boolean)";

static const char sql_close[] =
"SELECT bothy.terminal_session_close($1::uuid, $2::uuid)";

/* --- the answer of a grant ------------------------------------------------ */

/* 201 with the session, its stream path and the token of its grant. */
static void
answer_grant(gw_trest *r)
{
	char		token[BOTHY_TOKEN_MAX + 1];
	char		session[BOTHY_UUID_STRLEN + 1];
	char	   *body;
	int			n;

	if (!bothy_token_mint_terminal(gw_keys(), &r->session, &r->grant, &r->person, &r->device,
								   r->expires_s, token, sizeof(token)))
	{
		gw_log(GW_LOG_ERROR, "terminal session token could not be signed");
		gw_trest_unavailable(r);
		return;
	}
	bothy_uuid_format(&r->session, session);
	body = malloc(BOTHY_TOKEN_MAX + 256);
	n = body == NULL ? -1 :
		snprintf(body, BOTHY_TOKEN_MAX + 256,
				 "{\"session\":\"%s\",\"stream\":\"/terminal/stream/%s\",\"token\":\"%s\",\"expires_at\":\"%s\"}",
				 session, session, token, r->expires_at);
	if (n < 0)
	{
		free(body);
		gw_trest_unavailable(r);
		return;
	}
	gw_trest_answer(r, 201, body, (size_t) n);
}

static void
rechecked(void *arg, gw_db_result result, const PGresult *res)
{
	gw_trest   *r = arg;
	bool		passed = false;

	r->rc.call = NULL;
	if (result != GW_DB_OK || !gw_db_bool(res, &passed))
	{
		gw_trest_unavailable(r);
		return;
	}
	if (!passed)
	{
		/* the recheck ended the session in its transaction: no token */
		gw_terminal_committed();
		gw_trest_error(r, 409, "host_unavailable");
		return;
	}
	answer_grant(r);
}

/*
 * The open or attach committed: terminal.session_open (single mode: the
 * database staged none), then the recheck with this node's view now.
 */
static void
recheck(gw_trest *r)
{
	bothy_signal sig = {0};
	char		session[BOTHY_UUID_STRLEN + 1],
				grant[BOTHY_UUID_STRLEN + 1];
	const char *params[3] = {session, grant, NULL};

	sig.kind = BOTHY_KIND_TERMINAL_SESSION_OPEN;
	sig.host_id = r->host;
	sig.session_id = r->session;
	gw_terminal_decided(&sig);
	gw_terminal_committed();
	bothy_uuid_format(&r->session, session);
	bothy_uuid_format(&r->grant, grant);
	params[2] = gw_tpresence_connected(&r->host, gw_mono_ms()) ? "true" : "false";
	(void) gw_trest_submit(r, sql_recheck, 3, params, rechecked);
}

/*
 * The grant's columns of an opened or attached row (the ID at id_col, the
 * grant, its expiry in seconds and as text): false when not as expected.
 */
static bool
read_grant(gw_trest *r, const PGresult *res, int id_col, bothy_uuid *id)
{
	long		secs;
	const char *text = PQgetvalue(res, 0, 4);

	if (!gw_db_uuid_at(res, 0, id_col, id) || !gw_db_uuid_at(res, 0, 2, &r->grant) ||
		PQgetisnull(res, 0, 3) || !bothy_parse_int(PQgetvalue(res, 0, 3), 0, LONG_MAX, &secs) ||
		PQgetisnull(res, 0, 4) || strlen(text) >= sizeof(r->expires_at))
		return false;
	r->expires_s = secs;
	strcpy(r->expires_at, text);
	return true;
}

/* The outcome of an open or attach that did not open: its answer. */
static void
refused(gw_trest *r, const char *outcome)
{
	if (strcmp(outcome, "forbidden") == 0)
		gw_trest_error(r, 403, "forbidden");
	else if (strcmp(outcome, "host_unavailable") == 0)
		gw_trest_error(r, 409, "host_unavailable");
	else if (strcmp(outcome, "not_detached") == 0 && r->rc.endpoint == GW_TREST_ATTACH)
		gw_trest_error(r, 409, "not_detached");
	else
	{
		gw_log(GW_LOG_ERROR, "terminal session answer not understood");
		gw_trest_unavailable(r);
	}
}

/* One row of an open or attach: the grant, or the outcome's answer. */
static void
granted(gw_trest *r, gw_db_result result, const PGresult *res, bothy_uuid *id)
{
	const char *outcome;

	r->rc.call = NULL;
	if (result != GW_DB_OK || PQntuples(res) != 1 || PQnfields(res) != 5 || PQgetisnull(res, 0, 0))
	{
		gw_trest_unavailable(r);
		return;
	}
	outcome = PQgetvalue(res, 0, 0);
	if (strcmp(outcome, "opened") != 0 && strcmp(outcome, "attached") != 0)
	{
		refused(r, outcome);
		return;
	}
	if (!read_grant(r, res, 1, id))
	{
		gw_log(GW_LOG_ERROR, "terminal session answer not understood");
		gw_trest_unavailable(r);
		return;
	}
	recheck(r);
}

/* --- POST /v1/terminal/sessions -------------------------------------------- */

static void
opened(void *arg, gw_db_result result, const PGresult *res)
{
	gw_trest   *r = arg;

	granted(r, result, res, &r->session);
}

/* The host is not connected: 409 for the person's own host, else 403. */
static void
owner_read(void *arg, gw_db_result result, const PGresult *res)
{
	gw_trest   *r = arg;
	bothy_uuid	owner;

	r->rc.call = NULL;
	if (result != GW_DB_OK || PQnfields(res) != 1)
		gw_trest_unavailable(r);
	else if (PQntuples(res) == 1 && gw_db_uuid_at(res, 0, 0, &owner) &&
			 bothy_uuid_compare(&owner, &r->person) == 0)
		gw_trest_error(r, 409, "host_unavailable");
	else
		gw_trest_error(r, 403, "forbidden");
}

/* {"host":UUID}, strictly: one object, that member alone. */
static bool
parse_open(const char *body, size_t len, bothy_uuid *host)
{
	json_error_t jerr;
	json_t	   *root = body != NULL ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
	json_t	   *v = root != NULL ? json_object_get(root, "host") : NULL;
	bool		ok = json_is_object(root) && json_object_size(root) == 1 && json_is_string(v) &&
		bothy_uuid_parse(json_string_value(v), json_string_length(v), host);

	json_decref(root);
	return ok;
}

void
gw_trest_open(gw_trest *r, const char *body, size_t len)
{
	char		person[BOTHY_UUID_STRLEN + 1],
				device[BOTHY_UUID_STRLEN + 1],
				host[BOTHY_UUID_STRLEN + 1];
	const char *params[3] = {person, device, host};

	if (!parse_open(body, len, &r->host))
	{
		gw_trest_error(r, 400, "bad_request");
		return;
	}
	bothy_uuid_format(&r->person, person);
	bothy_uuid_format(&r->device, device);
	bothy_uuid_format(&r->host, host);
	if (gw_tpresence_connected(&r->host, gw_mono_ms()))
		(void) gw_trest_submit(r, sql_open, 3, params, opened);
	else
		(void) gw_trest_submit(r, sql_owner, 1, params + 2, owner_read);
}

/* --- POST /v1/terminal/sessions/<id>/attach --------------------------------- */

static void
attached(void *arg, gw_db_result result, const PGresult *res)
{
	gw_trest   *r = arg;

	granted(r, result, res, &r->host);
}

static void
do_attach(gw_trest *r)
{
	char		person[BOTHY_UUID_STRLEN + 1],
				device[BOTHY_UUID_STRLEN + 1],
				session[BOTHY_UUID_STRLEN + 1];
	const char *params[3] = {person, device, session};

	bothy_uuid_format(&r->person, person);
	bothy_uuid_format(&r->device, device);
	bothy_uuid_format(&r->session, session);
	(void) gw_trest_submit(r, sql_attach, 3, params, attached);
}

/*
 * The session's host, read first: an attach of the person's session
 * whose host is not connected is 409 and leaves the session detached (a
 * recheck would end it).  Anything else is the attach's to answer.
 */
static void
attach_host_read(void *arg, gw_db_result result, const PGresult *res)
{
	gw_trest   *r = arg;
	bothy_uuid	host,
				person;

	r->rc.call = NULL;
	if (result != GW_DB_OK || PQnfields(res) != 2)
	{
		gw_trest_unavailable(r);
		return;
	}
	if (PQntuples(res) == 1 && gw_db_uuid_at(res, 0, 0, &host) &&
		gw_db_uuid_at(res, 0, 1, &person) && bothy_uuid_compare(&person, &r->person) == 0 &&
		!gw_tpresence_connected(&host, gw_mono_ms()))
	{
		gw_trest_error(r, 409, "host_unavailable");
		return;
	}
	do_attach(r);
}

/* No body, or an empty JSON object. */
static bool
empty_body(const char *body, size_t len)
{
	json_error_t jerr;
	json_t	   *root;
	bool		ok;

	if (len == 0)
		return true;
	root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	ok = json_is_object(root) && json_object_size(root) == 0;
	json_decref(root);
	return ok;
}

void
gw_trest_attach(gw_trest *r, const char *body, size_t len)
{
	char		session[BOTHY_UUID_STRLEN + 1];
	const char *params[1] = {session};

	if (!empty_body(body, len))
	{
		gw_trest_error(r, 400, "bad_request");
		return;
	}
	bothy_uuid_format(&r->session, session);
	(void) gw_trest_submit(r, sql_attach_host, 1, params, attach_host_read);
}

/* --- DELETE /v1/terminal/sessions/<id> ------------------------------------ */

static void
deleted(void *arg, gw_db_result result, const PGresult *res)
{
	gw_trest   *r = arg;
	const char *outcome;

	r->rc.call = NULL;
	if (result != GW_DB_OK || PQntuples(res) != 1 || PQnfields(res) != 1 || PQgetisnull(res, 0, 0))
	{
		gw_trest_unavailable(r);
		return;
	}
	outcome = PQgetvalue(res, 0, 0);
	if (strcmp(outcome, "closed") == 0)
		gw_terminal_committed();
	if (strcmp(outcome, "closed") == 0 || strcmp(outcome, "already_closed") == 0)
		gw_trest_answer(r, 204, NULL, 0);
	else if (strcmp(outcome, "forbidden") == 0)
		gw_trest_error(r, 403, "forbidden");
	else
	{
		gw_log(GW_LOG_ERROR, "terminal session answer not understood");
		gw_trest_unavailable(r);
	}
}

void
gw_trest_delete(gw_trest *r)
{
	char		person[BOTHY_UUID_STRLEN + 1],
				session[BOTHY_UUID_STRLEN + 1];
	const char *params[2] = {person, session};

	bothy_uuid_format(&r->person, person);
	bothy_uuid_format(&r->session, session);
	(void) gw_trest_submit(r, sql_close, 2, params, deleted);
}
