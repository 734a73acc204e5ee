-- Local secondary indexes: the table's hash key with another range key,
-- declared at CreateTable, kept like a GSI, readable with ConsistentRead.
\set SHOW_CONTEXT never
SELECT ddb.execute('CreateTable', '{"TableName": "Threads",
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
-- errors: an LSI on another hash key, an LSI key of the wrong type
SELECT ddb.execute('CreateTable', '{"TableName": "Bad1",
  "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}, {"AttributeName": "b", "AttributeType": "S"},
                           {"AttributeName": "c", "AttributeType": "S"}],
  "LocalSecondaryIndexes": [{"IndexName": "L", "KeySchema": [{"AttributeName": "c", "KeyType": "HASH"},
     {"AttributeName": "b", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ddb.put_item('Threads', '{"forum": "db", "subject": "e", "posted": "soon"}');
SELECT ddb.delete_table('Threads');
