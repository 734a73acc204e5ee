#!/usr/bin/env bash
# bench/exports_bench.sh — ExportTableToPointInTime and ImportTable in the
# server (docs/transfer.md): their rates on a table of seed-shaped items.
#
#   flock /tmp/ddb-test.lock bash bench/exports_bench.sh     # 1,000,000 items
#   BENCH_ITEMS=100000 bash bench/exports_bench.sh
#
# Builds and installs the checkout, starts a cluster of its own (ddb.export_root
# set, a bucket made), loads BENCH_ITEMS items shaped as bench/transfer_bench.sh's
# (orders of users, about 400 bytes of DynamoDB JSON) into a table, turns
# point-in-time recovery on, and times from the request to COMPLETED:
#   - a full export (now) of the table;
#   - an import of that export into a new table (no GSI), then compared item by item;
#   - an import of it into a table with a KEYS_ONLY GSI, then verified;
#   - an incremental export of a tenth of the items changed (the history is
#     moved back in time for the period's 15 minutes, as test/exports.sh does).
# Prints a markdown report (also build/bench/exports_bench.md).
set -euo pipefail
export CLUSTER_NAME=exportsbench DDB_PGPORT=${DDB_PGPORT:-55441}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"

ITEMS=${BENCH_ITEMS:-1000000}
OUT_DIR="$ROOT/build/bench"
WORK="$OUT_DIR/exports"
REPORT="$OUT_DIR/exports_bench.md"
rm -rf "$WORK" && mkdir -p "$WORK/buckets/bench"
chown -R postgres "$WORK/buckets"

install_packages
build_and_install
SERVER_OPTS="-c shared_buffers=4GB -c max_wal_size=8GB -c checkpoint_timeout=30min -c synchronous_commit=off -c ddb.export_root=$WORK/buckets"
start_cluster
trap stop_cluster EXIT
psql_bench() { cluster_psql -q -At -v ON_ERROR_STOP=1 -d ddb_bench "$@"; }
now() { date +%s.%N; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", n / s }'; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
# run OPERATION REQUEST ARN_MEMBER: the request, then waiting for its job; prints "<seconds> <status> <ARN>"
run() {
    local t0 arn status
    t0=$(now)
    arn=$(psql_bench -c "SELECT ddb.execute('$1', \$r\$$2\$r\$) -> '$3' ->> '$4'")
    status=$(psql_bench -c "SELECT ddb.wait_for_job(id, 3600) FROM ddb.jobs WHERE spec->>'$4' = '$arn'")
    echo "$(elapsed "$t0" "$(now)") $status $arn"
}

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
SELECT ddb.create_table('Orders', 'PK', 'S', 'SK', 'S');
SQL
echo "== loading $ITEMS items"
psql_bench -c "SELECT count(ddb.put_item('Orders', bench_item(i))) FROM generate_series(1, $ITEMS) i" >/dev/null
psql_bench -c "SELECT ddb.execute('UpdateContinuousBackups', '{\"TableName\": \"Orders\",
                 \"PointInTimeRecoverySpecification\": {\"PointInTimeRecoveryEnabled\": true}}')" >/dev/null
psql_bench -c "VACUUM ANALYZE" -c "CHECKPOINT"

echo "== a full export"
read -r export_s export_status export_arn <<<"$(run ExportTableToPointInTime \
    '{"TableArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Orders", "S3Bucket": "bench", "S3Prefix": "full"}' \
    ExportDescription ExportArn)"
exported=$(psql_bench -c "SELECT progress->>'ItemCount' FROM ddb.jobs WHERE spec->>'ExportArn' = '$export_arn'")
data="full/AWSDynamoDB/${export_arn##*/}/data/"
files=$(ls "$WORK/buckets/bench/$data" | wc -l)
bytes=$(du -sb "$WORK/buckets/bench/$data" | cut -f1)
psql_bench -c "CHECKPOINT"

creation() {  # TABLE [GSI]
    local gsi= status=
    [ -z "${2:-}" ] || status=', {"AttributeName": "status", "AttributeType": "S"}'
    [ -z "${2:-}" ] || gsi=', "GlobalSecondaryIndexes": [{"IndexName": "ByStatus", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"},
         {"AttributeName": "SK", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "KEYS_ONLY"}}]'
    echo "{\"TableName\": \"$1\", \"BillingMode\": \"PAY_PER_REQUEST\",
      \"KeySchema\": [{\"AttributeName\": \"PK\", \"KeyType\": \"HASH\"}, {\"AttributeName\": \"SK\", \"KeyType\": \"RANGE\"}],
      \"AttributeDefinitions\": [{\"AttributeName\": \"PK\", \"AttributeType\": \"S\"}, {\"AttributeName\": \"SK\", \"AttributeType\": \"S\"}$status]$gsi}"
}
import_request() {  # TABLE [GSI]
    echo "{\"S3BucketSource\": {\"S3Bucket\": \"bench\", \"S3KeyPrefix\": \"$data\"}, \"InputFormat\": \"DYNAMODB_JSON\",
      \"InputCompressionType\": \"GZIP\", \"TableCreationParameters\": $(creation "$@")}"
}
echo "== an import of the export (no GSI)"
read -r import_s import_status import_arn <<<"$(run ImportTable "$(import_request OrdersCopy)" ImportTableDescription ImportArn)"
imported=$(psql_bench -c "SELECT progress->>'ImportedItemCount' FROM ddb.jobs WHERE spec->>'ImportArn' = '$import_arn'")
differ=$(psql_bench -c "SELECT count(*) FROM \"Orders\" o FULL JOIN \"OrdersCopy\" c USING (pk, sk) WHERE o.item IS DISTINCT FROM c.item")
psql_bench -c "CHECKPOINT"

echo "== an import of the export into a table with a KEYS_ONLY GSI"
read -r gsi_s gsi_status gsi_arn <<<"$(run ImportTable "$(import_request OrdersGsi gsi)" ImportTableDescription ImportArn)"
gsi_problems=$(psql_bench -c "SELECT count(*) FROM ddb.verify_gsi('OrdersGsi')")
psql_bench -c "CHECKPOINT"

echo "== an incremental export of a tenth of the items changed"
changed=$((ITEMS / 10))
history=$(psql_bench -c "SELECT history_relation FROM ddb.continuous_backups WHERE table_name = 'Orders'")
psql_bench -c "UPDATE public.\"$history\" SET changed_at = changed_at - interval '3 hours'" \
           -c "UPDATE ddb.continuous_backups SET enabled_at = enabled_at - interval '3 hours'" >/dev/null
psql_bench -c "SELECT count(ddb.put_item('Orders', bench_item(i) || '{\"status\": \"RETURNED\"}')) FROM generate_series(1, $ITEMS, 10) i" >/dev/null
psql_bench -c "UPDATE public.\"$history\" SET changed_at = changed_at - interval '1 hour' WHERE changed_at > now() - interval '1 hour'" \
           -c "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null
from=$(psql_bench -c "SELECT floor(extract(epoch FROM now() - interval '2 hours'))")
to=$(psql_bench -c "SELECT floor(extract(epoch FROM now() - interval '30 minutes'))")
read -r incremental_s incremental_status incremental_arn <<<"$(run ExportTableToPointInTime \
    "{\"TableArn\": \"arn:aws:dynamodb:ddb-model:000000000000:table/Orders\", \"S3Bucket\": \"bench\", \"S3Prefix\": \"incremental\",
      \"ExportType\": \"INCREMENTAL_EXPORT\", \"IncrementalExportSpecification\": {\"ExportFromTime\": $from, \"ExportToTime\": $to}}" \
    ExportDescription ExportArn)"
incremental_items=$(psql_bench -c "SELECT progress->>'ItemCount' FROM ddb.jobs WHERE spec->>'ExportArn' = '$incremental_arn'")

{
    echo "### ExportTableToPointInTime and ImportTable: $ITEMS items"
    echo
    echo "Command: \`flock /tmp/ddb-test.lock bash bench/exports_bench.sh\` ($(date -u +%Y-%m-%d), $(nproc) cores," \
         "PostgreSQL $(psql_bench -c 'SHOW server_version' | cut -d' ' -f1), shared_buffers 4GB, synchronous_commit off)." \
         "Items: bench/transfer_bench.sh's orders of users; the export is $files gzip data file(s)," \
         "$(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 1048576 }') MB. Each time runs from the request to the job's end (COMPLETED)."
    echo
    echo "| what | seconds | items/s |"
    echo "|---|---:|---:|"
    echo "| full export (the items at a moment, from point-in-time recovery's history) | $export_s | $(rate "$exported" "$export_s") |"
    echo "| import of that export into a new table, no GSI | $import_s | $(rate "$imported" "$import_s") |"
    echo "| import of it into a table with a KEYS_ONLY GSI | $gsi_s | $(rate "$ITEMS" "$gsi_s") |"
    echo "| incremental export of $changed items changed (NEW_AND_OLD_IMAGES) | $incremental_s | $(rate "$incremental_items" "$incremental_s") |"
    echo
    echo "Checks: $export_status, $exported items exported; $import_status, $imported imported, items that differ: $differ;" \
         "$gsi_status, verify_gsi problems: $gsi_problems; $incremental_status, $incremental_items changes exported."
} | tee "$REPORT"
[ "$export_status $import_status $gsi_status $incremental_status" = "COMPLETED COMPLETED COMPLETED COMPLETED" ] \
    && [ "$exported" = "$ITEMS" ] && [ "$imported" = "$ITEMS" ] && [ "$differ" = 0 ] && [ "$gsi_problems" = 0 ] \
    && [ "$incremental_items" = "$changed" ]
