-- ---------------------------------------------------------------------------
-- Background jobs (docs/operations.md, "Background jobs"): work that must
-- not hold a request open (a restore; exports and imports later) runs in a
-- dynamic background worker of its own (src/jobs/).  ddb.start_job records
-- the job in the requesting transaction and starts its worker, which waits
-- until that transaction ends: committed, it runs the job; rolled back, it
-- finds no job and does nothing.  A job of kind K is done by the function
-- ddb.job_K(job_id integer, spec jsonb, progress jsonb) RETURNS jsonb, run
-- by the worker with the privileges of the role that started the job, once
-- per step, each step a transaction of its own: it returns the job's
-- progress counters, and "done": false when another step is to follow.  A
-- job that fails ends FAILED with the error, and ddb.job_K_failed(job_id,
-- spec, error), when it exists, undoes what the job left (as that role).
-- ---------------------------------------------------------------------------

CREATE SEQUENCE ddb.job_ids AS integer;
SELECT pg_catalog.pg_extension_config_dump('ddb.job_ids', '');

CREATE TABLE ddb.jobs (
    id integer PRIMARY KEY DEFAULT nextval('ddb.job_ids'),
    kind text NOT NULL,                 -- ddb.job_<kind> does the work
    spec jsonb NOT NULL,                -- what to do, the kind's own
    role_name name NOT NULL,            -- who started it: the work runs with its privileges
    status text NOT NULL DEFAULT 'IN_PROGRESS' CHECK (status IN ('IN_PROGRESS', 'COMPLETED', 'FAILED')),
    progress jsonb NOT NULL DEFAULT '{}',   -- the counters the last step returned
    error text,                         -- why it FAILED
    created_at timestamptz NOT NULL DEFAULT now(),
    started_at timestamptz,
    ended_at timestamptz
);
ALTER SEQUENCE ddb.job_ids OWNED BY ddb.jobs.id;
COMMENT ON TABLE ddb.jobs IS 'Background jobs (restores, ...): kind, spec, the role that started them, status, progress, error';
SELECT pg_catalog.pg_extension_config_dump('ddb.jobs', '');

-- Each role sees its own jobs (and those of the roles it has the privileges
-- of); only the extension's code writes them (src/jobs/, as the owner).
GRANT SELECT ON ddb.jobs TO PUBLIC;
ALTER TABLE ddb.jobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY starters ON ddb.jobs FOR SELECT TO PUBLIC
    USING (CASE WHEN to_regrole(quote_ident(role_name)) IS NULL THEN false
                ELSE pg_has_role(to_regrole(quote_ident(role_name)), 'USAGE') END);

-- Records a job of a kind (there must be a function ddb.job_<kind>(integer,
-- jsonb, jsonb)) and starts its background worker, which runs it once the
-- calling transaction commits; returns the job's id.  LimitExceededException
-- (YD009) when no background worker is free (max_worker_processes).
CREATE FUNCTION ddb.start_job(kind text, spec jsonb) RETURNS integer
    AS 'MODULE_PATHNAME', 'ddb_start_job' LANGUAGE C VOLATILE STRICT;

-- A job's status (IN_PROGRESS, COMPLETED, FAILED; NULL when there is no such
-- job).  A job IN_PROGRESS whose worker is gone (the server restarted, the
-- worker was terminated) ends FAILED here, with its failure function run.
CREATE FUNCTION ddb.job_state(job_id integer) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_job_state' LANGUAGE C VOLATILE STRICT;

-- Waits until a job is no longer IN_PROGRESS (timeout_seconds at most) and
-- returns its status; a job started by the calling transaction cannot end
-- before that transaction does, and is refused.
CREATE FUNCTION ddb.wait_for_job(job_id integer, timeout_seconds double precision DEFAULT 60) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    deadline timestamptz := clock_timestamp() + make_interval(secs => timeout_seconds);
    status text;
BEGIN
    IF EXISTS (SELECT FROM pg_locks l WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid()
                                        AND l.classid = 1685283444 AND l.objid = job_id::oid AND l.objsubid = 2) THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('job %s was started by this transaction and runs once it commits', job_id);
    END IF;
    LOOP
        status := ddb.job_state(job_id);
        EXIT WHEN status IS DISTINCT FROM 'IN_PROGRESS' OR clock_timestamp() > deadline;
        PERFORM pg_sleep(0.02);
    END LOOP;
    RETURN status;
END $$;
