#!/usr/bin/env bash
# On-demand backups and restores (docs/backups.md) beyond pg_regress
# (test/sql/api_backups.sql): the AWS CLI's create-backup, describe-backup,
# list-backups, restore-table-from-backup (with its waiter) and
# delete-backup through ddb-gateway; writers that go on while CreateBackup
# copies, and a backup that is one consistent moment; the background jobs'
# worker limit and a server restart in the middle of a restore.  Runs
# against the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set), which it
# restarts once; prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir backups
DB=ddb_backups_test
PORT=${BACKUPS_TEST_PORT:-55488}
ENDPOINT="http://127.0.0.1:$PORT"
ACCOUNTS=${BACKUPS_TEST_ACCOUNTS:-100000}

fresh_db --extension "$DB"
read -r key_id key_secret <<<"$(q -F ' ' -c "SELECT * FROM ddb.create_access_key()")"

start_gateway "$PORT" "$WORK/gateway.log" --dsn "dbname=$DB" --pool 2
aws() {
    AWS_ACCESS_KEY_ID=$key_id AWS_SECRET_ACCESS_KEY=$key_secret AWS_DEFAULT_REGION=us-east-1 AWS_PAGER= AWS_CONFIG_FILE=/dev/null \
        /usr/bin/aws --endpoint-url "$ENDPOINT" --output text "$@" 2>&1
}

# ---- the AWS CLI ----
aws dynamodb create-table --table-name Books --billing-mode PAY_PER_REQUEST \
    --attribute-definitions AttributeName=isbn,AttributeType=S AttributeName=author,AttributeType=S \
    --key-schema AttributeName=isbn,KeyType=HASH \
    --global-secondary-indexes 'IndexName=ByAuthor,KeySchema=[{AttributeName=author,KeyType=HASH}],Projection={ProjectionType=ALL}' >/dev/null
for i in 1 2 3 4 5; do
    aws dynamodb put-item --table-name Books --item "{\"isbn\": {\"S\": \"$i\"}, \"author\": {\"S\": \"a$((i % 2))\"}}" >/dev/null
done
arn=$(aws dynamodb create-backup --table-name Books --backup-name books-1 --query BackupDetails.BackupArn)
check "aws: create-backup" "AVAILABLE" "$(aws dynamodb describe-backup --backup-arn "$arn" \
    --query BackupDescription.BackupDetails.BackupStatus)"
check "aws: describe-backup tells the table's items and its index" "5 ByAuthor" \
    "$(aws dynamodb describe-backup --backup-arn "$arn" \
       --query '[BackupDescription.SourceTableDetails.ItemCount, BackupDescription.SourceTableFeatureDetails.GlobalSecondaryIndexes[0].IndexName]' \
       | tr '\t' ' ')"
for i in 2 3 4; do aws dynamodb create-backup --table-name Books --backup-name "books-$i" >/dev/null; done
check "aws: list-backups follows LastEvaluatedBackupArn, pages of 3" "books-1 books-2 books-3 books-4" \
    "$(aws dynamodb list-backups --table-name Books --page-size 3 --query 'BackupSummaries[].BackupName' | tr '\t\n' '  ' | xargs)"
check "aws: list-backups with a time range and a type" "4 0" \
    "$(aws dynamodb list-backups --time-range-lower-bound "$(date -d '1 hour ago' +%s)" --backup-type ALL \
         --query 'length(BackupSummaries)') $(aws dynamodb list-backups --time-range-upper-bound 1000000000 --query 'length(BackupSummaries)')"
check "aws: restore-table-from-backup answers CREATING" "CREATING" \
    "$(aws dynamodb restore-table-from-backup --target-table-name BooksCopy --backup-arn "$arn" \
         --billing-mode-override PAY_PER_REQUEST --query TableDescription.TableStatus)"
# (the CLI's table-exists waiter polls every 20 seconds: the job is waited for first)
q -c "SELECT ddb.wait_for_job(job_id) FROM ddb.table_restores WHERE table_name = 'BooksCopy'" >/dev/null
check "aws: the table-exists waiter finds the restored table ACTIVE" "ACTIVE True" \
    "$(aws dynamodb wait table-exists --table-name BooksCopy
       aws dynamodb describe-table --table-name BooksCopy \
         --query '[Table.TableStatus, Table.RestoreSummary.SourceBackupArn == `'"$arn"'`]' | tr '\t' ' ')"
check "aws: the restored table's items and index" "5 3" \
    "$(aws dynamodb scan --table-name BooksCopy --select COUNT --query Count) $(aws dynamodb query --table-name BooksCopy \
         --index-name ByAuthor --key-condition-expression 'author = :a' --expression-attribute-values '{":a": {"S": "a1"}}' --query Count)"
check "aws: restoring to a table that exists is TableAlreadyExistsException" "TableAlreadyExistsException" \
    "$(aws dynamodb restore-table-from-backup --target-table-name Books --backup-arn "$arn" | grep -o 'TableAlreadyExistsException' | head -1)"
check "aws: delete-backup" "DELETED" "$(aws dynamodb delete-backup --backup-arn "$arn" --query BackupDescription.BackupDetails.BackupStatus)"
check "aws: a deleted backup is BackupNotFoundException" "BackupNotFoundException" \
    "$(aws dynamodb describe-backup --backup-arn "$arn" | grep -o 'BackupNotFoundException' | head -1)"
check "aws: create-backup of no table is TableNotFoundException" "TableNotFoundException" \
    "$(aws dynamodb create-backup --table-name Nowhere --backup-name x-1 | grep -o 'TableNotFoundException' | head -1)"

# ---- writers go on while CreateBackup copies; the backup is one moment ----
# Accounts of 100 each; writers move 1 between two of them in a transaction, so the sum never changes.
q -c "SELECT ddb.create_table('Accounts', 'id', 'N')" >/dev/null
q -c "SELECT count(*) FROM (SELECT ddb.put_item('Accounts', jsonb_build_object('id', i, 'balance', 100, 'pad', repeat('x', 200)))
      FROM generate_series(1, $ACCOUNTS) i) p" >/dev/null
cat >"$WORK/transfer.sql" <<SQL
\set a random(1, $ACCOUNTS)
\set b random(1, $ACCOUNTS)
BEGIN;
SELECT ddb.update_item('Accounts', :a::ddb.ddb_key, "update" => 'ADD balance :d', vals => '{":d": -1}');
SELECT ddb.update_item('Accounts', :b::ddb.ddb_key, "update" => 'ADD balance :d', vals => '{":d": 1}');
COMMIT;
SQL
pgbench -n -c 2 -j 2 -T 6 -l --log-prefix="$WORK/transfers" -f "$WORK/transfer.sql" "$DB" >"$WORK/pgbench.out" 2>&1 &
pgbench_pid=$!
sleep 2
started=$(date +%s%N)
q -c "SELECT ddb.execute('CreateBackup', '{\"TableName\": \"Accounts\", \"BackupName\": \"during-writes\"}')" >/dev/null
ended=$(date +%s%N)
wait "$pgbench_pid"
check "the writers ran to their end" "0" "$?"
# transactions that began and ended while the backup was being copied, and the longest one then
read -r during longest <<<"$(cat "$WORK"/transfers.* | awk -v s="$started" -v e="$ended" '
    { end_ns = ($5 * 1000000 + $6) * 1000; begin_ns = end_ns - $3 * 1000
      if (begin_ns >= s && end_ns <= e) { n++ } if (end_ns >= s && begin_ns <= e && $3 > max) { max = $3 } }
    END { print n + 0, int(max / 1000) }')"
backup_ms=$(( (ended - started) / 1000000 ))
echo "# CreateBackup of $ACCOUNTS items took $backup_ms ms; $during transfers committed meanwhile, the longest took $longest ms"
check "writers committed while the backup was copied (not blocked by it)" "yes" "$([ "$during" -gt 0 ] && echo yes || echo no)"
check "no writer waited for the backup (the longest transfer took less than half of the copy)" "yes" \
    "$([ $((longest * 2)) -lt "$backup_ms" ] && echo yes || echo no)"
accounts_arn=$(q -c "SELECT backup_arn FROM ddb.backups WHERE backup_name = 'during-writes'")
check "the backup holds every account, and their sum: one consistent moment" "$ACCOUNTS $((ACCOUNTS * 100))" \
    "$(q -F ' ' -c "SELECT count(*), sum((item->>'balance')::numeric) FROM ddb.backup_items(jsonb_build_object('BackupArn', '$accounts_arn')) item")"
check "and so does the table after the writers" "$((ACCOUNTS * 100))" \
    "$(q -c "SELECT sum((item->>'balance')::numeric) FROM public.\"Accounts\"")"

# ---- background jobs: a worker for each running job, and no more ----
q -c "CREATE FUNCTION public.slow_items(argument jsonb) RETURNS SETOF jsonb LANGUAGE sql AS \$\$ SELECT '{\"id\": 1}'::jsonb FROM pg_sleep(60) \$\$"
slow_restore() {  # TABLE: starts a restore that takes a minute; prints its status or the error (one role may take every worker here)
    PGOPTIONS="-c ddb.max_jobs_per_role=500" q -c "SELECT ddb.start_restore('$1', ddb.execute('DescribeTable', '{\"TableName\": \"Accounts\"}') -> 'Table', '{}',
          'public.slow_items(jsonb)', '{}', '{\"SourceTableArn\": \"x\", \"RestoreDateTime\": 0}') ->> 'TableStatus'" 2>&1 | head -1
}
refused=""
for i in $(seq 1 40); do
    out=$(slow_restore "Slow$i")
    if [ "$out" != CREATING ]; then refused=$out; break; fi
done
check "when every background worker is taken, a restore is refused as LimitExceededException (no job, no table)" \
    "ERROR:  Subscriber limit exceeded: no background worker is free to run the operation (max_worker_processes = $(q -c "SHOW max_worker_processes")); retry when one has ended|0" \
    "$refused|$(q -c "SELECT count(*) FROM ddb.tables WHERE table_name = 'Slow$i'")"

# ---- a server restart in the middle of restores ----
stop_gateway
data=$(q -c "SHOW data_directory")
(cd / && runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$data" -m fast -w restart >/dev/null)
check "after a restart, the restores' jobs are still IN_PROGRESS until looked at" "$((i - 1))" \
    "$(q -c "SELECT count(*) FROM ddb.jobs WHERE status = 'IN_PROGRESS' AND spec->>'TableName' LIKE 'Slow%'")"
check "DescribeTable finds the worker gone: the table goes (DELETING, then not found)" "DELETING|ResourceNotFoundException" \
    "$(q -c "SELECT ddb.execute('DescribeTable', '{\"TableName\": \"Slow1\"}') -> 'Table' ->> 'TableStatus'")|$(q -c "
       SELECT ddb.execute('DescribeTable', '{\"TableName\": \"Slow1\"}')" 2>&1 | grep -o 'ResourceNotFoundException' | head -1)"
check "and its job FAILED, saying why" "FAILED|the background worker running the job ended before it finished (the server restarted or crashed, or the worker was terminated)" \
    "$(q -c "SELECT status || '|' || error FROM ddb.jobs WHERE spec->>'TableName' = 'Slow1'")"
check "DeleteTable of another finds the same and answers DELETING" "DELETING|0" \
    "$(q -c "SELECT ddb.execute('DeleteTable', '{\"TableName\": \"Slow2\"}') -> 'TableDescription' ->> 'TableStatus'")|$(
       q -c "SELECT count(*) FROM ddb.tables WHERE table_name = 'Slow2'")"
check "ddb.job_state ends the others" "$((i - 3)) 0" \
    "$(q -c "SELECT count(*) FROM ddb.jobs WHERE spec->>'TableName' LIKE 'Slow%' AND ddb.job_state(id) = 'FAILED'
                                           AND spec->>'TableName' NOT IN ('Slow1', 'Slow2')") $(
       q -c "SELECT count(*) FROM ddb.jobs WHERE status = 'IN_PROGRESS'")"
check "and their tables went with them" "0" "$(q -c "SELECT count(*) FROM ddb.tables WHERE table_name LIKE 'Slow%'")"

drop_db "$DB"
done_testing
