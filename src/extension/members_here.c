/*
 * members_here.c
 *		The default bodies of the seam's node-shaped lookups
 *		(src/sql/52_seam_audience_here.sql):
 *
 *		bothy._place_members_on(place, node): the members of the place
 *		with a device bound to the node, each once;
 *		bothy._place_nodes(place): the nodes that devices of the place's
 *		members are bound to, or NULL when the place is too large (or has
 *		no member here) to say cheaply.
 *
 * Why: until 0.3.0 a gateway sent every person connected to it at every
 * delivery, so a delivery cost the database and the node a step per person
 * connected, member or not, and every node paid it for every event
 * (docs/scaling.md).  The database already knows which persons each node
 * holds: the bindings of their devices (bothy.device_bindings, written at
 * every identify before the connection is ready).  So a node now names
 * itself, and the place's members and the node's bound persons are
 * intersected here, each in its own index, both in person order: a
 * leapfrog join (each side seeks the other's next person), which costs
 * about two seeks per person of the smaller side, whatever the other's
 * size.  A seek first steps over a few entries (cheap, on the same page)
 * before it descends the index again, so two sides of about the same
 * size are walked rather than probed.
 *
 * Visibility: a member is admitted only if its membership row is visible
 * to the statement's snapshot (a removal committed before the event keeps
 * the person out, D-M7-17-5; on a standby, once the fence is replayed).
 * In _place_members_on a binding's entry is taken as it is, dead versions
 * too: a binding only narrows who is asked about, and a person named
 * needlessly is one the node finds no connection of (a heap fetch per
 * bound member would double the read).  _place_nodes fetches the
 * binding's row, since a node named needlessly makes a call.  A binding the snapshot cannot see yet is
 * one whose connection is not ready yet either.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/itup.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "members.h"
#include "signal.h"

/*
 * Entries a seek steps over before it descends the index again: at most
 * SEEK_STEPS_MAX, halved (to 1) each time stepping fell short and the
 * seek descended, doubled each time it arrived, so a side much sparser
 * than the other soon descends at once.
 */
#define SEEK_STEPS_MAX 8

/*
 * A place's members with more rows than this make _place_nodes answer
 * NULL (every node asks): a large audience is on most nodes anyway, and
 * its probes would cost the fan-out worker more than the calls they save.
 */
#define NODES_MAX_MEMBERS 256

/* More distinct nodes than a reach names: NULL as well. */
#define NODES_MAX BOTHY_REACH_MAX

/* A scan of an index whose key is (prefix uuid, person uuid). */
typedef struct cursor
{
	IndexScanDesc scan;
	ScanKeyData keys[2];
	pg_uuid_t	at;				/* the person of the entry it stands on */
	bool		ended;			/* no entry of the prefix is left */
	bool		started;
	int			steps;			/* how far the next seek steps first */
} cursor;

static void
cursor_begin(cursor *c, Relation heap, Relation index, Datum prefix)
{
	memset(c, 0, sizeof(*c));
	c->steps = SEEK_STEPS_MAX / 2;
	c->scan = index_beginscan(heap, index, GetActiveSnapshot(), 2, 0);
	c->scan->xs_want_itup = true;	/* the person is read off the entry */
	ScanKeyInit(&c->keys[0], 1, BTEqualStrategyNumber, F_UUID_EQ, prefix);
}

/* The next entry of the prefix; false at its end (and ever after). */
static bool
cursor_step(cursor *c)
{
	while (!c->ended && index_getnext_tid(c->scan, ForwardScanDirection) != NULL)
	{
		bool		isnull;
		Datum		d = index_getattr(c->scan->xs_itup, 2, c->scan->xs_itupdesc, &isnull);

		if (isnull)
			continue;
		memcpy(&c->at, DatumGetUUIDP(d), sizeof(pg_uuid_t));
		return true;
	}
	c->ended = true;
	return false;
}

/* The first entry whose person is at or after target; false when none. */
static bool
cursor_seek(cursor *c, const pg_uuid_t *target)
{
	int			k;

	if (c->ended)
		return false;
	if (c->started)
	{
		for (k = 0; k < c->steps && bothy_uuid_order(&c->at, target) < 0; k++)
			if (!cursor_step(c))
				return false;
		if (bothy_uuid_order(&c->at, target) >= 0)
		{
			if (k > 0 && c->steps < SEEK_STEPS_MAX)
				c->steps *= 2;
			return true;
		}
		if (c->steps > 1)
			c->steps /= 2;
	}
	c->started = true;
	ScanKeyInit(&c->keys[1], 2, BTGreaterEqualStrategyNumber, F_UUID_GE,
				UUIDPGetDatum(target));
	index_rescan(c->scan, c->keys, 2, NULL, 0);
	return cursor_step(c);
}

/*
 * An index of bothy.device_bindings by name, whose two key columns are
 * first and second (node, person or person, node): an error that says
 * what is wrong when the table was changed under the extension.
 */
static Relation
open_binding_index(Relation bindings, const char *name, const char *first,
				   const char *second)
{
	Oid			indexid = get_relname_relid(name, get_namespace_oid("bothy", false));
	Relation	index;

	if (!OidIsValid(indexid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the index bothy.%s does not exist", name)));
	index = index_open(indexid, AccessShareLock);
	if (index->rd_index->indrelid != RelationGetRelid(bindings) ||
		index->rd_index->indnkeyatts != 2 ||
		index->rd_index->indkey.values[0] != get_attnum(RelationGetRelid(bindings), first) ||
		index->rd_index->indkey.values[1] != get_attnum(RelationGetRelid(bindings), second))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bothy.%s is not an index of bothy.device_bindings on (%s, %s)",
						name, first, second)));
	return index;
}

/*
 * What both bodies read: the place's memberships (cursor a, with a slot
 * for their rows) and one index of the bindings (cursor b).
 */
typedef struct readers
{
	Relation	memberships,
				members_index,
				bindings,
				bindings_index;
	TupleTableSlot *slot,		/* a membership's row */
			   *binding;		/* a binding's row */
	cursor		a,
				b;
} readers;

static void
readers_open(readers *r, Datum place, const char *index, const char *first,
			 const char *second, Datum b_prefix)
{
	r->memberships = bothy_open_table("memberships");
	r->members_index = bothy_open_membership_index(r->memberships);
	r->bindings = bothy_open_table("device_bindings");
	r->bindings_index = open_binding_index(r->bindings, index, first, second);
	r->slot = table_slot_create(r->memberships, NULL);
	r->binding = table_slot_create(r->bindings, NULL);
	cursor_begin(&r->a, r->memberships, r->members_index, place);
	cursor_begin(&r->b, r->bindings, r->bindings_index, b_prefix);
}

static void
readers_close(readers *r)
{
	index_endscan(r->b.scan);
	index_endscan(r->a.scan);
	ExecDropSingleTupleTableSlot(r->binding);
	ExecDropSingleTupleTableSlot(r->slot);
	index_close(r->bindings_index, AccessShareLock);
	table_close(r->bindings, AccessShareLock);
	index_close(r->members_index, AccessShareLock);
	table_close(r->memberships, AccessShareLock);
}

/*
 * The members of the place (cursor a) among the node's bound persons
 * (cursor b), into the result set.  Each side seeks the other's person;
 * on a match the membership's row decides (an entry of a dead version is
 * passed over: a later entry of the same person may be the live one).
 */
static void
intersect(cursor *a, TupleTableSlot *slot, cursor *b, ReturnSetInfo *rsinfo)
{
	static const pg_uuid_t first = {{0}};
	pg_uuid_t	person;
	bool		found;

	if (!cursor_seek(a, &first))
		return;
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (!cursor_seek(b, &a->at))
			return;
		if (bothy_uuid_order(&b->at, &a->at) > 0)
		{
			if (!cursor_seek(a, &b->at))
				return;
			continue;
		}
		person = a->at;
		found = false;
		do
		{
			if (!found && index_fetch_heap(a->scan, slot))
			{
				found = true;
				bothy_put_uuid(rsinfo, &person);
			}
			if (!cursor_step(a))
				return;
		} while (bothy_uuid_order(&a->at, &person) == 0);
	}
}

/*
 * The place of a thread, from the primary key of bothy.threads as the
 * snapshot sees it (what the seam's bothy.thread_place reads by default);
 * false for an unknown thread.
 */
static bool
thread_place(Datum thread, pg_uuid_t *place)
{
	Relation	threads = bothy_open_table("threads");
	Oid			indexid = RelationGetPrimaryKeyIndex(threads);
	Relation	index;
	IndexScanDesc scan;
	TupleTableSlot *slot;
	ScanKeyData key;
	bool		found = false,
				isnull;
	Datum		d;

	if (!OidIsValid(indexid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bothy.threads has no primary key")));
	index = index_open(indexid, AccessShareLock);
	scan = index_beginscan(threads, index, GetActiveSnapshot(), 1, 0);
	slot = table_slot_create(threads, NULL);
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_UUID_EQ, thread);
	index_rescan(scan, &key, 1, NULL, 0);
	if (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		d = slot_getattr(slot, 2, &isnull);
		if (!isnull)
		{
			memcpy(place, DatumGetUUIDP(d), sizeof(pg_uuid_t));
			found = true;
		}
	}
	ExecDropSingleTupleTableSlot(slot);
	index_endscan(scan);
	index_close(index, AccessShareLock);
	table_close(threads, AccessShareLock);
	return found;
}

/* The members of the place with a device bound to the node, into the result set. */
static void
members_on(Datum place, Datum node, ReturnSetInfo *rsinfo)
{
	readers		r;

	readers_open(&r, place, "device_bindings_node_person", "node", "person", node);
	intersect(&r.a, r.slot, &r.b, rsinfo);
	readers_close(&r);
}

PG_FUNCTION_INFO_V1(bothy_place_members_on);

Datum
bothy_place_members_on(PG_FUNCTION_ARGS)
{
	bothy_begin_uuid_set(fcinfo);
	/* An unknown thread's place is NULL: nobody is admitted. */
	if (!PG_ARGISNULL(0) && !PG_ARGISNULL(1))
		members_on(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1), (ReturnSetInfo *) fcinfo->resultinfo);
	PG_RETURN_NULL();
}

PG_FUNCTION_INFO_V1(bothy_thread_audience_on);

/*
 * The seam's default bothy.thread_audience_on(thread, node): the thread's
 * place read here rather than by a SQL body around _place_members_on,
 * whose function call (a set-returning SQL function, a second SECURITY
 * DEFINER) cost about as much as the join of a small place.
 */
Datum
bothy_thread_audience_on(PG_FUNCTION_ARGS)
{
	pg_uuid_t	place;

	bothy_begin_uuid_set(fcinfo);
	if (!PG_ARGISNULL(0) && !PG_ARGISNULL(1) && thread_place(PG_GETARG_DATUM(0), &place))
		members_on(UUIDPGetDatum(&place), PG_GETARG_DATUM(1), (ReturnSetInfo *) fcinfo->resultinfo);
	PG_RETURN_NULL();
}

/*
 * Adds the nodes of the person's bindings (cursor b on (person, node),
 * the node read off each entry whose row the snapshot sees: a device that
 * moved leaves a dead entry behind, and a node named needlessly would ask
 * needlessly) to nodes[*n]; false when there would be more than
 * NODES_MAX.
 */
static bool
add_nodes_of(cursor *b, TupleTableSlot *binding, const pg_uuid_t *person, pg_uuid_t *nodes,
			 int *n)
{
	static const pg_uuid_t first = {{0}};
	int			i;

	b->ended = false;
	b->started = false;
	b->keys[0].sk_argument = UUIDPGetDatum(person);
	if (!cursor_seek(b, &first))
		return true;
	do
	{
		for (i = 0; i < *n; i++)
			if (bothy_uuid_order(&nodes[i], &b->at) == 0)
				break;
		if (i == *n && index_fetch_heap(b->scan, binding))
		{
			if (*n == NODES_MAX)
				return false;
			nodes[(*n)++] = b->at;
		}
	} while (cursor_step(b));
	return true;
}

/*
 * The nodes the devices of the place's members are bound to, or NULL
 * (*isnull) above NODES_MAX_MEMBERS members or NODES_MAX nodes, or with
 * no member at all (the place may be another schema's: a replaced seam).
 */
static Datum
nodes_of_place(Datum place, bool *isnull)
{
	static const pg_uuid_t first = {{0}};
	readers		r;
	pg_uuid_t	person,
				nodes[NODES_MAX];
	Datum		elems[NODES_MAX];
	int			members = 0,
				n = 0,
				i;
	bool		known = true,
				found;

	readers_open(&r, place, "device_bindings_person_node", "person", "node", (Datum) 0);
	/*
	 * A large place is told by its entries alone, before any row or
	 * binding is read: the worker asks this for every event, and a place
	 * of 10,000 members cost it 0.3 ms a signal to find out.  Dead entries
	 * count too; they can only make the answer NULL (every node asks).
	 */
	if (cursor_seek(&r.a, &first))
		for (i = 1; i <= NODES_MAX_MEMBERS && cursor_step(&r.a); i++)
			;
	if (!r.a.ended)
		known = false;
	r.a.ended = r.a.started = false;
	if (known && cursor_seek(&r.a, &first))
		while (known)
		{
			CHECK_FOR_INTERRUPTS();
			person = r.a.at;
			found = false;
			do
			{
				if (!found && index_fetch_heap(r.a.scan, r.slot))
					found = true;
				if (!cursor_step(&r.a))
					break;
			} while (bothy_uuid_order(&r.a.at, &person) == 0);
			if (found)
				known = ++members <= NODES_MAX_MEMBERS &&
					add_nodes_of(&r.b, r.binding, &person, nodes, &n);
			if (r.a.ended)
				break;
		}
	readers_close(&r);
	*isnull = !known || members == 0;
	if (*isnull)
		return (Datum) 0;
	for (i = 0; i < n; i++)
		elems[i] = UUIDPGetDatum(&nodes[i]);
	return PointerGetDatum(construct_array(elems, n, UUIDOID, UUID_LEN, false, TYPALIGN_CHAR));
}

PG_FUNCTION_INFO_V1(bothy_place_nodes);

Datum
bothy_place_nodes(PG_FUNCTION_ARGS)
{
	Datum		nodes;
	bool		isnull;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	nodes = nodes_of_place(PG_GETARG_DATUM(0), &isnull);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(nodes);
}

PG_FUNCTION_INFO_V1(bothy_thread_nodes);

/* The seam's default bothy.thread_nodes(thread), the place read here. */
Datum
bothy_thread_nodes(PG_FUNCTION_ARGS)
{
	pg_uuid_t	place;
	Datum		nodes;
	bool		isnull;

	/* an unknown thread: NULL, every node asks (and admits nobody) */
	if (PG_ARGISNULL(0) || !thread_place(PG_GETARG_DATUM(0), &place))
		PG_RETURN_NULL();
	nodes = nodes_of_place(UUIDPGetDatum(&place), &isnull);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(nodes);
}
