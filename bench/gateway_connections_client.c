/*
 * gateway_connections_client.c
 *		The load client of bench/gateway_connections and
 *		bench/gateway_reconnect_storm: holds up to COUNT WebSocket
 *		connections to one bothy-gateway node (or to a floor server), each a
 *		person on a device of its own, and does what the driver's commands
 *		say: open connections at a pace and identify each, open them and
 *		stop after the upgrade, send every identify or resume at once (a
 *		storm), heartbeat as a real client does, drop them all.
 *
 * One thread, one epoll set, non-blocking sockets, and the WebSocket
 * pieces of wsclient.c (written by hand, RFC 6455), so that the client
 * stays small beside the node it measures.  Each connection needs a
 * distinct device (a second connection of one device is closed with 4017),
 * so each gets its own token, signed here with the gateway's own token and
 * key store code from the node's key store when the connection is opened:
 * a storm sends tokens signed before it, as clients that come back bring
 * theirs.
 *
 * Commands, one a line on stdin; each is answered with one line on stdout
 * once it is done (failures are detailed on stderr):
 *	open K PORT identify	open K more connections to PORT, each sending
 *							identify after its upgrade; at most --inflight
 *							between connect and ready
 *		-> opened TOTAL ready R held H failed F seconds S
 *	open K PORT hold		the same, but each stops after its upgrade
 *	storm identify|resume	every held connection sends identify (its own
 *							token) or resume (the resume token that the
 *							connection of the same number got in ready before
 *							the last drop) at once
 *		-> storm sent K ready R failed F seconds S sending T
 *		   (S: from the first send to the last answer; T: the sends alone)
 *	beat [MS]				every ready connection sends heartbeat every
 *							heartbeat_ms of its ready (or every MS), the first
 *							ones spread evenly over one period
 *		-> beating P
 *	quiet					no more heartbeats
 *		-> quiet heartbeats H acks A
 *	status					-> status ready R failed F ended_after_ready E
 *							   heartbeats H acks A (since the last beat)
 *	drop					close every connection (resume tokens are kept)
 *		-> dropped D
 * A ready connection that ends counts as failed (ended_after_ready).
 * Each connection binds one of --sources loopback source addresses
 * (127.0.0.2, 127.0.0.3, ...): see ws_connect.  The end of stdin ends the
 * client.
 *
 *   gateway_connections_client --keys DIR --count N [--sources S] [--inflight M]
 */
#define _GNU_SOURCE				/* memmem, strndup */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "keys/keystore.h"
#include "keys/token.h"
#include "uuid.h"
#include "wsclient.h"

#define PROG "gateway_connections_client"

/* The handshake response and the ready frame fit in this (ready is < 1.5 kB). */
#define RX_MAX 4096
/* A command that makes no progress for this long ends the run. */
#define STALL_S 60
#define STDIN_ID UINT64_MAX

typedef enum conn_state
{
	CS_FREE = 0,				/* not opened in this generation */
	CS_CONNECTING,				/* connect sent, waiting for writable */
	CS_UPGRADING,				/* upgrade request sent, reading the response */
	CS_HELD,					/* upgraded, waiting for the storm */
	CS_IDENTIFYING,				/* identify or resume sent, reading until ready */
	CS_READY,					/* identified; heartbeats and their acks */
	CS_DONE						/* failed or closed: fd closed */
} conn_state;

typedef struct conn
{
	int			fd;
	uint8_t		state;			/* conn_state */
	bool		identify_at_upgrade;	/* opened with "identify", not "hold" */
	uint16_t	rx_len;
	char	   *rx;				/* RX_MAX: bytes read and not used yet */
	char	   *token;			/* the identify token signed at open, until sent */
	char	   *resume;			/* the resume token of the last ready of this number */
	double		beat_due;		/* next heartbeat (monotonic seconds) */
} conn;

/* Why connections ended (stderr, at each answer that counts failures). */
typedef struct failures
{
	unsigned	connect;		/* socket, bind, connect or a socket error */
	unsigned	refused;		/* the upgrade was not answered with 101 */
	unsigned	protocol;		/* a frame this client did not expect */
	unsigned	error_op;		/* {"op":"error"}: the identify's database call failed */
	unsigned	eof;			/* the node closed the socket without a close frame */
	unsigned	after_ready;	/* ready connections that ended */
	unsigned	no_token;		/* resume with no token of that number */
	unsigned	close_code[5000];	/* close frames by code */
} failures;

static struct
{
	const char *keys;
	long		count;
	long		sources;
	long		inflight;
} opt = {NULL, 0, 4, 200};

static bothy_keystore *ks;
static conn *conns;
static int	ep;
static long opened;				/* connections started in this generation */
static long ready;
static long held;
static long failed;
static long inflight;			/* started and not yet where the command wants them */
static failures why;

/* The command being carried out. */
static enum
{
	CMD_NONE = 0,
	CMD_OPEN,
	CMD_STORM
}			cmd;
static long cmd_target;			/* CMD_OPEN: open this many in all */
static int	cmd_port;
static bool cmd_identify;		/* CMD_OPEN: identify after the upgrade */
static double cmd_start;
static long storm_sent;
static double storm_sending;	/* seconds the sends of a storm took */
static long storm_waiting;		/* sent and not answered yet */

/* Heartbeats: the ready connections in the order of their next one. */
static long *beat_ring;
static long beat_n;
static long beat_head;
static bool beating;
static long heartbeat_ms;		/* announced in ready */
static unsigned long beats_sent;
static unsigned long acks;

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
	fprintf(stderr, PROG ": %s\n", what);
	exit(1);
}

static void
answer(const char *fmt,...) __attribute__((format(printf, 1, 2)));

static void
answer(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void
end_conn(conn *c, unsigned *reason)
{
	if (c->state == CS_DONE || c->state == CS_FREE)
		return;
	if (c->state == CS_READY)
	{
		ready--;
		why.after_ready++;
	}
	else if (c->state == CS_HELD)
		held--;
	else
	{
		inflight--;
		if (c->state == CS_IDENTIFYING && cmd == CMD_STORM)
			storm_waiting--;
	}
	if (reason != NULL)
		(*reason)++;
	failed++;
	close(c->fd);
	c->fd = -1;
	free(c->rx);
	c->rx = NULL;
	free(c->token);
	c->token = NULL;
	c->state = CS_DONE;
}

/* A fresh person device's identify token. */
static char *
sign_identify(void)
{
	bothy_token t;
	char		token[BOTHY_TOKEN_MAX + 1];

	memset(&t, 0, sizeof(t));
	t.kind = BOTHY_TOKEN_PERSON_DEVICE;
	ws_random_uuid(&t.person);
	ws_random_uuid(&t.device);
	t.expires_at = (int64_t) time(NULL) + WS_TOKEN_TTL_S;
	if (!bothy_token_sign(ks, &t, token, sizeof(token)))
		die("a token could not be signed");
	return strdup(token);
}

static void
open_one(void)
{
	long		id = opened++;
	conn	   *c = &conns[id];
	struct epoll_event ev;

	c->state = CS_CONNECTING;
	c->identify_at_upgrade = cmd_identify;
	c->rx_len = 0;
	c->rx = malloc(RX_MAX);
	c->token = sign_identify();
	if (c->rx == NULL || c->token == NULL)
		die("out of memory");
	inflight++;
	c->fd = ws_connect(cmd_port, id % opt.sources);
	if (c->fd < 0)
	{
		end_conn(c, &why.connect);
		return;
	}
	ev.events = EPOLLOUT;
	ev.data.u64 = (uint64_t) id;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
		end_conn(c, &why.connect);
}

static void
connected(conn *c, uint64_t id)
{
	struct epoll_event ev;

	ev.events = EPOLLIN;
	ev.data.u64 = id;
	if (!ws_connected(c->fd) || !ws_send_upgrade(c->fd, cmd_port) ||
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) != 0)
	{
		end_conn(c, &why.connect);
		return;
	}
	c->state = CS_UPGRADING;
}

/* Sends {"op":OP,"token":T}; false on failure. */
static bool
send_token_op(conn *c, const char *op, const char *token)
{
	char		msg[BOTHY_TOKEN_MAX + 64];
	int			n = snprintf(msg, sizeof(msg), "{\"op\":\"%s\",\"token\":\"%s\"}", op, token);

	return n > 0 && (size_t) n < sizeof(msg) && ws_send_text(c->fd, msg, (size_t) n);
}

/* The string member name of a JSON text, copied; NULL when absent. */
static char *
member_string(const char *json, size_t len, const char *name)
{
	char		key[32];
	const char *p,
			   *end;
	int			n = snprintf(key, sizeof(key), "\"%s\":\"", name);

	p = memmem(json, len, key, (size_t) n);
	if (p == NULL)
		return NULL;
	p += n;
	end = memchr(p, '"', (size_t) (json + len - p));
	return end == NULL ? NULL : strndup(p, (size_t) (end - p));
}

static void
became_ready(conn *c, long id, const char *payload, size_t plen)
{
	const char *hb = memmem(payload, plen, "\"heartbeat_ms\":", 15);

	free(c->resume);
	c->resume = member_string(payload, plen, "resume");
	if (hb != NULL)
		heartbeat_ms = strtol(hb + 15, NULL, 10);
	c->state = CS_READY;
	inflight--;
	ready++;
	if (cmd == CMD_STORM)
		storm_waiting--;
	(void) id;
}

/*
 * The whole frames at the start of c->rx: ready ends identifying, a
 * heartbeat_ack is counted, a close or anything unexpected ends the
 * connection.
 */
static void
frames(conn *c, long id)
{
	for (;;)
	{
		const uint8_t *b = (const uint8_t *) c->rx;
		int			opcode = 0;
		size_t		off = 0;
		size_t		plen = 0;
		long		n = ws_frame_parse(b, c->rx_len, RX_MAX, &opcode, &off, &plen);
		const char *p = c->rx + off;

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
		if (opcode != 1)
		{
			end_conn(c, &why.protocol);
			return;
		}
		if (c->state == CS_IDENTIFYING && plen >= 13 && memcmp(p, "{\"op\":\"ready\"", 13) == 0)
			became_ready(c, id, p, plen);
		else if (c->state == CS_READY && plen == 22 && memcmp(p, "{\"op\":\"heartbeat_ack\"}", 22) == 0)
			acks++;
		else if (c->state == CS_IDENTIFYING && plen >= 13 && memcmp(p, "{\"op\":\"error\"", 13) == 0)
		{
			end_conn(c, &why.error_op);
			return;
		}
		else if (c->state != CS_READY)
		{
			end_conn(c, &why.protocol);
			return;
		}
		memmove(c->rx, c->rx + n, c->rx_len - (size_t) n);
		c->rx_len = (uint16_t) (c->rx_len - n);
	}
}

static void
readable(conn *c, long id)
{
	ssize_t		n = recv(c->fd, c->rx + c->rx_len, RX_MAX - c->rx_len, 0);

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
		if (!c->identify_at_upgrade)
		{
			c->state = CS_HELD;
			inflight--;
			held++;
			return;
		}
		if (!send_token_op(c, "identify", c->token))
		{
			end_conn(c, &why.connect);
			return;
		}
		free(c->token);
		c->token = NULL;
		c->state = CS_IDENTIFYING;
	}
	if (c->rx_len == RX_MAX)
		end_conn(c, &why.protocol);
	else
		frames(c, id);
}

static void
print_failures(void)
{
	unsigned	i;

	if (failed == 0)
		return;
	fprintf(stderr, PROG ": %ld failed: connect %u, refused %u, protocol %u, error %u, "
			"eof %u, after ready %u, no resume token %u",
			failed, why.connect, why.refused, why.protocol, why.error_op, why.eof,
			why.after_ready, why.no_token);
	for (i = 0; i < 5000; i++)
		if (why.close_code[i] > 0)
			fprintf(stderr, ", close %u: %u", i, why.close_code[i]);
	fprintf(stderr, "\n");
}

/* --- the storm ------------------------------------------------------------ */

static void
storm(bool resume)
{
	long		i;
	double		t0 = now_s();

	cmd = CMD_STORM;
	cmd_start = t0;
	storm_sent = 0;
	storm_waiting = 0;
	for (i = 0; i < opened; i++)
	{
		conn	   *c = &conns[i];
		bool		ok;

		if (c->state != CS_HELD)
			continue;
		if (resume && c->resume == NULL)
		{
			end_conn(c, &why.no_token);
			continue;
		}
		ok = send_token_op(c, resume ? "resume" : "identify", resume ? c->resume : c->token);
		held--;
		inflight++;
		c->state = CS_IDENTIFYING;
		storm_sent++;
		storm_waiting++;
		if (!ok)
		{
			end_conn(c, &why.connect);
			continue;
		}
		free(c->token);
		c->token = NULL;
	}
	storm_sending = now_s() - t0;
}

/* --- heartbeats ----------------------------------------------------------- */

static const double *beat_key;

static int
by_phase(const void *a, const void *b)
{
	double		x = beat_key[*(const long *) a],
				y = beat_key[*(const long *) b];

	return x < y ? -1 : x > y;
}

/*
 * The first heartbeat of connection i comes after the fraction
 * frac(i * golden ratio) of one period: spread evenly, as the heartbeats
 * of clients that connected at different times are.
 */
static void
beat_start(void)
{
	double		now = now_s();
	double		period = (double) heartbeat_ms / 1000.0;
	double	   *phase = malloc((size_t) opened * sizeof(double));
	long		i;

	free(beat_ring);
	beat_ring = malloc((size_t) (opened + 1) * sizeof(long));
	if (phase == NULL || beat_ring == NULL)
		die("out of memory");
	beat_n = 0;
	for (i = 0; i < opened; i++)
	{
		double		f = (double) i * 0.6180339887498949;

		phase[i] = f - (double) (long) f;
		if (conns[i].state == CS_READY)
		{
			conns[i].beat_due = now + period * phase[i];
			beat_ring[beat_n++] = i;
		}
	}
	beat_key = phase;
	qsort(beat_ring, (size_t) beat_n, sizeof(long), by_phase);
	free(phase);
	beat_head = 0;
	beating = heartbeat_ms > 0 && beat_n > 0;
}

/* Sends what is due; the seconds until the next one (-1: none). */
static double
beat_due(void)
{
	double		now = now_s();
	long		k;

	if (!beating)
		return -1;
	for (k = 0; k < beat_n; k++)
	{
		conn	   *c = &conns[beat_ring[beat_head]];

		if (c->state == CS_READY && c->beat_due > now)
			return c->beat_due - now;
		if (c->state == CS_READY)
		{
			if (ws_send_text(c->fd, "{\"op\":\"heartbeat\"}", 18))
				beats_sent++;
			else
				end_conn(c, &why.connect);
			c->beat_due += (double) heartbeat_ms / 1000.0;
		}
		beat_head = (beat_head + 1) % beat_n;
	}
	return -1;
}

/* --- commands ------------------------------------------------------------- */

static void
drop_all(void)
{
	long		i,
				was_open = 0;

	for (i = 0; i < opened; i++)
	{
		conn	   *c = &conns[i];

		if (c->state != CS_DONE && c->state != CS_FREE)
		{
			was_open++;
			close(c->fd);
		}
		free(c->rx);
		free(c->token);
		c->fd = -1;
		c->rx = NULL;
		c->token = NULL;
		c->state = CS_FREE;
	}
	opened = ready = held = failed = inflight = 0;
	beating = false;
	memset(&why, 0, sizeof(why));
	answer("dropped %ld", was_open);
}

static void
command(char *line)
{
	char		what[16],
				mode[16];
	long		k = 0;
	int			port = 0;

	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "open %ld %d %15s", &k, &port, mode) == 3)
	{
		if (k < 1 || opened + k > opt.count || port < 1 || port > 65535 ||
			(strcmp(mode, "identify") != 0 && strcmp(mode, "hold") != 0))
			die("bad open command");
		cmd = CMD_OPEN;
		cmd_target = opened + k;
		cmd_port = port;
		cmd_identify = strcmp(mode, "identify") == 0;
		cmd_start = now_s();
	}
	else if (sscanf(line, "storm %15s", what) == 1 &&
			 (strcmp(what, "identify") == 0 || strcmp(what, "resume") == 0))
		storm(strcmp(what, "resume") == 0);
	else if (strcmp(line, "beat") == 0 || sscanf(line, "beat %ld", &k) == 1)
	{
		if (k > 0)
			heartbeat_ms = k;
		beats_sent = acks = 0;
		beat_start();
		answer("beating %ld", heartbeat_ms);
	}
	else if (strcmp(line, "quiet") == 0)
	{
		beating = false;
		answer("quiet heartbeats %lu acks %lu", beats_sent, acks);
	}
	else if (strcmp(line, "status") == 0)
	{
		print_failures();
		answer("status ready %ld failed %ld ended_after_ready %u heartbeats %lu acks %lu",
			   ready, failed, why.after_ready, beats_sent, acks);
	}
	else if (strcmp(line, "drop") == 0)
		drop_all();
	else
		die("unknown command");
}

/* A command whose connections have all arrived is answered. */
static void
command_done(void)
{
	if (cmd == CMD_OPEN && opened == cmd_target && inflight == 0)
	{
		print_failures();
		answer("opened %ld ready %ld held %ld failed %ld seconds %.3f",
			   opened, ready, held, failed, now_s() - cmd_start);
		cmd = CMD_NONE;
	}
	else if (cmd == CMD_STORM && storm_waiting == 0)
	{
		print_failures();
		answer("storm sent %ld ready %ld failed %ld seconds %.3f sending %.3f",
			   storm_sent, ready, failed, now_s() - cmd_start, storm_sending);
		cmd = CMD_NONE;
	}
}

static void
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"keys", required_argument, NULL, 'k'},
		{"count", required_argument, NULL, 'n'},
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
				opt.count = ws_parse_count(PROG, optarg, 1, 1000000, "--count");
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
	if (opt.keys == NULL || opt.count == 0)
		die("usage: --keys DIR --count N [--sources S] [--inflight M]");
}

int
main(int argc, char **argv)
{
	struct epoll_event events[256];
	struct epoll_event ev;
	char		err[256];
	char		line[128];
	size_t		line_len = 0;
	double		progress;
	long		last_done = 0;

	parse_args(argc, argv);
	ks = bothy_keystore_open(opt.keys, err, sizeof(err));
	if (ks == NULL)
		die(err);
	conns = calloc((size_t) opt.count, sizeof(conn));
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (conns == NULL || ep < 0)
		die("out of memory");
	fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
	ev.events = EPOLLIN;
	ev.data.u64 = STDIN_ID;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, STDIN_FILENO, &ev) != 0)
		die("stdin cannot be waited for");
	progress = now_s();
	for (;;)
	{
		double		wait = beat_due();
		int			timeout = wait < 0 ? 1000 : (int) (wait * 1000.0) + 1;
		int			n;
		int			i;

		while (cmd == CMD_OPEN && opened < cmd_target && inflight < opt.inflight)
			open_one();
		command_done();
		n = epoll_wait(ep, events, (int) (sizeof(events) / sizeof(events[0])),
					   timeout > 1000 ? 1000 : timeout);
		if (n < 0 && errno != EINTR)
			die("epoll_wait failed");
		for (i = 0; i < n; i++)
		{
			uint64_t	id = events[i].data.u64;
			conn	   *c;

			if (id == STDIN_ID)
			{
				ssize_t		r;

				while ((r = read(STDIN_FILENO, line + line_len, 1)) == 1)
				{
					if (line[line_len] == '\n' || line_len == sizeof(line) - 2)
					{
						line[line_len + 1] = '\0';
						line_len = 0;
						command(line);
					}
					else
						line_len++;
				}
				if (r == 0)
				{
					bothy_keystore_close(ks);
					return failed > 0 ? 1 : 0;
				}
				continue;
			}
			c = &conns[id];
			if (c->state == CS_CONNECTING)
				connected(c, id);
			else if (c->state != CS_DONE && c->state != CS_FREE)
				readable(c, (long) id);
		}
		if (cmd == CMD_NONE || ready + held + failed != last_done)
		{
			last_done = ready + held + failed;
			progress = now_s();
		}
		else if (now_s() - progress > STALL_S)
		{
			print_failures();
			die("no connection got ready or failed for a minute");
		}
	}
}
