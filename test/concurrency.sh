#!/usr/bin/env bash
# Races between sessions, made deterministic by holding one transaction open
# while the other session runs.  Runs against the cluster of tools/test.sh
# (PGHOST/PGPORT/PGUSER set); prints "<check> ... ok|FAILED" per check.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK="$ROOT/build/concurrency"
rm -rf "$WORK" && mkdir -p "$WORK"
status=0
DB=ddb_concurrency

q() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
check() {  # name, expected, actual
    if [ "$2" = "$3" ]; then echo "$1 ... ok"; else echo "$1 ... FAILED (expected $2, got $3)"; status=1; fi
}

psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
q -c "CREATE EXTENSION ddb_model" -c "SELECT ddb.create_table('Race', 'pk', 'S', 'sk', 'S')" >/dev/null
put_old='{"TableName": "Race", "Item": {"pk": {"S": "k"}, "sk": {"S": "1"}, "who": {"S": "%s"}}, "ReturnValues": "ALL_OLD"}'

# Session A creates the item and holds its transaction open; session B's
# PutItem with ReturnValues ALL_OLD on the same new key runs meanwhile.  B
# must wait, then report A's item as the one it replaced (never nothing).
{
    echo "BEGIN;"
    echo "SELECT ddb.execute('PutItem', '$(printf "$put_old" A)');"
    echo "SELECT pg_sleep(1.5);"
    echo "COMMIT;"
} | q >"$WORK/a.out" 2>&1 &
a_pid=$!
sleep 0.5
q -c "SELECT ddb.execute('PutItem', '$(printf "$put_old" B)') -> 'Attributes' -> 'who' ->> 'S'" >"$WORK/b.out" 2>&1
wait "$a_pid"
check "PutItem ALL_OLD racing a create reports the item it replaced" "A" "$(cat "$WORK/b.out")"
check "the later put wins" "B" "$(q -c "SELECT item->>'who' FROM public.\"Race\"")"

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB"
exit $status
