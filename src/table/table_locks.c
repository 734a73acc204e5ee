/*
 * table_locks.c — the functions that let the extension's SQL take or wait
 * for the server's own locks of a table (src/ddb_locks.h).  Each checks
 * first that its caller may do what the lock stands for, so that no role
 * gains a power it did not have (docs/security.md, "The server's locks"):
 *
 * - waiting for a table's committing writers (GetShardIterator LATEST, a
 *   restore's or an export's moment) takes no lock: nobody waits behind
 *   the waiter, and a reader can stall no writer;
 * - a CreateTable's name lock is for whoever may create tables; an audit
 *   lock for whoever may write the table; a ClientToken lock is the
 *   caller's own (its role is part of the key);
 * - every lock taken here is the transaction's, released when it ends.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

#include "../ddb_locks.h"
#include "table_access.h"
#include "table_def.h"

PG_FUNCTION_INFO_V1(ddb_await_stream_writers);
PG_FUNCTION_INFO_V1(ddb_pitr_settle);
PG_FUNCTION_INFO_V1(ddb_lock_table_name);
PG_FUNCTION_INFO_V1(ddb_lock_client_token);
PG_FUNCTION_INFO_V1(ddb_lock_table_audit);

/* The last number ddb.stream_sequence gave out (0 before the first), read as its owner. */
static int64
stream_sequence_last(void)
{
	Oid			sequence = ddb_relation_oid("stream_sequence");
	OwnerContext saved;
	LOCAL_FCINFO(fcinfo, 1);
	Datum		last;

	InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = ObjectIdGetDatum(sequence);
	fcinfo->args[0].isnull = false;
	owner_context_enter(sequence, &saved);
	last = pg_sequence_last_value(fcinfo);
	owner_context_exit(&saved);
	return fcinfo->isnull ? 0 : DatumGetInt64(last);
}

/*
 * ddb.await_stream_writers(table_name): waits for the writers of a table
 * that are committing stream records (each holds the stream's lock shared
 * from before it numbers them until its commit ends,
 * src/table/stream_capture.c), for a role that may read the table, and
 * returns the last sequence number given out before the wait: every record
 * numbered up to it is now committed or rolled back (GetShardIterator
 * LATEST).  The number is read before the writers are listed, so that a
 * writer holding one below it is among them.
 */
Datum
ddb_await_stream_writers(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	TableDef   *def = table_def_find(name);
	int64		last;

	if (def == NULL)
		PG_RETURN_INT64(0);		/* no table, no writers */
	table_access_check_operation(def->name, "GetRecords", "read");
	last = stream_sequence_last();
	ddb_lock_await(DDB_LOCK_STREAM, ddb_lock_name_key(def->name), ShareLock);
	PG_RETURN_INT64(last);
}

/*
 * ddb.pitr_settle(table_name): waits until the transactions committing
 * versions of a table are done (each holds the table's PITR lock shared
 * from before it reads its time until its commit is over,
 * src/table/pitr_capture.c), so that a snapshot taken afterwards sees
 * every version of a time up to now; for a role that may read the table.
 */
Datum
ddb_pitr_settle(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	TableDef   *def = table_def_find(name);

	if (def == NULL)
		PG_RETURN_VOID();		/* no table, no writers */
	table_access_check_operation(def->name, "RestoreTableToPointInTime", "read");
	ddb_lock_await(DDB_LOCK_PITR, ddb_lock_name_key(def->name), ExclusiveLock);
	PG_RETURN_VOID();
}

/*
 * ddb.lock_table_name(table_name): one creation of a table's name at a
 * time (CreateTable, a restore, an import), until the transaction ends;
 * for a role that may create tables.
 */
Datum
ddb_lock_table_name(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));

	table_access_check_operation(name, "CreateTable", "create");
	ddb_lock_xact(DDB_LOCK_TABLE_NAME, ddb_lock_name_key(name), ExclusiveLock);
	PG_RETURN_VOID();
}

/*
 * ddb.lock_client_token(kind, token): the current role's ClientToken of a
 * kind of job, until the transaction ends, so that two of its requests
 * with one token are one after the other; no role can hold another's.
 */
Datum
ddb_lock_client_token(PG_FUNCTION_ARGS)
{
	char	   *kind = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *token = text_to_cstring(PG_GETARG_TEXT_PP(1));
	uint32		key = hash_bytes_uint32((uint32) GetUserId());

	key = hash_combine(key, ddb_lock_name_key(kind));
	key = hash_combine(key, ddb_lock_name_key(token));
	ddb_lock_xact(DDB_LOCK_CLIENT_TOKEN, key, ExclusiveLock);
	PG_RETURN_VOID();
}

/*
 * ddb.lock_table_audit(table_name): a table's audit trail, one writing
 * transaction at a time until it ends; for a role that may insert, update
 * or delete rows of the table (whose write would take the lock through the
 * audit trigger anyway).
 */
Datum
ddb_lock_table_audit(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	TableDef   *def = table_def_get(name);

	if (pg_class_aclmask(def->relid, GetUserId(), ACL_INSERT | ACL_UPDATE | ACL_DELETE, ACLMASK_ANY) == 0)
		table_access_check_operation(def->name, "PutItem", "write");	/* raises AccessDeniedException */
	ddb_lock_xact(DDB_LOCK_TABLE_AUDIT, ddb_lock_name_key(def->name), ExclusiveLock);
	PG_RETURN_VOID();
}
