-- Expression rules checked against DynamoDB Local 3.3.0: list indexes of
-- REMOVE and SET resolved against the item before the update, invalid
-- document paths in updates, non-boolean functions used as conditions,
-- parenthesised operands, and value-first contains / begins_with.
\set SHOW_CONTEXT never
SELECT ddb.create_table('Rules', 'k');
-- used(values, expression): the values an expression names (the helpers
-- below pass only those: DynamoDB refuses unused ones).
-- up(item, update[, values]): replaces item k=a (NULL: none), applies the
-- update, returns the new item without its key, or the error's message.
CREATE FUNCTION used(vals jsonb, expr text) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_object_agg(key, value) FROM jsonb_each(vals) WHERE strpos(expr, key) > 0
$$;
CREATE FUNCTION up(item jsonb, expr text, vals jsonb DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  vals := used(vals, expr);
  PERFORM ddb.execute('DeleteItem', '{"TableName": "Rules", "Key": {"k": {"S": "a"}}}');
  IF item IS NOT NULL THEN
    PERFORM ddb.execute('PutItem', jsonb_build_object('TableName', 'Rules',
        'Item', item || '{"k": {"S": "a"}}'));
  END IF;
  RETURN (ddb.execute('UpdateItem', jsonb_build_object('TableName', 'Rules',
      'Key', '{"k": {"S": "a"}}'::jsonb, 'UpdateExpression', expr, 'ReturnValues', 'ALL_NEW')
      || CASE WHEN vals IS NULL THEN '{}' ELSE jsonb_build_object('ExpressionAttributeValues', vals) END)
      -> 'Attributes') - 'k';
EXCEPTION WHEN others THEN
  RETURN SQLERRM;
END $$;
-- cond(item, condition[, values]): whether an UpdateItem under the
-- ConditionExpression goes through (true / false), or the error's message.
CREATE FUNCTION cond(item jsonb, c text, vals jsonb DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  vals := used(vals, c);
  PERFORM ddb.execute('PutItem', jsonb_build_object('TableName', 'Rules',
      'Item', item || '{"k": {"S": "a"}}'));
  PERFORM ddb.execute('UpdateItem', jsonb_build_object('TableName', 'Rules',
      'Key', '{"k": {"S": "a"}}'::jsonb, 'UpdateExpression', 'SET zz = :zz', 'ConditionExpression', c,
      'ExpressionAttributeValues', coalesce(vals, '{}') || '{":zz": {"N": "1"}}'));
  RETURN 'true';
EXCEPTION WHEN others THEN
  RETURN CASE WHEN SQLERRM LIKE '%conditional request failed%' THEN 'false' ELSE SQLERRM END;
END $$;
-- filt(item, filter[, values]): how many items a Scan keeps (the table
-- holds item k=a only), or the error's message.
CREATE FUNCTION filt(item jsonb, f text, vals jsonb DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ddb.execute('PutItem', jsonb_build_object('TableName', 'Rules',
      'Item', item || '{"k": {"S": "a"}}'));
  RETURN ddb.execute('Scan', jsonb_build_object('TableName', 'Rules', 'FilterExpression', f, 'Select', 'COUNT')
      || CASE WHEN vals IS NULL THEN '{}' ELSE jsonb_build_object('ExpressionAttributeValues', vals) END) -> 'Count';
EXCEPTION WHEN others THEN
  RETURN SQLERRM;
END $$;

-- 1. Every list index of an UpdateExpression refers to the list as it was
-- before the update: REMOVE of several elements removes those elements,
-- SET of an index replaces that element (or appends, past the end, in the
-- order of the indexes), whatever else the expression removes.
SELECT e AS update, up('{"l": {"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}, {"N": "3"}, {"N": "4"}]}}', e,
                       '{":v": {"S": "x"}, ":w": {"S": "y"}}') AS result
FROM (VALUES ('REMOVE l[0], l[2]'), ('REMOVE l[2], l[0]'), ('REMOVE l[4], l[9], l[1]'),
             ('REMOVE l[1] SET l[3] = :v'), ('SET l[0] = :v REMOVE l[1]'),
             ('SET l[9] = :v REMOVE l[0]'), ('SET l[9] = :v, l[7] = :w'), ('SET l[7] = :w, l[9] = :v'),
             ('SET l[5] = :v REMOVE l[4]'), ('SET l[7] = :v REMOVE l[5]'), ('SET l[7] = :v REMOVE l[6], l[0]'),
             ('REMOVE l[1], l[3] SET l[2] = :v'), ('SET l[1] = l[2] REMOVE l[2]'),
             ('SET l[1] = l[0], l[0] = l[1]'), ('REMOVE l[0], l[0]'), ('SET l[1] = :v REMOVE l[1]')) AS t(e);
-- nested lists, lists in maps in lists, a set emptied by DELETE in a list
SELECT e AS update, up(i::jsonb, e, '{":v": {"S": "x"}, ":s": {"SS": ["x"]}}') AS result
FROM (VALUES
  ('{"a": {"M": {"l": {"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}, {"N": "3"}]}}}}', 'REMOVE a.l[0], a.l[1]'),
  ('{"a": {"M": {"l": {"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}, {"N": "3"}]}}}}', 'REMOVE a.l[0], a.l[1] SET a.l[3] = :v'),
  ('{"a": {"L": [{"M": {"l": {"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}, {"N": "3"}]}}}, {"M": {"l": {"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}, {"N": "3"}]}}}]}}',
   'REMOVE a[0].l[0], a[0].l[2], a[1].l[1]'),
  ('{"a": {"L": [{"M": {"l": {"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}, {"N": "3"}]}}}, {"M": {"l": {"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}, {"N": "3"}]}}}]}}',
   'REMOVE a[0], a[1].l[0]'),
  ('{"a": {"L": [{"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}]}, {"L": [{"N": "3"}, {"N": "4"}, {"N": "5"}]}]}}', 'REMOVE a[0][0], a[0][2], a[1][1]'),
  ('{"a": {"L": [{"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}]}, {"L": [{"N": "3"}, {"N": "4"}, {"N": "5"}]}]}}', 'REMOVE a[0], a[1][0]'),
  ('{"a": {"L": [{"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}]}, {"L": [{"N": "3"}, {"N": "4"}, {"N": "5"}]}]}}', 'REMOVE a[0] SET a[1][1] = :v'),
  ('{"l": {"L": [{"N": "1"}, {"SS": ["x"]}, {"N": "3"}]}}', 'DELETE l[1] :s REMOVE l[0]')) AS t(i, e);

-- 2. A path through an attribute that is not there, or through a value that
-- is not the map or list the step needs, cannot be updated; the last step
-- may be missing (REMOVE and DELETE then do nothing).
SELECT coalesce(i, 'none') AS item, e AS update, up(i::jsonb, e, v::jsonb) AS result
FROM (VALUES
  ('{"x": {"N": "1"}}', 'REMOVE a.b', NULL), ('{"x": {"N": "1"}}', 'SET a.b = :v', '{":v": {"S": "x"}}'),
  (NULL, 'SET a.b = :v', '{":v": {"S": "x"}}'), (NULL, 'REMOVE a.b', NULL), (NULL, 'REMOVE a', NULL),
  (NULL, 'REMOVE a[0]', NULL), ('{"x": {"N": "1"}}', 'REMOVE a', NULL), ('{"x": {"N": "1"}}', 'REMOVE a[1]', NULL),
  ('{"x": {"N": "1"}}', 'SET a[1] = :v', '{":v": {"S": "x"}}'),
  ('{"x": {"N": "1"}}', 'ADD a.b :n', '{":n": {"N": "5"}}'), ('{"x": {"N": "1"}}', 'DELETE a.b :s', '{":s": {"SS": ["5"]}}'),
  ('{"x": {"N": "1"}}', 'SET x = :v, a.b = :v', '{":v": {"S": "x"}}'),
  ('{"a": {"M": {}}}', 'REMOVE a.b', NULL), ('{"a": {"M": {}}}', 'REMOVE a.b.c', NULL),
  ('{"a": {"M": {}}}', 'SET a.b.c = :v', '{":v": {"S": "x"}}'), ('{"a": {"M": {}}}', 'REMOVE a.b[0]', NULL),
  ('{"a": {"M": {}}}', 'DELETE a.b :s', '{":s": {"SS": ["5"]}}'),
  ('{"a": {"L": []}}', 'REMOVE a[3]', NULL), ('{"a": {"L": []}}', 'REMOVE a[3].b', NULL),
  ('{"a": {"L": []}}', 'SET a[3].b = :v', '{":v": {"S": "x"}}'),
  ('{"a": {"M": {}}}', 'SET a[5] = :v', '{":v": {"S": "x"}}'), ('{"a": {"M": {}}}', 'REMOVE a[5]', NULL),
  ('{"a": {"L": []}}', 'SET a.b = :v', '{":v": {"S": "x"}}'), ('{"a": {"L": []}}', 'REMOVE a.b', NULL),
  ('{"a": {"S": "s"}}', 'SET a.b = :v', '{":v": {"S": "x"}}'), ('{"a": {"S": "s"}}', 'REMOVE a[0]', NULL)) AS t(i, e, v);

-- 3. A function that is no condition, standing where a condition is due
SELECT c AS condition, cond('{"a": {"S": "abc"}, "l": {"L": [{"N": "1"}]}}', c, v::jsonb) AS result
FROM (VALUES ('size(a)', NULL), ('(size(a))', NULL), ('NOT size(a)', NULL),
             ('size(a) AND a = :n', '{":n": {"N": "1"}}'), ('a = :n OR (size(a))', '{":n": {"N": "1"}}'),
             ('attribute_exists(a) = :n', '{":n": {"N": "1"}}'), ('a = attribute_exists(a)', NULL),
             ('contains(a, :s) = :n', '{":s": {"S": "a"}, ":n": {"N": "1"}}'),
             ('if_not_exists(a, :n)', '{":n": {"N": "1"}}'), ('list_append(l, :l)', '{":l": {"L": []}}'),
             ('a', NULL), (':n', '{":n": {"N": "1"}}'), ('(a)', NULL), ('size(a) x', NULL),
             ('size(a) = size(a)', NULL)) AS t(c, v);
SELECT f AS filter, filt('{"a": {"S": "abc"}}', f, v::jsonb) AS result
FROM (VALUES ('size(a)', NULL), ('if_not_exists(a, :n)', '{":n": {"N": "1"}}')) AS t(f, v);

-- 4. Parentheses around an operand (one pair: two are redundant), and
-- around a SET value; never around a path being updated.
SELECT e AS update, up('{"n": {"N": "3"}, "l": {"L": [{"N": "1"}]}}', e,
                       CASE WHEN e LIKE '%:l%' THEN '{":l": {"L": [{"N": "2"}]}}'
                            WHEN e LIKE '%:z%' THEN '{":z": {"N": "0"}, ":n": {"N": "1"}}'
                            WHEN e LIKE '%:n%' THEN '{":n": {"N": "1"}}' END::jsonb) AS result
FROM (VALUES ('SET n = (if_not_exists(n, :z) + :n)'), ('SET x = (:n)'), ('SET x = (n), y = (:n)'),
             ('SET x = (:n) + (n)'), ('SET x = ((:n) + n)'), ('SET x = (list_append(l, :l))'),
             ('SET x = list_append((l), (:l))'), ('SET x = if_not_exists((n), :n)'),
             ('SET x = ((:n))'), ('SET x = ((:n + n))'), ('SET x = (:n + n) + :n'),
             ('SET x = :n + (n - :n)'), ('SET x = if_not_exists(n, (:n + :n))'), ('SET x = ()'),
             ('SET x = (:n'), ('SET (x) = :n'), ('REMOVE (x)'), ('ADD x (:n)')) AS t(e);
SELECT c AS condition, cond('{"a": {"S": "abc"}, "n": {"N": "3"}}', c, '{":n": {"N": "3"}}') AS result
FROM (VALUES ('(n) = :n'), ('n = (:n)'), ('(n) = (:n)'), ('((n) = :n)'), ('((n)) = :n'),
             ('(size(a)) = :n'), ('((size(a))) = :n'), ('size((a)) = :n'), ('attribute_exists((a))'),
             ('(n) BETWEEN (:n) AND :n'), ('(n) IN ((:n), :n)'), ('(n = :n) AND ((n) <> :n)'),
             ('((n = :n))'), ('(n)')) AS t(c);
SELECT filt('{"a": {"S": "abc"}, "n": {"N": "3"}}', '(size(a)) = :n AND ((n) = :n)', '{":n": {"N": "3"}}') AS kept;

-- 5. contains and begins_with take any operands: with a value first they
-- test the value against the attribute; attribute_type too; only
-- attribute_exists and attribute_not_exists need a path.
SELECT c AS condition, cond('{"a": {"S": "abc"}, "b": {"S": "ab"}, "n": {"N": "3"}, "ss": {"SS": ["abc", "x"]}}',
                            c, v::jsonb) AS result
FROM (VALUES ('contains(:s, a)', '{":s": {"S": "xabcx"}}'), ('contains(:s, b)', '{":s": {"S": "xbx"}}'),
             ('contains(:s, zz)', '{":s": {"S": "abc"}}'), ('contains(:s, n)', '{":s": {"S": "a3"}}'),
             ('contains(:ss, a)', '{":ss": {"SS": ["abc", "q"]}}'), ('contains(:ns, n)', '{":ns": {"NS": ["3"]}}'),
             ('contains(:ss, n)', '{":ss": {"SS": ["3"]}}'), ('contains(:l, n)', '{":l": {"L": [{"N": "3"}]}}'),
             ('contains(:s, :t)', '{":s": {"S": "abc"}, ":t": {"S": "b"}}'),
             ('contains(a, b)', NULL), ('contains(b, a)', NULL), ('contains(ss, a)', NULL),
             ('contains(a, a)', NULL), ('contains(size(a), :n)', '{":n": {"N": "3"}}'),
             ('begins_with(:s, a)', '{":s": {"S": "abcd"}}'), ('begins_with(:s, n)', '{":s": {"S": "3x"}}'),
             ('begins_with(:b, a)', '{":b": {"B": "YWJj"}}'), ('begins_with(a, b)', NULL), ('begins_with(b, a)', NULL),
             ('begins_with(:s, :t)', '{":s": {"S": "abc"}, ":t": {"S": "a"}}'),
             ('attribute_type(:s, :t)', '{":s": {"S": "abc"}, ":t": {"S": "S"}}'),
             ('attribute_type(:s, :t)', '{":s": {"S": "abc"}, ":t": {"S": "N"}}'),
             ('begins_with(:n, a)', '{":n": {"N": "3"}}'), ('contains(:n, n)', '{":n": {"N": "3"}}'),
             ('attribute_exists(:s)', '{":s": {"S": "abc"}}'),
             ('attribute_not_exists(:s)', '{":s": {"S": "abc"}}')) AS t(c, v);
SELECT filt('{"a": {"S": "abc"}}', 'contains(:s, a)', '{":s": {"S": "xabcx"}}') AS contains_kept,
       filt('{"a": {"S": "abc"}}', 'begins_with(:s, a)', '{":s": {"S": "abcd"}}') AS begins_with_kept;
-- in a KeyConditionExpression begins_with needs the key first; parentheses
-- around a key are fine, size() is no condition
SELECT ddb.create_table('RulesRange', 'k', 'S', 's', 'S');
CREATE FUNCTION q(kc text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN ddb.execute('Query', jsonb_build_object('TableName', 'RulesRange', 'KeyConditionExpression', kc,
      'ExpressionAttributeValues', used('{":k": {"S": "a"}, ":v": {"S": "a"}}', kc), 'Select', 'COUNT')) -> 'Count';
EXCEPTION WHEN others THEN
  RETURN SQLERRM;
END $$;
SELECT kc AS key_condition, q(kc) AS result
FROM (VALUES ('k = :k AND begins_with(:v, s)'), ('k = :k AND (s) = :v'), ('(k) = :k'),
             ('k = :k AND size(s)')) AS t(kc);

-- 6. Operand types in an update: a placeholder of the wrong type is refused
-- before the item is read (ADD and DELETE name the type in full), a value
-- from the item of the wrong type when it is read; list_append is a SET
-- value of its own, never inside a sum, if_not_exists or list_append.
SELECT e AS update, up('{"n": {"N": "1"}, "s": {"S": "x"}, "l": {"L": [{"N": "1"}]}}', e,
                       '{":n": {"N": "1"}, ":s": {"S": "x"}, ":l": {"L": []}, ":bool": {"BOOL": true},
                         ":m": {"M": {}}, ":ss": {"SS": ["x"]}, ":bs": {"BS": ["AA=="]}}') AS result
FROM (VALUES ('SET x = :l + :n'), ('SET x = :n - :m'), ('SET x = :ss + :n'), ('SET x = s - :n'),
             ('SET x = if_not_exists(zz, :s) - :n'), ('SET x = if_not_exists(n, :n) + if_not_exists(n, :n)'),
             ('SET x = list_append(:n, :l)'), ('SET x = list_append(s, :l)'), ('SET x = list_append(l, :s)'),
             ('SET x = list_append(if_not_exists(zz, :s), :l)'), ('SET x = list_append(if_not_exists(zz, :l), l)'),
             ('SET x = list_append(l, :l) + :n'), ('SET x = :n + list_append(l, :l)'),
             ('SET x = list_append(list_append(l, :l), :l)'), ('SET x = if_not_exists(l, list_append(l, :l))'),
             ('ADD n :s'), ('ADD n :bool'), ('ADD n :m'), ('ADD n :l'), ('ADD n :bs'), ('ADD s :n'),
             ('DELETE n :s'), ('DELETE n :n'), ('DELETE s :bs')) AS t(e);
-- the placeholder's type is refused before a failing condition is read
SELECT ddb.execute('UpdateItem', '{"TableName": "Rules", "Key": {"k": {"S": "a"}}, "UpdateExpression": "ADD n :s",
  "ConditionExpression": "attribute_not_exists(k)", "ExpressionAttributeValues": {":s": {"S": "x"}}}');

DROP FUNCTION q(text);
DROP FUNCTION filt(jsonb, text, jsonb);
DROP FUNCTION cond(jsonb, text, jsonb);
DROP FUNCTION up(jsonb, text, jsonb);
DROP FUNCTION used(jsonb, text);
SELECT ddb.delete_table('RulesRange');
SELECT ddb.delete_table('Rules');
