/*
 * bench/seam_audience_client.c
 *		The client of bench/seam_audience: asks the audience of a thread
 *		about a node's persons the way a gateway did until 0.3.0's admission
 *		by node (a head of 64 persons, then parts of at most 1,000, the lists
 *		built by the gateway's own core/uuidlist.c) and the way it does now
 *		(one call naming the node, clients/audience.h's column), and the
 *		reach the fan-out worker asks once per audience signal; each variant
 *		in turn, and prints what the backend spent per delivery.
 *
 *   seam_audience_client ROUNDS DELIVERIES CASE...
 *   CASE: label:thread:persons_table:node   (libpq's PG* environment)
 *
 * A variant asks through the persons' list (the 0.3.0 SQL body,
 * bench.probe_audience, or the C walk bothy.thread_audience; the list as
 * a text literal or the binary uuid[]; in the hub's order or sorted), or
 * names the node (bothy.thread_audience_on), or asks the reach
 * (bothy.thread_nodes, the worker's call: here a statement, so an upper
 * bound).  Each round runs the deliveries of every variant, the variants
 * in a new order each round: DELIVERIES, or as many more (up to 50 times)
 * as a variant cheaper than 1 ms a call needs to fill DELIVERIES ms.  The
 * backend's CPU comes from /proc/PID/schedstat of the one connection's
 * backend, before and after each variant's deliveries.  Prints the median
 * over the rounds of each variant's CPU per delivery, of its wall time, and
 * of its ratio to the first variant and to the gateway's former way in the
 * same round.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "audience_ask.h"
#include "uuid_lists.h"
#include "uuid.h"

#define MAX_ROUNDS 64

/* How a variant asks. */
typedef enum ask
{
	ASK_LIST,					/* the node's persons, in parts */
	ASK_NODE,					/* the node's ID */
	ASK_REACH					/* the thread's nodes (not a delivery) */
} ask;

typedef struct variant
{
	const char *name;
	ask			how;
	const char *sql;			/* ASK_LIST's statement */
	bool		binary;
	bool		sorted;
} variant;

#define PART_SQL(fn) AUDIENCE_PART_SQL(fn)
#define REACH_SQL "SELECT bothy.thread_nodes($1::uuid)"

static const variant variants[] = {
	{"0.3.0 body (SQL probes), text, hub order", ASK_LIST, PART_SQL("bench.probe_audience"), false, false},
	{"C walk, text, hub order", ASK_LIST, PART_SQL("bothy.thread_audience"), false, false},
	{"C walk, text, sorted", ASK_LIST, PART_SQL("bothy.thread_audience"), false, true},
	{"C walk, binary, sorted (the gateway before)", ASK_LIST, PART_SQL("bothy.thread_audience"), true, true},
	{"by node: thread_audience_on (the gateway now)", ASK_NODE, NULL, false, false},
	{"reach: thread_nodes (the worker, a signal)", ASK_REACH, NULL, false, false},
};

#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))
#define FORMER 3				/* the gateway's way until admission by node */
#define MAX_FILL 50				/* a cheap variant's deliveries: DELIVERIES times this at most */


static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The thread's reach: its nodes' count, -1 for NULL (every node asks). */
static long
reach(PGconn *pg, const char *thread)
{
	const char *values[1] = {thread};
	PGresult   *res = PQexecParams(pg, REACH_SQL, 1, NULL, values, NULL, NULL, 0);
	const char *p;
	long		nodes;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		audience_die("bothy.thread_nodes", pg);
	if (PQgetisnull(res, 0, 0))
		nodes = -1;
	else				/* {a,b,...}: one more than its commas, none in {} */
		for (p = PQgetvalue(res, 0, 0), nodes = strcmp(p, "{}") != 0; *p; p++)
			nodes += *p == ',';
	PQclear(res);
	return nodes;
}

/* One delivery of a variant (for the reach, one call): the admitted count. */
static size_t
deliver(PGconn *pg, const variant *v, const char *thread, const char *node,
		const bothy_uuid *hub, const bothy_uuid *sorted, size_t n)
{
	switch (v->how)
	{
		case ASK_LIST:
			return audience_deliver(pg, v->sql, v->binary, thread, v->sorted ? sorted : hub, n);
		case ASK_NODE:
			return audience_deliver_here(pg, thread, node);
		case ASK_REACH:
			reach(pg, thread);
			return 0;
	}
	return 0;
}

static void
print_ratio(double q, bool shown)
{
	if (shown)
		printf(" %10.2f", q);
	else
		printf(" %10s", "-");
}

static void
run_case(PGconn *pg, int backend, const char *spec, int rounds, int deliveries)
{
	char		label[128],
				thread[BOTHY_UUID_STRLEN + 1],
				table[64],
				node[BOTHY_UUID_STRLEN + 1];
	bothy_uuid *hub,
			   *sorted;
	size_t		n,
				admitted[NVARIANTS];
	int			count[NVARIANTS];
	double		cpu[NVARIANTS][MAX_ROUNDS],
				wall[NVARIANTS][MAX_ROUNDS],
				ratio[NVARIANTS][MAX_ROUNDS],
				former[NVARIANTS][MAX_ROUNDS];
	long		nodes;
	int			r;
	size_t		k;

	if (sscanf(spec, "%127[^:]:%36[^:]:%63[^:]:%36s", label, thread, table, node) != 4)
		audience_die("a case is label:thread:persons_table:node", NULL);
	hub = audience_load_persons(pg, table, &n);
	sorted = malloc(n * sizeof(*sorted));
	if (hub == NULL || sorted == NULL)
		audience_die("out of memory", NULL);
	memcpy(sorted, hub, n * sizeof(*sorted));
	bench_uuid_sort(sorted, n);
	for (k = 0; k < NVARIANTS; k++)	/* warm: plans, caches, the buffer pool */
	{
		double		t0;
		int			d;

		deliver(pg, &variants[k], thread, node, hub, sorted, n);
		t0 = now_ms();
		for (d = 0; d < 3; d++)
			admitted[k] = deliver(pg, &variants[k], thread, node, hub, sorted, n);
		count[k] = (int) (deliveries / ((now_ms() - t0) / 3 + 1e-3));
		count[k] = count[k] < deliveries ? deliveries : count[k] > MAX_FILL * deliveries ? MAX_FILL * deliveries : count[k];
	}
	for (k = 1; k < NVARIANTS; k++)
		if (variants[k].how != ASK_REACH && admitted[k] != admitted[0])
			audience_die("the variants admit different persons", NULL);
	nodes = reach(pg, thread);
	for (r = 0; r < rounds; r++)
	{
		for (k = 0; k < NVARIANTS; k++)
		{
			size_t		v = (k + (size_t) r) % NVARIANTS;	/* each round starts elsewhere */
			double		c0 = audience_cpu_ms(backend),
						t0 = now_ms();
			int			d;

			for (d = 0; d < count[v]; d++)
				deliver(pg, &variants[v], thread, node, hub, sorted, n);
			wall[v][r] = (now_ms() - t0) / count[v];
			cpu[v][r] = (audience_cpu_ms(backend) - c0) / count[v];
		}
		for (k = 0; k < NVARIANTS; k++)
		{
			ratio[k][r] = cpu[0][r] > 0 ? cpu[k][r] / cpu[0][r] : 0;
			former[k][r] = cpu[FORMER][r] > 0 ? cpu[k][r] / cpu[FORMER][r] : 0;
		}
	}
	printf("%s: %zu persons asked per delivery the former way (a head of %d, then parts of at most %d),"
		   " %zu admitted; the reach: ",
		   label, n, AUDIENCE_HEAD, AUDIENCE_PART, admitted[0]);
	if (nodes < 0)
		printf("NULL (every node asks)\n");
	else
		printf("%ld node%s\n", nodes, nodes == 1 ? "" : "s");
	printf("  %-45s %7s %14s %11s %10s %10s\n", "variant", "calls", "backend CPU ms", "wall ms",
		   "vs first", "vs former");
	for (k = 0; k < NVARIANTS; k++)
	{
		double		c = audience_median(cpu[k], rounds),
					w = audience_median(wall[k], rounds),
					q = audience_median(ratio[k], rounds),
					f = audience_median(former[k], rounds);

		printf("  %-45s %7d %14.3f %11.3f", variants[k].name, count[k], c, w);
		print_ratio(q, variants[k].how != ASK_REACH);
		print_ratio(f, variants[k].how != ASK_REACH);
		printf("\n");
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
