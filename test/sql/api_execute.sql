-- ddb.execute: DynamoDB's JSON protocol for tables and items.
\set SHOW_CONTEXT never

-- CreateTable with a GSI, then DescribeTable and ListTables.
SELECT jsonb_pretty(ddb.execute('CreateTable', '{
  "TableName": "Orders",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
                           {"AttributeName": "status", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "ByStatus",
                              "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"},
                                            {"AttributeName": "sk", "KeyType": "RANGE"}],
                              "Projection": {"ProjectionType": "KEYS_ONLY"}}],
  "BillingMode": "PAY_PER_REQUEST"}') #- '{TableDescription,CreationDateTime}' #- '{TableDescription,TableId}');
-- (the models' tables are listed too; they are left out here)
SELECT coalesce(jsonb_agg(n), '[]') AS table_names
FROM jsonb_array_elements_text(ddb.execute('ListTables', '{}') -> 'TableNames') n
WHERE n NOT IN (SELECT table_name FROM ddb.tables WHERE model IS NOT NULL);
SELECT ddb.execute('DescribeTimeToLive', '{"TableName": "Orders"}');

-- Every AttributeValue type round-trips unchanged (numbers canonical, sets in canonical order).
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {
  "pk": {"S": "CUST#1"}, "sk": {"N": "1"}, "status": {"S": "OPEN"},
  "s": {"S": "text"}, "n": {"N": "-12.50"}, "b": {"B": "3q2+7w=="}, "t": {"BOOL": true}, "z": {"NULL": true},
  "ss": {"SS": ["y", "x"]}, "ns": {"NS": ["2.5", "1"]}, "bs": {"BS": ["AgM=", "AAE="]},
  "m": {"M": {"inner": {"L": [{"S": "a"}, {"N": "1e3"}, {"M": {}}]}, "$B": {"S": "a map key"}}},
  "empty": {"S": ""}}}');
SELECT ddb.execute('GetItem', '{"TableName": "Orders", "Key": {"pk": {"S": "CUST#1"}, "sk": {"N": "1.0"}}}');
SELECT item FROM public."Orders" WHERE pk = 'CUST#1';

-- ReturnValues ALL_OLD on PutItem and DeleteItem.
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "CUST#1"}, "sk": {"N": "1"}, "status": {"S": "PAID"}},
                   "ReturnValues": "ALL_OLD"}') -> 'Attributes' -> 'status';
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "CUST#1"}, "sk": {"N": "2"}}, "ReturnValues": "ALL_OLD"}');
SELECT ddb.execute('DeleteItem', '{"TableName": "Orders", "Key": {"pk": {"S": "CUST#1"}, "sk": {"N": "2"}}, "ReturnValues": "ALL_OLD"}');
SELECT ddb.execute('DeleteItem', '{"TableName": "Orders", "Key": {"pk": {"S": "CUST#1"}, "sk": {"N": "2"}}}');
SELECT ddb.execute('GetItem', '{"TableName": "Orders", "Key": {"pk": {"S": "CUST#1"}, "sk": {"N": "2"}}}');

-- BatchWriteItem: 25 puts in one call; BatchGetItem reads them back.
SELECT ddb.execute('BatchWriteItem', jsonb_build_object('RequestItems', jsonb_build_object('Orders',
    (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object(
        'pk', jsonb_build_object('S', 'CUST#2'), 'sk', jsonb_build_object('N', i::text),
        'status', jsonb_build_object('S', CASE WHEN i % 2 = 0 THEN 'OPEN' ELSE 'PAID' END),
        'pad', jsonb_build_object('S', repeat('x', 100000))))))
     FROM generate_series(1, 25) i))));
SELECT jsonb_array_length(ddb.execute('BatchGetItem', '{"RequestItems": {"Orders": {"Keys": [
    {"pk": {"S": "CUST#2"}, "sk": {"N": "3"}}, {"pk": {"S": "CUST#2"}, "sk": {"N": "30"}},
    {"pk": {"S": "CUST#1"}, "sk": {"N": "1"}}]}}}') -> 'Responses' -> 'Orders') AS found;
-- a table's keys are read in one statement: the items come back in the keys' order, a
-- table without a sort key too, and an expired item (TTL) is left out as GetItem leaves it out
SELECT count(*) AS created FROM ddb.create_table('Solo', 'id', 'S', ttl_attribute => 'ttl');
SELECT count(*) AS put FROM (SELECT ddb.put_item('Solo', jsonb_strip_nulls(jsonb_build_object('id', 'S' || i,
    'n', i, 'ttl', CASE WHEN i = 2 THEN extract(epoch FROM now())::bigint - 60 END))) FROM generate_series(1, 3) i) p;
SELECT r -> 'Responses' -> 'Solo' AS solo,
       jsonb_path_query_array(r -> 'Responses' -> 'Orders', '$[*].sk.N') AS orders
FROM ddb.execute('BatchGetItem', '{"RequestItems": {
    "Solo": {"Keys": [{"id": {"S": "S3"}}, {"id": {"S": "S2"}}, {"id": {"S": "S9"}}, {"id": {"S": "S1"}}],
             "ProjectionExpression": "id, n"},
    "Orders": {"Keys": [{"pk": {"S": "CUST#2"}, "sk": {"N": "7"}}, {"pk": {"S": "CUST#2"}, "sk": {"N": "4"}},
                        {"pk": {"S": "CUST#2"}, "sk": {"N": "5"}}], "ProjectionExpression": "sk"}}}') r;
SELECT count(*) AS dropped FROM ddb.delete_table('Solo');

-- Query: key conditions, direction, Limit, 1 MB pages and ExclusiveStartKey.
SELECT r -> 'Count' AS count, r -> 'LastEvaluatedKey' AS last_key
FROM ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
     "ExpressionAttributeValues": {":p": {"S": "CUST#2"}, ":a": {"N": "3"}, ":b": {"N": "5"}}, "Select": "COUNT"}') r;
SELECT (SELECT array_agg(i -> 'sk' ->> 'N') FROM jsonb_array_elements(r -> 'Items') i) AS sks, r -> 'LastEvaluatedKey' AS last_key
FROM ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "#p = :p AND #s > :s",
     "ExpressionAttributeNames": {"#p": "pk", "#s": "sk"},
     "ExpressionAttributeValues": {":p": {"S": "CUST#2"}, ":s": {"N": "20"}}, "ScanIndexForward": false, "Limit": 3}') r;
-- 25 items of 100 kB: a page holds 10 (1 MB), three pages read them all.
WITH RECURSIVE pages(n, response) AS (
  SELECT 1, ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p",
                                   "ExpressionAttributeValues": {":p": {"S": "CUST#2"}}}')
  UNION ALL
  SELECT n + 1, ddb.execute('Query', jsonb_build_object('TableName', 'Orders', 'KeyConditionExpression', 'pk = :p',
                                   'ExpressionAttributeValues', '{":p": {"S": "CUST#2"}}'::jsonb,
                                   'ExclusiveStartKey', response -> 'LastEvaluatedKey'))
  FROM pages WHERE response ? 'LastEvaluatedKey')
SELECT n AS page, response -> 'Count' AS count, response -> 'LastEvaluatedKey' AS last_key,
       (SELECT sum(length(i -> 'pad' ->> 'S')) FROM jsonb_array_elements(response -> 'Items') i) AS pad_bytes_intact
FROM pages;

-- Query on the GSI (KEYS_ONLY): keys of the table and of the index.
SELECT ddb.execute('Query', '{"TableName": "Orders", "IndexName": "ByStatus",
     "KeyConditionExpression": "#st = :s AND sk <= :n", "ExpressionAttributeNames": {"#st": "status"},
     "ExpressionAttributeValues": {":s": {"S": "OPEN"}, ":n": {"N": "4"}}}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "IndexName": "ByStatus", "KeyConditionExpression": "#st = :s",
     "ExpressionAttributeNames": {"#st": "status"}, "ExpressionAttributeValues": {":s": {"S": "PAID"}},
     "Limit": 2}') -> 'LastEvaluatedKey' AS index_last_key;

-- Scan: Select COUNT (still 1 MB pages), segments (each pages alike), an index.
SELECT ddb.execute('Scan', '{"TableName": "Orders", "Select": "COUNT"}');
SELECT sum((ddb.execute('Scan', jsonb_build_object('TableName', 'Orders', 'Segment', s, 'TotalSegments', 3,
                                                    'Select', 'COUNT')) ->> 'Count')::int) AS all_segments
FROM generate_series(0, 2) s;
SELECT ddb.execute('Scan', '{"TableName": "Orders", "IndexName": "ByStatus", "Limit": 1}') -> 'Items' AS first_index_entry;

-- Errors: DynamoDB's message, and its error body as DETAIL.
SELECT ddb.execute('GetItem', '{"TableName": "Nope", "Key": {"pk": {"S": "x"}}}');
SELECT ddb.execute('GetItem', '{"TableName": "Orders", "Key": {"pk": {"S": "x"}}}');
SELECT ddb.execute('GetItem', '{"TableName": "Orders", "Key": {"pk": {"S": "x"}, "sk": {"S": "1"}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "x"}, "sk": {"N": "1"}, "bad": {"S": "a", "N": "1"}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "x"}, "sk": {"N": "1"}, "bad": {}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "x"}, "sk": {"N": "1"}, "n": {"N": "12e999"}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "x"}, "sk": {"N": "1"}, "z": {"NULL": false}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "x"}, "sk": {"N": "1"}, "ss": {"SS": ["a", "a"]}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "x"}, "sk": {"N": "1"}, "status": {"N": "1"}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "x"}, "sk": {"N": "1"}}, "ReturnValues": "ALL_NEW"}');
SELECT ddb.execute('PutItem', '{"TableName": "Orders"}');
SELECT ddb.execute('PutItem', '{"Item": {}}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "sk = :s", "ExpressionAttributeValues": {":s": {"N": "1"}}}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p AND pk = :p", "ExpressionAttributeValues": {":p": {"S": "x"}}}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p AND sk <> :s", "ExpressionAttributeValues": {":p": {"S": "x"}, ":s": {"N": "1"}}}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)", "ExpressionAttributeValues": {":p": {"S": "x"}, ":s": {"N": "1"}}}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"N": "1"}}}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :q", "ExpressionAttributeValues": {":p": {"S": "x"}}}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "#k = :p", "ExpressionAttributeValues": {":p": {"S": "x"}}}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p AND", "ExpressionAttributeValues": {":p": {"S": "x"}}}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk == :p", "ExpressionAttributeValues": {":p": {"S": "x"}}}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "", "ExpressionAttributeValues": {":p": {"S": "x"}}}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "x"}}, "Limit": 0}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "IndexName": "Nope", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "x"}}}');
SELECT ddb.execute('Scan', '{"TableName": "Orders", "Segment": 3, "TotalSegments": 3}');
SELECT ddb.execute('Scan', '{"TableName": "Orders", "Segment": 0}');
SELECT ddb.execute('BatchWriteItem', jsonb_build_object('RequestItems', jsonb_build_object('Orders',
    (SELECT jsonb_agg(jsonb_build_object('DeleteRequest', jsonb_build_object('Key', jsonb_build_object(
        'pk', jsonb_build_object('S', 'CUST#2'), 'sk', jsonb_build_object('N', i::text)))))
     FROM generate_series(1, 26) i))));
SELECT ddb.execute('BatchWriteItem', '{"RequestItems": {"Orders": [
    {"DeleteRequest": {"Key": {"pk": {"S": "CUST#2"}, "sk": {"N": "1"}}}},
    {"PutRequest": {"Item": {"pk": {"S": "CUST#2"}, "sk": {"N": "1.0"}}}}]}}');
SELECT ddb.execute('CreateTable', '{"TableName": "Orders", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                                    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "Other", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                                    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "Other", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "RANGE"}],
                                    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p AND sk BETWEEN :b AND :a",
     "ExpressionAttributeValues": {":p": {"S": "x"}, ":a": {"N": "1"}, ":b": {"N": "2"}}}');
SELECT ddb.execute('Query', '{"TableName": "Orders", "IndexName": "ByStatus", "ConsistentRead": true,
     "KeyConditionExpression": "#s = :s", "ExpressionAttributeNames": {"#s": "status"},
     "ExpressionAttributeValues": {":s": {"S": "OPEN"}}}');
SELECT ddb.execute('BatchGetItem', '{"RequestItems": {"Orders": {"Keys": [
    {"pk": {"S": "CUST#2"}, "sk": {"N": "3"}}, {"pk": {"S": "CUST#2"}, "sk": {"N": "3.0"}}]}}}');
SELECT ddb.execute('BatchGetItem', '{"RequestItems": {}}');
SELECT ddb.execute('BatchWriteItem', '{"RequestItems": {"Orders": []}}');
-- hostile shapes are refused, never read out of bounds
SELECT ddb.execute('BatchWriteItem', '{"RequestItems": {"Orders": [{"DeleteRequest": {"Key": ["ab", "pk"]}}]}}');
SELECT ddb.execute('GetItem', '{"TableName": "Orders", "Key": ["pk", "sk"]}');
-- DynamoDB nests maps and lists 32 levels deep at most
SELECT ddb.execute('PutItem', jsonb_build_object('TableName', 'Orders', 'Item', jsonb_build_object(
    'pk', '{"S": "deep"}'::jsonb, 'sk', '{"N": "1"}'::jsonb, 'm', nest)))
FROM (SELECT (repeat('{"L": [', 31) || '{"S": "x"}' || repeat(']}', 31))::jsonb AS nest) n;
SELECT ddb.execute('PutItem', jsonb_build_object('TableName', 'Orders', 'Item', jsonb_build_object(
    'pk', '{"S": "deep"}'::jsonb, 'sk', '{"N": "2"}'::jsonb, 'm', nest)))
FROM (SELECT (repeat('{"L": [', 40) || '{"S": "x"}' || repeat(']}', 40))::jsonb AS nest) n;
SELECT ddb.execute('DeleteItem', '{"TableName": "Orders", "Key": {"pk": {"S": "deep"}, "sk": {"N": "1"}}}');
SELECT ddb.execute('Frobnicate', '{}');
SELECT ddb.execute('GetItem', '{"TableName": "Orders", "Key": {"pk": {"S": "x"}, "sk": {"N": "1"}},
                                "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT ddb.execute('CreateTable', '{"TableName": "Other", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "LocalSecondaryIndexes": [{"IndexName": "L1", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                               "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ddb.execute('PutItem', '[]');
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "x"}, "sk": {"N": "9"}},
    "Expected": {"pk": {"Exists": false}}, "ConditionExpression": "attribute_not_exists(pk)"}');
-- the name is checked before the table is looked up, every broken constraint reported
SELECT ddb.execute('GetItem', '{"TableName": "", "Key": {"pk": {"S": "x"}}}');
SELECT ddb.execute('DeleteItem', '{"TableName": "x!", "Key": {"pk": {"S": "x"}}}');
SELECT count(*) AS items_after_errors FROM public."Orders";

-- UpdateTimeToLive / DescribeTimeToLive, and expiry through ddb.execute.
SELECT ddb.execute('UpdateTimeToLive', '{"TableName": "Orders", "TimeToLiveSpecification": {"AttributeName": "ttl", "Enabled": true}}');
SELECT ddb.execute('DescribeTimeToLive', '{"TableName": "Orders"}');
SELECT ddb.execute('PutItem', jsonb_build_object('TableName', 'Orders', 'Item', jsonb_build_object(
    'pk', jsonb_build_object('S', 'CUST#3'), 'sk', jsonb_build_object('N', '1'),
    'ttl', jsonb_build_object('N', (extract(epoch FROM now())::bigint - 1)::text))));
SELECT ddb.execute('GetItem', '{"TableName": "Orders", "Key": {"pk": {"S": "CUST#3"}, "sk": {"N": "1"}}}');
SELECT ddb.expire('Orders') AS expired;

-- A table with a partition key alone: a page that ended on its one item is the last.
SELECT ddb.execute('CreateTable', '{"TableName": "Single", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                                    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}') IS NOT NULL AS created;
SELECT ddb.execute('PutItem', '{"TableName": "Single", "Item": {"id": {"S": "a"}}}');
SELECT ddb.execute('Query', '{"TableName": "Single", "KeyConditionExpression": "id = :i",
                              "ExpressionAttributeValues": {":i": {"S": "a"}}, "Limit": 1}');
SELECT ddb.execute('Query', '{"TableName": "Single", "KeyConditionExpression": "id = :i",
                              "ExpressionAttributeValues": {":i": {"S": "a"}}, "ExclusiveStartKey": {"id": {"S": "a"}}}');
SELECT ddb.execute('DeleteTable', '{"TableName": "Single"}') -> 'TableDescription' -> 'TableStatus';

SELECT ddb.execute('DeleteTable', '{"TableName": "Orders"}') -> 'TableDescription' -> 'TableStatus';
SELECT coalesce(jsonb_agg(n), '[]') AS table_names
FROM jsonb_array_elements_text(ddb.execute('ListTables', '{}') -> 'TableNames') n
WHERE n NOT IN (SELECT table_name FROM ddb.tables WHERE model IS NOT NULL);
