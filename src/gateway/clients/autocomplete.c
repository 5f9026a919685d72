/*
 * clients/autocomplete.c
 *		Autocomplete between a person and an agent on one node (see
 *		autocomplete.h).
 *
 * A waiting request names both connections by gateway session and bind ID,
 * never by pointer, so either may close while it waits.  The requests
 * waiting at once are bounded, on the node (AUTOCOMPLETE_MAX_WAITING) and
 * per person connection (AUTOCOMPLETE_PER_CONNECTION): beyond either a
 * request ends at once with an empty result, as without a consumer.
 */
#include <stdlib.h>
#include <string.h>

#include "clients/autocomplete.h"
#include "clients/deliver.h"
#include "clients/events.h"
#include "clients/hub.h"
#include "clients/settings.h"
#include "clients/stats.h"
#include "core/node.h"
#include "logline.h"

#define AUTOCOMPLETE_MAX_WAITING 10000
#define AUTOCOMPLETE_PER_CONNECTION 4	/* one person cannot crowd out the others */

typedef struct waiting
{
	lws_dll2_t	list;
	bothy_uuid	request;		/* UUIDv7 of this node */
	bothy_uuid	person_session;
	bothy_uuid	person_bind;
	bothy_uuid	agent_bind;		/* the consumer it was sent to */
	char		ref[GW_REF_MAX + 1];
	lws_sorted_usec_list_t sul; /* the deadline */
} waiting;

static lws_dll2_owner_t waiting_list;

typedef struct find_conn
{
	const bothy_uuid *bind;		/* NULL: any */
	gw_conn_kind kind;
	gw_client  *found;
} find_conn;

static void
visit_find(gw_client *c, void *arg)
{
	find_conn  *f = arg;

	if (c->conn.state != GW_CS_READY || c->kind != f->kind)
		return;
	if (f->bind != NULL ? bothy_uuid_compare(&c->bind, f->bind) == 0
		: (f->found == NULL || bothy_uuid_compare(&c->bind, &f->found->bind) > 0))
		f->found = c;
}

/* A ready connection of index key (and bind, when given). */
static gw_client *
find(gw_hub_index index, const bothy_uuid *key, const bothy_uuid *bind, gw_conn_kind kind)
{
	find_conn	f = {bind, kind, NULL};

	gw_hub_each(&gw_clients_hub, index, key, visit_find, &f);
	return f.found;
}

static void
answer(gw_client *person, const char *ref, const char *items)
{
	gw_text		msg;

	if (person == NULL)
		return;
	if (gw_encode_autocomplete_items(&msg, ref, items))
	{
		gw_conn_send(&person->conn, msg.data, msg.len);
		gw_text_free(&msg);
	}
	else
		gw_conn_close(&person->conn, GW_CLOSE_INTERNAL, "internal error");
}

static void
finish(waiting *w, const char *items)
{
	gw_client  *person = find(GW_HUB_SESSION, &w->person_session, &w->person_bind, GW_CONN_PERSON);

	if (person != NULL && person->autocompleting > 0)
		person->autocompleting--;
	answer(person, w->ref, items);
	lws_sul_cancel(&w->sul);
	lws_dll2_remove(&w->list);
	free(w);
}

static void
deadline_cb(lws_sorted_usec_list_t *sul)
{
	gw_clients_stats.autocomplete_timeouts++;
	finish(lws_container_of(sul, waiting, sul), "[]");
}

void
gw_autocomplete_request(gw_client *person, const gw_msg *m)
{
	gw_client  *agent = find(GW_HUB_PRINCIPAL, &m->agent, NULL, GW_CONN_AGENT);
	waiting    *w;
	gw_text		ev;

	if (agent == NULL || waiting_list.count >= AUTOCOMPLETE_MAX_WAITING ||
		person->autocompleting >= AUTOCOMPLETE_PER_CONNECTION ||
		(w = calloc(1, sizeof(*w))) == NULL)
	{
		gw_clients_stats.autocomplete_empty++;
		answer(person, m->ref, "[]");
		return;
	}
	gw_new_uuid(&w->request);
	w->person_session = person->session;
	w->person_bind = person->bind;
	w->agent_bind = agent->bind;
	memcpy(w->ref, m->ref, sizeof(w->ref));
	if (!gw_event_autocomplete_requested(&ev, &w->request, &person->principal, m->query))
	{
		free(w);
		answer(person, m->ref, "[]");
		return;
	}
	lws_dll2_add_tail(&w->list, &waiting_list);
	person->autocompleting++;
	lws_sul_schedule(gw.context, 0, &w->sul, deadline_cb,
					 (lws_usec_t) gw_copt.autocomplete_timeout_ms * LWS_US_PER_MS);
	gw_clients_stats.autocomplete_forwarded++;
	gw_deliver_to_conn(GW_EV_AUTOCOMPLETE, &ev, agent);
	gw_text_free(&ev);
}

void
gw_autocomplete_answer(gw_client *agent, const gw_msg *m)
{
	lws_dll2_t *d;

	for (d = waiting_list.head; d != NULL; d = d->next)
	{
		waiting    *w = lws_container_of(d, waiting, list);

		if (bothy_uuid_compare(&w->request, &m->request) != 0)
			continue;
		/* only the consumer it was sent to answers it */
		if (bothy_uuid_compare(&w->agent_bind, &agent->bind) != 0)
			break;
		gw_clients_stats.autocomplete_answered++;
		finish(w, m->items);
		return;
	}
	/* late (the deadline answered already) or not this consumer's */
	gw_clients_stats.autocomplete_late++;
}

void
gw_autocomplete_stop(void)
{
	while (waiting_list.head != NULL)
	{
		waiting    *w = lws_container_of(waiting_list.head, waiting, list);

		lws_sul_cancel(&w->sul);
		lws_dll2_remove(&w->list);
		free(w);
	}
}
