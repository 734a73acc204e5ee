#!/usr/bin/env bash
# ddb-gateway's cors setting (docs/gateway.md, "Web pages: CORS"): the
# preflight and the headers, with curl; then a real browser, Debian's
# chromium driven by puppeteer-core, running the AWS SDK for JavaScript v3
# in a page served from another origin: its calls succeed from an allowed
# origin and fail from another.  Also --version and --help of ddb-gateway
# and ddb-transfer, and the message of a gateway that cannot reach its
# database.  The npm packages of test/gateway_cors/package-lock.json are
# installed into build/gateway-cors-npm when they are not there yet.  Runs
# against the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set); prints
# TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir gateway-cors
mkdir -p "$WORK/page"
NPM_DIR="$ROOT/build/gateway-cors-npm"
DB=ddb_gateway_cors
# the gateway with --cors; +1 the page's web server; +2 a gateway with --cors '*'; +3 one without a database
PORT=${DDB_CORS_PORT:-55520}
GATEWAY="$ROOT/ddb-gateway"
TRANSFER="$ROOT/ddb-transfer"
VERSION=$(sed -n "s/^default_version = '\\(.*\\)'/\\1/p" "$ROOT/ddb_model.control")
URL="http://127.0.0.1:$PORT"
PAGE_ORIGIN="http://127.0.0.1:$((PORT + 1))"
pids=()
NOSOCKET=
at_exit 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; [ -z "$NOSOCKET" ] || rm -rf "$NOSOCKET"'

# start NAME ARGS...: starts a gateway that will not answer (stderr in $WORK/NAME.log), stopped as the suite exits
start() {
    local name=$1; shift
    "$GATEWAY" "$@" 2>"$WORK/$name.log" &
    pids+=("$!")
}
# exits NAME ARGS...: runs a gateway that must refuse to start; prints its exit status and last line
exits() {
    local name=$1; shift
    timeout 10 "$GATEWAY" "$@" 2>"$WORK/$name.log" >/dev/null
    echo "$? $(tail -1 "$WORK/$name.log")"
}
# ask NAME URL CURL-ARGS...: a request; prints its status (headers in $WORK/NAME.headers)
ask() {
    local name=$1 url=$2; shift 2
    curl -s -D "$WORK/$name.headers" -o "$WORK/$name.body" -w '%{http_code}' "$@" "$url"
}
# header NAME FIELD: the value of a header of the response NAME, empty when it has none
header() {
    awk -v field="$(tr 'A-Z' 'a-z' <<<"$2")" 'BEGIN { FS = ": " } tolower($1) == field { sub(/\r$/, "", $2); print $2 }' \
        "$WORK/$1.headers"
}

# --- a bare gateway whose database cannot be reached: says once how to point it at one, and keeps trying
# (started first, checked at the end: its retries come after 1, 2, 4 ... seconds)
NOSOCKET=$(mktemp -d /tmp/ddb-cors-nosocket.XXXXXX)
PGHOST=$NOSOCKET start unreachable --listen "127.0.0.1:$((PORT + 3))"

# --- --version and --help
check "ddb-gateway --version: its version on stdout, exit 0" "ddb-gateway $VERSION|0|" \
    "$("$GATEWAY" --version 2>"$WORK/stderr")|$?|$(cat "$WORK/stderr")"
check "ddb-transfer --version" "ddb-transfer $VERSION|0|" "$("$TRANSFER" --version 2>"$WORK/stderr")|$?|$(cat "$WORK/stderr")"
"$GATEWAY" --help >"$WORK/gateway.help" 2>"$WORK/stderr"
check "ddb-gateway --help: what it is first, where its documentation is last, on stdout, exit 0" \
    "ddb-gateway serves DynamoDB's HTTP API|docs/gateway.md ddb-gateway(1)|0|" \
    "$(head -1 "$WORK/gateway.help" | cut -c1-38)|$(tail -2 "$WORK/gateway.help" | grep -o 'docs/gateway.md\|ddb-gateway(1)' | tr '\n' ' ' | sed 's/ $//')|$?|$(cat "$WORK/stderr")"
check "ddb-gateway --help lists --cors" "1" "$(grep -c '^  --cors ' "$WORK/gateway.help")"
"$TRANSFER" --help >"$WORK/transfer.help" 2>"$WORK/stderr"
check "ddb-transfer --help: what it is first, where its documentation is last" \
    "ddb-transfer moves items between ddb_model tables|docs/transfer.md ddb-transfer(1)|0|" \
    "$(head -1 "$WORK/transfer.help" | cut -c1-49)|$(tail -2 "$WORK/transfer.help" | grep -o 'docs/transfer.md\|ddb-transfer(1)' | tr '\n' ' ' | sed 's/ $//')|$?|$(cat "$WORK/stderr")"

# --- the setting refused at start-up, in one line that says what it takes
check "cors * on an address beyond loopback is refused" \
    "2 ddb-gateway: cors: * lets the pages of every web site call the gateway, and is taken on a loopback listen address or in development mode only: list the origins that may, such as --cors https://app.example.com" \
    "$(exits star --listen "0.0.0.0:$PORT" --insecure-listen --cors '*')"
check "but taken there in development mode (--development --insecure-listen, as a container runs ddb-local)" \
    "ddb-gateway: listening on 0.0.0.0:$PORT" \
    "$(timeout 1 "$GATEWAY" --listen "0.0.0.0:$PORT" --insecure-listen --development --cors '*' --dsn 'host=/nonexistent' 2>&1 | grep -o "^ddb-gateway: listening on [0-9.:]*")"
check "an origin with a path is refused" "2 has a path" \
    "$(exits path --listen "127.0.0.1:$PORT" --cors 'http://127.0.0.1:3000/app' | grep -o '^2 \|has a path' | tr -d '\n')"
check "so is one without a scheme, from DDB_GATEWAY_CORS" "2 ddb-gateway: cors: the origin \"localhost:3000\" has no scheme://" \
    "$(DDB_GATEWAY_CORS='https://ok.example.com, localhost:3000' exits scheme --listen "127.0.0.1:$PORT" | cut -d'(' -f1 | sed 's/ $//')"

fresh_db --extension "$DB" >/dev/null
read -r KEY SECRET <<<"$(q -d "$DB" -F ' ' -c "SELECT * FROM ddb.create_access_key()")"

# the origins as a person may write them: spaces, capitals, https's default port
start_gateway "$PORT" "$WORK/cors.log" --dsn "dbname=$DB" --pool 2 --access-log "$WORK/access.log" \
    --cors "$PAGE_ORIGIN, https://App.Example.com:443"
start_gateway "$((PORT + 2))" "$WORK/star.log" --dsn "dbname=$DB" --pool 1 --access-log off --cors '*'
python3 -m http.server "$((PORT + 1))" --bind 127.0.0.1 --directory "$WORK/page" >"$WORK/page-server.log" 2>&1 &
pids+=("$!")

# --- the preflight, as a browser sends it for the SDK's request: no signature
SDK_HEADERS="amz-sdk-invocation-id,amz-sdk-request,authorization,content-type,x-amz-content-sha256,x-amz-date,x-amz-security-token,x-amz-target,x-amz-user-agent"
preflight() {  # NAME URL ORIGIN
    ask "$1" "$2/" -X OPTIONS -H "Origin: $3" -H 'Access-Control-Request-Method: POST' \
        -H "Access-Control-Request-Headers: $SDK_HEADERS"
}
check "a preflight from an allowed origin: 200, allowing it, POST and the SDK's headers for 172800 s" \
    "200|$PAGE_ORIGIN|POST|$SDK_HEADERS|172800|Origin" \
    "$(preflight allowed "$URL" "$PAGE_ORIGIN")|$(header allowed Access-Control-Allow-Origin)|$(header allowed Access-Control-Allow-Methods)|$(
        header allowed Access-Control-Allow-Headers)|$(header allowed Access-Control-Max-Age)|$(header allowed Vary)"
check "an origin written with capitals and a default port matches what browsers send" "200 https://app.example.com" \
    "$(preflight capitals "$URL" "https://app.example.com") $(header capitals Access-Control-Allow-Origin)"
check "a preflight from another origin: 403, no CORS header, and a body saying why" \
    "403||the origin http://localhost:$((PORT + 1)) may not call this gateway: it is not in the gateway's cors setting" \
    "$(preflight refused "$URL" "http://localhost:$((PORT + 1))")|$(header refused Access-Control-Allow-Origin)$(
        header refused Access-Control-Allow-Methods)|$(cat "$WORK/refused.body")"
check "with cors *, a preflight from any origin is allowed with *, as DynamoDB answers" "200 * " \
    "$(preflight star "http://127.0.0.1:$((PORT + 2))" "https://anything.example") $(header star Access-Control-Allow-Origin) $(header star Vary)"
check "without cors, OPTIONS answers as before: 405 and no CORS header" "405 DynamoDB takes POST requests " \
    "$(preflight off "http://127.0.0.1:$((PORT + 3))" "$PAGE_ORIGIN") $(grep -o 'DynamoDB takes POST requests' "$WORK/off.body") $(
        header off Access-Control-Allow-Origin)"

# --- the request itself: signed as before; its answer exposes what the SDKs read
signed() {  # NAME ORIGIN-HEADER...: a signed ListTables
    ask "$1" "$URL/" --aws-sigv4 "aws:amz:us-east-1:dynamodb" --user "$KEY:$SECRET" \
        -H 'X-Amz-Target: DynamoDB_20120810.ListTables' -H 'Content-Type: application/x-amz-json-1.0' "${@:2}" --data-binary '{}'
}
check "a signed request from an allowed origin: 200, its origin allowed, x-amzn-RequestId and x-amz-crc32 exposed" \
    "200|$PAGE_ORIGIN|Origin|yes yes" \
    "$(signed post -H "Origin: $PAGE_ORIGIN")|$(header post Access-Control-Allow-Origin)|$(header post Vary)|$(
        header post Access-Control-Expose-Headers | tr ',' '\n' | grep -cx 'x-amzn-RequestId' | sed 's/1/yes/') $(
        header post Access-Control-Expose-Headers | tr ',' '\n' | grep -cx 'x-amz-crc32' | sed 's/1/yes/')"
check "an unsigned request from an allowed origin is still refused, in a response the page may read" \
    "400 $PAGE_ORIGIN MissingAuthenticationTokenException" \
    "$(ask unsigned "$URL/" -H "Origin: $PAGE_ORIGIN" -H 'X-Amz-Target: DynamoDB_20120810.ListTables' --data-binary '{}') $(
        header unsigned Access-Control-Allow-Origin) $(grep -o 'MissingAuthenticationTokenException' "$WORK/unsigned.body")"
check "a request from another origin gets no CORS header" "200||Origin" \
    "$(signed other -H 'Origin: https://elsewhere.example')|$(header other Access-Control-Allow-Origin)$(
        header other Access-Control-Expose-Headers)|$(header other Vary)"
check "a request without Origin gets none either" "200|" "$(signed plain)|$(header plain Access-Control-Allow-Origin)"
check "OPTIONS with an allowed Origin but no Access-Control-Request-Method is no preflight: 405" "405 $PAGE_ORIGIN" \
    "$(ask notpreflight "$URL/" -X OPTIONS -H "Origin: $PAGE_ORIGIN") $(header notpreflight Access-Control-Allow-Origin)"
check "GET /health from an allowed origin" "200 $PAGE_ORIGIN" \
    "$(ask health "$URL/health" -H "Origin: $PAGE_ORIGIN") $(header health Access-Control-Allow-Origin)"

# --- a real browser: the SDK for JavaScript in a page of another origin
# logged: the preflights refused and the DynamoDB requests in the access log so far
logged() {
    echo "$(grep -c '"method":"OPTIONS",.*"status":403' "$WORK/access.log") $(grep -c '"operation":"[A-Za-z]*"' "$WORK/access.log")"
}
if ! npm_packages "$ROOT/test/gateway_cors" "$NPM_DIR"; then
    check "npm installs puppeteer-core, esbuild and the SDK for JavaScript" "0" "1"
else
    cp "$ROOT/test/gateway_cors/page.mjs" "$ROOT/test/gateway_cors/browser.mjs" "$NPM_DIR/"
    cp "$ROOT/test/gateway_cors/index.html" "$WORK/page/"
    check "esbuild bundles the SDK for the page" "0" \
        "$("$NPM_DIR/node_modules/.bin/esbuild" "$NPM_DIR/page.mjs" --bundle --format=iife --platform=browser \
            --log-level=warning --outfile="$WORK/page/sdk.js" >"$WORK/esbuild.log" 2>&1; echo $?)"
    timeout 60 node "$NPM_DIR/browser.mjs" "$PAGE_ORIGIN/index.html" runCalls "$URL" "$KEY" "$SECRET" \
        >"$WORK/browser-allowed.out" 2>"$WORK/browser-allowed.err"
    check "chromium: CreateTable, PutItem and GetItem from an allowed origin, the request id read" \
        "BrowserNotes; from the browser; request id read" "$(head -1 "$WORK/browser-allowed.out")"
    [ "$(head -1 "$WORK/browser-allowed.out")" = "BrowserNotes; from the browser; request id read" ] ||
        { cat "$WORK/browser-allowed.out"; tail -5 "$WORK/browser-allowed.err"; }
    sleep 0.3  # the access log is written every 100 ms
    before=$(logged)
    timeout 60 node "$NPM_DIR/browser.mjs" "http://localhost:$((PORT + 1))/index.html" listTables "$URL" "$KEY" "$SECRET" \
        >"$WORK/browser-refused.out" 2>"$WORK/browser-refused.err"
    check "chromium: the same SDK call from another origin fails in the browser" \
        "failed: TypeError: Failed to fetch" "$(head -1 "$WORK/browser-refused.out")"
    check "and the browser says CORS refused it" "1" "$(grep -c -m1 'blocked by CORS policy' "$WORK/browser-refused.out")"
    sleep 0.3
    read -r refused_before requests_before <<<"$before"
    read -r refused_after requests_after <<<"$(logged)"
    check "the gateway saw its preflight refused, and never the request" "1 more refused preflight, 0 more requests" \
        "$((refused_after - refused_before)) more refused preflight, $((requests_after - requests_before)) more requests"
fi

# --- the bare gateway without a database: one plain message (checked once it has tried three times)
wait_for 10 "grep -q 'trying again in 4 s' '$WORK/unreachable.log'"
check "a gateway that cannot reach its database says once how to point it at one, and keeps trying" "1 yes" \
    "$(grep -c 'no dsn setting was given, so .*PGHOST.* --dsn "host=HOST port=PORT dbname=NAME user=USER"' "$WORK/unreachable.log") $(
        [ "$(grep -c 'trying again in' "$WORK/unreachable.log")" -ge 3 ] && echo yes)"
done_testing
