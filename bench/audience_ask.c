/*
 * bench/audience_ask.c
 *		Asking a thread's audience the way a gateway does (audience_ask.h):
 *		the code the benches of the audience share, so that they ask alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audience_ask.h"
#include "core/uuidlist.h"
#include "uuid_lists.h"
#include "schedstat.h"

void
audience_die(const char *what, PGconn *pg)
{
	fprintf(stderr, "audience bench: %s: %s\n", what, pg != NULL ? PQerrorMessage(pg) : "");
	exit(1);
}

bothy_uuid *
audience_load_persons(PGconn *pg, const char *table, size_t *n)
{
	char		sql[256];
	PGresult   *res;
	bothy_uuid *out;
	size_t		i;

	snprintf(sql, sizeof(sql), "SELECT person::text FROM %s", table);
	res = PQexec(pg, sql);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		audience_die("reading the persons", pg);
	*n = (size_t) PQntuples(res);
	out = malloc(*n * sizeof(*out));
	for (i = 0; out != NULL && i < *n; i++)
		if (!bothy_uuid_parse(PQgetvalue(res, (int) i, 0), BOTHY_UUID_STRLEN, &out[i]))
			audience_die("a person is not a UUID", NULL);
	PQclear(res);
	return out;
}

/* The persons an audience call's one row lists, comma-separated. */
static size_t
listed(PGconn *pg, PGresult *res)
{
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		audience_die("the audience call", pg);
	if (PQgetisnull(res, 0, 0))
		return 0;
	return (strlen(PQgetvalue(res, 0, 0)) + 1) / (BOTHY_UUID_STRLEN + 1);
}

/* One call with the persons of a part; the admitted count into *admitted. */
static void
ask_part(PGconn *pg, const char *sql, bool binary, const char *thread, const bothy_uuid *persons,
		 size_t n, size_t *admitted)
{
	const char *values[2] = {thread, NULL};
	int			lengths[2] = {0, 0},
				formats[2] = {0, binary ? 1 : 0};
	char	   *list;
	PGresult   *res;

	if (binary)
		list = bench_uuid_array_binary(persons, n, &lengths[1]);
	else
		list = gw_uuid_array_literal(persons, n);
	if (list == NULL)
		audience_die("out of memory", NULL);
	values[1] = list;
	res = PQexecParams(pg, sql, 2, NULL, values, lengths, formats, 0);
	*admitted += listed(pg, res);
	PQclear(res);
	free(list);
}

/* The head, then the rest in parts of nearly equal size, as clients/audience.c splits. */
size_t
audience_deliver(PGconn *pg, const char *sql, bool binary, const char *thread,
				 const bothy_uuid *persons, size_t n)
{
	size_t		admitted = 0,
				first = n < AUDIENCE_HEAD ? n : AUDIENCE_HEAD,
				rest = n - first,
				more = (rest + AUDIENCE_PART - 1) / AUDIENCE_PART,
				from = first,
				i;

	ask_part(pg, sql, binary, thread, persons, first, &admitted);
	for (i = 0; i < more; i++)
	{
		size_t		count = rest / more + (i < rest % more ? 1 : 0);

		ask_part(pg, sql, binary, thread, persons + from, count, &admitted);
		from += count;
	}
	return admitted;
}

size_t
audience_deliver_here(PGconn *pg, const char *thread, const char *node)
{
	const char *values[2] = {thread, node};
	PGresult   *res = PQexecParams(pg, AUDIENCE_HERE_SQL, 2, NULL, values, NULL, NULL, 0);
	size_t		admitted = listed(pg, res);

	PQclear(res);
	return admitted;
}

double
audience_cpu_ms(int pid)
{
	uint64_t	ns = 0;

	if (!bench_cpu_ns(pid, &ns))
		audience_die("cannot read the backend's schedstat", NULL);
	return ns / 1e6;
}

static int
by_value(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

double
audience_median(double *v, int n)
{
	qsort(v, (size_t) n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
