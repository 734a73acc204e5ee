-- ddb_model 0.1 to 0.2 — upgrade script (ALTER EXTENSION ddb_model UPDATE).
\echo Use "ALTER EXTENSION ddb_model UPDATE TO '0.2'" to load this file. \quit

-- What 0.2 adds to 0.1 and changes in it, each object once and in its 0.2
-- form, as the install files have it (sql/*.sql, in the order of the
-- Makefile's INSTALL_SQL: types and tables before what names them), and
-- what an installed 0.1 holds rewritten for 0.2: its catalog tables
-- altered, its access keys given roles, its streams' triggers attached
-- anew.  0.2 is unreleased: this script is edited in place, never
-- appended to (CONTRIBUTING.md); test/upgrade.sh checks that an updated 0.1
-- is exactly a fresh 0.2.

-- 0.1's functions that 0.2 has no more, or has with other parameters
DROP FUNCTION ddb.create_access_key(text[]);
DROP FUNCTION ddb.create_index(text, text, text, text, text, text, text, text[], boolean);
DROP FUNCTION ddb.create_requested_index(text, jsonb, text, text, jsonb, boolean);
DROP FUNCTION ddb.key_schema(text, text);
DROP FUNCTION ddb.lock_stream_shared(text);
DROP FUNCTION ddb.read_key_schema(jsonb, text);


-- ===========================================================================
-- sql/key.sql
-- ===========================================================================

-- The routing hash of a sharded deployment (docs/scale-out.md): hash & (n - 1) is
-- the partition of n (a power of two) that PostgreSQL's hash partitioning puts the key in.
CREATE FUNCTION ddb.ddb_key_route_hash(ddb.ddb_key) RETURNS integer
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;


-- ===========================================================================
-- sql/errors.sql
-- ===========================================================================

-- The constraints of DynamoDB's request validation that a string member
-- breaks, each in its words ("Value 'x' at 'member' failed to satisfy
-- constraint: Member must ..."); shown_pattern is the pattern the message
-- shows (DynamoDB's Java one), pattern the one checked.  A value that is no
-- string is SerializationException (YD006), as DynamoDB's parser answers.
CREATE FUNCTION ddb.string_violations(value jsonb, name text, member text, required boolean DEFAULT false,
                                      min_length integer DEFAULT NULL, max_length integer DEFAULT NULL,
                                      pattern text DEFAULT NULL, shown_pattern text DEFAULT NULL,
                                      allowed text[] DEFAULT NULL) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v text := value #>> '{}';
    broken text[] := '{}';
BEGIN
    IF value IS NULL OR jsonb_typeof(value) = 'null' THEN
        RETURN CASE WHEN required
                    THEN ARRAY[format('Value null at ''%s'' failed to satisfy constraint: Member must not be null', member)]
                    ELSE '{}' END;
    END IF;
    IF jsonb_typeof(value) <> 'string' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = format('Unexpected value type in payload for %s: expected a string', name);
    END IF;
    IF length(v) < min_length THEN
        broken := broken || format('Member must have length greater than or equal to %s', min_length);
    END IF;
    IF length(v) > max_length THEN
        broken := broken || format('Member must have length less than or equal to %s', max_length);
    END IF;
    IF v !~ pattern THEN
        broken := broken || format('Member must satisfy regular expression pattern: %s', coalesce(shown_pattern, pattern));
    END IF;
    IF NOT v = ANY (allowed) THEN
        broken := broken || format('Member must satisfy enum value set: [%s]', array_to_string(allowed, ', '));
    END IF;
    RETURN (SELECT coalesce(array_agg(format('Value ''%s'' at ''%s'' failed to satisfy constraint: %s', v, member, b)), '{}')
            FROM unnest(broken) b);
END $$;

-- The constraints an integer member breaks (min_value to max_value), as ddb.string_violations.
CREATE FUNCTION ddb.integer_violations(value jsonb, name text, member text, min_value bigint, max_value bigint)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF value IS NULL OR jsonb_typeof(value) = 'null' THEN
        RETURN '{}';
    END IF;
    IF jsonb_typeof(value) <> 'number' OR value::text !~ '^-?[0-9]{1,18}$' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = format('Unexpected value type in payload for %s: expected an integer', name);
    END IF;
    IF value::text::bigint < min_value THEN
        RETURN ARRAY[format('Value ''%s'' at ''%s'' failed to satisfy constraint: Member must have value greater than or equal to %s',
                            value, member, min_value)];
    END IF;
    IF value::text::bigint > max_value THEN
        RETURN ARRAY[format('Value ''%s'' at ''%s'' failed to satisfy constraint: Member must have value less than or equal to %s',
                            value, member, max_value)];
    END IF;
    RETURN '{}';
END $$;

-- Raises ValidationException for the broken constraints of a request, all
-- in one message, as DynamoDB does ("2 validation errors detected: ...; ...").
CREATE FUNCTION ddb.raise_violations(broken text[]) RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF cardinality(broken) > 0 THEN
        PERFORM ddb.validation_error(format('%s validation error%s detected: %s', cardinality(broken),
                                            CASE WHEN cardinality(broken) > 1 THEN 's' ELSE '' END,
                                            array_to_string(broken, '; ')));
    END IF;
END $$;


-- ===========================================================================
-- sql/table.sql
-- ===========================================================================

-- ---------------------------------------------------------------------------
-- Tables (docs/tables.md)
--
-- A DynamoDB table is an ordinary table <schema>."<TableName>" with columns
-- pk, [sk,] item (natural jsonb), expires_at (the TTL attribute's epoch
-- seconds, if any) and item_size (DynamoDB's item size).  A GSI is a table
-- "<TableName>:<IndexName>" in the same schema with gpk, [gsk,] the base
-- keys, the projected item, expires_at and item_size, kept by the C trigger
-- ddb.gsi_maintain.  Hash partitions are "<relation>#<n>".  The catalog below
-- is dumped by pg_dump; the data tables are not members of the extension, so
-- DROP EXTENSION cannot take them with it.
-- ---------------------------------------------------------------------------

-- 0.1's catalog of tables gets the settings of sql/table_settings.sql.
-- deletion_protection is added without a default, then filled: a fast
-- default would leave the catalog unlike a fresh install's (test/upgrade.sh).
ALTER TABLE ddb.tables ADD COLUMN deletion_protection boolean;
UPDATE ddb.tables SET deletion_protection = false;
ALTER TABLE ddb.tables
    ALTER COLUMN deletion_protection SET DEFAULT false, ALTER COLUMN deletion_protection SET NOT NULL,
    ADD COLUMN table_class text CHECK (table_class IN ('STANDARD', 'STANDARD_INFREQUENT_ACCESS')),
    ADD COLUMN table_class_updated_at timestamptz,
    ADD COLUMN max_read_request_units bigint CHECK (max_read_request_units >= 1),
    ADD COLUMN max_write_request_units bigint CHECK (max_write_request_units >= 1),
    ADD COLUMN warm_read_units bigint,
    ADD COLUMN warm_write_units bigint;

-- 0.1's catalog of indexes gets multi-attribute keys, a global index's own
-- throughput and its settings; read_capacity and write_capacity are added
-- without a default, then filled (as deletion_protection above).
ALTER TABLE ddb.indexes
    ADD COLUMN extra_hash_keys text[] CHECK (cardinality(extra_hash_keys) BETWEEN 1 AND 3),
    ADD COLUMN extra_range_keys text[] CHECK (cardinality(extra_range_keys) BETWEEN 1 AND 3),
    ADD CHECK (extra_range_keys IS NULL OR range_key IS NOT NULL),
    ADD COLUMN read_capacity integer,
    ADD COLUMN write_capacity integer;
UPDATE ddb.indexes SET read_capacity = 0, write_capacity = 0;
ALTER TABLE ddb.indexes
    ALTER COLUMN read_capacity SET DEFAULT 0, ALTER COLUMN read_capacity SET NOT NULL,
    ALTER COLUMN write_capacity SET DEFAULT 0, ALTER COLUMN write_capacity SET NOT NULL,
    ADD COLUMN max_read_request_units bigint CHECK (max_read_request_units >= 1),
    ADD COLUMN max_write_request_units bigint CHECK (max_write_request_units >= 1),
    ADD COLUMN warm_read_units bigint,
    ADD COLUMN warm_write_units bigint;

-- the extension's trigger functions are attached by the extension alone (docs/security.md)
REVOKE ALL ON FUNCTION ddb.catalog_changed() FROM PUBLIC;

-- Checks a model's invariant over several items at commit: a row trigger
-- (arguments: the table's DynamoDB name, a function of the extension
-- taking a partition key) that collects the keys written, for the function
-- to check once per key when the transaction commits, as the table's
-- owner (src/table/commit_checks.c).  Not a deferred trigger: those are
-- refused in the requests ddb.execute_as serves (docs/security.md).
CREATE FUNCTION ddb.check_at_commit() RETURNS trigger
    AS 'MODULE_PATHNAME', 'ddb_check_at_commit' LANGUAGE C;

REVOKE ALL ON FUNCTION ddb.check_at_commit() FROM PUBLIC;

-- Runs the checks of ddb.check_at_commit the transaction has collected so
-- far now, as SET CONSTRAINTS ALL IMMEDIATE fires deferred triggers early:
-- for a test, or a client that wants the error before it commits.  It runs
-- only the extension's checks, of the keys this transaction wrote.
CREATE FUNCTION ddb.check_now() RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_check_now' LANGUAGE C VOLATILE;

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

-- One creation of a table's name at a time (CreateTable, a restore, an import): the
-- name's lock until the transaction ends, one of the server's own locks
-- (src/ddb_locks.h), which no SQL takes; for a role that may create tables.
CREATE FUNCTION ddb.lock_table_name(table_name text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_lock_table_name' LANGUAGE C VOLATILE STRICT;

-- A table's audit trail, one writing transaction at a time until it ends (the
-- underwriting model's rulebooks); for a role that may insert, update or delete its rows.
CREATE FUNCTION ddb.lock_table_audit(table_name text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_lock_table_audit' LANGUAGE C VOLATILE STRICT;

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
    PERFORM ddb.lock_table_name(create_table.table_name);
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
    -- the roles given tables of this name (sql/security.sql)
    PERFORM ddb.apply_table_grants(table_name);
END $$;

-- The catalog rows of a table (its stream records, its row and so its
-- indexes'), deleted as the catalog's owner for the owner of its relation,
-- which ddb.delete_table drops next (in the same transaction); the rows of
-- a table whose relation is gone are the catalog owner's to delete.
CREATE FUNCTION ddb.forget_table(table_name text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_forget_table' LANGUAGE C VOLATILE STRICT;

-- Drops a table, its indexes and its catalog entries; a table with
-- deletion protection on is refused, as DeleteTable refuses it.
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
    IF t.deletion_protection THEN
        PERFORM ddb.validation_error('Resource cannot be deleted as it is currently protected against deletion. '
                                     'Disable deletion protection first.');
    END IF;
    FOR i IN SELECT * FROM ddb.indexes WHERE indexes.table_name = t.table_name LOOP
        EXECUTE format('DROP TABLE %I.%I', t.schema_name, i.relation_name);
    END LOOP;
    -- Point-in-time recovery's history goes with the table (DynamoDB would
    -- keep a system backup, "<table>$DeletedTableBackup", for 35 days:
    -- docs/pitr.md); a system backup taken here would be made before this line.
    PERFORM ddb.drop_pitr_history(t.table_name);
    -- the catalog rows first, while the caller still owns the relation (ddb.forget_table's check)
    PERFORM ddb.forget_table(t.table_name);
    EXECUTE format('DROP TABLE %I.%I', t.schema_name, t.relation_name);
END $$;

-- What the nodes of a sharded deployment must agree on about a table
-- (docs/scale-out.md): its key schema, the types of its key attributes, its
-- indexes, TTL attribute and stream; NULL when there is no such table.  A
-- router compares it with a node's before moving a partition there.
CREATE FUNCTION ddb.table_definition(table_name text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT jsonb_build_object(
            'hash_key', t.hash_key, 'range_key', t.range_key,
            'ttl_attribute', t.ttl_attribute, 'stream_view_type', t.stream_view_type,
            'key_types', (SELECT jsonb_object_agg(k, t.attribute_types->k)
                          FROM unnest(ARRAY[t.hash_key, t.range_key]
                                      || ARRAY(SELECT unnest(ARRAY[i.hash_key, i.range_key] || i.extra_hash_keys || i.extra_range_keys)
                                               FROM ddb.indexes i WHERE i.table_name = t.table_name)) k
                          WHERE k IS NOT NULL),
            'indexes', coalesce((SELECT jsonb_agg(jsonb_build_object(
                                     'index_name', i.index_name, 'local', i.local,
                                     'hash_key', i.hash_key, 'range_key', i.range_key,
                                     'extra_hash_keys', i.extra_hash_keys, 'extra_range_keys', i.extra_range_keys,
                                     'projection_type', i.projection_type, 'non_key_attributes', i.non_key_attributes)
                                 ORDER BY i.index_name)
                                 FROM ddb.indexes i WHERE i.table_name = t.table_name), '[]'))
        FROM ddb.tables t WHERE t.table_name = table_definition.table_name);


-- ===========================================================================
-- sql/ttl.sql
-- ===========================================================================

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


-- ===========================================================================
-- sql/gsi.sql
-- ===========================================================================

REVOKE ALL ON FUNCTION ddb.gsi_maintain() FROM PUBLIC;

-- Empties the indexes of a table (argument: its DynamoDB name) when the
-- table is truncated: TRUNCATE fires no row trigger, so without this the
-- entries of the removed items would stay behind in every index.
CREATE OR REPLACE FUNCTION ddb.gsi_truncate() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.require_table(TG_ARGV[0]);
    r record;
BEGIN
    -- only for the table it names (docs/security.md)
    IF TG_RELID OPERATOR(pg_catalog.<>) format('%I.%I', t.schema_name, t.relation_name)::regclass::oid THEN
        RAISE EXCEPTION USING ERRCODE = 'trigger_protocol_violated',
            MESSAGE = format('ddb.gsi_truncate for table %s cannot run on relation %s.%s', t.table_name, TG_TABLE_SCHEMA, TG_TABLE_NAME);
    END IF;
    FOR r IN SELECT i.relation_name FROM ddb.indexes i WHERE i.table_name OPERATOR(pg_catalog.=) t.table_name LOOP
        EXECUTE format('TRUNCATE %I.%I', t.schema_name, r.relation_name);
    END LOOP;
    RETURN NULL;
END $$;

REVOKE ALL ON FUNCTION ddb.gsi_truncate() FROM PUBLIC;

-- Puts one of the extension's triggers (ddb_gsi_maintain, ddb_gsi_truncate,
-- ddb_stream, ddb_pitr, ddb_pitr_truncate) on a table unless it has it:
-- for the table's owner, created as the extension's owner, since no other
-- role may name the trigger functions (src/table/trigger_guard.c).
CREATE FUNCTION ddb.attach_trigger(table_name text, trigger_name text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_attach_trigger' LANGUAGE C VOLATILE STRICT;

-- Adds a global secondary index to a table (with local, a local one: the
-- table's hash key and another range key); existing items are indexed.  A
-- multi-attribute key names the attributes of its partition key and of its
-- sort key after the first in extra_hash_keys and extra_range_keys (up to
-- three each), with their types.
CREATE FUNCTION ddb.create_index(
    table_name text,
    index_name text,
    hash_key text,
    hash_key_type text DEFAULT 'S',
    range_key text DEFAULT NULL,
    range_key_type text DEFAULT 'S',
    projection_type text DEFAULT 'ALL',
    non_key_attributes text[] DEFAULT NULL,
    local boolean DEFAULT false,
    extra_hash_keys text[] DEFAULT NULL,
    extra_hash_key_types text[] DEFAULT NULL,
    extra_range_keys text[] DEFAULT NULL,
    extra_range_key_types text[] DEFAULT NULL
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
    extra_hash_keys := nullif(extra_hash_keys, '{}');
    extra_range_keys := nullif(extra_range_keys, '{}');
    IF cardinality(extra_hash_keys) > 3 OR cardinality(extra_range_keys) > 3 THEN
        PERFORM ddb.validation_error('Invalid KeySchema: a multi-attribute key has at most 4 HASH and 4 RANGE attributes');
    END IF;
    IF coalesce(cardinality(extra_hash_keys), 0) <> coalesce(cardinality(extra_hash_key_types), 0)
       OR coalesce(cardinality(extra_range_keys), 0) <> coalesce(cardinality(extra_range_key_types), 0) THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: each extra key attribute needs its type');
    END IF;
    IF extra_range_keys IS NOT NULL AND range_key IS NULL THEN
        PERFORM ddb.validation_error('Invalid KeySchema: extra range keys need a range key');
    END IF;
    IF (extra_hash_keys IS NOT NULL OR extra_range_keys IS NOT NULL) AND local THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: a local secondary index cannot have a multi-attribute key');
    END IF;
    PERFORM ddb.check_key_type(k, ty) FROM unnest(extra_hash_keys || extra_range_keys,
                                                  extra_hash_key_types || extra_range_key_types) AS a(k, ty);
    IF (SELECT count(DISTINCT k) FROM unnest(ARRAY[hash_key, range_key] || extra_hash_keys || extra_range_keys) k
        WHERE k IS NOT NULL)
       < cardinality(array_remove(ARRAY[hash_key, range_key] || extra_hash_keys || extra_range_keys, NULL)) THEN
        PERFORM ddb.validation_error('Invalid KeySchema: Some index key attribute have no definition');
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
    types := jsonb_build_object(hash_key, hash_key_type)
             || coalesce((SELECT jsonb_object_agg(k, ty) FROM unnest(extra_hash_keys || extra_range_keys,
                                                                    extra_hash_key_types || extra_range_key_types) AS a(k, ty)),
                         '{}');
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
                             projection_type, non_key_attributes, local, extra_hash_keys, extra_range_keys)
    VALUES (t.table_name, index_name, rel, hash_key, range_key, projection_type, non_key_attributes, coalesce(local, false),
            extra_hash_keys, extra_range_keys);
    UPDATE ddb.tables SET attribute_types = attribute_types || types WHERE tables.table_name = t.table_name;

    -- the maintenance trigger exists once per table, from its first index on
    PERFORM ddb.attach_trigger(t.table_name, 'ddb_gsi_maintain');
    PERFORM ddb.attach_trigger(t.table_name, 'ddb_gsi_truncate');
    -- backfill: rewriting each item through the trigger indexes it
    EXECUTE format('UPDATE %I.%I SET item = item', t.schema_name, t.relation_name);
    -- the roles given the table read its new index (sql/security.sql)
    PERFORM ddb.apply_table_grants(t.table_name);
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


-- ===========================================================================
-- sql/drop_guard.sql
-- ===========================================================================

-- ---------------------------------------------------------------------------
-- RETAIN: DROP EXTENSION refuses while DynamoDB tables hold items
-- ---------------------------------------------------------------------------

-- The tables DROP EXTENSION would destroy items of: every table users
-- created, the model tables that hold items, and every backup (docs/backups.md).
CREATE OR REPLACE FUNCTION ddb.tables_blocking_drop() RETURNS SETOF text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    has_items boolean;
BEGIN
    FOR t IN SELECT * FROM ddb.tables ORDER BY table_name LOOP
        IF t.model IS NULL THEN
            RETURN NEXT t.table_name;
            CONTINUE;
        END IF;
        EXECUTE format('SELECT EXISTS (SELECT FROM %I.%I)', t.schema_name, t.relation_name) INTO has_items;
        IF has_items THEN
            RETURN NEXT t.table_name;
        END IF;
    END LOOP;
    RETURN QUERY SELECT 'backup ' || b.backup_arn FROM ddb.backups b ORDER BY b.backup_arn;
END $$;

REVOKE ALL ON FUNCTION ddb.guard_drop_extension() FROM PUBLIC;


-- ===========================================================================
-- sql/api.sql
-- ===========================================================================

-- The table name a table's ARN holds (arn:aws:dynamodb:<region>:<account>:table/<name>,
-- of any region and account), or NULL for a value that is no table's ARN.
CREATE FUNCTION ddb.arn_table_name(arn text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN substring(arn FROM '^arn:aws[a-z-]*:dynamodb:[a-z0-9-]*:[0-9]{12}:table/([^/]+)$');

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
CREATE OR REPLACE FUNCTION ddb.api_create_table(request jsonb) RETURNS jsonb
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
CREATE OR REPLACE FUNCTION ddb.api_describe_table(request jsonb) RETURNS jsonb
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

-- ListTables: names in order, paged by Limit and ExclusiveStartTableName.
CREATE OR REPLACE FUNCTION ddb.api_list_tables(request jsonb) RETURNS jsonb
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
CREATE OR REPLACE FUNCTION ddb.api_update_time_to_live(request jsonb) RETURNS jsonb
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
CREATE OR REPLACE FUNCTION ddb.api_describe_time_to_live(request jsonb) RETURNS jsonb
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


-- ===========================================================================
-- sql/tags.sql
-- ===========================================================================

-- ---------------------------------------------------------------------------
-- Tags (TagResource, UntagResource, ListTagsOfResource)
-- ---------------------------------------------------------------------------

-- The table a resource ARN names (arn:aws:dynamodb:<region>:<account>:table/<name>),
-- raising YD001 (validation) for a malformed ARN and YD010 (access denied),
-- as DynamoDB does, for one that names no table here.
CREATE OR REPLACE FUNCTION ddb.table_of_arn(arn text) RETURNS ddb.tables
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text := ddb.arn_table_name(arn);
    t ddb.tables;
BEGIN
    IF name IS NULL OR name !~ '^[a-zA-Z0-9_.-]{3,255}$' THEN
        PERFORM ddb.validation_error(format('Invalid TableArn: Invalid ResourceArn provided as input %s', arn));
    END IF;
    SELECT * INTO t FROM ddb.tables WHERE tables.table_name = name;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD010',
            MESSAGE = format('User is not authorized to perform: dynamodb:ListTagsOfResource on resource: %s', arn);
    END IF;
    RETURN t;
END $$;

-- The Tags of a request (TagResource's, CreateTable's) as an object of
-- key to value, checked: each key 1 to 128 characters, each value given and
-- at most 256, and with the tags a table has already (current), at most 50.
CREATE FUNCTION ddb.request_tags(tags jsonb, current jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    added jsonb;
BEGIN
    IF jsonb_typeof(tags) IS DISTINCT FROM 'array' OR jsonb_array_length(tags) = 0 THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tags'' failed to satisfy constraint: Member must not be null');
    END IF;
    IF EXISTS (SELECT FROM jsonb_array_elements(tags) e
               WHERE jsonb_typeof(e) <> 'object' OR coalesce(length(e->>'Key'), 0) NOT BETWEEN 1 AND 128
                  OR e->>'Value' IS NULL OR length(e->>'Value') > 256) THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: a tag key is 1 to 128 characters and its value at most 256');
    END IF;
    SELECT jsonb_object_agg(e->>'Key', e->>'Value') INTO added FROM jsonb_array_elements(tags) e;
    IF (SELECT count(*) FROM jsonb_object_keys(current || added)) > 50 THEN
        RAISE EXCEPTION USING ERRCODE = 'YD009', MESSAGE = 'The number of tags exceeds the limit of 50 tags per resource';
    END IF;
    RETURN added;
END $$;

-- TagResource: adds or replaces tags (at most 50 per table).
CREATE OR REPLACE FUNCTION ddb.api_tag_resource(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.table_of_arn(request->>'ResourceArn');
BEGIN
    PERFORM ddb.check_table_access(t.table_name, 'TagResource', 'write');
    PERFORM ddb.set_table_tags(t.table_name, t.tags || ddb.request_tags(request->'Tags', t.tags));
    RETURN '{}';
END $$;

-- UntagResource: removes tags by key.
CREATE OR REPLACE FUNCTION ddb.api_untag_resource(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.table_of_arn(request->>'ResourceArn');
BEGIN
    PERFORM ddb.check_table_access(t.table_name, 'UntagResource', 'write');
    IF jsonb_typeof(request->'TagKeys') IS DISTINCT FROM 'array' THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tagKeys'' failed to satisfy constraint: Member must not be null');
    END IF;
    PERFORM ddb.set_table_tags(t.table_name, t.tags - ARRAY(SELECT jsonb_array_elements_text(request->'TagKeys')));
    RETURN '{}';
END $$;

-- ListTagsOfResource: the tags of a table, by key.
CREATE OR REPLACE FUNCTION ddb.api_list_tags_of_resource(request jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.table_of_arn(request->>'ResourceArn');
BEGIN
    PERFORM ddb.check_table_access(t.table_name, 'ListTagsOfResource', 'read');
    RETURN jsonb_build_object('Tags', coalesce((SELECT jsonb_agg(jsonb_build_object('Key', key, 'Value', value) ORDER BY key)
                                                FROM jsonb_each_text(t.tags)), '[]'));
END $$;


-- ===========================================================================
-- sql/table_settings.sql
-- ===========================================================================

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
CREATE OR REPLACE FUNCTION ddb.set_billing(table_name text, mode text, throughput jsonb) RETURNS void
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


-- ===========================================================================
-- sql/access_keys.sql
-- ===========================================================================

-- ddb-gateway caches the keys it verifies with (src/gateway/keycache.c):
-- every change of this table tells it, once the change commits, to forget
-- what it cached, so that a revoked key stops working at once.
CREATE FUNCTION ddb.notify_access_keys() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_catalog.pg_notify('ddb_access_keys', '');
    RETURN NULL;
END $$;

REVOKE ALL ON FUNCTION ddb.notify_access_keys() FROM PUBLIC;

CREATE TRIGGER access_keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb.access_keys
    FOR EACH STATEMENT EXECUTE FUNCTION ddb.notify_access_keys();

-- Creates an access key acting as a role (with the gateway's own
-- privileges when role_name is NULL) and returns its id and secret, as AWS
-- shows them: once.
CREATE FUNCTION ddb.create_access_key(role_name name DEFAULT NULL, OUT access_key_id text, OUT secret_access_key text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF role_name IS NOT NULL AND to_regrole(quote_ident(role_name)) IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42704', MESSAGE = format('role "%s" does not exist', role_name),
            HINT = 'Create it first (CREATE ROLE ... NOLOGIN), give it tables with ddb.grant_tables, and let the gateway''s user SET ROLE to it.';
    END IF;
    access_key_id := 'AKDDB' || upper(substr(replace(gen_random_uuid()::text, '-', ''), 1, 15));
    secret_access_key := encode(decode(substr(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 1, 60), 'hex'), 'base64');
    INSERT INTO ddb.access_keys (access_key_id, secret_access_key, role_name)
    VALUES (access_key_id, secret_access_key, role_name);
END $$;


-- ===========================================================================
-- sql/tokens.sql
-- ===========================================================================

-- ---------------------------------------------------------------------------
-- Opaque tokens (shard iterators, PartiQL's NextToken, listings' pages):
-- sealed with this secret by src/request/tokens.c, and opened there, each
-- kind by functions of its own (ddb.stream_iterator, ...): no SQL function
-- seals or opens a payload of the caller's.  Only the owner reads it; it
-- is not dumped, so a restored database makes a new one (and old tokens
-- stop opening).
-- ---------------------------------------------------------------------------
CREATE TABLE ddb.server_secret (
    secret bytea NOT NULL CHECK (octet_length(secret) >= 30)
);

CREATE UNIQUE INDEX server_secret_one_row ON ddb.server_secret ((true));

-- 244 random bits from the operating system's strong source
INSERT INTO ddb.server_secret
VALUES (decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));


-- ===========================================================================
-- sql/streams.sql
-- ===========================================================================

-- ---------------------------------------------------------------------------
-- DynamoDB Streams (docs/streams.md): a table's item changes as stream
-- records, read with ListStreams, DescribeStream, GetShardIterator and
-- GetRecords.
--
-- A table with a stream carries the trigger ddb_stream, which collects its
-- changes for the commit: a change rolled back leaves no record, and a
-- committed one is numbered at commit, one writer of the stream at a time
-- until its records are in the index (not until its commit ends), so a
-- reader that stops at the first record still being committed
-- (ddb.stream_horizon) never passes a record that is still to come.  One
-- shard per stream; records are kept 24 hours (ddb.trim_stream_records
-- removes older ones).
-- ---------------------------------------------------------------------------

-- 0.1's stream records lose the CHECK of event_name: only
-- ddb.stream_capture writes it (a check constraint's expression is read
-- again at every INSERT through SPI: 6% of a streamed write).
ALTER TABLE ddb.stream_records DROP CONSTRAINT stream_records_event_name_check;

-- Waits for the writers of a table that are committing stream records, for a
-- reader that may read the table, and returns the last sequence number given
-- out before the wait (GetShardIterator LATEST): writers hold the stream's
-- lock shared from before numbering their records until their commit ends
-- (ddb.stream_capture, src/table/stream_capture.c); the reader takes no
-- lock, so it stalls no writer.  The lock is one of the server's own
-- (src/ddb_locks.h): no SQL takes it.
CREATE FUNCTION ddb.await_stream_writers(table_name text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'ddb_await_stream_writers' LANGUAGE C VOLATILE STRICT;

-- How far the caller's snapshot may read a stream after a sequence number,
-- page records at most: up to the first record whose writer it sees still
-- running, for a reader that may read the table; it waits for nobody
-- (src/table/stream_horizon.c).
CREATE FUNCTION ddb.stream_horizon(table_name text, label text, after bigint, page integer) RETURNS bigint
    AS 'MODULE_PATHNAME', 'ddb_stream_horizon' LANGUAGE C VOLATILE STRICT;

REVOKE ALL ON FUNCTION ddb.stream_capture() FROM PUBLIC;

-- Enables or disables a table's stream from a StreamSpecification (CreateTable, UpdateTable).
CREATE OR REPLACE FUNCTION ddb.set_stream(table_name text, spec jsonb) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    enabled boolean;
    view_type text := spec->>'StreamViewType';
BEGIN
    SELECT * INTO t FROM ddb.tables WHERE tables.table_name = set_stream.table_name FOR UPDATE;
    IF jsonb_typeof(spec) IS DISTINCT FROM 'object' OR jsonb_typeof(spec->'StreamEnabled') IS DISTINCT FROM 'boolean' THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''streamSpecification.streamEnabled'' failed to satisfy constraint: Member must not be null');
    END IF;
    enabled := (spec->>'StreamEnabled')::boolean;
    IF view_type IS NOT NULL AND view_type NOT IN ('NEW_IMAGE', 'OLD_IMAGE', 'NEW_AND_OLD_IMAGES', 'KEYS_ONLY') THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''streamSpecification.streamViewType'' failed to satisfy constraint: Member must satisfy enum value set: [NEW_IMAGE, OLD_IMAGE, NEW_AND_OLD_IMAGES, KEYS_ONLY]',
            view_type));
    END IF;
    IF enabled AND view_type IS NULL THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: You must specify a StreamViewType when enabling a stream');
    END IF;
    IF NOT enabled AND view_type IS NOT NULL THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: You cannot modify StreamViewType when disabling a stream');
    END IF;
    IF enabled AND t.stream_view_type IS NOT NULL THEN
        PERFORM ddb.validation_error(format('Table already has an enabled stream: %s', ddb.stream_arn(t.table_name, t.stream_label)));
    END IF;
    IF NOT enabled AND t.stream_view_type IS NULL THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: The stream is already disabled');
    END IF;
    IF enabled THEN
        -- a new stream: a new label, so its records are apart from an earlier stream's
        UPDATE ddb.tables SET stream_view_type = view_type,
                              stream_label = to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS')
        WHERE tables.table_name = t.table_name;
        PERFORM ddb.attach_trigger(t.table_name, 'ddb_stream');
    ELSE
        UPDATE ddb.tables SET stream_view_type = NULL WHERE tables.table_name = t.table_name;
    END IF;
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
        PERFORM ddb.check_table_access(request->>'TableName', 'ListStreams', 'read');
    END IF;
    SELECT jsonb_agg(jsonb_build_object('StreamArn', arn, 'TableName', table_name, 'StreamLabel', stream_label) ORDER BY arn),
           CASE WHEN count(*) = page_size THEN max(arn) END
    INTO streams, last_arn
    FROM (SELECT ddb.stream_arn(table_name, stream_label) AS arn, table_name, stream_label
          FROM ddb.tables
          WHERE stream_label IS NOT NULL
            AND (NOT request ? 'TableName' OR table_name = request->>'TableName')
            AND ddb.table_privilege(schema_name, relation_name, 'SELECT')
            AND ddb.stream_arn(table_name, stream_label) > coalesce(request->>'ExclusiveStartStreamArn', '')
          ORDER BY 1 LIMIT page_size) s;
    RETURN jsonb_build_object('Streams', coalesce(streams, '[]'))
        || CASE WHEN last_arn IS NOT NULL THEN jsonb_build_object('LastEvaluatedStreamArn', last_arn) ELSE '{}' END;
END $$;

-- DescribeStream: the stream, its status and its one shard.
CREATE OR REPLACE FUNCTION ddb.api_describe_stream(request jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.stream_table(request->>'StreamArn');
    first_sequence bigint;
BEGIN
    PERFORM ddb.check_table_access(t.table_name, 'DescribeStream', 'read');
    SELECT min(sequence_number) INTO first_sequence FROM ddb.stream_records r
    WHERE r.table_name = t.table_name AND r.stream_label = t.stream_label AND r.created_at > now() - interval '24 hours';
    RETURN jsonb_build_object('StreamDescription', jsonb_build_object(
        'StreamArn', ddb.stream_arn(t.table_name, t.stream_label),
        'StreamLabel', t.stream_label,
        'StreamStatus', CASE WHEN t.stream_view_type IS NOT NULL THEN 'ENABLED' ELSE 'DISABLED' END,
        'StreamViewType', coalesce(t.stream_view_type, 'KEYS_ONLY'),
        'CreationRequestDateTime', extract(epoch FROM (t.stream_label || 'Z')::timestamptz),
        'TableName', t.table_name,
        'KeySchema', ddb.key_schema(t.hash_key, t.range_key),
        'Shards', jsonb_build_array(jsonb_build_object(
            'ShardId', ddb.stream_shard_id(t.stream_label),
            'SequenceNumberRange', jsonb_build_object(
                'StartingSequenceNumber', ddb.stream_sequence_text(coalesce(first_sequence, 1)))))));
END $$;

-- A shard iterator: where a reader is in a stream, sealed with the server's
-- secret (src/request/tokens.c), for a caller that may read the table (as
-- GetShardIterator asks), of the table's latest stream.
CREATE OR REPLACE FUNCTION ddb.stream_iterator(table_name text, label text, after_sequence bigint) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_stream_iterator' LANGUAGE C STABLE STRICT;

-- The table, stream label and sequence number of a shard iterator
-- ddb.stream_iterator sealed; NULLs for anything else (edited, forged, or
-- not exactly the object it seals).
CREATE FUNCTION ddb.open_stream_iterator(token text, OUT table_name text, OUT label text, OUT after_sequence bigint)
    AS 'MODULE_PATHNAME', 'ddb_open_stream_iterator' LANGUAGE C STABLE STRICT;

-- GetShardIterator: TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER.
CREATE OR REPLACE FUNCTION ddb.api_get_shard_iterator(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.stream_table(request->>'StreamArn');
    kind text := request->>'ShardIteratorType';
    after_sequence bigint;
BEGIN
    PERFORM ddb.check_table_access(t.table_name, 'GetShardIterator', 'read');
    IF request->>'ShardId' IS DISTINCT FROM ddb.stream_shard_id(t.stream_label) THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004',
            MESSAGE = format('Requested resource not found: Shard does not exist: %s', request->>'ShardId');
    END IF;
    IF kind IS NULL OR kind NOT IN ('TRIM_HORIZON', 'LATEST', 'AT_SEQUENCE_NUMBER', 'AFTER_SEQUENCE_NUMBER') THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''shardIteratorType'' failed to satisfy constraint: Member must satisfy enum value set: [TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER]',
            kind));
    END IF;
    IF kind IN ('AT_SEQUENCE_NUMBER', 'AFTER_SEQUENCE_NUMBER') THEN
        IF request->>'SequenceNumber' IS NULL OR request->>'SequenceNumber' !~ '^[0-9]{1,21}$'
           OR (request->>'SequenceNumber')::numeric NOT BETWEEN 1 AND 9223372036854775807 THEN
            PERFORM ddb.validation_error('Invalid SequenceNumber for ShardIteratorType ' || kind);
        END IF;
        after_sequence := (request->>'SequenceNumber')::numeric - CASE WHEN kind = 'AT_SEQUENCE_NUMBER' THEN 1 ELSE 0 END;
    ELSIF kind = 'LATEST' THEN
        -- after every record committed so far: once its writers are done, every number given out
        after_sequence := ddb.await_stream_writers(t.table_name);
    ELSE
        after_sequence := 0;
    END IF;
    RETURN jsonb_build_object('ShardIterator', ddb.stream_iterator(t.table_name, t.stream_label, after_sequence));
END $$;

-- GetRecords: the records after a shard iterator, in sequence order, up to
-- the first one still being committed, and the iterator after them.
CREATE OR REPLACE FUNCTION ddb.api_get_records(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    position record;
    t ddb.tables;
    page_size integer := ddb.request_limit(request, 1000, 1000);
    records jsonb;
    horizon bigint;
BEGIN
    IF request->>'ShardIterator' IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''shardIterator'' failed to satisfy constraint: Member must not be null');
    END IF;
    -- the table, label and sequence ddb.stream_iterator sealed; NULLs for anything else
    SELECT * INTO position FROM ddb.open_stream_iterator(request->>'ShardIterator');
    IF position.table_name IS NULL THEN
        PERFORM ddb.validation_error('Invalid ShardIterator');
    END IF;
    SELECT * INTO t FROM ddb.tables WHERE table_name = position.table_name AND stream_label = position.label;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004', MESSAGE = 'Requested resource not found: the stream of this iterator is gone';
    END IF;
    PERFORM ddb.check_table_access(t.table_name, 'GetRecords', 'read');
    -- no further than the first record still being committed: nothing appears behind the reader
    horizon := ddb.stream_horizon(t.table_name, t.stream_label, position.after_sequence, page_size);
    SELECT jsonb_agg(jsonb_build_object(
               'eventID', md5(r.table_name || r.stream_label || r.sequence_number),
               'eventName', r.event_name,
               'eventVersion', '1.1',
               'eventSource', 'aws:dynamodb',
               'awsRegion', 'ddb-model',
               'dynamodb', jsonb_strip_nulls(jsonb_build_object(
                   'ApproximateCreationDateTime', floor(extract(epoch FROM r.created_at)),
                   'Keys', r.keys,
                   'NewImage', r.new_image,
                   'OldImage', r.old_image,
                   'SequenceNumber', ddb.stream_sequence_text(r.sequence_number),
                   'SizeBytes', r.size_bytes,
                   'StreamViewType', coalesce(t.stream_view_type, 'KEYS_ONLY'))))
               ORDER BY r.sequence_number)
    INTO records
    FROM (SELECT * FROM ddb.stream_records r
          WHERE r.table_name = t.table_name AND r.stream_label = t.stream_label
            AND r.sequence_number > position.after_sequence AND r.sequence_number <= horizon
            AND r.created_at > now() - interval '24 hours'
          ORDER BY r.sequence_number LIMIT page_size) r;
    RETURN jsonb_build_object('Records', coalesce(records, '[]'))
        || CASE WHEN t.stream_view_type IS NOT NULL OR records IS NOT NULL
                THEN jsonb_build_object('NextShardIterator',
                         ddb.stream_iterator(t.table_name, t.stream_label, horizon))
                ELSE '{}'::jsonb END;
END $$;


-- ===========================================================================
-- sql/throttle.sql
-- ===========================================================================

-- ---------------------------------------------------------------------------
-- Throttling of PROVISIONED tables (docs/throttling.md): with the setting
-- ddb.throttling on, requests above a table's or global index's provisioned
-- capacity get ProvisionedThroughputExceededException.  Its token buckets
-- live in shared memory (ddb_model in shared_preload_libraries); these
-- functions show them and move their clock.  Neither is for PUBLIC: the
-- buckets of every table of the database are an administrator's to see, and
-- their clock a test's to move.
-- ---------------------------------------------------------------------------

-- The buckets of this database: the relation of a table or global index,
-- and the units each side holds now (NULL for a side not used yet; below
-- zero, spent ahead: refused until it refills).
CREATE FUNCTION ddb.throttling_buckets(OUT relation regclass, OUT read_units double precision,
                                       OUT write_units double precision) RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'ddb_throttling_buckets' LANGUAGE C VOLATILE;

COMMENT ON FUNCTION ddb.throttling_buckets() IS
    'The throttling buckets of this database: units each side of a table''s or global index''s holds now';

REVOKE ALL ON FUNCTION ddb.throttling_buckets() FROM PUBLIC;

-- Every bucket of this database refills as if seconds more had passed: a
-- test shows refilling without waiting (negative seconds: the wall clock
-- stepping back, after which a bucket refills from the new time on).
CREATE FUNCTION ddb.throttling_advance(seconds double precision) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_throttling_advance' LANGUAGE C VOLATILE STRICT;

COMMENT ON FUNCTION ddb.throttling_advance(double precision) IS
    'Refills every throttling bucket of this database as if seconds more had passed (a test''s clock)';

REVOKE ALL ON FUNCTION ddb.throttling_advance(double precision) FROM PUBLIC;


-- ===========================================================================
-- sql/pitr.sql
-- ===========================================================================

-- ---------------------------------------------------------------------------
-- Point-in-time recovery (docs/pitr.md): UpdateContinuousBackups,
-- DescribeContinuousBackups, RestoreTableToPointInTime.
--
-- A table with point-in-time recovery keeps every committed version of its
-- items in a history relation beside it, <schema>."<relation>$pitr": the
-- key (pk, and sk when the table has a sort key), changed_at (the time of
-- the writing transaction, one per transaction, in commit order for any
-- one item), change_order (the change's order within its transaction),
-- item (NULL for a delete) and item_size.  The trigger ddb_pitr
-- (ddb.pitr_capture, src/table/pitr_capture.c) collects a transaction's
-- changes and writes them when it commits.  Enabling copies the table's
-- items in as the first versions; ddb.trim_pitr_history collapses what the
-- window leaves behind; disabling, and DeleteTable, drop the history.
-- ---------------------------------------------------------------------------
CREATE TABLE ddb.continuous_backups (
    table_name text PRIMARY KEY REFERENCES ddb.tables ON DELETE CASCADE,
    history_relation name NOT NULL,     -- in the table's schema
    recovery_period_days integer NOT NULL CHECK (recovery_period_days BETWEEN 1 AND 35),
    enabled_at timestamptz NOT NULL,    -- the time of the first versions: the earliest restorable one, until the window passes it
    history_from timestamptz            -- how far ddb.trim_pitr_history has collapsed the history: nothing before is restorable
);

COMMENT ON TABLE ddb.continuous_backups IS 'Point-in-time recovery: the tables that have it, their history relation and recovery period';

SELECT pg_catalog.pg_extension_config_dump('ddb.continuous_backups', '');

-- The name of a table's history relation, beside it in its schema.
CREATE FUNCTION ddb.pitr_history_name(relation_name name) RETURNS name
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ddb.relation_name(relation_name || '$pitr');

-- Collects a change of an item of a table with point-in-time recovery,
-- written when its transaction commits: the trigger ddb_pitr (arguments:
-- the table's DynamoDB name, its history relation).
CREATE FUNCTION ddb.pitr_capture() RETURNS trigger
    AS 'MODULE_PATHNAME', 'ddb_pitr_capture' LANGUAGE C;

REVOKE ALL ON FUNCTION ddb.pitr_capture() FROM PUBLIC;

-- Refuses a TRUNCATE of a table with point-in-time recovery (the trigger
-- ddb_pitr_truncate): it fires no row trigger, so no version would record it.
CREATE FUNCTION ddb.pitr_refuse_truncate() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'feature_not_supported',
        MESSAGE = 'TRUNCATE of a table with point-in-time recovery on would not be recorded; '
                  'delete its items or disable point-in-time recovery first',
        DETAIL = format('Table %s (relation %s.%s).', TG_ARGV[0], TG_TABLE_SCHEMA, TG_TABLE_NAME);
END $$;

REVOKE ALL ON FUNCTION ddb.pitr_refuse_truncate() FROM PUBLIC;

-- Waits until the transactions committing versions of a table are done:
-- each holds the table's PITR lock shared from before it reads its time
-- until its commit is over (src/table/pitr_capture.c), so that a snapshot
-- taken afterwards sees every version of a time up to now.  For a role
-- that may read the table; it takes no lock, so it stalls no writer (the
-- lock is one of the server's own, src/ddb_locks.h: no SQL takes it).
CREATE FUNCTION ddb.pitr_settle(table_name text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_pitr_settle' LANGUAGE C VOLATILE STRICT;

-- The table a request names in member (TableName, SourceTableName: a name
-- or a table's ARN), or DynamoDB's TableNotFoundException (YD022).
CREATE FUNCTION ddb.pitr_table(name text, member text) RETURNS ddb.tables
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
BEGIN
    IF name IS NULL THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value null at ''%s'' failed to satisfy constraint: Member must not be null', member));
    END IF;
    IF length(name) NOT BETWEEN 1 AND 1024 THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''%s'' failed to satisfy constraint: Member must have length %s',
            name, member, CASE WHEN name = '' THEN 'greater than or equal to 1' ELSE 'less than or equal to 1024' END));
    END IF;
    SELECT * INTO t FROM ddb.tables
    WHERE tables.table_name = coalesce(ddb.arn_table_name(name), name);
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD022', MESSAGE = 'Table not found: ' || name;
    END IF;
    RETURN t;
END $$;

-- The window of a table with point-in-time recovery at a moment (as_of):
-- from its first versions, the recovery period back, or the moment its
-- history was trimmed to (the latest of the three), to as_of.
CREATE FUNCTION ddb.pitr_window(c ddb.continuous_backups, as_of timestamptz, OUT earliest timestamptz, OUT latest timestamptz)
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT greatest(c.enabled_at, c.history_from, as_of - make_interval(days => c.recovery_period_days)), as_of;
END;

-- Writes a table's row of ddb.continuous_backups as the catalog's owner,
-- for the table's owner, computing what it can (src/table/table_access.c):
-- a new row's history relation is the table's own (which must be there)
-- and its enabled_at now, returned (the time of the first versions); a row
-- already there takes the recovery period alone; a NULL period deletes it.
CREATE FUNCTION ddb.write_continuous_backups(table_name text, recovery_period_days integer) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'ddb_write_continuous_backups' LANGUAGE C VOLATILE;

-- Records, as the catalog's owner, that ddb.trim_pitr_history collapsed a
-- table's history to the start of its window as of a moment (no later
-- than now), which it computes: the table owner's, history_from never goes back.
CREATE FUNCTION ddb.trim_continuous_backups(table_name text, as_of timestamptz) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_trim_continuous_backups' LANGUAGE C VOLATILE STRICT;

-- Turns a table's point-in-time recovery on (or sets its recovery period,
-- 1 to 35 days, when it is on) or off (dropping its history).  Turning it
-- on copies the table's items into the new history as versions of this
-- moment, with the table locked against writes until the transaction ends.
CREATE FUNCTION ddb.set_continuous_backups(table_name text, enabled boolean, recovery_period_days integer DEFAULT 35)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.require_table(table_name);
    history name := ddb.pitr_history_name(t.relation_name);
    key_columns text := CASE WHEN t.range_key IS NOT NULL THEN 'pk, sk' ELSE 'pk' END;
    enabled_at timestamptz;
    c ddb.continuous_backups;
BEGIN
    IF enabled IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled'' failed to satisfy constraint: Member must not be null');
    END IF;
    IF recovery_period_days IS NULL OR recovery_period_days NOT BETWEEN 1 AND 35 THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''pointInTimeRecoverySpecification.recoveryPeriodInDays'' failed to satisfy constraint: Member must have value %s',
            recovery_period_days, CASE WHEN recovery_period_days > 35 THEN 'less than or equal to 35' ELSE 'greater than or equal to 1' END));
    END IF;
    IF NOT enabled THEN
        PERFORM ddb.drop_pitr_history(t.table_name);
        RETURN;
    END IF;
    -- the first versions are the items as this statement sees them: a
    -- snapshot older than the lock below could miss a write committed before it
    IF current_setting('transaction_isolation') <> 'read committed'
       AND NOT EXISTS (SELECT FROM ddb.continuous_backups b WHERE b.table_name = t.table_name) THEN
        RAISE EXCEPTION USING ERRCODE = '0A000',
            MESSAGE = 'point-in-time recovery can only be enabled in a READ COMMITTED transaction',
            DETAIL = format('This transaction is %s.', current_setting('transaction_isolation'));
    END IF;
    -- one change of a table's point-in-time recovery at a time (the lock is
    -- the table owner's to take, where a lock of the catalog's row is not);
    -- writers wait from here until the history and its trigger are in place
    EXECUTE format('LOCK TABLE %I.%I IN SHARE ROW EXCLUSIVE MODE', t.schema_name, t.relation_name);
    SELECT * INTO c FROM ddb.continuous_backups b WHERE b.table_name = t.table_name;
    IF FOUND THEN
        PERFORM ddb.write_continuous_backups(t.table_name, recovery_period_days);
        RETURN;
    END IF;
    EXECUTE format('CREATE TABLE %I.%I (pk ddb.ddb_key NOT NULL, %s changed_at timestamptz NOT NULL, '
                   'change_order integer NOT NULL, item jsonb, item_size integer)',
                   t.schema_name, history, CASE WHEN t.range_key IS NOT NULL THEN 'sk ddb.ddb_key NOT NULL,' ELSE '' END);
    -- no btree: a version is written by a heap insertion alone (a btree on
    -- the key was most of a version's cost); restores and trims sort the
    -- history, and a BRIN index finds a span of time
    EXECUTE format('CREATE INDEX %I ON %I.%I USING brin (changed_at)',
                   ddb.relation_name(history || '$changed_at'), t.schema_name, history);
    EXECUTE format('COMMENT ON TABLE %I.%I IS %L', t.schema_name, history,
                   'Point-in-time recovery history of DynamoDB table ' || t.table_name
                   || ' (ddb_model): its items'' versions, written at commit by the trigger ddb_pitr');
    -- the catalog's row, now that the history is there: its enabled_at is the first versions' time
    enabled_at := ddb.write_continuous_backups(t.table_name, recovery_period_days);
    EXECUTE format('INSERT INTO %I.%I (%s, changed_at, change_order, item, item_size) SELECT %s, $1, 0, item, item_size FROM %I.%I',
                   t.schema_name, history, key_columns, key_columns, t.schema_name, t.relation_name)
    USING enabled_at;
    PERFORM ddb.attach_trigger(t.table_name, 'ddb_pitr');
    PERFORM ddb.attach_trigger(t.table_name, 'ddb_pitr_truncate');
    -- the table's readers read its history too (sql/security.sql)
    PERFORM ddb.apply_table_grants(t.table_name);
END $$;

-- Drops a table's point-in-time recovery, if it has it: its trigger, its
-- history and its catalog row (disabling it; DeleteTable).
CREATE FUNCTION ddb.drop_pitr_history(table_name text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.require_table(table_name);
    c ddb.continuous_backups;
BEGIN
    SELECT * INTO c FROM ddb.continuous_backups WHERE continuous_backups.table_name = t.table_name;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- a restore in progress reads it: refused (after waiting for a restore
    -- request reading it to commit, which holds the table)
    EXECUTE format('LOCK TABLE %I.%I IN SHARE ROW EXCLUSIVE MODE', t.schema_name, t.relation_name);
    IF ddb.history_in_use(format('%I.%I', t.schema_name, c.history_relation)::regclass) THEN
        RAISE EXCEPTION USING ERRCODE = 'YD005',
            MESSAGE = 'Attempt to change a resource which is still in use: a restore in progress reads the point-in-time recovery history of table ' || t.table_name;
    END IF;
    EXECUTE format('DROP TRIGGER ddb_pitr ON %I.%I', t.schema_name, t.relation_name);
    EXECUTE format('DROP TRIGGER ddb_pitr_truncate ON %I.%I', t.schema_name, t.relation_name);
    EXECUTE format('DROP TABLE %I.%I', t.schema_name, c.history_relation);
    PERFORM ddb.write_continuous_backups(t.table_name, NULL::integer);
END $$;

-- A table's ContinuousBackupsDescription (DescribeContinuousBackups,
-- UpdateContinuousBackups): the window ends at the current time.
CREATE FUNCTION ddb.continuous_backups_description(table_name text) RETURNS jsonb
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
RETURN jsonb_build_object(
    'ContinuousBackupsStatus', 'ENABLED',
    'PointInTimeRecoveryDescription',
    coalesce((SELECT jsonb_build_object('PointInTimeRecoveryStatus', 'ENABLED',
                                        'RecoveryPeriodInDays', c.recovery_period_days,
                                        'EarliestRestorableDateTime', extract(epoch FROM w.earliest),
                                        'LatestRestorableDateTime', extract(epoch FROM w.latest))
              FROM ddb.continuous_backups c, ddb.pitr_window(c, clock_timestamp()) w
              WHERE c.table_name = continuous_backups_description.table_name),
             '{"PointInTimeRecoveryStatus": "DISABLED"}'));

-- UpdateContinuousBackups: PointInTimeRecoverySpecification's
-- PointInTimeRecoveryEnabled and RecoveryPeriodInDays (1 to 35, 35 when not given).
CREATE FUNCTION ddb.api_update_continuous_backups(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    spec jsonb := nullif(request->'PointInTimeRecoverySpecification', 'null');
    enabled jsonb := nullif(spec->'PointInTimeRecoveryEnabled', 'null');
    days jsonb := nullif(spec->'RecoveryPeriodInDays', 'null');
    broken text[] := '{}';
    t ddb.tables;
BEGIN
    IF nullif(request->'TableName', 'null') IS NULL THEN
        broken := broken || 'Value null at ''tableName'' failed to satisfy constraint: Member must not be null'::text;
    END IF;
    IF spec IS NULL THEN
        broken := broken || 'Value null at ''pointInTimeRecoverySpecification'' failed to satisfy constraint: Member must not be null'::text;
    ELSIF jsonb_typeof(spec) <> 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006',
            MESSAGE = 'Unexpected value type in payload for PointInTimeRecoverySpecification: expected an object';
    ELSE
        IF enabled IS NULL THEN
            broken := broken || 'Value null at ''pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled'' failed to satisfy constraint: Member must not be null'::text;
        ELSIF jsonb_typeof(enabled) <> 'boolean' THEN
            RAISE EXCEPTION USING ERRCODE = 'YD006',
                MESSAGE = 'Unexpected value type in payload for PointInTimeRecoveryEnabled: expected a boolean';
        END IF;
        IF days IS NOT NULL AND (jsonb_typeof(days) <> 'number' OR days::numeric <> trunc(days::numeric)) THEN
            RAISE EXCEPTION USING ERRCODE = 'YD006',
                MESSAGE = 'Unexpected value type in payload for RecoveryPeriodInDays: expected an integer';
        ELSIF days::numeric NOT BETWEEN 1 AND 35 THEN
            broken := broken || format('Value ''%s'' at ''pointInTimeRecoverySpecification.recoveryPeriodInDays'' failed to satisfy constraint: Member must have value %s',
                                       days, CASE WHEN days::numeric > 35 THEN 'less than or equal to 35' ELSE 'greater than or equal to 1' END);
        END IF;
    END IF;
    IF cardinality(broken) > 0 THEN
        PERFORM ddb.validation_error(format('%s validation error%s detected: %s', cardinality(broken),
            CASE WHEN cardinality(broken) > 1 THEN 's' ELSE '' END, array_to_string(broken, '; ')));
    END IF;
    t := ddb.pitr_table(request->>'TableName', 'tableName');
    PERFORM ddb.check_table_access(t.table_name, 'UpdateContinuousBackups', 'own');
    IF t.model IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'YD030',
            MESSAGE = format('Backups are not available for table %s: it belongs to the %s model, installed with the extension',
                             t.table_name, t.model);
    END IF;
    -- DynamoDB's answer while a table is CREATING (here: being restored, sql/restore.sql)
    PERFORM ddb.refuse_restoring(t.table_name, 'YD030', 'Backups are being enabled for the table: %s. Please retry later');
    PERFORM ddb.set_continuous_backups(t.table_name, enabled::boolean, coalesce(days::numeric::integer, 35));
    RETURN jsonb_build_object('ContinuousBackupsDescription', ddb.continuous_backups_description(t.table_name));
END $$;

-- DescribeContinuousBackups.
CREATE FUNCTION ddb.api_describe_continuous_backups(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.pitr_table(request->>'TableName', 'tableName');
BEGIN
    PERFORM ddb.check_table_access(t.table_name, 'DescribeContinuousBackups', 'read');
    RETURN jsonb_build_object('ContinuousBackupsDescription', ddb.continuous_backups_description(t.table_name));
END $$;

-- The point-in-time recovery of a table, or PointInTimeRecoveryUnavailableException
-- (YD031) for a table without it.
CREATE FUNCTION ddb.continuous_backups_of(t ddb.tables) RETURNS ddb.continuous_backups
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c ddb.continuous_backups;
BEGIN
    SELECT * INTO c FROM ddb.continuous_backups WHERE continuous_backups.table_name = t.table_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD031',
            MESSAGE = format('Point in time recovery is not enabled for table ''%s''', t.table_name);
    END IF;
    RETURN c;
END $$;

-- The point-in-time recovery of a table, checked for a moment of its
-- window (which ends at the current time): PointInTimeRecoveryUnavailableException
-- (YD031) for a table without it, InvalidRestoreTimeException (YD032) for a moment outside.
CREATE FUNCTION ddb.pitr_of(t ddb.tables, as_of timestamptz) RETURNS ddb.continuous_backups
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c ddb.continuous_backups;
    w record;
BEGIN
    c := ddb.continuous_backups_of(t);
    SELECT * INTO w FROM ddb.pitr_window(c, clock_timestamp());
    IF as_of IS NULL OR as_of < w.earliest OR as_of > w.latest THEN
        RAISE EXCEPTION USING ERRCODE = 'YD032',
            MESSAGE = 'An invalid restore time was specified. RestoreDateTime must be between EarliestRestorableDateTime and LatestRestorableDateTime.',
            DETAIL = format('The window of table %s is %s to %s; the time given is %s.', t.table_name,
                            w.earliest, w.latest, coalesce(as_of::text, 'null'));
    END IF;
    RETURN c;
END $$;

-- The items a history relation held at a moment: per key, its latest
-- version at or before the moment, unless that is a delete.  In key order.
CREATE FUNCTION ddb.history_items(history regclass, as_of timestamptz)
RETURNS TABLE (pk ddb.ddb_key, sk ddb.ddb_key, item jsonb, item_size integer)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    key_columns text := CASE WHEN EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = history AND a.attname = 'sk'
                                                                        AND NOT a.attisdropped)
                             THEN 'pk, sk' ELSE 'pk' END;
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT v.pk, %s, v.item, v.item_size FROM '
        '(SELECT DISTINCT ON (%s) * FROM %s WHERE changed_at <= $1 ORDER BY %s, changed_at DESC, change_order DESC) v '
        'WHERE v.item IS NOT NULL',
        CASE WHEN key_columns = 'pk, sk' THEN 'v.sk' ELSE 'NULL::ddb.ddb_key' END, key_columns, history, key_columns)
    USING as_of;
END $$;

-- The OID of a table's point-in-time recovery history relation.
CREATE FUNCTION ddb.pitr_history(t ddb.tables, c ddb.continuous_backups) RETURNS regclass
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN format('%I.%I', t.schema_name, c.history_relation)::regclass;

-- The items of a table with point-in-time recovery as they were at a
-- moment of its window (ddb.history_items).
CREATE FUNCTION ddb.pitr_items(table_name text, as_of timestamptz)
RETURNS TABLE (pk ddb.ddb_key, sk ddb.ddb_key, item jsonb, item_size integer)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.pitr_table(table_name, 'tableName');
    c ddb.continuous_backups := ddb.pitr_of(t, as_of);
BEGIN
    RETURN QUERY SELECT * FROM ddb.history_items(ddb.pitr_history(t, c), as_of);
END $$;

-- True while a restore in progress reads a history relation (its
-- source_history); a restore whose worker is gone ends here.  (PL/pgSQL:
-- ddb.table_restores, of sql/restore.sql, is made after this file.)
CREATE FUNCTION ddb.history_in_use(history regclass) RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN EXISTS (SELECT FROM ddb.table_restores r
                   WHERE r.source_history = history::oid AND r.in_progress AND ddb.restore_running(r.table_name));
END $$;

-- Collapses the history of every table with point-in-time recovery to its
-- window as of a moment (now, by default): the versions older than the
-- window's start go, but for each key the one in force at the start, which
-- goes too when it is a delete; the window never reaches back before it
-- again (history_from).  Returns how many versions it removed; schedule it
-- like ddb.expire (docs/ttl.md, docs/pitr.md).  A moment to come is
-- refused: the windows would start after now.
CREATE FUNCTION ddb.trim_pitr_history(as_of timestamptz DEFAULT now()) RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c record;
    removed bigint := 0;
    n bigint;
BEGIN
    IF as_of IS NULL OR as_of > clock_timestamp() THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('the point-in-time recovery history cannot be trimmed as of %s, a moment to come',
                             coalesce(as_of::text, 'null'));
    END IF;
    FOR c IN SELECT b.*, t.schema_name, t.range_key, (ddb.pitr_window(b, as_of)).earliest AS window_start
             FROM ddb.continuous_backups b JOIN ddb.tables t USING (table_name)
             -- a history a restore in progress reads waits for the next trim
             WHERE NOT ddb.history_in_use(ddb.pitr_history(t, b)) LOOP
        -- per key, the versions up to the start, latest first: the first is in force then
        EXECUTE format(
            'DELETE FROM %I.%I h USING (SELECT ctid, changed_at, item IS NULL AS deleted, '
            'row_number() OVER (PARTITION BY %s ORDER BY changed_at DESC, change_order DESC) AS n '
            'FROM %I.%I WHERE changed_at <= $1) v '
            'WHERE h.ctid = v.ctid AND v.changed_at < $1 AND (v.n > 1 OR v.deleted)',
            c.schema_name, c.history_relation,
            CASE WHEN c.range_key IS NOT NULL THEN 'pk, sk' ELSE 'pk' END, c.schema_name, c.history_relation)
        USING c.window_start;
        GET DIAGNOSTICS n = ROW_COUNT;
        removed := removed + n;
        IF c.history_from IS NULL OR c.history_from < c.window_start THEN
            PERFORM ddb.trim_continuous_backups(c.table_name, as_of);
        END IF;
    END LOOP;
    RETURN removed;
END $$;

-- A time given as epoch seconds (a JSON number, as DynamoDB's SDKs send
-- one), to the microsecond (to_timestamp's double precision would round
-- the sixth decimal of a time such as EarliestRestorableDateTime).
CREATE FUNCTION ddb.epoch_timestamp(seconds numeric) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN to_timestamp(floor(seconds)::double precision)
       + round((seconds - floor(seconds)) * 1000000)::bigint * interval '1 microsecond';

-- The items of a table at a moment, for a restore (ddb.start_restore's
-- items function): argument {"History": the OID of its history relation,
-- "RestoreTime": timestamptz as text}.  The request checked the moment
-- against the window; the job reads that history, whatever the window
-- or the table's name have become since (no DeleteTable nor trim removes
-- it meanwhile: ddb.history_in_use).
CREATE FUNCTION ddb.pitr_restore_items(argument jsonb) RETURNS SETOF jsonb
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT item FROM ddb.history_items((argument->>'History')::oid::regclass, (argument->>'RestoreTime')::timestamptz);
END;

-- RestoreTableToPointInTime: a new table (TargetTableName) with the items
-- the source (SourceTableName or SourceTableArn) held at RestoreDateTime
-- (epoch seconds) or, with UseLatestRestorableTime, now; its indexes are
-- the source's, with the overrides DynamoDB takes (ddb.start_restore).
-- Reads the source and takes CreateTable's privilege (docs/security.md).
CREATE FUNCTION ddb.api_restore_table_to_point_in_time(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    target text := request->>'TargetTableName';
    source_name text := coalesce(request->>'SourceTableName', request->>'SourceTableArn');
    restore_time jsonb := nullif(request->'RestoreDateTime', 'null');
    latest jsonb := nullif(request->'UseLatestRestorableTime', 'null');
    t ddb.tables;
    restore_at timestamptz;
    history regclass;
BEGIN
    IF target IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''targetTableName'' failed to satisfy constraint: Member must not be null');
    END IF;
    PERFORM ddb.check_name('targetTableName', target);
    IF request ? 'SourceTableName' AND request ? 'SourceTableArn' THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: Only one of SourceTableName or SourceTableArn can be specified');
    END IF;
    IF source_name IS NULL THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: Either SourceTableName or SourceTableArn must be specified');
    END IF;
    IF latest IS NOT NULL AND jsonb_typeof(latest) <> 'boolean' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = 'Unexpected value type in payload for UseLatestRestorableTime: expected a boolean';
    END IF;
    IF restore_time IS NOT NULL AND jsonb_typeof(restore_time) <> 'number' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = 'Unexpected value type in payload for RestoreDateTime: expected a timestamp in seconds';
    END IF;
    IF restore_time IS NOT NULL AND latest = 'true' THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: Only one of RestoreDateTime or UseLatestRestorableTime can be specified');
    END IF;
    IF restore_time IS NULL AND latest IS DISTINCT FROM 'true' THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: Either RestoreDateTime or UseLatestRestorableTime must be specified');
    END IF;
    t := ddb.pitr_table(source_name, CASE WHEN request ? 'SourceTableName' THEN 'sourceTableName' ELSE 'sourceTableArn' END);
    PERFORM ddb.check_table_access(t.table_name, 'RestoreTableToPointInTime', 'read');
    PERFORM ddb.check_table_access(target, 'RestoreTableToPointInTime', 'create');
    restore_at := coalesce(ddb.epoch_timestamp(restore_time::numeric), clock_timestamp());
    history := ddb.pitr_history(t, ddb.pitr_of(t, restore_at));
    -- the versions of a time up to the restore's have all committed once this returns
    PERFORM ddb.pitr_settle(t.table_name);
    RETURN jsonb_build_object('TableDescription', ddb.start_restore(
        target, ddb.describe_table(t.table_name), request,
        'ddb.pitr_restore_items(jsonb)'::regprocedure,
        jsonb_build_object('History', history::oid, 'RestoreTime', restore_at),
        jsonb_build_object('SourceTableArn', ddb.table_arn(t.table_name), 'RestoreDateTime', extract(epoch FROM restore_at),
                           'SourceHistory', history::oid)));
END $$;


-- ===========================================================================
-- sql/security.sql
-- ===========================================================================

-- ---------------------------------------------------------------------------
-- Security (docs/security.md): PostgreSQL's privileges decide who may
-- touch a table.  Reading a table takes SELECT on its relation, writing
-- takes SELECT, INSERT, UPDATE and DELETE; changing its definition takes
-- ownership.  ddb.grant_tables gives a role (an access key of ddb-gateway
-- acts as one) table name patterns, read-only or read-write, and leading
-- keys (row-level security on the partition key); the C checks of
-- src/table/table_access.c refuse with DynamoDB's AccessDeniedException
-- before a statement runs, and the executor checks again.  Derived rows
-- (GSI entries, stream records, transaction tokens) are written as their
-- owner by C code that checked the caller first.
-- ---------------------------------------------------------------------------

-- every role may call the functions; the tables' privileges decide
GRANT USAGE ON SCHEMA ddb TO PUBLIC;

-- table names and key schemas are no secret to SQL users, as pg_class is not
GRANT SELECT ON ddb.tables, ddb.indexes TO PUBLIC;

-- and so is which tables have point-in-time recovery (sql/pitr.sql)
GRANT SELECT ON ddb.continuous_backups TO PUBLIC;

-- ddb.execute as a role the caller may SET ROLE to (ddb-gateway's access keys).
CREATE FUNCTION ddb.execute_as(role_name name, operation text, request jsonb) RETURNS jsonb
    AS 'MODULE_PATHNAME', 'ddb_execute_as' LANGUAGE C VOLATILE;

COMMENT ON FUNCTION ddb.execute_as(name, text, jsonb) IS
    'ddb.execute with the privileges of a role the caller may SET ROLE to';

-- ddb.execute_as (as the current user when role_name is null) for
-- ddb-gateway's metrics and access log: one text, the capacity the request
-- used by table as a JSON object on the first line ({"Table": [read units,
-- write units]}, whatever ReturnConsumedCapacity says), then the response.
-- One value, not a row: a function in FROM costs a scan node per call.
CREATE FUNCTION ddb.execute_metered(role_name name, operation text, request jsonb) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_execute_metered' LANGUAGE C VOLATILE;

COMMENT ON FUNCTION ddb.execute_metered(name, text, jsonb) IS
    'ddb.execute_as (as the current user when role_name is null): the capacity used by table on the first line, then the response';

-- ddb.execute_metered with whatever the request did rolled back: a router of a
-- sharded deployment checks with it a request it could not route (the node
-- raises DynamoDB's error for it) and a batch that spans nodes, whole.
CREATE FUNCTION ddb.execute_rolled_back(role_name name, operation text, request jsonb) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_execute_rolled_back' LANGUAGE C VOLATILE;

COMMENT ON FUNCTION ddb.execute_rolled_back(name, text, jsonb) IS
    'ddb.execute_metered with whatever the request did rolled back: its answer or its error';

-- Not for PUBLIC: its requests are neither admitted nor charged by
-- throttling (a router checks with it a request a node then serves, and
-- charges), so a client calling it would read past its tables' capacity.
-- The user a router reaches its nodes as is a superuser, or is granted it.
REVOKE ALL ON FUNCTION ddb.execute_rolled_back(name, text, jsonb) FROM PUBLIC;

-- The claims of a router's TransactGetItems across nodes on this node ([[n, element], ...]): the
-- items its elements read, each held shared until the transaction ends with the lock that a
-- TransactWriteItems takes (one of the server's own, src/ddb_locks.h, which no SQL takes); the
-- claims another transaction holds.  Not for PUBLIC: a claim held stalls TransactWriteItems of
-- the item; the user a router reaches its nodes as calls it.
CREATE FUNCTION ddb.try_claim_items(claims jsonb) RETURNS jsonb
    AS 'MODULE_PATHNAME', 'ddb_try_claim_items' LANGUAGE C VOLATILE STRICT;

REVOKE ALL ON FUNCTION ddb.try_claim_items(jsonb) FROM PUBLIC;

-- ddb.execute_metered of a Query, for a router of shards (PL/Proxy): its
-- response also has "EvaluatedKeys": [[key, ordinal], ...], per row the page
-- read, in order, the LastEvaluatedKey a page ending after that row would
-- carry and the row's index among the rows the filter kept (-1: filtered
-- out; counted under Select COUNT too), so that the router can merge the
-- shards' pages of a GSI Query with DynamoDB's Limit and paging, and a
-- Scan's over the shards in turn; each entry also has the row's size in
-- bytes, and page_bytes (1 to 1 MB) bounds what the page reads (what is left
-- of the router's page).  Other operations are refused (0A000).
CREATE FUNCTION ddb.execute_for_merge(role_name name, operation text, request jsonb, page_bytes integer DEFAULT NULL) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_execute_for_merge' LANGUAGE C VOLATILE;

COMMENT ON FUNCTION ddb.execute_for_merge(name, text, jsonb, integer) IS
    'ddb.execute_metered of a Query or Scan whose response also lists the key and ordinal of every row read (a router''s merge)';

-- The partitions of a sharded deployment that this node serves directly
-- (docs/scale-out.md, "Requests sent straight to their shard"): ddb-gateway
-- sends a request of one partition key here, past the router, only while
-- the router has given the partition to this node by a row here, which it
-- takes away before moving the partition.  Written by the router's user over
-- its connection to the node, and by no other role.  Not dumped: a node
-- restored from a dump serves nothing directly until the router gives it
-- its partitions again (ddb_router.publish_partitions()).
CREATE TABLE ddb.direct_partitions (
    partition integer PRIMARY KEY,
    partition_count integer NOT NULL CHECK (partition_count BETWEEN 1 AND 1024
                                            AND (partition_count & (partition_count - 1)) = 0),
    CHECK (partition >= 0 AND partition < partition_count)
);
-- (which partitions a node serves is no secret: read by the gateway's user, whoever it is)
GRANT SELECT ON ddb.direct_partitions TO PUBLIC;

-- ddb.execute_metered of a request sent straight to this node (GetItem,
-- PutItem, UpdateItem, DeleteItem, Query of a table or local index): served
-- when its partition key is in partition and this node serves partition
-- directly, holding the partition's lock shared until the transaction ends;
-- otherwise refused with SQLSTATE YR001, on which ddb-gateway sends it
-- through the router.  Not for PUBLIC: the lock it holds makes a move of the
-- partition wait; the gateway's user is a superuser or is granted it.
CREATE FUNCTION ddb.execute_direct(partition integer, role_name name, operation text, request jsonb) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_execute_direct' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION ddb.execute_direct(integer, name, text, jsonb) IS
    'ddb.execute_metered of a request of one partition key sent straight to this node, served while it serves the partition directly';
REVOKE ALL ON FUNCTION ddb.execute_direct(integer, name, text, jsonb) FROM PUBLIC;

-- Waits until every request that ddb.execute_direct serves on a partition
-- has ended, without taking its lock (a move, once the partition's row is
-- gone); lock_timeout bounds it.  Not for PUBLIC.
CREATE FUNCTION ddb.await_direct_requests(partition integer) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_await_direct_requests' LANGUAGE C VOLATILE STRICT;
REVOKE ALL ON FUNCTION ddb.await_direct_requests(integer) FROM PUBLIC;

-- Raises AccessDeniedException unless the current user may 'read', 'write'
-- or 'own' a table, naming the DynamoDB action.
CREATE FUNCTION ddb.check_table_access(table_name text, action text, access text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_check_table_access' LANGUAGE C VOLATILE STRICT;

-- Sets a table's tags (TagResource, UntagResource): for whoever may write the table.
CREATE FUNCTION ddb.set_table_tags(table_name text, tags jsonb) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_set_table_tags' LANGUAGE C VOLATILE STRICT;

-- True when the current user holds any of privileges ('SELECT', 'SELECT, INSERT, ...') on a table's relation.
CREATE FUNCTION ddb.table_privilege(schema_name name, relation_name name, privileges text) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN coalesce((SELECT has_table_privilege(c.oid, privileges)
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = table_privilege.schema_name AND c.relname = table_privilege.relation_name), false);

-- True unless the current user's grants limit it to leading keys on a
-- table and a stream record's partition key (keys, DynamoDB JSON) is none
-- of them (src/table/table_access.c; asked once per table and statement).
CREATE FUNCTION ddb.stream_record_visible(table_name text, keys jsonb) RETURNS boolean
    AS 'MODULE_PATHNAME', 'ddb_stream_record_visible' LANGUAGE C STABLE STRICT;

-- Stream records: every reader sees the records of the tables it may read
-- (the tables' privileges are asked once per statement, not per record),
-- and a role limited to leading keys those of its keys only, as it reads
-- the table's items (docs/security.md).
GRANT SELECT ON ddb.stream_records TO PUBLIC;

ALTER TABLE ddb.stream_records ENABLE ROW LEVEL SECURITY;

CREATE POLICY readers ON ddb.stream_records FOR SELECT TO PUBLIC
    USING (table_name OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT t.table_name FROM ddb.tables t
                                                     WHERE ddb.table_privilege(t.schema_name, t.relation_name, 'SELECT')))
           AND ddb.stream_record_visible(table_name, keys));

-- ---------------------------------------------------------------------------
-- Grants of tables to roles (docs/security.md)
-- ---------------------------------------------------------------------------
CREATE TABLE ddb.table_grants (
    role_name name NOT NULL,
    table_pattern text NOT NULL,    -- a table name, or a pattern with * (orders_*)
    read_only boolean NOT NULL,
    leading_keys text[],            -- partition keys the role may touch (tenant#1, tenant#1#*); NULL: any
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (role_name, table_pattern)
);

COMMENT ON TABLE ddb.table_grants IS 'What ddb.grant_tables gave each role: table patterns, read-only or read-write, leading keys';

SELECT pg_catalog.pg_extension_config_dump('ddb.table_grants', '');

-- True when a DynamoDB table name matches a grant's pattern (* stands for any characters).
CREATE FUNCTION ddb.table_pattern_matches(table_name text, pattern text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN table_name LIKE replace(replace(replace(pattern, '\', '\\'), '_', '\_'), '*', '%');

-- True when a partition key is one of the leading keys (a string ending in * is a prefix; S keys only):
-- the row-level security policies' test, in C (src/table/table_access.c).
CREATE FUNCTION ddb.leading_key_matches(key ddb.ddb_key, leading_keys text[]) RETURNS boolean
    AS 'MODULE_PATHNAME', 'ddb_leading_key_matches' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

-- The leading keys of the grants that reach a user for a table, NULL when
-- any partition key will do: one reaches it without leading keys, or none
-- does (src/table/table_access.c asks, as the owner, once per user).
CREATE FUNCTION ddb.leading_keys_of(table_name text, member oid) RETURNS text[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT CASE WHEN bool_or(g.leading_keys IS NULL) THEN NULL
                    ELSE array_agg(DISTINCT k) END
        FROM ddb.table_grants g LEFT JOIN LATERAL unnest(g.leading_keys) k ON true
        WHERE ddb.table_pattern_matches(leading_keys_of.table_name, g.table_pattern)
          AND to_regrole(quote_ident(g.role_name)) IS NOT NULL
          AND pg_has_role(member, to_regrole(quote_ident(g.role_name)), 'USAGE'));

-- The name of the policy ddb.grant_tables gives a role on a relation (at most 63 bytes, one per role).
CREATE FUNCTION ddb.grant_policy_name(role_name name) RETURNS name
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ('ddb_grant ' || left(role_name, 40) || ' ' || left(md5(role_name), 8))::name;

-- Makes a table's privileges and policies what ddb.table_grants says:
-- what earlier grants gave is taken back, then every grant whose pattern
-- matches is given, on the table and on its index relations (read there).
CREATE FUNCTION ddb.apply_table_grants(table_name text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.require_table(table_name);
    rel name;
    is_base boolean;
    p record;
    g record;
    role_name name;
    rule text;
BEGIN
    FOR rel, is_base IN SELECT t.relation_name, true
                        UNION ALL SELECT i.relation_name, false FROM ddb.indexes i WHERE i.table_name = t.table_name
                        -- point-in-time recovery's history: read by the table's readers (sql/pitr.sql)
                        UNION ALL SELECT c.history_relation, false FROM ddb.continuous_backups c WHERE c.table_name = t.table_name LOOP
        FOR p IN SELECT polname, polroles FROM pg_policy
                 WHERE polrelid = format('%I.%I', t.schema_name, rel)::regclass AND polname LIKE 'ddb\_grant %' LOOP
            EXECUTE format('DROP POLICY %I ON %I.%I', p.polname, t.schema_name, rel);
            FOREACH role_name IN ARRAY ARRAY(SELECT rolname FROM pg_roles WHERE oid = ANY (p.polroles)) LOOP
                EXECUTE format('REVOKE ALL ON %I.%I FROM %I', t.schema_name, rel, role_name);
            END LOOP;
        END LOOP;
        FOR g IN SELECT gr.role_name, bool_and(gr.read_only) AS read_only,
                        bool_or(gr.leading_keys IS NULL) AS any_key,
                        array_remove(array_agg(DISTINCT k), NULL) AS leading_keys
                 FROM ddb.table_grants gr LEFT JOIN LATERAL unnest(gr.leading_keys) k ON true
                 WHERE ddb.table_pattern_matches(t.table_name, gr.table_pattern)
                   AND to_regrole(quote_ident(gr.role_name)) IS NOT NULL
                 GROUP BY gr.role_name LOOP
            rule := CASE WHEN g.any_key THEN 'true'
                         ELSE format('ddb.leading_key_matches(pk, %L::text[])', g.leading_keys) END;
            EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', t.schema_name, g.role_name);
            IF is_base AND NOT g.read_only THEN
                EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I.%I TO %I', t.schema_name, rel, g.role_name);
                EXECUTE format('CREATE POLICY %I ON %I.%I TO %I USING (%s) WITH CHECK (%s)',
                               ddb.grant_policy_name(g.role_name), t.schema_name, rel, g.role_name, rule, rule);
            ELSE
                EXECUTE format('GRANT SELECT ON %I.%I TO %I', t.schema_name, rel, g.role_name);
                EXECUTE format('CREATE POLICY %I ON %I.%I FOR SELECT TO %I USING (%s)',
                               ddb.grant_policy_name(g.role_name), t.schema_name, rel, g.role_name, rule);
            END IF;
            IF NOT g.any_key THEN
                EXECUTE format('ALTER TABLE %I.%I ENABLE ROW LEVEL SECURITY', t.schema_name, rel);
            END IF;
        END LOOP;
    END LOOP;
END $$;

-- Gives a role the tables whose names match a pattern (Orders, orders_*),
-- now and as they are created, read-only or read-write, limited to items
-- whose partition key is one of leading_keys (a value, or a prefix ending
-- in *) when given; returns the number of existing tables it reached.
CREATE FUNCTION ddb.grant_tables(role_name name, table_pattern text, read_only boolean DEFAULT false,
                                 leading_keys text[] DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := 0;
    t record;
BEGIN
    IF to_regrole(quote_ident(role_name)) IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42704', MESSAGE = format('role "%s" does not exist', role_name),
            HINT = 'Create it first: CREATE ROLE ... NOLOGIN.';
    END IF;
    IF table_pattern IS NULL OR table_pattern !~ '^[a-zA-Z0-9_.*-]{1,255}$' THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('invalid table pattern "%s"', table_pattern),
            HINT = 'A pattern is a table name in which * stands for any characters: Orders, orders_*.';
    END IF;
    IF read_only IS NULL OR cardinality(leading_keys) = 0 OR array_position(leading_keys, NULL) IS NOT NULL
       OR EXISTS (SELECT FROM unnest(leading_keys) k WHERE k IN ('', '*')) THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'invalid grant: read_only must not be null, and each leading key is a non-empty value or prefix*';
    END IF;
    IF leading_keys IS NOT NULL AND EXISTS (SELECT FROM ddb.tables x WHERE ddb.table_pattern_matches(x.table_name, table_pattern)
                                                                      AND x.attribute_types->>x.hash_key <> 'S') THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'leading keys need tables whose partition key is a string (S)';
    END IF;
    INSERT INTO ddb.table_grants AS g (role_name, table_pattern, read_only, leading_keys)
    VALUES (role_name, table_pattern, read_only, leading_keys)
    ON CONFLICT ON CONSTRAINT table_grants_pkey
    DO UPDATE SET read_only = excluded.read_only, leading_keys = excluded.leading_keys, created_at = now();
    FOR t IN SELECT x.table_name FROM ddb.tables x WHERE ddb.table_pattern_matches(x.table_name, table_pattern) LOOP
        PERFORM ddb.apply_table_grants(t.table_name);
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;

-- Takes back a grant of ddb.grant_tables; returns the number of existing tables it reached.
CREATE FUNCTION ddb.revoke_tables(role_name name, table_pattern text) RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := 0;
    t record;
BEGIN
    DELETE FROM ddb.table_grants g WHERE g.role_name = revoke_tables.role_name AND g.table_pattern = revoke_tables.table_pattern;
    FOR t IN SELECT x.table_name FROM ddb.tables x WHERE ddb.table_pattern_matches(x.table_name, table_pattern) LOOP
        PERFORM ddb.apply_table_grants(t.table_name);
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;


-- ===========================================================================
-- sql/jobs.sql
-- ===========================================================================

-- ---------------------------------------------------------------------------
-- Background jobs (docs/operations.md, "Background jobs"): work that must
-- not hold a request open (a restore, an export, an import) runs in a
-- dynamic background worker of its own (src/jobs/).  ddb.start_job records
-- the job in the requesting transaction and starts its worker, which waits
-- until that transaction ends: committed, it runs the job; rolled back, it
-- finds no job and does nothing.  A job of kind K is done by the function
-- ddb.job_K(job_id integer, spec jsonb, progress jsonb) RETURNS jsonb, run
-- by the worker with the privileges of the role that started the job, once
-- per step, each step a transaction of its own: it returns the job's
-- progress counters, and "done": false when another step is to follow.  A
-- job that fails ends FAILED with the error, and ddb.job_K_failed(job_id,
-- spec, error), when it exists, undoes what the job left (as that role).
-- ---------------------------------------------------------------------------
CREATE SEQUENCE ddb.job_ids AS integer;

SELECT pg_catalog.pg_extension_config_dump('ddb.job_ids', '');

CREATE TABLE ddb.jobs (
    id integer PRIMARY KEY DEFAULT nextval('ddb.job_ids'),
    kind text NOT NULL,                 -- ddb.job_<kind> does the work
    spec jsonb NOT NULL,                -- what to do, the kind's own
    role_id regrole NOT NULL,           -- who started it, by OID (a role renamed, or dropped and made again, is not another's): the work runs with its privileges
    status text NOT NULL DEFAULT 'IN_PROGRESS' CHECK (status IN ('IN_PROGRESS', 'COMPLETED', 'FAILED')),
    progress jsonb NOT NULL DEFAULT '{}',   -- the counters the last step returned
    error text,                         -- why it FAILED
    created_at timestamptz NOT NULL DEFAULT now(),
    started_at timestamptz,
    ended_at timestamptz
);

ALTER SEQUENCE ddb.job_ids OWNED BY ddb.jobs.id;

COMMENT ON TABLE ddb.jobs IS 'Background jobs (restores, ...): kind, spec, the role that started them, status, progress, error';

SELECT pg_catalog.pg_extension_config_dump('ddb.jobs', '');

-- Each role sees its own jobs (and those of the roles it has the privileges
-- of); only the extension's code writes them (src/jobs/, as the owner).
GRANT SELECT ON ddb.jobs TO PUBLIC;

ALTER TABLE ddb.jobs ENABLE ROW LEVEL SECURITY;

CREATE POLICY starters ON ddb.jobs FOR SELECT TO PUBLIC
    USING (CASE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.oid = role_id) THEN false
                ELSE pg_catalog.pg_has_role(role_id, 'USAGE') END);

-- Records a job of a kind (there must be a function ddb.job_<kind>(integer,
-- jsonb, jsonb)) and starts its background worker, which runs it once the
-- calling transaction commits; returns the job's id.  LimitExceededException
-- (YD009) when no background worker is free (max_worker_processes).
CREATE FUNCTION ddb.start_job(kind text, spec jsonb) RETURNS integer
    AS 'MODULE_PATHNAME', 'ddb_start_job' LANGUAGE C VOLATILE STRICT;

-- A job's status (IN_PROGRESS, COMPLETED, FAILED; NULL when there is no such
-- job, or it is not the caller's: ddb.jobs' policy).  A job IN_PROGRESS whose
-- worker is gone (the server restarted, the worker was terminated) ends
-- FAILED here, with its failure function run.
CREATE FUNCTION ddb.job_state(job_id integer) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_job_state' LANGUAGE C VOLATILE STRICT;

-- True while a job, whoever started it, is IN_PROGRESS (ending FAILED one
-- whose worker is gone, as ddb.job_state does): ddb.restore_running's test.
CREATE FUNCTION ddb.job_running(job_id integer) RETURNS boolean
    AS 'MODULE_PATHNAME', 'ddb_job_running' LANGUAGE C VOLATILE STRICT;

-- True when the current transaction started a job (it holds the job's
-- request lock, src/jobs/jobs.h).
CREATE FUNCTION ddb.job_started_here(job_id integer) RETURNS boolean
    AS 'MODULE_PATHNAME', 'ddb_job_started_here' LANGUAGE C VOLATILE STRICT;

-- Waits until a job is no longer IN_PROGRESS (timeout_seconds at most) and
-- returns its status; a job started by the calling transaction cannot end
-- before that transaction does, and is refused.
CREATE FUNCTION ddb.wait_for_job(job_id integer, timeout_seconds double precision DEFAULT 60) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    deadline timestamptz := clock_timestamp() + make_interval(secs => timeout_seconds);
    status text;
BEGIN
    IF ddb.job_started_here(job_id) THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('job %s was started by this transaction and runs once it commits', job_id);
    END IF;
    LOOP
        status := ddb.job_state(job_id);
        EXIT WHEN status IS DISTINCT FROM 'IN_PROGRESS' OR clock_timestamp() > deadline;
        PERFORM pg_sleep(0.02);
    END LOOP;
    RETURN status;
END $$;

-- ---------------------------------------------------------------------------
-- Finding and listing a kind's jobs, as the operations of the kinds whose
-- jobs are their records (exports, imports) do: by ARN, by ClientToken, a
-- page at a time.
-- ---------------------------------------------------------------------------

-- The NextToken of a listing of the caller's jobs of a kind (export,
-- import) after a job of its own, for a table filter (16 hex digits).
CREATE FUNCTION ddb.seal_job_page_token(kind text, job_id integer, filter text) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_seal_job_page_token' LANGUAGE C STABLE STRICT;

-- The job a listing's NextToken names, NULL for anything else, or for another filter.
CREATE FUNCTION ddb.open_job_page_token(kind text, token text, filter text) RETURNS integer
    AS 'MODULE_PATHNAME', 'ddb_open_job_page_token' LANGUAGE C STABLE STRICT;

-- A page of a listing of jobs of a kind (the caller's: ddb.jobs' policy):
-- their ARNs (the spec's arn_member) in reverse order, those of table_arn
-- when given, of the last 90 days, after the job next_token names; the
-- ARNs and the NextToken of the page after, if any.  A token holds the id
-- of the page's last job and a hash of table_arn, sealed for the kind's
-- listing (ddb.seal_job_page_token): it is short whatever the ARNs'
-- lengths (ListImports' must stay within 1024 characters as hex) and good
-- for the listing it came from only.
CREATE FUNCTION ddb.job_page(kind text, arn_member text, table_arn text, page_size integer, next_token text,
                             OUT arns text[], OUT next text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    filter text := left(md5(coalesce(table_arn, '')), 16);
    after integer;
    after_arn text;
    ids integer[];
BEGIN
    IF next_token IS NOT NULL THEN
        after := ddb.open_job_page_token(kind, next_token, filter);
        IF after IS NOT NULL THEN
            after_arn := (SELECT j.spec->>arn_member FROM ddb.jobs j WHERE j.kind = job_page.kind AND j.id = after);
        END IF;
        IF after_arn IS NULL THEN
            PERFORM ddb.validation_error('The provided NextToken is not valid');
        END IF;
    END IF;
    SELECT array_agg(arn ORDER BY arn COLLATE "C" DESC), array_agg(id ORDER BY arn COLLATE "C" DESC) INTO arns, ids FROM (
        SELECT j.spec->>arn_member AS arn, j.id FROM ddb.jobs j
        WHERE j.kind = job_page.kind AND j.created_at > now() - interval '90 days'
          AND (table_arn IS NULL OR j.spec->>'TableArn' = table_arn)
          AND (after_arn IS NULL OR (j.spec->>arn_member) COLLATE "C" < after_arn COLLATE "C")
        ORDER BY j.spec->>arn_member COLLATE "C" DESC LIMIT page_size + 1) page;
    IF cardinality(arns) > page_size THEN
        arns := arns[1:page_size];
        next := ddb.seal_job_page_token(kind, ids[page_size], filter);
    END IF;
END $$;

-- The job of kind of an ARN (the spec's arn_member), the caller's, or NULL.
CREATE FUNCTION ddb.job_of_arn(kind text, arn_member text, arn text) RETURNS ddb.jobs
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT j FROM ddb.jobs j WHERE j.kind = job_of_arn.kind AND j.spec->>arn_member = arn);

-- Locks the caller's ClientToken of a kind of job until the transaction ends:
-- the role is part of the lock's key, one of the server's own locks
-- (src/ddb_locks.h), so no role holds another's.
CREATE FUNCTION ddb.lock_client_token(kind text, token text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_lock_client_token' LANGUAGE C VOLATILE STRICT;

-- The caller's job of kind started with a ClientToken in the last 8 hours
-- (DynamoDB's idempotency window), or NULL; the token is locked until the
-- transaction ends, so that two requests with it are one after the other.
CREATE FUNCTION ddb.job_of_client_token(kind text, token text) RETURNS ddb.jobs
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ddb.lock_client_token(kind, token);
    RETURN (SELECT j FROM ddb.jobs j
            WHERE j.kind = job_of_client_token.kind AND j.spec->>'ClientToken' = token
              AND j.created_at > now() - interval '8 hours'
            ORDER BY j.id DESC LIMIT 1);
END $$;

-- The caller's job of kind that DescribeExport or DescribeImport names by
-- its ARN (member: ExportArn, ImportArn; a string of 37 to 1024
-- characters), its status brought up to date (a job whose worker is gone
-- ends FAILED here, and what it left goes); DynamoDB's error (errcode,
-- message) when there is none.
CREATE FUNCTION ddb.described_job(kind text, member text, arn jsonb, errcode text, message text) RETURNS ddb.jobs
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j ddb.jobs;
BEGIN
    PERFORM ddb.raise_violations(ddb.string_violations(arn, member, lower(left(member, 1)) || substr(member, 2), true, 37, 1024));
    j := ddb.job_of_arn(kind, member, arn #>> '{}');
    IF j.id IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = errcode, MESSAGE = message || (arn #>> '{}');
    END IF;
    PERFORM ddb.job_state(j.id);
    RETURN ddb.jobs_row(j.id);
END $$;

-- A job's row (the caller's: ddb.jobs' policy).
CREATE FUNCTION ddb.jobs_row(job_id integer) RETURNS ddb.jobs
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT j FROM ddb.jobs j WHERE j.id = job_id);


-- ===========================================================================
-- sql/backups.sql
-- ===========================================================================

-- ---------------------------------------------------------------------------
-- On-demand backups (docs/backups.md): CreateBackup, DescribeBackup,
-- ListBackups, DeleteBackup.  A backup is a relation of its own in schema
-- ddb_backups, named by the backup's id, holding the table's items (natural
-- jsonb and their sizes) as one statement's snapshot saw them (MVCC: the
-- copy blocks no writer), and a row of ddb.backups holding the table's
-- description at that moment (key schema, attribute types, indexes, TTL,
-- stream, billing).  The relation is its creator's: whoever may read it may
-- describe, list and restore the backup; its owner may delete it.  Backups
-- outlive their table.  Restoring one is sql/restore.sql's.
-- ---------------------------------------------------------------------------
CREATE SCHEMA ddb_backups;

COMMENT ON SCHEMA ddb_backups IS 'Items of DynamoDB backups (ddb_model): one relation per backup, named by its id';

GRANT USAGE ON SCHEMA ddb_backups TO PUBLIC;

CREATE TABLE ddb.backups (
    backup_arn text PRIMARY KEY,        -- <table ARN>/backup/<id>
    backup_name text NOT NULL,
    table_name text NOT NULL,           -- the table it was taken of (which may since be gone)
    table_arn text NOT NULL,
    table_id uuid NOT NULL,
    relation_name name NOT NULL UNIQUE, -- ddb_backups.<relation_name> holds the items: the backup's id
    created_at timestamptz NOT NULL,
    size_bytes bigint NOT NULL,
    item_count bigint NOT NULL,
    description jsonb NOT NULL          -- the table's TableDescription at that moment, with its TimeToLiveDescription
);

COMMENT ON TABLE ddb.backups IS 'On-demand backups: name, table, size, and the table''s description when it was taken';

SELECT pg_catalog.pg_extension_config_dump('ddb.backups', '');

-- names and sizes are no secret to SQL users, as ddb.tables' are not
GRANT SELECT ON ddb.backups TO PUBLIC;

-- A backup's ARN: its table's, /backup/, its id.
CREATE FUNCTION ddb.backup_arn(table_name text, backup_id text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ddb.table_arn(table_name) || '/backup/' || backup_id;

-- Raises AccessDeniedException unless the current user may 'read' (SELECT)
-- or 'own' a backup's relation; resource is the backup's ARN after the
-- table ARN's prefix (<table>/backup/<id>), as the refusal names it.
CREATE FUNCTION ddb.check_backup_access(relation regclass, resource text, action text, access text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_check_backup_access' LANGUAGE C VOLATILE STRICT;

-- Checks the current user's access to a backup for an action (see ddb.check_backup_access).
CREATE FUNCTION ddb.require_backup_access(b ddb.backups, action text, access text) RETURNS void
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
RETURN ddb.check_backup_access(format('ddb_backups.%I', b.relation_name)::regclass,
                               b.table_name || '/backup/' || b.relation_name, action, access);

-- The TableName of CreateBackup and ListBackups, which may also be the table's ARN, checked as a name.
CREATE FUNCTION ddb.backup_table_name(value text) RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text := coalesce(ddb.arn_table_name(value), value);
BEGIN
    PERFORM ddb.check_name('tableName', name);
    RETURN name;
END $$;

-- The backup a BackupArn names, or BackupNotFoundException (YD020); the
-- ARN checked as DynamoDB checks it first.
CREATE FUNCTION ddb.require_backup(arn text) RETURNS ddb.backups
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b ddb.backups;
BEGIN
    IF arn IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''backupArn'' failed to satisfy constraint: Member must not be null');
    END IF;
    IF length(arn) NOT BETWEEN 37 AND 1024 THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''backupArn'' failed to satisfy constraint: Member must have length %s',
            arn, CASE WHEN length(arn) < 37 THEN 'greater than or equal to 37' ELSE 'less than or equal to 1024' END));
    END IF;
    SELECT * INTO b FROM ddb.backups WHERE backup_arn = arn;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD020', MESSAGE = 'Backup not found: ' || arn;
    END IF;
    RETURN b;
END $$;

-- A backup's BackupDetails (status AVAILABLE, or as given).
CREATE FUNCTION ddb.backup_details(b ddb.backups, status text DEFAULT 'AVAILABLE') RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN jsonb_build_object('BackupArn', b.backup_arn, 'BackupName', b.backup_name,
                          'BackupSizeBytes', b.size_bytes, 'BackupStatus', status, 'BackupType', 'USER',
                          'BackupCreationDateTime', extract(epoch FROM b.created_at));

-- A backup's BackupDescription: its details, and its table's details and
-- features as they were (SourceTableDetails, SourceTableFeatureDetails).
CREATE FUNCTION ddb.backup_description(b ddb.backups, status text DEFAULT 'AVAILABLE') RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN jsonb_build_object(
    'BackupDetails', ddb.backup_details(b, status),
    'SourceTableDetails', jsonb_strip_nulls(jsonb_build_object(
        'TableName', b.table_name, 'TableId', b.table_id, 'TableArn', b.table_arn,
        'TableSizeBytes', b.size_bytes, 'ItemCount', b.item_count,
        'KeySchema', b.description->'KeySchema',
        'TableCreationDateTime', b.description->'CreationDateTime',
        'ProvisionedThroughput', (b.description->'ProvisionedThroughput') - 'NumberOfDecreasesToday',
        'OnDemandThroughput', b.description->'OnDemandThroughput',
        'BillingMode', b.description->'BillingModeSummary'->'BillingMode')),
    'SourceTableFeatureDetails', jsonb_strip_nulls(jsonb_build_object(
        'LocalSecondaryIndexes', (SELECT jsonb_agg(jsonb_build_object('IndexName', i->'IndexName', 'KeySchema', i->'KeySchema',
                                                                      'Projection', i->'Projection'))
                                  FROM jsonb_array_elements(b.description->'LocalSecondaryIndexes') i),
        'GlobalSecondaryIndexes', (SELECT jsonb_agg(jsonb_build_object('IndexName', i->'IndexName', 'KeySchema', i->'KeySchema',
                                                                       'Projection', i->'Projection',
                                                                       'ProvisionedThroughput',
                                                                       (i->'ProvisionedThroughput') - 'NumberOfDecreasesToday'))
                                   FROM jsonb_array_elements(b.description->'GlobalSecondaryIndexes') i),
        'StreamDescription', b.description->'StreamSpecification',
        'TimeToLiveDescription', b.description->'TimeToLiveDescription',
        'SSEDescription', b.description->'SSEDescription')));

-- CreateBackup: the table's items as one snapshot sees them, copied into a
-- relation of the backup's own, and its description.  Takes ownership of
-- the table (docs/security.md), whose relation it locks SHARE UPDATE
-- EXCLUSIVE (the owner's to take, where a lock of the catalog's row is
-- not), so that no DeleteTable, no index added or removed and no
-- point-in-time recovery turned on changes it meanwhile, while writers go on.
CREATE FUNCTION ddb.api_create_backup(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text;
    t ddb.tables;
    id text := lpad(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint::text, 14, '0')
               || '-' || left(replace(gen_random_uuid()::text, '-', ''), 8);
    stats record;
    b ddb.backups;
BEGIN
    IF request->>'TableName' IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tableName'' failed to satisfy constraint: Member must not be null');
    END IF;
    IF request->>'BackupName' IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''backupName'' failed to satisfy constraint: Member must not be null');
    END IF;
    name := ddb.backup_table_name(request->>'TableName');
    PERFORM ddb.check_name('backupName', request->>'BackupName');
    IF NOT EXISTS (SELECT FROM ddb.tables WHERE table_name = name) THEN
        RAISE EXCEPTION USING ERRCODE = 'YD022', MESSAGE = 'Table not found: ' || name;
    END IF;
    PERFORM ddb.check_table_access(name, 'CreateBackup', 'own');
    PERFORM ddb.refuse_restoring(name, 'YD024', 'Table is being restored: %s');
    SELECT * INTO t FROM ddb.tables WHERE table_name = name;
    IF FOUND THEN
        EXECUTE format('LOCK TABLE %I.%I IN SHARE UPDATE EXCLUSIVE MODE', t.schema_name, t.relation_name);
        SELECT * INTO t FROM ddb.tables WHERE table_name = name;
    END IF;
    IF NOT FOUND THEN   -- deleted meanwhile (or with its restore, which had lost its worker)
        RAISE EXCEPTION USING ERRCODE = 'YD022', MESSAGE = 'Table not found: ' || name;
    END IF;
    -- one statement, one snapshot: the items as they were when it began (expired ones are no longer items)
    EXECUTE format('CREATE TABLE ddb_backups.%I AS SELECT item, item_size FROM %I.%I WHERE ddb.ttl_visible(expires_at)',
                   id, t.schema_name, t.relation_name);
    EXECUTE format('COMMENT ON TABLE ddb_backups.%I IS %L', id,
                   format('Items of DynamoDB backup %s of table %s (ddb_model)', request->>'BackupName', name));
    EXECUTE format('SELECT count(*) AS items, coalesce(sum(item_size), 0) AS bytes FROM ddb_backups.%I', id) INTO stats;
    INSERT INTO ddb.backups (backup_arn, backup_name, table_name, table_arn, table_id, relation_name, created_at,
                             size_bytes, item_count, description)
    VALUES (ddb.backup_arn(name, id), request->>'BackupName', name, ddb.table_arn(name), ddb.table_id(t), id,
            clock_timestamp(), stats.bytes, stats.items,
            ddb.describe_table(name) || jsonb_build_object('ItemCount', stats.items, 'TableSizeBytes', stats.bytes)
            || (ddb.api_describe_time_to_live(jsonb_build_object('TableName', name))))
    RETURNING * INTO b;
    RETURN jsonb_build_object('BackupDetails', ddb.backup_details(b));
END $$;

-- DescribeBackup: for whoever may read the backup.
CREATE FUNCTION ddb.api_describe_backup(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b ddb.backups := ddb.require_backup(request->>'BackupArn');
BEGIN
    PERFORM ddb.require_backup_access(b, 'DescribeBackup', 'read');
    RETURN jsonb_build_object('BackupDescription', ddb.backup_description(b));
END $$;

-- A bound of ListBackups' TimeRange (epoch seconds), or NULL when absent.
CREATE FUNCTION ddb.backup_time_bound(request jsonb, member text) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF request->member IS NULL OR jsonb_typeof(request->member) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(request->member) <> 'number' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006',
            MESSAGE = format('Unexpected value type in payload for %s: expected a timestamp in seconds', member);
    END IF;
    RETURN to_timestamp((request->>member)::double precision);
END $$;

-- ListBackups: the backups the caller may read, in ARN order, filtered by
-- TableName, TimeRangeLowerBound (inclusive) and TimeRangeUpperBound
-- (exclusive) and BackupType (on-demand backups are USER; SYSTEM and
-- AWS_BACKUP list none), paged by Limit and ExclusiveStartBackupArn.
CREATE FUNCTION ddb.api_list_backups(request jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    page_size int := ddb.request_limit(request, 100, 100);
    backup_type text := coalesce(request->>'BackupType', 'USER');
    name text;
    lower_bound timestamptz := ddb.backup_time_bound(request, 'TimeRangeLowerBound');
    upper_bound timestamptz := ddb.backup_time_bound(request, 'TimeRangeUpperBound');
    summaries jsonb[];
BEGIN
    IF backup_type NOT IN ('USER', 'SYSTEM', 'AWS_BACKUP', 'ALL') THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''backupType'' failed to satisfy constraint: Member must satisfy enum value set: [USER, SYSTEM, AWS_BACKUP, ALL]',
            backup_type));
    END IF;
    IF request->>'TableName' IS NOT NULL THEN
        name := ddb.backup_table_name(request->>'TableName');
    END IF;
    SELECT array_agg(s ORDER BY arn COLLATE "C") INTO summaries
    FROM (SELECT b.backup_arn AS arn,
                 jsonb_build_object('TableName', b.table_name, 'TableId', b.table_id, 'TableArn', b.table_arn)
                 || ddb.backup_details(b) AS s
          FROM ddb.backups b
          WHERE backup_type IN ('USER', 'ALL')
            AND (name IS NULL OR b.table_name = name)
            AND (lower_bound IS NULL OR b.created_at >= lower_bound)
            AND (upper_bound IS NULL OR b.created_at < upper_bound)
            AND (request->>'ExclusiveStartBackupArn' IS NULL
                 OR b.backup_arn COLLATE "C" > (request->>'ExclusiveStartBackupArn') COLLATE "C")
            AND ddb.table_privilege('ddb_backups', b.relation_name, 'SELECT')
          ORDER BY b.backup_arn COLLATE "C" LIMIT page_size + 1) page;
    summaries := coalesce(summaries, '{}');
    IF cardinality(summaries) > page_size THEN
        RETURN jsonb_build_object('BackupSummaries', to_jsonb(summaries[1:page_size]),
                                  'LastEvaluatedBackupArn', summaries[page_size]->>'BackupArn');
    END IF;
    RETURN jsonb_build_object('BackupSummaries', to_jsonb(summaries));
END $$;

-- DeleteBackup: for the backup's owner; BackupInUseException while a
-- restore from it runs.
CREATE FUNCTION ddb.api_delete_backup(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b ddb.backups := ddb.require_backup(request->>'BackupArn');
BEGIN
    PERFORM ddb.require_backup_access(b, 'DeleteBackup', 'own');
    -- its relation locked: a restore request reading the backup (which
    -- holds it ACCESS SHARE) is waited for, and a later one waits
    EXECUTE format('LOCK TABLE ddb_backups.%I IN ACCESS EXCLUSIVE MODE', b.relation_name);
    b := ddb.require_backup(b.backup_arn);
    IF EXISTS (SELECT FROM ddb.table_restores r
               WHERE r.source_backup_arn = b.backup_arn AND r.in_progress AND ddb.restore_running(r.table_name)) THEN
        RAISE EXCEPTION USING ERRCODE = 'YD021',
            MESSAGE = format('Backup is in use: a restore from %s is in progress', b.backup_arn);
    END IF;
    EXECUTE format('DROP TABLE ddb_backups.%I', b.relation_name);
    DELETE FROM ddb.backups WHERE backup_arn = b.backup_arn;
    RETURN jsonb_build_object('BackupDescription', ddb.backup_description(b, 'DELETED'));
END $$;

-- The items of a backup, for a restore (ddb.start_restore's items function):
-- argument {"BackupArn": ...}; read as the restoring role, who must be able
-- to read the backup.
CREATE FUNCTION ddb.backup_items(argument jsonb) RETURNS SETOF jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b ddb.backups := ddb.require_backup(argument->>'BackupArn');
BEGIN
    RETURN QUERY EXECUTE format('SELECT item FROM ddb_backups.%I', b.relation_name);
END $$;


-- ===========================================================================
-- sql/restore.sql
-- ===========================================================================

-- ---------------------------------------------------------------------------
-- Restores (docs/backups.md): a new table made from a table's description
-- and a set of items, filled by a background job (sql/jobs.sql).  The
-- request creates the table, CREATING, and starts the job; the job writes
-- the items through ddb.put_item (indexes are rebuilt as items arrive) and
-- makes the table ACTIVE in the same transaction.  RestoreTableFromBackup
-- is one caller of ddb.start_restore; RestoreTableToPointInTime another.
-- ---------------------------------------------------------------------------
CREATE TABLE ddb.table_restores (
    table_name text PRIMARY KEY REFERENCES ddb.tables ON DELETE CASCADE,
    job_id integer NOT NULL,            -- the job that fills it (ddb.jobs)
    source_backup_arn text,             -- RestoreSummary: the backup restored, if one was
    source_table_arn text,              -- the table restored (NULL for an import's table: sql/imports.sql)
    restore_date_time timestamptz,
    in_progress boolean NOT NULL DEFAULT true,  -- CREATING until the job has written every item
    source_history oid                  -- the point-in-time recovery history a restore to a moment reads (sql/pitr.sql)
);

COMMENT ON TABLE ddb.table_restores IS 'Tables made by a restore (or an import): where from, and whether the job still runs (CREATING)';

SELECT pg_catalog.pg_extension_config_dump('ddb.table_restores', '');

GRANT SELECT ON ddb.table_restores TO PUBLIC;

-- a table being restored refuses item operations: its definition says so (src/table/table_def.c)
CREATE TRIGGER catalog_changed AFTER INSERT OR UPDATE OR DELETE ON ddb.table_restores
    FOR EACH ROW EXECUTE FUNCTION ddb.catalog_changed();

-- True while a table is being restored (CREATING).
CREATE FUNCTION ddb.table_restoring(table_name text) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN EXISTS (SELECT FROM ddb.table_restores r WHERE r.table_name = table_restoring.table_name AND r.in_progress);

-- Raises an error for a table being restored (its restore running: a
-- restore whose worker is gone ends here, and its table goes): by
-- default ResourceInUseException (YD005), as the operations that change a
-- table wait for its restore, as DynamoDB's wait for CREATING to end;
-- others give their own DynamoDB error (errcode, and message with %s for the table's name).
CREATE FUNCTION ddb.refuse_restoring(table_name text, errcode text DEFAULT 'YD005',
                                     message text DEFAULT 'Attempt to change a resource which is still in use: Table is being created: %s')
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF ddb.restore_running(table_name) THEN
        RAISE EXCEPTION USING ERRCODE = errcode, MESSAGE = format(message, table_name);
    END IF;
END $$;

-- True while a table's restore runs.  A restore whose worker is gone (the
-- server restarted, the worker was terminated) ends FAILED here, and its
-- table is dropped (ddb.job_running, ddb.job_restore_failed).
CREATE FUNCTION ddb.restore_running(table_name text) RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
RETURN coalesce((SELECT ddb.job_running(r.job_id) FROM ddb.table_restores r
                 WHERE r.table_name = restore_running.table_name AND r.in_progress), false);

-- What DescribeTable adds for a restored table: its RestoreSummary, and
-- TableStatus CREATING while the restore runs ({} for other tables; an
-- imported table has no RestoreSummary).
CREATE FUNCTION ddb.restore_description(table_name text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN coalesce((SELECT CASE WHEN r.in_progress THEN '{"TableStatus": "CREATING"}'::jsonb ELSE '{}' END
                        || CASE WHEN r.source_table_arn IS NOT NULL THEN
                           jsonb_build_object('RestoreSummary', jsonb_strip_nulls(jsonb_build_object(
                               'SourceBackupArn', r.source_backup_arn, 'SourceTableArn', r.source_table_arn,
                               'RestoreDateTime', extract(epoch FROM r.restore_date_time),
                               'RestoreInProgress', r.in_progress)))
                           ELSE '{}' END
                 FROM ddb.table_restores r WHERE r.table_name = restore_description.table_name), '{}');

-- Writes the items a function returns into a table, as ddb.put_item does
-- (the table may be CREATING: the restore's own), and returns how many it
-- wrote: SELECT item FROM items_function(items_argument); then the restore
-- is done (ddb.table_restores, written as its owner).  Only in the worker
-- of the job restoring the table.
CREATE FUNCTION ddb.restore_items(target_table text, items_function regprocedure, items_argument jsonb) RETURNS bigint
    AS 'MODULE_PATHNAME', 'ddb_restore_items' LANGUAGE C VOLATILE;

-- Records a restore just started in ddb.table_restores, as its owner: for
-- the new table's owner, whose transaction started the job
-- (restore_summary as ddb.start_restore takes it, and SourceHistory, the
-- OID of the history relation a restore to a moment reads, a table's with
-- point-in-time recovery that the caller may read: one that is in use is
-- kept from DeleteTable and trimming, src/jobs/restore_items.c).
CREATE FUNCTION ddb.record_restore(table_name text, job_id integer, restore_summary jsonb) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_record_restore' LANGUAGE C VOLATILE STRICT;

-- Ends the restore or import of a table by its job (its table ACTIVE), as
-- ddb.table_restores' owner: only in the worker running that job (an
-- import's failure function, which keeps the items written).
CREATE FUNCTION ddb.end_restore(table_name text, job_id integer) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_end_restore' LANGUAGE C VOLATILE STRICT;

-- The secondary indexes of a restored table, as CreateTable takes them:
-- the source's (kind: 'Global' or 'Local'), or the override's, each of
-- which must be one of the source's, with its KeySchema (the Projection may
-- change, an override's OnDemandThroughput and WarmThroughput are taken); a
-- global index's ProvisionedThroughput when the table is PROVISIONED (the
-- override's, else the source's).
CREATE FUNCTION ddb.restored_indexes(source jsonb, overrides jsonb, kind text, billing_mode text) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    member text := kind || 'SecondaryIndexOverride';
    wanted jsonb := coalesce(overrides->member, source->(kind || 'SecondaryIndexes'), '[]');
    chosen jsonb := '[]';
    g jsonb;
    s jsonb;
BEGIN
    IF jsonb_typeof(wanted) <> 'array' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = format('Unexpected value type in payload for %s: expected a list', member);
    END IF;
    FOR g IN SELECT value FROM jsonb_array_elements(wanted) LOOP
        SELECT value INTO s FROM jsonb_array_elements(source->(kind || 'SecondaryIndexes')) WHERE value->>'IndexName' = g->>'IndexName';
        IF s IS NULL OR s->'KeySchema' IS DISTINCT FROM g->'KeySchema' THEN
            PERFORM ddb.validation_error(format(
                'One or more parameter values were invalid: %s: the backup has no index %s with this KeySchema',
                member, coalesce(g->>'IndexName', 'null')));
        END IF;
        chosen := chosen || jsonb_build_array(
            jsonb_strip_nulls(jsonb_build_object('IndexName', s->'IndexName', 'KeySchema', s->'KeySchema',
                                                 'Projection', coalesce(g->'Projection', s->'Projection'),
                                                 'OnDemandThroughput', g->'OnDemandThroughput',
                                                 'WarmThroughput', g->'WarmThroughput'))
            || CASE WHEN kind = 'Global' AND billing_mode = 'PROVISIONED'
                    THEN jsonb_build_object('ProvisionedThroughput',
                             coalesce(g->'ProvisionedThroughput', (s->'ProvisionedThroughput') - 'NumberOfDecreasesToday'))
                    ELSE '{}' END);
    END LOOP;
    RETURN chosen;
END $$;

-- The CreateTable request of a restored table: the source's key schema,
-- its indexes and billing, with the overrides RestoreTableFromBackup and
-- RestoreTableToPointInTime take (BillingModeOverride,
-- ProvisionedThroughputOverride, OnDemandThroughputOverride,
-- GlobalSecondaryIndexOverride, LocalSecondaryIndexOverride; an
-- SSESpecificationOverride is checked and, as every SSE setting here,
-- left to the server's storage).  Tags, stream and TTL settings are not
-- restored, as in DynamoDB.
CREATE FUNCTION ddb.restored_table_request(target_table text, source jsonb, overrides jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mode text := coalesce(overrides->>'BillingModeOverride', source->'BillingModeSummary'->>'BillingMode', 'PROVISIONED');
    sse jsonb := overrides->'SSESpecificationOverride';
    globals jsonb;
    locals jsonb;
    used text[];
BEGIN
    IF mode NOT IN ('PROVISIONED', 'PAY_PER_REQUEST') THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''billingModeOverride'' failed to satisfy constraint: Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]', mode));
    END IF;
    IF sse IS NOT NULL AND (jsonb_typeof(sse) <> 'object'
                            OR jsonb_typeof(sse->'Enabled') NOT IN ('boolean', 'null')
                            OR coalesce(sse->>'SSEType', 'KMS') NOT IN ('AES256', 'KMS')) THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''sSESpecificationOverride.sSEType'' failed to satisfy constraint: Member must satisfy enum value set: [AES256, KMS]',
            sse->>'SSEType'));
    END IF;
    globals := ddb.restored_indexes(source, overrides, 'Global', mode);
    locals := ddb.restored_indexes(source, overrides, 'Local', mode);
    SELECT array_agg(DISTINCT k->>'AttributeName') INTO used
    FROM jsonb_array_elements(source->'KeySchema' || coalesce((SELECT jsonb_agg(e) FROM jsonb_array_elements(globals || locals) i,
                                                                    jsonb_array_elements(i->'KeySchema') e), '[]')) k;
    RETURN jsonb_strip_nulls(jsonb_build_object(
        'TableName', target_table,
        'KeySchema', source->'KeySchema',
        'AttributeDefinitions', (SELECT jsonb_agg(d ORDER BY d->>'AttributeName') FROM jsonb_array_elements(source->'AttributeDefinitions') d
                                 WHERE d->>'AttributeName' = ANY (used)),
        'BillingMode', mode,
        'ProvisionedThroughput', CASE WHEN mode = 'PROVISIONED'
                                      THEN coalesce(overrides->'ProvisionedThroughputOverride',
                                                    (source->'ProvisionedThroughput') - 'NumberOfDecreasesToday')
                                      ELSE overrides->'ProvisionedThroughputOverride' END,
        'OnDemandThroughput', overrides->'OnDemandThroughputOverride',
        'GlobalSecondaryIndexes', nullif(globals, '[]'),
        'LocalSecondaryIndexes', nullif(locals, '[]')));
END $$;

-- Starts a restore (docs/backups.md, "Restores"): creates target_table,
-- CREATING, from source_description (a TableDescription as DescribeTable
-- gives it: KeySchema, AttributeDefinitions, BillingModeSummary,
-- ProvisionedThroughput, GlobalSecondaryIndexes, LocalSecondaryIndexes)
-- with overrides (RestoreTableFromBackup's and RestoreTableToPointInTime's
-- *Override members: the request itself will do), and starts the job that
-- writes SELECT item FROM items_function(items_argument) into it (natural
-- items, as ddb.put_item takes them; items_function takes one jsonb and
-- returns SETOF jsonb, and is called by the job with the privileges of the
-- caller) and then makes it ACTIVE.  restore_summary is the RestoreSummary
-- DescribeTable will show: SourceTableArn, RestoreDateTime (epoch
-- seconds), SourceBackupArn if any (and SourceHistory: the OID of the
-- point-in-time recovery history the items come from, which no
-- DeleteTable or trim removes meanwhile).  Returns the new table's
-- TableDescription.  TableAlreadyExistsException (YD023) or
-- TableInUseException (YD024) when the name is taken, LimitExceededException
-- when no background worker is free.  The caller authorizes: it checks
-- nothing but what CreateTable checks.
CREATE FUNCTION ddb.start_restore(target_table text, source_description jsonb, overrides jsonb,
                                  items_function regprocedure, items_argument jsonb,
                                  restore_summary jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    job integer;
BEGIN
    PERFORM ddb.check_name('targetTableName', target_table);
    IF NOT EXISTS (SELECT FROM pg_proc p WHERE p.oid = items_function AND p.pronargs = 1 AND p.proretset
                                         AND p.proargtypes[0] = 'jsonb'::regtype AND p.prorettype = 'jsonb'::regtype) THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('the items function of a restore takes one jsonb and returns SETOF jsonb, not %s', items_function);
    END IF;
    IF restore_summary->>'SourceTableArn' IS NULL OR jsonb_typeof(restore_summary->'RestoreDateTime') IS DISTINCT FROM 'number' THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'the restore summary of a restore has a SourceTableArn and a RestoreDateTime (epoch seconds)';
    END IF;
    -- one creation of a name at a time, as ddb.create_table takes it
    PERFORM ddb.lock_table_name(target_table);
    PERFORM ddb.refuse_restoring(target_table, 'YD024', 'Table is being restored: %s');
    IF EXISTS (SELECT FROM ddb.tables t WHERE t.table_name = target_table) THEN
        RAISE EXCEPTION USING ERRCODE = 'YD023', MESSAGE = 'Table already exists: ' || target_table;
    END IF;
    PERFORM ddb.api_create_table(ddb.restored_table_request(target_table, source_description, coalesce(overrides, '{}')));
    job := ddb.start_job('restore', jsonb_build_object('TableName', target_table, 'ItemsFunction', items_function::text,
                                                       'ItemsArgument', items_argument));
    PERFORM ddb.record_restore(target_table, job, restore_summary);
    RETURN ddb.describe_table(target_table) || ddb.restore_description(target_table);
END $$;

-- The restore job (a step of kind 'restore', as the restoring role): every
-- item, then the table ACTIVE, in one transaction (ddb.restore_items).
CREATE FUNCTION ddb.job_restore(job_id integer, spec jsonb, progress jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN jsonb_build_object('done', true, 'items', ddb.restore_items(
        spec->>'TableName', (spec->>'ItemsFunction')::regprocedure, spec->'ItemsArgument'));
END $$;

-- A failed restore's table goes (when it is still the one the job was filling).
CREATE FUNCTION ddb.job_restore_failed(job_id integer, spec jsonb, error text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM ddb.table_restores r
               WHERE r.table_name = spec->>'TableName' AND r.job_id = job_restore_failed.job_id AND r.in_progress) THEN
        PERFORM ddb.delete_table(spec->>'TableName');
    END IF;
END $$;

-- RestoreTableFromBackup: a new table from a backup, with DynamoDB's
-- overrides; takes CreateTable's privilege and the right to read the
-- backup (docs/security.md).
CREATE FUNCTION ddb.api_restore_table_from_backup(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    target text := request->>'TargetTableName';
    b ddb.backups;
BEGIN
    IF target IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''targetTableName'' failed to satisfy constraint: Member must not be null');
    END IF;
    PERFORM ddb.check_name('targetTableName', target);
    b := ddb.require_backup(request->>'BackupArn');
    PERFORM ddb.check_table_access(target, 'RestoreTableFromBackup', 'create');
    PERFORM ddb.require_backup_access(b, 'RestoreTableFromBackup', 'read');
    -- its relation held: no DeleteBackup meanwhile (and once this commits,
    -- the restore is in progress); a lock its reader may take, where a lock
    -- of the catalog's row is not
    EXECUTE format('LOCK TABLE ddb_backups.%I IN ACCESS SHARE MODE', b.relation_name);
    b := ddb.require_backup(b.backup_arn);
    RETURN jsonb_build_object('TableDescription', ddb.start_restore(
        target, b.description, request, 'ddb.backup_items(jsonb)'::regprocedure,
        jsonb_build_object('BackupArn', b.backup_arn),
        jsonb_build_object('SourceBackupArn', b.backup_arn, 'SourceTableArn', b.table_arn,
                           'RestoreDateTime', extract(epoch FROM b.created_at))));
END $$;


-- ===========================================================================
-- sql/exports.sql
-- ===========================================================================

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


-- ===========================================================================
-- sql/imports.sql
-- ===========================================================================

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


-- ===========================================================================
-- sql/models/underwriting.sql
-- ===========================================================================

-- W17: writes the audit item of a rulebook change (AFTER a write of a
-- RULEBOOK item): who (the setting underwriting.update_user, else the
-- session user), when, and a snapshot of every rulebook, in the same
-- transaction.
CREATE OR REPLACE FUNCTION underwriting.audit_rulebooks() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tbl text := TG_ARGV[0];
    who text := coalesce(nullif(current_setting('underwriting.update_user', true), ''), session_user::text);
    at timestamptz;
    snapshot jsonb;
BEGIN
    -- (its triggers fire for rulebook items only) rulebook changes of one environment are audited one transaction at a
    -- time, so that each snapshot holds every change committed before it
    PERFORM ddb.lock_table_audit(tbl);
    at := clock_timestamp();
    SELECT coalesce(jsonb_agg(i ORDER BY i ->> 'rulebook_id'), '[]') INTO snapshot
    FROM ddb.query(tbl, 'RULEBOOK') i;
    LOOP
        BEGIN
            PERFORM ddb.put_item(tbl, jsonb_build_object('PK', 'RULEBOOKCONFIGUPDATE',
                'SK', 'USER#' || to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '#' || who,
                'item_type', 'rulebook_update', 'update_user', who, 'update_time', underwriting.rfc3339(at),
                'rulebooks', snapshot), condition => 'attribute_not_exists(SK)');
            RETURN NULL;
        EXCEPTION WHEN SQLSTATE 'YD002' THEN
            at := at + interval '1 microsecond';   -- two changes in one microsecond: the next one
        END;
    END LOOP;
END $$;


-- ===========================================================================
-- sql/models/user_service.sql
-- ===========================================================================

-- S8 at commit, for the user a written item belongs to: with a profile,
-- exactly one primary email, verified, and the profile's email is it;
-- without one, no email records either.  Run by the trigger check_user
-- (ddb.check_at_commit, src/table/commit_checks.c) once per user key.
CREATE FUNCTION user_service.check_user(user_key ddb.ddb_key) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    profile jsonb;
    primaries jsonb[];
    emails integer;
BEGIN
    -- one statement, so one snapshot: the profile and the emails as one committed state shows them
    SELECT (SELECT t.item FROM user_service."UserServiceTable" t
            WHERE t.pk = user_key AND t.sk = 'PROFILE'::ddb.ddb_key),
           count(*), array_agg(e.item) FILTER (WHERE (e.item ->> 'isPrimary')::boolean)
    INTO profile, emails, primaries
    FROM user_service."UserServiceTable" e WHERE e.pk = user_key AND e.sk ^@ 'EMAIL#'::ddb.ddb_key;
    IF profile IS NULL THEN
        IF emails > 0 THEN
            RAISE EXCEPTION USING ERRCODE = 'check_violation',
                MESSAGE = format('S8: %s has email records but no profile', user_key);
        END IF;
        RETURN;
    END IF;
    IF coalesce(cardinality(primaries), 0) <> 1 THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation',
            MESSAGE = format('S8: user %s must have exactly one primary email, not %s',
                             profile ->> 'userId', coalesce(cardinality(primaries), 0));
    END IF;
    IF NOT (primaries[1] ->> 'isVerified')::boolean THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation',
            MESSAGE = format('S8: the primary email %s of user %s is not verified',
                             primaries[1] ->> 'email', profile ->> 'userId');
    END IF;
    IF profile ->> 'email' IS DISTINCT FROM primaries[1] ->> 'email' THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation',
            MESSAGE = format('S8: the profile of user %s names %s, its primary email is %s',
                             profile ->> 'userId', profile ->> 'email', primaries[1] ->> 'email');
    END IF;
END $$;

-- 0.1's deferred trigger check_user and its function give way to 0.2's.
DROP TRIGGER check_user ON user_service."UserServiceTable";
DROP FUNCTION user_service.check_user();
CREATE TRIGGER check_user AFTER INSERT OR UPDATE OR DELETE ON user_service."UserServiceTable"
    FOR EACH ROW EXECUTE FUNCTION ddb.check_at_commit('UserServiceTable', 'user_service.check_user(ddb.ddb_key)');


-- ===========================================================================
-- What an installed 0.1 holds, rewritten for 0.2 (with 0.2's functions)
-- ===========================================================================

-- A 0.1 access key limited to some tables (its column tables) becomes the
-- key of a role of its own, ddb_key_<id> (NOLOGIN), given those tables
-- read-write; a key for every table keeps the gateway's own privileges.
DO $$
DECLARE
    k record;
    r name;
BEGIN
    FOR k IN SELECT access_key_id, tables FROM ddb.access_keys WHERE tables IS NOT NULL LOOP
        r := ('ddb_key_' || lower(k.access_key_id))::name;
        IF to_regrole(quote_ident(r)) IS NULL THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN', r);
            RAISE NOTICE 'access key % now acts as the new role %', k.access_key_id, r;
        END IF;
        PERFORM ddb.grant_tables(r, t, false) FROM unnest(k.tables) t WHERE t ~ '^[a-zA-Z0-9_.-]{1,255}$';
    END LOOP;
END $$;
ALTER TABLE ddb.access_keys RENAME COLUMN tables TO role_name;
ALTER TABLE ddb.access_keys ALTER COLUMN role_name TYPE name
    USING CASE WHEN role_name IS NOT NULL THEN ('ddb_key_' || lower(access_key_id))::name END;

-- 0.1 deferred the trigger ddb_stream of a table with a stream; 0.2
-- collects its records for the commit: each such table gets it anew.
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT tb.table_name, tr.tgrelid::regclass AS relation
             FROM pg_catalog.pg_trigger tr
             JOIN ddb.tables tb ON format('%I.%I', tb.schema_name, tb.relation_name)::regclass = tr.tgrelid
             WHERE tr.tgname = 'ddb_stream' AND tr.tgparentid = 0 LOOP
        EXECUTE format('DROP TRIGGER ddb_stream ON %s', t.relation);
        PERFORM ddb.attach_trigger(t.table_name, 'ddb_stream');
    END LOOP;
END $$;
