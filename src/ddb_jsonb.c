/*
 * ddb_jsonb.c — small jsonb building blocks that every layer uses.
 */
#include "postgres.h"

#include "ddb_jsonb.h"

/* Pushes a string key. */
void
ddb_push_key(JsonbParseState **state, const char *key)
{
	JsonbValue	k;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = (int) strlen(key);
	pushJsonbValue(state, WJB_KEY, &k);
}

/* Pushes a member whose value is a string. */
void
ddb_push_string(JsonbParseState **state, const char *key, const char *value)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) value;
	v.val.string.len = (int) strlen(value);
	ddb_push_key(state, key);
	pushJsonbValue(state, WJB_VALUE, &v);
}

/* A jbvBinary value holding a whole Jsonb (its length set, so it can be copied or pushed). */
void
ddb_binary_value(Jsonb *j, JsonbValue *out)
{
	out->type = jbvBinary;
	out->val.binary.data = &j->root;
	out->val.binary.len = VARSIZE(j) - VARHDRSZ;
}

/* An empty object, {}: an item without attributes, or an empty response. */
Jsonb *
ddb_empty_object(void)
{
	JsonbParseState *state = NULL;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}
