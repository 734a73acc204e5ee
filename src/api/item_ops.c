/*
 * item_ops.c — the single-item operations of ddb.execute: PutItem, GetItem,
 * DeleteItem, UpdateItem, and TransactWriteItems' ConditionCheck, with
 * DynamoDB's request and response bodies (Query and Scan: query_scan.c;
 * the batches: batch_ops.c).
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "../key/ddb_key.h"
#include "../metering/metering.h"
#include "../metering/throttle.h"
#include "../request/request.h"
#include "api.h"

/*
 * A response holding one item under key, or {} when item is NULL, or empty
 * and omit_empty (DynamoDB leaves out an UpdateItem's empty Attributes).
 */
static Jsonb *
item_response(const char *key, Jsonb *item, bool omit_empty)
{
	JsonbParseState *state = NULL;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	if (item && !(omit_empty && JB_ROOT_COUNT(item) == 0))
	{
		ddb_push_key(&state, key);
		item_push_dynamodb(&state, &item->root);
	}
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
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

/* Raises DDB_ERROR_CONDITIONAL_CHECK_FAILED for a request, honouring ReturnValuesOnConditionCheckFailure. */
static void
report_condition_failed(Jsonb *request, Jsonb *current)
{
	char	   *rv = api_string(request, "ReturnValuesOnConditionCheckFailure");

	itemexpr_raise_condition_failed(api_string(request, "ConditionExpression"),
						 rv && strcmp(rv, "ALL_OLD") == 0, current);
}

/*
 * A conditional write whose condition failed: its write units recorded (the
 * item's, DynamoDB charges them, and throttling charges them: src/execute/execute.c),
 * then report_condition_failed.
 */
static void
write_condition_failed(TableDef *def, Jsonb *request, Jsonb *current, Jsonb *item)
{
	api_capacity_write_item(def->name, current, item);
	report_condition_failed(request, current);
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

/*
 * The ConditionExpression of a PutItem or DeleteItem (NULL: none), its
 * request's legacy Expected rewritten into one first, and the placeholders
 * checked before anything is written.
 */
static WriteCondition *
write_condition(Jsonb **request, Placeholders *ph)
{
	WriteCondition *cond;

	*request = api_legacy_to_expressions(*request, LEGACY_EXPECTED, "ConditionExpression is null");
	check_return_on_failure(*request);
	api_expr_context(*request, ph);
	cond = request_condition(*request, ph);
	if (cond == NULL)
		api_reject_placeholders(*request, "ConditionExpression is null");
	itemexpr_check_unused(ph);
	return cond;
}

/* PutItem. */
Jsonb *
api_put_item(Jsonb *request)
{
	TableDef   *def = api_request_table(request);
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
	/* the item's values and key are checked before the expressions, as DynamoDB does */
	natural = item_from_dynamodb(item);
	store_item_keys(def, natural, &pk, &sk);
	cond = write_condition(&request, &ph);
	api_throttle_admit(def, NULL, THROTTLE_WRITE, true);
	if (!store_put(def, natural, cond, (all_old || cond) ? &old : NULL))
		write_condition_failed(def, request, old, natural);
	api_capacity_write_item(def->name, natural, NULL);
	if (!metrics)
		return item_response("Attributes", all_old ? old : NULL, false);
	return api_with_collection_metrics(def, pk, item_response("Attributes", all_old ? old : NULL, false));
}

/* GetItem. */
Jsonb *
api_get_item(Jsonb *request)
{
	TableDef   *def = api_request_table(request);
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
	api_throttle_admit(def, NULL, THROTTLE_READ, true);
	item = store_get(def, pk, sk);
	api_capacity_read_item(def->name, item, consistent);
	if (item && projection)
		item = itemexpr_project(projection, item);
	return item_response("Item", item, false);
}

/* DeleteItem. */
Jsonb *
api_delete_item(Jsonb *request)
{
	TableDef   *def = api_request_table(request);
	bool		all_old = return_all_old(request);
	Placeholders ph;
	WriteCondition *cond;
	Datum		pk;
	Datum		sk;
	Jsonb	   *old = NULL;
	bool		metrics = api_collection_metrics_wanted(request);
	Jsonb	   *response;

	cond = write_condition(&request, &ph);
	api_table_key(def, api_object(request, "Key"), &pk, &sk);
	api_throttle_admit(def, NULL, THROTTLE_WRITE, true);
	if (!store_delete(def, pk, sk, cond, &old))
		write_condition_failed(def, request, old, NULL);
	api_capacity_write_item(def->name, old, NULL);
	response = all_old ? item_response("Attributes", old, false) : ddb_empty_object();
	return metrics ? api_with_collection_metrics(def, pk, response) : response;
}

/* ConditionCheck (TransactWriteItems only): the condition against the item, writing nothing. */
Jsonb *
api_condition_check(Jsonb *request)
{
	TableDef   *def = api_request_table(request);
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
	TableDef   *def = api_request_table(request);
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

	api_throttle_admit(def, NULL, THROTTLE_WRITE, true);
	if (!itemexpr_store_update(def, pk, sk, update, &ph, cond, &old, &written))
		write_condition_failed(def, request, old, NULL);
	api_capacity_write_item(def->name, old, written);
	response = strcmp(rv, "NONE") == 0 ? ddb_empty_object()
		: item_response("Attributes", itemexpr_update_returned(rv, paths, old, written), true);
	return metrics ? api_with_collection_metrics(def, pk, response) : response;
}
