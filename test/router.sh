#!/usr/bin/env bash
# The router of a sharded deployment (ddb_router, docs/scale-out.md): a
# router database and two node databases in the test cluster; requests go
# through ddb_router.execute_metered, and the checks look at the nodes
# directly.  Runs against the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER
# set); prints TAP (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ROUTER=ddb_router_r
DB=$ROUTER
NODES=(ddb_router_n0 ddb_router_n1)

# call OPERATION REQUEST [EXPRESSION]: EXPRESSION (default r, the response) of the router's answer r
call() { q -c "SELECT ${3:-r} FROM ddb_router.answer_response(ddb_router.execute_metered(NULL, '$1', \$r\$$2\$r\$)) r"; }
# sum "A+B+...": the sum of the numbers
sum() { echo $(( $1 )); }
# error OPERATION REQUEST: "SQLSTATE|message|__type of the DETAIL" of the error the router raises
error() {
    q -c "DO \$d\$ BEGIN PERFORM ddb_router.execute_metered(NULL, '$1', \$r\$$2\$r\$);
          RAISE NOTICE 'no error';
          EXCEPTION WHEN OTHERS THEN DECLARE s text; m text; d text;
          BEGIN GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
                RAISE NOTICE '%|%|%', s, m, split_part(d::jsonb->>'__type', '#', 2); END; END \$d\$" 2>&1 |
        sed 's/^NOTICE:  //'
}
# on_nodes SQL: the answer of each node, joined by "+"
on_nodes() { echo "$(q -d "${NODES[0]}" -c "$1")+$(q -d "${NODES[1]}" -c "$1")"; }

fresh_router "$ROUTER" "${NODES[@]}"

# The routing hash is the one PostgreSQL's hash partitioning uses: a key of
# partition hash & 3 satisfies that partition of a table hash-partitioned in 4.
check "the routing hash agrees with PostgreSQL's hash partitioning" "200" "$(q -c "
    CREATE TEMP TABLE hp (k ddb.ddb_key) PARTITION BY HASH (k);
    SELECT count(*) FROM generate_series(1, 200) i, LATERAL (SELECT ddb.ddb_key('USER#' || i) AS k) key
    WHERE satisfies_hash_partition('hp'::regclass, 4, ddb.ddb_key_route_hash(k) & 3, k)")"
check "equal numbers route alike" "t" "$(q -c "SELECT ddb.ddb_key_route_hash(ddb.ddb_key(1.0)) = ddb.ddb_key_route_hash(ddb.ddb_key(1))")"
check "a partition count that is no power of two is refused" "22023" \
    "$(q -c "DO \$d\$ BEGIN PERFORM ddb_router.create_partitions(12); EXCEPTION WHEN OTHERS THEN RAISE NOTICE '%', SQLSTATE; END \$d\$" 2>&1 | sed 's/^NOTICE:  //')"
check "and the count is fixed once made" "55000" \
    "$(q -c "DO \$d\$ BEGIN PERFORM ddb_router.create_partitions(32); EXCEPTION WHEN OTHERS THEN RAISE NOTICE '%', SQLSTATE; END \$d\$" 2>&1 | sed 's/^NOTICE:  //')"
check "the partitions are spread over the nodes in turn" "n0:8 n1:8" \
    "$(q -c "SELECT string_agg(node_name || ':' || n, ' ' ORDER BY node_name) FROM (SELECT node_name, count(*) n FROM ddb_router.partitions GROUP BY 1) s")"

call CreateTable '{"TableName": "Music", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "Artist", "KeyType": "HASH"}, {"AttributeName": "Song", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "Artist", "AttributeType": "S"}, {"AttributeName": "Song", "AttributeType": "S"},
                           {"AttributeName": "Genre", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "ByGenre", "KeySchema": [{"AttributeName": "Genre", "KeyType": "HASH"}],
                              "Projection": {"ProjectionType": "ALL"}}]}' >/dev/null
check "CreateTable makes the table in the router's catalog and on every node" "1|1+1" \
    "$(q -c "SELECT count(*) FROM ddb.tables WHERE table_name = 'Music'")|$(on_nodes "SELECT count(*) FROM ddb.indexes WHERE table_name = 'Music'")"

q -c "SELECT ddb_router.execute_metered(NULL, 'PutItem', jsonb_build_object('TableName', 'Music', 'Item',
        jsonb_build_object('Artist', jsonb_build_object('S', 'artist' || i), 'Song', jsonb_build_object('S', 'song' || i),
                           'Genre', jsonb_build_object('S', 'g' || i % 3), 'n', jsonb_build_object('N', i::text))))
      FROM generate_series(1, 100) i" >/dev/null
counts=$(on_nodes "SELECT count(*) FROM ddb.scan('Music')")
check "PutItem: every item on one node, both nodes hold some" "100 true" \
    "$(( ${counts%+*} + ${counts#*+} )) $([ "${counts%+*}" -gt 20 ] && [ "${counts#*+}" -gt 20 ] && echo true)"
check "each item is on the node of its partition" "0" "$(sum "$(for i in 0 1; do q -d "${NODES[$i]}" -c "
    SELECT count(*) FROM ddb.scan('Music') it WHERE ((ddb.ddb_key_route_hash(ddb.ddb_key(it->>'Artist')) & 15) % 2) <> $i"; done | paste -sd+)")"
check "GetItem reads from the item's node" '{"S": "song42"}' \
    "$(q -c "SELECT ddb_router.answer_response(ddb_router.execute_metered(NULL, 'GetItem',
        '{\"TableName\": \"Music\", \"Key\": {\"Artist\": {\"S\": \"artist42\"}, \"Song\": {\"S\": \"song42\"}}}'))->'Item'->'Song'")"
check "the answer starts with the capacity by table" '{"Music": [0.5, 0]}' \
    "$(q -c "SELECT ddb_router.answer_consumed(ddb_router.execute_metered(NULL, 'GetItem',
        '{\"TableName\": \"Music\", \"Key\": {\"Artist\": {\"S\": \"artist42\"}, \"Song\": {\"S\": \"song42\"}}}'))")"
check "Query of the table reads the partition key's node" "1" \
    "$(call Query '{"TableName": "Music", "KeyConditionExpression": "Artist = :a", "ExpressionAttributeValues": {":a": {"S": "artist7"}}}' "r->>'Count'")"

check "a node's error comes back as the node raised it" \
    "YD002|The conditional request failed|ConditionalCheckFailedException" \
    "$(error PutItem '{"TableName": "Music", "Item": {"Artist": {"S": "artist1"}, "Song": {"S": "song1"}}, "ConditionExpression": "attribute_not_exists(Artist)"}')"
check "a request without its partition key gets the node's ValidationException" \
    "YD001|One or more parameter values were invalid: Missing the key Artist in the item|ValidationException" \
    "$(error PutItem '{"TableName": "Music", "Item": {"Song": {"S": "x"}}}')"
check "a key of the wrong type too" \
    "YD001|The provided key element does not match the schema|ValidationException" \
    "$(error GetItem '{"TableName": "Music", "Key": {"Artist": {"N": "1"}, "Song": {"S": "x"}}}')"
check "a request that is no object is the router's SerializationException" "YD006|SerializationException" \
    "$(error GetItem '[1]' | cut -d'|' -f1,3)"
check "an operation no one serves is UnknownOperationException" "YD007|UnknownOperationException" \
    "$(error DescribeNothing '{}' | cut -d'|' -f1,3)"
check "UpdateContinuousBackups is refused: the shards keep no history" "YD030|ContinuousBackupsUnavailableException" \
    "$(error UpdateContinuousBackups '{"TableName": "Music", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}' | cut -d'|' -f1,3)"
check "RestoreTableToPointInTime too" "YD031|PointInTimeRecoveryUnavailableException" \
    "$(error RestoreTableToPointInTime '{"SourceTableName": "Music", "TargetTableName": "Music2", "UseLatestRestorableTime": true}' | cut -d'|' -f1,3)"
check "an unknown table is TableNotFoundException first, as DynamoDB answers: UpdateContinuousBackups, RestoreTableToPointInTime, ExportTableToPointInTime" \
    "YD022|Table not found: Nothing|TableNotFoundException YD022|Table not found: Nothing|TableNotFoundException YD022|Table not found: arn:aws:dynamodb:ddb-model:000000000000:table/Nothing|TableNotFoundException" \
    "$(error UpdateContinuousBackups '{"TableName": "Nothing", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}') $(error RestoreTableToPointInTime '{"SourceTableName": "Nothing", "TargetTableName": "Music2", "UseLatestRestorableTime": true}') $(error ExportTableToPointInTime '{"TableArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Nothing", "S3Bucket": "b1"}')"
check "DescribeContinuousBackups says point-in-time recovery is off" "DISABLED" \
    "$(call DescribeContinuousBackups '{"TableName": "Music"}' "r->'ContinuousBackupsDescription'->'PointInTimeRecoveryDescription'->>'PointInTimeRecoveryStatus'")"
check "ExportTableToPointInTime is refused: the shards keep no history" "YD031|PointInTimeRecoveryUnavailableException" \
    "$(error ExportTableToPointInTime '{"TableArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Music", "S3Bucket": "b1"}' | cut -d'|' -f1,3)"
check "ImportTable is refused, saying a sharded deployment does not import" "YD001|ImportTable is not supported by a sharded deployment (ddb_router): import into a single node's database, or write the items through the router (BatchWriteItem)|ValidationException" \
    "$(error ImportTable '{"S3BucketSource": {"S3Bucket": "b1"}, "InputFormat": "DYNAMODB_JSON", "TableCreationParameters": {"TableName": "Music2", "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}]}}')"
check "ListExports and ListImports find none" '{"ExportSummaries": []} {"ImportSummaryList": []}' \
    "$(call ListExports '{}') $(call ListImports '{}')"
check "DescribeExport finds no export" "YD040|ExportNotFoundException" \
    "$(error DescribeExport '{"ExportArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Music/export/01700000000000-00000000"}' | cut -d'|' -f1,3)"
for op in CreateBackup DescribeBackup ListBackups DeleteBackup RestoreTableFromBackup; do
    check "$op is ValidationException: not on a sharded deployment" \
        "YD001|$op is not supported on a sharded deployment (ddb_router): back up each shard's database instead|ValidationException" \
        "$(error "$op" '{"TableName": "Music", "BackupName": "b", "BackupArn": "arn:aws:dynamodb:ddb-model:000000000000:table/Music/backup/01700000000000-00000000"}')"
done
check "an unknown table is ResourceNotFoundException" "YD004|ResourceNotFoundException" \
    "$(error GetItem '{"TableName": "Nope", "Key": {"Artist": {"S": "a"}}}' | cut -d'|' -f1,3)"
check "and the invalid requests wrote nothing" "100" "$(sum "$(on_nodes "SELECT count(*) FROM ddb.scan('Music')")")"

# Scan with Limit, page after page: every item once, across both nodes.
pages=0; seen=""; start=""
while :; do
    request="{\"TableName\": \"Music\", \"Limit\": 7, \"ProjectionExpression\": \"Artist\"${start:+, \"ExclusiveStartKey\": $start}}"
    seen="$seen $(call Scan "$request" "(SELECT string_agg(i->'Artist'->>'S', ' ') FROM jsonb_array_elements(r->'Items') i)")"
    start=$(call Scan "$request" "coalesce(r->>'LastEvaluatedKey', '')")
    pages=$((pages + 1))
    [ -n "$start" ] && [ "$pages" -lt 40 ] || break
done
check "Scan pages over both nodes with Limit: each item once" "100 100 true" \
    "$(echo $seen | wc -w) $(echo $seen | tr ' ' '\n' | sort -u | wc -l) $([ "$pages" -ge 15 ] && echo true)"
counted=0; start=""
for _ in 1 2 3 4; do
    request="{\"TableName\": \"Music\", \"Select\": \"COUNT\"${start:+, \"ExclusiveStartKey\": $start}}"
    counted=$((counted + $(call Scan "$request" "r->>'Count'")))
    start=$(call Scan "$request" "coalesce(r->>'LastEvaluatedKey', '')")
    [ -n "$start" ] || break
done
check "Scan Select COUNT over both nodes: the counts add up, page after page" "100 " "$counted $start"

check "DescribeTable adds up the nodes' items" "100" "$(call DescribeTable '{"TableName": "Music"}' "r->'Table'->>'ItemCount'")"

# A Query of a global index: every node's entries, merged in the index's
# order (no sort key: the table's keys), paged with Limit across the nodes.
gsi='"TableName": "Music", "IndexName": "ByGenre", "KeyConditionExpression": "Genre = :g"'
g1='"ExpressionAttributeValues": {":g": {"S": "g1"}}'
artists="(SELECT string_agg(i->'Artist'->>'S', ' ') FROM jsonb_array_elements(r->'Items') i)"
whole=$(call Query "{$gsi, $g1}" "$artists")
check "a Query of a global index reads every node's entries, in the index's order" \
    "$(q -c "SELECT string_agg('artist' || i, ' ' ORDER BY convert_to('artist' || i, 'UTF8')) FROM generate_series(1, 100) i WHERE i % 3 = 1")" "$whole"
check "backwards with ScanIndexForward false" "$(echo $whole | tr ' ' '\n' | tac | paste -sd' ')" \
    "$(call Query "{$gsi, $g1, \"ScanIndexForward\": false}" "$artists")"
# pages ARGS: every page of the Query with ARGS added: the artists in order, then the pages' Count and ScannedCount sums
pages() {
    local start="" seen="" counted=0 scanned=0 n=0 request
    while :; do
        request="{$gsi, $1${start:+, \"ExclusiveStartKey\": $start}}"
        seen="$seen $(call Query "$request" "$artists")"
        counted=$((counted + $(call Query "$request" "r->>'Count'")))
        scanned=$((scanned + $(call Query "$request" "r->>'ScannedCount'")))
        start=$(call Query "$request" "coalesce(r->>'LastEvaluatedKey', '')")
        n=$((n + 1))
        [ -n "$start" ] && [ "$n" -lt 50 ] || break
    done
    echo "$(echo $seen) | $counted $scanned $n"
}
check "paged with Limit 5: every entry once, in order, Limit rows a page" "$(echo $whole) | 34 34 7" "$(pages "$g1, \"Limit\": 5")"
check "Limit counts the rows read before the filter, across nodes" \
    "$(q -c "SELECT string_agg('artist' || i, ' ' ORDER BY convert_to('artist' || i, 'UTF8')) FROM generate_series(51, 100) i WHERE i % 3 = 1") | 17 34 7" \
    "$(pages '"Limit": 5, "FilterExpression": "n > :fifty", "ExpressionAttributeValues": {":g": {"S": "g1"}, ":fifty": {"N": "50"}}')"
check "Select COUNT of a global index adds up the nodes" "34 f" \
    "$(call Query "{$gsi, $g1, \"Select\": \"COUNT\"}" "concat(r->>'Count', ' ', r ? 'Items')")"

batch='{"RequestItems": {"Music": ['
for i in $(seq 101 120); do
    batch="$batch{\"PutRequest\": {\"Item\": {\"Artist\": {\"S\": \"artist$i\"}, \"Song\": {\"S\": \"song$i\"}}}},"
done
bad_batch="${batch}{\"PutRequest\": {\"Item\": {\"Artist\": {\"S\": \"artist121\"}}}}]}}"
check "a BatchWriteItem over both nodes with one invalid request is refused whole" "YD001" \
    "$(error BatchWriteItem "$bad_batch" | cut -d'|' -f1)"
check "and wrote nothing on either node" "100" "$(sum "$(on_nodes "SELECT count(*) FROM ddb.scan('Music')")")"
check "BatchWriteItem over both nodes writes each part on its node" "{}" \
    "$(call BatchWriteItem "${batch%,}]}, \"ReturnConsumedCapacity\": \"TOTAL\"}" "r->'UnprocessedItems'")"
check "BatchGetItem over both nodes merges their answers" "20 20" \
    "$(call BatchGetItem "{\"RequestItems\": {\"Music\": {\"Keys\": [$(for i in $(seq 101 120); do printf '{"Artist": {"S": "artist%s"}, "Song": {"S": "song%s"}},' $i $i; done | sed 's/,$//')]}}, \"ReturnConsumedCapacity\": \"TOTAL\"}" \
       "concat(jsonb_array_length(r->'Responses'->'Music'), ' ', ((r->'ConsumedCapacity'->0->>'CapacityUnits')::numeric * 2)::integer)")"

# A partition marked moving refuses writes, retryably; reads go on.
part=$(q -c "SELECT ddb.ddb_key_route_hash(ddb.ddb_key('artist5')) & 15")
q -c "UPDATE ddb_router.partitions SET moving = true WHERE partition = $part"
check "a write to a moving partition is refused with ServiceUnavailable (503, retryable)" "YD013|ServiceUnavailable" \
    "$(error PutItem '{"TableName": "Music", "Item": {"Artist": {"S": "artist5"}, "Song": {"S": "song5"}}}' | cut -d'|' -f1,3)"
check "its reads go on" '{"S": "song5"}' \
    "$(call GetItem '{"TableName": "Music", "Key": {"Artist": {"S": "artist5"}, "Song": {"S": "song5"}}}' "r->'Item'->'Song'")"
q -c "UPDATE ddb_router.partitions SET moving = false WHERE partition = $part"

# PartiQL: a statement goes where the operation it stands for goes.
check "ExecuteStatement SELECT of one item reads its node" '[{"n": {"N": "42"}}]' \
    "$(call ExecuteStatement '{"Statement": "SELECT n FROM Music WHERE Artist = ? AND Song = ?", "Parameters": [{"S": "artist42"}, {"S": "song42"}]}' "r->'Items'")"
call ExecuteStatement '{"Statement": "INSERT INTO Music VALUE {'"'"'Artist'"'"': '"'"'artist200'"'"', '"'"'Song'"'"': '"'"'song200'"'"'}"}' >/dev/null
check "an INSERT lands on the node of its partition" "1" \
    "$(sum "$(on_nodes "SELECT count(*) FROM ddb.scan('Music') it WHERE it->>'Artist' = 'artist200'")")"
check "an INSERT of a key that exists is the node's DuplicateItemException" "YD011|DuplicateItemException" \
    "$(error ExecuteStatement '{"Statement": "INSERT INTO Music VALUE {'"'"'Artist'"'"': '"'"'artist200'"'"', '"'"'Song'"'"': '"'"'song200'"'"'}"}' | cut -d'|' -f1,3)"
# a SELECT of every item pages node after node with the router's NextToken
start=""; seen=""; pages=0
while :; do
    request="{\"Statement\": \"SELECT Artist FROM Music\", \"Limit\": 30${start:+, \"NextToken\": \"$start\"}}"
    seen="$seen $(call ExecuteStatement "$request" "(SELECT string_agg(i->'Artist'->>'S', ' ') FROM jsonb_array_elements(r->'Items') i)")"
    start=$(call ExecuteStatement "$request" "coalesce(r->>'NextToken', '')")
    pages=$((pages + 1))
    [ -n "$start" ] && [ "$pages" -lt 30 ] || break
done
check "a SELECT of every item pages over both nodes: each item once" "121 121" \
    "$(echo $seen | wc -w) $(echo $seen | tr ' ' '\n' | sort -u | wc -l)"
check "a NextToken that was edited is refused" "YD001|The provided NextToken is not valid|ValidationException" \
    "$(error ExecuteStatement '{"Statement": "SELECT Artist FROM Music", "NextToken": "eyJub2RlIjogMn0=.AAAA"}')"
check "BatchExecuteStatement: each statement on its node, answers in order, an error in its place" \
    "song1 song2 ValidationError song3" \
    "$(call BatchExecuteStatement '{"Statements": [
        {"Statement": "SELECT Song FROM Music WHERE Artist = '"'"'artist1'"'"' AND Song = '"'"'song1'"'"'"},
        {"Statement": "SELECT Song FROM Music WHERE Artist = '"'"'artist2'"'"' AND Song = '"'"'song2'"'"'"},
        {"Statement": "SELEKT nothing"},
        {"Statement": "SELECT Song FROM Music WHERE Artist = '"'"'artist3'"'"' AND Song = '"'"'song3'"'"'"}]}' \
       "(SELECT string_agg(coalesce(x->'Item'->'Song'->>'S', x->'Error'->>'Code'), ' ') FROM jsonb_array_elements(r->'Responses') x)")"
check "ExecuteTransaction on one node" '{}' \
    "$(call ExecuteTransaction '{"TransactStatements": [
        {"Statement": "UPDATE Music SET n = 1 WHERE Artist = '"'"'artist9'"'"' AND Song = '"'"'song9'"'"'"},
        {"Statement": "INSERT INTO Music VALUE {'"'"'Artist'"'"': '"'"'artist9'"'"', '"'"'Song'"'"': '"'"'song9b'"'"'}"}]}')"
# Streams: the router's stream, a shard per node.
call CreateTable '{"TableName": "Events", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}}' >/dev/null
q -c "SELECT ddb_router.execute_metered(NULL, 'PutItem', jsonb_build_object('TableName', 'Events',
        'Item', jsonb_build_object('id', jsonb_build_object('S', 'event' || i)))) FROM generate_series(1, 20) i" >/dev/null
arn=$(call ListStreams '{"TableName": "Events"}' "r->'Streams'->0->>'StreamArn'")
check "ListStreams gives the router's stream" "$(call DescribeTable '{"TableName": "Events"}' "r->'Table'->>'LatestStreamArn'")" "$arn"
shards=$(call DescribeStream "{\"StreamArn\": \"$arn\"}" "(SELECT string_agg(s->>'ShardId', ' ') FROM jsonb_array_elements(r->'StreamDescription'->'Shards') s)")
check "DescribeStream has a shard per node" "2" "$(echo $shards | wc -w)"
events=""
for shard in $shards; do
    iterator=$(call GetShardIterator "{\"StreamArn\": \"$arn\", \"ShardId\": \"$shard\", \"ShardIteratorType\": \"TRIM_HORIZON\"}" "r->>'ShardIterator'")
    events="$events $(call GetRecords "{\"ShardIterator\": \"$iterator\"}" "(SELECT string_agg(e->'dynamodb'->'Keys'->'id'->>'S', ' ') FROM jsonb_array_elements(r->'Records') e)")"
done
check "reading every shard gives every item's record once" "20 20" "$(echo $events | wc -w) $(echo $events | tr ' ' '\n' | sort -u | wc -l)"
check "a shard that is no node's is ResourceNotFoundException" "YD004|ResourceNotFoundException" \
    "$(error GetShardIterator "{\"StreamArn\": \"$arn\", \"ShardId\": \"shardId-00000009-1\", \"ShardIteratorType\": \"LATEST\"}" | cut -d'|' -f1,3)"
check "an iterator the router did not seal is the node's ValidationException" "YD001|Invalid ShardIterator|ValidationException" \
    "$(error GetRecords '{"ShardIterator": "WzEsICJ4Il0=.AAAA"}')"
# Authorization: each node checks the request as its role; a grant is made everywhere.
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS ddb_router_reader" -c "CREATE ROLE ddb_router_reader NOLOGIN"
q -c "SELECT ddb_router.grant_tables('ddb_router_reader', 'Music', read_only => true)" >/dev/null
check "a grant is made on the router and every node" "1|1+1" \
    "$(q -c "SELECT count(*) FROM ddb.table_grants WHERE role_name = 'ddb_router_reader'")|$(on_nodes "SELECT count(*) FROM ddb.table_grants WHERE role_name = 'ddb_router_reader'")"
check "a read-only role reads through the router" '{"S": "song42"}' \
    "$(q -c "SELECT ddb_router.answer_response(ddb_router.execute_metered('ddb_router_reader', 'GetItem',
        '{\"TableName\": \"Music\", \"Key\": {\"Artist\": {\"S\": \"artist42\"}, \"Song\": {\"S\": \"song42\"}}}'))->'Item'->'Song'")"
check "and is refused a write by the item's node" "YD010|AccessDeniedException" \
    "$(q -c "DO \$d\$ BEGIN PERFORM ddb_router.execute_metered('ddb_router_reader', 'PutItem', '{\"TableName\": \"Music\", \"Item\": {\"Artist\": {\"S\": \"x\"}, \"Song\": {\"S\": \"y\"}}}');
          EXCEPTION WHEN OTHERS THEN DECLARE s text; d text;
          BEGIN GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, d = PG_EXCEPTION_DETAIL;
                RAISE NOTICE '%|%', s, split_part(d::jsonb->>'__type', '#', 2); END; END \$d\$" 2>&1 | sed 's/^NOTICE:  //')"
check "and refused a table it was not granted" "YD010" \
    "$(q -c "DO \$d\$ BEGIN PERFORM ddb_router.execute_metered('ddb_router_reader', 'Scan', '{\"TableName\": \"Events\"}');
          EXCEPTION WHEN OTHERS THEN DECLARE s text; BEGIN GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE; RAISE NOTICE '%', s; END; END \$d\$" 2>&1 | sed 's/^NOTICE:  //')"
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS ddb_router_other" -c "CREATE ROLE ddb_router_other NOLOGIN"
q -c "GRANT USAGE ON SCHEMA ddb_router TO ddb_router_other"
check "a caller who may not act as a role cannot have the router act as it" "42501" \
    "$(q -c "SET ROLE ddb_router_other" -c "DO \$d\$ BEGIN PERFORM ddb_router.execute_metered('ddb_router_reader', 'Scan', '{\"TableName\": \"Music\"}');
          EXCEPTION WHEN OTHERS THEN DECLARE s text; BEGIN GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE; RAISE NOTICE '%', s; END; END \$d\$" 2>&1 | sed 's/^NOTICE:  //')"
check "without a role it acts on the nodes as itself, not as the router's node user: refused a table it was not given" "refused" \
    "$(q -c "SET ROLE ddb_router_other" -c "DO \$d\$ BEGIN PERFORM ddb_router.execute_metered(NULL, 'Scan', '{\"TableName\": \"Music\"}');
          RAISE NOTICE 'served';
          EXCEPTION WHEN insufficient_privilege OR SQLSTATE 'YD010' THEN RAISE NOTICE 'refused'; END \$d\$" 2>&1 | sed 's/^NOTICE:  //')"
check "nor call the router's way to the nodes itself" "42501" \
    "$(q -c "SET ROLE ddb_router_other" -c "DO \$d\$ BEGIN PERFORM ddb_router.node_execute(0, 'ddb_router_reader', 'Scan', '{\"TableName\": \"Music\"}');
          EXCEPTION WHEN OTHERS THEN DECLARE s text; BEGIN GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE; RAISE NOTICE '%', s; END; END \$d\$" 2>&1 | sed 's/^NOTICE:  //')"
q -c "SELECT ddb_router.revoke_tables('ddb_router_reader', 'Music')" >/dev/null
check "a revoke is made everywhere" "0|0+0" \
    "$(q -c "SELECT count(*) FROM ddb.table_grants WHERE role_name = 'ddb_router_reader'")|$(on_nodes "SELECT count(*) FROM ddb.table_grants WHERE role_name = 'ddb_router_reader'")"

# Table settings go to the router and every node like any change of a table
call UpdateTable '{"TableName": "Music", "DeletionProtectionEnabled": true}' >/dev/null
check "DeletionProtectionEnabled is set on the router and every node" "t|t+t" \
    "$(q -c "SELECT deletion_protection FROM ddb.tables WHERE table_name = 'Music'")|$(on_nodes "SELECT deletion_protection FROM ddb.tables WHERE table_name = 'Music'")"
check "DescribeTable through the router says so" "true" "$(call DescribeTable '{"TableName": "Music"}' "r->'Table'->'DeletionProtectionEnabled'")"
check "DeleteTable of a protected table is refused through the router, as DynamoDB refuses it" \
    "YD001|Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.|ValidationException" \
    "$(error DeleteTable '{"TableName": "Music"}')"
check "and the table stays on the router and every node" "1|1+1" \
    "$(q -c "SELECT count(*) FROM ddb.tables WHERE table_name = 'Music'")|$(on_nodes "SELECT count(*) FROM ddb.tables WHERE table_name = 'Music'")"
call UpdateTable '{"TableName": "Music", "DeletionProtectionEnabled": false}' >/dev/null
check "DescribeLimits is answered by the router" "40000 80000" \
    "$(call DescribeLimits '{}' "concat_ws(' ', r->>'TableMaxReadCapacityUnits', r->>'AccountMaxWriteCapacityUnits')")"
check "DescribeEndpoints gives the address its caller (ddb-gateway) set on the router's connection" "dynamodb.example.com:8443 1440" \
    "$(q -c "SET ddb.endpoint_address = 'dynamodb.example.com:8443'" -c "SELECT concat_ws(' ', r->'Endpoints'->0->>'Address', r->'Endpoints'->0->>'CachePeriodInMinutes')
        FROM ddb_router.answer_response(ddb_router.execute_metered(NULL, 'DescribeEndpoints', '{}')) r")"

# ddb_router.so is a library of its own (src/router/): ddb_model.so holds
# none of it, it reaches ddb_model.so's functions only by looking them up
# when it is loaded (src/router/model_imports.h), and a server that never
# loads it has none of its settings.
libdir=$(pg_config --pkglibdir)
check "ddb_router.so is a library of its own" "yes" "$([ -f "$libdir/ddb_router.so" ] && echo yes)"
check "ddb_model.so exports no symbol of the router" "0" "$(nm -D --defined-only "$libdir/ddb_model.so" | grep -ci router)"
check "ddb_router.so binds no symbol of ddb_model.so" "" \
    "$(comm -12 <(nm -D --undefined-only "$libdir/ddb_router.so" | awk '{print $2}' | sort -u) \
                <(nm -D --defined-only "$libdir/ddb_model.so" | awk '{print $3}' | sort -u))"
check "the C functions of ddb_router are in ddb_router.so" '$libdir/ddb_router' "$(q -c "
    SELECT string_agg(DISTINCT p.probin, ', ') FROM pg_proc p
    JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
    WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'ddb_router')
      AND p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')")"
check "a server that loaded ddb_model alone has no ddb_router.* settings" "0" \
    "$(q -d "${NODES[0]}" -c "LOAD 'ddb_model'" -c "SELECT count(*) FROM pg_settings WHERE name LIKE 'ddb_router.%'")"
check "the router's library defines them when it is loaded" "2" \
    "$(q -c "LOAD 'ddb_router'" -c "SELECT count(*) FROM pg_settings WHERE name LIKE 'ddb_router.%'")"
# The placements are cached per backend in a memory context of their own,
# read again once a change of them commits (in this backend or another).
dblink_schema=$(q -c "SELECT ddb_router.dblink_schema()")
routes_as() { echo "SELECT ddb_router.route_hash('Music', ddb.ddb_key('artist1')) = ddb.ddb_key_route_hash(ddb.ddb_key('$1'))"; }
check "a placement committed by another backend, then its removal by this one, are seen by the next routing" \
    "t|ddb_router placements:CacheMemoryContext|t|t|t" "$(q -c "$(routes_as artist1)" \
    -c "SELECT ident || ':' || parent FROM pg_backend_memory_contexts WHERE name = 'ddb_router cache'" \
    -c "SELECT \"$dblink_schema\".dblink_exec('$(node_dsn "$ROUTER")',
            \$s\$INSERT INTO ddb_router.placements VALUES ('Music', 'artist1', 'artist2')\$s\$) <> ''" \
    -c "$(routes_as artist2)" \
    -c "DELETE FROM ddb_router.placements WHERE table_pattern = 'Music'" \
    -c "$(routes_as artist1)" | paste -sd'|')"

call DeleteTable '{"TableName": "Music"}' >/dev/null
check "DeleteTable removes the table from the router and every node" "0|0+0" \
    "$(q -c "SELECT count(*) FROM ddb.tables WHERE table_name = 'Music'")|$(on_nodes "SELECT count(*) FROM ddb.tables WHERE table_name = 'Music'")"

drop_db "$ROUTER" "${NODES[@]}"
psql -X -q -d postgres -c "DROP ROLE ddb_router_reader" -c "DROP ROLE ddb_router_other"
done_testing
