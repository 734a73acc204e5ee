/*
 * item_codec.c — natural jsonb items: validation, canonical form, and the
 * conversion from DynamoDB JSON (the way back: item_output.c; sizes:
 * item_size.c; key values: item_key.c).
 *
 * Every item is stored canonical: numbers pass through the key codec (so
 * they obey DynamoDB's 38 digits and range, and print one way), binaries
 * are re-encoded base64, sets hold no duplicates.  Both entry points,
 * DynamoDB JSON and natural JSON, end in the same canonical form.
 */
#include "postgres.h"

#include "common/base64.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "../ddb_errors.h"
#include "../ddb_jsonb.h"
#include "../key/ddb_key.h"
#include "item_codec.h"
#include "item_internal.h"

/* DynamoDB's limit on nested maps and lists. */
#define ITEM_MAX_DEPTH 32

static void push_canonical(JsonbParseState **state, JsonbValue *value, bool in_array, int depth);
static void value_from_dynamodb(JsonbParseState **state, JsonbValue *av, bool in_array, int depth);

/* The DynamoDB type name of a type. */
const char *
item_type_name(ItemType type)
{
	static const char *const names[] = {"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"};

	return names[type];
}

/* A jbvString value for a C string. */
JsonbValue
item_string_value(const char *str, int len)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) str;
	v.val.string.len = len;
	return v;
}

/* Pushes a scalar as an array element or an object value. */
static void
push_scalar(JsonbParseState **state, JsonbValue *value, bool in_array)
{
	pushJsonbValue(state, in_array ? WJB_ELEM : WJB_VALUE, value);
}

/* The only key and value of a one-pair object container; false otherwise. */
bool
item_single_pair(JsonbContainer *obj, JsonbValue *key, JsonbValue *value)
{
	JsonbIterator *it;
	JsonbIteratorToken tok;

	if (!JsonContainerIsObject(obj) || JsonContainerSize(obj) != 1)
		return false;
	it = JsonbIteratorInit(obj);
	tok = JsonbIteratorNext(&it, key, true);	/* WJB_BEGIN_OBJECT */
	tok = JsonbIteratorNext(&it, key, true);
	Assert(tok == WJB_KEY);
	tok = JsonbIteratorNext(&it, value, true);
	Assert(tok == WJB_VALUE);
	(void) tok;
	return true;
}

/* The natural type a one-pair wrapper's key stands for, or -1. */
static int
wrapper_type(JsonbValue *key)
{
	if (item_string_is(key, "$B"))
		return ITEM_B;
	if (item_string_is(key, "$SS"))
		return ITEM_SS;
	if (item_string_is(key, "$NS"))
		return ITEM_NS;
	if (item_string_is(key, "$BS"))
		return ITEM_BS;
	if (item_string_is(key, "$M"))
		return ITEM_M;
	return -1;
}

/* The DynamoDB type of a natural jsonb value. */
ItemType
item_value_type(JsonbValue *value)
{
	JsonbValue	key;
	JsonbValue	inner;
	int			wrapped;

	switch (value->type)
	{
		case jbvString:
			return ITEM_S;
		case jbvNumeric:
			return ITEM_N;
		case jbvBool:
			return ITEM_BOOL;
		case jbvNull:
			return ITEM_NULL;
		case jbvBinary:
			if (JsonContainerIsArray(value->val.binary.data))
				return ITEM_L;
			/* a wrapper only with the inner value its type needs; else a plain map */
			if (item_single_pair(value->val.binary.data, &key, &inner) &&
				(wrapped = wrapper_type(&key)) >= 0 &&
				(wrapped == ITEM_B ? inner.type == jbvString :
				 inner.type == jbvBinary &&
				 (wrapped == ITEM_M ? JsonContainerIsObject(inner.val.binary.data)
				  : JsonContainerIsArray(inner.val.binary.data))))
				return (ItemType) wrapped;
			return ITEM_M;
		default:
			elog(ERROR, "ddb_model: unexpected jsonb value type %d in an item", value->type);
	}
	return ITEM_NULL;
}

/* Raises DynamoDB's error past the nesting limit (and guards the C stack). */
static void
check_depth(int depth)
{
	check_stack_depth();
	if (depth > ITEM_MAX_DEPTH)
		ddb_validation_error("Nesting Levels have exceeded supported limits");
}

/* Raises DynamoDB's error for an attribute name that is empty or over 65535 bytes. */
void
item_check_name_length(int len, const char *what)
{
	if (len == 0)
		ddb_validation_error("One or more parameter values were invalid: %s: an attribute name must not be empty", what);
	if (len > ITEM_MAX_NAME_BYTES)
		ddb_validation_error("One or more parameter values were invalid: %s: an attribute name of %d bytes exceeds the limit of 65535 bytes",
							 what, len);
}

/* Canonical numeric value of DynamoDB number text; raises DynamoDB's errors. */
static JsonbValue
canonical_number(const char *text, int len)
{
	uint8_t		enc[KEY_MAX_ENCODED];
	size_t		enclen;
	char		out[KEY_MAX_NUMBER_TEXT + 1];
	size_t		outlen;
	KeyStatus	status = key_encode_number(text, (size_t) len, enc, &enclen);
	JsonbValue	v;

	if (status != KEY_OK)
		ddb_key_report(status);
	outlen = key_format_number(enc, enclen, out);
	out[outlen] = '\0';
	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(out),
														ObjectIdGetDatum(InvalidOid),
														Int32GetDatum(-1)));
	return v;
}

/* Canonical form of a natural number value. */
static JsonbValue
canonical_numeric(Numeric num)
{
	char	   *text;

	if (numeric_is_nan(num) || numeric_is_inf(num))
		ddb_key_report(KEY_NUMBER_SYNTAX);
	text = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(num)));
	return canonical_number(text, (int) strlen(text));
}

/* Decodes base64 text into bytes; raises on invalid input. */
bytea *
item_decode_base64(const char *text, int len, const char *what)
{
	int			max = pg_b64_dec_len(len);
	bytea	   *out = (bytea *) palloc(VARHDRSZ + max);
	int			n = pg_b64_decode(text, len, VARDATA(out), max);

	if (n < 0)
		ddb_validation_error("One or more parameter values were invalid: %s is not valid base64", what);
	SET_VARSIZE(out, VARHDRSZ + n);
	return out;
}

/* Canonical base64 string value of raw bytes. */
JsonbValue
item_base64_value(const char *bytes, int len)
{
	int			max = pg_b64_enc_len(len);
	char	   *out = palloc(max + 1);
	int			n = pg_b64_encode(bytes, len, out, max);

	if (n < 0)
		elog(ERROR, "ddb_model: base64 encoding failed");
	return item_string_value(out, n);
}

/* Canonical base64 of base64 text (decoded and encoded again). */
static JsonbValue
canonical_base64(JsonbValue *v, const char *what)
{
	bytea	   *bytes;

	if (v->type != jbvString)
		ddb_validation_error("One or more parameter values were invalid: %s must be a base64 string", what);
	bytes = item_decode_base64(v->val.string.val, v->val.string.len, what);
	return item_base64_value(VARDATA(bytes), VARSIZE(bytes) - VARHDRSZ);
}

/* Sorts and compares scalar values for the duplicate check of sets. */
static int
scalar_cmp(const void *a, const void *b)
{
	const JsonbValue *x = (const JsonbValue *) a;
	const JsonbValue *y = (const JsonbValue *) b;

	if (x->type == jbvNumeric)
		return DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(x->val.numeric),
												 NumericGetDatum(y->val.numeric)));
	if (x->val.string.len != y->val.string.len)
		return x->val.string.len < y->val.string.len ? -1 : 1;
	return memcmp(x->val.string.val, y->val.string.val, x->val.string.len);
}

/* A set's elements as DynamoDB's messages print them: [a, b, 1]. */
static char *
set_text(JsonbValue *elems, int n)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	for (int i = 0; i < n; i++)
	{
		if (i > 0)
			appendStringInfoString(&buf, ", ");
		if (elems[i].type == jbvNumeric)
			appendStringInfoString(&buf, DatumGetCString(DirectFunctionCall1(numeric_out,
																			 NumericGetDatum(elems[i].val.numeric))));
		else
			appendBinaryStringInfo(&buf, elems[i].val.string.val, elems[i].val.string.len);
	}
	appendStringInfoChar(&buf, ']');
	return buf.data;
}

/* Pushes a set as {"$SS": [...]} (or $NS, $BS), checked and sorted. */
static void
push_set(JsonbParseState **state, ItemType type, JsonbValue *elems, int n)
{
	const char *wrapper = type == ITEM_SS ? "$SS" : type == ITEM_NS ? "$NS" : "$BS";
	JsonbValue *sorted;

	/* DynamoDB's wording differs for binary sets */
	if (n == 0 && type == ITEM_BS)
		ddb_validation_error("One or more parameter values were invalid: Binary sets should not be empty");
	if (n == 0)
		ddb_validation_error("One or more parameter values were invalid: An %s set  may not be empty",
							 type == ITEM_SS ? "string" : "number");
	sorted = palloc(sizeof(JsonbValue) * n);
	memcpy(sorted, elems, sizeof(JsonbValue) * n);
	qsort(sorted, n, sizeof(JsonbValue), scalar_cmp);
	for (int i = 1; i < n; i++)
		if (scalar_cmp(&sorted[i - 1], &sorted[i]) == 0)
			ddb_validation_error("One or more parameter values were invalid: Input collection %s contains duplicates.",
								 set_text(elems, n));

	/* stored sorted, so that equal sets are equal jsonb whatever order they came in */
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(state, wrapper);
	pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < n; i++)
		pushJsonbValue(state, WJB_ELEM, &sorted[i]);
	pushJsonbValue(state, WJB_END_ARRAY, NULL);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* Collects the elements of a set array, canonical; raises on a wrong element type. */
static JsonbValue *
set_elements(JsonbValue *array, ItemType type, bool from_dynamodb, int *n)
{
	JsonbContainer *jc;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbValue *elems;
	JsonbIteratorToken tok;

	if (array->type != jbvBinary || !JsonContainerIsArray(array->val.binary.data))
		ddb_validation_error("One or more parameter values were invalid: a %s value must be an array",
							 item_type_name(type));
	jc = array->val.binary.data;
	elems = palloc(sizeof(JsonbValue) * Max(1, JsonContainerSize(jc)));
	*n = 0;
	it = JsonbIteratorInit(jc);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (type == ITEM_NS && !from_dynamodb && v.type == jbvNumeric)
			elems[(*n)++] = canonical_numeric(v.val.numeric);
		else if (v.type != jbvString)
			ddb_validation_error("One or more parameter values were invalid: the elements of a %s must be %s",
								 item_type_name(type),
								 type == ITEM_NS && !from_dynamodb ? "numbers" : "strings");
		else if (type == ITEM_NS)
			elems[(*n)++] = canonical_number(v.val.string.val, v.val.string.len);
		else if (type == ITEM_BS)
			elems[(*n)++] = canonical_base64(&v, "a binary set element");
		else
			elems[(*n)++] = v;
	}
	return elems;
}

/*
 * Pushes a map, its values converted from DynamoDB JSON or canonicalised;
 * a map value that would read as a wrapper is wrapped in $M (a top-level
 * item never is: its keys are attribute names).  Returns the result of the
 * last push (the whole value when the map is outermost).
 */
static JsonbValue *
push_map(JsonbParseState **state, JsonbContainer *obj, bool from_dynamodb, bool top_level,
		 int depth)
{
	JsonbValue *result;
	JsonbIterator *it;
	JsonbValue	key;
	JsonbValue	value;
	JsonbValue	inner;
	JsonbIteratorToken tok;
	bool		wrap = !top_level && item_single_pair(obj, &key, &inner) && wrapper_type(&key) >= 0;

	check_depth(depth);

	if (wrap)
	{
		pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
		ddb_push_key(state, "$M");
	}
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	it = JsonbIteratorInit(obj);
	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		if (tok != WJB_KEY)
			continue;
		item_check_name_length(key.val.string.len, top_level ? "Item" : "a map");
		pushJsonbValue(state, WJB_KEY, &key);
		tok = JsonbIteratorNext(&it, &value, true);
		if (from_dynamodb)
			value_from_dynamodb(state, &value, false, depth + 1);
		else
			push_canonical(state, &value, false, depth + 1);
	}
	result = pushJsonbValue(state, WJB_END_OBJECT, NULL);
	if (wrap)
		result = pushJsonbValue(state, WJB_END_OBJECT, NULL);
	return result;
}

/* Pushes a list whose elements are converted like push_map's values. */
static void
push_list(JsonbParseState **state, JsonbContainer *arr, bool from_dynamodb, int depth)
{
	JsonbIterator *it = JsonbIteratorInit(arr);
	JsonbValue	value;
	JsonbIteratorToken tok;

	check_depth(depth);
	pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
	while ((tok = JsonbIteratorNext(&it, &value, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (from_dynamodb)
			value_from_dynamodb(state, &value, true, depth + 1);
		else
			push_canonical(state, &value, true, depth + 1);
	}
	pushJsonbValue(state, WJB_END_ARRAY, NULL);
}

/* Pushes the canonical form of one natural value. */
static void
push_canonical(JsonbParseState **state, JsonbValue *value, bool in_array, int depth)
{
	JsonbValue	key;
	JsonbValue	inner;
	JsonbValue	v;
	JsonbValue *elems;
	int			n;
	ItemType	type = item_value_type(value);

	switch (type)
	{
		case ITEM_S:
		case ITEM_BOOL:
		case ITEM_NULL:
			push_scalar(state, value, in_array);
			return;
		case ITEM_N:
			v = canonical_numeric(value->val.numeric);
			push_scalar(state, &v, in_array);
			return;
		case ITEM_L:
			push_list(state, value->val.binary.data, false, depth);
			return;
		case ITEM_M:
			/* an explicit {"$M": {...}} wrapper is unwrapped, then re-wrapped if needed */
			if (item_single_pair(value->val.binary.data, &key, &inner) && item_string_is(&key, "$M"))
			{
				if (inner.type != jbvBinary || !JsonContainerIsObject(inner.val.binary.data))
					ddb_validation_error("One or more parameter values were invalid: $M must hold an object");
				push_map(state, inner.val.binary.data, false, false, depth);
			}
			else
				push_map(state, value->val.binary.data, false, false, depth);
			return;
		case ITEM_B:
			item_single_pair(value->val.binary.data, &key, &inner);
			v = canonical_base64(&inner, "a binary value");
			pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
			ddb_push_key(state, "$B");
			pushJsonbValue(state, WJB_VALUE, &v);
			pushJsonbValue(state, WJB_END_OBJECT, NULL);
			return;
		case ITEM_SS:
		case ITEM_NS:
		case ITEM_BS:
			item_single_pair(value->val.binary.data, &key, &inner);
			elems = set_elements(&inner, type, false, &n);
			push_set(state, type, elems, n);
			return;
	}
}

/* Raises DynamoDB's error for an AttributeValue that is not one typed value. */
static void
report_bad_attribute_value(int count)
{
	if (count == 0)
		ddb_validation_error("Supplied AttributeValue is empty, must contain exactly one of the supported datatypes");
	ddb_validation_error("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes");
}

/* Pushes the natural value of one DynamoDB-JSON AttributeValue. */
static void
value_from_dynamodb(JsonbParseState **state, JsonbValue *av, bool in_array, int depth)
{
	JsonbValue	tag;
	JsonbValue	inner;
	JsonbValue	v;
	JsonbValue *elems;
	int			n;

	if (av->type != jbvBinary || !JsonContainerIsObject(av->val.binary.data))
		report_bad_attribute_value(0);
	if (!item_single_pair(av->val.binary.data, &tag, &inner))
		report_bad_attribute_value(JsonContainerSize(av->val.binary.data));

	if (item_string_is(&tag, "S") && inner.type == jbvString)
		push_scalar(state, &inner, in_array);
	else if (item_string_is(&tag, "N") && inner.type == jbvString)
	{
		v = canonical_number(inner.val.string.val, inner.val.string.len);
		push_scalar(state, &v, in_array);
	}
	else if (item_string_is(&tag, "BOOL") && inner.type == jbvBool)
		push_scalar(state, &inner, in_array);
	else if (item_string_is(&tag, "NULL") && inner.type == jbvBool)
	{
		if (!inner.val.boolean)
			ddb_validation_error("One or more parameter values were invalid: Null attribute value types must have the value of true");
		v.type = jbvNull;
		push_scalar(state, &v, in_array);
	}
	else if (item_string_is(&tag, "B") && inner.type == jbvString)
	{
		v = canonical_base64(&inner, "a binary value");
		pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
		ddb_push_key(state, "$B");
		pushJsonbValue(state, WJB_VALUE, &v);
		pushJsonbValue(state, WJB_END_OBJECT, NULL);
	}
	else if (item_string_is(&tag, "M") && inner.type == jbvBinary &&
			 JsonContainerIsObject(inner.val.binary.data))
		push_map(state, inner.val.binary.data, true, false, depth);
	else if (item_string_is(&tag, "L") && inner.type == jbvBinary &&
			 JsonContainerIsArray(inner.val.binary.data))
		push_list(state, inner.val.binary.data, true, depth);
	else if (item_string_is(&tag, "SS") || item_string_is(&tag, "NS") || item_string_is(&tag, "BS"))
	{
		ItemType	type = item_string_is(&tag, "SS") ? ITEM_SS : item_string_is(&tag, "NS") ? ITEM_NS : ITEM_BS;

		elems = set_elements(&inner, type, true, &n);
		push_set(state, type, elems, n);
	}
	else if (tag.type == jbvString)
		ereport(ERROR,
				(errcode(ERRCODE_DDB_SERIALIZATION),
				 errmsg("Unexpected value for AttributeValue type %.*s",
						tag.val.string.len, tag.val.string.val)));
}

/* Converts one DynamoDB-JSON AttributeValue to a canonical natural value. */
void
item_value_from_dynamodb(JsonbValue *av, JsonbValue *out)
{
	JsonbParseState *state = NULL;
	JsonbValue *result;

	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	value_from_dynamodb(&state, av, true, 1);
	result = pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	/* through a Jsonb, so that containers come back as jbvBinary */
	*out = *getIthJsonbValueFromContainer(&JsonbValueToJsonb(result)->root, 0);
}

/* Converts a DynamoDB-JSON item to canonical natural jsonb. */
Jsonb *
item_from_dynamodb(JsonbContainer *attributes)
{
	JsonbParseState *state = NULL;

	if (!JsonContainerIsObject(attributes))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_SERIALIZATION),
				 errmsg("An item must be a map of attribute names to AttributeValues")));
	return JsonbValueToJsonb(push_map(&state, attributes, true, true, 0));
}

/* Validates a natural item and returns it in canonical form. */
Jsonb *
item_canonical(JsonbContainer *natural)
{
	JsonbParseState *state = NULL;

	if (!JsonContainerIsObject(natural))
		ddb_validation_error("An item must be a JSON object of attribute names to values");
	return JsonbValueToJsonb(push_map(&state, natural, false, true, 0));
}
