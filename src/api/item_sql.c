/*
 * item_sql.c — the SQL functions over items, for people who write SQL:
 * ddb.put_item, ddb.get_item, ddb.update_item, ddb.delete_item, ddb.query,
 * ddb.scan and ddb.item_expiry, and ddb.from_dynamodb / ddb.to_dynamodb
 * between natural items and DynamoDB JSON (docs/items.md).  Items and placeholder values
 * are natural jsonb.  Expressions (condition, update, filter, projection) are
 * the ones ddb.execute serves, with its checks and errors; without them a
 * call takes the short path straight to the store.
 */
#include "postgres.h"

#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "../key/ddb_key.h"
#include "../table/table_access.h"
#include "api.h"

PG_FUNCTION_INFO_V1(ddb_put_item);
PG_FUNCTION_INFO_V1(ddb_get_item);
PG_FUNCTION_INFO_V1(ddb_update_item);
PG_FUNCTION_INFO_V1(ddb_delete_item);
PG_FUNCTION_INFO_V1(ddb_query);
PG_FUNCTION_INFO_V1(ddb_scan);
PG_FUNCTION_INFO_V1(ddb_item_expiry);
PG_FUNCTION_INFO_V1(ddb_from_dynamodb);
PG_FUNCTION_INFO_V1(ddb_to_dynamodb);

/*
 * The table definition named by a text argument, for the DynamoDB action
 * the function stands for (named in refusals: table_access.h).
 */
static TableDef *
table_arg(FunctionCallInfo fcinfo, int n, const char *action)
{
	table_access_set_action(action);
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

/* A text argument as a C string, or NULL. */
static char *
text_arg(FunctionCallInfo fcinfo, int n)
{
	return PG_ARGISNULL(n) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(n));
}

/* A jsonb argument, or NULL. */
static Jsonb *
jsonb_arg(FunctionCallInfo fcinfo, int n)
{
	return PG_ARGISNULL(n) ? NULL : PG_GETARG_JSONB_P(n);
}

/*
 * The placeholders of a call from its names and vals arguments; with no
 * expression to use them, giving either is an error, as in DynamoDB.
 */
static void
placeholders_arg(FunctionCallInfo fcinfo, int names_arg, int values_arg, bool has_expression,
				 Placeholders *ph)
{
	Jsonb	   *names = jsonb_arg(fcinfo, names_arg);
	Jsonb	   *values = values_arg >= 0 ? jsonb_arg(fcinfo, values_arg) : NULL;

	if (!has_expression && (names || values))
		ddb_validation_error("names and vals can only be given with an expression that uses them");
	itemexpr_sql_placeholders(ph, names, values);
}

/*
 * The condition of a write from its condition, names and vals arguments
 * (three in a row from cond_arg), or NULL for none.
 */
static WriteCondition *
condition_arg(FunctionCallInfo fcinfo, int cond_arg)
{
	char	   *condition = text_arg(fcinfo, cond_arg);
	Placeholders *ph;			/* the condition keeps it: not on this stack */
	WriteCondition *cond;

	if (condition == NULL && PG_ARGISNULL(cond_arg + 1) && PG_ARGISNULL(cond_arg + 2))
		return NULL;
	ph = palloc(sizeof(Placeholders));
	placeholders_arg(fcinfo, cond_arg + 1, cond_arg + 2, condition != NULL, ph);
	cond = itemexpr_write_condition(ph, condition);
	itemexpr_check_unused(ph);
	return cond;
}

/* ddb.put_item(table_name, item, return_old, condition, names, vals): writes an item, returns the old one if asked. */
Datum
ddb_put_item(PG_FUNCTION_ARGS)
{
	TableDef   *def = table_arg(fcinfo, 0, "PutItem");
	bool		return_old = !PG_ARGISNULL(2) && PG_GETARG_BOOL(2);
	WriteCondition *cond = condition_arg(fcinfo, 3);
	Jsonb	   *item;
	Jsonb	   *old = NULL;

	if (PG_ARGISNULL(1))
		ddb_validation_error("The item must not be null");
	item = item_canonical(&PG_GETARG_JSONB_P(1)->root);
	if (!store_put(def, item, cond, (return_old || cond) ? &old : NULL))
		itemexpr_raise_condition_failed(text_arg(fcinfo, 3), false, NULL);
	if (!return_old || old == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(old);
}

/* ddb.get_item(table_name, pk, sk, projection, names): the item (projected), or NULL. */
Datum
ddb_get_item(PG_FUNCTION_ARGS)
{
	TableDef   *def = table_arg(fcinfo, 0, "GetItem");
	char	   *projection_text = text_arg(fcinfo, 3);
	ProjectionNode *projection = NULL;
	Jsonb	   *item;

	if (PG_ARGISNULL(1))
		ddb_validation_error("The provided key element does not match the schema");
	if (projection_text || !PG_ARGISNULL(4))
	{
		Placeholders ph;

		placeholders_arg(fcinfo, 4, -1, projection_text != NULL, &ph);
		projection = itemexpr_projection(&ph, projection_text);
		itemexpr_check_unused(&ph);
	}
	item = store_get(def, key_arg(fcinfo, 1), key_arg(fcinfo, 2));
	if (item == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(projection ? itemexpr_project(projection, item) : item);
}

/*
 * ddb.update_item(table_name, pk, sk, update, condition, names, vals,
 * return_values): UpdateItem; returns what return_values asks for
 * (ALL_NEW by default), or NULL.
 */
Datum
ddb_update_item(PG_FUNCTION_ARGS)
{
	TableDef   *def = table_arg(fcinfo, 0, "UpdateItem");
	char	   *update_text = text_arg(fcinfo, 3);
	char	   *condition = text_arg(fcinfo, 4);
	const char *rv = api_update_return_values(text_arg(fcinfo, 7));
	Placeholders ph;
	WriteCondition *cond;
	ExprUpdate *update = NULL;
	ProjectionNode *paths = NULL;
	Jsonb	   *old = NULL;
	Jsonb	   *written = NULL;
	Jsonb	   *returned;

	if (PG_ARGISNULL(1))
		ddb_validation_error("The provided key element does not match the schema");
	placeholders_arg(fcinfo, 5, 6, update_text || condition, &ph);
	if (update_text)
		update = itemexpr_parse_update(def, &ph, update_text, &paths);
	cond = itemexpr_write_condition(&ph, condition);
	itemexpr_check_unused(&ph);
	if (!itemexpr_store_update(def, key_arg(fcinfo, 1), key_arg(fcinfo, 2), update, &ph, cond, &old, &written))
		itemexpr_raise_condition_failed(condition, false, NULL);
	returned = itemexpr_update_returned(rv, paths, old, written);
	if (returned == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(returned);
}

/* ddb.delete_item(table_name, pk, sk, condition, names, vals): deletes the item, returns it (or NULL). */
Datum
ddb_delete_item(PG_FUNCTION_ARGS)
{
	TableDef   *def = table_arg(fcinfo, 0, "DeleteItem");
	WriteCondition *cond;
	Jsonb	   *old;

	if (PG_ARGISNULL(1))
		ddb_validation_error("The provided key element does not match the schema");
	cond = condition_arg(fcinfo, 3);
	if (!store_delete(def, key_arg(fcinfo, 1), key_arg(fcinfo, 2), cond, &old))
		itemexpr_raise_condition_failed(text_arg(fcinfo, 3), false, NULL);
	if (old == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(old);
}

/* Collects rows into a tuplestore: filtered and projected when asked, up to a limit. */
typedef struct RowSink
{
	Tuplestorestate *store;
	TupleDesc	desc;
	int64		remaining;		/* items still to return; -1: no limit */
	ExprNode   *filter;			/* or NULL */
	ProjectionNode *projection; /* or NULL */
	ExprHost	host;
	HostContext host_ctx;
} RowSink;

/* RowCallback that stores each item the filter keeps, projected, one per row. */
static bool
sink_row(void *arg, Jsonb *item, int32 item_size, RowKeys *keys)
{
	RowSink    *sink = (RowSink *) arg;
	Datum		value;
	bool		isnull = false;

	if (sink->remaining == 0)
		return false;
	if (sink->filter)
	{
		sink->host_ctx.item = &item->root;
		if (!expr_eval_condition(sink->filter, &sink->host))
			return true;
	}
	value = JsonbPGetDatum(sink->projection ? itemexpr_project(sink->projection, item) : item);
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

/*
 * Runs a read into the function's tuplestore (materialize mode); the four
 * arguments from first_expr_arg on are filter, projection, names and vals.
 */
static void
read_into_result(FunctionCallInfo fcinfo, ReadRequest *req, int limit_arg, int first_expr_arg)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *filter = text_arg(fcinfo, first_expr_arg);
	char	   *projection = text_arg(fcinfo, first_expr_arg + 1);
	RowSink		sink = {0};

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	sink.store = rsinfo->setResult;
	sink.desc = rsinfo->setDesc;
	sink.remaining = PG_ARGISNULL(limit_arg) ? -1 : PG_GETARG_INT32(limit_arg);
	if (sink.remaining < -1 || (!PG_ARGISNULL(limit_arg) && sink.remaining <= 0))
		ddb_validation_error("1 validation error detected: Value at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1");
	if (filter || projection || !PG_ARGISNULL(first_expr_arg + 2) || !PG_ARGISNULL(first_expr_arg + 3))
	{
		Placeholders *ph = palloc(sizeof(Placeholders));

		placeholders_arg(fcinfo, first_expr_arg + 2, first_expr_arg + 3, filter || projection, ph);
		sink.filter = itemexpr_parse_filter(ph, filter);
		if (sink.filter)
			itemexpr_host(&sink.host_ctx, ph, "FilterExpression", &sink.host);
		sink.projection = itemexpr_projection(ph, projection);
		itemexpr_check_unused(ph);
	}
	/* max_items counts the items returned: with a filter, rows read are not bounded by it */
	req->batch_size = sink.filter == NULL && sink.remaining > 0 && sink.remaining < 256 ? (int) sink.remaining : 0;
	store_read(req, sink_row, &sink);
}

/*
 * ddb.query(table_name, pk, sk_condition, sk, sk_end, index_name, ascending,
 * max_items, filter, projection, names, vals): the items of one partition
 * key, in sort key order.
 */
Datum
ddb_query(PG_FUNCTION_ARGS)
{
	ReadRequest req = {0};
	KeySchema  *keys;

	req.def = table_arg(fcinfo, 0, "Query");
	req.index = PG_ARGISNULL(5) ? NULL : table_def_index(req.def, text_to_cstring(PG_GETARG_TEXT_PP(5)));
	keys = req.index ? &req.index->keys : &req.def->keys;
	if (KEY_SCHEMA_HASH_TUPLE(keys) || KEY_SCHEMA_RANGE_TUPLE(keys))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_VALIDATION),
				 errmsg("ddb.query reads indexes whose partition and sort keys have one attribute each"),
				 errhint("Query index %s, whose key has several attributes, with ddb.execute('Query', ...).",
						 req.index->name)));
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
	read_into_result(fcinfo, &req, 7, 8);
	return (Datum) 0;
}

/* ddb.scan(table_name, index_name, max_items, filter, projection, names, vals): every item, in key order. */
Datum
ddb_scan(PG_FUNCTION_ARGS)
{
	ReadRequest req = {0};

	req.def = table_arg(fcinfo, 0, "Scan");
	req.index = PG_ARGISNULL(1) ? NULL : table_def_index(req.def, text_to_cstring(PG_GETARG_TEXT_PP(1)));
	req.scan = true;
	req.forward = true;
	read_into_result(fcinfo, &req, 2, 3);
	return (Datum) 0;
}

/* ddb.item_expiry(table_name, item): the TTL epoch seconds the table reads from an item, or NULL. */
Datum
ddb_item_expiry(PG_FUNCTION_ARGS)
{
	TableDef   *def = table_arg(fcinfo, 0, "GetItem");
	int64		expiry = store_item_expiry(def, &item_canonical(&PG_GETARG_JSONB_P(1)->root)->root);

	if (expiry < 0)
		PG_RETURN_NULL();
	PG_RETURN_INT64(expiry);
}

/* The object a conversion function was given; anything else is refused. */
static JsonbContainer *
item_object_arg(FunctionCallInfo fcinfo)
{
	Jsonb	   *item = PG_GETARG_JSONB_P(0);

	if (!JB_ROOT_IS_OBJECT(item) || JB_ROOT_IS_SCALAR(item))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_SERIALIZATION),
				 errmsg("An item must be a JSON object of attributes")));
	return &item->root;
}

/* ddb.from_dynamodb(item): a DynamoDB-JSON item ({"a": {"S": "x"}}) as a natural item. */
Datum
ddb_from_dynamodb(PG_FUNCTION_ARGS)
{
	PG_RETURN_JSONB_P(item_from_dynamodb(item_object_arg(fcinfo)));
}

/* ddb.to_dynamodb(item): a natural item as DynamoDB JSON. */
Datum
ddb_to_dynamodb(PG_FUNCTION_ARGS)
{
	PG_RETURN_JSONB_P(item_to_dynamodb(&item_canonical(item_object_arg(fcinfo))->root));
}
