/*
 * throttle.h — throttling of PROVISIONED tables (docs/throttling.md): the
 * setting ddb.throttling, the admission of a request's reads and writes
 * against its tables' and indexes' provisioned capacity, and the token
 * buckets all connections share (throttle_buckets.c, in shared memory when
 * shared_preload_libraries names ddb_model).
 */
#ifndef DDB_THROTTLE_H
#define DDB_THROTTLE_H

#include "postgres.h"

#include "utils/timestamp.h"

#include "../table/table_def.h"

/* DynamoDB's burst allowance: unused capacity is kept up to this many seconds' worth. */
#define THROTTLE_BURST_SECONDS 300

/* The hint of every error saying that throttling needs the library preloaded. */
#define THROTTLE_PRELOAD_HINT "Add shared_preload_libraries = 'ddb_model' to postgresql.conf and restart the server"

/* The two sides of a bucket. */
typedef enum ThrottleSide
{
	THROTTLE_READ,
	THROTTLE_WRITE
} ThrottleSide;

/* The settings and shared memory hooks, from _PG_init. */
extern void throttle_init(void);

/*
 * The request-level calls (throttle.c).  api_throttle_start, at the start of
 * each item operation of ddb.execute: true when ddb.throttling is on (its
 * reads and writes are then recorded and admitted).
 */
extern bool api_throttle_start(void);

/*
 * Admits a read of a table (index NULL or local: the table's capacity) or of
 * a global index, or a write of a table (which writes every global index's
 * capacity too); raises ProvisionedThroughputExceededException when what it
 * needs is exhausted, or returns false then when raise is false.  True when
 * throttling is off.
 */
extern bool api_throttle_admit(TableDef *def, IndexDef *index, ThrottleSide side, bool raise);

/*
 * True when admitting a write of def counts the index entries the request
 * has written so far (throttling is on and the table has indexes, whose
 * entries are metered as their trigger writes them): each write must then
 * be made before the next is admitted.
 */
extern bool api_throttle_counts_index_writes(TableDef *def);

/* Charges the units the request recorded to the buckets it was admitted to (the end of a request that succeeded). */
extern void api_throttle_charge(void);

/* Forgets the request's admissions (the end of a request, whatever its outcome). */
extern void api_throttle_stop(void);

/* Set while ddb.execute_rolled_back runs: its requests are no client's, and are neither admitted nor charged. */
extern bool api_throttle_suspended;

/* The shared buckets (throttle_buckets.c). */

/* True when the buckets are in shared memory (the library was preloaded). */
extern bool throttle_buckets_ready(void);

/* Defines ddb.throttling_max_buckets and installs the shared memory, drop and transaction hooks (preloading only). */
extern void throttle_buckets_init(void);

/*
 * The units a bucket of this database holds now (refilled at rate units a
 * second, kept up to THROTTLE_BURST_SECONDS of them), after charging it
 * units; a bucket met for the first time, or whose rate was raised, is full.
 * owner is the table's owner, whose share of the buckets it counts in.
 */
extern double throttle_bucket_take(Oid relid, Oid owner, ThrottleSide side, double rate, double units);

#endif							/* DDB_THROTTLE_H */
