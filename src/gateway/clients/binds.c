/*
 * clients/binds.c
 *		Device binds in batches (see binds.h).
 *
 * A batch is one call of bothy.device_bind_batch with the sessions,
 * persons and devices of its connections as three text arrays; the answer
 * has a row per element, by its position.  The database binds the rows in
 * the order of their devices, so two nodes' batches never deadlock on
 * shared devices (test/isolation/specs/bind_batches_lock_order.spec), and
 * the rows of one device in the order given, so of two connections of one
 * device in a batch the later gets the newer bind ID.  The answers are
 * handed over in the order of the connections, each exactly as a call of
 * its own would have been: the fence of the device (fence.c) decides, and
 * of two connections of one device here the older binding is closed with
 * 4017.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "clients/binds.h"
#include "clients/session.h"
#include "core/node.h"
#include "intparse.h"
#include "logline.h"

typedef struct gw_bind_batch
{
	lws_dll2_t	running;		/* in batches */
	gw_db_call *call;
	uint32_t	n;
	gw_client  *clients[];		/* by position; NULL once a connection went */
} gw_bind_batch;

static const char sql_bind_batch[] =
"SELECT ord, bind_id FROM bothy.device_bind_batch($1::uuid, $2::uuid[], $3::uuid[], $4::uuid[])";

static lws_dll2_owner_t waiting;	/* gw_client.in_binds, oldest first */
static lws_dll2_owner_t batches;	/* running calls */

static void send_batches(void);

/* A {uuid,uuid,...} array literal of one field of the batch's clients. */
static char *
uuid_array(const gw_bind_batch *b, size_t offset)
{
	char	   *a = malloc((size_t) b->n * (BOTHY_UUID_STRLEN + 1) + 3);
	char	   *p = a;
	uint32_t	i;

	if (a == NULL)
		return NULL;
	*p++ = '{';
	for (i = 0; i < b->n; i++)
	{
		if (i > 0)
			*p++ = ',';
		bothy_uuid_format((const bothy_uuid *) ((const char *) b->clients[i] + offset), p);
		p += BOTHY_UUID_STRLEN;
	}
	*p++ = '}';
	*p = '\0';
	return a;
}

/*
 * The answer's rows into binds[] by position; false unless it has exactly
 * one well-formed row for each.
 */
static bool
read_answer(const PGresult *res, uint32_t n, bothy_uuid *binds)
{
	bool	   *seen = calloc(n, sizeof(bool));
	bool		ok = seen != NULL && PQntuples(res) == (int) n && PQnfields(res) == 2;
	int			i;

	for (i = 0; ok && i < (int) n; i++)
	{
		long		ord;
		const char *v = PQgetvalue(res, i, 1);

		ok = !PQgetisnull(res, i, 0) && !PQgetisnull(res, i, 1) &&
			bothy_parse_int(PQgetvalue(res, i, 0), 1, n, &ord) && !seen[ord - 1] &&
			bothy_uuid_parse(v, strlen(v), &binds[ord - 1]);
		if (ok)
			seen[ord - 1] = true;
	}
	free(seen);
	if (!ok)
		gw_log(GW_LOG_ERROR, "database answer not understood");
	return ok;
}

static void
batch_free(gw_bind_batch *b)
{
	uint32_t	i;

	for (i = 0; i < b->n; i++)
		if (b->clients[i] != NULL)
			b->clients[i]->batch = NULL;
	lws_dll2_remove(&b->running);
	free(b);
}

static void
batch_done(void *arg, gw_db_result result, const PGresult *res)
{
	gw_bind_batch *b = arg;
	bothy_uuid *binds = malloc((size_t) b->n * sizeof(bothy_uuid));
	uint32_t	i;

	b->call = NULL;
	if (result == GW_DB_OK && (binds == NULL || !read_answer(res, b->n, binds)))
	{
		result = GW_DB_ERROR;
		res = NULL;
	}
	/* the batch first leaves the running ones: the answers may start the next */
	lws_dll2_remove(&b->running);
	for (i = 0; i < b->n; i++)
	{
		gw_client  *c = b->clients[i];

		if (c == NULL)
			continue;
		b->clients[i] = NULL;
		c->batch = NULL;
		gw_session_bound(c, result, res, result == GW_DB_OK ? &binds[i] : NULL);
	}
	free(binds);
	free(b);
	send_batches();
}

/* One batch of the binds waiting; false when nothing could be sent. */
static bool
send_batch(void)
{
	uint32_t	n = waiting.count < GW_BINDS_BATCH ? waiting.count : GW_BINDS_BATCH;
	gw_bind_batch *b = malloc(sizeof(*b) + n * sizeof(gw_client *));
	char	   *sessions = NULL,
			   *persons = NULL,
			   *devices = NULL;
	uint32_t	i;

	if (b == NULL)
		return false;
	memset(b, 0, sizeof(*b));
	b->n = n;
	for (i = 0; i < n; i++)
	{
		gw_client  *c = lws_container_of(waiting.head, gw_client, in_binds);

		lws_dll2_remove(&c->in_binds);
		b->clients[i] = c;
		c->batch = b;
		c->batch_at = i;
	}
	lws_dll2_add_tail(&b->running, &batches);
	sessions = uuid_array(b, offsetof(gw_client, session));
	persons = uuid_array(b, offsetof(gw_client, principal));
	devices = uuid_array(b, offsetof(gw_client, device));
	if (sessions != NULL && persons != NULL && devices != NULL)
	{
		const char *params[4] = {gw.id_text, sessions, persons, devices};

		b->call = gw_db_submit(gw.db, sql_bind_batch, 4, params, batch_done, b);
	}
	free(sessions);
	free(persons);
	free(devices);
	if (b->call == NULL)
	{
		/* the pool's queue is full or memory ran out: each is answered with an error */
		batch_done(b, GW_DB_ERROR, NULL);
		return false;
	}
	return true;
}

static void
send_batches(void)
{
	while (waiting.count > 0 && batches.count < GW_BINDS_CALLS)
		if (!send_batch())
			return;
}

void
gw_binds_add(gw_client *c)
{
	lws_dll2_add_tail(&c->in_binds, &waiting);
	send_batches();
}

void
gw_binds_forget(gw_client *c)
{
	lws_dll2_remove(&c->in_binds);
	if (c->batch != NULL)
	{
		c->batch->clients[c->batch_at] = NULL;
		c->batch = NULL;
	}
}

void
gw_binds_stop(void)
{
	while (waiting.head != NULL)
		lws_dll2_remove(waiting.head);
	while (batches.head != NULL)
		batch_free(lws_container_of(batches.head, gw_bind_batch, running));
}
