/*
 * clients/audience.c
 *		The audience of a thread, asked of the seam in parts (see
 *		audience.h).
 *
 * Why parts: one call for 5,000 persons took the database 5 to 20 ms
 * (two nodes asking at once on two cores), and nothing went out before
 * it answered; the first receipt of a run update came 50 to 60 ms after
 * its commit.  With a small first part the first frames leave after a
 * call of a few persons, and each later part is delivered while the
 * database reads the next (docs/performance.md, "Fan-out across two
 * nodes").
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

/* The head of typing and hints: the thread's place, then the persons. */
static const char sql_place[] =
"SELECT bothy.thread_place($1::uuid)::text, " GW_AUDIENCE_COLUMN("$1", "$2");

/* A part after the head: the persons admitted, nothing else. */
static const char sql_part[] =
"SELECT " GW_AUDIENCE_COLUMN("$1", "$2");

typedef struct part
{
	gw_audience_call *owner;
	gw_db_call *call;			/* in flight, or NULL */
} part;

struct gw_audience_call
{
	const gw_audience_ops *ops;
	void	   *arg;
	char		thread[BOTHY_UUID_STRLEN + 1];
	uint64_t	fence;			/* of the signals delivered; 0: the primary reads */
	bothy_uuid *rest;			/* the persons after the first part, until it answered */
	size_t		nrest;
	int			pending;		/* calls not answered */
	int			failed;
	int			nparts;
	part		parts[];		/* [0] is the head */
};

/* The persons of a part's answer: its one row's last column (NULL: none). */
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

static void answered(void *arg, gw_db_result result, const PGresult *res);

/*
 * Queues part i: sql with the nfixed text params (the thread last) and
 * the persons after them, as a binary uuid[] (it spares the server about
 * 0.6 us a person against the text literal).  False (counted as failed)
 * when it could not be queued.
 */
static bool
submit(gw_audience_call *a, int i, const char *sql, int nfixed, const char *const *fixed,
	   const bothy_uuid *persons, size_t count)
{
	gw_db_param params[GW_DB_MAX_PARAMS];
	int			len = 0,
				k;
	char	   *list = gw_uuid_array_binary(persons, count, &len);

	a->parts[i].owner = a;
	a->parts[i].call = NULL;
	if (list != NULL)
	{
		for (k = 0; k < nfixed; k++)
		{
			params[k].value = fixed[k];
			params[k].length = -1;
		}
		params[nfixed].value = list;
		params[nfixed].length = len;
		a->parts[i].call = gw_db_submit_read(gw.db, a->fence, sql, nfixed + 1, params, answered,
											 &a->parts[i]);
		free(list);
	}
	if (a->parts[i].call == NULL)
	{
		a->failed++;
		gw_clients_stats.audience_failures++;
		return false;
	}
	a->pending++;
	gw_clients_stats.audience_queries++;
	return true;
}

/*
 * The head accepted: the rest in parts of nearly equal size, none above
 * GW_AUDIENCE_PART, all queued at once.
 */
static void
submit_rest(gw_audience_call *a)
{
	const char *params[1] = {a->thread};
	size_t		more = (size_t) a->nparts - 1,
				from = 0,
				i;

	for (i = 0; i < more; i++)
	{
		size_t		count = a->nrest / more + (i < a->nrest % more ? 1 : 0);

		submit(a, (int) (1 + i), sql_part, 1, params, a->rest + from, count);
		from += count;
	}
}

static void
answered(void *arg, gw_db_result result, const PGresult *res)
{
	part	   *p = arg;
	gw_audience_call *a = p->owner;
	bothy_uuid *admitted = NULL;
	size_t		n = 0;
	bool		ok = false;

	p->call = NULL;
	a->pending--;
	if (result == GW_DB_OK)
	{
		ok = read_admitted(res, &admitted, &n);
		if (!ok)
			gw_log(GW_LOG_ERROR, "thread audience answer not understood");
	}
	if (!ok)
	{
		a->failed++;
		gw_clients_stats.audience_failures++;
	}
	if (p != &a->parts[0])
	{
		if (ok)
			a->ops->part(a->arg, admitted, n);
	}
	else if (a->ops->head(a->arg, ok, result == GW_DB_TIMEOUT ? NULL : res, admitted, n) && ok)
		submit_rest(a);
	free(admitted);
	free(a->rest);
	a->rest = NULL;
	if (a->pending == 0)
	{
		a->ops->done(a->arg, a->failed);
		free(a);
	}
}

gw_audience_call *
gw_audience_ask(const char *head_sql, int nparams, const char *const *params,
				const bothy_uuid *thread, const bothy_uuid *persons, size_t n,
				uint64_t fence, const gw_audience_ops *ops, void *arg)
{
	const char *head_params[GW_DB_MAX_PARAMS];
	size_t		first = n < GW_AUDIENCE_FIRST ? n : GW_AUDIENCE_FIRST,
				nrest = n - first,
				more = (nrest + GW_AUDIENCE_PART - 1) / GW_AUDIENCE_PART;
	gw_audience_call *a;

	if (n == 0 || nparams < 0 || nparams + 2 > GW_DB_MAX_PARAMS)
		return NULL;
	a = calloc(1, sizeof(*a) + (1 + more) * sizeof(part));
	if (a == NULL)
		return NULL;
	if (nrest > 0)
	{
		a->rest = malloc(nrest * sizeof(*a->rest));
		if (a->rest == NULL)
		{
			free(a);
			return NULL;
		}
		memcpy(a->rest, persons + first, nrest * sizeof(*a->rest));
	}
	a->ops = ops;
	a->arg = arg;
	a->fence = fence;
	a->nrest = nrest;
	a->nparts = (int) (1 + more);
	bothy_uuid_format(thread, a->thread);
	if (nparams > 0)
		memcpy(head_params, params, (size_t) nparams * sizeof(*head_params));
	head_params[nparams] = a->thread;
	if (!submit(a, 0, head_sql, nparams + 1, head_params, persons, first))
	{
		free(a->rest);
		free(a);
		return NULL;
	}
	return a;
}

void
gw_audience_cancel(gw_audience_call *a)
{
	int			i;

	if (a == NULL)
		return;
	for (i = 0; i < a->nparts; i++)
		gw_db_cancel(a->parts[i].call);
	free(a->rest);
	free(a);
}

gw_audience_call *
gw_audience_ask_place(const bothy_uuid *thread, const bothy_uuid *persons, size_t n,
					  const gw_audience_ops *ops, void *arg)
{
	/* typing and hints ask from the signal's hook, or for a local event (fence 0) */
	return gw_audience_ask(sql_place, 0, NULL, thread, persons, n, gw_listener_fence(), ops, arg);
}

bool
gw_audience_place(const PGresult *res, bothy_uuid *buf, const bothy_uuid **place)
{
	const char *p;

	*place = NULL;
	if (PQnfields(res) != 2)
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
