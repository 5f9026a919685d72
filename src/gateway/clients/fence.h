/*
 * clients/fence.h
 *		Who keeps a connection when another binding appears, on this node
 *		or on another: device replacement (D-M7-17-3, close 4017) and
 *		consumer fencing (D-M7-17-4, close 4015).
 *
 * The same decision serves a binding made here (session.c, at ready: this
 * node's own signals are not delivered back to it) and a binding of
 * another node, read from the database when its signal comes (clients.c)
 * and after a lost listener, when the reconciliation asks the database
 * what the signals would have said.
 */
#ifndef BOTHY_GATEWAY_FENCE_H
#define BOTHY_GATEWAY_FENCE_H

#include <stdbool.h>

#include "clients/client.h"
#include "uuid.h"

/*
 * The device was bound with bind ID bind (in session).  Every other
 * connection of the device with an older bind ID is closed with 4017, of
 * another session or of the same one (a resume leaves the old connection
 * stale); one whose identify is still running remembers the newest bind ID
 * seen, so it closes itself when its own comes back older.  except (may be
 * NULL) is the connection that made the binding.  Returns false when a
 * connection here holds a newer binding of the device.
 */
bool		gw_fence_device(const bothy_uuid *device, const bothy_uuid *session,
							const bothy_uuid *bind, const gw_client *except);

/*
 * A gateway.device signal of another node said the device was bound with
 * bind ID bind.  The signal is a hint, not the authority (docs/security.md):
 * when a connection here could lose to it (an older bind ID), the device's
 * binding is read from the database, with other devices heard meanwhile in
 * one call, and gw_fence_device decides on what the database says.
 */
void		gw_fence_device_heard(const bothy_uuid *device, const bothy_uuid *bind);

/*
 * The agent's stream was taken by holder (the nil UUID: released).  A
 * consumer connection holds under its own bind ID, so every binding, a
 * resume of the same session too, is a holder of its own.  Every other
 * connection of the agent saves its acknowledgement at once with the
 * guarded save, which closes it with 4015 when it no longer holds; one
 * whose identify is still running does so once it is ready.  A REST poll
 * of the agent waiting here under another holder answers 409.
 */
void		gw_fence_consumer(const bothy_uuid *agent, const bothy_uuid *holder,
							  const gw_client *except);

/*
 * After a lost listener: every agent connection saves at once, and the
 * bindings of every person connection's device are read back in batches
 * and decided as if their signals had come.
 */
void		gw_fence_reconcile(void);

#endif							/* BOTHY_GATEWAY_FENCE_H */
