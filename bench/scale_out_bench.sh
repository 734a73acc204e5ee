#!/usr/bin/env bash
# bench/scale_out_bench.sh — the sharded deployment of tools/scale-out.sh
# (a router, two shard primaries with a standby each) against a single
# node, both through ddb-gateway with SigV4 on, on this machine (issue 18,
# part 3; target: sharded at least 0.7 of the single node): GetItem, Query
# begins_with (16 items) and PutItem (a new item each) at 8 and 32
# connections, in rounds where the two take turns; then the per-shard load
# balance and, from the CPU each part spent per operation, an estimate of
# throughput on N machines.  The sharded side runs twice in each round
# (issue 33, target 2): "sharded", its gateways sending requests of one
# partition key straight to their shard (docs/scale-out.md), and "routed",
# the same gateways with every request through the router (the router's map
# marks no partition direct meanwhile, which the gateways hear at once).
#
#   flock /tmp/ddb-test.lock bash bench/scale_out_bench.sh
#   BENCH_USERS=2000 BENCH_ROUNDS=5 BENCH_SECONDS=10 flock /tmp/ddb-test.lock bash bench/scale_out_bench.sh
#
# Installs wrk (Debian), builds and installs the extension, starts a
# throwaway single-node cluster (port BENCH_PORT + 6) and the sharded deployment
# (tools/scale-out.sh in build/scale-out-bench, ports BENCH_PORT to + 5), every
# server with fsync off.  Both get BENCH_USERS users of 16 items
# (bench/gateway/load.js through a gateway without signatures).  The
# clients are those of bench/gateway_signed_bench.sh: requests signed in
# advance (bench/gateway/presign.js) and sent by wrk
# (bench/gateway/signed.lua, every response checked).  Each side has a
# gateway per connection count with --pool equal to it: the single node's
# on its database, the sharded side's on the router's database, as
# tools/scale-out.sh runs its own.  Measures the CPU of every process per
# operation (wrk, gateways, each cluster), and on each shard the
# transactions (pg_stat_database) and the CPU of the sharded runs of each
# operation.  Prints a markdown report (also build/scale-out-bench/report.md).
set -euo pipefail
# the ports: BENCH_PORT (55580) to BENCH_PORT + 11
BASE=${BENCH_PORT:-55580}
export CLUSTER_NAME=scalebench DDB_PGPORT=$((BASE + 6))
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"
source "$ROOT/bench/lib/gateway.sh"
source "$ROOT/bench/lib/stats.sh"
source "$ROOT/bench/lib/cpu.sh"

USERS=${BENCH_USERS:-1000}
ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_PER_RUN=${BENCH_SECONDS:-10}
CONNECTIONS=(8 32)
OPERATIONS=(GetItem Query PutItem)
TARGETS=(single sharded routed)
SHARDS=(shard1 shard2)
OUT="$ROOT/build/scale-out-bench"
DB=ddb_scalebench
export DDB_SCALE_OUT_DIR="$OUT/deployment" DDB_SCALE_OUT_PGPORT=$BASE DDB_SCALE_OUT_GATEWAY_PORT=$((BASE + 5))
export DDB_SCALE_OUT_SERVER_OPTS="-c fsync=off" DDB_SCALE_OUT_INSTALLED=1
# routed: the sharded side's gateways, every request through the router
declare -A PORT=([single,8]=$((BASE + 7)) [single,32]=$((BASE + 8)) [sharded,8]=$((BASE + 9)) [sharded,32]=$((BASE + 10))
                 [routed,8]=$((BASE + 9)) [routed,32]=$((BASE + 10)))

install_packages wrk
build_and_install
bash "$ROOT/tools/scale-out.sh" stop >/dev/null
rm -rf "$OUT" && mkdir -p "$OUT"
start_cluster
trap 'kill "${GATEWAY_PIDS[@]}" 2>/dev/null || true; bash "$ROOT/tools/scale-out.sh" stop >/dev/null; stop_cluster' EXIT
echo "== starting the sharded deployment (tools/scale-out.sh, log in $OUT/scale-out-start.log)"
bash "$ROOT/tools/scale-out.sh" start >"$OUT/scale-out-start.log"
source "$DDB_SCALE_OUT_DIR/deployment.env"   # SOCKET, BASE_PORT
cluster_psql -q -c "CREATE DATABASE $DB"
cluster_psql -q -d "$DB" -c "CREATE EXTENSION ddb_model"
declare -A DSN_OF=([single]="host=$SOCKET_DIR port=$PGPORT_NUM user=postgres dbname=$DB"
                   [sharded]="host=$SOCKET port=$BASE_PORT user=postgres dbname=ddb")
LOADED=(single sharded)
declare -A SERVER_PORT=([router]=$BASE_PORT [shard1]=$((BASE_PORT + 1)) [shard2]=$((BASE_PORT + 2))
                        [shard1_standby]=$((BASE_PORT + 3)) [shard2_standby]=$((BASE_PORT + 4)))
# psql on a database of a target: the single node's, or a server of the deployment by name
target_psql() {  # single | server name, psql arguments...
    local target=$1
    shift
    if [ "$target" = single ]; then
        cluster_psql -X -q -At -d "$DB" "$@"
    else
        psql -X -q -At -h "$SOCKET" -p "${SERVER_PORT[$target]}" -U postgres -d ddb "$@"
    fi
}

echo "== preloading $((USERS * 16)) items on each side"
for target in "${LOADED[@]}"; do
    DSN=${DSN_OF[$target]}
    start_gateway $((BASE + 11)) 4 --development --access-log off
    node "$ROOT/bench/gateway/load.js" "http://127.0.0.1:$((BASE + 11))" "$USERS"
    kill "${GATEWAY_PIDS[0]}" && wait "${GATEWAY_PIDS[0]}" 2>/dev/null || true
    GATEWAY_PIDS=()
done
target_psql single -c "VACUUM ANALYZE"
for shard in "${SHARDS[@]}"; do
    target_psql "$shard" -c "VACUUM ANALYZE"
done

declare -A KEY_ID SECRET GATEWAY_PID
read -r KEY_ID[single] SECRET[single] <<<"$(target_psql single -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
read -r KEY_ID[sharded] SECRET[sharded] <<<"$(target_psql router -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
KEY_ID[routed]=${KEY_ID[sharded]} SECRET[routed]=${SECRET[sharded]}
for target in "${LOADED[@]}"; do
    DSN=${DSN_OF[$target]}
    for c in "${CONNECTIONS[@]}"; do
        start_gateway "${PORT[$target,$c]}" "$c"
        GATEWAY_PID[$target,$c]=${GATEWAY_PIDS[-1]}
    done
done
for c in "${CONNECTIONS[@]}"; do
    GATEWAY_PID[routed,$c]=${GATEWAY_PID[sharded,$c]}
done
# the processes whose CPU is counted, by part: the single node's cluster, and each server of the deployment
declare -A POSTMASTER=([postgres]=$(head -1 "$PGDATA_DIR/postmaster.pid"))
for name in router "${SHARDS[@]}" shard1_standby shard2_standby; do
    POSTMASTER[$name]=$(head -1 "$DDB_SCALE_OUT_DIR/$name/postmaster.pid")
done
declare -A PARTS=([single]="postgres" [sharded]="router shard1 shard2 shard1_standby shard2_standby")
PARTS[routed]=${PARTS[sharded]}
# Whether the sharded side's gateways send requests straight to the shards: the router's map marks
# every partition direct, or none; the gateways read it again at its NOTIFY (a moment: 1 s is ample).
DIRECT=on
direct() {  # on | off
    [ "$DIRECT" = "$1" ] && return 0
    target_psql router -c "UPDATE ddb_router.partitions SET direct = $([ "$1" = on ] && echo true || echo false)"
    DIRECT=$1
    sleep 1
}

declare -A OPS LAT CLIENT_MS TICKS DONE
# The CPU ticks of each part of a target, and of its gateway for a connection count, as "part=ticks ...".
part_ticks() {  # target, connections
    local part
    echo "gateway=$(cpu_ticks "${GATEWAY_PID[$1,$2]}")"
    for part in ${PARTS[$1]}; do
        echo "$part=$(cluster_ticks "${POSTMASTER[$part]}")"
    done
}
# One wrk run through a target's gateway; fails on a bad response, or a response later than 10 s.
measure() {  # target, operation, connections, round
    local target=$1 op=$2 c=$3 round=$4 log="$OUT/wrk-$1-$2-$3-$4.log" before after line part ops
    case "$target" in
        sharded) direct on ;;
        routed) direct off ;;
    esac
    # signed just before (a signature is good for 15 minutes); puts write new users, each run its own
    node "$ROOT/bench/gateway/presign.js" "127.0.0.1:${PORT[$target,$c]}" "${KEY_ID[$target]}" "${SECRET[$target]}" \
        "$op" "$USERS" 60000 $(( ($c * 100 + $round) * 10000 )) >"$OUT/signed-$target-$op-$c-$round.txt"
    before=$(part_ticks "$target" "$c")
    { TIMEFORMAT='%3U %3S'; time wrk -t2 -c"$c" -d"${SECONDS_PER_RUN}s" --timeout 10s -s "$ROOT/bench/gateway/signed.lua" \
        "http://127.0.0.1:${PORT[$target,$c]}" -- "$OUT/signed-$target-$op-$c-$round.txt" "$op" 2 >"$log"; } 2>"$log.time"
    after=$(part_ticks "$target" "$c")
    if ! grep -q '^checked [1-9][0-9]* bad 0$' "$log" || grep -q '^  Socket errors' "$log"; then
        echo "$target $op with $c connections: bad responses or socket errors" >&2
        cat "$log" >&2
        return 1
    fi
    ops=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$log")
    OPS[$target,$op,$c]+="$ops "
    LAT[$target,$op,$c]+="$(awk '/^latency p50/ { printf "%.2f", $3 / 1000 }' "$log") "
    CLIENT_MS[$target,$op,$c]=$(( ${CLIENT_MS[$target,$op,$c]:-0} + $(awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$log.time") ))
    DONE[$target,$op,$c]=$(( ${DONE[$target,$op,$c]:-0} + ops * SECONDS_PER_RUN ))
    while read -r line; do
        part=${line%%=*}
        TICKS[$target,$op,$c,$part]=$(( ${TICKS[$target,$op,$c,$part]:-0} + ${line#*=} \
            - $(grep "^$part=" <<<"$before" | cut -d= -f2) ))
    done <<<"$after"
}
# The committed transactions of each shard's database, as "shard=count ..." (after the backends' stats reached it).
shard_transactions() {
    local shard
    # an idle backend reports its statistics within 10 s (PGSTAT_IDLE_INTERVAL)
    sleep 11
    for shard in "${SHARDS[@]}"; do
        printf '%s=%s ' "$shard" "$(target_psql "$shard" -c "SELECT xact_commit FROM pg_stat_database WHERE datname = 'ddb'")"
    done
}

for op in "${OPERATIONS[@]}"; do
    for c in "${CONNECTIONS[@]}"; do
        echo "== warm-up: $op, $c connections"
        for target in "${TARGETS[@]}"; do
            measure "$target" "$op" "$c" 0
        done
    done
done
OPS=() LAT=() CLIENT_MS=() TICKS=() DONE=()
declare -A XACT
before=$(shard_transactions)
for op in "${OPERATIONS[@]}"; do
    for c in "${CONNECTIONS[@]}"; do
        for round in $(seq "$ROUNDS"); do
            echo "== $op, $c connections, round $round of $ROUNDS (${SECONDS_PER_RUN}s each, single node, sharded, routed)"
            for target in "${TARGETS[@]}"; do
                measure "$target" "$op" "$c" "$round"
            done
        done
    done
    after=$(shard_transactions)
    for shard in "${SHARDS[@]}"; do
        XACT[$op,$shard]=$(( $(grep -o "$shard=[0-9]*" <<<"$after" | cut -d= -f2) - $(grep -o "$shard=[0-9]*" <<<"$before" | cut -d= -f2) ))
    done
    before=$after
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# CPU microseconds per operation of ticks over the operations done.
us_per_op() {  # ticks, operations
    awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }'
}
# CPU microseconds per operation of the client's milliseconds.
client_us() {  # key
    us_per_op "$(( CLIENT_MS[$1] * $(getconf CLK_TCK) / 1000 ))" "${DONE[$1]}"
}
# A part's CPU microseconds per operation in the runs of a target, operation and connection count.
part_us() {  # target, operation, connections, part
    us_per_op "${TICKS[$1,$2,$3,$4]}" "${DONE[$1,$2,$3]}"
}
# A count's share of a total, in percent.
share() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * a / b }'; }
declare -A LABEL=([PutItem]="PutItem (new item)" [GetItem]="GetItem" [Query]="Query begins_with (16 items)")
items1=$(target_psql shard1 -c "SELECT count(*) FROM ddb.scan('GwBench')")
items2=$(target_psql shard2 -c "SELECT count(*) FROM ddb.scan('GwBench')")
partitions1=$(target_psql router -c "SELECT count(*) FROM ddb_router.partitions WHERE node_name = 'shard1'")
partitions=$(target_psql router -c "SELECT count(*) FROM ddb_router.partitions")
{
    echo "### The sharded deployment against a single node, through ddb-gateway"
    echo
    echo "Command: \`BENCH_USERS=$USERS BENCH_ROUNDS=$ROUNDS BENCH_SECONDS=$SECONDS_PER_RUN flock /tmp/ddb-test.lock bash bench/scale_out_bench.sh\`"
    echo "($(date -u +%Y-%m-%d), $(nproc) cores, $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2) -t2 with requests signed in advance;"
    echo "PostgreSQL $(target_psql single -c 'SHOW server_version' | cut -d' ' -f1), every server fsync off; $((USERS * 16)) items preloaded on each side;"
    echo "ddb_model at $(git -C "$ROOT" rev-parse --short HEAD); a gateway per connection count with --pool equal to it.)"
    echo "The sharded side: tools/scale-out.sh's router, 2 shard primaries ($partitions partitions) and their 2 streaming standbys,"
    echo "all on this machine with the gateways and wrk."
    echo
    echo "ops/s: median of $ROUNDS rounds (lowest–highest); the three take turns within each round. sharded: requests"
    echo "of one partition key sent straight to their shard; routed: the same gateways, every request through the router."
    echo
    echo "| operation | connections | single node | sharded | routed | sharded / single | routed / single | p50 latency ms, single / sharded / routed |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    for op in "${OPERATIONS[@]}"; do
        for c in "${CONNECTIONS[@]}"; do
            s=$(median "${OPS[single,$op,$c]}") d=$(median "${OPS[sharded,$op,$c]}") r=$(median "${OPS[routed,$op,$c]}")
            echo "| ${LABEL[$op]} | $c | $s ($(spread "${OPS[single,$op,$c]}")) | $d ($(spread "${OPS[sharded,$op,$c]}")) | $r ($(spread "${OPS[routed,$op,$c]}")) | $(ratio "$d" "$s") | $(ratio "$r" "$s") | $(median "${LAT[single,$op,$c]}") / $(median "${LAT[sharded,$op,$c]}") / $(median "${LAT[routed,$op,$c]}") |"
        done
    done
    echo
    echo "Where the CPU goes: microseconds of CPU per operation over all rounds, of wrk (time(1)), the gateway's"
    echo "process, and each cluster's processes (the router's backends make the PL/Proxy calls)."
    echo
    echo "The last columns: the CPU of the gateway and the primaries (router and shards) per operation, over the single"
    echo "node's (gateway and PostgreSQL)."
    echo
    echo "| operation | connections | single: wrk / gateway / PostgreSQL | sharded: wrk / gateway / router / shard1 / shard2 / standbys | routed: the same | CPU sharded / single | CPU routed / single |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for op in "${OPERATIONS[@]}"; do
        for c in "${CONNECTIONS[@]}"; do
            line="| ${LABEL[$op]} | $c | $(client_us "single,$op,$c") / $(part_us single "$op" "$c" gateway) / $(part_us single "$op" "$c" postgres)"
            for target in sharded routed; do
                standbys=$(( TICKS[$target,$op,$c,shard1_standby] + TICKS[$target,$op,$c,shard2_standby] ))
                line+=" | $(client_us "$target,$op,$c") / $(part_us "$target" "$op" "$c" gateway) / $(part_us "$target" "$op" "$c" router) / $(part_us "$target" "$op" "$c" shard1) / $(part_us "$target" "$op" "$c" shard2) / $(us_per_op "$standbys" "${DONE[$target,$op,$c]}")"
            done
            single_cpu=$(awk -v a="$(part_us single "$op" "$c" gateway)" -v b="$(part_us single "$op" "$c" postgres)" 'BEGIN { print a + b }')
            for target in sharded routed; do
                line+=" | $(awk -v s="$single_cpu" -v g="$(part_us "$target" "$op" "$c" gateway)" -v r="$(part_us "$target" "$op" "$c" router)" \
                    -v a="$(part_us "$target" "$op" "$c" shard1)" -v b="$(part_us "$target" "$op" "$c" shard2)" 'BEGIN { printf "%.2f", (g + r + a + b) / s }')"
            done
            echo "$line |"
        done
    done
    echo
    echo "Load balance: shard1 holds $partitions1 of the $partitions partitions and $items1 of the $((items1 + items2)) items"
    echo "($(share "$items1" $((items1 + items2)))%). Over the sharded runs of each operation (both connection counts, all rounds), the"
    echo "transactions committed on each shard's database (pg_stat_database) and the CPU of each shard's cluster:"
    echo
    echo "| operation | transactions shard1 / shard2 | shard1's share | CPU s shard1 / shard2 | shard1's share |"
    echo "|---|---:|---:|---:|---:|"
    for op in "${OPERATIONS[@]}"; do
        t1=0 t2=0
        for c in "${CONNECTIONS[@]}"; do
            t1=$(( t1 + TICKS[sharded,$op,$c,shard1] )) t2=$(( t2 + TICKS[sharded,$op,$c,shard2] ))
        done
        echo "| ${LABEL[$op]} | ${XACT[$op,shard1]} / ${XACT[$op,shard2]} | $(share "${XACT[$op,shard1]}" $(( XACT[$op,shard1] + XACT[$op,shard2] )))% | $(awk -v a="$t1" -v b="$t2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f / %.1f", a / hz, b / hz }') | $(share "$t1" $((t1 + t2)))% |"
    done
    echo
    echo "Throughput on N machines of $(nproc) cores, estimated from the CPU per operation at 32 connections (the model:"
    echo "docs/scale-out.md, \"Measured\"; clients on machines of their own, standbys not counted). g, r, s: the gateway's,"
    echo "the router's and the shards' (together) CPU µs per operation; i: the busiest shard's share × 2. With a router"
    echo "on every machine, X(N) = N × cores / (g + r + s × i); with one router machine and N - 1 machines of"
    echo "gateways and shards, X(N) = min(cores / r, (N - 1) × cores / (g + s × i))."
    echo
    echo "| operation | g / r / s µs | i | a router on every machine: X(1) / X(4) / X(16) | one router machine: X(4) / X(16) (its bound) |"
    echo "|---|---:|---:|---:|---:|"
    for op in "${OPERATIONS[@]}"; do
        awk -v g="$(part_us sharded "$op" 32 gateway)" -v r="$(part_us sharded "$op" 32 router)" \
            -v s1="$(part_us sharded "$op" 32 shard1)" -v s2="$(part_us sharded "$op" 32 shard2)" \
            -v x1="${XACT[$op,shard1]}" -v x2="${XACT[$op,shard2]}" -v cores="$(nproc)" -v label="${LABEL[$op]}" '
            function min(a, b) { return a < b ? a : b }
            BEGIN {
                s = s1 + s2
                i = 2 * (x1 > x2 ? x1 : x2) / (x1 + x2)
                every = cores * 1e6 / (g + r + s * i)
                bound = cores * 1e6 / r
                rest = cores * 1e6 / (g + s * i)
                printf "| %s | %.1f / %.1f / %.1f | %.2f | %.0f / %.0f / %.0f | %.0f / %.0f (%.0f) |\n", label, g, r, s, i,
                    every, 4 * every, 16 * every, min(bound, 3 * rest), min(bound, 15 * rest), bound
            }'
    done
} | tee "$OUT/report.md"
