/*
 * terminal/relay/slot.c
 *		The relay's state machine (see slot.h).
 *
 * A slot is one grant of one session on this node.  Sides join it after
 * their identify; two sides are paired; a side alone has its own timer
 * from the moment it is alone (D-M2-47-14).  The slot's deadline is the
 * grant's expiry plus open_timeout, the latest a lone side of that grant
 * can still be paired: it waits while a lone side is here, and a slot
 * that never saw session.started reads the row then (D-M2-47-15).  Ends
 * the database decides reach every slot of the session through the log,
 * or through the answer of a call this node made; those close the sides
 * with 1000 (a side still alone when an opening ended open_timeout: 4102)
 * and free the slots.
 *
 * Slots are kept in a growing core/uuidmap.h by session (a session has
 * one slot per grant that reached this node, rarely more than one).  A
 * slot is freed only at a reap, after the entry point that ended it, so
 * that walks of the table never meet a freed slot.
 */
#include <stdlib.h>
#include <string.h>

#include "terminal/relay/slot.h"

#define BIT(call) ((uint8_t) (1u << (call)))

static const gw_rslot_io *io;
static int64_t open_timeout = 30000;
static int64_t idle_timeout = 1800000;
static bool stopping;

static gw_rslot *dead;			/* ended, to be unlinked and freed */

static gw_rslot *
slot_of(const gw_uuidmap_link *l)
{
	return l == NULL ? NULL : (gw_rslot *) ((const char *) l - offsetof(gw_rslot, in_slots));
}

static const bothy_uuid *
session_key(const gw_uuidmap_link *l)
{
	return &slot_of(l)->session;
}

/* live and dead slots; it doubles once it holds more slots than buckets */
static gw_uuidmap slots = GW_UUIDMAP_GROWING(session_key);

static bool
same(const bothy_uuid *a, const bothy_uuid *b)
{
	return memcmp(a->b, b->b, sizeof(a->b)) == 0;
}

/*
 * Grants are UUIDv7, drawn in order: a later grant of a session compares
 * greater.  A slot learns that its grant is stale only from a newer one,
 * so that a read answered late never marks the current grant stale.
 */
static void
newer_grant(gw_rslot *s, const bothy_uuid *grant)
{
	if (bothy_uuid_compare(grant, &s->grant) > 0)
		s->stale = true;
}

/* Unlinks and frees the slots that ended. */
static void
reap(void)
{
	while (dead != NULL)
	{
		gw_rslot   *s = dead;

		dead = s->next_dead;
		gw_uuidmap_remove(&slots, &s->in_slots);
		free(s);
	}
}

static void
kill_slot(gw_rslot *s)
{
	if (s->dead)
		return;
	s->dead = true;
	s->next_dead = dead;
	dead = s;
}

void
gw_rslots_init(const gw_rslot_io *with)
{
	gw_rslots_forget();
	io = with;
	stopping = false;
}

void
gw_rslots_configure(int64_t open_timeout_ms, int64_t idle_timeout_ms)
{
	open_timeout = open_timeout_ms;
	idle_timeout = idle_timeout_ms;
}

gw_rslot *
gw_rslots_find(const bothy_uuid *session, const bothy_uuid *grant)
{
	gw_uuidmap_link *l;

	for (l = gw_uuidmap_first(&slots, session); l != NULL; l = gw_uuidmap_next_same(&slots, l))
		if (!slot_of(l)->dead && same(&slot_of(l)->grant, grant))
			return slot_of(l);
	return NULL;
}

typedef struct slot_walk
{
	bool		(*visit) (gw_rslot *s, int64_t now);
	int64_t		now;
	bool		any;			/* one visit said so */
} slot_walk;

static bool
walk_slot(gw_uuidmap_link *l, void *arg)
{
	slot_walk  *w = arg;

	if (!slot_of(l)->dead)
		w->any = w->visit(slot_of(l), w->now) || w->any;
	return true;
}

/* Calls visit for every live slot (visit may kill it); true when one visit said so. */
static bool
each_slot(bool (*visit) (gw_rslot *s, int64_t now), int64_t now)
{
	slot_walk	w = {visit, now, false};

	gw_uuidmap_each(&slots, walk_slot, &w);
	return w.any;
}

/* Calls visit for every live slot of a session (visit may kill it). */
static void
each_of_session(const bothy_uuid *session, void (*visit) (gw_rslot *s, const void *arg),
				const void *arg)
{
	gw_uuidmap_link *l;

	for (l = gw_uuidmap_first(&slots, session); l != NULL; l = gw_uuidmap_next_same(&slots, l))
		if (!slot_of(l)->dead)
			visit(slot_of(l), arg);
}

/* Asks for a call; it starts now unless the same call is in flight. */
static void
want(gw_rslot *s, gw_rcall call)
{
	s->want |= BIT(call);
	if (!(s->inflight & BIT(call)) && io->call(s, call))
	{
		s->want &= (uint8_t) ~BIT(call);
		s->inflight |= BIT(call);
	}
}

/* A side out of its slot, with no other consequence (the machine closes it). */
static void
drop(gw_rslot *s, gw_rside *side)
{
	s->side[side->kind] = NULL;
	side->slot = NULL;
	side->lone_until = 0;
}

/*
 * The session ended: every side of this slot closes with 1000, and it
 * goes.  An opening that ended open_timeout (on any node: both sides lone
 * on two nodes both decide, and the other node's end may reach this one
 * through the log before its own side's timer runs out) closes a side
 * still alone here with 4102, counted as its own timer would: why it
 * ended is that no counterpart came, and the device must hear the same
 * whichever node wrote the end (D-M2-47-8).
 */
static void
end_slot(gw_rslot *s, const void *arg)
{
	const gw_tclose *detail = arg;
	bool		lone = !s->paired && *detail == GW_TCLOSE_OPEN_TIMEOUT;
	int			k;

	s->paired = false;
	for (k = 0; k < 2; k++)
	{
		gw_rside   *side = s->side[k];

		if (side != NULL)
		{
			bool		counted = lone && !side->paired_once;

			drop(s, side);
			io->close(side, lone ? GW_TCODE_LONE : GW_TCODE_ENDED);
			if (counted)
				io->unpaired((gw_rside_kind) side->kind);
		}
	}
	s->want = 0;
	kill_slot(s);
}

static void
end_session(const bothy_uuid *session, gw_tclose detail)
{
	each_of_session(session, end_slot, &detail);
}

/* Nothing left to do or to wait for: the slot goes. */
static void
settle(gw_rslot *s)
{
	if (s->dead || s->side[0] != NULL || s->side[1] != NULL || s->want != 0 || s->inflight != 0)
		return;
	if (s->started || s->deadline == 0 || (s->paired_elsewhere && !s->local_confirm))
		kill_slot(s);
}

gw_rslot *
gw_rslots_expect(const bothy_uuid *session, const gw_rrow *row, int64_t now)
{
	gw_rslot   *s = gw_rslots_find(session, &row->grant);
	gw_uuidmap_link *l;

	/* an expectation with the grant a slot holds changes nothing (D-M2-47-21) */
	if (s != NULL)
		return s;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->session = *session;
	s->grant = row->grant;
	s->host = row->host;
	s->state = row->state;
	s->local_confirm = row->local_confirm;
	/* active: the current grant was started (only started and activate make it) */
	s->started = row->state == GW_TSTATE_ACTIVE;
	s->deadline = s->started ? 0 : now + (row->grant_left_ms > 0 ? row->grant_left_ms : 0) + open_timeout;
	s->active_at = now;
	for (l = gw_uuidmap_first(&slots, session); l != NULL; l = gw_uuidmap_next_same(&slots, l))
		if (!slot_of(l)->dead)
		{
			newer_grant(slot_of(l), &s->grant);
			newer_grant(s, &slot_of(l)->grant);
		}
	/* false only when the table has no buckets and cannot allocate them */
	if (!gw_uuidmap_add(&slots, &s->in_slots))
	{
		free(s);
		return NULL;
	}
	return s;
}

static void
arm_lone(gw_rslot *s, gw_rside *side, int64_t now)
{
	/*
	 * A device always waits open_timeout at most; a host data connection
	 * only while the session is opening: of a detached session it waits
	 * until the session ends (D-M2-47-8), and an active one is detached
	 * when it arrives (gw_rslots_join).
	 */
	if (side->kind == GW_RSIDE_DEVICE || s->state == GW_TSTATE_OPENING)
		side->lone_until = now + open_timeout;
	else
		side->lone_until = 0;
}

static void
pair(gw_rslot *s, int64_t now)
{
	gw_rside   *device = s->side[GW_RSIDE_DEVICE];
	gw_rside   *host = s->side[GW_RSIDE_HOST];

	s->paired = true;
	s->active_at = now;
	device->paired_once = host->paired_once = true;
	device->lone_until = host->lone_until = 0;
	io->tell(device, true);
	io->tell(host, true);
	/* once per pairing (D-M2-47-3) */
	io->paired(s);
	/*
	 * A started grant paired while its row is detached: the host started
	 * the grant and its data connection came first, which detached the
	 * session (gw_rslots_join), and the log's row of it was read before
	 * this pairing.  Relayed here now: RelayActivate (D-M2-47-25).
	 */
	if (s->started && s->state == GW_TSTATE_DETACHED && !s->stale)
		want(s, GW_RCALL_ACTIVATE);
}

bool
gw_rslots_join(gw_rslot *s, gw_rside *side, int64_t now)
{
	if (s->dead || s->side[side->kind] != NULL)
		return false;
	side->slot = s;
	s->side[side->kind] = side;
	if (side->kind == GW_RSIDE_HOST)
		s->host_left = false;	/* back: its leaving is undone */
	if (s->side[!side->kind] != NULL)
	{
		pair(s, now);
		return true;
	}
	io->tell(side, false);
	arm_lone(s, side, now);
	/*
	 * The host's data connection of an active session that is not relayed
	 * here: its pairing ended where it lived (that node went away, or the
	 * connection broke), since a host keeps one data connection per
	 * grant.  Detached, the session can be attached again.
	 */
	if (side->kind == GW_RSIDE_HOST && s->state == GW_TSTATE_ACTIVE)
		want(s, GW_RCALL_DETACH);
	return true;
}

/*
 * A side of a started pairing is gone and not back: detach (D-M2-47-15,
 * 22), so the person can attach again.  The device's leaving ends its
 * part; the host's data connection leaving without ending the session (a
 * network break, bothy-host dropping it for a device's bad frame) left a
 * device waiting for a host that may not come back: its reconnect with
 * the same identify pairs again and makes the session active (pair).
 */
static void
detach_if_left(gw_rslot *s)
{
	bool		device_gone = s->device_left && s->side[GW_RSIDE_DEVICE] == NULL;
	bool		host_gone = s->host_left && s->side[GW_RSIDE_HOST] == NULL;

	if (s->started && (device_gone || host_gone) && s->state == GW_TSTATE_ACTIVE && !s->stale)
		want(s, GW_RCALL_DETACH);
}

/* A side left its slot: what its pairing's end means. */
static void
left(gw_rslot *s, gw_rside *side, bool host_ended, int64_t now)
{
	gw_rside   *other;
	bool		was_paired = s->paired;

	drop(s, side);
	s->paired = false;
	other = s->side[!side->kind];
	if (side->kind == GW_RSIDE_DEVICE && side->paired_once)
		s->device_left = true;
	if (side->kind == GW_RSIDE_HOST && was_paired && !host_ended)
		s->host_left = true;
	if (was_paired)
	{
		io->resume(other);
		io->tell(other, false);
		arm_lone(s, other, now);
	}
	/*
	 * The host's 1000, paired or not: its shell ended, or it has none for
	 * this session (ended before, --max-sessions, a restarted service):
	 * bothy-host says so after waiting too (host.md), and the session
	 * would otherwise wait for a host that will never relay it.
	 */
	if (side->kind == GW_RSIDE_HOST && host_ended && !s->stale)
		want(s, GW_RCALL_BY_HOST);
	detach_if_left(s);
}

void
gw_rslots_leave(gw_rside *side, bool host_ended, int64_t now)
{
	gw_rslot   *s = side->slot;

	if (s == NULL)
		return;
	left(s, side, host_ended, now);
	settle(s);
	reap();
}

void
gw_rslots_bytes(gw_rslot *s, int64_t now)
{
	s->active_at = now;
}

/* A lone side's timer ran out: 4102 (D-M2-47-8). */
static void
lone_timeout(gw_rslot *s, gw_rside *side, int64_t now)
{
	bool		counted = !side->paired_once;

	left(s, side, false, now);
	io->close(side, GW_TCODE_LONE);
	if (counted)
		io->unpaired((gw_rside_kind) side->kind);
	/* the CAS on opening and this grant: two nodes deciding write one end */
	if (s->state == GW_TSTATE_OPENING && !s->stale)
		want(s, GW_RCALL_OPEN_TIMEOUT);
}

static void
deadline_due(gw_rslot *s)
{
	bool		lone = !s->paired && (s->side[0] != NULL || s->side[1] != NULL);

	if (s->started)
	{
		s->deadline = 0;
		return;
	}
	/* the slot's deadline waits while an unpaired side is here (D-M2-47-14) */
	if (lone)
		return;
	s->deadline = 0;
	/* never started here: the row says what happened (D-M2-47-15) */
	if (s->paired || s->device_left || s->host_left)
		want(s, GW_RCALL_READ);
}

static bool
tick_slot(gw_rslot *s, int64_t now)
{
	int			k;

	for (k = 0; k < 2; k++)
	{
		gw_rside   *side = s->side[k];

		/* inclusive: a counterpart arriving at the deadline still pairs */
		if (side != NULL && side->lone_until != 0 && now > side->lone_until)
			lone_timeout(s, side, now);
	}
	if (s->deadline != 0 && now > s->deadline)
		deadline_due(s);
	if (s->paired && now - s->active_at >= idle_timeout && !s->stale &&
		!((s->want | s->inflight) & BIT(GW_RCALL_IDLE)))
		want(s, GW_RCALL_IDLE);
	if (s->want != 0 && now >= s->retry_at && !stopping)
	{
		int			c;

		for (c = 0; c < GW_RCALL_COUNT; c++)
			if ((s->want & BIT(c)) && !(s->inflight & BIT(c)))
				want(s, (gw_rcall) c);
	}
	settle(s);
	return false;
}

void
gw_rslots_tick(int64_t now)
{
	each_slot(tick_slot, now);
	reap();
}

/*
 * What the session's state says to a slot of its current grant.  started:
 * the row proves this grant was started (a read finding it active, a log
 * row of started, activated or detached, the control node's hook).
 */
static void
learn(gw_rslot *s, gw_tstate state, bool started)
{
	s->state = state;
	if (started && !s->started)
	{
		s->started = true;
		s->deadline = 0;		/* met */
	}
	if (state != GW_TSTATE_OPENING && s->side[GW_RSIDE_HOST] != NULL && !s->paired)
		s->side[GW_RSIDE_HOST]->lone_until = 0;		/* it waits now */
	if (!s->started)
		return;
	/*
	 * The host's data connection came while this node still read the
	 * session opening (before session.started committed): alone in an
	 * active session now, it is detached as it would have been had it
	 * come after (gw_rslots_join), or a device that never comes leaves
	 * the session active for good.
	 */
	if (state == GW_TSTATE_ACTIVE && s->side[GW_RSIDE_HOST] != NULL && !s->paired && !s->stale)
		want(s, GW_RCALL_DETACH);
	/* a pairing that ended before session.started (D-M2-47-22) */
	detach_if_left(s);
	/* detached while it is relayed here: RelayActivate (D-M2-47-25) */
	if (state == GW_TSTATE_DETACHED && s->paired && !s->stale)
		want(s, GW_RCALL_ACTIVATE);
}

typedef struct log_arg
{
	const gw_tlog_row *row;
	bool		started;
} log_arg;

static void
log_slot(gw_rslot *s, const void *arg)
{
	const log_arg *a = arg;

	if (a->row->has_grant && same(&s->grant, &a->row->grant))
		learn(s, a->row->state, a->started);
	else
	{
		/* another grant's row: the session's state, and a newer grant */
		s->state = a->row->state;
		if (a->row->has_grant)
			newer_grant(s, &a->row->grant);
		if (a->row->state != GW_TSTATE_OPENING && s->side[GW_RSIDE_HOST] != NULL && !s->paired)
			s->side[GW_RSIDE_HOST]->lone_until = 0;
	}
	settle(s);
}

void
gw_rslots_log(const gw_tlog_row *row, int64_t now)
{
	log_arg		a;

	(void) now;
	if (!row->has_session)
		return;
	if (row->state == GW_TSTATE_CLOSED)
		end_session(&row->session, row->close_detail);
	else
	{
		a.row = row;
		/* a changed to active or detached of the grant (D-M2-47-22); an attach's is not started */
		a.started = row->transition == GW_TLOG_SESSION_STARTED ||
			row->transition == GW_TLOG_SESSION_ACTIVATED ||
			row->transition == GW_TLOG_SESSION_DETACHED;
		each_of_session(&row->session, log_slot, &a);
	}
	reap();
}

void
gw_rslots_started(const bothy_uuid *session, const bothy_uuid *grant, int64_t now)
{
	gw_rslot   *s = gw_rslots_find(session, grant);

	(void) now;
	if (s == NULL)
		return;
	/* only a pairing of this node is detached here (D-M2-47-15) */
	learn(s, GW_TSTATE_ACTIVE, true);
	settle(s);
	reap();
}

static void
paired_elsewhere(gw_rslot *s, const void *arg)
{
	(void) arg;
	if (s->side[0] != NULL || s->side[1] != NULL)
		return;					/* this node's own pairing, heard back */
	/*
	 * The pairing lives on another node.  Of a host with
	 * require_local_confirm the expectation stays until its deadline
	 * (D-M2-47-3); others go at once.
	 */
	s->paired_elsewhere = true;
	settle(s);
}

void
gw_rslots_session_paired(const bothy_uuid *session, int64_t now)
{
	(void) now;
	each_of_session(session, paired_elsewhere, NULL);
	reap();
}

static void
apply_row(gw_rslot *s, const gw_rrow *row)
{
	if (row == NULL)
	{
		end_session(&s->session, GW_TCLOSE_NONE);	/* closed, or gone from the table */
		return;
	}
	if (!same(&row->grant, &s->grant))
	{
		s->state = row->state;
		newer_grant(s, &row->grant);
		return;
	}
	learn(s, row->state, row->state == GW_TSTATE_ACTIVE);
}

void
gw_rslots_done(const bothy_uuid *session, const bothy_uuid *grant, gw_rcall call,
			   gw_rresult result, const gw_rrow *row, int64_t now)
{
	gw_rslot   *s = gw_rslots_find(session, grant);

	if (s == NULL)
		return;
	s->inflight &= (uint8_t) ~BIT(call);
	if (result == GW_RRESULT_FAILED)
	{
		if (!stopping)
		{
			s->want |= BIT(call);
			s->retry_at = now + GW_RSLOT_RETRY_MS;
		}
		settle(s);
		reap();
		return;
	}
	switch (call)
	{
		case GW_RCALL_READ:
			apply_row(s, result == GW_RRESULT_TRUE ? row : NULL);
			break;
		case GW_RCALL_DETACH:
			if (result == GW_RRESULT_TRUE)
				s->state = GW_TSTATE_DETACHED;
			break;
		case GW_RCALL_ACTIVATE:
			if (result == GW_RRESULT_TRUE)
				s->state = GW_TSTATE_ACTIVE;
			break;
		case GW_RCALL_OPEN_TIMEOUT:
		case GW_RCALL_IDLE:
		case GW_RCALL_BY_HOST:
			/* this node ended the session: it acts at once, as in single mode */
			if (result == GW_RRESULT_TRUE)
				end_session(session, call == GW_RCALL_OPEN_TIMEOUT ?
							GW_TCLOSE_OPEN_TIMEOUT : GW_TCLOSE_NONE);
			else if (call == GW_RCALL_IDLE)
				s->active_at = now;		/* not ended: look again after another idle_timeout */
			break;
		case GW_RCALL_COUNT:
			break;
	}
	if (!s->dead && (s->want & BIT(call)) && !(s->inflight & BIT(call)))
		want(s, call);			/* wanted again while it ran */
	if (!s->dead)
		settle(s);
	reap();
}

static bool
reconcile_slot(gw_rslot *s, int64_t now)
{
	(void) now;
	if (s->side[0] != NULL || s->side[1] != NULL)
		want(s, GW_RCALL_READ);
	return false;
}

void
gw_rslots_reconcile(int64_t now)
{
	each_slot(reconcile_slot, now);
}

void
gw_rslots_stopping(void)
{
	stopping = true;
}

static bool
busy_slot(gw_rslot *s, int64_t now)
{
	(void) now;
	return s->inflight != 0 || (s->want != 0 && !stopping);
}

bool
gw_rslots_busy(void)
{
	return each_slot(busy_slot, 0);
}

/* Frees a slot without unlinking it: the whole table goes after the walk. */
static bool
forget_slot(gw_uuidmap_link *l, void *arg)
{
	gw_rslot   *s = slot_of(l);

	(void) arg;
	if (s->side[0] != NULL)
		s->side[0]->slot = NULL;
	if (s->side[1] != NULL)
		s->side[1]->slot = NULL;
	free(s);
	return true;
}

void
gw_rslots_forget(void)
{
	gw_uuidmap_each(&slots, forget_slot, NULL);
	gw_uuidmap_free(&slots);
	dead = NULL;
}

static gw_rslot_counts *counting;

static bool
count_slot(gw_rslot *s, int64_t now)
{
	int			k;

	(void) now;
	counting->slots++;
	if (s->paired)
		counting->paired++;
	else
		for (k = 0; k < 2; k++)
			if (s->side[k] != NULL)
				counting->waiting[k]++;
	return false;
}

void
gw_rslots_counts(gw_rslot_counts *out)
{
	memset(out, 0, sizeof(*out));
	counting = out;
	each_slot(count_slot, 0);
}
