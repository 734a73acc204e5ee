#!/usr/bin/env bash
# bench/gateway_fuzz.sh — malformed and hostile SigV4-signed requests
# against ddb-gateway on loopback for FUZZ_SECONDS (default 60): counts the
# responses by status and fails (exit 1, the offending requests printed)
# when any is a 5xx, when a request got no answer, or when the gateway or a
# PostgreSQL backend died.
#
#   bash bench/gateway_fuzz.sh              # its own cluster (tools/cluster.sh, .cluster/fuzz, port 55437)
#   FUZZ_SECONDS=15 bash bench/gateway_fuzz.sh --running-cluster
#       # the cluster PGHOST/PGPORT/PGUSER name, with the extension and
#       # ddb-gateway built and installed (test/gateway_fuzz.sh, tools/test.sh),
#       # and its server log DDB_SERVER_LOG (tools/cluster.sh sets it)
#
# Starts only what tools/cluster.sh starts, and the built ddb-gateway
# (--pool 4, 127.0.0.1:$FUZZ_PORT, default 55486), with an access key of the
# database ddb_fuzz; the generator is bench/gateway/fuzz.js (node, no
# packages).  FUZZ_CONNECTIONS (default 8) requests in flight, FUZZ_SEED
# repeats a run.  The gateway's log: build/gateway-fuzz/gateway.log.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_PORT=${FUZZ_PORT:-55486}
OUT="$ROOT/build/gateway-fuzz"
DB=ddb_fuzz
mkdir -p "$OUT"

if [ "${1:-}" = --running-cluster ]; then
    : "${PGHOST:?PGHOST names the running cluster}"
    SERVER_LOG="${DDB_SERVER_LOG:-$(dirname "$PGHOST")/server.log}"
else
    export CLUSTER_NAME=fuzz DDB_PGPORT=${DDB_PGPORT:-55437}
    source "$ROOT/tools/cluster.sh"
    install_packages nodejs
    build_and_install
    start_cluster
    SERVER_LOG="$CLUSTER_DIR/server.log"
fi
gateway_pid=
cleanup() {
    if [ -n "$gateway_pid" ]; then kill "$gateway_pid" 2>/dev/null || true; wait "$gateway_pid" 2>/dev/null || true; fi
    if [ "${1:-}" != --running-cluster ]; then stop_cluster; fi
}
trap 'cleanup "${1:-}"' EXIT

psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
psql -X -q -d "$DB" -c "CREATE EXTENSION ddb_model" \
    -c "SELECT ddb.create_table('FuzzHash', 'pk')" \
    -c "SELECT ddb.execute('CreateTable', '{\"TableName\": \"FuzzRange\", \"BillingMode\": \"PAY_PER_REQUEST\",
          \"KeySchema\": [{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}, {\"AttributeName\": \"sk\", \"KeyType\": \"RANGE\"}],
          \"AttributeDefinitions\": [{\"AttributeName\": \"pk\", \"AttributeType\": \"S\"}, {\"AttributeName\": \"sk\", \"AttributeType\": \"N\"},
                                    {\"AttributeName\": \"GSI1PK\", \"AttributeType\": \"S\"}],
          \"GlobalSecondaryIndexes\": [{\"IndexName\": \"GSI1\", \"KeySchema\": [{\"AttributeName\": \"GSI1PK\", \"KeyType\": \"HASH\"}],
                                       \"Projection\": {\"ProjectionType\": \"ALL\"}}],
          \"StreamSpecification\": {\"StreamEnabled\": true, \"StreamViewType\": \"NEW_AND_OLD_IMAGES\"}}')" >/dev/null
read -r key_id secret <<<"$(psql -X -q -At -F ' ' -d "$DB" -c "SELECT * FROM ddb.create_access_key()")"
crashes_before=$(grep -c 'terminated by signal' "$SERVER_LOG" 2>/dev/null || true)

"$ROOT/ddb-gateway" --listen "127.0.0.1:$FUZZ_PORT" --pool 4 \
    --dsn "host=$PGHOST port=$PGPORT user=$PGUSER dbname=$DB" 2>"$OUT/gateway.log" &
gateway_pid=$!
for _ in $(seq 50); do
    curl -sf -o /dev/null "http://127.0.0.1:$FUZZ_PORT/health" && break
    sleep 0.1
done

status=0
node "$ROOT/bench/gateway/fuzz.js" "http://127.0.0.1:$FUZZ_PORT/" "$key_id" "$secret" "$FUZZ_SECONDS" \
    "${FUZZ_CONNECTIONS:-8}" "${FUZZ_SEED:-}" | tee "$OUT/report.txt" || status=1
if ! kill -0 "$gateway_pid" 2>/dev/null; then
    echo "the gateway died (build/gateway-fuzz/gateway.log)"; status=1
fi
kill "$gateway_pid" 2>/dev/null || true
wait "$gateway_pid" 2>/dev/null || true
gateway_pid=
crashes=$(( $(grep -c 'terminated by signal' "$SERVER_LOG" 2>/dev/null || true) - crashes_before ))
echo "backend crashes $crashes"
[ "$crashes" -eq 0 ] || { grep -B2 -A2 'terminated by signal' "$SERVER_LOG" | tail -20; status=1; }
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" || true
exit $status
