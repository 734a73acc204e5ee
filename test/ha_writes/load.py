# test/ha_writes/load.py — the clients of test/ha_writes.sh: boto3 through
# ddb-gateway with the SDK's retries off, so that each answer is seen; a
# line per request on stdout: "<start> <end> <kind> <key> <answer>", the
# times in epoch seconds, the answer "ok" or "<HTTP status> <error code>"
# (or "transport <exception>" when no answer came).  run prints "ready"
# once its clients send, and they send until STOP_FILE exists.
#
#   load.py ENDPOINT KEY_ID SECRET setup
#   load.py ENDPOINT KEY_ID SECRET run LOG_DIR STOP_FILE
#   load.py ENDPOINT KEY_ID SECRET after LOG_DIR
# run: the clients, each in a thread of its own with its log in LOG_DIR
# (put, update, delete, batch, transact, counter1..3 .log); after: each
# acknowledged transaction of transact.log sent again (replay.log), and a
# restore (restore.log).
import os
import sys
import threading
import time
import traceback

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

WRITES = "ha_writes"        # PutItem, UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems; its PITR history
COUNTER = "ha_counter"      # the conditional counter
RESTORED = "ha_writes_restored"
DELETABLE = 3000            # items d000001... made by setup for the deleting client
UPDATED_KEYS = 5            # the updating client's items, u0...

endpoint, key_id, secret, mode = sys.argv[1:5]
args = sys.argv[5:]
# the thread's boto3 client (here.client) and log (here.out)
here = threading.local()


def new_client():
    """A boto3 client of the gateway, without retries."""
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id=key_id, aws_secret_access_key=secret,
                        config=Config(retries={"mode": "standard", "total_max_attempts": 1},
                                      connect_timeout=2, read_timeout=15))


def call(operation, **request):
    """Sends one request: (answer, response), the answer "ok" or the error's status and code."""
    try:
        return "ok", getattr(here.client, operation)(**request)
    except ClientError as e:
        return "%s %s" % (e.response["ResponseMetadata"].get("HTTPStatusCode"), e.response["Error"]["Code"]), None
    except BotoCoreError as e:
        return "transport " + type(e).__name__, None


def logged(kind, key, operation, **request):
    """call, with its line in the log; returns the answer and the response."""
    started = time.time()
    answer, response = call(operation, **request)
    print("%.3f %.3f %s %s %s" % (started, time.time(), kind, key, answer), file=here.out, flush=True)
    return answer, response


def setup():
    """The two tables, their point-in-time recovery on, the items to delete and the counter at version 0."""
    for table in (WRITES, COUNTER):
        here.client.create_table(TableName=table, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                            BillingMode="PAY_PER_REQUEST")
        here.client.get_waiter("table_exists").wait(TableName=table, WaiterConfig={"Delay": 1})
    for first in range(1, DELETABLE + 1, 25):
        here.client.batch_write_item(RequestItems={WRITES: [
            {"PutRequest": {"Item": {"id": {"S": "d%06d" % i}, "v": {"N": "0"}}}} for i in range(first, first + 25)]})
    here.client.put_item(TableName=COUNTER, Item={"id": {"S": "c"}, "version": {"N": "0"}})
    for table in (WRITES, COUNTER):
        here.client.update_continuous_backups(TableName=table,
                                         PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    print("ready", flush=True)


def transaction(i, token, value):
    """TransactWriteItems number i: two Puts (v = value) and an ADD n :1 on an item of its own, under a token."""
    return dict(ClientRequestToken=token, TransactItems=[
        {"Put": {"TableName": WRITES, "Item": {"id": {"S": "t%06d_a" % i}, "v": {"N": str(value)}}}},
        {"Put": {"TableName": WRITES, "Item": {"id": {"S": "t%06d_b" % i}, "v": {"N": str(value)}}}},
        {"Update": {"TableName": WRITES, "Key": {"id": {"S": "t%06d_n" % i}}, "UpdateExpression": "ADD n :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}}])


def write(kind, i):
    """Request number i of a writing client (each kind its own keys)."""
    if kind == "put":
        logged(kind, "p%06d" % i, "put_item", TableName=WRITES, Item={"id": {"S": "p%06d" % i}, "v": {"N": str(i)}})
    elif kind == "update":
        key = "u%d" % (i % UPDATED_KEYS)
        logged(kind, "%s=%d" % (key, i), "update_item", TableName=WRITES, Key={"id": {"S": key}},
               UpdateExpression="SET v = :i ADD n :one",
               ExpressionAttributeValues={":i": {"N": str(i)}, ":one": {"N": "1"}})
    elif kind == "delete":
        logged(kind, "d%06d" % i, "delete_item", TableName=WRITES, Key={"id": {"S": "d%06d" % i}})
    elif kind == "batch":
        started = time.time()
        answer, response = call("batch_write_item", RequestItems={WRITES: [
            {"PutRequest": {"Item": {"id": {"S": "b%06d_%d" % (i, j)}, "v": {"N": str(i)}}}} for j in range(5)]})
        # a batch with unprocessed items is not acknowledged whole
        if answer == "ok" and response.get("UnprocessedItems"):
            answer = "unprocessed"
        print("%.3f %.3f %s b%06d %s" % (started, time.time(), kind, i, answer), file=here.out, flush=True)
    elif kind == "transact":
        # a request whose answer is lost or 503 is sent again with its token until it is answered otherwise
        token = "tx-%06d" % i
        while logged(kind, token, "transact_write_items", **transaction(i, token, i))[0].split()[0] in ("503", "transport"):
            time.sleep(0.2)


def writer(kind, stop_file):
    """A writing client: one request after the other until STOP_FILE exists."""
    i = 0
    while not os.path.exists(stop_file) and i < (DELETABLE if kind == "delete" else 10 ** 6):
        i += 1
        write(kind, i)
        # a steady load, not the most the machine can take: the test command runs other suites beside
        time.sleep(0.05)


def counter(name, stop_file):
    """A conditional client: reads the counter (strongly consistent), then sets version = read + 1 if it is still
    read; until STOP_FILE exists."""
    while not os.path.exists(stop_file):
        time.sleep(0.02)
        started = time.time()
        answer, response = call("get_item", TableName=COUNTER, Key={"id": {"S": "c"}}, ConsistentRead=True)
        seen = int(response["Item"]["version"]["N"]) if answer == "ok" else None
        # the read's key: the client and the version it saw
        print("%.3f %.3f read %s=%s %s" % (started, time.time(), name, seen, answer), file=here.out, flush=True)
        if answer != "ok":
            time.sleep(0.05)
            continue
        logged("counter", "%s=%d" % (name, seen + 1), "update_item", TableName=COUNTER, Key={"id": {"S": "c"}},
               UpdateExpression="SET version = :next, client = :me", ConditionExpression="version = :seen",
               ExpressionAttributeValues={":next": {"N": str(seen + 1)}, ":seen": {"N": str(seen)},
                                          ":me": {"S": name}})


def replay(token_log):
    """Sends each acknowledged transaction of the log again with its token and parameters; then the
    first one's token with other parameters."""
    acknowledged = [line.split()[3] for line in open(token_log) if line.split()[4:] == ["ok"]]
    for token in acknowledged:
        i = int(token[3:])
        logged("replay", token, "transact_write_items", **transaction(i, token, i))
    first = acknowledged[0]
    logged("mismatch", first, "transact_write_items", **transaction(int(first[3:]), first, -1))


def restore():
    """RestoreTableToPointInTime of the written table, to its latest restorable time."""
    logged("restore", RESTORED, "restore_table_to_point_in_time", SourceTableName=WRITES,
           TargetTableName=RESTORED, UseLatestRestorableTime=True)


def start(log, work, *args):
    """A client in a thread of its own, with its boto3 client (made here: making one is not thread-safe) and
    its log; a failure's traceback goes to its log, and FAILED gets its name."""
    made, out = new_client(), open(log, "w", buffering=1)

    def run():
        here.client, here.out = made, out
        try:
            work(*args)
        except Exception:
            traceback.print_exc(file=out)
            FAILED.append(log)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


FAILED = []
if mode == "setup":
    here.client, here.out = new_client(), sys.stdout
    setup()
elif mode == "run":
    log_dir, stop_file = args
    threads = [start("%s/%s.log" % (log_dir, kind), writer, kind, stop_file)
               for kind in ("put", "update", "delete", "batch", "transact")]
    threads += [start("%s/counter%d.log" % (log_dir, n), counter, "c%d" % n, stop_file) for n in (1, 2, 3)]
    print("ready", flush=True)
    for thread in threads:
        thread.join()
else:
    log_dir = args[0]
    start("%s/replay.log" % log_dir, replay, "%s/transact.log" % log_dir).join()
    start("%s/restore.log" % log_dir, restore).join()
print("failed: " + " ".join(FAILED) if FAILED else "done")
sys.exit(1 if FAILED else 0)
