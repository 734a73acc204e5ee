#!/usr/bin/env bash
# The short form of bench/gateway_fuzz.sh (FUZZ_SECONDS, default 15):
# malformed and hostile signed requests against ddb-gateway on the cluster
# of tools/test.sh (PGHOST/PGPORT/PGUSER set).  Prints TAP (test/lib.sh);
# a failure shows the report (the seed, the statuses, the offending requests).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
REPORT="$ROOT/build/gateway-fuzz/test-report.txt"
mkdir -p "$ROOT/build/gateway-fuzz"
FUZZ_SECONDS=${FUZZ_SECONDS:-15} FUZZ_PORT=${FUZZ_PORT:-55484} \
    bash "$ROOT/bench/gateway_fuzz.sh" --running-cluster >"$REPORT" 2>&1
run_status=$?
sent=$(sed -n 's/^sent \([0-9]*\) .*/\1/p' "$REPORT")
check "the fuzzer sent over 1000 signed requests ($(grep '^sent' "$REPORT"))" "yes" "$([ "${sent:-0}" -gt 1000 ] && echo yes || echo no)"
check "no 5xx among them" "5xx 0" "$(grep '^5xx' "$REPORT")"
check "every request was answered" "errors 0" "$(grep '^errors' "$REPORT")"
check "no PostgreSQL backend crashed" "backend crashes 0" "$(grep '^backend crashes' "$REPORT")"
check "the gateway survived, and the run ended well" "0" "$run_status"
[ "$status" -eq 0 ] || diag <"$REPORT"
done_testing
