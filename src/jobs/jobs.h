/*
 * jobs.h — background jobs (docs/operations.md, sql/jobs.sql): a job is a
 * row of ddb.jobs run by a dynamic background worker of its own
 * (job_worker.c), started by ddb.start_job in the requesting transaction
 * (job_catalog.c).  What restores write as the catalog's owner (their
 * items, their row of ddb.table_restores, their end, an import's too) is
 * restore_items.c's; exports' and imports' C steps are src/exports/'s.
 *
 * The hand-off: the requesting transaction holds the job's request lock
 * (DDB_LOCK_JOB_REQUEST, one of the server's own locks, src/ddb_locks.h,
 * which no SQL can take; released when it ends); the worker takes the job's
 * run lock for its whole life, then waits for the request lock, so that it
 * reads the job only once the request has committed (or finds no job: the
 * request rolled back).  ddb.start_job returns only once the worker holds
 * the run lock; a job IN_PROGRESS whose run lock is free has lost its
 * worker.
 */
#ifndef DDB_JOBS_H
#define DDB_JOBS_H

#include "postgres.h"

#include "storage/lock.h"
#include "utils/jsonb.h"

#include "../ddb_locks.h"
#include "../table/table_access.h"

/* What the worker is handed in bgw_extra: where to connect, and as whom. */
typedef struct JobWorkerArgs
{
	Oid			database;
	Oid			user;			/* the extension's owner */
} JobWorkerArgs;

/* A row of ddb.jobs, as the runner uses it. */
typedef struct Job
{
	int32		id;
	char	   *kind;
	Jsonb	   *spec;
	Oid			role;			/* the role that started it (which may since be gone) */
	char	   *status;
	Jsonb	   *progress;
} Job;

/* Defines the jobs' setting ddb.max_jobs_per_role (from _PG_init). */
extern void jobs_define_settings(void);

/* The tag of a job's request lock (DDB_LOCK_JOB_REQUEST) or run lock (DDB_LOCK_JOB_RUN); pg_locks: objid the job's id. */
extern void job_lock_tag(LOCKTAG *tag, DdbLockClass lock_class, int32 id);

/* Reads a job (as the owner of ddb.jobs, under a fresh snapshot); false when there is none. */
extern bool job_read(int32 id, Job *job);

/*
 * Acts as the role that started a job, in a security-restricted operation
 * as PostgreSQL runs maintenance commands as a table's owner (code the
 * role controls, such as a trigger on its table, cannot change the
 * session's role nor make objects that outlive the step); the caller's
 * user comes back with owner_context_exit, or with the (sub)transaction's
 * abort.  Raises when the role is gone.
 */
extern void job_role_enter(const Job *job, OwnerContext *saved);

/*
 * Ends a job IN_PROGRESS as FAILED with message, and runs its failure
 * function as its role in a subtransaction (a failure there is logged);
 * false when the job was no longer IN_PROGRESS.  In a transaction.
 */
extern bool job_fail(const Job *job, const char *message);

/*
 * The step of a kind of job done by the extension's C code rather than by
 * ddb.job_<kind>: run by the worker as the job's role (job_role_enter), in
 * the step's transaction; returns the progress, with "done" as the SQL
 * steps return it (palloc'd in the caller's context).  Work that only the
 * job may do (an export's or an import's files) is done so, through no
 * SQL function that code the role controls could call.
 */
typedef Jsonb *(*JobStep) (const Job *job);

/* Makes step the step of jobs of kind (from _PG_init). */
extern void job_define_step(const char *kind, JobStep step);

/* The C step of a kind of job, or NULL when ddb.job_<kind> does it. */
extern JobStep job_step_of(const char *kind);

/* Marks the restore or import of a table (a text Datum) by job done, as ddb.table_restores' owner (SPI connected): restore_items.c. */
extern void job_restore_done(Datum table_name, int32 job);

#endif							/* DDB_JOBS_H */
