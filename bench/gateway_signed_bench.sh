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
# one signing gateway per connection count (--pool equal to it: as many
# requests in flight as pgbench has clients) with a key of
# ddb.create_access_key().  The requests are signed in advance
# (bench/gateway/presign.js; the gateway serves a resent request, as AWS
# does) and sent by wrk (bench/gateway/signed.lua).  pgbench runs
# `SELECT ddb.execute(op, request)` with -M prepared, the request built
# from the same values.  Prints a markdown report (also build/gwsigned/report.md).
set -euo pipefail
export CLUSTER_NAME=gwsigned DDB_PGPORT=${DDB_PGPORT:-55437}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"

USERS=${BENCH_USERS:-1000}
ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_PER_RUN=${BENCH_SECONDS:-10}
CONNECTIONS=(8 32)
OPERATIONS=(GetItem Query PutItem)
OUT="$ROOT/build/gwsigned"
DB=ddb_gwsigned
declare -A PORT=([8]=55481 [32]=55482)
rm -rf "$OUT" && mkdir -p "$OUT"

install_packages wrk
build_and_install
start_cluster
GATEWAY_PIDS=()
trap 'kill "${GATEWAY_PIDS[@]}" 2>/dev/null || true; stop_cluster' EXIT
cluster_psql -q -c "CREATE DATABASE $DB"
psql_db() { cluster_psql -d "$DB" "$@"; }
psql_db -q -c "CREATE EXTENSION ddb_model"
DSN="host=$SOCKET_DIR port=$PGPORT_NUM user=postgres dbname=$DB"

# Starts a gateway on a port; extra arguments go to it.
start_gateway() {  # port, pool, args...
    local port=$1 pool=$2
    shift 2
    "$ROOT/ddb-gateway" --listen "127.0.0.1:$port" --pool "$pool" --dsn "$DSN" "$@" 2>>"$OUT/gateway-$port.log" &
    GATEWAY_PIDS+=($!)
    for _ in $(seq 50); do
        curl -s -o /dev/null "http://127.0.0.1:$port/" && return 0
        sleep 0.1
    done
    echo "the gateway on $port did not start (log in $OUT)" >&2
    return 1
}

echo "== preloading $((USERS * 16)) items"
start_gateway 55480 4 --no-auth
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
    start_gateway "${PORT[$c]}" "$c"
done
declare -A OPS LAT
# One wrk run through the gateway; fails on a bad response.
measure_gateway() {  # operation, connections, round
    local log="$OUT/wrk-$1-$2-$3.log"
    # signed just before (a signature is good for 15 minutes); puts write new users, each run its own
    node "$ROOT/bench/gateway/presign.js" "127.0.0.1:${PORT[$2]}" "$KEY_ID" "$SECRET" "$1" "$USERS" 60000 \
        $(( ($2 * 100 + $3) * 10000 )) >"$OUT/signed-$1-$2-$3.txt"
    wrk -t2 -c"$2" -d"${SECONDS_PER_RUN}s" -s "$ROOT/bench/gateway/signed.lua" "http://127.0.0.1:${PORT[$2]}" \
        -- "$OUT/signed-$1-$2-$3.txt" "$1" 2 >"$log"
    if ! grep -q '^checked [1-9][0-9]* bad 0$' "$log" || grep -q '^  Socket errors' "$log"; then
        echo "gateway $1 with $2 connections: bad responses or socket errors" >&2
        cat "$log" >&2
        return 1
    fi
    OPS[$1,$2,gateway]+="$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$log") "
    LAT[$1,$2,gateway]+="$(awk '/^latency p50/ { printf "%.2f", $5 / $3 }' "$log") "
}
# One pgbench run of the same operation.
measure_pgbench() {  # operation, connections
    local log="$OUT/pgbench-$1-$2.log"
    pgbench -n -M prepared -c "$2" -j 2 -T "$SECONDS_PER_RUN" -f "$OUT/$1.sql" -h "$SOCKET_DIR" -p "$PGPORT_NUM" \
        -U postgres "$DB" >"$log" 2>&1 || { cat "$log" >&2; return 1; }
    OPS[$1,$2,pgbench]+="$(awk '/^tps = / { printf "%.0f", $3 }' "$log") "
}

for op in "${OPERATIONS[@]}"; do
    for c in "${CONNECTIONS[@]}"; do
        echo "== warm-up: $op, $c connections"
        measure_gateway "$op" "$c" 0
        measure_pgbench "$op" "$c"
    done
done
OPS=() LAT=()
for op in "${OPERATIONS[@]}"; do
    for c in "${CONNECTIONS[@]}"; do
        for round in $(seq "$ROUNDS"); do
            echo "== $op, $c connections, round $round of $ROUNDS (${SECONDS_PER_RUN}s each)"
            measure_gateway "$op" "$c" "$round"
            measure_pgbench "$op" "$c"
        done
    done
done

median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
spread() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "–" hi }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
declare -A LABEL=([PutItem]="PutItem (new item)" [GetItem]="GetItem" [Query]="Query begins_with (16 items)")
{
    echo "### ddb-gateway (SigV4 on) against pgbench calling ddb.execute"
    echo
    echo "Command: \`BENCH_USERS=$USERS BENCH_ROUNDS=$ROUNDS BENCH_SECONDS=$SECONDS_PER_RUN bash bench/gateway_signed_bench.sh\`"
    echo "($(date -u +%Y-%m-%d), $(nproc) cores, $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2) -t2 with requests signed in advance,"
    echo "pgbench -M prepared -j 2; PostgreSQL $(psql_db -At -c 'SHOW server_version' | cut -d' ' -f1) (fsync off);"
    echo "$((USERS * 16)) items preloaded; ddb_model at $(git -C "$ROOT" rev-parse --short HEAD); the gateway's --pool equal to the connections.)"
    echo
    echo "ops/s: median of $ROUNDS rounds (lowest–highest); the two take turns within each round."
    echo
    echo "| operation | connections | ddb-gateway | pgbench ddb.execute | gateway / pgbench | gateway p99 / p50 |"
    echo "|---|---:|---:|---:|---:|---:|"
    for op in "${OPERATIONS[@]}"; do
        for c in "${CONNECTIONS[@]}"; do
            g=$(median "${OPS[$op,$c,gateway]}")
            p=$(median "${OPS[$op,$c,pgbench]}")
            echo "| ${LABEL[$op]} | $c | $g ($(spread "${OPS[$op,$c,gateway]}")) | $p ($(spread "${OPS[$op,$c,pgbench]}")) | $(ratio "$g" "$p") | $(median "${LAT[$op,$c,gateway]}") |"
        done
    done
} | tee "$OUT/report.md"
