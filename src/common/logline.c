/*
 * logline.c
 *		The one-record-a-line logger (see logline.h).
 *
 * Each record is formatted into one buffer and written with one write(2),
 * so records from this process never interleave mid-line, and stderr
 * stays unbuffered for a supervisor that reads it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "logline.h"

static gw_log_level min_level = GW_LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void
gw_log_set_level(gw_log_level level)
{
	min_level = level;
}

static void
emit(gw_log_level level, const char *msg, const char *fmt, va_list *ap)
{
	char		line[1024];
	struct timespec ts;
	struct tm	tm;
	int			n;
	size_t		len;

	if (level < min_level)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line),
				 "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s msg=\"%s\"",
				 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
				 tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000L,
				 level_names[level], msg);
	if (n < 0)
		return;
	len = (size_t) n < sizeof(line) - 2 ? (size_t) n : sizeof(line) - 2;
	if (fmt != NULL && ap != NULL && len < sizeof(line) - 3)
	{
		line[len++] = ' ';
		n = vsnprintf(line + len, sizeof(line) - 1 - len, fmt, *ap);
		if (n > 0)
			len += (size_t) n < sizeof(line) - 1 - len ? (size_t) n : sizeof(line) - 2 - len;
	}
	line[len++] = '\n';
	/* A failed write to stderr has nowhere to be reported. */
	if (write(STDERR_FILENO, line, len) < 0)
		return;
}

void
gw_log(gw_log_level level, const char *msg)
{
	emit(level, msg, NULL, NULL);
}

void
gw_logf(gw_log_level level, const char *msg, const char *fmt, ...)
{
	va_list		ap;

	va_start(ap, fmt);
	emit(level, msg, fmt, &ap);
	va_end(ap);
}

/*
 * libwebsockets' lines can carry a peer address or a path, so only the
 * fact of an error is kept, as a constant message.
 */
static void
lws_emit(int level, const char *line)
{
	(void) line;
	if (level & LLL_ERR)
		gw_log(GW_LOG_ERROR, "libwebsockets reported an error");
}

void
gw_log_hook_lws(void)
{
	lws_set_log_level(LLL_ERR, lws_emit);
}
