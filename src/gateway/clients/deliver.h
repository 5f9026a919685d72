/*
 * clients/deliver.h
 *		Handing one encoded event to this node's connections: to the ready
 *		person connections of given persons, to every ready person
 *		connection; and whether an audience signal concerns this node.
 *
 * "Every delivery admits each connection again" (D-M7-17-5): callers ask
 * the database who may see a thread at each delivery (audience.h) and hand
 * only those persons here; nothing about admission is cached.
 */
#ifndef BOTHY_GATEWAY_DELIVER_H
#define BOTHY_GATEWAY_DELIVER_H

#include <stddef.h>

#include "clients/client.h"
#include "clients/events.h"
#include "signal.h"
#include "uuid.h"

/*
 * Queues ev on every ready person connection of the n persons, except the
 * connection except (may be NULL).  Returns the connections reached.
 */
size_t		gw_deliver_to_persons(gw_event_type type, const gw_text *ev,
								  const bothy_uuid *persons, size_t n, const gw_client *except);

/* Queues ev on every ready person connection of this node. */
size_t		gw_deliver_to_all_persons(gw_event_type type, const gw_text *ev);

/* Queues ev on one connection (counted like the others). */
void		gw_deliver_to_conn(gw_event_type type, const gw_text *ev, gw_client *c);

/*
 * Whether an audience signal (gateway.typing, gateway.run) concerns this
 * node: true without a reach, or when its reach names this node
 * (src/common/reach.h); false counts it in
 * bothy_gateway_signals_unreached_total, and the caller delivers nothing.
 */
bool		gw_signal_reaches_here(const bothy_signal *sig);

/* Whether any ready connection of principal is on this node. */
bool		gw_has_local_principal(const bothy_uuid *principal, gw_conn_kind kind);

#endif							/* BOTHY_GATEWAY_DELIVER_H */
