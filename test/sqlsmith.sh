#!/usr/bin/env bash
# SQLsmith's short run in the test command (bench/sqlsmith.sh has the long
# one and what it does): random queries as a plain login role and as a table
# owner, 15 s or 3,000 queries each, against the cluster of tools/test.sh
# (PGHOST/PGPORT/DDB_SERVER_LOG set).  Prints "sqlsmith as <role> ... ok"
# when no server process crashed and queries ran, FAILED otherwise (the
# statements that crashed are in build/sqlsmith/<role>.crashes).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SQLSMITH_CLUSTER=existing bash "$ROOT/bench/sqlsmith.sh" "${SQLSMITH_QUERIES:-3000}" "${SQLSMITH_SECONDS:-15}"
