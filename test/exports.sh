#!/usr/bin/env bash
# ExportTableToPointInTime and ImportTable end to end (docs/transfer.md),
# with Debian's AWS CLI through ddb-gateway: full exports (now, and at an
# earlier moment of point-in-time recovery's window), an incremental
# export, their files and manifests checked against DynamoDB's format, the
# export imported into a new table and compared (items and GSIs), an import
# with bad lines, and the failures DynamoDB reports.  Runs against the
# cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set); sets ddb.export_root
# for its run (ALTER SYSTEM) and resets it; prints TAP (test/lib.sh).
#
# Debian 12's AWS CLI (2.9.19) predates incremental exports (September
# 2023): the suite gives its model ExportType and IncrementalExportSpecification
# as AWS's current model has them, through AWS_DATA_PATH.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir exports
DB=ddb_exports
PORT=${EXPORTS_TEST_PORT:-55578}
ENDPOINT="http://127.0.0.1:$PORT"
BUCKETS="$WORK/buckets"
ARN=arn:aws:dynamodb:ddb-model:000000000000:table

# the server's setting, for this run only
set_root() { psql -X -q -d postgres -c "LOAD 'ddb_model'" -c "ALTER SYSTEM $1" -c "SELECT pg_reload_conf()" >/dev/null; }
at_exit 'set_root "RESET ddb.export_root"; set_root "RESET ddb.transfer_program"'

fresh_db --extension "$DB"
read -r key secret <<<"$(q -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
# buckets are directories the server's user writes: "exports" and "imports" exist, "missing" does not
mkdir -p "$BUCKETS/exports" "$BUCKETS/imports"
chown -R postgres "$BUCKETS"
set_root "SET ddb.export_root = '$BUCKETS'"

start_gateway "$PORT" "$WORK/gateway.log" --dsn "dbname=$DB" --pool 2

# the CLI's model, with the incremental export's members where AWS's current model has them
/usr/bin/python3 - "$WORK/models" <<'PY' || echo "the AWS CLI's model could not be read: the incremental export's checks fail"
import json, os, sys
try:
    import awscli.botocore as botocore
except ImportError:
    import botocore
model = json.load(open(os.path.join(os.path.dirname(botocore.__file__), "data", "dynamodb", "2012-08-10", "service-2.json")))
shapes = model["shapes"]
shapes.setdefault("ExportType", {"type": "string", "enum": ["FULL_EXPORT", "INCREMENTAL_EXPORT"]})
shapes.setdefault("ExportViewType", {"type": "string", "enum": ["NEW_IMAGE", "NEW_AND_OLD_IMAGES"]})
shapes.setdefault("ExportFromTime", {"type": "timestamp"})
shapes.setdefault("ExportToTime", {"type": "timestamp"})
shapes.setdefault("IncrementalExportSpecification", {"type": "structure", "members": {
    "ExportFromTime": {"shape": "ExportFromTime"}, "ExportToTime": {"shape": "ExportToTime"},
    "ExportViewType": {"shape": "ExportViewType"}}})
for shape in ("ExportTableToPointInTimeInput", "ExportDescription", "ExportSummary"):
    shapes[shape]["members"].setdefault("ExportType", {"shape": "ExportType"})
for shape in ("ExportTableToPointInTimeInput", "ExportDescription"):
    shapes[shape]["members"].setdefault("IncrementalExportSpecification", {"shape": "IncrementalExportSpecification"})
os.makedirs(os.path.join(sys.argv[1], "dynamodb", "2012-08-10"))
json.dump(model, open(os.path.join(sys.argv[1], "dynamodb", "2012-08-10", "service-2.json"), "w"))
PY
aws() {
    AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_DEFAULT_REGION=us-east-1 AWS_PAGER= AWS_CONFIG_FILE=/dev/null \
        AWS_DATA_PATH="$WORK/models" /usr/bin/aws --endpoint-url "$ENDPOINT" --output json "$@" 2>&1
}
# json FILE EXPRESSION: a value of the JSON in FILE (python's, on "j"); lists joined by spaces
json() {
    /usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(" ".join(map(str, v)) if isinstance(v, list) else v)' "$1" "$2" 2>&1
}
# job_status KIND ARN: polls describe-export or describe-import until the status is not IN_PROGRESS (30 s); prints it
job_status() {
    local kind=$1 arn=$2 field job
    field=$([ "$kind" = export ] && echo ExportDescription.ExportStatus || echo ImportTableDescription.ImportStatus)
    wait_for 30 'job=$(aws dynamodb "describe-$kind" "--$kind-arn" "$arn" --query "$field" --output text); [ "$job" != IN_PROGRESS ]'
    echo "$job"
}
# digest TABLE: md5 of the natural items of a table, in key order
digest() { q -c "SELECT md5(coalesce(string_agg(item::text, E'\n' ORDER BY pk, sk), '')) FROM public.\"$1\""; }
# the directory of an export, from its ARN
export_dir() { find "$BUCKETS" -type d -path "*/AWSDynamoDB/${1##*/}"; }

# ---- a table with a GSI, every type, a TTL; point-in-time recovery ----
aws dynamodb create-table --table-name Orders --billing-mode PAY_PER_REQUEST \
    --attribute-definitions AttributeName=pk,AttributeType=S AttributeName=sk,AttributeType=N AttributeName=status,AttributeType=S \
    --key-schema AttributeName=pk,KeyType=HASH AttributeName=sk,KeyType=RANGE \
    --global-secondary-indexes 'IndexName=byStatus,KeySchema=[{AttributeName=status,KeyType=HASH},{AttributeName=sk,KeyType=RANGE}],Projection={ProjectionType=ALL}' \
    >/dev/null
q -c "SELECT ddb.update_time_to_live('Orders', 'ttl')" >/dev/null
q >/dev/null <<'SQL'
SELECT ddb.execute('PutItem', jsonb_build_object('TableName', 'Orders', 'Item', i)) FROM (VALUES
  ('{"pk": {"S": "types"}, "sk": {"N": "1"}, "status": {"S": "open"}, "b": {"B": "AAEC/w=="}, "t": {"BOOL": true},
     "z": {"NULL": true}, "ss": {"SS": ["a", "b c"]}, "ns": {"NS": ["1", "2.5"]}, "bs": {"BS": ["AAE="]},
     "l": {"L": [{"S": "x"}, {"M": {"n": {"N": "-1e-5"}}}]}, "esc": {"S": "tab\there \"quoted\" back\\slash ✓"}}'::jsonb),
  ('{"pk": {"S": "expired"}, "sk": {"N": "1"}, "ttl": {"N": "1000000000"}}'),
  ('{"pk": {"S": "lives"}, "sk": {"N": "1"}, "ttl": {"N": "4102444800"}}')) v(i);
SELECT count(ddb.put_item('Orders', jsonb_strip_nulls(jsonb_build_object('pk', 'order#' || (i % 50), 'sk', i,
                                      'status', CASE WHEN i % 3 = 0 THEN 'shipped' END, 'total', i * 1.5))))
FROM generate_series(1, 2000) i;
SQL
check "a table without point-in-time recovery is not exported" "PointInTimeRecoveryUnavailableException" \
    "$(aws dynamodb export-table-to-point-in-time --table-arn "$ARN/Orders" --s3-bucket exports | grep -o PointInTimeRecoveryUnavailableException)"
aws dynamodb update-continuous-backups --table-name Orders \
    --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true >/dev/null
visible=$(q -c "SELECT count(*) FROM public.\"Orders\" WHERE ddb.ttl_visible(expires_at)")
before_digest=$(digest Orders)
sleep 1.1
earlier=$(q -c "SELECT extract(epoch FROM clock_timestamp())")
sleep 1.1
# after that moment: an item overwritten, one deleted, one added
q >/dev/null <<'SQL'
SELECT ddb.put_item('Orders', '{"pk": "order#1", "sk": 1, "status": "returned", "total": 0}');
SELECT ddb.delete_item('Orders', 'order#2', 2);
SELECT ddb.put_item('Orders', '{"pk": "late", "sk": 1}');
SQL

# ---- a full export, now ----
aws dynamodb export-table-to-point-in-time --table-arn "$ARN/Orders" --s3-bucket exports --s3-prefix orders/full \
    --s3-sse-algorithm AES256 >"$WORK/export.json"
export_arn=$(json "$WORK/export.json" 'j["ExportDescription"]["ExportArn"]')
check "export-table-to-point-in-time answers at once, IN_PROGRESS" "IN_PROGRESS FULL_EXPORT DYNAMODB_JSON" \
    "$(json "$WORK/export.json" '[j["ExportDescription"][k] for k in ("ExportStatus", "ExportType", "ExportFormat")]')"
check "its ARN is the table's /export/<id>, as DynamoDB's" "1" \
    "$(echo "$export_arn" | grep -cE "^$ARN/Orders/export/[0-9]{14}-[0-9a-f]{8}$")"
check "describe-export: COMPLETED" "COMPLETED" "$(job_status export "$export_arn")"
aws dynamodb describe-export --export-arn "$export_arn" >"$WORK/described.json"
dir=$(export_dir "$export_arn")
check "the files are in the bucket's directory, under the prefix" "$BUCKETS/exports/orders/full/AWSDynamoDB/${export_arn##*/}" "$dir"
check "ExportManifest names the summary's key in the bucket" "1" \
    "$(test -f "$BUCKETS/exports/$(json "$WORK/described.json" 'j["ExportDescription"]["ExportManifest"]')" && echo 1)"
check "ItemCount: the items a read sees now (not the expired one)" "$visible" \
    "$(json "$WORK/described.json" 'j["ExportDescription"]["ItemCount"]')"
check "BilledSizeBytes: the items' sizes" "$(q -c "SELECT sum(item_size) FROM public.\"Orders\" WHERE ddb.ttl_visible(expires_at)")" \
    "$(json "$WORK/described.json" 'j["ExportDescription"]["BilledSizeBytes"]')"
check "_started, the manifests and their checksums are there" "_started data manifest-files.checksum manifest-files.json manifest-summary.checksum manifest-summary.json" \
    "$(ls "$dir" | tr '\n' ' ' | sed 's/ $//')"
check "manifest-summary.json: DynamoDB's members" \
    "2020-06-30 FULL_EXPORT DYNAMODB_JSON exports orders/full AES256 $visible $export_arn $ARN/Orders" \
    "$(json "$dir/manifest-summary.json" '[j[k] for k in ("version", "exportType", "outputFormat", "s3Bucket", "s3Prefix", "s3SseAlgorithm", "itemCount", "exportArn", "tableArn")]')"
check "the checksums are the manifests' MD5s" "$(md5sum <"$dir/manifest-files.json" | cut -c1-32) $(md5sum <"$dir/manifest-summary.json" | cut -c1-32)" \
    "$(cat "$dir/manifest-files.checksum") $(cat "$dir/manifest-summary.checksum")"
manifest_ok=$(while read -r line; do
    file="$dir/data/$(echo "$line" | sed 's|.*"dataFileS3Key":"[^"]*/data/\([^"]*\)".*|\1|')"
    count=$(echo "$line" | sed 's/.*"itemCount":\([0-9]*\).*/\1/')
    md5=$(echo "$line" | sed 's/.*"md5Checksum":"\([^"]*\)".*/\1/')
    [ "$(zcat "$file" | wc -l)" = "$count" ] && [ "$(openssl md5 -binary <"$file" | base64)" = "$md5" ] && echo ok
done <"$dir/manifest-files.json" | sort -u)
check "manifest-files.json: each data file's item count and MD5" "ok" "$manifest_ok"
check "the data files are {\"Item\": ...} lines of DynamoDB JSON" "$visible" "$(zcat "$dir"/data/*.json.gz | grep -c '^{"Item":{')"
check "every type is written as DynamoDB's export writes it" "1" \
    "$(zcat "$dir"/data/*.json.gz | grep -c '"b":{"B":"AAEC/w=="}.*"l":{"L":\[{"S":"x"},{"M":{"n":{"N":"-0.00001"}}}\]}')"
check "list-exports lists it" "$export_arn" \
    "$(aws dynamodb list-exports --table-arn "$ARN/Orders" --query 'ExportSummaries[0].ExportArn' --output text)"

# ---- a full export at an earlier moment of the window ----
aws dynamodb export-table-to-point-in-time --table-arn "$ARN/Orders" --s3-bucket exports --s3-prefix orders/earlier \
    --export-time "$earlier" >"$WORK/export-earlier.json"
earlier_arn=$(json "$WORK/export-earlier.json" 'j["ExportDescription"]["ExportArn"]')
check "an export at an earlier time: COMPLETED" "COMPLETED" "$(job_status export "$earlier_arn")"
earlier_dir=$(export_dir "$earlier_arn")
check "it sees the items as they were: the overwritten one's old value, the deleted one, not the new one" "1 1 0 $visible" \
    "$(zcat "$earlier_dir"/data/*.json.gz | grep -c '"pk":{"S":"order#1"},"sk":{"N":"1"},"total":{"N":"1.5"}') $(
       zcat "$earlier_dir"/data/*.json.gz | grep -c '"pk":{"S":"order#2"},"sk":{"N":"2"}') $(
       zcat "$earlier_dir"/data/*.json.gz | grep -c '"pk":{"S":"late"}') $(zcat "$earlier_dir"/data/*.json.gz | wc -l)"
check "a moment before the window is InvalidExportTimeException" "InvalidExportTimeException" \
    "$(aws dynamodb export-table-to-point-in-time --table-arn "$ARN/Orders" --s3-bucket exports \
        --export-time "$(( ${earlier%.*} - 3600 ))" | grep -o InvalidExportTimeException)"

# ---- import the earlier export into a new table: the same items, the same GSI ----
creation='{"TableName": "OrdersCopy", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
                           {"AttributeName": "status", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "GlobalSecondaryIndexes": [{"IndexName": "byStatus", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"},
                             {"AttributeName": "sk", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}]}'
aws dynamodb import-table --s3-bucket-source "S3Bucket=exports,S3KeyPrefix=orders/earlier/AWSDynamoDB/${earlier_arn##*/}/data/" \
    --input-format DYNAMODB_JSON --input-compression-type GZIP --table-creation-parameters "$creation" >"$WORK/import.json"
import_arn=$(json "$WORK/import.json" 'j["ImportTableDescription"]["ImportArn"]')
check "import-table answers at once, IN_PROGRESS, its ARN the new table's /import/<id>" "IN_PROGRESS 1" \
    "$(json "$WORK/import.json" 'j["ImportTableDescription"]["ImportStatus"]') $(echo "$import_arn" | grep -cE "^$ARN/OrdersCopy/import/[0-9]{14}-[0-9a-f]{8}$")"
check "describe-import: COMPLETED" "COMPLETED" "$(job_status import "$import_arn")"
check "its counts: every line processed and imported, no error" "$visible $visible 0" \
    "$(aws dynamodb describe-import --import-arn "$import_arn" \
        --query '[ImportTableDescription.ProcessedItemCount, ImportTableDescription.ImportedItemCount, ImportTableDescription.ErrorCount]' \
        --output text | tr '\t' ' ')"
check "the new table is ACTIVE" "ACTIVE" "$(aws dynamodb describe-table --table-name OrdersCopy --query Table.TableStatus --output text)"
check "it holds the table's items as they were at the export's moment" "$before_digest" "$(digest OrdersCopy)"
check "and its GSI holds what the source's held" \
    "$(q -c "SELECT count(*) FROM public.\"Orders:byStatus\"") 0" \
    "$(( $(q -c "SELECT count(*) FROM public.\"OrdersCopy:byStatus\"") + 1 )) $(q -c "SELECT count(*) FROM ddb.verify_gsi('OrdersCopy')")"
check "a query of the GSI answers" "$(aws dynamodb query --table-name Orders --index-name byStatus --key-condition-expression '#s = :s' \
        --expression-attribute-names '{"#s": "status"}' --expression-attribute-values '{":s": {"S": "shipped"}}' --query Count)" \
    "$(aws dynamodb query --table-name OrdersCopy --index-name byStatus --key-condition-expression '#s = :s' \
        --expression-attribute-names '{"#s": "status"}' --expression-attribute-values '{":s": {"S": "shipped"}}' --query Count)"
check "list-imports lists it" "$import_arn" "$(aws dynamodb list-imports --query 'ImportSummaryList[0].ImportArn' --output text)"
check "importing into a table that exists is ResourceInUseException" "ResourceInUseException" \
    "$(aws dynamodb import-table --s3-bucket-source S3Bucket=exports --input-format DYNAMODB_JSON \
        --table-creation-parameters "$creation" | grep -o ResourceInUseException)"

# ---- an import with bad lines: the good items in, the bad ones counted and logged ----
mkdir -p "$BUCKETS/imports/mixed"
printf '%s\n' '{"Item": {"pk": {"S": "a"}, "n": {"N": "1"}}}' 'not json' '{"Item": {"pk": {"S": "b"}}}' \
    '{"Item": {"n": {"N": "2"}}}' '' '{"Item": {"pk": {"N": "3"}}}' '{"Item": {"pk": {"S": "c"}, "bad": {"N": "x"}}}' \
    | gzip >"$BUCKETS/imports/mixed/part-1.json.gz"
printf '%s\n' '{"Item": {"pk": {"S": "d"}}}' '{"Other": {}}' >"$BUCKETS/imports/mixed/part-2.json"
chown -R postgres "$BUCKETS/imports"
aws dynamodb import-table --s3-bucket-source S3Bucket=imports,S3KeyPrefix=mixed/part- --input-format DYNAMODB_JSON \
    --table-creation-parameters '{"TableName": "Mixed", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}' \
    >"$WORK/mixed.json"
mixed_arn=$(json "$WORK/mixed.json" 'j["ImportTableDescription"]["ImportArn"]')
check "an import with bad lines ends FAILED, as DynamoDB's" "FAILED" "$(job_status import "$mixed_arn")"
aws dynamodb describe-import --import-arn "$mixed_arn" >"$WORK/mixed-described.json"
check "with ItemValidationError, every line processed, the good ones imported, the bad ones counted" "ItemValidationError 8 3 5" \
    "$(json "$WORK/mixed-described.json" '[j["ImportTableDescription"][k] for k in ("FailureCode", "ProcessedItemCount", "ImportedItemCount", "ErrorCount")]')"
check "the table is ACTIVE with the good items" "ACTIVE a b d" \
    "$(aws dynamodb describe-table --table-name Mixed --query Table.TableStatus --output text) $(q -c "SELECT string_agg(item->>'pk', ' ' ORDER BY pk) FROM public.\"Mixed\"")"
check "each error is logged with its file and line, as DynamoDB logs them" \
    "mixed/part-1.json.gz:1 mixed/part-1.json.gz:3 mixed/part-1.json.gz:4 mixed/part-1.json.gz:5 mixed/part-2.json:1" \
    "$(q -c "SELECT string_agg((e->'itemS3Pointer'->>'key') || ':' || (e->'itemS3Pointer'->>'itemIndex'), ' '
                                ORDER BY e->'itemS3Pointer'->>'key', (e->'itemS3Pointer'->>'itemIndex')::int)
             FROM ddb.jobs j, jsonb_array_elements(j.progress->'ErrorLog') e WHERE j.spec->>'ImportArn' = '$mixed_arn'")"
check "in DynamoDB's words" "One or more parameter values were invalid: Missing the key pk in the item" \
    "$(q -c "SELECT e->'errorMessages'->>0 FROM ddb.jobs j, jsonb_array_elements(j.progress->'ErrorLog') e
             WHERE j.spec->>'ImportArn' = '$mixed_arn' AND e->'itemS3Pointer'->>'itemIndex' = '3'")"

# ---- an import's step runs as a security-restricted operation: code the role controls cannot change the session ----
mkdir -p "$BUCKETS/imports/trap"
printf '%s\n' '{"Item": {"pk": {"S": "a"}}}' >"$BUCKETS/imports/trap/part-1.json"
chown -R postgres "$BUCKETS/imports"
q >/dev/null <<'SQL'
BEGIN;
SELECT ddb.execute('ImportTable', '{"S3BucketSource": {"S3Bucket": "imports", "S3KeyPrefix": "trap/"}, "InputFormat": "DYNAMODB_JSON",
    "TableCreationParameters": {"TableName": "Trapped", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}}');
CREATE FUNCTION public.trap() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    CREATE TEMP TABLE IF NOT EXISTS trapped_session (x int);
    RETURN NEW;
END $$;
CREATE TRIGGER trap BEFORE INSERT ON public."Trapped" FOR EACH ROW EXECUTE FUNCTION public.trap();
COMMIT;
SQL
trap_arn=$(q -c "SELECT spec->>'ImportArn' FROM ddb.jobs WHERE spec->>'TableName' = 'Trapped'")
trap_status=$(job_status import "$trap_arn")
aws dynamodb describe-import --import-arn "$trap_arn" >"$WORK/trap.json"
check "an error that is no item's ends the import: FAILED, UNKNOWN, no item counted bad, the table gone" "FAILED UNKNOWN 0 0" \
    "$trap_status $(json "$WORK/trap.json" '[j["ImportTableDescription"][k] for k in ("FailureCode", "ErrorCount")]') $(
       q -c "SELECT count(*) FROM ddb.tables WHERE table_name = 'Trapped'")"
check "a trigger of the role's on its import table cannot make session objects in the worker (a security-restricted operation)" "1" \
    "$(json "$WORK/trap.json" 'j["ImportTableDescription"]["FailureMessage"]' | grep -c 'within security-restricted operation')"
q -c "DROP FUNCTION public.trap() CASCADE" >/dev/null 2>&1

# ---- an incremental export: the changes of a period, as DynamoDB's incremental export writes them ----
q >/dev/null <<'SQL'
SELECT ddb.create_table('Events', 'pk');
SELECT ddb.put_item('Events', jsonb_build_object('pk', k, 'v', 0)) FROM unnest(ARRAY['a', 'b', 'c', 'd']) k;
SELECT ddb.execute('UpdateContinuousBackups', '{"TableName": "Events", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}');
SQL
# the period must be 15 minutes at least: the history is moved three hours back, then the changes made and moved one hour back
history=$(q -c "SELECT history_relation FROM ddb.continuous_backups WHERE table_name = 'Events'")
q -c "UPDATE public.\"$history\" SET changed_at = changed_at - interval '3 hours'" \
  -c "UPDATE ddb.continuous_backups SET enabled_at = enabled_at - interval '3 hours' WHERE table_name = 'Events'" >/dev/null
q >/dev/null <<'SQL'
SELECT ddb.put_item('Events', '{"pk": "a", "v": 1}');      -- updated
SELECT ddb.delete_item('Events', 'b');                      -- deleted
SELECT ddb.put_item('Events', '{"pk": "c", "v": 1}');      -- updated, then deleted
SELECT ddb.delete_item('Events', 'c');
SELECT ddb.put_item('Events', '{"pk": "e", "v": 1}');      -- made
SELECT ddb.put_item('Events', '{"pk": "f", "v": 1}');      -- made, then deleted: no line
SELECT ddb.delete_item('Events', 'f');
SQL
q -c "UPDATE public.\"$history\" SET changed_at = changed_at - interval '1 hour' WHERE changed_at > now() - interval '1 hour'" >/dev/null
from=$(q -c "SELECT floor(extract(epoch FROM now() - interval '2 hours'))")
to=$(q -c "SELECT floor(extract(epoch FROM now() - interval '30 minutes'))")
incremental() {  # VIEW PREFIX: starts an incremental export of the period; prints its ARN
    aws dynamodb export-table-to-point-in-time --table-arn "$ARN/Events" --s3-bucket exports --s3-prefix "$2" \
        --export-type INCREMENTAL_EXPORT \
        --incremental-export-specification "ExportFromTime=$from,ExportToTime=$to,ExportViewType=$1" \
        --query ExportDescription.ExportArn --output text
}
# a line's shape: its key, then which of NewImage and OldImage it has and their v
shape() { /usr/bin/python3 -c 'import json, sys
for line in sys.stdin:
    j = json.loads(line)
    print(j["Keys"]["pk"]["S"], *(k + "=" + j[k]["v"]["N"] for k in ("NewImage", "OldImage") if k in j),
          "micros" if int(j["Metadata"]["WriteTimestampMicros"]["N"]) > 10**15 else "")' | sort | tr '\n' ';'; }
both_arn=$(incremental NEW_AND_OLD_IMAGES changes/both)
check "an incremental export (NEW_AND_OLD_IMAGES): COMPLETED" "COMPLETED" "$(job_status export "$both_arn")"
both_dir=$(export_dir "$both_arn")
check "per item changed, its last change: made (NewImage), updated (both), deleted (OldImage); made and deleted: nothing" \
    "a NewImage=1 OldImage=0 micros;b OldImage=0 micros;c OldImage=0 micros;e NewImage=1 micros;" \
    "$(zcat "$both_dir"/data/*.json.gz | shape)"
new_arn=$(incremental NEW_IMAGE changes/new)
check "NEW_IMAGE: no OldImage" "COMPLETED a NewImage=1 micros;b micros;c micros;e NewImage=1 micros;" \
    "$(job_status export "$new_arn") $(zcat "$(export_dir "$new_arn")"/data/*.json.gz | shape)"
check "its manifest-summary.json: an incremental export's members" \
    "2023-08-01 INCREMENTAL_EXPORT NEW_AND_OLD_IMAGES 4 True True" \
    "$(json "$both_dir/manifest-summary.json" '[j["version"], j["exportType"], j["outputView"], j["itemCount"], "exportFromTime" in j, "exportTime" not in j]')"
aws dynamodb describe-export --export-arn "$both_arn" >"$WORK/both.json"
check "describe-export gives its IncrementalExportSpecification" "INCREMENTAL_EXPORT NEW_AND_OLD_IMAGES True True" \
    "$(json "$WORK/both.json" '[j["ExportDescription"]["ExportType"], j["ExportDescription"]["IncrementalExportSpecification"]["ExportViewType"]] + [k in j["ExportDescription"]["IncrementalExportSpecification"] for k in ("ExportFromTime", "ExportToTime")]')"
check "ddb-transfer import refuses it (it holds changes, not items)" "1" \
    "$("$ROOT/ddb-transfer" import --table Events "$both_dir" 2>&1 | grep -c "INCREMENTAL_EXPORT: it holds changes")"
check "a period shorter than 15 minutes is ValidationException" "ValidationException" \
    "$(aws dynamodb export-table-to-point-in-time --table-arn "$ARN/Events" --s3-bucket exports --export-type INCREMENTAL_EXPORT \
        --incremental-export-specification "ExportFromTime=$from,ExportToTime=$((from + 60))" | grep -o ValidationException)"

# ---- failures ----
aws dynamodb export-table-to-point-in-time --table-arn "$ARN/Orders" --s3-bucket missing >"$WORK/missing.json"
missing_arn=$(json "$WORK/missing.json" 'j["ExportDescription"]["ExportArn"]')
check "a bucket that does not exist: the export FAILED with S3NoSuchBucket" "FAILED S3NoSuchBucket" \
    "$(job_status export "$missing_arn") $(aws dynamodb describe-export --export-arn "$missing_arn" --query ExportDescription.FailureCode --output text)"
check "describe-export of an unknown export is ExportNotFoundException" "ExportNotFoundException" \
    "$(aws dynamodb describe-export --export-arn "$ARN/Orders/export/01700000000000-00000000" | grep -o ExportNotFoundException)"
check "describe-import of an unknown import is ImportNotFoundException" "ImportNotFoundException" \
    "$(aws dynamodb describe-import --import-arn "$ARN/Orders/import/01700000000000-00000000" | grep -o ImportNotFoundException)"
check "a prefix that climbs out of the bucket is ValidationException" "ValidationException" \
    "$(aws dynamodb export-table-to-point-in-time --table-arn "$ARN/Orders" --s3-bucket exports --s3-prefix ../../x | grep -o ValidationException)"
check "nothing was written outside the buckets" "exports imports" "$(ls "$BUCKETS" | tr '\n' ' ' | sed 's/ $//')"
# list-exports PAGES: the exports listed, page after page of 2 by NextToken, and how many pages
list_pages() {
    local token= pages=0 total=0
    while :; do
        aws dynamodb list-exports --max-results 2 ${token:+--next-token "$token"} >"$WORK/page.json"
        total=$((total + $(json "$WORK/page.json" 'len(j["ExportSummaries"])')))
        pages=$((pages + 1))
        token=$(json "$WORK/page.json" 'j.get("NextToken", "")')
        [ -n "$token" ] && [ "$pages" -lt 10 ] || break
    done
    echo "$total exports in $pages pages"
}
check "list-exports pages with NextToken" "5 exports in 3 pages" "$(list_pages)"
# ---- a ddb-transfer that hangs: pg_terminate_backend ends its worker, and the program with it ----
# (the program ignores SIGTERM, which pg_terminate_backend sends the worker's process group)
printf '#!/bin/sh\ntrap "" TERM\nexec sleep 307\n' >"$WORK/hang.sh"
chmod 755 "$WORK/hang.sh"
set_root "SET ddb.transfer_program = '$WORK/hang.sh'"
hang_arn=$(aws dynamodb export-table-to-point-in-time --table-arn "$ARN/Orders" --s3-bucket exports --s3-prefix hang \
    --query ExportDescription.ExportArn --output text)
workers="SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'ddb_model job'"
waiting="$workers AND wait_event = 'Extension'"
wait_for 5 '[ "$(q -c "$waiting")" = 1 ]'
q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'ddb_model job'" >/dev/null
wait_for 5 '[ "$(q -c "$workers")" = 0 ]'
check "pg_terminate_backend ends a worker whose ddb-transfer hangs (FAILED), and kills the program" "FAILED 0 0" \
    "$(job_status export "$hang_arn") $(q -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'ddb_model job'") $(
       pgrep -c -f 'sleep 307')"

# ---- a failed export says why: the first line of what ddb-transfer said, not the last ----
printf '#!/bin/sh\ncat >/dev/null\necho "ddb-transfer: x.json.gz: cannot write it: No space left on device"\necho "ddb-transfer: the export in %s is incomplete (it has no manifest-summary.json)"\nexit 1\n' \
    "$BUCKETS/exports/full" >"$WORK/full.sh"
chmod 755 "$WORK/full.sh"
set_root "SET ddb.transfer_program = '$WORK/full.sh'"
full_arn=$(aws dynamodb export-table-to-point-in-time --table-arn "$ARN/Orders" --s3-bucket exports --s3-prefix full \
    --query ExportDescription.ExportArn --output text)
check "a failed export's FailureMessage is the cause" \
    "FAILED UNKNOWN the export's files could not be written: ddb-transfer: x.json.gz: cannot write it: No space left on device" \
    "$(job_status export "$full_arn") $(aws dynamodb describe-export --export-arn "$full_arn" \
        --query '[ExportDescription.FailureCode, ExportDescription.FailureMessage]' --output text | tr '\t' ' ')"
set_root "RESET ddb.transfer_program"
check "no worker is left running" "0" \
    "$(q -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'ddb_model job'")"
check "the server logged no crash" "0" "$(grep -c 'terminated by signal' "$DDB_SERVER_LOG")"

done_testing
