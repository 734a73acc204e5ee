#!/usr/bin/env bash
# Nothing lost across pg_dump/pg_restore, and DROP EXTENSION refuses while
# DynamoDB tables hold items.  Runs against the cluster of tools/test.sh
# (PGHOST/PGPORT/PGUSER set); prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir dump-restore

fresh_db ddb_dump_src ddb_dump_dst
q -d ddb_dump_src >/dev/null <<'SQL'
CREATE EXTENSION ddb_model;
SELECT ddb.create_table('Plain', 'pk', 'S', 'sk', 'N', schema_name => 'app');
SELECT ddb.create_index('Plain', 'ByOwner', 'owner', 'S', 'sk', 'N');
SELECT ddb.create_table('Sharded', 'pk', 'B', schema_name => 'app', partitions => 4);
SELECT ddb.create_index('Sharded', 'ByTag', 'tag', 'S', projection_type => 'KEYS_ONLY');
-- a multi-attribute key (tuple keys, hash-partitioned like the table)
SELECT ddb.create_index('Sharded', 'ByTagKindDay', 'tag', 'S', 'day', 'N',
                        extra_hash_keys => ARRAY['kind'], extra_hash_key_types => ARRAY['S'],
                        extra_range_keys => ARRAY['blob'], extra_range_key_types => ARRAY['B']);
SELECT ddb.update_time_to_live('Plain', 'ttl');
SELECT ddb.execute('UpdateTable', '{"TableName": "Plain", "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"}}');
SELECT ddb.put_item('Plain', jsonb_build_object('pk', 'U' || (i % 50), 'sk', i, 'owner', 'o' || (i % 7),
                    'ttl', extract(epoch FROM now())::bigint + 3600, 'tags', '{"$SS": ["a", "b"]}'::jsonb,
                    'blob', '{"$B": "AAEC"}'::jsonb, 'n', i / 3.0))
FROM generate_series(1, 500) i;
SELECT ddb.put_item('Sharded', jsonb_build_object('pk', jsonb_build_object('$B', encode(int4send(i), 'base64')),
                    'tag', 't' || (i % 3), 'kind', 'k,)' || (i % 2), 'day', i % 10,
                    'blob', jsonb_build_object('$B', encode(int4send(i % 4), 'base64'))))
FROM generate_series(1, 300) i;
-- point-in-time recovery: the items as first versions, then a change and a delete
SELECT ddb.set_continuous_backups('Plain', true);
SELECT ddb.put_item('Plain', '{"pk": "U1", "sk": 1, "owner": "o1", "changed": true}');
SELECT ddb.delete_item('Plain', 'U2', 2);
-- a model's table (a member of the extension): its items are dumped, its GSI rebuilt
SELECT user_service.create_user('Ann@Example.com', 'Ann', 'Lee', user_id => '00000000-0000-4000-8000-000000000001');
SELECT user_service.add_email('00000000-0000-4000-8000-000000000001', 'ann.work@example.com');
SELECT mailshot.load_example_data();
SQL
fingerprint() {  # a digest of every item and GSI entry of a database
    q -d "$1" -c "SELECT md5(string_agg(t, ',' ORDER BY t)) FROM (
        SELECT 'P' || pk::text || sk::text || item::text || coalesce(expires_at, 0) AS t FROM app.\"Plain\"
        UNION ALL SELECT 'G' || gpk::text || gsk::text || pk::text || sk::text || item::text FROM app.\"Plain:ByOwner\"
        UNION ALL SELECT 'S' || encode(pk::bytea, 'hex') || item::text FROM app.\"Sharded\"
        UNION ALL SELECT 'T' || gpk::text || encode(pk::bytea, 'hex') || item::text FROM app.\"Sharded:ByTag\"
        UNION ALL SELECT 'K' || format('%s %s ', gpk, gsk) || encode(pk::bytea, 'hex') || item::text
                  FROM app.\"Sharded:ByTagKindDay\"
        UNION ALL SELECT 'U' || pk::text || sk::text || item::text FROM user_service.\"UserServiceTable\"
        UNION ALL SELECT 'V' || gpk::text || gsk::text || pk::text || sk::text || item::text
                  FROM user_service.\"UserServiceTable:GSI1\"
        UNION ALL SELECT 'M' || pk::text || sk::text || item::text || coalesce(expires_at, 0) FROM mailshot.\"MailshotTable\"
        UNION ALL SELECT 'E' || pk::text || sk::text || item::text || expires_at FROM mailshot.\"MailshotEventsTable\"
        UNION ALL SELECT 'I' || gpk::text || gsk::text || pk::text || sk::text || item::text || expires_at
                  FROM mailshot.\"MailshotEventsTable:TemplateIndex\") x"
}
before=$(fingerprint ddb_dump_src)

pg_dump -Fc -d ddb_dump_src -f "$WORK/src.dump"
pg_restore -d ddb_dump_dst "$WORK/src.dump" 2>"$WORK/restore.log"
check "pg_restore without errors" "" "$(grep -v '^$' "$WORK/restore.log" | head -3)"
check "every item and GSI entry restored" "$before" "$(fingerprint ddb_dump_dst)"
history() {  # the versions of Plain's point-in-time recovery history
    q -d "$1" -c "SELECT count(*) || ' ' || md5(string_agg(concat_ws(' ', pk, sk, changed_at, change_order, item), ',' ORDER BY pk, sk, changed_at, change_order))
                  FROM app.\"Plain\$pitr\""
}
check "a table's point-in-time recovery history is restored" "$(history ddb_dump_src)" "$(history ddb_dump_dst)"
q -d ddb_dump_dst -c "SELECT ddb.put_item('Plain', '{\"pk\": \"new\", \"sk\": 1}')" >/dev/null
check "and its setting and trigger: the next change is a version" "ENABLED 1" \
    "$(q -d ddb_dump_dst -c "SELECT (ddb.execute('DescribeContinuousBackups', '{\"TableName\": \"Plain\"}')
                                    #>> '{ContinuousBackupsDescription,PointInTimeRecoveryDescription,PointInTimeRecoveryStatus}')
                                || ' ' || (SELECT count(*) FROM app.\"Plain\$pitr\" WHERE pk = 'new')")"
check "a table's stream is restored: its setting, and a trigger that records the next change (not the restored items)" "KEYS_ONLY 1" \
    "$(q -d ddb_dump_dst -c "SELECT (ddb.execute('DescribeTable', '{\"TableName\": \"Plain\"}') -> 'Table' -> 'StreamSpecification' ->> 'StreamViewType')
                                || ' ' || (SELECT count(*) FROM ddb.stream_records WHERE table_name = 'Plain')")"
catalog() {  # the catalog rows of a database
    q -d "$1" -c "SELECT string_agg(table_name || coalesce('/' || model, ''), ' ' ORDER BY table_name) || ' '
                         || (SELECT string_agg(table_name || '.' || index_name, ' ' ORDER BY table_name, index_name) FROM ddb.indexes)
                  FROM ddb.tables"
}
check "catalog restored, model tables once" "$(catalog ddb_dump_src)" "$(catalog ddb_dump_dst)"
check "restored GSIs consistent" "0" "$(q -d ddb_dump_dst -c "SELECT (SELECT count(*) FROM ddb.verify_gsi('Plain'))
    + (SELECT count(*) FROM ddb.verify_gsi('Sharded')) + (SELECT count(*) FROM ddb.verify_gsi('UserServiceTable'))
    + (SELECT count(*) FROM ddb.verify_gsi('MailshotEventsTable'))")"
# the restored database keeps working: writes reach the GSIs, reads see them
q -d ddb_dump_dst -c "SELECT ddb.put_item('Plain', '{\"pk\": \"new\", \"sk\": 1, \"owner\": \"o99\"}')" >/dev/null
check "restored table takes writes" "1" "$(q -d ddb_dump_dst -c "SELECT count(*) FROM ddb.query('Plain', 'o99', index_name => 'ByOwner')")"

# DROP EXTENSION refuses, with or without CASCADE, while user tables exist
# or a model's table holds items.
out=$(psql -X -q -d ddb_dump_dst -c "DROP EXTENSION ddb_model CASCADE" 2>&1)
check "DROP EXTENSION CASCADE refused" "yes" "$(echo "$out" | grep -q 'cannot drop extension ddb_model while it holds 5 DynamoDB tables' && echo yes)"
check "items survive the refused DROP" "500" "$(q -d ddb_dump_dst -c 'SELECT count(*) FROM app."Plain"')"
q -d ddb_dump_dst -c "SELECT ddb.delete_table('Plain'), ddb.delete_table('Sharded')" >/dev/null
out=$(psql -X -q -d ddb_dump_dst -c "DROP EXTENSION ddb_model" 2>&1)
check "DROP EXTENSION refused while a model table holds items" "yes" "$(echo "$out" | grep -q 'holds 3 DynamoDB tables' && echo yes)"
out=$(psql -X -q -d ddb_dump_dst -c "SELECT ddb.delete_table('UserServiceTable')" 2>&1)
check "a model table cannot be deleted" "yes" "$(echo "$out" | grep -q 'belongs to the user_service model' && echo yes)"
q -d ddb_dump_dst -c "SELECT count(ddb.delete_item('UserServiceTable', pk, sk)) FROM user_service.\"UserServiceTable\"" \
    -c "SELECT count(ddb.delete_item('MailshotTable', pk, sk)) FROM mailshot.\"MailshotTable\"" \
    -c "SELECT count(ddb.delete_item('MailshotEventsTable', pk, sk)) FROM mailshot.\"MailshotEventsTable\"" >/dev/null
check "DROP EXTENSION once no table holds items" "ok" "$(q -d ddb_dump_dst -c 'DROP EXTENSION ddb_model' >/dev/null 2>&1 && echo ok)"

drop_db ddb_dump_src ddb_dump_dst
done_testing
