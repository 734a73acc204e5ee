# test/lib.sh — the one library of the shell suites (test/*.sh), which run
# against the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set).  A suite
# sources it first:
#     source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# and ends with done_testing.  It sets ROOT (the checkout) and status (1
# once a check failed).  The suites print TAP, which tools/test.sh reads
# with prove: "ok N - <check>", or "not ok N - <check>" and "# expected
# ..., got ...", per check; then, once done_testing is reached, the plan
# "1..N" as the suite exits.  A suite that stops before (a command that
# exits, an error under set -e) prints no plan and exits non-zero: prove
# counts it as failed.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# gateway_start, gateway_ready
source "$ROOT/tools/gateway.sh"
status=0
TESTS_RUN=0
TESTS_DONE=0
EXIT_HOOKS=()
GATEWAY_PIDS=()

# The suite's working directory, build/NAME, made afresh; its path in WORK.
work_dir() {  # name
    WORK="$ROOT/build/$1"
    rm -rf "$WORK" && mkdir -p "$WORK"
}

# Prints lines (the arguments, else the input) as TAP diagnostics: "# " before each.
diag() {
    if [ $# -gt 0 ]; then printf '%s\n' "$@"; else cat; fi | sed 's/^/# /'
}

# One TAP test line: "ok N - name" when passed is yes, else "not ok N -
# name" and the diagnostics after it (status=1).  A "#" in the name is
# escaped ("\#"), as TAP wants.
ok() {  # yes|no, name, diagnostic lines...
    local name=${2//#/\\#}
    TESTS_RUN=$((TESTS_RUN + 1))
    if [ "$1" = yes ]; then
        echo "ok $TESTS_RUN - $name"
    else
        echo "not ok $TESTS_RUN - $name"
        [ $# -le 2 ] || diag "${@:3}"
        status=1
    fi
}

# A check: passes when the actual value is the expected one.
check() {  # name, expected, actual
    if [ "$2" = "$3" ]; then ok yes "$1"; else ok no "$1" "expected $2, got $3"; fi
}

# Runs a program of its own that prints "<check> ... ok" or "<check> ...
# FAILED (why)" lines (bench/sqlsmith.sh, a suite's Python client): each
# becomes a TAP test line, its other lines diagnostics.  Returns the
# program's exit status.
checks_from() {  # command...
    local line
    while IFS= read -r line; do
        case "$line" in
            *" ... ok") ok yes "${line% ... ok}" ;;
            *" ... FAILED"*) ok no "${line%% ... FAILED*}" "${line#* ... FAILED }" ;;
            *) diag "$line" ;;
        esac
    done < <("$@")
    wait $!
}

# psql against the suite's database ($DB when set; another with -d NAME,
# the last -d winning): no psqlrc, quiet, unaligned tuples only, stopping
# at the first error.
q() {
    psql -X -q -At -v ON_ERROR_STOP=1 ${DB:+-d "$DB"} "$@"
}

# Drops (if they exist, whoever is connected) and creates databases; with
# --extension creates ddb_model in each, with --extension=VERSION that
# version of it.
fresh_db() {  # [--extension[=VERSION]] name...
    local extension= db
    case "$1" in
        --extension) extension="CREATE EXTENSION ddb_model"; shift ;;
        --extension=*) extension="CREATE EXTENSION ddb_model VERSION '${1#*=}'"; shift ;;
    esac
    for db in "$@"; do
        drop_db "$db" && psql -X -q -d postgres -c "CREATE DATABASE \"$db\"" || return 1
        [ -z "$extension" ] || psql -X -q -d "$db" -c "SET client_min_messages = warning" -c "$extension" || return 1
    done
}

# Drops databases if they exist, whoever is connected.
drop_db() {  # name...
    local db
    for db in "$@"; do
        psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" || return 1
    done
}

# A database's connection string as the test cluster's server reaches it
# (a router's node).
node_dsn() {  # database
    echo "host=$(psql -X -At -d postgres -c "SHOW unix_socket_directories" | cut -d, -f1)" \
        "port=$(psql -X -At -d postgres -c "SHOW port") dbname=$1"
}

# A sharded deployment in the test cluster (docs/scale-out.md), made
# afresh: the router's database with ddb_router and 16 partitions, the node
# databases with ddb_model, added to it as n0, n1, ...
fresh_router() {  # router database, node database...
    local router=$1 i
    shift
    fresh_db "$router" && fresh_db --extension "$@" &&
        q -d "$router" -c "SET client_min_messages = warning" -c "CREATE EXTENSION ddb_router CASCADE" || return 1
    for ((i = 1; i <= $#; i++)); do
        q -d "$router" -c "SELECT ddb_router.add_node('n$((i - 1))', '$(node_dsn "${!i}")')" >/dev/null || return 1
    done
    q -d "$router" -c "SELECT ddb_router.create_partitions(16)" >/dev/null
}

# Installs the npm packages locked in a directory of the checkout
# (package.json, package-lock.json) into a directory of build/, unless the
# same lock's are there already; on failure says why (diag) and fails.
npm_packages() {  # locked directory, npm directory
    local locked=$1 dir=$2
    if [ -d "$dir/node_modules" ] && cmp -s "$locked/package-lock.json" "$dir/package-lock.json"; then
        return 0
    fi
    rm -rf "$dir" && mkdir -p "$dir"
    cp "$locked/package.json" "$locked/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --silent) >"$dir/npm.log" 2>&1 ||
        { diag "npm ci in $dir failed:"; tail -20 "$dir/npm.log" | diag; rm -rf "$dir/node_modules"; return 1; }
}

# Polls a condition (a command line, evaluated each time in the caller's
# variables; not its positional parameters, which are wait_for's) every
# 0.1 s until it holds, for SECONDS at most; fails when it never did.
wait_for() {  # seconds, condition
    local wait_for_tick
    for ((wait_for_tick = 0; wait_for_tick < $1 * 10; wait_for_tick++)); do
        eval "$2" && return 0
        sleep 0.1
    done
    return 1
}

# Starts ddb-gateway (gateway_start: on 127.0.0.1:PORT, its stderr into
# LOG, with the arguments given) and waits until it answers; the suite
# stops it as it exits, if stop_gateway did not.  A gateway that does not
# start ends the suite (a failure, with the end of its log).
start_gateway() {  # port, log, ddb-gateway arguments...
    gateway_start "$@" && return 0
    diag "ddb-gateway on 127.0.0.1:$1 did not start; the end of $2:"
    tail -5 "$2" | diag
    exit 1
}

# Stops a gateway (the last started by default): SIGTERM, and waits for it;
# returns its exit status.
stop_gateway() {  # [pid]
    local pid=${1:-$gateway_pid} running=() p
    for p in "${GATEWAY_PIDS[@]}"; do [ "$p" = "$pid" ] || running+=("$p"); done
    GATEWAY_PIDS=("${running[@]}")
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

# Runs a command line (evaluated) as the suite exits, before the plan; the
# last one added runs first.
at_exit() {  # command line
    EXIT_HOOKS=("$1" "${EXIT_HOOKS[@]}")
}

# Starts a one-command deployment for a suite (a script of tools/ that
# takes start ... and stop, and prints endpoint=, access_key_id= and
# secret_access_key=): stops one an interrupted run left, empties WORK,
# has it stopped as the suite exits, starts it (its output in
# WORK/start.log; the suite ends when it fails), says how long it took and
# reads what it printed into ENDPOINT, KEY_ID and SECRET.
start_deployment() {  # script of tools/, start arguments...
    local script=$1 started=$SECONDS
    shift
    bash "$ROOT/tools/$script" stop >/dev/null 2>&1
    rm -rf "$WORK" && mkdir -p "$WORK"
    at_exit "bash '$ROOT/tools/$script' stop >/dev/null 2>&1"
    bash "$ROOT/tools/$script" "$@" >"$WORK/start.log" 2>&1
    check "tools/$script $*" "0" "$?"
    [ "$status" = 0 ] || { tail -5 "$WORK/start.log" | diag; exit 1; }
    diag "started in $((SECONDS - started)) s"
    ENDPOINT=$(sed -n 's/^endpoint=//p' "$WORK/start.log")
    KEY_ID=$(sed -n 's/^access_key_id=//p' "$WORK/start.log")
    SECRET=$(sed -n 's/^secret_access_key=//p' "$WORK/start.log")
}

# Ends a suite that ran to its end: exits with its status, the plan printed (finish).
done_testing() {
    TESTS_DONE=1
    exit "$status"
}

# As the suite exits: stops the gateways still running, runs the exit
# hooks, prints the plan when done_testing was reached (else says where it
# stopped, and exits non-zero).
finish() {
    local code=$? pid hook
    for pid in "${GATEWAY_PIDS[@]}"; do
        kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    done
    for hook in "${EXIT_HOOKS[@]}"; do eval "$hook"; done
    if [ "$TESTS_DONE" = 1 ]; then
        echo "1..$TESTS_RUN"
    else
        diag "$(basename "$0") stopped (exit status $code) after $TESTS_RUN checks, before its end"
        [ "$code" -ne 0 ] || code=1
    fi
    exit "$code"
}
trap finish EXIT
