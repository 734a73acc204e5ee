-- ---------------------------------------------------------------------------
-- On-demand backups (docs/backups.md): CreateBackup, DescribeBackup,
-- ListBackups, DeleteBackup.  A backup is a relation of its own in schema
-- ddb_backups, named by the backup's id, holding the table's items (natural
-- jsonb and their sizes) as one statement's snapshot saw them (MVCC: the
-- copy blocks no writer), and a row of ddb.backups holding the table's
-- description at that moment (key schema, attribute types, indexes, TTL,
-- stream, billing).  The relation is its creator's: whoever may read it may
-- describe, list and restore the backup; its owner may delete it.  Backups
-- outlive their table.  Restoring one is sql/restore.sql's.
-- ---------------------------------------------------------------------------

CREATE SCHEMA ddb_backups;
COMMENT ON SCHEMA ddb_backups IS 'Items of DynamoDB backups (ddb_model): one relation per backup, named by its id';
GRANT USAGE ON SCHEMA ddb_backups TO PUBLIC;

CREATE TABLE ddb.backups (
    backup_arn text PRIMARY KEY,        -- <table ARN>/backup/<id>
    backup_name text NOT NULL,
    table_name text NOT NULL,           -- the table it was taken of (which may since be gone)
    table_arn text NOT NULL,
    table_id uuid NOT NULL,
    relation_name name NOT NULL UNIQUE, -- ddb_backups.<relation_name> holds the items: the backup's id
    created_at timestamptz NOT NULL,
    size_bytes bigint NOT NULL,
    item_count bigint NOT NULL,
    description jsonb NOT NULL          -- the table's TableDescription at that moment, with its TimeToLiveDescription
);
COMMENT ON TABLE ddb.backups IS 'On-demand backups: name, table, size, and the table''s description when it was taken';
SELECT pg_catalog.pg_extension_config_dump('ddb.backups', '');
-- names and sizes are no secret to SQL users, as ddb.tables' are not
GRANT SELECT ON ddb.backups TO PUBLIC;

-- A backup's ARN: its table's, /backup/, its id.
CREATE FUNCTION ddb.backup_arn(table_name text, backup_id text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ddb.table_arn(table_name) || '/backup/' || backup_id;

-- Raises AccessDeniedException unless the current user may 'read' (SELECT)
-- or 'own' a backup's relation; resource is the backup's ARN after the
-- table ARN's prefix (<table>/backup/<id>), as the refusal names it.
CREATE FUNCTION ddb.check_backup_access(relation regclass, resource text, action text, access text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_check_backup_access' LANGUAGE C VOLATILE STRICT;

-- Checks the current user's access to a backup for an action (see ddb.check_backup_access).
CREATE FUNCTION ddb.require_backup_access(b ddb.backups, action text, access text) RETURNS void
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
RETURN ddb.check_backup_access(format('ddb_backups.%I', b.relation_name)::regclass,
                               b.table_name || '/backup/' || b.relation_name, action, access);

-- The TableName of CreateBackup and ListBackups, which may also be the table's ARN, checked as a name.
CREATE FUNCTION ddb.backup_table_name(value text) RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text := coalesce(ddb.arn_table_name(value), value);
BEGIN
    PERFORM ddb.check_name('tableName', name);
    RETURN name;
END $$;

-- The backup a BackupArn names, or BackupNotFoundException (YD020); the
-- ARN checked as DynamoDB checks it first.
CREATE FUNCTION ddb.require_backup(arn text) RETURNS ddb.backups
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b ddb.backups;
BEGIN
    IF arn IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''backupArn'' failed to satisfy constraint: Member must not be null');
    END IF;
    IF length(arn) NOT BETWEEN 37 AND 1024 THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''backupArn'' failed to satisfy constraint: Member must have length %s',
            arn, CASE WHEN length(arn) < 37 THEN 'greater than or equal to 37' ELSE 'less than or equal to 1024' END));
    END IF;
    SELECT * INTO b FROM ddb.backups WHERE backup_arn = arn;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD020', MESSAGE = 'Backup not found: ' || arn;
    END IF;
    RETURN b;
END $$;

-- A backup's BackupDetails (status AVAILABLE, or as given).
CREATE FUNCTION ddb.backup_details(b ddb.backups, status text DEFAULT 'AVAILABLE') RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN jsonb_build_object('BackupArn', b.backup_arn, 'BackupName', b.backup_name,
                          'BackupSizeBytes', b.size_bytes, 'BackupStatus', status, 'BackupType', 'USER',
                          'BackupCreationDateTime', extract(epoch FROM b.created_at));

-- A backup's BackupDescription: its details, and its table's details and
-- features as they were (SourceTableDetails, SourceTableFeatureDetails).
CREATE FUNCTION ddb.backup_description(b ddb.backups, status text DEFAULT 'AVAILABLE') RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN jsonb_build_object(
    'BackupDetails', ddb.backup_details(b, status),
    'SourceTableDetails', jsonb_strip_nulls(jsonb_build_object(
        'TableName', b.table_name, 'TableId', b.table_id, 'TableArn', b.table_arn,
        'TableSizeBytes', b.size_bytes, 'ItemCount', b.item_count,
        'KeySchema', b.description->'KeySchema',
        'TableCreationDateTime', b.description->'CreationDateTime',
        'ProvisionedThroughput', (b.description->'ProvisionedThroughput') - 'NumberOfDecreasesToday',
        'OnDemandThroughput', b.description->'OnDemandThroughput',
        'BillingMode', b.description->'BillingModeSummary'->'BillingMode')),
    'SourceTableFeatureDetails', jsonb_strip_nulls(jsonb_build_object(
        'LocalSecondaryIndexes', (SELECT jsonb_agg(jsonb_build_object('IndexName', i->'IndexName', 'KeySchema', i->'KeySchema',
                                                                      'Projection', i->'Projection'))
                                  FROM jsonb_array_elements(b.description->'LocalSecondaryIndexes') i),
        'GlobalSecondaryIndexes', (SELECT jsonb_agg(jsonb_build_object('IndexName', i->'IndexName', 'KeySchema', i->'KeySchema',
                                                                       'Projection', i->'Projection',
                                                                       'ProvisionedThroughput',
                                                                       (i->'ProvisionedThroughput') - 'NumberOfDecreasesToday'))
                                   FROM jsonb_array_elements(b.description->'GlobalSecondaryIndexes') i),
        'StreamDescription', b.description->'StreamSpecification',
        'TimeToLiveDescription', b.description->'TimeToLiveDescription',
        'SSEDescription', b.description->'SSEDescription')));

-- CreateBackup: the table's items as one snapshot sees them, copied into a
-- relation of the backup's own, and its description.  Takes ownership of
-- the table (docs/security.md), whose relation it locks SHARE UPDATE
-- EXCLUSIVE (the owner's to take, where a lock of the catalog's row is
-- not), so that no DeleteTable, no index added or removed and no
-- point-in-time recovery turned on changes it meanwhile, while writers go on.
CREATE FUNCTION ddb.api_create_backup(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text;
    t ddb.tables;
    id text := lpad(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint::text, 14, '0')
               || '-' || left(replace(gen_random_uuid()::text, '-', ''), 8);
    stats record;
    b ddb.backups;
BEGIN
    IF request->>'TableName' IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tableName'' failed to satisfy constraint: Member must not be null');
    END IF;
    IF request->>'BackupName' IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''backupName'' failed to satisfy constraint: Member must not be null');
    END IF;
    name := ddb.backup_table_name(request->>'TableName');
    PERFORM ddb.check_name('backupName', request->>'BackupName');
    IF NOT EXISTS (SELECT FROM ddb.tables WHERE table_name = name) THEN
        RAISE EXCEPTION USING ERRCODE = 'YD022', MESSAGE = 'Table not found: ' || name;
    END IF;
    PERFORM ddb.check_table_access(name, 'CreateBackup', 'own');
    PERFORM ddb.refuse_restoring(name, 'YD024', 'Table is being restored: %s');
    SELECT * INTO t FROM ddb.tables WHERE table_name = name;
    IF FOUND THEN
        EXECUTE format('LOCK TABLE %I.%I IN SHARE UPDATE EXCLUSIVE MODE', t.schema_name, t.relation_name);
        SELECT * INTO t FROM ddb.tables WHERE table_name = name;
    END IF;
    IF NOT FOUND THEN   -- deleted meanwhile (or with its restore, which had lost its worker)
        RAISE EXCEPTION USING ERRCODE = 'YD022', MESSAGE = 'Table not found: ' || name;
    END IF;
    -- one statement, one snapshot: the items as they were when it began (expired ones are no longer items)
    EXECUTE format('CREATE TABLE ddb_backups.%I AS SELECT item, item_size FROM %I.%I WHERE ddb.ttl_visible(expires_at)',
                   id, t.schema_name, t.relation_name);
    EXECUTE format('COMMENT ON TABLE ddb_backups.%I IS %L', id,
                   format('Items of DynamoDB backup %s of table %s (ddb_model)', request->>'BackupName', name));
    EXECUTE format('SELECT count(*) AS items, coalesce(sum(item_size), 0) AS bytes FROM ddb_backups.%I', id) INTO stats;
    INSERT INTO ddb.backups (backup_arn, backup_name, table_name, table_arn, table_id, relation_name, created_at,
                             size_bytes, item_count, description)
    VALUES (ddb.backup_arn(name, id), request->>'BackupName', name, ddb.table_arn(name), ddb.table_id(t), id,
            clock_timestamp(), stats.bytes, stats.items,
            ddb.describe_table(name) || jsonb_build_object('ItemCount', stats.items, 'TableSizeBytes', stats.bytes)
            || (ddb.api_describe_time_to_live(jsonb_build_object('TableName', name))))
    RETURNING * INTO b;
    RETURN jsonb_build_object('BackupDetails', ddb.backup_details(b));
END $$;

-- DescribeBackup: for whoever may read the backup.
CREATE FUNCTION ddb.api_describe_backup(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b ddb.backups := ddb.require_backup(request->>'BackupArn');
BEGIN
    PERFORM ddb.require_backup_access(b, 'DescribeBackup', 'read');
    RETURN jsonb_build_object('BackupDescription', ddb.backup_description(b));
END $$;

-- A bound of ListBackups' TimeRange (epoch seconds), or NULL when absent.
CREATE FUNCTION ddb.backup_time_bound(request jsonb, member text) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF request->member IS NULL OR jsonb_typeof(request->member) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(request->member) <> 'number' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006',
            MESSAGE = format('Unexpected value type in payload for %s: expected a timestamp in seconds', member);
    END IF;
    RETURN to_timestamp((request->>member)::double precision);
END $$;

-- ListBackups: the backups the caller may read, in ARN order, filtered by
-- TableName, TimeRangeLowerBound (inclusive) and TimeRangeUpperBound
-- (exclusive) and BackupType (on-demand backups are USER; SYSTEM and
-- AWS_BACKUP list none), paged by Limit and ExclusiveStartBackupArn.
CREATE FUNCTION ddb.api_list_backups(request jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    page_size int := ddb.request_limit(request, 100, 100);
    backup_type text := coalesce(request->>'BackupType', 'USER');
    name text;
    lower_bound timestamptz := ddb.backup_time_bound(request, 'TimeRangeLowerBound');
    upper_bound timestamptz := ddb.backup_time_bound(request, 'TimeRangeUpperBound');
    summaries jsonb[];
BEGIN
    IF backup_type NOT IN ('USER', 'SYSTEM', 'AWS_BACKUP', 'ALL') THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''backupType'' failed to satisfy constraint: Member must satisfy enum value set: [USER, SYSTEM, AWS_BACKUP, ALL]',
            backup_type));
    END IF;
    IF request->>'TableName' IS NOT NULL THEN
        name := ddb.backup_table_name(request->>'TableName');
    END IF;
    SELECT array_agg(s ORDER BY arn COLLATE "C") INTO summaries
    FROM (SELECT b.backup_arn AS arn,
                 jsonb_build_object('TableName', b.table_name, 'TableId', b.table_id, 'TableArn', b.table_arn)
                 || ddb.backup_details(b) AS s
          FROM ddb.backups b
          WHERE backup_type IN ('USER', 'ALL')
            AND (name IS NULL OR b.table_name = name)
            AND (lower_bound IS NULL OR b.created_at >= lower_bound)
            AND (upper_bound IS NULL OR b.created_at < upper_bound)
            AND (request->>'ExclusiveStartBackupArn' IS NULL
                 OR b.backup_arn COLLATE "C" > (request->>'ExclusiveStartBackupArn') COLLATE "C")
            AND ddb.table_privilege('ddb_backups', b.relation_name, 'SELECT')
          ORDER BY b.backup_arn COLLATE "C" LIMIT page_size + 1) page;
    summaries := coalesce(summaries, '{}');
    IF cardinality(summaries) > page_size THEN
        RETURN jsonb_build_object('BackupSummaries', to_jsonb(summaries[1:page_size]),
                                  'LastEvaluatedBackupArn', summaries[page_size]->>'BackupArn');
    END IF;
    RETURN jsonb_build_object('BackupSummaries', to_jsonb(summaries));
END $$;

-- DeleteBackup: for the backup's owner; BackupInUseException while a
-- restore from it runs.
CREATE FUNCTION ddb.api_delete_backup(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b ddb.backups := ddb.require_backup(request->>'BackupArn');
BEGIN
    PERFORM ddb.require_backup_access(b, 'DeleteBackup', 'own');
    -- its relation locked: a restore request reading the backup (which
    -- holds it ACCESS SHARE) is waited for, and a later one waits
    EXECUTE format('LOCK TABLE ddb_backups.%I IN ACCESS EXCLUSIVE MODE', b.relation_name);
    b := ddb.require_backup(b.backup_arn);
    IF EXISTS (SELECT FROM ddb.table_restores r
               WHERE r.source_backup_arn = b.backup_arn AND r.in_progress AND ddb.restore_running(r.table_name)) THEN
        RAISE EXCEPTION USING ERRCODE = 'YD021',
            MESSAGE = format('Backup is in use: a restore from %s is in progress', b.backup_arn);
    END IF;
    EXECUTE format('DROP TABLE ddb_backups.%I', b.relation_name);
    DELETE FROM ddb.backups WHERE backup_arn = b.backup_arn;
    RETURN jsonb_build_object('BackupDescription', ddb.backup_description(b, 'DELETED'));
END $$;

-- The items of a backup, for a restore (ddb.start_restore's items function):
-- argument {"BackupArn": ...}; read as the restoring role, who must be able
-- to read the backup.
CREATE FUNCTION ddb.backup_items(argument jsonb) RETURNS SETOF jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b ddb.backups := ddb.require_backup(argument->>'BackupArn');
BEGIN
    RETURN QUERY EXECUTE format('SELECT item FROM ddb_backups.%I', b.relation_name);
END $$;
