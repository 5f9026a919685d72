/*
 * terminal/settings.h
 *		The terminal route's options of `serve` and its rows of
 *		bothy.settings(), declared here and registered with its gw_route
 *		(core/route.h): the core parses, stages and checks them
 *		(core/config.c), this room reads them from gw_topt and gw_tsettings.
 *
 * Pure data and the rules across them, no I/O: test/unit/gateway/test_config.c
 * links it beside core/config.c and covers every range.  docs/gateway.md
 * lists the options, docs/configuration.md the settings.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_SETTINGS_H
#define BOTHY_GATEWAY_TERMINAL_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/route.h"

/* The route's options, set by `serve` before any hook runs. */
typedef struct gw_terminal_opts
{
	int			stream_ping_ms;	/* a ping on each stream side this often */
	int			stream_window;	/* a device's output written, not yet acknowledged */
} gw_terminal_opts;

extern gw_terminal_opts gw_topt;

/*
 * The route's cluster settings (docs/configuration.md), durations in
 * milliseconds, written after each good read.  Named as in bothy.settings().
 */
typedef struct gw_terminal_cluster
{
	int64_t		terminal_fingerprint_max_attempts;	/* a count */
	int64_t		terminal_host_duplicate_probe_timeout;
	int64_t		terminal_host_heartbeat_interval;
	int64_t		terminal_host_heartbeat_miss_limit;	/* a count */
	int64_t		terminal_idle_grace;
	int64_t		terminal_idle_timeout;
	int64_t		terminal_log_poll_interval;
	int64_t		terminal_open_timeout;
} gw_terminal_cluster;

extern gw_terminal_cluster gw_tsettings;

/* Registered as its gw_route's config (core/route.h). */
extern const gw_route_config gw_terminal_config;

#endif							/* BOTHY_GATEWAY_TERMINAL_SETTINGS_H */
