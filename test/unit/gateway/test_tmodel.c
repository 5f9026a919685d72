/*
 * test_tmodel.c
 *		Unit tests of src/gateway/terminal/model.c: every word of the
 *		terminal's closed sets round-trips, as the database writes it
 *		(the CHECK constraints of src/sql/70_terminal_tables.sql), and
 *		anything else is refused: another case, a prefix, trailing bytes,
 *		an empty or NULL name; and a terminal log row parsed from its
 *		columns as bothy.terminal_log_after returns them, strictly.
 */
#include <string.h>

#include "terminal/model.h"
#include "unit.h"

static const char *const states[] = {"opening", "active", "detached", "closed"};
static const char *const transitions[] = {
	"session_opened", "session_attached", "session_started", "session_detached",
	"session_activated", "session_closed", "host_paired", "host_confirmed", "host_reset",
	"host_disabled"};
static const char *const closes[] = {
	"closed_by_device", "closed_by_host", "open_timeout", "recheck_failed", "host_gone",
	"idle", "host_disabled", "host_pairing"};

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

static void
test_round_trips(void)
{
	bool		pass = true;
	size_t		i;

	for (i = 0; i < N_ELEMS(states); i++)
	{
		gw_tstate	s;

		pass = unit_case(gw_tstate_parse(states[i], strlen(states[i]), &s) &&
						 strcmp(gw_tstate_name(s), states[i]) == 0, states[i]) && pass;
	}
	UNIT_OK(pass, "every state parses and names itself back");
	pass = true;
	for (i = 0; i < N_ELEMS(transitions); i++)
	{
		gw_ttransition t;

		pass = unit_case(gw_ttransition_parse(transitions[i], strlen(transitions[i]), &t) &&
						 strcmp(gw_ttransition_name(t), transitions[i]) == 0 &&
						 gw_ttransition_is_host(t) == (strncmp(transitions[i], "host_", 5) == 0),
						 transitions[i]) && pass;
	}
	UNIT_OK(pass, "every transition parses, names itself back, and is a host's when named host_");
	pass = true;
	for (i = 0; i < N_ELEMS(closes); i++)
	{
		gw_tclose	c;

		pass = unit_case(gw_tclose_parse(closes[i], strlen(closes[i]), &c) && c != GW_TCLOSE_NONE &&
						 strcmp(gw_tclose_name(c), closes[i]) == 0, closes[i]) && pass;
	}
	UNIT_OK(pass, "every close detail parses and names itself back");
}

static void
test_refusals(void)
{
	gw_tstate	s = GW_TSTATE_ACTIVE;
	gw_ttransition t = GW_TLOG_SESSION_OPENED;
	gw_tclose	c = GW_TCLOSE_IDLE;

	UNIT_OK(!gw_tstate_parse("Opening", 7, &s) && !gw_tstate_parse("open", 4, &s) &&
			!gw_tstate_parse("opening ", 8, &s) && !gw_tstate_parse("", 0, &s) &&
			!gw_tstate_parse(NULL, 0, &s) && s == GW_TSTATE_ACTIVE &&
			gw_tstate_parse("openingx", 7, &s) && s == GW_TSTATE_OPENING,
			"state: another case, a prefix, a trailing byte, empty and NULL refused; a length is honoured");
	s = GW_TSTATE_ACTIVE;
	UNIT_OK(!gw_tstate_parse("pairing", 7, &s) && s == GW_TSTATE_ACTIVE,
			"state: a host's state is not a session's, and a refusal leaves the output alone");
	UNIT_OK(!gw_ttransition_parse("session_open", 12, &t) && !gw_ttransition_parse("host", 4, &t) &&
			!gw_ttransition_parse("SESSION_CLOSED", 14, &t) && t == GW_TLOG_SESSION_OPENED,
			"transition: a prefix and another case refused, the output untouched");
	UNIT_OK(!gw_tclose_parse("closed", 6, &c) && !gw_tclose_parse("idle\n", 5, &c) &&
			c == GW_TCLOSE_IDLE, "close detail: a state and a trailing newline refused");
	UNIT_OK(gw_tstate_name((gw_tstate) 0) == NULL && gw_tstate_name((gw_tstate) 5) == NULL &&
			gw_ttransition_name((gw_ttransition) 11) == NULL && gw_tclose_name(GW_TCLOSE_NONE) == NULL &&
			gw_tclose_name((gw_tclose) 9) == NULL, "no name outside the sets");
}

#define HOST "01890000-0000-7000-8000-000000000001"
#define SESSION "01890000-0000-7000-8000-000000000002"
#define GRANT "01890000-0000-7000-8000-000000000003"

/* A row's columns: seq, host, session, transition, state, grant, close detail. */
static bool
parses(const char *seq, const char *host, const char *session, const char *transition,
	   const char *state, const char *grant, const char *detail, gw_tlog_row *row)
{
	const char *cols[GW_TLOG_NCOLS] = {seq, host, session, transition, state, grant, detail};

	return gw_tlog_row_parse(cols, row);
}

static void
test_rows(void)
{
	gw_tlog_row r;
	bothy_uuid	u;
	gw_thost	h = GW_THOST_ACTIVE;
	int64_t		seq = 0;

	UNIT_OK(parses("7", HOST, SESSION, "session_opened", "opening", GRANT, NULL, &r) &&
			r.seq == 7 && r.has_session && r.has_grant && r.transition == GW_TLOG_SESSION_OPENED &&
			r.state == GW_TSTATE_OPENING && r.close_detail == GW_TCLOSE_NONE &&
			bothy_uuid_parse(SESSION, 36, &u) && bothy_uuid_compare(&u, &r.session) == 0 &&
			bothy_uuid_parse(GRANT, 36, &u) && bothy_uuid_compare(&u, &r.grant) == 0,
			"a session's row: seq, session, grant, transition and state");
	UNIT_OK(parses("9007199254740991", HOST, SESSION, "session_closed", "closed", GRANT, "idle", &r) &&
			r.seq == INT64_C(9007199254740991) && r.state == GW_TSTATE_CLOSED &&
			r.close_detail == GW_TCLOSE_IDLE, "a closed session's row with its close detail, at the largest seq");
	UNIT_OK(parses("3", HOST, NULL, "host_confirmed", "active", NULL, NULL, &r) && !r.has_session &&
			!r.has_grant && strcmp(r.host_state, "active") == 0 &&
			bothy_uuid_parse(HOST, 36, &u) && bothy_uuid_compare(&u, &r.host) == 0,
			"a host's row: no session, its host state");
	UNIT_OK(parses("4", HOST, SESSION, "session_detached", "detached", NULL, NULL, &r) && !r.has_grant,
			"a session's row without a grant");
	UNIT_OK(!parses("0", HOST, SESSION, "session_opened", "opening", GRANT, NULL, &r) &&
			!parses("9007199254740992", HOST, SESSION, "session_opened", "opening", GRANT, NULL, &r) &&
			!parses("07", HOST, SESSION, "session_opened", "opening", GRANT, NULL, &r) &&
			!parses("-1", HOST, SESSION, "session_opened", "opening", GRANT, NULL, &r) &&
			!parses("1 ", HOST, SESSION, "session_opened", "opening", GRANT, NULL, &r) &&
			!parses(NULL, HOST, SESSION, "session_opened", "opening", GRANT, NULL, &r),
			"seq: 0, past 2^53 - 1, a leading zero, a sign, a blank and NULL refused");
	UNIT_OK(!parses("1", NULL, SESSION, "session_opened", "opening", GRANT, NULL, &r) &&
			!parses("1", "01890000-0000-7000-8000-00000000000A", SESSION, "session_opened", "opening",
					GRANT, NULL, &r) &&
			!parses("1", HOST, "x", "session_opened", "opening", GRANT, NULL, &r) &&
			!parses("1", HOST, SESSION, "session_opened", "opening", "", NULL, &r),
			"a missing host, an upper-case UUID and non-UUIDs refused");
	UNIT_OK(!parses("1", HOST, NULL, "session_opened", "opening", GRANT, NULL, &r) &&
			!parses("1", HOST, SESSION, "host_reset", "pairing", NULL, NULL, &r) &&
			!parses("1", HOST, NULL, "host_reset", "pairing", GRANT, NULL, &r) &&
			!parses("1", HOST, NULL, "host_reset", "pairing", NULL, "host_pairing", &r) &&
			!parses("1", HOST, NULL, "host_reset", "opening", NULL, NULL, &r) &&
			!parses("1", HOST, SESSION, "session_opened", "pairing", GRANT, NULL, &r),
			"a session's row without a session, a host's row with one, a grant or a detail, and states swapped");
	UNIT_OK(!parses("1", HOST, SESSION, "session_closed", "closed", GRANT, NULL, &r) &&
			!parses("1", HOST, SESSION, "session_closed", "active", GRANT, "idle", &r) &&
			!parses("1", HOST, SESSION, "session_detached", "closed", GRANT, "idle", &r) &&
			!parses("1", HOST, SESSION, "session_detached", "detached", GRANT, "idle", &r) &&
			!parses("1", HOST, SESSION, "session_closed", "closed", GRANT, "closed", &r) &&
			!parses("1", HOST, SESSION, "session_opened", NULL, GRANT, NULL, &r) &&
			!parses("1", HOST, SESSION, NULL, "opening", GRANT, NULL, &r) &&
			!parses("1", HOST, SESSION, "session_reopened", "opening", GRANT, NULL, &r),
			"closed without a detail or transition, a detail without closed, a bad detail, NULL or unknown words");
	UNIT_OK(gw_thost_parse("confirming", 10, &h) && h == GW_THOST_CONFIRMING &&
			strcmp(gw_thost_name(GW_THOST_DISABLED), "disabled") == 0 &&
			!gw_thost_parse("opening", 7, &h) && h == GW_THOST_CONFIRMING &&
			gw_thost_name((gw_thost) 0) == NULL && gw_thost_name((gw_thost) 5) == NULL,
			"host states parse and name themselves; a session's state is not a host's");
	UNIT_OK(gw_tlog_seq_parse("42", &seq) && seq == 42 && !gw_tlog_seq_parse("", &seq) && seq == 42,
			"seq alone: parsed, and a refusal leaves the output alone");
}

int
main(void)
{
	unit_diag("the closed sets of the terminal's words");
	test_round_trips();
	test_refusals();
	test_rows();
	return unit_done();
}
