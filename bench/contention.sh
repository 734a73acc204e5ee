#!/usr/bin/env bash
# bench/contention.sh — the long form of test/contention.sh: 8 pgbench
# clients writing two items in opposite orders with TransactWriteItems (and
# single writes between them) for CONTENTION_SECONDS (default 60), on a
# cluster of its own (tools/cluster.sh, .cluster/contention, port 55438).
# Prints the checks and the outcomes (committed, TransactionConflict
# cancellations, TransactionConflictException); docs/benchmarks.md has a run.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CLUSTER_NAME=contention DDB_PGPORT=${DDB_PGPORT:-55438}
source "$ROOT/tools/cluster.sh"
install_packages
build_and_install
start_cluster
trap stop_cluster EXIT
CONTENTION_SECONDS=${CONTENTION_SECONDS:-60} bash "$ROOT/test/contention.sh"
