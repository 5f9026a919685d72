/*
 * host/stream.c
 *		The data connections: one WebSocket to /terminal/stream/<session>
 *		per session.open, its identify, the server's waiting and paired,
 *		then the stream's frames both ways (docs/host.md).  The frames'
 *		meaning is the session's (session.c); this file is the transport.
 *
 * A stream outlives its session's interest in it: once closed by the
 * host (superseded by a newer grant, or the session ended) it forgets its
 * session and only finishes its close.  Every stream is an allocation of
 * its own, freed when lws reports the connection gone.
 */
#include <stdlib.h>
#include <string.h>

#include "host/frame.h"
#include "host/host.h"
#include "host/msg.h"
#include "host/proof.h"
#include "logline.h"

/* Streams at once, closing ones included: two per session and a few refused. */
#define STREAMS_MAX (2 * HOST_SESSIONS_MAX + 8)
/*
 * The server's answer to identify (waiting or paired) comes after one
 * database call; a connection left unanswered this long is closed.
 */
#define ANSWER_TIMEOUT_S 30
/*
 * A close the host asked for is sent at the next writeable; a connection
 * whose socket never drains (its relay stopped reading) is dropped after
 * this instead of being kept for ever.
 */
#define CLOSE_TIMEOUT_S 5

typedef enum stream_state
{
	ST_CONNECTING,				/* TCP, TLS, the upgrade */
	ST_IDENTIFY,				/* connected: identify is due */
	ST_IDENTIFIED,				/* identify sent: the server's answer is due */
	ST_WAITING,					/* no device */
	ST_PAIRED					/* a device: binary frames */
} stream_state;

struct host_stream
{
	struct lws *wsi;			/* NULL once lws reported it gone */
	host_session *session;		/* NULL: forgotten, or no shell (closes at the answer) */
	bool		no_shell;		/* opened only to say 1000 */
	bothy_uuid	session_id;
	bothy_uuid	grant;
	stream_state state;
	int			close_code;		/* ours, sent at the next writeable (0: none) */
	int			peer_code;		/* the server's close frame (0: none yet) */
	bool		rx_on;			/* the socket is read */
	bool		in_connect;		/* inside lws_client_connect_via_info */
	bool		connect_failed;	/* it failed while in_connect */
	bool		rx_binary;		/* the message being reassembled */
	size_t		rx_len;
	uint8_t		rx[HOST_FRAME_MAX];	/* one message, reassembled */
	uint8_t		tx[LWS_PRE + HOST_FRAME_MAX];	/* one message to send */
};

static unsigned nstreams;

unsigned
host_streams_alive(void)
{
	return nstreams;
}

static void
stream_free(host_stream *st)
{
	free(st);
	nstreams--;
}

/* The connection is gone: its session hears it once. */
static void
gone(host_stream *st)
{
	host_session *s = st->session;

	st->wsi = NULL;
	st->session = NULL;
	if (s != NULL)
		host_session_stream_gone(s, st, st->close_code, st->peer_code);
	stream_free(st);
}

host_stream *
host_stream_open(host_session *s, const bothy_uuid *session, const bothy_uuid *grant)
{
	char		path[64];
	char		session_text[BOTHY_UUID_STRLEN + 1];
	host_stream *st;
	struct lws *wsi;

	if (nstreams >= STREAMS_MAX)
	{
		gw_log(GW_LOG_WARN, "data connection not opened: too many at once");
		return NULL;
	}
	st = calloc(1, sizeof(*st));
	if (st == NULL)
	{
		gw_log(GW_LOG_ERROR, "out of memory for a data connection");
		return NULL;
	}
	nstreams++;
	st->session = s;
	st->no_shell = s == NULL;
	st->session_id = *session;
	st->grant = *grant;
	st->state = ST_CONNECTING;
	st->rx_on = true;
	bothy_uuid_format(session, session_text);
	snprintf(path, sizeof(path), "/terminal/stream/%s", session_text);
	st->in_connect = true;
	wsi = host_connect(path, HOST_PROTO_STREAM, HOST_STREAM_SUBPROTOCOL, st);
	st->in_connect = false;
	if (wsi == NULL || st->connect_failed)
	{
		gw_log(GW_LOG_WARN, "data connection failed");
		stream_free(st);
		return NULL;
	}
	st->wsi = wsi;
	return st;
}

void
host_stream_close(host_stream *st, int code)
{
	st->session = NULL;
	if (st->close_code == 0)
		st->close_code = code;
	if (st->wsi != NULL)
	{
		lws_set_timeout(st->wsi, PENDING_TIMEOUT_USER_OK, CLOSE_TIMEOUT_S);
		lws_callback_on_writable(st->wsi);
	}
}

void
host_stream_want_write(host_stream *st)
{
	if (st->wsi != NULL && st->state == ST_PAIRED)
		lws_callback_on_writable(st->wsi);
}

void
host_stream_rx(host_stream *st, bool on)
{
	if (st->wsi == NULL || st->rx_on == on)
		return;
	st->rx_on = on;
	lws_rx_flow_control(st->wsi, on ? 1 : 0);
}

bool
host_stream_waiting(const host_stream *st)
{
	return st->state == ST_WAITING;
}

/* The server's refusal of what it sent: logged, closed with 4002. */
static int
malformed(struct lws *wsi, host_stream *st, const char *msg)
{
	gw_log(GW_LOG_WARN, msg);
	if (st->close_code == 0)
		st->close_code = HOST_CLOSE_MALFORMED;
	lws_close_reason(wsi, (enum lws_close_status) st->close_code, NULL, 0);
	return -1;
}

static int
on_text(struct lws *wsi, host_stream *st)
{
	host_msg	m;
	host_msg_result r = host_msg_parse((const char *) st->rx, st->rx_len, &m);

	if (r == HOST_MSG_UNKNOWN_OP)
		return malformed(wsi, st, "unknown op on a data connection");
	if (r != HOST_MSG_OK || (m.op != HOST_OP_WAITING && m.op != HOST_OP_PAIRED) ||
		st->state < ST_IDENTIFIED)
		return malformed(wsi, st, "malformed message on a data connection");
	st->state = m.op == HOST_OP_WAITING ? ST_WAITING : ST_PAIRED;
	lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
	if (st->no_shell)
	{
		/* no shell for this session: the answer is 1000, the session ended */
		host_stream_close(st, HOST_CLOSE_ENDED);
		return 0;
	}
	if (st->session == NULL)
		return 0;
	/* that a data connection reached a relay, and when it paired: a line each */
	if (m.op == HOST_OP_WAITING)
	{
		gw_log(GW_LOG_INFO, "data connection waiting for the device");
		host_session_waiting(st->session, st);
	}
	else
	{
		gw_log(GW_LOG_INFO, "data connection paired");
		host_session_paired(st->session, st);
	}
	return 0;
}

static int
on_receive(struct lws *wsi, host_stream *st, const uint8_t *in, size_t len)
{
	size_t		cap;

	if (lws_is_first_fragment(wsi))
	{
		st->rx_len = 0;
		st->rx_binary = lws_frame_is_binary(wsi) != 0;
	}
	cap = st->rx_binary ? HOST_FRAME_MAX : HOST_MSG_MAX;
	if (len > cap - st->rx_len)
		return malformed(wsi, st, "message too long on a data connection");
	memcpy(st->rx + st->rx_len, in, len);
	st->rx_len += len;
	if (!lws_is_final_fragment(wsi))
		return 0;
	if (!st->rx_binary)
		return on_text(wsi, st);
	if (st->state != ST_PAIRED)
		return malformed(wsi, st, "terminal bytes before paired");
	if (st->session == NULL)
		return 0;				/* closing: what the device still sends is dropped */
	if (!host_session_frame(st->session, st, st->rx, st->rx_len))
		return malformed(wsi, st, "malformed frame from the device");
	return 0;
}

static int
on_writeable(struct lws *wsi, host_stream *st)
{
	size_t		n;

	if (st->close_code != 0)
	{
		lws_close_reason(wsi, (enum lws_close_status) st->close_code, NULL, 0);
		return -1;
	}
	if (st->state == ST_IDENTIFY)
	{
		char		sig[HOST_SIG_TEXT_LEN + 1];
		char		session_text[BOTHY_UUID_STRLEN + 1];
		char		grant_text[BOTHY_UUID_STRLEN + 1];

		bothy_uuid_format(&st->session_id, session_text);
		bothy_uuid_format(&st->grant, grant_text);
		if (!host_proof_sign(&host.key, HOST_PROOF_DATA, session_text, grant_text, sig))
			return -1;
		n = host_msg_identify((char *) st->tx + LWS_PRE, HOST_FRAME_MAX, host.key.host_text,
							  &st->session_id, &st->grant, sig);
		if (n == 0 || lws_write(wsi, st->tx + LWS_PRE, n, LWS_WRITE_TEXT) < (int) n)
			return -1;
		st->state = ST_IDENTIFIED;
		return 0;
	}
	if (st->state != ST_PAIRED || st->session == NULL)
		return 0;
	n = host_session_next_frame(st->session, st, st->tx + LWS_PRE, HOST_FRAME_MAX);
	if (n == 0)
		return 0;
	if (lws_write(wsi, st->tx + LWS_PRE, n, LWS_WRITE_BINARY) < (int) n)
		return -1;
	return 0;
}

int
host_stream_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
					 void *in, size_t len)
{
	host_stream *st = lws_get_opaque_user_data(wsi);

	(void) user;
	if (st == NULL)
		return 0;
	switch (reason)
	{
		case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
			lws_set_opaque_user_data(wsi, NULL);
			if (st->in_connect)
			{
				/* host_stream_open logs it and frees it when lws returns */
				st->connect_failed = true;
				return 0;
			}
			gw_log(GW_LOG_WARN, "data connection failed");
			gone(st);
			return 0;
		case LWS_CALLBACK_CLIENT_ESTABLISHED:
			st->state = ST_IDENTIFY;
			lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, ANSWER_TIMEOUT_S);
			lws_callback_on_writable(wsi);
			return 0;
		case LWS_CALLBACK_CLIENT_RECEIVE:
			return on_receive(wsi, st, in, len);
		case LWS_CALLBACK_CLIENT_WRITEABLE:
			return on_writeable(wsi, st);
		case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
			if (len >= 2)
				st->peer_code = (((const uint8_t *) in)[0] << 8) | ((const uint8_t *) in)[1];
			return 0;
		case LWS_CALLBACK_CLIENT_CLOSED:
			lws_set_opaque_user_data(wsi, NULL);
			gone(st);
			return 0;
		default:
			return 0;
	}
}
