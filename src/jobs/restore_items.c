/*
 * restore_items.c — ddb.restore_items(target, items_function, argument):
 * the items a function returns written into a table being restored, as
 * ddb.put_item writes them (indexes are filled by their trigger as items
 * arrive), and the restore marked done.  The restore job calls it
 * (sql/restore.sql); while it runs, this backend may write the table
 * although it is CREATING.  And ddb.record_restore, the restore's row of
 * ddb.table_restores, and ddb.end_restore, an import's end.  They write
 * that catalog as its owner, after
 * checking their caller, as the catalog writes a check precedes do
 * (docs/security.md): the restoring role needs no privilege on it.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"

#include "../table/table_access.h"
#include "../table/table_def.h"
#include "jobs.h"

PG_FUNCTION_INFO_V1(ddb_restore_items);
PG_FUNCTION_INFO_V1(ddb_end_restore);
PG_FUNCTION_INFO_V1(ddb_record_restore);

/* True when this backend holds a lock of job id (DDB_LOCK_JOB_REQUEST: its transaction started it; DDB_LOCK_JOB_RUN: it runs it). */
static bool
holds_job_lock(DdbLockClass key, int32 id)
{
	LOCKTAG		tag;

	job_lock_tag(&tag, key, id);
	return LockHeldByMe(&tag, ExclusiveLock);
}

/* Runs a statement on ddb.table_restores as its owner (SPI connected); the rows it touched. */
static uint64
write_restores(const char *sql, int nargs, Oid *argtypes, Datum *args)
{
	OwnerContext saved;
	int			rc;

	owner_context_enter(ddb_relation_oid("table_restores"), &saved);
	rc = SPI_execute_with_args(sql, nargs, argtypes, args, NULL, false, 0);
	owner_context_exit(&saved);
	if (rc < 0)
		elog(ERROR, "ddb_model: could not write ddb.table_restores");
	return SPI_processed;
}

/* Marks the restore or import of a table by job done, its table ACTIVE at commit, as the catalog's owner (SPI connected); see jobs.h. */
void
job_restore_done(Datum table_name, int32 job)
{
	Oid			argtypes[2] = {TEXTOID, INT4OID};
	Datum		args[2] = {table_name, Int32GetDatum(job)};

	write_restores("UPDATE ddb.table_restores SET in_progress = false "
				   "WHERE table_name OPERATOR(pg_catalog.=) $1 AND job_id OPERATOR(pg_catalog.=) $2",
				   2, argtypes, args);
}

/* ddb.end_restore(table_name, job_id): job_restore_done, only in the worker running that job (a failure function's). */
Datum
ddb_end_restore(PG_FUNCTION_ARGS)
{
	int32		job = PG_GETARG_INT32(1);

	if (!holds_job_lock(DDB_LOCK_JOB_RUN, job))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("ddb.end_restore ends a restore only in the worker running its job %d", job)));
	SPI_connect();
	job_restore_done(PG_GETARG_DATUM(0), job);
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * True when job (the caller's: ddb.jobs' policy) restores or imports the
 * table, and a summary's SourceHistory, if any, is the OID (a number, or
 * its text, as jsonb_build_object writes an oid) of a
 * point-in-time recovery history relation (ddb.continuous_backups) the
 * caller may read, as its job will (SPI connected).
 */
static bool
restore_summary_valid(Datum table_name, int32 job, Datum summary)
{
	Oid			argtypes[3] = {TEXTOID, INT4OID, JSONBOID};
	Datum		args[3] = {table_name, Int32GetDatum(job), summary};
	OwnerContext saved;
	bool		isnull;
	bool		valid;
	Datum		history;

	if (SPI_execute_with_args("SELECT j.kind OPERATOR(pg_catalog.=) ANY ('{restore,import}') "
							  "AND j.spec OPERATOR(pg_catalog.->>) 'TableName' OPERATOR(pg_catalog.=) $1 "
							  "AND pg_catalog.jsonb_typeof($3) OPERATOR(pg_catalog.=) 'object', "
							  "CASE WHEN ($3 OPERATOR(pg_catalog.->>) 'SourceHistory') OPERATOR(pg_catalog.~) '^[0-9]{1,10}$' "
							  "THEN ($3 OPERATOR(pg_catalog.->>) 'SourceHistory')::pg_catalog.int8 END, "
							  "$3 OPERATOR(pg_catalog.?) 'SourceHistory' "
							  "FROM ddb.jobs j WHERE j.id OPERATOR(pg_catalog.=) $2",
							  3, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not read a restore's job");
	if (SPI_processed != 1)
		return false;
	valid = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (isnull || !valid)
		return false;
	if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull)))
		return true;			/* no SourceHistory: nothing more to check */
	history = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	if (isnull || DatumGetInt64(history) > PG_UINT32_MAX
		|| pg_class_aclcheck((Oid) DatumGetInt64(history), GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		return false;
	/* the histories are the catalog's to list */
	args[0] = ObjectIdGetDatum((Oid) DatumGetInt64(history));
	argtypes[0] = OIDOID;
	owner_context_enter(ddb_relation_oid("continuous_backups"), &saved);
	if (SPI_execute_with_args("SELECT FROM ddb.continuous_backups c JOIN ddb.tables t USING (table_name) "
							  "WHERE pg_catalog.to_regclass(pg_catalog.format('%I.%I', t.schema_name, c.history_relation))::pg_catalog.oid "
							  "OPERATOR(pg_catalog.=) $1", 1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not read the point-in-time recovery catalog");
	owner_context_exit(&saved);
	return SPI_processed == 1;
}

/*
 * ddb.record_restore(table_name, job_id, restore_summary): the row of
 * ddb.table_restores of a restore just started (ddb.start_restore), for
 * the new table's owner whose transaction started the job.
 */
Datum
ddb_record_restore(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		job = PG_GETARG_INT32(1);
	Oid			argtypes[3] = {TEXTOID, INT4OID, JSONBOID};
	Datum		args[3] = {PG_GETARG_DATUM(0), PG_GETARG_DATUM(1), PG_GETARG_DATUM(2)};
	TableDef   *def = table_def_find(name);

	if (def == NULL || !pg_class_ownercheck(def->relid, GetUserId()) || !holds_job_lock(DDB_LOCK_JOB_REQUEST, job))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("a restore of %s is recorded by the owner of the table, with the job its transaction started", name)));
	SPI_connect();
	if (!restore_summary_valid(PG_GETARG_DATUM(0), job, PG_GETARG_DATUM(2)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a restore of %s is recorded with the caller's job restoring it, and a SourceHistory that is a "
						"point-in-time recovery history the caller may read", name)));
	write_restores("INSERT INTO ddb.table_restores (table_name, job_id, source_backup_arn, source_table_arn, restore_date_time, "
				   "source_history) "
				   "VALUES ($1, $2, $3 OPERATOR(pg_catalog.->>) 'SourceBackupArn', $3 OPERATOR(pg_catalog.->>) 'SourceTableArn', "
				   "pg_catalog.to_timestamp(($3 OPERATOR(pg_catalog.->>) 'RestoreDateTime')::pg_catalog.float8), "
				   "($3 OPERATOR(pg_catalog.->>) 'SourceHistory')::pg_catalog.oid)",
				   3, argtypes, args);
	SPI_finish();
	PG_RETURN_VOID();
}

/* ddb.restore_items(target_table, items_function, items_argument): the number of items written; the restore is then done. */
Datum
ddb_restore_items(PG_FUNCTION_ARGS)
{
	char	   *target;
	Oid			function;
	Oid			argtypes[2] = {TEXTOID, JSONBOID};
	Datum		args[2];
	char	   *sql;
	const char *outer;
	volatile int64 items = 0;
	volatile int32 job = 0;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the table, items function and argument of ddb.restore_items must not be null")));
	target = text_to_cstring(PG_GETARG_TEXT_PP(0));
	function = PG_GETARG_OID(1);
	args[0] = PG_GETARG_DATUM(0);
	args[1] = PG_GETARG_DATUM(2);
	if (get_func_name(function) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("the items function %u of a restore does not exist", function)));
	/* only the worker of the job restoring the table writes it while it is CREATING */
	SPI_connect();
	if (SPI_execute_with_args("SELECT job_id FROM ddb.table_restores WHERE table_name OPERATOR(pg_catalog.=) $1 AND in_progress",
							  1, argtypes, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not read the restore of %s", target);
	if (SPI_processed == 1)
	{
		bool		isnull;

		job = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	}
	SPI_finish();
	if (job == 0 || !holds_job_lock(DDB_LOCK_JOB_RUN, job))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("ddb.restore_items writes %s only for the job restoring it", target)));
	sql = psprintf("SELECT pg_catalog.count(*) FROM (SELECT ddb.put_item($1, t.item) FROM %s($2) AS t(item)) written",
				   quote_qualified_identifier(get_namespace_name(get_func_namespace(function)), get_func_name(function)));
	outer = table_def_set_restoring(target);
	PG_TRY();
	{
		bool		isnull;

		SPI_connect();
		if (SPI_execute_with_args(sql, 2, argtypes, args, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "ddb_model: the restore of %s could not read its items", target);
		items = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		/* every item is in: the table is ACTIVE when this transaction commits */
		job_restore_done(args[0], job);
		SPI_finish();
	}
	PG_FINALLY();
	{
		table_def_set_restoring(outer);
	}
	PG_END_TRY();
	PG_RETURN_INT64(items);
}
