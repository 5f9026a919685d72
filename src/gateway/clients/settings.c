/*
 * clients/settings.c
 *		The gateway route's options and cluster settings (settings.h): the
 *		tables the core reads them with, and the rule across them.
 *
 * Each option's help lines are its part of `serve --help` and each
 * after/log_after its place there and in the "starting" and "cluster
 * settings read" records (docs/gateway.md), which stay as they were when
 * these lived in core/config.c.
 */
#include <stdio.h>

#include "clients/settings.h"

gw_clients_opts gw_copt;
gw_clients_cluster gw_csettings;

static const gw_route_option options[] = {
	{"heartbeat",
		"  --heartbeat MS             heartbeat_ms announced in ready; silence for twice\n"
		"                             that closes the connection (4009), 1000..600000 (default 30000)\n",
		1000, 600000, 30000, &gw_copt.heartbeat_ms, "heartbeat_ms", "identify-timeout"},
	{"typing-interval",
		"  --typing-interval MS       one typing op per thread per connection per this,\n"
		"                             0..60000 (default 1000)\n",
		0, 60000, 1000, &gw_copt.typing_interval_ms, "typing_interval_ms", "max-connections"},
	{"run-coalesce",
		"  --run-coalesce MS          at most one run.updated per run per this window,\n"
		"                             0..10000 (default 50)\n",
		0, 10000, 50, &gw_copt.run_coalesce_ms, "run_coalesce_ms", "max-connections"},
	{"agent-window",
		"  --agent-window N           agent events sent beyond the acknowledged one,\n"
		"                             1..1000 (default 100)\n",
		1, 1000, 100, &gw_copt.agent_window, "agent_window", "max-connections"},
	{"autocomplete-timeout",
		"  --autocomplete-timeout MS  wait for a consumer's answer, 100..60000 (default 3000)\n",
		100, 60000, 3000, &gw_copt.autocomplete_timeout_ms, "autocomplete_timeout_ms",
		"max-connections"},
};

#define SETTING(n, lo, hi, after) {#n, lo, hi, false, offsetof(gw_clients_cluster, n), after}
static const gw_route_setting settings[] = {
	SETTING(presence_flush_interval, 100, 60000, "cluster_mode"),
	SETTING(presence_ttl, 1000, 600000, "cluster_mode"),
	SETTING(typing_ttl, 1000, 60000, "cluster_mode"),
	SETTING(agent_presence_timeout, 1000, 3600000, "cluster_mode"),
	SETTING(agent_heartbeat_persist_interval, 1000, 600000, "cluster_mode"),
	SETTING(consumer_lease, 3000, 3600000, "signing_key_cache_ttl"),
};
#undef SETTING

static bool
settings_check(const void *staged, char *err, size_t errlen)
{
	const gw_clients_cluster *c = staged;

	/* fresh across one missed flush (docs/configuration.md, D-M7-17-6) */
	if (c->presence_ttl <= 2 * c->presence_flush_interval)
	{
		snprintf(err, errlen,
				 "bothy.presence_ttl must be more than twice bothy.presence_flush_interval");
		return false;
	}
	return true;
}

const gw_route_config gw_clients_config = {
	.options = options,
	.noptions = sizeof(options) / sizeof(options[0]),
	.settings = settings,
	.nsettings = sizeof(settings) / sizeof(settings[0]),
	.settings_struct = &gw_csettings,
	.settings_size = sizeof(gw_csettings),
	.settings_check = settings_check,
};
