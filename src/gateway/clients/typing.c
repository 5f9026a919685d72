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

/* The index of id in ids, or n. */
static size_t
index_of(const bothy_uuid *ids, size_t n, const bothy_uuid *id)
{
	size_t		i;

	for (i = 0; i < n; i++)
		if (bothy_uuid_compare(&ids[i], id) == 0)
			return i;
	return n;
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

/*
 * The first part, which holds the sender: every node checks the sender
 * (the signal left before the sender's node knew), so nothing is
 * delivered unless the sender is admitted.
 */
static bool
head(void *arg, bool ok, const PGresult *res, const bothy_uuid *persons, size_t n)
{
	typing	   *t = arg;
	bothy_uuid	buf;
	const bothy_uuid *place;

	if (!ok || !gw_audience_place(res, &buf, &place))
		return false;
	if (index_of(persons, n, &t->principal) == n)
	{
		gw_clients_stats.typing_rejected++;
		if (t->local)
			reject(sender_of(t));
		return false;
	}
	if (!gw_event_typing(&t->ev, &t->thread, place, &t->principal,
						 gw_now_ms() + gw_csettings.typing_ttl))
		return false;
	deliver(t, persons, n);
	return true;
}

static void
part(void *arg, const bothy_uuid *persons, size_t n)
{
	deliver(arg, persons, n);
}

static void
done(void *arg, int failed)
{
	typing	   *t = arg;

	(void) failed;
	gw_text_free(&t->ev);
	free(t);
}

static const gw_audience_ops typing_ops = {head, part, done};

/*
 * Asks who may see the thread among the persons here and the sender (who
 * may be on another node), the sender first so that its own right is
 * checked in the first part.  A signal for a node with nobody to tell
 * costs no database call.
 */
static void
ask(typing *t)
{
	bothy_uuid *persons,
			   *grown;
	size_t		n,
				at;

	if (!gw_local_persons(&persons, &n))
	{
		free(t);
		return;
	}
	if (n == 0 && !t->local)
	{
		free(persons);
		free(t);
		return;
	}
	at = index_of(persons, n, &t->principal);
	if (at == n)
	{
		grown = realloc(persons, (n + 1) * sizeof(*persons));
		if (grown == NULL)
		{
			free(persons);
			free(t);
			return;
		}
		persons = grown;
		persons[n++] = t->principal;
	}
	/* the sender first, the others still sorted: each part a range (deliver.h) */
	memmove(persons + 1, persons, at * sizeof(*persons));
	persons[0] = t->principal;
	if (gw_audience_ask_place(&t->thread, persons, n, &typing_ops, t) == NULL)
		free(t);
	free(persons);
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
	typing	   *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return;
	t->thread = sig->thread;
	t->principal = sig->principal;
	ask(t);
}
