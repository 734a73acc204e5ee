# bench/lib/gateway.sh — starting ddb-gateways for benchmarks, sourced by
# them after tools/cluster.sh (which brings gateway_start, tools/gateway.sh);
# needs ROOT, DSN and OUT, and keeps the pids in GATEWAY_PIDS (for the
# script's trap to stop them).
GATEWAY_PIDS=()

# Starts a gateway on a loopback port with a pool, and waits until it answers; extra arguments go to it.
start_gateway() {  # port, pool, args...
    local port=$1 pool=$2
    shift 2
    gateway_start "$port" "$OUT/gateway-$port.log" --pool "$pool" --dsn "$DSN" "$@" && return 0
    echo "the gateway on $port did not start (log in $OUT)" >&2
    return 1
}
