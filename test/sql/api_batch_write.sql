-- BatchWriteItem writes a run of puts to one table by one statement
-- (issue 33): what it leaves is what the same writes made one by one leave
-- (items, TTL, global and local index entries, stream records in order,
-- point-in-time history), its capacity is rounded item by item, its
-- checks come in the same order and an error in its last write leaves
-- nothing written, and throttling admits its writes one by one.
\set SHOW_CONTEXT never
\set VERBOSITY terse
\i test/sql/include/try_request.sql
-- two tables of each kind, alike: a sort key, a global and a local index, TTL, a stream, PITR; and one of a hash key only
CREATE FUNCTION pg_temp.create_pair(name text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ddb.execute('CreateTable', jsonb_build_object('TableName', name, 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]'::jsonb,
    'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "status", "AttributeType": "S"}, {"AttributeName": "placed", "AttributeType": "S"}]'::jsonb,
    'GlobalSecondaryIndexes', '[{"IndexName": "ByStatus", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}]'::jsonb,
    'LocalSecondaryIndexes', '[{"IndexName": "ByPlaced", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                {"AttributeName": "placed", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "KEYS_ONLY"}}]'::jsonb,
    'StreamSpecification', '{"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}'::jsonb));
  PERFORM ddb.execute('UpdateTimeToLive', jsonb_build_object('TableName', name,
    'TimeToLiveSpecification', '{"Enabled": true, "AttributeName": "ttl"}'::jsonb));
  PERFORM ddb.execute('UpdateContinuousBackups', jsonb_build_object('TableName', name,
    'PointInTimeRecoverySpecification', '{"PointInTimeRecoveryEnabled": true}'::jsonb));
  PERFORM ddb.execute('CreateTable', jsonb_build_object('TableName', name || 'Solo', 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', '[{"AttributeName": "id", "KeyType": "HASH"}]'::jsonb,
    'AttributeDefinitions', '[{"AttributeName": "id", "AttributeType": "S"}]'::jsonb));
END $$;
SELECT pg_temp.create_pair('Batched'), pg_temp.create_pair('Single');
-- the same items before: c1 1..6 and a Solo item
SELECT count(*) AS put FROM (SELECT ddb.put_item(t, jsonb_build_object('pk', 'c1', 'sk', i, 'status', 'OLD', 'placed', '2026-01-0' || i)),
                                    ddb.put_item(t || 'Solo', '{"id": "s0", "v": "old"}')
                             FROM unnest(ARRAY['Batched', 'Single']) t, generate_series(1, 6) i) p;

-- The writes: puts to two tables, new items and overwrites, items left out
-- of the indexes, an expired one (TTL), and deletes among the puts (which
-- end a run of puts); BatchWriteItem applies them by table, then key
CREATE TEMP TABLE writes (n int, tbl text, request jsonb);
INSERT INTO writes
SELECT i, '', CASE WHEN i IN (2, 5) THEN jsonb_build_object('DeleteRequest', jsonb_build_object('Key',
                    jsonb_build_object('pk', '{"S": "c1"}'::jsonb, 'sk', jsonb_build_object('N', i::text))))
              ELSE jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_strip_nulls(jsonb_build_object(
                    'pk', jsonb_build_object('S', 'c' || (1 + i % 2)), 'sk', jsonb_build_object('N', i::text),
                    'status', CASE WHEN i % 3 <> 0 THEN jsonb_build_object('S', 'S' || i % 4) END,
                    'placed', jsonb_build_object('S', '2026-02-' || lpad(i::text, 2, '0')),
                    'ttl', CASE WHEN i = 7 THEN jsonb_build_object('N', (extract(epoch FROM now())::bigint - 60)::text)
                                WHEN i = 8 THEN jsonb_build_object('N', (extract(epoch FROM now())::bigint + 3600)::text) END,
                    'pad', jsonb_build_object('S', repeat('x', 1500)))))) END
FROM generate_series(1, 20) i
UNION ALL
SELECT 20 + i, 'Solo', jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object(
    'id', jsonb_build_object('S', 's' || (i - 1)), 'v', '{"S": "new"}'::jsonb)))
FROM generate_series(1, 3) i;
-- one batch
CREATE TEMP TABLE batched AS
SELECT ddb.execute('BatchWriteItem', jsonb_build_object('ReturnConsumedCapacity', 'INDEXES', 'RequestItems',
    (SELECT jsonb_object_agg('Batched' || tbl, rs) FROM (SELECT tbl, jsonb_agg(request ORDER BY n) rs FROM writes GROUP BY tbl) g)))
    AS response;
SELECT response FROM batched;
-- one by one, in the batch's order
SELECT count(*) AS written FROM (
    SELECT CASE WHEN request ? 'PutRequest'
                THEN ddb.execute('PutItem', jsonb_build_object('TableName', 'Single' || tbl) || (request -> 'PutRequest'))
                ELSE ddb.execute('DeleteItem', jsonb_build_object('TableName', 'Single' || tbl) || (request -> 'DeleteRequest')) END
    FROM writes
    ORDER BY tbl, coalesce(request #>> '{PutRequest,Item,pk,S}', request #>> '{DeleteRequest,Key,pk,S}'),
             coalesce(request #>> '{PutRequest,Item,sk,N}', request #>> '{DeleteRequest,Key,sk,N}')::numeric,
             request #>> '{PutRequest,Item,id,S}') w;

-- the rows alike, TTL's expiry and the item's size included
CREATE FUNCTION pg_temp.rows_of(t text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format('SELECT concat_ws(%L, pk, sk, item, expires_at, item_size) FROM public.%I', ' | ', t);
END $$;
SELECT (SELECT count(*) FROM pg_temp.rows_of('Batched')) AS rows,
       (SELECT count(*) FROM (SELECT * FROM pg_temp.rows_of('Batched') EXCEPT SELECT * FROM pg_temp.rows_of('Single')) d) AS only_batched,
       (SELECT count(*) FROM (SELECT * FROM pg_temp.rows_of('Single') EXCEPT SELECT * FROM pg_temp.rows_of('Batched')) d) AS only_single,
       (SELECT count(*) FROM public."Batched" WHERE expires_at IS NOT NULL) AS with_expiry;
SELECT pk::text AS p, sk::text AS s, item ->> 'status' AS status FROM public."Batched" ORDER BY pk, sk;
-- capacity is rounded up item by item: each put of about 1.6 KB is 2 units (their sizes
-- summed first would make fewer), each delete 1
SELECT response #> '{ConsumedCapacity,0,Table,CapacityUnits}' AS table_units,
       (SELECT sum(ceil(item_size / 1024.0)) + 2 FROM public."Batched" WHERE item ->> 'placed' LIKE '2026-02%') AS rounded_per_item,
       (SELECT ceil(sum(item_size) / 1024.0) + 2 FROM public."Batched" WHERE item ->> 'placed' LIKE '2026-02%') AS rounded_once
FROM batched;
SELECT (SELECT jsonb_agg(i) FROM ddb.scan('BatchedSolo') i) AS solo,
       (SELECT jsonb_agg(i) FROM ddb.scan('BatchedSolo') i) = (SELECT jsonb_agg(i) FROM ddb.scan('SingleSolo') i) AS solo_alike;
-- the expired item is hidden, the other TTL item is not
SELECT ddb.execute('GetItem', '{"TableName": "Batched", "Key": {"pk": {"S": "c2"}, "sk": {"N": "7"}}}') AS expired,
       ddb.execute('GetItem', '{"TableName": "Batched", "Key": {"pk": {"S": "c1"}, "sk": {"N": "8"}}, "ProjectionExpression": "sk"}') AS kept;
-- the indexes' entries alike
SELECT i AS index_name,
       (SELECT jsonb_agg(e) FROM ddb.scan('Batched', i) e) = (SELECT jsonb_agg(e) FROM ddb.scan('Single', i) e) AS alike,
       (SELECT count(*) FROM ddb.scan('Batched', i)) AS entries
FROM unnest(ARRAY['ByStatus', 'ByPlaced']) i;
SELECT jsonb_path_query_array(ddb.execute('Query', '{"TableName": "Batched", "IndexName": "ByStatus",
    "KeyConditionExpression": "#s = :s", "ExpressionAttributeNames": {"#s": "status"},
    "ExpressionAttributeValues": {":s": {"S": "S1"}}}') -> 'Items', '$[*].sk.N') AS s1_by_status;

-- the stream records alike and in the same order: keys, both images
CREATE FUNCTION pg_temp.stream_records(t text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  arn text := ddb.execute('DescribeTable', jsonb_build_object('TableName', t)) -> 'Table' ->> 'LatestStreamArn';
  it text := ddb.execute('GetShardIterator', jsonb_build_object('StreamArn', arn,
      'ShardId', ddb.execute('DescribeStream', jsonb_build_object('StreamArn', arn)) -> 'StreamDescription' -> 'Shards' -> 0 ->> 'ShardId',
      'ShardIteratorType', 'TRIM_HORIZON')) ->> 'ShardIterator';
BEGIN
  RETURN (SELECT jsonb_agg(jsonb_build_array(r ->> 'eventName', r -> 'dynamodb' -> 'Keys', r -> 'dynamodb' -> 'NewImage',
                                             r -> 'dynamodb' -> 'OldImage'))
          FROM jsonb_array_elements(ddb.execute('GetRecords', jsonb_build_object('ShardIterator', it)) -> 'Records') r);
END $$;
SELECT jsonb_array_length(pg_temp.stream_records('Batched')) AS records,
       pg_temp.stream_records('Batched') = pg_temp.stream_records('Single') AS alike,
       jsonb_path_query_array(pg_temp.stream_records('Batched'), '$[6 to 12][0]') AS events_of_the_batch;

-- the point-in-time history alike, version by version in order
SELECT (SELECT count(*) FROM public."Batched$pitr") AS versions,
       (SELECT jsonb_agg(jsonb_build_array(pk::text, sk::text, item, item_size) ORDER BY pk, sk, change_order) FROM public."Batched$pitr")
     = (SELECT jsonb_agg(jsonb_build_array(pk::text, sk::text, item, item_size) ORDER BY pk, sk, change_order) FROM public."Single$pitr")
       AS alike;

-- Checks, before anything is written: an error in the 25th write leaves the
-- 24 before it unwritten (the batch is one statement's work)
CREATE FUNCTION pg_temp.batch(last jsonb, first jsonb DEFAULT NULL) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('RequestItems', jsonb_build_object('Batched',
    (SELECT jsonb_agg(coalesce(CASE WHEN i = 1 THEN first WHEN i = 25 THEN last END,
        jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object(
            'pk', '{"S": "c9"}'::jsonb, 'sk', jsonb_build_object('N', i::text), 'status', '{"S": "NEW"}'::jsonb))))
        ORDER BY i)
     FROM generate_series(1, 25) i))) $$;
CREATE FUNCTION pg_temp.put_of(item jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('PutRequest', jsonb_build_object('Item', item)) $$;
SELECT pg_temp.try('BatchWriteItem', pg_temp.batch(pg_temp.put_of(jsonb_build_object('pk', '{"S": "c9"}'::jsonb,
           'sk', '{"N": "25"}'::jsonb, 'pad', jsonb_build_object('S', repeat('x', 400 * 1024)))))) AS too_big,
       pg_temp.try('BatchWriteItem', pg_temp.batch(pg_temp.put_of('{"pk": {"S": "c9"}, "sk": {"S": "25"}}'))) AS key_type,
       pg_temp.try('BatchWriteItem', pg_temp.batch(pg_temp.put_of('{"pk": {"S": "c9"}, "sk": {"N": "25"}, "status": {"N": "1"}}')))
           AS index_key_type,
       pg_temp.try('BatchWriteItem', pg_temp.batch(pg_temp.put_of('{"pk": {"S": "c9"}, "sk": {"N": "24"}}'))) AS duplicate,
       pg_temp.try('BatchWriteItem', pg_temp.batch(pg_temp.put_of('{"pk": {"S": "c9"}, "sk": {"N": "25"}, "e": {"SS": []}}')))
           AS empty_set;
-- a too large item first and a key of the wrong type last: the key's error, as before (every
-- write's key is checked before any item's size, which is checked as the writes are made)
SELECT pg_temp.try('BatchWriteItem', pg_temp.batch(pg_temp.put_of('{"pk": {"S": "c9"}, "sk": {"S": "25"}}'),
           pg_temp.put_of(jsonb_build_object('pk', '{"S": "c9"}'::jsonb, 'sk', '{"N": "1"}'::jsonb,
                                             'pad', jsonb_build_object('S', repeat('x', 400 * 1024)))))) AS first_error;
-- a 26th write is refused whole
SELECT regexp_replace(pg_temp.try('BatchWriteItem', jsonb_insert(pg_temp.batch(NULL), '{RequestItems,Batched,24}',
           pg_temp.put_of('{"pk": {"S": "c9"}, "sk": {"N": "26"}}'), true)), 'Value .* at', 'Value ... at') AS twenty_six;
SELECT (SELECT count(*) FROM public."Batched" WHERE pk = 'c9') AS c9_items,
       (SELECT count(*) FROM ddb.scan('Batched', 'ByStatus') e WHERE e ->> 'status' = 'NEW') AS c9_entries,
       jsonb_array_length(pg_temp.stream_records('Batched')) AS records,
       (SELECT count(*) FROM public."Batched$pitr") AS versions;
-- and the same batch without the error is written whole
SELECT pg_temp.try('BatchWriteItem', pg_temp.batch(pg_temp.put_of('{"pk": {"S": "c9"}, "sk": {"N": "25"}, "status": {"S": "NEW"}}'))) AS valid;
SELECT (SELECT count(*) FROM public."Batched" WHERE pk = 'c9') AS c9_items,
       (SELECT count(*) FROM ddb.scan('Batched', 'ByStatus') e WHERE e ->> 'status' = 'NEW') AS c9_entries;

-- Throttling: a write is admitted after the index entries of the writes
-- before it are counted.  The index keeps 300 units: 200 KB items take 200
-- each, so the first two puts pass and the third comes back unprocessed.
SET ddb.throttling = on;
SELECT ddb.execute('CreateTable', '{"TableName": "BatchMetered", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "city", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 100, "WriteCapacityUnits": 100},
    "GlobalSecondaryIndexes": [{"IndexName": "ByCity", "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}]}')
    -> 'TableDescription' -> 'TableStatus';
SELECT jsonb_path_query_array(r, '$.UnprocessedItems.BatchMetered[*].PutRequest.Item.pk.S') AS unprocessed,
       r -> 'ConsumedCapacity' AS consumed
FROM ddb.execute('BatchWriteItem', jsonb_build_object('ReturnConsumedCapacity', 'INDEXES', 'RequestItems', jsonb_build_object('BatchMetered',
    (SELECT jsonb_agg(pg_temp.put_of(jsonb_build_object('pk', jsonb_build_object('S', 'k' || i), 'city', '{"S": "Oslo"}'::jsonb,
                                                        'big', jsonb_build_object('S', repeat('x', 200 * 1024 - 64)))))
     FROM generate_series(1, 3) i)))) r;
SELECT pk::text FROM public."BatchMetered" ORDER BY pk;
RESET ddb.throttling;

-- the tables go, with their stream records and histories
SELECT ddb.delete_table(t) FROM unnest(ARRAY['Batched', 'BatchedSolo', 'Single', 'SingleSolo', 'BatchMetered']) t;
SELECT count(*) AS records_left FROM ddb.stream_records WHERE table_name IN ('Batched', 'Single');
SELECT to_regclass('public."Batched$pitr"') AS batched_history, to_regclass('public."Single$pitr"') AS single_history;
