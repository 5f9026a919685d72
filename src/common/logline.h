/*
 * logline.h
 *		One record a line on stderr: ts=... level=... msg="..." and, where a
 *		record needs them, fixed key=value details (codes and counts).  The
 *		log of both daemons, bothy-gateway and bothy-host (docs/gateway.md
 *		and docs/host.md list their records).
 *
 * Messages are constant English text so that an operator can grep for
 * them and so that no ID, token or address can reach a log line
 * (D-M2-47-11): the details are formatted only from codes and numbers.
 *
 * The names keep the gateway's gw_ prefix, not src/common's bothy_: the
 * docs tests of both daemons find every record by its call, gw_log or
 * gw_logf with a GW_LOG_ level.  logline.c routes libwebsockets' lines, so
 * the top Makefile keeps it out of the extension (COMMON_DAEMON_SRCS).
 */
#ifndef BOTHY_LOGLINE_H
#define BOTHY_LOGLINE_H

typedef enum gw_log_level
{
	GW_LOG_DEBUG = 0,
	GW_LOG_INFO,
	GW_LOG_WARN,
	GW_LOG_ERROR
} gw_log_level;

/* Records below this level are not written (default info). */
void		gw_log_set_level(gw_log_level level);

/* One record with a constant message. */
void		gw_log(gw_log_level level, const char *msg);

/*
 * One record with details: fmt formats "key=value" pairs from codes and
 * numbers only, never from client or database text.
 */
void		gw_logf(gw_log_level level, const char *msg, const char *fmt, ...)
			__attribute__((format(printf, 3, 4)));

/* Route libwebsockets' own log lines here (errors only, text dropped). */
void		gw_log_hook_lws(void);

#endif							/* BOTHY_LOGLINE_H */
