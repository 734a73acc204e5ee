#!/usr/bin/env bash
# ddb-gateway reading from a hot standby (docs/scale-out.md): a streaming
# standby of the test cluster made with pg_basebackup; eventually consistent
# reads land on it, consistent reads and writes on the primary; a standby
# that lags past --max-replica-lag is skipped, and one that stops costs no
# failed request.  Runs against the cluster of tools/test.sh
# (PGHOST/PGPORT/PGUSER set, local replication trusted, as initdb --auth=trust
# leaves it); prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir gateway-replicas
DB=ddb_gateway_replicas
PORT=${DDB_REPLICA_GATEWAY_PORT:-55545}
STANDBY_PORT=${DDB_STANDBY_PORT:-55446}
URL="http://127.0.0.1:$PORT"
PGBIN=/usr/lib/postgresql/15/bin

as_postgres() { (cd / && runuser -u postgres -- "$@"); }
# call OPERATION BODY: the gateway's status and body
call() {
    curl -s -o "$WORK/body" -w '%{http_code}' -H "X-Amz-Target: DynamoDB_20120810.$1" \
        -H 'Content-Type: application/x-amz-json-1.0' --data-binary "$2" "$URL/"
}
# metric NAME_AND_LABELS: its value on /metrics
metric() { curl -s "$URL/metrics" | grep -F "$1 " | awk '{print $2}'; }
# usable VALUE: waits (10 s at most) until the standby's usable gauge is VALUE; prints it
usable() {
    local value=$1 gauge='ddb_gateway_replica_usable{replica="1"}'
    wait_for 10 '[ "$(metric "$gauge")" = "$value" ]'
    metric "$gauge"
}
standby_psql() { psql -X -q -At -h "$STANDBY_SOCKET" -p "$STANDBY_PORT" -d "$DB" "$@"; }

fresh_db --extension "$DB"
q -c "SELECT ddb.create_table('Rep', 'pk')" \
    -c "SELECT ddb.put_item('Rep', '{\"pk\": \"a\", \"n\": 0}')" >/dev/null

# the standby: a base backup of the test cluster, streaming from it, its socket in a short directory
STANDBY_DIR="$WORK/standby"
STANDBY_SOCKET=$(mktemp -d /tmp/ddb_standby.XXXXXX)
mkdir -p "$STANDBY_DIR"
chown postgres:postgres "$STANDBY_DIR" "$STANDBY_SOCKET"
chmod 700 "$STANDBY_DIR"
at_exit 'as_postgres "$PGBIN/pg_ctl" -D "$STANDBY_DIR" -m immediate -w stop >/dev/null 2>&1; rm -rf "$STANDBY_SOCKET"'
as_postgres "$PGBIN/pg_basebackup" -h "$PGHOST" -p "$PGPORT" -U postgres -D "$STANDBY_DIR" -R -X stream -c fast
as_postgres "$PGBIN/pg_ctl" -D "$STANDBY_DIR" -l "$STANDBY_DIR/standby.log" -w start \
    -o "-p $STANDBY_PORT -k $STANDBY_SOCKET -c listen_addresses='' -c hot_standby=on -c max_prepared_transactions=64" >/dev/null
check "a streaming standby of the test cluster" "t" "$(standby_psql -c 'SELECT pg_is_in_recovery()')"

start_gateway "$PORT" "$WORK/gateway.log" --development --pool 2 --access-log off --dsn "dbname=$DB" \
    --replica "host=$STANDBY_SOCKET port=$STANDBY_PORT dbname=$DB" --max-replica-lag 1
check "the gateway sees the standby well" "1" "$(usable 1)"

get='{"TableName": "Rep", "Key": {"pk": {"S": "a"}}}'
consistent='{"TableName": "Rep", "Key": {"pk": {"S": "a"}}, "ConsistentRead": true}'
for _ in $(seq 10); do call GetItem "$get" >/dev/null; done
call Query '{"TableName": "Rep", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}}}' >/dev/null
call BatchGetItem '{"RequestItems": {"Rep": {"Keys": [{"pk": {"S": "a"}}]}}}' >/dev/null
for _ in $(seq 3); do call GetItem "$consistent" >/dev/null; done
call BatchGetItem '{"RequestItems": {"Rep": {"Keys": [{"pk": {"S": "a"}}], "ConsistentRead": true}}}' >/dev/null
check "eventually consistent GetItem, Query and BatchGetItem are read on the standby; consistent ones are not" "12 0" \
    "$(metric 'ddb_gateway_reads_total{node="replica1"}') $(metric 'ddb_gateway_reads_total{node="primary"}')"
check "the standby's backends served them" "t" \
    "$(standby_psql -c "SELECT count(*) > 0 FROM pg_stat_database WHERE datname = '$DB' AND xact_commit > 0")"

seen=0
for i in $(seq 20); do
    call PutItem "{\"TableName\": \"Rep\", \"Item\": {\"pk\": {\"S\": \"a\"}, \"n\": {\"N\": \"$i\"}}}" >/dev/null
    call GetItem "$consistent" >/dev/null
    grep -q "\"N\": \"$i\"" "$WORK/body" && seen=$((seen + 1))
done
check "a consistent read after a write always sees it (20 of 20)" "20" "$seen"

# a standby whose replay is paused lags: skipped once past the bound, reads go to the primary
standby_psql -c "SELECT pg_wal_replay_pause()" >/dev/null
call PutItem '{"TableName": "Rep", "Item": {"pk": {"S": "a"}, "n": {"N": "100"}}}' >/dev/null
check "a standby lagging past --max-replica-lag is skipped" "0" "$(usable 0)"
before=$(metric 'ddb_gateway_reads_total{node="primary"}')
call GetItem "$get" >/dev/null
check "an eventually consistent read then comes from the primary, with the latest write" "1 1" \
    "$(($(metric 'ddb_gateway_reads_total{node="primary"}') - before)) $(grep -c '"N": "100"' "$WORK/body")"
standby_psql -c "SELECT pg_wal_replay_resume()" >/dev/null
check "and the standby serves again once it caught up" "1" "$(usable 1)"

# a standby that stops costs no failed request
as_postgres "$PGBIN/pg_ctl" -D "$STANDBY_DIR" -m immediate -w stop >/dev/null
ok=0
for _ in $(seq 20); do
    [ "$(call GetItem "$get")" = 200 ] && ok=$((ok + 1))
done
check "a stopped standby: 20 eventually consistent reads, 20 served" "20" "$ok"
check "and it is skipped" "0" "$(usable 0)"

stop_gateway
check "the gateway exits 0" "0" "$?"

# the replica setting is a list: a later source's list replaces an earlier one's, as a single value does
printf 'replica = host=/nonexistent dbname=a\n' >"$WORK/replicas.conf"
DDB_GATEWAY_REPLICA="host=/nonexistent dbname=b; host=/nonexistent dbname=c" \
    start_gateway "$((PORT + 1))" "$WORK/list.log" --config "$WORK/replicas.conf" --development --access-log off --dsn "dbname=$DB"
check "two standbys from DDB_GATEWAY_REPLICA (';'), in place of the config file's one" "replica1 replica2" \
    "$(curl -s "http://127.0.0.1:$((PORT + 1))/metrics" | grep -o 'reads_total{node="replica[0-9]"' | grep -o 'replica[0-9]' | tr '\n' ' ' | sed 's/ $//')"
stop_gateway
drop_db "$DB"
done_testing
