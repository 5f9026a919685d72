/*
 * terminal/model.c
 *		The terminal's closed sets of words (see model.h).
 */
#include "terminal/model.h"

#include <string.h>

static const char *const state_names[] = {
	[GW_TSTATE_OPENING] = "opening",
	[GW_TSTATE_ACTIVE] = "active",
	[GW_TSTATE_DETACHED] = "detached",
	[GW_TSTATE_CLOSED] = "closed",
};

static const char *const transition_names[] = {
	[GW_TLOG_SESSION_OPENED] = "session_opened",
	[GW_TLOG_SESSION_ATTACHED] = "session_attached",
	[GW_TLOG_SESSION_STARTED] = "session_started",
	[GW_TLOG_SESSION_DETACHED] = "session_detached",
	[GW_TLOG_SESSION_ACTIVATED] = "session_activated",
	[GW_TLOG_SESSION_CLOSED] = "session_closed",
	[GW_TLOG_HOST_PAIRED] = "host_paired",
	[GW_TLOG_HOST_CONFIRMED] = "host_confirmed",
	[GW_TLOG_HOST_RESET] = "host_reset",
	[GW_TLOG_HOST_DISABLED] = "host_disabled",
};

static const char *const close_names[] = {
	[GW_TCLOSE_BY_DEVICE] = "closed_by_device",
	[GW_TCLOSE_BY_HOST] = "closed_by_host",
	[GW_TCLOSE_OPEN_TIMEOUT] = "open_timeout",
	[GW_TCLOSE_RECHECK_FAILED] = "recheck_failed",
	[GW_TCLOSE_HOST_GONE] = "host_gone",
	[GW_TCLOSE_IDLE] = "idle",
	[GW_TCLOSE_HOST_DISABLED] = "host_disabled",
	[GW_TCLOSE_HOST_PAIRING] = "host_pairing",
};

#define N_NAMES(a) ((int) (sizeof(a) / sizeof((a)[0])))

static const char *
name_at(const char *const *names, int n, int value)
{
	return value >= 1 && value < n ? names[value] : NULL;
}

/* The index of name[0..len) in names[1..n), or 0. */
static int
index_of(const char *const *names, int n, const char *name, size_t len)
{
	if (name == NULL)
		return 0;
	for (int i = 1; i < n; i++)
		if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
			return i;
	return 0;
}

const char *
gw_tstate_name(gw_tstate s)
{
	return name_at(state_names, N_NAMES(state_names), (int) s);
}

const char *
gw_ttransition_name(gw_ttransition t)
{
	return name_at(transition_names, N_NAMES(transition_names), (int) t);
}

const char *
gw_tclose_name(gw_tclose c)
{
	return name_at(close_names, N_NAMES(close_names), (int) c);
}

bool
gw_tstate_parse(const char *name, size_t len, gw_tstate *out)
{
	int			i = index_of(state_names, N_NAMES(state_names), name, len);

	if (i != 0)
		*out = (gw_tstate) i;
	return i != 0;
}

bool
gw_ttransition_parse(const char *name, size_t len, gw_ttransition *out)
{
	int			i = index_of(transition_names, N_NAMES(transition_names), name, len);

	if (i != 0)
		*out = (gw_ttransition) i;
	return i != 0;
}

bool
gw_tclose_parse(const char *name, size_t len, gw_tclose *out)
{
	int			i = index_of(close_names, N_NAMES(close_names), name, len);

	if (i != 0)
		*out = (gw_tclose) i;
	return i != 0;
}

bool
gw_ttransition_is_host(gw_ttransition t)
{
	return t >= GW_TLOG_HOST_PAIRED && t <= GW_TLOG_HOST_DISABLED;
}
