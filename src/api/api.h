/*
 * api.h — DynamoDB's item operations (item_ops.c, query_scan.c,
 * read_keys.c, batch_ops.c, transactions.c), which ddb.execute
 * (src/execute/) dispatches to and PartiQL (src/partiql/) rewrites into,
 * and the legacy parameters they accept (legacy.c).  Reading requests is
 * src/request/'s, expressions src/itemexpr/'s, ConsumedCapacity and
 * throttling src/metering/'s.
 */
#ifndef DDB_API_H
#define DDB_API_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "../itemexpr/itemexpr.h"

/* The single-item operations (item_ops.c). */
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

#endif							/* DDB_API_H */
