-- ---------------------------------------------------------------------------
-- Point-in-time recovery (docs/pitr.md): UpdateContinuousBackups,
-- DescribeContinuousBackups, RestoreTableToPointInTime.
--
-- A table with point-in-time recovery keeps every committed version of its
-- items in a history relation beside it, <schema>."<relation>$pitr": the
-- key (pk, and sk when the table has a sort key), changed_at (the time of
-- the writing transaction, one per transaction, in commit order for any
-- one item), change_order (the change's order within its transaction),
-- item (NULL for a delete) and item_size.  The trigger ddb_pitr
-- (ddb.pitr_capture, src/table/pitr_capture.c) collects a transaction's
-- changes and writes them when it commits.  Enabling copies the table's
-- items in as the first versions; ddb.trim_pitr_history collapses what the
-- window leaves behind; disabling, and DeleteTable, drop the history.
-- ---------------------------------------------------------------------------

CREATE TABLE ddb.continuous_backups (
    table_name text PRIMARY KEY REFERENCES ddb.tables ON DELETE CASCADE,
    history_relation name NOT NULL,     -- in the table's schema
    recovery_period_days integer NOT NULL CHECK (recovery_period_days BETWEEN 1 AND 35),
    enabled_at timestamptz NOT NULL,    -- the time of the first versions: the earliest restorable one, until the window passes it
    history_from timestamptz            -- how far ddb.trim_pitr_history has collapsed the history: nothing before is restorable
);
COMMENT ON TABLE ddb.continuous_backups IS 'Point-in-time recovery: the tables that have it, their history relation and recovery period';
SELECT pg_catalog.pg_extension_config_dump('ddb.continuous_backups', '');

-- The name of a table's history relation, beside it in its schema.
CREATE FUNCTION ddb.pitr_history_name(relation_name name) RETURNS name
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ddb.relation_name(relation_name || '$pitr');

-- Collects a change of an item of a table with point-in-time recovery,
-- written when its transaction commits: the trigger ddb_pitr (arguments:
-- the table's DynamoDB name, its history relation).
CREATE FUNCTION ddb.pitr_capture() RETURNS trigger
    AS 'MODULE_PATHNAME', 'ddb_pitr_capture' LANGUAGE C;
REVOKE ALL ON FUNCTION ddb.pitr_capture() FROM PUBLIC;

-- Refuses a TRUNCATE of a table with point-in-time recovery (the trigger
-- ddb_pitr_truncate): it fires no row trigger, so no version would record it.
CREATE FUNCTION ddb.pitr_refuse_truncate() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'feature_not_supported',
        MESSAGE = 'TRUNCATE of a table with point-in-time recovery on would not be recorded; '
                  'delete its items or disable point-in-time recovery first',
        DETAIL = format('Table %s (relation %s.%s).', TG_ARGV[0], TG_TABLE_SCHEMA, TG_TABLE_NAME);
END $$;
REVOKE ALL ON FUNCTION ddb.pitr_refuse_truncate() FROM PUBLIC;

-- Waits until the transactions committing versions of a table are done:
-- each holds the table's PITR lock shared from before it reads its time
-- until its commit is over (src/table/pitr_capture.c), so that a snapshot
-- taken afterwards sees every version of a time up to now.  For a role
-- that may read the table; it takes no lock, so it stalls no writer (the
-- lock is one of the server's own, src/ddb_locks.h: no SQL takes it).
CREATE FUNCTION ddb.pitr_settle(table_name text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_pitr_settle' LANGUAGE C VOLATILE STRICT;

-- The table a request names in member (TableName, SourceTableName: a name
-- or a table's ARN), or DynamoDB's TableNotFoundException (YD022).
CREATE FUNCTION ddb.pitr_table(name text, member text) RETURNS ddb.tables
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
BEGIN
    IF name IS NULL THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value null at ''%s'' failed to satisfy constraint: Member must not be null', member));
    END IF;
    IF length(name) NOT BETWEEN 1 AND 1024 THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''%s'' failed to satisfy constraint: Member must have length %s',
            name, member, CASE WHEN name = '' THEN 'greater than or equal to 1' ELSE 'less than or equal to 1024' END));
    END IF;
    SELECT * INTO t FROM ddb.tables
    WHERE tables.table_name = coalesce(ddb.arn_table_name(name), name);
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD022', MESSAGE = 'Table not found: ' || name;
    END IF;
    RETURN t;
END $$;

-- The window of a table with point-in-time recovery at a moment (as_of):
-- from its first versions, the recovery period back, or the moment its
-- history was trimmed to (the latest of the three), to as_of.
CREATE FUNCTION ddb.pitr_window(c ddb.continuous_backups, as_of timestamptz, OUT earliest timestamptz, OUT latest timestamptz)
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT greatest(c.enabled_at, c.history_from, as_of - make_interval(days => c.recovery_period_days)), as_of;
END;

-- Writes a table's row of ddb.continuous_backups as the catalog's owner,
-- for the table's owner, computing what it can (src/table/table_access.c):
-- a new row's history relation is the table's own (which must be there)
-- and its enabled_at now, returned (the time of the first versions); a row
-- already there takes the recovery period alone; a NULL period deletes it.
CREATE FUNCTION ddb.write_continuous_backups(table_name text, recovery_period_days integer) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'ddb_write_continuous_backups' LANGUAGE C VOLATILE;

-- Records, as the catalog's owner, that ddb.trim_pitr_history collapsed a
-- table's history to the start of its window as of a moment (no later
-- than now), which it computes: the table owner's, history_from never goes back.
CREATE FUNCTION ddb.trim_continuous_backups(table_name text, as_of timestamptz) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_trim_continuous_backups' LANGUAGE C VOLATILE STRICT;

-- Turns a table's point-in-time recovery on (or sets its recovery period,
-- 1 to 35 days, when it is on) or off (dropping its history).  Turning it
-- on copies the table's items into the new history as versions of this
-- moment, with the table locked against writes until the transaction ends.
CREATE FUNCTION ddb.set_continuous_backups(table_name text, enabled boolean, recovery_period_days integer DEFAULT 35)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.require_table(table_name);
    history name := ddb.pitr_history_name(t.relation_name);
    key_columns text := CASE WHEN t.range_key IS NOT NULL THEN 'pk, sk' ELSE 'pk' END;
    enabled_at timestamptz;
    c ddb.continuous_backups;
BEGIN
    IF enabled IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled'' failed to satisfy constraint: Member must not be null');
    END IF;
    IF recovery_period_days IS NULL OR recovery_period_days NOT BETWEEN 1 AND 35 THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''pointInTimeRecoverySpecification.recoveryPeriodInDays'' failed to satisfy constraint: Member must have value %s',
            recovery_period_days, CASE WHEN recovery_period_days > 35 THEN 'less than or equal to 35' ELSE 'greater than or equal to 1' END));
    END IF;
    IF NOT enabled THEN
        PERFORM ddb.drop_pitr_history(t.table_name);
        RETURN;
    END IF;
    -- the first versions are the items as this statement sees them: a
    -- snapshot older than the lock below could miss a write committed before it
    IF current_setting('transaction_isolation') <> 'read committed'
       AND NOT EXISTS (SELECT FROM ddb.continuous_backups b WHERE b.table_name = t.table_name) THEN
        RAISE EXCEPTION USING ERRCODE = '0A000',
            MESSAGE = 'point-in-time recovery can only be enabled in a READ COMMITTED transaction',
            DETAIL = format('This transaction is %s.', current_setting('transaction_isolation'));
    END IF;
    -- one change of a table's point-in-time recovery at a time (the lock is
    -- the table owner's to take, where a lock of the catalog's row is not);
    -- writers wait from here until the history and its trigger are in place
    EXECUTE format('LOCK TABLE %I.%I IN SHARE ROW EXCLUSIVE MODE', t.schema_name, t.relation_name);
    SELECT * INTO c FROM ddb.continuous_backups b WHERE b.table_name = t.table_name;
    IF FOUND THEN
        PERFORM ddb.write_continuous_backups(t.table_name, recovery_period_days);
        RETURN;
    END IF;
    EXECUTE format('CREATE TABLE %I.%I (pk ddb.ddb_key NOT NULL, %s changed_at timestamptz NOT NULL, '
                   'change_order integer NOT NULL, item jsonb, item_size integer)',
                   t.schema_name, history, CASE WHEN t.range_key IS NOT NULL THEN 'sk ddb.ddb_key NOT NULL,' ELSE '' END);
    -- no btree: a version is written by a heap insertion alone (a btree on
    -- the key was most of a version's cost); restores and trims sort the
    -- history, and a BRIN index finds a span of time
    EXECUTE format('CREATE INDEX %I ON %I.%I USING brin (changed_at)',
                   ddb.relation_name(history || '$changed_at'), t.schema_name, history);
    EXECUTE format('COMMENT ON TABLE %I.%I IS %L', t.schema_name, history,
                   'Point-in-time recovery history of DynamoDB table ' || t.table_name
                   || ' (ddb_model): its items'' versions, written at commit by the trigger ddb_pitr');
    -- the catalog's row, now that the history is there: its enabled_at is the first versions' time
    enabled_at := ddb.write_continuous_backups(t.table_name, recovery_period_days);
    EXECUTE format('INSERT INTO %I.%I (%s, changed_at, change_order, item, item_size) SELECT %s, $1, 0, item, item_size FROM %I.%I',
                   t.schema_name, history, key_columns, key_columns, t.schema_name, t.relation_name)
    USING enabled_at;
    PERFORM ddb.attach_trigger(t.table_name, 'ddb_pitr');
    PERFORM ddb.attach_trigger(t.table_name, 'ddb_pitr_truncate');
    -- the table's readers read its history too (sql/security.sql)
    PERFORM ddb.apply_table_grants(t.table_name);
END $$;

-- Drops a table's point-in-time recovery, if it has it: its trigger, its
-- history and its catalog row (disabling it; DeleteTable).
CREATE FUNCTION ddb.drop_pitr_history(table_name text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.require_table(table_name);
    c ddb.continuous_backups;
BEGIN
    SELECT * INTO c FROM ddb.continuous_backups WHERE continuous_backups.table_name = t.table_name;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- a restore in progress reads it: refused (after waiting for a restore
    -- request reading it to commit, which holds the table)
    EXECUTE format('LOCK TABLE %I.%I IN SHARE ROW EXCLUSIVE MODE', t.schema_name, t.relation_name);
    IF ddb.history_in_use(format('%I.%I', t.schema_name, c.history_relation)::regclass) THEN
        RAISE EXCEPTION USING ERRCODE = 'YD005',
            MESSAGE = 'Attempt to change a resource which is still in use: a restore in progress reads the point-in-time recovery history of table ' || t.table_name;
    END IF;
    EXECUTE format('DROP TRIGGER ddb_pitr ON %I.%I', t.schema_name, t.relation_name);
    EXECUTE format('DROP TRIGGER ddb_pitr_truncate ON %I.%I', t.schema_name, t.relation_name);
    EXECUTE format('DROP TABLE %I.%I', t.schema_name, c.history_relation);
    PERFORM ddb.write_continuous_backups(t.table_name, NULL::integer);
END $$;

-- A table's ContinuousBackupsDescription (DescribeContinuousBackups,
-- UpdateContinuousBackups): the window ends at the current time.
CREATE FUNCTION ddb.continuous_backups_description(table_name text) RETURNS jsonb
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
RETURN jsonb_build_object(
    'ContinuousBackupsStatus', 'ENABLED',
    'PointInTimeRecoveryDescription',
    coalesce((SELECT jsonb_build_object('PointInTimeRecoveryStatus', 'ENABLED',
                                        'RecoveryPeriodInDays', c.recovery_period_days,
                                        'EarliestRestorableDateTime', extract(epoch FROM w.earliest),
                                        'LatestRestorableDateTime', extract(epoch FROM w.latest))
              FROM ddb.continuous_backups c, ddb.pitr_window(c, clock_timestamp()) w
              WHERE c.table_name = continuous_backups_description.table_name),
             '{"PointInTimeRecoveryStatus": "DISABLED"}'));

-- UpdateContinuousBackups: PointInTimeRecoverySpecification's
-- PointInTimeRecoveryEnabled and RecoveryPeriodInDays (1 to 35, 35 when not given).
CREATE FUNCTION ddb.api_update_continuous_backups(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    spec jsonb := nullif(request->'PointInTimeRecoverySpecification', 'null');
    enabled jsonb := nullif(spec->'PointInTimeRecoveryEnabled', 'null');
    days jsonb := nullif(spec->'RecoveryPeriodInDays', 'null');
    broken text[] := '{}';
    t ddb.tables;
BEGIN
    IF nullif(request->'TableName', 'null') IS NULL THEN
        broken := broken || 'Value null at ''tableName'' failed to satisfy constraint: Member must not be null'::text;
    END IF;
    IF spec IS NULL THEN
        broken := broken || 'Value null at ''pointInTimeRecoverySpecification'' failed to satisfy constraint: Member must not be null'::text;
    ELSIF jsonb_typeof(spec) <> 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006',
            MESSAGE = 'Unexpected value type in payload for PointInTimeRecoverySpecification: expected an object';
    ELSE
        IF enabled IS NULL THEN
            broken := broken || 'Value null at ''pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled'' failed to satisfy constraint: Member must not be null'::text;
        ELSIF jsonb_typeof(enabled) <> 'boolean' THEN
            RAISE EXCEPTION USING ERRCODE = 'YD006',
                MESSAGE = 'Unexpected value type in payload for PointInTimeRecoveryEnabled: expected a boolean';
        END IF;
        IF days IS NOT NULL AND (jsonb_typeof(days) <> 'number' OR days::numeric <> trunc(days::numeric)) THEN
            RAISE EXCEPTION USING ERRCODE = 'YD006',
                MESSAGE = 'Unexpected value type in payload for RecoveryPeriodInDays: expected an integer';
        ELSIF days::numeric NOT BETWEEN 1 AND 35 THEN
            broken := broken || format('Value ''%s'' at ''pointInTimeRecoverySpecification.recoveryPeriodInDays'' failed to satisfy constraint: Member must have value %s',
                                       days, CASE WHEN days::numeric > 35 THEN 'less than or equal to 35' ELSE 'greater than or equal to 1' END);
        END IF;
    END IF;
    IF cardinality(broken) > 0 THEN
        PERFORM ddb.validation_error(format('%s validation error%s detected: %s', cardinality(broken),
            CASE WHEN cardinality(broken) > 1 THEN 's' ELSE '' END, array_to_string(broken, '; ')));
    END IF;
    t := ddb.pitr_table(request->>'TableName', 'tableName');
    PERFORM ddb.check_table_access(t.table_name, 'UpdateContinuousBackups', 'own');
    IF t.model IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'YD030',
            MESSAGE = format('Backups are not available for table %s: it belongs to the %s model, installed with the extension',
                             t.table_name, t.model);
    END IF;
    -- DynamoDB's answer while a table is CREATING (here: being restored, sql/restore.sql)
    PERFORM ddb.refuse_restoring(t.table_name, 'YD030', 'Backups are being enabled for the table: %s. Please retry later');
    PERFORM ddb.set_continuous_backups(t.table_name, enabled::boolean, coalesce(days::numeric::integer, 35));
    RETURN jsonb_build_object('ContinuousBackupsDescription', ddb.continuous_backups_description(t.table_name));
END $$;

-- DescribeContinuousBackups.
CREATE FUNCTION ddb.api_describe_continuous_backups(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.pitr_table(request->>'TableName', 'tableName');
BEGIN
    PERFORM ddb.check_table_access(t.table_name, 'DescribeContinuousBackups', 'read');
    RETURN jsonb_build_object('ContinuousBackupsDescription', ddb.continuous_backups_description(t.table_name));
END $$;

-- The point-in-time recovery of a table, or PointInTimeRecoveryUnavailableException
-- (YD031) for a table without it.
CREATE FUNCTION ddb.continuous_backups_of(t ddb.tables) RETURNS ddb.continuous_backups
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c ddb.continuous_backups;
BEGIN
    SELECT * INTO c FROM ddb.continuous_backups WHERE continuous_backups.table_name = t.table_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD031',
            MESSAGE = format('Point in time recovery is not enabled for table ''%s''', t.table_name);
    END IF;
    RETURN c;
END $$;

-- The point-in-time recovery of a table, checked for a moment of its
-- window (which ends at the current time): PointInTimeRecoveryUnavailableException
-- (YD031) for a table without it, InvalidRestoreTimeException (YD032) for a moment outside.
CREATE FUNCTION ddb.pitr_of(t ddb.tables, as_of timestamptz) RETURNS ddb.continuous_backups
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c ddb.continuous_backups;
    w record;
BEGIN
    c := ddb.continuous_backups_of(t);
    SELECT * INTO w FROM ddb.pitr_window(c, clock_timestamp());
    IF as_of IS NULL OR as_of < w.earliest OR as_of > w.latest THEN
        RAISE EXCEPTION USING ERRCODE = 'YD032',
            MESSAGE = 'An invalid restore time was specified. RestoreDateTime must be between EarliestRestorableDateTime and LatestRestorableDateTime.',
            DETAIL = format('The window of table %s is %s to %s; the time given is %s.', t.table_name,
                            w.earliest, w.latest, coalesce(as_of::text, 'null'));
    END IF;
    RETURN c;
END $$;

-- The items a history relation held at a moment: per key, its latest
-- version at or before the moment, unless that is a delete.  In key order.
CREATE FUNCTION ddb.history_items(history regclass, as_of timestamptz)
RETURNS TABLE (pk ddb.ddb_key, sk ddb.ddb_key, item jsonb, item_size integer)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    key_columns text := CASE WHEN EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = history AND a.attname = 'sk'
                                                                        AND NOT a.attisdropped)
                             THEN 'pk, sk' ELSE 'pk' END;
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT v.pk, %s, v.item, v.item_size FROM '
        '(SELECT DISTINCT ON (%s) * FROM %s WHERE changed_at <= $1 ORDER BY %s, changed_at DESC, change_order DESC) v '
        'WHERE v.item IS NOT NULL',
        CASE WHEN key_columns = 'pk, sk' THEN 'v.sk' ELSE 'NULL::ddb.ddb_key' END, key_columns, history, key_columns)
    USING as_of;
END $$;

-- The OID of a table's point-in-time recovery history relation.
CREATE FUNCTION ddb.pitr_history(t ddb.tables, c ddb.continuous_backups) RETURNS regclass
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN format('%I.%I', t.schema_name, c.history_relation)::regclass;

-- The items of a table with point-in-time recovery as they were at a
-- moment of its window (ddb.history_items).
CREATE FUNCTION ddb.pitr_items(table_name text, as_of timestamptz)
RETURNS TABLE (pk ddb.ddb_key, sk ddb.ddb_key, item jsonb, item_size integer)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.pitr_table(table_name, 'tableName');
    c ddb.continuous_backups := ddb.pitr_of(t, as_of);
BEGIN
    RETURN QUERY SELECT * FROM ddb.history_items(ddb.pitr_history(t, c), as_of);
END $$;

-- True while a restore in progress reads a history relation (its
-- source_history); a restore whose worker is gone ends here.  (PL/pgSQL:
-- ddb.table_restores, of sql/restore.sql, is made after this file.)
CREATE FUNCTION ddb.history_in_use(history regclass) RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN EXISTS (SELECT FROM ddb.table_restores r
                   WHERE r.source_history = history::oid AND r.in_progress AND ddb.restore_running(r.table_name));
END $$;

-- Collapses the history of every table with point-in-time recovery to its
-- window as of a moment (now, by default): the versions older than the
-- window's start go, but for each key the one in force at the start, which
-- goes too when it is a delete; the window never reaches back before it
-- again (history_from).  Returns how many versions it removed; schedule it
-- like ddb.expire (docs/ttl.md, docs/pitr.md).  A moment to come is
-- refused: the windows would start after now.
CREATE FUNCTION ddb.trim_pitr_history(as_of timestamptz DEFAULT now()) RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c record;
    removed bigint := 0;
    n bigint;
BEGIN
    IF as_of IS NULL OR as_of > clock_timestamp() THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('the point-in-time recovery history cannot be trimmed as of %s, a moment to come',
                             coalesce(as_of::text, 'null'));
    END IF;
    FOR c IN SELECT b.*, t.schema_name, t.range_key, (ddb.pitr_window(b, as_of)).earliest AS window_start
             FROM ddb.continuous_backups b JOIN ddb.tables t USING (table_name)
             -- a history a restore in progress reads waits for the next trim
             WHERE NOT ddb.history_in_use(ddb.pitr_history(t, b)) LOOP
        -- per key, the versions up to the start, latest first: the first is in force then
        EXECUTE format(
            'DELETE FROM %I.%I h USING (SELECT ctid, changed_at, item IS NULL AS deleted, '
            'row_number() OVER (PARTITION BY %s ORDER BY changed_at DESC, change_order DESC) AS n '
            'FROM %I.%I WHERE changed_at <= $1) v '
            'WHERE h.ctid = v.ctid AND v.changed_at < $1 AND (v.n > 1 OR v.deleted)',
            c.schema_name, c.history_relation,
            CASE WHEN c.range_key IS NOT NULL THEN 'pk, sk' ELSE 'pk' END, c.schema_name, c.history_relation)
        USING c.window_start;
        GET DIAGNOSTICS n = ROW_COUNT;
        removed := removed + n;
        IF c.history_from IS NULL OR c.history_from < c.window_start THEN
            PERFORM ddb.trim_continuous_backups(c.table_name, as_of);
        END IF;
    END LOOP;
    RETURN removed;
END $$;

-- A time given as epoch seconds (a JSON number, as DynamoDB's SDKs send
-- one), to the microsecond (to_timestamp's double precision would round
-- the sixth decimal of a time such as EarliestRestorableDateTime).
CREATE FUNCTION ddb.epoch_timestamp(seconds numeric) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN to_timestamp(floor(seconds)::double precision)
       + round((seconds - floor(seconds)) * 1000000)::bigint * interval '1 microsecond';

-- The items of a table at a moment, for a restore (ddb.start_restore's
-- items function): argument {"History": the OID of its history relation,
-- "RestoreTime": timestamptz as text}.  The request checked the moment
-- against the window; the job reads that history, whatever the window
-- or the table's name have become since (no DeleteTable nor trim removes
-- it meanwhile: ddb.history_in_use).
CREATE FUNCTION ddb.pitr_restore_items(argument jsonb) RETURNS SETOF jsonb
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT item FROM ddb.history_items((argument->>'History')::oid::regclass, (argument->>'RestoreTime')::timestamptz);
END;

-- RestoreTableToPointInTime: a new table (TargetTableName) with the items
-- the source (SourceTableName or SourceTableArn) held at RestoreDateTime
-- (epoch seconds) or, with UseLatestRestorableTime, now; its indexes are
-- the source's, with the overrides DynamoDB takes (ddb.start_restore).
-- Reads the source and takes CreateTable's privilege (docs/security.md).
CREATE FUNCTION ddb.api_restore_table_to_point_in_time(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    target text := request->>'TargetTableName';
    source_name text := coalesce(request->>'SourceTableName', request->>'SourceTableArn');
    restore_time jsonb := nullif(request->'RestoreDateTime', 'null');
    latest jsonb := nullif(request->'UseLatestRestorableTime', 'null');
    t ddb.tables;
    restore_at timestamptz;
    history regclass;
BEGIN
    IF target IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''targetTableName'' failed to satisfy constraint: Member must not be null');
    END IF;
    PERFORM ddb.check_name('targetTableName', target);
    IF request ? 'SourceTableName' AND request ? 'SourceTableArn' THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: Only one of SourceTableName or SourceTableArn can be specified');
    END IF;
    IF source_name IS NULL THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: Either SourceTableName or SourceTableArn must be specified');
    END IF;
    IF latest IS NOT NULL AND jsonb_typeof(latest) <> 'boolean' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = 'Unexpected value type in payload for UseLatestRestorableTime: expected a boolean';
    END IF;
    IF restore_time IS NOT NULL AND jsonb_typeof(restore_time) <> 'number' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = 'Unexpected value type in payload for RestoreDateTime: expected a timestamp in seconds';
    END IF;
    IF restore_time IS NOT NULL AND latest = 'true' THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: Only one of RestoreDateTime or UseLatestRestorableTime can be specified');
    END IF;
    IF restore_time IS NULL AND latest IS DISTINCT FROM 'true' THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: Either RestoreDateTime or UseLatestRestorableTime must be specified');
    END IF;
    t := ddb.pitr_table(source_name, CASE WHEN request ? 'SourceTableName' THEN 'sourceTableName' ELSE 'sourceTableArn' END);
    PERFORM ddb.check_table_access(t.table_name, 'RestoreTableToPointInTime', 'read');
    PERFORM ddb.check_table_access(target, 'RestoreTableToPointInTime', 'create');
    restore_at := coalesce(ddb.epoch_timestamp(restore_time::numeric), clock_timestamp());
    history := ddb.pitr_history(t, ddb.pitr_of(t, restore_at));
    -- the versions of a time up to the restore's have all committed once this returns
    PERFORM ddb.pitr_settle(t.table_name);
    RETURN jsonb_build_object('TableDescription', ddb.start_restore(
        target, ddb.describe_table(t.table_name), request,
        'ddb.pitr_restore_items(jsonb)'::regprocedure,
        jsonb_build_object('History', history::oid, 'RestoreTime', restore_at),
        jsonb_build_object('SourceTableArn', ddb.table_arn(t.table_name), 'RestoreDateTime', extract(epoch FROM restore_at),
                           'SourceHistory', history::oid)));
END $$;
