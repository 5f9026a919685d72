/*
 * core/node.h
 *		The state of this gateway node: its options and cluster settings,
 *		its node ID, the loop, the database pool and the listener, and
 *		where its start and stop are.  One per process (the global gw);
 *		each route keeps its own state in its own room.
 *
 * A single global because libwebsockets callbacks carry no pointer of
 * ours for the vhost-less parts (timers, signals), and the process is one
 * node by definition.
 */
#ifndef BOTHY_GATEWAY_NODE_H
#define BOTHY_GATEWAY_NODE_H

#include <signal.h>
#include <stdbool.h>

#include <libwebsockets.h>

#include "core/config.h"
#include "core/db.h"
#include "core/listener.h"
#include "uuid.h"
#include "uuidv7.h"

typedef struct gw_node
{
	gw_options	opt;			/* command line and environment */
	gw_cluster	cluster;		/* bothy.settings() */
	int			backoff_ms;		/* reconnect delay: listen_reconnect_backoff_cap */
	bothy_uuid	id;				/* fresh UUIDv7 at every start */
	char		id_text[BOTHY_UUID_STRLEN + 1];
	bothy_uuidv7_state uuids;	/* session and bind IDs of this process */
	struct lws_context *context;
	struct lws_vhost *vhost;
	gw_db	   *db;
	gw_listener *listener;
	bool		started;		/* node_start done: the routes' paths accept */
	bool		stopping;		/* SIGTERM seen: refuse new connections */
	int64_t		stop_began_ms;	/* gw_mono_ms() when the stop began */
	bool		exit_loop;		/* leave lws_service */
	int			exit_code;
	volatile sig_atomic_t stop_requested;	/* SIGTERM, SIGINT: set by the handler */
	volatile sig_atomic_t reload_requested;	/* SIGHUP: set by the handler */
	lws_sorted_usec_list_t sul_phase;	/* start and stop steps */
	lws_sorted_usec_list_t sul_deadline;	/* start or stop deadline */
} gw_node;

extern gw_node gw;

/* A fresh UUIDv7 from this process's generator (getrandom). */
void		gw_new_uuid(bothy_uuid *out);

/* Milliseconds and seconds of CLOCK_REALTIME. */
int64_t		gw_now_ms(void);

/* /readyz: started, not stopping, and a query connection open. */
bool		gw_ready(void);

#endif							/* BOTHY_GATEWAY_NODE_H */
