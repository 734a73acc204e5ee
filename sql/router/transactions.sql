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

-- TransactWriteItems, TransactGetItems and ExecuteTransaction: on the node that holds every item
-- (atomic there), or across nodes; a transaction with an element the router cannot route is
-- invalid, and a node raises its error.  Writes take their partitions' writer guards.
CREATE FUNCTION ddb_router.transact(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    elements jsonb := (SELECT jsonb_agg(to_jsonb(e)) FROM ddb_router.transaction_elements(operation, request) e);
    nodes integer[];
BEGIN
    IF elements IS NULL OR EXISTS (SELECT FROM jsonb_array_elements(elements) e WHERE e->'route' = 'null') THEN
        RETURN ddb_router.raise_invalid(role_name, operation, request);
    END IF;
    PERFORM ddb_router.write_guard((e->>'route')::integer) FROM jsonb_array_elements(elements) e
    WHERE (e->>'writes')::boolean;
    -- a route of one element of each node (an element's own route follows a move of its partition)
    nodes := ARRAY(SELECT min((e->>'route')::integer) FROM jsonb_array_elements(elements) e
                   GROUP BY ddb_router.node_route((e->>'route')::integer));
    IF cardinality(nodes) > 1 THEN
        RETURN ddb_router.transact_across_nodes(role_name, operation, request);
    END IF;
    RETURN ddb_router.call(nodes[1], role_name, operation, request);
END
$$;
-- The node that holds a route's partition.
CREATE FUNCTION ddb_router.node_of(route integer) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT p.node_name FROM ddb_router.partitions p
        WHERE p.partition = route & ((SELECT count(*) FROM ddb_router.partitions)::integer - 1));

-- The elements of a transaction (TransactItems, or an ExecuteTransaction's TransactStatements), in
-- order from 1, each with its route (null: one the router cannot route), whether it reads (a Get, a
-- SELECT) and whether it takes its partition's writer guard (every action of a TransactWriteItems,
-- a statement that writes).
CREATE FUNCTION ddb_router.transaction_elements(operation text, request jsonb)
RETURNS TABLE (n bigint, element jsonb, route integer, reads boolean, writes boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT r.n, request->'TransactItems'->(r.n::integer - 1), r.route, request->'TransactItems'->(r.n::integer - 1) ? 'Get',
           transaction_elements.operation = 'TransactWriteItems'
    FROM ddb_router.transaction_routes(request) r
    WHERE transaction_elements.operation <> 'ExecuteTransaction'
    UNION ALL
    SELECT s.n, s.element, CASE WHEN s.operation IS NOT NULL THEN s.route END, s.operation IN ('Query', 'Scan'),
           ddb_router.writes(s.operation)
    FROM ddb_router.statement_routes(request->'TransactStatements') s
    WHERE transaction_elements.operation = 'ExecuteTransaction'
$$;

-- The digest a ClientRequestToken is claimed with: md5 of the acting role's oid and the request
-- without its token, as a node digests its own (src/api/transactions.c).
CREATE FUNCTION ddb_router.token_digest(role_name name, request jsonb) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN md5(format('%s:%s', (SELECT r.oid FROM pg_roles r WHERE r.rolname = coalesce(role_name, current_user)),
                  request - 'ClientRequestToken'));

-- Claims the ClientRequestToken of a transaction across nodes in the router's own part of it, as a
-- node claims the token of its own (ddb.transaction_tokens, ten minutes): 'claimed' when the request
-- is to run, null when this very request ran under it (a retry), IdempotentParameterMismatchException
-- when another request did.  A concurrent claim of the token waits for this one's outcome.
CREATE FUNCTION ddb_router.claim_token(client_token text, digest text) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM ddb.transaction_tokens t WHERE t.created_at < now() - interval '10 minutes';
    INSERT INTO ddb.transaction_tokens (token, request_digest) VALUES (client_token, digest) ON CONFLICT DO NOTHING;
    IF FOUND THEN
        RETURN 'claimed';
    END IF;
    IF (SELECT t.request_digest FROM ddb.transaction_tokens t WHERE t.token = client_token) = digest THEN
        RETURN NULL;
    END IF;
    PERFORM ddb_router.raise_error('YD008', 'Request failed with the same idempotency token but different parameters', NULL, NULL);
END
$$;

-- Cancellation reasons of a node's part (a TransactionCanceledException's detail) put in their
-- places in the whole request ({place: reason}, places: the part's actions' places), the reasons
-- found so far kept.
CREATE FUNCTION ddb_router.place_reasons(found jsonb, places jsonb, detail text) RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT found || coalesce(jsonb_object_agg(places->>(k::integer - 1), c.reason), '{}')
    FROM jsonb_array_elements(detail::jsonb->'CancellationReasons') WITH ORDINALITY c(reason, k)
    WHERE c.reason->>'Code' <> 'None'
$$;

-- The writes of a transaction over items of several nodes (TransactWriteItems, an ExecuteTransaction
-- that writes): each node's actions, in their order, run there and committed on every node with
-- two-phase commit, or on none.  A part's cancellation is the whole request's, its reasons at their
-- places and None for the other actions; its ClientRequestToken is the router's (claimed in the
-- router's part), the nodes' parts carry none.  Answers as a node answers the whole request.
CREATE FUNCTION ddb_router.write_across_nodes(role_name name, operation text, request jsonb, member text) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts jsonb;
    positions jsonb;
    vias jsonb;
    outcome jsonb;
    failed text;
    node text;
    reasons jsonb;
    detail text;
    answer text;
    response jsonb;
    consumed jsonb := '{}';
    metrics jsonb;
    capacity jsonb;
BEGIN
    SELECT jsonb_object_agg(s.node, jsonb_set(request - 'ClientRequestToken', ARRAY[member], s.elements)),
           jsonb_object_agg(s.node, s.places), jsonb_object_agg(s.node, s.via)
    INTO parts, positions, vias
    FROM (SELECT ddb_router.node_of(e.route) AS node, jsonb_agg(e.element ORDER BY e.n) AS elements,
                 jsonb_agg(e.n - 1 ORDER BY e.n) AS places, min(e.route) AS via
          FROM ddb_router.transaction_elements(operation, request) e GROUP BY 1) s;
    outcome := ddb_router.two_phase_commit(role_name, operation,
        CASE WHEN request ? 'ClientRequestToken' THEN
            format('SELECT ddb_router.claim_token(%L, %L)', request->>'ClientRequestToken',
                   ddb_router.token_digest(role_name, request)) END,
        parts);
    failed := outcome->>'failed';
    IF failed IS NOT NULL THEN
        IF outcome->'error'->>'sqlstate' = 'YD003' THEN
            -- DynamoDB gives a reason for every action: the nodes after the one that cancelled (the
            -- ones before went through) run their parts rolled back for theirs
            reasons := ddb_router.place_reasons('{}', positions->failed, outcome->'error'->>'detail');
            FOR node IN SELECT k FROM jsonb_object_keys(parts) k WHERE k COLLATE "C" > failed COLLATE "C" LOOP
                BEGIN
                    PERFORM ddb_router.call_rolled_back((vias->>node)::integer, role_name, operation, parts->node);
                EXCEPTION WHEN SQLSTATE 'YD003' THEN
                    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
                    reasons := ddb_router.place_reasons(reasons, positions->node, detail);
                END;
            END LOOP;
            PERFORM ddb_router.raise_cancelled((
                SELECT jsonb_agg(coalesce(reasons->i::text, '{"Code": "None"}') ORDER BY i)
                FROM generate_series(0, jsonb_array_length(request->member) - 1) i));
        END IF;
        PERFORM ddb_router.raise_error(outcome->'error'->>'sqlstate', outcome->'error'->>'message',
                                       outcome->'error'->>'detail', outcome->'error'->>'hint');
    END IF;
    IF outcome->'@router' = 'null' THEN
        -- the request ran under its token before: answered as a node answers a retry
        RETURN ddb_router.answer('{}', '{}');
    END IF;
    FOR answer IN SELECT a.value #>> '{}' FROM jsonb_each(outcome - '@router') a ORDER BY a.key COLLATE "C" LOOP
        response := ddb_router.answer_response(answer);
        consumed := ddb_router.add_numbers(consumed, ddb_router.answer_consumed(answer));
        metrics := ddb_router.add_table_lists(metrics, response->'ItemCollectionMetrics');
        capacity := ddb_router.add_capacity_lists(capacity, response->'ConsumedCapacity');
    END LOOP;
    RETURN ddb_router.answer(consumed,
        CASE WHEN metrics IS NULL THEN '{}' ELSE jsonb_build_object('ItemCollectionMetrics', metrics) END
        || CASE WHEN capacity IS NULL THEN '{}' ELSE jsonb_build_object('ConsumedCapacity', capacity) END);
END
$$;

-- The reads of a transaction over items of several nodes (TransactGetItems, an ExecuteTransaction of
-- SELECTs): node after node in ascending order of name, in a remote transaction each that first claims
-- the node's items shared (a TransactWriteItems holding one of them cancels the read with
-- TransactionConflict; one that tries to claim an item held is cancelled), then reads them.  Every
-- remote transaction stays open, its claims held, until every node has been read.  The responses are
-- put back in order.
CREATE FUNCTION ddb_router.read_across_nodes(role_name name, operation text, request jsonb, member text) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    part record;
    opened text[] := '{}';
    pending jsonb;
    conflicts bigint[];
    answer text;
    response jsonb;
    consumed jsonb := '{}';
    capacity jsonb;
    responses jsonb[] := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(request->member)]);
    state text;
    message text;
    detail text;
    hint text;
BEGIN
    BEGIN
        FOR part IN
            SELECT * FROM (
                SELECT ddb_router.node_of(e.route) AS node, array_agg(e.n ORDER BY e.n) AS places,
                       jsonb_agg(e.element ORDER BY e.n) AS elements,
                       jsonb_agg(jsonb_build_array(e.n, e.element) ORDER BY e.n) AS claims
                FROM ddb_router.transaction_elements(operation, request) e GROUP BY 1) s
            ORDER BY s.node COLLATE "C"
        LOOP
            PERFORM ddb_router.remote(part.node, 'BEGIN', true);
            opened := opened || part.node;
            -- the claims, each tried for 10 ms at most, as a node tries its own
            pending := part.claims;
            FOR attempt IN 1 .. 10 LOOP
                pending := ddb_router.remote(part.node, format('SELECT ddb.try_claim_items(%L)::text', pending))::jsonb;
                EXIT WHEN pending = '[]' OR attempt = 10;
                PERFORM pg_sleep(0.001);
            END LOOP;
            IF pending <> '[]' THEN
                conflicts := ARRAY(SELECT (c->>0)::bigint FROM jsonb_array_elements(pending) c);
                EXIT;
            END IF;
            answer := ddb_router.remote(part.node, format('SELECT ddb.execute_metered(%L, %L, %L)',
                                        role_name, operation, jsonb_set(request, ARRAY[member], part.elements)));
            response := ddb_router.answer_response(answer);
            consumed := ddb_router.add_numbers(consumed, ddb_router.answer_consumed(answer));
            capacity := ddb_router.add_capacity_lists(capacity, response->'ConsumedCapacity');
            FOR i IN 1 .. cardinality(part.places) LOOP
                responses[part.places[i]] := response->'Responses'->(i - 1);
            END LOOP;
        END LOOP;
        -- every node read (or a claim held elsewhere): the remote transactions end, and their claims
        WHILE cardinality(opened) > 0 LOOP
            PERFORM ddb_router.remote(opened[1], 'ROLLBACK');
            opened := opened[2:];
        END LOOP;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                                detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
        PERFORM ddb_router.abandon(NULL, opened, '{}');
        PERFORM ddb_router.raise_error(state, message, nullif(detail, ''), nullif(hint, ''));
    END;
    IF conflicts IS NOT NULL THEN
        PERFORM ddb_router.raise_cancelled((
            SELECT jsonb_agg(CASE WHEN i = ANY (conflicts)
                                  THEN '{"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}'::jsonb
                                  ELSE '{"Code": "None"}'::jsonb END ORDER BY i)
            FROM generate_series(1, cardinality(responses)) i));
    END IF;
    RETURN ddb_router.answer(consumed, jsonb_build_object('Responses', to_jsonb(responses))
        || CASE WHEN capacity IS NULL THEN '{}' ELSE jsonb_build_object('ConsumedCapacity', capacity) END);
END
$$;

-- A transaction over items of several nodes (TransactWriteItems, TransactGetItems, ExecuteTransaction;
-- docs/scale-out.md, "Transactions across shards").  DynamoDB's checks of the whole request come
-- first, in a node's order, from one node that runs it rolled back (a malformed expression anywhere,
-- two actions on one item, the limits, the token); a cancellation there says nothing of a write, whose
-- other nodes' items are not there, but is a read's answer (a key DynamoDB refuses).
CREATE FUNCTION ddb_router.transact_across_nodes(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    member text := CASE operation WHEN 'ExecuteTransaction' THEN 'TransactStatements' ELSE 'TransactItems' END;
    reads boolean;
    first_route integer;
BEGIN
    SELECT CASE operation WHEN 'TransactGetItems' THEN true WHEN 'TransactWriteItems' THEN false ELSE bool_and(e.reads) END,
           min(e.route) FILTER (WHERE e.n = 1)
    INTO reads, first_route
    FROM ddb_router.transaction_elements(operation, request) e;
    BEGIN
        PERFORM ddb_router.call_rolled_back(first_route, role_name, operation, request);
    EXCEPTION WHEN SQLSTATE 'YD003' THEN
        IF reads THEN
            RAISE;
        END IF;
    END;
    IF reads THEN
        RETURN ddb_router.read_across_nodes(role_name, operation, request, member);
    END IF;
    RETURN ddb_router.write_across_nodes(role_name, operation, request, member);
END
$$;
