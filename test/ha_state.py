"""test/ha_state.py — the client side of test/ha_state.sh: what a formation
(tools/ha.sh) keeps across a failover, seen through ddb-gateway with boto3.

    python3 ha_state.py ENDPOINT KEY_ID SECRET WORK COMMAND [ARGS...]

COMMAND is one of the suite's steps (setup, writer, before, revoked, jobs,
after); each prints "<check> ... ok" or "<check> ... FAILED (why)" lines
(test/lib.sh's checks_from) and other lines as diagnostics, and keeps what
a later step needs in WORK/state.json.
"""
import json
import os
import sys
import time

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

ENDPOINT, KEY_ID, SECRET, WORK, COMMAND = sys.argv[1:6]
ARGS = sys.argv[6:]
STATE = os.path.join(WORK, "state.json")
STREAM_TABLE, OTHER_STREAM_TABLE = "ha_stream", "ha_stream_keys"
TTL_TABLE, THROTTLED_TABLE, BIG_TABLE, GSI_TABLE = "ha_ttl", "ha_throttled", "ha_big", "ha_gsi"
RESTORED_TABLE, RESTORED_AFTER_TABLE = "ha_restored", "ha_restored_after"
EXPORTED_TABLE, BUCKET = "ha_export", "ha-exports"
# 200 KB: two such writes spend a fresh bucket of 1 WCU (300 units kept) below zero
BIG_VALUE = "x" * (200 * 1024 - 64)


def client(service="dynamodb", key_id=KEY_ID, secret=SECRET, attempts=5):
    """A client of the gateway; attempts > 1 retries 5xx and throttling as the SDK does."""
    return boto3.client(service, endpoint_url=ENDPOINT, region_name="us-east-1",
                        aws_access_key_id=key_id, aws_secret_access_key=secret,
                        config=Config(retries={"mode": "standard", "total_max_attempts": attempts},
                                      connect_timeout=2, read_timeout=30))


def check(name, passed, why=""):
    """A check line for checks_from."""
    print("%s ... %s" % (name, "ok" if passed else "FAILED (%s)" % why), flush=True)


def error_code(call):
    """The error code a call answers, or "ok"."""
    try:
        call()
        return "ok"
    except ClientError as e:
        return e.response["Error"]["Code"]


def load():
    with open(STATE) as f:
        return json.load(f)


def save(state):
    with open(STATE, "w") as f:
        json.dump(state, f)


def key_schema(name, view_type=None, provisioned=False):
    """CreateTable's arguments for a table keyed by id (a string)."""
    table = {"TableName": name, "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
             "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}
    if provisioned:
        table["ProvisionedThroughput"] = {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}
    else:
        table["BillingMode"] = "PAY_PER_REQUEST"
    if view_type:
        table["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": view_type}
    return table


def setup():
    """The tables the writes go to (ha_big and ha_gsi are loaded with psql) and a backup of ha_big."""
    ddb = client()
    ddb.create_table(**key_schema(STREAM_TABLE, "NEW_AND_OLD_IMAGES"))
    ddb.create_table(**key_schema(OTHER_STREAM_TABLE, "KEYS_ONLY"))
    ddb.create_table(**key_schema(TTL_TABLE))
    ddb.update_time_to_live(TableName=TTL_TABLE, TimeToLiveSpecification={"AttributeName": "exp", "Enabled": True})
    ddb.create_table(**key_schema(THROTTLED_TABLE, provisioned=True))
    ddb.create_table(**key_schema(EXPORTED_TABLE))
    ddb.update_continuous_backups(TableName=EXPORTED_TABLE,
                                  PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    for i in range(50):
        ddb.put_item(TableName=EXPORTED_TABLE, Item={"id": {"S": "e%02d" % i}})
    backup = ddb.create_backup(TableName=BIG_TABLE, BackupName="ha-big")["BackupDetails"]
    check("setup: the tables, and a backup of %s" % BIG_TABLE, backup["BackupStatus"] == "AVAILABLE", backup)
    save({"backup": backup["BackupArn"]})


def writer(seconds):
    """PutItem of a new key, then UpdateItem of it when the put was acknowledged, no retries, until WORK/stop
    exists (SECONDS at most); a line per request: time, key, version, ok or the error."""
    ddb = client(attempts=1)
    end, i = time.time() + seconds, 0
    while time.time() < end and not os.path.exists(os.path.join(WORK, "stop")):
        i += 1
        key = "s%06d" % i
        for version in (1, 2):
            started = time.time()
            try:
                if version == 1:
                    ddb.put_item(TableName=STREAM_TABLE, Item={"id": {"S": key}, "v": {"N": "1"}})
                else:
                    ddb.update_item(TableName=STREAM_TABLE, Key={"id": {"S": key}},
                                    UpdateExpression="SET v = :v", ExpressionAttributeValues={":v": {"N": "2"}})
                answer = "ok"
            except ClientError as e:
                answer = "%s:%s" % (e.response["ResponseMetadata"].get("HTTPStatusCode"), e.response["Error"]["Code"])
            except BotoCoreError as e:
                answer = "transport:" + type(e).__name__
            print("%.3f %s %d %s" % (started, key, version, answer), flush=True)
            if answer != "ok":
                break
        # a steady load, not the most the machine can take: the test command runs other suites beside
        time.sleep(0.05)


def stream_arn(ddb, table):
    return ddb.describe_table(TableName=table)["Table"]["LatestStreamArn"]


def throttled_puts(ddb, limit=6):
    """200 KB PutItems to the PROVISIONED table (no retries) until one is refused: how many passed, and the refusal."""
    for passed in range(limit):
        code = error_code(lambda: ddb.put_item(TableName=THROTTLED_TABLE,
                                               Item={"id": {"S": "big%d" % passed}, "data": {"S": BIG_VALUE}}))
        if code != "ok":
            return passed, code
    return limit, "ok"


def scan_ids(ddb, table):
    return sorted(item["id"]["S"] for item in ddb.scan(TableName=table, ConsistentRead=True)["Items"])


def before():
    """Paging tokens of the streams' API, TTL items, the throttled table spent, a second key used: before the kill."""
    state = load()
    ddb, streams = client(), client("dynamodbstreams")
    arn = stream_arn(ddb, STREAM_TABLE)
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    page = streams.get_records(ShardIterator=iterator, Limit=3)
    listing = streams.list_streams(Limit=1)
    after_shard = streams.describe_stream(StreamArn=arn, ExclusiveStartShardId=shard)["StreamDescription"]
    check("before: GetRecords pages from TRIM_HORIZON (3 records), ListStreams pages (Limit 1)",
          len(page["Records"]) == 3 and "NextShardIterator" in page and "LastEvaluatedStreamArn" in listing,
          (len(page["Records"]), sorted(listing)))
    state.update(stream_arn=arn, shard=shard, iterator=iterator, next_iterator=page["NextShardIterator"],
                 first_page=[r["dynamodb"]["SequenceNumber"] for r in page["Records"]],
                 listing=listing["Streams"], listing_next=listing["LastEvaluatedStreamArn"],
                 after_shard_shards=after_shard["Shards"])

    now = int(time.time())
    expiries = {"expired": now - 60, "soon": now + 6, "later": now + 3600}
    for key, exp in expiries.items():
        ddb.put_item(TableName=TTL_TABLE, Item={"id": {"S": key}, "exp": {"N": str(exp)}})
    ddb.put_item(TableName=TTL_TABLE, Item={"id": {"S": "never"}})
    visible = scan_ids(ddb, TTL_TABLE)
    check("before: TTL: the item expired is not read, the others are", visible == ["later", "never", "soon"], visible)
    state["soon_expires"] = expiries["soon"]

    passed, refusal = throttled_puts(client(attempts=1))
    check("before: the PROVISIONED table (1 WCU) takes two writes of 200 units, then throttles",
          (passed, refusal) == (2, "ProvisionedThroughputExceededException"), (passed, refusal))
    save(state)


def revoked(key_id, secret, expected):
    """A request with a key: ok or its error code."""
    code = error_code(lambda: client(key_id=key_id, secret=secret, attempts=1).list_tables())
    check("the key %s answers %s" % (key_id, expected), code == expected, code)


def jobs():
    """A restore of ha_big (a background job), started just before the kill."""
    state = load()
    restored = client().restore_table_from_backup(TargetTableName=RESTORED_TABLE, BackupArn=state["backup"])
    check("jobs: RestoreTableFromBackup answers CREATING",
          restored["TableDescription"]["TableStatus"] == "CREATING", restored["TableDescription"]["TableStatus"])


def start_export(prefix):
    """ExportTableToPointInTime of ha_export to the bucket, under a prefix: its ARN, and a check that it is IN_PROGRESS."""
    ddb = client()
    export = ddb.export_table_to_point_in_time(TableArn=ddb.describe_table(TableName=EXPORTED_TABLE)["Table"]["TableArn"],
                                               S3Bucket=BUCKET, S3Prefix=prefix)["ExportDescription"]
    check("jobs: ExportTableToPointInTime answers IN_PROGRESS", export["ExportStatus"] == "IN_PROGRESS", export["ExportStatus"])
    return export["ExportArn"]


def export():
    """An export, started just before the kill."""
    state = load()
    state["export"] = start_export("before")
    save(state)


def export_status(ddb, arn, bound):
    """An export's description once it is not IN_PROGRESS any more, within bound seconds."""
    deadline = time.time() + bound
    while True:
        description = ddb.describe_export(ExportArn=arn)["ExportDescription"]
        if description["ExportStatus"] != "IN_PROGRESS" or time.time() > deadline:
            return description
        time.sleep(0.5)


def add_index():
    """UpdateTable adding an index to ha_gsi (its backfill runs in the request), no retries: prints the answer."""
    print(error_code(lambda: client(attempts=1).update_table(
        TableName=GSI_TABLE, AttributeDefinitions=[{"AttributeName": "n", "AttributeType": "N"}],
        GlobalSecondaryIndexUpdates=[{"Create": {"IndexName": "ByN", "KeySchema": [{"AttributeName": "n", "KeyType": "HASH"}],
                                                 "Projection": {"ProjectionType": "KEYS_ONLY"}}}])))


def settled_status(ddb, table, bound):
    """A table's status once it is not CREATING (or UPDATING) any more, within bound seconds; "gone" when there is no such table."""
    deadline = time.time() + bound
    while True:
        try:
            status = ddb.describe_table(TableName=table)["Table"]["TableStatus"]
        except ClientError as e:
            if e.response["Error"]["Code"] != "ResourceNotFoundException":
                raise
            return "gone"
        if status not in ("CREATING", "UPDATING", "DELETING") or time.time() > deadline:
            return status
        time.sleep(0.5)


def acknowledged(writes_log):
    """The writer's acknowledged and failed (key, version) pairs, with the times of the acknowledged ones."""
    acked, failed = {}, set()
    with open(writes_log) as f:
        for line in f:
            fields = line.split()
            if len(fields) != 4 or not fields[0].replace(".", "").isdigit():
                continue
            if fields[3] == "ok":
                acked[(fields[1], int(fields[2]))] = float(fields[0])
            else:
                failed.add((fields[1], int(fields[2])))
    return acked, failed


def all_records(streams, iterator, pages=1000):
    """GetRecords from an iterator to the end (the first empty page)."""
    records = []
    for _ in range(pages):
        page = streams.get_records(ShardIterator=iterator, Limit=1000)
        records += page["Records"]
        if not page["Records"]:
            break
        iterator = page["NextShardIterator"]
    return records


def after_streams(state, killed):
    ddb, streams = client(), client("dynamodbstreams")
    arn = stream_arn(ddb, STREAM_TABLE)
    fresh = streams.get_shard_iterator(StreamArn=arn, ShardId=state["shard"], ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    records = all_records(streams, fresh)
    seen = {}
    for r in records:
        key = r["dynamodb"]["Keys"]["id"]["S"]
        version = int(r["dynamodb"]["NewImage"]["v"]["N"])
        seen.setdefault((key, version), []).append(r)
    acked, failed = acknowledged(os.path.join(WORK, "writes.log"))
    phases = [sum(1 for t in acked.values() if (t < killed) == before_kill) for before_kill in (True, False)]
    print("%d writes acknowledged (%d before the kill, %d after it), %d failed; %d stream records"
          % (len(acked), phases[0], phases[1], len(failed), len(records)))
    missing = sorted(k for k in acked if k not in seen)
    check("streams: a record for every acknowledged write, before and after the failover (%d)" % len(acked),
          not missing and phases[0] > 0 and phases[1] > 0, "missing %s" % missing[:5])
    duplicated = sorted(k for k, rs in seen.items() if len(rs) > 1)
    check("streams: no write recorded twice", not duplicated, duplicated[:5])
    unexpected = sorted(k for k in seen if k not in acked and k not in failed)
    check("streams: no record of a write never sent", not unexpected, unexpected[:5])
    shapes = sorted(set((r["eventName"], int(r["dynamodb"]["NewImage"]["v"]["N"]),
                         r["dynamodb"].get("OldImage", {}).get("v", {}).get("N")) for r in records))
    check("streams: INSERT with the new image, MODIFY with both", shapes == [("INSERT", 1, None), ("MODIFY", 2, "1")], shapes)
    numbers = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    check("streams: sequence numbers increase along the shard (%d records)" % len(numbers),
          all(a < b for a, b in zip(numbers, numbers[1:])), numbers[:3])
    print("%d records of writes answered with an error (committed before the connection was lost)"
          % sum(1 for k in seen if k in failed))

    first = streams.get_records(ShardIterator=state["iterator"], Limit=3)["Records"]
    check("streams: a shard iterator issued before the failover reads the same records after it",
          [r["dynamodb"]["SequenceNumber"] for r in first] == state["first_page"], first[:1])
    rest = all_records(streams, state["next_iterator"])
    check("streams: its NextShardIterator, issued before the failover, reads on to the end",
          [r["dynamodb"]["SequenceNumber"] for r in rest] == [r["dynamodb"]["SequenceNumber"] for r in records[3:]],
          (len(rest), len(records) - 3))
    listing = streams.list_streams(Limit=1, ExclusiveStartStreamArn=state["listing_next"])
    everything = streams.list_streams()["Streams"]
    check("streams: ListStreams' LastEvaluatedStreamArn from before the failover pages on after it",
          state["listing"] + listing["Streams"] == everything[:2] and len(everything) == 2, (listing, everything))
    described = streams.describe_stream(StreamArn=arn, ExclusiveStartShardId=state["shard"])["StreamDescription"]
    check("streams: DescribeStream's ExclusiveStartShardId from before the failover, the same answer after it",
          described["Shards"] == state["after_shard_shards"] and described["StreamStatus"] == "ENABLED", described)


def after_jobs():
    state = load()
    ddb = client()
    status = settled_status(ddb, RESTORED_TABLE, 30)
    check("jobs: the restore running at the kill ended (its table gone, not CREATING) within 30 s",
          status == "gone", status)
    description = ddb.describe_table(TableName=GSI_TABLE)["Table"]
    indexes = {i["IndexName"]: i["IndexStatus"] for i in description.get("GlobalSecondaryIndexes", [])}
    check("jobs: the table whose index was being added is ACTIVE, its indexes too (%s)" % (indexes or "none"),
          description["TableStatus"] == "ACTIVE" and set(indexes.values()) <= {"ACTIVE"}, (description["TableStatus"], indexes))
    started = time.time()
    ddb.restore_table_from_backup(TargetTableName=RESTORED_AFTER_TABLE, BackupArn=state["backup"])
    status = settled_status(ddb, RESTORED_AFTER_TABLE, 60)
    check("jobs: a restore started after the failover runs on the new primary: ACTIVE within 60 s", status == "ACTIVE", status)
    print("the restore after the failover took %.1f s" % (time.time() - started))
    described = export_status(ddb, state["export"], 30)
    check("jobs: the export running at the kill ends FAILED with the reason within 30 s (DescribeExport)",
          described["ExportStatus"] == "FAILED" and "background worker" in described.get("FailureMessage", ""),
          described)
    print("its FailureCode %s, FailureMessage: %s" % (described.get("FailureCode"), described.get("FailureMessage")))
    described = export_status(ddb, start_export("after"), 60)
    check("jobs: an export started after the failover runs on the new primary: COMPLETED within 60 s, 50 items",
          (described["ExportStatus"], described.get("ItemCount")) == ("COMPLETED", 50), described)
    statuses = {}
    for name in ddb.list_tables()["TableNames"]:
        statuses[name] = ddb.describe_table(TableName=name)["Table"]["TableStatus"]
    check("jobs: no table CREATING or UPDATING (%d tables)" % len(statuses),
          set(statuses.values()) == {"ACTIVE"} and RESTORED_TABLE not in statuses, statuses)


def after_ttl_and_throttling():
    state = load()
    ddb = client()
    visible = scan_ids(ddb, TTL_TABLE)
    check("ttl: after the failover the items expired before it and during it are not read",
          time.time() > state["soon_expires"] and visible == ["later", "never"], visible)
    passed, refusal = throttled_puts(client(attempts=1))
    check("throttling: on the new primary the table's bucket starts full (two writes of 200 units), then throttles",
          (passed, refusal) == (2, "ProvisionedThroughputExceededException"), (passed, refusal))


def after(killed):
    after_streams(load(), killed)
    after_jobs()
    after_ttl_and_throttling()


COMMANDS = {
    "setup": setup,
    "writer": lambda: writer(float(ARGS[0])),
    "before": before,
    "revoked": lambda: revoked(*ARGS),
    "jobs": jobs,
    "export": export,
    "add_index": add_index,
    "after": lambda: after(float(ARGS[0])),
}
COMMANDS[COMMAND]()
