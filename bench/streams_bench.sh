#!/usr/bin/env bash
# bench/streams_bench.sh — what a stream costs a write: ddb.put_item of new
# items and overwrites of existing ones into a table without a stream and
# into tables with a KEYS_ONLY and a NEW_AND_OLD_IMAGES stream, pgbench with
# 1 and 2 clients; and GetRecords reading the records back.
#
#   bash bench/streams_bench.sh                   # 100,000 items, 3 rounds of 10 s
#   BENCH_SECONDS=5 BENCH_ROUNDS=2 bash bench/streams_bench.sh
#
# Contenders alternate within each round; the report gives the median tps
# and the ratio to the table without a stream.  Writes run with
# synchronous_commit off, as in the other benchmarks.
set -euo pipefail
export CLUSTER_NAME=bench DDB_PGPORT=${DDB_PGPORT:-55434}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"

ITEMS=${BENCH_ITEMS:-100000}
SECONDS_PER_RUN=${BENCH_SECONDS:-10}
ROUNDS=${BENCH_ROUNDS:-3}
OUT_DIR="$ROOT/build/bench"
REPORT="$OUT_DIR/streams_bench.md"
SCRIPTS="$OUT_DIR/streams-scripts"
mkdir -p "$OUT_DIR" "$SCRIPTS"

install_packages
build_and_install
SERVER_OPTS="-c shared_buffers=2GB -c max_wal_size=8GB -c checkpoint_timeout=30min -c synchronous_commit=off"
start_cluster
trap stop_cluster EXIT
psql_bench() { cluster_psql -q -v ON_ERROR_STOP=1 -d ddb_streams "$@"; }

TABLES=(NoStream KeysOnly Images)
echo "== loading $ITEMS items into each table"
cluster_psql -q -c "DROP DATABASE IF EXISTS ddb_streams" -c "CREATE DATABASE ddb_streams"
psql_bench -v items="$ITEMS" <<'SQL'
CREATE EXTENSION ddb_model;
CREATE FUNCTION bench_table(name text, view_type text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ddb.execute('CreateTable', jsonb_build_object('TableName', name, 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', '[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}]'::jsonb,
    'AttributeDefinitions', '[{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}]'::jsonb)
    || CASE WHEN view_type IS NULL THEN '{}'::jsonb
            ELSE jsonb_build_object('StreamSpecification', jsonb_build_object('StreamEnabled', true, 'StreamViewType', view_type)) END);
END $$;
SELECT bench_table('NoStream', NULL), bench_table('KeysOnly', 'KEYS_ONLY'), bench_table('Images', 'NEW_AND_OLD_IMAGES');
-- STABLE as its body is (jsonb_build_object): marked IMMUTABLE it would not be inlined, and would be planned on every call
CREATE FUNCTION natural_item(i bigint, v int) RETURNS jsonb LANGUAGE sql STABLE RETURN
    jsonb_build_object('PK', 'USER#' || i, 'SK', 'PROFILE', 'version', v, 'name', md5(i::text),
                       'email', 'user' || i || '@example.com', 'createdAt', '2026-03-17T10:30:00.000Z');
SELECT count(ddb.put_item(t, natural_item(i, 1))) FROM generate_series(0, :items - 1) i,
       unnest(ARRAY['NoStream', 'KeysOnly', 'Images']) t \g /dev/null
SELECT ddb.trim_stream_records();
TRUNCATE ddb.stream_records;
VACUUM ANALYZE;
CREATE SEQUENCE new_ids START :items;
SQL

for table in "${TABLES[@]}"; do
    printf "SELECT nextval('new_ids') AS i \\\\gset\nSELECT ddb.put_item('%s', natural_item(:i, 1));\n" "$table" \
        >"$SCRIPTS/insert_$table.sql"
    printf "\\\\set i random(0, %d)\n\\\\set v random(2, 1000000)\nSELECT ddb.put_item('%s', natural_item(:i, :v));\n" \
        $((ITEMS - 1)) "$table" >"$SCRIPTS/overwrite_$table.sql"
done
NAMES=()
for kind in insert overwrite; do for table in "${TABLES[@]}"; do NAMES+=("${kind}_$table"); done; done

run() {  # script, clients -> tps
    local log="$OUT_DIR/pgbench-streams-$1-$2.log"
    pgbench -n -M prepared -c "$2" -j "$2" -T "$SECONDS_PER_RUN" -f "$SCRIPTS/$1.sql" \
        -h "$SOCKET_DIR" -p "$PGPORT_NUM" -U postgres ddb_streams >"$log" 2>&1 ||
        { tail -5 "$log" >&2; return 1; }
    awk '/^tps/ {printf "%.0f", $3}' "$log"
}
median() { tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

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

# reading: every record of the Images stream, 1,000 per GetRecords
records=$(psql_bench -At -c "SELECT count(*) FROM ddb.stream_records WHERE table_name = 'Images'")
read_seconds=$(psql_bench -At <<'SQL'
DO $$
DECLARE
  arn text := ddb.execute('DescribeTable', '{"TableName": "Images"}') -> 'Table' ->> 'LatestStreamArn';
  it text;
  page jsonb;
  started timestamptz := clock_timestamp();
BEGIN
  it := ddb.execute('GetShardIterator', jsonb_build_object('StreamArn', arn,
          'ShardId', ddb.execute('DescribeStream', jsonb_build_object('StreamArn', arn)) -> 'StreamDescription' -> 'Shards' -> 0 ->> 'ShardId',
          'ShardIteratorType', 'TRIM_HORIZON')) ->> 'ShardIterator';
  LOOP
    page := ddb.execute('GetRecords', jsonb_build_object('ShardIterator', it));
    EXIT WHEN jsonb_array_length(page -> 'Records') = 0;
    it := page ->> 'NextShardIterator';
  END LOOP;
  PERFORM set_config('bench.read_seconds', extract(epoch FROM clock_timestamp() - started)::text, false);
END $$;
SELECT current_setting('bench.read_seconds');
SQL
)

{
    echo "Streams cost: $ITEMS items per table, $(nproc) cores," \
         "PostgreSQL $(psql_bench -At -c 'SHOW server_version' | cut -d' ' -f1), ddb.put_item through pgbench -M prepared," \
         "median of $ROUNDS alternating ${SECONDS_PER_RUN}s runs, synchronous_commit off."
    echo
    echo "| write | clients | no stream, tps | KEYS_ONLY, tps | ratio | NEW_AND_OLD_IMAGES, tps | ratio |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for kind in insert overwrite; do
        for clients in 1 2; do
            base=${MEDIAN[${kind}_NoStream,$clients]}
            keys=${MEDIAN[${kind}_KeysOnly,$clients]}
            images=${MEDIAN[${kind}_Images,$clients]}
            echo "| $kind | $clients | $base | $keys | $(ratio "$keys" "$base") | $images | $(ratio "$images" "$base") |"
        done
    done
    echo
    echo "Reading the NEW_AND_OLD_IMAGES stream back: $records records with GetRecords (1,000 per call) in" \
         "$(awk -v s="$read_seconds" 'BEGIN {printf "%.2f", s}') s ($(awk -v n="$records" -v s="$read_seconds" 'BEGIN {printf "%.0f", n / s}') records/s)."
} | tee "$REPORT"
