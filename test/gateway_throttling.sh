#!/usr/bin/env bash
# Throttling through ddb-gateway (docs/throttling.md): a database with
# ddb.throttling on (ALTER DATABASE ... SET), PROVISIONED tables of 1 unit a
# second, and unchanged AWS clients: with one attempt the CLI and boto3 see
# ProvisionedThroughputExceededException (HTTP 400); with their retries the
# same call succeeds once the bucket refills; boto3 gets a batch's refused
# writes as UnprocessedItems.  The buckets' clock is moved with
# ddb.throttling_advance so that a refill takes seconds, not minutes.  Then,
# on a server of its own without ddb_model preloaded, turning throttling on
# is a clear error; and with it preloaded and room for 16 buckets, a 17th
# table is refused while every bucket is spent, served once one is full.  Runs against the cluster of tools/test.sh
# (PGHOST/PGPORT/PGUSER set); prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir gateway_throttling
DB=ddb_gateway_throttling
PORT=${THROTTLING_TEST_PORT:-55487}
NOPRELOAD_PORT=${THROTTLING_TEST_PGPORT:-55447}
ENDPOINT="http://127.0.0.1:$PORT"

fresh_db "$DB"
psql -X -q -d postgres -c "ALTER DATABASE $DB SET ddb.throttling = on"
q -c "CREATE EXTENSION ddb_model"
read -r key_id key_secret <<<"$(q -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
check "ALTER DATABASE ... SET ddb.throttling = on reaches every connection to it" "on" "$(q -c 'SHOW ddb.throttling')"

start_gateway "$PORT" "$WORK/gateway.log" --dsn "dbname=$DB" --pool 2
nopreload_data="$WORK/nopreload/data"
at_exit '[ ! -f "$nopreload_data/postmaster.pid" ] ||
    (source "$ROOT/tools/cluster.sh" && as_postgres "$PGBIN/pg_ctl" -D "$nopreload_data" -m fast -w stop >/dev/null)'

# ---- the AWS CLI ----
aws_cli() {  # attempts, aws-arguments...
    local attempts=$1
    shift
    AWS_ACCESS_KEY_ID=$key_id AWS_SECRET_ACCESS_KEY=$key_secret AWS_DEFAULT_REGION=us-east-1 AWS_PAGER= AWS_CONFIG_FILE=/dev/null \
        AWS_RETRY_MODE=standard AWS_MAX_ATTEMPTS=$attempts /usr/bin/aws --endpoint-url "$ENDPOINT" --output text "$@" 2>&1
}
aws_cli 1 dynamodb create-table --table-name cli_orders --attribute-definitions AttributeName=pk,AttributeType=S \
    --key-schema AttributeName=pk,KeyType=HASH --provisioned-throughput ReadCapacityUnits=1,WriteCapacityUnits=1 >/dev/null
# items of 120 KB (120 write units): three take the 300 units kept to -60
for k in a b c; do
    /usr/bin/python3 -c 'import json, sys; print(json.dumps({"pk": {"S": sys.argv[1]}, "big": {"S": "x" * (120 * 1024 - 64)}}))' "$k" \
        >"$WORK/item-$k.json"
done
check "aws: three writes of 120 units pass on a table of 1 write unit a second (300 kept)" "0 0 0" \
    "$(for k in a b c; do aws_cli 1 dynamodb put-item --table-name cli_orders --item "file://$WORK/item-$k.json" >/dev/null; echo -n "$? "; done | sed 's/ $//')"
aws_cli 1 dynamodb put-item --table-name cli_orders --item '{"pk": {"S": "d"}}' >"$WORK/cli-refused.out"
check "aws, one attempt: the next is ProvisionedThroughputExceededException" "1" \
    "$(grep -c 'An error occurred (ProvisionedThroughputExceededException) when calling the PutItem operation' "$WORK/cli-refused.out")"
check "with DynamoDB's message" "1" \
    "$(grep -c 'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.' "$WORK/cli-refused.out")"
check "and HTTP status 400" "1" \
    "$(curl -s -o /dev/null -w '%{http_code}\n' -X POST "$ENDPOINT/" -H 'X-Amz-Target: DynamoDB_20120810.PutItem' \
        -H 'Content-Type: application/x-amz-json-1.0' --aws-sigv4 'aws:amz:us-east-1:dynamodb' --user "$key_id:$key_secret" \
        --data-binary '{"TableName": "cli_orders", "Item": {"pk": {"S": "d"}}}' | grep -c '^400$')"
# 50 of the 60 seconds pass at once: the bucket is about 10 units short,
# more than the CLI takes to start on a busy machine
q -c "SELECT ddb.throttling_advance(50)" >/dev/null
aws_cli 20 dynamodb put-item --table-name cli_orders --item '{"pk": {"S": "d"}}' --debug >"$WORK/cli-retried.out"
check "aws, with retries (standard mode): the same call succeeds once the bucket refills" "0" "$?"
check "after retrying it" "yes" \
    "$([ "$(grep -c 'Retry needed, retrying request after delay' "$WORK/cli-retried.out")" -ge 1 ] && echo yes || echo no)"

# ---- boto3 ----
cat >"$WORK/client.py" <<'PY'
import subprocess, sys, boto3
from botocore.config import Config
endpoint, key_id, secret, db = sys.argv[1:5]
session = boto3.session.Session(aws_access_key_id=key_id, aws_secret_access_key=secret, region_name="us-east-1")
once = session.client("dynamodb", endpoint_url=endpoint, config=Config(retries={"total_max_attempts": 1, "mode": "standard"}))
retrying = session.client("dynamodb", endpoint_url=endpoint, config=Config(retries={"total_max_attempts": 20, "mode": "standard"}))
advance = lambda seconds: subprocess.run(["psql", "-X", "-q", "-d", db, "-c", "SELECT ddb.throttling_advance(%d)" % seconds],
                                         check=True, stdout=subprocess.DEVNULL)
item = lambda pk, kb: {"pk": {"S": pk}, "big": {"S": "x" * (kb * 1024 - 64)}}
for table in ("sdk_orders", "sdk_batch"):
    once.create_table(TableName=table, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                      AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                      ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
out = []
for pk in ("a", "b", "c"):
    once.put_item(TableName="sdk_orders", Item=item(pk, 120))
try:
    once.put_item(TableName="sdk_orders", Item={"pk": {"S": "d"}})
    out.append("served")
except once.exceptions.ProvisionedThroughputExceededException as e:
    out += [e.response["Error"]["Code"], str(e.response["ResponseMetadata"]["HTTPStatusCode"])]
advance(55)
response = retrying.put_item(TableName="sdk_orders", Item={"pk": {"S": "d"}})
out.append("retried" if response["ResponseMetadata"]["RetryAttempts"] >= 1 else "not-retried")
# a batch: the first write takes the bucket below zero, the second comes back unprocessed
response = once.batch_write_item(RequestItems={"sdk_batch": [{"PutRequest": {"Item": item("k1", 301)}},
                                                             {"PutRequest": {"Item": {"pk": {"S": "k2"}}}}]})
unprocessed = response["UnprocessedItems"]
out.append(",".join(r["PutRequest"]["Item"]["pk"]["S"] for r in unprocessed.get("sdk_batch", [])))
while unprocessed:
    unprocessed = retrying.batch_write_item(RequestItems=unprocessed)["UnprocessedItems"]
out.append(str(once.scan(TableName="sdk_batch", Select="COUNT")["Count"]))
print(" ".join(out))
PY
check "boto3: one attempt raises ProvisionedThroughputExceededException (400); retries succeed; a batch's refused write is UnprocessedItems, then written" \
    "ProvisionedThroughputExceededException 400 retried k2 2" \
    "$(/usr/bin/python3 "$WORK/client.py" "$ENDPOINT" "$key_id" "$key_secret" "$DB" 2>&1 | tail -1)"
check "a throttled request is a 400, not a fault: the gateway logged no error" "0" "$(grep -c 'status 500' "$WORK/gateway.log")"

# ---- without ddb_model preloaded: a clear error, never a silent no-op ----
(
    source "$ROOT/tools/cluster.sh"
    mkdir -p "$nopreload_data"
    chown -R postgres:postgres "$WORK/nopreload"
    allow_postgres_into "$WORK"
    chmod 700 "$nopreload_data"
    init_server "$nopreload_data"
    start_server "$nopreload_data" "$NOPRELOAD_PORT" "$WORK/nopreload" "$WORK/nopreload/server.log"
) >"$WORK/nopreload.log" 2>&1
np() { psql -X -q -At -h "$WORK/nopreload" -p "$NOPRELOAD_PORT" -U postgres -d postgres "$@" 2>&1; }
np -c "CREATE EXTENSION ddb_model" -c "SELECT ddb.create_table('Orders', 'pk')" >/dev/null
check "no preload: SET ddb.throttling = on is refused" \
    "ERROR:  ddb.throttling needs ddb_model in shared_preload_libraries" \
    "$(np -c "SELECT ddb.execute('ListTables', '{}')" -c "SET ddb.throttling = on" | grep ERROR)"
get_item="SELECT ddb.execute('GetItem', '{\"TableName\": \"Orders\", \"Key\": {\"pk\": {\"S\": \"a\"}}}')"
check "no preload: set on before the library is loaded, every request fails saying why" \
    "ERROR:  ddb.throttling is on, but ddb_model is not in shared_preload_libraries" \
    "$(np -c "SET ddb.throttling = on" -c "$get_item" | grep ERROR)"
np -c "ALTER DATABASE postgres SET ddb.throttling = on" >/dev/null
check "no preload: with the setting on from the database's settings, every request fails saying why" \
    "ERROR:  ddb.throttling is on, but ddb_model is not in shared_preload_libraries" \
    "$(np -c "$get_item" | grep ERROR)"
check "and ddb.throttling_buckets says so too" \
    "ERROR:  throttling needs ddb_model in shared_preload_libraries" \
    "$(np -c "SELECT * FROM ddb.throttling_buckets()" | grep ERROR)"

# ---- the same server preloading ddb_model, with room for 16 buckets ----
(
    source "$ROOT/tools/cluster.sh"
    as_postgres "$PGBIN/pg_ctl" -D "$nopreload_data" -m fast -w stop >/dev/null
    start_server "$nopreload_data" "$NOPRELOAD_PORT" "$WORK/nopreload" "$WORK/nopreload/server.log" \
        -c shared_preload_libraries=ddb_model -c ddb.throttling_max_buckets=16
) >>"$WORK/nopreload.log" 2>&1
# tbl1 ... tbl17, of 1 write unit a second; a write of 100 KB to each of tbl1 ... tbl16 leaves their buckets 100 s from full
np -c "SELECT count(ddb.execute('CreateTable', jsonb_build_object('TableName', 'tbl' || i,
           'KeySchema', '[{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}]'::jsonb,
           'AttributeDefinitions', '[{\"AttributeName\": \"pk\", \"AttributeType\": \"S\"}]'::jsonb,
           'ProvisionedThroughput', '{\"ReadCapacityUnits\": 1, \"WriteCapacityUnits\": 1}'::jsonb)))
       FROM generate_series(1, 17) i" >/dev/null
put_big() {  # table
    echo "SELECT ddb.execute('PutItem', jsonb_build_object('TableName', '$1',
              'Item', jsonb_build_object('pk', '{\"S\": \"a\"}'::jsonb, 'big', jsonb_build_object('S', repeat('x', 100 * 1024 - 64)))))"
}
np -c "$(for i in $(seq 16); do put_big "tbl$i"; echo ";"; done)" >/dev/null
check "16 buckets, all spent: a 17th table's request is refused with ServiceUnavailable naming the setting, not given a bucket spent elsewhere" \
    "YD013|ddb.throttling_max_buckets|ServiceUnavailable|16" \
    "$(np -c "DO \$d\$ BEGIN PERFORM ddb.execute('GetItem', '{\"TableName\": \"tbl17\", \"Key\": {\"pk\": {\"S\": \"a\"}}}');
              EXCEPTION WHEN OTHERS THEN DECLARE s text; m text; d text;
              BEGIN GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
                    RAISE NOTICE '%|%|%', s, substring(m FROM 'ddb[.]throttling_max_buckets'), split_part(d::jsonb->>'__type', '#', 2); END; END \$d\$" 2>&1 |
        sed 's/^NOTICE:  //')|$(np -c "SELECT count(*) FROM ddb.throttling_buckets()")"
# those 16 are one owner's: another owner's table is not refused for them (one of the 16,
# the nearest full, makes room), while a 17th of the owner holding them all still is
np -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS ddb_throttle_other" -c "CREATE ROLE ddb_throttle_other" \
   -c "SELECT ddb.execute('CreateTable', jsonb_build_object('TableName', 'other1',
           'KeySchema', '[{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}]'::jsonb,
           'AttributeDefinitions', '[{\"AttributeName\": \"pk\", \"AttributeType\": \"S\"}]'::jsonb,
           'ProvisionedThroughput', '{\"ReadCapacityUnits\": 1, \"WriteCapacityUnits\": 1}'::jsonb))" \
   -c "ALTER TABLE public.other1 OWNER TO ddb_throttle_other" >/dev/null
check "one owner's spent buckets keep no other owner's table out: it is served, in the room of one of them" "t|16|t|15" \
    "$(np -c "SELECT ddb.execute('GetItem', '{\"TableName\": \"other1\", \"Key\": {\"pk\": {\"S\": \"a\"}}}') = '{}'")|$(np -c "SELECT count(*) FROM ddb.throttling_buckets()")|$(np -c "SELECT count(*) = 1 FROM ddb.throttling_buckets() b JOIN pg_class c ON c.oid = b.relation WHERE c.relowner = 'ddb_throttle_other'::regrole")|$(np -c "SELECT count(*) FROM ddb.throttling_buckets() b JOIN pg_class c ON c.oid = b.relation WHERE c.relowner <> 'ddb_throttle_other'::regrole")"
check "and the owner holding the rest still gets ServiceUnavailable for a 17th" "YD013" \
    "$(np -c "DO \$d\$ BEGIN PERFORM ddb.execute('GetItem', '{\"TableName\": \"tbl17\", \"Key\": {\"pk\": {\"S\": \"a\"}}}');
              EXCEPTION WHEN OTHERS THEN RAISE NOTICE '%', SQLSTATE; END \$d\$" 2>&1 | sed 's/^NOTICE:  //')"
np -c "SELECT ddb.throttling_advance(100)" >/dev/null
check "once they have refilled, a full one makes room: the 17th is served" "t|16" \
    "$(np -c "SELECT ddb.execute('GetItem', '{\"TableName\": \"tbl17\", \"Key\": {\"pk\": {\"S\": \"a\"}}}') = '{}'")|$(np -c "SELECT count(*) FROM ddb.throttling_buckets()")"
done_testing
