#!/usr/bin/env bash
# Unchanged AWS clients against ddb-gateway: Debian's AWS CLI and boto3
# (/usr/bin/python3), signed with a key that acts as a role given some
# tables (docs/security.md), with paginated and repeated calls as
# applications make them.  Runs against the cluster of tools/test.sh
# (PGHOST/PGPORT/PGUSER set); prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir sdk_clients
DB=ddb_sdk_clients
PORT=${SDK_TEST_PORT:-55485}
ENDPOINT="http://127.0.0.1:$PORT"

drop_db "$DB"
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS ddb_sdk_app" -c "CREATE ROLE ddb_sdk_app NOLOGIN"
fresh_db --extension "$DB"
q -c "SELECT ddb.grant_tables('ddb_sdk_app', 'app_*')" >/dev/null
read -r admin_id admin_secret <<<"$(q -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
read -r app_id app_secret <<<"$(q -F ' ' -c "SELECT * FROM ddb.create_access_key('ddb_sdk_app')")"

start_gateway "$PORT" "$WORK/gateway.log" --dsn "dbname=$DB" --pool 2

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

# ---- a multi-attribute GSI (docs/tables.md), end to end through boto3 ----
cat >"$WORK/multi_key.py" <<'PY'
import sys, boto3
endpoint, key_id, secret = sys.argv[1:4]
session = boto3.session.Session(aws_access_key_id=key_id, aws_secret_access_key=secret, region_name="us-east-1")
client = session.client("dynamodb", endpoint_url=endpoint)
S = lambda v: {"S": v}
N = lambda v: {"N": str(v)}
client.create_table(TableName="app_matches", BillingMode="PAY_PER_REQUEST",
    KeySchema=[{"AttributeName": "matchId", "KeyType": "HASH"}],
    AttributeDefinitions=[{"AttributeName": a, "AttributeType": t} for a, t in
                          [("matchId", "S"), ("tournament", "S"), ("region", "S"), ("round", "S"), ("score", "N")]],
    GlobalSecondaryIndexes=[{"IndexName": "ByTournament",
        "KeySchema": [{"AttributeName": "tournament", "KeyType": "HASH"}, {"AttributeName": "region", "KeyType": "HASH"},
                      {"AttributeName": "round", "KeyType": "RANGE"}, {"AttributeName": "score", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "ALL"}}])
out = []
described = client.describe_table(TableName="app_matches")["Table"]["GlobalSecondaryIndexes"][0]["KeySchema"]
out.append(",".join(k["AttributeName"] + ":" + k["KeyType"] for k in described))
rows = [("m%02d" % i, "WINTER", "NA" if i % 3 else "EU", "SEMI" if i % 2 else "FINAL", i) for i in range(1, 21)]
client.batch_write_item(RequestItems={"app_matches": [{"PutRequest": {"Item": {
    "matchId": S(m), "tournament": S(t), "region": S(r), "round": S(d), "score": N(s)}}} for m, t, r, d, s in rows]})
client.put_item(TableName="app_matches", Item={"matchId": S("sparse"), "tournament": S("WINTER"), "region": S("NA"), "score": N(1)})
# pages of 2, both partition attributes, equality on round, a range on score
pages = list(client.get_paginator("query").paginate(TableName="app_matches", IndexName="ByTournament",
    KeyConditionExpression="tournament = :t AND #r = :r AND #d = :d AND score >= :s",
    ExpressionAttributeNames={"#r": "region", "#d": "round"},
    ExpressionAttributeValues={":t": S("WINTER"), ":r": S("NA"), ":d": S("SEMI"), ":s": N(5)},
    PaginationConfig={"PageSize": 2}))
out.append(" ".join(i["matchId"]["S"] for p in pages for i in p["Items"]))
out.append(str(len(pages)))
# the whole partition, backwards: by round, then score
items = client.query(TableName="app_matches", IndexName="ByTournament", ScanIndexForward=False,
    KeyConditionExpression="tournament = :t AND #r = :r", ExpressionAttributeNames={"#r": "region"},
    ExpressionAttributeValues={":t": S("WINTER"), ":r": S("EU")})["Items"]
out.append(" ".join(i["matchId"]["S"] for i in items))
try:
    client.query(TableName="app_matches", IndexName="ByTournament", KeyConditionExpression="tournament = :t",
                 ExpressionAttributeValues={":t": S("WINTER")})
    out.append("served")
except client.exceptions.ClientError as e:
    out.append(e.response["Error"]["Code"])
# UpdateTable adds one on existing items: two sort attributes under one partition attribute
client.update_table(TableName="app_matches",
    AttributeDefinitions=[{"AttributeName": "round", "AttributeType": "S"}, {"AttributeName": "score", "AttributeType": "N"}],
    GlobalSecondaryIndexUpdates=[{"Create": {"IndexName": "ByRound",
        "KeySchema": [{"AttributeName": "round", "KeyType": "HASH"}, {"AttributeName": "score", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"}}}])
items = client.query(TableName="app_matches", IndexName="ByRound", KeyConditionExpression="#d = :d AND score = :s",
    ExpressionAttributeNames={"#d": "round"}, ExpressionAttributeValues={":d": S("FINAL"), ":s": N(4)})["Items"]
out.append(",".join(sorted(items[0])) if len(items) == 1 else "items: %d" % len(items))
print(" ".join(out))
PY
check "boto3: a GSI of two partition and two sort attributes: described, batch-written, queried in pages and backwards, refused without every partition attribute; UpdateTable adds one" \
    "tournament:HASH,region:HASH,round:RANGE,score:RANGE m05 m07 m11 m13 m17 m19 4 m15 m09 m03 m18 m12 m06 ValidationException matchId,round,score" \
    "$(/usr/bin/python3 "$WORK/multi_key.py" "$ENDPOINT" "$admin_id" "$admin_secret" 2>&1 | tail -1)"
check "aws: query a multi-attribute GSI" "m01 m05 m07" \
    "$(aws_app dynamodb query --table-name app_matches --index-name ByTournament \
        --key-condition-expression 'tournament = :t AND #r = :r AND #d = :d AND score < :s' \
        --expression-attribute-names '{"#r": "region", "#d": "round"}' \
        --expression-attribute-values '{":t": {"S": "WINTER"}, ":r": {"S": "NA"}, ":d": {"S": "SEMI"}, ":s": {"N": "9"}}' \
        --query 'Items[].matchId.S' | tr '\t\n' '  ' | sed 's/ $//')"

stop_gateway
drop_db "$DB"
psql -X -q -d postgres -c "DROP ROLE IF EXISTS ddb_sdk_app"
done_testing
