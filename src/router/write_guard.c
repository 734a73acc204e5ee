/*
 * write_guard.c — the guard every write through the router takes: a
 * partition's writers hold its lock shared until their transaction ends and
 * are refused while it is marked moving, so that a move (which marks the
 * partition, then waits for the lock's holders, ddb_router.await_partition_writers)
 * knows when the last write
 * that missed the mark is done.  And the number of logical partitions,
 * cached per backend until ddb_router.cluster_version moves.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "../ddb_errors.h"
#include "../ddb_locks.h"
#include "router.h"

PG_FUNCTION_INFO_V1(ddb_router_write_guard);

int			router_requests_serving = 0;

static int64 cached_version = -1;
static int	cached_partition_count = 0;
static SPIPlanPtr count_plan = NULL;
static SPIPlanPtr moving_plan = NULL;

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

/* The number of logical partitions (a power of two), read again when the cluster's version moved. */
int
router_partition_count(void)
{
	int64		version = cluster_version();

	if (version != cached_version)
	{
		bool		isnull;
		int64		n;

		SPI_connect();
		if (count_plan == NULL)
		{
			SPIPlanPtr	p = SPI_prepare("SELECT count(*) FROM ddb_router.partitions", 0, NULL);

			if (p == NULL)
				elog(ERROR, "ddb_router: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
			SPI_keepplan(p);
			count_plan = p;
		}
		if (SPI_execute_plan(count_plan, NULL, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "ddb_router: reading ddb_router.partitions failed");
		n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		SPI_finish();
		if (n == 0 || (n & (n - 1)) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the cluster has %lld partitions, not a power of two", (long long) n),
					 errhint("Create them with ddb_router.create_partitions(count) after adding the nodes.")));
		cached_partition_count = (int) n;
		cached_version = version;
	}
	return cached_partition_count;
}

/*
 * True when a partition is marked moving, read with a snapshot of now: the
 * map's version moves before a change of it commits, so the cached map
 * may hold a mark from before a version it claims.
 */
static bool
partition_moving(int partition)
{
	Oid			argtypes[1] = {INT4OID};
	Datum		args[1] = {Int32GetDatum(partition)};
	bool		moving = false;

	SPI_connect();
	if (moving_plan == NULL)
	{
		SPIPlanPtr	p = SPI_prepare("SELECT moving FROM ddb_router.partitions WHERE partition OPERATOR(pg_catalog.=) $1",
									1, argtypes);

		if (p == NULL)
			elog(ERROR, "ddb_router: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
		SPI_keepplan(p);
		moving_plan = p;
	}
	if (SPI_execute_plan(moving_plan, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_router: reading ddb_router.partitions failed");
	if (SPI_processed == 1)
	{
		bool		isnull;

		moving = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	}
	SPI_finish();
	return moving;
}

/* Refuses a call of the router's own function outside a request it serves; see router.h. */
void
router_require_serving(const char *function, const char *what)
{
	if (router_requests_serving == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s %s only for a request the router serves", function, what),
				 errhint("Send the request through ddb_router.execute_metered, which routes it, takes its partitions' "
						 "writer locks and claims its unique values.")));
}

/* Refuses a write to a moving partition; the partition's writer lock is held until the transaction ends. */
void
router_write_guard(uint32 hash)
{
	int			partition = (int) (hash & (uint32) (router_partition_count() - 1));
	LOCKTAG		tag;

	ddb_lock_tag(&tag, DDB_LOCK_ROUTER_PARTITION, (uint32) partition);
	(void) LockAcquire(&tag, ShareLock, false, false);
	/* the mark as of after the lock: a move marked before it is seen */
	if (partition_moving(partition))
	{
		char	   *message = psprintf("Partition %d of the cluster is moving to another node: writes to it wait until it has moved; retry the request",
									   partition);

		ereport(ERROR,
				(errcode(ERRCODE_DDB_SERVICE_UNAVAILABLE),
				 errmsg("%s", message),
				 errdetail("%s", ddb_error_body(ddb_error_type(DDB_ERROR_SERVICE_UNAVAILABLE), message, NULL, NULL))));
	}
}

/*
 * ddb_router.write_guard(route): router_write_guard for the fan-out
 * operations' SQL, only within a request ddb_router.execute_metered serves:
 * a role calling it otherwise would hold the partition's writer lock for as
 * long as its transaction stays open, and every move of the partition would
 * wait for it and fail, refusing the partition's writes meanwhile.
 */
Datum
ddb_router_write_guard(PG_FUNCTION_ARGS)
{
	router_require_serving("ddb_router.write_guard", "takes a partition's writer lock");
	router_write_guard((uint32) PG_GETARG_INT32(0));
	PG_RETURN_VOID();
}

