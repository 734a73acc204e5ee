-- ddb_model 0.1 — install script.
\echo Use "CREATE EXTENSION ddb_model" to load this file. \quit

-- ---------------------------------------------------------------------------
-- The key type: one DynamoDB key value, S, N or B (docs/key-type.md)
-- ---------------------------------------------------------------------------

CREATE TYPE ddb.ddb_key;

CREATE FUNCTION ddb.ddb_key_in(cstring) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_out(ddb.ddb_key) RETURNS cstring
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_recv(internal) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_send(ddb.ddb_key) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE ddb.ddb_key (
    INPUT = ddb.ddb_key_in,
    OUTPUT = ddb.ddb_key_out,
    RECEIVE = ddb.ddb_key_recv,
    SEND = ddb.ddb_key_send,
    INTERNALLENGTH = VARIABLE,
    STORAGE = extended,
    CATEGORY = 'U'
);
COMMENT ON TYPE ddb.ddb_key IS
    'A DynamoDB key value (S, N or B) in DynamoDB order; text form: plain = S, \d<number> = N, \x<hex> = B';

-- Casts.  From text always gives an S key (the text is the string); the
-- literal form with \d and \x is only read by the type's input function.
CREATE FUNCTION ddb.ddb_key(text) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_from_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key(numeric) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_from_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key(bytea) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_from_bytea' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key(integer) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_from_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key(bigint) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_from_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.text(ddb.ddb_key) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_key_to_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.numeric(ddb.ddb_key) RETURNS numeric
    AS 'MODULE_PATHNAME', 'ddb_key_to_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.bytea(ddb.ddb_key) RETURNS bytea
    AS 'MODULE_PATHNAME', 'ddb_key_to_bytea' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE CAST (text AS ddb.ddb_key) WITH FUNCTION ddb.ddb_key(text) AS IMPLICIT;
CREATE CAST (numeric AS ddb.ddb_key) WITH FUNCTION ddb.ddb_key(numeric) AS IMPLICIT;
CREATE CAST (integer AS ddb.ddb_key) WITH FUNCTION ddb.ddb_key(integer) AS IMPLICIT;
CREATE CAST (bigint AS ddb.ddb_key) WITH FUNCTION ddb.ddb_key(bigint) AS IMPLICIT;
CREATE CAST (bytea AS ddb.ddb_key) WITH FUNCTION ddb.ddb_key(bytea) AS IMPLICIT;
CREATE CAST (ddb.ddb_key AS text) WITH FUNCTION ddb.text(ddb.ddb_key);
CREATE CAST (ddb.ddb_key AS numeric) WITH FUNCTION ddb.numeric(ddb.ddb_key);
CREATE CAST (ddb.ddb_key AS bytea) WITH FUNCTION ddb.bytea(ddb.ddb_key);

-- Type and segments.
CREATE FUNCTION ddb.key_type(key ddb.ddb_key) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_key_type' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.key_type(ddb.ddb_key) IS 'The DynamoDB type of a key: S, N or B';

CREATE FUNCTION ddb.key(VARIADIC segments text[]) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_from_segments' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.key(text[]) IS
    'An S key from its segments joined by #: ddb.key(''USER'', ''abc'') = ''USER#abc''; a segment may not contain #';

CREATE FUNCTION ddb.segment(key ddb.ddb_key, n integer) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_key_segment' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.segment(ddb.ddb_key, integer) IS
    'Segment n of an S key (1-based; negative counts from the end), NULL when there is none';

CREATE FUNCTION ddb.segment_count(key ddb.ddb_key) RETURNS integer
    AS 'MODULE_PATHNAME', 'ddb_key_segment_count' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.segment_count(ddb.ddb_key) IS 'How many #-separated segments an S key has';

-- ---------------------------------------------------------------------------
-- Comparison, in DynamoDB order (N < S < B across types)
--
-- The operators live in pg_catalog, like the built-in types' operators, so
-- that WHERE pk = 'USER#1' works whatever the search_path; every other
-- object is in schema ddb.
-- ---------------------------------------------------------------------------

CREATE FUNCTION ddb.ddb_key_cmp(ddb.ddb_key, ddb.ddb_key) RETURNS integer
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_lt(ddb.ddb_key, ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_le(ddb.ddb_key, ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_eq(ddb.ddb_key, ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_ne(ddb.ddb_key, ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_ge(ddb.ddb_key, ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_gt(ddb.ddb_key, ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_sortsupport(internal) RETURNS void
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_hash(ddb.ddb_key) RETURNS integer
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_hash_extended(ddb.ddb_key, bigint) RETURNS bigint
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR pg_catalog.< (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key, FUNCTION = ddb.ddb_key_lt,
    COMMUTATOR = OPERATOR(pg_catalog.>), NEGATOR = OPERATOR(pg_catalog.>=),
    RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR pg_catalog.<= (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key, FUNCTION = ddb.ddb_key_le,
    COMMUTATOR = OPERATOR(pg_catalog.>=), NEGATOR = OPERATOR(pg_catalog.>),
    RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR pg_catalog.= (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key, FUNCTION = ddb.ddb_key_eq,
    COMMUTATOR = OPERATOR(pg_catalog.=), NEGATOR = OPERATOR(pg_catalog.<>),
    RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR pg_catalog.<> (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key, FUNCTION = ddb.ddb_key_ne,
    COMMUTATOR = OPERATOR(pg_catalog.<>), NEGATOR = OPERATOR(pg_catalog.=),
    RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR pg_catalog.>= (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key, FUNCTION = ddb.ddb_key_ge,
    COMMUTATOR = OPERATOR(pg_catalog.<=), NEGATOR = OPERATOR(pg_catalog.<),
    RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR pg_catalog.> (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key, FUNCTION = ddb.ddb_key_gt,
    COMMUTATOR = OPERATOR(pg_catalog.<), NEGATOR = OPERATOR(pg_catalog.<=),
    RESTRICT = scalargtsel, JOIN = scalargtjoinsel);

-- ---------------------------------------------------------------------------
-- Prefixes: ^@ is DynamoDB's begins_with, <@ the segment-aware prefix
-- ---------------------------------------------------------------------------

CREATE FUNCTION ddb.begins_with_support(internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'ddb_key_begins_with_support' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.begins_with_segments_support(internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'ddb_key_begins_with_segments_support' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ddb.begins_with(key ddb.ddb_key, prefix ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME', 'ddb_key_begins_with' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
    SUPPORT ddb.begins_with_support;
COMMENT ON FUNCTION ddb.begins_with(ddb.ddb_key, ddb.ddb_key) IS
    'DynamoDB begins_with: the key is of the prefix''s type and its bytes start with the prefix''s';

CREATE FUNCTION ddb.begins_with_segments(key ddb.ddb_key, prefix ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME', 'ddb_key_begins_with_segments' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
    SUPPORT ddb.begins_with_segments_support;
COMMENT ON FUNCTION ddb.begins_with_segments(ddb.ddb_key, ddb.ddb_key) IS
    'Segment-aware prefix: the key equals the prefix or continues it after a # (USER#1 does not cover USER#10)';

CREATE FUNCTION ddb.prefix_upper_bound(prefix ddb.ddb_key) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_prefix_upper_bound' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.prefix_upper_bound(ddb.ddb_key) IS
    'Exclusive upper bound of the keys that begin with prefix (index range scans)';
CREATE FUNCTION ddb.segment_prefix_upper_bound(prefix ddb.ddb_key) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_segment_prefix_upper_bound' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.segment_prefix_upper_bound(ddb.ddb_key) IS
    'Exclusive upper bound of the keys that lie under prefix (index range scans)';

CREATE OPERATOR pg_catalog.^@ (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key,
    FUNCTION = ddb.begins_with, RESTRICT = prefixsel, JOIN = prefixjoinsel);
CREATE OPERATOR pg_catalog.<@ (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key,
    FUNCTION = ddb.begins_with_segments, RESTRICT = prefixsel, JOIN = prefixjoinsel);

-- ---------------------------------------------------------------------------
-- Operator classes
-- ---------------------------------------------------------------------------

CREATE OPERATOR CLASS ddb.ddb_key_ops DEFAULT FOR TYPE ddb.ddb_key USING btree AS
    OPERATOR 1 pg_catalog.<,
    OPERATOR 2 pg_catalog.<=,
    OPERATOR 3 pg_catalog.=,
    OPERATOR 4 pg_catalog.>=,
    OPERATOR 5 pg_catalog.>,
    FUNCTION 1 ddb.ddb_key_cmp(ddb.ddb_key, ddb.ddb_key),
    FUNCTION 2 ddb.ddb_key_sortsupport(internal),
    FUNCTION 4 btequalimage(oid);

CREATE OPERATOR CLASS ddb.ddb_key_ops DEFAULT FOR TYPE ddb.ddb_key USING hash AS
    OPERATOR 1 pg_catalog.=,
    FUNCTION 1 ddb.ddb_key_hash(ddb.ddb_key),
    FUNCTION 2 ddb.ddb_key_hash_extended(ddb.ddb_key, bigint);

CREATE FUNCTION ddb.ddb_key_gist_consistent(internal, ddb.ddb_key, smallint, oid, internal) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_gist_union(internal, internal) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_gist_penalty(internal, internal, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_gist_picksplit(internal, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_gist_same(ddb.ddb_key, ddb.ddb_key, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR CLASS ddb.ddb_key_ops DEFAULT FOR TYPE ddb.ddb_key USING gist AS
    OPERATOR 1 pg_catalog.<,
    OPERATOR 2 pg_catalog.<=,
    OPERATOR 3 pg_catalog.=,
    OPERATOR 4 pg_catalog.>=,
    OPERATOR 5 pg_catalog.>,
    OPERATOR 6 pg_catalog.<>,
    OPERATOR 7 pg_catalog.^@,
    OPERATOR 8 pg_catalog.<@,
    FUNCTION 1 ddb.ddb_key_gist_consistent(internal, ddb.ddb_key, smallint, oid, internal),
    FUNCTION 2 ddb.ddb_key_gist_union(internal, internal),
    FUNCTION 5 ddb.ddb_key_gist_penalty(internal, internal, internal),
    FUNCTION 6 ddb.ddb_key_gist_picksplit(internal, internal),
    FUNCTION 7 ddb.ddb_key_gist_same(ddb.ddb_key, ddb.ddb_key, internal),
    FUNCTION 11 ddb.ddb_key_sortsupport(internal);

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
    PRIMARY KEY (table_name, index_name)
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
CREATE TRIGGER catalog_changed AFTER INSERT OR UPDATE OR DELETE ON ddb.tables
    FOR EACH ROW EXECUTE FUNCTION ddb.catalog_changed();
CREATE TRIGGER catalog_truncated AFTER TRUNCATE ON ddb.tables
    FOR EACH STATEMENT EXECUTE FUNCTION ddb.catalog_changed();
CREATE TRIGGER catalog_changed AFTER INSERT OR UPDATE OR DELETE ON ddb.indexes
    FOR EACH ROW EXECUTE FUNCTION ddb.catalog_changed();
CREATE TRIGGER catalog_truncated AFTER TRUNCATE ON ddb.indexes
    FOR EACH STATEMENT EXECUTE FUNCTION ddb.catalog_changed();

-- Keeps the GSIs of a table (argument: its DynamoDB name) in step with its items.
CREATE FUNCTION ddb.gsi_maintain() RETURNS trigger
    AS 'MODULE_PATHNAME', 'ddb_gsi_maintain' LANGUAGE C;

-- Empties the indexes of a table (argument: its DynamoDB name) when the
-- table is truncated: TRUNCATE fires no row trigger, so without this the
-- entries of the removed items would stay behind in every index.
CREATE FUNCTION ddb.gsi_truncate() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT t.schema_name, i.relation_name
             FROM ddb.tables t JOIN ddb.indexes i ON i.table_name OPERATOR(pg_catalog.=) t.table_name
             WHERE t.table_name OPERATOR(pg_catalog.=) TG_ARGV[0] LOOP
        EXECUTE format('TRUNCATE %I.%I', r.schema_name, r.relation_name);
    END LOOP;
    RETURN NULL;
END $$;

-- A relation name for a DynamoDB name: itself when it fits in 63 bytes,
-- otherwise a prefix and a digest (DynamoDB names reach 255 characters).
CREATE FUNCTION ddb.relation_name(name text) RETURNS name
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN octet_length(name) <= 63 THEN name::name
            ELSE (left(name, 40) || '~' || left(md5(name), 16))::name END;

-- TTL visibility as every read of the extension applies it (docs/ttl.md),
-- for views and plain SELECTs: no expiry, an expiry still ahead, or one
-- DynamoDB ignores because it is more than five years past.
CREATE FUNCTION ddb.ttl_visible(expires_at bigint) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
RETURN expires_at IS NULL
    OR expires_at OPERATOR(pg_catalog.>) pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.statement_timestamp()))::bigint
    OR expires_at OPERATOR(pg_catalog.<=) (pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.statement_timestamp()))::bigint
                                           OPERATOR(pg_catalog.-) 157680000);

-- A timestamp as DynamoDB designs write them: ISO 8601 in UTC with
-- milliseconds (2026-03-17T10:30:00.000Z), which sorts as it reads.
CREATE FUNCTION ddb.iso8601(ts timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN pg_catalog.to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');

-- Raises invalid_parameter_value (22023): the models' error for bad input.
CREATE FUNCTION ddb.invalid_parameter(message text) RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value', MESSAGE = message;
END $$;

-- Raises a DynamoDB ValidationException (SQLSTATE YD001).
CREATE FUNCTION ddb.validation_error(message text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'YD001', MESSAGE = message;
END $$;

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

-- Adds a global secondary index to a table (with local, a local one: the
-- table's hash key and another range key); existing items are indexed.
CREATE FUNCTION ddb.create_index(
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
    SELECT * INTO t FROM ddb.tables WHERE tables.table_name = create_index.table_name FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004',
            MESSAGE = 'Requested resource not found: Table: ' || table_name || ' not found';
    END IF;
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

-- The tables DROP EXTENSION would destroy items of: every table users
-- created, and the model tables that hold items.
CREATE FUNCTION ddb.tables_blocking_drop() RETURNS SETOF text
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
END $$;

-- Drops a table, its indexes and its catalog entries.
CREATE FUNCTION ddb.delete_table(table_name text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    i record;
BEGIN
    SELECT * INTO t FROM ddb.tables WHERE tables.table_name = delete_table.table_name FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004',
            MESSAGE = 'Requested resource not found: Table: ' || table_name || ' not found';
    END IF;
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

-- ---------------------------------------------------------------------------
-- Items (docs/items.md): natural jsonb in, natural jsonb out
-- ---------------------------------------------------------------------------

-- Expressions (docs/expressions.md) are optional: condition, update, filter
-- and projection take DynamoDB's expression language; names maps #name
-- placeholders to attribute names and vals maps :value placeholders to
-- natural values, e.g. vals => '{":one": 1}'.

CREATE FUNCTION ddb.put_item(table_name text, item jsonb, return_old boolean DEFAULT false,
                             condition text DEFAULT NULL, names jsonb DEFAULT NULL,
                             vals jsonb DEFAULT NULL)
RETURNS jsonb AS 'MODULE_PATHNAME', 'ddb_put_item' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION ddb.put_item(text, jsonb, boolean, text, jsonb, jsonb) IS
    'PutItem: writes (or replaces) an item if the condition holds; returns the replaced item when return_old';

CREATE FUNCTION ddb.get_item(table_name text, pk ddb.ddb_key, sk ddb.ddb_key DEFAULT NULL,
                             projection text DEFAULT NULL, names jsonb DEFAULT NULL)
RETURNS jsonb AS 'MODULE_PATHNAME', 'ddb_get_item' LANGUAGE C STABLE;
COMMENT ON FUNCTION ddb.get_item(text, ddb.ddb_key, ddb.ddb_key, text, jsonb) IS
    'GetItem: the item with this key (projected), or NULL (expired items are never returned)';

CREATE FUNCTION ddb.update_item(table_name text, pk ddb.ddb_key, sk ddb.ddb_key DEFAULT NULL,
                                "update" text DEFAULT NULL, condition text DEFAULT NULL,
                                names jsonb DEFAULT NULL, vals jsonb DEFAULT NULL,
                                return_values text DEFAULT 'ALL_NEW')
RETURNS jsonb AS 'MODULE_PATHNAME', 'ddb_update_item' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION ddb.update_item(text, ddb.ddb_key, ddb.ddb_key, text, text, jsonb, jsonb, text) IS
    'UpdateItem: applies an update expression (creating the item if absent) if the condition holds; '
    'returns what return_values names (NONE, ALL_OLD, UPDATED_OLD, ALL_NEW, UPDATED_NEW)';

CREATE FUNCTION ddb.delete_item(table_name text, pk ddb.ddb_key, sk ddb.ddb_key DEFAULT NULL,
                                condition text DEFAULT NULL, names jsonb DEFAULT NULL,
                                vals jsonb DEFAULT NULL)
RETURNS jsonb AS 'MODULE_PATHNAME', 'ddb_delete_item' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION ddb.delete_item(text, ddb.ddb_key, ddb.ddb_key, text, jsonb, jsonb) IS
    'DeleteItem: deletes the item with this key if the condition holds and returns it, or NULL';

CREATE FUNCTION ddb.query(table_name text, pk ddb.ddb_key, sk_condition text DEFAULT NULL,
                          sk ddb.ddb_key DEFAULT NULL, sk_end ddb.ddb_key DEFAULT NULL,
                          index_name text DEFAULT NULL, ascending boolean DEFAULT true,
                          max_items integer DEFAULT NULL, filter text DEFAULT NULL,
                          projection text DEFAULT NULL, names jsonb DEFAULT NULL,
                          vals jsonb DEFAULT NULL)
RETURNS SETOF jsonb AS 'MODULE_PATHNAME', 'ddb_query' LANGUAGE C STABLE;
COMMENT ON FUNCTION ddb.query(text, ddb.ddb_key, text, ddb.ddb_key, ddb.ddb_key, text, boolean, integer,
                              text, text, jsonb, jsonb) IS
    'Query: the items of one partition key (of the table or of index_name) in sort key order; '
    'sk_condition is =, <, <=, >, >=, between (sk .. sk_end), begins_with or under (segment prefix); '
    'max_items counts the items returned after the filter';

CREATE FUNCTION ddb.scan(table_name text, index_name text DEFAULT NULL, max_items integer DEFAULT NULL,
                         filter text DEFAULT NULL, projection text DEFAULT NULL,
                         names jsonb DEFAULT NULL, vals jsonb DEFAULT NULL)
RETURNS SETOF jsonb AS 'MODULE_PATHNAME', 'ddb_scan' LANGUAGE C STABLE;
COMMENT ON FUNCTION ddb.scan(text, text, integer, text, text, jsonb, jsonb) IS
    'Scan: every item of a table or index (kept by the filter, projected), in key order';

-- ---------------------------------------------------------------------------
-- TTL (docs/ttl.md)
-- ---------------------------------------------------------------------------

CREATE FUNCTION ddb.from_dynamodb(item jsonb) RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_from_dynamodb' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.from_dynamodb(jsonb) IS
    'A DynamoDB-JSON item ({"a": {"S": "x"}}) as a natural item ({"a": "x"})';

CREATE FUNCTION ddb.to_dynamodb(item jsonb) RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_to_dynamodb' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.to_dynamodb(jsonb) IS
    'A natural item as DynamoDB JSON: the twin of ddb.from_dynamodb';

CREATE FUNCTION ddb.item_expiry(table_name text, item jsonb) RETURNS bigint
    AS 'MODULE_PATHNAME', 'ddb_item_expiry' LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION ddb.item_expiry(text, jsonb) IS
    'The TTL (epoch seconds) the table reads from an item: its TTL attribute when that is a number, else NULL';

-- UpdateTimeToLive: enables TTL on an attribute, or disables it.
CREATE FUNCTION ddb.update_time_to_live(table_name text, attribute_name text, enabled boolean DEFAULT true)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
BEGIN
    SELECT * INTO t FROM ddb.tables WHERE tables.table_name = update_time_to_live.table_name FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004',
            MESSAGE = 'Requested resource not found: Table: ' || table_name || ' not found';
    END IF;
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
CREATE FUNCTION ddb.expire(table_name text, batch_size integer DEFAULT 1000) RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    now_epoch bigint := floor(extract(epoch FROM statement_timestamp()))::bigint;  -- whole seconds passed, as the readers count
    deleted bigint;
BEGIN
    SELECT * INTO t FROM ddb.tables WHERE tables.table_name = expire.table_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004',
            MESSAGE = 'Requested resource not found: Table: ' || table_name || ' not found';
    END IF;
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

-- ---------------------------------------------------------------------------
-- Consistency of the GSIs
-- ---------------------------------------------------------------------------

CREATE FUNCTION ddb.index_entry(table_name text, index_name text, item jsonb,
                                OUT gpk ddb.ddb_key, OUT gsk ddb.ddb_key, OUT item jsonb)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'ddb_index_entry' LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION ddb.index_entry(text, text, jsonb) IS
    'The entry a GSI should hold for an item (no row when the item lacks the index keys)';

-- Every difference between a table's items and its GSIs: entries missing,
-- entries that should not be there, and entries whose projection or TTL differs.
CREATE FUNCTION ddb.verify_gsi(table_name text)
RETURNS TABLE (index_name text, problem text, pk ddb.ddb_key, sk ddb.ddb_key, gpk ddb.ddb_key, gsk ddb.ddb_key)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    i ddb.indexes;
BEGIN
    SELECT * INTO t FROM ddb.tables WHERE tables.table_name = verify_gsi.table_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004',
            MESSAGE = 'Requested resource not found: Table: ' || table_name || ' not found';
    END IF;
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

-- ---------------------------------------------------------------------------
-- RETAIN: DROP EXTENSION refuses while DynamoDB tables hold items
-- ---------------------------------------------------------------------------

CREATE FUNCTION ddb.guard_drop_extension() RETURNS event_trigger
    AS 'MODULE_PATHNAME', 'ddb_guard_drop_extension' LANGUAGE C;
CREATE EVENT TRIGGER ddb_guard_drop_extension ON ddl_command_start
    WHEN TAG IN ('DROP EXTENSION') EXECUTE FUNCTION ddb.guard_drop_extension();

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

-- A table's TableId, as DescribeTable gives it.
CREATE FUNCTION ddb.table_id(t ddb.tables) RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN md5(t.table_name || t.created_at::text)::uuid;

-- A KeySchema as DynamoDB describes one: the HASH element, then the RANGE one if any.
CREATE FUNCTION ddb.key_schema(hash_key text, range_key text) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN jsonb_build_array(jsonb_build_object('AttributeName', hash_key, 'KeyType', 'HASH'))
       || CASE WHEN range_key IS NOT NULL
               THEN jsonb_build_array(jsonb_build_object('AttributeName', range_key, 'KeyType', 'RANGE'))
               ELSE '[]'::jsonb END;

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
    SELECT * INTO t FROM ddb.tables WHERE tables.table_name = describe_table.table_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004',
            MESSAGE = 'Requested resource not found: Table: ' || table_name || ' not found';
    END IF;
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

-- Reads a KeySchema: (hash attribute, range attribute or NULL), with DynamoDB's checks.
CREATE FUNCTION ddb.read_key_schema(key_schema jsonb, member text, OUT hash_key text, OUT range_key text)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e jsonb;
BEGIN
    IF key_schema IS NULL OR jsonb_typeof(key_schema) = 'null' THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value null at ''%s'' failed to satisfy constraint: Member must not be null', member));
    END IF;
    IF jsonb_typeof(key_schema) <> 'array' THEN
        PERFORM ddb.validation_error(format(
            'Unexpected value type in payload for %s: expected a list', member));
    END IF;
    IF jsonb_array_length(key_schema) NOT BETWEEN 1 AND 2 THEN
        -- the elements as DynamoDB's service prints them
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''[%s]'' at ''%s'' failed to satisfy constraint: %s',
            (SELECT string_agg(format('KeySchemaElement(attributeName=%s, keyType=%s)', x->>'AttributeName', x->>'KeyType'),
                               ', ' ORDER BY n)
             FROM jsonb_array_elements(key_schema) WITH ORDINALITY AS a(x, n)),
            member,
            CASE WHEN jsonb_array_length(key_schema) = 0 THEN 'Member must have length greater than or equal to 1'
                 ELSE 'Member must have length less than or equal to 2' END));
    END IF;
    FOR e IN SELECT value FROM jsonb_array_elements(key_schema) LOOP
        IF e->>'AttributeName' IS NULL OR e->>'AttributeName' = '' THEN
            PERFORM ddb.validation_error('1 validation error detected: Value null at ''keySchema.1.member.attributeName'' failed to satisfy constraint: Member must not be null');
        END IF;
        IF e->>'KeyType' = 'HASH' THEN
            IF hash_key IS NOT NULL THEN
                PERFORM ddb.validation_error('Invalid KeySchema: Too many hash keys specified.  All Dynamo DB tables must have exactly one hash key');
            END IF;
            hash_key := e->>'AttributeName';
        ELSIF e->>'KeyType' = 'RANGE' THEN
            IF range_key IS NOT NULL OR hash_key IS NULL THEN
                PERFORM ddb.validation_error('Invalid KeySchema: The first KeySchemaElement is not a HASH key type');
            END IF;
            range_key := e->>'AttributeName';
        ELSE
            PERFORM ddb.validation_error(format(
                '1 validation error detected: Value ''%s'' at ''%s.1.member.keyType'' failed to satisfy constraint: '
                'Member must satisfy enum value set: [HASH, RANGE]', e->>'KeyType', member));
        END IF;
    END LOOP;
    IF hash_key = range_key THEN
        PERFORM ddb.validation_error('Invalid KeySchema: Some index key attribute have no definition');
    END IF;
END $$;

-- Creates an index a request describes (CreateTable's GlobalSecondaryIndexes
-- and LocalSecondaryIndexes, UpdateTable's Create): its IndexName and
-- Projection from spec, its key schema as the caller read it, the key
-- types from the request's AttributeDefinitions.
CREATE FUNCTION ddb.create_requested_index(table_name text, spec jsonb, hash_key text, range_key text, types jsonb,
                                           local boolean) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    projection jsonb := coalesce(spec->'Projection', '{}');
BEGIN
    PERFORM ddb.create_index(table_name, spec->>'IndexName', hash_key, types->>hash_key,
                             range_key, coalesce(types->>range_key, 'S'),
                             coalesce(projection->>'ProjectionType', 'ALL'),
                             (SELECT array_agg(v) FROM jsonb_array_elements_text(projection->'NonKeyAttributes') v),
                             local => local);
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
BEGIN
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
        gkeys := ddb.read_key_schema(g->'KeySchema', 'globalSecondaryIndexes.1.member.keySchema');
        used := used || gkeys.hash_key || CASE WHEN gkeys.range_key IS NOT NULL THEN ARRAY[gkeys.range_key] ELSE '{}' END;
    END LOOP;
    -- a local secondary index: the table's hash key, another range key, on a table that has one
    FOR g IN SELECT value FROM jsonb_array_elements(coalesce(request->'LocalSecondaryIndexes', '[]')) LOOP
        gkeys := ddb.read_key_schema(g->'KeySchema', 'localSecondaryIndexes.1.member.keySchema');
        IF keys.range_key IS NULL THEN
            PERFORM ddb.validation_error('One or more parameter values were invalid: Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex');
        END IF;
        IF gkeys.hash_key IS DISTINCT FROM keys.hash_key OR gkeys.range_key IS NULL THEN
            PERFORM ddb.validation_error(format(
                'One or more parameter values were invalid: Index KeySchema does not have the same leading hash key as table KeySchema for index: %s. index hash key: %s, table hash key: %s',
                g->>'IndexName', gkeys.hash_key, keys.hash_key));
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

    PERFORM ddb.create_table(name, keys.hash_key, types->>keys.hash_key, keys.range_key,
                             coalesce(types->>keys.range_key, 'S'),
                             coalesce(nullif(current_setting('ddb.default_schema', true), ''), 'public'),
                             coalesce(nullif(current_setting('ddb.default_partitions', true), '')::int, 0));
    -- without either, on-demand (DynamoDB would ask for ProvisionedThroughput: docs/tables.md)
    PERFORM ddb.set_billing(name, coalesce(request->>'BillingMode',
                                           CASE WHEN request ? 'ProvisionedThroughput' THEN 'PROVISIONED' ELSE 'PAY_PER_REQUEST' END),
                            request->'ProvisionedThroughput');
    IF jsonb_typeof(request->'StreamSpecification'->'StreamEnabled') = 'boolean'
       AND (request->'StreamSpecification'->>'StreamEnabled')::boolean THEN
        PERFORM ddb.set_stream(name, request->'StreamSpecification');
    END IF;
    FOR g IN SELECT value FROM jsonb_array_elements(coalesce(request->'GlobalSecondaryIndexes', '[]')) LOOP
        gkeys := ddb.read_key_schema(g->'KeySchema', 'globalSecondaryIndexes.1.member.keySchema');
        PERFORM ddb.create_requested_index(name, g, gkeys.hash_key, gkeys.range_key, types, false);
    END LOOP;
    FOR g IN SELECT value FROM jsonb_array_elements(coalesce(request->'LocalSecondaryIndexes', '[]')) LOOP
        gkeys := ddb.read_key_schema(g->'KeySchema', 'localSecondaryIndexes.1.member.keySchema');
        PERFORM ddb.create_requested_index(name, g, gkeys.hash_key, gkeys.range_key, types, true);
    END LOOP;
    RETURN jsonb_build_object('TableDescription', ddb.describe_table(name));
END $$;

-- DescribeTable.
CREATE FUNCTION ddb.api_describe_table(request jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF request->>'TableName' IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tableName'' failed to satisfy constraint: Member must not be null');
    END IF;
    RETURN jsonb_build_object('Table', ddb.describe_table(request->>'TableName'));
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
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    page_size int := ddb.request_limit(request, 100, 100);
    names text[];
BEGIN
    SELECT array_agg(table_name ORDER BY table_name COLLATE "C") INTO names
    FROM (SELECT table_name FROM ddb.tables
          WHERE request->>'ExclusiveStartTableName' IS NULL
             OR table_name COLLATE "C" > (request->>'ExclusiveStartTableName') COLLATE "C"
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
    description := ddb.describe_table(request->>'TableName');
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
    SELECT * INTO t FROM ddb.tables WHERE table_name = request->>'TableName';
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004',
            MESSAGE = 'Requested resource not found: Table: ' || coalesce(request->>'TableName', '') || ' not found';
    END IF;
    RETURN jsonb_build_object('TimeToLiveDescription',
        CASE WHEN t.ttl_attribute IS NULL THEN '{"TimeToLiveStatus": "DISABLED"}'::jsonb
             ELSE jsonb_build_object('TimeToLiveStatus', 'ENABLED', 'AttributeName', t.ttl_attribute) END);
END $$;

-- ---------------------------------------------------------------------------
-- Access keys of ddb-gateway (docs/gateway.md): AWS Signature Version 4
-- needs the secret on the server side, so only the extension's owner may
-- read this table.
-- ---------------------------------------------------------------------------

CREATE TABLE ddb.access_keys (
    access_key_id text PRIMARY KEY,
    secret_access_key text NOT NULL,
    tables text[],              -- the tables the key may use; NULL: every table
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
COMMENT ON TABLE ddb.access_keys IS 'Access keys the gateway verifies SigV4 signatures with; revoked keys stay for the record';
REVOKE ALL ON ddb.access_keys FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('ddb.access_keys', '');

-- Creates an access key (limited to some tables when tables is given) and
-- returns its id and secret, as AWS shows them: once.
CREATE FUNCTION ddb.create_access_key(tables text[] DEFAULT NULL, OUT access_key_id text, OUT secret_access_key text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    access_key_id := 'AKDDB' || upper(substr(replace(gen_random_uuid()::text, '-', ''), 1, 15));
    secret_access_key := encode(decode(substr(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 1, 60), 'hex'), 'base64');
    INSERT INTO ddb.access_keys (access_key_id, secret_access_key, tables)
    VALUES (access_key_id, secret_access_key, tables);
END $$;

-- Revokes an access key; true when it was active.
CREATE FUNCTION ddb.revoke_access_key(access_key_id text) RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    WITH revoked AS (
        UPDATE ddb.access_keys k SET revoked_at = now()
        WHERE k.access_key_id = revoke_access_key.access_key_id AND k.revoked_at IS NULL RETURNING 1)
    SELECT EXISTS (SELECT FROM revoked);
END;

-- ---------------------------------------------------------------------------
-- Tags (TagResource, UntagResource, ListTagsOfResource)
-- ---------------------------------------------------------------------------

-- The table a resource ARN names (arn:aws:dynamodb:<region>:<account>:table/<name>),
-- raising ValidationException for a malformed ARN and AccessDeniedException,
-- as DynamoDB does, for one that names no table here.
CREATE FUNCTION ddb.table_of_arn(arn text) RETURNS ddb.tables
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text := substring(arn FROM '^arn:aws[a-z-]*:dynamodb:[a-z0-9-]*:[0-9]{12}:table/([a-zA-Z0-9_.-]{3,255})$');
    t ddb.tables;
BEGIN
    IF name IS NULL THEN
        PERFORM ddb.validation_error(format('Invalid TableArn: Invalid ResourceArn provided as input %s', arn));
    END IF;
    SELECT * INTO t FROM ddb.tables WHERE tables.table_name = name;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD010',
            MESSAGE = format('User is not authorized to perform: dynamodb:ListTagsOfResource on resource: %s', arn);
    END IF;
    RETURN t;
END $$;

-- TagResource: adds or replaces tags (at most 50 per table).
CREATE FUNCTION ddb.api_tag_resource(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.table_of_arn(request->>'ResourceArn');
    added jsonb;
BEGIN
    IF jsonb_typeof(request->'Tags') IS DISTINCT FROM 'array' OR jsonb_array_length(request->'Tags') = 0 THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tags'' failed to satisfy constraint: Member must not be null');
    END IF;
    SELECT jsonb_object_agg(e->>'Key', e->>'Value') INTO added FROM jsonb_array_elements(request->'Tags') e;
    IF EXISTS (SELECT FROM jsonb_array_elements(request->'Tags') e
               WHERE coalesce(length(e->>'Key'), 0) NOT BETWEEN 1 AND 128 OR e->>'Value' IS NULL
                  OR length(e->>'Value') > 256) THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: a tag key is 1 to 128 characters and its value at most 256');
    END IF;
    IF (SELECT count(*) FROM jsonb_object_keys(t.tags || added)) > 50 THEN
        RAISE EXCEPTION USING ERRCODE = 'YD009', MESSAGE = 'The number of tags exceeds the limit of 50 tags per resource';
    END IF;
    UPDATE ddb.tables SET tags = tags || added WHERE tables.table_name = t.table_name;
    RETURN '{}';
END $$;

-- UntagResource: removes tags by key.
CREATE FUNCTION ddb.api_untag_resource(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.table_of_arn(request->>'ResourceArn');
BEGIN
    IF jsonb_typeof(request->'TagKeys') IS DISTINCT FROM 'array' THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tagKeys'' failed to satisfy constraint: Member must not be null');
    END IF;
    UPDATE ddb.tables SET tags = tags - ARRAY(SELECT jsonb_array_elements_text(request->'TagKeys'))
    WHERE tables.table_name = t.table_name;
    RETURN '{}';
END $$;

-- ListTagsOfResource: the tags of a table, by key.
CREATE FUNCTION ddb.api_list_tags_of_resource(request jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.table_of_arn(request->>'ResourceArn');
BEGIN
    RETURN jsonb_build_object('Tags', coalesce((SELECT jsonb_agg(jsonb_build_object('Key', key, 'Value', value) ORDER BY key)
                                                FROM jsonb_each_text(t.tags)), '[]'));
END $$;

-- ---------------------------------------------------------------------------
-- Billing mode and throughput (CreateTable, UpdateTable): declared and
-- described as DynamoDB does; nothing is throttled.
-- ---------------------------------------------------------------------------

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
        reads := (throughput->>'ReadCapacityUnits')::integer;
        writes := (throughput->>'WriteCapacityUnits')::integer;
        IF reads IS NULL OR writes IS NULL OR reads < 1 OR writes < 1 THEN
            PERFORM ddb.validation_error('One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be at least 1');
        END IF;
    END IF;
    UPDATE ddb.tables SET billing_mode = mode, read_capacity = coalesce(reads, 0), write_capacity = coalesce(writes, 0)
    WHERE tables.table_name = set_billing.table_name;
END $$;

-- Drops a global secondary index of a table.
CREATE FUNCTION ddb.drop_index(table_name text, index_name text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    i ddb.indexes;
BEGIN
    SELECT * INTO t FROM ddb.tables WHERE tables.table_name = drop_index.table_name FOR UPDATE;
    SELECT * INTO i FROM ddb.indexes WHERE indexes.table_name = drop_index.table_name AND indexes.index_name = drop_index.index_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004',
            MESSAGE = format('Requested resource not found: Index: %s not found', index_name);
    END IF;
    IF i.local THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: a local secondary index cannot be deleted');
    END IF;
    EXECUTE format('DROP TABLE %I.%I', t.schema_name, i.relation_name);
    DELETE FROM ddb.indexes WHERE indexes.table_name = drop_index.table_name AND indexes.index_name = drop_index.index_name;
END $$;

-- UpdateTable: billing mode and throughput, and GlobalSecondaryIndexUpdates
-- (Create, Update of throughput, Delete).
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
BEGIN
    IF name IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tableName'' failed to satisfy constraint: Member must not be null');
    END IF;
    PERFORM ddb.check_name('tableName', name);
    SELECT * INTO t FROM ddb.tables WHERE tables.table_name = name;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004', MESSAGE = 'Requested resource not found: Table: ' || name || ' not found';
    END IF;
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
-- ---------------------------------------------------------------------------
-- DynamoDB Streams (docs/streams.md): a table's item changes as stream
-- records, read with ListStreams, DescribeStream, GetShardIterator and
-- GetRecords.
--
-- A table with a stream carries the constraint trigger ddb_stream, deferred
-- to commit: a change rolled back leaves no record, and a committed one is
-- numbered at commit under the stream's lock, so sequence numbers follow
-- commit order and a reader (who takes the lock shared) never passes a
-- record that is still to come.  One shard per stream; records are kept 24
-- hours (ddb.trim_stream_records removes older ones).
-- ---------------------------------------------------------------------------

CREATE TABLE ddb.stream_records (
    table_name text NOT NULL,
    stream_label text NOT NULL,
    sequence_number bigint NOT NULL,
    event_name text NOT NULL CHECK (event_name IN ('INSERT', 'MODIFY', 'REMOVE')),
    keys jsonb NOT NULL,            -- DynamoDB JSON
    new_image jsonb,
    old_image jsonb,
    size_bytes integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_name, stream_label, sequence_number)
);
COMMENT ON TABLE ddb.stream_records IS 'DynamoDB Streams: the item changes of tables with a stream, 24 hours of them';
CREATE SEQUENCE ddb.stream_sequence;

-- Takes the advisory lock of a table's stream shared until the end of the
-- transaction, for a reader: writers take it exclusive at commit in
-- ddb.stream_capture (src/table/stream_capture.c, the same two keys).  The
-- two-key form, with a first key of its own, keeps clear of other users of
-- advisory locks.
CREATE FUNCTION ddb.lock_stream_shared(table_name text) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
RETURN pg_advisory_xact_lock_shared(1685283443, hashtext(table_name));

-- A stream's ARN: the table's, /stream/, its label.
CREATE FUNCTION ddb.stream_arn(table_name text, label text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ddb.table_arn(table_name) || '/stream/' || label;

-- The one shard of a stream.
CREATE FUNCTION ddb.stream_shard_id(label text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN 'shardId-00000001-' || translate(label, '-:.T', '');

-- A sequence number as DynamoDB prints them: 21 digits.
CREATE FUNCTION ddb.stream_sequence_text(n bigint) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN lpad(n::text, 21, '0');

-- Records an item change of a table with a stream: the deferred trigger
-- ddb_stream (argument: the table's DynamoDB name), in C (src/table/stream_capture.c).
CREATE FUNCTION ddb.stream_capture() RETURNS trigger
    AS 'MODULE_PATHNAME', 'ddb_stream_capture' LANGUAGE C;

-- Enables or disables a table's stream from a StreamSpecification (CreateTable, UpdateTable).
CREATE FUNCTION ddb.set_stream(table_name text, spec jsonb) RETURNS void
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
        IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = format('%I.%I', t.schema_name, t.relation_name)::regclass
                       AND tgname = 'ddb_stream') THEN
            EXECUTE format('CREATE CONSTRAINT TRIGGER ddb_stream AFTER INSERT OR UPDATE OR DELETE ON %I.%I '
                           'DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ddb.stream_capture(%L)',
                           t.schema_name, t.relation_name, t.table_name);
        END IF;
    ELSE
        UPDATE ddb.tables SET stream_view_type = NULL WHERE tables.table_name = t.table_name;
    END IF;
END $$;

-- The stream members of a DescribeTable: StreamSpecification, LatestStreamArn, LatestStreamLabel.
CREATE FUNCTION ddb.stream_description(t ddb.tables) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN t.stream_view_type IS NOT NULL
            THEN jsonb_build_object('StreamSpecification',
                                    jsonb_build_object('StreamEnabled', true, 'StreamViewType', t.stream_view_type))
            ELSE '{}'::jsonb END
       || CASE WHEN t.stream_label IS NOT NULL
               THEN jsonb_build_object('LatestStreamArn', ddb.stream_arn(t.table_name, t.stream_label),
                                       'LatestStreamLabel', t.stream_label)
               ELSE '{}'::jsonb END;

-- The table of a stream ARN; ResourceNotFoundException when it names no stream.
CREATE FUNCTION ddb.stream_table(arn text) RETURNS ddb.tables
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
BEGIN
    IF arn IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''streamArn'' failed to satisfy constraint: Member must not be null');
    END IF;
    SELECT * INTO t FROM ddb.tables
    WHERE stream_label IS NOT NULL AND ddb.stream_arn(tables.table_name, stream_label) = arn;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004', MESSAGE = format('Requested resource not found: Stream: %s not found', arn);
    END IF;
    RETURN t;
END $$;

-- ListStreams: the streams of every table, or of one (TableName), in ARN order.
CREATE FUNCTION ddb.api_list_streams(request jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    page_size integer := ddb.request_limit(request, 100, 100);
    streams jsonb;
    last_arn text;
BEGIN
    IF request ? 'TableName' AND NOT EXISTS (SELECT FROM ddb.tables WHERE table_name = request->>'TableName') THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004',
            MESSAGE = format('Requested resource not found: Table: %s not found', request->>'TableName');
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

-- DescribeStream: the stream, its status and its one shard.
CREATE FUNCTION ddb.api_describe_stream(request jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.stream_table(request->>'StreamArn');
    first_sequence bigint;
BEGIN
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

-- A shard iterator: where a reader is in a stream, as an opaque string.
CREATE FUNCTION ddb.stream_iterator(table_name text, label text, after_sequence bigint) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN translate(encode(convert_to(jsonb_build_array(table_name, label, after_sequence)::text, 'UTF8'), 'base64'),
                 E'\n', '');

-- GetShardIterator: TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER.
CREATE FUNCTION ddb.api_get_shard_iterator(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.stream_table(request->>'StreamArn');
    kind text := request->>'ShardIteratorType';
    after_sequence bigint;
BEGIN
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
        -- after every record committed so far
        PERFORM ddb.lock_stream_shared(t.table_name);
        SELECT coalesce(max(sequence_number), 0) INTO after_sequence FROM ddb.stream_records r
        WHERE r.table_name = t.table_name AND r.stream_label = t.stream_label;
    ELSE
        after_sequence := 0;
    END IF;
    RETURN jsonb_build_object('ShardIterator', ddb.stream_iterator(t.table_name, t.stream_label, after_sequence));
END $$;

-- GetRecords: the records after a shard iterator, in commit order, and the iterator after them.
CREATE FUNCTION ddb.api_get_records(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    position jsonb;
    t ddb.tables;
    page_size integer := ddb.request_limit(request, 1000, 1000);
    records jsonb;
    last_sequence bigint;
BEGIN
    IF request->>'ShardIterator' IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''shardIterator'' failed to satisfy constraint: Member must not be null');
    END IF;
    BEGIN
        position := convert_from(decode(request->>'ShardIterator', 'base64'), 'UTF8')::jsonb;
        IF jsonb_typeof(position) <> 'array' OR jsonb_array_length(position) <> 3
           OR jsonb_typeof(position->2) <> 'number' OR (position->>2) !~ '^[0-9]{1,18}$' THEN
            RAISE EXCEPTION 'not an iterator';
        END IF;
    EXCEPTION WHEN OTHERS THEN
        PERFORM ddb.validation_error('Invalid ShardIterator');
    END;
    SELECT * INTO t FROM ddb.tables WHERE table_name = position->>0 AND stream_label = position->>1;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004', MESSAGE = 'Requested resource not found: the stream of this iterator is gone';
    END IF;
    -- wait for writers of the stream that are committing: no record is numbered behind the reader
    PERFORM ddb.lock_stream_shared(t.table_name);
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
               ORDER BY r.sequence_number),
           max(r.sequence_number)
    INTO records, last_sequence
    FROM (SELECT * FROM ddb.stream_records r
          WHERE r.table_name = t.table_name AND r.stream_label = t.stream_label
            AND r.sequence_number > (position->>2)::bigint AND r.created_at > now() - interval '24 hours'
          ORDER BY r.sequence_number LIMIT page_size) r;
    RETURN jsonb_build_object('Records', coalesce(records, '[]'))
        || CASE WHEN t.stream_view_type IS NOT NULL OR records IS NOT NULL
                THEN jsonb_build_object('NextShardIterator',
                         ddb.stream_iterator(t.table_name, t.stream_label, coalesce(last_sequence, (position->>2)::bigint)))
                ELSE '{}'::jsonb END;
END $$;

-- Removes stream records older than 24 hours (DynamoDB's retention); schedule it like ddb.expire.
CREATE FUNCTION ddb.trim_stream_records() RETURNS bigint
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    WITH gone AS (DELETE FROM ddb.stream_records WHERE created_at <= now() - interval '24 hours' RETURNING 1)
    SELECT count(*) FROM gone;
END;

-- ===========================================================================
-- Model mailshot (../shared/catalog.md M1-M10; docs/models/mailshot.md)
--
-- MailshotTable: everything about a subscriber under SUB#<email> (PROFILE,
-- EXEC#<sequenceId>, SENT#<iso timestamp>, SUPPRESSION), TTL on send logs.
-- MailshotEventsTable: engagement events SUB#<email> / EVT#<iso>#<type>,
-- TTL on every event, GSI TemplateIndex (templateKey, SK).
-- Every item's shape is checked on every write path, and a ttl must be the
-- one the rule gives (send logs 90 days, events 365 days after the fact).
-- ===========================================================================

CREATE SCHEMA mailshot;
COMMENT ON SCHEMA mailshot IS 'The mailshot model (ddb_model): subscribers, sequences, sends and engagement events';

SELECT ddb.create_table('MailshotTable', 'PK', 'S', 'SK', 'S', schema_name => 'mailshot', partitions => 0,
                        ttl_attribute => 'ttl');
SELECT ddb.own_model_table('mailshot', 'MailshotTable');
SELECT ddb.create_table('MailshotEventsTable', 'PK', 'S', 'SK', 'S', schema_name => 'mailshot', partitions => 0,
                        ttl_attribute => 'ttl');
SELECT ddb.create_index('MailshotEventsTable', 'TemplateIndex', 'templateKey', 'S', 'SK', 'S');
SELECT ddb.own_model_table('mailshot', 'MailshotEventsTable');

-- M9: SEND_LOG_TTL_DAYS, how long a send log lives.
CREATE FUNCTION mailshot.send_log_ttl_days() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 90;

-- M9: EVENT_TTL_DAYS, how long an engagement event lives.
CREATE FUNCTION mailshot.event_ttl_days() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 365;

-- M9: the ttl (epoch seconds) of an item written at ts that lives days days.
CREATE FUNCTION mailshot.ttl_after(ts timestamptz, days integer) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
RETURN floor(date_part('epoch', ts))::bigint + days * 86400;

-- A subscriber's address as the keys hold it: trimmed and lower-cased;
-- anything that is not an address is refused.
CREATE FUNCTION mailshot.normalize_email(email text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e text := lower(btrim(email, E' \t\r\n'));
BEGIN
    IF e IS NULL OR length(e) > 254 OR e !~ '^[^@\s#]+@[^@\s.#]+(\.[^@\s.#]+)+$' THEN
        PERFORM ddb.invalid_parameter(format('not an email address: %L', email));
    END IF;
    RETURN e;
END $$;

-- A timestamp from the ISO 8601 text the items hold (2026-03-17T10:30:00.000Z); raises for other text.
CREATE FUNCTION mailshot.parse_iso(ts text, what text) RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF ts IS NULL OR ts !~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$' THEN
        PERFORM ddb.invalid_parameter(format('%s must be an ISO 8601 UTC timestamp like 2026-03-17T10:30:00.000Z, not %s',
                                        what, coalesce(ts, 'null')));
    END IF;
    RETURN ts::timestamptz;
EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format THEN
    PERFORM ddb.invalid_parameter(format('%s is not a valid timestamp: %s', what, ts));
END $$;

-- M8: subscriberPK("user@example.com") = "SUB#user@example.com".
CREATE FUNCTION mailshot.subscriber_pk(email text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN 'SUB#' || mailshot.normalize_email(email);

-- M8: executionSK("onboarding") = "EXEC#onboarding".
CREATE FUNCTION mailshot.execution_sk(sequence_id text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF sequence_id IS NULL OR sequence_id !~ '^[^#\s]+$' THEN
        PERFORM ddb.invalid_parameter(format('a sequence id is a non-empty word without # or spaces, not %L', sequence_id));
    END IF;
    RETURN 'EXEC#' || sequence_id;
END $$;

-- M8: sentSK("2026-03-17T10:30:00.000Z") = "SENT#2026-03-17T10:30:00.000Z".
CREATE FUNCTION mailshot.sent_sk(sent_at timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN 'SENT#' || ddb.iso8601(sent_at);

-- The sort key of an engagement event: EVT#<iso timestamp>#<eventType>.
CREATE FUNCTION mailshot.event_sk(at timestamptz, event_type text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN 'EVT#' || ddb.iso8601(at) || '#' || event_type;

-- Raises for attributes an item lacks.
CREATE FUNCTION mailshot.require(item jsonb, what text, VARIADIC attributes text[]) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    missing text;
BEGIN
    SELECT string_agg(a, ', ') INTO missing FROM unnest(attributes) a
    WHERE NOT item ? a OR jsonb_typeof(item -> a) = 'null';
    IF missing IS NOT NULL THEN
        PERFORM ddb.invalid_parameter(format('%s lacks %s', what, missing));
    END IF;
END $$;

-- Checks the shape of a MailshotTable item (BEFORE INSERT OR UPDATE),
-- whatever path wrote it.
CREATE FUNCTION mailshot.check_main_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb := NEW.item;
    pk text := NEW.pk::text;
    sk text := NEW.sk::text;
    email text := substr(pk, 5);
    what text := format('%s %s', pk, sk);
BEGIN
    IF left(pk, 4) <> 'SUB#' OR mailshot.normalize_email(email) <> email THEN
        PERFORM ddb.invalid_parameter(format('MailshotTable holds SUB#<email> items (a lower-case address), not %s', pk));
    END IF;
    IF i ? 'ttl' AND sk !~ '^SENT#' THEN
        PERFORM ddb.invalid_parameter(format('%s: only send logs expire; this item has no ttl (M9)', what));
    END IF;
    IF sk = 'PROFILE' THEN
        PERFORM mailshot.require(i, what, 'email', 'unsubscribed', 'suppressed', 'createdAt', 'updatedAt');
        IF i ->> 'email' <> email THEN
            PERFORM ddb.invalid_parameter(format('%s: email must be %s', what, email));
        END IF;
        IF jsonb_typeof(i -> 'unsubscribed') <> 'boolean' OR jsonb_typeof(i -> 'suppressed') <> 'boolean' THEN
            PERFORM ddb.invalid_parameter(format('%s: unsubscribed and suppressed are booleans', what));
        END IF;
        IF i ? 'attributes' AND jsonb_typeof(i -> 'attributes') <> 'object' THEN
            PERFORM ddb.invalid_parameter(format('%s: attributes is a map', what));
        END IF;
        PERFORM mailshot.parse_iso(i ->> 'createdAt', 'createdAt'), mailshot.parse_iso(i ->> 'updatedAt', 'updatedAt');
    ELSIF sk ~ '^EXEC#' THEN
        PERFORM mailshot.require(i, what, 'sequenceId', 'executionArn', 'startedAt');
        IF mailshot.execution_sk(i ->> 'sequenceId') <> sk THEN
            PERFORM ddb.invalid_parameter(format('%s: sequenceId must be %s', what, substr(sk, 6)));
        END IF;
        PERFORM mailshot.parse_iso(i ->> 'startedAt', 'startedAt');
    ELSIF sk ~ '^SENT#' THEN
        PERFORM mailshot.require(i, what, 'templateKey', 'subject', 'sentAt', 'ttl');
        IF 'SENT#' || (i ->> 'sentAt') <> sk THEN
            PERFORM ddb.invalid_parameter(format('%s: sentAt must be %s', what, substr(sk, 6)));
        END IF;
        IF jsonb_typeof(i -> 'ttl') <> 'number' OR (i ->> 'ttl')::numeric
           <> mailshot.ttl_after(mailshot.parse_iso(i ->> 'sentAt', 'sentAt'), mailshot.send_log_ttl_days()) THEN
            PERFORM ddb.invalid_parameter(format('%s: ttl must be sentAt + %s days, %s', what, mailshot.send_log_ttl_days(),
                mailshot.ttl_after(mailshot.parse_iso(i ->> 'sentAt', 'sentAt'), mailshot.send_log_ttl_days())));
        END IF;
    ELSIF sk = 'SUPPRESSION' THEN
        PERFORM mailshot.require(i, what, 'type', 'reason', 'suppressedAt');
        IF i ->> 'type' NOT IN ('Permanent', 'Complaint') THEN
            PERFORM ddb.invalid_parameter(format('%s: unknown suppression type %s (Permanent or Complaint)', what, i -> 'type'));
        END IF;
        PERFORM mailshot.parse_iso(i ->> 'suppressedAt', 'suppressedAt');
    ELSE
        PERFORM ddb.invalid_parameter(format('MailshotTable holds PROFILE, EXEC#, SENT# and SUPPRESSION items, not %s', sk));
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON mailshot."MailshotTable"
    FOR EACH ROW EXECUTE FUNCTION mailshot.check_main_item();

-- Checks the shape of a MailshotEventsTable item (BEFORE INSERT OR UPDATE).
CREATE FUNCTION mailshot.check_event_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb := NEW.item;
    pk text := NEW.pk::text;
    sk text := NEW.sk::text;
    email text := substr(pk, 5);
    what text := format('%s %s', pk, sk);
BEGIN
    IF left(pk, 4) <> 'SUB#' OR mailshot.normalize_email(email) <> email THEN
        PERFORM ddb.invalid_parameter(format('MailshotEventsTable holds SUB#<email> items (a lower-case address), not %s', pk));
    END IF;
    PERFORM mailshot.require(i, what, 'eventType', 'templateKey', 'timestamp', 'ttl');
    IF i ->> 'eventType' NOT IN ('delivery', 'open', 'click', 'bounce', 'complaint') THEN
        PERFORM ddb.invalid_parameter(format('%s: unknown event type %s (delivery, open, click, bounce or complaint)',
                                        what, i -> 'eventType'));
    END IF;
    IF sk <> 'EVT#' || (i ->> 'timestamp') || '#' || (i ->> 'eventType') THEN
        PERFORM ddb.invalid_parameter(format('%s: the sort key must be EVT#<timestamp>#<eventType>', what));
    END IF;
    IF jsonb_typeof(i -> 'ttl') <> 'number' OR (i ->> 'ttl')::numeric
       <> mailshot.ttl_after(mailshot.parse_iso(i ->> 'timestamp', 'timestamp'), mailshot.event_ttl_days()) THEN
        PERFORM ddb.invalid_parameter(format('%s: ttl must be timestamp + %s days, %s', what, mailshot.event_ttl_days(),
            mailshot.ttl_after(mailshot.parse_iso(i ->> 'timestamp', 'timestamp'), mailshot.event_ttl_days())));
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON mailshot."MailshotEventsTable"
    FOR EACH ROW EXECUTE FUNCTION mailshot.check_event_item();

-- Typed rows.
CREATE TYPE mailshot.subscriber AS (
    email text, first_name text, attributes jsonb, unsubscribed boolean, suppressed boolean,
    created_at timestamptz, updated_at timestamptz);
CREATE TYPE mailshot.execution AS (email text, sequence_id text, execution_arn text, started_at timestamptz);
CREATE TYPE mailshot.send AS (
    email text, sent_at timestamptz, template_key text, subject text, sequence_id text, expires_at timestamptz);
CREATE TYPE mailshot.suppression AS (email text, type text, reason text, suppressed_at timestamptz);
CREATE TYPE mailshot.event AS (
    email text, at timestamptz, event_type text, template_key text, sequence_id text, subject text,
    expires_at timestamptz);

-- The typed row of a PROFILE item (NULL for none).
CREATE FUNCTION mailshot.subscriber_of(item jsonb) RETURNS mailshot.subscriber
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(item ->> 'email', item ->> 'firstName', item -> 'attributes', (item ->> 'unsubscribed')::boolean,
           (item ->> 'suppressed')::boolean, (item ->> 'createdAt')::timestamptz,
           (item ->> 'updatedAt')::timestamptz)::mailshot.subscriber;

-- The typed row of an EXEC# item (NULL for none).
CREATE FUNCTION mailshot.execution_of(item jsonb) RETURNS mailshot.execution
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(substr(item ->> 'PK', 5), item ->> 'sequenceId', item ->> 'executionArn',
           (item ->> 'startedAt')::timestamptz)::mailshot.execution;

-- The typed row of a SENT# item.
CREATE FUNCTION mailshot.send_of(item jsonb) RETURNS mailshot.send
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(substr(item ->> 'PK', 5), (item ->> 'sentAt')::timestamptz, item ->> 'templateKey', item ->> 'subject',
           item ->> 'sequenceId', to_timestamp((item ->> 'ttl')::bigint))::mailshot.send;

-- The typed row of a SUPPRESSION item (NULL for none).
CREATE FUNCTION mailshot.suppression_of(item jsonb) RETURNS mailshot.suppression
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(substr(item ->> 'PK', 5), item ->> 'type', item ->> 'reason',
           (item ->> 'suppressedAt')::timestamptz)::mailshot.suppression;

-- The typed row of an event item.
CREATE FUNCTION mailshot.event_of(item jsonb) RETURNS mailshot.event
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(substr(item ->> 'PK', 5), (item ->> 'timestamp')::timestamptz, item ->> 'eventType', item ->> 'templateKey',
           item ->> 'sequenceId', item ->> 'subject', to_timestamp((item ->> 'ttl')::bigint))::mailshot.event;

-- Views with typed columns; expired items are hidden as every read hides them.
CREATE VIEW mailshot.subscribers AS
    SELECT s.* FROM mailshot."MailshotTable" t, mailshot.subscriber_of(t.item) s
    WHERE t.sk OPERATOR(pg_catalog.=) 'PROFILE'::ddb.ddb_key;
CREATE VIEW mailshot.executions AS
    SELECT e.* FROM mailshot."MailshotTable" t, mailshot.execution_of(t.item) e
    WHERE t.sk OPERATOR(pg_catalog.^@) 'EXEC#'::ddb.ddb_key;
CREATE VIEW mailshot.sends AS
    SELECT s.* FROM mailshot."MailshotTable" t, mailshot.send_of(t.item) s
    WHERE t.sk OPERATOR(pg_catalog.^@) 'SENT#'::ddb.ddb_key AND ddb.ttl_visible(t.expires_at);
CREATE VIEW mailshot.suppressions AS
    SELECT s.* FROM mailshot."MailshotTable" t, mailshot.suppression_of(t.item) s
    WHERE t.sk OPERATOR(pg_catalog.=) 'SUPPRESSION'::ddb.ddb_key;
CREATE VIEW mailshot.events AS
    SELECT e.* FROM mailshot."MailshotEventsTable" t, mailshot.event_of(t.item) e
    WHERE ddb.ttl_visible(t.expires_at);
COMMENT ON VIEW mailshot.sends IS 'mailshot: the send logs not yet expired, typed';
COMMENT ON VIEW mailshot.events IS 'mailshot: the engagement events not yet expired, typed';

-- Raises no_data_found for an address that has no subscriber profile.
CREATE FUNCTION mailshot.require_subscriber(email text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF ddb.get_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'PROFILE') IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found',
            MESSAGE = format('unknown subscriber %s', mailshot.normalize_email(email));
    END IF;
END $$;

-- Creates a subscriber, or updates its name and attributes; a NULL
-- argument leaves its attribute as it is (createdAt and the flags stay too).
CREATE FUNCTION mailshot.upsert_subscriber(email text, first_name text DEFAULT NULL,
                                           attributes jsonb DEFAULT NULL, at timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ddb.update_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'PROFILE',
        'SET email = :e, unsubscribed = if_not_exists(unsubscribed, :false), '
        'suppressed = if_not_exists(suppressed, :false), createdAt = if_not_exists(createdAt, :now), updatedAt = :now, '
        || CASE WHEN attributes IS NULL THEN '#a = if_not_exists(#a, :a)' ELSE '#a = :a' END
        || CASE WHEN first_name IS NULL THEN '' ELSE ', firstName = :f' END,
        names => '{"#a": "attributes"}',
        vals => jsonb_build_object(':e', mailshot.normalize_email(email), ':a', coalesce(attributes, '{}'),
                                   ':false', false, ':now', ddb.iso8601(at))
                || CASE WHEN first_name IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(':f', first_name) END,
        return_values => 'NONE');
END $$;

-- M1: a subscriber's profile (PK = SUB#email, SK = PROFILE), or NULL.
CREATE FUNCTION mailshot.get_profile(email text) RETURNS mailshot.subscriber
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN mailshot.subscriber_of(ddb.get_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'PROFILE'));

-- Records the start of a sequence's execution for a subscriber.
CREATE FUNCTION mailshot.start_execution(email text, sequence_id text, execution_arn text,
                                         at timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM mailshot.require_subscriber(email);
    PERFORM ddb.put_item('MailshotTable', jsonb_build_object(
        'PK', mailshot.subscriber_pk(email), 'SK', mailshot.execution_sk(sequence_id), 'sequenceId', sequence_id,
        'executionArn', execution_arn, 'startedAt', ddb.iso8601(at)));
END $$;

-- Removes a finished execution; true when there was one.
CREATE FUNCTION mailshot.end_execution(email text, sequence_id text) RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
RETURN ddb.delete_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key,
                       mailshot.execution_sk(sequence_id)::ddb.ddb_key) IS NOT NULL;

-- M2: the active execution of a sequence (SK = EXEC#sequenceId), or NULL.
CREATE FUNCTION mailshot.get_execution(email text, sequence_id text) RETURNS mailshot.execution
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN mailshot.execution_of(ddb.get_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key,
                                          mailshot.execution_sk(sequence_id)::ddb.ddb_key));

-- M3: every execution of a subscriber (SK begins_with EXEC#).
CREATE FUNCTION mailshot.list_executions(email text) RETURNS SETOF mailshot.execution
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT (mailshot.execution_of(i)).*
    FROM ddb.query('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'begins_with', 'EXEC#') i;
END;

-- Logs a send, with the ttl of the rule (M9: sentAt + 90 days); returns its
-- sort key.  A second send at the same millisecond is refused, never
-- written over the first.
CREATE FUNCTION mailshot.record_send(email text, template_key text, subject text, sequence_id text DEFAULT NULL,
                                     sent_at timestamptz DEFAULT clock_timestamp())
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sk text := mailshot.sent_sk(sent_at);
BEGIN
    PERFORM mailshot.require_subscriber(email);
    PERFORM ddb.put_item('MailshotTable', jsonb_strip_nulls(jsonb_build_object(
        'PK', mailshot.subscriber_pk(email), 'SK', sk, 'templateKey', template_key, 'subject', subject,
        'sequenceId', sequence_id, 'sentAt', ddb.iso8601(sent_at),
        'ttl', mailshot.ttl_after(sent_at, mailshot.send_log_ttl_days()))),
        condition => 'attribute_not_exists(SK)');
    RETURN sk;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('a send to %s at %s is already logged', mailshot.normalize_email(email), ddb.iso8601(sent_at));
END $$;

-- M4: a subscriber's send history, newest first (SK begins_with SENT#); expired logs are gone.
CREATE FUNCTION mailshot.send_history(email text) RETURNS SETOF mailshot.send
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT (mailshot.send_of(i)).*
    FROM ddb.query('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'begins_with', 'SENT#',
                   ascending => false) i;
END;

-- M5: was this template sent to the subscriber? (SK begins_with SENT#, filter templateKey)
CREATE FUNCTION mailshot.was_sent(email text, template_key text) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN EXISTS (SELECT FROM ddb.query('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'begins_with', 'SENT#',
                                     max_items => 1, filter => 'templateKey = :t',
                                     vals => jsonb_build_object(':t', template_key)));

-- Suppresses a subscriber (Permanent or Complaint): the SUPPRESSION item
-- and the profile's flag, in one transaction.
CREATE FUNCTION mailshot.suppress(email text, type text, reason text, at timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM mailshot.require_subscriber(email);
    PERFORM ddb.put_item('MailshotTable', jsonb_build_object(
        'PK', mailshot.subscriber_pk(email), 'SK', 'SUPPRESSION', 'type', type, 'reason', reason,
        'suppressedAt', ddb.iso8601(at)));
    PERFORM ddb.update_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'PROFILE',
        'SET suppressed = :true, updatedAt = :now', condition => 'attribute_exists(PK)',
        vals => jsonb_build_object(':true', true, ':now', ddb.iso8601(at)), return_values => 'NONE');
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'no_data_found',
        MESSAGE = format('unknown subscriber %s', mailshot.normalize_email(email));
END $$;

-- M6: a subscriber's suppression (SK = SUPPRESSION), or NULL.
CREATE FUNCTION mailshot.get_suppression(email text) RETURNS mailshot.suppression
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN mailshot.suppression_of(ddb.get_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'SUPPRESSION'));

-- Unsubscribes a subscriber.
CREATE FUNCTION mailshot.unsubscribe(email text, at timestamptz DEFAULT now()) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ddb.update_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'PROFILE',
        'SET unsubscribed = :true, updatedAt = :now', condition => 'attribute_exists(PK)',
        vals => jsonb_build_object(':true', true, ':now', ddb.iso8601(at)), return_values => 'NONE');
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'no_data_found',
        MESSAGE = format('unknown subscriber %s', mailshot.normalize_email(email));
END $$;

-- M7: everything about a subscriber (PK only), items as stored.
CREATE FUNCTION mailshot.get_subscriber_items(email text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key) i;
END;

-- Records an engagement event, with the ttl of the rule (M9: timestamp +
-- 365 days); returns its sort key.  A second event of one type at the same
-- millisecond is refused, never written over the first.
CREATE FUNCTION mailshot.record_event(email text, event_type text, template_key text,
                                      sequence_id text DEFAULT NULL, subject text DEFAULT NULL,
                                      at timestamptz DEFAULT clock_timestamp())
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sk text := mailshot.event_sk(at, event_type);
BEGIN
    PERFORM ddb.put_item('MailshotEventsTable', jsonb_strip_nulls(jsonb_build_object(
        'PK', mailshot.subscriber_pk(email), 'SK', sk, 'eventType', event_type, 'templateKey', template_key,
        'sequenceId', sequence_id, 'subject', subject, 'timestamp', ddb.iso8601(at),
        'ttl', mailshot.ttl_after(at, mailshot.event_ttl_days()))),
        condition => 'attribute_not_exists(SK)');
    RETURN sk;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('a %s event of %s at %s is already recorded', event_type, mailshot.normalize_email(email),
                         ddb.iso8601(at));
END $$;

-- M10: a template's events in the window [since, until), oldest first,
-- optionally of one event type (Query TemplateIndex: templateKey = t AND SK
-- BETWEEN EVT#since AND EVT#until, filter eventType).
CREATE FUNCTION mailshot.template_events(template_key text, since timestamptz, until timestamptz DEFAULT now(),
                                         event_type text DEFAULT NULL)
RETURNS SETOF mailshot.event
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT (mailshot.event_of(i)).*
    FROM ddb.query('MailshotEventsTable', template_key::ddb.ddb_key, 'between',
                   ('EVT#' || ddb.iso8601(since))::ddb.ddb_key, ('EVT#' || ddb.iso8601(until))::ddb.ddb_key,
                   index_name => 'TemplateIndex',
                   filter => CASE WHEN event_type IS NOT NULL THEN 'eventType = :t' END,
                   vals => CASE WHEN event_type IS NOT NULL THEN jsonb_build_object(':t', event_type) END) i;
END;

-- The seed's example items: subscriber user@example.com with a profile, an
-- onboarding execution, a send log, a suppression, and engagement events of
-- the welcome email.  Sends and events are written relative to now, so that
-- their TTLs have not passed; the profile keeps the seed's dates.
CREATE FUNCTION mailshot.load_example_data() RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sent timestamptz := date_trunc('second', now()) - interval '2 days';
BEGIN
    PERFORM mailshot.upsert_subscriber('user@example.com', 'Jane', '{"platform": "kajabi", "country": "ZA"}',
                                       at => '2026-03-01T00:00:00Z');
    PERFORM mailshot.start_execution('user@example.com', 'onboarding', 'arn:aws:states:us-east-1:123456789012:execution:onboarding:user-example-com',
                                     at => '2026-03-01T00:00:00Z');
    PERFORM mailshot.record_send('user@example.com', 'onboarding/welcome', 'Welcome!', 'onboarding', sent);
    PERFORM mailshot.record_event('user@example.com', 'delivery', 'onboarding/welcome', 'onboarding', 'Welcome!', sent + interval '5 seconds');
    PERFORM mailshot.record_event('user@example.com', 'open', 'onboarding/welcome', 'onboarding', 'Welcome!', sent + interval '1 hour');
    PERFORM mailshot.record_event('user@example.com', 'click', 'onboarding/welcome', 'onboarding', 'Welcome!', sent + interval '61 minutes');
    PERFORM mailshot.upsert_subscriber('bounced@example.com', 'Sam', at => '2026-03-01T00:00:00Z');
    PERFORM mailshot.record_send('bounced@example.com', 'onboarding/welcome', 'Welcome!', 'onboarding', sent);
    PERFORM mailshot.record_event('bounced@example.com', 'bounce', 'onboarding/welcome', 'onboarding', 'Welcome!', sent + interval '3 seconds');
    PERFORM mailshot.suppress('bounced@example.com', 'Permanent', 'General', sent + interval '4 seconds');
    RETURN 'user@example.com';
END $$;

-- ===========================================================================
-- Model uds, the user data store (../shared/catalog.md D1-D7;
-- docs/models/uds.md)
--
-- calculatedBehavior (user, key); apps (appName); appDataJson and
-- appDataBlob (appUser = <appName>#<user>, key) with the GSI userIndex
-- (user, appKey = <appName>#<key>, keys only); appUsage (appUser) holds the
-- bytes and items each user stores in each app, kept exact by a trigger in
-- the writing transaction, which also refuses a write that would go over
-- the app's quota.
-- ===========================================================================

CREATE SCHEMA uds;
COMMENT ON SCHEMA uds IS 'The uds model (ddb_model): calculated behaviour, apps, per-user app data with quotas';

SELECT ddb.create_table('calculatedBehavior', 'user', 'S', 'key', 'S', schema_name => 'uds', partitions => 0);
SELECT ddb.create_table('apps', 'appName', 'S', schema_name => 'uds', partitions => 0);
SELECT ddb.create_table('appDataJson', 'appUser', 'S', 'key', 'S', schema_name => 'uds', partitions => 0);
SELECT ddb.create_index('appDataJson', 'userIndex', 'user', 'S', 'appKey', 'S', projection_type => 'KEYS_ONLY');
SELECT ddb.create_table('appDataBlob', 'appUser', 'S', 'key', 'S', schema_name => 'uds', partitions => 0);
SELECT ddb.create_index('appDataBlob', 'userIndex', 'user', 'S', 'appKey', 'S', projection_type => 'KEYS_ONLY');
SELECT ddb.create_table('appUsage', 'appUser', 'S', schema_name => 'uds', partitions => 0);
SELECT ddb.own_model_table('uds', t)
FROM unnest(ARRAY['calculatedBehavior', 'apps', 'appDataJson', 'appDataBlob', 'appUsage']) t;

-- The app that holds created content (data.user.*): always there, never registered.
CREATE FUNCTION uds.created_content_app() RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 'hmh';

-- The quota of an app without one of its own: 10 MiB per user.
CREATE FUNCTION uds.default_quota_bytes() RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 10485760;

-- An app name: 1 to 100 of [A-Za-z0-9_.-], so that "<appName>#" is unambiguous.
CREATE FUNCTION uds.checked_app(app text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF app IS NULL OR app !~ '^[A-Za-z0-9_.-]{1,100}$' THEN
        PERFORM ddb.invalid_parameter(format('an app name is 1 to 100 of A-Z a-z 0-9 _ . -, not %L', app));
    END IF;
    RETURN app;
END $$;

-- A user id: 1 to 200 characters without '#' or spaces.
CREATE FUNCTION uds.checked_user(user_id text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF user_id IS NULL OR user_id !~ '^[^#\s]{1,200}$' THEN
        PERFORM ddb.invalid_parameter(format('a user id is 1 to 200 characters without # or spaces, not %L', user_id));
    END IF;
    RETURN user_id;
END $$;

-- A data key: 1 to 1024 bytes, as DynamoDB's sort keys.
CREATE FUNCTION uds.checked_key(key text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF key IS NULL OR key = '' OR octet_length(key) > 1024 THEN
        PERFORM ddb.invalid_parameter('a data key is 1 to 1024 bytes');
    END IF;
    RETURN key;
END $$;

-- The hash key of an app's data of a user: <appName>#<user>.
CREATE FUNCTION uds.app_user(app text, user_id text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN uds.checked_app(app) || '#' || uds.checked_user(user_id);

-- The quota of an app, in bytes per user.
CREATE FUNCTION uds.quota_of(app text) RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN coalesce((ddb.get_item('apps', app::ddb.ddb_key) ->> 'quotaBytes')::bigint, uds.default_quota_bytes());

-- Checks the shape of an appDataJson or appDataBlob item (BEFORE INSERT OR
-- UPDATE), whatever path wrote it: keys that agree with appName, user and
-- key, a registered app, a binary value in appDataBlob.
CREATE FUNCTION uds.check_app_data() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb := NEW.item;
BEGIN
    IF NOT (i ? 'appName' AND i ? 'user' AND i ? 'value' AND i ? 'appKey') THEN
        PERFORM ddb.invalid_parameter(format('%s item %s/%s needs appName, user, appKey and value', TG_TABLE_NAME, NEW.pk, NEW.sk));
    END IF;
    IF NEW.pk::text <> uds.app_user(i ->> 'appName', i ->> 'user') OR i ->> 'appKey' <> (i ->> 'appName') || '#' || NEW.sk::text THEN
        PERFORM ddb.invalid_parameter(format('%s item %s/%s: appUser must be <appName>#<user> and appKey <appName>#<key>',
                                             TG_TABLE_NAME, NEW.pk, NEW.sk));
    END IF;
    IF i ->> 'appName' <> uds.created_content_app() AND ddb.get_item('apps', (i ->> 'appName')::ddb.ddb_key) IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found', MESSAGE = format('unknown app %s', i ->> 'appName');
    END IF;
    IF octet_length(i ->> 'appKey') > 1024 THEN
        PERFORM ddb.invalid_parameter(format('%s item %s/%s: the app name and the key together exceed 1024 bytes',
                                             TG_TABLE_NAME, NEW.pk, NEW.sk));
    END IF;
    IF TG_TABLE_NAME = 'appDataBlob' AND (jsonb_typeof(i -> 'value') <> 'object' OR NOT i -> 'value' ? '$B'
                                          OR (SELECT count(*) FROM jsonb_object_keys(i -> 'value')) <> 1) THEN
        PERFORM ddb.invalid_parameter(format('appDataBlob item %s/%s: value must be a binary', NEW.pk, NEW.sk));
    END IF;
    RETURN NEW;
END $$;

-- D7: keeps appUsage exact (AFTER each write of app data, in its
-- transaction) and refuses a write that would take the user over the app's
-- quota.  The usage item's row lock orders concurrent writers of one
-- (app, user), so the figure and the check see every committed write.
CREATE FUNCTION uds.track_usage() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    item jsonb := CASE WHEN TG_OP = 'DELETE' THEN OLD.item ELSE NEW.item END;
    bytes bigint := coalesce(CASE WHEN TG_OP <> 'DELETE' THEN NEW.item_size END, 0)
                    - coalesce(CASE WHEN TG_OP <> 'INSERT' THEN OLD.item_size END, 0);
    items integer := CASE TG_OP WHEN 'INSERT' THEN 1 WHEN 'DELETE' THEN -1 ELSE 0 END;
    quota bigint;
BEGIN
    IF bytes = 0 AND items = 0 THEN
        RETURN NULL;
    END IF;
    -- the quota (a read of the app) matters only to a write that grows the data
    IF bytes > 0 THEN
        quota := uds.quota_of(item ->> 'appName');
    END IF;
    PERFORM ddb.update_item('appUsage', ((item ->> 'appName') || '#' || (item ->> 'user'))::ddb.ddb_key, NULL,
        'SET appName = :a, #u = :u ADD #b :d, #n :k',
        condition => CASE WHEN bytes > 0 THEN 'attribute_not_exists(#b) AND :d <= :q OR #b <= :room' END,
        names => '{"#b": "bytes", "#n": "items", "#u": "user"}',
        vals => jsonb_build_object(':a', item ->> 'appName', ':u', item ->> 'user', ':d', bytes, ':k', items)
                || CASE WHEN bytes > 0 THEN jsonb_build_object(':q', quota, ':room', quota - bytes) ELSE '{}' END,
        return_values => 'NONE');
    RETURN NULL;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'check_violation',
        MESSAGE = format('D7: quota exceeded: %s would store more than %s bytes in app %s',
                         item ->> 'user', quota, item ->> 'appName');
END $$;

-- Checks an apps item: a valid name, not hmh, a quota of whole bytes.
CREATE FUNCTION uds.check_app() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF uds.checked_app(NEW.pk::text) = uds.created_content_app() THEN
        PERFORM ddb.invalid_parameter(format('the app name %s is reserved for created content', NEW.pk));
    END IF;
    IF NEW.item ? 'quotaBytes' AND (jsonb_typeof(NEW.item -> 'quotaBytes') <> 'number'
       OR (NEW.item ->> 'quotaBytes')::numeric < 0 OR (NEW.item ->> 'quotaBytes')::numeric <> trunc((NEW.item ->> 'quotaBytes')::numeric)) THEN
        PERFORM ddb.invalid_parameter(format('app %s: quotaBytes is a whole number of bytes, 0 or more', NEW.pk));
    END IF;
    RETURN NEW;
END $$;

-- D7: appUsage is written by the usage trigger and by reconcile only, so
-- that no write path can move a user's figure away from the data.
CREATE FUNCTION uds.guard_usage() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pg_trigger_depth() < 2 AND current_setting('uds.reconciling', true) IS DISTINCT FROM 'on' THEN
        PERFORM ddb.invalid_parameter('appUsage is kept by the extension from the app data (D7); it is not written directly');
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uds."apps"
    FOR EACH ROW EXECUTE FUNCTION uds.check_app();
CREATE TRIGGER guard_usage BEFORE INSERT OR UPDATE OR DELETE ON uds."appUsage"
    FOR EACH ROW EXECUTE FUNCTION uds.guard_usage();
CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uds."appDataJson"
    FOR EACH ROW EXECUTE FUNCTION uds.check_app_data();
CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uds."appDataBlob"
    FOR EACH ROW EXECUTE FUNCTION uds.check_app_data();
CREATE TRIGGER track_usage AFTER INSERT OR UPDATE OR DELETE ON uds."appDataJson"
    FOR EACH ROW EXECUTE FUNCTION uds.track_usage();
CREATE TRIGGER track_usage AFTER INSERT OR UPDATE OR DELETE ON uds."appDataBlob"
    FOR EACH ROW EXECUTE FUNCTION uds.track_usage();

CREATE VIEW uds.calculated_behavior AS
    SELECT t.pk::text AS user_id, t.sk::text AS key, t.item -> 'value' AS value FROM uds."calculatedBehavior" t;
COMMENT ON VIEW uds.calculated_behavior IS 'uds: every calculated behaviour value';
CREATE VIEW uds.app_data AS
    SELECT 'json' AS kind, t.item ->> 'appName' AS app, t.item ->> 'user' AS user_id, t.sk::text AS key,
           t.item -> 'value' AS value, t.item_size AS bytes
    FROM uds."appDataJson" t
    UNION ALL
    SELECT 'blob', t.item ->> 'appName', t.item ->> 'user', t.sk::text, t.item -> 'value', t.item_size
    FROM uds."appDataBlob" t;
COMMENT ON VIEW uds.app_data IS 'uds: every JSON and blob value, with its DynamoDB item size';
CREATE VIEW uds.usage AS
    SELECT t.item ->> 'appName' AS app, t.item ->> 'user' AS user_id, (t.item ->> 'bytes')::bigint AS bytes,
           (t.item ->> 'items')::integer AS items, uds.quota_of(t.item ->> 'appName') AS quota_bytes
    FROM uds."appUsage" t;
COMMENT ON VIEW uds.usage IS 'uds: the stored usage of each user in each app (D7)';

-- Registers an app, with its quota per user (NULL: the default, 10 MiB).
CREATE FUNCTION uds.register_app(app text, quota_bytes bigint DEFAULT NULL) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF uds.checked_app(app) = uds.created_content_app() THEN
        PERFORM ddb.invalid_parameter(format('the app name %s is reserved for created content', app));
    END IF;
    IF quota_bytes IS NOT NULL AND quota_bytes < 0 THEN
        PERFORM ddb.invalid_parameter('a quota is a number of bytes, 0 or more');
    END IF;
    PERFORM ddb.put_item('apps', jsonb_build_object('appName', app)
                                 || CASE WHEN quota_bytes IS NULL THEN '{}'::jsonb
                                         ELSE jsonb_build_object('quotaBytes', quota_bytes) END);
END $$;

-- D1 data.cb.*: a calculated behaviour value of a user, or NULL.
CREATE FUNCTION uds.cb_get(user_id text, key text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN ddb.get_item('calculatedBehavior', uds.checked_user(user_id)::ddb.ddb_key, key::ddb.ddb_key) -> 'value';

-- D1: stores a calculated behaviour value.
CREATE FUNCTION uds.cb_put(user_id text, key text, value jsonb) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT ddb.put_item('calculatedBehavior', jsonb_build_object('user', uds.checked_user(user_id),
                        'key', uds.checked_key(key), 'value', value));
END;

-- D1: every calculated behaviour of a user, by key.
CREATE FUNCTION uds.cb_list(user_id text) RETURNS TABLE (key text, value jsonb)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i ->> 'key', i -> 'value' FROM ddb.query('calculatedBehavior', uds.checked_user(user_id)::ddb.ddb_key) i;
END;

-- D3 data.app.*: stores a JSON value of a user in an app.
CREATE FUNCTION uds.json_put(app text, user_id text, key text, value jsonb) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT ddb.put_item('appDataJson', jsonb_build_object('appUser', uds.app_user(app, user_id),
                        'key', uds.checked_key(key), 'appName', app, 'user', user_id, 'appKey', app || '#' || key,
                        'value', value));
END;

-- D3: a JSON value, or NULL.
CREATE FUNCTION uds.json_get(app text, user_id text, key text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN ddb.get_item('appDataJson', uds.app_user(app, user_id)::ddb.ddb_key, key::ddb.ddb_key) -> 'value';

-- D3: stores a binary value of a user in an app.
CREATE FUNCTION uds.blob_put(app text, user_id text, key text, value bytea) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT ddb.put_item('appDataBlob', jsonb_build_object('appUser', uds.app_user(app, user_id),
                        'key', uds.checked_key(key), 'appName', app, 'user', user_id, 'appKey', app || '#' || key,
                        'value', jsonb_build_object('$B', translate(encode(value, 'base64'), E'\n', ''))));
END;

-- D3: a binary value, or NULL.
CREATE FUNCTION uds.blob_get(app text, user_id text, key text) RETURNS bytea
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN decode(ddb.get_item('appDataBlob', uds.app_user(app, user_id)::ddb.ddb_key, key::ddb.ddb_key) -> 'value' ->> '$B',
              'base64');

-- D3: deletes a value of either kind ('json' or 'blob'); true when there was one.
CREATE FUNCTION uds.data_delete(kind text, app text, user_id text, key text) RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF kind NOT IN ('json', 'blob') THEN
        PERFORM ddb.invalid_parameter(format('kind is json or blob, not %L', kind));
    END IF;
    RETURN ddb.delete_item(CASE kind WHEN 'json' THEN 'appDataJson' ELSE 'appDataBlob' END,
                           uds.app_user(app, user_id)::ddb.ddb_key, key::ddb.ddb_key) IS NOT NULL;
END $$;

-- D2 data.user.*: created content, stored as app data of the reserved app hmh.
CREATE FUNCTION uds.content_put(user_id text, key text, value jsonb) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
RETURN uds.json_put(uds.created_content_app(), user_id, key, value);

-- D2: a created content value, or NULL.
CREATE FUNCTION uds.content_get(user_id text, key text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN uds.json_get(uds.created_content_app(), user_id, key);

-- D4: a user's usage of an app, recomputed from the data: both tables,
-- hash key <appName>#<user>, every key, DynamoDB item sizes, in the pages a
-- Query reads them in (a page ends before the item that would take it past
-- 1 MB), one row per page.
CREATE FUNCTION uds.quota_pages(app text, user_id text)
RETURNS TABLE (table_name text, page integer, items bigint, bytes bigint, last_key text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    WITH RECURSIVE rows AS (
        SELECT d.table_name, d.key, d.size, row_number() OVER (PARTITION BY d.table_name ORDER BY d.key::ddb.ddb_key) AS n
        FROM (SELECT 'appDataJson' AS table_name, t.sk::text AS key, t.item_size::bigint AS size
              FROM uds."appDataJson" t WHERE t.pk = uds.app_user(app, user_id)::ddb.ddb_key
              UNION ALL
              SELECT 'appDataBlob', t.sk::text, t.item_size
              FROM uds."appDataBlob" t WHERE t.pk = uds.app_user(app, user_id)::ddb.ddb_key) d),
    paged AS (
        SELECT r.table_name, r.key, r.size, r.n, 1 AS page, r.size AS page_bytes FROM rows r WHERE r.n = 1
        UNION ALL
        SELECT r.table_name, r.key, r.size, r.n,
               p.page + (p.page_bytes + r.size > 1048576)::integer,
               CASE WHEN p.page_bytes + r.size > 1048576 THEN r.size ELSE p.page_bytes + r.size END
        FROM paged p JOIN rows r ON r.table_name = p.table_name AND r.n = p.n + 1)
    SELECT table_name, page, count(*), sum(size)::bigint, (array_agg(key ORDER BY n DESC))[1]
    FROM paged GROUP BY table_name, page ORDER BY table_name, page;
END;

-- D4: a user's usage of an app in bytes, recomputed from the data.
CREATE FUNCTION uds.quota_used(app text, user_id text) RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT coalesce(sum(t.item_size), 0)::bigint FROM uds."appDataJson" t WHERE t.pk = uds.app_user(app, user_id)::ddb.ddb_key)
     + (SELECT coalesce(sum(t.item_size), 0)::bigint FROM uds."appDataBlob" t WHERE t.pk = uds.app_user(app, user_id)::ddb.ddb_key);

-- D5 data.admin.users: the users storing data for an app, across both
-- tables, keys only, a page of at most page_size after after_user.
CREATE FUNCTION uds.app_users(app text, after_user text DEFAULT NULL, page_size integer DEFAULT 100)
RETURNS SETOF text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT DISTINCT substr(k, length(app) + 2) COLLATE "C" AS user_id
    FROM (SELECT t.pk::text AS k FROM uds."appDataJson" t WHERE t.pk ^@ (uds.checked_app(app) || '#')::ddb.ddb_key
          UNION ALL
          SELECT t.pk::text FROM uds."appDataBlob" t WHERE t.pk ^@ (uds.checked_app(app) || '#')::ddb.ddb_key) keys
    WHERE after_user IS NULL OR substr(k, length(app) + 2) COLLATE "C" > after_user COLLATE "C"
    ORDER BY 1 LIMIT page_size;
END;

-- D6 data.admin.apps: the apps a user stores data in, through the userIndex
-- of both tables, keys only, a page of at most page_size after after_app.
CREATE FUNCTION uds.user_apps(user_id text, after_app text DEFAULT NULL, page_size integer DEFAULT 100)
RETURNS SETOF text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT DISTINCT split_part(k, '#', 1) COLLATE "C" AS app
    FROM (SELECT i ->> 'appKey' AS k FROM ddb.query('appDataJson', uds.checked_user(user_id)::ddb.ddb_key,
                                                     index_name => 'userIndex') i
          UNION ALL
          SELECT i ->> 'appKey' FROM ddb.query('appDataBlob', uds.checked_user(user_id)::ddb.ddb_key,
                                               index_name => 'userIndex') i) keys
    WHERE after_app IS NULL OR split_part(k, '#', 1) COLLATE "C" > after_app COLLATE "C"
    ORDER BY 1 LIMIT page_size;
END;

-- D7: the stored usage of each (app, user) against the usage recomputed
-- from the data; the rows that drifted.  With repair, the stored figures
-- are set to the recomputed ones (in the same transaction).
CREATE FUNCTION uds.reconcile(repair boolean DEFAULT false)
RETURNS TABLE (app text, user_id text, stored_bytes bigint, actual_bytes bigint, stored_items integer, actual_items integer)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    drift record;
BEGIN
    FOR drift IN
        WITH actual AS (
            SELECT d.app, d.user_id, sum(d.bytes)::bigint AS bytes, count(*)::integer AS items
            FROM uds.app_data d GROUP BY d.app, d.user_id)
        SELECT coalesce(s.app, a.app) AS app, coalesce(s.user_id, a.user_id) AS user_id,
               coalesce(s.bytes, 0) AS stored_bytes, coalesce(a.bytes, 0) AS actual_bytes,
               coalesce(s.items, 0) AS stored_items, coalesce(a.items, 0) AS actual_items
        FROM uds.usage s FULL JOIN actual a ON a.app = s.app AND a.user_id = s.user_id
        WHERE coalesce(s.bytes, 0) <> coalesce(a.bytes, 0) OR coalesce(s.items, 0) <> coalesce(a.items, 0)
        ORDER BY 1, 2
    LOOP
        app := drift.app;
        user_id := drift.user_id;
        stored_bytes := drift.stored_bytes;
        actual_bytes := drift.actual_bytes;
        stored_items := drift.stored_items;
        actual_items := drift.actual_items;
        RETURN NEXT;
        IF repair THEN
            -- writers of this (app, user) hold the usage item's lock until they commit: wait for them,
            -- then count again, so that no write is left out of the figure
            PERFORM FROM uds."appUsage" t WHERE t.pk = (drift.app || '#' || drift.user_id)::ddb.ddb_key FOR UPDATE;
            PERFORM set_config('uds.reconciling', 'on', true);
            PERFORM ddb.put_item('appUsage', jsonb_build_object('appUser', drift.app || '#' || drift.user_id,
                                 'appName', drift.app, 'user', drift.user_id,
                                 'bytes', uds.quota_used(drift.app, drift.user_id),
                                 'items', (SELECT count(*) FROM uds.app_data d
                                           WHERE d.app = drift.app AND d.user_id = drift.user_id)));
            PERFORM set_config('uds.reconciling', 'off', true);
        END IF;
    END LOOP;
END $$;

-- Example data: an app with a small quota, a user's calculated behaviour,
-- JSON and blob data, created content.
CREATE FUNCTION uds.load_example_data() RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM uds.register_app('reader', quota_bytes => 4096);
    PERFORM uds.register_app('mathtutor');
    PERFORM uds.cb_put('u-100', 'reading.level', '{"level": 4, "updated": "2026-03-01"}');
    PERFORM uds.cb_put('u-100', 'streak.days', '12');
    PERFORM uds.json_put('reader', 'u-100', 'bookmarks', '[{"book": "b-1", "page": 42}]');
    PERFORM uds.json_put('reader', 'u-100', 'settings', '{"font": "large", "theme": "dark"}');
    PERFORM uds.blob_put('reader', 'u-100', 'avatar.png', '\x89504e470d0a1a0a'::bytea);
    PERFORM uds.json_put('mathtutor', 'u-100', 'progress', '{"unit": 3}');
    PERFORM uds.json_put('reader', 'u-200', 'settings', '{"font": "small"}');
    PERFORM uds.content_put('u-100', 'note-1', '{"text": "My first note"}');
    RETURN 'u-100';
END $$;

-- ===========================================================================
-- Model underwriting (../shared/catalog.md W1-W18; docs/models/underwriting.md)
--
-- One table per environment, "<environment>-underwriting" in schema
-- underwriting (PK/SK, GSI1, GSI2, TTL on ttl), made by
-- underwriting.create_environment: prod and test side by side are one call
-- each.  Users' float profiles (versioned), temporary profiles, rule
-- outcomes, evaluation results, historical evaluations; rulebooks and their
-- audit trail, which a trigger writes on every rulebook change, in the same
-- transaction, whatever path changed it.  Amounts are integer cents.
-- ===========================================================================

CREATE SCHEMA underwriting;
COMMENT ON SCHEMA underwriting IS 'The underwriting model (ddb_model): float profiles, evaluations, rulebooks, per environment';

-- How long rule outcomes and evaluation results live: 32 days.
CREATE FUNCTION underwriting.result_ttl_days() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 32;

-- The DynamoDB name of an environment's table.
CREATE FUNCTION underwriting.table_name(environment text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF environment IS NULL OR environment !~ '^[a-z0-9][a-z0-9_.-]{0,39}$' THEN
        PERFORM ddb.invalid_parameter(format('an environment is 1 to 40 lower-case letters, digits, _ . -, not %L', environment));
    END IF;
    RETURN environment || '-underwriting';
END $$;

-- An RFC 3339 timestamp of the items (2024-02-10T14:30:00Z) as a timestamptz; raises for other text.
CREATE FUNCTION underwriting.parse_time(ts text, what text) RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- to the second, as the seed writes them: keys then sort as time does
    IF ts IS NULL OR ts !~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$' THEN
        PERFORM ddb.invalid_parameter(format('%s must be an RFC 3339 UTC timestamp like 2024-02-10T14:30:00Z, not %s',
                                             what, coalesce(ts, 'null')));
    END IF;
    RETURN ts::timestamptz;
EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format THEN
    PERFORM ddb.invalid_parameter(format('%s is not a valid timestamp: %s', what, ts));
END $$;

-- A timestamp as the items write it: RFC 3339 in UTC, to the second.
CREATE FUNCTION underwriting.rfc3339(ts timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');

-- Raises unless every amount in the JSON paths given is a whole number of cents.
CREATE FUNCTION underwriting.check_cents(item jsonb, what text, VARIADIC paths text[]) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bad jsonb;
BEGIN
    SELECT v INTO bad FROM unnest(paths) p, jsonb_path_query(item, p::jsonpath) v
    WHERE CASE WHEN jsonb_typeof(v) = 'number' THEN v::text::numeric <> trunc(v::text::numeric) ELSE true END LIMIT 1;
    IF bad IS NOT NULL THEN
        PERFORM ddb.invalid_parameter(format('%s: amounts are whole numbers of cents, not %s', what, bad));
    END IF;
END $$;

-- Checks the shape of an underwriting item (BEFORE INSERT OR UPDATE),
-- whatever path wrote it: item_type, keys and attributes that agree, TTLs
-- of the rules (32 days for rule outcomes and results, expires_on for
-- temporary profiles, none for the permanent items), amounts in cents.
CREATE FUNCTION underwriting.check_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb;
    pk text;
    sk text;
    what text;
    kind text;
    want_ttl bigint;
BEGIN
    -- W17: the audit trail is written by its trigger only, and never changed
    -- (deletes reach this function only for audit items: check_audit_delete)
    IF TG_OP = 'DELETE' THEN
        PERFORM ddb.invalid_parameter('the rulebook audit trail cannot be deleted (W17)');
    END IF;
    i := NEW.item;
    pk := NEW.pk::text;
    sk := NEW.sk::text;
    what := format('%s %s', pk, sk);
    IF pk = 'RULEBOOKCONFIGUPDATE' AND (TG_OP = 'UPDATE' OR pg_trigger_depth() < 2) THEN
        PERFORM ddb.invalid_parameter('the rulebook audit trail is written by the extension on every rulebook change, and never changed (W17)');
    END IF;
    kind := CASE
        WHEN pk ~ '^USER#' AND sk ~ '^PROFILE#' THEN 'float_profile'
        WHEN pk ~ '^USER#' AND sk ~ '^TEMP_FLOAT_PROFILE#EXPIRES#' THEN 'temp_float_profile'
        WHEN pk ~ '^USER#' AND sk ~ '^RULE_OUTCOME#' THEN 'rule_outcome'
        WHEN pk ~ '^USER#' AND sk ~ '^EVAL_RESULTS#' THEN 'evaluation_result'
        WHEN pk ~ '^USER#' AND sk ~ '^HISTORICAL_EVALUATION#' THEN 'historical_evaluation'
        WHEN pk = 'RULEBOOK' AND sk ~ '^RULEBOOK#' THEN 'rulebook'
        WHEN pk = 'RULEBOOKCONFIGUPDATE' AND sk ~ '^USER#' THEN 'rulebook_update'
    END;
    IF kind IS NULL THEN
        PERFORM ddb.invalid_parameter(format('%s is no underwriting item (see docs/models/underwriting.md)', what));
    END IF;
    IF i ->> 'item_type' IS DISTINCT FROM kind THEN
        PERFORM ddb.invalid_parameter(format('%s: item_type must be %s', what, kind));
    END IF;
    IF pk ~ '^USER#' AND i ->> 'user_id' IS DISTINCT FROM substr(pk, 6) THEN
        PERFORM ddb.invalid_parameter(format('%s: user_id must be %s', what, substr(pk, 6)));
    END IF;
    CASE kind
        WHEN 'float_profile' THEN
            IF 'PROFILE#' || (i ->> 'created_on') IS DISTINCT FROM sk THEN
                PERFORM ddb.invalid_parameter(format('%s: created_on must be %s', what, substr(sk, 9)));
            END IF;
            PERFORM underwriting.parse_time(i ->> 'created_on', 'created_on');
        WHEN 'temp_float_profile' THEN
            IF 'TEMP_FLOAT_PROFILE#EXPIRES#' || (i ->> 'expires_on') IS DISTINCT FROM sk THEN
                PERFORM ddb.invalid_parameter(format('%s: expires_on must be %s', what, substr(sk, 28)));
            END IF;
            want_ttl := floor(date_part('epoch', underwriting.parse_time(i ->> 'expires_on', 'expires_on')))::bigint;
        WHEN 'rule_outcome' THEN
            IF 'RULE_OUTCOME#' || (i ->> 'rule_name') IS DISTINCT FROM sk OR jsonb_typeof(i -> 'loan') IS DISTINCT FROM 'number' THEN
                PERFORM ddb.invalid_parameter(format('%s: needs rule_name matching its key and loan', what));
            END IF;
            want_ttl := floor(date_part('epoch', underwriting.parse_time(i ->> 'updated_date', 'updated_date')))::bigint
                        + underwriting.result_ttl_days() * 86400;
        WHEN 'evaluation_result' THEN
            IF NOT (i ? 'item_id' AND i ? 'account_id' AND i ? 'created_date' AND i ? 'result_id')
               OR format('EVAL_RESULTS#%s#%s#%s', i ->> 'item_id', i ->> 'account_id', i ->> 'created_date') <> sk
               OR i ->> 'GSI1PK' IS DISTINCT FROM pk OR i ->> 'GSI1SK' IS DISTINCT FROM 'EVAL_RESULTS#' || (i ->> 'result_id') THEN
                PERFORM ddb.invalid_parameter(format('%s: item_id, account_id, created_date and result_id must match its keys', what));
            END IF;
            want_ttl := floor(date_part('epoch', underwriting.parse_time(i ->> 'created_date', 'created_date')))::bigint
                        + underwriting.result_ttl_days() * 86400;
        WHEN 'historical_evaluation' THEN
            IF NOT (i ? 'item_id' AND i ? 'account_id' AND i ? 'created_date' AND i ? 'result_id')
               OR format('HISTORICAL_EVALUATION#%s#%s#%s', i ->> 'item_id', i ->> 'account_id', i ->> 'created_date') <> sk THEN
                PERFORM ddb.invalid_parameter(format('%s: result_id, item_id, account_id and created_date must match its key', what));
            END IF;
            PERFORM underwriting.parse_time(i ->> 'created_date', 'created_date');
        WHEN 'rulebook' THEN
            IF 'RULEBOOK#' || (i ->> 'rulebook_id') IS DISTINCT FROM sk OR (i ->> 'type') IS DISTINCT FROM 'floats'
               AND (i ->> 'type') IS DISTINCT FROM 'loan'
               OR i ->> 'GSI1PK' IS DISTINCT FROM 'RULEBOOK_TYPE#' || (i ->> 'type') OR i ->> 'GSI1SK' IS DISTINCT FROM sk THEN
                PERFORM ddb.invalid_parameter(format('%s: needs rulebook_id matching its key, type floats or loan, and GSI1 keys', what));
            END IF;
            IF jsonb_typeof(coalesce(i -> 'rules', '[]')) <> 'array'
               OR EXISTS (SELECT FROM unnest(ARRAY['priority', 'apply_to']) a
                          WHERE i ? a AND (jsonb_typeof(i -> a) <> 'number' OR (i ->> a)::numeric <> trunc((i ->> a)::numeric))) THEN
                PERFORM ddb.invalid_parameter(format('%s: rules is a list, priority and apply_to whole numbers', what));
            END IF;
        ELSE
            NULL;
    END CASE;
    IF want_ttl IS NULL AND i ? 'ttl' THEN
        PERFORM ddb.invalid_parameter(format('%s: a %s is kept for good and has no ttl', what, kind));
    END IF;
    IF want_ttl IS NOT NULL AND (jsonb_typeof(i -> 'ttl') IS DISTINCT FROM 'number' OR (i ->> 'ttl')::numeric <> want_ttl) THEN
        PERFORM ddb.invalid_parameter(format('%s: ttl must be %s', what, want_ttl));
    END IF;
    PERFORM underwriting.check_cents(i, what, '$.floats[*].amount', '$.loans[*].amount_cents', '$.amount', '$.loan',
                                     '$.float_results.amount', '$.loan_results.amount',
                                     '$.float_results.results[*].result', '$.loan_results.results[*].result',
                                     '$.cfi_state.current_limit', '$.cfi_state.account_balance', '$.cfi_state.highest_float');
    RETURN NEW;
END $$;

-- W17: writes the audit item of a rulebook change (AFTER a write of a
-- RULEBOOK item): who (the setting underwriting.update_user, else the
-- session user), when, and a snapshot of every rulebook, in the same
-- transaction.
CREATE FUNCTION underwriting.audit_rulebooks() RETURNS trigger
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
    PERFORM pg_advisory_xact_lock(hashtext('underwriting audit ' || tbl));
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

-- Creates the table of an environment, "<environment>-underwriting", with
-- GSI1, GSI2, TTL on ttl, the item checks, the rulebook audit, and typed
-- views <environment>_profiles, _evaluations and _rulebooks.
CREATE FUNCTION underwriting.create_environment(environment text) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tbl text := underwriting.table_name(environment);
BEGIN
    PERFORM ddb.create_table(tbl, 'PK', 'S', 'SK', 'S', schema_name => 'underwriting', ttl_attribute => 'ttl');
    PERFORM ddb.create_index(tbl, 'GSI1', 'GSI1PK', 'S', 'GSI1SK', 'S');
    PERFORM ddb.create_index(tbl, 'GSI2', 'GSI2PK', 'S', 'GSI2SK', 'S');
    -- the audit's triggers fire for the rows they concern only (WHEN), not for every profile and result
    EXECUTE format('CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON underwriting.%I '
                   'FOR EACH ROW EXECUTE FUNCTION underwriting.check_item()', ddb.relation_name(tbl));
    EXECUTE format('CREATE TRIGGER check_audit_delete BEFORE DELETE ON underwriting.%I '
                   'FOR EACH ROW WHEN (OLD.pk::text = ''RULEBOOKCONFIGUPDATE'') EXECUTE FUNCTION underwriting.check_item()',
                   ddb.relation_name(tbl));
    EXECUTE format('CREATE TRIGGER audit_rulebooks AFTER INSERT OR UPDATE ON underwriting.%I '
                   'FOR EACH ROW WHEN (NEW.pk::text = ''RULEBOOK'') EXECUTE FUNCTION underwriting.audit_rulebooks(%L)',
                   ddb.relation_name(tbl), tbl);
    EXECUTE format('CREATE TRIGGER audit_rulebook_deletes AFTER DELETE ON underwriting.%I '
                   'FOR EACH ROW WHEN (OLD.pk::text = ''RULEBOOK'') EXECUTE FUNCTION underwriting.audit_rulebooks(%L)',
                   ddb.relation_name(tbl), tbl);
    -- a result id names one evaluation result of a user (W7)
    EXECUTE format($i$CREATE UNIQUE INDEX %I ON underwriting.%I (pk, (item OPERATOR(pg_catalog.->>) 'GSI1SK'))
                      WHERE item OPERATOR(pg_catalog.->>) 'item_type' OPERATOR(pg_catalog.=) 'evaluation_result'$i$,
                   ddb.relation_name(tbl || '$result_id'), ddb.relation_name(tbl));
    -- typed views of the environment, expired items left out (W18)
    EXECUTE format($v$CREATE VIEW underwriting.%I AS
        SELECT substr(t.pk::text, 6) AS user_id, t.item ->> 'item_type' AS item_type,
               coalesce(t.item ->> 'created_on', t.item ->> 'expires_on') AS created_on, t.item ->> 'expires_on' AS expires_on,
               (t.item ->> 'is_float_enabled')::boolean AS is_float_enabled, (t.item ->> 'is_loan_enabled')::boolean AS is_loan_enabled,
               t.item -> 'floats' AS floats, t.item -> 'loans' AS loans, t.item ->> 'reason' AS reason
        FROM underwriting.%I t
        WHERE (t.sk OPERATOR(pg_catalog.^@) 'PROFILE#'::ddb.ddb_key OR t.sk OPERATOR(pg_catalog.^@) 'TEMP_FLOAT_PROFILE#'::ddb.ddb_key)
          AND ddb.ttl_visible(t.expires_at)$v$, environment || '_profiles', ddb.relation_name(tbl));
    EXECUTE format($v$CREATE VIEW underwriting.%I AS
        SELECT t.item ->> 'result_id' AS result_id, substr(t.pk::text, 6) AS user_id, t.item ->> 'item_type' AS item_type,
               t.item ->> 'item_id' AS item_id, t.item ->> 'account_id' AS account_id,
               (t.item -> 'float_results' ->> 'approved')::boolean AS float_approved,
               (t.item -> 'float_results' ->> 'amount')::bigint AS float_amount_cents,
               (t.item -> 'loan_results' ->> 'approved')::boolean AS loan_approved,
               (t.item ->> 'amount')::bigint AS taken_amount_cents, (t.item ->> 'created_date')::timestamptz AS created_date
        FROM underwriting.%I t
        WHERE (t.sk OPERATOR(pg_catalog.^@) 'EVAL_RESULTS#'::ddb.ddb_key OR t.sk OPERATOR(pg_catalog.^@) 'HISTORICAL_EVALUATION#'::ddb.ddb_key)
          AND ddb.ttl_visible(t.expires_at)$v$, environment || '_evaluations', ddb.relation_name(tbl));
    EXECUTE format($v$CREATE VIEW underwriting.%I AS
        SELECT t.item ->> 'rulebook_id' AS rulebook_id, t.item ->> 'rulebook_name' AS rulebook_name, t.item ->> 'type' AS type,
               (t.item ->> 'priority')::integer AS priority, (t.item ->> 'apply_to')::integer AS apply_to,
               (t.item ->> 'superseding')::boolean AS superseding, jsonb_array_length(t.item -> 'rules') AS rules,
               t.item ->> 'last_updated' AS last_updated
        FROM underwriting.%I t WHERE t.pk OPERATOR(pg_catalog.=) 'RULEBOOK'::ddb.ddb_key$v$,
        environment || '_rulebooks', ddb.relation_name(tbl));
    RETURN tbl;
END $$;

-- Drops an environment: its views, then its table (ddb.delete_table).
CREATE FUNCTION underwriting.drop_environment(environment text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tbl text := underwriting.table_name(environment);
BEGIN
    EXECUTE format('DROP VIEW IF EXISTS underwriting.%I, underwriting.%I, underwriting.%I',
                   environment || '_profiles', environment || '_evaluations', environment || '_rulebooks');
    PERFORM ddb.delete_table(tbl);
END $$;

-- The partition key of a user.
CREATE FUNCTION underwriting.user_pk(user_id text) RETURNS ddb.ddb_key
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF user_id IS NULL OR user_id !~ '^[^#\s]{1,200}$' THEN
        PERFORM ddb.invalid_parameter(format('a user id is 1 to 200 characters without # or spaces, not %L', user_id));
    END IF;
    RETURN ('USER#' || user_id)::ddb.ddb_key;
END $$;

-- Writes a new version of a user's float profile (settings: is_float_enabled,
-- is_loan_enabled, cfi_enabled, floats, loans); returns its created_on.
CREATE FUNCTION underwriting.put_float_profile(environment text, user_id text, settings jsonb,
                                               reason text DEFAULT NULL, notes text DEFAULT NULL,
                                               created_on timestamptz DEFAULT now())
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    created text := underwriting.rfc3339(created_on);
BEGIN
    PERFORM ddb.put_item(underwriting.table_name(environment), coalesce(settings, '{}') || jsonb_build_object(
        'PK', underwriting.user_pk(user_id)::text, 'SK', 'PROFILE#' || created, 'item_type', 'float_profile',
        'user_id', user_id, 'created_on', created)
        || jsonb_strip_nulls(jsonb_build_object('reason', reason, 'notes', notes)),
        condition => 'attribute_not_exists(SK)');
    RETURN created;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('user %s already has a profile created at %s', user_id, created);
END $$;

-- W1: a user's latest float profile (begins_with PROFILE#, descending, Limit 1), or NULL.
CREATE FUNCTION underwriting.latest_profile(environment text, user_id text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'begins_with',
                                'PROFILE#', ascending => false, max_items => 1) i);

-- W2: a user's profile history, oldest first.
CREATE FUNCTION underwriting.profile_history(environment text, user_id text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'begins_with', 'PROFILE#') i;
END;

-- Writes a temporary float profile that lasts until expires_on (its ttl).
CREATE FUNCTION underwriting.put_temporary_profile(environment text, user_id text, expires_on timestamptz,
                                                   settings jsonb, reason text DEFAULT NULL,
                                                   created_on timestamptz DEFAULT now())
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    expires text := underwriting.rfc3339(expires_on);
BEGIN
    PERFORM ddb.put_item(underwriting.table_name(environment), coalesce(settings, '{}') || jsonb_build_object(
        'PK', underwriting.user_pk(user_id)::text, 'SK', 'TEMP_FLOAT_PROFILE#EXPIRES#' || expires,
        'item_type', 'temp_float_profile', 'user_id', user_id, 'created_on', underwriting.rfc3339(created_on),
        'expires_on', expires, 'ttl', floor(date_part('epoch', expires::timestamptz))::bigint)
        || jsonb_strip_nulls(jsonb_build_object('reason', reason)));
    RETURN expires;
END $$;

-- W3: a user's active temporary profiles: SK > TEMP_FLOAT_PROFILE#EXPIRES#<now>,
-- bounded to that prefix so that no other kind of item comes with them.
CREATE FUNCTION underwriting.active_temporary_profiles(environment text, user_id text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'between',
                            ('TEMP_FLOAT_PROFILE#EXPIRES#' || underwriting.rfc3339(now()))::ddb.ddb_key,
                            ddb.prefix_upper_bound('TEMP_FLOAT_PROFILE#EXPIRES#')) i
    WHERE (i ->> 'SK')::ddb.ddb_key > ('TEMP_FLOAT_PROFILE#EXPIRES#' || underwriting.rfc3339(now()))::ddb.ddb_key;
END;

-- W4: all of a user's temporary profiles that have not expired out of reads (W18).
CREATE FUNCTION underwriting.all_temporary_profiles(environment text, user_id text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'begins_with',
                            'TEMP_FLOAT_PROFILE#') i;
END;

-- W15: the profile in effect: the latest float profile with the settings
-- of the active temporary profile created last laid over it (a temporary
-- profile overrides what it sets, floats say, and leaves the rest).
CREATE FUNCTION underwriting.effective_profile(environment text, user_id text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT CASE WHEN latest IS NULL AND temp IS NULL THEN NULL
                    ELSE coalesce(latest, '{}') || coalesce(temp, '{}') END
        FROM (SELECT underwriting.latest_profile(environment, user_id) AS latest,
                     (SELECT i FROM underwriting.active_temporary_profiles(environment, user_id) i
                      ORDER BY i ->> 'created_on' COLLATE "C" DESC, (i ->> 'SK')::ddb.ddb_key DESC LIMIT 1) AS temp) p);

-- Writes the outcome of one rule for a user (ttl: updated_date + 32 days).
CREATE FUNCTION underwriting.put_rule_outcome(environment text, user_id text, rule_name text, loan integer,
                                              error boolean DEFAULT false, features jsonb DEFAULT '{}',
                                              updated_date timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    updated text := underwriting.rfc3339(updated_date);
BEGIN
    PERFORM ddb.put_item(underwriting.table_name(environment), jsonb_build_object(
        'PK', underwriting.user_pk(user_id)::text, 'SK', 'RULE_OUTCOME#' || rule_name, 'item_type', 'rule_outcome',
        'user_id', user_id, 'rule_name', rule_name, 'loan', loan, 'error', error, 'features', coalesce(features, '{}'),
        'updated_date', updated,
        'ttl', floor(date_part('epoch', updated::timestamptz))::bigint + underwriting.result_ttl_days() * 86400));
END $$;

-- W5: every unexpired rule outcome of a user, by rule name.
CREATE FUNCTION underwriting.rule_outcomes(environment text, user_id text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'begins_with',
                            'RULE_OUTCOME#') i;
END;

-- Writes an evaluation result (result: float_results, loan_results,
-- cfi_state; ttl: created_date + 32 days); returns its result_id.
CREATE FUNCTION underwriting.put_evaluation_result(environment text, user_id text, item_id text, account_id text,
                                                   result jsonb, created_date timestamptz DEFAULT now(),
                                                   result_id text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    created text := underwriting.rfc3339(created_date);
    id text := coalesce(result_id, floor(date_part('epoch', created_date))::bigint || '_' || gen_random_uuid());
BEGIN
    IF item_id IS NULL OR account_id IS NULL OR item_id !~ '^[^#\s]+$' OR account_id !~ '^[^#\s]+$' THEN
        PERFORM ddb.invalid_parameter('item and account ids are words without # or spaces');
    END IF;
    PERFORM ddb.put_item(underwriting.table_name(environment), coalesce(result, '{}') || jsonb_build_object(
        'PK', underwriting.user_pk(user_id)::text,
        'SK', format('EVAL_RESULTS#%s#%s#%s', item_id, account_id, created),
        'GSI1PK', underwriting.user_pk(user_id)::text, 'GSI1SK', 'EVAL_RESULTS#' || id,
        'item_type', 'evaluation_result', 'result_id', id, 'user_id', user_id, 'item_id', item_id,
        'account_id', account_id, 'created_date', created,
        'ttl', floor(date_part('epoch', created::timestamptz))::bigint + underwriting.result_ttl_days() * 86400));
    RETURN id;
END $$;

-- W6: the latest evaluation result of a user for one item and account
-- (descending, Limit 1); the segment-aware prefix keeps item-1 from
-- matching item-10.
CREATE FUNCTION underwriting.latest_evaluation(environment text, user_id text, item_id text, account_id text)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'under',
                                ddb.key('EVAL_RESULTS', item_id, account_id), ascending => false, max_items => 1) i);

-- W7: an evaluation result by its result id (GSI1), or NULL.
CREATE FUNCTION underwriting.evaluation_by_id(environment text, user_id text, result_id text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT ddb.get_item(underwriting.table_name(environment), (i ->> 'PK')::ddb.ddb_key, (i ->> 'SK')::ddb.ddb_key)
        FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), '=',
                       ('EVAL_RESULTS#' || result_id)::ddb.ddb_key, index_name => 'GSI1', max_items => 1) i);

-- W8: a user's unexpired evaluation results (ttl > now), the newest n.
CREATE FUNCTION underwriting.recent_results(environment text, user_id text, n integer DEFAULT 10) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'begins_with',
                            'EVAL_RESULTS#', filter => '#t > :now', names => '{"#t": "ttl"}',
                            vals => jsonb_build_object(':now', floor(date_part('epoch', now()))::bigint)) i
    ORDER BY i ->> 'created_date' COLLATE "C" DESC LIMIT n;
END;

-- W16: a float or loan was taken: records a HistoricalEvaluation from the
-- evaluation result, kept for good (no ttl); returns its sort key.
CREATE FUNCTION underwriting.take_float(environment text, user_id text, result_id text, amount bigint,
                                        float_id text DEFAULT '', loan_id text DEFAULT '')
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    result jsonb := underwriting.evaluation_by_id(environment, user_id, result_id);
    sk text;
BEGIN
    IF result IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found',
            MESSAGE = format('user %s has no evaluation result %s (or it expired)', user_id, result_id);
    END IF;
    sk := format('HISTORICAL_EVALUATION#%s#%s#%s', result ->> 'item_id', result ->> 'account_id', result ->> 'created_date');
    PERFORM ddb.put_item(underwriting.table_name(environment), jsonb_build_object(
        'PK', result ->> 'PK', 'SK', sk, 'item_type', 'historical_evaluation', 'result_id', result_id,
        'user_id', user_id, 'item_id', result ->> 'item_id', 'account_id', result ->> 'account_id',
        'amount', amount, 'float_id', float_id, 'loan_id', loan_id, 'created_date', result ->> 'created_date')
        || jsonb_strip_nulls(jsonb_build_object('float_results', result -> 'float_results',
                                                'loan_results', result -> 'loan_results',
                                                'cfi_state', result -> 'cfi_state')),
        condition => 'attribute_not_exists(SK)');
    RETURN sk;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('evaluation %s of user %s was already taken (%s)', result_id, user_id, sk);
END $$;

-- W9: a historical evaluation by its key, or NULL.
CREATE FUNCTION underwriting.historical_evaluation(environment text, user_id text, item_id text, account_id text,
                                                   created_date text)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN ddb.get_item(underwriting.table_name(environment), underwriting.user_pk(user_id),
                    format('HISTORICAL_EVALUATION#%s#%s#%s', item_id, account_id, created_date)::ddb.ddb_key);

-- W10: all historical evaluations of a user.
CREATE FUNCTION underwriting.historical_evaluations(environment text, user_id text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'begins_with',
                            'HISTORICAL_EVALUATION#') i;
END;

-- Creates or replaces a rulebook (rulebook_id, rulebook_name, type, rules,
-- apply_to, priority, superseding, ab_group); the audit item follows (W17).
CREATE FUNCTION underwriting.put_rulebook(environment text, rulebook jsonb, update_user text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    previous text := current_setting('underwriting.update_user', true);
BEGIN
    -- the audit trigger reads who from the setting: set for this write only
    PERFORM set_config('underwriting.update_user', coalesce(update_user, previous, ''), true);
    PERFORM ddb.put_item(underwriting.table_name(environment), rulebook || jsonb_build_object(
        'PK', 'RULEBOOK', 'SK', 'RULEBOOK#' || (rulebook ->> 'rulebook_id'),
        'GSI1PK', 'RULEBOOK_TYPE#' || (rulebook ->> 'type'), 'GSI1SK', 'RULEBOOK#' || (rulebook ->> 'rulebook_id'),
        'item_type', 'rulebook', 'last_updated', underwriting.rfc3339(now())));
    PERFORM set_config('underwriting.update_user', coalesce(previous, ''), true);
END $$;

-- Deletes a rulebook; true when there was one (the audit item follows, W17).
CREATE FUNCTION underwriting.delete_rulebook(environment text, rulebook_id text, update_user text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    previous text := current_setting('underwriting.update_user', true);
    deleted boolean;
BEGIN
    PERFORM set_config('underwriting.update_user', coalesce(update_user, previous, ''), true);
    deleted := ddb.delete_item(underwriting.table_name(environment), 'RULEBOOK', ('RULEBOOK#' || rulebook_id)::ddb.ddb_key)
               IS NOT NULL;
    PERFORM set_config('underwriting.update_user', coalesce(previous, ''), true);
    RETURN deleted;
END $$;

-- W11: all rulebooks (PK = RULEBOOK).
CREATE FUNCTION underwriting.rulebooks(environment text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), 'RULEBOOK') i;
END;

-- W12: the rulebooks of a type, floats or loan (GSI1, GSI1PK = RULEBOOK_TYPE#<type>).
CREATE FUNCTION underwriting.rulebooks_by_type(environment text, type text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), ('RULEBOOK_TYPE#' || type)::ddb.ddb_key,
                            index_name => 'GSI1') i;
END;

-- W13: one rulebook, or NULL.
CREATE FUNCTION underwriting.rulebook(environment text, rulebook_id text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN ddb.get_item(underwriting.table_name(environment), 'RULEBOOK', ('RULEBOOK#' || rulebook_id)::ddb.ddb_key);

-- W14: the rulebook update history, oldest first, or newest first with a limit.
CREATE FUNCTION underwriting.rulebook_updates(environment text, newest_first boolean DEFAULT false,
                                              n integer DEFAULT NULL)
RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), 'RULEBOOKCONFIGUPDATE',
                            ascending => NOT newest_first, max_items => n) i;
END;

-- The seed's example items, in an environment: user user-12345's profile,
-- a temporary profile, a rule outcome, an evaluation result taken as a
-- float, and the core_v2 rulebook.  Dates are the seed's, moved to now so
-- that the TTLs have not passed.
CREATE FUNCTION underwriting.load_example_data(environment text) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t0 timestamptz := date_trunc('second', now()) - interval '1 day';
    result_id text;
BEGIN
    PERFORM underwriting.put_float_profile(environment, 'user-12345', '{"is_float_enabled": true, "is_loan_enabled": true,
        "cfi_enabled": true, "floats": [{"id": "1", "amount": 1000, "is_enabled": true},
        {"id": "2", "amount": 2000, "is_enabled": true}], "loans": [{"id": "1", "amount_cents": 20000, "is_enabled": true}]}',
        'Initial profile', NULL, t0 - interval '30 days');
    PERFORM underwriting.put_float_profile(environment, 'user-12345', '{"is_float_enabled": true, "is_loan_enabled": true,
        "cfi_enabled": true, "floats": [{"id": "1", "amount": 1000, "is_enabled": true},
        {"id": "2", "amount": 2000, "is_enabled": true}, {"id": "3", "amount": 3000, "is_enabled": false}],
        "loans": [{"id": "1", "amount_cents": 20000, "is_enabled": true}]}',
        'CFI limit increase to $30', 'User reached sub rank 2, float rank 3', t0);
    PERFORM underwriting.put_temporary_profile(environment, 'user-12345', t0 + interval '14 days',
        '{"is_float_enabled": true, "floats": [{"id": "1", "amount": 1000, "is_enabled": true},
        {"id": "2", "amount": 2000, "is_enabled": true}, {"id": "3", "amount": 3000, "is_enabled": true},
        {"id": "4", "amount": 4000, "is_enabled": true}]}', 'promotional_campaign_presidents_day', t0);
    PERFORM underwriting.put_rule_outcome(environment, 'user-12345', 'RuleAgeOfAccount', -1, false,
        '{"account_age_days": 180, "min_required_days": 90, "passed": true}', t0);
    result_id := underwriting.put_evaluation_result(environment, 'user-12345', 'item-abc', 'account-xyz',
        '{"float_results": {"approved": true, "amount": 3000, "deciding_rulebook": "core_v2", "status": "OK", "errors": "",
          "results": [{"rulebook_id": "core_v2", "result": -1, "calc_status": "OK", "apply_to": 10000, "priority": 100,
                       "approved": true, "is_applicable": true, "features": {"RuleAgeOfAccount": {"account_age_days": 180}}}]},
          "loan_results": {"approved": false, "amount": 0, "status": "OK"},
          "cfi_state": {"current_limit": 3000, "sub_rank": 2, "float_rank": 3, "account_balance": 120000, "highest_float": 2000}}',
        t0, floor(date_part('epoch', t0))::bigint || '_550e8400-e29b-41d4');
    PERFORM underwriting.take_float(environment, 'user-12345', result_id, 3000, 'float-789');
    PERFORM underwriting.put_rulebook(environment, '{"rulebook_id": "core_v2", "rulebook_name": "Core Float Approval v2",
        "type": "floats", "apply_to": 10000, "priority": 100, "superseding": false,
        "rules": [{"rule": "RuleGoodStanding", "rule_arn": "", "props": {}, "rule_type": "all"},
                  {"rule": "RuleAgeOfAccount", "rule_arn": "", "props": {"min_days": 90}, "rule_type": "all"},
                  {"rule": "RuleRecurringDeposits", "rule_arn": "", "props": {"lookback_days": 60, "min_deposits": 2},
                   "rule_type": "txns"}]}', 'admin@example.com');
    RETURN 'user-12345';
END $$;

-- ===========================================================================
-- Model uniflow (../shared/catalog.md U1-U7; docs/models/uniflow.md)
--
-- Six tables under the seed's names: profilesTable (META and EVENT#<ts>#<id>
-- per user, TTL on ttl), identityTable, sourcesTable (writeKeyHashIndex),
-- destinationsTable, segmentsTable, segmentMembersTable.  A write key is
-- never stored: only its sha256 digest, and it is shown once, at creation.
-- ===========================================================================

CREATE SCHEMA uniflow;
COMMENT ON SCHEMA uniflow IS 'The uniflow model (ddb_model): profiles, events, identities, sources, destinations, segments';

SELECT ddb.create_table('profilesTable', 'userId', 'S', 'sortKey', 'S', schema_name => 'uniflow', partitions => 0,
                        ttl_attribute => 'ttl');
SELECT ddb.create_table('identityTable', 'anonymousId', 'S', schema_name => 'uniflow', partitions => 0);
SELECT ddb.create_table('sourcesTable', 'id', 'S', schema_name => 'uniflow', partitions => 0);
SELECT ddb.create_index('sourcesTable', 'writeKeyHashIndex', 'writeKeyHash', 'S');
SELECT ddb.create_table('destinationsTable', 'id', 'S', schema_name => 'uniflow', partitions => 0);
SELECT ddb.create_table('segmentsTable', 'id', 'S', schema_name => 'uniflow', partitions => 0);
SELECT ddb.create_table('segmentMembersTable', 'segmentId', 'S', 'userId', 'S', schema_name => 'uniflow', partitions => 0);
SELECT ddb.own_model_table('uniflow', t)
FROM unnest(ARRAY['profilesTable', 'identityTable', 'sourcesTable', 'destinationsTable', 'segmentsTable',
                  'segmentMembersTable']) t;

-- An id of the model (userId, anonymousId, source, segment, destination ids):
-- a non-empty word without '#', which the keys use as a separator.
CREATE FUNCTION uniflow.checked_id(id text, what text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF id IS NULL OR id !~ '^[^#\s]{1,200}$' THEN
        PERFORM ddb.invalid_parameter(format('%s must be 1 to 200 characters without # or spaces, not %L', what, id));
    END IF;
    RETURN id;
END $$;

-- The sha256 hex digest of a write key: what sourcesTable stores instead of the key.
CREATE FUNCTION uniflow.write_key_hash(write_key text) RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN encode(sha256(convert_to(write_key, 'UTF8')), 'hex');

-- Checks the shape of a profilesTable item (BEFORE INSERT OR UPDATE).
CREATE FUNCTION uniflow.check_profile_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb := NEW.item;
    sk text := NEW.sk::text;
BEGIN
    PERFORM uniflow.checked_id(NEW.pk::text, 'userId');
    IF sk = 'META' THEN
        IF jsonb_typeof(i -> 'traits') IS DISTINCT FROM 'object' OR NOT i ? 'createdAt' OR NOT i ? 'updatedAt' THEN
            PERFORM ddb.invalid_parameter(format('the META item of %s needs traits (a map), createdAt and updatedAt', NEW.pk));
        END IF;
        PERFORM (i ->> 'createdAt')::timestamptz, (i ->> 'updatedAt')::timestamptz;
    ELSIF sk ~ '^EVENT#\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[^#\s]+$' THEN
        IF jsonb_typeof(i -> 'event') IS DISTINCT FROM 'string' OR NOT i ? 'timestamp' OR NOT i ? 'messageId'
           OR sk <> 'EVENT#' || (i ->> 'timestamp') || '#' || (i ->> 'messageId') THEN
            PERFORM ddb.invalid_parameter(format('the event %s of %s needs event, timestamp and messageId matching its sortKey',
                                                 sk, NEW.pk));
        END IF;
    ELSE
        PERFORM ddb.invalid_parameter(format('profilesTable holds META and EVENT#<timestamp>#<messageId> items, not %s', sk));
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uniflow."profilesTable"
    FOR EACH ROW EXECUTE FUNCTION uniflow.check_profile_item();

-- Checks the shape of a sourcesTable item: never a write key in clear.
CREATE FUNCTION uniflow.check_source_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb := NEW.item;
BEGIN
    IF i ? 'writeKey' THEN
        PERFORM ddb.invalid_parameter('a source never stores its write key, only writeKeyHash (its sha256 digest)');
    END IF;
    IF i ->> 'writeKeyHash' IS NULL OR i ->> 'writeKeyHash' !~ '^[0-9a-f]{64}$' OR i ->> 'name' IS NULL THEN
        PERFORM ddb.invalid_parameter(format('source %s needs a name and writeKeyHash, a sha256 hex digest', NEW.pk));
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uniflow."sourcesTable"
    FOR EACH ROW EXECUTE FUNCTION uniflow.check_source_item();

-- U4: one source per write key, whoever writes.
CREATE UNIQUE INDEX "sourcesTable: one source per write key (U4)"
    ON uniflow."sourcesTable" ((item OPERATOR(pg_catalog.->>) 'writeKeyHash'));

-- Checks an identityTable item: ids of the model, and a link that never
-- moves to another user (U3), whoever writes.
CREATE FUNCTION uniflow.check_identity_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM uniflow.checked_id(NEW.pk::text, 'anonymousId'), uniflow.checked_id(NEW.item ->> 'userId', 'userId');
    IF TG_OP = 'UPDATE' AND OLD.item ->> 'userId' IS DISTINCT FROM NEW.item ->> 'userId' THEN
        RAISE EXCEPTION USING ERRCODE = 'unique_violation',
            MESSAGE = format('anonymousId %s is already linked to another user', NEW.pk);
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uniflow."identityTable"
    FOR EACH ROW EXECUTE FUNCTION uniflow.check_identity_item();

-- Checks a segmentMembersTable item: ids of the model.
CREATE FUNCTION uniflow.check_member_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM uniflow.checked_id(NEW.pk::text, 'segmentId'), uniflow.checked_id(NEW.sk::text, 'userId');
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uniflow."segmentMembersTable"
    FOR EACH ROW EXECUTE FUNCTION uniflow.check_member_item();

-- Typed rows.
CREATE TYPE uniflow.profile AS (user_id text, traits jsonb, created_at timestamptz, updated_at timestamptz);
CREATE TYPE uniflow.event AS (user_id text, at timestamptz, message_id text, event text, properties jsonb);
CREATE TYPE uniflow.source AS (id text, name text, write_key_hash text, created_at timestamptz);
CREATE TYPE uniflow.new_source AS (id text, write_key text);

-- The typed profile of a META item (NULL for none).
CREATE FUNCTION uniflow.profile_of(item jsonb) RETURNS uniflow.profile
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(item ->> 'userId', item -> 'traits', (item ->> 'createdAt')::timestamptz,
           (item ->> 'updatedAt')::timestamptz)::uniflow.profile;

-- The typed row of an EVENT# item.
CREATE FUNCTION uniflow.event_of(item jsonb) RETURNS uniflow.event
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(item ->> 'userId', (item ->> 'timestamp')::timestamptz, item ->> 'messageId', item ->> 'event',
           item -> 'properties')::uniflow.event;

-- The typed row of a sourcesTable item (NULL for none).
CREATE FUNCTION uniflow.source_of(item jsonb) RETURNS uniflow.source
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(item ->> 'id', item ->> 'name', item ->> 'writeKeyHash', (item ->> 'createdAt')::timestamptz)::uniflow.source;

CREATE VIEW uniflow.profiles AS
    SELECT p.* FROM uniflow."profilesTable" t, uniflow.profile_of(t.item) p
    WHERE t.sk OPERATOR(pg_catalog.=) 'META'::ddb.ddb_key AND ddb.ttl_visible(t.expires_at);
CREATE VIEW uniflow.events AS
    SELECT e.* FROM uniflow."profilesTable" t, uniflow.event_of(t.item) e
    WHERE t.sk OPERATOR(pg_catalog.^@) 'EVENT#'::ddb.ddb_key AND ddb.ttl_visible(t.expires_at);
CREATE VIEW uniflow.identities AS
    SELECT t.item ->> 'anonymousId' AS anonymous_id, t.item ->> 'userId' AS user_id,
           (t.item ->> 'linkedAt')::timestamptz AS linked_at
    FROM uniflow."identityTable" t;
CREATE VIEW uniflow.sources AS
    SELECT s.* FROM uniflow."sourcesTable" t, uniflow.source_of(t.item) s;
CREATE VIEW uniflow.segments AS
    SELECT t.item ->> 'id' AS id, t.item ->> 'name' AS name, t.item -> 'rules' AS rules FROM uniflow."segmentsTable" t;
CREATE VIEW uniflow.segment_members AS
    SELECT t.item ->> 'segmentId' AS segment_id, t.item ->> 'userId' AS user_id,
           (t.item ->> 'addedAt')::timestamptz AS added_at
    FROM uniflow."segmentMembersTable" t;
CREATE VIEW uniflow.destinations AS
    SELECT t.item ->> 'id' AS id, t.item ->> 'type' AS type, t.item -> 'config' AS config
    FROM uniflow."destinationsTable" t;

-- Records an event in a user's history (EVENT#<timestamp>#<messageId>);
-- ttl_days, when given, makes it expire (the table's TTL).  Returns the messageId.
CREATE FUNCTION uniflow.track(user_id text, event text, properties jsonb DEFAULT '{}',
                              at timestamptz DEFAULT clock_timestamp(), message_id text DEFAULT gen_random_uuid()::text,
                              ttl_days integer DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF event IS NULL OR event = '' THEN
        PERFORM ddb.invalid_parameter('an event needs a name');
    END IF;
    PERFORM ddb.put_item('profilesTable', jsonb_build_object(
        'userId', uniflow.checked_id(user_id, 'userId'),
        'sortKey', 'EVENT#' || ddb.iso8601(at) || '#' || uniflow.checked_id(message_id, 'messageId'),
        'event', event, 'properties', coalesce(properties, '{}'), 'timestamp', ddb.iso8601(at),
        'messageId', message_id)
        || CASE WHEN ttl_days IS NULL THEN '{}'::jsonb
                ELSE jsonb_build_object('ttl', floor(date_part('epoch', at))::bigint + ttl_days * 86400) END,
        condition => 'attribute_not_exists(sortKey)');
    RETURN message_id;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('event %s of %s is already recorded', message_id, user_id);
END $$;

-- Identify: links an anonymous visitor to a known user (once: an
-- anonymousId never moves to another user) and merges traits into the
-- user's META item, a later write winning per trait.
CREATE FUNCTION uniflow.identify(user_id text, traits jsonb DEFAULT '{}', anonymous_id text DEFAULT NULL,
                                 at timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sets text := 'updatedAt = :now';
    names jsonb := '{}';
    vals jsonb := jsonb_build_object(':now', ddb.iso8601(at));
    linked jsonb;
    n integer := 0;
    trait record;
BEGIN
    PERFORM uniflow.checked_id(user_id, 'userId');
    IF traits IS NULL OR jsonb_typeof(traits) <> 'object' THEN
        PERFORM ddb.invalid_parameter('traits must be a jsonb object');
    END IF;
    IF anonymous_id IS NOT NULL THEN
        linked := ddb.put_item('identityTable', jsonb_build_object(
            'anonymousId', uniflow.checked_id(anonymous_id, 'anonymousId'), 'userId', user_id,
            'linkedAt', ddb.iso8601(at)), true,
            condition => 'attribute_not_exists(anonymousId) OR userId = :u', vals => jsonb_build_object(':u', user_id));
    END IF;
    -- the META item first exists, so that each trait can be set on its own path
    PERFORM ddb.update_item('profilesTable', user_id::ddb.ddb_key, 'META',
        'SET traits = if_not_exists(traits, :empty), createdAt = if_not_exists(createdAt, :now), updatedAt = :now',
        vals => jsonb_build_object(':empty', '{}'::jsonb, ':now', ddb.iso8601(at)), return_values => 'NONE');
    FOR trait IN SELECT key, value FROM jsonb_each(traits) LOOP
        sets := sets || format(', traits.#t%s = :t%s', n, n);
        names := names || jsonb_build_object('#t' || n, trait.key);
        vals := vals || jsonb_build_object(':t' || n, trait.value);
        n := n + 1;
    END LOOP;
    PERFORM ddb.update_item('profilesTable', user_id::ddb.ddb_key, 'META', 'SET ' || sets,
        names => CASE WHEN n > 0 THEN names END, vals => vals, return_values => 'NONE');
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('anonymousId %s is already linked to another user', anonymous_id);
END $$;

-- U1: a user's merged profile (userId = X, sortKey = META), or NULL.
CREATE FUNCTION uniflow.get_profile(user_id text) RETURNS uniflow.profile
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN uniflow.profile_of(ddb.get_item('profilesTable', user_id::ddb.ddb_key, 'META'));

-- U2: a user's event history in timestamp order (sortKey begins_with EVENT#).
CREATE FUNCTION uniflow.event_history(user_id text) RETURNS SETOF uniflow.event
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT (uniflow.event_of(i)).* FROM ddb.query('profilesTable', user_id::ddb.ddb_key, 'begins_with', 'EVENT#') i;
END;

-- U3: the user an anonymous visitor was linked to, or NULL.
CREATE FUNCTION uniflow.resolve_identity(anonymous_id text) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN ddb.get_item('identityTable', anonymous_id::ddb.ddb_key) ->> 'userId';

-- Creates a source; the write key is returned here once and never stored
-- (only its sha256 digest is).
CREATE FUNCTION uniflow.create_source(name text, id text DEFAULT gen_random_uuid()::text, at timestamptz DEFAULT now())
RETURNS uniflow.new_source
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    write_key text := 'wk_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
BEGIN
    PERFORM ddb.put_item('sourcesTable', jsonb_build_object(
        'id', uniflow.checked_id(id, 'source id'), 'name', name, 'writeKeyHash', uniflow.write_key_hash(write_key),
        'createdAt', ddb.iso8601(at)), condition => 'attribute_not_exists(id)');
    RETURN ROW(id, write_key)::uniflow.new_source;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation', MESSAGE = format('source %s exists', id);
END $$;

-- U4: the source a write key belongs to, or NULL (writeKeyHashIndex,
-- writeKeyHash = sha256(key)).  Only digests are compared, so the time
-- taken does not depend on how much of a wrong key is right.
CREATE FUNCTION uniflow.authenticate(write_key text) RETURNS uniflow.source
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT uniflow.source_of(i)
        FROM ddb.query('sourcesTable', uniflow.write_key_hash(coalesce(write_key, ''))::ddb.ddb_key,
                       index_name => 'writeKeyHashIndex', max_items => 1) i);

-- Creates or replaces a destination connector configuration.
CREATE FUNCTION uniflow.put_destination(id text, type text, config jsonb DEFAULT '{}') RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT ddb.put_item('destinationsTable', jsonb_build_object('id', uniflow.checked_id(id, 'destination id'),
                        'type', type, 'config', coalesce(config, '{}')));
END;

-- Creates or replaces a segment definition.
CREATE FUNCTION uniflow.put_segment(id text, name text, rules jsonb DEFAULT '{}') RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT ddb.put_item('segmentsTable', jsonb_build_object('id', uniflow.checked_id(id, 'segment id'),
                        'name', name, 'rules', coalesce(rules, '{}')));
END;

-- U6: a source, destination or segment by id ('source', 'destination', 'segment'), or NULL.
CREATE FUNCTION uniflow.get_by_id(kind text, id text) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF kind NOT IN ('source', 'destination', 'segment') THEN
        PERFORM ddb.invalid_parameter(format('kind is source, destination or segment, not %L', kind));
    END IF;
    RETURN ddb.get_item(kind || 's' || 'Table', id::ddb.ddb_key);
END $$;

-- Adds a user to a segment (the membership records the segment evaluation writes).
CREATE FUNCTION uniflow.add_segment_member(segment_id text, user_id text, at timestamptz DEFAULT now()) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF ddb.get_item('segmentsTable', segment_id::ddb.ddb_key) IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found', MESSAGE = format('unknown segment %s', segment_id);
    END IF;
    PERFORM ddb.put_item('segmentMembersTable', jsonb_build_object('segmentId', segment_id,
        'userId', uniflow.checked_id(user_id, 'userId'), 'addedAt', ddb.iso8601(at)));
END $$;

-- U5: the users of a segment (segmentId = X).
CREATE FUNCTION uniflow.segment_members(segment_id text) RETURNS SETOF text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i ->> 'userId' FROM ddb.query('segmentMembersTable', segment_id::ddb.ddb_key) i;
END;

-- Example data: a source, a visitor who is identified, events, a segment.
CREATE FUNCTION uniflow.load_example_data() RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM uniflow.create_source('website', id => 'src_web');
    PERFORM uniflow.track('user_123', 'Page Viewed', '{"path": "/pricing"}', '2025-03-08T10:00:00Z', 'msg-001');
    PERFORM uniflow.identify('user_123', '{"email": "jane@example.com", "plan": "free"}', 'abc-123', '2025-03-08T10:01:00Z');
    PERFORM uniflow.track('user_123', 'Signed Up', '{"plan": "free"}', '2025-03-08T10:02:00Z', 'msg-002');
    PERFORM uniflow.identify('user_123', '{"plan": "pro"}', at => '2025-03-09T09:00:00Z');
    PERFORM uniflow.track('user_123', 'Order Completed', '{"total": 4900}', '2025-03-09T09:05:00Z', 'msg-003');
    PERFORM uniflow.put_destination('dst_warehouse', 'webhook', '{"url": "https://example.com/hook"}');
    PERFORM uniflow.put_segment('seg_456', 'Pro users', '{"trait": "plan", "equals": "pro"}');
    PERFORM uniflow.add_segment_member('seg_456', 'user_123');
    RETURN 'user_123';
END $$;

-- ===========================================================================
-- Model user_service (../shared/catalog.md S1-S10; docs/models/user_service.md)
--
-- One table, UserServiceTable: USER#<userId>/PROFILE and
-- USER#<userId>/EMAIL#<emailId> items, GSI1 over the email items only.
-- What the seed leaves to application code is enforced here for every
-- write path (these functions, ddb.execute, TransactWriteItems):
--   S7  a unique index: no two email items ever hold one normalised address;
--   S8  a deferred constraint trigger: at commit every user has exactly one
--       primary email, verified, and the profile names it;
--   item shapes (required attributes, E.164 phones, statuses) on every write.
-- ===========================================================================

CREATE SCHEMA user_service;
COMMENT ON SCHEMA user_service IS 'The user_service model (ddb_model): users and their email addresses';

SELECT ddb.create_table('UserServiceTable', 'PK', 'S', 'SK', 'S', schema_name => 'user_service', partitions => 0);
SELECT ddb.create_index('UserServiceTable', 'GSI1', 'GSI1PK', 'S', 'GSI1SK', 'S');
SELECT ddb.own_model_table('user_service', 'UserServiceTable');

-- S7: one email item per normalised address, whoever writes it.
CREATE UNIQUE INDEX "UserServiceTable: one user per email (S7)"
    ON user_service."UserServiceTable" ((item OPERATOR(pg_catalog.->>) 'GSI1PK'))
    WHERE item OPERATOR(pg_catalog.?) 'GSI1PK';

-- A user profile, typed.
CREATE TYPE user_service.user_profile AS (
    user_id uuid,
    email text,
    first_name text,
    last_name text,
    phone text,
    status text,
    version integer,
    created_at timestamptz,
    updated_at timestamptz
);

-- An email record, typed.
CREATE TYPE user_service.user_email AS (
    email_id uuid,
    user_id uuid,
    email text,
    is_primary boolean,
    is_verified boolean,
    verified_at timestamptz,
    created_at timestamptz
);

-- The typed profile of a PROFILE item (NULL for none).
CREATE FUNCTION user_service.profile_of(item jsonb) RETURNS user_service.user_profile
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW((item ->> 'userId')::uuid, item ->> 'email', item ->> 'firstName', item ->> 'lastName',
           item ->> 'phone', item ->> 'status', (item ->> 'version')::integer,
           (item ->> 'createdAt')::timestamptz, (item ->> 'updatedAt')::timestamptz)::user_service.user_profile;

-- The typed email record of an EMAIL item.
CREATE FUNCTION user_service.email_of(item jsonb) RETURNS user_service.user_email
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW((item ->> 'emailId')::uuid, (item ->> 'userId')::uuid, item ->> 'email',
           (item ->> 'isPrimary')::boolean, (item ->> 'isVerified')::boolean,
           (item ->> 'verifiedAt')::timestamptz, (item ->> 'createdAt')::timestamptz)::user_service.user_email;

CREATE VIEW user_service.users AS
    SELECT p.* FROM user_service."UserServiceTable" t, user_service.profile_of(t.item) p
    WHERE t.sk OPERATOR(pg_catalog.=) 'PROFILE'::ddb.ddb_key;
COMMENT ON VIEW user_service.users IS 'user_service: every user profile, typed';

CREATE VIEW user_service.emails AS
    SELECT e.* FROM user_service."UserServiceTable" t, user_service.email_of(t.item) e
    WHERE t.sk OPERATOR(pg_catalog.^@) 'EMAIL#'::ddb.ddb_key;
COMMENT ON VIEW user_service.emails IS 'user_service: every email record, typed';

-- An email address trimmed and lower-cased; raises for anything that is
-- not an address.  What every stored address satisfies, whatever the
-- session's settings.
CREATE FUNCTION user_service.lower_email(email text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e text := lower(btrim(email, E' \t\r\n'));
BEGIN
    IF e IS NULL OR length(e) > 254 OR e !~ '^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$' THEN
        PERFORM ddb.invalid_parameter(format('not an email address: %L', email));
    END IF;
    RETURN e;
END $$;

-- S6: an email address normalised for storage and lookup: trimmed and
-- lower-cased.  With the setting user_service.fold_gmail = on, Gmail
-- addresses also lose dots and +tags in the local part (opt-in only).
-- Raises for anything that is not an address.
CREATE FUNCTION user_service.normalize_email(email text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e text := user_service.lower_email(email);
    local text;
    domain text;
BEGIN
    IF current_setting('user_service.fold_gmail', true) = 'on' THEN
        local := split_part(e, '@', 1);
        domain := split_part(e, '@', 2);
        IF domain IN ('gmail.com', 'googlemail.com') THEN
            e := replace(split_part(local, '+', 1), '.', '') || '@gmail.com';
        END IF;
    END IF;
    RETURN e;
END $$;

-- Checks the shape of a UserServiceTable item (BEFORE INSERT OR UPDATE):
-- the seed's attributes, keys that agree with them, E.164 phones, known
-- statuses, normalised emails.  Whatever path wrote it.
CREATE FUNCTION user_service.check_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb := NEW.item;
    pk text := NEW.pk::text;
    sk text := NEW.sk::text;
    user_id text;
    missing text;
BEGIN
    IF pk !~ '^USER#[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
        PERFORM ddb.invalid_parameter(format('UserServiceTable holds USER#<userId> items (a lower-case uuid), not %s', pk));
    END IF;
    user_id := substr(pk, 6);
    IF sk = 'PROFILE' THEN
        SELECT string_agg(a, ', ') INTO missing
        FROM unnest(ARRAY['userId', 'email', 'firstName', 'lastName', 'status', 'version', 'createdAt', 'updatedAt']) a
        WHERE NOT i ? a;
        IF missing IS NOT NULL THEN
            PERFORM ddb.invalid_parameter(format('user profile %s lacks %s', user_id, missing));
        END IF;
        IF i ->> 'userId' <> user_id THEN
            PERFORM ddb.invalid_parameter(format('user profile %s has userId %s', user_id, i ->> 'userId'));
        END IF;
        IF i ->> 'status' NOT IN ('active', 'suspended', 'deleted') OR jsonb_typeof(i -> 'status') <> 'string' THEN
            PERFORM ddb.invalid_parameter(format('unknown user status %s (active, suspended or deleted)', i -> 'status'));
        END IF;
        IF i ? 'phone' AND (jsonb_typeof(i -> 'phone') <> 'string' OR i ->> 'phone' !~ '^\+[1-9][0-9]{1,14}$') THEN
            PERFORM ddb.invalid_parameter(format('phone %s is not an E.164 number (+ and up to 15 digits)', i -> 'phone'));
        END IF;
        IF jsonb_typeof(i -> 'version') <> 'number' OR (i ->> 'version')::numeric < 1
           OR (i ->> 'version')::numeric <> trunc((i ->> 'version')::numeric) THEN
            PERFORM ddb.invalid_parameter(format('user profile %s: version must be a whole number from 1 on', user_id));
        END IF;
        IF i ? 'GSI1PK' OR i ? 'GSI1SK' THEN
            PERFORM ddb.invalid_parameter('a user profile is never in GSI1 (S10)');
        END IF;
    ELSIF sk ~ '^EMAIL#' THEN
        SELECT string_agg(a, ', ') INTO missing
        FROM unnest(ARRAY['emailId', 'userId', 'email', 'isPrimary', 'isVerified', 'createdAt', 'GSI1PK', 'GSI1SK']) a
        WHERE NOT i ? a;
        IF missing IS NOT NULL THEN
            PERFORM ddb.invalid_parameter(format('email record %s lacks %s', sk, missing));
        END IF;
        IF 'EMAIL#' || (i ->> 'emailId') <> sk OR i ->> 'userId' <> user_id THEN
            PERFORM ddb.invalid_parameter(format('email record %s/%s does not match its emailId and userId', pk, sk));
        END IF;
        -- the Gmail folding setting is the writer's business: only what holds either way is checked
        IF i ->> 'email' <> user_service.lower_email(i ->> 'email') THEN
            PERFORM ddb.invalid_parameter(format('email %L is not normalised (S6)', i ->> 'email'));
        END IF;
        IF i ->> 'GSI1PK' <> 'EMAIL#' || (i ->> 'email') OR i ->> 'GSI1SK' <> pk THEN
            PERFORM ddb.invalid_parameter(format('email record %s: GSI1PK must be EMAIL#<email> and GSI1SK the user''s key', sk));
        END IF;
        IF jsonb_typeof(i -> 'isPrimary') <> 'boolean' OR jsonb_typeof(i -> 'isVerified') <> 'boolean' THEN
            PERFORM ddb.invalid_parameter(format('email record %s: isPrimary and isVerified are booleans', sk));
        END IF;
    ELSE
        PERFORM ddb.invalid_parameter(format('UserServiceTable holds PROFILE and EMAIL#<emailId> items, not %s', sk));
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON user_service."UserServiceTable"
    FOR EACH ROW EXECUTE FUNCTION user_service.check_item();

-- S8 at commit, for the user a written item belongs to: with a profile,
-- exactly one primary email, verified, and the profile's email is it;
-- without one, no email records either.
CREATE FUNCTION user_service.check_user() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    user_key ddb.ddb_key := CASE WHEN TG_OP = 'DELETE' THEN OLD.pk ELSE NEW.pk END;
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
        RETURN NULL;
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
    RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER check_user AFTER INSERT OR UPDATE OR DELETE ON user_service."UserServiceTable"
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION user_service.check_user();

-- The key of a user.
CREATE FUNCTION user_service.user_pk(user_id uuid) RETURNS ddb.ddb_key
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ('USER#' || user_id::text)::ddb.ddb_key;

-- Raises no_data_found for a user that does not exist.
CREATE FUNCTION user_service.require_user(user_id uuid) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    profile jsonb := ddb.get_item('UserServiceTable', user_service.user_pk(user_id), 'PROFILE');
BEGIN
    IF profile IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found', MESSAGE = format('unknown user %s', user_id);
    END IF;
    RETURN profile;
END $$;

-- Writes an email record, turning a taken address into unique_violation with the address named.
CREATE FUNCTION user_service.put_email(item jsonb) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ddb.put_item('UserServiceTable', item, condition => 'attribute_not_exists(PK)');
EXCEPTION WHEN unique_violation THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('S7: email address %s is already in use', item ->> 'email');
END $$;

-- Creates a user with its first email address, verified and primary
-- (catalog decision); returns the user id.
CREATE FUNCTION user_service.create_user(email text, first_name text, last_name text,
                                         phone text DEFAULT NULL,
                                         user_id uuid DEFAULT gen_random_uuid(),
                                         email_id uuid DEFAULT gen_random_uuid(),
                                         at timestamptz DEFAULT now())
RETURNS uuid
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    address text := user_service.normalize_email(email);
    ts text := ddb.iso8601(at);
    pk text := 'USER#' || user_id;
BEGIN
    IF first_name IS NULL OR last_name IS NULL THEN
        PERFORM ddb.invalid_parameter('a user needs a first name and a last name');
    END IF;
    PERFORM ddb.put_item('UserServiceTable',
        jsonb_build_object('PK', pk, 'SK', 'PROFILE', 'userId', user_id, 'email', address,
                           'firstName', first_name, 'lastName', last_name, 'status', 'active',
                           'version', 1, 'createdAt', ts, 'updatedAt', ts)
        || CASE WHEN phone IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('phone', phone) END,
        condition => 'attribute_not_exists(PK)');
    PERFORM user_service.put_email(jsonb_build_object(
        'PK', pk, 'SK', 'EMAIL#' || email_id, 'GSI1PK', 'EMAIL#' || address, 'GSI1SK', pk,
        'emailId', email_id, 'userId', user_id, 'email', address, 'isPrimary', true,
        'isVerified', true, 'verifiedAt', ts, 'createdAt', ts));
    RETURN user_id;
END $$;

-- S1: a user's profile (GetItem PK = USER#id, SK = PROFILE), or NULL.
CREATE FUNCTION user_service.get_user(user_id uuid) RETURNS user_service.user_profile
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN user_service.profile_of(ddb.get_item('UserServiceTable', user_service.user_pk(user_id), 'PROFILE'));

-- S2: a user's email addresses (Query PK = USER#id, SK begins_with EMAIL#).
CREATE FUNCTION user_service.list_emails(user_id uuid) RETURNS SETOF user_service.user_email
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT (user_service.email_of(i)).*
    FROM ddb.query('UserServiceTable', user_service.user_pk(user_id), 'begins_with', 'EMAIL#') i;
END;

-- S3: the user an address belongs to, for login (Query GSI1, GSI1PK = EMAIL#address), or NULL.
CREATE FUNCTION user_service.find_user_by_email(email text) RETURNS uuid
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT (i ->> 'userId')::uuid
        FROM ddb.query('UserServiceTable', ('EMAIL#' || user_service.normalize_email(email))::ddb.ddb_key,
                       index_name => 'GSI1') i);

-- S4: is the address taken? (Query GSI1 with Limit 1)
CREATE FUNCTION user_service.email_in_use(email text) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN EXISTS (SELECT FROM ddb.query('UserServiceTable', ('EMAIL#' || user_service.normalize_email(email))::ddb.ddb_key,
                                     index_name => 'GSI1', max_items => 1));

-- S5: the whole user, profile and emails, in one query (PK = USER#id).
CREATE FUNCTION user_service.get_user_items(user_id uuid) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query('UserServiceTable', user_service.user_pk(user_id)) i;
END;

-- Adds an address to a user, unverified and not primary; returns its email id.
-- S7: an address in use by anyone is refused (unique_violation), also
-- against a concurrent claim.
CREATE FUNCTION user_service.add_email(user_id uuid, email text,
                                       email_id uuid DEFAULT gen_random_uuid(),
                                       at timestamptz DEFAULT now())
RETURNS uuid
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    address text := user_service.normalize_email(email);
    pk text := 'USER#' || user_id;
BEGIN
    PERFORM user_service.require_user(user_id);
    PERFORM user_service.put_email(jsonb_build_object(
        'PK', pk, 'SK', 'EMAIL#' || email_id, 'GSI1PK', 'EMAIL#' || address, 'GSI1SK', pk,
        'emailId', email_id, 'userId', user_id, 'email', address, 'isPrimary', false,
        'isVerified', false, 'createdAt', ddb.iso8601(at)));
    RETURN email_id;
END $$;

-- Marks an address verified.
CREATE FUNCTION user_service.verify_email(user_id uuid, email_id uuid, at timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ddb.update_item('UserServiceTable', user_service.user_pk(user_id), ('EMAIL#' || email_id)::ddb.ddb_key,
        'SET isVerified = :true, verifiedAt = :at', condition => 'attribute_exists(PK)',
        vals => jsonb_build_object(':true', true, ':at', ddb.iso8601(at)));
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'no_data_found',
        MESSAGE = format('user %s has no email %s', user_id, email_id);
END $$;

-- S8: makes a verified address the user's primary one: the seed's
-- transaction of three updates (old off, new on if verified, profile email).
-- The profile's row lock is taken first, so that swaps of one user run one
-- after the other, each reading the primary its predecessor left.
CREATE FUNCTION user_service.set_primary_email(user_id uuid, email_id uuid, at timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    pk text := 'USER#' || user_id;
    new_item jsonb;
    old_item jsonb;
BEGIN
    PERFORM user_service.require_user(user_id);
    PERFORM FROM user_service."UserServiceTable" t
    WHERE t.pk = user_service.user_pk(user_id) AND t.sk = 'PROFILE'::ddb.ddb_key FOR UPDATE;
    new_item := ddb.get_item('UserServiceTable', user_service.user_pk(user_id), ('EMAIL#' || email_id)::ddb.ddb_key);
    IF new_item IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found', MESSAGE = format('user %s has no email %s', user_id, email_id);
    END IF;
    IF NOT (new_item ->> 'isVerified')::boolean THEN
        RAISE EXCEPTION USING ERRCODE = 'YD002', MESSAGE = format('S8: email %s is not verified', new_item ->> 'email'),
            HINT = 'Verify it with user_service.verify_email first.';
    END IF;
    IF (new_item ->> 'isPrimary')::boolean THEN
        RETURN;
    END IF;
    SELECT i INTO old_item FROM ddb.query('UserServiceTable', user_service.user_pk(user_id), 'begins_with', 'EMAIL#',
                                          filter => 'isPrimary = :true', vals => '{":true": true}') i;
    -- the conditions guard against a writer that does not take the profile's lock (ddb.execute)
    PERFORM ddb.execute('TransactWriteItems', jsonb_build_object('TransactItems', jsonb_build_array(
        jsonb_build_object('Update', jsonb_build_object('TableName', 'UserServiceTable',
            'Key', jsonb_build_object('PK', jsonb_build_object('S', pk), 'SK', jsonb_build_object('S', old_item ->> 'SK')),
            'UpdateExpression', 'SET isPrimary = :false', 'ConditionExpression', 'isPrimary = :true',
            'ExpressionAttributeValues', '{":false": {"BOOL": false}, ":true": {"BOOL": true}}'::jsonb)),
        jsonb_build_object('Update', jsonb_build_object('TableName', 'UserServiceTable',
            'Key', jsonb_build_object('PK', jsonb_build_object('S', pk), 'SK', jsonb_build_object('S', 'EMAIL#' || email_id)),
            'UpdateExpression', 'SET isPrimary = :true', 'ConditionExpression', 'isVerified = :true',
            'ExpressionAttributeValues', '{":true": {"BOOL": true}}'::jsonb)),
        jsonb_build_object('Update', jsonb_build_object('TableName', 'UserServiceTable',
            'Key', jsonb_build_object('PK', jsonb_build_object('S', pk), 'SK', jsonb_build_object('S', 'PROFILE')),
            'UpdateExpression', 'SET email = :newEmail, updatedAt = :now',
            'ExpressionAttributeValues', jsonb_build_object(
                ':newEmail', jsonb_build_object('S', new_item ->> 'email'),
                ':now', jsonb_build_object('S', ddb.iso8601(at))))))));
END $$;

-- Deletes an address of a user; the primary one cannot be deleted (S8).
CREATE FUNCTION user_service.delete_email(user_id uuid, email_id uuid) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- an absent record fails the condition too: the handler tells the two apart
    PERFORM ddb.delete_item('UserServiceTable', user_service.user_pk(user_id), ('EMAIL#' || email_id)::ddb.ddb_key,
                            condition => 'isPrimary = :false', vals => '{":false": false}');
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    IF ddb.get_item('UserServiceTable', user_service.user_pk(user_id), ('EMAIL#' || email_id)::ddb.ddb_key) IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found', MESSAGE = format('user %s has no email %s', user_id, email_id);
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'YD002', MESSAGE = 'S8: the primary email cannot be deleted',
        HINT = 'Make another verified address primary first (user_service.set_primary_email).';
END $$;

-- S9: updates a profile if it is still at expected_version; returns the new
-- version.  NULL arguments leave their attribute as it is.  A stale version
-- fails with the conditional-check error (YD002) and changes nothing.
CREATE FUNCTION user_service.update_profile(user_id uuid, expected_version integer,
                                            first_name text DEFAULT NULL, last_name text DEFAULT NULL,
                                            phone text DEFAULT NULL, status text DEFAULT NULL,
                                            at timestamptz DEFAULT now())
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sets text := 'version = version + :one, updatedAt = :now';
    vals jsonb := jsonb_build_object(':one', 1, ':now', ddb.iso8601(at), ':v', expected_version);
    names jsonb := NULL;
    updated jsonb;
    current_version integer;
BEGIN
    IF first_name IS NOT NULL THEN
        sets := sets || ', firstName = :fn';
        vals := vals || jsonb_build_object(':fn', first_name);
    END IF;
    IF last_name IS NOT NULL THEN
        sets := sets || ', lastName = :ln';
        vals := vals || jsonb_build_object(':ln', last_name);
    END IF;
    IF phone IS NOT NULL THEN
        sets := sets || ', phone = :ph';
        vals := vals || jsonb_build_object(':ph', phone);
    END IF;
    IF status IS NOT NULL THEN
        sets := sets || ', #s = :st';
        vals := vals || jsonb_build_object(':st', status);
        names := '{"#s": "status"}';
    END IF;
    updated := ddb.update_item('UserServiceTable', user_service.user_pk(user_id), 'PROFILE', 'SET ' || sets,
                               condition => 'version = :v', names => names, vals => vals,
                               return_values => 'UPDATED_NEW');
    RETURN (updated ->> 'version')::integer;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    current_version := (user_service.require_user(user_id) ->> 'version')::integer;
    RAISE EXCEPTION USING ERRCODE = 'YD002',
        MESSAGE = format('S9: user %s is at version %s, not %s', user_id, current_version, expected_version),
        HINT = 'Read the profile again and retry with its version.';
END $$;

-- The seed's example layout as data: user abc-123 (here a uuid that reads
-- like it) with its primary address and a second verified one.  Returns the
-- user id.  For the demo and the docs.
CREATE FUNCTION user_service.load_example_data() RETURNS uuid
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    jane uuid := 'abc12300-0000-4000-8000-000000000123';
BEGIN
    PERFORM user_service.create_user('Jane.Doe@Example.com', 'Jane', 'Doe', '+14155550123', user_id => jane,
                                     email_id => 'e0000000-0000-4000-8000-000000000001',
                                     at => '2026-03-01T09:00:00Z');
    PERFORM user_service.verify_email(jane, user_service.add_email(jane, 'jane@work.example.com',
                                                                   email_id => 'e0000000-0000-4000-8000-000000000002',
                                                                   at => '2026-03-02T09:00:00Z'),
                                      at => '2026-03-02T09:05:00Z');
    RETURN jane;
END $$;
