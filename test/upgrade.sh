#!/usr/bin/env bash
# The upgrade from 0.1: ALTER EXTENSION ddb_model UPDATE brings an installed
# 0.1 (sql/ddb_model--0.1.sql) to exactly what CREATE EXTENSION installs now,
# and what was written under 0.1 stays readable and writable.  Runs against
# the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set); prints
# "<check> ... ok|FAILED" per check.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK="$ROOT/build/upgrade"
rm -rf "$WORK" && mkdir -p "$WORK"
status=0
VERSION=$(sed -n "s/^default_version = '\\(.*\\)'/\\1/p" "$ROOT/ddb_model.control")

q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
check() {  # name, expected, actual
    if [ "$2" = "$3" ]; then echo "$1 ... ok"; else echo "$1 ... FAILED (expected $2, got $3)"; status=1; fi
}

DATABASES="ddb_upgrade_updated ddb_upgrade_fresh ddb_upgrade_data"
for db in $DATABASES; do
    q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
done
q -d ddb_upgrade_updated -c "CREATE EXTENSION ddb_model VERSION '0.1'" -c "ALTER EXTENSION ddb_model UPDATE"
q -d ddb_upgrade_fresh -c "CREATE EXTENSION ddb_model"
check "ALTER EXTENSION ddb_model UPDATE from 0.1 reaches the current version" "$VERSION" \
    "$(q -d ddb_upgrade_updated -c "SELECT extversion FROM pg_extension WHERE extname = 'ddb_model'")"

# Everything the extension installs, without OIDs: pg_dump --binary-upgrade
# dumps each member object on its own (functions with volatility, strictness,
# search_path, SECURITY DEFINER; types, casts, operators and their classes and
# families, tables with columns, defaults, constraints, indexes and triggers,
# views, event triggers, comments, ACLs and initial privileges); dropped here
# are its lines that differ between any two databases: those that set OIDs,
# relfrozenxid and the \restrict key.  Then the extension's own row (its
# config-dump tables by name, not OID, in name order: an upgrade appends the
# ones it adds), its member list, and the rows the install writes
# (timestamptz columns aside: they say when it ran; ddb.server_secret
# aside: it is random).
describe() {  # database
    pg_dump --schema-only --binary-upgrade -d "$1" \
        | grep -v -e 'binary_upgrade_set_next_' -e 'binary_upgrade_create_empty_extension' -e '^\\\(un\)\?restrict ' \
        | sed -e '/^UPDATE pg_catalog.pg_class$/,/;$/d' || return 1
    q -d "$1" <<'SQL'
SELECT 'extension ' || extname || ' owner ' || extowner::regrole || ' schema ' || extnamespace::regnamespace
       || ' relocatable ' || extrelocatable || ' version ' || extversion
       || ' config ' || coalesce((SELECT string_agg(c::regclass::text || ' ' || coalesce(quote_literal(w), 'NULL'), ', ' ORDER BY c::regclass::text)
                                  FROM unnest(extconfig, extcondition) WITH ORDINALITY AS u(c, w, n)), '')
FROM pg_extension WHERE extname = 'ddb_model';
SELECT 'member ' || pg_describe_object(classid, objid, objsubid)
FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'ddb_model')
ORDER BY 1;
SELECT 'ddb.tables ' || (to_jsonb(t) - 'created_at')::text FROM ddb.tables t ORDER BY table_name;
SELECT 'ddb.indexes ' || (to_jsonb(i) - 'created_at')::text FROM ddb.indexes i ORDER BY table_name, index_name;
-- every member table's rows: a count and a digest each
SELECT format('SELECT %L || '' '' || count(*) || '' '' || coalesce(md5(string_agg(r::text, E''\n'' ORDER BY r::text)), '''') '
              'FROM (SELECT to_jsonb(x) - %L::text[] AS r FROM %s x) s',
              'rows of ' || c.oid::regclass::text,
              ARRAY(SELECT attname::text FROM pg_attribute
                    WHERE attrelid = c.oid AND attnum > 0 AND atttypid = 'timestamptz'::regtype),
              c.oid::regclass)
FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'ddb_model')
  AND c.relkind IN ('r', 'p') AND c.oid <> 'ddb.server_secret'::regclass
ORDER BY c.oid::regclass::text \gexec
SQL
}
for kind in updated fresh; do
    describe "ddb_upgrade_$kind" >"$WORK/$kind.txt" 2>"$WORK/$kind.err" \
        || echo "describing ddb_upgrade_$kind failed" >>"$WORK/$kind.err"
done
check "both databases described without an error" "" "$(cat "$WORK/updated.err" "$WORK/fresh.err" | head -3)"
if diff -u "$WORK/fresh.txt" "$WORK/updated.txt" >"$WORK/diff.txt"; then
    check "0.1 updated is what a fresh install is ($(grep -c '^member ' "$WORK/fresh.txt") member objects, $(wc -l <"$WORK/fresh.txt") lines of description)" same same
else
    check "0.1 updated is what a fresh install is" "the same description" "a difference (fresh: -, updated: +)"
    head -100 "$WORK/diff.txt"
fi

# What was written under 0.1 (a model's user, a table with a GSI and items)
# reads and writes after the update.
q -d ddb_upgrade_data >/dev/null <<'SQL'
CREATE EXTENSION ddb_model VERSION '0.1';
SELECT user_service.create_user('Ann@Example.com', 'Ann', 'Lee', user_id => '00000000-0000-4000-8000-000000000001');
SELECT ddb.create_table('Orders', 'pk', 'S', 'sk', 'N', schema_name => 'app');
SELECT ddb.create_index('Orders', 'ByStatus', 'status', 'S', 'sk', 'N');
SELECT ddb.update_time_to_live('Orders', 'ttl');
SELECT ddb.put_item('Orders', '{"pk": "C#1", "sk": 1, "status": "open", "total": 10}');
SELECT ddb.put_item('Orders', jsonb_build_object('pk', 'C#1', 'sk', 2, 'status', 'open', 'total', 20,
                                                 'ttl', extract(epoch FROM now())::bigint - 60));
ALTER EXTENSION ddb_model UPDATE;
SQL
check "a 0.1 database updated" "$VERSION" "$(q -d ddb_upgrade_data -c "SELECT extversion FROM pg_extension WHERE extname = 'ddb_model'")"
check "a user written under 0.1 reads, also through its GSI" "Ann 00000000-0000-4000-8000-000000000001" \
    "$(q -d ddb_upgrade_data -c "SELECT (user_service.get_user('00000000-0000-4000-8000-000000000001')).first_name
                                        || ' ' || user_service.find_user_by_email('ann@example.com')")"
check "items written under 0.1 read by key, by GSI and by DynamoDB JSON (the expired one hidden)" "10 1 10" \
    "$(q -d ddb_upgrade_data -c "SELECT (ddb.get_item('Orders', 'C#1', 1) ->> 'total') || ' '
                                        || (SELECT count(*) FROM ddb.query('Orders', 'open', index_name => 'ByStatus')) || ' '
                                        || (ddb.execute('GetItem', '{\"TableName\": \"Orders\", \"Key\": {\"pk\": {\"S\": \"C#1\"}, \"sk\": {\"N\": \"1\"}}}')
                                            -> 'Item' -> 'total' ->> 'N')")"
q -d ddb_upgrade_data >/dev/null <<'SQL'
SELECT user_service.add_email('00000000-0000-4000-8000-000000000001', 'ann.work@example.com');
SELECT ddb.update_item('Orders', 'C#1', 1, 'SET #s = :s', names => '{"#s": "status"}', vals => '{":s": "shipped"}');
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "C#2"}, "sk": {"N": "3"}, "status": {"S": "open"}}}');
SQL
check "writes after the update reach the table and its GSIs" "2 1 1 0 0" \
    "$(q -d ddb_upgrade_data -c "SELECT (SELECT count(*) FROM user_service.list_emails('00000000-0000-4000-8000-000000000001')) || ' '
                                        || (SELECT count(*) FROM ddb.query('Orders', 'shipped', index_name => 'ByStatus')) || ' '
                                        || (SELECT count(*) FROM ddb.query('Orders', 'open', index_name => 'ByStatus')) || ' '
                                        || (SELECT count(*) FROM ddb.verify_gsi('Orders')) || ' '
                                        || (SELECT count(*) FROM ddb.verify_gsi('UserServiceTable'))")"
check "DescribeTable and DescribeTimeToLive after the update" "3 ttl" \
    "$(q -d ddb_upgrade_data -c "SELECT (ddb.execute('DescribeTable', '{\"TableName\": \"Orders\"}') -> 'Table' ->> 'ItemCount') || ' '
                                        || (ddb.execute('DescribeTimeToLive', '{\"TableName\": \"Orders\"}') -> 'TimeToLiveDescription' ->> 'AttributeName')")"
check "the TTL sweep deletes the item that expired under 0.1" "1" "$(q -d ddb_upgrade_data -c "SELECT ddb.expire('Orders')")"
q -d ddb_upgrade_data -c "SELECT ddb.execute('DeleteTable', '{\"TableName\": \"Orders\"}')" >/dev/null
check "DeleteTable after the update drops the table and its GSI" "0 0" \
    "$(q -d ddb_upgrade_data -c "SELECT (SELECT count(*) FROM ddb.tables WHERE table_name = 'Orders') || ' '
                                        || (SELECT count(*) FROM pg_class WHERE relnamespace = 'app'::regnamespace)")"
out=$(psql -X -q -d ddb_upgrade_data -c "SELECT ddb.execute('DescribeTable', '{\"TableName\": \"Orders\"}')" 2>&1)
check "a deleted table is not found, with DynamoDB's message" "yes" \
    "$(echo "$out" | grep -q 'ERROR:  Requested resource not found: Table: Orders not found' && echo yes)"

for db in $DATABASES; do
    q -d postgres -c "DROP DATABASE IF EXISTS $db"
done
exit $status
