-- The demo of the uds model (docs/models/uds.md): example data, then every
-- access pattern D1-D7.
\pset footer off
\set SHOW_CONTEXT never
\echo
\echo '==== uds: calculated behaviour, apps, JSON and blob app data with quotas'
SELECT uds.load_example_data() AS user_id;
\echo '== D1 calculated behaviour of u-100'
SELECT * FROM uds.cb_list('u-100');
\echo '== D2 created content (app data of the reserved app hmh)'
SELECT uds.content_get('u-100', 'note-1') AS note;
\echo '== D3 app data: a JSON value and a blob'
SELECT uds.json_get('reader', 'u-100', 'settings') AS settings, uds.blob_get('reader', 'u-100', 'avatar.png') AS avatar;
\echo '== D4 quota of u-100 in reader: both tables, DynamoDB item sizes, 1 MB pages'
SELECT * FROM uds.quota_pages('reader', 'u-100');
SELECT uds.quota_used('reader', 'u-100') AS bytes_used;
\echo '== D5 users storing data for reader; D6 apps u-100 stores data in (keys only, paginated)'
SELECT * FROM uds.app_users('reader');
SELECT * FROM uds.user_apps('u-100');
\echo '== D7 usage kept on every write; a write over the quota is refused; reconciliation finds no drift'
SELECT * FROM uds.usage ORDER BY app, user_id;
\set ON_ERROR_STOP 0
SELECT uds.json_put('reader', 'u-100', 'big', to_jsonb(repeat('x', 5000)));
\set ON_ERROR_STOP 1
SELECT count(*) AS drifted FROM uds.reconcile();
