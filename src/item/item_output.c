/*
 * item_output.c — natural items as DynamoDB JSON ({"a": {"S": "x"}}): the
 * way back of item_codec.c's conversion, for responses, exports and streams.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "../ddb_jsonb.h"
#include "item_codec.h"
#include "item_internal.h"

/* Pushes {"<tag>": value} as a DynamoDB-JSON AttributeValue. */
static void
push_tagged(JsonbParseState **state, const char *tag, JsonbValue *value)
{
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(state, tag);
	pushJsonbValue(state, WJB_VALUE, value);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* The text of a numeric as a jbvString. */
static JsonbValue
numeric_string(Numeric num)
{
	char	   *text = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(num)));

	return item_string_value(text, (int) strlen(text));
}

/* Pushes the DynamoDB-JSON AttributeValue of one natural value. */
void
item_push_dynamodb_value(JsonbParseState **state, JsonbValue *natural)
{
	JsonbValue	key;
	JsonbValue	inner;
	JsonbValue	v;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	ItemType	type = item_value_type(natural);

	check_stack_depth();
	switch (type)
	{
		case ITEM_S:
			push_tagged(state, "S", natural);
			return;
		case ITEM_N:
			v = numeric_string(natural->val.numeric);
			push_tagged(state, "N", &v);
			return;
		case ITEM_BOOL:
			push_tagged(state, "BOOL", natural);
			return;
		case ITEM_NULL:
			v.type = jbvBool;
			v.val.boolean = true;
			push_tagged(state, "NULL", &v);
			return;
		case ITEM_B:
			item_single_pair(natural->val.binary.data, &key, &inner);
			push_tagged(state, "B", &inner);
			return;
		case ITEM_SS:
		case ITEM_NS:
		case ITEM_BS:
			item_single_pair(natural->val.binary.data, &key, &inner);
			pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
			ddb_push_key(state, item_type_name(type));
			pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
			it = JsonbIteratorInit(inner.val.binary.data);
			while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			{
				if (tok != WJB_ELEM)
					continue;
				if (v.type == jbvNumeric)
					v = numeric_string(v.val.numeric);
				pushJsonbValue(state, WJB_ELEM, &v);
			}
			pushJsonbValue(state, WJB_END_ARRAY, NULL);
			pushJsonbValue(state, WJB_END_OBJECT, NULL);
			return;
		case ITEM_L:
			pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
			ddb_push_key(state, "L");
			pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
			it = JsonbIteratorInit(natural->val.binary.data);
			while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
				if (tok == WJB_ELEM)
					item_push_dynamodb_value(state, &v);
			pushJsonbValue(state, WJB_END_ARRAY, NULL);
			pushJsonbValue(state, WJB_END_OBJECT, NULL);
			return;
		case ITEM_M:
			/* unwrap {"$M": {...}} */
			if (item_single_pair(natural->val.binary.data, &key, &inner) && item_string_is(&key, "$M"))
				natural = &inner;
			pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
			ddb_push_key(state, "M");
			pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
			it = JsonbIteratorInit(natural->val.binary.data);
			while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
			{
				if (tok != WJB_KEY)
					continue;
				pushJsonbValue(state, WJB_KEY, &key);
				JsonbIteratorNext(&it, &v, true);
				item_push_dynamodb_value(state, &v);
			}
			pushJsonbValue(state, WJB_END_OBJECT, NULL);
			pushJsonbValue(state, WJB_END_OBJECT, NULL);
			return;
	}
}

/* Pushes a natural item (an object) as a DynamoDB-JSON item. */
void
item_push_dynamodb(JsonbParseState **state, JsonbContainer *natural)
{
	JsonbIterator *it = JsonbIteratorInit(natural);
	JsonbValue	key;
	JsonbValue	v;
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		if (tok == WJB_BEGIN_OBJECT)
			pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
		else if (tok == WJB_END_OBJECT)
			pushJsonbValue(state, WJB_END_OBJECT, NULL);
		else if (tok == WJB_KEY)
		{
			pushJsonbValue(state, WJB_KEY, &key);
			JsonbIteratorNext(&it, &v, true);
			item_push_dynamodb_value(state, &v);
		}
	}
}

/* A natural item (an object) as a DynamoDB-JSON item. */
Jsonb *
item_to_dynamodb(JsonbContainer *natural)
{
	JsonbParseState *state = NULL;
	JsonbValue *wrapper;

	/* pushed inside an array, so that the finished object is not dropped */
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	item_push_dynamodb(&state, natural);
	wrapper = pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	return JsonbValueToJsonb(&wrapper->val.array.elems[0]);
}
