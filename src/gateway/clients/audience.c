/*
 * clients/audience.c
 *		The audience of a thread, asked of the seam (see audience.h).
 */
#include <stdlib.h>
#include <string.h>

#include "clients/audience.h"
#include "clients/stats.h"
#include "core/db.h"
#include "core/log.h"
#include "core/node.h"
#include "core/uuidlist.h"

struct gw_audience_call
{
	gw_db_call *call;
	gw_audience_cb cb;
	void	   *arg;
};

/* One statement: the place and the admitted persons as one text each. */
static const char sql_audience[] =
"SELECT bothy.thread_place($1::uuid)::text, "
"array_to_string(ARRAY(SELECT bothy.thread_audience($1::uuid, $2::uuid[])), ',')";

static void
answered(void *arg, gw_db_result result, const PGresult *res)
{
	gw_audience_call *a = arg;
	bothy_uuid	place,
			   *admitted = NULL;
	size_t		n = 0;
	bool		ok = false,
				has_place = false;

	a->call = NULL;
	if (result == GW_DB_OK && PQntuples(res) == 1 && PQnfields(res) == 2)
	{
		const char *p = PQgetvalue(res, 0, 0);

		has_place = !PQgetisnull(res, 0, 0);
		ok = (!has_place || bothy_uuid_parse(p, strlen(p), &place)) &&
			gw_parse_uuid_list(PQgetvalue(res, 0, 1), &admitted, &n);
		if (!ok)
			gw_log(GW_LOG_ERROR, "thread audience answer not understood");
	}
	else
		gw_clients_stats.audience_failures++;
	a->cb(a->arg, ok, has_place ? &place : NULL, admitted, n);
	free(admitted);
	free(a);
}

gw_audience_call *
gw_audience_ask(const bothy_uuid *thread, const bothy_uuid *persons, size_t n,
				gw_audience_cb cb, void *arg)
{
	gw_audience_call *a = malloc(sizeof(*a));
	char		t[BOTHY_UUID_STRLEN + 1];
	char	   *list = gw_uuid_array_literal(persons, n);
	const char *params[2] = {t, list};

	if (a == NULL || list == NULL)
	{
		free(a);
		free(list);
		return NULL;
	}
	bothy_uuid_format(thread, t);
	a->cb = cb;
	a->arg = arg;
	a->call = gw_db_submit(gw.db, sql_audience, 2, params, answered, a);
	free(list);
	if (a->call == NULL)
	{
		free(a);
		return NULL;
	}
	gw_clients_stats.audience_queries++;
	return a;
}

void
gw_audience_cancel(gw_audience_call *a)
{
	if (a == NULL)
		return;
	gw_db_cancel(a->call);
	free(a);
}
