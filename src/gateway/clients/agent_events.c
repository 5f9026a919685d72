/*
 * clients/agent_events.c
 *		Reading an agent's events for its holder (see agent_events.h).
 */
#include <limits.h>
#include <stdio.h>

#include "clients/agent_events.h"
#include "core/node.h"
#include "intparse.h"
#include "logline.h"

static const char sql_events[] =
"SELECT id, type, data::text, (extract(epoch FROM created_at) * 1000)::bigint "
"FROM bothy.agent_events_after($1::uuid, $2::uuid, $3::bigint, $4::integer)";

gw_db_call *
gw_agent_events_read(const bothy_uuid *agent, const bothy_uuid *holder, int64_t after,
					 int max, gw_db_cb cb, void *arg)
{
	char		a[BOTHY_UUID_STRLEN + 1],
				h[BOTHY_UUID_STRLEN + 1],
				after_text[24],
				max_text[16];
	const char *params[4] = {a, h, after_text, max_text};

	bothy_uuid_format(agent, a);
	bothy_uuid_format(holder, h);
	snprintf(after_text, sizeof(after_text), "%lld", (long long) after);
	snprintf(max_text, sizeof(max_text), "%d", max);
	return gw_db_submit(gw.db, sql_events, 4, params, cb, arg);
}

bool
gw_agent_event_row_get(const PGresult *res, int i, int64_t after, gw_agent_event_row *row)
{
	long		id,
				created;

	if (PQnfields(res) != 4 ||
		!bothy_parse_int(PQgetvalue(res, i, 0), 1, INT64_C(9007199254740991), &id) ||
		!bothy_parse_int(PQgetvalue(res, i, 3), LONG_MIN / 2, LONG_MAX / 2, &created) ||
		id <= after)
	{
		gw_log(GW_LOG_ERROR, "agent events answer not understood");
		return false;
	}
	row->id = id;
	row->type = PQgetvalue(res, i, 1);
	row->data = PQgetvalue(res, i, 2);
	row->created_at_ms = created;
	return true;
}
