#!/usr/bin/env bash
# ddb-local — a DynamoDB endpoint for development and tests, for an ordinary
# user: a PostgreSQL cluster of its own with ddb_model, and ddb-gateway in
# front of it in development mode (any access key is taken).  Stops and
# removes what it made on SIGINT, SIGTERM or SIGHUP.  docs/local.md,
# ddb-local(1).  `make` builds ./ddb-local from this file, filling in the
# version and the PostgreSQL it was built for.
set -uo pipefail

VERSION='@VERSION@'
PG_BINDIR='@PG_BINDIR@'
PROGRAM=ddb-local

usage() {
    cat <<USAGE
ddb-local runs DynamoDB's API for development and tests: a throwaway PostgreSQL cluster with ddb_model, and ddb-gateway in development mode (any access key is taken).

usage: ddb-local [OPTION]...
  --port PORT        TCP port to serve on (default 8000)
  --host ADDRESS     IPv4 address to listen on (default 127.0.0.1; another lets anyone who reaches it use the data)
  --in-memory        keep the cluster in memory (a tmpfs directory); gone when ddb-local stops
  --dir DIR          keep the cluster in DIR, and use it again on the next run
  --cors ORIGINS     origins whose web pages may call it: scheme://host[:port],... or *
  --help             this text
  --version          the version
Without --dir the cluster is made in a directory of its own and removed when ddb-local stops.
It runs as an ordinary user, not root. Ctrl-C (SIGINT) or SIGTERM stops it.

Documentation: docs/local.md of the source (in /usr/share/doc/ddb-local/ with the Debian package),
and the manual page ddb-local(1).
USAGE
}

# Says what went wrong on stderr and exits 2 (a usage error) or the status given.
fail() {  # message, status
    echo "$PROGRAM: $1" >&2
    exit "${2:-1}"
}

port=8000 host=127.0.0.1 in_memory=0 keep_dir= cors=
while [ $# -gt 0 ]; do
    case $1 in
        --help) usage; exit 0 ;;
        --version) echo "$PROGRAM $VERSION"; exit 0 ;;
        --in-memory) in_memory=1 ;;
        --port | --host | --dir | --cors)
            [ $# -ge 2 ] || fail "$1 takes a value (ddb-local --help)" 2
            case $1 in
                --port) port=$2 ;;
                --host) host=$2 ;;
                --dir) keep_dir=$2 ;;
                --cors) cors=$2 ;;
            esac
            shift ;;
        *) fail "unknown option $1 (ddb-local --help)" 2 ;;
    esac
    shift
done
[[ $port =~ ^[0-9]{1,5}$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || fail "--port takes a TCP port, 1 to 65535" 2
[[ $host =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || fail "--host takes an IPv4 address, such as 127.0.0.1 or 0.0.0.0" 2
[ "$in_memory" = 0 ] || [ -z "$keep_dir" ] || fail "--in-memory and --dir exclude each other: a kept cluster is on disk" 2
[ "$(id -u)" != 0 ] || fail "runs as an ordinary user, not root: PostgreSQL refuses to run as root (as root: runuser -u SOMEONE -- ddb-local)" 2

# The programs: PostgreSQL's of the version ddb_model was built for, and the
# ddb-gateway beside this script (a checkout, /usr/bin), else on PATH.
[ -x "$PG_BINDIR/initdb" ] || PG_BINDIR=$(pg_config --bindir 2>/dev/null) ||
    fail "cannot find PostgreSQL 15's programs (initdb) in @PG_BINDIR@: install postgresql-15"
gateway="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/ddb-gateway"
[ -x "$gateway" ] || gateway=$(command -v ddb-gateway) || fail "cannot find ddb-gateway beside $0 or on PATH: run make tools (a checkout) or install ddb-gateway"
sharedir=$("$PG_BINDIR/pg_config" --sharedir 2>/dev/null || echo /usr/share/postgresql/15)
[ -f "$sharedir/extension/ddb_model.control" ] ||
    fail "ddb_model is not installed into the PostgreSQL of $PG_BINDIR: install postgresql-15-ddb-model, or run make install as root in a checkout"

# Where the cluster goes: a directory made now (on tmpfs for --in-memory),
# removed at the end, which also holds the logs and the server's socket.
if [ "$in_memory" = 1 ]; then
    base=/dev/shm
    [ -d "${XDG_RUNTIME_DIR:-}" ] && [ -w "${XDG_RUNTIME_DIR:-}" ] && base=$XDG_RUNTIME_DIR
    [ "$(stat -f -c %T "$base" 2>/dev/null)" = tmpfs ] || fail "--in-memory needs a tmpfs directory: neither \$XDG_RUNTIME_DIR nor /dev/shm is one"
else
    base=${TMPDIR:-/tmp}
fi
run_dir=$(mktemp -d "$base/ddb-local.XXXXXX") || fail "cannot make a directory in $base"
# a unix socket's path has room for 107 bytes
[ ${#run_dir} -le 80 ] || { rmdir "$run_dir"; run_dir=$(mktemp -d /tmp/ddb-local.XXXXXX) || fail "cannot make a directory in /tmp"; }
data=$run_dir/data
socket_dir=$run_dir
pg_port=5432
gateway_pid=
template_pid=
server_started=0

# Stops the gateway, then the server, and removes the directory made for this run.
stop() {
    trap - INT TERM HUP EXIT
    if [ -n "$gateway_pid" ]; then
        kill -TERM "$gateway_pid" 2>/dev/null
        wait "$gateway_pid" 2>/dev/null
    fi
    if [ -n "$template_pid" ]; then
        kill -TERM "$template_pid" 2>/dev/null
        wait "$template_pid" 2>/dev/null
    fi
    [ "$server_started" = 0 ] || "$PG_BINDIR/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1
    rm -rf "$run_dir"
}
# a stop asked for is a success
trap 'stop; exit 0' INT TERM HUP
trap 'status=$?; stop; exit $status' EXIT

if [ -n "$keep_dir" ]; then
    mkdir -p "$keep_dir" && data=$(cd "$keep_dir" && pwd) || fail "cannot make --dir $keep_dir"
fi

# Prints the end of a log to stderr and fails with what was being done.
fail_with_log() {  # what, log
    tail -n 15 "$2" >&2 2>/dev/null
    fail "$1 (above: the end of its log)"
}

# Starts a server on its socket only (nothing listens on TCP), with ddb_model preloaded.
start_server() {  # data directory, socket directory, port, log, options
    "$PG_BINDIR/pg_ctl" -D "$1" -l "$4" -w start \
        -o "-p $3 -k $2 -c listen_addresses='' -c shared_preload_libraries=ddb_model $5" >/dev/null 2>&1
}

psql_run() {  # socket directory, port, database, SQL
    "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$1" -p "$2" -U ddb -d "$3" -c "$4" >>"$run_dir/setup.log" 2>&1
}

# A new cluster, left running: the superuser ddb, trusted on a socket only
# its user can open, and a database ddb that has ddb_model.
make_cluster() {  # data directory, socket directory, port, log, options
    "$PG_BINDIR/initdb" -D "$1" -U ddb --auth=trust -E UTF8 --locale=C.UTF-8 -N >>"$run_dir/setup.log" 2>&1 &&
        start_server "$@" &&
        psql_run "$2" "$3" postgres "CREATE DATABASE ddb" && psql_run "$2" "$3" ddb "CREATE EXTENSION ddb_model"
}

# A made cluster, stopped, is kept in the user's cache and copied by the
# next runs, which then start in a fraction of the time initdb takes.  Its
# name changes with PostgreSQL's version and the installed extension's files.
cache_dir=${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/ddb-local
cache_key=$( { "$PG_BINDIR/postgres" --version; stat -L -c '%n %s %Y' "$sharedir"/extension/ddb_model* \
    "$("$PG_BINDIR/pg_config" --pkglibdir)/ddb_model.so"; } 2>/dev/null | md5sum | cut -c1-16)
template=$cache_dir/cluster-$cache_key

# Makes the cache's cluster in the background at a low priority, beside the
# one serving (on the next socket port); the cache's older entries go.
cache_cluster() {
    local building
    mkdir -p "$cache_dir" 2>/dev/null && building=$(mktemp -d "$cache_dir/.building.XXXXXX" 2>/dev/null) || return 0
    (
        trap '"$PG_BINDIR/pg_ctl" -D "$building/data" -m immediate -w stop >/dev/null 2>&1; rm -rf "$building"; exit 1' TERM
        if make_cluster "$building/data" "$socket_dir" $((pg_port + 1)) "$building/postgresql.log" "-c fsync=off" &&
            "$PG_BINDIR/pg_ctl" -D "$building/data" -m fast -w stop >/dev/null 2>&1 &&
            mv -T "$building/data" "$template" 2>/dev/null; then
            find "$cache_dir" -mindepth 1 -maxdepth 1 -name 'cluster-*' ! -path "$template" -exec rm -rf {} +
        fi
        rm -rf "$building"
    ) &
    template_pid=$!
    renice -n 10 -p "$template_pid" >/dev/null 2>&1
}

# Without --dir nothing outlives the run, so fsync is off.
durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
[ -z "$keep_dir" ] || durability=
how=kept
if [ ! -f "$data/PG_VERSION" ]; then
    [ -z "$(ls -A "$data" 2>/dev/null)" ] || fail "--dir $keep_dir is neither empty nor a cluster ddb-local made"
    how=made
    [ -f "$template/PG_VERSION" ] && cp -a "$template/." "$data/" 2>/dev/null && how=copied
fi
if [ "$how" = made ]; then
    rm -rf "${data:?}"/* 2>/dev/null
    make_cluster "$data" "$socket_dir" "$pg_port" "$run_dir/postgresql.log" "$durability" ||
        fail_with_log "cannot make a cluster with ddb_model in $data" "$run_dir/setup.log"
    server_started=1
else
    start_server "$data" "$socket_dir" "$pg_port" "$run_dir/postgresql.log" "$durability" ||
        fail_with_log "PostgreSQL did not start in $data" "$run_dir/postgresql.log"
    server_started=1
    # a kept cluster follows the extension installed since its last run
    [ "$how" != kept ] || psql_run "$socket_dir" "$pg_port" ddb "ALTER EXTENSION ddb_model UPDATE" ||
        fail_with_log "cannot update ddb_model in $data" "$run_dir/setup.log"
fi

gateway_args=(--listen "$host:$port" --dsn "host=$socket_dir port=$pg_port user=ddb dbname=ddb" --development --access-log off --shutdown-timeout 5)
case $host in 127.*) ;; *) gateway_args+=(--insecure-listen) ;; esac
[ -z "$cors" ] || gateway_args+=(--cors "$cors")
: >"$run_dir/gateway.log"
"$gateway" "${gateway_args[@]}" 2>>"$run_dir/gateway.log" &
gateway_pid=$!
# ready when the gateway says so (it has checked the database), or failed when it exits
until grep -q '^ddb-gateway: ready' "$run_dir/gateway.log"; do
    kill -0 "$gateway_pid" 2>/dev/null || { gateway_pid=; fail_with_log "ddb-gateway did not start on $host:$port" "$run_dir/gateway.log"; }
    sleep 0.02
done

[ "$how" != made ] || cache_cluster
endpoint="http://$host:$port"
[ "$host" != 0.0.0.0 ] || endpoint="http://127.0.0.1:$port"
if [ -n "$keep_dir" ]; then where="$data (kept)"; elif [ "$in_memory" = 1 ]; then where="$data (in memory, removed at the end)"; else where="$data (removed at the end)"; fi
cat <<READY
ddb-local $VERSION: DynamoDB's API at $endpoint
  development mode: any access key is taken, and every key sees the same tables
  cluster: $where
  AWS CLI: AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_DEFAULT_REGION=us-east-1 aws dynamodb list-tables --endpoint-url $endpoint
  SDKs: endpoint $endpoint, any region, any credentials
  SQL: psql "host=$socket_dir port=$pg_port user=ddb dbname=ddb"
Ctrl-C stops it.
READY
[[ $host == 127.* ]] || echo "$PROGRAM: listening on $host: anyone who reaches port $port there may read and change every table" >&2

# Serves until a signal (the traps above) or until the gateway exits.
wait "$gateway_pid"
status=$?
gateway_pid=
fail_with_log "ddb-gateway stopped (status $status)" "$run_dir/gateway.log"
