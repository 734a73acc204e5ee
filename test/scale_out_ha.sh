#!/usr/bin/env bash
# The sharded deployment with a pg_auto_failover formation per shard
# (tools/scale-out.sh start --ha, docs/scale-out.md "High availability"): on a
# port block of its own (servers DDB_SCALE_OUT_HA_TEST_PGPORT, default
# 55780-55785; gateway DDB_SCALE_OUT_HA_TEST_GATEWAY_PORT, default 55789) in
# build/scale-out-ha-test/deployment.  Leaves two transactions across the
# shards in doubt (the router's test hook ddb_router.failpoint: one past its
# decision, one before it), then, while a boto3 client writes items and
# transactions over both shards through the gateway, kills shard1's primary
# (tools/scale-out.sh kill-primary: SIGKILL to its pg_autoctl and its
# postmaster).  Checks that shard1's secondary was promoted; that shard2's
# items were served throughout and shard1's answered only 503 meanwhile and
# were taken again without a restart (by the gateway's router backends, whose
# PL/Proxy and dblink connections led to the dead node); that every
# acknowledged item is on the shards' current primaries and served by the
# gateway; that the prepared parts on shard1 are on its new primary
# (synchronous replication carries a PREPARE TRANSACTION);
# that ddb_router.recover_in_doubt() commits the decided transaction and rolls
# back the undecided one on both shards; and that afterwards each transaction
# is on both shards or on neither, nothing is left prepared, and no decision
# is left.  Then stops it and checks that nothing of it runs.  1.3 to 3.5
# minutes on 2 cores (the more other work beside), half of it or more starting.
# Needs the extension and ddb-gateway built and installed (tools/test.sh),
# and Debian's postgresql-15-auto-failover and pg-auto-failover-cli;
# prints TAP (test/lib.sh).
#
#   bash test/scale_out_ha.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
WORK="$ROOT/build/scale-out-ha-test"
export DDB_SCALE_OUT_DIR="$WORK/deployment" DDB_SCALE_OUT_INSTALLED=1
export DDB_SCALE_OUT_PGPORT=${DDB_SCALE_OUT_HA_TEST_PGPORT:-55780}
export DDB_SCALE_OUT_GATEWAY_PORT=${DDB_SCALE_OUT_HA_TEST_GATEWAY_PORT:-55789}
# the router's notices (PL/Proxy's "dropping stale conn") are no part of the checks
export PGOPTIONS="-c client_min_messages=warning"
TABLE=ha_items

scale_out() { bash "$ROOT/tools/scale-out.sh" "$@"; }

start_deployment scale-out.sh start --ha
check "it prints the endpoint and an access key" "http://127.0.0.1:$DDB_SCALE_OUT_GATEWAY_PORT yes" \
    "$ENDPOINT $([ -n "$KEY_ID" ] && [ -n "$SECRET" ] && echo yes)"
source "$DDB_SCALE_OUT_DIR/deployment.env"   # HA, SOCKET, BASE_PORT, GATEWAY_PORT
ROUTER=$BASE_PORT
SHARD1_NODE1=$((BASE_PORT + 1)) SHARD2_NODE1=$((BASE_PORT + 2))
SHARD1_NODE2=$((BASE_PORT + 3)) SHARD2_NODE2=$((BASE_PORT + 4))
# psql on the ddb database of a server (by port)
node_psql() {  # port, psql arguments...
    local port=$1
    shift
    q -h "$SOCKET" -p "$port" -U postgres -d ddb "$@"
}
# psql on a shard's current primary, found as the router finds it (both nodes, the writable one)
primary_psql() {  # shard1|shard2, psql arguments...
    local ports
    case "$1" in shard1) ports=$SHARD1_NODE1,$SHARD1_NODE2 ;; shard2) ports=$SHARD2_NODE1,$SHARD2_NODE2 ;; esac
    shift
    q -d "host=$SOCKET,$SOCKET port=$ports user=postgres dbname=ddb target_session_attrs=read-write" "$@"
}

scale_out status >"$WORK/status.log" 2>&1
check "status: six servers and the gateway run, each formation a primary and a secondary" "0 7 2 2" \
    "$? $(grep -c ' running' "$WORK/status.log") $(grep -Ec '\| *primary \| *primary$' "$WORK/status.log") $(grep -Ec \
      '\| *secondary \| *secondary$' "$WORK/status.log")"
check "each shard's primary commits once its secondary has it (synchronous replication)" "ANY 1 ANY 1" \
    "$(node_psql "$SHARD1_NODE1" -c "SHOW synchronous_standby_names" | cut -c1-5) $(node_psql "$SHARD2_NODE1" -c "SHOW synchronous_standby_names" | cut -c1-5)"
check "the router's map names both nodes of each shard, the writable one wanted" \
    "shard1 $SHARD1_NODE1,$SHARD1_NODE2 read-write|shard2 $SHARD2_NODE1,$SHARD2_NODE2 read-write" \
    "$(node_psql "$ROUTER" -c "SELECT node_name || ' ' || substring(connstr from 'port=(\S+)') || ' ' ||
                                      substring(connstr from 'target_session_attrs=(\S+)') FROM ddb_router.nodes ORDER BY 1" | paste -sd'|')"
scale_out start --ha >"$WORK/again.log" 2>&1
check "a second start refuses while it runs" "1 1" "$? $(grep -c 'runs in .* already' "$WORK/again.log")"

node_psql "$ROUTER" -c "SELECT ddb_router.execute_metered(NULL, 'CreateTable', '{\"TableName\": \"$TABLE\",
    \"BillingMode\": \"PAY_PER_REQUEST\", \"KeySchema\": [{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}],
    \"AttributeDefinitions\": [{\"AttributeName\": \"pk\", \"AttributeType\": \"S\"}]}')" >/dev/null
# keys x1, x2, ... of each shard (the routing hash of the partition key), 400 each
keys_on() {  # shard
    node_psql "$ROUTER" -c "SELECT 'x' || i FROM generate_series(1, 2000) i
                            WHERE ddb_router.node_of(ddb.ddb_key_route_hash(ddb.ddb_key('x' || i))) = '$1' ORDER BY i LIMIT 400"
}
keys_on shard1 >"$WORK/keys1"
keys_on shard2 >"$WORK/keys2"
check "400 keys of each shard" "400 400" "$(wc -l <"$WORK/keys1") $(wc -l <"$WORK/keys2")"

# --- two transactions across the shards left in doubt ---------------------
put() { printf '{"Put": {"TableName": "%s", "Item": {"pk": {"S": "%s"}, "n": {"N": "1"}}}}' "$TABLE" "$1"; }
mapfile -t K1 <"$WORK/keys1"
mapfile -t K2 <"$WORK/keys2"
# in_doubt POINT KEY1 KEY2: a TransactWriteItems of KEY1 (on shard1) and KEY2 (on shard2) whose router's backend ends at POINT
in_doubt() {
    node_psql "$ROUTER" -c "SET ddb_router.failpoint = '$1'" \
        -c "SELECT ddb_router.execute_metered(NULL, 'TransactWriteItems', '{\"TransactItems\": [$(put "$2"), $(put "$3")]}')" \
        >"$WORK/$1.out" 2>&1
    grep -c "FATAL:  ddb_router.failpoint \"$1\"" "$WORK/$1.out"
}
check "a transaction across the shards whose router's backend ends after its decision" "1" "$(in_doubt after_decision "${K1[0]}" "${K2[0]}")"
check "and one whose router's backend ends after the prepares, before a decision" "1" "$(in_doubt after_prepare "${K1[1]}" "${K2[1]}")"
PREFIX=$(node_psql "$ROUTER" -c "SELECT ddb_router.gid_prefix()")
# prepared PORT-OR-SHARD: the prepared parts of this router's transactions there, sorted
prepared() {
    local sql="SELECT gid FROM pg_prepared_xacts WHERE starts_with(gid, '$PREFIX') ORDER BY gid"
    case "$1" in shard*) primary_psql "$1" -c "$sql" ;; *) node_psql "$1" -c "$sql" ;; esac
}
UNDECIDED=$(prepared "$ROUTER")
UNDECIDED=${UNDECIDED%_@router}
DECIDED=$(prepared "$SHARD1_NODE1" | grep -v "^${UNDECIDED}_" | sed 's/_shard1$//')
prepared "$SHARD1_NODE1" >"$WORK/prepared_before"
check "shard1's primary holds both transactions' parts prepared, the router the undecided one's" \
    "$(printf '%s\n' "${DECIDED}_shard1" "${UNDECIDED}_shard1" | LC_ALL=C sort | paste -sd' ')|${UNDECIDED}_@router" \
    "$(paste -sd' ' "$WORK/prepared_before")|$(prepared "$ROUTER")"

# --- shard1's primary killed while a client writes over both shards ------------
# The writer: until the file STOP exists, PutItem after PutItem of keys of both shards in turn, and
# every fifth time a TransactWriteItems of a key of each shard (no SDK retries, to see each answer); a
# line per request: its time, the item's key (or "pair" and the pair's two keys), ok or the HTTP
# status and error code.
cat >"$WORK/writer.py" <<'PY'
import itertools, os, sys, time
import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

endpoint, key_id, secret, table, stop, keys1, keys2 = sys.argv[1:8]
client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                      aws_access_key_id=key_id, aws_secret_access_key=secret,
                      config=Config(retries={"mode": "standard", "total_max_attempts": 1},
                                    connect_timeout=2, read_timeout=10))
keys = [open(f).read().split()[2:] for f in (keys1, keys2)]   # the first two are the transactions' in doubt
singles = itertools.chain.from_iterable(zip(keys[0][:200], keys[1][:200]))
pairs = zip(keys[0][200:], keys[1][200:])


def item(key):
    return {"pk": {"S": key}, "n": {"N": "1"}}


def answer(call):
    try:
        call()
        return "ok"
    except ClientError as e:
        return "%s %s" % (e.response["ResponseMetadata"].get("HTTPStatusCode"), e.response["Error"]["Code"])
    except BotoCoreError as e:
        return "transport " + type(e).__name__


i = 0
while not os.path.exists(stop):
    i += 1
    started = time.time()
    if i % 5:
        key = next(singles)
        print("%.3f %s %s" % (started, key, answer(lambda: client.put_item(TableName=table, Item=item(key)))), flush=True)
    else:
        a, b = next(pairs)
        print("%.3f pair:%s:%s %s" % (started, a, b, answer(lambda: client.transact_write_items(
            TransactItems=[{"Put": {"TableName": table, "Item": item(k)}} for k in (a, b)]))), flush=True)
    time.sleep(0.05)
print("done", flush=True)
PY
/usr/bin/python3 "$WORK/writer.py" "$ENDPOINT" "$KEY_ID" "$SECRET" "$TABLE" "$WORK/stop" "$WORK/keys1" "$WORK/keys2" \
    >"$WORK/writes.log" 2>&1 &
writer=$!
wait_for 30 '[ "$(grep -c " ok$" "$WORK/writes.log")" -gt 20 ]'
killed=$(date +%s.%N)
scale_out kill-primary shard1 >"$WORK/kill.log" 2>&1
check "kill-primary shard1: shard1_node2 promoted" "0 primary=shard1_node2 (was shard1_node1)" "$? $(grep '^primary=' "$WORK/kill.log")"
promoted=$(sed -n 's/^seconds=//p' "$WORK/kill.log")
diag "promoted $promoted s after the kill"
# the writer goes on for 10 s after the promotion
sleep 10
touch "$WORK/stop"
wait "$writer"
check "the writer ran to its end" "0 done" "$? $(tail -1 "$WORK/writes.log")"

# the writes of each shard, and the pairs, after the kill: "key answer" lines
after_kill() { awk -v t="$killed" '$1 ~ /^[0-9.]+$/ && $1 > t { print $2, $3 " " $4 }' "$WORK/writes.log"; }
on_shard1() { awk 'NR == FNR { k[$1]; next } ($1 in k)' "$WORK/keys1" -; }
on_shard2() { awk 'NR == FNR { k[$1]; next } ($1 in k)' "$WORK/keys2" -; }
after_kill | on_shard2 >"$WORK/shard2_after"
after_kill | on_shard1 >"$WORK/shard1_after"
check "shard2 served every write meanwhile" "0" "$(grep -vc ' ok $' "$WORK/shard2_after")"
diag "$(wc -l <"$WORK/shard2_after") writes to shard2 after the kill"
check "shard1's writes failed meanwhile with 503 ServiceUnavailable (retryable), none otherwise" "yes " \
    "$(grep -q ' 503 ServiceUnavailable$' "$WORK/shard1_after" && echo yes) $(grep -v -e ' ok $' -e ' 503 ServiceUnavailable$' "$WORK/shard1_after")"
check "shard1 took writes again after the failover, through the same gateway and router" "yes" \
    "$(awk '/ 503 / { failed = 1 } failed && / ok $/ { n++ } END { if (n > 10) print "yes" }' "$WORK/shard1_after")"
diag "shard1's first write after the kill $(awk -v t="$killed" 'NR == FNR { k[$1]; next }
    ($2 in k) && $1 > t { if ($3 != "ok") failed = 1; else if (failed) { printf "%.1f", $1 - t; exit } }' \
    "$WORK/keys1" "$WORK/writes.log") s after it"
awk '$2 ~ /^pair/' "$WORK/writes.log" >"$WORK/pairs"
check "the transactions across the shards failed with 503 only, and were taken again after the failover" "yes yes " \
    "$(grep -q ' 503 ServiceUnavailable$' "$WORK/pairs" && echo yes) $(awk -v t="$killed" -v p="$promoted" \
       '$1 > t + p && $3 == "ok" { n++ } END { if (n > 2) print "yes" }' "$WORK/pairs") $(awk '$3 != "ok" && $3 " " $4 != "503 ServiceUnavailable"' "$WORK/pairs")"
diag "$(grep -c ' 503 ' "$WORK/writes.log") requests answered 503; $(grep -c ' ok$' "$WORK/writes.log") acknowledged"

# --- the transactions in doubt across the failover -------------------------
check "shard1's new primary holds the parts prepared on the old one" "" \
    "$(comm -23 "$WORK/prepared_before" <(prepared "$SHARD1_NODE2"))"
check "and is shard1_node2, no longer in recovery" "f" "$(node_psql "$SHARD1_NODE2" -c "SELECT pg_is_in_recovery()")"
check "where the undecided part still holds its item: a PutItem of it through the router is TransactionConflictException" "1" \
    "$(node_psql "$ROUTER" -c "SELECT ddb_router.execute_metered(NULL, 'PutItem', '{\"TableName\": \"$TABLE\", \"Item\": {\"pk\": {\"S\": \"${K1[1]}\"}}}')" 2>&1 |
       grep -c '^DETAIL: .*TransactionConflictException')"
# recover: ddb_router.recover_in_doubt() until nothing of this router's is prepared on the router or a
# shard's primary; its rows as "gid node:action"
recover() {
    for _ in $(seq 50); do
        node_psql "$ROUTER" -c "SELECT gid || ' ' || node_name || ':' || action FROM ddb_router.recover_in_doubt()"
        [ -z "$(prepared "$ROUTER")$(prepared shard1)$(prepared shard2)" ] && break
        sleep 0.1
    done
}
recover >"$WORK/recovered"
of() { sed -n "s/^$1_[^ ]* //p" "$WORK/recovered" | LC_ALL=C sort | paste -sd,; }
check "recover_in_doubt commits the decided transaction's parts on both shards (shard1's on its new primary)" \
    "shard1:committed,shard1:decision deleted,shard2:committed,shard2:decision deleted" "$(of "$DECIDED")"
check "and rolls back the undecided one's: the router's part, then both shards'" \
    "@router:rolled back,shard1:rolled back,shard2:rolled back" "$(of "$UNDECIDED")"
# n_of KEY: the item's n on its shard's current primary, or none
n_of() {
    local shard=shard1
    grep -qx "$1" "$WORK/keys2" && shard=shard2
    primary_psql "$shard" -c "SELECT coalesce((SELECT item->>'n' FROM ddb.scan('$TABLE') item WHERE item->>'pk' = '$1'), 'none')"
}
check "the decided transaction's items are on both shards, the undecided one's on neither" "1 1 none none" \
    "$(n_of "${K1[0]}") $(n_of "${K2[0]}") $(n_of "${K1[1]}") $(n_of "${K2[1]}")"
check "nothing of this router's is left prepared on the router or a shard, no decision is left" "||0" \
    "$(prepared "$ROUTER")|$(prepared shard1)$(prepared shard2)|$(node_psql "$ROUTER" -c "SELECT count(*) FROM ddb_router.in_doubt")"

# --- every acknowledged write is there ---------------------------------------
for shard in shard1 shard2; do
    primary_psql "$shard" -c "SELECT item->>'pk' FROM ddb.scan('$TABLE') item"
done | LC_ALL=C sort >"$WORK/on_shards"
awk '$3 == "ok" { print $2 }' "$WORK/writes.log" | tr ':' '\n' | grep -v '^pair$' | LC_ALL=C sort >"$WORK/acked"
check "every acknowledged item (and both items of each acknowledged pair) is on its shard's current primary" "0" \
    "$(LC_ALL=C comm -23 "$WORK/acked" "$WORK/on_shards" | wc -l)"
check "each transaction of the writer is on both shards or on neither" "" \
    "$(awk '{ split($2, k, ":"); print k[2], k[3] }' "$WORK/pairs" | while read -r a b; do
           [ "$(grep -cx -e "$a" -e "$b" "$WORK/on_shards")" != 1 ] || echo "$a $b"; done)"
diag "$(wc -l <"$WORK/on_shards") items on the shards, $(LC_ALL=C comm -13 "$WORK/acked" "$WORK/on_shards" | wc -l) of them not acknowledged (or in doubt and committed)"
cat >"$WORK/scan.py" <<'PY'
import sys
import boto3
endpoint, key_id, secret, table = sys.argv[1:5]
client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                      aws_access_key_id=key_id, aws_secret_access_key=secret)
for page in client.get_paginator("scan").paginate(TableName=table):
    for item in page["Items"]:
        print(item["pk"]["S"])
PY
check "a Scan through the gateway serves every item of both shards" "" \
    "$(/usr/bin/python3 "$WORK/scan.py" "$ENDPOINT" "$KEY_ID" "$SECRET" "$TABLE" 2>&1 | LC_ALL=C sort | diff - "$WORK/on_shards")"

scale_out status >"$WORK/status_after.log" 2>&1
check "status fails (a node is down) and shows shard1's formation with its new primary" "1 1" \
    "$? $(grep -Ec '^ *shard1_node2 .*\| *(wait_)?primary \| *(wait_)?primary$' "$WORK/status_after.log")"

pids=$(for d in "$DDB_SCALE_OUT_DIR"/*/postmaster.pid; do head -1 "$d"; done; cat "$DDB_SCALE_OUT_DIR/gateway.pid")
stopping=$SECONDS
scale_out stop >"$WORK/stop.log" 2>&1
check "stop" "0" "$?"
diag "stopped in $((SECONDS - stopping)) s"
alive=0
for pid in $pids; do
    # a process that has exited but is not reaped yet (state Z) runs no more
    state=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
    [ -n "$state" ] && [ "$state" != Z ] && alive=$((alive + 1))
done
check "nothing of it runs after stop" "0" "$alive"
check "and the gateway's port is free" "000" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$ENDPOINT/health")"
done_testing
