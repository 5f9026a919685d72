/*
 * core/pgconn.c
 *		A libpq connection on the libwebsockets loop (see pgconn.h for why
 *		raw file adoption of a dup'd socket).
 *
 * Nothing here blocks: PQconnectStartParams / PQconnectPoll to connect,
 * PQsetnonblocking once up; the owner does PQsendQueryParams, PQflush,
 * PQconsumeInput and PQgetResult in its io callback.  PQfinish of a
 * nonblocking connection only queues the terminate message and closes.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "core/pgconn.h"

static void connect_now(gw_pgconn *pc);

/*
 * libpq's default notice processor prints the server's text on stderr
 * (a FATAL of a terminated backend, a WARNING): it may name objects and
 * is not one record a line, so notices are dropped; losses are logged by
 * the owners with constant messages.
 */
static void
drop_notice(void *arg, const char *message)
{
	(void) arg;
	(void) message;
}

/*
 * The dup'd socket of a connection given up stays open in lws until lws
 * closes its wsi, and one whose connect failed or whose server hung up is
 * readable at every turn (EOF, hang-up: libev passes both on as "read").
 * Left alone it starved the loop: with an event pending at every turn,
 * libev never runs the idle watcher through which lws's libev plugin
 * services its timers (lws_sul), so the kill below, the retry and the
 * start timeout never came, and the node spun a core without ever
 * connecting again (a node started before its database, issue 33).  So
 * the callback closes such a wsi at its next event, and the kill is for
 * a socket that has none.
 */
static void
detach_socket(gw_pgconn *pc)
{
	if (pc->wsi != NULL)
	{
		/* the wsi outlives this call until its next event: make it forget us */
		lws_set_opaque_user_data(pc->wsi, NULL);
		lws_set_timeout(pc->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
		pc->wsi = NULL;
	}
	pc->sock = -1;
}

static bool
adopt_socket(gw_pgconn *pc)
{
	lws_adopt_desc_t info;
	int			fd = PQsocket(pc->pg);
	int			dupfd;

	if (fd < 0)
		return false;
	if (pc->wsi != NULL && fd == pc->sock)
		return true;
	detach_socket(pc);
	dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dupfd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	info.vh = pc->vhost;
	info.type = LWS_ADOPT_RAW_FILE_DESC;
	info.fd.filefd = dupfd;
	info.vh_prot_name = GW_PG_PROTOCOL;
	info.opaque = pc;
	/* on failure lws has closed dupfd itself */
	pc->wsi = lws_adopt_descriptor_vhost_via_info(&info);
	if (pc->wsi == NULL)
		return false;
	pc->sock = fd;
	return true;
}

/* Drops the PGconn and its socket, without callbacks. */
static void
teardown(gw_pgconn *pc)
{
	lws_sul_cancel(&pc->sul_timeout);
	gw_timer_cancel(&pc->write_timer);
	detach_socket(pc);
	pc->flushing = false;
	if (pc->pg != NULL)
	{
		PQfinish(pc->pg);
		pc->pg = NULL;
	}
}

/*
 * Why a connect attempt failed, as a code of a closed set (docs/gateway.md,
 * "database connection failed"): libpq's message may name the host, its
 * address and the user (D-M2-47-11), so it is matched, never logged.  The
 * server's own refusals are matched by SQLSTATE (the connection asks for
 * PQERRORS_SQLSTATE while it connects: the server's message text follows
 * its lc_messages); libpq's are in English, as the node never calls
 * setlocale.  The first rule that matches wins: the server's word before
 * libpq's, whose message for a host tried later may follow.
 */
static const struct
{
	const char *text;
	const char *reason;
}			reasons[] = {
	{"server does not support SSL, but SSL was required", "ssl_not_supported"},
	{"  28P01", "authentication_failed"},	/* invalid_password */
	{"  28000", "authentication_failed"},	/* no such role, or pg_hba.conf refuses */
	{"  3D000", "database_missing"},
	{"  53300", "too_many_connections"},
	{"  57P03", "server_not_ready"},	/* starting up, shutting down, in recovery */
	{"certificate", "ssl_failed"},	/* verify-ca, verify-full: the server's or the root's */
	{"SSL", "ssl_failed"},
	{"no password supplied", "authentication_failed"},
	{"authentication", "authentication_failed"},
	{"could not translate host name", "host_unknown"},
	{"Connection refused", "connection_refused"},
	{"No such file or directory", "connection_refused"},	/* no Unix socket there */
	{"No route to host", "unreachable"},
	{"Network is unreachable", "unreachable"},
	{"timeout expired", "timeout"},
	{"Connection timed out", "timeout"},
	{"invalid connection option", "invalid_conninfo"},
	{"invalid URI", "invalid_conninfo"},
	{"missing \"=\"", "invalid_conninfo"},
	{"unterminated quoted string", "invalid_conninfo"},
	{"invalid sslmode value", "invalid_conninfo"},
};

static const char *
failure_reason(const PGconn *pg)
{
	const char *message = pg != NULL ? PQerrorMessage(pg) : NULL;
	size_t		i;

	if (message == NULL)
		return "out_of_memory";
	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (strstr(message, reasons[i].text) != NULL)
			return reasons[i].reason;
	return "other";
}

static void
retry_cb(lws_sorted_usec_list_t *sul)
{
	gw_pgconn  *pc = lws_container_of(sul, gw_pgconn, sul_retry);

	connect_now(pc);
}

/*
 * One attempt failed (reason NULL: ask libpq why): a retry at once after a
 * loss, then every back-off.
 */
static void
attempt_failed(gw_pgconn *pc, const char *reason)
{
	lws_usec_t	delay;

	pc->failure = reason != NULL ? reason : failure_reason(pc->pg);
	teardown(pc);
	pc->state = GW_PG_DOWN;
	if (pc->ops->failed != NULL)
		pc->ops->failed(pc);
	if (pc->stopped)
		return;
	delay = (lws_usec_t) (*pc->backoff_ms) * LWS_US_PER_MS;
	if (!pc->retried_at_once)
	{
		pc->retried_at_once = true;
		delay = 1;
	}
	lws_sul_schedule(pc->context, 0, &pc->sul_retry, retry_cb, delay);
}

static void
timeout_cb(lws_sorted_usec_list_t *sul)
{
	gw_pgconn  *pc = lws_container_of(sul, gw_pgconn, sul_timeout);

	if (pc->state == GW_PG_CONNECTING)
		attempt_failed(pc, "timeout");
}

static void
poll_connect(gw_pgconn *pc)
{
	switch (PQconnectPoll(pc->pg))
	{
		case PGRES_POLLING_OK:
			lws_sul_cancel(&pc->sul_timeout);
			if (PQsetnonblocking(pc->pg, 1) != 0 || !adopt_socket(pc))
			{
				attempt_failed(pc, "other");
				return;
			}
			/* the owners' errors keep the server's text (PQERRORS_SQLSTATE: connecting) */
			PQsetErrorVerbosity(pc->pg, PQERRORS_DEFAULT);
			pc->state = GW_PG_UP;
			pc->retried_at_once = false;
			pc->ops->up(pc);
			return;
		case PGRES_POLLING_FAILED:
			attempt_failed(pc, NULL);
			return;
		case PGRES_POLLING_WRITING:
			if (!adopt_socket(pc))
			{
				attempt_failed(pc, "other");
				return;
			}
			gw_pgconn_want_write(pc);
			return;
		case PGRES_POLLING_READING:
		case PGRES_POLLING_ACTIVE:
			if (!adopt_socket(pc))
				attempt_failed(pc, "other");
			return;
	}
}

static void
connect_now(gw_pgconn *pc)
{
	const char *const keys[] = {"dbname", "application_name", NULL};
	const char *values[] = {pc->conninfo, pc->appname, NULL};

	if (pc->stopped)
		return;
	teardown(pc);
	pc->state = GW_PG_CONNECTING;
	/* expand_dbname: the conninfo is the first value; application_name after it wins */
	pc->pg = PQconnectStartParams(keys, values, 1);
	if (pc->pg == NULL || PQstatus(pc->pg) == CONNECTION_BAD)
	{
		attempt_failed(pc, NULL);
		return;
	}
	PQsetNoticeProcessor(pc->pg, drop_notice, NULL);
	/* the server's refusal as its SQLSTATE, whatever its language (failure_reason) */
	PQsetErrorVerbosity(pc->pg, PQERRORS_SQLSTATE);
	lws_sul_schedule(pc->context, 0, &pc->sul_timeout, timeout_cb,
					 (lws_usec_t) pc->connect_timeout_ms * LWS_US_PER_MS);
	/* "as if PQconnectPoll last returned PGRES_POLLING_WRITING" */
	if (!adopt_socket(pc))
	{
		attempt_failed(pc, "other");
		return;
	}
	lws_callback_on_writable(pc->wsi);
}

static void write_cb(gw_timer *t);
static void lost_cb(gw_timer *t);

void
gw_pgconn_start(gw_pgconn *pc, struct lws_context *context, struct lws_vhost *vhost,
				const char *conninfo, const char *appname, const int *backoff_ms,
				int connect_timeout_ms, const gw_pgconn_ops *ops, void *owner)
{
	memset(pc, 0, sizeof(*pc));
	pc->sock = -1;
	pc->context = context;
	pc->vhost = vhost;
	pc->conninfo = conninfo;
	pc->appname = appname;
	pc->backoff_ms = backoff_ms;
	pc->connect_timeout_ms = connect_timeout_ms;
	pc->ops = ops;
	pc->owner = owner;
	/* next-turn wakes on loop timers: an lws_sul set from a callback may run late (core/loop.c) */
	gw_timer_init(&pc->write_timer, write_cb);
	gw_timer_init(&pc->lost_timer, lost_cb);
	/* the first attempt counts as the immediate one */
	pc->retried_at_once = true;
	connect_now(pc);
}

bool
gw_pgconn_flush(gw_pgconn *pc)
{
	int			r = PQflush(pc->pg);

	if (r < 0)
		return false;
	pc->flushing = r == 1;
	if (pc->flushing)
		gw_pgconn_want_write(pc);
	return true;
}

static void
write_cb(gw_timer *t)
{
	gw_pgconn  *pc = lws_container_of(t, gw_pgconn, write_timer);

	if (pc->wsi != NULL)
		lws_callback_on_writable(pc->wsi);
}

/*
 * libwebsockets 4.1's raw file role clears POLLOUT after it returns from
 * RAW_WRITEABLE_FILE (roles/raw-file/ops-raw-file.c), so a request made
 * inside that callback is lost: libpq's second request to write after a
 * TCP connect (CONNECTION_MADE), and a PQflush that filled the socket's
 * send buffer again while a large query goes out.  Such a request is made
 * from the next turn of the loop; the socket stays writable-or-not as the
 * kernel says, so nothing is lost by the turn.
 */
void
gw_pgconn_want_write(gw_pgconn *pc)
{
	if (pc->wsi == NULL)
		return;
	if (pc->wsi == pc->in_writable)
		gw_timer_schedule(&pc->write_timer, 1);
	else
		lws_callback_on_writable(pc->wsi);
}

void
gw_pgconn_lost(gw_pgconn *pc)
{
	bool		was_up = pc->state == GW_PG_UP;

	if (pc->state == GW_PG_DOWN)
		return;
	teardown(pc);
	pc->state = GW_PG_DOWN;
	if (was_up)
		pc->ops->down(pc);
	if (pc->stopped)
		return;
	/* a retry at once */
	pc->retried_at_once = true;
	lws_sul_schedule(pc->context, 0, &pc->sul_retry, retry_cb, 1);
}

void
gw_pgconn_stop(gw_pgconn *pc)
{
	pc->stopped = true;
	lws_sul_cancel(&pc->sul_retry);
	gw_timer_cancel(&pc->lost_timer);
	teardown(pc);
	pc->state = GW_PG_DOWN;
}

static void
lost_cb(gw_timer *t)
{
	gw_pgconn  *pc = lws_container_of(t, gw_pgconn, lost_timer);

	if (pc->state == GW_PG_CONNECTING)
		attempt_failed(pc, NULL);
	else
		gw_pgconn_lost(pc);
}

static void
socket_event(gw_pgconn *pc)
{
	if (pc->state == GW_PG_CONNECTING)
		poll_connect(pc);
	else if (pc->state == GW_PG_UP)
		pc->ops->io(pc);
}

int
gw_pgconn_callback(struct lws *wsi, enum lws_callback_reasons reason,
				   void *user, void *in, size_t len)
{
	gw_pgconn  *pc = lws_get_opaque_user_data(wsi);

	(void) user;
	(void) in;
	(void) len;
	switch (reason)
	{
		case LWS_CALLBACK_RAW_RX_FILE:
			/* a socket no longer ours: closed at once (detach_socket says why) */
			if (pc == NULL || pc->wsi != wsi)
				return -1;
			socket_event(pc);
			return 0;
		case LWS_CALLBACK_RAW_WRITEABLE_FILE:
			if (pc == NULL || pc->wsi != wsi)
				return -1;
			pc->in_writable = wsi;
			socket_event(pc);
			pc->in_writable = NULL;
			return 0;
		case LWS_CALLBACK_RAW_CLOSE_FILE:
			/* hang-up: libpq learns of it on its next read; go there from a timer */
			if (pc != NULL && pc->wsi == wsi)
			{
				pc->wsi = NULL;
				pc->sock = -1;
				gw_timer_schedule(&pc->lost_timer, 1);
			}
			return 0;
		default:
			return 0;
	}
}

bool
gw_pgconn_read(gw_pgconn *pc)
{
	if (pc->flushing && !gw_pgconn_flush(pc))
		return false;
	return PQconsumeInput(pc->pg) != 0;
}

bool
gw_pgconn_ended(gw_pgconn *pc, PGresult **first)
{
	while (!PQisBusy(pc->pg))
	{
		PGresult   *res = PQgetResult(pc->pg);

		if (res == NULL)
			return true;
		if (*first == NULL)
			*first = res;
		else
			PQclear(res);
	}
	return false;
}
