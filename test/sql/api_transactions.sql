-- TransactWriteItems and TransactGetItems: all actions or none, with a
-- CancellationReason per action; ClientRequestToken makes a retry harmless.
\set SHOW_CONTEXT never
SELECT ddb.create_table('Users', 'pk');
SELECT ddb.execute('PutItem', '{"TableName": "Users", "Item": {"pk": {"S": "USER#1"}, "email": {"S": "a@x"}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Users", "Item": {"pk": {"S": "EMAIL#a@x"}, "user": {"S": "1"}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Users", "Item": {"pk": {"S": "EMAIL#b@x"}, "user": {"S": "2"}}}');
-- swap user 1's primary email to c@x: all three writes land
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
  {"Update": {"TableName": "Users", "Key": {"pk": {"S": "USER#1"}}, "UpdateExpression": "SET email = :new",
              "ConditionExpression": "email = :old",
              "ExpressionAttributeValues": {":new": {"S": "c@x"}, ":old": {"S": "a@x"}}}},
  {"Delete": {"TableName": "Users", "Key": {"pk": {"S": "EMAIL#a@x"}}, "ConditionExpression": "attribute_exists(pk)"}},
  {"Put": {"TableName": "Users", "Item": {"pk": {"S": "EMAIL#c@x"}, "user": {"S": "1"}},
           "ConditionExpression": "attribute_not_exists(pk)"}}]}');
SELECT pk::text, item FROM public."Users" ORDER BY pk;
-- swap to b@x, which user 2 holds: the whole transaction is cancelled
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
  {"Update": {"TableName": "Users", "Key": {"pk": {"S": "USER#1"}}, "UpdateExpression": "SET email = :new",
              "ExpressionAttributeValues": {":new": {"S": "b@x"}}}},
  {"Delete": {"TableName": "Users", "Key": {"pk": {"S": "EMAIL#c@x"}}}},
  {"Put": {"TableName": "Users", "Item": {"pk": {"S": "EMAIL#b@x"}, "user": {"S": "1"}},
           "ConditionExpression": "attribute_not_exists(pk)", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}}]}');
SELECT pk::text, item FROM public."Users" ORDER BY pk;
-- ConditionCheck guards a write on another item without changing it
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
  {"ConditionCheck": {"TableName": "Users", "Key": {"pk": {"S": "USER#1"}}, "ConditionExpression": "email = :e",
                      "ExpressionAttributeValues": {":e": {"S": "zzz"}}}},
  {"Put": {"TableName": "Users", "Item": {"pk": {"S": "NOTE#1"}}}}]}');
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
  {"ConditionCheck": {"TableName": "Users", "Key": {"pk": {"S": "USER#1"}}, "ConditionExpression": "email = :e",
                      "ExpressionAttributeValues": {":e": {"S": "c@x"}}}},
  {"Put": {"TableName": "Users", "Item": {"pk": {"S": "NOTE#1"}}}}]}');
SELECT count(*) AS notes FROM public."Users" WHERE pk ^@ 'NOTE#';
-- two actions on one item are refused before anything runs
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
  {"Put": {"TableName": "Users", "Item": {"pk": {"S": "NOTE#2"}}}},
  {"Delete": {"TableName": "Users", "Key": {"pk": {"S": "NOTE#2"}}}}]}');
-- ClientRequestToken: a retry of the same request is a no-op; a different request under it fails
SELECT ddb.execute('TransactWriteItems', '{"ClientRequestToken": "t-1", "TransactItems": [
  {"Update": {"TableName": "Users", "Key": {"pk": {"S": "NOTE#1"}}, "UpdateExpression": "ADD hits :one",
              "ExpressionAttributeValues": {":one": {"N": "1"}}}}]}');
SELECT ddb.execute('TransactWriteItems', '{"ClientRequestToken": "t-1", "TransactItems": [
  {"Update": {"TableName": "Users", "Key": {"pk": {"S": "NOTE#1"}}, "UpdateExpression": "ADD hits :one",
              "ExpressionAttributeValues": {":one": {"N": "1"}}}}]}');
SELECT item->'hits' AS hits FROM public."Users" WHERE pk = 'NOTE#1';
SELECT ddb.execute('TransactWriteItems', '{"ClientRequestToken": "t-1", "TransactItems": [
  {"Update": {"TableName": "Users", "Key": {"pk": {"S": "NOTE#1"}}, "UpdateExpression": "ADD hits :two",
              "ExpressionAttributeValues": {":two": {"N": "2"}}}}]}');
-- a cancelled request leaves its token unused: the same request runs again once it can succeed
SELECT ddb.execute('TransactWriteItems', '{"ClientRequestToken": "t-2", "TransactItems": [
  {"ConditionCheck": {"TableName": "Users", "Key": {"pk": {"S": "NOTE#9"}}, "ConditionExpression": "attribute_exists(pk)"}},
  {"Put": {"TableName": "Users", "Item": {"pk": {"S": "NOTE#10"}}}}]}');
SELECT ddb.execute('PutItem', '{"TableName": "Users", "Item": {"pk": {"S": "NOTE#9"}}}');
SELECT ddb.execute('TransactWriteItems', '{"ClientRequestToken": "t-2", "TransactItems": [
  {"ConditionCheck": {"TableName": "Users", "Key": {"pk": {"S": "NOTE#9"}}, "ConditionExpression": "attribute_exists(pk)"}},
  {"Put": {"TableName": "Users", "Item": {"pk": {"S": "NOTE#10"}}}}]}');
SELECT count(*) AS note10 FROM public."Users" WHERE pk = 'NOTE#10';
-- an error other than a failed condition fails the request as itself, after
-- earlier actions ran: they are rolled back too
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
  {"Put": {"TableName": "Users", "Item": {"pk": {"S": "NOTE#20"}}}},
  {"Update": {"TableName": "Users", "Key": {"pk": {"S": "NOTE#1"}}, "UpdateExpression": "SET pk = :x",
              "ExpressionAttributeValues": {":x": {"S": "NOTE#21"}}}}]}');
SELECT count(*) AS note20 FROM public."Users" WHERE pk = 'NOTE#20';
-- TransactGetItems: one response per request, in order; missing items are empty
SELECT ddb.execute('TransactGetItems', '{"TransactItems": [
  {"Get": {"TableName": "Users", "Key": {"pk": {"S": "USER#1"}}}},
  {"Get": {"TableName": "Users", "Key": {"pk": {"S": "NOPE"}}}},
  {"Get": {"TableName": "Users", "Key": {"pk": {"S": "EMAIL#c@x"}}, "ProjectionExpression": "#u",
           "ExpressionAttributeNames": {"#u": "user"}}}]}');
-- bad requests
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": []}');
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [{"Frobnicate": {}}]}');
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "Nope", "Item": {"pk": {"S": "x"}}}}]}');
-- a Get whose key DynamoDB refuses cancels the request with a ValidationError reason
SELECT ddb.execute('TransactGetItems', '{"TransactItems": [
  {"Get": {"TableName": "Users", "Key": {"pk": {"S": "USER#1"}}}},
  {"Get": {"TableName": "Users", "Key": {}}}]}');
SELECT ddb.execute('TransactGetItems', '{"TransactItems": [
  {"Get": {"TableName": "Users", "Key": {"pk": {"S": "USER#1"}}}},
  {"Get": {"TableName": "Users", "Key": {"pk": {"S": "USER#1"}}}}]}');
-- the items a transaction puts weigh at most 4 MB together
SELECT ddb.execute('TransactWriteItems', jsonb_build_object('TransactItems',
  (SELECT jsonb_agg(jsonb_build_object('Put', jsonb_build_object('TableName', 'Users', 'Item',
     jsonb_build_object('pk', jsonb_build_object('S', 'BIG#' || g), 'payload', jsonb_build_object('S', repeat('x', 350000))))))
   FROM generate_series(1, 12) g)));
SELECT count(*) AS big FROM public."Users" WHERE pk ^@ 'BIG#';
SELECT ddb.delete_table('Users');
-- the seed's primary-email swap (catalog S8): old email off, new one on only
-- if verified, profile email updated, in one transaction
SELECT ddb.create_table('UserEmails', 'PK', range_key => 'SK');
SELECT ddb.execute('BatchWriteItem', '{"RequestItems": {"UserEmails": [
  {"PutRequest": {"Item": {"PK": {"S": "USER#u1"}, "SK": {"S": "PROFILE"}, "email": {"S": "old@x.com"}, "version": {"N": "1"}}}},
  {"PutRequest": {"Item": {"PK": {"S": "USER#u1"}, "SK": {"S": "EMAIL#e1"}, "email": {"S": "old@x.com"}, "isPrimary": {"BOOL": true}, "isVerified": {"BOOL": true}}}},
  {"PutRequest": {"Item": {"PK": {"S": "USER#u1"}, "SK": {"S": "EMAIL#e2"}, "email": {"S": "new@x.com"}, "isPrimary": {"BOOL": false}, "isVerified": {"BOOL": true}}}},
  {"PutRequest": {"Item": {"PK": {"S": "USER#u1"}, "SK": {"S": "EMAIL#e3"}, "email": {"S": "unverified@x.com"}, "isPrimary": {"BOOL": false}, "isVerified": {"BOOL": false}}}}]}}');
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
  {"Update": {"TableName": "UserEmails", "Key": {"PK": {"S": "USER#u1"}, "SK": {"S": "EMAIL#e1"}},
              "UpdateExpression": "SET isPrimary = :f", "ConditionExpression": "isPrimary = :t",
              "ExpressionAttributeValues": {":t": {"BOOL": true}, ":f": {"BOOL": false}}}},
  {"Update": {"TableName": "UserEmails", "Key": {"PK": {"S": "USER#u1"}, "SK": {"S": "EMAIL#e2"}},
              "UpdateExpression": "SET isPrimary = :t", "ConditionExpression": "isVerified = :t",
              "ExpressionAttributeValues": {":t": {"BOOL": true}}}},
  {"Update": {"TableName": "UserEmails", "Key": {"PK": {"S": "USER#u1"}, "SK": {"S": "PROFILE"}},
              "UpdateExpression": "SET email = :e ADD version :one",
              "ExpressionAttributeValues": {":e": {"S": "new@x.com"}, ":one": {"N": "1"}}}}]}');
SELECT sk::text, item->>'email' AS email, item->'isPrimary' AS primary, item->'version' AS version
FROM public."UserEmails" ORDER BY sk;
-- to the unverified address: cancelled as a whole, nothing changes
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
  {"Update": {"TableName": "UserEmails", "Key": {"PK": {"S": "USER#u1"}, "SK": {"S": "EMAIL#e2"}},
              "UpdateExpression": "SET isPrimary = :f", "ConditionExpression": "isPrimary = :t",
              "ExpressionAttributeValues": {":t": {"BOOL": true}, ":f": {"BOOL": false}}}},
  {"Update": {"TableName": "UserEmails", "Key": {"PK": {"S": "USER#u1"}, "SK": {"S": "EMAIL#e3"}},
              "UpdateExpression": "SET isPrimary = :t", "ConditionExpression": "isVerified = :t",
              "ExpressionAttributeValues": {":t": {"BOOL": true}}}},
  {"Update": {"TableName": "UserEmails", "Key": {"PK": {"S": "USER#u1"}, "SK": {"S": "PROFILE"}},
              "UpdateExpression": "SET email = :e ADD version :one",
              "ExpressionAttributeValues": {":e": {"S": "unverified@x.com"}, ":one": {"N": "1"}}}}]}');
SELECT sk::text, item->>'email' AS email, item->'isPrimary' AS primary, item->'version' AS version
FROM public."UserEmails" ORDER BY sk;
SELECT ddb.delete_table('UserEmails');

-- an action whose key or item DynamoDB refuses is that action's ValidationError
-- (the other actions run: a malformed expression elsewhere is the request's error)
SELECT ddb.create_table('TxKeys', 'pk');
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
  {"Update": {"TableName": "TxKeys", "Key": {"pk": {"N": "1"}}, "UpdateExpression": "SET n = :v",
              "ExpressionAttributeValues": {":v": {"N": "1"}}}},
  {"Put": {"TableName": "TxKeys", "Item": {"pk": {"S": "b"}}}},
  {"Update": {"TableName": "TxKeys", "Key": {"pk": {"S": "c"}}, "UpdateExpression": "SET pk = :v",
              "ExpressionAttributeValues": {":v": {"S": "d"}}}},
  {"Put": {"TableName": "TxKeys", "Item": {"pk": {"S": "e"}}, "ConditionExpression": "attribute_exists(pk)"}},
  {"Delete": {"TableName": "TxKeys", "Key": {}}}]}');
SELECT count(*) AS written FROM public."TxKeys";
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [
  {"Update": {"TableName": "TxKeys", "Key": {"pk": {"N": "1"}}, "UpdateExpression": "SET n = :v",
              "ExpressionAttributeValues": {":v": {"N": "1"}}}},
  {"ConditionCheck": {"TableName": "TxKeys", "Key": {"pk": {"S": "b"}}, "ConditionExpression": "n = = :v",
                      "ExpressionAttributeValues": {":v": {"N": "1"}}}}]}');
SELECT ddb.execute('TransactGetItems', '{"TransactItems": [
  {"Get": {"TableName": "TxKeys", "Key": {"pk": {"S": "b"}}}}, {"Get": {"TableName": "TxKeys", "Key": {"id": {"S": "b"}}}}]}');
SELECT ddb.delete_table('TxKeys');
-- a token is the caller's: another role's identical request under it is not
-- a replay of this one (refused, not answered as if it had run)
SELECT ddb.create_table('Tokened', 'pk');
DROP ROLE IF EXISTS token_writer;
CREATE ROLE token_writer NOLOGIN;
SELECT ddb.grant_tables('token_writer', 'Tokened');
SELECT ddb.execute('TransactWriteItems', '{"ClientRequestToken": "shared-token",
    "TransactItems": [{"Put": {"TableName": "Tokened", "Item": {"pk": {"S": "a"}}}}]}');
SELECT ddb.execute('TransactWriteItems', '{"ClientRequestToken": "shared-token",
    "TransactItems": [{"Put": {"TableName": "Tokened", "Item": {"pk": {"S": "a"}}}}]}');
SELECT ddb.execute_as('token_writer', 'TransactWriteItems', '{"ClientRequestToken": "shared-token",
    "TransactItems": [{"Put": {"TableName": "Tokened", "Item": {"pk": {"S": "a"}}}}]}');
SELECT ddb.delete_table('Tokened');
DROP OWNED BY token_writer;
DROP ROLE token_writer;
