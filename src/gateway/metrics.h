/*
 * metrics.h — ddb-gateway's counters, served by GET /metrics in
 * Prometheus's text format: requests by operation and status, their
 * latency by operation, consumed capacity by table, and the connections' use.
 */
#ifndef DDB_GATEWAY_METRICS_H
#define DDB_GATEWAY_METRICS_H

#include "replicas.h"
#include "worker.h"

/* Counts a request: its operation (NULL: none), HTTP status and duration. */
extern void metrics_count_request(const char *operation, unsigned int status, double seconds);

/* Adds the read and write units a request consumed in a table. */
extern void metrics_add_capacity(const char *table, double read_units, double write_units);

/* The metrics in Prometheus's text format (malloc'd), with the lanes' use and the standbys' (replicas may be NULL). */
extern char *metrics_render(PoolUse use, ReplicaSet *replicas);

#endif
