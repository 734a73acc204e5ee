#!/usr/bin/env bash
# Transactions under contention (docs/transactions.md): a TransactWriteItems
# claims its items without waiting, so one that meets another in flight is
# cancelled with a TransactionConflict reason and a single write that meets
# one fails with TransactionConflictException; nothing ever deadlocks.
# First deterministically (one session holds its transaction open), then 8
# pgbench clients writing two items in opposite orders for a few seconds.
# Runs against the cluster of tools/test.sh; prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir contention
DB=ddb_contention
SECONDS_PER_RUN=${CONTENTION_SECONDS:-4}

fresh_db --extension "$DB"
q -c "SELECT ddb.create_table('Counters', 'pk')" \
  -c "SELECT ddb.put_item('Counters', '{\"pk\": \"a\", \"n\": 0, \"s\": 0}')" \
  -c "SELECT ddb.put_item('Counters', '{\"pk\": \"b\", \"n\": 0, \"s\": 0}')" >/dev/null

add() {  # the Update action that adds 1 to n of item $1
    printf '{"Update": {"TableName": "Counters", "Key": {"pk": {"S": "%s"}}, "UpdateExpression": "ADD n :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}}' "$1"
}
both_ab="{\"TransactItems\": [$(add a), $(add b)]}"
both_ba="{\"TransactItems\": [$(add b), $(add a)]}"
single_a='{"TableName": "Counters", "Key": {"pk": {"S": "a"}}, "UpdateExpression": "ADD s :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}'

# Session A's transaction holds a and b; B's transaction on them, and B's
# single write to a, come while it is open: neither waits.
{
    echo "BEGIN;"
    echo "SELECT ddb.execute('TransactWriteItems', '$both_ab');"
    echo "SELECT pg_sleep(2);"
    echo "COMMIT;"
} | q >"$WORK/holder.out" 2>&1 &
holder=$!
sleep 0.5
started=$(date +%s%N)
psql -X -q -At -d "$DB" -c "SELECT ddb.execute('TransactWriteItems', '$both_ba')" >"$WORK/txn.out" 2>&1
psql -X -q -At -d "$DB" -c "SELECT ddb.execute('UpdateItem', '$single_a')" >"$WORK/single.out" 2>&1
waited_ms=$(( ($(date +%s%N) - started) / 1000000 ))
wait "$holder"
check "a transaction meeting one in flight is cancelled with TransactionConflict reasons" "yes" \
    "$(grep -q 'TransactionCanceledException.*"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"' "$WORK/txn.out" && echo yes)"
check "a single write meeting one in flight is TransactionConflictException" "yes" \
    "$(grep -q 'TransactionConflictException' "$WORK/single.out" && echo yes)"
check "neither waited for the transaction in flight" "yes" "$([ "$waited_ms" -lt 1200 ] && echo yes)"
check "the transaction in flight committed" "1 1" "$(q -c "SELECT string_agg(item->>'n', ' ' ORDER BY pk) FROM public.\"Counters\"")"

# A plain SQL writer (no claim) holds b's row and then waits for a, which a
# transaction has written while it waits for b: PostgreSQL breaks the
# deadlock in the transaction that waited first, and that action is a
# TransactionConflict reason, not an error of its own.
{
    echo "BEGIN;"
    echo "UPDATE public.\"Counters\" SET item = item WHERE pk = 'b';"
    echo "SELECT pg_sleep(1);"
    echo "UPDATE public.\"Counters\" SET item = item WHERE pk = 'a';"
    echo "COMMIT;"
} | q >"$WORK/sql-writer.out" 2>&1 &
writer=$!
sleep 0.3
psql -X -q -At -d "$DB" -c "SELECT ddb.execute('TransactWriteItems', '$both_ab')" >"$WORK/deadlocked.out" 2>&1
wait "$writer"
check "a deadlock inside an action is a TransactionConflict reason" "yes" \
    "$(grep -q 'TransactionCanceledException.*"Code": "TransactionConflict"' "$WORK/deadlocked.out" && echo yes)"
check "and the SQL writer went on" "0" "$(grep -c ERROR "$WORK/sql-writer.out")"

# 8 clients: transactions adding 1 to a and b in opposite orders, and
# single writes adding 1 to s of a.  Every outcome is recorded; none may be
# an error of another kind, and the counters must equal what committed.
q <<'SQL' >/dev/null
CREATE TABLE outcomes (kind text);
CREATE FUNCTION attempt(operation text, request jsonb, ok text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  body text;
BEGIN
  PERFORM ddb.execute(operation, request);
  INSERT INTO outcomes VALUES (ok);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS body = PG_EXCEPTION_DETAIL;
  INSERT INTO outcomes VALUES (CASE
    WHEN SQLSTATE = 'YD003' AND body::jsonb -> 'CancellationReasons' @> '[{"Code": "TransactionConflict"}]' THEN 'cancelled'
    WHEN SQLSTATE = 'YD012' THEN 'conflict'
    ELSE 'other ' || SQLSTATE || ' ' || SQLERRM END);
END $$;
SQL
for order in ab ba; do
    body=$([ "$order" = ab ] && echo "$both_ab" || echo "$both_ba")
    printf "SELECT attempt('TransactWriteItems', '%s', 'committed');\n" "$body" >"$WORK/txn_$order.sql"
done
printf "SELECT attempt('UpdateItem', '%s', 'single');\n" "$single_a" >"$WORK/single.sql"
pgbench -n -c 8 -j 2 -T "$SECONDS_PER_RUN" -f "$WORK/txn_ab.sql@4" -f "$WORK/txn_ba.sql@4" -f "$WORK/single.sql@1" \
    "$DB" >"$WORK/pgbench.out" 2>&1
check "pgbench ran to its end without a failed client" "0" "$?"
q -c "SELECT kind, count(*) FROM outcomes GROUP BY kind ORDER BY kind" >"$WORK/outcomes.out"
check "no error of another kind (no deadlock, no 500)" "0" "$(q -c "SELECT count(*) FROM outcomes WHERE kind LIKE 'other%'")"
committed=$(q -c "SELECT count(*) FROM outcomes WHERE kind = 'committed'")
check "transactions committed under contention" "yes" "$([ "$committed" -gt 0 ] && echo yes)"
check "a and b each counted every committed transaction" "$((committed + 1)) $((committed + 1))" \
    "$(q -c "SELECT string_agg(item->>'n', ' ' ORDER BY pk) FROM public.\"Counters\"")"
check "a's single writes counted every one that succeeded" "$(q -c "SELECT count(*) FROM outcomes WHERE kind = 'single'")" \
    "$(q -c "SELECT item->>'s' FROM public.\"Counters\" WHERE pk = 'a'")"
echo "outcomes in $SECONDS_PER_RUN s: $(tr '\n|' ', ' <"$WORK/outcomes.out")"

drop_db "$DB"
done_testing
