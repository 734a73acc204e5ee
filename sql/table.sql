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

CREATE TABLE ddb.tables (
    table_name text PRIMARY KEY,
    schema_name name NOT NULL,
    relation_name name NOT NULL,
    hash_key text NOT NULL,
    range_key text,
    attribute_types jsonb NOT NULL,
    partitions integer NOT NULL,
    ttl_attribute text,
    model text,                 -- the model that installed it with the extension, or NULL
    tags jsonb NOT NULL DEFAULT '{}',   -- TagResource's tags, key to value
    billing_mode text NOT NULL DEFAULT 'PAY_PER_REQUEST' CHECK (billing_mode IN ('PAY_PER_REQUEST', 'PROVISIONED')),
    read_capacity integer NOT NULL DEFAULT 0,   -- ProvisionedThroughput, as declared (nothing is throttled)
    write_capacity integer NOT NULL DEFAULT 0,
    stream_view_type text CHECK (stream_view_type IN ('NEW_IMAGE', 'OLD_IMAGE', 'NEW_AND_OLD_IMAGES', 'KEYS_ONLY')),
    stream_label text,          -- the latest stream's label (sql/streams.sql); its view type is NULL once disabled
    created_at timestamptz NOT NULL DEFAULT now(),
    -- the settings of sql/table_settings.sql (docs/tables.md, "Table settings")
    deletion_protection boolean NOT NULL DEFAULT false,     -- DeleteTable and ddb.delete_table refuse the table
    table_class text CHECK (table_class IN ('STANDARD', 'STANDARD_INFREQUENT_ACCESS')),   -- NULL: never given (STANDARD)
    table_class_updated_at timestamptz,                     -- when UpdateTable last changed the class
    max_read_request_units bigint CHECK (max_read_request_units >= 1),    -- OnDemandThroughput; NULL: no maximum
    max_write_request_units bigint CHECK (max_write_request_units >= 1),
    warm_read_units bigint,     -- WarmThroughput asked for or reached; NULL: no more than the base
    warm_write_units bigint,
    UNIQUE (schema_name, relation_name),
    CHECK (partitions >= 0)
);
COMMENT ON TABLE ddb.tables IS 'DynamoDB tables: name, relation, key schema, attribute types, partitions, TTL';

CREATE TABLE ddb.indexes (
    table_name text NOT NULL REFERENCES ddb.tables ON DELETE CASCADE,
    index_name text NOT NULL,
    relation_name name NOT NULL,
    hash_key text NOT NULL,
    range_key text,
    projection_type text NOT NULL CHECK (projection_type IN ('KEYS_ONLY', 'INCLUDE', 'ALL')),
    non_key_attributes text[],
    local boolean NOT NULL DEFAULT false,   -- a local secondary index (kept as a GSI on the table's hash key)
    created_at timestamptz NOT NULL DEFAULT now(),
    -- a multi-attribute key: the partition key's and the sort key's attributes after the first
    extra_hash_keys text[] CHECK (cardinality(extra_hash_keys) BETWEEN 1 AND 3),
    extra_range_keys text[] CHECK (cardinality(extra_range_keys) BETWEEN 1 AND 3),
    -- a global index's own ProvisionedThroughput, as declared (0 on an on-demand table)
    read_capacity integer NOT NULL DEFAULT 0,
    write_capacity integer NOT NULL DEFAULT 0,
    -- a global index's OnDemandThroughput (NULL: no maximum) and WarmThroughput, as the table's
    max_read_request_units bigint CHECK (max_read_request_units >= 1),
    max_write_request_units bigint CHECK (max_write_request_units >= 1),
    warm_read_units bigint,
    warm_write_units bigint,
    PRIMARY KEY (table_name, index_name),
    CHECK (extra_range_keys IS NULL OR range_key IS NOT NULL)
);
COMMENT ON TABLE ddb.indexes IS 'Global secondary indexes: key schema and projection';

-- the rows of model tables come back with CREATE EXTENSION, not from the dump
SELECT pg_catalog.pg_extension_config_dump('ddb.tables', 'WHERE model IS NULL');
SELECT pg_catalog.pg_extension_config_dump('ddb.indexes',
    'WHERE table_name OPERATOR(pg_catalog.=) ANY (SELECT table_name FROM ddb.tables WHERE model IS NULL)');

-- A change to the catalog makes every backend reload the definition of the
-- table it is about (of every table, on TRUNCATE).
CREATE FUNCTION ddb.catalog_changed() RETURNS trigger
    AS 'MODULE_PATHNAME', 'ddb_catalog_changed' LANGUAGE C;
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
CREATE TRIGGER catalog_changed AFTER INSERT OR UPDATE OR DELETE ON ddb.tables
    FOR EACH ROW EXECUTE FUNCTION ddb.catalog_changed();
CREATE TRIGGER catalog_truncated AFTER TRUNCATE ON ddb.tables
    FOR EACH STATEMENT EXECUTE FUNCTION ddb.catalog_changed();
CREATE TRIGGER catalog_changed AFTER INSERT OR UPDATE OR DELETE ON ddb.indexes
    FOR EACH ROW EXECUTE FUNCTION ddb.catalog_changed();
CREATE TRIGGER catalog_truncated AFTER TRUNCATE ON ddb.indexes
    FOR EACH STATEMENT EXECUTE FUNCTION ddb.catalog_changed();

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

-- A relation name for a DynamoDB name: itself when it fits in 63 bytes,
-- otherwise a prefix and a digest (DynamoDB names reach 255 characters).
CREATE FUNCTION ddb.relation_name(name text) RETURNS name
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN octet_length(name) <= 63 THEN name::name
            ELSE (left(name, 40) || '~' || left(md5(name), 16))::name END;

-- Checks a DynamoDB table or index name: 3 to 255 characters of
-- [a-zA-Z0-9_.-], each broken constraint reported as DynamoDB does.
CREATE FUNCTION ddb.check_name(kind text, name text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    broken text[] := '{}';
BEGIN
    IF name IS NULL THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value null at ''%s'' failed to satisfy constraint: Member must not be null', kind));
    END IF;
    IF length(name) < 3 THEN
        broken := broken || 'Member must have length greater than or equal to 3'::text;
    END IF;
    IF length(name) > 255 THEN
        broken := broken || 'Member must have length less than or equal to 255'::text;
    END IF;
    IF name !~ '^[a-zA-Z0-9_.-]+$' THEN
        broken := broken || 'Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+'::text;
    END IF;
    IF cardinality(broken) > 0 THEN
        PERFORM ddb.validation_error(format('%s validation error%s detected: %s', cardinality(broken),
            CASE WHEN cardinality(broken) > 1 THEN 's' ELSE '' END,
            (SELECT string_agg(format('Value ''%s'' at ''%s'' failed to satisfy constraint: %s', name, kind, b), '; ')
             FROM unnest(broken) b)));
    END IF;
END $$;

-- Checks a key attribute type; member is where the request gave it
-- ('attributeDefinitions.1.member.attributeType'), NULL for a SQL call.
CREATE FUNCTION ddb.check_key_type(attribute text, key_type text, member text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF key_type IS NULL OR key_type NOT IN ('S', 'N', 'B') THEN
        IF member IS NOT NULL THEN
            PERFORM ddb.validation_error(format(
                '1 validation error detected: Value ''%s'' at ''%s'' failed to satisfy constraint: '
                'Member must satisfy enum value set: [B, N, S]', key_type, member));
        END IF;
        PERFORM ddb.validation_error(format(
            'Member must satisfy enum value set: [B, N, S] (attribute %s has type %s)', attribute, key_type));
    END IF;
END $$;

-- Creates the hash partitions of a relation (none when partitions = 0).
CREATE FUNCTION ddb.create_partitions(schema_name name, relation_name name, partitions integer) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    FOR p IN 0 .. partitions - 1 LOOP
        EXECUTE format('CREATE TABLE %I.%I PARTITION OF %I.%I FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
                       schema_name, ddb.relation_name(relation_name || '#' || p),
                       schema_name, relation_name, partitions, p);
    END LOOP;
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
CREATE FUNCTION ddb.create_table(
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

-- Marks a table as part of a model installed with the extension (model
-- scripts only): CREATE EXTENSION creates it, pg_dump dumps its items (its
-- GSIs are rebuilt from them by the trigger on restore), and
-- ddb.delete_table refuses it.
CREATE FUNCTION ddb.own_model_table(model text, table_name text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
BEGIN
    UPDATE ddb.tables SET model = own_model_table.model
    WHERE tables.table_name = own_model_table.table_name RETURNING * INTO t;
    PERFORM pg_catalog.pg_extension_config_dump(format('%I.%I', t.schema_name, t.relation_name)::regclass, '');
END $$;

-- The catalog rows of a table (its stream records, its row and so its
-- indexes'), deleted as the catalog's owner for the owner of its relation,
-- which ddb.delete_table drops next (in the same transaction); the rows of
-- a table whose relation is gone are the catalog owner's to delete.
CREATE FUNCTION ddb.forget_table(table_name text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_forget_table' LANGUAGE C VOLATILE STRICT;

-- Drops a table, its indexes and its catalog entries; a table with
-- deletion protection on is refused, as DeleteTable refuses it.
CREATE FUNCTION ddb.delete_table(table_name text) RETURNS void
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
