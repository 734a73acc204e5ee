-- pgTAP: the user_service model, every catalog id (S1-S10), through its SQL
-- functions and through ddb.execute.  The S8 check is deferred to commit;
-- at_commit() runs a statement and then the checks of commit (ddb.check_now),
-- inside the test's transaction.
BEGIN;
SELECT plan(44);

CREATE FUNCTION pg_temp.at_commit(statement text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    PERFORM ddb.check_now();
END $$;

-- Ann, with her first address; Bo.
SELECT is(user_service.create_user('  Ann.Lee@Example.COM ', 'Ann', 'Lee', '+27821234567',
                                   user_id => 'a0000000-0000-4000-8000-000000000001',
                                   email_id => 'e0000000-0000-4000-8000-000000000001'),
          'a0000000-0000-4000-8000-000000000001'::uuid, 'a user is created with its first email');
SELECT lives_ok($$SELECT user_service.create_user('bo@example.com', 'Bo', 'Ng',
                                                   user_id => 'b0000000-0000-4000-8000-000000000002')$$,
                'a second user');
SELECT lives_ok($$SELECT pg_temp.at_commit('SELECT 1')$$, 'S8: a new user satisfies the primary invariant');

-- S6
SELECT is(user_service.normalize_email(' Ann.Lee+news@GMail.com '), 'ann.lee+news@gmail.com',
          'S6: email normalisation lower-cases and trims only');
SET LOCAL user_service.fold_gmail = on;
SELECT is(user_service.normalize_email(' Ann.Lee+news@GoogleMail.com '), 'annlee@gmail.com',
          'S6: Gmail folding only as an opt-in setting');
SET LOCAL user_service.fold_gmail = off;
SELECT throws_ok($$SELECT user_service.normalize_email('ann at example.com')$$, '22023',
                 'not an email address: ''ann at example.com''', 'S6: a malformed email is refused');

-- S1
SELECT is((user_service.get_user('a0000000-0000-4000-8000-000000000001')).email, 'ann.lee@example.com',
          'S1: GetItem profile, with the normalised primary email');
SELECT is(user_service.get_user('c0000000-0000-4000-8000-000000000009'), NULL, 'S1: an unknown user is NULL');
SELECT is(ddb.execute('GetItem', '{"TableName": "UserServiceTable", "ProjectionExpression": "firstName",
              "Key": {"PK": {"S": "USER#a0000000-0000-4000-8000-000000000001"}, "SK": {"S": "PROFILE"}}}'),
          '{"Item": {"firstName": {"S": "Ann"}}}', 'S1: the same GetItem through ddb.execute');

-- S2, S3, S4, S5
SELECT is(user_service.add_email('a0000000-0000-4000-8000-000000000001', 'Ann.Work@example.com',
                                 email_id => 'e0000000-0000-4000-8000-000000000002'),
          'e0000000-0000-4000-8000-000000000002'::uuid, 'a second address, unverified');
SELECT results_eq($$SELECT email, is_primary, is_verified FROM user_service.list_emails('a0000000-0000-4000-8000-000000000001')$$,
                  $$VALUES ('ann.lee@example.com', true, true), ('ann.work@example.com', false, false)$$,
                  'S2: a user''s emails (SK begins_with EMAIL#)');
SELECT is(user_service.find_user_by_email(' ANN.WORK@example.com'), 'a0000000-0000-4000-8000-000000000001'::uuid,
          'S3: login lookup by normalized email on GSI1');
SELECT is(ddb.execute('Query', '{"TableName": "UserServiceTable", "IndexName": "GSI1",
              "KeyConditionExpression": "GSI1PK = :e", "ProjectionExpression": "userId",
              "ExpressionAttributeValues": {":e": {"S": "EMAIL#ann.work@example.com"}}}') -> 'Items',
          '[{"userId": {"S": "a0000000-0000-4000-8000-000000000001"}}]', 'S3: the same Query through ddb.execute');
SELECT ok(user_service.email_in_use('bo@EXAMPLE.com') AND NOT user_service.email_in_use('nobody@example.com'),
          'S4: uniqueness check on GSI1 with limit 1');
SELECT results_eq($$SELECT i ->> 'SK' FROM user_service.get_user_items('a0000000-0000-4000-8000-000000000001') i$$,
                  ARRAY['EMAIL#e0000000-0000-4000-8000-000000000001', 'EMAIL#e0000000-0000-4000-8000-000000000002', 'PROFILE'],
                  'S5: profile and all emails in one query on PK');

-- S7, whatever the write path
SELECT throws_ok($$SELECT user_service.add_email('b0000000-0000-4000-8000-000000000002', ' ann.work@EXAMPLE.com')$$,
                 '23505', 'S7: email address ann.work@example.com is already in use',
                 'S7: an address another user holds is refused');
SELECT throws_ok($$SELECT user_service.create_user('ANN.LEE@example.com', 'Eve', 'Doe')$$, '23505', NULL,
                 'S7: also for a new user''s first address');
SELECT throws_ok($$SELECT ddb.execute('PutItem', '{"TableName": "UserServiceTable", "Item": {
    "PK": {"S": "USER#b0000000-0000-4000-8000-000000000002"}, "SK": {"S": "EMAIL#e0000000-0000-4000-8000-000000000009"},
    "GSI1PK": {"S": "EMAIL#ann.work@example.com"}, "GSI1SK": {"S": "USER#b0000000-0000-4000-8000-000000000002"},
    "emailId": {"S": "e0000000-0000-4000-8000-000000000009"}, "userId": {"S": "b0000000-0000-4000-8000-000000000002"},
    "email": {"S": "ann.work@example.com"}, "isPrimary": {"BOOL": false}, "isVerified": {"BOOL": false},
    "createdAt": {"S": "2026-03-17T10:30:00.000Z"}},
    "ConditionExpression": "attribute_not_exists(PK)"}')$$, '23505', NULL,
                 'S7: the seed''s conditional PutItem through ddb.execute is refused too');
SELECT throws_ok($$SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "UserServiceTable", "Item": {
    "PK": {"S": "USER#b0000000-0000-4000-8000-000000000002"}, "SK": {"S": "EMAIL#e0000000-0000-4000-8000-000000000009"},
    "GSI1PK": {"S": "EMAIL#ann.work@example.com"}, "GSI1SK": {"S": "USER#b0000000-0000-4000-8000-000000000002"},
    "emailId": {"S": "e0000000-0000-4000-8000-000000000009"}, "userId": {"S": "b0000000-0000-4000-8000-000000000002"},
    "email": {"S": "ann.work@example.com"}, "isPrimary": {"BOOL": false}, "isVerified": {"BOOL": false},
    "createdAt": {"S": "2026-03-17T10:30:00.000Z"}}}}]}')$$, '23505', NULL,
                 'S7: and through TransactWriteItems');
SELECT is((SELECT count(*) FROM user_service.emails WHERE email = 'ann.work@example.com'), 1::bigint,
          'S7: the address is still held once');

-- S8
SELECT throws_ok($$SELECT user_service.set_primary_email('a0000000-0000-4000-8000-000000000001',
                                                          'e0000000-0000-4000-8000-000000000002')$$,
                 'YD002', 'S8: email ann.work@example.com is not verified', 'S8: an unverified address cannot become primary');
SELECT lives_ok($$SELECT user_service.verify_email('a0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000002')$$,
                'an address is verified');
SELECT lives_ok($$SELECT pg_temp.at_commit($q$SELECT user_service.set_primary_email('a0000000-0000-4000-8000-000000000001',
                                                                                   'e0000000-0000-4000-8000-000000000002')$q$)$$,
                'S8: set-primary is the seed''s three-update transaction, and holds at commit');
SELECT results_eq($$SELECT email, is_primary FROM user_service.list_emails('a0000000-0000-4000-8000-000000000001')$$,
                  $$VALUES ('ann.lee@example.com', false), ('ann.work@example.com', true)$$,
                  'S8: the old primary is off, the new one on');
SELECT is((user_service.get_user('a0000000-0000-4000-8000-000000000001')).email, 'ann.work@example.com',
          'S8: the profile names the new primary');
SELECT throws_ok($$SELECT user_service.delete_email('a0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000002')$$,
                 'YD002', 'S8: the primary email cannot be deleted', 'S8: deleting the primary is refused');
SELECT throws_ok($$SELECT pg_temp.at_commit($q$SELECT ddb.execute('DeleteItem', '{"TableName": "UserServiceTable",
    "Key": {"PK": {"S": "USER#a0000000-0000-4000-8000-000000000001"}, "SK": {"S": "EMAIL#e0000000-0000-4000-8000-000000000002"}}}')$q$)$$,
                 '23514', 'S8: user a0000000-0000-4000-8000-000000000001 must have exactly one primary email, not 0',
                 'S8: deleting the primary through ddb.execute fails at commit');
SELECT throws_ok($$SELECT pg_temp.at_commit($q$SELECT ddb.execute('UpdateItem', '{"TableName": "UserServiceTable",
    "Key": {"PK": {"S": "USER#a0000000-0000-4000-8000-000000000001"}, "SK": {"S": "EMAIL#e0000000-0000-4000-8000-000000000001"}},
    "UpdateExpression": "SET isPrimary = :t", "ExpressionAttributeValues": {":t": {"BOOL": true}}}')$q$)$$,
                 '23514', 'S8: user a0000000-0000-4000-8000-000000000001 must have exactly one primary email, not 2',
                 'S8: a second primary through ddb.execute fails at commit');
SELECT throws_ok($$SELECT pg_temp.at_commit($q$SELECT ddb.execute('UpdateItem', '{"TableName": "UserServiceTable",
    "Key": {"PK": {"S": "USER#a0000000-0000-4000-8000-000000000001"}, "SK": {"S": "EMAIL#e0000000-0000-4000-8000-000000000002"}},
    "UpdateExpression": "SET isVerified = :f", "ExpressionAttributeValues": {":f": {"BOOL": false}}}')$q$)$$,
                 '23514', NULL, 'S8: an unverified primary fails at commit');
SELECT throws_ok($$SELECT pg_temp.at_commit($q$SELECT ddb.execute('UpdateItem', '{"TableName": "UserServiceTable",
    "Key": {"PK": {"S": "USER#a0000000-0000-4000-8000-000000000001"}, "SK": {"S": "PROFILE"}},
    "UpdateExpression": "SET email = :e", "ExpressionAttributeValues": {":e": {"S": "ann.lee@example.com"}}}')$q$)$$,
                 '23514', NULL, 'S8: a profile that names another address than the primary fails at commit');
SELECT lives_ok($$SELECT pg_temp.at_commit($q$SELECT user_service.delete_email('a0000000-0000-4000-8000-000000000001',
                                                                              'e0000000-0000-4000-8000-000000000001')$q$)$$,
                'S8: a non-primary address can be deleted');

-- S9
SELECT is(user_service.update_profile('a0000000-0000-4000-8000-000000000001', 1, first_name => 'Annie'), 2,
          'S9: an update at the expected version bumps it');
SELECT throws_ok($$SELECT user_service.update_profile('a0000000-0000-4000-8000-000000000001', 1, first_name => 'Eve')$$,
                 'YD002', 'S9: user a0000000-0000-4000-8000-000000000001 is at version 2, not 1',
                 'S9: a stale version fails with the conditional-check error');
SELECT is((SELECT first_name || ' v' || version FROM user_service.users WHERE user_id = 'a0000000-0000-4000-8000-000000000001'),
          'Annie v2', 'S9: and changes nothing');
SELECT throws_ok($$SELECT ddb.execute('UpdateItem', '{"TableName": "UserServiceTable",
    "Key": {"PK": {"S": "USER#a0000000-0000-4000-8000-000000000001"}, "SK": {"S": "PROFILE"}},
    "UpdateExpression": "SET firstName = :n, version = version + :one", "ConditionExpression": "version = :v",
    "ExpressionAttributeValues": {":n": {"S": "Eve"}, ":one": {"N": "1"}, ":v": {"N": "1"}}}')$$,
                 'YD002', 'The conditional request failed', 'S9: the seed''s locked update through ddb.execute');

-- S10
SELECT is((SELECT count(*) FROM user_service."UserServiceTable:GSI1" WHERE sk = 'PROFILE'), 0::bigint,
          'S10: no PROFILE item is in GSI1');
SELECT is((SELECT count(*) FROM user_service."UserServiceTable:GSI1"), (SELECT count(*) FROM user_service.emails),
          'S10: every EMAIL item is');
SELECT throws_ok($$SELECT ddb.execute('UpdateItem', '{"TableName": "UserServiceTable",
    "Key": {"PK": {"S": "USER#a0000000-0000-4000-8000-000000000001"}, "SK": {"S": "PROFILE"}},
    "UpdateExpression": "SET GSI1PK = :e", "ExpressionAttributeValues": {":e": {"S": "EMAIL#x@example.com"}}}')$$,
                 '22023', 'a user profile is never in GSI1 (S10)', 'S10: a profile cannot be put into GSI1');

-- Bad input: a clear error, nothing changed.
SELECT throws_ok($$SELECT user_service.create_user('cy@example.com', 'Cy', 'Oh', '0821234567')$$, '22023',
                 'phone "0821234567" is not an E.164 number (+ and up to 15 digits)', 'a phone that is not E.164 is refused');
SELECT throws_ok($$SELECT user_service.update_profile('a0000000-0000-4000-8000-000000000001', 2, status => 'banned')$$,
                 '22023', 'unknown user status "banned" (active, suspended or deleted)', 'an unknown status is refused');
SELECT throws_ok($$SELECT user_service.add_email('c0000000-0000-4000-8000-000000000009', 'cy@example.com')$$,
                 'P0002', 'unknown user c0000000-0000-4000-8000-000000000009', 'an unknown user is refused');
SELECT throws_ok($$SELECT user_service.create_user('cy@example.com', 'Cy', NULL)$$, '22023',
                 'a user needs a first name and a last name', 'a missing required attribute is refused');
SELECT throws_ok($$SELECT ddb.execute('PutItem', '{"TableName": "UserServiceTable", "Item": {
    "PK": {"S": "USER#c0000000-0000-4000-8000-000000000009"}, "SK": {"S": "PROFILE"}, "userId": {"S": "c0000000-0000-4000-8000-000000000009"}}}')$$,
                 '22023', 'user profile c0000000-0000-4000-8000-000000000009 lacks email, firstName, lastName, status, version, createdAt, updatedAt',
                 'an incomplete profile through ddb.execute is refused');
SELECT is((SELECT count(*) FROM user_service.users), 2::bigint, 'and no user was added by the refused writes');

SELECT * FROM finish();
ROLLBACK;
