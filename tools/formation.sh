# tools/formation.sh — pg_auto_failover formations on this machine (source it
# after tools/cluster.sh): a monitor, and formations of two nodes each (a
# primary and a synchronous secondary, ddb_model preloaded and created),
# each node's pg_autoctl run in a process group of its own.  tools/ha.sh makes
# its one formation (pg_auto_failover's default) with it, tools/scale-out.sh
# --ha a formation per shard.
#
# The sourcing script sets FORMATION_DIR (a server NAME's data directory is
# FORMATION_DIR/NAME, its pg_autoctl's log NAME.log and process group NAME.pid
# there), SOCKET (the servers' unix socket directory), DB (the nodes'
# database), PORT (server name -> port, the monitor's under "monitor"), and a
# function server_psql (server, psql arguments...) that runs psql on a server
# of PORT by its unix socket.  formation_env sets what pg_autoctl needs after
# those.  Authentication is initdb's trust for unix sockets and 127.0.0.1
# only, the servers listen on 127.0.0.1, no TLS on loopback (create_monitor
# says why).

# The monitor's health checks, tighter than pg_auto_failover's defaults (a
# check each 5 s, a node unhealthy after 20 s) so that a dead primary is
# replaced within seconds on loopback; milliseconds.
FORMATION_MONITOR_SETTINGS="pgautofailover.health_check_period = 1000
pgautofailover.health_check_timeout = 1000
pgautofailover.health_check_max_retries = 1
pgautofailover.health_check_retry_delay = 500
pgautofailover.node_considered_unhealthy_timeout = 3000
pgautofailover.primary_demote_timeout = 5000"
# A node cut off from the monitor and from its peer demotes itself after this many seconds (20 by
# default); the monitor lets the promoted node take writes only after primary_demote_timeout, longer.
FORMATION_NETWORK_PARTITION_TIMEOUT=3

# pg_autoctl's configuration and state in FORMATION_DIR; its servers' unix sockets in SOCKET
# (PG_REGRESS_SOCK_DIR: pg_autoctl starts them with -k); initdb's locale C.UTF-8.
formation_env() {
    AUTOCTL_ENV=(XDG_CONFIG_HOME="$FORMATION_DIR/xdg/config" XDG_DATA_HOME="$FORMATION_DIR/xdg/data"
                 XDG_RUNTIME_DIR="$FORMATION_DIR/xdg/run" PGHOST="$SOCKET" PG_REGRESS_SOCK_DIR="$SOCKET"
                 LC_ALL=C.UTF-8)
}

# pg_autoctl as postgres, its configuration, state and pid files in FORMATION_DIR.
autoctl() {  # pg_autoctl arguments...
    as_postgres env "${AUTOCTL_ENV[@]}" /usr/bin/pg_autoctl "$@"
}

# The monitor's view of a formation's nodes: "name port reported-state goal-state" lines.
node_states() {  # formation
    server_psql monitor -d pg_auto_failover -F ' ' \
        -c "SELECT nodename, nodeport, reportedstate, goalstate FROM pgautofailover.node
            WHERE formationid = '$1' ORDER BY nodeid"
}

# The node that the monitor has as a formation's primary, taking writes (reported and goal state
# primary, or wait_primary: a primary whose secondary is gone, which then commits without waiting).
current_primary() {  # formation
    node_states "$1" 2>/dev/null | awk '$3 == $4 && ($3 == "primary" || $3 == "wait_primary") { print $1 }'
}

# True when a formation has a primary and a secondary, each in the state it should be.
formation_healthy() {  # formation
    [ "$(node_states "$1" 2>/dev/null | awk '$3 == $4 { print $3 }' | sort | tr '\n' ' ')" = "primary secondary " ]
}

# True when the monitor has the node as its formation's one node, alone and writable.
node_is_single() {  # formation, node
    node_states "$1" 2>/dev/null | grep -qx "$2 [0-9]* single single"
}

# True when the monitor has a node of the formation other than the one named as primary.
another_primary() {  # formation, node
    local primary
    primary=$(current_primary "$1")
    [ -n "$primary" ] && [ "$primary" != "$2" ]
}

# True while a base backup of a server runs.
base_backup_running() {  # server
    [ "$(server_psql "$1" -c "SELECT count(*) FROM pg_stat_replication WHERE state = 'backup'")" -gt 0 ]
}

# Waits until a condition (a command line) holds, polling each 0.1 s; fails after SECONDS.
wait_until() {  # seconds, command...
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

# The pid of a process whose pid a file holds, when it runs (and is the program named).
pid_from() {  # pid file, program
    local pid
    [ -f "$1" ] || return 1
    pid=$(head -1 "$1")
    [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && echo "$pid"
}

# The pid of a server's pg_autoctl (the supervisor of its services), when it runs.
autoctl_pid() {  # server
    pid_from "$FORMATION_DIR/$1.pid" runuser
}

# True when a server's pg_autoctl or its postmaster runs.
formation_server_running() {  # server
    autoctl_pid "$1" >/dev/null || pid_from "$FORMATION_DIR/$1/postmaster.pid" postgres >/dev/null
}

# Settings for a data directory that pg_auto_failover's own (postgresql-auto-failover.conf) would
# otherwise set: postgresql.auto.conf is read last, and pg_basebackup copies it to a secondary.
server_settings() {  # data directory, more settings...
    local data=$1
    shift
    {
        echo "unix_socket_directories = '$SOCKET'"
        # pg_auto_failover sizes shared_buffers after the machine's memory (a quarter): several servers share it here
        echo "shared_buffers = '128MB'"
        echo "max_prepared_transactions = 64"
        printf '%s\n' "$@"
    } | as_postgres tee -a "$data/postgresql.auto.conf" >/dev/null
}

# Runs a server's pg_autoctl (monitor or node) in the background as postgres, in a process group of
# its own (setsid) with its services and its Postgres; the group's id (runuser's pid) in NAME.pid.
run_autoctl() {  # server
    (cd / && exec setsid runuser -u postgres -- env "${AUTOCTL_ENV[@]}" /usr/bin/pg_autoctl run \
        --pgdata "$FORMATION_DIR/$1") </dev/null >>"$FORMATION_DIR/$1.log" 2>&1 &
    echo $! >"$FORMATION_DIR/$1.pid"
}

# The monitor: initdb with the tightened health checks, pg_autoctl create monitor (listening on
# 127.0.0.1, no pg_hba.conf edits, no TLS), pg_autoctl run; waits until it answers (30 s at most).
create_monitor() {
    as_postgres mkdir -m 700 "$FORMATION_DIR/monitor"
    # Authentication (every server's) is initdb's: trust, for unix sockets and 127.0.0.1/::1 only, with
    # no pg_hba.conf edits by pg_auto_failover (--skip-pg-hba); the servers listen on 127.0.0.1.  So
    # only this machine's users reach them, as with the test cluster (tools/cluster.sh).  Across hosts
    # it would be scram-sha-256 and --ssl-self-signed or certificates (docs/operations.md, "On three
    # hosts"); no TLS on loopback (--no-ssl) for the same reason.
    init_server "$FORMATION_DIR/monitor"
    server_settings "$FORMATION_DIR/monitor" "$FORMATION_MONITOR_SETTINGS"
    autoctl create monitor --pgdata "$FORMATION_DIR/monitor" --pgctl "$PGBIN/pg_ctl" --pgport "${PORT[monitor]}" \
        --hostname 127.0.0.1 --skip-pg-hba --no-ssl >>"$FORMATION_DIR/monitor.log" 2>&1
    # pg_autoctl create monitor has no --listen: '*' unless its configuration says otherwise
    autoctl config set --pgdata "$FORMATION_DIR/monitor" postgresql.listen_addresses 127.0.0.1 >/dev/null
    run_autoctl monitor
    wait_until 30 server_psql monitor -d pg_auto_failover -c "SELECT 1" >/dev/null 2>&1
}

# A node of a formation: pg_autoctl create postgres (the first node's data directory made by its
# initdb, the second's a base backup of the primary's), then, on the first, the settings given with
# ddb_model preloaded (pg_basebackup copies them to the second), then pg_autoctl run.  (pg_autoctl 2.0
# can race with itself over a data directory made beforehand: its Postgres service starts the
# server while its init refuses to work on a running one.)
create_node() {  # formation, node, first or second, more settings...
    local formation=$1 name=$2 which=$3
    shift 3
    # --replication-quorum: the node counts for synchronous replication (synchronous_standby_names)
    autoctl create postgres --pgdata "$FORMATION_DIR/$name" --pgctl "$PGBIN/pg_ctl" --pgport "${PORT[$name]}" \
        --listen 127.0.0.1 --hostname 127.0.0.1 --name "$name" --formation "$formation" --dbname "$DB" \
        --skip-pg-hba --no-ssl --replication-quorum true --candidate-priority 50 \
        --monitor "postgres://autoctl_node@127.0.0.1:${PORT[monitor]}/pg_auto_failover?sslmode=disable" \
        >>"$FORMATION_DIR/$name.log" 2>&1
    [ "$which" != first ] || server_settings "$FORMATION_DIR/$name" "shared_preload_libraries = 'ddb_model'" "$@"
    autoctl config set --pgdata "$FORMATION_DIR/$name" timeout.network_partition_timeout \
        "$FORMATION_NETWORK_PARTITION_TIMEOUT" >/dev/null
    run_autoctl "$name"
}

# A formation of two nodes on the monitor: pg_autoctl create formation (but for the default
# formation, which the monitor has from the start), the first node as its
# primary with ddb_model created in DB, the second a synchronous secondary; fails, saying why, when
# a step does not come about in time.
create_formation() {  # formation, first node, second node, more settings of the nodes...
    local formation=$1 first=$2 second=$3 creating
    shift 3
    if [ "$formation" != default ]; then
        autoctl create formation --pgdata "$FORMATION_DIR/monitor" --formation "$formation" --kind pgsql \
            --dbname "$DB" --enable-secondary >>"$FORMATION_DIR/monitor.log" 2>&1 ||
            { echo "pg_autoctl create formation $formation failed: see $FORMATION_DIR/monitor.log" >&2; return 1; }
    fi
    create_node "$formation" "$first" first "$@"
    { wait_until 60 node_is_single "$formation" "$first" &&
      wait_until 30 server_psql "$first" -c "SELECT 1" >/dev/null 2>&1; } ||
        { echo "$first did not become primary: see $FORMATION_DIR/$first.log" >&2; return 1; }
    server_psql "$first" -c "SET client_min_messages = warning" -c "CREATE EXTENSION ddb_model"
    create_node "$formation" "$second" second &
    creating=$!
    # pg_autoctl's pg_basebackup asks for a spread checkpoint (30 s and more here): an immediate one ends it
    ! wait_until 60 base_backup_running "$first" || server_psql "$first" -c CHECKPOINT
    wait "$creating" || { echo "pg_autoctl create postgres failed for $second: see $FORMATION_DIR/$second.log" >&2; return 1; }
    wait_until 120 formation_healthy "$formation" ||
        { echo "$second did not become secondary: see $FORMATION_DIR/$second.log" >&2; return 1; }
    if [ "$(server_psql "$first" -c "SHOW synchronous_standby_names")" = "" ]; then
        echo "$first does not replicate synchronously (synchronous_standby_names is empty)" >&2
        return 1
    fi
}

# Kills a node as its machine would die: SIGKILL to its pg_autoctl's process group (so that nothing
# restarts Postgres) and to its postmaster; prints the postmaster's pid, or none.
kill_node() {  # node
    local pid group
    pid=$(pid_from "$FORMATION_DIR/$1/postmaster.pid" postgres) || true
    if group=$(autoctl_pid "$1"); then kill -KILL -- "-$group"; fi
    [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null || true
    echo "${pid:-none}"
}

# Seconds since a time (date +%s.%N), to the tenth.
elapsed_since() {  # start
    echo "$(date +%s.%N) $1" | awk '{ printf "%.1f\n", $1 - $2 }'
}

# Stops a server's pg_autoctl (pg_autoctl stop: it stops its Postgres), or its postmaster left without
# it (pg_ctl); returns once each has exited.
stop_formation_server() {  # server
    local pid
    if pid=$(autoctl_pid "$1"); then
        autoctl stop --pgdata "$FORMATION_DIR/$1" >/dev/null 2>&1 || kill "$pid"
        wait_exited "$pid" || echo "pg_autoctl of $1 (pid $pid) has not exited" >&2
    fi
    if pid=$(pid_from "$FORMATION_DIR/$1/postmaster.pid" postgres); then
        as_postgres "$PGBIN/pg_ctl" -D "$FORMATION_DIR/$1" -m fast -w stop >/dev/null || true
        wait_exited "$pid" || echo "$1 (pid $pid) has not exited" >&2
    fi
    rm -f "$FORMATION_DIR/$1.pid"
}
