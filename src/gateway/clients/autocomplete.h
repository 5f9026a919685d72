/*
 * clients/autocomplete.h
 *		Autocomplete stays on its node (D-M7-17-5): a person's request goes
 *		to the agent's consumer connection on the same node as
 *		command.autocomplete_requested, and the consumer's
 *		autocomplete_answer goes back as autocomplete_result.  Without a
 *		consumer of that agent here, or without an answer within
 *		--autocomplete-timeout, the request ends with an empty result
 *		(R-AG-14): a request never crosses nodes, because its answer must
 *		reach the waiting connection of this process.
 */
#ifndef BOTHY_GATEWAY_AUTOCOMPLETE_H
#define BOTHY_GATEWAY_AUTOCOMPLETE_H

#include "clients/client.h"
#include "clients/protocol.h"

/* {"op":"autocomplete",...} of a ready person connection. */
void		gw_autocomplete_request(gw_client *person, const gw_msg *m);

/* {"op":"autocomplete_answer",...} of a ready agent connection. */
void		gw_autocomplete_answer(gw_client *agent, const gw_msg *m);

/* The node stops: every request waiting is dropped. */
void		gw_autocomplete_stop(void);

#endif							/* BOTHY_GATEWAY_AUTOCOMPLETE_H */
