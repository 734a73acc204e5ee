#!/usr/bin/env bash
# bench/condition_bench.sh — the cost of a ConditionExpression: PutItem
# through ddb.execute and through ddb.put_item, with and without a
# condition, on new items (insert with attribute_not_exists, the uniqueness
# claim) and on existing ones (overwrite with an optimistic-lock condition),
# pgbench on 1 client.
#
#   bash bench/condition_bench.sh                 # 100,000 items, 3 rounds of 10 s
#   BENCH_SECONDS=5 BENCH_ROUNDS=2 bash bench/condition_bench.sh
#
# Contenders alternate within each round so that drift hits both alike; the
# report gives the median tps per contender and the conditional/plain ratio.
# Writes run with synchronous_commit off, as in bench/table_bench.sh.
set -euo pipefail
export CLUSTER_NAME=bench DDB_PGPORT=${DDB_PGPORT:-55434}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"

ITEMS=${BENCH_ITEMS:-100000}
SECONDS_PER_RUN=${BENCH_SECONDS:-10}
ROUNDS=${BENCH_ROUNDS:-3}
OUT_DIR="$ROOT/build/bench"
REPORT="$OUT_DIR/condition_bench.md"
SCRIPTS="$OUT_DIR/condition-scripts"
mkdir -p "$OUT_DIR" "$SCRIPTS"

install_packages
build_and_install
SERVER_OPTS="-c shared_buffers=2GB -c max_wal_size=8GB -c checkpoint_timeout=30min -c synchronous_commit=off"
start_cluster
trap stop_cluster EXIT
psql_bench() { cluster_psql -q -v ON_ERROR_STOP=1 -d ddb_cond "$@"; }

echo "== loading $ITEMS items"
cluster_psql -q -c "DROP DATABASE IF EXISTS ddb_cond" -c "CREATE DATABASE ddb_cond"
psql_bench -v items="$ITEMS" <<'SQL'
CREATE EXTENSION ddb_model;
SELECT ddb.create_table('Cond', 'PK', 'S', 'SK', 'S');
SELECT ddb.put_item('Cond', jsonb_build_object('PK', 'USER#' || i, 'SK', 'PROFILE', 'version', 1, 'name', md5(i::text)))
FROM generate_series(0, :items - 1) i \g /dev/null
VACUUM ANALYZE;
-- new items take ids from a sequence, so that a claim never collides
CREATE SEQUENCE new_ids START :items;
-- DynamoDB JSON requests, built here because pgbench would take their
-- :placeholders for its own variables
CREATE FUNCTION put_request(i bigint, kind text) RETURNS jsonb LANGUAGE sql IMMUTABLE RETURN (format(
    '{"TableName": "Cond", "Item": {"PK": {"S": "USER#%s"}, "SK": {"S": "PROFILE"}, "version": {"N": "1"}, '
    '"name": {"S": "%s"}}}', i, md5(i::text))::jsonb || CASE kind
    WHEN 'claim' THEN '{"ConditionExpression": "attribute_not_exists(PK)"}'::jsonb
    WHEN 'lock' THEN '{"ConditionExpression": "attribute_exists(PK) AND version = :v",
                       "ExpressionAttributeValues": {":v": {"N": "1"}}}'::jsonb
    ELSE '{}'::jsonb END);
-- the same for ddb.put_item: a natural item, the lock's condition and values
CREATE FUNCTION natural_item(i bigint) RETURNS jsonb LANGUAGE sql IMMUTABLE RETURN
    jsonb_build_object('PK', 'USER#' || i, 'SK', 'PROFILE', 'version', 1, 'name', md5(i::text));
CREATE FUNCTION lock_condition() RETURNS text LANGUAGE sql IMMUTABLE RETURN 'attribute_exists(PK) AND version = :v';
CREATE FUNCTION lock_vals() RETURNS jsonb LANGUAGE sql IMMUTABLE RETURN '{":v": 1}'::jsonb;
SQL

new="SELECT nextval('new_ids') AS i \\gset"
old="\\set i random(0, $((ITEMS - 1)))"
write_script() {  # name, line that sets :i, request kind (plain, claim, lock)
    printf '%s\nSELECT ddb.execute('"'"'PutItem'"'"', put_request(:i, '"'"'%s'"'"'));\n' "$2" "$3" >"$SCRIPTS/$1.sql"
}
write_script insert_plain "$new" plain
write_script insert_cond "$new" claim
write_script overwrite_plain "$old" plain
write_script overwrite_cond "$old" lock
write_sql_script() {  # name, line that sets :i, extra arguments of ddb.put_item
    printf '%s\nSELECT ddb.put_item('"'"'Cond'"'"', natural_item(:i)%s);\n' "$2" "$3" >"$SCRIPTS/$1.sql"
}
write_sql_script sql_insert_plain "$new" ""
write_sql_script sql_insert_cond "$new" ", condition => 'attribute_not_exists(PK)'"
write_sql_script sql_overwrite_plain "$old" ""
write_sql_script sql_overwrite_cond "$old" ", condition => lock_condition(), vals => lock_vals()"
NAMES=(insert_plain insert_cond overwrite_plain overwrite_cond
       sql_insert_plain sql_insert_cond sql_overwrite_plain sql_overwrite_cond)

run() {  # script -> tps
    local log="$OUT_DIR/pgbench-cond-$1.log"
    pgbench -n -M prepared -c 1 -j 1 -T "$SECONDS_PER_RUN" -f "$SCRIPTS/$1.sql" \
        -h "$SOCKET_DIR" -p "$PGPORT_NUM" -U postgres ddb_cond >"$log" 2>&1 ||
        { tail -5 "$log" >&2; return 1; }
    awk '/^tps/ {printf "%.0f", $3}' "$log"
}
median() { tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

echo "== warm-up"
for name in "${NAMES[@]}"; do run "$name" >/dev/null; done
declare -A RESULTS
for round in $(seq "$ROUNDS"); do
    for name in "${NAMES[@]}"; do
        tps=$(run "$name")
        echo "round $round $name: $tps tps"
        RESULTS[$name]="${RESULTS[$name]:-} $tps"
    done
done
declare -A MEDIAN
for name in "${NAMES[@]}"; do MEDIAN[$name]=$(echo "${RESULTS[$name]}" | xargs | median); done

{
    echo "ConditionExpression cost: $ITEMS items, $(nproc) cores," \
         "PostgreSQL $(psql_bench -At -c 'SHOW server_version' | cut -d' ' -f1), pgbench -M prepared, 1 client," \
         "median of $ROUNDS alternating ${SECONDS_PER_RUN}s runs, synchronous_commit off."
    echo
    echo "| PutItem through ddb.execute | plain, tps | conditional, tps | plain/conditional |"
    echo "|---|---|---|---|"
    echo "| new item; condition attribute_not_exists(PK) | ${MEDIAN[insert_plain]} | ${MEDIAN[insert_cond]} |" \
         "$(ratio "${MEDIAN[insert_plain]}" "${MEDIAN[insert_cond]}")x |"
    echo "| existing item; condition attribute_exists(PK) AND version = :v | ${MEDIAN[overwrite_plain]} |" \
         "${MEDIAN[overwrite_cond]} | $(ratio "${MEDIAN[overwrite_plain]}" "${MEDIAN[overwrite_cond]}")x |"
    echo
    echo "| ddb.put_item | plain, tps | conditional, tps | plain/conditional |"
    echo "|---|---|---|---|"
    echo "| new item; condition attribute_not_exists(PK) | ${MEDIAN[sql_insert_plain]} | ${MEDIAN[sql_insert_cond]} |" \
         "$(ratio "${MEDIAN[sql_insert_plain]}" "${MEDIAN[sql_insert_cond]}")x |"
    echo "| existing item; condition attribute_exists(PK) AND version = :v | ${MEDIAN[sql_overwrite_plain]} |" \
         "${MEDIAN[sql_overwrite_cond]} | $(ratio "${MEDIAN[sql_overwrite_plain]}" "${MEDIAN[sql_overwrite_cond]}")x |"
} | tee "$REPORT"
