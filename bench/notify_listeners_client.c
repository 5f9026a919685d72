/*
 * bench/notify_listeners_client.c
 *		The client of bench/notify_listeners: N libpq connections LISTEN on
 *		ephemeral while producers send signals at a fixed rate, one
 *		transaction each, and prints what one case cost (docs/scaling.md).
 *
 *   notify_listeners_client PATH LISTENERS RATE BYTES SECONDS [FREEZE_AT FREEZE_FOR]
 *   PATH: bothy   SELECT bothy.publish($1), a gateway.run signal of 188 bytes
 *                 (BYTES must be 188: the codec admits no padding, signals.md)
 *         bothy/K the same, K signals per producer transaction (RATE counts
 *                 signals): the worker's batches grow, and a listener's cost
 *                 splits into its cost per wake and per further signal
 *         notify  SELECT pg_notify('ephemeral', $1) from a plain session, the
 *                 same 188 bytes, or a padded payload of BYTES bytes
 *   (libpq's PG* environment; the fan-out worker found in pg_stat_activity)
 *
 * Every payload carries its sequence number in "version", so each listener
 * knows which signal it received.  Latency is from the producer's call to
 * the receipt at the slowest listener (the producer's call-to-commit time
 * is printed beside it: the commit lies between the two).  CPU comes from
 * /proc/PID/schedstat (nanoseconds on the CPU) of each listening backend,
 * of the fan-out worker and of the producers' backends, between the first
 * send and the last receipt.  With FREEZE_AT, listener 0 stops reading its
 * socket FREEZE_AT seconds into the run for FREEZE_FOR seconds (its
 * backend's socket fills, then the backend stops advancing in the queue),
 * and the latencies of the others are printed per phase.
 *
 * The output is one line of KEY=VALUE pairs for the driver to format.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <libpq-fe.h>

#include "schedstat.h"

#define MAX_LISTENERS 64
#define PRODUCERS 2
#define SAMPLE_EVERY 0.1		/* seconds between queue-usage samples */
#define DRAIN_LIMIT 10.0		/* seconds to wait for stragglers after the last send */
#define VERSION_BASE UINT64_C(1000000000000000)	/* 16 digits: the run payload is 188 bytes */

typedef struct sent
{
	double		call;			/* the producer's PQsendQueryParams */
	double		commit;			/* its result came back */
	double		slowest;		/* the latest receipt among the counted listeners */
	int			received;		/* receipts among the counted listeners */
} sent;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
die(const char *what, PGconn *pg)
{
	fprintf(stderr, "notify_listeners_client: %s: %s\n", what, pg != NULL ? PQerrorMessage(pg) : "");
	exit(1);
}

/* Nanoseconds PID has run on a CPU. */
static uint64_t
cpu_ns(int pid)
{
	uint64_t	ns = 0;

	if (!bench_cpu_ns(pid, &ns))
		die("cannot read a backend's schedstat (same machine, same user?)", NULL);
	return ns;
}

static PGconn *
connect_one(void)
{
	PGconn	   *pg = PQconnectdb("");

	if (PQstatus(pg) != CONNECTION_OK)
		die("connect", pg);
	return pg;
}

/* The fan-out worker's transactions so far (bothy.metrics(), sql-api.md). */
static uint64_t
fanout_batches(PGconn *admin)
{
	PGresult   *r = PQexec(admin, "SELECT coalesce(sum(value) FILTER (WHERE metric = 'fanout_batches'), 0)::bigint FROM bothy.metrics()");
	uint64_t	n;

	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
		die("bothy.metrics()", admin);
	n = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return n;
}

static void
command(PGconn *pg, const char *sql)
{
	PGresult   *r = PQexec(pg, sql);

	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		die(sql, pg);
	PQclear(r);
}

/*
 * The payload of signal SEQ: a valid gateway.run (a distinct run each, so
 * the worker coalesces nothing), or for the padded sizes a kind outside
 * gateway. and terminal., which a node ignores (signals.md, "Decoding").
 */
static int
payload(char *out, size_t cap, uint64_t seq, int bytes)
{
	int			n;

	if (bytes == 188)
		return snprintf(out, cap,
						"{\"kind\":\"gateway.run\",\"node\":\"01890a5d-ac96-774b-bcce-b302099a8057\","
						"\"run\":\"33333333-3333-4333-8333-%012" PRIx64 "\","
						"\"thread\":\"11111111-1111-4111-8111-111111111111\",\"version\":%" PRIu64 "}",
						seq, VERSION_BASE + seq);
	n = snprintf(out, cap, "{\"kind\":\"bench.pad\",\"version\":%" PRIu64 ",\"pad\":\"", VERSION_BASE + seq);
	while (n < bytes - 2)
		out[n++] = 'x';
	out[n++] = '"';
	out[n++] = '}';
	out[n] = '\0';
	return n;
}

static bool
idle_producer(const int *inflight_seq)
{
	for (int p = 0; p < PRODUCERS; p++)
		if (inflight_seq[p] < 0)
			return true;
	return false;
}

/* K payloads from SEQ on as a text[] literal: each element quoted, its quotes escaped. */
static void
payload_list(char *out, size_t cap, uint64_t seq, int k)
{
	char		one[512];
	size_t		n = 0;

	out[n++] = '{';
	for (int i = 0; i < k; i++)
	{
		int			len = payload(one, sizeof(one), seq + i, 188);

		if (n + 2 * (size_t) len + 4 >= cap)
			die("the list of payloads is too long", NULL);
		if (i > 0)
			out[n++] = ',';
		out[n++] = '"';
		for (int c = 0; c < len; c++)
		{
			if (one[c] == '"' || one[c] == '\\')
				out[n++] = '\\';
			out[n++] = one[c];
		}
		out[n++] = '"';
	}
	out[n++] = '}';
	out[n] = '\0';
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/* p50 and p99 in ms of the slowest receipt after the call, of signals [from, to) all received */
static void
latency(const sent *s, uint64_t from, uint64_t to, int need, double *p50, double *p99, double *commit50)
{
	double	   *v = malloc(sizeof(double) * (to - from + 1));
	double	   *c = malloc(sizeof(double) * (to - from + 1));
	size_t		n = 0;

	for (uint64_t k = from; k < to; k++)
		if (s[k].received == need)
		{
			c[n] = (s[k].commit - s[k].call) * 1e3;
			v[n++] = (s[k].slowest - s[k].call) * 1e3;
		}
	*p50 = *p99 = *commit50 = -1;
	if (n > 0)
	{
		qsort(v, n, sizeof(double), cmp_double);
		qsort(c, n, sizeof(double), cmp_double);
		*p50 = v[n / 2];
		*p99 = v[n * 99 / 100];
		*commit50 = c[n / 2];
	}
	free(v);
	free(c);
}

int
main(int argc, char **argv)
{
	static PGconn *listener[MAX_LISTENERS];
	static uint64_t got[MAX_LISTENERS];
	PGconn	   *producer[PRODUCERS],
			   *admin;
	int			inflight_seq[PRODUCERS];
	int			listener_pid[MAX_LISTENERS],
				producer_pid[PRODUCERS],
				worker_pid = 0;
	uint64_t	batches0,
				batches,
				cpu_l0[MAX_LISTENERS],
				cpu_p0[PRODUCERS],
				cpu_w0 = 0,
				cpu_l = 0,
				cpu_lmax = 0,
				cpu_p = 0,
				cpu_w = 0;
	const char *path;
	int			per_tx = 1;
	bool		bothy;
	static char list[65536];
	int			nl,
				bytes;
	double		rate,
				secs,
				freeze_at = -1,
				freeze_for = 0;
	uint64_t	total,
				next = 0,
				done_sends = 0;
	sent	   *s;
	char		buf[8192];
	const char *sql;
	double		t0,
				last_sample = 0,
				usage_max = 0,
				usage_freeze_end = 0,
				caught_up = -1,
				all_sent_at = -1;
	bool		sampling = false;
	struct rusage ru0,
				ru1;
	PGresult   *r;

	if (argc != 6 && argc != 8)
	{
		fprintf(stderr, "usage: notify_listeners_client bothy|notify LISTENERS RATE BYTES SECONDS [FREEZE_AT FREEZE_FOR]\n");
		return 2;
	}
	path = argv[1];
	nl = atoi(argv[2]);
	rate = atof(argv[3]);
	bytes = atoi(argv[4]);
	secs = atof(argv[5]);
	if (argc == 8)
	{
		freeze_at = atof(argv[6]);
		freeze_for = atof(argv[7]);
	}
	bothy = strcmp(path, "bothy") == 0 || sscanf(path, "bothy/%d", &per_tx) == 1;
	if ((!bothy && strcmp(path, "notify") != 0) || per_tx < 1 || per_tx > 100 || nl < 1 || nl > MAX_LISTENERS ||
		rate <= 0 || rate > 100000 || bytes < 188 || bytes > 7999 || secs <= 0 || secs > 600 ||
		(bothy && bytes != 188) || (argc == 8 && (nl < 2 || freeze_for <= 0)))
	{
		fprintf(stderr, "notify_listeners_client: bad arguments (bothy carries 188 bytes only; 1..%d listeners, 2 or more to freeze one)\n",
				MAX_LISTENERS);
		return 2;
	}
	sql = !bothy ? "SELECT pg_notify('ephemeral', $1)" :
		per_tx == 1 ? "SELECT bothy.publish($1)" : "SELECT count(bothy.publish(p)) FROM unnest($1::text[]) AS p";
	total = (uint64_t) (rate * secs) / per_tx * per_tx;
	s = calloc(total + 1, sizeof(sent));

	admin = connect_one();
	/* the worker starts a moment after the server: wait for it up to 10 s */
	for (int tries = 0; worker_pid == 0 && tries < 100; tries++)
	{
		r = PQexec(admin, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'bothy fan-out'");
		if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
			worker_pid = atoi(PQgetvalue(r, 0, 0));
		PQclear(r);
		if (worker_pid == 0)
			nanosleep(&(struct timespec) {.tv_nsec = 100000000}, NULL);
	}
	if (worker_pid == 0)
		die("no fan-out worker in pg_stat_activity", NULL);
	for (int i = 0; i < nl; i++)
	{
		listener[i] = connect_one();
		command(listener[i], "LISTEN ephemeral");
		PQsetnonblocking(listener[i], 1);
		listener_pid[i] = PQbackendPID(listener[i]);
	}
	for (int p = 0; p < PRODUCERS; p++)
	{
		producer[p] = connect_one();
		/* the function and the catalog cached before the clock starts */
		command(producer[p], bothy ? "SELECT bothy.publish('{\"kind\":\"terminal.log\",\"seq\":0}')" :
				"SELECT pg_notify('bench_warm', 'x')");
		producer_pid[p] = PQbackendPID(producer[p]);
		inflight_seq[p] = -1;
	}
	/* the warm-up signals above reach the listeners: let them drain */
	for (double until = now() + 0.3; now() < until;)
		for (int i = 0; i < nl; i++)
		{
			PGnotify   *n;

			PQconsumeInput(listener[i]);
			while ((n = PQnotifies(listener[i])) != NULL)
				PQfreemem(n);
		}

	for (int i = 0; i < nl; i++)
		cpu_l0[i] = cpu_ns(listener_pid[i]);
	for (int p = 0; p < PRODUCERS; p++)
		cpu_p0[p] = cpu_ns(producer_pid[p]);
	cpu_w0 = cpu_ns(worker_pid);
	batches0 = fanout_batches(admin);
	getrusage(RUSAGE_SELF, &ru0);
	t0 = now();

	for (;;)
	{
		struct pollfd fds[MAX_LISTENERS + PRODUCERS + 1];
		int			nf = 0;
		double		t = now() - t0,
					wait;
		bool		frozen = freeze_at >= 0 && t >= freeze_at && t < freeze_at + freeze_for;
		bool		all_in = done_sends == total;

		/* stop: everything sent and received by every listener, or the drain limit */
		if (all_in)
		{
			bool		complete = true;

			for (int i = 0; i < nl && complete; i++)
				complete = got[i] == total;
			if (all_sent_at < 0)
				all_sent_at = t;
			if (complete || t > all_sent_at + DRAIN_LIMIT)
				break;
		}
		/* send what is due on an idle producer */
		while (next < total && next <= (uint64_t) (t * rate))
		{
			int			p;
			const char *values[1];

			for (p = 0; p < PRODUCERS && inflight_seq[p] >= 0; p++)
				;
			if (p == PRODUCERS)
				break;			/* both busy: the rate is not kept, the figure shows it */
			if (per_tx == 1)
				payload(buf, sizeof(buf), next, bytes);
			else
				payload_list(list, sizeof(list), next, per_tx);
			values[0] = per_tx == 1 ? buf : list;
			for (int k = 0; k < per_tx; k++)
				s[next + k].call = now();
			if (!PQsendQueryParams(producer[p], sql, 1, NULL, values, NULL, NULL, 0))
				die("send", producer[p]);
			inflight_seq[p] = (int) next;
			next += per_tx;
		}
		/* one queue-usage sample at a time */
		if (!sampling && t - last_sample >= SAMPLE_EVERY)
		{
			if (!PQsendQuery(admin, "SELECT pg_notification_queue_usage()"))
				die("sample", admin);
			sampling = true;
			last_sample = t;
		}

		for (int i = 0; i < nl; i++)
			if (!(frozen && i == 0))
				fds[nf++] = (struct pollfd) {.fd = PQsocket(listener[i]), .events = POLLIN};
		for (int p = 0; p < PRODUCERS; p++)
			fds[nf++] = (struct pollfd) {.fd = PQsocket(producer[p]), .events = POLLIN};
		fds[nf++] = (struct pollfd) {.fd = PQsocket(admin), .events = POLLIN};
		wait = next < total ? (next / rate) - t : 0.01;
		if (wait < 0)
			wait = idle_producer(inflight_seq) ? 0 : 0.01;	/* behind: a result wakes the poll */
		if (wait > 0.01)
			wait = 0.01;
		/* ppoll: the gap between two sends at 1,000/s is under poll's millisecond */
		if (ppoll(fds, nf, &(struct timespec) {.tv_nsec = (long) (wait * 1e9)}, NULL) < 0 && errno != EINTR)
			die("poll", NULL);

		for (int i = 0; i < nl; i++)
		{
			PGnotify   *n;

			if (frozen && i == 0)
				continue;
			if (!PQconsumeInput(listener[i]))
				die("listener", listener[i]);
			while ((n = PQnotifies(listener[i])) != NULL)
			{
				const char *v = strstr(n->extra, "\"version\":");
				uint64_t	seq;

				if (strcmp(n->relname, "ephemeral") == 0 && v != NULL &&
					(seq = strtoull(v + 10, NULL, 10) - VERSION_BASE) < total)
				{
					double		at = now();

					got[i]++;
					if (freeze_at < 0 || i != 0)
					{
						s[seq].received++;
						if (at > s[seq].slowest)
							s[seq].slowest = at;
					}
					else if (seq == (uint64_t) ((freeze_at + freeze_for) * rate))
						caught_up = at - t0 - (freeze_at + freeze_for);	/* the first signal sent after the thaw */
				}
				PQfreemem(n);
			}
		}
		for (int p = 0; p < PRODUCERS; p++)
		{
			if (inflight_seq[p] < 0)
				continue;
			if (!PQconsumeInput(producer[p]))
				die("producer", producer[p]);
			if (PQisBusy(producer[p]))
				continue;
			while ((r = PQgetResult(producer[p])) != NULL)
			{
				if (PQresultStatus(r) != PGRES_TUPLES_OK)
					die("signal refused", producer[p]);
				PQclear(r);
			}
			for (int k = 0; k < per_tx; k++)
				s[inflight_seq[p] + k].commit = now();
			inflight_seq[p] = -1;
			done_sends += per_tx;
		}
		if (sampling)
		{
			if (!PQconsumeInput(admin))
				die("admin", admin);
			if (!PQisBusy(admin))
			{
				while ((r = PQgetResult(admin)) != NULL)
				{
					if (PQresultStatus(r) == PGRES_TUPLES_OK)
					{
						double		u = atof(PQgetvalue(r, 0, 0));

						if (u > usage_max)
							usage_max = u;
						if (freeze_at >= 0 && now() - t0 < freeze_at + freeze_for)
							usage_freeze_end = u;
					}
					PQclear(r);
				}
				sampling = false;
			}
		}
	}
	{
		double		elapsed = now() - t0,
					client_cpu;
		uint64_t	minimum = total;
		int			need = freeze_at >= 0 ? nl - 1 : nl;
		double		p50,
					p99,
					c50;

		for (int i = 0; i < nl; i++)
		{
			uint64_t	one = cpu_ns(listener_pid[i]) - cpu_l0[i];

			cpu_l += one;
			if (one > cpu_lmax)
				cpu_lmax = one;
			if (got[i] < minimum)
				minimum = got[i];
		}
		for (int p = 0; p < PRODUCERS; p++)
			cpu_p += cpu_ns(producer_pid[p]) - cpu_p0[p];
		cpu_w = cpu_ns(worker_pid) - cpu_w0;
		while ((r = PQgetResult(admin)) != NULL)	/* a sample still in flight */
			PQclear(r);
		batches = fanout_batches(admin) - batches0;
		getrusage(RUSAGE_SELF, &ru1);
		client_cpu = (ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) + (ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
			(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) + (ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;

		printf("path=%s listeners=%d rate=%.0f bytes=%d sent=%" PRIu64 " send_secs=%.2f elapsed=%.2f min_received=%" PRIu64,
			   path, nl, rate, bytes, done_sends, s[total - 1].call - t0, elapsed, minimum);
		/* CPU: us per signal per listening backend, per signal in the worker and the producers */
		printf(" listener_us=%.2f listener_max_us=%.2f worker_us=%.2f producer_us=%.2f listener_cores=%.3f client_cores=%.3f",
			   cpu_l / 1e3 / (double) total / nl, cpu_lmax / 1e3 / (double) total, cpu_w / 1e3 / (double) total, cpu_p / 1e3 / (double) total,
			   cpu_l / 1e9 / elapsed, client_cpu / elapsed);
		/* the worker's transactions: each wakes every listener once, whatever it carries */
		printf(" batches=%" PRIu64 " usage_max=%.8f", batches, usage_max);
		if (freeze_at < 0)
		{
			latency(s, 0, total, need, &p50, &p99, &c50);
			printf(" p50=%.2f p99=%.2f commit_p50=%.2f", p50, p99, c50);
		}
		else
		{
			uint64_t	a = (uint64_t) (freeze_at * rate),
						b = (uint64_t) ((freeze_at + freeze_for) * rate);

			latency(s, 0, a, need, &p50, &p99, &c50);
			printf(" before_p50=%.2f before_p99=%.2f", p50, p99);
			latency(s, a, b < total ? b : total, need, &p50, &p99, &c50);
			printf(" during_p50=%.2f during_p99=%.2f", p50, p99);
			latency(s, b < total ? b : total, total, need, &p50, &p99, &c50);
			printf(" after_p50=%.2f after_p99=%.2f", p50, p99);
			printf(" usage_at_thaw=%.8f frozen_received=%" PRIu64 " caught_up_s=%.3f", usage_freeze_end, got[0], caught_up);
		}
		printf("\n");
	}
	for (int i = 0; i < nl; i++)
		PQfinish(listener[i]);
	for (int p = 0; p < PRODUCERS; p++)
		PQfinish(producer[p]);
	PQfinish(admin);
	free(s);
	return 0;
}
