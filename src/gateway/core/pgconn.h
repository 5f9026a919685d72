/*
 * core/pgconn.h
 *		One libpq connection joined to the libwebsockets loop: asynchronous
 *		connect, the socket adopted as a raw file descriptor, and reconnect
 *		with the back-off of the listener (a retry at once, then one every
 *		bothy.listen_reconnect_backoff_cap).  Used by the query pool (db.c)
 *		and by the shared listener (listener.c).
 *
 * Why raw file adoption: Debian's lws 4.1 has no external poll, and an
 * adopted descriptor is a wsi like any other, on the loop lws runs on
 * (libev, core/loop.c), with no watcher of ours beside lws's.  The socket
 * adopted is a dup() of PQsocket(): libwebsockets closes the descriptor it
 * adopted when it frees the wsi, and libpq closes its own in PQfinish, so
 * neither ever closes a descriptor the other still uses (nor a number
 * reused since).
 * PQsocket() changes on every reconnect (and may change during one
 * connect, host by host), so the socket is adopted again whenever it does.
 */
#ifndef BOTHY_GATEWAY_PGCONN_H
#define BOTHY_GATEWAY_PGCONN_H

#include <stdbool.h>

#include <libpq-fe.h>
#include <libwebsockets.h>

#include "core/loop.h"

typedef struct gw_pgconn gw_pgconn;

typedef struct gw_pgconn_ops
{
	void		(*up) (gw_pgconn *pc);	/* connected, nonblocking */
	void		(*io) (gw_pgconn *pc);	/* socket readable or writable while up */
	void		(*down) (gw_pgconn *pc);	/* an up connection was lost */
	void		(*failed) (gw_pgconn *pc);	/* one connect attempt failed: pc->failure */
} gw_pgconn_ops;

typedef enum gw_pgconn_state
{
	GW_PG_DOWN = 0,				/* waiting for a retry, or stopped */
	GW_PG_CONNECTING,
	GW_PG_UP
} gw_pgconn_state;

struct gw_pgconn
{
	PGconn	   *pg;				/* NULL while down */
	struct lws *wsi;			/* the adopted dup of PQsocket(), or NULL */
	int			sock;			/* PQsocket() when adopted */
	gw_pgconn_state state;
	bool		stopped;		/* no reconnect after gw_pgconn_stop */
	bool		retried_at_once;	/* the immediate retry after a loss is spent */
	bool		flushing;		/* PQflush left output to send */
	const char *failure;		/* why the last attempt failed: a constant code, never libpq's text */
	lws_sorted_usec_list_t sul_retry;	/* next connect attempt */
	lws_sorted_usec_list_t sul_timeout;	/* connect attempt deadline */
	gw_timer	lost_timer;		/* loss seen in a close callback */
	gw_timer	write_timer;	/* a write request made in the writable callback */
	struct lws *in_writable;	/* the wsi whose writable callback runs now */
	const gw_pgconn_ops *ops;
	void	   *owner;			/* the pool slot or the listener */
	const char *conninfo;		/* the operator's conninfo */
	const char *appname;		/* application_name of this connection */
	const int  *backoff_ms;		/* the retry delay, owned by the caller */
	int			connect_timeout_ms;
	struct lws_context *context;
	struct lws_vhost *vhost;
};

/* Sets the fields and starts the first connect attempt. */
void		gw_pgconn_start(gw_pgconn *pc, struct lws_context *context,
							struct lws_vhost *vhost, const char *conninfo,
							const char *appname, const int *backoff_ms,
							int connect_timeout_ms, const gw_pgconn_ops *ops,
							void *owner);

/*
 * Asks for one writable callback (PQflush returned 1, or a connect step
 * wants to write); from inside the writable callback, at the next turn
 * of the loop (libwebsockets 4.1 clears POLLOUT after that callback).
 */
void		gw_pgconn_want_write(gw_pgconn *pc);

/*
 * Sends what libpq holds for the server (PQflush) and asks for a writable
 * callback while some is left (pc->flushing).  Call it after sending a
 * query and, while pc->flushing, at every socket event.  False when the
 * connection broke: the caller then calls gw_pgconn_lost.
 */
bool		gw_pgconn_flush(gw_pgconn *pc);

/*
 * At a socket event: sends what PQflush left, then reads what the server
 * sent.  False when the connection broke: the caller calls gw_pgconn_lost.
 */
bool		gw_pgconn_read(gw_pgconn *pc);

/*
 * For a statement in flight: takes its results as far as they arrived,
 * keeping the first in *first (the rest cleared); true once the statement
 * ended (*first then holds its first result, or NULL, for the caller).
 */
bool		gw_pgconn_ended(gw_pgconn *pc, PGresult **first);

/* The owner found the connection broken: down, then reconnect. */
void		gw_pgconn_lost(gw_pgconn *pc);

/* Closes now and does not reconnect. */
void		gw_pgconn_stop(gw_pgconn *pc);

/* The raw-file protocol callback (protocol "bothy-pg" in server.c). */
int			gw_pgconn_callback(struct lws *wsi, enum lws_callback_reasons reason,
							   void *user, void *in, size_t len);

#define GW_PG_PROTOCOL "bothy-pg"

#endif							/* BOTHY_GATEWAY_PGCONN_H */
