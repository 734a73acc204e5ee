#!/usr/bin/env bash
# bench/pitr_bench.sh — what point-in-time recovery costs a write, and how
# fast its history is read back: PutItem (new items and overwrites) and
# UpdateItem through ddb.execute into a table without and a table with
# point-in-time recovery, pgbench with 1 and 2 clients; then, on a table of
# BENCH_RESTORE_ITEMS items, the time to turn it on (the items copied in as
# the first versions), the rate at which ddb.pitr_items reads them back and
# the rate of a RestoreTableToPointInTime of them (its background job).
#
#   bash bench/pitr_bench.sh                   # 100,000 items per table, 3 rounds of 10 s, 1,000,000 to read back
#   BENCH_SECONDS=5 BENCH_ROUNDS=2 BENCH_RESTORE_ITEMS=100000 bash bench/pitr_bench.sh
#
# Contenders alternate within each round; the report gives the median tps
# and the ratio to the table without point-in-time recovery.  Writes run
# with synchronous_commit off, as in the other benchmarks.
set -euo pipefail
export CLUSTER_NAME=bench DDB_PGPORT=${DDB_PGPORT:-55434}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"

ITEMS=${BENCH_ITEMS:-100000}
SECONDS_PER_RUN=${BENCH_SECONDS:-10}
ROUNDS=${BENCH_ROUNDS:-3}
RESTORE_ITEMS=${BENCH_RESTORE_ITEMS:-1000000}
OUT_DIR="$ROOT/build/bench"
REPORT="$OUT_DIR/pitr_bench.md"
SCRIPTS="$OUT_DIR/pitr-scripts"
mkdir -p "$OUT_DIR" "$SCRIPTS"

install_packages
build_and_install
SERVER_OPTS="-c shared_buffers=2GB -c max_wal_size=8GB -c checkpoint_timeout=30min -c synchronous_commit=off"
start_cluster
trap stop_cluster EXIT
psql_bench() { cluster_psql -q -v ON_ERROR_STOP=1 -d ddb_pitr "$@"; }

TABLES=(NoPitr Pitr)
echo "== loading $ITEMS items into each table"
cluster_psql -q -c "DROP DATABASE IF EXISTS ddb_pitr" -c "CREATE DATABASE ddb_pitr"
psql_bench -v items="$ITEMS" <<'SQL'
CREATE EXTENSION ddb_model;
CREATE FUNCTION bench_table(name text) RETURNS void LANGUAGE sql AS $$
  SELECT ddb.execute('CreateTable', jsonb_build_object('TableName', name, 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', '[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}]'::jsonb,
    'AttributeDefinitions', '[{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}]'::jsonb)) $$;
SELECT bench_table('NoPitr'), bench_table('Pitr') \g /dev/null
-- STABLE as its body is (jsonb_build_object): marked IMMUTABLE it would not be inlined, and would be planned on every call
CREATE FUNCTION put_request(t text, i bigint, v int) RETURNS jsonb LANGUAGE sql STABLE RETURN
    jsonb_build_object('TableName', t, 'Item', jsonb_build_object(
        'PK', jsonb_build_object('S', 'USER#' || i), 'SK', '{"S": "PROFILE"}'::jsonb,
        'version', jsonb_build_object('N', v::text), 'name', jsonb_build_object('S', md5(i::text)),
        'email', jsonb_build_object('S', 'user' || i || '@example.com'),
        'createdAt', '{"S": "2026-03-17T10:30:00.000Z"}'::jsonb));
CREATE FUNCTION update_request(t text, i bigint, v int) RETURNS jsonb LANGUAGE sql STABLE RETURN
    jsonb_build_object('TableName', t, 'Key', jsonb_build_object('PK', jsonb_build_object('S', 'USER#' || i), 'SK', '{"S": "PROFILE"}'::jsonb),
        'UpdateExpression', 'SET version = :v', 'ExpressionAttributeValues', jsonb_build_object(':v', jsonb_build_object('N', v::text)));
SELECT count(ddb.execute('PutItem', put_request(t, i, 1))) FROM generate_series(0, :items - 1) i,
       unnest(ARRAY['NoPitr', 'Pitr']) t \g /dev/null
SELECT ddb.set_continuous_backups('Pitr', true) \g /dev/null
VACUUM ANALYZE;
CREATE SEQUENCE new_ids START :items;
SQL

for table in "${TABLES[@]}"; do
    printf "SELECT nextval('new_ids') AS i \\\\gset\nSELECT ddb.execute('PutItem', put_request('%s', :i, 1));\n" "$table" \
        >"$SCRIPTS/insert_$table.sql"
    printf "\\\\set i random(0, %d)\n\\\\set v random(2, 1000000)\nSELECT ddb.execute('PutItem', put_request('%s', :i, :v));\n" \
        $((ITEMS - 1)) "$table" >"$SCRIPTS/overwrite_$table.sql"
    printf "\\\\set i random(0, %d)\n\\\\set v random(2, 1000000)\nSELECT ddb.execute('UpdateItem', update_request('%s', :i, :v));\n" \
        $((ITEMS - 1)) "$table" >"$SCRIPTS/update_$table.sql"
done
KINDS=(insert overwrite update)
NAMES=()
for kind in "${KINDS[@]}"; do for table in "${TABLES[@]}"; do NAMES+=("${kind}_$table"); done; done

run() {  # script, clients -> tps
    local log="$OUT_DIR/pgbench-pitr-$1-$2.log"
    pgbench -n -M prepared -c "$2" -j "$2" -T "$SECONDS_PER_RUN" -f "$SCRIPTS/$1.sql" \
        -h "$SOCKET_DIR" -p "$PGPORT_NUM" -U postgres ddb_pitr >"$log" 2>&1 ||
        { tail -5 "$log" >&2; return 1; }
    awk '/^tps/ {printf "%.0f", $3}' "$log"
}
median() { tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b / a}'; }

echo "== warm-up"
for name in "${NAMES[@]}"; do run "$name" 1 >/dev/null; done
declare -A RESULTS
for round in $(seq "$ROUNDS"); do
    for clients in 1 2; do
        for name in "${NAMES[@]}"; do
            tps=$(run "$name" "$clients")
            echo "round $round, $clients clients, $name: $tps tps"
            RESULTS[$name,$clients]="${RESULTS[$name,$clients]:-} $tps"
        done
    done
done
declare -A MEDIAN
for key in "${!RESULTS[@]}"; do MEDIAN[$key]=$(echo "${RESULTS[$key]}" | xargs | median); done
versions=$(psql_bench -At -c 'SELECT count(*) FROM public."Pitr$pitr"')

# a table of RESTORE_ITEMS items: point-in-time recovery turned on (a copy
# of every item), every item read back by ddb.pitr_items, then restored
# into a new table by RestoreTableToPointInTime
echo "== $RESTORE_ITEMS items for reading back"
psql_bench -v items="$RESTORE_ITEMS" <<'SQL'
SELECT bench_table('Large') \g /dev/null
SELECT count(ddb.execute('PutItem', put_request('Large', i, 1))) FROM generate_series(0, :items - 1) i \g /dev/null
VACUUM ANALYZE public."Large";
SQL
seconds() {  # SQL -> the seconds it took
    printf '%s\n' "SELECT clock_timestamp() AS started \\gset" "$1 \\g /dev/null" \
        "SELECT extract(epoch FROM clock_timestamp() - :'started');" | psql_bench -At | tail -1
}
enable_seconds=$(seconds "SELECT ddb.set_continuous_backups('Large', true)")
psql_bench -c 'VACUUM ANALYZE public."Large$pitr"'
read_seconds=$(seconds "SELECT count(*) FROM ddb.pitr_items('Large', clock_timestamp())")
# RestoreTableToPointInTime: from the request to the restore's job COMPLETED
restore_seconds=$(seconds "SELECT ddb.execute('RestoreTableToPointInTime', '{\"SourceTableName\": \"Large\",
    \"TargetTableName\": \"LargeRestored\", \"UseLatestRestorableTime\": true}');
SELECT ddb.wait_for_job(job_id, 36000) FROM ddb.table_restores WHERE table_name = 'LargeRestored'")
restored=$(psql_bench -At -c 'SELECT count(*) FROM public."LargeRestored"')
rate() { awk -v n="$1" -v s="$2" 'BEGIN {printf "%.0f", n / s}'; }

{
    echo "Point-in-time recovery's cost: $ITEMS items per table, $(nproc) cores," \
         "PostgreSQL $(psql_bench -At -c 'SHOW server_version' | cut -d' ' -f1), ddb.execute through pgbench -M prepared," \
         "median of $ROUNDS alternating ${SECONDS_PER_RUN}s runs, synchronous_commit off."
    echo
    echo "| write | clients | off, tps | on, tps | write cost on / off |"
    echo "|---|---:|---:|---:|---:|"
    for kind in "${KINDS[@]}"; do
        for clients in 1 2; do
            off=${MEDIAN[${kind}_NoPitr,$clients]}
            on=${MEDIAN[${kind}_Pitr,$clients]}
            echo "| $kind | $clients | $off | $on | $(ratio "$on" "$off") |"
        done
    done
    echo
    echo "The history of the table with point-in-time recovery held $versions versions at the end."
    echo
    echo "$RESTORE_ITEMS items: turning point-in-time recovery on (every item copied in as a version)" \
         "$(awk -v s="$enable_seconds" 'BEGIN {printf "%.1f", s}') s ($(rate "$RESTORE_ITEMS" "$enable_seconds") items/s);" \
         "ddb.pitr_items reading them all back $(awk -v s="$read_seconds" 'BEGIN {printf "%.1f", s}') s" \
         "($(rate "$RESTORE_ITEMS" "$read_seconds") items/s);" \
         "RestoreTableToPointInTime of them, from the request to its job's end," \
         "$(awk -v s="$restore_seconds" 'BEGIN {printf "%.1f", s}') s ($(rate "$restored" "$restore_seconds") items/s, $restored items restored)."
} | tee "$REPORT"
