#!/usr/bin/env bash
# bench/sqlsmith.sh — random SQL against ddb_model (issue 29): Debian's
# sqlsmith generates queries from the catalog (every table, view, function
# and operator the role can see, the extension's among them) and runs them,
# as a plain login role (PUBLIC's privileges only) and as a table owner
# (CreateTable's documented privileges, docs/security.md, and a table of
# its own), against a database with the extension and the five models'
# example data (tools/demo.sql and tools/demo/*.sql, as the demo loads
# them).
#
#   bash bench/sqlsmith.sh [QUERIES [SECONDS]]
#
# Each role runs until QUERIES queries (default 20000) or SECONDS seconds
# (default 300), whichever comes first, with a statement timeout of 1 s.
# Prints per role the queries run, the errors, and the server processes
# that crashed (the server log's "terminated by signal" lines, with the
# statement each was running, which is a finding), then one line per role
# "sqlsmith as <role> ... ok|FAILED" (FAILED: a crash, or no query run).
# Exits non-zero on a crash.
#
# By default on a cluster of its own (tools/cluster.sh, .cluster/smith, port
# 55499), built and installed from this checkout.  With SQLSMITH_CLUSTER=
# existing it uses the running cluster of the environment (PGHOST, PGPORT,
# DDB_SERVER_LOG: the test command's, test/sqlsmith.sh).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
QUERIES=${1:-20000}
SECONDS_PER_ROLE=${2:-300}
if [ "${SQLSMITH_CLUSTER:-}" != existing ]; then
    export CLUSTER_NAME=smith DDB_PGPORT=${DDB_PGPORT:-55499}
    source "$ROOT/tools/cluster.sh"
    set +e
    install_packages sqlsmith
    build_and_install
    start_cluster
    trap stop_cluster EXIT
fi
command -v sqlsmith >/dev/null || { echo "sqlsmith is not installed (apt-get install sqlsmith)"; exit 1; }
WORK="$ROOT/build/sqlsmith"
rm -rf "$WORK" && mkdir -p "$WORK"
DB=ddb_smith
PLAIN=ddb_smith_plain
OWNER=ddb_smith_owner
LOG=${DDB_SERVER_LOG:?the server log (DDB_SERVER_LOG)}
status=0
results=()

psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
    -c "DROP ROLE IF EXISTS $PLAIN" -c "DROP ROLE IF EXISTS $OWNER" \
    -c "CREATE DATABASE $DB" -c "CREATE ROLE $PLAIN LOGIN" -c "CREATE ROLE $OWNER LOGIN"
{
    psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "CREATE EXTENSION ddb_model" &&
    psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -f "$ROOT/tools/demo.sql" &&
    for model_demo in "$ROOT"/tools/demo/*.sql; do
        psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -f "$model_demo" || exit 1
    done &&
    psql -X -q -v ON_ERROR_STOP=1 -d "$DB" <<SQL
GRANT INSERT, UPDATE ON ddb.tables TO $OWNER;
GRANT SELECT ON ddb.table_grants TO $OWNER;
GRANT CREATE ON SCHEMA public TO $OWNER;
SET ROLE $OWNER;
SELECT ddb.create_table('SmithOwned', 'pk', 'S', 'sk', 'S');
SELECT ddb.put_item('SmithOwned', '{"pk": "o1", "sk": "a", "v": 1}');
SQL
} >"$WORK/setup.log" 2>&1 || { echo "setting up $DB failed:"; tail -5 "$WORK/setup.log"; exit 1; }
echo "set up in $SECONDS s" >>"$WORK/setup.log"

# smith ROLE: runs sqlsmith as ROLE; prints "queries errors crashes"
smith() {
    local role=$1 log_start out="$WORK/$1" crashes queries errors
    log_start=$(wc -c <"$LOG")
    # sqlsmith stops at --max-queries; timeout stops it at the time bound
    PGOPTIONS="-c statement_timeout=1s -c lock_timeout=1s" timeout --signal=INT "$SECONDS_PER_ROLE" \
        sqlsmith --verbose --max-queries="$QUERIES" --seed=29 \
        --target="host=$PGHOST port=$PGPORT dbname=$DB user=$role" >"$out.out" 2>"$out.err"
    tail -c +$((log_start + 1)) "$LOG" >"$out.server.log"
    crashes=$(grep -c "terminated by signal" "$out.server.log")
    grep -A1 "terminated by signal" "$out.server.log" | sed -n 's/.*Failed process was running: //p' >"$out.crashes"
    # sqlsmith's own figures: its last "queries: N" progress line, and the errors the server logged
    queries=$(grep -o 'queries: [0-9]*' "$out.err" | tail -1 | grep -o '[0-9]*')
    errors=$(grep -c ' ERROR: ' "$out.server.log")
    echo "${queries:-0} $errors $crashes"
}

printf '| role | queries | errors | crashes |\n|---|---:|---:|---:|\n'
for role in "$PLAIN" "$OWNER"; do
    read -r queries errors crashes <<<"$(smith "$role")"
    printf '| %s | %s | %s | %s |\n' "$role" "$queries" "$errors" "$crashes"
    if [ "$crashes" -gt 0 ]; then
        sed 's/^/  crashed running: /' "$WORK/$role.crashes" | cut -c1-400
    fi
    results+=("$role $queries $crashes")
done
echo "Command: \`bash bench/sqlsmith.sh $QUERIES $SECONDS_PER_ROLE\` ($(date -u +%Y-%m-%d), sqlsmith $(sqlsmith --version 2>&1 | head -1 | awk '{print $2}'), seed 29, statement_timeout 1 s)"
for r in "${results[@]}"; do
    read -r role queries crashes <<<"$r"
    if [ "$crashes" -eq 0 ] && [ "$queries" -gt 0 ]; then
        echo "sqlsmith as $role ... ok"
    else
        echo "sqlsmith as $role ... FAILED ($queries queries, $crashes crashes: build/sqlsmith/$role.crashes)"
        status=1
    fi
done
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
    -c "DROP ROLE IF EXISTS $PLAIN" -c "DROP ROLE IF EXISTS $OWNER" >/dev/null 2>&1
exit $status
