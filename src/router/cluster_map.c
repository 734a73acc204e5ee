/*
 * cluster_map.c — the map of logical partitions onto nodes
 * (ddb_router.partitions), cached per backend and read again when
 * ddb_router.cluster_version moved, and the guard every write takes: a
 * partition's writers hold its lock shared until their transaction ends, so
 * that a move (which marks the partition moving, then takes the lock
 * exclusively) knows when the last write that missed the mark is done.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "storage/lock.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "../ddb_errors.h"
#include "router.h"

PG_FUNCTION_INFO_V1(ddb_router_write_guard);

static ClusterMap *cached_map = NULL;
static SPIPlanPtr map_plan = NULL;

/*
 * The cluster's version: the last value of ddb_router.cluster_version (0
 * before its first change), read without SPI: writes ask for it on every
 * request.
 */
static int64
cluster_version(void)
{
	Oid			schema = get_namespace_oid("ddb_router", false);
	Oid			sequence = get_relname_relid("cluster_version", schema);
	LOCAL_FCINFO(fcinfo, 1);
	Datum		value;

	if (!OidIsValid(sequence))
		elog(ERROR, "ddb_router: the sequence ddb_router.cluster_version is missing");
	InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = ObjectIdGetDatum(sequence);
	fcinfo->args[0].isnull = false;
	value = pg_sequence_last_value(fcinfo);
	return fcinfo->isnull ? 0 : DatumGetInt64(value);
}

/* A kept plan of a statement without parameters. */
static SPIPlanPtr
kept_plan(SPIPlanPtr *plan, const char *sql)
{
	if (*plan == NULL)
	{
		SPIPlanPtr	p = SPI_prepare(sql, 0, NULL);

		if (p == NULL)
			elog(ERROR, "ddb_router: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
		SPI_keepplan(p);
		*plan = p;
	}
	return *plan;
}

/* Reads the map (in SPI) into a new ClusterMap in TopMemoryContext. */
static ClusterMap *
load_map(int64 version)
{
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "ddb_router cluster map", ALLOCSET_SMALL_SIZES);
	ClusterMap *map = MemoryContextAllocZero(cxt, sizeof(ClusterMap));
	int			n;

	if (SPI_execute_plan(kept_plan(&map_plan,
								   "SELECT p.partition, p.moving, min(p.partition) OVER (PARTITION BY p.node_name) "
								   "FROM ddb_router.partitions p ORDER BY p.partition"),
						 NULL, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "ddb_router: reading ddb_router.partitions failed");
	n = (int) SPI_processed;
	if (n == 0 || (n & (n - 1)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the cluster has %d partitions, not a power of two", n),
				 errhint("Create them with ddb_router.create_partitions(count) after adding the nodes.")));
	map->version = version;
	map->partition_count = n;
	map->node_of = MemoryContextAlloc(cxt, sizeof(int) * n);
	map->node_route = MemoryContextAlloc(cxt, sizeof(int32) * n);
	map->moving = MemoryContextAlloc(cxt, sizeof(bool) * n);
	for (int i = 0; i < n; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		int32		first = DatumGetInt32(SPI_getbinval(row, desc, 3, &isnull));
		int			node = -1;

		if (DatumGetInt32(SPI_getbinval(row, desc, 1, &isnull)) != i)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the partitions of the cluster are not numbered 0 to %d", n - 1)));
		map->moving[i] = DatumGetBool(SPI_getbinval(row, desc, 2, &isnull));
		/* nodes are numbered in the order of their first partition */
		for (int k = 0; k < map->nnodes; k++)
			if (map->node_route[k] == first)
				node = k;
		if (node < 0)
		{
			node = map->nnodes++;
			map->node_route[node] = first;
		}
		map->node_of[i] = node;
	}
	return map;
}

/* The current map, read again when its version changed. */
ClusterMap *
router_cluster_map(void)
{
	int64		version = cluster_version();

	if (cached_map == NULL || cached_map->version != version)
	{
		ClusterMap *map;

		SPI_connect();
		map = load_map(version);
		SPI_finish();
		if (cached_map)
			MemoryContextDelete(GetMemoryChunkContext(cached_map));
		cached_map = map;
	}
	return cached_map;
}

/* Refuses a write to a moving partition; the partition's writer lock is held until the transaction ends. */
void
router_write_guard(uint32 hash)
{
	ClusterMap *map = router_cluster_map();
	int			partition = (int) (hash & (uint32) (map->partition_count - 1));
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, ROUTER_LOCK_CLASS, (uint32) partition, 2);
	(void) LockAcquire(&tag, ShareLock, false, false);
	/* the map as of after the lock: a move marked before it is seen */
	map = router_cluster_map();
	if (map->moving[partition])
	{
		char	   *message = psprintf("Partition %d of the cluster is moving to another node: writes to it wait until it has moved; retry the request",
									   partition);

		ereport(ERROR,
				(errcode(ERRCODE_DDB_SERVICE_UNAVAILABLE),
				 errmsg("%s", message),
				 errdetail("%s", ddb_error_body(ddb_error_type(DDB_ERROR_SERVICE_UNAVAILABLE), message, NULL, NULL))));
	}
}

/* ddb_router.write_guard(route): router_write_guard for the fan-out operations' SQL. */
Datum
ddb_router_write_guard(PG_FUNCTION_ARGS)
{
	router_write_guard((uint32) PG_GETARG_INT32(0));
	PG_RETURN_VOID();
}

