/*
 * wsserver.h
 *		The server's side of the upgrade (RFC 6455, 4.2.2), shared by the
 *		bench's floor servers (fanout_floor_server.c, terminal_floor_server.c):
 *		the 101 answer with the Sec-WebSocket-Accept a real server sends, the
 *		output a socket did not take kept for EPOLLOUT, the listening socket
 *		on loopback, and the stop on SIGTERM or SIGINT.
 *		Header only, with OpenSSL's SHA-1 (libsodium has none).
 */
#ifndef BOTHY_BENCH_WSSERVER_H
#define BOTHY_BENCH_WSSERVER_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <openssl/evp.h>

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

/*
 * The 101 answer to the upgrade request head[0..head_len) into
 * answer[0..cap): its length, or -1 when the request has no key (or the
 * answer does not fit).
 */
static inline int
ws_upgrade_accept(const char *head, size_t head_len, char *answer, size_t cap)
{
	static const char name[] = "\r\nSec-WebSocket-Key:";
	const char *k = NULL;
	size_t		klen = 0;
	char		keyed[128];
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned	dlen = 0;
	unsigned char accept[64];
	int			n;

	for (const char *p = head; p + sizeof(name) - 1 < head + head_len; p++)
		if (strncasecmp(p, name, sizeof(name) - 1) == 0)
		{
			k = p + sizeof(name) - 1;
			break;
		}
	if (k == NULL)
		return -1;
	while (*k == ' ')
		k++;
	while (k + klen < head + head_len && k[klen] != '\r' && k[klen] != ' ')
		klen++;
	n = snprintf(keyed, sizeof(keyed), "%.*s%s", (int) klen, k, WS_GUID);
	if (klen == 0 || n <= 0 || (size_t) n >= sizeof(keyed) ||
		EVP_Digest(keyed, (size_t) n, digest, &dlen, EVP_sha1(), NULL) != 1)
		return -1;
	EVP_EncodeBlock(accept, digest, (int) dlen);
	n = snprintf(answer, cap,
				 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
				 "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", accept);
	return n > 0 && (size_t) n < cap ? n : -1;
}

/* What a non-blocking socket did not take yet. */
typedef struct ws_kept
{
	uint8_t    *data;			/* NULL when nothing is kept */
	size_t		len;
} ws_kept;

/*
 * Sends buf[0..len) on fd, or keeps what the socket did not take after
 * what is kept already (the caller then waits for EPOLLOUT): false when
 * the peer is gone.  Exits when out of memory.
 */
static inline bool
ws_send_or_keep(int fd, ws_kept *k, const uint8_t *buf, size_t len)
{
	ssize_t		n = 0;
	uint8_t    *more;

	if (k->data == NULL)
	{
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return false;
		if (n < 0)
			n = 0;
		if ((size_t) n == len)
			return true;
	}
	if ((more = realloc(k->data, k->len + len - (size_t) n)) == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	memcpy(more + k->len, buf + n, len - (size_t) n);
	k->data = more;
	k->len += len - (size_t) n;
	return true;
}

/* At EPOLLOUT: sends what is kept; false when the peer is gone. */
static inline bool
ws_flush_kept(int fd, ws_kept *k)
{
	ssize_t		n = send(fd, k->data, k->len, MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK;
	memmove(k->data, k->data + n, k->len - (size_t) n);
	k->len -= (size_t) n;
	if (k->len == 0)
	{
		free(k->data);
		k->data = NULL;
	}
	return true;
}

/*
 * Reads what came on fd after buf[0..*len) (at most cap in all): 1 when
 * bytes came, 0 when none is there now, -1 when the peer is gone or buf is
 * full.
 */
static inline int
ws_recv_more(int fd, uint8_t *buf, size_t *len, size_t cap)
{
	ssize_t		n = *len < cap ? recv(fd, buf + *len, cap - *len, 0) : 0;

	if (n == 0)
		return -1;
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
	*len += (size_t) n;
	return 1;
}

/* The length of the upgrade request's head in buf[0..len), its blank line included; 0: not whole yet. */
static inline size_t
ws_request_head(const uint8_t *buf, size_t len)
{
	const uint8_t *end = memmem(buf, len, "\r\n\r\n", 4);

	return end == NULL ? 0 : (size_t) (end + 4 - buf);
}

/* The next connection of lfd, non-blocking: its descriptor, or -1 when none waits. */
static inline int
ws_accept(int lfd)
{
	int			fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED)
	{
		perror("accept");
		exit(1);
	}
	return fd;
}

/* Set by SIGTERM and SIGINT once ws_catch_stop ran: the server's loop ends. */
static volatile sig_atomic_t ws_stopping;

static void
ws_stop(int sig)
{
	(void) sig;
	ws_stopping = 1;
}

static inline void
ws_catch_stop(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ws_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

/*
 * A non-blocking socket listening on 127.0.0.1:port, in the epoll set ep
 * with data.u64 id: its descriptor, or -1.
 */
static inline int
ws_listen_loopback(int ep, long port, uint64_t id)
{
	struct sockaddr_in addr;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = id};
	int			one = 1;
	int			lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons((uint16_t) port);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
		bind(lfd, (struct sockaddr *) &addr, sizeof(addr)) != 0 || listen(lfd, 4096) != 0 ||
		epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) != 0)
		return -1;
	return lfd;
}

#endif							/* BOTHY_BENCH_WSSERVER_H */
