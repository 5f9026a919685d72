/*
 * wsframe.h
 *		The length fields of a WebSocket frame (RFC 6455, 5.2), read the same
 *		way by the bench's load clients (wsclient.c, frames a node sends) and
 *		by its floor server (fanout_floor_server.c, frames a client sends).
 *		Header only, so that the floor server links nothing of the clients.
 */
#ifndef BOTHY_BENCH_WSFRAME_H
#define BOTHY_BENCH_WSFRAME_H

#include <stddef.h>
#include <stdint.h>

/*
 * The header at the start of b[0..len): 1 when it is whole (*off: where
 * the payload starts, past the mask key of a masked frame; *plen: the
 * payload's length), 0 when more bytes are needed, -1 for a 64-bit length
 * (no frame of these benches is that long).
 */
static inline int
ws_frame_lengths(const uint8_t *b, size_t len, size_t *off, size_t *plen)
{
	size_t		p;
	size_t		o = 2;

	if (len < 2)
		return 0;
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
	if (b[1] & 0x80)
		o += 4;
	if (len < o)
		return 0;
	*off = o;
	*plen = p;
	return 1;
}

#endif							/* BOTHY_BENCH_WSFRAME_H */
