-- DynamoDB's legacy parameters, served by rewriting them into expressions:
-- Expected, ConditionalOperator, AttributeUpdates, AttributesToGet,
-- KeyConditions, QueryFilter, ScanFilter.
\set SHOW_CONTEXT never
SELECT ddb.create_table('Legacy', 'pk', 'S', 'sk', 'N') IS NOT NULL AS created;
SELECT ddb.put_item('Legacy', jsonb_build_object('pk', 'a', 'sk', n, 'name', 'item ' || n, 'tags', '{"$SS": ["x", "y"]}'::jsonb,
                                                 'score', n * 10))
FROM generate_series(1, 5) n;

-- Expected: Exists false / true, Value, ComparisonOperator; ConditionalOperator
SELECT ddb.execute('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "b"}, "sk": {"N": "1"}},
  "Expected": {"pk": {"Exists": false}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "b"}, "sk": {"N": "1"}},
  "Expected": {"pk": {"Exists": false}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "name": {"S": "one"}},
  "Expected": {"name": {"Value": {"S": "item 1"}}}, "ReturnValues": "ALL_OLD"}') -> 'Attributes' -> 'name';
SELECT ddb.execute('DeleteItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "a"}, "sk": {"N": "2"}},
  "Expected": {"score": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "100"}]},
               "name": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"S": "item"}]}},
  "ConditionalOperator": "OR"}');
SELECT ddb.execute('DeleteItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "a"}, "sk": {"N": "3"}},
  "Expected": {"score": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "100"}]},
               "name": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"S": "item"}]}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}},
  "Expected": {"tags": {"ComparisonOperator": "NULL"}, "pk": {"ComparisonOperator": "NE", "Value": {"S": "c"}}}}');

-- AttributeUpdates: PUT, ADD (number, set, list), DELETE (attribute, set elements)
SELECT ddb.execute('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "a"}, "sk": {"N": "4"}},
  "AttributeUpdates": {"name": {"Action": "PUT", "Value": {"S": "four"}}, "score": {"Action": "ADD", "Value": {"N": "2"}},
                       "tags": {"Action": "DELETE", "Value": {"SS": ["x"]}}, "log": {"Action": "ADD", "Value": {"L": [{"S": "e1"}]}},
                       "gone": {"Action": "DELETE"}},
  "Expected": {"score": {"Value": {"N": "40"}}}, "ReturnValues": "ALL_NEW"}') -> 'Attributes';
SELECT ddb.execute('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "a"}, "sk": {"N": "4"}},
  "AttributeUpdates": {"log": {"Action": "ADD", "Value": {"L": [{"S": "e2"}]}}, "name": {"Action": "DELETE"}},
  "ReturnValues": "ALL_NEW"}') -> 'Attributes';

-- AttributesToGet on GetItem, Query, Scan and BatchGetItem
SELECT ddb.execute('GetItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "AttributesToGet": ["name", "missing"]}');
SELECT ddb.execute('BatchGetItem', '{"RequestItems": {"Legacy": {"Keys": [{"pk": {"S": "a"}, "sk": {"N": "5"}}],
  "AttributesToGet": ["score"]}}}');

-- KeyConditions and QueryFilter; ScanFilter
SELECT ddb.execute('Query', '{"TableName": "Legacy",
  "KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]},
                    "sk": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "2"}, {"N": "5"}]}},
  "QueryFilter": {"score": {"ComparisonOperator": "IN", "AttributeValueList": [{"N": "42"}, {"N": "50"}]}},
  "AttributesToGet": ["sk", "score"], "ScanIndexForward": false}');
SELECT ddb.execute('Query', '{"TableName": "Legacy",
  "KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}},
  "FilterExpression": "score > :s", "ExpressionAttributeValues": {":s": {"N": "45"}}}') -> 'Count';
-- the generated placeholders keep clear of the request's own
SELECT ddb.execute('Query', '{"TableName": "Legacy",
  "KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}},
  "FilterExpression": "attribute_exists(#legacy0) AND #legacy1 = :legacy0",
  "ExpressionAttributeNames": {"#legacy0": "tags", "#legacy1": "name"}, "ExpressionAttributeValues": {":legacy0": {"S": "item 5"}}}') -> 'Count';
SELECT ddb.execute('Scan', '{"TableName": "Legacy",
  "ScanFilter": {"name": {"ComparisonOperator": "CONTAINS", "AttributeValueList": [{"S": "item"}]},
                 "score": {"ComparisonOperator": "NOT_NULL"}}, "ConditionalOperator": "AND", "Select": "COUNT"}');

-- errors, with DynamoDB's messages
SELECT ddb.execute('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}},
  "Expected": {"pk": {"Exists": false}}, "ConditionExpression": "attribute_not_exists(pk)"}');
SELECT ddb.execute('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}},
  "Expected": {"pk": {"Exists": true}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}},
  "Expected": {"pk": {"Exists": false, "Value": {"S": "d"}}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}},
  "Expected": {"pk": {"ComparisonOperator": "EQ"}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}},
  "Expected": {"pk": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"S": "z"}, {"S": "a"}]}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}},
  "Expected": {"pk": {"ComparisonOperator": "GT", "AttributeValueList": [{"SS": ["a"]}]}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}},
  "Expected": {"pk": {"ComparisonOperator": "LIKE", "AttributeValueList": [{"S": "a"}]}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}},
  "Expected": {"pk": {"Exists": false}}, "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}},
  "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "AttributeUpdates": {"name": {"Action": "PUT"}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "AttributeUpdates": {"name": {"Action": "ADD", "Value": {"S": "x"}}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "AttributeUpdates": {"sk": {"Action": "PUT", "Value": {"N": "9"}}}}');
SELECT ddb.execute('GetItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "AttributesToGet": ["name", "name"]}');
SELECT ddb.execute('Query', '{"TableName": "Legacy",
  "KeyConditions": {"pk": {"ComparisonOperator": "NE", "AttributeValueList": [{"S": "a"}]}}}');
SELECT ddb.execute('Query', '{"TableName": "Legacy",
  "KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}},
  "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}}}');
SELECT ddb.execute('Scan', '{"TableName": "Legacy", "ScanFilter": {"score": {"ComparisonOperator": "EQ"}}}');
SELECT ddb.execute('Scan', '{"TableName": "Legacy", "ScanFilter": {"score": {"ComparisonOperator": "NULL"}},
  "ConditionalOperator": "XOR"}');
SELECT ddb.execute('GetItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "ScanFilter": {"score": {"ComparisonOperator": "NULL"}}}');
-- placeholders with only legacy parameters: GetItem has no expression to name in its message
SELECT ddb.execute('GetItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "AttributesToGet": ["name"], "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT ddb.execute('GetItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "AttributesToGet": ["name"], "ExpressionAttributeNames": {"#n": "name"}}');
SELECT ddb.delete_table('Legacy');
