-- ---------------------------------------------------------------------------
-- PartiQL through the router: a statement goes where the operation it stands
-- for goes (src/router/route.c reads it with the node's own parser).
-- ---------------------------------------------------------------------------

-- Where a PartiQL statement ({"Statement", "Parameters"}) goes: the routing hash of what
-- it addresses, or spans (a Scan, a global index); null and false when it is invalid;
-- and the operation it stands for, with its request.
CREATE FUNCTION ddb_router.statement_route(element jsonb, OUT route integer, OUT spans boolean, OUT operation text,
                                           OUT request jsonb)
    AS 'MODULE_PATHNAME', 'ddb_router_statement_route' LANGUAGE C STABLE STRICT;

-- A router's token (a ShardIterator; a NextToken, of a statement): the
-- place of a node and the node's own token, which the node opens, or none
-- (the node's first page); sealed with the router's secret by ddb_model (src/router/node_tokens.c).
-- It stands for nothing the node's token does not, so any role may seal one.
CREATE FUNCTION ddb_router.seal_node_token(kind text, statement text, node integer, token text) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_router_seal_node_token' LANGUAGE C STABLE;
-- The node and the node's token of a router's token; NULLs for anything else
-- (edited, forged, sealed for another kind or statement, or not the object sealed).
CREATE FUNCTION ddb_router.open_node_token(kind text, statement text, token text, OUT node integer, OUT token text)
    AS 'MODULE_PATHNAME', 'ddb_router_open_node_token' LANGUAGE C STABLE;

-- True for the operations that write.
CREATE FUNCTION ddb_router.writes(operation text) RETURNS boolean
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN operation IN ('PutItem', 'UpdateItem', 'DeleteItem');

-- ExecuteStatement: on the node of what the statement addresses.  A SELECT that reads
-- every node goes node after node, a page per node at most, with a NextToken of the
-- router's (sealed, naming the node and the node's own NextToken).
CREATE FUNCTION ddb_router.execute_statement(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    destination record := ddb_router.statement_route(request);
    routes integer[] := ARRAY(SELECT ddb_router.node_routes());
    position record;
    node integer := 1;
    node_token text;
    answer text;
    response jsonb;
    next text;
BEGIN
    IF destination.route IS NOT NULL THEN
        IF ddb_router.writes(destination.operation) THEN
            PERFORM ddb_router.write_guard(destination.route);
        END IF;
        RETURN ddb_router.call(destination.route, role_name, operation, request);
    END IF;
    IF NOT destination.spans THEN
        RETURN ddb_router.raise_invalid(role_name, operation, request);
    END IF;
    IF request ? 'NextToken' THEN
        SELECT * INTO position FROM ddb_router.open_node_token('NextToken', request->>'Statement', request->>'NextToken');
        IF position.node IS NULL OR position.node > cardinality(routes) THEN
            PERFORM ddb_router.raise_error('YD001', 'The provided NextToken is not valid', NULL, NULL);
        END IF;
        node := position.node;
        node_token := position.token;
    END IF;
    answer := ddb_router.call(routes[node], role_name, operation,
                              (request - 'NextToken') || jsonb_strip_nulls(jsonb_build_object('NextToken', node_token)));
    response := ddb_router.answer_response(answer);
    next := CASE WHEN response ? 'NextToken'
                 THEN ddb_router.seal_node_token('NextToken', request->>'Statement', node, response->>'NextToken')
                 WHEN node < cardinality(routes)
                 THEN ddb_router.seal_node_token('NextToken', request->>'Statement', node + 1, NULL)
            END;
    RETURN ddb_router.answer(ddb_router.answer_consumed(answer),
        (response - 'NextToken') || CASE WHEN next IS NULL THEN '{}' ELSE jsonb_build_object('NextToken', next) END);
END
$$;

-- Each statement of a list with where it goes (route 0 for one that cannot be routed), its operation and request.
CREATE FUNCTION ddb_router.statement_routes(statements jsonb)
RETURNS TABLE (n bigint, element jsonb, route integer, operation text, request jsonb)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT s.n, s.element, coalesce(d.route, 0), d.operation, d.request
    FROM jsonb_array_elements(statements) WITH ORDINALITY s(element, n)
         LEFT JOIN LATERAL ddb_router.statement_route(s.element) d ON true
$$;

-- BatchExecuteStatement: each statement on the node of the item it addresses (one that
-- cannot be routed on the first node, which reports its error in its place), the nodes'
-- responses put back in the statements' order.
CREATE FUNCTION ddb_router.batch_execute_statement(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    routed jsonb;
    part record;
    answer text;
    response jsonb;
    consumed jsonb := '{}';
    capacity jsonb;
    responses jsonb[];
BEGIN
    IF jsonb_typeof(request->'Statements') IS DISTINCT FROM 'array'
       OR jsonb_array_length(request->'Statements') NOT BETWEEN 1 AND 25 THEN
        RETURN ddb_router.raise_invalid(role_name, operation, request);
    END IF;
    routed := (SELECT jsonb_agg(to_jsonb(r) ORDER BY r.n) FROM ddb_router.statement_routes(request->'Statements') r);
    PERFORM ddb_router.write_guard((r->>'route')::integer) FROM jsonb_array_elements(routed) r
    WHERE ddb_router.writes(r->>'operation');
    responses := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(routed)]);
    FOR part IN
        SELECT ddb_router.node_route((r->>'route')::integer) AS node, min((r->>'route')::integer) AS via,
               array_agg((r->>'n')::integer ORDER BY (r->>'n')::integer) AS positions,
               jsonb_agg(r->'element' ORDER BY (r->>'n')::integer) AS statements
        FROM jsonb_array_elements(routed) r GROUP BY 1 ORDER BY 1
    LOOP
        -- through a route of one of its statements, which follows a move of its partition
        answer := ddb_router.call(part.via, role_name, operation, jsonb_set(request, '{Statements}', part.statements));
        response := ddb_router.answer_response(answer);
        consumed := ddb_router.add_numbers(consumed, ddb_router.answer_consumed(answer));
        capacity := ddb_router.add_capacity_lists(capacity, response->'ConsumedCapacity');
        FOR i IN 1 .. cardinality(part.positions) LOOP
            responses[part.positions[i]] := response->'Responses'->(i - 1);
        END LOOP;
    END LOOP;
    RETURN ddb_router.answer(consumed, jsonb_build_object('Responses', to_jsonb(responses))
        || CASE WHEN capacity IS NULL THEN '{}' ELSE jsonb_build_object('ConsumedCapacity', capacity) END);
END
$$;
