-- pgTAP: the underwriting model, every catalog id (W1-W18), through its SQL
-- functions and through ddb.execute.
BEGIN;
SELECT plan(42);

SELECT is(underwriting.create_environment('prod'), 'prod-underwriting', 'an environment''s table is one call');
SELECT is(underwriting.create_environment('test'), 'test-underwriting', 'and prod and test live side by side');
SELECT is((SELECT array_agg(index_name ORDER BY index_name) FROM ddb.indexes WHERE table_name = 'prod-underwriting'),
          ARRAY['GSI1', 'GSI2'], 'GSI1 and GSI2 are defined');
SELECT lives_ok($$SELECT underwriting.load_example_data('prod')$$, 'the seed''s example items load');

-- W1, W2
SELECT lives_ok($$SELECT underwriting.put_float_profile('prod', 'u-2', '{"is_float_enabled": true, "floats": [{"id": "1", "amount": 500, "is_enabled": true}]}',
                                                         'first', created_on => '2024-01-01T00:00:00Z'),
                         underwriting.put_float_profile('prod', 'u-2', '{"is_float_enabled": false}', 'second',
                                                         created_on => '2024-02-01T00:00:00Z')$$, 'two profile versions');
SELECT is(underwriting.latest_profile('prod', 'u-2') ->> 'reason', 'second', 'W1: the latest float profile');
SELECT results_eq($$SELECT i ->> 'reason' FROM underwriting.profile_history('prod', 'u-2') i$$, ARRAY['first', 'second'],
                  'W2: profile history');
SELECT is(ddb.execute('Query', '{"TableName": "prod-underwriting", "KeyConditionExpression": "PK = :u AND begins_with(SK, :p)",
              "ScanIndexForward": false, "Limit": 1, "ProjectionExpression": "reason",
              "ExpressionAttributeValues": {":u": {"S": "USER#u-2"}, ":p": {"S": "PROFILE#"}}}') -> 'Items',
          '[{"reason": {"S": "second"}}]', 'W1: the same Query through ddb.execute');

-- W3, W4, W15, W18 on temporary profiles
SELECT lives_ok($$SELECT underwriting.put_temporary_profile('prod', 'u-2', now() + interval '7 days', '{"is_float_enabled": true}', 'promo'),
                         underwriting.put_temporary_profile('prod', 'u-2', now() - interval '1 day', '{"is_float_enabled": true}', 'old promo'),
                         underwriting.put_rule_outcome('prod', 'u-2', 'RuleZ', -1)$$,
                'an active and an expired temporary profile, and a rule outcome whose key sorts after them');
SELECT results_eq($$SELECT i ->> 'reason' FROM underwriting.active_temporary_profiles('prod', 'u-2') i$$, ARRAY['promo'],
                  'W3: only active temporary profiles, bounded to their prefix');
SELECT results_eq($$SELECT i ->> 'reason' FROM underwriting.all_temporary_profiles('prod', 'u-2') i$$, ARRAY['promo'],
                  'W4: all temporary profiles (W18: the expired one is gone from reads)');
SELECT is((SELECT count(*) FROM underwriting."prod-underwriting" WHERE pk = 'USER#u-2' AND sk ^@ 'TEMP_FLOAT_PROFILE#'),
          2::bigint, 'W18: although it is not deleted yet');
SELECT is(underwriting.effective_profile('prod', 'u-2') ->> 'reason', 'promo',
          'W15: an active temporary profile takes precedence');
SELECT is(underwriting.effective_profile('prod', 'user-none') IS NULL, true, 'W15: no profile, nothing in effect');
SELECT is((SELECT (item ->> 'ttl')::bigint FROM underwriting."prod-underwriting" WHERE sk ^@ 'TEMP_FLOAT_PROFILE#EXPIRES#'
           AND item ->> 'reason' = 'promo'),
          floor(date_part('epoch', now() + interval '7 days'))::bigint,
          'W3: a temporary profile''s ttl is its expires_on (the time it was given)');

-- W5, W6, W7, W8
SELECT results_eq($$SELECT i ->> 'rule_name' FROM underwriting.rule_outcomes('prod', 'u-2') i$$, ARRAY['RuleZ'],
                  'W5: all rule outcomes of a user');
SELECT is((SELECT (item ->> 'ttl')::bigint - floor(date_part('epoch', (item ->> 'updated_date')::timestamptz))::bigint
           FROM underwriting."prod-underwriting" WHERE sk = 'RULE_OUTCOME#RuleZ'), 32 * 86400::bigint,
          'W5: a rule outcome expires 32 days after it was written');
SELECT lives_ok($$SELECT underwriting.put_evaluation_result('prod', 'u-2', 'item-1', 'acct', '{"float_results": {"approved": true, "amount": 1000}}',
                                                             now() - interval '2 hours', 'r-old'),
                         underwriting.put_evaluation_result('prod', 'u-2', 'item-1', 'acct', '{"float_results": {"approved": true, "amount": 2000}}',
                                                             now() - interval '1 hour', 'r-new'),
                         underwriting.put_evaluation_result('prod', 'u-2', 'item-10', 'acct', '{"float_results": {"approved": false, "amount": 0}}',
                                                             now(), 'r-10')$$,
                'evaluation results for item-1 and item-10');
SELECT is(underwriting.latest_evaluation('prod', 'u-2', 'item-1', 'acct') ->> 'result_id', 'r-new',
          'W6: the latest result for an item and account (item-10 does not match item-1)');
SELECT is(underwriting.evaluation_by_id('prod', 'u-2', 'r-old') -> 'float_results' ->> 'amount', '1000',
          'W7: a result by its result id through GSI1');
SELECT is(ddb.execute('Query', '{"TableName": "prod-underwriting", "IndexName": "GSI1",
              "KeyConditionExpression": "GSI1PK = :u AND GSI1SK = :r", "ProjectionExpression": "result_id",
              "ExpressionAttributeValues": {":u": {"S": "USER#u-2"}, ":r": {"S": "EVAL_RESULTS#r-old"}}}') -> 'Items',
          '[{"result_id": {"S": "r-old"}}]', 'W7: the same through ddb.execute');
SELECT results_eq($$SELECT i ->> 'result_id' FROM underwriting.recent_results('prod', 'u-2', 2) i$$, ARRAY['r-10', 'r-new'],
                  'W8: the recent results, ttl > now, limit N');

-- W9, W10, W16
SELECT is(underwriting.take_float('prod', 'u-2', 'r-new', 2000, 'float-1') ~ '^HISTORICAL_EVALUATION#item-1#acct#', true,
          'W16: taking a float records a historical evaluation');
SELECT is((SELECT item ? 'ttl' FROM underwriting."prod-underwriting" WHERE sk ^@ 'HISTORICAL_EVALUATION#item-1#'), false,
          'W16: without a ttl, kept for good');
SELECT is((SELECT i -> 'float_results' ->> 'amount' FROM underwriting.historical_evaluations('prod', 'u-2') i), '2000',
          'W10: all historical evaluations, with the evaluation snapshot');
SELECT is(underwriting.historical_evaluation('prod', 'u-2', 'item-1', 'acct',
              (SELECT item ->> 'created_date' FROM underwriting."prod-underwriting" WHERE item ->> 'result_id' = 'r-new' AND sk ^@ 'EVAL_RESULTS#'))
          ->> 'float_id', 'float-1', 'W9: a historical evaluation by its key');

-- W11-W14, W17
SELECT lives_ok($$SELECT underwriting.put_rulebook('prod', '{"rulebook_id": "loan_v1", "rulebook_name": "Loans", "type": "loan",
                                                              "rules": [], "apply_to": 10000, "priority": 50, "superseding": false}', 'ann')$$,
                'a second rulebook');
SELECT results_eq($$SELECT i ->> 'rulebook_id' FROM underwriting.rulebooks('prod') i$$, ARRAY['core_v2', 'loan_v1'], 'W11: all rulebooks');
SELECT results_eq($$SELECT i ->> 'rulebook_id' FROM underwriting.rulebooks_by_type('prod', 'floats') i$$, ARRAY['core_v2'],
                  'W12: rulebooks by type through GSI1');
SELECT is(underwriting.rulebook('prod', 'loan_v1') ->> 'rulebook_name', 'Loans', 'W13: one rulebook');
SELECT lives_ok($$SELECT ddb.execute('DeleteItem', '{"TableName": "prod-underwriting",
                    "Key": {"PK": {"S": "RULEBOOK"}, "SK": {"S": "RULEBOOK#loan_v1"}}}')$$, 'a rulebook deleted through ddb.execute');
SELECT results_eq($$SELECT i ->> 'update_user', jsonb_array_length(i -> 'rulebooks') FROM underwriting.rulebook_updates('prod') i$$,
                  $$VALUES ('admin@example.com', 1), ('ann', 2), (session_user::text COLLATE "default", 1)$$,
                  'W17: every change, through the functions or ddb.execute, left who, when and a snapshot of all rulebooks (W14: oldest first)');
SELECT results_eq($$SELECT i ->> 'update_user' FROM underwriting.rulebook_updates('prod', newest_first => true, n => 1) i$$,
                  ARRAY[session_user::text COLLATE "default"], 'W14: newest first with a limit');

SELECT results_eq($$SELECT rulebook_id, type FROM underwriting.prod_rulebooks$$, $$VALUES ('core_v2', 'floats')$$,
                  'a typed view per environment');

SELECT throws_ok($$SELECT ddb.execute('DeleteItem', jsonb_build_object('TableName', 'prod-underwriting', 'Key',
    jsonb_build_object('PK', '{"S": "RULEBOOKCONFIGUPDATE"}'::jsonb,
                       'SK', jsonb_build_object('S', (SELECT sk::text FROM underwriting."prod-underwriting" WHERE pk = 'RULEBOOKCONFIGUPDATE' LIMIT 1)))))$$,
                 '22023', 'the rulebook audit trail cannot be deleted (W17)', 'W17: the audit trail cannot be deleted');
SELECT throws_ok($$SELECT ddb.execute('PutItem', '{"TableName": "prod-underwriting", "Item": {"PK": {"S": "RULEBOOKCONFIGUPDATE"},
    "SK": {"S": "USER#2020-01-01T00:00:00.000000Z#mallory"}, "item_type": {"S": "rulebook_update"}}}')$$, '22023', NULL,
                 'W17: nor written but by the extension');
SELECT throws_ok($$SELECT underwriting.take_float('prod', 'u-2', 'r-new', 2000, 'float-2')$$, '23505', NULL,
                 'W16: an evaluation is taken once; its historical record is never written over');
SELECT is(underwriting.effective_profile('prod', 'user-12345') -> 'loans' -> 0 ->> 'amount_cents', '20000',
          'W15: the temporary profile overrides what it sets and keeps the rest (loans)');
SELECT lives_ok($$SELECT underwriting.drop_environment('test')$$, 'an environment is dropped with its views');

-- Bad input, whatever the path
SELECT throws_ok($$SELECT underwriting.put_float_profile('prod', 'u-2', '{"floats": [{"id": "1", "amount": 10.5}]}')$$, '22023', NULL,
                 'amounts are integer cents');
SELECT throws_ok($$SELECT ddb.execute('PutItem', '{"TableName": "prod-underwriting", "Item": {"PK": {"S": "USER#u-2"},
    "SK": {"S": "HISTORICAL_EVALUATION#i#a#2024-01-01T00:00:00Z"}, "item_type": {"S": "historical_evaluation"},
    "user_id": {"S": "u-2"}, "result_id": {"S": "r"}, "item_id": {"S": "i"}, "account_id": {"S": "a"},
    "created_date": {"S": "2024-01-01T00:00:00Z"}, "ttl": {"N": "1900000000"}}}')$$, '22023',
                 'USER#u-2 HISTORICAL_EVALUATION#i#a#2024-01-01T00:00:00Z: a historical_evaluation is kept for good and has no ttl',
                 'W16: a historical evaluation with a ttl is refused');
SELECT throws_ok($$SELECT underwriting.take_float('prod', 'u-2', 'r-none', 100)$$, 'P0002', NULL,
                 'taking a float needs an evaluation result');

SELECT * FROM finish();
ROLLBACK;
