-- ---------------------------------------------------------------------------
-- The cluster: shard nodes (each an ordinary ddb_model database) and a
-- fixed number of logical partitions (a power of two) mapped onto them.  An
-- item lives in partition ddb.ddb_key_route_hash(partition key) & (count - 1),
-- which is the hash partition PostgreSQL's own hash partitioning of that
-- count would put it in.  PL/Proxy reads the map as the options of the
-- SQL/MED server ddb (its cluster 'ddb'), which the map's triggers keep.
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
    moving boolean NOT NULL DEFAULT false,  -- writes are refused (retryable) while it moves
    direct boolean NOT NULL DEFAULT false   -- its node serves ddb-gateway's requests of it straight (sql/router/direct.sql)
);
COMMENT ON TABLE ddb_router.partitions IS 'The logical partitions and the node each lives on';
SELECT pg_catalog.pg_extension_config_dump('ddb_router.partitions', '');

CREATE SEQUENCE ddb_router.cluster_version;
SELECT pg_catalog.pg_extension_config_dump('ddb_router.cluster_version', '');

-- PL/Proxy's cluster 'ddb': a SQL/MED server whose options p0, p1, ... are the
-- connection strings of the partitions' nodes.  PL/Proxy learns of a change of
-- them at once, and asks nothing on each call (a configuration function would
-- be a query per call).  Its users reach it only through the router's C code
-- (src/router/node_call.c), which calls the PL/Proxy functions directly.
-- (PL/Proxy takes no server without partitions: until ddb_router.create_partitions, its one
-- partition names a database that is not there, and a call finds no node.)
CREATE SERVER ddb FOREIGN DATA WRAPPER plproxy
    OPTIONS (connection_lifetime '3600', p0 'dbname=ddb_router_without_partitions');
CREATE USER MAPPING FOR PUBLIC SERVER ddb;
GRANT USAGE ON FOREIGN SERVER ddb TO PUBLIC;

-- Makes the server's options the map's: a partition's option its node's connection string.
CREATE FUNCTION ddb_router.sync_server() RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    current text[] := (SELECT srvoptions FROM pg_foreign_server WHERE srvname = 'ddb');
    changes text;
BEGIN
    SELECT string_agg(change, ', ') INTO changes FROM (
        SELECT format('%s p%s %L', CASE WHEN EXISTS (SELECT FROM unnest(current) o WHERE o LIKE 'p' || p.partition || '=%')
                                        THEN 'SET' ELSE 'ADD' END, p.partition, n.connstr) AS change
        FROM ddb_router.partitions p JOIN ddb_router.nodes n USING (node_name)
        UNION ALL
        SELECT format('DROP %I', split_part(o, '=', 1))
        FROM unnest(current) o
        WHERE o ~ '^p[0-9]+=' AND NOT EXISTS (SELECT FROM ddb_router.partitions p WHERE o LIKE 'p' || p.partition || '=%')) c;
    IF changes IS NOT NULL AND EXISTS (SELECT FROM ddb_router.partitions) THEN
        EXECUTE 'ALTER SERVER ddb OPTIONS (' || changes || ')';
    END IF;
END
$$;

-- Any change of the map goes to PL/Proxy's server, and makes the router's cache read it again.
CREATE FUNCTION ddb_router.map_changed() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ddb_router.sync_server();
    PERFORM nextval('ddb_router.cluster_version');
    RETURN NULL;
END
$$;
CREATE TRIGGER map_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb_router.nodes
    FOR EACH STATEMENT EXECUTE FUNCTION ddb_router.map_changed();
CREATE TRIGGER map_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb_router.partitions
    FOR EACH STATEMENT EXECUTE FUNCTION ddb_router.map_changed();
-- ddb-gateway reads the map to send requests of one partition straight to its node
-- (sql/router/direct.sql), and reads it again when the channel ddb_router_map is notified:
-- by a change of the map, once it commits (a change of the placements and the reference
-- tables, which the gateway sends through the router, notifies it too).
CREATE FUNCTION ddb_router.notify_map() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_notify('ddb_router_map', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER notify_map AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb_router.nodes
    FOR EACH STATEMENT EXECUTE FUNCTION ddb_router.notify_map();
CREATE TRIGGER notify_map AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb_router.partitions
    FOR EACH STATEMENT EXECUTE FUNCTION ddb_router.notify_map();
-- (the router's cache reads the version, the sequence's last value, which needs SELECT on it)
GRANT SELECT ON ddb_router.cluster_version TO PUBLIC;

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

