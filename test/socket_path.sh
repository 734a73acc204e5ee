#!/usr/bin/env bash
# A checkout at any path: a unix socket's path holds at most 107 bytes, so
# tools/cluster.sh puts the socket of a checkout at a long path into a short
# directory in /tmp.  Reaches the checkout through a symlink at a long path
# (bash's pwd keeps the logical path, as cluster.sh's ROOT does), starts a
# cluster of its own from there (CLUSTER_NAME=longpath, port
# DDB_SOCKET_TEST_PORT, default 55441), connects with psql and with
# ddb-gateway, stops it; and checks that a short path keeps its socket in
# the checkout.  Needs the extension and ddb-gateway built and installed
# (tools/test.sh); prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir socket-path
PORT=${DDB_SOCKET_TEST_PORT:-55441}
GATEWAY_PORT=${DDB_SOCKET_TEST_GATEWAY_PORT:-55542}

TMP=$(mktemp -d /tmp/ddb-socket-path.XXXXXX)
LONG="$TMP/$(printf 'a%.0s' {1..60})/$(printf 'b%.0s' {1..60})/checkout"
mkdir -p "$(dirname "$LONG")"
ln -s "$ROOT" "$LONG"
ln -s "$ROOT" "$TMP/c"
at_exit '! declare -F stop_cluster >/dev/null || stop_cluster; rm -rf "$TMP"'

# a short path: the socket stays in the checkout
check "a checkout at a short path keeps its socket in .cluster/NAME/socket" "$TMP/c/.cluster/shortpath/socket" \
    "$(CLUSTER_NAME=shortpath DDB_PGPORT=$PORT bash -c 'source "$1/tools/cluster.sh" && echo "$SOCKET_DIR"' _ "$TMP/c")"

# the long path: this script's own cluster, started and stopped from there
export CLUSTER_NAME=longpath DDB_PGPORT=$PORT
source "$LONG/tools/cluster.sh"
set +e
inside="$CLUSTER_DIR/socket/.s.PGSQL.$PGPORT_NUM"
check "the checkout seen at a long path, where its socket's path would take ${#inside} bytes (over 107)" "$LONG yes" \
    "$ROOT $([ "$(printf %s "$inside" | wc -c)" -gt 107 ] && echo yes || echo no)"
check "the socket goes into a short directory in /tmp" "yes" \
    "$([[ "$SOCKET_DIR" == /tmp/ddb_model-*-longpath ]] && [ "$(printf %s "$SOCKET_DIR/.s.PGSQL.$PGPORT_NUM" | wc -c)" -le 100 ] \
        && echo yes || echo "no: $SOCKET_DIR")"
start_cluster >"$WORK/start.log" 2>&1
check "the cluster starts from the long path" "0" "$?"
check "psql connects through the short socket directory" "1" "$(cluster_psql -At -c 'SELECT 1' 2>&1)"
check "and so does libpq from PGHOST and PGPORT" "$SOCKET_DIR $PGPORT_NUM 1" "$PGHOST $PGPORT $(psql -X -At -c 'SELECT 1' 2>&1)"
psql -X -q -c "CREATE EXTENSION ddb_model" >"$WORK/extension.log" 2>&1
GATEWAY_BIN="$LONG/ddb-gateway" gateway_start "$GATEWAY_PORT" "$WORK/gateway.log" --access-log off
check "ddb-gateway without --dsn (PGHOST) answers /health with 200" "200" \
    "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$GATEWAY_PORT/health")"
stop_gateway
stop_cluster
check "stop_cluster stops the server and removes the short directory" "stopped removed" \
    "$([ -f "$PGDATA_DIR/postmaster.pid" ] && echo running || echo stopped) $([ -e "$SOCKET_DIR" ] && echo kept || echo removed)"
if [ "$status" -ne 0 ]; then
    for log in "$WORK/start.log" "$WORK/extension.log" "$WORK/gateway.log" "$CLUSTER_DIR/server.log"; do
        [ -f "$log" ] && { diag "== $log"; tail -20 "$log" | diag; }
    done
fi
rm -rf "$CLUSTER_DIR"
done_testing
