-- ---------------------------------------------------------------------------
-- Background jobs (docs/operations.md, "Background jobs"): work that must
-- not hold a request open (a restore, an export, an import) runs in a
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
    role_id regrole NOT NULL,           -- who started it, by OID (a role renamed, or dropped and made again, is not another's): the work runs with its privileges
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
    USING (CASE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.oid = role_id) THEN false
                ELSE pg_catalog.pg_has_role(role_id, 'USAGE') END);

-- Records a job of a kind (there must be a function ddb.job_<kind>(integer,
-- jsonb, jsonb)) and starts its background worker, which runs it once the
-- calling transaction commits; returns the job's id.  LimitExceededException
-- (YD009) when no background worker is free (max_worker_processes).
CREATE FUNCTION ddb.start_job(kind text, spec jsonb) RETURNS integer
    AS 'MODULE_PATHNAME', 'ddb_start_job' LANGUAGE C VOLATILE STRICT;

-- A job's status (IN_PROGRESS, COMPLETED, FAILED; NULL when there is no such
-- job, or it is not the caller's: ddb.jobs' policy).  A job IN_PROGRESS whose
-- worker is gone (the server restarted, the worker was terminated) ends
-- FAILED here, with its failure function run.
CREATE FUNCTION ddb.job_state(job_id integer) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_job_state' LANGUAGE C VOLATILE STRICT;

-- True while a job, whoever started it, is IN_PROGRESS (ending FAILED one
-- whose worker is gone, as ddb.job_state does): ddb.restore_running's test.
CREATE FUNCTION ddb.job_running(job_id integer) RETURNS boolean
    AS 'MODULE_PATHNAME', 'ddb_job_running' LANGUAGE C VOLATILE STRICT;

-- True when the current transaction started a job (it holds the job's
-- request lock, src/jobs/jobs.h).
CREATE FUNCTION ddb.job_started_here(job_id integer) RETURNS boolean
    AS 'MODULE_PATHNAME', 'ddb_job_started_here' LANGUAGE C VOLATILE STRICT;

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
    IF ddb.job_started_here(job_id) THEN
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

-- ---------------------------------------------------------------------------
-- Finding and listing a kind's jobs, as the operations of the kinds whose
-- jobs are their records (exports, imports) do: by ARN, by ClientToken, a
-- page at a time.
-- ---------------------------------------------------------------------------

-- The NextToken of a listing of the caller's jobs of a kind (export,
-- import) after a job of its own, for a table filter (16 hex digits).
CREATE FUNCTION ddb.seal_job_page_token(kind text, job_id integer, filter text) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_seal_job_page_token' LANGUAGE C STABLE STRICT;
-- The job a listing's NextToken names, NULL for anything else, or for another filter.
CREATE FUNCTION ddb.open_job_page_token(kind text, token text, filter text) RETURNS integer
    AS 'MODULE_PATHNAME', 'ddb_open_job_page_token' LANGUAGE C STABLE STRICT;

-- A page of a listing of jobs of a kind (the caller's: ddb.jobs' policy):
-- their ARNs (the spec's arn_member) in reverse order, those of table_arn
-- when given, of the last 90 days, after the job next_token names; the
-- ARNs and the NextToken of the page after, if any.  A token holds the id
-- of the page's last job and a hash of table_arn, sealed for the kind's
-- listing (ddb.seal_job_page_token): it is short whatever the ARNs'
-- lengths (ListImports' must stay within 1024 characters as hex) and good
-- for the listing it came from only.
CREATE FUNCTION ddb.job_page(kind text, arn_member text, table_arn text, page_size integer, next_token text,
                             OUT arns text[], OUT next text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    filter text := left(md5(coalesce(table_arn, '')), 16);
    after integer;
    after_arn text;
    ids integer[];
BEGIN
    IF next_token IS NOT NULL THEN
        after := ddb.open_job_page_token(kind, next_token, filter);
        IF after IS NOT NULL THEN
            after_arn := (SELECT j.spec->>arn_member FROM ddb.jobs j WHERE j.kind = job_page.kind AND j.id = after);
        END IF;
        IF after_arn IS NULL THEN
            PERFORM ddb.validation_error('The provided NextToken is not valid');
        END IF;
    END IF;
    SELECT array_agg(arn ORDER BY arn COLLATE "C" DESC), array_agg(id ORDER BY arn COLLATE "C" DESC) INTO arns, ids FROM (
        SELECT j.spec->>arn_member AS arn, j.id FROM ddb.jobs j
        WHERE j.kind = job_page.kind AND j.created_at > now() - interval '90 days'
          AND (table_arn IS NULL OR j.spec->>'TableArn' = table_arn)
          AND (after_arn IS NULL OR (j.spec->>arn_member) COLLATE "C" < after_arn COLLATE "C")
        ORDER BY j.spec->>arn_member COLLATE "C" DESC LIMIT page_size + 1) page;
    IF cardinality(arns) > page_size THEN
        arns := arns[1:page_size];
        next := ddb.seal_job_page_token(kind, ids[page_size], filter);
    END IF;
END $$;

-- The job of kind of an ARN (the spec's arn_member), the caller's, or NULL.
CREATE FUNCTION ddb.job_of_arn(kind text, arn_member text, arn text) RETURNS ddb.jobs
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT j FROM ddb.jobs j WHERE j.kind = job_of_arn.kind AND j.spec->>arn_member = arn);

-- Locks the caller's ClientToken of a kind of job until the transaction ends:
-- the role is part of the lock's key, one of the server's own locks
-- (src/ddb_locks.h), so no role holds another's.
CREATE FUNCTION ddb.lock_client_token(kind text, token text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_lock_client_token' LANGUAGE C VOLATILE STRICT;

-- The caller's job of kind started with a ClientToken in the last 8 hours
-- (DynamoDB's idempotency window), or NULL; the token is locked until the
-- transaction ends, so that two requests with it are one after the other.
CREATE FUNCTION ddb.job_of_client_token(kind text, token text) RETURNS ddb.jobs
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ddb.lock_client_token(kind, token);
    RETURN (SELECT j FROM ddb.jobs j
            WHERE j.kind = job_of_client_token.kind AND j.spec->>'ClientToken' = token
              AND j.created_at > now() - interval '8 hours'
            ORDER BY j.id DESC LIMIT 1);
END $$;

-- The caller's job of kind that DescribeExport or DescribeImport names by
-- its ARN (member: ExportArn, ImportArn; a string of 37 to 1024
-- characters), its status brought up to date (a job whose worker is gone
-- ends FAILED here, and what it left goes); DynamoDB's error (errcode,
-- message) when there is none.
CREATE FUNCTION ddb.described_job(kind text, member text, arn jsonb, errcode text, message text) RETURNS ddb.jobs
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j ddb.jobs;
BEGIN
    PERFORM ddb.raise_violations(ddb.string_violations(arn, member, lower(left(member, 1)) || substr(member, 2), true, 37, 1024));
    j := ddb.job_of_arn(kind, member, arn #>> '{}');
    IF j.id IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = errcode, MESSAGE = message || (arn #>> '{}');
    END IF;
    PERFORM ddb.job_state(j.id);
    RETURN ddb.jobs_row(j.id);
END $$;

-- A job's row (the caller's: ddb.jobs' policy).
CREATE FUNCTION ddb.jobs_row(job_id integer) RETURNS ddb.jobs
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT j FROM ddb.jobs j WHERE j.id = job_id);
