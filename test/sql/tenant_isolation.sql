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
-- a table's catalog rows are its owner's to forget: B cannot delete A's, nor those of a table whose relation is gone
SET ROLE ddb_iso_a;
SELECT pg_temp.create_table('IsoGone');
DROP TABLE public."IsoGone";
RESET ROLE;
SET ROLE ddb_iso_b;
SELECT pg_temp.try_sql($$SELECT ddb.forget_table('IsoA')$$);
SELECT pg_temp.try_sql($$SELECT ddb.forget_table('IsoGone')$$);
RESET ROLE;
SELECT table_name FROM ddb.tables WHERE table_name IN ('IsoA', 'IsoGone') ORDER BY 1;
SELECT ddb.forget_table('IsoGone');
SELECT count(*) AS gone_rows FROM ddb.tables WHERE table_name = 'IsoGone';
-- with the job its transaction started, the history must still be one it may read
BEGIN;
SET ROLE ddb_iso_b;
SELECT ddb.start_job('restore', '{"TableName": "IsoB"}') AS job \gset
SELECT pg_temp.try_sql(format($$SELECT ddb.record_restore('IsoB', %s, '{"SourceTableArn": "x", "RestoreDateTime": 1, "SourceHistory": %s}')$$,
                              :job, 'public."IsoA$pitr"'::regclass::oid));
ROLLBACK;

-- ---- tokens: sealed and opened in C only, each kind by its own functions ----
SELECT stream_label AS a_label FROM ddb.tables WHERE table_name = 'IsoA' \gset
-- no SQL function seals a payload of the caller's: B cannot mint an iterator of A's stream
SET ROLE ddb_iso_b;
SELECT pg_temp.try_sql(format($$SELECT ddb.seal_token('ShardIterator', '["IsoA", "%s", 0]')$$, :'a_label'));
SELECT pg_temp.try_sql(format($$SELECT ddb.stream_iterator('IsoA', '%s', 0)$$, :'a_label'));
SELECT pg_temp.try_sql($$SELECT ddb.stream_iterator('IsoB', 'another stream', 0)$$);
SELECT pg_temp.try_sql($$SELECT ddb.seal_job_page_token('export', 1, '0123456789abcdef')$$);
RESET ROLE;
-- what the secret's holder could seal (an HMAC-SHA256 in SQL, as src/request/tokens.c computes it)
CREATE FUNCTION pg_temp.seal(purpose text, payload text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    k bytea := (SELECT secret FROM ddb.server_secret);
    ipad bytea;
    opad bytea;
    msg bytea := convert_to(purpose, 'UTF8') || '\x00'::bytea || convert_to(payload, 'UTF8');
BEGIN
    k := k || decode(repeat('00', 64 - length(k)), 'hex');
    ipad := k;
    opad := k;
    FOR i IN 0 .. 63 LOOP
        ipad := set_byte(ipad, i, get_byte(k, i) # 54);
        opad := set_byte(opad, i, get_byte(k, i) # 92);
    END LOOP;
    RETURN translate(encode(convert_to(payload, 'UTF8'), 'base64'), E'\n', '') || '.'
           || encode(sha256(opad || sha256(ipad || msg)), 'hex');
END $$;
-- an iterator of the expected object opens; one of any other shape is refused as DynamoDB refuses an invalid iterator
SELECT jsonb_array_length(ddb.execute('GetRecords', jsonb_build_object('ShardIterator',
         pg_temp.seal('ShardIterator', format('{"table": "IsoA", "label": "%s", "after": 0}', :'a_label')))) -> 'Records') AS records;
SELECT replace(payload, :'a_label', '<label>') AS payload, pg_temp.try('GetRecords', jsonb_build_object('ShardIterator', pg_temp.seal('ShardIterator', payload)))
FROM unnest(ARRAY[format('["IsoA", "%s", 0]', :'a_label'),
                  format('{"table": "IsoA", "label": "%s", "after": "0"}', :'a_label'),
                  format('{"table": "IsoA", "label": "%s", "after": 0.5}', :'a_label'),
                  format('{"table": "IsoA", "label": "%s", "after": -1}', :'a_label'),
                  format('{"table": "IsoA", "label": "%s", "after": 0, "more": 1}', :'a_label'),
                  format('{"table": "IsoA", "label": "%s"}', :'a_label'),
                  '{"table": "IsoA", "label": null, "after": 0}', '"IsoA"', 'null', '{}', 'not json']) payload;
-- PartiQL's NextToken: a LastEvaluatedKey, each member a key's AttributeValue, written out again (never spliced in)
SELECT payload, pg_temp.try('ExecuteStatement', jsonb_build_object('Statement', 'SELECT * FROM "IsoA" WHERE pk = ''t1#a''',
         'NextToken', pg_temp.seal('NextToken SELECT * FROM "IsoA" WHERE pk = ''t1#a''', payload)))
FROM unnest(ARRAY['{"pk": {"S": "t1#a"}, "sk": {"N": "0"}}',
                  '{"pk": {"S": "t1#a"}, "sk": {"N": "0"}}, "Limit": 1000',
                  '{"pk": {"S": "t1#a"}, "sk": {"SS": ["0"]}}',
                  '{"pk": {"S": "t1#a", "N": "1"}}',
                  '{"pk": {"S": 1}}', '[{"S": "t1#a"}]', '{}']) payload;
-- a listing's page: the caller's own job only, for its filter
SELECT payload, pg_temp.try('ListExports', jsonb_build_object('NextToken', pg_temp.seal('export page', payload)))
FROM unnest(ARRAY['{"job": 1, "filter": 1}', '{"job": "1", "filter": "d41d8cd98f00b204"}', '1:d41d8cd98f00b204']) payload;

-- ---- streams: a role limited to leading keys reads its keys' records only ----
SELECT ddb.grant_tables('ddb_iso_t1', 'IsoA', read_only => true, leading_keys => '{t1#*}');
CREATE FUNCTION pg_temp.iterator(t text) RETURNS text LANGUAGE sql AS $$
  WITH s AS (SELECT ddb.execute('DescribeTable', jsonb_build_object('TableName', t)) -> 'Table' ->> 'LatestStreamArn' AS arn)
  SELECT ddb.execute('GetShardIterator', jsonb_build_object('StreamArn', s.arn,
    'ShardId', ddb.execute('DescribeStream', jsonb_build_object('StreamArn', s.arn)) -> 'StreamDescription' -> 'Shards' -> 0 ->> 'ShardId',
    'ShardIteratorType', 'TRIM_HORIZON')) ->> 'ShardIterator' FROM s $$;
CREATE FUNCTION pg_temp.record_keys(t text) RETURNS TABLE (event text, pk text) LANGUAGE sql AS $$
  SELECT r ->> 'eventName', r -> 'dynamodb' -> 'Keys' -> 'pk' ->> 'S'
  FROM jsonb_array_elements(ddb.execute('GetRecords', jsonb_build_object('ShardIterator', pg_temp.iterator(t))) -> 'Records') r $$;
GRANT EXECUTE ON FUNCTION pg_temp.iterator(text), pg_temp.record_keys(text) TO PUBLIC;
SELECT * FROM pg_temp.record_keys('IsoA');
SET ROLE ddb_iso_t1;
SELECT pg_temp.try('Query', '{"TableName": "IsoA", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "t2#a"}}}') AS t2_query;
SELECT * FROM pg_temp.record_keys('IsoA');
SELECT keys -> 'pk' ->> 'S' AS pk, count(*) FROM ddb.stream_records WHERE table_name = 'IsoA' GROUP BY 1;
-- the policy's test, called with anything
SELECT ddb.stream_record_visible('IsoA', '[1, 2, 3]') AS array, ddb.stream_record_visible('IsoA', '"x"') AS scalar,
       ddb.stream_record_visible('IsoA', '{"pk": {"S": "t1#x"}}') AS t1, ddb.stream_record_visible('IsoA', '{"pk": {"S": "t2#x"}}') AS t2,
       ddb.stream_record_visible('IsoA', '{"pk": "t1#x"}') AS plain, ddb.stream_record_visible('Nope', '{}') AS nope;
RESET ROLE;
-- B reads none of A's records
SET ROLE ddb_iso_b;
SELECT count(*) AS a_records_b_sees FROM ddb.stream_records WHERE table_name = 'IsoA';
RESET ROLE;

-- ---- jobs and the buckets' prefixes: each role's own ----
ALTER SYSTEM SET ddb.export_root = '/nonexistent/ddb_model/regress';
SELECT pg_reload_conf(), pg_sleep(1);
CREATE FUNCTION pg_temp.export(t text, prefix text) RETURNS text LANGUAGE sql AS $$
  SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', 'arn:aws:dynamodb:ddb-model:000000000000:table/' || t,
                     'S3Bucket', 'iso-shared', 'S3Prefix', prefix)) $$;
GRANT EXECUTE ON FUNCTION pg_temp.export(text, text) TO PUBLIC;
SET ROLE ddb_iso_a;
SELECT pg_temp.export('IsoA', 'a/exports/');
RESET ROLE;
SELECT bucket, prefix, role_id FROM ddb.s3_claims WHERE bucket = 'iso-shared';
SELECT max(id) AS a_job FROM ddb.jobs WHERE kind = 'export' AND role_id = 'ddb_iso_a'::regrole \gset
-- B writes neither where A's exports are, nor above or below them; beside them it does
SET ROLE ddb_iso_b;
SELECT prefix, regexp_replace(pg_temp.export('IsoB', prefix), 'user/ddb_iso_b', 'user/<b>') AS export
FROM unnest(ARRAY['a/exports', 'a/exports/', 'a', '', '/', 'a/exports/b', 'a/exportsb', 'b']) prefix;
-- nor by starting the job itself (ddb.start_job): the job's step claims its directory again
SELECT spec || jsonb_build_object('S3Prefix', 'a/exports', 'ExportId', '00000000000000-0badbeef',
                                  'ExportArn', (spec ->> 'TableArn') || '/export/00000000000000-0badbeef') AS b_spec
FROM ddb.jobs WHERE kind = 'export' AND role_id = 'ddb_iso_b'::regrole ORDER BY id LIMIT 1 \gset
SELECT ddb.start_job('export', :'b_spec') AS b_job \gset
SELECT ddb.wait_for_job(:b_job) AS b_job_status;
SELECT error FROM ddb.jobs WHERE id = :b_job;
-- nor does it read A's jobs
SELECT ddb.job_state(:a_job) AS a_job_state_b_sees;
SELECT count(*) AS a_jobs_b_sees FROM ddb.jobs WHERE role_id = 'ddb_iso_a'::regrole;
RESET ROLE;
SET ROLE ddb_iso_a;
SELECT ddb.job_state(:a_job) IS NOT NULL AS a_job_state_a_sees;
RESET ROLE;
SELECT bucket, prefix, role_id FROM ddb.s3_claims WHERE bucket = 'iso-shared' ORDER BY prefix;
-- where claims are is asked by importers only
SET ROLE ddb_iso_b;
SELECT pg_temp.try_sql($$SELECT ddb.check_s3_source('iso-shared', 'a')$$);
RESET ROLE;
-- an import (a role that may import) reads no key under another role's exports
GRANT pg_read_server_files TO ddb_iso_b;
SET ROLE ddb_iso_b;
SELECT key_prefix, pg_temp.try('ImportTable', jsonb_build_object('S3BucketSource', jsonb_build_object('S3Bucket', 'iso-shared',
         'S3KeyPrefix', key_prefix), 'InputFormat', 'DYNAMODB_JSON', 'TableCreationParameters', jsonb_build_object('TableName', 'IsoImport',
         'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}]'::jsonb,
         'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}]'::jsonb, 'BillingMode', 'PAY_PER_REQUEST')))
FROM unnest(ARRAY['a/exports/AWSDynamoDB/', 'a/', 'a', '', 'a/exports']) key_prefix;
-- its own exports it reads
SELECT pg_temp.try('ImportTable', jsonb_build_object('S3BucketSource', jsonb_build_object('S3Bucket', 'iso-shared',
         'S3KeyPrefix', 'b/'), 'InputFormat', 'DYNAMODB_JSON', 'TableCreationParameters', jsonb_build_object('TableName', 'IsoImport',
         'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}]'::jsonb,
         'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}]'::jsonb, 'BillingMode', 'PAY_PER_REQUEST'))) AS import_own;
RESET ROLE;
REVOKE pg_read_server_files FROM ddb_iso_b;
ALTER SYSTEM RESET ddb.export_root;
SELECT pg_reload_conf();

-- ---- the roles' tables go ----
SELECT bool_and(ddb.wait_for_job(id) IN ('COMPLETED', 'FAILED')) IS NOT FALSE AS jobs_ended
FROM ddb.jobs WHERE role_id IN ('ddb_iso_a'::regrole, 'ddb_iso_b'::regrole);
SELECT ddb.revoke_tables('ddb_iso_t1', 'IsoA');
SET ROLE ddb_iso_a;
SELECT ddb.execute('DeleteTable', '{"TableName": "IsoA"}') -> 'TableDescription' ->> 'TableStatus';
RESET ROLE;
SET ROLE ddb_iso_b;
SELECT ddb.execute('DeleteTable', '{"TableName": "IsoB"}') -> 'TableDescription' ->> 'TableStatus';
RESET ROLE;
DELETE FROM ddb.s3_claims WHERE bucket = 'iso-shared';
DELETE FROM ddb.jobs WHERE role_id IN ('ddb_iso_a'::regrole, 'ddb_iso_b'::regrole);
REVOKE INSERT, UPDATE ON ddb.tables FROM ddb_iso_a, ddb_iso_b;
REVOKE SELECT ON ddb.table_grants FROM ddb_iso_a, ddb_iso_b;
REVOKE CREATE ON SCHEMA public FROM ddb_iso_a, ddb_iso_b;
DROP OWNED BY ddb_iso_a, ddb_iso_b, ddb_iso_t1;
DROP ROLE ddb_iso_a, ddb_iso_b, ddb_iso_t1;
