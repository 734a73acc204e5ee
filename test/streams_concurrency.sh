#!/usr/bin/env bash
# GetRecords' guarantees under concurrent writers (docs/streams.md, "What is
# recorded, and in which order"): pgbench clients change the items of one
# table with a stream (single writes, two items in a transaction,
# serializable transactions some of which fail at commit, after their
# records were numbered) while three readers follow the stream through
# ddb.execute, page by page: from TRIM_HORIZON in READ COMMITTED, from
# TRIM_HORIZON in REPEATABLE READ with a snapshot taken before each page,
# and from LATEST taken while the writers run.  No record is missing, none
# comes twice, the records of an item come in the order of its changes,
# sequence numbers increase along the shard.  Then a prepared writer: a
# reader is not held up by it and does not pass its record.  And a role
# that may only read the table holds the server's stream locks' keys
# through pg_advisory_*: it stalls neither writers nor readers.  Runs
# against the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set); prints
# TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir streams_concurrency
DB=ddb_streams_concurrency
PLAIN=ddb_streams_reader
SECONDS_OF_WRITES=${STREAMS_SECONDS:-6}

fresh_db --extension "$DB"
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS $PLAIN" -c "CREATE ROLE $PLAIN NOLOGIN"
q -c "SELECT ddb.execute('CreateTable', '{\"TableName\": \"Conc\", \"BillingMode\": \"PAY_PER_REQUEST\",
        \"AttributeDefinitions\": [{\"AttributeName\": \"pk\", \"AttributeType\": \"S\"}],
        \"KeySchema\": [{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}],
        \"StreamSpecification\": {\"StreamEnabled\": true, \"StreamViewType\": \"NEW_IMAGE\"}}')" >/dev/null
# a reader's pages (page p, record k), and when the writers were done
q <<'SQL'
CREATE TABLE followed (reader text, p int, k int, seq bigint, pk text, v int);
CREATE TABLE writers_done (at timestamptz);
CREATE FUNCTION shard_iterator(kind text) RETURNS text LANGUAGE sql AS $$
    WITH stream AS (SELECT ddb.execute('DescribeTable', '{"TableName": "Conc"}') -> 'Table' ->> 'LatestStreamArn' AS arn)
    SELECT ddb.execute('GetShardIterator', jsonb_build_object('StreamArn', arn,
               'ShardId', ddb.execute('DescribeStream', jsonb_build_object('StreamArn', arn)) -> 'StreamDescription' -> 'Shards' -> 0 ->> 'ShardId',
               'ShardIteratorType', kind)) ->> 'ShardIterator'
    FROM stream $$;
-- follows the stream from an iterator, a page of page_size records per transaction (its
-- snapshot taken, then aged by pause seconds, before GetRecords), until a page read after
-- the writers were done is empty
CREATE PROCEDURE follow(reader text, it text, page_size int, pause float8) LANGUAGE plpgsql AS $$
DECLARE
    answer jsonb;
    finished boolean;
    p int := 0;
BEGIN
    LOOP
        finished := EXISTS (SELECT FROM writers_done);
        PERFORM pg_sleep(pause);
        answer := ddb.execute('GetRecords', jsonb_build_object('ShardIterator', it, 'Limit', page_size));
        p := p + 1;
        INSERT INTO followed
        SELECT reader, p, k, (r -> 'dynamodb' ->> 'SequenceNumber')::bigint, r -> 'dynamodb' -> 'Keys' -> 'pk' ->> 'S',
               (r -> 'dynamodb' -> 'NewImage' -> 'v' ->> 'N')::int
        FROM jsonb_array_elements(answer -> 'Records') WITH ORDINALITY AS page(r, k);
        it := answer ->> 'NextShardIterator';
        EXIT WHEN finished AND jsonb_array_length(answer -> 'Records') = 0;
        COMMIT;
    END LOOP;
END $$;
SQL

# the writers: every change adds 1 to an item's v, so an item's records carry v = 1, 2, 3, ...
add() {  # item expression: an UpdateItem adding 1 to v
    echo "SELECT ddb.execute('UpdateItem', jsonb_build_object('TableName', 'Conc', 'Key', jsonb_build_object('pk', jsonb_build_object('S', 'item' || $1)),
            'UpdateExpression', 'ADD v :one', 'ExpressionAttributeValues', '{\":one\": {\"N\": \"1\"}}'::jsonb));"
}
{ echo '\set i random(0, 19)'; add :i; } >"$WORK/single.sql"
{ echo '\set i random(0, 19)'; echo '\set j random(20, 29)'; echo "BEGIN;"; add :i; add :j; echo "COMMIT;"; } >"$WORK/pair.sql"
{
    echo '\set i random(0, 29)'
    echo '\set j random(0, 29)'
    echo "BEGIN ISOLATION LEVEL SERIALIZABLE;"
    echo "SELECT ddb.execute('GetItem', jsonb_build_object('TableName', 'Conc', 'Key', jsonb_build_object('pk', jsonb_build_object('S', 'item' || :j))));"
    add :i
    echo "COMMIT;"
} >"$WORK/serializable.sql"

rc_it=$(q -c "SELECT shard_iterator('TRIM_HORIZON')")
q -c "CALL follow('rc', '$rc_it', 7, 0)" >"$WORK/rc.out" 2>&1 &
rc_pid=$!
q -c "SET default_transaction_isolation = 'repeatable read'" -c "CALL follow('rr', '$rc_it', 20, 0.01)" >"$WORK/rr.out" 2>&1 &
rr_pid=$!
pgbench -n -c 4 -j 2 -T "$SECONDS_OF_WRITES" --max-tries=1000 --failures-detailed \
    -f "$WORK/single.sql@4" -f "$WORK/pair.sql@2" -f "$WORK/serializable.sql@2" "$DB" >"$WORK/pgbench.out" 2>&1 &
writers=$!
sleep 2
latest_it=$(q -c "SELECT shard_iterator('LATEST')")
q -c "CALL follow('latest', '$latest_it', 100, 0)" >"$WORK/latest.out" 2>&1 &
latest_pid=$!
wait "$writers"
check "the writers ran without an error" "0" "$?"
diag "$(grep -E '^(number of transactions actually processed|number of transactions retried|total number of retries|number of failed|tps)' "$WORK/pgbench.out")"
q -c "INSERT INTO writers_done VALUES (now())"
wait "$rc_pid"; check "the READ COMMITTED reader followed to the end" "0" "$?"
wait "$rr_pid"; check "the REPEATABLE READ reader too" "0" "$?"
wait "$latest_pid"; check "the LATEST reader too" "0" "$?"
cat "$WORK/rc.out" "$WORK/rr.out" "$WORK/latest.out" | diag

changes=$(q -c "SELECT sum((item ->> 'v')::int) FROM public.\"Conc\"")
diag "$changes committed changes; pages read: $(q -c "SELECT string_agg(reader || ' ' || pages, ', ') FROM (SELECT reader, max(p) AS pages FROM followed GROUP BY reader) x")"
check "every committed change has its record in the stream" "$changes" \
    "$(q -c "SELECT count(*) FROM ddb.stream_records WHERE table_name = 'Conc'")"
check "the reader read every record, once" "$changes|$changes" \
    "$(q -c "SELECT count(*), count(DISTINCT seq) FROM followed WHERE reader = 'rc'")"
check "and exactly the records of the stream" "0" \
    "$(q -c "SELECT count(*) FROM ((SELECT seq FROM followed WHERE reader = 'rc' EXCEPT SELECT sequence_number FROM ddb.stream_records)
                               UNION ALL (SELECT sequence_number FROM ddb.stream_records EXCEPT SELECT seq FROM followed WHERE reader = 'rc')) x")"
check "sequence numbers increase along the shard" "t" \
    "$(q -c "SELECT bool_and(seq > previous) FROM (SELECT seq, lag(seq) OVER (ORDER BY p, k) AS previous FROM followed WHERE reader = 'rc') x")"
check "an item's records come in the order of its changes (v = 1, 2, 3, ...)" "0" \
    "$(q -c "SELECT count(*) FROM (SELECT v, row_number() OVER (PARTITION BY pk ORDER BY p, k) AS n FROM followed WHERE reader = 'rc') x WHERE v <> n")"
diag "sequence numbers given out to writers that then failed (gaps): $(q -c "SELECT max(seq) - min(seq) + 1 - count(*) FROM followed WHERE reader = 'rc'")"
check "the REPEATABLE READ reader read the same records in the same order" "t" \
    "$(q -c "SELECT (SELECT array_agg(seq ORDER BY p, k) FROM followed WHERE reader = 'rr') = (SELECT array_agg(seq ORDER BY p, k) FROM followed WHERE reader = 'rc')")"
check "the LATEST reader, from the middle of the writes, read every record after its first" "t" \
    "$(q -c "SELECT count(*) > 0 AND array_agg(seq ORDER BY p, k) = (SELECT array_agg(seq ORDER BY p, k) FROM followed
              WHERE reader = 'rc' AND seq >= (SELECT min(seq) FROM followed WHERE reader = 'latest')) FROM followed WHERE reader = 'latest'")"

# A prepared writer's record is numbered and in the index, its commit to come: a reader gets what
# is before it at once and stops there; GetShardIterator LATEST waits for it, as for any writer
# committing; once it commits, the reader's NextShardIterator finds it, then what came after.
after=$(q -c "SELECT max(seq) FROM followed WHERE reader = 'rc'")
put() {  # item
    echo "SELECT ddb.execute('PutItem', '{\"TableName\": \"Conc\", \"Item\": {\"pk\": {\"S\": \"$1\"}}}')"
}
q -c "BEGIN" -c "$(put held)" -c "PREPARE TRANSACTION 'streams_concurrency_held'" >/dev/null
q -c "$(put after)" >/dev/null
it=$(q -c "SELECT ddb.stream_iterator('Conc', stream_label, $after) FROM ddb.tables WHERE table_name = 'Conc'")
page=$(q -c "SET statement_timeout = '2s'" -c "SELECT ddb.execute('GetRecords', '{\"ShardIterator\": \"$it\"}')" 2>&1)
check "a reader is not held up by a prepared writer, and stops before its record" "[]" \
    "$(q -c "SELECT '$page'::jsonb -> 'Records'" 2>&1)"
check "GetShardIterator LATEST waits for the prepared writer" "57014" \
    "$(q -v VERBOSITY=sqlstate -c "SET statement_timeout = '1s'" -c "SELECT shard_iterator('LATEST')" 2>&1 | sed -n 's/^.*ERROR:  //p')"
q -c "COMMIT PREPARED 'streams_concurrency_held'"
check "once it commits, the reader's next iterator finds its record, then the later one" "held,after" \
    "$(q -c "SELECT string_agg(r -> 'dynamodb' -> 'Keys' -> 'pk' ->> 'S', ',') FROM jsonb_array_elements(
              ddb.execute('GetRecords', jsonb_build_object('ShardIterator', '$page'::jsonb ->> 'NextShardIterator')) -> 'Records') r")"

# A role that may read the table, not write it, can make no record and so hold back no reader; the
# stream's locks are the server's (objsubid 3): its pg_advisory_* locks on their classes and the
# table's key (objsubid 1 and 2) stall no writer and no reader.
q -c "GRANT SELECT ON public.\"Conc\" TO $PLAIN" >/dev/null
check "the reading role cannot write the table" "YD010" \
    "$(q -v VERBOSITY=sqlstate -c "SET ROLE $PLAIN" -c "$(put mine)" 2>&1 | sed -n 's/^.*ERROR:  //p')"
{
    echo "SET ROLE $PLAIN;"
    echo "BEGIN;"
    for class in 1 14; do
        echo "SELECT pg_advisory_xact_lock($class, hashtext('Conc'));"
        echo "SELECT pg_advisory_xact_lock($class::bigint << 32 | hashtext('Conc')::bigint & 4294967295);"
    done
    echo "SELECT pg_sleep(3);"
    echo "COMMIT;"
} | q >"$WORK/hold.out" 2>&1 &
held=$!
sleep 0.5
check "its locks stall no writer" "" "$(q -c "SET lock_timeout = '2s'" -c "$(put during)" 2>&1 | grep ERROR)"
check "and no reader (GetRecords, LATEST)" "t" \
    "$(q -c "SET statement_timeout = '2s'" -c "SELECT jsonb_array_length(ddb.execute('GetRecords', jsonb_build_object('ShardIterator', '$page'::jsonb ->> 'NextShardIterator')) -> 'Records') > 0
                                               AND shard_iterator('LATEST') IS NOT NULL" 2>&1)"
wait "$held"
label=$(q -c "SELECT stream_label FROM ddb.tables WHERE table_name = 'Conc'")
check "ddb.stream_horizon is for a role that may read the table" "YD010" \
    "$(q -v VERBOSITY=sqlstate -c "REVOKE SELECT ON public.\"Conc\" FROM $PLAIN" -c "SET ROLE $PLAIN" \
         -c "SELECT ddb.stream_horizon('Conc', '$label', 0, 10)" 2>&1 | sed -n 's/^.*ERROR:  //p')"

drop_db "$DB"
psql -X -q -d postgres -c "DROP ROLE $PLAIN"
done_testing
