/*
 * shard_direct.c — requests run straight on their shard node
 * (shard_direct.h): a pool per node connection string, made when a request
 * first goes there and kept (a deployment has few nodes; a node whose
 * connection string changed gets a pool of its own).
 */
#include "shard_direct.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "shard_map.h"

/* The most node connection strings the gateway keeps a pool for. */
#define SHARD_POOLS_MAX 64

static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static struct
{
	char	   *dsn;
	ConnPool   *pool;
}			pools[SHARD_POOLS_MAX];
static int	npools;
static int	shard_pool_size;
static const char *shard_endpoint_address;

/* Starts reading the router's map; see shard_direct.h. */
int
shard_direct_start(const char *router_dsn, int pool_size, const char *endpoint_address)
{
	shard_pool_size = pool_size;
	shard_endpoint_address = endpoint_address;
	return shard_map_start(router_dsn);
}

/* The pool of a node's connection string, made when first asked for; NULL when there can be none. */
static ConnPool *
pool_of(const char *dsn)
{
	ConnPool   *pool = NULL;

	pthread_mutex_lock(&pools_lock);
	for (int i = 0; i < npools && pool == NULL; i++)
		if (strcmp(pools[i].dsn, dsn) == 0)
			pool = pools[i].pool;
	if (pool == NULL && npools < SHARD_POOLS_MAX && (pools[npools].dsn = strdup(dsn)) != NULL)
	{
		if ((pool = pool_open(dsn, shard_pool_size, shard_endpoint_address)) != NULL)
			pools[npools++].pool = pool;
		else
			free(pools[npools].dsn);
	}
	pthread_mutex_unlock(&pools_lock);
	return pool;
}

/*
 * True when a node's error means the request goes through the router: the
 * node refused it (YR001), or lacks ddb.execute_direct or does not let the
 * gateway's user call it.
 */
static int
goes_through_router(const PGresult *res)
{
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	return sqlstate && (strcmp(sqlstate, SHARD_REFUSED_SQLSTATE) == 0 || strcmp(sqlstate, "42883") == 0 ||
						strcmp(sqlstate, "42501") == 0);
}

/* Runs a request on its node when it may go straight there; see shard_direct.h. */
PGresult *
shard_direct_execute(const char *role, const char *operation, const char *body, size_t len)
{
	ShardTarget target;
	ConnPool   *pool;
	PGconn	   *conn;
	PGresult   *res;
	char		partition[16];
	const char *params[4] = {partition, role, operation, body};

	if (!shard_map_route(operation, body, len, &target) || (pool = pool_of(target.dsn)) == NULL ||
		(conn = pool_take(pool)) == NULL)
		return NULL;
	snprintf(partition, sizeof(partition), "%d", target.partition);
	res = pool_exec(conn, "execute_direct", SHARD_DIRECT_SQL, 4, params);
	if (PQresultStatus(res) != PGRES_TUPLES_OK && pool_connection_failed(conn, res))
	{
		pool_discard(pool, conn);
		PQclear(res);
		return NULL;
	}
	pool_give(pool, conn);
	if (PQresultStatus(res) != PGRES_TUPLES_OK && goes_through_router(res))
	{
		PQclear(res);
		return NULL;
	}
	return res;
}
