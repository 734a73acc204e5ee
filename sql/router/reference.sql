-- ---------------------------------------------------------------------------
-- Reference tables: small tables whose items every node holds, because the
-- nodes' triggers read them beside items of any partition key.  uds's apps:
-- a write of app data checks on its node that the app exists and reads its
-- quota (D3, D7), and the app data of one app lives on every node.  A write
-- of a reference table's item is made on every node with two-phase commit
-- (all or none); a read is served by the first node.
-- ---------------------------------------------------------------------------

CREATE TABLE ddb_router.reference_tables (
    table_name text PRIMARY KEY,
    model text                      -- the model that made it one, or NULL for a user's
);
COMMENT ON TABLE ddb_router.reference_tables IS 'Tables whose items every node holds (written on all, read on one)';
SELECT pg_catalog.pg_extension_config_dump('ddb_router.reference_tables', 'WHERE model IS NULL');
INSERT INTO ddb_router.reference_tables VALUES ('apps', 'uds');
CREATE TRIGGER tables_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb_router.reference_tables
    FOR EACH STATEMENT EXECUTE FUNCTION ddb_router.tables_changed();
CREATE TRIGGER notify_map AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb_router.reference_tables
    FOR EACH STATEMENT EXECUTE FUNCTION ddb_router.notify_map();

-- The tables a request's items belong to (TableName, a batch's RequestItems, a transaction's
-- actions, the tables of PartiQL statements); none for a request of another shape.
CREATE FUNCTION ddb_router.request_tables(operation text, request jsonb) RETURNS SETOF text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT request->>'TableName' WHERE request ? 'TableName'
    UNION
    SELECT k FROM jsonb_object_keys(CASE WHEN jsonb_typeof(request->'RequestItems') = 'object'
                                         THEN request->'RequestItems' ELSE '{}' END) k
    UNION
    SELECT a.spec->>'TableName'
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(request->'TransactItems') = 'array'
                                   THEN request->'TransactItems' ELSE '[]' END) x(item),
         jsonb_each(CASE WHEN jsonb_typeof(x.item) = 'object' THEN x.item ELSE '{}' END) a(action, spec)
    WHERE jsonb_typeof(a.spec) = 'object'
    UNION
    SELECT s.request->>'TableName'
    FROM ddb_router.statement_routes(CASE WHEN request_tables.operation = 'ExecuteStatement' THEN jsonb_build_array(request)
                                          WHEN jsonb_typeof(request->'Statements') = 'array' THEN request->'Statements'
                                          WHEN jsonb_typeof(request->'TransactStatements') = 'array' THEN request->'TransactStatements'
                                          ELSE '[]' END) s
    WHERE request_tables.operation IN ('ExecuteStatement', 'BatchExecuteStatement', 'ExecuteTransaction')
$$;

-- A request that concerns a reference table: written on every node, read on the first; null for
-- one that concerns none (the router routes it as any other).
CREATE FUNCTION ddb_router.reference_request(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tables text[] := ARRAY(SELECT t FROM ddb_router.request_tables(operation, request) t WHERE t IS NOT NULL);
    reference text[] := ARRAY(SELECT t FROM unnest(tables) t JOIN ddb_router.reference_tables r ON r.table_name = t);
    first integer := (SELECT min(r) FROM ddb_router.node_routes() r);
    outcome jsonb;
    answer text;
    message text;
BEGIN
    IF cardinality(reference) = 0 THEN
        RETURN NULL;
    END IF;
    IF cardinality(tables) = 1 AND operation IN ('GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems') THEN
        RETURN ddb_router.call(first, role_name, operation, request);
    END IF;
    IF operation = 'DescribeTable' THEN
        -- the router's description with the first node's counts (every node holds every item)
        answer := ddb.execute_metered(role_name, operation, request);
        RETURN ddb_router.answer(ddb_router.answer_consumed(answer), jsonb_set(ddb_router.answer_response(answer), '{Table}',
            (ddb_router.answer_response(answer)->'Table') || (SELECT jsonb_build_object('ItemCount', n->'ItemCount', 'TableSizeBytes', n->'TableSizeBytes')
                FROM (SELECT ddb_router.answer_response(ddb_router.call(first, role_name, operation, request))->'Table' AS n) s)));
    END IF;
    IF operation IN ('PutItem', 'UpdateItem', 'DeleteItem') THEN
        outcome := ddb_router.two_phase_commit(role_name, operation, NULL,
            (SELECT jsonb_object_agg(node_name, request) FROM ddb_router.nodes WHERE node_name IN (SELECT node_name FROM ddb_router.partitions)));
        IF outcome ? 'failed' THEN
            PERFORM ddb_router.raise_error(outcome->'error'->>'sqlstate', outcome->'error'->>'message',
                                           outcome->'error'->>'detail', outcome->'error'->>'hint');
        END IF;
        -- every node answers alike: the first one's answer
        RETURN (SELECT v FROM jsonb_each_text(outcome) e(k, v) WHERE k <> '@router' ORDER BY k COLLATE "C" LIMIT 1);
    END IF;
    IF operation NOT IN ('CreateTable', 'UpdateTable', 'DeleteTable', 'UpdateTimeToLive', 'TagResource', 'UntagResource',
                         'DescribeTimeToLive', 'ListTagsOfResource', 'DescribeStream', 'ListStreams') THEN
        message := format('On a sharded deployment %s is a reference table, whose items every node holds: it is read with GetItem, Query, Scan, '
                          'BatchGetItem or TransactGetItems of it alone, and written one item at a time (PutItem, UpdateItem, DeleteItem)',
                          reference[1]);
        PERFORM ddb_router.raise_error('YD001', message, NULL, NULL);
    END IF;
    RETURN NULL;
END
$$;
