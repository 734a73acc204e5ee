#!/usr/bin/env bash
# ddb-gateway follows a failover without a restart (docs/gateway.md,
# "Failover"): two PostgreSQL servers of the suite's own, a primary and its
# streaming standby (pg_basebackup -R, synchronous), behind one gateway
# whose dsn names both with target_session_attrs=read-write.  The primary
# stops (immediate), requests meanwhile get a retryable 503 within the
# connect timeout, never a 400 or a hang; the standby is promoted, and the
# same gateway process writes again, reads what it acknowledged before,
# still refuses a key revoked before, and says /health ready; a key lookup
# on a connection the server dropped is retried on a new one.  A second
# gateway, pointed at the standby alone, shows a write refused by a
# standby (25006) answered 503 and its connection opened again.  The
# gateway's --replica names both servers with target_session_attrs=standby:
# eventually consistent reads go to the standby, to the primary while the
# promoted node is the only server, and to the new standby made of the
# old primary's directory once it runs.  Then the
# new primary freezes (SIGSTOP to every process of it, as a hung machine):
# a request is answered 503 once the request timeout has passed, so is the
# next, which waits for a new connection the frozen server never answers,
# and after it thaws the gateway serves again on new connections.  Needs no
# test cluster (its servers are its own); prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir gateway-failover
PRIMARY_PORT=55730
STANDBY_PORT=55731
PORT=55732
STANDBY_GATEWAY_PORT=55733
CONNECT_TIMEOUT=4
REQUEST_TIMEOUT=3
DB=failover
PGBIN=/usr/lib/postgresql/15/bin
PRIMARY="$WORK/primary"
STANDBY="$WORK/standby"

as_postgres() { (cd / && runuser -u postgres -- "$@"); }
# on NODE (primary or standby) psql...: psql as postgres on that server's socket
on() { local node=$1 port=$PRIMARY_PORT; shift; [ "$node" = standby ] && port=$STANDBY_PORT
       psql -X -q -At -h "$WORK/$node" -p "$port" -U postgres -d "$DB" "$@"; }
now() { date +%s.%N; }
# sign KEY_ID SECRET ACTION BODY: the signed headers into $WORK/signed
sign() { perl "$ROOT/test/sigv4_headers.pl" "$1" "$2" "127.0.0.1:$PORT" "DynamoDB_20120810.$3" "$4" >"$WORK/signed"; }
# signed KEY_ID SECRET ACTION BODY: sends it to the gateway; prints "status __type" (15 s at most)
signed() {
    local code
    sign "$@"
    code=$(curl -s --max-time 15 -o "$WORK/body" -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/" \
        -H "X-Amz-Target: DynamoDB_20120810.$3" -H 'Content-Type: application/x-amz-json-1.0' \
        -H @"$WORK/signed" --data-binary "$4")
    echo "$code $(grep -o '"__type": *"[^"]*"' "$WORK/body" | cut -d'"' -f4 | sed 's/.*#//')"
}
put() { signed "$key" "$secret" PutItem "{\"TableName\": \"Orders\", \"Item\": {\"pk\": {\"S\": \"$1\"}}}"; }
health() { curl -s --max-time 15 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health"; }

# ---- the primary, and its synchronous standby ----
mkdir -p "$PRIMARY" "$STANDBY"
(
    source "$ROOT/tools/cluster.sh"
    chown postgres:postgres "$PRIMARY" "$STANDBY"
    allow_postgres_into "$WORK"
    chmod 700 "$PRIMARY" "$STANDBY"
    init_server "$PRIMARY/data"
    start_server "$PRIMARY/data" "$PRIMARY_PORT" "$PRIMARY" "$PRIMARY/server.log" -c fsync=off \
        -c shared_preload_libraries=ddb_model
) >"$WORK/servers.log" 2>&1
at_exit 'for n in primary standby; do as_postgres "$PGBIN/pg_ctl" -D "$WORK/$n/data" -m immediate -w stop >/dev/null 2>&1; done'
psql -X -q -h "$PRIMARY" -p "$PRIMARY_PORT" -U postgres -d postgres -c "CREATE DATABASE $DB"
on primary -c "SET client_min_messages = warning" -c "CREATE EXTENSION ddb_model" \
    -c "SELECT ddb.create_table('Orders', 'pk')" >/dev/null
read -r key secret <<<"$(on primary -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
read -r revoked revoked_secret <<<"$(on primary -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
as_postgres "$PGBIN/pg_basebackup" -h "$PRIMARY" -p "$PRIMARY_PORT" -U postgres -D "$STANDBY/data" -R -X stream -c fast
(
    source "$ROOT/tools/cluster.sh"
    start_server "$STANDBY/data" "$STANDBY_PORT" "$STANDBY" "$STANDBY/server.log" -c fsync=off \
        -c shared_preload_libraries=ddb_model -c hot_standby=on
) >>"$WORK/servers.log" 2>&1
# from here on a commit is acknowledged once the standby has it: none is lost by the failover
on primary -c "ALTER SYSTEM SET synchronous_standby_names = '*'" -c "SELECT pg_reload_conf()" >/dev/null
wait_for 10 '[ "$(on primary -c "SELECT sync_state FROM pg_stat_replication")" = sync ]'
check "a primary and its synchronous streaming standby" "f t sync" \
    "$(on primary -c 'SELECT pg_is_in_recovery()') $(on standby -c 'SELECT pg_is_in_recovery()') $(on primary -c 'SELECT sync_state FROM pg_stat_replication')"

# ---- one gateway, its dsn naming both servers ----
# one event thread: its first connection serves every request in turn, so that the request sent to the frozen
# primary below finds that connection open and waits on its statement (with two threads it could land on one
# still connecting, and be answered 503 when the attempt fails, as soon or sooner)
dsn="host=$PRIMARY,$STANDBY port=$PRIMARY_PORT,$STANDBY_PORT user=postgres dbname=$DB target_session_attrs=read-write"
start_gateway "$PORT" "$WORK/gateway.log" --dsn "$dsn" --pool 2 --threads 1 --connect-timeout "$CONNECT_TIMEOUT" \
    --request-timeout "$REQUEST_TIMEOUT" --endpoint-address gateway.example:443 \
    --replica "host=$PRIMARY,$STANDBY port=$PRIMARY_PORT,$STANDBY_PORT user=postgres dbname=$DB target_session_attrs=standby"
pid=$gateway_pid
# and one in development mode pointed at the standby alone (no target_session_attrs)
start_gateway "$STANDBY_GATEWAY_PORT" "$WORK/standby-gateway.log" --development --access-log off --pool 1 \
    --connect-timeout 6 --request-timeout 2 --dsn "host=$STANDBY port=$STANDBY_PORT user=postgres dbname=$DB"
standby_gateway=$gateway_pid
to_standby_gateway() {
    curl -s --max-time 15 -o "$WORK/standby-body" -w '%{http_code}' -H "X-Amz-Target: DynamoDB_20120810.PutItem" \
        -H 'Content-Type: application/x-amz-json-1.0' --data-binary '{"TableName": "Orders", "Item": {"pk": {"S": "s"}}}' \
        "http://127.0.0.1:$STANDBY_GATEWAY_PORT/"
    echo " $(grep -o 'ServiceUnavailable' "$WORK/standby-body")"
}
check "a write that reaches a standby (25006) is 503 ServiceUnavailable, retryable, not a 400" "503 ServiceUnavailable" \
    "$(to_standby_gateway)"

# reads_on NODE: the eventually consistent reads that NODE (primary, replica1) served, from GET /metrics
reads_on() { curl -s --max-time 15 "http://127.0.0.1:$PORT/metrics" | sed -n "s/^ddb_gateway_reads_total{node=\"$1\"} //p"; }
replica_usable() { curl -s --max-time 15 "http://127.0.0.1:$PORT/metrics" | sed -n 's/^ddb_gateway_replica_usable{replica="1"} //p'; }
# eventual_reads: 5 eventually consistent GetItems; prints how many were answered 200
eventual_reads() {
    local n=0
    for _ in 1 2 3 4 5; do
        [ "$(signed "$key" "$secret" GetItem '{"TableName": "Orders", "Key": {"pk": {"S": "item1"}}}')" = "200 " ] && n=$((n + 1))
    done
    echo "$n"
}
# served_by NODE: what 5 eventually consistent reads answered, and how many NODE served
served_by() { local before answered; before=$(reads_on "$1"); answered=$(eventual_reads); echo "$answered $(($(reads_on "$1") - before))"; }

acknowledged=0
for i in $(seq 20); do [ "$(put "item$i")" = "200 " ] && acknowledged=$((acknowledged + 1)); done
check "20 writes through the gateway, acknowledged" "20" "$acknowledged"
wait_for 10 '[ "$(replica_usable)" = 1 ]'
check "eventually consistent reads: served by the standby (--replica, target_session_attrs=standby)" "5 5" \
    "$(served_by replica1)"
check "a key used once (so cached) ..." "200 " "$(signed "$revoked" "$revoked_secret" ListTables '{}')"
on primary -c "SELECT ddb.revoke_access_key('$revoked')" >/dev/null
check "... is refused once revoked" "400 UnrecognizedClientException" "$(signed "$revoked" "$revoked_secret" ListTables '{}')"

# ---- the primary stops: requests get a retryable 5xx within the bound ----
as_postgres "$PGBIN/pg_ctl" -D "$PRIMARY/data" -m immediate -w stop >/dev/null
answers=()
slowest=0
for i in 1 2 3; do
    started=$(now)
    answers+=("$(put "gap$i")")
    slowest=$(echo "$started $(now) $slowest" | awk '{ d = $2 - $1; print (d > $3 ? d : $3) }')
done
check "3 writes while no server takes writes: 503 ServiceUnavailable each (the SDKs retry it)" \
    "503 ServiceUnavailable|503 ServiceUnavailable|503 ServiceUnavailable" "$(IFS='|'; echo "${answers[*]}")"
check "each answered within the connect timeout ($CONNECT_TIMEOUT s), not hanging" "yes" \
    "$(echo "$slowest $CONNECT_TIMEOUT" | awk '{ print ($1 < $2 ? "yes" : "no (" $1 " s)") }')"
check "GET /health says unavailable meanwhile" "503" "$(health)"

# ---- the standby is promoted: the same gateway writes again ----
as_postgres "$PGBIN/pg_ctl" -D "$STANDBY/data" -w promote >/dev/null
promoted=$(now)
wait_for 20 '[ "$(put after)" = "200 " ]'
written=$(now)
check "after the promotion a write through the same gateway succeeds" "200 " "$(put after)"
diag "from promote to the first write acknowledged: $(echo "$promoted $written" | awk '{ printf "%.2f", $2 - $1 }') s"
check "by the same process, not restarted" "yes" "$(kill -0 "$pid" 2>/dev/null && echo yes)"
readable=0
for i in $(seq 20); do
    signed "$key" "$secret" GetItem "{\"TableName\": \"Orders\", \"Key\": {\"pk\": {\"S\": \"item$i\"}}, \"ConsistentRead\": true}" >/dev/null
    grep -q "\"item$i\"" "$WORK/body" && readable=$((readable + 1))
done
check "the 20 writes acknowledged before the failover are read back (20 of 20)" "20" "$readable"
check "the key revoked before the failover is still refused" "400 UnrecognizedClientException" \
    "$(signed "$revoked" "$revoked_secret" ListTables '{}')"
check "GET /health says ready again" "200" "$(health)"
# the key cache's listener, by its name
LISTENER="application_name = 'ddb-gateway key listener'"
check "the key cache's listener is back, on the new primary" "1" \
    "$(wait_for 20 '[ "$(on standby -c "SELECT count(*) FROM pg_stat_activity WHERE $LISTENER")" = 1 ]'; \
       on standby -c "SELECT count(*) FROM pg_stat_activity WHERE $LISTENER")"
check "the promoted node is not a standby: the replica is skipped" "0" \
    "$(wait_for 10 '[ "$(replica_usable)" = 0 ]'; replica_usable)"
check "eventually consistent reads meanwhile: served by the primary" "5 5" "$(served_by primary)"
# the old primary's directory made again, as a standby of the new primary
as_postgres "$PGBIN/pg_ctl" -D "$PRIMARY/data" -m immediate -w stop >/dev/null 2>&1
rm -rf "$PRIMARY/data"
as_postgres "$PGBIN/pg_basebackup" -h "$STANDBY" -p "$STANDBY_PORT" -U postgres -D "$PRIMARY/data" -R -X stream -c fast
(
    source "$ROOT/tools/cluster.sh"
    start_server "$PRIMARY/data" "$PRIMARY_PORT" "$PRIMARY" "$PRIMARY/server.log" -c fsync=off \
        -c shared_preload_libraries=ddb_model -c hot_standby=on
) >>"$WORK/servers.log" 2>&1
check "a standby again (the old primary's host): the replica serves reads again, without a restart" "1" \
    "$(wait_for 15 '[ "$(replica_usable)" = 1 ]'; replica_usable)"
check "eventually consistent reads: served by the new standby" "5 5" "$(served_by replica1)"
check "on its own connections to it" "yes" \
    "$([ "$(on primary -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")" -gt 0 ] && echo yes)"
read -r later later_secret <<<"$(on standby -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
signed "$later" "$later_secret" ListTables '{}' >/dev/null
on standby -c "SELECT ddb.revoke_access_key('$later')" >/dev/null
check "a key revoked on the new primary is refused at once (its notification empties the cache)" \
    "400 UnrecognizedClientException" "$(signed "$later" "$later_secret" ListTables '{}')"
check "the gateway pointed at the former standby writes too, its refused connection opened again" "200 " \
    "$(to_standby_gateway)"
# the pool's connections dropped by the new primary: a key lookup is retried once, on a new connection
on standby -c "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = '$DB'
    AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND NOT $LISTENER" >/dev/null
read -r fresh fresh_secret <<<"$(on standby -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
check "a new key's lookup on a connection the server dropped is retried on a new one: served" "200 " \
    "$(signed "$fresh" "$fresh_secret" ListTables '{}')"
signed "$key" "$secret" DescribeEndpoints '{}' >/dev/null
check "and that connection answers DescribeEndpoints with the gateway's endpoint address" "gateway.example:443" \
    "$(grep -o '"Address": *"[^"]*"' "$WORK/body" | cut -d'"' -f4)"
check "and the failover logged no 500" "0" "$(grep -c 'status 500' "$WORK/gateway.log")"

# ---- the new primary hangs: a request is given up after the request timeout ----
server_pids() { local pm; pm=$(head -1 "$STANDBY/data/postmaster.pid"); echo "$pm $(ps -o pid= --ppid "$pm")"; }
frozen=$(server_pids)
at_exit 'kill -CONT $frozen 2>/dev/null'
kill -STOP $frozen
started=$(now)
answer=$(put frozen)
took=$(echo "$started $(now)" | awk '{ printf "%.1f", $2 - $1 }')
check "a write while the primary hangs: 503 ServiceUnavailable (retryable)" "503 ServiceUnavailable" "$answer"
check "answered once the request timeout ($REQUEST_TIMEOUT s) passed, not hanging" "yes" \
    "$(echo "$took $REQUEST_TIMEOUT" | awk '{ print ($1 >= $2 - 0.5 && $1 < $2 + 2 ? "yes" : "no (" $1 " s)") }')"
# the gateway on the frozen server alone (one host, its whole connect timeout for it): its connection
# given up at its request timeout, the next write waits for a new one, which the frozen server never
# answers; that wait is given up at the request timeout too, before the connect timeout ends the attempt
to_standby_gateway >/dev/null
started=$(now)
answer=$(to_standby_gateway)
took=$(echo "$started $(now)" | awk '{ printf "%.1f", $2 - $1 }')
check "a write waiting meanwhile for a connection to be made: 503 ServiceUnavailable at the request timeout (2 s), before the connect timeout (6 s)" \
    "503 ServiceUnavailable yes" "$answer $(echo "$took" | awk '{ print ($1 >= 1.5 && $1 < 4 ? "yes" : "no (" $1 " s)") }')"
kill -CONT $frozen
check "once it thaws, a write through the same gateway succeeds (its connection given up, a new one made)" "200 " \
    "$(wait_for 20 '[ "$(put thawed)" = "200 " ]'; put thawed)"
check "the statement that hung was not canceled: its backend was left (the gateway closed its socket)" "0" \
    "$(grep -c 'canceling statement due to user request' "$STANDBY/server.log")"

stop_gateway "$standby_gateway"
stop_gateway "$pid"
check "the gateway exits 0" "0" "$?"
done_testing
