#!/usr/bin/env bash
# ddb-gateway as a service (docs/operations.md): settings from a config
# file, the environment and the command line; libpq's defaults without
# --dsn; GET /health and GET /metrics; the access log; TLS, reloaded on
# SIGHUP; more than 1,024 client connections; start-up checks that say what
# to do; SIGTERM that answers the requests in flight.  Runs against the
# cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set); prints TAP
# (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir gateway-service
DB=ddb_gateway_service
PORT=${DDB_SERVICE_PORT:-55530}
GATEWAY="$ROOT/ddb-gateway"
VERSION=$(sed -n "s/^default_version = '\\(.*\\)'/\\1/p" "$ROOT/ddb_model.control")

# start NAME ARGS...: starts a gateway (stderr in $WORK/NAME.log), its pid in
# $started, without waiting for it (stopped as the suite exits)
start() {
    local name=$1; shift
    "$GATEWAY" "$@" 2>"$WORK/$name.log" &
    started=$!
    GATEWAY_PIDS+=("$started")
}
# healthy URL CURL_ARGS...: waits (5 s at most) until URL/health answers 200; prints the last status
healthy() {
    local url=$1 curl_args=("${@:2}") code
    wait_for 5 'code=$(curl -s -o /dev/null -w "%{http_code}" "${curl_args[@]}" "$url/health"); [ "$code" = 200 ]'
    echo "$code"
}
# exits NAME ARGS...: runs a gateway that must refuse to start; prints its exit status and last line
exits() {
    local name=$1; shift
    timeout 10 "$GATEWAY" "$@" 2>"$WORK/$name.log" >/dev/null
    echo "$? $(tail -1 "$WORK/$name.log")"
}
# signed URL KEY SECRET OPERATION BODY: a request signed by curl's own SigV4; prints the status
signed() {
    curl -s -o "$WORK/body" -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:dynamodb" --user "$2:$3" \
        -H "X-Amz-Target: DynamoDB_20120810.$4" -H 'Content-Type: application/x-amz-json-1.0' \
        --data-binary "$5" "$1/"
}

fresh_db --extension "$DB"
fresh_db --extension=0.1 "${DB}_old"
q -c "SELECT ddb.create_table('Svc', 'pk')" >/dev/null
read -r KEY SECRET <<<"$(q -F ' ' -c "SELECT * FROM ddb.create_access_key()")"

# --- settings: the file, the environment over it, the command line over both; no --dsn: libpq's defaults
URL="http://127.0.0.1:$PORT"
cat >"$WORK/gateway.conf" <<CONF
# a comment, and a blank line

listen = 127.0.0.1:$PORT
pool = 3
access-log = $WORK/access.log
max-connections = 2000
CONF
PGDATABASE=$DB DDB_GATEWAY_POOL=2 start main --config "$WORK/gateway.conf" --max-connections 1500
MAIN=$started
check "the config file's listen, no --dsn (PGDATABASE and libpq's defaults): /health answers 200" "200" "$(healthy "$URL")"
check "/health says ok and the extension's version" "{\"status\":\"ok\",\"extension\":\"$VERSION\",\"detail\":\"ddb_model $VERSION\"}" \
    "$(curl -s "$URL/health")"
check "the environment wins over the file, the command line over both" \
    "ddb-gateway: listening on 127.0.0.1:$PORT (HTTP), $(( $(nproc) < 2 ? $(nproc) : 2 )) event threads, 2 database connections, up to 1500 clients" "$(head -1 "$WORK/main.log")"

# --- a signed request (curl --aws-sigv4), its metrics and its access-log line
check "curl --aws-sigv4 signs a PutItem the gateway serves" "200" \
    "$(signed "$URL" "$KEY" "$SECRET" PutItem '{"TableName": "Svc", "Item": {"pk": {"S": "a"}, "v": {"S": "'"$(head -c 3000 /dev/zero | tr '\0' x)"'"}}}')"
check "a GetItem" "200" "$(signed "$URL" "$KEY" "$SECRET" GetItem '{"TableName": "Svc", "Key": {"pk": {"S": "a"}}}')"
check "a failed condition" "400" \
    "$(signed "$URL" "$KEY" "$SECRET" PutItem '{"TableName": "Svc", "Item": {"pk": {"S": "a"}}, "ConditionExpression": "attribute_not_exists(pk)"}')"
curl -s "$URL/metrics" >"$WORK/metrics"
check "metrics: requests by operation and status" "1 1 1" \
    "$(grep -c '^ddb_gateway_requests_total{operation="PutItem",status="200"} 1$' "$WORK/metrics") $(grep -c '^ddb_gateway_requests_total{operation="PutItem",status="400"} 1$' "$WORK/metrics") $(grep -c '^ddb_gateway_requests_total{operation="GetItem",status="200"} 1$' "$WORK/metrics")"
check "metrics: a latency histogram by operation" "1 1" \
    "$(grep -c '^ddb_gateway_request_duration_seconds_bucket{operation="PutItem",le="+Inf"} 2$' "$WORK/metrics") $(grep -c '^ddb_gateway_request_duration_seconds_count{operation="GetItem"} 1$' "$WORK/metrics")"
check "metrics: consumed capacity by table (a 3 KB item written: 3 write units; read eventually consistent: 0.5)" \
    "ddb_gateway_consumed_read_capacity_units_total{table=\"Svc\"} 0.5 ddb_gateway_consumed_write_capacity_units_total{table=\"Svc\"} 3" \
    "$(grep '^ddb_gateway_consumed_read_capacity_units_total{table="Svc"}' "$WORK/metrics") $(grep '^ddb_gateway_consumed_write_capacity_units_total{table="Svc"}' "$WORK/metrics")"
check "metrics: the pool's connections and use" "ddb_gateway_pool_connections 2 ddb_gateway_pool_connections_in_use 0" \
    "$(grep -E '^ddb_gateway_pool_connections(_in_use)? ' "$WORK/metrics" | tr '\n' ' ' | sed 's/ $//')"
curl -s -o /dev/null -D "$WORK/unsigned.headers" -H 'X-Amz-Target: DynamoDB_20120810.ListTables' --data-binary '{}' "$URL/"
# log_has TEXT: waits (2 s at most) until a line of the access log holds TEXT: a writer thread writes them within 100 ms
log_has() {
    local text=$1
    wait_for 2 'grep -qF "$text" "$WORK/access.log" 2>/dev/null'
}
log_has '"operation":"ListTables"'
# logged N EXPRESSIONS...: Python expressions over the N-th access-log line of a DynamoDB request (path /), r
logged() {
    /usr/bin/python3 - "$WORK/access.log" "$@" <<'PY'
import json, sys
r = [r for r in (json.loads(l) for l in open(sys.argv[1])) if r["path"] == "/"][int(sys.argv[2])]
print(" ".join(str(eval(e, {"r": r})) for e in sys.argv[3:]))
PY
}
check "each access-log line is JSON: 4 DynamoDB requests, and GET /health and /metrics" "4 True" \
    "$(/usr/bin/python3 -c 'import json,sys; l=[json.loads(x) for x in open(sys.argv[1])]; print(sum(r["path"] == "/" for r in l), {r["path"] for r in l} == {"/", "/health", "/metrics"})' "$WORK/access.log")"
check "the line of a signed request: key, operation, table, status, body bytes, duration" "$KEY PutItem Svc 200 None True True" \
    "$(logged 0 'r["key_id"]' 'r["operation"]' 'r["table"]' 'r["status"]' 'r["error"]' 'r["bytes_in"] > 3000' 'r["duration_ms"] > 0')"
check "the line of a refused one names DynamoDB's error" "PutItem Svc 400 com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException" \
    "$(logged 2 'r["operation"]' 'r["table"]' 'r["status"]' 'r["error"]')"
check "an unsigned request is logged without a key, with its error" "ListTables None 400 com.amazon.coral.service#MissingAuthenticationTokenException" \
    "$(logged 3 'r["operation"]' 'r["key_id"]' 'r["status"]' 'r["error"]')"
check "the line's request_id is the x-amzn-RequestId its client got; no two lines share one" \
    "$(grep -i '^x-amzn-RequestId:' "$WORK/unsigned.headers" | cut -d' ' -f2 | tr -d '\r') True" \
    "$(logged 3 'r["request_id"]') $(/usr/bin/python3 -c 'import json,sys; ids=[json.loads(l)["request_id"] for l in open(sys.argv[1])]; print(len(set(ids)) == len(ids))' "$WORK/access.log")"

# --- SIGHUP: the access log reopened (after a rotation), the key cache emptied
mv "$WORK/access.log" "$WORK/access.log.1"
kill -HUP "$MAIN"
wait_for 5 'grep -q reloaded "$WORK/main.log"'
signed "$URL" "$KEY" "$SECRET" GetItem '{"TableName": "Svc", "Key": {"pk": {"S": "a"}}}' >/dev/null
log_has '"operation":"GetItem"'
check "SIGHUP reopens the access log: the next line is in a new file" "1" "$(wc -l <"$WORK/access.log" 2>/dev/null)"

# --- every operation ddb.execute serves has its own metrics label, not "other"
signed "$URL" "$KEY" "$SECRET" DescribeLimits '{}' >/dev/null
check "metrics: a DescribeLimits is counted as itself" "1" \
    "$(curl -s "$URL/metrics" | grep -c '^ddb_gateway_requests_total{operation="DescribeLimits",status="200"} 1$')"
check "metrics: src/gateway/metrics.c lists every operation of src/execute/execute.c" "" \
    "$(grep -o '^	{"[A-Z][A-Za-z]*", ' "$ROOT/src/execute/execute.c" | tr -d '\t{", ' | sort -u |
       comm -23 - <(grep -o '"[A-Z][A-Za-z]*"' "$ROOT/src/gateway/metrics.c" | tr -d '"' | sort -u) | tr '\n' ' ')"

# --- a connection keeps --connection-memory bytes (default 4096) for a request's headers: beyond, 431
padded() {  # url, header bytes, curl args...
    curl -s -o /dev/null -w '%{http_code}' -H "X-Pad: $(head -c "$2" /dev/zero | tr '\0' a)" "${@:3}" "$1/health"
}
check "headers of 2.5 kB are taken by default" "200" "$(padded "$URL" 2500)"
check "headers beyond what --connection-memory holds are 431, the connection closed" "431" "$(padded "$URL" 5000)"
check "the gateway serves on" "200" "$(healthy "$URL")"

# --- more than 1,024 client connections (epoll, not select()), all served
/usr/bin/python3 - "$PORT" >"$WORK/many.txt" 2>&1 <<'PY'
import resource, socket, struct, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
port = int(sys.argv[1])
conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(1100)]
last = conns[-1]
last.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
print(last.recv(100).split(b"\r\n")[0].decode())
# closed with a reset, not left in TIME_WAIT: their ephemeral ports may be ones the other suites listen on
for c in conns:
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
PY
check "1,100 connections open at once, the last one served" "HTTP/1.1 200 OK" "$(cat "$WORK/many.txt")"

# --- SIGTERM: the request in flight is answered, then the gateway exits 0
psql -X -q -d "$DB" -c "BEGIN" -c 'LOCK TABLE public."Svc" IN ACCESS EXCLUSIVE MODE' -c "SELECT pg_sleep(2)" \
    -c "COMMIT" >/dev/null &
locker=$!
sleep 0.5
signed "$URL" "$KEY" "$SECRET" PutItem '{"TableName": "Svc", "Item": {"pk": {"S": "b"}}}' >"$WORK/inflight.status" &
inflight=$!
sleep 0.5
kill -TERM "$MAIN"
sleep 0.3
check "after SIGTERM no new connection is accepted" "000" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$URL/health")"
wait "$inflight"
check "the request in flight at SIGTERM is answered" "200" "$(cat "$WORK/inflight.status")"
wait "$MAIN"
check "and the gateway exits 0" "0" "$?"
wait "$locker"

# --- TLS, and new TLS files on SIGHUP
for n in 1 2; do
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=ddb-gateway test $n" \
        -addext "subjectAltName=IP:127.0.0.1" -keyout "$WORK/key$n.pem" -out "$WORK/cert$n.pem" 2>/dev/null
done
cp "$WORK/cert1.pem" "$WORK/cert.pem" && cp "$WORK/key1.pem" "$WORK/key.pem"
TLS_URL="https://127.0.0.1:$((PORT + 1))"
start tls --listen "127.0.0.1:$((PORT + 1))" --dsn "dbname=$DB" --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem" \
    --access-log off --connection-memory 16384
TLS=$started
check "HTTPS with --tls-cert and --tls-key" "200" "$(healthy "$TLS_URL" --cacert "$WORK/cert1.pem")"
check "a larger --connection-memory takes larger headers" "200" "$(padded "$TLS_URL" 12000 --cacert "$WORK/cert1.pem")"
check "a signed request over HTTPS" "200" \
    "$(CURL_CA_BUNDLE="$WORK/cert1.pem" signed "$TLS_URL" "$KEY" "$SECRET" GetItem '{"TableName": "Svc", "Key": {"pk": {"S": "a"}}}')"
check "plain HTTP to the HTTPS port gets no DynamoDB answer" "000" \
    "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$((PORT + 1))/health")"
cp "$WORK/cert2.pem" "$WORK/cert.pem" && cp "$WORK/key2.pem" "$WORK/key.pem"
kill -HUP "$TLS"
wait_for 5 'grep -q "TLS files read again" "$WORK/tls.log"'
check "after SIGHUP the new certificate is served" "200" "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$WORK/cert2.pem" "$TLS_URL/health")"
check "and the old one no more" "000" "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$WORK/cert1.pem" "$TLS_URL/health")"
echo "not a key" >"$WORK/key.pem"
kill -HUP "$TLS"
wait_for 5 'grep -q "still serving with the old ones" "$WORK/tls.log"'
check "a bad TLS file on SIGHUP keeps the running ones" "200" \
    "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$WORK/cert2.pem" "$TLS_URL/health")"
kill -TERM "$TLS"; wait "$TLS"

# --- the database unreachable at start: /health 503 and requests 503 while it retries, then served
# a directory at a short path (a unix socket's path holds at most 107 bytes, and the checkout's may be long)
NOSOCKET=$(mktemp -d /tmp/ddb-nosocket.XXXXXX)
at_exit 'rm -rf "$NOSOCKET"'
start unreachable --listen "127.0.0.1:$((PORT + 2))" --dsn "host=$NOSOCKET port=$PGPORT dbname=$DB" --development \
    --access-log "$WORK/unreachable-access.log"
UNREACHABLE=$started
sleep 0.5
check "an unreachable database: /health answers 503" "503" \
    "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$((PORT + 2))/health")"
check "and a request ServiceUnavailable (503), which the SDKs retry" "503 com.amazonaws.dynamodb.v20120810#ServiceUnavailable" \
    "$(curl -s -o "$WORK/body" -w '%{http_code}' -H 'X-Amz-Target: DynamoDB_20120810.ListTables' --data-binary '{}' \
        "http://127.0.0.1:$((PORT + 2))/") $(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["__type"])' "$WORK/body")"
check "the log says it tries again" "1" "$(grep -c 'trying again in 1 s' "$WORK/unreachable.log")"
ln -s "$PGHOST/.s.PGSQL.$PGPORT" "$NOSOCKET/.s.PGSQL.$PGPORT"
wait_for 10 '[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$((PORT + 2))/health")" = 200 ]'
check "once the database is reachable, /health answers 200 and requests are served" "200 200" \
    "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$((PORT + 2))/health") $(curl -s -o /dev/null -w '%{http_code}' \
        -H 'X-Amz-Target: DynamoDB_20120810.ListTables' --data-binary '{}' "http://127.0.0.1:$((PORT + 2))/")"
kill -TERM "$UNREACHABLE"; wait "$UNREACHABLE"
check "another run of the gateway draws other request ids" "True" \
    "$(/usr/bin/python3 -c 'import json,sys; p=lambda f: {json.loads(l)["request_id"][:16] for l in open(f)}; print(not (p(sys.argv[1]) & p(sys.argv[2])))' \
        "$WORK/access.log.1" "$WORK/unreachable-access.log")"

# --- start-up checks: one line that says what to do, and a non-zero exit
check "a database without the extension" "1 ddb-gateway: the database \"postgres\" has no ddb_model extension: run CREATE EXTENSION ddb_model in it, or point --dsn at the database that has it" \
    "$(exits noext --listen "127.0.0.1:$((PORT + 3))" --dsn "dbname=postgres")"
check "a database with another version of it" "1 ddb-gateway: the database \"${DB}_old\" has ddb_model 0.1, and this gateway speaks to $VERSION: run ALTER EXTENSION ddb_model UPDATE in it (or install the gateway of its version)" \
    "$(exits oldext --listen "127.0.0.1:$((PORT + 3))" --dsn "dbname=${DB}_old")"
# a port another program listens on (the kernel's choice: a fixed one may be a client's ephemeral port now)
/usr/bin/python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(5)' \
    >"$WORK/taken.port" &
at_exit "kill $! 2>/dev/null"
wait_for 5 '[ -s "$WORK/taken.port" ]'
TAKEN=$(cat "$WORK/taken.port")
check "a port in use" "1 ddb-gateway: 127.0.0.1:$TAKEN is in use by another program: stop it, or choose another port with --listen HOST:PORT" \
    "$(exits inuse --listen "127.0.0.1:$TAKEN" --dsn "dbname=$DB")"
check "an address not of this machine" "1 ddb-gateway: 192.0.2.1:$PORT is not an address of this machine: listen on one of its addresses, or on 0.0.0.0 for all of them" \
    "$(exits notmine --listen "192.0.2.1:$PORT" --insecure-listen --dsn "dbname=$DB")"
check "a port below 1024 without privileges" "1 ddb-gateway: 127.0.0.1:80: ports below 1024 need privileges: choose a port from 1024 up, or give the gateway CAP_NET_BIND_SERVICE (AmbientCapabilities= in its systemd unit)" \
    "$(timeout 10 setpriv --reuid=nobody --regid=nogroup --clear-groups "$GATEWAY" --listen 127.0.0.1:80 --dsn "dbname=$DB" \
        2>"$WORK/privileged.log" >/dev/null; echo "$? $(tail -1 "$WORK/privileged.log")")"
check "an access log that cannot be opened" "1 ddb-gateway: --access-log: cannot open $WORK/no/such/dir/access.log: No such file or directory" \
    "$(exits nolog --listen "127.0.0.1:$((PORT + 5))" --dsn "dbname=$DB" --access-log "$WORK/no/such/dir/access.log")"
check "plain HTTP beyond loopback without --insecure-listen" "2 ddb-gateway: listen: plain HTTP is served on loopback only: give --tls-cert and --tls-key for HTTPS, or --insecure-listen to serve plain HTTP there anyway" \
    "$(exits insecure --listen "0.0.0.0:$((PORT + 5))" --dsn "dbname=$DB")"
check "a file-descriptor limit below --max-connections" "1 ddb-gateway: --max-connections 4096 needs 4444 file descriptors, but this process may open only 1024: raise the limit (ulimit -n in a shell, LimitNOFILE= in a systemd unit) or lower --max-connections" \
    "$(ulimit -n 1024; exits fdlimit --threads 2 --listen "127.0.0.1:$((PORT + 5))" --dsn "dbname=$DB")"
check "a bad setting in the config file names its line" "2 ddb-gateway: $WORK/bad.conf line 2: pool takes a whole number from 1 to 256, not \"many\"" \
    "$(printf 'listen = 127.0.0.1:1\npool = many\n' >"$WORK/bad.conf"; exits badconf --config "$WORK/bad.conf")"
check "a bad environment variable names itself" "2 ddb-gateway: DDB_GATEWAY_METRICS: metrics takes loopback, any or off, not \"all\"" \
    "$(DDB_GATEWAY_METRICS=all exits badenv)"
check "TLS files that cannot be read" "1 ddb-gateway: --tls-cert: cannot read $WORK/missing.pem: No such file or directory" \
    "$(exits notls --listen "127.0.0.1:$((PORT + 5))" --dsn "dbname=$DB" --tls-cert "$WORK/missing.pem" --tls-key "$WORK/key1.pem")"

drop_db "$DB" "${DB}_old"
done_testing
