#!/usr/bin/env bash
# The upgrade from 0.1: ALTER EXTENSION ddb_model UPDATE brings an installed
# 0.1 (sql/ddb_model--0.1.sql) to exactly what CREATE EXTENSION installs now,
# and what was written under 0.1 stays readable and writable.  Runs against
# the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set); prints TAP
# (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir upgrade
VERSION=$(sed -n "s/^default_version = '\\(.*\\)'/\\1/p" "$ROOT/ddb_model.control")

DATABASES="ddb_upgrade_updated ddb_upgrade_fresh ddb_upgrade_data"
fresh_db $DATABASES
q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS ddb_upgrade_reader"
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

# Each upgrade script is a delta (CONTRIBUTING.md): it defines a function
# (a signature: its name and argument types) at most once, and drops or
# alters (a function at all, a table's columns or constraints) no
# function, table, view, type, sequence, schema, index, trigger or policy
# that it created itself.
check "the upgrade scripts define each function once, and drop or alter nothing they create" "" \
    "$(/usr/bin/python3 - "$ROOT"/sql/ddb_model--*--*.sql <<'PY'
import re, sys
aliases = {'int': 'integer', 'int4': 'integer', 'int8': 'bigint', 'bool': 'boolean',
           'float8': 'double precision', 'timestamptz': 'timestamp with time zone'}
def types(args):  # "a text, OUT b int, c int DEFAULT 1" -> "text,integer"
    out = []
    for a in re.split(r',(?![^(]*\))', args):
        a = re.split(r'\s+DEFAULT\s|=', ' '.join(a.split()), flags=re.I)[0].strip().lower()
        mode = re.match(r'(in|out|inout|variadic)\s+', a)
        if not a or mode and mode.group(1) == 'out': continue
        a = a[mode.end():] if mode else a
        if ' ' in a and not re.match(r'double precision|timestamp|character varying', a): a = a.split(' ', 1)[1]
        out.append(aliases.get(a.rstrip('[]'), a.rstrip('[]')) + a[len(a.rstrip('[]')):])
    return ','.join(out)
problems = []
for path in sys.argv[1:]:
    text, created = re.sub(r'--[^\n]*', '', open(path).read()), set()
    for m in re.finditer(r'(?m)^(CREATE|DROP|ALTER)\s+(?:OR\s+REPLACE\s+|CONSTRAINT\s+|UNIQUE\s+)?'
                         r'(FUNCTION|TABLE|VIEW|TYPE|SEQUENCE|SCHEMA|INDEX|TRIGGER|POLICY)\s+(?:IF\s+EXISTS\s+)?', text):
        verb, kind, rest = m.group(1), m.group(2), text[m.end():text.find(';', m.end())]
        objects, i = [], 0
        if kind == 'FUNCTION':  # DROP FUNCTION may name several
            while f := re.compile(r'([\w."]+)\s*\(').match(rest, i):
                depth, i = 1, f.end()
                while depth: depth += {'(': 1, ')': -1}.get(rest[i], 0); i += 1
                objects.append(f.group(1) + '(' + types(rest[f.end():i - 1]) + ')')
                if verb != 'DROP' or not (comma := re.match(r'\s*,\s*', rest[i:])): break
                i += comma.end()
        elif kind in ('TRIGGER', 'POLICY'):
            objects = [' ON '.join(re.match(r'([\w"]+).*?\sON\s+([\w."]+)', rest, re.S).groups())]
        else:
            objects = [re.match(r'[\w."]+', rest).group(0)]
        for o in objects:
            key, name = kind + ' ' + o, path.split('/')[-1]
            if verb == 'CREATE' and kind == 'FUNCTION' and key in created:
                problems.append(f'{name}: {key} defined again')
            elif verb == 'DROP' and key in created:
                problems.append(f'{name}: {key} created, then dropped')
            elif verb == 'ALTER' and key in created and (kind == 'FUNCTION' or re.match(r'\s*(ADD|DROP|ALTER|RENAME)\b', rest[len(o):])):
                problems.append(f'{name}: {key} created, then altered')
            if verb == 'CREATE': created.add(key)
            if verb == 'DROP': created.discard(key)
print('; '.join(problems))
PY
)"

# What was written under 0.1 reads and writes after the update: every
# feature 0.1 had, written through 0.1's own functions and ddb.execute's
# operations only (until the ALTER EXTENSION), then read back and written
# through again.  The five models; a table with a GSI and TTL; a
# hash-partitioned table with a GSI; a table with a local secondary index,
# a NEW_AND_OLD_IMAGES stream and provisioned throughput (UpdateTable); a
# TransactWriteItems under a ClientRequestToken; a PartiQL INSERT; tags;
# 0.1's access keys (limited to a table, for every table, revoked); a
# ddb.ddb_key column of a user's own table with btree, hash and GiST
# indexes.
#
# 0.1 here is 0.1's SQL on this build's library, unless UPGRADE_LIBRARY_01
# names a ddb_model.so built from release 0.1, as a real 0.1 installation
# wrote its data with it (mkdir /tmp/v01 && git archive <the commit that
# froze sql/ddb_model--0.1.sql> | tar -x -C /tmp/v01 && make -C /tmp/v01,
# then UPGRADE_LIBRARY_01=/tmp/v01/ddb_model.so): it is installed beside
# this build's library as ddb_model_01.so, and 0.1's functions call it
# until the update (new sessions then load this build's, as after a
# package upgrade).
D=ddb_upgrade_data
LIBRARY_01=${UPGRADE_LIBRARY_01:-}
INSTALLED_01="$(pg_config --pkglibdir)/ddb_model_01.so"
qd() { q -d "$D" -c "$1"; }
sqlstate() {  # SQL: the SQLSTATE it raises in $D, or nothing
    psql -X -q -At -d "$D" -c "DO \$\$ BEGIN $1; EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'sqlstate %', SQLSTATE; END \$\$" 2>&1 \
        | grep -o 'sqlstate .*' | cut -d' ' -f2
}
# one transaction, and another request under its ClientRequestToken
TX='{"ClientRequestToken": "upgrade-token-1", "TransactItems": [
  {"Put": {"TableName": "Parts", "Item": {"pk": {"S": "tx"}, "owner": {"S": "o9"}}}},
  {"Update": {"TableName": "Parts", "Key": {"pk": {"S": "p1"}}, "UpdateExpression": "ADD hits :one",
              "ExpressionAttributeValues": {":one": {"N": "1"}}}}]}'
TX_OTHER=${TX//'"N": "1"'/'"N": "2"'}
q -d "$D" -c "CREATE EXTENSION ddb_model VERSION '0.1'"
if [ -n "$LIBRARY_01" ]; then
    cp "$LIBRARY_01" "$INSTALLED_01" || exit 1
    check "0.1's functions call 0.1's library" "t" \
        "$(qd "UPDATE pg_proc SET probin = '\$libdir/ddb_model_01' WHERE probin = '\$libdir/ddb_model' RETURNING true" | sort -u)"
fi
q -d "$D" -v tx="$TX" >/dev/null <<'SQL'
SELECT user_service.create_user('Ann@Example.com', 'Ann', 'Lee', user_id => '00000000-0000-4000-8000-000000000001');
SELECT ddb.create_table('Orders', 'pk', 'S', 'sk', 'N', schema_name => 'app');
SELECT ddb.create_index('Orders', 'ByStatus', 'status', 'S', 'sk', 'N');
SELECT ddb.update_time_to_live('Orders', 'ttl');
SELECT ddb.put_item('Orders', '{"pk": "C#1", "sk": 1, "status": "open", "total": 10}');
SELECT ddb.put_item('Orders', jsonb_build_object('pk', 'C#1', 'sk', 2, 'status', 'open', 'total', 20,
                                                 'ttl', extract(epoch FROM now())::bigint - 60));
-- the four other models
SELECT mailshot.upsert_subscriber('Sam@Example.com', 'Sam', '{"country": "ZA"}');
SELECT mailshot.record_send('sam@example.com', 'onboarding/welcome', 'Welcome!', 'onboarding', now() - interval '2 hours');
SELECT mailshot.record_event('sam@example.com', 'open', 'onboarding/welcome', 'onboarding', 'Welcome!', now() - interval '1 hour');
SELECT uds.register_app('reader', quota_bytes => 4096);
SELECT uds.json_put('reader', 'u-1', 'settings', '{"theme": "dark"}');
SELECT uds.cb_put('u-1', 'streak.days', '12');
SELECT underwriting.create_environment('prod');
SELECT underwriting.put_float_profile('prod', 'user-1', '{"is_float_enabled": true,
    "floats": [{"id": "1", "amount": 1000, "is_enabled": true}]}', 'Initial profile', NULL, now() - interval '1 day');
SELECT underwriting.put_rulebook('prod', '{"rulebook_id": "core_v1", "rulebook_name": "Core v1", "type": "floats",
    "rules": [], "apply_to": 10000, "priority": 100, "superseding": false}', 'admin@example.com');
SELECT uniflow.identify('user_1', '{"plan": "free"}', 'anon-1', now() - interval '1 hour');
SELECT uniflow.track('user_1', 'Signed Up', '{"plan": "free"}', now() - interval '1 hour', 'msg-1');
-- a table hash-partitioned by partition key, with a GSI
SELECT ddb.create_table('Parts', 'pk', partitions => 4);
SELECT ddb.create_index('Parts', 'ByOwner', 'owner');
SELECT ddb.put_item('Parts', jsonb_build_object('pk', 'p' || i, 'owner', 'o' || (i % 4), 'n', i)) FROM generate_series(1, 40) i;
-- a transaction under a ClientRequestToken, a PartiQL INSERT, tags
SELECT ddb.execute('TransactWriteItems', :'tx');
SELECT ddb.execute('ExecuteStatement', $${"Statement": "INSERT INTO \"Parts\" VALUE {'pk': 'pq', 'owner': 'o7', 'n': 1}"}$$);
SELECT ddb.execute('TagResource', '{"ResourceArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Parts",
                                    "Tags": [{"Key": "team", "Value": "core"}, {"Key": "env", "Value": "test"}]}');
-- a table with a local secondary index, a stream of both images and
-- provisioned throughput, raised by UpdateTable
SELECT ddb.execute('CreateTable', '{"TableName": "Feed", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
                           {"AttributeName": "posted", "AttributeType": "N"}],
  "LocalSecondaryIndexes": [{"IndexName": "ByPosted",
     "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "posted", "KeyType": "RANGE"}],
     "Projection": {"ProjectionType": "ALL"}}],
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}}');
SELECT ddb.execute('UpdateTable', '{"TableName": "Feed", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 4}}');
SELECT ddb.execute('PutItem', '{"TableName": "Feed", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "posted": {"N": "30"}, "v": {"S": "one"}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Feed", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "UpdateExpression": "SET v = :v", "ExpressionAttributeValues": {":v": {"S": "two"}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Feed", "Item": {"pk": {"S": "a"}, "sk": {"N": "2"}, "posted": {"N": "10"}, "v": {"S": "x"}}}');
-- a ddb.ddb_key column of a user's own table (not the extension's): strings,
-- numbers, binaries and segment keys, under btree, hash and GiST indexes
CREATE TABLE public.key_notes (k ddb.ddb_key PRIMARY KEY, h ddb.ddb_key NOT NULL, g ddb.ddb_key NOT NULL);
INSERT INTO public.key_notes
SELECT x, x, x FROM (SELECT ('USER#' || i)::ddb.ddb_key FROM generate_series(1, 300) i
                     UNION ALL SELECT ('ORDER#' || i)::ddb.ddb_key FROM generate_series(1, 300) i
                     UNION ALL SELECT (i * 0.5)::ddb.ddb_key FROM generate_series(-100, 100) i
                     UNION ALL SELECT decode(lpad(to_hex(i), 4, '0'), 'hex')::ddb.ddb_key FROM generate_series(0, 99) i
                     UNION ALL SELECT ddb.key('TENANT', i::text, 'DOC') FROM generate_series(1, 50) i) s(x);
CREATE INDEX key_notes_h ON public.key_notes USING hash (h);
CREATE INDEX key_notes_g ON public.key_notes USING gist (g);
ANALYZE public.key_notes;
SQL
# 0.1's access keys: one limited to a table, one for every table, one revoked
LIMITED=$(qd "SELECT access_key_id FROM ddb.create_access_key(ARRAY['Parts'])")
EVERY=$(qd "SELECT access_key_id FROM ddb.create_access_key()")
REVOKED=$(qd "SELECT access_key_id FROM ddb.create_access_key(ARRAY['Feed'])")
qd "SELECT ddb.revoke_access_key('$REVOKED')" >/dev/null
LIMITED_ROLE=ddb_key_${LIMITED,,}
KEYS_SQL="SELECT string_agg(access_key_id || ' ' || md5(secret_access_key) || ' ' || (revoked_at IS NOT NULL), ', ' ORDER BY access_key_id)
          FROM ddb.access_keys"
KEYS_01=$(qd "$KEYS_SQL")
# what 0.1 says, to compare with after the update
STREAM_ARN_01=$(qd "SELECT ddb.execute('DescribeTable', '{\"TableName\": \"Feed\"}') -> 'Table' ->> 'LatestStreamArn'")
SHARD_01=$(qd "SELECT ddb.execute('DescribeStream', jsonb_build_object('StreamArn', '$STREAM_ARN_01'))
                      -> 'StreamDescription' -> 'Shards' -> 0 ->> 'ShardId'")
RECORDS_SQL="SELECT string_agg(r ->> 'eventName' || ' ' || (r -> 'dynamodb' -> 'Keys' -> 'sk' ->> 'N') || ' '
                               || coalesce(r -> 'dynamodb' -> 'OldImage' -> 'v' ->> 'S', '-') || '>'
                               || coalesce(r -> 'dynamodb' -> 'NewImage' -> 'v' ->> 'S', '-'), ', ' ORDER BY n)
                     || ' ' || bool_and(seq > prev) || ' ' || string_agg(seq::text, ',' ORDER BY n)
              FROM (SELECT r, n, (r -> 'dynamodb' ->> 'SequenceNumber')::numeric AS seq,
                           lag((r -> 'dynamodb' ->> 'SequenceNumber')::numeric, 1, 0) OVER (ORDER BY n) AS prev
                    FROM jsonb_array_elements(ddb.execute('GetRecords', jsonb_build_object('ShardIterator',
                             ddb.execute('GetShardIterator', jsonb_build_object('StreamArn', '$STREAM_ARN_01',
                                         'ShardId', '$SHARD_01', 'ShardIteratorType', 'TRIM_HORIZON')) ->> 'ShardIterator'))
                                              -> 'Records') WITH ORDINALITY AS e(r, n)) s"
RECORDS_01=$(qd "$RECORDS_SQL")
KEY_ORDER_SQL="SELECT md5(string_agg(format('%s', k), ',' ORDER BY k)) FROM public.key_notes"
KEY_ORDER_01=$(qd "$KEY_ORDER_SQL")
[ -z "$LIBRARY_01" ] || qd "UPDATE pg_proc SET probin = '\$libdir/ddb_model' WHERE probin = '\$libdir/ddb_model_01'"
q -d "$D" -c "SET client_min_messages = warning" -c "ALTER EXTENSION ddb_model UPDATE"
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

# The four other models: what 0.1 wrote reads, and each writes again
# through its functions (its triggers, GSIs and TTL rules with it).
check "mailshot: a subscriber, a send and an event of 0.1 read (profile, M5, TemplateIndex)" "Sam ZA true 1" \
    "$(qd "SELECT p.first_name || ' ' || (p.attributes ->> 'country') || ' '
                 || mailshot.was_sent('sam@example.com', 'onboarding/welcome') || ' '
                 || (SELECT count(*) FROM mailshot.template_events('onboarding/welcome', now() - interval '1 day'))
           FROM mailshot.get_profile('sam@example.com') p")"
qd "SELECT mailshot.start_execution('sam@example.com', 'onboarding', 'arn:aws:states:us-east-1:123456789012:execution:onboarding:sam'),
           mailshot.record_event('sam@example.com', 'click', 'onboarding/welcome', 'onboarding', 'Welcome!')" >/dev/null
check "mailshot: an execution and an event written after the update" "onboarding 2 0" \
    "$(qd "SELECT (mailshot.get_execution('sam@example.com', 'onboarding')).sequence_id || ' '
                 || (SELECT count(*) FROM mailshot.template_events('onboarding/welcome', now() - interval '1 day')) || ' '
                 || (SELECT count(*) FROM ddb.verify_gsi('MailshotEventsTable'))")"
check "uds: app data, calculated behaviour and the usage kept under 0.1 read" "dark 12 0" \
    "$(qd "SELECT (uds.json_get('reader', 'u-1', 'settings') ->> 'theme') || ' ' || uds.cb_get('u-1', 'streak.days') || ' '
                 || (SELECT count(*) FROM uds.reconcile())")"
qd "SELECT uds.blob_put('reader', 'u-1', 'avatar.png', '\\x89504e470d0a1a0a'::bytea)" >/dev/null
check "uds: a blob written after the update, its usage kept, the 0.1 app's quota still refusing (23514)" "\\x89504e470d0a1a0a 2 0 23514" \
    "$(qd "SELECT uds.blob_get('reader', 'u-1', 'avatar.png')::text || ' '
                 || (SELECT items FROM uds.usage WHERE app = 'reader' AND user_id = 'u-1') || ' '
                 || (SELECT count(*) FROM uds.reconcile())") $(sqlstate "PERFORM uds.json_put('reader', 'u-1', 'big', to_jsonb(repeat('x', 5000)))")"
check "underwriting: a 0.1 environment's profile, rulebook and audit trail read" "Initial profile|Core v1|1" \
    "$(qd "SELECT concat_ws('|', underwriting.latest_profile('prod', 'user-1') ->> 'reason',
                             underwriting.rulebook('prod', 'core_v1') ->> 'rulebook_name',
                             (SELECT count(*) FROM underwriting.rulebook_updates('prod')))")"
q -d "$D" >/dev/null <<'SQL'
SELECT underwriting.put_float_profile('prod', 'user-1', '{"is_float_enabled": true,
    "floats": [{"id": "1", "amount": 2000, "is_enabled": true}]}', 'Raised');
SELECT underwriting.put_rulebook('prod', '{"rulebook_id": "core_v2", "rulebook_name": "Core v2", "type": "floats",
    "rules": [], "apply_to": 10000, "priority": 90, "superseding": false}', 'admin@example.com');
SQL
check "underwriting: a profile and a rulebook written after the update (history, GSI1, audit trigger)" "Raised|2|floats:core_v1,core_v2|2|0" \
    "$(qd "SELECT concat_ws('|', underwriting.latest_profile('prod', 'user-1') ->> 'reason',
                             (SELECT count(*) FROM underwriting.profile_history('prod', 'user-1')),
                             'floats:' || (SELECT string_agg(i ->> 'rulebook_id', ',' ORDER BY i ->> 'rulebook_id')
                                           FROM underwriting.rulebooks_by_type('prod', 'floats') i),
                             (SELECT count(*) FROM underwriting.rulebook_updates('prod')),
                             (SELECT count(*) FROM ddb.verify_gsi('prod-underwriting')))")"
check "uniflow: a profile, an identity and an event of 0.1 read" "free user_1 Signed Up" \
    "$(qd "SELECT ((uniflow.get_profile('user_1')).traits ->> 'plan') || ' ' || uniflow.resolve_identity('anon-1') || ' '
                 || (SELECT string_agg(event, ',') FROM uniflow.event_history('user_1'))")"
qd "SELECT uniflow.identify('user_1', '{\"plan\": \"pro\", \"email\": \"u1@example.com\"}'),
           uniflow.track('user_1', 'Order Completed', '{\"total\": 4900}')" >/dev/null
check "uniflow: traits merged and an event tracked after the update" "pro u1@example.com Signed Up,Order Completed" \
    "$(qd "SELECT ((uniflow.get_profile('user_1')).traits ->> 'plan') || ' ' || ((uniflow.get_profile('user_1')).traits ->> 'email')
                 || ' ' || (SELECT string_agg(event, ',') FROM uniflow.event_history('user_1'))")"

# A hash-partitioned table with a GSI.
check "a partitioned table of 0.1 reads by key, by GSI and by Scan, its items in its 4 partitions" "p 4 5 10 42" \
    "$(qd "SELECT (SELECT relkind::text FROM pg_class WHERE oid = 'public.\"Parts\"'::regclass) || ' '
                 || (SELECT count(DISTINCT tableoid) FROM public.\"Parts\") || ' '
                 || (ddb.get_item('Parts', 'p5') ->> 'n') || ' '
                 || (SELECT count(*) FROM ddb.query('Parts', 'o1', index_name => 'ByOwner')) || ' '
                 || (SELECT count(*) FROM ddb.scan('Parts'))")"
q -d "$D" >/dev/null <<'SQL'
SELECT ddb.put_item('Parts', jsonb_build_object('pk', 'p' || i, 'owner', 'o' || (i % 4), 'n', i)) FROM generate_series(41, 60) i;
SELECT ddb.delete_item('Parts', 'p2');
SELECT ddb.update_item('Parts', 'p3', NULL, 'SET #o = :o', names => '{"#o": "owner"}', vals => '{":o": "o1"}');
SQL
check "a partitioned table of 0.1 written after the update (put, delete, a GSI key changed)" "61 16 0" \
    "$(qd "SELECT (SELECT count(*) FROM ddb.scan('Parts')) || ' '
                 || (SELECT count(*) FROM ddb.query('Parts', 'o1', index_name => 'ByOwner')) || ' '
                 || (SELECT count(*) FROM ddb.verify_gsi('Parts'))")"

# TransactWriteItems under a ClientRequestToken of 0.1.
check "the same TransactWriteItems under its 0.1 token succeeds and is not applied again" "{} 1 1" \
    "$(q -d "$D" -v tx="$TX" <<'SQL' | paste -sd' '
SELECT ddb.execute('TransactWriteItems', :'tx');
SELECT (ddb.get_item('Parts', 'p1') ->> 'hits') || ' ' || (SELECT count(*) FROM public."Parts" WHERE pk = 'tx');
SQL
)"
check "another request under the 0.1 token is IdempotentParameterMismatch (YD008)" "YD008" \
    "$(sqlstate "PERFORM ddb.execute('TransactWriteItems', '$TX_OTHER')")"
qd "SELECT ddb.execute('TransactWriteItems', '${TX_OTHER//upgrade-token-1/upgrade-token-2}')" >/dev/null
check "a transaction under a new token after the update" "3" "$(qd "SELECT ddb.get_item('Parts', 'p1') ->> 'hits'")"

# PartiQL: 0.1's INSERT read by SELECT, on the table and its GSI; then an UPDATE.
check "PartiQL SELECT reads an item a PartiQL INSERT wrote under 0.1, by key and on the GSI" "1 pq" \
    "$(qd "SELECT (ddb.execute('ExecuteStatement', \$\${\"Statement\": \"SELECT n FROM \\\"Parts\\\" WHERE pk = 'pq'\"}\$\$)
                  -> 'Items' -> 0 -> 'n' ->> 'N') || ' '
                 || (ddb.execute('ExecuteStatement', \$\${\"Statement\": \"SELECT pk FROM \\\"Parts\\\".\\\"ByOwner\\\" WHERE owner = 'o7'\"}\$\$)
                  -> 'Items' -> 0 -> 'pk' ->> 'S')")"
qd "SELECT ddb.execute('ExecuteStatement', \$\${\"Statement\": \"UPDATE \\\"Parts\\\" SET n = 2 WHERE pk = 'pq'\"}\$\$)" >/dev/null
check "PartiQL UPDATE of that item after the update" "2" "$(qd "SELECT ddb.get_item('Parts', 'pq') ->> 'n'")"

# Tags.
TAGS_SQL="SELECT string_agg(t ->> 'Key' || '=' || (t ->> 'Value'), ' ' ORDER BY t ->> 'Key')
          FROM jsonb_array_elements(ddb.execute('ListTagsOfResource',
                   '{\"ResourceArn\": \"arn:aws:dynamodb:ddb-model:000000000000:table/Parts\"}') -> 'Tags') t"
check "ListTagsOfResource gives the tags of 0.1" "env=test team=core" "$(qd "$TAGS_SQL")"
q -d "$D" >/dev/null <<'SQL'
SELECT ddb.execute('TagResource', '{"ResourceArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Parts",
                                    "Tags": [{"Key": "owner", "Value": "ops"}]}');
SELECT ddb.execute('UntagResource', '{"ResourceArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Parts", "TagKeys": ["env"]}');
SQL
check "TagResource and UntagResource after the update" "owner=ops team=core" "$(qd "$TAGS_SQL")"

# A local secondary index, a stream, provisioned throughput.
THROUGHPUT_SQL="SELECT (d -> 'BillingModeSummary' ->> 'BillingMode') || ' ' || (d -> 'ProvisionedThroughput' ->> 'ReadCapacityUnits')
                       || ' ' || (d -> 'ProvisionedThroughput' ->> 'WriteCapacityUnits')
                FROM (SELECT ddb.execute('DescribeTable', '{\"TableName\": \"Feed\"}') -> 'Table' AS d) s"
check "the throughput UpdateTable set under 0.1" "PROVISIONED 5 4" "$(qd "$THROUGHPUT_SQL")"
qd "SELECT ddb.execute('UpdateTable', '{\"TableName\": \"Feed\", \"ProvisionedThroughput\": {\"ReadCapacityUnits\": 6, \"WriteCapacityUnits\": 7}}')" >/dev/null
check "UpdateTable of that throughput after the update" "PROVISIONED 6 7" "$(qd "$THROUGHPUT_SQL")"
check "the table with an LSI and a stream: same stream, its LSI read (ConsistentRead)" \
    "$STREAM_ARN_01 NEW_AND_OLD_IMAGES ByPosted 2,1" \
    "$(qd "SELECT (d ->> 'LatestStreamArn') || ' ' || (d -> 'StreamSpecification' ->> 'StreamViewType') || ' '
                 || (d -> 'LocalSecondaryIndexes' -> 0 ->> 'IndexName') || ' '
                 || (SELECT string_agg(i -> 'sk' ->> 'N', ',')
                     FROM jsonb_array_elements(ddb.execute('Query', '{\"TableName\": \"Feed\", \"IndexName\": \"ByPosted\",
                              \"ConsistentRead\": true, \"KeyConditionExpression\": \"pk = :p AND posted > :t\",
                              \"ExpressionAttributeValues\": {\":p\": {\"S\": \"a\"}, \":t\": {\"N\": \"5\"}}}') -> 'Items') i)
           FROM (SELECT ddb.execute('DescribeTable', '{\"TableName\": \"Feed\"}') -> 'Table' AS d) s")"
q -d "$D" >/dev/null <<'SQL'
SELECT ddb.execute('UpdateItem', '{"TableName": "Feed", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "UpdateExpression": "SET v = :v, posted = :p", "ExpressionAttributeValues": {":v": {"S": "three"}, ":p": {"N": "5"}}}');
SELECT ddb.execute('DeleteItem', '{"TableName": "Feed", "Key": {"pk": {"S": "a"}, "sk": {"N": "2"}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Feed", "Item": {"pk": {"S": "a"}, "sk": {"N": "3"}, "posted": {"N": "7"}, "v": {"S": "new"}}}');
SQL
check "the LSI after writes of the update" "1,3 0" \
    "$(qd "SELECT (SELECT string_agg(i ->> 'sk', ',') FROM ddb.query('Feed', 'a', index_name => 'ByPosted') i) || ' '
                 || (SELECT count(*) FROM ddb.verify_gsi('Feed'))")"
check "DescribeStream after the update: the 0.1 stream, enabled, its shard" "ENABLED NEW_AND_OLD_IMAGES $SHARD_01" \
    "$(qd "SELECT (d ->> 'StreamStatus') || ' ' || (d ->> 'StreamViewType') || ' ' || (d -> 'Shards' -> 0 ->> 'ShardId')
           FROM (SELECT ddb.execute('DescribeStream', '{\"StreamArn\": \"$STREAM_ARN_01\"}') -> 'StreamDescription' AS d) s")"
check "GetRecords under 0.1 (TRIM_HORIZON)" "INSERT 1 ->one, MODIFY 1 one>two, INSERT 2 ->x true" "${RECORDS_01% *}"
records=$(qd "$RECORDS_SQL")
check "GetRecords from TRIM_HORIZON after the update: 0.1's records, then the new ones, in order" \
    "INSERT 1 ->one, MODIFY 1 one>two, INSERT 2 ->x, MODIFY 1 two>three, REMOVE 2 x>-, INSERT 3 ->new true" "${records% *}"
check "the records of 0.1 keep their sequence numbers" "${RECORDS_01##* }" "$(echo "${records##* }" | cut -d, -f1-3)"

# Access keys: 0.1 kept a key's tables; 0.2 makes a limited key act as a
# role of its own (ddb_key_<id>) that is given those tables.
check "0.1's access keys are kept: ids, secrets, revocation" "$KEYS_01" "$(qd "$KEYS_SQL")"
check "a limited 0.1 key acts as its own role (NOLOGIN), a key for every table as the gateway" "$LIMITED_ROLE false NULL" \
    "$(qd "SELECT (SELECT role_name FROM ddb.access_keys WHERE access_key_id = '$LIMITED') || ' '
                 || (SELECT rolcanlogin FROM pg_roles WHERE rolname = '$LIMITED_ROLE') || ' '
                 || coalesce((SELECT role_name FROM ddb.access_keys WHERE access_key_id = '$EVERY'), 'NULL')")"
qd "SELECT ddb.execute_as('$LIMITED_ROLE', 'PutItem', '{\"TableName\": \"Parts\", \"Item\": {\"pk\": {\"S\": \"by-key\"}, \"owner\": {\"S\": \"o5\"}}}')" >/dev/null
check "ddb.execute_as the key's role reads and writes its table, also through the GSI" "5 by-key" \
    "$(qd "SELECT (ddb.execute_as('$LIMITED_ROLE', 'GetItem', '{\"TableName\": \"Parts\", \"Key\": {\"pk\": {\"S\": \"p5\"}}}')
                  -> 'Item' -> 'n' ->> 'N') || ' '
                 || (ddb.execute_as('$LIMITED_ROLE', 'Query', '{\"TableName\": \"Parts\", \"IndexName\": \"ByOwner\",
                        \"KeyConditionExpression\": \"#o = :o\", \"ExpressionAttributeNames\": {\"#o\": \"owner\"},
                        \"ExpressionAttributeValues\": {\":o\": {\"S\": \"o5\"}}}') -> 'Items' -> 0 -> 'pk' ->> 'S')")"
check "ddb.execute_as the key's role is refused another table (AccessDeniedException, YD010)" "YD010 YD010" \
    "$(sqlstate "PERFORM ddb.execute_as('$LIMITED_ROLE', 'GetItem', '{\"TableName\": \"Feed\", \"Key\": {\"pk\": {\"S\": \"a\"}, \"sk\": {\"N\": \"1\"}}}')") $(
       sqlstate "PERFORM ddb.execute_as('$LIMITED_ROLE', 'Scan', '{\"TableName\": \"UserServiceTable\"}')")"
check "a 0.1 key revoked after the update" "t f" \
    "$(q -d "$D" -c "SELECT ddb.revoke_access_key('$LIMITED')" -c "SELECT ddb.revoke_access_key('$LIMITED')" | paste -sd' ')"
# 0.2's grants on tables created under 0.1: a read-only role reads Feed, its
# LSI and its stream's records (row-level security on 0.1's records), and
# writes nothing.
q -d postgres -c "CREATE ROLE ddb_upgrade_reader NOLOGIN"
check "ddb.grant_tables after the update reaches a 0.1 table" "1" "$(qd "SELECT ddb.grant_tables('ddb_upgrade_reader', 'Fe*', read_only => true)")"
check "the role reads a 0.1 table, its LSI and its stream's records" "new 1,3 6" \
    "$(qd "SELECT (ddb.execute_as('ddb_upgrade_reader', 'GetItem', '{\"TableName\": \"Feed\", \"Key\": {\"pk\": {\"S\": \"a\"}, \"sk\": {\"N\": \"3\"}}}')
                  -> 'Item' -> 'v' ->> 'S') || ' '
                 || (SELECT string_agg(i -> 'sk' ->> 'N', ',')
                     FROM jsonb_array_elements(ddb.execute_as('ddb_upgrade_reader', 'Query', '{\"TableName\": \"Feed\", \"IndexName\": \"ByPosted\",
                              \"KeyConditionExpression\": \"pk = :p\", \"ExpressionAttributeValues\": {\":p\": {\"S\": \"a\"}}}') -> 'Items') i) || ' '
                 || jsonb_array_length(ddb.execute_as('ddb_upgrade_reader', 'GetRecords', jsonb_build_object('ShardIterator',
                        ddb.execute_as('ddb_upgrade_reader', 'GetShardIterator', jsonb_build_object('StreamArn', '$STREAM_ARN_01',
                            'ShardId', '$SHARD_01', 'ShardIteratorType', 'TRIM_HORIZON')) ->> 'ShardIterator')) -> 'Records')")"
check "the read-only role may not write it, nor read a table it was not given" "YD010 YD010" \
    "$(sqlstate "PERFORM ddb.execute_as('ddb_upgrade_reader', 'PutItem', '{\"TableName\": \"Feed\", \"Item\": {\"pk\": {\"S\": \"z\"}, \"sk\": {\"N\": \"1\"}}}')") $(
       sqlstate "PERFORM ddb.execute_as('ddb_upgrade_reader', 'GetItem', '{\"TableName\": \"Parts\", \"Key\": {\"pk\": {\"S\": \"p5\"}}}')")"

# A ddb.ddb_key column outside the extension: the order, the btree range
# scan of ^@ (begins_with), hash and GiST lookups are what 0.1 had, before
# and after rows are added.
KEY_SCANS_SQL="SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off;
SELECT md5(string_agg(format('%s', k), ',')) FROM (SELECT k FROM public.key_notes ORDER BY k) s;
SELECT count(*) FROM public.key_notes WHERE k ^@ 'USER#1';
SELECT count(*) FROM public.key_notes WHERE h = 'USER#42';
SELECT count(*) FROM public.key_notes WHERE g ^@ 'ORDER#2';
SELECT count(*) FROM public.key_notes WHERE g <@ ddb.key('TENANT', '7');
SELECT count(*) FROM public.key_notes WHERE k > 10 AND k < 20;
EXPLAIN (COSTS OFF) SELECT k FROM public.key_notes ORDER BY k;
EXPLAIN (COSTS OFF) SELECT count(*) FROM public.key_notes WHERE k ^@ 'USER#1';
EXPLAIN (COSTS OFF) SELECT count(*) FROM public.key_notes WHERE h = 'USER#42';
EXPLAIN (COSTS OFF) SELECT count(*) FROM public.key_notes WHERE g ^@ 'ORDER#2';"
key_scans() {  # the results of KEY_SCANS_SQL on one line, the plans by their indexes
    q -d "$D" -c "$KEY_SCANS_SQL" | sed -n -e '1,6p' -e 's/.*Scan using \([a-z_]*\) on .*/\1/p' | paste -sd' '
}
check "ddb_key values of 0.1 sort as they did under 0.1" "$KEY_ORDER_01" "$(qd "$KEY_ORDER_SQL")"
check "ddb_key values of 0.1 keep their order (read from the 0.1 btree index) and index lookups" \
    "$KEY_ORDER_01 111 1 111 1 19 key_notes_pkey key_notes_pkey key_notes_h key_notes_g" "$(key_scans)"
q -d "$D" -c "CREATE EXTENSION IF NOT EXISTS amcheck" -c "SELECT bt_index_parent_check('public.key_notes_pkey', true)" >/dev/null 2>"$WORK/amcheck.err"
check "amcheck finds the 0.1 btree index of ddb_key consistent" "" "$(head -3 "$WORK/amcheck.err")"
q -d "$D" >/dev/null <<'SQL'
INSERT INTO public.key_notes SELECT x, x, x
FROM (VALUES ('USER#1000'::ddb.ddb_key), ('USER#0'::ddb.ddb_key), ('ORDER#2x'::ddb.ddb_key), (12.25::ddb.ddb_key),
             (ddb.key('TENANT', '7', 'MORE'))) v(x);
SQL
check "ddb_key rows added after the update: the index order is the sort order, lookups find them" \
    "$(qd "$KEY_ORDER_SQL") 112 1 112 2 20 key_notes_pkey key_notes_pkey key_notes_h key_notes_g" "$(key_scans)"
q -d "$D" -c "SELECT bt_index_parent_check('public.key_notes_pkey', true)" >/dev/null 2>"$WORK/amcheck.err"
check "amcheck finds it consistent after them" "" "$(head -3 "$WORK/amcheck.err")"

drop_db $DATABASES
for r in "ddb_key_${LIMITED,,}" "ddb_key_${REVOKED,,}" ddb_upgrade_reader; do
    q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS \"$r\""
done
[ -z "$LIBRARY_01" ] || rm -f "$INSTALLED_01"
done_testing
