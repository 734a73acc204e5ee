#!/usr/bin/env bash
# bench/http_ceiling.sh — the ceiling of HTTP layers doing nothing on this
# machine (issue 33, target 1): small servers of bench/http_ceiling/ that
# answer a POST of about 200 bytes with a fixed 200 JSON body of 95 bytes
# once the body is read, with keep-alive, in plain HTTP and in TLS, driven by
# wrk -t2 at 8, 32 and 256 connections:
#
#   libmicrohttpd  a thread per connection; an internal pool of 2, 8 and 32
#                  threads with epoll; 2 daemons with epoll and no thread of
#                  their own, each driven by a thread of the program from its
#                  own epoll set (the listening socket shared); the same
#                  with every request suspended and resumed on the loop's
#                  next turn (TLS: GnuTLS)
#   libh2o         its evloop, 2 threads, answering in the handler, and
#                  answering after the loop's turn (TLS: OpenSSL)
#   libevent       evhttp, 2 threads (TLS: bufferevent_openssl)
#   ddb-gateway    one, --pool 8 and no database (it serves while it waits
#                  for one): the same POST, a GetItem, answered 503 once its
#                  body is read; and, as docs/benchmarks.md measured before, a
#                  GET refused with 405 before its handler runs (libmicrohttpd
#                  closes a connection whose answer was queued before the
#                  request was read: a new connection each request, so plain
#                  HTTP only)
#
#   bash bench/http_ceiling.sh
#   BENCH_ROUNDS=3 BENCH_SECONDS=5 BENCH_PORT=55620 bash bench/http_ceiling.sh
#
# Installs its Debian packages (wrk, libh2o-evloop-dev, libevent-dev and the
# project's), builds ddb-gateway (make tools) and the servers, makes a
# self-signed ECDSA certificate, and serves on BENCH_PORT and the 9 ports
# after it.  In each round every server takes its turn at every connection
# count.  Reports requests/s (median of the rounds, lowest–highest) and
# the CPU per request of the server (/proc/PID/stat) and of wrk (time(1))
# over all rounds.  Prints a markdown report (also build/http_ceiling/report.md).
set -euo pipefail
export CLUSTER_NAME=httpceiling
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster.sh"
source "$ROOT/bench/lib/stats.sh"

ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_PER_RUN=${BENCH_SECONDS:-5}
FIRST_PORT=${BENCH_PORT:-55620}
CONNECTIONS=(8 32 256)
SRC="$ROOT/bench/http_ceiling"
OUT="$ROOT/build/http_ceiling"
# The servers, in the report's order, and the command line of each (THREADS PORT follow; the TLS files after them).
SERVERS=(mhd-per-connection mhd-pool-2 mhd-pool-8 mhd-pool-32 mhd-external-2 mhd-suspend-2 h2o-2 h2o-later-2 evhttp-2
         gateway-503 gateway-405)
declare -A COMMAND=(
    [mhd-per-connection]="$OUT/mhd_server per-connection 1" [mhd-pool-2]="$OUT/mhd_server pool 2"
    [mhd-pool-8]="$OUT/mhd_server pool 8" [mhd-pool-32]="$OUT/mhd_server pool 32"
    [mhd-external-2]="$OUT/mhd_server external 2" [mhd-suspend-2]="$OUT/mhd_server suspend 2"
    [h2o-2]="$OUT/h2o_server now 2" [h2o-later-2]="$OUT/h2o_server later 2" [evhttp-2]="$OUT/evhttp_server 2")
declare -A LABEL=(
    [mhd-per-connection]="libmicrohttpd, a thread per connection"
    [mhd-pool-2]="libmicrohttpd, internal pool of 2 threads (epoll)"
    [mhd-pool-8]="libmicrohttpd, internal pool of 8 threads (epoll)"
    [mhd-pool-32]="libmicrohttpd, internal pool of 32 threads (epoll)"
    [mhd-external-2]="libmicrohttpd, external epoll loop, 2 threads × 1 daemon"
    [mhd-suspend-2]="libmicrohttpd, external epoll loop, 2 threads, each request suspended and resumed"
    [h2o-2]="libh2o evloop, 2 threads"
    [h2o-later-2]="libh2o evloop, 2 threads, each request answered after the loop's turn"
    [evhttp-2]="libevent evhttp, 2 threads"
    [gateway-503]="ddb-gateway, --pool 8, no database: the POST answered 503"
    [gateway-405]="ddb-gateway, --pool 8, a GET refused with 405 (connection closed)")
rm -rf "$OUT" && mkdir -p "$OUT"

install_packages wrk libh2o-evloop-dev libevent-dev
echo "== building ddb-gateway and the servers"
make -C "$ROOT" -s tools >/dev/null
CFLAGS=(-O2 -g -Wall -Wextra -Werror)
cc "${CFLAGS[@]}" -o "$OUT/mhd_server" "$SRC/mhd_server.c" "$SRC/common.c" \
    $(pkg-config --cflags --libs libmicrohttpd) -lpthread
cc "${CFLAGS[@]}" -o "$OUT/h2o_server" "$SRC/h2o_server.c" "$SRC/common.c" "$SRC/tls_openssl.c" \
    $(pkg-config --cflags --libs libh2o-evloop openssl) -lpthread
cc "${CFLAGS[@]}" -o "$OUT/evhttp_server" "$SRC/evhttp_server.c" "$SRC/common.c" "$SRC/tls_openssl.c" \
    $(pkg-config --cflags --libs libevent libevent_openssl openssl) -lpthread
# ECDSA: a connection's handshake costs the server tens of microseconds, not the milliseconds of RSA's
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=127.0.0.1 \
    -keyout "$OUT/key.pem" -out "$OUT/cert.pem" 2>/dev/null

declare -A PID PORT RATE SERVER_USER SERVER_SYSTEM CLIENT_MS DONE
trap 'kill "${PID[@]}" 2>/dev/null || true' EXIT
# The servers measured over plain HTTP or TLS: all but the 405 over TLS (a new handshake each request).
servers_of() {  # http or https
    for server in "${SERVERS[@]}"; do
        [ "$1-$server" = https-gateway-405 ] || echo "$server"
    done
}
# Starts a server on a port, plain or TLS; its stderr goes to a log.
start_server() {  # server, port, http or https
    local tls=()
    [ "$3" = https ] && tls=("$OUT/cert.pem" "$OUT/key.pem")
    case "$1" in
        gateway-*)
            "$ROOT/ddb-gateway" --development --listen "127.0.0.1:$2" --pool 8 --dsn "host=$OUT port=1" \
                ${tls:+--tls-cert "${tls[0]}" --tls-key "${tls[1]}"} 2>>"$OUT/$1-$3.log" & ;;
        *) ${COMMAND[$1]} "$2" "${tls[@]}" 2>>"$OUT/$1-$3.log" & ;;
    esac
    PID[$1]=$!
}
# Starts every server on its port, plain or TLS, and waits until each answers.
start_servers() {  # http or https
    local port=$FIRST_PORT server deadline
    for server in $(servers_of "$1"); do
        # the gateway's two lines are one process's
        if [ "$server" = gateway-405 ]; then
            PORT[$server]=${PORT[gateway-503]} PID[$server]=${PID[gateway-503]}
            continue
        fi
        PORT[$server]=$port
        # h2o's and evhttp's sockets share their port (SO_REUSEPORT): it must be free
        if curl -sk -o /dev/null --max-time 1 "$1://127.0.0.1:$port/"; then
            echo "port $port is taken: give BENCH_PORT" >&2
            return 1
        fi
        start_server "$server" "$port" "$1"
        deadline=$((SECONDS + 10))
        until curl -sk -o /dev/null --max-time 1 "$1://127.0.0.1:$port/"; do
            kill -0 "${PID[$server]}" 2>/dev/null && [ "$SECONDS" -le "$deadline" ] ||
                { echo "$server did not start (log in $OUT)" >&2; return 1; }
            sleep 0.1
        done
        port=$((port + 1))
    done
}
# The user and system ticks a process has used, its threads' (ended ones too).
user_system_ticks() {  # pid
    sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12, $13 }'
}
# Stops every server.
stop_servers() {
    for server in "${!PID[@]}"; do kill "${PID[$server]}" 2>/dev/null && wait "${PID[$server]}" 2>/dev/null || true; done
    PID=()
}
# One wrk run against a server; fails when the server ended, on wrk's failure or a socket error, and
# on a status other than 200 (the gateway's: 503 or 405).  A request unanswered after 2 s (wrk's
# timeout: a server starved of CPU, or stalled by 256 TLS handshakes at once) is no error.
measure() {  # http or https, server, connections, round
    local key="$1,$2,$3" log="$OUT/wrk-$1-$2-$3-$4.log" script=(-s "$SRC/post.lua") u0 s0 u1 s1 statuses=0
    [ "$2" = gateway-405 ] && script=()
    read -r u0 s0 <<<"$(user_system_ticks "${PID[$2]}")"
    { TIMEFORMAT='%3U %3S'; time wrk -t2 -c"$3" -d"${SECONDS_PER_RUN}s" "${script[@]}" \
        "$1://127.0.0.1:${PORT[$2]}/" >"$log" 2>&1 || true; } 2>"$log.time"
    read -r u1 s1 <<<"$(user_system_ticks "${PID[$2]}" 2>/dev/null || echo 0 0)"
    case "$2" in gateway-*) statuses=$(awk '/ requests in / { print $1 }' "$log") ;; esac
    if ! kill -0 "${PID[$2]}" 2>/dev/null || ! grep -q '^ *[0-9]* requests in ' "$log" || grep -q '^  Socket errors: .*[1-9].*, timeout' "$log" ||
        [ "$(awk '/^  Non-2xx or 3xx responses:/ { n = $5 } END { print n + 0 }' "$log")" != "$statuses" ]; then
        echo "$2 ($1) at $3 connections: the server ended, or wrk failed, saw errors or unexpected statuses" >&2
        cat "$log" >&2
        return 1
    fi
    RATE[$key]+="$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$log") "
    SERVER_USER[$key]=$(( ${SERVER_USER[$key]:-0} + u1 - u0 ))
    SERVER_SYSTEM[$key]=$(( ${SERVER_SYSTEM[$key]:-0} + s1 - s0 ))
    CLIENT_MS[$key]=$(( ${CLIENT_MS[$key]:-0} + $(awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$log.time") ))
    DONE[$key]=$(( ${DONE[$key]:-0} + $(awk '/ requests in / { print $1 }' "$log") ))
}

for scheme in http https; do
    start_servers "$scheme"
    for round in $(seq "$ROUNDS"); do
        for c in "${CONNECTIONS[@]}"; do
            echo "== $scheme, $c connections, round $round of $ROUNDS (${SECONDS_PER_RUN}s each)"
            for server in $(servers_of "$scheme"); do
                measure "$scheme" "$server" "$c" "$round"
            done
        done
    done
    stop_servers
done

# Microseconds of CPU per request (– when none was answered).
us_per_request() {  # seconds of CPU, requests
    awk -v s="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.1f", s * 1e6 / n; else printf "–" }'
}
# Microseconds of CPU per request of clock ticks.
ticks_per_request() {  # ticks, requests
    us_per_request "$(awk -v t="$1" -v hz="$(getconf CLK_TCK)" 'BEGIN { print t / hz }')" "$2"
}
{
    echo "Command: \`BENCH_ROUNDS=$ROUNDS BENCH_SECONDS=$SECONDS_PER_RUN bash bench/http_ceiling.sh\`"
    echo "($(date -u +%Y-%m-%d), $(nproc) cores, $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2) -t2 sending a POST of 192 bytes"
    echo "(bench/http_ceiling/post.lua; the 405 line: a GET); libmicrohttpd $(dpkg-query -W -f='${Version}' libmicrohttpd12),"
    echo "libh2o-evloop $(dpkg-query -W -f='${Version}' libh2o-evloop-dev), libevent $(dpkg-query -W -f='${Version}' libevent-dev),"
    echo "GnuTLS $(dpkg-query -W -f='${Version}' libgnutls30), OpenSSL $(dpkg-query -W -f='${Version}' libssl3), an ECDSA P-256 certificate;"
    echo "ddb_model at $(git -C "$ROOT" rev-parse --short HEAD).)"
    for scheme in http https; do
        echo
        echo "$([ "$scheme" = http ] && echo Plain HTTP || echo TLS). Requests/s: median of $ROUNDS rounds of ${SECONDS_PER_RUN}s (lowest–highest);"
        echo "CPU per request over all rounds, in microseconds, of the server (/proc/PID/stat: user + system,"
        echo "the system part the kernel's, sockets and epoll) and of wrk (time)."
        echo
        echo "| server | connections | requests/s | server µs/request (user + system) | wrk µs/request |"
        echo "|---|---:|---:|---:|---:|"
        for server in $(servers_of "$scheme"); do
            for c in "${CONNECTIONS[@]}"; do
                key="$scheme,$server,$c"
                echo "| ${LABEL[$server]} | $c | $(median "${RATE[$key]}") ($(spread "${RATE[$key]}")) |" \
                    "$(ticks_per_request $((SERVER_USER[$key] + SERVER_SYSTEM[$key])) "${DONE[$key]}")" \
                    "($(ticks_per_request "${SERVER_USER[$key]}" "${DONE[$key]}") + $(ticks_per_request "${SERVER_SYSTEM[$key]}" "${DONE[$key]}")) |" \
                    "$(us_per_request "$(awk -v ms="${CLIENT_MS[$key]}" 'BEGIN { print ms / 1000 }')" "${DONE[$key]}") |"
            done
        done
    done
} | tee "$OUT/report.md"
