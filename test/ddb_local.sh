#!/usr/bin/env bash
# ddb-local (docs/local.md) as a developer runs it: as an ordinary user (the
# system user ddb-local-user, made here), in memory or in a kept directory;
# the AWS CLI and an SDK (boto3) with any access key; stopped by SIGINT and
# SIGTERM, leaving nothing behind; its cluster closed to other users.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir ddb_local
PORT=${DDB_LOCAL_TEST_PORT:-55610}
LOCAL="$ROOT/ddb-local"
USER_NAME=ddb-local-user
id -u "$USER_NAME" >/dev/null 2>&1 ||
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$USER_NAME"
chmod 755 "$WORK"
mkdir "$WORK/cache" "$WORK/kept"
chown "$USER_NAME:" "$WORK/cache" "$WORK/kept"
LOCAL_PID=
RUNNER=

# Runs ddb-local as the user in the background (SIGINT not ignored, as in a
# terminal), its output in WORK/NAME.out and .err; LOCAL_PID is the
# script's own pid.  Waits until it says where it serves: 0, else 1.
start_local() {  # name, ddb-local arguments...
    local name=$1
    shift
    runuser -u "$USER_NAME" -- env --default-signal=INT XDG_CACHE_HOME="$WORK/cache" TMPDIR=/tmp \
        "$LOCAL" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    RUNNER=$!
    wait_for 20 "grep -q \"DynamoDB's API at\" '$WORK/$name.out' || ! kill -0 $RUNNER 2>/dev/null"
    LOCAL_PID=$(pgrep -u "$USER_NAME" -f "^bash $LOCAL" | head -1)
    grep -q "DynamoDB's API at" "$WORK/$name.out"
}

# Sends the signal to ddb-local and waits for it to exit: its exit status.
stop_local() {  # signal
    local pid=$LOCAL_PID
    LOCAL_PID=
    kill "-$1" "$pid"
    wait_for 20 "! kill -0 $pid 2>/dev/null"
    wait "$RUNNER"  # runuser's status is ddb-local's
}
at_exit '[ -z "$LOCAL_PID" ] || kill -TERM "$LOCAL_PID"'

# What the user still runs (a server process that exited but is not yet
# reaped by init is not running), and the directory if it is still there.
leftovers() {  # directory
    { ps -u "$USER_NAME" -o pid=,stat=,args= | awk '$2 !~ /^Z/'; [ ! -e "$1" ] || echo "$1 is still there"; } | sed 's/^/  /'
}

aws_local() {  # access key, aws dynamodb arguments...
    AWS_ACCESS_KEY_ID=$1 AWS_SECRET_ACCESS_KEY=anything AWS_DEFAULT_REGION=eu-west-3 AWS_PAGER= \
        aws dynamodb --endpoint-url "http://127.0.0.1:$PORT" --output text "${@:2}" 2>&1
}

# --- what it refuses before it starts
"$LOCAL" --port 9 >/dev/null 2>"$WORK/root.err"
check "root is refused, saying why and what to do" "2 1" "$? $(grep -c 'not root: PostgreSQL refuses to run as root (as root: runuser -u SOMEONE -- ddb-local)' "$WORK/root.err")"
as_user() { runuser -u "$USER_NAME" -- "$@"; }
as_user "$LOCAL" --port 0 >/dev/null 2>"$WORK/port.err"
check "--port 0 is refused" "2 ddb-local: --port takes a TCP port, 1 to 65535" "$? $(cat "$WORK/port.err")"
as_user "$LOCAL" --in-memory --dir "$WORK/kept" >/dev/null 2>"$WORK/both.err"
check "--in-memory with --dir is refused" "2" "$?"
as_user "$LOCAL" --bogus >/dev/null 2>"$WORK/bogus.err"
check "an unknown option is refused" "2 ddb-local: unknown option --bogus (ddb-local --help)" "$? $(cat "$WORK/bogus.err")"
check "--version" "ddb-local $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$ROOT/ddb_model.control")" "$(as_user "$LOCAL" --version)"

# --- in memory, as the user, with the settings it prints
start_local memory --in-memory --port "$PORT"
ok "$([ $? = 0 ] && echo yes || echo no)" "ddb-local --in-memory starts as an ordinary user and says where it serves" \
    "$(cat "$WORK/memory.out" "$WORK/memory.err")"
DATA=$(sed -n 's/^  cluster: \(.*\) (in memory, removed at the end)$/\1/p' "$WORK/memory.out")
RUN_DIR=$(dirname "$DATA")
check "its cluster is in memory (tmpfs), the user's, closed to others" "tmpfs $USER_NAME 700" \
    "$(stat -f -c %T "$DATA") $(stat -c '%U %a' "$DATA")"
check "with fsync off" "off" "$(as_user psql -X -At -h "$RUN_DIR" -p 5432 -U ddb -d ddb -c 'SHOW fsync' 2>&1)"
check "and nothing of it listens on TCP but the gateway" "" \
    "$(as_user psql -X -At -h "$RUN_DIR" -p 5432 -U ddb -d ddb -c 'SHOW listen_addresses' 2>&1)"
check "another user cannot reach its database" "no" \
    "$(runuser -u nobody -- psql -X -At -h "$RUN_DIR" -p 5432 -U ddb -d ddb -c 'SELECT 1' >/dev/null 2>&1 && echo yes || echo no)"
# the AWS CLI line it printed, as printed
cli_line=$(sed -n 's/^  AWS CLI: //p' "$WORK/memory.out")
check "the AWS CLI line it prints works as printed (the models' tables are there: docs/models/)" "UserServiceTable" \
    "$(eval "AWS_PAGER= $cli_line --output text" 2>&1 | grep -o UserServiceTable)"
aws_local AKIAFIRSTKEY create-table --table-name Music --attribute-definitions AttributeName=Artist,AttributeType=S \
    AttributeName=Song,AttributeType=S --key-schema AttributeName=Artist,KeyType=HASH AttributeName=Song,KeyType=RANGE \
    --billing-mode PAY_PER_REQUEST >/dev/null
aws_local AKIAFIRSTKEY put-item --table-name Music --item '{"Artist": {"S": "Nina"}, "Song": {"S": "Sinnerman"}, "Year": {"N": "1965"}}' >/dev/null
check "the AWS CLI: CreateTable, PutItem, then Query with another key sees the item" "1965" \
    "$(aws_local ANOTHERKEY query --table-name Music --key-condition-expression 'Artist = :a' \
        --expression-attribute-values '{":a": {"S": "Nina"}}' --query 'Items[0].Year.N')"
# an SDK: boto3, with credentials of its own
check "an SDK (boto3): put, get and a conditional write refused as DynamoDB refuses it" "Feeling Good|ConditionalCheckFailedException" \
    "$(/usr/bin/python3 - "$PORT" <<'PY' 2>&1
import sys, boto3
from botocore.exceptions import ClientError
db = boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{sys.argv[1]}", region_name="ap-south-1",
                  aws_access_key_id="sdk", aws_secret_access_key="sdk")
db.put_item(TableName="Music", Item={"Artist": {"S": "Nina"}, "Song": {"S": "Feeling Good"}})
song = db.get_item(TableName="Music", Key={"Artist": {"S": "Nina"}, "Song": {"S": "Feeling Good"}})["Item"]["Song"]["S"]
try:
    db.put_item(TableName="Music", Item={"Artist": {"S": "Nina"}, "Song": {"S": "Feeling Good"}},
                ConditionExpression="attribute_not_exists(Artist)")
    print(song + "|written")
except ClientError as e:
    print(song + "|" + e.response["Error"]["Code"])
PY
)"
# (the cache's cluster is made in the background of a first run)
wait_for 30 "ls -d '$WORK'/cache/ddb-local/cluster-* >/dev/null 2>&1"
stop_local INT
check "SIGINT stops it: exit 0" "0" "$?"
check "and it leaves no process and no directory" "" "$(leftovers "$RUN_DIR")"
check "its first run left a made cluster in the user's cache, for the next runs to copy" "1" \
    "$(find "$WORK/cache/ddb-local" -mindepth 1 -maxdepth 1 -name 'cluster-*' | wc -l)"

# --- a second run copies the cache's cluster: nothing of the first run's is in it
start_local second --in-memory --port "$PORT"
check "a second run starts" "0" "$?"
check "from a clean cluster: the first run's table is not there" "ResourceNotFoundException" \
    "$(aws_local key describe-table --table-name Music | grep -o ResourceNotFoundException)"
RUN_DIR=$(dirname "$(sed -n 's/^  cluster: \(.*\) (in memory, removed at the end)$/\1/p' "$WORK/second.out")")
# docs/local.md's examples, in its order: ```sh local (bash) and ```python local blocks
awk -v dir="$WORK" '/^```(sh|python) local$/ { n++; file = sprintf("%s/docs-%d.%s", dir, n, $1 == "```sh" ? "sh" : "py"); inblock = 1; next }
    /^```/ && inblock { inblock = 0; close(file); next }
    inblock { print > file }' "$ROOT/docs/local.md"
docs_out=
for block in "$WORK"/docs-*; do
    case $block in *.sh) runner=bash ;; *.py) runner=/usr/bin/python3 ;; esac
    docs_out+="$(ENDPOINT="http://127.0.0.1:$PORT" AWS_PAGER= "$runner" "$block" 2>&1)|"
done
check "docs/local.md's examples: the AWS CLI creates a table ACTIVE at once and puts an item, boto3 reads it" \
    "ACTIVE|1965|" "$docs_out"
check "ImportTable, which reads the server's files, is off (no ddb.export_root)" "1" \
    "$(aws_local key import-table --s3-bucket-source S3Bucket=bucket1 --input-format DYNAMODB_JSON \
        --table-creation-parameters 'TableName=Imported,AttributeDefinitions=[{AttributeName=pk,AttributeType=S}],KeySchema=[{AttributeName=pk,KeyType=HASH}],BillingMode=PAY_PER_REQUEST' |
        grep -c 'Exports and imports are off on this server')"
stop_local TERM
check "SIGTERM stops it: exit 0, nothing left" "0" "$?$(leftovers "$RUN_DIR")"

# --- a port in use: said, and nothing left
/usr/bin/python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(30)' "$PORT" &
holder=$!
wait_for 5 "ss -ltn | grep -q ':$PORT '"
as_user env XDG_CACHE_HOME="$WORK/cache" "$LOCAL" --in-memory --port "$PORT" >"$WORK/busy.out" 2>"$WORK/busy.err"
busy=$?
kill "$holder"; wait "$holder" 2>/dev/null
check "a port in use: exit 1, the gateway's reason shown" "1 yes" "$busy $(grep -q 'ddb-gateway did not start on 127.0.0.1:' "$WORK/busy.err" && echo yes)"
check "and nothing left" "" "$(leftovers /nonexistent)$(find /dev/shm -maxdepth 1 -user "$USER_NAME" -name 'ddb-local.*')"

# --- --dir: kept between runs, with fsync on
start_local kept1 --dir "$WORK/kept" --port "$PORT"
check "--dir makes a cluster there" "0 yes" "$? $([ -f "$WORK/kept/PG_VERSION" ] && echo yes)"
aws_local k create-table --table-name Kept --attribute-definitions AttributeName=id,AttributeType=S \
    --key-schema AttributeName=id,KeyType=HASH --billing-mode PAY_PER_REQUEST >/dev/null
aws_local k put-item --table-name Kept --item '{"id": {"S": "still here"}}' >/dev/null
RUN_DIR=$(sed -n 's/^  SQL: psql "host=\([^ ]*\) .*/\1/p' "$WORK/kept1.out")
check "with fsync on" "on" "$(as_user psql -X -At -h "$RUN_DIR" -p 5432 -U ddb -d ddb -c 'SHOW fsync' 2>&1)"
stop_local TERM
check "stopped, its directory kept" "0 yes" "$? $([ -f "$WORK/kept/PG_VERSION" ] && echo yes)"
start_local kept2 --dir "$WORK/kept" --port "$PORT"
check "the next run with --dir finds the items" "still here" \
    "$(aws_local k get-item --table-name Kept --key '{"id": {"S": "still here"}}' --query Item.id.S)"
stop_local TERM
as_user "$LOCAL" --dir "$WORK" --port "$PORT" >/dev/null 2>"$WORK/notempty.err"
check "a --dir that is neither empty nor a cluster is refused" "1" "$(grep -c 'is neither empty nor a cluster' "$WORK/notempty.err")"
as_user "$LOCAL" --dir /root/ddb-local-test/kept --port "$PORT" >/dev/null 2>"$WORK/nodir.err"
check "a --dir it cannot make: exit 1, said, and no directory of the run left" "1 ddb-local: cannot make --dir /root/ddb-local-test/kept|0" \
    "$? $(tail -1 "$WORK/nodir.err")|$(find /tmp /dev/shm -maxdepth 1 -user "$USER_NAME" -name 'ddb-local.*' | wc -l)"

# --- beyond loopback: served, and said to be open
start_local open --in-memory --host 0.0.0.0 --port "$PORT" --cors '*'
check "--host 0.0.0.0 serves, warning that anyone who reaches it may change every table" "0 1" \
    "$? $(grep -c 'anyone who reaches port' "$WORK/open.err")"
check "and --cors * is taken there (development mode)" "*" \
    "$(curl -s -D - -o /dev/null -X OPTIONS -H 'Origin: http://app.test:3000' -H 'Access-Control-Request-Method: POST' \
        "http://127.0.0.1:$PORT/" | tr -d '\r' | sed -n 's/^[Aa]ccess-[Cc]ontrol-[Aa]llow-[Oo]rigin: //p')"
stop_local TERM
done_testing
