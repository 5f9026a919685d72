/*
 * test_tmodel.c
 *		Unit tests of src/gateway/terminal/model.c: every word of the
 *		terminal's closed sets round-trips, as the database writes it
 *		(the CHECK constraints of src/sql/70_terminal_tables.sql), and
 *		anything else is refused: another case, a prefix, trailing bytes,
 *		an empty or NULL name.
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

int
main(void)
{
	unit_diag("the closed sets of the terminal's words");
	test_round_trips();
	test_refusals();
	return unit_done();
}
