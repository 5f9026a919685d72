/*
 * core/route.c
 *		The routes' tables (see route.h): who answers a WebSocket path and
 *		an HTTP path, and the close codes /metrics counts by name.
 *
 * Filled once before the context exists and read-only afterwards, so
 * lookups are plain scans of a few entries: a WebSocket upgrade or an
 * HTTP request compares its path with at most GW_MAX_WS_ENDPOINTS or
 * GW_MAX_HTTP_ROUTES strings.
 */
#include <string.h>

#include "core/conn.h"
#include "core/metrics.h"
#include "core/route.h"

static const gw_route *routes[GW_MAX_ROUTES];
static int	nroutes;
static const gw_ws_endpoint *endpoints[GW_MAX_WS_ENDPOINTS];
static int	nendpoints;
static const gw_http_route *http_routes[GW_MAX_HTTP_ROUTES];
static int	nhttp;
static int	noptions;			/* of every route registered */

/* The core's own counted codes, merged in order with every route's. */
static const int core_close_codes[] = GW_CLOSE_CODES;
static int	close_codes[GW_MAX_CLOSE_CODES];
static int	nclose;

void
gw_route_reset(void)
{
	nroutes = nendpoints = nhttp = nclose = noptions = 0;
}

/* Adds code to the sorted set of counted codes; false when it is full. */
static bool
count_code(int code)
{
	int			i;

	for (i = 0; i < nclose && close_codes[i] < code; i++)
		;
	if (i < nclose && close_codes[i] == code)
		return true;			/* two routes may share a code (4001) */
	if (nclose == GW_MAX_CLOSE_CODES)
		return false;
	memmove(&close_codes[i + 1], &close_codes[i], (size_t) (nclose - i) * sizeof(int));
	close_codes[i] = code;
	nclose++;
	return true;
}

int
gw_route_close_codes(const int **codes)
{
	int			i;

	if (nclose == 0)
		for (i = 0; i < (int) (sizeof(core_close_codes) / sizeof(core_close_codes[0])); i++)
			(void) count_code(core_close_codes[i]);
	*codes = close_codes;
	return nclose;
}

static bool
ws_taken(const gw_ws_endpoint *ep)
{
	int			i;

	for (i = 0; i < nendpoints; i++)
		if (strcmp(endpoints[i]->path, ep->path) == 0 && endpoints[i]->prefix == ep->prefix)
			return true;
	return false;
}

static bool
http_taken(const gw_http_route *h)
{
	int			i;

	for (i = 0; i < nhttp; i++)
		if (strcmp(http_routes[i]->prefix, h->prefix) == 0)
			return true;
	return false;
}

/* Each setting an int64_t inside the struct the core stages a copy of. */
static bool
config_fits(const gw_route_config *config)
{
	if (noptions + config->noptions > GW_MAX_ROUTE_OPTIONS ||
		config->settings_size > GW_ROUTE_SETTINGS_MAX ||
		config->nsettings > GW_ROUTE_SETTINGS_COUNT ||
		(config->nsettings > 0 && config->settings_struct == NULL))
		return false;
	for (int i = 0; i < config->nsettings; i++)
		if (config->settings[i].offset + sizeof(int64_t) > config->settings_size)
			return false;
	return true;
}

bool
gw_route_register(const gw_route *route)
{
	const int  *codes;
	int			saved_codes[GW_MAX_CLOSE_CODES];
	int			saved_nclose,
				saved_nendpoints = nendpoints,
				saved_nhttp = nhttp,
				i;

	if (nroutes == GW_MAX_ROUTES || (route->config != NULL && !config_fits(route->config)))
		return false;
	(void) gw_route_close_codes(&codes);
	saved_nclose = nclose;
	memcpy(saved_codes, close_codes, sizeof(close_codes));
	for (i = 0; route->ws != NULL && route->ws[i] != NULL; i++)
	{
		const gw_ws_endpoint *ep = route->ws[i];

		if (nendpoints == GW_MAX_WS_ENDPOINTS || ws_taken(ep) ||
			ep->conn_size < sizeof(gw_conn) || ep->message == NULL)
			goto refuse;
		endpoints[nendpoints++] = ep;
	}
	for (i = 0; route->http != NULL && route->http[i] != NULL; i++)
	{
		const gw_http_route *h = route->http[i];

		if (nhttp == GW_MAX_HTTP_ROUTES || http_taken(h) || h->request == NULL)
			goto refuse;
		http_routes[nhttp++] = h;
	}
	for (i = 0; i < route->nclose_codes; i++)
		if (!count_code(route->close_codes[i]))
			goto refuse;
	routes[nroutes++] = route;
	noptions += route->config != NULL ? route->config->noptions : 0;
	return true;

refuse:
	/* a refused route leaves no entry behind */
	nendpoints = saved_nendpoints;
	nhttp = saved_nhttp;
	nclose = saved_nclose;
	memcpy(close_codes, saved_codes, sizeof(close_codes));
	return false;
}

int
gw_route_count(void)
{
	return nroutes;
}

const gw_route *
gw_route_at(int i)
{
	return routes[i];
}

const gw_ws_endpoint *
gw_route_ws_find(const char *path, int *index)
{
	int			best = -1,
				i;
	size_t		best_len = 0;

	for (i = 0; i < nendpoints; i++)
	{
		const gw_ws_endpoint *ep = endpoints[i];
		size_t		n = strlen(ep->path);

		if (!ep->prefix && strcmp(path, ep->path) == 0)
		{
			best = i;
			break;
		}
		if (ep->prefix && strncmp(path, ep->path, n) == 0 && n > best_len)
		{
			best = i;
			best_len = n;
		}
	}
	if (best < 0)
		return NULL;
	*index = best;
	return endpoints[best];
}

const gw_ws_endpoint *
gw_route_ws_at(int index)
{
	return endpoints[index];
}

int
gw_route_ws_count(void)
{
	return nendpoints;
}

const gw_http_route *
gw_route_http_find(const char *path)
{
	const gw_http_route *best = NULL;
	size_t		best_len = 0;
	int			i;

	for (i = 0; i < nhttp; i++)
	{
		size_t		n = strlen(http_routes[i]->prefix);

		if (strncmp(path, http_routes[i]->prefix, n) == 0 && n > best_len)
		{
			best = http_routes[i];
			best_len = n;
		}
	}
	return best;
}

size_t
gw_route_conn_size(void)
{
	size_t		size = sizeof(gw_conn);
	int			i;

	for (i = 0; i < nendpoints; i++)
		if (endpoints[i]->conn_size > size)
			size = endpoints[i]->conn_size;
	return size;
}
