/*
 * clients/hub.h
 *		Who of the gateway route is connected to this node: its
 *		connections (the core lists them, core/conn.h), and the identified
 *		ones indexed by gateway session, by principal (a person or an
 *		agent) and by device.
 *
 * The indexes are what the cross-node behaviour of issue 5 needs to
 * deliver a signal (device replacement by device, fencing by agent,
 * typing and hints by person): each index is a fixed core/uuidmap.h
 * whose links live in the connection, so an identified connection costs
 * three links and no allocation, and a lookup is one bucket.
 */
#ifndef BOTHY_GATEWAY_HUB_H
#define BOTHY_GATEWAY_HUB_H

#include <stdbool.h>
#include <stdint.h>

#include "core/uuidmap.h"
#include "uuid.h"

#define GW_HUB_BUCKETS 4096		/* a power of two */

struct gw_client;

typedef enum gw_hub_index
{
	GW_HUB_SESSION = 0,
	GW_HUB_PRINCIPAL,
	GW_HUB_DEVICE
} gw_hub_index;

typedef struct gw_hub
{
	gw_uuidmap	index[3];		/* by gw_hub_index */
} gw_hub;

/* The hub of this node's clients. */
extern gw_hub gw_clients_hub;

/*
 * Its identify began (session, principal and device are set): into the
 * indexes (device only for a person); out of them when identify failed
 * or the connection closed.
 */
void		gw_hub_index_conn(gw_hub *hub, struct gw_client *c);
void		gw_hub_unindex_conn(gw_hub *hub, struct gw_client *c);

/*
 * Calls visit for each connection whose key in index equals key (in any
 * state from identify on: visit checks the state it needs).  visit
 * may close the connection it is given (closing only marks it), but must
 * not free others.
 */
typedef void (*gw_hub_visit) (struct gw_client *c, void *arg);
void		gw_hub_each(gw_hub *hub, gw_hub_index index, const bothy_uuid *key,
						gw_hub_visit visit, void *arg);

/* Every connection of the route, identified or not. */
void		gw_hub_each_conn(gw_hub *hub, gw_hub_visit visit, void *arg);

/* How many connections the route has, identified or not. */
uint32_t	gw_hub_count(const gw_hub *hub);

#endif							/* BOTHY_GATEWAY_HUB_H */
