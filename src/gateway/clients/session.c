/*
 * clients/session.c
 *		Client protocol v1 on one connection (docs/protocol.md).
 *
 * Order of checks for a message: parse strictly (4002), then the state
 * (only identify or resume before ready, neither after: 4002), then the
 * kind (person ops from agents and the reverse: 4002).  A token is
 * verified before any database call, so a refused token (4001) costs the
 * database nothing.  A database call that fails or times out answers
 * {"op":"error"} and leaves the connection open: an outage never closes a
 * client by itself.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clients/agents.h"
#include "clients/binds.h"
#include "clients/autocomplete.h"
#include "clients/fence.h"
#include "clients/hub.h"
#include "clients/presence.h"
#include "clients/session.h"
#include "clients/settings.h"
#include "clients/stats.h"
#include "clients/stream.h"
#include "clients/typing.h"
#include "core/node.h"
#include "intparse.h"
#include "keys/node_keys.h"
#include "keys/token.h"
#include "logline.h"

/* Large enough for ready with a resume token of BOTHY_TOKEN_MAX. */
#define OUT_MAX (BOTHY_TOKEN_MAX + 512)

static void start_save(gw_client *c, int64_t acked, gw_op op);

/*
 * The quiet deadline: before ready, identify or resume must arrive within
 * --identify-timeout; after ready, some message (a heartbeat at least)
 * within twice the heartbeat_ms announced in ready, so one late heartbeat
 * is forgiven and a vanished client is closed.  While a database call of
 * identify runs there is none: the call's own timeout ends that wait.
 */
static void
arm_identify_deadline(gw_client *c)
{
	c->quiet_until = gw_mono_ms() + gw.opt.identify_timeout_ms;
	gw_conn_wake_at(&c->conn, c->quiet_until);
}

/* Pushed back by every message: the wake-up asked before stays (see conn.h). */
static void
arm_heartbeat_deadline(gw_client *c)
{
	c->quiet_until = gw_mono_ms() + 2 * (int64_t) gw_copt.heartbeat_ms;
	gw_conn_wake_at(&c->conn, c->quiet_until);
}

static void
quiet(gw_client *c)
{
	c->quiet_until = 0;
	if (c->conn.state == GW_CS_NEW)
		gw_conn_close(&c->conn, GW_CLOSE_MALFORMED, "no identify in time");
	else if (c->conn.state == GW_CS_READY)
	{
		gw_clients_stats.heartbeats_missed++;
		gw_log(GW_LOG_INFO, "client closed: no heartbeat in time");
		gw_conn_close(&c->conn, GW_CLOSE_SILENT, "no heartbeat in time");
	}
}

void
gw_session_save_now(gw_client *c)
{
	start_save(c, c->acked, GW_OP_NONE);
}

/*
 * An agent's lease renewal and the persisting of its heartbeats are
 * checked at every sweep (agents are few); a person wakes only for its
 * quiet deadline.
 */
void
gw_session_tick(gw_client *c, int64_t now)
{
	if (c->conn.state == GW_CS_READY && c->kind == GW_CONN_AGENT)
	{
		if (now >= c->renew_at)
			start_save(c, c->acked, GW_OP_NONE);
		gw_agents_tick(c);
		gw_conn_wake_at(&c->conn, now + GW_SWEEP_MS);
	}
	if (c->quiet_until != 0 && now >= c->quiet_until)
		quiet(c);
	else if (c->quiet_until != 0)
		gw_conn_wake_at(&c->conn, c->quiet_until);
}

void
gw_session_opened(gw_client *c)
{
	arm_identify_deadline(c);
}

void
gw_session_closed(gw_client *c)
{
	c->quiet_until = 0;
	/* counted as a person once ready: its presence row goes at the next flush */
	if (c->counted == GW_CONN_PERSON)
		gw_presence_ended(c);
	if (c->call != NULL)
	{
		gw_db_cancel(c->call);
		c->call = NULL;
	}
	gw_binds_forget(c);
	if (c->kind == GW_CONN_AGENT)
	{
		gw_agents_closed(c);
		gw_stream_closed(c);
	}
}

static void
send_error(gw_client *c, gw_op op, gw_db_result result)
{
	char		out[128];
	int			n = gw_encode_error(out, sizeof(out), op,
									result == GW_DB_TIMEOUT ? "timeout" : "unavailable");

	if (n > 0)
		gw_conn_send(&c->conn, out, (size_t) n);
}

static void
send_rejected(gw_client *c, gw_op op)
{
	char		out[128];
	int			n = gw_encode_error(out, sizeof(out), op, "rejected");

	if (n > 0)
		gw_conn_send(&c->conn, out, (size_t) n);
}

/* The SQLSTATE of a database error: class 22 is the caller's bad argument. */
static bool
is_argument_error(const PGresult *res)
{
	const char *state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	return state != NULL && strncmp(state, "22", 2) == 0;
}

/* ready, after device_bind or consumer_take answered. */
static void
send_ready(gw_client *c)
{
	bothy_token who;
	char		resume[BOTHY_TOKEN_MAX + 1];
	char		out[OUT_MAX];
	bool		agent = c->kind == GW_CONN_AGENT;
	int			n;

	/* the identity the session was bound for, as a verified token holds it */
	memset(&who, 0, sizeof(who));
	who.kind = agent ? BOTHY_TOKEN_AGENT : BOTHY_TOKEN_PERSON_DEVICE;
	if (agent)
		who.agent = c->principal;
	else
	{
		who.person = c->principal;
		who.device = c->device;
	}
	if (!bothy_token_mint_resume(gw_keys(), &who, &c->session, gw_now_ms() / 1000,
								 resume, sizeof(resume)))
	{
		gw_log(GW_LOG_ERROR, "resume token could not be signed");
		gw_conn_close(&c->conn, GW_CLOSE_INTERNAL, "internal error");
		return;
	}
	n = gw_encode_ready(out, sizeof(out), &c->session, &c->bind, resume, &gw.id,
						gw_copt.heartbeat_ms, agent, c->acked);
	if (n < 0)
	{
		gw_conn_close(&c->conn, GW_CLOSE_INTERNAL, "internal error");
		return;
	}
	arm_heartbeat_deadline(c);
	gw_clients_stats.connections[c->counted]--;
	c->counted = c->kind;
	gw_clients_stats.connections[c->counted]++;
	c->conn.state = GW_CS_READY;
	gw_conn_send(&c->conn, out, (size_t) n);
	if (c->kind == GW_CONN_PERSON)
		gw_presence_changed(c);
}

static void
identify_failed(gw_client *c)
{
	gw_hub_unindex_conn(&gw_clients_hub, c);
	c->conn.state = GW_CS_NEW;
	c->kind = GW_CONN_UNIDENTIFIED;
	arm_identify_deadline(c);
}

/*
 * device_bind answered bind: ready, unless a newer binding is known (4017).
 * c->bind may be this very binding: a gateway.device signal heard while
 * the bind ran is checked against the database (fence.c), whose newest
 * binding is then this one.
 */
static void
person_bound(gw_client *c, const bothy_uuid *bind)
{
	bool		newest = bothy_uuid_compare(bind, &c->bind) >= 0;

	c->bind = *bind;
	if (!newest || !gw_fence_device(&c->device, &c->session, bind, c))
	{
		gw_conn_close(&c->conn, GW_CLOSE_TAKEN, "device taken elsewhere");
		return;
	}
	send_ready(c);
}

static void
arm_renewal(gw_client *c)
{
	c->renew_at = gw_mono_ms() + gw_csettings.consumer_lease / 3;
}

/* consumer_take answered: this session holds the agent's stream. */
static void
agent_taken(gw_client *c, int64_t acked)
{
	c->acked = c->saved_acked = acked;
	send_ready(c);
	if (c->conn.state != GW_CS_READY)
		return;
	arm_renewal(c);
	/* its renewals and heartbeats are checked at every sweep from now on */
	gw_conn_wake_at(&c->conn, gw_mono_ms() + GW_SWEEP_MS);
	gw_fence_consumer(&c->principal, &c->bind, c);
	gw_agents_ready(c);
	gw_stream_ready(c);
	if (c->save_at_ready)
	{
		/* taken by another while this take ran: which is newer, the save says */
		c->save_at_ready = false;
		start_save(c, c->acked, GW_OP_NONE);
	}
}

/* Back to waiting for identify, the failed call answered: the client may try again. */
static void
identify_answer_failure(gw_client *c, gw_db_result result, const PGresult *res)
{
	identify_failed(c);
	if (result == GW_DB_ERROR && is_argument_error(res))
		send_rejected(c, c->call_op);
	else
		send_error(c, c->call_op, result);
}

void
gw_session_bound(gw_client *c, gw_db_result result, const PGresult *res, const bothy_uuid *bind)
{
	if (c->conn.state != GW_CS_IDENTIFYING)
		return;
	if (bind != NULL)
		person_bound(c, bind);
	else
		identify_answer_failure(c, result, res);
}

/* consumer_take answered an agent's identify or resume. */
static void
identify_done(void *arg, gw_db_result result, const PGresult *res)
{
	gw_client  *c = arg;
	long		acked;

	c->call = NULL;
	if (c->conn.state != GW_CS_IDENTIFYING)
		return;
	if (result == GW_DB_OK && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
	{
		if (bothy_parse_int(PQgetvalue(res, 0, 0), 0, GW_EVENT_MAX, &acked))
		{
			agent_taken(c, acked);
			return;
		}
		gw_log(GW_LOG_ERROR, "database answer not understood");
		result = GW_DB_ERROR;
	}
	identify_answer_failure(c, result, res);
}

static const char sql_consumer_take[] =
"SELECT bothy.consumer_take($1::uuid, $2::uuid, $3::uuid, 'connection', NULL, NULL)";
static const char sql_consumer_save[] =
"SELECT bothy.consumer_save($1::uuid, $2::uuid, $3::bigint)";

/* An agent's identify or resume: the binding takes the agent's stream. */
static void
take_consumer(gw_client *c, gw_op op)
{
	char		node[BOTHY_UUID_STRLEN + 1],
				agent[BOTHY_UUID_STRLEN + 1],
				bind[BOTHY_UUID_STRLEN + 1];
	const char *params[3] = {agent, node, bind};

	/* the binding of the session to this connection holds the stream */
	gw_new_uuid(&c->bind);
	bothy_uuid_format(&gw.id, node);
	bothy_uuid_format(&c->principal, agent);
	bothy_uuid_format(&c->bind, bind);
	c->save_at_ready = false;
	gw_hub_index_conn(&gw_clients_hub, c);
	c->call = gw_db_submit(gw.db, sql_consumer_take, 3, params, identify_done, c);
	if (c->call == NULL)
	{
		identify_failed(c);
		send_error(c, op, GW_DB_ERROR);
	}
}

/* identify or resume with a verified token. */
static void
bind_session(gw_client *c, gw_op op, const bothy_token *t)
{
	bool		agent = t->kind == BOTHY_TOKEN_AGENT || (t->kind == BOTHY_TOKEN_RESUME && t->is_agent);

	if (t->kind == BOTHY_TOKEN_RESUME)
	{
		c->session = t->session;
		c->resumed = true;
	}
	else
		gw_new_uuid(&c->session);
	c->call_op = op;
	c->conn.state = GW_CS_IDENTIFYING;
	c->quiet_until = 0;
	if (agent)
	{
		c->kind = GW_CONN_AGENT;
		c->principal = t->agent;
		take_consumer(c, op);
		return;
	}
	c->kind = GW_CONN_PERSON;
	c->principal = t->person;
	c->device = t->device;
	memset(&c->bind, 0, sizeof(c->bind));	/* no other binding seen yet */
	gw_hub_index_conn(&gw_clients_hub, c);
	/* bound with the others that wait (binds.c): gw_session_bound answers */
	gw_binds_add(c);
}

static void
on_identify(gw_client *c, const gw_msg *m)
{
	unsigned	accept = m->op == GW_OP_IDENTIFY
		? (1u << BOTHY_TOKEN_PERSON_DEVICE) | (1u << BOTHY_TOKEN_AGENT)
		: (1u << BOTHY_TOKEN_RESUME);
	bothy_token t;
	bothy_token_result r;

	r = bothy_token_verify(gw_keys(), m->token, m->token_len, gw_now_ms() / 1000, accept, &t);
	if (r != BOTHY_TOKEN_OK)
	{
		gw_clients_stats.tokens_refused++;
		gw_logf(GW_LOG_INFO, "token refused", "reason=%s", bothy_token_result_name(r));
		gw_conn_close(&c->conn, GW_CLOSE_TOKEN, "token refused");
		return;
	}
	bind_session(c, m->op, &t);
}

static const char sql_consumer_resume[] =
"SELECT bothy.consumer_resume($1::uuid, $2::uuid, $3::uuid, $4::bigint)";

static void start_resume(gw_client *c);

/* The saves that waited behind the one that just ended. */
static void
save_next(gw_client *c)
{
	if (c->ack_pending)
	{
		/* a client's ack among those that waited: its failure is answered */
		gw_op		op = c->ack_pending_client ? GW_OP_ACK : GW_OP_NONE;

		c->ack_pending = false;
		c->ack_pending_client = false;
		start_save(c, c->ack_next, op);
	}
}

/* A call of the hold failed (not refused): answered to a client's ack. */
static void
save_failed(gw_client *c, gw_db_result result, const PGresult *res)
{
	if (result == GW_DB_ERROR && is_argument_error(res))
	{
		/*
		 * An acknowledgement the database refuses (beyond the agent's last
		 * event) must not stay in the renewals that follow, which would all
		 * fail with it: back to what the database confirmed.
		 */
		c->acked = c->saved_acked;
		if (c->ack_next > c->saved_acked)
			c->ack_next = c->saved_acked;
		if (c->call_op == GW_OP_ACK)
		{
			send_rejected(c, GW_OP_ACK);
			return;
		}
	}
	if (c->call_op != GW_OP_ACK)
		gw_log(GW_LOG_WARN, "consumer lease not renewed, retrying");
	else
		send_error(c, GW_OP_ACK, result);
}

static void
resume_done(void *arg, gw_db_result result, const PGresult *res)
{
	gw_client  *c = arg;
	bool		held;

	c->call = NULL;
	if (c->conn.state != GW_CS_READY)
		return;
	if (result == GW_DB_OK && gw_db_bool(res, &held))
	{
		if (!held)
		{
			/* another holder has the agent's stream (D-M7-17-4) */
			gw_conn_close(&c->conn, GW_CLOSE_FENCED, "consumer fenced");
			return;
		}
		gw_clients_stats.consumer_resumes++;
		gw_log(GW_LOG_INFO, "consumer lease lapsed with no takeover, holding again");
		if (c->saving_acked > c->saved_acked)
			c->saved_acked = c->saving_acked;
		/* what was appended while it did not hold was read as nothing */
		gw_stream_reconcile_conn(c);
	}
	else
		save_failed(c, result, res);
	save_next(c);
}

/*
 * The save said no: fenced by another holder, or only a lease that lapsed
 * (the database was away longer than bothy.consumer_lease).  The database
 * tells which, and in the second case holds again: an outage alone never
 * costs a consumer its stream.
 */
static void
start_resume(gw_client *c)
{
	char		agent[BOTHY_UUID_STRLEN + 1],
				holder[BOTHY_UUID_STRLEN + 1],
				n[24];
	const char *params[4] = {agent, gw.id_text, holder, n};

	bothy_uuid_format(&c->principal, agent);
	bothy_uuid_format(&c->bind, holder);
	snprintf(n, sizeof(n), "%lld", (long long) c->acked);
	c->saving_acked = c->acked;
	c->call = gw_db_submit(gw.db, sql_consumer_resume, 4, params, resume_done, c);
	if (c->call == NULL)
		save_failed(c, GW_DB_ERROR, NULL);
}

static void
save_done(void *arg, gw_db_result result, const PGresult *res)
{
	gw_client  *c = arg;
	bool		held;

	c->call = NULL;
	if (c->conn.state != GW_CS_READY)
		return;
	if (result == GW_DB_OK && gw_db_bool(res, &held))
	{
		if (!held)
		{
			start_resume(c);
			return;
		}
		if (c->saving_acked > c->saved_acked)
			c->saved_acked = c->saving_acked;
	}
	else
		save_failed(c, result, res);
	save_next(c);
}

/*
 * The guarded save of the held acknowledgement, which also renews the
 * lease; op is GW_OP_ACK for a client's ack (a failure is answered with an
 * error) and GW_OP_NONE for the node's own renewals and fencing checks.
 */
static void
start_save(gw_client *c, int64_t acked, gw_op op)
{
	char		agent[BOTHY_UUID_STRLEN + 1],
				holder[BOTHY_UUID_STRLEN + 1],
				n[24];
	const char *params[3] = {agent, holder, n};

	/* what the client acknowledged opens its window at once (stream.c) */
	if (acked > c->acked)
		c->acked = acked;
	if (c->call != NULL)
	{
		/* one save at a time: the newest waiting ack replaces older ones */
		c->ack_pending = true;
		if (op == GW_OP_ACK)
			c->ack_pending_client = true;
		if (acked > c->ack_next)
			c->ack_next = acked;
		return;
	}
	bothy_uuid_format(&c->principal, agent);
	bothy_uuid_format(&c->bind, holder);
	snprintf(n, sizeof(n), "%lld", (long long) acked);
	c->saving_acked = acked;
	arm_renewal(c);
	c->call_op = op;
	c->call = gw_db_submit(gw.db, sql_consumer_save, 3, params, save_done, c);
	if (c->call == NULL && op == GW_OP_ACK)
		send_error(c, op, GW_DB_ERROR);
}

/* Which kind of connection may send op (heartbeat: any; a state: agents only). */
static bool
op_allowed(const gw_client *c, const gw_msg *m)
{
	switch (m->op)
	{
		case GW_OP_HEARTBEAT:
			return !m->has_state || c->kind == GW_CONN_AGENT;
		case GW_OP_FOCUS:
		case GW_OP_IDLE:
		case GW_OP_TYPING:
		case GW_OP_AUTOCOMPLETE:
			return c->kind == GW_CONN_PERSON;
		case GW_OP_ACK:
		case GW_OP_AUTOCOMPLETE_ANSWER:
			return c->kind == GW_CONN_AGENT;
		case GW_OP_IDENTIFY:
		case GW_OP_RESUME:
		case GW_OP_NONE:
			break;
	}
	return false;
}

/* One op of a ready connection, allowed for its kind. */
static void
on_op(gw_client *c, const gw_msg *m)
{
	char		out[64];
	int			n;

	if (c->kind == GW_CONN_AGENT)
		gw_agents_message(c, m);	/* every message is a heartbeat of the agent */
	switch (m->op)
	{
		case GW_OP_HEARTBEAT:
			n = gw_encode_heartbeat_ack(out, sizeof(out));
			if (n > 0)
				gw_conn_send(&c->conn, out, (size_t) n);
			return;
		case GW_OP_FOCUS:
			c->has_focus = m->has_thread;
			c->focus = m->thread;
			gw_presence_changed(c);
			return;
		case GW_OP_IDLE:
			c->idle = m->idle;
			gw_presence_changed(c);
			return;
		case GW_OP_TYPING:
			gw_typing_op(c, &m->thread);
			return;
		case GW_OP_AUTOCOMPLETE:
			gw_autocomplete_request(c, m);
			return;
		case GW_OP_AUTOCOMPLETE_ANSWER:
			gw_autocomplete_answer(c, m);
			return;
		case GW_OP_ACK:
			start_save(c, m->event, GW_OP_ACK);
			gw_stream_acked(c);
			return;
		case GW_OP_IDENTIFY:
		case GW_OP_RESUME:
		case GW_OP_NONE:
			return;
	}
}

void
gw_session_message(gw_client *c, const char *msg, size_t len)
{
	gw_msg	   *m;
	gw_parse_status st;

	if (c->conn.state == GW_CS_CLOSING)
		return;
	/* a few kB: off the stack of a callback deep inside lws */
	m = malloc(sizeof(*m));
	if (m == NULL)
	{
		gw_conn_close(&c->conn, GW_CLOSE_INTERNAL, "out of memory");
		return;
	}
	st = gw_protocol_parse(msg, len, m);
	if (st != GW_PARSE_OK)
	{
		gw_logf(GW_LOG_INFO, "client closed: malformed message", "reason=%s",
				gw_parse_status_code(st));
		gw_conn_close(&c->conn, GW_CLOSE_MALFORMED, "malformed message");
		free(m);
		return;
	}
	if (m->op == GW_OP_IDENTIFY || m->op == GW_OP_RESUME)
	{
		if (c->conn.state != GW_CS_NEW)
		{
			gw_log(GW_LOG_INFO, "client closed: identify twice");
			gw_conn_close(&c->conn, GW_CLOSE_MALFORMED, "identify twice");
		}
		else
			on_identify(c, m);
	}
	else if (c->conn.state != GW_CS_READY)
	{
		gw_log(GW_LOG_INFO, "client closed: op before ready");
		gw_conn_close(&c->conn, GW_CLOSE_MALFORMED, "identify first");
	}
	else if (!op_allowed(c, m))
	{
		gw_log(GW_LOG_INFO, "client closed: op not for this kind of connection");
		gw_conn_close(&c->conn, GW_CLOSE_MALFORMED,
					  c->kind == GW_CONN_AGENT ? "op is for persons" : "op is for agents");
	}
	else
	{
		arm_heartbeat_deadline(c);
		on_op(c, m);
	}
	gw_msg_clear(m);
	free(m);
}
