/*
 * terminal/model.c
 *		The terminal's closed sets of words, and one terminal log row
 *		parsed from them (see model.h).
 */
#include "terminal/model.h"

#include <string.h>

/* The largest log number (the codec's integers, the table's CHECK). */
#define TLOG_SEQ_MAX INT64_C(9007199254740991)

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

static const char *const host_names[] = {
	[GW_THOST_PAIRING] = "pairing",
	[GW_THOST_CONFIRMING] = "confirming",
	[GW_THOST_ACTIVE] = "active",
	[GW_THOST_DISABLED] = "disabled",
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

const char *
gw_thost_name(gw_thost h)
{
	return name_at(host_names, N_NAMES(host_names), (int) h);
}

bool
gw_thost_parse(const char *name, size_t len, gw_thost *out)
{
	int			i = index_of(host_names, N_NAMES(host_names), name, len);

	if (i != 0)
		*out = (gw_thost) i;
	return i != 0;
}

bool
gw_tlog_seq_parse(const char *text, int64_t *out)
{
	int64_t		v = 0;
	size_t		i;

	if (text == NULL || text[0] == '\0' || text[0] == '0' || strlen(text) > 16)
		return false;
	for (i = 0; text[i] != '\0'; i++)
	{
		if (text[i] < '0' || text[i] > '9')
			return false;
		v = v * 10 + (text[i] - '0');
	}
	if (v > TLOG_SEQ_MAX)
		return false;
	*out = v;
	return true;
}

/* A UUID column: NULL allowed only where may_be_null. */
static bool
uuid_col(const char *text, bool may_be_null, bool *present, bothy_uuid *out)
{
	*present = text != NULL;
	if (text == NULL)
		return may_be_null;
	return bothy_uuid_parse(text, strlen(text), out);
}

bool
gw_tlog_row_parse(const char *const cols[GW_TLOG_NCOLS], gw_tlog_row *out)
{
	const char *state = cols[GW_TLOG_COL_STATE];
	const char *detail = cols[GW_TLOG_COL_CLOSE_DETAIL];
	const char *transition = cols[GW_TLOG_COL_TRANSITION];
	bool		host_present;

	memset(out, 0, sizeof(*out));
	if (!gw_tlog_seq_parse(cols[GW_TLOG_COL_SEQ], &out->seq) ||
		!uuid_col(cols[GW_TLOG_COL_HOST], false, &host_present, &out->host) ||
		transition == NULL ||
		!gw_ttransition_parse(transition, strlen(transition), &out->transition) ||
		state == NULL ||
		!uuid_col(cols[GW_TLOG_COL_SESSION], true, &out->has_session, &out->session) ||
		!uuid_col(cols[GW_TLOG_COL_GRANT], true, &out->has_grant, &out->grant))
		return false;
	if (gw_ttransition_is_host(out->transition))
	{
		gw_thost	h;

		/* a host's row: its state, and nothing of a session */
		if (out->has_session || out->has_grant || detail != NULL ||
			!gw_thost_parse(state, strlen(state), &h))
			return false;
		strcpy(out->host_state, gw_thost_name(h));
		return true;
	}
	if (!out->has_session || !gw_tstate_parse(state, strlen(state), &out->state))
		return false;
	/* closed, session_closed and a close detail go together */
	if ((out->state == GW_TSTATE_CLOSED) != (out->transition == GW_TLOG_SESSION_CLOSED) ||
		(out->state == GW_TSTATE_CLOSED) != (detail != NULL))
		return false;
	return detail == NULL ||
		(gw_tclose_parse(detail, strlen(detail), &out->close_detail) &&
		 out->close_detail != GW_TCLOSE_NONE);
}
