#!/usr/bin/env bash
# bench/gateway_memory_bench.sh — ddb-gateway's latency spread and memory
# (issue 33, target 5): p99 over p50 of signed GetItems at 8 and 32
# connections through a gateway with the default pool; its resident memory
# with 10,000 idle keep-alive connections; and its memory over a sustained
# run.
#
#   bash bench/gateway_memory_bench.sh
#   BENCH_IDLE=10000 BENCH_MINUTES=10 BENCH_ROUNDS=3 BENCH_SECONDS=10 bash bench/gateway_memory_bench.sh
#
# Installs wrk (Debian), builds and installs the extension, starts a
# throwaway cluster (fsync off), preloads 16,000 items (bench/gateway/load.js
# through a gateway without signatures), and starts the signing gateways
# with a key of ddb.create_access_key().  Requests are signed in advance
# (bench/gateway/presign.js) and sent by wrk (bench/gateway/signed.lua); the
# idle connections are opened by bench/gateway/idle.js, each after one
# GetItem.  Prints a markdown report (also build/gwmemory/report.md).
set -euo pipefail
export CLUSTER_NAME=gwmemory DDB_PGPORT=${DDB_PGPORT:-55440}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"
source "$ROOT/bench/lib/gateway.sh"
source "$ROOT/bench/lib/stats.sh"

USERS=1000
IDLE=${BENCH_IDLE:-10000}
MINUTES=${BENCH_MINUTES:-10}
ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_PER_RUN=${BENCH_SECONDS:-10}
CONNECTIONS=(8 32)
POOL=4   # the gateway's default
OUT="$ROOT/build/gwmemory"
DB=ddb_gwmemory
PORT=55491
rm -rf "$OUT" && mkdir -p "$OUT"
# the idle client connections, each a descriptor in the gateway and in the client
ulimit -Sn $((IDLE + 1000))   # the soft limit only: the gateway raises its own to what --max-connections needs

install_packages wrk
build_and_install
cc -O2 -o "$OUT/latency_probe" "$ROOT/bench/gateway/latency_probe.c"
start_cluster
IDLE_PID=
trap 'kill "${GATEWAY_PIDS[@]}" $IDLE_PID 2>/dev/null || true; stop_cluster' EXIT
cluster_psql -q -c "CREATE DATABASE $DB"
psql_db() { cluster_psql -d "$DB" "$@"; }
psql_db -q -c "CREATE EXTENSION ddb_model"
DSN="host=$SOCKET_DIR port=$PGPORT_NUM user=postgres dbname=$DB"

# Resident memory of a process, in MB.
rss_mb() {  # pid
    awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"
}

echo "== preloading $((USERS * 16)) items"
start_gateway 55490 4 --development
node "$ROOT/bench/gateway/load.js" http://127.0.0.1:55490 "$USERS"
kill "${GATEWAY_PIDS[0]}" && wait "${GATEWAY_PIDS[0]}" 2>/dev/null || true
GATEWAY_PIDS=()
psql_db -q -c "VACUUM ANALYZE"
read -r KEY_ID SECRET <<<"$(psql_db -At -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
start_gateway "$PORT" "$POOL" --max-connections $((IDLE + 100))
GATEWAY_PID=${GATEWAY_PIDS[-1]}

# One run of signed GetItems at some connections, for SECONDS: one connection is the latency
# probe's (bench/gateway/latency_probe.c, every request timed), the others wrk's; fails on a bad response.
run_wrk() {  # connections, seconds, name
    local log="$OUT/wrk-$3.log" probe
    node "$ROOT/bench/gateway/presign.js" "127.0.0.1:$PORT" "$KEY_ID" "$SECRET" GetItem "$USERS" 60000 \
        >"$OUT/signed-$3.txt"
    "$OUT/latency_probe" "$PORT" "$OUT/signed-$3.txt" GetItem "$2" >"$log.probe" &
    probe=$!
    wrk -t2 -c"$(($1 - 1))" -d"$2s" -s "$ROOT/bench/gateway/signed.lua" "http://127.0.0.1:$PORT" \
        -- "$OUT/signed-$3.txt" GetItem 2 >"$log"
    wait "$probe" || { echo "GetItem at $1 connections: the latency probe failed" >&2; return 1; }
    # a bad response or a broken connection fails the run; a request past wrk's 2 s is counted and reported
    if ! grep -q '^checked [1-9][0-9]* bad 0$' "$log" || grep -Eq '^  Socket errors: connect [1-9]|read [1-9]|write [1-9]' "$log"; then
        echo "GetItem at $1 connections: bad responses or socket errors" >&2
        cat "$log" >&2
        return 1
    fi
    TIMEOUTS=$(( ${TIMEOUTS:-0} + $(awk '/^  Socket errors/ { print $NF + 0; found = 1 } END { if (!found) print 0 }' "$log") ))
}

declare -A OPS P50 P99 MAX WRK_RATIO
for c in "${CONNECTIONS[@]}"; do
    echo "== warm-up: $c connections"
    run_wrk "$c" 5 "warmup-$c"
done
for round in $(seq "$ROUNDS"); do
    for c in "${CONNECTIONS[@]}"; do
        echo "== latency, $c connections, round $round of $ROUNDS (${SECONDS_PER_RUN}s)"
        run_wrk "$c" "$SECONDS_PER_RUN" "latency-$c-$round"
        log="$OUT/wrk-latency-$c-$round.log"
        OPS[$c]+="$(awk -v s="$SECONDS_PER_RUN" '/^Requests\/sec:/ { r = $2 } /^probe requests/ { p = $3 } END { printf "%.0f", r + p / s }' "$log" "$log.probe") "
        P50[$c]+="$(awk '/^probe requests/ { print $5 }' "$log.probe") "
        P99[$c]+="$(awk '/^probe requests/ { print $7 }' "$log.probe") "
        MAX[$c]+="$(awk '/^probe requests/ { printf "%.1f", $9 / 1000 }' "$log.probe") "
        WRK_RATIO[$c]+="$(awk '/^latency p50/ { printf "%.2f", $5 / $3 }' "$log") "
    done
done

echo "== $IDLE idle keep-alive connections"
rss_before_idle=$(rss_mb "$GATEWAY_PID")
node "$ROOT/bench/gateway/presign.js" "127.0.0.1:$PORT" "$KEY_ID" "$SECRET" GetItem "$USERS" "$IDLE" >"$OUT/signed-idle.txt"
node "$ROOT/bench/gateway/idle.js" 127.0.0.1 "$PORT" "$OUT/signed-idle.txt" "$IDLE" >"$OUT/idle.log" 2>&1 &
IDLE_PID=$!
for _ in $(seq 1200); do
    grep -q '^idle ' "$OUT/idle.log" && break
    kill -0 "$IDLE_PID" 2>/dev/null || { cat "$OUT/idle.log" >&2; exit 1; }
    sleep 0.1
done
grep -q '^idle ' "$OUT/idle.log" || { echo "the idle connections were not all served in 120 s" >&2; exit 1; }
sleep 2
open_connections=$(ss -Htn state established "( sport = :$PORT )" | wc -l)
rss_idle=$(rss_mb "$GATEWAY_PID")
# the gateway still serves while they wait
run_wrk 8 5 "with-idle"
served_with_idle=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$OUT/wrk-with-idle.log")
kill "$IDLE_PID" && wait "$IDLE_PID" 2>/dev/null || true
IDLE_PID=

echo "== $MINUTES minutes of GetItem at 8 connections, resident memory every 30 s"
RSS_SAMPLES=("$(rss_mb "$GATEWAY_PID")")
node "$ROOT/bench/gateway/presign.js" "127.0.0.1:$PORT" "$KEY_ID" "$SECRET" GetItem "$USERS" 60000 >"$OUT/signed-long.txt"
wrk -t2 -c8 -d"$((MINUTES * 60))s" -s "$ROOT/bench/gateway/signed.lua" "http://127.0.0.1:$PORT" \
    -- "$OUT/signed-long.txt" GetItem 2 >"$OUT/wrk-long.log" &
wrk_pid=$!
while kill -0 "$wrk_pid" 2>/dev/null; do
    sleep 30
    RSS_SAMPLES+=("$(rss_mb "$GATEWAY_PID")")
done
wait "$wrk_pid"
grep -q '^checked [1-9][0-9]* bad 0$' "$OUT/wrk-long.log" || { cat "$OUT/wrk-long.log" >&2; exit 1; }

{
    echo "### ddb-gateway: latency spread and memory"
    echo
    echo "Command: \`BENCH_IDLE=$IDLE BENCH_MINUTES=$MINUTES BENCH_ROUNDS=$ROUNDS BENCH_SECONDS=$SECONDS_PER_RUN bash bench/gateway_memory_bench.sh\`"
    echo "($(date -u +%Y-%m-%d), $(nproc) cores, $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2) -t2 with signed GetItems;"
    echo "PostgreSQL $(psql_db -At -c 'SHOW server_version' | cut -d' ' -f1) (fsync off); ddb_model at $(git -C "$ROOT" rev-parse --short HEAD).)"
    echo
    echo "Signed GetItem through the gateway with its default pool ($POOL connections), median of $ROUNDS rounds of ${SECONDS_PER_RUN} s"
    echo "(latencies in µs, of every request on one of the connections, bench/gateway/latency_probe.c's; wrk's"
    echo "own p99 / p50 is corrected for coordinated omission, so one slow request moves it):"
    echo
    echo "| connections | ops/s | p50 | p99 | p99 / p50 | slowest request, ms | wrk's p99 / p50 (corrected) |"
    echo "|---:|---:|---:|---:|---:|---:|---:|"
    for c in "${CONNECTIONS[@]}"; do
        p50=$(median "${P50[$c]}") p99=$(median "${P99[$c]}")
        echo "| $c | $(median "${OPS[$c]}") | $p50 | $p99 | $(awk -v a="$p99" -v b="$p50" 'BEGIN { printf "%.2f", a / b }') | $(spread "${MAX[$c]}") | $(median "${WRK_RATIO[$c]}") |"
    done
    echo
    echo "Requests past wrk's 2 s timeout, over every run: ${TIMEOUTS:-0}."
    echo
    echo "Resident memory of the gateway: $rss_before_idle MB before the idle connections;"
    echo "$rss_idle MB with $IDLE idle keep-alive connections open ($open_connections established), each after one GetItem;"
    echo "meanwhile it served $served_with_idle signed GetItems/s at 8 other connections."
    echo
    echo "Over $MINUTES minutes of GetItem at 8 connections ($(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$OUT/wrk-long.log") ops/s):"
    echo "resident memory every 30 s, in MB: ${RSS_SAMPLES[*]}."
} | tee "$OUT/report.md"
