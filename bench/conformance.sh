#!/usr/bin/env bash
# bench/conformance.sh — runs the public DynamoDB conformance suite
# (nubo-db/dynamodb-conformance, about 600 tests recorded against real
# DynamoDB) against ddb-gateway, and prints pass/fail per tier.
#
#   bash bench/conformance.sh [SUITE]     # SUITE: a checkout, or a git dir of one
#   CONFORMANCE_DEPLOYMENT=router bash bench/conformance.sh
#                                          # through a router (ddb_router) and two node
#                                          # databases of the cluster (docs/scale-out.md), the
#                                          # requests of one partition key straight to their node
#   CONFORMANCE_DEPLOYMENT=scale-out bash bench/conformance.sh
#                                          # through tools/scale-out.sh's deployment: a router
#                                          # and two shards with standbys, clusters of their own
#
# The suite is not part of this project and never committed: the script
# copies it into build/conformance/suite (from the git dir the search
# tool's fetch leaves, by default), installs it with npm (`npm ci` fails on
# a locked version the registry lacks, so --no-package-lock), and always
# sets DYNAMODB_ENDPOINT to the loopback gateway (unset, it would target
# real AWS).  It runs tiers by path (the suite's test:tier scripts break on
# vitest 3.2).  The suite drops every _conformance_* table of the endpoint.
# Results: build/conformance/tier<N>.json and the summary printed at the end.
set -euo pipefail
export CLUSTER_NAME=conformance DDB_PGPORT=${DDB_PGPORT:-55436}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"

SUITE=${1:-/work/.mirror/nubo-db+dynamodb-conformance/repo}
DEPLOYMENT=${CONFORMANCE_DEPLOYMENT:-single}
case "$DEPLOYMENT" in
    single|router|scale-out) ;;
    *) echo "CONFORMANCE_DEPLOYMENT is single, router or scale-out, not $DEPLOYMENT" >&2; exit 2 ;;
esac
OUT="$ROOT/build/conformance$( [ "$DEPLOYMENT" = single ] || echo "-$DEPLOYMENT")"
GATEWAY_PORT=${CONFORMANCE_GATEWAY_PORT:-55491}
rm -rf "$OUT/suite" && mkdir -p "$OUT/suite"
if [ -d "$SUITE/.git" ] || [ ! -e "$SUITE/package.json" ]; then
    git --git-dir="${SUITE%/}/$( [ -d "$SUITE/.git" ] && echo .git )" archive HEAD | tar -x -C "$OUT/suite"
else
    cp -r "$SUITE/." "$OUT/suite"
fi
(cd "$OUT/suite" && npm install --no-package-lock --no-audit --no-fund --silent >"$OUT/npm.log" 2>&1)

install_packages
build_and_install
if [ "$DEPLOYMENT" = scale-out ]; then
    # the one-command deployment, on ports of its own, with its own gateway on GATEWAY_PORT
    export DDB_SCALE_OUT_DIR="$OUT/deployment" DDB_SCALE_OUT_PGPORT=${CONFORMANCE_SCALE_OUT_PGPORT:-55580}
    trap 'bash "$ROOT/tools/scale-out.sh" stop >/dev/null 2>&1' EXIT
    DDB_SCALE_OUT_INSTALLED=1 DDB_SCALE_OUT_GATEWAY_PORT=$GATEWAY_PORT DDB_SCALE_OUT_SERVER_OPTS="-c fsync=off" \
        bash "$ROOT/tools/scale-out.sh" start >"$OUT/deployment.log" 2>&1
    KEY_ID=$(sed -n 's/^access_key_id=//p' "$OUT/deployment.log")
    KEY_SECRET=$(sed -n 's/^secret_access_key=//p' "$OUT/deployment.log")
else
    start_cluster
    trap 'kill "${gateway_pid:-0}" 2>/dev/null; stop_cluster' EXIT
    cluster_psql -q -c "DROP DATABASE IF EXISTS ddb_conformance" -c "CREATE DATABASE ddb_conformance"
    case "$DEPLOYMENT" in
        single) cluster_psql -q -d ddb_conformance -c "CREATE EXTENSION ddb_model" ;;
        router)
            # the gateway serves the router, whose two nodes are databases of the same cluster
            cluster_psql -q -d ddb_conformance -c "SET client_min_messages = warning" -c "CREATE EXTENSION ddb_router CASCADE"
            for node in n0 n1; do
                cluster_psql -q -c "DROP DATABASE IF EXISTS ddb_conformance_$node" -c "CREATE DATABASE ddb_conformance_$node"
                cluster_psql -q -d "ddb_conformance_$node" -c "CREATE EXTENSION ddb_model"
                cluster_psql -q -d ddb_conformance -c "SELECT ddb_router.add_node('$node',
                    'host=$SOCKET_DIR port=$PGPORT_NUM user=postgres dbname=ddb_conformance_$node')" >/dev/null
            done
            cluster_psql -q -d ddb_conformance -c "SELECT ddb_router.create_partitions(16)" \
                -c "SELECT ddb_router.publish_partitions()" >/dev/null ;;
    esac
    read -r KEY_ID KEY_SECRET <<<"$(cluster_psql -X -q -At -F ' ' -d ddb_conformance -c "SELECT * FROM ddb.create_access_key()")"
    "$ROOT/ddb-gateway" --listen "127.0.0.1:$GATEWAY_PORT" --pool 4 \
        --dsn "host=$SOCKET_DIR port=$PGPORT_NUM user=postgres dbname=ddb_conformance" 2>"$OUT/gateway.log" &
    gateway_pid=$!
    for _ in $(seq 50); do
        curl -sf -o /dev/null "http://127.0.0.1:$GATEWAY_PORT/health" && break
        sleep 0.1
    done
fi

for tier in 1 2 3; do
    echo "== tier $tier"
    (cd "$OUT/suite" && DYNAMODB_ENDPOINT="http://127.0.0.1:$GATEWAY_PORT" AWS_REGION=us-east-1 \
        AWS_ACCESS_KEY_ID="$KEY_ID" AWS_SECRET_ACCESS_KEY="$KEY_SECRET" \
        npx vitest run "tests/tier$tier" --reporter=json --outputFile="$OUT/tier$tier.json" >"$OUT/tier$tier.log" 2>&1) || true
done

node -e '
const fs = require("fs");
for (const tier of [1, 2, 3]) {
  const file = process.argv[1] + "/tier" + tier + ".json";
  if (!fs.existsSync(file)) { console.log("tier " + tier + ": no result"); continue; }
  const r = JSON.parse(fs.readFileSync(file, "utf8"));
  const pct = r.numTotalTests ? (100 * r.numPassedTests / r.numTotalTests).toFixed(1) : "0";
  console.log("tier " + tier + ": " + r.numPassedTests + " of " + r.numTotalTests + " passed (" + pct + "%), " +
              r.numFailedTests + " failed, " + r.numPendingTests + " skipped");
}' "$OUT" | tee "$OUT/summary.txt"
