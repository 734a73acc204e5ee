/*
 * direct.c — ddb.execute_direct(partition, role, operation, request): a
 * request that ddb-gateway sends straight to the shard node of its
 * partition, past the router (docs/scale-out.md, "Requests sent straight to
 * their shard").  The node serves it only when it serves that partition
 * directly (a row of ddb.direct_partitions, which the router writes and
 * takes away before a move) and the request's partition key is in it; the
 * partition's lock is held shared until the transaction ends, so that a
 * move, which takes the row away and then waits for the lock's holders
 * (ddb.await_direct_requests), knows when the last such request is done.
 * Anything else is refused with SQLSTATE YR001, on which the gateway sends
 * the request through the router, which answers as it always did (the
 * partition moving, an invalid request, another node's partition).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "../api/api.h"
#include "../ddb_locks.h"
#include "../key/ddb_key.h"
#include "../key/key_attribute.h"
#include "../request/subtransaction.h"
#include "../table/table_def.h"

PG_FUNCTION_INFO_V1(ddb_execute_direct);
PG_FUNCTION_INFO_V1(ddb_await_direct_requests);

/* The SQLSTATE of a refusal: send the request through the router. */
#define ERRCODE_DDB_DIRECT_REFUSED MAKE_SQLSTATE('Y', 'R', '0', '0', '1')

extern Datum ddb_execute_metered(PG_FUNCTION_ARGS);

static SPIPlanPtr count_plan = NULL;

/* Refuses the request: the gateway sends it through the router. */
static pg_attribute_noreturn() void
refuse(const char *why, int partition)
{
	ereport(ERROR,
			(errcode(ERRCODE_DDB_DIRECT_REFUSED),
			 errmsg("this node does not serve partition %d directly: %s", partition, why),
			 errhint("Send the request through the router (ddb_router.execute_metered).")));
}

/* The routing hash of an item operation's partition key (in member "Key" or "Item"); false when it has none valid. */
static bool
item_hash(Jsonb *request, const char *member, uint32 *hash)
{
	JsonbValue *name = getKeyJsonValueFromContainer(&request->root, "TableName", 9, NULL);
	JsonbValue *map = getKeyJsonValueFromContainer(&request->root, member, strlen(member), NULL);
	TableDef   *def;
	uint8_t		enc[KEY_MAX_ENCODED];
	size_t		enclen;

	if (name == NULL || name->type != jbvString || map == NULL || map->type != jbvBinary ||
		!JsonContainerIsObject(map->val.binary.data) ||
		(def = table_def_find(pnstrdup(name->val.string.val, name->val.string.len))) == NULL ||
		!key_attribute_encode(getKeyJsonValueFromContainer(map->val.binary.data, def->keys.hash_key,
														   strlen(def->keys.hash_key), NULL),
							  def->keys.hash_type, enc, &enclen))
		return false;
	*hash = ddb_key_route_hash_encoded(enc, enclen);
	return true;
}

/* A Query and the routing hash of the partition key it reads by, found in a subtransaction. */
typedef struct QueryRoute
{
	Jsonb	   *request;
	bool		found;			/* a table's or a local index's partition key */
	uint32		hash;
} QueryRoute;

/* Reads a Query's partition key (raises for an invalid Query). */
static void
query_route(void *arg)
{
	QueryRoute *route = arg;
	Datum		pk = api_query_partition_key(route->request);
	struct varlena *key;

	if (pk == (Datum) 0)
		return;
	key = PG_DETOAST_DATUM_PACKED(pk);
	route->hash = ddb_key_route_hash_encoded(DDB_KEY_DATA(key), DDB_KEY_LEN(key));
	route->found = true;
}

/* The routing hash of a request that may go straight to a node; false for any other, or an invalid one. */
static bool
request_hash(const char *operation, Jsonb *request, uint32 *hash)
{
	if (!JsonContainerIsObject(&request->root))
		return false;
	if (strcmp(operation, "GetItem") == 0 || strcmp(operation, "DeleteItem") == 0 ||
		strcmp(operation, "UpdateItem") == 0)
		return item_hash(request, "Key", hash);
	if (strcmp(operation, "PutItem") == 0)
		return item_hash(request, "Item", hash);
	if (strcmp(operation, "Query") == 0)
	{
		QueryRoute	route = {.request = request};
		ErrorData  *error = api_subtransaction_run(query_route, &route);

		if (error != NULL)
			FreeErrorData(error);
		*hash = route.hash;
		return error == NULL && route.found;
	}
	return false;
}

/*
 * The partition count this node serves partition by directly, read after
 * its lock was taken and with a snapshot of now (a row the router took
 * away before the lock is not seen); 0 when it serves it not.
 */
static int
direct_partition_count(int partition)
{
	Oid			argtypes[1] = {INT4OID};
	Datum		args[1] = {Int32GetDatum(partition)};
	int			count = 0;

	SPI_connect();
	if (count_plan == NULL)
	{
		SPIPlanPtr	p = SPI_prepare("SELECT partition_count FROM ddb.direct_partitions "
									"WHERE partition OPERATOR(pg_catalog.=) $1", 1, argtypes);

		if (p == NULL)
			elog(ERROR, "ddb_model: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
		SPI_keepplan(p);
		count_plan = p;
	}
	if (SPI_execute_plan(count_plan, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: reading ddb.direct_partitions failed");
	if (SPI_processed == 1)
	{
		bool		isnull;

		count = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	}
	SPI_finish();
	return count;
}

/*
 * ddb.execute_direct(partition, role, operation, request):
 * ddb.execute_metered(role, operation, request) of a GetItem, PutItem,
 * UpdateItem, DeleteItem or Query (of the table or a local index) whose
 * partition key is in partition, which this node serves directly;
 * refused (YR001) otherwise.
 */
Datum
ddb_execute_direct(PG_FUNCTION_ARGS)
{
	int			partition;
	uint32		hash;
	int			count;
	LOCAL_FCINFO(metered, 3);
	Datum		answer;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the partition, operation and request of ddb.execute_direct must not be null")));
	partition = PG_GETARG_INT32(0);
	if (partition < 0)
		refuse("no such partition", partition);
	if (!request_hash(text_to_cstring(PG_GETARG_TEXT_PP(2)), PG_GETARG_JSONB_P(3), &hash))
		refuse("the request is not one of a partition key that may go straight to its node", partition);
	/* held until the transaction ends: a move waits for it after taking the partition away */
	ddb_lock_xact(DDB_LOCK_ROUTER_PARTITION, (uint32) partition, ShareLock);
	count = direct_partition_count(partition);
	if (count == 0)
		refuse("the router has not given it to this node, or has taken it away (a move)", partition);
	if ((int) (hash & (uint32) (count - 1)) != partition)
		refuse("the request's partition key is not in it", partition);
	InitFunctionCallInfoData(*metered, NULL, 3, InvalidOid, NULL, NULL);
	for (int i = 0; i < 3; i++)
	{
		metered->args[i].value = PG_GETARG_DATUM(i + 1);
		metered->args[i].isnull = PG_ARGISNULL(i + 1);
	}
	answer = ddb_execute_metered(metered);
	if (metered->isnull)
		PG_RETURN_NULL();
	return answer;
}

/*
 * ddb.await_direct_requests(partition): waits until every transaction that
 * holds the partition's lock here (ddb.execute_direct) has ended, without
 * taking it; lock_timeout bounds it.  A move calls it on the source node once
 * the partition's row is gone.
 */
Datum
ddb_await_direct_requests(PG_FUNCTION_ARGS)
{
	if (PG_GETARG_INT32(0) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("there is no partition %d", PG_GETARG_INT32(0))));
	ddb_lock_await(DDB_LOCK_ROUTER_PARTITION, (uint32) PG_GETARG_INT32(0), ExclusiveLock);
	PG_RETURN_VOID();
}
