-- DynamoDB Streams through ddb.execute: StreamSpecification on CreateTable
-- and UpdateTable, ListStreams, DescribeStream, GetShardIterator, GetRecords.
\set SHOW_CONTEXT never
\set VERBOSITY terse
CREATE FUNCTION stream_arn(t text) RETURNS text LANGUAGE sql AS $$
  SELECT ddb.execute('DescribeTable', jsonb_build_object('TableName', t)) -> 'Table' ->> 'LatestStreamArn' $$;
CREATE FUNCTION iterator(t text, kind text DEFAULT 'TRIM_HORIZON', seq text DEFAULT NULL) RETURNS text LANGUAGE sql AS $$
  SELECT ddb.execute('GetShardIterator', jsonb_strip_nulls(jsonb_build_object('StreamArn', stream_arn(t),
    'ShardId', ddb.execute('DescribeStream', jsonb_build_object('StreamArn', stream_arn(t)))
               -> 'StreamDescription' -> 'Shards' -> 0 ->> 'ShardId',
    'ShardIteratorType', kind, 'SequenceNumber', seq))) ->> 'ShardIterator' $$;
-- the records of a stream from an iterator, without what changes from run to run
CREATE FUNCTION records(it text, page int DEFAULT 1000) RETURNS TABLE (event text, keys jsonb, new_image jsonb, old_image jsonb, seq text)
LANGUAGE sql AS $$
  SELECT r->>'eventName', r->'dynamodb'->'Keys', r->'dynamodb'->'NewImage', r->'dynamodb'->'OldImage',
         r->'dynamodb'->>'SequenceNumber'
  FROM jsonb_array_elements(ddb.execute('GetRecords', jsonb_build_object('ShardIterator', it, 'Limit', page)) -> 'Records') r $$;
CREATE FUNCTION create_stream_table(name text, view_type text, partitions int DEFAULT 0) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('ddb.default_partitions', partitions::text, true);
  RETURN ddb.execute('CreateTable', jsonb_build_object('TableName', name, 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]'::jsonb,
    'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]'::jsonb,
    'StreamSpecification', jsonb_build_object('StreamEnabled', true, 'StreamViewType', view_type))) -> 'TableDescription' -> 'StreamSpecification';
END $$;

-- A stream on a partitioned table: INSERT, MODIFY, REMOVE in commit order, both images
SELECT create_stream_table('Feed', 'NEW_AND_OLD_IMAGES', 2);
SELECT stream_arn('Feed') LIKE 'arn:aws:dynamodb:ddb-model:000000000000:table/Feed/stream/%' AS arn_shape;
SELECT ddb.execute('PutItem', '{"TableName": "Feed", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "one"}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Feed", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "UpdateExpression": "SET v = :v", "ExpressionAttributeValues": {":v": {"S": "two"}}}');
-- the same item again is no change, a rolled-back write leaves no record
SELECT ddb.execute('PutItem', '{"TableName": "Feed", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "two"}}}');
BEGIN;
SELECT ddb.execute('PutItem', '{"TableName": "Feed", "Item": {"pk": {"S": "gone"}, "sk": {"N": "1"}}}');
ROLLBACK;
SELECT ddb.execute('DeleteItem', '{"TableName": "Feed", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}}');
SELECT ddb.put_item('Feed', '{"pk": "b", "sk": 2}');
SELECT event, keys, new_image, old_image FROM records(iterator('Feed'));
SELECT count(*) AS increasing FROM (SELECT seq, lag(seq) OVER () AS before FROM records(iterator('Feed'))) s WHERE seq > before;
-- a full record
SELECT r - 'eventID' - 'dynamodb' AS record, (r->'dynamodb') - 'ApproximateCreationDateTime' - 'SequenceNumber' AS dynamodb
FROM jsonb_array_elements(ddb.execute('GetRecords', jsonb_build_object('ShardIterator', iterator('Feed'), 'Limit', 1)) -> 'Records') r;

-- Iterators: pages with NextShardIterator, LATEST, AT_ and AFTER_SEQUENCE_NUMBER
SELECT jsonb_array_length(p->'Records') AS first_page,
       jsonb_array_length(ddb.execute('GetRecords', jsonb_build_object('ShardIterator', p->>'NextShardIterator'))->'Records') AS rest
FROM (SELECT ddb.execute('GetRecords', jsonb_build_object('ShardIterator', iterator('Feed'), 'Limit', 2)) AS p) x;
SELECT count(*) AS after_latest FROM records(iterator('Feed', 'LATEST'));
SELECT event FROM records(iterator('Feed', 'AT_SEQUENCE_NUMBER', (SELECT seq FROM records(iterator('Feed')) OFFSET 1 LIMIT 1)));
SELECT event FROM records(iterator('Feed', 'AFTER_SEQUENCE_NUMBER', (SELECT seq FROM records(iterator('Feed')) OFFSET 1 LIMIT 1)));
-- an iterator taken at LATEST sees what comes after it
CREATE TEMP TABLE latest AS SELECT iterator('Feed', 'LATEST') AS it;
SELECT ddb.put_item('Feed', '{"pk": "c", "sk": 3}');
SELECT event, keys FROM records((SELECT it FROM latest));

-- View types: NEW_IMAGE, OLD_IMAGE, KEYS_ONLY
SELECT create_stream_table('FeedNew', 'NEW_IMAGE'), create_stream_table('FeedOld', 'OLD_IMAGE'),
       create_stream_table('FeedKeys', 'KEYS_ONLY');
SELECT ddb.put_item(t, '{"pk": "a", "sk": 1, "v": 1}'), ddb.put_item(t, '{"pk": "a", "sk": 1, "v": 2}'),
       ddb.delete_item(t, 'a', '\d1')
FROM unnest(ARRAY['FeedNew', 'FeedOld', 'FeedKeys']) t;
SELECT t, event, new_image, old_image FROM unnest(ARRAY['FeedNew', 'FeedOld', 'FeedKeys']) t, records(iterator(t)) r;

-- ListStreams and DescribeStream
SELECT s->>'TableName' AS table_name FROM jsonb_array_elements(ddb.execute('ListStreams', '{}')->'Streams') s ORDER BY 1;
SELECT ddb.execute('ListStreams', '{"TableName": "FeedOld"}')->'Streams'->0->>'TableName';
SELECT jsonb_array_length(ddb.execute('ListStreams', '{"Limit": 2}')->'Streams') AS page,
       ddb.execute('ListStreams', '{"Limit": 2}') ? 'LastEvaluatedStreamArn' AS more;
SELECT (ddb.execute('DescribeStream', jsonb_build_object('StreamArn', stream_arn('Feed')))->'StreamDescription')
       - 'StreamArn' - 'StreamLabel' - 'CreationRequestDateTime' - 'Shards' AS description;

-- UpdateTable: disable, then a new stream with a new label
SELECT ddb.execute('UpdateTable', '{"TableName": "FeedKeys", "StreamSpecification": {"StreamEnabled": false}}')
       -> 'TableDescription' ? 'StreamSpecification' AS still_enabled;
SELECT ddb.execute('DescribeStream', jsonb_build_object('StreamArn', stream_arn('FeedKeys')))->'StreamDescription'->>'StreamStatus';
SELECT ddb.put_item('FeedKeys', '{"pk": "unrecorded", "sk": 1}');
SELECT count(*) AS records_of_a_disabled_stream FROM records(iterator('FeedKeys'));
CREATE TEMP TABLE old_arn AS SELECT stream_arn('FeedKeys') AS arn;
SELECT pg_sleep(0.01);
SELECT ddb.execute('UpdateTable', '{"TableName": "FeedKeys", "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_IMAGE"}}')
       -> 'TableDescription' -> 'StreamSpecification';
SELECT stream_arn('FeedKeys') <> (SELECT arn FROM old_arn) AS new_stream, count(*) AS records_in_it FROM records(iterator('FeedKeys'));

-- Errors
DO $$ BEGIN
  PERFORM ddb.execute('UpdateTable', '{"TableName": "Feed", "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"}}');
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE '% %', SQLSTATE, regexp_replace(SQLERRM, '/stream/.*', '/stream/<label>');
END $$;
SELECT ddb.execute('UpdateTable', '{"TableName": "FeedOld", "StreamSpecification": {"StreamEnabled": false, "StreamViewType": "KEYS_ONLY"}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "FeedOld", "StreamSpecification": {"StreamEnabled": true}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "FeedOld", "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "ALL"}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "FeedOld", "StreamSpecification": {}}');
SELECT create_stream_table('NoStream', 'NEW_IMAGE') IS NOT NULL,
       ddb.execute('UpdateTable', '{"TableName": "NoStream", "StreamSpecification": {"StreamEnabled": false}}') IS NOT NULL;
SELECT ddb.execute('UpdateTable', '{"TableName": "NoStream", "StreamSpecification": {"StreamEnabled": false}}');
SELECT ddb.execute('DescribeStream', '{"StreamArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Feed/stream/nope"}');
SELECT ddb.execute('DescribeStream', '{}');
SELECT ddb.execute('GetShardIterator', jsonb_build_object('StreamArn', stream_arn('Feed'), 'ShardId', 'shardId-x', 'ShardIteratorType', 'LATEST'));
SELECT ddb.execute('GetShardIterator', jsonb_build_object('StreamArn', stream_arn('Feed'),
  'ShardId', ddb.execute('DescribeStream', jsonb_build_object('StreamArn', stream_arn('Feed')))->'StreamDescription'->'Shards'->0->>'ShardId',
  'ShardIteratorType', 'SOMEWHERE'));
SELECT ddb.execute('GetShardIterator', jsonb_build_object('StreamArn', stream_arn('Feed'),
  'ShardId', ddb.execute('DescribeStream', jsonb_build_object('StreamArn', stream_arn('Feed')))->'StreamDescription'->'Shards'->0->>'ShardId',
  'ShardIteratorType', 'AT_SEQUENCE_NUMBER'));
SELECT ddb.execute('GetRecords', '{"ShardIterator": "not an iterator"}');
-- an iterator of 0.1 (plain base64), and one sealed for a stream that is gone
SELECT ddb.execute('GetRecords', '{"ShardIterator": "WyJOb3BlIiwgIngiLCAwXQ=="}');
SELECT create_stream_table('GoneStream', 'KEYS_ONLY') IS NOT NULL AS created;
SELECT iterator('GoneStream') AS gone_iterator \gset
SELECT ddb.execute('DeleteTable', '{"TableName": "GoneStream"}') IS NOT NULL AS deleted;
SELECT ddb.execute('GetRecords', jsonb_build_object('ShardIterator', :'gone_iterator'));
-- no iterator is sealed for a table that is not there (src/request/tokens.c)
SELECT ddb.stream_iterator('Nope', 'x', 0);
SELECT ddb.execute('GetRecords', jsonb_build_object('ShardIterator', iterator('Feed'), 'Limit', 0));
SELECT ddb.execute('ListStreams', '{"TableName": "Nope"}');
SELECT ddb.execute('ListStreams', '{"Limit": "2"}');
SELECT ddb.execute('GetRecords', jsonb_build_object('ShardIterator', iterator('Feed'), 'Limit', 1.5));
-- iterators that decode but do not hold a position
DO $$
DECLARE
  p jsonb;
BEGIN
  FOREACH p IN ARRAY ARRAY['"x"', '-5', '1.5', '1e30', 'null']::jsonb[] LOOP
    BEGIN
      PERFORM ddb.execute('GetRecords', jsonb_build_object('ShardIterator',
        translate(encode(convert_to(jsonb_build_array('Feed', (SELECT stream_label FROM ddb.tables WHERE table_name = 'Feed'), p)::text,
                                    'UTF8'), 'base64'), E'\n', '')));
    EXCEPTION WHEN OTHERS THEN
      RAISE NOTICE '%: % %', p, SQLSTATE, SQLERRM;
    END;
  END LOOP;
END $$;

-- Retention and DeleteTable
SELECT ddb.trim_stream_records() AS trimmed_now;
UPDATE ddb.stream_records SET created_at = now() - interval '25 hours' WHERE table_name = 'FeedNew';
SELECT count(*) AS past_retention_unread FROM records(iterator('FeedNew'));
SELECT ddb.trim_stream_records() AS trimmed;
SELECT ddb.delete_table(t) FROM unnest(ARRAY['Feed', 'FeedNew', 'FeedOld', 'FeedKeys', 'NoStream']) t;
SELECT count(*) AS records_left FROM ddb.stream_records;
DROP FUNCTION records(text, int), iterator(text, text, text), stream_arn(text), create_stream_table(text, text, int);
