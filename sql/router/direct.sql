-- ---------------------------------------------------------------------------
-- Requests sent straight to their shard (docs/scale-out.md): ddb-gateway
-- reads the map (ddb_router.partitions, nodes) and sends a request of one
-- partition key to the node of its partition, where ddb.execute_direct
-- serves it only while the router has given that node the partition (a row
-- of ddb.direct_partitions there, and ddb_router.partitions.direct here).
-- A move takes the partition away from its node before anything else (the
-- node then refuses it, and the gateway sends it through the router, which
-- answers as it always did), waits for the requests the node serves of it,
-- and gives it to the new node once it takes writes there.  The rows on the
-- nodes are written over dblink as the router's user (a superuser, or the
-- owner of ddb.direct_partitions there), as a move connects.
-- ---------------------------------------------------------------------------

-- Gives a partition to its node for direct requests, unless it is moving: true when given; a
-- node that cannot be reached or refuses is said in a NOTICE (the partition's requests then go
-- through the router).  Called by the session that holds the partition's move lock (a move, a
-- recovery, ddb_router.publish_partitions), so that no move takes it away meanwhile.
CREATE FUNCTION ddb_router.give_direct(partition integer) RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p ddb_router.partitions;
    message text;
BEGIN
    SELECT * INTO p FROM ddb_router.partitions WHERE partitions.partition = give_direct.partition;
    IF NOT FOUND OR p.moving THEN
        RETURN false;
    END IF;
    BEGIN
        PERFORM ddb_router.node_connect('ddb_direct', p.node_name);
        PERFORM ddb_router.node_exec('ddb_direct', format(
            'INSERT INTO ddb.direct_partitions (partition, partition_count) VALUES (%s, %s) '
            'ON CONFLICT (partition) DO UPDATE SET partition_count = excluded.partition_count',
            partition, (SELECT count(*) FROM ddb_router.partitions)));
        PERFORM ddb_router.node_disconnect('ddb_direct');
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS message = MESSAGE_TEXT;
        PERFORM ddb_router.node_disconnect('ddb_direct');
        RAISE NOTICE 'partition % is not served straight from ddb-gateway by node % (its requests go through the router): %',
            partition, p.node_name, message;
        UPDATE ddb_router.partitions SET direct = false WHERE partitions.partition = give_direct.partition AND direct;
        RETURN false;
    END;
    UPDATE ddb_router.partitions SET direct = true WHERE partitions.partition = give_direct.partition AND NOT direct;
    RETURN true;
END $$;

-- The first step of a move, once the partition is marked moving: its node (dblink connection
-- conn) serves it directly no more, and every request it served so is waited for (60 s at most).
CREATE FUNCTION ddb_router.withdraw_direct(conn text, partition integer) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ddb_router.node_exec(conn, format('DELETE FROM ddb.direct_partitions WHERE partition = %s', partition));
    PERFORM ddb_router.node_exec(conn, 'SET lock_timeout = ''60s''');
    PERFORM ddb_router.node_value(conn, format('SELECT ''null''::jsonb FROM ddb.await_direct_requests(%s)', partition));
    PERFORM ddb_router.node_exec(conn, 'RESET lock_timeout');
END $$;

-- Gives every partition that is not moving to its node for direct requests, and takes from
-- each node those it does not hold: what ddb-gateway may send straight to the nodes.  Waits for
-- a move that runs.  The number of partitions given.
CREATE FUNCTION ddb_router.publish_partitions() RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n ddb_router.nodes;
    p integer;
    given integer := 0;
BEGIN
    FOR n IN SELECT * FROM ddb_router.nodes ORDER BY node_name LOOP
        BEGIN
            PERFORM ddb_router.node_connect('ddb_direct', n.node_name);
            PERFORM ddb_router.node_exec('ddb_direct', format(
                'DELETE FROM ddb.direct_partitions WHERE partition <> ALL (%L::integer[])',
                ARRAY(SELECT q.partition FROM ddb_router.partitions q WHERE q.node_name = n.node_name AND NOT q.moving)));
            PERFORM ddb_router.node_disconnect('ddb_direct');
        EXCEPTION WHEN OTHERS THEN
            PERFORM ddb_router.node_disconnect('ddb_direct');
            RAISE NOTICE 'node % cannot be reached: %', n.node_name, SQLERRM;
        END;
    END LOOP;
    FOR p IN SELECT q.partition FROM ddb_router.partitions q ORDER BY 1 LOOP
        PERFORM ddb_router.lock_move(p);
        IF ddb_router.give_direct(p) THEN
            given := given + 1;
        END IF;
        PERFORM ddb_router.unlock_move(p);
    END LOOP;
    RETURN given;
END $$;

-- The cluster's administrator's, not every role's.
REVOKE ALL ON FUNCTION ddb_router.give_direct(integer), ddb_router.withdraw_direct(text, integer),
                       ddb_router.publish_partitions() FROM PUBLIC;
