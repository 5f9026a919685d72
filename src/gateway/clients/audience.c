/*
 * clients/audience.c
 *		The audience of a thread, asked of the seam (see audience.h).
 *
 * Why the node names itself: until then a node sent all its persons, in
 * parts of 1,000, at every delivery, so one event cost the database and
 * the node a step per person connected here, member or not, and every
 * node paid it for every event: with 5,000 unrelated persons per node an
 * event cost the database 1.7 to 2.0 times what it cost with 500, and
 * each node 4.5 times (docs/performance.md, "The audience in the
 * database").  Now the database intersects the audience with the
 * bindings of this node's devices, and a node the signal's reach leaves
 * out asks nothing (clients/deliver.c).
 */
#include <stdlib.h>
#include <string.h>

#include "clients/audience.h"
#include "clients/stats.h"
#include "core/db.h"
#include "core/listener.h"
#include "core/node.h"
#include "core/uuidlist.h"
#include "logline.h"

/* A hint's call: the thread's place, then the recipient if admitted. */
static const char sql_recipient[] =
"SELECT bothy.thread_place($1::uuid)::text, "
"(SELECT string_agg(p::text, ',') FROM bothy.thread_audience($1::uuid, ARRAY[$2::uuid]) AS p)";

struct gw_audience_call
{
	gw_audience_answer answer;
	void	   *arg;
	gw_db_call *call;
};

/* The persons of the answer: its one row's last column (NULL: none). */
static bool
read_admitted(const PGresult *res, bothy_uuid **admitted, size_t *n)
{
	int			col = PQnfields(res) - 1;

	*admitted = NULL;
	*n = 0;
	if (PQntuples(res) != 1 || col < 0)
		return false;
	return PQgetisnull(res, 0, col) || gw_parse_uuid_list(PQgetvalue(res, 0, col), admitted, n);
}

static void
answered(void *arg, gw_db_result result, const PGresult *res)
{
	gw_audience_call *a = arg;
	bothy_uuid *admitted = NULL;
	size_t		n = 0;
	bool		ok = false;

	if (result == GW_DB_OK)
	{
		ok = read_admitted(res, &admitted, &n);
		if (!ok)
			gw_log(GW_LOG_ERROR, "thread audience answer not understood");
	}
	if (!ok)
		gw_clients_stats.audience_failures++;
	a->answer(a->arg, ok, result == GW_DB_TIMEOUT ? NULL : res, admitted, n);
	free(admitted);
	free(a);
}

/* Queues sql with its text params; NULL (counted as failed) when it cannot. */
static gw_audience_call *
submit(const char *sql, int nparams, const char *const *params, uint64_t fence,
	   gw_audience_answer answer, void *arg)
{
	gw_db_param p[GW_DB_MAX_PARAMS];
	gw_audience_call *a = malloc(sizeof(*a));
	int			k;

	if (a == NULL)
		return NULL;
	for (k = 0; k < nparams; k++)
	{
		p[k].value = params[k];
		p[k].length = -1;
	}
	a->answer = answer;
	a->arg = arg;
	a->call = gw_db_submit_read(gw.db, fence, sql, nparams, p, answered, a);
	if (a->call == NULL)
	{
		free(a);
		gw_clients_stats.audience_failures++;
		return NULL;
	}
	gw_clients_stats.audience_queries++;
	return a;
}

gw_audience_call *
gw_audience_ask_here(const char *sql, int nparams, const char *const *params,
					 const bothy_uuid *thread, uint64_t fence, gw_audience_answer answer,
					 void *arg)
{
	const char *all[GW_DB_MAX_PARAMS];
	char		thread_text[BOTHY_UUID_STRLEN + 1],
				node_text[BOTHY_UUID_STRLEN + 1];

	if (nparams < 0 || nparams + 2 > GW_DB_MAX_PARAMS)
		return NULL;
	if (nparams > 0)
		memcpy(all, params, (size_t) nparams * sizeof(*all));
	bothy_uuid_format(thread, thread_text);
	bothy_uuid_format(&gw.id, node_text);
	all[nparams] = thread_text;
	all[nparams + 1] = node_text;
	return submit(sql, nparams + 2, all, fence, answer, arg);
}

gw_audience_call *
gw_audience_ask_recipient(const bothy_uuid *thread, const bothy_uuid *recipient,
						  gw_audience_answer answer, void *arg)
{
	char		thread_text[BOTHY_UUID_STRLEN + 1],
				recipient_text[BOTHY_UUID_STRLEN + 1];
	const char *params[2] = {thread_text, recipient_text};

	bothy_uuid_format(thread, thread_text);
	bothy_uuid_format(recipient, recipient_text);
	/* from the signal's hook: its fence */
	return submit(sql_recipient, 2, params, gw_listener_fence(), answer, arg);
}

void
gw_audience_cancel(gw_audience_call *a)
{
	if (a == NULL)
		return;
	gw_db_cancel(a->call);
	free(a);
}

bool
gw_audience_place(const PGresult *res, bothy_uuid *buf, const bothy_uuid **place)
{
	const char *p;

	*place = NULL;
	if (PQnfields(res) < 2)
		return false;
	if (PQgetisnull(res, 0, 0))
		return true;
	p = PQgetvalue(res, 0, 0);
	if (!bothy_uuid_parse(p, strlen(p), buf))
	{
		gw_log(GW_LOG_ERROR, "thread audience answer not understood");
		return false;
	}
	*place = buf;
	return true;
}
