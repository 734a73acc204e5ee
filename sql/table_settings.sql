-- ---------------------------------------------------------------------------
-- Table settings (docs/tables.md, "Table settings"): DeletionProtectionEnabled,
-- TableClass, OnDemandThroughput and WarmThroughput, taken by CreateTable and
-- UpdateTable (the last two by a global index's Create and Update too),
-- checked and described as DynamoDB does; the account's operations
-- DescribeLimits and DescribeEndpoints; and, at the end, the billing mode
-- and ProvisionedThroughput.  Nothing here changes how a table is stored: a
-- class, a maximum or a warm throughput is declared and described, and
-- ProvisionedThroughput only limits a table's requests with ddb.throttling on.
-- ---------------------------------------------------------------------------

-- DynamoDB's default quotas of an account in a region (DescribeLimits); the
-- table maxima bound ProvisionedThroughput, OnDemandThroughput and
-- WarmThroughput, as in DynamoDB.
CREATE FUNCTION ddb.describe_limits() RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN '{"AccountMaxReadCapacityUnits": 80000, "AccountMaxWriteCapacityUnits": 80000,
         "TableMaxReadCapacityUnits": 40000, "TableMaxWriteCapacityUnits": 40000}'::jsonb;

-- DescribeLimits: takes no table, and no privilege (docs/security.md).
CREATE FUNCTION ddb.api_describe_limits(request jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ddb.describe_limits();

-- DescribeEndpoints: this server's address, from the setting
-- ddb.endpoint_address that ddb-gateway sets on its connections
-- (docs/gateway.md); unset, the gateway's default address.
CREATE FUNCTION ddb.api_describe_endpoints(request jsonb) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN jsonb_build_object('Endpoints', jsonb_build_array(jsonb_build_object(
    'Address', coalesce(nullif(current_setting('ddb.endpoint_address', true), ''), '127.0.0.1:8000'),
    'CachePeriodInMinutes', 1440)));

-- A whole number a request gives at member (NULL when absent or null), a
-- Long as DynamoDB's API reads it; SerializationException for a value of
-- another JSON type, a fraction, or a number beyond a Long's range.
CREATE FUNCTION ddb.request_long(value jsonb, member text) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF value IS NULL OR jsonb_typeof(value) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(value) <> 'number' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = format('Unexpected value type in payload for %s: expected a number', member);
    END IF;
    IF value::text !~ '^-?[0-9]+$' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = format('Unexpected value type in payload for %s: expected an integer', member);
    END IF;
    IF value::text::numeric NOT BETWEEN -9223372036854775808 AND 9223372036854775807 THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = format(
            'Unexpected value in payload for %s: %s is out of the range of a Long (-9223372036854775808 to 9223372036854775807)',
            member, value);
    END IF;
    RETURN value::text::bigint;
END $$;

-- A request's object at member, or NULL when absent or null (SerializationException for another JSON type).
CREATE FUNCTION ddb.request_object(value jsonb, member text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF value IS NULL OR jsonb_typeof(value) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(value) <> 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = format('Unexpected value type in payload for %s: expected an object', member);
    END IF;
    RETURN value;
END $$;

-- LimitExceededException (DynamoDB's "Subscriber limit exceeded") for units
-- requested (what: what they are and for what) above the table maximum of
-- DescribeLimits on one side (member: Read or Write).
CREATE FUNCTION ddb.check_table_maximum(units bigint, member text, what text) RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF units > (ddb.describe_limits()->>format('TableMax%sCapacityUnits', member))::bigint THEN
        RAISE EXCEPTION USING ERRCODE = 'YD009', MESSAGE = format(
            'Subscriber limit exceeded: Requested %s exceeds TableMax%sCapacityUnits of the account in region ddb-model',
            what, member);
    END IF;
END $$;

-- An OnDemandThroughput (spec) of a table (index_name NULL) or a global
-- index, checked as DynamoDB checks it: only on an on-demand table, each
-- maximum at least 1 (or -1 to remove it, but not when creating) and at
-- most the table maximum of DescribeLimits.  NULL for a maximum not given.
CREATE FUNCTION ddb.read_on_demand_throughput(spec jsonb, billing_mode text, index_name text, creating boolean,
                                              OUT reads bigint, OUT writes bigint)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    units bigint;
    member text;
    subject text := CASE WHEN index_name IS NULL THEN 'table' ELSE 'index : ' || index_name END;
BEGIN
    spec := ddb.request_object(spec, 'OnDemandThroughput');
    reads := ddb.request_long(spec->'MaxReadRequestUnits', 'MaxReadRequestUnits');
    writes := ddb.request_long(spec->'MaxWriteRequestUnits', 'MaxWriteRequestUnits');
    IF reads IS NULL AND writes IS NULL THEN
        RETURN;
    END IF;
    IF billing_mode = 'PROVISIONED' THEN
        PERFORM ddb.validation_error(format(
            'One or more parameter values were invalid: %s for OnDemandThroughput%s cannot be specified when %s',
            CASE WHEN reads IS NOT NULL THEN 'MaxReadRequestUnits' ELSE 'MaxWriteRequestUnits' END,
            CASE WHEN index_name IS NULL THEN '' WHEN creating THEN ' for index: ' || index_name ELSE ' for index : ' || index_name END,
            CASE WHEN creating THEN 'table BillingMode is PROVISIONED.' ELSE 'the table BillingMode is PROVISIONED' END));
    END IF;
    FOR member, units IN VALUES ('Read', reads), ('Write', writes) LOOP
        IF units = 0 OR units < -1 OR (units = -1 AND creating) THEN
            PERFORM ddb.validation_error(format(
                'One or more parameter values were invalid: Requested Max%sRequestUnits for OnDemandThroughput for %s is outside of valid range',
                member, subject));
        END IF;
        PERFORM ddb.check_table_maximum(units, member, format('Max%sRequestUnits for OnDemandThroughput for %s', member, subject));
    END LOOP;
END $$;

-- A maximum after a request: unchanged when not given, none after -1.
CREATE FUNCTION ddb.next_maximum(current_units bigint, requested bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN requested IS NULL THEN current_units WHEN requested = -1 THEN NULL ELSE requested END;

-- The warm throughput of a table or global index: what was asked for or
-- reached (warm_reads, warm_writes), and never less than the base, which is
-- 12000 reads and 4000 writes a second on demand, the provisioned units
-- otherwise.
CREATE FUNCTION ddb.warm_units(billing_mode text, read_capacity integer, write_capacity integer,
                               warm_reads bigint, warm_writes bigint, OUT reads bigint, OUT writes bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT greatest(warm_reads, CASE WHEN billing_mode = 'PAY_PER_REQUEST' THEN 12000 ELSE read_capacity END),
           greatest(warm_writes, CASE WHEN billing_mode = 'PAY_PER_REQUEST' THEN 4000 ELSE write_capacity END);
END;

-- A WarmThroughput (spec) of a table (index_name NULL) or a global index,
-- checked as DynamoDB checks it: never below the current warm throughput
-- (reads, writes; when creating, the base: DynamoDB's initial on-demand
-- throughput, or the provisioned units) nor above the table maximum of
-- DescribeLimits.  NULL for what is not given.
CREATE FUNCTION ddb.read_warm_throughput(spec jsonb, billing_mode text, index_name text, creating boolean,
                                         current_reads bigint, current_writes bigint,
                                         OUT reads bigint, OUT writes bigint)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    member text;
    units bigint;
    floor_units bigint;
    subject text := CASE WHEN index_name IS NULL THEN 'table' ELSE 'index ' || index_name END;
BEGIN
    spec := ddb.request_object(spec, 'WarmThroughput');
    reads := ddb.request_long(spec->'ReadUnitsPerSecond', 'ReadUnitsPerSecond');
    writes := ddb.request_long(spec->'WriteUnitsPerSecond', 'WriteUnitsPerSecond');
    FOR member, units, floor_units IN VALUES ('Read', reads, current_reads), ('Write', writes, current_writes) LOOP
        IF units < floor_units THEN
            PERFORM ddb.validation_error(format('One or more parameter values were invalid: Requested %sUnitsPerSecond for WarmThroughput for %s is lower than %s',
                member, subject,
                CASE WHEN NOT creating THEN 'current WarmThroughput, decreasing WarmThroughput is not supported'
                     WHEN billing_mode = 'PAY_PER_REQUEST'
                     THEN 'initial throughput for OnDemand. See: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html#on-demand-capacity-mode-initial'
                     ELSE member || 'CapacityUnits of ProvisionedThroughput' END));
        END IF;
        PERFORM ddb.check_table_maximum(units, member, format('%sUnitsPerSecond for WarmThroughput for %s', member, subject));
    END LOOP;
END $$;

-- Keeps a table's and its global indexes' warm throughput from falling
-- when their base falls (DynamoDB's never decreases: it stays at the most
-- a table was provisioned with); UpdateTable calls it before it changes
-- anything.
CREATE FUNCTION ddb.keep_warm_throughput(table_name text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE ddb.tables t SET (warm_read_units, warm_write_units) =
        (SELECT w.reads, w.writes FROM ddb.warm_units(t.billing_mode, t.read_capacity, t.write_capacity,
                                                      t.warm_read_units, t.warm_write_units) w)
    WHERE t.table_name = keep_warm_throughput.table_name;
    UPDATE ddb.indexes i SET (warm_read_units, warm_write_units) =
        (SELECT w.reads, w.writes FROM ddb.tables t, ddb.warm_units(t.billing_mode, i.read_capacity, i.write_capacity,
                                                                    i.warm_read_units, i.warm_write_units) w
         WHERE t.table_name = i.table_name)
    WHERE i.table_name = keep_warm_throughput.table_name AND NOT i.local;
END $$;

-- Turns a table's deletion protection on or off (UpdateTable's
-- DeletionProtectionEnabled): DeleteTable and ddb.delete_table refuse a
-- protected table.
CREATE FUNCTION ddb.set_deletion_protection(table_name text, enabled boolean) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF enabled IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''deletionProtectionEnabled'' failed to satisfy constraint: Member must not be null');
    END IF;
    PERFORM ddb.require_table(table_name, true);
    UPDATE ddb.tables SET deletion_protection = enabled WHERE tables.table_name = set_deletion_protection.table_name;
END $$;

-- UpdateTable's rules that a request changes something, and that some
-- changes go alone (DynamoDB runs them as separate jobs), in DynamoDB's words.  A table's WarmThroughput may come
-- with GlobalSecondaryIndexUpdates that only set indexes' WarmThroughput
-- (each an Update of IndexName and WarmThroughput), as in DynamoDB's own
-- example.
CREATE FUNCTION ddb.check_update_concerns(request jsonb) RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    warm_indexes boolean := jsonb_typeof(request->'GlobalSecondaryIndexUpdates') = 'array'
        AND NOT EXISTS (SELECT FROM jsonb_array_elements(request->'GlobalSecondaryIndexUpdates') u
                        WHERE jsonb_typeof(u.value) <> 'object' OR u.value - 'Update' <> '{}'
                           OR jsonb_typeof(u.value->'Update') IS DISTINCT FROM 'object'
                           OR (u.value->'Update') - 'IndexName' - 'WarmThroughput' <> '{}');
    given text[] := ARRAY(SELECT e.key FROM jsonb_each(request) e
                          WHERE e.key IN ('BillingMode', 'ProvisionedThroughput', 'GlobalSecondaryIndexUpdates',
                                          'StreamSpecification', 'SSESpecification', 'ReplicaUpdates', 'TableClass',
                                          'DeletionProtectionEnabled', 'OnDemandThroughput', 'WarmThroughput')
                            AND jsonb_typeof(e.value) <> 'null' AND e.value <> '[]'
                            AND NOT (e.key = 'GlobalSecondaryIndexUpdates' AND warm_indexes AND request ? 'WarmThroughput'));
BEGIN
    IF cardinality(given) = 0 THEN
        PERFORM ddb.validation_error('At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required');
    END IF;
    IF cardinality(given) < 2 THEN
        RETURN;
    END IF;
    IF 'DeletionProtectionEnabled' = ANY (given) THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: DeletionProtection modification must be the only operation in the request');
    END IF;
    IF 'TableClass' = ANY (given) THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: TableClass modification must be the only operation in the request');
    END IF;
    IF 'WarmThroughput' = ANY (given) THEN
        IF jsonb_typeof(request->'GlobalSecondaryIndexUpdates') = 'array'
           AND EXISTS (SELECT FROM jsonb_array_elements(request->'GlobalSecondaryIndexUpdates') u WHERE u.value ? 'Create') THEN
            PERFORM ddb.validation_error('One or more parameter values were invalid: Create global secondary index cannot be specified when updating WarmThroughput');
        END IF;
        PERFORM ddb.validation_error('One or more parameter values were invalid: WarmThroughput must be the only operation in the request');
    END IF;
    IF 'OnDemandThroughput' = ANY (given) AND given <@ ARRAY['OnDemandThroughput', 'BillingMode'] IS NOT TRUE THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: OnDemandThroughput can only be combined with BillingMode in an UpdateTable request');
    END IF;
END $$;

-- CreateTable's and UpdateTable's DeletionProtectionEnabled, TableClass,
-- OnDemandThroughput and WarmThroughput of a table, once its billing mode
-- is set; a table that is (now) PROVISIONED has no on-demand maxima.
CREATE FUNCTION ddb.set_table_settings(table_name text, request jsonb, creating boolean) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.require_table(table_name, true);
    protect jsonb := request->'DeletionProtectionEnabled';
    class jsonb := request->'TableClass';
    maxima record := ddb.read_on_demand_throughput(request->'OnDemandThroughput', t.billing_mode, NULL, creating);
    now_warm record := ddb.warm_units(t.billing_mode, t.read_capacity, t.write_capacity, t.warm_read_units, t.warm_write_units);
    warm record := ddb.read_warm_throughput(request->'WarmThroughput', t.billing_mode, NULL, creating, now_warm.reads, now_warm.writes);
BEGIN
    IF protect IS NOT NULL AND jsonb_typeof(protect) <> 'null' THEN
        IF jsonb_typeof(protect) <> 'boolean' THEN
            RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = 'Unexpected value type in payload for DeletionProtectionEnabled: expected a boolean';
        END IF;
        PERFORM ddb.set_deletion_protection(t.table_name, protect::boolean);
    END IF;
    IF class IS NOT NULL AND jsonb_typeof(class) <> 'null' THEN
        IF jsonb_typeof(class) <> 'string' THEN
            RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = 'Unexpected value type in payload for TableClass: expected a string';
        END IF;
        IF class->>0 NOT IN ('STANDARD', 'STANDARD_INFREQUENT_ACCESS') THEN
            PERFORM ddb.validation_error('Invalid table-class parameter provided. Please try again with a valid table-class value: [STANDARD, STANDARD_INFREQUENT_ACCESS].');
        END IF;
        UPDATE ddb.tables SET table_class = class->>0,
                              table_class_updated_at = CASE WHEN NOT creating AND class->>0 <> coalesce(t.table_class, 'STANDARD')
                                                            THEN now() ELSE table_class_updated_at END
        WHERE tables.table_name = t.table_name;
    END IF;
    UPDATE ddb.tables SET max_read_request_units = ddb.next_maximum(max_read_request_units, maxima.reads),
                          max_write_request_units = ddb.next_maximum(max_write_request_units, maxima.writes),
                          warm_read_units = coalesce(warm.reads, warm_read_units),
                          warm_write_units = coalesce(warm.writes, warm_write_units)
    WHERE tables.table_name = t.table_name
      AND (maxima.reads IS NOT NULL OR maxima.writes IS NOT NULL OR warm.reads IS NOT NULL OR warm.writes IS NOT NULL);
    IF t.billing_mode = 'PROVISIONED' THEN
        UPDATE ddb.tables SET max_read_request_units = NULL, max_write_request_units = NULL
        WHERE tables.table_name = t.table_name AND (max_read_request_units IS NOT NULL OR max_write_request_units IS NOT NULL);
        UPDATE ddb.indexes i SET max_read_request_units = NULL, max_write_request_units = NULL
        WHERE i.table_name = t.table_name AND (max_read_request_units IS NOT NULL OR max_write_request_units IS NOT NULL);
    END IF;
END $$;

-- A global index's OnDemandThroughput and WarmThroughput (spec: its entry
-- in CreateTable's GlobalSecondaryIndexes, or its Create or Update in
-- UpdateTable's GlobalSecondaryIndexUpdates), checked as the table's.
CREATE FUNCTION ddb.set_index_settings(table_name text, spec jsonb, creating boolean) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.require_table(table_name);
    i ddb.indexes;
    maxima record;
    now_warm record;
    warm record;
BEGIN
    SELECT * INTO STRICT i FROM ddb.indexes x WHERE x.table_name = t.table_name AND x.index_name = spec->>'IndexName';
    maxima := ddb.read_on_demand_throughput(spec->'OnDemandThroughput', t.billing_mode, i.index_name, creating);
    now_warm := ddb.warm_units(t.billing_mode, i.read_capacity, i.write_capacity, i.warm_read_units, i.warm_write_units);
    warm := ddb.read_warm_throughput(spec->'WarmThroughput', t.billing_mode, i.index_name, creating, now_warm.reads, now_warm.writes);
    UPDATE ddb.indexes x SET max_read_request_units = ddb.next_maximum(x.max_read_request_units, maxima.reads),
                             max_write_request_units = ddb.next_maximum(x.max_write_request_units, maxima.writes),
                             warm_read_units = coalesce(warm.reads, x.warm_read_units),
                             warm_write_units = coalesce(warm.writes, x.warm_write_units)
    WHERE x.table_name = i.table_name AND x.index_name = i.index_name
      AND (maxima.reads IS NOT NULL OR maxima.writes IS NOT NULL OR warm.reads IS NOT NULL OR warm.writes IS NOT NULL);
END $$;

-- What DescribeTable says of on-demand maxima and warm throughput: an
-- OnDemandThroughput with the maxima that are set (none when neither is),
-- and the WarmThroughput in effect, ACTIVE (a change applies at once here).
CREATE FUNCTION ddb.throughput_settings_description(billing_mode text, read_capacity integer, write_capacity integer,
                                                    max_reads bigint, max_writes bigint,
                                                    warm_reads bigint, warm_writes bigint) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT jsonb_build_object('WarmThroughput', jsonb_build_object('ReadUnitsPerSecond', w.reads,
                                                                       'WriteUnitsPerSecond', w.writes, 'Status', 'ACTIVE'))
               || CASE WHEN max_reads IS NULL AND max_writes IS NULL THEN '{}'::jsonb
                       ELSE jsonb_build_object('OnDemandThroughput', jsonb_strip_nulls(jsonb_build_object(
                                'MaxReadRequestUnits', max_reads, 'MaxWriteRequestUnits', max_writes))) END
        FROM ddb.warm_units(billing_mode, read_capacity, write_capacity, warm_reads, warm_writes) w);

-- What DescribeTable says of a table's settings: DeletionProtectionEnabled,
-- TableClassSummary (once a class was given, with when UpdateTable last
-- changed it), OnDemandThroughput and WarmThroughput.
CREATE FUNCTION ddb.table_settings_description(t ddb.tables) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN jsonb_build_object('DeletionProtectionEnabled', t.deletion_protection)
       || CASE WHEN t.table_class IS NULL THEN '{}'::jsonb
               ELSE jsonb_build_object('TableClassSummary', jsonb_build_object('TableClass', t.table_class)
                                       || CASE WHEN t.table_class_updated_at IS NULL THEN '{}'::jsonb
                                               ELSE jsonb_build_object('LastUpdateDateTime', extract(epoch FROM t.table_class_updated_at)) END) END
       || ddb.throughput_settings_description(t.billing_mode, t.read_capacity, t.write_capacity,
                                              t.max_read_request_units, t.max_write_request_units,
                                              t.warm_read_units, t.warm_write_units);

-- ---------------------------------------------------------------------------
-- Billing mode and throughput (CreateTable, UpdateTable): declared and
-- described as DynamoDB does; throttled only with ddb.throttling on
-- (docs/throttling.md).
-- ---------------------------------------------------------------------------

-- A ProvisionedThroughput's units, checked as DynamoDB's request validation
-- checks them (member: where the request has it, as DynamoDB names it):
-- each given, each at least 1, every broken constraint in one message; then
-- each at most the table maximum of DescribeLimits (DynamoDB Local's
-- message; DynamoDB's own quota).
CREATE FUNCTION ddb.read_throughput(throughput jsonb, member text, OUT reads integer, OUT writes integer)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    broken text[] := '{}';
    field text;
    v jsonb;
BEGIN
    FOREACH field IN ARRAY ARRAY['readCapacityUnits', 'writeCapacityUnits'] LOOP
        v := throughput->(upper(left(field, 1)) || substr(field, 2));
        IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
            broken := broken || format('Value null at ''%s.%s'' failed to satisfy constraint: Member must not be null',
                                       member, field);
        ELSIF jsonb_typeof(v) <> 'number' THEN
            PERFORM ddb.validation_error(format('Unexpected value type in payload for %s.%s: expected a number', member, field));
        ELSIF v::numeric < 1 THEN
            broken := broken || format('Value ''%s'' at ''%s.%s'' failed to satisfy constraint: Member must have value greater than or equal to 1',
                                       v::text, member, field);
        END IF;
    END LOOP;
    IF cardinality(broken) > 0 THEN
        PERFORM ddb.validation_error(format('%s validation error%s detected: %s', cardinality(broken),
            CASE WHEN cardinality(broken) > 1 THEN 's' ELSE '' END, array_to_string(broken, '; ')));
    END IF;
    IF greatest((throughput->>'ReadCapacityUnits')::numeric - (ddb.describe_limits()->>'TableMaxReadCapacityUnits')::numeric,
                (throughput->>'WriteCapacityUnits')::numeric - (ddb.describe_limits()->>'TableMaxWriteCapacityUnits')::numeric) > 0 THEN
        PERFORM ddb.validation_error(format('Cannot increase provisioned throughput to more than %s units per table',
            to_char((ddb.describe_limits()->>'TableMaxReadCapacityUnits')::integer, 'FM999,999')));
    END IF;
    reads := (throughput->>'ReadCapacityUnits')::numeric::integer;
    writes := (throughput->>'WriteCapacityUnits')::numeric::integer;
END $$;

-- Sets a table's billing mode and throughput with DynamoDB's checks.
CREATE FUNCTION ddb.set_billing(table_name text, mode text, throughput jsonb) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    reads integer;
    writes integer;
BEGIN
    IF mode NOT IN ('PAY_PER_REQUEST', 'PROVISIONED') THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''billingMode'' failed to satisfy constraint: Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]', mode));
    END IF;
    IF mode = 'PAY_PER_REQUEST' AND throughput IS NOT NULL AND jsonb_typeof(throughput) = 'object' THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST');
    END IF;
    IF mode = 'PROVISIONED' THEN
        IF throughput IS NULL OR jsonb_typeof(throughput) <> 'object' THEN
            PERFORM ddb.validation_error('One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED');
        END IF;
        SELECT u.reads, u.writes INTO reads, writes FROM ddb.read_throughput(throughput, 'provisionedThroughput') u;
    END IF;
    UPDATE ddb.tables SET billing_mode = mode, read_capacity = coalesce(reads, 0), write_capacity = coalesce(writes, 0)
    WHERE tables.table_name = set_billing.table_name;
END $$;

-- A global secondary index's ProvisionedThroughput (spec: its entry in the
-- request, member: where the request has it) checked against the table's
-- billing mode as DynamoDB checks it: each index of a PROVISIONED table has
-- its own, an on-demand table's have none (0/0).
CREATE FUNCTION ddb.index_throughput(spec jsonb, mode text, member text, OUT reads integer, OUT writes integer)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    throughput jsonb := spec->'ProvisionedThroughput';
    units record;
BEGIN
    reads := 0;
    writes := 0;
    IF throughput IS NOT NULL AND jsonb_typeof(throughput) = 'null' THEN
        throughput := NULL;
    END IF;
    IF mode = 'PAY_PER_REQUEST' THEN
        IF throughput IS NOT NULL THEN
            PERFORM ddb.validation_error(format(
                'One or more parameter values were invalid: ProvisionedThroughput should not be specified for index: %s when BillingMode is PAY_PER_REQUEST',
                spec->>'IndexName'));
        END IF;
        RETURN;
    END IF;
    IF throughput IS NULL THEN
        PERFORM ddb.validation_error(format(
            'One or more parameter values were invalid: ProvisionedThroughput is not specified for index: %s', spec->>'IndexName'));
    END IF;
    units := ddb.read_throughput(throughput, member || '.provisionedThroughput');
    reads := units.reads;
    writes := units.writes;
END $$;
