/*
 * terminal/relay/flow.c
 *		The terminal's bytes between the two sides of a pairing, with
 *		backpressure end to end (docs/terminal.md, "Backpressure").
 *
 * ttyd reads its PTY again only once WRITEABLE sent what it read; the
 * relay's version: a binary message goes, untouched, onto the
 * counterpart's queue, and once that queue holds the pause mark the
 * sender is read no more (gw_conn_rx_pause) until the queue drained to
 * half of it.  The mark is --send-queue less one largest message
 * (--max-message), so the queue never passes --send-queue: each side
 * holds at most that, plus the one message lws is writing and the one the
 * sender is in the middle of (at most --max-message, reassembled by the
 * core).  A counterpart that reads nothing is closed by the transport
 * after --send-timeout (4008).  Messages of a side without a counterpart
 * never leave the node: they are dropped and counted.
 */
#include "core/node.h"
#include "terminal/relay/conn.h"
#include "terminal/relay/stats.h"

/* The queued bytes at which the sender is paused (at least 1: one message in flight). */
static size_t
pause_mark(void)
{
	long		mark = (long) gw.opt.send_queue - (long) gw.opt.max_message + 1;

	return mark > 0 ? (size_t) mark : 1;
}

static gw_rconn *
counterpart(gw_rconn *c)
{
	gw_rslot   *s = c->side.slot;

	if (s == NULL || !s->paired)
		return NULL;
	return gw_rconn_of_side(s->side[!c->side.kind]);
}

/* to's queue holds the pause mark: its counterpart from is read no more. */
static void
hold_back(gw_rconn *from, gw_rconn *to)
{
	if (gw_conn_queued(&to->conn) < pause_mark() || from->conn.rx_paused)
		return;
	gw_relay_stats.paused++;
	gw_conn_rx_pause(&from->conn, true);
	gw_rack_paused(from);		/* its window opens (ack.c) */
}

void
gw_rflow_pass(gw_rconn *from, const void *data, size_t len)
{
	gw_rconn   *to = counterpart(from);

	if (to == NULL)
	{
		gw_relay_stats.dropped++;
		return;
	}
	gw_conn_send_binary(&to->conn, data, len);
	gw_relay_stats.bytes[from->side.kind] += len;
	/*
	 * a keystroke starts the idle clock again; output only once the
	 * device acknowledged it (ack.c, docs/terminal.md "Idle")
	 */
	if (from->side.kind == GW_RSIDE_DEVICE)
		gw_rslots_bytes(from->side.slot, gw_mono_ms());
	hold_back(from, to);
}

/*
 * A new pairing: a side whose queue still holds the pause mark (a device
 * held by its window whose host left) holds its new counterpart back at
 * once, or the newcomer's first message would find the queue full and
 * close the side 4008.
 */
void
gw_rflow_paired(gw_rconn *c)
{
	gw_rconn   *from = counterpart(c);

	if (from != NULL)
		hold_back(from, c);
}

void
gw_rflow_sent(gw_rconn *to)
{
	gw_rconn   *from = counterpart(to);

	if (from != NULL && from->conn.rx_paused && gw_conn_queued(&to->conn) <= pause_mark() / 2)
		gw_conn_rx_pause(&from->conn, false);
}

void
gw_rflow_resume(gw_rconn *c)
{
	gw_conn_rx_pause(&c->conn, false);
}
