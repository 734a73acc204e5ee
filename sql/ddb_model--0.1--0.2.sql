-- ddb_model 0.1 to 0.2 — upgrade script (ALTER EXTENSION ddb_model UPDATE).
\echo Use "ALTER EXTENSION ddb_model UPDATE TO '0.2'" to load this file. \quit

-- 0.2 looks a table up in one place, ddb.require_table, where 0.1 repeated the
-- lookup and its YD004 (resource not found) in each function below: the new
-- function, and the functions that now call it (same messages, same locks).
-- test/upgrade.sh checks that an updated 0.1 is exactly a fresh 0.2.

-- A table's catalog row (locked FOR UPDATE when asked), or YD004 (resource not found).
CREATE FUNCTION ddb.require_table(table_name text, for_update boolean DEFAULT false) RETURNS ddb.tables
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
BEGIN
    IF for_update THEN
        SELECT * INTO t FROM ddb.tables WHERE tables.table_name = require_table.table_name FOR UPDATE;
    ELSE
        SELECT * INTO t FROM ddb.tables WHERE tables.table_name = require_table.table_name;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004',
            MESSAGE = 'Requested resource not found: Table: ' || table_name || ' not found';
    END IF;
    RETURN t;
END $$;

-- Drops a table, its indexes and its catalog entries.
CREATE OR REPLACE FUNCTION ddb.delete_table(table_name text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    i record;
BEGIN
    t := ddb.require_table(table_name, true);
    IF t.model IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'YD005',
            MESSAGE = format('Attempt to change a resource which is still in use: table %s belongs to the %s model, '
                             'installed with the extension', table_name, t.model),
            HINT = 'Delete its items instead; the table goes with DROP EXTENSION once it is empty.';
    END IF;
    FOR i IN SELECT * FROM ddb.indexes WHERE indexes.table_name = t.table_name LOOP
        EXECUTE format('DROP TABLE %I.%I', t.schema_name, i.relation_name);
    END LOOP;
    EXECUTE format('DROP TABLE %I.%I', t.schema_name, t.relation_name);
    DELETE FROM ddb.stream_records WHERE stream_records.table_name = t.table_name;
    DELETE FROM ddb.tables WHERE tables.table_name = t.table_name;
END $$;

-- Adds a global secondary index to a table (with local, a local one: the
-- table's hash key and another range key); existing items are indexed.
CREATE OR REPLACE FUNCTION ddb.create_index(
    table_name text,
    index_name text,
    hash_key text,
    hash_key_type text DEFAULT 'S',
    range_key text DEFAULT NULL,
    range_key_type text DEFAULT 'S',
    projection_type text DEFAULT 'ALL',
    non_key_attributes text[] DEFAULT NULL,
    local boolean DEFAULT false
) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    rel name;
    types jsonb;
BEGIN
    t := ddb.require_table(table_name, true);
    -- writers wait until the index exists and is filled (and then see it)
    EXECUTE format('LOCK TABLE %I.%I IN SHARE ROW EXCLUSIVE MODE', t.schema_name, t.relation_name);
    PERFORM ddb.check_name('indexName', index_name);
    PERFORM ddb.check_key_type(hash_key, hash_key_type);
    IF range_key IS NOT NULL THEN
        PERFORM ddb.check_key_type(range_key, range_key_type);
    END IF;
    IF EXISTS (SELECT FROM ddb.indexes i WHERE i.table_name = t.table_name AND i.index_name = create_index.index_name) THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: Duplicate index name: ' || index_name);
    END IF;
    IF (SELECT count(*) FROM ddb.indexes i WHERE i.table_name = t.table_name) >= 20 THEN
        RAISE EXCEPTION USING ERRCODE = 'YD009',
            MESSAGE = 'Subscriber limit exceeded: the table already has 20 global secondary indexes';
    END IF;
    IF projection_type NOT IN ('KEYS_ONLY', 'INCLUDE', 'ALL') THEN
        PERFORM ddb.validation_error('Unknown ProjectionType: ' || coalesce(projection_type, 'null'));
    END IF;
    IF (projection_type = 'INCLUDE') <> (non_key_attributes IS NOT NULL) THEN
        PERFORM ddb.validation_error(
            'One or more parameter values were invalid: NonKeyAttributes must be given exactly when ProjectionType is INCLUDE');
    END IF;
    types := jsonb_build_object(hash_key, hash_key_type);
    IF range_key IS NOT NULL THEN
        types := types || jsonb_build_object(range_key, range_key_type);
    END IF;
    -- an attribute has one type across the table and all its indexes
    IF EXISTS (SELECT FROM jsonb_each_text(types) n JOIN jsonb_each_text(t.attribute_types) o USING (key)
               WHERE n.value <> o.value) THEN
        PERFORM ddb.validation_error(
            'One or more parameter values were invalid: an attribute is defined with two different types');
    END IF;

    rel := ddb.relation_name(t.relation_name || ':' || index_name);
    EXECUTE format(
        'CREATE TABLE %I.%I (gpk ddb.ddb_key NOT NULL, %s pk ddb.ddb_key NOT NULL, %s item jsonb NOT NULL, '
        'expires_at bigint, item_size integer NOT NULL, CONSTRAINT %I PRIMARY KEY (gpk%s, pk%s)) %s',
        t.schema_name, rel,
        CASE WHEN range_key IS NOT NULL THEN 'gsk ddb.ddb_key NOT NULL,' ELSE '' END,
        CASE WHEN t.range_key IS NOT NULL THEN 'sk ddb.ddb_key NOT NULL,' ELSE '' END,
        ddb.relation_name(rel || '$pkey'),
        CASE WHEN range_key IS NOT NULL THEN ', gsk' ELSE '' END,
        CASE WHEN t.range_key IS NOT NULL THEN ', sk' ELSE '' END,
        CASE WHEN t.partitions > 0 THEN 'PARTITION BY HASH (gpk)' ELSE '' END);
    PERFORM ddb.create_partitions(t.schema_name, rel, t.partitions);
    EXECUTE format('COMMENT ON TABLE %I.%I IS %L', t.schema_name, rel,
                   'Global secondary index ' || index_name || ' of DynamoDB table ' || t.table_name
                   || ' (ddb_model); kept by a trigger, do not write');

    IF local AND (hash_key IS DISTINCT FROM t.hash_key OR range_key IS NULL OR t.range_key IS NULL) THEN
        PERFORM ddb.validation_error(format(
            'One or more parameter values were invalid: a local secondary index needs the table''s hash key and a range key (index %s)',
            index_name));
    END IF;
    INSERT INTO ddb.indexes (table_name, index_name, relation_name, hash_key, range_key,
                             projection_type, non_key_attributes, local)
    VALUES (t.table_name, index_name, rel, hash_key, range_key, projection_type, non_key_attributes, coalesce(local, false));
    UPDATE ddb.tables SET attribute_types = attribute_types || types WHERE tables.table_name = t.table_name;

    -- the maintenance trigger exists once per table, from its first index on
    IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = format('%I.%I', t.schema_name, t.relation_name)::regclass
                   AND tgname = 'ddb_gsi_maintain') THEN
        EXECUTE format('CREATE TRIGGER ddb_gsi_maintain AFTER INSERT OR UPDATE OR DELETE ON %I.%I '
                       'FOR EACH ROW EXECUTE FUNCTION ddb.gsi_maintain(%L)', t.schema_name, t.relation_name,
                       t.table_name);
        EXECUTE format('CREATE TRIGGER ddb_gsi_truncate AFTER TRUNCATE ON %I.%I '
                       'FOR EACH STATEMENT EXECUTE FUNCTION ddb.gsi_truncate(%L)', t.schema_name, t.relation_name,
                       t.table_name);
    END IF;
    -- backfill: rewriting each item through the trigger indexes it
    EXECUTE format('UPDATE %I.%I SET item = item', t.schema_name, t.relation_name);
END $$;

-- Every difference between a table's items and its GSIs: entries missing,
-- entries that should not be there, and entries whose projection or TTL differs.
CREATE OR REPLACE FUNCTION ddb.verify_gsi(table_name text)
RETURNS TABLE (index_name text, problem text, pk ddb.ddb_key, sk ddb.ddb_key, gpk ddb.ddb_key, gsk ddb.ddb_key)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    i ddb.indexes;
BEGIN
    t := ddb.require_table(table_name);
    FOR i IN SELECT * FROM ddb.indexes WHERE indexes.table_name = t.table_name ORDER BY indexes.index_name LOOP
        RETURN QUERY EXECUTE format(
            'WITH expected AS ('
            '  SELECT e.gpk, e.gsk, b.pk, %s AS sk, e.item, b.expires_at'
            '  FROM %I.%I b, ddb.index_entry(%L, %L, b.item) e),'
            ' actual AS (SELECT g.gpk, %s AS gsk, g.pk, %s AS sk, g.item, g.expires_at FROM %I.%I g)'
            ' SELECT %L::text, CASE WHEN a.pk IS NULL THEN ''missing from index'''
            '                  WHEN e.pk IS NULL THEN ''not in table'''
            '                  ELSE ''projection or TTL differs'' END,'
            '        coalesce(e.pk, a.pk), coalesce(e.sk, a.sk), coalesce(e.gpk, a.gpk), coalesce(e.gsk, a.gsk)'
            ' FROM expected e FULL JOIN actual a'
            '   ON a.gpk = e.gpk AND a.pk = e.pk'
            '  AND a.gsk IS NOT DISTINCT FROM e.gsk AND a.sk IS NOT DISTINCT FROM e.sk'
            ' WHERE a.pk IS NULL OR e.pk IS NULL OR a.item <> e.item OR a.expires_at IS DISTINCT FROM e.expires_at',
            CASE WHEN t.range_key IS NOT NULL THEN 'b.sk' ELSE 'NULL::ddb.ddb_key' END,
            t.schema_name, t.relation_name, t.table_name, i.index_name,
            CASE WHEN i.range_key IS NOT NULL THEN 'g.gsk' ELSE 'NULL::ddb.ddb_key' END,
            CASE WHEN t.range_key IS NOT NULL THEN 'g.sk' ELSE 'NULL::ddb.ddb_key' END,
            t.schema_name, i.relation_name, i.index_name);
    END LOOP;
END $$;

-- UpdateTimeToLive: enables TTL on an attribute, or disables it.
CREATE OR REPLACE FUNCTION ddb.update_time_to_live(table_name text, attribute_name text, enabled boolean DEFAULT true)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
BEGIN
    t := ddb.require_table(table_name, true);
    -- writers wait until every expiry follows the new setting (and then use it)
    EXECUTE format('LOCK TABLE %I.%I IN SHARE ROW EXCLUSIVE MODE', t.schema_name, t.relation_name);
    IF attribute_name IS NULL OR attribute_name = '' THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''timeToLiveSpecification.attributeName'' failed to satisfy constraint: Member must not be null');
    END IF;
    IF enabled AND t.ttl_attribute IS NOT NULL THEN
        PERFORM ddb.validation_error('TimeToLive is already enabled');
    END IF;
    IF NOT enabled AND t.ttl_attribute IS NULL THEN
        PERFORM ddb.validation_error('TimeToLive is already disabled');
    END IF;
    IF NOT enabled AND t.ttl_attribute <> attribute_name THEN
        PERFORM ddb.validation_error('TimeToLive is enabled on a different attribute: ' || t.ttl_attribute);
    END IF;
    UPDATE ddb.tables SET ttl_attribute = CASE WHEN enabled THEN attribute_name END
    WHERE tables.table_name = t.table_name;
    -- every item's expiry follows the new setting (and its GSI entries with it)
    EXECUTE format('UPDATE %I.%I SET expires_at = ddb.item_expiry(%L, item) '
                   'WHERE expires_at IS DISTINCT FROM ddb.item_expiry(%L, item)',
                   t.schema_name, t.relation_name, t.table_name, t.table_name);
END $$;

-- Deletes up to batch_size items whose TTL has passed (and their GSI entries),
-- skipping rows other transactions hold; returns how many it deleted.
CREATE OR REPLACE FUNCTION ddb.expire(table_name text, batch_size integer DEFAULT 1000) RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    now_epoch bigint := floor(extract(epoch FROM statement_timestamp()))::bigint;  -- whole seconds passed, as the readers count
    deleted bigint;
BEGIN
    t := ddb.require_table(table_name);
    IF batch_size IS NULL OR batch_size < 1 THEN
        PERFORM ddb.validation_error('batch_size must be at least 1');
    END IF;
    -- with TTL disabled nothing expires, whatever expires_at still says
    IF t.ttl_attribute IS NULL THEN
        RETURN 0;
    END IF;
    -- DynamoDB ignores TTLs more than five years in the past
    EXECUTE format(
        'WITH doomed AS (SELECT pk%s FROM %I.%I WHERE expires_at <= $1 AND expires_at > $1 - 157680000 '
        'LIMIT $2 FOR UPDATE SKIP LOCKED) '
        'DELETE FROM %I.%I t USING doomed d WHERE t.pk = d.pk%s',
        CASE WHEN t.range_key IS NOT NULL THEN ', sk' ELSE '' END,
        t.schema_name, t.relation_name, t.schema_name, t.relation_name,
        CASE WHEN t.range_key IS NOT NULL THEN ' AND t.sk = d.sk' ELSE '' END)
    USING now_epoch, batch_size;
    GET DIAGNOSTICS deleted = ROW_COUNT;
    RETURN deleted;
END $$;

-- The DynamoDB-JSON description of a table (DescribeTable's Table).
CREATE OR REPLACE FUNCTION ddb.describe_table(table_name text) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    stats record;
    indexes jsonb;
    local_indexes jsonb;
    arn text;
BEGIN
    t := ddb.require_table(table_name);
    arn := ddb.table_arn(t.table_name);
    EXECUTE format('SELECT count(*) AS n, coalesce(sum(item_size), 0) AS bytes FROM %I.%I',
                   t.schema_name, t.relation_name) INTO stats;
    -- a global index also has a status and throughput; a local one has not
    SELECT jsonb_agg(d || jsonb_build_object('IndexStatus', 'ACTIVE',
                         'ProvisionedThroughput', jsonb_build_object('ReadCapacityUnits', 0, 'WriteCapacityUnits', 0,
                                                                     'NumberOfDecreasesToday', 0))
                     ORDER BY index_name) FILTER (WHERE NOT local),
           jsonb_agg(d ORDER BY index_name) FILTER (WHERE local)
    INTO indexes, local_indexes
    FROM (SELECT i.index_name, i.local, jsonb_build_object(
              'IndexName', i.index_name,
              'KeySchema', ddb.key_schema(i.hash_key, i.range_key),
              'Projection', jsonb_build_object('ProjectionType', i.projection_type)
                            || CASE WHEN i.non_key_attributes IS NOT NULL
                               THEN jsonb_build_object('NonKeyAttributes', to_jsonb(i.non_key_attributes))
                               ELSE '{}'::jsonb END,
              'IndexArn', arn || '/index/' || i.index_name,
              'ItemCount', 0, 'IndexSizeBytes', 0) AS d
          FROM ddb.indexes i WHERE i.table_name = t.table_name) described;
    RETURN jsonb_build_object(
        'TableName', t.table_name,
        'TableStatus', 'ACTIVE',
        'CreationDateTime', extract(epoch FROM t.created_at),
        'KeySchema', ddb.key_schema(t.hash_key, t.range_key),
        'AttributeDefinitions', (SELECT jsonb_agg(jsonb_build_object('AttributeName', key, 'AttributeType', value)
                                                  ORDER BY key)
                                 FROM jsonb_each_text(t.attribute_types)),
        'ItemCount', stats.n,
        'TableSizeBytes', stats.bytes,
        'TableArn', arn,
        'TableId', ddb.table_id(t),
        'ProvisionedThroughput', jsonb_build_object('ReadCapacityUnits', t.read_capacity,
                                                    'WriteCapacityUnits', t.write_capacity,
                                                    'NumberOfDecreasesToday', 0),
        'BillingModeSummary', jsonb_build_object('BillingMode', t.billing_mode))
        || CASE WHEN indexes IS NOT NULL THEN jsonb_build_object('GlobalSecondaryIndexes', indexes)
           ELSE '{}'::jsonb END
        || CASE WHEN local_indexes IS NOT NULL THEN jsonb_build_object('LocalSecondaryIndexes', local_indexes)
           ELSE '{}'::jsonb END
        || ddb.stream_description(t);
END $$;

-- DescribeTimeToLive.
CREATE OR REPLACE FUNCTION ddb.api_describe_time_to_live(request jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
BEGIN
    t := ddb.require_table(coalesce(request->>'TableName', ''));
    RETURN jsonb_build_object('TimeToLiveDescription',
        CASE WHEN t.ttl_attribute IS NULL THEN '{"TimeToLiveStatus": "DISABLED"}'::jsonb
             ELSE jsonb_build_object('TimeToLiveStatus', 'ENABLED', 'AttributeName', t.ttl_attribute) END);
END $$;

-- UpdateTable: billing mode and throughput, and GlobalSecondaryIndexUpdates
-- (Create, Update of throughput, Delete).
CREATE OR REPLACE FUNCTION ddb.api_update_table(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text := request->>'TableName';
    t ddb.tables;
    u jsonb;
    c jsonb;
    types jsonb := '{}';
    d jsonb;
    gkeys record;
    mode text;
BEGIN
    IF name IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tableName'' failed to satisfy constraint: Member must not be null');
    END IF;
    PERFORM ddb.check_name('tableName', name);
    t := ddb.require_table(name);
    IF t.model IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'YD005',
            MESSAGE = format('Attempt to change a resource which is still in use: table %s belongs to the %s model', name, t.model);
    END IF;
    IF request ? 'BillingMode' OR request ? 'ProvisionedThroughput' THEN
        mode := coalesce(request->>'BillingMode', t.billing_mode);
        IF mode = 'PROVISIONED' AND t.billing_mode = 'PROVISIONED'
           AND (request->'ProvisionedThroughput'->>'ReadCapacityUnits')::integer IS NOT DISTINCT FROM t.read_capacity
           AND (request->'ProvisionedThroughput'->>'WriteCapacityUnits')::integer IS NOT DISTINCT FROM t.write_capacity THEN
            PERFORM ddb.validation_error(format(
                'The provisioned throughput for the table will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for the table: %s. Requested ReadCapacityUnits: %s. Current WriteCapacityUnits provisioned for the table: %s. Requested WriteCapacityUnits: %s. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.',
                t.read_capacity, t.read_capacity, t.write_capacity, t.write_capacity));
        END IF;
        PERFORM ddb.set_billing(name, mode,
                                CASE WHEN mode = 'PROVISIONED' THEN coalesce(request->'ProvisionedThroughput',
                                    jsonb_build_object('ReadCapacityUnits', t.read_capacity, 'WriteCapacityUnits', t.write_capacity))
                                     ELSE request->'ProvisionedThroughput' END);
    END IF;
    FOR d IN SELECT value FROM jsonb_array_elements(coalesce(request->'AttributeDefinitions', '[]')) LOOP
        PERFORM ddb.check_key_type(d->>'AttributeName', d->>'AttributeType');
        types := types || jsonb_build_object(d->>'AttributeName', d->>'AttributeType');
    END LOOP;
    FOR u IN SELECT value FROM jsonb_array_elements(coalesce(request->'GlobalSecondaryIndexUpdates', '[]')) LOOP
        IF u ? 'Create' THEN
            c := u->'Create';
            gkeys := ddb.read_key_schema(c->'KeySchema', 'globalSecondaryIndexUpdates.1.member.create.keySchema');
            IF NOT types ? gkeys.hash_key OR (gkeys.range_key IS NOT NULL AND NOT types ? gkeys.range_key) THEN
                PERFORM ddb.validation_error('One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions');
            END IF;
            PERFORM ddb.create_requested_index(name, c, gkeys.hash_key, gkeys.range_key, types, false);
        ELSIF u ? 'Delete' THEN
            PERFORM ddb.drop_index(name, u->'Delete'->>'IndexName');
        ELSIF NOT u ? 'Update' THEN
            PERFORM ddb.validation_error('One or more parameter values were invalid: a GlobalSecondaryIndexUpdate is Create, Update or Delete');
        END IF;
    END LOOP;
    IF request ? 'StreamSpecification' THEN
        PERFORM ddb.set_stream(name, request->'StreamSpecification');
    END IF;
    RETURN jsonb_build_object('TableDescription', ddb.describe_table(name));
END $$;

-- ListStreams: the streams of every table, or of one (TableName), in ARN order.
CREATE OR REPLACE FUNCTION ddb.api_list_streams(request jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    page_size integer := ddb.request_limit(request, 100, 100);
    streams jsonb;
    last_arn text;
BEGIN
    IF request ? 'TableName' THEN
        PERFORM ddb.require_table(coalesce(request->>'TableName', ''));
    END IF;
    SELECT jsonb_agg(jsonb_build_object('StreamArn', arn, 'TableName', table_name, 'StreamLabel', stream_label) ORDER BY arn),
           CASE WHEN count(*) = page_size THEN max(arn) END
    INTO streams, last_arn
    FROM (SELECT ddb.stream_arn(table_name, stream_label) AS arn, table_name, stream_label
          FROM ddb.tables
          WHERE stream_label IS NOT NULL
            AND (NOT request ? 'TableName' OR table_name = request->>'TableName')
            AND ddb.stream_arn(table_name, stream_label) > coalesce(request->>'ExclusiveStartStreamArn', '')
          ORDER BY 1 LIMIT page_size) s;
    RETURN jsonb_build_object('Streams', coalesce(streams, '[]'))
        || CASE WHEN last_arn IS NOT NULL THEN jsonb_build_object('LastEvaluatedStreamArn', last_arn) ELSE '{}' END;
END $$;

-- 0.2 serialises concurrent CreateTables of one name (the second finds the
-- table: ResourceInUseException, not a unique violation of the catalog) and
-- locks DeleteTable's catalog row before describing the table (a concurrent
-- DeleteTable finds no table: ResourceNotFoundException, not a relation
-- dropped under it).

-- Creates a DynamoDB table as <schema>."<table_name>" (docs/tables.md).
CREATE OR REPLACE FUNCTION ddb.create_table(
    table_name text,
    hash_key text,
    hash_key_type text DEFAULT 'S',
    range_key text DEFAULT NULL,
    range_key_type text DEFAULT 'S',
    schema_name name DEFAULT 'public',
    partitions integer DEFAULT 0,
    ttl_attribute text DEFAULT NULL
) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel name := ddb.relation_name(table_name);
    types jsonb;
BEGIN
    PERFORM ddb.check_name('tableName', table_name);
    PERFORM ddb.check_key_type(hash_key, hash_key_type);
    IF hash_key IS NULL OR hash_key = '' THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: the hash key attribute name is empty');
    END IF;
    IF range_key IS NOT NULL THEN
        PERFORM ddb.check_key_type(range_key, range_key_type);
        IF range_key = hash_key THEN
            PERFORM ddb.validation_error('Both the Hash Key and the Range Key element in the KeySchema have the same name');
        END IF;
    END IF;
    IF partitions IS NULL OR partitions < 0 OR partitions > 1024 THEN
        PERFORM ddb.validation_error('partitions must be between 0 (no partitioning) and 1024');
    END IF;
    -- one creation of a name at a time: a concurrent one waits here, then finds the table (YD005)
    PERFORM pg_advisory_xact_lock(hashtext('ddb.create_table'), hashtext(create_table.table_name));
    IF EXISTS (SELECT FROM ddb.tables t WHERE t.table_name = create_table.table_name) THEN
        RAISE EXCEPTION USING ERRCODE = 'YD005', MESSAGE = 'Table already exists: ' || table_name;
    END IF;
    types := jsonb_build_object(hash_key, hash_key_type);
    IF range_key IS NOT NULL THEN
        types := types || jsonb_build_object(range_key, range_key_type);
    END IF;

    IF NOT EXISTS (SELECT FROM pg_namespace WHERE nspname = schema_name) THEN
        EXECUTE format('CREATE SCHEMA %I', schema_name);
    END IF;
    -- the primary key is named "<relation>$pkey": "$" appears in no DynamoDB
    -- name, so a table called "<name>_pkey" cannot collide with it
    EXECUTE format(
        'CREATE TABLE %I.%I (pk ddb.ddb_key NOT NULL, %s item jsonb NOT NULL, expires_at bigint, '
        'item_size integer NOT NULL, CONSTRAINT %I PRIMARY KEY (pk%s)) %s',
        schema_name, rel,
        CASE WHEN range_key IS NOT NULL THEN 'sk ddb.ddb_key NOT NULL,' ELSE '' END,
        ddb.relation_name(rel || '$pkey'),
        CASE WHEN range_key IS NOT NULL THEN ', sk' ELSE '' END,
        CASE WHEN partitions > 0 THEN 'PARTITION BY HASH (pk)' ELSE '' END);
    PERFORM ddb.create_partitions(schema_name, rel, partitions);
    -- "$" appears in no DynamoDB name, so this cannot meet a GSI's "<table>:<index>"
    EXECUTE format('CREATE INDEX %I ON %I.%I (expires_at) WHERE expires_at IS NOT NULL',
                   ddb.relation_name(rel || '$expires_at'), schema_name, rel);
    EXECUTE format('COMMENT ON TABLE %I.%I IS %L', schema_name, rel,
                   'DynamoDB table ' || table_name || ' (ddb_model); write through ddb.put_item / ddb.execute');

    INSERT INTO ddb.tables (table_name, schema_name, relation_name, hash_key, range_key,
                            attribute_types, partitions, ttl_attribute)
    VALUES (table_name, schema_name, rel, hash_key, range_key, types, partitions, ttl_attribute);
END $$;

-- DeleteTable.
CREATE OR REPLACE FUNCTION ddb.api_delete_table(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    description jsonb;
BEGIN
    IF request->>'TableName' IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tableName'' failed to satisfy constraint: Member must not be null');
    END IF;
    -- the catalog row locked first: a concurrent DeleteTable waits here, then finds no table (YD004)
    PERFORM ddb.require_table(request->>'TableName', true);
    description := ddb.describe_table(request->>'TableName');
    PERFORM ddb.delete_table(request->>'TableName');
    RETURN jsonb_build_object('TableDescription', description || '{"TableStatus": "DELETING"}');
END $$;
