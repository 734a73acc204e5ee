-- ---------------------------------------------------------------------------
-- ddb.execute: DynamoDB's JSON protocol (docs/api.md).  Item operations are
-- C; the table operations below are SQL, called by the C dispatcher.
-- ---------------------------------------------------------------------------

-- ClientRequestTokens of TransactWriteItems, kept ten minutes (idempotency).
CREATE TABLE ddb.transaction_tokens (
    token text PRIMARY KEY,
    request_digest text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION ddb.execute(operation text, request jsonb) RETURNS jsonb
    AS 'MODULE_PATHNAME', 'ddb_execute' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION ddb.execute(text, jsonb) IS
    'Runs a DynamoDB action (PutItem, Query, CreateTable, ...) on DynamoDB''s JSON request and returns DynamoDB''s JSON response';

-- A table's ARN, as DescribeTable gives it (streams and indexes extend it).
CREATE FUNCTION ddb.table_arn(table_name text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN 'arn:aws:dynamodb:ddb-model:000000000000:table/' || table_name;

-- The table name a table's ARN holds (arn:aws:dynamodb:<region>:<account>:table/<name>,
-- of any region and account), or NULL for a value that is no table's ARN.
CREATE FUNCTION ddb.arn_table_name(arn text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN substring(arn FROM '^arn:aws[a-z-]*:dynamodb:[a-z0-9-]*:[0-9]{12}:table/([^/]+)$');

-- A table's TableId, as DescribeTable gives it.
CREATE FUNCTION ddb.table_id(t ddb.tables) RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN md5(t.table_name || t.created_at::text)::uuid;

-- A KeySchema as DynamoDB describes one: the HASH elements, then the RANGE
-- ones (a multi-attribute key's attributes after the first are extra_*).
CREATE FUNCTION ddb.key_schema(hash_key text, range_key text, extra_hash_keys text[] DEFAULT NULL,
                               extra_range_keys text[] DEFAULT NULL) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT jsonb_agg(jsonb_build_object('AttributeName', a.name, 'KeyType', a.type) ORDER BY a.n)
        FROM unnest(ARRAY[hash_key] || extra_hash_keys || ARRAY[range_key] || extra_range_keys,
                    array_fill('HASH'::text, ARRAY[1 + coalesce(cardinality(extra_hash_keys), 0)])
                    || array_fill('RANGE'::text, ARRAY[1 + coalesce(cardinality(extra_range_keys), 0)]))
             WITH ORDINALITY AS a(name, type, n)
        WHERE a.name IS NOT NULL);

-- The DynamoDB-JSON description of a table (DescribeTable's Table).
CREATE FUNCTION ddb.describe_table(table_name text) RETURNS jsonb
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
    -- a global index also has a status, throughput and its settings (sql/table_settings.sql); a local one has not
    SELECT jsonb_agg(d || jsonb_build_object('IndexStatus', 'ACTIVE',
                         'ProvisionedThroughput', jsonb_build_object('ReadCapacityUnits', read_capacity,
                                                                     'WriteCapacityUnits', write_capacity,
                                                                     'NumberOfDecreasesToday', 0))
                       || settings
                     ORDER BY index_name) FILTER (WHERE NOT local),
           jsonb_agg(d ORDER BY index_name) FILTER (WHERE local)
    INTO indexes, local_indexes
    FROM (SELECT i.index_name, i.local, i.read_capacity, i.write_capacity,
                 ddb.throughput_settings_description(t.billing_mode, i.read_capacity, i.write_capacity,
                                                     i.max_read_request_units, i.max_write_request_units,
                                                     i.warm_read_units, i.warm_write_units) AS settings,
                 jsonb_build_object(
              'IndexName', i.index_name,
              'KeySchema', ddb.key_schema(i.hash_key, i.range_key, i.extra_hash_keys, i.extra_range_keys),
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
        || ddb.table_settings_description(t)
        || CASE WHEN indexes IS NOT NULL THEN jsonb_build_object('GlobalSecondaryIndexes', indexes)
           ELSE '{}'::jsonb END
        || CASE WHEN local_indexes IS NOT NULL THEN jsonb_build_object('LocalSecondaryIndexes', local_indexes)
           ELSE '{}'::jsonb END
        || ddb.stream_description(t);
END $$;

-- Reads a KeySchema: (hash attribute, range attribute or NULL), with
-- DynamoDB's checks.  With multi (a global secondary index's), a side may
-- have up to four attributes (multi-attribute keys): the HASH elements
-- first, then the RANGE ones; the attributes after the first of each side
-- come back in extra_hash_keys and extra_range_keys (NULL when none).
CREATE FUNCTION ddb.read_key_schema(key_schema jsonb, member text, multi boolean DEFAULT false,
                                    OUT hash_key text, OUT range_key text,
                                    OUT extra_hash_keys text[], OUT extra_range_keys text[])
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e jsonb;
    max_length integer := CASE WHEN multi THEN 8 ELSE 2 END;
    hash_keys text[] := '{}';
    range_keys text[] := '{}';
BEGIN
    IF key_schema IS NULL OR jsonb_typeof(key_schema) = 'null' THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value null at ''%s'' failed to satisfy constraint: Member must not be null', member));
    END IF;
    IF jsonb_typeof(key_schema) <> 'array' THEN
        PERFORM ddb.validation_error(format(
            'Unexpected value type in payload for %s: expected a list', member));
    END IF;
    IF jsonb_array_length(key_schema) NOT BETWEEN 1 AND max_length THEN
        -- the elements as DynamoDB's service prints them
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''[%s]'' at ''%s'' failed to satisfy constraint: %s',
            (SELECT string_agg(format('KeySchemaElement(attributeName=%s, keyType=%s)', x->>'AttributeName', x->>'KeyType'),
                               ', ' ORDER BY n)
             FROM jsonb_array_elements(key_schema) WITH ORDINALITY AS a(x, n)),
            member,
            CASE WHEN jsonb_array_length(key_schema) = 0 THEN 'Member must have length greater than or equal to 1'
                 ELSE format('Member must have length less than or equal to %s', max_length) END));
    END IF;
    FOR e IN SELECT value FROM jsonb_array_elements(key_schema) LOOP
        IF e->>'AttributeName' IS NULL OR e->>'AttributeName' = '' THEN
            PERFORM ddb.validation_error('1 validation error detected: Value null at ''keySchema.1.member.attributeName'' failed to satisfy constraint: Member must not be null');
        END IF;
        IF e->>'KeyType' = 'HASH' THEN
            IF cardinality(hash_keys) > 0 AND NOT multi THEN
                PERFORM ddb.validation_error('Invalid KeySchema: Too many hash keys specified.  All Dynamo DB tables must have exactly one hash key');
            END IF;
            IF cardinality(range_keys) > 0 THEN
                PERFORM ddb.validation_error('Invalid KeySchema: every HASH element of a multi-attribute key comes before its RANGE elements');
            END IF;
            IF cardinality(hash_keys) = 4 THEN
                PERFORM ddb.validation_error('Invalid KeySchema: a multi-attribute partition key has at most 4 attributes');
            END IF;
            hash_keys := hash_keys || (e->>'AttributeName');
        ELSIF e->>'KeyType' = 'RANGE' THEN
            IF cardinality(hash_keys) = 0 OR (cardinality(range_keys) > 0 AND NOT multi) THEN
                PERFORM ddb.validation_error('Invalid KeySchema: The first KeySchemaElement is not a HASH key type');
            END IF;
            IF cardinality(range_keys) = 4 THEN
                PERFORM ddb.validation_error('Invalid KeySchema: a multi-attribute sort key has at most 4 attributes');
            END IF;
            range_keys := range_keys || (e->>'AttributeName');
        ELSE
            PERFORM ddb.validation_error(format(
                '1 validation error detected: Value ''%s'' at ''%s.1.member.keyType'' failed to satisfy constraint: '
                'Member must satisfy enum value set: [HASH, RANGE]', e->>'KeyType', member));
        END IF;
    END LOOP;
    IF (SELECT count(DISTINCT k) FROM unnest(hash_keys || range_keys) k) < cardinality(hash_keys || range_keys) THEN
        PERFORM ddb.validation_error('Invalid KeySchema: Some index key attribute have no definition');
    END IF;
    hash_key := hash_keys[1];
    range_key := range_keys[1];
    extra_hash_keys := nullif(hash_keys[2:], '{}');
    extra_range_keys := nullif(range_keys[2:], '{}');
END $$;

-- Creates an index a request describes (CreateTable's GlobalSecondaryIndexes
-- and LocalSecondaryIndexes, UpdateTable's Create): its IndexName, KeySchema
-- (already checked by the caller) and Projection from spec, the key types
-- from the request's AttributeDefinitions; a global one's
-- ProvisionedThroughput checked against the table's billing mode (member:
-- where the request has the index, as DynamoDB names it).
CREATE FUNCTION ddb.create_requested_index(table_name text, spec jsonb, types jsonb, local boolean, member text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    projection jsonb := coalesce(spec->'Projection', '{}');
    keys record := ddb.read_key_schema(spec->'KeySchema', 'keySchema', NOT local);
    units record;
BEGIN
    PERFORM ddb.check_name(member || '.indexName', spec->>'IndexName');
    IF NOT local THEN
        units := ddb.index_throughput(spec, (SELECT t.billing_mode FROM ddb.tables t
                                             WHERE t.table_name = create_requested_index.table_name), member);
    END IF;
    PERFORM ddb.create_index(table_name, spec->>'IndexName', keys.hash_key, types->>keys.hash_key,
                             keys.range_key, coalesce(types->>keys.range_key, 'S'),
                             coalesce(projection->>'ProjectionType', 'ALL'),
                             (SELECT array_agg(v) FROM jsonb_array_elements_text(projection->'NonKeyAttributes') v),
                             local => local,
                             extra_hash_keys => keys.extra_hash_keys,
                             extra_hash_key_types => (SELECT array_agg(types->>k ORDER BY n)
                                                      FROM unnest(keys.extra_hash_keys) WITH ORDINALITY AS a(k, n)),
                             extra_range_keys => keys.extra_range_keys,
                             extra_range_key_types => (SELECT array_agg(types->>k ORDER BY n)
                                                       FROM unnest(keys.extra_range_keys) WITH ORDINALITY AS a(k, n)));
    IF NOT local THEN
        UPDATE ddb.indexes i SET read_capacity = units.reads, write_capacity = units.writes
        WHERE i.table_name = create_requested_index.table_name AND i.index_name = spec->>'IndexName';
        PERFORM ddb.set_index_settings(table_name, spec, true);
    END IF;
END $$;

-- CreateTable.
CREATE FUNCTION ddb.api_create_table(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text := request->>'TableName';
    keys record;
    types jsonb := '{}';
    used text[] := '{}';
    d jsonb;
    position bigint;
    g jsonb;
    gkeys record;
    tags jsonb;
BEGIN
    PERFORM ddb.check_table_access(coalesce(name, ''), 'CreateTable', 'create');
    IF name IS NULL THEN
        PERFORM ddb.validation_error('The parameter ''TableName'' is required but was not present in the request');
    END IF;
    PERFORM ddb.check_name('tableName', name);
    keys := ddb.read_key_schema(request->'KeySchema', 'keySchema');
    IF request->'AttributeDefinitions' IS NULL OR jsonb_typeof(request->'AttributeDefinitions') <> 'array' THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''attributeDefinitions'' failed to satisfy constraint: Member must not be null');
    END IF;
    FOR d, position IN SELECT value, ordinality FROM jsonb_array_elements(request->'AttributeDefinitions') WITH ORDINALITY LOOP
        IF types ? (d->>'AttributeName') THEN
            PERFORM ddb.validation_error('Cannot have two attributes with the same name');
        END IF;
        PERFORM ddb.check_key_type(d->>'AttributeName', d->>'AttributeType',
                                   format('attributeDefinitions.%s.member.attributeType', position));
        types := types || jsonb_build_object(d->>'AttributeName', d->>'AttributeType');
    END LOOP;
    used := ARRAY[keys.hash_key] || CASE WHEN keys.range_key IS NOT NULL THEN ARRAY[keys.range_key] ELSE '{}' END;
    FOR g IN SELECT value FROM jsonb_array_elements(coalesce(request->'GlobalSecondaryIndexes', '[]')) LOOP
        gkeys := ddb.read_key_schema(g->'KeySchema', 'globalSecondaryIndexes.1.member.keySchema', true);
        used := used || array_remove(ARRAY[gkeys.hash_key, gkeys.range_key] || gkeys.extra_hash_keys || gkeys.extra_range_keys, NULL);
    END LOOP;
    -- a local secondary index: the table's hash key, another range key, on a table that has one
    FOR g IN SELECT value FROM jsonb_array_elements(coalesce(request->'LocalSecondaryIndexes', '[]')) LOOP
        gkeys := ddb.read_key_schema(g->'KeySchema', 'localSecondaryIndexes.1.member.keySchema');
        IF keys.range_key IS NULL THEN
            PERFORM ddb.validation_error('One or more parameter values were invalid: Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex');
        END IF;
        IF gkeys.hash_key IS DISTINCT FROM keys.hash_key THEN
            PERFORM ddb.validation_error(format(
                'One or more parameter values were invalid: Index KeySchema does not have the same leading hash key as table KeySchema for index: %s. index hash key: %s, table hash key: %s',
                g->>'IndexName', gkeys.hash_key, keys.hash_key));
        END IF;
        -- (DynamoDB Local's words: AWS documents the rule, not the message)
        IF gkeys.range_key IS NULL THEN
            PERFORM ddb.validation_error('Local secondary indices must have a range key');
        END IF;
        used := used || gkeys.range_key;
    END LOOP;
    IF EXISTS (SELECT FROM unnest(used) u WHERE NOT types ? u) THEN
        PERFORM ddb.validation_error(format(
            'One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [%s], AttributeDefinitions: [%s]',
            array_to_string(used, ', '), (SELECT string_agg(k, ', ') FROM jsonb_object_keys(types) k)));
    END IF;
    IF EXISTS (SELECT FROM jsonb_object_keys(types) k WHERE k <> ALL (used)) THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions');
    END IF;
    IF (SELECT count(DISTINCT value->>'IndexName') <> count(*)
        FROM jsonb_array_elements(coalesce(request->'GlobalSecondaryIndexes', '[]')
                                  || coalesce(request->'LocalSecondaryIndexes', '[]'))) THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: Duplicate index name: '
            || (SELECT value->>'IndexName' FROM jsonb_array_elements(coalesce(request->'GlobalSecondaryIndexes', '[]')
                                                                     || coalesce(request->'LocalSecondaryIndexes', '[]'))
                GROUP BY 1 HAVING count(*) > 1 LIMIT 1));
    END IF;
    IF coalesce(request->'Tags', 'null') NOT IN ('null', '[]') THEN
        tags := ddb.request_tags(request->'Tags', '{}');
    END IF;

    PERFORM ddb.create_table(name, keys.hash_key, types->>keys.hash_key, keys.range_key,
                             coalesce(types->>keys.range_key, 'S'),
                             coalesce(nullif(current_setting('ddb.default_schema', true), ''), 'public'),
                             coalesce(nullif(current_setting('ddb.default_partitions', true), '')::int, 0));
    -- without a BillingMode, PROVISIONED: the request then needs ProvisionedThroughput
    PERFORM ddb.set_billing(name, coalesce(request->>'BillingMode', 'PROVISIONED'), request->'ProvisionedThroughput');
    IF jsonb_typeof(request->'StreamSpecification'->'StreamEnabled') = 'boolean'
       AND (request->'StreamSpecification'->>'StreamEnabled')::boolean THEN
        PERFORM ddb.set_stream(name, request->'StreamSpecification');
    END IF;
    PERFORM ddb.set_table_settings(name, request, true);
    IF tags IS NOT NULL THEN
        PERFORM ddb.set_table_tags(name, tags);
    END IF;
    FOR g, position IN SELECT value, ordinality
                       FROM jsonb_array_elements(coalesce(request->'GlobalSecondaryIndexes', '[]')) WITH ORDINALITY LOOP
        PERFORM ddb.create_requested_index(name, g, types, false, format('globalSecondaryIndexes.%s.member', position));
    END LOOP;
    FOR g, position IN SELECT value, ordinality
                       FROM jsonb_array_elements(coalesce(request->'LocalSecondaryIndexes', '[]')) WITH ORDINALITY LOOP
        PERFORM ddb.create_requested_index(name, g, types, true, format('localSecondaryIndexes.%s.member', position));
    END LOOP;
    RETURN jsonb_build_object('TableDescription', ddb.describe_table(name));
END $$;

-- DescribeTable; a restored table's also has its RestoreSummary, and is
-- CREATING while the restore runs (DELETING once, when this finds its
-- restore's worker gone and the table dropped: sql/restore.sql).
CREATE FUNCTION ddb.api_describe_table(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    description jsonb;
BEGIN
    IF request->>'TableName' IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tableName'' failed to satisfy constraint: Member must not be null');
    END IF;
    PERFORM ddb.require_table(request->>'TableName');
    PERFORM ddb.check_table_access(request->>'TableName', 'DescribeTable', 'read');
    description := ddb.describe_table(request->>'TableName') || ddb.restore_description(request->>'TableName');
    IF description->>'TableStatus' = 'CREATING' AND NOT ddb.restore_running(request->>'TableName') THEN
        -- (a statement of its own: it sees what ending the restore did)
        IF NOT EXISTS (SELECT FROM ddb.tables t WHERE t.table_name = request->>'TableName') THEN
            description := jsonb_set(description || '{"TableStatus": "DELETING"}', '{RestoreSummary,RestoreInProgress}', 'false');
        END IF;
    END IF;
    RETURN jsonb_build_object('Table', description);
END $$;

-- A request's Limit: default_value when absent, else an integer from 1 to max_value (DynamoDB's message otherwise).
CREATE FUNCTION ddb.request_limit(request jsonb, max_value integer, default_value integer) RETURNS integer
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    given text := request->>'Limit';
BEGIN
    IF given IS NULL THEN
        RETURN default_value;
    END IF;
    IF jsonb_typeof(request->'Limit') <> 'number' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = 'Unexpected value type in payload for Limit: expected a number';
    END IF;
    IF given !~ '^-?[0-9]{1,18}$' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = 'Unexpected value type in payload for Limit: expected an integer';
    END IF;
    IF given::bigint NOT BETWEEN 1 AND max_value THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''limit'' failed to satisfy constraint: Member must have value %s',
            given, CASE WHEN given::bigint < 1 THEN 'greater than or equal to 1'
                        ELSE 'less than or equal to ' || max_value END));
    END IF;
    RETURN given::integer;
END $$;

-- ListTables: names in order, paged by Limit and ExclusiveStartTableName.
CREATE FUNCTION ddb.api_list_tables(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    page_size int := ddb.request_limit(request, 100, 100);
    names text[];
BEGIN
    -- a restore whose worker is gone ends here and its table goes: the
    -- requests that find it so raise ResourceNotFoundException, which rolls
    -- that back, and ListTables would list a table no request can find
    PERFORM ddb.restore_running(r.table_name) FROM ddb.table_restores r WHERE r.in_progress;
    SELECT array_agg(table_name ORDER BY table_name COLLATE "C") INTO names
    FROM (SELECT table_name FROM ddb.tables
          WHERE (request->>'ExclusiveStartTableName' IS NULL
                 OR table_name COLLATE "C" > (request->>'ExclusiveStartTableName') COLLATE "C")
            AND ddb.table_privilege(schema_name, relation_name, 'SELECT, INSERT, UPDATE, DELETE')
          ORDER BY table_name COLLATE "C" LIMIT page_size + 1) t;
    names := coalesce(names, '{}');
    IF cardinality(names) > page_size THEN
        RETURN jsonb_build_object('TableNames', to_jsonb(names[1:page_size]),
                                  'LastEvaluatedTableName', names[page_size]);
    END IF;
    RETURN jsonb_build_object('TableNames', to_jsonb(names));
END $$;

-- DeleteTable.
CREATE FUNCTION ddb.api_delete_table(request jsonb) RETURNS jsonb
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
    PERFORM ddb.check_table_access(request->>'TableName', 'DeleteTable', 'own');
    description := ddb.describe_table(request->>'TableName');
    -- a table being restored waits for its restore; one whose restore lost its worker went with it
    IF ddb.table_restoring(request->>'TableName') THEN
        IF ddb.restore_running(request->>'TableName') THEN
            PERFORM ddb.refuse_restoring(request->>'TableName');
        END IF;
        IF NOT EXISTS (SELECT FROM ddb.tables t WHERE t.table_name = request->>'TableName') THEN
            RETURN jsonb_build_object('TableDescription', description || '{"TableStatus": "DELETING"}');
        END IF;
    END IF;
    PERFORM ddb.delete_table(request->>'TableName');
    RETURN jsonb_build_object('TableDescription', description || '{"TableStatus": "DELETING"}');
END $$;

-- UpdateTimeToLive.
CREATE FUNCTION ddb.api_update_time_to_live(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    spec jsonb := request->'TimeToLiveSpecification';
BEGIN
    IF request->>'TableName' IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tableName'' failed to satisfy constraint: Member must not be null');
    END IF;
    IF spec IS NULL OR jsonb_typeof(spec->'Enabled') IS DISTINCT FROM 'boolean' THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''timeToLiveSpecification.enabled'' failed to satisfy constraint: Member must not be null');
    END IF;
    PERFORM ddb.require_table(request->>'TableName');
    PERFORM ddb.check_table_access(request->>'TableName', 'UpdateTimeToLive', 'own');
    PERFORM ddb.refuse_restoring(request->>'TableName');
    PERFORM ddb.update_time_to_live(request->>'TableName', spec->>'AttributeName', (spec->>'Enabled')::boolean);
    RETURN jsonb_build_object('TimeToLiveSpecification', spec);
END $$;

-- DescribeTimeToLive.
CREATE FUNCTION ddb.api_describe_time_to_live(request jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
BEGIN
    t := ddb.require_table(coalesce(request->>'TableName', ''));
    PERFORM ddb.check_table_access(t.table_name, 'DescribeTimeToLive', 'read');
    RETURN jsonb_build_object('TimeToLiveDescription',
        CASE WHEN t.ttl_attribute IS NULL THEN '{"TimeToLiveStatus": "DISABLED"}'::jsonb
             ELSE jsonb_build_object('TimeToLiveStatus', 'ENABLED', 'AttributeName', t.ttl_attribute) END);
END $$;

-- UpdateTable: billing mode and throughput, GlobalSecondaryIndexUpdates
-- (Create, Update of throughput and settings, Delete), and the table
-- settings of sql/table_settings.sql.
CREATE FUNCTION ddb.api_update_table(request jsonb) RETURNS jsonb
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
    position bigint;
    units record;
    missing text;
BEGIN
    IF name IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tableName'' failed to satisfy constraint: Member must not be null');
    END IF;
    PERFORM ddb.check_name('tableName', name);
    -- what the request asks, checked before the table is looked up, as DynamoDB validates
    PERFORM ddb.check_update_concerns(request);
    t := ddb.require_table(name);
    PERFORM ddb.check_table_access(name, 'UpdateTable', 'own');
    PERFORM ddb.refuse_restoring(name);
    t := ddb.require_table(name);   -- a restore that lost its worker took its table with it
    IF t.model IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'YD005',
            MESSAGE = format('Attempt to change a resource which is still in use: table %s belongs to the %s model', name, t.model);
    END IF;
    PERFORM ddb.keep_warm_throughput(name);
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
        IF mode = 'PAY_PER_REQUEST' THEN
            UPDATE ddb.indexes i SET read_capacity = 0, write_capacity = 0 WHERE i.table_name = name;
        ELSIF t.billing_mode = 'PAY_PER_REQUEST' THEN
            -- to PROVISIONED: every global index gets its own throughput in this request
            SELECT i.index_name INTO missing FROM ddb.indexes i
            WHERE i.table_name = name AND NOT i.local
              AND NOT EXISTS (SELECT FROM jsonb_array_elements(coalesce(request->'GlobalSecondaryIndexUpdates', '[]')) u
                              WHERE u.value->'Update'->>'IndexName' = i.index_name)
            ORDER BY i.index_name LIMIT 1;
            IF missing IS NOT NULL THEN
                PERFORM ddb.validation_error(format(
                    'One or more parameter values were invalid: ProvisionedThroughput must be specified for index: %s', missing));
            END IF;
        END IF;
    END IF;
    mode := (SELECT tables.billing_mode FROM ddb.tables WHERE tables.table_name = name);
    FOR d IN SELECT value FROM jsonb_array_elements(coalesce(request->'AttributeDefinitions', '[]')) LOOP
        PERFORM ddb.check_key_type(d->>'AttributeName', d->>'AttributeType');
        types := types || jsonb_build_object(d->>'AttributeName', d->>'AttributeType');
    END LOOP;
    FOR u, position IN SELECT value, ordinality
                       FROM jsonb_array_elements(coalesce(request->'GlobalSecondaryIndexUpdates', '[]')) WITH ORDINALITY LOOP
        IF u ? 'Create' THEN
            c := u->'Create';
            gkeys := ddb.read_key_schema(c->'KeySchema', 'globalSecondaryIndexUpdates.1.member.create.keySchema', true);
            IF EXISTS (SELECT FROM unnest(array_remove(ARRAY[gkeys.hash_key, gkeys.range_key] || gkeys.extra_hash_keys
                                                       || gkeys.extra_range_keys, NULL)) k
                       WHERE NOT types ? k) THEN
                PERFORM ddb.validation_error('One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions');
            END IF;
            PERFORM ddb.create_requested_index(name, c, types, false,
                                               format('globalSecondaryIndexUpdates.%s.member.create', position));
        ELSIF u ? 'Delete' THEN
            PERFORM ddb.drop_index(name, u->'Delete'->>'IndexName');
        ELSIF u ? 'Update' THEN
            -- a global index's throughput, on-demand maxima or warm throughput
            c := u->'Update';
            IF NOT EXISTS (SELECT FROM ddb.indexes i
                           WHERE i.table_name = name AND i.index_name = c->>'IndexName' AND NOT i.local) THEN
                RAISE EXCEPTION USING ERRCODE = 'YD004',
                    MESSAGE = format('Requested resource not found: Index: %s not found', c->>'IndexName');
            END IF;
            IF coalesce(jsonb_typeof(c->'ProvisionedThroughput'), 'null') <> 'null' THEN
                units := ddb.index_throughput(c, mode, format('globalSecondaryIndexUpdates.%s.member.update', position));
                UPDATE ddb.indexes i SET read_capacity = units.reads, write_capacity = units.writes
                WHERE i.table_name = name AND i.index_name = c->>'IndexName';
            ELSIF coalesce(jsonb_typeof(c->'OnDemandThroughput'), 'null') = 'null'
                  AND coalesce(jsonb_typeof(c->'WarmThroughput'), 'null') = 'null' THEN
                PERFORM ddb.validation_error(format(
                    '1 validation error detected: Value null at ''globalSecondaryIndexUpdates.%s.member.update.provisionedThroughput'' failed to satisfy constraint: Member must not be null',
                    position));
            END IF;
            PERFORM ddb.set_index_settings(name, c, false);
        ELSE
            PERFORM ddb.validation_error('One or more parameter values were invalid: a GlobalSecondaryIndexUpdate is Create, Update or Delete');
        END IF;
    END LOOP;
    PERFORM ddb.set_table_settings(name, request, false);
    IF request ? 'StreamSpecification' THEN
        PERFORM ddb.set_stream(name, request->'StreamSpecification');
    END IF;
    RETURN jsonb_build_object('TableDescription', ddb.describe_table(name));
END $$;
