/*
 * test_relay_slot.c
 *		Unit tests of src/gateway/terminal/relay/slot.c, the relay's state
 *		machine, with a fake clock and an io that records what the machine
 *		asks: pairing and terminal.session_paired once per pairing, the
 *		lone sides (inclusive deadline, 4102, the unpaired count, the end at
 *		open_timeout, a detached session's device and host), a repeated
 *		expectation, the ends a pairing's end makes (detach, closed_by_host),
 *		session.started from the hook, the log and a read, RelayActivate,
 *		the log's close, side-less expectations and terminal.session_paired,
 *		idle, calls tried again, stale grants, a table of many slots, and
 *		the order a session's slots end in (the order they came, as
 *		core/uuidmap.h keeps a key's links).
 */
#include <stdio.h>
#include <string.h>

#include "terminal/relay/slot.h"
#include "unit.h"

#define OPEN 3000
#define IDLE 60000

/* --- the recording io -------------------------------------------------------- */

static char events[4096];

static void
note(const char *fmt, const char *a, const char *b)
{
	char		line[128];

	snprintf(line, sizeof(line), fmt, a, b);
	if (events[0] != '\0')
		strncat(events, "; ", sizeof(events) - strlen(events) - 1);
	strncat(events, line, sizeof(events) - strlen(events) - 1);
}

static const char *
kind_name(int kind)
{
	return kind == GW_RSIDE_DEVICE ? "D" : "H";
}

static const char *const call_names[] = {"read", "detach", "activate", "open_timeout", "idle", "by_host"};

static void
io_tell(gw_rside *side, bool paired)
{
	note("%s %s", kind_name(side->kind), paired ? "paired" : "waiting");
}

static void
io_close(gw_rside *side, int code)
{
	char		c[8];

	snprintf(c, sizeof(c), "%d", code);
	note("%s close %s", kind_name(side->kind), c);
}

static void
io_paired(const gw_rslot *slot)
{
	(void) slot;
	note("session_paired%s%s", "", "");
}

static bool refuse_calls;		/* io_call cannot start a call */

static bool
io_call(const gw_rslot *slot, gw_rcall call)
{
	(void) slot;
	note(refuse_calls ? "call %s refused%s" : "call %s%s", call_names[call], "");
	return !refuse_calls;
}

static void
io_unpaired(gw_rside_kind kind)
{
	note("unpaired %s%s", kind_name(kind), "");
}

static void
io_resume(gw_rside *side)
{
	note("%s resume%s", kind_name(side->kind), "");
}

static const gw_rslot_io io = {io_tell, io_close, io_paired, io_call, io_unpaired, io_resume};

/* What was recorded since the last look, then forgotten. */
static bool
saw(const char *want)
{
	bool		ok = strcmp(events, want) == 0;

	if (!ok)
	{
		char		line[sizeof(events) + 32];

		snprintf(line, sizeof(line), "  recorded: \"%s\"", events);
		unit_diag(line);
		snprintf(line, sizeof(line), "  expected: \"%s\"", want);
		unit_diag(line);
	}
	events[0] = '\0';
	return ok;
}

/* --- fixtures ----------------------------------------------------------------- */

static bothy_uuid
id(int n)
{
	bothy_uuid	u;

	memset(&u, 0, sizeof(u));
	u.b[0] = 0x01;
	u.b[14] = (uint8_t) (n >> 8);
	u.b[15] = (uint8_t) n;
	return u;
}

static gw_rrow
row_of(int grant, gw_tstate state, int64_t left_ms, bool confirm)
{
	gw_rrow		r;

	memset(&r, 0, sizeof(r));
	r.host = id(9000);
	r.grant = id(grant);
	r.state = state;
	r.grant_left_ms = left_ms;
	r.local_confirm = confirm;
	return r;
}

static gw_tlog_row
log_of(int session, int grant, gw_ttransition t, gw_tstate state)
{
	gw_tlog_row r;

	memset(&r, 0, sizeof(r));
	r.has_session = true;
	r.session = id(session);
	r.has_grant = true;
	r.grant = id(grant);
	r.transition = t;
	r.state = state;
	return r;
}

static void
fresh(void)
{
	gw_rslots_init(&io);
	gw_rslots_configure(OPEN, IDLE);
	events[0] = '\0';
}

static gw_rslot *
slot_of(int session, int grant, gw_tstate state, int64_t now)
{
	gw_rrow		r = row_of(grant, state, OPEN, false);
	bothy_uuid	s = id(session);

	return gw_rslots_expect(&s, &r, now);
}

static uint32_t
live(void)
{
	gw_rslot_counts c;

	gw_rslots_counts(&c);
	return c.slots;
}

static void
done(int session, int grant, gw_rcall call, gw_rresult result, const gw_rrow *row, int64_t now)
{
	bothy_uuid	s = id(session),
				g = id(grant);

	gw_rslots_done(&s, &g, call, result, row, now);
}

/* A device and a host paired in a fresh slot of session 1, grant 100. */
static gw_rslot *
paired_slot(gw_rside *d, gw_rside *h, gw_tstate state, int64_t now)
{
	gw_rslot   *s;

	fresh();
	s = slot_of(1, 100, state, now);
	gw_rslots_join(s, d, now);
	gw_rslots_join(s, h, now);
	events[0] = '\0';
	return s;
}

/* --- pairing ---------------------------------------------------------------- */

static void
test_pairing(void)
{
	gw_rside	d = {.kind = GW_RSIDE_DEVICE},
				h = {.kind = GW_RSIDE_HOST},
				h2 = {.kind = GW_RSIDE_HOST};
	gw_rslot   *s;

	fresh();
	s = slot_of(1, 100, GW_TSTATE_OPENING, 0);
	UNIT_OK(s != NULL && gw_rslots_join(s, &d, 10) && saw("D waiting") && d.lone_until == 10 + OPEN,
			"pair: the first side is told waiting, its timer from its identify");
	UNIT_OK(gw_rslots_join(s, &h, 20) && saw("D paired; H paired; session_paired") &&
			s->paired && d.lone_until == 0 && h.lone_until == 0 && d.paired_once && h.paired_once,
			"pair: the second side pairs both, terminal.session_paired once");
	UNIT_OK(!gw_rslots_join(s, &h2, 30) && saw("") && h2.slot == NULL,
			"pair: a second host side of the grant is refused, the pairing untouched");
	{
		gw_rrow		again = row_of(100, GW_TSTATE_OPENING, OPEN, false);
		bothy_uuid	session = id(1);

		UNIT_OK(gw_rslots_expect(&session, &again, 40) == s && s->paired && saw(""),
				"RelayExpectation: an expectation with the grant the slot holds changes nothing");
	}
	gw_rslots_tick(20 + OPEN + 1);
	UNIT_OK(saw("") && s->paired, "pair: paired sides have no lone timer");
	gw_rslots_leave(&h, false, 50);
	UNIT_OK(saw("D resume; D waiting") && d.lone_until == 50 + OPEN && !s->paired,
			"the host left: the device is read again, told waiting, and waits open_timeout for it");
	UNIT_OK(gw_rslots_join(s, &h2, 60) && saw("D paired; H paired; session_paired"),
			"the host's data connection again (same grant): paired again, a new terminal.session_paired");
	gw_rslots_leave(&h2, false, 70);
	events[0] = '\0';
	gw_rslots_tick(70 + OPEN + 1);
	UNIT_OK(saw("D close 4102; call open_timeout"),
			"a side paired once is closed alone with 4102 but never counted as unpaired");
	gw_rslots_forget();
}

/*
 * A device alone in an opening (paired once first, if paired_once), and
 * the session's end written by another node with this detail reaching
 * this one through the log; true when the side and the slot are gone
 * (the events are left to the caller's saw()).
 */
static bool
closed_elsewhere(gw_tclose detail, bool paired_once)
{
	gw_rside	d = {.kind = GW_RSIDE_DEVICE},
				h = {.kind = GW_RSIDE_HOST};
	gw_rslot   *s;
	gw_tlog_row r = log_of(1, 100, GW_TLOG_SESSION_CLOSED, GW_TSTATE_CLOSED);

	fresh();
	s = slot_of(1, 100, GW_TSTATE_OPENING, 0);
	gw_rslots_join(s, &d, 0);
	if (paired_once)
	{
		gw_rslots_join(s, &h, 0);
		gw_rslots_leave(&h, false, 10);
	}
	events[0] = '\0';
	r.close_detail = detail;
	gw_rslots_log(&r, 20);
	return d.slot == NULL && live() == 0;
}

/* --- lone sides (D-M2-47-8, 14) -------------------------------------------- */

static void
test_lone_sides(void)
{
	gw_rside	d = {.kind = GW_RSIDE_DEVICE},
				h = {.kind = GW_RSIDE_HOST},
				h2 = {.kind = GW_RSIDE_HOST},
				d2 = {.kind = GW_RSIDE_DEVICE};
	gw_rslot   *s;

	fresh();
	s = slot_of(1, 100, GW_TSTATE_OPENING, 0);
	gw_rslots_join(s, &d, 1000);
	events[0] = '\0';
	gw_rslots_tick(1000 + OPEN);
	UNIT_OK(saw("") && d.slot == s, "lone device: still waiting at its deadline (inclusive)");
	UNIT_OK(gw_rslots_join(s, &h, 1000 + OPEN) && saw("D paired; H paired; session_paired"),
			"lone device: a host arriving at the deadline pairs");

	fresh();
	d = (gw_rside) {.kind = GW_RSIDE_DEVICE};
	h = (gw_rside) {.kind = GW_RSIDE_HOST};
	s = slot_of(1, 100, GW_TSTATE_OPENING, 0);
	gw_rslots_join(s, &d, 1000);
	events[0] = '\0';
	gw_rslots_tick(1000 + OPEN + 1);
	UNIT_OK(saw("D close 4102; unpaired D; call open_timeout") && d.slot == NULL,
			"lone device of an opening: 4102, counted, the opening ends by its CAS");
	done(1, 100, GW_RCALL_OPEN_TIMEOUT, GW_RRESULT_TRUE, NULL, 1000 + OPEN + 2);
	UNIT_OK(saw("") && live() == 0, "the end written: the slot goes");

	fresh();
	s = slot_of(1, 100, GW_TSTATE_OPENING, 0);
	gw_rslots_join(s, &h, 0);
	events[0] = '\0';
	gw_rslots_tick(OPEN + 1);
	UNIT_OK(saw("H close 4102; unpaired H; call open_timeout"),
			"lone host data connection of an opening: 4102, counted, the opening ends");
	done(1, 100, GW_RCALL_OPEN_TIMEOUT, GW_RRESULT_FALSE, NULL, OPEN + 2);
	gw_rslots_tick(OPEN + OPEN + 1);
	UNIT_OK(saw("") && live() == 0, "another node wrote the end first: nothing more, gone at the deadline");

	/* a detached session: the attach's device waits open_timeout, the session stays detached */
	fresh();
	s = slot_of(1, 200, GW_TSTATE_DETACHED, 0);
	gw_rslots_join(s, &d2, 0);
	events[0] = '\0';
	gw_rslots_tick(OPEN + 1);
	UNIT_OK(saw("D close 4102; unpaired D"), "lone device of a detached session: 4102 and no end");

	/* a host data connection of a detached session waits until the session ends */
	fresh();
	s = slot_of(1, 200, GW_TSTATE_DETACHED, 0);
	UNIT_OK(gw_rslots_join(s, &h2, 0) && saw("H waiting") && h2.lone_until == 0,
			"host of a detached session: waiting, no timer");
	gw_rslots_tick(100 * OPEN);
	UNIT_OK(saw("") && h2.slot == s, "host of a detached session: still waiting long after");
	{
		gw_tlog_row r = log_of(1, 200, GW_TLOG_SESSION_CLOSED, GW_TSTATE_CLOSED);

		gw_rslots_log(&r, 100 * OPEN);
	}
	UNIT_OK(saw("H close 1000") && h2.slot == NULL && live() == 0,
			"host of a detached session: closed 1000 when the session ends");

	/* a host waiting in an opening waits no more once the session started */
	fresh();
	s = slot_of(1, 100, GW_TSTATE_OPENING, 0);
	gw_rslots_join(s, &h, 0);
	{
		gw_tlog_row r = log_of(1, 100, GW_TLOG_SESSION_DETACHED, GW_TSTATE_DETACHED);

		gw_rslots_log(&r, 10);
	}
	UNIT_OK(h.lone_until == 0, "a lone host's timer stops once the session is no longer opening");

	/*
	 * Both sides lone on two nodes: the other node's open_timeout reaches
	 * this one through the log before this side's own timer runs out.
	 */
	UNIT_OK(closed_elsewhere(GW_TCLOSE_OPEN_TIMEOUT, false) && saw("D close 4102; unpaired D"),
			"an opening ended open_timeout elsewhere: the lone side here gets 4102, counted, no call");
	UNIT_OK(closed_elsewhere(GW_TCLOSE_OPEN_TIMEOUT, true) && saw("D close 4102"),
			"open_timeout elsewhere, a side here paired once: 4102, not counted as unpaired");
	UNIT_OK(closed_elsewhere(GW_TCLOSE_HOST_DISABLED, false) && saw("D close 1000"),
			"an opening ended otherwise (host disabled): the lone side here gets 1000");

	/* this node's own open_timeout ended the opening: a side that came meanwhile is as lone */
	fresh();
	d = (gw_rside) {.kind = GW_RSIDE_DEVICE};
	h = (gw_rside) {.kind = GW_RSIDE_HOST};
	s = slot_of(1, 100, GW_TSTATE_OPENING, 0);
	gw_rslots_join(s, &d, 0);
	events[0] = '\0';
	gw_rslots_tick(OPEN + 1);
	UNIT_OK(saw("D close 4102; unpaired D; call open_timeout"),
			"the lone device's timer: 4102, counted, this node's open_timeout call runs");
	UNIT_OK(gw_rslots_join(s, &h, OPEN + 2) && saw("H waiting"),
			"a host side arrives while this node's open_timeout call runs: it waits");
	done(1, 100, GW_RCALL_OPEN_TIMEOUT, GW_RRESULT_TRUE, NULL, OPEN + 3);
	UNIT_OK(saw("H close 4102; unpaired H") && h.slot == NULL && live() == 0,
			"the call answers that it ended the opening: that side gets 4102, counted");

	/* a pairing here hears an open_timeout another node wrote: the pair was no lone side */
	{
		gw_tlog_row r = log_of(1, 100, GW_TLOG_SESSION_CLOSED, GW_TSTATE_CLOSED);

		d = (gw_rside) {.kind = GW_RSIDE_DEVICE};
		h = (gw_rside) {.kind = GW_RSIDE_HOST};
		paired_slot(&d, &h, GW_TSTATE_OPENING, 0);
		r.close_detail = GW_TCLOSE_OPEN_TIMEOUT;
		gw_rslots_log(&r, 10);
		UNIT_OK(saw("D close 1000; H close 1000") && d.slot == NULL && h.slot == NULL && live() == 0,
				"a paired slot hears open_timeout: both sides 1000, neither counted");
	}
	gw_rslots_forget();
}

/* --- the ends of a pairing ---------------------------------------------------- */

static void
test_pairing_ends(void)
{
	gw_rside	d = {.kind = GW_RSIDE_DEVICE},
				h = {.kind = GW_RSIDE_HOST};
	gw_rslot   *s;

	/* the host closed with 1000: the shell ended */
	s = paired_slot(&d, &h, GW_TSTATE_ACTIVE, 0);
	gw_rslots_leave(&h, true, 10);
	UNIT_OK(saw("D resume; D waiting; call by_host"), "host ended: closed_by_host asked");
	done(1, 100, GW_RCALL_BY_HOST, GW_RRESULT_TRUE, NULL, 20);
	UNIT_OK(saw("D close 1000") && live() == 0, "host ended: the device closes with 1000");

	/* a lone host's 1000: no shell for the session (host.md); a lone timeout's end is not one */
	fresh();
	s = slot_of(1, 100, GW_TSTATE_DETACHED, 0);
	UNIT_OK(gw_rslots_join(s, &h, 0) && saw("H waiting"), "a host of a detached session waits");
	gw_rslots_leave(&h, true, 10);
	UNIT_OK(saw("call by_host"), "its 1000 unpaired: closed_by_host asked all the same");
	done(1, 100, GW_RCALL_BY_HOST, GW_RRESULT_TRUE, NULL, 20);
	UNIT_OK(live() == 0, "... the session ended, the slot gone");
	s = slot_of(1, 100, GW_TSTATE_DETACHED, 30);
	gw_rslots_join(s, &h, 30);
	gw_rslots_leave(&h, false, 40);
	UNIT_OK(saw("H waiting"), "its other ends ask nothing");

	/* started, the device leaves: detach */
	s = paired_slot(&d, &h, GW_TSTATE_ACTIVE, 0);
	UNIT_OK(s->started, "a slot of an active row knows its grant started");
	gw_rslots_leave(&d, false, 10);
	UNIT_OK(saw("H resume; H waiting; call detach") && h.lone_until == 0,
			"started, the device left: detach, the host waits without a timer");
	done(1, 100, GW_RCALL_DETACH, GW_RRESULT_TRUE, NULL, 20);
	UNIT_OK(s->state == GW_TSTATE_DETACHED && h.slot == s, "detached: the host still waits");

	/* started, the host's data connection leaves without ending it: detach at once */
	s = paired_slot(&d, &h, GW_TSTATE_ACTIVE, 0);
	gw_rslots_leave(&h, false, 10);
	UNIT_OK(saw("D resume; D waiting; call detach") && d.lone_until == 10 + OPEN,
			"started, the host left: detach, the device waits open_timeout for it");
	UNIT_OK(gw_rslots_join(s, &h, 15) && saw("D paired; H paired; session_paired"),
			"... the host back with the same identify pairs again");
	done(1, 100, GW_RCALL_DETACH, GW_RRESULT_TRUE, NULL, 20);
	{
		gw_tlog_row r = log_of(1, 100, GW_TLOG_SESSION_DETACHED, GW_TSTATE_DETACHED);

		gw_rslots_log(&r, 25);
	}
	UNIT_OK(saw("call activate"), "... and its detach, read back while relayed, is undone (RelayActivate)");
	gw_rslots_leave(&h, true, 30);
	UNIT_OK(saw("D resume; D waiting; call by_host"),
			"... the host back, its 1000 later ends the session and detaches nothing");

	/* the host left a pairing before session.started: the log's started detaches */
	s = paired_slot(&d, &h, GW_TSTATE_OPENING, 0);
	gw_rslots_leave(&h, false, 10);
	UNIT_OK(saw("D resume; D waiting") && !s->started,
			"not started: the host leaving detaches nothing yet");
	{
		gw_tlog_row r = log_of(1, 100, GW_TLOG_SESSION_STARTED, GW_TSTATE_ACTIVE);

		gw_rslots_log(&r, 20);
	}
	UNIT_OK(saw("call detach"), "session.started from the log after the host left: detach");

	/* a lone host side of an opening, then session.started: detach, as when it comes after */
	fresh();
	s = slot_of(1, 100, GW_TSTATE_OPENING, 0);
	UNIT_OK(gw_rslots_join(s, &h, 0) && saw("H waiting") && h.lone_until == OPEN,
			"a host side of an opening waits open_timeout");
	{
		gw_tlog_row r = log_of(1, 100, GW_TLOG_SESSION_STARTED, GW_TSTATE_ACTIVE);

		gw_rslots_log(&r, 10);
	}
	UNIT_OK(saw("call detach") && h.lone_until == 0,
			"session.started while it is alone: detach, and it waits without a timer");

	/* a pairing that ended before session.started (D-M2-47-22): the log's started detaches */
	s = paired_slot(&d, &h, GW_TSTATE_OPENING, 0);
	gw_rslots_leave(&d, false, 10);
	UNIT_OK(saw("H resume; H waiting") && !s->started,
			"not started: the device leaving detaches nothing yet");
	{
		gw_tlog_row r = log_of(1, 100, GW_TLOG_SESSION_STARTED, GW_TSTATE_ACTIVE);

		gw_rslots_log(&r, 20);
	}
	UNIT_OK(saw("call detach") && s->started && h.lone_until == 0,
			"session.started from the log after the pairing ended: detach");

	/* the same through the control node's hook (D-M2-47-15) */
	s = paired_slot(&d, &h, GW_TSTATE_OPENING, 0);
	gw_rslots_leave(&d, false, 10);
	gw_rslots_leave(&h, false, 11);
	events[0] = '\0';
	UNIT_OK(live() == 1, "a pairing that ended unstarted keeps its slot until its deadline");
	{
		bothy_uuid	session = id(1),
					grant = id(100);

		gw_rslots_started(&session, &grant, 20);
	}
	UNIT_OK(saw("call detach"), "session.started through the hook after the pairing ended: detach");
	done(1, 100, GW_RCALL_DETACH, GW_RRESULT_TRUE, NULL, 30);
	UNIT_OK(live() == 0, "detached and no side left: the slot goes");

	/* the hook for a grant this node does not hold changes nothing */
	fresh();
	{
		bothy_uuid	session = id(1),
					grant = id(100);

		gw_rslots_started(&session, &grant, 20);
		UNIT_OK(saw("") && live() == 0, "session.started of a grant not here: nothing");
	}

	/* a slot that never saw session.started reads the row at its deadline (D-M2-47-15) */
	s = paired_slot(&d, &h, GW_TSTATE_OPENING, 0);
	gw_rslots_leave(&d, false, 10);
	gw_rslots_leave(&h, false, 11);
	events[0] = '\0';
	gw_rslots_tick(OPEN + OPEN);
	UNIT_OK(saw(""), "deadline: not before the grant's expiry plus open_timeout");
	gw_rslots_tick(OPEN + OPEN + 1);
	UNIT_OK(saw("call read"), "deadline of a pairing that ended unstarted: the row is read");
	{
		gw_rrow		r = row_of(100, GW_TSTATE_ACTIVE, -OPEN, false);

		done(1, 100, GW_RCALL_READ, GW_RRESULT_TRUE, &r, OPEN + OPEN + 2);
	}
	UNIT_OK(saw("call detach"), "deadline: the row is active, the pairing ended: detach");

	/* paired and still relaying at the deadline: the read only learns */
	s = paired_slot(&d, &h, GW_TSTATE_OPENING, 0);
	gw_rslots_tick(OPEN + OPEN + 1);
	UNIT_OK(saw("call read"), "deadline of a pairing that never saw started: the row is read");
	{
		gw_rrow		r = row_of(100, GW_TSTATE_ACTIVE, -OPEN, false);

		done(1, 100, GW_RCALL_READ, GW_RRESULT_TRUE, &r, OPEN + OPEN + 2);
	}
	UNIT_OK(saw("") && s->started && s->paired, "deadline: active, so started; the relay goes on");
	gw_rslots_leave(&d, false, OPEN + OPEN + 3);
	UNIT_OK(saw("H resume; H waiting; call detach"), "... and the device leaving detaches");

	/* the log's close ends every side with 1000 */
	s = paired_slot(&d, &h, GW_TSTATE_ACTIVE, 0);
	{
		gw_tlog_row r = log_of(1, 100, GW_TLOG_SESSION_CLOSED, GW_TSTATE_CLOSED);

		r.has_grant = false;
		gw_rslots_log(&r, 10);
	}
	UNIT_OK(saw("D close 1000; H close 1000") && d.slot == NULL && h.slot == NULL && live() == 0,
			"closed: both sides get 1000, the slot goes");
	gw_rslots_leave(&d, false, 20);
	UNIT_OK(saw(""), "the closed side's connection ending later changes nothing");
	gw_rslots_forget();
}

/* --- RelayActivate (D-M2-47-25) and the host of an active session ------------ */

static void
test_activate(void)
{
	gw_rside	d = {.kind = GW_RSIDE_DEVICE},
				h = {.kind = GW_RSIDE_HOST};
	gw_rslot   *s;
	gw_tlog_row r;

	s = paired_slot(&d, &h, GW_TSTATE_OPENING, 0);
	r = log_of(1, 100, GW_TLOG_SESSION_STARTED, GW_TSTATE_ACTIVE);
	gw_rslots_log(&r, 10);
	UNIT_OK(saw("") && s->started, "started while paired: nothing to do");
	r = log_of(1, 100, GW_TLOG_SESSION_DETACHED, GW_TSTATE_DETACHED);
	gw_rslots_log(&r, 20);
	UNIT_OK(saw("call activate"), "detached elsewhere while relayed here: RelayActivate");
	done(1, 100, GW_RCALL_ACTIVATE, GW_RRESULT_TRUE, NULL, 30);
	UNIT_OK(s->state == GW_TSTATE_ACTIVE && s->paired, "active again, still relaying");

	/* the same detached without a pairing here: nothing */
	fresh();
	s = slot_of(1, 100, GW_TSTATE_ACTIVE, 0);
	UNIT_OK(gw_rslots_join(s, &h, 0) && saw("H waiting; call detach"),
			"a host data connection of an active session not relayed here: detach");
	done(1, 100, GW_RCALL_DETACH, GW_RRESULT_TRUE, NULL, 10);
	r = log_of(1, 100, GW_TLOG_SESSION_DETACHED, GW_TSTATE_DETACHED);
	gw_rslots_log(&r, 20);
	UNIT_OK(saw("") && h.lone_until == 0, "... the host then waits; its own detach is no RelayActivate");
	d.paired_once = false;
	UNIT_OK(gw_rslots_join(s, &d, 30) && saw("D paired; H paired; session_paired; call activate"),
			"the device of that started grant pairs later: RelayActivate, the row active again");
	done(1, 100, GW_RCALL_ACTIVATE, GW_RRESULT_TRUE, NULL, 40);
	UNIT_OK(s->state == GW_TSTATE_ACTIVE && s->paired, "... active, relaying");
	gw_rslots_forget();
}

/* --- side-less expectations (D-M2-47-3) ---------------------------------------- */

static void
test_sideless(void)
{
	gw_rside	d = {.kind = GW_RSIDE_DEVICE},
				h = {.kind = GW_RSIDE_HOST};
	gw_rslot   *s;
	bothy_uuid	session = id(1);
	gw_rrow		r = row_of(100, GW_TSTATE_OPENING, OPEN, false);

	fresh();
	UNIT_OK(gw_rslots_expect(&session, &r, 0) != NULL && live() == 1 && saw(""),
			"terminal.session_open: a side-less expectation");
	gw_rslots_session_paired(&session, 10);
	UNIT_OK(live() == 0 && saw(""), "terminal.session_paired: the side-less expectation goes at once");

	fresh();
	r.local_confirm = true;
	gw_rslots_expect(&session, &r, 0);
	gw_rslots_session_paired(&session, 10);
	UNIT_OK(live() == 1, "require_local_confirm: it stays after terminal.session_paired ...");
	gw_rslots_tick(OPEN + OPEN);
	UNIT_OK(live() == 1, "... until its deadline (inclusive) ...");
	gw_rslots_tick(OPEN + OPEN + 1);
	UNIT_OK(live() == 0 && saw(""), "... and only removes itself then: no call, no end");

	fresh();
	r.local_confirm = false;
	gw_rslots_expect(&session, &r, 0);
	gw_rslots_tick(OPEN + OPEN + 1);
	UNIT_OK(live() == 0 && saw(""), "a side-less expectation that saw nothing goes at its deadline");

	/* this node's own pairing heard back changes nothing */
	s = paired_slot(&d, &h, GW_TSTATE_OPENING, 0);
	gw_rslots_session_paired(&session, 10);
	UNIT_OK(s->paired && live() == 1 && saw(""), "its own terminal.session_paired: nothing");
	gw_rslots_forget();
}

/* --- idle, retries, stale grants, reconcile ---------------------------------- */

static void
test_idle_and_retries(void)
{
	gw_rside	d = {.kind = GW_RSIDE_DEVICE},
				h = {.kind = GW_RSIDE_HOST},
				h2 = {.kind = GW_RSIDE_HOST};
	gw_rslot   *s;

	s = paired_slot(&d, &h, GW_TSTATE_ACTIVE, 0);
	gw_rslots_bytes(s, 1000);
	gw_rslots_tick(1000 + IDLE - 1);
	UNIT_OK(saw(""), "idle: bytes reset the timer");
	gw_rslots_tick(1000 + IDLE);
	UNIT_OK(saw("call idle"), "idle: no bytes for idle_timeout ends the session");
	gw_rslots_tick(1000 + IDLE + 200);
	UNIT_OK(saw(""), "idle: asked once");
	done(1, 100, GW_RCALL_IDLE, GW_RRESULT_TRUE, NULL, 1000 + IDLE + 300);
	UNIT_OK(saw("D close 1000; H close 1000") && live() == 0, "idle: both sides close with 1000");

	s = paired_slot(&d, &h, GW_TSTATE_ACTIVE, 0);
	gw_rslots_leave(&d, false, 10);
	events[0] = '\0';
	done(1, 100, GW_RCALL_DETACH, GW_RRESULT_FAILED, NULL, 20);
	gw_rslots_tick(20 + GW_RSLOT_RETRY_MS - 1);
	UNIT_OK(saw("") && gw_rslots_busy(), "a failed call waits before it is tried again");
	gw_rslots_tick(20 + GW_RSLOT_RETRY_MS);
	UNIT_OK(saw("call detach"), "a failed call is tried again");
	done(1, 100, GW_RCALL_DETACH, GW_RRESULT_FAILED, NULL, 2000);
	refuse_calls = true;
	gw_rslots_tick(2000 + GW_RSLOT_RETRY_MS);
	UNIT_OK(saw("call detach refused") && gw_rslots_busy(), "a call that cannot start is still wanted");
	refuse_calls = false;
	gw_rslots_tick(2000 + GW_RSLOT_RETRY_MS + 200);
	UNIT_OK(saw("call detach"), "... and made at the next tick");
	gw_rslots_stopping();
	done(1, 100, GW_RCALL_DETACH, GW_RRESULT_FAILED, NULL, 2000);
	gw_rslots_tick(5000);
	UNIT_OK(saw("") && !gw_rslots_busy(), "stopping: a failed call is not tried again");

	/* an attach's newer grant makes the old slot stale: it ends nothing */
	s = paired_slot(&d, &h, GW_TSTATE_ACTIVE, 0);
	{
		gw_tlog_row r = log_of(1, 200, GW_TLOG_SESSION_ATTACHED, GW_TSTATE_DETACHED);

		gw_rslots_log(&r, 10);
	}
	UNIT_OK(s->stale && saw(""), "a newer grant in the log: the old slot is stale");
	gw_rslots_tick(10 + IDLE + 1);
	UNIT_OK(saw(""), "a stale slot never ends the session as idle");
	{
		gw_rslot   *n = slot_of(1, 200, GW_TSTATE_DETACHED, 20);

		UNIT_OK(n != NULL && n != s && !n->stale && live() == 2,
				"the new grant's slot beside the old one");
		UNIT_OK(gw_rslots_join(n, &h2, 30) && saw("H waiting"), "the new grant's host waits");
	}
	{
		gw_rrow		old = row_of(100, GW_TSTATE_ACTIVE, OPEN, false);
		bothy_uuid	session = id(1);
		gw_rslot   *n = gw_rslots_find(&session, &(bothy_uuid) {0});

		(void) n;
		UNIT_OK(gw_rslots_expect(&session, &old, 40) == s,
				"a late read of the older grant finds the older slot");
		UNIT_OK(!gw_rslots_find(&session, &(gw_rrow) {.grant = id(200)}.grant)->stale,
				"... and never makes the newer grant stale");
	}

	/* reconcile reads every slot with a side; a row gone closes with 1000 */
	s = paired_slot(&d, &h, GW_TSTATE_ACTIVE, 0);
	gw_rslots_reconcile(10);
	UNIT_OK(saw("call read"), "reconcile: the row of a slot with sides is read");
	done(1, 100, GW_RCALL_READ, GW_RRESULT_FALSE, NULL, 20);
	UNIT_OK(saw("D close 1000; H close 1000") && live() == 0, "reconcile: no row (closed): 1000");
	gw_rslots_forget();
}

static void
test_many(void)
{
	int			i,
				found = 0;
	gw_rrow		r;

	fresh();
	for (i = 0; i < 5000; i++)
	{
		bothy_uuid	session = id(i);

		r = row_of(10000 + i, GW_TSTATE_OPENING, OPEN, false);
		gw_rslots_expect(&session, &r, 0);
	}
	for (i = 0; i < 5000; i++)
	{
		bothy_uuid	session = id(i),
					grant = id(10000 + i);

		found += gw_rslots_find(&session, &grant) != NULL;
	}
	UNIT_OK(found == 5000 && live() == 5000, "5000 slots: each found after the table grew");
	gw_rslots_tick(OPEN + OPEN + 1);
	UNIT_OK(live() == 0 && saw(""), "5000 side-less expectations gone at their deadline");
	gw_rslots_forget();
}

/*
 * A session holding two slots with sides, ended through the log: the slots
 * end in the order they were expected (core/uuidmap.h keeps a key's links
 * oldest first), whichever grant is newer.  One slot is paired, the other
 * holds a lone device, so the close events tell the slots apart.
 */
static bool
ends_in_order(bool paired_first, int first_grant, int second_grant)
{
	gw_rside	d1 = {.kind = GW_RSIDE_DEVICE},
				h1 = {.kind = GW_RSIDE_HOST},
				d2 = {.kind = GW_RSIDE_DEVICE};
	gw_rslot   *a,
			   *b;
	gw_tlog_row r = log_of(1, first_grant, GW_TLOG_SESSION_CLOSED, GW_TSTATE_CLOSED);
	bool		ok;

	fresh();
	a = slot_of(1, first_grant, GW_TSTATE_OPENING, 0);
	b = slot_of(1, second_grant, GW_TSTATE_OPENING, 0);
	if (a == NULL || b == NULL || a == b || live() != 2)
		return false;
	gw_rslots_join(paired_first ? a : b, &d1, 0);
	gw_rslots_join(paired_first ? a : b, &h1, 0);
	gw_rslots_join(paired_first ? b : a, &d2, 0);
	events[0] = '\0';
	gw_rslots_log(&r, 10);
	ok = saw(paired_first ? "D close 1000; H close 1000; D close 1000"
			 : "D close 1000; D close 1000; H close 1000");
	ok = ok && live() == 0 && d1.slot == NULL && h1.slot == NULL && d2.slot == NULL;
	gw_rslots_forget();
	return ok;
}

static void
test_session_end_order(void)
{
	UNIT_OK(ends_in_order(true, 100, 200),
			"a session's end: the older slot's sides close first (paired, then lone)");
	UNIT_OK(ends_in_order(false, 100, 200),
			"a session's end: the older slot's sides close first (lone, then paired)");
	UNIT_OK(ends_in_order(true, 200, 100) && ends_in_order(false, 200, 100),
			"a session's end: by the order the slots came, not by their grants");
}

int
main(void)
{
	test_pairing();
	test_lone_sides();
	test_pairing_ends();
	test_activate();
	test_sideless();
	test_idle_and_retries();
	test_many();
	test_session_end_order();
	return unit_done();
}
