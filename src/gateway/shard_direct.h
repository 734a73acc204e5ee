/*
 * shard_direct.h — requests of one partition key run straight on their
 * shard node (shard_map.h), on a pool of connections per node, for a
 * gateway in front of a router; whatever cannot go so goes through the
 * router as before.
 */
#ifndef DDB_GATEWAY_SHARD_DIRECT_H
#define DDB_GATEWAY_SHARD_DIRECT_H

#include <stddef.h>

#include <libpq-fe.h>

/* Starts reading the router's map (shard_map_start); the nodes' pools get pool_size connections each; 0 on success. */
extern int	shard_direct_start(const char *router_dsn, int pool_size, const char *endpoint_address);

/*
 * Runs a request on its node when it may go straight there: the result of
 * ddb.execute_direct (its answer, or DynamoDB's error for the request), or
 * NULL when the request goes through the router instead (it may not go
 * straight, the node refused it, or cannot be reached).
 */
extern PGresult *shard_direct_execute(const char *role, const char *operation, const char *body, size_t len);

#endif
