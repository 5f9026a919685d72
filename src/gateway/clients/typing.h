/*
 * clients/typing.h
 *		Typing indicators (D-M7-17-5): a person's typing op is signalled at
 *		once (gateway.typing, multi mode) and delivered to the persons here
 *		who may see the thread; another node's signal is rebuilt there into
 *		the same event, with the thread's place and expires_at = now +
 *		bothy.typing_ttl.  Every node checks that the sender may see the
 *		thread before it delivers anything.
 */
#ifndef BOTHY_GATEWAY_TYPING_H
#define BOTHY_GATEWAY_TYPING_H

#include "clients/client.h"
#include "signal.h"

/*
 * A ready person connection sent {"op":"typing","thread":T}.  At most one
 * per thread per --typing-interval per connection goes on; the others are
 * dropped (counted).  A sender who may not see the thread gets
 * {"op":"error","request":"typing","code":"rejected"}, and no node
 * delivers it.
 */
void		gw_typing_op(gw_client *c, const bothy_uuid *thread);

/* gateway.typing of another node. */
void		gw_typing_signal(const bothy_signal *sig);

#endif							/* BOTHY_GATEWAY_TYPING_H */
