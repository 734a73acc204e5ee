#!/usr/bin/env bash
# tools/ha.sh — a highly available ddb_model on this machine (docs/operations.md,
# "High availability (in progress)"), built on pg_auto_failover (Debian's
# postgresql-15-auto-failover and pg-auto-failover-cli): a monitor, a
# primary and a secondary with synchronous replication (a commit is
# acknowledged once it is on both nodes), ddb_model preloaded in both, and
# ddb-gateway in front, whose database address names both nodes and asks
# for the writable one (libpq's target_session_attrs=read-write).
#
#   bash tools/ha.sh start         # installs, builds, starts; prints the endpoint and an access key
#   bash tools/ha.sh status        # the formation's state (pg_autoctl show state) and the gateway
#   bash tools/ha.sh failover      # a planned failover (pg_autoctl perform failover); waits for the new primary
#   bash tools/ha.sh kill-primary  # SIGKILL to the primary node (its pg_autoctl and its postmaster); waits for the promotion
#                                  # (not with --no-wait)
#   bash tools/ha.sh freeze-primary  # SIGSTOP to the primary node's processes, as a hung machine; waits for the promotion
#   bash tools/ha.sh thaw          # SIGCONT to the frozen node: its pg_autoctl finds itself demoted and follows
#   bash tools/ha.sh stop-secondary  # stops the secondary (pg_autoctl stop); waits until the primary commits alone
#   bash tools/ha.sh rejoin [NODE...]  # runs pg_autoctl again for the nodes named, or for every node down,
#                                  # which follow the primary (rewound or copied afresh); without names it
#                                  # waits until the formation has a primary and a secondary again
#   bash tools/ha.sh stop          # stops the gateway, the nodes and the monitor
#
# As root on Debian 12 (tools/cluster.sh installs and builds; the servers and
# pg_autoctl run as postgres).  Everything lives in build/ha/: a data
# directory per server, pg_autoctl's configuration and state (its XDG
# directories), a log per pg_autoctl service, the gateway's logs and pid.
# The servers listen on 127.0.0.1 and on unix sockets in a short directory
# of the deployment's own in /tmp; the gateway on 127.0.0.1.  start creates
# the deployment afresh (its data is thrown away), and refuses while one runs.
#
# Environment:
#   DDB_HA_DIR           where the deployment lives (build/ha)
#   DDB_HA_PGPORT        the monitor's port; the nodes' are the next two (55700)
#   DDB_HA_GATEWAY_PORT  the gateway's port on 127.0.0.1 (55710)
#   DDB_HA_INSTALLED=1   start what is installed and built: no package installation, no build
#   DDB_GATEWAY_*        the gateway's other settings (docs/gateway.md)
# The other commands need only DDB_HA_DIR: start records the rest there.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"
source "$(dirname "${BASH_SOURCE[0]}")/formation.sh"

HA_DIR=${DDB_HA_DIR:-$ROOT/build/ha}
# tools/formation.sh's servers live there; the one formation is pg_auto_failover's default
FORMATION_DIR=$HA_DIR
FORMATION=default
SETTINGS="$HA_DIR/deployment.env"
DB=ddb
NODES=(node1 node2)
GATEWAY_PID_FILE="$HA_DIR/gateway.pid"
GATEWAY_LOG="$HA_DIR/gateway.log"
# The node freeze-primary stopped, and its processes' pids, for thaw.
FROZEN="$HA_DIR/frozen"

# The ports and socket directory: from the environment for start, from the deployment's record afterwards.
load_settings() {
    if [ "${1:-}" = new ]; then
        BASE_PORT=${DDB_HA_PGPORT:-55700}
        GATEWAY_PORT=${DDB_HA_GATEWAY_PORT:-55710}
        # a unix socket's path holds at most 107 bytes: a short directory, named after the deployment's
        SOCKET="/tmp/ddb_ha-$(printf %s "$HA_DIR" | sha256sum | cut -c1-12)"
    elif [ -f "$SETTINGS" ]; then
        source "$SETTINGS"
    else
        return 1
    fi
    formation_env
    declare -gA PORT=([monitor]=$BASE_PORT [node1]=$((BASE_PORT + 1)) [node2]=$((BASE_PORT + 2)))
}

# psql on a server's database (ddb unless -d follows), quiet, unaligned, stopping at the first error.
server_psql() {  # server, psql arguments...
    local name=$1
    shift
    psql -X -q -At -v ON_ERROR_STOP=1 -h "$SOCKET" -p "${PORT[$name]}" -U postgres -d "$DB" "$@"
}

# True when any part of the deployment runs.
anything_running() {
    local name
    pid_from "$GATEWAY_PID_FILE" ddb-gateway >/dev/null && return 0
    for name in monitor "${NODES[@]}"; do
        formation_server_running "$name" && return 0
    done
    return 1
}

# The gateway's database address: both nodes, the one wanted by target_session_attrs (libpq's
# multi-host string): read-write for its pool, standby for its eventually consistent reads (--replica).
gateway_dsn() {  # read-write or standby
    echo "host=$SOCKET,$SOCKET port=${PORT[node1]},${PORT[node2]} user=postgres dbname=$DB target_session_attrs=$1"
}

# The command line of this script's command, with the deployment's directory when it is not the default.
deployment_command() {  # command
    if [ "$HA_DIR" = "$ROOT/build/ha" ]; then
        echo "bash $ROOT/tools/ha.sh $1"
    else
        echo "DDB_HA_DIR=$HA_DIR bash $ROOT/tools/ha.sh $1"
    fi
}

# start: creates the formation afresh and starts it with the gateway; prints the endpoint and an access key.
start_deployment() {
    local key_id secret gateway started=$SECONDS
    if load_settings && anything_running; then
        echo "a deployment runs in $HA_DIR already: stop it first ($(deployment_command stop))" >&2
        exit 1
    fi
    load_settings new
    if [ "${DDB_HA_INSTALLED:-}" != 1 ]; then
        install_packages postgresql-15-auto-failover pg-auto-failover-cli
        build_and_install
    fi
    rm -rf "$HA_DIR" "$SOCKET"
    mkdir -p "$HA_DIR"
    # not -p: the directory in /tmp is made afresh, never one found there
    mkdir -m 755 "$SOCKET"
    chown postgres:postgres "$HA_DIR" "$SOCKET"
    allow_postgres_into "$HA_DIR"
    printf 'BASE_PORT=%s\nGATEWAY_PORT=%s\nSOCKET=%q\n' "$BASE_PORT" "$GATEWAY_PORT" "$SOCKET" >"$SETTINGS"
    # from here on a failure stops what started
    trap 'status=$?; trap - EXIT; echo "== starting failed: stopping what started" >&2; stop_deployment >&2; exit $status' EXIT

    echo "== the pg_auto_failover monitor (port ${PORT[monitor]}, socket $SOCKET)"
    create_monitor || { echo "the monitor did not start: see $HA_DIR/monitor.log" >&2; exit 1; }
    echo "== the primary (node1, port ${PORT[node1]}) with ddb_model in its database $DB, and the secondary"
    echo "   (node2, port ${PORT[node2]}: a base backup of node1, synchronous replication)"
    create_formation "$FORMATION" node1 node2 || exit 1

    echo "== ddb-gateway in front of the formation (127.0.0.1:$GATEWAY_PORT)"
    read -r key_id secret <<<"$(server_psql node1 -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
    # made here, not by the background shell's redirection: gateway_ready reads it at once
    : >"$GATEWAY_LOG"
    "$ROOT/ddb-gateway" --listen "127.0.0.1:$GATEWAY_PORT" --dsn "$(gateway_dsn read-write)" \
        --replica "$(gateway_dsn standby)" --access-log "$HA_DIR/gateway-access.log" </dev/null >>"$GATEWAY_LOG" 2>&1 &
    gateway=$!
    echo "$gateway" >"$GATEWAY_PID_FILE"
    if ! gateway_ready "$gateway" "$GATEWAY_PORT" "$GATEWAY_LOG"; then
        echo "ddb-gateway did not become ready on 127.0.0.1:$GATEWAY_PORT; the end of $GATEWAY_LOG:" >&2
        tail -5 "$GATEWAY_LOG" >&2
        exit 1
    fi
    trap - EXIT

    cat <<MSG

The formation runs ($HA_DIR), started in $((SECONDS - started)) s:
$(autoctl show state --pgdata "$HA_DIR/monitor" 2>/dev/null)

  monitor  psql -h $SOCKET -p ${PORT[monitor]} -U postgres pg_auto_failover   (log $HA_DIR/monitor.log)
  node1    psql -h $SOCKET -p ${PORT[node1]} -U postgres $DB   (log $HA_DIR/node1.log)
  node2    psql -h $SOCKET -p ${PORT[node2]} -U postgres $DB   (log $HA_DIR/node2.log)
  gateway  http://127.0.0.1:$GATEWAY_PORT   (log $GATEWAY_LOG)
           --dsn '$(gateway_dsn read-write)'
           --replica '$(gateway_dsn standby)'
MSG
    print_gateway_access "$GATEWAY_PORT" "$key_id" "$secret" "on the primary" "$(deployment_command status)" \
        "$(deployment_command stop)"
}

# status: the formation's state (pg_autoctl show state) and the gateway; fails when a part does not run.
deployment_status() {
    local pid all=0
    if ! load_settings; then
        echo "no deployment in $HA_DIR ($(deployment_command start))"
        return 1
    fi
    autoctl show state --pgdata "$HA_DIR/monitor" 2>&1 || all=1
    if pid=$(pid_from "$GATEWAY_PID_FILE" ddb-gateway); then
        printf '\ngateway  http://127.0.0.1:%s  running (pid %s)\n' "$GATEWAY_PORT" "$pid"
    else
        printf '\ngateway  http://127.0.0.1:%s  stopped\n' "$GATEWAY_PORT"
        all=1
    fi
    return "$all"
}

# failover: pg_autoctl perform failover, then waits until the other node is primary; prints the seconds it took.
perform_failover() {
    local old started
    load_settings || { echo "no deployment in $HA_DIR" >&2; exit 1; }
    old=$(current_primary "$FORMATION")
    [ -n "$old" ] || { echo "the formation has no primary now" >&2; exit 1; }
    started=$(date +%s.%N)
    autoctl perform failover --pgdata "$HA_DIR/monitor" >>"$HA_DIR/failover.log" 2>&1 ||
        { echo "pg_autoctl perform failover failed: see $HA_DIR/failover.log" >&2; exit 1; }
    wait_until 60 another_primary "$FORMATION" "$old" || { echo "no other node became primary" >&2; exit 1; }
    echo "primary=$(current_primary "$FORMATION") (was $old)"
    echo "seconds=$(elapsed_since "$started")"
}

# kill-primary: the primary node dies as its machine would: SIGKILL to its pg_autoctl (so that it
# does not restart Postgres) and to its postmaster; prints when (killed_at=, epoch seconds), waits
# until the secondary is promoted and prints the seconds it took (not with --no-wait).  The dead
# node stays down (its data directory is left as it was) until rejoin.
kill_primary() {  # [--no-wait]
    local old pid group started
    load_settings || { echo "no deployment in $HA_DIR" >&2; exit 1; }
    old=$(current_primary "$FORMATION")
    [ -n "$old" ] || { echo "the formation has no primary now" >&2; exit 1; }
    pid=$(pid_from "$HA_DIR/$old/postmaster.pid" postgres) || true
    # pg_autoctl run, its services and its Postgres: the process group run_autoctl made
    group=$(autoctl_pid "$old") || true
    started=$(date +%s.%N)
    [ -z "$group" ] || kill -KILL -- "-$group"
    [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null || true
    echo "killed $old (postmaster pid ${pid:-none})"
    echo "killed_at=$started"
    [ "${1:-}" != --no-wait ] || return 0
    wait_until 120 another_primary "$FORMATION" "$old" || { echo "no other node became primary in 120 s" >&2; exit 1; }
    echo "primary=$(current_primary "$FORMATION") (was $old)"
    echo "seconds=$(elapsed_since "$started")"
}

# The pids of a node's processes: its pg_autoctl's process group (pg_autoctl, its services, the
# postmaster) and the postmaster's children (each backend leads a process group of its own).
node_pids() {  # node
    local group postmaster
    if group=$(autoctl_pid "$1"); then pgrep -g "$group"; fi
    if postmaster=$(pid_from "$HA_DIR/$1/postmaster.pid" postgres); then
        echo "$postmaster"
        pgrep -P "$postmaster" || true
    fi
}

# freeze-primary: the primary node hangs as a machine that stops answering would: SIGSTOP to each of
# its processes (noted for thaw); prints when (froze_at=), waits until the secondary is promoted and
# prints the seconds it took.
freeze_primary() {
    local old postmaster pids started
    load_settings || { echo "no deployment in $HA_DIR" >&2; exit 1; }
    [ ! -f "$FROZEN" ] || { echo "$(head -1 "$FROZEN") is frozen already: thaw it first" >&2; exit 1; }
    old=$(current_primary "$FORMATION")
    [ -n "$old" ] || { echo "the formation has no primary now" >&2; exit 1; }
    postmaster=$(pid_from "$HA_DIR/$old/postmaster.pid" postgres) || true
    started=$(date +%s.%N)
    # the postmaster first, so that it forks no backend the list misses
    [ -z "$postmaster" ] || kill -STOP "$postmaster"
    pids=$(node_pids "$old" | sort -u | tr '\n' ' ')
    # shellcheck disable=SC2086
    kill -STOP $pids 2>/dev/null || true
    printf '%s\n%s\n' "$old" "$pids" >"$FROZEN"
    echo "froze $old (pids $pids)"
    echo "froze_at=$started"
    wait_until 120 another_primary "$FORMATION" "$old" || { echo "no other node became primary in 120 s" >&2; exit 1; }
    echo "primary=$(current_primary "$FORMATION") (was $old)"
    echo "seconds=$(elapsed_since "$started")"
}

# thaw: SIGCONT to the processes freeze-primary stopped.  The node's pg_autoctl learns from the
# monitor that it was demoted, and follows the new primary by itself (rejoin waits for it).
thaw_node() {
    local node pids
    load_settings || { echo "no deployment in $HA_DIR" >&2; exit 1; }
    [ -f "$FROZEN" ] || { echo "no node is frozen"; return 0; }
    node=$(sed -n 1p "$FROZEN")
    pids=$(sed -n 2p "$FROZEN")
    # shellcheck disable=SC2086
    kill -CONT $pids 2>/dev/null || true
    # runuser (util-linux) stops itself when it sees its child stopped, which it may see only once
    # resumed: then it stays stopped (and never reaps pg_autoctl) but for a second SIGCONT
    sleep 1
    # shellcheck disable=SC2086
    kill -CONT $pids 2>/dev/null || true
    rm -f "$FROZEN"
    echo "thawed $node"
}

# The node that the monitor has as secondary, in the state it should be, if any.
current_secondary() {
    node_states "$FORMATION" 2>/dev/null | awk '$3 == $4 && $3 == "secondary" { print $1 }'
}

# True when the monitor has a primary committing alone (wait_primary), reported so by the node.
primary_alone() {
    node_states "$FORMATION" 2>/dev/null | grep -q ' wait_primary wait_primary$'
}

# stop-secondary: pg_autoctl stop for the secondary (its Postgres shut down cleanly), when (stopped_at=);
# waits until the primary commits alone (wait_primary) and prints the seconds it took.  It stays down until rejoin.
stop_secondary() {
    local node pid started
    load_settings || { echo "no deployment in $HA_DIR" >&2; exit 1; }
    node=$(current_secondary)
    [ -n "$node" ] || { echo "the formation has no secondary now" >&2; exit 1; }
    started=$(date +%s.%N)
    echo "stopped_at=$started"
    pid=$(autoctl_pid "$node") || true
    autoctl stop --pgdata "$HA_DIR/$node" >/dev/null 2>&1 || { [ -z "$pid" ] || kill "$pid"; }
    [ -z "$pid" ] || wait_exited "$pid" || { echo "pg_autoctl of $node (pid $pid) has not exited" >&2; exit 1; }
    echo "stopped $node"
    wait_until 60 primary_alone || { echo "the primary did not go to wait_primary in 60 s" >&2; exit 1; }
    printf "states=%s\n" "$(node_states "$FORMATION" | tr "\n" ";")"
    echo "seconds=$(elapsed_since "$started")"
}

# rejoin: runs pg_autoctl again for the nodes named, or for each node whose pg_autoctl is not running;
# the monitor has each follow the primary (pg_rewind, or a base backup when that fails).  Without
# names, waits until the formation has a primary and a secondary and prints the seconds it took.
rejoin_nodes() {  # [node...]
    local name started nodes=("$@")
    load_settings || { echo "no deployment in $HA_DIR" >&2; exit 1; }
    [ ! -f "$FROZEN" ] || { echo "$(head -1 "$FROZEN") is frozen: thaw it first" >&2; exit 1; }
    started=$(date +%s.%N)
    [ $# -gt 0 ] || nodes=("${NODES[@]}")
    for name in "${nodes[@]}"; do
        if [ -z "$name" ] || [ -z "${PORT[$name]:-}" ] || [ "$name" = monitor ]; then
            echo "no node '$name' (${NODES[*]})" >&2
            exit 1
        fi
        autoctl_pid "$name" >/dev/null && continue
        run_autoctl "$name"
        echo "started $name"
    done
    [ $# -eq 0 ] || return 0
    wait_until 300 formation_healthy "$FORMATION" || { echo "the formation is not healthy after 300 s: see $HA_DIR/*.log" >&2; exit 1; }
    printf "states=%s\n" "$(node_states "$FORMATION" | tr "\n" ";")"
    echo "seconds=$(elapsed_since "$started")"
}

# stop: the gateway, then each node's pg_autoctl and the monitor's (pg_autoctl stop: each stops its
# Postgres); returns once each has exited.  A postmaster left without its pg_autoctl is stopped by pg_ctl.
stop_deployment() {
    local pid name
    load_settings || { echo "no deployment in $HA_DIR"; return 0; }
    # a frozen node cannot stop
    thaw_node >/dev/null
    if pid=$(pid_from "$GATEWAY_PID_FILE" ddb-gateway); then
        kill "$pid"
        wait_exited "$pid" || echo "the gateway (pid $pid) has not exited" >&2
    fi
    rm -f "$GATEWAY_PID_FILE"
    for name in "${NODES[@]}" monitor; do
        stop_formation_server "$name"
    done
    # the socket directory in /tmp, once every server has stopped
    anything_running || rm -rf "$SOCKET"
    echo "== stopped (data and logs stay in $HA_DIR)"
}

case "${1:-}" in
    start) start_deployment ;;
    status) deployment_status ;;
    stop) stop_deployment ;;
    failover) perform_failover ;;
    kill-primary) kill_primary "${2:-}" ;;
    freeze-primary) freeze_primary ;;
    thaw) thaw_node ;;
    stop-secondary) stop_secondary ;;
    rejoin) shift; rejoin_nodes "$@" ;;
    *) echo "usage: bash tools/ha.sh start|stop|status|failover|kill-primary [--no-wait]|freeze-primary|thaw|stop-secondary|rejoin [NODE...]" >&2; exit 2 ;;
esac
