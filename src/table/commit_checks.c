/*
 * commit_checks.c — ddb.check_at_commit, the trigger that checks a model's
 * invariant over several items when the transaction commits (the
 * user_service model's S8: a user's profile and its emails agree).
 *
 * A deferred constraint trigger would do it, but a request that
 * ddb.execute_as serves is a security-restricted operation, which refuses
 * deferred triggers (src/execute/execute.c).  So the trigger is a plain AFTER
 * ROW trigger that collects the partition keys written (commit_queue.c),
 * and at commit each check function runs once per key, as the owner of the
 * table, as a foreign key's check does.  It runs only functions of the
 * extension itself; PUBLIC may not attach it.
 */
#include "postgres.h"

#include "catalog/dependency.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "../key/ddb_key.h"
#include "commit_queue.h"
#include "table_access.h"
#include "trigger_guard.h"

PG_FUNCTION_INFO_V1(ddb_check_at_commit);
PG_FUNCTION_INFO_V1(ddb_check_now);

/* A collected check: its columns (the first the queue's). */
enum
{
	CHECK_SUBXACT,
	CHECK_RELATION,				/* the relation written, whose owner runs the check */
	CHECK_FUNCTION,
	CHECK_KEY,
	CHECK_COLUMNS
};

static TupleDesc describe_check(void);
static void run_checks(CommitQueue *queue);

/* The transaction's checks to run. */
static CommitQueue checks = {.describe = describe_check,.flush = run_checks};

/* The columns of a collected check (in the transaction's context). */
static TupleDesc
describe_check(void)
{
	TupleDesc	desc = CreateTemplateTupleDesc(CHECK_COLUMNS);

	TupleDescInitEntry(desc, CHECK_SUBXACT + 1, "subxact", INT4OID, -1, 0);
	TupleDescInitEntry(desc, CHECK_RELATION + 1, "relation", OIDOID, -1, 0);
	TupleDescInitEntry(desc, CHECK_FUNCTION + 1, "function", OIDOID, -1, 0);
	TupleDescInitEntry(desc, CHECK_KEY + 1, "key", ddb_key_type_oid(), -1, 0);
	return desc;
}

/* A check already run this commit. */
typedef struct CheckRun
{
	Oid			function;
	Datum		key;
} CheckRun;

/* True when a (function, key) pair is among the runs. */
static bool
already_run(List *runs, Oid function, Datum key)
{
	ListCell   *lc;

	foreach(lc, runs)
	{
		CheckRun   *run = lfirst(lc);

		if (run->function == function && datumIsEqual(run->key, key, false, -1))
			return true;
	}
	return false;
}

/* Raises unless a function belongs to the extension ddb_model. */
static void
require_extension_function(Oid function)
{
	if (getExtensionOfObject(ProcedureRelationId, function) != get_extension_oid("ddb_model", false))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("ddb.check_at_commit runs only the extension's own functions, not %s",
						format_procedure(function))));
}

/* At commit: runs each collected check once per key, as the owner of the relation written. */
static void
run_checks(CommitQueue *queue)
{
	TupleTableSlot *slot = MakeSingleTupleTableSlot(queue->desc, &TTSOpsMinimalTuple);
	List	   *runs = NIL;

	while (commit_queue_next(queue, slot))
	{
		Oid			function = DatumGetObjectId(slot->tts_values[CHECK_FUNCTION]);
		Datum		key = slot->tts_values[CHECK_KEY];
		CheckRun   *run;
		OwnerContext saved;

		if (already_run(runs, function, key))
			continue;
		require_extension_function(function);
		run = palloc(sizeof(CheckRun));
		run->function = function;
		run->key = datumCopy(key, false, -1);
		runs = lappend(runs, run);
		owner_context_enter(DatumGetObjectId(slot->tts_values[CHECK_RELATION]), &saved);
		/* at commit no statement has set a snapshot: the check reads what the transaction has written */
		PushActiveSnapshot(GetTransactionSnapshot());
		OidFunctionCall1(function, key);
		PopActiveSnapshot();
		owner_context_exit(&saved);
	}
	ExecDropSingleTupleTableSlot(slot);
}

/*
 * ddb.check_at_commit(table_name, check_function): collects the partition
 * key of a written row (the new row's; a deleted row's) for check_function
 * (a regprocedure of one ddb_key argument) to check at commit.
 */
Datum
ddb_check_at_commit(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	const ItemColumns *columns;
	HeapTuple	row;
	Datum		values[CHECK_COLUMNS];
	bool		nulls[CHECK_COLUMNS] = {0};

	(void) trigger_guard_row(fcinfo, "ddb.check_at_commit", 2, &columns);
	row = TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : td->tg_trigtuple;
	values[CHECK_RELATION] = ObjectIdGetDatum(RelationGetRelid(td->tg_relation));
	/* the check function, looked up once per statement (the trigger's FmgrInfo lasts that long) */
	if (fcinfo->flinfo->fn_extra == NULL)
	{
		Oid		   *function = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(Oid));

		*function = DatumGetObjectId(DirectFunctionCall1(regprocedurein, CStringGetDatum(td->tg_trigger->tgargs[1])));
		fcinfo->flinfo->fn_extra = function;
	}
	values[CHECK_FUNCTION] = ObjectIdGetDatum(*(Oid *) fcinfo->flinfo->fn_extra);
	values[CHECK_KEY] = PointerGetDatum(PG_DETOAST_DATUM_COPY(trigger_guard_column(row, RelationGetDescr(td->tg_relation),
																					 columns->pk)));
	commit_queue_put(&checks, values, nulls);
	PG_RETURN_POINTER(NULL);
}

/*
 * ddb.check_now(): runs the checks the transaction has collected so far, now
 * rather than at its commit, as SET CONSTRAINTS ALL IMMEDIATE fires deferred
 * triggers (what it writes later is checked at commit again).
 */
Datum
ddb_check_now(PG_FUNCTION_ARGS)
{
	commit_queue_flush(&checks);
	PG_RETURN_VOID();
}
