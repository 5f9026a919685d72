/*
 * host/options.h
 *		The command line of bothy-host (docs/host.md, "Commands"): the
 *		command word, then options written in full, each number parsed
 *		strictly within its range.  Usage errors name the option and its
 *		range, never a value the operator gave.
 */
#ifndef BOTHY_HOST_OPTIONS_H
#define BOTHY_HOST_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "logline.h"
#include "uuid.h"

typedef enum host_command
{
	HOST_CMD_PAIR,
	HOST_CMD_RUN
} host_command;

/* --max-sessions */
#define HOST_SESSIONS_DEFAULT 16
#define HOST_SESSIONS_MAX 32
/* --detach-timeout: milliseconds */
#define HOST_DETACH_DEFAULT_MS 1830000
#define HOST_DETACH_MIN_MS 60000
#define HOST_DETACH_MAX_MS 87000000

/* The pairing code: 16 characters of the lower-case Crockford alphabet. */
#define HOST_CODE_LEN 16

typedef struct host_options
{
	host_command command;
	char		server_host[256];	/* the edge's host name or address */
	int			server_port;	/* 1 .. 65535 */
	bool		tls;			/* https:// (wss), else http:// (ws) */
	const char *key_path;		/* --key */
	bothy_uuid	host;			/* pair: --host */
	char		code[HOST_CODE_LEN + 1];	/* pair: --code */
	char		shell[PATH_MAX];	/* run: an absolute path */
	size_t		ring_size;		/* run: bytes of output kept per session */
	int			max_sessions;	/* run: shells at once */
	int			detach_timeout_ms;	/* run: a session without a data connection */
	gw_log_level log_level;
	bool		allow_root;
} host_options;

/*
 * Parses argv (argv[1] the command word).  Returns 0 to go on, 1 after
 * --help printed the usage to out, -1 with a one-line reason in err.
 */
int			host_options_parse(host_options *o, int argc, char **argv, char *err,
							   size_t errlen, FILE *out);

/* "http://HOST[:PORT][/]" or "https://..."; false for anything else. */
bool		host_parse_url(const char *url, char *host, size_t hostlen, int *port, bool *tls);

extern const char host_usage[];

#endif							/* BOTHY_HOST_OPTIONS_H */
