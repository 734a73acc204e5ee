#!/usr/bin/env bash
# What writes survive a failover (issue 32, part 3; tools/ha.sh,
# docs/operations.md): starts a formation of pg_auto_failover with
# ddb-gateway in front (servers DDB_HA_WRITES_PGPORT, default 55740-55742;
# gateway DDB_HA_WRITES_GATEWAY_PORT, default 55743) in
# build/ha-writes-test/deployment; runs clients through the gateway
# (test/ha_writes/load.py: boto3, Debian's, SDK retries off, a log line per
# request) while tools/ha.sh kill-primary kills the primary once (SIGKILL
# to its pg_autoctl and its postmaster):
#   - one client per kind of write, each on keys of its own: PutItem,
#     UpdateItem (SET v, ADD n), DeleteItem, BatchWriteItem and
#     TransactWriteItems (under a ClientRequestToken, sent again with it
#     while it answers 503);
#   - three clients of a conditional counter (read it strongly consistent,
#     then SET version = :next if version = :seen);
#   - point-in-time recovery on both tables from before the kill.
# Then, on the new primary (test/ha_writes/verify.py, psql): every
# acknowledged write is there; the counter's acknowledged versions are a
# sequence without a gap or a version acknowledged twice, and its history
# commits each version once; each acknowledged transaction sent again
# with its token succeeds without applying twice, and with other
# parameters is IdempotentParameterMismatchException; the point-in-time
# recovery history holds every acknowledged version, and a restore to the
# latest time has every item.  About a minute and a half.
# Needs the extension and ddb-gateway built and installed (tools/test.sh),
# and Debian's postgresql-15-auto-failover and pg-auto-failover-cli;
# prints TAP (test/lib.sh).
#
#   bash test/ha_writes.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
WORK="$ROOT/build/ha-writes-test"
export DDB_HA_DIR="$WORK/deployment" DDB_HA_INSTALLED=1
export DDB_HA_PGPORT=${DDB_HA_WRITES_PGPORT:-55740}
export DDB_HA_GATEWAY_PORT=${DDB_HA_WRITES_GATEWAY_PORT:-55743}
KILL_AFTER=5        # seconds of writes before the kill
STOP_FILE="$WORK/stop"   # the clients stop once it exists

ha() { bash "$ROOT/tools/ha.sh" "$@"; }

start_deployment ha.sh start
mkdir -p "$WORK/logs"
source "$DDB_HA_DIR/deployment.env"   # SOCKET, BASE_PORT
NODE2=$((BASE_PORT + 2))

# test/ha_writes/load.py, its output in NAME.log
load() {  # name, load.py arguments...
    local name=$1
    shift
    /usr/bin/python3 "$ROOT/test/ha_writes/load.py" "$ENDPOINT" "$KEY_ID" "$SECRET" "$@" >"$WORK/$name.log" 2>&1
}

load setup setup
check "the tables, their point-in-time recovery and the items to delete made through the gateway" "0 ready done" \
    "$? $(tail -2 "$WORK/setup.log" | tr '\n' ' ' | sed 's/ $//')"
[ "$status" = 0 ] || { tail -5 "$WORK/setup.log" | diag; exit 1; }

# True when each client has had a request acknowledged that it sent after a time (epoch seconds).
acknowledged_since() {  # time
    local log
    for log in "${LOGS[@]}"; do
        awk -v t="$1" '$1 > t && $5 == "ok" { found = 1; exit } END { exit !found }' "$log" || return 1
    done
}

LOGS=("$WORK"/logs/{put,update,delete,batch,transact,counter1,counter2,counter3}.log)
load run run "$WORK/logs" "$STOP_FILE" &
clients=$!
# boto3 takes seconds to start on a busy machine
wait_for 60 'grep -q "^ready" "$WORK/run.log" && acknowledged_since 0'
check "the eight clients write" "ready yes" "$(head -1 "$WORK/run.log") $(acknowledged_since 0 && echo yes)"
sleep "$KILL_AFTER"
killed=$(date +%s.%N)
ha kill-primary >"$WORK/kill.log" 2>&1
check "kill-primary: node2 promoted" "0 primary=node2 (was node1)" "$? $(grep '^primary=' "$WORK/kill.log")"
diag "promoted $(sed -n 's/^seconds=//p' "$WORK/kill.log") s after the kill"
promoted=$(date +%s.%N)
wait_for 60 'acknowledged_since "$promoted"'
sleep 2
touch "$STOP_FILE"
wait "$clients"
check "the clients ran to their end" "0 done" "$? $(tail -1 "$WORK/run.log")"
grep -h -A5 Traceback "$WORK"/logs/*.log | head -20 | diag

# after the failover: each acknowledged transaction again with its token, then a restore of the latest time
load after after "$WORK/logs"
check "the transactions sent again, and the restore, ran to their end" "0 done" "$? $(tail -1 "$WORK/after.log")"
grep -h -A5 Traceback "$WORK"/logs/{replay,restore}.log | head -20 | diag
node_psql() { q -h "$SOCKET" -p "$NODE2" -U postgres -d ddb "$@"; }
check "the restore's background job ends, on the new primary" "COMPLETED" \
    "$(node_psql -c "SELECT ddb.wait_for_job(job_id) FROM ddb.table_restores WHERE table_name = 'ha_writes_restored'")"

checks_from /usr/bin/python3 "$ROOT/test/ha_writes/verify.py" "$WORK/logs" "$killed" "$SOCKET" "$NODE2" \
    2>"$WORK/verify.log"
check "the checks ran to their end" "0" "$?"
[ -s "$WORK/verify.log" ] && tail -5 "$WORK/verify.log" | diag

ha stop >"$WORK/stop.log" 2>&1
check "stop" "0" "$?"

done_testing
