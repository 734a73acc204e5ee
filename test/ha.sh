#!/usr/bin/env bash
# High availability (tools/ha.sh, docs/operations.md): starts a formation
# of pg_auto_failover (a monitor, a primary, a synchronous secondary) with
# ddb-gateway in front, on a port block of its own (servers
# DDB_HA_TEST_PGPORT, default 55704-55706; gateway DDB_HA_TEST_GATEWAY_PORT,
# default 55711) in build/ha-test/deployment; writes items through the
# gateway with boto3 (Debian's) while tools/ha.sh kill-primary kills the
# primary (SIGKILL to its pg_autoctl and its postmaster); checks that the
# secondary was promoted, that the gateway answered only 503 meanwhile and
# took writes again without a restart, and that every acknowledged item is
# on the new primary (read back with psql); then stops it and checks that
# nothing of it runs.  About a minute.
# Needs the extension and ddb-gateway built and installed (tools/test.sh),
# and Debian's postgresql-15-auto-failover and pg-auto-failover-cli;
# prints TAP (test/lib.sh).
#
#   bash test/ha.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
WORK="$ROOT/build/ha-test"
export DDB_HA_DIR="$WORK/deployment" DDB_HA_INSTALLED=1
export DDB_HA_PGPORT=${DDB_HA_TEST_PGPORT:-55704}
export DDB_HA_GATEWAY_PORT=${DDB_HA_TEST_GATEWAY_PORT:-55711}
TABLE=ha_items

ha() { bash "$ROOT/tools/ha.sh" "$@"; }

start_deployment ha.sh start
check "it prints the endpoint and an access key" "http://127.0.0.1:$DDB_HA_GATEWAY_PORT yes" \
    "$ENDPOINT $([ -n "$KEY_ID" ] && [ -n "$SECRET" ] && echo yes)"
source "$DDB_HA_DIR/deployment.env"   # SOCKET, BASE_PORT, GATEWAY_PORT
NODE1=$((BASE_PORT + 1)) NODE2=$((BASE_PORT + 2))
# psql on the ddb database of a node (by port)
node_psql() {  # port, psql arguments...
    local port=$1
    shift
    q -h "$SOCKET" -p "$port" -U postgres -d ddb "$@"
}

ha status >"$WORK/status.log" 2>&1
check "status: node1 primary, node2 secondary, the gateway running" "0 1 1 1" \
    "$? $(grep -Ec '^ *node1 .*\| *primary \| *primary$' "$WORK/status.log") $(grep -Ec \
      '^ *node2 .*\| *secondary \| *secondary$' "$WORK/status.log") $(grep -c '^gateway .* running' "$WORK/status.log")"
check "the primary commits once the secondary has it (synchronous replication)" \
    "ANY 1 (pgautofailover_standby_2) on" \
    "$(node_psql "$NODE1" -c "SHOW synchronous_standby_names") $(node_psql "$NODE1" -c "SHOW synchronous_commit")"
# node_psql prints "shared_preload_libraries|ddb_model version|in recovery"
EXTENSION="SELECT current_setting('shared_preload_libraries'), (SELECT count(*) FROM pg_extension WHERE extname = 'ddb_model'),
                  pg_is_in_recovery()"
check "ddb_model preloaded and created on both nodes, node2 a standby" "ddb_model|1|f ddb_model|1|t" \
    "$(node_psql "$NODE1" -c "$EXTENSION") $(node_psql "$NODE2" -c "$EXTENSION")"
ha start >"$WORK/again.log" 2>&1
check "a second start refuses while it runs" "1 1" "$? $(grep -c 'runs in .* already' "$WORK/again.log")"

# The writer: PutItem after PutItem (no SDK retries, to see each answer) for SECONDS; a line per
# request: its time, the item's id, and ok or the HTTP status and error code.
cat >"$WORK/writer.py" <<'PY'
import sys, time
import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

endpoint, key_id, secret, table, seconds = sys.argv[1:6]
client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                      aws_access_key_id=key_id, aws_secret_access_key=secret,
                      config=Config(retries={"mode": "standard", "total_max_attempts": 1},
                                    connect_timeout=2, read_timeout=10))
client.create_table(TableName=table, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                    AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                    BillingMode="PAY_PER_REQUEST")
client.get_waiter("table_exists").wait(TableName=table, WaiterConfig={"Delay": 1})
print("ready", flush=True)
end, i = time.time() + float(seconds), 0
while time.time() < end:
    i += 1
    started = time.time()
    try:
        client.put_item(TableName=table, Item={"id": {"S": "i%06d" % i}, "n": {"N": str(i)}})
        answer = "ok"
    except ClientError as e:
        answer = "%s %s" % (e.response["ResponseMetadata"].get("HTTPStatusCode"), e.response["Error"]["Code"])
    except BotoCoreError as e:
        answer = "transport " + type(e).__name__
    print("%.3f i%06d %s" % (started, i, answer), flush=True)
    time.sleep(0.02)
PY
/usr/bin/python3 "$WORK/writer.py" "$ENDPOINT" "$KEY_ID" "$SECRET" "$TABLE" 30 >"$WORK/writes.log" 2>&1 &
writer=$!
wait_for 30 'grep -q "^ready" "$WORK/writes.log"'
sleep 5
killed=$(date +%s.%N)
ha kill-primary >"$WORK/kill.log" 2>&1
check "kill-primary: node2 promoted" "0 primary=node2 (was node1)" "$? $(grep '^primary=' "$WORK/kill.log")"
diag "promoted $(sed -n 's/^seconds=//p' "$WORK/kill.log") s after the kill"
wait "$writer"
check "the writer ran to its end" "0" "$?"

acked=$(grep -c ' ok$' "$WORK/writes.log")
first_ok=$(awk -v t="$killed" '$1 ~ /^[0-9.]+$/ && $1 > t && $3 != "ok" { failed = 1 }
                               failed && $3 == "ok" { printf "%.1f", $1 - t; exit }' "$WORK/writes.log")
check "the gateway took writes again after the failover, without a restart" "yes" \
    "$([ -n "$first_ok" ] && [ "$(awk -v t="$killed" '$1 ~ /^[0-9.]+$/ && $1 > t && $3 == "ok"' "$WORK/writes.log" | wc -l)" -gt 10 ] && echo yes)"
diag "$acked items acknowledged; the first write after the kill $first_ok s after it"
check "meanwhile every request failed with 503 ServiceUnavailable (retryable), none otherwise" "" \
    "$(awk '$1 ~ /^[0-9.]+$/ && $3 != "ok" && $3 " " $4 != "503 ServiceUnavailable"' "$WORK/writes.log")"
diag "$(awk '$1 ~ /^[0-9.]+$/ && $3 != "ok"' "$WORK/writes.log" | wc -l) requests answered 503"

awk '$1 ~ /^[0-9.]+$/ && $3 == "ok" { print $2 }' "$WORK/writes.log" | sort >"$WORK/acked"
node_psql "$NODE2" -c "SELECT item->>'id' FROM ddb.scan('$TABLE') AS item" | sort >"$WORK/on_node2"
check "every acknowledged item is on the new primary" "0" "$(comm -23 "$WORK/acked" "$WORK/on_node2" | wc -l)"
# a request answered 503 may have committed before its connection was lost
diag "$(wc -l <"$WORK/on_node2") items on node2, $(comm -13 "$WORK/acked" "$WORK/on_node2" | wc -l) of them not acknowledged"

ha stop >"$WORK/stop.log" 2>&1
check "stop" "0" "$?"
running=$(for dir in monitor node1 node2; do
              [ -f "$DDB_HA_DIR/$dir/postmaster.pid" ] && kill -0 "$(head -1 "$DDB_HA_DIR/$dir/postmaster.pid")" 2>/dev/null && echo "$dir"
          done; [ -d "$SOCKET" ] && echo "$SOCKET")
check "nothing of it runs after stop, its socket directory gone" "" "$running"

done_testing
