/*
 * terminal/control/presence.h
 *		Host presence across nodes (D-M2-47-6): what this node heard of
 *		other nodes' control connections, one entry per (host, conn) from
 *		terminal.host_present until terminal.host_gone, counting while no
 *		more than bothy.terminal_host_heartbeat_interval times
 *		bothy.terminal_host_heartbeat_miss_limit passed since its last
 *		announcement; and this node's own announcements.
 *
 * "Host connected" (the 409 of an open, GET /v1/terminal/hosts) is a
 * local connected control connection or a counting remote entry.  A node
 * that died keeps its entries counting for at most that window: the
 * window is the silence after which the holder would have closed the
 * connection itself (4009).  multi mode only: in single mode there are
 * no remote entries and nothing is announced.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_PRESENCE_H
#define BOTHY_GATEWAY_TERMINAL_PRESENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "uuid.h"

/* A control connection (connection.h): only pointers here, so a REST call sees no connection type. */
struct gw_tconn;

/*
 * The most remote entries held (those gone within a window included): a
 * node announces each of its control connections, so this is the
 * cluster's connected hosts.  An entry past
 * it is not kept (counted): its host may read as not connected.
 */
#define GW_TPRESENCE_MAX 200000

/* terminal.host_present of another node's connection, heard at now (gw_mono_ms). */
void		gw_tpresence_heard(const bothy_uuid *host, const bothy_uuid *conn, int64_t now);

/*
 * terminal.host_gone of another node's connection, heard at now: it no
 * longer counts, and an announcement of it heard later (the two may be
 * heard in either order) is ignored for a window.
 */
void		gw_tpresence_gone(const bothy_uuid *host, const bothy_uuid *conn, int64_t now);

/* A remote entry of host counts at now. */
bool		gw_tpresence_counts(const bothy_uuid *host, int64_t now);

/* The host is connected: here, or a counting remote entry (multi). */
bool		gw_tpresence_connected(const bothy_uuid *host, int64_t now);

/* Drops the entries past the window (every second, and at /metrics). */
void		gw_tpresence_expire(int64_t now);

/* Remote entries held now, not counting those gone. */
uint32_t	gw_tpresence_entries(void);

/* Frees every entry (the loop ended). */
void		gw_tpresence_clear(void);

/* Announces tc to the other nodes: terminal.host_present (multi only). */
void		gw_tpresence_announce(struct gw_tconn *tc);

/* tc closes: terminal.host_gone when it was announced (multi only). */
void		gw_tpresence_withdraw(struct gw_tconn *tc);

#endif							/* BOTHY_GATEWAY_TERMINAL_PRESENCE_H */
