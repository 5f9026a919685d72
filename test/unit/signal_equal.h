/*
 * signal_equal.h
 *		The test oracle for "two signals are the same": the kind, the
 *		optional bits and every member present for the kind, compared field
 *		by field (never raw memory, whose padding and absent members mean
 *		nothing).
 *
 * Written from docs/signals.md independently of the codec's own table, so
 * a wrong row in src/common/signal.c shows up as a mismatch instead of
 * being shared by the code and its check.  Used by test_signal.c and by
 * test/fuzz/fuzz_signal.c.
 */
#ifndef BOTHY_SIGNAL_EQUAL_H
#define BOTHY_SIGNAL_EQUAL_H

#include <stdbool.h>
#include <string.h>

#include "signal.h"

#define BOTHY_EQ_ID(f) (memcmp(a->f.b, b->f.b, sizeof(a->f.b)) == 0)
#define BOTHY_EQ_OPT(bit, same) (!(a->optional & (bit)) || (same))

static bool
bothy_test_reach_equal(const bothy_signal *a, const bothy_signal *b)
{
	return a->nreach == b->nreach &&
		memcmp(a->reach, b->reach, sizeof(a->reach[0]) * (size_t) a->nreach) == 0;
}

static bool
bothy_test_signal_equal(const bothy_signal *a, const bothy_signal *b)
{
	if (a->kind != b->kind || a->optional != b->optional)
		return false;
	switch (a->kind)
	{
		case BOTHY_KIND_GATEWAY_TYPING:
			return BOTHY_EQ_ID(node) && BOTHY_EQ_ID(thread) && BOTHY_EQ_ID(principal) &&
				BOTHY_EQ_OPT(BOTHY_OPT_REACH, bothy_test_reach_equal(a, b));
		case BOTHY_KIND_GATEWAY_RUN:
			return BOTHY_EQ_ID(node) && BOTHY_EQ_ID(run) && BOTHY_EQ_ID(thread) &&
				a->version == b->version &&
				BOTHY_EQ_OPT(BOTHY_OPT_REACH, bothy_test_reach_equal(a, b));
		case BOTHY_KIND_GATEWAY_AGENT_PRESENCE:
			return BOTHY_EQ_ID(node) && BOTHY_EQ_ID(agent) && a->state == b->state &&
				BOTHY_EQ_OPT(BOTHY_OPT_BILLING_MODE, a->billing_mode == b->billing_mode) &&
				BOTHY_EQ_OPT(BOTHY_OPT_ACTOR, BOTHY_EQ_ID(actor));
		case BOTHY_KIND_GATEWAY_DEVICE:
			return BOTHY_EQ_ID(node) && BOTHY_EQ_ID(device) &&
				BOTHY_EQ_ID(gateway_session) && BOTHY_EQ_ID(bind_id);
		case BOTHY_KIND_GATEWAY_CONSUMER:
			return BOTHY_EQ_ID(node) && BOTHY_EQ_ID(agent) && BOTHY_EQ_ID(gateway_session);
		case BOTHY_KIND_GATEWAY_HINT:
			return BOTHY_EQ_ID(node) && BOTHY_EQ_ID(recipient) && BOTHY_EQ_ID(nid) &&
				a->hint_kind == b->hint_kind && a->quiet == b->quiet &&
				a->count == b->count &&
				BOTHY_EQ_OPT(BOTHY_OPT_THREAD, BOTHY_EQ_ID(thread)) &&
				BOTHY_EQ_OPT(BOTHY_OPT_MESSAGE, BOTHY_EQ_ID(message)) &&
				BOTHY_EQ_OPT(BOTHY_OPT_TARGET, BOTHY_EQ_ID(target));
		case BOTHY_KIND_GATEWAY_AGENT_EVENT:
			return BOTHY_EQ_ID(node) && BOTHY_EQ_ID(agent) && a->event == b->event;
		case BOTHY_KIND_TERMINAL_SESSION_OPEN:
		case BOTHY_KIND_TERMINAL_SESSION_PAIRED:
			return BOTHY_EQ_ID(host_id) && BOTHY_EQ_ID(session_id);
		case BOTHY_KIND_TERMINAL_HOST_CLOSE:
			return BOTHY_EQ_ID(host_id);
		case BOTHY_KIND_TERMINAL_HOST_PRESENT:
		case BOTHY_KIND_TERMINAL_HOST_GONE:
			return BOTHY_EQ_ID(host_id) && BOTHY_EQ_ID(conn_id);
		case BOTHY_KIND_TERMINAL_LOG:
			return a->seq == b->seq;
		case BOTHY_KIND_WAL_FENCE:
			return a->lsn == b->lsn;
		case BOTHY_KIND_NONE:
		case BOTHY_KIND_COUNT:
			break;
	}
	return false;
}

#undef BOTHY_EQ_ID
#undef BOTHY_EQ_OPT

#endif							/* BOTHY_SIGNAL_EQUAL_H */
