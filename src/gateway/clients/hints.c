/*
 * clients/hints.c
 *		notification.created from gateway.hint (see hints.h).
 *
 * Every node hears every hint; only the node with a connection of the
 * recipient does anything, and without a thread it needs no database call.
 */
#include <stdlib.h>

#include "clients/audience.h"
#include "clients/deliver.h"
#include "clients/hints.h"
#include "clients/stats.h"
#include "logline.h"

static void
deliver(const bothy_signal *hint, const bothy_uuid *place)
{
	gw_text		ev;

	if (!gw_event_notification(&ev, hint, place))
		return;
	gw_deliver_to_persons(GW_EV_NOTIFICATION, &ev, &hint->recipient, 1, NULL);
	gw_text_free(&ev);
}

/* The recipient alone, delivered only while admitted. */
static void
answered(void *arg, bool ok, const PGresult *res, const bothy_uuid *persons, size_t n)
{
	bothy_signal *hint = arg;
	bothy_uuid	buf;
	const bothy_uuid *place;

	if (ok && gw_audience_place(res, &buf, &place))
	{
		if (n == 1 && bothy_uuid_compare(&persons[0], &hint->recipient) == 0)
			deliver(hint, place);
		else
			gw_clients_stats.hints_not_admitted++;
	}
	free(hint);
}

void
gw_hints_signal(const bothy_signal *sig)
{
	bothy_signal *hint;

	if (!gw_has_local_principal(&sig->recipient, GW_CONN_PERSON))
		return;
	if (!(sig->optional & BOTHY_OPT_THREAD))
	{
		deliver(sig, NULL);
		return;
	}
	hint = malloc(sizeof(*hint));
	if (hint == NULL)
		return;
	*hint = *sig;
	if (gw_audience_ask_recipient(&hint->thread, &hint->recipient, answered, hint) == NULL)
		free(hint);
}
