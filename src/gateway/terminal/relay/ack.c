/*
 * terminal/relay/ack.c
 *		The device's acknowledgement of its output: at most one window
 *		(--stream-window bytes) written toward a device and not yet shown
 *		to have been read by it (docs/terminal.md, "Slow networks").  The
 *		counts and rules are window.c's (pure); this file writes the
 *		marks, takes the pongs and counts holds and acknowledgements.
 *
 * Why: a slow device behind an edge hides how much it read.  nginx reads
 * the node's socket only when its own socket toward the device drained to
 * a third of a send buffer Linux grew to megabytes, so a device that reads
 * steadily at 60 kB/s left the node's socket untouched for 20 s and more,
 * and the socket rule alone (--send-timeout) closed it 4008; the megabytes
 * in flight also made Ctrl-C take minutes to show.  ttyd bounds what is in
 * flight by application flow control (xterm.js's write callbacks and its
 * own pause/resume messages), which needs code in the client; here the
 * node writes a WebSocket ping into the output's order after each binary
 * message that brings the unmarked binary bytes to a quarter of
 * --stream-window or 16 KiB, whichever is less, and once a drain leaves
 * output unmarked (at most one a second), with the count of binary payload
 * bytes written before it as its payload; the device's pong (RFC 6455:
 * every browser and WebSocket library answers by itself, so no device code
 * is needed) echoes it once everything before it was read.  A device is
 * written no more while --stream-window bytes are unacknowledged (the
 * endpoint's held): its queue fills, the host is paused (flow.c), the
 * shell runs at the device's pace.  Each acknowledgement is progress for
 * the stall rule (gw_conn_progress): only a device that neither reads nor
 * answers for --send-timeout is closed.
 *
 * The window is its own setting, not --send-queue: the window's bytes are
 * written already (they sit in sockets and the edge, not in the node
 * process), and a window of one queue (64 KiB) cost a third of the
 * throughput through the edge (bench/terminal_relay; docs/gateway.md,
 * --stream-window).  The node process holds per session at most
 * 2 x (--send-queue + 2 x --max-message) whatever the window (flow.c);
 * the window's bytes sit mostly in the node's socket send buffer, kernel
 * memory of up to --stream-window per held device (docs/terminal.md,
 * "Slow networks").
 *
 * The payload is decimal ASCII and never empty: lws 4.1 does not report an
 * empty pong, and dropped the connection on a pong byte over 0x7f after a
 * text frame.  A pong that acknowledges nothing written (another payload,
 * an old or a future count) is ignored: RFC 6455 allows unsolicited pongs.
 *
 * An acknowledgement is also what "output shown" means to the idle clock
 * (docs/terminal.md, "Idle"): bytes that passed the node but sit in
 * sockets and the edge do not keep a session alive.
 */
#include <stdio.h>

#include "core/node.h"
#include "terminal/relay/conn.h"
#include "terminal/relay/stats.h"
#include "terminal/relay/wire.h"
#include "terminal/settings.h"

/* The shortest time between two pings of a drain (a burst's last mark). */
#define DRAIN_PING_GAP_MS 1000

static uint64_t
window(void)
{
	return (uint64_t) gw_topt.stream_window;
}

static bool
is_device(const gw_rconn *c)
{
	return c->conn.state == GW_RCONN_JOINED && c->side.kind == GW_RSIDE_DEVICE;
}

static void
mark(gw_rconn *c, int64_t now)
{
	char		payload[24];
	int			n = snprintf(payload, sizeof(payload), "%llu",
							 (unsigned long long) gw_rwindow_marked(&c->win));

	c->ack_ping_ms = now;
	c->ack_due = 0;
	gw_conn_ping_first(&c->conn, payload, (size_t) n);
}

/* Not while the node stopped reading the device (window.c says why). */
bool
gw_rack_held(gw_rconn *c)
{
	bool		began;

	if (!is_device(c) || !gw_rwindow_held(&c->win, window(), c->conn.rx_paused, &began))
		return false;
	if (began)
		gw_relay_stats.held++;
	return true;
}

void
gw_rack_paused(gw_rconn *c)
{
	if (is_device(c))
		gw_rwindow_paused(&c->win);
}

void
gw_rack_sent(gw_rconn *c, size_t len)
{
	int64_t		now;

	if (!is_device(c))
		return;
	now = gw_mono_ms();
	if (gw_rwindow_sent(&c->win, len, window()))
		mark(c, now);
	else if (gw_sendq_front(&c->conn.sendq) == NULL && c->ack_due == 0)
	{
		/* drained: the burst's last bytes get their mark, at most one a second */
		if (now - c->ack_ping_ms >= DRAIN_PING_GAP_MS)
			mark(c, now);
		else
		{
			c->ack_due = c->ack_ping_ms + DRAIN_PING_GAP_MS;
			gw_conn_wake_at(&c->conn, c->ack_due);
		}
	}
}

void
gw_rack_tick(gw_rconn *c, int64_t now)
{
	if (c->ack_due == 0)
		return;
	if (now < c->ack_due)
	{
		gw_conn_wake_at(&c->conn, c->ack_due);
		return;
	}
	c->ack_due = 0;
	if (gw_rwindow_unmarked(&c->win) != 0)
		mark(c, now);
}

void
gw_rack_pong(gw_rconn *c, const char *payload, size_t len)
{
	uint64_t	n;

	if (!is_device(c) || !gw_rwire_parse_ack(payload, len, &n) || !gw_rwindow_ack(&c->win, n))
		return;
	gw_relay_stats.acks++;
	gw_conn_progress(&c->conn);
	/* output shown: the idle clock starts again (docs/terminal.md, "Idle") */
	if (c->side.slot != NULL && c->side.slot->paired)
		gw_rslots_bytes(c->side.slot, gw_mono_ms());
}
