/*
 * item_ops.c — the item operations of ddb.execute: PutItem, GetItem,
 * DeleteItem, Query, Scan, BatchWriteItem and BatchGetItem, with DynamoDB's
 * request and response bodies.
 */
#include "postgres.h"

#include <math.h>

#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "../key/ddb_key.h"
#include "api.h"

/* DynamoDB's page: a Query or Scan stops once it has read 1 MB. */
#define PAGE_MAX_BYTES (1024 * 1024)
#define BATCH_WRITE_MAX 25
#define BATCH_GET_MAX 100

/* Compares two ddb_key datums in DynamoDB order. */
static int
key_datum_compare(Datum a, Datum b)
{
	struct varlena *x = PG_DETOAST_DATUM_PACKED(a);
	struct varlena *y = PG_DETOAST_DATUM_PACKED(b);

	return key_compare_encoded(DDB_KEY_DATA(x), DDB_KEY_LEN(x), DDB_KEY_DATA(y), DDB_KEY_LEN(y));
}

/* A response holding one item under key, or {} when item is NULL. */
static Jsonb *
item_response(const char *key, Jsonb *item)
{
	JsonbParseState *state = NULL;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	if (item)
	{
		ddb_push_key(&state, key);
		item_push_dynamodb(&state, &item->root);
	}
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* The table named by TableName. */
static TableDef *
request_table(Jsonb *request)
{
	return table_def_get(api_table_name(api_required_string(request, "TableName", "tableName")));
}

/* ReturnItemCollectionMetrics: true for SIZE (the value was checked up front, api_check_request_members). */
bool
api_collection_metrics_wanted(Jsonb *request)
{
	char	   *mode = api_string(request, "ReturnItemCollectionMetrics");

	return mode != NULL && strcmp(mode, "SIZE") == 0;
}

/* True when the table has a local secondary index: only then does DynamoDB report item collections. */
static bool
has_local_index(TableDef *def)
{
	for (int i = 0; i < def->nindexes; i++)
		if (def->indexes[i].local)
			return true;
	return false;
}

/*
 * Pushes one item collection's metrics as DynamoDB reports them: the
 * collection's hash key and its size in GB as a range [whole GB, next GB],
 * from the items stored under that hash key.
 */
static void
push_collection_metrics(JsonbParseState **state, TableDef *def, Datum pk)
{
	Oid			argtypes[1] = {ddb_key_type_oid()};
	Datum		args[1] = {pk};
	bool		isnull;
	double		gb;
	JsonbValue	v;

	SPI_connect();
	if (SPI_execute_with_args(psprintf("SELECT COALESCE(pg_catalog.sum(item_size), 0)::pg_catalog.float8 FROM %s "
									   "WHERE pk OPERATOR(pg_catalog.=) $1",
									   quote_qualified_identifier(def->schema_name, def->relation_name)),
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not size an item collection");
	gb = floor(DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) / 1073741824.0);
	SPI_finish();

	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(state, "ItemCollectionKey");
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(state, def->keys.hash_key);
	item_key_to_value(pk, &v);
	item_push_dynamodb_value(state, &v);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
	ddb_push_key(state, "SizeEstimateRangeGB");
	pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall1(float8_numeric, Float8GetDatum(gb)));
	pushJsonbValue(state, WJB_ELEM, &v);
	v.val.numeric = DatumGetNumeric(DirectFunctionCall1(float8_numeric, Float8GetDatum(gb + 1.0)));
	pushJsonbValue(state, WJB_ELEM, &v);
	pushJsonbValue(state, WJB_END_ARRAY, NULL);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* The response with ItemCollectionMetrics added when the table has local secondary indexes. */
static Jsonb *
with_collection_metrics(TableDef *def, Datum pk, Jsonb *response)
{
	JsonbParseState *state = NULL;

	if (!has_local_index(def))
		return response;
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&state, "ItemCollectionMetrics");
	push_collection_metrics(&state, def, pk);
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(response),
											  JsonbPGetDatum(JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL)))));
}

/*
 * The ItemCollectionMetrics of a batch or transaction: per table with local
 * secondary indexes, one entry for each item collection written to.
 */
void
api_push_collection_metrics_map(JsonbParseState **state, TableDef **defs, Datum *pks, int n)
{
	bool		opened = false;

	for (int i = 0; i < n; i++)
	{
		bool		first_of_table = true;

		for (int j = 0; j < i; j++)
			first_of_table &= defs[j] != defs[i];
		if (!first_of_table || !has_local_index(defs[i]))
			continue;
		if (!opened)
		{
			ddb_push_key(state, "ItemCollectionMetrics");
			pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
			opened = true;
		}
		ddb_push_key(state, defs[i]->name);
		pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
		for (int k = i; k < n; k++)
		{
			bool		first_of_collection = defs[k] == defs[i];

			for (int j = i; j < k && first_of_collection; j++)
				first_of_collection = defs[j] != defs[k] || key_datum_compare(pks[j], pks[k]) != 0;
			if (first_of_collection)
				push_collection_metrics(state, defs[k], pks[k]);
		}
		pushJsonbValue(state, WJB_END_ARRAY, NULL);
	}
	if (opened)
		pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* ReturnValues: true for ALL_OLD, false for NONE; others are refused. */
static bool
return_all_old(Jsonb *request)
{
	char	   *rv = api_string(request, "ReturnValues");

	if (rv == NULL || strcmp(rv, "NONE") == 0)
		return false;
	if (strcmp(rv, "ALL_OLD") == 0)
		return true;
	ddb_validation_error("Return values set to invalid value");
	return false;
}

/* The request's ConditionExpression as a WriteCondition, or NULL when it has none. */
static WriteCondition *
request_condition(Jsonb *request, Placeholders *ph)
{
	return itemexpr_write_condition(ph, api_string(request, "ConditionExpression"));
}

/* Raises ConditionalCheckFailedException for a request, honouring ReturnValuesOnConditionCheckFailure. */
static void
report_condition_failed(Jsonb *request, Jsonb *current)
{
	char	   *rv = api_string(request, "ReturnValuesOnConditionCheckFailure");

	itemexpr_raise_condition_failed(api_string(request, "ConditionExpression"),
						 rv && strcmp(rv, "ALL_OLD") == 0, current);
}

/* Checks ReturnValuesOnConditionCheckFailure: NONE or ALL_OLD. */
static void
check_return_on_failure(Jsonb *request)
{
	char	   *rv = api_string(request, "ReturnValuesOnConditionCheckFailure");

	if (rv && strcmp(rv, "NONE") != 0 && strcmp(rv, "ALL_OLD") != 0)
		ddb_validation_error("1 validation error detected: Value '%s' at 'returnValuesOnConditionCheckFailure' failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, NONE]",
							 rv);
}

/* PutItem. */
Jsonb *
api_put_item(Jsonb *request)
{
	TableDef   *def = request_table(request);
	JsonbContainer *item = api_object(request, "Item");
	bool		all_old = return_all_old(request);
	Placeholders ph;
	WriteCondition *cond;
	Jsonb	   *natural;
	Jsonb	   *old = NULL;
	bool		metrics = api_collection_metrics_wanted(request);
	Datum		pk;
	Datum		sk;

	if (item == NULL)
		api_missing("item");
	request = api_legacy_to_expressions(request, LEGACY_EXPECTED, "ConditionExpression is null");
	check_return_on_failure(request);
	api_expr_context(request, &ph);
	cond = request_condition(request, &ph);
	if (cond == NULL)
		api_reject_placeholders(request, "ConditionExpression is null");
	itemexpr_check_unused(&ph);
	natural = item_from_dynamodb(item);
	if (!store_put(def, natural, cond, (all_old || cond) ? &old : NULL))
		report_condition_failed(request, old);
	api_capacity_write_item(def->name, natural, NULL);
	if (!metrics)
		return item_response("Attributes", all_old ? old : NULL);
	store_item_keys(def, natural, &pk, &sk);
	return with_collection_metrics(def, pk, item_response("Attributes", all_old ? old : NULL));
}

/* GetItem. */
Jsonb *
api_get_item(Jsonb *request)
{
	TableDef   *def = request_table(request);
	Datum		pk;
	Datum		sk;

	Placeholders ph;
	ProjectionNode *projection;
	Jsonb	   *item;
	bool		consistent;

	request = api_legacy_to_expressions(request, LEGACY_ATTRIBUTES_TO_GET, NULL);
	api_expr_context(request, &ph);
	projection = itemexpr_projection(&ph, api_string(request, "ProjectionExpression"));
	if (projection == NULL)
		api_reject_placeholders(request, NULL);
	itemexpr_check_unused(&ph);
	consistent = api_bool(request, "ConsistentRead", false);
	api_table_key(def, api_object(request, "Key"), &pk, &sk);
	item = store_get(def, pk, sk);
	api_capacity_read_item(def->name, item, consistent);
	if (item && projection)
		item = itemexpr_project(projection, item);
	return item_response("Item", item);
}

/* DeleteItem. */
Jsonb *
api_delete_item(Jsonb *request)
{
	TableDef   *def = request_table(request);
	bool		all_old = return_all_old(request);
	Placeholders ph;
	WriteCondition *cond;
	Datum		pk;
	Datum		sk;
	Jsonb	   *old = NULL;
	bool		metrics = api_collection_metrics_wanted(request);
	Jsonb	   *response;

	request = api_legacy_to_expressions(request, LEGACY_EXPECTED, "ConditionExpression is null");
	check_return_on_failure(request);
	api_expr_context(request, &ph);
	cond = request_condition(request, &ph);
	if (cond == NULL)
		api_reject_placeholders(request, "ConditionExpression is null");
	itemexpr_check_unused(&ph);
	api_table_key(def, api_object(request, "Key"), &pk, &sk);
	if (!store_delete(def, pk, sk, cond, &old))
		report_condition_failed(request, old);
	api_capacity_write_item(def->name, old, NULL);
	response = all_old ? item_response("Attributes", old) : ddb_empty_object();
	return metrics ? with_collection_metrics(def, pk, response) : response;
}

/* ConditionCheck (TransactWriteItems only): the condition against the item, writing nothing. */
Jsonb *
api_condition_check(Jsonb *request)
{
	TableDef   *def = request_table(request);
	Placeholders ph;
	WriteCondition *cond;
	Datum		pk;
	Datum		sk;
	Jsonb	   *current;

	check_return_on_failure(request);
	api_expr_context(request, &ph);
	cond = request_condition(request, &ph);
	if (cond == NULL)
		api_missing("conditionExpression");
	itemexpr_check_unused(&ph);
	api_table_key(def, api_object(request, "Key"), &pk, &sk);
	if (!store_check(def, pk, sk, cond, &current))
		report_condition_failed(request, current);
	return ddb_empty_object();
}

/* A ReturnValues option of UpdateItem (NULL: NONE), checked: NONE, ALL_OLD, UPDATED_OLD, ALL_NEW or UPDATED_NEW. */
const char *
api_update_return_values(const char *rv)
{
	static const char *const allowed[] = {"NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"};

	if (rv == NULL)
		return "NONE";
	for (size_t i = 0; i < lengthof(allowed); i++)
		if (strcmp(rv, allowed[i]) == 0)
			return allowed[i];
	ddb_validation_error("Return values set to invalid value");
	return NULL;
}

/* UpdateItem. */
Jsonb *
api_update_item(Jsonb *request)
{
	TableDef   *def = request_table(request);
	const char *rv = api_update_return_values(api_string(request, "ReturnValues"));
	char	   *text;
	Placeholders ph;
	WriteCondition *cond;
	ExprUpdate *update = NULL;
	ProjectionNode *paths = NULL;
	Datum		pk;
	Datum		sk;
	Jsonb	   *old = NULL;
	Jsonb	   *written = NULL;
	bool		metrics = api_collection_metrics_wanted(request);
	Jsonb	   *response;

	request = api_legacy_to_expressions(request, LEGACY_EXPECTED | LEGACY_ATTRIBUTE_UPDATES,
										"UpdateExpression and ConditionExpression are null");
	text = api_string(request, "UpdateExpression");
	check_return_on_failure(request);
	api_expr_context(request, &ph);
	api_table_key(def, api_object(request, "Key"), &pk, &sk);
	if (text)
		update = itemexpr_parse_update(def, &ph, text, &paths);
	cond = request_condition(request, &ph);
	if (text == NULL && cond == NULL)
		api_reject_placeholders(request, "UpdateExpression and ConditionExpression are null");
	itemexpr_check_unused(&ph);

	if (!itemexpr_store_update(def, pk, sk, update, &ph, cond, &old, &written))
		report_condition_failed(request, old);
	api_capacity_write_item(def->name, old, written);
	response = strcmp(rv, "NONE") == 0 ? ddb_empty_object()
		: item_response("Attributes", itemexpr_update_returned(rv, paths, old, written));
	return metrics ? with_collection_metrics(def, pk, response) : response;
}

/* Reads an ExclusiveStartKey for a read (table keys, plus index keys for an index). */
static void
read_start_key(ReadRequest *req, JsonbContainer *start)
{
	KeySchema  *ik = req->index ? &req->index->keys : NULL;
	JsonbValue	av;
	JsonbValue	natural;

	req->has_start = true;
	{
		const char *names[4] = {req->def->keys.hash_key, req->def->keys.range_key,
		ik ? ik->hash_key : NULL, ik ? ik->range_key : NULL};
		char		types[4] = {req->def->keys.hash_type, req->def->keys.range_type,
		ik ? ik->hash_type : 0, ik ? ik->range_type : 0};
		Datum	   *slots[4] = {&req->start.pk, &req->start.sk, &req->start.gpk, &req->start.gsk};

		for (int i = 0; i < 4; i++)
		{
			KeyRole		role = {names[i], NULL, i % 2 == 1};

			*slots[i] = (Datum) 0;
			if (names[i] == NULL)
				continue;
			if (getKeyJsonValueFromContainer(start, names[i], (int) strlen(names[i]), &av) == NULL)
				ddb_validation_error("The provided starting key is invalid: The provided key element does not match the schema");
			item_value_from_dynamodb(&av, &natural);
			if (!item_value_to_key(&natural, types[i], &role, slots[i]))
				ddb_validation_error("The provided starting key is invalid: The provided key element does not match the schema");
		}
	}
}

/* A Query or Scan response in the making. */
typedef struct PageBuilder
{
	ReadRequest *req;
	JsonbParseState *state;		/* the Items array, when items are returned */
	bool		count_only;		/* Select COUNT */
	int64		limit;			/* -1: none; counts rows read, before the filter */
	int64		count;			/* rows returned */
	int64		scanned;		/* rows read */
	int64		bytes;			/* of the rows read */
	ExprNode   *filter;			/* FilterExpression, or NULL */
	ProjectionNode *projection; /* ProjectionExpression, or NULL */
	ExprHost	host;
	HostContext host_ctx;
	bool		more;			/* stopped early: LastEvaluatedKey is due */
	RowKeys		last;
	MemoryContext cxt;
} PageBuilder;

/* Copies a key datum into the page's context (0 stays 0). */
static Datum
copy_key(Datum key, MemoryContext cxt)
{
	MemoryContext old;
	struct varlena *k;
	Datum		copy;

	if (key == (Datum) 0)
		return key;
	old = MemoryContextSwitchTo(cxt);
	k = PG_DETOAST_DATUM_PACKED(key);
	copy = PointerGetDatum(ddb_key_from_encoded(DDB_KEY_DATA(k), DDB_KEY_LEN(k)));
	MemoryContextSwitchTo(old);
	return copy;
}

/* RowCallback of Query and Scan: adds a row unless the page is full. */
static bool
page_row(void *arg, Jsonb *item, int32 item_size, RowKeys *keys)
{
	PageBuilder *page = (PageBuilder *) arg;
	MemoryContext old;

	/* the page has read Limit rows, or 1 MB: stop before this row */
	if ((page->limit >= 0 && page->scanned >= page->limit) ||
		(page->scanned > 0 && page->bytes + item_size > PAGE_MAX_BYTES))
	{
		page->more = true;
		return false;
	}
	page->scanned++;
	page->bytes += item_size;
	page->host_ctx.item = &item->root;
	if (page->filter == NULL || expr_eval_condition(page->filter, &page->host))
	{
		/* the tree holds pointers into the item, so it must outlive the SPI row */
		old = MemoryContextSwitchTo(page->cxt);
		if (!page->count_only)
			item_push_dynamodb(&page->state,
							   page->projection ? &itemexpr_project(page->projection, item)->root
							   : &DatumGetJsonbPCopy(JsonbPGetDatum(item))->root);
		MemoryContextSwitchTo(old);
		page->count++;
	}
	page->last.pk = copy_key(keys->pk, page->cxt);
	page->last.sk = copy_key(keys->sk, page->cxt);
	page->last.gpk = copy_key(keys->gpk, page->cxt);
	page->last.gsk = copy_key(keys->gsk, page->cxt);
	return true;
}

/* Runs a read (filtered when filter is set) and builds DynamoDB's Query/Scan response. */
static Jsonb *
read_response(Jsonb *request, ReadRequest *req, Placeholders *ph, ExprNode *filter,
			  ProjectionNode *projection)
{
	PageBuilder page = {0};
	char	   *select = api_string(request, "Select");
	JsonbContainer *start = api_object(request, "ExclusiveStartKey");
	bool		consistent;
	JsonbValue	v;

	page.req = req;
	page.cxt = CurrentMemoryContext;
	page.filter = filter;
	page.projection = projection;
	if (filter)
		itemexpr_host(&page.host_ctx, ph, "FilterExpression", &page.host);
	page.limit = api_int(request, "Limit", 1, PG_INT32_MAX);
	/* one row past the limit tells whether the page is the last */
	req->batch_size = page.limit > 0 && page.limit < 256 ? (int) page.limit + 1 : 0;
	if (select && strcmp(select, "COUNT") == 0)
		page.count_only = true;
	else if (select && strcmp(select, "ALL_ATTRIBUTES") != 0 && strcmp(select, "SPECIFIC_ATTRIBUTES") != 0 &&
			 !(strcmp(select, "ALL_PROJECTED_ATTRIBUTES") == 0 && req->index))
		ddb_validation_error("1 validation error detected: Value '%s' at 'select' failed to satisfy constraint: Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]",
							 select);
	if (projection && select && strcmp(select, "SPECIFIC_ATTRIBUTES") != 0)
		ddb_validation_error("Cannot specify the AttributesToGet or ProjectionExpression when choosing to get %s", select);
	if (!projection && select && strcmp(select, "SPECIFIC_ATTRIBUTES") == 0)
		ddb_validation_error("Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES");
	consistent = api_bool(request, "ConsistentRead", false);
	if (consistent && req->index && !req->index->local)
		ddb_validation_error("Consistent reads are not supported on global secondary indexes");
	if (start)
		read_start_key(req, start);

	/* the items are pushed straight into the response as rows arrive */
	pushJsonbValue(&page.state, WJB_BEGIN_OBJECT, NULL);
	if (!page.count_only)
	{
		ddb_push_key(&page.state, "Items");
		pushJsonbValue(&page.state, WJB_BEGIN_ARRAY, NULL);
	}
	store_read(req, page_row, &page);
	api_capacity_read(req->def->name, req->index, page.bytes, consistent);
	if (!page.count_only)
		pushJsonbValue(&page.state, WJB_END_ARRAY, NULL);
	/* a page cut by Limit ends with a LastEvaluatedKey, as DynamoDB's does */
	if (page.limit >= 0 && page.scanned == page.limit)
		page.more = true;
	ddb_push_key(&page.state, "Count");
	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(page.count);
	pushJsonbValue(&page.state, WJB_VALUE, &v);
	ddb_push_key(&page.state, "ScannedCount");
	v.val.numeric = int64_to_numeric(page.scanned);
	pushJsonbValue(&page.state, WJB_VALUE, &v);
	if (page.more && page.scanned > 0)
	{
		ddb_push_key(&page.state, "LastEvaluatedKey");
		api_push_row_key(&page.state, req->def, req->index, &page.last);
	}
	return JsonbValueToJsonb(pushJsonbValue(&page.state, WJB_END_OBJECT, NULL));
}

/* Raises DynamoDB's error for a key condition it does not support. */
static void
report_key_condition(const char *message)
{
	ddb_validation_error("%s", message);
}

/* The key value of a :value for a key attribute of the given type. */
static Datum
condition_key_value(Placeholders *ctx, ExprNode *value, const char *attribute, char type, bool range)
{
	JsonbValue	natural;
	KeyRole		role = {attribute, NULL, range};
	Datum		key;

	if (value->kind != EXPR_VALUE)
		report_key_condition("Invalid KeyConditionExpression: the key must be compared with an expression attribute value");
	itemexpr_value(ctx, "KeyConditionExpression", value, &natural);
	if (!item_value_to_key(&natural, type, &role, &key))
		ddb_validation_error("One or more parameter values were invalid: Condition parameter type does not match schema type");
	return key;
}

/* The attribute a key condition's path names (a single top-level name). */
static char *
condition_attribute(Placeholders *ctx, ExprNode *path)
{
	if (path->kind != EXPR_PATH || path->u.path.nsteps != 1 || path->u.path.steps[0].name == NULL)
		report_key_condition("Query key condition not supported");
	return itemexpr_step_name(ctx, "KeyConditionExpression", &path->u.path.steps[0]);
}

/* Applies one key condition (a comparison, BETWEEN or begins_with) to the request. */
static void
apply_key_condition(Placeholders *ctx, ReadRequest *req, ExprNode *cond, bool *have_hash)
{
	KeySchema  *keys = req->index ? &req->index->keys : &req->def->keys;
	ExprNode   *path;
	char	   *attribute;

	switch (cond->kind)
	{
		case EXPR_COMPARE:
			path = cond->u.compare.left;
			if (path->kind == EXPR_VALUE)
				report_key_condition("Invalid KeyConditionExpression: the key attribute must be on the left of the comparison");
			break;
		case EXPR_BETWEEN:
			path = cond->u.between.operand;
			break;
		case EXPR_FUNCTION:
			if (cond->u.func.fn != FN_BEGINS_WITH)
				report_key_condition(psprintf("Invalid operator used in KeyConditionExpression: %s",
											  expr_function_name(cond->u.func.fn)));
			path = cond->u.func.args[0];
			break;
		default:
			report_key_condition("Invalid operator used in KeyConditionExpression: OR, NOT and IN are not allowed");
			return;
	}
	attribute = condition_attribute(ctx, path);
	if (strcmp(attribute, keys->hash_key) == 0)
	{
		if (cond->kind != EXPR_COMPARE || cond->u.compare.op != CMP_EQ)
			report_key_condition("Query key condition not supported");
		if (*have_hash)
			report_key_condition("KeyConditionExpressions must only contain one condition per key");
		req->pk = condition_key_value(ctx, cond->u.compare.right, attribute, keys->hash_type, false);
		*have_hash = true;
		return;
	}
	if (keys->range_key == NULL || strcmp(attribute, keys->range_key) != 0)
		report_key_condition(psprintf("Query condition missed key schema element: %s",
									  keys->range_key && *have_hash ? keys->range_key : keys->hash_key));
	if (req->op != SORT_NONE)
		report_key_condition("KeyConditionExpressions must only contain one condition per key");
	if (cond->kind == EXPR_BETWEEN)
	{
		req->op = SORT_BETWEEN;
		req->sk1 = condition_key_value(ctx, cond->u.between.low, attribute, keys->range_type, true);
		req->sk2 = condition_key_value(ctx, cond->u.between.high, attribute, keys->range_type, true);
		return;
	}
	if (cond->kind == EXPR_FUNCTION)
	{
		if (keys->range_type == 'N')
			ddb_validation_error("Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N");
		req->op = SORT_BEGINS_WITH;
		req->sk1 = condition_key_value(ctx, cond->u.func.args[1], attribute, keys->range_type, true);
		return;
	}
	switch (cond->u.compare.op)
	{
		case CMP_EQ:
			req->op = SORT_EQ;
			break;
		case CMP_LT:
			req->op = SORT_LT;
			break;
		case CMP_LE:
			req->op = SORT_LE;
			break;
		case CMP_GT:
			req->op = SORT_GT;
			break;
		case CMP_GE:
			req->op = SORT_GE;
			break;
		case CMP_NE:
			report_key_condition("Unsupported operator on KeyConditionExpression: operator: <>");
	}
	req->sk1 = condition_key_value(ctx, cond->u.compare.right, attribute, keys->range_type, true);
}

/* The FilterExpression of a Query or Scan, parsed and its placeholders checked, or NULL. */
static ExprNode *
request_filter(Jsonb *request, Placeholders *ctx)
{
	return itemexpr_parse_filter(ctx, api_string(request, "FilterExpression"));
}

/*
 * Raises when a Query's FilterExpression names a key attribute of the keys
 * queried: DynamoDB wants those in the KeyConditionExpression.
 */
static void
reject_key_in_filter(Placeholders *ph, const ExprNode *node, const KeySchema *keys)
{
	const char *name;

	switch (node->kind)
	{
		case EXPR_PATH:
			if (node->u.path.steps[0].name == NULL)
				return;
			name = itemexpr_step_name(ph, "FilterExpression", &node->u.path.steps[0]);
			if (strcmp(name, keys->hash_key) == 0 || (keys->range_key && strcmp(name, keys->range_key) == 0))
				ddb_validation_error("Filter Expression can only contain non-primary key attributes: Primary key attribute: %s",
									 name);
			return;
		case EXPR_VALUE:
			return;
		case EXPR_COMPARE:
			reject_key_in_filter(ph, node->u.compare.left, keys);
			reject_key_in_filter(ph, node->u.compare.right, keys);
			return;
		case EXPR_BETWEEN:
			reject_key_in_filter(ph, node->u.between.operand, keys);
			reject_key_in_filter(ph, node->u.between.low, keys);
			reject_key_in_filter(ph, node->u.between.high, keys);
			return;
		case EXPR_IN:
			reject_key_in_filter(ph, node->u.in.operand, keys);
			for (int i = 0; i < node->u.in.nlist; i++)
				reject_key_in_filter(ph, node->u.in.list[i], keys);
			return;
		case EXPR_NOT:
			reject_key_in_filter(ph, node->u.logic.left, keys);
			return;
		case EXPR_AND:
		case EXPR_OR:
		case EXPR_PLUS:
		case EXPR_MINUS:
			reject_key_in_filter(ph, node->u.logic.left, keys);
			reject_key_in_filter(ph, node->u.logic.right, keys);
			return;
		case EXPR_FUNCTION:
			for (int i = 0; i < node->u.func.nargs; i++)
				reject_key_in_filter(ph, node->u.func.args[i], keys);
			return;
	}
}

/* Query. */
Jsonb *
api_query(Jsonb *request)
{
	ReadRequest req = {0};
	Placeholders ctx;
	char	   *index_name = api_string(request, "IndexName");
	char	   *text;
	ExprNode   *cond;
	ExprNode   *filter;
	ProjectionNode *projection;
	bool		have_hash = false;
	JsonbValue	limit;

	req.def = request_table(request);
	req.index = index_name ? table_def_index(req.def, index_name) : NULL;
	req.forward = api_bool(request, "ScanIndexForward", true);
	request = api_legacy_to_expressions(request, LEGACY_KEY_CONDITIONS | LEGACY_QUERY_FILTER | LEGACY_ATTRIBUTES_TO_GET,
										"FilterExpression and KeyConditionExpression are null");
	text = api_string(request, "KeyConditionExpression");
	/* Query words a Limit below 1 its own way (Scan's is api_int's) */
	if (api_field(request, "Limit", &limit) && api_int(request, "Limit", PG_INT32_MIN, PG_INT32_MAX) < 1)
		ddb_validation_error("1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value greater than or equal to 1");
	if (text == NULL)
		ddb_validation_error("Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.");
	api_expr_context(request, &ctx);
	cond = itemexpr_parse_condition(&ctx, "KeyConditionExpression", text);
	itemexpr_check(&ctx, "KeyConditionExpression", cond);
	if (cond->kind == EXPR_AND)
	{
		if (cond->u.logic.left->kind == EXPR_AND || cond->u.logic.right->kind == EXPR_AND)
			report_key_condition("KeyConditionExpressions must only contain one condition per key");
		apply_key_condition(&ctx, &req, cond->u.logic.left, &have_hash);
		apply_key_condition(&ctx, &req, cond->u.logic.right, &have_hash);
	}
	else
		apply_key_condition(&ctx, &req, cond, &have_hash);
	if (!have_hash)
		report_key_condition(psprintf("Query condition missed key schema element: %s",
									  req.index ? req.index->keys.hash_key : req.def->keys.hash_key));
	filter = request_filter(request, &ctx);
	if (filter)
		reject_key_in_filter(&ctx, filter, req.index ? &req.index->keys : &req.def->keys);
	projection = itemexpr_projection(&ctx, api_string(request, "ProjectionExpression"));
	itemexpr_check_unused(&ctx);
	return read_response(request, &req, &ctx, filter, projection);
}

/* Scan. */
Jsonb *
api_scan(Jsonb *request)
{
	ReadRequest req = {0};
	Placeholders ctx;
	ExprNode   *filter;
	ProjectionNode *projection;
	char	   *index_name = api_string(request, "IndexName");
	int64		segment = api_int(request, "Segment", 0, 999999);
	int64		total = api_int(request, "TotalSegments", 1, 1000000);

	req.def = request_table(request);
	req.index = index_name ? table_def_index(req.def, index_name) : NULL;
	req.scan = true;
	req.forward = true;
	request = api_legacy_to_expressions(request, LEGACY_SCAN_FILTER | LEGACY_ATTRIBUTES_TO_GET, "FilterExpression is null");
	api_expr_context(request, &ctx);
	filter = request_filter(request, &ctx);
	projection = itemexpr_projection(&ctx, api_string(request, "ProjectionExpression"));
	if (filter == NULL && projection == NULL)
		api_reject_placeholders(request, "FilterExpression is null");
	if ((segment >= 0) != (total >= 0))
		ddb_validation_error(segment >= 0 ?
							 "The TotalSegments parameter is required but was not present in the request when Segment parameter is present" :
							 "The Segment parameter is required but was not present in the request when parameter TotalSegments is present");
	if (segment >= total && total >= 0)
		ddb_validation_error("The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: %lld is not less than TotalSegments: %lld",
							 (long long) segment, (long long) total);
	if (total > 0)
	{
		req.segment = (int) segment;
		req.total_segments = (int) total;
	}
	itemexpr_check_unused(&ctx);
	return read_response(request, &req, &ctx, filter, projection);
}

/* One write of a BatchWriteItem, checked before any is applied. */
typedef struct BatchWrite
{
	TableDef   *def;
	Jsonb	   *item;			/* put; NULL for a delete */
	Datum		pk;
	Datum		sk;
} BatchWrite;

/* True when two keys of one table address the same item. */
bool
api_same_key(Datum pk1, Datum sk1, Datum pk2, Datum sk2)
{
	return key_datum_compare(pk1, pk2) == 0 && (sk1 == (Datum) 0 || key_datum_compare(sk1, sk2) == 0);
}

/* True when two writes address the same item. */
static bool
same_item(BatchWrite *a, BatchWrite *b)
{
	return a->def == b->def && api_same_key(a->pk, a->sk, b->pk, b->sk);
}

/* The array value of an object entry, or an error naming what was expected. */
static JsonbContainer *
array_of(JsonbValue *v, const char *what)
{
	if (v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_SERIALIZATION),
				 errmsg("Unexpected value type in payload for %s: expected a list", what)));
	return v->val.binary.data;
}

/* BatchWriteItem: up to 25 puts and deletes, all applied or none. */
Jsonb *
api_batch_write_item(Jsonb *request)
{
	JsonbContainer *tables = api_object(request, "RequestItems");
	BatchWrite	writes[BATCH_WRITE_MAX];
	int			n = 0;
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbParseState *state = NULL;
	bool		metrics;

	if (tables == NULL)
		api_missing("requestItems");
	it = JsonbIteratorInit(tables);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		TableDef   *def;
		JsonbIterator *rit;
		JsonbValue	r;
		JsonbIteratorToken rtok;

		if (tok != WJB_KEY)
			continue;
		def = table_def_get(pnstrdup(k.val.string.val, k.val.string.len));
		JsonbIteratorNext(&it, &v, true);
		if (JsonContainerSize(array_of(&v, "RequestItems")) == 0)
			ddb_validation_error("1 validation error detected: Value '[]' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length greater than or equal to 1]");
		rit = JsonbIteratorInit(array_of(&v, "RequestItems"));
		while ((rtok = JsonbIteratorNext(&rit, &r, true)) != WJB_DONE)
		{
			JsonbValue	put;
			JsonbValue	del;
			JsonbValue	inner;
			Jsonb	   *wrapper;

			if (rtok != WJB_ELEM)
				continue;
			if (n == BATCH_WRITE_MAX)
				ddb_validation_error("1 validation error detected: Value '{%s=%s}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]",
									 def->name, JsonbToCString(NULL, array_of(&v, "RequestItems"), 0));
			if (r.type != jbvBinary || !JsonContainerIsObject(r.val.binary.data))
				ereport(ERROR, (errcode(ERRCODE_DDB_SERIALIZATION),
								errmsg("A WriteRequest must be an object")));
			wrapper = JsonbValueToJsonb(&r);
			writes[n].def = def;
			if (api_field(wrapper, "PutRequest", &put) == api_field(wrapper, "DeleteRequest", &del))
				ddb_validation_error("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes");
			if (api_field(wrapper, "PutRequest", &put))
			{
				JsonbContainer *item = api_object(JsonbValueToJsonb(&put), "Item");

				if (item == NULL)
					api_missing("item");
				writes[n].item = item_from_dynamodb(item);
				store_item_keys(def, writes[n].item, &writes[n].pk, &writes[n].sk);
			}
			else
			{
				writes[n].item = NULL;
				if (!api_field(JsonbValueToJsonb(&del), "Key", &inner) || inner.type != jbvBinary ||
					!JsonContainerIsObject(inner.val.binary.data))
					api_missing("key");
				api_table_key(def, inner.val.binary.data, &writes[n].pk, &writes[n].sk);
			}
			for (int i = 0; i < n; i++)
				if (same_item(&writes[i], &writes[n]))
					ddb_validation_error("Provided list of item keys contains duplicates");
			n++;
		}
	}
	if (n == 0)
		ddb_validation_error("The requestItems parameter is required for BatchWriteItem");
	metrics = api_collection_metrics_wanted(request);
	for (int i = 0; i < n; i++)
	{
		if (writes[i].item)
		{
			store_put(writes[i].def, writes[i].item, NULL, NULL);
			api_capacity_write_item(writes[i].def->name, writes[i].item, NULL);
		}
		else
		{
			/* the deleted item is not read back: one unit, DynamoDB's least */
			store_delete(writes[i].def, writes[i].pk, writes[i].sk, NULL, NULL);
			api_capacity_write_item(writes[i].def->name, NULL, NULL);
		}
	}
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&state, "UnprocessedItems");
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	if (metrics)
	{
		TableDef  **defs = palloc(sizeof(TableDef *) * n);
		Datum	   *pks = palloc(sizeof(Datum) * n);

		for (int i = 0; i < n; i++)
		{
			defs[i] = writes[i].def;
			pks[i] = writes[i].pk;
		}
		api_push_collection_metrics_map(&state, defs, pks, n);
	}
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* BatchGetItem: up to 100 keys across tables. */
Jsonb *
api_batch_get_item(Jsonb *request)
{
	JsonbContainer *tables = api_object(request, "RequestItems");
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbParseState *state = NULL;
	int			total = 0;
	List	   *seen;
	Placeholders ph;
	ProjectionNode *projection;

	if (tables == NULL)
		api_missing("requestItems");
	if (JsonContainerSize(tables) == 0)
		ddb_validation_error("The requestItems parameter is required for BatchGetItem");
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&state, "Responses");
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	it = JsonbIteratorInit(tables);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		char	   *name;
		TableDef   *def;
		Jsonb	   *spec;
		JsonbValue	keys;
		JsonbIterator *kit;
		JsonbValue	key;
		JsonbIteratorToken ktok;

		if (tok != WJB_KEY)
			continue;
		name = pnstrdup(k.val.string.val, k.val.string.len);
		def = table_def_get(name);
		JsonbIteratorNext(&it, &v, true);
		if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
			ereport(ERROR, (errcode(ERRCODE_DDB_SERIALIZATION),
							errmsg("KeysAndAttributes must be an object")));
		spec = JsonbValueToJsonb(&v);
		spec = api_legacy_to_expressions(spec, LEGACY_ATTRIBUTES_TO_GET, NULL);
		api_expr_context(spec, &ph);
		projection = itemexpr_projection(&ph, api_string(spec, "ProjectionExpression"));
		if (projection == NULL)
			api_reject_placeholders(spec, NULL);
		itemexpr_check_unused(&ph);
		if (!api_field(spec, "Keys", &keys))
			api_missing("keys");
		ddb_push_key(&state, name);
		pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
		if (JsonContainerSize(array_of(&keys, "Keys")) == 0)
			ddb_validation_error("1 validation error detected: Value '[]' at 'requestItems.%s.member.keys' failed to satisfy constraint: Member must have length greater than or equal to 1",
								 name);
		if (JsonContainerSize(array_of(&keys, "Keys")) > BATCH_GET_MAX)
			ddb_validation_error("1 validation error detected: Value at 'RequestItems.%s.member.Keys' failed to satisfy constraint: Member must have length less than or equal to 100",
								 name);
		seen = NIL;
		kit = JsonbIteratorInit(array_of(&keys, "Keys"));
		while ((ktok = JsonbIteratorNext(&kit, &key, true)) != WJB_DONE)
		{
			Datum		pk;
			Datum		sk;
			Jsonb	   *item;
			ListCell   *lc;

			if (ktok != WJB_ELEM)
				continue;
			if (++total > BATCH_GET_MAX)
				ddb_validation_error("Too many items requested for the BatchGetItem call");
			if (key.type != jbvBinary || !JsonContainerIsObject(key.val.binary.data))
				api_missing("key");
			api_table_key(def, key.val.binary.data, &pk, &sk);
			/* pairs of (pk, sk) already asked for in this table */
			for (lc = list_head(seen); lc != NULL; lc = lnext(seen, lnext(seen, lc)))
				if (api_same_key(PointerGetDatum(lfirst(lc)), PointerGetDatum(lfirst(lnext(seen, lc))), pk, sk))
					ddb_validation_error("Provided list of item keys contains duplicates");
			seen = lappend(lappend(seen, DatumGetPointer(pk)), DatumGetPointer(sk));
			item = store_get(def, pk, sk);
			api_capacity_read_item(def->name, item, false);
			if (item && projection)
				item = itemexpr_project(projection, item);
			if (item)
				item_push_dynamodb(&state, &item->root);
		}
		pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	}
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	ddb_push_key(&state, "UnprocessedKeys");
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}
