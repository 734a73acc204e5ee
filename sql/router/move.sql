-- ---------------------------------------------------------------------------
-- Moving a partition to another node (docs/scale-out.md, "Moving a
-- partition"): CALL ddb_router.move_partition(partition, node).  The
-- partition is marked moving (its writes refused, retryably), the writers
-- already past the mark are waited for, its items are copied from its node
-- to the target through ddb_model's write path (the target makes their GSI
-- entries), the map is switched, and the items are removed from the old node
-- through the write path too.  The nodes are reached with dblink: a node that
-- holds no partition yet has no route of PL/Proxy's.
-- ---------------------------------------------------------------------------

-- A move in progress, or one that stopped before it was done (CALL
-- ddb_router.recover_move finishes or undoes it).  'copying': the partition
-- is still on source_node and target_node may hold copies of its items;
-- 'switched': it is on target_node and source_node may still hold them.
CREATE TABLE ddb_router.moves (
    partition integer PRIMARY KEY REFERENCES ddb_router.partitions,
    source_node text NOT NULL REFERENCES ddb_router.nodes,
    target_node text NOT NULL REFERENCES ddb_router.nodes,
    step text NOT NULL CHECK (step IN ('copying', 'switched')),
    started_at timestamptz NOT NULL DEFAULT now(),
    switched_at timestamptz,    -- when the map pointed at target_node and writes were let in again
    mover integer NOT NULL DEFAULT pg_backend_pid()    -- the backend running it
);
COMMENT ON TABLE ddb_router.moves IS 'Moves of partitions in progress, or stopped before they were done';
SELECT pg_catalog.pg_extension_config_dump('ddb_router.moves', '');

-- The classid in pg_locks of the router's locks of a kind (objsubid 3): 'partition', a partition's
-- writers (shared until their transaction ends: src/router/write_guard.c), and 'move', a move of
-- the partition running (exclusive, for its session).  They are the server's own locks
-- (src/ddb_locks.h), which no SQL can take: only the functions below, closed to PUBLIC.
CREATE FUNCTION ddb_router.lock_class(kind text) RETURNS oid
    AS 'MODULE_PATHNAME', 'ddb_router_lock_class' LANGUAGE C IMMUTABLE STRICT;

-- Takes the lock of a move of a partition, for the session.
CREATE FUNCTION ddb_router.lock_move(partition integer) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_router_lock_move' LANGUAGE C VOLATILE STRICT;

-- Lets go this session's holds on the lock of a move of a partition.
CREATE FUNCTION ddb_router.unlock_move(partition integer) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_router_unlock_move' LANGUAGE C VOLATILE STRICT;

-- Waits until every writer that holds the partition's writer lock is done, without taking it: no
-- writer waits behind the move (lock_timeout bounds the wait).
CREATE FUNCTION ddb_router.await_partition_writers(partition integer) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_router_await_partition_writers' LANGUAGE C VOLATILE STRICT;

REVOKE ALL ON FUNCTION ddb_router.lock_move(integer), ddb_router.unlock_move(integer),
                       ddb_router.await_partition_writers(integer) FROM PUBLIC;

-- The backend (other than this one) that runs a move of a partition, or null.
CREATE FUNCTION ddb_router.move_runner(partition integer) RETURNS integer
LANGUAGE sql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT l.pid FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.pid <> pg_backend_pid()
      AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
      AND l.classid = ddb_router.lock_class('move') AND l.objid = move_runner.partition::oid AND l.objsubid = 3
    LIMIT 1
$$;

-- The schema of dblink, which CREATE EXTENSION ddb_router CASCADE puts wherever the session creates objects.
CREATE FUNCTION ddb_router.dblink_schema() RETURNS name
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'dblink'
$$;

-- Closes the dblink connection named conn, if it is open.
CREATE FUNCTION ddb_router.node_disconnect(conn text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    open_ones text[];
BEGIN
    EXECUTE format('SELECT %I.dblink_get_connections()', ddb_router.dblink_schema()) INTO open_ones;
    IF conn = ANY (open_ones) THEN
        EXECUTE format('SELECT %I.dblink_disconnect($1)', ddb_router.dblink_schema()) USING conn;
    END IF;
END $$;

-- Opens the dblink connection conn to a node (as the router's user unless its connection string
-- names one, as PL/Proxy connects), its search_path pg_catalog's; says so when the node cannot be reached.
CREATE FUNCTION ddb_router.node_connect(conn text, node_name text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    connstr text := (SELECT n.connstr FROM ddb_router.nodes n WHERE n.node_name = node_connect.node_name);
    message text;
    detail text;
BEGIN
    PERFORM ddb_router.node_disconnect(conn);
    IF connstr !~ '(^|\s)user\s*=' AND connstr !~ '^postgres(ql)?://' THEN
        connstr := connstr || ' user=''' || replace(replace(current_user, '\', '\\'), '''', '\''') || '''';
    END IF;
    BEGIN
        EXECUTE format('SELECT %I.dblink_connect($1, $2)', ddb_router.dblink_schema()) USING conn, connstr;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS message = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
        RAISE EXCEPTION 'node % cannot be reached: %', node_name, coalesce(nullif(detail, ''), message)
            USING ERRCODE = 'connection_failure';
    END;
    PERFORM ddb_router.node_exec(conn, 'SET search_path = pg_catalog, pg_temp');
END $$;

-- Runs a statement that returns no rows (BEGIN, DECLARE, ...) on the node of connection conn.
CREATE FUNCTION ddb_router.node_exec(conn text, sql text) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    status text;
BEGIN
    EXECUTE format('SELECT %I.dblink_exec($1, $2)', ddb_router.dblink_schema()) INTO status USING conn, sql;
    RETURN status;
END $$;

-- The rows of a query of one jsonb column (a SELECT, a FETCH) on the node of connection conn; of
-- several statements (run in one transaction, each of one jsonb column), the last one's.
CREATE FUNCTION ddb_router.node_rows(conn text, sql text) RETURNS SETOF jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY EXECUTE format('SELECT t.v FROM %I.dblink($1, $2) AS t(v jsonb)', ddb_router.dblink_schema())
        USING conn, sql;
END $$;

-- The first value of such a query (null when it has no row).
CREATE FUNCTION ddb_router.node_value(conn text, sql text) RETURNS jsonb
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT r.v FROM ddb_router.node_rows(conn, sql) AS r(v) LIMIT 1
$$;

-- A table's relation on the node of connection conn ({"relation": "schema.name" quoted, "sort_key": bool}), or null.
CREATE FUNCTION ddb_router.node_table(conn text, table_name text) RETURNS jsonb
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT ddb_router.node_value(conn, format(
        'SELECT jsonb_build_object(''relation'', format(''%%I.%%I'', schema_name, relation_name), '
        '''sort_key'', range_key IS NOT NULL) FROM ddb.tables WHERE table_name = %L', table_name))
$$;

-- The condition that selects the rows of a partition of the cluster in a table of a node.
CREATE FUNCTION ddb_router.partition_condition(partition integer) RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT format('ddb.ddb_key_route_hash(pk) & %s = %s', count(*) - 1, partition_condition.partition)
    FROM ddb_router.partitions
$$;

-- Checks that the node of connection conn is an ordinary ddb_model database of the router's version.
CREATE FUNCTION ddb_router.check_node(conn text, node_name text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ours text := (SELECT extversion FROM pg_extension WHERE extname = 'ddb_model');
    theirs jsonb := ddb_router.node_value(conn,
        'SELECT jsonb_build_object(''ddb_model'', (SELECT extversion FROM pg_extension WHERE extname = ''ddb_model''), '
        '''ddb_router'', (SELECT extversion FROM pg_extension WHERE extname = ''ddb_router''))');
BEGIN
    IF theirs->>'ddb_model' IS NULL THEN
        RAISE EXCEPTION 'node % has no extension ddb_model', node_name USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'A node is an ordinary ddb_model database: CREATE EXTENSION ddb_model there.';
    END IF;
    IF theirs->>'ddb_model' <> ours THEN
        RAISE EXCEPTION 'node % has ddb_model %, the router %', node_name, theirs->>'ddb_model', ours
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Bring the node and the router to one version (ALTER EXTENSION ddb_model UPDATE).';
    END IF;
    IF theirs->>'ddb_router' IS NOT NULL THEN
        RAISE EXCEPTION 'node % is a router (it has ddb_router), not a shard node', node_name
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
END $$;

-- The CreateTable request that makes a table as the router's catalog describes it (DescribeTable):
-- key schema, the attributes its keys use, billing mode and throughput, global and local indexes, stream.
CREATE FUNCTION ddb_router.create_table_request(table_name text) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    d jsonb := ddb.describe_table(table_name);
    provisioned boolean := d->'BillingModeSummary'->>'BillingMode' = 'PROVISIONED';
    indexes jsonb := coalesce(d->'GlobalSecondaryIndexes', '[]') || coalesce(d->'LocalSecondaryIndexes', '[]');
    used text[] := ARRAY(SELECT e->>'AttributeName'
                         FROM jsonb_array_elements(d->'KeySchema'
                                                   || coalesce((SELECT jsonb_agg(k) FROM jsonb_array_elements(indexes) i,
                                                                       jsonb_array_elements(i->'KeySchema') k), '[]')) e);
BEGIN
    RETURN jsonb_build_object(
        'TableName', d->'TableName',
        'KeySchema', d->'KeySchema',
        'AttributeDefinitions', (SELECT jsonb_agg(a ORDER BY a->>'AttributeName')
                                 FROM jsonb_array_elements(d->'AttributeDefinitions') a
                                 WHERE a->>'AttributeName' = ANY (used)),
        'BillingMode', d->'BillingModeSummary'->'BillingMode')
    || CASE WHEN provisioned
            THEN jsonb_build_object('ProvisionedThroughput', (d->'ProvisionedThroughput') - 'NumberOfDecreasesToday')
            ELSE '{}' END
    || CASE WHEN d ? 'GlobalSecondaryIndexes' THEN jsonb_build_object('GlobalSecondaryIndexes',
           (SELECT jsonb_agg(jsonb_build_object('IndexName', g->'IndexName', 'KeySchema', g->'KeySchema',
                                                'Projection', g->'Projection')
                             || CASE WHEN provisioned
                                     THEN jsonb_build_object('ProvisionedThroughput',
                                                             (g->'ProvisionedThroughput') - 'NumberOfDecreasesToday')
                                     ELSE '{}' END)
            FROM jsonb_array_elements(d->'GlobalSecondaryIndexes') g))
       ELSE '{}' END
    || CASE WHEN d ? 'LocalSecondaryIndexes' THEN jsonb_build_object('LocalSecondaryIndexes',
           (SELECT jsonb_agg(jsonb_build_object('IndexName', l->'IndexName', 'KeySchema', l->'KeySchema',
                                                'Projection', l->'Projection'))
            FROM jsonb_array_elements(d->'LocalSecondaryIndexes') l))
       ELSE '{}' END
    || CASE WHEN d ? 'StreamSpecification' THEN jsonb_build_object('StreamSpecification', d->'StreamSpecification')
       ELSE '{}' END;
END $$;

-- The statements that make a table on a node as the router's catalog has it, in one transaction:
-- CreateTable in the router's schema and hash partitions of it, then UpdateTimeToLive and TagResource
-- (each a query of one jsonb column, as ddb_router.node_rows reads every result).
CREATE FUNCTION ddb_router.create_table_sql(table_name text) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT format('SELECT jsonb_build_array(set_config(''ddb.default_schema'', %L, true), '
                  'set_config(''ddb.default_partitions'', %L, true));', t.schema_name, t.partitions)
        || format(' SELECT ddb.execute(''CreateTable'', %L::jsonb);', ddb_router.create_table_request(t.table_name))
        || CASE WHEN t.ttl_attribute IS NOT NULL
                THEN format(' SELECT ddb.execute(''UpdateTimeToLive'', %L::jsonb);', jsonb_build_object(
                         'TableName', t.table_name,
                         'TimeToLiveSpecification', jsonb_build_object('Enabled', true, 'AttributeName', t.ttl_attribute)))
                ELSE '' END
        || CASE WHEN t.tags <> '{}'
                THEN format(' SELECT ddb.execute(''TagResource'', %L::jsonb);', jsonb_build_object(
                         'ResourceArn', ddb.table_arn(t.table_name),
                         'Tags', (SELECT jsonb_agg(jsonb_build_object('Key', key, 'Value', value) ORDER BY key)
                                  FROM jsonb_each_text(t.tags))))
                ELSE '' END
    FROM ddb.tables t WHERE t.table_name = create_table_sql.table_name
$$;

-- Gives the node of connection conn every table of the cluster (the models' aside, which every node
-- has) as the router's catalog defines it: a table it lacks is made; one whose definition differs
-- (ddb.table_definition) is made again when it holds no item, and refused otherwise.  The tables made.
CREATE FUNCTION ddb_router.prepare_node_tables(conn text, node_name text) RETURNS text[]
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    ours jsonb;
    theirs jsonb;
    made text[] := '{}';
BEGIN
    FOR t IN SELECT table_name FROM ddb.tables WHERE model IS NULL ORDER BY table_name LOOP
        ours := ddb.table_definition(t.table_name);
        theirs := ddb_router.node_value(conn, format('SELECT ddb.table_definition(%L)', t.table_name));
        CONTINUE WHEN theirs = ours;
        IF theirs IS NOT NULL THEN
            IF ddb_router.node_value(conn, format('SELECT to_jsonb(EXISTS (SELECT FROM %s))',
                                                  ddb_router.node_table(conn, t.table_name)->>'relation'))::boolean THEN
                RAISE EXCEPTION 'table % on node % is not defined as the cluster''s is, and holds items', t.table_name, node_name
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          DETAIL = format('The cluster''s definition: %s; the node''s: %s.', ours, theirs),
                          HINT = 'Make the node''s table match (UpdateTable, UpdateTimeToLive on the node itself) or empty it, then move again.';
            END IF;
            PERFORM ddb_router.node_value(conn, format('SELECT ddb.execute(''DeleteTable'', %L::jsonb)',
                                                       jsonb_build_object('TableName', t.table_name)));
        END IF;
        PERFORM ddb_router.node_value(conn, ddb_router.create_table_sql(t.table_name));
        made := made || t.table_name;
    END LOOP;
    RETURN made;
END $$;

-- The models' tables (and those with placed keys) that hold items of a partition on the node of
-- connection conn.  Their items do not move: the models' triggers keep rules across items, which a
-- copy item by item would break.
CREATE FUNCTION ddb_router.model_tables_with_items(conn text, partition integer) RETURNS text[]
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    relation text;
    found_in text[] := '{}';
BEGIN
    FOR t IN SELECT tables.table_name FROM ddb.tables
             WHERE model IS NOT NULL
                -- a placed key's items go with another partition's (ddb_router.placements)
                OR EXISTS (SELECT FROM ddb_router.placements p WHERE ddb.table_pattern_matches(tables.table_name, p.table_pattern))
             ORDER BY tables.table_name LOOP
        relation := ddb_router.node_table(conn, t.table_name)->>'relation';
        CONTINUE WHEN relation IS NULL;
        IF ddb_router.node_value(conn, format('SELECT to_jsonb(EXISTS (SELECT FROM %s WHERE %s))',
                                              relation, ddb_router.partition_condition(partition)))::boolean THEN
            found_in := found_in || t.table_name;
        END IF;
    END LOOP;
    RETURN found_in;
END $$;

-- Copies the items of a partition from the node of connection source to the node of connection
-- target: every table's (the models' aside), read in one snapshot with a cursor, written by
-- ddb.put_item in batches of 100, each committed there (the target makes their GSI and LSI
-- entries, TTL and stream records as for any write).  The number of items copied.
CREATE FUNCTION ddb_router.copy_partition_items(source text, target text, partition integer) RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    relation text;
    batch jsonb;
    in_table bigint;
    copied bigint := 0;
BEGIN
    PERFORM ddb_router.node_exec(source, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    FOR t IN SELECT table_name FROM ddb.tables WHERE model IS NULL ORDER BY table_name LOOP
        relation := ddb_router.node_table(source, t.table_name)->>'relation';
        CONTINUE WHEN relation IS NULL;
        PERFORM ddb_router.node_exec(source, format('DECLARE ddb_move NO SCROLL CURSOR FOR SELECT item FROM %s WHERE %s',
                                                    relation, ddb_router.partition_condition(partition)));
        in_table := 0;
        LOOP
            SELECT jsonb_agg(r.item) INTO batch FROM ddb_router.node_rows(source, 'FETCH 100 FROM ddb_move') AS r(item);
            EXIT WHEN batch IS NULL;
            in_table := in_table + ddb_router.node_value(target, format(
                'SELECT to_jsonb(count(*)) FROM jsonb_array_elements(%L::jsonb) i, LATERAL ddb.put_item(%L, i.value) p',
                batch, t.table_name))::bigint;
        END LOOP;
        PERFORM ddb_router.node_exec(source, 'CLOSE ddb_move');
        IF in_table > 0 THEN
            RAISE NOTICE 'partition %: % items of table % copied', partition, in_table, t.table_name;
        END IF;
        copied := copied + in_table;
    END LOOP;
    PERFORM ddb_router.node_exec(source, 'COMMIT');
    RETURN copied;
END $$;

-- Removes the items of a partition from a node through ddb_model's write path (ddb.delete_item: their
-- GSI entries and stream records as for any delete), every table's (the models' aside), in batches of
-- 500 each committed there: the keys read in one pass by a cursor, deleted on a second connection.
-- The number of items removed.
CREATE FUNCTION ddb_router.remove_partition_items(node_name text, partition integer) RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    target jsonb;
    pks text[];
    sks text[];
    removed bigint := 0;
BEGIN
    PERFORM ddb_router.node_connect('ddb_move_keys', node_name);
    PERFORM ddb_router.node_connect('ddb_move_delete', node_name);
    PERFORM ddb_router.node_exec('ddb_move_keys', 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    FOR t IN SELECT table_name FROM ddb.tables WHERE model IS NULL ORDER BY table_name LOOP
        target := ddb_router.node_table('ddb_move_keys', t.table_name);
        CONTINUE WHEN target IS NULL;
        PERFORM ddb_router.node_exec('ddb_move_keys', format(
            'DECLARE ddb_move NO SCROLL CURSOR FOR SELECT jsonb_build_array(pk, %s) FROM %s WHERE %s',
            CASE WHEN (target->>'sort_key')::boolean THEN 'sk' ELSE 'NULL' END, target->>'relation',
            ddb_router.partition_condition(partition)));
        LOOP
            -- the keys in their text form (docs/key-type.md), which an array of ddb.ddb_key reads back
            SELECT array_agg(r.k->>0), array_agg(r.k->>1) INTO pks, sks
            FROM ddb_router.node_rows('ddb_move_keys', 'FETCH 500 FROM ddb_move') AS r(k);
            EXIT WHEN pks IS NULL;
            removed := removed + ddb_router.node_value('ddb_move_delete', format(
                'SELECT to_jsonb(count(d.item)) FROM unnest(%L::ddb.ddb_key[], %L::ddb.ddb_key[]) k(pk, sk), '
                'LATERAL ddb.delete_item(%L, k.pk, k.sk) d(item)', pks, sks, t.table_name))::bigint;
        END LOOP;
        PERFORM ddb_router.node_exec('ddb_move_keys', 'CLOSE ddb_move');
    END LOOP;
    PERFORM ddb_router.node_exec('ddb_move_keys', 'COMMIT');
    PERFORM ddb_router.node_disconnect('ddb_move_keys');
    PERFORM ddb_router.node_disconnect('ddb_move_delete');
    RETURN removed;
END $$;

-- Waits (at most max_wait, then says which are left) until no other transaction of the router that
-- started before since is running: a request routed by a map older than since has then ended.
CREATE FUNCTION ddb_router.wait_for_transactions(since timestamptz, max_wait interval) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    deadline timestamptz := clock_timestamp() + max_wait;
    left_over integer[];
BEGIN
    LOOP
        PERFORM pg_stat_clear_snapshot();
        left_over := ARRAY(SELECT a.pid FROM pg_stat_activity a
                           WHERE a.datname = current_database() AND a.backend_type = 'client backend'
                             AND a.pid <> pg_backend_pid() AND a.xact_start < since
                             AND a.pid NOT IN (SELECT m.mover FROM ddb_router.moves m));
        EXIT WHEN cardinality(left_over) = 0;
        IF clock_timestamp() > deadline THEN
            RAISE NOTICE 'router transactions older than the switch still run after %, going on (backends %)',
                max_wait, array_to_string(left_over, ', ');
            EXIT;
        END IF;
        PERFORM pg_sleep(0.02);
    END LOOP;
END $$;

-- Step (a) of a move: the checks, the nodes checked and the target given every table, the move
-- recorded and the partition marked moving (the caller commits).  This session holds the move's
-- lock (ddb_router.lock_move) until the move ends, and connections to both nodes.
CREATE FUNCTION ddb_router.move_begin(partition integer, node_name text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p ddb_router.partitions;
    m ddb_router.moves;
    made text[];
    models text[];
BEGIN
    IF partition IS NULL OR node_name IS NULL THEN
        RAISE EXCEPTION 'ddb_router.move_partition needs a partition and a node' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT * INTO p FROM ddb_router.partitions WHERE partitions.partition = move_begin.partition FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'partition % does not exist: the cluster has partitions 0 to %',
            partition, (SELECT count(*) - 1 FROM ddb_router.partitions)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT EXISTS (SELECT FROM ddb_router.nodes n WHERE n.node_name = move_begin.node_name) THEN
        RAISE EXCEPTION 'node % is not a node of the cluster', node_name
            USING ERRCODE = 'undefined_object', HINT = 'Add it first with ddb_router.add_node(name, connstr).';
    END IF;
    SELECT * INTO m FROM ddb_router.moves WHERE moves.partition = move_begin.partition;
    IF FOUND AND ddb_router.move_runner(partition) IS NOT NULL THEN
        RAISE EXCEPTION 'partition % is already moving to node % (a move started at %, in backend %)',
            partition, m.target_node, m.started_at, ddb_router.move_runner(partition)
            USING ERRCODE = 'object_in_use';
    ELSIF FOUND THEN
        RAISE EXCEPTION 'a move of partition % from node % to node % did not finish: it stopped %', partition,
            m.source_node, m.target_node, CASE m.step WHEN 'copying' THEN 'before the switch'
                                         ELSE 'after the switch, before its items were removed from ' || m.source_node END
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = format('CALL ddb_router.recover_move(%s) undoes or finishes it.', partition);
    END IF;
    IF p.moving THEN
        RAISE EXCEPTION 'partition % is marked moving, but no move of it is recorded', partition
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = format('CALL ddb_router.recover_move(%s) clears the mark.', partition);
    END IF;
    IF p.node_name = move_begin.node_name THEN
        RAISE EXCEPTION 'partition % is already on node %', partition, node_name USING ERRCODE = 'invalid_parameter_value';
    END IF;

    PERFORM ddb_router.node_connect('ddb_move_source', p.node_name);
    PERFORM ddb_router.check_node('ddb_move_source', p.node_name);
    PERFORM ddb_router.node_connect('ddb_move_target', node_name);
    PERFORM ddb_router.check_node('ddb_move_target', node_name);
    models := ddb_router.model_tables_with_items('ddb_move_source', partition);
    IF cardinality(models) > 0 THEN
        RAISE EXCEPTION 'partition % holds items of the models'' tables (%), which do not move', partition,
            array_to_string(models, ', ')
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'The models keep rules across items with triggers, which a copy item by item would break.';
    END IF;
    made := ddb_router.prepare_node_tables('ddb_move_target', node_name);
    IF cardinality(made) > 0 THEN
        RAISE NOTICE 'made on node % the tables it lacked or defined otherwise: %', node_name, array_to_string(made, ', ');
    END IF;

    INSERT INTO ddb_router.moves (partition, source_node, target_node, step)
    VALUES (partition, p.node_name, node_name, 'copying');
    UPDATE ddb_router.partitions SET moving = true, direct = false WHERE partitions.partition = move_begin.partition;
    PERFORM ddb_router.lock_move(partition);
    RAISE NOTICE 'partition % marked moving from node % to node %: its writes are refused (retryably) until it has moved',
        partition, p.node_name, node_name;
EXCEPTION WHEN OTHERS OR query_canceled THEN
    PERFORM ddb_router.node_disconnect(c) FROM unnest(ARRAY['ddb_move_source', 'ddb_move_target']) c;
    RAISE;
END $$;

-- Steps (b) and (c) of a move: waits for the writers that took the partition's writer lock before
-- the mark committed (for 60 s at most), then copies its items to the target (after removing any
-- an earlier move left there).  On an error the copies are removed again; failure is then the
-- message to raise, error_code its SQLSTATE, and cleaned whether the copies are gone.
CREATE FUNCTION ddb_router.move_copy(partition integer, OUT copied bigint, OUT failure text, OUT error_code text,
                                     OUT cleaned boolean)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '60s'
AS $$
DECLARE
    m ddb_router.moves;
    removed bigint;
    models text[];
    cleanup_error text;
BEGIN
    SELECT * INTO m FROM ddb_router.moves WHERE moves.partition = move_copy.partition;
    -- the map version moved before the mark committed: a map read in between is read again
    PERFORM nextval('ddb_router.cluster_version');
    BEGIN
        -- the source serves no request of it straight from ddb-gateway, and those it served are done
        PERFORM ddb_router.withdraw_direct('ddb_move_source', partition);
        -- every writer that took the partition's writer lock before is done (waited for, not taken)
        PERFORM ddb_router.await_partition_writers(partition);
        models := ddb_router.model_tables_with_items('ddb_move_source', partition);
        IF cardinality(models) > 0 THEN
            RAISE EXCEPTION 'partition % holds items of the models'' tables (%), which do not move', partition,
                array_to_string(models, ', ') USING ERRCODE = 'feature_not_supported';
        END IF;
        removed := ddb_router.remove_partition_items(m.target_node, partition);
        IF removed > 0 THEN
            RAISE NOTICE 'removed % items of partition % that an earlier move had left on node %',
                removed, partition, m.target_node;
        END IF;
        copied := ddb_router.copy_partition_items('ddb_move_source', 'ddb_move_target', partition);
        RAISE NOTICE 'partition %: % items copied from node % to node %', partition, copied, m.source_node, m.target_node;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        GET STACKED DIAGNOSTICS failure = MESSAGE_TEXT, error_code = RETURNED_SQLSTATE;
        IF error_code = '55P03' THEN
            failure := format('the writes in flight to it did not end within %s (a transaction of the router, or '
                              'of the source node serving a request sent straight to it, holds its lock: see '
                              'pg_locks there, classid %s, objid %s, objsubid 3)',
                              current_setting('lock_timeout'), ddb_router.lock_class('partition'), partition);
        END IF;
        BEGIN
            PERFORM ddb_router.remove_partition_items(m.target_node, partition);
            cleaned := true;
        EXCEPTION WHEN OTHERS OR query_canceled THEN
            GET STACKED DIAGNOSTICS cleanup_error = MESSAGE_TEXT;
            cleaned := false;
        END;
        failure := format('partition %s did not move to node %s: %s. Nothing moved: it stays on node %s and takes '
                          'writes again; %s', partition, m.target_node, failure, m.source_node,
                          CASE WHEN cleaned THEN format('what was copied to node %s is removed', m.target_node)
                          ELSE format('removing what was copied to node %s failed too (%s): CALL ddb_router.recover_move(%s) removes it',
                                      m.target_node, cleanup_error, partition) END);
    END;
END $$;

-- After a failure before the switch: the partition takes writes again on its node; the move's
-- record goes once the copies are removed (ddb_router.recover_move removes them otherwise).
CREATE FUNCTION ddb_router.move_cancel(partition integer, cleaned boolean) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    UPDATE ddb_router.partitions SET moving = false WHERE partitions.partition = move_cancel.partition;
    DELETE FROM ddb_router.moves WHERE moves.partition = move_cancel.partition AND move_cancel.cleaned;
END;

-- Step (d), first half: the map points at the target; writes are still refused.
CREATE FUNCTION ddb_router.move_switch(partition integer) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    UPDATE ddb_router.partitions p SET node_name = m.target_node
    FROM ddb_router.moves m WHERE m.partition = p.partition AND p.partition = move_switch.partition;
    UPDATE ddb_router.moves SET step = 'switched' WHERE moves.partition = move_switch.partition;
END;

-- Step (d), second half, once the switch committed: every map read before it is read again (the
-- version moves), then the partition takes writes again, on the target.
CREATE FUNCTION ddb_router.move_open(partition integer) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM nextval('ddb_router.cluster_version');
    UPDATE ddb_router.moves SET switched_at = clock_timestamp() WHERE moves.partition = move_open.partition;
    UPDATE ddb_router.partitions SET moving = false WHERE partitions.partition = move_open.partition;
    RAISE NOTICE 'partition % is on node % and takes writes there', partition,
        (SELECT p.node_name FROM ddb_router.partitions p WHERE p.partition = move_open.partition);
END $$;

-- Step (e), once writes were let in on the target: the maps read before that are read again, the
-- requests routed before the switch end (10 s at most), and the items are removed from the old
-- node; then the move's record goes.  Null, or the message of the error that stopped the removal.
CREATE FUNCTION ddb_router.move_finish(partition integer) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m ddb_router.moves;
    removed bigint;
    message text;
BEGIN
    SELECT * INTO m FROM ddb_router.moves WHERE moves.partition = move_finish.partition;
    PERFORM nextval('ddb_router.cluster_version');
    PERFORM ddb_router.wait_for_transactions(m.switched_at, '10 s');
    BEGIN
        removed := ddb_router.remove_partition_items(m.source_node, partition);
        DELETE FROM ddb_router.moves WHERE moves.partition = move_finish.partition;
        RAISE NOTICE 'partition %: % items removed from node %', partition, removed, m.source_node;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        GET STACKED DIAGNOSTICS message = MESSAGE_TEXT;
        RETURN format('partition %s moved to node %s, which takes its writes, but removing its items from node %s '
                      'failed: %s', partition, m.target_node, m.source_node, message);
    END;
    RETURN NULL;
END $$;

-- The end of a move or a recovery, its outcome committed: maps read before that commit are read
-- again, the move's lock is let go and the connections to the nodes closed.
CREATE FUNCTION ddb_router.move_end(partition integer) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM nextval('ddb_router.cluster_version');
    PERFORM ddb_router.unlock_move(partition);
    PERFORM ddb_router.node_disconnect(c)
    FROM unnest(ARRAY['ddb_move_source', 'ddb_move_target', 'ddb_move_keys', 'ddb_move_delete']) c;
END $$;

-- Moves a logical partition to another node of the cluster, losing no write (docs/scale-out.md,
-- "Moving a partition").  A procedure, so that it commits between its steps: CALL it outside a
-- transaction block.  It has no SET search_path, because a procedure with one cannot commit: it
-- names nothing unqualified, and its steps are the functions above, which set it.
CREATE PROCEDURE ddb_router.move_partition(partition integer, node_name text)
LANGUAGE plpgsql
AS $$
DECLARE
    result record;
    failure text;
BEGIN
    -- refused at once inside a transaction block (invalid transaction termination), before anything is done
    COMMIT;
    -- (a) the checks; the target given every table; the partition marked moving
    PERFORM ddb_router.move_begin(partition, node_name);
    COMMIT;
    -- (b) the writers in flight waited for; (c) the items copied, or on an error the copies removed
    SELECT * INTO result FROM ddb_router.move_copy(partition);
    IF result.failure IS NOT NULL THEN
        PERFORM ddb_router.move_cancel(partition, result.cleaned);
        COMMIT;
        PERFORM ddb_router.give_direct(partition);
        COMMIT;
        PERFORM ddb_router.move_end(partition);
        COMMIT;
        RAISE EXCEPTION USING ERRCODE = result.error_code, MESSAGE = result.failure;
    END IF;
    COMMIT;
    -- (d) the map switched, writes still refused; then writes let in, on the target
    PERFORM ddb_router.move_switch(partition);
    COMMIT;
    PERFORM ddb_router.move_open(partition);
    COMMIT;
    -- the target serves its requests straight from ddb-gateway
    PERFORM ddb_router.give_direct(partition);
    COMMIT;
    -- (e) the items removed from the old node
    failure := ddb_router.move_finish(partition);
    COMMIT;
    PERFORM ddb_router.move_end(partition);
    COMMIT;
    IF failure IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state', MESSAGE = failure,
            HINT = format('CALL ddb_router.recover_move(%s) removes them; until then a Scan and DescribeTable through '
                          'the router count them too.', partition);
    END IF;
END $$;

-- The first step of a recovery: no move of the partition may be running; this session takes the
-- move's lock.  What is left to do: 'copying' (undo: the copies removed from the target),
-- 'switched' (finish: the items removed from the old node), or 'none' (a moving mark without a
-- move, cleared here).
CREATE FUNCTION ddb_router.recover_begin(partition integer) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p ddb_router.partitions;
    m ddb_router.moves;
BEGIN
    SELECT * INTO p FROM ddb_router.partitions WHERE partitions.partition = recover_begin.partition FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'partition % does not exist', partition USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF ddb_router.move_runner(partition) IS NOT NULL THEN
        RAISE EXCEPTION 'a move of partition % is running, in backend %', partition, ddb_router.move_runner(partition)
            USING ERRCODE = 'object_in_use', HINT = 'Let it end, or end its backend (pg_terminate_backend) first.';
    END IF;
    SELECT * INTO m FROM ddb_router.moves WHERE moves.partition = recover_begin.partition FOR UPDATE;
    IF NOT FOUND THEN
        IF NOT p.moving THEN
            RAISE EXCEPTION 'partition % has no unfinished move', partition USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        UPDATE ddb_router.partitions SET moving = false WHERE partitions.partition = recover_begin.partition;
        RAISE NOTICE 'partition % was marked moving without a move: it takes writes again on node %', partition, p.node_name;
        RETURN 'none';
    END IF;
    PERFORM ddb_router.lock_move(partition);
    UPDATE ddb_router.moves SET mover = pg_backend_pid() WHERE moves.partition = recover_begin.partition;
    RETURN m.step;
END $$;

-- Undoes a move that stopped before the switch: the copies removed from the target, the
-- partition taking writes again on its node, the move's record gone.
CREATE FUNCTION ddb_router.recover_copying(partition integer) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m ddb_router.moves;
    removed bigint;
BEGIN
    SELECT * INTO m FROM ddb_router.moves WHERE moves.partition = recover_copying.partition;
    removed := ddb_router.remove_partition_items(m.target_node, partition);
    PERFORM ddb_router.move_cancel(partition, true);
    RAISE NOTICE 'the move of partition % to node % is undone: % copied items removed there; it takes writes on node %',
        partition, m.target_node, removed, m.source_node;
EXCEPTION WHEN OTHERS OR query_canceled THEN
    -- the move's lock and the connections are this session's, not the transaction's
    PERFORM ddb_router.move_end(partition);
    RAISE;
END $$;

-- Undoes or finishes a move that stopped before it was done (its session ended, or the removal
-- of copies failed): before the switch, the copies are removed from the target and the
-- partition stays where it was; after it, the items are removed from the old node.  Clears a
-- moving mark that no move recorded.  A procedure, for the commits between its steps.
CREATE PROCEDURE ddb_router.recover_move(partition integer)
LANGUAGE plpgsql
AS $$
DECLARE
    step text;
    failure text;
BEGIN
    COMMIT;    -- refused at once inside a transaction block
    step := ddb_router.recover_begin(partition);
    COMMIT;
    IF step = 'copying' THEN
        PERFORM ddb_router.recover_copying(partition);
        COMMIT;
    ELSIF step = 'switched' THEN
        PERFORM ddb_router.move_open(partition);
        COMMIT;
        failure := ddb_router.move_finish(partition);
        COMMIT;
    END IF;
    -- its node, the old or the new one, serves its requests straight from ddb-gateway
    PERFORM ddb_router.give_direct(partition);
    COMMIT;
    PERFORM ddb_router.move_end(partition);
    COMMIT;
    IF failure IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state', MESSAGE = failure,
            HINT = format('CALL ddb_router.recover_move(%s) again once the node can be reached.', partition);
    END IF;
END $$;

-- Moves change the cluster: its administrator's, not every role's.
REVOKE ALL ON PROCEDURE ddb_router.move_partition(integer, text), ddb_router.recover_move(integer) FROM PUBLIC;
