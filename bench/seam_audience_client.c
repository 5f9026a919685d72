/*
 * bench/seam_audience_client.c
 *		The client of bench/seam_audience: asks the audience of a thread
 *		about a node's persons the way a gateway does (a head of 64 persons,
 *		then parts of at most 1,000, the statement clients/audience.c sends,
 *		the lists built by the gateway's own core/uuidlist.c), through each
 *		variant in turn, and prints what the backend spent per delivery.
 *
 *   seam_audience_client ROUNDS DELIVERIES CASE...
 *   CASE: label:thread:persons_table   (libpq's PG* environment)
 *
 * A variant is a function (the 0.3.0 SQL body, bench.probe_audience, or
 * the default bothy.thread_audience), a form of the persons' parameter
 * (text literal or binary uuid[]) and their order (as the hub gives them,
 * or sorted).  Each round runs DELIVERIES deliveries of every variant, the
 * variants in a new order each round; the backend's CPU comes from
 * /proc/PID/stat (utime + stime) of the one connection's backend, before and
 * after each variant's deliveries.  Prints the median over the rounds of
 * each variant's CPU per delivery, of its wall time, and of its ratio to
 * the first variant of the same round.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "audience_ask.h"
#include "core/uuidlist.h"
#include "uuid.h"

#define MAX_ROUNDS 64

typedef struct variant
{
	const char *name;
	const char *sql;
	bool		binary;
	bool		sorted;
} variant;

#define PART_SQL(fn) AUDIENCE_PART_SQL(fn)

static const variant variants[] = {
	{"0.3.0 body (SQL probes), text, hub order", PART_SQL("bench.probe_audience"), false, false},
	{"C walk, text, hub order", PART_SQL("bothy.thread_audience"), false, false},
	{"C walk, text, sorted", PART_SQL("bothy.thread_audience"), false, true},
	{"C walk, binary, sorted (the gateway now)", PART_SQL("bothy.thread_audience"), true, true},
};

#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))


static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* utime + stime of a process, in ms. */
static double
cpu_ms(int pid)
{
	char		path[64],
				buf[1024],
			   *p;
	unsigned long utime,
				stime;
	FILE	   *f;
	int			field;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (f == NULL || fgets(buf, sizeof(buf), f) == NULL)
		audience_die("cannot read the backend's /proc stat", NULL);
	fclose(f);
	p = strrchr(buf, ')');		/* after the command name, which may hold spaces */
	for (field = 2; p != NULL && field < 14; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p + 1, "%lu %lu", &utime, &stime) != 2)
		audience_die("the backend's /proc stat not understood", NULL);
	return (double) (utime + stime) * 1000.0 / (double) sysconf(_SC_CLK_TCK);
}




static void
run_case(PGconn *pg, int backend, const char *spec, int rounds, int deliveries)
{
	char		label[128],
				thread[BOTHY_UUID_STRLEN + 1],
				table[64];
	bothy_uuid *hub,
			   *sorted;
	size_t		n,
				admitted[NVARIANTS];
	double		cpu[NVARIANTS][MAX_ROUNDS],
				wall[NVARIANTS][MAX_ROUNDS],
				ratio[NVARIANTS][MAX_ROUNDS];
	int			r;
	size_t		k;

	if (sscanf(spec, "%127[^:]:%36[^:]:%63s", label, thread, table) != 3)
		audience_die("a case is label:thread:persons_table", NULL);
	hub = audience_load_persons(pg, table, &n);
	sorted = malloc(n * sizeof(*sorted));
	if (hub == NULL || sorted == NULL)
		audience_die("out of memory", NULL);
	memcpy(sorted, hub, n * sizeof(*sorted));
	gw_uuid_sort(sorted, n);
	for (k = 0; k < NVARIANTS; k++)	/* warm: plans, caches, the buffer pool */
		admitted[k] = audience_deliver(pg, variants[k].sql, variants[k].binary, thread, variants[k].sorted ? sorted : hub, n);
	for (k = 1; k < NVARIANTS; k++)
		if (admitted[k] != admitted[0])
			audience_die("the variants admit different persons", NULL);
	for (r = 0; r < rounds; r++)
	{
		for (k = 0; k < NVARIANTS; k++)
		{
			size_t		v = (k + (size_t) r) % NVARIANTS;	/* each round starts elsewhere */
			double		c0 = cpu_ms(backend),
						t0 = now_ms();
			int			d;

			for (d = 0; d < deliveries; d++)
				audience_deliver(pg, variants[v].sql, variants[v].binary, thread, variants[v].sorted ? sorted : hub, n);
			wall[v][r] = (now_ms() - t0) / deliveries;
			cpu[v][r] = (cpu_ms(backend) - c0) / deliveries;
		}
		for (k = 0; k < NVARIANTS; k++)
			ratio[k][r] = cpu[0][r] > 0 ? cpu[k][r] / cpu[0][r] : 0;
	}
	printf("%s: %zu persons asked per delivery (a head of %d, then parts of at most %d), %zu admitted\n",
		   label, n, AUDIENCE_HEAD, AUDIENCE_PART, admitted[0]);
	printf("  %-44s %14s %14s %22s\n", "variant", "backend CPU ms", "wall ms", "CPU against the first");
	for (k = 0; k < NVARIANTS; k++)
	{
		double		c = audience_median(cpu[k], rounds),
					w = audience_median(wall[k], rounds),
					q = audience_median(ratio[k], rounds);

		printf("  %-44s %14.2f %14.2f %22.2f\n", variants[k].name, c, w, q);
	}
	free(hub);
	free(sorted);
}

int
main(int argc, char **argv)
{
	PGconn	   *pg;
	PGresult   *res;
	int			rounds,
				deliveries,
				backend,
				i;

	if (argc < 4 || (rounds = atoi(argv[1])) < 1 || rounds > MAX_ROUNDS ||
		(deliveries = atoi(argv[2])) < 1)
	{
		fprintf(stderr, "usage: seam_audience_client ROUNDS(1..%d) DELIVERIES label:thread:table...\n",
				MAX_ROUNDS);
		return 2;
	}
	pg = PQconnectdb("");
	if (PQstatus(pg) != CONNECTION_OK)
		audience_die("connecting", pg);
	res = PQexec(pg, "SELECT pg_backend_pid()");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		audience_die("pg_backend_pid", pg);
	backend = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	for (i = 3; i < argc; i++)
		run_case(pg, backend, argv[i], rounds, deliveries);
	PQfinish(pg);
	return 0;
}
