/*
 * hub.h
 *		Who is connected to this node: every WebSocket connection, and the
 *		identified ones indexed by gateway session, by principal (a person
 *		or an agent) and by device.
 *
 * The indexes are what the cross-node behaviour of issue 5 needs to
 * deliver a signal (device replacement by device, fencing by agent,
 * typing and hints by person): each lookup is one bucket of a fixed
 * hash table of intrusive lists, so an identified connection costs three
 * list nodes and no allocation.
 */
#ifndef BOTHY_GATEWAY_HUB_H
#define BOTHY_GATEWAY_HUB_H

#include <stdbool.h>

#include <libwebsockets.h>

#include "uuid.h"

#define GW_HUB_BUCKETS 4096		/* a power of two */

struct gw_conn;

typedef struct gw_hub
{
	lws_dll2_owner_t all;		/* every WebSocket connection */
	lws_dll2_owner_t sessions[GW_HUB_BUCKETS];
	lws_dll2_owner_t principals[GW_HUB_BUCKETS];
	lws_dll2_owner_t devices[GW_HUB_BUCKETS];
} gw_hub;

typedef enum gw_hub_index
{
	GW_HUB_SESSION = 0,
	GW_HUB_PRINCIPAL,
	GW_HUB_DEVICE
} gw_hub_index;

/* A connection was upgraded / has closed (also leaves every index). */
void		gw_hub_join(gw_hub *hub, struct gw_conn *c);
void		gw_hub_leave(gw_hub *hub, struct gw_conn *c);

/*
 * Its identify began (session, principal and device are set): into the
 * indexes (device only for a person); out of them when identify failed.
 */
void		gw_hub_index_conn(gw_hub *hub, struct gw_conn *c);
void		gw_hub_unindex_conn(gw_hub *hub, struct gw_conn *c);

/*
 * Calls visit for each connection whose key in index equals key (in any
 * state from identify on: visit checks the state it needs).  visit
 * may close the connection it is given (closing only marks it), but must
 * not free others.
 */
typedef void (*gw_hub_visit) (struct gw_conn *c, void *arg);
void		gw_hub_each(gw_hub *hub, gw_hub_index index, const bothy_uuid *key,
						gw_hub_visit visit, void *arg);

/* Every connection, identified or not. */
void		gw_hub_each_conn(gw_hub *hub, gw_hub_visit visit, void *arg);

/*
 * Calls visit once for each distinct key of index among the connections
 * that accept admits (the persons connected here, say, however many
 * devices each has).  Costs one pass over the index.
 */
typedef bool (*gw_hub_filter) (const struct gw_conn *c);
typedef void (*gw_hub_key_visit) (const bothy_uuid *key, void *arg);
void		gw_hub_each_key(gw_hub *hub, gw_hub_index index, gw_hub_filter accept,
							gw_hub_key_visit visit, void *arg);

#endif							/* BOTHY_GATEWAY_HUB_H */
