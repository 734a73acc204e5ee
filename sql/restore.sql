-- ---------------------------------------------------------------------------
-- Restores (docs/backups.md): a new table made from a table's description
-- and a set of items, filled by a background job (sql/jobs.sql).  The
-- request creates the table, CREATING, and starts the job; the job writes
-- the items through ddb.put_item (indexes are rebuilt as items arrive) and
-- makes the table ACTIVE in the same transaction.  RestoreTableFromBackup
-- is one caller of ddb.start_restore; RestoreTableToPointInTime another.
-- ---------------------------------------------------------------------------

CREATE TABLE ddb.table_restores (
    table_name text PRIMARY KEY REFERENCES ddb.tables ON DELETE CASCADE,
    job_id integer NOT NULL,            -- the job that fills it (ddb.jobs)
    source_backup_arn text,             -- RestoreSummary: the backup restored, if one was
    source_table_arn text,              -- the table restored (NULL for an import's table: sql/imports.sql)
    restore_date_time timestamptz,
    in_progress boolean NOT NULL DEFAULT true,  -- CREATING until the job has written every item
    source_history oid                  -- the point-in-time recovery history a restore to a moment reads (sql/pitr.sql)
);
COMMENT ON TABLE ddb.table_restores IS 'Tables made by a restore (or an import): where from, and whether the job still runs (CREATING)';
SELECT pg_catalog.pg_extension_config_dump('ddb.table_restores', '');
GRANT SELECT ON ddb.table_restores TO PUBLIC;
-- a table being restored refuses item operations: its definition says so (src/table/table_def.c)
CREATE TRIGGER catalog_changed AFTER INSERT OR UPDATE OR DELETE ON ddb.table_restores
    FOR EACH ROW EXECUTE FUNCTION ddb.catalog_changed();

-- True while a table is being restored (CREATING).
CREATE FUNCTION ddb.table_restoring(table_name text) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN EXISTS (SELECT FROM ddb.table_restores r WHERE r.table_name = table_restoring.table_name AND r.in_progress);

-- Raises an error for a table being restored (its restore running: a
-- restore whose worker is gone ends here, and its table goes): by
-- default ResourceInUseException (YD005), as the operations that change a
-- table wait for its restore, as DynamoDB's wait for CREATING to end;
-- others give their own DynamoDB error (errcode, and message with %s for the table's name).
CREATE FUNCTION ddb.refuse_restoring(table_name text, errcode text DEFAULT 'YD005',
                                     message text DEFAULT 'Attempt to change a resource which is still in use: Table is being created: %s')
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF ddb.restore_running(table_name) THEN
        RAISE EXCEPTION USING ERRCODE = errcode, MESSAGE = format(message, table_name);
    END IF;
END $$;

-- True while a table's restore runs.  A restore whose worker is gone (the
-- server restarted, the worker was terminated) ends FAILED here, and its
-- table is dropped (ddb.job_running, ddb.job_restore_failed).
CREATE FUNCTION ddb.restore_running(table_name text) RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
RETURN coalesce((SELECT ddb.job_running(r.job_id) FROM ddb.table_restores r
                 WHERE r.table_name = restore_running.table_name AND r.in_progress), false);

-- What DescribeTable adds for a restored table: its RestoreSummary, and
-- TableStatus CREATING while the restore runs ({} for other tables; an
-- imported table has no RestoreSummary).
CREATE FUNCTION ddb.restore_description(table_name text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN coalesce((SELECT CASE WHEN r.in_progress THEN '{"TableStatus": "CREATING"}'::jsonb ELSE '{}' END
                        || CASE WHEN r.source_table_arn IS NOT NULL THEN
                           jsonb_build_object('RestoreSummary', jsonb_strip_nulls(jsonb_build_object(
                               'SourceBackupArn', r.source_backup_arn, 'SourceTableArn', r.source_table_arn,
                               'RestoreDateTime', extract(epoch FROM r.restore_date_time),
                               'RestoreInProgress', r.in_progress)))
                           ELSE '{}' END
                 FROM ddb.table_restores r WHERE r.table_name = restore_description.table_name), '{}');

-- Writes the items a function returns into a table, as ddb.put_item does
-- (the table may be CREATING: the restore's own), and returns how many it
-- wrote: SELECT item FROM items_function(items_argument); then the restore
-- is done (ddb.table_restores, written as its owner).  Only in the worker
-- of the job restoring the table.
CREATE FUNCTION ddb.restore_items(target_table text, items_function regprocedure, items_argument jsonb) RETURNS bigint
    AS 'MODULE_PATHNAME', 'ddb_restore_items' LANGUAGE C VOLATILE;

-- Records a restore just started in ddb.table_restores, as its owner: for
-- the new table's owner, whose transaction started the job
-- (restore_summary as ddb.start_restore takes it, and SourceHistory, the
-- OID of the history relation a restore to a moment reads, a table's with
-- point-in-time recovery that the caller may read: one that is in use is
-- kept from DeleteTable and trimming, src/jobs/restore_items.c).
CREATE FUNCTION ddb.record_restore(table_name text, job_id integer, restore_summary jsonb) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_record_restore' LANGUAGE C VOLATILE STRICT;

-- Ends the restore or import of a table by its job (its table ACTIVE), as
-- ddb.table_restores' owner: only in the worker running that job (an
-- import's failure function, which keeps the items written).
CREATE FUNCTION ddb.end_restore(table_name text, job_id integer) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_end_restore' LANGUAGE C VOLATILE STRICT;

-- The secondary indexes of a restored table, as CreateTable takes them:
-- the source's (kind: 'Global' or 'Local'), or the override's, each of
-- which must be one of the source's, with its KeySchema (the Projection may
-- change, an override's OnDemandThroughput and WarmThroughput are taken); a
-- global index's ProvisionedThroughput when the table is PROVISIONED (the
-- override's, else the source's).
CREATE FUNCTION ddb.restored_indexes(source jsonb, overrides jsonb, kind text, billing_mode text) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    member text := kind || 'SecondaryIndexOverride';
    wanted jsonb := coalesce(overrides->member, source->(kind || 'SecondaryIndexes'), '[]');
    chosen jsonb := '[]';
    g jsonb;
    s jsonb;
BEGIN
    IF jsonb_typeof(wanted) <> 'array' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = format('Unexpected value type in payload for %s: expected a list', member);
    END IF;
    FOR g IN SELECT value FROM jsonb_array_elements(wanted) LOOP
        SELECT value INTO s FROM jsonb_array_elements(source->(kind || 'SecondaryIndexes')) WHERE value->>'IndexName' = g->>'IndexName';
        IF s IS NULL OR s->'KeySchema' IS DISTINCT FROM g->'KeySchema' THEN
            PERFORM ddb.validation_error(format(
                'One or more parameter values were invalid: %s: the backup has no index %s with this KeySchema',
                member, coalesce(g->>'IndexName', 'null')));
        END IF;
        chosen := chosen || jsonb_build_array(
            jsonb_strip_nulls(jsonb_build_object('IndexName', s->'IndexName', 'KeySchema', s->'KeySchema',
                                                 'Projection', coalesce(g->'Projection', s->'Projection'),
                                                 'OnDemandThroughput', g->'OnDemandThroughput',
                                                 'WarmThroughput', g->'WarmThroughput'))
            || CASE WHEN kind = 'Global' AND billing_mode = 'PROVISIONED'
                    THEN jsonb_build_object('ProvisionedThroughput',
                             coalesce(g->'ProvisionedThroughput', (s->'ProvisionedThroughput') - 'NumberOfDecreasesToday'))
                    ELSE '{}' END);
    END LOOP;
    RETURN chosen;
END $$;

-- The CreateTable request of a restored table: the source's key schema,
-- its indexes and billing, with the overrides RestoreTableFromBackup and
-- RestoreTableToPointInTime take (BillingModeOverride,
-- ProvisionedThroughputOverride, OnDemandThroughputOverride,
-- GlobalSecondaryIndexOverride, LocalSecondaryIndexOverride; an
-- SSESpecificationOverride is checked and, as every SSE setting here,
-- left to the server's storage).  Tags, stream and TTL settings are not
-- restored, as in DynamoDB.
CREATE FUNCTION ddb.restored_table_request(target_table text, source jsonb, overrides jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mode text := coalesce(overrides->>'BillingModeOverride', source->'BillingModeSummary'->>'BillingMode', 'PROVISIONED');
    sse jsonb := overrides->'SSESpecificationOverride';
    globals jsonb;
    locals jsonb;
    used text[];
BEGIN
    IF mode NOT IN ('PROVISIONED', 'PAY_PER_REQUEST') THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''billingModeOverride'' failed to satisfy constraint: Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]', mode));
    END IF;
    IF sse IS NOT NULL AND (jsonb_typeof(sse) <> 'object'
                            OR jsonb_typeof(sse->'Enabled') NOT IN ('boolean', 'null')
                            OR coalesce(sse->>'SSEType', 'KMS') NOT IN ('AES256', 'KMS')) THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''sSESpecificationOverride.sSEType'' failed to satisfy constraint: Member must satisfy enum value set: [AES256, KMS]',
            sse->>'SSEType'));
    END IF;
    globals := ddb.restored_indexes(source, overrides, 'Global', mode);
    locals := ddb.restored_indexes(source, overrides, 'Local', mode);
    SELECT array_agg(DISTINCT k->>'AttributeName') INTO used
    FROM jsonb_array_elements(source->'KeySchema' || coalesce((SELECT jsonb_agg(e) FROM jsonb_array_elements(globals || locals) i,
                                                                    jsonb_array_elements(i->'KeySchema') e), '[]')) k;
    RETURN jsonb_strip_nulls(jsonb_build_object(
        'TableName', target_table,
        'KeySchema', source->'KeySchema',
        'AttributeDefinitions', (SELECT jsonb_agg(d ORDER BY d->>'AttributeName') FROM jsonb_array_elements(source->'AttributeDefinitions') d
                                 WHERE d->>'AttributeName' = ANY (used)),
        'BillingMode', mode,
        'ProvisionedThroughput', CASE WHEN mode = 'PROVISIONED'
                                      THEN coalesce(overrides->'ProvisionedThroughputOverride',
                                                    (source->'ProvisionedThroughput') - 'NumberOfDecreasesToday')
                                      ELSE overrides->'ProvisionedThroughputOverride' END,
        'OnDemandThroughput', overrides->'OnDemandThroughputOverride',
        'GlobalSecondaryIndexes', nullif(globals, '[]'),
        'LocalSecondaryIndexes', nullif(locals, '[]')));
END $$;

-- Starts a restore (docs/backups.md, "Restores"): creates target_table,
-- CREATING, from source_description (a TableDescription as DescribeTable
-- gives it: KeySchema, AttributeDefinitions, BillingModeSummary,
-- ProvisionedThroughput, GlobalSecondaryIndexes, LocalSecondaryIndexes)
-- with overrides (RestoreTableFromBackup's and RestoreTableToPointInTime's
-- *Override members: the request itself will do), and starts the job that
-- writes SELECT item FROM items_function(items_argument) into it (natural
-- items, as ddb.put_item takes them; items_function takes one jsonb and
-- returns SETOF jsonb, and is called by the job with the privileges of the
-- caller) and then makes it ACTIVE.  restore_summary is the RestoreSummary
-- DescribeTable will show: SourceTableArn, RestoreDateTime (epoch
-- seconds), SourceBackupArn if any (and SourceHistory: the OID of the
-- point-in-time recovery history the items come from, which no
-- DeleteTable or trim removes meanwhile).  Returns the new table's
-- TableDescription.  TableAlreadyExistsException (YD023) or
-- TableInUseException (YD024) when the name is taken, LimitExceededException
-- when no background worker is free.  The caller authorizes: it checks
-- nothing but what CreateTable checks.
CREATE FUNCTION ddb.start_restore(target_table text, source_description jsonb, overrides jsonb,
                                  items_function regprocedure, items_argument jsonb,
                                  restore_summary jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    job integer;
BEGIN
    PERFORM ddb.check_name('targetTableName', target_table);
    IF NOT EXISTS (SELECT FROM pg_proc p WHERE p.oid = items_function AND p.pronargs = 1 AND p.proretset
                                         AND p.proargtypes[0] = 'jsonb'::regtype AND p.prorettype = 'jsonb'::regtype) THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('the items function of a restore takes one jsonb and returns SETOF jsonb, not %s', items_function);
    END IF;
    IF restore_summary->>'SourceTableArn' IS NULL OR jsonb_typeof(restore_summary->'RestoreDateTime') IS DISTINCT FROM 'number' THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'the restore summary of a restore has a SourceTableArn and a RestoreDateTime (epoch seconds)';
    END IF;
    -- one creation of a name at a time, as ddb.create_table takes it
    PERFORM ddb.lock_table_name(target_table);
    PERFORM ddb.refuse_restoring(target_table, 'YD024', 'Table is being restored: %s');
    IF EXISTS (SELECT FROM ddb.tables t WHERE t.table_name = target_table) THEN
        RAISE EXCEPTION USING ERRCODE = 'YD023', MESSAGE = 'Table already exists: ' || target_table;
    END IF;
    PERFORM ddb.api_create_table(ddb.restored_table_request(target_table, source_description, coalesce(overrides, '{}')));
    job := ddb.start_job('restore', jsonb_build_object('TableName', target_table, 'ItemsFunction', items_function::text,
                                                       'ItemsArgument', items_argument));
    PERFORM ddb.record_restore(target_table, job, restore_summary);
    RETURN ddb.describe_table(target_table) || ddb.restore_description(target_table);
END $$;

-- The restore job (a step of kind 'restore', as the restoring role): every
-- item, then the table ACTIVE, in one transaction (ddb.restore_items).
CREATE FUNCTION ddb.job_restore(job_id integer, spec jsonb, progress jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN jsonb_build_object('done', true, 'items', ddb.restore_items(
        spec->>'TableName', (spec->>'ItemsFunction')::regprocedure, spec->'ItemsArgument'));
END $$;

-- A failed restore's table goes (when it is still the one the job was filling).
CREATE FUNCTION ddb.job_restore_failed(job_id integer, spec jsonb, error text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM ddb.table_restores r
               WHERE r.table_name = spec->>'TableName' AND r.job_id = job_restore_failed.job_id AND r.in_progress) THEN
        PERFORM ddb.delete_table(spec->>'TableName');
    END IF;
END $$;

-- RestoreTableFromBackup: a new table from a backup, with DynamoDB's
-- overrides; takes CreateTable's privilege and the right to read the
-- backup (docs/security.md).
CREATE FUNCTION ddb.api_restore_table_from_backup(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    target text := request->>'TargetTableName';
    b ddb.backups;
BEGIN
    IF target IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''targetTableName'' failed to satisfy constraint: Member must not be null');
    END IF;
    PERFORM ddb.check_name('targetTableName', target);
    b := ddb.require_backup(request->>'BackupArn');
    PERFORM ddb.check_table_access(target, 'RestoreTableFromBackup', 'create');
    PERFORM ddb.require_backup_access(b, 'RestoreTableFromBackup', 'read');
    -- its relation held: no DeleteBackup meanwhile (and once this commits,
    -- the restore is in progress); a lock its reader may take, where a lock
    -- of the catalog's row is not
    EXECUTE format('LOCK TABLE ddb_backups.%I IN ACCESS SHARE MODE', b.relation_name);
    b := ddb.require_backup(b.backup_arn);
    RETURN jsonb_build_object('TableDescription', ddb.start_restore(
        target, b.description, request, 'ddb.backup_items(jsonb)'::regprocedure,
        jsonb_build_object('BackupArn', b.backup_arn),
        jsonb_build_object('SourceBackupArn', b.backup_arn, 'SourceTableArn', b.table_arn,
                           'RestoreDateTime', extract(epoch FROM b.created_at))));
END $$;
