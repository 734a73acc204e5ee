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
    -- each node's part goes through the route of one of its keys: a node's first partition may be
    -- moved away between this statement and the call (ddb_router.move_partition)
    FOR part IN
        SELECT node, min(via) AS via, jsonb_object_agg(name, spec || jsonb_build_object('Keys', keys)) AS items
        FROM (SELECT ddb_router.node_route(ddb_router.route_of(t.name, k.key)) AS node, t.name, t.spec,
                     min(ddb_router.route_of(t.name, k.key)) AS via, jsonb_agg(k.key ORDER BY k.n) AS keys
              FROM jsonb_each(request->'RequestItems') t(name, spec),
                   jsonb_array_elements(t.spec->'Keys') WITH ORDINALITY k(key, n)
              GROUP BY 1, 2, 3) s
        GROUP BY node ORDER BY node
    LOOP
        answer := ddb_router.call(part.via, role_name, operation,
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
    -- a route of one item of each node: a node's first partition may be moved away between a
    -- statement and the call (ddb_router.move_partition); an item's own route follows it
    nodes := ARRAY(SELECT min(route) FROM ddb_router.batch_write_routes(request)
                   GROUP BY ddb_router.node_route(route) ORDER BY ddb_router.node_route(route));
    IF cardinality(nodes) = 1 THEN
        RETURN ddb_router.call(nodes[1], role_name, operation, request);
    END IF;
    -- DynamoDB refuses a batch with one invalid request whole: a node checks it whole first
    PERFORM ddb_router.call_rolled_back(nodes[1], role_name, operation, request);
    FOR part IN
        SELECT node, min(via) AS via, jsonb_object_agg(table_name, writes) AS items
        FROM (SELECT ddb_router.node_route(route) AS node, table_name, min(route) AS via,
                     jsonb_agg(write_request ORDER BY n) AS writes
              FROM ddb_router.batch_write_routes(request) GROUP BY 1, 2) s
        GROUP BY node ORDER BY node
    LOOP
        answer := ddb_router.call(part.via, role_name, operation, jsonb_set(request, '{RequestItems}', part.items));
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

-- Scan: node after node in the order of their first partition, one page over them: Limit counts
-- the rows read on every node, and each node reads what is left of the page's 1 MB
-- (ddb.execute_for_merge), so a page ends where DynamoDB's would; its LastEvaluatedKey is a node's,
-- or the key of the last row read where Limit or the 1 MB ran out at a node's end, and names the
-- node the next page starts on.  A row of a partition its node does not hold (left there while a
-- partition moves) is dropped.
CREATE FUNCTION ddb_router.scan(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    routes integer[] := ARRAY(SELECT ddb_router.node_routes());
    partition_count integer := (SELECT count(*) FROM ddb_router.partitions);
    owner integer[] := ARRAY(SELECT array_position(routes, ddb_router.node_route(p))
                             FROM generate_series(0, partition_count - 1) p ORDER BY p);
    table_hash text := (SELECT t.hash_key FROM ddb.tables t WHERE t.table_name = request->>'TableName');
    k integer := 1;
    lim bigint;
    read_rows bigint := 0;
    budget bigint := 1048576;
    req jsonb := request;
    answer text;
    response jsonb;
    consumed jsonb := '{}';
    capacity jsonb;
    items jsonb;
    counted bigint := 0;
    scanned bigint := 0;
    last_key jsonb;
    next_key jsonb;
    part record;
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
            req := jsonb_set(req, '{Limit}', to_jsonb(lim - read_rows));
        END IF;
        answer := ddb_router.call_for_merge(routes[k], role_name, operation, req, budget::integer);
        response := ddb_router.answer_response(answer);
        consumed := ddb_router.add_numbers(consumed, ddb_router.answer_consumed(answer));
        capacity := ddb_router.add_numbers(capacity, response->'ConsumedCapacity');
        SELECT coalesce(jsonb_agg(response->'Items'->((e->>1)::integer) ORDER BY n)
                            FILTER (WHERE owned AND (e->>1)::integer >= 0), '[]') AS kept,
               count(*) FILTER (WHERE owned AND (e->>1)::integer >= 0) AS counted,
               count(*) FILTER (WHERE owned) AS scanned,
               count(*) AS read_rows,
               coalesce(sum((e->>2)::bigint), 0) AS bytes,
               (array_agg(e->0 ORDER BY n DESC))[1] AS last_key
        INTO part
        FROM jsonb_array_elements(response->'EvaluatedKeys') WITH ORDINALITY x(e, n),
             LATERAL (SELECT owner[(ddb_router.route_hash(request->>'TableName', ddb_router.key_of(e->0->table_hash))
                                    & (partition_count - 1)) + 1] = k AS owned) o;
        IF response ? 'Items' THEN
            items := coalesce(items, '[]') || part.kept;
        END IF;
        counted := counted + part.counted;
        scanned := scanned + part.scanned;
        read_rows := read_rows + part.read_rows;
        budget := budget - part.bytes;
        last_key := coalesce(part.last_key, last_key);
        IF response ? 'LastEvaluatedKey' THEN
            next_key := response->'LastEvaluatedKey';
            EXIT;
        END IF;
        EXIT WHEN k = cardinality(routes);
        IF budget <= 0 OR (lim IS NOT NULL AND read_rows >= lim) THEN
            next_key := last_key;
            EXIT;
        END IF;
        k := k + 1;
        req := req - 'ExclusiveStartKey';
    END LOOP;
    RETURN ddb_router.answer(consumed,
        jsonb_build_object('Count', counted, 'ScannedCount', scanned)
        || CASE WHEN items IS NULL THEN '{}' ELSE jsonb_build_object('Items', items) END
        || CASE WHEN next_key IS NULL THEN '{}' ELSE jsonb_build_object('LastEvaluatedKey', next_key) END
        || CASE WHEN capacity IS NULL THEN '{}' ELSE jsonb_build_object('ConsumedCapacity', capacity) END);
END
$$;

-- A change of a table's definition (CreateTable, UpdateTable, DeleteTable, UpdateTimeToLive,
-- TagResource, UntagResource): made in the router's catalog first (which checks it: its error is the
-- answer), then on every node that holds partitions, all of it with two-phase commit
-- (sql/router/two_phase.sql): every catalog changes, or none.  It commits on its own, not with the
-- caller's transaction.
CREATE FUNCTION ddb_router.change_table(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    outcome jsonb := ddb_router.two_phase_commit(role_name, operation,
        format('SELECT ddb.execute_metered(%L, %L, %L)', role_name, operation, request),
        (SELECT jsonb_object_agg(p.node_name, request) FROM (SELECT DISTINCT q.node_name FROM ddb_router.partitions q) p));
BEGIN
    IF outcome ? 'failed' THEN
        PERFORM ddb_router.raise_error(outcome->'error'->>'sqlstate', outcome->'error'->>'message',
                                       outcome->'error'->>'detail', outcome->'error'->>'hint');
    END IF;
    RETURN outcome->>'@router';
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

-- A Query of a global index: every node holds the entries of its own items.
-- Each node reads the page the request asks for (the same Limit and
-- ExclusiveStartKey) and gives the key of every row it read
-- (ddb.execute_for_merge); the rows are merged in the index's order (its
-- sort key, then the table's keys: docs/api.md), cut where the first node
-- that stopped early stopped (no node has read past that point), to Limit
-- and to 1 MB; LastEvaluatedKey is the last row taken.  A row of a partition its
-- node does not hold (left behind by a move in progress) is dropped.
CREATE FUNCTION ddb_router.query_global_index(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    routes integer[] := ARRAY(SELECT ddb_router.node_routes());
    partition_count integer := (SELECT count(*) FROM ddb_router.partitions);
    owner integer[];
    attributes text[];
    table_hash text;
    forward boolean := coalesce((request->'ScanIndexForward')::boolean, true);
    lim bigint := (request->>'Limit')::bigint;
    answer text;
    response jsonb;
    consumed jsonb := '{}';
    capacity jsonb;
    has_items boolean := false;
    rows jsonb := '[]';
    merged record;
BEGIN
    IF cardinality(routes) = 1 THEN
        RETURN ddb_router.call(routes[1], role_name, operation, request);
    END IF;
    -- the order: the index's sort key attributes, then the table's keys
    SELECT coalesce(ARRAY[i.range_key] || coalesce(i.extra_range_keys, '{}'), '{}') || ARRAY[t.hash_key]
           || coalesce(ARRAY[t.range_key], '{}'), t.hash_key
    INTO attributes, table_hash
    FROM ddb.tables t JOIN ddb.indexes i USING (table_name)
    WHERE t.table_name = request->>'TableName' AND i.index_name = request->>'IndexName';
    attributes := array_remove(attributes, NULL);
    -- the node (its place in routes) of each partition
    owner := ARRAY(SELECT array_position(routes, ddb_router.node_route(p))
                   FROM generate_series(0, partition_count - 1) p ORDER BY p);
    FOR k IN 1 .. cardinality(routes) LOOP
        answer := ddb_router.call_for_merge(routes[k], role_name, operation, request);
        response := ddb_router.answer_response(answer);
        consumed := ddb_router.add_numbers(consumed, ddb_router.answer_consumed(answer));
        capacity := ddb_router.add_numbers(capacity, response->'ConsumedCapacity');
        has_items := has_items OR response ? 'Items';
        rows := rows || (
            SELECT coalesce(jsonb_agg(jsonb_build_object(
                       'node', k, 'key', e->0, 'kept', (e->>1)::integer >= 0, 'bytes', e->2,
                       'item', response->'Items'->((e->>1)::integer),
                       'cut', response ? 'LastEvaluatedKey' AND n = jsonb_array_length(response->'EvaluatedKeys'))
                   ORDER BY n), '[]')
            FROM jsonb_array_elements(response->'EvaluatedKeys') WITH ORDINALITY x(e, n));
    END LOOP;
    WITH read AS (
        SELECT x, ARRAY(SELECT ddb_router.key_of(x->'key'->a) FROM unnest(attributes) WITH ORDINALITY u(a, i) ORDER BY i) AS sort
        FROM jsonb_array_elements(rows) x
        WHERE owner[(ddb_router.route_hash(request->>'TableName', ddb_router.key_of(x->'key'->table_hash)) & (partition_count - 1)) + 1]
              = (x->>'node')::integer),
    cut AS (
        SELECT CASE WHEN forward THEN min(sort) ELSE max(sort) END AS sort FROM read WHERE (x->>'cut')::boolean),
    ordered AS (
        SELECT read.x, row_number() OVER (ORDER BY CASE WHEN forward THEN read.sort END,
                                                   CASE WHEN NOT forward THEN read.sort END DESC) AS pos
        FROM read, cut
        WHERE cut.sort IS NULL OR (forward AND read.sort <= cut.sort) OR (NOT forward AND read.sort >= cut.sort)),
    -- Limit, then 1 MB: a row is taken while the rows before it read less (the first always)
    sized AS (
        SELECT ordered.*, sum((x->>'bytes')::bigint) OVER (ORDER BY pos) - (x->>'bytes')::bigint AS before
        FROM ordered WHERE lim IS NULL OR pos <= lim),
    taken AS (
        SELECT * FROM sized WHERE pos = 1 OR before + (x->>'bytes')::bigint <= 1048576)
    SELECT coalesce((SELECT jsonb_agg(x->'item' ORDER BY pos) FILTER (WHERE (x->>'kept')::boolean) FROM taken), '[]') AS items,
           (SELECT count(*) FILTER (WHERE (x->>'kept')::boolean) FROM taken) AS counted,
           (SELECT count(*) FROM taken) AS scanned,
           CASE WHEN (SELECT count(*) FROM read) > (SELECT count(*) FROM taken) OR (SELECT sort FROM cut) IS NOT NULL
                THEN (SELECT x->'key' FROM taken ORDER BY pos DESC LIMIT 1) END AS last_key
    INTO merged;
    RETURN ddb_router.answer(consumed,
        jsonb_build_object('Count', merged.counted, 'ScannedCount', merged.scanned)
        || CASE WHEN has_items THEN jsonb_build_object('Items', merged.items) ELSE '{}' END
        || CASE WHEN merged.last_key IS NULL THEN '{}' ELSE jsonb_build_object('LastEvaluatedKey', merged.last_key) END
        || CASE WHEN capacity IS NULL THEN '{}' ELSE jsonb_build_object('ConsumedCapacity', capacity) END);
END
$$;
