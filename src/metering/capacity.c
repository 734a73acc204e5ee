/*
 * capacity.c — ConsumedCapacity: the read and write units a request used,
 * per table, by DynamoDB's rules (a read unit per 4 KB read, half of it for
 * an eventually consistent read; a write unit per 1 KB written; at least one
 * per item).  The operations record what they read and write; ddb.execute
 * adds the figures to the response when ReturnConsumedCapacity asks.
 * Secondary indexes count apart (INDEXES lists them): a Query or Scan of an
 * index reads from it, and every write that changes an index entry writes
 * to it, by the entry's projected size, twice when its key changes (delete
 * and put), not at all when the entry stays the same.  A transaction's
 * units count twice.  Throttling (throttle.c) reads what a request recorded.
 */
#include "postgres.h"

#include <math.h>

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "../request/request.h"
#include "../table/gsi.h"
#include "metering.h"

/* The units one secondary index used in the current request. */
typedef struct IndexUnits
{
	char	   *index;
	bool		local;
	double		read;
	double		write;
} IndexUnits;

/* The units one table used in the current request: its own, and its indexes' apart. */
typedef struct TableUnits
{
	char	   *table;
	double		read;
	double		write;
	List	   *indexes;		/* IndexUnits * */
} TableUnits;

/*
 * Whether the current request asked for ConsumedCapacity: only then are its
 * reads and writes sized and recorded, twice over in a transaction (which
 * DynamoDB charges twice, a prepare and a commit, its reads as strongly
 * consistent ones).  Its units live in units_context, emptied at the end of
 * each request.
 */
static bool recording = false;
static bool transactional = false;
static List *request_units = NIL;
static MemoryContext units_context = NULL;

/* The entry of a table, created at zero. */
static TableUnits *
units_of(const char *table)
{
	ListCell   *lc;
	TableUnits *u;
	MemoryContext old;

	foreach(lc, request_units)
	{
		u = (TableUnits *) lfirst(lc);
		if (strcmp(u->table, table) == 0)
			return u;
	}
	old = MemoryContextSwitchTo(units_context);
	u = palloc0(sizeof(TableUnits));
	u->table = pstrdup(table);
	request_units = lappend(request_units, u);
	MemoryContextSwitchTo(old);
	return u;
}

/* The entry of one index of a table, created at zero. */
static IndexUnits *
index_units_of(const char *table, IndexDef *index)
{
	TableUnits *t = units_of(table);
	ListCell   *lc;
	IndexUnits *u;
	MemoryContext old;

	foreach(lc, t->indexes)
	{
		u = (IndexUnits *) lfirst(lc);
		if (strcmp(u->index, index->name) == 0)
			return u;
	}
	old = MemoryContextSwitchTo(units_context);
	u = palloc0(sizeof(IndexUnits));
	u->index = pstrdup(index->name);
	u->local = index->local;
	t->indexes = lappend(t->indexes, u);
	MemoryContextSwitchTo(old);
	return u;
}

/* Write units for an item (or index entry) of bytes: one per KB, at least one; twice in a transaction. */
static double
write_units(int64 bytes)
{
	return Max(1.0, ceil((double) bytes / 1024.0)) * (transactional ? 2 : 1);
}

/* gsi_write_observer while a request runs: an index entry change, in write units. */
static void
observe_index_write(TableDef *def, IndexDef *index, int64 old_size, int64 new_size,
					bool key_changed, bool unchanged)
{
	double		units;

	if (unchanged)
		return;
	if (old_size < 0)
		units = write_units(new_size);
	else if (new_size < 0)
		units = write_units(old_size);
	else if (key_changed)
		units = write_units(old_size) + write_units(new_size);
	else
		units = write_units(new_size);
	index_units_of(def->name, index)->write += units;
}

/*
 * Starts recording reads and writes, and observing index writes, when the
 * request asks for ConsumedCapacity or always is set (ddb.execute_metered:
 * the gateway's metrics; throttling); only then, because sizing items and
 * old index entries costs every operation.  A transaction records twice
 * the units (a request nested in one keeps its factor).
 */
void
api_capacity_start(Jsonb *request, bool always, bool transaction)
{
	char	   *mode = api_string(request, "ReturnConsumedCapacity");

	if (!always && (mode == NULL || strcmp(mode, "NONE") == 0))
		return;
	if (units_context == NULL)
		units_context = AllocSetContextCreate(TopMemoryContext, "ddb_model ConsumedCapacity", ALLOCSET_SMALL_SIZES);
	if (!recording)
		transactional = transaction;
	recording = true;
	gsi_write_observer = observe_index_write;
}

/* Stops recording and forgets the units (the end of a request, whatever its outcome). */
void
api_capacity_stop(void)
{
	recording = false;
	transactional = false;
	gsi_write_observer = NULL;
	request_units = NIL;
	if (units_context != NULL)
		MemoryContextReset(units_context);
}

/* Records a read of bytes from a table, or from one of its indexes (a Query's or Scan's page). */
void
api_capacity_read(const char *table, IndexDef *index, int64 bytes, bool consistent)
{
	double		units = Max(1.0, ceil((double) bytes / 4096.0));

	if (!recording)
		return;
	if (transactional)
		units *= 2.0;
	else if (!consistent)
		units /= 2.0;
	if (index)
		index_units_of(table, index)->read += units;
	else
		units_of(table)->read += units;
}

/* Records the read of one item (NULL: none found) from a table, sized only when recording. */
void
api_capacity_read_item(const char *table, Jsonb *item, bool consistent)
{
	if (recording)
		api_capacity_read(table, NULL, item ? item_size(&item->root) : 0, consistent);
}

/*
 * Records a write of one item to a table, by the larger of the item before
 * and after (either NULL when absent or not read back), sized only when
 * recording.
 */
void
api_capacity_write_item(const char *table, Jsonb *before, Jsonb *after)
{
	if (recording)
		units_of(table)->write += write_units(Max(before ? item_size(&before->root) : 0,
												  after ? item_size(&after->root) : 0));
}

/*
 * The units the current request recorded so far against a table's own
 * capacity (index NULL: its reads and writes, its local indexes' included,
 * which share it) or against a global index's, reads or writes.
 */
double
api_capacity_recorded(const char *table, const char *index, bool write)
{
	ListCell   *lc;
	ListCell   *ic;

	foreach(lc, request_units)
	{
		TableUnits *t = (TableUnits *) lfirst(lc);
		double		units;

		if (strcmp(t->table, table) != 0)
			continue;
		units = index ? 0 : (write ? t->write : t->read);
		foreach(ic, t->indexes)
		{
			IndexUnits *iu = (IndexUnits *) lfirst(ic);

			if (index ? strcmp(iu->index, index) == 0 : iu->local)
				units += write ? iu->write : iu->read;
		}
		return units;
	}
	return 0;
}

/* Pushes a number as an object's value (WJB_VALUE) or an array's element (WJB_ELEM). */
static void
push_number(JsonbParseState **state, JsonbIteratorToken token, double n)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall1(float8_numeric, Float8GetDatum(n)));
	pushJsonbValue(state, token, &v);
}

/* Pushes {"CapacityUnits": n} as a value. */
static void
push_units(JsonbParseState **state, double units)
{
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(state, "CapacityUnits");
	push_number(state, WJB_VALUE, units);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* Pushes the GlobalSecondaryIndexes (or, local, LocalSecondaryIndexes) map of a table's units, if any. */
static void
push_indexes(JsonbParseState **state, TableUnits *u, bool local)
{
	ListCell   *lc;
	bool		opened = false;

	foreach(lc, u->indexes)
	{
		IndexUnits *iu = (IndexUnits *) lfirst(lc);

		if (iu->local != local)
			continue;
		if (!opened)
		{
			ddb_push_key(state, local ? "LocalSecondaryIndexes" : "GlobalSecondaryIndexes");
			pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
			opened = true;
		}
		ddb_push_key(state, iu->index);
		push_units(state, iu->read + iu->write);
	}
	if (opened)
		pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* A table's read and write units with its indexes'. */
static void
table_totals(TableUnits *u, double *read, double *write)
{
	ListCell   *lc;

	*read = u->read;
	*write = u->write;
	foreach(lc, u->indexes)
	{
		*read += ((IndexUnits *) lfirst(lc))->read;
		*write += ((IndexUnits *) lfirst(lc))->write;
	}
}

/*
 * Pushes one table's ConsumedCapacity object: the total with its indexes,
 * and for INDEXES the Table's own units and each index's.
 */
static void
push_table(JsonbParseState **state, TableUnits *u, bool indexes)
{
	double		read;
	double		write;

	table_totals(u, &read, &write);
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_string(state, "TableName", u->table);
	ddb_push_key(state, "CapacityUnits");
	push_number(state, WJB_VALUE, read + write);
	if (read > 0)
	{
		ddb_push_key(state, "ReadCapacityUnits");
		push_number(state, WJB_VALUE, read);
	}
	if (write > 0)
	{
		ddb_push_key(state, "WriteCapacityUnits");
		push_number(state, WJB_VALUE, write);
	}
	if (indexes)
	{
		ddb_push_key(state, "Table");
		push_units(state, u->read + u->write);
		push_indexes(state, u, false);
		push_indexes(state, u, true);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/*
 * The response with ConsumedCapacity added when the request's
 * ReturnConsumedCapacity is TOTAL or INDEXES: one object for a single-table
 * operation, a list (one per table) for the batch and transaction ones.
 */
Jsonb *
api_capacity_response(Jsonb *request, Jsonb *response, bool per_table_list)
{
	char	   *mode = api_string(request, "ReturnConsumedCapacity");
	JsonbParseState *state = NULL;
	JsonbValue *result;
	ListCell   *lc;
	bool		indexes;

	if (mode == NULL || strcmp(mode, "NONE") == 0)
		return response;
	indexes = strcmp(mode, "INDEXES") == 0;
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&state, "ConsumedCapacity");
	if (per_table_list)
	{
		pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
		foreach(lc, request_units)
			push_table(&state, (TableUnits *) lfirst(lc), indexes);
		pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	}
	else if (request_units != NIL)
		push_table(&state, (TableUnits *) linitial(request_units), indexes);
	else
	{
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(response),
											  JsonbPGetDatum(JsonbValueToJsonb(result))));
}

/*
 * The units the current request used, by table, indexes included:
 * {"Table": [read, write], ...}, in CurrentMemoryContext; {} when nothing
 * was recorded.
 */
Jsonb *
api_capacity_usage(void)
{
	JsonbParseState *state = NULL;
	ListCell   *lc;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	foreach(lc, request_units)
	{
		TableUnits *u = (TableUnits *) lfirst(lc);
		double		read;
		double		write;

		table_totals(u, &read, &write);
		ddb_push_key(&state, u->table);
		pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
		push_number(&state, WJB_ELEM, read);
		push_number(&state, WJB_ELEM, write);
		pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	}
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}
