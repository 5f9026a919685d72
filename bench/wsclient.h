/*
 * wsclient.h
 *		The WebSocket client pieces the bench load clients share
 *		(bench/gateway_connections_client.c, bench/gateway_fanout_client.c):
 *		a non-blocking loopback connect from one of several source addresses,
 *		the upgrade request and its answer, masked text frames, the frames a
 *		node sends, and the identify of a person device with a token signed
 *		here from the node's key store.
 *
 * Written by hand (RFC 6455) rather than with a WebSocket library so that a
 * client holding ten thousand connections stays small beside the nodes it
 * measures.
 */
#ifndef BOTHY_BENCH_WSCLIENT_H
#define BOTHY_BENCH_WSCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keys/keystore.h"
#include "uuid.h"

/* Tokens live a day: far longer than a run. */
#define WS_TOKEN_TTL_S 86400

/*
 * A non-blocking TCP socket toward 127.0.0.1:port, bound to the source
 * address 127.0.0.(2 + source) with IP_BIND_ADDRESS_NO_PORT (the port is
 * chosen at connect from the whole four-tuple, so each source address gives
 * its own ~28,000 ephemeral ports and no sysctl is changed); the connect is
 * under way.  -1 on failure.
 */
int			ws_connect(int port, long source);

/* The connect ended: false when it failed (SO_ERROR). */
bool		ws_connected(int fd);

/* Sends the upgrade request of GET /gateway; false on failure. */
bool		ws_send_upgrade(int fd, int port);

/* The same for another path (a terminal stream's), naming a subprotocol unless NULL. */
bool		ws_send_upgrade_path(int fd, int port, const char *path, const char *subprotocol);

/*
 * The upgrade answer at the start of buf[0..*len): 1 when it is whole and
 * is 101 (its header is then removed from buf and *len shortened: what
 * follows is frames), 0 when more bytes are needed, -1 when it refused.
 * Sec-WebSocket-Accept (a SHA-1, which libsodium lacks) is not checked:
 * these clients talk to their own nodes.
 */
int			ws_upgrade_answer(char *buf, size_t *len, size_t cap);

/* A random version 4 UUID. */
void		ws_random_uuid(bothy_uuid *u);

/* A masked text frame of payload[0..len), len < 65536, into out; its length. */
size_t		ws_text_frame(uint8_t *out, const char *payload, size_t len);

/* The same with any opcode (0x2: binary); out holds len + 8 bytes. */
size_t		ws_masked_frame(uint8_t *out, int opcode, const void *data, size_t len);

/*
 * Sends all of buf or fails: small writes on a loopback socket are taken
 * whole, so a short write is counted as a failure.
 */
bool		ws_send_all(int fd, const void *buf, size_t len);

/* Sends payload[0..len) as one masked text frame; false on failure. */
bool		ws_send_text(int fd, const char *payload, size_t len);

/*
 * Sends {"op":"identify","token":T} with a fresh token of person on device,
 * signed with the newest key of ks; false when the send failed.
 */
bool		ws_send_identify(int fd, const bothy_keystore *ks, const bothy_uuid *person,
							 const bothy_uuid *device);

/*
 * The first whole frame of b[0..len): its size, or 0 when more bytes are
 * needed; -1 for a frame a node never sends (masked, fragmented, or longer
 * than max).  *opcode, *off (where the payload starts) and *plen are set
 * when whole.
 */
long		ws_frame_parse(const uint8_t *b, size_t len, size_t max, int *opcode,
						   size_t *off, size_t *plen);

/* The close code of a close frame's payload (1005 when it has none). */
unsigned	ws_close_code(const uint8_t *payload, size_t plen);

/*
 * The number of an option's argument s, strictly within [min, max]; else
 * "PROG: bad WHAT" on stderr and exit 2 (a usage error).
 */
long		ws_parse_count(const char *prog, const char *s, long min, long max,
						   const char *what);

/*
 * The commands a bench driver writes to a client's stdin, one a line:
 * reads what fd has (non-blocking) and calls line for each whole line,
 * its newline replaced by a NUL.  1: read (or nothing there yet); 0: the
 * end of the input; -1: a read error, or a line longer than the buffer.
 */
typedef struct ws_lines
{
	char		buf[256];
	size_t		len;
} ws_lines;

int			ws_read_lines(int fd, ws_lines *r, void (*line) (const char *));

#endif							/* BOTHY_BENCH_WSCLIENT_H */
