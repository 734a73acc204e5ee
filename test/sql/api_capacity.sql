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
-- BatchGetItem reads by each table's ConsistentRead: strongly consistent, twice the units
SELECT ddb.execute('BatchGetItem', '{"ReturnConsumedCapacity": "TOTAL", "RequestItems": {"Metered": {
    "Keys": [{"pk": {"S": "a"}, "sk": {"N": "1"}}], "ConsistentRead": true}}}') -> 'ConsumedCapacity' AS consistent,
       ddb.execute('BatchGetItem', '{"ReturnConsumedCapacity": "TOTAL", "RequestItems": {"Metered": {
    "Keys": [{"pk": {"S": "a"}, "sk": {"N": "1"}}]}}}') -> 'ConsumedCapacity' AS eventually_consistent;
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
-- ddb.execute_metered (the gateway's): the capacity by table, indexes
-- included, on the first line, whatever ReturnConsumedCapacity says; then
-- the response, ddb.execute's
CREATE FUNCTION pg_temp.metered(role_name name, operation text, request jsonb, OUT consumed jsonb, OUT response jsonb)
LANGUAGE sql AS $$
    SELECT split_part(m, E'\n', 1)::jsonb, substr(m, strpos(m, E'\n') + 1)::jsonb
    FROM ddb.execute_metered(role_name, operation, request) m
$$;
SELECT ddb.create_table('Counted', 'pk');
SELECT ddb.create_index('Counted', 'ByCity', 'city', 'S');
SELECT * FROM pg_temp.metered(NULL, 'PutItem', '{"TableName": "Counted", "Item": {"pk": {"S": "a"}, "city": {"S": "Oslo"}}}');
SELECT consumed FROM pg_temp.metered(NULL, 'GetItem', '{"TableName": "Counted", "Key": {"pk": {"S": "a"}}, "ConsistentRead": true}');
SELECT response -> 'ConsumedCapacity' AS asked, consumed
FROM pg_temp.metered(NULL, 'Query', '{"TableName": "Counted", "IndexName": "ByCity", "KeyConditionExpression": "city = :c",
    "ExpressionAttributeValues": {":c": {"S": "Oslo"}}, "Select": "COUNT", "ReturnConsumedCapacity": "TOTAL"}');
SELECT ddb.create_table('Other', 'pk');
SELECT consumed FROM pg_temp.metered(NULL, 'BatchWriteItem', '{"RequestItems": {
    "Counted": [{"PutRequest": {"Item": {"pk": {"S": "b"}}}}], "Other": [{"PutRequest": {"Item": {"pk": {"S": "c"}}}}]}}');
-- a table operation consumes nothing
SELECT consumed FROM pg_temp.metered(NULL, 'ListTables', '{}');
-- with a role: the role's privileges, and only a role the caller may SET ROLE to
DROP ROLE IF EXISTS metered_reader;
CREATE ROLE metered_reader NOLOGIN;
SELECT ddb.grant_tables('metered_reader', 'Counted', read_only => true);
SELECT consumed FROM pg_temp.metered('metered_reader', 'GetItem', '{"TableName": "Counted", "Key": {"pk": {"S": "a"}}}');
SELECT consumed FROM pg_temp.metered('metered_reader', 'GetItem', '{"TableName": "Other", "Key": {"pk": {"S": "c"}}}');
SET ROLE metered_reader;
SELECT ddb.execute_metered('postgres', 'GetItem', '{"TableName": "Other", "Key": {"pk": {"S": "c"}}}');
RESET ROLE;
SELECT ddb.delete_table('Counted');
SELECT ddb.delete_table('Other');
DROP OWNED BY metered_reader;
DROP ROLE metered_reader;
