/*
 * clients/rest_presence.c
 *		GET /v1/agents/presence and GET /v1/presence (see rest.h).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "clients/agents.h"
#include "clients/rest_call.h"
#include "core/node.h"
#include "core/uuidlist.h"
#include "intparse.h"
#include "logline.h"

/* 200 with {key: value} (value taken); 503 when it cannot be encoded. */
static void
answer_object(gw_rest *r, const char *key, json_t *value)
{
	json_t	   *msg = value != NULL ? json_pack("{s:o}", key, value) : NULL;
	gw_text		body;

	body.data = msg != NULL ? json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(msg);
	if (body.data == NULL)
	{
		gw_rest_answer_error(r, 503, "unavailable");
		return;
	}
	body.len = strlen(body.data);
	gw_rest_answer(r, 200, &body);
}

/*
 * The query with the UUIDs the call asked for (r->ids) as its uuid[]
 * parameter ids_at; 503 when it cannot be sent.
 */
static void
submit_with_ids(gw_rest *r, const char *sql, int nparams, const char **params, int ids_at,
				gw_db_cb done)
{
	char	   *list = gw_uuid_array_literal(r->ids, r->nids);

	if (list == NULL)
	{
		gw_rest_answer_error(r, 503, "unavailable");
		return;
	}
	params[ids_at] = list;
	(void) gw_rest_submit(r, sql, nparams, params, done);
	free(list);
}

/* --- GET /v1/agents/presence --------------------------------------------- */

static const char sql_agent_status[] =
"SELECT agent::text, state, (extract(epoch FROM heartbeat_at) * 1000)::bigint "
"FROM bothy.agent_status($1::uuid[])";

/* A state code of signal.h: the only text of a stored row passed on. */
static bool
is_state(const char *text)
{
	int			i;

	for (i = 0; i < BOTHY_AGENT_STATE_COUNT; i++)
		if (strcmp(text, bothy_agent_state_code((bothy_agent_state) i)) == 0)
			return true;
	return false;
}

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
	size_t		i;

	r->rc.call = NULL;
	if (result != GW_DB_OK)
	{
		json_decref(list);
		gw_rest_answer_db_failure(r, result, res);
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
				bothy_parse_int(PQgetvalue(res, row, 2), LONG_MIN / 2, LONG_MAX / 2, &ms) &&
				is_state(PQgetvalue(res, row, 1)))
				state = PQgetvalue(res, row, 1);
		}
		if (json_array_append_new(list, agent_presence(&r->ids[i], state, ms)) != 0)
		{
			json_decref(list);
			list = NULL;
		}
	}
	answer_object(r, "agents", list);
}

void
gw_rest_agents_presence(gw_rest *r)
{
	static const arg_spec specs[] = {{"agent", ARG_UUIDS, 0, 0, true}};
	arg_values	v;
	const char *params[1];

	if (!gw_rest_admit(r, GW_REST_AGENTS_PRESENCE, BOTHY_TOKEN_PERSON_DEVICE, specs, 1, &v))
		return;
	submit_with_ids(r, sql_agent_status, 1, params, 0, status_read);
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
	bool		allowed;

	r->rc.call = NULL;
	if (result != GW_DB_OK || PQnfields(res) != 2 || !gw_db_bool_at(res, 0, &allowed))
	{
		gw_rest_answer_db_failure(r, result, res);
		return;
	}
	if (!allowed)
	{
		gw_rest_answer_error(r, 403, "forbidden");
		return;
	}
	rows = json_loads(PQgetvalue(res, 0, 1), 0, NULL);
	answer_object(r, "presence", rows);
}

void
gw_rest_presence(gw_rest *r)
{
	static const arg_spec specs[] = {
		{"thread", ARG_UUID, 0, 0, true},
		{"person", ARG_UUIDS, 0, 0, true},
	};
	arg_values	v;
	char		thread[BOTHY_UUID_STRLEN + 1],
				caller[BOTHY_UUID_STRLEN + 1];
	const char *params[3] = {thread, NULL, caller};

	if (!gw_rest_admit(r, GW_REST_PRESENCE, BOTHY_TOKEN_PERSON_DEVICE, specs, 2, &v))
		return;
	bothy_uuid_format(&v.uuid[0], thread);
	bothy_uuid_format(&r->principal, caller);
	submit_with_ids(r, sql_presence, 3, params, 1, presence_read);
}

