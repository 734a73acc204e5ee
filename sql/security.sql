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
