/*
 * read_keys.c — the keys of a Query or Scan: the KeyConditionExpression as
 * a range of keys (single or multi-attribute, docs/tables.md), and the
 * ExclusiveStartKey, which a Query's conditions must hold for.
 */
#include "postgres.h"

#include "utils/jsonb.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "../key/ddb_key.h"
#include "../request/request.h"
#include "api.h"

/* The most conditions a KeyConditionExpression may hold: one per key attribute. */
#define MAX_KEY_CONDITIONS (2 * KEY_SCHEMA_MAX_ATTRIBUTES)

/* One condition of a KeyConditionExpression, with the key attribute first. */
typedef struct KeyCondition
{
	char	   *attribute;
	SortOp		op;
	ExprNode   *value;			/* the (first) value */
	ExprNode   *value2;			/* BETWEEN's upper bound */
} KeyCondition;

/* Raises DynamoDB's error for a key condition it does not support. */
static void
report_key_condition(const char *message)
{
	ddb_validation_error("%s", message);
}

/* The attribute a key condition's path names (a single top-level name). */
static char *
condition_attribute(Placeholders *ctx, ExprNode *path)
{
	char	   *name;

	if (path->kind == EXPR_VALUE)
		report_key_condition("Invalid condition in KeyConditionExpression: No key attribute specified");
	if (path->kind != EXPR_PATH)
		report_key_condition("KeyConditionExpressions cannot contain nested operations");
	name = itemexpr_step_name(ctx, "KeyConditionExpression", &path->u.path.steps[0]);
	if (path->u.path.nsteps != 1)
		report_key_condition(psprintf("Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: %s",
									  name));
	return name;
}

/* The operator of a comparison read with its operands swapped (:v < k is k > :v). */
static ExprCompareOp
swapped(ExprCompareOp op)
{
	switch (op)
	{
		case CMP_LT:
			return CMP_GT;
		case CMP_LE:
			return CMP_GE;
		case CMP_GT:
			return CMP_LT;
		case CMP_GE:
			return CMP_LE;
		default:
			return op;
	}
}

/* Reads one condition (a comparison, BETWEEN or begins_with), the key attribute first. */
static KeyCondition
read_condition(Placeholders *ctx, ExprNode *cond)
{
	KeyCondition kc = {0};
	ExprNode   *path;
	ExprCompareOp	op;

	switch (cond->kind)
	{
		case EXPR_COMPARE:
			path = cond->u.compare.left;
			kc.value = cond->u.compare.right;
			op = cond->u.compare.op;
			/* DynamoDB reads :v <= k as k >= :v */
			if (path->kind == EXPR_VALUE && kc.value->kind == EXPR_PATH)
			{
				path = cond->u.compare.right;
				kc.value = cond->u.compare.left;
				op = swapped(op);
			}
			kc.op = op == CMP_EQ ? SORT_EQ : op == CMP_LT ? SORT_LT : op == CMP_LE ? SORT_LE :
				op == CMP_GT ? SORT_GT : op == CMP_GE ? SORT_GE : SORT_NONE;
			if (op == CMP_NE)
				report_key_condition("Invalid operator used in KeyConditionExpression: <>");
			break;
		case EXPR_BETWEEN:
			path = cond->u.between.operand;
			kc.op = SORT_BETWEEN;
			kc.value = cond->u.between.low;
			kc.value2 = cond->u.between.high;
			break;
		case EXPR_FUNCTION:
			if (cond->u.func.fn != FN_BEGINS_WITH)
				report_key_condition(psprintf("Invalid operator used in KeyConditionExpression: %s",
											  expr_function_name(cond->u.func.fn)));
			path = cond->u.func.args[0];
			if (path->kind != EXPR_PATH)
				report_key_condition("Invalid condition in KeyConditionExpression: begins_with operator must have the key attribute as its first operand");
			kc.op = SORT_BEGINS_WITH;
			kc.value = cond->u.func.args[1];
			break;
		default:
			/* what the parser leaves for a condition: OR, NOT, IN */
			report_key_condition(psprintf("Invalid operator used in KeyConditionExpression: %s",
										  cond->kind == EXPR_OR ? "OR" : cond->kind == EXPR_NOT ? "NOT" : "IN"));
			return kc;
	}
	kc.attribute = condition_attribute(ctx, path);
	return kc;
}

/* Collects the conditions of an AND of conditions, in order. */
static void
collect_conditions(Placeholders *ctx, ExprNode *cond, KeyCondition *out, int *n)
{
	if (cond->kind == EXPR_AND)
	{
		collect_conditions(ctx, cond->u.logic.left, out, n);
		collect_conditions(ctx, cond->u.logic.right, out, n);
		return;
	}
	if (*n >= MAX_KEY_CONDITIONS)
		report_key_condition("KeyConditionExpressions must only contain one condition per key");
	out[(*n)++] = read_condition(ctx, cond);
}

/* The key value of a :value for a key attribute of the given type. */
static Datum
condition_key_value(Placeholders *ctx, ExprNode *value, const char *attribute, char type, bool range)
{
	JsonbValue	natural;
	KeyRole		role = {attribute, NULL, range};
	Datum		key;

	if (value->kind == EXPR_PATH)
		report_key_condition("Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition");
	if (value->kind != EXPR_VALUE)
		report_key_condition("KeyConditionExpressions cannot contain nested operations");
	itemexpr_value(ctx, "KeyConditionExpression", value, &natural);
	if (!item_value_to_key(&natural, type, &role, &key))
		ddb_validation_error("One or more parameter values were invalid: Condition parameter type does not match schema type");
	return key;
}

/* The position of attribute among n names, or -1. */
static int
attribute_position(char **names, int n, const char *attribute)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], attribute) == 0)
			return i;
	return -1;
}

/* Sets the request's sort key range for a one-attribute sort key. */
static void
single_sort_range(Placeholders *ctx, ReadRequest *req, KeySchema *keys, KeyCondition *kc)
{
	/* (begins_with on a number: its value is a number, refused by itemexpr_check, or another type, refused here) */
	req->op = kc->op;
	req->sk1 = condition_key_value(ctx, kc->value, kc->attribute, keys->range_type, true);
	if (kc->op == SORT_BETWEEN)
		req->sk2 = condition_key_value(ctx, kc->value2, kc->attribute, keys->range_type, true);
}

/* A tuple of the first n elements of keys, with last appended (open: as a prefix) unless it is 0. */
static KeyTupleBuilder
tuple_of(Datum *keys, int n, Datum last, bool open)
{
	KeyTupleBuilder b;

	key_tuple_begin(&b);
	for (int i = 0; i < n; i++)
		key_tuple_add(&b, keys[i], false);
	if (last)
		key_tuple_add(&b, last, open);
	return b;
}

/*
 * Sets the request's sort key range for a multi-attribute sort key: the
 * conditions name its attributes from the first with no gap, all equalities
 * but the last; the range is [sk1, sk2) over the tuples.
 */
static void
multi_sort_range(Placeholders *ctx, ReadRequest *req, KeySchema *keys, KeyCondition **by_position)
{
	Datum		equal[KEY_SCHEMA_MAX_ATTRIBUTES];
	int			k = 0;				/* attributes with a condition */
	KeyCondition *last;
	Datum		v;
	Datum		v2;
	KeyTupleBuilder prefix;
	KeyTupleBuilder at;

	while (k < keys->nrange && by_position[k])
		k++;
	for (int i = k; i < keys->nrange; i++)
		if (by_position[i])
			report_key_condition(psprintf("Query condition missed key schema element: %s", keys->range_keys[k]));
	if (k == 0)
		return;
	for (int i = 0; i < k - 1; i++)
	{
		if (by_position[i]->op != SORT_EQ)
			report_key_condition(psprintf("Invalid KeyConditionExpression: only the last sort key attribute named may have a condition other than =; attribute: %s",
										  keys->range_keys[i]));
		equal[i] = condition_key_value(ctx, by_position[i]->value, keys->range_keys[i], keys->range_types[i], true);
	}
	last = by_position[k - 1];
	v = condition_key_value(ctx, last->value, last->attribute, keys->range_types[k - 1], true);
	prefix = tuple_of(equal, k - 1, (Datum) 0, false);
	at = tuple_of(equal, k - 1, v, last->op == SORT_BEGINS_WITH);
	req->op = SORT_RANGE;
	switch (last->op)
	{
		case SORT_EQ:
		case SORT_BEGINS_WITH:
			req->sk1 = key_tuple_datum(&at, false);
			req->sk2 = key_tuple_datum(&at, true);
			break;
		case SORT_LT:
			req->sk1 = key_tuple_datum(&prefix, false);
			req->sk2 = key_tuple_datum(&at, false);
			break;
		case SORT_LE:
			req->sk1 = key_tuple_datum(&prefix, false);
			req->sk2 = key_tuple_datum(&at, true);
			break;
		case SORT_GT:
			req->sk1 = key_tuple_datum(&at, true);
			req->sk2 = key_tuple_datum(&prefix, true);
			break;
		case SORT_GE:
			req->sk1 = key_tuple_datum(&at, false);
			req->sk2 = key_tuple_datum(&prefix, true);
			break;
		case SORT_BETWEEN:
			v2 = condition_key_value(ctx, last->value2, last->attribute, keys->range_types[k - 1], true);
			req->sk1 = key_tuple_datum(&at, false);
			at = tuple_of(equal, k - 1, v2, false);
			req->sk2 = key_tuple_datum(&at, true);
			break;
		default:
			elog(ERROR, "ddb_model: unexpected sort key operator %d", (int) last->op);
	}
}

/* Sets the partition key and sort key range of a Query from its KeyConditionExpression. */
void
api_key_condition(Placeholders *ctx, ReadRequest *req, ExprNode *cond)
{
	KeySchema  *keys = req->index ? &req->index->keys : &req->def->keys;
	KeyCondition conditions[MAX_KEY_CONDITIONS];
	KeyCondition *hash_at[KEY_SCHEMA_MAX_ATTRIBUTES] = {0};
	KeyCondition *range_at[KEY_SCHEMA_MAX_ATTRIBUTES] = {0};
	Datum		hash[KEY_SCHEMA_MAX_ATTRIBUTES];
	int			n = 0;

	collect_conditions(ctx, cond, conditions, &n);
	for (int i = 0; i < n; i++)
	{
		KeyCondition *kc = &conditions[i];
		int			h = attribute_position(keys->hash_keys, keys->nhash, kc->attribute);
		int			r = h < 0 ? attribute_position(keys->range_keys, keys->nrange, kc->attribute) : -1;
		KeyCondition **slot = h >= 0 ? &hash_at[h] : r >= 0 ? &range_at[r] : NULL;

		if (slot == NULL)
		{
			/* DynamoDB names the key it expected: the sort key once the partition key is there */
			bool		have_hash = false;

			for (int j = 0; j < n; j++)
				have_hash |= attribute_position(keys->hash_keys, keys->nhash, conditions[j].attribute) >= 0;
			report_key_condition(psprintf("Query condition missed key schema element: %s",
										  keys->nrange > 0 && have_hash ? keys->range_key : keys->hash_key));
		}
		if (*slot)
			report_key_condition("KeyConditionExpressions must only contain one condition per key");
		if (h >= 0 && kc->op != SORT_EQ)
			report_key_condition("Query key condition not supported");
		*slot = kc;
	}
	for (int i = 0; i < keys->nhash; i++)
	{
		if (hash_at[i] == NULL)
			report_key_condition(psprintf("Query condition missed key schema element: %s", keys->hash_keys[i]));
		hash[i] = condition_key_value(ctx, hash_at[i]->value, keys->hash_keys[i], keys->hash_types[i], false);
	}
	if (KEY_SCHEMA_HASH_TUPLE(keys))
	{
		KeyTupleBuilder b = tuple_of(hash, keys->nhash, (Datum) 0, false);

		req->pk = key_tuple_datum(&b, false);
	}
	else
		req->pk = hash[0];
	if (KEY_SCHEMA_RANGE_TUPLE(keys))
		multi_sort_range(ctx, req, keys, range_at);
	else if (range_at[0])
		single_sort_range(ctx, req, keys, range_at[0]);
}

/*
 * Reads one side of an index key from a start key: a single key, or the
 * tuple of a multi-attribute side; false when an attribute is missing or
 * has another type.
 */
static bool
start_side_key(JsonbContainer *start, char **names, char *types, int n, bool range, Datum *out)
{
	Datum		elements[KEY_SCHEMA_MAX_ATTRIBUTES];
	KeyTupleBuilder b;

	for (int i = 0; i < n; i++)
	{
		JsonbValue	av;
		JsonbValue	natural;
		KeyRole		role = {names[i], NULL, range};

		if (getKeyJsonValueFromContainer(start, names[i], (int) strlen(names[i]), &av) == NULL)
			return false;
		item_value_from_dynamodb(&av, &natural);
		if (!item_value_to_key(&natural, types[i], &role, &elements[i]))
			return false;
	}
	if (n == 1)
	{
		*out = elements[0];
		return true;
	}
	b = tuple_of(elements, n, (Datum) 0, false);
	*out = key_tuple_datum(&b, false);
	return true;
}

/* True when a sort key satisfies the request's sort key condition. */
static bool
sort_key_within(ReadRequest *req, Datum key)
{
	switch (req->op)
	{
		case SORT_NONE:
			return true;
		case SORT_EQ:
			return api_compare_keys(key, req->sk1) == 0;
		case SORT_LT:
			return api_compare_keys(key, req->sk1) < 0;
		case SORT_LE:
			return api_compare_keys(key, req->sk1) <= 0;
		case SORT_GT:
			return api_compare_keys(key, req->sk1) > 0;
		case SORT_GE:
			return api_compare_keys(key, req->sk1) >= 0;
		case SORT_BETWEEN:
			return api_compare_keys(key, req->sk1) >= 0 && api_compare_keys(key, req->sk2) <= 0;
		case SORT_RANGE:
			return api_compare_keys(key, req->sk1) >= 0 && api_compare_keys(key, req->sk2) < 0;
		case SORT_BEGINS_WITH:
		case SORT_UNDER:
			{
				struct varlena *k = PG_DETOAST_DATUM_PACKED(key);
				struct varlena *p = PG_DETOAST_DATUM_PACKED(req->sk1);

				return req->op == SORT_BEGINS_WITH ?
					key_begins_with(DDB_KEY_DATA(k), DDB_KEY_LEN(k), DDB_KEY_DATA(p), DDB_KEY_LEN(p)) :
					key_begins_with_segments(DDB_KEY_DATA(k), DDB_KEY_LEN(k), DDB_KEY_DATA(p), DDB_KEY_LEN(p));
			}
	}
	return false;
}

/*
 * Reads an ExclusiveStartKey for a read (the table's keys, and the index's
 * for an index).  A Query's start key must lie within its key condition.
 */
void
api_start_key(ReadRequest *req, JsonbContainer *start)
{
	KeySchema  *tk = &req->def->keys;
	KeySchema  *ik = req->index ? &req->index->keys : NULL;
	bool		ok;

	req->has_start = true;
	memset(&req->start, 0, sizeof(req->start));
	ok = start_side_key(start, tk->hash_keys, tk->hash_types, tk->nhash, false, &req->start.pk) &&
		(tk->nrange == 0 || start_side_key(start, tk->range_keys, tk->range_types, tk->nrange, true, &req->start.sk)) &&
		(ik == NULL || start_side_key(start, ik->hash_keys, ik->hash_types, ik->nhash, false, &req->start.gpk)) &&
		(ik == NULL || ik->nrange == 0 ||
		 start_side_key(start, ik->range_keys, ik->range_types, ik->nrange, true, &req->start.gsk));
	if (!ok)
		ddb_validation_error("The provided starting key is invalid: The provided key element does not match the schema");
	if (req->scan)
		return;
	if (api_compare_keys(ik ? req->start.gpk : req->start.pk, req->pk) != 0 ||
		((ik ? ik->nrange : tk->nrange) > 0 && !sort_key_within(req, ik ? req->start.gsk : req->start.sk)))
		ddb_validation_error("The provided starting key is outside query boundaries based on provided conditions");
}
