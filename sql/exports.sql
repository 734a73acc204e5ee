-- ---------------------------------------------------------------------------
-- Exports to S3 (docs/transfer.md): ExportTableToPointInTime,
-- DescribeExport, ListExports; and what imports share with them (S3
-- locations, times, failures).  S3 is a directory here: bucket B
-- is <ddb.export_root>/B, which must exist.  An export is a background job
-- (sql/jobs.sql) of kind 'export', its row of ddb.jobs the export's record
-- (its spec the request, its progress the counts), so that each role sees
-- the exports it made; the job's worker reads the table's items at the
-- export's time from point-in-time recovery's history (sql/pitr.sql) and
-- streams them to `ddb-transfer write-export`, which writes DynamoDB's
-- files (src/exports/).
-- ---------------------------------------------------------------------------

-- A timestamp member (epoch seconds, as DynamoDB's JSON protocol sends
-- them), or NULL when absent; SerializationException when no number.
CREATE FUNCTION ddb.request_timestamp(value jsonb, name text) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF value IS NULL OR jsonb_typeof(value) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(value) <> 'number' OR abs(value::text::numeric) > 1e11 THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006',
            MESSAGE = format('Unexpected value type in payload for %s: expected a timestamp (epoch seconds)', name);
    END IF;
    RETURN to_timestamp(value::text::double precision);
END $$;

-- A moment as DynamoDB's manifests write it: 2020-11-04T07:28:34.028Z.
CREATE FUNCTION ddb.iso_time(moment timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN to_char(moment AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');

-- A new export or import id, DynamoDB's shape: epoch milliseconds, a dash, 8 hex digits.
CREATE FUNCTION ddb.transfer_id() RETURNS text
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
RETURN lpad(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint::text, 14, '0')
       || '-' || left(replace(gen_random_uuid()::text, '-', ''), 8);

-- The constraints an S3 location of a request breaks (S3Bucket,
-- S3BucketOwner, and the key prefix, member prefix_member: S3Prefix or
-- S3KeyPrefix), as S3's names are checked; path: where the request has them.
CREATE FUNCTION ddb.s3_location_violations(location jsonb, prefix_member text, path text) RETURNS text[]
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN ddb.string_violations(location->'S3Bucket', 'S3Bucket', path || 's3Bucket', true, NULL, 255,
                             '^[a-z0-9A-Z]+[-._a-zA-Z0-9]*[a-z0-9A-Z]+$', '^[a-z0-9A-Z]+[\.\-\w]*[a-z0-9A-Z]+$')
    || ddb.string_violations(location->'S3BucketOwner', 'S3BucketOwner', path || 's3BucketOwner', false, NULL, NULL,
                             '^[0-9]{12}$', '[0-9]{12}')
    || ddb.string_violations(location->prefix_member, prefix_member,
                             path || lower(left(prefix_member, 1)) || substr(prefix_member, 2), false, NULL, 1024);

-- Raises ValidationException when the server keeps no buckets (ddb.export_root is not set).
CREATE FUNCTION ddb.require_export_root() RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF coalesce(current_setting('ddb.export_root', true), '') = '' THEN
        PERFORM ddb.validation_error('Exports and imports are off on this server: its administrator sets ddb.export_root, '
                                     'the directory that holds the S3 buckets (docs/transfer.md)');
    END IF;
END $$;

-- Raises ValidationException for a key prefix that cannot name a directory below its bucket's (a part . or ..).
CREATE FUNCTION ddb.check_s3_prefix(prefix text, member text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_check_s3_prefix' LANGUAGE C IMMUTABLE STRICT;

-- The key prefixes of the buckets that roles' exports claimed: the first
-- role that exports to a prefix claims it (its directory, no slash at its
-- end; '' for the bucket's root), and another role may then neither export
-- to it, nor above or below it, nor import from any key under it
-- (src/exports/s3_claims.c, docs/transfer.md).  The extension's code
-- writes it, as its owner; no role reads it.
CREATE TABLE ddb.s3_claims (
    bucket text NOT NULL,
    prefix text NOT NULL,
    role_id regrole NOT NULL,       -- by OID, as ddb.jobs' role_id
    claimed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bucket, prefix)
);
COMMENT ON TABLE ddb.s3_claims IS 'Exports'' key prefixes in the server''s buckets, claimed by the first role that exported there';
SELECT pg_catalog.pg_extension_config_dump('ddb.s3_claims', '');
REVOKE ALL ON ddb.s3_claims FROM PUBLIC;

-- An export's claim of its directory (bucket, prefix) for the owner of the
-- table it exports: AccessDeniedException when another role's claim overlaps it.
CREATE FUNCTION ddb.claim_s3_prefix(table_name text, bucket text, prefix text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_claim_s3_prefix' LANGUAGE C VOLATILE STRICT;

-- An import's check that no key it reads (every key beginning with
-- key_prefix) is under another role's claim: AccessDeniedException when one is.
CREATE FUNCTION ddb.check_s3_source(bucket text, key_prefix text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_check_s3_source' LANGUAGE C STABLE STRICT;

-- A job's FailureCode and FailureMessage: its error is "<FailureCode>: <message>"
-- for the failures that have a code, else UNKNOWN with the whole error.
CREATE FUNCTION ddb.job_failure(error text) RETURNS jsonb
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
RETURN jsonb_build_object('FailureCode', coalesce(substring(error FROM '^([A-Z][A-Za-z0-9]+): '), 'UNKNOWN'),
                          'FailureMessage', regexp_replace(error, '^[A-Z][A-Za-z0-9]+: ', ''));

-- ---------------------------------------------------------------------------
-- ExportTableToPointInTime
-- ---------------------------------------------------------------------------

-- TTL visibility at a moment: ddb.ttl_visible's rule (docs/ttl.md) with
-- the moment for the current time.
CREATE FUNCTION ddb.ttl_visible_at(expires_at bigint, moment timestamptz) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN expires_at IS NULL
    OR expires_at OPERATOR(pg_catalog.>) pg_catalog.floor(pg_catalog.date_part('epoch', moment))::bigint
    OR expires_at OPERATOR(pg_catalog.<=) (pg_catalog.floor(pg_catalog.date_part('epoch', moment))::bigint
                                           OPERATOR(pg_catalog.-) 157680000);

-- An export's ExportDescription, from its job.
CREATE FUNCTION ddb.export_description(j ddb.jobs) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN jsonb_strip_nulls(jsonb_build_object(
    'ExportArn', j.spec->'ExportArn',
    'ExportStatus', j.status,
    'StartTime', extract(epoch FROM j.created_at),
    'EndTime', extract(epoch FROM j.ended_at),
    'ExportManifest', CASE WHEN j.status = 'COMPLETED'
                           THEN concat(nullif(rtrim(j.spec->>'S3Prefix', '/'), '') || '/', 'AWSDynamoDB/', j.spec->>'ExportId',
                                       '/manifest-summary.json') END,
    'TableArn', j.spec->'TableArn',
    'TableId', j.spec->'TableId',
    'ExportTime', CASE WHEN j.spec->>'ExportType' = 'FULL_EXPORT' THEN j.spec->'ExportTime' END,
    'ClientToken', j.spec->'ClientToken',
    'S3Bucket', j.spec->'S3Bucket',
    'S3BucketOwner', j.spec->'S3BucketOwner',
    'S3Prefix', j.spec->'S3Prefix',
    'S3SseAlgorithm', j.spec->'S3SseAlgorithm',
    'S3SseKmsKeyId', j.spec->'S3SseKmsKeyId',
    'ExportFormat', j.spec->'ExportFormat',
    'BilledSizeBytes', j.progress->'BilledSizeBytes',
    'ItemCount', j.progress->'ItemCount',
    'ExportType', j.spec->'ExportType',
    'IncrementalExportSpecification', j.spec->'IncrementalExportSpecification'))
    || CASE WHEN j.status = 'FAILED' THEN ddb.job_failure(j.error) ELSE '{}' END;

-- The table an export's TableArn names (an ARN of this server's), or
-- TableNotFoundException (YD022).
CREATE FUNCTION ddb.export_table(arn text) RETURNS ddb.tables
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
BEGIN
    SELECT * INTO t FROM ddb.tables
    WHERE arn = ddb.table_arn(tables.table_name)
      AND tables.table_name = ddb.arn_table_name(arn);
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD022', MESSAGE = 'Table not found: ' || arn;
    END IF;
    RETURN t;
END $$;

-- Raises InvalidExportTimeException (YD044) unless [from_time, to_time] lies in the
-- window of a table's point-in-time recovery (PointInTimeRecoveryUnavailableException
-- (YD031) when it has none).
CREATE FUNCTION ddb.check_export_window(t ddb.tables, from_time timestamptz, to_time timestamptz) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c ddb.continuous_backups;
    w record;
BEGIN
    c := ddb.continuous_backups_of(t);
    SELECT * INTO w FROM ddb.pitr_window(c, clock_timestamp());
    IF from_time < w.earliest OR to_time > w.latest THEN
        RAISE EXCEPTION USING ERRCODE = 'YD044',
            MESSAGE = 'The specified ExportTime is outside of the point in time recovery window.',
            DETAIL = format('The window of table %s is %s to %s; the time given is %s.', t.table_name,
                            w.earliest, w.latest,
                            CASE WHEN from_time = to_time THEN from_time::text ELSE from_time || ' to ' || to_time END);
    END IF;
END $$;

-- An incremental export's IncrementalExportSpecification, checked, its
-- ExportToTime (now when not given) and ExportViewType (NEW_AND_OLD_IMAGES)
-- filled in: a period of 15 minutes to 24 hours in the table's window.
CREATE FUNCTION ddb.incremental_export_spec(t ddb.tables, spec jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    from_time timestamptz := ddb.request_timestamp(spec->'ExportFromTime', 'ExportFromTime');
    to_time timestamptz := coalesce(ddb.request_timestamp(spec->'ExportToTime', 'ExportToTime'), now());
BEGIN
    IF from_time IS NULL THEN
        PERFORM ddb.validation_error('IncrementalExportSpecification.ExportFromTime must be given for an INCREMENTAL_EXPORT');
    END IF;
    IF to_time <= from_time THEN
        PERFORM ddb.validation_error('IncrementalExportSpecification.ExportToTime must be after its ExportFromTime');
    END IF;
    IF to_time - from_time < interval '15 minutes' OR to_time - from_time > interval '24 hours' THEN
        PERFORM ddb.validation_error(format(
            'The period of an incremental export is at least 15 minutes and at most 24 hours: %s to %s is %s seconds',
            ddb.iso_time(from_time), ddb.iso_time(to_time), extract(epoch FROM to_time - from_time)::bigint));
    END IF;
    PERFORM ddb.check_export_window(t, from_time, to_time);
    RETURN jsonb_build_object('ExportFromTime', extract(epoch FROM from_time), 'ExportToTime', extract(epoch FROM to_time),
                              'ExportViewType', coalesce(spec->>'ExportViewType', 'NEW_AND_OLD_IMAGES'));
END $$;

-- ExportTableToPointInTime: checks the request, and starts the export's job.
-- Takes ownership of the table (docs/security.md): an export's files are
-- beyond the database's privileges.
CREATE FUNCTION ddb.api_export_table_to_point_in_time(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    incremental jsonb := nullif(request->'IncrementalExportSpecification', 'null');
    export_type text := coalesce(request->>'ExportType', 'FULL_EXPORT');
    t ddb.tables;
    export_time timestamptz;
    id text := ddb.transfer_id();
    earlier ddb.jobs;
    spec jsonb;
    job integer;
BEGIN
    IF incremental IS NOT NULL AND jsonb_typeof(incremental) <> 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006',
            MESSAGE = 'Unexpected value type in payload for IncrementalExportSpecification: expected an object';
    END IF;
    PERFORM ddb.raise_violations(
        ddb.string_violations(request->'TableArn', 'TableArn', 'tableArn', true, 1, 1024)
        || ddb.s3_location_violations(request, 'S3Prefix', '')
        || ddb.string_violations(request->'S3SseAlgorithm', 'S3SseAlgorithm', 's3SseAlgorithm', allowed => '{AES256,KMS}')
        || ddb.string_violations(request->'S3SseKmsKeyId', 'S3SseKmsKeyId', 's3SseKmsKeyId', false, 1, 2048)
        || ddb.string_violations(request->'ExportFormat', 'ExportFormat', 'exportFormat', allowed => '{DYNAMODB_JSON,ION}')
        || ddb.string_violations(request->'ExportType', 'ExportType', 'exportType', allowed => '{FULL_EXPORT,INCREMENTAL_EXPORT}')
        || ddb.string_violations(request->'ClientToken', 'ClientToken', 'clientToken', pattern => '^[^$]+$', shown_pattern => '^[^\$]+$')
        || ddb.string_violations(incremental->'ExportViewType', 'ExportViewType', 'incrementalExportSpecification.exportViewType',
                                 allowed => '{NEW_IMAGE,NEW_AND_OLD_IMAGES}'));
    export_time := ddb.request_timestamp(request->'ExportTime', 'ExportTime');
    PERFORM ddb.check_s3_prefix(request->>'S3Prefix', 's3Prefix');
    IF request->>'ExportFormat' = 'ION' THEN
        PERFORM ddb.validation_error('ExportFormat ION is not supported by this implementation: exports are DYNAMODB_JSON');
    END IF;
    IF export_type = 'FULL_EXPORT' AND incremental IS NOT NULL THEN
        PERFORM ddb.validation_error('IncrementalExportSpecification is given for an INCREMENTAL_EXPORT only');
    END IF;
    IF export_type = 'INCREMENTAL_EXPORT' AND export_time IS NOT NULL THEN
        PERFORM ddb.validation_error('ExportTime is given for a FULL_EXPORT only; an INCREMENTAL_EXPORT has an IncrementalExportSpecification');
    END IF;
    t := ddb.export_table(request->>'TableArn');
    PERFORM ddb.check_table_access(t.table_name, 'ExportTableToPointInTime', 'own');
    PERFORM ddb.require_export_root();
    IF request->>'ClientToken' IS NOT NULL THEN
        earlier := ddb.job_of_client_token('export', request->>'ClientToken');
        IF earlier.spec->'Request' = request THEN
            RETURN jsonb_build_object('ExportDescription', ddb.export_description(earlier));
        ELSIF earlier.id IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'YD008',
                MESSAGE = format('Request failed with the same idempotency token but different parameters: the ClientToken %s '
                                 'was given in the last 8 hours to another export request', request->>'ClientToken');
        END IF;
    END IF;
    IF export_type = 'FULL_EXPORT' THEN
        IF export_time > now() THEN
            RAISE EXCEPTION USING ERRCODE = 'YD044', MESSAGE = 'The specified ExportTime is outside of the point in time recovery window.',
                DETAIL = format('%s is in the future.', export_time);
        END IF;
        export_time := coalesce(export_time, now());
        PERFORM ddb.check_export_window(t, export_time, export_time);
    ELSE
        incremental := ddb.incremental_export_spec(t, coalesce(incremental, '{}'));
    END IF;
    spec := jsonb_strip_nulls(jsonb_build_object(
        'ExportArn', ddb.table_arn(t.table_name) || '/export/' || id, 'ExportId', id,
        'TableName', t.table_name, 'TableArn', ddb.table_arn(t.table_name), 'TableId', ddb.table_id(t),
        'ExportType', export_type, 'ExportFormat', 'DYNAMODB_JSON',
        'ExportTime', extract(epoch FROM export_time), 'IncrementalExportSpecification', incremental,
        'S3Bucket', request->'S3Bucket', 'S3BucketOwner', request->'S3BucketOwner', 'S3Prefix', request->'S3Prefix',
        'S3SseAlgorithm', request->'S3SseAlgorithm', 'S3SseKmsKeyId', request->'S3SseKmsKeyId',
        'ClientToken', request->'ClientToken'))
        || jsonb_build_object('Request', request);
    -- the export's directory: its role's, or no other role's yet (src/exports/s3_claims.c)
    PERFORM ddb.claim_s3_prefix(t.table_name, request->>'S3Bucket', coalesce(request->>'S3Prefix', ''));
    job := ddb.start_job('export', spec);
    RETURN jsonb_build_object('ExportDescription', ddb.export_description(ddb.jobs_row(job)));
END $$;

-- Opens the cursor rows of an export's rows (item_size, line), as its job's
-- step (src/exports/export_job.c) reads them, as the role that asked: the
-- table's items at the export's time (a full export), or the changes of
-- its period (an incremental one), from point-in-time recovery's history
-- in one snapshot; returns the export's moments as its manifests write
-- them (ExportTime, or ExportFromTime, ExportToTime and ExportViewType).
-- The step writes the files: no SQL function does.
CREATE FUNCTION ddb.open_export_rows(rows refcursor, spec jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.pitr_table(spec->>'TableName', 'tableName');
    incremental jsonb := spec->'IncrementalExportSpecification';
    at timestamptz := to_timestamp((spec->>'ExportTime')::double precision);
BEGIN
    -- the versions of a moment up to now are all committed from here on
    PERFORM ddb.pitr_settle(t.table_name);
    IF incremental IS NULL THEN
        OPEN rows FOR SELECT v.item_size, ddb.to_dynamodb(v.item) FROM ddb.pitr_items(t.table_name, at) v
                      WHERE t.ttl_attribute IS NULL OR ddb.ttl_visible_at(ddb.item_expiry(t.table_name, v.item), at);
        RETURN jsonb_build_object('ExportTime', ddb.iso_time(at));
    END IF;
    rows := ddb.open_export_changes(rows, t, to_timestamp((incremental->>'ExportFromTime')::double precision),
                                    to_timestamp((incremental->>'ExportToTime')::double precision),
                                    incremental->>'ExportViewType');
    RETURN jsonb_build_object(
        'ExportFromTime', ddb.iso_time(to_timestamp((incremental->>'ExportFromTime')::double precision)),
        'ExportToTime', ddb.iso_time(to_timestamp((incremental->>'ExportToTime')::double precision)),
        'ExportViewType', incremental->>'ExportViewType');
END $$;

-- Opens a cursor of an incremental export's rows: per item changed in
-- [from_time, to_time), its last change, as DynamoDB's incremental
-- export writes it ({"Metadata": {"WriteTimestampMicros": ...}, "Keys":
-- ..., "NewImage": ..., "OldImage": ...}: no NewImage for a delete, and
-- OldImage, the item before the period, with NEW_AND_OLD_IMAGES only);
-- nothing for an item made and deleted in the period.
CREATE FUNCTION ddb.open_export_changes(rows refcursor, t ddb.tables, from_time timestamptz, to_time timestamptz,
                                        view_type text) RETURNS refcursor
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    history name := (ddb.continuous_backups_of(t)).history_relation;
    key_columns text := CASE WHEN t.range_key IS NOT NULL THEN 'pk, sk' ELSE 'pk' END;
BEGIN
    OPEN rows FOR EXECUTE format(
        'SELECT coalesce(c.new_size, c.old_size, 0), jsonb_build_object('
        '  ''Metadata'', jsonb_build_object(''WriteTimestampMicros'', jsonb_build_object(''N'','
        '      floor(extract(epoch FROM c.changed_at) * 1000000)::bigint::text)),'
        '  ''Keys'', ddb.to_dynamodb(jsonb_build_object($3, k.item->$3) || CASE WHEN $4 IS NULL THEN ''{}''::jsonb'
        '                                                             ELSE jsonb_build_object($4, k.item->$4) END))'
        '  || CASE WHEN c.new_item IS NOT NULL THEN jsonb_build_object(''NewImage'', ddb.to_dynamodb(c.new_item)) ELSE ''{}'' END'
        '  || CASE WHEN c.old_item IS NOT NULL AND $5 = ''NEW_AND_OLD_IMAGES'''
        '          THEN jsonb_build_object(''OldImage'', ddb.to_dynamodb(c.old_item)) ELSE ''{}'' END '
        'FROM (SELECT n.changed_at, n.item AS new_item, n.item_size AS new_size, o.item AS old_item, o.item_size AS old_size'
        '      FROM (SELECT DISTINCT ON (%1$s) * FROM %2$I.%3$I WHERE changed_at >= $1 AND changed_at < $2'
        '            ORDER BY %1$s, changed_at DESC, change_order DESC) n'
        '      LEFT JOIN LATERAL (SELECT h.item, h.item_size FROM %2$I.%3$I h WHERE %4$s AND h.changed_at < $1'
        '                         ORDER BY h.changed_at DESC, h.change_order DESC LIMIT 1) o ON true) c,'
        '     LATERAL (SELECT coalesce(c.new_item, c.old_item) AS item) k '
        'WHERE k.item IS NOT NULL',
        key_columns, t.schema_name, history,
        CASE WHEN t.range_key IS NOT NULL THEN 'h.pk = n.pk AND h.sk = n.sk' ELSE 'h.pk = n.pk' END)
    USING from_time, to_time, t.hash_key, t.range_key, view_type;
    RETURN rows;
END $$;

-- DescribeExport: an export the caller made.
CREATE FUNCTION ddb.api_describe_export(request jsonb) RETURNS jsonb
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
RETURN jsonb_build_object('ExportDescription', ddb.export_description(
    ddb.described_job('export', 'ExportArn', request->'ExportArn', 'YD040', 'Export not found: ')));

-- ListExports: the caller's exports of the last 90 days (those of a
-- TableArn when given), in reverse order of ExportArn, MaxResults (1 to 25)
-- at a time.
CREATE FUNCTION ddb.api_list_exports(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    page record;
BEGIN
    PERFORM ddb.raise_violations(
        ddb.string_violations(request->'TableArn', 'TableArn', 'tableArn', false, 1, 1024)
        || ddb.integer_violations(request->'MaxResults', 'MaxResults', 'maxResults', 1, 25)
        || ddb.string_violations(request->'NextToken', 'NextToken', 'nextToken'));
    page := ddb.job_page('export', 'ExportArn', request->>'TableArn', coalesce((request->>'MaxResults')::integer, 25),
                         request->>'NextToken');
    RETURN jsonb_build_object('ExportSummaries', coalesce(
               (SELECT jsonb_agg(jsonb_build_object('ExportArn', d->'ExportArn', 'ExportStatus', d->'ExportStatus',
                                                    'ExportType', d->'ExportType') ORDER BY n)
                FROM unnest(page.arns) WITH ORDINALITY AS a(arn, n),
                     LATERAL ddb.export_description(ddb.job_of_arn('export', 'ExportArn', a.arn)) d), '[]'))
           || CASE WHEN page.next IS NOT NULL THEN jsonb_build_object('NextToken', page.next) ELSE '{}' END;
END $$;
