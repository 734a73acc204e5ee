-- On-demand backups and restores through ddb.execute (docs/backups.md):
-- CreateBackup, DescribeBackup, ListBackups, DeleteBackup,
-- RestoreTableFromBackup with its overrides, the restored table CREATING
-- until its background job has run, and the job runner's paths: a request
-- rolled back, a job that fails, a worker that dies.
\set SHOW_CONTEXT never
\set VERBOSITY terse
-- what changes from run to run (ids, times) masked
CREATE FUNCTION masked(j jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT regexp_replace(regexp_replace(regexp_replace(j::text,
           '[0-9]{14}-[0-9a-f]{8}', '<id>', 'g'),
           '"(BackupCreationDateTime|CreationDateTime|TableCreationDateTime|RestoreDateTime)": [0-9.]+', '"\1": "<time>"', 'g'),
           '"TableId": "[0-9a-f-]{36}"', '"TableId": "<id>"', 'g')::jsonb $$;
-- runs a request, and shows its error as DynamoDB's type and message
CREATE FUNCTION try(operation text, request jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  body text;
BEGIN
  RETURN masked(ddb.execute(operation, request))::text;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS body = PG_EXCEPTION_DETAIL;
  RETURN regexp_replace(format('%s %s: %s', SQLSTATE, split_part(body::jsonb->>'__type', '#', 2), SQLERRM),
                        '[0-9]{14}-[0-9a-f]{8}', '<id>', 'g');
END $$;
-- waits for the latest restore to a table to end: its job's status
-- the error a statement raises, job numbers masked (they depend on what ran before)
CREATE FUNCTION error_of(statement text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE statement;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN regexp_replace(SQLERRM, 'job [0-9]+', 'job <n>');
END $$;
CREATE FUNCTION restored(t text) RETURNS text LANGUAGE sql AS $$
  SELECT ddb.wait_for_job(id, 30) FROM ddb.jobs WHERE spec->>'TableName' = t ORDER BY id DESC LIMIT 1 $$;
-- waits until no job's worker runs (they exit a moment after their job ends)
CREATE FUNCTION no_workers() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. 1000 LOOP
    PERFORM pg_stat_clear_snapshot();   -- (a transaction sees one snapshot of pg_stat_activity otherwise)
    IF NOT EXISTS (SELECT FROM pg_stat_activity WHERE backend_type = 'ddb_model job') THEN
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.01);
  END LOOP;
  RETURN false;
END $$;
-- the items of a table, or of one of its indexes, in key order
CREATE FUNCTION contents(relation text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE result jsonb;
BEGIN
  EXECUTE format('SELECT jsonb_agg(item ORDER BY item::text) FROM public.%I', relation) INTO result;
  RETURN result;
END $$;

-- A table with everything a backup keeps: a GSI, an LSI, TTL, a stream, tags, provisioned throughput.
SELECT ddb.execute('CreateTable', '{"TableName": "BkSongs",
  "KeySchema": [{"AttributeName": "Artist", "KeyType": "HASH"}, {"AttributeName": "Song", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "Artist", "AttributeType": "S"}, {"AttributeName": "Song", "AttributeType": "S"},
                           {"AttributeName": "Genre", "AttributeType": "S"}, {"AttributeName": "Year", "AttributeType": "N"}],
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 4},
  "GlobalSecondaryIndexes": [{"IndexName": "ByGenre", "KeySchema": [{"AttributeName": "Genre", "KeyType": "HASH"},
                                                                  {"AttributeName": "Year", "KeyType": "RANGE"}],
                              "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["Plays"]},
                              "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 2}}],
  "LocalSecondaryIndexes": [{"IndexName": "ByYear", "KeySchema": [{"AttributeName": "Artist", "KeyType": "HASH"},
                                                                {"AttributeName": "Year", "KeyType": "RANGE"}],
                             "Projection": {"ProjectionType": "KEYS_ONLY"}}],
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_IMAGE"}}') -> 'TableDescription' -> 'TableStatus';
SELECT ddb.execute('UpdateTimeToLive', '{"TableName": "BkSongs", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "expires"}}');
SELECT ddb.execute('TagResource', '{"ResourceArn": "arn:aws:dynamodb:ddb-model:000000000000:table/BkSongs", "Tags": [{"Key": "team", "Value": "audio"}]}');
SELECT count(*) FROM (SELECT ddb.put_item('BkSongs', jsonb_build_object('Artist', 'a' || (i % 7), 'Song', 's' || i, 'Genre', 'g' || (i % 3),
                                         'Year', 1990 + i % 20, 'Plays', i * 10, 'Lyrics', repeat('la', i % 50)))
                      FROM generate_series(1, 300) i) put;
-- every type of value, and items without the index keys (sparse)
SELECT ddb.execute('PutItem', '{"TableName": "BkSongs", "Item": {"Artist": {"S": "z"}, "Song": {"S": "all types"},
  "n": {"N": "-1.5e3"}, "b": {"B": "3q2+7w=="}, "ss": {"SS": ["x", "y"]}, "ns": {"NS": ["1", "2.5"]}, "bs": {"BS": ["AQ==", "Ag=="]},
  "l": {"L": [{"S": "x"}, {"NULL": true}, {"BOOL": false}]}, "m": {"M": {"k": {"M": {"deep": {"N": "1"}}}}}}}');
-- an item whose TTL has passed: no longer an item, so no backup holds it
SELECT ddb.put_item('BkSongs', jsonb_build_object('Artist', 'z', 'Song', 'expired', 'Genre', 'g0', 'Year', 1,
                                                  'expires', floor(extract(epoch FROM now())) - 1000));

-- CreateBackup: one statement's snapshot of the items, and the table's description
SELECT masked(ddb.execute('CreateBackup', '{"TableName": "BkSongs", "BackupName": "songs-1"}'));
SELECT backup_arn AS songs_1 FROM ddb.backups WHERE backup_name = 'songs-1' \gset
SELECT :'songs_1' ~ '^arn:aws:dynamodb:ddb-model:000000000000:table/BkSongs/backup/[0-9]{14}-[0-9a-f]{8}$' AS arn_shape;
SELECT jsonb_pretty(masked(ddb.execute('DescribeBackup', jsonb_build_object('BackupArn', :'songs_1'))));
-- the items it holds: the table's, but the expired one
SELECT (SELECT jsonb_agg(item ORDER BY item::text) FROM public."BkSongs" WHERE ddb.ttl_visible(expires_at))
       = (SELECT jsonb_agg(backup_item ORDER BY backup_item::text) FROM ddb.backup_items(jsonb_build_object('BackupArn', :'songs_1')) backup_item)
       AS backup_holds_the_items;
-- the table's ARN names it too
SELECT try('CreateBackup', '{"TableName": "arn:aws:dynamodb:ddb-model:000000000000:table/BkSongs", "BackupName": "songs-2"}') LIKE '{"BackupDetails"%' AS by_arn;

-- CreateBackup's errors
SELECT try('CreateBackup', '{"BackupName": "x"}');
SELECT try('CreateBackup', '{"TableName": "BkSongs"}');
SELECT try('CreateBackup', '{"TableName": "BkSongs", "BackupName": "x"}');
SELECT try('CreateBackup', '{"TableName": "BkSongs", "BackupName": "no spaces"}');
SELECT try('CreateBackup', '{"TableName": "BkNowhere", "BackupName": "nothing"}');

-- ListBackups: every filter, and pages
SELECT ddb.execute('CreateTable', '{"TableName": "BkOther", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "N"}]}')
  -> 'TableDescription' -> 'TableStatus';
SELECT ddb.put_item('BkOther', '{"id": 1}');
SELECT count(*) FROM (SELECT pg_sleep(0.002), ddb.execute('CreateBackup', jsonb_build_object('TableName', 'BkOther', 'BackupName', 'other-' || i))
                      FROM generate_series(1, 3) i) b;
-- (creation times set apart, for the time range filters)
UPDATE ddb.backups SET created_at = '2026-01-01 00:00:00+00'::timestamptz + (substr(backup_name, length(backup_name)) || ' days')::interval
WHERE backup_name ~ '-[0-9]$';
CREATE FUNCTION names(request jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(string_agg(s->>'BackupName', ' ' ORDER BY n), '-')
         || coalesce(' | next ' || (SELECT b.backup_name FROM ddb.backups b WHERE b.backup_arn = r->>'LastEvaluatedBackupArn'), '')
  FROM ddb.execute('ListBackups', request) r LEFT JOIN LATERAL jsonb_array_elements(r->'BackupSummaries') WITH ORDINALITY e(s, n) ON true
  GROUP BY r $$;
SELECT names('{}') AS all_backups;
SELECT jsonb_pretty(masked(ddb.execute('ListBackups', '{"TableName": "BkOther", "Limit": 1}') #- '{LastEvaluatedBackupArn}'));
SELECT names('{"TableName": "BkOther"}') AS of_a_table;
SELECT names('{"TableName": "arn:aws:dynamodb:ddb-model:000000000000:table/BkSongs"}') AS by_arn;
SELECT names(jsonb_build_object('TimeRangeLowerBound', extract(epoch FROM '2026-01-03 00:00:00+00'::timestamptz))) AS from_jan_3;
SELECT names(jsonb_build_object('TimeRangeUpperBound', extract(epoch FROM '2026-01-03 00:00:00+00'::timestamptz))) AS before_jan_3;
SELECT names(jsonb_build_object('TimeRangeLowerBound', extract(epoch FROM '2026-01-02 00:00:00+00'::timestamptz),
                                'TimeRangeUpperBound', extract(epoch FROM '2026-01-03 00:00:00+00'::timestamptz))) AS jan_2;
SELECT names('{"BackupType": "ALL"}') AS all_types, names('{"BackupType": "SYSTEM"}') AS system,
       names('{"BackupType": "AWS_BACKUP"}') AS aws_backup;
SELECT names('{"Limit": 2}') AS page_1;
SELECT names(jsonb_build_object('Limit', 2, 'ExclusiveStartBackupArn', (SELECT backup_arn FROM ddb.backups WHERE backup_name = 'other-2'))) AS page_2;
SELECT names(jsonb_build_object('Limit', 2, 'ExclusiveStartBackupArn', (SELECT backup_arn FROM ddb.backups WHERE backup_name = 'songs-1'))) AS page_3;
SELECT try('ListBackups', '{"BackupType": "EVERYTHING"}');
SELECT try('ListBackups', '{"Limit": 0}');
SELECT try('ListBackups', '{"Limit": 101}');
SELECT try('ListBackups', '{"TimeRangeLowerBound": "yesterday"}');
SELECT try('ListBackups', '{"TableName": "x"}');

-- DescribeBackup's errors
SELECT try('DescribeBackup', '{}');
SELECT try('DescribeBackup', '{"BackupArn": "arn:too-short"}');
SELECT try('DescribeBackup', '{"BackupArn": "arn:aws:dynamodb:ddb-model:000000000000:table/BkSongs/backup/01700000000000-00000000"}');

-- RestoreTableFromBackup: a new table, CREATING until its job has written every item
BEGIN;
SELECT jsonb_pretty(masked(ddb.execute('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkSongsCopy'))
       -> 'TableDescription') - 'AttributeDefinitions' - 'LocalSecondaryIndexes' - 'GlobalSecondaryIndexes' - 'KeySchema');
-- while the request has not committed, nothing runs: the table is CREATING, and DynamoDB's answers for one
\set ON_ERROR_ROLLBACK on
SELECT ddb.execute('DescribeTable', '{"TableName": "BkSongsCopy"}') -> 'Table' -> 'TableStatus';
SELECT try('GetItem', '{"TableName": "BkSongsCopy", "Key": {"Artist": {"S": "a1"}, "Song": {"S": "s1"}}}');
SELECT try('PutItem', '{"TableName": "BkSongsCopy", "Item": {"Artist": {"S": "a1"}, "Song": {"S": "new"}}}');
SELECT try('Scan', '{"TableName": "BkSongsCopy"}');
SELECT try('DeleteTable', '{"TableName": "BkSongsCopy"}');
SELECT try('UpdateTable', '{"TableName": "BkSongsCopy", "BillingMode": "PAY_PER_REQUEST"}');
SELECT try('UpdateTimeToLive', '{"TableName": "BkSongsCopy", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "t"}}');
SELECT try('CreateBackup', '{"TableName": "BkSongsCopy", "BackupName": "of-a-restore"}');
SELECT try('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkSongsCopy'));
SELECT try('DeleteBackup', jsonb_build_object('BackupArn', :'songs_1'));
SELECT try('CreateTable', '{"TableName": "BkSongsCopy", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}');
SELECT 'BkSongsCopy' IN (SELECT jsonb_array_elements_text(ddb.execute('ListTables', '{}') -> 'TableNames')) AS listed;
SELECT error_of($$SELECT restored('BkSongsCopy')$$);
\set ON_ERROR_ROLLBACK off
COMMIT;
SELECT restored('BkSongsCopy');
SELECT jsonb_pretty(masked(ddb.execute('DescribeTable', '{"TableName": "BkSongsCopy"}') -> 'Table')
       - 'AttributeDefinitions' - 'KeySchema' - 'LocalSecondaryIndexes');
-- the items, the GSI's and the LSI's entries are the source's (the expired item aside)
DELETE FROM public."BkSongs" WHERE NOT ddb.ttl_visible(expires_at);
SELECT contents('BkSongs') = contents('BkSongsCopy') AS items_equal,
       contents('BkSongs:ByGenre') = contents('BkSongsCopy:ByGenre') AS gsi_equal,
       contents('BkSongs:ByYear') = contents('BkSongsCopy:ByYear') AS lsi_equal,
       (SELECT count(*) FROM ddb.verify_gsi('BkSongsCopy')) AS verify_gsi_problems;
SELECT ddb.execute('Query', '{"TableName": "BkSongsCopy", "IndexName": "ByGenre", "KeyConditionExpression": "Genre = :g AND #y = :y",
  "ExpressionAttributeNames": {"#y": "Year"}, "ExpressionAttributeValues": {":g": {"S": "g1"}, ":y": {"N": "2000"}}}')
  = ddb.execute('Query', '{"TableName": "BkSongs", "IndexName": "ByGenre", "KeyConditionExpression": "Genre = :g AND #y = :y",
  "ExpressionAttributeNames": {"#y": "Year"}, "ExpressionAttributeValues": {":g": {"S": "g1"}, ":y": {"N": "2000"}}}') AS same_query;
SELECT ddb.execute('GetItem', '{"TableName": "BkSongsCopy", "Key": {"Artist": {"S": "z"}, "Song": {"S": "all types"}}}');
-- what a restore does not bring, as in DynamoDB: TTL, stream and tags (the backup still describes them)
SELECT ddb.execute('DescribeTimeToLive', '{"TableName": "BkSongsCopy"}'),
       ddb.execute('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:ddb-model:000000000000:table/BkSongsCopy"}');
-- the job that did it
SELECT kind, status, progress, error FROM ddb.jobs WHERE spec->>'TableName' = 'BkSongsCopy';

-- Overrides: billing, throughput, a subset of the indexes
SELECT masked(ddb.execute('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkSongsLean',
  'BillingModeOverride', 'PAY_PER_REQUEST', 'GlobalSecondaryIndexOverride', '[]'::jsonb)) -> 'TableDescription' -> 'BillingModeSummary');
SELECT ddb.execute('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkSongsCapped',
  'BillingModeOverride', 'PAY_PER_REQUEST', 'OnDemandThroughputOverride', '{"MaxReadRequestUnits": 200, "MaxWriteRequestUnits": 100}'::jsonb,
  'GlobalSecondaryIndexOverride', '[{"IndexName": "ByGenre", "KeySchema": [{"AttributeName": "Genre", "KeyType": "HASH"},
     {"AttributeName": "Year", "KeyType": "RANGE"}], "OnDemandThroughput": {"MaxReadRequestUnits": 50, "MaxWriteRequestUnits": 25}}]'::jsonb))
  -> 'TableDescription' -> 'GlobalSecondaryIndexes' -> 0 -> 'OnDemandThroughput' AS index_on_demand_throughput;
SELECT ddb.execute('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkSongsProvisioned',
  'ProvisionedThroughputOverride', '{"ReadCapacityUnits": 9, "WriteCapacityUnits": 8}'::jsonb,
  'LocalSecondaryIndexOverride', '[]'::jsonb,
  'GlobalSecondaryIndexOverride', '[{"IndexName": "ByGenre", "KeySchema": [{"AttributeName": "Genre", "KeyType": "HASH"},
     {"AttributeName": "Year", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "KEYS_ONLY"},
     "ProvisionedThroughput": {"ReadCapacityUnits": 7, "WriteCapacityUnits": 6}}]'::jsonb,
  'SSESpecificationOverride', '{"Enabled": true, "SSEType": "KMS"}'::jsonb)) -> 'TableDescription' -> 'ProvisionedThroughput';
SELECT restored('BkSongsLean'), restored('BkSongsProvisioned'), restored('BkSongsCapped');
SELECT t.table_name, t.billing_mode, t.read_capacity, t.write_capacity,
       (SELECT string_agg(format('%s %s %s/%s', i.index_name, i.projection_type, i.read_capacity, i.write_capacity), ', ' ORDER BY i.index_name)
        FROM ddb.indexes i WHERE i.table_name = t.table_name) AS indexes,
       (SELECT count(*) FROM ddb.scan(t.table_name)) AS items
FROM ddb.tables t WHERE t.table_name LIKE 'BkSongs%' ORDER BY 1;
SELECT contents('BkSongsProvisioned:ByGenre') = (SELECT jsonb_agg(item - 'Plays' ORDER BY (item - 'Plays')::text) FROM public."BkSongs:ByGenre") AS keys_only_gsi;
-- overrides DynamoDB refuses
SELECT try('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkBad', 'BillingModeOverride', 'FREE'));
SELECT try('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkBad',
  'BillingModeOverride', 'PAY_PER_REQUEST', 'ProvisionedThroughputOverride', '{"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}'::jsonb));
SELECT try('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkBad',
  'ProvisionedThroughputOverride', '{"ReadCapacityUnits": 0, "WriteCapacityUnits": 1}'::jsonb));
SELECT try('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkBad',
  'GlobalSecondaryIndexOverride', '[{"IndexName": "ByMood", "KeySchema": [{"AttributeName": "Mood", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}]'::jsonb));
SELECT try('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkBad', 'GlobalSecondaryIndexOverride', '{}'::jsonb));
SELECT try('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkBad',
  'SSESpecificationOverride', '{"Enabled": true, "SSEType": "ROT13"}'::jsonb));
-- RestoreTableFromBackup's other errors
SELECT try('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1'));
SELECT try('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'x'));
SELECT try('RestoreTableFromBackup', '{"TargetTableName": "BkBad"}');
SELECT try('RestoreTableFromBackup', '{"TargetTableName": "BkBad", "BackupArn": "arn:aws:dynamodb:ddb-model:000000000000:table/BkSongs/backup/01700000000000-00000000"}');
SELECT try('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkOther'));
SELECT count(*) AS nothing_left FROM ddb.tables WHERE table_name = 'BkBad';

-- Backups outlive their table: the source deleted, its backup restored under its own name
CREATE TEMP TABLE before_delete AS SELECT contents('BkSongs') AS items, contents('BkSongs:ByGenre') AS gsi;
SELECT ddb.execute('DeleteTable', '{"TableName": "BkSongs"}') -> 'TableDescription' -> 'TableStatus';
SELECT masked(ddb.execute('DescribeBackup', jsonb_build_object('BackupArn', :'songs_1')) -> 'BackupDescription' -> 'BackupDetails');
SELECT ddb.execute('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkSongs'))
       -> 'TableDescription' -> 'TableStatus';
SELECT restored('BkSongs');
SELECT contents('BkSongs') = items AS items_equal, contents('BkSongs:ByGenre') = gsi AS gsi_equal FROM before_delete;

-- DeleteBackup
SELECT masked(ddb.execute('DeleteBackup', jsonb_build_object('BackupArn', :'songs_1')) -> 'BackupDescription' -> 'BackupDetails');
SELECT try('DescribeBackup', jsonb_build_object('BackupArn', :'songs_1'));
SELECT try('DeleteBackup', jsonb_build_object('BackupArn', :'songs_1'));
SELECT try('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'songs_1', 'TargetTableName', 'BkGone'));
SELECT to_regclass('ddb_backups."' || split_part(:'songs_1', '/', 4) || '"') AS its_relation;
-- (DROP EXTENSION refuses while backups exist: they are data)
SELECT count(*) FILTER (WHERE b LIKE 'backup %') AS backups_blocking_drop FROM ddb.tables_blocking_drop() b;

-- The job runner.  A request rolled back leaves no table, no job, no worker.
SELECT backup_arn AS other_1 FROM ddb.backups WHERE backup_name = 'other-1' \gset
SELECT no_workers();
BEGIN;
SELECT ddb.execute('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'other_1', 'TargetTableName', 'BkRolledBack'))
       -> 'TableDescription' -> 'TableStatus';
SELECT count(*) AS its_worker_waits FROM pg_stat_activity WHERE backend_type = 'ddb_model job';
ROLLBACK;
SELECT no_workers();
SELECT (SELECT count(*) FROM ddb.tables WHERE table_name = 'BkRolledBack') AS tables,
       (SELECT count(*) FROM ddb.jobs WHERE spec->>'TableName' = 'BkRolledBack') AS jobs,
       (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'ddb_model job') AS workers;
-- a job started by this transaction cannot be waited for in it
BEGIN;
SELECT ddb.execute('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'other_1', 'TargetTableName', 'BkWaited')) IS NOT NULL;
SELECT error_of($$SELECT ddb.wait_for_job(job_id) FROM ddb.table_restores WHERE table_name = 'BkWaited'$$);
ROLLBACK;
-- a job that fails ends FAILED with its error, and its table goes (the items function through ddb.start_restore, as PITR calls it)
CREATE FUNCTION bad_items(argument jsonb) RETURNS SETOF jsonb LANGUAGE sql AS $$ VALUES ('{"id": 1}'::jsonb), ('{"no_key": 2}') $$;
SELECT masked(ddb.start_restore('BkBroken', ddb.execute('DescribeTable', '{"TableName": "BkOther"}') -> 'Table', '{}',
                                'bad_items(jsonb)', '{}', '{"SourceTableArn": "arn:aws:dynamodb:ddb-model:000000000000:table/BkOther", "RestoreDateTime": 0}'))
       -> 'RestoreSummary';
SELECT restored('BkBroken');
SELECT status, error FROM ddb.jobs WHERE spec->>'TableName' = 'BkBroken';
SELECT try('DescribeTable', '{"TableName": "BkBroken"}');
-- an items function of the wrong shape is refused at once
SELECT ddb.start_restore('BkBroken', '{}', '{}', 'masked(jsonb)', '{}', '{"SourceTableArn": "x", "RestoreDateTime": 0}');
SELECT ddb.start_job('no_such_kind', '{}');
-- a job is started for the owner of the table it names: no other role takes a background worker
CREATE ROLE ddb_job_starter NOLOGIN;
SET ROLE ddb_job_starter;
SELECT ddb.start_job('restore', '{}');
SELECT ddb.start_job('restore', '{"TableName": "BkOther"}');
RESET ROLE;
DROP ROLE ddb_job_starter;
-- and one role has at most ddb.max_jobs_per_role jobs in progress: LimitExceededException
SET ddb.max_jobs_per_role = 1;
BEGIN;
SELECT ddb.execute('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'other_1', 'TargetTableName', 'BkCapped1')) IS NOT NULL;
SELECT try('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'other_1', 'TargetTableName', 'BkCapped2'));
ROLLBACK;
RESET ddb.max_jobs_per_role;
SELECT no_workers();
-- a worker that dies (the server restarted, the worker was terminated): the job ends FAILED when next looked at, its table goes
CREATE FUNCTION slow_items(argument jsonb) RETURNS SETOF jsonb LANGUAGE sql AS $$ SELECT '{"id": 1}'::jsonb FROM pg_sleep(60) $$;
SELECT no_workers();
SELECT ddb.start_restore('BkDoomed', ddb.execute('DescribeTable', '{"TableName": "BkOther"}') -> 'Table', '{}',
                         'slow_items(jsonb)', '{}', '{"SourceTableArn": "arn:aws:dynamodb:ddb-model:000000000000:table/BkOther", "RestoreDateTime": 0}')
       -> 'TableStatus';
DO $$
BEGIN
  FOR i IN 1 .. 500 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN EXISTS (SELECT FROM pg_stat_activity WHERE backend_type = 'ddb_model job' AND query LIKE 'ddb_model job %: restore');
    PERFORM pg_sleep(0.02);
  END LOOP;
END $$;
SELECT ddb.execute('DescribeTable', '{"TableName": "BkDoomed"}') -> 'Table' -> 'TableStatus' AS while_running;
SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'ddb_model job';
SELECT no_workers();
SELECT status FROM ddb.jobs WHERE spec->>'TableName' = 'BkDoomed';
SELECT d -> 'TableStatus' AS status, d -> 'RestoreSummary' AS summary
FROM masked(ddb.execute('DescribeTable', '{"TableName": "BkDoomed"}') -> 'Table') d;
SELECT status, error FROM ddb.jobs WHERE spec->>'TableName' = 'BkDoomed';
SELECT try('DescribeTable', '{"TableName": "BkDoomed"}');
-- CreateBackup, a restore to its name and UpdateContinuousBackups see such a restore ended too (not TableInUseException)
CREATE FUNCTION doom(t text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ddb.start_restore(t, ddb.execute('DescribeTable', '{"TableName": "BkOther"}') -> 'Table', '{}', 'slow_items(jsonb)', '{}',
                            '{"SourceTableArn": "arn:aws:dynamodb:ddb-model:000000000000:table/BkOther", "RestoreDateTime": 0}');
  RETURN true;
END $$;
SELECT doom('BkDoomed');
SELECT pg_sleep(0.3);
SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'ddb_model job';
SELECT no_workers();
SELECT try('CreateBackup', '{"TableName": "BkDoomed", "BackupName": "doomed"}');
SELECT doom('BkDoomed');
SELECT pg_sleep(0.3);
SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'ddb_model job';
SELECT no_workers();
SELECT try('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'other_1', 'TargetTableName', 'BkDoomed')) <> '' AS restored_again;
SELECT restored('BkDoomed');
SELECT doom('BkDoomed2');
SELECT pg_sleep(0.3);
SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'ddb_model job';
SELECT no_workers();
SELECT try('UpdateContinuousBackups', '{"TableName": "BkDoomed2", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}');
-- that answer rolled back the end of the restore; ListTables ends it for good
SELECT 'BkDoomed2' IN (SELECT jsonb_array_elements_text(ddb.execute('ListTables', '{}') -> 'TableNames')) AS listed;
SELECT count(*) AS left_in_catalog FROM ddb.tables WHERE table_name = 'BkDoomed2';
SELECT ddb.execute('DeleteTable', '{"TableName": "BkDoomed"}') -> 'TableDescription' -> 'TableStatus';

-- Who may: CreateBackup takes the table's ownership, DescribeBackup reading the backup
SELECT backup_arn AS other_2 FROM ddb.backups WHERE backup_name = 'other-2' \gset
SET client_min_messages = warning;
DROP ROLE IF EXISTS ddb_backup_reader;
RESET client_min_messages;
CREATE ROLE ddb_backup_reader NOLOGIN;
SELECT ddb.grant_tables('ddb_backup_reader', 'BkOther', read_only => true);
SET ROLE ddb_backup_reader;
SELECT try('CreateBackup', '{"TableName": "BkOther", "BackupName": "not-mine"}');
SELECT try('DescribeBackup', jsonb_build_object('BackupArn', :'other_2'));
SELECT try('DeleteBackup', jsonb_build_object('BackupArn', :'other_2'));
SELECT names('{}') AS it_lists;
RESET ROLE;
SELECT ddb.revoke_tables('ddb_backup_reader', 'BkOther');
DROP OWNED BY ddb_backup_reader;
DROP ROLE ddb_backup_reader;

-- A role with the documented privileges: CreateTable's (INSERT on
-- ddb.tables, CREATE on the schema; and what CreateTable itself writes and
-- reads as its caller, UPDATE on ddb.tables and SELECT on
-- ddb.table_grants) and CreateBackup's (INSERT on ddb.backups, CREATE on
-- ddb_backups), none on ddb.table_restores or ddb.continuous_backups:
-- backs up, restores, turns point-in-time recovery on and restores to a
-- moment; those catalogs are written for it after the checks
SET client_min_messages = warning;
DROP ROLE IF EXISTS ddb_backup_owner;
RESET client_min_messages;
CREATE ROLE ddb_backup_owner NOLOGIN;
GRANT INSERT ON ddb.tables, ddb.backups TO ddb_backup_owner;
GRANT UPDATE ON ddb.tables TO ddb_backup_owner;
GRANT SELECT ON ddb.table_grants TO ddb_backup_owner;
GRANT CREATE ON SCHEMA public, ddb_backups TO ddb_backup_owner;
SET ROLE ddb_backup_owner;
SELECT ddb.execute('CreateTable', '{"TableName": "BkOwned", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "N"}]}')
       -> 'TableDescription' -> 'TableStatus';
SELECT ddb.put_item('BkOwned', '{"id": 1}');
SELECT ddb.execute('CreateBackup', '{"TableName": "BkOwned", "BackupName": "owned"}') -> 'BackupDetails' ->> 'BackupArn' AS owned_arn \gset
SELECT ddb.execute('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'owned_arn', 'TargetTableName', 'BkOwnedCopy'))
       -> 'TableDescription' -> 'TableStatus';
SELECT restored('BkOwnedCopy');
SELECT ddb.execute('UpdateContinuousBackups', '{"TableName": "BkOwned", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}')
       -> 'ContinuousBackupsDescription' -> 'PointInTimeRecoveryDescription' -> 'PointInTimeRecoveryStatus';
SELECT ddb.execute('UpdateContinuousBackups', '{"TableName": "BkOwned", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true, "RecoveryPeriodInDays": 3}}')
       -> 'ContinuousBackupsDescription' -> 'PointInTimeRecoveryDescription' -> 'RecoveryPeriodInDays';
SELECT ddb.execute('RestoreTableToPointInTime', '{"SourceTableName": "BkOwned", "TargetTableName": "BkOwnedThen", "UseLatestRestorableTime": true}')
       -> 'TableDescription' -> 'TableStatus';
SELECT restored('BkOwnedThen');
SELECT t, ddb.execute('Scan', jsonb_build_object('TableName', t)) -> 'Count' AS items FROM unnest(ARRAY['BkOwnedCopy', 'BkOwnedThen']) t;
SELECT ddb.execute('UpdateContinuousBackups', '{"TableName": "BkOwned", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": false}}')
       -> 'ContinuousBackupsDescription' -> 'PointInTimeRecoveryDescription' -> 'PointInTimeRecoveryStatus';
RESET ROLE;
-- a job runs as the role that started it, by OID: renamed meanwhile, and another made with its old name, it still does
BEGIN;
SET ROLE ddb_backup_owner;
SELECT ddb.execute('RestoreTableFromBackup', jsonb_build_object('BackupArn', :'owned_arn', 'TargetTableName', 'BkOwnedRenamed'))
       -> 'TableDescription' -> 'TableStatus';
RESET ROLE;
ALTER ROLE ddb_backup_owner RENAME TO ddb_backup_owner_renamed;
CREATE ROLE ddb_backup_owner NOLOGIN;
COMMIT;
SELECT restored('BkOwnedRenamed');
SELECT role_id FROM ddb.jobs WHERE spec->>'TableName' = 'BkOwnedRenamed';
DROP ROLE ddb_backup_owner;
ALTER ROLE ddb_backup_owner_renamed RENAME TO ddb_backup_owner;
SELECT count(*) FROM (SELECT ddb.execute('DeleteTable', jsonb_build_object('TableName', t))
                      FROM unnest(ARRAY['BkOwned', 'BkOwnedCopy', 'BkOwnedThen', 'BkOwnedRenamed']) t) d;
SELECT ddb.execute('DeleteBackup', jsonb_build_object('BackupArn', :'owned_arn')) -> 'BackupDescription' -> 'BackupDetails' -> 'BackupStatus';
DROP OWNED BY ddb_backup_owner;
DROP ROLE ddb_backup_owner;

-- volatility: no function of backups, restores or point-in-time recovery is
-- declared IMMUTABLE or STABLE while it calls a VOLATILE function of ddb
SELECT f.oid::regprocedure AS declared_stricter_than_what_it_calls, g.oid::regprocedure AS calls
FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace AND n.nspname = 'ddb'
JOIN pg_proc g ON g.pronamespace = f.pronamespace AND g.provolatile = 'v' AND f.provolatile IN ('i', 's')
 AND f.prosrc ~ ('ddb\.' || g.proname || '\(')
WHERE f.proname ~ '(backup|restor|pitr)' AND f.prolang <> 13
ORDER BY 1, 2;

-- everything restored here goes
SELECT ddb.execute('DeleteTable', jsonb_build_object('TableName', t)) -> 'TableDescription' -> 'TableStatus'
FROM unnest(ARRAY['BkSongs', 'BkSongsCopy', 'BkSongsLean', 'BkSongsProvisioned', 'BkSongsCapped', 'BkOther']) t;
SELECT count(*) FROM (SELECT ddb.execute('DeleteBackup', jsonb_build_object('BackupArn', backup_arn)) FROM ddb.backups) d;
SELECT count(*) AS backup_relations FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'ddb_backups';
