-- ---------------------------------------------------------------------------
-- Transactions: on the node that holds every item, or across nodes.
-- ---------------------------------------------------------------------------

-- The route of each item of a transaction, in order (null: one the router cannot route).
CREATE FUNCTION ddb_router.transaction_routes(request jsonb)
RETURNS TABLE (n bigint, route integer)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT t.n, (SELECT ddb_router.route_of(a.spec->>'TableName', coalesce(a.spec->'Key', a.spec->'Item'))
                 FROM jsonb_each(CASE WHEN jsonb_typeof(t.item) = 'object' THEN t.item END) a(action, spec)
                 WHERE jsonb_typeof(a.spec) = 'object' LIMIT 1)
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(request->'TransactItems') = 'array'
                                   THEN request->'TransactItems' END) WITH ORDINALITY t(item, n)
$$;

-- TransactWriteItems: on the node that holds every item (atomic there).
CREATE FUNCTION ddb_router.transact_write_items(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nodes integer[];
BEGIN
    IF NOT EXISTS (SELECT FROM ddb_router.transaction_routes(request))
       OR EXISTS (SELECT FROM ddb_router.transaction_routes(request) WHERE route IS NULL) THEN
        RETURN ddb_router.raise_invalid(role_name, operation, request);
    END IF;
    PERFORM ddb_router.write_guard(route) FROM ddb_router.transaction_routes(request);
    -- a route of one item of each node (an item's own route follows a move of its partition)
    nodes := ARRAY(SELECT min(route) FROM ddb_router.transaction_routes(request) GROUP BY ddb_router.node_route(route));
    IF cardinality(nodes) > 1 THEN
        RETURN ddb_router.transact_across_nodes(role_name, operation, request);
    END IF;
    RETURN ddb_router.call(nodes[1], role_name, operation, request);
END
$$;

-- TransactGetItems: on the node that holds every item.
CREATE FUNCTION ddb_router.transact_get_items(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nodes integer[];
BEGIN
    IF NOT EXISTS (SELECT FROM ddb_router.transaction_routes(request))
       OR EXISTS (SELECT FROM ddb_router.transaction_routes(request) WHERE route IS NULL) THEN
        RETURN ddb_router.raise_invalid(role_name, operation, request);
    END IF;
    -- a route of one item of each node (an item's own route follows a move of its partition)
    nodes := ARRAY(SELECT min(route) FROM ddb_router.transaction_routes(request) GROUP BY ddb_router.node_route(route));
    IF cardinality(nodes) > 1 THEN
        RETURN ddb_router.transact_across_nodes(role_name, operation, request);
    END IF;
    RETURN ddb_router.call(nodes[1], role_name, operation, request);
END
$$;

-- A transaction over items of several nodes (two-phase commit; not served yet).
CREATE FUNCTION ddb_router.transact_across_nodes(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION '% over items of several shard nodes is not served yet', operation
        USING ERRCODE = 'YD001',
              DETAIL = jsonb_build_object('__type', 'com.amazon.coral.validate#ValidationException',
                                          'message', operation || ' over items of several shard nodes is not served yet')::text;
END
$$;

