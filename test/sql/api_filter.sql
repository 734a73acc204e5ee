-- FilterExpression on Query and Scan: DynamoDB's comparison rules, every
-- function, document paths, and Limit counted before the filter.
\set SHOW_CONTEXT never
SELECT ddb.create_table('Films', 'pk', 'S', 'sk', 'N');
SELECT ddb.put_item('Films', jsonb_build_object(
    'pk', 'A', 'sk', i, 'year', 1990 + i, 'title', 'Film ' || i,
    'tags', jsonb_build_object('$SS', jsonb_build_array('t' || (i % 3), 'all')),
    'cast', jsonb_build_array('ann', 'bo' || i),
    'info', jsonb_build_object('rating', i % 5, 'lang', CASE WHEN i % 2 = 0 THEN 'en' ELSE 'fr' END),
    'code', jsonb_build_object('$B', encode(int4send(i), 'base64'))))
FROM generate_series(1, 10) i \g /dev/null
SELECT ddb.put_item('Films', '{"pk": "A", "sk": 11, "title": "Film 11", "year": "1990s", "flag": true, "gone": null}');

-- One row per filter: how many items of the 11 it keeps (a Scan, since a
-- Query's filter may not name the key attributes).
CREATE FUNCTION kept(filter text, vals jsonb DEFAULT '{}', names jsonb DEFAULT NULL) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT ddb.execute('Scan', jsonb_build_object('TableName', 'Films',
      'FilterExpression', filter, 'Select', 'COUNT')
      || CASE WHEN vals = '{}' THEN '{}' ELSE jsonb_build_object('ExpressionAttributeValues', vals) END
      || CASE WHEN names IS NULL THEN '{}' ELSE jsonb_build_object('ExpressionAttributeNames', names) END)
$$;
SELECT f AS filter, kept(f, v, n) -> 'Count' AS count
FROM (VALUES
  ('#y > :n', '{":n": {"N": "1997"}}'::jsonb, '{"#y": "year"}'::jsonb),
  ('#y = :s', '{":s": {"S": "1990s"}}', '{"#y": "year"}'),
  ('#y <> :n', '{":n": {"N": "1991"}}', '{"#y": "year"}'),
  ('#y < :s', '{":s": {"S": "2"}}', '{"#y": "year"}'),
  ('nope <> :n', '{":n": {"N": "1"}}', NULL),
  ('nope = :n', '{":n": {"N": "1"}}', NULL),
  ('nope < :n', '{":n": {"N": "1"}}', NULL),
  ('#y BETWEEN :a AND :b', '{":a": {"N": "1992"}, ":b": {"N": "1994"}}', '{"#y": "year"}'),
  ('sk IN (:a, :b, :c)', '{":a": {"N": "1"}, ":b": {"S": "2"}, ":c": {"N": "3.0"}}', NULL),
  ('info.lang = :l AND info.rating >= :r', '{":l": {"S": "en"}, ":r": {"N": "3"}}', NULL),
  ('info.lang = :l OR flag = :t', '{":l": {"S": "en"}, ":t": {"BOOL": true}}', NULL),
  ('NOT info.lang = :l', '{":l": {"S": "en"}}', NULL),
  ('#c[1] = :b', '{":b": {"S": "bo3"}}', '{"#c": "cast"}'),
  ('#c[5] = :b', '{":b": {"S": "bo3"}}', '{"#c": "cast"}'),
  ('contains(tags, :t)', '{":t": {"S": "t1"}}', NULL),
  ('contains(#c, :a)', '{":a": {"S": "ann"}}', '{"#c": "cast"}'),
  ('contains(title, :s)', '{":s": {"S": "m 1"}}', NULL),
  ('size(#c) = :two AND size(title) > :six', '{":two": {"N": "2"}, ":six": {"N": "6"}}', '{"#c": "cast"}'),
  ('size(tags) = :two', '{":two": {"N": "2"}}', NULL),
  ('size(info) = :two', '{":two": {"N": "2"}}', NULL),
  ('begins_with(title, :f)', '{":f": {"S": "Film 1"}}', NULL),
  ('begins_with(code, :b)', '{":b": {"B": "AAAA"}}', NULL),
  ('code > :b', '{":b": {"B": "AAAABQ=="}}', NULL),
  ('attribute_exists(flag)', '{}', NULL),
  ('attribute_not_exists(info)', '{}', NULL),
  ('attribute_exists(gone)', '{}', NULL),
  ('attribute_type(gone, :t)', '{":t": {"S": "NULL"}}', NULL),
  ('attribute_type(#y, :t)', '{":t": {"S": "N"}}', '{"#y": "year"}'),
  ('attribute_type(tags, :t)', '{":t": {"S": "SS"}}', NULL),
  ('tags = :set', '{":set": {"SS": ["all", "t1"]}}', NULL),
  ('#c = :list', '{":list": {"L": [{"S": "ann"}, {"S": "bo2"}]}}', '{"#c": "cast"}'),
  ('info = :m', '{":m": {"M": {"lang": {"S": "en"}, "rating": {"N": "2"}}}}', NULL)
) t(f, v, n);

-- Limit counts the items read, not the items kept; the page ends where reading stopped.
SELECT ddb.execute('Query', '{"TableName": "Films", "KeyConditionExpression": "pk = :pk",
    "FilterExpression": "info.lang = :l", "ExpressionAttributeValues": {":pk": {"S": "A"}, ":l": {"S": "en"}},
    "Limit": 3, "Select": "COUNT"}');
-- a Query's filter may not name the keys it queries
SELECT ddb.execute('Query', '{"TableName": "Films", "KeyConditionExpression": "pk = :pk", "FilterExpression": "title = :t OR #s > :n",
  "ExpressionAttributeNames": {"#s": "sk"}, "ExpressionAttributeValues": {":pk": {"S": "A"}, ":t": {"S": "x"}, ":n": {"N": "1"}}}');
SELECT ddb.execute('Scan', '{"TableName": "Films", "FilterExpression": "sk >= :n",
    "ExpressionAttributeValues": {":n": {"N": "10"}}}') -> 'Items' AS scanned_items;

-- Errors: placeholders, type names, syntax.
SELECT kept('#y > :n', '{":n": {"N": "1"}}');
SELECT kept('title > :m', '{":n": {"N": "1"}}');
SELECT kept('attribute_type(info, :t)', '{":t": {"S": "MAP"}}');
SELECT kept('title >', '{":n": {"N": "1"}}');
-- Reserved words need a placeholder, in any case and at any depth of a path;
-- function names and keywords are not attribute names.
SELECT kept('year > :n', '{":n": {"N": "1"}}');
SELECT kept('info.Status = :n', '{":n": {"N": "1"}}');
SELECT kept('size(title) > :n AND NOT attribute_exists(#y)', '{":n": {"N": "1"}}', '{"#y": "year"}');
-- Checked before any item is read: redundant parentheses, a path compared
-- with itself, orderings of values that have no order, BETWEEN bounds,
-- attribute_type's second operand.
SELECT kept('((title = :n))', '{":n": {"N": "1"}}');
SELECT kept('(title = :n) AND ((sk = :n))', '{":n": {"N": "1"}}');
SELECT kept('#t = title', '{}', '{"#t": "title"}');
SELECT kept('begins_with(info.lang, info.lang)');
SELECT kept('title < :b', '{":b": {"BOOL": true}}');
SELECT kept('sk BETWEEN :n AND :l', '{":n": {"N": "1"}, ":l": {"L": []}}');
SELECT kept('sk BETWEEN :n AND :s', '{":n": {"N": "1"}, ":s": {"S": "a"}}');
SELECT kept('sk BETWEEN :hi AND :lo', '{":hi": {"N": "5"}, ":lo": {"N": "1.5"}}');
SELECT kept('attribute_type(title, :n)', '{":n": {"N": "1"}}');
SELECT kept('attribute_type(title, info)');
-- An operand may stand in parentheses; standing alone it is no condition.
SELECT kept('(sk) > :n AND NOT ((sk) = :m) AND sk BETWEEN (:n) AND :m', '{":n": {"N": "3"}, ":m": {"N": "5"}}') -> 'Count' AS count;
SELECT kept('((sk)) = :n', '{":n": {"N": "3"}}');
SELECT kept('(sk)');
SELECT kept('(sk = :n AND title)', '{":n": {"N": "3"}}');
-- The same operands are fine where DynamoDB allows them.
SELECT kept('title = :b OR #y[0] = #y[1]', '{":b": {"BOOL": true}}', '{"#y": "year"}') -> 'Count' AS count;
SELECT ddb.execute('Scan', '{"TableName": "Films", "FilterExpression": "sk > :n",
    "ExpressionAttributeValues": {":n": {"N": "1"}, ":unused": {"N": "2"}}}');

DROP FUNCTION kept(text, jsonb, jsonb);
SELECT ddb.delete_table('Films');
