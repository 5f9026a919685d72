/*
 * clients/deliver.c
 *		Queueing an encoded event on this node's connections (see deliver.h).
 */
#include <stdlib.h>

#include "clients/deliver.h"
#include "clients/hub.h"
#include "clients/stats.h"
#include "core/node.h"
#include "reach.h"

void
gw_deliver_to_conn(gw_event_type type, const gw_text *ev, gw_client *c)
{
	gw_conn_send(&c->conn, ev->data, ev->len);
	gw_clients_stats.events_delivered[type]++;
}

typedef struct to_person
{
	gw_event_type type;
	const gw_text *ev;
	const gw_client *except;
	size_t		reached;
} to_person;

static bool
is_ready_person(const gw_client *c)
{
	return c->conn.state == GW_CS_READY && c->kind == GW_CONN_PERSON;
}

static void
visit_person(gw_client *c, void *arg)
{
	to_person  *t = arg;

	if (c == t->except || !is_ready_person(c))
		return;
	gw_deliver_to_conn(t->type, t->ev, c);
	t->reached++;
}

size_t
gw_deliver_to_persons(gw_event_type type, const gw_text *ev, const bothy_uuid *persons,
					  size_t n, const gw_client *except)
{
	to_person	t = {type, ev, except, 0};
	size_t		i;

	for (i = 0; i < n; i++)
		gw_hub_each(&gw_clients_hub, GW_HUB_PRINCIPAL, &persons[i], visit_person, &t);
	return t.reached;
}

size_t
gw_deliver_to_all_persons(gw_event_type type, const gw_text *ev)
{
	to_person	t = {type, ev, NULL, 0};

	gw_hub_each_conn(&gw_clients_hub, visit_person, &t);
	return t.reached;
}

bool
gw_signal_reaches_here(const bothy_signal *sig)
{
	if (bothy_reach_includes(sig, &gw.id))
		return true;
	gw_clients_stats.signals_unreached++;
	return false;
}

typedef struct find_principal
{
	gw_conn_kind kind;
	bool		found;
} find_principal;

static void
visit_find(gw_client *c, void *arg)
{
	find_principal *f = arg;

	if (c->conn.state == GW_CS_READY && c->kind == f->kind)
		f->found = true;
}

bool
gw_has_local_principal(const bothy_uuid *principal, gw_conn_kind kind)
{
	find_principal f = {kind, false};

	gw_hub_each(&gw_clients_hub, GW_HUB_PRINCIPAL, principal, visit_find, &f);
	return f.found;
}
