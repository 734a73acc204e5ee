#!/usr/bin/env bash
# The main job: installs what is missing, builds and installs ddb_model,
# starts a throwaway cluster in .cluster/demo, runs the demo (the key type, a
# table, then each model with the seed's example data and its access patterns), and
# leaves the cluster running for psql, with ddb-gateway in front of it, and
# prints how to reach them and how to stop them.  A demo that fails stops
# what it started (the gateway and the cluster) and exits non-zero.
CLUSTER_NAME=demo
source "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"

# the programs the demo runs
GATEWAY_BIN="$ROOT/ddb-gateway"
TRANSFER_BIN="$ROOT/ddb-transfer"

# awscli: a real DynamoDB client for the gateway
install_packages awscli
# DDB_DEMO_INSTALLED=1: the extension and the tools of the installed Debian
# packages (tools/package.sh), not the checkout's
if [ "${DDB_DEMO_INSTALLED:-}" = 1 ]; then
    GATEWAY_BIN=/usr/bin/ddb-gateway TRANSFER_BIN=/usr/bin/ddb-transfer
else
    build_and_install
fi

# From here on a failure stops the gateway and the cluster (the trap is
# disarmed at the end, when the demo has succeeded and leaves them running).
demo_failed() {
    local status=$?
    trap - EXIT
    echo "== the demo failed (exit status $status): stopping the gateway and the cluster it started" >&2
    stop_cluster
    exit "$status"
}
trap demo_failed EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_cluster
cluster_psql -q -c "CREATE DATABASE ddb_demo"
cluster_psql -q -d ddb_demo -c "CREATE EXTENSION ddb_model"
cluster_psql -q -v ON_ERROR_STOP=1 -d ddb_demo -f "$ROOT/tools/demo.sql"
# each model's example data and access patterns
for model_demo in "$ROOT"/tools/demo/*.sql; do
    cluster_psql -q -v ON_ERROR_STOP=1 -d ddb_demo -f "$model_demo"
done

# ddb-gateway on loopback, and the AWS CLI talking to it with a key of the database
GATEWAY_PORT=${DDB_GATEWAY_PORT:-55490}
GATEWAY_PID_FILE="$CLUSTER_DIR/gateway.pid"
DEMO_DSN="host=$SOCKET_DIR port=$PGPORT_NUM user=postgres dbname=ddb_demo"
GATEWAY_LOG="$CLUSTER_DIR/gateway.log"
read -r KEY_ID KEY_SECRET <<<"$(cluster_psql -X -q -At -F ' ' -d ddb_demo -c "SELECT * FROM ddb.create_access_key()")"
"$GATEWAY_BIN" --listen "127.0.0.1:$GATEWAY_PORT" --dsn "$DEMO_DSN" \
    --access-log "$CLUSTER_DIR/gateway-access.log" 2>"$GATEWAY_LOG" &
GATEWAY_PID=$!
echo "$GATEWAY_PID" >"$GATEWAY_PID_FILE"
if ! gateway_ready "$GATEWAY_PID" "$GATEWAY_PORT" "$GATEWAY_LOG"; then
    echo "== ddb-gateway did not become ready on 127.0.0.1:$GATEWAY_PORT; the end of $GATEWAY_LOG:" >&2
    tail -5 "$GATEWAY_LOG" >&2
    if grep -q 'is in use by another program' "$GATEWAY_LOG"; then
        echo "== port $GATEWAY_PORT is taken: run the demo with another one, e.g. DDB_GATEWAY_PORT=$((GATEWAY_PORT + 10)) bash tools/demo.sh" >&2
    elif kill -0 "$GATEWAY_PID" 2>/dev/null; then
        echo "== it did not answer GET /health with 200 within 10 s: its log above says why" >&2
    else
        echo "== it exited: its log above says why" >&2
    fi
    exit 1
fi
aws_demo() {
    AWS_ACCESS_KEY_ID=$KEY_ID AWS_SECRET_ACCESS_KEY=$KEY_SECRET AWS_DEFAULT_REGION=us-east-1 AWS_PAGER= \
        /usr/bin/aws dynamodb --endpoint-url "http://127.0.0.1:$GATEWAY_PORT" --output json "$@"
}
echo
echo "==== ddb-gateway on 127.0.0.1:$GATEWAY_PORT: the AWS CLI, signed with a key from ddb.create_access_key()"
echo "== aws dynamodb get-item --table-name UserServiceTable (the seed's example user)"
aws_demo get-item --table-name UserServiceTable \
    --key '{"PK": {"S": "USER#abc12300-0000-4000-8000-000000000123"}, "SK": {"S": "PROFILE"}}' \
    --projection-expression "firstName, email, version"
echo "== aws dynamodb query --table-name UserServiceTable --index-name GSI1 (login lookup, S3)"
aws_demo query --table-name UserServiceTable --index-name GSI1 \
    --key-condition-expression "GSI1PK = :e" --expression-attribute-values '{":e": {"S": "EMAIL#jane.doe@example.com"}}' \
    --projection-expression "userId, email"

# ddb-transfer: a table out in the format of DynamoDB's export to S3, and into a new table
EXPORT_DIR="$CLUSTER_DIR/export-UserServiceTable"
echo
echo "==== ddb-transfer: UserServiceTable exported as DynamoDB exports to S3, then imported into a new table"
"$TRANSFER_BIN" export --dsn "$DEMO_DSN" --table UserServiceTable --out "$EXPORT_DIR"
cluster_psql -q -d ddb_demo -c "SELECT ddb.create_table('UserServiceImported', 'PK', 'S', 'SK', 'S')" >/dev/null
"$TRANSFER_BIN" import --dsn "$DEMO_DSN" --table UserServiceImported "$EXPORT_DIR"
cluster_psql -q -d ddb_demo -c "SELECT (SELECT count(*) FROM ddb.scan('UserServiceTable')) AS exported_items,
    (SELECT count(*) FROM ddb.scan('UserServiceImported')) AS imported_items,
    (SELECT array_agg(i ORDER BY i::text) FROM ddb.scan('UserServiceTable') i)
    = (SELECT array_agg(i ORDER BY i::text) FROM ddb.scan('UserServiceImported') i) AS same_items"

STOP="kill \$(cat $GATEWAY_PID_FILE); runuser -u postgres -- $PGBIN/pg_ctl -D $PGDATA_DIR stop"
[ "$SOCKET_DIR" = "$CLUSTER_DIR/socket" ] || STOP="$STOP; rm -r $SOCKET_DIR"
cat <<MSG

The demo cluster is running, and ddb-gateway in front of it.
  connect:  psql -h $SOCKET_DIR -p $PGPORT_NUM -U postgres ddb_demo
  gateway:  http://127.0.0.1:$GATEWAY_PORT (log $GATEWAY_LOG, access log $CLUSTER_DIR/gateway-access.log)
  export:   ls $EXPORT_DIR   (ddb-transfer: docs/transfer.md)

To talk to the gateway (docs/gateway.md), paste into a shell:

export AWS_ACCESS_KEY_ID=$KEY_ID AWS_SECRET_ACCESS_KEY=$KEY_SECRET AWS_DEFAULT_REGION=us-east-1
aws dynamodb list-tables --endpoint-url http://127.0.0.1:$GATEWAY_PORT
curl -s --aws-sigv4 "aws:amz:us-east-1:dynamodb" --user "\$AWS_ACCESS_KEY_ID:\$AWS_SECRET_ACCESS_KEY" \\
    -H 'X-Amz-Target: DynamoDB_20120810.ListTables' -H 'Content-Type: application/x-amz-json-1.0' \\
    --data-binary '{}' http://127.0.0.1:$GATEWAY_PORT/

To stop the gateway and the cluster:

$STOP
MSG
trap - EXIT INT TERM
