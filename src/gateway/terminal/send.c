/*
 * terminal/send.c
 *		Sending a terminal signal this node decided (see send.h).
 */
#include "core/node.h"
#include "core/publish.h"
#include "terminal/send.h"

static gw_tsend_dispatch dispatch;
static gw_tsend_wake wake;

void
gw_terminal_send_hooks(gw_tsend_dispatch d, gw_tsend_wake w)
{
	dispatch = d;
	wake = w;
}

void
gw_terminal_send(const bothy_signal *sig)
{
	bothy_signal copy = *sig;

	if (gw.cluster.multi)
		gw_publish(&copy);
	else
		dispatch(&copy);
}

void
gw_terminal_decided(const bothy_signal *sig)
{
	if (!gw.cluster.multi)
		dispatch(sig);
}

void
gw_terminal_committed(void)
{
	if (!gw.cluster.multi)
		wake(0);
}
