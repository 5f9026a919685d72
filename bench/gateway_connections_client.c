/*
 * gateway_connections_client.c
 *		The load client of bench/gateway_connections: opens COUNT WebSocket
 *		connections to one bothy-gateway node, identifies each as a person on
 *		a device of its own, and then holds them idle.
 *
 * One thread, one epoll set, non-blocking sockets, and the WebSocket
 * handshake and masked text frames written here (RFC 6455), so that the
 * client stays small beside the node it measures.  Each connection needs a
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
 * (127.0.0.2, 127.0.0.3, ...) with IP_BIND_ADDRESS_NO_PORT: the port is
 * chosen at connect from the whole four-tuple, so each source address gives
 * its own ~28,000 ephemeral ports and no sysctl is changed.
 *
 *   gateway_connections_client --port P --keys DIR --count N
 *		[--checkpoint K] [--sources S] [--inflight M]
 */
#define _GNU_SOURCE				/* memmem */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "config.h"
#include "keystore.h"
#include "token.h"
#include "uuid.h"

/* The handshake response and the ready frame fit in this (ready is < 1.5 kB). */
#define RX_MAX 4096
/* A connection that neither got ready nor failed by then ends the run. */
#define STALL_S 60
/* Tokens live a day: far longer than a run. */
#define TOKEN_TTL_S 86400
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

/* A random version 4 UUID: person and device IDs of a connection. */
static void
random_uuid(bothy_uuid *u)
{
	randombytes_buf(u->b, sizeof(u->b));
	u->b[6] = (uint8_t) ((u->b[6] & 0x0f) | 0x40);
	u->b[8] = (uint8_t) ((u->b[8] & 0x3f) | 0x80);
}

/* A masked text frame of payload[0..len), len < 65536, into out; its length. */
static size_t
text_frame(uint8_t *out, const char *payload, size_t len)
{
	uint8_t		mask[4];
	size_t		n = 0;
	size_t		i;

	out[n++] = 0x81;			/* FIN, text */
	if (len < 126)
		out[n++] = (uint8_t) (0x80 | len);
	else
	{
		out[n++] = 0x80 | 126;
		out[n++] = (uint8_t) (len >> 8);
		out[n++] = (uint8_t) (len & 0xff);
	}
	randombytes_buf(mask, sizeof(mask));
	memcpy(out + n, mask, sizeof(mask));
	n += sizeof(mask);
	for (i = 0; i < len; i++)
		out[n + i] = (uint8_t) payload[i] ^ mask[i & 3];
	return n + len;
}

/*
 * Sends all of buf or nothing useful: a fresh loopback socket takes a
 * few hundred bytes at once, so a short write is counted as a failure.
 */
static bool
send_all(conn *c, const void *buf, size_t len)
{
	return send(c->fd, buf, len, MSG_NOSIGNAL) == (ssize_t) len;
}

static void
open_one(void)
{
	conn	   *c = &conns[opened];
	struct sockaddr_in src;
	struct sockaddr_in dst;
	struct epoll_event ev;
	int			one = 1;

	c->state = CS_CONNECTING;
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	opened++;
	inflight++;
	if (c->fd < 0)
	{
		c->fd = -1;
		inflight--;
		failed++;
		why.connect++;
		c->state = CS_DONE;
		return;
	}
	memset(&src, 0, sizeof(src));
	src.sin_family = AF_INET;
	src.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1 + (uint32_t) ((opened - 1) % opt.sources));
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	dst.sin_port = htons((uint16_t) opt.port);
	ev.events = EPOLLOUT;
	ev.data.u64 = (uint64_t) (opened - 1);
	if (setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one)) != 0 ||
		bind(c->fd, (struct sockaddr *) &src, sizeof(src)) != 0 ||
		(connect(c->fd, (struct sockaddr *) &dst, sizeof(dst)) != 0 && errno != EINPROGRESS) ||
		epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
		end_conn(c, &why.connect);
}

static void
connected(conn *c, uint64_t id)
{
	char		req[256];
	uint8_t		key[16];
	char		key64[sodium_base64_ENCODED_LEN(16, sodium_base64_VARIANT_ORIGINAL)];
	struct epoll_event ev;
	int			err = 0;
	socklen_t	errlen = sizeof(err);
	int			n;

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &errlen) != 0 || err != 0)
	{
		end_conn(c, &why.connect);
		return;
	}
	randombytes_buf(key, sizeof(key));
	sodium_bin2base64(key64, sizeof(key64), key, sizeof(key), sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(req, sizeof(req),
				 "GET /gateway HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
				 "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
				 "Sec-WebSocket-Version: 13\r\n\r\n", opt.port, key64);
	c->rx = malloc(RX_MAX);
	ev.events = EPOLLIN;
	ev.data.u64 = id;
	if (c->rx == NULL)
		die("out of memory");
	if (n < 0 || (size_t) n >= sizeof(req) || !send_all(c, req, (size_t) n) ||
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
	bothy_token t;
	char		token[BOTHY_TOKEN_MAX + 1];
	char		msg[BOTHY_TOKEN_MAX + 64];
	uint8_t		frame[sizeof(msg) + 8];
	int			n;

	memset(&t, 0, sizeof(t));
	t.kind = BOTHY_TOKEN_PERSON_DEVICE;
	random_uuid(&t.person);
	random_uuid(&t.device);
	t.expires_at = (int64_t) time(NULL) + TOKEN_TTL_S;
	if (!bothy_token_sign(ks, &t, token, sizeof(token)))
		die("could not sign a token");
	n = snprintf(msg, sizeof(msg), "{\"op\":\"identify\",\"token\":\"%s\"}", token);
	if (n < 0 || (size_t) n >= sizeof(msg))
		die("token too long");
	return send_all(c, frame, text_frame(frame, msg, (size_t) n));
}

/*
 * The first whole frame of b[0..len): its size, or 0 when more bytes are
 * needed; -1 for a frame a node never sends (masked, fragmented, too long).
 */
static long
frame_parse(const uint8_t *b, size_t len, int *opcode, size_t *off, size_t *plen)
{
	size_t		p;
	size_t		o = 2;

	if (len < 2)
		return 0;
	if ((b[0] & 0x80) == 0 || (b[1] & 0x80) != 0)
		return -1;
	p = b[1] & 0x7f;
	if (p == 126)
	{
		if (len < 4)
			return 0;
		p = (size_t) b[2] << 8 | b[3];
		o = 4;
	}
	else if (p == 127)
		return -1;
	if (o + p > RX_MAX)
		return -1;
	if (len < o + p)
		return 0;
	*opcode = b[0] & 0x0f;
	*off = o;
	*plen = p;
	return (long) (o + p);
}

/* Frames while identifying: ready ends the handshake, anything else fails. */
static void
identify_frames(conn *c)
{
	const uint8_t *b = (const uint8_t *) c->rx;
	int			opcode = 0;
	size_t		off = 0;
	size_t		plen = 0;
	long		n = frame_parse(b, c->rx_len, &opcode, &off, &plen);

	if (n == 0)
		return;
	if (n < 0)
	{
		end_conn(c, &why.protocol);
		return;
	}
	if (opcode == 8)
	{
		unsigned	code = plen >= 2 ? (unsigned) (b[off] << 8 | b[off + 1]) : 1005;

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
		char	   *end = memmem(c->rx, c->rx_len, "\r\n\r\n", 4);
		size_t		head;

		if (end == NULL)
		{
			if (c->rx_len == RX_MAX)
				end_conn(c, &why.refused);
			return;
		}
		/*
		 * The status is enough here: this client talks to its own node, so
		 * Sec-WebSocket-Accept (a SHA-1, which libsodium lacks) is not checked.
		 */
		if (c->rx_len < 12 || memcmp(c->rx, "HTTP/1.1 101", 12) != 0)
		{
			end_conn(c, &why.refused);
			return;
		}
		head = (size_t) (end + 4 - c->rx);
		memmove(c->rx, c->rx + head, c->rx_len - head);
		c->rx_len = (uint16_t) (c->rx_len - head);
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

static long
parse_count(const char *s, long min, long max, const char *what)
{
	long		v;

	if (!gw_parse_int(s, min, max, &v))
	{
		fprintf(stderr, "gateway_connections_client: bad %s\n", what);
		exit(2);
	}
	return v;
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
				opt.port = (int) parse_count(optarg, 1, 65535, "--port");
				break;
			case 'k':
				opt.keys = optarg;
				break;
			case 'n':
				opt.count = parse_count(optarg, 1, 1000000, "--count");
				break;
			case 'c':
				if (opt.ncheckpoints == MAX_CHECKPOINTS - 1)
					die("too many --checkpoint");
				opt.checkpoints[opt.ncheckpoints++] =
					parse_count(optarg, 1, 1000000, "--checkpoint");
				break;
			case 's':
				opt.sources = parse_count(optarg, 1, 250, "--sources");
				break;
			case 'i':
				opt.inflight = parse_count(optarg, 1, 100000, "--inflight");
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
