/*
 * bench/audience_ask.h
 *		Asking a thread's audience the way a gateway does, shared by the
 *		clients of bench/seam_audience and bench/audience_standby: until
 *		0.3.0's admission by node, all the node's persons, a head of 64
 *		persons, then parts of at most 1,000, the lists built by the
 *		gateway's own core/uuidlist.c; since, one call naming the node
 *		(clients/audience.h, GW_AUDIENCE_HERE_COLUMN).
 */
#ifndef BENCH_AUDIENCE_ASK_H
#define BENCH_AUDIENCE_ASK_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

#include "clients/audience.h"
#include "uuid.h"

#define AUDIENCE_HEAD 64		/* GW_AUDIENCE_FIRST */
#define AUDIENCE_PART 1000		/* GW_AUDIENCE_PART */

/* The statement of one part through the audience function FN. */
#define AUDIENCE_PART_SQL(fn) "SELECT (SELECT string_agg(p::text, ',') FROM " fn "($1::uuid, $2::uuid[]) AS p)"

/*
 * The statement of a delivery that names the node (the gateway since
 * 0.3.0's admission by node: one call, runs.c and typing.c's column).
 */
#define AUDIENCE_HERE_SQL "SELECT " GW_AUDIENCE_HERE_COLUMN("$1", "$2")

void		audience_die(const char *what, PGconn *pg);

/* The persons of a table, in its physical order (the hub's is a hash's: as random). */
bothy_uuid *audience_load_persons(PGconn *pg, const char *table, size_t *n);

/* One delivery to N persons by SQL (the list binary or as a text literal); the admitted count. */
size_t		audience_deliver(PGconn *pg, const char *sql, bool binary, const char *thread,
							 const bothy_uuid *persons, size_t n);

/* One delivery naming the node (AUDIENCE_HERE_SQL); the admitted count. */
size_t		audience_deliver_here(PGconn *pg, const char *thread, const char *node);

/* The CPU a process (a backend) has used, in ms (bench/schedstat.h). */
double		audience_cpu_ms(int pid);

/* The median of N values (sorts them in place). */
double		audience_median(double *v, int n);

#endif
