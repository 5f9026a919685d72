/*
 * audience_cost_client.c
 *		The load client of bench/audience_cost: holds person connections to
 *		several bothy-gateway nodes, members of the bench's place and
 *		unrelated persons, and counts on each connection the run.updated
 *		events it receives, so that the driver can tell every member got
 *		every version and no unrelated person got any.
 *
 * One thread, one epoll set, the WebSocket pieces of wsclient.c.  Person
 * number i is 00000000-0000-4000-8000-<i in 12 hex digits> (the driver
 * makes the members' numbers members of the place), each on a device of
 * its own, identified with a token signed here from the nodes' key store.
 *
 * The driver talks to the client by lines: a command on stdin, one line on
 * stdout when it is done.
 *
 *   open PORT FIRST COUNT m|u   persons FIRST .. FIRST + COUNT - 1 to the
 *                   node at PORT, as members (m) or unrelated persons (u);
 *                   at most --inflight between connect and ready
 *       -> opened N ready R failed F seconds S
 *   close PORT      close every connection to PORT (before its node stops)
 *       -> closed N
 *   watch RUN       count from now on, per member connection, the
 *                   run.updated events of RUN (the counts so far dropped)
 *       -> watching
 *   wait N          until every member connection has N of them, or none
 *                   came for QUIET_NS
 *       -> runs members M min A max B receipts T disorder D unrelated U closed C
 *          (disorder: receipts whose version was not above the last one of
 *          that connection; unrelated: run.updated of any run that an
 *          unrelated person received since the start; closed: connections
 *          a node ended)
 * EOF on stdin ends the client, which closes every connection.
 *
 *   audience_cost_client --keys DIR --max N [--sources S] [--inflight M]
 */
#define _GNU_SOURCE				/* memmem */
#include <errno.h>
#include <getopt.h>
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

#define PROG "audience_cost_client"

/* One connection's unread bytes: ready is < 1.5 kB, a run.updated < 1 kB. */
#define RX_MAX 8192
#define NS_PER_MS INT64_C(1000000)
/* open: no connection got ready or failed for this long ends the run */
#define STALL_NS (60 * 1000 * NS_PER_MS)
/* wait: no receipt of the watched run for this long, and it answers */
#define QUIET_NS (3000 * NS_PER_MS)
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

typedef struct conn
{
	int			fd;
	uint8_t		state;			/* conn_state */
	bool		member;			/* a member of the place, else unrelated */
	int			port;			/* of its node */
	long		person;			/* its person number */
	long		receipts;		/* member: run.updated of the watched run */
	long		last_version;	/* member: of its last such receipt */
	uint32_t	rx_len;
	char	   *rx;				/* unread bytes, RX_MAX; NULL once done */
} conn;

typedef enum phase
{
	PH_IDLE = 0,
	PH_OPEN,
	PH_WAIT
} phase;

static struct
{
	const char *keys;
	long		max;
	long		sources;
	long		inflight;
} opt = {NULL, 0, 4, 200};

static bothy_keystore *ks;
static conn *conns;
static long nconns;
static int	ep;

/* the command under way */
static phase ph;
static int64_t ph_start_ns;
static int	open_port;
static long open_next;			/* person number to open next */
static long open_end;			/* one past the last */
static bool open_member;
static long open_first_conn;	/* the first connection of this open */
static long inflight;
static int64_t progress_ns;		/* open: the last ready or failure */
static long wait_for;

/* counts */
static long closed;				/* after ready: the node ended it */
static long disorder;
static long unrelated_runs;
static char watched_run[BOTHY_UUID_STRLEN + 1];
static int64_t last_receipt_ns;

static int64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
die(const char *what)
{
	fprintf(stderr, PROG ": %s\n", what);
	exit(1);
}

/* The text after key in p[0..len), or NULL. */
static const char *
member_of(const char *p, size_t len, const char *key)
{
	const char *m = memmem(p, len, key, strlen(key));

	return m == NULL ? NULL : m + strlen(key);
}

/* by_node: the node ended it, else this client did (close, or at exit) */
static void
end_conn(conn *c, bool by_node)
{
	if (c->state == CS_DONE)
		return;
	if (c->state != CS_READY)
	{
		inflight--;
		progress_ns = mono_ns();
	}
	else if (by_node)
		closed++;
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

	if (nconns == opt.max)
		die("--max too small for the connections asked for");
	c = &conns[nconns];
	c->member = open_member;
	c->port = open_port;
	c->person = open_next++;
	c->rx = malloc(RX_MAX);
	if (c->rx == NULL)
		die("out of memory");
	c->fd = ws_connect(open_port, nconns % opt.sources);
	ev.events = EPOLLOUT;
	ev.data.u64 = (uint64_t) nconns;
	nconns++;
	inflight++;
	c->state = CS_CONNECTING;
	if (c->fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
		end_conn(c, false);
}

static void
connected(conn *c, uint64_t id)
{
	struct epoll_event ev;

	ev.events = EPOLLIN;
	ev.data.u64 = id;
	if (!ws_connected(c->fd) || !ws_send_upgrade(c->fd, c->port) ||
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) != 0)
		end_conn(c, false);
	else
		c->state = CS_UPGRADING;
}

/* A text frame on a ready connection: run.updated counted, the rest dropped. */
static void
got_text(conn *c, const char *p, size_t len)
{
	static const char ev[] = "{\"op\":\"event\",\"type\":\"run.updated\"";
	const char *run;
	const char *version;
	long		v;

	if (len < sizeof(ev) - 1 || memcmp(p, ev, sizeof(ev) - 1) != 0)
		return;
	if (!c->member)
	{
		unrelated_runs++;
		return;
	}
	run = member_of(p, len, "\"run\":\"");
	version = member_of(p, len, "\"version\":");
	if (run == NULL || version == NULL || run + BOTHY_UUID_STRLEN > p + len ||
		memcmp(run, watched_run, BOTHY_UUID_STRLEN) != 0)
		return;
	v = strtol(version, NULL, 10);
	if (v <= c->last_version)
		disorder++;
	c->last_version = v;
	c->receipts++;
	last_receipt_ns = mono_ns();
}

/* Every whole frame in c->rx. */
static void
frames(conn *c)
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
				fprintf(stderr, PROG ": person %ld closed by the node with %u\n", c->person,
						ws_close_code(b + off, plen));
			end_conn(c, true);
			return;
		}
		if (c->state == CS_IDENTIFYING)
		{
			c->state = CS_READY;
			inflight--;
			progress_ns = mono_ns();
		}
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
readable(conn *c)
{
	ssize_t		n = recv(c->fd, c->rx + c->rx_len, RX_MAX - c->rx_len, 0);

	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0)
	{
		end_conn(c, true);
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
		snprintf(text, sizeof(text), PERSON_PREFIX "%012lx", c->person);
		ws_random_uuid(&device);
		if (r < 0 || !bothy_uuid_parse(text, BOTHY_UUID_STRLEN, &person) ||
			!ws_send_identify(c->fd, ks, &person, &device))
		{
			end_conn(c, false);
			return;
		}
		c->state = CS_IDENTIFYING;
	}
	frames(c);
	if (c->state != CS_DONE && c->rx_len == RX_MAX)
		end_conn(c, true);
}

static void
report_runs(void)
{
	long		members = 0;
	long		lo = -1;
	long		hi = 0;
	long		total = 0;
	long		i;

	for (i = 0; i < nconns; i++)
	{
		conn	   *c = &conns[i];

		if (!c->member || c->state != CS_READY)
			continue;
		members++;
		total += c->receipts;
		if (lo < 0 || c->receipts < lo)
			lo = c->receipts;
		if (c->receipts > hi)
			hi = c->receipts;
	}
	printf("runs members %ld min %ld max %ld receipts %ld disorder %ld unrelated %ld closed %ld\n",
		   members, lo < 0 ? 0 : lo, hi, total, disorder, unrelated_runs, closed);
}

/* Every ready member connection has wait_for receipts. */
static bool
all_received(void)
{
	long		i;

	for (i = 0; i < nconns; i++)
		if (conns[i].member && conns[i].state == CS_READY && conns[i].receipts < wait_for)
			return false;
	return true;
}

/* What the command under way does now; its line when it is done. */
static void
step(int64_t now)
{
	switch (ph)
	{
		case PH_IDLE:
			return;
		case PH_OPEN:
			{
				long		ready = 0;
				long		lost = 0;
				long		i;

				while (inflight < opt.inflight && open_next < open_end)
					open_one();
				if (inflight > 0 && now - progress_ns > STALL_NS)
					die("no connection got ready or failed for a minute");
				if (open_next < open_end || inflight > 0)
					return;
				for (i = open_first_conn; i < nconns; i++)
				{
					if (conns[i].state == CS_READY)
						ready++;
					else
						lost++;
				}
				printf("opened %ld ready %ld failed %ld seconds %.1f\n", nconns - open_first_conn,
					   ready, lost, (double) (now - ph_start_ns) / 1e9);
				break;
			}
		case PH_WAIT:
			if (!all_received() &&
				now - (last_receipt_ns > ph_start_ns ? last_receipt_ns : ph_start_ns) < QUIET_NS)
				return;
			report_runs();
			break;
	}
	fflush(stdout);
	ph = PH_IDLE;
}

static void
command(const char *line)
{
	long		port = 0;
	long		first = 0;
	long		count = 0;
	char		kind = 0;

	if (ph != PH_IDLE)
		die("a command came before the last one was done");
	ph_start_ns = mono_ns();
	if (sscanf(line, "open %ld %ld %ld %c", &port, &first, &count, &kind) == 4 &&
		port >= 1 && port <= 65535 && first >= 1 && count >= 0 && (kind == 'm' || kind == 'u'))
	{
		open_port = (int) port;
		open_next = first;
		open_end = first + count;
		open_member = kind == 'm';
		open_first_conn = nconns;
		progress_ns = ph_start_ns;
		ph = PH_OPEN;
	}
	else if (sscanf(line, "close %ld", &port) == 1)
	{
		long		n = 0;
		long		i;

		for (i = 0; i < nconns; i++)
			if (conns[i].port == port && conns[i].state == CS_READY)
			{
				end_conn(&conns[i], false);
				n++;
			}
		printf("closed %ld\n", n);
		fflush(stdout);
	}
	else if (strncmp(line, "watch ", 6) == 0 && strlen(line + 6) == BOTHY_UUID_STRLEN)
	{
		long		i;

		memcpy(watched_run, line + 6, BOTHY_UUID_STRLEN);
		for (i = 0; i < nconns; i++)
			conns[i].receipts = conns[i].last_version = 0;
		disorder = 0;
		printf("watching\n");
		fflush(stdout);
	}
	else if (sscanf(line, "wait %ld", &count) == 1 && count >= 0)
	{
		wait_for = count;
		last_receipt_ns = 0;
		ph = PH_WAIT;
	}
	else
		die("unknown command");
}

/* Commands from stdin, a line each; EOF ends the client. */
static void
read_stdin(void)
{
	static ws_lines lines;

	switch (ws_read_lines(STDIN_FILENO, &lines, command))
	{
		case 0:
			exit(closed > 0 ? 1 : 0);
		case -1:
			die("stdin failed, or a command too long");
	}
}

static void
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"keys", required_argument, NULL, 'k'},
		{"max", required_argument, NULL, 'n'},
		{"sources", required_argument, NULL, 's'},
		{"inflight", required_argument, NULL, 'i'},
		{NULL, 0, NULL, 0}
	};
	int			ch;

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1)
	{
		switch (ch)
		{
			case 'k':
				opt.keys = optarg;
				break;
			case 'n':
				opt.max = ws_parse_count(PROG, optarg, 1, 1000000, "--max");
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
	if (opt.keys == NULL || opt.max == 0)
		die("usage: --keys DIR --max N [--sources S] [--inflight M]");
}

int
main(int argc, char **argv)
{
	struct epoll_event events[512];
	struct epoll_event ev;
	char		err[256];
	int			n;

	parse_args(argc, argv);
	if (sodium_init() < 0)
		die("libsodium did not start");
	ks = bothy_keystore_open(opt.keys, err, sizeof(err));
	if (ks == NULL)
		die(err);
	conns = calloc((size_t) opt.max, sizeof(conn));
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.events = EPOLLIN;
	ev.data.u64 = STDIN_ID;
	if (conns == NULL || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, STDIN_FILENO, &ev) != 0)
		die("could not start");
	for (;;)
	{
		int			i;

		step(mono_ns());
		n = epoll_wait(ep, events, (int) (sizeof(events) / sizeof(events[0])),
					   ph == PH_IDLE ? 1000 : 10);
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
				readable(c);
		}
	}
}
