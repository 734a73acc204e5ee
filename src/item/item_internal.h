/*
 * item_internal.h — what the files of src/item/ share among themselves:
 * string values, one-pair wrappers, base64.  Not for the layers above.
 */
#ifndef DDB_ITEM_INTERNAL_H
#define DDB_ITEM_INTERNAL_H

#include "postgres.h"

#include "utils/jsonb.h"

/* A jbvString value for a C string. */
extern JsonbValue item_string_value(const char *str, int len);

/* The only key and value of a one-pair object container; false otherwise. */
extern bool item_single_pair(JsonbContainer *obj, JsonbValue *key, JsonbValue *value);

/* Decodes base64 text into bytes; raises on invalid input (what names it in the message). */
extern bytea *item_decode_base64(const char *text, int len, const char *what);

/* Canonical base64 string value of raw bytes. */
extern JsonbValue item_base64_value(const char *bytes, int len);

/* True when a string value equals a C string. */
static inline bool
item_string_is(JsonbValue *v, const char *s)
{
	return v->type == jbvString && v->val.string.len == (int) strlen(s) &&
		memcmp(v->val.string.val, s, v->val.string.len) == 0;
}

#endif							/* DDB_ITEM_INTERNAL_H */
