/*
 * replicas.h — hot standbys that serve eventually consistent reads
 * (GetItem, Query, Scan and BatchGetItem without ConsistentRead), each with
 * a pool of its own, skipped while it lags more than --max-replica-lag
 * seconds, cannot be reached or has another version of the extension.
 * docs/scale-out.md.
 */
#ifndef DDB_GATEWAY_REPLICAS_H
#define DDB_GATEWAY_REPLICAS_H

#include <stdio.h>

#include "pool.h"
#include "settings.h"

typedef struct ReplicaSet ReplicaSet;

/* The settings' standbys, watched by a thread of their own; NULL when there are none. */
extern ReplicaSet *replicas_start(const GatewaySettings *settings);

/* A usable standby's pool, taken in turn (its number in *index), or NULL: read on the primary. */
extern ConnPool *replicas_pick(ReplicaSet *set, int *index);

/* A request could not use standby index: it is skipped until the watcher finds it well again. */
extern void replicas_failed(ReplicaSet *set, int index);

/* Counts a read served by standby index, or by the primary (index -1). */
extern void replicas_count_read(ReplicaSet *set, int index);

/* Writes the standbys' metrics (reads by node, lag, usable) in Prometheus's text format. */
extern void replicas_render(ReplicaSet *set, FILE *out);

#endif
