/*
 * api.h — shared pieces of ddb.execute: reading request fields, building
 * responses, expressions with their placeholders, and the operations.
 */
#ifndef DDB_API_H
#define DDB_API_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "../expr/expr.h"
#include "../expr/expr_eval.h"
#include "../table/item_store.h"

/* The placeholders of a request and which of them expressions used. */
typedef struct Placeholders
{
	JsonbContainer *names;		/* ExpressionAttributeNames, or NULL */
	JsonbContainer *values;		/* ExpressionAttributeValues, or NULL */
	bool		natural_values; /* values are natural jsonb (SQL functions), not DynamoDB JSON */
	List	   *used_names;		/* char * of the #names expressions used */
	List	   *used_values;
} Placeholders;

/* The state of an evaluator host (expr_host.c) for one request's expression. */
typedef struct HostContext
{
	Placeholders *ph;
	const char *kind;			/* "FilterExpression", ... for messages */
	JsonbContainer *item;		/* the item being evaluated */
	List	   *values;			/* placeholder values converted so far */
	MemoryContext cxt;			/* where they live: the request's, not a row's */
} HostContext;

/* Sets up an evaluator host for one request's expression. */
extern void api_expr_host(HostContext *ctx, Placeholders *ph, const char *kind, ExprHost *host);

/*
 * Resolves every placeholder of an expression and applies DynamoDB's static
 * checks, so that a bad expression fails before any item is read.
 */
extern void api_check_expression(Placeholders *ph, const char *kind, const ExprNode *node);

/* Order of two natural values of one type, S, N or B (DynamoDB's order). */
extern int	api_compare_values(JsonbValue *a, JsonbValue *b);

/* The kind an attribute_type name stands for (S = 1, ...), or -1 for a name DynamoDB does not know. */
extern int	api_attribute_type_kind(JsonbValue *name);

/* A request field; false when absent (or JSON null). */
extern bool api_field(Jsonb *request, const char *name, JsonbValue *out);

/* A string field, or NULL when absent; raises when present with another type. */
extern char *api_string(Jsonb *request, const char *name);

/*
 * DynamoDB's first checks of an item operation's request: the TableName
 * alone, then the enum members (ReturnConsumedCapacity,
 * ReturnItemCollectionMetrics, ReturnValues) reported together.
 */
extern void api_check_request_members(Jsonb *request);

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

/* The placeholders of a SQL function call: names ({"#n": "name"}) and natural values ({":v": 1}), either NULL. */
extern void api_sql_placeholders(Placeholders *ctx, Jsonb *names, Jsonb *values);

/* Arena allocation for the expression parser: palloc in the current context. */
extern void *api_palloc_arena(void *context, size_t size);

/* A parsed ProjectionExpression (projection.c). */
typedef struct ProjectionNode ProjectionNode;

/* Parses a ProjectionExpression into its trie; NULL for a NULL text. */
extern ProjectionNode *api_projection(Placeholders *ph, const char *text);

/* The trie of document paths, raising DynamoDB's overlap and conflict errors. */
extern ProjectionNode *api_path_trie(Placeholders *ph, const char *kind, ExprNode **paths, int npaths);

/* Applies an UpdateExpression to an item (update.c); returns the new canonical item. */
extern Jsonb *api_apply_update(const ExprUpdate *update, Placeholders *ph, Jsonb *item);

/* The item as a ProjectionExpression projects it (a new natural item). */
extern Jsonb *api_project(ProjectionNode *projection, Jsonb *item);

/* Parses a condition expression of the request, raising DynamoDB's errors. */
extern ExprNode *api_parse_condition(Placeholders *ctx, const char *kind, const char *text);

/* The attribute name a path step stands for (resolving #placeholders). */
extern char *api_step_name(Placeholders *ctx, const char *kind, ExprPathStep *step);

/* The natural value of a :value placeholder. */
extern void api_value(Placeholders *ctx, const char *kind, ExprNode *value, JsonbValue *out);

/* "[a, b, [2]]": the first nsteps of a path as DynamoDB's messages print it. */
extern char *api_path_text(Placeholders *ph, const char *kind, const ExprNode *path, int nsteps);

/*
 * Raises when placeholders come with an operation that has no expression
 * using them; value_expressions_null ends the message for values, or NULL.
 */
extern void api_reject_placeholders(Jsonb *request, const char *value_expressions_null);

/* Raises when a request defined placeholders that no expression used. */
extern void api_check_unused(Placeholders *ctx);

/* Reads a Key map (DynamoDB JSON) for a table: exactly its key attributes. */
extern void api_table_key(TableDef *def, JsonbContainer *key, Datum *pk, Datum *sk);

/* Pushes the DynamoDB-JSON key attributes of a row (table keys, and index keys). */
extern void api_push_row_key(JsonbParseState **state, TableDef *def, IndexDef *index,
							 RowKeys *keys);

/* True when two keys of one table address the same item. */
extern bool api_same_key(Datum pk1, Datum sk1, Datum pk2, Datum sk2);

/* Pushes a string key; a member whose value is a string; an empty response, {}. */
extern void api_push_key(JsonbParseState **state, const char *key);
extern void api_push_string(JsonbParseState **state, const char *key, const char *value);
extern Jsonb *api_empty_response(void);

/* A jbvBinary value holding a whole Jsonb. */
extern void api_binary_value(Jsonb *j, JsonbValue *out);

/* The operations. */

extern Jsonb *api_put_item(Jsonb *request);
extern Jsonb *api_get_item(Jsonb *request);
extern Jsonb *api_delete_item(Jsonb *request);
extern Jsonb *api_update_item(Jsonb *request);

/* The legacy parameters an operation takes (legacy.c), by what they rewrite to. */
#define LEGACY_EXPECTED				0x01	/* Expected (and ConditionalOperator): ConditionExpression */
#define LEGACY_ATTRIBUTE_UPDATES	0x02	/* AttributeUpdates: UpdateExpression */
#define LEGACY_ATTRIBUTES_TO_GET	0x04	/* AttributesToGet: ProjectionExpression */
#define LEGACY_KEY_CONDITIONS		0x08	/* KeyConditions: KeyConditionExpression */
#define LEGACY_QUERY_FILTER			0x10	/* QueryFilter (and ConditionalOperator): FilterExpression */
#define LEGACY_SCAN_FILTER			0x20	/* ScanFilter (and ConditionalOperator): FilterExpression */

/* The request with the legacy parameters an operation accepts rewritten into expressions (DynamoDB's mixing rules first). */
extern Jsonb *api_legacy_to_expressions(Jsonb *request, int accepted, const char *value_expressions_null);

/* ReturnItemCollectionMetrics: true for SIZE (checked up front by api_check_request_members). */
extern bool api_collection_metrics_wanted(Jsonb *request);

/* Pushes ItemCollectionMetrics for the item collections a batch or transaction wrote (tables with LSIs only). */
extern void api_push_collection_metrics_map(JsonbParseState **state, TableDef **defs, Datum *pks, int n);

/* A ConditionExpression as a WriteCondition checked under the row lock; NULL for a NULL text. */
extern WriteCondition *api_write_condition(Placeholders *ph, const char *text);

/* Raises ConditionalCheckFailedException (the current item in the body when return_item). */
extern void api_raise_condition_failed(const char *condition, bool return_item, Jsonb *current) pg_attribute_noreturn();

/* ConsumedCapacity (capacity.c): recording a request's reads and writes, and the response with them. */
extern void api_capacity_start(Jsonb *request);
extern void api_capacity_stop(void);
extern void api_capacity_read(const char *table, IndexDef *index, int64 bytes, bool consistent);
extern void api_capacity_read_item(const char *table, Jsonb *item, bool consistent);
extern void api_capacity_write_item(const char *table, Jsonb *before, Jsonb *after);
extern Jsonb *api_capacity_response(Jsonb *request, Jsonb *response, bool per_table_list);

/* A FilterExpression parsed and checked before any item is read; NULL for a NULL text. */
extern ExprNode *api_parse_filter(Placeholders *ph, const char *text);

/* A ReturnValues option of UpdateItem (NULL: NONE), checked. */
extern const char *api_update_return_values(const char *rv);

/* Parses an UpdateExpression for a table; *paths gets the trie of the updated paths. */
extern ExprUpdate *api_parse_update(TableDef *def, Placeholders *ph, const char *text,
									ProjectionNode **paths);

/* Applies an update (NULL: create from the key if absent) under a condition; false when it failed. */
extern bool api_store_update(TableDef *def, Datum pk, Datum sk, ExprUpdate *update, Placeholders *ph,
							 WriteCondition *cond, Jsonb **old, Jsonb **written);

/* The attributes an UpdateItem returns for a ReturnValues option, or NULL for none. */
extern Jsonb *api_update_returned(const char *rv, ProjectionNode *paths, Jsonb *old, Jsonb *written);
extern Jsonb *api_condition_check(Jsonb *request);
extern Jsonb *api_transact_write_items(Jsonb *request);

/* TransactWriteItems where inserts[i] marks a Put whose failed condition is reported as DuplicateItem (PartiQL INSERT). */
extern Jsonb *api_transact_write(Jsonb *request, const bool *inserts);
extern Jsonb *api_transact_get_items(Jsonb *request);
extern Jsonb *api_query(Jsonb *request);
extern Jsonb *api_scan(Jsonb *request);
extern Jsonb *api_batch_write_item(Jsonb *request);
extern Jsonb *api_batch_get_item(Jsonb *request);

/* PartiQL (partiql.c): statements rewritten into the operations above. */
extern Jsonb *api_execute_statement(Jsonb *request);
extern Jsonb *api_batch_execute_statement(Jsonb *request);
extern Jsonb *api_execute_transaction(Jsonb *request);

#endif							/* DDB_API_H */
