/*
 * members_sql.c
 *		bothy._place_members_among(place, persons): of the given persons,
 *		those who are members of the place, each once; the body of the
 *		seam's default bothy.thread_audience (src/sql/51_seam_audience.sql).
 *
 * Why C: a gateway asks this for every person connected to it at every
 * delivery, thousands at a time (every receiver is admitted by the
 * database at every delivery, D-M7-17-5).  The SQL body before it probed
 * bothy.memberships once per person through the executor (an EXISTS
 * subplan rescanned per person, a hashed DISTINCT), 1.7 to 3.4 us a person,
 * and the executor cannot do better: a merge join's plan depends on the
 * statistics, which a new installation does not have.  Here the persons
 * are sorted and the place's entries of the primary key are walked
 * alongside them (find_members), with no plan to choose: 0.36 ms for a
 * gateway's sorted part of 1,000 members against 3.36 ms for the SQL body
 * (docs/performance.md, "The audience in the database").
 *
 * It reads the table as the role running it: the function is SECURITY
 * DEFINER (the extension's owner) and EXECUTE is granted to no one, so
 * only the seam's body calls it; the SELECT privilege is checked anyway,
 * as the executor would.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/itup.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/tupdesc.h"
#include "catalog/namespace.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"
#include "utils/uuid.h"

#include "members.h"

/*
 * The call's result set, one uuid column.  InitMaterializedSRF wants a row
 * type (or an expected descriptor a caller may not give) for a function
 * that returns SETOF a scalar, so the materialize mode is set up here.
 */
void
bothy_begin_uuid_set(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext old;
	TupleDesc	desc;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	desc = CreateTemplateTupleDesc(1);
	TupleDescInitEntry(desc, (AttrNumber) 1, "person", UUIDOID, -1, 0);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = tuplestore_begin_heap(false, false, work_mem);
	rsinfo->setDesc = desc;
	MemoryContextSwitchTo(old);
}

int
bothy_uuid_order(const void *a, const void *b)
{
	return memcmp(((const pg_uuid_t *) a)->data, ((const pg_uuid_t *) b)->data, UUID_LEN);
}

/*
 * The persons of the array, sorted, each once, NULLs dropped; *n their
 * number.  NULL when there are none.  A gateway's parts come sorted, and
 * qsort then only checks that they are (pg_qsort's presorted test).
 */
static pg_uuid_t *
distinct_persons(ArrayType *persons, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems,
				i,
				kept = 0;
	pg_uuid_t  *out;

	/* any dimensions, read as their elements in order, as unnest reads them */
	deconstruct_array(persons, UUIDOID, UUID_LEN, false, TYPALIGN_CHAR,
					  &elems, &nulls, &nelems);
	*n = 0;
	if (nelems == 0)
		return NULL;
	out = palloc(sizeof(pg_uuid_t) * nelems);
	for (i = 0; i < nelems; i++)
		if (!nulls[i])
			out[kept++] = *DatumGetUUIDP(elems[i]);
	pfree(elems);
	pfree(nulls);
	if (kept == 0)
		return NULL;
	qsort(out, kept, sizeof(pg_uuid_t), bothy_uuid_order);
	for (i = 1, *n = 1; i < kept; i++)
		if (bothy_uuid_order(&out[i], &out[*n - 1]) != 0)
			out[(*n)++] = out[i];
	return out;
}

Relation
bothy_open_table(const char *name)
{
	Oid			relid = get_relname_relid(name, get_namespace_oid("bothy", false));
	AclResult	acl;

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("bothy.%s does not exist", name)));
	acl = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, OBJECT_TABLE, name);
	return table_open(relid, AccessShareLock);
}

/*
 * The index a membership is found by: the primary key of
 * bothy.memberships, (place, person).  An error that says what is wrong
 * when the table was changed under the extension.
 */
Relation
bothy_open_membership_index(Relation memberships)
{
	Oid			indexid = RelationGetPrimaryKeyIndex(memberships);
	Relation	index;

	if (!OidIsValid(indexid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bothy.memberships has no primary key")));
	index = index_open(indexid, AccessShareLock);
	if (index->rd_index->indnkeyatts != 2 ||
		index->rd_index->indkey.values[0] != 1 ||
		index->rd_index->indkey.values[1] != 2 ||
		TupleDescAttr(RelationGetDescr(memberships), 0)->atttypid != UUIDOID ||
		TupleDescAttr(RelationGetDescr(memberships), 1)->atttypid != UUIDOID)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the primary key of bothy.memberships is not (place uuid, person uuid)")));
	return index;
}

/*
 * A walk gives way to probes once it has visited more than this many
 * entries of the index per person decided (plus WALK_SLACK): a step costs
 * about a tenth of a probe (a descent of the index).
 */
#define WALK_STEPS_PER_PERSON 10
#define WALK_SLACK 64

/* The person of the index entry the scan stands on. */
static const pg_uuid_t *
entry_person(IndexScanDesc scan)
{
	bool		isnull;
	Datum		d = index_getattr(scan->xs_itup, 2, scan->xs_itupdesc, &isnull);

	return isnull ? NULL : DatumGetUUIDP(d);
}

void
bothy_put_uuid(ReturnSetInfo *rsinfo, const pg_uuid_t *person)
{
	Datum		d = UUIDPGetDatum(person);
	bool		isnull = false;

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &d, &isnull);
}

/*
 * Walks the place's entries of the index from the first person on, with
 * the sorted persons alongside: an entry below the person looked for is
 * stepped over, a person below the entry is not a member, an equal one is
 * a member if its row is visible to the snapshot (a dead version's entry
 * is stepped over; a later entry of the same key may be the live one).
 * Only a matching entry fetches its row.  Returns the number of persons
 * decided: all of them, or fewer when the walk visited too many entries
 * for the persons it decided (a place much larger than the persons
 * asked), and probes are cheaper for the rest.
 */
static int
walk_members(IndexScanDesc scan, TupleTableSlot *slot, Datum place,
			 const pg_uuid_t *persons, int n, ReturnSetInfo *rsinfo)
{
	ScanKeyData keys[2];
	int			i = 0;
	long		steps = 0;

	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_UUID_EQ, place);
	ScanKeyInit(&keys[1], 2, BTGreaterEqualStrategyNumber, F_UUID_GE,
				UUIDPGetDatum(&persons[0]));
	index_rescan(scan, keys, 2, NULL, 0);
	while (i < n && index_getnext_tid(scan, ForwardScanDirection) != NULL)
	{
		const pg_uuid_t *member = entry_person(scan);
		int			c = 1;

		CHECK_FOR_INTERRUPTS();
		if (member == NULL)
			continue;
		while (i < n && (c = bothy_uuid_order(&persons[i], member)) < 0)
			i++;
		if (i < n && c == 0 && index_fetch_heap(scan, slot))
			bothy_put_uuid(rsinfo, &persons[i++]);
		if (++steps > (long) i * WALK_STEPS_PER_PERSON + WALK_SLACK)
			return i;
	}
	return n;					/* the place has no member left above the walk */
}

/* One probe of the index per person, for the persons from the first on. */
static void
probe_members(IndexScanDesc scan, TupleTableSlot *slot, Datum place,
			  const pg_uuid_t *persons, int n, ReturnSetInfo *rsinfo)
{
	ScanKeyData keys[2];
	int			i;

	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_UUID_EQ, place);
	ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_UUID_EQ, (Datum) 0);
	for (i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		keys[1].sk_argument = UUIDPGetDatum(&persons[i]);
		index_rescan(scan, keys, 2, NULL, 0);
		if (index_getnext_slot(scan, ForwardScanDirection, slot))
			bothy_put_uuid(rsinfo, &persons[i]);
	}
}

/*
 * The members among the persons (sorted, distinct), into the result set.
 * The walk costs about one step per member of the place between the
 * persons asked: the least work when most members are asked and the
 * persons come in ranges (the gateway sends its persons sorted), or when
 * the place is small.  Probes cost one descent each, whatever the place's
 * size; the walk hands over to them when it has visited more than ten
 * entries per person decided (after a start of 64), so neither case costs
 * much more than the better of the two.
 */
static void
find_members(Relation memberships, Relation index, Datum place,
			 const pg_uuid_t *persons, int n, ReturnSetInfo *rsinfo)
{
	IndexScanDesc scan = index_beginscan(memberships, index, GetActiveSnapshot(), 2, 0);
	TupleTableSlot *slot = table_slot_create(memberships, NULL);
	int			walked;

	scan->xs_want_itup = true;	/* the walk reads the person off the entry */
	walked = walk_members(scan, slot, place, persons, n, rsinfo);
	if (walked < n)
		probe_members(scan, slot, place, persons + walked, n - walked, rsinfo);
	ExecDropSingleTupleTableSlot(slot);
	index_endscan(scan);
}

PG_FUNCTION_INFO_V1(bothy_place_members_among);

Datum
bothy_place_members_among(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	pg_uuid_t  *persons;
	int			n;
	Relation	memberships,
				index;

	bothy_begin_uuid_set(fcinfo);
	/* An unknown thread's place is NULL: nobody is admitted. */
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	persons = distinct_persons(PG_GETARG_ARRAYTYPE_P(1), &n);
	if (n == 0)
		PG_RETURN_NULL();

	memberships = bothy_open_table("memberships");
	index = bothy_open_membership_index(memberships);
	find_members(memberships, index, PG_GETARG_DATUM(0), persons, n, rsinfo);
	index_close(index, AccessShareLock);
	table_close(memberships, AccessShareLock);
	pfree(persons);
	PG_RETURN_NULL();
}
