-- DynamoDB's exact validation messages, as the public conformance suite
-- recorded them against real DynamoDB (docs/conformance.md).
\set SHOW_CONTEXT never
SELECT ddb.execute('CreateTable', '{"TableName": "Messages", "BillingMode": "PAY_PER_REQUEST", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}') IS NOT NULL AS created;
-- CreateTable: a missing name, a short name, a key named twice, three keys, a bad attribute type
SELECT ddb.execute('CreateTable', '{"AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "ab", "BillingMode": "PAY_PER_REQUEST", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "Dup", "BillingMode": "PAY_PER_REQUEST", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "pk", "KeyType": "RANGE"}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "Three", "BillingMode": "PAY_PER_REQUEST", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"},
                {"AttributeName": "x", "KeyType": "RANGE"}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "BadType", "BillingMode": "PAY_PER_REQUEST", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "INVALID"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}');
-- item operations: the TableName alone first, then the enum members together
SELECT ddb.execute('PutItem', '{"TableName": "", "Item": {"pk": {"S": "a"}}, "ReturnValues": "INVALID"}');
SELECT ddb.execute('PutItem', '{"TableName": "Messages", "Item": {"pk": {"S": "a"}},
  "ReturnConsumedCapacity": "INVALID", "ReturnItemCollectionMetrics": "INVALID", "ReturnValues": "INVALID"}');
SELECT ddb.execute('PutItem', '{"TableName": "Messages", "Item": {"pk": {"S": "a"}}, "ReturnValues": "ALL_NEW"}');
-- syntax errors show the tokens around the bad one
SELECT ddb.execute('GetItem', '{"TableName": "Messages", "Key": {"pk": {"S": "a"}}, "ProjectionExpression": "!!"}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Messages", "Key": {"pk": {"S": "a"}}, "UpdateExpression": "INVALID SYNTAX"}');
-- sets
SELECT ddb.execute('PutItem', '{"TableName": "Messages", "Item": {"pk": {"S": "a"}, "s": {"SS": ["a", "a"]}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Messages", "Item": {"pk": {"S": "a"}, "s": {"BS": []}}}');
-- Query words a bad Limit unlike Scan
SELECT ddb.execute('Query', '{"TableName": "Messages", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "a"}}, "Limit": 0}');
SELECT ddb.execute('Scan', '{"TableName": "Messages", "Limit": 0}');
-- the members request validation checks are reported together, each with its value
SELECT ddb.execute('Scan', '{"TableName": "Messages", "Limit": 0, "Select": "EVERYTHING", "ReturnConsumedCapacity": "ALL"}');
SELECT ddb.execute('Scan', '{"TableName": "Messages", "Segment": -1, "TotalSegments": 1000001}');
SELECT ddb.execute('Scan', '{"TableName": "Messages", "Segment": 1000000, "TotalSegments": 0, "IndexName": "a!"}');
SELECT ddb.execute('Query', '{"TableName": "Messages", "IndexName": "ix", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "a"}}, "Select": "NONE"}');
SELECT ddb.execute('Query', '{"TableName": "Messages", "IndexName": "Nowhere", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "a"}}}');
-- batches and transactions: empty requests
SELECT ddb.execute('BatchGetItem', '{"RequestItems": {}}');
SELECT ddb.execute('BatchWriteItem', '{"RequestItems": {}}');
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": []}');
SELECT ddb.execute('BatchGetItem', jsonb_build_object('RequestItems', jsonb_build_object('Messages', jsonb_build_object(
  'Keys', (SELECT jsonb_agg(jsonb_build_object('pk', jsonb_build_object('S', 'k' || g))) FROM generate_series(1, 101) g)))));
-- an index name in CreateTable or UpdateTable is checked where the request has it
SELECT ddb.execute('CreateTable', '{"TableName": "Messages2", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}},
                             {"IndexName": "a b", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Messages", "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "ab", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                              "Projection": {"ProjectionType": "ALL"}}}]}');
SELECT count(*) AS tables_left FROM ddb.tables WHERE table_name = 'Messages2';
SELECT ddb.delete_table('Messages');
