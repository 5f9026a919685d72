/*
 * gateway_connections_client.c
 *		The load client of bench/gateway_connections: opens COUNT WebSocket
 *		connections to one bothy-gateway node, identifies each as a person on
 *		a device of its own, and then holds them idle.
 *
 * One thread, one epoll set, non-blocking sockets, and the WebSocket
 * pieces of wsclient.c (written by hand, RFC 6455), so that the client
 * stays small beside the node it measures.  Each connection needs a
 * distinct device (a second connection of one device is closed with 4017),
 * so each gets its own token, signed here with the gateway's own token and
 * key store code from the node's key store: running `bothy-gateway token`
 * once per connection would take minutes.
 *
 * At most --inflight connections are between connect and ready at once, so
 * the node's database pool sees a steady queue and no identify waits past
 * --db-timeout.  At each --checkpoint and at COUNT the client stops opening,
 * waits until every opened connection is ready or has failed, prints
 *		checkpoint K ready R failed F seconds S
 * and reads a line from stdin before it goes on; after the last one it waits
 * for the end of stdin and exits, which closes every connection.
 *
 * Each connection binds one of --sources loopback source addresses
 * (127.0.0.2, 127.0.0.3, ...): see ws_connect.
 *
 *   gateway_connections_client --port P --keys DIR --count N
 *		[--checkpoint K] [--sources S] [--inflight M]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "keys/keystore.h"
#include "uuid.h"
#include "wsclient.h"

#define PROG "gateway_connections_client"

/* The handshake response and the ready frame fit in this (ready is < 1.5 kB). */
#define RX_MAX 4096
/* A connection that neither got ready nor failed by then ends the run. */
#define STALL_S 60
#define MAX_CHECKPOINTS 16

typedef enum conn_state
{
	CS_CONNECTING = 0,			/* connect sent, waiting for writable */
	CS_UPGRADING,				/* upgrade request sent, reading the response */
	CS_IDENTIFYING,				/* identify sent, reading frames until ready */
	CS_READY,					/* idle; anything but silence ends it */
	CS_DONE						/* failed or closed: fd closed */
} conn_state;

typedef struct conn
{
	int			fd;
	uint8_t		state;			/* conn_state */
	uint16_t	rx_len;
	char	   *rx;				/* until ready: the bytes read and not used */
} conn;

/* Why connections ended, printed at exit (stderr). */
typedef struct failures
{
	unsigned	connect;		/* socket, bind, connect or a socket error */
	unsigned	refused;		/* the upgrade was not answered with 101 */
	unsigned	protocol;		/* a frame this client did not expect */
	unsigned	error_op;		/* {"op":"error"}: the identify's database call failed */
	unsigned	eof;			/* the node closed the socket without a close frame */
	unsigned	after_ready;	/* ready connections that ended while idle */
	unsigned	close_code[5000];	/* close frames by code */
} failures;

static struct
{
	int			port;
	const char *keys;
	long		count;
	long		checkpoints[MAX_CHECKPOINTS];
	int			ncheckpoints;
	long		sources;
	long		inflight;
} opt = {0, NULL, 0, {0}, 0, 4, 200};

static bothy_keystore *ks;
static conn *conns;
static int	ep;
static long opened;				/* connections started */
static long ready;
static long failed;
static long inflight;			/* started, neither ready nor failed */
static failures why;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void
die(const char *what)
{
	fprintf(stderr, "gateway_connections_client: %s\n", what);
	exit(1);
}

static void
end_conn(conn *c, unsigned *reason)
{
	if (c->state == CS_DONE)
		return;
	if (c->state == CS_READY)
	{
		ready--;
		why.after_ready++;
	}
	else
		inflight--;
	if (reason != NULL)
		(*reason)++;
	failed++;
	close(c->fd);
	c->fd = -1;
	free(c->rx);
	c->rx = NULL;
	c->state = CS_DONE;
}

static void
open_one(void)
{
	conn	   *c = &conns[opened];
	struct epoll_event ev;

	c->state = CS_CONNECTING;
	c->fd = ws_connect(opt.port, opened % opt.sources);
	opened++;
	inflight++;
	if (c->fd < 0)
	{
		inflight--;
		failed++;
		why.connect++;
		c->state = CS_DONE;
		return;
	}
	ev.events = EPOLLOUT;
	ev.data.u64 = (uint64_t) (opened - 1);
	if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
		end_conn(c, &why.connect);
}

static void
connected(conn *c, uint64_t id)
{
	struct epoll_event ev;

	c->rx = malloc(RX_MAX);
	ev.events = EPOLLIN;
	ev.data.u64 = id;
	if (c->rx == NULL)
		die("out of memory");
	if (!ws_connected(c->fd) || !ws_send_upgrade(c->fd, opt.port) ||
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) != 0)
	{
		end_conn(c, &why.connect);
		return;
	}
	c->state = CS_UPGRADING;
}

/* The identify of a new person device. */
static bool
send_identify(conn *c)
{
	bothy_uuid	person;
	bothy_uuid	device;

	ws_random_uuid(&person);
	ws_random_uuid(&device);
	return ws_send_identify(c->fd, ks, &person, &device);
}

/* Frames while identifying: ready ends the handshake, anything else fails. */
static void
identify_frames(conn *c)
{
	const uint8_t *b = (const uint8_t *) c->rx;
	int			opcode = 0;
	size_t		off = 0;
	size_t		plen = 0;
	long		n = ws_frame_parse(b, c->rx_len, RX_MAX, &opcode, &off, &plen);

	if (n == 0)
		return;
	if (n < 0)
	{
		end_conn(c, &why.protocol);
		return;
	}
	if (opcode == 8)
	{
		unsigned	code = ws_close_code(b + off, plen);

		end_conn(c, &why.close_code[code < 5000 ? code : 0]);
		return;
	}
	if (opcode == 1 && plen >= 13 && memcmp(b + off, "{\"op\":\"ready\"", 13) == 0 &&
		(size_t) n == c->rx_len)
	{
		free(c->rx);
		c->rx = NULL;
		c->rx_len = 0;
		c->state = CS_READY;
		inflight--;
		ready++;
		return;
	}
	if (opcode == 1 && plen >= 13 && memcmp(b + off, "{\"op\":\"error\"", 13) == 0)
		end_conn(c, &why.error_op);
	else
		end_conn(c, &why.protocol);
}

static void
readable(conn *c)
{
	ssize_t		n;

	if (c->state == CS_READY)
	{
		uint8_t		buf[512];

		/* an idle connection hears nothing: any byte is the node ending it */
		n = recv(c->fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EAGAIN)
			return;
		if (n >= 4 && buf[0] == 0x88 && (buf[1] & 0x7f) >= 2)
		{
			unsigned	code = (unsigned) (buf[2] << 8 | buf[3]);

			why.close_code[code < 5000 ? code : 0]++;
		}
		end_conn(c, NULL);
		return;
	}
	n = recv(c->fd, c->rx + c->rx_len, RX_MAX - c->rx_len, 0);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0)
	{
		end_conn(c, n == 0 ? &why.eof : &why.connect);
		return;
	}
	c->rx_len = (uint16_t) (c->rx_len + n);
	if (c->state == CS_UPGRADING)
	{
		size_t		len = c->rx_len;
		int			r = ws_upgrade_answer(c->rx, &len, RX_MAX);

		c->rx_len = (uint16_t) len;
		if (r == 0)
			return;
		if (r < 0)
		{
			end_conn(c, &why.refused);
			return;
		}
		if (!send_identify(c))
		{
			end_conn(c, &why.connect);
			return;
		}
		c->state = CS_IDENTIFYING;
	}
	if (c->rx_len == RX_MAX)
		end_conn(c, &why.protocol);
	else
		identify_frames(c);
}

static void
print_failures(void)
{
	unsigned	i;

	if (failed == 0)
		return;
	fprintf(stderr, "gateway_connections_client: %ld failed: connect %u, refused %u, "
			"protocol %u, error %u, eof %u, after ready %u",
			failed, why.connect, why.refused, why.protocol, why.error_op, why.eof,
			why.after_ready);
	for (i = 0; i < 5000; i++)
		if (why.close_code[i] > 0)
			fprintf(stderr, ", close %u: %u", i, why.close_code[i]);
	fprintf(stderr, "\n");
}

static void
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"port", required_argument, NULL, 'p'},
		{"keys", required_argument, NULL, 'k'},
		{"count", required_argument, NULL, 'n'},
		{"checkpoint", required_argument, NULL, 'c'},
		{"sources", required_argument, NULL, 's'},
		{"inflight", required_argument, NULL, 'i'},
		{NULL, 0, NULL, 0}
	};
	int			ch;

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1)
	{
		switch (ch)
		{
			case 'p':
				opt.port = (int) ws_parse_count(PROG, optarg, 1, 65535, "--port");
				break;
			case 'k':
				opt.keys = optarg;
				break;
			case 'n':
				opt.count = ws_parse_count(PROG, optarg, 1, 1000000, "--count");
				break;
			case 'c':
				if (opt.ncheckpoints == MAX_CHECKPOINTS - 1)
					die("too many --checkpoint");
				opt.checkpoints[opt.ncheckpoints++] =
					ws_parse_count(PROG, optarg, 1, 1000000, "--checkpoint");
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
	if (opt.port == 0 || opt.keys == NULL || opt.count == 0)
		die("usage: --port P --keys DIR --count N [--checkpoint K] [--sources S] [--inflight M]");
	if (opt.ncheckpoints > 0 && opt.checkpoints[opt.ncheckpoints - 1] >= opt.count)
		die("--checkpoint must be below --count, in increasing order");
	for (ch = 1; ch < opt.ncheckpoints; ch++)
		if (opt.checkpoints[ch] <= opt.checkpoints[ch - 1])
			die("--checkpoint must be below --count, in increasing order");
	opt.checkpoints[opt.ncheckpoints++] = opt.count;
}

int
main(int argc, char **argv)
{
	struct epoll_event events[256];
	char		err[256];
	char		line[64];
	double		start;
	double		progress;
	long		last_done = 0;
	int			cp = 0;

	parse_args(argc, argv);
	ks = bothy_keystore_open(opt.keys, err, sizeof(err));
	if (ks == NULL)
		die(err);
	conns = calloc((size_t) opt.count, sizeof(conn));
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (conns == NULL || ep < 0)
		die("out of memory");
	start = progress = now_s();
	for (;;)
	{
		long		target = opt.checkpoints[cp];
		int			n;
		int			i;

		while (opened < target && inflight < opt.inflight)
			open_one();
		if (opened == target && inflight == 0)
		{
			print_failures();
			printf("checkpoint %ld ready %ld failed %ld seconds %.1f\n",
				   target, ready, failed, now_s() - start);
			fflush(stdout);
			if (++cp == opt.ncheckpoints)
				break;
			if (fgets(line, sizeof(line), stdin) == NULL)
				break;
			progress = now_s();
			continue;
		}
		n = epoll_wait(ep, events, (int) (sizeof(events) / sizeof(events[0])), 1000);
		if (n < 0 && errno != EINTR)
			die("epoll_wait failed");
		for (i = 0; i < n; i++)
		{
			conn	   *c = &conns[events[i].data.u64];

			if (c->state == CS_CONNECTING)
				connected(c, events[i].data.u64);
			else if (c->state != CS_DONE)
				readable(c);
		}
		if (ready + failed != last_done)
		{
			last_done = ready + failed;
			progress = now_s();
		}
		else if (now_s() - progress > STALL_S)
		{
			print_failures();
			die("no connection got ready or failed for a minute");
		}
	}
	/* hold every connection until the driver has measured */
	while (fgets(line, sizeof(line), stdin) != NULL)
		;
	bothy_keystore_close(ks);
	return failed > 0 ? 1 : 0;
}
