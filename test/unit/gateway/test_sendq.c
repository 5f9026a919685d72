/*
 * test_sendq.c
 *		Unit tests of src/gateway/core/sendq.c: order, headroom, the byte limit
 *		and its edges, the bytes accounting, and that an empty queue holds no
 *		allocation (measured with the sanitizer's allocator statistics).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sendq.h"
#include "unit.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1	/* clang's spelling of gcc's macro */
#endif
#endif

#ifdef __SANITIZE_ADDRESS__
#define HEAP_MEASURED true

/* compiler-rt's allocator_interface.h, which gcc does not install */
size_t		__sanitizer_get_current_allocated_bytes(void);

/* Bytes the program holds now: exact, without malloc's caches in the way. */
static size_t
heap_in_use(void)
{
	return __sanitizer_get_current_allocated_bytes();
}
#else
/* glibc's statistics count its caches as in use: no exact measure here. */
#define HEAP_MEASURED false

static size_t
heap_in_use(void)
{
	return 0;
}
#endif

#define HEADROOM 16				/* LWS_PRE on x86_64 */

static size_t
count(const gw_sendq *q)
{
	const gw_sendq_msg *m;
	size_t		n = 0;

	for (m = q->head; m != NULL; m = m->next)
		n++;
	return n;
}

/* The front message is exactly text after HEADROOM bytes. */
static bool
front_is(const gw_sendq *q, const char *text)
{
	const gw_sendq_msg *m = gw_sendq_front(q);

	return m != NULL && m->len == strlen(text) &&
		memcmp(m->data + HEADROOM, text, m->len) == 0;
}

static gw_sendq_status
push(gw_sendq *q, const char *text, size_t limit)
{
	return gw_sendq_push(q, HEADROOM, text, strlen(text), limit);
}

static void
test_empty(void)
{
	gw_sendq	q = {0};

	UNIT_OK(gw_sendq_front(&q) == NULL && q.bytes == 0, "empty: no front, no bytes");
	gw_sendq_pop(&q);
	gw_sendq_clear(&q);
	UNIT_OK(q.head == NULL && q.tail == NULL && q.bytes == 0, "empty: pop and clear are no-ops");
}

static void
test_push_pop(void)
{
	gw_sendq	q = {0};
	char		src[] = "hello";
	gw_sendq_msg *m;

	UNIT_OK(gw_sendq_push(&q, HEADROOM, src, 5, 100) == GW_SENDQ_OK && front_is(&q, "hello") &&
			q.bytes == 5 && q.head == q.tail && q.head->next == NULL,
			"push: one message is head and tail, its payload after the headroom");
	m = gw_sendq_front(&q);
	memset(m->data, 0xab, HEADROOM);	/* ASan: the headroom is allocated */
	src[0] = 'J';
	UNIT_OK(front_is(&q, "hello"),
			"push: the payload is a copy; the headroom is writable without touching it");
	gw_sendq_pop(&q);
	UNIT_OK(q.head == NULL && q.tail == NULL && q.bytes == 0,
			"pop of the last message empties head and tail");

	UNIT_OK(gw_sendq_push(&q, 0, "xyz", 3, 100) == GW_SENDQ_OK && q.head->len == 3 &&
			memcmp(q.head->data, "xyz", 3) == 0, "push: headroom 0 puts the payload first");
	gw_sendq_clear(&q);

	UNIT_OK(gw_sendq_push(&q, HEADROOM, "t", 1, 100) == GW_SENDQ_OK &&
			gw_sendq_push_binary(&q, HEADROOM, "\0\xff", 2, 100) == GW_SENDQ_OK &&
			!q.head->binary && q.tail->binary && q.tail->len == 2 &&
			memcmp(q.tail->data + HEADROOM, "\0\xff", 2) == 0 && q.bytes == 3,
			"push_binary: a binary message beside a text one, any bytes, counted alike");
	UNIT_OK(gw_sendq_push_binary(&q, HEADROOM, "abc", 3, 5) == GW_SENDQ_FULL && q.bytes == 3,
			"push_binary: the same byte limit");
	gw_sendq_clear(&q);

	UNIT_OK(push(&q, "one", 100) == GW_SENDQ_OK && push(&q, "two", 100) == GW_SENDQ_OK &&
			push(&q, "three", 100) == GW_SENDQ_OK && q.bytes == 11 && count(&q) == 3 &&
			q.tail->len == 5, "push: three messages, bytes is the sum of payloads");
	UNIT_OK(front_is(&q, "one"), "order: the oldest first");
	gw_sendq_pop(&q);
	UNIT_OK(front_is(&q, "two") && q.bytes == 8, "order: then the second, bytes less the first");
	gw_sendq_pop(&q);
	UNIT_OK(front_is(&q, "three") && q.bytes == 5 && q.head == q.tail, "order: then the third, alone");
	UNIT_OK(push(&q, "four", 100) == GW_SENDQ_OK && front_is(&q, "three") && q.tail->len == 4 &&
			q.head->next == q.tail, "push after pops appends behind the front");
	gw_sendq_pop(&q);
	gw_sendq_pop(&q);
	UNIT_OK(q.head == NULL && q.tail == NULL && q.bytes == 0, "order: all popped, queue empty");
	UNIT_OK(push(&q, "again", 100) == GW_SENDQ_OK && q.head == q.tail && front_is(&q, "again"),
			"a drained queue takes messages again");
	gw_sendq_clear(&q);
	UNIT_OK(q.head == NULL && q.tail == NULL && q.bytes == 0, "clear empties the queue");
}

static void
test_limit(void)
{
	gw_sendq	q = {0};
	gw_sendq_msg *tail;
	size_t		before;
	gw_sendq_status st;

	UNIT_OK(gw_sendq_push(&q, HEADROOM, "1234567", 7, 10) == GW_SENDQ_OK &&
			gw_sendq_push(&q, HEADROOM, "abc", 3, 10) == GW_SENDQ_OK && q.bytes == 10,
			"limit: filling to exactly the limit is accepted");
	tail = q.tail;
	before = heap_in_use();
	st = gw_sendq_push(&q, HEADROOM, "x", 1, 10);
	UNIT_OK(st == GW_SENDQ_FULL && q.bytes == 10 && count(&q) == 2 && q.tail == tail &&
			heap_in_use() == before,
			"limit: one byte past is FULL, nothing queued or allocated");
	UNIT_OK(gw_sendq_push(&q, HEADROOM, "", 0, 10) == GW_SENDQ_OK && q.bytes == 10 && count(&q) == 3,
			"limit: an empty message never passes it");
	gw_sendq_pop(&q);
	UNIT_OK(gw_sendq_push(&q, HEADROOM, "1234567", 7, 10) == GW_SENDQ_OK && q.bytes == 10 &&
			gw_sendq_push(&q, HEADROOM, "y", 1, 10) == GW_SENDQ_FULL,
			"limit: a pop makes room for exactly what it freed");
	UNIT_OK(gw_sendq_push(&q, HEADROOM, "y", 1, 11) == GW_SENDQ_OK && q.bytes == 11,
			"limit: it is the caller's, per push");
	gw_sendq_clear(&q);

	UNIT_OK(gw_sendq_push(&q, HEADROOM, "0123456789", 10, 10) == GW_SENDQ_OK && q.bytes == 10,
			"limit: one message of exactly the limit");
	gw_sendq_clear(&q);
	before = heap_in_use();
	UNIT_OK(gw_sendq_push(&q, HEADROOM, "0123456789a", 11, 10) == GW_SENDQ_FULL &&
			q.head == NULL && q.bytes == 0 && heap_in_use() == before,
			"limit: one message longer than the limit is FULL on an empty queue");

	/* The guards against wrapping: no allocation is attempted. */
	UNIT_OK(push(&q, "abcde", 100) == GW_SENDQ_OK &&
			gw_sendq_push(&q, HEADROOM, "abcdef", SIZE_MAX, SIZE_MAX) == GW_SENDQ_FULL &&
			gw_sendq_push(&q, HEADROOM, "abcdef", SIZE_MAX - 4, SIZE_MAX) == GW_SENDQ_FULL &&
			gw_sendq_push(&q, HEADROOM, "abcdef", 6, 5) == GW_SENDQ_FULL &&
			q.bytes == 5 && count(&q) == 1,
			"limit: bytes + len cannot wrap past SIZE_MAX, len > limit cannot wrap limit - len");
	UNIT_OK(gw_sendq_push(&q, HEADROOM, "abcdef", 6, 4) == GW_SENDQ_FULL && q.bytes == 5,
			"limit: a queue already past a smaller limit refuses even a short message");
	gw_sendq_clear(&q);
}

static void
test_accounting(void)
{
	gw_sendq	q = {0};
	char		payload[64];
	size_t		sum = 0;
	size_t		i;
	bool		pass = true;

	memset(payload, 'p', sizeof(payload));
	for (i = 0; i < 1000; i++)
	{
		pass = pass && gw_sendq_push(&q, HEADROOM, payload, i % 50, SIZE_MAX / 2) == GW_SENDQ_OK;
		sum += i % 50;
	}
	UNIT_OK(pass && q.bytes == sum && count(&q) == 1000, "accounting: 1000 pushes, bytes is their sum");
	for (i = 0; i < 500; i++)
	{
		pass = pass && q.head != NULL && q.head->len == i % 50;
		sum -= i % 50;
		gw_sendq_pop(&q);
	}
	UNIT_OK(pass && q.bytes == sum && count(&q) == 500, "accounting: 500 pops in order, bytes follows");
	gw_sendq_clear(&q);
	UNIT_OK(q.bytes == 0 && q.head == NULL && q.tail == NULL, "accounting: clear brings bytes to 0");
}

/* A ping goes in order with the messages, over no limit, and counts in no bytes. */
static void
test_ping(void)
{
	gw_sendq	q = {0};

	UNIT_OK(gw_sendq_push(&q, HEADROOM, "abcd", 4, 4) == GW_SENDQ_OK &&
			gw_sendq_push_ping(&q, HEADROOM, "", 0) == GW_SENDQ_OK &&
			gw_sendq_push_ping(&q, HEADROOM, "xy", 2) == GW_SENDQ_OK && q.bytes == 4,
			"ping: queued behind a full queue, its bytes not counted");
	UNIT_OK(gw_sendq_push(&q, HEADROOM, "e", 1, 4) == GW_SENDQ_FULL,
			"ping: the limit still holds for messages");
	UNIT_OK(!q.head->ping && q.head->next->ping && q.head->next->len == 0 &&
			q.tail->ping && q.tail->len == 2 && memcmp(q.tail->data + HEADROOM, "xy", 2) == 0,
			"ping: in order, with its payload");
	gw_sendq_pop(&q);
	gw_sendq_pop(&q);
	UNIT_OK(q.bytes == 0 && count(&q) == 1, "ping: popping pings takes no bytes off");
	gw_sendq_clear(&q);
	UNIT_OK(q.bytes == 0 && q.head == NULL, "ping: cleared");
}

/* A text aside (the relay's waiting): behind a full queue, a text, in no bytes. */
static void
test_aside(void)
{
	gw_sendq	q = {0};

	UNIT_OK(gw_sendq_push(&q, HEADROOM, "abcd", 4, 4) == GW_SENDQ_OK &&
			gw_sendq_push_aside(&q, HEADROOM, "wait", 4) == GW_SENDQ_OK && q.bytes == 4,
			"aside: queued behind a full queue, its bytes not counted");
	UNIT_OK(gw_sendq_push(&q, HEADROOM, "e", 1, 4) == GW_SENDQ_FULL,
			"aside: the limit still holds for messages");
	UNIT_OK(q.tail->aside && !q.tail->ping && !q.tail->binary && !q.head->aside &&
			memcmp(q.tail->data + HEADROOM, "wait", 4) == 0, "aside: a text, after the rest");
	gw_sendq_pop(&q);
	gw_sendq_pop(&q);
	UNIT_OK(q.bytes == 0 && q.head == NULL, "aside: popping it takes no bytes off");
}

/* A first ping goes before everything queued, the rest in order behind it. */
static void
test_ping_first(void)
{
	gw_sendq	q = {0};

	UNIT_OK(gw_sendq_push_ping_first(&q, HEADROOM, "1", 1) == GW_SENDQ_OK &&
			q.head == q.tail && q.head->ping && q.bytes == 0, "ping first: alone in an empty queue");
	gw_sendq_pop(&q);
	UNIT_OK(push(&q, "a", 8) == GW_SENDQ_OK && push(&q, "b", 8) == GW_SENDQ_OK &&
			gw_sendq_push_ping_first(&q, HEADROOM, "22", 2) == GW_SENDQ_OK && q.bytes == 2,
			"ping first: queued before two messages, its bytes not counted");
	UNIT_OK(q.head->ping && q.head->len == 2 && memcmp(q.head->data + HEADROOM, "22", 2) == 0 &&
			!q.head->next->ping && q.head->next->data[HEADROOM] == 'a' &&
			q.tail == q.head->next->next && q.tail->data[HEADROOM] == 'b' && q.tail->next == NULL,
			"ping first: at the head, the messages in order behind it");
	UNIT_OK(push(&q, "c", 8) == GW_SENDQ_OK && q.tail->data[HEADROOM] == 'c' && count(&q) == 4,
			"ping first: the tail still takes the next message");
	gw_sendq_clear(&q);
	UNIT_OK(q.bytes == 0 && q.head == NULL, "ping first: cleared");
}

static void
test_no_allocation_when_empty(void)
{
	gw_sendq	q = {0};
	size_t		before;
	size_t		during;
	size_t		after_pops;
	size_t		after_clear;
	size_t		i;

	if (!HEAP_MEASURED)
	{
		unit_diag("built without AddressSanitizer: the allocation checks are not run");
		return;
	}
	before = heap_in_use();
	(void) push(&q, "one", 100);
	(void) push(&q, "two", 100);
	during = heap_in_use();
	gw_sendq_pop(&q);
	gw_sendq_pop(&q);
	after_pops = heap_in_use();
	for (i = 0; i < 100; i++)
		(void) push(&q, "message", 100000);
	gw_sendq_clear(&q);
	after_clear = heap_in_use();
	UNIT_OK(during >= before + 2 * (sizeof(gw_sendq_msg) + HEADROOM + 3),
			"allocation: a queued message holds its header, headroom and payload");
	UNIT_OK(after_pops == before, "allocation: popped empty, the queue holds nothing");
	UNIT_OK(after_clear == before, "allocation: cleared, the queue holds nothing");
}

int
main(void)
{
	unit_diag("sendq");
	test_empty();
	test_push_pop();
	test_limit();
	test_accounting();
	test_ping();
	test_aside();
	test_ping_first();
	test_no_allocation_when_empty();
	return unit_done();
}
