/*
 * item_size.c — DynamoDB's size of an item: attribute names plus values,
 * numbers by their significant digits (docs/items.md).
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "item_codec.h"
#include "item_internal.h"

/* Decoded length of canonical base64 text. */
static int64
base64_size(JsonbValue *v)
{
	int			len = v->val.string.len;
	int			pad = 0;

	if (len >= 1 && v->val.string.val[len - 1] == '=')
		pad++;
	if (len >= 2 && v->val.string.val[len - 2] == '=')
		pad++;
	return (int64) len / 4 * 3 - pad;
}

/* DynamoDB's size of a number: one byte per two significant digits, plus one. */
static int64
number_size(Numeric num)
{
	char	   *text = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(num)));
	int			digits = 0;
	int			pending_zeros = 0;
	bool		started = false;

	for (char *p = text; *p; p++)
	{
		if (*p < '0' || *p > '9')
			continue;
		if (*p == '0')
		{
			if (started)
				pending_zeros++;
			continue;
		}
		started = true;
		digits += pending_zeros + 1;
		pending_zeros = 0;
	}
	return (digits + 1) / 2 + 1 + (text[0] == '-' ? 1 : 0);
}

/* DynamoDB's size of one natural value (names of map entries included). */
static int64
value_size(JsonbValue *value)
{
	JsonbValue	key;
	JsonbValue	inner;
	JsonbValue	v;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	int64		size = 0;
	ItemType	type = item_value_type(value);

	check_stack_depth();
	switch (type)
	{
		case ITEM_S:
			return value->val.string.len;
		case ITEM_N:
			return number_size(value->val.numeric);
		case ITEM_BOOL:
		case ITEM_NULL:
			return 1;
		case ITEM_B:
			item_single_pair(value->val.binary.data, &key, &inner);
			return base64_size(&inner);
		case ITEM_SS:
		case ITEM_NS:
		case ITEM_BS:
			item_single_pair(value->val.binary.data, &key, &inner);
			it = JsonbIteratorInit(inner.val.binary.data);
			while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			{
				/* elements of another JSON type (written by hand) count nothing */
				if (tok != WJB_ELEM)
					continue;
				if (type == ITEM_NS && v.type == jbvNumeric)
					size += number_size(v.val.numeric);
				else if (type == ITEM_SS && v.type == jbvString)
					size += v.val.string.len;
				else if (type == ITEM_BS && v.type == jbvString)
					size += base64_size(&v);
			}
			return size;
		case ITEM_L:
		case ITEM_M:
			if (type == ITEM_M && item_single_pair(value->val.binary.data, &key, &inner) &&
				item_string_is(&key, "$M"))
				value = &inner;
			size = 3;
			it = JsonbIteratorInit(value->val.binary.data);
			while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			{
				if (tok == WJB_KEY)
					size += v.val.string.len;
				else if (tok == WJB_VALUE || tok == WJB_ELEM)
					size += value_size(&v) + 1;
			}
			return size;
	}
	return size;
}

/* DynamoDB's size of a natural item: names plus values. */
int64
item_size(JsonbContainer *natural)
{
	JsonbIterator *it = JsonbIteratorInit(natural);
	JsonbValue	v;
	JsonbIteratorToken tok;
	int64		size = 0;

	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
			size += v.val.string.len;
		else if (tok == WJB_VALUE)
			size += value_size(&v);
	}
	return size;
}
