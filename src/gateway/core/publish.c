/*
 * core/publish.c
 *		Staging this node's own signals (see publish.h).
 *
 * The payload is the codec's own encoding, handed whole to bothy.publish,
 * which decodes it again with the same codec, so the database stages
 * exactly what every node will accept.  The text form: no jsonb parse and
 * re-serialisation in the database (the extension must be 0.2.0 or newer,
 * which the upgrade order of docs/operations.md ensures).
 */
#include "core/db.h"
#include "core/metrics.h"
#include "core/node.h"
#include "core/publish.h"
#include "logline.h"

static const char sql_publish[] =
"SELECT bothy.publish($1::text)";

static void
published(void *arg, gw_db_result result, const PGresult *res)
{
	(void) arg;
	(void) res;
	if (result == GW_DB_OK)
	{
		gw_stats.signals_published++;
		return;
	}
	gw_stats.publish_failures++;
	gw_log(GW_LOG_WARN, "signal not published, other nodes miss this event");
}

void
gw_publish(bothy_signal *sig)
{
	char		payload[BOTHY_SIGNAL_MAX_BYTES + 1];
	const char *params[1] = {payload};

	if (!gw.cluster.multi)
		return;
	sig->node = gw.id;
	if (bothy_signal_encode(sig, payload, sizeof(payload)) < 0)
	{
		gw_log(GW_LOG_ERROR, "signal could not be encoded");
		return;
	}
	if (gw_db_submit(gw.db, sql_publish, 1, params, published, NULL) == NULL)
		published(NULL, GW_DB_ERROR, NULL);
}
