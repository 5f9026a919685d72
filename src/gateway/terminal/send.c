/*
 * terminal/send.c
 *		Sending a terminal signal this node decided (see send.h).
 */
#include "core/node.h"
#include "core/publish.h"
#include "terminal/route.h"
#include "terminal/send.h"

void
gw_terminal_send(const bothy_signal *sig)
{
	bothy_signal copy = *sig;

	if (gw.cluster.multi)
		gw_publish(&copy);
	else
		gw_terminal_dispatch(&copy);
}
