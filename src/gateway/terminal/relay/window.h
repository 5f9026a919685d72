/*
 * terminal/relay/window.h
 *		The accounting of a device's window of unacknowledged output
 *		(docs/terminal.md, "Slow networks"): bytes written, marked and
 *		acknowledged, when a mark is due, and when the window holds the
 *		device.  Pure: no lws, no clock, no options; ack.c drives it
 *		with --stream-window and the connection's state.
 *
 * The counts are uint64_t bytes: at 10 GB/s one stream would need 58 years
 * to wrap one, so no comparison here handles a wrap.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_RELAY_WINDOW_H
#define BOTHY_GATEWAY_TERMINAL_RELAY_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The most binary bytes left unmarked by the quarter rule, whatever the
 * window: a slow reader acknowledges at least this often, so the slowest
 * steady reader that is never closed does not grow with --stream-window.
 */
#define GW_RWINDOW_MARK_MAX 16384

typedef struct gw_rwindow
{
	uint64_t	out;			/* binary payload written toward the device (handed to lws) */
	uint64_t	pinged;			/* out at the last mark (ping) */
	uint64_t	acked;			/* out at the last mark its pong echoed */
	uint64_t	pinged_at_pause;	/* pinged when the node last stopped reading it */
	bool		behind_input;	/* paused since a mark of pinged_at_pause or before */
	bool		holding;		/* held since the last write (a hold is counted once) */
} gw_rwindow;

/* The unmarked bytes that make a mark due: min(ceil(window / 4), GW_RWINDOW_MARK_MAX). */
uint64_t	gw_rwindow_mark_every(uint64_t window);

/*
 * len bytes were written: true when a mark is due now (the unmarked bytes
 * reached gw_rwindow_mark_every); the caller then writes it and calls
 * gw_rwindow_marked.
 */
bool		gw_rwindow_sent(gw_rwindow *w, size_t len, uint64_t window);

/* Bytes written since the last mark (a drain marks them when not 0). */
uint64_t	gw_rwindow_unmarked(const gw_rwindow *w);

/* A mark was written: its payload is the returned count (out). */
uint64_t	gw_rwindow_marked(gw_rwindow *w);

/*
 * Whether no more may be written: window bytes or more unacknowledged,
 * unless the node stopped reading the device (rx_paused) or has not seen
 * a pong to a mark written after it last did (behind_input).  *began is
 * set when this starts a hold: no test held since the last write (an
 * acknowledgement that leaves the window full does not end a hold).
 */
bool		gw_rwindow_held(gw_rwindow *w, uint64_t window, bool rx_paused, bool *began);

/* The node stopped reading the device: hold it no more until a later mark's pong. */
void		gw_rwindow_paused(gw_rwindow *w);

/*
 * A pong's count n: true when it acknowledges (acked < n <= pinged); a
 * stale, duplicate or future count changes nothing and is false.  A count
 * past pinged_at_pause ends behind_input.
 */
bool		gw_rwindow_ack(gw_rwindow *w, uint64_t n);

#endif							/* BOTHY_GATEWAY_TERMINAL_RELAY_WINDOW_H */
