-- Local secondary indexes: the table's hash key with another range key,
-- declared at CreateTable, kept like a GSI, readable with ConsistentRead.
\set SHOW_CONTEXT never
SELECT ddb.execute('CreateTable', '{"TableName": "Threads", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "forum", "KeyType": "HASH"}, {"AttributeName": "subject", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "forum", "AttributeType": "S"}, {"AttributeName": "subject", "AttributeType": "S"},
                           {"AttributeName": "posted", "AttributeType": "N"}],
  "LocalSecondaryIndexes": [{"IndexName": "ByPosted",
     "KeySchema": [{"AttributeName": "forum", "KeyType": "HASH"}, {"AttributeName": "posted", "KeyType": "RANGE"}],
     "Projection": {"ProjectionType": "KEYS_ONLY"}}]}') -> 'TableDescription' -> 'LocalSecondaryIndexes';
SELECT ddb.put_item('Threads', jsonb_build_object('forum', 'db', 'subject', s, 'posted', p, 'body', 'x'))
FROM (VALUES ('b-tree', 30), ('a-gist', 10), ('c-hash', 20)) v(s, p);
SELECT ddb.put_item('Threads', '{"forum": "db", "subject": "d-draft"}');   -- no posted: not in the LSI
SELECT ddb.execute('Query', '{"TableName": "Threads", "IndexName": "ByPosted", "ConsistentRead": true,
  "KeyConditionExpression": "forum = :f AND posted > :p",
  "ExpressionAttributeValues": {":f": {"S": "db"}, ":p": {"N": "15"}}}');
SELECT ddb.execute('DescribeTable', '{"TableName": "Threads"}') -> 'Table' ? 'GlobalSecondaryIndexes' AS has_gsis;
-- ALL_ATTRIBUTES on a local index that projects keys only: the table's whole items, as DynamoDB fetches them
SELECT ddb.execute('Query', '{"TableName": "Threads", "IndexName": "ByPosted", "Select": "ALL_ATTRIBUTES",
  "KeyConditionExpression": "forum = :f AND posted > :p",
  "ExpressionAttributeValues": {":f": {"S": "db"}, ":p": {"N": "15"}}}');
SELECT ddb.execute('Scan', '{"TableName": "Threads", "IndexName": "ByPosted", "Select": "ALL_ATTRIBUTES",
  "FilterExpression": "body = :b", "ExpressionAttributeValues": {":b": {"S": "x"}}, "Limit": 2}');
-- ReturnItemCollectionMetrics SIZE: the item collection's key and size range in GB
SELECT ddb.execute('PutItem', '{"TableName": "Threads", "Item": {"forum": {"S": "db"}, "subject": {"S": "f"}},
  "ReturnItemCollectionMetrics": "SIZE"}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Threads", "Key": {"forum": {"S": "db"}, "subject": {"S": "f"}},
  "UpdateExpression": "SET posted = :p", "ExpressionAttributeValues": {":p": {"N": "5"}},
  "ReturnItemCollectionMetrics": "SIZE", "ReturnValues": "UPDATED_NEW"}');
SELECT ddb.execute('DeleteItem', '{"TableName": "Threads", "Key": {"forum": {"S": "db"}, "subject": {"S": "f"}},
  "ReturnItemCollectionMetrics": "SIZE"}');
SELECT ddb.execute('DeleteItem', '{"TableName": "Threads", "Key": {"forum": {"S": "db"}, "subject": {"S": "f"}},
  "ReturnItemCollectionMetrics": "NONE"}');
SELECT ddb.execute('PutItem', '{"TableName": "Threads", "Item": {"forum": {"S": "db"}, "subject": {"S": "f"}},
  "ReturnItemCollectionMetrics": "ALL"}');
-- batches and transactions: per table with LSIs, one entry per item collection written
SELECT ddb.execute('BatchWriteItem', '{"RequestItems": {"Threads": [
  {"PutRequest": {"Item": {"forum": {"S": "db"}, "subject": {"S": "g"}}}},
  {"PutRequest": {"Item": {"forum": {"S": "db"}, "subject": {"S": "h"}}}},
  {"PutRequest": {"Item": {"forum": {"S": "os"}, "subject": {"S": "g"}}}}]},
  "ReturnItemCollectionMetrics": "SIZE"}');
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
  {"Delete": {"TableName": "Threads", "Key": {"forum": {"S": "os"}, "subject": {"S": "g"}}}},
  {"ConditionCheck": {"TableName": "Threads", "Key": {"forum": {"S": "db"}, "subject": {"S": "g"}},
                      "ConditionExpression": "attribute_exists(forum)"}}],
  "ReturnItemCollectionMetrics": "SIZE"}');
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
  {"Delete": {"TableName": "Threads", "Key": {"forum": {"S": "db"}, "subject": {"S": "g"}}}}],
  "ReturnItemCollectionMetrics": "BOTH"}');
-- errors: an LSI on another hash key, an LSI key of the wrong type
SELECT ddb.execute('CreateTable', '{"TableName": "Bad1", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}, {"AttributeName": "b", "AttributeType": "S"},
                           {"AttributeName": "c", "AttributeType": "S"}],
  "LocalSecondaryIndexes": [{"IndexName": "L", "KeySchema": [{"AttributeName": "c", "KeyType": "HASH"},
     {"AttributeName": "b", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}]}');
-- (an LSI with the table's hash key and no range key of its own)
SELECT ddb.execute('CreateTable', '{"TableName": "Bad1", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}, {"AttributeName": "b", "AttributeType": "S"}],
  "LocalSecondaryIndexes": [{"IndexName": "L", "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
     "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ddb.put_item('Threads', '{"forum": "db", "subject": "e", "posted": "soon"}');
SELECT ddb.delete_table('Threads');
