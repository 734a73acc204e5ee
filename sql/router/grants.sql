-- ---------------------------------------------------------------------------
-- Grants of tables to roles on a sharded deployment (docs/security.md): the
-- nodes check every request as its role, so a grant is made on the router
-- (whose catalog answers ListTables and DescribeTable) and on every node.
-- The role itself must exist on every node's PostgreSQL cluster.
-- ---------------------------------------------------------------------------

-- ddb.grant_tables on the node of a route.
CREATE FUNCTION ddb_router.node_grant_tables(route integer, role_name name, table_pattern text, read_only boolean,
                                             leading_keys text[]) RETURNS integer
LANGUAGE plproxy AS $$
    CLUSTER 'ddb';
    RUN ON route;
    SELECT ddb.grant_tables(role_name, table_pattern, read_only, leading_keys);
$$;

-- ddb.revoke_tables on the node of a route.
CREATE FUNCTION ddb_router.node_revoke_tables(route integer, role_name name, table_pattern text) RETURNS integer
LANGUAGE plproxy AS $$
    CLUSTER 'ddb';
    RUN ON route;
    SELECT ddb.revoke_tables(role_name, table_pattern);
$$;

-- ddb.grant_tables on the router and every node: the number of the router's tables it reached.
CREATE FUNCTION ddb_router.grant_tables(role_name name, table_pattern text, read_only boolean DEFAULT false,
                                        leading_keys text[] DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := ddb.grant_tables(role_name, table_pattern, read_only, leading_keys);
BEGIN
    PERFORM ddb_router.node_grant_tables(route, role_name, table_pattern, read_only, leading_keys)
    FROM ddb_router.node_routes() route;
    RETURN n;
END
$$;

-- ddb.revoke_tables on the router and every node: the number of grants it took back on the router.
CREATE FUNCTION ddb_router.revoke_tables(role_name name, table_pattern text) RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := ddb.revoke_tables(role_name, table_pattern);
BEGIN
    PERFORM ddb_router.node_revoke_tables(route, role_name, table_pattern) FROM ddb_router.node_routes() route;
    RETURN n;
END
$$;

-- The PL/Proxy functions reach the nodes as the router's own user, which may act as any
-- role: only the router's C code calls them (src/router/node_call.c checks the caller's
-- right to the role first), and the owner.
REVOKE ALL ON FUNCTION ddb_router.node_execute(integer, name, text, jsonb),
                       ddb_router.node_execute_rolled_back(integer, name, text, jsonb),
                       ddb_router.node_execute_for_merge(integer, name, text, jsonb, integer),
                       ddb_router.node_grant_tables(integer, name, text, boolean, text[]),
                       ddb_router.node_revoke_tables(integer, name, text)
    FROM PUBLIC;
