/*
 * clients/rest_poll.c
 *		GET /v1/agent/events: the agent event long poll (see rest.h).
 *
 * Each call is a new holder of the agent's stream with a window of wait_ms
 * plus POLL_GRACE_MS (bothy.consumer_take, holder_kind poll), which also
 * reports `after` as done.  It reads the events after the held
 * acknowledgement; with none, it waits here until gateway.agent_event of
 * the agent, or until wait_ms.  A takeover heard while it waits is checked
 * against the hold row: 409 when another holder took the stream.
 */
#include <stdio.h>
#include <string.h>

#include "clients/agent_events.h"
#include "clients/fence.h"
#include "clients/rest_call.h"
#include "core/node.h"
#include "intparse.h"
#include "logline.h"

#define POLL_GRACE_MS 5000		/* the window outlives the wait by this */
#define POLL_WAIT_DEFAULT_MS 25000
#define POLL_MAX_DEFAULT 100

static lws_dll2_owner_t polls;	/* the calls waiting for an event */

static void read_events(gw_rest *r);
static void keep_waiting(gw_rest *r);

void
gw_rest_unwait(gw_rest *r)
{
	if (r->waiting)
	{
		lws_dll2_remove(&r->in_polls);
		lws_sul_cancel(&r->sul);
		r->waiting = false;
	}
}

/* --- GET /v1/agent/events ------------------------------------------------ */

static const char sql_take[] =
"SELECT bothy.consumer_take($1::uuid, $2::uuid, $3::uuid, 'poll', "
"($4 || ' milliseconds')::interval, $5::bigint)";


/* The wait is over with nothing read: {"events":[],"acked":...}. */
static void
answer_empty(gw_rest *r)
{
	gw_poll_body *b = gw_poll_body_new();
	gw_text		body;

	if (b == NULL || !gw_poll_body_finish(&body, b, r->after, &r->session))
	{
		gw_rest_answer_error(r, 503, "unavailable");
		return;
	}
	gw_rest_answer(r, 200, &body);
}

static void
wait_deadline(lws_sorted_usec_list_t *sul)
{
	gw_rest    *r = lws_container_of(sul, gw_rest, sul);

	gw_rest_unwait(r);
	if (r->rc.call == NULL)
		answer_empty(r);
	/* else the read in flight answers, as nothing waits any more */
}

static void
events_read(void *arg, gw_db_result result, const PGresult *res)
{
	gw_rest    *r = arg;
	gw_poll_body *b;
	gw_text		body;
	int			i;

	r->rc.call = NULL;
	if (result != GW_DB_OK)
	{
		gw_rest_answer_db_failure(r, result, res);
		return;
	}
	if (PQntuples(res) == 0)
	{
		if (!r->waiting)
			answer_empty(r);	/* no wait asked, or it is over */
		else
			keep_waiting(r);
		return;
	}
	b = gw_poll_body_new();
	for (i = 0; b != NULL && i < PQntuples(res); i++)
	{
		gw_agent_event_row row;

		if (!gw_agent_event_row_get(res, i, r->after, &row) ||
			!gw_poll_body_add(b, row.id, row.type, row.data, row.created_at_ms))
			break;
	}
	if (b == NULL || i < PQntuples(res))
	{
		if (b != NULL && gw_poll_body_finish(&body, b, r->after, &r->session))
			gw_text_free(&body);
		gw_rest_answer_error(r, 503, "unavailable");
		return;
	}
	if (!gw_poll_body_finish(&body, b, r->after, &r->session))
	{
		gw_rest_answer_error(r, 503, "unavailable");
		return;
	}
	gw_rest_answer(r, 200, &body);
}

static const char sql_still_holds[] =
"SELECT h.holder_session IS NOT DISTINCT FROM $2::uuid FROM bothy.consumer_holder($1::uuid) AS h";

static void check_holder(gw_rest *r);

/* Nothing to answer yet: what was heard during the last call comes next. */
static void
keep_waiting(gw_rest *r)
{
	if (r->recheck)
		check_holder(r);
	else if (r->wake)
	{
		r->wake = false;
		read_events(r);
	}
}

static void
holder_checked(void *arg, gw_db_result result, const PGresult *res)
{
	gw_rest    *r = arg;
	bool		holds;

	r->rc.call = NULL;
	if (result != GW_DB_OK || !gw_db_bool(res, &holds))
	{
		gw_rest_answer_db_failure(r, result, res);
		return;
	}
	if (!holds)
	{
		gw_rest_answer_error(r, 409, "fenced");
		return;
	}
	/* an earlier takeover heard late: this window still holds */
	if (!r->waiting)
		answer_empty(r);
	else
		keep_waiting(r);
}

/*
 * A takeover of the agent by another holder was heard.  Whether it came
 * after this window's own take (fenced: 409) or before it, heard late
 * (nothing changes), only the hold row says.
 */
static void
check_holder(gw_rest *r)
{
	char		agent[BOTHY_UUID_STRLEN + 1],
				holder[BOTHY_UUID_STRLEN + 1];
	const char *params[2] = {agent, holder};

	if (r->rc.call != NULL)
	{
		r->recheck = true;
		return;
	}
	r->recheck = false;
	bothy_uuid_format(&r->principal, agent);
	bothy_uuid_format(&r->session, holder);
	(void) gw_rest_submit(r, sql_still_holds, 2, params, holder_checked);
}

static void
read_events(gw_rest *r)
{
	if (r->rc.call != NULL)
	{
		r->wake = true;
		return;
	}
	r->rc.call = gw_agent_events_read(&r->principal, &r->session, r->after, r->max, events_read, r);
	if (r->rc.call == NULL)
		gw_rest_answer_error(r, 503, "unavailable");
}

static void
taken(void *arg, gw_db_result result, const PGresult *res)
{
	gw_rest    *r = arg;
	long		acked;

	r->rc.call = NULL;
	if (result != GW_DB_OK || PQntuples(res) != 1 ||
		!bothy_parse_int(PQgetvalue(res, 0, 0), 0, INT64_C(9007199254740991), &acked))
	{
		gw_rest_answer_db_failure(r, result, res);
		return;
	}
	r->after = acked;
	r->taking = false;
	/* this node ignores its own gateway.consumer: fence here what it would */
	gw_fence_consumer(&r->principal, &r->session, NULL);
	if (r->wait_ms > 0 && !gw.stopping)
	{
		r->waiting = true;
		lws_dll2_add_tail(&r->in_polls, &polls);
		lws_sul_schedule(gw.context, 0, &r->sul, wait_deadline,
						 (lws_usec_t) r->wait_ms * LWS_US_PER_MS);
	}
	read_events(r);
}

void
gw_rest_agent_events(gw_rest *r)
{
	static const arg_spec specs[] = {
		{"after", ARG_INT, 0, 9007199254740991L, false},
		{"wait_ms", ARG_INT, 0, POLL_WAIT_MAX_MS, false},
		{"max", ARG_INT, 1, 1000, false},
	};
	arg_values	v;
	char		agent[BOTHY_UUID_STRLEN + 1],
				session[BOTHY_UUID_STRLEN + 1],
				window[16],
				after[24];
	const char *params[5] = {agent, gw.id_text, session, window, NULL};

	if (!gw_rest_admit(r, GW_REST_AGENT_EVENTS, BOTHY_TOKEN_AGENT, specs, 3, &v))
		return;
	r->has_after = v.seen[0];
	r->after = v.ints[0];
	r->wait_ms = v.seen[1] ? (int) v.ints[1] : POLL_WAIT_DEFAULT_MS;
	r->max = v.seen[2] ? (int) v.ints[2] : POLL_MAX_DEFAULT;
	/* a new holder: a session of its own for this window */
	gw_new_uuid(&r->session);
	bothy_uuid_format(&r->principal, agent);
	bothy_uuid_format(&r->session, session);
	snprintf(window, sizeof(window), "%d", r->wait_ms + POLL_GRACE_MS);
	if (r->has_after)
	{
		snprintf(after, sizeof(after), "%lld", (long long) r->after);
		params[4] = after;
	}
	if (gw_rest_submit(r, sql_take, 5, params, taken))
		r->taking = true;
}

void
gw_rest_agent_event(const bothy_uuid *agent)
{
	lws_dll2_t *d,
			   *next;

	for (d = polls.head; d != NULL; d = next)
	{
		gw_rest    *r = lws_container_of(d, gw_rest, in_polls);

		next = d->next;
		if (bothy_uuid_compare(&r->principal, agent) == 0)
			read_events(r);
	}
}

void
gw_rest_fenced(const bothy_uuid *agent, const bothy_uuid *session)
{
	lws_dll2_t *d,
			   *next;

	/* every call, also a poll whose own take still runs: heard now, checked after */
	for (d = gw_rest_calls.calls.head; d != NULL; d = next)
	{
		gw_rest    *r = lws_container_of(d, gw_rest, rc.in_calls);

		next = d->next;
		if (r->rc.endpoint != GW_REST_AGENT_EVENTS || r->rc.answered ||
			bothy_uuid_compare(&r->principal, agent) != 0 ||
			bothy_uuid_compare(&r->session, session) == 0)
			continue;
		if (r->taking)
			r->recheck = true;
		else if (r->waiting)
			check_holder(r);
	}
}

void
gw_rest_reconcile(void)
{
	lws_dll2_t *d,
			   *next;

	for (d = polls.head; d != NULL; d = next)
	{
		next = d->next;
		read_events(lws_container_of(d, gw_rest, in_polls));
	}
}

void
gw_rest_stop(void)
{
	while (polls.head != NULL)
		wait_deadline(&lws_container_of(polls.head, gw_rest, in_polls)->sul);
}

