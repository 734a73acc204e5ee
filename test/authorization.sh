#!/usr/bin/env bash
# Authorization through ddb-gateway (docs/security.md): each access key acts
# as a PostgreSQL role, and the role's privileges decide.  Starts the built
# gateway on a loopback port against the cluster of tools/test.sh
# (PGHOST/PGPORT/PGUSER set), signs requests as the AWS SDKs do, and prints
# TAP (test/lib.sh).
#
# The walk: every operation ddb.execute serves (read from its dispatch
# tables in src/execute/execute.c) is sent by a key whose role may touch no
# table; each must be refused, or list nothing.  An operation added there
# without a request here fails the walk.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir authorization
DB=ddb_authorization
PORT=${AUTHORIZATION_TEST_PORT:-55484}
URL="http://127.0.0.1:$PORT/"
ARN=arn:aws:dynamodb:ddb-model:000000000000:table

ROLES="ddb_authz_none ddb_authz_reader ddb_authz_tenant ddb_authz_orders ddb_authz_gone"
drop_roles() {
    for r in $ROLES; do
        psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS $r" 2>/dev/null
    done
}

fresh_db --extension "$DB"
drop_roles
for r in ${ROLES% *}; do psql -X -q -d postgres -c "CREATE ROLE $r NOLOGIN"; done
q >/dev/null <<'SQL'
SELECT ddb.execute('CreateTable', '{"TableName": "Secret", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_IMAGE"}}');
SELECT ddb.execute('PutItem', '{"TableName": "Secret", "Item": {"pk": {"S": "s1"}, "v": {"S": "classified"}}}');
SELECT ddb.execute('CreateTable', '{"TableName": "Orders", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
  {"AttributeName": "sk", "KeyType": "RANGE"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
  {"AttributeName": "sk", "AttributeType": "S"}, {"AttributeName": "status", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "byStatus", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
  "Projection": {"ProjectionType": "ALL"}}],
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_IMAGE"}}');
SELECT ddb.execute('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "tenant2#o1"}, "sk": {"S": "1"}, "status": {"S": "open"}}}');
SELECT ddb.grant_tables('ddb_authz_reader', 'Orders', true);
SELECT ddb.grant_tables('ddb_authz_tenant', 'Orders', false, ARRAY['tenant1#*']);
SELECT ddb.grant_tables('ddb_authz_orders', 'orders_*');
SELECT ddb.execute('CreateBackup', '{"TableName": "Secret", "BackupName": "secret-backup"}');
SELECT ddb.execute('CreateBackup', '{"TableName": "Orders", "BackupName": "orders-backup"}');
SQL
secret_backup=$(q -c "SELECT backup_arn FROM ddb.backups WHERE table_name = 'Secret'")
orders_backup=$(q -c "SELECT backup_arn FROM ddb.backups WHERE table_name = 'Orders'")
key() {  # ROLE: "id secret" of a new key acting as ROLE ('' for the gateway's own)
    q -F ' ' -c "SELECT * FROM ddb.create_access_key(NULLIF('$1', ''))"
}
read -r admin_id admin_secret <<<"$(key '')"
read -r none_id none_secret <<<"$(key ddb_authz_none)"
read -r reader_id reader_secret <<<"$(key ddb_authz_reader)"
read -r tenant_id tenant_secret <<<"$(key ddb_authz_tenant)"
read -r orders_id orders_secret <<<"$(key ddb_authz_orders)"

start_gateway "$PORT" "$WORK/gateway.log" --dsn "dbname=$DB" --pool 2

# as KEY ACTION BODY: a signed request; the body in $WORK/body, prints "status type"
as() {
    local id_var="${1}_id" secret_var="${1}_secret" code
    perl "$ROOT/test/sigv4_headers.pl" "${!id_var}" "${!secret_var}" "127.0.0.1:$PORT" "DynamoDB_20120810.$2" "$3" >"$WORK/signed"
    code=$(curl -s -o "$WORK/body" -w '%{http_code}' -X POST "$URL" -H "X-Amz-Target: DynamoDB_20120810.$2" \
        -H 'Content-Type: application/x-amz-json-1.0' -H @"$WORK/signed" --data-binary "$3")
    echo "$code $(grep -o '"__type": *"[^"]*"' "$WORK/body" | cut -d'"' -f4 | sed 's/.*#//')"
}
field() { perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print eval("\$j->$ARGV[0]") // ""' "$1" <"$WORK/body"; }

stream_arn=$(as admin DescribeTable '{"TableName": "Secret"}' >/dev/null; field '{Table}{LatestStreamArn}')
shard_id=$(as admin DescribeStream "{\"StreamArn\": \"$stream_arn\"}" >/dev/null; field '{StreamDescription}{Shards}[0]{ShardId}')
iterator=$(as admin GetShardIterator "{\"StreamArn\": \"$stream_arn\", \"ShardId\": \"$shard_id\", \"ShardIteratorType\": \"TRIM_HORIZON\"}" >/dev/null
           field '{ShardIterator}')
check "the administrator's key reads the stream it will be refused" "200  1" \
    "$(as admin GetRecords "{\"ShardIterator\": \"$iterator\"}") $(perl -MJSON::PP -e 'local $/; print scalar @{decode_json(<STDIN>)->{Records}}' <"$WORK/body")"

# ---- the walk: every operation, by a key whose role may touch no table ----
declare -A request=(
    [PutItem]='{"TableName": "Secret", "Item": {"pk": {"S": "x"}}}'
    [GetItem]='{"TableName": "Secret", "Key": {"pk": {"S": "s1"}}}'
    [DeleteItem]='{"TableName": "Secret", "Key": {"pk": {"S": "s1"}}}'
    [UpdateItem]='{"TableName": "Secret", "Key": {"pk": {"S": "s1"}}, "UpdateExpression": "SET v = :v", "ExpressionAttributeValues": {":v": {"S": "x"}}}'
    [TransactWriteItems]='{"TransactItems": [{"Put": {"TableName": "Secret", "Item": {"pk": {"S": "x"}}}}]}'
    [TransactGetItems]='{"TransactItems": [{"Get": {"TableName": "Secret", "Key": {"pk": {"S": "s1"}}}}]}'
    [Query]='{"TableName": "Secret", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "s1"}}}'
    [Scan]='{"TableName": "Secret"}'
    [BatchWriteItem]='{"RequestItems": {"Secret": [{"DeleteRequest": {"Key": {"pk": {"S": "s1"}}}}]}}'
    [BatchGetItem]='{"RequestItems": {"Secret": {"Keys": [{"pk": {"S": "s1"}}]}}}'
    [ExecuteStatement]='{"Statement": "SELECT * FROM \"Secret\" WHERE pk = '"'s1'"'", "TableName": "Orders"}'
    [BatchExecuteStatement]='{"Statements": [{"Statement": "SELECT * FROM \"Secret\" WHERE pk = '"'s1'"'"}]}'
    [ExecuteTransaction]='{"TransactStatements": [{"Statement": "SELECT * FROM \"Secret\" WHERE pk = '"'s1'"'"}]}'
    [CreateTable]='{"TableName": "Mine", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}'
    [DescribeTable]='{"TableName": "Secret"}'
    [ListTables]='{}'
    [DeleteTable]='{"TableName": "Secret"}'
    [UpdateTimeToLive]='{"TableName": "Secret", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "ttl"}}'
    [DescribeTimeToLive]='{"TableName": "Secret"}'
    [TagResource]="{\"ResourceArn\": \"$ARN/Secret\", \"Tags\": [{\"Key\": \"k\", \"Value\": \"v\"}]}"
    [UntagResource]="{\"ResourceArn\": \"$ARN/Secret\", \"TagKeys\": [\"k\"]}"
    [ListTagsOfResource]="{\"ResourceArn\": \"$ARN/Secret\"}"
    [UpdateTable]='{"TableName": "Secret", "BillingMode": "PAY_PER_REQUEST"}'
    [ListStreams]='{}'
    [DescribeStream]="{\"StreamArn\": \"$stream_arn\"}"
    [GetShardIterator]="{\"StreamArn\": \"$stream_arn\", \"ShardId\": \"$shard_id\", \"ShardIteratorType\": \"TRIM_HORIZON\"}"
    [GetRecords]="{\"ShardIterator\": \"$iterator\"}"
    [DescribeLimits]='{}'
    [DescribeEndpoints]='{}'
    [UpdateContinuousBackups]='{"TableName": "Secret", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}'
    [DescribeContinuousBackups]='{"TableName": "Secret"}'
    [RestoreTableToPointInTime]='{"SourceTableName": "Secret", "TargetTableName": "Mine", "UseLatestRestorableTime": true}'
    [CreateBackup]='{"TableName": "Secret", "BackupName": "mine"}'
    [DescribeBackup]="{\"BackupArn\": \"$secret_backup\"}"
    [ListBackups]='{}'
    [DeleteBackup]="{\"BackupArn\": \"$secret_backup\"}"
    [RestoreTableFromBackup]="{\"BackupArn\": \"$secret_backup\", \"TargetTableName\": \"Stolen\"}"
    [ExportTableToPointInTime]="{\"TableArn\": \"$ARN/Secret\", \"S3Bucket\": \"b1\"}"
    [DescribeExport]="{\"ExportArn\": \"$ARN/Secret/export/01700000000000-00000000\"}"
    [ListExports]='{}'
    [ImportTable]='{"S3BucketSource": {"S3Bucket": "b1"}, "InputFormat": "DYNAMODB_JSON", "TableCreationParameters": {"TableName": "Mine", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}}'
    [DescribeImport]="{\"ImportArn\": \"$ARN/Secret/import/01700000000000-00000000\"}"
    [ListImports]='{}'
)
# what a refusal looks like per operation: AccessDeniedException, except the
# listings (nothing to see), the descriptions of exports and imports (none
# of the key's), BatchExecuteStatement (an error per statement) and the
# account's operations, which name no table and are answered
expected() {
    case "$1" in
        ListTables) echo '200  {"TableNames": []}' ;;
        ListStreams) echo '200  {"Streams": []}' ;;
        ListBackups) echo '200  {"BackupSummaries": []}' ;;
        ListExports) echo '200  {"ExportSummaries": []}' ;;
        ListImports) echo '200  {"ImportSummaryList": []}' ;;
        # the exports and imports others made are not the key's to see
        DescribeExport) echo '400 ExportNotFoundException' ;;
        DescribeImport) echo '400 ImportNotFoundException' ;;
        BatchExecuteStatement) echo '200  AccessDenied' ;;
        DescribeLimits) echo '200  40000' ;;
        DescribeEndpoints) echo "200  127.0.0.1:$PORT" ;;
        *) echo '400 AccessDeniedException' ;;
    esac
}
operations=$(sed -n '/item_operations\[\] = {/,/^};/p; /table_operations\[\] = {/,/^};/p' "$ROOT/src/execute/execute.c" \
             | grep -o '{"[A-Za-z]*"' | tr -d '{"')
check "the walk knows every operation ddb.execute serves ($(echo "$operations" | wc -l) of them)" "" \
    "$(for op in $operations; do [ -n "${request[$op]:-}" ] || echo -n "$op "; done)"
for op in $operations; do
    [ -n "${request[$op]:-}" ] || continue
    got=$(as none "$op" "${request[$op]}")
    case "$op" in
        ListTables | ListStreams | ListBackups | ListExports | ListImports) got="$got $(cat "$WORK/body")" ;;
        BatchExecuteStatement) got="$got $(field '{Responses}[0]{Error}{Code}')" ;;
        DescribeLimits) got="$got $(field '{TableMaxReadCapacityUnits}')" ;;
        DescribeEndpoints) got="$got $(field '{Endpoints}[0]{Address}')" ;;
    esac
    case "$op" in
        DescribeLimits | DescribeEndpoints) check "$op by a key without access is answered (it takes no table)" "$(expected "$op")" "$got" ;;
        *) check "$op by a key without access is refused" "$(expected "$op")" "$got" ;;
    esac
done
check "and nothing was written or changed" '1 {} f 0' \
    "$(q -F ' ' -c "SELECT count(*), (SELECT tags FROM ddb.tables WHERE table_name = 'Secret'),
                          (SELECT ttl_attribute IS NOT NULL FROM ddb.tables WHERE table_name = 'Secret'),
                          (SELECT count(*) FROM ddb.continuous_backups)
                    FROM public.\"Secret\"")"
check "and no backup was taken, deleted or restored" "2 0" \
    "$(q -F ' ' -c "SELECT (SELECT count(*) FROM ddb.backups), (SELECT count(*) FROM ddb.tables WHERE table_name IN ('Stolen', 'Mine'))")"
check "an AccessDeniedException is worded as DynamoDB words it" \
    "User: arn:aws:iam::000000000000:user/ddb_authz_none is not authorized to perform: dynamodb:GetItem on resource: $ARN/Secret because no identity-based policy allows the dynamodb:GetItem action" \
    "$(as none GetItem "${request[GetItem]}" >/dev/null; field '{message}')"

# ---- read-only, leading keys, patterns ----
check "a read-only key reads its table" "200 " "$(as reader GetItem '{"TableName": "Orders", "Key": {"pk": {"S": "tenant2#o1"}, "sk": {"S": "1"}}}')"
check "and queries its index" "200 " "$(as reader Query '{"TableName": "Orders", "IndexName": "byStatus", "KeyConditionExpression": "#s = :s", "ExpressionAttributeNames": {"#s": "status"}, "ExpressionAttributeValues": {":s": {"S": "open"}}}')"
check "but may not write it" "400 AccessDeniedException" "$(as reader PutItem '{"TableName": "Orders", "Item": {"pk": {"S": "r"}, "sk": {"S": "1"}}}')"
check "not even through PartiQL" "400 AccessDeniedException" \
    "$(as reader ExecuteStatement '{"Statement": "DELETE FROM \"Orders\" WHERE pk = '"'tenant2#o1'"' AND sk = '"'1'"'"}')"
check "nor tag it" "400 AccessDeniedException" "$(as reader TagResource "{\"ResourceArn\": \"$ARN/Orders\", \"Tags\": [{\"Key\": \"k\", \"Value\": \"v\"}]}")"
check "it lists its tags" "200 " "$(as reader ListTagsOfResource "{\"ResourceArn\": \"$ARN/Orders\"}")"
check "ListTables lists only the tables a key may use" '{"TableNames": ["Orders"]}' "$(as reader ListTables '{}' >/dev/null; cat "$WORK/body")"
check "ListStreams too" "Orders" "$(as reader ListStreams '{}' >/dev/null; field '{Streams}[0]{TableName}')$(field '{Streams}[1]{TableName}')"

# ---- backups: the table's owner takes them, their readers describe and restore them ----
check "a read-only key may not back its table up (ownership)" "400 AccessDeniedException" \
    "$(as reader CreateBackup '{"TableName": "Orders", "BackupName": "mine"}')"
check "the refusal of a backup names the backup's ARN" \
    "User: arn:aws:iam::000000000000:user/ddb_authz_reader is not authorized to perform: dynamodb:DescribeBackup on resource: $orders_backup because no identity-based policy allows the dynamodb:DescribeBackup action" \
    "$(as reader DescribeBackup "{\"BackupArn\": \"$orders_backup\"}" >/dev/null; field '{message}')"
check "nor list a backup it may not read" '{"BackupSummaries": []}' "$(as reader ListBackups '{}' >/dev/null; cat "$WORK/body")"
q -c "GRANT SELECT ON ddb_backups.\"${orders_backup##*/}\" TO ddb_authz_reader"
check "a backup's reader (GRANT SELECT on its relation) describes it" "200 " "$(as reader DescribeBackup "{\"BackupArn\": \"$orders_backup\"}")"
check "and lists it" "$orders_backup" "$(as reader ListBackups '{}' >/dev/null; field '{BackupSummaries}[0]{BackupArn}')"
check "but may not delete it (its owner's)" "400 AccessDeniedException" "$(as reader DeleteBackup "{\"BackupArn\": \"$orders_backup\"}")"
check "nor restore it without CreateTable's privilege" "400 AccessDeniedException" \
    "$(as reader RestoreTableFromBackup "{\"BackupArn\": \"$orders_backup\", \"TargetTableName\": \"Copy\"}")"

put_tenant() { as tenant PutItem "{\"TableName\": \"Orders\", \"Item\": {\"pk\": {\"S\": \"$1\"}, \"sk\": {\"S\": \"1\"}, \"status\": {\"S\": \"open\"}}}"; }
check "a key with leading keys writes items under them" "200 " "$(put_tenant tenant1#o1)"
check "and no other item" "400 AccessDeniedException" "$(put_tenant tenant2#o2)"
check "it may not read another tenant's item" "400 AccessDeniedException" \
    "$(as tenant GetItem '{"TableName": "Orders", "Key": {"pk": {"S": "tenant2#o1"}, "sk": {"S": "1"}}}')"
check "nor query another tenant's partition" "400 AccessDeniedException" \
    "$(as tenant Query '{"TableName": "Orders", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "tenant2#o1"}}}')"
check "nor delete in a batch" "400 AccessDeniedException" \
    "$(as tenant BatchWriteItem '{"RequestItems": {"Orders": [{"DeleteRequest": {"Key": {"pk": {"S": "tenant2#o1"}, "sk": {"S": "1"}}}}]}}')"
check "nor change it in a transaction" "400 AccessDeniedException" \
    "$(as tenant TransactWriteItems '{"TransactItems": [{"Delete": {"TableName": "Orders", "Key": {"pk": {"S": "tenant2#o1"}, "sk": {"S": "1"}}}}]}')"
check "a Scan sees its own items only" "1 tenant1#o1" \
    "$(as tenant Scan '{"TableName": "Orders"}' >/dev/null; field '{Count}') $(field '{Items}[0]{pk}{S}')"
check "an index Query too" "1 tenant1#o1" \
    "$(as tenant Query '{"TableName": "Orders", "IndexName": "byStatus", "KeyConditionExpression": "#s = :s", "ExpressionAttributeNames": {"#s": "status"}, "ExpressionAttributeValues": {":s": {"S": "open"}}}' >/dev/null
       field '{Count}') $(field '{Items}[0]{pk}{S}')"
check "another tenant's item is untouched" "1" \
    "$(q -c "SELECT count(*) FROM public.\"Orders\" WHERE pk = 'tenant2#o1'")"

# ---- point-in-time recovery: the owner's to turn on, the readers' to describe and read ----
check "a read-only key may not turn point-in-time recovery on" "400 AccessDeniedException" \
    "$(as reader UpdateContinuousBackups '{"TableName": "Orders", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}')"
check "the owner's key may" "200 " \
    "$(as admin UpdateContinuousBackups '{"TableName": "Orders", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}')"
check "a read-only key describes it" "200  ENABLED" \
    "$(as reader DescribeContinuousBackups '{"TableName": "Orders"}') $(field '{ContinuousBackupsDescription}{PointInTimeRecoveryDescription}{PointInTimeRecoveryStatus}')"
check "and reads the table's history (ddb.pitr_items): every item" "2" \
    "$(q -c "SET ROLE ddb_authz_reader" -c "SELECT count(*) FROM ddb.pitr_items('Orders', clock_timestamp())")"
check "a key with leading keys reads its own items' history only" "tenant1#o1" \
    "$(q -c "SET ROLE ddb_authz_tenant" -c "SELECT string_agg(pk::text, ' ') FROM ddb.pitr_items('Orders', clock_timestamp())")"
check "a read-only key may not restore it (CreateTable's privilege)" "400 AccessDeniedException" \
    "$(as reader RestoreTableToPointInTime '{"SourceTableName": "Orders", "TargetTableName": "OrdersBack", "UseLatestRestorableTime": true}')"

check "a pattern grant reaches a table created later" "200 " \
    "$(q -c "SELECT ddb.create_table('orders_2026', 'pk')" >/dev/null; as orders PutItem '{"TableName": "orders_2026", "Item": {"pk": {"S": "a"}}}')"
check "and no table outside it" "400 AccessDeniedException" "$(as orders GetItem '{"TableName": "Orders", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}}')"
q -c "SELECT ddb.revoke_tables('ddb_authz_orders', 'orders_*')" >/dev/null
check "ddb.revoke_tables takes it back on the next request" "400 AccessDeniedException" \
    "$(as orders GetItem '{"TableName": "orders_2026", "Key": {"pk": {"S": "a"}}}')"

# ---- opaque tokens ----
tampered=$(printf '%s' "$iterator" | perl -pe 's/^(.)/$1 eq "W" ? "X" : "W"/e')
check "an edited shard iterator is ValidationException" "400 ValidationException" "$(as admin GetRecords "{\"ShardIterator\": \"$tampered\"}")"
forged=$(printf '["Secret", "x", 0]' | base64 -w0)
check "a forged one (the 0.1 format) too" "400 ValidationException" "$(as admin GetRecords "{\"ShardIterator\": \"$forged\"}")"
as admin PutItem '{"TableName": "Orders", "Item": {"pk": {"S": "tenant2#o1"}, "sk": {"S": "2"}}}' >/dev/null
token=$(as admin ExecuteStatement '{"Statement": "SELECT * FROM \"Orders\" WHERE pk = '"'tenant2#o1'"'", "Limit": 1}' >/dev/null; field '{NextToken}')
check "a PartiQL NextToken pages on" "200 " \
    "$(as admin ExecuteStatement "{\"Statement\": \"SELECT * FROM \\\"Orders\\\" WHERE pk = 'tenant2#o1'\", \"NextToken\": \"$token\"}")"
check "but not for another statement" "400 ValidationException" \
    "$(as admin ExecuteStatement "{\"Statement\": \"SELECT * FROM \\\"Secret\\\" WHERE pk = 'tenant2#o1'\", \"NextToken\": \"$token\"}")"
check "and an edited one is refused" "400 ValidationException" \
    "$(as admin ExecuteStatement "{\"Statement\": \"SELECT * FROM \\\"Orders\\\" WHERE pk = 'tenant2#o1'\", \"NextToken\": \"x$token\"}")"

# ---- SQL callers meet the same rules ----
sqlstate() {  # SQL [ROLE]: the SQLSTATE SQL raises, run as ROLE when given
    psql -X -q -At -d "$DB" -c "SET ROLE ${2:-NONE}" \
        -c "DO \$\$ BEGIN $1; EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'sqlstate %', SQLSTATE; END \$\$" 2>&1 \
        | grep -o 'sqlstate .*' | cut -d' ' -f2
}
check "ddb.execute_as refuses a role the caller may not SET ROLE to" "42501" \
    "$(sqlstate "PERFORM ddb.execute_as('ddb_authz_tenant', 'Scan', '{\"TableName\": \"Orders\"}')" ddb_authz_reader)"
check "a SQL role is refused by ddb.put_item as by PutItem (SQLSTATE YD010)" "YD010" \
    "$(sqlstate "PERFORM ddb.put_item('Orders', '{\"pk\": \"r\", \"sk\": \"1\"}')" ddb_authz_reader)"

psql -X -q -d postgres -c "CREATE ROLE ddb_authz_gone NOLOGIN"
read -r gone_id gone_secret <<<"$(key ddb_authz_gone)"
psql -X -q -d postgres -c "DROP ROLE ddb_authz_gone"
check "a key whose role was dropped is refused" "400 AccessDeniedException" "$(as gone ListTables '{}')"
check "a key for a role that does not exist is refused" "42704" "$(sqlstate "PERFORM ddb.create_access_key('ddb_authz_nobody')")"
check "ddb.grant_tables refuses a pattern that is no table name" "22023" \
    "$(sqlstate "PERFORM ddb.grant_tables('ddb_authz_none', 'Orders; DROP')")"
check "and leading keys on a table whose partition key is a number" "22023" \
    "$(sqlstate "PERFORM ddb.create_table('Numbered', 'n', 'N'); PERFORM ddb.grant_tables('ddb_authz_none', 'Numbered', false, ARRAY['1'])")"

# CreateTable's privileges are what it writes and reads: INSERT and UPDATE on
# ddb.tables, SELECT on ddb.table_grants (and CREATE on the schema)
create_mine="PERFORM ddb.execute('CreateTable', '{\"TableName\": \"Minted\", \"BillingMode\": \"PAY_PER_REQUEST\", \"KeySchema\": [{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}], \"AttributeDefinitions\": [{\"AttributeName\": \"pk\", \"AttributeType\": \"S\"}]}')"
q -c "GRANT INSERT ON ddb.tables TO ddb_authz_none" -c "GRANT CREATE ON SCHEMA public TO ddb_authz_none"
check "CreateTable with INSERT on ddb.tables only is AccessDeniedException (YD010), before anything is written" "YD010 0" \
    "$(sqlstate "$create_mine" ddb_authz_none) $(q -c "SELECT count(*) FROM ddb.tables WHERE table_name = 'Minted'")"
q -c "GRANT UPDATE ON ddb.tables TO ddb_authz_none" -c "GRANT SELECT ON ddb.table_grants TO ddb_authz_none"
check "with UPDATE on ddb.tables and SELECT on ddb.table_grants too, it creates the table" " 1" \
    "$(sqlstate "$create_mine" ddb_authz_none) $(q -c "SELECT count(*) FROM ddb.tables WHERE table_name = 'Minted'")"

stop_gateway
drop_db "$DB"
drop_roles
done_testing
