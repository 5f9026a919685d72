/*
 * core/sendq.c
 *		The bounded per-connection output queue (see sendq.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/sendq.h"

static gw_sendq_status
push(gw_sendq *q, size_t headroom, const void *data, size_t len, size_t limit, bool binary)
{
	gw_sendq_msg *m;

	if (len > limit || q->bytes > limit - len)
		return GW_SENDQ_FULL;
	m = malloc(sizeof(*m) + headroom + len);
	if (m == NULL)
		return GW_SENDQ_NOMEM;
	m->next = NULL;
	m->len = len;
	m->binary = binary;
	m->ping = false;
	m->aside = false;
	memcpy(m->data + headroom, data, len);
	if (q->tail != NULL)
		q->tail->next = m;
	else
		q->head = m;
	q->tail = m;
	q->bytes += len;
	return GW_SENDQ_OK;
}

gw_sendq_status
gw_sendq_push(gw_sendq *q, size_t headroom, const void *data, size_t len, size_t limit)
{
	return push(q, headroom, data, len, limit, false);
}

gw_sendq_status
gw_sendq_push_binary(gw_sendq *q, size_t headroom, const void *data, size_t len, size_t limit)
{
	return push(q, headroom, data, len, limit, true);
}

/*
 * Not counted in bytes: a route's bound on what it queues (the relay's
 * pause mark, --send-queue less one message) must hold with any number
 * of pings and control texts among the messages
 */
gw_sendq_status
gw_sendq_push_aside(gw_sendq *q, size_t headroom, const void *data, size_t len)
{
	gw_sendq_status st = push(q, headroom, data, len, SIZE_MAX, false);

	if (st == GW_SENDQ_OK)
	{
		q->tail->aside = true;
		q->bytes -= len;
	}
	return st;
}

gw_sendq_status
gw_sendq_push_ping(gw_sendq *q, size_t headroom, const void *data, size_t len)
{
	gw_sendq_status st = gw_sendq_push_aside(q, headroom, data, len);

	if (st == GW_SENDQ_OK)
		q->tail->ping = true;
	return st;
}

gw_sendq_status
gw_sendq_push_ping_first(gw_sendq *q, size_t headroom, const void *data, size_t len)
{
	gw_sendq_msg *prev_tail = q->tail;
	gw_sendq_status st = gw_sendq_push_ping(q, headroom, data, len);
	gw_sendq_msg *m;

	if (st != GW_SENDQ_OK || prev_tail == NULL)
		return st;				/* alone in the queue: first already */
	/* the new tail moves to the head */
	m = q->tail;
	prev_tail->next = NULL;
	q->tail = prev_tail;
	m->next = q->head;
	q->head = m;
	return st;
}

void
gw_sendq_pop(gw_sendq *q)
{
	gw_sendq_msg *m = q->head;

	if (m == NULL)
		return;
	q->head = m->next;
	if (q->head == NULL)
		q->tail = NULL;
	if (!m->aside)
		q->bytes -= m->len;
	free(m);
}

void
gw_sendq_clear(gw_sendq *q)
{
	while (q->head != NULL)
		gw_sendq_pop(q);
}
