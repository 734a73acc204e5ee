#!/usr/bin/env bash
# Requests sent straight to their shard (docs/scale-out.md, "Requests sent
# straight to their shard"): a router and three node databases in the test
# cluster, and ddb-gateway (--development) in front of the router.  The
# gateway's routing hash equals the router's for keys of every type; once
# the router gives the nodes their partitions (ddb_router.publish_partitions)
# item requests and Queries go straight to the node of their partition and
# answer as through the router; a node refuses (YR001) a request of a
# partition it does not serve directly, or whose key is in another; a move
# waits for a write sent straight to the node, and gives the partition back
# when it fails; after a move the gateway, told by the router's NOTIFY, sends
# the partition's requests to its new node; and no role but the gateway's user may call the
# nodes' entry point, which acts as a role only for a caller that may.
# Runs against the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set);
# prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir shard-direct
ROUTER=ddb_direct_r
DB=$ROUTER
NODES=(ddb_direct_n0 ddb_direct_n1 ddb_direct_n2)
PORT=${DDB_SHARD_DIRECT_GATEWAY_PORT:-55630}
URL="http://127.0.0.1:$PORT"

# call OPERATION BODY: the gateway's status and body, on one line
call() {
    curl -s -w ' %{http_code}' -H "X-Amz-Target: DynamoDB_20120810.$1" \
        -H 'Content-Type: application/x-amz-json-1.0' --data-binary "$2" "$URL/"
}
# route TABLE KEY: the router's routing hash of a key ({"pk": ...}) of a table
route() { q -c "SELECT ddb_router.route_of('$1', '$2')"; }
# partition_of KEY: the partition (of 16) of an S key of table Direct
partition_of() { echo $(( $(route Direct "{\"pk\": {\"S\": \"$1\"}}") & 15 )); }
# node_of PARTITION: the node the router maps a partition to
node_of() { q -c "SELECT node_name FROM ddb_router.partitions WHERE partition = $1"; }
# direct_backends NODE_DATABASE: whether the gateway has a connection to a node whose last statement was ddb.execute_direct
direct_backends() {
    q -c "SELECT count(*) > 0 FROM pg_stat_activity WHERE datname = '$1' AND query LIKE '%ddb.execute_direct(%' AND pid <> pg_backend_pid()"
}
# on_node NODE_DATABASE STATEMENT [ROLE]: "SQLSTATE" of the error a PL/pgSQL statement raises on a node (as ROLE), or "ok"
on_node() {
    q -d "$1" -c "${3:+SET ROLE $3;} DO \$d\$ BEGIN $2; RAISE NOTICE 'ok';
                  EXCEPTION WHEN OTHERS THEN RAISE NOTICE '%', SQLSTATE; END \$d\$" 2>&1 | sed 's/^NOTICE:  //'
}

fresh_router "$ROUTER" "${NODES[0]}" "${NODES[1]}"
fresh_db --extension "${NODES[2]}"
q -c "SELECT ddb_router.add_node('n2', '$(node_dsn "${NODES[2]}")')" >/dev/null
for table in 'Direct S' 'DirectN N' 'DirectB B'; do
    read -r name type <<<"$table"
    q -c "SELECT ddb_router.execute_metered(NULL, 'CreateTable', '{\"TableName\": \"$name\",
            \"KeySchema\": [{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}, {\"AttributeName\": \"sk\", \"KeyType\": \"RANGE\"}],
            \"AttributeDefinitions\": [{\"AttributeName\": \"pk\", \"AttributeType\": \"$type\"},
                                       {\"AttributeName\": \"sk\", \"AttributeType\": \"S\"},
                                       {\"AttributeName\": \"n\", \"AttributeType\": \"N\"}],
            \"LocalSecondaryIndexes\": [{\"IndexName\": \"ByN\", \"KeySchema\": [{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"},
                {\"AttributeName\": \"n\", \"KeyType\": \"RANGE\"}], \"Projection\": {\"ProjectionType\": \"ALL\"}}],
            \"BillingMode\": \"PAY_PER_REQUEST\"}')" >/dev/null
done

# The gateway's hash (src/gateway/shard_hash.c, built alone as build/route_hash) against the
# router's (ddb_router.route_of), key by key: strings of every script, numbers spelt many ways
# (1, 1.0, 1e0, 10E-1, ...), binaries; keys neither may route (too long, no number) alike.
make -s -C "$ROOT" build/route_hash || exit 1
python3 - "$WORK/keys.csv" "$WORK/keys.tsv" <<'PY'
import base64, csv, random, sys
random.seed(33)
keys = [("S", s) for s in ["a", "USER#1", "USER#00042", "é", "naïve café", "日本語のキー", "😀🎉", "Ωμέγα", "x" * 2048,
                           "x" * 2049, "é" * 1024, "a b c", "#", "##", "\\d1", "\\x00"]]
keys += [("S", "".join(random.choice("abcXYZ019#_-") for _ in range(random.randint(1, 40)))) for _ in range(100)]
keys += [("S", "".join(chr(random.choice([random.randint(0xa0, 0x7ff), random.randint(0x800, 0xd7ff), random.randint(0xe000, 0xfff0),
                                          random.randint(0x10000, 0x1f6ff)])) for _ in range(random.randint(1, 12))))
         for _ in range(60)]
keys += [("N", n) for n in ["1", "1.0", "1e0", "1E0", "10E-1", "0.1e1", "+1", "01", "1.", "-0", "0", "0.000", "-1.5",
                            "-1.50", "-15e-1", "1e125", "9.9999e125", "1e126", "1e-130", "1e-131", "0.5", ".5",
                            "12345678901234567890123456789012345678", "123456789012345678901234567890123456789",
                            "1234567890123456789012345678901234567800000", " 1", "abc", "1e", "--1", ""]]
keys += [("N", str(random.randint(-10**12, 10**12))) for _ in range(80)]
keys += [("N", "%de%d" % (random.randint(1, 999), random.randint(-20, 20))) for _ in range(40)]
keys += [("B", base64.b64encode(bytes(random.randint(0, 255) for _ in range(random.randint(1, 64)))).decode())
         for _ in range(60)]
keys += [("B", b) for b in ["AQI=", "AA==", "AAA=", "AAAA", "", "AQ", "not base64!", base64.b64encode(b"x" * 2048).decode()]]
with open(sys.argv[1], "w", newline="") as c, open(sys.argv[2], "w") as t:
    w = csv.writer(c)
    for i, (kind, value) in enumerate(keys):
        w.writerow([i, kind, value])
        t.write(f"{kind}\t{value}\n")
PY
q -c "CREATE TABLE keys (n integer, type text, value text)" -c "\copy keys FROM '$WORK/keys.csv' WITH (FORMAT csv)"
q -c "SELECT coalesce(ddb_router.route_of(CASE type WHEN 'S' THEN 'Direct' WHEN 'N' THEN 'DirectN' ELSE 'DirectB' END,
                                          jsonb_build_object('pk', jsonb_build_object(type, value)))::text, 'invalid')
      FROM keys ORDER BY n" >"$WORK/router.txt"
"$ROOT/build/route_hash" <"$WORK/keys.tsv" >"$WORK/gateway.txt"
check "the gateway's routing hash is the router's for $(wc -l <"$WORK/keys.tsv") keys of S, N and B" \
    "$(wc -l <"$WORK/keys.tsv") same, $(grep -c invalid "$WORK/router.txt") invalid" \
    "$(paste -d ' ' "$WORK/router.txt" "$WORK/gateway.txt" | awk '$1 == $2' | wc -l) same, $(grep -c invalid "$WORK/gateway.txt") invalid"
paste -d ' ' "$WORK/keys.tsv" "$WORK/router.txt" "$WORK/gateway.txt" | awk '$(NF - 1) != $NF' | head -5 | diag
check "1, 1.0, 1e0 and 10E-1 route alike" "1" \
    "$(for n in 1 1.0 1e0 10E-1; do route DirectN "{\"pk\": {\"N\": \"$n\"}}"; done | sort -u | wc -l)"

# The router gives each node its partitions: a row per partition in ddb.direct_partitions there.
check "publish_partitions gives the 16 partitions to their nodes" "16 8+8+0 16" \
    "$(q -c "SELECT ddb_router.publish_partitions()") $(for n in "${NODES[@]}"; do q -d "$n" -c "SELECT count(*) FROM ddb.direct_partitions"; done | paste -sd+) $(q -c "SELECT count(*) FROM ddb_router.partitions WHERE direct")"

start_gateway "$PORT" "$WORK/gateway.log" --dsn "dbname=$ROUTER" --development --pool 2 --access-log off
# keys of every partition, and the node of each
declare -A KEY_OF
for i in $(seq 1 200); do
    p=$(partition_of "user$i")
    [ -n "${KEY_OF[$p]:-}" ] || KEY_OF[$p]="user$i"
done
check "keys of the 16 partitions" "16" "${#KEY_OF[@]}"
for p in "${!KEY_OF[@]}"; do
    call PutItem "{\"TableName\": \"Direct\", \"Item\": {\"pk\": {\"S\": \"${KEY_OF[$p]}\"}, \"sk\": {\"S\": \"a\"}, \"n\": {\"N\": \"$p\"}}}" >/dev/null
done
check "the puts went straight to both nodes, and each item is on its partition's node" "t t 8+8" \
    "$(direct_backends "${NODES[0]}") $(direct_backends "${NODES[1]}") $(for n in "${NODES[@]:0:2}"; do q -d "$n" -c "SELECT count(*) FROM ddb.scan('Direct')"; done | paste -sd+)"
check "a GetItem straight to the node answers the item" '{"Item": {"n": {"N": "3"}, "pk": {"S": "'"${KEY_OF[3]}"'"}, "sk": {"S": "a"}}} 200' \
    "$(call GetItem "{\"TableName\": \"Direct\", \"Key\": {\"pk\": {\"S\": \"${KEY_OF[3]}\"}, \"sk\": {\"S\": \"a\"}}}")"
check "an UpdateItem, and the Query of the table and of its local index, see it" '{"Attributes": {"n": {"N": "4"}}} 200 1 1' \
    "$(call UpdateItem "{\"TableName\": \"Direct\", \"Key\": {\"pk\": {\"S\": \"${KEY_OF[3]}\"}, \"sk\": {\"S\": \"a\"}},
        \"UpdateExpression\": \"ADD n :one\", \"ExpressionAttributeValues\": {\":one\": {\"N\": \"1\"}}, \"ReturnValues\": \"UPDATED_NEW\"}") $(
      call Query "{\"TableName\": \"Direct\", \"KeyConditionExpression\": \"#k = :k\", \"ExpressionAttributeNames\": {\"#k\": \"pk\"},
        \"ExpressionAttributeValues\": {\":k\": {\"S\": \"${KEY_OF[3]}\"}}}" | grep -o '"Count": [0-9]*' | cut -d' ' -f2) $(
      call Query "{\"TableName\": \"Direct\", \"IndexName\": \"ByN\", \"KeyConditionExpression\": \":k = pk AND n >= :n\",
        \"ExpressionAttributeValues\": {\":k\": {\"S\": \"${KEY_OF[3]}\"}, \":n\": {\"N\": \"4\"}}}" | grep -o '"Count": [0-9]*' | cut -d' ' -f2)"
check "a failed condition is DynamoDB's error, as through the router" "ConditionalCheckFailedException 400" \
    "$(call DeleteItem "{\"TableName\": \"Direct\", \"Key\": {\"pk\": {\"S\": \"${KEY_OF[3]}\"}, \"sk\": {\"S\": \"a\"}},
        \"ConditionExpression\": \"n = :z\", \"ExpressionAttributeValues\": {\":z\": {\"N\": \"0\"}}}" | grep -o 'ConditionalCheckFailedException\|[0-9]*$' | paste -sd' ')"
check "an invalid request gets the router's error" "ValidationException 400" \
    "$(call GetItem '{"TableName": "Direct", "Key": {"pk": {"N": "1"}, "sk": {"S": "a"}}}' | grep -o 'ValidationException\|[0-9]*$' | paste -sd' ')"

# The fence on a node: ddb.execute_direct serves a partition the node serves directly, for a key in it.
P0=$(q -d "${NODES[0]}" -c "SELECT min(partition) FROM ddb.direct_partitions")
P1=$(q -d "${NODES[1]}" -c "SELECT min(partition) FROM ddb.direct_partitions")
get() { echo "'{\"TableName\": \"Direct\", \"Key\": {\"pk\": {\"S\": \"$1\"}, \"sk\": {\"S\": \"a\"}}}'"; }
check "a node serves its partition's key, refuses another node's partition and a key of another partition" "ok YR001 YR001" \
    "$(on_node "${NODES[0]}" "PERFORM ddb.execute_direct($P0, NULL, 'GetItem', $(get "${KEY_OF[$P0]}"))") $(
      on_node "${NODES[0]}" "PERFORM ddb.execute_direct($P1, NULL, 'GetItem', $(get "${KEY_OF[$P1]}"))") $(
      on_node "${NODES[0]}" "PERFORM ddb.execute_direct($P0, NULL, 'GetItem', $(get "${KEY_OF[$P1]}"))")"
check "and refuses a Scan, a query of a global index's kind, and a table's operation" "YR001 YR001 YR001" \
    "$(on_node "${NODES[0]}" "PERFORM ddb.execute_direct($P0, NULL, 'Scan', '{\"TableName\": \"Direct\"}')") $(
      on_node "${NODES[0]}" "PERFORM ddb.execute_direct($P0, NULL, 'Query', '{\"TableName\": \"Direct\", \"IndexName\": \"Nope\", \"KeyConditionExpression\": \"pk = :k\", \"ExpressionAttributeValues\": {\":k\": {\"S\": \"${KEY_OF[$P0]}\"}}}')") $(
      on_node "${NODES[0]}" "PERFORM ddb.execute_direct($P0, NULL, 'DeleteTable', '{\"TableName\": \"Direct\"}')")"

# Authorization: the entry point is not PUBLIC's (its lock would hold moves off), and runs a
# request as a role only for a caller that may act as it, as ddb.execute_metered does.
# (roles are the test cluster's, which holds every node)
q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS ddb_direct_hostile" \
    -c "DROP ROLE IF EXISTS ddb_direct_gw" -c "CREATE ROLE ddb_direct_hostile" -c "CREATE ROLE ddb_direct_gw"
check "a role may not call ddb.execute_direct, ddb.await_direct_requests, nor write ddb.direct_partitions" "42501 42501 42501" \
    "$(on_node "${NODES[0]}" "PERFORM ddb.execute_direct($P0, NULL, 'GetItem', $(get "${KEY_OF[$P0]}"))" ddb_direct_hostile) $(
      on_node "${NODES[0]}" "PERFORM ddb.await_direct_requests($P0)" ddb_direct_hostile) $(
      on_node "${NODES[0]}" "INSERT INTO ddb.direct_partitions VALUES (0, 1)" ddb_direct_hostile)"
q -d "${NODES[0]}" -c "GRANT EXECUTE ON FUNCTION ddb.execute_direct(integer, name, text, jsonb) TO ddb_direct_gw"
check "a user granted it acts as no role it is not a member of, and as itself reads no table it was not given" "42501 YD" \
    "$(on_node "${NODES[0]}" "PERFORM ddb.execute_direct($P0, 'ddb_direct_hostile', 'GetItem', $(get "${KEY_OF[$P0]}"))" ddb_direct_gw) $(
      on_node "${NODES[0]}" "PERFORM ddb.execute_direct($P0, NULL, 'GetItem', $(get "${KEY_OF[$P0]}"))" ddb_direct_gw | cut -c1-2)"

# A move: the source serves the partition directly no more, the target does once it moved, and
# the gateway, told by the router's NOTIFY (well within its 10 s reading), sends it there.
P=$P0
check "partition $P moves to n2" "0" "$(q -c "CALL ddb_router.move_partition($P, 'n2')" 2>"$WORK/move.log"; echo $?)"
check "its row left node n0 and is on n2; the router marks it direct again" "0 1 t" \
    "$(q -d "${NODES[0]}" -c "SELECT count(*) FROM ddb.direct_partitions WHERE partition = $P") $(
      q -d "${NODES[2]}" -c "SELECT count(*) FROM ddb.direct_partitions WHERE partition = $P") $(
      q -c "SELECT direct FROM ddb_router.partitions WHERE partition = $P")"
check "node n0 now refuses the partition's requests" "YR001" \
    "$(on_node "${NODES[0]}" "PERFORM ddb.execute_direct($P, NULL, 'GetItem', $(get "${KEY_OF[$P]}"))")"
wait_for 3 '[ "$(call GetItem "{\"TableName\": \"Direct\", \"Key\": {\"pk\": {\"S\": \"${KEY_OF[$P]}\"}, \"sk\": {\"S\": \"a\"}}}" >/dev/null; direct_backends "${NODES[2]}")" = t ]'
check "within 3 s the gateway reads its item straight from n2" "t $P" \
    "$(direct_backends "${NODES[2]}") $(call GetItem "{\"TableName\": \"Direct\", \"Key\": {\"pk\": {\"S\": \"${KEY_OF[$P]}\"}, \"sk\": {\"S\": \"a\"}}}" | grep -o '"N": "[0-9]*"' | grep -o '[0-9]*')"
check "a put of the partition lands on n2 (which holds its two items; n0 the 7 others)" "2 7" \
    "$(call PutItem "{\"TableName\": \"Direct\", \"Item\": {\"pk\": {\"S\": \"${KEY_OF[$P]}\"}, \"sk\": {\"S\": \"b\"}}}" >/dev/null
      q -d "${NODES[2]}" -c "SELECT count(*) FROM ddb.scan('Direct')") $(q -d "${NODES[0]}" -c "SELECT count(*) FROM ddb.scan('Direct')")"

# A write the node serves directly while a move begins: the move waits for it (after taking the
# partition from the node), so the copy holds it.
PARTITION_LOCK=$(q -c "SELECT ddb_router.lock_class('partition')")
PGAPPNAME=held q -d "${NODES[1]}" -c "BEGIN" \
    -c "SELECT ddb.execute_direct($P1, NULL, 'PutItem', '{\"TableName\": \"Direct\", \"Item\": {\"pk\": {\"S\": \"${KEY_OF[$P1]}\"}, \"sk\": {\"S\": \"held\"}}}')" \
    -c "SELECT pg_sleep(2)" -c "COMMIT" >/dev/null &
held_pid=$!
wait_for 10 '[ "$(q -d "${NODES[1]}" -c "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.application_name = '"'held'"'
    AND l.locktype = '"'advisory'"' AND l.classid = $PARTITION_LOCK AND l.objid = $P1 AND l.objsubid = 3 AND l.granted")" = 1 ]'
started=$SECONDS
check "partition $P1 moves to n2 while a write sent straight to n1 holds its lock" "0" \
    "$(q -c "CALL ddb_router.move_partition($P1, 'n2')" 2>"$WORK/move2.log"; echo $?)"
wait $held_pid
held_item="SELECT ddb.get_item('Direct', ddb.ddb_key('${KEY_OF[$P1]}'), ddb.ddb_key('held')) IS NOT NULL"
check "the move waited for the write, which it copied to n2 (and removed from n1)" "t t f" \
    "$([ $((SECONDS - started)) -ge 1 ] && echo t || echo f) $(q -d "${NODES[2]}" -c "$held_item") $(q -d "${NODES[1]}" -c "$held_item")"

# A move that fails while copying (n2 refuses an item of the partition) gives the partition back to its node.
P2=$(q -d "${NODES[1]}" -c "SELECT min(partition) FROM ddb.direct_partitions")
q -d "${NODES[2]}" -c "CREATE FUNCTION public.refuse() RETURNS trigger LANGUAGE plpgsql AS \$\$
    BEGIN RAISE EXCEPTION 'refused for the test'; END \$\$" \
    -c "CREATE TRIGGER refuse BEFORE INSERT ON public.\"Direct\" FOR EACH ROW EXECUTE FUNCTION public.refuse()"
q -c "CALL ddb_router.move_partition($P2, 'n2')" >/dev/null 2>&1
check "a move that fails gives the partition back to its node, direct again" "n1 1 0 t" \
    "$(node_of "$P2") $(q -d "${NODES[1]}" -c "SELECT count(*) FROM ddb.direct_partitions WHERE partition = $P2") $(
      q -d "${NODES[2]}" -c "SELECT count(*) FROM ddb.direct_partitions WHERE partition = $P2") $(
      q -c "SELECT direct FROM ddb_router.partitions WHERE partition = $P2")"
q -d "${NODES[2]}" -c "DROP TRIGGER refuse ON public.\"Direct\""

# A stale map costs a trip through the router, no wrong answer: n1 is told to serve nothing directly
# behind the router's back; the gateway still sends n1's partitions there, and they answer through the router.
q -d "${NODES[1]}" -c "DELETE FROM ddb.direct_partitions"
check "requests a node refuses are answered through the router" "${KEY_OF[$P2]} 200" \
    "$(call GetItem "{\"TableName\": \"Direct\", \"Key\": {\"pk\": {\"S\": \"${KEY_OF[$P2]}\"}, \"sk\": {\"S\": \"a\"}}}" | grep -o "${KEY_OF[$P2]}\\| [0-9]*$" | tr -d '\n')"

stop_gateway
drop_db "$ROUTER" "${NODES[@]}"
q -d postgres -c "DROP ROLE ddb_direct_hostile" -c "DROP ROLE ddb_direct_gw"
done_testing
