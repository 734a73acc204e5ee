/*
 * ddb_jsonb.h — small jsonb building blocks that every layer uses: keys
 * and string members pushed into a JsonbParseState, a whole Jsonb as a
 * value, the empty object.
 */
#ifndef DDB_JSONB_H
#define DDB_JSONB_H

#include "postgres.h"

#include "utils/jsonb.h"

/* Pushes a string key. */
extern void ddb_push_key(JsonbParseState **state, const char *key);

/* Pushes a member whose value is a string. */
extern void ddb_push_string(JsonbParseState **state, const char *key, const char *value);

/* A jbvBinary value holding a whole Jsonb (its length set, so it can be copied or pushed). */
extern void ddb_binary_value(Jsonb *j, JsonbValue *out);

/* An empty object, {}: an item without attributes, or an empty response. */
extern Jsonb *ddb_empty_object(void);

#endif							/* DDB_JSONB_H */
