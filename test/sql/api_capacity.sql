-- ReturnConsumedCapacity: read units per 4 KB (half for an eventually
-- consistent read), write units per 1 KB, at least one per item; a list per
-- table for the batch operations.
\set SHOW_CONTEXT never
SELECT ddb.create_table('Metered', 'pk', 'S', 'sk', 'N');
SELECT ddb.execute('PutItem', jsonb_build_object('TableName', 'Metered', 'ReturnConsumedCapacity', 'TOTAL',
    'Item', jsonb_build_object('pk', '{"S": "a"}'::jsonb, 'sk', '{"N": "1"}'::jsonb, 'big', jsonb_build_object('S', repeat('x', 2500)))));
SELECT ddb.execute('GetItem', '{"TableName": "Metered", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
    "ProjectionExpression": "pk", "ConsistentRead": true, "ReturnConsumedCapacity": "TOTAL"}');
SELECT ddb.execute('GetItem', '{"TableName": "Metered", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
    "ProjectionExpression": "pk", "ReturnConsumedCapacity": "TOTAL"}');
SELECT ddb.execute('Query', '{"TableName": "Metered", "KeyConditionExpression": "pk = :p", "Select": "COUNT",
    "ExpressionAttributeValues": {":p": {"S": "a"}}, "ReturnConsumedCapacity": "INDEXES"}');
SELECT ddb.execute('BatchWriteItem', '{"ReturnConsumedCapacity": "TOTAL", "RequestItems": {"Metered": [
    {"PutRequest": {"Item": {"pk": {"S": "b"}, "sk": {"N": "1"}}}},
    {"DeleteRequest": {"Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}}}]}}');
SELECT ddb.execute('DeleteItem', '{"TableName": "Metered", "Key": {"pk": {"S": "b"}, "sk": {"N": "1"}}, "ReturnConsumedCapacity": "NONE"}');
-- a bad value is refused before anything is written
SELECT ddb.execute('PutItem', '{"TableName": "Metered", "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}}, "ReturnConsumedCapacity": "ALL"}');
SELECT count(*) AS items FROM public."Metered";
SELECT ddb.delete_table('Metered');
-- secondary indexes count apart: a write that changes an entry writes to
-- the index by the entry's projected size (twice when its key changes, not
-- at all when the entry stays the same); a Query of an index reads from it
SELECT ddb.create_table('Indexed', 'pk');
SELECT ddb.create_index('Indexed', 'ByCity', 'city', 'S', projection_type => 'KEYS_ONLY');
SELECT ddb.execute('PutItem', '{"TableName": "Indexed", "Item": {"pk": {"S": "a"}, "city": {"S": "Oslo"}},
    "ReturnConsumedCapacity": "INDEXES"}') -> 'ConsumedCapacity';
SELECT ddb.execute('UpdateItem', '{"TableName": "Indexed", "Key": {"pk": {"S": "a"}}, "UpdateExpression": "SET note = :n",
    "ExpressionAttributeValues": {":n": {"S": "not projected"}}, "ReturnConsumedCapacity": "INDEXES"}') -> 'ConsumedCapacity';
SELECT ddb.execute('UpdateItem', '{"TableName": "Indexed", "Key": {"pk": {"S": "a"}}, "UpdateExpression": "SET city = :c",
    "ExpressionAttributeValues": {":c": {"S": "Rome"}}, "ReturnConsumedCapacity": "TOTAL"}') -> 'ConsumedCapacity';
SELECT ddb.execute('Query', '{"TableName": "Indexed", "IndexName": "ByCity", "KeyConditionExpression": "city = :c",
    "ExpressionAttributeValues": {":c": {"S": "Rome"}}, "ReturnConsumedCapacity": "INDEXES"}') -> 'ConsumedCapacity';
SELECT ddb.execute('DeleteItem', '{"TableName": "Indexed", "Key": {"pk": {"S": "a"}}, "ReturnConsumedCapacity": "INDEXES"}') -> 'ConsumedCapacity';
-- writes outside ddb.execute count nothing and keep working
SELECT ddb.put_item('Indexed', '{"pk": "b", "city": "Oslo"}');
SELECT ddb.delete_table('Indexed');
