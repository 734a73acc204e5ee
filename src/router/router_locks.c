/*
 * router_locks.c — the router's uses of the server's own locks
 * (src/ddb_locks.h), which no SQL can take: a move's lock on its
 * partition and its wait for the partition's writers (sql/router/move.sql),
 * the claims of unique values (unique.sql), one recovery of transactions in
 * doubt at a time (two_phase.sql).  (On a node, the claims of the items a
 * TransactGetItems across nodes reads are ddb_model's ddb.try_claim_items,
 * src/api/transactions.c.)
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"

#include "../ddb_locks.h"
#include "model_imports.h"
#include "router.h"

PG_FUNCTION_INFO_V1(ddb_router_lock_class);
PG_FUNCTION_INFO_V1(ddb_router_lock_move);
PG_FUNCTION_INFO_V1(ddb_router_unlock_move);
PG_FUNCTION_INFO_V1(ddb_router_await_partition_writers);
PG_FUNCTION_INFO_V1(ddb_router_claim_unique);
PG_FUNCTION_INFO_V1(ddb_router_lock_recovery);

/* ddb_router.lock_class(kind): pg_locks' classid of the router's locks of a kind ('partition' or 'move'); objsubid is 3. */
Datum
ddb_router_lock_class(PG_FUNCTION_ARGS)
{
	char	   *kind = text_to_cstring(PG_GETARG_TEXT_PP(0));

	if (strcmp(kind, "partition") == 0)
		PG_RETURN_OID((Oid) DDB_LOCK_ROUTER_PARTITION);
	if (strcmp(kind, "move") == 0)
		PG_RETURN_OID((Oid) DDB_LOCK_ROUTER_MOVE);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("the router has no locks of kind \"%s\"", kind),
			 errhint("The kinds are partition (its writers) and move (the move running).")));
	PG_RETURN_NULL();
}

/* Raises unless partition is a partition number (its lock's key). */
static uint32
partition_key(int32 partition)
{
	if (partition < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("there is no partition %d", partition)));
	return (uint32) partition;
}

/* ddb_router.lock_move(partition): the lock of a move of the partition, for the session (closed to PUBLIC). */
Datum
ddb_router_lock_move(PG_FUNCTION_ARGS)
{
	LOCKTAG		tag;

	ddb_lock_tag(&tag, DDB_LOCK_ROUTER_MOVE, partition_key(PG_GETARG_INT32(0)));
	(void) LockAcquire(&tag, ExclusiveLock, true, false);
	PG_RETURN_VOID();
}

/* ddb_router.unlock_move(partition): lets go every hold of this session on the partition's move lock. */
Datum
ddb_router_unlock_move(PG_FUNCTION_ARGS)
{
	LOCKTAG		tag;

	ddb_lock_tag(&tag, DDB_LOCK_ROUTER_MOVE, partition_key(PG_GETARG_INT32(0)));
	while (LockHeldByMe(&tag, ExclusiveLock) && LockRelease(&tag, ExclusiveLock, true))
		;
	PG_RETURN_VOID();
}

/*
 * ddb_router.await_partition_writers(partition): waits until every
 * transaction holding the partition's writer lock (router_write_guard)
 * has ended, without taking it (closed to PUBLIC); lock_timeout bounds it.
 */
Datum
ddb_router_await_partition_writers(PG_FUNCTION_ARGS)
{
	ddb_lock_await(DDB_LOCK_ROUTER_PARTITION, partition_key(PG_GETARG_INT32(0)), ExclusiveLock);
	PG_RETURN_VOID();
}

/*
 * ddb_router.claim_unique(role_name, table_name, claim): a unique value
 * a write sets (claim names the attribute and the value), until the
 * transaction ends; for a caller that may act as the role (NULL: itself),
 * a role that may write the table.
 */
Datum
ddb_router_claim_unique(PG_FUNCTION_ARGS)
{
	Oid			role = GetUserId();
	TableDef   *def;
	uint32		key;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the table and the claim of ddb_router.claim_unique must not be null")));
	router_check_role(PG_GETARG_DATUM(0), PG_ARGISNULL(0));
	if (!PG_ARGISNULL(0))
		role = get_role_oid(NameStr(*PG_GETARG_NAME(0)), false);
	def = ddb_model.table_def_get(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	if (pg_class_aclmask(def->relid, role, ACL_INSERT | ACL_UPDATE, ACLMASK_ANY) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to claim a unique value of table %s", def->name),
				 errhint("A unique value is claimed for a role that may write the table.")));
	key = hash_combine(ddb_lock_name_key(def->name), ddb_lock_name_key(text_to_cstring(PG_GETARG_TEXT_PP(2))));
	ddb_lock_xact(DDB_LOCK_ROUTER_UNIQUE, key, ExclusiveLock);
	PG_RETURN_VOID();
}

/* ddb_router.lock_recovery(): one recovery of transactions in doubt at a time, until the transaction ends (closed to PUBLIC). */
Datum
ddb_router_lock_recovery(PG_FUNCTION_ARGS)
{
	ddb_lock_xact(DDB_LOCK_ROUTER_RECOVERY, 0, ExclusiveLock);
	PG_RETURN_VOID();
}
