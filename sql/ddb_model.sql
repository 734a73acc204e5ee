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
