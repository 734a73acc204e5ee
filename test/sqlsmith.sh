#!/usr/bin/env bash
# SQLsmith's short run in the test command (bench/sqlsmith.sh has the long
# one and what it does): random queries as a plain login role and as a table
# owner, 15 s or 3,000 queries each, against the cluster of tools/test.sh
# (PGHOST/PGPORT/DDB_SERVER_LOG set).  Prints TAP (test/lib.sh): a check
# "sqlsmith as <role>" that passes when no server process crashed and
# queries ran (the statements that crashed are in
# build/sqlsmith/<role>.crashes).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SQLSMITH_CLUSTER=existing checks_from bash "$ROOT/bench/sqlsmith.sh" "${SQLSMITH_QUERIES:-3000}" "${SQLSMITH_SECONDS:-15}" || exit
done_testing
