/*
 * host/session.c
 *		The sessions: a shell on a PTY per session, its output ring, the
 *		current data connection and what its device has seen, and the
 *		shell's end (docs/host.md, "Sessions").
 *
 * Backpressure is ttyd's, one buffer in flight: while a device views the
 * session, the PTY is read only when everything read before has been
 * handed to the socket; while the PTY cannot take the device's input, the
 * socket is not read.  Without a viewing device the PTY is read freely
 * into the ring, so a long compile goes on while the device is away, and
 * the ring keeps its last --ring-size bytes for the reattach.
 *
 * A data connection lost without the server's word that the session ended
 * (dropped, the node stopping, 4008) is connected again with the same
 * identify after the back-off table's delay, as protocol.md asks of a
 * host: the device waits for it on its node, and after a node's death
 * the session comes back through the node the edge picks now.
 *
 * A session ends when the server closes it (session.close, or its data
 * connection closed with 1000), when its shell ended and what it wrote
 * reached a device (or nobody is there to see it), when it has had no
 * data connection for --detach-timeout, or when the service stops.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <sodium.h>

#include "host/backoff.h"
#include "host/frame.h"
#include "host/host.h"
#include "host/pty.h"
#include "host/ring.h"
#include "logline.h"

/* After the hang-up, the shell's process groups get SIGKILL this much later. */
#define KILL_GRACE_MS 2000
/*
 * After the shell exited, its PTY is read until its end (every writer of
 * it gone); a background job that keeps it open is cut off after this,
 * counted only while the PTY is readable (not while a device is behind).
 */
#define DRAIN_MS 2000
/* Input the PTY has not taken yet: two frames (the socket stops after one). */
#define PENDING_MAX (2 * HOST_FRAME_INPUT_MAX)
/* Sessions ended recently: a late session.open for one gets no new shell. */
#define ENDED_MAX 64

struct host_session
{
	bool		used;
	bothy_uuid	id;
	pid_t		pid;			/* the shell, 0 once reaped */
	pid_t		fg;				/* its foreground process group at the hang-up */
	struct lws *pty;			/* the PTY master's wsi, NULL once closed */
	int			ptyfd;			/* its descriptor while pty is not NULL */
	host_ring	ring;			/* the output, by offset */
	uint64_t	stream_id;		/* this shell's output stream (never 0) */
	bool		ending;			/* hung up: nothing more is relayed */
	host_stream *stream;		/* the current data connection, or NULL */
	bothy_uuid	grant;			/* its grant */
	bool		resumed;		/* its device sent resume: output flows */
	bool		begin_due;		/* the begin frame goes first */
	uint64_t	cursor;			/* the next offset the device gets */
	uint64_t	skipped;		/* what the begin frame says was skipped */
	uint8_t    *pending;		/* PENDING_MAX bytes: input not yet written */
	size_t		pending_len;
	lws_sorted_usec_list_t sul_kill;	/* SIGKILL after the grace */
	lws_sorted_usec_list_t sul_drain;	/* the PTY's end after the shell exited */
	lws_sorted_usec_list_t sul_detach;	/* --detach-timeout without a data connection */
	lws_sorted_usec_list_t sul_input;	/* asks for the PTY's POLLOUT, outside its callback */
	lws_sorted_usec_list_t sul_reconnect;	/* the lost data connection again */
	unsigned	reconnects;		/* attempts since its data connection last paired */
};

static host_session sessions[HOST_SESSIONS_MAX];
static bothy_uuid ended[ENDED_MAX];
static unsigned nended;

static void pump(host_session *s);
static void reconnect_later(host_session *s, int peer_code);

/* --- the table ------------------------------------------------------------ */

static host_session *
find(const bothy_uuid *id)
{
	int			i;

	for (i = 0; i < HOST_SESSIONS_MAX; i++)
		if (sessions[i].used && bothy_uuid_compare(&sessions[i].id, id) == 0)
			return &sessions[i];
	return NULL;
}

static int
count_used(void)
{
	int			i;
	int			n = 0;

	for (i = 0; i < HOST_SESSIONS_MAX; i++)
		n += sessions[i].used ? 1 : 0;
	return n;
}

static void
remember_ended(const bothy_uuid *id)
{
	ended[nended % ENDED_MAX] = *id;
	nended++;
}

static bool
was_ended(const bothy_uuid *id)
{
	unsigned	i;
	unsigned	n = nended < ENDED_MAX ? nended : ENDED_MAX;

	for (i = 0; i < n; i++)
		if (bothy_uuid_compare(&ended[i], id) == 0)
			return true;
	return false;
}

static bool
shell_done(const host_session *s)
{
	return s->pid == 0 && s->pty == NULL;
}

static void
free_session(host_session *s)
{
	lws_sul_cancel(&s->sul_kill);
	lws_sul_cancel(&s->sul_drain);
	lws_sul_cancel(&s->sul_detach);
	lws_sul_cancel(&s->sul_input);
	lws_sul_cancel(&s->sul_reconnect);
	remember_ended(&s->id);
	host_ring_free(&s->ring);
	free(s->pending);
	memset(s, 0, sizeof(*s));
	s->ptyfd = -1;
}

/* An ending session goes once its children are reaped and its stream is gone. */
static void
maybe_free(host_session *s)
{
	if (s->used && s->ending && s->pid == 0 && s->stream == NULL)
		free_session(s);
}

/* --- the PTY -------------------------------------------------------------- */

/* The PTY's wsi closes later; its callbacks no longer reach s. */
static void
close_pty(host_session *s)
{
	if (s->pty == NULL)
		return;
	lws_set_opaque_user_data(s->pty, NULL);
	lws_set_timeout(s->pty, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	s->pty = NULL;
	s->ptyfd = -1;
}

/*
 * Reads what the PTY holds into the ring: one read (the loop's pace), or
 * all it holds up to max bytes (its end); false once every writer is gone.
 */
static bool
read_pty(host_session *s, int fd, bool one, size_t max)
{
	uint8_t		buf[HOST_FRAME_OUTPUT_MAX];
	size_t		total = 0;

	while (total < max)
	{
		ssize_t		n = read(fd, buf, max - total < sizeof(buf) ? max - total : sizeof(buf));

		if (n > 0)
		{
			host_ring_append(&s->ring, buf, (size_t) n);
			total += (size_t) n;
			if (one)
				return true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		/* EIO: every writer of the slave has gone */
		return false;
	}
	return true;
}

static void
write_pending(host_session *s)
{
	while (s->pending_len > 0 && s->pty != NULL)
	{
		ssize_t		n = write(s->ptyfd, s->pending, s->pending_len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;				/* EAGAIN: the PTY's input is full; EIO: it ends anyway */
		memmove(s->pending, s->pending + n, s->pending_len - (size_t) n);
		s->pending_len -= (size_t) n;
	}
}

int
host_pty_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
				  void *in, size_t len)
{
	host_session *s = lws_get_opaque_user_data(wsi);

	(void) user;
	(void) in;
	(void) len;
	switch (reason)
	{
		case LWS_CALLBACK_RAW_RX_FILE:
			if (s == NULL)
				return -1;
			/* one chunk a callback: while a device views, the socket sets the pace */
			if (!read_pty(s, s->ptyfd, true, HOST_FRAME_OUTPUT_MAX))
			{
				/* the end: the wsi closes, RAW_CLOSE_FILE reads what is left */
				return -1;
			}
			pump(s);
			return 0;
		case LWS_CALLBACK_RAW_WRITEABLE_FILE:
			if (s == NULL)
				return 0;
			write_pending(s);
			pump(s);
			return 0;
		case LWS_CALLBACK_RAW_CLOSE_FILE:
			if (s == NULL)
				return 0;
			/*
			 * The descriptor is still open here: what the shell wrote before
			 * its end is read at once (the PTY's own buffer, 64 KiB at most
			 * on Linux), never more than the ring holds beside what a
			 * viewing device has not been sent.
			 */
			read_pty(s, s->ptyfd, false, s->stream != NULL && s->resumed ?
					 s->ring.cap - (size_t) (s->ring.end - s->cursor) : s->ring.cap);
			s->pty = NULL;
			s->ptyfd = -1;
			lws_sul_cancel(&s->sul_drain);
			pump(s);
			return 0;
		default:
			return 0;
	}
}

/* --- the end of a session --------------------------------------------------- */

static void
kill_cb(lws_sorted_usec_list_t *sul)
{
	host_session *s = lws_container_of(sul, host_session, sul_kill);

	if (s->pid > 0)
	{
		kill(-s->pid, SIGKILL);
		if (s->fg > 0)
			kill(-s->fg, SIGKILL);
	}
}

/*
 * Ends the session: its shell and foreground job get SIGHUP (SIGKILL
 * after the grace), its PTY and data connection close.
 */
static void
hang_up(host_session *s)
{
	if (s->ending)
		return;
	s->ending = true;
	if (s->pid > 0)
	{
		pid_t		fg = s->pty != NULL ? tcgetpgrp(s->ptyfd) : -1;

		kill(-s->pid, SIGHUP);
		if (fg > 0 && fg != s->pid)
		{
			s->fg = fg;
			kill(-fg, SIGHUP);
		}
		lws_sul_schedule(host.context, 0, &s->sul_kill, kill_cb,
						 (lws_usec_t) KILL_GRACE_MS * LWS_US_PER_MS);
	}
	close_pty(s);
	lws_sul_cancel(&s->sul_drain);
	lws_sul_cancel(&s->sul_detach);
	lws_sul_cancel(&s->sul_reconnect);
	if (s->stream != NULL)
	{
		host_stream_close(s->stream, HOST_CLOSE_ENDED);
		s->stream = NULL;
	}
	maybe_free(s);
}

static void
drain_cb(lws_sorted_usec_list_t *sul)
{
	host_session *s = lws_container_of(sul, host_session, sul_drain);

	/* behind a device the PTY is not read: its end is not late yet */
	if (s->stream != NULL && s->resumed && (s->begin_due || s->cursor < s->ring.end))
	{
		lws_sul_schedule(host.context, 0, &s->sul_drain, drain_cb,
						 (lws_usec_t) DRAIN_MS * LWS_US_PER_MS);
		return;
	}
	gw_log(GW_LOG_INFO, "a job kept the terminal of an ended shell open; it was cut off");
	close_pty(s);
	pump(s);
}

/*
 * lws 4.1's raw-file role clears POLLOUT after RAW_WRITEABLE_FILE returns,
 * so a wish to write again made inside that callback is lost; it is made
 * from here, on the loop's next turn.
 */
static void
input_cb(lws_sorted_usec_list_t *sul)
{
	host_session *s = lws_container_of(sul, host_session, sul_input);

	if (s->pty != NULL && s->pending_len > 0)
		lws_callback_on_writable(s->pty);
}

static void
detach_cb(lws_sorted_usec_list_t *sul)
{
	host_session *s = lws_container_of(sul, host_session, sul_detach);

	gw_log(GW_LOG_INFO, "session ended: no data connection for --detach-timeout");
	hang_up(s);
}

/*
 * The one place that decides what flows: called after every event of a
 * session.  Output is wanted on the socket while the device is behind, and
 * then the PTY waits; input waits while the PTY is full, and then the
 * socket waits.
 */
static void
pump(host_session *s)
{
	bool		viewing = s->stream != NULL && s->resumed;
	bool		behind = viewing && (s->begin_due || s->cursor < s->ring.end);

	if (!s->used || s->ending)
		return;
	if (behind)
		host_stream_want_write(s->stream);
	if (s->pty != NULL)
	{
		lws_rx_flow_control(s->pty, behind ? 0 : 1);
		if (s->pending_len > 0)
			lws_sul_schedule(host.context, 0, &s->sul_input, input_cb, 1);
	}
	if (s->stream != NULL)
		host_stream_rx(s->stream, s->pending_len == 0);

	/* the detach timer runs from the moment the session has no data connection */
	if (s->stream != NULL)
		lws_sul_cancel(&s->sul_detach);
	else if (lws_dll2_is_detached(&s->sul_detach.list))
		lws_sul_schedule(host.context, 0, &s->sul_detach, detach_cb,
						 (lws_usec_t) host.opt.detach_timeout_ms * LWS_US_PER_MS);

	if (!shell_done(s) || s->stream == NULL)
		return;
	/* the shell has ended: the device gets what it wrote, then 1000 */
	if ((viewing && !behind) || host_stream_waiting(s->stream))
	{
		host_stream_close(s->stream, HOST_CLOSE_ENDED);
		s->stream = NULL;
		s->ending = true;
		maybe_free(s);
	}
}

/* --- the control connection's ops ------------------------------------------- */

/* A data connection for a session the host has no shell for: it says 1000. */
static void
refuse(const bothy_uuid *session, const bothy_uuid *grant)
{
	host_stream_open(NULL, session, grant);
}

static host_session *
start(const bothy_uuid *id)
{
	host_session *s = NULL;
	lws_adopt_desc_t info;
	int			i;

	for (i = 0; i < HOST_SESSIONS_MAX && s == NULL; i++)
		if (!sessions[i].used)
			s = &sessions[i];
	if (s == NULL)
		return NULL;
	memset(s, 0, sizeof(*s));
	s->ptyfd = -1;
	s->pending = malloc(PENDING_MAX);
	if (s->pending == NULL || !host_ring_init(&s->ring, host.opt.ring_size))
	{
		gw_log(GW_LOG_ERROR, "out of memory for a session");
		free(s->pending);
		memset(s, 0, sizeof(*s));
		return NULL;
	}
	if (!host_pty_spawn(host.opt.shell, &s->ptyfd, &s->pid))
	{
		gw_log(GW_LOG_ERROR, "the shell could not be started");
		host_ring_free(&s->ring);
		free(s->pending);
		memset(s, 0, sizeof(*s));
		return NULL;
	}
	memset(&info, 0, sizeof(info));
	info.vh = host.vhost;
	info.type = LWS_ADOPT_RAW_FILE_DESC;
	info.fd.filefd = s->ptyfd;
	info.vh_prot_name = HOST_PROTO_PTY;
	info.opaque = s;
	s->used = true;
	s->id = *id;
	do
		randombytes_buf(&s->stream_id, sizeof(s->stream_id));
	while (s->stream_id == 0);
	/* on failure lws has closed the descriptor itself */
	s->pty = lws_adopt_descriptor_vhost_via_info(&info);
	if (s->pty == NULL)
	{
		gw_log(GW_LOG_ERROR, "the terminal could not be watched");
		s->ptyfd = -1;
		hang_up(s);
		return NULL;
	}
	gw_log(GW_LOG_INFO, "shell started");
	return s;
}

void
host_session_open(const bothy_uuid *session, const bothy_uuid *grant)
{
	host_session *s = find(session);

	if (host.stopping)
		return;
	if (s == NULL || s->ending)
	{
		if (s != NULL || was_ended(session))
		{
			gw_log(GW_LOG_INFO, "session.open for an ended session: told it ended");
			refuse(session, grant);
			return;
		}
		if (count_used() >= host.opt.max_sessions)
		{
			gw_log(GW_LOG_WARN, "session refused: --max-sessions shells run already");
			refuse(session, grant);
			return;
		}
		s = start(session);
		if (s == NULL)
		{
			remember_ended(session);
			refuse(session, grant);
			return;
		}
	}
	else if (s->stream != NULL && bothy_uuid_compare(&s->grant, grant) == 0)
	{
		/* the same grant again (a new control connection's login): keep its stream */
		if (s->pid > 0)
			host_control_started(session, grant);
		return;
	}

	if (s->stream != NULL)
	{
		/* a newer grant: the device attached again, the old connection is done */
		host_stream_close(s->stream, HOST_CLOSE_GOING);
		s->stream = NULL;
	}
	lws_sul_cancel(&s->sul_reconnect);
	s->reconnects = 0;
	s->resumed = false;
	s->grant = *grant;
	s->stream = host_stream_open(s, session, grant);
	if (s->stream == NULL)
		reconnect_later(s, 0);
	if (s->pid > 0)
		host_control_started(session, grant);
	pump(s);
}

void
host_session_close(const bothy_uuid *session)
{
	host_session *s = find(session);

	if (s == NULL)
		return;
	gw_log(GW_LOG_INFO, "session closed by the server");
	hang_up(s);
}

size_t
host_sessions_list(bothy_uuid *out, size_t max)
{
	size_t		n = 0;
	int			i;

	/* a shell that exited is not run any more, even while its output waits */
	for (i = 0; i < HOST_SESSIONS_MAX && n < max; i++)
		if (sessions[i].used && !sessions[i].ending && sessions[i].pid > 0)
			out[n++] = sessions[i].id;
	return n;
}

void
host_sessions_reap(void)
{
	pid_t		pid;
	int			status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
	{
		int			i;

		for (i = 0; i < HOST_SESSIONS_MAX; i++)
		{
			host_session *s = &sessions[i];

			if (!s->used || s->pid != pid)
				continue;
			s->pid = 0;
			lws_sul_cancel(&s->sul_kill);
			if (s->ending)
			{
				maybe_free(s);
				break;
			}
			gw_logf(GW_LOG_INFO, "shell exited", "status=%d",
					WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
			if (s->pty != NULL)
				lws_sul_schedule(host.context, 0, &s->sul_drain, drain_cb,
								 (lws_usec_t) DRAIN_MS * LWS_US_PER_MS);
			pump(s);
			break;
		}
	}
}

void
host_sessions_stop(void)
{
	int			i;

	for (i = 0; i < HOST_SESSIONS_MAX; i++)
		if (sessions[i].used)
			hang_up(&sessions[i]);
}

bool
host_sessions_gone(void)
{
	return count_used() == 0;
}

/* --- the data connection's events ---------------------------------------- */

void
host_session_waiting(host_session *s, host_stream *st)
{
	if (s->stream != st)
		return;
	/* no device (now): the PTY is read freely again */
	s->resumed = false;
	pump(s);
}

void
host_session_paired(host_session *s, host_stream *st)
{
	if (s->stream != st)
		return;
	/* a device: nothing flows until it says where it is */
	s->resumed = false;
	s->reconnects = 0;
	pump(s);
}

static void
resume(host_session *s, uint64_t stream_id, uint64_t offset)
{
	uint64_t	from;
	uint64_t	skipped;

	/* another shell's offset (or none): this stream from what the ring holds */
	if (stream_id != s->stream_id || !host_ring_seek(&s->ring, offset, &from, &skipped))
	{
		from = s->ring.start;
		skipped = s->ring.start;
	}
	if (skipped > 0)
		gw_logf(GW_LOG_INFO, "reattach missed output the ring no longer holds",
				"skipped_bytes=%llu", (unsigned long long) skipped);
	s->resumed = true;
	s->begin_due = true;
	s->cursor = from;
	s->skipped = skipped;
}

bool
host_session_frame(host_session *s, host_stream *st, const uint8_t *buf, size_t len)
{
	host_frame	f;

	if (s->stream != st || !host_frame_decode_device(buf, len, &f))
		return false;
	if (f.type == HOST_FRAME_RESUME)
	{
		if (s->resumed)
			return false;		/* once per pairing */
		resume(s, f.stream, f.offset);
		pump(s);
		return true;
	}
	if (!s->resumed)
		return false;			/* resume comes first */
	if (s->pty == NULL || s->pid == 0)
		return true;			/* the shell has ended: input and sizes go nowhere */
	if (f.type == HOST_FRAME_RESIZE)
	{
		struct winsize ws = {.ws_row = f.rows, .ws_col = f.cols};

		ioctl(s->ptyfd, TIOCSWINSZ, &ws);
		return true;
	}
	/* input: the socket stops being read while any of it waits */
	if (s->pending_len + f.len > PENDING_MAX)
		return false;
	memcpy(s->pending + s->pending_len, f.data, f.len);
	s->pending_len += f.len;
	write_pending(s);
	pump(s);
	return true;
}

size_t
host_session_next_frame(host_session *s, host_stream *st, uint8_t *out, size_t cap)
{
	size_t		n;

	if (s->stream != st || !s->resumed || s->ending || cap < HOST_FRAME_MAX)
		return 0;
	if (s->begin_due)
	{
		n = host_frame_put_begin(out, s->stream_id, s->cursor, s->skipped);
		s->begin_due = false;
		/* may end the session (a shell that ended with nothing more to say) */
		pump(s);
		return n;
	}
	if (s->cursor < s->ring.start)
	{
		/* cannot happen while the PTY waits for the socket; never send a gap */
		gw_log(GW_LOG_ERROR, "output overtook a device; its connection is closed");
		host_stream_close(st, 1011);
		s->stream = NULL;
		s->resumed = false;
		pump(s);
		return 0;
	}
	n = host_ring_read(&s->ring, s->cursor, out + 9, HOST_FRAME_OUTPUT_MAX);
	if (n == 0)
		return 0;
	host_frame_put_output(out, s->cursor);
	s->cursor += n;
	/* the chunk is the socket's now (written right after): what flows next */
	pump(s);
	return 9 + n;
}

static void
reconnect_cb(lws_sorted_usec_list_t *sul)
{
	host_session *s = lws_container_of(sul, host_session, sul_reconnect);

	if (!s->used || s->ending || s->stream != NULL || host.stopping)
		return;
	s->resumed = false;
	s->stream = host_stream_open(s, &s->id, &s->grant);
	if (s->stream == NULL)
		reconnect_later(s, 0);
	pump(s);
}

/* The same grant's data connection again, after the back-off table's delay. */
static void
reconnect_later(host_session *s, int peer_code)
{
	uint32_t	random;
	uint32_t	delay;

	randombytes_buf(&random, sizeof(random));
	delay = host_backoff_delay_ms(s->reconnects, random);
	if (s->reconnects < 1000)
		s->reconnects++;
	gw_logf(GW_LOG_WARN, "data connection lost", "code=%d retry_ms=%u", peer_code, delay);
	lws_sul_schedule(host.context, 0, &s->sul_reconnect, reconnect_cb,
					 (lws_usec_t) delay * LWS_US_PER_MS);
}

/*
 * The server's close codes after which the same identify cannot succeed
 * or must not be tried (protocol.md, "Close codes of a stream"): refused
 * (the grant is no longer current, or the key), malformed and too big (a
 * bug, which a retry repeats), a lone side (nothing to relay for this
 * grant).  1000 ends the session.
 */
static bool
reconnects_after(int peer_code)
{
	return peer_code != HOST_CLOSE_ENDED && peer_code != 4001 && peer_code != 4002 &&
		peer_code != 1009 && peer_code != 4102;
}

void
host_session_stream_gone(host_session *s, host_stream *st, int ours_code, int peer_code)
{
	if (s->stream != st)
		return;
	s->stream = NULL;
	s->resumed = false;
	if (ours_code == 0 && peer_code == HOST_CLOSE_ENDED)
	{
		/* the server ended the session: 1000 on its data connection */
		gw_log(GW_LOG_INFO, "session ended by the server");
		hang_up(s);
		return;
	}
	if (ours_code == 0 && reconnects_after(peer_code) && !s->ending && !host.stopping)
		reconnect_later(s, peer_code);
	else if (ours_code == 0 && !s->ending && !host.stopping)
		gw_logf(GW_LOG_INFO, "data connection ended by the server, not connected again",
				"code=%d", peer_code);
	pump(s);
}
