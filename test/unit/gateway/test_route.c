/*
 * test_route.c
 *		Unit tests of src/gateway/core/route.c, the routes' tables: two
 *		routes registered side by side (the gateway route's paths and a
 *		stand-in for the terminal route's), lookups of WebSocket paths
 *		(exact, prefix, the longest prefix) and of HTTP prefixes, the
 *		per-session size, the close codes counted by name, and what
 *		registration refuses without leaving an entry behind.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/conn.h"
#include "core/route.h"
#include "unit.h"

typedef struct big_conn
{
	gw_conn		conn;
	char		more[200];
} big_conn;

static void
message(gw_conn *c, const char *msg, size_t len, bool binary)
{
	(void) c;
	(void) msg;
	(void) len;
	(void) binary;
}

static int
request(struct lws *wsi, gw_conn *c, const char *path)
{
	(void) wsi;
	(void) c;
	(void) path;
	return 0;
}

/* The gateway route's shape: one exact path, the /v1/ prefix, four codes. */
static const gw_ws_endpoint gateway_ws = {.path = "/gateway", .conn_size = sizeof(gw_conn) + 8,
	.message = message};
static const gw_ws_endpoint *const gateway_eps[] = {&gateway_ws, NULL};
static const gw_http_route v1 = {.prefix = "/v1/", .request = request};
static const gw_http_route *const gateway_http[] = {&v1, NULL};
static const int gateway_codes[] = {4001, 4009, 4015, 4017};
static const gw_route gateway = {.name = "gateway", .ws = gateway_eps, .http = gateway_http,
	.close_codes = gateway_codes, .nclose_codes = 4};

/* A second route: an exact path, a prefix path, a longer HTTP prefix, shared codes. */
static const gw_ws_endpoint host_ws = {.path = "/terminal/host", .conn_size = sizeof(big_conn),
	.message = message};
static const gw_ws_endpoint stream_ws = {.path = "/terminal/stream/", .prefix = true,
	.binary = true, .conn_size = sizeof(gw_conn), .message = message};
static const gw_ws_endpoint *const terminal_eps[] = {&host_ws, &stream_ws, NULL};
static const gw_http_route v1_terminal = {.prefix = "/v1/terminal/", .request = request};
static const gw_http_route *const terminal_http[] = {&v1_terminal, NULL};
static const int terminal_codes[] = {4001, 4002, 4009, 4102, 4110, 4111, 4112};
static const gw_route terminal = {.name = "terminal", .ws = terminal_eps, .http = terminal_http,
	.close_codes = terminal_codes, .nclose_codes = 7};

/* The codes as "a,b,c" for one comparison. */
static const char *
codes_text(void)
{
	static char text[512];
	const int  *codes;
	int			n = gw_route_close_codes(&codes),
				i;
	size_t		used = 0;

	text[0] = '\0';
	for (i = 0; i < n; i++)
		used += (size_t) snprintf(text + used, sizeof(text) - used, "%s%d", i ? "," : "", codes[i]);
	return text;
}

static bool
ws_is(const char *path, const gw_ws_endpoint *want)
{
	int			index = -1;
	const gw_ws_endpoint *got = gw_route_ws_find(path, &index);

	if (want == NULL)
		return got == NULL;
	return got == want && index >= 0 && gw_route_ws_at(index) == want;
}

int
main(void)
{
	unit_diag("src/gateway/core/route.c");
	/* nothing registered: the core's own codes, and no path answers */
	UNIT_OK(strcmp(codes_text(), "1000,1001,1006,1007,1009,1011,4002,4008") == 0,
			"no route: the transport's close codes only");
	UNIT_OK(ws_is("/gateway", NULL) && gw_route_http_find("/v1/presence") == NULL,
			"no route: no path answers");
	UNIT_OK(gw_route_conn_size() == sizeof(gw_conn), "no route: the per-session size is gw_conn's");

	UNIT_OK(gw_route_register(&gateway), "the gateway route registers");
	UNIT_OK(strcmp(codes_text(), "1000,1001,1006,1007,1009,1011,4001,4002,4008,4009,4015,4017") == 0,
			"its codes merge in order with the transport's (the order /metrics had)");
	UNIT_OK(gw_route_register(&terminal), "a second route registers beside it");
	UNIT_OK(gw_route_count() == 2 && gw_route_at(0) == &gateway && gw_route_at(1) == &terminal,
			"the routes in registration order");
	UNIT_OK(strcmp(codes_text(),
				   "1000,1001,1006,1007,1009,1011,4001,4002,4008,4009,4015,4017,4102,4110,4111,4112") == 0,
			"shared codes are counted once");

	UNIT_OK(ws_is("/gateway", &gateway_ws), "an exact path");
	UNIT_OK(ws_is("/gateway/", NULL) && ws_is("/gatewa", NULL) && ws_is("/", NULL),
			"an exact path only exactly");
	UNIT_OK(ws_is("/terminal/host", &host_ws) && ws_is("/terminal/hostx", NULL),
			"the second route's exact path");
	UNIT_OK(ws_is("/terminal/stream/0190a0c4-0000-7000-8000-000000000001", &stream_ws) &&
			ws_is("/terminal/stream/", &stream_ws) && ws_is("/terminal/stream", NULL),
			"a prefix path");
	UNIT_OK(gw_route_ws_count() == 3, "three WebSocket paths");

	UNIT_OK(gw_route_http_find("/v1/presence") == &v1 &&
			gw_route_http_find("/v1/terminal/sessions") == &v1_terminal &&
			gw_route_http_find("/v1/terminal/") == &v1_terminal &&
			gw_route_http_find("/v1/terminal") == &v1,
			"the longest HTTP prefix answers");
	UNIT_OK(gw_route_http_find("/healthz") == NULL && gw_route_http_find("/v1") == NULL,
			"a path under no prefix has no route");

	UNIT_OK(gw_route_conn_size() == sizeof(big_conn), "the per-session size is the largest");

	/* refusals leave nothing behind */
	{
		static const gw_ws_endpoint again = {.path = "/gateway", .conn_size = sizeof(gw_conn),
			.message = message};
		static const gw_ws_endpoint *const again_eps[] = {&again, NULL};
		static const gw_http_route other = {.prefix = "/other/", .request = request};
		static const gw_http_route *const other_http[] = {&other, NULL};
		static const int other_codes[] = {4999};
		static const gw_route dup_ws = {.name = "dup", .ws = again_eps, .http = other_http,
			.close_codes = other_codes, .nclose_codes = 1};
		static const gw_http_route dup_prefix = {.prefix = "/v1/", .request = request};
		static const gw_http_route *const dup_http[] = {&dup_prefix, NULL};
		static const gw_route dup_http_route = {.name = "dup", .http = dup_http};
		static const gw_ws_endpoint small = {.path = "/small", .conn_size = sizeof(gw_conn) - 1,
			.message = message};
		static const gw_ws_endpoint *const small_eps[] = {&small, NULL};
		static const gw_route small_route = {.name = "small", .ws = small_eps};
		static const gw_ws_endpoint mute = {.path = "/mute", .conn_size = sizeof(gw_conn)};
		static const gw_ws_endpoint *const mute_eps[] = {&mute, NULL};
		static const gw_route mute_route = {.name = "mute", .ws = mute_eps};
		const char *before = "1000,1001,1006,1007,1009,1011,4001,4002,4008,4009,4015,4017,4102,4110,4111,4112";

		UNIT_OK(!gw_route_register(&dup_ws), "a WebSocket path taken already is refused");
		UNIT_OK(gw_route_http_find("/other/x") == NULL && strcmp(codes_text(), before) == 0 &&
				gw_route_count() == 2,
				"... and the refused route's other paths and codes are not kept");
		UNIT_OK(!gw_route_register(&dup_http_route), "an HTTP prefix taken already is refused");
		UNIT_OK(!gw_route_register(&small_route) && ws_is("/small", NULL),
				"a per-connection struct smaller than gw_conn is refused");
		UNIT_OK(!gw_route_register(&mute_route) && ws_is("/mute", NULL),
				"a path without a message handler is refused");
		UNIT_OK(gw_route_ws_count() == 3 && gw_route_count() == 2, "the tables are as they were");
	}

	/* a config whose settings the core cannot stage */
	{
		static int64_t	two[2];
		static int64_t	big[GW_ROUTE_SETTINGS_MAX / sizeof(int64_t) + 1];
		static const gw_route_setting past = {"past", 1, 2, true, sizeof(two) - 4, NULL};
		static const gw_route_config past_end = {.settings = &past, .nsettings = 1,
			.settings_struct = two, .settings_size = sizeof(two)};
		static const gw_route_config too_big = {.settings_struct = big, .settings_size = sizeof(big)};
		static const gw_route_config no_struct = {.settings = &past, .nsettings = 1};
		static const gw_route_setting last = {"last", 1, 2, true, sizeof(two) - sizeof(int64_t), NULL};
		static const gw_route_config fits = {.settings = &last, .nsettings = 1,
			.settings_struct = two, .settings_size = sizeof(two)};
		static const gw_route r1 = {.name = "c1", .config = &past_end};
		static const gw_route r2 = {.name = "c2", .config = &too_big};
		static const gw_route r3 = {.name = "c3", .config = &no_struct};
		static const gw_route r4 = {.name = "c4", .config = &fits};

		UNIT_OK(!gw_route_register(&r1) && !gw_route_register(&r2) && !gw_route_register(&r3) &&
				gw_route_count() == 2,
				"settings: one past its struct's end, a struct over GW_ROUTE_SETTINGS_MAX, "
				"rows without a struct refused");
		UNIT_OK(gw_route_register(&r4) && gw_route_count() == 3 && gw_route_at(2) == &r4,
				"settings: the last int64_t of its struct fits");
		static const gw_route_option many_options[GW_MAX_ROUTE_OPTIONS];
		static const gw_route_config all = {.options = many_options, .noptions = GW_MAX_ROUTE_OPTIONS};
		static const gw_route_config one = {.options = many_options, .noptions = 1};
		static const gw_route r5 = {.name = "c5", .config = &all};
		static const gw_route r6 = {.name = "c6", .config = &one};

		gw_route_reset();
		UNIT_OK(gw_route_register(&r5) && !gw_route_register(&r6) && gw_route_count() == 1,
				"options: GW_MAX_ROUTE_OPTIONS over every route, one more refused");
		gw_route_reset();
		UNIT_OK(gw_route_register(&gateway) && gw_route_register(&terminal), "registered again");
	}

	/* a part with hooks only (the key store) */
	{
		static const gw_route hooks = {.name = "keys"};

		UNIT_OK(gw_route_register(&hooks) && gw_route_count() == 3 && gw_route_ws_count() == 3,
				"a part without paths registers");
	}

	gw_route_reset();
	UNIT_OK(gw_route_count() == 0 && ws_is("/gateway", NULL) &&
			strcmp(codes_text(), "1000,1001,1006,1007,1009,1011,4002,4008") == 0,
			"reset forgets every registration");
	{
		static const gw_route hooks = {.name = "hooks"};
		int			i;
		bool		all = true;

		for (i = 0; i < GW_MAX_ROUTES; i++)
			all = all && gw_route_register(&hooks);
		UNIT_OK(all && !gw_route_register(&gateway) && ws_is("/gateway", NULL),
				"a full table refuses one more route");
	}
	return unit_done();
}
