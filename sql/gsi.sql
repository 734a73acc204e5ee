-- ---------------------------------------------------------------------------
-- Global secondary indexes (docs/tables.md): the triggers that keep them
-- (src/table/gsi_trigger.c), creating and dropping one, and the check that
-- compares them with their table.
-- ---------------------------------------------------------------------------

-- Keeps the GSIs of a table (argument: its DynamoDB name) in step with its items.
CREATE FUNCTION ddb.gsi_maintain() RETURNS trigger
    AS 'MODULE_PATHNAME', 'ddb_gsi_maintain' LANGUAGE C;
REVOKE ALL ON FUNCTION ddb.gsi_maintain() FROM PUBLIC;

-- Empties the indexes of a table (argument: its DynamoDB name) when the
-- table is truncated: TRUNCATE fires no row trigger, so without this the
-- entries of the removed items would stay behind in every index.
CREATE FUNCTION ddb.gsi_truncate() RETURNS trigger
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
