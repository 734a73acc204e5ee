-- UpdateTable: billing mode and throughput (declared and described; nothing
-- is throttled), and GSIs created and deleted on an existing table.
\set SHOW_CONTEXT never
SELECT ddb.execute('CreateTable', '{"TableName": "Updatable", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}') -> 'TableDescription' -> 'BillingModeSummary';
SELECT ddb.put_item('Updatable', '{"pk": "a", "city": "Oslo"}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Updatable",
    "ProvisionedThroughput": {"ReadCapacityUnits": 20, "WriteCapacityUnits": 15}}') -> 'TableDescription' -> 'ProvisionedThroughput';
SELECT ddb.execute('UpdateTable', '{"TableName": "Updatable", "BillingMode": "PAY_PER_REQUEST"}')
    -> 'TableDescription' -> 'BillingModeSummary';
SELECT ddb.execute('UpdateTable', '{"TableName": "Updatable",
    "AttributeDefinitions": [{"AttributeName": "city", "AttributeType": "S"}],
    "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "ByCity",
        "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}}]}')
    -> 'TableDescription' -> 'GlobalSecondaryIndexes' -> 0 ->> 'IndexName' AS created;
SELECT ddb.execute('Query', '{"TableName": "Updatable", "IndexName": "ByCity", "KeyConditionExpression": "city = :c",
    "ExpressionAttributeValues": {":c": {"S": "Oslo"}}}') -> 'Count' AS found_through_the_new_index;
SELECT ddb.execute('UpdateTable', '{"TableName": "Updatable", "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "ByCity"}}]}')
    -> 'TableDescription' ? 'GlobalSecondaryIndexes' AS still_has_gsis;
SELECT ddb.put_item('Updatable', '{"pk": "b", "city": "Bergen"}') IS NULL AS writes_go_on;
-- errors
SELECT ddb.execute('UpdateTable', '{"TableName": "Updatable", "BillingMode": "PAY_PER_REQUEST",
    "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Updatable", "BillingMode": "PROVISIONED",
    "ProvisionedThroughput": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 1}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Nowhere", "BillingMode": "PAY_PER_REQUEST"}');
SELECT ddb.execute('UpdateTable', '{"TableName": "UserServiceTable", "BillingMode": "PAY_PER_REQUEST"}');
SELECT ddb.delete_table('Updatable');

-- CreateTable's billing: PROVISIONED unless BillingMode says otherwise, so
-- ProvisionedThroughput is required; on-demand refuses one
SELECT ddb.execute('CreateTable', '{"TableName": "Billed", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "Billed", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PROVISIONED"}');
SELECT ddb.execute('CreateTable', '{"TableName": "Billed", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST",
    "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}');
SELECT ddb.execute('CreateTable', '{"TableName": "Billed", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 0}}');
SELECT count(*) AS nothing_created FROM ddb.tables WHERE table_name = 'Billed';

-- each global index of a PROVISIONED table has its own throughput
SELECT ddb.execute('CreateTable', '{"TableName": "PerIndex", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "city", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 6},
    "GlobalSecondaryIndexes": [{"IndexName": "ByCity", "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "PerIndex", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "city", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 6},
    "GlobalSecondaryIndexes": [{"IndexName": "ByCity", "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 0}}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "PerIndex", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "city", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
    "GlobalSecondaryIndexes": [{"IndexName": "ByCity", "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "PerIndex", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "city", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 6},
    "GlobalSecondaryIndexes": [{"IndexName": "ByCity", "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 3}}]}')
    -> 'TableDescription' -> 'GlobalSecondaryIndexes' -> 0 -> 'ProvisionedThroughput' AS at_create;
SELECT ddb.execute('UpdateTable', '{"TableName": "PerIndex", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByCity",
    "ProvisionedThroughput": {"ReadCapacityUnits": 7, "WriteCapacityUnits": 8}}}]}')
    -> 'TableDescription' -> 'GlobalSecondaryIndexes' -> 0 -> 'ProvisionedThroughput' AS updated;
SELECT ddb.execute('UpdateTable', '{"TableName": "PerIndex", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByCity"}}]}');
SELECT ddb.execute('UpdateTable', '{"TableName": "PerIndex", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "Nowhere",
    "ProvisionedThroughput": {"ReadCapacityUnits": 7, "WriteCapacityUnits": 8}}}]}');
SELECT ddb.execute('UpdateTable', '{"TableName": "PerIndex",
    "AttributeDefinitions": [{"AttributeName": "zip", "AttributeType": "S"}],
    "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "ByZip", "KeySchema": [{"AttributeName": "zip", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"}}}]}');
SELECT jsonb_path_query(ddb.execute('UpdateTable', '{"TableName": "PerIndex",
    "AttributeDefinitions": [{"AttributeName": "zip", "AttributeType": "S"}],
    "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "ByZip", "KeySchema": [{"AttributeName": "zip", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"}, "ProvisionedThroughput": {"ReadCapacityUnits": 4, "WriteCapacityUnits": 4}}}]}'),
    '$.TableDescription.GlobalSecondaryIndexes[*] ? (@.IndexName == "ByZip").ProvisionedThroughput') AS created_by_update;
-- on-demand: every global index 0/0, and none may be given
SELECT jsonb_path_query(ddb.execute('UpdateTable', '{"TableName": "PerIndex", "BillingMode": "PAY_PER_REQUEST"}'),
    '$.TableDescription.GlobalSecondaryIndexes[*].ProvisionedThroughput') AS on_demand;
SELECT ddb.execute('UpdateTable', '{"TableName": "PerIndex", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByCity",
    "ProvisionedThroughput": {"ReadCapacityUnits": 7, "WriteCapacityUnits": 8}}}]}');
-- back to PROVISIONED: each global index needs its throughput in the same request
SELECT ddb.execute('UpdateTable', '{"TableName": "PerIndex", "BillingMode": "PROVISIONED",
    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
    "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByZip",
        "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}}]}');
SELECT jsonb_path_query(ddb.execute('UpdateTable', '{"TableName": "PerIndex", "BillingMode": "PROVISIONED",
    "ProvisionedThroughput": {"ReadCapacityUnits": 9, "WriteCapacityUnits": 9},
    "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByZip", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 2}}},
                                    {"Update": {"IndexName": "ByCity", "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}}}]}'),
    '$.TableDescription.GlobalSecondaryIndexes[*].ProvisionedThroughput') AS provisioned_again;
SELECT ddb.delete_table('PerIndex');
