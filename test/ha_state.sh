#!/usr/bin/env bash
# What a formation keeps across a failover (issue 32, part 3; tools/ha.sh,
# docs/operations.md): starts one on a port block of its own (servers
# DDB_HA_STATE_TEST_PGPORT, default 55745-55747; gateway
# DDB_HA_STATE_TEST_GATEWAY_PORT, default 55748) in
# build/ha-state-test/deployment, kills its primary once (tools/ha.sh
# kill-primary: SIGKILL) and checks, through ddb-gateway with boto3
# (test/ha_state.py) and with psql on the nodes:
#   - streams: a writer's PutItem and UpdateItem, before, during and after
#     the failover, each acknowledged one has its record, none twice,
#     sequence numbers increasing; a shard iterator, a NextShardIterator,
#     ListStreams' LastEvaluatedStreamArn and DescribeStream's
#     ExclusiveStartShardId issued before the failover still work after it;
#   - background jobs: a restore and an export running at the kill (their
#     workers held by locks until it) end FAILED with the reason (the
#     restore's half-made table gone, none left CREATING; DescribeExport's
#     FailureMessage), an UpdateTable adding an index at the kill leaves the
#     table ACTIVE, and a restore and an export started afterwards run on
#     the new primary, whose export root (each node's own setting) is set;
#   - a key revoked before the failover is refused after it, a live one not;
#   - TTL: expired items stay unread, and the sweep (ddb.expire), refused on
#     the standby, deletes them on the new primary;
#   - throttling: a PROVISIONED table throttles before and after, its bucket
#     full again on the new primary (buckets are each server's shared memory);
#   - metrics: the gateway's /metrics counters go on, not reset.
# About 2.5 minutes.  Needs the extension and ddb-gateway built and
# installed (tools/test.sh), and Debian's postgresql-15-auto-failover and
# pg-auto-failover-cli; prints TAP (test/lib.sh).
#
#   bash test/ha_state.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
WORK="$ROOT/build/ha-state-test"
export DDB_HA_DIR="$WORK/deployment" DDB_HA_INSTALLED=1
export DDB_HA_PGPORT=${DDB_HA_STATE_TEST_PGPORT:-55745}
export DDB_HA_GATEWAY_PORT=${DDB_HA_STATE_TEST_GATEWAY_PORT:-55748}
ITEMS=20000

ha() { bash "$ROOT/tools/ha.sh" "$@"; }

started=$SECONDS   # the diag lines below count from here
start_deployment ha.sh start
source "$DDB_HA_DIR/deployment.env"   # SOCKET, BASE_PORT, GATEWAY_PORT
NODE1=$((BASE_PORT + 1)) NODE2=$((BASE_PORT + 2))
GATEWAY_PID=$(cat "$DDB_HA_DIR/gateway.pid")

# psql on the ddb database of a node (by port)
node_psql() {  # port, psql arguments...
    local port=$1
    shift
    q -h "$SOCKET" -p "$port" -U postgres -d ddb "$@"
}
# a step of test/ha_state.py with the administrator's key, its checks as TAP
client() {  # command, arguments...
    /usr/bin/python3 "$ROOT/test/ha_state.py" "$ENDPOINT" "$KEY_ID" "$SECRET" "$WORK" "$@"
}
# the gateway's counters (Prometheus's text: "name{labels} value" lines of *_total)
counters() {
    curl -s "$ENDPOINT/metrics" | grep -E '^[a-z_]+_total(\{| )' | sort
}

# Throttling on for every connection to ddb (the standby has it from the catalog too); the
# gateway's connections, made before, are closed, and its next ones have it.
node_psql "$NODE1" -c "ALTER DATABASE ddb SET ddb.throttling = on"
node_psql "$NODE1" -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                       WHERE datname = 'ddb' AND backend_type = 'client backend' AND application_name = ''" >/dev/null
# ha_big (with an index: a restore rebuilds it) and ha_gsi, loaded in SQL
node_psql "$NODE1" >/dev/null <<SQL
SELECT ddb.create_table('ha_big', 'id');
SELECT ddb.create_index('ha_big', 'ByGroup', 'g');
SELECT count(ddb.put_item('ha_big', jsonb_build_object('id', 'k' || i, 'g', 'g' || i % 100, 'pad', repeat('x', 200))))
FROM generate_series(1, $ITEMS) i;
SELECT ddb.create_table('ha_gsi', 'id');
SELECT count(ddb.put_item('ha_gsi', jsonb_build_object('id', 'k' || i, 'n', i % 1000, 'pad', repeat('x', 200))))
FROM generate_series(1, $ITEMS) i;
SQL
check "$ITEMS items in ha_big and in ha_gsi" "$ITEMS $ITEMS" \
    "$(node_psql "$NODE1" -c "SELECT (SELECT count(*) FROM public.ha_big) || ' ' || (SELECT count(*) FROM public.ha_gsi)")"
checks_from client setup
# the export root: each node's own setting (ALTER SYSTEM), made on both; its bucket a directory
mkdir -p "$WORK/exports/ha-exports" && chown -R postgres: "$WORK/exports"
for port in "$NODE1" "$NODE2"; do
    node_psql "$port" -c "ALTER SYSTEM SET ddb.export_root = '$WORK/exports'" -c "SELECT pg_reload_conf()" >/dev/null
done
diag "loaded and set up in $((SECONDS - started)) s since the start"

client writer 120 >"$WORK/writes.log" 2>&1 &
writer=$!
sleep 2
checks_from client before
check "throttling: the spent bucket is node1's; node2, a standby, has none" "t 0" \
    "$(node_psql "$NODE1" -c "SELECT bool_or(write_units < 0) FROM ddb.throttling_buckets()") $(node_psql "$NODE2" -c "SELECT count(*) FROM ddb.throttling_buckets()")"
refused=$(node_psql "$NODE2" -c "SELECT ddb.expire('ha_ttl')" 2>&1 | grep '^ERROR')
check "ttl: the sweep on the standby is refused (read-only)" "1" "$(grep -c 'in a read-only transaction' <<<"$refused")"
diag "$refused"

# a second key, used (so cached by the gateway), then revoked just before the kill
read -r KEY2 SECRET2 <<<"$(node_psql "$NODE1" -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
checks_from client revoked "$KEY2" "$SECRET2" ok
node_psql "$NODE1" -c "SELECT ddb.revoke_access_key('$KEY2')" >/dev/null
checks_from client revoked "$KEY2" "$SECRET2" UnrecognizedClientException
counters >"$WORK/metrics.before"

# An export at the kill, its worker held by a lock on the table's history (which the request does not read).
HISTORY=$(node_psql "$NODE1" -c "SELECT format('%I.%I', t.schema_name, c.history_relation)
                                 FROM ddb.continuous_backups c JOIN ddb.tables t USING (table_name) WHERE t.table_name = 'ha_export'")
# the sessions holding (true) or waiting for (false) a lock on a relation, or only its jobs' workers
relation_locks() {  # relation, true|false, [job]
    node_psql "$NODE1" -c "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
                           WHERE l.relation = '$1'::regclass AND l.granted = $2 ${3:+AND a.backend_type = 'ddb_model job'}"
}
node_psql "$NODE1" -c "BEGIN" -c "LOCK TABLE $HISTORY IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(300)" \
    >"$WORK/export_holder.log" 2>&1 &
wait_for 30 '[ "$(relation_locks "$HISTORY" true)" = 1 ]'
checks_from client export
check "the export's worker waits for the table's history, the job IN_PROGRESS" "1 IN_PROGRESS" \
    "$(wait_for 30 '[ "$(relation_locks "$HISTORY" false job)" = 1 ]'; relation_locks "$HISTORY" false job) $(node_psql "$NODE1" -c "SELECT status FROM ddb.jobs WHERE kind = 'export'")"

# The jobs at the kill: a restore (a background worker), an index being added (its backfill in the
# request).  The restore would end within a second; to have it running at the kill, its worker waits
# for a lock on the backup's relation that a session ("holder") takes as soon as the request has
# committed: another session ("gate") holds that lock first, until both the request (ACCESS SHARE)
# and the holder (ACCESS EXCLUSIVE) wait for it, in that order, which is the order PostgreSQL grants
# them in; the worker, started once the request has committed, waits behind the holder.
BACKUP_RELATION="ddb_backups.$(node_psql "$NODE1" -c "SELECT quote_ident(relation_name) FROM ddb.backups WHERE backup_name = 'ha-big'")"
node_psql "$NODE1" -c "BEGIN" -c "LOCK TABLE $BACKUP_RELATION IN ACCESS EXCLUSIVE MODE" -c "DO \$\$
    BEGIN
        FOR i IN 1..600 LOOP
            EXIT WHEN (SELECT count(*) FROM pg_locks WHERE relation = '$BACKUP_RELATION'::regclass AND NOT granted) >= 2;
            PERFORM pg_sleep(0.05);
        END LOOP;
    END \$\$" -c "COMMIT" >"$WORK/gate.log" 2>&1 &
gate=$!
wait_for 30 '[ "$(relation_locks "$BACKUP_RELATION" true)" = 1 ]'
client jobs >"$WORK/jobs.log" 2>&1 &
restoring=$!
wait_for 30 '[ "$(relation_locks "$BACKUP_RELATION" false)" = 1 ]'
node_psql "$NODE1" -c "BEGIN" -c "LOCK TABLE $BACKUP_RELATION IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(300)" \
    >"$WORK/holder.log" 2>&1 &
wait "$gate"
wait "$restoring"
checks_from cat "$WORK/jobs.log"
check "the restore's worker waits for the backup, the job IN_PROGRESS" "1 IN_PROGRESS" \
    "$(wait_for 30 '[ "$(relation_locks "$BACKUP_RELATION" false job)" = 1 ]'; relation_locks "$BACKUP_RELATION" false job) $(node_psql "$NODE1" -c "SELECT status FROM ddb.jobs WHERE kind = 'restore'")"
client add_index >"$WORK/add_index.answer" 2>&1 &
adding=$!
sleep 0.3
killed=$(date +%s.%N)
ha kill-primary >"$WORK/kill.log" 2>&1
check "kill-primary: node2 promoted" "0 primary=node2 (was node1)" "$? $(grep '^primary=' "$WORK/kill.log")"
diag "promoted $(sed -n 's/^seconds=//p' "$WORK/kill.log") s after the kill"

# the writer goes on until its writes have been acknowledged for 5 s on the new primary
wait_for 60 "awk -v t=$killed '\$1 > t + 0 && \$4 == \"ok\"' '$WORK/writes.log' | grep -q ."
sleep 5
touch "$WORK/stop"
wait "$writer"
check "the writer ran to its end" "0" "$?"
wait "$adding"
diag "the UpdateTable adding index ByN was answered $(cat "$WORK/add_index.answer")"

checks_from client after "$killed"
diag "$((SECONDS - started)) s since the start"
check "jobs: the restore's job ended FAILED with the reason, on the new primary" \
    "FAILED|the background worker running the job ended before it finished (the server restarted or crashed, or the worker was terminated)" \
    "$(node_psql "$NODE2" -c "SELECT status, error FROM ddb.jobs WHERE kind = 'restore' ORDER BY id LIMIT 1")"
diag "the restore's job started $(node_psql "$NODE2" -c "SELECT round(($killed - extract(epoch FROM started_at))::numeric, 2)
    FROM ddb.jobs WHERE kind = 'restore' ORDER BY id LIMIT 1") s before the kill"
check "jobs: the restore after the failover COMPLETED, all $ITEMS items" "COMPLETED $ITEMS" \
    "$(node_psql "$NODE2" -c "SELECT status FROM ddb.jobs WHERE kind = 'restore' ORDER BY id DESC LIMIT 1") $(node_psql "$NODE2" -c "SELECT count(*) FROM public.ha_restored_after")"
check "the export root, each node's own setting, is set on the new primary" "$WORK/exports" \
    "$(node_psql "$NODE2" -c "SHOW ddb.export_root")"
check "ttl: the sweep on the new primary deletes the two expired items, two stay" "2 2" \
    "$(node_psql "$NODE2" -c "SELECT ddb.expire('ha_ttl')") $(node_psql "$NODE2" -c "SELECT count(*) FROM public.ha_ttl")"
checks_from client revoked "$KEY2" "$SECRET2" UnrecognizedClientException
checks_from client revoked "$KEY_ID" "$SECRET" ok

counters >"$WORK/metrics.after"
check "metrics: the same gateway (not restarted) answers /metrics" "$GATEWAY_PID" "$(cat "$DDB_HA_DIR/gateway.pid")"
# each counter of before, with its value after: none went down
decreased=$(awk 'NR == FNR { before[$1] = $2; next } ($1 in before) && $2 + 0 < before[$1] + 0' \
    "$WORK/metrics.before" "$WORK/metrics.after")
check "metrics: no counter went back (of $(wc -l <"$WORK/metrics.before"))" "" "$decreased"
sum() { awk '$1 ~ /^ddb_gateway_requests_total/ { n += $2 } END { print n + 0 }' "$1"; }
diag "requests counted: $(sum "$WORK/metrics.before") before the kill, $(sum "$WORK/metrics.after") at the end; 503s: $(grep 'status="503"' "$WORK/metrics.after" | awk '{ n += $2 } END { print n + 0 }')"
check "metrics: the requests refused during the failover are counted (503)" "yes" \
    "$(grep -q 'status="503"' "$WORK/metrics.after" && echo yes)"

ha stop >"$WORK/stop.log" 2>&1
check "stop" "0" "$?"

done_testing
