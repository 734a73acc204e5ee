/*
 * capacity.c — ConsumedCapacity: the read and write units a request used,
 * per table, by DynamoDB's rules (a read unit per 4 KB read, half of it for
 * an eventually consistent read; a write unit per 1 KB written; at least one
 * per item).  The operations record what they read and write; ddb.execute
 * adds the figures to the response when ReturnConsumedCapacity asks.
 * Writes to GSIs are not counted yet.
 */
#include "postgres.h"

#include <math.h>

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "../ddb_errors.h"
#include "api.h"

/* The units one table used in the current request. */
typedef struct TableUnits
{
	char	   *table;
	double		read;
	double		write;
} TableUnits;

/* The current request's units (reset by each ddb.execute). */
static List *request_units = NIL;

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
	/* the list lives as long as the request's top context */
	old = MemoryContextSwitchTo(TopTransactionContext);
	u = palloc0(sizeof(TableUnits));
	u->table = pstrdup(table);
	request_units = lappend(request_units, u);
	MemoryContextSwitchTo(old);
	return u;
}

/* Forgets the units recorded so far (the start of a request). */
void
api_capacity_reset(void)
{
	request_units = NIL;
}

/* Records a read of bytes from a table (one GetItem, or a Query's or Scan's page). */
void
api_capacity_read(const char *table, int64 bytes, bool consistent)
{
	double		units = Max(1.0, ceil((double) bytes / 4096.0));

	units_of(table)->read += consistent ? units : units / 2.0;
}

/* Records a write of one item of bytes to a table. */
void
api_capacity_write(const char *table, int64 bytes)
{
	units_of(table)->write += Max(1.0, ceil((double) bytes / 1024.0));
}

/* Pushes {"CapacityUnits": n} as a value. */
static void
push_units(JsonbParseState **state, double units)
{
	JsonbValue	v;

	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	api_push_key(state, "CapacityUnits");
	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall1(float8_numeric, Float8GetDatum(units)));
	pushJsonbValue(state, WJB_VALUE, &v);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* Pushes one table's ConsumedCapacity object (with the Table breakdown for INDEXES). */
static void
push_table(JsonbParseState **state, TableUnits *u, bool indexes)
{
	JsonbValue	v;
	double		total = u->read + u->write;

	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	api_push_key(state, "TableName");
	v.type = jbvString;
	v.val.string.val = u->table;
	v.val.string.len = (int) strlen(u->table);
	pushJsonbValue(state, WJB_VALUE, &v);
	api_push_key(state, "CapacityUnits");
	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall1(float8_numeric, Float8GetDatum(total)));
	pushJsonbValue(state, WJB_VALUE, &v);
	if (u->read > 0)
	{
		api_push_key(state, "ReadCapacityUnits");
		v.val.numeric = DatumGetNumeric(DirectFunctionCall1(float8_numeric, Float8GetDatum(u->read)));
		pushJsonbValue(state, WJB_VALUE, &v);
	}
	if (u->write > 0)
	{
		api_push_key(state, "WriteCapacityUnits");
		v.val.numeric = DatumGetNumeric(DirectFunctionCall1(float8_numeric, Float8GetDatum(u->write)));
		pushJsonbValue(state, WJB_VALUE, &v);
	}
	if (indexes)
	{
		api_push_key(state, "Table");
		push_units(state, total);
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
	api_push_key(&state, "ConsumedCapacity");
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
