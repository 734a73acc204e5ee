-- ConditionExpression on PutItem and DeleteItem: checked against the item
-- (or its absence) under the row lock; a failure writes nothing and may
-- return the item (ReturnValuesOnConditionCheckFailure).
\set SHOW_CONTEXT never
SELECT ddb.create_table('Accts', 'pk');
SELECT ddb.update_time_to_live('Accts', 'ttl');
SELECT ddb.execute('PutItem', '{"TableName": "Accts", "Item": {"pk": {"S": "a"}, "v": {"N": "1"}},
    "ConditionExpression": "attribute_not_exists(pk)"}');
SELECT ddb.execute('PutItem', '{"TableName": "Accts", "Item": {"pk": {"S": "a"}, "v": {"N": "2"}},
    "ConditionExpression": "attribute_not_exists(pk)"}');
-- optimistic locking: write version 2 only over version 1
SELECT ddb.execute('PutItem', '{"TableName": "Accts", "Item": {"pk": {"S": "a"}, "v": {"N": "2"}},
    "ConditionExpression": "v = :expected", "ExpressionAttributeValues": {":expected": {"N": "1"}},
    "ReturnValues": "ALL_OLD"}');
SELECT ddb.execute('PutItem', '{"TableName": "Accts", "Item": {"pk": {"S": "a"}, "v": {"N": "3"}},
    "ConditionExpression": "v = :expected", "ExpressionAttributeValues": {":expected": {"N": "1"}},
    "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}');
SELECT item FROM public."Accts" WHERE pk = 'a';
-- an expired item counts as absent
SELECT ddb.put_item('Accts', jsonb_build_object('pk', 'old', 'ttl', extract(epoch FROM now())::bigint - 10));
SELECT ddb.execute('PutItem', '{"TableName": "Accts", "Item": {"pk": {"S": "old"}, "fresh": {"BOOL": true}},
    "ConditionExpression": "attribute_not_exists(pk)"}');
SELECT item FROM public."Accts" WHERE pk = 'old';
-- DeleteItem
SELECT ddb.execute('DeleteItem', '{"TableName": "Accts", "Key": {"pk": {"S": "a"}},
    "ConditionExpression": "v > :five", "ExpressionAttributeValues": {":five": {"N": "5"}}}');
SELECT ddb.execute('DeleteItem', '{"TableName": "Accts", "Key": {"pk": {"S": "a"}},
    "ConditionExpression": "v < :five", "ExpressionAttributeValues": {":five": {"N": "5"}}, "ReturnValues": "ALL_OLD"}');
SELECT ddb.execute('DeleteItem', '{"TableName": "Accts", "Key": {"pk": {"S": "zz"}},
    "ConditionExpression": "attribute_exists(pk)"}');
SELECT ddb.execute('DeleteItem', '{"TableName": "Accts", "Key": {"pk": {"S": "zz"}},
    "ConditionExpression": "attribute_not_exists(pk)"}');
-- errors
SELECT ddb.execute('PutItem', '{"TableName": "Accts", "Item": {"pk": {"S": "b"}},
    "ConditionExpression": "v = :x"}');
SELECT ddb.execute('PutItem', '{"TableName": "Accts", "Item": {"pk": {"S": "b"}},
    "ConditionExpression": "attribute_not_exists(pk)", "ReturnValuesOnConditionCheckFailure": "ALL_NEW"}');
SELECT ddb.execute('PutItem', '{"TableName": "Accts", "Item": {"pk": {"S": "b"}},
    "ConditionExpression": "attribute_not_exists(pk) AND"}');
-- begins_with on a number is refused before any item is read, as DynamoDB does
SELECT ddb.execute('PutItem', '{"TableName": "Accts", "Item": {"pk": {"S": "b"}},
    "ConditionExpression": "begins_with(pk, :n)", "ExpressionAttributeValues": {":n": {"N": "1"}}}');
SELECT ddb.execute('Scan', '{"TableName": "Accts", "FilterExpression": "begins_with(pk, :b)",
    "ExpressionAttributeValues": {":b": {"BOOL": true}}}');
SELECT count(*) AS items FROM public."Accts";
SELECT ddb.delete_table('Accts');
