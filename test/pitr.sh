#!/usr/bin/env bash
# Point-in-time recovery (docs/pitr.md) through ddb-gateway with the AWS
# CLI, beyond pg_regress (test/sql/api_pitr.sql): update-continuous-backups
# (with RecoveryPeriodInDays), describe-continuous-backups, and
# restore-table-to-point-in-time to a second between writes, to the latest
# restorable time and by the source's ARN; DynamoDB's errors as the CLI
# reports them.  The CLI sends a RestoreDateTime in whole seconds, so the
# writes here are a second apart.  Runs against the cluster of
# tools/test.sh (PGHOST/PGPORT/PGUSER set); prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir pitr
DB=ddb_pitr_test
PORT=${PITR_TEST_PORT:-55489}
ENDPOINT="http://127.0.0.1:$PORT"

fresh_db --extension "$DB"
read -r key_id key_secret <<<"$(q -F ' ' -c "SELECT * FROM ddb.create_access_key()")"

start_gateway "$PORT" "$WORK/gateway.log" --dsn "dbname=$DB" --pool 2
# The AWS CLI of Debian 12 (2.9.19) predates RecoveryPeriodInDays (2025):
# it is given the member in a copy of its own model of DynamoDB, which
# AWS_DATA_PATH puts before the bundled one.
mkdir -p "$WORK/models/dynamodb/2012-08-10"
/usr/bin/python3 - "$WORK/models/dynamodb/2012-08-10/service-2.json" <<'PY'
import json, os, sys
import botocore
model = json.load(open(os.path.join(os.path.dirname(botocore.__file__), 'data', 'dynamodb', '2012-08-10', 'service-2.json')))
model['shapes'].setdefault('RecoveryPeriodInDays', {'type': 'integer', 'box': True, 'min': 1, 'max': 35})
for shape in ('PointInTimeRecoverySpecification', 'PointInTimeRecoveryDescription'):
    model['shapes'][shape]['members'].setdefault('RecoveryPeriodInDays', {'shape': 'RecoveryPeriodInDays'})
json.dump(model, open(sys.argv[1], 'w'))
PY
aws() {
    AWS_DATA_PATH="$WORK/models" AWS_ACCESS_KEY_ID=$key_id AWS_SECRET_ACCESS_KEY=$key_secret AWS_DEFAULT_REGION=us-east-1 AWS_PAGER= AWS_CONFIG_FILE=/dev/null \
        /usr/bin/aws --endpoint-url "$ENDPOINT" --output text "$@" 2>&1
}
# the next whole second, once it has passed: a RestoreDateTime after what
# was written so far and before what is written next
second() {
    local next=$(( $(date +%s) + 1 ))
    sleep "$(awk -v n="$next" -v now="$(date +%s.%N)" 'BEGIN {printf "%.3f", n - now + 0.05}')"
    echo "$next"
}
# restore SOURCE TARGET ARGS...: restores, waits for the restore's job; prints the TableStatus answered
restore() {
    local target=$2 answer
    answer=$(aws dynamodb restore-table-to-point-in-time --source-table-name "$1" --target-table-name "$target" "${@:3}" \
             --query TableDescription.TableStatus)
    q -c "SELECT ddb.wait_for_job(job_id) FROM ddb.table_restores WHERE table_name = '$target'" >/dev/null
    echo "$answer"
}
titles() {  # TABLE: its items' titles, in key order
    aws dynamodb scan --table-name "$1" --query 'Items[].title.S' | tr '\t' ' '
}

aws dynamodb create-table --table-name Books --billing-mode PAY_PER_REQUEST \
    --attribute-definitions AttributeName=isbn,AttributeType=S AttributeName=author,AttributeType=S \
    --key-schema AttributeName=isbn,KeyType=HASH \
    --global-secondary-indexes 'IndexName=ByAuthor,KeySchema=[{AttributeName=author,KeyType=HASH}],Projection={ProjectionType=ALL}' >/dev/null
aws dynamodb put-item --table-name Books --item '{"isbn": {"S": "1"}, "author": {"S": "a"}, "title": {"S": "one"}}' >/dev/null
check "aws: describe-continuous-backups of a new table" "ENABLED DISABLED" \
    "$(aws dynamodb describe-continuous-backups --table-name Books \
         --query '[ContinuousBackupsDescription.ContinuousBackupsStatus, ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus]' | tr '\t' ' ')"
check "aws: update-continuous-backups turns it on, for 7 days" "ENABLED 7" \
    "$(aws dynamodb update-continuous-backups --table-name Books \
         --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true,RecoveryPeriodInDays=7 \
         --query '[ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus, ContinuousBackupsDescription.PointInTimeRecoveryDescription.RecoveryPeriodInDays]' \
       | tr '\t' ' ')"
check "aws: describe-continuous-backups gives the window" "ENABLED True" \
    "$(aws dynamodb describe-continuous-backups --table-name Books \
         --query '[ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus,
                   ContinuousBackupsDescription.PointInTimeRecoveryDescription.EarliestRestorableDateTime
                   <= ContinuousBackupsDescription.PointInTimeRecoveryDescription.LatestRestorableDateTime]' | tr '\t' ' ')"

# writes a second apart, and after each the second to restore to
t1=$(second)
aws dynamodb put-item --table-name Books --item '{"isbn": {"S": "2"}, "author": {"S": "b"}, "title": {"S": "two"}}' >/dev/null
t2=$(second)
aws dynamodb update-item --table-name Books --key '{"isbn": {"S": "1"}}' --update-expression 'SET title = :t' \
    --expression-attribute-values '{":t": {"S": "one, revised"}}' >/dev/null
t3=$(second)
aws dynamodb delete-item --table-name Books --key '{"isbn": {"S": "2"}}' >/dev/null

check "aws: restore-table-to-point-in-time answers CREATING" "CREATING" "$(restore Books BooksAt1 --restore-date-time "$t1")"
restore Books BooksAt2 --restore-date-time "$t2" >/dev/null
restore Books BooksAt3 --restore-date-time "$t3" >/dev/null
check "aws: restored to each second: the items as they were then" "one|one two|one, revised two" \
    "$(titles BooksAt1)|$(titles BooksAt2)|$(titles BooksAt3)"
check "aws: with the global index as it was" "1 b" \
    "$(aws dynamodb query --table-name BooksAt2 --index-name ByAuthor --key-condition-expression 'author = :a' \
         --expression-attribute-values '{":a": {"S": "b"}}' --query '[Count, Items[0].author.S]' | tr '\t' ' ')"
check "aws: describe-table: ACTIVE, with its RestoreSummary" "ACTIVE arn:aws:dynamodb:ddb-model:000000000000:table/Books False" \
    "$(aws dynamodb describe-table --table-name BooksAt3 \
         --query '[Table.TableStatus, Table.RestoreSummary.SourceTableArn, Table.RestoreSummary.RestoreInProgress]' | tr '\t' ' ')"
latest=$(aws dynamodb restore-table-to-point-in-time --source-table-arn arn:aws:dynamodb:ddb-model:000000000000:table/Books \
             --target-table-name BooksNow --use-latest-restorable-time --query TableDescription.TableStatus)
q -c "SELECT ddb.wait_for_job(job_id) FROM ddb.table_restores WHERE table_name = 'BooksNow'" >/dev/null
check "aws: --use-latest-restorable-time, by the source's ARN" "CREATING one, revised" "$latest $(titles BooksNow)"

check "aws: a time before point-in-time recovery was on is InvalidRestoreTimeException" "InvalidRestoreTimeException" \
    "$(aws dynamodb restore-table-to-point-in-time --source-table-name Books --target-table-name BooksEarly \
         --restore-date-time "$((t1 - 3600))" | grep -o InvalidRestoreTimeException | head -1)"
check "aws: a table without it is PointInTimeRecoveryUnavailableException" "PointInTimeRecoveryUnavailableException" \
    "$(aws dynamodb restore-table-to-point-in-time --source-table-name BooksNow --target-table-name BooksNone \
         --use-latest-restorable-time | grep -o PointInTimeRecoveryUnavailableException | head -1)"
check "aws: a target that exists is TableAlreadyExistsException" "TableAlreadyExistsException" \
    "$(aws dynamodb restore-table-to-point-in-time --source-table-name Books --target-table-name BooksAt1 \
         --use-latest-restorable-time | grep -o TableAlreadyExistsException | head -1)"
check "aws: no such source is TableNotFoundException" "TableNotFoundException" \
    "$(aws dynamodb restore-table-to-point-in-time --source-table-name Nope --target-table-name BooksNope \
         --use-latest-restorable-time | grep -o TableNotFoundException | head -1)"
check "aws: update-continuous-backups of no table is TableNotFoundException" "TableNotFoundException" \
    "$(aws dynamodb update-continuous-backups --table-name Nope \
         --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true | grep -o TableNotFoundException | head -1)"
check "aws: a recovery period of 36 days is ValidationException, in DynamoDB's words" \
    "Value '36' at 'pointInTimeRecoverySpecification.recoveryPeriodInDays' failed to satisfy constraint: Member must have value less than or equal to 35" \
    "$(aws dynamodb update-continuous-backups --table-name Books \
         --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true,RecoveryPeriodInDays=36 \
       | grep -o "Value '36'.*35")"
check "aws: update-continuous-backups turns it off" "DISABLED" \
    "$(aws dynamodb update-continuous-backups --table-name Books \
         --point-in-time-recovery-specification PointInTimeRecoveryEnabled=false \
         --query ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus)"
check "and the history is gone" "" "$(q -c "SELECT to_regclass('public.\"Books\$pitr\"')")"

stop_gateway
drop_db "$DB"
done_testing
