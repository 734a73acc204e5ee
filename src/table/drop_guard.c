/*
 * drop_guard.c — the event trigger that keeps DROP EXTENSION ddb_model from
 * destroying item data (the seeds' RETAIN removal policy).
 *
 * The data tables users create are not members of the extension but depend
 * on its key type, so DROP EXTENSION ... CASCADE would drop them; the
 * models' tables are members and would go too, and so would the backups
 * (docs/backups.md).  While any user table exists, a model table holds
 * items, or a backup exists (ddb.tables_blocking_drop), the guard refuses
 * the command instead.
 */
#include "postgres.h"

#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "nodes/parsenodes.h"

PG_FUNCTION_INFO_V1(ddb_guard_drop_extension);

/* True when a DROP statement names the extension ddb_model. */
static bool
drops_this_extension(Node *parsetree)
{
	DropStmt   *stmt;
	ListCell   *lc;

	if (!IsA(parsetree, DropStmt))
		return false;
	stmt = (DropStmt *) parsetree;
	if (stmt->removeType != OBJECT_EXTENSION)
		return false;
	foreach(lc, stmt->objects)
		if (strcmp(strVal(lfirst(lc)), "ddb_model") == 0)
			return true;
	return false;
}

/* ddl_command_start trigger: refuses to drop the extension while tables hold or may hold items. */
Datum
ddb_guard_drop_extension(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	int64		tables;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "ddb_model: ddb.guard_drop_extension must be called as an event trigger");
	trigdata = (EventTriggerData *) fcinfo->context;
	if (!drops_this_extension(trigdata->parsetree))
		PG_RETURN_VOID();

	SPI_connect();
	if (SPI_execute("SELECT count(*) FROM ddb.tables_blocking_drop()", true, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not count tables");
	tables = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
										 &(bool){false}));
	SPI_finish();
	if (tables > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg("cannot drop extension ddb_model while it holds %lld DynamoDB tables or backups",
						(long long) tables),
				 errdetail("Dropping it would destroy their items (RETAIN removal policy)."),
				 errhint("Delete those tables with ddb.delete_table(name), the items of a model's tables, "
						 "and the backups (DeleteBackup) first, or keep the extension; "
						 "SELECT ddb.tables_blocking_drop() lists them.")));
	PG_RETURN_VOID();
}
