/*
 * gateway_fanout_client.c
 *		The load client of bench/gateway_fanout_multi: holds the subscriber
 *		and publisher connections of a fan-out across two bothy-gateway
 *		nodes behind the edge, sends typing ops, and times every event its
 *		subscribers receive.
 *
 * One thread, one epoll set, the WebSocket pieces of wsclient.c.
 * Connections go to the --port ports in turn: the edge's one port, or each
 * node's to measure without the edge.  Every connection is a person of its
 * own, person number i being 00000000-0000-4000-8000-<i in 12 hex digits>
 * (the driver makes persons 1..--persons members of the thread's place
 * beforehand), on a device of its own.  Which node a connection landed on
 * is read from its ready message; the first node ID seen is node 0, the
 * second node 1.
 *
 * The driver talks to the client by lines: a command on stdin, one line of
 * figures on stdout when it is done (times in microseconds).
 *
 *   connect S P     grow to S subscribers and P publishers on each node;
 *                   a connection that lands on a node already full is closed
 *       -> connected SUBS0 SUBS1 PUBS0 PUBS1 spare N seconds T closed C
 *   typing R G      R rounds, publishers of node 0 and node 1 in turn: one
 *                   typing op, then wait until every subscriber has it (at
 *                   most 2 s), then G ms; latency from the send to each
 *                   receipt, same node or not as the publisher
 *       -> typing same N P50 P99 MAX cross N P50 P99 MAX lost L closed C errors E
 *          (errors: {"op":"error"} answers so far, e.g. a rejected typing)
 *   watch RUN       forget the run.updated figures so far; count only
 *                   those of run RUN from now on
 *   report          once no run.updated came for 500 ms: latency from the
 *                   document's sent_ns (CLOCK_REALTIME, written in the
 *                   committing statement) to each receipt, per node, and
 *                   per version the time to its last receipt
 *       -> runs node0 N P50 P99 node1 N P50 P99 versions V complete K
 *          last P50 MAX MIN lost L closed C first P50_0 P50_1
 *                   (last: over the versions every subscriber received, the
 *                   time to its last receipt; first: to its first receipt
 *                   on node 0 and node 1)
 *   stream S W      S seconds of typing ops from every publisher, each at
 *                   most W ops ahead of the receipts of the subscribers on
 *                   its own node (the fan-out worker sends identical
 *                   signals of one batch once, so the other node may get
 *                   fewer); counts every event the subscribers receive in
 *                   those S seconds
 *       -> stream seconds S typing T runs R other O sent N lost L closed C
 *
 * Only subscribers' receipts are counted; publishers read and drop what they
 * receive (they are members too).  EOF on stdin ends the client, which
 * closes every connection.
 *
 *   gateway_fanout_client --port P [--port P2 ...] --keys DIR --thread T --persons N
 *		[--sources S] [--inflight M]
 */
#define _GNU_SOURCE				/* memmem */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "keys/keystore.h"
#include "uuid.h"
#include "wsclient.h"

#define PROG "gateway_fanout_client"

/* One connection's unread bytes: events are < 1 kB, ready < 1.5 kB. */
#define RX_MAX 8192
#define MAX_PUBS 64				/* publishers per node */
#define MAX_PORTS 8
#define MAX_VERSIONS 4096		/* run versions tracked (1..) */
#define NS_PER_MS INT64_C(1000000)
/* No connection got ready or failed for this long: the run ends. */
#define STALL_NS (60 * 1000 * NS_PER_MS)
/* A typing round (and a stream publisher) gives up on missing receipts. */
#define ROUND_TIMEOUT_NS (2000 * NS_PER_MS)
/* report: run.updated is over when none came for this long */
#define QUIET_NS (500 * NS_PER_MS)
/* stream: receipts still read, not counted, after the window */
#define DRAIN_NS (1000 * NS_PER_MS)
#define STDIN_ID UINT64_MAX
#define PERSON_PREFIX "00000000-0000-4000-8000-"

typedef enum conn_state
{
	CS_CONNECTING = 0,
	CS_UPGRADING,
	CS_IDENTIFYING,
	CS_READY,
	CS_DONE
} conn_state;

typedef enum conn_role
{
	ROLE_NONE = 0,				/* not ready yet */
	ROLE_SUB,
	ROLE_PUB,
	ROLE_SPARE					/* landed on a full node: closed */
} conn_role;

typedef struct conn
{
	int			fd;
	uint8_t		state;			/* conn_state */
	uint8_t		role;			/* conn_role */
	uint8_t		node;			/* 0 or 1, once ready */
	int16_t		pub;			/* ROLE_PUB: its index in pubs */
	uint32_t	rx_len;
	char	   *rx;				/* unread bytes, RX_MAX */
} conn;

typedef struct pub
{
	long		conn;			/* index in conns: person conn + 1 */
	uint8_t		node;
	long		sent;			/* stream: typing ops sent */
	long		received;		/* stream: receipts on its own node */
	long		received_other; /* stream: receipts on the other node */
	int64_t		progress_ns;	/* stream: the last receipt or send */
} pub;

typedef struct samples
{
	double	   *v;
	size_t		n;
	size_t		cap;
} samples;

typedef enum phase
{
	PH_IDLE = 0,
	PH_CONNECT,
	PH_TYPING,
	PH_REPORT,
	PH_STREAM,
	PH_DRAIN
} phase;

static struct
{
	int			ports[MAX_PORTS];
	int			nports;
	const char *keys;
	const char *thread;
	long		persons;
	long		sources;
	long		inflight;
} opt = {{0}, 0, NULL, NULL, 0, 4, 200};

static bothy_keystore *ks;
static conn *conns;
static int	ep;
static char typing_msg[128];
static size_t typing_len;

/* connections */
static long opened;
static long inflight;				/* opened, neither ready nor failed */
static long subs[2];				/* live subscribers per node */
static pub	pubs[2 * MAX_PUBS];
static int	npubs;
static int	pubs_of[2][MAX_PUBS];	/* pub indices per node */
static int	npubs_of[2];
static long spare;
static long failed;					/* before ready */
static long closed;					/* after ready: the node ended it */
static long errors;					/* {"op":"error"} received */
static char nodes[2][BOTHY_UUID_STRLEN + 1];
static int	nnodes;
static int64_t progress_ns;			/* the last ready or failure */

/* the command under way */
static phase ph;
static int64_t ph_start_ns;
static long want_subs;
static long want_pubs;
static long rounds;
static long rounds_done;
static int64_t gap_ns;
static bool round_active;
static int	round_pub;
static int64_t round_sent_ns;
static int64_t next_round_ns;
static long round_received;
static long round_expected;
static long typing_lost;
static samples typing_same;
static samples typing_cross;
static int64_t last_run_ns;
static char watched_run[BOTHY_UUID_STRLEN + 1];
static samples run_lat[2];
static long ver_n[MAX_VERSIONS];
static double ver_last[MAX_VERSIONS];	/* latency of its last receipt */
static double ver_first[2][MAX_VERSIONS];	/* of its first receipt per node */
static long run_other;				/* receipts of a version out of range */
static int64_t stream_end_ns;
static long stream_window;
static long stream_typing;
static long stream_runs;
static long stream_other;
static long stream_sent;
static long stream_lost;

static int64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t
mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void
die(const char *what)
{
	fprintf(stderr, "gateway_fanout_client: %s\n", what);
	exit(1);
}

static void
sample_add(samples *s, double v)
{
	if (s->n == s->cap)
	{
		size_t		cap = s->cap == 0 ? 4096 : 2 * s->cap;
		double	   *grown = realloc(s->v, cap * sizeof(*grown));

		if (grown == NULL)
			die("out of memory");
		s->v = grown;
		s->cap = cap;
	}
	s->v[s->n++] = v;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/* The nearest-rank percentile q (0..1] of s (sorted first); 0 when empty. */
static double
percentile(samples *s, double q)
{
	size_t		rank;

	if (s->n == 0)
		return 0;
	qsort(s->v, s->n, sizeof(double), cmp_double);
	rank = (size_t) (q * (double) s->n + 0.999999);
	return s->v[rank == 0 ? 0 : rank - 1];
}

static void
person_text(long person, char out[BOTHY_UUID_STRLEN + 1])
{
	snprintf(out, BOTHY_UUID_STRLEN + 1, PERSON_PREFIX "%012lx", person);
}

/* The person number of a UUID text of ours; 0 for any other. */
static long
person_of(const char *text)
{
	char	   *end;
	long		n;

	if (memcmp(text, PERSON_PREFIX, sizeof(PERSON_PREFIX) - 1) != 0)
		return 0;
	n = strtol(text + sizeof(PERSON_PREFIX) - 1, &end, 16);
	return end == text + BOTHY_UUID_STRLEN && n >= 1 && n <= opt.persons ? n : 0;
}

/* The text after "key": in p[0..len), or NULL. */
static const char *
member(const char *p, size_t len, const char *key)
{
	const char *m = memmem(p, len, key, strlen(key));

	return m == NULL ? NULL : m + strlen(key);
}

static void
end_conn(conn *c)
{
	if (c->state == CS_DONE)
		return;
	if (c->state == CS_READY)
	{
		if (c->role == ROLE_SUB)
			subs[c->node]--;
		if (c->role != ROLE_SPARE)
			closed++;
	}
	else
	{
		inflight--;
		failed++;
		progress_ns = mono_ns();
	}
	close(c->fd);
	c->fd = -1;
	free(c->rx);
	c->rx = NULL;
	c->state = CS_DONE;
}

static void
open_one(void)
{
	conn	   *c;
	struct epoll_event ev;

	if (opened == opt.persons)
		die("--persons too small for the connections asked for");
	c = &conns[opened];
	c->pub = -1;
	c->rx = malloc(RX_MAX);
	if (c->rx == NULL)
		die("out of memory");
	c->fd = ws_connect(opt.ports[opened % opt.nports], opened % opt.sources);
	ev.events = EPOLLOUT;
	ev.data.u64 = (uint64_t) opened;
	opened++;
	inflight++;
	c->state = CS_CONNECTING;
	if (c->fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
		end_conn(c);
}

static void
connected(conn *c, uint64_t id)
{
	struct epoll_event ev;

	ev.events = EPOLLIN;
	ev.data.u64 = id;
	if (!ws_connected(c->fd) || !ws_send_upgrade(c->fd, opt.ports[id % (uint64_t) opt.nports]) ||
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) != 0)
		end_conn(c);
	else
		c->state = CS_UPGRADING;
}

/* The ready message: which node, and what this connection is for. */
static void
got_ready(conn *c, long id, const char *p, size_t len)
{
	const char *node = member(p, len, "\"node\":\"");
	int			i;

	if (node == NULL || node + BOTHY_UUID_STRLEN > p + len)
		die("a ready message without a node");
	for (i = 0; i < nnodes; i++)
		if (memcmp(nodes[i], node, BOTHY_UUID_STRLEN) == 0)
			break;
	if (i == nnodes)
	{
		if (nnodes == 2)
			die("connections landed on more than two nodes");
		memcpy(nodes[nnodes++], node, BOTHY_UUID_STRLEN);
	}
	c->node = (uint8_t) i;
	c->state = CS_READY;
	inflight--;
	progress_ns = mono_ns();
	if (npubs_of[i] < want_pubs)
	{
		if (npubs_of[i] == MAX_PUBS)
			die("too many publishers");
		c->role = ROLE_PUB;
		c->pub = (int16_t) npubs;
		pubs[npubs].conn = id;
		pubs[npubs].node = (uint8_t) i;
		pubs_of[i][npubs_of[i]++] = npubs++;
	}
	else if (subs[i] < want_subs)
	{
		c->role = ROLE_SUB;
		subs[i]++;
	}
	else
	{
		/* not a failure: the node is full, the person is not used */
		c->role = ROLE_SPARE;
		spare++;
		end_conn(c);
	}
}

static void
typing_receipt(conn *c, const char *p, size_t len, int64_t now)
{
	const char *who = member(p, len, "\"principal\":\"");
	long		person;
	conn	   *from;

	if (who == NULL || who + BOTHY_UUID_STRLEN > p + len ||
		(person = person_of(who)) == 0)
		return;
	from = &conns[person - 1];
	if (from->role != ROLE_PUB)
		return;
	if (ph == PH_TYPING && round_active && from->pub == round_pub)
	{
		sample_add(from->node == c->node ? &typing_same : &typing_cross,
				   (double) (now - round_sent_ns) / 1000.0);
		round_received++;
	}
	else if ((ph == PH_STREAM || ph == PH_DRAIN) && from->node != c->node)
		pubs[from->pub].received_other++;
	else if (ph == PH_STREAM || ph == PH_DRAIN)
	{
		pubs[from->pub].received++;
		pubs[from->pub].progress_ns = now;
	}
}

static void
run_receipt(conn *c, const char *p, size_t len, int64_t now)
{
	const char *sent = member(p, len, "\"sent_ns\":");
	const char *version = member(p, len, "\"version\":");
	const char *run = member(p, len, "\"run\":\"");
	int64_t		real = clock_ns(CLOCK_REALTIME);
	double		lat;
	long		v;

	if (sent == NULL || version == NULL || run == NULL ||
		run + BOTHY_UUID_STRLEN > p + len || memcmp(run, watched_run, BOTHY_UUID_STRLEN) != 0)
		return;
	lat = (double) (real - strtoll(sent, NULL, 10)) / 1000.0;
	v = strtol(version, NULL, 10);
	last_run_ns = now;
	sample_add(&run_lat[c->node], lat);
	if (v < 1 || v >= MAX_VERSIONS)
	{
		run_other++;
		return;
	}
	ver_n[v]++;
	if (lat > ver_last[v])
		ver_last[v] = lat;
	if (ver_first[c->node][v] == 0 || lat < ver_first[c->node][v])
		ver_first[c->node][v] = lat;
}

/* A text frame on a ready connection. */
static void
got_text(conn *c, const char *p, size_t len)
{
	static const char ev[] = "{\"op\":\"event\",\"type\":\"";
	int64_t		now = mono_ns();
	bool		counted = ph == PH_STREAM && now < stream_end_ns && c->role == ROLE_SUB;

	if (len < sizeof(ev) - 1 || memcmp(p, ev, sizeof(ev) - 1) != 0)
	{
		if (len >= 13 && memcmp(p, "{\"op\":\"error\"", 13) == 0)
			errors++;
		return;
	}
	p += sizeof(ev) - 1;
	len -= sizeof(ev) - 1;
	if (len > 15 && memcmp(p, "typing.started\"", 15) == 0)
	{
		stream_typing += counted;
		if (c->role == ROLE_SUB)
			typing_receipt(c, p, len, now);
	}
	else if (len > 12 && memcmp(p, "run.updated\"", 12) == 0)
	{
		stream_runs += counted;
		if (c->role == ROLE_SUB)
			run_receipt(c, p, len, now);
	}
	else
		stream_other += counted;
}

/* Every whole frame in c->rx. */
static void
frames(conn *c, long id)
{
	size_t		done = 0;

	while (c->state != CS_DONE)
	{
		const uint8_t *b = (const uint8_t *) c->rx + done;
		int			opcode = 0;
		size_t		off = 0;
		size_t		plen = 0;
		long		n = ws_frame_parse(b, c->rx_len - done, RX_MAX, &opcode, &off, &plen);

		if (n == 0)
			break;
		if (n < 0 || opcode == 8 ||
			(c->state == CS_IDENTIFYING &&
			 (opcode != 1 || plen < 13 || memcmp(b + off, "{\"op\":\"ready\"", 13) != 0)))
		{
			if (opcode == 8)
				fprintf(stderr, "gateway_fanout_client: closed by the node with %u\n",
						ws_close_code(b + off, plen));
			end_conn(c);
			return;
		}
		if (c->state == CS_IDENTIFYING)
			got_ready(c, id, (const char *) b + off, plen);
		else if (opcode == 1)
			got_text(c, (const char *) b + off, plen);
		done += (size_t) n;
	}
	if (c->state == CS_DONE)
		return;
	memmove(c->rx, c->rx + done, c->rx_len - done);
	c->rx_len -= (uint32_t) done;
}

static void
readable(conn *c, long id)
{
	ssize_t		n = recv(c->fd, c->rx + c->rx_len, RX_MAX - c->rx_len, 0);

	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0)
	{
		end_conn(c);
		return;
	}
	c->rx_len += (uint32_t) n;
	if (c->state == CS_UPGRADING)
	{
		size_t		len = c->rx_len;
		bothy_uuid	person;
		bothy_uuid	device;
		char		text[BOTHY_UUID_STRLEN + 1];
		int			r = ws_upgrade_answer(c->rx, &len, RX_MAX);

		c->rx_len = (uint32_t) len;
		if (r == 0)
			return;
		person_text(id + 1, text);
		ws_random_uuid(&device);
		if (r < 0 || !bothy_uuid_parse(text, BOTHY_UUID_STRLEN, &person) ||
			!ws_send_identify(c->fd, ks, &person, &device))
		{
			end_conn(c);
			return;
		}
		c->state = CS_IDENTIFYING;
	}
	frames(c, id);
	if (c->state != CS_DONE && c->rx_len == RX_MAX)
		end_conn(c);
}

static void
send_typing(pub *p)
{
	if (!ws_send_all(conns[p->conn].fd, typing_msg, typing_len))
		die("a typing op could not be sent");
}

static long
total_subs(void)
{
	return subs[0] + subs[1];
}

static void
reset_runs(void)
{
	run_lat[0].n = run_lat[1].n = 0;
	memset(ver_n, 0, sizeof(ver_n));
	memset(ver_last, 0, sizeof(ver_last));
	memset(ver_first, 0, sizeof(ver_first));
	run_other = 0;
}

static void
report_runs(void)
{
	samples		last = {NULL, 0, 0};
	samples		first[2] = {{NULL, 0, 0}, {NULL, 0, 0}};
	long		versions = 0;
	long		complete = 0;
	long		lost = 0;
	long		expected = total_subs();
	long		v;
	double		minimum = 0;

	for (v = 1; v < MAX_VERSIONS; v++)
	{
		if (ver_n[v] == 0)
			continue;
		versions++;
		if (ver_n[v] >= expected)
		{
			complete++;
			sample_add(&last, ver_last[v]);
			sample_add(&first[0], ver_first[0][v]);
			sample_add(&first[1], ver_first[1][v]);
			if (minimum == 0 || ver_last[v] < minimum)
				minimum = ver_last[v];
		}
		else
			lost += expected - ver_n[v];
	}
	printf("runs node0 %zu %.0f %.0f node1 %zu %.0f %.0f versions %ld complete %ld "
		   "last %.0f %.0f %.0f lost %ld closed %ld first %.0f %.0f\n",
		   run_lat[0].n, percentile(&run_lat[0], 0.5), percentile(&run_lat[0], 0.99),
		   run_lat[1].n, percentile(&run_lat[1], 0.5), percentile(&run_lat[1], 0.99),
		   versions, complete, percentile(&last, 0.5), percentile(&last, 1.0), minimum,
		   lost + run_other, closed, percentile(&first[0], 0.5), percentile(&first[1], 0.5));
	free(last.v);
	free(first[0].v);
	free(first[1].v);
}

/* What the command under way does now; its line when it is done. */
static void
step(int64_t now)
{
	switch (ph)
	{
		case PH_IDLE:
			return;
		case PH_CONNECT:
			{
				long		needed = 0;
				int			i;

				for (i = 0; i < 2; i++)
					needed += (want_subs > subs[i] ? want_subs - subs[i] : 0) +
						(want_pubs > npubs_of[i] ? want_pubs - npubs_of[i] : 0);
				while (inflight < opt.inflight && inflight < needed)
					open_one();
				if (inflight > 0 && now - progress_ns > STALL_NS)
					die("no connection got ready or failed for a minute");
				if (needed > 0 || inflight > 0)
					return;
				printf("connected %ld %ld %d %d spare %ld seconds %.1f closed %ld failed %ld\n",
					   subs[0], subs[1], npubs_of[0], npubs_of[1], spare,
					   (double) (now - ph_start_ns) / 1e9, closed, failed);
				break;
			}
		case PH_TYPING:
			if (round_active &&
				(round_received >= round_expected || now - round_sent_ns > ROUND_TIMEOUT_NS))
			{
				typing_lost += round_expected - round_received;
				round_active = false;
				rounds_done++;
				next_round_ns = now + gap_ns;
			}
			if (round_active || now < next_round_ns)
				return;
			if (rounds_done < rounds)
			{
				int			node = (int) (rounds_done % 2);

				round_pub = pubs_of[node][(rounds_done / 2) % npubs_of[node]];
				round_received = 0;
				round_expected = total_subs();
				round_active = true;
				round_sent_ns = mono_ns();
				send_typing(&pubs[round_pub]);
				return;
			}
			printf("typing same %zu %.0f %.0f %.0f cross %zu %.0f %.0f %.0f lost %ld closed %ld errors %ld\n",
				   typing_same.n, percentile(&typing_same, 0.5),
				   percentile(&typing_same, 0.99), percentile(&typing_same, 1.0),
				   typing_cross.n, percentile(&typing_cross, 0.5),
				   percentile(&typing_cross, 0.99), percentile(&typing_cross, 1.0),
				   typing_lost, closed, errors);
			break;
		case PH_REPORT:
			if (now - (last_run_ns > ph_start_ns ? last_run_ns : ph_start_ns) < QUIET_NS)
				return;
			report_runs();
			break;
		case PH_STREAM:
			if (now < stream_end_ns)
			{
				int			i;

				for (i = 0; i < npubs; i++)
				{
					pub		   *p = &pubs[i];
					long		e = subs[p->node];

					if (p->sent * e > p->received && now - p->progress_ns > ROUND_TIMEOUT_NS)
					{
						stream_lost += p->sent * e - p->received;
						p->received = p->sent * e;
					}
					while ((p->sent - stream_window) * e < p->received)
					{
						send_typing(p);
						p->sent++;
						stream_sent++;
						p->progress_ns = now;
					}
				}
				return;
			}
			ph = PH_DRAIN;
			return;
		case PH_DRAIN:
			{
				int			i;

				if (now < stream_end_ns + DRAIN_NS)
					return;
				for (i = 0; i < npubs; i++)
					stream_lost += pubs[i].sent * total_subs() - pubs[i].received -
						pubs[i].received_other;
				printf("stream seconds %.1f typing %ld runs %ld other %ld sent %ld lost %ld closed %ld\n",
					   (double) (stream_end_ns - ph_start_ns) / 1e9, stream_typing,
					   stream_runs, stream_other, stream_sent, stream_lost, closed);
				break;
			}
	}
	fflush(stdout);
	ph = PH_IDLE;
}

static void
command(const char *line)
{
	long		a = 0;
	long		b = 0;
	int			i;

	if (ph != PH_IDLE)
		die("a command came before the last one was done");
	ph_start_ns = mono_ns();
	if (sscanf(line, "connect %ld %ld", &a, &b) == 2 && a >= 0 && b >= 1 && b <= MAX_PUBS)
	{
		want_subs = a;
		want_pubs = b;
		progress_ns = ph_start_ns;
		ph = PH_CONNECT;
	}
	else if (sscanf(line, "typing %ld %ld", &a, &b) == 2 && a >= 1 && b >= 0)
	{
		rounds = a;
		rounds_done = 0;
		gap_ns = b * NS_PER_MS;
		next_round_ns = 0;
		typing_lost = 0;
		typing_same.n = typing_cross.n = 0;
		ph = PH_TYPING;
	}
	else if (strncmp(line, "watch ", 6) == 0 && strlen(line + 6) == BOTHY_UUID_STRLEN)
	{
		memcpy(watched_run, line + 6, BOTHY_UUID_STRLEN);
		reset_runs();
		printf("watching\n");
		fflush(stdout);
	}
	else if (strcmp(line, "report") == 0)
		ph = PH_REPORT;
	else if (sscanf(line, "stream %ld %ld", &a, &b) == 2 && a >= 1 && b >= 1)
	{
		stream_end_ns = ph_start_ns + a * 1000 * NS_PER_MS;
		stream_window = b;
		stream_typing = stream_runs = stream_other = stream_sent = stream_lost = 0;
		for (i = 0; i < npubs; i++)
		{
			pubs[i].sent = pubs[i].received = pubs[i].received_other = 0;
			pubs[i].progress_ns = ph_start_ns;
		}
		ph = PH_STREAM;
	}
	else
		die("unknown command");
	if ((ph == PH_TYPING || ph == PH_STREAM) && (npubs_of[0] == 0 || npubs_of[1] == 0))
		die("no publisher on a node: connect first");
}

/* Commands from stdin, a line each; EOF ends the client. */
static void
read_stdin(void)
{
	static ws_lines lines;

	switch (ws_read_lines(STDIN_FILENO, &lines, command))
	{
		case 0:
			exit(closed > 0 || failed > 0 ? 1 : 0);
		case -1:
			die("stdin failed, or a command too long");
	}
}

static void
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"port", required_argument, NULL, 'p'},
		{"keys", required_argument, NULL, 'k'},
		{"thread", required_argument, NULL, 't'},
		{"persons", required_argument, NULL, 'n'},
		{"sources", required_argument, NULL, 's'},
		{"inflight", required_argument, NULL, 'i'},
		{NULL, 0, NULL, 0}
	};
	bothy_uuid	u;
	int			ch;

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1)
	{
		switch (ch)
		{
			case 'p':
				if (opt.nports == MAX_PORTS)
					die("too many --port");
				opt.ports[opt.nports++] = (int) ws_parse_count(PROG, optarg, 1, 65535, "--port");
				break;
			case 'k':
				opt.keys = optarg;
				break;
			case 't':
				opt.thread = optarg;
				break;
			case 'n':
				opt.persons = ws_parse_count(PROG, optarg, 1, 1000000, "--persons");
				break;
			case 's':
				opt.sources = ws_parse_count(PROG, optarg, 1, 250, "--sources");
				break;
			case 'i':
				opt.inflight = ws_parse_count(PROG, optarg, 1, 100000, "--inflight");
				break;
			default:
				exit(2);
		}
	}
	if (opt.nports == 0 || opt.keys == NULL || opt.thread == NULL || opt.persons == 0 ||
		!bothy_uuid_parse(opt.thread, strlen(opt.thread), &u))
		die("usage: --port P --keys DIR --thread UUID --persons N [--sources S] [--inflight M]");
}

int
main(int argc, char **argv)
{
	struct epoll_event events[512];
	struct epoll_event ev;
	char		err[256];
	char		msg[96];
	int			n;

	parse_args(argc, argv);
	if (sodium_init() < 0)
		die("libsodium did not start");
	ks = bothy_keystore_open(opt.keys, err, sizeof(err));
	if (ks == NULL)
		die(err);
	n = snprintf(msg, sizeof(msg), "{\"op\":\"typing\",\"thread\":\"%s\"}", opt.thread);
	typing_len = ws_text_frame((uint8_t *) typing_msg, msg, (size_t) n);
	conns = calloc((size_t) opt.persons, sizeof(conn));
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.events = EPOLLIN;
	ev.data.u64 = STDIN_ID;
	if (conns == NULL || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, STDIN_FILENO, &ev) != 0)
		die("could not start");
	for (;;)
	{
		int			i;

		step(mono_ns());
		/* a phase that sends on time wakes every millisecond */
		n = epoll_wait(ep, events, (int) (sizeof(events) / sizeof(events[0])),
					   ph == PH_IDLE ? 1000 : 1);
		if (n < 0 && errno != EINTR)
			die("epoll_wait failed");
		for (i = 0; i < n; i++)
		{
			uint64_t	id = events[i].data.u64;
			conn	   *c;

			if (id == STDIN_ID)
			{
				read_stdin();
				continue;
			}
			c = &conns[id];
			if (c->state == CS_CONNECTING)
				connected(c, id);
			else if (c->state != CS_DONE)
				readable(c, (long) id);
		}
	}
}
