#!/usr/bin/env bash
# The hostile-role suite (issue 29, docs/security.md "Threat model"): a
# victim role's tables, attacked by two roles that hold nothing of the
# victim's, through everything of the extension they may execute.
#
# The victim has a table with a GSI, a stream and point-in-time recovery on,
# items (so index entries, stream records and history versions), a restore
# job of its own (a job row and ddb.table_restores' row), a grant
# (ddb.table_grants) and an access key.  The attackers:
#   plain  a login role with nothing but PUBLIC's default privileges (TEMP);
#   owner  a table owner: CreateTable's documented privileges (INSERT and
#          UPDATE on ddb.tables, SELECT on ddb.table_grants, CREATE on
#          schema public, where the victim's tables are too) and a table of
#          its own.
# Each calls EVERY function of schemas ddb and ddb_router it may execute,
# read from the catalog (so a function added later is called too), with
# hostile arguments: NULLs, the victim's names, role, job and relation,
# empty, huge and ill-typed values (a JSON array where an object goes, a
# negative id, an ARN for a name).  Each call is its own transaction;
# errors are expected.  Then each attaches every trigger function of both
# schemas, with the victim's table as argument, to TEMP tables (and the
# owner to tables of its own, its ddb table among them) of the wrong shape,
# of a ddb table's column names with the wrong types, and of a ddb table's
# shape, as a row, statement and deferred constraint trigger, and inserts,
# updates, deletes and truncates rows.  (ddb_router's functions need USAGE
# on its schema, which PUBLIC lacks: their calls are refused unless it is
# granted.)
#
# It asserts that no server process crashed (the server log,
# $DDB_SERVER_LOG, from where this suite began) and that the victim's items,
# index entries, stream records, history versions, jobs and catalog rows are
# what they were (digests read as the superuser before and after), and
# that ddb.verify_gsi still finds the index and the table consistent.
#
# Runs against the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set);
# prints TAP (test/lib.sh).  Each call has a statement
# timeout of 1 s (HOSTILE_TIMEOUT) and each session 60 s at most; the whole
# suite takes about 45 s.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir hostile
DB=ddb_hostile
VICTIM=ddb_hostile_victim
PLAIN=ddb_hostile_plain
OWNER=ddb_hostile_owner
READER=ddb_hostile_reader
TIMEOUT=${HOSTILE_TIMEOUT:-1s}
LOG=${DDB_SERVER_LOG:-}
log_start=0
[ -n "$LOG" ] && [ -f "$LOG" ] && log_start=$(wc -c <"$LOG")

# waits until the server accepts connections again (after a crash it restarts every backend)
server_ready() { wait_for 20 'q -c "SELECT 1" >/dev/null 2>&1'; }
drop_roles() {
    for r in $PLAIN $OWNER $READER $VICTIM; do
        psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS $r" 2>/dev/null
    done
}

fresh_db --extension "$DB"
drop_roles
psql -X -q -d postgres -c "CREATE ROLE $VICTIM NOLOGIN" -c "CREATE ROLE $READER NOLOGIN" \
    -c "CREATE ROLE $PLAIN LOGIN" -c "CREATE ROLE $OWNER LOGIN"
# ddb_router too, when it can be made here (its functions are called as well)
q -c "SET client_min_messages = warning" -c "CREATE EXTENSION ddb_router CASCADE" >/dev/null 2>&1 || true

# ---- the victim ----
q >/dev/null 2>"$WORK/setup.log" <<SQL
-- CreateTable's documented privileges, a schema of its own (docs/security.md)
GRANT INSERT, UPDATE ON ddb.tables TO $VICTIM, $OWNER;
GRANT SELECT ON ddb.table_grants TO $VICTIM, $OWNER;
-- (a table with a GSI takes INSERT and UPDATE on ddb.indexes too, which docs/security.md does not name)
GRANT INSERT, UPDATE ON ddb.indexes TO $VICTIM;
-- both in schema public, where tables go by default: a history relation
-- is found beside the table a trigger fires on (ddb.pitr_capture)
GRANT CREATE ON SCHEMA public TO $VICTIM, $OWNER;
SET ROLE $VICTIM;
SELECT ddb.execute('CreateTable', '{"TableName": "Victim", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
                           {"AttributeName": "status", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "byStatus", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                              "Projection": {"ProjectionType": "ALL"}}],
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}}');
SELECT ddb.execute('UpdateContinuousBackups', '{"TableName": "Victim",
  "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}');
SELECT ddb.execute('PutItem', '{"TableName": "Victim", "Item": {"pk": {"S": "v1"}, "sk": {"S": "a"}, "status": {"S": "open"}, "secret": {"S": "s1"}}}');
SELECT ddb.execute('PutItem', '{"TableName": "Victim", "Item": {"pk": {"S": "v2"}, "sk": {"S": "b"}, "status": {"S": "shut"}}}');
SELECT ddb.execute('UpdateItem', '{"TableName": "Victim", "Key": {"pk": {"S": "v2"}, "sk": {"S": "b"}},
  "UpdateExpression": "SET n = :n", "ExpressionAttributeValues": {":n": {"N": "7"}}}');
RESET ROLE;
SELECT ddb.grant_tables('$READER', 'Victim', true);
SELECT ddb.create_access_key('$VICTIM');
SET ROLE $VICTIM;
SELECT ddb.execute('RestoreTableToPointInTime', '{"SourceTableName": "Victim", "TargetTableName": "VictimCopy",
  "UseLatestRestorableTime": true}');
SQL
check "the victim's tables, items, grant, key and restore are made" "" "$(head -3 "$WORK/setup.log")"
# the victim's restore job ends before anything is attacked
in_progress="SELECT count(*) FROM ddb.jobs WHERE status = 'IN_PROGRESS'"
wait_for 20 '[ "$(q -c "$in_progress")" = 0 ]'
check "the victim's restore job completed" "COMPLETED" \
    "$(q -c "SELECT string_agg(status, ',') FROM ddb.jobs WHERE role_id = '$VICTIM'::regrole")"
check "the victim has index entries, stream records and history versions" "t" "$(q -c "
    SELECT (SELECT count(*) FROM \"Victim:byStatus\") = 2 AND (SELECT count(*) FROM ddb.stream_records WHERE table_name = 'Victim') = 3
       AND (SELECT count(*) FROM \"Victim\$pitr\") = 3" 2>&1)"
# the owner's own table, to which it attaches the trigger functions too
psql -X -q -At -d "$DB" -U "$OWNER" -c "SELECT ddb.create_table('Mine', 'pk', 'S', 'sk', 'S')" >/dev/null

# ---- digests, as the superuser ----
# one line per thing the attackers must leave alone: its name, then an md5 of its rows
digests() {
    q <<'SQL'
SELECT 'items of ' || t.table_name, md5(coalesce(string_agg(x, E'\n' ORDER BY x), ''))
FROM ddb.tables t, LATERAL ddb.scan(t.table_name) s, LATERAL (SELECT s::text) x(x)
WHERE t.table_name IN ('Victim', 'VictimCopy') GROUP BY t.table_name;
SELECT 'rows of ' || c.oid::regclass,
       (xpath('/row/m/text()', query_to_xml(format('SELECT md5(coalesce(string_agg(r::text, E''\n'' ORDER BY r::text), '''')) m FROM %s r',
                                                   c.oid::regclass), false, true, '')))[1]::text
FROM pg_class c WHERE c.relowner = 'ddb_hostile_victim'::regrole AND c.relkind IN ('r', 'p') ORDER BY 1;
SELECT 'stream records', md5(coalesce(string_agg(r::text, E'\n' ORDER BY r::text), '')) FROM ddb.stream_records r
WHERE table_name IN ('Victim', 'VictimCopy');
SELECT 'jobs', md5(coalesce(string_agg(j::text, E'\n' ORDER BY j::text), '')) FROM ddb.jobs j
WHERE role_id::oid NOT IN ('ddb_hostile_plain'::regrole, 'ddb_hostile_owner'::regrole);
SELECT 'catalog ' || c, (xpath('/row/m/text()', query_to_xml(format(
         'SELECT md5(coalesce(string_agg(r::text, E''\n'' ORDER BY r::text), '''')) m FROM ddb.%I r WHERE r.table_name IN (''Victim'', ''VictimCopy'')', c),
         false, true, '')))[1]::text
FROM unnest(ARRAY['tables', 'indexes', 'continuous_backups', 'table_restores']) c ORDER BY 1;
SELECT 'catalog ' || c, (xpath('/row/m/text()', query_to_xml(format(
         'SELECT md5(coalesce(string_agg(r::text, E''\n'' ORDER BY r::text), '''')) m FROM ddb.%I r', c),
         false, true, '')))[1]::text
FROM unnest(ARRAY['table_grants', 'access_keys', 'server_secret']) c ORDER BY 1;
SQL
}
digests >"$WORK/before" 2>"$WORK/digest-errors"
check "the victim's digests are read" "ok" "$( [ -s "$WORK/before" ] && [ ! -s "$WORK/digest-errors" ] && echo ok || cat "$WORK/digest-errors")"

# ---- the calls ----
# Values per argument type and kind: 1 NULL, 2 the victim's, 3 empty, 4 huge,
# 5 of the wrong shape (anything without a value here is NULL).
q >/dev/null <<SQL
CREATE TABLE public.hostile_values (type regtype, kind integer, expr text);
INSERT INTO public.hostile_values VALUES
  ('text', 2, \$\$'Victim'\$\$), ('text', 3, \$\$''\$\$), ('text', 4, \$\$repeat('Victim', 200000)\$\$),
  ('text', 5, \$\$'arn:aws:dynamodb:ddb-model:000000000000:table/Victim'\$\$),
  ('name', 2, \$\$'$VICTIM'\$\$), ('name', 3, \$\$''\$\$), ('name', 4, \$\$repeat('x', 200)\$\$), ('name', 5, \$\$'postgres'\$\$),
  ('jsonb', 2, \$\$(jsonb_build_object('TableName', 'Victim', 'SourceTableName', 'Victim', 'TargetTableName', 'VictimStolen',
      'TableArn', 'arn:aws:dynamodb:ddb-model:000000000000:table/Victim', 'S3Bucket', 'b1', 'IndexName', 'byStatus',
      'Key', '{"pk": {"S": "v1"}, "sk": {"S": "a"}}'::jsonb,
      'Item', '{"pk": {"S": "v1"}, "sk": {"S": "a"}, "status": {"S": "forged"}}'::jsonb,
      'UseLatestRestorableTime', true, 'history_relation', '"Victim\$pitr"', 'history_from', '2999-01-01',
      'table_name', 'Victim', 'recovery_period_days', 1, 'SourceHistory', 1,
      'ShardIterator', 'x', 'NextToken', 'x', 'Statement', 'SELECT * FROM "Victim"'))\$\$),
  ('jsonb', 3, \$\$'{}'\$\$), ('jsonb', 4, \$\$(repeat('[', 5000) || repeat(']', 5000))::jsonb\$\$), ('jsonb', 5, \$\$'[1, "Victim", null]'\$\$),
  ('integer', 2, '(SELECT min(id) FROM ddb.jobs)'), ('integer', 3, '0'), ('integer', 4, '2147483647'), ('integer', 5, '-1'),
  ('bigint', 2, '1'), ('bigint', 3, '0'), ('bigint', 4, '9223372036854775807'), ('bigint', 5, '-9223372036854775808'),
  ('smallint', 3, '0'), ('smallint', 5, '-1'),
  ('boolean', 2, 'true'), ('boolean', 3, 'false'),
  ('numeric', 2, '1'), ('numeric', 3, '0'), ('numeric', 4, '1e300'), ('numeric', 5, '''NaN'''),
  ('double precision', 2, '0.2'), ('double precision', 3, '0'), ('double precision', 4, '1e300'), ('double precision', 5, '''NaN'''),
  ('timestamp with time zone', 2, 'now()'), ('timestamp with time zone', 4, '''infinity'''), ('timestamp with time zone', 5, '''-infinity'''),
  ('interval', 2, '''1 second'''), ('interval', 4, '''1000 years'''), ('interval', 5, '''-1 day'''),
  ('text[]', 2, \$\$ARRAY['Victim']\$\$), ('text[]', 3, \$\$'{}'\$\$), ('text[]', 4, \$\$array_fill('Victim'::text, ARRAY[10000])\$\$),
  ('text[]', 5, 'ARRAY[NULL]::text[]'),
  ('ddb.ddb_key', 2, \$\$'v1'\$\$), ('ddb.ddb_key', 3, \$\$ddb.ddb_key(0)\$\$), ('ddb.ddb_key', 4, \$\$ddb.ddb_key(repeat('v', 2048))\$\$),
  ('ddb.ddb_key', 5, \$\$ddb.ddb_key('\\x00'::bytea)\$\$),
  ('regclass', 2, \$\$'"Victim"'\$\$), ('regclass', 3, \$\$'ddb.tables'\$\$), ('regclass', 5, \$\$'"Victim\$pitr"'\$\$),
  ('oid', 2, \$\$'"Victim"'::regclass\$\$), ('oid', 3, '0'), ('oid', 5, \$\$'"Victim\$pitr"'::regclass\$\$),
  ('regprocedure', 2, \$\$'ddb.backup_items(jsonb)'\$\$), ('regprocedure', 5, \$\$'ddb.pitr_restore_items(jsonb)'\$\$),
  ('regrole', 2, \$\$'$VICTIM'\$\$),
  ('cstring', 2, \$\$'Victim'\$\$), ('cstring', 3, \$\$''\$\$), ('cstring', 4, \$\$repeat('#', 100000)::cstring\$\$),
  ('refcursor', 2, \$\$'hostile'\$\$),
  ('ddb.tables', 2, \$\$(SELECT t FROM ddb.tables t WHERE table_name = 'Victim')\$\$),
  ('ddb.continuous_backups', 2, \$\$(SELECT c FROM ddb.continuous_backups c WHERE table_name = 'Victim')\$\$),
  ('ddb.backups', 2, '(SELECT b FROM ddb.backups b LIMIT 1)'),
  ('ddb.jobs', 2, '(SELECT j FROM ddb.jobs j LIMIT 1)');
-- The calls a role may make: every function of ddb and ddb_router it may
-- execute, but trigger functions (attached below) and those taking internal
-- (which SQL cannot call), with 8 argument lists: all NULL, all the
-- victim's, all empty, all huge, all of the wrong shape, and the victim's
-- first argument with the rest NULL, empty or huge.
CREATE FUNCTION public.hostile_calls(role name) RETURNS SETOF text
LANGUAGE sql AS \$f\$
SELECT format('SELECT %s(%s);', p.oid::regproc::text, string_agg(
           format('%s::%s', coalesce((SELECT v.expr FROM public.hostile_values v WHERE v.type = a.type
                                      AND v.kind = CASE WHEN k.kind <= 5 THEN k.kind WHEN a.n = 1 THEN 2
                                                         WHEN k.kind = 6 THEN 1 WHEN k.kind = 7 THEN 3 ELSE 4 END),
                                     'NULL'), a.type::regtype), ', ' ORDER BY a.n))
FROM pg_proc p
JOIN pg_namespace ns ON ns.oid = p.pronamespace
CROSS JOIN generate_series(1, 8) k(kind)
CROSS JOIN LATERAL unnest(p.proargtypes::oid[]) WITH ORDINALITY a(type, n)
WHERE ns.nspname IN ('ddb', 'ddb_router') AND p.prokind = 'f'
  AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)
  AND NOT 'internal'::regtype = ANY (p.proargtypes::oid[])
  AND has_function_privilege(role, p.oid, 'EXECUTE')
GROUP BY p.oid, k.kind
UNION ALL
SELECT format('SELECT %s();', p.oid::regproc::text)
FROM pg_proc p JOIN pg_namespace ns ON ns.oid = p.pronamespace
WHERE ns.nspname IN ('ddb', 'ddb_router') AND p.prokind = 'f' AND p.pronargs = 0
  AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)
  AND has_function_privilege(role, p.oid, 'EXECUTE')
\$f\$;
-- The trigger function attachments: each trigger function the role may
-- execute, with the victim's table (and its history relation) as
-- arguments, on a table of the wrong shape and on one of a ddb table's
-- shape, as a row trigger and as a deferred constraint trigger; each script
-- then writes rows whose keys are the victim's.
CREATE FUNCTION public.hostile_triggers(role name) RETURNS TABLE (name text, script text)
LANGUAGE sql AS \$f\$
SELECT format('%s(%s) on %s %s (%s)', p.oid::regproc, g.args, s.shape, s.rel, t.kind),
       format(\$\$%s
%s
INSERT INTO %s %s;
UPDATE %s SET %s;
DELETE FROM %s;
INSERT INTO %s %s;
TRUNCATE %s;
\$\$, CASE WHEN s.columns IS NULL THEN format('DROP TRIGGER IF EXISTS hostile ON %s;', s.rel)
                     ELSE format('CREATE %s TABLE %s %s;', s.persistence, s.rel, s.columns) END,
              format(t.definition, s.rel, p.oid::regproc, g.args),
              s.rel, s.rows, s.rel, s.updates, s.rel, s.rel, s.rows, s.rel)
FROM pg_proc p
JOIN pg_namespace ns ON ns.oid = p.pronamespace
CROSS JOIN (VALUES
    ('the wrong shape', 'TEMP', 'pg_temp.wrong', '(a integer, b text, c jsonb)',
     \$\$VALUES (1, 'v1', '{"pk": "v1"}'), (2, NULL, NULL)\$\$, \$\$a = a + 1, b = 'v2', c = '[]'\$\$),
    ('a table''s column names of the wrong types', 'TEMP', 'pg_temp.mistyped',
     '(pk text, sk integer, item text, expires_at text, item_size bigint)',
     \$\$VALUES ('v1', 1, '{"pk": "v1", "sk": "a", "status": "forged"}', 'x', 40), (NULL, NULL, NULL, NULL, NULL)\$\$,
     \$\$item = 'not json', pk = NULL, sk = sk + 1\$\$),
    ('a table''s shape', 'TEMP', 'pg_temp.shaped',
     '(pk ddb.ddb_key NOT NULL, sk ddb.ddb_key NOT NULL, item jsonb NOT NULL, expires_at bigint, item_size integer NOT NULL)',
     \$\$VALUES ('v1', 'a', '{"pk": "v1", "sk": "a", "status": "forged"}', NULL, 40), ('v9', 'z', '{"pk": "v9", "sk": "z", "status": "open"}', NULL, 40)\$\$,
     \$\$item = '{"pk": "v2", "sk": "b", "status": "forged"}', pk = 'v2', sk = 'b'\$\$),
    ('a table''s shape', '', 'public.shaped',
     '(pk ddb.ddb_key NOT NULL, sk ddb.ddb_key NOT NULL, item jsonb NOT NULL, expires_at bigint, item_size integer NOT NULL)',
     \$\$VALUES ('v1', 'a', '{"pk": "v1", "sk": "a", "status": "forged"}', NULL, 40), ('v9', 'z', '{"pk": "v9", "sk": "z", "status": "open"}', NULL, 40)\$\$,
     \$\$item = '{"pk": "v2", "sk": "b", "status": "forged"}', pk = 'v2', sk = 'b'\$\$),
    -- the owner's own ddb table (ddb.create_table), already there
    ('its own ddb table', '', 'public."Mine"', NULL,
     \$\$VALUES ('v1', 'a', '{"pk": "v1", "sk": "a", "status": "forged"}', NULL, 40), ('v9', 'z', '{"pk": "v9", "sk": "z", "status": "open"}', NULL, 40)\$\$,
     \$\$item = '{"pk": "v2", "sk": "b", "status": "forged"}', pk = 'v2', sk = 'b'\$\$)
  ) s(shape, persistence, rel, columns, rows, updates)
CROSS JOIN (VALUES
    ('row trigger', 'CREATE TRIGGER hostile AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %s(%s);'),
    ('statement trigger', 'CREATE TRIGGER hostile AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION %s(%s);'),
    ('deferred constraint trigger', 'CREATE CONSTRAINT TRIGGER hostile AFTER INSERT OR UPDATE OR DELETE ON %s DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION %s(%s);')
  ) t(kind, definition)
CROSS JOIN (VALUES (\$\$'Victim'\$\$), (\$\$'Victim', 'Victim\$pitr'\$\$)) g(args)
WHERE ns.nspname IN ('ddb', 'ddb_router') AND p.prorettype = 'trigger'::regtype
  AND has_function_privilege(role, p.oid, 'EXECUTE')
  AND (s.persistence = 'TEMP' OR has_schema_privilege(role, 'public', 'CREATE'))
\$f\$;
SQL

crashed=()
# attack ROLE: runs the role's calls and trigger scripts, one session each
attack() {
    local role=$1 i=0 name role_started=$SECONDS
    # (one line each: the chunks below split the list by lines)
    q -c "SELECT replace(c, E'\n', ' ') FROM public.hostile_calls('$role') c" >"$WORK/$role.calls"
    # the calls in sessions of 40: a crash ends a session, and the next one starts when the server is back
    split -l 40 -d -a 3 "$WORK/$role.calls" "$WORK/$role.chunk."
    for chunk in "$WORK/$role".chunk.*; do
        PGOPTIONS="-c statement_timeout=$TIMEOUT -c lock_timeout=$TIMEOUT -c client_min_messages=error" \
            timeout 60 psql -X -q -d "$DB" -U "$role" -f "$chunk" >>"$WORK/$role.out" 2>&1
        if [ $? -eq 2 ]; then
            crashed+=("$role: a call (the server log names it)")
            server_ready
        fi
    done
    q -F $'\t' -c "SELECT name, replace(script, E'\n', ' ') FROM public.hostile_triggers('$role')" >"$WORK/$role.triggers"
    while IFS=$'\t' read -r name script; do
        i=$((i + 1))
        printf '%s\n' "DROP TABLE IF EXISTS public.shaped;" "$script" >"$WORK/$role.trigger.$i.sql"
        PGOPTIONS="-c statement_timeout=$TIMEOUT -c lock_timeout=$TIMEOUT -c client_min_messages=error" \
            timeout 60 psql -X -q -d "$DB" -U "$role" -f "$WORK/$role.trigger.$i.sql" >"$WORK/$role.trigger.$i.out" 2>&1
        if [ $? -eq 2 ]; then
            crashed+=("$role: $name")
            server_ready
        fi
    done <"$WORK/$role.triggers"
    echo "$role: $(wc -l <"$WORK/$role.calls") calls, $i trigger attachments ($((SECONDS - role_started)) s)" >>"$WORK/summary"
}
started=$SECONDS
attack "$PLAIN"
attack "$OWNER"
server_ready
check "the attacks ran in bounded time" "yes" "$([ $((SECONDS - started)) -le 120 ] && echo yes || echo "no: $((SECONDS - started)) s")"
check "each attacker made calls and attached trigger functions" "2" \
    "$(grep -c ': [1-9][0-9]* calls, [1-9][0-9]* trigger attachments' "$WORK/summary")"

crash_lines=""
# the statements that were running when a server process died
[ -n "$LOG" ] && crash_lines=$(tail -c +$((log_start + 1)) "$LOG" | grep -A1 -E "terminated by signal|was terminated" |
    sed -n 's/.*Failed process was running: //p' | cut -c1-100 | sort | uniq -c | sed 's/^ */x/' | tr '\n' ';')
check "no server process crashed" "" "$crash_lines${crashed[*]:+ (sessions lost: ${crashed[*]})}"

digests >"$WORK/after" 2>>"$WORK/digest-errors"
# the digests by what they cover: each check names the lines that changed
changed() {  # pattern of digest names
    diff <(grep -E "^($1)" "$WORK/before") <(grep -E "^($1)" "$WORK/after") | grep '^>' | cut -d'|' -f1 | sed 's/^> //' | tr '\n' ',' | sed 's/,$//'
}
check "the victim's items are unchanged" "" "$(changed 'items of|rows of "Victim(Copy)?"\|')"
check "the victim's index entries are unchanged" "" "$(changed 'rows of "Victim(Copy)?:byStatus')"
check "the victim's stream records are unchanged" "" "$(changed 'stream records')"
check "the victim's point-in-time recovery history is unchanged" "" "$(changed 'rows of "Victim\$pitr')"
check "the victim's jobs are unchanged" "" "$(changed 'jobs')"
check "the victim's catalog rows are unchanged" "" "$(changed 'catalog ')"
check "every digest was read again" "$(wc -l <"$WORK/before")" "$(wc -l <"$WORK/after")"
check "ddb.verify_gsi finds the victim's index and table consistent" "" \
    "$(q -c "SELECT string_agg(v::text, ',') FROM ddb.verify_gsi('Victim') v" 2>&1)"

drop_db "$DB" >/dev/null 2>&1
drop_roles
done_testing
