#!/usr/bin/env bash
# The server's own locks (src/ddb_locks.h, docs/security.md "The server's
# locks"): no role can take, hold or forge them with pg_advisory_*, a
# reader waiting for committing writers stalls none, and one role's jobs
# stay within ddb.max_jobs_per_role across its sessions.  Two sessions each
# (one held open in the background).  Runs against the cluster of
# tools/test.sh (PGHOST/PGPORT/PGUSER set); prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir server_locks
DB=ddb_server_locks
PLAIN=ddb_locks_plain

# the SQLSTATE of a statement's error, or "no error"
fails() {
    local out
    out=$(q -v VERBOSITY=verbose -c "$@" 2>&1 >/dev/null | sed -n 's/^\(psql:.*\)\{0,1\}ERROR:  \([0-9A-Z]\{5\}\): .*/\2/p' | head -1)
    echo "${out:-no error}"
}
# hold SECONDS SQL...: runs the statements as the plain role in a transaction held open SECONDS (background)
hold() {
    local seconds=$1; shift
    { echo "SET ROLE $PLAIN;"; echo "BEGIN;"; for s in "$@"; do echo "$s;"; done; echo "SELECT pg_sleep($seconds);"; echo "COMMIT;"; } \
        | q >"$WORK/hold.out" 2>&1 &
    held=$!
    sleep 0.5
}

fresh_db --extension "$DB"
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS $PLAIN" -c "CREATE ROLE $PLAIN NOLOGIN"
q -c "SELECT ddb.execute('CreateTable', '{\"TableName\": \"Tlk\", \"BillingMode\": \"PAY_PER_REQUEST\",
        \"AttributeDefinitions\": [{\"AttributeName\": \"pk\", \"AttributeType\": \"S\"}],
        \"KeySchema\": [{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}],
        \"StreamSpecification\": {\"StreamEnabled\": true, \"StreamViewType\": \"NEW_IMAGE\"}}')" \
  -c "SELECT ddb.execute('UpdateContinuousBackups', '{\"TableName\": \"Tlk\", \"PointInTimeRecoverySpecification\": {\"PointInTimeRecoveryEnabled\": true}}')" \
  -c "GRANT SELECT ON public.\"Tlk\" TO $PLAIN" >/dev/null
put() { echo "SET lock_timeout = '2s'; SELECT ddb.execute('PutItem', '{\"TableName\": \"Tlk\", \"Item\": {\"pk\": {\"S\": \"$1\"}}}')"; }

# Streams: writers numbered their records under pg_advisory_xact_lock(1685283443, hashtext(table)),
# which any role could hold and freeze every write to the table at commit.
hold 3 "SELECT pg_advisory_lock(1685283443, hashtext('Tlk'))" "SELECT pg_advisory_lock(1685283443::bigint << 32 | hashtext('Tlk')::bigint & 4294967295)"
check "a plain role holding the stream's old advisory keys stalls no write to the table" "no error" "$(fails "$(put s1)")"
wait $held
check "the write made its stream record" "1" "$(q -c "SELECT count(*) FROM ddb.stream_records WHERE table_name = 'Tlk'")"

# A reader of the stream (GetRecords, GetShardIterator LATEST) waits for committing writers, and
# holds nothing: its transaction held open stalls no writer (it held the lock shared until it ended).
iterator=$(q -c "SELECT ddb.execute('GetShardIterator', jsonb_build_object('StreamArn', ddb.execute('DescribeTable', '{\"TableName\": \"Tlk\"}')->'Table'->>'LatestStreamArn',
    'ShardId', ddb.stream_shard_id((SELECT stream_label FROM ddb.tables WHERE table_name = 'Tlk')), 'ShardIteratorType', 'TRIM_HORIZON'))->>'ShardIterator'")
{ echo "BEGIN;"; echo "SELECT ddb.execute('GetRecords', '{\"ShardIterator\": \"$iterator\"}') IS NOT NULL;"; echo "SELECT pg_sleep(3);"; echo "COMMIT;"; } \
    | q >"$WORK/reader.out" 2>&1 &
held=$!
sleep 0.5
check "a reader of the stream with its transaction open stalls no writer" "no error" "$(fails "$(put s2)")"
wait $held
check "the reader read the stream" "t" "$(head -1 "$WORK/reader.out")"

# PITR: committing writers held pg_advisory_xact_lock_shared(1885959282, hashtext(table)); a role
# holding it exclusive froze them at commit.
hold 3 "SELECT pg_advisory_lock(1885959282, hashtext('Tlk'))"
check "a plain role holding the PITR's old advisory key stalls no write" "no error" "$(fails "$(put p1)")"
wait $held
check "ddb.pitr_settle is for a role that may read the table (not the plain role, without SELECT)" "YD010" \
    "$(fails "REVOKE SELECT ON public.\"Tlk\" FROM $PLAIN" -c "SET ROLE $PLAIN" -c "SELECT ddb.pitr_settle('Tlk')")"
check "ddb.await_stream_writers too" "YD010" "$(fails "SET ROLE $PLAIN" -c "SELECT ddb.await_stream_writers('Tlk')")"
check "no SQL takes the server's locks: pg_locks shows them with objsubid 3, pg_advisory_* only 1 and 2" "3" \
    "$(q -c "BEGIN" -c "SELECT ddb.lock_table_name('X')" -c "SELECT objsubid FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()" -c "COMMIT" | tail -1)"

# Jobs: "this backend is job N's worker" (ddb.end_restore) and "this transaction started job N"
# (ddb.job_started_here) were tests of advisory locks (1685283445, N) and (1685283444, N).
check "a role holding a job's old run-lock keys does not pass ddb.end_restore's worker test" "42501" \
    "$(fails "SET ROLE $PLAIN" -c "SELECT pg_advisory_lock(1685283445, 4242)" -c "SELECT ddb.end_restore('Tlk', 4242)")"
check "nor ddb.job_started_here with its request-lock keys" "f" \
    "$(q -c "SET ROLE $PLAIN" -c "BEGIN" -c "SELECT pg_advisory_xact_lock(1685283444, 4242)" -c "SELECT ddb.job_started_here(4242)" -c "COMMIT" | tail -1)"
q -c "CREATE FUNCTION public.slow_items(argument jsonb) RETURNS SETOF jsonb LANGUAGE sql AS \$\$ SELECT '{\"pk\": \"1\"}'::jsonb FROM pg_sleep(30) \$\$" \
  -c "CREATE FUNCTION public.some_items(argument jsonb) RETURNS SETOF jsonb LANGUAGE sql AS \$\$ SELECT '{\"pk\": \"1\"}'::jsonb \$\$" \
  -c "GRANT EXECUTE ON FUNCTION public.slow_items(jsonb), public.some_items(jsonb) TO PUBLIC" >/dev/null
restore() {  # target, items function: ddb.start_restore of T's description
    echo "SELECT ddb.start_restore('$1', ddb.execute('DescribeTable', '{\"TableName\": \"Tlk\"}') -> 'Table', '{}', '$2(jsonb)', '{}',
           '{\"SourceTableArn\": \"arn:aws:dynamodb:ddb-model:000000000000:table/Tlk\", \"RestoreDateTime\": 0}') IS NOT NULL"
}
next_job=$(q -c "SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM ddb.job_ids")
hold 4 "SELECT pg_advisory_lock(1685283444, n) FROM generate_series($next_job, $next_job + 5) n"
check "a role holding job-numbered advisory locks stalls no request that starts a job" "no error" \
    "$(fails "SET lock_timeout = '2s'" -c "$(restore Restored some_items)")"
wait $held
next_job=$(q -c "SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM ddb.job_ids")
hold 6 "SELECT pg_advisory_lock(1685283445, n) FROM generate_series($next_job, $next_job + 5) n"
q -c "$(restore Restored2 some_items)" >/dev/null
check "nor keeps its restore CREATING" "ACTIVE" \
    "$(q -c "SELECT ddb.wait_for_job(job_id, 3) FROM ddb.table_restores WHERE table_name = 'Restored2'" >/dev/null
       q -c "SELECT ddb.execute('DescribeTable', '{\"TableName\": \"Restored2\"}')->'Table'->>'TableStatus'")"
wait $held

# ddb.max_jobs_per_role: counted in the transaction, two open transactions of one role held more
# workers than the limit.  Session A starts two jobs (the limit) and holds its transaction open;
# session B's job then waits for A's count to commit and is refused.
export PGOPTIONS="-c ddb.max_jobs_per_role=2"
{ echo "BEGIN;"; echo "$(restore Slow1 slow_items);"; echo "$(restore Slow2 slow_items);"; echo "SELECT pg_sleep(2);"; echo "COMMIT;"; } \
    | q >"$WORK/a.out" 2>&1 &
held=$!
sleep 1
check "a second transaction of the role cannot pass ddb.max_jobs_per_role (LimitExceededException)" "YD009" \
    "$(fails "BEGIN" -c "$(restore Slow3 slow_items)" -c "SELECT pg_sleep(1)" -c "COMMIT")"
wait $held
unset PGOPTIONS
check "the role's background workers are the limit's" "2" \
    "$(q -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'ddb_model job' AND datname = current_database()")"
q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'ddb_model job' AND datname = current_database()" >/dev/null

drop_db "$DB" >/dev/null 2>&1
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS $PLAIN" >/dev/null 2>&1
done_testing
