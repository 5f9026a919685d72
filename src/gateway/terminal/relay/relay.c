/*
 * terminal/relay/relay.c
 *		The relay of one node (see relay.h): the contract's entry points,
 *		the io through which the state machine (slot.c) acts on
 *		connections, the database and the listener, and the sweep of its
 *		timers.
 *
 * The files of the relay: slot.c (the state machine, pure),
 * wire.c (the stream's text, pure), stream.c (the endpoint),
 * identify.c (a side's identify), flow.c (the bytes and
 * their backpressure), ack.c (a device's acknowledgement of its
 * output), db.c (the slots' calls), stats.c (metrics and
 * status).
 */
#include <string.h>

#include "core/node.h"
#include "logline.h"
#include "terminal/relay/relay.h"
#include "terminal/relay/conn.h"
#include "terminal/relay/db.h"
#include "terminal/relay/stats.h"
#include "terminal/relay/wire.h"
#include "terminal/send.h"
#include "terminal/settings.h"

static lws_sorted_usec_list_t sul_sweep;
static bool sweeping;

/*
 * Outside the queue's bound: flow.c keeps a slow reader's queue at
 * up to --send-queue on purpose (its pause mark), so the text would find
 * it full and close a device held by its window 4008 instead of telling
 * it waiting (docs/terminal.md, "Backpressure").  At most one text per
 * change of the pairing.
 */
static void
io_tell(gw_rside *side, bool paired)
{
	const char *msg = paired ? gw_rwire_paired : gw_rwire_waiting;

	gw_conn_send_aside(&gw_rconn_of_side(side)->conn, msg, strlen(msg));
	if (paired)
		gw_rflow_paired(gw_rconn_of_side(side));
}

static void
io_close(gw_rside *side, int code)
{
	gw_rconn   *c = gw_rconn_of_side(side);

	if (code == GW_TCODE_LONE)
	{
		gw_logf(GW_LOG_WARN, "terminal relay side unpaired", "side=%s code=%d",
				gw_relay_side_name(side->kind), code);
		gw_conn_close(&c->conn, GW_TCODE_LONE, "no counterpart in time");
	}
	else
		gw_conn_close(&c->conn, GW_TCODE_ENDED, "session ended");
}

/*
 * In single mode gw_terminal_send hands the signal back to gw_relay_signal
 * at once, inside the machine's pairing: its session_paired then meets
 * only this slot, which has its sides, and changes nothing (and finds no
 * slot to free: every entry point reaps before it returns).
 */
static void
io_paired(const gw_rslot *slot)
{
	bothy_signal sig;

	gw_relay_stats.pairings++;
	memset(&sig, 0, sizeof(sig));
	sig.kind = BOTHY_KIND_TERMINAL_SESSION_PAIRED;
	sig.host_id = slot->host;
	sig.session_id = slot->session;
	gw_terminal_send(&sig);
}

static void
io_unpaired(gw_rside_kind kind)
{
	gw_relay_stats.unpaired[kind]++;
}

static void
io_resume(gw_rside *side)
{
	gw_rflow_resume(gw_rconn_of_side(side));
}

static const gw_rslot_io io = {
	.tell = io_tell,
	.close = io_close,
	.paired = io_paired,
	.call = gw_rdb_call,
	.unpaired = io_unpaired,
	.resume = io_resume,
};

/* The settings may change at a reload: read at every sweep. */
static void
configure(void)
{
	gw_rslots_configure(gw_tsettings.terminal_open_timeout, gw_tsettings.terminal_idle_timeout);
}

static void
sweep(lws_sorted_usec_list_t *sul)
{
	configure();
	gw_rslots_tick(gw_mono_ms());
	lws_sul_schedule(gw.context, 0, sul, sweep, (lws_usec_t) GW_SWEEP_MS * LWS_US_PER_MS);
}

void
gw_relay_wake(void)
{
	configure();
	if (sweeping || gw.context == NULL)
		return;
	sweeping = true;
	lws_sul_schedule(gw.context, 0, &sul_sweep, sweep, (lws_usec_t) GW_SWEEP_MS * LWS_US_PER_MS);
}

void
gw_relay_signal(const bothy_signal *sig)
{
	gw_relay_wake();
	switch (sig->kind)
	{
		case BOTHY_KIND_TERMINAL_SESSION_OPEN:
			/* every node expects the session from its row (D-M2-47-3) */
			gw_rdb_expect(&sig->session_id);
			break;
		case BOTHY_KIND_TERMINAL_SESSION_PAIRED:
			gw_rslots_session_paired(&sig->session_id, gw_mono_ms());
			gw_rdb_paired(&sig->session_id);
			break;
		default:
			break;
	}
}

void
gw_relay_observe(const gw_tlog_row *row)
{
	gw_relay_wake();
	gw_rslots_log(row, gw_mono_ms());
}

void
gw_relay_started(const bothy_uuid *session, const bothy_uuid *grant)
{
	gw_relay_wake();
	gw_rslots_started(session, grant, gw_mono_ms());
}

void
gw_relay_reconcile(void)
{
	gw_relay_wake();
	gw_rslots_reconcile(gw_mono_ms());
}

bool
gw_relay_init(void)
{
	memset(&gw_relay_stats, 0, sizeof(gw_relay_stats));
	gw_rslots_init(&io);
	sweeping = false;
	return true;
}

void
gw_relay_stopping(void)
{
	/* the core told every side 1001; their pairings' ends are still written */
	gw_rslots_stopping();
}

bool
gw_relay_drained(void)
{
	return gw_ridentify_pending() == 0 && gw_rdb_pending() == 0 && !gw_rslots_busy();
}

static void
cancel_identify(gw_conn *c, void *arg)
{
	(void) arg;
	gw_ridentify_cancel(gw_rconn_of(c));
}

void
gw_relay_forget(void)
{
	if (sweeping)
		lws_sul_cancel(&sul_sweep);
	sweeping = false;
	gw_conn_each(&gw_relay_stream, cancel_identify, NULL);
	gw_rdb_forget();
	gw_rslots_forget();
}

void
gw_relay_metrics(struct gw_metrics_out *out)
{
	gw_relay_stats_metrics(out);
}

bool
gw_relay_status(json_t *status)
{
	return gw_relay_stats_status(status);
}
