/*
 * job_catalog.c — background jobs as the requesting backends see them
 * (jobs.h): ddb.start_job records a job and starts its worker, ddb.job_state
 * reports a job's status and ends FAILED a job whose worker is gone; the
 * helpers the worker (job_worker.c) shares: reading a job, acting as its
 * role, failing it.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/syscache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "../ddb_errors.h"
#include "../request/subtransaction.h"
#include "../table/table_def.h"
#include "jobs.h"

PG_FUNCTION_INFO_V1(ddb_start_job);
PG_FUNCTION_INFO_V1(ddb_job_state);
PG_FUNCTION_INFO_V1(ddb_job_running);
PG_FUNCTION_INFO_V1(ddb_job_started_here);

/* How long ddb.start_job waits for its worker to start, in milliseconds. */
#define JOB_START_TIMEOUT_MS 30000

/* The error of a job whose worker is gone. */
#define JOB_WORKER_GONE "the background worker running the job ended before it finished " \
	"(the server restarted or crashed, or the worker was terminated)"

/* ddb.max_jobs_per_role: how many jobs one role may have in progress. */
static int	max_jobs_per_role = 4;

/* Defines ddb.max_jobs_per_role; see jobs.h. */
void
jobs_define_settings(void)
{
	DefineCustomIntVariable("ddb.max_jobs_per_role",
							"The background jobs (restores, exports, imports) one role may have in progress at once.",
							"One more is LimitExceededException, so that no role takes every background worker.",
							&max_jobs_per_role, 4, 1, 500, PGC_SUSET, 0, NULL, NULL, NULL);
}

/* The tag of a job's request or run lock; see jobs.h. */
void
job_lock_tag(LOCKTAG *tag, DdbLockClass lock_class, int32 id)
{
	ddb_lock_tag(tag, lock_class, (uint32) id);
}

/* The kinds of jobs done by C steps (job_define_step). */
#define MAX_C_STEPS 8
static struct
{
	const char *kind;
	JobStep		step;
}			c_steps[MAX_C_STEPS];
static int	n_c_steps = 0;

/* Defines a C step; see jobs.h. */
void
job_define_step(const char *kind, JobStep step)
{
	if (n_c_steps == MAX_C_STEPS)
		elog(ERROR, "ddb_model: too many kinds of jobs done in C");
	c_steps[n_c_steps].kind = kind;
	c_steps[n_c_steps++].step = step;
}

/* The C step of a kind; see jobs.h. */
JobStep
job_step_of(const char *kind)
{
	for (int i = 0; i < n_c_steps; i++)
		if (strcmp(c_steps[i].kind, kind) == 0)
			return c_steps[i].step;
	return NULL;
}

/* True when a job kind is a name a function may end with: [a-z][a-z0-9_]*, at most 40 characters. */
static bool
valid_kind(const char *kind)
{
	size_t		n = strlen(kind);

	if (n == 0 || n > 40 || kind[0] < 'a' || kind[0] > 'z')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((kind[i] >= 'a' && kind[i] <= 'z') || (kind[i] >= '0' && kind[i] <= '9') || kind[i] == '_'))
			return false;
	return true;
}

/* True when the function of this signature exists (SPI connected). */
static bool
function_exists(const char *signature)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(signature)};
	bool		isnull;

	if (SPI_execute_with_args("SELECT pg_catalog.to_regprocedure($1) IS NOT NULL", 1, argtypes, args, NULL,
							  true, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not look up %s", signature);
	return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/* Reads a job; see jobs.h. */
bool
job_read(int32 id, Job *job)
{
	Oid			argtypes[1] = {INT4OID};
	Datum		args[1] = {Int32GetDatum(id)};
	MemoryContext caller = CurrentMemoryContext;
	OwnerContext saved;
	bool		found;

	owner_context_enter(ddb_relation_oid("jobs"), &saved);
	SPI_connect();
	if (SPI_execute_with_args("SELECT kind, spec, role_id::pg_catalog.oid, status, progress FROM ddb.jobs "
							  "WHERE id OPERATOR(pg_catalog.=) $1", 1, argtypes, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not read job %d", id);
	found = SPI_processed == 1;
	if (found)
	{
		HeapTuple	row = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		MemoryContext spi = MemoryContextSwitchTo(caller);

		job->id = id;
		job->kind = SPI_getvalue(row, desc, 1);
		job->spec = DatumGetJsonbPCopy(SPI_getbinval(row, desc, 2, &isnull));
		job->role = DatumGetObjectId(SPI_getbinval(row, desc, 3, &isnull));
		job->status = SPI_getvalue(row, desc, 4);
		job->progress = DatumGetJsonbPCopy(SPI_getbinval(row, desc, 5, &isnull));
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	owner_context_exit(&saved);
	return found;
}

/* Acts as the role that started a job; see jobs.h. */
void
job_role_enter(const Job *job, OwnerContext *saved)
{
	if (!SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(job->role)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("the role (OID %u) that started job %d no longer exists", job->role, job->id),
				 errhint("A job runs as the role that started it, not as another of the same name.")));
	GetUserIdAndSecContext(&saved->userid, &saved->sec_context);
	SetUserIdAndSecContext(job->role, saved->sec_context | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
}

/* A job and the error that ended it: what its failure function is called with. */
typedef struct FailedJob
{
	const Job  *job;
	const char *message;
} FailedJob;

/* Runs ddb.job_<kind>_failed(id, spec, error) as the job's role, when the kind has one. */
static void
run_failure_function(void *arg)
{
	FailedJob  *failed = arg;
	const Job  *job = failed->job;
	Oid			argtypes[3] = {INT4OID, JSONBOID, TEXTOID};
	Datum		args[3] = {Int32GetDatum(job->id), JsonbPGetDatum(job->spec), CStringGetTextDatum(failed->message)};
	OwnerContext saved;

	SPI_connect();
	if (function_exists(psprintf("ddb.job_%s_failed(integer, jsonb, text)", job->kind)))
	{
		job_role_enter(job, &saved);
		if (SPI_execute_with_args(psprintf("SELECT ddb.job_%s_failed($1, $2, $3)", job->kind), 3, argtypes, args,
								  NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "ddb_model: the failure function of job %d failed", job->id);
		owner_context_exit(&saved);
	}
	SPI_finish();
}

/* Ends a job as FAILED; see jobs.h. */
bool
job_fail(const Job *job, const char *message)
{
	Oid			argtypes[2] = {INT4OID, TEXTOID};
	Datum		args[2] = {Int32GetDatum(job->id), CStringGetTextDatum(message)};
	OwnerContext saved;
	bool		ended;
	FailedJob	failed = {job, message};
	ErrorData  *error;

	if (!valid_kind(job->kind))
		elog(ERROR, "ddb_model: job %d has an invalid kind", job->id);
	owner_context_enter(ddb_relation_oid("jobs"), &saved);
	SPI_connect();
	if (SPI_execute_with_args("UPDATE ddb.jobs SET status = 'FAILED', error = $2, ended_at = pg_catalog.clock_timestamp() "
							  "WHERE id OPERATOR(pg_catalog.=) $1 AND status OPERATOR(pg_catalog.=) 'IN_PROGRESS'",
							  2, argtypes, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "ddb_model: could not end job %d", job->id);
	ended = SPI_processed == 1;
	SPI_finish();
	owner_context_exit(&saved);
	if (!ended)
		return false;
	error = api_subtransaction_run(run_failure_function, &failed);
	if (error)
		ereport(WARNING,
				(errmsg("ddb_model: the failure function of job %d (%s) failed: %s", job->id, job->kind, error->message),
				 errhint("What the job left behind may need removing by hand.")));
	return true;
}

/* Records a job as the owner of ddb.jobs, started by the current user; returns its id. */
static int32
insert_job(const char *kind, Jsonb *spec)
{
	Oid			argtypes[3] = {TEXTOID, JSONBOID, OIDOID};
	Datum		args[3] = {CStringGetTextDatum(kind), JsonbPGetDatum(spec), ObjectIdGetDatum(GetUserId())};
	OwnerContext saved;
	bool		isnull;
	int32		id;

	owner_context_enter(ddb_relation_oid("jobs"), &saved);
	if (SPI_execute_with_args("INSERT INTO ddb.jobs (kind, spec, role_id) VALUES ($1, $2, $3::pg_catalog.regrole) RETURNING id",
							  3, argtypes, args, NULL, false, 0) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "ddb_model: could not record the job");
	id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	owner_context_exit(&saved);
	return id;
}

/* The owner of the extension, whom a job's worker connects as (SPI connected). */
static Oid
extension_owner(void)
{
	bool		isnull;

	if (SPI_execute("SELECT extowner FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'ddb_model'",
					true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "ddb_model: the extension is not installed in this database");
	return DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * Waits until the worker of a job holds its run lock (it then waits for
 * the request lock this transaction holds); raises when it stopped first.
 */
static void
wait_for_worker(int32 id, BackgroundWorkerHandle *handle)
{
	LOCKTAG		run;
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), JOB_START_TIMEOUT_MS);

	job_lock_tag(&run, DDB_LOCK_JOB_RUN, id);
	for (;;)
	{
		pid_t		pid;
		BgwHandleStatus status;

		if (LockAcquire(&run, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
			return;
		LockRelease(&run, ExclusiveLock, false);
		status = GetBackgroundWorkerPid(handle, &pid);
		if (status == BGWH_STOPPED || status == BGWH_POSTMASTER_DIED)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the background worker of job %d stopped before it began", id),
					 errhint("The server log says why; the worker connects as the extension's owner, who must be able to log in.")));
		if (GetCurrentTimestamp() > deadline)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the background worker of job %d did not start within %d seconds", id,
							JOB_START_TIMEOUT_MS / 1000)));
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 2, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* Starts the background worker of a job (SPI connected); LimitExceededException when none is free. */
static void
launch_worker(int32 id)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	JobWorkerArgs args = {MyDatabaseId, extension_owner()};

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "ddb_model");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "ddb_job_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "ddb_model job %d", id);
	snprintf(worker.bgw_type, BGW_MAXLEN, "ddb_model job");
	worker.bgw_main_arg = Int32GetDatum(id);
	worker.bgw_notify_pid = MyProcPid;
	memcpy(worker.bgw_extra, &args, sizeof(args));
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_LIMIT_EXCEEDED),
				 errmsg("Subscriber limit exceeded: no background worker is free to run the operation "
						"(max_worker_processes = %d); retry when one has ended", max_worker_processes),
				 errhint("Raise max_worker_processes (a server restart) to run more background operations at once.")));
	wait_for_worker(id, handle);
}

static bool worker_alive(int32 id);

/*
 * Refuses a job its starter may not start (SPI connected, the job just
 * recorded): the starter must own the table the spec names (TableName),
 * as the operations that start jobs have checked (a restore's or an
 * import's new table is its creator's, an export takes ownership), and
 * have fewer than ddb.max_jobs_per_role other jobs whose worker runs.
 *
 * The count is exact across sessions: it is taken under the role's job
 * quota lock (DDB_LOCK_JOB_QUOTA), which the transaction then holds until
 * it ends, so another transaction of the role that started a job (whose
 * row this snapshot cannot see until it commits) has ended before this
 * one counts, and this one's own jobs are visible to it.
 */
static void
check_job_starter(int32 id, Jsonb *spec)
{
	Oid			argtypes[2] = {JSONBOID, INT4OID};
	Datum		args[2] = {JsonbPGetDatum(spec), Int32GetDatum(id)};
	OwnerContext saved;
	TableDef   *def = NULL;
	int			running = 0;

	if (SPI_execute_with_args("SELECT $1 OPERATOR(pg_catalog.->>) 'TableName'", 1, argtypes, args, NULL, true, 1)
		!= SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not read the spec of job %d", id);
	if (!SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1) ||
		!(def = table_def_find(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1))) ||
		!pg_class_ownercheck(def->relid, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to start a background job for %s", def ? def->name : "no table"),
				 errhint("A job is started by the operation it does, for the owner of the table it names.")));
	ddb_lock_xact(DDB_LOCK_JOB_QUOTA, (uint32) GetUserId(), ExclusiveLock);
	/* counted under a snapshot taken after the lock, also in REPEATABLE READ: what it waited for is seen */
	PushActiveSnapshot(GetLatestSnapshot());
	owner_context_enter(ddb_relation_oid("jobs"), &saved);
	argtypes[0] = OIDOID;
	args[0] = ObjectIdGetDatum(GetUserId());
	if (SPI_execute_with_args("SELECT id FROM ddb.jobs WHERE role_id::pg_catalog.oid OPERATOR(pg_catalog.=) $1 "
							  "AND status OPERATOR(pg_catalog.=) 'IN_PROGRESS' AND id OPERATOR(pg_catalog.<>) $2",
							  2, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not count the jobs in progress");
	owner_context_exit(&saved);
	PopActiveSnapshot();
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		if (worker_alive(DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull))))
			running++;
	}
	if (running >= max_jobs_per_role)
		ereport(ERROR,
				(errcode(ERRCODE_DDB_LIMIT_EXCEEDED),
				 errmsg("Subscriber limit exceeded: %s has %d background operations in progress "
						"(ddb.max_jobs_per_role = %d); retry when one has ended",
						GetUserNameFromId(GetUserId(), false), running, max_jobs_per_role)));
}

/* ddb.start_job(kind, spec): records a job and starts its worker; returns its id. */
Datum
ddb_start_job(PG_FUNCTION_ARGS)
{
	char	   *kind = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Jsonb	   *spec = PG_GETARG_JSONB_P(1);
	LOCKTAG		request;
	int32		id;

	SPI_connect();
	if (!valid_kind(kind) || (job_step_of(kind) == NULL && !function_exists(psprintf("ddb.job_%s(integer, jsonb, jsonb)", kind))))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("there is no kind of job \"%s\"", kind),
				 errhint("A kind K is run by a function ddb.job_K(job_id integer, spec jsonb, progress jsonb), or by C code (job_define_step).")));
	id = insert_job(kind, spec);
	job_lock_tag(&request, DDB_LOCK_JOB_REQUEST, id);
	(void) LockAcquire(&request, ExclusiveLock, false, false);
	check_job_starter(id, spec);
	launch_worker(id);
	SPI_finish();
	PG_RETURN_INT32(id);
}

/* True when the worker of a job holds its run lock. */
static bool
worker_alive(int32 id)
{
	LOCKTAG		run;

	job_lock_tag(&run, DDB_LOCK_JOB_RUN, id);
	if (LockAcquire(&run, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		return true;
	LockRelease(&run, ExclusiveLock, false);
	return false;
}

/*
 * A job's status, NULL when there is none; a job IN_PROGRESS whose worker
 * is gone ends FAILED (not in a read-only transaction, which reports what
 * it reads).
 */
static char *
job_status(int32 id, Oid *role)
{
	Job			job;

	if (!job_read(id, &job))
		return NULL;
	*role = job.role;
	if (strcmp(job.status, "IN_PROGRESS") == 0 && !XactReadOnly && !RecoveryInProgress() && !worker_alive(id))
	{
		ereport(LOG, (errmsg("ddb_model: job %d (%s) lost its background worker: it failed", id, job.kind)));
		if (job_fail(&job, JOB_WORKER_GONE))
			return "FAILED";
		if (!job_read(id, &job))	/* it ended meanwhile */
			return NULL;
	}
	return job.status;
}

/*
 * ddb.job_state(job_id): the job's status, NULL when there is none or it is
 * not the caller's (ddb.jobs' policy: a job of a role whose privileges the
 * caller has).
 */
Datum
ddb_job_state(PG_FUNCTION_ARGS)
{
	Oid			role = InvalidOid;
	char	   *status = job_status(PG_GETARG_INT32(0), &role);

	if (status == NULL || !has_privs_of_role(GetUserId(), role))
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(status));
}

/* ddb.job_running(job_id): true while a job, whoever's, is IN_PROGRESS with its worker (ddb.restore_running). */
Datum
ddb_job_running(PG_FUNCTION_ARGS)
{
	Oid			role = InvalidOid;
	char	   *status = job_status(PG_GETARG_INT32(0), &role);

	PG_RETURN_BOOL(status != NULL && strcmp(status, "IN_PROGRESS") == 0);
}

/* ddb.job_started_here(job_id): true when this transaction holds the job's request lock (it started the job). */
Datum
ddb_job_started_here(PG_FUNCTION_ARGS)
{
	LOCKTAG		request;

	job_lock_tag(&request, DDB_LOCK_JOB_REQUEST, PG_GETARG_INT32(0));
	PG_RETURN_BOOL(LockHeldByMe(&request, ExclusiveLock));
}
