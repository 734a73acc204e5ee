-- PartiQL through ddb.execute: ExecuteStatement, BatchExecuteStatement and
-- ExecuteTransaction, rewritten into Query, Scan, PutItem, UpdateItem,
-- DeleteItem and the transactions.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SELECT ddb.create_table('PqHash', 'pk', 'S') IS NOT NULL AS created;
SELECT ddb.create_table('PqComp', 'pk', 'S', 'sk', 'S') IS NOT NULL AS created;
SELECT ddb.create_index('PqComp', 'ByColour', 'colour', 'S', 'sk', 'S') IS NOT NULL AS indexed;
CREATE FUNCTION pq(statement text, params jsonb DEFAULT NULL, extra jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE sql AS $$
  SELECT ddb.execute('ExecuteStatement', jsonb_strip_nulls(jsonb_build_object('Statement', statement, 'Parameters', params)) || extra)
$$;
-- a response with its NextToken's payload shown: the token is the LastEvaluatedKey sealed for its statement (docs/security.md)
CREATE FUNCTION opened(response jsonb, statement text) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT response || jsonb_build_object('NextToken', convert_from(decode(split_part(response ->> 'NextToken', '.', 1), 'base64'), 'UTF8'))
$$;

-- INSERT: every PartiQL value; INSERT is no upsert
SELECT pq($$INSERT INTO "PqHash" VALUE {'pk': 'a', 'data': 'x', 'n': 5, 'neg': -2.5e3, 't': TRUE, 'z': NULL,
          'm': {'nested': 'deep', "quoted key": 1}, 'l': [1, 'two', [3]], 'ss': <<'p', 'q'>>, 'ns': <<1, 2>>}$$);
SELECT ddb.get_item('PqHash', 'a');
SELECT pq($$INSERT INTO "PqHash" VALUE {'pk': 'a', 'data': 'again'}$$);
SELECT pq($$INSERT INTO PqHash VALUE {'pk': ?, 'data': ?}$$, '[{"S": "b"}, {"N": "7"}]');
SELECT ddb.get_item('PqHash', 'b');

-- SELECT: by key (a Query), projected paths under their last name, filters, a Scan without the key
SELECT pq($$SELECT * FROM "PqHash" WHERE pk = 'a'$$) -> 'Items' -> 0 -> 'data';
SELECT pq($$SELECT m.nested, l[1], "m"."quoted key", pk, absent FROM "PqHash" WHERE pk = 'a'$$);
SELECT pq($$SELECT pk FROM "PqHash" WHERE pk = ? AND n > ?$$, '[{"S": "a"}, {"N": "3"}]');
SELECT pq($$SELECT pk FROM "PqHash" WHERE pk = 'a' AND n > 5$$);
SELECT pq($$SELECT pk FROM "PqHash" WHERE data IN ['x', 'y'] AND t = true AND m.nested IS NOT MISSING AND gone IS MISSING$$);
SELECT pq($$SELECT pk FROM "PqHash" WHERE pk = 'a' OR pk = 'b'$$) -> 'Items' @> '[{"pk": {"S": "a"}}, {"pk": {"S": "b"}}]' AS both;
SELECT pq($$SELECT pk FROM "PqHash" WHERE z IS NULL AND NOT (n < 0) AND contains(ss, 'p') AND size(l) = 3$$);
SELECT pq($$SELECT * FROM "PqHash" WHERE pk = 'nothing'$$);

-- SELECT on a table with a sort key: key conditions, begins_with, the rest filtered; an index; pages
SELECT ddb.put_item('PqComp', jsonb_build_object('pk', 'p', 'sk', s, 'colour', c))
FROM (VALUES ('prefix-alpha', 'red'), ('prefix-beta', 'blue'), ('other', 'red')) v(s, c);
SELECT pq($$SELECT sk FROM "PqComp" WHERE pk = 'p' AND begins_with("sk", 'prefix-')$$);
SELECT pq($$SELECT sk FROM "PqComp" WHERE pk = 'p' AND sk BETWEEN 'a' AND 'prefix-b' AND colour = 'red'$$);
SELECT pq($$SELECT sk FROM "PqComp" WHERE pk = 'p' AND sk > 'a' AND sk < 'prefix-b'$$);
SELECT pq($$SELECT sk, colour FROM "PqComp"."ByColour" WHERE colour = 'red'$$);
SELECT opened(pq($$SELECT sk FROM "PqComp" WHERE pk = 'p'$$, NULL, '{"Limit": 1}'), $$SELECT sk FROM "PqComp" WHERE pk = 'p'$$);
SELECT opened(pq($$SELECT sk FROM "PqComp" WHERE pk = 'p'$$, NULL,
                 jsonb_build_object('Limit', 2, 'NextToken', pq($$SELECT sk FROM "PqComp" WHERE pk = 'p'$$, NULL, '{"Limit": 1}') ->> 'NextToken')),
              $$SELECT sk FROM "PqComp" WHERE pk = 'p'$$);
-- a token of another statement, or the bare key it stands for, is not one
SELECT pq($$SELECT sk FROM "PqHash" WHERE pk = 'p'$$, NULL,
          jsonb_build_object('NextToken', pq($$SELECT sk FROM "PqComp" WHERE pk = 'p'$$, NULL, '{"Limit": 1}') ->> 'NextToken'));
SELECT pq($$SELECT sk FROM "PqComp" WHERE pk = 'p'$$, NULL, '{"NextToken": "{\"pk\": {\"S\": \"p\"}, \"sk\": {\"S\": \"other\"}}"}');

-- UPDATE: SET (values, arithmetic, functions), REMOVE; the item must exist; the rest of the WHERE is a condition
SELECT pq($$UPDATE "PqHash" SET data = 'after' SET n = n + 1, l = list_append(l, [4]) REMOVE t, z WHERE pk = 'a'$$);
SELECT ddb.get_item('PqHash', 'a');
SELECT pq($$UPDATE "PqHash" SET data = 'x' WHERE pk = 'missing'$$);
SELECT pq($$UPDATE "PqHash" SET data = 'x' WHERE pk = 'a' AND n = 100$$);
SELECT pq($$UPDATE "PqHash" SET data = 'x' WHERE n = 6$$);
SELECT pq($$UPDATE "PqComp" SET colour = 'green' WHERE pk = 'p'$$);
SELECT pq($$UPDATE "PqComp" SET colour = 'green' WHERE pk = 'p' AND sk = 'other'$$);
SELECT ddb.get_item('PqComp', 'p', 'other');

-- DELETE: by whole key, with a condition; a missing item is no error
SELECT pq($$DELETE FROM "PqHash" WHERE pk = 'b' AND data = 'wrong'$$);
SELECT pq($$DELETE FROM "PqHash" WHERE pk = 'b'$$);
SELECT pq($$DELETE FROM "PqHash" WHERE pk = 'b'$$);
SELECT ddb.get_item('PqHash', 'b') IS NULL AS deleted;

-- Errors: syntax, unknown tables, parameters, sets
SELECT pq($$SELECTT * FROMM "PqHash"$$);
SELECT pq($$SELECT * FROM "PqHash" WHERE$$);
SELECT pq($$SELECT * FROM "PqHash" WHERE pk = 'a' extra$$);
SELECT pq($$SELECT * FROM "PqHash" WHERE pk = 'unterminated$$);
SELECT pq($$SELECT * FROM "PqHash" WHERE pk = #x$$);
SELECT pq($$SELECT * FROM "Nope" WHERE pk = 'x'$$);
SELECT pq($$SELECT * FROM "PqHash" WHERE pk = ?$$);
SELECT pq($$SELECT * FROM "PqHash" WHERE pk = 'a'$$, '[{"S": "unused"}]');
SELECT pq($$SELECT * FROM "PqHash" WHERE pk = ?$$, '[]');
SELECT pq($$INSERT INTO "PqHash" VALUE {'pk': 'c', 's': <<'a', 1>>}$$);
SELECT pq($$INSERT INTO "PqHash" VALUE {'data': 'no key'}$$);
SELECT pq($$SELECT * FROM "PqHash" WHERE pk = 'a'$$, NULL, '{"NextToken": "not json"}');
SELECT ddb.execute('ExecuteStatement', '{}');
SELECT pq($$INSERT INTO "PqHash" VALUE 'not a tuple'$$);
SELECT pq($$INSERT INTO "PqHash" VALUE {pk: 'unquoted name'}$$);
SELECT pq($$INSERT INTO "PqHash" VALUE {'pk': 'c', 's': <<>>}$$);
SELECT pq($$SELECT * FROM "PqHash" WHERE pk IS FOUND$$);
SELECT pq($$SELECT * FROM "PqHash" WHERE pk = ?$$, '{"S": "a"}');
SELECT pq($$SELECT * FROM "PqHash" WHERE pk = ?$$, '["a"]');
SELECT ddb.execute('BatchExecuteStatement', '{"Statements": ["SELECT * FROM \"PqHash\""]}');

-- BatchExecuteStatement: each statement on its own
SELECT ddb.execute('BatchExecuteStatement', $${"Statements": [
  {"Statement": "SELECT * FROM \"PqComp\" WHERE pk = 'p' AND sk = 'other'"},
  {"Statement": "SELECT * FROM \"Nope\" WHERE pk = 'x'"},
  {"Statement": "INSERT INTO \"PqHash\" VALUE {'pk': 'a'}"},
  {"Statement": "INSERT INTO \"PqHash\" VALUE {'pk': ?}", "Parameters": [{"S": "batch"}]},
  {"Statement": "UPDATE \"PqHash\" SET n = 1 WHERE pk = 'absent'"},
  {"Statement": "SELECT * FROM \"PqComp\" WHERE pk = 'p'"}]}$$);
SELECT ddb.get_item('PqHash', 'batch');
SELECT ddb.execute('BatchExecuteStatement', '{"Statements": []}');

-- ExecuteTransaction: all writes or all reads, all or nothing
SELECT ddb.execute('ExecuteTransaction', $${"TransactStatements": [
  {"Statement": "INSERT INTO \"PqHash\" VALUE {'pk': 't1'}"},
  {"Statement": "UPDATE \"PqHash\" SET v = 1 WHERE pk = 'batch'"}]}$$);
SELECT ddb.execute('ExecuteTransaction', $${"TransactStatements": [
  {"Statement": "INSERT INTO \"PqHash\" VALUE {'pk': 't2'}"},
  {"Statement": "INSERT INTO \"PqHash\" VALUE {'pk': 't1'}"}]}$$);
SELECT ddb.get_item('PqHash', 't2') IS NULL AS rolled_back;
SELECT ddb.execute('ExecuteTransaction', $${"TransactStatements": [
  {"Statement": "SELECT * FROM \"PqHash\" WHERE pk = 't1'"},
  {"Statement": "SELECT v FROM \"PqHash\" WHERE pk = 'batch'"},
  {"Statement": "SELECT * FROM \"PqHash\" WHERE pk = 'absent'"}]}$$);
SELECT ddb.execute('ExecuteTransaction', $${"TransactStatements": [
  {"Statement": "SELECT * FROM \"PqHash\" WHERE pk = 't1'"},
  {"Statement": "DELETE FROM \"PqHash\" WHERE pk = 't1'"}]}$$);
SELECT ddb.execute('ExecuteTransaction', $${"TransactStatements": [
  {"Statement": "SELECT * FROM \"PqHash\" WHERE n = 1"}]}$$);
SELECT ddb.execute('ExecuteTransaction', $${"TransactStatements": [
  {"Statement": "SELECT * FROM \"PqComp\".\"ByColour\" WHERE colour = 'red'"}]}$$);
SELECT ddb.execute('ExecuteTransaction', $${"TransactStatements": [
  {"Statement": "SELECT * FROM \"PqHash\" WHERE pk = 't1' AND v = 3"}]}$$);
SELECT ddb.execute('ExecuteTransaction', '{"TransactStatements": []}');
-- an INSERT of an existing item is the reason DuplicateItem; EXISTS is a ConditionCheck
SELECT ddb.execute('ExecuteTransaction', $${"TransactStatements": [
  {"Statement": "UPDATE \"PqHash\" SET v = 2 WHERE pk = 'batch'"},
  {"Statement": "INSERT INTO \"PqHash\" VALUE {'pk': 't1'}"}]}$$);
SELECT ddb.execute('ExecuteTransaction', $${"TransactStatements": [
  {"Statement": "EXISTS(SELECT * FROM \"PqHash\" WHERE pk = 'batch' AND v = 1)"},
  {"Statement": "UPDATE \"PqHash\" SET v = 3 WHERE pk = 't1'"}]}$$);
SELECT ddb.execute('ExecuteTransaction', $${"TransactStatements": [
  {"Statement": "EXISTS(SELECT * FROM \"PqHash\" WHERE pk = 'batch' AND v = 99)"},
  {"Statement": "UPDATE \"PqHash\" SET v = 4 WHERE pk = 't1'"}]}$$);
SELECT ddb.execute('ExecuteTransaction', $${"TransactStatements": [
  {"Statement": "EXISTS(SELECT * FROM \"PqHash\" WHERE pk = 'nobody')"},
  {"Statement": "UPDATE \"PqHash\" SET v = 5 WHERE pk = 't1'"}]}$$);
SELECT ddb.get_item('PqHash', 't1');
SELECT pq($$EXISTS(SELECT * FROM "PqHash" WHERE pk = 't1')$$);

-- Every prefix of a statement is served or refused with DynamoDB's errors (class YD), never another
DO $$
DECLARE
  statements text[] := ARRAY[
    $s$UPDATE "PqHash" SET m.nested = 'v', l[0] = ? REMOVE x WHERE pk = 'a' AND (n BETWEEN 1 AND 9 OR data IN ['x']) AND NOT size(l) > 2$s$,
    $s$SELECT m.nested, "l"[1] FROM "PqComp"."ByColour" WHERE colour = ? AND begins_with(sk, 'p') AND x IS NOT MISSING$s$,
    $s$INSERT INTO "PqHash" VALUE {'pk': 'prefix', 'm': {'a': [1, <<'x'>>, <<2.5>>, TRUE, NULL]}, 'q': ?}$s$];
  s text;
  others int := 0;
BEGIN
  FOREACH s IN ARRAY statements LOOP
    FOR i IN 1..length(s) LOOP
      BEGIN
        PERFORM ddb.execute('ExecuteStatement', jsonb_build_object('Statement', left(s, i), 'Parameters', '[{"N": "1"}]'::jsonb));
      EXCEPTION WHEN OTHERS THEN
        IF left(SQLSTATE, 2) <> 'YD' THEN
          others := others + 1;
          RAISE NOTICE '% -> % %', left(s, i), SQLSTATE, SQLERRM;
        END IF;
      END;
    END LOOP;
  END LOOP;
  RAISE NOTICE 'prefixes refused with another class of error: %', others;
END $$;

DROP FUNCTION pq(text, jsonb, jsonb);
SELECT ddb.delete_table('PqHash'), ddb.delete_table('PqComp');
