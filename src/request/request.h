/*
 * request.h — reading the requests of ddb.execute (request.c): typed
 * fields, the TableName of an item operation, the expression placeholders a
 * request carries, key maps; pushing keys into responses.  The names keep
 * the api_ prefix of the folder they grew in (src/api/).
 */
#ifndef DDB_REQUEST_H
#define DDB_REQUEST_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "../itemexpr/itemexpr.h"

/* A request field; false when absent (or JSON null). */
extern bool api_field(Jsonb *request, const char *name, JsonbValue *out);

/* A string field, or NULL when absent; raises when present with another type. */
extern char *api_string(Jsonb *request, const char *name);

/* The ClientRequestToken of a transaction (1 to 36 characters), or NULL when absent. */
extern char *api_client_request_token(Jsonb *request);

/*
 * DynamoDB's first checks of an item operation's request: the TableName
 * alone, then the enum members (ReturnConsumedCapacity,
 * ReturnItemCollectionMetrics, ReturnValues, Query's and Scan's Select),
 * their IndexName and Scan's Limit, Segment and TotalSegments reported
 * together.
 */
extern void api_check_request_members(Jsonb *request, const char *operation);

/* The table an item operation's TableName names, checked as DynamoDB checks it. */
extern TableDef *api_request_table(Jsonb *request);

/* A TableName of an item operation checked as DynamoDB checks it before looking the table up (1 to 255 of [a-zA-Z0-9_.-]). */
extern char *api_table_name(char *name);

/* A string field that must be present. */
extern char *api_required_string(Jsonb *request, const char *name, const char *member);

/* An object field, or NULL when absent; raises when present with another type. */
extern JsonbContainer *api_object(Jsonb *request, const char *name);

/* A boolean field, or dflt when absent. */
extern bool api_bool(Jsonb *request, const char *name, bool dflt);

/* An integer field, or -1 when absent; raises unless it is an integer in [min, max]. */
extern int64 api_int(Jsonb *request, const char *name, int64 min, int64 max);

/* Raises DynamoDB's error for a missing required member. */
extern void api_missing(const char *member) pg_attribute_noreturn();

/* Reads ExpressionAttributeNames/Values of a request into a context. */
extern void api_expr_context(Jsonb *request, Placeholders *ctx);

/*
 * Raises when placeholders come with an operation that has no expression
 * using them; value_expressions_null ends the message for values, or NULL.
 */
extern void api_reject_placeholders(Jsonb *request, const char *value_expressions_null);

/* Reads a Key map (DynamoDB JSON) for a table: exactly its key attributes. */
extern void api_table_key(TableDef *def, JsonbContainer *key, Datum *pk, Datum *sk);

/* Pushes the DynamoDB-JSON key attributes of a row (table keys, and index keys). */
extern void api_push_row_key(JsonbParseState **state, TableDef *def, IndexDef *index,
							 RowKeys *keys);

/* Compares two ddb_key datums in DynamoDB order. */
extern int	api_compare_keys(Datum a, Datum b);

/* True when two keys of one table address the same item. */
extern bool api_same_key(Datum pk1, Datum sk1, Datum pk2, Datum sk2);

#endif							/* DDB_REQUEST_H */
