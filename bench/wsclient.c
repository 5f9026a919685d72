/*
 * wsclient.c
 *		The WebSocket client pieces of the bench load clients (see wsclient.h).
 */
#define _GNU_SOURCE				/* memmem */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "intparse.h"
#include "keys/token.h"
#include "wsclient.h"
#include "wsframe.h"

int
ws_connect(int port, long source)
{
	struct sockaddr_in src;
	struct sockaddr_in dst;
	int			one = 1;
	int			fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memset(&src, 0, sizeof(src));
	src.sin_family = AF_INET;
	src.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1 + (uint32_t) source);
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	dst.sin_port = htons((uint16_t) port);
	if (setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one)) != 0 ||
		bind(fd, (struct sockaddr *) &src, sizeof(src)) != 0 ||
		(connect(fd, (struct sockaddr *) &dst, sizeof(dst)) != 0 && errno != EINPROGRESS))
	{
		close(fd);
		return -1;
	}
	return fd;
}

bool
ws_connected(int fd)
{
	int			err = 0;
	socklen_t	errlen = sizeof(err);

	return getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) == 0 && err == 0;
}

bool
ws_send_all(int fd, const void *buf, size_t len)
{
	return send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t) len;
}

bool
ws_send_upgrade(int fd, int port)
{
	return ws_send_upgrade_path(fd, port, "/gateway", NULL);
}

bool
ws_send_upgrade_path(int fd, int port, const char *path, const char *subprotocol)
{
	char		req[384];
	uint8_t		key[16];
	char		key64[sodium_base64_ENCODED_LEN(16, sodium_base64_VARIANT_ORIGINAL)];
	int			n;

	randombytes_buf(key, sizeof(key));
	sodium_bin2base64(key64, sizeof(key64), key, sizeof(key), sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(req, sizeof(req),
				 "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
				 "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n%s%s%s"
				 "Sec-WebSocket-Version: 13\r\n\r\n", path, port, key64,
				 subprotocol ? "Sec-WebSocket-Protocol: " : "", subprotocol ? subprotocol : "",
				 subprotocol ? "\r\n" : "");
	return n > 0 && (size_t) n < sizeof(req) && ws_send_all(fd, req, (size_t) n);
}

int
ws_upgrade_answer(char *buf, size_t *len, size_t cap)
{
	char	   *end = memmem(buf, *len, "\r\n\r\n", 4);
	size_t		head;

	if (end == NULL)
		return *len == cap ? -1 : 0;
	if (*len < 12 || memcmp(buf, "HTTP/1.1 101", 12) != 0)
		return -1;
	head = (size_t) (end + 4 - buf);
	memmove(buf, buf + head, *len - head);
	*len -= head;
	return 1;
}

void
ws_random_uuid(bothy_uuid *u)
{
	randombytes_buf(u->b, sizeof(u->b));
	u->b[6] = (uint8_t) ((u->b[6] & 0x0f) | 0x40);
	u->b[8] = (uint8_t) ((u->b[8] & 0x3f) | 0x80);
}

size_t
ws_text_frame(uint8_t *out, const char *payload, size_t len)
{
	return ws_masked_frame(out, 0x1, payload, len);
}

size_t
ws_masked_frame(uint8_t *out, int opcode, const void *data, size_t len)
{
	const uint8_t *payload = data;
	uint8_t		mask[4];
	size_t		n = 0;
	size_t		i;

	out[n++] = (uint8_t) (0x80 | opcode);	/* FIN */
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
		out[n + i] = payload[i] ^ mask[i & 3];
	return n + len;
}

bool
ws_send_text(int fd, const char *payload, size_t len)
{
	uint8_t		frame[BOTHY_TOKEN_MAX + 128];

	if (len + 8 > sizeof(frame))
		return false;
	return ws_send_all(fd, frame, ws_text_frame(frame, payload, len));
}

bool
ws_send_identify(int fd, const bothy_keystore *ks, const bothy_uuid *person,
				 const bothy_uuid *device)
{
	bothy_token t;
	char		token[BOTHY_TOKEN_MAX + 1];
	char		msg[BOTHY_TOKEN_MAX + 64];
	int			n;

	memset(&t, 0, sizeof(t));
	t.kind = BOTHY_TOKEN_PERSON_DEVICE;
	t.person = *person;
	t.device = *device;
	t.expires_at = (int64_t) time(NULL) + WS_TOKEN_TTL_S;
	if (!bothy_token_sign(ks, &t, token, sizeof(token)))
		return false;
	n = snprintf(msg, sizeof(msg), "{\"op\":\"identify\",\"token\":\"%s\"}", token);
	return n > 0 && (size_t) n < sizeof(msg) && ws_send_text(fd, msg, (size_t) n);
}

long
ws_frame_parse(const uint8_t *b, size_t len, size_t max, int *opcode, size_t *off,
			   size_t *plen)
{
	size_t		o = 0;
	size_t		p = 0;
	int			r;

	if (len >= 2 && ((b[0] & 0x80) == 0 || (b[1] & 0x80) != 0))
		return -1;				/* fragmented, or masked */
	r = ws_frame_lengths(b, len, &o, &p);
	if (r <= 0)
		return r;
	if (o + p > max)
		return -1;
	if (len < o + p)
		return 0;
	*opcode = b[0] & 0x0f;
	*off = o;
	*plen = p;
	return (long) (o + p);
}

unsigned
ws_close_code(const uint8_t *payload, size_t plen)
{
	return plen >= 2 ? (unsigned) (payload[0] << 8 | payload[1]) : 1005;
}

long
ws_parse_count(const char *prog, const char *s, long min, long max, const char *what)
{
	long		v;

	if (!bothy_parse_int(s, min, max, &v))
	{
		fprintf(stderr, "%s: bad %s\n", prog, what);
		exit(2);
	}
	return v;
}

int
ws_read_lines(int fd, ws_lines *r, void (*line) (const char *))
{
	ssize_t		n = read(fd, r->buf + r->len, sizeof(r->buf) - 1 - r->len);
	char	   *nl;

	if (n == 0)
		return 0;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : -1;
	r->len += (size_t) n;
	r->buf[r->len] = '\0';
	while ((nl = strchr(r->buf, '\n')) != NULL)
	{
		*nl = '\0';
		line(r->buf);
		r->len -= (size_t) (nl + 1 - r->buf);
		memmove(r->buf, nl + 1, r->len + 1);
	}
	return r->len == sizeof(r->buf) - 1 ? -1 : 1;
}
