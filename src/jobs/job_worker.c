/*
 * job_worker.c — the background worker of one job (jobs.h): it connects to
 * the requesting database as the extension's owner, holds the job's run
 * lock for its whole life, waits until the requesting transaction has
 * ended, and then runs the job's steps, each in a transaction of its own,
 * as the role that started the job: ddb.job_<kind>(id, spec, progress),
 * or the kind's C step (job_define_step), until a step says it is done.  A step that raises ends the job FAILED
 * (job_fail); the worker then exits.  A worker that dies leaves its job
 * IN_PROGRESS with its run lock free, which ddb.job_state ends FAILED.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "jobs.h"

/* The worker's entry point, named by the BackgroundWorker that ddb.start_job registers. */
PGDLLEXPORT void ddb_job_worker_main(Datum main_arg);

/* Takes one of the job's locks: the run lock for the session, the request lock until commit. */
static void
take_lock(DdbLockClass key, int32 id, bool session)
{
	LOCKTAG		tag;

	job_lock_tag(&tag, key, id);
	StartTransactionCommand();
	(void) LockAcquire(&tag, ExclusiveLock, session, false);
	CommitTransactionCommand();
}

/* Starts a transaction with a snapshot and SPI, for the worker's own statements. */
static void
begin_work(void)
{
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	SPI_connect();
}

/* Commits what begin_work started. */
static void
end_work(void)
{
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/* Records the job's start; false when there is nothing to run (no job: the request rolled back). */
static bool
start(int32 id, Job *job, MemoryContext keep)
{
	Oid			argtypes[1] = {INT4OID};
	Datum		args[1] = {Int32GetDatum(id)};
	bool		found;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	MemoryContextSwitchTo(keep);
	found = job_read(id, job) && strcmp(job->status, "IN_PROGRESS") == 0;
	SPI_connect();
	if (found && SPI_execute_with_args("UPDATE ddb.jobs SET started_at = pg_catalog.clock_timestamp() WHERE id OPERATOR(pg_catalog.=) $1",
									   1, argtypes, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "ddb_model: could not start job %d", id);
	end_work();
	return found;
}

/*
 * Runs one step of the job as its role and records the progress it
 * returns (COMPLETED with it when the step says it is done), in one
 * transaction; true when the job is done.
 */
static bool
run_step(Job *job, MemoryContext keep)
{
	Oid			argtypes[3] = {INT4OID, JSONBOID, JSONBOID};
	Datum		args[3] = {Int32GetDatum(job->id), JsonbPGetDatum(job->spec), JsonbPGetDatum(job->progress)};
	char		nulls[3] = "  ";
	OwnerContext saved;
	bool		isnull = false;
	Jsonb	   *progress;
	bool		done;
	JobStep		step = job_step_of(job->kind);
	int			guc_level;

	begin_work();
	pgstat_report_activity(STATE_RUNNING, psprintf("ddb_model job %d: %s", job->id, job->kind));
	job_role_enter(job, &saved);
	/* settings the step's code changes end with it, as in a maintenance command */
	guc_level = NewGUCNestLevel();
	if (step)
		progress = step(job);
	else
	{
		Datum		result;

		if (SPI_execute_with_args(psprintf("SELECT ddb.job_%s($1, $2, $3)", job->kind), 3, argtypes, args, NULL,
								  false, 1) != SPI_OK_SELECT)
			elog(ERROR, "ddb_model: job %d could not run", job->id);
		result = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		progress = isnull ? NULL : DatumGetJsonbP(result);
	}
	AtEOXact_GUC(false, guc_level);
	owner_context_exit(&saved);
	/* what the step returned is the job's progress, and "done" */
	args[1] = isnull ? (Datum) 0 : JsonbPGetDatum(progress);
	nulls[1] = isnull ? 'n' : ' ';
	if (SPI_execute_with_args("UPDATE ddb.jobs SET "
							  "progress = coalesce($2, '{}') OPERATOR(pg_catalog.-) 'done', "
							  "status = CASE WHEN coalesce(($2 OPERATOR(pg_catalog.->>) 'done')::boolean, true) "
							  "THEN 'COMPLETED' ELSE status END, "
							  "ended_at = CASE WHEN coalesce(($2 OPERATOR(pg_catalog.->>) 'done')::boolean, true) "
							  "THEN pg_catalog.clock_timestamp() END "
							  "WHERE id OPERATOR(pg_catalog.=) $1 "
							  "RETURNING status OPERATOR(pg_catalog.=) 'COMPLETED', progress",
							  2, argtypes, args, nulls, false, 0) != SPI_OK_UPDATE_RETURNING || SPI_processed != 1)
		elog(ERROR, "ddb_model: could not record the progress of job %d", job->id);
	done = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	progress = DatumGetJsonbP(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	/* the worker's long-lived context keeps the latest progress only */
	pfree(job->progress);
	job->progress = (Jsonb *) MemoryContextAlloc(keep, VARSIZE(progress));
	memcpy(job->progress, progress, VARSIZE(progress));
	end_work();
	pgstat_report_activity(STATE_IDLE, NULL);
	return done;
}

/* Ends the job FAILED with the error a step raised, in a transaction of its own. */
static void
fail(const Job *job, const char *message)
{
	ereport(LOG, (errmsg("ddb_model: job %d (%s) failed: %s", job->id, job->kind, message)));
	begin_work();
	(void) job_fail(job, message);
	end_work();
}

/* The worker of one job: see the top of this file. */
void
ddb_job_worker_main(Datum main_arg)
{
	int32		id = DatumGetInt32(main_arg);
	JobWorkerArgs args;
	MemoryContext keep;
	Job			job;
	bool		done = false;

	memcpy(&args, MyBgworkerEntry->bgw_extra, sizeof(args));
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(args.database, args.user, 0);
	pgstat_report_appname("ddb_model job");
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION);

	take_lock(DDB_LOCK_JOB_RUN, id, true);
	/* the request's lock is free once the requesting transaction has ended */
	take_lock(DDB_LOCK_JOB_REQUEST, id, false);

	keep = AllocSetContextCreate(TopMemoryContext, "ddb_model job", ALLOCSET_DEFAULT_SIZES);
	if (!start(id, &job, keep))
		proc_exit(0);
	MemoryContextSwitchTo(keep);
	while (!done)
	{
		PG_TRY();
		{
			done = run_step(&job, keep);
		}
		PG_CATCH();
		{
			ErrorData  *error;

			MemoryContextSwitchTo(keep);
			error = CopyErrorData();
			FlushErrorState();
			AbortCurrentTransaction();
			MemoryContextSwitchTo(keep);
			fail(&job, error->message);
			done = true;
		}
		PG_END_TRY();
		MemoryContextSwitchTo(keep);
	}
	proc_exit(0);
}
