#!/usr/bin/env bash
# The one-command sharded deployment (tools/scale-out.sh, docs/scale-out.md):
# starts it with a port block of its own (servers DDB_SCALE_OUT_TEST_PGPORT,
# default 55550-55554; gateway DDB_SCALE_OUT_TEST_GATEWAY_PORT, default 55555)
# in build/scale-out-test/deployment, and checks through its gateway with
# boto3 (Debian's): CreateTable with a GSI and an LSI, items spread over both
# shards (counted on each shard primary directly), PutItem, GetItem,
# UpdateItem, DeleteItem, a failed condition as DynamoDB's error, Query,
# Scan paged by Limit over both shards, BatchWriteItem and BatchGetItem
# spanning them, DescribeTable's ItemCount, each standby holding its
# primary's items, and a key of a role given some tables by
# ddb_router.grant_tables refused another table, and the models' races
# (user_service's S7 from concurrent clients, optimistic updates on each
# shard); then stops it and checks that nothing of it runs.
# Needs the extension and ddb-gateway built and installed (tools/test.sh);
# prints TAP (test/lib.sh).
#
#   bash test/scale_out.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
WORK="$ROOT/build/scale-out-test"
export DDB_SCALE_OUT_DIR="$WORK/deployment" DDB_SCALE_OUT_INSTALLED=1 DDB_SCALE_OUT_SERVER_OPTS="-c fsync=off"
export DDB_SCALE_OUT_PGPORT=${DDB_SCALE_OUT_TEST_PGPORT:-55550}
export DDB_SCALE_OUT_GATEWAY_PORT=${DDB_SCALE_OUT_TEST_GATEWAY_PORT:-55555}
ROLE=ddb_scale_out_app

scale_out() { bash "$ROOT/tools/scale-out.sh" "$@"; }

# psql on the ddb database of a server of the deployment (by port)
node_psql() {  # port, psql arguments...
    local port=$1
    shift
    q -h "$SOCKET" -p "$port" -U postgres -d ddb "$@"
}

start_deployment scale-out.sh start
check "it prints the endpoint and an access key" "http://127.0.0.1:$DDB_SCALE_OUT_GATEWAY_PORT yes" \
    "$ENDPOINT $([ -n "$KEY_ID" ] && [ -n "$SECRET" ] && echo yes)"
source "$DDB_SCALE_OUT_DIR/deployment.env"   # SOCKET, BASE_PORT, GATEWAY_PORT
ROUTER=$BASE_PORT SHARD1=$((BASE_PORT + 1)) SHARD2=$((BASE_PORT + 2))
STANDBY1=$((BASE_PORT + 3)) STANDBY2=$((BASE_PORT + 4))
scale_out status >"$WORK/status.log" 2>&1
check "status: five servers and the gateway run, each standby streaming" "0 6 2" \
    "$? $(grep -c 'running' "$WORK/status.log") $(grep -c 'streaming' "$WORK/status.log")"
scale_out start >"$WORK/again.log" 2>&1
check "a second start refuses while it runs" "1 1" "$? $(grep -c 'runs in .* already' "$WORK/again.log")"
check "the gateway serves the router's database" "1" "$(grep -c 'the router of a sharded deployment' "$DDB_SCALE_OUT_DIR/gateway.log")"

# A key's role acts on every cluster: the router checks table operations (DescribeTable,
# ListTables, CreateTable) against its own catalog, each node the items it holds
# (docs/scale-out.md).  So the role exists on the three clusters (roles are per
# cluster), and ddb_router.grant_tables on the router grants on the router and every node.
for port in "$ROUTER" "$SHARD1" "$SHARD2"; do
    node_psql "$port" -c "CREATE ROLE $ROLE NOLOGIN"
done
node_psql "$ROUTER" -c "SELECT ddb_router.grant_tables('$ROLE', 'app_*')" >/dev/null
read -r APP_ID APP_SECRET <<<"$(node_psql "$ROUTER" -F ' ' -c "SELECT * FROM ddb.create_access_key('$ROLE')")"

cat >"$WORK/client.py" <<'PY'
"""The checks through the sharded deployment's gateway; shard counts read with psql."""
import collections, json, subprocess, sys, time, urllib.error, urllib.request
import boto3
from botocore.exceptions import ClientError
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

endpoint, key_id, secret, app_id, app_secret, socket = sys.argv[1:7]
shard_ports, standby_ports, router_port = sys.argv[7:9], sys.argv[9:11], sys.argv[11]
TABLE = "app_orders"
failed = False


def check(name, expected, actual):
    """Prints the check's line."""
    global failed
    if expected == actual:
        print(f"{name} ... ok")
    else:
        print(f"{name} ... FAILED (expected {expected!r}, got {actual!r})")
        failed = True
    sys.stdout.flush()


def sql(port, statement):
    """A statement's single value on a server of the deployment."""
    return subprocess.run(["psql", "-X", "-q", "-At", "-h", socket, "-p", port, "-U", "postgres", "-d", "ddb",
                           "-c", statement], check=True, capture_output=True, text=True).stdout.strip()


def shard_counts(where="true"):
    """Items of the table on each shard primary, read there directly."""
    return [int(sql(p, f"SELECT count(*) FROM ddb.scan('{TABLE}') i WHERE {where}")) for p in shard_ports]


def client(key, secret_key):
    """A boto3 DynamoDB client signing with a key."""
    return boto3.session.Session(aws_access_key_id=key, aws_secret_access_key=secret_key,
                                 region_name="us-east-1").client("dynamodb", endpoint_url=endpoint)


def raw(operation, body):
    """A request signed as the SDKs sign it, sent as is: the status and the body DynamoDB's wire carries."""
    data = json.dumps(body)
    request = AWSRequest(method="POST", url=endpoint + "/", data=data, headers={
        "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810." + operation})
    SigV4Auth(Credentials(key_id, secret), "dynamodb", "us-east-1").add_auth(request)
    try:
        with urllib.request.urlopen(urllib.request.Request(endpoint + "/", data=data.encode(),
                                                           headers=dict(request.headers), method="POST")) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def error_code(call):
    """The error code of a call that should fail, or 'no error'."""
    try:
        call()
    except ClientError as e:
        return e.response["Error"]["Code"]
    return "no error"


def order(pk, sk="o1", total=0, status="NEW"):
    return {"pk": {"S": pk}, "sk": {"S": sk}, "status": {"S": status}, "total": {"N": str(total)}}


def key(pk, sk="o1"):
    return {"pk": {"S": pk}, "sk": {"S": sk}}


db = client(key_id, secret)
described = db.create_table(
    TableName=TABLE, BillingMode="PAY_PER_REQUEST",
    AttributeDefinitions=[{"AttributeName": a, "AttributeType": t}
                          for a, t in (("pk", "S"), ("sk", "S"), ("status", "S"), ("total", "N"))],
    KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    GlobalSecondaryIndexes=[{"IndexName": "ByStatus", "Projection": {"ProjectionType": "ALL"},
                             "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"},
                                           {"AttributeName": "total", "KeyType": "RANGE"}]}],
    LocalSecondaryIndexes=[{"IndexName": "ByTotal", "Projection": {"ProjectionType": "ALL"},
                            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                          {"AttributeName": "total", "KeyType": "RANGE"}]}])["TableDescription"]
check("CreateTable with a GSI and an LSI", ["ByStatus", "ByTotal"],
      [described["GlobalSecondaryIndexes"][0]["IndexName"], described["LocalSecondaryIndexes"][0]["IndexName"]])
check("the table and its two indexes on the router and on both shards", ["1 2"] * 3,
      [sql(p, f"SELECT (SELECT count(*) FROM ddb.tables WHERE table_name = '{TABLE}') || ' ' || "
              f"(SELECT count(*) FROM ddb.indexes WHERE table_name = '{TABLE}')")
       for p in [router_port] + shard_ports])
db.create_table(TableName="private", BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])

# 40 customers' orders, one PutItem each
for i in range(40):
    db.put_item(TableName=TABLE, Item=order(f"c{i}", total=i))
counts = shard_counts()
check("PutItem: 40 items spread over both shards (each holds some, 40 in all)", [True, True, 40],
      [counts[0] > 0, counts[1] > 0, sum(counts)])
check("the router's own table holds none", "0", sql(router_port, f"SELECT count(*) FROM ddb.scan('{TABLE}')"))
check("GetItem", {"pk": {"S": "c7"}, "total": {"N": "7"}},
      {k: v for k, v in db.get_item(TableName=TABLE, Key=key("c7"))["Item"].items() if k in ("pk", "total")})
check("UpdateItem (ADD, UPDATED_NEW), then GetItem sees it", ["107", "107"],
      [db.update_item(TableName=TABLE, Key=key("c7"), UpdateExpression="ADD #t :n",
                      ExpressionAttributeNames={"#t": "total"}, ExpressionAttributeValues={":n": {"N": "100"}},
                      ReturnValues="UPDATED_NEW")["Attributes"]["total"]["N"],
       db.get_item(TableName=TABLE, Key=key("c7"), ConsistentRead=True)["Item"]["total"]["N"]])
db.delete_item(TableName=TABLE, Key=key("c39"))
check("DeleteItem: the item is gone, 39 items on the shards", [False, 39],
      ["Item" in db.get_item(TableName=TABLE, Key=key("c39")), sum(shard_counts())])

status, body = raw("PutItem", {"TableName": TABLE, "Item": order("c1"), "ConditionExpression": "attribute_not_exists(pk)"})
check("a failed condition: 400 and DynamoDB's ConditionalCheckFailedException", [400, "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"],
      [status, body.get("__type")])
check("and boto3 raises it as such", "ConditionalCheckFailedException",
      error_code(lambda: db.delete_item(TableName=TABLE, Key=key("c2"), ConditionExpression="#t > :n",
                                        ExpressionAttributeNames={"#t": "total"},
                                        ExpressionAttributeValues={":n": {"N": "1000"}})))

# Query: three orders of one customer, in sort key order; its local index by total
for sk, total in (("o3", 3), ("o2", 30)):
    db.put_item(TableName=TABLE, Item=order("c5", sk, total))
check("Query of the table: the customer's 3 orders, by sort key", ["o1", "o2", "o3"],
      [i["sk"]["S"] for i in db.query(TableName=TABLE, KeyConditionExpression="pk = :p",
                                      ExpressionAttributeValues={":p": {"S": "c5"}})["Items"]])
check("Query of the local index: by total, descending", ["o2", "o1", "o3"],
      [i["sk"]["S"] for i in db.query(TableName=TABLE, IndexName="ByTotal", KeyConditionExpression="pk = :p",
                                      ExpressionAttributeValues={":p": {"S": "c5"}}, ScanIndexForward=False)["Items"]])

# BatchWriteItem and BatchGetItem of 25 items spanning both shards
db.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": order(f"b{i}", total=i)}} for i in range(25)]})
batch_counts = shard_counts("i->>'pk' LIKE 'b%'")
check("BatchWriteItem of 25 items: written to both shards", [True, True, 25],
      [batch_counts[0] > 0, batch_counts[1] > 0, sum(batch_counts)])
got = db.batch_get_item(RequestItems={TABLE: {"Keys": [key(f"b{i}") for i in range(25)]}})
check("BatchGetItem of those 25 keys from both shards", [list(range(25)), {}],
      [sorted(int(i["total"]["N"]) for i in got["Responses"][TABLE]), got["UnprocessedKeys"]])

total = sum(shard_counts())
seen, pages, start = [], 0, None
while True:
    page = db.scan(TableName=TABLE, Limit=7, **({"ExclusiveStartKey": start} if start else {}))
    seen += [(i["pk"]["S"], i["sk"]["S"]) for i in page["Items"]]
    pages += 1
    start = page.get("LastEvaluatedKey")
    if not start or pages > 100:
        break
check(f"Scan with Limit 7, paged by LastEvaluatedKey over both shards: all {total} items, each once",
      [total, total, True], [len(seen), len(set(seen)), pages >= total // 7])
check("DescribeTable: ItemCount is the shards' total", total, db.describe_table(TableName=TABLE)["Table"]["ItemCount"])

# each standby replays its primary's items
deadline = time.time() + 10
while time.time() < deadline:
    replicated = [sql(p, f"SELECT count(*) FROM ddb.scan('{TABLE}')") for p in standby_ports]
    if replicated == [str(c) for c in shard_counts()]:
        break
    time.sleep(0.1)
check("each standby holds its primary's items", [str(c) for c in shard_counts()], replicated)
check("and is a standby", ["t", "t"], [sql(p, "SELECT pg_is_in_recovery()") for p in standby_ports])

# a key of a role given app_* by ddb_router.grant_tables
app = client(app_id, app_secret)
check("a restricted key reads its table through the router", "c7",
      app.get_item(TableName=TABLE, Key=key("c7"))["Item"]["pk"]["S"])
check("and writes it (a batch over both shards)", {},
      app.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": order(f"a{i}")}} for i in range(8)]})
      ["UnprocessedItems"])
check("ListTables lists its tables only", ["app_orders"], app.list_tables()["TableNames"])
check("another table is refused: AccessDeniedException", ["AccessDeniedException"] * 3,
      [error_code(lambda: app.get_item(TableName="private", Key={"pk": {"S": "x"}})),
       error_code(lambda: app.put_item(TableName="private", Item={"pk": {"S": "x"}})),
       error_code(lambda: app.describe_table(TableName="private"))])

# The models' races through the deployment.  user_service's S7: 20 users register at once,
# four per address, from clients of their own; their items spread over both shards.
import threading


def register(user, address, outcomes):
    """A user with its first email, as user_service's create_user writes it (one transaction)."""
    ts = "2026-11-27T00:00:00.000Z"
    profile = {"PK": {"S": f"USER#{user}"}, "SK": {"S": "PROFILE"}, "userId": {"S": user}, "email": {"S": address},
               "firstName": {"S": "A"}, "lastName": {"S": "B"}, "status": {"S": "active"}, "version": {"N": "1"},
               "createdAt": {"S": ts}, "updatedAt": {"S": ts}}
    email = {"PK": {"S": f"USER#{user}"}, "SK": {"S": f"EMAIL#{user}"}, "GSI1PK": {"S": f"EMAIL#{address}"},
             "GSI1SK": {"S": f"USER#{user}"}, "emailId": {"S": user}, "userId": {"S": user}, "email": {"S": address},
             "isPrimary": {"BOOL": True}, "isVerified": {"BOOL": True}, "verifiedAt": {"S": ts}, "createdAt": {"S": ts}}
    try:
        client(key_id, secret).transact_write_items(TransactItems=[
            {"Put": {"TableName": "UserServiceTable", "Item": item, "ConditionExpression": "attribute_not_exists(PK)"}}
            for item in (profile, email)])
        outcomes.append("won")
    except ClientError as e:
        outcomes.append(e.response["Error"]["Code"])


# Each address's four contenders are chosen two on each shard, so that the guard is tested across
# them whichever user wins.
user_nodes = dict(line.split("|") for line in sql(router_port, """
    SELECT format('%s-0000-4000-8000-000000000000', lpad(n::text, 8, '0')) AS u,
           ddb_router.node_of(ddb_router.route_of('UserServiceTable', jsonb_build_object('PK', jsonb_build_object(
               'S', format('USER#%s-0000-4000-8000-000000000000', lpad(n::text, 8, '0'))))))
      FROM generate_series(0, 99) n""").splitlines())
by_node = {node: [u for u, n in sorted(user_nodes.items()) if n == node] for node in set(user_nodes.values())}
contenders = [(u, f"race{a}@example.com") for a in range(5) for node in sorted(by_node) for u in by_node[node][2 * a:2 * a + 2]]
outcomes = []
threads = [threading.Thread(target=register, args=(user, address, outcomes)) for user, address in contenders]
for t in threads:
    t.start()
for t in threads:
    t.join()
check("S7 through the deployment: 20 concurrent registrations of 5 addresses, one won per address",
      [5, 15], [outcomes.count("won"), outcomes.count("ConditionalCheckFailedException")])
check("the contenders of each address were on both shards", [2, 20], [len(by_node), len(set(contenders))])
held = collections.Counter(line for p in shard_ports for line in
                           sql(p, "SELECT email FROM user_service.emails WHERE email LIKE 'race%'").splitlines())
check("and the shards hold one email item per address", {f"race{a}@example.com": 1 for a in range(5)}, dict(held))


# S9's optimistic locking, as user_service's update_profile uses it: clients increment a
# counter item on each shard by read, then conditional write of the next version; no update is lost.
def increment(pk, times, done):
    c = client(key_id, secret)
    n = 0
    while n < times:
        item = c.get_item(TableName=TABLE, Key=key(pk), ConsistentRead=True)["Item"]
        try:
            c.update_item(TableName=TABLE, Key=key(pk), UpdateExpression="SET #t = :next",
                          ConditionExpression="#t = :seen", ExpressionAttributeNames={"#t": "total"},
                          ExpressionAttributeValues={":seen": item["total"], ":next": {"N": str(int(item["total"]["N"]) + 1)}})
            n += 1
        except ClientError as e:
            if e.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
    done.append(n)


# a counter on each shard: each node's first key
counter_nodes = sql(router_port, f"""
    SELECT DISTINCT ON (node) 'counter' || n, node
      FROM generate_series(0, 49) n, ddb_router.node_of(ddb_router.route_of('{TABLE}',
           jsonb_build_object('pk', jsonb_build_object('S', 'counter' || n)))) node ORDER BY node, n""")
counters = [tuple(line.split("|")) for line in counter_nodes.splitlines()]
for pk, _ in counters:
    db.put_item(TableName=TABLE, Item=order(pk, total=0))
done = []
threads = [threading.Thread(target=increment, args=(pk, 10, done)) for pk, _ in counters for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
check("S9-style optimistic updates through the deployment: 4 clients x 10 on a counter of each shard, none lost",
      ["40", "40"], [db.get_item(TableName=TABLE, Key=key(pk), ConsistentRead=True)["Item"]["total"]["N"] for pk, _ in counters])
sys.exit(1 if failed else 0)
PY
checks_from /usr/bin/python3 "$WORK/client.py" "$ENDPOINT" "$KEY_ID" "$SECRET" "$APP_ID" "$APP_SECRET" "$SOCKET" \
    "$SHARD1" "$SHARD2" "$STANDBY1" "$STANDBY2" "$ROUTER" 2>"$WORK/client.log"
check "the boto3 checks ran to their end" "0" "$?"

# stop: the gateway and the five servers, by their own pids
pids=$(cat "$DDB_SCALE_OUT_DIR/gateway.pid"; for d in "$DDB_SCALE_OUT_DIR"/*/postmaster.pid; do head -1 "$d"; done)
check "six processes to stop" "6" "$(wc -w <<<"$pids")"
scale_out stop >"$WORK/stop.log" 2>&1
check "tools/scale-out.sh stop" "0" "$?"
alive=0
for pid in $pids; do
    # a process that has exited but is not reaped yet (state Z) runs no more
    state=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
    [ -n "$state" ] && [ "$state" != Z ] && alive=$((alive + 1))
done
check "stop leaves none of them running" "0 0" "$alive $(ls "$DDB_SCALE_OUT_DIR"/*/postmaster.pid 2>/dev/null | wc -l)"
check "and the gateway's port is free" "000" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$ENDPOINT/health")"
scale_out status >/dev/null 2>&1
check "status says it does not run" "1" "$?"
done_testing
