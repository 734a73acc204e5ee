-- Table settings (docs/tables.md, "Table settings"): DeletionProtectionEnabled,
-- TableClass, OnDemandThroughput and WarmThroughput on CreateTable,
-- UpdateTable and a global index's Create and Update, with DynamoDB's
-- checks; DescribeLimits and DescribeEndpoints.
\set SHOW_CONTEXT never
-- settings: what DescribeTable says of a table (and of its global index)
CREATE FUNCTION pg_temp.settings(name text) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'protected', t->'DeletionProtectionEnabled', 'class', t->'TableClassSummary' #- '{LastUpdateDateTime}',
        'class_changed', t->'TableClassSummary' ? 'LastUpdateDateTime',
        'on_demand', t->'OnDemandThroughput', 'warm', t->'WarmThroughput',
        'index_on_demand', t->'GlobalSecondaryIndexes'->0->'OnDemandThroughput',
        'index_warm', t->'GlobalSecondaryIndexes'->0->'WarmThroughput'))
    FROM (SELECT ddb.execute('DescribeTable', jsonb_build_object('TableName', name)) -> 'Table' AS t) described $$;

-- an on-demand table with every setting, and its index's
SELECT ddb.execute('CreateTable', '{"TableName": "Settled", "BillingMode": "PAY_PER_REQUEST",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "city", "AttributeType": "S"}],
    "DeletionProtectionEnabled": true, "TableClass": "STANDARD_INFREQUENT_ACCESS",
    "OnDemandThroughput": {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50},
    "WarmThroughput": {"ReadUnitsPerSecond": 13000},
    "GlobalSecondaryIndexes": [{"IndexName": "ByCity", "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"}, "OnDemandThroughput": {"MaxWriteRequestUnits": 20},
        "WarmThroughput": {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 5000}}]}') -> 'TableDescription'
    -> 'DeletionProtectionEnabled' AS created_protected;
SELECT pg_temp.settings('Settled');
-- a protected table is refused by DeleteTable and by ddb.delete_table, and stays
SELECT ddb.execute('DeleteTable', '{"TableName": "Settled"}');
SELECT ddb.delete_table('Settled');
SELECT count(*) AS still_there FROM ddb.tables WHERE table_name = 'Settled';
-- UpdateTable: each setting alone
SELECT ddb.execute('UpdateTable', '{"TableName": "Settled", "DeletionProtectionEnabled": false}')
    -> 'TableDescription' -> 'DeletionProtectionEnabled' AS protected;
SELECT ddb.execute('UpdateTable', '{"TableName": "Settled", "TableClass": "STANDARD"}') -> 'TableDescription' -> 'TableClassSummary' ? 'LastUpdateDateTime' AS class_changed_at;
SELECT ddb.execute('UpdateTable', '{"TableName": "Settled", "OnDemandThroughput": {"MaxReadRequestUnits": -1}}')
    -> 'TableDescription' -> 'OnDemandThroughput' AS write_maximum_left;
SELECT ddb.execute('UpdateTable', '{"TableName": "Settled", "OnDemandThroughput": {"MaxReadRequestUnits": 200, "MaxWriteRequestUnits": -1}}')
    -> 'TableDescription' -> 'OnDemandThroughput' AS read_maximum_only;
SELECT ddb.execute('UpdateTable', '{"TableName": "Settled", "WarmThroughput": {"WriteUnitsPerSecond": 4500}}')
    -> 'TableDescription' -> 'WarmThroughput' AS warmer;
SELECT (ddb.execute('UpdateTable', '{"TableName": "Settled", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByCity",
    "OnDemandThroughput": {"MaxReadRequestUnits": 30, "MaxWriteRequestUnits": -1}, "WarmThroughput": {"ReadUnitsPerSecond": 14000}}}]}')
    -> 'TableDescription' -> 'GlobalSecondaryIndexes' -> 0) - ARRAY['IndexArn', 'KeySchema', 'Projection'] AS index_after;
-- a table's WarmThroughput with its indexes' (DynamoDB's own example): only WarmThroughput in each index Update
SELECT jsonb_build_object('table', d->'WarmThroughput', 'index', d->'GlobalSecondaryIndexes'->0->'WarmThroughput') AS warm_together
FROM (SELECT ddb.execute('UpdateTable', '{"TableName": "Settled", "WarmThroughput": {"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 4600},
    "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByCity", "WarmThroughput": {"ReadUnitsPerSecond": 15000}}}]}') -> 'TableDescription' AS d) updated;
SELECT ddb.execute('UpdateTable', '{"TableName": "Settled", "WarmThroughput": {"ReadUnitsPerSecond": 16000},
    "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByCity", "WarmThroughput": {"ReadUnitsPerSecond": 16000},
        "OnDemandThroughput": {"MaxReadRequestUnits": 40}}}]}');
SELECT pg_temp.settings('Settled');
-- deletion protection off: DeleteTable goes
SELECT ddb.execute('DeleteTable', '{"TableName": "Settled"}') -> 'TableDescription' ->> 'TableStatus' AS status;

-- the defaults: no protection, no TableClassSummary, no maxima, DynamoDB's
-- initial warm throughput on demand (12000 reads, 4000 writes a second) and
-- the provisioned units otherwise
SELECT ddb.execute('CreateTable', '{"TableName": "Plain", "BillingMode": "PAY_PER_REQUEST",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL AS created;
SELECT pg_temp.settings('Plain');
SELECT ddb.execute('CreateTable', '{"TableName": "Provisioned",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "city", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 10, "WriteCapacityUnits": 5}, "TableClass": "STANDARD",
    "GlobalSecondaryIndexes": [{"IndexName": "ByCity", "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 1}}]}') IS NOT NULL AS created;
SELECT pg_temp.settings('Provisioned');
-- warm throughput never falls: lowered capacity leaves it at the most provisioned
SELECT ddb.execute('UpdateTable', '{"TableName": "Provisioned", "ProvisionedThroughput": {"ReadCapacityUnits": 20, "WriteCapacityUnits": 20}}') IS NOT NULL AS raised;
SELECT ddb.execute('UpdateTable', '{"TableName": "Provisioned", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}')
    -> 'TableDescription' -> 'WarmThroughput' AS warm_after_lowering;
SELECT ddb.execute('UpdateTable', '{"TableName": "Provisioned", "WarmThroughput": {"ReadUnitsPerSecond": 19}}');
-- on demand it is the initial throughput, kept when the table goes back to PROVISIONED
SELECT ddb.execute('UpdateTable', '{"TableName": "Provisioned", "BillingMode": "PAY_PER_REQUEST"}') -> 'TableDescription' -> 'WarmThroughput' AS on_demand;
-- a maximum given with the switch to on demand; dropped when the table goes back to PROVISIONED
SELECT ddb.execute('UpdateTable', '{"TableName": "Provisioned", "BillingMode": "PAY_PER_REQUEST",
    "OnDemandThroughput": {"MaxReadRequestUnits": 7}}') -> 'TableDescription' -> 'OnDemandThroughput' AS maximum;
SELECT ddb.execute('UpdateTable', '{"TableName": "Provisioned", "BillingMode": "PROVISIONED",
    "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 3},
    "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByCity", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}}]}')
    IS NOT NULL AS provisioned_again;
SELECT pg_temp.settings('Provisioned');

-- errors, in DynamoDB's words
-- OnDemandThroughput: not on a PROVISIONED table (nor its index), each maximum at least 1, at most the table maximum
SELECT ddb.execute('UpdateTable', '{"TableName": "Provisioned", "OnDemandThroughput": {"MaxReadRequestUnits": 5}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Provisioned", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByCity",
    "OnDemandThroughput": {"MaxWriteRequestUnits": 5}}}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "Refused", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}, "OnDemandThroughput": {"MaxReadRequestUnits": 5}}');
SELECT ddb.execute('CreateTable', '{"TableName": "Refused", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "OnDemandThroughput": {"MaxReadRequestUnits": -1}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "OnDemandThroughput": {"MaxWriteRequestUnits": 0}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "OnDemandThroughput": {"MaxReadRequestUnits": -2}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "OnDemandThroughput": {"MaxReadRequestUnits": 40001}}');
SELECT ddb.execute('CreateTable', '{"TableName": "Refused", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "city", "AttributeType": "S"}],
    "GlobalSecondaryIndexes": [{"IndexName": "ByCity", "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"}, "OnDemandThroughput": {"MaxReadRequestUnits": 0}}]}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "OnDemandThroughput": {"MaxReadRequestUnits": "10"}}');
-- a whole number of 19 digits is a Long, above the maximum; one beyond a Long's range says so
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "OnDemandThroughput": {"MaxReadRequestUnits": 1000000000000000000}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "OnDemandThroughput": {"MaxReadRequestUnits": 1e30}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "OnDemandThroughput": [10]}');
-- WarmThroughput: never below the initial throughput on demand, the provisioned units, or what it is; at most the table maximum
SELECT ddb.execute('CreateTable', '{"TableName": "Refused", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "WarmThroughput": {"ReadUnitsPerSecond": 1, "WriteUnitsPerSecond": 1}}');
SELECT ddb.execute('CreateTable', '{"TableName": "Refused", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 10, "WriteCapacityUnits": 10}, "WarmThroughput": {"ReadUnitsPerSecond": 10, "WriteUnitsPerSecond": 5}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "WarmThroughput": {"ReadUnitsPerSecond": 11999}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "WarmThroughput": {"WriteUnitsPerSecond": 40001}}');
SELECT ddb.execute('CreateTable', '{"TableName": "Refused", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "city", "AttributeType": "S"}],
    "GlobalSecondaryIndexes": [{"IndexName": "ByCity", "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"}, "WarmThroughput": {"WriteUnitsPerSecond": 3999}}]}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "WarmThroughput": {"ReadUnitsPerSecond": 12.5}}');
-- TableClass and DeletionProtectionEnabled
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "TableClass": "standard"}');
SELECT ddb.execute('CreateTable', '{"TableName": "Refused", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "TableClass": "GLACIER"}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "DeletionProtectionEnabled": "yes"}');
-- some changes go alone
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "DeletionProtectionEnabled": true, "BillingMode": "PAY_PER_REQUEST"}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "TableClass": "STANDARD", "StreamSpecification": {"StreamEnabled": false}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "WarmThroughput": {"ReadUnitsPerSecond": 13000},
    "OnDemandThroughput": {"MaxReadRequestUnits": 5}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "WarmThroughput": {"ReadUnitsPerSecond": 13000},
    "AttributeDefinitions": [{"AttributeName": "city", "AttributeType": "S"}],
    "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "ByCity", "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"}}}]}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "OnDemandThroughput": {"MaxReadRequestUnits": 5},
    "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"}}');
-- a request must change something (an empty list of index updates is nothing),
-- and is checked before the table is looked up
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain"}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "GlobalSecondaryIndexUpdates": [],
    "AttributeDefinitions": [{"AttributeName": "city", "AttributeType": "S"}]}');
SELECT ddb.execute('UpdateTable', '{"TableName": "NoSuchTable"}');
-- provisioned throughput is at most DescribeLimits' table maximum, a table's or an index's
SELECT ddb.execute('UpdateTable', '{"TableName": "Provisioned", "ProvisionedThroughput": {"ReadCapacityUnits": 40001, "WriteCapacityUnits": 1}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Provisioned", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1e30}}');
SELECT ddb.execute('CreateTable', '{"TableName": "Refused", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "city", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 40000, "WriteCapacityUnits": 40000},
    "GlobalSecondaryIndexes": [{"IndexName": "ByCity", "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 40001}}]}');
-- nothing above changed a thing
SELECT pg_temp.settings('Plain');
SELECT count(*) AS nothing_created FROM ddb.tables WHERE table_name = 'Refused';

-- in SQL: ddb.set_deletion_protection, and ddb.delete_table honours it
SELECT ddb.set_deletion_protection('Plain', true);
SELECT ddb.delete_table('Plain');
SELECT ddb.set_deletion_protection('Plain', false);
SELECT ddb.delete_table('Plain');
SELECT ddb.delete_table('Provisioned');

-- DescribeLimits: DynamoDB's default quotas; DescribeEndpoints: ddb.endpoint_address, which ddb-gateway sets
SELECT ddb.execute('DescribeLimits', '{}');
SELECT ddb.execute('DescribeEndpoints', '{}');
SET ddb.endpoint_address = 'dynamodb.example.com:8443';
SELECT ddb.execute('DescribeEndpoints', '{}');
RESET ddb.endpoint_address;
