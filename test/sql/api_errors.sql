-- PostgreSQL's errors a request can cause, as DynamoDB's (DDB_SQLSTATE_ERRORS
-- in src/error_types.h, docs/errors.md), and DynamoDB's limits.
\set SHOW_CONTEXT never
-- each request's SQLSTATE (PostgreSQL's own stays, for SQL callers), and the
-- __type and message of the DynamoDB body a client of the gateway reads
CREATE FUNCTION pg_temp.try(operation text, request jsonb) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    state text;
    message text;
    body text;
    j jsonb;
BEGIN
    PERFORM ddb.execute(operation, request);
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT, body = PG_EXCEPTION_DETAIL;
    j := NULLIF(body, '')::jsonb;
    RETURN state || ' ' || coalesce(split_part(j ->> '__type', '#', 2) || ': ' || (j ->> 'message'), '(no body): ' || message);
END $$;
SELECT ddb.create_table('Errors', 'pk');
SELECT ddb.create_table('ErrorsRange', 'pk', 'S', 'sk', 'S');

-- a trigger raising the error an item names, as a model's check or the server would
CREATE FUNCTION pg_temp.raise_named() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.item ->> 'raise' = 'unique_violation' THEN
        RAISE EXCEPTION USING ERRCODE = 'unique_violation', MESSAGE = 'duplicate key value violates unique constraint "secret_name"',
            CONSTRAINT = 'secret_name';
    ELSIF NEW.item ? 'raise' THEN
        RAISE EXCEPTION USING ERRCODE = NEW.item ->> 'raise', MESSAGE = 'the model says: ' || (NEW.item ->> 'raise');
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER raise_named BEFORE INSERT OR UPDATE ON public."Errors" FOR EACH ROW EXECUTE FUNCTION pg_temp.raise_named();
SELECT e AS raised, pg_temp.try('PutItem', jsonb_build_object('TableName', 'Errors',
    'Item', jsonb_build_object('pk', '{"S": "a"}'::jsonb, 'raise', jsonb_build_object('S', e)))) AS answer
FROM unnest(ARRAY['invalid_parameter_value', 'division_by_zero', 'no_data_found', 'check_violation', 'unique_violation',
                  'exclusion_violation', 'deadlock_detected', 'serialization_failure', 'lock_not_available',
                  'insufficient_privilege', 'internal_error', 'raise_exception']) e;
-- a unique index's violation: a failed condition, without the index's name
CREATE UNIQUE INDEX secret_index ON public."Errors" ((item ->> 'u'));
SELECT pg_temp.try('PutItem', '{"TableName": "Errors", "Item": {"pk": {"S": "u1"}, "u": {"S": "x"}}}');
SELECT pg_temp.try('PutItem', '{"TableName": "Errors", "Item": {"pk": {"S": "u2"}, "u": {"S": "x"}}}');
-- in a transaction: the request's error as it is (a deadlock: the action's TransactionConflict reason)
SELECT pg_temp.try('TransactWriteItems', '{"TransactItems": [
    {"Put": {"TableName": "Errors", "Item": {"pk": {"S": "u3"}}}},
    {"Put": {"TableName": "Errors", "Item": {"pk": {"S": "u4"}, "u": {"S": "x"}}}}]}');
SELECT pg_temp.try('TransactWriteItems', '{"TransactItems": [
    {"Put": {"TableName": "Errors", "Item": {"pk": {"S": "u3"}, "raise": {"S": "deadlock_detected"}}}}]}');
-- a request the cast to jsonb already refuses never reaches ddb.execute (the gateway maps it)
SELECT ddb.execute('PutItem', '{"TableName": "Errors", "Item": {"pk": {"S": "a\u0000b"}}}');

-- DynamoDB's limits: attribute names of 1 to 65535 bytes
SELECT pg_temp.try('PutItem', '{"TableName": "Errors", "Item": {"pk": {"S": "n"}, "": {"S": "x"}}}');
SELECT pg_temp.try('PutItem', '{"TableName": "Errors", "Item": {"pk": {"S": "n"}, "m": {"M": {"": {"S": "x"}}}}}');
SELECT pg_temp.try('PutItem', jsonb_build_object('TableName', 'Errors', 'Item', jsonb_build_object('pk', '{"S": "n"}'::jsonb,
    repeat('n', 65536), '{"S": "x"}'::jsonb)));
SELECT pg_temp.try('PutItem', jsonb_build_object('TableName', 'Errors', 'Item', jsonb_build_object('pk', '{"S": "n"}'::jsonb,
    repeat('n', 65535), '{"S": "x"}'::jsonb)));
SELECT pg_temp.try('UpdateItem', '{"TableName": "Errors", "Key": {"pk": {"S": "n"}}, "UpdateExpression": "SET #e = :v",
    "ExpressionAttributeNames": {"#e": ""}, "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT pg_temp.try('UpdateItem', jsonb_build_object('TableName', 'Errors', 'Key', '{"pk": {"S": "n"}}'::jsonb,
    'UpdateExpression', 'SET #e = :v', 'ExpressionAttributeNames', jsonb_build_object('#e', repeat('n', 65536)),
    'ExpressionAttributeValues', '{":v": {"S": "x"}}'::jsonb));
-- nesting: 32 levels of maps, not 33
SELECT n AS levels, pg_temp.try('PutItem', jsonb_build_object('TableName', 'Errors', 'Item', jsonb_build_object('pk', '{"S": "d"}'::jsonb,
    'x', (SELECT (repeat('{"M": {"a": ', n) || '{"S": "leaf"}' || repeat('}}', n))::jsonb)))) AS answer
FROM (VALUES (32), (33)) v(n);
-- keys: a partition key of 2048 bytes, a sort key of 1024
SELECT n AS bytes, pg_temp.try('PutItem', jsonb_build_object('TableName', 'Errors',
    'Item', jsonb_build_object('pk', jsonb_build_object('S', repeat('k', n))))) AS answer
FROM (VALUES (2048), (2049)) v(n);
SELECT n AS bytes, pg_temp.try('PutItem', jsonb_build_object('TableName', 'ErrorsRange',
    'Item', jsonb_build_object('pk', '{"S": "p"}'::jsonb, 'sk', jsonb_build_object('S', repeat('k', n))))) AS answer
FROM (VALUES (1024), (1025)) v(n);
-- items of 400 KB
SELECT n AS bytes, pg_temp.try('PutItem', jsonb_build_object('TableName', 'Errors',
    'Item', jsonb_build_object('pk', '{"S": "big"}'::jsonb, 'v', jsonb_build_object('S', repeat('v', n))))) AS answer
FROM (VALUES (400 * 1024 - 10), (400 * 1024)) v(n);
-- expressions of 4 KB
SELECT n AS bytes, pg_temp.try('Scan', jsonb_build_object('TableName', 'Errors',
    'FilterExpression', 'attribute_exists(pk)' || repeat(' ', n - 20))) AS answer
FROM (VALUES (4096), (4097)) v(n);
-- ClientRequestToken: 1 to 36 characters
SELECT length(t) AS characters, pg_temp.try('TransactWriteItems', jsonb_build_object('ClientRequestToken', t,
    'TransactItems', '[{"Put": {"TableName": "ErrorsRange", "Item": {"pk": {"S": "t"}, "sk": {"S": "t"}}}}]'::jsonb)) AS answer
FROM (VALUES (''), (repeat('é', 36)), (repeat('t', 37))) v(t);
SELECT pg_temp.try('ExecuteTransaction', jsonb_build_object('ClientRequestToken', repeat('t', 37),
    'TransactStatements', '[{"Statement": "SELECT * FROM \"Errors\" WHERE pk = ''a''"}]'::jsonb));
DROP TRIGGER raise_named ON public."Errors";
SELECT ddb.delete_table('Errors');
SELECT ddb.delete_table('ErrorsRange');
