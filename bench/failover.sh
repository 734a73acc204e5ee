#!/usr/bin/env bash
# bench/failover.sh — issue 32's failover benchmark (docs/benchmarks.md,
# "Failover"): a formation of tools/ha.sh (monitor, primary, synchronous
# secondary, ddb-gateway in front) on ports 55750-55753 in build/ha-bench,
# load clients (bench/failover/load.py, Debian's python3 and boto3) doing
# read-modify-writes of a few counters through the gateway at a steady
# rate (strongly consistent GetItem, then UpdateItem conditional on the
# version read), and rounds of:
#   sigkill          the primary's pg_autoctl and postmaster killed (tools/ha.sh kill-primary), ROUNDS times
#   sigstop          the primary's processes frozen (freeze-primary), thawed once the other node is promoted
#   secondary-first  the secondary stopped (stop-secondary), writes taken by the primary alone for
#                    10 s, the primary killed, the secondary started again (is it promoted? it must
#                    not be: it lacks what the primary took alone), then the primary started again
# each followed by tools/ha.sh rejoin (the old node back as the secondary).
# Then bench/failover/check.py reads the history: each round's time from
# the kill to the first acknowledged write, requests failed by answer,
# throughput before and after; acknowledged writes lost and
# linearizability violations (it exits 1 when it finds any).
#
#   bash bench/failover.sh              # 10 sigkill rounds, sigstop, secondary-first (about 12 minutes)
#   bash bench/failover.sh --rounds 1   # the short form: one round of each kind (about 3 minutes)
#
# As root on Debian 12, as tools/ha.sh (which installs and builds unless
# DDB_HA_INSTALLED=1).  Environment: FAILOVER_WORKERS (8 clients),
# FAILOVER_RATE (5 read-modify-writes a second each), FAILOVER_COUNTERS (4),
# DDB_GATEWAY_CONNECT_TIMEOUT (4 s) and DDB_GATEWAY_REQUEST_TIMEOUT (5 s),
# the gateway's bounds on connecting and on a database round trip.
# The logs, the rounds and the report stay in build/ha-bench-run.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export DDB_HA_DIR=${DDB_HA_DIR:-$ROOT/build/ha-bench} DDB_HA_PGPORT=${DDB_HA_PGPORT:-55750}
export DDB_HA_GATEWAY_PORT=${DDB_HA_GATEWAY_PORT:-55753}
export DDB_GATEWAY_CONNECT_TIMEOUT=${DDB_GATEWAY_CONNECT_TIMEOUT:-4}
export DDB_GATEWAY_REQUEST_TIMEOUT=${DDB_GATEWAY_REQUEST_TIMEOUT:-5}
OUT=$ROOT/build/ha-bench-run
WORKERS=${FAILOVER_WORKERS:-8} RATE=${FAILOVER_RATE:-5} COUNTERS=${FAILOVER_COUNTERS:-4}
TABLE=counters
# seconds of steady load before each disruption, and after the first write that follows it
SETTLE=12 AFTER=10
ROUNDS=10
case "${1:-}" in
    --rounds) ROUNDS=$2 ;;
    "") ;;
    *) echo "usage: bash bench/failover.sh [--rounds N]" >&2; exit 2 ;;
esac

ha() { bash "$ROOT/tools/ha.sh" "$@"; }

# The seconds tools/ha.sh printed (seconds=), or - .
ha_seconds() {  # log
    sed -n 's/^seconds=//p' "$1" | tail -1 | grep . || echo -
}

# The time a tools/ha.sh log gives for what it did (NAME=epoch seconds), or the time given.
ha_time() {  # log, name, fallback
    sed -n "s/^$2=//p" "$1" | tail -1 | grep . || echo "$3"
}

# True once some load client has had an update acknowledged that it sent after a time.
wrote_since() {  # epoch seconds
    awk -v t="$1" '$4 == "update" && $8 == "ok" && $1 >= t { found = 1; exit } END { exit !found }' "$OUT"/logs/*.log
}

# Waits until writes are acknowledged again after a time, at most SECONDS; says so when they are not.
wait_writes() {  # epoch seconds, seconds
    local deadline=$((SECONDS + $2))
    until wrote_since "$1"; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "   no write acknowledged within $2 s"
            return 1
        fi
        sleep 0.2
    done
}

# The monitor's view of the nodes, on one line.
states() {
    psql -X -q -At -F ' ' -h "$SOCKET" -p "$BASE_PORT" -U postgres -d pg_auto_failover \
        -c "SELECT nodename, reportedstate, goalstate FROM pgautofailover.node ORDER BY nodeid" 2>/dev/null | paste -sd';'
}

# Logs the monitor's view each second for SECONDS, a line each time it changes.
watch_states() {  # seconds, log
    local last="" now deadline=$((SECONDS + $1))
    [ ! -f "$2" ] || last=$(tail -1 "$2" | cut -d' ' -f2-)
    while [ "$SECONDS" -lt "$deadline" ]; do
        now=$(states)
        [ "$now" = "$last" ] || echo "$(date +%T) $now" >>"$2"
        last=$now
        sleep 1
    done
}

# Records a round: number, kind, disruption's start, kill, primary's return, promotion and rejoin seconds.
record() {
    echo "$*" >>"$OUT/rounds.tsv"
}

# A round where the primary is killed (sigkill) or frozen (sigstop), then rejoins as the secondary.
primary_round() {  # number, kind
    local number=$1 kind=$2 killed
    sleep "$SETTLE"
    killed=$(date +%s.%N)
    if [ "$kind" = sigkill ]; then
        ha kill-primary >"$OUT/round$number.log" 2>&1 || true
        killed=$(ha_time "$OUT/round$number.log" killed_at "$killed")
    else
        ha freeze-primary >"$OUT/round$number.log" 2>&1 || true
        killed=$(ha_time "$OUT/round$number.log" froze_at "$killed")
    fi
    wait_writes "$killed" 120 || true
    sleep "$AFTER"
    [ "$kind" = sigkill ] || ha thaw >>"$OUT/round$number.log" 2>&1 || true
    ha rejoin >"$OUT/rejoin$number.log" 2>&1 || echo "   rejoin failed: see $OUT/rejoin$number.log"
    record "$number" "$kind" "$killed" "$killed" - "$(ha_seconds "$OUT/round$number.log")" \
        "$(ha_seconds "$OUT/rejoin$number.log")"
    echo "   $kind: promoted after $(ha_seconds "$OUT/round$number.log") s, rejoined in $(ha_seconds "$OUT/rejoin$number.log") s"
}

# The round where the secondary stops first: the primary commits alone, is killed; the secondary,
# started again, must not be promoted (it lacks those commits); the primary, started again, is.
secondary_first_round() {  # number
    local number=$1 began killed back secondary primary log="$OUT/round$1.log"
    sleep "$SETTLE"
    began=$(date +%s.%N)
    ha stop-secondary >"$log" 2>&1 || true
    began=$(ha_time "$log" stopped_at "$began")
    secondary=$(sed -n 's/^stopped //p' "$log")
    watch_states "$AFTER" "$OUT/states$number.log"
    killed=$(date +%s.%N)
    ha kill-primary --no-wait >>"$log" 2>&1 || true
    killed=$(ha_time "$log" killed_at "$killed")
    primary=$(sed -n 's/^killed \([^ ]*\).*/\1/p' "$log")
    ha rejoin "$secondary" >>"$log" 2>&1 || true
    watch_states 30 "$OUT/states$number.log"
    back=$(date +%s.%N)
    ha rejoin "$primary" >>"$log" 2>&1 || true
    watch_states 5 "$OUT/states$number.log"
    ha rejoin >"$OUT/rejoin$number.log" 2>&1 || echo "   rejoin failed: see $OUT/rejoin$number.log"
    wait_writes "$back" 120 || true
    record "$number" secondary-first "$began" "$killed" "$back" - "$(ha_seconds "$OUT/rejoin$number.log")"
    echo "   secondary-first: stopped $secondary, killed $primary; the monitor's states (node reported goal):"
    sed 's/^/     /' "$OUT/states$number.log"
}

# The counters as the primary has them: key, version, history (JSON), tab-separated.
dump_counters() {
    local primary port
    primary=$(states | tr ';' '\n' | awk '$2 == $3 && ($2 == "primary" || $2 == "wait_primary") { print $1 }')
    port=$((BASE_PORT + ${primary#node}))
    psql -X -q -At -F $'\t' -h "$SOCKET" -p "$port" -U postgres -d ddb \
        -c "SELECT item->>'k', item->>'v', item->'h' FROM ddb.scan('$TABLE') AS item ORDER BY 1"
}

ha stop >/dev/null 2>&1 || true
rm -rf "$OUT" && mkdir -p "$OUT/logs"
trap 'touch "$OUT/stop"; wait; ha stop >/dev/null 2>&1' EXIT
echo "== the formation (tools/ha.sh start, $DDB_HA_DIR)"
ha start >"$OUT/start.log" 2>&1 || { tail -5 "$OUT/start.log" >&2; exit 1; }
source "$DDB_HA_DIR/deployment.env"   # SOCKET, BASE_PORT
ENDPOINT=$(sed -n 's/^endpoint=//p' "$OUT/start.log")
KEY_ID=$(sed -n 's/^access_key_id=//p' "$OUT/start.log")
SECRET=$(sed -n 's/^secret_access_key=//p' "$OUT/start.log")
/usr/bin/python3 "$ROOT/bench/failover/load.py" setup "$ENDPOINT" "$KEY_ID" "$SECRET" "$TABLE" "$COUNTERS"
echo "== $WORKERS clients, $RATE read-modify-writes a second each, on $COUNTERS counters"
for worker in $(seq "$WORKERS"); do
    /usr/bin/python3 "$ROOT/bench/failover/load.py" run "$ENDPOINT" "$KEY_ID" "$SECRET" "$TABLE" "$COUNTERS" \
        "$worker" "$RATE" "$OUT/stop" >"$OUT/logs/$worker.log" 2>"$OUT/logs/$worker.err" &
done
started=$(date +%s.%N)
wait_writes "$started" 60 >/dev/null

number=0
for kind in $(seq "$ROUNDS" | sed 's/.*/sigkill/') sigstop secondary-first; do
    number=$((number + 1))
    echo "== round $number: $kind ($(date +%T))"
    if [ "$kind" = secondary-first ]; then secondary_first_round "$number"; else primary_round "$number" "$kind"; fi
done
sleep "$SETTLE"
touch "$OUT/stop"
wait
dump_counters >"$OUT/final.tsv"
echo "== the history"
status=0
/usr/bin/python3 "$ROOT/bench/failover/check.py" "$OUT/logs" "$OUT/final.tsv" "$OUT/rounds.tsv" |
    tee "$OUT/report.md" || status=1
echo "(settings: gateway connect-timeout $DDB_GATEWAY_CONNECT_TIMEOUT s, request-timeout" \
     "$DDB_GATEWAY_REQUEST_TIMEOUT s; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg))"
exit "$status"
