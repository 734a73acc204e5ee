/*
 * item_sql.c — the SQL functions over items, for people who write SQL:
 * ddb.put_item, ddb.get_item, ddb.delete_item, ddb.query, ddb.scan and
 * ddb.index_entry (docs/items.md).  Items are natural jsonb.
 */
#include "postgres.h"

#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "../key/ddb_key.h"
#include "item_store.h"

PG_FUNCTION_INFO_V1(ddb_put_item);
PG_FUNCTION_INFO_V1(ddb_get_item);
PG_FUNCTION_INFO_V1(ddb_delete_item);
PG_FUNCTION_INFO_V1(ddb_query);
PG_FUNCTION_INFO_V1(ddb_scan);
PG_FUNCTION_INFO_V1(ddb_item_expiry);

/* The table definition named by a text argument. */
static TableDef *
table_arg(FunctionCallInfo fcinfo, int n)
{
	if (PG_ARGISNULL(n))
		ddb_validation_error("The table name must not be null");
	return table_def_get(text_to_cstring(PG_GETARG_TEXT_PP(n)));
}

/* A key argument, or 0 when null. */
static Datum
key_arg(FunctionCallInfo fcinfo, int n)
{
	return PG_ARGISNULL(n) ? (Datum) 0 : PointerGetDatum(PG_GETARG_DDB_KEY_PP(n));
}

/* ddb.put_item(table_name, item, return_old): writes an item, returns the old one if asked. */
Datum
ddb_put_item(PG_FUNCTION_ARGS)
{
	TableDef   *def = table_arg(fcinfo, 0);
	Jsonb	   *item;
	Jsonb	   *old = NULL;

	if (PG_ARGISNULL(1))
		ddb_validation_error("The item must not be null");
	item = item_canonical(&PG_GETARG_JSONB_P(1)->root);
	store_put(def, item, NULL, !PG_ARGISNULL(2) && PG_GETARG_BOOL(2) ? &old : NULL);
	if (PG_ARGISNULL(2) || !PG_GETARG_BOOL(2) || old == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(old);
}

/* ddb.get_item(table_name, pk, sk): the item, or NULL. */
Datum
ddb_get_item(PG_FUNCTION_ARGS)
{
	TableDef   *def = table_arg(fcinfo, 0);
	Jsonb	   *item;

	if (PG_ARGISNULL(1))
		ddb_validation_error("The provided key element does not match the schema");
	item = store_get(def, key_arg(fcinfo, 1), key_arg(fcinfo, 2));
	if (item == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(item);
}

/* ddb.delete_item(table_name, pk, sk): deletes the item, returns it (or NULL). */
Datum
ddb_delete_item(PG_FUNCTION_ARGS)
{
	TableDef   *def = table_arg(fcinfo, 0);
	Jsonb	   *old;

	if (PG_ARGISNULL(1))
		ddb_validation_error("The provided key element does not match the schema");
	store_delete(def, key_arg(fcinfo, 1), key_arg(fcinfo, 2), NULL, &old);
	if (old == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(old);
}

/* Collects rows into a tuplestore, up to a limit. */
typedef struct RowSink
{
	Tuplestorestate *store;
	TupleDesc	desc;
	int64		remaining;		/* -1: no limit */
} RowSink;

/* RowCallback that stores one item per row. */
static bool
sink_row(void *arg, Jsonb *item, int32 item_size, RowKeys *keys)
{
	RowSink    *sink = (RowSink *) arg;
	Datum		value = JsonbPGetDatum(item);
	bool		isnull = false;

	if (sink->remaining == 0)
		return false;
	tuplestore_putvalues(sink->store, sink->desc, &value, &isnull);
	if (sink->remaining > 0)
		sink->remaining--;
	return sink->remaining != 0;
}

/* Reads the sort condition name of ddb.query. */
static SortOp
sort_op_arg(const char *name)
{
	static const struct
	{
		const char *name;
		SortOp		op;
	}			ops[] = {
		{"=", SORT_EQ}, {"<", SORT_LT}, {"<=", SORT_LE}, {">", SORT_GT}, {">=", SORT_GE},
		{"between", SORT_BETWEEN}, {"begins_with", SORT_BEGINS_WITH}, {"^@", SORT_BEGINS_WITH},
		{"<@", SORT_UNDER}, {"under", SORT_UNDER}
	};

	for (size_t i = 0; i < lengthof(ops); i++)
		if (pg_strcasecmp(name, ops[i].name) == 0)
			return ops[i].op;
	ereport(ERROR,
			(errcode(ERRCODE_DDB_VALIDATION),
			 errmsg("unknown sort key condition \"%s\"", name),
			 errhint("Use =, <, <=, >, >=, between, begins_with (^@) or under (<@).")));
	return SORT_NONE;
}

/* Runs a read into the function's tuplestore (materialize mode). */
static void
read_into_result(FunctionCallInfo fcinfo, ReadRequest *req, int limit_arg)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	RowSink		sink;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	sink.store = rsinfo->setResult;
	sink.desc = rsinfo->setDesc;
	sink.remaining = PG_ARGISNULL(limit_arg) ? -1 : PG_GETARG_INT32(limit_arg);
	if (sink.remaining < -1 || (!PG_ARGISNULL(limit_arg) && sink.remaining <= 0))
		ddb_validation_error("1 validation error detected: Value at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1");
	req->batch_size = sink.remaining > 0 && sink.remaining < 256 ? (int) sink.remaining : 0;
	store_read(req, sink_row, &sink);
}

/*
 * ddb.query(table_name, pk, sk_condition, sk, sk_end, index_name, ascending,
 * max_items): the items of one partition key, in sort key order.
 */
Datum
ddb_query(PG_FUNCTION_ARGS)
{
	ReadRequest req = {0};
	KeySchema  *keys;

	req.def = table_arg(fcinfo, 0);
	req.index = PG_ARGISNULL(5) ? NULL : table_def_index(req.def, text_to_cstring(PG_GETARG_TEXT_PP(5)));
	keys = req.index ? &req.index->keys : &req.def->keys;
	if (PG_ARGISNULL(1))
		ddb_validation_error("Query condition missed key schema element: %s", keys->hash_key);
	req.pk = key_arg(fcinfo, 1);
	req.op = PG_ARGISNULL(2) ? SORT_NONE : sort_op_arg(text_to_cstring(PG_GETARG_TEXT_PP(2)));
	req.sk1 = key_arg(fcinfo, 3);
	req.sk2 = key_arg(fcinfo, 4);
	if (!store_key_has_type(req.pk, keys->hash_type) ||
		(req.sk1 && !store_key_has_type(req.sk1, keys->range_type)) ||
		(req.sk2 && !store_key_has_type(req.sk2, keys->range_type)))
		ddb_validation_error("One or more parameter values were invalid: Condition parameter type does not match schema type");
	if (req.op == SORT_NONE && (req.sk1 || req.sk2))
		ddb_validation_error("a sort key value (sk) needs a sort key condition (sk_condition)");
	if (req.op != SORT_NONE && keys->range_key == NULL)
		ddb_validation_error("Query key condition not supported: the key schema has no sort key");
	if (req.op != SORT_NONE && req.sk1 == (Datum) 0)
		ddb_validation_error("the sort key condition needs a value (sk)");
	if (req.op == SORT_BETWEEN && req.sk2 == (Datum) 0)
		ddb_validation_error("between needs an upper bound (sk_end)");
	req.forward = PG_ARGISNULL(6) || PG_GETARG_BOOL(6);
	read_into_result(fcinfo, &req, 7);
	return (Datum) 0;
}

/* ddb.scan(table_name, index_name, max_items): every item, in key order. */
Datum
ddb_scan(PG_FUNCTION_ARGS)
{
	ReadRequest req = {0};

	req.def = table_arg(fcinfo, 0);
	req.index = PG_ARGISNULL(1) ? NULL : table_def_index(req.def, text_to_cstring(PG_GETARG_TEXT_PP(1)));
	req.scan = true;
	req.forward = true;
	read_into_result(fcinfo, &req, 2);
	return (Datum) 0;
}

/* ddb.item_expiry(table_name, item): the TTL epoch seconds the table reads from an item, or NULL. */
Datum
ddb_item_expiry(PG_FUNCTION_ARGS)
{
	TableDef   *def = table_arg(fcinfo, 0);
	int64		expiry = store_item_expiry(def, &item_canonical(&PG_GETARG_JSONB_P(1)->root)->root);

	if (expiry < 0)
		PG_RETURN_NULL();
	PG_RETURN_INT64(expiry);
}
