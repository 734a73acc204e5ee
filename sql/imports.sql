-- ---------------------------------------------------------------------------
-- Imports from S3 (docs/transfer.md): ImportTable, DescribeImport,
-- ListImports.  ImportTable creates the table its TableCreationParameters
-- describe, CREATING as a restore's is (ddb.table_restores, without a
-- RestoreSummary: sql/restore.sql), and starts a job of kind 'import' whose
-- step, C code (src/exports/import_job.c), writes the items `ddb-transfer
-- read-items` reads from every file under the bucket's key prefix, then
-- makes the table ACTIVE.  As DynamoDB's import does, a bad line or an item the
-- table refuses is counted (ErrorCount) and logged, and the import goes on;
-- it then ends FAILED with ItemValidationError, the table ACTIVE with the
-- items that were good.  The import's record is its row of ddb.jobs.
-- ---------------------------------------------------------------------------

-- An import's ImportTableDescription, from its job.
CREATE FUNCTION ddb.import_description(j ddb.jobs) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN jsonb_strip_nulls(jsonb_build_object(
    'ImportArn', j.spec->'ImportArn',
    'ImportStatus', j.status,
    'TableArn', j.spec->'TableArn',
    'TableId', j.spec->'TableId',
    'ClientToken', j.spec->'ClientToken',
    'S3BucketSource', j.spec->'S3BucketSource',
    'ErrorCount', coalesce(j.progress->'ErrorCount', '0'),
    'InputFormat', j.spec->'InputFormat',
    'InputFormatOptions', j.spec->'InputFormatOptions',
    'InputCompressionType', j.spec->'InputCompressionType',
    'TableCreationParameters', j.spec->'TableCreationParameters',
    'StartTime', extract(epoch FROM j.created_at),
    'EndTime', extract(epoch FROM j.ended_at),
    'ProcessedSizeBytes', coalesce(j.progress->'ProcessedSizeBytes', '0'),
    'ProcessedItemCount', coalesce(j.progress->'ProcessedItemCount', '0'),
    'ImportedItemCount', coalesce(j.progress->'ImportedItemCount', '0')))
    || CASE WHEN j.status = 'FAILED' THEN ddb.job_failure(j.error) ELSE '{}' END;

-- The constraints ImportTable's TableCreationParameters break (their
-- indexes and keys are CreateTable's to check).
CREATE FUNCTION ddb.table_creation_violations(parameters jsonb) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF parameters IS NULL OR jsonb_typeof(parameters) = 'null' THEN
        RETURN ARRAY['Value null at ''tableCreationParameters'' failed to satisfy constraint: Member must not be null'];
    END IF;
    IF jsonb_typeof(parameters) <> 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006',
            MESSAGE = 'Unexpected value type in payload for TableCreationParameters: expected an object';
    END IF;
    RETURN ddb.string_violations(parameters->'TableName', 'TableName', 'tableCreationParameters.tableName', true, 3, 255,
                                 '^[a-zA-Z0-9_.-]+$', '[a-zA-Z0-9_.-]+')
        || CASE WHEN nullif(parameters->'AttributeDefinitions', 'null') IS NULL
                THEN ARRAY['Value null at ''tableCreationParameters.attributeDefinitions'' failed to satisfy constraint: Member must not be null']
                ELSE '{}' END
        || CASE WHEN nullif(parameters->'KeySchema', 'null') IS NULL
                THEN ARRAY['Value null at ''tableCreationParameters.keySchema'' failed to satisfy constraint: Member must not be null']
                ELSE '{}' END
        || ddb.string_violations(parameters->'BillingMode', 'BillingMode', 'tableCreationParameters.billingMode',
                                 allowed => '{PROVISIONED,PAY_PER_REQUEST}');
END $$;

-- ImportTable: checks the request, creates the table (CREATING) and starts
-- the import's job.  Takes CreateTable's privilege and pg_read_server_files'
-- (docs/security.md).
CREATE FUNCTION ddb.api_import_table(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    source jsonb := nullif(request->'S3BucketSource', 'null');
    parameters jsonb := request->'TableCreationParameters';
    name text := parameters->>'TableName';
    csv jsonb := request->'InputFormatOptions'->'Csv';
    id text := ddb.transfer_id();
    earlier ddb.jobs;
    job integer;
BEGIN
    IF source IS NOT NULL AND jsonb_typeof(source) <> 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = 'Unexpected value type in payload for S3BucketSource: expected an object';
    END IF;
    PERFORM ddb.raise_violations(
        ddb.string_violations(request->'ClientToken', 'ClientToken', 'clientToken', pattern => '^[^$]+$', shown_pattern => '^[^\$]+$')
        || CASE WHEN source IS NULL
                THEN ARRAY['Value null at ''s3BucketSource'' failed to satisfy constraint: Member must not be null']
                ELSE ddb.s3_location_violations(source, 'S3KeyPrefix', 's3BucketSource.') END
        || ddb.string_violations(request->'InputFormat', 'InputFormat', 'inputFormat', true, allowed => '{DYNAMODB_JSON,ION,CSV}')
        || ddb.string_violations(request->'InputCompressionType', 'InputCompressionType', 'inputCompressionType',
                                 allowed => '{GZIP,ZSTD,NONE}')
        || ddb.string_violations(csv->'Delimiter', 'Delimiter', 'inputFormatOptions.csv.delimiter', false, 1, 1,
                                 '^[,;:|\t ]$', '[,;:|\t ]')
        || ddb.table_creation_violations(parameters));
    PERFORM ddb.check_s3_prefix(source->>'S3KeyPrefix', 's3BucketSource.s3KeyPrefix');
    IF request->>'InputFormat' <> 'DYNAMODB_JSON' THEN
        PERFORM ddb.validation_error(format(
            'InputFormat %s is not supported by this implementation: an import reads DYNAMODB_JSON (docs/transfer.md)',
            request->>'InputFormat'));
    END IF;
    IF request->>'InputCompressionType' = 'ZSTD' THEN
        PERFORM ddb.validation_error('InputCompressionType ZSTD is not supported by this implementation: '
                                     'an import reads files compressed with GZIP, or not at all (NONE)');
    END IF;
    PERFORM ddb.check_table_access(name, 'ImportTable', 'import');
    PERFORM ddb.require_export_root();
    -- no key under another role's exports (src/exports/s3_claims.c)
    PERFORM ddb.check_s3_source(source->>'S3Bucket', coalesce(source->>'S3KeyPrefix', ''));
    IF request->>'ClientToken' IS NOT NULL THEN
        earlier := ddb.job_of_client_token('import', request->>'ClientToken');
        IF earlier.spec->'Request' = request THEN
            RETURN jsonb_build_object('ImportTableDescription', ddb.import_description(earlier));
        ELSIF earlier.id IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'YD008',
                MESSAGE = format('Request failed with the same idempotency token but different parameters: the ClientToken %s '
                                 'was given in the last 8 hours to another import request', request->>'ClientToken');
        END IF;
    END IF;
    -- one creation of a name at a time, as ddb.create_table takes it
    PERFORM ddb.lock_table_name(name);
    IF EXISTS (SELECT FROM ddb.tables t WHERE t.table_name = name) THEN
        RAISE EXCEPTION USING ERRCODE = 'YD005', MESSAGE = 'Table already exists: ' || name;
    END IF;
    -- TableCreationParameters are a part of CreateTable's request
    PERFORM ddb.api_create_table((SELECT jsonb_object_agg(key, value) FROM jsonb_each(parameters)
                                  WHERE key IN ('TableName', 'AttributeDefinitions', 'KeySchema', 'BillingMode',
                                                'ProvisionedThroughput', 'OnDemandThroughput', 'SSESpecification',
                                                'GlobalSecondaryIndexes')));
    job := ddb.start_job('import', jsonb_strip_nulls(jsonb_build_object(
        'ImportArn', ddb.table_arn(name) || '/import/' || id, 'ImportId', id,
        'TableName', name, 'TableArn', ddb.table_arn(name),
        'TableId', (SELECT ddb.table_id(t) FROM ddb.tables t WHERE t.table_name = name),
        'S3BucketSource', source, 'InputFormat', request->'InputFormat',
        'InputFormatOptions', request->'InputFormatOptions',
        'InputCompressionType', coalesce(request->'InputCompressionType', '"NONE"'),
        'TableCreationParameters', parameters, 'ClientToken', request->'ClientToken'))
        || jsonb_build_object('Request', request));
    -- CREATING until the job has written the items (sql/restore.sql)
    PERFORM ddb.record_restore(name, job, '{}');
    RETURN jsonb_build_object('ImportTableDescription', ddb.import_description(ddb.jobs_row(job)));
END $$;

-- A failed import: a table whose items failed validation is kept, ACTIVE,
-- with the items that were good; after any other failure the table goes
-- (when it is still the one the job was filling), as DynamoDB makes none.
CREATE FUNCTION ddb.job_import_failed(job_id integer, spec jsonb, error text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM ddb.table_restores r
                   WHERE r.table_name = spec->>'TableName' AND r.job_id = job_import_failed.job_id AND r.in_progress) THEN
        RETURN;
    END IF;
    IF error LIKE 'ItemValidationError: %' THEN
        PERFORM ddb.end_restore(spec->>'TableName', job_import_failed.job_id);
    ELSE
        PERFORM ddb.delete_table(spec->>'TableName');
    END IF;
END $$;

-- DescribeImport: an import the caller made.
CREATE FUNCTION ddb.api_describe_import(request jsonb) RETURNS jsonb
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
RETURN jsonb_build_object('ImportTableDescription', ddb.import_description(
    ddb.described_job('import', 'ImportArn', request->'ImportArn', 'YD041', 'Import not found: ')));

-- ListImports' NextToken: hex, as DynamoDB's ([0-9a-f]{16})+, 112 to 1024
-- characters): a sealed token's bytes, padded with zeros.
CREATE FUNCTION ddb.hex_token(token text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
RETURN rpad(encode(convert_to(token, 'UTF8'), 'hex'),
            greatest(112, ((octet_length(token) * 2 + 15) / 16) * 16), '0');

-- The sealed token a ListImports NextToken holds ('' for one that holds none; NULL for NULL).
CREATE FUNCTION ddb.token_of_hex(hex text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN convert_from(rtrim(decode(hex, 'hex'), '\x00'::bytea), 'UTF8');
EXCEPTION WHEN data_exception THEN
    RETURN '';
END $$;

-- ListImports: the caller's imports of the last 90 days (those into a
-- TableArn when given), in reverse order of ImportArn, PageSize (1 to 25)
-- at a time.
CREATE FUNCTION ddb.api_list_imports(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    page record;
BEGIN
    PERFORM ddb.raise_violations(
        ddb.string_violations(request->'TableArn', 'TableArn', 'tableArn', false, 1, 1024)
        || ddb.integer_violations(request->'PageSize', 'PageSize', 'pageSize', 1, 25)
        || ddb.string_violations(request->'NextToken', 'NextToken', 'nextToken', false, 112, 1024,
                                 '^([0-9a-f]{16})+$', '([0-9a-f]{16})+'));
    page := ddb.job_page('import', 'ImportArn', request->>'TableArn', coalesce((request->>'PageSize')::integer, 25),
                         ddb.token_of_hex(request->>'NextToken'));
    RETURN jsonb_build_object('ImportSummaryList', coalesce(
               (SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                           'ImportArn', d->'ImportArn', 'ImportStatus', d->'ImportStatus', 'TableArn', d->'TableArn',
                           'S3BucketSource', d->'S3BucketSource', 'InputFormat', d->'InputFormat',
                           'StartTime', d->'StartTime', 'EndTime', d->'EndTime')) ORDER BY n)
                FROM unnest(page.arns) WITH ORDINALITY AS a(arn, n),
                     LATERAL ddb.import_description(ddb.job_of_arn('import', 'ImportArn', a.arn)) d), '[]'))
           || CASE WHEN page.next IS NOT NULL THEN jsonb_build_object('NextToken', ddb.hex_token(page.next)) ELSE '{}' END;
END $$;
