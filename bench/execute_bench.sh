#!/usr/bin/env bash
# bench/execute_bench.sh — ddb.execute against the hand-written SQL that
# answers the same request with the same DynamoDB JSON (issue 16, target 3):
# GetItem, Query begins_with (20 items, Limit 20), BatchGetItem of 100 keys
# and BatchWriteItem of 25 puts, with pgbench on 1 and 8 clients, in rounds
# where the two take turns.
#
#   bash bench/execute_bench.sh
#   BENCH_USERS=20000 BENCH_ROUNDS=5 BENCH_SECONDS=10 bash bench/execute_bench.sh
#   BENCH_OPERATIONS=batchwrite BENCH_PROFILE=1 bash bench/execute_bench.sh
#
# BENCH_OPERATIONS picks some of get, query, batchget and batchwrite;
# BENCH_PROFILE=1 then records the backend of one client running the last
# of them through ddb.execute (perf record -g -p, BENCH_SECONDS) and writes
# its report to build/execute_bench/profile.txt.
#
# Both sides hold BENCH_USERS users of 20 items (user_service-shaped, no
# GSIs).  The baseline is what a hand-written service would keep: a table of
# (pk, sk, item) with text COLLATE "C" keys and the item stored as DynamoDB
# JSON already, so that its SELECT returns it as it is; it answers with the
# response's shape (Item; Items, Count, ScannedCount; Responses), built in
# the same statement with json_agg (which writes each item's text; jsonb_agg,
# which rebuilds every item value by value, made the baseline's Query three
# times slower than ddb.execute's).  ddb.execute gets the request as JSON text, as from a
# client, cast to jsonb; the baseline gets the keys as parameters.  Batches
# are drawn from prepared requests (a table of request texts, the baseline's
# keys or items beside them), which both sides read the same way; batch
# writes overwrite items after their first pass.  Prints a markdown report
# (also build/execute_bench/report.md).
set -euo pipefail
export CLUSTER_NAME=execbench DDB_PGPORT=${DDB_PGPORT:-55439}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"
source "$ROOT/bench/lib/stats.sh"

USERS=${BENCH_USERS:-10000}
ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_PER_RUN=${BENCH_SECONDS:-8}
CLIENTS=(1 8)
BATCHES=${BENCH_BATCHES:-2000}
OUT="$ROOT/build/execute_bench"
rm -rf "$OUT" && mkdir -p "$OUT"

install_packages
build_and_install
SERVER_OPTS="-c shared_buffers=1GB -c max_wal_size=8GB -c checkpoint_timeout=30min -c synchronous_commit=off"
start_cluster
trap stop_cluster EXIT
cluster_psql -q -c "CREATE DATABASE ddb_execbench"
psql_bench() { cluster_psql -q -v ON_ERROR_STOP=1 -d ddb_execbench "$@"; }

echo "== loading $((USERS * 20)) items into each side, and $BATCHES prepared batches of each kind"
psql_bench -v users="$USERS" -v batches="$BATCHES" <<'SQL'
CREATE EXTENSION ddb_model;
CREATE EXTENSION pg_prewarm;
-- user_service-shaped items: USER#<u> / EMAIL#<uuid>
CREATE FUNCTION bench_item(i bigint) RETURNS jsonb LANGUAGE sql IMMUTABLE RETURN jsonb_build_object(
    'PK', 'USER#' || (i / 20), 'SK', 'EMAIL#' || md5(i::text)::uuid,
    'GSI1PK', 'EMAIL#' || md5(i::text) || '@example.com', 'GSI1SK', 'USER#' || (i / 20),
    'GSI2PK', 'STATUS#' || (i % 7), 'email', md5(i::text) || '@example.com',
    'isPrimary', i % 20 = 0, 'isVerified', true, 'createdAt', '2024-02-10T14:30:00Z', 'n', i);
SELECT ddb.create_table('Bench', 'PK', 'S', 'SK', 'S');
SELECT count(ddb.put_item('Bench', bench_item(i))) FROM generate_series(0, :users * 20 - 1) i;
CREATE TABLE base (pk text COLLATE "C", sk text COLLATE "C", item jsonb NOT NULL, PRIMARY KEY (pk, sk));
INSERT INTO base SELECT bench_item(i)->>'PK', bench_item(i)->>'SK', ddb.to_dynamodb(bench_item(i))
FROM generate_series(0, :users * 20 - 1) i;

-- GetItem and Query requests as a client sends them, built from the key; STABLE as format() is, so
-- that the planner inlines them (an IMMUTABLE one would be run by fmgr_sql, parsing its body each call)
CREATE FUNCTION get_request(u int, e int) RETURNS text LANGUAGE sql STABLE RETURN format(
    '{"TableName": "Bench", "Key": {"PK": {"S": "USER#%s"}, "SK": {"S": "EMAIL#%s"}}}',
    u, md5((u * 20 + e)::text)::uuid);
CREATE FUNCTION query_request(u int) RETURNS text LANGUAGE sql STABLE RETURN format(
    '{"TableName": "Bench", "KeyConditionExpression": "PK = :p AND begins_with(SK, :s)", '
    '"ExpressionAttributeValues": {":p": {"S": "USER#%s"}, ":s": {"S": "EMAIL#"}}, "Limit": 20}', u);

-- BatchGetItem: 100 random existing keys; BatchWriteItem: 25 puts of items beyond the loaded ones
CREATE TABLE batch_get (n int PRIMARY KEY, request text NOT NULL, pks text NOT NULL, sks text NOT NULL);
INSERT INTO batch_get
SELECT n, jsonb_build_object('RequestItems', jsonb_build_object('Bench', jsonb_build_object('Keys',
           jsonb_agg(jsonb_build_object('PK', jsonb_build_object('S', it->>'PK'), 'SK', jsonb_build_object('S', it->>'SK'))))))::text,
       array_agg(it->>'PK')::text, array_agg(it->>'SK')::text
FROM (SELECT n, bench_item(((n * 7919 + k * 104729) % (:users * 20))::bigint) it
      FROM generate_series(0, :batches - 1) n, generate_series(0, 99) k) s
GROUP BY n;
CREATE TABLE batch_write (n int PRIMARY KEY, request text NOT NULL, items text NOT NULL);
INSERT INTO batch_write
SELECT n, jsonb_build_object('RequestItems', jsonb_build_object('Bench',
           jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item', ddb.to_dynamodb(it))))))::text,
       jsonb_agg(ddb.to_dynamodb(it))::text
FROM (SELECT n, bench_item(:users * 20 + n * 25 + k) it FROM generate_series(0, :batches - 1) n, generate_series(0, 24) k) s
GROUP BY n;
VACUUM ANALYZE;
SELECT sum(pg_prewarm(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i', 't') \g /dev/null
SQL

# Every pair must answer alike before it is timed: the same items, in DynamoDB JSON.
echo "== checking that both sides answer alike"
same=$(psql_bench -At <<'SQL'
SELECT (SELECT ddb.execute('GetItem', get_request(7, 3)::jsonb)) =
       (SELECT jsonb_build_object('Item', item) FROM base
        WHERE pk = 'USER#7' AND sk = 'EMAIL#' || md5((7 * 20 + 3)::text)::uuid)
   AND (SELECT ddb.execute('Query', query_request(7)::jsonb) - 'LastEvaluatedKey') =
       (SELECT json_build_object('Items', json_agg(item ORDER BY sk), 'Count', count(*), 'ScannedCount', count(*))::jsonb
        FROM (SELECT sk, item FROM base WHERE pk = 'USER#7' AND sk ^@ 'EMAIL#' ORDER BY sk LIMIT 20) q)
   AND (SELECT jsonb_array_length(ddb.execute('BatchGetItem', request::jsonb)->'Responses'->'Bench')
        FROM batch_get WHERE n = 5) = 100;
SQL
)
[ "$same" = t ] || { echo "ddb.execute and the baseline answer differently" >&2; exit 1; }

key="\\set u random(0, $((USERS - 1)))
\\set e random(0, 19)"
batch="\\set n random(0, $((BATCHES - 1)))"
cat >"$OUT/get_execute.sql" <<EOF
$key
SELECT ddb.execute('GetItem', get_request(:u, :e)::jsonb);
EOF
cat >"$OUT/get_baseline.sql" <<EOF
$key
SELECT jsonb_build_object('Item', item) FROM base WHERE pk = 'USER#' || :u AND sk = 'EMAIL#' || md5((:u * 20 + :e)::text)::uuid;
EOF
cat >"$OUT/query_execute.sql" <<EOF
$key
SELECT ddb.execute('Query', query_request(:u)::jsonb);
EOF
cat >"$OUT/query_baseline.sql" <<EOF
$key
SELECT json_build_object('Items', json_agg(item ORDER BY sk), 'Count', count(*), 'ScannedCount', count(*))
FROM (SELECT sk, item FROM base WHERE pk = 'USER#' || :u AND sk ^@ 'EMAIL#' ORDER BY sk LIMIT 20) q;
EOF
cat >"$OUT/batchget_execute.sql" <<EOF
$batch
SELECT ddb.execute('BatchGetItem', request::jsonb) FROM batch_get WHERE n = :n;
EOF
cat >"$OUT/batchget_baseline.sql" <<EOF
$batch
SELECT json_build_object('Responses', json_build_object('Bench', json_agg(b.item)), 'UnprocessedKeys', '{}'::json)
FROM batch_get r, unnest(r.pks::text[], r.sks::text[]) k(pk, sk) JOIN base b ON b.pk = k.pk AND b.sk = k.sk
WHERE r.n = :n;
EOF
cat >"$OUT/batchwrite_execute.sql" <<EOF
$batch
SELECT ddb.execute('BatchWriteItem', request::jsonb) FROM batch_write WHERE n = :n;
EOF
cat >"$OUT/batchwrite_baseline.sql" <<EOF
$batch
INSERT INTO base SELECT e->'PK'->>'S', e->'SK'->>'S', e FROM batch_write r, jsonb_array_elements(r.items::jsonb) e
WHERE r.n = :n ON CONFLICT (pk, sk) DO UPDATE SET item = EXCLUDED.item;
EOF

declare -A TPS
run() {  # script, clients: appends tps to TPS[script,clients]
    local log="$OUT/pgbench-$1-$2.log"
    pgbench -n -M prepared -c "$2" -j "$(( $2 < 2 ? $2 : 2 ))" -T "$SECONDS_PER_RUN" -f "$OUT/$1.sql" \
        -h "$SOCKET_DIR" -p "$PGPORT_NUM" -U postgres ddb_execbench >"$log" 2>&1 || { tail -5 "$log" >&2; return 1; }
    TPS[$1,$2]+="$(awk '/^tps/ { printf "%.0f", $3 }' "$log") "
}
read -ra OPERATIONS <<<"${BENCH_OPERATIONS:-get query batchget batchwrite}"
for op in "${OPERATIONS[@]}"; do
    echo "== warm-up: $op"
    run "${op}_execute" 8
    run "${op}_baseline" 8
done
TPS=()
for op in "${OPERATIONS[@]}"; do
    for clients in "${CLIENTS[@]}"; do
        for round in $(seq "$ROUNDS"); do
            echo "== $op, $clients clients, round $round of $ROUNDS (${SECONDS_PER_RUN}s each)"
            run "${op}_execute" "$clients"
            run "${op}_baseline" "$clients"
        done
    done
done

# The call graph of one client's backend running the last operation through ddb.execute.
profile() {  # operation
    local log="$OUT/pgbench-profile.log" pid
    pgbench -n -M prepared -c 1 -T $((SECONDS_PER_RUN + 4)) -f "$OUT/$1_execute.sql" \
        -h "$SOCKET_DIR" -p "$PGPORT_NUM" -U postgres ddb_execbench >"$log" 2>&1 &
    local bench=$!
    sleep 1
    pid=$(psql_bench -At -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' LIMIT 1")
    perf record -q -g -o "$OUT/perf.data" -p "$pid" -- sleep "$SECONDS_PER_RUN" >/dev/null 2>&1
    wait "$bench"
    perf report -q -i "$OUT/perf.data" --no-children --percent-limit 1 --stdio >"$OUT/profile.txt" 2>/dev/null
    perf report -q -i "$OUT/perf.data" --children --percent-limit 2 --stdio -g none >"$OUT/profile-children.txt" 2>/dev/null
    echo "== profile of $1 (one client) in $OUT/profile.txt and profile-children.txt"
}
[ -n "${BENCH_PROFILE:-}" ] && profile "${OPERATIONS[-1]}"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
declare -A LABEL=([get]="GetItem" [query]="Query begins_with, Limit 20 (20 items)" [batchget]="BatchGetItem, 100 keys"
    [batchwrite]="BatchWriteItem, 25 puts")
{
    echo "### ddb.execute against hand-written SQL answering in DynamoDB JSON"
    echo
    echo "Command: \`BENCH_USERS=$USERS BENCH_ROUNDS=$ROUNDS BENCH_SECONDS=$SECONDS_PER_RUN bash bench/execute_bench.sh\`"
    echo "($(date -u +%Y-%m-%d), $(nproc) cores, PostgreSQL $(psql_bench -At -c 'SHOW server_version' | cut -d' ' -f1)," \
         "pgbench -M prepared, synchronous_commit off; $((USERS * 20)) items; ddb_model at $(git -C "$ROOT" rev-parse --short HEAD).)"
    echo
    echo "Transactions/s: median of $ROUNDS rounds (lowest–highest); the two take turns within each round."
    echo
    echo "| operation | clients | ddb.execute | hand-written SQL | ddb.execute / SQL |"
    echo "|---|---:|---:|---:|---:|"
    for op in "${OPERATIONS[@]}"; do
        for clients in "${CLIENTS[@]}"; do
            e=$(median "${TPS[${op}_execute,$clients]}")
            b=$(median "${TPS[${op}_baseline,$clients]}")
            echo "| ${LABEL[$op]} | $clients | $e ($(spread "${TPS[${op}_execute,$clients]}")) | $b ($(spread "${TPS[${op}_baseline,$clients]}")) | $(ratio "$e" "$b") |"
        done
    done
} | tee "$OUT/report.md"
