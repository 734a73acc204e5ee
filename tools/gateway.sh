# tools/gateway.sh — a ddb-gateway started in the background and waited for
# until it answers; sourced (not run) by tools/cluster.sh (so tools/demo.sh
# and tools/scale-out.sh, tools/ha.sh), test/lib.sh and bench/lib/gateway.sh, after they
# set ROOT.

# Waits until a ddb-gateway started in the background listens (another
# program may hold the port and answer on it) and GET /health answers 200:
# 10 s at most; fails when it does not, or when it exited.
gateway_ready() {  # pid, port, its log (stderr)
    local pid=$1 port=$2 log=$3 deadline=$((SECONDS + 10)) code
    while [ "$SECONDS" -le "$deadline" ]; do
        kill -0 "$pid" 2>/dev/null || return 1
        if grep -q '^ddb-gateway: listening on' "$log"; then
            code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/health" || true)
            [ "$code" = 200 ] && return 0
        fi
        sleep 0.1
    done
    return 1
}

# Starts ddb-gateway ($GATEWAY_BIN, else the checkout's) in the background
# on 127.0.0.1:PORT with the arguments given, its stderr appended to LOG;
# keeps its pid in gateway_pid and GATEWAY_PIDS (for the caller to stop it),
# and waits until it is ready (gateway_ready).
gateway_start() {  # port, log, ddb-gateway arguments...
    local port=$1 log=$2
    shift 2
    # made here, not by the background shell's redirection: gateway_ready reads it at once
    : >>"$log"
    "${GATEWAY_BIN:-$ROOT/ddb-gateway}" --listen "127.0.0.1:$port" "$@" 2>>"$log" &
    gateway_pid=$!
    GATEWAY_PIDS+=("$gateway_pid")
    gateway_ready "$gateway_pid" "$port" "$log"
}

# Prints how to reach a deployment's gateway on 127.0.0.1:PORT with an
# administrator's key: the endpoint=, access_key_id= and secret_access_key=
# lines (which the tests read), the AWS CLI line to paste, and the commands
# that show and stop the deployment (tools/ha.sh, tools/scale-out.sh).
print_gateway_access() {  # port, key id, secret, where more keys are made, status command, stop command
    cat <<MSG

endpoint=http://127.0.0.1:$1
access_key_id=$2
secret_access_key=$3

An administrator's key (more: SELECT * FROM ddb.create_access_key() $4).
To talk to the gateway, paste into a shell:

export AWS_ACCESS_KEY_ID=$2 AWS_SECRET_ACCESS_KEY=$3 AWS_DEFAULT_REGION=us-east-1
aws dynamodb list-tables --endpoint-url http://127.0.0.1:$1

To see it: $5
To stop it: $6
MSG
}
