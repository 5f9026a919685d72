/*
 * terminal_relay_client.c
 *		The load client of bench/terminal_relay: both sides of terminal
 *		sessions (a device stream and a host's data connection, each with
 *		the identify the driver prepared) against a node, an edge, or the
 *		floor server behind its edge.
 *
 *   terminal_relay_client throughput PORT SESSIONS BYTES FRAME
 *		The first session: the host sends BYTES in binary messages of FRAME
 *		bytes as fast as the relay takes them (one thread), the device reads
 *		them all (another); prints "seconds S".
 *   terminal_relay_client latency PORT SESSIONS COUNT
 *		The first session: COUNT keystrokes, one byte device -> host, echoed
 *		host -> device, one after another; prints "p50_us X p99_us Y".
 *   terminal_relay_client slow PORT SESSIONS RATE SECONDS
 *		The first session: the host writes without end, the device reads
 *		RATE bytes a second for SECONDS; prints "at
 *		T read B" every second and "done read B" (exit 1 if the node closed
 *		a side).
 *   terminal_relay_client idle PORT SESSIONS N
 *		Pairs the first N sessions and holds them; prints "paired N" and
 *		waits until its standard input ends.
 *
 * SESSIONS is a file of lines "PATH<TAB>DEVICE_IDENTIFY<TAB>HOST_IDENTIFY":
 * the stream path and the two identify messages (JSON), made by the driver
 * from real sessions, tokens and host keys.  Blocking sockets: one or two
 * connections at a time need no event loop.  Every side answers the
 * node's pings with their payload, as browsers and WebSocket libraries do
 * (a device that did not would be held after one window: terminal.md,
 * "Slow networks").
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "wsclient.h"

#define PROG "terminal_relay_client"
#define LINE_MAX_BYTES 4096
#define RX_CAP (128 * 1024)
#define FRAME_MAX 65536

typedef struct session
{
	char		path[128];
	char		device[2048];
	char		host[1024];
} session;

/* One connection and what it read but did not hand out yet. */
typedef struct side
{
	int			fd;
	size_t		len;
	uint8_t		buf[RX_CAP];
} side;

static void
fail(const char *what)
{
	fprintf(stderr, "%s: %s\n", PROG, what);
	exit(1);
}

static session *
read_sessions(const char *file, long want, long *n)
{
	FILE	   *f = fopen(file, "r");
	char		line[LINE_MAX_BYTES];
	session    *all = calloc((size_t) want, sizeof(*all));

	if (f == NULL || all == NULL)
		fail("cannot read the sessions");
	for (*n = 0; *n < want && fgets(line, sizeof(line), f) != NULL; (*n)++)
	{
		char	   *d = strchr(line, '\t'),
				   *h = d ? strchr(d + 1, '\t') : NULL;

		if (h == NULL)
			fail("a sessions line is not PATH TAB DEVICE TAB HOST");
		*d++ = '\0';
		*h++ = '\0';
		h[strcspn(h, "\n")] = '\0';
		if (strlen(line) >= sizeof(all[*n].path) || strlen(d) >= sizeof(all[*n].device) ||
			strlen(h) >= sizeof(all[*n].host))
			fail("a sessions line is too long");
		strcpy(all[*n].path, line);
		strcpy(all[*n].device, d);
		strcpy(all[*n].host, h);
	}
	fclose(f);
	return all;
}

/* The answer to a ping (its payload is at most 125 bytes). */
static void
pong(side *s, const uint8_t *payload, size_t plen)
{
	uint8_t		f[160];

	if (plen > 125 || !ws_send_all(s->fd, f, ws_masked_frame(f, 0xA, payload, plen)))
		fail("a pong could not be sent");
}

/*
 * The next whole message into out (at most cap bytes): its length, and its
 * opcode in *opcode.  A close frame ends the run: the relay closed a side.
 */
static size_t
next_message(side *s, uint8_t *out, size_t cap, int *opcode)
{
	for (;;)
	{
		size_t		off,
					plen;
		long		size = ws_frame_parse(s->buf, s->len, FRAME_MAX, opcode, &off, &plen);

		if (size < 0)
			fail("a frame the relay never sends");
		if (size > 0)
		{
			if (*opcode == 0x8)
			{
				fprintf(stderr, "%s: the node closed a stream with %u\n", PROG,
						ws_close_code(s->buf + off, plen));
				exit(1);
			}
			if (*opcode == 0x9)
			{
				pong(s, s->buf + off, plen);
				s->len -= (size_t) size;
				memmove(s->buf, s->buf + size, s->len);
				continue;
			}
			if (plen > cap)
				fail("a message longer than expected");
			memcpy(out, s->buf + off, plen);
			s->len -= (size_t) size;
			memmove(s->buf, s->buf + size, s->len);
			return plen;
		}
		{
			ssize_t		n = recv(s->fd, s->buf + s->len, RX_CAP - s->len, 0);

			if (n <= 0)
				fail("a stream ended");
			s->len += (size_t) n;
		}
	}
}

static void
expect_op(side *s, const char *op)
{
	uint8_t		msg[64];
	char		want[64];
	int			opcode;
	size_t		n = next_message(s, msg, sizeof(msg), &opcode);

	snprintf(want, sizeof(want), "{\"op\":\"%s\"}", op);
	if (opcode != 0x1 || n != strlen(want) || memcmp(msg, want, n) != 0)
		fail("not the op expected");
}

/* Connects, upgrades path and sends identify; the socket is blocking after. */
static void
open_side(side *s, int port, const char *path, const char *identify)
{
	struct pollfd pfd;
	int			one = 1;

	s->len = 0;
	if ((s->fd = ws_connect(port, 0)) < 0)
		fail("cannot connect");
	/* as browsers do: a pong is never held back by Nagle behind an unacknowledged one */
	setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	pfd.fd = s->fd;
	pfd.events = POLLOUT;
	if (poll(&pfd, 1, 10000) != 1 || !ws_connected(s->fd) ||
		fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) & ~O_NONBLOCK) != 0)
		fail("cannot connect");
	if (!ws_send_upgrade_path(s->fd, port, path, "bothy-terminal-stream"))
		fail("cannot send the upgrade");
	for (;;)
	{
		ssize_t		n = recv(s->fd, s->buf + s->len, RX_CAP - s->len, 0);
		int			r;

		if (n <= 0)
			fail("no upgrade answer");
		s->len += (size_t) n;
		if ((r = ws_upgrade_answer((char *) s->buf, &s->len, RX_CAP)) < 0)
			fail("the upgrade was refused");
		if (r > 0)
			break;
	}
	if (!ws_send_text(s->fd, identify, strlen(identify)))
		fail("cannot send identify");
}

/* Both sides of a session, paired. */
static void
pair(side *device, side *host, int port, const session *ss)
{
	open_side(device, port, ss->path, ss->device);
	expect_op(device, "waiting");
	open_side(host, port, ss->path, ss->host);
	expect_op(host, "paired");
	expect_op(device, "paired");
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

typedef struct produce_arg
{
	side	   *host;
	long		bytes;
	long		frame;
} produce_arg;

static void *
produce(void *arg)
{
	produce_arg *a = arg;
	uint8_t    *data = malloc((size_t) a->frame);
	uint8_t    *f = malloc((size_t) a->frame + 16);
	long		sent;

	if (data == NULL || f == NULL)
		fail("out of memory");
	randombytes_buf(data, (size_t) a->frame);
	for (sent = 0; sent < a->bytes; sent += a->frame)
	{
		size_t		n = ws_masked_frame(f, 0x2, data, (size_t) a->frame);

		if (!ws_send_all(a->host->fd, f, n))
			fail("the host's send failed");
	}
	free(data);
	free(f);
	return NULL;
}

static side device_side,
			host_side;

static void
throughput(int port, const session *ss, long bytes, long frame)
{
	static uint8_t msg[FRAME_MAX];
	produce_arg a = {&host_side, bytes, frame};
	pthread_t	t;
	long		got = 0;
	double		start;
	int			opcode;

	pair(&device_side, &host_side, port, ss);
	start = now_s();
	if (pthread_create(&t, NULL, produce, &a) != 0)
		fail("pthread_create");
	while (got < bytes)
	{
		got += (long) next_message(&device_side, msg, sizeof(msg), &opcode);
		if (opcode != 0x2)
			fail("a text message among the bytes");
	}
	printf("seconds %.6f\n", now_s() - start);
	pthread_join(t, NULL);
}

/*
 * The binary payload bytes of the whole frames buffered, handed out; pings
 * answered; a close frame ends the run (exit 1).
 */
static long
take_frames(side *s)
{
	long		got = 0;

	for (;;)
	{
		size_t		off,
					plen;
		int			opcode;
		long		size = ws_frame_parse(s->buf, s->len, FRAME_MAX, &opcode, &off, &plen);

		if (size < 0)
			fail("a frame the relay never sends");
		if (size == 0)
			return got;
		if (opcode == 0x8)
		{
			fprintf(stderr, "%s: the node closed a stream with %u\n", PROG,
					ws_close_code(s->buf + off, plen));
			exit(1);
		}
		if (opcode == 0x9)
			pong(s, s->buf + off, plen);
		else if (opcode == 0x2)
			got += (long) plen;
		s->len -= (size_t) size;
		memmove(s->buf, s->buf + size, s->len);
	}
}

/*
 * The device takes RATE bytes a second from its socket, in ticks of 10 ms
 * (the frames as they complete), while the host writes without end: a
 * steady slow reader behind the edge.
 */
static void
slow(int port, const session *ss, long rate, long seconds)
{
	produce_arg a = {&host_side, 1L << 50, 16384};
	pthread_t	t;
	long		got = 0,
				taken = 0,
				tick = 0;
	double		start,
				next_print;

	/*
	 * The socket's own buffer: SO_RCVBUF shrunk after the connection
	 * was made left a window the sender probed on its persist timer, and
	 * held a 1 MB/s reader to one window a second
	 */
	pair(&device_side, &host_side, port, ss);
	start = now_s();
	next_print = start + 1;
	if (pthread_create(&t, NULL, produce, &a) != 0)
		fail("pthread_create");
	while (now_s() - start < (double) seconds)
	{
		long		target = rate * (tick + 1) / 100;

		/* cumulative: a short read now is made up in the next ticks */
		while (taken < target)
		{
			size_t		room = RX_CAP - device_side.len;
			size_t		want = (size_t) (target - taken) < room ? (size_t) (target - taken) : room;
			ssize_t		n = recv(device_side.fd, device_side.buf + device_side.len, want, MSG_DONTWAIT);

			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
				fail("a stream ended");
			if (n < 0)
				break;
			device_side.len += (size_t) n;
			taken += n;
			got += take_frames(&device_side);
		}
		tick++;
		while (now_s() < start + (double) tick / 100)
			usleep(1000);
		if (now_s() >= next_print)
		{
			printf("at %.0f read %ld\n", next_print - start, got);
			fflush(stdout);
			next_print += 1;
		}
	}
	printf("done read %ld\n", got);
	fflush(stdout);
	exit(0);					/* the producer thread blocks in send: ends with us */
}

static int
by_value(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

static void
latency(int port, const session *ss, long count)
{
	double	   *rtt = malloc((size_t) count * sizeof(*rtt));
	uint8_t		f[16],
				msg[16];
	int			opcode;
	long		i;

	if (rtt == NULL)
		fail("out of memory");
	pair(&device_side, &host_side, port, ss);
	for (i = 0; i < count; i++)
	{
		double		start = now_s();

		if (!ws_send_all(device_side.fd, f, ws_masked_frame(f, 0x2, "k", 1)) ||
			next_message(&host_side, msg, sizeof(msg), &opcode) != 1 ||
			!ws_send_all(host_side.fd, f, ws_masked_frame(f, 0x2, "k", 1)) ||
			next_message(&device_side, msg, sizeof(msg), &opcode) != 1)
			fail("a keystroke was lost");
		rtt[i] = now_s() - start;
		usleep(1000);
	}
	qsort(rtt, (size_t) count, sizeof(*rtt), by_value);
	printf("p50_us %.1f p99_us %.1f\n", rtt[count / 2] * 1e6, rtt[count * 99 / 100] * 1e6);
	free(rtt);
}

static void
idle(int port, const session *all, long n)
{
	side	   *sides = calloc((size_t) (2 * n), sizeof(*sides));
	char		c;
	long		i;

	if (sides == NULL)
		fail("out of memory");
	for (i = 0; i < n; i++)
		pair(&sides[2 * i], &sides[2 * i + 1], port, &all[i]);
	printf("paired %ld\n", n);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
}

int
main(int argc, char **argv)
{
	long		port,
				n,
				want;
	session    *all;

	if (argc < 5 || sodium_init() < 0)
	{
		fprintf(stderr, "usage: %s throughput|latency|idle|slow PORT SESSIONS ARGS...\n", PROG);
		return 2;
	}
	port = ws_parse_count(PROG, argv[2], 1, 65535, "PORT");
	want = strcmp(argv[1], "idle") == 0 ? ws_parse_count(PROG, argv[4], 1, 100000, "N") : 1;
	all = read_sessions(argv[3], want, &n);
	if (n < want)
		fail("fewer sessions than asked for");
	if (strcmp(argv[1], "throughput") == 0 && argc == 6)
		throughput((int) port, &all[0], ws_parse_count(PROG, argv[4], 1, 1L << 40, "BYTES"),
				   ws_parse_count(PROG, argv[5], 1, FRAME_MAX - 16, "FRAME"));
	else if (strcmp(argv[1], "latency") == 0 && argc == 5)
		latency((int) port, &all[0], ws_parse_count(PROG, argv[4], 100, 1000000, "COUNT"));
	else if (strcmp(argv[1], "idle") == 0 && argc == 5)
		idle((int) port, all, n);
	else if (strcmp(argv[1], "slow") == 0 && argc == 6)
		slow((int) port, &all[0], ws_parse_count(PROG, argv[4], 1, 1L << 30, "RATE"),
			 ws_parse_count(PROG, argv[5], 1, 3600, "SECONDS"));
	else
	{
		fprintf(stderr, "usage: %s throughput|latency|idle|slow PORT SESSIONS ARGS...\n", PROG);
		return 2;
	}
	free(all);
	return 0;
}
