# tools/cluster.sh — shared by tools/demo.sh, tools/test.sh and
# tools/scale-out.sh (source it).
#
# Installs what the project needs from Debian's archive, builds and installs
# the extension, and runs a throwaway PostgreSQL 15 cluster in
# .cluster/$CLUSTER_NAME inside the checkout (test or demo, so that running
# the tests leaves the demo's data alone): owned by the postgres user,
# listening only on its own unix socket in .cluster/$CLUSTER_NAME/socket, or,
# from a checkout at a long path, in /tmp/ddb_model-<hash of the checkout's
# path>-$CLUSTER_NAME (a unix socket's path holds at most 107 bytes).

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CLUSTER_NAME=${CLUSTER_NAME:-test}
CLUSTER_DIR="$ROOT/.cluster/$CLUSTER_NAME"
PGDATA_DIR="$CLUSTER_DIR/data"
# The test cluster skips fsync: it is thrown away after each run.
case "$CLUSTER_NAME" in
    demo) PGPORT_NUM=${DDB_PGPORT:-55433}; SERVER_OPTS="" ;;
    *) PGPORT_NUM=${DDB_PGPORT:-55432}; SERVER_OPTS="-c fsync=off" ;;
esac
# A unix socket's path holds at most 107 bytes: when a socket's path in the
# checkout would come near that, the socket goes into a short directory of
# this checkout's own in /tmp, named after what it serves (made and removed
# by whoever starts and stops the server: start_cluster and stop_cluster for
# the throwaway cluster).
socket_dir_for() {  # directory in the checkout, port, name
    if [ "$(printf %s "$1/.s.PGSQL.$2" | wc -c)" -gt 100 ]; then
        echo "/tmp/ddb_model-$(cd "$ROOT" && pwd -P | sha256sum | cut -c1-12)-$3"
    else
        echo "$1"
    fi
}
SOCKET_DIR=$(socket_dir_for "$CLUSTER_DIR/socket" "$PGPORT_NUM" "$CLUSTER_NAME")
PGBIN=/usr/lib/postgresql/15/bin
# psql, pgbench, pg_dump ... are PostgreSQL 15's own, not Debian's pg_wrapper
# in /usr/bin (a Perl script that picks the version: it added 75 ms to each of
# the test command's thousands of psql calls)
export PATH="$PGBIN:$PATH"
# gateway_ready, gateway_start
source "$ROOT/tools/gateway.sh"

PACKAGES=(build-essential postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap
          libtap-parser-sourcehandler-pgtap-perl libjansson-dev clang-14 libclang-rt-14-dev
          libpq-dev libmicrohttpd-dev zlib1g-dev libssl-dev pkg-config curl openssl python3
          postgresql-15-plproxy)

# Installs the Debian packages that are missing (one apt-get update, one
# install): the project's, and any named as arguments.
install_packages() {
    local missing=()
    for p in "${PACKAGES[@]}" "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "== installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

# Builds the extension and its tools (ddb-gateway, ddb-transfer) and installs
# them into the server's directories; warnings are errors when WERROR=-Werror
# (the test command sets it); on every processor at once.
build_and_install() {
    echo "== building and installing ddb_model"
    make -C "$ROOT" -s clean >/dev/null
    make -C "$ROOT" -s -j"$(nproc)" all tools WERROR="${WERROR:-}" >/dev/null
    make -C "$ROOT" -s install >/dev/null
}

# Runs a command as the postgres user.
as_postgres() {
    (cd / && runuser -u postgres -- "$@")
}

# Gives the postgres user search permission on a directory and its ancestors
# (a checkout under a private directory, such as /root), and nothing more.
allow_postgres_into() {  # directory
    local dir=$1
    while [ "$dir" != / ]; do
        runuser -u postgres -- test -x "$dir" || chmod o+x "$dir"
        dir=$(dirname "$dir")
    done
}

# True while a process runs (one that has exited and waits for its parent to reap it does not).
process_alive() {  # pid
    local state
    state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
    [ -n "$state" ] && [ "$state" != Z ]
}

# Waits until a process has exited, 40 s at most (a gateway's requests in flight get 30): how tools/scale-out.sh and tools/ha.sh stop their servers.
wait_exited() {  # pid
    for _ in $(seq 400); do
        process_alive "$1" || return 0
        sleep 0.1
    done
    return 1
}

# Creates a PostgreSQL data directory (an empty directory of postgres's, mode 700).
init_server() {  # data directory
    as_postgres "$PGBIN/initdb" -D "$1" -U postgres -E UTF8 --locale=C.UTF-8 --auth=trust >/dev/null
}

# Starts a server as postgres, listening only on its unix socket, with
# prepared transactions (which a router's transactions across shard
# databases take: docs/scale-out.md); more server options may follow.
start_server() {  # data directory, port, socket directory, log file, options...
    local data=$1 port=$2 socket=$3 log=$4
    shift 4
    as_postgres "$PGBIN/pg_ctl" -D "$data" -l "$log" -w start \
        -o "-p $port -k $socket -c listen_addresses='' -c max_prepared_transactions=64 $*" >/dev/null
}

# Creates (afresh) and starts the throwaway cluster, with ddb_model preloaded
# (shared_preload_libraries): throttling keeps its buckets in shared memory
# (docs/throttling.md).
start_cluster() {
    stop_cluster
    rm -rf "$CLUSTER_DIR" "$SOCKET_DIR"
    mkdir -p "$PGDATA_DIR"
    # not -p: a short directory in /tmp is made afresh, never one found there
    mkdir -m 755 "$SOCKET_DIR"
    chmod 755 "$ROOT/.cluster"
    chown -R postgres:postgres "$CLUSTER_DIR" "$SOCKET_DIR"
    allow_postgres_into "$ROOT"
    chmod 700 "$PGDATA_DIR"
    echo "== starting PostgreSQL 15 in $PGDATA_DIR (socket $SOCKET_DIR, port $PGPORT_NUM)"
    init_server "$PGDATA_DIR"
    start_server "$PGDATA_DIR" "$PGPORT_NUM" "$SOCKET_DIR" "$CLUSTER_DIR/server.log" $SERVER_OPTS \
        -c shared_preload_libraries=ddb_model
}

# Stops the cluster this checkout started, if it runs.
stop_cluster() {
    # the demo's gateway goes first (tools/demo.sh)
    if [ -f "$CLUSTER_DIR/gateway.pid" ]; then
        kill "$(cat "$CLUSTER_DIR/gateway.pid")" 2>/dev/null || true
        rm -f "$CLUSTER_DIR/gateway.pid"
    fi
    if [ -f "$PGDATA_DIR/postmaster.pid" ]; then
        as_postgres "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -m fast -w stop >/dev/null || true
    fi
    # the short socket directory in /tmp, once the server has stopped
    if [ "$SOCKET_DIR" != "$CLUSTER_DIR/socket" ] && [ ! -f "$PGDATA_DIR/postmaster.pid" ]; then
        rm -rf "$SOCKET_DIR"
    fi
}

# psql against the throwaway cluster.
cluster_psql() {
    psql -X -h "$SOCKET_DIR" -p "$PGPORT_NUM" -U postgres "$@"
}

export PGHOST="$SOCKET_DIR" PGPORT="$PGPORT_NUM" PGUSER=postgres
# the server's log, for the scripts that look for crashes in it (the socket
# directory need not be next to it)
export DDB_SERVER_LOG="$CLUSTER_DIR/server.log"
