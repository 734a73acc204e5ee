-- pgTAP: conditional writes, updates and transactions raise DynamoDB's
-- errors with the extension's SQLSTATEs, and a failure writes nothing.
BEGIN;
SELECT plan(14);

SELECT has_table('ddb', 'transaction_tokens', 'ClientRequestToken memory is a table');
SELECT ddb.create_table('TapUsers', 'pk');

SELECT lives_ok($$SELECT ddb.execute('PutItem', '{"TableName": "TapUsers", "Item": {"pk": {"S": "u1"}, "version": {"N": "1"}},
    "ConditionExpression": "attribute_not_exists(pk)"}')$$, 'a first claim of a key succeeds');
SELECT throws_ok($$SELECT ddb.execute('PutItem', '{"TableName": "TapUsers", "Item": {"pk": {"S": "u1"}},
    "ConditionExpression": "attribute_not_exists(pk)"}')$$,
    'YD002', 'The conditional request failed', 'a second claim fails the condition');
SELECT throws_ok($$SELECT ddb.execute('UpdateItem', '{"TableName": "TapUsers", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET version = :two", "ConditionExpression": "version = :three",
    "ExpressionAttributeValues": {":two": {"N": "2"}, ":three": {"N": "3"}}}')$$,
    'YD002', 'The conditional request failed', 'an update with a stale version fails');
SELECT is((SELECT item->>'version' FROM public."TapUsers" WHERE pk = 'u1'), '1', 'and changes nothing');
SELECT throws_ok($$SELECT ddb.execute('UpdateItem', '{"TableName": "TapUsers", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET pk = :x", "ExpressionAttributeValues": {":x": {"S": "u2"}}}')$$,
    'YD001', 'One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key',
    'a key attribute cannot be updated');
SELECT throws_ok($$SELECT ddb.execute('Scan', '{"TableName": "TapUsers", "FilterExpression": "begins_with(pk, :n)",
    "ExpressionAttributeValues": {":n": {"N": "1"}}}')$$, 'YD001',
    'Invalid FilterExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N',
    'begins_with on a number is refused up front');

SELECT throws_ok($$SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
    {"Put": {"TableName": "TapUsers", "Item": {"pk": {"S": "u3"}}}},
    {"ConditionCheck": {"TableName": "TapUsers", "Key": {"pk": {"S": "u1"}}, "ConditionExpression": "attribute_not_exists(pk)"}}]}')$$,
    'YD003', 'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]',
    'a transaction with a failing check is cancelled');
SELECT is((SELECT count(*)::int FROM public."TapUsers" WHERE pk = 'u3'), 0, 'and its other actions are rolled back');
SELECT throws_ok($$SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
    {"Put": {"TableName": "TapUsers", "Item": {"pk": {"S": "u4"}}}},
    {"Delete": {"TableName": "TapUsers", "Key": {"pk": {"S": "u4"}}}}]}')$$,
    'YD001', 'Transaction request cannot include multiple operations on one item', 'two actions on one item are refused');

SELECT is(ddb.execute('TransactWriteItems', '{"ClientRequestToken": "tap-1", "TransactItems": [
    {"Update": {"TableName": "TapUsers", "Key": {"pk": {"S": "u1"}}, "UpdateExpression": "ADD hits :one",
                "ExpressionAttributeValues": {":one": {"N": "1"}}}}]}'), '{}'::jsonb, 'a transaction with a token runs');
SELECT is(ddb.execute('TransactWriteItems', '{"ClientRequestToken": "tap-1", "TransactItems": [
    {"Update": {"TableName": "TapUsers", "Key": {"pk": {"S": "u1"}}, "UpdateExpression": "ADD hits :one",
                "ExpressionAttributeValues": {":one": {"N": "1"}}}}]}')
          || jsonb_build_object('hits', (SELECT item->'hits' FROM public."TapUsers" WHERE pk = 'u1')),
          '{"hits": 1}'::jsonb, 'its retry answers {} and does not run again');
SELECT throws_ok($$SELECT ddb.execute('TransactWriteItems', '{"ClientRequestToken": "tap-1", "TransactItems": [
    {"Delete": {"TableName": "TapUsers", "Key": {"pk": {"S": "u1"}}}}]}')$$,
    'YD008', 'Request failed with the same idempotency token but different parameters',
    'another request under the same token is refused');
SELECT is(jsonb_array_length(ddb.execute('TransactGetItems', '{"TransactItems": [
    {"Get": {"TableName": "TapUsers", "Key": {"pk": {"S": "u1"}}}},
    {"Get": {"TableName": "TapUsers", "Key": {"pk": {"S": "none"}}}}]}')->'Responses'), 2,
    'TransactGetItems answers once per Get');

SELECT * FROM finish();
ROLLBACK;
