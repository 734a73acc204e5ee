#!/usr/bin/env bash
# bench/gateway_signed_bench.sh — ddb-gateway with SigV4 verification on
# against pgbench calling ddb.execute with the same requests at the same
# concurrency (issue 16, target 1): GetItem, Query begins_with (16 items)
# and PutItem (a new item each) at 8 and 32 connections, in rounds where the
# two take turns.
#
#   bash bench/gateway_signed_bench.sh
#   BENCH_USERS=2000 BENCH_ROUNDS=5 BENCH_SECONDS=10 bash bench/gateway_signed_bench.sh
#
# Installs wrk (Debian), builds and installs the extension, starts a
# throwaway cluster (fsync off), preloads BENCH_USERS users of 16 items
# (bench/gateway/load.js through a gateway without signatures), then starts
# one signing gateway per connection count, with BENCH_POOL database
# connections (default 4, the gateway's default: it pipelines many
# requests on each), with a key of ddb.create_access_key().  The requests are signed in advance
# (bench/gateway/presign.js; the gateway serves a resent request, as AWS
# does) and sent by wrk (bench/gateway/signed.lua).  pgbench runs
# `SELECT ddb.execute(op, request)` with -M prepared, the request built
# from the same values.  Also measures the CPU per operation of the load
# generator, the gateway and the cluster, and what the gateway serves when
# it does nothing (a GET refused with 405).  Latency: one of each run's
# connections is bench/gateway/latency_probe.c's, which times every request
# it sends; pgbench logs every transaction's.  With BENCH_PROFILE=1, also
# records where the gateway's CPU goes (perf record -g on its process) over
# one more run of each operation at 8 connections (build/gwsigned/profile-*.txt).
# Prints a markdown report (also build/gwsigned/report.md).
set -euo pipefail
export CLUSTER_NAME=gwsigned DDB_PGPORT=${DDB_PGPORT:-55437}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"
source "$ROOT/bench/lib/gateway.sh"
source "$ROOT/bench/lib/stats.sh"
source "$ROOT/bench/lib/cpu.sh"

USERS=${BENCH_USERS:-1000}
ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_PER_RUN=${BENCH_SECONDS:-10}
POOL=${BENCH_POOL:-4}
CONNECTIONS=(8 32)
OPERATIONS=(GetItem Query PutItem)
OUT="$ROOT/build/gwsigned"
DB=ddb_gwsigned
declare -A PORT=([8]=55481 [32]=55482)
rm -rf "$OUT" && mkdir -p "$OUT"

install_packages wrk
build_and_install
cc -O2 -o "$OUT/latency_probe" "$ROOT/bench/gateway/latency_probe.c"
start_cluster
trap 'kill "${GATEWAY_PIDS[@]}" 2>/dev/null || true; stop_cluster' EXIT
cluster_psql -q -c "CREATE DATABASE $DB"
psql_db() { cluster_psql -d "$DB" "$@"; }
psql_db -q -c "CREATE EXTENSION ddb_model"
DSN="host=$SOCKET_DIR port=$PGPORT_NUM user=postgres dbname=$DB"


echo "== preloading $((USERS * 16)) items"
start_gateway 55480 4 --development
node "$ROOT/bench/gateway/load.js" http://127.0.0.1:55480 "$USERS"
kill "${GATEWAY_PIDS[0]}" && wait "${GATEWAY_PIDS[0]}" 2>/dev/null || true
GATEWAY_PIDS=()
psql_db -q <<'SQL'
VACUUM ANALYZE;
-- the requests pgbench sends, built from the values presign.js draws (text parsed into jsonb, as from the gateway);
-- STABLE as format() is, so that the planner inlines them (an IMMUTABLE one calling format() is run by
-- fmgr_sql, which parses its body again on every call: a fifth of pgbench's time in a profile)
CREATE FUNCTION bench_get(u int, n int) RETURNS jsonb LANGUAGE sql STABLE RETURN format(
    '{"TableName":"GwBench","Key":{"pk":{"S":"USER#%s"},"sk":{"S":"ORDER#2026-01-%s#%s"}}}',
    u, lpad((n + 1)::text, 2, '0'), lpad((u * 16 + n)::text, 8, '0'))::jsonb;
CREATE FUNCTION bench_query(u int) RETURNS jsonb LANGUAGE sql STABLE RETURN format(
    '{"TableName":"GwBench","KeyConditionExpression":"pk = :p AND begins_with(sk, :s)",'
    '"ExpressionAttributeValues":{":p":{"S":"USER#%s"},":s":{"S":"ORDER#"}}}', u)::jsonb;
CREATE FUNCTION bench_put(u int, n int) RETURNS jsonb LANGUAGE sql STABLE RETURN format(
    '{"TableName":"GwBench","Item":{"pk":{"S":"USER#%s"},"sk":{"S":"ORDER#2026-01-%s#%s"},"orderId":{"S":"%s"},'
    '"status":{"S":"%s"},"total":{"N":"%s.95"},"currency":{"S":"EUR"},"quantity":{"N":"%s"},'
    '"createdAt":{"S":"2026-01-%sT10:15:00Z"},"shipTo":{"M":{"street":{"S":"12 rue de la République"},'
    '"city":{"S":"Lyon"},"zip":{"S":"69002"}}},"tags":{"SS":["gift","express"]},'
    '"note":{"S":"Leave the parcel with the concierge if nobody answers."}}}',
    u, lpad((n + 1)::text, 2, '0'), lpad((u * 16 + n)::text, 8, '0'), lpad((u * 16 + n)::text, 8, '0'),
    CASE WHEN n % 3 <> 0 THEN 'SHIPPED' ELSE 'PENDING' END, u % 500 + n, n % 5 + 1, lpad((n + 1)::text, 2, '0'))::jsonb;
SQL
cat >"$OUT/GetItem.sql" <<EOF
\\set u random(0, $((USERS - 1)))
\\set n random(0, 15)
SELECT ddb.execute('GetItem', bench_get(:u, :n));
EOF
cat >"$OUT/Query.sql" <<EOF
\\set u random(0, $((USERS - 1)))
SELECT ddb.execute('Query', bench_query(:u));
EOF
cat >"$OUT/PutItem.sql" <<EOF
\\set u random(20000000, 90000000)
\\set n random(0, 15)
SELECT ddb.execute('PutItem', bench_put(:u, :n));
EOF

read -r KEY_ID SECRET <<<"$(psql_db -At -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
for c in "${CONNECTIONS[@]}"; do
    start_gateway "${PORT[$c]}" "$POOL"
done
declare -A OPS LAT WRK_LAT MAX_MS CLIENT_MS SERVER_TICKS CLUSTER_TICKS DONE TIMEOUTS
POSTMASTER=$(head -1 "$PGDATA_DIR/postmaster.pid")
declare -A GATEWAY_PID=([8]=${GATEWAY_PIDS[0]} [32]=${GATEWAY_PIDS[1]})
# Adds up what one run used: the client's CPU (from `time`), the gateway's and the cluster's ticks, and the operations done.
account() {  # key, time file, log's ops/s, gateway ticks, cluster ticks
    CLIENT_MS[$1]=$(( ${CLIENT_MS[$1]:-0} + $(awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$2") ))
    SERVER_TICKS[$1]=$(( ${SERVER_TICKS[$1]:-0} + $4 ))
    CLUSTER_TICKS[$1]=$(( ${CLUSTER_TICKS[$1]:-0} + $5 ))
    DONE[$1]=$(( ${DONE[$1]:-0} + $3 * SECONDS_PER_RUN ))
}
# One wrk run through the gateway; fails on a bad response.
measure_gateway() {  # operation, connections, round
    local log="$OUT/wrk-$1-$2-$3.log" g0 c0 g1 c1 ops
    # signed just before (a signature is good for 15 minutes); puts write new users, each run its own
    node "$ROOT/bench/gateway/presign.js" "127.0.0.1:${PORT[$2]}" "$KEY_ID" "$SECRET" "$1" "$USERS" 60000 \
        $(( ($2 * 100 + $3) * 10000 )) >"$OUT/signed-$1-$2-$3.txt"
    g0=$(cpu_ticks "${GATEWAY_PID[$2]}") c0=$(cluster_ticks "$POSTMASTER")
    # one of the connections is the latency probe's, the others wrk's
    "$OUT/latency_probe" "${PORT[$2]}" "$OUT/signed-$1-$2-$3.txt" "$1" "$SECONDS_PER_RUN" >"$log.probe" &
    probe=$!
    { TIMEFORMAT='%3U %3S'; time wrk -t2 -c"$(($2 - 1))" -d"${SECONDS_PER_RUN}s" -s "$ROOT/bench/gateway/signed.lua" \
        "http://127.0.0.1:${PORT[$2]}" -- "$OUT/signed-$1-$2-$3.txt" "$1" 2 >"$log"; } 2>"$log.time"
    wait "$probe" || { echo "gateway $1 with $2 connections: the latency probe failed" >&2; return 1; }
    g1=$(cpu_ticks "${GATEWAY_PID[$2]}") c1=$(cluster_ticks "$POSTMASTER")
    # a bad response or a broken connection fails the run; a request past wrk's 2 s is counted and reported
    if ! grep -q '^checked [1-9][0-9]* bad 0$' "$log" || grep -Eq '^  Socket errors: connect [1-9]|read [1-9]|write [1-9]' "$log"; then
        echo "gateway $1 with $2 connections: bad responses or socket errors" >&2
        cat "$log" >&2
        return 1
    fi
    TIMEOUTS[$1,$2]=$(( ${TIMEOUTS[$1,$2]:-0} + $(awk '/^  Socket errors/ { print $NF + 0; found = 1 } END { if (!found) print 0 }' "$log") ))
    ops=$(awk -v s="$SECONDS_PER_RUN" '/^Requests\/sec:/ { r = $2 } /^probe requests/ { p = $3 } END { printf "%.0f", r + p / s }' "$log" "$log.probe")
    OPS[$1,$2,gateway]+="$ops "
    account "$1,$2,gateway" "$log.time" "$ops" $((g1 - g0)) $((c1 - c0))
    LAT[$1,$2,gateway]+="$(awk '/^probe requests/ { printf "%.2f", $7 / $5 }' "$log.probe") "
    WRK_LAT[$1,$2]+="$(awk '/^latency p50/ { printf "%.2f", $5 / $3 }' "$log") "
    MAX_MS[$1,$2]+="$(awk '/^probe requests/ { printf "%.1f", $9 / 1000 }' "$log.probe") "
}
# One pgbench run of the same operation.
measure_pgbench() {  # operation, connections
    local log="$OUT/pgbench-$1-$2.log" c0 c1 ops
    rm -f "$OUT"/txn.*
    c0=$(cluster_ticks "$POSTMASTER")
    # -l: each transaction's latency (µs, the third column) into $OUT/txn.*, for p99 / p50 as wrk reports it
    { TIMEFORMAT='%3U %3S'; time pgbench -n -M prepared -c "$2" -j 2 -T "$SECONDS_PER_RUN" -f "$OUT/$1.sql" \
        -l --log-prefix="$OUT/txn" -h "$SOCKET_DIR" -p "$PGPORT_NUM" -U postgres "$DB" >"$log" 2>&1 || { cat "$log" >&2; return 1; }; } 2>"$log.time"
    c1=$(cluster_ticks "$POSTMASTER")
    ops=$(awk '/^tps = / { printf "%.0f", $3 }' "$log")
    OPS[$1,$2,pgbench]+="$ops "
    LAT[$1,$2,pgbench]+="$(cat "$OUT"/txn.* | awk '{ print $3 }' | sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", v[int(NR * 0.99)] / v[int(NR * 0.5)] }') "
    account "$1,$2,pgbench" "$log.time" "$ops" 0 $((c1 - c0))
}
# What an HTTP server that does nothing serves here: the gateway refusing a GET (405) before its handler runs.
measure_ceiling() {  # connections
    local log="$OUT/wrk-ceiling-$1.log"
    wrk -t2 -c"$1" -d"${SECONDS_PER_RUN}s" "http://127.0.0.1:${PORT[$1]}/" >"$log"
    OPS[ceiling,$1]+="$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$log") "
}

for op in "${OPERATIONS[@]}"; do
    for c in "${CONNECTIONS[@]}"; do
        echo "== warm-up: $op, $c connections"
        measure_gateway "$op" "$c" 0
        measure_pgbench "$op" "$c"
    done
done
OPS=() LAT=() WRK_LAT=() MAX_MS=() CLIENT_MS=() SERVER_TICKS=() CLUSTER_TICKS=() DONE=() TIMEOUTS=()
for op in "${OPERATIONS[@]}"; do
    for c in "${CONNECTIONS[@]}"; do
        for round in $(seq "$ROUNDS"); do
            echo "== $op, $c connections, round $round of $ROUNDS (${SECONDS_PER_RUN}s each)"
            measure_gateway "$op" "$c" "$round"
            measure_pgbench "$op" "$c"
        done
    done
done
for c in "${CONNECTIONS[@]}"; do
    for round in $(seq "$ROUNDS"); do
        echo "== an HTTP server doing nothing, $c connections, round $round of $ROUNDS"
        measure_ceiling "$c"
    done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# CPU microseconds per operation of what ticks or milliseconds measured, over the operations done.
us_per_op() {  # ticks, operations
    awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }'
}
declare -A LABEL=([PutItem]="PutItem (new item)" [GetItem]="GetItem" [Query]="Query begins_with (16 items)")
{
    echo "### ddb-gateway (SigV4 on) against pgbench calling ddb.execute"
    echo
    echo "Command: \`BENCH_USERS=$USERS BENCH_ROUNDS=$ROUNDS BENCH_SECONDS=$SECONDS_PER_RUN bash bench/gateway_signed_bench.sh\`"
    echo "($(date -u +%Y-%m-%d), $(nproc) cores, $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2) -t2 with requests signed in advance,"
    echo "pgbench -M prepared -j 2; PostgreSQL $(psql_db -At -c 'SHOW server_version' | cut -d' ' -f1) (fsync off);"
    echo "$((USERS * 16)) items preloaded; ddb_model at $(git -C "$ROOT" rev-parse --short HEAD); the gateway with --pool $POOL.)"
    echo
    echo "ops/s: median of $ROUNDS rounds (lowest–highest); the two take turns within each round."
    echo
    echo "| operation | connections | ddb-gateway | pgbench ddb.execute | gateway / pgbench | p99 / p50: gateway, pgbench | wrk's p99 / p50 (corrected) | slowest request, ms | gateway requests past 2 s |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for op in "${OPERATIONS[@]}"; do
        for c in "${CONNECTIONS[@]}"; do
            g=$(median "${OPS[$op,$c,gateway]}")
            p=$(median "${OPS[$op,$c,pgbench]}")
            echo "| ${LABEL[$op]} | $c | $g ($(spread "${OPS[$op,$c,gateway]}")) | $p ($(spread "${OPS[$op,$c,pgbench]}")) | $(ratio "$g" "$p") | $(median "${LAT[$op,$c,gateway]}"), $(median "${LAT[$op,$c,pgbench]}") | $(median "${WRK_LAT[$op,$c]}") | $(spread "${MAX_MS[$op,$c]}") | ${TIMEOUTS[$op,$c]:-0} |"
        done
    done
    echo
    echo "p99 / p50 are of each request's own time: the gateway's measured on one of the connections by"
    echo "bench/gateway/latency_probe.c (wrk makes the others), pgbench's from its log of every transaction (-l)."
    echo "wrk's own figure is corrected for coordinated omission (for a request that took t it adds one at each"
    echo "interval below t, the requests it held back), so a single slow request moves it: it is shown beside"
    echo "the slowest request the probe saw (lowest–highest of the rounds)."
    echo
    echo "Where the CPU goes: microseconds of CPU per operation, over all rounds, of the load generator"
    echo "(wrk, pgbench; from time(1)), the gateway's process, and the cluster's processes (backends, and"
    echo "the background ones)."
    echo
    echo "The last two columns leave the load generators out: PostgreSQL behind the gateway against PostgreSQL"
    echo "behind pgbench, and (pgbench + its PostgreSQL) against (the gateway + its PostgreSQL), each per operation."
    echo
    echo "| operation | connections | gateway: wrk / ddb-gateway / PostgreSQL | pgbench: pgbench / PostgreSQL | PostgreSQL, gateway / pgbench | servers' CPU, pgbench / gateway |"
    echo "|---|---:|---:|---:|---:|---:|"
    for op in "${OPERATIONS[@]}"; do
        for c in "${CONNECTIONS[@]}"; do
            g="$op,$c,gateway" p="$op,$c,pgbench"
            gw=$(us_per_op "${SERVER_TICKS[$g]}" "${DONE[$g]}") gpg=$(us_per_op "${CLUSTER_TICKS[$g]}" "${DONE[$g]}")
            pb=$(us_per_op "$(( CLIENT_MS[$p] * $(getconf CLK_TCK) / 1000 ))" "${DONE[$p]}") ppg=$(us_per_op "${CLUSTER_TICKS[$p]}" "${DONE[$p]}")
            echo "| ${LABEL[$op]} | $c | $(us_per_op "$(( CLIENT_MS[$g] * $(getconf CLK_TCK) / 1000 ))" "${DONE[$g]}") / $gw / $gpg | $pb / $ppg | $(ratio "$gpg" "$ppg") | $(awk -v a="$pb" -v b="$ppg" -v c="$gw" -v d="$gpg" 'BEGIN { printf "%.2f", (a + b) / (c + d) }') |"
        done
    done
    echo
    echo "The gateway refusing a GET with 405 before its handler runs (wrk -t2, no script; libmicrohttpd closes a connection"
    echo "answered at its headers, so each of these is a new TCP connection: no ceiling, see bench/http_ceiling.sh): $(for c in "${CONNECTIONS[@]}"; do printf '%s at %s connections; ' "$(median "${OPS[ceiling,$c]}") ($(spread "${OPS[ceiling,$c]}")) requests/s" "$c"; done | sed 's/; $/./')"
} | tee "$OUT/report.md"

# after the report: the profiled runs (perf slows the gateway) count in none of its figures
if [ "${BENCH_PROFILE:-0}" = 1 ]; then
    install_packages linux-perf
    for op in "${OPERATIONS[@]}"; do
        echo "== profile of the gateway: $op, 8 connections"
        perf record -g -o "$OUT/perf-$op.data" -p "${GATEWAY_PID[8]}" -- sleep "$SECONDS_PER_RUN" >/dev/null 2>&1 &
        perf_pid=$!
        measure_gateway "$op" 8 99   # a round of its own: its puts write users of their own
        wait "$perf_pid" || true
        perf report -i "$OUT/perf-$op.data" --no-children --sort symbol --stdio 2>/dev/null | grep -v '^$' | head -80 \
            >"$OUT/profile-$op.txt"
    done
fi
