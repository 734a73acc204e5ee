#!/usr/bin/env bash
# bench/key_bench.sh — prefix-query throughput of ddb_key indexes against
# text btree (COLLATE "C"), SP-GiST text_ops and the prefix extension's GiST,
# on 1,000,000 seed-shaped composite keys, all in one run on one cluster.
#
#   bash bench/key_bench.sh            # BENCH_SECONDS=20 per measurement
#   BENCH_SECONDS=5 bash bench/key_bench.sh
#
# Prints a markdown report (also written to build/bench/key_bench.md).
set -euo pipefail
export CLUSTER_NAME=bench DDB_PGPORT=${DDB_PGPORT:-55434}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"

SECONDS_PER_RUN=${BENCH_SECONDS:-20}
OUT_DIR="$ROOT/build/bench"
REPORT="$OUT_DIR/key_bench.md"
mkdir -p "$OUT_DIR"

PACKAGES+=(postgresql-15-prefix)
install_packages
build_and_install
SERVER_OPTS="-c shared_buffers=1GB -c max_wal_size=4GB -c checkpoint_timeout=30min"
start_cluster
trap stop_cluster EXIT

psql_bench() { cluster_psql -q -v ON_ERROR_STOP=1 -d ddb_bench "$@"; }

echo "== loading 1,000,000 keys"
cluster_psql -q -c "CREATE DATABASE ddb_bench"
psql_bench <<'SQL'
CREATE EXTENSION ddb_model;
CREATE EXTENSION prefix;
-- 50,000 users with 20 keys each: a profile, 9 emails, 10 events.
CREATE TABLE source_keys AS
SELECT 'USER#' || u || '#' || CASE
         WHEN i = 0 THEN 'PROFILE'
         WHEN i < 10 THEN 'EMAIL#' || md5(u || ':' || i)::uuid
         ELSE 'EVENT#' || to_char(timestamp '2024-01-01' + (u * 37 + i * 3601) * interval '1 second',
                                  'YYYY-MM-DD"T"HH24:MI:SS"Z"') || '#' || substr(md5(i || ':' || u), 1, 12)
       END AS k
FROM generate_series(1, 50000) u, generate_series(0, 19) i
ORDER BY random();
CREATE TABLE ddb_btree AS SELECT k::ddb.ddb_key AS k FROM source_keys;
CREATE TABLE ddb_gist AS SELECT k FROM ddb_btree;
CREATE TABLE text_btree AS SELECT k COLLATE "C" AS k FROM source_keys;
CREATE TABLE text_spgist AS SELECT k FROM source_keys;
CREATE TABLE prefix_gist AS SELECT k::prefix_range AS k FROM source_keys;
SQL

echo "== building indexes"
build_ms() {  # table, index definition -> milliseconds to build
    psql_bench -At <<SQL
SET maintenance_work_mem = '512MB';
SET max_parallel_maintenance_workers = 0;
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX $1_idx ON $1 USING $2;
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000);
SQL
}
declare -A BUILD
BUILD[ddb_btree]=$(build_ms ddb_btree "btree (k)")
BUILD[ddb_gist]=$(build_ms ddb_gist "gist (k)")
BUILD[text_btree]=$(build_ms text_btree "btree (k)")
BUILD[text_spgist]=$(build_ms text_spgist "spgist (k text_ops)")
BUILD[prefix_gist]=$(build_ms prefix_gist "gist (k)")
psql_bench -c "VACUUM ANALYZE"
# Everything in shared buffers before timing, so that no contender pays for a cold cache.
psql_bench -c "CREATE EXTENSION pg_prewarm" -c "SELECT sum(pg_prewarm(c.oid)) FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')" >/dev/null

# One pgbench script per contender; :n picks a user, the prefix selects its 20 keys.
SCRIPTS="$OUT_DIR/scripts"
mkdir -p "$SCRIPTS"
write_script() { printf '\\set n random(1, 50000)\n%s\n' "$2" >"$SCRIPTS/$1.sql"; }
write_script ddb_btree_prefix "SELECT k FROM ddb_btree WHERE k ^@ ('USER#' || :n || '#')::ddb.ddb_key;"
write_script ddb_btree_segment "SELECT k FROM ddb_btree WHERE k <@ ('USER#' || :n)::ddb.ddb_key;"
write_script ddb_gist_prefix "SELECT k FROM ddb_gist WHERE k ^@ ('USER#' || :n || '#')::ddb.ddb_key;"
write_script ddb_gist_segment "SELECT k FROM ddb_gist WHERE k <@ ('USER#' || :n)::ddb.ddb_key;"
write_script text_btree_prefix "SELECT k FROM text_btree WHERE k ^@ ('USER#' || :n || '#');"
write_script text_spgist_prefix "SELECT k FROM text_spgist WHERE k ^@ ('USER#' || :n || '#');"
write_script prefix_gist "SELECT k FROM prefix_gist WHERE k <@ ('USER#' || :n || '#')::prefix_range;"

# Every contender must return the same 20 rows for a user before it is timed.
for s in "$SCRIPTS"/*.sql; do
    q=$(sed -n 2p "$s" | sed 's/:n/4242/g')
    rows=$(psql_bench -At -c "SELECT count(*) FROM ($(echo "$q" | sed 's/;$//')) q")
    plan=$(psql_bench -At -c "EXPLAIN (COSTS OFF) $q" | head -1)
    echo "$(basename "$s" .sql): $rows rows; $plan"
    [ "$rows" = 20 ] || { echo "wrong row count for $s"; exit 1; }
done

declare -A TPS
run() {  # script name, mode, clients -> tps
    pgbench -n -M "$2" -c "$3" -j "$3" -T "$SECONDS_PER_RUN" -f "$SCRIPTS/$1.sql" \
        -h "$SOCKET_DIR" -p "$PGPORT_NUM" -U postgres ddb_bench 2>/dev/null |
        awk '/^tps/ {printf "%.0f", $3}'
}
NAMES=(text_btree_prefix ddb_btree_prefix ddb_btree_segment ddb_gist_prefix ddb_gist_segment
       text_spgist_prefix prefix_gist)
for mode in simple prepared; do
    for name in "${NAMES[@]}"; do
        echo "== pgbench $name ($mode, 1 client, ${SECONDS_PER_RUN}s)"
        TPS[$name,$mode]=$(run "$name" "$mode" 1)
    done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
size_of() { psql_bench -At -c "SELECT pg_relation_size('$1_idx')"; }
pretty() { psql_bench -At -c "SELECT pg_size_pretty($1::bigint)"; }

base_simple=${TPS[text_btree_prefix,simple]}
base_prepared=${TPS[text_btree_prefix,prepared]}
base_size=$(size_of text_btree)
{
    echo "### Prefix queries on 1,000,000 keys (20 rows each)"
    echo
    echo "Command: \`BENCH_SECONDS=$SECONDS_PER_RUN bash bench/key_bench.sh\` ($(date -u +%Y-%m-%d), $(nproc) cores," \
         "PostgreSQL $(psql_bench -At -c 'SHOW server_version' | cut -d' ' -f1), pgbench 1 client, ${SECONDS_PER_RUN} s per cell)."
    echo
    echo "| index | query | qps (simple) | x text btree | qps (prepared) | x text btree |"
    echo "|---|---|---:|---:|---:|---:|"
    for name in "${NAMES[@]}"; do
        q=$(sed -n 2p "$SCRIPTS/$name.sql" | sed 's/|/\\|/g')
        echo "| $name | \`$q\` | ${TPS[$name,simple]} | $(ratio "${TPS[$name,simple]}" "$base_simple") |" \
             "${TPS[$name,prepared]} | $(ratio "${TPS[$name,prepared]}" "$base_prepared") |"
    done
    echo
    echo "| index | build ms | size | x text btree size |"
    echo "|---|---:|---:|---:|"
    for t in text_btree ddb_btree ddb_gist text_spgist prefix_gist; do
        sz=$(size_of "$t")
        echo "| $t | ${BUILD[$t]} | $(pretty "$sz") | $(ratio "$sz" "$base_size") |"
    done
    echo
    echo "GiST: ddb_key ^@ is $(ratio "${TPS[ddb_gist_prefix,simple]}" "${TPS[prefix_gist,simple]}")x the prefix" \
         "extension's GiST and $(ratio "${TPS[ddb_gist_prefix,simple]}" "${TPS[ddb_btree_prefix,simple]}")x the ddb_key btree (simple protocol)."
} | tee "$REPORT"
