-- What one tenant may do to another's tables, jobs, histories, streams and
-- files through the extension's own functions (issue 29, docs/security.md):
-- two table owners with CreateTable's documented privileges, and a role a
-- grant limits to leading keys, each acting with SET ROLE.
\set SHOW_CONTEXT never
\set VERBOSITY terse
\i test/sql/include/try_request.sql
SET client_min_messages = warning;
DROP ROLE IF EXISTS ddb_iso_a;
DROP ROLE IF EXISTS ddb_iso_b;
DROP ROLE IF EXISTS ddb_iso_t1;
RESET client_min_messages;
CREATE ROLE ddb_iso_a;
CREATE ROLE ddb_iso_b;
CREATE ROLE ddb_iso_t1;
GRANT INSERT, UPDATE ON ddb.tables TO ddb_iso_a, ddb_iso_b;
GRANT SELECT ON ddb.table_grants TO ddb_iso_a, ddb_iso_b;
GRANT CREATE ON SCHEMA public TO ddb_iso_a, ddb_iso_b;
-- a request's error as SQLSTATE, __type and message, as the role acting
CREATE FUNCTION pg_temp.try_sql(statement text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    state text;
    message text;
BEGIN
    EXECUTE statement;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
    RETURN state || ': ' || regexp_replace(message, '[0-9]{4,}', '<n>', 'g');
END $$;
GRANT EXECUTE ON FUNCTION pg_temp.try_sql(text), pg_temp.try(text, jsonb) TO PUBLIC;
CREATE FUNCTION pg_temp.create_table(name text) RETURNS text
LANGUAGE sql AS $$
  SELECT ddb.execute('CreateTable', jsonb_build_object('TableName', name, 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]'::jsonb,
    'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]'::jsonb,
    'StreamSpecification', '{"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}'::jsonb))
    -> 'TableDescription' ->> 'TableStatus' $$;
GRANT EXECUTE ON FUNCTION pg_temp.create_table(text) TO PUBLIC;

SET ROLE ddb_iso_a;
SELECT pg_temp.create_table('IsoA');
SELECT ddb.execute('UpdateContinuousBackups', '{"TableName": "IsoA",
  "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}') -> 'ContinuousBackupsDescription' ->> 'ContinuousBackupsStatus';
SELECT ddb.put_item('IsoA', '{"pk": "t1#a", "sk": 1, "v": "one"}');
SELECT ddb.put_item('IsoA', '{"pk": "t2#a", "sk": 1, "v": "two"}');
SELECT ddb.put_item('IsoA', '{"pk": "t1#a", "sk": 1, "v": "one again"}');
RESET ROLE;
SET ROLE ddb_iso_b;
SELECT pg_temp.create_table('IsoB');
SELECT ddb.execute('UpdateContinuousBackups', '{"TableName": "IsoB",
  "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}') -> 'ContinuousBackupsDescription' ->> 'ContinuousBackupsStatus';
RESET ROLE;

-- ---- point-in-time recovery's catalog row: the owner's write computes it ----
-- B cannot point its table's recovery at A's history, nor move its window
SET ROLE ddb_iso_b;
SELECT pg_temp.try_sql($$SELECT ddb.write_continuous_backups('IsoB', jsonb_build_object('history_relation', 'IsoA$pitr',
  'recovery_period_days', 1, 'enabled_at', now(), 'history_from', now() + interval '1 day'))$$);
SELECT pg_temp.try_sql($$SELECT ddb.write_continuous_backups('IsoA', 1)$$);
SELECT pg_temp.try_sql($$SELECT ddb.write_continuous_backups('IsoA', NULL::integer)$$);
SELECT pg_temp.try_sql($$SELECT ddb.trim_continuous_backups('IsoA', now())$$);
-- its own row: the history is its table's, its window's start no later than now
SELECT pg_temp.try_sql($$SELECT ddb.write_continuous_backups('IsoB', 2)$$);
SELECT pg_temp.try_sql($$SELECT ddb.trim_continuous_backups('IsoB', 'infinity')$$);
RESET ROLE;
SELECT table_name, history_relation, recovery_period_days, history_from IS NULL OR history_from <= now() AS from_past
FROM ddb.continuous_backups WHERE table_name IN ('IsoA', 'IsoB') ORDER BY 1;
-- a trim as of now leaves A's three versions (two keys) all restorable
SELECT ddb.trim_pitr_history() >= 0 AS trimmed;
SELECT count(*) AS a_versions FROM public."IsoA$pitr";
-- a restore's record names a history its job may read: B cannot protect A's history with its own restore
SET ROLE ddb_iso_b;
SELECT pg_temp.try_sql(format($$SELECT ddb.record_restore('IsoB', 1, '{"SourceTableArn": "x", "RestoreDateTime": 1, "SourceHistory": %s}')$$,
                              'public."IsoA$pitr"'::regclass::oid));
RESET ROLE;
-- with the job its transaction started, the history must still be one it may read
BEGIN;
SET ROLE ddb_iso_b;
SELECT ddb.start_job('restore', '{"TableName": "IsoB"}') AS job \gset
SELECT pg_temp.try_sql(format($$SELECT ddb.record_restore('IsoB', %s, '{"SourceTableArn": "x", "RestoreDateTime": 1, "SourceHistory": %s}')$$,
                              :job, 'public."IsoA$pitr"'::regclass::oid));
ROLLBACK;
