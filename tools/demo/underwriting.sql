-- The demo of the underwriting model (docs/models/underwriting.md): two
-- environments, the seed's example items in prod, then every pattern W1-W18.
\pset footer off
\set SHOW_CONTEXT never
\echo
\echo '==== underwriting: prod-underwriting and test-underwriting, the seed''s example items in prod'
SELECT underwriting.create_environment('prod') AS prod, underwriting.create_environment('test') AS test;
SELECT underwriting.load_example_data('prod') AS user_id;
\echo '== W1 latest float profile; W2 profile history'
SELECT underwriting.latest_profile('prod', 'user-12345') ->> 'reason' AS latest_reason;
SELECT i ->> 'created_on' AS created_on, i ->> 'reason' AS reason FROM underwriting.profile_history('prod', 'user-12345') i;
\echo '== W3 active temporary profiles (bounded to their prefix); W4 all of them'
SELECT i ->> 'expires_on' AS expires_on, i ->> 'reason' AS reason FROM underwriting.active_temporary_profiles('prod', 'user-12345') i;
SELECT count(*) AS temporary_profiles FROM underwriting.all_temporary_profiles('prod', 'user-12345');
\echo '== W15 the profile in effect: the temporary one takes precedence'
SELECT underwriting.effective_profile('prod', 'user-12345') ->> 'reason' AS in_effect;
\echo '== W5 rule outcomes (expire after 32 days)'
SELECT i ->> 'rule_name' AS rule, i ->> 'loan' AS loan, i -> 'features' AS features FROM underwriting.rule_outcomes('prod', 'user-12345') i;
\echo '== W6 latest evaluation for item-abc / account-xyz; W7 by result id (GSI1); W8 recent results'
SELECT i ->> 'result_id' AS result_id, i -> 'float_results' ->> 'amount' AS float_cents, i -> 'cfi_state' AS cfi_state
FROM (SELECT underwriting.latest_evaluation('prod', 'user-12345', 'item-abc', 'account-xyz') AS i) r;
SELECT underwriting.evaluation_by_id('prod', 'user-12345',
       (SELECT result_id FROM underwriting.prod_evaluations WHERE item_type = 'evaluation_result')) ->> 'SK' AS by_result_id;
SELECT i ->> 'result_id' AS recent FROM underwriting.recent_results('prod', 'user-12345', 5) i;
\echo '== W16 the float taken is kept as a historical evaluation (no ttl); W9 by key; W10 all'
SELECT result_id, item_type, taken_amount_cents, created_date FROM underwriting.prod_evaluations ORDER BY item_type;
SELECT i ->> 'SK' AS sk FROM underwriting.historical_evaluations('prod', 'user-12345') i;
\echo '== W11 all rulebooks; W12 by type (GSI1); W13 one'
SELECT underwriting.put_rulebook('prod', '{"rulebook_id": "loan_v1", "rulebook_name": "Loans v1", "type": "loan",
  "rules": [], "apply_to": 10000, "priority": 50, "superseding": false}', 'ops@example.com');
SELECT * FROM underwriting.prod_rulebooks;
SELECT i ->> 'rulebook_id' AS floats_rulebooks FROM underwriting.rulebooks_by_type('prod', 'floats') i;
SELECT underwriting.rulebook('prod', 'core_v2') ->> 'rulebook_name' AS core_v2;
\echo '== W14, W17 every rulebook change left who, when and a snapshot of all rulebooks'
SELECT i ->> 'update_user' AS who, i ->> 'update_time' AS at, jsonb_array_length(i -> 'rulebooks') AS rulebooks
FROM underwriting.rulebook_updates('prod') i;
\echo '== W18 an expired temporary profile is never read, deleted or not'
SELECT underwriting.put_temporary_profile('prod', 'user-12345', now() - interval '1 hour', '{"is_float_enabled": true}', 'expired promo');
SELECT count(*) AS readable_temporary_profiles FROM underwriting.all_temporary_profiles('prod', 'user-12345');
\echo '== amounts are integer cents, whatever the path'
\set ON_ERROR_STOP 0
SELECT underwriting.put_float_profile('prod', 'user-12345', '{"floats": [{"id": "1", "amount": 10.5, "is_enabled": true}]}');
\set ON_ERROR_STOP 1
