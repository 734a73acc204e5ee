#!/usr/bin/env bash
# Races between sessions, made deterministic by holding one transaction open
# while the other session runs.  Runs against the cluster of tools/test.sh
# (PGHOST/PGPORT/PGUSER set); prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir concurrency
DB=ddb_concurrency

fresh_db --extension "$DB"
q -c "SELECT ddb.create_table('Race', 'pk', 'S', 'sk', 'S')" >/dev/null
put_old='{"TableName": "Race", "Item": {"pk": {"S": "k"}, "sk": {"S": "1"}, "who": {"S": "%s"}}, "ReturnValues": "ALL_OLD"}'

# Session A creates the item and holds its transaction open; session B's
# PutItem with ReturnValues ALL_OLD on the same new key runs meanwhile.  B
# must wait, then report A's item as the one it replaced (never nothing).
{
    echo "BEGIN;"
    echo "SELECT ddb.execute('PutItem', '$(printf "$put_old" A)');"
    echo "SELECT pg_sleep(1.5);"
    echo "COMMIT;"
} | q >"$WORK/a.out" 2>&1 &
a_pid=$!
sleep 0.5
q -c "SELECT ddb.execute('PutItem', '$(printf "$put_old" B)') -> 'Attributes' -> 'who' ->> 'S'" >"$WORK/b.out" 2>&1
wait "$a_pid"
check "PutItem ALL_OLD racing a create reports the item it replaced" "A" "$(cat "$WORK/b.out")"
check "the later put wins" "B" "$(q -c "SELECT item->>'who' FROM public.\"Race\"")"

# Two sessions create one item under attribute_not_exists: A has inserted
# and holds its transaction open while B tries; B must wait, then fail the
# condition (exactly one wins), and A's item must be the one stored.
create='{"TableName": "Race", "Item": {"pk": {"S": "once"}, "sk": {"S": "1"}, "who": {"S": "%s"}}, "ConditionExpression": "attribute_not_exists(pk)"}'
{
    echo "BEGIN;"
    echo "SELECT ddb.execute('PutItem', '$(printf "$create" A)');"
    echo "SELECT pg_sleep(1.5);"
    echo "COMMIT;"
} | q >"$WORK/once-a.out" 2>&1 &
a_pid=$!
sleep 0.5
psql -X -q -At -d "$DB" -c "SELECT ddb.execute('PutItem', '$(printf "$create" B)')" >"$WORK/once-b.out" 2>&1
wait "$a_pid"
check "of two racing conditional creates exactly one wins" "yes" \
    "$(grep -q 'ConditionalCheckFailedException' "$WORK/once-b.out" && echo yes)"
check "the winner's item is the one stored" "A" "$(q -c "SELECT item->>'who' FROM public.\"Race\" WHERE pk = 'once'")"

# Session A has the table's definition cached when session B adds a second
# GSI (the first created the maintenance trigger, which alone would reset
# A's cache); A's next write must see the new index through the catalog's
# invalidation, so the index misses nothing.
q -c "SELECT ddb.create_index('Race', 'ByTeam', 'team')" >/dev/null
{
    echo "SELECT ddb.put_item('Race', '{\"pk\": \"a\", \"sk\": \"1\", \"owner\": \"ann\", \"team\": \"x\"}');"
    echo "SELECT pg_sleep(1.5);"
    echo "SELECT ddb.put_item('Race', '{\"pk\": \"a\", \"sk\": \"2\", \"owner\": \"bob\", \"team\": \"x\"}');"
} | q >"$WORK/cache.out" 2>&1 &
a_pid=$!
sleep 0.5
q -c "SELECT ddb.create_index('Race', 'ByOwner', 'owner')" >/dev/null
wait "$a_pid"
check "a GSI added by another session is kept by a session that had the table cached" \
    "bob" "$(q -c "SELECT string_agg(item->>'owner', ',') FROM ddb.query('Race', 'bob', index_name => 'ByOwner') item")"
check "no GSI mismatch after the concurrent index creation" "0" "$(q -c "SELECT count(*) FROM ddb.verify_gsi('Race')")"

# Two sessions send one TransactWriteItems under the same ClientRequestToken:
# A runs it and holds its transaction open; B must wait for A's token, then
# answer {} as a retry, so the counter is added once.
token='{"ClientRequestToken": "race", "TransactItems": [{"Update": {"TableName": "Race", "Key": {"pk": {"S": "tok"}, "sk": {"S": "1"}}, "UpdateExpression": "ADD n :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}}]}'
{
    echo "BEGIN;"
    echo "SELECT ddb.execute('TransactWriteItems', '$token');"
    echo "SELECT pg_sleep(1.5);"
    echo "COMMIT;"
} | q >"$WORK/token-a.out" 2>&1 &
a_pid=$!
sleep 0.5
q -c "SELECT ddb.execute('TransactWriteItems', '$token')" >"$WORK/token-b.out" 2>&1
wait "$a_pid"
check "a concurrent request under the same token answers as a retry" "{}" "$(cat "$WORK/token-b.out")"
check "and the transaction is applied once" "1" "$(q -c "SELECT item->>'n' FROM public.\"Race\" WHERE pk = 'tok'")"

# Streams number records at commit: A writes first and holds its transaction
# open, B writes and commits, a reader takes what is there (B's record) and
# keeps its NextShardIterator; once A commits, the reader must find A's
# record after that iterator (numbered at write, it would lie behind it).
q -c "SELECT ddb.execute('CreateTable', '{\"TableName\": \"Flow\", \"BillingMode\": \"PAY_PER_REQUEST\", \"KeySchema\": [{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}],
      \"AttributeDefinitions\": [{\"AttributeName\": \"pk\", \"AttributeType\": \"S\"}],
      \"StreamSpecification\": {\"StreamEnabled\": true, \"StreamViewType\": \"KEYS_ONLY\"}}')" >/dev/null
arn=$(q -c "SELECT ddb.execute('DescribeTable', '{\"TableName\": \"Flow\"}') -> 'Table' ->> 'LatestStreamArn'")
shard=$(q -c "SELECT ddb.execute('DescribeStream', jsonb_build_object('StreamArn', '$arn')) -> 'StreamDescription' -> 'Shards' -> 0 ->> 'ShardId'")
{
    echo "BEGIN;"
    echo "SELECT ddb.put_item('Flow', '{\"pk\": \"A\"}');"
    echo "SELECT pg_sleep(1.5);"
    echo "COMMIT;"
} | q >"$WORK/stream-a.out" 2>&1 &
a_pid=$!
sleep 0.5
q -c "SELECT ddb.put_item('Flow', '{\"pk\": \"B\"}')" >/dev/null
first=$(q -c "SELECT ddb.execute('GetRecords', jsonb_build_object('ShardIterator', ddb.execute('GetShardIterator',
              jsonb_build_object('StreamArn', '$arn', 'ShardId', '$shard', 'ShardIteratorType', 'TRIM_HORIZON')) ->> 'ShardIterator'))")
wait "$a_pid"
check "a reader sees the committed record, not the one still open" "B" \
    "$(q -c "SELECT string_agg(r->'dynamodb'->'Keys'->'pk'->>'S', ',') FROM jsonb_array_elements('$first'::jsonb -> 'Records') r")"
check "and finds the other after its iterator once it commits" "A" \
    "$(q -c "SELECT string_agg(r->'dynamodb'->'Keys'->'pk'->>'S', ',') FROM jsonb_array_elements(ddb.execute('GetRecords',
              jsonb_build_object('ShardIterator', '$first'::jsonb ->> 'NextShardIterator')) -> 'Records') r")"

# A session has a table's definition cached, and a DeleteTable commits
# between the start of its transaction and its next request: the request
# finds no table (ResourceNotFoundException), not a dropped relation (an
# internal error, a 500 through the gateway).
q -c "SELECT ddb.create_table('Dropped', 'pk')" >/dev/null
{
    echo "SELECT ddb.execute('GetItem', '{\"TableName\": \"Dropped\", \"Key\": {\"pk\": {\"S\": \"a\"}}}');"
    echo "BEGIN;"
    echo "SELECT pg_sleep(1);"
    echo "\\set ON_ERROR_STOP 0"
    echo "\\set VERBOSITY sqlstate"
    echo "SELECT ddb.execute('GetItem', '{\"TableName\": \"Dropped\", \"Key\": {\"pk\": {\"S\": \"a\"}}}');"
    echo "ROLLBACK;"
} | q >"$WORK/dropped.out" 2>&1 &
a_pid=$!
sleep 0.5
q -c "SELECT ddb.delete_table('Dropped')" >/dev/null
wait "$a_pid"
check "a request racing a DeleteTable finds no table (YD004), not a dropped relation" "ERROR:  YD004" \
    "$(grep ERROR "$WORK/dropped.out")"

# Two DeleteTables of one table, two CreateTables of one name: the second
# waits for the first, then answers as DynamoDB would (YD004, YD005), never
# with a relation dropped under it or a unique violation of the catalog.
q -c "SELECT ddb.create_table('Twice', 'pk')" >/dev/null
for op in "DeleteTable:{\"TableName\": \"Twice\"}" \
          "CreateTable:{\"TableName\": \"Twice2\", \"BillingMode\": \"PAY_PER_REQUEST\", \"KeySchema\": [{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}], \"AttributeDefinitions\": [{\"AttributeName\": \"pk\", \"AttributeType\": \"S\"}]}"; do
    { echo "BEGIN;"; echo "SELECT ddb.execute('${op%%:*}', '${op#*:}') IS NOT NULL;"; echo "SELECT pg_sleep(1);"; echo "COMMIT;"; } \
        | q >/dev/null 2>&1 &
    a_pid=$!
    sleep 0.3
    printf '%s\n' "\\set VERBOSITY sqlstate" "SELECT ddb.execute('${op%%:*}', '${op#*:}');" | q >"$WORK/twice.out" 2>&1
    wait "$a_pid"
    check "two concurrent ${op%%:*}s of one table: the second answers $([ "${op%%:*}" = DeleteTable ] && echo YD004 || echo YD005)" \
        "ERROR:  $([ "${op%%:*}" = DeleteTable ] && echo YD004 || echo YD005)" "$(grep ERROR "$WORK/twice.out")"
done

# Point-in-time recovery (docs/pitr.md) times a transaction's versions when
# it commits.  B began before A, but writes the item after A committed: B's
# version is the later one (a time taken when a transaction began would put
# it first, and a restore would give A's item).
q -c "SELECT ddb.create_table('PitRace', 'pk')" -c "SELECT ddb.set_continuous_backups('PitRace', true)" >/dev/null
{
    echo "BEGIN;"
    echo "SELECT now();"
    echo "SELECT pg_sleep(1);"
    echo "SELECT ddb.put_item('PitRace', '{\"pk\": \"k\", \"who\": \"B\"}');"
    echo "COMMIT;"
} | q >/dev/null 2>&1 &
b_pid=$!
sleep 0.3
q -c "SELECT ddb.put_item('PitRace', '{\"pk\": \"k\", \"who\": \"A\"}')" >/dev/null
wait "$b_pid"
check "PITR: a transaction that began first but wrote later has the later version" "A B|B" \
    "$(q -c "SELECT string_agg(item->>'who', ' ' ORDER BY changed_at) FROM public.\"PitRace\$pitr\"")|$(q -c "SELECT item->>'who' FROM ddb.pitr_items('PitRace', clock_timestamp())")"

# A prepared transaction's versions are written at PREPARE TRANSACTION (its
# time is read then) and seen once COMMIT PREPARED commits it.
q -c "BEGIN" -c "SELECT ddb.put_item('PitRace', '{\"pk\": \"prepared\"}')" -c "PREPARE TRANSACTION 'ddb_pitr_prepared'" >/dev/null
before=$(q -c "SELECT count(*) FROM ddb.pitr_items('PitRace', clock_timestamp()) WHERE pk = 'prepared'")
q -c "COMMIT PREPARED 'ddb_pitr_prepared'" >/dev/null
check "PITR: a prepared transaction's version is seen once it is committed" "0 1" \
    "$before $(q -c "SELECT count(*) FROM ddb.pitr_items('PitRace', clock_timestamp()) WHERE pk = 'prepared'")"

# A restore reads after ddb.pitr_settle, which waits for the writers that
# have timed their versions but not finished committing.  A's commit is held
# after its time was read, waiting for a synchronous standby that does not
# exist: a read of the history misses A's version, a read after settling
# waits for A and has it.
reset_standby() { psql -X -q -d postgres -c "ALTER SYSTEM RESET synchronous_standby_names" -c "SELECT pg_reload_conf()" >/dev/null; }
at_exit reset_standby
psql -X -q -d postgres -c "ALTER SYSTEM SET synchronous_standby_names = 'ddb_nobody'" -c "SELECT pg_reload_conf()" >/dev/null
sleep 0.5
q -c "SET synchronous_commit = on" -c "SELECT ddb.put_item('PitRace', '{\"pk\": \"late\"}')" >/dev/null 2>&1 &
a_pid=$!
sleep 1
after=$(q -c "SELECT clock_timestamp()")
missed=$(q -c "SELECT count(*) FROM ddb.pitr_items('PitRace', '$after') WHERE pk = 'late'")
q -c "SELECT ddb.pitr_settle('PitRace')" -c "SELECT count(*) FROM ddb.pitr_items('PitRace', '$after') WHERE pk = 'late'" \
    >"$WORK/settled.out" 2>&1 &
settle_pid=$!
sleep 1
kill -0 "$settle_pid" 2>/dev/null && waiting=waits || waiting="did not wait"
reset_standby
wait "$a_pid" "$settle_pid"
check "PITR: a read before the commit is over misses it; ddb.pitr_settle waits for it, then it is read" "0 waits 1" \
    "$missed $waiting $(tail -1 "$WORK/settled.out")"

drop_db "$DB"
done_testing
