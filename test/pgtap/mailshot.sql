-- pgTAP: the mailshot model, every catalog id (M1-M10), through its SQL
-- functions and through ddb.execute.
BEGIN;
SELECT plan(43);

SELECT lives_ok($$SELECT mailshot.upsert_subscriber(' User@Example.com ', 'Jane', '{"platform": "kajabi", "country": "ZA"}',
                                                    at => '2026-03-01T00:00:00Z')$$, 'a subscriber is created');

-- M8
SELECT is(mailshot.subscriber_pk(' User@Example.com'), 'SUB#user@example.com', 'M8: subscriberPK');
SELECT is(mailshot.execution_sk('onboarding'), 'EXEC#onboarding', 'M8: executionSK');
SELECT is(mailshot.sent_sk('2026-03-17T10:30:00.000Z'), 'SENT#2026-03-17T10:30:00.000Z', 'M8: sentSK');

-- M1
SELECT is((mailshot.get_profile('user@example.com')).attributes ->> 'platform', 'kajabi', 'M1: get profile');
SELECT is(ddb.execute('GetItem', '{"TableName": "MailshotTable", "ProjectionExpression": "firstName, suppressed",
              "Key": {"PK": {"S": "SUB#user@example.com"}, "SK": {"S": "PROFILE"}}}'),
          '{"Item": {"firstName": {"S": "Jane"}, "suppressed": {"BOOL": false}}}', 'M1: the same GetItem through ddb.execute');
SELECT is(mailshot.get_profile('nobody@example.com'), NULL, 'M1: an unknown subscriber is NULL');

-- M2, M3
SELECT lives_ok($$SELECT mailshot.start_execution('user@example.com', 'onboarding', 'arn:aws:states:eu-west-1:1:execution:a', '2026-03-01T00:00:00Z'),
                         mailshot.start_execution('user@example.com', 'winback', 'arn:aws:states:eu-west-1:1:execution:b', '2026-03-05T00:00:00Z')$$,
                'two executions start');
SELECT is((mailshot.get_execution('user@example.com', 'winback')).execution_arn, 'arn:aws:states:eu-west-1:1:execution:b',
          'M2: get active execution');
SELECT results_eq($$SELECT sequence_id FROM mailshot.list_executions('user@example.com')$$, ARRAY['onboarding', 'winback'],
                  'M3: list executions (begins_with EXEC#)');
SELECT ok(mailshot.end_execution('user@example.com', 'winback'), 'a finished execution ends');
SELECT is(mailshot.get_execution('user@example.com', 'winback'), NULL, 'M2: and is no longer active');

-- M4, M5, M9 on send logs
SELECT is(mailshot.record_send('user@example.com', 'onboarding/welcome', 'Welcome!', 'onboarding', now() - interval '3 days'),
          mailshot.sent_sk(now() - interval '3 days'), 'a send is logged under its sentSK');
SELECT lives_ok($$SELECT mailshot.record_send('user@example.com', 'onboarding/day-2', 'Day two', 'onboarding', now() - interval '2 days')$$,
                'a second send');
SELECT results_eq($$SELECT template_key FROM mailshot.send_history('user@example.com')$$,
                  ARRAY['onboarding/day-2', 'onboarding/welcome'], 'M4: send history, newest first');
SELECT is(jsonb_array_length(ddb.execute('Query', '{"TableName": "MailshotTable",
              "KeyConditionExpression": "PK = :pk AND begins_with(SK, :sent)",
              "ExpressionAttributeValues": {":pk": {"S": "SUB#user@example.com"}, ":sent": {"S": "SENT#"}}}') -> 'Items'),
          2, 'M4: the same Query through ddb.execute');
SELECT ok(mailshot.was_sent('user@example.com', 'onboarding/welcome') AND NOT mailshot.was_sent('user@example.com', 'onboarding/day-3'),
          'M5: was template T sent (begins_with SENT# + filter templateKey)');
SELECT is(ddb.execute('Query', '{"TableName": "MailshotTable", "Select": "COUNT",
              "KeyConditionExpression": "PK = :pk AND begins_with(SK, :sent)", "FilterExpression": "templateKey = :t",
              "ExpressionAttributeValues": {":pk": {"S": "SUB#user@example.com"}, ":sent": {"S": "SENT#"},
                                            ":t": {"S": "onboarding/welcome"}}}') ->> 'Count',
          '1', 'M5: the same through ddb.execute');
SELECT is((SELECT (item ->> 'ttl')::bigint - floor(date_part('epoch', (item ->> 'sentAt')::timestamptz))::bigint
           FROM mailshot."MailshotTable" WHERE item ->> 'templateKey' = 'onboarding/welcome'),
          90 * 86400::bigint, 'M9: a send log''s ttl is sentAt + 90 days (SEND_LOG_TTL_DAYS)');
SELECT lives_ok($$SELECT mailshot.record_send('user@example.com', 'onboarding/old', 'Old', 'onboarding', now() - interval '91 days')$$,
                'a send of 91 days ago is logged');
SELECT ok(NOT mailshot.was_sent('user@example.com', 'onboarding/old')
          AND NOT EXISTS (SELECT FROM mailshot.sends WHERE template_key = 'onboarding/old'),
          'M9: a send log past its 90 days is invisible at once');
SELECT is(ddb.expire('MailshotTable'), 1::bigint, 'M9: and the sweep deletes it');
SELECT is((SELECT count(*) FROM mailshot."MailshotTable" WHERE expires_at IS NOT NULL AND NOT sk ^@ 'SENT#'),
          0::bigint, 'M9: other main-table items have no TTL');
SELECT throws_ok($$SELECT ddb.execute('PutItem', '{"TableName": "MailshotTable", "Item": {
    "PK": {"S": "SUB#user@example.com"}, "SK": {"S": "SENT#2026-03-17T10:30:00.000Z"}, "templateKey": {"S": "t"},
    "subject": {"S": "s"}, "sentAt": {"S": "2026-03-17T10:30:00.000Z"}, "ttl": {"N": "1752710400"}}}')$$, '22023',
                 'SUB#user@example.com SENT#2026-03-17T10:30:00.000Z: ttl must be sentAt + 90 days, 1781519400',
                 'M9: a ttl that does not follow the rule (the seed''s example number) is refused');

-- M6
SELECT lives_ok($$SELECT mailshot.suppress('user@example.com', 'Complaint', 'Marked as spam', '2026-03-18T00:00:00Z')$$,
                'a subscriber is suppressed');
SELECT is(mailshot.get_suppression('user@example.com'),
          ROW('user@example.com', 'Complaint', 'Marked as spam', '2026-03-18T00:00:00Z')::mailshot.suppression,
          'M6: get suppression');
SELECT ok((mailshot.get_profile('user@example.com')).suppressed, 'M6: and the profile says so');

-- M7
SELECT results_eq($$SELECT i ->> 'SK' FROM mailshot.get_subscriber_items('user@example.com') i WHERE i ->> 'SK' !~ '^SENT#'$$,
                  ARRAY['EXEC#onboarding', 'PROFILE', 'SUPPRESSION'], 'M7: everything for a subscriber (PK only)');

-- M9 on events, M10
SELECT lives_ok($$SELECT mailshot.record_event(e, t, 'onboarding/welcome', 'onboarding', 'Welcome!', now() - d)
                  FROM (VALUES ('user@example.com', 'delivery', interval '3 days'), ('user@example.com', 'open', interval '2 days'),
                               ('ann@example.com', 'open', interval '1 day'), ('ann@example.com', 'click', interval '20 hours'),
                               ('bo@example.com', 'open', interval '10 days'), ('bo@example.com', 'open', interval '400 days')) v(e, t, d)$$,
                'events are recorded');
SELECT is((SELECT min((item ->> 'ttl')::bigint - floor(date_part('epoch', (item ->> 'timestamp')::timestamptz))::bigint)
           FROM mailshot."MailshotEventsTable"), 365 * 86400::bigint, 'M9: an event''s ttl is its timestamp + 365 days');
SELECT results_eq($$SELECT email, event_type FROM mailshot.template_events('onboarding/welcome', now() - interval '7 days')$$,
                  $$VALUES ('user@example.com', 'delivery'), ('user@example.com', 'open'), ('ann@example.com', 'open'),
                           ('ann@example.com', 'click')$$,
                  'M10: all events of a template in the last 7 days, oldest first');
SELECT results_eq($$SELECT email FROM mailshot.template_events('onboarding/welcome', now() - interval '7 days', event_type => 'open')$$,
                  ARRAY['user@example.com', 'ann@example.com'], 'M10: all opens of onboarding/welcome in the last 7 days');
SELECT is(jsonb_array_length(ddb.execute('Query', jsonb_build_object('TableName', 'MailshotEventsTable', 'IndexName', 'TemplateIndex',
              'KeyConditionExpression', 'templateKey = :t AND begins_with(SK, :day)',
              'ExpressionAttributeValues', jsonb_build_object(':t', jsonb_build_object('S', 'onboarding/welcome'),
                  ':day', jsonb_build_object('S', 'EVT#' || left(ddb.iso8601(now() - interval '1 day'), 10))))) -> 'Items'),
          (SELECT count(*)::int FROM mailshot.events WHERE template_key = 'onboarding/welcome'
             AND ddb.iso8601(at) LIKE left(ddb.iso8601(now() - interval '1 day'), 10) || '%'),
          'M10: the seed''s query (PK = template, SK begins_with EVT#<day>) through ddb.execute');
SELECT is((SELECT count(*) FROM mailshot.events WHERE email = 'bo@example.com'), 1::bigint,
          'M9: an event past its 365 days is invisible');

-- Nothing is written over, nothing forgotten.
SELECT throws_ok($$SELECT mailshot.record_send('user@example.com', 'a/b', 'A', sent_at => '2026-11-01T10:00:00Z'),
                          mailshot.record_send('user@example.com', 'a/c', 'C', sent_at => '2026-11-01T10:00:00Z')$$,
                 '23505', 'a send to user@example.com at 2026-11-01T10:00:00.000Z is already logged',
                 'a second send under the same sentSK is refused, not written over the first');
SELECT lives_ok($$SELECT mailshot.upsert_subscriber('user@example.com', 'Janet')$$, 'a profile update without attributes');
SELECT is((mailshot.get_profile('user@example.com')).attributes ->> 'platform', 'kajabi', 'keeps the attributes it was not given');
SELECT throws_ok($$SELECT ddb.execute('UpdateItem', '{"TableName": "MailshotTable",
    "Key": {"PK": {"S": "SUB#user@example.com"}, "SK": {"S": "PROFILE"}},
    "UpdateExpression": "SET #t = :t", "ExpressionAttributeNames": {"#t": "ttl"},
    "ExpressionAttributeValues": {":t": {"N": "1800000000"}}}')$$, '22023',
                 'SUB#user@example.com PROFILE: only send logs expire; this item has no ttl (M9)',
                 'M9: a profile never expires: a ttl on it is refused');

-- Bad input: a clear error, nothing changed.
SELECT throws_ok($$SELECT mailshot.upsert_subscriber('user at example.com')$$, '22023',
                 'not an email address: ''user at example.com''', 'a malformed email is refused');
SELECT throws_ok($$SELECT mailshot.start_execution('nobody@example.com', 'onboarding', 'arn:x')$$, 'P0002',
                 'unknown subscriber nobody@example.com', 'an unknown subscriber is refused');
SELECT throws_ok($$SELECT mailshot.suppress('user@example.com', 'Angry', 'x')$$, '22023',
                 'SUB#user@example.com SUPPRESSION: unknown suppression type "Angry" (Permanent or Complaint)',
                 'an unknown suppression type is refused');
SELECT throws_ok($$SELECT mailshot.record_event('user@example.com', 'forward', 'onboarding/welcome')$$, '22023', NULL,
                 'an unknown event type is refused');
SELECT throws_ok($$SELECT ddb.execute('PutItem', '{"TableName": "MailshotTable", "Item": {
    "PK": {"S": "SUB#user@example.com"}, "SK": {"S": "EXEC#promo"}, "sequenceId": {"S": "promo"}}}')$$, '22023',
                 'SUB#user@example.com EXEC#promo lacks executionArn, startedAt', 'a missing required attribute is refused');

SELECT * FROM finish();
ROLLBACK;
