-- The main job's demo: the key type and a DynamoDB table at work (tools/demo/ has the models).
\pset footer off
\echo
\echo '== ddb_key: one DynamoDB key value (S, N or B) in DynamoDB order'
SELECT k AS key, ddb.key_type(k) AS type
FROM (VALUES ('USER#abc-123'::ddb.ddb_key), ('\d-1.5e3'), ('\x00ff10')) v(k);

\echo '== composite keys from segments, and back'
SELECT ddb.key('EVAL_RESULTS', 'item-9', 'acct-3', '2024-02-10T14:30:00Z') AS key,
       ddb.segment('EVAL_RESULTS#item-9#acct-3#2024-02-10T14:30:00Z', 2) AS segment_2;

\echo '== DynamoDB order: numbers numerically, strings by UTF-8 bytes'
SELECT string_agg(k::text, '  ' ORDER BY k) AS sorted
FROM (VALUES ('\d10'::ddb.ddb_key), ('\d9'), ('\d-1'), ('a'), ('Z'), ('USER#10'), ('USER#2')) v(k);

\echo '== begins_with (^@) versus the segment-aware prefix (<@)'
CREATE TABLE IF NOT EXISTS demo_keys (pk ddb.ddb_key PRIMARY KEY);
INSERT INTO demo_keys VALUES ('USER#1'), ('USER#1#EMAIL#a@example.com'), ('USER#10'), ('USER#10#PROFILE')
ON CONFLICT DO NOTHING;
SELECT pk, pk ^@ 'USER#1' AS "^@ USER#1", pk <@ 'USER#1' AS "<@ USER#1" FROM demo_keys ORDER BY pk;

\echo '== a prefix query is an index range scan'
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM demo_keys WHERE pk <@ 'USER#1';
RESET enable_seqscan;

\echo
\echo '== a DynamoDB table through ddb.execute: CreateTable with a GSI and TTL'
SELECT ddb.execute('CreateTable', '{
  "TableName": "DemoUsers", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"},
                           {"AttributeName": "GSI1PK", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "GSI1", "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"}],
                              "Projection": {"ProjectionType": "ALL"}}]}') -> 'TableDescription' ->> 'TableStatus' AS status;
SELECT ddb.execute('UpdateTimeToLive', '{"TableName": "DemoUsers",
  "TimeToLiveSpecification": {"AttributeName": "ttl", "Enabled": true}}') AS ttl;

\echo '== PutItem (DynamoDB JSON) and ddb.put_item (natural JSON)'
SELECT ddb.execute('PutItem', '{"TableName": "DemoUsers", "Item": {"PK": {"S": "USER#abc-123"}, "SK": {"S": "PROFILE"},
  "firstName": {"S": "Ann"}, "status": {"S": "active"}, "version": {"N": "1"}}}') AS put;
SELECT ddb.put_item('DemoUsers', '{"PK": "USER#abc-123", "SK": "EMAIL#e1", "GSI1PK": "EMAIL#ann@example.com",
                                   "email": "ann@example.com", "isPrimary": true, "isVerified": true}');
SELECT ddb.put_item('DemoUsers', jsonb_build_object('PK', 'USER#abc-123', 'SK', 'SESSION#1',
                    'ttl', extract(epoch FROM now())::bigint - 60));

\echo '== Query PK = USER#abc-123 (the expired session is already invisible)'
SELECT jsonb_pretty(ddb.execute('Query', '{"TableName": "DemoUsers", "KeyConditionExpression": "PK = :pk",
  "ExpressionAttributeValues": {":pk": {"S": "USER#abc-123"}}}'));
\echo '== the same through SQL, and the GSI login lookup'
SELECT item->>'SK' AS sk, item FROM ddb.query('DemoUsers', 'USER#abc-123', 'begins_with', 'EMAIL#') item;
SELECT item->>'PK' AS user_of_address FROM ddb.query('DemoUsers', 'EMAIL#ann@example.com', index_name => 'GSI1') item;

\echo '== the TTL sweep deletes what expired, GSI entries included'
SELECT ddb.expire('DemoUsers') AS expired_items_deleted;
SELECT count(*) AS gsi_mismatches FROM ddb.verify_gsi('DemoUsers');
\echo '== and it is an ordinary PostgreSQL table'
SELECT pk, sk, item_size FROM public."DemoUsers" ORDER BY pk, sk;
