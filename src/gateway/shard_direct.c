/*
 * shard_direct.c — requests run straight on their shard node
 * (shard_direct.h).  Each event thread has a lane per node connection
 * string, made when a request first goes there (worker_node_lane): a
 * deployment has few nodes, and a node whose connection string changed
 * gets a lane of its own.
 */
#include "shard_direct.h"

#include <stdio.h>
#include <string.h>

#include "shard_map.h"

/* Starts reading the router's map. */
int
shard_direct_start(const char *router_dsn)
{
	return shard_map_start(router_dsn);
}

/* The lane of the node a request may go straight to, or NULL. */
Lane *
shard_direct_lane(Worker *worker, const char *operation, const char *body, size_t len, char *partition)
{
	ShardTarget target;
	Lane	   *lane;

	if (!shard_map_route(operation, body, len, &target) || (lane = worker_node_lane(worker, target.dsn)) == NULL)
		return NULL;
	snprintf(partition, 12, "%d", target.partition);
	return lane;
}

/* True when a node's error sends the request through the router. */
int
shard_direct_refused(const PGresult *res)
{
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	/* 26000: the statement could not be prepared when the lane connected (no ddb.execute_direct there) */
	return sqlstate && (strcmp(sqlstate, SHARD_REFUSED_SQLSTATE) == 0 || strcmp(sqlstate, "42883") == 0 ||
						strcmp(sqlstate, "42501") == 0 || strcmp(sqlstate, "26000") == 0);
}
