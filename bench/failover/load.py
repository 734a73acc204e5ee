"""bench/failover/load.py: one load client of bench/failover.sh.

    load.py setup ENDPOINT KEY_ID SECRET TABLE COUNTERS
    load.py run ENDPOINT KEY_ID SECRET TABLE COUNTERS WORKER RATE STOP_FILE

setup creates the table and its counters c0, c1, ... at version 0.  run
does, RATE times a second until STOP_FILE exists, a read-modify-write of a
counter picked at random: a strongly consistent GetItem of its version v,
then an UpdateItem conditional on it (version = v) to v + 1, which appends
the write's id (WORKER-SEQ) to the counter's history h, so that the history
check (check.py) knows which write made each version.  No SDK retries: each
request's answer is logged, one line a request:

    SENT ANSWERED WORKER get|update KEY VERSION WRITER ANSWER

where VERSION and WRITER are what a get read or an update wrote ("-" when
none) and ANSWER is ok, HTTP status and error code, or "transport" and the
botocore exception.  A missed turn (a request that took longer than 1/RATE)
is skipped, not caught up: the rate stays steady.
"""
import os
import random
import sys
import time

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError


def make_client(endpoint, key_id, secret):
    """A DynamoDB client of the gateway that tries each request once."""
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id=key_id, aws_secret_access_key=secret,
                        config=Config(retries={"mode": "standard", "total_max_attempts": 1},
                                      connect_timeout=5, read_timeout=60,
                                      max_pool_connections=1))


def answer_of(call, **args):
    """The call's answer ("ok", "STATUS Code" or "transport Exception") and its response."""
    try:
        return "ok", call(**args)
    except ClientError as e:
        meta = e.response.get("ResponseMetadata", {})
        return "%s %s" % (meta.get("HTTPStatusCode"), e.response["Error"]["Code"]), None
    except BotoCoreError as e:
        return "transport " + type(e).__name__, None


def setup(client, table, counters):
    """Creates the table and the counters, each at version 0 with an empty history."""
    client.create_table(TableName=table, KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                        BillingMode="PAY_PER_REQUEST")
    client.get_waiter("table_exists").wait(TableName=table, WaiterConfig={"Delay": 1})
    for i in range(counters):
        client.put_item(TableName=table, Item={"k": {"S": "c%d" % i}, "v": {"N": "0"},
                                               "w": {"S": "-"}, "h": {"L": []}})


def get(client, table, key):
    """A strongly consistent read of a counter: its answer, version and writer."""
    answer, response = answer_of(client.get_item, TableName=table, Key={"k": {"S": key}},
                                 ConsistentRead=True, ProjectionExpression="v, w")
    if response is None:
        return answer, "-", "-"
    item = response.get("Item")
    if item is None:
        return "missing", "-", "-"
    return answer, item["v"]["N"], item["w"]["S"]


def update(client, table, key, version, writer):
    """Version to version + 1, conditional on the version, the writer appended to the history."""
    answer, _ = answer_of(
        client.update_item, TableName=table, Key={"k": {"S": key}},
        UpdateExpression="SET v = :next, w = :w, h = list_append(h, :wl)",
        ConditionExpression="v = :v",
        ExpressionAttributeValues={":v": {"N": str(version)}, ":next": {"N": str(version + 1)},
                                   ":w": {"S": writer}, ":wl": {"L": [{"S": writer}]}})
    return answer


def run(client, table, counters, worker, rate, stop_file, log):
    """Read-modify-writes at the rate until the stop file exists, a log line per request."""
    period, turn, seq = 1.0 / rate, time.time(), 0
    while not os.path.exists(stop_file):
        pause = turn - time.time()
        if pause > 0:
            time.sleep(pause)
        turn = max(turn + period, time.time())
        key = "c%d" % random.randrange(counters)
        sent = time.time()
        answer, version, writer = get(client, table, key)
        log.write("%.3f %.3f %s get %s %s %s %s\n" % (sent, time.time(), worker, key, version, writer, answer))
        if answer != "ok":
            continue
        seq += 1
        writer = "%s-%d" % (worker, seq)
        sent = time.time()
        answer = update(client, table, key, int(version), writer)
        log.write("%.3f %.3f %s update %s %d %s %s\n" % (sent, time.time(), worker, key, int(version) + 1,
                                                         writer, answer))
        log.flush()


def main(argv):
    command, endpoint, key_id, secret, table, counters = argv[1:7]
    client = make_client(endpoint, key_id, secret)
    if command == "setup":
        setup(client, table, int(counters))
    else:
        worker, rate, stop_file = argv[7:10]
        run(client, table, int(counters), worker, float(rate), stop_file, sys.stdout)


if __name__ == "__main__":
    main(sys.argv)
