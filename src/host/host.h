/*
 * host/host.h
 *		The running service: one libwebsockets context on one thread holds
 *		the control connection (control.c), the data connections
 *		(stream.c), the sessions with their shells on PTYs (session.c,
 *		pty.c) and the timers; main.c runs the loop.  This header is the
 *		contract between those parts.
 *
 * Why libwebsockets' client and not a WebSocket client of our own: the
 * PTY's master is adopted into the same lws event loop as a raw file
 * (as the gateway adopts libpq's socket), so one poll loop sees the
 * sockets and the PTYs, and lws_rx_flow_control works on both: the
 * backpressure ttyd applies (the PTY is not read while a chunk waits for
 * the socket, and the socket is not read while the PTY cannot take more
 * input) is two calls, with no second loop, thread or buffer between
 * them.  lws 4.1.6 brings what else a client needs (fragments, close
 * codes, TLS for https://) and is already the gateway's.
 */
#ifndef BOTHY_HOST_HOST_H
#define BOTHY_HOST_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libwebsockets.h>

#include "host/hostkey.h"
#include "host/options.h"
#include "uuid.h"

/* The local protocol names of the three kinds of wsi (none is sent). */
#define HOST_PROTO_CONTROL "bothy-host-control"
#define HOST_PROTO_STREAM "bothy-host-stream"
#define HOST_PROTO_PTY "bothy-host-pty"

/*
 * The subprotocol a data connection asks for (protocol.md, "The path"): a
 * node reads such a stream 4 KiB at a time instead of 512 bytes, so a bulk
 * of output passes at the edge's speed rather than half of it.
 */
#define HOST_STREAM_SUBPROTOCOL "bothy-terminal-stream"

/* Close codes the host sends (docs/host.md, "Close codes"). */
#define HOST_CLOSE_ENDED 1000		/* data: the shell ended; control: pair done */
#define HOST_CLOSE_GOING 1001		/* data: superseded by a newer grant; control: stopping */
#define HOST_CLOSE_MALFORMED 4002	/* the peer sent what the host refuses */
#define HOST_CLOSE_TIMEOUT 4009		/* no answer in time */

/* Exit statuses of `run` (docs/host.md, "Exit status"). */
#define HOST_EXIT_OK 0
#define HOST_EXIT_FAILED 1
#define HOST_EXIT_USAGE 2
#define HOST_EXIT_REPAIR 3			/* 4110 or 4112: the host must be paired again */
#define HOST_EXIT_DISABLED 4		/* 4111 */
#define HOST_EXIT_REFUSED 5			/* 4001: the server refused the key */

typedef struct host_session host_session;
typedef struct host_stream host_stream;

typedef struct host_proc
{
	host_options opt;
	host_key	key;			/* the host ID and its key */
	struct lws_context *context;
	struct lws_vhost *vhost;
	bool		stopping;		/* no new session, no reconnect */
	bool		exit_loop;		/* main.c's loop ends */
	int			exit_code;		/* HOST_EXIT_ */
} host_proc;

extern host_proc host;

/* Milliseconds of a monotonic clock. */
int64_t		host_now_ms(void);

/* main.c: stop with this exit status (sessions end, connections close). */
void		host_stop(int exit_code);

/*
 * main.c: a WebSocket to path on --server, bound to the local protocol,
 * asking for subprotocol unless it is NULL, with opaque as its opaque
 * user data.
 * NULL when it failed at once; lws may also have called the protocol's
 * CLIENT_CONNECTION_ERROR before returning.
 */
struct lws *host_connect(const char *path, const char *protocol, const char *subprotocol,
						 void *opaque);

/* --- control.c ------------------------------------------------------------ */

int			host_control_callback(struct lws *wsi, enum lws_callback_reasons reason,
								  void *user, void *in, size_t len);
/* Connects (pair: once; run: and again after each loss, with back-off). */
void		host_control_start(void);
/* Closes with 1001 and does not come back. */
void		host_control_stop(void);
bool		host_control_gone(void);
/* Queues session.started; false when no control connection is ready. */
bool		host_control_started(const bothy_uuid *session, const bothy_uuid *grant);

/* --- stream.c ------------------------------------------------------------- */

int			host_stream_callback(struct lws *wsi, enum lws_callback_reasons reason,
								 void *user, void *in, size_t len);
/*
 * Opens the data connection of session with grant, for s (NULL: the host
 * has no shell for it, and the connection closes with 1000 as soon as the
 * server answers its identify).  NULL when it could not be started.
 */
host_stream *host_stream_open(host_session *s, const bothy_uuid *session,
							  const bothy_uuid *grant);
/* Closes with code at the next chance; the stream forgets its session. */
void		host_stream_close(host_stream *st, int code);
void		host_stream_want_write(host_stream *st);
/* Reads the socket (on) or leaves it unread (off). */
void		host_stream_rx(host_stream *st, bool on);
/* The server answered identify with waiting (no device now). */
bool		host_stream_waiting(const host_stream *st);
/* Stream objects alive (closing ones too). */
unsigned	host_streams_alive(void);

/* --- session.c ------------------------------------------------------------ */

int			host_pty_callback(struct lws *wsi, enum lws_callback_reasons reason,
							  void *user, void *in, size_t len);
void		host_session_open(const bothy_uuid *session, const bothy_uuid *grant);
void		host_session_close(const bothy_uuid *session);
/* The sessions whose shell runs (not ending, not exited), for report. */
size_t		host_sessions_list(bothy_uuid *out, size_t max);
/* After SIGCHLD: reap every child that ended. */
void		host_sessions_reap(void);
/* Hang up every session. */
void		host_sessions_stop(void);
bool		host_sessions_gone(void);

/* What a data connection tells its session. */
void		host_session_waiting(host_session *s, host_stream *st);
void		host_session_paired(host_session *s, host_stream *st);
/* A device's frame; false when it is not allowed now (the stream closes 4002). */
bool		host_session_frame(host_session *s, host_stream *st, const uint8_t *buf, size_t len);
/* The next frame to send into out (cap bytes); 0 when nothing is due. */
size_t		host_session_next_frame(host_session *s, host_stream *st, uint8_t *out, size_t cap);
/*
 * The data connection ended: ours_code is what the host closed it with
 * (0: not the host), peer_code what the server's close frame said (0:
 * none, the connection failed or dropped).
 */
void		host_session_stream_gone(host_session *s, host_stream *st, int ours_code,
									 int peer_code);

#endif							/* BOTHY_HOST_HOST_H */
