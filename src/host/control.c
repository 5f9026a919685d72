/*
 * host/control.c
 *		The control connection to /terminal/host (docs/host.md,
 *		"The control connection"): the challenge answered with hello (run)
 *		or pair (pair), ready, report after every ready, a heartbeat every
 *		heartbeat_ms, session.open and session.close handed to the
 *		sessions, probes answered.  It never carries terminal bytes.
 *
 * In `run` a lost connection comes back after the back-off table's delay
 * (backoff.c) unless the server's close code says that retrying cannot
 * help: 4110 and 4112 (the host must be paired again), 4111 (disabled),
 * 4001 (the key refused) stop the service with an exit status of their
 * own.  The sessions do not depend on it: their data connections stay.
 */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "base64url.h"
#include "host/backoff.h"
#include "host/host.h"
#include "host/msg.h"
#include "host/proof.h"
#include "logline.h"

/* Messages queued for the server at most; more means it stopped reading. */
#define QUEUE_LEN 16
/* From the upgrade to ready: the challenge, and one database call for hello. */
#define LOGIN_TIMEOUT_MS 15000
/*
 * Heartbeats without heartbeat_ack before the host gives the connection
 * up (4009) and reconnects: the server closes a silent one after
 * interval x miss limit (3 by default), the host after two unanswered.
 */
#define UNANSWERED_MAX 2

typedef enum ctl_state
{
	CTL_DOWN,					/* no connection; a retry may be scheduled */
	CTL_CONNECTING,				/* TCP, TLS, the upgrade */
	CTL_CHALLENGE,				/* upgraded: the challenge is due */
	CTL_LOGIN,					/* hello or pair sent: ready is due */
	CTL_READY					/* logged in */
} ctl_state;

typedef struct ctl_msg_slot
{
	unsigned char buf[LWS_PRE + HOST_MSG_MAX];
	size_t		len;
} ctl_msg_slot;

static struct control
{
	struct lws *wsi;			/* the connection, NULL when down */
	ctl_state	state;
	bool		stopped;		/* host_control_stop: no more retries */
	bool		in_connect;		/* inside lws_client_connect_via_info */
	bool		connect_failed;	/* it failed while in_connect */
	bothy_uuid	conn;			/* ready's conn on this connection */
	host_state	hstate;			/* ready's state */
	uint32_t	heartbeat_ms;	/* ready's heartbeat_ms */
	unsigned	unanswered;		/* heartbeats since the last heartbeat_ack */
	unsigned	attempt;		/* reconnects since the last stable login */
	int64_t		ready_at_ms;	/* when this connection got its first ready (0: not yet) */
	int			close_code;		/* ours, sent at the next writeable (0: none) */
	int			peer_code;		/* the server's close frame (0: none) */
	lws_sorted_usec_list_t sul_retry;	/* the next attempt */
	lws_sorted_usec_list_t sul_heartbeat;	/* the next heartbeat */
	lws_sorted_usec_list_t sul_login;	/* ready by then */
	size_t		rx_len;
	char		rx[HOST_MSG_MAX];	/* one message, reassembled */
	bool		rx_binary;
	ctl_msg_slot queue[QUEUE_LEN];	/* to send, oldest first */
	unsigned	qhead;
	unsigned	qlen;
} ctl;

static void connect_now(lws_sorted_usec_list_t *sul);

static bool
pairing(void)
{
	return host.opt.command == HOST_CMD_PAIR;
}

bool
host_control_gone(void)
{
	return ctl.wsi == NULL;
}

/* Closes with code at the next writeable (the first code asked for wins). */
static void
close_with(int code)
{
	if (ctl.wsi == NULL)
		return;
	if (ctl.close_code == 0)
		ctl.close_code = code;
	lws_callback_on_writable(ctl.wsi);
}

/* Queues a message built by one of msg.h's functions into the slot it fills. */
static ctl_msg_slot *
slot(void)
{
	if (ctl.qlen == QUEUE_LEN)
		return NULL;
	return &ctl.queue[(ctl.qhead + ctl.qlen) % QUEUE_LEN];
}

static void
push(ctl_msg_slot *m, size_t len)
{
	if (m == NULL || len == 0)
	{
		gw_log(GW_LOG_WARN, "control queue full: the server does not read");
		close_with(HOST_CLOSE_TIMEOUT);
		return;
	}
	m->len = len;
	ctl.qlen++;
	lws_callback_on_writable(ctl.wsi);
}

#define SLOT_BUF(m) ((m) != NULL ? (char *) (m)->buf + LWS_PRE : NULL)
#define SLOT_CAP(m) ((m) != NULL ? (size_t) HOST_MSG_MAX : 0)

static void
send_report(void)
{
	bothy_uuid	list[HOST_SESSIONS_MAX];
	size_t		n = host_sessions_list(list, HOST_SESSIONS_MAX);
	ctl_msg_slot *m = slot();

	push(m, host_msg_report(SLOT_BUF(m), SLOT_CAP(m), list, n));
}

bool
host_control_started(const bothy_uuid *session, const bothy_uuid *grant)
{
	ctl_msg_slot *m;

	if (ctl.state != CTL_READY)
		return false;
	m = slot();
	push(m, host_msg_started(SLOT_BUF(m), SLOT_CAP(m), session, grant));
	return true;
}

static void
heartbeat_cb(lws_sorted_usec_list_t *sul)
{
	ctl_msg_slot *m;

	(void) sul;
	if (ctl.state != CTL_READY)
		return;
	if (ctl.unanswered >= UNANSWERED_MAX)
	{
		gw_log(GW_LOG_WARN, "heartbeats unanswered: reconnecting");
		close_with(HOST_CLOSE_TIMEOUT);
		return;
	}
	m = slot();
	push(m, host_msg_heartbeat(SLOT_BUF(m), SLOT_CAP(m)));
	ctl.unanswered++;
	lws_sul_schedule(host.context, 0, &ctl.sul_heartbeat, heartbeat_cb,
					 (lws_usec_t) ctl.heartbeat_ms * LWS_US_PER_MS);
}

static void
login_timeout_cb(lws_sorted_usec_list_t *sul)
{
	(void) sul;
	if (ctl.state == CTL_CHALLENGE || ctl.state == CTL_LOGIN)
	{
		gw_log(GW_LOG_WARN, "no ready from the server in time");
		close_with(HOST_CLOSE_TIMEOUT);
	}
}

/* --- what the server sends ------------------------------------------------- */

static bool
on_challenge(const host_msg *m)
{
	char		sig[HOST_SIG_TEXT_LEN + 1];
	ctl_msg_slot *s = slot();
	size_t		n;

	if (pairing())
	{
		char		pk[BOTHY_B64URL_LEN(32) + 1];

		if (!bothy_b64url_encode(host.key.pk, sizeof(host.key.pk), pk, sizeof(pk)) ||
			!host_proof_sign(&host.key, HOST_PROOF_PAIR, host.key.host_text, m->nonce, sig))
			return false;
		n = host_msg_pair(SLOT_BUF(s), SLOT_CAP(s), host.key.host_text, host.opt.code, pk, sig);
	}
	else
	{
		if (!host_proof_sign(&host.key, HOST_PROOF_HELLO, host.key.host_text, m->nonce, sig))
			return false;
		n = host_msg_hello(SLOT_BUF(s), SLOT_CAP(s), host.key.host_text, sig,
						   HOST_VERSION_PREFIX BOTHY_HOST_VERSION);
	}
	push(s, n);
	ctl.state = CTL_LOGIN;
	return true;
}

static void
on_ready(const host_msg *m)
{
	bool		first = ctl.state == CTL_LOGIN;

	ctl.hstate = m->state;
	ctl.heartbeat_ms = m->heartbeat_ms;
	if (first)
	{
		ctl.conn = m->conn;
		ctl.state = CTL_READY;
		ctl.ready_at_ms = host_now_ms();
		ctl.unanswered = 0;
		lws_sul_cancel(&ctl.sul_login);
	}
	gw_logf(GW_LOG_INFO, "control connection ready", "state=%s",
			m->state == HOST_STATE_ACTIVE ? "active" : "confirming");
	if (pairing())
	{
		char		fp[HOST_FINGERPRINT_LEN + 1];

		/* the owner confirms this with bothy.terminal_host_confirm */
		host_key_fingerprint(host.key.pk, fp);
		printf("%s\n", fp);
		fflush(stdout);
		close_with(HOST_CLOSE_ENDED);
		host_stop(HOST_EXIT_OK);
		return;
	}
	send_report();
	lws_sul_schedule(host.context, 0, &ctl.sul_heartbeat, heartbeat_cb,
					 (lws_usec_t) ctl.heartbeat_ms * LWS_US_PER_MS);
}

static void
on_probe(const host_msg *m)
{
	char		sig[HOST_SIG_TEXT_LEN + 1];
	ctl_msg_slot *s = slot();

	if (!host_proof_sign(&host.key, HOST_PROOF_PROBE, host.key.host_text, m->nonce, sig))
		return;
	gw_log(GW_LOG_INFO, "probe answered");
	push(s, host_msg_probe_ack(SLOT_BUF(s), SLOT_CAP(s), sig));
}

/* One whole text message; false: the connection closes with 4002. */
static bool
on_message(void)
{
	host_msg	m;
	host_msg_result r = host_msg_parse(ctl.rx, ctl.rx_len, &m);

	if (r == HOST_MSG_UNKNOWN_OP)
	{
		gw_log(GW_LOG_WARN, "unknown op on the control connection");
		return false;
	}
	if (r != HOST_MSG_OK)
	{
		gw_log(GW_LOG_WARN, "malformed message on the control connection");
		return false;
	}
	switch (ctl.state)
	{
		case CTL_CHALLENGE:
			if (m.op == HOST_OP_CHALLENGE)
				return on_challenge(&m);
			break;
		case CTL_LOGIN:
			if (m.op == HOST_OP_READY)
			{
				on_ready(&m);
				return true;
			}
			break;
		case CTL_READY:
			switch (m.op)
			{
				case HOST_OP_READY:
					/* the same connection's new state; another conn is not this one */
					if (bothy_uuid_compare(&m.conn, &ctl.conn) != 0)
						break;
					on_ready(&m);
					return true;
				case HOST_OP_HEARTBEAT_ACK:
					ctl.unanswered = 0;
					return true;
				case HOST_OP_SESSION_OPEN:
					if (ctl.hstate != HOST_STATE_ACTIVE)
						break;
					host_session_open(&m.session, &m.grant);
					return true;
				case HOST_OP_SESSION_CLOSE:
					host_session_close(&m.session);
					return true;
				case HOST_OP_PROBE:
					on_probe(&m);
					return true;
				default:
					break;
			}
			break;
		default:
			break;
	}
	gw_log(GW_LOG_WARN, "unexpected op on the control connection");
	return false;
}

/* --- the connection -------------------------------------------------------- */

/* Stops the service for a close code that retrying cannot change. */
static bool
final_code(int code)
{
	switch (code)
	{
		case 4110:
		case 4112:
			gw_log(GW_LOG_ERROR, "the host must be paired again (bothy-host pair)");
			host_stop(HOST_EXIT_REPAIR);
			return true;
		case 4111:
			gw_log(GW_LOG_ERROR, "the host is disabled");
			host_stop(HOST_EXIT_DISABLED);
			return true;
		case 4001:
			gw_log(GW_LOG_ERROR, "the server refused the host's key");
			host_stop(HOST_EXIT_REFUSED);
			return true;
		default:
			return false;
	}
}

static void
lost(void)
{
	int			peer = ctl.peer_code;
	uint32_t	random;
	uint32_t	delay;

	lws_sul_cancel(&ctl.sul_heartbeat);
	lws_sul_cancel(&ctl.sul_login);
	ctl.wsi = NULL;
	ctl.state = CTL_DOWN;
	ctl.qhead = ctl.qlen = 0;
	ctl.rx_len = 0;
	ctl.close_code = 0;
	ctl.peer_code = 0;
	if (ctl.stopped || host.stopping)
		return;
	if (pairing())
	{
		if (peer == 4001)
			fprintf(stderr, "bothy-host pair: the server refused the pairing "
					"(a wrong code, or the host is not pairing)\n");
		else
			fprintf(stderr, "bothy-host pair: the server could not be reached or ended "
					"the pairing\n");
		gw_logf(GW_LOG_ERROR, "pairing failed", "code=%d", peer);
		host_stop(HOST_EXIT_FAILED);
		return;
	}
	if (final_code(peer))
		return;
	if (ctl.ready_at_ms > 0 && host_now_ms() - ctl.ready_at_ms >= HOST_BACKOFF_STABLE_MS)
		ctl.attempt = 0;
	ctl.ready_at_ms = 0;
	randombytes_buf(&random, sizeof(random));
	delay = host_backoff_delay_ms(ctl.attempt, random);
	if (ctl.attempt < 1000)
		ctl.attempt++;
	gw_logf(GW_LOG_WARN, "control connection lost", "code=%d retry_ms=%u", peer, delay);
	lws_sul_schedule(host.context, 0, &ctl.sul_retry, connect_now,
					 (lws_usec_t) delay * LWS_US_PER_MS);
}

static void
connect_now(lws_sorted_usec_list_t *sul)
{
	struct lws *wsi;

	(void) sul;
	if (ctl.stopped || host.stopping || ctl.wsi != NULL)
		return;
	ctl.state = CTL_CONNECTING;
	ctl.connect_failed = false;
	ctl.in_connect = true;
	wsi = host_connect("/terminal/host", HOST_PROTO_CONTROL, NULL, &ctl);
	ctl.in_connect = false;
	if (wsi == NULL || ctl.connect_failed)
	{
		lost();
		return;
	}
	ctl.wsi = wsi;
}

void
host_control_start(void)
{
	ctl.stopped = false;
	connect_now(NULL);
}

void
host_control_stop(void)
{
	ctl.stopped = true;
	lws_sul_cancel(&ctl.sul_retry);
	close_with(HOST_CLOSE_GOING);
}

static int
on_receive(struct lws *wsi, const char *in, size_t len)
{
	if (lws_is_first_fragment(wsi))
	{
		ctl.rx_len = 0;
		ctl.rx_binary = lws_frame_is_binary(wsi) != 0;
	}
	if (len > sizeof(ctl.rx) - ctl.rx_len)
	{
		gw_log(GW_LOG_WARN, "message too long on the control connection");
		goto refuse;
	}
	memcpy(ctl.rx + ctl.rx_len, in, len);
	ctl.rx_len += len;
	if (!lws_is_final_fragment(wsi))
		return 0;
	if (ctl.rx_binary)
	{
		gw_log(GW_LOG_WARN, "binary message on the control connection");
		goto refuse;
	}
	if (on_message())
		return 0;
refuse:
	if (ctl.close_code == 0)
		ctl.close_code = HOST_CLOSE_MALFORMED;
	lws_close_reason(wsi, (enum lws_close_status) ctl.close_code, NULL, 0);
	return -1;
}

static int
on_writeable(struct lws *wsi)
{
	ctl_msg_slot *m;

	if (ctl.close_code != 0)
	{
		lws_close_reason(wsi, (enum lws_close_status) ctl.close_code, NULL, 0);
		return -1;
	}
	if (ctl.qlen == 0)
		return 0;
	m = &ctl.queue[ctl.qhead];
	if (lws_write(wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_TEXT) < (int) m->len)
		return -1;
	ctl.qhead = (ctl.qhead + 1) % QUEUE_LEN;
	ctl.qlen--;
	if (ctl.qlen > 0)
		lws_callback_on_writable(wsi);
	return 0;
}

int
host_control_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
					  void *in, size_t len)
{
	(void) user;
	if (lws_get_opaque_user_data(wsi) != &ctl)
		return 0;
	switch (reason)
	{
		case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
			lws_set_opaque_user_data(wsi, NULL);
			if (ctl.in_connect)
			{
				ctl.connect_failed = true;
				return 0;
			}
			lost();
			return 0;
		case LWS_CALLBACK_CLIENT_ESTABLISHED:
			ctl.state = CTL_CHALLENGE;
			lws_sul_schedule(host.context, 0, &ctl.sul_login, login_timeout_cb,
							 (lws_usec_t) LOGIN_TIMEOUT_MS * LWS_US_PER_MS);
			return 0;
		case LWS_CALLBACK_CLIENT_RECEIVE:
			return on_receive(wsi, in, len);
		case LWS_CALLBACK_CLIENT_WRITEABLE:
			return on_writeable(wsi);
		case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
			if (len >= 2)
				ctl.peer_code = (((const uint8_t *) in)[0] << 8) | ((const uint8_t *) in)[1];
			return 0;
		case LWS_CALLBACK_CLIENT_CLOSED:
			lws_set_opaque_user_data(wsi, NULL);
			lost();
			return 0;
		default:
			return 0;
	}
}
