#!/usr/bin/env bash
# Table settings and the account's operations through ddb-gateway, with the
# AWS CLI (docs/tables.md "Table settings", docs/gateway.md): create-table
# --deletion-protection-enabled and --table-class, delete-table refused as
# DynamoDB refuses it, update-table --no-deletion-protection-enabled,
# describe-limits, describe-endpoints (the listen address, or
# --endpoint-address); docs/api.md's list of operations against what the
# gateway answers: every operation it marks "not supported" is
# UnknownOperationException, every one ddb.execute serves is marked served.
# Runs against the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set);
# prints TAP (test/lib.sh).
#
# Debian 12's AWS CLI (2.9.19) predates deletion protection (March 2023):
# the suite gives its model the member of AWS's current one
# (DeletionProtectionEnabled of CreateTable, UpdateTable and the table
# description) through AWS_DATA_PATH; a newer CLI has it already.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir gateway-table-settings
DB=ddb_gateway_table_settings
PORT=${TABLE_SETTINGS_TEST_PORT:-55577}
ENDPOINT="http://127.0.0.1:$PORT"

# start ARGS...: a gateway on $PORT, waited for until it answers
start() { start_gateway "$PORT" "$WORK/gateway.log" --dsn "dbname=$DB" --pool 2 "$@"; }

fresh_db --extension "$DB"
read -r key secret <<<"$(q -F ' ' -c "SELECT * FROM ddb.create_access_key()")"

# the CLI's model, with DeletionProtectionEnabled where AWS's current model has it
/usr/bin/python3 - "$WORK/models" <<'PY' || echo "the AWS CLI's model could not be read: the checks of deletion protection fail"
import json, os, sys
try:
    import awscli.botocore as botocore
except ImportError:
    import botocore
model = json.load(open(os.path.join(os.path.dirname(botocore.__file__), "data", "dynamodb", "2012-08-10", "service-2.json")))
shapes = model["shapes"]
shapes.setdefault("DeletionProtectionEnabled", {"type": "boolean"})
for shape in ("CreateTableInput", "UpdateTableInput", "TableDescription"):
    shapes[shape]["members"].setdefault("DeletionProtectionEnabled", {"shape": "DeletionProtectionEnabled"})
os.makedirs(os.path.join(sys.argv[1], "dynamodb", "2012-08-10"))
json.dump(model, open(os.path.join(sys.argv[1], "dynamodb", "2012-08-10", "service-2.json"), "w"))
PY
aws() {
    AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_DEFAULT_REGION=us-east-1 AWS_PAGER= AWS_CONFIG_FILE=/dev/null \
        AWS_DATA_PATH="$WORK/models" /usr/bin/aws --endpoint-url "$ENDPOINT" --output text "$@" 2>&1
}
# signed OPERATION BODY: a request signed by curl's own SigV4; prints "status __type"
signed() {
    local code
    code=$(curl -s -o "$WORK/body" -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:dynamodb" --user "$key:$secret" \
        -H "X-Amz-Target: DynamoDB_20120810.$1" -H 'Content-Type: application/x-amz-json-1.0' --data-binary "$2" "$ENDPOINT/")
    echo "$code $(grep -o '"__type": *"[^"]*"' "$WORK/body" | cut -d'"' -f4 | sed 's/.*#//')"
}

start
# ---- deletion protection and table class with the AWS CLI ----
check "aws: create-table --deletion-protection-enabled --table-class" "True STANDARD_INFREQUENT_ACCESS" \
    "$(aws dynamodb create-table --table-name Vault --billing-mode PAY_PER_REQUEST \
        --attribute-definitions AttributeName=pk,AttributeType=S --key-schema AttributeName=pk,KeyType=HASH \
        --deletion-protection-enabled --table-class STANDARD_INFREQUENT_ACCESS \
        --query '[TableDescription.DeletionProtectionEnabled, TableDescription.TableClassSummary.TableClass]' | tr '\t' ' ')"
check "aws: describe-table says it is protected" "True" \
    "$(aws dynamodb describe-table --table-name Vault --query Table.DeletionProtectionEnabled)"
aws dynamodb delete-table --table-name Vault >"$WORK/refused"
check "aws: delete-table of a protected table is refused with DynamoDB's error" \
    "An error occurred (ValidationException) when calling the DeleteTable operation: Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first." \
    "$(grep -v '^$' "$WORK/refused")"
check "and the table is still there" "Vault" "$(aws dynamodb describe-table --table-name Vault --query Table.TableName)"
check "aws: update-table --no-deletion-protection-enabled" "False" \
    "$(aws dynamodb update-table --table-name Vault --no-deletion-protection-enabled --query TableDescription.DeletionProtectionEnabled)"
check "aws: update-table --table-class STANDARD" "STANDARD" \
    "$(aws dynamodb update-table --table-name Vault --table-class STANDARD --query TableDescription.TableClassSummary.TableClass)"
check "aws: update-table with protection and another change is refused, as DynamoDB refuses it" \
    "An error occurred (ValidationException) when calling the UpdateTable operation: One or more parameter values were invalid: DeletionProtection modification must be the only operation in the request" \
    "$(aws dynamodb update-table --table-name Vault --deletion-protection-enabled --billing-mode PAY_PER_REQUEST | grep -v '^$')"
check "aws: delete-table once protection is off" "DELETING" \
    "$(aws dynamodb delete-table --table-name Vault --query TableDescription.TableStatus)"
check "a WarmThroughput below DynamoDB's initial on-demand throughput is ValidationException (HTTP 400)" "400 ValidationException" \
    "$(signed CreateTable '{"TableName": "Warm", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "WarmThroughput": {"ReadUnitsPerSecond": 100}}')"
check "an OnDemandThroughput over the table maximum is LimitExceededException (HTTP 400)" "400 LimitExceededException" \
    "$(signed CreateTable '{"TableName": "Capped", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "OnDemandThroughput": {"MaxReadRequestUnits": 40001}}')"

# ---- the account's operations ----
check "aws: describe-limits" "80000 80000 40000 40000" \
    "$(aws dynamodb describe-limits --query '[AccountMaxReadCapacityUnits, AccountMaxWriteCapacityUnits, TableMaxReadCapacityUnits, TableMaxWriteCapacityUnits]' | tr '\t' ' ')"
check "aws: describe-endpoints gives the gateway's listen address" "127.0.0.1:$PORT 1440" \
    "$(aws dynamodb describe-endpoints --query 'Endpoints[0].[Address, CachePeriodInMinutes]' | tr '\t' ' ')"
stop_gateway
start --endpoint-address "dynamodb.example.com:8443"
check "aws: describe-endpoints gives --endpoint-address when it is set" "dynamodb.example.com:8443" \
    "$(aws dynamodb describe-endpoints --query 'Endpoints[0].Address')"

# ---- docs/api.md's list of operations against what the gateway answers ----
# rows: | `Operation` | status | notes |
listed() { sed -n 's/^| `\([A-Za-z]*\)` | \([^|]*\) |.*/\1 \2/p' "$ROOT/docs/api.md"; }
unsupported=$(listed | awk '$2 == "not" { print $1 }')
check "docs/api.md marks operations not supported" "true" "$([ "$(echo "$unsupported" | wc -w)" -gt 10 ] && echo true)"
for op in $unsupported; do
    check "$op, marked not supported, is UnknownOperationException (HTTP 400)" "400 UnknownOperationException" "$(signed "$op" '{}')"
done
served=$(sed -n '/item_operations\[\] = {/,/^};/p; /table_operations\[\] = {/,/^};/p' "$ROOT/src/execute/execute.c" | grep -o '{"[A-Za-z]*"' | tr -d '{"')
check "every operation ddb.execute serves is marked supported in docs/api.md" "" \
    "$(for op in $served; do listed | grep -q "^$op supported" || echo -n "$op "; done)"
model_operations=$(/usr/bin/python3 -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["operations"]))' \
                   "$WORK/models/dynamodb/2012-08-10/service-2.json")
check "docs/api.md lists every operation of the AWS CLI's model" "" \
    "$(for op in $model_operations; do listed | grep -q "^$op " || echo -n "$op "; done)"
stop_gateway
drop_db "$DB"
done_testing
