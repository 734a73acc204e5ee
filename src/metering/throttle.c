/*
 * throttle.c — throttling of PROVISIONED tables (docs/throttling.md), on
 * when the setting ddb.throttling is.  A request of ddb.execute reads and
 * writes tables and global indexes; each has a bucket per side (read,
 * write) in throttle_buckets.c that refills at its provisioned units a
 * second and keeps up to 300 seconds of them.  A request is admitted to a
 * bucket while the bucket holds more than nothing, less what the request has
 * already recorded there (capacity.c records every read and write, with
 * DynamoDB's units); at its end, the units it used are charged, after the
 * fact as DynamoDB charges, so one request may take a bucket below zero and
 * the next ones wait until it refills.  A write is admitted to its table's
 * bucket and to every global index's (a global index out of write capacity
 * throttles the table's writes, as in DynamoDB); a read to the table's, or
 * to the global index's it reads; local indexes share their table's.
 * Tables on demand (PAY_PER_REQUEST) have no buckets and are never
 * throttled.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "../ddb_errors.h"
#include "../ddb_jsonb.h"
#include "../table/table_access.h"
#include "metering.h"
#include "throttle.h"

/* DynamoDB's messages: a table's capacity, or a global index's. */
#define TABLE_MESSAGE "The level of configured provisioned throughput for the table was exceeded. " \
	"Consider increasing your provisioning level with the UpdateTable API."
#define INDEX_MESSAGE "The level of configured provisioned throughput for one or more global secondary indexes " \
	"of the table was exceeded. Consider increasing your provisioning level for the under-provisioned " \
	"global secondary indexes with the UpdateTable API"

/* A bucket the current request was admitted to. */
typedef struct Admission
{
	char	   *table;
	char	   *index;			/* a global index's name, or NULL for the table's own capacity */
	Oid			relid;
	Oid			owner;			/* the table's owner (throttle_bucket_take) */
	ThrottleSide side;
	double		rate;			/* provisioned units a second */
	double		start;			/* the units the bucket held when the request first met it */
} Admission;

static bool throttling = false;
bool		api_throttle_suspended = false;

/* Whether the current request is admitted and charged, and the buckets it met (in admissions_context). */
static bool active = false;
static List *admissions = NIL;
static MemoryContext admissions_context = NULL;

/* True while the setting is being defined (the library loading): a value set before is then taken as it is. */
static bool defining = false;

/*
 * Check hook of ddb.throttling: turning it on where the buckets cannot be
 * shared (ddb_model not preloaded) is refused when a user does it (SET,
 * ALTER DATABASE/ROLE ... SET); from a configuration file, a database's or a
 * role's settings, or a SET made before the library was loaded (refusing
 * it then would only warn and leave it off), it is accepted, and every
 * request then fails with the same message (api_throttle_start), never a
 * silent no-op.
 */
static bool
check_throttling(bool *newval, void **extra, GucSource source)
{
	if (*newval && source >= PGC_S_INTERACTIVE && !defining && !throttle_buckets_ready())
	{
		GUC_check_errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
		GUC_check_errmsg("ddb.throttling needs ddb_model in shared_preload_libraries");
		GUC_check_errhint("%s (docs/throttling.md).", THROTTLE_PRELOAD_HINT);
		return false;
	}
	return true;
}

/* The settings and shared memory hooks, from _PG_init. */
void
throttle_init(void)
{
	defining = true;
	DefineCustomBoolVariable("ddb.throttling",
							 "Throttles requests to PROVISIONED tables above their provisioned capacity.",
							 "Reads and writes beyond a table's or global index's capacity, after 300 seconds of "
							 "unused capacity, get ProvisionedThroughputExceededException. Needs ddb_model in "
							 "shared_preload_libraries.",
							 &throttling, false, PGC_SUSET, 0, check_throttling, NULL, NULL);
	defining = false;
	if (process_shared_preload_libraries_in_progress)
		throttle_buckets_init();
}

/* True when ddb.throttling is on for the item operation starting now (throttle.h). */
bool
api_throttle_start(void)
{
	if (!throttling || api_throttle_suspended)
		return false;
	if (!throttle_buckets_ready())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ddb.throttling is on, but ddb_model is not in shared_preload_libraries"),
				 errhint("%s, or turn ddb.throttling off (docs/throttling.md).", THROTTLE_PRELOAD_HINT)));
	if (admissions_context == NULL)
		admissions_context = AllocSetContextCreate(TopMemoryContext, "ddb_model throttling", ALLOCSET_SMALL_SIZES);
	active = true;
	return true;
}

/* The owner of a relation (InvalidOid when it is gone). */
static Oid
relation_owner(Oid relid)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner = InvalidOid;

	if (HeapTupleIsValid(tuple))
	{
		owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
		ReleaseSysCache(tuple);
	}
	return owner;
}

/* The admission of the current request to a bucket (of table table_relid), made when first met. */
static Admission *
admission_of(const char *table, Oid table_relid, IndexDef *index, Oid relid, ThrottleSide side, double rate)
{
	ListCell   *lc;
	Admission  *a;
	MemoryContext old;

	foreach(lc, admissions)
	{
		a = (Admission *) lfirst(lc);
		if (a->relid == relid && a->side == side)
			return a;
	}
	old = MemoryContextSwitchTo(admissions_context);
	a = palloc(sizeof(Admission));
	a->table = pstrdup(table);
	a->index = index ? pstrdup(index->name) : NULL;
	a->relid = relid;
	a->owner = relation_owner(table_relid);
	a->side = side;
	a->rate = rate;
	a->start = throttle_bucket_take(relid, a->owner, side, rate, 0);
	admissions = lappend(admissions, a);
	MemoryContextSwitchTo(old);
	return a;
}

/* True when the bucket still holds more than the request used of it (and always for a bucket of no capacity). */
static bool
bucket_holds(TableDef *def, IndexDef *index, ThrottleSide side, List **exhausted)
{
	int			rate = index ? (side == THROTTLE_READ ? index->read_capacity : index->write_capacity)
		: (side == THROTTLE_READ ? def->read_capacity : def->write_capacity);
	Admission  *a;

	if (rate <= 0)
		return true;
	a = admission_of(def->name, def->relid, index, index ? index->relid : def->relid, side, rate);
	if (a->start - api_capacity_recorded(def->name, a->index, side == THROTTLE_WRITE) > 0)
		return true;
	*exhausted = lappend(*exhausted, a);
	return false;
}

/* Pushes {"reason": ..., "resource": ...}, DynamoDB's ThrottlingReason, for an exhausted bucket. */
static void
push_reason(JsonbParseState **state, Admission *a)
{
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_string(state, "reason", psprintf("%s%sProvisionedThroughputExceeded", a->index ? "Index" : "Table",
											  a->side == THROTTLE_READ ? "Read" : "Write"));
	ddb_push_string(state, "resource", a->index ? psprintf("%s%s/index/%s", DDB_TABLE_ARN_PREFIX, a->table, a->index)
					: psprintf("%s%s", DDB_TABLE_ARN_PREFIX, a->table));
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/*
 * Raises ProvisionedThroughputExceededException for exhausted buckets:
 * DynamoDB's table message when the table's own capacity ran out, its
 * index message when only global indexes' did; the body's ThrottlingReasons
 * name each.
 */
static void
raise_exceeded(List *exhausted)
{
	JsonbParseState *state = NULL;
	JsonbValue	reasons;
	ListCell   *lc;
	Admission  *first = (Admission *) linitial(exhausted);
	const char *message = INDEX_MESSAGE;

	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	foreach(lc, exhausted)
	{
		push_reason(&state, (Admission *) lfirst(lc));
		if (((Admission *) lfirst(lc))->index == NULL)
			message = TABLE_MESSAGE;
	}
	ddb_binary_value(JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_ARRAY, NULL)), &reasons);
	ereport(ERROR,
			(errcode(ERRCODE_DDB_PROVISIONED_THROUGHPUT_EXCEEDED),
			 errmsg("%s", message),
			 errdetail("%s", ddb_error_body(ddb_error_type(DDB_ERROR_PROVISIONED_THROUGHPUT_EXCEEDED), message,
											"ThrottlingReasons", &reasons)),
			 errhint("The %s capacity of %s \"%s\" (%g unit%s a second, up to %d seconds of them kept) is spent; "
					 "it refills as time passes (ddb.throttling is on: docs/throttling.md).",
					 first->side == THROTTLE_READ ? "read" : "write", first->index ? "index" : "table",
					 first->index ? first->index : first->table, first->rate, first->rate == 1 ? "" : "s",
					 THROTTLE_BURST_SECONDS)));
}

/*
 * Admits a read or a write (throttle.h): a read of a table or local index
 * needs the table's read bucket, of a global index the index's; a write
 * needs the table's write bucket and every global index's.
 */
bool
api_throttle_admit(TableDef *def, IndexDef *index, ThrottleSide side, bool raise)
{
	List	   *exhausted = NIL;

	if (!active)
		return true;
	if (index && index->local)
		index = NULL;
	if (side == THROTTLE_READ)
		bucket_holds(def, index, side, &exhausted);
	else
	{
		bucket_holds(def, NULL, side, &exhausted);
		for (int i = 0; i < def->nindexes; i++)
			if (!def->indexes[i].local)
				bucket_holds(def, &def->indexes[i], side, &exhausted);
	}
	if (exhausted == NIL)
		return true;
	if (raise)
		raise_exceeded(exhausted);
	return false;
}

/* True when admitting a write of def counts its index entries written so far (throttle.h). */
bool
api_throttle_counts_index_writes(TableDef *def)
{
	return active && def->nindexes > 0;
}

/* Charges the units the request recorded to the buckets it was admitted to. */
void
api_throttle_charge(void)
{
	ListCell   *lc;

	if (!active)
		return;
	foreach(lc, admissions)
	{
		Admission  *a = (Admission *) lfirst(lc);
		double		units = api_capacity_recorded(a->table, a->index, a->side == THROTTLE_WRITE);

		if (units > 0)
			throttle_bucket_take(a->relid, a->owner, a->side, a->rate, units);
	}
}

/* Forgets the request's admissions. */
void
api_throttle_stop(void)
{
	active = false;
	admissions = NIL;
	if (admissions_context != NULL)
		MemoryContextReset(admissions_context);
}
