# bench/lib/gateway.sh — starting ddb-gateways for benchmarks, sourced by
# them after tools/cluster.sh; needs ROOT, DSN and OUT, and keeps the pids
# in GATEWAY_PIDS (for the script's trap to stop them).
GATEWAY_PIDS=()

# Starts a gateway on a loopback port with a pool, and waits until it answers; extra arguments go to it.
start_gateway() {  # port, pool, args...
    local port=$1 pool=$2
    shift 2
    "$ROOT/ddb-gateway" --listen "127.0.0.1:$port" --pool "$pool" --dsn "$DSN" "$@" 2>>"$OUT/gateway-$port.log" &
    GATEWAY_PIDS+=($!)
    for _ in $(seq 50); do
        curl -sf -o /dev/null "http://127.0.0.1:$port/health" && return 0
        sleep 0.1
    done
    echo "the gateway on $port did not start (log in $OUT)" >&2
    return 1
}
