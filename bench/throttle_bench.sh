#!/usr/bin/env bash
# bench/throttle_bench.sh — what throttling costs GetItem (docs/throttling.md):
# pgbench of ddb.execute('GetItem') on a PROVISIONED table with ddb.throttling
# off, and on when the server preloads ddb_model (its capacity, 40,000 read
# units, is far above what this machine serves: nothing is refused, the
# figure is the bookkeeping's), in rounds where the two take turns.  Runs
# against the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set), e.g.
#
#   /tmp/quick.sh "$PWD" bench/throttle_bench.sh
#   BENCH_ROUNDS=5 BENCH_SECONDS=10 ... bench/throttle_bench.sh
#
# and prints one line per setting and client count: the median transactions
# per second over the rounds and their spread.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$ROOT/bench/lib/stats.sh"
ROUNDS=${BENCH_ROUNDS:-5}
SECONDS_PER_RUN=${BENCH_SECONDS:-8}
ITEMS=${BENCH_ITEMS:-10000}
DB=ddb_throttle_bench
OUT="$ROOT/build/throttle_bench"
rm -rf "$OUT" && mkdir -p "$OUT"

psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -v items="$ITEMS" >/dev/null <<'SQL'
CREATE EXTENSION ddb_model;
SELECT ddb.execute('CreateTable', '{"TableName": "Bench", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 40000, "WriteCapacityUnits": 40000}}');
SELECT count(ddb.put_item('Bench', jsonb_build_object('pk', 'k' || i, 'n', i, 'note', repeat('x', 200))))
FROM generate_series(1, :items) i;
SQL
cat >"$OUT/get.sql" <<SQL
\set k random(1, $ITEMS)
SELECT ddb.execute('GetItem', ('{"TableName": "Bench", "Key": {"pk": {"S": "k' || :k || '"}}}')::jsonb);
SQL

settings=(off)
preloaded=$(psql -X -At -d "$DB" -c "SELECT current_setting('shared_preload_libraries') ~ 'ddb_model'")
[ "$preloaded" = t ] && settings+=(on)
declare -A tps
for round in $(seq "$ROUNDS"); do
    for clients in 1 2; do
        for setting in "${settings[@]}"; do
            log="$OUT/$setting-$clients-$round.log"
            PGOPTIONS="-c ddb.throttling=$setting" pgbench -n -M prepared -c "$clients" -j "$clients" \
                -T "$SECONDS_PER_RUN" -f "$OUT/get.sql" "$DB" >"$log" 2>&1
            tps[$setting-$clients]+=" $(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$log" | cut -d. -f1)"
        done
    done
done
refused=$(cat "$OUT"/*.log | grep -c "ProvisionedThroughputExceeded" || true)
for clients in 1 2; do
    for setting in "${settings[@]}"; do
        echo "GetItem, $clients client(s), ddb.throttling $setting: median $(median "${tps[$setting-$clients]}") tps ($(spread "${tps[$setting-$clients]}"), $ROUNDS rounds of ${SECONDS_PER_RUN} s)"
    done
done
echo "requests refused: $refused; ddb_model at $(git -C "$ROOT" rev-parse --short HEAD)"
psql -X -q -d postgres -c "DROP DATABASE $DB"
