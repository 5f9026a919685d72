/*
 * terminal/rest/hosts.c
 *		GET /v1/terminal/hosts (see rest.h): the person's hosts, each with
 *		connected, this node's view (presence.h).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/node.h"
#include "logline.h"
#include "terminal/control/presence.h"
#include "terminal/rest/rest.h"

static const char sql_hosts[] = "SELECT host, name, state FROM bothy.terminal_hosts_of($1::uuid)";

/* One host's object; NULL when its row is not what the function returns. */
static json_t *
host_of(const PGresult *res, int i, int64_t now)
{
	bothy_uuid	host;

	if (!gw_db_uuid_at(res, i, 0, &host) || PQgetisnull(res, i, 1) || PQgetisnull(res, i, 2))
		return NULL;
	return json_pack("{s:s, s:s, s:s, s:b}", "host", PQgetvalue(res, i, 0),
					 "name", PQgetvalue(res, i, 1), "state", PQgetvalue(res, i, 2),
					 "connected", gw_tpresence_connected(&host, now));
}

static void
hosts_read(void *arg, gw_db_result result, const PGresult *res)
{
	gw_trest   *r = arg;
	json_t	   *hosts,
			   *root;
	char	   *body;
	int64_t		now = gw_mono_ms();
	int			i;

	r->rc.call = NULL;
	if (result != GW_DB_OK || PQnfields(res) != 3)
	{
		gw_trest_unavailable(r);
		return;
	}
	hosts = json_array();
	for (i = 0; hosts != NULL && i < PQntuples(res); i++)
		if (json_array_append_new(hosts, host_of(res, i, now)) != 0)
		{
			gw_log(GW_LOG_ERROR, "terminal hosts answer not understood");
			json_decref(hosts);
			hosts = NULL;
		}
	root = hosts != NULL ? json_pack("{s:o}", "hosts", hosts) : NULL;
	body = root != NULL ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(root);
	if (body == NULL)
	{
		gw_trest_unavailable(r);
		return;
	}
	gw_trest_answer(r, 200, body, strlen(body));
}

void
gw_trest_hosts(gw_trest *r)
{
	char		person[BOTHY_UUID_STRLEN + 1];
	const char *params[1] = {person};

	bothy_uuid_format(&r->person, person);
	(void) gw_trest_submit(r, sql_hosts, 1, params, hosts_read);
}
