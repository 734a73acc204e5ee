#!/usr/bin/env bash
# Transactions across the shard nodes of a router (ddb_router,
# docs/scale-out.md "Transactions across shards"): a router database and two
# node databases in the test cluster.  TransactWriteItems, ExecuteTransaction
# and table changes with two-phase commit, TransactGetItems under claims; the
# router's backend ended between prepare and commit (the test hook
# ddb_router.failpoint) and ddb_router.recover_in_doubt(); concurrent
# transactions on the same items of both nodes.  The checks look at the
# nodes directly.  Runs against the cluster of tools/test.sh
# (PGHOST/PGPORT/PGUSER set); prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir router_transactions
ROUTER=ddb_2pc_r
DB=$ROUTER
NODES=(ddb_2pc_n0 ddb_2pc_n1)
RACE_SECONDS=${RACE_SECONDS:-3}
# the router's notices (PL/Proxy's "dropping stale conn") are no part of the checks
export PGOPTIONS="-c client_min_messages=warning"

# call OPERATION REQUEST [EXPRESSION]: EXPRESSION of r, the router's outcome: {"ok": response} or
# {"sqlstate", "message", "body"} (public.try below)
call() { q -c "SELECT ${3:-r} FROM public.try('$1', \$r\$$2\$r\$) r"; }
# on_nodes SQL: the answer of each node, joined by "+"
on_nodes() { echo "$(q -d "${NODES[0]}" -c "$1")+$(q -d "${NODES[1]}" -c "$1")"; }
# n KEY: the attribute n of item KEY of table Acct on whichever node holds it, or "none"
n() { echo "$(on_nodes "SELECT coalesce((SELECT item->>'n' FROM public.\"Acct\" WHERE pk = '$1'), 'none')")" |
      tr '+' '\n' | grep -v '^none$' | paste -sd+ | sed 's/^$/none/'; }
# prepared: the prepared parts of this router's transactions in the cluster (nodes' and router's)
prepared() { q -c "SELECT count(*) FROM pg_prepared_xacts WHERE starts_with(gid, ddb_router.gid_prefix())"; }
# drop: the three databases, their prepared transactions rolled back first
drop() {
    local db gid
    for db in "$ROUTER" "${NODES[@]}"; do
        for gid in $(psql -X -q -At -d postgres -c "SELECT gid FROM pg_prepared_xacts WHERE database = '$db'"); do
            psql -X -q -d "$db" -c "ROLLBACK PREPARED '$gid'" >/dev/null
        done
        drop_db "$db"
    done
    psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS ddb_2pc_plain"
}

drop
fresh_router "$ROUTER" "${NODES[@]}"
q >/dev/null <<'SQL'
-- The outcome of a request through the router: {"ok": response}, or its error.
CREATE FUNCTION public.try(operation text, request jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    s text; m text; d text;
BEGIN
    RETURN jsonb_build_object('ok', ddb_router.answer_response(ddb_router.execute_metered(NULL, operation, request)));
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
    RETURN jsonb_build_object('sqlstate', s, 'message', m, 'body', CASE WHEN d LIKE '{%' THEN d::jsonb END);
END $$;
-- The first keys k1, k2, ... whose partition the node holds.
CREATE FUNCTION public.keys_on(node text, count integer) RETURNS SETOF text LANGUAGE sql AS $$
    SELECT 'k' || i FROM generate_series(1, 1000) i
    WHERE ddb_router.node_of(ddb.ddb_key_route_hash(ddb.ddb_key('k' || i))) = node ORDER BY i LIMIT count
$$;
SQL
read -r -a on0 <<<"$(q -c "SELECT string_agg(k, ' ') FROM public.keys_on('n0', 8) k")"
read -r -a on1 <<<"$(q -c "SELECT string_agg(k, ' ') FROM public.keys_on('n1', 8) k")"
# put KEY N: a Put of item KEY with n = N.  add KEY DELTA [MIN [MEMBER]]: an Update adding DELTA
# to n, under the condition n > MIN when given, with one more member of the action
put() { printf '{"Put": {"TableName": "Acct", "Item": {"pk": {"S": "%s"}, "n": {"N": "%s"}}}}' "$1" "$2"; }
add() {
    local values="\":d\": {\"N\": \"$2\"}" condition=""
    if [ -n "${3:-}" ]; then
        values="$values, \":min\": {\"N\": \"$3\"}"
        condition=', "ConditionExpression": "n > :min"'
    fi
    printf '{"Update": {"TableName": "Acct", "Key": {"pk": {"S": "%s"}}, "UpdateExpression": "ADD n :d", "ExpressionAttributeValues": {%s}%s%s}}' \
        "$1" "$values" "$condition" "${4:+, $4}"
}

# --- Table changes: every catalog or none ---------------------------------
check "CreateTable commits in the router's catalog and on both nodes" "ok|1|1+1" \
    "$(call CreateTable '{"TableName": "Acct", "BillingMode": "PAY_PER_REQUEST",
         "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}' \
         "CASE WHEN r ? 'ok' THEN 'ok' ELSE r::text END")|$(q -c "SELECT count(*) FROM ddb.tables WHERE table_name = 'Acct'")|$(on_nodes "SELECT count(*) FROM ddb.tables WHERE table_name = 'Acct'")"
q -d "${NODES[1]}" -c "SELECT ddb.create_table('Clash', 'pk')" >/dev/null
check "a CreateTable that the second node refuses answers the node's error" "YD005|ResourceInUseException" \
    "$(call CreateTable '{"TableName": "Clash", "BillingMode": "PAY_PER_REQUEST",
         "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}' \
         "concat(r->>'sqlstate', '|', split_part(r->'body'->>'__type', '#', 2))")"
check "and leaves the router's catalog and the first node unchanged" "0|0+1" \
    "$(q -c "SELECT count(*) FROM ddb.tables WHERE table_name = 'Clash'")|$(on_nodes "SELECT count(*) FROM ddb.tables WHERE table_name = 'Clash'")"
check "a table change leaves nothing prepared and no decision behind" "0|0" "$(prepared)|$(q -c "SELECT count(*) FROM ddb_router.in_doubt")"

# --- TransactWriteItems across nodes --------------------------------------
a=${on0[0]}; b=${on1[0]}; a2=${on0[1]}; a3=${on0[4]}
check "TransactWriteItems over both nodes commits each item on its node" "ok|1+0|0+1" \
    "$(call TransactWriteItems "{\"TransactItems\": [$(put "$a" 10), $(put "$b" 10)]}" "CASE WHEN r ? 'ok' THEN 'ok' ELSE r::text END")|$(on_nodes "SELECT count(*) FROM public.\"Acct\" WHERE pk = '$a'")|$(on_nodes "SELECT count(*) FROM public.\"Acct\" WHERE pk = '$b'")"
across=$(q -c "SELECT ddb_router.execute_metered(NULL, 'TransactWriteItems', '{\"ReturnConsumedCapacity\": \"TOTAL\", \"TransactItems\": [$(add "$a" 0), $(add "$b" 0)]}')" | paste -sd'|')
single=$(q -d "${NODES[0]}" -c "SELECT ddb.execute_metered(NULL, 'TransactWriteItems', '{\"ReturnConsumedCapacity\": \"TOTAL\", \"TransactItems\": [$(add "$a" 0), $(add "$a3" 0)]}')" | paste -sd'|')
check "its capacity (the first line and ConsumedCapacity) is what one node answers for as many items" "$single" "$across"

cancel="{\"TransactItems\": [$(add "$a" -1 0), $(add "$b" -1 99 '"ReturnValuesOnConditionCheckFailure": "ALL_OLD"'), $(put "$a2" 1)]}"
check "a part cancelled on the second node cancels the whole: reasons at their places, the Item kept" \
    'YD003|Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed, None]|[{"Code": "None"}, {"Code": "ConditionalCheckFailed", "Item": {"n": {"N": "10"}, "pk": {"S": "'"$b"'"}}, "Message": "The conditional request failed"}, {"Code": "None"}]' \
    "$(call TransactWriteItems "$cancel" "concat(r->>'sqlstate', '|', r->>'message', '|', r->'body'->'CancellationReasons')")"
check "and the first node's part, prepared, was rolled back" "10|none" "$(n "$a")|$(n "$a2")"
check "a part cancelled on the first node: the second never ran" "[{\"Code\": \"None\"}, {\"Code\": \"ConditionalCheckFailed\", \"Message\": \"The conditional request failed\"}]|10" \
    "$(call TransactWriteItems "{\"TransactItems\": [$(add "$b" 5), $(add "$a" -1 99)]}" "r->'body'->>'CancellationReasons'")|$(n "$b")"
bad="{\"TransactItems\": [$(add "$a" 1), {\"Update\": {\"TableName\": \"Acct\", \"Key\": {\"pk\": {\"S\": \"$b\"}}, \"UpdateExpression\": \"ADD n\"}}]}"
check "a malformed expression on one node is the request's ValidationException, as a node raises it" \
    "$(q -d "${NODES[1]}" -c "DO \$d\$ BEGIN PERFORM ddb.execute_metered(NULL, 'TransactWriteItems', \$r\$$bad\$r\$);
        EXCEPTION WHEN OTHERS THEN RAISE WARNING '%|%', SQLSTATE, SQLERRM; END \$d\$" 2>&1 | sed 's/^WARNING:  //')" \
    "$(call TransactWriteItems "$bad" "concat(r->>'sqlstate', '|', r->>'message')")"
check "and nothing was written" "10|10" "$(n "$a")|$(n "$b")"

token="{\"ClientRequestToken\": \"visit-1\", \"TransactItems\": [$(add "$a" 1), $(add "$b" 1)]}"
call TransactWriteItems "$token" >/dev/null
check "a ClientRequestToken's request again is not applied again, and answers {}" '{"ok": {}}|11|11' \
    "$(call TransactWriteItems "$token")|$(n "$a")|$(n "$b")"
check "another request under the token is IdempotentParameterMismatchException" "YD008|IdempotentParameterMismatchException|11" \
    "$(call TransactWriteItems "{\"ClientRequestToken\": \"visit-1\", \"TransactItems\": [$(add "$a" 2), $(add "$b" 2)]}" \
       "concat(r->>'sqlstate', '|', split_part(r->'body'->>'__type', '#', 2))")|$(n "$a")"
check "ExecuteTransaction over both nodes commits every statement" "ok|12|12" \
    "$(call ExecuteTransaction "{\"TransactStatements\": [{\"Statement\": \"UPDATE Acct SET n = n + 1 WHERE pk = '$a'\"}, {\"Statement\": \"UPDATE Acct SET n = n + 1 WHERE pk = '$b'\"}]}" \
       "CASE WHEN r ? 'ok' THEN 'ok' ELSE r::text END")|$(n "$a")|$(n "$b")"

q -c "UPDATE ddb_router.nodes SET connstr = '$(node_dsn "${NODES[1]}" | sed 's/port=[0-9]*/port=1/')' WHERE node_name = 'n1'"
check "a node that cannot be reached is ServiceUnavailable" "YD013|ServiceUnavailable" \
    "$(call TransactWriteItems "{\"TransactItems\": [$(add "$a" 1), $(add "$b" 1)]}" "concat(r->>'sqlstate', '|', split_part(r->'body'->>'__type', '#', 2))")"
q -c "UPDATE ddb_router.nodes SET connstr = '$(node_dsn "${NODES[1]}")' WHERE node_name = 'n1'"
check "and the part the other node had prepared was rolled back" "12|0|0" "$(n "$a")|$(prepared)|$(q -c "SELECT count(*) FROM ddb_router.in_doubt")"

# --- TransactGetItems across nodes ----------------------------------------
get() { printf '{"Get": {"TableName": "Acct", "Key": {"pk": {"S": "%s"}}}}' "$1"; }
check "TransactGetItems over both nodes answers every item in order" "$b:12 none $a:12" \
    "$(call TransactGetItems "{\"TransactItems\": [$(get "$b"), $(get "${on1[7]}"), $(get "$a")]}" \
       "(SELECT string_agg(coalesce((x->'Item'->'pk'->>'S') || ':' || (x->'Item'->'n'->>'N'), 'none'), ' ') FROM jsonb_array_elements(r->'ok'->'Responses') x)")"
check "an ExecuteTransaction of SELECTs over both nodes too" "12 12" \
    "$(call ExecuteTransaction "{\"TransactStatements\": [{\"Statement\": \"SELECT n FROM Acct WHERE pk = '$a'\"}, {\"Statement\": \"SELECT n FROM Acct WHERE pk = '$b'\"}]}" \
       "coalesce((SELECT string_agg(x->'Item'->'n'->>'N', ' ') FROM jsonb_array_elements(r->'ok'->'Responses') x), r::text)")"

# --- The router's backend ends between prepare and commit -----------------
# recover: ddb_router.recover_in_doubt() until no part of this router's is prepared (the ended
# backend's transaction may still be ending), its rows as "node:action" sorted
recover() {
    local rows="" i
    for i in $(seq 50); do
        rows="$rows$(q -c "SELECT node_name || ':' || action FROM ddb_router.recover_in_doubt()")"$'\n'
        [ "$(prepared)" = 0 ] && break
        sleep 0.1
    done
    echo "$rows" | grep -v -e '^$' -e 'left: its router transaction is running' | LC_ALL=C sort | paste -sd,
}
x=${on0[2]}; y=${on1[2]}
psql -X -q -d "$ROUTER" -c "SET ddb_router.failpoint = 'after_prepare'" \
    -c "SELECT ddb_router.execute_metered(NULL, 'TransactWriteItems', '{\"TransactItems\": [$(put "$x" 1), $(put "$y" 1)]}')" >"$WORK/after_prepare.out" 2>&1
check "ddb_router.failpoint after_prepare ends the router's backend" "1" "$(grep -c 'FATAL:  ddb_router.failpoint "after_prepare"' "$WORK/after_prepare.out")"
check "every part stays prepared (both nodes' and the router's), nothing visible" "3|none|none" "$(prepared)|$(n "$x")|$(n "$y")"
check "a TransactGetItems of those items is cancelled: the prepared parts hold them" \
    '[{"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}, {"Code": "None"}]' \
    "$(call TransactGetItems "{\"TransactItems\": [$(get "$y"), $(get "$a")]}" "r->'body'->>'CancellationReasons'")"
check "a PutItem of one of them is TransactionConflictException" "YD012" \
    "$(call PutItem "{\"TableName\": \"Acct\", \"Item\": {\"pk\": {\"S\": \"$x\"}}}" "r->>'sqlstate'")"
check "recover_in_doubt rolls back every part of the undecided transaction" "@router:rolled back,n0:rolled back,n1:rolled back" "$(recover)"
check "nothing prepared is left, nothing was written" "0|none|none" "$(prepared)|$(n "$x")|$(n "$y")"

psql -X -q -d "$ROUTER" -c "SET ddb_router.failpoint = 'after_decision'" \
    -c "SELECT ddb_router.execute_metered(NULL, 'TransactWriteItems', '{\"TransactItems\": [$(put "$x" 2), $(put "$y" 2)]}')" >"$WORK/after_decision.out" 2>&1
check "ddb_router.failpoint after_decision ends the router's backend" "1" "$(grep -c 'FATAL:  ddb_router.failpoint "after_decision"' "$WORK/after_decision.out")"
check "the nodes' parts stay prepared, the decision recorded, nothing visible yet" "2|2|none|none" \
    "$(prepared)|$(q -c "SELECT count(*) FROM ddb_router.in_doubt")|$(n "$x")|$(n "$y")"
check "recover_in_doubt commits every part of the decided transaction and deletes its decision" \
    "n0:committed,n0:decision deleted,n1:committed,n1:decision deleted" "$(recover)"
check "both items are there, nothing prepared and no decision is left" "2|2|0|0" \
    "$(n "$x")|$(n "$y")|$(prepared)|$(q -c "SELECT count(*) FROM ddb_router.in_doubt")"
later_table='{"TableName": "Later", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
         "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}'
# later POINT: a CreateTable of Later whose router ends at POINT, recovered; where Later is then
later() {
    psql -X -q -d "$ROUTER" -c "SET ddb_router.failpoint = '$1'" \
        -c "SELECT ddb_router.execute_metered(NULL, 'CreateTable', '$later_table')" >"$WORK/table_$1.out" 2>&1
    recover >/dev/null
    echo "$(q -c "SELECT count(*) FROM ddb.tables WHERE table_name = 'Later'")|$(on_nodes "SELECT count(*) FROM ddb.tables WHERE table_name = 'Later'")|$(prepared)"
}
check "a CreateTable whose router ended before the decision is nowhere after recovery" "0|0+0|0" "$(later after_prepare)"
check "one whose router ended after it is everywhere after recovery" "1|1+1|0" "$(later after_decision)"
q -c "CREATE ROLE ddb_2pc_plain"
check "only a superuser sets ddb_router.failpoint" "1" \
    "$(psql -X -q -d "$ROUTER" -c "LOAD 'ddb_router'" -c "SET ROLE ddb_2pc_plain" -c "SET ddb_router.failpoint = 'after_prepare'" 2>&1 |
       grep -c 'permission denied to set parameter "ddb_router.failpoint"')"

# --- Races: transactions on the same items of both nodes ------------------
q >/dev/null <<'SQL'
CREATE TABLE public.outcomes (kind text);
CREATE TABLE public.reads (c integer, d integer);
-- A TransactWriteItems through the router, its outcome recorded: ok, ConditionalCheckFailed,
-- TransactionConflict (a claim held by the other), or other.
CREATE FUNCTION public.attempt(request jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r jsonb := public.try('TransactWriteItems', request);
    kind text := CASE WHEN r ? 'ok' THEN 'ok'
                      WHEN r->>'sqlstate' = 'YD003' AND r->'body'->'CancellationReasons' @> '[{"Code": "TransactionConflict"}]' THEN 'conflict'
                      WHEN r->>'sqlstate' = 'YD003' AND r->'body'->'CancellationReasons' @> '[{"Code": "ConditionalCheckFailed"}]' THEN 'failed'
                      ELSE 'other ' || r::text END;
BEGIN
    INSERT INTO public.outcomes VALUES (kind);
    RETURN kind;
END $$;
-- A TransactGetItems of both counters through the router, what it read recorded.
CREATE FUNCTION public.read_both(request jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    r jsonb := public.try('TransactGetItems', request);
BEGIN
    IF r ? 'ok' THEN
        INSERT INTO public.reads VALUES ((r->'ok'->'Responses'->0->'Item'->'n'->>'N')::integer,
                                         (r->'ok'->'Responses'->1->'Item'->'n'->>'N')::integer);
    ELSIF NOT (r->>'sqlstate' = 'YD003' AND r->'body'->'CancellationReasons' @> '[{"Code": "TransactionConflict"}]') THEN
        INSERT INTO public.outcomes VALUES ('other read ' || r::text);
    END IF;
END $$;
SQL
c=${on0[3]}; d=${on1[3]}
take="{\"TransactItems\": [$(add "$c" -1 0), $(add "$d" -1 0)]}"
# Two sessions at once, each retrying while cancelled by the other's claim: of two
# decrements of counters at 1, exactly one succeeds; five rounds.
rounds=""
for round in 1 2 3 4 5; do
    call TransactWriteItems "{\"TransactItems\": [$(put "$c" 1), $(put "$d" 1)]}" >/dev/null
    for s in 1 2; do
        q -c "DO \$\$ BEGIN FOR i IN 1 .. 500 LOOP EXIT WHEN public.attempt('$take') <> 'conflict'; END LOOP; END \$\$" &
    done
    wait
    rounds="$rounds${rounds:+ }$(n "$c")/$(n "$d")"
done
check "two sessions decrementing counters at 1 on both nodes: one succeeds each round, never both" \
    "5|5|0|0/0 0/0 0/0 0/0 0/0" \
    "$(q -c "SELECT count(*) FILTER (WHERE kind = 'ok') || '|' || count(*) FILTER (WHERE kind = 'failed') || '|' ||
             count(*) FILTER (WHERE kind LIKE 'other%') FROM public.outcomes")|$rounds" 
q -c "TRUNCATE public.outcomes"

# pgbench clients for a few seconds: decrements of both counters (from 20, never below 0) and
# reads of both, which must always find them equal.
call TransactWriteItems "{\"TransactItems\": [$(put "$c" 20), $(put "$d" 20)]}" >/dev/null
echo "SELECT public.attempt('$take');" >"$WORK/take.sql"
echo "SELECT public.read_both('{\"TransactItems\": [$(get "$c"), $(get "$d")]}');" >"$WORK/read.sql"
pgbench -n -c 4 -j 2 -T "$RACE_SECONDS" -f "$WORK/take.sql@3" -f "$WORK/read.sql@1" "$ROUTER" >"$WORK/pgbench.out" 2>&1
check "pgbench ran to its end without a failed client" "0" "$?"
ok=$(q -c "SELECT count(*) FROM public.outcomes WHERE kind = 'ok'")
check "no outcome but ok, ConditionalCheckFailed or TransactionConflict" "" "$(q -c "SELECT kind FROM public.outcomes WHERE kind LIKE 'other%' LIMIT 3")"
check "both counters lost no update: each is 20 less the decrements that committed, never below 0" \
    "$((20 - ok))+$((20 - ok)) yes" "$(n "$c")+$(n "$d") $([ "$ok" -ge 1 ] && [ "$ok" -le 20 ] && echo yes)"
check "every TransactGetItems across the nodes read both counters equal" "0 yes" \
    "$(q -c "SELECT count(*) FROM public.reads WHERE c IS DISTINCT FROM d") $([ "$(q -c "SELECT count(*) FROM public.reads")" -ge 1 ] && echo yes)"
check "no part prepared and no decision left behind" "0|0" "$(prepared)|$(q -c "SELECT count(*) FROM ddb_router.in_doubt")"
echo "outcomes in $RACE_SECONDS s: $(q -c "SELECT kind || ' ' || count(*) FROM public.outcomes GROUP BY kind ORDER BY kind" | paste -sd,), reads $(q -c "SELECT count(*) FROM public.reads")"

call DeleteTable '{"TableName": "Acct"}' >/dev/null
check "DeleteTable removes the table from the router and both nodes" "0|0+0" \
    "$(q -c "SELECT count(*) FROM ddb.tables WHERE table_name = 'Acct'")|$(on_nodes "SELECT count(*) FROM ddb.tables WHERE table_name = 'Acct'")"

drop
done_testing
