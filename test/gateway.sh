#!/usr/bin/env bash
# ddb-gateway speaks DynamoDB's HTTP protocol: starts the built binary on a
# loopback port against the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER
# set), sends requests with curl, and prints TAP (test/lib.sh).  Stops the
# gateway it started.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir gateway
DB=ddb_gateway
PORT=${GATEWAY_TEST_PORT:-55480}
URL="http://127.0.0.1:$PORT/"

# call ACTION BODY: the response body in $WORK/body, headers in $WORK/headers; prints the status
call() {
    curl -s -o "$WORK/body" -D "$WORK/headers" -w '%{http_code}' -X POST "$URL" \
        -H "X-Amz-Target: DynamoDB_20120810.$1" -H 'Content-Type: application/x-amz-json-1.0' --data-binary "$2"
}
header() { grep -i "^$1:" "$WORK/headers" | cut -d' ' -f2- | tr -d '\r'; }

fresh_db --extension "$DB"
# the protocol checks run without signatures (--development, loopback only); the
# signature checks below run against a second gateway that requires them
start_gateway "$PORT" "$WORK/gateway.log" --dsn "dbname=$DB" --pool 2 --development

check "CreateTable through HTTP" "200 ACTIVE" \
    "$(call CreateTable '{"TableName": "Gateway", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') $(grep -o '"TableStatus": *"[A-Z]*"' "$WORK/body" | grep -o '[A-Z]*"$' | tr -d '"')"
check "PutItem answers {}" "200 {}" "$(call PutItem '{"TableName": "Gateway", "Item": {"pk": {"S": "a"}, "n": {"N": "1"}}}') $(cat "$WORK/body")"
check "GetItem returns the item" "200" "$(call GetItem '{"TableName": "Gateway", "Key": {"pk": {"S": "a"}}}')"
check "the response is DynamoDB JSON" '{"Item": {"n": {"N": "1"}, "pk": {"S": "a"}}}' "$(cat "$WORK/body")"
check "x-amz-crc32 is the body's CRC32" \
    "$(perl -MCompress::Zlib -e 'local $/; open my $f, "<", $ARGV[0]; print crc32(<$f>)' "$WORK/body")" "$(header x-amz-crc32)"
check "Content-Type is application/x-amz-json-1.0" "application/x-amz-json-1.0" "$(header content-type)"
check "a failed condition is 400 with DynamoDB's error body" "400 com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException" \
    "$(call PutItem '{"TableName": "Gateway", "Item": {"pk": {"S": "a"}}, "ConditionExpression": "attribute_not_exists(pk)"}') $(grep -o '"__type": *"[^"]*"' "$WORK/body" | cut -d'"' -f4)"
check "an unknown table is ResourceNotFoundException" "400 com.amazonaws.dynamodb.v20120810#ResourceNotFoundException" \
    "$(call GetItem '{"TableName": "Nope", "Key": {"pk": {"S": "a"}}}') $(grep -o '"__type": *"[^"]*"' "$WORK/body" | cut -d'"' -f4)"
check "a body that is not JSON is SerializationException" "400 com.amazon.coral.service#SerializationException" \
    "$(call GetItem 'not json') $(grep -o '"__type": *"[^"]*"' "$WORK/body" | cut -d'"' -f4)"
# PostgreSQL's errors a request causes are DynamoDB's 400s (DDB_SQLSTATE_ERRORS in src/error_types.h)
type_of() { grep -o '"__type": *"[^"]*"' "$WORK/body" | cut -d'"' -f4 | sed 's/.*#//'; }
printf '{"TableName": "Gateway", "Key": {"pk": {"S": "\xff\xfe"}}}' >"$WORK/utf8.json"
check "a body that is not UTF-8 is SerializationException" "400 SerializationException" "$(call GetItem "@$WORK/utf8.json") $(type_of)"
check "a string holding U+0000 is ValidationException" "400 ValidationException" \
    "$(call PutItem '{"TableName": "Gateway", "Item": {"pk": {"S": "a\u0000b"}}}') $(type_of)"
check "which says why" "1" "$(grep -c "U+0000, which this implementation cannot store" "$WORK/body")"
head -c 100000 /dev/zero | tr '\0' '[' >"$WORK/deep.json"
check "JSON nested 100000 deep is ValidationException" "400 ValidationException" "$(call PutItem "@$WORK/deep.json") $(type_of)"
check "with DynamoDB's message" "1" "$(grep -c "Nesting Levels have exceeded supported limits" "$WORK/body")"
check "a Limit of 1e999999 is ValidationException" "400 ValidationException" \
    "$(call Scan '{"TableName": "Gateway", "Limit": 1e999999}') $(type_of)"
printf '{"TableName": "Gateway", "Key": {"pk": {"S": "a"}}}\0{"TableName": "Other"}' >"$WORK/nul.json"
check "a body holding a NUL byte is SerializationException" "400 SerializationException" "$(call GetItem "@$WORK/nul.json") $(type_of)"
user=11111111-2222-4333-8444-555555555555
check "a model's invariant broken at commit is ValidationException" "400 ValidationException" \
    "$(call PutItem '{"TableName": "UserServiceTable", "Item": {"PK": {"S": "USER#'$user'"}, "SK": {"S": "PROFILE"},
        "userId": {"S": "'$user'"}, "status": {"S": "active"}, "email": {"S": "a@example.com"}, "version": {"N": "1"},
        "firstName": {"S": "A"}, "lastName": {"S": "B"}, "createdAt": {"S": "2026-01-01"}, "updatedAt": {"S": "2026-01-01"}}}') $(type_of)"
check "with the model's message" "1" "$(grep -c "S8: user $user must have exactly one primary email" "$WORK/body")"
source_item() { echo '{"TableName": "sourcesTable", "Item": {"id": {"S": "'$1'"}, "name": {"S": "n"}, "writeKeyHash": {"S": "'"$(printf 'a%.0s' {1..64})"'"}}}'; }
check "a model's unique index holds" "200" "$(call PutItem "$(source_item src1)")"
check "a second item of its value is ConditionalCheckFailedException" "400 ConditionalCheckFailedException" \
    "$(call PutItem "$(source_item src2)") $(type_of)"
check "whose message names no index" '{"__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException", "message": "The conditional request failed"}' \
    "$(cat "$WORK/body")"
# a trigger raising what the server would (a deadlock, a serialization failure at commit, a privilege)
psql -X -q -d "$DB" >/dev/null <<'SQL'
CREATE FUNCTION public.raise_named() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.item ? 'raise' THEN
        RAISE EXCEPTION USING ERRCODE = NEW.item ->> 'raise', MESSAGE = 'raised on purpose', CONSTRAINT = 'internal_name';
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER raise_now AFTER INSERT ON public."Gateway" FOR EACH ROW WHEN (NEW.item ->> 'when' = 'now')
    EXECUTE FUNCTION public.raise_named();
CREATE CONSTRAINT TRIGGER raise_at_commit AFTER INSERT ON public."Gateway" DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.item ->> 'when' = 'commit') EXECUTE FUNCTION public.raise_named();
SQL
raising() { echo '{"TableName": "Gateway", "Item": {"pk": {"S": "r"}, "raise": {"S": "'$1'"}, "when": {"S": "'$2'"}}}'; }
check "a deadlock is TransactionConflictException (SDKs retry it)" "400 TransactionConflictException" \
    "$(call PutItem "$(raising 40P01 now)") $(type_of)"
check "a serialization failure at commit is TransactionConflictException" "400 TransactionConflictException" \
    "$(call PutItem "$(raising 40001 commit)") $(type_of)"
check "insufficient_privilege is AccessDeniedException" "400 AccessDeniedException" \
    "$(call PutItem "$(raising 42501 now)") $(type_of)"
check "no constraint's name reaches the client" "0" "$(grep -c internal_name "$WORK/body")"
check "an error of ours raised at commit stays 500" "500" "$(call PutItem "$(raising XX000 commit)")"
check "DynamoDB Streams' operations are served (X-Amz-Target DynamoDBStreams_20120810)" '200 {"Streams": []}' \
    "$(curl -s -o "$WORK/body" -w '%{http_code}' -X POST "$URL" -H 'X-Amz-Target: DynamoDBStreams_20120810.ListStreams' \
        -H 'Content-Type: application/x-amz-json-1.0' --data-binary '{}') $(cat "$WORK/body")"
psql -X -q -d "$DB" -c "SELECT ddb.create_table('Broken', 'pk')" -c 'DROP TABLE public."Broken"' >/dev/null
check "a fault of the server's (a table's relation dropped behind its back) is 500 InternalServerError" "500" \
    "$(call GetItem '{"TableName": "Broken", "Key": {"pk": {"S": "a"}}}')"
check "logged with the request id the response carries" "1" \
    "$(grep -c "ddb-gateway: request $(header x-amzn-RequestId): status 500" "$WORK/gateway.log")"
check "PartiQL is served" '200 {"Items": [{"n": {"N": "1"}}]}' \
    "$(call ExecuteStatement '{"Statement": "SELECT n FROM \"Gateway\" WHERE pk = ?", "Parameters": [{"S": "a"}]}') $(cat "$WORK/body")"
check "a request without X-Amz-Target is refused" "400" \
    "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL" --data-binary '{}')"
check "a body over 16 MB is refused before it is read" "413" \
    "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL" -H 'X-Amz-Target: DynamoDB_20120810.PutItem' \
        -H 'Content-Length: 16777217' --data-binary '{}' --max-time 5)"
check "keep-alive: two requests, one connection" "1" \
    "$(curl -s -o /dev/null -o /dev/null -w '%{num_connects}\n' -X POST -H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
        --data-binary '{}' "$URL" "$URL" | awk '{ n += $1 } END { print n }')"

# a client that gives up mid-request: the request blocks on a row lock held
# by another session, the client disconnects, the lock goes away; the
# statement ends (committed or not, never half-done), no transaction stays
# open, and the pool's connection serves the next request
psql -X -q -d "$DB" -c "BEGIN" -c "SELECT 1 FROM public.\"Gateway\" WHERE pk = 'a' FOR UPDATE" \
    -c "SELECT pg_sleep(1.5)" -c "COMMIT" >/dev/null &
locker_pid=$!
sleep 0.3
check "a client that gives up waiting is cut off" "28" \
    "$(curl -s -o /dev/null --max-time 0.5 -X POST "$URL" -H 'X-Amz-Target: DynamoDB_20120810.PutItem' \
        --data-binary '{"TableName": "Gateway", "Item": {"pk": {"S": "a"}, "n": {"N": "2"}}, "ReturnValues": "ALL_OLD"}'; echo $?)"
wait "$locker_pid"
sleep 0.3
check "no transaction stays open after the client left" "0" \
    "$(q -c "SELECT count(*) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL")"
check "the item is whole: the put ran to its end" '{"Item": {"n": {"N": "2"}, "pk": {"S": "a"}}}' \
    "$(call GetItem '{"TableName": "Gateway", "Key": {"pk": {"S": "a"}}}' >/dev/null; cat "$WORK/body")"
check "both pool connections still serve" "200 200" \
    "$(call ListTables '{}') $(call ListTables '{}')"

stop_gateway
check "the gateway stops on SIGTERM, cleanly (exit status 0)" "0" "$?"

# SigV4: keys in ddb.access_keys, signed the way the AWS SDKs sign
AUTH_PORT=$((PORT + 1))
AUTH_URL="http://127.0.0.1:$AUTH_PORT/"
start_gateway "$AUTH_PORT" "$WORK/gateway-auth.log" --dsn "dbname=$DB" --pool 2
read -r key_id secret <<<"$(q -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
# signed KEY_ID SECRET ACTION BODY [CLOCK_OFFSET]: signs into $WORK/signed, sends; prints "status __type"
sign() { perl "$ROOT/test/sigv4_headers.pl" "$1" "$2" "127.0.0.1:$AUTH_PORT" "DynamoDB_20120810.$3" "$4" "${5:-0}" >"$WORK/signed"; }
send() {
    local code
    code=$(curl -s --max-time "${CURL_MAX_TIME:-10}" -o "$WORK/body" -w '%{http_code}' -X POST "$AUTH_URL" -H "X-Amz-Target: DynamoDB_20120810.$1" \
        -H 'Content-Type: application/x-amz-json-1.0' -H @"$WORK/signed" --data-binary "$2")
    echo "$code $(grep -o '"__type": *"[^"]*"' "$WORK/body" | cut -d'"' -f4 | sed 's/.*#//')"
}
signed() { sign "$@"; send "$3" "$4"; }
get='{"TableName": "Gateway", "Key": {"pk": {"S": "a"}}}'
: >"$WORK/signed"
check "an unsigned request is MissingAuthenticationTokenException" "400 MissingAuthenticationTokenException" "$(send GetItem "$get")"
check "a signed request is served" "200 " "$(signed "$key_id" "$secret" GetItem "$get")"
check "the same signed request again is served, as AWS serves it (a resend)" "200 " "$(send GetItem "$get")"
check "a wrong secret is InvalidSignatureException" "400 InvalidSignatureException" "$(signed "$key_id" "wrong$secret" GetItem "$get")"
check "an unknown key is UnrecognizedClientException" "400 UnrecognizedClientException" "$(signed AKDDBNOSUCHKEY "$secret" GetItem "$get")"
check "a signature 20 minutes old is expired" "400 InvalidSignatureException" "$(signed "$key_id" "$secret" GetItem "$get" -1200)"
check "with AWS's message giving both times" "1" \
    "$(grep -cE '"Signature expired: [0-9]{8}T[0-9]{6}Z is now earlier than [0-9]{8}T[0-9]{6}Z \([0-9]{8}T[0-9]{6}Z - 15 min\.\)"' "$WORK/body")"
check "a signature dated 20 minutes ahead is not yet current" "400 InvalidSignatureException" \
    "$(signed "$key_id" "$secret" GetItem "$get" 1200)"
check "one dated 10 minutes off is within the skew AWS allows" "200 " "$(signed "$key_id" "$secret" GetItem "$get" -600)"
check "an Authorization header without its parts is IncompleteSignatureException" "400 IncompleteSignatureException" \
    "$(printf 'X-Amz-Date: %s\nAuthorization: AWS4-HMAC-SHA256 Credential=%s\n' "$(date -u +%Y%m%dT%H%M%SZ)" "$key_id" >"$WORK/signed"; send GetItem "$get")"
check "one quoting bytes that are not UTF-8 still has DynamoDB's error body" "400 IncompleteSignatureException" \
    "$(printf 'X-Amz-Date: %s\nAuthorization: AWS4-HMAC-SHA256 Credential=\xff\xfe\n' "$(date -u +%Y%m%dT%H%M%SZ)" >"$WORK/signed"; send GetItem "$get")"
check "an Authorization header without X-Amz-Date is IncompleteSignatureException" "400 IncompleteSignatureException" \
    "$(sign "$key_id" "$secret" GetItem "$get"; grep '^Authorization' "$WORK/signed" >"$WORK/nodate"; mv "$WORK/nodate" "$WORK/signed"; send GetItem "$get")"
check "a signed header the request lacks is IncompleteSignatureException" "400 IncompleteSignatureException" \
    "$(SIGV4_SIGNED='content-type;host;x-amz-date;x-amz-target;x-missing' signed "$key_id" "$secret" GetItem "$get")"
check "an X-Amz-Target left unsigned is refused" "400 InvalidSignatureException" \
    "$(SIGV4_SIGNED='content-type;host;x-amz-date' signed "$key_id" "$secret" GetItem "$get")"
check "with AWS's message" "1" "$(grep -c "'X-Amz-Target' must be a 'SignedHeader' in the AWS Authorization." "$WORK/body")"
check "a Host left unsigned is refused" "400 InvalidSignatureException" \
    "$(SIGV4_SIGNED='content-type;x-amz-date;x-amz-target' signed "$key_id" "$secret" GetItem "$get")"
sign "$key_id" "$secret" GetItem "$get"
check "a signed GetItem sent as a DeleteItem is refused (the target is signed)" "400 InvalidSignatureException" \
    "$(send DeleteItem "$get")"
check "and the item is still there" "t" "$(q -c "SELECT ddb.execute('GetItem', '$get') ? 'Item'")"
sign "$key_id" "$secret" GetItem "$get"
check "a body changed after signing is refused" "400 InvalidSignatureException" \
    "$(send GetItem '{"TableName": "Gateway", "Key": {"pk": {"S": "b"}}}')"
# what a key's role may touch: test/authorization.sh
# keys are cached (src/gateway/keycache.c); a change of ddb.access_keys empties the cache when it commits
# refused KEY_ID SECRET: the answer once the key is refused (asked every 0.1 s, for 2 s at most)
refused() {
    local id=$1 secret=$2 answer
    wait_for 2 'answer=$(signed "$id" "$secret" GetItem "$get"); [ "$answer" != "200 " ]'
    echo "$answer"
}
# listeners: the gateway's connections listening for key changes
listeners() {
    q -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$DB' AND application_name = 'ddb-gateway key listener'"
}
check "the gateway listens for key changes on a connection of its own" "1" "$(listeners)"
psql -X -q -d "$DB" -c "BEGIN" -c "LOCK TABLE ddb.access_keys IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(3)" -c "COMMIT" \
    >/dev/null &
locker=$!
sleep 0.5
check "a cached key needs no lookup: served while ddb.access_keys is locked" "200 " \
    "$(CURL_MAX_TIME=1 signed "$key_id" "$secret" GetItem "$get")"
wait "$locker"
psql -X -q -d "$DB" -c "SELECT ddb.revoke_access_key('$key_id')" >/dev/null
check "a revoked key is UnrecognizedClientException (the cache forgets it)" "400 UnrecognizedClientException" \
    "$(refused "$key_id" "$secret")"
read -r key2 secret2 <<<"$(q -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
check "a new key is served" "200 " "$(signed "$key2" "$secret2" GetItem "$get")"
for _ in 1 2; do  # both of the gateway's threads, each of which keeps the last signing key it derived
    check "another key's secret does not sign for it, in the scope just used" "400 InvalidSignatureException" \
        "$(signed "$key2" "$secret" GetItem "$get")"
    check "while its own still does" "200 " "$(signed "$key2" "$secret2" GetItem "$get")"
done
psql -X -q -d "$DB" -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE datname = '$DB' AND application_name = 'ddb-gateway key listener'" >/dev/null
psql -X -q -d "$DB" -c "SELECT ddb.revoke_access_key('$key2')" >/dev/null
check "a key revoked while the gateway lost its listener is refused (the cache is off)" "400 UnrecognizedClientException" \
    "$(refused "$key2" "$secret2")"
wait_for 5 '[ "$(listeners)" = 1 ]'
check "the gateway listens again" "1" "$(listeners)"
read -r key3 secret3 <<<"$(q -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
check "a key made since is served" "200 " "$(signed "$key3" "$secret3" GetItem "$get")"
psql -X -q -d "$DB" -c "SELECT ddb.revoke_access_key('$key3')" >/dev/null
check "and refused once revoked" "400 UnrecognizedClientException" "$(refused "$key3" "$secret3")"
stop_gateway
# (timeout: a gateway that wrongly started would listen, not exit)
timeout 5 "$ROOT/ddb-gateway" --listen 0.0.0.0:$((PORT + 2)) --development --dsn "dbname=$DB" 2>/dev/null
check "--development is refused beyond loopback" "2" "$?"
timeout 5 "$ROOT/ddb-gateway" --listen 0.0.0.0:$((PORT + 2)) --development --cors '*' --tls-cert /nonexistent --tls-key /nonexistent \
    --dsn "dbname=$DB" 2>"$WORK/development.err"
check "--development --cors '*' beyond loopback without --insecure-listen is refused, as --development" \
    "2 1" "$? $(grep -c 'taken on a loopback listen address only, or with --insecure-listen' "$WORK/development.err")"
drop_db "$DB"
done_testing
