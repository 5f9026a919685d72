/*
 * terminal/control/hosts.h
 *		This node's control connections by host: every signal, log row
 *		and REST call of the terminal names a host, and each lookup is one
 *		bucket of a fixed core/uuidmap.h (the connection carries its link,
 *		so an indexed connection allocates nothing).
 *
 * A connection enters its host's list at hello or pair, before the
 * database proved the claim, and leaves it when it closes: every visitor
 * checks the state it needs (gw_tconn_connected, _eligible).
 */
#ifndef BOTHY_GATEWAY_TERMINAL_HOSTS_H
#define BOTHY_GATEWAY_TERMINAL_HOSTS_H

#include <stdbool.h>

#include "terminal/control/connection.h"
#include "uuid.h"

#define GW_THOSTS_BUCKETS 1024	/* a power of two */

void		gw_thosts_add(gw_tconn *tc);
void		gw_thosts_remove(gw_tconn *tc);

/*
 * Calls visit for each connection of host, in the order they came (visit
 * may close the connection it is given, which only marks it).
 */
typedef void (*gw_thosts_visit) (gw_tconn *tc, void *arg);
void		gw_thosts_each(const bothy_uuid *host, gw_thosts_visit visit, void *arg);

/* The connection of host with that conn ID here, or NULL. */
gw_tconn   *gw_thosts_find(const bothy_uuid *host, const bothy_uuid *conn);

/* A connection of host here counts as connected (gw_tconn_connected). */
bool		gw_thosts_connected(const bothy_uuid *host);

/* A connection of host here has any connection at all (hello on). */
bool		gw_thosts_any(const bothy_uuid *host);

#endif							/* BOTHY_GATEWAY_TERMINAL_HOSTS_H */
