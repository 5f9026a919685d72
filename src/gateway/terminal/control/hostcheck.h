/*
 * terminal/control/hostcheck.h
 *		The host's state from the database, applied to this node's control
 *		connections of it (D-M2-47-5, 13; HostStatesByIDs,
 *		bothy.terminal_host_states, many hosts in one call):
 *
 *		pairing            4110 "host pairing again"
 *		disabled           4111 "host disabled"
 *		another key        4110 (the host went through pairing since)
 *		confirming, the connection active: 4110 (the same)
 *		active, the connection confirming: ready again with the same
 *		                   conn and state active (the confirmation)
 *
 * A connection whose hello or pair is still being checked is checked
 * again once it is ready; one whose duplicate verdict runs is left to it.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_HOSTCHECK_H
#define BOTHY_GATEWAY_TERMINAL_HOSTCHECK_H

#include "uuid.h"

/* Hosts per call of bothy.terminal_host_states. */
#define GW_THOSTCHECK_BATCH 1000

/* terminal.host_close: the host's connections here (D-M2-47-13). */
void		gw_thostcheck_close(const bothy_uuid *host);

/* A host_confirmed row of the log: its confirming connections here learn of it. */
void		gw_thostcheck_confirmed(const bothy_uuid *host);

/*
 * The listener came back (D-M2-47-5): every host with a connection here,
 * in batches; then every connected one is announced at once (multi) and
 * sent session.open for each session of its host that is not closed.
 */
void		gw_thostcheck_reconcile(void);

#endif							/* BOTHY_GATEWAY_TERMINAL_HOSTCHECK_H */
