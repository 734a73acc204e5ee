-- UpdateItem: SET (with + and -, if_not_exists, list_append), REMOVE, ADD,
-- DELETE, every ReturnValues option, ConditionExpression (optimistic
-- locking), and DynamoDB's errors.
\set SHOW_CONTEXT never
SELECT ddb.create_table('Users', 'pk');
-- an update creates the item it does not find
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET #n = :n, version = :one, tags = :t, emails = :e",
    "ExpressionAttributeNames": {"#n": "name"},
    "ExpressionAttributeValues": {":n": {"S": "Ann"}, ":one": {"N": "1"}, ":t": {"SS": ["a"]}, ":e": {"L": [{"S": "x@y"}]}},
    "ReturnValues": "ALL_NEW"}');
-- optimistic locking: version + 1 only over the version read
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET version = version + :one, emails = list_append(emails, :more), nick = if_not_exists(nick, :n) ADD tags :t2, visits :one REMOVE #n",
    "ExpressionAttributeNames": {"#n": "name"},
    "ExpressionAttributeValues": {":one": {"N": "1"}, ":more": {"L": [{"S": "z@y"}]}, ":n": {"S": "annie"}, ":t2": {"SS": ["b", "a"]}},
    "ConditionExpression": "version = :one", "ReturnValues": "UPDATED_NEW"}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET version = :nine", "ConditionExpression": "version = :one",
    "ExpressionAttributeValues": {":nine": {"N": "9"}, ":one": {"N": "1"}},
    "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "DELETE tags :a REMOVE emails[0] SET profile = :m, visits = visits - :one",
    "ExpressionAttributeValues": {":a": {"SS": ["a"]}, ":m": {"M": {"city": {"S": "Oslo"}}}, ":one": {"N": "1"}},
    "ReturnValues": "UPDATED_OLD"}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET profile.city = :c, profile.zip = :z, emails[5] = :last ADD counts :s DELETE tags :b",
    "ExpressionAttributeValues": {":c": {"S": "Bergen"}, ":z": {"S": "5003"}, ":last": {"S": "end@y"},
                                  ":s": {"NS": ["1", "2"]}, ":b": {"SS": ["b"]}},
    "ReturnValues": "ALL_OLD"}') -> 'Attributes' -> 'profile' AS old_profile;
SELECT item FROM public."Users" WHERE pk = 'u1';
-- without an UpdateExpression the item is only created (keys alone)
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u2"}}, "ReturnValues": "ALL_NEW"}');

-- Errors, none of which writes anything.
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET pk = :v", "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET Name = :v", "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET a = :v, a.b = :v", "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET absent.x = :v", "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET version = nope + :v", "ExpressionAttributeValues": {":v": {"N": "1"}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET version = nick + :v", "ExpressionAttributeValues": {":v": {"N": "1"}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "ADD nick :v", "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "ADD version :v", "ExpressionAttributeValues": {":v": {"SS": ["x"]}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET a = :v SET b = :v", "ExpressionAttributeValues": {":v": {"N": "1"}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET a = :v", "ExpressionAttributeValues": {":v": {"N": "1"}}, "ReturnValues": "MOST"}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Users", "Key": {"pk": {"S": "u1"}},
    "UpdateExpression": "SET version = version + :big", "ExpressionAttributeValues": {":big": {"N": "9.99e125"}}}');
SELECT item FROM public."Users" WHERE pk = 'u1';
SELECT ddb.delete_table('Users');
