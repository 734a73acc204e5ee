#!/usr/bin/env bash
# bench/authorization_bench.sh — what authorization costs (docs/security.md):
# GetItem and PutItem through ddb.execute as the tables' owner (the
# baseline), and through ddb.execute_as for a role given the table
# read-write, and for a role limited to leading keys (row-level security and
# the leading-key check).  pgbench, BENCH_CLIENTS clients (default 2),
# BENCH_SECONDS per cell (default 10), prepared statements, on a cluster of
# its own (tools/cluster.sh, .cluster/authbench, port 55439), 10,000 items.
# Prints a markdown table with each cell's ratio to the owner's.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CLUSTER_NAME=authbench DDB_PGPORT=${DDB_PGPORT:-55439}
source "$ROOT/tools/cluster.sh"
SECONDS_PER_CELL=${BENCH_SECONDS:-10}
CLIENTS=${BENCH_CLIENTS:-2}
WORK="$ROOT/build/authorization-bench"
mkdir -p "$WORK"
install_packages
build_and_install
start_cluster
trap stop_cluster EXIT
DB=ddb_authbench
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" \
    -c "DROP ROLE IF EXISTS bench_rw" -c "DROP ROLE IF EXISTS bench_tenant" \
    -c "CREATE ROLE bench_rw NOLOGIN" -c "CREATE ROLE bench_tenant NOLOGIN"
psql -X -q -d "$DB" >/dev/null <<'SQL'
CREATE EXTENSION ddb_model;
SELECT ddb.create_table('Bench', 'pk');
SELECT ddb.put_item('Bench', jsonb_build_object('pk', 'tenant1#' || n, 'v', n)) FROM generate_series(1, 10000) n;
SELECT ddb.grant_tables('bench_rw', 'Bench');
SELECT ddb.grant_tables('bench_tenant', 'Bench', false, ARRAY['tenant1#*']);
VACUUM ANALYZE;
SQL
get='{"TableName": "Bench", "Key": {"pk": {"S": "tenant1#@"}}}'
put='{"TableName": "Bench", "Item": {"pk": {"S": "tenant1#@"}, "v": {"N": "1"}}}'
echo "Command: \`BENCH_SECONDS=$SECONDS_PER_CELL BENCH_CLIENTS=$CLIENTS bash bench/authorization_bench.sh\` ($(date -u +%Y-%m-%d), $(nproc) cores, $(psql -X -At -d postgres -c 'SHOW server_version' | cut -d' ' -f1), pgbench $CLIENTS clients, $SECONDS_PER_CELL s per cell)."
echo
echo "| operation | caller | tps | x owner |"
echo "|---|---|---:|---:|"
for op in GetItem PutItem; do
    body=$([ "$op" = GetItem ] && echo "$get" || echo "$put")
    base=
    for caller in owner bench_rw bench_tenant; do
        role=$([ "$caller" = owner ] && echo "" || echo "$caller")
        # the request is built in SQL so that pgbench substitutes the key
        { echo '\set id random(1, 10000)'
          if [ -z "$role" ]; then
              echo "SELECT ddb.execute('$op', replace('$body', '@', :id::text)::jsonb);"
          else
              echo "SELECT ddb.execute_as('$role', '$op', replace('$body', '@', :id::text)::jsonb);"
          fi; } >"$WORK/$op-$caller.sql"
        if ! pgbench -n -M prepared -c "$CLIENTS" -j "$CLIENTS" -T "$SECONDS_PER_CELL" -f "$WORK/$op-$caller.sql" "$DB" \
                >"$WORK/$op-$caller.out" 2>&1; then
            echo "pgbench failed for $op as $caller:" >&2
            tail -5 "$WORK/$op-$caller.out" >&2
            exit 1
        fi
        tps=$(sed -n 's/^tps = \([0-9]*\).*/\1/p' "$WORK/$op-$caller.out")
        base=${base:-$tps}
        echo "| $op | $caller | $tps | $(awk -v a="$tps" -v b="$base" 'BEGIN { printf "%.2f", a / b }') |"
    done
done
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "DROP ROLE IF EXISTS bench_rw" -c "DROP ROLE IF EXISTS bench_tenant"
