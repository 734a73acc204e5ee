/*
 * api.h — shared pieces of ddb.execute: reading request fields, building
 * responses, and the operations.  Expressions are src/itemexpr/'s.
 */
#ifndef DDB_API_H
#define DDB_API_H

#include "postgres.h"

#include "utils/jsonb.h"
#include "utils/resowner.h"

#include "../ddb_jsonb.h"
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

/* A subtransaction and what its caller had current (subtransaction.c). */
typedef struct Subtransaction
{
	MemoryContext cxt;
	ResourceOwner owner;
} Subtransaction;

/* Starts a subtransaction, staying in the caller's memory context. */
extern void api_subtransaction_begin(Subtransaction *sub);

/* Commits, or rolls back, the subtransaction; the caller's context and resource owner are current again. */
extern void api_subtransaction_commit(Subtransaction *sub);
extern void api_subtransaction_rollback(Subtransaction *sub);

/* Runs fn(arg) in a subtransaction of its own: NULL, or the error it raised (rolled back, the error state flushed). */
extern ErrorData *api_subtransaction_run(void (*fn) (void *arg), void *arg);

/* The operations. */

/* Marks the restore or import of a table (a text Datum) by job done, as ddb.table_restores' owner (SPI connected): restore_items.c. */
extern void api_restore_done(Datum table_name, int32 job);

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

/* The response of a single-item write with ItemCollectionMetrics added (tables with LSIs only). */
extern Jsonb *api_with_collection_metrics(TableDef *def, Datum pk, Jsonb *response);

/* Pushes ItemCollectionMetrics for the item collections a batch or transaction wrote (tables with LSIs only). */
extern void api_push_collection_metrics_map(JsonbParseState **state, TableDef **defs, Datum *pks, int n);

/* ConsumedCapacity (capacity.c): recording a request's reads and writes, and the response with them. */
extern void api_capacity_start(Jsonb *request, bool always, bool transaction);
extern void api_capacity_stop(void);
extern void api_capacity_read(const char *table, IndexDef *index, int64 bytes, bool consistent);
extern void api_capacity_read_item(const char *table, Jsonb *item, bool consistent);
extern void api_capacity_write_item(const char *table, Jsonb *before, Jsonb *after);
extern Jsonb *api_capacity_response(Jsonb *request, Jsonb *response, bool per_table_list);
extern Jsonb *api_capacity_usage(void);
extern double api_capacity_recorded(const char *table, const char *index, bool write);

/* A ReturnValues option of UpdateItem (NULL: NONE), checked. */
extern const char *api_update_return_values(const char *rv);

/* ConditionCheck, TransactWriteItems' action that only checks a condition. */
extern Jsonb *api_condition_check(Jsonb *request);
extern Jsonb *api_transact_write_items(Jsonb *request);

/* TransactWriteItems where inserts[i] marks a Put whose failed condition is reported as DuplicateItem (PartiQL INSERT). */
extern Jsonb *api_transact_write(Jsonb *request, const bool *inserts);
extern Jsonb *api_transact_get_items(Jsonb *request);
/* The keys of a read (read_keys.c): a Query's KeyConditionExpression, and an ExclusiveStartKey (within a Query's conditions). */
extern void api_key_condition(Placeholders *ctx, ReadRequest *req, ExprNode *cond);
extern void api_start_key(ReadRequest *req, JsonbContainer *start);

extern Jsonb *api_query(Jsonb *request);

/* Query whose response also has EvaluatedKeys, [[key, ordinal], ...] per row read (ddb.execute_for_merge). */
extern Jsonb *api_query_for_merge(Jsonb *request);

/* The partition key a valid Query reads by, or (Datum) 0 for a global index (a router's question). */
extern Datum api_query_partition_key(Jsonb *request);
extern Jsonb *api_scan(Jsonb *request);

/* The bytes a page of ddb.execute_for_merge may read (0: DynamoDB's 1 MB). */
extern int64 api_merge_page_bytes;

/* Scan with EvaluatedKeys, the key and ordinal of every row read (ddb.execute_for_merge). */
extern Jsonb *api_scan_for_merge(Jsonb *request);
extern Jsonb *api_batch_write_item(Jsonb *request);
extern Jsonb *api_batch_get_item(Jsonb *request);

/* PartiQL (partiql_parse.c, partiql_rewrite.c, partiql_execute.c): statements rewritten into the operations above. */
extern Jsonb *api_execute_statement(Jsonb *request);
extern Jsonb *api_batch_execute_statement(Jsonb *request);
extern Jsonb *api_execute_transaction(Jsonb *request);

/* The operation a statement ({"Statement", "Parameters"}) stands for, and its request (a router's question). */
extern const char *api_statement_operation(Jsonb *element, Jsonb **request);

/* The Get ({"TableName", "Key"}) a read statement of an ExecuteTransaction stands for (a router's question). */
extern Jsonb *api_statement_get(Jsonb *element);

/* A token given to clients, sealed with the server's secret for a purpose (tokens.c). */
extern char *api_token_seal(const char *purpose, const char *payload);

/* The payload of a token sealed for purpose, or NULL when it was edited, forged or sealed for another. */
extern char *api_token_open(const char *purpose, const char *token);

/* A member a token's payload has: its name, its type (jbvObject: an object; jbvNumeric: an integer), whether it may be absent. */
typedef struct TokenMember
{
	const char *name;
	enum jbvType type;
	bool		optional;
} TokenMember;

/*
 * The payload of a token sealed for purpose when it is a JSON object of
 * exactly these members with these types, else NULL (tokens.c).
 */
extern Jsonb *api_token_open_object(const char *purpose, const char *token, const TokenMember *members, int n);

/* The payload of a token sealed for purpose when it is a LastEvaluatedKey (1 to 4 key AttributeValues), else NULL. */
extern Jsonb *api_token_open_key(const char *purpose, const char *token);

/* A string member of an opened token's payload, or NULL when absent. */
extern char *api_token_string(Jsonb *payload, const char *name);

/* An integer member of an opened token's payload in [min, max]; false when absent or out of range. */
extern bool api_token_int64(Jsonb *payload, const char *name, int64 min, int64 max, int64 *out);

#endif							/* DDB_API_H */
