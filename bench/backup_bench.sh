#!/usr/bin/env bash
# bench/backup_bench.sh — CreateBackup and RestoreTableFromBackup of
# BENCH_ITEMS items (docs/backups.md), with and without a GSI.
#
#   bash bench/backup_bench.sh                  # 1,000,000 items
#   BENCH_ITEMS=100000 bash bench/backup_bench.sh
#
# Loads BENCH_ITEMS seed-shaped items (orders of users, as
# bench/transfer_bench.sh makes them, about 400 bytes each) into a table
# without indexes and into one with a KEYS_ONLY GSI, then times, for each:
#   - CreateBackup through ddb.execute (the copy is in the request);
#   - RestoreTableFromBackup: its answer (CREATING), and the background job
#     until the table is ACTIVE (items written, indexes rebuilt);
#   - reading the backup through its items function, as the job does;
#   - DeleteBackup;
# and checks that the restored items (and GSI entries) are the source's.
# Uses the installed extension (make install first if you changed it).
# Prints a markdown report (also build/bench/backup_bench.md).
set -euo pipefail
export CLUSTER_NAME=backupbench DDB_PGPORT=${DDB_PGPORT:-55442}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"

ITEMS=${BENCH_ITEMS:-1000000}
OUT_DIR="$ROOT/build/bench"
REPORT="$OUT_DIR/backup_bench.md"
mkdir -p "$OUT_DIR"

install_packages
if [ ! -f "$(pg_config --sharedir)/extension/ddb_model.control" ]; then
    build_and_install
fi
SERVER_OPTS="-c shared_buffers=4GB -c max_wal_size=8GB -c checkpoint_timeout=30min -c synchronous_commit=off"
start_cluster
trap stop_cluster EXIT
psql_bench() { cluster_psql -q -At -v ON_ERROR_STOP=1 -d ddb_bench "$@"; }

cluster_psql -q -c "CREATE DATABASE ddb_bench"
psql_bench <<'SQL'
CREATE EXTENSION ddb_model;
-- an order of a user, as the models' seeds shape their items (bench/transfer_bench.sh's)
CREATE FUNCTION bench_item(i bigint) RETURNS jsonb LANGUAGE sql IMMUTABLE RETURN jsonb_build_object(
    'PK', 'USER#' || md5((i / 10)::text)::uuid,
    'SK', 'ORDER#2026-' || lpad((1 + i % 12)::text, 2, '0') || '-' || lpad((1 + i % 28)::text, 2, '0')
          || 'T10:30:00.000Z#' || i,
    'status', (ARRAY['PLACED', 'PAID', 'SHIPPED', 'DELIVERED'])[1 + i % 4],
    'total', round((i % 100000) / 100.0 + 0.99, 2),
    'currency', 'EUR',
    'email', 'user' || (i / 10) || '@example.com',
    'lines', jsonb_build_array(jsonb_build_object('sku', 'SKU-' || (i % 997), 'qty', 1 + i % 3, 'price', 19.99)),
    'gift', i % 5 = 0,
    'tags', jsonb_build_object('$SS', jsonb_build_array('web', 'promo' || (i % 7))),
    'createdAt', '2026-03-17T10:30:00.000Z');
SELECT ddb.execute('CreateTable', '{"TableName": "Orders", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}]}') IS NOT NULL;
SELECT ddb.execute('CreateTable', '{"TableName": "OrdersIndexed", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"},
                           {"AttributeName": "status", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "ByStatus", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"},
                              {"AttributeName": "SK", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "KEYS_ONLY"}}]}') IS NOT NULL;
SQL

echo "== loading $ITEMS items into Orders and OrdersIndexed"
for table in Orders OrdersIndexed; do
    for ((first = 0; first < ITEMS; first += 100000)); do
        psql_bench -c "SELECT count(*) FROM (SELECT ddb.put_item('$table', bench_item(i))
                       FROM generate_series($first, $(( first + 100000 < ITEMS ? first + 100000 - 1 : ITEMS - 1 ))) i) p" >/dev/null
    done
done
psql_bench -c "VACUUM ANALYZE" -c "CHECKPOINT"

now() { date +%s.%N; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", n / s }'; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
rows=()
checks=()
ok=1
for table in Orders OrdersIndexed; do
    echo "== $table: CreateBackup"
    t0=$(now)
    arn=$(psql_bench -c "SELECT ddb.execute('CreateBackup', '{\"TableName\": \"$table\", \"BackupName\": \"bench\"}')
                         -> 'BackupDetails' ->> 'BackupArn'")
    t1=$(now)
    backup_s=$(elapsed "$t0" "$t1")
    bytes=$(psql_bench -c "SELECT size_bytes FROM ddb.backups WHERE backup_arn = '$arn'")
    psql_bench -c "CHECKPOINT"

    echo "== $table: RestoreTableFromBackup"
    t0=$(now)
    psql_bench -c "SELECT ddb.execute('RestoreTableFromBackup', '{\"TargetTableName\": \"${table}Restored\", \"BackupArn\": \"$arn\"}')" >/dev/null
    t1=$(now)
    job=$(psql_bench -c "SELECT job_id FROM ddb.table_restores WHERE table_name = '${table}Restored'")
    outcome=$(psql_bench -c "SELECT ddb.wait_for_job($job, 3600)")
    t2=$(now)
    answer_ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1000 }')
    restore_s=$(elapsed "$t0" "$t2")
    job_s=$(psql_bench -c "SELECT round(extract(epoch FROM ended_at - started_at)::numeric, 2) FROM ddb.jobs WHERE id = $job")

    # what the restore's job reads: the backup through its items function (a function in FROM is materialized)
    t0=$(now)
    psql_bench -c "SELECT count(*) FROM ddb.backup_items('{\"BackupArn\": \"$arn\"}')" >/dev/null
    t1=$(now)
    read_s=$(elapsed "$t0" "$t1")

    t0=$(now)
    psql_bench -c "SELECT ddb.execute('DeleteBackup', '{\"BackupArn\": \"$arn\"}')" >/dev/null
    t1=$(now)
    delete_s=$(elapsed "$t0" "$t1")

    same=$(psql_bench -c "SELECT (SELECT md5(string_agg(item::text, E'\n' ORDER BY pk, sk)) FROM \"$table\")
                               = (SELECT md5(string_agg(item::text, E'\n' ORDER BY pk, sk)) FROM \"${table}Restored\")")
    problems=$(psql_bench -c "SELECT count(*) FROM ddb.verify_gsi('${table}Restored')")
    gsi="no index"
    [ "$table" = OrdersIndexed ] && gsi="a KEYS_ONLY GSI"
    rows+=("| $table ($gsi) | CreateBackup | $backup_s | $(rate "$ITEMS" "$backup_s") |")
    rows+=("| $table ($gsi) | RestoreTableFromBackup until ACTIVE (its answer: $answer_ms ms; the job: $job_s s) | $restore_s | $(rate "$ITEMS" "$restore_s") |")
    rows+=("| $table ($gsi) | (reading the backup through \`ddb.backup_items\`, as the restore's job does) | $read_s | $(rate "$ITEMS" "$read_s") |")
    rows+=("| $table ($gsi) | DeleteBackup | $delete_s | |")
    checks+=("$table: backup $(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 1048576 }') MB, restore $outcome, items equal: $same, verify_gsi problems: $problems.")
    [ "$outcome" = COMPLETED ] && [ "$same" = t ] && [ "$problems" = 0 ] || ok=0
done

{
    echo "Command: \`BENCH_ITEMS=$ITEMS bash bench/backup_bench.sh\` ($(date -u +%Y-%m-%d), $(nproc) cores," \
         "PostgreSQL $(psql_bench -c 'SHOW server_version' | cut -d' ' -f1), shared_buffers 4GB, synchronous_commit off)." \
         "Items: $ITEMS orders of users (bench/transfer_bench.sh's), $(psql_bench -c "SELECT round(avg(item_size)) FROM \"Orders\"") bytes each by DynamoDB's rules."
    echo
    echo "| table | operation | seconds | items/s |"
    echo "|---|---|---:|---:|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "Checks: ${checks[*]}"
} | tee "$REPORT"
[ "$ok" = 1 ]
