#!/usr/bin/env bash
# The models on a sharded deployment (docs/scale-out.md): user_service's S7,
# one user per email address, spans partitions (a user's email items live
# under USER#<id>), so the router keeps it across the nodes; underwriting's
# W17 audit items are placed with the rulebooks they audit.  A router and
# two node databases in the test cluster of tools/test.sh (PGHOST/PGPORT/
# PGUSER set); prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir router-models
ROUTER=ddb_router_models_r
DB=$ROUTER
NODES=(ddb_router_models_n0 ddb_router_models_n1)

# on_nodes SQL: the sum of the nodes' answers
on_nodes() { echo $(( $(psql -X -At -d "${NODES[0]}" -c "$1") + $(psql -X -At -d "${NODES[1]}" -c "$1") )); }
# error OPERATION REQUEST: "SQLSTATE|__type of the DETAIL" of the router's error, or "ok"
error() {
    q -c "DO \$d\$ BEGIN PERFORM ddb_router.execute_metered(NULL, '$1', \$r\$$2\$r\$); RAISE NOTICE 'ok';
          EXCEPTION WHEN OTHERS THEN DECLARE s text; d text;
          BEGIN GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, d = PG_EXCEPTION_DETAIL;
                RAISE NOTICE '%|%', s, CASE WHEN d LIKE '{%' THEN split_part(d::jsonb->>'__type', '#', 2) ELSE d END; END; END \$d\$" 2>&1 |
        sed 's/^NOTICE:  //'
}
# register USER ADDRESS: S-model TransactWriteItems creating a user with its first (verified, primary) email
register() {
    local u=$1 a=$2 ts=2026-11-27T00:00:00.000Z
    printf '%s' "{\"TransactItems\": [
      {\"Put\": {\"TableName\": \"UserServiceTable\", \"ConditionExpression\": \"attribute_not_exists(PK)\", \"Item\": {
        \"PK\": {\"S\": \"USER#$u\"}, \"SK\": {\"S\": \"PROFILE\"}, \"userId\": {\"S\": \"$u\"}, \"email\": {\"S\": \"$a\"},
        \"firstName\": {\"S\": \"Ann\"}, \"lastName\": {\"S\": \"Lee\"}, \"status\": {\"S\": \"active\"}, \"version\": {\"N\": \"1\"},
        \"createdAt\": {\"S\": \"$ts\"}, \"updatedAt\": {\"S\": \"$ts\"}}}},
      {\"Put\": {\"TableName\": \"UserServiceTable\", \"ConditionExpression\": \"attribute_not_exists(PK)\", \"Item\": {
        \"PK\": {\"S\": \"USER#$u\"}, \"SK\": {\"S\": \"EMAIL#$u\"}, \"GSI1PK\": {\"S\": \"EMAIL#$a\"}, \"GSI1SK\": {\"S\": \"USER#$u\"},
        \"emailId\": {\"S\": \"$u\"}, \"userId\": {\"S\": \"$u\"}, \"email\": {\"S\": \"$a\"}, \"isPrimary\": {\"BOOL\": true},
        \"isVerified\": {\"BOOL\": true}, \"verifiedAt\": {\"S\": \"$ts\"}, \"createdAt\": {\"S\": \"$ts\"}}}}]}"
}

fresh_router "$ROUTER" "${NODES[@]}"

check "the attributes the nodes keep unique are found in the catalog" "UserServiceTable.GSI1PK sourcesTable.writeKeyHash" \
    "$(q -c "SELECT string_agg(table_name || '.' || attribute, ' ' ORDER BY table_name) FROM ddb_router.unique_attributes")"

# Users on different nodes: pairs of ids whose items live on different nodes
# (200 ids, 00000001-0000-4000-8000-000000000000 and on, with the place (0, 1)
# of the node that holds each one's items).
first=(); second=()
while IFS='|' read -r user node; do
    [ "$node" = 0 ] && first+=("$user") || second+=("$user")
done < <(q -c "SELECT u, ddb_router.node_route(ddb.ddb_key_route_hash(ddb.ddb_key('USER#' || u)))
               FROM generate_series(1, 200) n, format('%s-0000-4000-8000-000000000000', lpad(n::text, 8, '0')) u ORDER BY n")
check "a user registers through the router" "ok" "$(error TransactWriteItems "$(register "${first[0]}" ann@example.com)")"
check "another user on the other node cannot take the address: the holder's node refuses it as its unique index does" \
    "23505|ConditionalCheckFailedException" "$(error TransactWriteItems "$(register "${second[0]}" ann@example.com)")"
check "S3 login lookup through the router finds the one user" "USER#${first[0]}" \
    "$(q -c "SELECT ddb_router.answer_response(ddb_router.execute_metered(NULL, 'Query', '{\"TableName\": \"UserServiceTable\", \"IndexName\": \"GSI1\",
        \"KeyConditionExpression\": \"GSI1PK = :e\", \"ExpressionAttributeValues\": {\":e\": {\"S\": \"EMAIL#ann@example.com\"}}}'))->'Items'->0->'PK'->>'S'")"

# Concurrent registrations of one address by users on both nodes: one wins, per address.
for i in $(seq 1 10); do
    q -c "SELECT ddb_router.execute_metered(NULL, 'TransactWriteItems', \$r\$$(register "${first[$i]}" "race$i@example.com")\$r\$)" >"$WORK/a$i" 2>&1 &
    q -c "SELECT ddb_router.execute_metered(NULL, 'TransactWriteItems', \$r\$$(register "${second[$i]}" "race$i@example.com")\$r\$)" >"$WORK/b$i" 2>&1 &
done
wait
won=0
for i in $(seq 1 10); do
    grep -q ERROR "$WORK/a$i" || won=$((won + 1))
    grep -q ERROR "$WORK/b$i" || won=$((won + 1))
done
check "20 concurrent registrations of 10 addresses from both nodes: 10 won" "10" "$won"
check "S7 holds across the nodes: one email item per address" "0" \
    "$(on_nodes "SELECT count(*) FROM (SELECT email FROM user_service.emails GROUP BY email HAVING count(*) > 1) d")"
check "and every address has its holder: ann's and the ten raced ones, over both nodes" "11" \
    "$(on_nodes "SELECT count(*) FROM user_service.emails")"

# An update that moves a (secondary, unverified) email item to another address is checked the same way.
q -c "SELECT ddb_router.execute_metered(NULL, 'TransactWriteItems', \$r\$$(register "${second[0]}" bob@example.com)\$r\$)" >/dev/null
q -c "SELECT ddb_router.execute_metered(NULL, 'PutItem', \$r\${\"TableName\": \"UserServiceTable\", \"Item\": {
        \"PK\": {\"S\": \"USER#${second[0]}\"}, \"SK\": {\"S\": \"EMAIL#${second[50]}\"}, \"GSI1PK\": {\"S\": \"EMAIL#bob2@example.com\"},
        \"GSI1SK\": {\"S\": \"USER#${second[0]}\"}, \"emailId\": {\"S\": \"${second[50]}\"}, \"userId\": {\"S\": \"${second[0]}\"},
        \"email\": {\"S\": \"bob2@example.com\"}, \"isPrimary\": {\"BOOL\": false}, \"isVerified\": {\"BOOL\": false},
        \"createdAt\": {\"S\": \"2026-11-27T00:00:00.000Z\"}}}\$r\$)" >/dev/null
update='{"TableName": "UserServiceTable", "Key": {"PK": {"S": "USER#%s"}, "SK": {"S": "EMAIL#%s"}},
         "UpdateExpression": "SET #g = :g, email = :e", "ExpressionAttributeNames": {"#g": "GSI1PK"},
         "ExpressionAttributeValues": {":g": {"S": "EMAIL#%s"}, ":e": {"S": "%s"}}}'
check "an update to an address an item on the other node holds is refused" "23505|ConditionalCheckFailedException" \
    "$(error UpdateItem "$(printf "$update" "${second[0]}" "${second[50]}" ann@example.com ann@example.com)")"
check "to a free one it is made" "ok" \
    "$(error UpdateItem "$(printf "$update" "${second[0]}" "${second[50]}" bo@example.com bo@example.com)")"
check "an update that sets the attribute any other way is refused on a sharded deployment" "YD001|ValidationException" \
    "$(error UpdateItem "{\"TableName\": \"UserServiceTable\", \"Key\": {\"PK\": {\"S\": \"USER#${second[0]}\"}, \"SK\": {\"S\": \"EMAIL#${second[50]}\"}},
        \"UpdateExpression\": \"SET GSI1PK = if_not_exists(GSI1PK, :g)\", \"ExpressionAttributeValues\": {\":g\": {\"S\": \"EMAIL#x@example.com\"}}}")"
check "a PartiQL INSERT of a taken address is refused too" "23505|ConditionalCheckFailedException" \
    "$(error ExecuteStatement "{\"Statement\": \"INSERT INTO UserServiceTable VALUE {'PK': 'USER#${second[60]}', 'SK': 'EMAIL#${second[60]}', 'GSI1PK': 'EMAIL#ann@example.com', 'GSI1SK': 'USER#${second[60]}', 'emailId': '${second[60]}', 'userId': '${second[60]}', 'email': 'ann@example.com', 'isPrimary': false, 'isVerified': false, 'createdAt': '2026-11-27T00:00:00.000Z'}\"}")"

# underwriting's W17: a rulebook change writes its audit item (RULEBOOKCONFIGUPDATE) on the
# rulebook's node, in the same transaction; the router reads the audit trail (W14) there.
for db in "$ROUTER" "${NODES[@]}"; do psql -X -q -d "$db" -c "SELECT underwriting.create_environment('shard')" >/dev/null; done
rulebook=$(q -c "SELECT ddb_router.node_route(ddb.ddb_key_route_hash('RULEBOOK'))")
audit=$(q -c "SELECT ddb.ddb_key_route_hash('RULEBOOKCONFIGUPDATE') & 15")
# the audit key's own partition goes to the other node than the rulebooks' (the map is empty of items yet)
q -c "UPDATE ddb_router.partitions SET node_name = (SELECT node_name FROM ddb_router.partitions WHERE partition <> $rulebook
                                                     AND node_name <> (SELECT node_name FROM ddb_router.partitions WHERE partition = $rulebook) LIMIT 1)
      WHERE partition = $audit"
check "the audit key's own partition lives on the other node than the rulebooks'" "t" \
    "$(q -c "SELECT (SELECT node_name FROM ddb_router.partitions WHERE partition = $rulebook) <> (SELECT node_name FROM ddb_router.partitions WHERE partition = $audit)")"
check "it is placed with the rulebooks" "t" \
    "$(q -c "SELECT ddb_router.node_route(ddb_router.route_hash('shard-underwriting', 'RULEBOOKCONFIGUPDATE')) = $rulebook")"
check "a rulebook written through the router" "ok" "$(error PutItem '{"TableName": "shard-underwriting", "Item": {
    "PK": {"S": "RULEBOOK"}, "SK": {"S": "RULEBOOK#core"}, "GSI1PK": {"S": "RULEBOOK_TYPE#floats"}, "GSI1SK": {"S": "RULEBOOK#core"},
    "item_type": {"S": "rulebook"}, "rulebook_id": {"S": "core"}, "rulebook_name": {"S": "Core"}, "type": {"S": "floats"},
    "rules": {"L": []}, "priority": {"N": "1"}, "apply_to": {"N": "100"}}}')"
check "W14 through the router reads the audit item its node wrote with it" "1 RULEBOOK#core" \
    "$(q -c "SELECT concat(r->>'Count', ' ', r->'Items'->0->'rulebooks'->'L'->0->'M'->'SK'->>'S')
             FROM ddb_router.answer_response(ddb_router.execute_metered(NULL, 'Query', '{\"TableName\": \"shard-underwriting\",
                  \"KeyConditionExpression\": \"PK = :p\", \"ExpressionAttributeValues\": {\":p\": {\"S\": \"RULEBOOKCONFIGUPDATE\"}}}')) r")"

# uds: a node's checks of app data read the app (it exists, its quota: D3, D7), so apps is a
# reference table, whose items every node holds; the usage figure lives with the data (appUser).
app_put() {  # NAME QUOTA
    error PutItem "{\"TableName\": \"apps\", \"Item\": {\"appName\": {\"S\": \"$1\"}, \"quotaBytes\": {\"N\": \"$2\"}}}"
}
data_put() {  # APP USER VALUE
    error PutItem "{\"TableName\": \"appDataJson\", \"Item\": {\"appUser\": {\"S\": \"$1#$2\"}, \"key\": {\"S\": \"k1\"},
        \"appName\": {\"S\": \"$1\"}, \"user\": {\"S\": \"$2\"}, \"appKey\": {\"S\": \"$1#k1\"}, \"value\": {\"S\": \"$3\"}}}"
}
check "an app is written on every node" "ok 1 1" \
    "$(app_put notes 100000) $(psql -X -At -d "${NODES[0]}" -c "SELECT count(*) FROM ddb.scan('apps')") $(psql -X -At -d "${NODES[1]}" -c "SELECT count(*) FROM ddb.scan('apps')")"
users=(); declare -A seen_node
for n in $(seq 1 40); do
    node=$(q -c "SELECT ddb_router.node_route(ddb.ddb_key_route_hash('notes#user$n'))")
    [ -z "${seen_node[$node]:-}" ] && { seen_node[$node]=1; users+=("user$n"); }
done
check "app data of users on both nodes is accepted (each node has the app)" "ok ok" \
    "$(data_put notes "${users[0]}" hello) $(data_put notes "${users[1]}" hello)"
check "D7: each user's usage figure is read through the router" "2" \
    "$(for u in "${users[@]}"; do q -c "SELECT ddb_router.answer_response(ddb_router.execute_metered(NULL, 'GetItem',
        '{\"TableName\": \"appUsage\", \"Key\": {\"appUser\": {\"S\": \"notes#$u\"}}}')) ? 'Item'"; done | grep -c t)"
app_put tiny 10 >/dev/null
check "D7: the app's quota holds on every node" "23514|23514" \
    "$(data_put tiny "${users[0]}" "far more than ten bytes" | cut -d'|' -f1)|$(data_put tiny "${users[1]}" "far more than ten bytes" | cut -d'|' -f1)"
check "a Scan of a reference table reads one node: each app once" "2" \
    "$(q -c "SELECT ddb_router.answer_response(ddb_router.execute_metered(NULL, 'Scan', '{\"TableName\": \"apps\"}'))->>'Count'")"
check "a batch write of a reference table is refused, saying how to write it" "YD001|ValidationException" \
    "$(error BatchWriteItem '{"RequestItems": {"apps": [{"PutRequest": {"Item": {"appName": {"S": "x"}}}}]}}')"

drop_db "$ROUTER" "${NODES[@]}"
done_testing
