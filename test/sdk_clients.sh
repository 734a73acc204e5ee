#!/usr/bin/env bash
# Unchanged AWS clients against ddb-gateway: Debian's AWS CLI and boto3
# (/usr/bin/python3), signed with a key that acts as a role given some
# tables (docs/security.md), with paginated and repeated calls as
# applications make them.  Runs against the cluster of tools/test.sh
# (PGHOST/PGPORT/PGUSER set); prints "<check> ... ok|FAILED" per check.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK="$ROOT/build/sdk_clients"
rm -rf "$WORK" && mkdir -p "$WORK"
status=0
DB=ddb_sdk_clients
PORT=${SDK_TEST_PORT:-55485}
ENDPOINT="http://127.0.0.1:$PORT"

check() {  # name, expected, actual
    if [ "$2" = "$3" ]; then echo "$1 ... ok"; else echo "$1 ... FAILED (expected $2, got $3)"; status=1; fi
}
q() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
    -c "DROP ROLE IF EXISTS ddb_sdk_app" -c "CREATE DATABASE $DB" -c "CREATE ROLE ddb_sdk_app NOLOGIN"
q -c "CREATE EXTENSION ddb_model" -c "SELECT ddb.grant_tables('ddb_sdk_app', 'app_*')" >/dev/null
read -r admin_id admin_secret <<<"$(q -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
read -r app_id app_secret <<<"$(q -F ' ' -c "SELECT * FROM ddb.create_access_key('ddb_sdk_app')")"

"$ROOT/ddb-gateway" --listen "127.0.0.1:$PORT" --dsn "host=$PGHOST port=$PGPORT user=$PGUSER dbname=$DB" --pool 2 \
    2>"$WORK/gateway.log" &
gateway_pid=$!
trap 'kill "$gateway_pid" 2>/dev/null; wait "$gateway_pid" 2>/dev/null' EXIT
for _ in $(seq 50); do
    curl -s -o /dev/null "$ENDPOINT" && break
    sleep 0.1
done

aws_as() {  # ID SECRET aws-arguments...
    local id=$1 secret=$2
    shift 2
    AWS_ACCESS_KEY_ID=$id AWS_SECRET_ACCESS_KEY=$secret AWS_DEFAULT_REGION=us-east-1 AWS_PAGER= AWS_CONFIG_FILE=/dev/null \
        /usr/bin/aws --endpoint-url "$ENDPOINT" --output text "$@" 2>&1
}
aws_app() { aws_as "$app_id" "$app_secret" "$@"; }

aws_as "$admin_id" "$admin_secret" dynamodb create-table --table-name app_orders \
    --attribute-definitions AttributeName=pk,AttributeType=S AttributeName=sk,AttributeType=N \
    --key-schema AttributeName=pk,KeyType=HASH AttributeName=sk,KeyType=RANGE --billing-mode PAY_PER_REQUEST \
    --stream-specification StreamEnabled=true,StreamViewType=NEW_IMAGE >/dev/null
aws_as "$admin_id" "$admin_secret" dynamodb create-table --table-name private \
    --attribute-definitions AttributeName=pk,AttributeType=S --key-schema AttributeName=pk,KeyType=HASH \
    --billing-mode PAY_PER_REQUEST >/dev/null

# ---- the AWS CLI ----
for i in 1 2 3 4 5; do
    aws_app dynamodb put-item --table-name app_orders --item "{\"pk\": {\"S\": \"c1\"}, \"sk\": {\"N\": \"$i\"}}" >/dev/null
done
check "aws: put-item five times, then the same request again (a repeated call)" "" \
    "$(aws_app dynamodb put-item --table-name app_orders --item '{"pk": {"S": "c1"}, "sk": {"N": "5"}}')"
check "aws: scan pages of 2 (the CLI follows LastEvaluatedKey; a Count per page)" "5" \
    "$(aws_app dynamodb scan --table-name app_orders --page-size 2 --query Count | awk '{ n += $1 } END { print n }')"
check "aws: query pages of 2, descending" "5 4 3 2 1" \
    "$(aws_app dynamodb query --table-name app_orders --page-size 2 --no-scan-index-forward \
        --key-condition-expression 'pk = :p' --expression-attribute-values '{":p": {"S": "c1"}}' \
        --query 'Items[].sk.N' | tr '\t\n' '  ' | sed 's/ $//')"
check "aws: get-item, twice" "3 3" \
    "$(aws_app dynamodb get-item --table-name app_orders --key '{"pk": {"S": "c1"}, "sk": {"N": "3"}}' --query Item.sk.N) $(
       aws_app dynamodb get-item --table-name app_orders --key '{"pk": {"S": "c1"}, "sk": {"N": "3"}}' --query Item.sk.N)"
check "aws: list-tables pages of 1 list the role's tables only" "app_orders" \
    "$(aws_app dynamodb list-tables --page-size 1 --query 'TableNames[]' | tr '\t' ' ')"
check "aws: a table outside the role's is AccessDeniedException" "1" \
    "$(aws_app dynamodb get-item --table-name private --key '{"pk": {"S": "a"}}' | grep -c 'AccessDeniedException')"

# ---- boto3 (Debian's) ----
cat >"$WORK/client.py" <<'PY'
import sys, boto3
from boto3.dynamodb.conditions import Key
endpoint, key_id, secret = sys.argv[1:4]
session = boto3.session.Session(aws_access_key_id=key_id, aws_secret_access_key=secret, region_name="us-east-1")
client = session.client("dynamodb", endpoint_url=endpoint)
table = session.resource("dynamodb", endpoint_url=endpoint).Table("app_orders")
out = []
with table.batch_writer() as batch:
    for i in range(6, 26):
        batch.put_item(Item={"pk": "c2", "sk": i, "note": "x" * i})
out.append(sum(p["Count"] for p in client.get_paginator("scan").paginate(TableName="app_orders", PaginationConfig={"PageSize": 3})))
out.append(sum(p["Count"] for p in client.get_paginator("query").paginate(
    TableName="app_orders", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "c2"}},
    PaginationConfig={"PageSize": 4})))
out.append(",".join(n for p in client.get_paginator("list_tables").paginate(PaginationConfig={"PageSize": 1}) for n in p["TableNames"]))
out.append(str([table.get_item(Key={"pk": "c2", "sk": 7})["Item"]["note"] for _ in range(3)] == ["xxxxxxx"] * 3))
out.append(str(table.query(KeyConditionExpression=Key("pk").eq("c2") & Key("sk").between(10, 12))["Count"]))
statement = "SELECT sk FROM \"app_orders\" WHERE pk = 'c2'"
pages, token = 0, None
while True:
    response = client.execute_statement(Statement=statement, Limit=5, **({"NextToken": token} if token else {}))
    pages += 1
    token = response.get("NextToken")
    if not token:
        break
out.append(str(pages))
streams = session.client("dynamodbstreams", endpoint_url=endpoint)
arn = client.describe_table(TableName="app_orders")["Table"]["LatestStreamArn"]
shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
out.append(str(len(streams.get_records(ShardIterator=iterator)["Records"])))
try:
    client.get_item(TableName="private", Key={"pk": {"S": "a"}})
    out.append("served")
except client.exceptions.ClientError as e:
    out.append(e.response["Error"]["Code"])
print(" ".join(str(x) for x in out))
PY
check "boto3: batch_writer, paginated scan, query and list_tables, repeated get_item, PartiQL pages, a stream, a refusal" \
    "25 20 app_orders True 3 5 25 AccessDeniedException" \
    "$(/usr/bin/python3 "$WORK/client.py" "$ENDPOINT" "$app_id" "$app_secret" 2>&1 | tail -1)"

kill "$gateway_pid"
wait "$gateway_pid" 2>/dev/null
trap - EXIT
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "DROP ROLE IF EXISTS ddb_sdk_app"
exit $status
