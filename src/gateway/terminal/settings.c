/*
 * terminal/settings.c
 *		The terminal route's options and cluster settings (settings.h): the
 *		tables the core reads them with, and the rules across them.
 *
 * Each option's help lines are its part of `serve --help` and its after
 * its place there and in the "starting" record (docs/gateway.md), which
 * stay as they were when these lived in core/config.c.  No setting of
 * the terminal is in the "cluster settings read" record.
 */
#include <stdio.h>

#include "terminal/settings.h"

gw_terminal_opts gw_topt;
gw_terminal_cluster gw_tsettings;

static const gw_route_option options[] = {
	{"stream-ping-interval",
		"  --stream-ping-interval MS  a ping on each terminal stream side this often (the edge\n"
		"                             sees no silence), 100..600000 (default 30000)\n",
		100, 600000, 30000, &gw_topt.stream_ping_ms, "stream_ping_ms", "max-connections"},
	/* --send-queue's range: the window was one queue until issue 27 */
	{"stream-window",
		"  --stream-window BYTES      a terminal device's output written and not yet\n"
		"                             acknowledged, 1024..16777216 (default 524288)\n",
		1024, 16777216, 524288, &gw_topt.stream_window, "stream_window", "max-connections"},
};

#define SETTING(n, lo, hi) {#n, lo, hi, false, offsetof(gw_terminal_cluster, n), NULL}
#define COUNT(n, lo, hi) {#n, lo, hi, true, offsetof(gw_terminal_cluster, n), NULL}
static const gw_route_setting settings[] = {
	COUNT(terminal_fingerprint_max_attempts, 1, 100),
	SETTING(terminal_host_duplicate_probe_timeout, 100, 60000),
	SETTING(terminal_host_heartbeat_interval, 1000, 600000),
	COUNT(terminal_host_heartbeat_miss_limit, 1, 100),
	SETTING(terminal_idle_grace, 1000, 600000),
	SETTING(terminal_idle_timeout, 60000, 86400000),
	SETTING(terminal_log_poll_interval, 100, 60000),
	SETTING(terminal_open_timeout, 1000, 600000),
};
#undef SETTING
#undef COUNT

/* The database's rules across the terminal's settings (docs/configuration.md). */
static bool
settings_check(const void *staged, char *err, size_t errlen)
{
	const gw_terminal_cluster *c = staged;

	/* no open times out during a probation (D-M2-47-7) */
	if (c->terminal_open_timeout <= 2 * c->terminal_host_duplicate_probe_timeout)
	{
		snprintf(err, errlen, "bothy.terminal_open_timeout must be more than twice "
				 "bothy.terminal_host_duplicate_probe_timeout");
		return false;
	}
	/* a lost wake-up's poll still comes before the deadline (D-M2-47-22) */
	if (c->terminal_open_timeout <= 2 * c->terminal_log_poll_interval)
	{
		snprintf(err, errlen, "bothy.terminal_open_timeout must be more than twice "
				 "bothy.terminal_log_poll_interval");
		return false;
	}
	return true;
}

const gw_route_config gw_terminal_config = {
	.options = options,
	.noptions = sizeof(options) / sizeof(options[0]),
	.settings = settings,
	.nsettings = sizeof(settings) / sizeof(settings[0]),
	.settings_struct = &gw_tsettings,
	.settings_size = sizeof(gw_tsettings),
	.settings_check = settings_check,
};
