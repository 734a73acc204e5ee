-- Throttling of PROVISIONED tables (docs/throttling.md): with ddb.throttling
-- on, a request to a table (or global index) whose provisioned capacity is
-- spent gets ProvisionedThroughputExceededException.  A bucket keeps up to
-- 300 seconds of unused capacity (1 unit a second: 300 units) and is charged
-- after the fact, so one request may take it below zero.  The buckets' clock
-- is moved with ddb.throttling_advance rather than waited for.
\set SHOW_CONTEXT never
SHOW ddb.throttling;
SET ddb.throttling = on;
-- a request's outcome: ok, the throttling reasons of its error, or a transaction's cancellation reasons
CREATE FUNCTION pg_temp.try(operation text, request jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    body jsonb;
BEGIN
    PERFORM ddb.execute(operation, request);
    RETURN 'ok';
EXCEPTION WHEN SQLSTATE 'YD050' THEN
    GET STACKED DIAGNOSTICS body = PG_EXCEPTION_DETAIL;
    RETURN 'throttled: ' || (SELECT string_agg(r ->> 'reason', ', ') FROM jsonb_array_elements(body -> 'ThrottlingReasons') r);
WHEN SQLSTATE 'YD003' THEN
    GET STACKED DIAGNOSTICS body = PG_EXCEPTION_DETAIL;
    RETURN 'cancelled: ' || (SELECT string_agg(concat(r ->> 'Code', ' (' || (r ->> 'Message') || ')'), ', ')
                             FROM jsonb_array_elements(body -> 'CancellationReasons') r);
END $$;
-- a PutItem of an item of about kb KB (kb write units), with more attributes
CREATE FUNCTION pg_temp.put(table_name text, pk text, kb int, more jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE sql AS $$
    SELECT jsonb_build_object('TableName', table_name, 'Item', jsonb_build_object('pk', jsonb_build_object('S', pk),
        'big', jsonb_build_object('S', repeat('x', kb * 1024 - 64))) || more)
$$;
SELECT ddb.execute('CreateTable', '{"TableName": "Prov", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}') -> 'TableDescription' -> 'ProvisionedThroughput';
-- 1 write unit a second, 300 kept: three writes of 120 units in a row pass
-- (the third takes the bucket to -60), the next is refused
SELECT ddb.execute('PutItem', pg_temp.put('Prov', 'a', 120) || '{"ReturnConsumedCapacity": "TOTAL"}') -> 'ConsumedCapacity';
SELECT pg_temp.try('PutItem', pg_temp.put('Prov', 'b', 120)), pg_temp.try('PutItem', pg_temp.put('Prov', 'c', 120));
SELECT ddb.execute('PutItem', '{"TableName": "Prov", "Item": {"pk": {"S": "d"}}}');
SELECT count(*) AS items FROM public."Prov";
-- reads have their own capacity
SELECT ddb.execute('GetItem', '{"TableName": "Prov", "Key": {"pk": {"S": "a"}}, "ProjectionExpression": "pk"}');
-- 30 seconds refill 30 units: still below zero; 31 more, and a write passes
SELECT ddb.throttling_advance(30);
SELECT pg_temp.try('PutItem', '{"TableName": "Prov", "Item": {"pk": {"S": "d"}}}');
-- the wall clock stepping back an hour: nothing refills for it, and the
-- bucket refills from then on (not an hour later, when the clock has caught up)
SELECT ddb.throttling_advance(-3600);
SELECT pg_temp.try('PutItem', '{"TableName": "Prov", "Item": {"pk": {"S": "d"}}}');
SELECT ddb.throttling_advance(31);
SELECT pg_temp.try('PutItem', '{"TableName": "Prov", "Item": {"pk": {"S": "d"}}}');
-- a day unused keeps 300 units, no more
SELECT ddb.throttling_advance(86400);
SELECT pg_temp.try('PutItem', pg_temp.put('Prov', 'a', 120)) AS first, pg_temp.try('PutItem', pg_temp.put('Prov', 'b', 120)) AS second,
       pg_temp.try('PutItem', pg_temp.put('Prov', 'c', 120)) AS third, pg_temp.try('PutItem', pg_temp.put('Prov', 'e', 1)) AS fourth;
-- the other write operations ask the same bucket; a refused one writes nothing
SELECT pg_temp.try('UpdateItem', '{"TableName": "Prov", "Key": {"pk": {"S": "d"}}, "UpdateExpression": "SET n = :n",
    "ExpressionAttributeValues": {":n": {"N": "1"}}}') AS update_item,
       pg_temp.try('DeleteItem', '{"TableName": "Prov", "Key": {"pk": {"S": "d"}}}') AS delete_item,
       pg_temp.try('ExecuteStatement', '{"Statement": "DELETE FROM \"Prov\" WHERE pk = ''d''"}') AS partiql;
SELECT item FROM public."Prov" WHERE pk = 'd';
-- reads: a strongly consistent Scan of the 360 KB reads 90 units (eventually
-- consistent, 45): four pass, the fifth is refused
SELECT i, pg_temp.try('Scan', '{"TableName": "Prov", "ConsistentRead": true, "Select": "COUNT"}')
FROM generate_series(1, 5) i;
SELECT pg_temp.try('GetItem', '{"TableName": "Prov", "Key": {"pk": {"S": "a"}}}') AS get_item,
       pg_temp.try('Query', '{"TableName": "Prov", "KeyConditionExpression": "pk = :p",
           "ExpressionAttributeValues": {":p": {"S": "a"}}}') AS query;
-- UpdateTable raising the capacity: the bucket starts full at the new rate
SELECT ddb.execute('UpdateTable', '{"TableName": "Prov",
    "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}}') -> 'TableDescription' -> 'ProvisionedThroughput';
SELECT pg_temp.try('PutItem', pg_temp.put('Prov', 'e', 1)) AS write, pg_temp.try('GetItem', '{"TableName": "Prov", "Key": {"pk": {"S": "a"}}}') AS read;

-- a global index has capacity of its own; a write to the table is refused
-- when any global index of it is out of write capacity (even one the item
-- would not enter), with DynamoDB's index message
SELECT ddb.execute('CreateTable', '{"TableName": "Indexed", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "city", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 100, "WriteCapacityUnits": 100},
    "GlobalSecondaryIndexes": [{"IndexName": "ByCity", "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}]}')
    -> 'TableDescription' -> 'TableStatus';
SELECT ddb.execute('PutItem', pg_temp.put('Indexed', 'a', 120, '{"city": {"S": "Oslo"}}') || '{"ReturnConsumedCapacity": "INDEXES"}') -> 'ConsumedCapacity';
SELECT pg_temp.try('PutItem', pg_temp.put('Indexed', 'b', 120, '{"city": {"S": "Oslo"}}')) AS second,
       pg_temp.try('PutItem', pg_temp.put('Indexed', 'c', 120, '{"city": {"S": "Oslo"}}')) AS third;
SELECT ddb.execute('PutItem', '{"TableName": "Indexed", "Item": {"pk": {"S": "d"}, "city": {"S": "Rome"}}}');
SELECT pg_temp.try('PutItem', '{"TableName": "Indexed", "Item": {"pk": {"S": "d"}}}') AS without_city,
       pg_temp.try('GetItem', '{"TableName": "Indexed", "Key": {"pk": {"S": "a"}}}') AS read_table,
       pg_temp.try('Query', '{"TableName": "Indexed", "IndexName": "ByCity", "KeyConditionExpression": "city = :c",
           "ExpressionAttributeValues": {":c": {"S": "Oslo"}}, "Select": "COUNT"}') AS read_index;
-- a Query of the index reads the index's capacity: 360 KB, 45 units a page (eventually consistent)
SELECT i, pg_temp.try('Query', '{"TableName": "Indexed", "IndexName": "ByCity", "KeyConditionExpression": "city = :c",
    "ExpressionAttributeValues": {":c": {"S": "Oslo"}}, "Select": "COUNT"}')
FROM generate_series(1, 7) i;
-- raising the index's capacity lets the table's writes through again
SELECT ddb.execute('UpdateTable', '{"TableName": "Indexed", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByCity",
    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}}]}') -> 'TableDescription' -> 'TableStatus';
SELECT pg_temp.try('PutItem', '{"TableName": "Indexed", "Item": {"pk": {"S": "d"}, "city": {"S": "Rome"}}}');

-- BatchWriteItem: the writes are admitted one by one (by table, then key)
-- while their table holds capacity; the others come back unprocessed, and
-- when none could be written the request is refused
SELECT ddb.execute('CreateTable', '{"TableName": "Batch", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}') -> 'TableDescription' -> 'TableStatus';
SELECT ddb.create_table('OnDemand', 'pk');
SELECT ddb.execute('BatchWriteItem', jsonb_build_object('ReturnConsumedCapacity', 'TOTAL', 'RequestItems', jsonb_build_object(
    'Batch', jsonb_build_array(jsonb_build_object('PutRequest', pg_temp.put('Batch', 'k1', 200) - 'TableName'),
                               jsonb_build_object('PutRequest', pg_temp.put('Batch', 'k2', 200) - 'TableName'),
                               '{"DeleteRequest": {"Key": {"pk": {"S": "k3"}}}}'::jsonb,
                               '{"PutRequest": {"Item": {"pk": {"S": "k4"}}}}'::jsonb),
    'OnDemand', '[{"PutRequest": {"Item": {"pk": {"S": "o1"}}}}]'::jsonb)));
SELECT pk::text FROM public."Batch" ORDER BY pk;
SELECT ddb.execute('BatchWriteItem', '{"RequestItems": {"Batch": [{"PutRequest": {"Item": {"pk": {"S": "k4"}}}}]}}');
-- BatchGetItem: keys admitted one by one while the table holds read
-- capacity (eventually consistent: 390 KB reads 49 units; 7 keys pass, the 8th waits)
SELECT ddb.execute('CreateTable', '{"TableName": "Reads", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}') -> 'TableDescription' -> 'TableStatus';
-- (the SQL functions are never throttled)
SELECT count(*) FROM generate_series(1, 8) i, ddb.put_item('Reads', jsonb_build_object('pk', 'k' || i, 'big', repeat('x', 390 * 1024)));
SELECT jsonb_array_length(r -> 'Responses' -> 'Reads') AS served, r -> 'UnprocessedKeys' AS unprocessed
FROM ddb.execute('BatchGetItem', jsonb_build_object('RequestItems', jsonb_build_object('Reads', jsonb_build_object(
    'ProjectionExpression', 'pk', 'Keys', (SELECT jsonb_agg(jsonb_build_object('pk', jsonb_build_object('S', 'k' || i)) ORDER BY i)
                                           FROM generate_series(1, 8) i))))) r;
SELECT pg_temp.try('BatchGetItem', '{"RequestItems": {"Reads": {"Keys": [{"pk": {"S": "k1"}}]}}}');
-- BatchExecuteStatement: a statement on a table out of capacity is its own error
SELECT ddb.execute('BatchExecuteStatement', '{"Statements": [{"Statement": "SELECT pk FROM \"Reads\" WHERE pk = ''k1''"},
    {"Statement": "INSERT INTO \"OnDemand\" VALUE {''pk'': ''o2''}"}]}');

-- transactions count twice (a prepare and a commit): two puts of 80 KB use
-- 320 write units, so the next transaction is cancelled as a whole, with
-- DynamoDB's ProvisionedThroughputExceeded reason for the action refused
SELECT ddb.execute('CreateTable', '{"TableName": "Txn", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}') -> 'TableDescription' -> 'TableStatus';
SELECT ddb.execute('TransactWriteItems', jsonb_build_object('ReturnConsumedCapacity', 'TOTAL', 'TransactItems', jsonb_build_array(
    jsonb_build_object('Put', pg_temp.put('Txn', 't1', 80)), jsonb_build_object('Put', pg_temp.put('Txn', 't2', 80)))));
SELECT pg_temp.try('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "OnDemand", "Item": {"pk": {"S": "o3"}}}},
    {"Put": {"TableName": "Txn", "Item": {"pk": {"S": "t3"}}}}]}');
SELECT pk::text FROM public."OnDemand" ORDER BY pk;
-- so is a TransactGetItems reading a table out of read capacity
SELECT pg_temp.try('TransactGetItems', '{"TransactItems": [{"Get": {"TableName": "OnDemand", "Key": {"pk": {"S": "o1"}}}},
    {"Get": {"TableName": "Reads", "Key": {"pk": {"S": "k1"}}}}]}');
-- reads in a transaction are strongly consistent, and count twice
SELECT ddb.execute('TransactGetItems', '{"ReturnConsumedCapacity": "TOTAL", "TransactItems": [
    {"Get": {"TableName": "Txn", "Key": {"pk": {"S": "t1"}}, "ProjectionExpression": "pk"}}]}');

-- an on-demand table is never throttled
SELECT count(*) FILTER (WHERE pg_temp.try('PutItem', pg_temp.put('OnDemand', 'big' || i, 390)) = 'ok') AS ok
FROM generate_series(1, 5) i;
-- the buckets this database holds: the tables' and the index's that requests met
SELECT relation, read_units IS NOT NULL AS read_used, write_units < 0 AS write_spent
FROM ddb.throttling_buckets() ORDER BY relation::text;

-- with the setting off nothing is throttled
SET ddb.throttling = off;
SELECT pg_temp.try('PutItem', pg_temp.put('Prov', 'f', 390)), pg_temp.try('PutItem', pg_temp.put('Prov', 'g', 390));
-- an application's role cannot turn it off (or on) for itself: it is a superuser's setting
DROP ROLE IF EXISTS throttling_app;
CREATE ROLE throttling_app NOLOGIN;
SET ROLE throttling_app;
SET ddb.throttling = off;
SELECT ddb.throttling_advance(1);
-- nor read past the capacity through a router's check, which throttling neither admits nor charges
SELECT ddb.execute_rolled_back(NULL, 'GetItem', '{"TableName": "Prov", "Key": {"pk": {"S": "a"}}}');
RESET ROLE;
DROP ROLE throttling_app;
SELECT ddb.throttling_advance(-1e9);
SELECT ddb.delete_table(t) FROM unnest(ARRAY['Prov', 'Indexed', 'Batch', 'OnDemand', 'Reads', 'Txn']) t;
-- the buckets of dropped tables and indexes went with them (a relation that
-- reuses an OID starts full, not with what the dropped one spent)
SELECT count(*) AS buckets_left FROM ddb.throttling_buckets();
