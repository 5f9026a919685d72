/*
 * clients/hints.h
 *		Notification hints (D-M7-17-5): a gateway.hint from the maintenance
 *		worker becomes notification.created for the recipient's connections
 *		on this node; with a thread, only while the recipient may see it
 *		(the audience is asked again at every delivery), with its place.
 */
#ifndef BOTHY_GATEWAY_HINTS_H
#define BOTHY_GATEWAY_HINTS_H

#include "signal.h"

void		gw_hints_signal(const bothy_signal *sig);

#endif							/* BOTHY_GATEWAY_HINTS_H */
