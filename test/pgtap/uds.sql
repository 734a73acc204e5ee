-- pgTAP: the uds model, every catalog id (D1-D7), through its SQL functions
-- and through ddb.execute.
BEGIN;
SELECT plan(33);

SELECT lives_ok($$SELECT uds.register_app('reader', quota_bytes => 2000), uds.register_app('mathtutor')$$, 'apps are registered');

-- D1
SELECT lives_ok($$SELECT uds.cb_put('u-100', 'reading.level', '{"level": 4}'), uds.cb_put('u-100', 'streak.days', '12')$$,
                'calculated behaviour is stored');
SELECT is(uds.cb_get('u-100', 'reading.level'), '{"level": 4}', 'D1: data.cb get');
SELECT results_eq($$SELECT key FROM uds.cb_list('u-100')$$, ARRAY['reading.level', 'streak.days'], 'D1: data.cb list by key');
SELECT is(ddb.execute('GetItem', '{"TableName": "calculatedBehavior", "ProjectionExpression": "#v",
              "ExpressionAttributeNames": {"#v": "value"},
              "Key": {"user": {"S": "u-100"}, "key": {"S": "streak.days"}}}'),
          '{"Item": {"value": {"N": "12"}}}', 'D1: the same through ddb.execute');

-- D2, D3
SELECT lives_ok($$SELECT uds.content_put('u-100', 'note-1', '{"text": "hello"}')$$, 'created content is stored');
SELECT is(uds.content_get('u-100', 'note-1'), '{"text": "hello"}', 'D2: data.user is app data of the reserved app hmh');
SELECT ok(ddb.get_item('appDataJson', 'hmh#u-100', 'note-1') IS NOT NULL, 'D2: under the hash key hmh#u-100');
SELECT throws_ok($$SELECT uds.register_app('hmh')$$, '22023', 'the app name hmh is reserved for created content',
                 'D2: hmh cannot be registered');
SELECT lives_ok($$SELECT uds.json_put('reader', 'u-100', 'settings', '{"font": "large"}'),
                         uds.blob_put('reader', 'u-100', 'avatar.png', '\x89504e470d0a1a0a'),
                         uds.json_put('mathtutor', 'u-100', 'progress', '{"unit": 3}'),
                         uds.json_put('reader', 'u-200', 'settings', '{"font": "small"}')$$, 'app data is stored');
SELECT is(uds.json_get('reader', 'u-100', 'settings'), '{"font": "large"}', 'D3: data.app JSON value');
SELECT is(uds.blob_get('reader', 'u-100', 'avatar.png'), '\x89504e470d0a1a0a'::bytea, 'D3: data.app blob value, binary');
SELECT is(ddb.execute('GetItem', '{"TableName": "appDataBlob", "ProjectionExpression": "#v", "ExpressionAttributeNames": {"#v": "value"},
              "Key": {"appUser": {"S": "reader#u-100"}, "key": {"S": "avatar.png"}}}') -> 'Item' -> 'value',
          '{"B": "iVBORw0KGgo="}', 'D3: a blob is a DynamoDB binary through ddb.execute');

-- D4
SELECT is(uds.quota_used('reader', 'u-100'),
          (SELECT sum(item_size)::bigint FROM uds."appDataJson" WHERE pk = 'reader#u-100')
          + (SELECT sum(item_size)::bigint FROM uds."appDataBlob" WHERE pk = 'reader#u-100'),
          'D4: quota of a user in an app: both tables, every key, DynamoDB item sizes');
SELECT lives_ok($$SELECT uds.register_app('bulk', quota_bytes => 5000000);
                  SELECT uds.json_put('bulk', 'u-9', 'k' || i, to_jsonb(repeat('x', 200000))) FROM generate_series(1, 12) i$$,
                'a user stores 2.4 MB in an app');
SELECT results_eq($$SELECT page, items FROM uds.quota_pages('bulk', 'u-9')$$, $$VALUES (1, 5::bigint), (2, 5::bigint), (3, 2::bigint)$$,
                  'D4: read in pages of at most 1 MB');
SELECT is(ddb.execute('Query', '{"TableName": "appDataJson", "KeyConditionExpression": "appUser = :k", "Select": "COUNT",
              "ExpressionAttributeValues": {":k": {"S": "bulk#u-9"}}}') ->> 'Count', '5',
          'D4: a DynamoDB Query of the same key stops its first page at 1 MB too');

-- D5, D6
SELECT results_eq($$SELECT * FROM uds.app_users('reader')$$, ARRAY['u-100', 'u-200'], 'D5: admin users of an app');
SELECT results_eq($$SELECT * FROM uds.app_users('reader', after_user => 'u-100', page_size => 1)$$, ARRAY['u-200'],
                  'D5: paginated');
SELECT results_eq($$SELECT * FROM uds.user_apps('u-100')$$, ARRAY['hmh', 'mathtutor', 'reader'],
                  'D6: admin apps of a user through the user GSI of both tables');
SELECT is(ddb.execute('Query', '{"TableName": "appDataJson", "IndexName": "userIndex",
              "KeyConditionExpression": "#u = :u AND begins_with(appKey, :a)", "ExpressionAttributeNames": {"#u": "user"},
              "ExpressionAttributeValues": {":u": {"S": "u-100"}, ":a": {"S": "mathtutor#"}}}') -> 'Items',
          '[{"key": {"S": "progress"}, "user": {"S": "u-100"}, "appKey": {"S": "mathtutor#progress"}, "appUser": {"S": "mathtutor#u-100"}}]',
          'D6: the user GSI holds keys only');

-- D7
SELECT is((SELECT bytes FROM uds.usage WHERE app = 'reader' AND user_id = 'u-100'), uds.quota_used('reader', 'u-100'),
          'D7: the stored usage is exact after every write');
SELECT throws_ok($$SELECT uds.json_put('reader', 'u-100', 'big', to_jsonb(repeat('x', 2000)))$$, '23514',
                 'D7: quota exceeded: u-100 would store more than 2000 bytes in app reader',
                 'D7: a write that would go over the quota is refused');
SELECT throws_ok($$SELECT ddb.execute('PutItem', jsonb_build_object('TableName', 'appDataJson', 'Item',
    '{"appUser": {"S": "reader#u-100"}, "key": {"S": "big"}, "appName": {"S": "reader"}, "user": {"S": "u-100"},
      "appKey": {"S": "reader#big"}}'::jsonb || jsonb_build_object('value', jsonb_build_object('S', repeat('x', 2000)))))$$,
                 '23514', NULL, 'D7: whatever the path');
SELECT ok(uds.data_delete('json', 'reader', 'u-100', 'settings')
          AND (SELECT bytes FROM uds.usage WHERE app = 'reader' AND user_id = 'u-100') = uds.quota_used('reader', 'u-100'),
          'D7: a delete gives the bytes back');
SELECT is((SELECT count(*) FROM uds.reconcile()), 0::bigint, 'D7: reconciliation finds no drift');

SELECT throws_ok($$SELECT ddb.execute('PutItem', '{"TableName": "appUsage", "Item": {"appUser": {"S": "reader#u-100"},
    "bytes": {"N": "-1000000"}}}')$$, '22023', NULL, 'D7: the usage figures cannot be written directly');
SELECT throws_ok($$SELECT ddb.execute('PutItem', '{"TableName": "apps", "Item": {"appName": {"S": "hmh"}}}')$$, '22023', NULL,
                 'D2: nor can hmh be registered through ddb.execute');
SET LOCAL uds.reconciling = on;
SELECT lives_ok($$SELECT ddb.put_item('appUsage', '{"appUser": "reader#u-200", "appName": "reader", "user": "u-200", "bytes": 1, "items": 1}')$$,
                'D7: the reconciler may write the usage figures (here a drift)');
SET LOCAL uds.reconciling = off;
SELECT results_eq($$SELECT user_id, stored_bytes FROM uds.reconcile()$$, $$VALUES ('u-200', 1::bigint)$$,
                  'D7: reconciliation reports a drift');
SELECT is((SELECT count(*) FROM uds.reconcile(repair => true)), 1::bigint, 'D7: and repairs it');
SELECT is((SELECT count(*) FROM uds.reconcile()), 0::bigint, 'D7: after which nothing drifts');

-- Bad input
SELECT throws_ok($$SELECT uds.json_put('no-such-app', 'u-1', 'k', '1')$$, 'P0002', 'unknown app no-such-app',
                 'an unknown app is refused');

SELECT * FROM finish();
ROLLBACK;
