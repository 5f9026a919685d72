/*
 * terminal/relay/window.c
 *		The pure accounting of a device's window (window.h): what
 *		ack.c asks before it writes, marks or takes a pong.
 *
 * Why a mark at most every GW_RWINDOW_MARK_MAX bytes: a device is closed
 * 4008 when for --send-timeout its output waited with neither a whole
 * message written nor an acknowledgement (ack.c); with a mark every
 * quarter of a 256 KiB window a device would have to read 80 kB per
 * --send-timeout to be taken for a reader.  Capped, the minimum steady rate
 * is at most 16 KiB plus one message per --send-timeout less one round
 * trip whatever the window (a quarter of a window under 64 KiB), the pong
 * having to reach the node in time (docs/terminal.md, "Slow networks").
 */
#include "terminal/relay/window.h"

uint64_t
gw_rwindow_mark_every(uint64_t window)
{
	uint64_t	quarter = window / 4 + (window % 4 != 0);

	if (quarter == 0)
		return 1;
	return quarter < GW_RWINDOW_MARK_MAX ? quarter : GW_RWINDOW_MARK_MAX;
}

bool
gw_rwindow_sent(gw_rwindow *w, size_t len, uint64_t window)
{
	w->out += len;
	/*
	 * a write ends a hold: an acknowledgement that leaves the window full
	 * is not a new hold (each hold counted once, bothy_terminal_relay_held_total)
	 */
	w->holding = false;
	return w->out - w->pinged >= gw_rwindow_mark_every(window);
}

uint64_t
gw_rwindow_unmarked(const gw_rwindow *w)
{
	return w->out - w->pinged;
}

uint64_t
gw_rwindow_marked(gw_rwindow *w)
{
	w->pinged = w->out;
	return w->pinged;
}

/*
 * Not while the node stopped reading the device, nor until a pong to a
 * mark written after that came: lws reads nothing from a paused device,
 * and once read again its pongs come only after the input it sent before
 * them (a paste the host takes slowly), so holding its output would lock
 * a paste into a program that reads slowly while it writes
 * (docs/terminal.md, "Slow networks").  rx_paused alone covers the pause
 * itself (behind_input is set at the same moment); behind_input covers
 * the time after the node reads the device again: its next pongs still
 * wait behind the paste's rest, which on a slow uplink can take longer
 * than --send-timeout to arrive, and held meanwhile the device would be
 * closed 4008 for pongs it sent.
 */
bool
gw_rwindow_held(gw_rwindow *w, uint64_t window, bool rx_paused, bool *began)
{
	bool		held = !rx_paused && !w->behind_input && w->out - w->acked >= window;

	*began = held && !w->holding;
	if (held)
		w->holding = true;		/* until a write (gw_rwindow_sent) ends it */
	return held;
}

void
gw_rwindow_paused(gw_rwindow *w)
{
	w->behind_input = true;
	w->pinged_at_pause = w->pinged;
}

bool
gw_rwindow_ack(gw_rwindow *w, uint64_t n)
{
	if (n <= w->acked || n > w->pinged)
		return false;
	w->acked = n;
	if (n > w->pinged_at_pause)
		w->behind_input = false;	/* read past the input it was paused on */
	return true;
}
