-- Exports to S3 and imports from S3 (docs/transfer.md): the requests'
-- checks and errors, ExportDescription and ImportTableDescription, their
-- status through a failure (a bucket that does not exist), listings and
-- their pages, idempotency by ClientToken, an import's table CREATING,
-- and who may.  test/exports.sh writes and reads real files.
\set SHOW_CONTEXT never
\set VERBOSITY terse
\i test/sql/include/try_request.sql
-- a response with its ids and times masked
CREATE FUNCTION pg_temp.masked(response jsonb) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT regexp_replace(regexp_replace(regexp_replace(response::text,
           '[0-9]{14}-[0-9a-f]{8}', '<id>', 'g'),
           '"(StartTime|EndTime|ExportTime)": [0-9.]+', '"\1": "<time>"', 'g'),
           '"TableId": "[0-9a-f-]{36}"', '"TableId": "<uuid>"', 'g')::jsonb $$;
CREATE FUNCTION pg_temp.export(request jsonb) RETURNS jsonb
LANGUAGE sql AS $$ SELECT ddb.execute('ExportTableToPointInTime', request) -> 'ExportDescription' $$;
CREATE FUNCTION pg_temp.import(request jsonb) RETURNS jsonb
LANGUAGE sql AS $$ SELECT ddb.execute('ImportTable', request) -> 'ImportTableDescription' $$;
CREATE FUNCTION pg_temp.last_job() RETURNS integer
LANGUAGE sql AS $$ SELECT max(id) FROM ddb.jobs $$;

SELECT ddb.execute('CreateTable', '{"TableName": "Music", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "Artist", "KeyType": "HASH"}, {"AttributeName": "SongTitle", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "Artist", "AttributeType": "S"}, {"AttributeName": "SongTitle", "AttributeType": "S"}]}')
  -> 'TableDescription' ->> 'TableStatus';
SELECT ddb.put_item('Music', '{"Artist": "Acme", "SongTitle": "Happy Day", "Year": 2019}');
\set arn arn:aws:dynamodb:ddb-model:000000000000:table/Music

-- ---- ExportTableToPointInTime: the request's checks ----
SELECT pg_temp.try('ExportTableToPointInTime', '{}');
SELECT pg_temp.try('ExportTableToPointInTime', '{"TableArn": "", "S3Bucket": "-bad-", "S3BucketOwner": "me",
  "S3SseAlgorithm": "DES", "ExportFormat": "CSV", "ExportType": "SOME", "ClientToken": "$"}');
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', repeat('b', 256),
  'S3Prefix', repeat('p', 1025), 'S3SseKmsKeyId', ''));
SELECT pg_temp.try('ExportTableToPointInTime', '{"TableArn": 1, "S3Bucket": "b1"}');
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1', 'ExportTime', 'now'));
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1',
  'IncrementalExportSpecification', '[]'::jsonb));
-- a prefix names directories here: no part . or ..
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1', 'S3Prefix', 'a/../../etc'));
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1', 'S3Prefix', './x'));
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1', 'ExportFormat', 'ION'));
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1',
  'IncrementalExportSpecification', '{"ExportViewType": "NEW_IMAGE"}'::jsonb));
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1',
  'ExportType', 'INCREMENTAL_EXPORT', 'ExportTime', 1700000000));
-- a table that is not here, and one without point-in-time recovery
SELECT pg_temp.try('ExportTableToPointInTime', '{"TableArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Nope", "S3Bucket": "b1"}');
SELECT pg_temp.try('ExportTableToPointInTime', '{"TableArn": "Music", "S3Bucket": "b1"}');
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1'));
SELECT ddb.execute('UpdateContinuousBackups', '{"TableName": "Music", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}')
  -> 'ContinuousBackupsDescription' -> 'PointInTimeRecoveryDescription' ->> 'PointInTimeRecoveryStatus';
-- the server keeps no buckets until its administrator says where
SHOW ddb.export_root;
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1'));
ALTER SYSTEM SET ddb.export_root = 'relative/path';
ALTER SYSTEM SET ddb.export_root = '/nonexistent/ddb_model/regress';
SELECT pg_reload_conf(), pg_sleep(1);
SHOW ddb.export_root;
-- a time outside the window: in the future, before point-in-time recovery began
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1',
  'ExportTime', extract(epoch FROM now() + interval '1 hour')));
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1',
  'ExportTime', extract(epoch FROM now() - interval '1 hour')));
-- an incremental export's period: 15 minutes to 24 hours, in the window
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1',
  'ExportType', 'INCREMENTAL_EXPORT'));
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1',
  'ExportType', 'INCREMENTAL_EXPORT', 'IncrementalExportSpecification', jsonb_build_object(
    'ExportFromTime', 1700000600, 'ExportToTime', 1700000000)));
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1',
  'ExportType', 'INCREMENTAL_EXPORT', 'IncrementalExportSpecification', jsonb_build_object(
    'ExportFromTime', 1700000000, 'ExportToTime', 1700000600)));
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1',
  'ExportType', 'INCREMENTAL_EXPORT', 'IncrementalExportSpecification', jsonb_build_object(
    'ExportFromTime', 1700000000, 'ExportToTime', 1700000000 + 86401)));
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1',
  'ExportType', 'INCREMENTAL_EXPORT', 'IncrementalExportSpecification', jsonb_build_object(
    'ExportFromTime', extract(epoch FROM now() - interval '1 hour'))));

-- ---- an export: IN_PROGRESS, then FAILED (no such bucket), as DynamoDB's fails ----
SELECT pg_temp.masked(pg_temp.export(jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1', 'S3Prefix', 'music/',
  'S3BucketOwner', '123456789012', 'S3SseAlgorithm', 'AES256', 'ClientToken', 'token-1')));
SELECT ddb.wait_for_job(pg_temp.last_job());
SELECT pg_temp.masked(ddb.execute('DescribeExport', jsonb_build_object('ExportArn', spec ->> 'ExportArn')))
FROM ddb.jobs WHERE id = pg_temp.last_job();
-- the same request with the same ClientToken is the same export; another request with it is a conflict
SELECT pg_temp.export(jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1', 'S3Prefix', 'music/',
  'S3BucketOwner', '123456789012', 'S3SseAlgorithm', 'AES256', 'ClientToken', 'token-1')) ->> 'ExportArn'
  = (SELECT spec ->> 'ExportArn' FROM ddb.jobs WHERE id = pg_temp.last_job()) AS same_export;
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b2', 'ClientToken', 'token-1'));
-- a job's work is its worker's alone: the files are written and read by the jobs' C steps, through no SQL function
SELECT pg_temp.try('ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1')) AS second;
SELECT ddb.wait_for_job(pg_temp.last_job());
SELECT count(*) AS file_functions FROM pg_proc
WHERE pronamespace = 'ddb'::regnamespace AND proname IN ('write_export_files', 'write_import_items', 'job_export', 'job_import');

-- ---- DescribeExport, ListExports ----
SELECT pg_temp.try('DescribeExport', '{}');
SELECT pg_temp.try('DescribeExport', '{"ExportArn": "arn:short"}');
SELECT pg_temp.try('DescribeExport', '{"ExportArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Music/export/01700000000000-00000000"}');
SELECT pg_temp.masked(ddb.execute('ListExports', '{}'));
SELECT pg_temp.masked(ddb.execute('ListExports', jsonb_build_object('TableArn', :'arn', 'MaxResults', 1)) - 'NextToken');
SELECT pg_temp.masked(ddb.execute('ListExports', jsonb_build_object('TableArn', :'arn', 'MaxResults', 1,
  'NextToken', ddb.execute('ListExports', jsonb_build_object('TableArn', :'arn', 'MaxResults', 1)) ->> 'NextToken')));
SELECT ddb.execute('ListExports', '{"TableArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Other"}');
SELECT pg_temp.try('ListExports', '{"MaxResults": 0}');
SELECT pg_temp.try('ListExports', '{"MaxResults": 26}');
SELECT pg_temp.try('ListExports', '{"MaxResults": "1"}');
SELECT pg_temp.try('ListExports', '{"NextToken": "forged"}');
-- a token is for the listing it came from
SELECT pg_temp.try('ListExports', jsonb_build_object('MaxResults', 1,
  'NextToken', ddb.execute('ListExports', jsonb_build_object('TableArn', :'arn', 'MaxResults', 1)) ->> 'NextToken'));
-- and short whatever the ARNs' lengths: the id of the page's last export and a hash of the filter (a JSON object), the seal
SELECT length(ddb.execute('ListExports', jsonb_build_object('TableArn', :'arn', 'MaxResults', 1)) ->> 'NextToken') < 160 AS short_token;

-- ---- the export's step checks where the files go again, from the job's spec: an ExportId or S3Prefix that climbs out fails it ----
BEGIN;
SELECT pg_temp.export(jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1')) ->> 'ExportStatus';
UPDATE ddb.jobs SET spec = jsonb_set(spec, '{ExportId}', '"../../../tmp/x"') WHERE id = pg_temp.last_job();
COMMIT;
SELECT ddb.wait_for_job(pg_temp.last_job());
SELECT error FROM ddb.jobs WHERE id = pg_temp.last_job();
BEGIN;
SELECT pg_temp.export(jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1')) ->> 'ExportStatus';
UPDATE ddb.jobs SET spec = spec || '{"S3Prefix": "a/../../../tmp"}' WHERE id = pg_temp.last_job();
COMMIT;
SELECT ddb.wait_for_job(pg_temp.last_job());
SELECT error FROM ddb.jobs WHERE id = pg_temp.last_job();

-- ---- ImportTable: the request's checks ----
\set creation '{"TableName": "Imported", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}'
SELECT pg_temp.try('ImportTable', '{}');
SELECT pg_temp.try('ImportTable', '{"S3BucketSource": {"S3Bucket": "b1", "S3BucketOwner": "x"}, "InputFormat": "XML",
  "InputCompressionType": "LZ4", "InputFormatOptions": {"Csv": {"Delimiter": "#"}},
  "TableCreationParameters": {"TableName": "x", "BillingMode": "FREE"}}');
SELECT pg_temp.try('ImportTable', '{"S3BucketSource": "b1", "InputFormat": "DYNAMODB_JSON", "TableCreationParameters": {}}');
SELECT pg_temp.try('ImportTable', jsonb_build_object('S3BucketSource', '{"S3Bucket": "b1"}'::jsonb, 'InputFormat', 'ION',
  'TableCreationParameters', :'creation'::jsonb));
SELECT pg_temp.try('ImportTable', jsonb_build_object('S3BucketSource', '{"S3Bucket": "b1"}'::jsonb, 'InputFormat', 'CSV',
  'TableCreationParameters', :'creation'::jsonb));
SELECT pg_temp.try('ImportTable', jsonb_build_object('S3BucketSource', '{"S3Bucket": "b1"}'::jsonb, 'InputFormat', 'DYNAMODB_JSON',
  'InputCompressionType', 'ZSTD', 'TableCreationParameters', :'creation'::jsonb));
-- a prefix names directories here: no part . or ..
SELECT pg_temp.try('ImportTable', jsonb_build_object('S3BucketSource', '{"S3Bucket": "b1", "S3KeyPrefix": "a/../../etc/"}'::jsonb,
  'InputFormat', 'DYNAMODB_JSON', 'TableCreationParameters', :'creation'::jsonb));
-- the table is CreateTable's to check, and must not exist
SELECT pg_temp.try('ImportTable', jsonb_build_object('S3BucketSource', '{"S3Bucket": "b1"}'::jsonb, 'InputFormat', 'DYNAMODB_JSON',
  'TableCreationParameters', (:'creation'::jsonb) || '{"KeySchema": [{"AttributeName": "pk", "KeyType": "RANGE"}]}'));
SELECT pg_temp.try('ImportTable', jsonb_build_object('S3BucketSource', '{"S3Bucket": "b1"}'::jsonb, 'InputFormat', 'DYNAMODB_JSON',
  'TableCreationParameters', (:'creation'::jsonb) || '{"TableName": "Music"}'));

-- ---- an import: the table CREATING, then the import FAILED (no such bucket) and the table gone ----
-- (in the request's transaction, so that the job cannot have ended yet)
BEGIN;
SELECT pg_temp.masked(pg_temp.import(jsonb_build_object('S3BucketSource', '{"S3Bucket": "b1", "S3KeyPrefix": "music/"}'::jsonb,
  'InputFormat', 'DYNAMODB_JSON', 'InputCompressionType', 'GZIP', 'ClientToken', 'token-2',
  'TableCreationParameters', :'creation'::jsonb)));
SELECT ddb.execute('DescribeTable', '{"TableName": "Imported"}') -> 'Table' ->> 'TableStatus';
SELECT pg_temp.try('PutItem', '{"TableName": "Imported", "Item": {"pk": {"S": "x"}}}');
SELECT pg_temp.try('DeleteTable', '{"TableName": "Imported"}');
COMMIT;
SELECT ddb.wait_for_job(pg_temp.last_job());
SELECT pg_temp.masked(ddb.execute('DescribeImport', jsonb_build_object('ImportArn', spec ->> 'ImportArn')))
FROM ddb.jobs WHERE id = pg_temp.last_job();
SELECT count(*) AS imported_tables FROM ddb.tables WHERE table_name = 'Imported';
SELECT pg_temp.try('ImportTable', jsonb_build_object('S3BucketSource', '{"S3Bucket": "b2"}'::jsonb, 'InputFormat', 'DYNAMODB_JSON',
  'ClientToken', 'token-2', 'TableCreationParameters', :'creation'::jsonb));

-- ---- DescribeImport, ListImports ----
SELECT pg_temp.try('DescribeImport', '{}');
SELECT pg_temp.try('DescribeImport', '{"ImportArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Imported/import/01700000000000-00000000"}');
SELECT pg_temp.masked(ddb.execute('ListImports', '{}'));
SELECT pg_temp.try('ListImports', '{"PageSize": 30}');
SELECT pg_temp.try('ListImports', '{"NextToken": "abc"}');
SELECT pg_temp.try('ListImports', jsonb_build_object('NextToken', repeat('0', 112)));

-- ---- who may: an export takes the table's ownership, an import CreateTable's privilege and pg_read_server_files ----
SET client_min_messages = warning;
DROP ROLE IF EXISTS ddb_exports_reader;
RESET client_min_messages;
CREATE ROLE ddb_exports_reader;
SELECT ddb.grant_tables('ddb_exports_reader', 'Music', read_only => true);
SELECT ddb.execute_as('ddb_exports_reader', 'GetItem', '{"TableName": "Music", "Key": {"Artist": {"S": "Acme"}, "SongTitle": {"S": "Happy Day"}}}')
  -> 'Item' -> 'Year';
CREATE FUNCTION pg_temp.try_as(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    body text;
BEGIN
    PERFORM ddb.execute_as(role_name, operation, request);
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS body = PG_EXCEPTION_DETAIL;
    RETURN split_part(body::jsonb ->> '__type', '#', 2) || ': ' || (body::jsonb ->> 'message');
END $$;
SELECT pg_temp.try_as('ddb_exports_reader', 'ExportTableToPointInTime', jsonb_build_object('TableArn', :'arn', 'S3Bucket', 'b1'));
SELECT pg_temp.try_as('ddb_exports_reader', 'ImportTable', jsonb_build_object('S3BucketSource', '{"S3Bucket": "b1"}'::jsonb,
  'InputFormat', 'DYNAMODB_JSON', 'TableCreationParameters', :'creation'::jsonb));
-- an import reads the server's files, other roles' exports among them: besides CreateTable's privileges it takes pg_read_server_files, as COPY FROM a file
GRANT INSERT, UPDATE ON ddb.tables TO ddb_exports_reader;
GRANT SELECT ON ddb.table_grants TO ddb_exports_reader;
SELECT pg_temp.try_as('ddb_exports_reader', 'ImportTable', jsonb_build_object('S3BucketSource', '{"S3Bucket": "b1"}'::jsonb,
  'InputFormat', 'DYNAMODB_JSON', 'TableCreationParameters', (:'creation'::jsonb) || '{"TableName": "Music"}'));
GRANT pg_read_server_files TO ddb_exports_reader;
-- (from a bucket no other role exported to: docs/transfer.md)
SELECT pg_temp.try_as('ddb_exports_reader', 'ImportTable', jsonb_build_object('S3BucketSource', '{"S3Bucket": "b2"}'::jsonb,
  'InputFormat', 'DYNAMODB_JSON', 'TableCreationParameters', (:'creation'::jsonb) || '{"TableName": "Music"}'));
-- with those privileges (and CREATE on the schema) a role imports: the catalog of restores is written for it
GRANT CREATE ON SCHEMA public TO ddb_exports_reader;
SELECT pg_temp.try_as('ddb_exports_reader', 'ImportTable', jsonb_build_object('S3BucketSource', '{"S3Bucket": "b2"}'::jsonb,
  'InputFormat', 'DYNAMODB_JSON', 'TableCreationParameters', (:'creation'::jsonb) || '{"TableName": "ReaderImport"}'));
SELECT ddb.wait_for_job(pg_temp.last_job());
SELECT kind, status, role_id, (SELECT count(*) FROM ddb.tables WHERE table_name = 'ReaderImport') AS table_left
FROM ddb.jobs WHERE id = pg_temp.last_job();
REVOKE CREATE ON SCHEMA public FROM ddb_exports_reader;
REVOKE pg_read_server_files FROM ddb_exports_reader;
REVOKE INSERT, UPDATE ON ddb.tables FROM ddb_exports_reader;
REVOKE SELECT ON ddb.table_grants FROM ddb_exports_reader;
-- each role lists and describes the exports it made
SELECT ddb.execute_as('ddb_exports_reader', 'ListExports', '{}');
SELECT regexp_replace(pg_temp.try_as('ddb_exports_reader', 'DescribeExport', jsonb_build_object('ExportArn', spec ->> 'ExportArn')),
                      '[0-9]{14}-[0-9a-f]{8}', '<id>')
FROM ddb.jobs WHERE kind = 'export' ORDER BY id LIMIT 1;
-- a job started otherwise than by its operation: ddb.start_job starts one only for the owner of
-- the table its spec names (and the job checks its operation's privileges again, as the role that started it)
SELECT spec AS export_spec FROM ddb.jobs WHERE kind = 'export' ORDER BY id LIMIT 1 \gset
SELECT spec AS import_spec FROM ddb.jobs WHERE kind = 'import' ORDER BY id LIMIT 1 \gset
SET ROLE ddb_exports_reader;
SELECT ddb.start_job('export', :'export_spec');
SELECT ddb.start_job('import', :'import_spec');
RESET ROLE;
SELECT ddb.revoke_tables('ddb_exports_reader', 'Music');
DROP OWNED BY ddb_exports_reader;
DROP ROLE ddb_exports_reader;

ALTER SYSTEM RESET ddb.export_root;
SELECT pg_reload_conf();

-- the tables go: the other tests of this database make their own
SELECT ddb.delete_table('Music');
