#!/usr/bin/env bash
# The test command: installs what is missing, builds, starts a throwaway
# cluster, runs pg_regress (make installcheck), the pgTAP suites (pg_prove),
# the code-shape checks (the include graph of src/ against
# docs/architecture.md; the release files; the manual pages against the
# programs' --help), the dump/restore, upgrade and concurrency checks,
# the gateway's, the backups' (which restart the cluster once), the sharding
# checks (ddb_router, and a deployment of tools/scale-out.sh), ddb-local as an
# ordinary user (beside the sharding checks), high availability (formations
# of pg_auto_failover whose primary is killed, from the backups on, in the
# background), ddb-transfer's,
# the hostile roles' suite and SQLsmith's short run, a cluster from a
# checkout at a long path, the examples of docs/, the PGXN archive installed
# with pgxnclient and the fuzz corpus replay
# (the shell suites print TAP, test/lib.sh, and run under prove), stops the
# cluster, and ends with one line "N passed, N failed" (pg_regress tests +
# pgTAP assertions + the checks + docs pages + replay).
source "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"

# the tests build with warnings as errors (a user's `make` does not)
WERROR=-Werror

# npm installs the SDK for JavaScript for docs/gateway.md's example
# (test/docs_gateway.sh); a nodejs from elsewhere may bring its own npm
npm_package=()
command -v npm >/dev/null || npm_package=(npm)
# sqlsmith: random SQL as hostile roles (test/sqlsmith.sh, bench/sqlsmith.sh); chromium: test/gateway_cors.sh's browser
# pgxnclient: the PGXN archive installed as PGXN's users install it (test/pgxn.sh)
# man-db (with groff-base): the manual pages rendered as lintian renders them (tools/check_manpages.sh)
# pg_auto_failover: the high-availability formations (tools/ha.sh, tools/scale-out.sh start --ha)
install_packages awscli python3-boto3 nodejs sqlsmith chromium pgxnclient man-db postgresql-15-auto-failover \
    pg-auto-failover-cli "${npm_package[@]}"
build_and_install

# The suites' TCP ports (55400-55799) lie in Linux's range of ephemeral
# ports: an outgoing connection of any program could hold one just as a
# suite's gateway binds it ("in use by another program").  They are kept
# out of that range (ip_local_reserved_ports, a runtime setting, as root),
# added to what is reserved already.
reserve_test_ports() {
    local file=/proc/sys/net/ipv4/ip_local_reserved_ports current
    [ -w "$file" ] || { echo "cannot reserve the test ports (not root): a suite may find its port taken"; return 0; }
    current=$(cat "$file")
    case ",$current," in *,55400-55799,*) return 0 ;; esac
    echo "${current:+$current,}55400-55799" >"$file"
}
reserve_test_ports
start_cluster
trap stop_cluster EXIT

passed=0
failed=0
LOG_DIR="$ROOT/build/test-logs"
mkdir -p "$LOG_DIR"

# The fuzz harnesses need no server: they are built and run over their corpus
# meanwhile, in the background (the result is counted at the end)
bash "$ROOT/test/fuzz/replay.sh" >"$LOG_DIR/fuzz-replay.log" 2>&1 &
fuzz_replay=$!

# pg_regress: one count per test file.
echo "== pg_regress"
set +e
make -C "$ROOT" -s installcheck >"$LOG_DIR/regress.log" 2>&1
set -e
grep -E '^(test| ) ' "$LOG_DIR/regress.log" || true
regress_ok=$(grep -cE '^(test| ) .* \.\.\. ok' "$LOG_DIR/regress.log" || true)
regress_bad=$(grep -cE '^(test| ) .* \.\.\. FAILED' "$LOG_DIR/regress.log" || true)
# every test file counts: one pg_regress did not reach (a missing expected
# file stops it) is a failure, not a silent skip
regress_files=$(ls "$ROOT"/test/sql/*.sql | wc -l)
regress_missing=$((regress_files - regress_ok - regress_bad))
if [ "$regress_missing" -gt 0 ]; then
    echo "pg_regress did not finish ($regress_missing of $regress_files test files without a result):"
    tail -20 "$LOG_DIR/regress.log"
    regress_bad=$((regress_bad + regress_missing))
fi
if [ "$regress_bad" -gt 0 ] && [ -f "$ROOT/build/regress/regression.diffs" ]; then
    head -200 "$ROOT/build/regress/regression.diffs"
fi
passed=$((passed + regress_ok)); failed=$((failed + regress_bad))

# pgTAP: one count per assertion.
echo "== pgTAP"
cluster_psql -q -c "DROP DATABASE IF EXISTS ddb_tap" -c "CREATE DATABASE ddb_tap"
cluster_psql -q -d ddb_tap -c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION ddb_model"
set +e
pg_prove --verbose -h "$SOCKET_DIR" -p "$PGPORT_NUM" -U postgres -d ddb_tap \
    "$ROOT"/test/pgtap/*.sql >"$LOG_DIR/pgtap.log" 2>&1
set -e
tap_ok=$(grep -cE '^ok [0-9]+' "$LOG_DIR/pgtap.log" || true)
tap_bad=$(grep -cE '^not ok [0-9]+' "$LOG_DIR/pgtap.log" || true)
grep -E '^(not ok|Result|Files=)|Failed|Parse errors|Bad plan' "$LOG_DIR/pgtap.log" || true
if ! grep -q '^Result: PASS' "$LOG_DIR/pgtap.log"; then
    echo "pg_prove did not pass:"; tail -40 "$LOG_DIR/pgtap.log"
    [ "$tap_bad" -gt 0 ] || tap_bad=1
fi
passed=$((passed + tap_ok)); failed=$((failed + tap_bad))

# Runs shell suites, each printing TAP (test/lib.sh), with prove into one log.
prove_checks() {  # log name, script...
    local log="$LOG_DIR/$1.log"
    shift
    prove --verbose --timer --merge --exec bash "$@" >"$log" 2>&1 || true
}

# Shows the log of prove_checks here and counts each check (ok / not ok).  A
# suite that exits non-zero or has a bad plan without a failed check
# (stopped before its checks) counts as one failure.
count_checks() {  # log name
    local log="$LOG_DIR/$1.log"
    cat "$log"
    passed=$((passed + $(grep -cE '^ok [0-9]+' "$log" || true)))
    failed=$((failed + $(grep -cE '^not ok [0-9]+' "$log" || true)))
    # prove's summary: "<suite> (Wstat: ... Tests: N Failed: 0)" for a suite that failed without a failed check
    failed=$((failed + $(grep -cE '^[^ ]+ +\(Wstat: .* Failed: 0\)$' "$log" || true)))
}

# Runs shell suites and shows and counts their checks.
run_checks() {  # title, log name, script...
    echo "== $1"
    prove_checks "$2" "${@:3}"
    count_checks "$2"
}

run_checks "code shape" code_shape "$ROOT/tools/check_includes.sh" "$ROOT/tools/check_release.sh" "$ROOT/tools/check_manpages.sh"
run_checks "dump, restore and DROP EXTENSION" dump "$ROOT/test/dump_restore.sh"
run_checks "upgrade from 0.1" upgrade "$ROOT/test/upgrade.sh"
run_checks "concurrency" concurrency "$ROOT/test/concurrency.sh" "$ROOT/test/contention.sh" "$ROOT/test/models_concurrency.sh" "$ROOT/test/server_locks.sh" \
    "$ROOT/test/streams_concurrency.sh"
run_checks "gateway" gateway "$ROOT/test/gateway.sh" "$ROOT/test/gateway_service.sh" "$ROOT/test/gateway_replicas.sh" "$ROOT/test/gateway_failover.sh" "$ROOT/test/authorization.sh" "$ROOT/test/sdk_clients.sh" \
    "$ROOT/test/gateway_table_settings.sh" "$ROOT/test/gateway_throttling.sh" "$ROOT/test/gateway_fuzz.sh" "$ROOT/test/gateway_cors.sh"
# high availability (docs/operations.md): pg_auto_failover formations of
# their own, on ports of their own, a primary killed under load in each;
# checked meanwhile, from here on, in the background
prove_checks ha "$ROOT/test/ha.sh" "$ROOT/test/ha_writes.sh" "$ROOT/test/ha_state.sh" "$ROOT/test/scale_out_ha.sh" &
ha=$!
run_checks "backups and restores" backups "$ROOT/test/backups.sh"
run_checks "point-in-time recovery" pitr "$ROOT/test/pitr.sh"
# tools/scale-out.sh's deployment and ddb-local (as an ordinary user,
# docs/local.md) have servers and ports of their own, nothing of the test
# cluster's: they are checked meanwhile, in the background
prove_checks scale_out "$ROOT/test/scale_out.sh" &
scale_out=$!
prove_checks ddb_local "$ROOT/test/ddb_local.sh" &
ddb_local=$!
run_checks "sharding (ddb_router)" sharding "$ROOT/test/router.sh" "$ROOT/test/router_move.sh" "$ROOT/test/router_transactions.sh" \
    "$ROOT/test/router_models.sh" "$ROOT/test/shard_direct.sh"
echo "== sharding: tools/scale-out.sh's deployment (checked meanwhile)"
wait "$scale_out"
count_checks scale_out
echo "== ddb-local (checked meanwhile)"
wait "$ddb_local"
count_checks ddb_local
run_checks "transfer" transfer "$ROOT/test/transfer.sh" "$ROOT/test/exports.sh"
# hostile roles against a victim's tables (issue 29, docs/security.md "Threat model")
run_checks "hostile roles" hostile "$ROOT/test/hostile.sh" "$ROOT/test/sqlsmith.sh"
run_checks "a checkout at a long path" socket "$ROOT/test/socket_path.sh"
run_checks "docs examples" docs "$ROOT/test/docs_examples.sh" "$ROOT/test/docs_gateway.sh"
# the release archive through pgxnclient, into a fresh cluster (docs/releasing.md)
run_checks "the PGXN archive" pgxn "$ROOT/test/pgxn.sh"
echo "== high availability (checked meanwhile)"
wait "$ha"
count_checks ha

# The fuzz harness over its corpus (a crash or broken invariant fails),
# started with the pg_regress tests.
echo "== fuzz corpus replay"
if wait "$fuzz_replay"; then
    passed=$((passed + 1)); echo "replay ok"
else
    failed=$((failed + 1)); tail -30 "$LOG_DIR/fuzz-replay.log"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
