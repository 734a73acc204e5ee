-- ProjectionExpression on GetItem, Query, Scan and BatchGetItem: top-level
-- attributes, nested map keys, list elements (kept in index order), and
-- DynamoDB's overlap and conflict errors.
\set SHOW_CONTEXT never
SELECT ddb.create_table('Proj', 'pk', 'S', 'sk', 'N');
SELECT ddb.put_item('Proj', '{"pk": "a", "sk": 1, "name": "Ann",
    "info": {"lang": "en", "rating": 4, "deep": {"x": 1, "y": 2}},
    "cast": ["p", "q", "r", {"n": 1, "m": 2}], "odd": {"$B": "AAE=", "other": 1}}');
SELECT ddb.put_item('Proj', '{"pk": "a", "sk": 2, "name": "Bo", "cast": ["s"]}');

SELECT ddb.execute('GetItem', '{"TableName": "Proj", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
    "ProjectionExpression": "#n, info.deep.y, #c[3].m, #c[0], absent, info.nope",
    "ExpressionAttributeNames": {"#n": "name", "#c": "cast"}}');
-- a map key that looks like a wrapper stays a map key
SELECT ddb.execute('GetItem', '{"TableName": "Proj", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
    "ProjectionExpression": "odd.#b", "ExpressionAttributeNames": {"#b": "$B"}}');
-- list elements come back in index order, whatever order they were asked in
SELECT ddb.execute('GetItem', '{"TableName": "Proj", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
    "ProjectionExpression": "#c[2], #c[0], #c[9]", "ExpressionAttributeNames": {"#c": "cast"}}');
-- nothing asked for is there: an empty item, still found
SELECT ddb.execute('GetItem', '{"TableName": "Proj", "Key": {"pk": {"S": "a"}, "sk": {"N": "2"}},
    "ProjectionExpression": "info.lang"}');
SELECT ddb.execute('Query', '{"TableName": "Proj", "KeyConditionExpression": "pk = :p",
    "ProjectionExpression": "sk, #n", "ExpressionAttributeNames": {"#n": "name"},
    "ExpressionAttributeValues": {":p": {"S": "a"}}, "Select": "SPECIFIC_ATTRIBUTES"}');
SELECT ddb.execute('Scan', '{"TableName": "Proj", "ProjectionExpression": "#c[0]",
    "ExpressionAttributeNames": {"#c": "cast"}, "FilterExpression": "sk > :one",
    "ExpressionAttributeValues": {":one": {"N": "1"}}}');
SELECT ddb.execute('BatchGetItem', '{"RequestItems": {"Proj": {"Keys": [{"pk": {"S": "a"}, "sk": {"N": "1"}}],
    "ProjectionExpression": "#c[1]", "ExpressionAttributeNames": {"#c": "cast"}}}}');

-- Errors.
SELECT ddb.execute('GetItem', '{"TableName": "Proj", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
    "ProjectionExpression": "info, info.lang"}');
SELECT ddb.execute('GetItem', '{"TableName": "Proj", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
    "ProjectionExpression": "odd, odd"}');
SELECT ddb.execute('GetItem', '{"TableName": "Proj", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
    "ProjectionExpression": "#c[0], #c.x", "ExpressionAttributeNames": {"#c": "cast"}}');
SELECT ddb.execute('GetItem', '{"TableName": "Proj", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
    "ProjectionExpression": "odd,"}');
SELECT ddb.execute('GetItem', '{"TableName": "Proj", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
    "ProjectionExpression": "#x"}');
SELECT ddb.execute('GetItem', '{"TableName": "Proj", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
    "ProjectionExpression": "odd, name"}');
SELECT ddb.execute('GetItem', '{"TableName": "Proj", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
    "ProjectionExpression": "odd", "ExpressionAttributeNames": {"#x": "x"}}');
SELECT ddb.execute('Scan', '{"TableName": "Proj", "ProjectionExpression": "pk", "Select": "ALL_ATTRIBUTES"}');
SELECT ddb.execute('Scan', '{"TableName": "Proj", "Select": "SPECIFIC_ATTRIBUTES"}');
-- Select against what is given: DynamoDB names the member and the choice
SELECT ddb.execute('Scan', '{"TableName": "Proj", "AttributesToGet": ["pk"], "Select": "ALL_ATTRIBUTES"}');
SELECT ddb.execute('Query', '{"TableName": "Proj", "KeyConditionExpression": "pk = :p",
    "ExpressionAttributeValues": {":p": {"S": "a"}}, "ProjectionExpression": "pk", "Select": "COUNT"}');
SELECT ddb.execute('Scan', '{"TableName": "Proj", "AttributesToGet": ["pk"], "Select": "COUNT"}');
SELECT ddb.execute('Scan', '{"TableName": "Proj", "ProjectionExpression": "pk", "Select": "ALL_PROJECTED_ATTRIBUTES"}');
SELECT ddb.execute('Query', '{"TableName": "Proj", "KeyConditionExpression": "pk = :p",
    "ExpressionAttributeValues": {":p": {"S": "a"}}, "Select": "SPECIFIC_ATTRIBUTES"}');
-- ALL_PROJECTED_ATTRIBUTES needs an index; ALL_ATTRIBUTES a global index that projects all
SELECT ddb.execute('Query', '{"TableName": "Proj", "KeyConditionExpression": "pk = :p",
    "ExpressionAttributeValues": {":p": {"S": "a"}}, "Select": "ALL_PROJECTED_ATTRIBUTES"}');
SELECT ddb.execute('Scan', '{"TableName": "Proj", "Select": "ALL_PROJECTED_ATTRIBUTES"}');
SELECT ddb.execute('Scan', '{"TableName": "Proj", "Select": "EVERYTHING"}');
SELECT ddb.create_index('Proj', 'ByNameKeys', 'name', 'S', projection_type => 'KEYS_ONLY');
SELECT ddb.create_index('Proj', 'ByNameAll', 'name', 'S');
SELECT ddb.execute('Query', '{"TableName": "Proj", "IndexName": "ByNameKeys", "KeyConditionExpression": "#n = :n",
    "ExpressionAttributeNames": {"#n": "name"}, "ExpressionAttributeValues": {":n": {"S": "Bo"}}, "Select": "ALL_ATTRIBUTES"}');
SELECT ddb.execute('Scan', '{"TableName": "Proj", "IndexName": "ByNameKeys", "Select": "ALL_ATTRIBUTES"}');
SELECT ddb.execute('Query', '{"TableName": "Proj", "IndexName": "ByNameKeys", "KeyConditionExpression": "#n = :n",
    "ExpressionAttributeNames": {"#n": "name"}, "ExpressionAttributeValues": {":n": {"S": "Bo"}},
    "Select": "ALL_PROJECTED_ATTRIBUTES"}');
SELECT ddb.execute('Query', '{"TableName": "Proj", "IndexName": "ByNameAll", "KeyConditionExpression": "#n = :n",
    "ExpressionAttributeNames": {"#n": "name"}, "ExpressionAttributeValues": {":n": {"S": "Bo"}}, "Select": "ALL_ATTRIBUTES"}');
SELECT ddb.delete_table('Proj');
