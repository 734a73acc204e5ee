/*
 * shard_direct.h — requests of one partition key run straight on their
 * shard node (shard_map.h), for a gateway in front of a router: on a lane
 * of the request's event thread to that node; whatever cannot go so goes
 * through the router as before.
 */
#ifndef DDB_GATEWAY_SHARD_DIRECT_H
#define DDB_GATEWAY_SHARD_DIRECT_H

#include <stddef.h>

#include <libpq-fe.h>

#include "lane.h"
#include "worker.h"

/* Starts reading the router's map (shard_map_start); 0 on success. */
extern int	shard_direct_start(const char *router_dsn);

/*
 * The lane of the node a request may go straight to, its partition written
 * into partition (12 bytes) as ddb.execute_direct takes it; NULL when it
 * goes through the router (another operation, several partitions, the map
 * not loaded, too many nodes).
 */
extern Lane *shard_direct_lane(Worker *worker, const char *operation, const char *body, size_t len, char *partition);

/*
 * True when a node's error means the request goes through the router: the
 * node refused it (YR001: it does not serve that partition directly now),
 * or lacks ddb.execute_direct or does not let the gateway's user call it.
 */
extern int	shard_direct_refused(const PGresult *res);

#endif
