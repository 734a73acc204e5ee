-- ddb_router 0.2 — install script (docs/scale-out.md).
\echo Use "CREATE EXTENSION ddb_router" to load this file. \quit

-- ---------------------------------------------------------------------------
-- The cluster: shard nodes (each an ordinary ddb_model database) and a
-- fixed number of logical partitions (a power of two) mapped onto them.  An
-- item lives in partition ddb.ddb_key_route_hash(partition key) & (count - 1),
-- which is the hash partition PostgreSQL's own hash partitioning of that
-- count would put it in.  PL/Proxy reads the map through the plproxy.*
-- functions below (cluster 'ddb'); the version makes it reload.
-- ---------------------------------------------------------------------------

CREATE TABLE ddb_router.nodes (
    node_name text PRIMARY KEY CHECK (node_name ~ '^[a-z0-9_]{1,40}$'),
    connstr text NOT NULL       -- libpq connection string of the node's primary
);
COMMENT ON TABLE ddb_router.nodes IS 'The shard nodes of the cluster: each an ordinary ddb_model database';
SELECT pg_catalog.pg_extension_config_dump('ddb_router.nodes', '');

CREATE TABLE ddb_router.partitions (
    partition integer PRIMARY KEY CHECK (partition >= 0),
    node_name text NOT NULL REFERENCES ddb_router.nodes,
    moving boolean NOT NULL DEFAULT false   -- writes are refused (retryable) while it moves
);
COMMENT ON TABLE ddb_router.partitions IS 'The logical partitions and the node each lives on';
SELECT pg_catalog.pg_extension_config_dump('ddb_router.partitions', '');

CREATE SEQUENCE ddb_router.cluster_version;
SELECT pg_catalog.pg_extension_config_dump('ddb_router.cluster_version', '');

-- Any change of the map makes PL/Proxy (and the router's cache) read it again.
CREATE FUNCTION ddb_router.bump_cluster_version() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM nextval('ddb_router.cluster_version');
    RETURN NULL;
END
$$;
CREATE TRIGGER bump_cluster_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb_router.nodes
    FOR EACH STATEMENT EXECUTE FUNCTION ddb_router.bump_cluster_version();
CREATE TRIGGER bump_cluster_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb_router.partitions
    FOR EACH STATEMENT EXECUTE FUNCTION ddb_router.bump_cluster_version();

-- PL/Proxy's configuration API, for the cluster 'ddb' only (the router's database is the router's).
CREATE SCHEMA plproxy;

CREATE FUNCTION plproxy.get_cluster_version(cluster_name text) RETURNS integer
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN cluster_name = 'ddb'
                THEN (SELECT last_value::integer + CASE WHEN is_called THEN 1 ELSE 0 END FROM ddb_router.cluster_version)
           END
$$;

CREATE FUNCTION plproxy.get_cluster_partitions(cluster_name text) RETURNS SETOF text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT n.connstr FROM ddb_router.partitions p JOIN ddb_router.nodes n USING (node_name)
    WHERE cluster_name = 'ddb' ORDER BY p.partition
$$;

CREATE FUNCTION plproxy.get_cluster_config(IN cluster_name text, OUT key text, OUT val text) RETURNS SETOF record
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    -- a broken connection is noticed and replaced by PL/Proxy; none lives forever
    SELECT 'connection_lifetime'::text, '3600'::text WHERE cluster_name = 'ddb'
$$;

-- Adds a shard node: an ordinary ddb_model database of the same version.
CREATE FUNCTION ddb_router.add_node(node_name text, connstr text) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    INSERT INTO ddb_router.nodes VALUES (add_node.node_name, add_node.connstr);
END;

-- Creates the logical partitions (a power of two, 1 to 1024) over the nodes, in turn by name.
CREATE FUNCTION ddb_router.create_partitions(partition_count integer) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    names text[] := ARRAY(SELECT node_name FROM ddb_router.nodes ORDER BY node_name);
BEGIN
    IF partition_count IS NULL OR partition_count < 1 OR partition_count > 1024
       OR (partition_count & (partition_count - 1)) <> 0 THEN
        RAISE EXCEPTION 'the partition count must be a power of two from 1 to 1024, not %', partition_count
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF cardinality(names) = 0 THEN
        RAISE EXCEPTION 'the cluster has no node yet' USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Add the shard nodes first with ddb_router.add_node(name, connstr).';
    END IF;
    IF EXISTS (SELECT FROM ddb_router.partitions) THEN
        RAISE EXCEPTION 'the cluster already has its partitions' USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'The partition count is fixed; move partitions with CALL ddb_router.move_partition(partition, node).';
    END IF;
    INSERT INTO ddb_router.partitions (partition, node_name)
    SELECT p, names[1 + p % cardinality(names)] FROM generate_series(0, partition_count - 1) p;
END
$$;

-- One partition of each node that holds any, in the order of their first partition:
-- what a PL/Proxy call runs on to reach every node once.
CREATE FUNCTION ddb_router.node_routes() RETURNS SETOF integer
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT min(partition) FROM ddb_router.partitions GROUP BY node_name ORDER BY 1
$$;

-- ---------------------------------------------------------------------------
-- Calls to the nodes (PL/Proxy).  route is a routing hash, or a partition
-- number (below the partition count, a partition is its own hash).
-- ---------------------------------------------------------------------------

-- ddb.execute_metered on the node of a routing hash.
CREATE FUNCTION ddb_router.node_execute(route integer, role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'ddb';
    RUN ON route;
    SELECT ddb.execute_metered(role_name, operation, request);
$$;

-- ddb.execute_rolled_back on the node of a routing hash: a request the router could
-- not route (the node raises its error), a batch that spans nodes checked whole.
CREATE FUNCTION ddb_router.node_execute_rolled_back(route integer, role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'ddb';
    RUN ON route;
    SELECT ddb.execute_rolled_back(role_name, operation, request);
$$;

-- ddb.execute_metered on every node, once each.
CREATE FUNCTION ddb_router.nodes_execute(role_name name, operation text, request jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'ddb';
    RUN ON ddb_router.node_routes();
    SELECT ddb.execute_metered(role_name, operation, request);
$$;

-- ---------------------------------------------------------------------------
-- The router's ddb.execute_metered: the gateway calls it when the database
-- it serves has ddb_router (src/router/).
-- ---------------------------------------------------------------------------

CREATE FUNCTION ddb_router.execute_metered(role_name name, operation text, request jsonb) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_router_execute_metered' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION ddb_router.execute_metered(name, text, jsonb) IS
    'ddb.execute_metered of a sharded deployment: the request routed to the shard nodes by partition key';

-- ---------------------------------------------------------------------------
-- C helpers of the fan-out operations below (src/router/).
-- ---------------------------------------------------------------------------

-- ddb.execute_metered on the node of a route, its error as the node raised it.
CREATE FUNCTION ddb_router.call(route integer, role_name name, operation text, request jsonb) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_router_call' LANGUAGE C VOLATILE;

-- ddb.execute_rolled_back on the node of a route: the answer of a request whose writes are undone, or its error.
CREATE FUNCTION ddb_router.call_rolled_back(route integer, role_name name, operation text, request jsonb) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_router_call_rolled_back' LANGUAGE C VOLATILE;

-- Has a node raise DynamoDB's error for a request the router found invalid.
CREATE FUNCTION ddb_router.raise_invalid(role_name name, operation text, request jsonb) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_router_raise_invalid' LANGUAGE C VOLATILE;

-- The routing hash of the partition key in a Key or Item map of a table; null when it holds none that is valid.
CREATE FUNCTION ddb_router.route_of(table_name text, key jsonb) RETURNS integer
    AS 'MODULE_PATHNAME', 'ddb_router_route_of' LANGUAGE C STABLE STRICT;

-- Refuses (ServiceUnavailable, retryable) a write to a moving partition; takes the partition's writer lock.
CREATE FUNCTION ddb_router.write_guard(route integer) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_router_write_guard' LANGUAGE C VOLATILE STRICT;

-- The route of the node that holds a route's partition: its first partition.
CREATE FUNCTION ddb_router.node_route(route integer) RETURNS integer
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT min(p.partition) FROM ddb_router.partitions p
    WHERE p.node_name = (SELECT q.node_name FROM ddb_router.partitions q
                         WHERE q.partition = route & ((SELECT count(*) FROM ddb_router.partitions)::integer - 1))
$$;

-- The two parts of a node's answer: the capacity by table, and the response.
CREATE FUNCTION ddb_router.answer_consumed(answer text) RETURNS jsonb
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
RETURN split_part(answer, E'\n', 1)::jsonb;

CREATE FUNCTION ddb_router.answer_response(answer text) RETURNS jsonb
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
RETURN substr(answer, strpos(answer, E'\n') + 1)::jsonb;

-- An answer of ddb.execute_metered's form.
CREATE FUNCTION ddb_router.answer(consumed jsonb, response jsonb) RETURNS text
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
RETURN consumed::text || E'\n' || response::text;

-- Two JSON values with their numbers added member by member (capacity of several nodes); null is nothing.
CREATE FUNCTION ddb_router.add_numbers(a jsonb, b jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE
    WHEN a IS NULL THEN b
    WHEN b IS NULL THEN a
    WHEN jsonb_typeof(a) = 'number' AND jsonb_typeof(b) = 'number' THEN to_jsonb(a::numeric + b::numeric)
    WHEN jsonb_typeof(a) = 'array' AND jsonb_typeof(b) = 'array' THEN
        (SELECT coalesce(jsonb_agg(ddb_router.add_numbers(x, y) ORDER BY coalesce(i, j)), '[]')
         FROM jsonb_array_elements(a) WITH ORDINALITY ea(x, i) FULL JOIN jsonb_array_elements(b) WITH ORDINALITY eb(y, j) ON i = j)
    WHEN jsonb_typeof(a) = 'object' AND jsonb_typeof(b) = 'object' THEN
        (SELECT jsonb_object_agg(coalesce(ka, kb), ddb_router.add_numbers(va, vb))
         FROM jsonb_each(a) ea(ka, va) FULL JOIN jsonb_each(b) eb(kb, vb) ON ka = kb)
    ELSE a
    END
$$;

-- Two ConsumedCapacity lists (a batch's, a transaction's) merged by table.
CREATE FUNCTION ddb_router.add_capacity_lists(a jsonb, b jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a ELSE
    (SELECT coalesce(jsonb_agg(ddb_router.add_numbers(x, y) ORDER BY coalesce(x->>'TableName', y->>'TableName')), '[]')
     FROM jsonb_array_elements(a) ea(x) FULL JOIN jsonb_array_elements(b) eb(y) ON x->>'TableName' = y->>'TableName')
END;

-- Two maps of table name to a list (Responses, ItemCollectionMetrics, UnprocessedItems) with the lists of a table joined.
CREATE FUNCTION ddb_router.add_table_lists(a jsonb, b jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a ELSE
    (SELECT coalesce(jsonb_object_agg(coalesce(ka, kb), coalesce(va, '[]') || coalesce(vb, '[]')), '{}')
     FROM jsonb_each(a) ea(ka, va) FULL JOIN jsonb_each(b) eb(kb, vb) ON ka = kb)
END;

-- ---------------------------------------------------------------------------
-- The operations that span nodes: (role, operation, request), answering as
-- ddb.execute_metered does.
-- ---------------------------------------------------------------------------

-- BatchGetItem: the keys split by node, each node's part read there, the answers merged.
CREATE FUNCTION ddb_router.batch_get_item(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    part record;
    answer text;
    response jsonb;
    consumed jsonb := '{}';
    responses jsonb := '{}';
    unprocessed jsonb := '{}';
    capacity jsonb;
BEGIN
    -- what the router cannot split is invalid: a node raises its error
    IF jsonb_typeof(request->'RequestItems') IS DISTINCT FROM 'object'
       OR EXISTS (SELECT FROM jsonb_each(request->'RequestItems') t(name, spec)
                  WHERE jsonb_typeof(spec) <> 'object' OR jsonb_typeof(spec->'Keys') IS DISTINCT FROM 'array')
       OR (SELECT sum(jsonb_array_length(spec->'Keys')) FROM jsonb_each(request->'RequestItems') t(name, spec)) > 100
       OR NOT EXISTS (SELECT FROM jsonb_each(request->'RequestItems'))
       OR EXISTS (SELECT FROM jsonb_each(request->'RequestItems') t(name, spec) WHERE jsonb_array_length(spec->'Keys') = 0)
       OR EXISTS (SELECT FROM jsonb_each(request->'RequestItems') t(name, spec), jsonb_array_elements(spec->'Keys') k(key)
                  WHERE ddb_router.route_of(t.name, k.key) IS NULL) THEN
        RETURN ddb_router.raise_invalid(role_name, operation, request);
    END IF;
    FOR part IN
        SELECT node, jsonb_object_agg(name, spec || jsonb_build_object('Keys', keys)) AS items
        FROM (SELECT ddb_router.node_route(ddb_router.route_of(t.name, k.key)) AS node, t.name, t.spec,
                     jsonb_agg(k.key ORDER BY k.n) AS keys
              FROM jsonb_each(request->'RequestItems') t(name, spec),
                   jsonb_array_elements(t.spec->'Keys') WITH ORDINALITY k(key, n)
              GROUP BY 1, 2, 3) s
        GROUP BY node ORDER BY node
    LOOP
        answer := ddb_router.call(part.node, role_name, operation,
                                  jsonb_set(request, '{RequestItems}', part.items));
        response := ddb_router.answer_response(answer);
        consumed := ddb_router.add_numbers(consumed, ddb_router.answer_consumed(answer));
        responses := ddb_router.add_table_lists(responses, response->'Responses');
        unprocessed := unprocessed || coalesce((
            SELECT jsonb_object_agg(name, CASE WHEN unprocessed ? name
                                               THEN spec || jsonb_build_object('Keys', (unprocessed->name->'Keys') || (spec->'Keys'))
                                               ELSE spec END)
            FROM jsonb_each(response->'UnprocessedKeys') u(name, spec)), '{}');
        capacity := ddb_router.add_capacity_lists(capacity, response->'ConsumedCapacity');
    END LOOP;
    RETURN ddb_router.answer(consumed,
        jsonb_build_object('Responses', responses, 'UnprocessedKeys', unprocessed)
        || CASE WHEN capacity IS NULL THEN '{}' ELSE jsonb_build_object('ConsumedCapacity', capacity) END);
END
$$;

-- The route of each request of a BatchWriteItem, in order (null: one the router cannot route).
CREATE FUNCTION ddb_router.batch_write_routes(request jsonb)
RETURNS TABLE (table_name text, n bigint, write_request jsonb, route integer)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT t.name, w.n, w.r,
           CASE WHEN jsonb_typeof(w.r) = 'object' THEN
               coalesce(ddb_router.route_of(t.name, w.r->'PutRequest'->'Item'),
                        ddb_router.route_of(t.name, w.r->'DeleteRequest'->'Key')) END
    FROM jsonb_each(request->'RequestItems') t(name, list),
         jsonb_array_elements(CASE WHEN jsonb_typeof(t.list) = 'array' THEN t.list ELSE '[null]' END)
             WITH ORDINALITY w(r, n)
$$;

-- BatchWriteItem: the whole batch checked on one node (rolled back), then each node's part written there.
CREATE FUNCTION ddb_router.batch_write_item(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nodes integer[];
    part record;
    answer text;
    response jsonb;
    consumed jsonb := '{}';
    unprocessed jsonb := '{}';
    metrics jsonb;
    capacity jsonb;
BEGIN
    IF jsonb_typeof(request->'RequestItems') IS DISTINCT FROM 'object'
       OR NOT EXISTS (SELECT FROM jsonb_each(request->'RequestItems'))
       OR (SELECT count(*) FROM ddb_router.batch_write_routes(request)) > 25
       OR EXISTS (SELECT FROM ddb_router.batch_write_routes(request) WHERE route IS NULL) THEN
        RETURN ddb_router.raise_invalid(role_name, operation, request);
    END IF;
    PERFORM ddb_router.write_guard(route) FROM ddb_router.batch_write_routes(request)
        GROUP BY route & ((SELECT count(*) FROM ddb_router.partitions)::integer - 1), route;
    nodes := ARRAY(SELECT DISTINCT ddb_router.node_route(route) FROM ddb_router.batch_write_routes(request) ORDER BY 1);
    IF cardinality(nodes) = 1 THEN
        RETURN ddb_router.call(nodes[1], role_name, operation, request);
    END IF;
    -- DynamoDB refuses a batch with one invalid request whole: a node checks it whole first
    PERFORM ddb_router.call_rolled_back(nodes[1], role_name, operation, request);
    FOR part IN
        SELECT node, jsonb_object_agg(table_name, writes) AS items
        FROM (SELECT ddb_router.node_route(route) AS node, table_name, jsonb_agg(write_request ORDER BY n) AS writes
              FROM ddb_router.batch_write_routes(request) GROUP BY 1, 2) s
        GROUP BY node ORDER BY node
    LOOP
        answer := ddb_router.call(part.node, role_name, operation, jsonb_set(request, '{RequestItems}', part.items));
        response := ddb_router.answer_response(answer);
        consumed := ddb_router.add_numbers(consumed, ddb_router.answer_consumed(answer));
        unprocessed := ddb_router.add_table_lists(unprocessed, response->'UnprocessedItems');
        metrics := ddb_router.add_table_lists(metrics, response->'ItemCollectionMetrics');
        capacity := ddb_router.add_capacity_lists(capacity, response->'ConsumedCapacity');
    END LOOP;
    RETURN ddb_router.answer(consumed,
        jsonb_build_object('UnprocessedItems', unprocessed)
        || CASE WHEN metrics IS NULL THEN '{}' ELSE jsonb_build_object('ItemCollectionMetrics', metrics) END
        || CASE WHEN capacity IS NULL THEN '{}' ELSE jsonb_build_object('ConsumedCapacity', capacity) END);
END
$$;

-- Scan: node after node in the order of their first partition, with Limit counted over
-- them; a LastEvaluatedKey names a key of the node the next page starts on.
CREATE FUNCTION ddb_router.scan(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    routes integer[] := ARRAY(SELECT ddb_router.node_routes());
    k integer := 1;
    lim bigint;
    req jsonb := request;
    answer text;
    response jsonb;
    consumed jsonb := '{}';
    items jsonb;
    counted bigint := 0;
    scanned bigint := 0;
    capacity jsonb;
    last_key jsonb;
BEGIN
    IF jsonb_typeof(request->'Limit') = 'number' AND (request->>'Limit')::numeric BETWEEN 1 AND 2147483647
       AND (request->>'Limit')::numeric = trunc((request->>'Limit')::numeric) THEN
        lim := (request->>'Limit')::bigint;
    END IF;
    IF request ? 'ExclusiveStartKey' THEN
        k := array_position(routes, ddb_router.node_route(
                 ddb_router.route_of(request->>'TableName', request->'ExclusiveStartKey')));
        IF k IS NULL THEN
            RETURN ddb_router.raise_invalid(role_name, operation, request);
        END IF;
    END IF;
    LOOP
        IF lim IS NOT NULL THEN
            req := jsonb_set(req, '{Limit}', to_jsonb(lim - scanned));
        END IF;
        answer := ddb_router.call(routes[k], role_name, operation, req);
        response := ddb_router.answer_response(answer);
        consumed := ddb_router.add_numbers(consumed, ddb_router.answer_consumed(answer));
        IF response ? 'Items' THEN
            items := coalesce(items, '[]') || (response->'Items');
        END IF;
        counted := counted + (response->>'Count')::bigint;
        scanned := scanned + (response->>'ScannedCount')::bigint;
        capacity := ddb_router.add_numbers(capacity, response->'ConsumedCapacity');
        last_key := response->'LastEvaluatedKey';
        -- a node that stopped early (Limit, 1 MB) ends the page; the next starts there
        EXIT WHEN last_key IS NOT NULL OR k = cardinality(routes);
        k := k + 1;
        req := req - 'ExclusiveStartKey';
    END LOOP;
    RETURN ddb_router.answer(consumed,
        jsonb_build_object('Count', counted, 'ScannedCount', scanned)
        || CASE WHEN items IS NULL THEN '{}' ELSE jsonb_build_object('Items', items) END
        || CASE WHEN last_key IS NULL THEN '{}' ELSE jsonb_build_object('LastEvaluatedKey', last_key) END
        || CASE WHEN capacity IS NULL THEN '{}' ELSE jsonb_build_object('ConsumedCapacity', capacity) END);
END
$$;

-- A change of a table's definition (CreateTable, UpdateTable, DeleteTable, UpdateTimeToLive,
-- TagResource, UntagResource): made in the router's catalog first (which checks it), then on
-- every node.
CREATE FUNCTION ddb_router.change_table(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    answer text := ddb.execute_metered(role_name, operation, request);
    route integer;
BEGIN
    FOR route IN SELECT ddb_router.node_routes() LOOP
        PERFORM ddb_router.call(route, role_name, operation, request);
    END LOOP;
    RETURN answer;
END
$$;

-- DescribeTable: the router's description, with the item counts and sizes of every node added up.
CREATE FUNCTION ddb_router.describe_table(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    answer text := ddb.execute_metered(role_name, operation, request);
    described jsonb := ddb_router.answer_response(answer)->'Table';
    node jsonb;
    route integer;
    counts jsonb;
BEGIN
    FOR route IN SELECT ddb_router.node_routes() LOOP
        node := ddb_router.answer_response(ddb_router.call(route, role_name, operation, request))->'Table';
        counts := ddb_router.add_numbers(counts, jsonb_build_object(
            'ItemCount', node->'ItemCount', 'TableSizeBytes', node->'TableSizeBytes',
            'GlobalSecondaryIndexes', (SELECT jsonb_object_agg(i->>'IndexName', jsonb_build_object(
                                          'ItemCount', i->'ItemCount', 'IndexSizeBytes', i->'IndexSizeBytes'))
                                       FROM jsonb_array_elements(node->'GlobalSecondaryIndexes') i),
            'LocalSecondaryIndexes', (SELECT jsonb_object_agg(i->>'IndexName', jsonb_build_object(
                                          'ItemCount', i->'ItemCount', 'IndexSizeBytes', i->'IndexSizeBytes'))
                                       FROM jsonb_array_elements(node->'LocalSecondaryIndexes') i)));
    END LOOP;
    described := described || jsonb_build_object('ItemCount', counts->'ItemCount', 'TableSizeBytes', counts->'TableSizeBytes');
    FOR k IN 0 .. coalesce(jsonb_array_length(described->'GlobalSecondaryIndexes'), 0) - 1 LOOP
        described := jsonb_set(described, ARRAY['GlobalSecondaryIndexes', k::text],
            (described->'GlobalSecondaryIndexes'->k)
            || coalesce(counts->'GlobalSecondaryIndexes'->(described->'GlobalSecondaryIndexes'->k->>'IndexName'), '{}'));
    END LOOP;
    FOR k IN 0 .. coalesce(jsonb_array_length(described->'LocalSecondaryIndexes'), 0) - 1 LOOP
        described := jsonb_set(described, ARRAY['LocalSecondaryIndexes', k::text],
            (described->'LocalSecondaryIndexes'->k)
            || coalesce(counts->'LocalSecondaryIndexes'->(described->'LocalSecondaryIndexes'->k->>'IndexName'), '{}'));
    END LOOP;
    RETURN ddb_router.answer(ddb_router.answer_consumed(answer),
                             ddb_router.answer_response(answer) || jsonb_build_object('Table', described));
END
$$;

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
    nodes := ARRAY(SELECT DISTINCT ddb_router.node_route(route) FROM ddb_router.transaction_routes(request));
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
    nodes := ARRAY(SELECT DISTINCT ddb_router.node_route(route) FROM ddb_router.transaction_routes(request));
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

-- A Query of a global index: every node holds a part of it (merged in index order; not served yet).
CREATE FUNCTION ddb_router.query_global_index(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'a Query of a global secondary index is not served yet'
        USING ERRCODE = 'YD001',
              DETAIL = jsonb_build_object('__type', 'com.amazon.coral.validate#ValidationException',
                                          'message', 'a Query of a global secondary index is not served yet')::text;
END
$$;
