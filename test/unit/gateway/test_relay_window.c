/*
 * test_relay_window.c
 *		Unit tests of src/gateway/terminal/relay/window.c: a device's window
 *		of unacknowledged output (docs/terminal.md, "Slow networks"): marks
 *		at the right counts, stale, duplicate and future acknowledgements
 *		ignored, held exactly at the window, the release while the node
 *		does not read the device, holds counted once, counts past 4 GiB.
 */
#include <stdint.h>

#include "terminal/relay/window.h"
#include "unit.h"

#define KIB 1024u

/* Writes len bytes and, like relay/ack.c, marks them when a mark is due. */
static bool
send_marking(gw_rwindow *w, size_t len, uint64_t window)
{
	if (!gw_rwindow_sent(w, len, window))
		return false;
	gw_rwindow_marked(w);
	return true;
}

static bool
held(gw_rwindow *w, uint64_t window)
{
	bool		began;

	return gw_rwindow_held(w, window, false, &began);
}

static void
test_mark_every(void)
{
	UNIT_OK(gw_rwindow_mark_every(1024) == 256 && gw_rwindow_mark_every(4096) == 1024 &&
			gw_rwindow_mark_every(65536) == 16384,
			"mark: a quarter of a window up to 64 KiB");
	UNIT_OK(gw_rwindow_mark_every(1025) == 257 && gw_rwindow_mark_every(1027) == 257,
			"mark: a quarter rounded up");
	UNIT_OK(gw_rwindow_mark_every(65537) == GW_RWINDOW_MARK_MAX &&
			gw_rwindow_mark_every(262144) == GW_RWINDOW_MARK_MAX &&
			gw_rwindow_mark_every(16777216) == GW_RWINDOW_MARK_MAX && GW_RWINDOW_MARK_MAX == 16384,
			"mark: at most every 16 KiB, whatever the window");
	UNIT_OK(gw_rwindow_mark_every(0) == 1 && gw_rwindow_mark_every(1) == 1,
			"mark: never every 0 bytes");
}

static void
test_marks(void)
{
	gw_rwindow	w = {0};
	int			marks = 0;
	int			i;

	/* 1 KiB messages, 256 KiB window: a mark after each 16th message */
	for (i = 1; i <= 64; i++)
		if (send_marking(&w, KIB, 256 * KIB))
		{
			marks++;
			if (w.pinged != (uint64_t) i * KIB || i % 16 != 0)
				break;
		}
	UNIT_OK(marks == 4 && w.pinged == 64 * KIB && gw_rwindow_unmarked(&w) == 0,
			"marks: one after each 16 KiB of a 256 KiB window, the count of bytes before it");
	UNIT_OK(!gw_rwindow_sent(&w, 16 * KIB - 1, 256 * KIB) && gw_rwindow_unmarked(&w) == 16 * KIB - 1 &&
			gw_rwindow_sent(&w, 1, 256 * KIB),
			"marks: not one byte early, due at exactly 16 KiB");
	w = (gw_rwindow) {0};
	UNIT_OK(!gw_rwindow_sent(&w, 1023, 4 * KIB) && gw_rwindow_sent(&w, 1, 4 * KIB) &&
			gw_rwindow_marked(&w) == 1024,
			"marks: a 4 KiB window marks after each 1 KiB");
	w = (gw_rwindow) {0};
	UNIT_OK(gw_rwindow_sent(&w, 20000, 256 * KIB) && gw_rwindow_marked(&w) == 20000 &&
			!gw_rwindow_sent(&w, 16383, 256 * KIB),
			"marks: a message past the mark is marked after it whole; counting starts again at the mark");
	UNIT_OK(gw_rwindow_unmarked(&w) == 16383, "marks: the unmarked bytes a drain would mark");
}

static void
test_acks(void)
{
	gw_rwindow	w = {0};

	send_marking(&w, 16 * KIB, 64 * KIB);
	send_marking(&w, 16 * KIB, 64 * KIB);
	UNIT_OK(w.pinged == 32 * KIB && w.acked == 0, "acks: two marks out, none acknowledged");
	UNIT_OK(!gw_rwindow_ack(&w, 0), "acks: 0 acknowledges nothing");
	UNIT_OK(!gw_rwindow_ack(&w, 32 * KIB + 1) && w.acked == 0, "acks: a future count is ignored");
	UNIT_OK(gw_rwindow_ack(&w, 16 * KIB) && w.acked == 16 * KIB, "acks: the first mark's count");
	UNIT_OK(!gw_rwindow_ack(&w, 16 * KIB) && w.acked == 16 * KIB, "acks: a duplicate is ignored");
	UNIT_OK(!gw_rwindow_ack(&w, 8 * KIB) && w.acked == 16 * KIB, "acks: a stale count is ignored");
	UNIT_OK(gw_rwindow_ack(&w, 20000) && w.acked == 20000,
			"acks: any count past the last acknowledged and up to the last mark is taken");
	UNIT_OK(gw_rwindow_ack(&w, 32 * KIB) && !gw_rwindow_ack(&w, UINT64_MAX) && w.acked == 32 * KIB,
			"acks: the last mark; the largest count is a future one");
}

static void
test_held(void)
{
	gw_rwindow	w = {0};
	bool		began;

	send_marking(&w, 64 * KIB - 1, 64 * KIB);
	UNIT_OK(!held(&w, 64 * KIB), "held: not one byte below the window");
	send_marking(&w, 1, 64 * KIB);
	UNIT_OK(held(&w, 64 * KIB), "held: exactly at the window");
	UNIT_OK(!held(&w, 64 * KIB + 1), "held: a larger window admits more");
	UNIT_OK(gw_rwindow_ack(&w, w.pinged) && !held(&w, 64 * KIB), "held: released by the acknowledgement");

	/* a message larger than the rest of the window still goes: one past it at most */
	w = (gw_rwindow) {0};
	send_marking(&w, 60 * KIB, 64 * KIB);
	UNIT_OK(!held(&w, 64 * KIB), "held: not before the window is full");
	send_marking(&w, 16 * KIB, 64 * KIB);
	UNIT_OK(held(&w, 64 * KIB) && w.out - w.acked < 64 * KIB + 16 * KIB,
			"held: out at most the window plus one message less a byte");

	/* holds counted once each */
	w = (gw_rwindow) {0};
	send_marking(&w, 4 * KIB, 4 * KIB);
	UNIT_OK(gw_rwindow_held(&w, 4 * KIB, false, &began) && began, "count: a hold begins");
	UNIT_OK(gw_rwindow_held(&w, 4 * KIB, false, &began) && !began, "count: asked again, the same hold");
	gw_rwindow_ack(&w, w.pinged);
	send_marking(&w, 4 * KIB, 4 * KIB);
	UNIT_OK(gw_rwindow_held(&w, 4 * KIB, false, &began) && began,
			"count: after an acknowledgement, a full window again is a new hold");

	/* an acknowledgement that leaves the window full is the same hold (review 27b, 12) */
	w = (gw_rwindow) {0};
	send_marking(&w, 8 * KIB, 4 * KIB);
	UNIT_OK(gw_rwindow_held(&w, 4 * KIB, false, &began) && began, "count: past the window, a hold");
	UNIT_OK(gw_rwindow_ack(&w, 1 * KIB) && gw_rwindow_held(&w, 4 * KIB, false, &began) && !began,
			"count: an acknowledgement that leaves it full starts no new hold");
	UNIT_OK(gw_rwindow_ack(&w, 6 * KIB) && !gw_rwindow_held(&w, 4 * KIB, false, &began) && !began,
			"count: one that opens it ends the hold's test");
	send_marking(&w, 2 * KIB, 4 * KIB);
	UNIT_OK(gw_rwindow_held(&w, 4 * KIB, false, &began) && began,
			"count: written and full again, a new hold");
}

static void
test_paused(void)
{
	gw_rwindow	w = {0};
	bool		began;

	send_marking(&w, 64 * KIB, 64 * KIB);
	UNIT_OK(!gw_rwindow_held(&w, 64 * KIB, true, &began) && !began,
			"paused: a device the node does not read is not held");
	gw_rwindow_paused(&w);
	UNIT_OK(w.behind_input && w.pinged_at_pause == 64 * KIB && !held(&w, 64 * KIB),
			"paused: read again, still not held until a later mark's pong");
	UNIT_OK(gw_rwindow_ack(&w, 64 * KIB) && w.behind_input && !held(&w, 64 * KIB),
			"paused: a pong to a mark from before the pause releases nothing");
	send_marking(&w, 128 * KIB, 64 * KIB);
	UNIT_OK(!held(&w, 64 * KIB), "paused: two windows out, not held behind input");
	UNIT_OK(gw_rwindow_ack(&w, 192 * KIB) && !w.behind_input && !held(&w, 64 * KIB),
			"paused: a pong past the pause's mark ends it");
	send_marking(&w, 64 * KIB, 64 * KIB);
	UNIT_OK(held(&w, 64 * KIB), "paused: then the window holds again");
	UNIT_OK(!gw_rwindow_ack(&w, 100) && held(&w, 64 * KIB),
			"paused: an ignored pong changes nothing");
}

static void
test_large_counts(void)
{
	gw_rwindow	w = {0};
	uint64_t	five_gib = 5ull << 30;
	char		text[32];

	w.out = w.pinged = w.acked = w.pinged_at_pause = five_gib;
	UNIT_OK(!held(&w, 64 * KIB) && send_marking(&w, 16 * KIB, 64 * KIB) &&
			w.pinged == five_gib + 16 * KIB,
			"counts: past 4 GiB the marks go on (uint64_t: no wrap in 58 years at 10 GB/s)");
	snprintf(text, sizeof(text), "%llu", (unsigned long long) w.pinged);
	UNIT_OK(gw_rwindow_ack(&w, five_gib + 16 * KIB) && strcmp(text, "5368725504") == 0,
			"counts: a count past 4 GiB acknowledged");
	UNIT_OK(sizeof(w.out) == 8 && sizeof(w.pinged) == 8 && sizeof(w.acked) == 8 &&
			sizeof(w.pinged_at_pause) == 8, "counts: every count is 64 bits");
}

int
main(void)
{
	unit_diag("src/gateway/terminal/relay/window.c");
	test_mark_every();
	test_marks();
	test_acks();
	test_held();
	test_paused();
	test_large_counts();
	return unit_done();
}
