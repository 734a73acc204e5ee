#!/usr/bin/env bash
# tools/scale-out.sh — a sharded ddb_model deployment on this machine
# (docs/scale-out.md, "The one-command deployment"): a router database
# (extension ddb_router, 16 logical partitions) in a PostgreSQL 15 cluster of
# its own, two shard primaries (each a cluster of its own with an ordinary
# ddb_model database) each with a streaming hot standby made by
# pg_basebackup, and ddb-gateway in front of the router.  With --ha each shard
# is a pg_auto_failover formation instead (docs/scale-out.md, "High
# availability"): one monitor, and per shard a primary and a synchronous
# secondary that the monitor promotes when the primary fails; the router
# reaches each shard's current primary by a connection string that names both
# nodes and asks for the writable one (tools/formation.sh).
#
#   bash tools/scale-out.sh start [--ha]     # installs, builds, starts; prints the endpoint and an access key
#   bash tools/scale-out.sh status           # what runs: each standby's lag, or each formation's state
#   bash tools/scale-out.sh kill-primary SHARD   # --ha: SIGKILL to the shard's primary; waits for the promotion
#   bash tools/scale-out.sh stop             # stops the gateway and the servers
#
# As root on Debian 12 (tools/cluster.sh installs and builds; the servers run
# as postgres).  Everything lives in build/scale-out/: a data directory and a
# log per server, the gateway's logs and pid.  The servers listen on unix
# sockets only, in build/scale-out/socket (or a short directory in /tmp when
# that path is too long for a socket's), with prepared transactions on; the
# gateway listens on 127.0.0.1.  start creates the deployment afresh (its
# data is thrown away), and refuses while one runs in the same directory.
#
# Environment:
#   DDB_SCALE_OUT_DIR           where the deployment lives (build/scale-out)
#   DDB_SCALE_OUT_PGPORT        the router's port; the shards' and their standbys' are the next four (55560);
#                               with --ha the nodes' and then the monitor's are the next five (55770)
#   DDB_SCALE_OUT_GATEWAY_PORT  the gateway's port on 127.0.0.1 (55570; with --ha 55779)
#   DDB_SCALE_OUT_SERVER_OPTS   more options for every server, e.g. "-c fsync=off"
#   DDB_SCALE_OUT_INSTALLED=1   start what is installed and built: no package installation, no build
#   DDB_GATEWAY_*               the gateway's other settings (docs/gateway.md), e.g. DDB_GATEWAY_POOL=8
# status, kill-primary and stop need only DDB_SCALE_OUT_DIR: start records the rest there.  With
# --ha the formations' servers listen on 127.0.0.1 too (pg_auto_failover's monitor and replication
# use TCP), take the server options as postgresql.auto.conf lines, and pg_autoctl keeps its
# configuration and state in the deployment's xdg/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"
source "$(dirname "${BASH_SOURCE[0]}")/formation.sh"

SCALE_DIR=${DDB_SCALE_OUT_DIR:-$ROOT/build/scale-out}
SETTINGS="$SCALE_DIR/deployment.env"
DB=ddb
PARTITIONS=16
SHARDS=(shard1 shard2)
SERVERS=(router shard1 shard2 shard1_standby shard2_standby)
GATEWAY_PID_FILE="$SCALE_DIR/gateway.pid"
GATEWAY_LOG="$SCALE_DIR/gateway.log"

# The layout (HA=1: formations), ports and socket directory: from the environment and start's
# arguments for start, from the deployment's record afterwards.
load_settings() {  # [new [--ha]]
    HA=0
    if [ "${1:-}" = new ]; then
        [ "${2:-}" != --ha ] || HA=1
        BASE_PORT=${DDB_SCALE_OUT_PGPORT:-$((HA ? 55770 : 55560))}
        GATEWAY_PORT=${DDB_SCALE_OUT_GATEWAY_PORT:-$((HA ? 55779 : 55570))}
        SOCKET=$(socket_dir_for "$SCALE_DIR/socket" "$((BASE_PORT + 5))" "$(basename "$SCALE_DIR")")
    elif [ -f "$SETTINGS" ]; then
        source "$SETTINGS"
    else
        return 1
    fi
    if [ "$HA" = 1 ]; then
        SERVERS=(router shard1_node1 shard1_node2 shard2_node1 shard2_node2 monitor)
        declare -gA PORT=([router]=$BASE_PORT [shard1_node1]=$((BASE_PORT + 1)) [shard2_node1]=$((BASE_PORT + 2))
                          [shard1_node2]=$((BASE_PORT + 3)) [shard2_node2]=$((BASE_PORT + 4))
                          [monitor]=$((BASE_PORT + 5)))
        FORMATION_DIR=$SCALE_DIR
        formation_env
    else
        declare -gA PORT=([router]=$BASE_PORT [shard1]=$((BASE_PORT + 1)) [shard2]=$((BASE_PORT + 2))
                          [shard1_standby]=$((BASE_PORT + 3)) [shard2_standby]=$((BASE_PORT + 4)))
    fi
}

# psql on a server's database (ddb unless -d follows), quiet, unaligned, stopping at the first error.
server_psql() {  # server, psql arguments...
    local name=$1
    shift
    psql -X -q -At -v ON_ERROR_STOP=1 -h "$SOCKET" -p "${PORT[$name]}" -U postgres -d "$DB" "$@"
}

# True when a server of the deployment runs (a server of a formation: its pg_autoctl or its postmaster).
server_running() {  # server
    if [ "$HA" = 1 ] && [ "$1" != router ]; then
        formation_server_running "$1"
    else
        [ -f "$SCALE_DIR/$1/postmaster.pid" ] && as_postgres "$PGBIN/pg_ctl" -D "$SCALE_DIR/$1" status >/dev/null 2>&1
    fi
}

# The pid of the deployment's gateway, when it runs.
gateway_pid() {
    local pid
    [ -f "$GATEWAY_PID_FILE" ] || return 1
    pid=$(cat "$GATEWAY_PID_FILE")
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = ddb-gateway ] && echo "$pid"
}

# True when any part of the deployment runs.
anything_running() {
    local name
    gateway_pid >/dev/null && return 0
    for name in "${SERVERS[@]}"; do
        server_running "$name" && return 0
    done
    return 1
}

# Runs a function for each argument, all at once in the background; fails when any failed.
in_parallel() {  # function, arguments...
    local function=$1 pids=() arg pid failed=0
    shift
    for arg in "$@"; do
        "$function" "$arg" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do
        wait "$pid" || failed=1
    done
    return "$failed"
}

# Creates a primary: initdb, then its server started.
create_primary() {  # server
    init_server "$SCALE_DIR/$1"
    start_server "$SCALE_DIR/$1" "${PORT[$1]}" "$SOCKET" "$SCALE_DIR/$1.log" -c "cluster_name=$1" $SERVER_OPTS
}

# Creates a shard node's database: an ordinary ddb_model database.
create_shard_database() {  # server
    server_psql "$1" -d postgres -c "CREATE DATABASE $DB"
    server_psql "$1" -c "SET client_min_messages = warning" -c "CREATE EXTENSION ddb_model"
}

# Creates a shard's standby: a base backup streaming from its primary, started as a hot standby.
create_standby() {  # shard
    local name="$1_standby"
    as_postgres "$PGBIN/pg_basebackup" -h "$SOCKET" -p "${PORT[$1]}" -U postgres -D "$SCALE_DIR/$name" \
        -R -X stream -c fast
    start_server "$SCALE_DIR/$name" "${PORT[$name]}" "$SOCKET" "$SCALE_DIR/$name.log" -c "cluster_name=$name" \
        -c hot_standby=on $SERVER_OPTS
}

# Waits until a standby has replayed what its primary had written (10 s at most); fails when it has not.
standby_caught_up() {  # shard
    local target
    target=$(server_psql "$1" -c "SELECT pg_current_wal_lsn()")
    for _ in $(seq 100); do
        [ "$(server_psql "$1_standby" -c "SELECT pg_last_wal_replay_lsn() >= '$target'")" = t ] && return 0
        sleep 0.1
    done
    return 1
}

# The server options (DDB_SCALE_OUT_SERVER_OPTS, "-c name=value ..."), a postgresql.conf line each.
server_option_lines() {
    local words word
    read -ra words <<<"$SERVER_OPTS"
    for word in "${words[@]}"; do
        [ "$word" = -c ] || printf "%s = '%s'\n" "${word%%=*}" "${word#*=}"
    done
}

# Creates a shard's formation (--ha): its first node primary with ddb_model, its second a synchronous secondary.
create_shard_formation() {  # shard
    local settings
    mapfile -t settings < <(server_option_lines)
    create_formation "$1" "$1_node1" "$1_node2" "${settings[@]}"
}

# Creates a part of a deployment with --ha: the router's server, or a shard's formation.
create_ha_part() {  # router or shard
    if [ "$1" = router ]; then create_primary router; else create_shard_formation "$1"; fi
}

# A shard's connection string in the router's map: its primary's, or (--ha) both nodes of its
# formation with the writable one wanted, so that the router follows a promotion.
shard_connstr() {  # shard
    if [ "$HA" = 1 ]; then
        echo "host=$SOCKET,$SOCKET port=${PORT[$1_node1]},${PORT[$1_node2]} dbname=$DB target_session_attrs=read-write"
    else
        echo "host=$SOCKET port=${PORT[$1]} dbname=$DB"
    fi
}

# The command line of this script's command, with the deployment's directory when it is not the default.
deployment_command() {  # command
    if [ "$SCALE_DIR" = "$ROOT/build/scale-out" ]; then
        echo "bash $ROOT/tools/scale-out.sh $1"
    else
        echo "DDB_SCALE_OUT_DIR=$SCALE_DIR bash $ROOT/tools/scale-out.sh $1"
    fi
}

# What a server of the deployment is, for start's summary.
server_role() {  # server
    case "$1" in
        router) echo "the router: ddb_router, $PARTITIONS partitions over ${SHARDS[*]}" ;;
        monitor) echo "the pg_auto_failover monitor of the formations ${SHARDS[*]}" ;;
        *_standby) echo "hot standby of ${1%_standby}, streaming" ;;
        *_node1) echo "a node of formation ${1%_node1}, its primary at start: ddb_model" ;;
        *_node2) echo "a node of formation ${1%_node2}, its synchronous secondary at start" ;;
        *) echo "shard primary: ddb_model" ;;
    esac
}

# start: creates the deployment afresh and starts it; prints the endpoint and an access key.
start_deployment() {  # [--ha]
    local shard name key_id secret gateway started=$SECONDS
    if load_settings && anything_running; then
        echo "a deployment runs in $SCALE_DIR already: stop it first ($(deployment_command stop))" >&2
        exit 1
    fi
    load_settings new "$@"
    SERVER_OPTS=${DDB_SCALE_OUT_SERVER_OPTS:-}
    if [ "${DDB_SCALE_OUT_INSTALLED:-}" != 1 ]; then
        if [ "$HA" = 1 ]; then install_packages postgresql-15-auto-failover pg-auto-failover-cli; else install_packages; fi
        build_and_install
    fi
    rm -rf "$SCALE_DIR"
    [ "$SOCKET" = "$SCALE_DIR/socket" ] || rm -rf "$SOCKET"
    mkdir -p "$SCALE_DIR"
    # not -p: a short directory in /tmp is made afresh, never one found there
    mkdir -m 755 "$SOCKET"
    chown postgres:postgres "$SCALE_DIR" "$SOCKET"
    allow_postgres_into "$SCALE_DIR"
    printf 'HA=%s\nBASE_PORT=%s\nGATEWAY_PORT=%s\nSOCKET=%q\n' "$HA" "$BASE_PORT" "$GATEWAY_PORT" "$SOCKET" >"$SETTINGS"
    # from here on a failure stops what started
    trap 'status=$?; trap - EXIT; echo "== starting failed: stopping what started" >&2; stop_deployment >&2; exit $status' EXIT

    if [ "$HA" = 1 ]; then
        echo "== the pg_auto_failover monitor (port ${PORT[monitor]}, socket $SOCKET and 127.0.0.1)"
        create_monitor || { echo "the monitor did not start: see $SCALE_DIR/monitor.log" >&2; exit 1; }
        echo "== the router (port $BASE_PORT), and a formation of each shard: a primary with ddb_model and a synchronous secondary (ports $((BASE_PORT + 1))-$((BASE_PORT + 4)))"
        in_parallel create_ha_part router "${SHARDS[@]}"
    else
        echo "== the router and two shard primaries (PostgreSQL 15 in $SCALE_DIR, socket $SOCKET, ports $BASE_PORT-$((BASE_PORT + 2)))"
        in_parallel create_primary router "${SHARDS[@]}"
        in_parallel create_shard_database "${SHARDS[@]}"
    fi
    server_psql router -d postgres -c "CREATE DATABASE $DB"
    server_psql router -c "SET client_min_messages = warning" -c "CREATE EXTENSION ddb_router CASCADE"
    for shard in "${SHARDS[@]}"; do
        server_psql router -c "SELECT ddb_router.add_node('$shard', '$(shard_connstr "$shard")')" >/dev/null
    done
    server_psql router -c "SELECT ddb_router.create_partitions($PARTITIONS)" >/dev/null
    # the gateway sends requests of one partition key straight to its shard (docs/scale-out.md)
    server_psql router -c "SELECT ddb_router.publish_partitions()" >/dev/null

    if [ "$HA" != 1 ]; then
        echo "== a streaming hot standby of each shard (pg_basebackup -R -X stream, ports $((BASE_PORT + 3))-$((BASE_PORT + 4)))"
        in_parallel create_standby "${SHARDS[@]}"
        for shard in "${SHARDS[@]}"; do
            if [ "$(server_psql "${shard}_standby" -c "SELECT pg_is_in_recovery()")" != t ] ||
               [ "$(server_psql "$shard" -c "SELECT state FROM pg_stat_replication WHERE application_name = '${shard}_standby'")" != streaming ] ||
               ! standby_caught_up "$shard"; then
                echo "${shard}_standby does not stream from $shard: see $SCALE_DIR/${shard}_standby.log" >&2
                exit 1
            fi
        done
    fi

    echo "== ddb-gateway in front of the router (127.0.0.1:$GATEWAY_PORT)"
    read -r key_id secret <<<"$(server_psql router -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
    "$ROOT/ddb-gateway" --listen "127.0.0.1:$GATEWAY_PORT" \
        --dsn "host=$SOCKET port=${PORT[router]} user=postgres dbname=$DB" \
        --access-log "$SCALE_DIR/gateway-access.log" </dev/null >"$GATEWAY_LOG" 2>&1 &
    gateway=$!
    echo "$gateway" >"$GATEWAY_PID_FILE"
    if ! gateway_ready "$gateway" "$GATEWAY_PORT" "$GATEWAY_LOG" ||
       ! grep -q 'the router of a sharded deployment' "$GATEWAY_LOG"; then
        echo "ddb-gateway did not become ready as the router's on 127.0.0.1:$GATEWAY_PORT; the end of $GATEWAY_LOG:" >&2
        tail -5 "$GATEWAY_LOG" >&2
        if grep -q 'is in use by another program' "$GATEWAY_LOG"; then
            echo "choose another port: DDB_SCALE_OUT_GATEWAY_PORT=$((GATEWAY_PORT + 10)) bash $ROOT/tools/scale-out.sh start" >&2
        fi
        exit 1
    fi
    trap - EXIT

    cat <<MSG

The sharded deployment runs ($SCALE_DIR), started in $((SECONDS - started)) s:
MSG
    for name in "${SERVERS[@]}"; do
        printf '  %-15s psql -h %s -p %s -U postgres %s   (%s; log %s)\n' "$name" "$SOCKET" "${PORT[$name]}" \
            "$([ "$name" = monitor ] && echo pg_auto_failover || echo "$DB")" "$(server_role "$name")" "$SCALE_DIR/$name.log"
    done
    printf '  %-15s http://127.0.0.1:%s   (log %s, access log %s)\n' \
        gateway "$GATEWAY_PORT" "$GATEWAY_LOG" "$SCALE_DIR/gateway-access.log"
    if [ "$HA" = 1 ]; then
        for shard in "${SHARDS[@]}"; do
            printf '\nformation %s (the router reaches it by %s):\n%s\n' "$shard" "$(shard_connstr "$shard")" \
                "$(autoctl show state --pgdata "$SCALE_DIR/monitor" --formation "$shard" 2>&1)"
        done
    fi
    print_gateway_access "$GATEWAY_PORT" "$key_id" "$secret" "in the router's database" "$(deployment_command status)" \
        "$(deployment_command stop)"
}

# status: each server and the gateway, running or not, and how far each standby is behind (or each
# formation's state, pg_autoctl show state); fails when a part does not run.
deployment_status() {
    local name shard all=0 lag
    if ! load_settings; then
        echo "no deployment in $SCALE_DIR ($(deployment_command start))"
        return 1
    fi
    for name in "${SERVERS[@]}"; do
        if ! server_running "$name"; then
            printf '%-15s port %s  stopped\n' "$name" "${PORT[$name]}"
            all=1
        elif [[ "$name" == *_standby ]]; then
            lag=$(server_psql "${name%_standby}" -c "SELECT state || ', ' || pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)
                                                     || ' bytes behind' FROM pg_stat_replication
                                                     WHERE application_name = '$name'" 2>/dev/null || true)
            printf '%-15s port %s  running, standby of %s: %s\n' "$name" "${PORT[$name]}" "${name%_standby}" \
                "${lag:-not streaming}"
        else
            printf '%-15s port %s  running\n' "$name" "${PORT[$name]}"
        fi
    done
    if gateway_pid >/dev/null; then
        printf '%-15s http://127.0.0.1:%s  running (pid %s)\n' gateway "$GATEWAY_PORT" "$(gateway_pid)"
    else
        printf '%-15s http://127.0.0.1:%s  stopped\n' gateway "$GATEWAY_PORT"
        all=1
    fi
    if [ "$HA" = 1 ]; then
        for shard in "${SHARDS[@]}"; do
            printf '\nformation %s:\n' "$shard"
            autoctl show state --pgdata "$SCALE_DIR/monitor" --formation "$shard" 2>&1 || all=1
        done
    fi
    return "$all"
}

# kill-primary (--ha): a shard's primary node dies as its machine would (tools/formation.sh's
# kill_node); waits until its secondary is promoted and prints the seconds it took.  The dead node
# stays down (its data directory is left as it was).
kill_shard_primary() {  # shard
    local shard=${1:-} old pid started
    load_settings || { echo "no deployment in $SCALE_DIR" >&2; exit 1; }
    [ "$HA" = 1 ] || { echo "kill-primary needs a deployment started with --ha" >&2; exit 1; }
    [[ " ${SHARDS[*]} " == *" $shard "* ]] || { echo "usage: bash tools/scale-out.sh kill-primary shard1|shard2" >&2; exit 2; }
    old=$(current_primary "$shard")
    [ -n "$old" ] || { echo "formation $shard has no primary now" >&2; exit 1; }
    started=$(date +%s.%N)
    pid=$(kill_node "$old")
    echo "killed $old (postmaster pid $pid)"
    wait_until 120 another_primary "$shard" "$old" || { echo "no other node of $shard became primary in 120 s" >&2; exit 1; }
    echo "primary=$(current_primary "$shard") (was $old)"
    echo "seconds=$(elapsed_since "$started")"
}

# Stops a server that pg_ctl started (the router, a shard or a standby); returns once it has exited.
stop_server() {  # server
    local pid
    if [ -f "$SCALE_DIR/$1/postmaster.pid" ]; then
        pid=$(head -1 "$SCALE_DIR/$1/postmaster.pid")
        as_postgres "$PGBIN/pg_ctl" -D "$SCALE_DIR/$1" -m fast -w stop >/dev/null || true
        # pg_ctl returns once the pid file is gone, a moment before the server has exited
        wait_exited "$pid" || echo "$1 (pid $pid) has not exited" >&2
    fi
}

# stop: the gateway (it finishes the requests in flight), then the router, the standbys and the shards
# (or each node's pg_autoctl, then the monitor's); returns once each has exited.
stop_deployment() {
    local pid name
    load_settings || { echo "no deployment in $SCALE_DIR"; return 0; }
    if pid=$(gateway_pid); then
        kill "$pid"
        wait_exited "$pid" || echo "the gateway (pid $pid) has not exited" >&2
    fi
    rm -f "$GATEWAY_PID_FILE"
    stop_server router
    if [ "$HA" = 1 ]; then
        for name in shard1_node1 shard1_node2 shard2_node1 shard2_node2 monitor; do
            stop_formation_server "$name"
        done
    else
        for name in shard1_standby shard2_standby "${SHARDS[@]}"; do
            stop_server "$name"
        done
    fi
    # the short socket directory in /tmp, once every server has stopped
    if [ "$SOCKET" != "$SCALE_DIR/socket" ] && ! anything_running; then
        rm -rf "$SOCKET"
    fi
    echo "== stopped (data and logs stay in $SCALE_DIR)"
}

case "${1:-}" in
    start) case "${2:-}" in
               "" | --ha) start_deployment "${@:2}" ;;
               *) echo "usage: bash tools/scale-out.sh start [--ha]" >&2; exit 2 ;;
           esac ;;
    status) deployment_status ;;
    kill-primary) kill_shard_primary "${2:-}" ;;
    stop) stop_deployment ;;
    *) echo "usage: bash tools/scale-out.sh start [--ha]|status|kill-primary SHARD|stop" >&2; exit 2 ;;
esac
