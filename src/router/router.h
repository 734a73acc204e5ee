/*
 * router.h — the router of a sharded deployment (docs/scale-out.md): the
 * ddb_router extension's C side, its own library ddb_router.so, which calls
 * a few functions of ddb_model.so (model_imports.h).  Requests are
 * routed to shard nodes with PL/Proxy by the routing hash of their partition
 * key (ddb.ddb_key_route_hash); the fan-out operations are the SQL functions
 * of sql/ddb_router--*.sql, which call back into route.c and node_call.c.
 */
#ifndef DDB_ROUTER_H
#define DDB_ROUTER_H

#include "postgres.h"

#include "utils/jsonb.h"

/* What a client reads when a node (or the router's own database) cannot be reached: ServiceUnavailable. */
#define ROUTER_UNREACHABLE_MESSAGE "A shard node of this table cannot be reached; retry the request"


/* The number of logical partitions (a power of two), read again when the cluster's version moved. */
extern int	router_partition_count(void);

/* Refuses (503, retryable) a write to a moving partition; holds the partition's writer lock until the transaction ends. */
extern void router_write_guard(uint32 hash);

/* How deep this backend is in requests ddb_router.execute_metered serves (write_guard.c). */
extern int	router_requests_serving;

/* Refuses (42501) a call of function, one of the router's own, outside a request ddb_router.execute_metered serves. */
extern void router_require_serving(const char *function, const char *what);

/* The routing hash of a table's partition key attribute's DynamoDB value in map; false when it is no valid key of type. */
extern bool route_key_value(const char *table_name, JsonbContainer *map, const char *attribute, char type, uint32 *hash);

/* The routing hash of a table's encoded partition key: its own, or that of the key it is placed with (placements.c). */
extern uint32 router_route_hash(const char *table_name, const uint8_t *enc, size_t len);

/* The routing hash of an item operation by the partition key in its member ("Key", "Item"); false when the request is invalid. */
extern bool route_item(Jsonb *request, const char *member, uint32 *hash);

/* The routing hash of a Query of a table or local index; global when it reads a global index; false when invalid. */
extern bool route_query(Jsonb *request, uint32 *hash, bool *global);

/* The PL/Proxy functions the router calls (node_call.c). */
typedef enum NodeFunction
{
	NODE_EXECUTE,				/* ddb_router.node_execute: ddb.execute_metered */
	NODE_EXECUTE_ROLLED_BACK,	/* ddb_router.node_execute_rolled_back: ddb.execute_rolled_back */
	NODE_EXECUTE_FOR_MERGE,		/* ddb_router.node_execute_for_merge: ddb.execute_for_merge */
	NODE_FUNCTION_COUNT
} NodeFunction;

/*
 * Calls a node function on the node of route (a routing hash or a
 * partition): the node's answer, or its error as the node raised it;
 * page_bytes bounds a NODE_EXECUTE_FOR_MERGE page (0: 1 MB).
 */
extern text *node_call(NodeFunction function, int32 route, Datum role, bool role_null,
					   text *operation, Jsonb *request, int32 page_bytes);

/* Refuses a role the caller may not act as (as ddb.execute_as does). */
extern void router_check_role(Datum role, bool role_null);

/* The tables the router treats apart (table_lists.c). */
typedef enum RouterTableList
{
	TABLES_WITH_UNIQUE,			/* an attribute kept unique across the nodes */
	REFERENCE_TABLES,			/* every node holds their items */
	ROUTER_TABLE_LISTS
} RouterTableList;

/* True when a table is in a list. */
extern bool router_table_listed(RouterTableList list, const char *table_name);

/* True when a request may concern a table of a list (it names one anywhere). */
extern bool router_request_names_listed(RouterTableList list, Jsonb *request);

/* Has a node raise the error of a request the router found invalid (never returns). */
extern void node_raise_invalid(Datum role, bool role_null, text *operation, Jsonb *request) pg_attribute_noreturn();

/* Defines the settings ddb_router.* (coordinator.c), from the library's _PG_init (ddb_router.c). */
extern void router_define_settings(void);

/*
 * A cache of what a backend read from the router's own tables, in a memory
 * context of its own (router_cache.c): read again once its table changed
 * (a relcache invalidation of the table: its trigger sends one), or, for
 * a cache of the tables' unique indexes, once an index came or went.
 */
typedef struct RouterCache
{
	const char *name;			/* its memory context's identifier */
	const char *table;			/* the table it reads, ddb_router.<table>; NULL: every table's indexes */
	Oid			relid;			/* the table's OID when last read */
	MemoryContext context;		/* what it holds: a child of CacheMemoryContext, emptied at each read */
	uint64		invalidations;	/* the changes seen since the backend started */
	uint64		invalidations_at_read;	/* and when it was last read */
	bool		valid;			/* read, and not changed since */
} RouterCache;

/* Empties a cache to read it again (its table's OID looked up anew): the memory context to read it into. */
extern MemoryContext router_cache_begin_read(RouterCache *cache);

/* Marks a cache read: valid until its table changes, unless it changed while it was read. */
extern void router_cache_end_read(RouterCache *cache);

#endif							/* DDB_ROUTER_H */
