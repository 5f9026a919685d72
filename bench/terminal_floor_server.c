/*
 * terminal_floor_server.c
 *		The floor of bench/terminal_relay: a WebSocket server that does only
 *		what any relay of terminal bytes cannot avoid, so that the same bytes
 *		through the same edge can be timed without a gateway, a database or
 *		a token in the way.
 *
 * One thread, one epoll set.  It answers the upgrade, pairs the two
 * connections of one path (the first text message of each, whatever it
 * says, is answered {"op":"waiting"} or, for the second, {"op":"paired"}
 * to both), and passes every binary message of one to the other, unmasked
 * and framed again, whole.  Its backpressure is ttyd's: a connection is
 * read no more while its counterpart holds bytes the socket did not take.
 * A connection that ends ends its pairing.
 *
 *   terminal_floor_server --port P
 *
 * Runs until SIGTERM or SIGINT.
 */
#define _GNU_SOURCE				/* accept4, memmem */
#include <errno.h>
#include <getopt.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wsframe.h"
#include "wsserver.h"

#define PROG "terminal_floor_server"
#define RX_MAX (64 * 1024 + 16)	/* one read, and the largest frame the bench sends */
#define PATH_MAX_BYTES 96
#define LISTEN_ID UINT64_MAX

typedef enum conn_state
{
	FS_UPGRADE = 0,				/* reading the upgrade request */
	FS_IDENTIFY,				/* waiting for the first text message */
	FS_RELAY					/* identified: waiting or paired */
} conn_state;

typedef struct conn
{
	int			fd;
	conn_state	state;
	bool		reading;		/* EPOLLIN armed */
	struct conn *peer;			/* its counterpart, once paired */
	struct conn *next;			/* the identified connections still alone */
	char		path[PATH_MAX_BYTES];
	size_t		rx_len;
	uint8_t		rx[RX_MAX];
	ws_kept		tx;				/* what a write did not take */
} conn;

static int	ep;
static conn *alone;				/* identified, no counterpart yet */

static void
die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", PROG, what, strerror(errno));
	exit(1);
}

static void
arm(conn *c)
{
	struct epoll_event ev = {.events = (c->reading ? EPOLLIN : 0) | (c->tx.data ? EPOLLOUT : 0),
	.data.ptr = c};

	if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) != 0)
		die("epoll_ctl");
}

/* Writes buf whole, or keeps the rest for EPOLLOUT; false: the peer is gone. */
static bool
send_or_keep(conn *c, const uint8_t *buf, size_t len)
{
	bool		had = c->tx.data != NULL;

	if (!ws_send_or_keep(c->fd, &c->tx, buf, len))
		return false;
	if (!had && c->tx.data != NULL)
		arm(c);
	return true;
}

static void
unlink_alone(conn *c)
{
	for (conn **p = &alone; *p != NULL; p = &(*p)->next)
		if (*p == c)
		{
			*p = c->next;
			return;
		}
}

static void
end_conn(conn *c)
{
	unlink_alone(c);
	if (c->peer != NULL)
	{
		/* its counterpart is read again, and alone: it ends too (no second pairing here) */
		c->peer->peer = NULL;
		shutdown(c->peer->fd, SHUT_RDWR);
	}
	close(c->fd);
	free(c->tx.data);
	free(c);
}

static bool
send_text(conn *c, const char *text)
{
	uint8_t		f[64];
	size_t		len = strlen(text);

	f[0] = 0x81;
	f[1] = (uint8_t) len;
	memcpy(f + 2, text, len);
	return send_or_keep(c, f, 2 + len);
}

/* The first text message: alone, or paired with the one of its path. */
static bool
identified(conn *c)
{
	c->state = FS_RELAY;
	for (conn *o = alone; o != NULL; o = o->next)
		if (strcmp(o->path, c->path) == 0)
		{
			unlink_alone(o);
			o->peer = c;
			c->peer = o;
			return send_text(o, "{\"op\":\"paired\"}") && send_text(c, "{\"op\":\"paired\"}");
		}
	c->next = alone;
	alone = c;
	return send_text(c, "{\"op\":\"waiting\"}");
}

/* One whole client frame at b: a binary one goes to the counterpart. */
static bool
frame(conn *c, uint8_t *b, size_t off, size_t plen)
{
	uint8_t		h[4];
	size_t		hl = 2;
	int			op = b[0] & 0x0f;

	if (op == 8)
		return false;			/* close */
	if (c->state == FS_IDENTIFY)
		return op == 1 && identified(c);
	if (op != 2 || c->peer == NULL)
		return true;			/* no counterpart: dropped, as by the relay */
	for (size_t i = 0; i < plen; i++)
		b[off + i] ^= b[off - 4 + (i & 3)];
	h[0] = 0x82;
	if (plen < 126)
		h[1] = (uint8_t) plen;
	else
	{
		h[1] = 126;
		h[2] = (uint8_t) (plen >> 8);
		h[3] = (uint8_t) plen;
		hl = 4;
	}
	if (!send_or_keep(c->peer, h, hl) || !send_or_keep(c->peer, b + off, plen))
		shutdown(c->peer->fd, SHUT_RDWR);
	else if (c->peer->tx.data != NULL)
	{
		/* one buffer in flight: read no more until the counterpart took it */
		c->reading = false;
		arm(c);
	}
	return true;
}

static bool
upgraded(conn *c, size_t head_len)
{
	char		answer[256];
	int			n = ws_upgrade_accept((char *) c->rx, head_len, answer, sizeof(answer));
	const char *p = (char *) c->rx + 4,
			   *sp;

	if (n <= 0 || strncmp((char *) c->rx, "GET ", 4) != 0 ||
		(sp = memchr(p, ' ', head_len - 4)) == NULL || (size_t) (sp - p) >= PATH_MAX_BYTES)
		return false;
	memcpy(c->path, p, (size_t) (sp - p));
	c->path[sp - p] = '\0';
	c->state = FS_IDENTIFY;
	return send_or_keep(c, (uint8_t *) answer, (size_t) n);
}

/* Reads what came; false when the connection is over. */
static bool
readable(conn *c)
{
	while (c->reading)
	{
		int			r = ws_recv_more(c->fd, c->rx, &c->rx_len, RX_MAX);
		size_t		at = 0;

		if (r <= 0)
			return r == 0;
		if (c->state == FS_UPGRADE)
		{
			if ((at = ws_request_head(c->rx, c->rx_len)) == 0)
				continue;
			if (!upgraded(c, at))
				return false;
		}
		for (;;)
		{
			size_t		off = 0,
						plen = 0;
			int			r = ws_frame_lengths(c->rx + at, c->rx_len - at, &off, &plen);

			if (r < 0 || (r == 1 && off + plen > RX_MAX))
				return false;
			if (r == 0 || c->rx_len - at < off + plen)
				break;
			if (!frame(c, c->rx + at, off, plen))
				return false;
			at += off + plen;
		}
		c->rx_len -= at;
		memmove(c->rx, c->rx + at, c->rx_len);
	}
	return true;
}

static bool
flush_kept(conn *c)
{
	if (!ws_flush_kept(c->fd, &c->tx))
		return false;
	if (c->tx.data != NULL)
		return true;
	arm(c);
	if (c->peer != NULL && !c->peer->reading)
	{
		c->peer->reading = true;
		arm(c->peer);
		if (!readable(c->peer))
			shutdown(c->peer->fd, SHUT_RDWR);
	}
	return true;
}

static void
accept_all(int lfd)
{
	for (;;)
	{
		int			fd = ws_accept(lfd);
		int			one = 1;
		conn	   *c;
		struct epoll_event ev = {.events = EPOLLIN};

		if (fd < 0)
			return;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if ((c = calloc(1, sizeof(*c))) == NULL)
			die("out of memory");
		c->fd = fd;
		c->reading = true;
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
		{NULL, 0, NULL, 0}
	};
	long		port = 0;
	int			opt,
				lfd;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1)
	{
		char	   *end;

		if (opt != 'p')
			return 2;
		port = strtol(optarg, &end, 10);
		if (*end != '\0' || port < 1 || port > 65535)
			port = 0;
	}
	if (port == 0 || optind != argc)
	{
		fprintf(stderr, "usage: %s --port P\n", PROG);
		return 2;
	}
	ws_catch_stop();
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		die("epoll_create1");
	if ((lfd = ws_listen_loopback(ep, port, LISTEN_ID)) < 0)
		die("listen");
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
			else if (((evs[i].events & EPOLLOUT) && !flush_kept(c)) ||
					 ((evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) && !readable(c)))
				end_conn(c);
		}
	}
	return 0;
}
