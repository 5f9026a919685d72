/*
 * terminal/relay/slot.h
 *		The relay's state machine, without I/O: this node's slots (one per
 *		session and grant), the stream sides that joined them, pairing, the
 *		lone sides' timers, the slots' deadlines, idle, and what the log,
 *		the signals and the database's answers change in them (D-M2-47-3,
 *		8, 14, 15, 21, 22, 25; docs/terminal.md, "The relay").
 *
 * Pure: the caller passes the monotonic clock in and carries out what the
 * machine asks through gw_rslot_io (tell a side, close it, stage
 * terminal.session_paired, make a database call, resume a side's
 * reading), so every transition is unit-tested with a fake clock
 * (test/unit/gateway/test_relay_slot.c).  No callback of gw_rslot_io may
 * call back into the machine: the connection a close decides is left
 * through gw_rslots_leave once it is gone, and a database call's answer
 * comes later through gw_rslots_done.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_RELAY_SLOT_H
#define BOTHY_GATEWAY_TERMINAL_RELAY_SLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/uuidmap.h"
#include "terminal/model.h"
#include "uuid.h"

/* A failed database call of a slot is tried again after this. */
#define GW_RSLOT_RETRY_MS 1000

typedef enum gw_rside_kind
{
	GW_RSIDE_DEVICE = 0,		/* the person's device stream */
	GW_RSIDE_HOST = 1			/* the host's data connection */
} gw_rside_kind;

struct gw_rslot;

/* One stream side, embedded in its connection's struct. */
typedef struct gw_rside
{
	struct gw_rslot *slot;		/* its slot once joined, else NULL */
	uint8_t		kind;			/* gw_rside_kind */
	bool		paired_once;	/* never counted as unpaired (D-M2-47-8) */
	int64_t		lone_until;		/* no counterpart after this: 4102; 0: no timer */
} gw_rside;

/* What a slot asks of the database; a bit each in want and inflight. */
typedef enum gw_rcall
{
	GW_RCALL_READ = 0,			/* the row (bothy.terminal_relay_expectation) */
	GW_RCALL_DETACH,			/* bothy.terminal_session_detach */
	GW_RCALL_ACTIVATE,			/* bothy.terminal_session_activate (RelayActivate) */
	GW_RCALL_OPEN_TIMEOUT,		/* bothy.terminal_session_open_timeout */
	GW_RCALL_IDLE,				/* bothy.terminal_session_end(..., 'idle') */
	GW_RCALL_BY_HOST,			/* bothy.terminal_session_end(..., 'closed_by_host') */
	GW_RCALL_COUNT
} gw_rcall;

/* The answer of a call. */
typedef enum gw_rresult
{
	GW_RRESULT_TRUE = 0,		/* a transition made by this call; a read found the row */
	GW_RRESULT_FALSE,			/* no transition: the row had moved on; a read found none */
	GW_RRESULT_FAILED			/* an error or no answer in time: tried again */
} gw_rresult;

/* A session's row as a read finds it (RelayExpectation, D-M2-47-21). */
typedef struct gw_rrow
{
	bothy_uuid	host;
	bothy_uuid	grant;			/* the current grant */
	gw_tstate	state;			/* opening, active or detached: never closed */
	int64_t		grant_left_ms;	/* until the grant's expiry; negative once past */
	bool		local_confirm;	/* the host's require_local_confirm */
} gw_rrow;

typedef struct gw_rslot
{
	gw_uuidmap_link in_slots;	/* the table of slots, by session */
	struct gw_rslot *next_dead;	/* the slots to free at the next reap */
	bothy_uuid	session;
	bothy_uuid	grant;
	bothy_uuid	host;
	gw_tstate	state;			/* the session's, as last read or logged */
	bool		started;		/* this grant started (hook, log, or a read) */
	bool		paired;			/* both sides here and told "paired" */
	bool		device_left;	/* a device paired here left: the pairing ended */
	bool		host_left;		/* a host paired here left, not ending it, and is not back */
	bool		paired_elsewhere;	/* terminal.session_paired with no side here */
	bool		local_confirm;	/* the host's require_local_confirm */
	bool		stale;			/* the log named a newer grant of the session */
	bool		dead;			/* ended: freed at the next reap */
	uint8_t		want;			/* gw_rcall bits still to make */
	uint8_t		inflight;		/* gw_rcall bits being made */
	int64_t		retry_at;		/* a failed call again from then */
	int64_t		deadline;		/* the latest a lone side may pair; 0: met */
	int64_t		active_at;		/* the last byte either way, or the pairing */
	gw_rside   *side[2];		/* by gw_rside_kind */
} gw_rslot;

typedef struct gw_rslot_io
{
	/* {"op":"waiting"} (paired false) or {"op":"paired"} to a side */
	void		(*tell) (gw_rside *side, bool paired);
	/* closes the side's connection with code; it has left its slot already */
	void		(*close) (gw_rside *side, int code);
	/* stage terminal.session_paired (host, session) */
	void		(*paired) (const gw_rslot *slot);
	/*
	 * Start the call; its answer comes through gw_rslots_done.  False
	 * when it could not even start: it is tried again at the next tick.
	 */
	bool		(*call) (const gw_rslot *slot, gw_rcall call);
	/* a side closed with 4102 that never paired (the unpaired metric) */
	void		(*unpaired) (gw_rside_kind kind);
	/* the side's pairing ended: read it again if its reading was paused */
	void		(*resume) (gw_rside *side);
} gw_rslot_io;

/* What /metrics and /status.json show of the machine. */
typedef struct gw_rslot_counts
{
	uint32_t	slots;			/* slots held, with or without sides */
	uint32_t	paired;			/* slots relaying now */
	uint32_t	waiting[2];		/* lone sides now, by gw_rside_kind */
} gw_rslot_counts;

/* Before any other call; io is kept.  Forgets every slot. */
void		gw_rslots_init(const gw_rslot_io *io);

/* bothy.terminal_open_timeout and bothy.terminal_idle_timeout (ms), at start and reload. */
void		gw_rslots_configure(int64_t open_timeout_ms, int64_t idle_timeout_ms);

/* The slot of this session and grant, or NULL. */
gw_rslot   *gw_rslots_find(const bothy_uuid *session, const bothy_uuid *grant);

/*
 * The slot of the row's grant, made when missing (its deadline the grant's
 * expiry plus open_timeout); an existing one is left as it is.  A slot of
 * an older grant of the session is marked stale.  NULL when out of memory.
 */
gw_rslot   *gw_rslots_expect(const bothy_uuid *session, const gw_rrow *row, int64_t now);

/*
 * An identified side joins its slot: paired with the side already there,
 * else told "waiting" with its lone timer.  False when the slot holds a
 * side of that kind already (the caller refuses it, 4001).
 */
bool		gw_rslots_join(gw_rslot *slot, gw_rside *side, int64_t now);

/*
 * A side's connection is gone (any close but one the machine decided:
 * those left already).  host_ended: the host closed its data connection
 * with 1000 after it was paired (the shell ended: closed_by_host).
 */
void		gw_rslots_leave(gw_rside *side, bool host_ended, int64_t now);

/* Bytes passed between the sides of a paired slot (idle). */
void		gw_rslots_bytes(gw_rslot *slot, int64_t now);

/* Timers: lone sides, deadlines, idle, calls to try again.  Every GW_SWEEP_MS. */
void		gw_rslots_tick(int64_t now);

/* One row of the terminal log, in number order. */
void		gw_rslots_log(const gw_tlog_row *row, int64_t now);

/* This node's control connection started the grant (relay.h, gw_relay_started). */
void		gw_rslots_started(const bothy_uuid *session, const bothy_uuid *grant, int64_t now);

/* terminal.session_paired of a session. */
void		gw_rslots_session_paired(const bothy_uuid *session, int64_t now);

/*
 * The answer of a call of the slot (session, grant): row is the row a
 * READ found (result TRUE), else NULL.
 */
void		gw_rslots_done(const bothy_uuid *session, const bothy_uuid *grant, gw_rcall call,
						   gw_rresult result, const gw_rrow *row, int64_t now);

/* Read the row of every slot with a side again (the listener came back). */
void		gw_rslots_reconcile(int64_t now);

/* The node stops: a failed call is not tried again. */
void		gw_rslots_stopping(void);

/* A call is wanted or in flight. */
bool		gw_rslots_busy(void);

/* Frees every slot; the sides still joined are left without one. */
void		gw_rslots_forget(void);

void		gw_rslots_counts(gw_rslot_counts *out);

#endif							/* BOTHY_GATEWAY_TERMINAL_RELAY_SLOT_H */
