-- The demo of the user_service model (docs/models/user_service.md): the
-- seed's example user, then every access pattern S1-S10.
\pset footer off
\set SHOW_CONTEXT never
\echo
\echo '==== user_service: UserServiceTable and GSI1, the seed''s example user'
SELECT user_service.load_example_data() AS user_id;

\echo '== S1 GetItem the profile'
SELECT user_id, email, first_name, last_name, phone, status, version
FROM user_service.get_user('abc12300-0000-4000-8000-000000000123');
\echo '== S2 Query the user''s emails (SK begins_with EMAIL#)'
SELECT email, is_primary, is_verified FROM user_service.list_emails('abc12300-0000-4000-8000-000000000123');
\echo '== S3 login lookup on GSI1 (the address is normalised first, S6)'
SELECT user_service.find_user_by_email('  Jane.Doe@EXAMPLE.com ') AS user_id;
\echo '== S4 uniqueness check on GSI1, Limit 1'
SELECT user_service.email_in_use('jane@work.example.com') AS taken, user_service.email_in_use('new@example.com') AS free;
\echo '== S5 the whole user in one Query on PK'
SELECT i ->> 'SK' AS sk, i ->> 'email' AS email FROM user_service.get_user_items('abc12300-0000-4000-8000-000000000123') i;
\echo '== S6 normalisation: lower-case and trim; Gmail folding only with user_service.fold_gmail = on'
SELECT user_service.normalize_email('  Jane.Doe+News@GMail.com ') AS default_rule;

\echo '== S7 an address belongs to one user: a second claim is refused'
SELECT user_service.create_user('bo@example.com', 'Bo', 'Ng', user_id => 'b0000000-0000-4000-8000-000000000002') AS bo;
\set ON_ERROR_STOP 0
SELECT user_service.add_email('b0000000-0000-4000-8000-000000000002', 'JANE.DOE@example.com');
\set ON_ERROR_STOP 1

\echo '== S8 make the work address primary: the seed''s three-update transaction'
SELECT user_service.set_primary_email('abc12300-0000-4000-8000-000000000123', 'e0000000-0000-4000-8000-000000000002');
SELECT email, is_primary FROM user_service.list_emails('abc12300-0000-4000-8000-000000000123');
\echo '   deleting the primary is refused, whatever path tries it'
\set ON_ERROR_STOP 0
SELECT ddb.execute('DeleteItem', '{"TableName": "UserServiceTable",
  "Key": {"PK": {"S": "USER#abc12300-0000-4000-8000-000000000123"}, "SK": {"S": "EMAIL#e0000000-0000-4000-8000-000000000002"}}}');
\set ON_ERROR_STOP 1

\echo '== S9 optimistic locking: version 1 -> 2, then a stale update fails'
SELECT user_service.update_profile('abc12300-0000-4000-8000-000000000123', 1, first_name => 'Janet') AS new_version;
\set ON_ERROR_STOP 0
SELECT user_service.update_profile('abc12300-0000-4000-8000-000000000123', 1, first_name => 'Jo');
\set ON_ERROR_STOP 1
\echo '== S10 GSI1 holds the email records only (sparse)'
SELECT gpk::text AS gsi1pk, gsk::text AS gsi1sk FROM user_service."UserServiceTable:GSI1" ORDER BY 1;
\echo '== the typed views'
SELECT user_id, email, first_name, version FROM user_service.users ORDER BY email;
