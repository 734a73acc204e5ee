-- pgTAP: the uniflow model, every catalog id (U1-U7), through its SQL
-- functions and through ddb.execute.
BEGIN;
SELECT plan(28);

SELECT ok((SELECT count(*) = 6 FROM ddb.tables WHERE model = 'uniflow'), 'the six tables are installed');
SELECT is(ddb.execute('DescribeTimeToLive', '{"TableName": "profilesTable"}') -> 'TimeToLiveDescription' ->> 'TimeToLiveStatus',
          'ENABLED', 'TTL is enabled on profilesTable');

-- U1, U2, U3: identify and track
SELECT lives_ok($$SELECT uniflow.track('user_123', 'Page Viewed', '{"path": "/pricing", "ref": null}', '2025-03-08T10:00:00Z', 'msg-001')$$,
                'an event is tracked');
SELECT lives_ok($$SELECT uniflow.identify('user_123', '{"email": "jane@example.com", "plan": "free"}', 'abc-123', '2025-03-08T10:01:00Z')$$,
                'identify links an anonymous visitor and sets traits');
SELECT lives_ok($$SELECT uniflow.identify('user_123', '{"plan": "pro"}', at => '2025-03-09T09:00:00Z')$$,
                'a later identify merges traits');
SELECT is((uniflow.get_profile('user_123')).traits, '{"plan": "pro", "email": "jane@example.com"}',
          'U1: profile lookup returns the merged profile (a later write wins per trait)');
SELECT is(ddb.execute('GetItem', '{"TableName": "profilesTable", "ProjectionExpression": "traits.#p",
              "ExpressionAttributeNames": {"#p": "plan"},
              "Key": {"userId": {"S": "user_123"}, "sortKey": {"S": "META"}}}'),
          '{"Item": {"traits": {"M": {"plan": {"S": "pro"}}}}}', 'U1: the same through ddb.execute');
SELECT lives_ok($$SELECT uniflow.track('user_123', 'Order Completed', '{"total": 4900}', '2025-03-09T09:05:00Z', 'msg-003'),
                         uniflow.track('user_123', 'Signed Up', '{}', '2025-03-08T10:02:00Z', 'msg-002')$$,
                'more events, out of order');
SELECT results_eq($$SELECT message_id FROM uniflow.event_history('user_123')$$, ARRAY['msg-001', 'msg-002', 'msg-003'],
                  'U2: event history in timestamp order');
SELECT is((SELECT properties FROM uniflow.event_history('user_123') WHERE message_id = 'msg-001'),
          '{"ref": null, "path": "/pricing"}', 'U2: event properties are kept whole, nulls included');
SELECT is(jsonb_array_length(ddb.execute('Query', '{"TableName": "profilesTable",
              "KeyConditionExpression": "userId = :u AND begins_with(sortKey, :e)",
              "ExpressionAttributeValues": {":u": {"S": "user_123"}, ":e": {"S": "EVENT#"}}}') -> 'Items'),
          3, 'U2: the same Query through ddb.execute');
SELECT is(uniflow.resolve_identity('abc-123'), 'user_123', 'U3: identity resolution');
SELECT is(uniflow.resolve_identity('nobody'), NULL, 'U3: an unknown visitor resolves to nothing');
SELECT throws_ok($$SELECT uniflow.identify('user_999', '{}', 'abc-123')$$, '23505',
                 'anonymousId abc-123 is already linked to another user', 'U3: an anonymousId never moves to another user');

SELECT throws_ok($$SELECT ddb.execute('PutItem', '{"TableName": "identityTable", "Item": {"anonymousId": {"S": "abc-123"},
    "userId": {"S": "user_999"}}}')$$, '23505', 'anonymousId abc-123 is already linked to another user',
                 'U3: also through ddb.execute');

-- U4: write keys
SELECT lives_ok($$CREATE TEMP TABLE new_source AS SELECT * FROM uniflow.create_source('website', id => 'src_web')$$,
                'a source is created, its write key shown once');
SELECT is((uniflow.authenticate((SELECT write_key FROM new_source))).id, 'src_web',
          'U4: write-key authentication through writeKeyHashIndex');
SELECT is(uniflow.authenticate('wk_wrong'), NULL, 'U4: a wrong key authenticates nothing');
SELECT is((SELECT count(*) FROM uniflow."sourcesTable" t, new_source n WHERE t.item::text LIKE '%' || n.write_key || '%'),
          0::bigint, 'U4: the write key is stored nowhere, only its sha256 digest');
SELECT throws_ok($$SELECT ddb.execute('PutItem', '{"TableName": "sourcesTable", "Item": {"id": {"S": "src_bad"},
    "name": {"S": "bad"}, "writeKey": {"S": "wk_plain"}, "writeKeyHash": {"S": "0000000000000000000000000000000000000000000000000000000000000000"}}}')$$,
                 '22023', 'a source never stores its write key, only writeKeyHash (its sha256 digest)',
                 'U4: a write key in clear is refused, whatever the path');

SELECT throws_ok($$SELECT ddb.execute('PutItem', jsonb_build_object('TableName', 'sourcesTable', 'Item', jsonb_build_object(
    'id', '{"S": "src_copy"}'::jsonb, 'name', '{"S": "copy"}'::jsonb,
    'writeKeyHash', jsonb_build_object('S', (SELECT write_key_hash FROM uniflow.sources WHERE id = 'src_web')))))$$,
                 '23505', NULL, 'U4: one source per write key, whoever writes');

-- U5, U6
SELECT lives_ok($$SELECT uniflow.put_segment('seg_456', 'Pro users', '{"trait": "plan", "equals": "pro"}'),
                         uniflow.add_segment_member('seg_456', 'user_123'), uniflow.add_segment_member('seg_456', 'user_200'),
                         uniflow.put_destination('dst_1', 'webhook', '{"url": "https://example.com/hook"}')$$,
                'a segment, its members, a destination');
SELECT results_eq($$SELECT * FROM uniflow.segment_members('seg_456')$$, ARRAY['user_123', 'user_200'],
                  'U5: segment members');
SELECT ok(uniflow.get_by_id('segment', 'seg_456') ->> 'name' = 'Pro users'
          AND uniflow.get_by_id('destination', 'dst_1') ->> 'type' = 'webhook'
          AND uniflow.get_by_id('source', 'src_web') ->> 'name' = 'website',
          'U6: destination, segment and source by id');

-- U7
SELECT throws_ok($$DROP EXTENSION ddb_model CASCADE$$, '2BP01', NULL,
                 'U7: removing the extension never silently destroys item data');

-- Bad input
SELECT throws_ok($$SELECT uniflow.track('user#1', 'x')$$, '22023', NULL, 'an id with # is refused');
SELECT throws_ok($$SELECT uniflow.add_segment_member('seg_none', 'user_123')$$, 'P0002', 'unknown segment seg_none',
                 'an unknown segment is refused');
SELECT throws_ok($$SELECT uniflow.identify('user_123', '["not", "a", "map"]')$$, '22023', 'traits must be a jsonb object',
                 'traits that are not a map are refused');

SELECT * FROM finish();
ROLLBACK;
