/*
 * item_codec.h — DynamoDB items as natural jsonb, and their DynamoDB-JSON twin.
 *
 * Natural encoding (docs/items.md): S is a JSON string, N a JSON number in
 * canonical form, BOOL true/false, NULL null, M an object, L an array; the
 * types JSON lacks are one-key objects: {"$B": "<base64>"},
 * {"$SS": [...]}, {"$NS": [...]}, {"$BS": [...]}.  A map that would read as
 * one of those (its only key is $B, $SS, $NS, $BS or $M) is wrapped as
 * {"$M": {...}}.
 */
#ifndef DDB_ITEM_CODEC_H
#define DDB_ITEM_CODEC_H

#include "postgres.h"

#include "utils/jsonb.h"

/* DynamoDB's largest item, in its own size units. */
#define ITEM_MAX_SIZE (400 * 1024)
/* DynamoDB's largest partition and sort key values, in bytes. */
#define ITEM_MAX_HASH_KEY 2048
#define ITEM_MAX_RANGE_KEY 1024

/* The DynamoDB type of a natural value. */
typedef enum ItemType
{
	ITEM_S,
	ITEM_N,
	ITEM_B,
	ITEM_BOOL,
	ITEM_NULL,
	ITEM_M,
	ITEM_L,
	ITEM_SS,
	ITEM_NS,
	ITEM_BS
} ItemType;

/* Which key a value is made into, for limits and DynamoDB's messages. */
typedef struct KeyRole
{
	const char *attribute;		/* the key attribute's name */
	const char *index_name;		/* the GSI, or NULL for the table's own key */
	bool		range;			/* sort key (1024 bytes) or partition key (2048) */
} KeyRole;

/* The DynamoDB type name ("S", "NS", ...) of a type. */
extern const char *item_type_name(ItemType type);

/* The DynamoDB type of a natural jsonb value. */
extern ItemType item_value_type(JsonbValue *value);

/* DynamoDB's longest attribute name, in bytes (the shortest is one byte). */
#define ITEM_MAX_NAME_BYTES 65535

/*
 * Raises DynamoDB's error for an attribute name of len bytes that is empty
 * or over ITEM_MAX_NAME_BYTES; what says where it stood.
 */
extern void item_check_name_length(int len, const char *what);

/* Converts a DynamoDB-JSON item ({"a": {"S": "x"}}) to canonical natural jsonb. */
extern Jsonb *item_from_dynamodb(JsonbContainer *attributes);

/* Converts one DynamoDB-JSON AttributeValue to a canonical natural value. */
extern void item_value_from_dynamodb(JsonbValue *av, JsonbValue *out);

/* Validates a natural item and returns it in canonical form. */
extern Jsonb *item_canonical(JsonbContainer *natural);

/* Pushes a natural item (an object) as a DynamoDB-JSON item ({"a": {"S": "x"}}). */
extern void item_push_dynamodb(JsonbParseState **state, JsonbContainer *natural);

/* A natural item (an object) as a DynamoDB-JSON item. */
extern Jsonb *item_to_dynamodb(JsonbContainer *natural);

/* Pushes the DynamoDB-JSON AttributeValue of one natural value. */
extern void item_push_dynamodb_value(JsonbParseState **state, JsonbValue *natural);

/* DynamoDB's size of a natural item: names plus values (docs/items.md). */
extern int64 item_size(JsonbContainer *natural);

/* Looks up a top-level attribute of a natural item; false when absent. */
extern bool item_get_attribute(JsonbContainer *natural, const char *name, JsonbValue *out);

/*
 * Makes a ddb_key datum from a natural value that should have key type
 * expected ('S', 'N' or 'B').  Returns false when the value has another
 * type; raises DynamoDB's errors for empty and oversize keys.
 */
extern bool item_value_to_key(JsonbValue *value, char expected, const KeyRole *role,
							  Datum *key);

/* Makes the natural value of a ddb_key datum. */
extern void item_key_to_value(Datum key, JsonbValue *out);

#endif							/* DDB_ITEM_CODEC_H */
