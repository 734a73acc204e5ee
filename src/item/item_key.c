/*
 * item_key.c — key values of items: a top-level attribute, a natural value
 * made into a ddb_key (typed, DynamoDB's limits and messages) and back.
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "../ddb_errors.h"
#include "../ddb_jsonb.h"
#include "../key/ddb_key.h"
#include "item_codec.h"
#include "item_internal.h"

/* Looks up a top-level attribute of a natural item. */
bool
item_get_attribute(JsonbContainer *natural, const char *name, JsonbValue *out)
{
	if (!JsonContainerIsObject(natural))
		ddb_validation_error("An item must be a JSON object of attribute names to values");
	return getKeyJsonValueFromContainer(natural, name, (int) strlen(name), out) != NULL;
}

/* Raises DynamoDB's error for an empty key value. */
static void
report_empty_key(const KeyRole *role, bool binary)
{
	const char *what = binary ? "binary" : "string";

	if (role->index_name)
		ddb_validation_error("One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty %s value. IndexName: %s, IndexKey: %s",
							 what, role->index_name, role->attribute);
	ddb_validation_error("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s",
						 what, role->attribute);
}

/* Makes a ddb_key datum from a natural value of the expected key type. */
bool
item_value_to_key(JsonbValue *value, char expected, const KeyRole *role, Datum *key)
{
	uint8_t		enc[KEY_MAX_ENCODED];
	size_t		enclen;
	size_t		limit = role->range ? ITEM_MAX_RANGE_KEY : ITEM_MAX_HASH_KEY;
	size_t		len;
	KeyStatus	status;
	ItemType	type = item_value_type(value);
	JsonbValue	k;
	JsonbValue	inner;
	bytea	   *bytes = NULL;

	if ((expected == 'S' && type != ITEM_S) || (expected == 'N' && type != ITEM_N) ||
		(expected == 'B' && type != ITEM_B))
		return false;

	if (type == ITEM_S)
		len = value->val.string.len;
	else if (type == ITEM_B)
	{
		item_single_pair(value->val.binary.data, &k, &inner);
		bytes = item_decode_base64(inner.val.string.val, inner.val.string.len, "a binary key");
		len = VARSIZE(bytes) - VARHDRSZ;
	}
	else
		len = 0;
	if (type != ITEM_N && len == 0)
		report_empty_key(role, type == ITEM_B);
	if (len > limit)
	{
		if (role->range)
			ddb_validation_error("One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes");
		ddb_validation_error("One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of 2048 bytes");
	}

	if (type == ITEM_S)
		status = key_encode_string(value->val.string.val, len, enc, &enclen);
	else if (type == ITEM_B)
		status = key_encode_binary((const uint8_t *) VARDATA(bytes), len, enc, &enclen);
	else
	{
		char	   *text = DatumGetCString(DirectFunctionCall1(numeric_out,
															   NumericGetDatum(value->val.numeric)));

		status = key_encode_number(text, strlen(text), enc, &enclen);
	}
	if (status != KEY_OK)
		ddb_key_report(status);
	*key = PointerGetDatum(ddb_key_from_encoded(enc, enclen));
	return true;
}

/* Makes the natural value of a ddb_key datum. */
void
item_key_to_value(Datum key, JsonbValue *out)
{
	struct varlena *k = PG_DETOAST_DATUM_PACKED(key);
	const uint8_t *enc = DDB_KEY_DATA(k);
	size_t		len = DDB_KEY_LEN(k);
	char		number[KEY_MAX_NUMBER_TEXT + 1];
	JsonbParseState *state = NULL;
	JsonbValue	v;
	size_t		n;

	switch (enc[0])
	{
		case KEY_TAG_S:
			*out = item_string_value((const char *) enc + 1, (int) len - 1);
			return;
		case KEY_TAG_N:
			n = key_format_number(enc, len, number);
			number[n] = '\0';
			out->type = jbvNumeric;
			out->val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(number),
																   ObjectIdGetDatum(InvalidOid),
																   Int32GetDatum(-1)));
			return;
		default:
			v = item_base64_value((const char *) enc + 1, (int) len - 1);
			pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
			ddb_push_key(&state, "$B");
			pushJsonbValue(&state, WJB_VALUE, &v);
			out->type = jbvBinary;
			out->val.binary.data = &JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL))->root;
			out->val.binary.len = 0;
			return;
	}
}
