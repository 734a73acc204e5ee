#!/usr/bin/env bash
# Moving a partition of a sharded deployment (ddb_router, docs/scale-out.md,
# "Moving a partition"): a router and three node databases in the test
# cluster.  A partition moves to the third node while a background session
# keeps writing through the router (retrying the ServiceUnavailable it gets
# meanwhile): no acknowledged write is lost, the items and their GSI and LSI
# entries are on the target and gone from the source, the table was made on
# the target from the router's catalog.  Also: bad input refused, a move
# that fails while copying undone, a move whose session ended recovered.
# Runs against the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set);
# prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir router-move
exec > >(tee "$WORK/test.log") 2>&1
ROUTER=ddb_move_r
DB=$ROUTER
NODES=(ddb_move_n0 ddb_move_n1 ddb_move_n2)
PLAIN=ddb_move_plain

# fails SQL: "SQLSTATE: message" of the error SQL raises on the router, or "no error"
fails() {
    local out
    out=$(psql -X -q -At -v VERBOSITY=verbose -d "$ROUTER" -c "$1" 2>&1 >/dev/null | grep -m1 '^ERROR:' | sed 's/^ERROR:  //')
    echo "${out:-no error}"
}
# put_error TABLE ITEM: "SQLSTATE|__type" of PutItem's error through the router, or "no error"
put_error() {
    q -c "DO \$d\$ BEGIN PERFORM ddb_router.execute_metered(NULL, 'PutItem', jsonb_build_object('TableName', '$1', 'Item', '$2'::jsonb));
          RAISE NOTICE 'no error';
          EXCEPTION WHEN OTHERS THEN DECLARE s text; d text;
          BEGIN GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, d = PG_EXCEPTION_DETAIL;
                RAISE NOTICE '%|%', s, split_part(d::jsonb->>'__type', '#', 2); END; END \$d\$" 2>&1 | sed 's/^NOTICE:  //'
}
# poll_router SQL EXPECTED: polls SQL on the router (10 s at most) until it answers EXPECTED; prints the last answer
poll_router() {
    local sql=$1 expected=$2 answer
    wait_for 10 'answer=$(q -c "$sql"); [ "$answer" = "$expected" ]'
    echo "$answer"
}
# lock_of APPLICATION KIND PARTITION MODE GRANTED: whether that backend has that lock of the router's
# (one of the server's own, src/ddb_locks.h: advisory, objsubid 3, which no SQL can take)
lock_of() {
    echo "SELECT count(*) > 0 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
          WHERE a.application_name = '$1' AND l.locktype = 'advisory' AND l.classid = ddb_router.lock_class('$2')
            AND l.objid = $3 AND l.objsubid = 3 AND l.mode = '$4' AND l.granted = $5"
}
# waits_for_transaction APPLICATION: whether that backend waits for another transaction to end
waits_for_transaction() {
    echo "SELECT count(*) > 0 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
          WHERE a.application_name = '$1' AND l.locktype IN ('virtualxid', 'transactionid') AND NOT l.granted"
}
# hold APPNAME SQL: a session named APPNAME runs SQL in a transaction and keeps it open until
# `release APPNAME` (the test decides how long a write is in flight, not a sleep); its pid in HELD_PID
hold() {
    PGAPPNAME=$1 q -c "BEGIN" -c "$2" \
        -c "DO \$d\$ BEGIN WHILE NOT EXISTS (SELECT FROM public.released WHERE name = '$1') LOOP PERFORM pg_sleep(0.02); END LOOP; END \$d\$" \
        -c "COMMIT" >/dev/null 2>&1 &
    HELD_PID=$!
}
release() { q -c "INSERT INTO public.released VALUES ('$1')" >/dev/null; }
# in_partition N: the SQL condition "the row's partition key is in partition N" on a node's table
in_partition() { echo "ddb.ddb_key_route_hash(pk) & 15 = $1"; }
put_request() {  # customer order total: a PutItem request of Orders
    echo "{\"TableName\": \"Orders\", \"Item\": {\"customer\": {\"S\": \"$1\"}, \"orderId\": {\"S\": \"$2\"}, \"status\": {\"S\": \"w\"}, \"total\": {\"N\": \"$3\"}}}"
}

# n2 is added below, to move partitions to
fresh_router "$ROUTER" "${NODES[0]}" "${NODES[1]}"
fresh_db --extension "${NODES[2]}"
fresh_db "$PLAIN"

# Two tables: Orders (sort key, a GSI, an LSI, provisioned, a stream, TTL, a tag) and Accounts.
route() { q -c "SELECT ddb_router.answer_response(ddb_router.execute_metered(NULL, '$1', \$r\$$2\$r\$))" >/dev/null; }
route CreateTable '{"TableName": "Orders", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
  "KeySchema": [{"AttributeName": "customer", "KeyType": "HASH"}, {"AttributeName": "orderId", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "customer", "AttributeType": "S"}, {"AttributeName": "orderId", "AttributeType": "S"},
                           {"AttributeName": "status", "AttributeType": "S"}, {"AttributeName": "total", "AttributeType": "N"}],
  "GlobalSecondaryIndexes": [{"IndexName": "ByStatus",
      "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}, {"AttributeName": "total", "KeyType": "RANGE"}],
      "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 3}}],
  "LocalSecondaryIndexes": [{"IndexName": "ByTotal",
      "KeySchema": [{"AttributeName": "customer", "KeyType": "HASH"}, {"AttributeName": "total", "KeyType": "RANGE"}],
      "Projection": {"ProjectionType": "KEYS_ONLY"}}],
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_IMAGE"}}'
route UpdateTimeToLive '{"TableName": "Orders", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "expires"}}'
route TagResource '{"ResourceArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Orders", "Tags": [{"Key": "team", "Value": "sales"}]}'
route CreateTable '{"TableName": "Accounts", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "customer", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "customer", "AttributeType": "S"}]}'
# 400 orders of 100 customers (a third of them with a TTL), 100 accounts, through the router
q -c "SELECT count(ddb_router.execute_metered(NULL, 'PutItem', jsonb_build_object('TableName', 'Orders', 'Item',
        jsonb_build_object('customer', jsonb_build_object('S', 'c' || c), 'orderId', jsonb_build_object('S', 'o' || o),
                           'status', jsonb_build_object('S', 's' || (c + o) % 5),
                           'total', jsonb_build_object('N', (c * 10 + o)::text))
        || CASE WHEN c % 3 = 0 THEN '{\"expires\": {\"N\": \"4102444800\"}}'::jsonb ELSE '{}' END)))
      FROM generate_series(1, 100) c, generate_series(1, 4) o" >/dev/null
q -c "SELECT count(ddb_router.execute_metered(NULL, 'PutItem', jsonb_build_object('TableName', 'Accounts', 'Item',
        jsonb_build_object('customer', jsonb_build_object('S', 'c' || c), 'balance', jsonb_build_object('N', c::text)))))
      FROM generate_series(1, 100) c" >/dev/null

# the partitions of n1 (odd ones): P moves with writes going on, Q fails, R's mover dies before
# the switch, S's (below) after it
P=5; Q=7; R=9
keys_of() {  # N [COUNT]: customers of partition N
    q -c "SELECT string_agg(k, ' ' ORDER BY c) FROM (SELECT c, 'c' || c AS k FROM generate_series(1, 100) c) s
          WHERE ddb.ddb_key_route_hash(ddb.ddb_key(k)) & 15 = $1 AND c <= ${2:-100}"
}
P_KEYS=($(keys_of $P))
check "partitions $P, $Q and $R are on n1 and hold items" "n1 n1 n1 true" \
    "$(q -c "SELECT string_agg(node_name, ' ' ORDER BY partition) FROM ddb_router.partitions WHERE partition IN ($P, $Q, $R)") $([ ${#P_KEYS[@]} -ge 3 ] && [ -n "$(keys_of $Q)" ] && [ -n "$(keys_of $R)" ] && echo true)"

# Bad input is refused with a clear error and changes nothing.
check "an unknown partition is refused" "22023: partition 16 does not exist: the cluster has partitions 0 to 15" \
    "$(fails "CALL ddb_router.move_partition(16, 'n0')")"
check "an unknown node is refused" "42704: node n9 is not a node of the cluster" \
    "$(fails "CALL ddb_router.move_partition($P, 'n9')")"
check "the partition's own node is refused" "22023: partition $P is already on node n1" \
    "$(fails "CALL ddb_router.move_partition($P, 'n1')")"
q -c "SELECT ddb_router.add_node('plain', '$(node_dsn $PLAIN)')" >/dev/null
check "a node without ddb_model is refused" "55000: node plain has no extension ddb_model" \
    "$(fails "CALL ddb_router.move_partition($P, 'plain')")"
# a table defined otherwise on the target: refused when it holds items (made again when empty, below)
q -d "$PLAIN" -c "CREATE EXTENSION ddb_model" -c "SELECT ddb.create_table('Accounts', 'customer', 'N')" \
    -c "SELECT ddb.put_item('Accounts', '{\"customer\": 1}')" >/dev/null
check "a node whose table is defined otherwise and holds items is refused" \
    "55000: table Accounts on node plain is not defined as the cluster's is, and holds items" \
    "$(fails "CALL ddb_router.move_partition($P, 'plain')")"
q -c "DELETE FROM ddb_router.nodes WHERE node_name = 'plain'"
check "inside a transaction block, the move refuses before doing anything" "2D000: invalid transaction termination" \
    "$(fails "BEGIN; CALL ddb_router.move_partition($P, 'n0')")"
check "and after them nothing moves or is marked" "0|0|no error" \
    "$(q -c "SELECT count(*) FILTER (WHERE moving OR node_name <> CASE WHEN partition % 2 = 0 THEN 'n0' ELSE 'n1' END) FROM ddb_router.partitions")|$(q -c "SELECT count(*) FROM ddb_router.moves")|$(put_error Orders "$(put_request "${P_KEYS[0]}" x 1 | sed 's/.*"Item": //; s/}$//')")"
check "recover_move refuses a partition without an unfinished move" "55000: partition $P has no unfinished move" \
    "$(fails "CALL ddb_router.recover_move($P)")"

# The third node: the move makes the tables there (Orders, which it lacks, and Accounts, which it
# has with another key type and no item).
q -d "${NODES[2]}" -c "SELECT ddb.create_table('Accounts', 'customer', 'N')" >/dev/null
q -c "SELECT ddb_router.add_node('n2', '$(node_dsn "${NODES[2]}")')" >/dev/null
P_BASE=$(q -d "${NODES[1]}" -c "SELECT count(*) FROM public.\"Orders\" WHERE $(in_partition $P)")
P_TTL=$(q -d "${NODES[1]}" -c "SELECT count(*) FROM public.\"Orders\" WHERE $(in_partition $P) AND expires_at IS NOT NULL")
P_GSI_S1=$(q -d "${NODES[1]}" -c "SELECT count(*) FROM ddb.query('Orders', 's1', index_name => 'ByStatus') i
                                   WHERE ddb.ddb_key_route_hash(ddb.ddb_key(i->>'customer')) & 15 = $P")
P_ACCOUNTS=$(q -d "${NODES[1]}" -c "SELECT count(*) FROM public.\"Accounts\" WHERE $(in_partition $P)")

# The background writer: PutItem of three customers of P and three of other partitions, with
# increasing totals, each retried on ServiceUnavailable; an acknowledged value is recorded once
# the router answered.  Each round also reads an item of P that was there before the move.
others=($(q -c "SELECT string_agg(k, ' ') FROM (SELECT 'c' || c AS k FROM generate_series(1, 100) c
                WHERE ddb.ddb_key_route_hash(ddb.ddb_key('c' || c)) & 15 NOT IN ($P, $Q, $R) ORDER BY c LIMIT 3) s"))
WRITER_KEYS="${P_KEYS[0]} ${P_KEYS[1]} ${P_KEYS[2]} ${others[*]}"
q <<SQL
CREATE TABLE public.acks (customer text PRIMARY KEY, v integer NOT NULL);
CREATE TABLE public.released (name text PRIMARY KEY);
CREATE TABLE public.writer_state (refused integer NOT NULL, misses integer NOT NULL, rounds integer NOT NULL, stop boolean NOT NULL);
INSERT INTO public.writer_state VALUES (0, 0, 0, false);
CREATE PROCEDURE public.writer(keys text[], probe jsonb) LANGUAGE plpgsql AS \$\$
DECLARE
    v integer := 0;
    c text;
    ok boolean;
    deadline timestamptz := clock_timestamp() + interval '60 s';
BEGIN
    LOOP
        v := v + 1;
        FOREACH c IN ARRAY keys LOOP
            LOOP
                BEGIN
                    PERFORM ddb_router.execute_metered(NULL, 'PutItem', jsonb_build_object('TableName', 'Orders', 'Item',
                        jsonb_build_object('customer', jsonb_build_object('S', c), 'orderId', jsonb_build_object('S', 'w'),
                                           'status', jsonb_build_object('S', 'w'), 'total', jsonb_build_object('N', v::text))));
                    ok := true;
                EXCEPTION WHEN SQLSTATE 'YD013' THEN
                    ok := false;
                END;
                IF ok THEN
                    INSERT INTO public.acks VALUES (c, v) ON CONFLICT (customer) DO UPDATE SET v = excluded.v;
                ELSE
                    UPDATE public.writer_state SET refused = refused + 1;
                END IF;
                COMMIT;
                EXIT WHEN ok;
                PERFORM pg_sleep(0.01);
            END LOOP;
        END LOOP;
        IF ddb_router.answer_response(ddb_router.execute_metered(NULL, 'GetItem', probe))->'Item' IS NULL THEN
            UPDATE public.writer_state SET misses = misses + 1;
        END IF;
        UPDATE public.writer_state SET rounds = rounds + 1;
        COMMIT;
        EXIT WHEN (SELECT stop FROM public.writer_state) OR clock_timestamp() > deadline;
    END LOOP;
END \$\$;
SQL
probe="{\"TableName\": \"Orders\", \"Key\": {\"customer\": {\"S\": \"${P_KEYS[0]}\"}, \"orderId\": {\"S\": \"o1\"}}}"
PGAPPNAME=writer q -c "CALL public.writer(string_to_array('$WRITER_KEYS', ' '), '$probe')" >"$WORK/writer.log" 2>&1 &
writer_pid=$!
poll_router "SELECT rounds >= 3 FROM public.writer_state" t >/dev/null
V0=$(q -c "SELECT min(v) FROM public.acks WHERE customer IN ('${P_KEYS[0]}', '${P_KEYS[1]}', '${P_KEYS[2]}')")

# A write in flight: a router transaction that wrote to P and holds P's writer lock until released.
hold held "SELECT ddb_router.execute_metered(NULL, 'PutItem', '$(put_request "${P_KEYS[3]:-${P_KEYS[0]}}" held 7)')"
held_pid=$HELD_PID
check "a write through the router holds its partition's writer lock, shared (the server's own lock: objsubid 3)" "t" \
    "$(poll_router "$(lock_of held partition $P ShareLock true)" t)"
check "no SQL takes that lock: pg_advisory_lock(class, partition) is another lock, granted at once" "t" \
    "$(q -c "SELECT pg_try_advisory_xact_lock(ddb_router.lock_class('partition')::integer, $P)")"

PGAPPNAME=mover q -c "CALL ddb_router.move_partition($P, 'n2')" >"$WORK/move.log" 2>&1 &
move_pid=$!
check "the move marks the partition moving, then waits for that write's transaction, taking no lock writers would queue behind" "t" \
    "$(poll_router "$(waits_for_transaction mover)" t)"
check "meanwhile the partition is marked moving and the move recorded" "t|copying|n1|n2" \
    "$(q -c "SELECT moving FROM ddb_router.partitions WHERE partition = $P")|$(q -c "SELECT concat_ws('|', step, source_node, target_node) FROM ddb_router.moves WHERE partition = $P")"
check "the moving session holds the move's lock" "t" "$(q -c "$(lock_of mover move $P ExclusiveLock true)")"
check "a second move of the partition is refused while one runs" "55006: partition $P is already moving to node n2" \
    "$(fails "CALL ddb_router.move_partition($P, 'n0')" | sed 's/ (a move started.*//')"
sleep 0.5
still=$(kill -0 $move_pid 2>/dev/null && echo running)
release held
wait $held_pid
wait $move_pid
check "the move waits as long as the write is in flight, and ends well once it commits" "running 0" "$still $?"
check "it says what it did" "5" "$(grep -cE 'made on node n2 the tables it lacked or defined otherwise: Accounts, Orders|marked moving|items copied from node n1 to node n2|is on node n2 and takes writes there|items removed from node n1' "$WORK/move.log")"
sleep 0.3
q -c "UPDATE public.writer_state SET stop = true"
wait $writer_pid
check "the background writer ran without an error it did not expect" "0" "$?$(grep -c ERROR "$WORK/writer.log" | sed 's/^0$//')"

check "the map: partition $P on n2, not moving, no move recorded" "n2|false|0" \
    "$(q -c "SELECT node_name || '|' || moving FROM ddb_router.partitions WHERE partition = $P")|$(q -c "SELECT count(*) FROM ddb_router.moves")"
check "writes to the moving partition were refused with ServiceUnavailable meanwhile, and retried" "t" \
    "$(q -c "SELECT refused > 0 FROM public.writer_state")"
check "no acknowledged write is lost: each key's last acknowledged value reads back through the router" "6|0" \
    "$(q -c "SELECT count(*) FROM public.acks")|$(q -c "SELECT count(*) FROM public.acks a
        WHERE (ddb_router.answer_response(ddb_router.execute_metered(NULL, 'GetItem', jsonb_build_object('TableName', 'Orders',
                 'Key', jsonb_build_object('customer', jsonb_build_object('S', a.customer), 'orderId', jsonb_build_object('S', 'w')))))
               ->'Item'->'total'->>'N')::integer IS DISTINCT FROM a.v")"
check "the moved partition took writes again after the move" "t" \
    "$(q -c "SELECT min(v) > $V0 + 1 FROM public.acks WHERE customer IN ('${P_KEYS[0]}', '${P_KEYS[1]}', '${P_KEYS[2]}')")"
check "reads of the moving partition went on: never a missing item" "0" "$(q -c "SELECT misses FROM public.writer_state")"
check "the write that was in flight is on the target" "1" \
    "$(q -d "${NODES[2]}" -c "SELECT count(*) FROM public.\"Orders\" WHERE item->>'orderId' = 'held'")"

check "the target got the tables, defined as in the router's catalog" "t|t" \
    "$(for t in Orders Accounts; do
         [ "$(q -c "SELECT ddb.table_definition('$t')")" = "$(q -d "${NODES[2]}" -c "SELECT ddb.table_definition('$t')")" ] && echo t || echo f
       done | paste -sd'|')"
check "with billing mode and throughput, TTL attribute, stream and tags" "PROVISIONED|5|5|3|3|expires|NEW_IMAGE|{\"team\": \"sales\"}" \
    "$(q -d "${NODES[2]}" -c "SELECT concat_ws('|', t.billing_mode, t.read_capacity, t.write_capacity, i.read_capacity, i.write_capacity,
                                        t.ttl_attribute, t.stream_view_type, t.tags)
                              FROM ddb.tables t JOIN ddb.indexes i ON i.table_name = t.table_name AND i.index_name = 'ByStatus'
                              WHERE t.table_name = 'Orders'")"
check "the items of the partition are on the target (the writer's and the one in flight added)" \
    "$((P_BASE + 3 + 1))|$P_ACCOUNTS|$P_TTL" \
    "$(q -d "${NODES[2]}" -c "SELECT count(*) FROM public.\"Orders\" WHERE $(in_partition $P)")|$(q -d "${NODES[2]}" -c "SELECT count(*) FROM public.\"Accounts\" WHERE $(in_partition $P)")|$(q -d "${NODES[2]}" -c "SELECT count(*) FROM public.\"Orders\" WHERE $(in_partition $P) AND expires_at IS NOT NULL")"
check "and gone from the source" "0|0" \
    "$(q -d "${NODES[1]}" -c "SELECT count(*) FROM public.\"Orders\" WHERE $(in_partition $P)")|$(q -d "${NODES[1]}" -c "SELECT count(*) FROM public.\"Accounts\" WHERE $(in_partition $P)")"
check "a GSI query on the target finds the moved items" "$P_GSI_S1|5" \
    "$(q -d "${NODES[2]}" -c "SELECT count(*) FROM ddb.query('Orders', 's1', index_name => 'ByStatus') i
                              WHERE ddb.ddb_key_route_hash(ddb.ddb_key(i->>'customer')) & 15 = $P")|$(q -d "${NODES[2]}" -c "SELECT count(*) FROM ddb.query('Orders', 'w', index_name => 'ByStatus') i
                              WHERE ddb.ddb_key_route_hash(ddb.ddb_key(i->>'customer')) & 15 = $P")"
check "every moved item has its GSI and LSI entries on the target, and the source has none of the partition left" \
    "$((P_BASE + 4))|$((P_BASE + 4))|0|0" \
    "$(q -d "${NODES[2]}" -c "SELECT count(*) FROM public.\"Orders:ByStatus\" WHERE $(in_partition $P)")|$(q -d "${NODES[2]}" -c "SELECT count(*) FROM public.\"Orders:ByTotal\" WHERE $(in_partition $P)")|$(q -d "${NODES[1]}" -c "SELECT count(*) FROM public.\"Orders:ByStatus\" WHERE $(in_partition $P)")|$(q -d "${NODES[1]}" -c "SELECT count(*) FROM public.\"Orders:ByTotal\" WHERE $(in_partition $P)")"
check "a Query of the LSI through the router reads the moved items on the target" "5" \
    "$(q -c "SELECT ddb_router.answer_response(ddb_router.execute_metered(NULL, 'Query', '{\"TableName\": \"Orders\", \"IndexName\": \"ByTotal\",
        \"KeyConditionExpression\": \"customer = :c AND #t < :t\", \"ExpressionAttributeNames\": {\"#t\": \"total\"}, \"ExpressionAttributeValues\": {\":c\": {\"S\": \"${P_KEYS[1]}\"}, \":t\": {\"N\": \"100000\"}}}'))->>'Count'")"
check "the stream records the copy as inserts on the target and the removal on the source" "t|t" \
    "$(q -d "${NODES[2]}" -c "SELECT count(*) >= $P_BASE FROM ddb.stream_records WHERE table_name = 'Orders' AND event_name = 'INSERT'")|$(q -d "${NODES[1]}" -c "SELECT count(*) >= $P_BASE FROM ddb.stream_records WHERE table_name = 'Orders' AND event_name = 'REMOVE'")"

# A move that fails while copying: the target refuses one item of Q (a trigger there).  Accounts,
# copied before Orders, has its copies removed again.
Q_KEY=$(keys_of $Q | cut -d' ' -f1)
q -d "${NODES[2]}" -c "CREATE FUNCTION public.refuse() RETURNS trigger LANGUAGE plpgsql AS \$\$
    BEGIN IF NEW.item->>'customer' = '$Q_KEY' THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END \$\$" \
    -c "CREATE TRIGGER refuse BEFORE INSERT ON public.\"Orders\" FOR EACH ROW EXECUTE FUNCTION public.refuse()"
check "a move that fails while copying says so: nothing moved, the copies removed" \
    "P0001: partition $Q did not move to node n2: refused for the test. Nothing moved: it stays on node n1 and takes writes again; what was copied to node n2 is removed" \
    "$(fails "CALL ddb_router.move_partition($Q, 'n2')")"
check "the map still points at the source, the partition is not moving, no move is recorded" "n1|false|0" \
    "$(q -c "SELECT node_name || '|' || moving FROM ddb_router.partitions WHERE partition = $Q")|$(q -c "SELECT count(*) FROM ddb_router.moves")"
check "the target holds nothing of the partition (items, GSI entries), the source all of it" "0|0|0|t" \
    "$(q -d "${NODES[2]}" -c "SELECT count(*) FROM public.\"Accounts\" WHERE $(in_partition $Q)")|$(q -d "${NODES[2]}" -c "SELECT count(*) FROM public.\"Orders\" WHERE $(in_partition $Q)")|$(q -d "${NODES[2]}" -c "SELECT count(*) FROM public.\"Orders:ByStatus\" WHERE $(in_partition $Q)")|$(q -d "${NODES[1]}" -c "SELECT count(*) > 0 FROM public.\"Accounts\" WHERE $(in_partition $Q)")"
check "and its writes go through" "no error" "$(put_error Orders "{\"customer\": {\"S\": \"$Q_KEY\"}, \"orderId\": {\"S\": \"after\"}}")"
q -d "${NODES[2]}" -c "DROP TRIGGER refuse ON public.\"Orders\""

# A move whose session ends while it waits for a write in flight: the partition stays marked
# moving, recover_move undoes the move, and the move can then be made.
R_KEY=$(keys_of $R | cut -d' ' -f1)
hold held2 "SELECT ddb_router.execute_metered(NULL, 'PutItem', '$(put_request "$R_KEY" held2 8)')"
held_pid=$HELD_PID
poll_router "$(lock_of held2 partition $R ShareLock true)" t >/dev/null
PGAPPNAME=mover2 q -c "CALL ddb_router.move_partition($R, 'n2')" >"$WORK/move2.log" 2>&1 &
move_pid=$!
poll_router "$(waits_for_transaction mover2)" t >/dev/null
q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'mover2'" >/dev/null
wait $move_pid
release held2
wait $held_pid
check "a move whose session ended leaves the partition marked moving, the move recorded" "t|copying" \
    "$(q -c "SELECT moving FROM ddb_router.partitions WHERE partition = $R")|$(q -c "SELECT step FROM ddb_router.moves WHERE partition = $R")"
check "its writes are refused with ServiceUnavailable (503, retryable)" "YD013|ServiceUnavailable" \
    "$(put_error Orders "{\"customer\": {\"S\": \"$R_KEY\"}, \"orderId\": {\"S\": \"x\"}}")"
check "another move of it says what to do" \
    "55000: a move of partition $R from node n1 to node n2 did not finish: it stopped before the switch" \
    "$(fails "CALL ddb_router.move_partition($R, 'n2')")"
check "recover_move undoes it: the partition takes writes on its node again" "n1|false|0|no error" \
    "$(q -c "CALL ddb_router.recover_move($R)" 2>/dev/null; q -c "SELECT node_name || '|' || moving FROM ddb_router.partitions WHERE partition = $R")|$(q -c "SELECT count(*) FROM ddb_router.moves")|$(put_error Orders "{\"customer\": {\"S\": \"$R_KEY\"}, \"orderId\": {\"S\": \"x\"}}")"
check "then the move goes through" "no error|n2|0" \
    "$(fails "CALL ddb_router.move_partition($R, 'n2')")|$(q -c "SELECT node_name FROM ddb_router.partitions WHERE partition = $R")|$(q -d "${NODES[1]}" -c "SELECT count(*) FROM public.\"Orders\" WHERE $(in_partition $R)")"

# A move whose session ends after the switch, while it waits for a router transaction older than
# the switch: the partition is on the target and takes writes there; recover_move removes its items
# from the source.
S=13
S_KEY=$(keys_of $S | cut -d' ' -f1)
S_BASE=$(q -d "${NODES[1]}" -c "SELECT count(*) FROM public.\"Orders\" WHERE $(in_partition $S)")
hold old "SELECT 1"
old_pid=$HELD_PID
poll_router "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'old' AND xact_start IS NOT NULL" 1 >/dev/null
PGAPPNAME=mover3 q -c "CALL ddb_router.move_partition($S, 'n2')" >"$WORK/move3.log" 2>&1 &
move_pid=$!
poll_router "SELECT step FROM ddb_router.moves WHERE partition = $S AND switched_at IS NOT NULL" switched >/dev/null
q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'mover3'" >/dev/null
wait $move_pid
check "a move whose session ended after the switch: the partition is on the target and takes writes there" \
    "n2|false|switched|no error|1" \
    "$(q -c "SELECT node_name || '|' || moving FROM ddb_router.partitions WHERE partition = $S")|$(q -c "SELECT step FROM ddb_router.moves WHERE partition = $S")|$(put_error Orders "{\"customer\": {\"S\": \"$S_KEY\"}, \"orderId\": {\"S\": \"after\"}}")|$(q -d "${NODES[2]}" -c "SELECT count(*) FROM public.\"Orders\" WHERE item->>'customer' = '$S_KEY' AND item->>'orderId' = 'after'")"
check "its items are still on the source too" "$S_BASE" \
    "$(q -d "${NODES[1]}" -c "SELECT count(*) FROM public.\"Orders\" WHERE $(in_partition $S)")"
check "another move of it says what to do" \
    "55000: a move of partition $S from node n1 to node n2 did not finish: it stopped after the switch, before its items were removed from n1" \
    "$(fails "CALL ddb_router.move_partition($S, 'n0')")"
release old
wait $old_pid
q -c "CALL ddb_router.recover_move($S)" 2>"$WORK/recover.log"
check "recover_move finishes it: the items removed from the source, kept on the target" "0|0|$((S_BASE + 1))" \
    "$(q -d "${NODES[1]}" -c "SELECT count(*) FROM public.\"Orders\" WHERE $(in_partition $S)")|$(q -c "SELECT count(*) FROM ddb_router.moves")|$(q -d "${NODES[2]}" -c "SELECT count(*) FROM public.\"Orders\" WHERE $(in_partition $S)")"

# In the end every item of every table is on the node of its partition, once.
misplaced=$(for i in 0 1 2; do
    for t in Orders Accounts; do
        q -d "${NODES[$i]}" -c "SELECT count(*) FROM public.\"$t\"
            WHERE ddb.ddb_key_route_hash(pk) & 15 <> ALL ('$(q -c "SELECT coalesce(array_agg(partition), '{}') FROM ddb_router.partitions WHERE node_name = 'n$i'")'::integer[])"
    done
done | paste -sd' ')
check "every item of every table is on the node of its partition" "0 0 0 0 0 0" "$misplaced"
# 400 orders, 6 of the writer, 4 writes in flight or after a failure, 2 through the bad-input and recovery checks
check "DescribeTable through the router counts each item once, none lost" "412" \
    "$(q -c "SELECT ddb_router.answer_response(ddb_router.execute_metered(NULL, 'DescribeTable', '{\"TableName\": \"Orders\"}'))->'Table'->>'ItemCount'")"

# The router's locks are the server's own (src/ddb_locks.h): a role reaches them only through
# functions that check it first.
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS ddb_move_hostile" -c "CREATE ROLE ddb_move_hostile NOLOGIN"
q -c "GRANT USAGE ON SCHEMA ddb_router TO ddb_move_hostile"
check "the router's move, wait and recovery locks are not PUBLIC's" \
    "42501: permission denied for function lock_move|42501: permission denied for function unlock_move|42501: permission denied for function await_partition_writers|42501: permission denied for function lock_recovery" \
    "$(for f in "lock_move($P)" "unlock_move($P)" "await_partition_writers($P)" "lock_recovery()"; do fails "SET ROLE ddb_move_hostile; SELECT ddb_router.$f"; done | paste -sd'|')"
check "ddb_router.claim_unique refuses a role that may not write the table" \
    "42501: permission denied to claim a unique value of table Orders" \
    "$(fails "SET ROLE ddb_move_hostile; SELECT ddb_router.claim_unique(NULL, 'Orders', 'email')")"
SUPER=$(q -c "SELECT current_user")
check "and a role the caller may not act as" "42501: permission denied to act as role \"$SUPER\"" \
    "$(fails "SET ROLE ddb_move_hostile; SELECT ddb_router.claim_unique('$SUPER', 'Orders', 'email')")"
# a partition's writer lock is held by the writes the router serves, not by whoever calls
# ddb_router.write_guard: a client of the router (which reads its partition map) holding it
# in an open transaction made every move of the partition wait for it and fail (and refused
# its writes meanwhile)
q -c "GRANT SELECT ON ddb_router.partitions TO ddb_move_hostile"
check "ddb_router.write_guard is refused outside a request the router serves, and holds no lock" \
    "42501: ddb_router.write_guard takes a partition's writer lock only for a request the router serves|0" \
    "$(fails "SET ROLE ddb_move_hostile; SELECT ddb_router.write_guard($P)")|$(q -c "SET ROLE ddb_move_hostile;
        DO \$d\$ BEGIN PERFORM ddb_router.write_guard($P); EXCEPTION WHEN insufficient_privilege THEN NULL; END \$d\$;
        SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 3 AND pid = pg_backend_pid()")"
q -c "REVOKE USAGE ON SCHEMA ddb_router FROM ddb_move_hostile" -c "REVOKE SELECT ON ddb_router.partitions FROM ddb_move_hostile"
# nor does a role that may write a table send a write to a node of its choosing with
# ddb_router.call (past the writer lock, the unique values the router claims, and the
# routing: the item went to a node that does not hold its partition, acknowledged, and no
# read through the router found it)
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS ddb_move_writer" -c "CREATE ROLE ddb_move_writer LOGIN"
q -c "GRANT USAGE ON SCHEMA ddb_router TO ddb_move_writer" -c "SELECT ddb_router.grant_tables('ddb_move_writer', 'Orders')" >/dev/null
ITEM=$(put_request misplaced m1 1)
OTHER=$(q -c "SELECT min(p.partition) FROM ddb_router.partitions p
              WHERE p.node_name <> ddb_router.node_of(ddb_router.route_of('Orders', '$ITEM'::jsonb->'Item'))")
check "ddb_router.call is refused outside a request the router serves, and writes nothing" \
    "42501: ddb_router.call calls a node only for a request the router serves|0+0+0" \
    "$(PGUSER=ddb_move_writer fails "SELECT ddb_router.call($OTHER, NULL, 'PutItem', '$ITEM')")|$(for db in "${NODES[@]}"; do q -d "$db" -c "SELECT count(*) FROM public.\"Orders\" WHERE item->>'customer' = 'misplaced'"; done | paste -sd+)"
q -c "SELECT ddb_router.revoke_tables('ddb_move_writer', 'Orders')" -c "REVOKE USAGE ON SCHEMA ddb_router FROM ddb_move_writer" >/dev/null

drop_db "$ROUTER" "${NODES[@]}" "$PLAIN"
psql -X -q -d postgres -c "DROP ROLE IF EXISTS ddb_move_hostile" -c "DROP ROLE IF EXISTS ddb_move_writer" >/dev/null
done_testing
