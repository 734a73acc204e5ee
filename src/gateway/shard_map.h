/*
 * shard_map.h — what a gateway in front of a router needs to send a request
 * of one partition key straight to its shard node (docs/scale-out.md,
 * "Requests sent straight to their shard"): the router's partition map
 * (each partition's node, and whether the node serves it directly) and the
 * tables' partition keys, read from the router's database by a listener
 * connection and read again when the router notifies ddb_router_map (a
 * change of the map, a move) and every 10 seconds (new tables).  While it is
 * not listening, nothing goes straight: every request goes through the
 * router.  A stale map costs no wrong answer: the node refuses a request of
 * a partition it does not serve directly (ddb.execute_direct, SQLSTATE
 * YR001), and the request then goes through the router.
 */
#ifndef DDB_GATEWAY_SHARD_MAP_H
#define DDB_GATEWAY_SHARD_MAP_H

#include <stddef.h>

/* The longest connection string of a node the map keeps (with the gateway's user). */
#define SHARD_DSN_MAX 1024

/* Where a request goes straight to. */
typedef struct ShardTarget
{
	int			partition;		/* the logical partition of its partition key */
	int			node;			/* the node's place in the map (0, 1, ...) */
	char		dsn[SHARD_DSN_MAX]; /* the node's connection string, as the gateway's user */
} ShardTarget;

/* The SQLSTATE with which a node refuses a request sent straight to it: send it through the router. */
#define SHARD_REFUSED_SQLSTATE "YR001"

/*
 * The statement that runs a request on its node: parameters partition,
 * role (NULL: the connection's user), operation and request.
 */
#define SHARD_DIRECT_SQL "SELECT ddb.execute_direct($1, $2, $3, $4::jsonb)"

/* Starts the listener thread on its own connection to the router's dsn; 0 on success. */
extern int	shard_map_start(const char *router_dsn);

/*
 * Where a request may go straight to: 1 and *out set for a GetItem,
 * PutItem, UpdateItem, DeleteItem or Query (of the table or a local index)
 * of one partition key whose node serves its partition directly; 0 when
 * it goes through the router (another operation, a table the router treats
 * apart, a body that does not read, the map not loaded, ...).
 */
extern int	shard_map_route(const char *operation, const char *body, size_t len, ShardTarget *out);

#endif
