-- ---------------------------------------------------------------------------
-- DynamoDB Streams through the router: a table's stream is the router's (its
-- ARN and label, ListStreams), and its shards are the nodes' streams, one
-- shard each: the router's shard id names the node (shardId-<node's place,
-- 8 digits>-<the node's own>), and its shard iterators carry the node's,
-- sealed with the router's secret.  Sequence numbers are per shard, as in
-- DynamoDB.
-- ---------------------------------------------------------------------------

-- The stream (ARN) of a table on the node of a route, or null when it has none.
CREATE FUNCTION ddb_router.node_stream_arn(route integer, role_name name, table_name text) RETURNS text
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
RETURN ddb_router.answer_response(ddb_router.call(route, role_name, 'DescribeTable',
                                                  jsonb_build_object('TableName', table_name)))->'Table'->>'LatestStreamArn';

-- DescribeStream: the router's description of the stream, with a shard per node.
CREATE FUNCTION ddb_router.describe_stream(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    answer text := ddb.execute_metered(role_name, operation, request);
    described jsonb := ddb_router.answer_response(answer)->'StreamDescription';
    routes integer[] := ARRAY(SELECT ddb_router.node_routes());
    node_arn text;
    shards jsonb := '[]';
BEGIN
    FOR k IN 1 .. cardinality(routes) LOOP
        node_arn := ddb_router.node_stream_arn(routes[k], role_name, described->>'TableName');
        CONTINUE WHEN node_arn IS NULL;
        shards := shards || (
            SELECT coalesce(jsonb_agg(shard || jsonb_build_object('ShardId',
                       'shardId-' || lpad(k::text, 8, '0') || '-' || substring(shard->>'ShardId' FROM '^shardId-[0-9]{8}-(.*)$'))), '[]')
            FROM jsonb_array_elements(ddb_router.answer_response(ddb_router.call(routes[k], role_name, operation,
                     jsonb_build_object('StreamArn', node_arn)))->'StreamDescription'->'Shards') shard);
    END LOOP;
    RETURN ddb_router.answer(ddb_router.answer_consumed(answer),
                             jsonb_build_object('StreamDescription', described || jsonb_build_object('Shards', shards)));
END
$$;

-- GetShardIterator: the node's iterator for the node's shard, sealed with the node's place.
CREATE FUNCTION ddb_router.get_shard_iterator(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.stream_table(request->>'StreamArn');
    routes integer[] := ARRAY(SELECT ddb_router.node_routes());
    place integer := substring(request->>'ShardId' FROM '^shardId-([0-9]{8})-')::integer;
    node_arn text;
    answer text;
BEGIN
    IF place BETWEEN 1 AND cardinality(routes) THEN
        node_arn := ddb_router.node_stream_arn(routes[place], role_name, t.table_name);
    END IF;
    IF node_arn IS NULL THEN
        PERFORM ddb_router.raise_error('YD004', format('Requested resource not found: Shard does not exist: %s', request->>'ShardId'),
                                       NULL, NULL);
    END IF;
    answer := ddb_router.call(routes[place], role_name, operation,
        request || jsonb_build_object('StreamArn', node_arn,
                                      'ShardId', regexp_replace(request->>'ShardId', '^shardId-[0-9]{8}-', 'shardId-00000001-')));
    RETURN ddb_router.answer(ddb_router.answer_consumed(answer), jsonb_build_object('ShardIterator',
        ddb_router.seal_node_token('ShardIterator', NULL, place, ddb_router.answer_response(answer)->>'ShardIterator')));
END
$$;

-- GetRecords: the node's records after the node's iterator, and the next iterator sealed again.
CREATE FUNCTION ddb_router.get_records(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    position record;
    routes integer[] := ARRAY(SELECT ddb_router.node_routes());
    answer text;
    response jsonb;
BEGIN
    SELECT * INTO position FROM ddb_router.open_node_token('ShardIterator', NULL, request->>'ShardIterator');
    IF position.node IS NULL OR position.token IS NULL OR position.node > cardinality(routes) THEN
        -- the node words what is wrong with a missing or forged iterator
        RETURN ddb_router.raise_invalid(role_name, operation, request);
    END IF;
    answer := ddb_router.call(routes[position.node], role_name, operation,
                              request || jsonb_build_object('ShardIterator', position.token));
    response := ddb_router.answer_response(answer);
    RETURN ddb_router.answer(ddb_router.answer_consumed(answer),
        response || CASE WHEN response ? 'NextShardIterator' THEN jsonb_build_object('NextShardIterator',
            ddb_router.seal_node_token('ShardIterator', NULL, position.node, response->>'NextShardIterator'))
            ELSE '{}' END);
END
$$;
