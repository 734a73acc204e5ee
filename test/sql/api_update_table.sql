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
