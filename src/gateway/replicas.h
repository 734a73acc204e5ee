/*
 * replicas.h — hot standbys that serve eventually consistent reads
 * (GetItem, Query, Scan and BatchGetItem without ConsistentRead), each
 * with lanes of its own in every event thread, skipped while it lags more than --max-replica-lag
 * seconds, cannot be reached or has another version of the extension.
 * docs/scale-out.md.
 */
#ifndef DDB_GATEWAY_REPLICAS_H
#define DDB_GATEWAY_REPLICAS_H

#include <stdio.h>

#include "settings.h"

typedef struct ReplicaSet ReplicaSet;

/* The settings' standbys, watched by a thread of their own; NULL when there are none. */
extern ReplicaSet *replicas_start(const GatewaySettings *settings);

/* The number of standbys (0 for none: set NULL). */
extern int	replicas_count(const ReplicaSet *set);

/* What a standby's lanes watch: bumped when it is no longer a standby, so that they connect again. */
extern const unsigned int *replicas_generation(ReplicaSet *set, int index);

/* A usable standby, taken in turn, or -1: read on the primary. */
extern int	replicas_pick(ReplicaSet *set);

/* A request could not use standby index: it is skipped until the watcher finds it well again. */
extern void replicas_failed(ReplicaSet *set, int index);

/* Counts a read served by standby index, or by the primary (index -1). */
extern void replicas_count_read(ReplicaSet *set, int index);

/* Writes the standbys' metrics (reads by node, lag, usable) in Prometheus's text format. */
extern void replicas_render(ReplicaSet *set, FILE *out);

#endif
