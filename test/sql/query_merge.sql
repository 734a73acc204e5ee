-- ddb.execute_for_merge: ddb.execute_metered of a Query whose response also
-- has "EvaluatedKeys": [[key, ordinal], ...], for a router that merges the
-- pages of a GSI Query read on several shards.  One entry per row the page
-- read, in the order read: the LastEvaluatedKey a page ending after that row
-- would carry, and the row's index among the rows the filter kept (its index
-- in Items; counted under Select COUNT too), or -1 when the filter dropped it.
\set SHOW_CONTEXT never
SELECT ddb.create_table('Shipments', 'pk', 'S', 'sk', 'N');
SELECT ddb.create_index('Shipments', 'ByDay', 'region', 'S', 'day', 'N');
SELECT ddb.create_index('Shipments', 'ByRegion', 'region', 'S', projection_type => 'KEYS_ONLY');
-- written out of key order; four rows share day 1
SELECT ddb.put_item('Shipments', jsonb_build_object('pk', pk, 'sk', sk, 'region', region, 'day', day, 'weight', weight))
FROM (VALUES ('b', 2, 'eu', 1, 5), ('a', 10, 'eu', 1, 50), ('b', 1, 'eu', 1, 7), ('a', 3, 'eu', 2, 60),
             ('c', 1, 'eu', 0, 8), ('a', 9, 'eu', 1, 1), ('d', 1, 'us', 1, 9)) v(pk, sk, region, day, weight) \g /dev/null

-- The consumed capacity on the first line, the response on the second;
-- as_metered: both are ddb.execute_metered's once EvaluatedKeys is removed.
CREATE FUNCTION pg_temp.merge(request jsonb, role_name name DEFAULT NULL,
                              OUT consumed jsonb, OUT response jsonb, OUT as_metered boolean)
LANGUAGE sql AS $$
    SELECT split_part(m, E'\n', 1)::jsonb, r,
           split_part(m, E'\n', 1) || E'\n' || (r - 'EvaluatedKeys')::text
               = ddb.execute_metered(role_name, 'Query', request)
    FROM ddb.execute_for_merge(role_name, 'Query', request) m,
         LATERAL (SELECT substr(m, strpos(m, E'\n') + 1)::jsonb) x(r)
$$;
-- EvaluatedKeys one row per entry: the table keys, the index sort key, the ordinal
CREATE FUNCTION pg_temp.evaluated(request jsonb)
RETURNS TABLE (pk text, sk numeric, day numeric, ordinal int)
LANGUAGE sql AS $$
    SELECT e -> 0 -> 'pk' ->> 'S', (e -> 0 -> 'sk' ->> 'N')::numeric, (e -> 0 -> 'day' ->> 'N')::numeric, (e ->> 1)::int
    FROM pg_temp.merge(request) m, jsonb_array_elements(m.response -> 'EvaluatedKeys') e
$$;

-- The whole answer of a GSI Query: the key maps are LastEvaluatedKey's
-- (the index's keys and the table's), Items and the rest are the Query's own.
SELECT consumed, jsonb_pretty(response) AS response, as_metered
FROM pg_temp.merge('{"TableName": "Shipments", "IndexName": "ByDay",
    "KeyConditionExpression": "#r = :r AND #d = :d", "ExpressionAttributeNames": {"#r": "region", "#d": "day"},
    "ExpressionAttributeValues": {":r": {"S": "eu"}, ":d": {"N": "2"}}, "ReturnConsumedCapacity": "TOTAL"}');

-- The order of a GSI Query: by the index sort key, and rows of equal index
-- sort key by the table's partition key, then its sort key (numbers by
-- value: 9 before 10), as the index relation's primary key orders them.
SELECT * FROM pg_temp.evaluated('{"TableName": "Shipments", "IndexName": "ByDay",
    "KeyConditionExpression": "#r = :r", "ExpressionAttributeNames": {"#r": "region"},
    "ExpressionAttributeValues": {":r": {"S": "eu"}}}');
-- ScanIndexForward false: the whole order reversed, ties included
SELECT * FROM pg_temp.evaluated('{"TableName": "Shipments", "IndexName": "ByDay", "ScanIndexForward": false,
    "KeyConditionExpression": "#r = :r", "ExpressionAttributeNames": {"#r": "region"},
    "ExpressionAttributeValues": {":r": {"S": "eu"}}}');
-- an index without a sort key: by the table's keys alone; its key maps hold
-- the index's partition key and the table's keys
SELECT * FROM pg_temp.evaluated('{"TableName": "Shipments", "IndexName": "ByRegion",
    "KeyConditionExpression": "#r = :r", "ExpressionAttributeNames": {"#r": "region"},
    "ExpressionAttributeValues": {":r": {"S": "eu"}}}');
SELECT response -> 'EvaluatedKeys' -> 0 AS first, as_metered
FROM pg_temp.merge('{"TableName": "Shipments", "IndexName": "ByRegion",
    "KeyConditionExpression": "#r = :r", "ExpressionAttributeNames": {"#r": "region"},
    "ExpressionAttributeValues": {":r": {"S": "eu"}}}');

-- A FilterExpression: every row read is listed, those it drops with -1, the
-- others with their index in Items
SELECT * FROM pg_temp.evaluated('{"TableName": "Shipments", "IndexName": "ByDay",
    "KeyConditionExpression": "#r = :r", "FilterExpression": "weight > :w", "ExpressionAttributeNames": {"#r": "region"},
    "ExpressionAttributeValues": {":r": {"S": "eu"}, ":w": {"N": "6"}}}');
SELECT jsonb_path_query_array(response, '$.Items[*].pk.S') AS item_pks, response -> 'Count' AS count,
       response -> 'ScannedCount' AS scanned, as_metered
FROM pg_temp.merge('{"TableName": "Shipments", "IndexName": "ByDay",
    "KeyConditionExpression": "#r = :r", "FilterExpression": "weight > :w", "ExpressionAttributeNames": {"#r": "region"},
    "ExpressionAttributeValues": {":r": {"S": "eu"}, ":w": {"N": "6"}}}');
-- Select COUNT: no Items, the same ordinals
SELECT response - 'EvaluatedKeys' AS response, jsonb_path_query_array(response, '$.EvaluatedKeys[*][1]') AS ordinals, as_metered
FROM pg_temp.merge('{"TableName": "Shipments", "IndexName": "ByDay", "Select": "COUNT",
    "KeyConditionExpression": "#r = :r", "FilterExpression": "weight > :w", "ExpressionAttributeNames": {"#r": "region"},
    "ExpressionAttributeValues": {":r": {"S": "eu"}, ":w": {"N": "6"}}}');
-- a ProjectionExpression without the keys: Items hold none, EvaluatedKeys all
SELECT response -> 'Items' AS items, response -> 'EvaluatedKeys' -> 1 AS second, as_metered
FROM pg_temp.merge('{"TableName": "Shipments", "IndexName": "ByDay", "ProjectionExpression": "weight",
    "KeyConditionExpression": "#r = :r AND #d = :d", "ExpressionAttributeNames": {"#r": "region", "#d": "day"},
    "ExpressionAttributeValues": {":r": {"S": "eu"}, ":d": {"N": "1"}}}');

-- Limit counts rows read: a page of Limit rows lists Limit entries, and its
-- LastEvaluatedKey is the last one's key, for every Limit
SELECT lim AS "limit", jsonb_array_length(response -> 'EvaluatedKeys') AS entries,
       response -> 'LastEvaluatedKey' = response -> 'EvaluatedKeys' -> -1 -> 0 AS last_key_is_last_entry, as_metered
FROM generate_series(1, 6) lim,
     pg_temp.merge(jsonb_build_object('TableName', 'Shipments', 'IndexName', 'ByDay', 'Limit', lim,
         'KeyConditionExpression', '#r = :r', 'FilterExpression', 'weight > :w',
         'ExpressionAttributeNames', '{"#r": "region"}'::jsonb,
         'ExpressionAttributeValues', '{":r": {"S": "eu"}, ":w": {"N": "6"}}'::jsonb));
-- an ExclusiveStartKey continues the page: its first page of 3 ...
SELECT response -> 'LastEvaluatedKey' AS last_key FROM pg_temp.merge('{"TableName": "Shipments", "IndexName": "ByDay", "Limit": 3,
    "KeyConditionExpression": "#r = :r", "ExpressionAttributeNames": {"#r": "region"},
    "ExpressionAttributeValues": {":r": {"S": "eu"}}}');
-- ... and the next, which goes on from the fourth row read; ordinals count from 0 again
SELECT * FROM pg_temp.evaluated('{"TableName": "Shipments", "IndexName": "ByDay", "Limit": 3,
    "KeyConditionExpression": "#r = :r", "FilterExpression": "weight > :w", "ExpressionAttributeNames": {"#r": "region"},
    "ExpressionAttributeValues": {":r": {"S": "eu"}, ":w": {"N": "6"}},
    "ExclusiveStartKey": {"pk": {"S": "a"}, "sk": {"N": "10"}, "region": {"S": "eu"}, "day": {"N": "1"}}}');
-- the last page: no LastEvaluatedKey, nothing listed past the end
SELECT response -> 'EvaluatedKeys' AS evaluated, response ? 'LastEvaluatedKey' AS has_last_key, as_metered
FROM pg_temp.merge('{"TableName": "Shipments", "IndexName": "ByDay", "Limit": 3,
    "KeyConditionExpression": "#r = :r", "ExpressionAttributeNames": {"#r": "region"},
    "ExpressionAttributeValues": {":r": {"S": "eu"}},
    "ExclusiveStartKey": {"pk": {"S": "b"}, "sk": {"N": "2"}, "region": {"S": "eu"}, "day": {"N": "1"}}}');
-- a Query of the table: the table's keys
SELECT response -> 'EvaluatedKeys' AS evaluated, as_metered
FROM pg_temp.merge('{"TableName": "Shipments", "KeyConditionExpression": "pk = :p",
    "ExpressionAttributeValues": {":p": {"S": "a"}}}');

-- The same errors as ddb.execute_metered: DynamoDB's, and a role's privileges
SELECT ddb.execute_for_merge(NULL, 'Query', '{"TableName": "Missing", "KeyConditionExpression": "pk = :p",
    "ExpressionAttributeValues": {":p": {"S": "a"}}}');
SELECT ddb.execute_for_merge(NULL, 'Query', '{"TableName": "Shipments", "IndexName": "ByDay",
    "KeyConditionExpression": "#r = :r", "ExpressionAttributeNames": {"#r": "region"},
    "ExpressionAttributeValues": {":r": {"S": "eu"}}, "ConsistentRead": true}');
DROP ROLE IF EXISTS merge_reader;
CREATE ROLE merge_reader NOLOGIN;
SELECT ddb.execute_for_merge('merge_reader', 'Query', '{"TableName": "Shipments", "KeyConditionExpression": "pk = :p",
    "ExpressionAttributeValues": {":p": {"S": "a"}}}');
SELECT ddb.grant_tables('merge_reader', 'Shipments', read_only => true);
SELECT jsonb_array_length(response -> 'EvaluatedKeys') AS entries, as_metered
FROM pg_temp.merge('{"TableName": "Shipments", "KeyConditionExpression": "pk = :p",
    "ExpressionAttributeValues": {":p": {"S": "a"}}}', 'merge_reader');
-- Query only: it is the router's, no DynamoDB operation
-- a Scan too: the key of every row it read, in the order read
SELECT jsonb_array_length(m -> 'EvaluatedKeys') = (m ->> 'ScannedCount')::int AS every_row, m -> 'EvaluatedKeys' -> 0 AS first
FROM (SELECT split_part(ddb.execute_for_merge(NULL, 'Scan', '{"TableName": "Shipments", "Limit": 3}'), E'\n', 2)::jsonb m) s;
-- page_bytes bounds what the page reads (a router's page over several nodes): the
-- first row always, then no row past the bound, and a LastEvaluatedKey
SELECT (m ->> 'ScannedCount')::int AS scanned, m ? 'LastEvaluatedKey' AS more,
       (SELECT sum((e ->> 2)::int) FROM jsonb_array_elements(m -> 'EvaluatedKeys') e) <= 60 AS within
FROM (SELECT split_part(ddb.execute_for_merge(NULL, 'Scan', '{"TableName": "Shipments"}', 60), E'\n', 2)::jsonb m) s;
SELECT ddb.execute_for_merge(NULL, 'Scan', '{"TableName": "Shipments"}', 0);
SELECT ddb.execute_for_merge(NULL, 'PutItem', '{"TableName": "Shipments", "Item": {"pk": {"S": "z"}, "sk": {"N": "1"}}}');
SELECT ddb.execute_for_merge(NULL, NULL, '{}');
SELECT count(*) AS items FROM public."Shipments";

SELECT ddb.delete_table('Shipments');
DROP OWNED BY merge_reader;
DROP ROLE merge_reader;
