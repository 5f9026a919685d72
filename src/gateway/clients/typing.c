/*
 * clients/typing.c
 *		Typing indicators across nodes (see typing.h).
 *
 * The sender is found again by gateway session and bind ID when the
 * audience answers, never kept by pointer: the connection may have closed
 * (or been replaced) while the database was asked.
 */
#include <stdlib.h>
#include <string.h>

#include "clients/audience.h"
#include "clients/deliver.h"
#include "clients/hub.h"
#include "clients/protocol.h"
#include "clients/settings.h"
#include "clients/stats.h"
#include "clients/typing.h"
#include "core/listener.h"
#include "core/node.h"
#include "core/publish.h"
#include "logline.h"

typedef struct typing
{
	bothy_uuid	thread;
	bothy_uuid	principal;
	bool		local;			/* from an op here, not from a signal */
	bothy_uuid	session;		/* local: the sender's session and bind */
	bothy_uuid	bind;
	gw_text		ev;				/* once the head admitted the sender */
} typing;

typedef struct find_sender
{
	const typing *t;
	gw_client  *found;
} find_sender;

static void
visit_sender(gw_client *c, void *arg)
{
	find_sender *f = arg;

	if (c->conn.state == GW_CS_READY && bothy_uuid_compare(&c->bind, &f->t->bind) == 0)
		f->found = c;
}

/* The sending connection, if it is still here and ready. */
static gw_client *
sender_of(const typing *t)
{
	find_sender f = {t, NULL};

	gw_hub_each(&gw_clients_hub, GW_HUB_SESSION, &t->session, visit_sender, &f);
	return f.found;
}

static void
reject(gw_client *sender)
{
	char		out[128];
	int			n = gw_encode_error(out, sizeof(out), GW_OP_TYPING, "rejected");

	if (sender != NULL && n > 0)
		gw_conn_send(&sender->conn, out, (size_t) n);
}

/* To the admitted persons' connections, except the sender's own. */
static void
deliver(typing *t, const bothy_uuid *persons, size_t n)
{
	gw_deliver_to_persons(GW_EV_TYPING, &t->ev, persons, n, t->local ? sender_of(t) : NULL);
}

/* This node's persons who may see the thread, and whether the sender may. */
static const char sql_typing[] =
"SELECT bothy.thread_place($2::uuid)::text, "
"EXISTS (SELECT FROM bothy.thread_audience($2::uuid, ARRAY[$1::uuid])), "
GW_AUDIENCE_HERE_COLUMN("$2", "$3");

/*
 * The answer: every node checks the sender (the signal left before the
 * sender's node knew), so nothing is delivered unless the sender is
 * admitted.
 */
static void
answered(void *arg, bool ok, const PGresult *res, const bothy_uuid *persons, size_t n)
{
	typing	   *t = arg;
	bothy_uuid	buf;
	const bothy_uuid *place;

	if (!ok || PQnfields(res) != 3 || !gw_audience_place(res, &buf, &place))
		goto done;
	if (strcmp(PQgetvalue(res, 0, 1), "t") != 0)
	{
		gw_clients_stats.typing_rejected++;
		if (t->local)
			reject(sender_of(t));
		goto done;
	}
	if (gw_event_typing(&t->ev, &t->thread, place, &t->principal,
						gw_now_ms() + gw_csettings.typing_ttl))
		deliver(t, persons, n);
done:
	gw_text_free(&t->ev);
	free(t);
}

/*
 * Asks who of the persons here may see the thread, and whether the sender
 * (who may be on another node) may.  A node with no connection at all
 * asks nothing for another node's typing; its own sender's op is always
 * checked (the sender is told when it is rejected).
 */
static void
ask(typing *t)
{
	char		principal[BOTHY_UUID_STRLEN + 1];
	const char *params[1] = {principal};

	if (!t->local && gw_hub_count(&gw_clients_hub) == 0)
	{
		free(t);
		return;
	}
	bothy_uuid_format(&t->principal, principal);
	if (gw_audience_ask_here(sql_typing, 1, params, &t->thread,
							 gw_listener_fence(), answered, t) == NULL)
		free(t);
}

static void
publish(const bothy_uuid *thread, const bothy_uuid *principal)
{
	bothy_signal sig;

	memset(&sig, 0, sizeof(sig));
	sig.kind = BOTHY_KIND_GATEWAY_TYPING;
	sig.thread = *thread;
	sig.principal = *principal;
	gw_publish(&sig);
}

/*
 * At most one typing op per thread per --typing-interval, and at most
 * GW_TYPING_SLOTS threads per interval: a connection cycling through many
 * threads (each op costs every node a database call) is held to that.
 */
static bool
passes_limit(gw_client *c, const bothy_uuid *thread, int64_t now)
{
	int			i,
				slot = 0;

	for (i = 0; i < GW_TYPING_SLOTS; i++)
	{
		if (bothy_uuid_compare(&c->typing[i].thread, thread) == 0 && c->typing[i].at != 0)
		{
			slot = i;
			break;
		}
		if (c->typing[i].at < c->typing[slot].at)
			slot = i;
	}
	/* the thread's own slot, or the oldest: either still within the interval */
	if (c->typing[slot].at != 0 && now - c->typing[slot].at < gw_copt.typing_interval_ms)
		return false;
	c->typing[slot].thread = *thread;
	c->typing[slot].at = now;
	return true;
}

void
gw_typing_op(gw_client *c, const bothy_uuid *thread)
{
	int64_t		now = gw_mono_ms();
	typing	   *t;

	if (!passes_limit(c, thread, now))
	{
		gw_clients_stats.typing_dropped++;
		return;
	}
	/*
	 * Signalled at once, beside this node's own audience call rather than
	 * after it: the other nodes check the sender's right themselves, so the
	 * event reaches them one database call sooner.  Local delivery still
	 * waits for nothing but this node's own call (D-M7-17-5).
	 */
	publish(thread, &c->principal);
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return;
	t->thread = *thread;
	t->principal = c->principal;
	t->local = true;
	t->session = c->session;
	t->bind = c->bind;
	ask(t);
}

void
gw_typing_signal(const bothy_signal *sig)
{
	typing	   *t;

	if (!gw_signal_reaches_here(sig))
		return;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return;
	t->thread = sig->thread;
	t->principal = sig->principal;
	ask(t);
}
