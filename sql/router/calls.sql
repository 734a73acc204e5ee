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

-- ddb.execute_for_merge (a Query whose answer has the key of every row read) on the node of a routing hash.
CREATE FUNCTION ddb_router.node_execute_for_merge(route integer, role_name name, operation text, request jsonb,
                                                  page_bytes integer) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'ddb';
    RUN ON route;
    SELECT ddb.execute_for_merge(role_name, operation, request, page_bytes);
$$;

-- ---------------------------------------------------------------------------
-- C helpers of the fan-out operations below (src/router/): the node calls and
-- the writer lock take effect only within a request ddb_router.execute_metered
-- serves (42501 otherwise), so that no role sends a write past the router's
-- routing, writer locks and unique claims, nor holds a lock without writing.
-- ---------------------------------------------------------------------------

-- ddb.execute_metered on the node of a route, its error as the node raised it.
CREATE FUNCTION ddb_router.call(route integer, role_name name, operation text, request jsonb) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_router_call' LANGUAGE C VOLATILE;

-- ddb.execute_rolled_back on the node of a route: the answer of a request whose writes are undone, or its error.
CREATE FUNCTION ddb_router.call_rolled_back(route integer, role_name name, operation text, request jsonb) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_router_call_rolled_back' LANGUAGE C VOLATILE;

-- ddb.execute_for_merge on the node of a route: a page with the key of every row it read, of
-- page_bytes at most (null: 1 MB).
CREATE FUNCTION ddb_router.call_for_merge(route integer, role_name name, operation text, request jsonb,
                                          page_bytes integer DEFAULT NULL) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_router_call_for_merge' LANGUAGE C VOLATILE;

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

-- The key value of a DynamoDB AttributeValue of a key ({"S": ...}, {"N": ...}, {"B": ...}).
CREATE FUNCTION ddb_router.key_of(av jsonb) RETURNS ddb.ddb_key
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN av ? 'S' THEN ddb.ddb_key(av->>'S')
            WHEN av ? 'N' THEN ddb.ddb_key((av->>'N')::numeric)
            WHEN av ? 'B' THEN ddb.ddb_key(decode(av->>'B', 'base64')) END;

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

