#!/usr/bin/env bash
# bench/transfer_bench.sh — ddb-transfer import and export of DynamoDB's
# export to S3 format, against a plain COPY of the same items.
#
#   bash bench/transfer_bench.sh                  # 1,000,000 items
#   BENCH_ITEMS=100000 bash bench/transfer_bench.sh
#
# Generates BENCH_ITEMS seed-shaped items (orders of users: PK USER#<uuid>,
# SK ORDER#<timestamp>#<n>, ten attributes of every kind, about 430 bytes of
# DynamoDB JSON) as an export directory (data/*.json.gz of 100,000 lines,
# manifest-files.json, manifest-summary.json), then times:
#   - ddb-transfer import of the directory into a fresh table (no GSI);
#   - ddb-transfer export of that table (gzip);
#   - ddb-transfer import of that export into a table with a GSI, whose
#     items are then compared with the first table's (the round trip);
#   - the baseline: COPY of the same items (pk, sk, natural item as text,
#     gzip) into a table (pk text, sk text, item jsonb, primary key (pk, sk)),
#     in one transaction, as psql \copy reads it.
# Uses the installed extension (make install first if you changed it);
# builds ddb-transfer.  Prints a markdown report (also build/bench/transfer_bench.md).
set -euo pipefail
export CLUSTER_NAME=transferbench DDB_PGPORT=${DDB_PGPORT:-55440}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"

ITEMS=${BENCH_ITEMS:-1000000}
FILE_ITEMS=100000
OUT_DIR="$ROOT/build/bench"
WORK="$OUT_DIR/transfer"
REPORT="$OUT_DIR/transfer_bench.md"
rm -rf "$WORK" && mkdir -p "$WORK/source/data"

install_packages
if [ ! -f "$(pg_config --sharedir)/extension/ddb_model.control" ]; then
    build_and_install
fi
make -C "$ROOT" -s ddb-transfer
SERVER_OPTS="-c shared_buffers=4GB -c max_wal_size=8GB -c checkpoint_timeout=30min -c synchronous_commit=off"
start_cluster
trap stop_cluster EXIT
psql_bench() { cluster_psql -q -At -v ON_ERROR_STOP=1 -d ddb_bench "$@"; }
DSN="host=$SOCKET_DIR port=$PGPORT_NUM user=postgres dbname=ddb_bench"

cluster_psql -q -c "CREATE DATABASE ddb_bench"
psql_bench <<'SQL'
CREATE EXTENSION ddb_model;
-- an order of a user, as the models' seeds shape their items
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
SELECT ddb.create_table('OrdersCopy', 'PK', 'S', 'SK', 'S');
SELECT ddb.create_index('OrdersCopy', 'ByStatus', 'status', 'S', 'SK', 'S', projection_type => 'KEYS_ONLY');
CREATE TABLE baseline (pk text, sk text, item jsonb, PRIMARY KEY (pk, sk));
SQL

echo "== generating $ITEMS items as an export directory"
: >"$WORK/source/manifest-files.json"
for ((first = 0; first < ITEMS; first += FILE_ITEMS)); do
    last=$((first + FILE_ITEMS < ITEMS ? first + FILE_ITEMS - 1 : ITEMS - 1))
    name=$(printf 'part%05d.json.gz' $((first / FILE_ITEMS)))
    # compact, as DynamoDB writes its lines (these items hold no ": " or ", " in strings)
    psql_bench -c "SELECT jsonb_build_object('Item', ddb.to_dynamodb(bench_item(i))) FROM generate_series($first, $last) i" |
        sed -e 's/": /":/g; s/, "/,"/g' | gzip -1 >"$WORK/source/data/$name"
    printf '{"itemCount":%d,"dataFileS3Key":"AWSDynamoDB/bench/data/%s"}\n' $((last - first + 1)) "$name" \
        >>"$WORK/source/manifest-files.json"
    # the baseline's rows: the same items, natural, with their keys
    psql_bench -c "COPY (SELECT i->>'PK', i->>'SK', i FROM (SELECT bench_item(g) AS i FROM generate_series($first, $last) g) s) TO STDOUT" |
        gzip -1 >>"$WORK/baseline.tsv.gz"
done
printf '{"itemCount":%d,"outputFormat":"DYNAMODB_JSON","exportType":"FULL_EXPORT"}\n' "$ITEMS" \
    >"$WORK/source/manifest-summary.json"
bytes=$(du -sb "$WORK/source/data" | cut -f1)
raw_bytes=$(zcat "$WORK"/source/data/*.json.gz | wc -c)
psql_bench -c "CHECKPOINT"

now() { date +%s.%N; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", n / s }'; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

echo "== baseline: COPY of the same items"
t0=$(now)
zcat "$WORK/baseline.tsv.gz" | psql_bench -c "\\copy baseline FROM STDIN"
t1=$(now)
baseline_s=$(elapsed "$t0" "$t1")
psql_bench -c "CHECKPOINT"

echo "== ddb-transfer import"
t0=$(now)
"$ROOT/ddb-transfer" import --dsn "$DSN" --table Orders "$WORK/source"
t1=$(now)
import_s=$(elapsed "$t0" "$t1")
imported=$(psql_bench -c 'SELECT count(*) FROM "Orders"')
psql_bench -c "CHECKPOINT"

echo "== ddb-transfer export"
t0=$(now)
"$ROOT/ddb-transfer" export --dsn "$DSN" --table Orders --out "$WORK/export"
t1=$(now)
export_s=$(elapsed "$t0" "$t1")
exported=$(perl -ne 'print $1 if /"itemCount":(\d+)/' "$WORK/export/manifest-summary.json")

echo "== ddb-transfer import of the export into a table with a GSI"
t0=$(now)
"$ROOT/ddb-transfer" import --dsn "$DSN" --table OrdersCopy "$WORK/export"
t1=$(now)
gsi_import_s=$(elapsed "$t0" "$t1")
same=$(psql_bench -c "SELECT (SELECT md5(string_agg(item::text, E'\n' ORDER BY pk, sk)) FROM \"Orders\")
                           = (SELECT md5(string_agg(item::text, E'\n' ORDER BY pk, sk)) FROM \"OrdersCopy\")")
gsi_problems=$(psql_bench -c "SELECT count(*) FROM ddb.verify_gsi('OrdersCopy')")

import_rate=$(rate "$ITEMS" "$import_s")
baseline_rate=$(rate "$ITEMS" "$baseline_s")
{
    echo "### ddb-transfer: $ITEMS items"
    echo
    echo "Command: \`BENCH_ITEMS=$ITEMS bash bench/transfer_bench.sh\` ($(date -u +%Y-%m-%d), $(nproc) cores," \
         "PostgreSQL $(psql_bench -c 'SHOW server_version' | cut -d' ' -f1), shared_buffers 4GB, synchronous_commit off)." \
         "Items: orders of users (PK USER#<uuid>, SK ORDER#<timestamp>#<n>, S N BOOL L M SS)," \
         "$(awk -v b="$raw_bytes" -v n="$ITEMS" 'BEGIN { printf "%.0f", b / n }') bytes of DynamoDB JSON each," \
         "$((ITEMS / FILE_ITEMS)) gzip data files, $(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 1048576 }') MB."
    echo
    echo "| what | seconds | items/s | ratio to the COPY baseline |"
    echo "|---|---:|---:|---:|"
    echo "| baseline: \`\\copy\` of (pk, sk, natural item) into a plain table with a primary key | $baseline_s | $baseline_rate | 1.00 |"
    echo "| \`ddb-transfer import\` of the export directory (no GSI) | $import_s | $import_rate |" \
         "$(awk -v a="$import_rate" -v b="$baseline_rate" 'BEGIN { printf "%.2f", a / b }') |"
    echo "| \`ddb-transfer export\` (gzip) | $export_s | $(rate "$ITEMS" "$export_s") | |"
    echo "| \`ddb-transfer import\` of that export into a table with a KEYS_ONLY GSI | $gsi_import_s |" \
         "$(rate "$ITEMS" "$gsi_import_s") | $(awk -v a="$(rate "$ITEMS" "$gsi_import_s")" -v b="$baseline_rate" 'BEGIN { printf "%.2f", a / b }') |"
    echo
    echo "Checks: $imported items imported, $exported exported; the round trip's items equal: $same;" \
         "verify_gsi problems: $gsi_problems."
} | tee "$REPORT"
[ "$imported" = "$ITEMS" ] && [ "$exported" = "$ITEMS" ] && [ "$same" = t ] && [ "$gsi_problems" = 0 ]
