/*
 * metering.h — what a request consumed and wrote, reported as DynamoDB
 * reports it: ConsumedCapacity (capacity.c), which throttling (throttle.h)
 * also reads, and ItemCollectionMetrics (collection_metrics.c).
 */
#ifndef DDB_METERING_H
#define DDB_METERING_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "../table/table_def.h"

/* ReturnItemCollectionMetrics: true for SIZE (checked up front by api_check_request_members). */
extern bool api_collection_metrics_wanted(Jsonb *request);

/* The response of a single-item write with ItemCollectionMetrics added (tables with LSIs only). */
extern Jsonb *api_with_collection_metrics(TableDef *def, Datum pk, Jsonb *response);

/* Pushes ItemCollectionMetrics for the item collections a batch or transaction wrote (tables with LSIs only). */
extern void api_push_collection_metrics_map(JsonbParseState **state, TableDef **defs, Datum *pks, int n);

/* ConsumedCapacity: recording a request's reads and writes, and the response with them. */
extern void api_capacity_start(Jsonb *request, bool always, bool transaction);
extern void api_capacity_stop(void);
extern void api_capacity_read(const char *table, IndexDef *index, int64 bytes, bool consistent);
extern void api_capacity_read_item(const char *table, Jsonb *item, bool consistent);
extern void api_capacity_write_item(const char *table, Jsonb *before, Jsonb *after);
extern Jsonb *api_capacity_response(Jsonb *request, Jsonb *response, bool per_table_list);
extern Jsonb *api_capacity_usage(void);
extern double api_capacity_recorded(const char *table, const char *index, bool write);

#endif							/* DDB_METERING_H */
