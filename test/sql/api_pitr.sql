-- Point-in-time recovery (docs/pitr.md): UpdateContinuousBackups,
-- DescribeContinuousBackups, the history of a table's items and the items
-- it gives at every moment, trimming, and the errors.
\set SHOW_CONTEXT never
\set VERBOSITY terse
\i test/sql/include/try_request.sql
-- a SQL call's SQLSTATE and message, or 'ok'
CREATE FUNCTION pg_temp.sql_error(statement text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ' ' || SQLERRM;
END $$;
CREATE FUNCTION pg_temp.pitr(table_name text, enabled boolean, days int DEFAULT NULL) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT ddb.execute('UpdateContinuousBackups', jsonb_build_object('TableName', table_name,
      'PointInTimeRecoverySpecification', jsonb_strip_nulls(jsonb_build_object('PointInTimeRecoveryEnabled', enabled,
                                                                             'RecoveryPeriodInDays', days))))
         -> 'ContinuousBackupsDescription' $$;
-- a description without its times, and whether they make a window that ends now
CREATE FUNCTION pg_temp.described(d jsonb) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT d #- '{PointInTimeRecoveryDescription,EarliestRestorableDateTime}'
           #- '{PointInTimeRecoveryDescription,LatestRestorableDateTime}'
         || CASE WHEN d -> 'PointInTimeRecoveryDescription' ? 'EarliestRestorableDateTime' THEN jsonb_build_object('window_ends_now',
                (d #>> '{PointInTimeRecoveryDescription,EarliestRestorableDateTime}')::numeric
                  <= (d #>> '{PointInTimeRecoveryDescription,LatestRestorableDateTime}')::numeric
                AND to_timestamp((d #>> '{PointInTimeRecoveryDescription,LatestRestorableDateTime}')::numeric)
                    BETWEEN now() AND clock_timestamp())
           ELSE '{}' END $$;

-- A table with a sort key, a global and a local secondary index
SELECT ddb.execute('CreateTable', '{"TableName": "Orders", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
                           {"AttributeName": "status", "AttributeType": "S"}, {"AttributeName": "placed", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "ByStatus", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                              "Projection": {"ProjectionType": "KEYS_ONLY"}}],
  "LocalSecondaryIndexes": [{"IndexName": "ByPlaced", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                                   {"AttributeName": "placed", "KeyType": "RANGE"}],
                             "Projection": {"ProjectionType": "ALL"}}]}') -> 'TableDescription' ->> 'TableStatus' AS created;
SELECT pg_temp.described(ddb.execute('DescribeContinuousBackups', '{"TableName": "Orders"}') -> 'ContinuousBackupsDescription')
       AS before_enabling;
SELECT ddb.put_item('Orders', '{"pk": "c1", "sk": 1, "status": "OPEN", "placed": "2026-01-01"}'),
       ddb.put_item('Orders', '{"pk": "c1", "sk": 2, "status": "OPEN", "placed": "2026-01-02"}');

-- Enabling: the items become the first versions, at EarliestRestorableDateTime
SELECT pg_temp.described(pg_temp.pitr('Orders', true, 7)) AS enabled;
SELECT pk, sk, change_order, item FROM public."Orders$pitr" ORDER BY pk, sk;
SELECT (SELECT DISTINCT changed_at FROM public."Orders$pitr")
       = to_timestamp((ddb.execute('DescribeContinuousBackups', '{"TableName": "arn:aws:dynamodb:ddb-model:000000000000:table/Orders"}')
                       #>> '{ContinuousBackupsDescription,PointInTimeRecoveryDescription,EarliestRestorableDateTime}')::numeric)
       AS first_versions_at_earliest;
SELECT pg_temp.described(ddb.execute('DescribeContinuousBackups', '{"TableName": "Orders"}') -> 'ContinuousBackupsDescription')
       AS described;
-- enabling again sets the recovery period (35 when not given)
SELECT pg_temp.pitr('Orders', true, 3) #> '{PointInTimeRecoveryDescription,RecoveryPeriodInDays}' AS three_days,
       pg_temp.pitr('Orders', true) #> '{PointInTimeRecoveryDescription,RecoveryPeriodInDays}' AS default_days,
       (SELECT count(*) FROM public."Orders$pitr") AS versions_unchanged;

-- Writes, and after each the moment and what the table held then
CREATE TEMP TABLE moments (step int, label text, at timestamptz, items jsonb, by_status jsonb, by_placed jsonb);
-- a table's items, and its indexes' entries, in key order
CREATE FUNCTION pg_temp.contents(t text, index_name text DEFAULT NULL) RETURNS jsonb
LANGUAGE sql AS $$ SELECT coalesce(jsonb_agg(i), '[]') FROM ddb.scan(t, index_name) i $$;
CREATE FUNCTION pg_temp.moment(step int, label text) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO moments SELECT step, label, clock_timestamp(), pg_temp.contents('Orders'),
      pg_temp.contents('Orders', 'ByStatus'), pg_temp.contents('Orders', 'ByPlaced') $$;
SELECT pg_temp.moment(0, 'enabled');
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "c2"}, "sk": {"N": "1"},
  "status": {"S": "OPEN"}, "placed": {"S": "2026-02-01"}, "tags": {"SS": ["a", "b"]}}}');
SELECT pg_temp.moment(1, 'put');
SELECT ddb.execute('UpdateItem', '{"TableName": "Orders", "Key": {"pk": {"S": "c1"}, "sk": {"N": "1"}},
  "UpdateExpression": "SET #s = :s, placed = :p", "ExpressionAttributeNames": {"#s": "status"},
  "ExpressionAttributeValues": {":s": {"S": "PAID"}, ":p": {"S": "2026-03-01"}}}');
SELECT pg_temp.moment(2, 'overwrite');
SELECT ddb.execute('DeleteItem', '{"TableName": "Orders", "Key": {"pk": {"S": "c1"}, "sk": {"N": "2"}}}');
SELECT pg_temp.moment(3, 'delete');
-- a transaction: both versions share one time
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
  {"Put": {"TableName": "Orders", "Item": {"pk": {"S": "c3"}, "sk": {"N": "1"}, "status": {"S": "OPEN"}}}},
  {"Delete": {"TableName": "Orders", "Key": {"pk": {"S": "c2"}, "sk": {"N": "1"}}}}]}');
SELECT pg_temp.moment(4, 'transaction');
-- the same item twice in one transaction: two versions in order, one time
BEGIN;
SELECT ddb.put_item('Orders', '{"pk": "c4", "sk": 1, "status": "OPEN", "v": 1}');
SELECT ddb.put_item('Orders', '{"pk": "c4", "sk": 1, "status": "OPEN", "v": 2}');
COMMIT;
SELECT pg_temp.moment(5, 'twice');
-- a rolled-back write and a write that changes nothing make no version
BEGIN;
SELECT ddb.put_item('Orders', '{"pk": "gone", "sk": 1}');
ROLLBACK;
SELECT ddb.put_item('Orders', '{"pk": "c3", "sk": 1, "status": "OPEN"}');
-- BatchWriteItem, PartiQL and plain SQL are recorded too
SELECT ddb.execute('BatchWriteItem', '{"RequestItems": {"Orders": [
  {"PutRequest": {"Item": {"pk": {"S": "c5"}, "sk": {"N": "1"}, "status": {"S": "OPEN"}}}},
  {"DeleteRequest": {"Key": {"pk": {"S": "c4"}, "sk": {"N": "1"}}}}]}}');
SELECT ddb.execute('ExecuteStatement', '{"Statement": "UPDATE \"Orders\" SET status = ''SHIPPED'' WHERE pk = ''c5'' AND sk = 1"}');
SELECT pg_temp.moment(6, 'batch and PartiQL');
UPDATE public."Orders" SET pk = 'c6', item = item || '{"pk": "c6"}' WHERE pk = 'c5';
SELECT pg_temp.moment(7, 'key changed by SQL');
-- SET CONSTRAINTS ... IMMEDIATE: collected early, written at commit; a rolled-back savepoint's change is not
BEGIN;
SET CONSTRAINTS ALL IMMEDIATE;
SAVEPOINT s;
SELECT ddb.put_item('Orders', '{"pk": "gone", "sk": 2}');
ROLLBACK TO s;
SELECT ddb.put_item('Orders', '{"pk": "c7", "sk": 1, "status": "OPEN"}');
SELECT clock_timestamp() AS before_commit \gset
COMMIT;
SELECT pg_temp.moment(8, 'immediate');
SELECT changed_at > :'before_commit' AS timed_at_commit FROM public."Orders$pitr" WHERE pk = 'c7';
-- an item back under a key that was deleted
SELECT ddb.put_item('Orders', '{"pk": "c2", "sk": 1, "status": "REOPENED"}');
SELECT pg_temp.moment(9, 'put again');

SELECT pk, sk, change_order, item ->> 'status' AS status, item IS NULL AS deleted,
       dense_rank() OVER (ORDER BY changed_at) AS transaction
FROM public."Orders$pitr" ORDER BY changed_at, change_order;
SELECT count(*) AS versions_of_gone FROM public."Orders$pitr" WHERE pk = 'gone';
-- the items at every moment are what the table held then
SELECT step, label, (SELECT coalesce(jsonb_agg(item ORDER BY pk, sk), '[]') FROM ddb.pitr_items('Orders', at)) = items AS as_they_were
FROM moments ORDER BY step;
SELECT count(*) AS moments_without_the_items_in_key_order
FROM moments WHERE items <> (SELECT coalesce(jsonb_agg(item ORDER BY pk, sk), '[]') FROM ddb.pitr_items('Orders', at));
-- and until the next write's time
SELECT m.step, (SELECT coalesce(jsonb_agg(item ORDER BY pk, sk), '[]')
                FROM ddb.pitr_items('Orders', (SELECT min(changed_at) FROM public."Orders$pitr" WHERE changed_at > m.at)
                                              - interval '1 microsecond')) = m.items AS until_the_next
FROM moments m WHERE m.step < 9 ORDER BY m.step;
SELECT p.pk, p.sk, p.item_size = o.item_size AS size_kept
FROM ddb.pitr_items('Orders', clock_timestamp()) p JOIN public."Orders" o USING (pk, sk) ORDER BY p.pk, p.sk;

-- RestoreTableToPointInTime: a new table per moment, restored by a background
-- job (one at a time: each request commits, then its job is waited for),
-- with the items, the global and the local index as they were then
CREATE FUNCTION pg_temp.restore(request jsonb) RETURNS text
LANGUAGE sql AS $$
  SELECT ddb.execute('RestoreTableToPointInTime', request) -> 'TableDescription' ->> 'TableStatus' $$;
CREATE FUNCTION pg_temp.restored(t text) RETURNS text
LANGUAGE sql AS $$ SELECT ddb.wait_for_job(job_id, 60) FROM ddb.table_restores WHERE table_name = t $$;
CREATE FUNCTION pg_temp.restore_moment(step int) RETURNS text
LANGUAGE sql AS $$
  SELECT pg_temp.restore(jsonb_build_object('SourceTableName', 'Orders', 'TargetTableName', 'Orders_' || step,
                                            'RestoreDateTime', extract(epoch FROM at)))
  FROM moments m WHERE m.step = restore_moment.step $$;
SELECT format('SELECT pg_temp.restore_moment(%s)', step), format('SELECT pg_temp.restored(%L)', 'Orders_' || step)
FROM moments ORDER BY step \gexec
SELECT m.step, pg_temp.contents('Orders_' || m.step) = m.items AS items,
       pg_temp.contents('Orders_' || m.step, 'ByStatus') = m.by_status AS global_index,
       pg_temp.contents('Orders_' || m.step, 'ByPlaced') = m.by_placed AS local_index
FROM moments m ORDER BY m.step;
SELECT count(*) AS index_problems FROM moments, ddb.verify_gsi('Orders_' || step);
-- a restored table: its indexes and RestoreSummary, ACTIVE, without point-in-time recovery of its own
SELECT (d -> 'RestoreSummary') - 'RestoreDateTime' AS summary,
       d ->> 'TableStatus' AS status,
       ddb.epoch_timestamp((d #>> '{RestoreSummary,RestoreDateTime}')::numeric) = (SELECT at FROM moments WHERE step = 3) AS restore_time,
       (SELECT jsonb_agg(i ->> 'IndexName') FROM jsonb_array_elements(d -> 'GlobalSecondaryIndexes') i) AS global_indexes,
       (SELECT jsonb_agg(i ->> 'IndexName') FROM jsonb_array_elements(d -> 'LocalSecondaryIndexes') i) AS local_indexes,
       ddb.execute('DescribeContinuousBackups', '{"TableName": "Orders_3"}')
         #>> '{ContinuousBackupsDescription,PointInTimeRecoveryDescription,PointInTimeRecoveryStatus}' AS its_pitr
FROM (SELECT ddb.execute('DescribeTable', '{"TableName": "Orders_3"}') -> 'Table' AS d) x;
-- the latest restorable time, and EarliestRestorableDateTime as DescribeContinuousBackups gives it
SELECT pg_temp.restore('{"SourceTableArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Orders",
                         "TargetTableName": "OrdersLatest", "UseLatestRestorableTime": true}') AS latest,
       pg_temp.restore(jsonb_build_object('SourceTableName', 'Orders', 'TargetTableName', 'OrdersEarliest', 'RestoreDateTime',
           ddb.execute('DescribeContinuousBackups', '{"TableName": "Orders"}')
             #> '{ContinuousBackupsDescription,PointInTimeRecoveryDescription,EarliestRestorableDateTime}')) AS earliest;
SELECT pg_temp.restored('OrdersLatest') AS latest_job, pg_temp.restored('OrdersEarliest') AS earliest_job;
SELECT pg_temp.contents('OrdersLatest') = pg_temp.contents('Orders') AS latest_is_now,
       pg_temp.contents('OrdersEarliest') = (SELECT items FROM moments WHERE step = 0) AS earliest_is_the_first_versions;
-- the overrides: a subset of the indexes, the billing mode
SELECT pg_temp.restore('{"SourceTableName": "Orders", "TargetTableName": "OrdersLean", "UseLatestRestorableTime": true,
                         "GlobalSecondaryIndexOverride": [], "BillingModeOverride": "PROVISIONED",
                         "ProvisionedThroughputOverride": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 3}}') AS lean;
SELECT pg_temp.restored('OrdersLean') AS lean_job;
SELECT d -> 'GlobalSecondaryIndexes' AS global_indexes, jsonb_array_length(d -> 'LocalSecondaryIndexes') AS local_indexes,
       d #>> '{BillingModeSummary,BillingMode}' AS billing, d #> '{ProvisionedThroughput,ReadCapacityUnits}' AS reads,
       pg_temp.contents('OrdersLean') = pg_temp.contents('Orders') AS items
FROM (SELECT ddb.execute('DescribeTable', '{"TableName": "OrdersLean"}') -> 'Table' AS d) x;

-- A table with a partition key alone, hash-partitioned
SELECT ddb.create_table('Flat', 'id', 'N', partitions => 4);
SELECT ddb.put_item('Flat', jsonb_build_object('id', i, 'v', 0)) FROM generate_series(1, 6) i \g /dev/null
SELECT ddb.set_continuous_backups('Flat', true);
SELECT clock_timestamp() AS flat_t0 \gset
UPDATE public."Flat" SET item = item || '{"v": 1}' WHERE pk = '\d2';
SELECT ddb.delete_item('Flat', 3);
SELECT clock_timestamp() AS flat_t1 \gset
SELECT pk, item FROM ddb.pitr_items('Flat', :'flat_t0') ORDER BY pk;
SELECT pk, sk, item FROM ddb.pitr_items('Flat', :'flat_t1') ORDER BY pk;

-- Trimming: versions before the window's start collapse to the one in force
-- then (gone when that is a delete); with a recovery period of one day, the
-- window starts a day back.  Time passes here by moving a table's history
-- (and the moment it was turned on) back: a moment to come is refused.
CREATE FUNCTION pg_temp.age(table_name text, by interval) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('UPDATE public.%I SET changed_at = changed_at - $1', table_name || '$pitr') USING by;
  UPDATE ddb.continuous_backups c SET enabled_at = c.enabled_at - by, history_from = c.history_from - by
  WHERE c.table_name = age.table_name;
END $$;
SELECT ddb.trim_pitr_history('infinity');
SELECT pg_temp.pitr('Flat', true, 1) #> '{PointInTimeRecoveryDescription,RecoveryPeriodInDays}' AS one_day;
SELECT pg_temp.age('Flat', interval '1 day');
SELECT ddb.trim_pitr_history() AS flat_trimmed;
SELECT pk, item FROM public."Flat$pitr" ORDER BY pk;
-- what was trimmed stays gone: a longer recovery period does not reach back before it
SELECT history_from IS NOT NULL AS flat_trimmed_to, enabled_at < history_from AS after_enabling
FROM ddb.continuous_backups WHERE table_name = 'Flat';
SELECT (pg_temp.pitr('Flat', true, 35) #>> '{PointInTimeRecoveryDescription,EarliestRestorableDateTime}')::numeric
       = extract(epoch FROM history_from) AS earliest_is_the_trim
FROM ddb.continuous_backups WHERE table_name = 'Flat';
SELECT pg_temp.try('RestoreTableToPointInTime', jsonb_build_object('SourceTableName', 'Flat', 'TargetTableName', 'FlatGone',
           'RestoreDateTime', extract(epoch FROM enabled_at)))
FROM ddb.continuous_backups WHERE table_name = 'Flat';
SELECT pg_temp.pitr('Flat', true, 1) #> '{PointInTimeRecoveryDescription,RecoveryPeriodInDays}' AS one_day_again;
SELECT count(*) AS versions FROM public."Orders$pitr";
SELECT ddb.trim_pitr_history() AS trimmed_now;
SELECT pg_temp.age('Orders', interval '35 days');
SELECT ddb.trim_pitr_history() AS trimmed;
-- back to now, the trim forgotten: the errors below are of the window as it was turned on
SELECT pg_temp.age('Orders', interval '-35 days');
UPDATE ddb.continuous_backups SET history_from = NULL WHERE table_name = 'Orders';
SELECT pk, sk, item ->> 'status' AS status FROM public."Orders$pitr" ORDER BY pk, sk;
SELECT (SELECT coalesce(jsonb_agg(item ORDER BY pk, sk), '[]') FROM ddb.pitr_items('Orders', clock_timestamp())) = items
       AS latest_unchanged
FROM moments WHERE step = 9;

-- Errors
SELECT pg_temp.try('UpdateContinuousBackups', '{}');
SELECT pg_temp.try('UpdateContinuousBackups', '{"TableName": "Orders", "PointInTimeRecoverySpecification": {}}');
SELECT pg_temp.try('UpdateContinuousBackups', '{"TableName": "Orders", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true, "RecoveryPeriodInDays": 0}}');
SELECT pg_temp.try('UpdateContinuousBackups', '{"TableName": "Orders", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true, "RecoveryPeriodInDays": 36}}');
SELECT pg_temp.try('UpdateContinuousBackups', '{"TableName": "Orders", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true, "RecoveryPeriodInDays": 1.5}}');
SELECT pg_temp.try('UpdateContinuousBackups', '{"TableName": "Orders", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": "yes"}}');
SELECT pg_temp.try('UpdateContinuousBackups', '{"TableName": "Orders", "PointInTimeRecoverySpecification": [true]}');
SELECT pg_temp.try('UpdateContinuousBackups', '{"TableName": "Nope", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}');
SELECT pg_temp.try('DescribeContinuousBackups', '{"TableName": "arn:aws:dynamodb:ddb-model:000000000000:table/Nope"}');
SELECT pg_temp.try('DescribeContinuousBackups', '{}');
SELECT pg_temp.try('DescribeContinuousBackups', '{"TableName": ""}');
SELECT pg_temp.try('UpdateContinuousBackups', '{"TableName": "UserServiceTable", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}');
-- a table being restored (CREATING) answers as DynamoDB does right after CreateTable
BEGIN;
SELECT pg_temp.restore('{"SourceTableName": "Orders", "TargetTableName": "OrdersBusy", "UseLatestRestorableTime": true}') AS busy;
SELECT pg_temp.try('UpdateContinuousBackups', '{"TableName": "OrdersBusy", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}');
ROLLBACK;
SELECT ddb.create_table('NoHistory', 'pk');
SELECT pg_temp.try('RestoreTableToPointInTime', '{"SourceTableName": "Orders", "UseLatestRestorableTime": true}');
SELECT pg_temp.try('RestoreTableToPointInTime', '{"SourceTableName": "Orders", "TargetTableName": "x", "UseLatestRestorableTime": true}');
SELECT pg_temp.try('RestoreTableToPointInTime', '{"TargetTableName": "Restored", "UseLatestRestorableTime": true}');
SELECT pg_temp.try('RestoreTableToPointInTime', '{"SourceTableName": "Orders", "SourceTableArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Orders", "TargetTableName": "Restored", "UseLatestRestorableTime": true}');
SELECT pg_temp.try('RestoreTableToPointInTime', '{"SourceTableName": "Orders", "TargetTableName": "Restored"}');
SELECT pg_temp.try('RestoreTableToPointInTime', '{"SourceTableName": "Orders", "TargetTableName": "Restored", "UseLatestRestorableTime": false}');
SELECT pg_temp.try('RestoreTableToPointInTime', '{"SourceTableName": "Orders", "TargetTableName": "Restored", "UseLatestRestorableTime": true, "RestoreDateTime": 1}');
SELECT pg_temp.try('RestoreTableToPointInTime', '{"SourceTableName": "Orders", "TargetTableName": "Restored", "RestoreDateTime": "yesterday"}');
SELECT pg_temp.try('RestoreTableToPointInTime', '{"SourceTableName": "Orders", "TargetTableName": "Restored", "UseLatestRestorableTime": "yes"}');
SELECT pg_temp.try('RestoreTableToPointInTime', '{"SourceTableName": "Nope", "TargetTableName": "Restored", "UseLatestRestorableTime": true}');
SELECT pg_temp.try('RestoreTableToPointInTime', '{"SourceTableName": "NoHistory", "TargetTableName": "Restored", "UseLatestRestorableTime": true}');
SELECT pg_temp.try('RestoreTableToPointInTime', jsonb_build_object('SourceTableName', 'Orders', 'TargetTableName', 'Restored',
                   'RestoreDateTime', extract(epoch FROM (SELECT at FROM moments WHERE step = 0)) - 3600));
SELECT pg_temp.try('RestoreTableToPointInTime', jsonb_build_object('SourceTableName', 'Orders', 'TargetTableName', 'Restored',
                   'RestoreDateTime', extract(epoch FROM now() + interval '1 hour')));
SELECT pg_temp.try('RestoreTableToPointInTime', '{"SourceTableName": "Orders", "TargetTableName": "Orders_1", "UseLatestRestorableTime": true}');
SELECT count(*) AS nothing_restored FROM ddb.tables WHERE table_name = 'Restored';
SELECT pg_temp.sql_error($$SELECT * FROM ddb.pitr_items('NoHistory', now())$$);
SELECT pg_temp.sql_error($$SELECT * FROM ddb.pitr_items('Orders', now() - interval '1 hour')$$);
SELECT pg_temp.sql_error($$SELECT * FROM ddb.pitr_items('Orders', now() + interval '1 hour')$$);
SELECT pg_temp.sql_error($$SELECT * FROM ddb.pitr_items('Orders', NULL)$$);
SELECT pg_temp.sql_error($$SELECT ddb.set_continuous_backups('Orders', true, 0)$$);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT pg_temp.sql_error($$SELECT ddb.set_continuous_backups('NoHistory', true)$$);
ROLLBACK;

-- Disabling drops the history; enabling again starts a new one
SELECT pg_temp.described(pg_temp.pitr('Orders', false)) AS disabled;
SELECT to_regclass('public."Orders$pitr"') AS history, count(*) AS triggers
FROM pg_trigger WHERE tgrelid = 'public."Orders"'::regclass AND tgname = 'ddb_pitr';
SELECT pg_temp.described(pg_temp.pitr('Orders', false)) AS disabled_again;
SELECT pg_temp.described(pg_temp.pitr('Orders', true)) AS enabled_again;
SELECT count(*) AS first_versions, min(changed_at) > (SELECT max(at) FROM moments) AS after_the_old_history
FROM public."Orders$pitr";
-- a write and disabling in one transaction
BEGIN;
SELECT ddb.put_item('Orders', '{"pk": "c9", "sk": 1, "status": "OPEN"}');
SELECT pg_temp.pitr('Orders', false) -> 'PointInTimeRecoveryDescription' AS disabled_in_transaction;
COMMIT;
SELECT item ->> 'pk' AS written FROM public."Orders" WHERE pk = 'c9';
-- A restore's job reads the history the request named (by OID), whatever the window has become: a
-- restore to a second after the earliest moment completes though the window moved past it before the
-- job ran; and DeleteTable, or turning point-in-time recovery off, of its source is refused while it runs
BEGIN;
SELECT pg_temp.restore(jsonb_build_object('SourceTableName', 'Flat', 'TargetTableName', 'FlatEarliest', 'RestoreDateTime',
           (ddb.execute('DescribeContinuousBackups', '{"TableName": "Flat"}')
             #>> '{ContinuousBackupsDescription,PointInTimeRecoveryDescription,EarliestRestorableDateTime}')::numeric + 1)) AS earliest;
UPDATE ddb.continuous_backups SET history_from = clock_timestamp() WHERE table_name = 'Flat';
SELECT pg_temp.try('DeleteTable', '{"TableName": "Flat"}');
SELECT pg_temp.try('UpdateContinuousBackups', '{"TableName": "Flat", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": false}}');
COMMIT;
SELECT pg_temp.restored('FlatEarliest') AS earliest_job;
SELECT (SELECT count(*) FROM ddb.scan('FlatEarliest')) AS items,
       (SELECT count(*) FROM ddb.pitr_items('Flat', clock_timestamp())) AS items_of_flat;
SELECT ddb.delete_table('FlatEarliest');
-- TRUNCATE, which no version would record, is refused while point-in-time recovery is on
TRUNCATE public."Flat";
SELECT count(*) AS flat_items FROM public."Flat";
-- DeleteTable drops the history with the table
SELECT ddb.execute('DeleteTable', '{"TableName": "Flat"}') -> 'TableDescription' ->> 'TableStatus' AS deleting;
SELECT to_regclass('public."Flat$pitr"') AS flat_history, count(*) AS flat_rows
FROM ddb.continuous_backups WHERE table_name = 'Flat';
SELECT ddb.delete_table(table_name) FROM ddb.tables WHERE table_name LIKE 'Orders%' OR table_name = 'NoHistory';
