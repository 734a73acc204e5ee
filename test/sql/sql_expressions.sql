-- The SQL functions take the expressions ddb.execute serves: condition on
-- put_item/delete_item/update_item, update on update_item, filter and
-- projection on query/scan, projection on get_item; names and vals carry
-- the placeholders, vals as natural jsonb.
\set SHOW_CONTEXT never
SELECT ddb.create_table('Accounts', 'pk', 'S', 'sk', 'N');

-- Conditional put: create only if absent; the second create fails and changes nothing.
SELECT ddb.put_item('Accounts', '{"pk": "a", "sk": 1, "holder": "ann", "version": 1}',
                    condition => 'attribute_not_exists(pk)');
SELECT ddb.put_item('Accounts', '{"pk": "a", "sk": 1, "holder": "bo", "version": 1}',
                    condition => 'attribute_not_exists(pk)');
SELECT ddb.get_item('Accounts', 'a', 1::numeric);
-- Optimistic locking through put_item, with the replaced item returned.
SELECT ddb.put_item('Accounts', '{"pk": "a", "sk": 1, "holder": "ann", "version": 2}', true,
                    condition => '#v = :v', names => '{"#v": "version"}', vals => '{":v": 1}');
SELECT ddb.put_item('Accounts', '{"pk": "a", "sk": 1, "holder": "eve", "version": 3}',
                    condition => 'version = :v', vals => '{":v": 1}');

-- update_item: SET with arithmetic, ADD to a set (natural {"$SS": ...}), every return_values.
SELECT ddb.update_item('Accounts', 'a', 1::numeric, 'SET version = version + :one ADD tags :t',
                       vals => '{":one": 1, ":t": {"$SS": ["gold", "new"]}}');
SELECT ddb.update_item('Accounts', 'a', 1::numeric, 'SET balance = :b', condition => 'version = :v',
                       vals => '{":b": 100, ":v": 3}', return_values => 'UPDATED_NEW');
SELECT ddb.update_item('Accounts', 'a', 1::numeric, 'REMOVE tags', return_values => 'UPDATED_OLD');
SELECT ddb.update_item('Accounts', 'a', 1::numeric, 'SET balance = balance - :c', vals => '{":c": 30}',
                       return_values => 'NONE');
SELECT ddb.update_item('Accounts', 'a', 1::numeric, 'SET balance = :b', condition => 'version = :v',
                       vals => '{":b": 0, ":v": 1}');
SELECT ddb.get_item('Accounts', 'a', 1::numeric, projection => 'balance, #v', names => '{"#v": "version"}');
-- an update with nothing to set creates the item from its key
SELECT ddb.update_item('Accounts', 'b', 1::numeric);

-- Conditional delete.
SELECT ddb.delete_item('Accounts', 'b', 1::numeric, condition => 'attribute_exists(balance)');
SELECT ddb.delete_item('Accounts', 'b', 1::numeric, condition => 'attribute_not_exists(balance)');
SELECT ddb.get_item('Accounts', 'b', 1::numeric);

-- query and scan: the filter keeps items, max_items counts the items kept.
SELECT ddb.put_item('Accounts', jsonb_build_object('pk', 'c', 'sk', i, 'kind', CASE WHEN i % 2 = 0 THEN 'even' ELSE 'odd' END, 'n', i))
FROM generate_series(1, 9) i;
SELECT * FROM ddb.query('Accounts', 'c', filter => 'kind = :k', vals => '{":k": "even"}',
                        projection => 'sk, n');
SELECT * FROM ddb.query('Accounts', 'c', '>', 2::numeric, max_items => 2, filter => 'kind = :k',
                        vals => '{":k": "odd"}', projection => 'sk');
SELECT count(*) FROM ddb.scan('Accounts', filter => 'n BETWEEN :lo AND :hi', vals => '{":lo": 3, ":hi": 6}');
SELECT * FROM ddb.scan('Accounts', max_items => 1, projection => '#o', names => '{"#o": "holder"}');

-- Errors: the same checks and messages as ddb.execute, nothing changed.
SELECT ddb.update_item('Accounts', 'a', 1::numeric, 'SET pk = :v', vals => '{":v": "x"}');
SELECT ddb.update_item('Accounts', 'a', 1::numeric, 'SET status = :v', vals => '{":v": "x"}');
SELECT ddb.update_item('Accounts', 'a', 1::numeric, 'SET holder = :v', vals => '{":v": "x", ":w": 1}');
SELECT ddb.update_item('Accounts', 'a', 1::numeric, 'SET holder = :v');
SELECT ddb.update_item('Accounts', 'a', 1::numeric, 'SET holder = :v', vals => '{":v": "x"}',
                       return_values => 'EVERYTHING');
SELECT ddb.put_item('Accounts', '{"pk": "z", "sk": 1}', vals => '{":v": 1}');
SELECT ddb.put_item('Accounts', '{"pk": "z", "sk": 1}', condition => 'attribute_not_exists(pk)', vals => '[1]');
SELECT ddb.get_item('Accounts', 'a', 1::numeric, names => '{"#n": "x"}');
SELECT * FROM ddb.scan('Accounts', filter => 'n > :n', vals => '{":n": true}');
SELECT * FROM ddb.query('Accounts', 'c', filter => 'n >');
SELECT ddb.get_item('Accounts', 'z', 1::numeric);
SELECT ddb.get_item('Accounts', 'a', 1::numeric);

SELECT ddb.delete_table('Accounts');
