/*
 * fanout_floor_server.c
 *		The floor of bench/gateway_fanout_multi and bench/peer_socketio: a
 *		WebSocket server that does nothing but what a node cannot avoid when
 *		one event reaches all its subscribers, so that the same deliveries
 *		(through the same edge, or to the same client) can be timed without a
 *		gateway, a database or a signal in the way.
 *
 * One thread, one epoll set.  It answers the upgrade (RFC 6455, with the
 * Sec-WebSocket-Accept a real server sends), takes the client's first frame
 * (the identify) and answers {"op":"ready","node":NODE}, which is all the
 * bench client needs to count the connection as a subscriber of this node;
 * any later frame (a heartbeat) is answered with heartbeat_ack.
 * Each line read from the command FIFO is one event: its text goes, as one
 * prepared unmasked text frame, to every ready connection in one pass (a
 * write that the socket does not take whole waits for EPOLLOUT).  A
 * connection that ends is closed.  The driver writes the same line, the same run document a node
 * would send with its sent_ns, to both floor servers at once.
 *
 *   fanout_floor_server --port P --node UUID --commands FIFO
 *
 * Runs until SIGTERM or SIGINT.
 */
#define _GNU_SOURCE				/* accept4, memmem */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wsframe.h"
#include "wsserver.h"

#define PROG "fanout_floor_server"
#define RX_MAX 4096				/* an upgrade request or an identify frame */
#define LINE_MAX_BYTES 4096		/* one event */
#define LISTEN_ID UINT64_MAX
#define FIFO_ID (UINT64_MAX - 1)

typedef enum conn_state
{
	FS_UPGRADE = 0,				/* reading the upgrade request */
	FS_IDENTIFY,				/* waiting for the first frame */
	FS_READY
} conn_state;

typedef struct conn
{
	int			fd;
	conn_state	state;
	size_t		ready_at;		/* FS_READY: its index in ready[] */
	size_t		rx_len;
	char		rx[RX_MAX];
	ws_kept		tx;				/* what a write did not take */
} conn;

static int	ep;
static const char *node_id;
static conn **ready;			/* the ready connections, for the one pass */
static size_t nready;
static size_t ready_cap;

static void
die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", PROG, what, strerror(errno));
	exit(1);
}

static void
end_conn(conn *c)
{
	if (c->state == FS_READY)
	{
		ready[c->ready_at] = ready[--nready];
		ready[c->ready_at]->ready_at = c->ready_at;
	}
	close(c->fd);
	free(c->tx.data);
	free(c);
}

/* Writes buf whole, or keeps the rest for EPOLLOUT; false: the peer is gone. */
static bool
send_or_keep(conn *c, const uint8_t *buf, size_t len)
{
	bool		had = c->tx.data != NULL;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};

	if (!ws_send_or_keep(c->fd, &c->tx, buf, len))
		return false;
	return had || c->tx.data == NULL || epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) == 0;
}

static bool
flush_kept(conn *c)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};

	if (!ws_flush_kept(c->fd, &c->tx))
		return false;
	return c->tx.data != NULL || epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) == 0;
}

/* text[0..len), len < LINE_MAX_BYTES, as one unmasked text frame into f; its length. */
static size_t
text_frame(uint8_t f[4 + LINE_MAX_BYTES], const char *text, size_t len)
{
	size_t		h = 2;

	f[0] = 0x81;
	if (len < 126)
		f[1] = (uint8_t) len;
	else
	{
		f[1] = 126;
		f[2] = (uint8_t) (len >> 8);
		f[3] = (uint8_t) len;
		h = 4;
	}
	memcpy(f + h, text, len);
	return h + len;
}

/* The upgrade request is whole in c->rx: answer 101, or false to refuse. */
static bool
answer_upgrade(conn *c, size_t head_len)
{
	char		answer[256];
	int			n = ws_upgrade_accept(c->rx, head_len, answer, sizeof(answer));

	return n > 0 && send_or_keep(c, (uint8_t *) answer, (size_t) n);
}

/*
 * The size of the first whole client frame in b[0..len): 0 when more bytes
 * are needed, -1 for a frame no client of the bench sends.
 */
static long
client_frame_size(const uint8_t *b, size_t len)
{
	size_t		off = 0;
	size_t		plen = 0;
	int			r = ws_frame_lengths(b, len, &off, &plen);

	if (r <= 0)
		return r;
	return len < off + plen ? 0 : (long) (off + plen);
}

static bool
become_ready(conn *c)
{
	char		msg[128];
	int			n = snprintf(msg, sizeof(msg), "{\"op\":\"ready\",\"node\":\"%s\"}", node_id);
	uint8_t		f[4 + LINE_MAX_BYTES];

	if (nready == ready_cap)
	{
		conn	  **r = realloc(ready, (ready_cap ? 2 * ready_cap : 1024) * sizeof(*r));

		if (r == NULL)
			die("out of memory");
		ready = r;
		ready_cap = ready_cap ? 2 * ready_cap : 1024;
	}
	c->state = FS_READY;
	c->ready_at = nready;
	ready[nready++] = c;
	return send_or_keep(c, f, text_frame(f, msg, (size_t) n));
}

/*
 * FS_READY: each whole frame is answered with heartbeat_ack, a heartbeat
 * being the one op a client of the benches sends once ready
 * (bench/gateway_connections measures an idle node's CPU against this).
 */
static bool
answer_heartbeats(conn *c)
{
	static const char ack[] = "\x81\x16{\"op\":\"heartbeat_ack\"}";
	long		f;

	while ((f = client_frame_size((uint8_t *) c->rx, c->rx_len)) > 0)
	{
		if (!send_or_keep(c, (const uint8_t *) ack, sizeof(ack) - 1))
			return false;
		c->rx_len -= (size_t) f;
		memmove(c->rx, c->rx + f, c->rx_len);
	}
	return f == 0 && c->rx_len < RX_MAX;
}

/* Reads what came; false when the connection is over. */
static bool
readable(conn *c)
{
	for (;;)
	{
		int			r = ws_recv_more(c->fd, (uint8_t *) c->rx, &c->rx_len, RX_MAX);

		if (r <= 0)
			return r == 0;
		if (c->state == FS_UPGRADE)
		{
			size_t		head = ws_request_head((uint8_t *) c->rx, c->rx_len);

			if (head == 0)
				continue;
			if (!answer_upgrade(c, head))
				return false;
			c->rx_len -= head;
			memmove(c->rx, c->rx + head, c->rx_len);
			c->state = FS_IDENTIFY;
		}
		if (c->state == FS_IDENTIFY)
		{
			long		f = client_frame_size((uint8_t *) c->rx, c->rx_len);

			if (f < 0)
				return false;
			if (f == 0)
			{
				if (c->rx_len == RX_MAX)
					return false;
				continue;
			}
			if (!become_ready(c))
				return false;
			c->rx_len -= (size_t) f;
			memmove(c->rx, c->rx + f, c->rx_len);
		}
		if (!answer_heartbeats(c))
			return false;
	}
}

/* One event line to every ready connection, in one pass. */
static void
broadcast(const char *text, size_t len)
{
	uint8_t		f[4 + LINE_MAX_BYTES];
	size_t		flen = text_frame(f, text, len);

	for (size_t i = 0; i < nready; i++)
	{
		/*
		 * A peer that is gone is shut down, not freed: an event of this
		 * epoll batch may still name it; its read then ends it.
		 */
		if (!send_or_keep(ready[i], f, flen))
			shutdown(ready[i]->fd, SHUT_RDWR);
	}
}

static void
read_commands(int fd)
{
	static char line[LINE_MAX_BYTES];
	static size_t have;

	for (;;)
	{
		ssize_t		n = read(fd, line + have, sizeof(line) - have);
		char	   *nl;

		if (n <= 0)
		{
			if (n < 0 && errno != EAGAIN)
				die("read the commands");
			return;
		}
		have += (size_t) n;
		while ((nl = memchr(line, '\n', have)) != NULL)
		{
			broadcast(line, (size_t) (nl - line));
			have -= (size_t) (nl + 1 - line);
			memmove(line, nl + 1, have);
		}
		if (have == sizeof(line))
		{
			fprintf(stderr, "%s: a command line longer than %d bytes\n", PROG, LINE_MAX_BYTES);
			exit(1);
		}
	}
}

static void
accept_all(int lfd)
{
	for (;;)
	{
		int			fd = ws_accept(lfd);
		conn	   *c;
		struct epoll_event ev = {.events = EPOLLIN};

		if (fd < 0)
			return;
		if ((c = calloc(1, sizeof(*c))) == NULL)
			die("out of memory");
		c->fd = fd;
		ev.data.ptr = c;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
			die("epoll_ctl");
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"port", required_argument, NULL, 'p'},
		{"node", required_argument, NULL, 'n'},
		{"commands", required_argument, NULL, 'c'},
		{NULL, 0, NULL, 0}
	};
	long		port = 0;
	const char *fifo = NULL;
	int			opt;
	int			lfd;
	int			cfd;
	struct epoll_event ev = {.events = EPOLLIN};

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1)
	{
		char	   *end;

		if (opt == 'p')
		{
			port = strtol(optarg, &end, 10);
			if (*end != '\0' || port < 1 || port > 65535)
				port = 0;
		}
		else if (opt == 'n')
			node_id = optarg;
		else if (opt == 'c')
			fifo = optarg;
		else
			return 2;
	}
	if (port == 0 || node_id == NULL || strlen(node_id) != 36 || fifo == NULL || optind != argc)
	{
		fprintf(stderr, "usage: %s --port P --node UUID --commands FIFO\n", PROG);
		return 2;
	}
	ws_catch_stop();
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		die("epoll_create1");
	/* O_RDWR: the FIFO never reads EOF between the driver's writes */
	if ((cfd = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0)
		die("open the commands");
	if ((lfd = ws_listen_loopback(ep, port, LISTEN_ID)) < 0)
		die("listen");
	ev.data.u64 = FIFO_ID;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ev) != 0)
		die("epoll_ctl");

	while (!ws_stopping)
	{
		struct epoll_event evs[256];
		int			n = epoll_wait(ep, evs, 256, -1);

		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		for (int i = 0; i < n; i++)
		{
			conn	   *c = evs[i].data.ptr;

			if (evs[i].data.u64 == LISTEN_ID)
				accept_all(lfd);
			else if (evs[i].data.u64 == FIFO_ID)
				read_commands(cfd);
			else if (((evs[i].events & EPOLLOUT) && !flush_kept(c)) ||
					 ((evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) && !readable(c)))
				end_conn(c);
		}
	}
	return 0;
}
