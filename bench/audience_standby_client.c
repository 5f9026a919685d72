/*
 * bench/audience_standby_client.c
 *		The client of bench/audience_standby: asks a thread's audience about
 *		a node's persons the way a gateway does (audience_ask.c: the
 *		gateway's statement, its binary sorted uuid[] in a head of 64 and
 *		parts of at most 1,000) of a primary and of its hot standby, the
 *		same data, side by side, and prints what each backend spent.
 *
 *   audience_standby_client ROUNDS DELIVERIES PRIMARY STANDBY CASE...
 *   PRIMARY, STANDBY: libpq connection strings; CASE: label:thread:persons_table
 *
 * Each round runs DELIVERIES deliveries on each server, the servers in a
 * new order each round; the backend's CPU comes from /proc/PID/schedstat
 * (nanoseconds on a CPU) of the one connection to each server.  Prints the
 * medians over the rounds of the CPU per delivery on each, per person asked
 * and per person admitted, and of the standby's CPU against the primary's
 * in the same round.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "audience_ask.h"
#include "uuid_lists.h"
#include "uuid.h"

#define MAX_ROUNDS 64
#define SQL AUDIENCE_PART_SQL("bothy.thread_audience")

typedef struct server
{
	const char *name;
	PGconn	   *pg;
	int			backend;
} server;

static void
run_case(server *servers, const char *spec, int rounds, int deliveries)
{
	char		label[128],
				thread[BOTHY_UUID_STRLEN + 1],
				table[64];
	bothy_uuid *persons;
	size_t		n,
				admitted[2];
	double		cpu[2][MAX_ROUNDS],
				ratio[MAX_ROUNDS];

	if (sscanf(spec, "%127[^:]:%36[^:]:%63s", label, thread, table) != 3)
		audience_die("a case is label:thread:persons_table", NULL);
	persons = audience_load_persons(servers[0].pg, table, &n);
	if (persons == NULL)
		audience_die("out of memory", NULL);
	bench_uuid_sort(persons, n);	/* as the gateway sends them */
	for (int s = 0; s < 2; s++)	/* warm: plans, caches, the buffer pool */
		admitted[s] = audience_deliver(servers[s].pg, SQL, true, thread, persons, n);
	if (admitted[0] != admitted[1])
		audience_die("the primary and the standby admit different persons", NULL);
	for (int r = 0; r < rounds; r++)
	{
		for (int k = 0; k < 2; k++)
		{
			server	   *s = &servers[(k + r) % 2];	/* each round starts on the other */
			double		c0 = audience_cpu_ms(s->backend);

			for (int d = 0; d < deliveries; d++)
				audience_deliver(s->pg, SQL, true, thread, persons, n);
			cpu[(k + r) % 2][r] = (audience_cpu_ms(s->backend) - c0) / deliveries;
		}
		ratio[r] = cpu[1][r] / cpu[0][r];
	}
	{
		double		p = audience_median(cpu[0], rounds),
					s = audience_median(cpu[1], rounds),
					q = audience_median(ratio, rounds);

		printf("%s: %zu persons asked, %zu admitted per delivery\n", label, n, admitted[0]);
		printf("  primary %8.3f ms a delivery  %6.3f us a person asked  %6.3f us a person admitted\n",
			   p, p * 1e3 / n, admitted[0] ? p * 1e3 / admitted[0] : 0);
		printf("  standby %8.3f ms a delivery  %6.3f us a person asked  %6.3f us a person admitted\n",
			   s, s * 1e3 / n, admitted[0] ? s * 1e3 / admitted[0] : 0);
		printf("  standby / primary %.2f (median of the rounds' ratios)\n", q);
	}
	free(persons);
}

int
main(int argc, char **argv)
{
	server		servers[2] = {{.name = "primary"}, {.name = "standby"}};
	int			rounds,
				deliveries;

	if (argc < 6 || (rounds = atoi(argv[1])) < 1 || rounds > MAX_ROUNDS || (deliveries = atoi(argv[2])) < 1)
	{
		fprintf(stderr, "usage: audience_standby_client ROUNDS(1..%d) DELIVERIES PRIMARY STANDBY label:thread:table...\n",
				MAX_ROUNDS);
		return 2;
	}
	for (int s = 0; s < 2; s++)
	{
		PGresult   *res;

		servers[s].pg = PQconnectdb(argv[3 + s]);
		if (PQstatus(servers[s].pg) != CONNECTION_OK)
			audience_die(servers[s].name, servers[s].pg);
		res = PQexec(servers[s].pg, "SELECT pg_backend_pid(), pg_is_in_recovery()");
		if (PQresultStatus(res) != PGRES_TUPLES_OK ||
			strcmp(PQgetvalue(res, 0, 1), s == 0 ? "f" : "t") != 0)
			audience_die(s == 0 ? "the primary is in recovery" : "the standby is not in recovery", servers[s].pg);
		servers[s].backend = atoi(PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	for (int i = 5; i < argc; i++)
		run_case(servers, argv[i], rounds, deliveries);
	for (int s = 0; s < 2; s++)
		PQfinish(servers[s].pg);
	return 0;
}
