/*
 * clients/session.h
 *		What a client's messages mean (client protocol v1): identify and
 *		resume with their tokens and database calls, heartbeat, focus, idle,
 *		typing, ack and autocomplete, and the states they move through.
 */
#ifndef BOTHY_GATEWAY_SESSION_H
#define BOTHY_GATEWAY_SESSION_H

#include <stddef.h>

#include "clients/client.h"

/* Upgraded: the identify deadline starts. */
void		gw_session_opened(gw_client *c);

/*
 * The core's sweep (core/conn.c), when a wake-up the session asked for has
 * come: closes a connection whose quiet deadline passed, and renews an
 * agent's lease (a save every third of bothy.consumer_lease, D-M7-17-4: the
 * next regular save fences); an agent wakes at every sweep.
 */
void		gw_session_tick(gw_client *c, int64_t now);

/*
 * The device bind of a person's identify or resume answered (binds.c):
 * bind is its bind ID, or NULL when the call failed (result, res).
 */
void		gw_session_bound(gw_client *c, gw_db_result result, const PGresult *res,
							 const bothy_uuid *bind);

/* An agent connection saves its acknowledgement now (the guarded save). */
void		gw_session_save_now(gw_client *c);

/* One complete text message. */
void		gw_session_message(gw_client *c, const char *msg, size_t len);

/* The connection is gone: cancel its call and timers. */
void		gw_session_closed(gw_client *c);

#endif							/* BOTHY_GATEWAY_SESSION_H */
