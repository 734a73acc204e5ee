#!/usr/bin/env bash
# bench/table_bench.sh — the table engine against a hand-written baseline on
# the same data: GetItem, Query begins_with LIMIT 20, PutItem (with and
# without GSIs) and the TTL sweep, with pgbench on 1 and 2 clients.
#
#   bash bench/table_bench.sh                 # 1,000,000 items, 15 s per cell
#   BENCH_ITEMS=200000 BENCH_SECONDS=5 BENCH_BIG_ITEMS=0 bash bench/table_bench.sh
#
# Puts are measured after a warm-up of BENCH_WARMUP seconds each, so that
# every contender is past the full-page images the first change of each
# page after a checkpoint writes to WAL.  GetItem and Query latency are also
# measured on a table of BENCH_BIG_ITEMS items (default 10,000,000; 0 skips).
#
# Baseline: text COLLATE "C" keys, jsonb item, btree primary key, GSIs kept
# by a PL/pgSQL trigger.  Writes run with synchronous_commit off (with it on
# this machine is bound by fsync at about 3k commits/s, which hides the rest).
# Prints a markdown report (also build/bench/table_bench.md).
set -euo pipefail
export CLUSTER_NAME=bench DDB_PGPORT=${DDB_PGPORT:-55434}
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"

ITEMS=${BENCH_ITEMS:-1000000}
USERS=$((ITEMS / 20))
SECONDS_PER_RUN=${BENCH_SECONDS:-15}
TTL_ITEMS=${BENCH_TTL_ITEMS:-200000}
WARMUP=${BENCH_WARMUP:-20}
BIG_ITEMS=${BENCH_BIG_ITEMS:-10000000}
OUT_DIR="$ROOT/build/bench"
REPORT="$OUT_DIR/table_bench.md"
SCRIPTS="$OUT_DIR/table-scripts"
mkdir -p "$OUT_DIR" "$SCRIPTS"

install_packages
build_and_install
SERVER_OPTS="-c shared_buffers=6GB -c max_wal_size=8GB -c checkpoint_timeout=30min -c synchronous_commit=off"
start_cluster
trap stop_cluster EXIT
psql_bench() { cluster_psql -q -v ON_ERROR_STOP=1 -d ddb_bench "$@"; }

echo "== loading $ITEMS items into each table"
cluster_psql -q -c "CREATE DATABASE ddb_bench"
psql_bench -v items="$ITEMS" -v ttl_items="$TTL_ITEMS" <<'SQL'
CREATE EXTENSION ddb_model;
-- user_service-shaped items: USER#<u> / EMAIL#<uuid>, GSI1 on the address, GSI2 on a status
CREATE FUNCTION bench_item(i bigint) RETURNS jsonb LANGUAGE sql IMMUTABLE RETURN jsonb_build_object(
    'PK', 'USER#' || (i / 20), 'SK', 'EMAIL#' || md5(i::text)::uuid,
    'GSI1PK', 'EMAIL#' || md5(i::text) || '@example.com', 'GSI1SK', 'USER#' || (i / 20),
    'GSI2PK', 'STATUS#' || (i % 7), 'email', md5(i::text) || '@example.com',
    'isPrimary', i % 20 = 0, 'isVerified', true, 'createdAt', '2024-02-10T14:30:00Z', 'n', i);

-- DynamoDB JSON requests as a client sends them (text parsed into jsonb);
-- built here because pgbench would take their :placeholders for its variables;
-- STABLE as format() is, so that the planner inlines them (fmgr_sql would parse an IMMUTABLE one's body each call)
CREATE FUNCTION bench_get_request(u bigint, e int) RETURNS jsonb LANGUAGE sql STABLE RETURN format(
    '{"TableName": "Bench", "Key": {"PK": {"S": "USER#%s"}, "SK": {"S": "EMAIL#%s"}}}',
    u, md5((u * 20 + e)::text)::uuid)::jsonb;
CREATE FUNCTION bench_query_request(u bigint) RETURNS jsonb LANGUAGE sql STABLE RETURN format(
    '{"TableName": "Bench", "KeyConditionExpression": "PK = :p AND begins_with(SK, :s)", '
    '"ExpressionAttributeValues": {":p": {"S": "USER#%s"}, ":s": {"S": "EMAIL#"}}, "Limit": 20}', u)::jsonb;

SELECT ddb.create_table('Bench', 'PK', 'S', 'SK', 'S');
SELECT ddb.create_index('Bench', 'GSI1', 'GSI1PK', 'S', 'GSI1SK', 'S');
SELECT ddb.create_index('Bench', 'GSI2', 'GSI2PK', 'S', projection_type => 'KEYS_ONLY');
SELECT ddb.create_table('BenchNoGsi', 'PK', 'S', 'SK', 'S');
SELECT count(ddb.put_item('Bench', bench_item(i))) FROM generate_series(0, :items - 1) i;
SELECT count(ddb.put_item('BenchNoGsi', bench_item(i))) FROM generate_series(0, :items - 1) i;

-- the hand-written baseline
CREATE TABLE base (pk text COLLATE "C", sk text COLLATE "C", item jsonb NOT NULL, PRIMARY KEY (pk, sk));
CREATE TABLE base_gsi1 (gpk text COLLATE "C", gsk text COLLATE "C", pk text COLLATE "C", sk text COLLATE "C",
                        item jsonb NOT NULL, PRIMARY KEY (gpk, gsk, pk, sk));
CREATE TABLE base_gsi2 (gpk text COLLATE "C", pk text COLLATE "C", sk text COLLATE "C", PRIMARY KEY (gpk, pk, sk));
CREATE FUNCTION base_gsi() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        DELETE FROM base_gsi1 WHERE gpk = OLD.item->>'GSI1PK' AND gsk = OLD.item->>'GSI1SK' AND pk = OLD.pk AND sk = OLD.sk;
        DELETE FROM base_gsi2 WHERE gpk = OLD.item->>'GSI2PK' AND pk = OLD.pk AND sk = OLD.sk;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        IF NEW.item ? 'GSI1PK' AND NEW.item ? 'GSI1SK' THEN
            INSERT INTO base_gsi1 VALUES (NEW.item->>'GSI1PK', NEW.item->>'GSI1SK', NEW.pk, NEW.sk, NEW.item);
        END IF;
        IF NEW.item ? 'GSI2PK' THEN
            INSERT INTO base_gsi2 VALUES (NEW.item->>'GSI2PK', NEW.pk, NEW.sk);
        END IF;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER base_gsi AFTER INSERT OR UPDATE OR DELETE ON base FOR EACH ROW EXECUTE FUNCTION base_gsi();
INSERT INTO base SELECT bench_item(i)->>'PK', bench_item(i)->>'SK', bench_item(i) FROM generate_series(0, :items - 1) i;

-- TTL: items that expired a minute ago, with both GSIs
SELECT ddb.create_table('BenchTtl', 'PK', 'S', 'SK', 'S', ttl_attribute => 'ttl');
SELECT ddb.create_index('BenchTtl', 'GSI1', 'GSI1PK', 'S', 'GSI1SK', 'S');
SELECT ddb.create_index('BenchTtl', 'GSI2', 'GSI2PK', 'S', projection_type => 'KEYS_ONLY');
SELECT count(ddb.put_item('BenchTtl', bench_item(i) || jsonb_build_object('ttl', extract(epoch FROM now())::bigint - 60)))
FROM generate_series(0, :ttl_items - 1) i;
VACUUM ANALYZE;
CREATE EXTENSION pg_prewarm;
SELECT sum(pg_prewarm(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i') \g /dev/null
SQL

# pgbench scripts: :u picks a user, :e one of its 20 items.
key="\\set u random(0, $((USERS - 1)))
\\set e random(0, 19)"
cat >"$SCRIPTS/get_baseline.sql" <<EOF
$key
SELECT item FROM base WHERE pk = 'USER#' || :u AND sk = 'EMAIL#' || md5((:u * 20 + :e)::text)::uuid;
EOF
cat >"$SCRIPTS/get_sql.sql" <<EOF
$key
SELECT ddb.get_item('Bench', 'USER#' || :u, 'EMAIL#' || md5((:u * 20 + :e)::text)::uuid);
EOF
cat >"$SCRIPTS/get_execute.sql" <<EOF
$key
SELECT ddb.execute('GetItem', bench_get_request(:u, :e));
EOF
cat >"$SCRIPTS/query_baseline.sql" <<EOF
$key
SELECT item FROM base WHERE pk = 'USER#' || :u AND sk ^@ 'EMAIL#' ORDER BY sk LIMIT 20;
EOF
cat >"$SCRIPTS/query_sql.sql" <<EOF
$key
SELECT * FROM ddb.query('Bench', 'USER#' || :u, 'begins_with', 'EMAIL#', max_items => 20);
EOF
cat >"$SCRIPTS/query_execute.sql" <<EOF
$key
SELECT ddb.execute('Query', bench_query_request(:u));
EOF
# puts write new items (ids above the loaded ones), so every run inserts
put="\\set i random($ITEMS, $((ITEMS * 100)))"
cat >"$SCRIPTS/put_nogsi.sql" <<EOF
$put
SELECT ddb.put_item('BenchNoGsi', bench_item(:i));
EOF
cat >"$SCRIPTS/put_gsi.sql" <<EOF
$put
SELECT ddb.put_item('Bench', bench_item(:i));
EOF
cat >"$SCRIPTS/put_baseline.sql" <<EOF
$put
INSERT INTO base VALUES (bench_item(:i)->>'PK', bench_item(:i)->>'SK', bench_item(:i))
ON CONFLICT (pk, sk) DO UPDATE SET item = EXCLUDED.item;
EOF

declare -A TPS
declare -A LATENCY
run() {  # script, clients[, seconds[, database]] -> tps (a failing script stops the benchmark)
    local log="$OUT_DIR/pgbench-$1-$2.log"
    pgbench -n -M prepared -c "$2" -j "$2" -T "${3:-$SECONDS_PER_RUN}" -f "$SCRIPTS/$1.sql" \
        -h "$SOCKET_DIR" -p "$PGPORT_NUM" -U postgres "${4:-ddb_bench}" >"$log" 2>&1 ||
        { tail -5 "$log" >&2; return 1; }
    awk '/^tps/ {printf "%.0f", $3}' "$log"
}
latency() {  # script name, clients -> average latency in ms of the last run
    awk '/^latency average/ {print $4}' "$OUT_DIR/pgbench-$1-$2.log"
}
READS=(get_baseline get_sql get_execute query_baseline query_sql query_execute)
PUTS=(put_nogsi put_gsi put_baseline)
for name in "${PUTS[@]}"; do
    echo "== warm-up $name (${WARMUP}s)"
    run "$name" 2 "$WARMUP" >/dev/null
done
for clients in 1 2; do
    for name in "${READS[@]}" "${PUTS[@]}"; do
        echo "== pgbench $name ($clients clients, ${SECONDS_PER_RUN}s)"
        TPS[$name,$clients]=$(run "$name" "$clients")
    done
done
# the same puts with synchronous_commit on: every commit waits for its WAL flush
for name in "${PUTS[@]}"; do
    echo "== pgbench $name (synchronous_commit on, 1 client, ${SECONDS_PER_RUN}s)"
    TPS[$name,sync]=$(PGOPTIONS="-c synchronous_commit=on" run "$name" 1)
done

echo "== TTL sweep of $TTL_ITEMS expired items (two GSIs)"
sweep_ms=$(psql_bench -At <<'SQL'
SELECT clock_timestamp() AS t0 \gset
SELECT ddb.expire('BenchTtl', 1000000) \g /dev/null
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000);
SQL
)
left=$(psql_bench -At -c 'SELECT count(*) FROM "BenchTtl"')
gsi_left=$(psql_bench -At -c 'SELECT (SELECT count(*) FROM "BenchTtl:GSI1") + (SELECT count(*) FROM "BenchTtl:GSI2")')

# Latency at BIG_ITEMS against the 1,000,000-row table of the same shape (no GSIs).
if [ "$BIG_ITEMS" -gt 0 ]; then
    echo "== loading $BIG_ITEMS items for the latency comparison"
    psql_bench -v big="$BIG_ITEMS" <<'SQL'
SELECT ddb.create_table('BenchBig', 'PK', 'S', 'SK', 'S');
SELECT count(ddb.put_item('BenchBig', bench_item(i))) FROM generate_series(0, :big - 1) i;
VACUUM ANALYZE "BenchBig";
SELECT sum(pg_prewarm(c.oid)) FROM pg_class c WHERE c.relname IN ('BenchBig', 'BenchBig$pkey') \g /dev/null
SQL
    for table in BenchNoGsi BenchBig; do
        users=$([ "$table" = BenchBig ] && echo $((BIG_ITEMS / 20)) || echo "$USERS")
        printf '\\set u random(0, %d)\n\\set e random(0, 19)\nSELECT ddb.get_item(%s, %s, %s);\n' \
            $((users - 1)) "'$table'" "'USER#' || :u" "'EMAIL#' || md5((:u * 20 + :e)::text)::uuid" \
            >"$SCRIPTS/get_$table.sql"
        printf '\\set u random(0, %d)\nSELECT * FROM ddb.query(%s, %s, %s, %s, max_items => 20);\n' \
            $((users - 1)) "'$table'" "'USER#' || :u" "'begins_with'" "'EMAIL#'" >"$SCRIPTS/query_$table.sql"
        for op in get query; do
            echo "== latency $op on $table"
            run "${op}_$table" 1 >/dev/null
            LATENCY[$op,$table]=$(latency "${op}_$table" 1)
        done
    done
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
{
    echo "### Table engine: $ITEMS items"
    echo
    echo "Command: \`BENCH_ITEMS=$ITEMS BENCH_SECONDS=$SECONDS_PER_RUN bash bench/table_bench.sh\` ($(date -u +%Y-%m-%d)," \
         "$(nproc) cores, PostgreSQL $(psql_bench -At -c 'SHOW server_version' | cut -d' ' -f1), pgbench -M prepared," \
         "${SECONDS_PER_RUN} s per cell, synchronous_commit off)."
    echo
    echo "| operation | how | tps, 1 client | ratio | tps, 2 clients | ratio |"
    echo "|---|---|---:|---:|---:|---:|"
    row() {  # label, how, name, baseline name
        echo "| $1 | $2 | ${TPS[$3,1]} | $(ratio "${TPS[$3,1]}" "${TPS[$4,1]}") | ${TPS[$3,2]} | $(ratio "${TPS[$3,2]}" "${TPS[$4,2]}") |"
    }
    row "GetItem" "baseline SELECT" get_baseline get_baseline
    row "GetItem" "ddb.get_item" get_sql get_baseline
    row "GetItem" "ddb.execute" get_execute get_baseline
    row "Query begins_with LIMIT 20" "baseline SELECT" query_baseline query_baseline
    row "Query begins_with LIMIT 20" "ddb.query" query_sql query_baseline
    row "Query begins_with LIMIT 20" "ddb.execute" query_execute query_baseline
    row "PutItem" "ddb.put_item, no GSI" put_nogsi put_nogsi
    row "PutItem" "ddb.put_item, two GSIs" put_gsi put_nogsi
    row "PutItem" "baseline INSERT, two GSIs by PL/pgSQL trigger" put_baseline put_nogsi
    echo
    echo "Ratios: reads against the baseline SELECT of the same row; puts against ddb.put_item without GSIs."
    echo "PutItem with two GSIs against the PL/pgSQL baseline: $(ratio "${TPS[put_gsi,1]}" "${TPS[put_baseline,1]}")x (1 client)," \
         "$(ratio "${TPS[put_gsi,2]}" "${TPS[put_baseline,2]}")x (2 clients)."
    echo
    echo "With synchronous_commit on (1 client): no GSI ${TPS[put_nogsi,sync]} tps, two GSIs ${TPS[put_gsi,sync]} tps" \
         "($(ratio "${TPS[put_gsi,sync]}" "${TPS[put_nogsi,sync]}")x), PL/pgSQL baseline ${TPS[put_baseline,sync]} tps."
    if [ "$BIG_ITEMS" -gt 0 ]; then
        echo
        echo "Latency, 1 client, ddb.get_item / ddb.query LIMIT 20: $ITEMS items ${LATENCY[get,BenchNoGsi]} /" \
             "${LATENCY[query,BenchNoGsi]} ms; $BIG_ITEMS items ${LATENCY[get,BenchBig]} / ${LATENCY[query,BenchBig]} ms" \
             "($(ratio "${LATENCY[get,BenchBig]}" "${LATENCY[get,BenchNoGsi]}")x and" \
             "$(ratio "${LATENCY[query,BenchBig]}" "${LATENCY[query,BenchNoGsi]}")x)."
    fi
    echo
    echo "TTL sweep: $TTL_ITEMS expired items with two GSIs in ${sweep_ms} ms =" \
         "$(awk -v n="$TTL_ITEMS" -v ms="$sweep_ms" 'BEGIN { printf "%.0f", n / (ms / 1000) }') items/s" \
         "(left afterwards: $left items, $gsi_left GSI entries)."
} | tee "$REPORT"
