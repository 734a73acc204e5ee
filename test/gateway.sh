#!/usr/bin/env bash
# ddb-gateway speaks DynamoDB's HTTP protocol: starts the built binary on a
# loopback port against the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER
# set), sends requests with curl, and prints "<check> ... ok|FAILED" per
# check.  Stops the gateway it started.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK="$ROOT/build/gateway"
rm -rf "$WORK" && mkdir -p "$WORK"
status=0
DB=ddb_gateway
PORT=${GATEWAY_TEST_PORT:-55480}
URL="http://127.0.0.1:$PORT/"

check() {  # name, expected, actual
    if [ "$2" = "$3" ]; then echo "$1 ... ok"; else echo "$1 ... FAILED (expected $2, got $3)"; status=1; fi
}
# call ACTION BODY: the response body in $WORK/body, headers in $WORK/headers; prints the status
call() {
    curl -s -o "$WORK/body" -D "$WORK/headers" -w '%{http_code}' -X POST "$URL" \
        -H "X-Amz-Target: DynamoDB_20120810.$1" -H 'Content-Type: application/x-amz-json-1.0' --data-binary "$2"
}
header() { grep -i "^$1:" "$WORK/headers" | cut -d' ' -f2- | tr -d '\r'; }

psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
psql -X -q -d "$DB" -c "CREATE EXTENSION ddb_model"
"$ROOT/ddb-gateway" --listen "127.0.0.1:$PORT" --dsn "host=$PGHOST port=$PGPORT user=$PGUSER dbname=$DB" --pool 2 \
    2>"$WORK/gateway.log" &
gateway_pid=$!
trap 'kill "$gateway_pid" 2>/dev/null; wait "$gateway_pid" 2>/dev/null' EXIT
for _ in $(seq 50); do
    curl -s -o /dev/null "$URL" && break
    sleep 0.1
done

check "CreateTable through HTTP" "200 ACTIVE" \
    "$(call CreateTable '{"TableName": "Gateway", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') $(grep -o '"TableStatus": *"[A-Z]*"' "$WORK/body" | grep -o '[A-Z]*"$' | tr -d '"')"
check "PutItem answers {}" "200 {}" "$(call PutItem '{"TableName": "Gateway", "Item": {"pk": {"S": "a"}, "n": {"N": "1"}}}') $(cat "$WORK/body")"
check "GetItem returns the item" "200" "$(call GetItem '{"TableName": "Gateway", "Key": {"pk": {"S": "a"}}}')"
check "the response is DynamoDB JSON" '{"Item": {"n": {"N": "1"}, "pk": {"S": "a"}}}' "$(cat "$WORK/body")"
check "x-amz-crc32 is the body's CRC32" \
    "$(perl -MCompress::Zlib -e 'local $/; open my $f, "<", $ARGV[0]; print crc32(<$f>)' "$WORK/body")" "$(header x-amz-crc32)"
check "Content-Type is application/x-amz-json-1.0" "application/x-amz-json-1.0" "$(header content-type)"
check "a failed condition is 400 with DynamoDB's error body" "400 com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException" \
    "$(call PutItem '{"TableName": "Gateway", "Item": {"pk": {"S": "a"}}, "ConditionExpression": "attribute_not_exists(pk)"}') $(grep -o '"__type": *"[^"]*"' "$WORK/body" | cut -d'"' -f4)"
check "an unknown table is ResourceNotFoundException" "400 com.amazonaws.dynamodb.v20120810#ResourceNotFoundException" \
    "$(call GetItem '{"TableName": "Nope", "Key": {"pk": {"S": "a"}}}') $(grep -o '"__type": *"[^"]*"' "$WORK/body" | cut -d'"' -f4)"
check "a body that is not JSON is SerializationException" "400 com.amazon.coral.service#SerializationException" \
    "$(call GetItem 'not json') $(grep -o '"__type": *"[^"]*"' "$WORK/body" | cut -d'"' -f4)"
check "a request without X-Amz-Target is refused" "400" \
    "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL" --data-binary '{}')"
check "a body over 16 MB is refused before it is read" "413" \
    "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL" -H 'X-Amz-Target: DynamoDB_20120810.PutItem' \
        -H 'Content-Length: 16777217' --data-binary '{}' --max-time 5)"
check "keep-alive: two requests, one connection" "1" \
    "$(curl -s -o /dev/null -o /dev/null -w '%{num_connects}\n' -X POST -H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
        --data-binary '{}' "$URL" "$URL" | paste -sd+ | bc)"

kill "$gateway_pid"
wait "$gateway_pid" 2>/dev/null
check "the gateway stops on SIGTERM" "0" "$(kill -0 "$gateway_pid" 2>/dev/null && echo 1 || echo 0)"
trap - EXIT
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB"
exit $status
