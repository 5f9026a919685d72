/*
 * host/main.c
 *		bothy-host: the reference host service of the terminal relay
 *		(docs/host.md, man bothy-host).  `pair` creates the host's key and
 *		presents it with the owner's pairing code; `run` holds the control
 *		connection and runs a shell on a PTY for each session.
 *
 * One thread, one libwebsockets loop.  Signal handlers only set a flag
 * and wake the loop (lws_cancel_service, as the gateway and ttyd do); the
 * loop reaps children and begins the stop.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "host/frame.h"
#include "host/host.h"
#include "host/msg.h"
#include "logline.h"

/* The stop: sessions hung up, connections closed, children reaped by then. */
#define STOP_TIMEOUT_MS 5000
/* pair: the server's ready by then. */
#define PAIR_TIMEOUT_MS 30000

host_proc	host;

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t child_exited;
static lws_sorted_usec_list_t sul_deadline;

static const struct lws_protocols protocols[] = {
	/* rx_buffer_size: lws hands a message over in pieces of at most this */
	{HOST_PROTO_CONTROL, host_control_callback, 0, HOST_MSG_MAX, 0, NULL, 0},
	{HOST_PROTO_STREAM, host_stream_callback, 0, HOST_FRAME_MAX, 0, NULL, 0},
	{HOST_PROTO_PTY, host_pty_callback, 0, 0, 0, NULL, 0},
	{NULL, NULL, 0, 0, 0, NULL, 0}
};

int64_t
host_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct lws *
host_connect(const char *path, const char *protocol, const char *subprotocol, void *opaque)
{
	struct lws_client_connect_info i;
	char		host_header[300];

	/* the port too: an edge on another port routes by the whole Host */
	snprintf(host_header, sizeof(host_header), "%s:%d", host.opt.server_host,
			 host.opt.server_port);
	memset(&i, 0, sizeof(i));
	i.context = host.context;
	i.vhost = host.vhost;
	i.address = host.opt.server_host;
	i.port = host.opt.server_port;
	i.path = path;
	i.host = host_header;
	i.ssl_connection = host.opt.tls ? LCCSCF_USE_SSL : 0;
	i.local_protocol_name = protocol;
	i.protocol = subprotocol;
	i.opaque_user_data = opaque;
	return lws_client_connect_via_info(&i);
}

static void
on_signal(int sig)
{
	if (sig == SIGCHLD)
		child_exited = 1;
	else
		stop_requested = 1;
	if (host.context != NULL)
		lws_cancel_service(host.context);
}

static void
deadline_cb(lws_sorted_usec_list_t *sul)
{
	(void) sul;
	if (host.stopping)
	{
		gw_log(GW_LOG_ERROR, "the stop did not finish in time");
		if (host.exit_code == HOST_EXIT_OK)
			host.exit_code = HOST_EXIT_FAILED;
	}
	else
	{
		fprintf(stderr, "bothy-host pair: no answer from the server in time\n");
		gw_log(GW_LOG_ERROR, "pairing failed: no answer in time");
		host.exit_code = HOST_EXIT_FAILED;
	}
	host.exit_loop = true;
}

void
host_stop(int exit_code)
{
	if (host.stopping)
		return;
	host.stopping = true;
	host.exit_code = exit_code;
	gw_logf(GW_LOG_INFO, "stopping", "status=%d", exit_code);
	host_sessions_stop();
	host_control_stop();
	lws_sul_schedule(host.context, 0, &sul_deadline, deadline_cb,
					 (lws_usec_t) STOP_TIMEOUT_MS * LWS_US_PER_MS);
}

static bool
stopped(void)
{
	return host.stopping && host_sessions_gone() && host_streams_alive() == 0 &&
		host_control_gone();
}

static void
install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static bool
create_context(void)
{
	struct lws_context_creation_info info;

	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	info.gid = -1;
	info.uid = -1;
	/* the server's text frames must be UTF-8: lws refuses others (1007) */
	info.options = LWS_SERVER_OPTION_VALIDATE_UTF8;
	if (host.opt.tls)
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
	/* TCP, TLS and the upgrade of one connection by then */
	info.timeout_secs = 10;
	host.context = lws_create_context(&info);
	if (host.context == NULL)
		return false;
	host.vhost = lws_get_vhost_by_name(host.context, "default");
	return host.vhost != NULL;
}

static void
loop(void)
{
	while (!host.exit_loop)
	{
		if (child_exited)
		{
			child_exited = 0;
			host_sessions_reap();
		}
		/* an interrupted pair has paired nothing: its key file goes */
		if (stop_requested && !host.stopping)
			host_stop(host.opt.command == HOST_CMD_PAIR ? HOST_EXIT_FAILED : HOST_EXIT_OK);
		if (stopped())
			break;
		if (lws_service(host.context, 0) < 0)
			break;
	}
}

int
main(int argc, char **argv)
{
	char		err[256];
	host_key_file keyfile = {.fd = -1};
	int			r;

	if (argc == 2 && strcmp(argv[1], "--help") == 0)
	{
		fputs(host_usage, stdout);
		return HOST_EXIT_OK;
	}
	if (argc == 2 && strcmp(argv[1], "--version") == 0)
	{
		/* as bothy-gateway --version: the name, a space, the version */
		printf("bothy-host %s\n", BOTHY_HOST_VERSION);
		return HOST_EXIT_OK;
	}
	r = host_options_parse(&host.opt, argc, argv, err, sizeof(err), stdout);
	if (r == 1)
		return HOST_EXIT_OK;
	if (r < 0)
	{
		fprintf(stderr, "bothy-host: %s\n%s", err, host_usage);
		return HOST_EXIT_USAGE;
	}
	/* whoever opens a session gets this user's shell: never root by accident */
	if (geteuid() == 0 && !host.opt.allow_root)
	{
		fprintf(stderr, "bothy-host: refusing to run as root: every session would be a "
				"root shell; run it as an unprivileged user, or give --allow-root\n");
		return HOST_EXIT_FAILED;
	}
	gw_log_set_level(host.opt.log_level);
	gw_log_hook_lws();
	if (sodium_init() < 0)
	{
		fprintf(stderr, "bothy-host: libsodium could not start\n");
		return HOST_EXIT_FAILED;
	}

	if (host.opt.command == HOST_CMD_PAIR)
	{
		if (!host_key_generate(&host.key, &host.opt.host) ||
			!host_key_create_file(host.opt.key_path, &host.key, &keyfile, err, sizeof(err)))
		{
			fprintf(stderr, "bothy-host pair: %s\n", err);
			host_key_wipe(&host.key);
			return HOST_EXIT_FAILED;
		}
	}
	else if (!host_key_load(host.opt.key_path, &host.key, err, sizeof(err)))
	{
		fprintf(stderr, "bothy-host run: key file refused: %s\n", err);
		return HOST_EXIT_FAILED;
	}

	install_signals();
	if (!create_context())
	{
		fprintf(stderr, "bothy-host: libwebsockets could not start\n");
		host_key_file_remove(host.opt.key_path, &keyfile);
		host_key_wipe(&host.key);
		return HOST_EXIT_FAILED;
	}
	if (host.opt.command == HOST_CMD_PAIR)
		lws_sul_schedule(host.context, 0, &sul_deadline, deadline_cb,
						 (lws_usec_t) PAIR_TIMEOUT_MS * LWS_US_PER_MS);
	else
		gw_logf(GW_LOG_INFO, "starting", "ring_size=%zu max_sessions=%d detach_timeout_ms=%d tls=%s",
				host.opt.ring_size, host.opt.max_sessions, host.opt.detach_timeout_ms,
				host.opt.tls ? "yes" : "no");
	host_control_start();
	loop();

	lws_sul_cancel(&sul_deadline);
	lws_context_destroy(host.context);
	host.context = NULL;
	if (host.opt.command == HOST_CMD_PAIR)
	{
		if (host.exit_code == HOST_EXIT_OK)
			host_key_file_keep(&keyfile);
		else
			host_key_file_remove(host.opt.key_path, &keyfile);
	}
	host_key_wipe(&host.key);
	gw_logf(GW_LOG_INFO, "exit", "status=%d", host.exit_code);
	return host.exit_code;
}
