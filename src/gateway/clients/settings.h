/*
 * clients/settings.h
 *		The gateway route's options of `serve` and its rows of
 *		bothy.settings(), declared here and registered with its gw_route
 *		(core/route.h): the core parses, stages and checks them
 *		(core/config.c), this room reads them from gw_copt and gw_csettings.
 *
 * Pure data and one rule, no I/O: test/unit/gateway/test_config.c links it
 * beside core/config.c and covers every range.  docs/gateway.md lists the
 * options, docs/configuration.md the settings.
 */
#ifndef BOTHY_GATEWAY_CLIENTS_SETTINGS_H
#define BOTHY_GATEWAY_CLIENTS_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/route.h"

/* The route's options, set by `serve` before any hook runs. */
typedef struct gw_clients_opts
{
	int			heartbeat_ms;		/* announced in ready; idle closes after 2x */
	int			typing_interval_ms;	/* one typing op per thread per connection per */
	int			run_coalesce_ms;	/* at most one run snapshot per run per window */
	int			agent_window;		/* agent events delivered beyond the ack */
	int			autocomplete_timeout_ms;	/* a consumer's answer, or an empty result */
} gw_clients_opts;

extern gw_clients_opts gw_copt;

/* The route's cluster settings, in milliseconds, written after each good read. */
typedef struct gw_clients_cluster
{
	int64_t		presence_flush_interval;
	int64_t		presence_ttl;
	int64_t		typing_ttl;
	int64_t		agent_presence_timeout;
	int64_t		agent_heartbeat_persist_interval;
	int64_t		consumer_lease;
} gw_clients_cluster;

extern gw_clients_cluster gw_csettings;

/* Registered as its gw_route's config (core/route.h). */
extern const gw_route_config gw_clients_config;

#endif							/* BOTHY_GATEWAY_CLIENTS_SETTINGS_H */
